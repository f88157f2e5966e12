//! Unit tests of the memory: the behaviour on each backend (SQLite, and PostgreSQL with the
//! `postgres` feature), then what is particular to each (SQLite's file, PRAGMAs and
//! `sqlite_master`; PostgreSQL's `memory_schema`, URLs and several processes on one database).

use std::path::Path;

use rusqlite::Connection;
use serde_json::json;
use tempfile::TempDir;

use super::*;

fn temp() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("agents.db");
    (dir, path)
}

/// A database for one test, on one backend: the suite below runs on each.
trait TestDb {
    /// Whether several processes may share the database (PostgreSQL): ids are claimed in
    /// blocks and a clean close gives back the unused end of the claims directly, not through
    /// the writer.
    const SHARED: bool;
    /// A new, empty database.
    fn new() -> Self;
    /// What [`Memory::open`] takes.
    fn path(&self) -> PathBuf;
    /// Runs SQL behind the memory's back (another process writing to the database).
    fn exec(&self, sql: &str);
    /// The one integer a query answers (read behind the memory's back).
    fn query_i64(&self, sql: &str) -> i64;
}

/// A SQLite file in a temporary directory.
struct SqliteDb(TempDir);

impl TestDb for SqliteDb {
    const SHARED: bool = false;
    fn new() -> Self {
        SqliteDb(tempfile::tempdir().expect("tempdir"))
    }
    fn path(&self) -> PathBuf {
        self.0.path().join("agents.db")
    }
    fn exec(&self, sql: &str) {
        Connection::open(self.path())
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }
    fn query_i64(&self, sql: &str) -> i64 {
        Connection::open(self.path())
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    }
}

/// A fresh database on the test process's PostgreSQL server.
#[cfg(feature = "postgres")]
struct PostgresDb(agents_testkit::postgres::Database);

#[cfg(feature = "postgres")]
impl TestDb for PostgresDb {
    const SHARED: bool = true;
    fn new() -> Self {
        PostgresDb(agents_testkit::postgres::database())
    }
    fn path(&self) -> PathBuf {
        PathBuf::from(&self.0.url)
    }
    fn exec(&self, sql: &str) {
        agents_testkit::postgres::execute(&self.0.url, sql).unwrap();
    }
    fn query_i64(&self, sql: &str) -> i64 {
        agents_testkit::postgres::query_i64(&self.0.url, sql).expect(sql)
    }
}

/// The rows of `sql` on `url`, every column as text (a connection of its own).
#[cfg(feature = "postgres")]
fn pg_rows(url: &str, sql: &str) -> Vec<Vec<String>> {
    agents_testkit::postgres::query_text(url, sql)
        .expect(sql)
        .into_iter()
        .map(|row| row.into_iter().map(Option::unwrap_or_default).collect())
        .collect()
}

/// `#[test]`s running each generic test on SQLite and (with the `postgres` feature) on
/// PostgreSQL.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite_backend {
            $(#[test] fn $name() { super::$name::<super::SqliteDb>() })*
        }
        #[cfg(feature = "postgres")]
        mod postgres_backend {
            $(#[test] fn $name() { super::$name::<super::PostgresDb>() })*
        }
    };
}

on_both_backends!(
    every_table_persists_across_reopen,
    an_agent_is_found_by_its_key_unless_terminated,
    state_changes_name_the_process_once_it_is_set,
    save_agent_replaces_but_keeps_created_at,
    agent_ids_continue_within_a_session_and_after_reopen,
    agent_ids_are_unique_across_threads,
    non_canonical_agent_ids_are_not_saved,
    task_ids_and_open_tasks_continue_after_reopen,
    complete_task_errors,
    reads_see_writes_queued_before_them_without_flush,
    recent_conversation_limit_and_order,
    weird_content_round_trips,
    a_nul_character_round_trips,
    close_is_idempotent_and_later_writes_are_dropped,
    reads_still_work_after_close,
    dropping_the_last_clone_flushes_and_stops_the_writer,
    concurrent_writers_keep_their_order_and_lose_nothing,
    commit_watch_follows_commits,
    unknown_stored_strings_are_errors_not_panics,
    a_failed_batch_is_never_reported_committed,
    ids_handed_out_before_a_crash_are_never_handed_out_again,
    an_accepted_line_stays_in_the_inbox_until_answered,
    committed_waits_for_the_batch_without_blocking_a_thread,
    memories_are_stored_paged_and_found_by_their_words,
    a_newer_memory_supersedes_an_older_one_and_recalls_are_kept,
    a_reflection_is_stored_whole_and_a_compaction_replaces_what_it_sums_up,
    vectors_are_stored_per_model_and_go_with_their_memories,
    the_ceiling_holds_for_every_kind_and_keeps_the_newest,
    the_ceiling_forgets_what_compaction_would_sum_up_first_then_the_least_important,
);

fn line(agent: &str, sender: &str, content: &str, recipient: Option<&str>) -> NewConversation {
    NewConversation {
        agent_id: agent.to_string(),
        sender: sender.to_string(),
        content: content.to_string(),
        recipient: recipient.map(str::to_string),
    }
}

fn record(agent_id: &str, name: &str) -> AgentRecord {
    AgentRecord {
        agent_id: agent_id.to_string(),
        name: name.to_string(),
        role: "builder".to_string(),
        prompt: "You build things.".to_string(),
        brain: "scripted".to_string(),
        config: json!({"name": name, "idle_think_seconds": 5, "tags": ["a", "b"]}),
        position: Position::new(1.5, -2.25),
        state: AgentState::Idle,
        created_at: crate::time::now_iso(),
        removed_at: None,
    }
}

/// The tables and indexes of the schema, by type and name (both backends; PostgreSQL adds two
/// tables of its own).
const SCHEMA_OBJECTS: &[(&str, &str)] = &[
    ("index", "idx_agent_conversations_agent"),
    ("index", "idx_agent_inbox_agent"),
    ("index", "idx_agent_state_history_agent"),
    ("index", "idx_agent_tasks_agent_status"),
    ("index", "idx_agents_key"),
    ("index", "idx_app_log"),
    ("index", "idx_arena_games"),
    ("index", "idx_brain_calls_agent"),
    ("index", "idx_campaign_turns"),
    ("index", "idx_memories_agent"),
    ("index", "idx_memories_relationship"),
    ("index", "idx_memory_vectors_agent"),
    ("table", "agent_conversations"),
    ("table", "agent_inbox"),
    ("table", "agent_state_history"),
    ("table", "agent_tasks"),
    ("table", "agents"),
    ("table", "app_log"),
    ("table", "app_sessions"),
    ("table", "arena_games"),
    ("table", "brain_calls"),
    ("table", "campaign_turns"),
    ("table", "id_blocks"),
    ("table", "memories"),
    ("table", "memory_vectors"),
];

/// What only SQLite's schema has: the memory stream's FTS5 index (its table, its shadow tables)
/// and the triggers that keep it.
const SQLITE_ONLY_OBJECTS: &[(&str, &str)] = &[
    ("table", "memories_fts"),
    ("table", "memories_fts_config"),
    ("table", "memories_fts_data"),
    ("table", "memories_fts_docsize"),
    ("table", "memories_fts_idx"),
    ("table", "memories_vocab"),
    ("trigger", "memories_fts_delete"),
    ("trigger", "memories_fts_update"),
];

/// `objects` with `more`, in the order a schema listing has them (by type, then name).
fn with(objects: &[(&str, &str)], more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all = owned(objects);
    all.extend(owned(more));
    all.sort();
    all
}

fn owned(objects: &[(&str, &str)]) -> Vec<(String, String)> {
    objects
        .iter()
        .map(|(t, n)| (t.to_string(), n.to_string()))
        .collect()
}

fn schema_objects(path: &Path) -> Vec<(String, String)> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn raw_user_version(path: &Path) -> i64 {
    Connection::open(path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

// SQLite specifics: the file, its PRAGMAs and `sqlite_master` (the PostgreSQL counterparts
// are in `postgres_only` below).

#[test]
fn migrations_run_once_and_reopen_is_a_no_op() {
    let (_dir, path) = temp();
    let mem = Memory::open(&path).unwrap();
    assert_eq!(
        mem.record_conversation(line("agent_001", "agent_001", "hi", None)),
        1
    );
    mem.close().unwrap();
    let first = schema_objects(&path);
    assert_eq!(raw_user_version(&path), Memory::SCHEMA_VERSION);

    let mem = Memory::open(&path).unwrap();
    mem.close().unwrap();
    assert_eq!(raw_user_version(&path), Memory::SCHEMA_VERSION);
    let second = schema_objects(&path);
    assert_eq!(first, second);
    assert_eq!(second, with(SCHEMA_OBJECTS, SQLITE_ONLY_OBJECTS));

    let conn = Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM agent_conversations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1, "reopening keeps the data");
}

#[test]
fn bad_paths_are_open_errors_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();

    let under_file = file.join("sub").join("agents.db");
    match Memory::open(&under_file) {
        Err(MemoryError::Open { path, message }) => {
            assert_eq!(path, under_file.display().to_string());
            assert!(!message.is_empty());
        }
        Err(other) => panic!("expected Open, got {other}"),
        Ok(_) => panic!("opened a database under a file"),
    }

    // A file that is not a database (`sqlite/check.rs` tests the refusals).
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0x5au8; 4096]).unwrap();
    assert!(matches!(
        Memory::open(&garbage),
        Err(MemoryError::Foreign { path, .. }) if path == garbage.display().to_string()
    ));

    // A directory.
    assert!(matches!(
        Memory::open(dir.path()),
        Err(MemoryError::Open { .. })
    ));
    assert!(matches!(Memory::open(""), Err(MemoryError::Open { .. })));
}

#[test]
fn missing_parent_directories_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("agents.db");
    let mem = Memory::open(&path).unwrap();
    mem.record_conversation(line("agent_001", "agent_001", "hello", None));
    mem.close().unwrap();
    assert!(path.exists());
}

// The behaviour, on each backend (`on_both_backends!` above).

fn an_agent_is_found_by_its_key_unless_terminated<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    let keyed = |id: &str, key: &str| AgentRecord {
        config: serde_json::json!({"name": "Tom", "key": key}),
        ..record(id, "Tom")
    };
    let first = mem.next_agent_id().unwrap();
    mem.save_agent(&keyed(&first, "baker_tom"));
    let other = mem.next_agent_id().unwrap();
    mem.save_agent(&keyed(&other, "smith_ann"));
    let found = |key: &str| mem.agent_by_key(key).unwrap().map(|a| a.agent_id);
    assert_eq!(found("baker_tom").as_deref(), Some(first.as_str()));
    assert_eq!(found("smith_ann").as_deref(), Some(other.as_str()));
    assert_eq!(found("nobody"), None);
    // Terminated: not found; a newer agent with the key is.
    mem.mark_agent_removed(&first);
    assert_eq!(found("baker_tom"), None);
    let second = mem.next_agent_id().unwrap();
    mem.save_agent(&keyed(&second, "baker_tom"));
    assert_eq!(found("baker_tom").as_deref(), Some(second.as_str()));
    mem.close().unwrap();
}

fn state_changes_name_the_process_once_it_is_set<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    assert_eq!(mem.process(), None);
    mem.record_state_change("agent_001", AgentState::Idle, AgentState::Thinking);
    assert!(mem.set_process("p-7"));
    assert!(!mem.set_process("p-8"), "set once");
    assert_eq!(mem.process(), Some("p-7"));
    mem.record_state_change("agent_001", AgentState::Thinking, AgentState::Idle);
    mem.flush().unwrap();
    let count = |sql: &str| db.query_i64(sql);
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM agent_state_history WHERE process IS NULL AND new_state = 'thinking'"
        ),
        1
    );
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM agent_state_history WHERE process = 'p-7' AND new_state = 'idle'"
        ),
        1
    );
    // The rows read back as before.
    let rows = mem.state_history("agent_001", 10).unwrap();
    assert_eq!(rows.len(), 2);
    mem.close().unwrap();
}

fn every_table_persists_across_reopen<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let id = mem.next_agent_id().unwrap();
    let mut rec = record(&id, "Ada");
    mem.save_agent(&rec);
    mem.save_agent_position(&id, Position::new(10.0, 20.0), AgentState::Thinking);
    mem.record_conversation(line(&id, "player", "hello Ada", Some(&id)));
    mem.record_conversation(line(&id, &id, "hello player", Some("player")));
    mem.record_state_change(&id, AgentState::Idle, AgentState::Listening);
    mem.record_state_change(&id, AgentState::Listening, AgentState::Thinking);
    let (done, _) = mem.assign_task(&id, "build a bridge").unwrap();
    let (open, _) = mem.assign_task(&id, "paint the bridge").unwrap();
    mem.complete_task(done.id).unwrap();
    let other = mem.next_agent_id().unwrap();
    mem.save_agent(&record(&other, "Bob"));
    mem.mark_agent_removed(&other);
    mem.close().unwrap();

    let mem = Memory::open(&path).unwrap();
    let lines = mem.recent_conversation(&id, 10).unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].sender, "player");
    assert_eq!(lines[0].content, "hello Ada");
    assert_eq!(lines[0].recipient.as_deref(), Some(id.as_str()));
    assert_eq!(lines[1].content, "hello player");
    assert!(lines[0].id < lines[1].id);
    assert_eq!(lines[0].timestamp.len(), 24);

    let history = mem.state_history(&id, 10).unwrap();
    assert_eq!(
        history
            .iter()
            .map(|h| (h.old_state, h.new_state))
            .collect::<Vec<_>>(),
        vec![
            (AgentState::Idle, AgentState::Listening),
            (AgentState::Listening, AgentState::Thinking)
        ]
    );

    let tasks = mem.tasks(&id).unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0].task_name, "build a bridge");
    assert_eq!(tasks[0].status, TaskStatus::Completed);
    assert!(tasks[0].completed_at.is_some());
    assert_eq!(tasks[1].status, TaskStatus::Assigned);
    assert_eq!(tasks[1].completed_at, None);
    assert_eq!(mem.open_tasks(&id), vec![open.clone()]);
    assert_eq!(mem.open_task(open.id), Some(open));
    assert_eq!(mem.open_task(done.id), None);

    let stored = mem.agent(&id).unwrap().expect("agent stored");
    rec.position = Position::new(10.0, 20.0);
    rec.state = AgentState::Thinking;
    assert_eq!(stored, rec);
    let all = mem.agents().unwrap();
    assert_eq!(
        all.iter().map(|a| a.agent_id.as_str()).collect::<Vec<_>>(),
        vec![id.as_str(), other.as_str()]
    );
    assert!(all[1].removed_at.is_some());
    assert_eq!(mem.agent("agent_999").unwrap(), None);
    mem.close().unwrap();
}

fn save_agent_replaces_but_keeps_created_at<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let id = mem.next_agent_id().unwrap();
    let mut rec = record(&id, "Ada");
    rec.created_at = "2026-01-01T00:00:00.000Z".to_string();
    mem.save_agent(&rec);
    mem.mark_agent_removed(&id);
    assert!(mem.agent(&id).unwrap().unwrap().removed_at.is_some());
    let mut again = record(&id, "Ada II");
    again.created_at = "2027-01-01T00:00:00.000Z".to_string();
    again.position = Position::new(f64::NAN, f64::INFINITY);
    mem.save_agent(&again);
    let stored = mem.agent(&id).unwrap().unwrap();
    assert_eq!(stored.name, "Ada II");
    assert_eq!(stored.created_at, "2026-01-01T00:00:00.000Z");
    assert_eq!(stored.removed_at, None, "re-saving resumes the agent");
    assert!(stored.position.x.is_nan());
    assert_eq!(stored.position.y, f64::INFINITY);
}

fn agent_ids_continue_within_a_session_and_after_reopen<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let a = mem.next_agent_id().unwrap();
    let b = mem.next_agent_id().unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("agent_001", "agent_002"));
    mem.save_agent(&record(&a, "A"));
    mem.save_agent(&record(&b, "B"));
    assert_eq!(mem.next_agent_id().unwrap(), "agent_003");
    mem.close().unwrap();

    // agent_003 was handed out (never saved): it is not handed out again. A clean close
    // releases the rest of the reservation, so the numbers continue without a gap.
    let mem = Memory::open(&path).unwrap();
    assert_eq!(mem.next_agent_id().unwrap(), "agent_004");
    // Saving an id ahead of the allocator moves it; ids grow past three digits.
    assert_ne!(mem.save_agent(&record("agent_999", "Z")), 0);
    assert_eq!(mem.next_agent_id().unwrap(), "agent_1000");
    mem.save_agent(&record("agent_1000", "K"));
    mem.close().unwrap();

    let mem = Memory::open(&path).unwrap();
    assert_eq!(mem.next_agent_id().unwrap(), "agent_1001");
    let ids: Vec<String> = mem
        .agents()
        .unwrap()
        .into_iter()
        .map(|a| a.agent_id)
        .collect();
    assert_eq!(ids, ["agent_001", "agent_002", "agent_999", "agent_1000"]);
}

fn agent_ids_are_unique_across_threads<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let ids: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    (0..250)
                        .map(|_| mem.next_agent_id().unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let unique: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), 1000);
    assert!(unique.contains(&"agent_1000".to_string()));
}

fn non_canonical_agent_ids_are_not_saved<D: TestDb>() {
    assert_eq!(agent_number("agent_001"), Some(1));
    assert_eq!(agent_number("agent_1234"), Some(1234));
    for bad in [
        "agent_1",
        "agent_0001",
        "agent_",
        "bob",
        "agent_12a",
        "agent_-01",
        "agent_99999999999999999999",
    ] {
        assert_eq!(agent_number(bad), None, "{bad}");
    }
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    assert_eq!(mem.save_agent(&record("bob", "Bob")), 0);
    assert!(mem.agents().unwrap().is_empty());
    assert_eq!(mem.next_agent_id().unwrap(), "agent_001");
}

fn task_ids_and_open_tasks_continue_after_reopen<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let (t1, s1) = mem.assign_task("agent_001", "one").unwrap();
    let (t2, s2) = mem.assign_task("agent_002", "two").unwrap();
    let (t3, _) = mem.assign_task("agent_001", "three").unwrap();
    assert_eq!((t1.id, t2.id, t3.id), (1, 2, 3));
    assert!(s1 > 0 && s2 == s1 + 1);
    assert_eq!(t1.status, TaskStatus::Assigned);
    let (done, seq) = mem.complete_task(t1.id).unwrap();
    assert!(seq > s2);
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.id, 1);
    assert!(done.completed_at.is_some());
    assert_eq!(
        mem.open_tasks("agent_001")
            .iter()
            .map(|t| t.id)
            .collect::<Vec<_>>(),
        vec![3]
    );
    mem.close().unwrap();

    let mem = Memory::open(&path).unwrap();
    assert_eq!(mem.open_tasks("agent_001"), vec![t3.clone()]);
    assert_eq!(mem.open_tasks("agent_002"), vec![t2.clone()]);
    assert!(mem.open_tasks("agent_003").is_empty());
    let (t4, _) = mem.assign_task("agent_001", "four").unwrap();
    assert_eq!(t4.id, 4);
    assert_eq!(
        mem.open_tasks("agent_001")
            .iter()
            .map(|t| t.task_name.as_str())
            .collect::<Vec<_>>(),
        vec!["three", "four"]
    );
    assert_eq!(mem.tasks("agent_001").unwrap().len(), 3);
}

fn complete_task_errors<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    {
        let mem = Memory::open(&path).unwrap();
        let (t1, _) = mem.assign_task("agent_001", "old and done").unwrap();
        mem.complete_task(t1.id).unwrap();
        mem.close().unwrap();
    }
    // A gap in the stored ids: 1 exists, 2..=9 never did, 10 is open.
    db.exec(
        "INSERT INTO agent_tasks (id, agent_id, task_name, status, created_at)
         VALUES (10, 'agent_001', 'inserted', 'assigned', '2026-01-01T00:00:00.000Z')",
    );

    let mem = Memory::open(&path).unwrap();
    assert!(matches!(
        mem.complete_task(1),
        Err(MemoryError::TaskAlreadyCompleted(1))
    ));
    assert!(matches!(
        mem.complete_task(5),
        Err(MemoryError::UnknownTask(5))
    ));
    for bad in [0, -1, 11, i64::MAX, i64::MIN] {
        assert!(
            matches!(mem.complete_task(bad), Err(MemoryError::UnknownTask(id)) if id == bad),
            "{bad}"
        );
    }
    let (t11, _) = mem.assign_task("agent_002", "new").unwrap();
    assert_eq!(t11.id, 11);
    mem.complete_task(10).unwrap();
    mem.complete_task(11).unwrap();
    assert!(matches!(
        mem.complete_task(10),
        Err(MemoryError::TaskAlreadyCompleted(10))
    ));
    assert!(matches!(
        mem.complete_task(11),
        Err(MemoryError::TaskAlreadyCompleted(11))
    ));
    assert!(matches!(
        mem.complete_task(12),
        Err(MemoryError::UnknownTask(12))
    ));
    let err = mem.complete_task(11).unwrap_err().to_string();
    assert_eq!(err, "task 11 is already completed");
}

fn reads_see_writes_queued_before_them_without_flush<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    for n in 0..200 {
        let content = format!("line {n}");
        let seq = mem.record_conversation(line("agent_001", "agent_001", &content, None));
        assert!(seq > 0);
        let last = mem.recent_conversation("agent_001", 1).unwrap();
        assert_eq!(last.len(), 1);
        assert_eq!(last[0].content, content);
        assert!(mem.committed_seq() >= seq);
        if n % 50 == 0 {
            mem.record_state_change("agent_001", AgentState::Idle, AgentState::Thinking);
            assert_eq!(
                mem.state_history("agent_001", 100).unwrap().len(),
                n / 50 + 1
            );
            let (task, _) = mem.assign_task("agent_001", &content).unwrap();
            assert_eq!(mem.tasks("agent_001").unwrap().last(), Some(&task));
        }
    }
}

fn recent_conversation_limit_and_order<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    for n in 0..10 {
        mem.record_conversation(line("agent_001", "agent_001", &format!("a{n}"), None));
        mem.record_conversation(line("agent_002", "agent_002", &format!("b{n}"), None));
    }
    let contents = |rows: Vec<ConversationRow>| -> Vec<String> {
        rows.into_iter().map(|r| r.content).collect()
    };
    assert_eq!(
        contents(mem.recent_conversation("agent_001", 3).unwrap()),
        ["a7", "a8", "a9"]
    );
    assert_eq!(
        contents(mem.recent_conversation("agent_002", 1).unwrap()),
        ["b9"]
    );
    assert!(mem.recent_conversation("agent_001", 0).unwrap().is_empty());
    let all = mem.recent_conversation("agent_001", usize::MAX).unwrap();
    assert_eq!(all.len(), 10);
    assert!(
        all.windows(2)
            .all(|w| w[0].id < w[1].id && w[0].timestamp <= w[1].timestamp)
    );
    assert!(mem.recent_conversation("nobody", 5).unwrap().is_empty());

    for n in 0..6 {
        mem.record_state_change(
            "agent_001",
            AgentState::ALL[n % 4],
            AgentState::ALL[(n + 1) % 4],
        );
    }
    let history = mem.state_history("agent_001", 2).unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].old_state, AgentState::ALL[0]);
    assert_eq!(history[1].old_state, AgentState::ALL[1]);
    assert!(history[0].id < history[1].id);
}

fn weird_content_round_trips<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let weird = [
        String::new(),
        "héllo wörld — 🌍🤖 中文 עברית".to_string(),
        "quote ' and \" ; DROP TABLE agents; --".to_string(),
        "backslash \\ and \\0, $1 and %s".to_string(),
        "line\nbreaks\r\n\ttabs".to_string(),
        "x".repeat(1 << 20),
    ];
    for content in &weird {
        mem.record_conversation(line("agent_🤖", "sender ' \"", content, Some("a,b,c")));
    }
    mem.close().unwrap();
    let mem = Memory::open(&path).unwrap();
    let rows = mem.recent_conversation("agent_🤖", 10).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.content.clone()).collect::<Vec<_>>(),
        weird
    );
    assert!(rows.iter().all(|r| r.sender == "sender ' \""));
    assert!(rows.iter().all(|r| r.recipient.as_deref() == Some("a,b,c")));
}

/// A NUL character is text like any other: the line round-trips, and the writes queued after
/// it are committed.
fn a_nul_character_round_trips<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    let content = "nul \0 inside";
    mem.record_conversation(line("agent_001", "player", content, None));
    let after = mem.record_conversation(line("agent_001", "player", "after", None));
    // PostgreSQL's TEXT cannot hold U+0000: the backend escapes it (`postgres/text.rs`); a NUL
    // must neither stop the writer nor change the line.
    mem.wait_committed(after)
        .expect("a NUL character in a line does not stop the writer");
    let rows = mem.recent_conversation("agent_001", 10).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.content.as_str()).collect::<Vec<_>>(),
        [content, "after"]
    );
}

fn close_is_idempotent_and_later_writes_are_dropped<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let (open, _) = mem.assign_task("agent_001", "open").unwrap();
    let seq = mem.record_conversation(line("agent_001", "agent_001", "before", None));
    let clone = mem.clone();
    mem.close().unwrap();
    // Everything queued before the close is committed.
    if D::SHARED {
        // PostgreSQL gives the unused ids back on a connection of its own, not as writes.
        assert!(mem.committed_seq() >= seq);
    } else {
        assert!(
            mem.committed_seq() > seq,
            "SQLite's close queues its id releases after the last write"
        );
    }
    assert_eq!(mem.committed_seq(), mem.submitted_seq());
    clone.close().unwrap();
    assert_eq!(
        clone.record_conversation(line("agent_001", "agent_001", "after", None)),
        0
    );
    assert_eq!(
        mem.record_state_change("agent_001", AgentState::Idle, AgentState::Thinking),
        0
    );
    assert_eq!(mem.save_agent(&record("agent_001", "A")), 0);
    assert_eq!(
        mem.save_agent_position("agent_001", Position::new(0.0, 0.0), AgentState::Idle),
        0
    );
    assert_eq!(mem.mark_agent_removed("agent_001"), 0);
    assert!(matches!(
        mem.assign_task("agent_001", "late"),
        Err(MemoryError::Closed)
    ));
    assert!(matches!(mem.next_agent_id(), Err(MemoryError::Closed)));
    assert!(matches!(
        mem.complete_task(open.id),
        Err(MemoryError::Closed)
    ));
    mem.flush().unwrap();
}

/// [`Memory::close`]: "later writes are dropped; reads still work".
fn reads_still_work_after_close<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    let (task, _) = mem.assign_task("agent_001", "open").unwrap();
    mem.record_conversation(line("agent_001", "agent_001", "before", None));
    mem.close().unwrap();
    // "Reads still work" after close, on both backends.
    let rows = mem
        .recent_conversation("agent_001", 10)
        .expect("reads still work after close");
    assert_eq!(
        rows.iter().map(|r| r.content.as_str()).collect::<Vec<_>>(),
        ["before"]
    );
    assert!(mem.agents().unwrap().is_empty());
    assert_eq!(mem.tasks("agent_001").unwrap(), vec![task]);
}

fn dropping_the_last_clone_flushes_and_stops_the_writer<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let clone = mem.clone();
    let worker = std::thread::spawn(move || {
        for n in 0..1000 {
            clone.record_conversation(line("agent_001", "agent_001", &format!("{n}"), None));
        }
    });
    worker.join().unwrap();
    drop(mem);
    assert_eq!(
        db.query_i64("SELECT COUNT(*) FROM agent_conversations"),
        1000
    );
}

fn concurrent_writers_keep_their_order_and_lose_nothing<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let mem = &mem;
            s.spawn(move || {
                let agent = format!("agent_00{t}");
                let mut last = 0;
                for n in 0..500 {
                    let seq = mem.record_conversation(line(&agent, &agent, &n.to_string(), None));
                    assert!(seq > last, "sequence numbers grow per thread");
                    last = seq;
                }
            });
        }
    });
    mem.flush().unwrap();
    assert_eq!(mem.committed_seq(), 2000);
    assert_eq!(mem.submitted_seq(), 2000);
    for t in 0..4 {
        let rows = mem
            .recent_conversation(&format!("agent_00{t}"), 1000)
            .unwrap();
        let ns: Vec<usize> = rows.iter().map(|r| r.content.parse().unwrap()).collect();
        assert_eq!(ns, (0..500).collect::<Vec<_>>());
    }
    let stats = mem.writer_stats();
    assert_eq!(stats.ops, 2000);
    assert!(stats.batches >= 1 && stats.batches <= 2000);
    assert!(stats.largest_batch >= 1 && stats.largest_batch <= writer::MAX_BATCH as u64);
}

fn commit_watch_follows_commits<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let mut watch = mem.commit_watch();
    assert_eq!(*watch.borrow_and_update(), 0);
    let seq = mem.record_conversation(line("agent_001", "agent_001", "x", None));
    mem.wait_committed(seq).unwrap();
    assert!(watch.has_changed().unwrap());
    assert_eq!(*watch.borrow_and_update(), seq);
}

fn unknown_stored_strings_are_errors_not_panics<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    mem.save_agent(&record("agent_001", "A"));
    mem.flush().unwrap();
    db.exec(
        "INSERT INTO agent_state_history (agent_id, old_state, new_state, timestamp)
         VALUES ('agent_001', 'idle', 'sleeping', 'now');
         UPDATE agents SET config = '{not json', state = 'idle' WHERE agent_id = 'agent_001';
         INSERT INTO agents (agent_id, seq, name, role, prompt, brain, config, x, y, state,
                             created_at, updated_at)
         VALUES ('agent_002', 2, 'B', 'r', 'p', 'b', '{}', 0, 0, 'dancing', 'now', 'now');",
    );
    // Each backend reports a bad stored string its own way (SQLite: a conversion error of
    // rusqlite; PostgreSQL: `Stored`); the message names the bad value on both.
    let bad = |result: Result<_, MemoryError>, value: &str| {
        let Err(err) = result else {
            panic!("a stored '{value}' read without an error");
        };
        assert!(is_stored_error(&err), "{err:?}");
        assert!(err.to_string().contains(value), "{err}");
    };
    bad(mem.state_history("agent_001", 5).map(drop), "sleeping");
    bad(mem.agent("agent_001").map(drop), "{not json");
    bad(mem.agent("agent_002").map(drop), "dancing");
    assert!(mem.agents().is_err());
    // The connection that met the bad rows still reads good ones.
    assert!(mem.recent_conversation("agent_001", 5).unwrap().is_empty());
}

/// The error a backend reports a stored string that does not parse with.
fn is_stored_error(err: &MemoryError) -> bool {
    match err {
        MemoryError::Sqlite(_) | MemoryError::Stored(_) => true,
        #[cfg(feature = "postgres")]
        MemoryError::Postgres(_) => true,
        _ => false,
    }
}

fn a_failed_batch_is_never_reported_committed<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let ok = mem.record_conversation(line("agent_001", "agent_001", "fine", None));
    mem.flush().unwrap();
    // Another process takes task id 1 behind the memory's back: the insert of task 1 fails
    // (primary key) in the batch and on the retry. On both backends the first task id of a
    // new database is 1 (SQLite reserves from the highest stored id, PostgreSQL claims above
    // the highest known when the memory was opened; the intruder came later).
    db.exec(
        "INSERT INTO agent_tasks (id, agent_id, task_name, status, created_at)
         VALUES (1, 'x', 'intruder', 'assigned', 'now')",
    );
    let (task, seq) = mem.assign_task("agent_001", "clash").unwrap();
    assert_eq!(task.id, 1, "the task takes the intruder's id");
    assert!(seq > ok);
    let err = mem.flush().unwrap_err();
    assert!(matches!(err, MemoryError::WriteFailed(_)), "{err}");
    assert!(mem.committed_seq() < seq);
    // Later writes are not claimed either, and nothing hangs.
    let later = mem.record_conversation(line("agent_001", "agent_001", "later", None));
    assert!(mem.wait_committed(later).is_err());
    assert!(mem.committed_seq() < seq);
    assert!(mem.recent_conversation("agent_001", 5).is_ok());
    assert!(matches!(mem.close(), Err(MemoryError::WriteFailed(_))));
}

#[test]
fn memory_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}
    assert_send_sync::<Memory>();
}

/// A crash: the process ends without `close` (no id release, nothing more committed).
fn crash(mem: Memory) {
    std::mem::forget(mem);
}

fn ids_handed_out_before_a_crash_are_never_handed_out_again<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let agents: Vec<String> = (0..3).map(|_| mem.next_agent_id().unwrap()).collect();
    let tasks: Vec<i64> = (0..2)
        .map(|n| mem.assign_task("agent_001", &format!("t{n}")).unwrap().0.id)
        .collect();
    assert_eq!(agents, ["agent_001", "agent_002", "agent_003"]);
    assert_eq!(tasks, [1, 2]);
    // None of these rows or ids was flushed: only the reservations are on disk.
    crash(mem);

    let mem = Memory::open(&path).unwrap();
    let next_agent = mem.next_agent_id().unwrap();
    let number: i64 = next_agent.trim_start_matches("agent_").parse().unwrap();
    assert!(number > 3, "{next_agent} may have been handed out before");
    let (task, _) = mem.assign_task("agent_001", "after").unwrap();
    assert!(
        task.id > 2,
        "task {} may have been handed out before",
        task.id
    );
    // Many more allocations than a block keep growing (the prefetch keeps up).
    let mut last = task.id;
    for n in 0..(3 * ids::BLOCK) {
        let (t, _) = mem.assign_task("agent_001", &format!("more {n}")).unwrap();
        assert_eq!(t.id, last + 1);
        last = t.id;
    }
    crash(mem);
    let mem = Memory::open(&path).unwrap();
    assert!(mem.assign_task("agent_001", "again").unwrap().0.id > last);
    mem.close().unwrap();
}

fn an_accepted_line_stays_in_the_inbox_until_answered<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let (first, _) = mem
        .send_to_inbox("agent_001", "player_0", "hello", "player")
        .unwrap();
    let (second, seq) = mem
        .send_to_inbox("agent_001", "agent_002", "bring flour", "message")
        .unwrap();
    assert!(second > first);
    mem.wait_committed(seq).unwrap();
    crash(mem);

    let mem = Memory::open(&path).unwrap();
    let inbox = mem.inbox("agent_001").unwrap();
    assert_eq!(
        inbox
            .iter()
            .map(|r| (
                r.id,
                r.sender.as_str(),
                r.content.as_str(),
                r.dialog_type.as_str()
            ))
            .collect::<Vec<_>>(),
        [
            (first, "player_0", "hello", "player"),
            (second, "agent_002", "bring flour", "message")
        ]
    );
    assert!(mem.inbox("agent_002").unwrap().is_empty());
    // Each line is also in the recipient's conversation memory.
    let rows = mem.recent_conversation("agent_001", 10).unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| (r.sender.as_str(), r.recipient.as_deref()))
            .collect::<Vec<_>>(),
        [
            ("player_0", Some("agent_001")),
            ("agent_002", Some("agent_001"))
        ]
    );
    // A line accepted after the restart gets a fresh id.
    let (third, _) = mem
        .send_to_inbox("agent_001", "player_0", "still there?", "player")
        .unwrap();
    assert!(third > second);
    mem.inbox_done(first);
    mem.close().unwrap();

    let mem = Memory::open(&path).unwrap();
    let left: Vec<i64> = mem
        .inbox("agent_001")
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(left, [second, third]);
    mem.close().unwrap();
    assert!(matches!(
        mem.send_to_inbox("agent_001", "player_0", "late", "player"),
        Err(MemoryError::Closed)
    ));
}

fn committed_waits_for_the_batch_without_blocking_a_thread<D: TestDb>() {
    let db = D::new();
    let path = db.path();
    let mem = Memory::open(&path).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let seqs: Vec<u64> = (0..100)
        .map(|n| mem.record_conversation(line("agent_001", "agent_001", &format!("{n}"), None)))
        .collect();
    let last = *seqs.last().unwrap();
    rt.block_on(async {
        mem.committed(last).await.unwrap();
    });
    assert!(mem.committed_seq() >= last);
    // Already committed: returns at once. Closed with everything committed: still fine.
    rt.block_on(mem.committed(seqs[0])).unwrap();
    mem.close().unwrap();
    rt.block_on(mem.committed(last)).unwrap();
    // A sequence number that will never be committed is an error, not a hang.
    assert!(rt.block_on(mem.committed(u64::MAX)).is_err());
}

// Locations: no server needed.

#[test]
fn location_of_tells_postgres_urls_from_paths() {
    for url in [
        "postgres://agents@127.0.0.1:5432/world",
        "postgresql://agents:secret@db.internal/world?connect_timeout=3",
        "postgres://",
    ] {
        assert_eq!(
            Location::of(url),
            Location::Postgres(url.to_string()),
            "{url}"
        );
    }
    for path in [
        "agents.db",
        "",
        "/var/lib/postgres/agents.db",
        "postgres",
        "postgres:/world",
        "postgres:agents.db",
        "./postgres://world",
        "data/postgresql://world",
        "mysql://agents@host/world",
    ] {
        assert_eq!(
            Location::of(path),
            Location::File(PathBuf::from(path)),
            "{path}"
        );
    }
    // A path that is not UTF-8 is a file.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"postgres://\xff");
        assert_eq!(Location::of(odd), Location::File(PathBuf::from(odd)));
    }
}

#[test]
fn location_display_hides_the_password() {
    let shown = |text: &str| Location::of(text).to_string();
    assert_eq!(
        shown("postgres://agents:secret@127.0.0.1:5432/world"),
        "postgres://agents:***@127.0.0.1:5432/world"
    );
    assert_eq!(
        shown("postgresql://agents:secret@db.internal/world?connect_timeout=3"),
        "postgresql://agents:***@db.internal/world?connect_timeout=3"
    );
    // A password with an `@` in it is hidden whole.
    assert_eq!(
        shown("postgres://agents:se@cr:et@db/world"),
        "postgres://agents:***@db/world"
    );
    // Nothing to hide.
    for url in [
        "postgres://agents@127.0.0.1:5432/world",
        "postgres://127.0.0.1/world",
    ] {
        assert_eq!(shown(url), url);
    }
    assert_eq!(shown("/tmp/agents.db"), "/tmp/agents.db");
    assert_eq!(
        format!("{:?}", Location::of("/tmp/agents.db")),
        format!("File({:?})", Path::new("/tmp/agents.db"))
    );
}

#[test]
fn a_password_in_the_url_query_is_hidden_too() {
    // libpq and tokio-postgres take the password from the query as well.
    let shown = Location::of("postgres://agents@db.internal/world?password=secret").to_string();
    assert!(!shown.contains("secret"), "{shown}");
}

#[cfg(not(feature = "postgres"))]
#[test]
fn a_postgres_url_without_the_feature_is_an_open_error_without_the_password() {
    let url = "postgres://agents:secret@127.0.0.1:5432/world";
    match Memory::open(url) {
        Err(err @ MemoryError::Open { .. }) => {
            let MemoryError::Open { path, message } = &err else {
                unreachable!()
            };
            assert_eq!(path, "postgres://agents:***@127.0.0.1:5432/world");
            assert!(message.contains("postgres"), "{message}");
            assert!(!err.to_string().contains("secret"), "{err}");
            assert!(!format!("{err:?}").contains("secret"), "{err:?}");
        }
        Err(other) => panic!("expected Open, got {other}"),
        Ok(_) => panic!("opened PostgreSQL without the feature"),
    }
}

/// What is particular to PostgreSQL: its schema table, its URLs, and several processes (here:
/// several `Memory` handles) on one database.
#[cfg(feature = "postgres")]
mod postgres_only {
    use std::collections::HashSet;

    use super::*;

    fn url(db: &PostgresDb) -> &str {
        &db.0.url
    }

    /// Every version row of `memory_schema`, in order.
    fn versions(db: &PostgresDb) -> Vec<i64> {
        pg_rows(
            url(db),
            "SELECT version::TEXT AS v FROM memory_schema ORDER BY memory_schema.version",
        )
        .iter()
        .map(|row| row[0].parse().expect("a version number"))
        .collect()
    }

    /// The tables and indexes of the public schema, as `(kind, name)`: what `sqlite_master`
    /// lists on SQLite (the indexes of primary keys and unique columns left out, as SQLite's
    /// automatic ones are).
    fn schema_objects(db: &PostgresDb) -> Vec<(String, String)> {
        pg_rows(
            url(db),
            "SELECT 'index', indexname::TEXT FROM pg_indexes
                 WHERE schemaname = 'public' AND indexname LIKE 'idx_%'
             UNION ALL
             SELECT 'table', table_name::TEXT FROM information_schema.tables
                 WHERE table_schema = 'public'
             ORDER BY 1, 2",
        )
        .into_iter()
        .map(|row| (row[0].clone(), row[1].clone()))
        .collect()
    }

    #[test]
    fn migrations_run_once_and_reopen_is_a_no_op() {
        let db = PostgresDb::new();
        let mem = Memory::open(db.path()).unwrap();
        assert_eq!(
            mem.record_conversation(line("agent_001", "agent_001", "hi", None)),
            1
        );
        mem.close().unwrap();
        let first = schema_objects(&db);
        let all: Vec<i64> = (1..=Memory::SCHEMA_VERSION).collect();
        assert_eq!(versions(&db), all, "each migration once");
        assert_eq!(
            db.query_i64("SELECT MAX(version) FROM memory_schema"),
            Memory::SCHEMA_VERSION
        );

        let mem = Memory::open(db.path()).unwrap();
        mem.close().unwrap();
        assert_eq!(versions(&db), all, "reopening migrates nothing");
        let second = schema_objects(&db);
        assert_eq!(first, second);
        let expected = with(
            SCHEMA_OBJECTS,
            &[
                ("index", "idx_memories_search"),
                ("table", "memory_schema"),
                ("table", "memory_writers"),
            ],
        );
        assert_eq!(second, expected);
        assert_eq!(
            db.query_i64("SELECT COUNT(*) FROM agent_conversations"),
            1,
            "reopening keeps the data"
        );
    }

    #[test]
    fn processes_opening_a_new_database_at_once_migrate_it_once() {
        let db = PostgresDb::new();
        let path = db.path();
        let memories: Vec<Memory> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| Memory::open(&path).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let all: Vec<i64> = (1..=Memory::SCHEMA_VERSION).collect();
        assert_eq!(versions(&db), all);
        for mem in memories {
            mem.close().unwrap();
        }
    }

    /// Every table of the database, as `schema.table`.
    fn tables(db: &PostgresDb) -> Vec<String> {
        pg_rows(
            url(db),
            "SELECT schemaname || '.' || tablename FROM pg_tables
                 WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
        )
        .into_iter()
        .map(|row| row[0].clone())
        .collect()
    }

    #[test]
    fn a_foreign_database_is_refused_without_creating_a_table() {
        let db = PostgresDb::new();
        db.exec(
            "CREATE TABLE orders (id BIGINT PRIMARY KEY, total DOUBLE PRECISION);
             CREATE TABLE agent_conversations (id BIGINT PRIMARY KEY, content TEXT);
             INSERT INTO orders VALUES (1, 12.5);",
        );
        let before = tables(&db);
        for memory in [
            Memory::open(db.path()),
            Memory::open_read_only(Location::of(db.path())),
        ] {
            match memory {
                Err(MemoryError::Foreign { path, found }) => {
                    assert_eq!(path, Location::of(db.path()).to_string());
                    assert_eq!(
                        found,
                        "tables public.agent_conversations, public.orders, no memory_schema"
                    );
                }
                Err(other) => panic!("expected Foreign, got {other}"),
                Ok(_) => panic!("opened a database that is not ours"),
            }
            assert_eq!(tables(&db), before, "nothing created");
        }
        assert_eq!(db.query_i64("SELECT COUNT(*) FROM orders"), 1);
    }

    #[test]
    fn a_read_only_open_creates_nothing_and_writes_nothing() {
        let db = PostgresDb::new();
        assert!(matches!(
            Memory::open_read_only(Location::of(db.path())),
            Err(MemoryError::NoDatabase { .. })
        ));
        assert!(tables(&db).is_empty(), "nothing created");

        let mem = Memory::open(db.path()).unwrap();
        let seq = mem.record_conversation(line("agent_001", "me", "kept", None));
        mem.wait_committed(seq).unwrap();
        mem.close().unwrap();
        let mem = Memory::open_read_only(Location::of(db.path())).unwrap();
        assert_eq!(
            mem.recent_conversation("agent_001", 5).unwrap()[0].content,
            "kept"
        );
        assert!(matches!(mem.next_agent_id(), Err(MemoryError::Closed)));
        mem.close().unwrap();

        // An older version: reading it needs the migrations.
        db.exec("DELETE FROM memory_schema WHERE version > 3");
        assert!(matches!(
            Memory::open_read_only(Location::of(db.path())),
            Err(MemoryError::Outdated { found: 3, .. })
        ));
    }

    #[test]
    fn newer_schema_is_refused() {
        let db = PostgresDb::new();
        db.exec(
            "CREATE TABLE memory_schema (version BIGINT NOT NULL);
             INSERT INTO memory_schema (version) VALUES (1), (99);",
        );
        match Memory::open(db.path()) {
            Err(MemoryError::SchemaTooNew { found, supported }) => {
                assert_eq!((found, supported), (99, Memory::SCHEMA_VERSION));
            }
            Err(other) => panic!("expected SchemaTooNew, got {other}"),
            Ok(_) => panic!("expected SchemaTooNew, got a memory"),
        }
        assert_eq!(
            versions(&db),
            [1, 99],
            "a refused database is left as it was"
        );
    }

    /// `err` is an `Open` error showing `shown` and never the password `secret`.
    fn assert_open_error_without_password(result: Result<Memory, MemoryError>, shown: &str) {
        match result {
            Err(err @ MemoryError::Open { .. }) => {
                let MemoryError::Open { path, message } = &err else {
                    unreachable!()
                };
                assert_eq!(path, shown);
                assert!(!message.is_empty());
                assert!(!err.to_string().contains("secret"), "{err}");
                assert!(!format!("{err:?}").contains("secret"), "{err:?}");
            }
            Err(other) => panic!("expected Open, got {other:?}"),
            Ok(_) => panic!("opened {shown}"),
        }
    }

    #[test]
    fn an_unreachable_server_is_an_open_error_without_the_password() {
        let port = agents_testkit::free_port();
        let started = std::time::Instant::now();
        assert_open_error_without_password(
            Memory::open(format!("postgres://agents:secret@127.0.0.1:{port}/world")),
            &format!("postgres://agents:***@127.0.0.1:{port}/world"),
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "a refused connection fails at once"
        );
    }

    #[test]
    fn a_malformed_url_is_an_open_error_without_the_password() {
        for (url, shown) in [
            (
                "postgres://agents:secret@127.0.0.1:notaport/world",
                "postgres://agents:***@127.0.0.1:notaport/world",
            ),
            (
                "postgresql://agents:secret@127.0.0.1/world?sslmode=sometimes",
                "postgresql://agents:***@127.0.0.1/world?sslmode=sometimes",
            ),
            (
                "postgres://agents:secret@127.0.0.1/world?connect_timeout=soon",
                "postgres://agents:***@127.0.0.1/world?connect_timeout=soon",
            ),
        ] {
            assert_open_error_without_password(Memory::open(url), shown);
        }
    }

    #[test]
    fn the_memory_shows_its_url_without_the_password() {
        let db = PostgresDb::new();
        // The test server trusts loopback connections: the password is not checked.
        let with_password = url(&db).replacen("://agents@", "://agents:secret@", 1);
        assert_ne!(with_password, url(&db));
        let mem = Memory::open(&with_password).unwrap();
        let shown = mem.path().display().to_string();
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(shown, url(&db).replacen("://agents@", "://agents:***@", 1));
        assert_eq!(mem.location(), &Location::Postgres(with_password.clone()));
        assert_eq!(mem.location().to_string(), shown);
        mem.close().unwrap();
    }

    /// Two handles on one database, as two processes of one world.
    fn two_handles() -> (PostgresDb, Memory, Memory) {
        let db = PostgresDb::new();
        let a = Memory::open(db.path()).unwrap();
        let b = Memory::open(db.path()).unwrap();
        (db, a, b)
    }

    #[test]
    fn two_processes_never_hand_out_the_same_id() {
        let (db, a, b) = two_handles();
        const PER_THREAD: usize = 300;
        type Ids = (Vec<String>, Vec<i64>, Vec<i64>);
        let all: Vec<Ids> = std::thread::scope(|s| {
            let mut handles = Vec::new();
            for (name, mem) in [("a", &a), ("b", &b)] {
                for t in 0..2 {
                    handles.push(s.spawn(move || {
                        let mut ids: Ids = Default::default();
                        for n in 0..PER_THREAD {
                            ids.0.push(mem.next_agent_id().unwrap());
                            let owner = format!("agent_{name}{t}");
                            let (task, _) = mem.assign_task(&owner, &format!("t{n}")).unwrap();
                            ids.1.push(task.id);
                            let (inbox, _) = mem
                                .send_to_inbox(&owner, "player_0", &format!("m{n}"), "player")
                                .unwrap();
                            ids.2.push(inbox);
                        }
                        ids
                    }));
                }
            }
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let total = 4 * PER_THREAD;
        let agents: HashSet<&String> = all.iter().flat_map(|ids| &ids.0).collect();
        let tasks: HashSet<i64> = all.iter().flat_map(|ids| ids.1.iter().copied()).collect();
        let inbox: HashSet<i64> = all.iter().flat_map(|ids| ids.2.iter().copied()).collect();
        assert_eq!(agents.len(), total, "agent ids handed out twice");
        assert_eq!(tasks.len(), total, "task ids handed out twice");
        assert_eq!(inbox.len(), total, "inbox ids handed out twice");
        for ids in &all {
            assert!(ids.1.windows(2).all(|w| w[0] < w[1]), "ids grow per thread");
        }
        // Every row reached the database (a shared id would have failed a batch).
        a.flush().unwrap();
        b.flush().unwrap();
        assert_eq!(
            db.query_i64("SELECT COUNT(*) FROM agent_tasks"),
            total as i64
        );
        assert_eq!(
            db.query_i64("SELECT COUNT(*) FROM agent_inbox"),
            total as i64
        );
        a.close().unwrap();
        b.close().unwrap();

        // A process opening afterwards continues above every id of both.
        let c = Memory::open(db.path()).unwrap();
        let agent = c.next_agent_id().unwrap();
        let number = agent_number(&agent).unwrap();
        assert!(
            agents.iter().all(|a| agent_number(a).unwrap() < number),
            "{agent}"
        );
        let (task, _) = c.assign_task("agent_c", "later").unwrap();
        assert!(tasks.iter().all(|&t| t < task.id), "{}", task.id);
        let (line, _) = c.send_to_inbox("agent_c", "p", "later", "player").unwrap();
        assert!(inbox.iter().all(|&i| i < line), "{line}");
        c.close().unwrap();
    }

    #[test]
    fn a_clean_close_gives_back_only_what_no_other_process_claimed_after() {
        let (db, a, b) = two_handles();
        assert_eq!(a.next_agent_id().unwrap(), "agent_001");
        // B claims the block after A's.
        let from_b = b.next_agent_id().unwrap();
        assert_eq!(from_b, format!("agent_{:03}", ids::BLOCK + 1));
        // A's unused ids cannot be given back (B claimed after them): they are skipped.
        a.close().unwrap();
        b.close().unwrap();
        let c = Memory::open(db.path()).unwrap();
        assert_eq!(
            c.next_agent_id().unwrap(),
            format!("agent_{:03}", ids::BLOCK + 2),
            "B gave back the end of its claim; A's ids stay skipped"
        );
        c.close().unwrap();
    }

    #[test]
    fn each_process_sees_the_rows_the_other_committed() {
        let (_db, a, b) = two_handles();
        let from_a = a.next_agent_id().unwrap();
        let from_b = b.next_agent_id().unwrap();
        a.save_agent(&record(&from_a, "Ada"));
        b.save_agent(&record(&from_b, "Bob"));
        a.record_conversation(line("agent_shared", "a", "from a", None));
        a.flush().unwrap();
        b.record_conversation(line("agent_shared", "b", "from b", None));
        b.record_state_change("agent_shared", AgentState::Idle, AgentState::Thinking);
        b.flush().unwrap();
        for mem in [&a, &b] {
            let names: Vec<String> = mem.agents().unwrap().into_iter().map(|r| r.name).collect();
            assert_eq!(names, ["Ada", "Bob"]);
            let lines: Vec<String> = mem
                .recent_conversation("agent_shared", 10)
                .unwrap()
                .into_iter()
                .map(|r| r.content)
                .collect();
            assert_eq!(lines, ["from a", "from b"]);
            assert_eq!(mem.state_history("agent_shared", 10).unwrap().len(), 1);
            assert_eq!(mem.agent(&from_b).unwrap().unwrap().name, "Bob");
        }
        a.close().unwrap();
        b.close().unwrap();
    }

    #[test]
    fn a_task_assigned_in_one_process_is_completed_in_the_other() {
        let (_db, a, b) = two_handles();
        let (task, seq) = a.assign_task("agent_001", "cross").unwrap();
        a.wait_committed(seq).unwrap();
        assert_eq!(b.open_task(task.id), None, "B's index does not know it yet");
        let (done, seq) = b.complete_task(task.id).unwrap();
        assert_eq!(done.id, task.id);
        assert_eq!(done.task_name, "cross");
        assert_eq!(done.agent_id, "agent_001");
        assert_eq!(done.status, TaskStatus::Completed);
        assert!(done.completed_at.is_some());
        b.wait_committed(seq).unwrap();
        assert!(matches!(
            b.complete_task(task.id),
            Err(MemoryError::TaskAlreadyCompleted(id)) if id == task.id
        ));
        // A reads what B committed.
        let stored = a.tasks("agent_001").unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].status, TaskStatus::Completed);
        assert_eq!(stored[0].completed_at, done.completed_at);
        // Ids neither process handed out are unknown to both.
        for mem in [&a, &b] {
            assert!(matches!(
                mem.complete_task(task.id + 1_000),
                Err(MemoryError::UnknownTask(_))
            ));
        }
        a.close().unwrap();
        b.close().unwrap();
    }

    #[test]
    fn a_task_completed_elsewhere_is_not_completed_again_by_its_assigner() {
        let (db, a, b) = two_handles();
        let (task, seq) = a.assign_task("agent_001", "cross").unwrap();
        a.wait_committed(seq).unwrap();
        let (done, seq) = b.complete_task(task.id).unwrap();
        b.wait_committed(seq).unwrap();
        // A's own index still lists the task as open; the database decides.
        let again = a.complete_task(task.id);
        assert!(
            matches!(again, Err(MemoryError::TaskAlreadyCompleted(id)) if id == task.id),
            "completed twice: {again:?}"
        );
        a.flush().unwrap();
        assert_eq!(
            db.query_i64("SELECT COUNT(*) FROM agent_tasks WHERE status = 'completed'"),
            1
        );
        assert_eq!(
            a.tasks("agent_001").unwrap()[0].completed_at,
            done.completed_at
        );
        a.close().unwrap();
        b.close().unwrap();
    }
}

fn fact(text: &str, importance: u8, game_time: f64) -> NewMemory {
    NewMemory {
        kind: MemoryKind::Fact,
        text: text.into(),
        importance,
        about: None,
        sources: Vec::new(),
        game_time,
        supersedes: Vec::new(),
    }
}

fn memories_are_stored_paged_and_found_by_their_words<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    mem.remember(
        "agent_001",
        fact("Ivy said the cellar key is under the mat.", 7, 10.0),
        0,
    )
    .unwrap();
    mem.remember("agent_001", fact("It rained all morning.", 2, 20.0), 0)
        .unwrap();
    mem.remember(
        "agent_001",
        NewMemory {
            kind: MemoryKind::Insight,
            about: Some("agent_002".into()),
            sources: vec![1, 2],
            ..fact("Keys get lost in this town: nul \0 inside.", 5, 30.0)
        },
        0,
    )
    .unwrap();
    mem.remember("agent_002", fact("The cellar is flooded.", 4, 5.0), 0)
        .unwrap();
    // Bad input is refused before anything is queued, naming what is wrong.
    let refused = mem
        .remember("agent_001", fact("  ", 5, 0.0), 0)
        .unwrap_err();
    assert_eq!(refused.to_string(), "invalid memory: text is empty");
    assert!(mem.remember("", fact("x", 5, 0.0), 0).is_err());

    // A page, newest first across pages, oldest first within one.
    let page = mem.memories_page("agent_001", None, 2).unwrap();
    let texts: Vec<&str> = page.rows.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "It rained all morning.",
            "Keys get lost in this town: nul \0 inside."
        ]
    );
    let insight = &page.rows[1];
    assert_eq!(insight.kind, MemoryKind::Insight);
    assert_eq!(insight.about.as_deref(), Some("agent_002"));
    assert_eq!(insight.sources, [1, 2]);
    assert_eq!(insight.importance, 5);
    assert_eq!(insight.game_time, 30.0);
    let older = mem.memories_page("agent_001", page.next, 2).unwrap();
    assert_eq!(older.rows.len(), 1);
    assert_eq!(older.rows[0].importance, 7);
    assert_eq!(older.next, None);

    // Found by their words (stemmed: "keys" finds "key"), the agent's own only, best first;
    // the query's own syntax is not the engine's.
    let found = mem
        .search_memories("agent_001", "Where is the cellar KEY? \"OR\" NEAR(*)", 10)
        .unwrap();
    let ids: Vec<i64> = found.iter().map(|f| f.memory.id).collect();
    assert_eq!(ids.first(), Some(&1), "{found:?}");
    assert!(ids.contains(&3), "keys (plural) matches key: {found:?}");
    assert!(!ids.contains(&2), "{found:?}");
    assert!(found.iter().all(|f| f.memory.agent_id == "agent_001"));
    assert!(
        found.windows(2).all(|w| w[0].relevance >= w[1].relevance),
        "{found:?}"
    );
    assert!(
        mem.search_memories("agent_001", "?! *", 10)
            .unwrap()
            .is_empty()
    );
    assert!(
        mem.search_memories("agent_001", "dragons", 10)
            .unwrap()
            .is_empty()
    );
    // Forgotten: gone from the stream and from the keyword index; another agent's memory
    // with that id is not this agent's to forget.
    mem.forget("agent_002", 1);
    mem.forget("agent_001", 1);
    let left: Vec<i64> = mem
        .memories_page("agent_001", None, 10)
        .unwrap()
        .rows
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(left, [2, 3]);
    let found = mem.search_memories("agent_001", "cellar key", 10).unwrap();
    assert_eq!(
        found.iter().map(|f| f.memory.id).collect::<Vec<_>>(),
        [3],
        "{found:?}"
    );
    mem.remember(
        "agent_001",
        fact("Ivy said the cellar key is under the mat.", 7, 40.0),
        0,
    )
    .unwrap();
    // They last: a reopened database has them, and finds them.
    drop(mem);
    let mem = Memory::open(db.path()).unwrap();
    assert_eq!(
        mem.memories_page("agent_001", None, 10).unwrap().rows.len(),
        3
    );
    assert_eq!(
        mem.search_memories("agent_002", "cellar", 5).unwrap().len(),
        1
    );
}

fn a_newer_memory_supersedes_an_older_one_and_recalls_are_kept<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    assert_eq!(mem.latest_memory_time().unwrap(), None);
    let (first, _) = mem
        .remember("agent_001", fact("The key is under the mat.", 6, 10.0), 0)
        .unwrap();
    assert_eq!(first, 1);
    mem.remember("agent_002", fact("The key is in the well.", 6, 11.0), 0)
        .unwrap();
    // Another agent's memory 2 is not agent_001's to replace.
    mem.remember(
        "agent_001",
        NewMemory {
            supersedes: vec![1, 2],
            ..fact("Ivy moved the key to the shelf.", 7, 20.0)
        },
        0,
    )
    .unwrap();
    // Ids are handed out once: a reopened database continues after them.
    drop(mem);
    let mem = Memory::open(db.path()).unwrap();
    let (next, _) = mem.remember("agent_003", fact("x", 1, 0.0), 0).unwrap();
    assert_eq!(next, 4);
    mem.touch_memories("agent_001", vec![1, 3], 50.0);
    mem.touch_memories("agent_002", vec![1], 99.0);
    let rows = mem.memories_page("agent_001", None, 10).unwrap().rows;
    assert_eq!(rows[0].superseded_by, Some(3), "{rows:?}");
    assert_eq!(rows[0].accessed_at, Some(50.0));
    assert_eq!(rows[1].superseded_by, None);
    assert_eq!(rows[1].accessed_at, Some(50.0));
    let other = mem.memories_page("agent_002", None, 10).unwrap().rows;
    assert_eq!(other[0].superseded_by, None);
    assert_eq!(other[0].accessed_at, None);
    // Found by a search with both marks.
    let found = mem.search_memories("agent_001", "key", 10).unwrap();
    assert!(found.iter().any(|f| f.memory.superseded_by == Some(3)));
    // The game clock resumes at the latest time a memory was formed or recalled.
    assert_eq!(mem.latest_memory_time().unwrap(), Some(50.0));
}

fn a_reflection_is_stored_whole_and_a_compaction_replaces_what_it_sums_up<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    for n in 0..6 {
        let importance = if n == 4 { 8 } else { 2 };
        mem.remember(
            "agent_001",
            fact(
                &format!("The mill wheel turned {n} times."),
                importance,
                n as f64,
            ),
            0,
        )
        .unwrap();
    }
    mem.remember("agent_002", fact("Not mine.", 1, 0.0), 0)
        .unwrap();
    // A reflection: all of it in one write, a bad one stores nothing.
    let thought = |text: &str, about: &str, supersedes: Vec<i64>| NewMemory {
        about: Some(about.into()),
        sources: vec![1, 2],
        supersedes,
        ..NewMemory::new(MemoryKind::Relationship, text)
    };
    let (ids, _) = mem
        .remember_all(
            "agent_001",
            vec![
                NewMemory {
                    sources: vec![1, 2, 3],
                    ..NewMemory::new(MemoryKind::Insight, "The mill keeps turning.")
                },
                thought("Ivy is kind.", "agent_002", vec![]),
            ],
            0,
        )
        .unwrap();
    assert_eq!(ids, vec![8, 9]);
    assert!(matches!(
        mem.remember_all(
            "agent_001",
            vec![thought("Fine.", "agent_002", vec![]), fact("", 1, 0.0)],
            0
        ),
        Err(MemoryError::InvalidMemory(_))
    ));
    assert_eq!(mem.memory_count("agent_001").unwrap(), 8);
    let (newer, _) = mem
        .remember_all(
            "agent_001",
            vec![thought("Ivy is very kind.", "agent_002", vec![9])],
            0,
        )
        .unwrap();
    let now = mem
        .current_relationship("agent_001", "agent_002")
        .unwrap()
        .unwrap();
    assert_eq!((now.id, now.text.as_str()), (newer[0], "Ivy is very kind."));
    assert_eq!(
        mem.current_relationship("agent_001", "agent_003").unwrap(),
        None
    );

    // What a compaction may sum up: what happened to it, the least important, oldest first.
    let low: Vec<i64> = mem
        .compactable("agent_001", 4, 10)
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(low, vec![1, 2, 3, 4, 6]);
    let (summary, _) = mem
        .compact(
            "agent_001",
            NewMemory {
                sources: vec![1, 2, 3],
                ..NewMemory::new(MemoryKind::Summary, "Earlier: the mill wheel turned.")
            },
            vec![1, 2, 3],
            0,
        )
        .unwrap();
    let rows = mem.memories_page("agent_001", None, 50).unwrap().rows;
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    assert_eq!(ids, vec![4, 5, 6, 8, 9, newer[0], summary]);
    assert_eq!(mem.memory_count("agent_001").unwrap(), 7);
    assert_eq!(mem.memory_count("agent_002").unwrap(), 1);
    // The summary is found by its words; what it replaced is not found any more.
    let found = mem.search_memories("agent_001", "wheel", 10).unwrap();
    let found: Vec<i64> = found.iter().map(|f| f.memory.id).collect();
    assert!(found.contains(&summary) && !found.contains(&1), "{found:?}");
}

/// SQLite indexes new memories in bulk (not a trigger per row): a search sees every memory
/// queued before it, another agent's memories never, and forgetting a memory before or after
/// it was indexed leaves the index consistent (FTS5's own integrity check).
#[test]
fn the_search_index_catches_up_and_stays_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.db");
    let mem = Memory::open(&path).unwrap();
    let (key, _) = mem
        .remember(
            "agent_001",
            fact("The cellar key is under the mat.", 5, 1.0),
            0,
        )
        .unwrap();
    let (flood, _) = mem
        .remember("agent_001", fact("The cellar is flooded.", 5, 2.0), 0)
        .unwrap();
    // Forgotten before any search asked for the index.
    mem.forget("agent_001", flood);
    mem.remember("agent_002", fact("The cellar key is lost.", 5, 3.0), 0)
        .unwrap();
    let found: Vec<i64> = mem
        .search_memories("agent_001", "cellar key", 10)
        .unwrap()
        .iter()
        .map(|f| f.memory.id)
        .collect();
    assert_eq!(found, [key]);
    // Forgotten once indexed.
    mem.forget("agent_001", key);
    assert!(
        mem.search_memories("agent_001", "cellar", 10)
            .unwrap()
            .is_empty()
    );
    // Many memories: a decision's recall (what is committed and indexed, without waiting)
    // finds them once the writer has caught up.
    for n in 0..600 {
        mem.remember(
            "agent_001",
            fact(&format!("Lantern number {n} hangs in the mill."), 3, 10.0),
            0,
        )
        .unwrap();
    }
    mem.flush().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let found = mem
            .recall_candidates("agent_001", ("lantern mill", &[]), (5, 5), (&[], &[]), true)
            .unwrap()
            .found;
        if found.len() == 5 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the index never caught up"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    mem.close().unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap();
    let indexed: i64 = conn
        .query_row("SELECT COUNT(*) FROM memories_fts_docsize", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(indexed, 601, "agent_002's memory and the 600 lanterns");
}

fn vectors_are_stored_per_model_and_go_with_their_memories<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    let mut ids = Vec::new();
    for n in 0..4 {
        let (id, _) = mem
            .remember(
                "agent_001",
                fact(&format!("Fact number {n}."), 3, n as f64),
                0,
            )
            .unwrap();
        ids.push(id);
    }
    let (other, _) = mem
        .remember("agent_002", fact("Someone else's.", 3, 0.0), 0)
        .unwrap();
    let v = |x: f32| vec![x, 0.5, -0.25, f32::MIN_POSITIVE];
    mem.store_vectors(
        "agent_001",
        "m1",
        &[(ids[0], v(1.0)), (ids[1], v(2.0)), (ids[2], v(3.0))],
    );
    // Not this agent's memory, and no memory at all: no vector is stored.
    mem.store_vectors("agent_001", "m1", &[(other, v(9.0)), (9_999, v(9.0))]);
    assert_eq!(
        mem.memory_vectors("agent_001", "m1").unwrap(),
        vec![(ids[0], v(1.0)), (ids[1], v(2.0)), (ids[2], v(3.0))],
        "exact, by id"
    );
    assert!(mem.memory_vectors("agent_002", "m1").unwrap().is_empty());
    assert!(mem.memory_vectors("agent_001", "m2").unwrap().is_empty());
    let unembedded = |model: &str, after: i64| -> Vec<i64> {
        mem.unembedded("agent_001", model, after, 10)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    };
    assert_eq!(unembedded("m1", 0), vec![ids[3]]);
    assert_eq!(unembedded("m2", ids[1]), vec![ids[2], ids[3]]);
    // Another model's vector replaces the first's.
    mem.store_vectors("agent_001", "m2", &[(ids[1], v(5.0))]);
    assert_eq!(unembedded("m1", 0), vec![ids[1], ids[3]]);
    // Forgotten and summed-up memories take their vectors with them.
    mem.forget("agent_001", ids[0]);
    mem.compact(
        "agent_001",
        NewMemory {
            sources: vec![ids[2]],
            ..NewMemory::new(MemoryKind::Summary, "Fact two happened.")
        },
        vec![ids[2]],
        0,
    )
    .unwrap();
    assert!(mem.memory_vectors("agent_001", "m1").unwrap().is_empty());
    assert_eq!(mem.memory_vectors("agent_001", "m2").unwrap().len(), 1);
    // Recall's candidates by id: those still stored, of this agent only.
    mem.flush().unwrap();
    let nearest = mem
        .recall_candidates(
            "agent_001",
            ("", &[]),
            (0, 0),
            (&[], &[ids[0], ids[1], ids[3], other]),
            false,
        )
        .unwrap()
        .nearest;
    assert_eq!(
        nearest.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![ids[1], ids[3]]
    );
    mem.close().unwrap();
    let reopened = Memory::open(db.path()).unwrap();
    assert_eq!(
        reopened.memory_vectors("agent_001", "m2").unwrap(),
        vec![(ids[1], v(5.0))]
    );
}

/// 1,500 memories of one kind and importance written against a ceiling of 200 (in batches as
/// the writer takes them, some of their own): every committed batch leaves at most 200, and
/// they are the newest;
/// another agent's stream is left alone, and no ceiling (0) keeps everything.
fn the_ceiling_holds_for_every_kind_and_keeps_the_newest<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    for (n, kind) in [MemoryKind::Insight, MemoryKind::Summary, MemoryKind::Fact]
        .into_iter()
        .enumerate()
    {
        let agent = format!("agent_{:03}", n + 1);
        let mut ids = Vec::new();
        for i in 0..1_500 {
            let memory = NewMemory {
                importance: 5,
                ..NewMemory::new(kind, format!("{kind} number {i}."))
            };
            let (id, seq) = mem.remember(&agent, memory, 200).unwrap();
            ids.push(id);
            if i % 500 == 0 {
                // A batch of its own, then a count right after it committed.
                mem.wait_committed(seq).unwrap();
                assert!(mem.memory_count(&agent).unwrap() <= 200);
            }
        }
        mem.flush().unwrap();
        let kept: Vec<i64> = mem
            .memories_page(&agent, None, 1_000)
            .unwrap()
            .rows
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(
            kept,
            ids[1_300..],
            "{kind}: the newest 200, whatever their importance"
        );
    }
    // No ceiling: all kept; the agents above did not lose another's memories.
    for i in 0..300 {
        mem.remember("agent_009", fact(&format!("Fact {i}."), 1, 0.0), 0)
            .unwrap();
    }
    assert_eq!(mem.memory_count("agent_009").unwrap(), 300);
    assert_eq!(db.query_i64("SELECT COUNT(*) FROM memories"), 3 * 200 + 300);
}

/// Another connection that adds to an agent's memories (another process on the same file)
/// makes the writer count them again: it does not trust what it counted before that commit,
/// and its next write leaves the agent within its ceiling.
#[test]
fn the_sqlite_ceiling_counts_again_after_another_connection_commits() {
    let db = SqliteDb::new();
    let mem = Memory::open(db.path()).unwrap();
    for i in 0..150 {
        mem.remember("agent_001", fact(&format!("Heard {i}."), 3, 0.0), 200)
            .unwrap();
    }
    mem.flush().unwrap();
    let other = rusqlite::Connection::open(db.path()).unwrap();
    for i in 0..150 {
        other
            .execute(
                "INSERT INTO memories (id, agent_id, kind, text, importance, about, sources,
                                       game_time, created_at)
                 VALUES (?1, 'agent_001', 'fact', ?2, 3, NULL, '[]', 0, '2026-01-01T00:00:00Z')",
                rusqlite::params![1_000_000 + i, format!("Planted {i}.")],
            )
            .unwrap();
    }
    assert_eq!(mem.memory_count("agent_001").unwrap(), 300);
    // It had counted 150 of its own: had it trusted that, 151 would pass the ceiling.
    mem.remember("agent_001", fact("Seen once.", 3, 0.0), 200)
        .unwrap();
    mem.flush().unwrap();
    assert_eq!(mem.memory_count("agent_001").unwrap(), 200);
}

/// At its ceiling, each new memory is stored and the least valuable one goes, with its vector:
/// the oldest of what happened to the agent with the lowest importance band first (what a
/// compaction would sum up first), then the rest; what it made of its memories (insights,
/// summaries) goes last, the least important and oldest first.
fn the_ceiling_forgets_what_compaction_would_sum_up_first_then_the_least_important<D: TestDb>() {
    let db = D::new();
    let mem = Memory::open(db.path()).unwrap();
    let agent = "agent_001";
    let drawn = |kind: MemoryKind, importance: u8, text: String| NewMemory {
        importance,
        ..NewMemory::new(kind, text)
    };
    // 200: 60 insights (importance 3 and 8), 40 important facts (9), 50 facts of importance 5,
    // 50 unimportant ones (2); the unimportant ones are the newest of what happened.
    let mut insights = Vec::new();
    for i in 0..60 {
        let importance = if i % 2 == 0 { 3 } else { 8 };
        let (id, _) = mem
            .remember(
                agent,
                drawn(MemoryKind::Insight, importance, format!("Insight {i}.")),
                200,
            )
            .unwrap();
        insights.push((id, importance));
    }
    let mut important = Vec::new();
    for i in 0..40 {
        important.push(
            mem.remember(agent, fact(&format!("Key fact {i}."), 9, 0.0), 200)
                .unwrap()
                .0,
        );
    }
    let mut middling = Vec::new();
    for i in 0..50 {
        middling.push(
            mem.remember(agent, fact(&format!("Fact {i}."), 5, 0.0), 200)
                .unwrap()
                .0,
        );
    }
    let mut small = Vec::new();
    for i in 0..50 {
        small.push(
            mem.remember(agent, fact(&format!("Small talk {i}."), 2, 0.0), 200)
                .unwrap()
                .0,
        );
    }
    mem.flush().unwrap();
    assert_eq!(mem.memory_count(agent).unwrap(), 200);
    let everything: Vec<(i64, Vec<f32>)> = insights
        .iter()
        .map(|(id, _)| *id)
        .chain(important.iter().copied())
        .chain(middling.iter().copied())
        .chain(small.iter().copied())
        .map(|id| (id, vec![1.0, 0.0]))
        .collect();
    mem.store_vectors(agent, "m", &everything);
    let stored = |mem: &Memory| -> Vec<i64> {
        mem.memories_page(agent, None, 1_000)
            .unwrap()
            .rows
            .iter()
            .map(|m| m.id)
            .collect()
    };
    // 10 new memories, each in a batch of its own (the least important kind there is): each
    // is kept, and the 10 oldest unimportant facts make room.
    let mut newest = Vec::new();
    for i in 0..10 {
        let (id, seq) = mem
            .remember(agent, fact(&format!("Crumbs {i}."), 1, 0.0), 200)
            .unwrap();
        mem.wait_committed(seq).unwrap();
        newest.push(id);
        assert!(stored(&mem).contains(&id), "the write being made lands");
    }
    let now = stored(&mem);
    assert_eq!(now.len(), 200);
    assert!(
        small[..10].iter().all(|id| !now.contains(id)),
        "the oldest small talk went"
    );
    assert!(small[10..].iter().all(|id| now.contains(id)));
    assert!(newest.iter().all(|id| now.contains(id)));
    // Their vectors went with them.
    assert_eq!(mem.memory_vectors(agent, "m").unwrap().len(), 190);
    // A batch of 150 reflections' insights: room for 50 of the 200 before. Everything that
    // happened to the agent goes first (what a compaction sums up: the importance bands up to
    // 4, up to 6, then the rest), then the 10 least important, oldest insights.
    let (drawn_ids, _) = mem
        .remember_all(
            agent,
            (0..150)
                .map(|i| drawn(MemoryKind::Insight, 6, format!("New insight {i}.")))
                .collect(),
            200,
        )
        .unwrap();
    mem.flush().unwrap();
    let now = stored(&mem);
    assert_eq!(now.len(), 200);
    assert!(
        drawn_ids.iter().all(|id| now.contains(id)),
        "the whole reflection is kept"
    );
    assert!(
        small
            .iter()
            .chain(&newest)
            .chain(&middling)
            .chain(&important)
            .all(|id| !now.contains(id))
    );
    let kept_insights: Vec<(i64, u8)> = insights
        .iter()
        .filter(|(id, _)| now.contains(id))
        .copied()
        .collect();
    let unimportant: Vec<(i64, u8)> = insights.iter().filter(|(_, i)| *i == 3).copied().collect();
    let important_insights = insights.iter().filter(|(_, i)| *i == 8);
    assert!(
        important_insights
            .clone()
            .all(|m| kept_insights.contains(m))
    );
    assert!(
        unimportant[..10].iter().all(|m| !kept_insights.contains(m)),
        "the oldest went"
    );
    assert!(unimportant[10..].iter().all(|m| kept_insights.contains(m)));
    assert_eq!(
        db.query_i64("SELECT COUNT(*) FROM memory_vectors"),
        50,
        "only the vectors of the memories kept"
    );
}
