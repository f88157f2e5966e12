//! An app's log (`app_log`: its actions, events and chat lines) keeps the newest
//! `MAX_APP_LOG_ROWS` rows of each kind per app: the writer removes the oldest as it adds one,
//! leaving the other kinds and the other apps alone, and the cap holds across a reopen. Real
//! SQLite file (and a real PostgreSQL with the `postgres` feature).

use agents_core::limits::MAX_APP_LOG_ROWS;
use agents_core::memory::{AppLogKind, Memory};

/// Writes `n` rows `{"n": first..first+n}` of `kind` for `app_id`.
fn log(memory: &Memory, app_id: &str, kind: AppLogKind, first: usize, n: usize) {
    for i in first..first + n {
        memory.log_app(app_id, kind, format!("{{\"n\":{i}}}"));
    }
}

/// Over the cap, the oldest rows of that kind of that app go, and only those. `numbers` reads
/// the `n` of an app's rows of a kind from the table, oldest first.
fn keeps_the_newest_rows_of_each_kind(
    open: &dyn Fn() -> Memory,
    numbers: &dyn Fn(&str, &str) -> Vec<usize>,
) {
    let memory = open();
    log(&memory, "board", AppLogKind::Chat, 0, MAX_APP_LOG_ROWS + 5);
    log(&memory, "board", AppLogKind::Action, 0, 3);
    log(&memory, "other", AppLogKind::Chat, 0, 2);
    memory.flush().unwrap();
    let chat = numbers("board", "chat");
    assert_eq!(chat.len(), MAX_APP_LOG_ROWS);
    assert_eq!(chat.first(), Some(&5), "the five oldest lines are gone");
    assert_eq!(chat.last(), Some(&(MAX_APP_LOG_ROWS + 4)));
    assert_eq!(numbers("board", "action"), vec![0, 1, 2]);
    assert_eq!(numbers("other", "chat"), vec![0, 1]);
    drop(memory);

    let memory = open();
    log(&memory, "board", AppLogKind::Chat, MAX_APP_LOG_ROWS + 5, 1);
    memory.flush().unwrap();
    let chat = numbers("board", "chat");
    assert_eq!(chat.len(), MAX_APP_LOG_ROWS);
    assert_eq!(chat.first(), Some(&6));
    assert_eq!(chat.last(), Some(&(MAX_APP_LOG_ROWS + 5)));
}

/// The `n` of each entry.
fn parse(entries: Vec<String>) -> Vec<usize> {
    entries
        .iter()
        .map(|e| {
            serde_json::from_str::<serde_json::Value>(e).unwrap()["n"]
                .as_u64()
                .unwrap() as usize
        })
        .collect()
}

#[test]
fn sqlite_app_log_keeps_the_newest_rows_of_each_kind_per_app() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("apps.db");
    let open = || Memory::open(&path).unwrap();
    let numbers = |app: &str, kind: &str| {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare("SELECT entry FROM app_log WHERE app_id = ?1 AND kind = ?2 ORDER BY id")
            .unwrap();
        let rows = stmt
            .query_map([app, kind], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        parse(rows)
    };
    keeps_the_newest_rows_of_each_kind(&open, &numbers);
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_app_log_keeps_the_newest_rows_of_each_kind_per_app() {
    use agents_core::memory::Location;
    let db = agents_testkit::postgres::database();
    let url = db.url.clone();
    let open = || Memory::open_at(Location::Postgres(url.clone())).unwrap();
    let numbers = |app: &str, kind: &str| {
        let rows = agents_testkit::postgres::query_text(
            &url,
            &format!(
                "SELECT entry FROM app_log WHERE app_id = '{app}' AND kind = '{kind}' ORDER BY id"
            ),
        )
        .unwrap();
        parse(
            rows.into_iter()
                .filter_map(|r| r.into_iter().next().flatten())
                .collect(),
        )
    };
    keeps_the_newest_rows_of_each_kind(&open, &numbers);
}
