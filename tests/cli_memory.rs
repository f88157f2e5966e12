//! `agents-server memory remember | list | search | export`, run as a real process on a real
//! SQLite file holding an agent the runtime stored: an operator plants facts, pages the
//! stream, searches it and exports it; bad input is refused with exit code 2 and a message.
//! A file that is not the project's database is refused by every command, byte for byte
//! untouched; the reading commands never create or upgrade a database.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
use serde_json::Value;
use support::run_cli;

/// A database holding one stored agent (`agent_001`, Mira).
fn database_with_an_agent(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("agents.db");
    let mut options = RuntimeOptions::with_database(&path);
    options.idle_think_seconds = 1000.0;
    let runtime = Runtime::start(options).unwrap();
    let id = runtime
        .spawn(AgentConfig {
            name: "Mira".into(),
            role: "baker".into(),
            ..AgentConfig::default()
        })
        .unwrap();
    assert_eq!(id, "agent_001");
    runtime.shutdown(Duration::from_secs(5));
    path.to_str().unwrap().to_string()
}

fn memory(db: &str, args: &[&str]) -> support::CliRun {
    let mut all = vec!["memory", args[0], "--db", db, "--agent", "agent_001"];
    all.extend_from_slice(&args[1..]);
    run_cli(&all, None)
}

#[test]
fn an_operator_plants_pages_searches_and_exports_an_agents_memories() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_with_an_agent(&dir);
    for (text, importance) in [
        ("Ivy said the cellar key is under the mat.", "7"),
        ("It rained all morning.", "2"),
        ("The festival starts at noon.", "6"),
    ] {
        let run = memory(&db, &["remember", "--importance", importance, text]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert_eq!(run.json()["remembered"], true);
    }
    let run = memory(
        &db,
        &[
            "remember",
            "--kind",
            "observed",
            "--about",
            "player_0",
            "--game-time",
            "42.5",
            "The player carries flour.",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // A game time past the bound would freeze every later memory's time: refused, named.
    for time in ["1e308", "-1e13"] {
        let flag = format!("--game-time={time}");
        let run = memory(&db, &["remember", &flag, "Far in the future."]);
        assert_ne!(run.code, Some(0), "{time}");
        assert!(
            run.stderr
                .contains("game_time must be within ±1000000000000 seconds"),
            "{}",
            run.stderr
        );
    }

    // A page: the newest two, oldest first, and where the older page starts.
    let run = memory(&db, &["list", "--limit", "2"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let page = run.json();
    let texts: Vec<&str> = page["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["The festival starts at noon.", "The player carries flour."]
    );
    assert_eq!(page["memories"][1]["kind"], "observed");
    assert_eq!(page["memories"][1]["about"], "player_0");
    assert_eq!(page["memories"][1]["game_time"], 42.5);
    let next = page["next"].as_i64().unwrap().to_string();
    let older = memory(&db, &["list", "--before", &next]).json();
    assert_eq!(older["memories"].as_array().unwrap().len(), 2);
    assert_eq!(older["next"], Value::Null);

    // Search: by the plain words of the query, best first.
    let run = memory(&db, &["search", "Where are the KEYS?"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let found = run.json();
    assert_eq!(
        found[0]["memory"]["text"],
        "Ivy said the cellar key is under the mat."
    );
    assert!(found[0]["relevance"].as_f64().unwrap() > 0.0);

    // Export: every memory, one JSON object a line, oldest first.
    let run = memory(&db, &["export"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["importance"], 7);
    assert!(
        lines
            .windows(2)
            .all(|w| w[0]["id"].as_i64() < w[1]["id"].as_i64())
    );

    // A belief that turned out wrong: the newer memory supersedes the older, which stays.
    let id = lines[0]["id"].as_i64().unwrap().to_string();
    let run = memory(
        &db,
        &[
            "remember",
            "--supersedes",
            &id,
            "Ivy moved the key to the shelf.",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let lines: Vec<Value> = memory(&db, &["export"])
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["superseded_by"], lines[4]["id"]);
    assert_eq!(run.json()["id"], lines[4]["id"]);
    let run = memory(&db, &["forget", "--id", &lines[4]["id"].to_string()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);

    // Forget: the memory is gone from the stream and from the search; forgetting it again is
    // bad input.
    let run = memory(&db, &["forget", "--id", &id]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json()["forgotten"], lines[0]["id"]);
    assert!(
        memory(&db, &["search", "key"])
            .json()
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(memory(&db, &["export"]).stdout.lines().count(), 3);
    let run = memory(&db, &["forget", "--id", &id]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains(&format!("agent_001 has no memory {id}")),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_input_is_refused_with_a_reason_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_with_an_agent(&dir);
    let refused = |args: &[&str], reason: &str| {
        let run = memory(&db, args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(reason), "{args:?}: {}", run.stderr);
    };
    refused(&["remember", "   "], "invalid memory: text is empty");
    refused(
        &["remember", "--importance", "11", "x"],
        "importance must be 1 to 10",
    );
    refused(
        &["remember", "--kind", "gossip", "x"],
        "unknown memory kind 'gossip'",
    );
    let run = run_cli(
        &["memory", "list", "--db", &db, "--agent", "agent_404"],
        None,
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("the database has no agent 'agent_404'"),
        "{}",
        run.stderr
    );
    let run = memory(&db, &["export"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "", "nothing was stored");
}

/// The file's bytes, and whether a `-wal` or `-shm` file lies beside it.
fn snapshot(path: &Path) -> (Vec<u8>, bool, bool) {
    let beside = |suffix: &str| {
        let mut name = path.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name).exists()
    };
    (std::fs::read(path).unwrap(), beside("-wal"), beside("-shm"))
}

/// Every memory command on `db` fails with exit code 1 and a message holding each of
/// `reasons`, and leaves the file as it was: the same bytes, no `-wal`/`-shm` beside it.
fn refused_untouched(db: &Path, reasons: &[&str]) {
    let before = snapshot(db);
    assert!(!before.1 && !before.2, "no -wal/-shm to start with");
    let db = db.to_str().unwrap();
    for args in [
        &["list"][..],
        &["search", "key"],
        &["export"],
        &["remember", "The cellar key is under the mat."],
        &["forget", "--id", "1"],
    ] {
        let run = memory(db, args);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        for reason in reasons {
            assert!(run.stderr.contains(reason), "{args:?}: {}", run.stderr);
        }
        assert_eq!(
            snapshot(Path::new(db)),
            before,
            "{args:?} left it untouched"
        );
    }
}

#[test]
fn a_database_that_is_not_ours_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();

    // Another program's SQLite file: its own tables (one named like ours), user_version 0.
    let shop = dir.path().join("shop.db");
    rusqlite::Connection::open(&shop)
        .unwrap()
        .execute_batch(
            "CREATE TABLE agents (id INTEGER PRIMARY KEY, name TEXT);
             CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL);
             CREATE INDEX idx_orders_total ON orders (total);
             INSERT INTO orders (total) VALUES (12.5);",
        )
        .unwrap();
    refused_untouched(
        &shop,
        &[
            &format!("refused {}: not an agents database", shop.display()),
            "application_id 0x00000000, user_version 0, tables agents, orders",
            "nothing was changed",
        ],
    );

    // The server will not start on it either.
    let run = run_cli(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--db",
            shop.to_str().unwrap(),
        ],
        None,
    );
    assert_ne!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("not an agents database"),
        "{}",
        run.stderr
    );
    refused_untouched(&shop, &["tables agents, orders"]);

    // Another application's id.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("PRAGMA application_id = 305419896; CREATE TABLE notes (text TEXT);")
        .unwrap();
    refused_untouched(
        &other,
        &["application_id 0x12345678 (another application's"],
    );

    // A schema newer than this build (a file of ours, marked, at user_version 999).
    let future = dir.path().join("future.db");
    let db = database_with_an_agent(&dir);
    std::fs::copy(&db, &future).unwrap();
    rusqlite::Connection::open(&future)
        .unwrap()
        .execute_batch("PRAGMA user_version = 999;")
        .unwrap();
    refused_untouched(&future, &["database schema version 999 is newer than"]);

    // Not a SQLite file at all.
    let notes = dir.path().join("notes.txt");
    std::fs::write(
        &notes,
        "dear diary, the cellar key is under the mat\n".repeat(100),
    )
    .unwrap();
    refused_untouched(
        &notes,
        &["not a SQLite database (it starts with \"dear diary, the \")"],
    );
}

#[test]
fn reading_commands_never_create_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("sub").join("agents.db");
    let db = missing.to_str().unwrap();
    for args in [&["list"][..], &["search", "key"], &["export"]] {
        let run = memory(db, args);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("no database at {db}")),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!dir.path().join("sub").exists(), "{args:?} created nothing");
    }
}

#[test]
fn a_database_made_before_the_mark_still_works_and_is_then_marked() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_with_an_agent(&dir);
    let application_id = || -> i64 {
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(application_id(), 0x4167_4d65, "a new database is marked");
    // As the previous version left it: the project's tables, no application_id.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA application_id = 0;")
        .unwrap();

    let run = memory(&db, &["list"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(application_id(), 0, "a reading command writes nothing");
    let run = memory(&db, &["remember", "The festival starts at noon."]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(application_id(), 0x4167_4d65, "a writing command marks it");
    let run = memory(&db, &["export"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1);
}

#[test]
fn a_postgres_database_that_is_not_ours_is_refused_without_creating_a_table() {
    use agents_testkit::postgres;
    let db = postgres::database();
    postgres::execute(
        &db.url,
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, total DOUBLE PRECISION);
         INSERT INTO orders VALUES (1, 12.5);",
    )
    .unwrap();
    let tables = || {
        postgres::query_text(
            &db.url,
            "SELECT tablename::TEXT FROM pg_tables
                 WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
        )
        .unwrap()
    };
    let before = tables();
    for args in [
        &["list"][..],
        &["remember", "The cellar key is under the mat."],
    ] {
        let run = memory(&db.url, args);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("not an agents database (tables public.orders, no memory_schema)"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(tables(), before, "{args:?} created nothing");
    }

    // An empty database: the reading commands find nothing and create nothing.
    let empty = postgres::database();
    let run = memory(&empty.url, &["list"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("no database at"), "{}", run.stderr);
    assert_eq!(
        postgres::query_i64(
            &empty.url,
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        )
        .unwrap(),
        0
    );
}
