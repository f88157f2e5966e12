//! `agents-server arena`, run as a real process: a tournament of the scripted brain against an
//! engine writes its players' table, progress lines, `results.json` and `report.html`, and keeps
//! every game in the database; bad input (an unknown game, an unknown profile, a brains file
//! with a mistake) is refused with exit code 2 and a message naming it, and touches no data.

mod support;

use std::time::Duration;

use agents_core::arena::results::Results;
use agents_core::runtime::{Runtime, RuntimeOptions};
use support::run_cli;

#[test]
fn a_tournament_prints_its_table_writes_its_report_and_keeps_its_games() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("arena.db");
    let report = dir.path().join("report");
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        r#"{"profiles": {"offline": {"provider": "scripted"}}}"#,
    )
    .unwrap();
    let run = run_cli(
        &[
            "arena",
            "--game",
            "tic_tac_toe",
            "--players",
            "offline,engine:random",
            "--games",
            "4",
            "--seed",
            "3",
            "--brains",
            brains.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("rating [95% CI]"), "{}", run.stdout);
    assert!(run.stdout.contains("offline"), "{}", run.stdout);
    assert!(run.stderr.contains("arena: 4/4 games"), "{}", run.stderr);
    let text = std::fs::read_to_string(report.join("results.json")).unwrap();
    let results: Results = serde_json::from_str(&text).unwrap();
    assert_eq!(results.games.len(), 4);
    assert_eq!(results.seed, 3);
    assert!(report.join("report.html").is_file());
    // The games are in the database, as the file says.
    let runtime = Runtime::start(RuntimeOptions::with_database(&db)).unwrap();
    let kept = runtime.memory().arena_games(&results.tournament).unwrap();
    assert_eq!(kept.len(), 4);
    runtime.shutdown(Duration::from_secs(5));
}

#[test]
fn bad_input_is_named_and_touches_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("arena.db");
    let db = db.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let mut all = vec!["arena", "--db", db];
        all.extend_from_slice(args);
        let run = run_cli(&all, None);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    };
    refused(
        &["--game", "go", "--players", "scripted,engine:easy"],
        "error: unknown game 'go' (the arena plays chess, checkers",
    );
    refused(
        &["--game", "chess", "--players", "gemma,engine:easy"],
        "error: unknown player 'gemma': unknown brain 'gemma'",
    );
    refused(
        &["--game", "chess", "--players", "scripted,engine:basic"],
        "unknown player 'engine:basic': chess has the engines engine:random, engine:easy",
    );
    let brains = dir.path().join("brains.json");
    std::fs::write(&brains, r#"{"profiles": {"x": {"provider": "scripted""#).unwrap();
    refused(
        &[
            "--game",
            "chess",
            "--players",
            "x,engine:easy",
            "--brains",
            brains.to_str().unwrap(),
        ],
        "brains.json: ",
    );
    assert!(
        !std::path::Path::new(db).exists(),
        "bad input created the database"
    );
}
