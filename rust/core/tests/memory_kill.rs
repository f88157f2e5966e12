//! Kill-safety of the memory: a child process writes as fast as it can and reports which rows
//! are committed (`acked <n>`); the parent kills it mid-write (SIGKILL on Unix) and checks that
//! the database is intact and every acknowledged row is there. Two rounds on one database: the
//! second child opens what the first one left when it was killed, and a memory opened after
//! both hands out task ids above every stored one.
//!
//! On SQLite (a file) and, with the `postgres` feature, on PostgreSQL (a fresh database on the
//! test process's server: the child opens its URL).
//!
//! The child also forms memories as an agent does: facts, a reflection now and then (two
//! insights and a relationship superseding the last, in one write) and a compaction (a summary
//! written and what it sums up deleted, in one write). After the kills each is whole or absent:
//! two insights per relationship, one current relationship, and every fact either stored or in
//! a summary — never both, never neither.
//!
//! The child is this same test binary, re-executed with `AGENTS_KILL_CHILD_DB=<path or URL>`
//! (and `AGENTS_KILL_CHILD_AGENT=<agent id>`) and only the child test selected; without that
//! variable the child test does nothing.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agents_core::memory::{Memory, MemoryKind, NewConversation, NewMemory, StoredMemory};
use agents_core::runtime::AgentState;

/// Set (to the database path or URL) in the child process only.
const CHILD_ENV: &str = "AGENTS_KILL_CHILD_DB";
/// The agent whose memory the child fills (set by the parent; [`AGENT`] when missing).
const CHILD_AGENT_ENV: &str = "AGENTS_KILL_CHILD_AGENT";
/// The child test's name, for `--exact`.
const CHILD_TEST: &str = "kill_child_writes_until_killed";
/// The default agent whose memory the child fills.
const AGENT: &str = "agent_001";
/// Most rows the child writes (then it idles until killed).
const MAX_ROWS: usize = 2_000_000;
/// The parent kills the child once this many rows are acknowledged…
const ENOUGH_ACKED: u64 = 20_000;
/// …or this long after the first acknowledgement…
const MAX_WAIT: Duration = Duration::from_secs(3);
/// …which must come within this long of the start (the child starts and opens the database).
const FIRST_ACK_WITHIN: Duration = Duration::from_secs(60);
/// Children killed, one after the other, on one database.
const ROUNDS: usize = 2;

/// The child: writes `row <n>` lines from this thread (plus tasks and state changes), while a
/// follower thread prints `acked <n>` for the highest row whose sequence number is committed.
#[test]
fn kill_child_writes_until_killed() {
    let Some(db) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let agent = std::env::var(CHILD_AGENT_ENV).unwrap_or_else(|_| AGENT.to_string());
    let mem = Memory::open(&db).expect("child opens the database");
    let seqs: Arc<Vec<AtomicU64>> = Arc::new((0..MAX_ROWS).map(|_| AtomicU64::new(0)).collect());
    let written = Arc::new(AtomicUsize::new(0));

    {
        let mem = mem.clone();
        let seqs = seqs.clone();
        let written = written.clone();
        std::thread::spawn(move || {
            let mut acked: Option<usize> = None;
            loop {
                let committed = mem.committed_seq();
                let n = written.load(Ordering::Acquire);
                // Rows are written in order, so their sequence numbers grow: binary search for
                // how many have `seq <= committed`.
                let (mut lo, mut hi) = (0usize, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if seqs[mid].load(Ordering::Relaxed) <= committed {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                if lo > 0 && acked != Some(lo - 1) {
                    acked = Some(lo - 1);
                    println!("acked {}", lo - 1);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }

    let mut open_task = None;
    let mut facts = 0;
    let mut thought: Option<i64> = None;
    for n in 0..MAX_ROWS {
        let seq = mem.record_conversation(NewConversation {
            agent_id: agent.clone(),
            sender: agent.clone(),
            content: format!("row {n}"),
            recipient: Some("player".to_string()),
        });
        seqs[n].store(seq, Ordering::Relaxed);
        written.store(n + 1, Ordering::Release);
        if n % 100 == 0 {
            mem.record_state_change(&agent, AgentState::Idle, AgentState::Thinking);
            mem.record_state_change(&agent, AgentState::Thinking, AgentState::Idle);
            if let Some(id) = open_task.take() {
                mem.complete_task(id).expect("complete an open task");
            }
            let (task, _) = mem
                .assign_task(&agent, &format!("task {n}"))
                .expect("assign a task");
            open_task = Some(task.id);
            for _ in 0..5 {
                let fact = NewMemory {
                    importance: 2,
                    ..NewMemory::new(MemoryKind::Fact, format!("fact {facts}."))
                };
                mem.remember(&agent, fact, 0).expect("a fact");
                facts += 1;
            }
        }
        if n % 500 == 250 {
            let drawn = |kind, text: String| NewMemory {
                sources: vec![1],
                ..NewMemory::new(kind, text)
            };
            let (ids, _) = mem
                .remember_all(
                    &agent,
                    vec![
                        drawn(MemoryKind::Insight, format!("insight a {n}")),
                        drawn(MemoryKind::Insight, format!("insight b {n}")),
                        NewMemory {
                            about: Some("player".into()),
                            supersedes: thought.into_iter().collect(),
                            ..drawn(MemoryKind::Relationship, format!("thought {n}"))
                        },
                    ],
                    0,
                )
                .expect("a reflection");
            thought = Some(ids[2]);
        }
        if n % 1000 == 999 {
            let oldest = mem.compactable(&agent, 4, 64).expect("compactable");
            if !oldest.is_empty() {
                let summary = agents_core::mind::compaction::summary(&oldest);
                let ids = summary.sources.clone();
                mem.compact(&agent, summary, ids, 0).expect("a compaction");
            }
        }
    }
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Runs a child writing `agent`'s memory into `db`, kills it once enough rows are
/// acknowledged, and returns the highest acknowledged row.
fn run_and_kill(db: &OsStr, agent: &str) -> u64 {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, db)
        .env(CHILD_AGENT_ENV, agent)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().expect("child stdout");
    let (tx, rx) = mpsc::channel::<u64>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(n) = line.strip_prefix("acked ").and_then(|n| n.parse().ok())
                && tx.send(n).is_err()
            {
                break;
            }
        }
    });

    let mut deadline = Instant::now() + FIRST_ACK_WITHIN;
    let mut acked: Option<u64> = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(n) => {
                if acked.is_none() {
                    deadline = Instant::now() + MAX_WAIT;
                }
                acked = Some(acked.map_or(n, |a| a.max(n)));
                if n >= ENOUGH_ACKED {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    child.kill().expect("kill the child");
    let status = child.wait().expect("wait for the child");
    assert!(!status.success(), "the child was killed, not finished");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "SIGKILL");
    }
    // Lines printed before the kill acknowledge rows too.
    reader.join().expect("stdout reader");
    for n in rx.try_iter() {
        acked = Some(acked.map_or(n, |a| a.max(n)));
    }
    acked.expect("the child acknowledged rows before it was killed")
}

/// What the database holds of one agent after a kill.
struct Stored {
    /// Its conversation lines, in id order.
    contents: Vec<String>,
    /// Its state transitions.
    transitions: i64,
    /// Its tasks.
    tasks: i64,
}

/// Every acknowledged row of `agent` (`row 0..=acked`) is stored, in order, with the
/// transitions and tasks queued right after each hundredth row.
fn check(agent: &str, acked: u64, stored: &Stored) {
    let count = stored.contents.len() as u64;
    assert!(
        count > acked,
        "{agent}: {count} rows stored, but rows 0..={acked} were acknowledged"
    );
    for (n, content) in stored.contents.iter().enumerate().take(acked as usize + 1) {
        assert_eq!(content, &format!("row {n}"), "{agent}: row {n} in order");
    }
    // Rows 0, 100, 200, … each came with two transitions and a task, queued right after them.
    assert!(stored.transitions as u64 >= 2 * (acked / 100 + 1) - 2);
    assert!(stored.tasks as u64 >= acked / 100);
    eprintln!(
        "killed the child with {agent}'s rows 0..={acked} acknowledged; {count} rows, {} \
         transitions, {} tasks stored",
        stored.transitions, stored.tasks
    );
}

/// The agent the child of `round` writes for.
fn agent_of(round: usize) -> String {
    format!("agent_{:03}", round + 1)
}

/// A memory opened after the kills hands out a task id above every stored one (ids handed out
/// by a killed child are never handed out again), and reads every agent's rows.
fn reopen_after_the_kills(db: &OsStr, max_task_id: i64) {
    let mem = Memory::open(db).expect("open after the kills");
    let (task, seq) = mem.assign_task("agent_999", "after the kills").unwrap();
    assert!(
        task.id > max_task_id,
        "task {} after the kills; {max_task_id} stored",
        task.id
    );
    mem.wait_committed(seq).unwrap();
    for round in 0..ROUNDS {
        let lines = mem.recent_conversation(&agent_of(round), 1).unwrap();
        assert_eq!(lines.len(), 1, "{} has rows", agent_of(round));
        check_memories(&agent_of(round), &stream(&mem, &agent_of(round)));
    }
    mem.close().unwrap();
}

/// Every memory of `agent`, oldest first.
fn stream(mem: &Memory, agent: &str) -> Vec<StoredMemory> {
    let mut all = Vec::new();
    let mut before = None;
    loop {
        let page = mem.memories_page(agent, before, 500).unwrap();
        let mut rows = page.rows;
        rows.extend(all);
        all = rows;
        match page.next {
            Some(next) => before = Some(next),
            None => return all,
        }
    }
}

/// Reflections and compactions are whole after the kills (see the module's documentation).
fn check_memories(agent: &str, stream: &[StoredMemory]) {
    let of = |kind| stream.iter().filter(move |m| m.kind == kind);
    let (insights, thoughts) = (
        of(MemoryKind::Insight).count(),
        of(MemoryKind::Relationship).count(),
    );
    assert!(
        thoughts > 0,
        "{agent}: the child reflected before it was killed"
    );
    assert_eq!(insights, 2 * thoughts, "{agent}: every reflection is whole");
    let current: Vec<_> = of(MemoryKind::Relationship)
        .filter(|t| t.superseded_by.is_none())
        .collect();
    assert_eq!(
        current.len(),
        1,
        "{agent}: one current thought: {current:?}"
    );
    for t in of(MemoryKind::Relationship) {
        if let Some(by) = t.superseded_by {
            assert!(stream.iter().any(|m| m.id == by), "{agent}: {by} exists");
        }
    }
    let summaries: Vec<&StoredMemory> = of(MemoryKind::Summary).collect();
    assert!(
        !summaries.is_empty(),
        "{agent}: the child compacted before it was killed"
    );
    let facts: Vec<&StoredMemory> = of(MemoryKind::Fact).collect();
    let last = facts
        .iter()
        .filter_map(|f| {
            f.text
                .strip_prefix("fact ")?
                .trim_end_matches('.')
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0usize);
    for k in 0..=last {
        let text = format!("fact {k}.");
        let stored = facts.iter().any(|f| f.text == text);
        let summed = summaries
            .iter()
            .filter(|s| s.text.contains(&format!(" {text}")))
            .count();
        assert!(
            usize::from(stored) + summed == 1,
            "{agent}: {text} is stored ({stored}) or summed up ({summed} times), exactly once"
        );
    }
    for s in &summaries {
        assert!(
            s.sources
                .iter()
                .all(|id| stream.iter().all(|m| m.id != *id))
        );
    }
    eprintln!(
        "{agent}: {} reflections, {} summaries, {} facts stored after the kill",
        thoughts,
        summaries.len(),
        facts.len()
    );
}

/// The parent on SQLite: runs and kills the children, checks the file after each.
#[test]
fn killed_writer_keeps_every_acknowledged_row() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kill.db");
    for round in 0..ROUNDS {
        let agent = agent_of(round);
        let acked = run_and_kill(db.as_os_str(), &agent);

        let conn = rusqlite::Connection::open(&db).expect("open after the kill");
        let integrity: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity_check");
        assert_eq!(integrity, "ok");
        let mut stmt = conn
            .prepare("SELECT content FROM agent_conversations WHERE agent_id = ?1 ORDER BY id")
            .unwrap();
        let contents: Vec<String> = stmt
            .query_map([&agent], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let count = |sql: &str| -> i64 { conn.query_row(sql, [&agent], |r| r.get(0)).unwrap() };
        let stored = Stored {
            contents,
            transitions: count("SELECT COUNT(*) FROM agent_state_history WHERE agent_id = ?1"),
            tasks: count("SELECT COUNT(*) FROM agent_tasks WHERE agent_id = ?1"),
        };
        check(&agent, acked, &stored);
    }
    let max_task_id: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT COALESCE(MAX(id), 0) FROM agent_tasks", [], |r| {
            r.get(0)
        })
        .unwrap();
    reopen_after_the_kills(db.as_os_str(), max_task_id);
}

/// The rows of `sql` (with `agent` as `$1`, if it has a `$1`) on `url`, each mapped by `map`.
#[cfg(feature = "postgres")]
fn pg_query<T>(
    url: &str,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    map: impl Fn(&tokio_postgres::Row) -> T,
) -> Vec<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect to the test server");
        let driver = tokio::spawn(connection);
        let rows = client.query(sql, params).await.expect(sql);
        drop(client);
        let _ = driver.await;
        rows.iter().map(map).collect()
    })
}

/// The parent on PostgreSQL: the same rounds and checks on a fresh database of the test
/// process's server (started, and kept, by this test's thread).
#[cfg(feature = "postgres")]
#[test]
fn killed_postgres_writer_keeps_every_acknowledged_row() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let db = agents_testkit::postgres::database();
    let url = db.url.as_str();
    for round in 0..ROUNDS {
        let agent = agent_of(round);
        let acked = run_and_kill(OsStr::new(url), &agent);

        let contents: Vec<String> = pg_query(
            url,
            "SELECT content FROM agent_conversations WHERE agent_id = $1 ORDER BY id",
            &[&agent],
            |r| r.get(0),
        );
        let count = |sql: &str| -> i64 { pg_query(url, sql, &[&agent], |r| r.get(0))[0] };
        let stored = Stored {
            contents,
            transitions: count("SELECT COUNT(*) FROM agent_state_history WHERE agent_id = $1"),
            tasks: count("SELECT COUNT(*) FROM agent_tasks WHERE agent_id = $1"),
        };
        check(&agent, acked, &stored);
    }
    let max_task_id = pg_query(
        url,
        "SELECT COALESCE(MAX(id), 0) FROM agent_tasks",
        &[],
        |r| r.get::<_, i64>(0),
    )[0];
    reopen_after_the_kills(OsStr::new(url), max_task_id);
}
