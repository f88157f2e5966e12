//! Kill-safety of the SQLite memory: a child process writes as fast as it can and reports which
//! rows are committed (`acked <n>`); the parent kills it mid-write (SIGKILL on Unix) and checks
//! that the file is intact and every acknowledged row is there.
//!
//! The child is this same test binary, re-executed with `AGENTS_KILL_CHILD_DB=<path>` and only
//! the child test selected; without that variable the child test does nothing.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agents_core::memory::{Memory, NewConversation};
use agents_core::runtime::AgentState;

/// Set (to the database path) in the child process only.
const CHILD_ENV: &str = "AGENTS_KILL_CHILD_DB";
/// The child test's name, for `--exact`.
const CHILD_TEST: &str = "kill_child_writes_until_killed";
/// The agent whose memory the child fills.
const AGENT: &str = "agent_001";
/// Most rows the child writes (then it idles until killed).
const MAX_ROWS: usize = 2_000_000;
/// The parent kills the child once this many rows are acknowledged…
const ENOUGH_ACKED: u64 = 20_000;
/// …or after this long.
const MAX_WAIT: Duration = Duration::from_secs(3);

/// The child: writes `row <n>` lines from this thread (plus tasks and state changes), while a
/// follower thread prints `acked <n>` for the highest row whose sequence number is committed.
#[test]
fn kill_child_writes_until_killed() {
    let Some(db) = std::env::var_os(CHILD_ENV) else {
        return;
    };
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
    for n in 0..MAX_ROWS {
        let seq = mem.record_conversation(NewConversation {
            agent_id: AGENT.to_string(),
            sender: AGENT.to_string(),
            content: format!("row {n}"),
            recipient: Some("player".to_string()),
        });
        seqs[n].store(seq, Ordering::Relaxed);
        written.store(n + 1, Ordering::Release);
        if n % 100 == 0 {
            mem.record_state_change(AGENT, AgentState::Idle, AgentState::Thinking);
            mem.record_state_change(AGENT, AgentState::Thinking, AgentState::Idle);
            if let Some(id) = open_task.take() {
                mem.complete_task(id).expect("complete an open task");
            }
            let (task, _) = mem
                .assign_task(AGENT, &format!("task {n}"))
                .expect("assign a task");
            open_task = Some(task.id);
        }
    }
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The parent: runs the child, kills it once enough rows are acknowledged, checks the file.
#[test]
fn killed_writer_keeps_every_acknowledged_row() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("kill.db");
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &db)
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

    let deadline = Instant::now() + MAX_WAIT;
    let mut acked: Option<u64> = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(n) => {
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
    let acked = acked.expect("the child acknowledged rows before it was killed");

    let conn = rusqlite::Connection::open(&db).expect("open after the kill");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(integrity, "ok");
    let mut stmt = conn
        .prepare("SELECT content FROM agent_conversations WHERE agent_id = ?1 ORDER BY id")
        .unwrap();
    let contents: Vec<String> = stmt
        .query_map([AGENT], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let stored = contents.len() as u64;
    assert!(
        stored > acked,
        "{stored} rows stored, but rows 0..={acked} were acknowledged"
    );
    for (n, content) in contents.iter().enumerate().take(acked as usize + 1) {
        assert_eq!(content, &format!("row {n}"), "row {n} in order");
    }
    let transitions: i64 = conn
        .query_row("SELECT COUNT(*) FROM agent_state_history", [], |r| r.get(0))
        .unwrap();
    let tasks: i64 = conn
        .query_row("SELECT COUNT(*) FROM agent_tasks", [], |r| r.get(0))
        .unwrap();
    // Rows 0, 100, 200, … each came with two transitions and a task, queued right after them.
    assert!(transitions as u64 >= 2 * (acked / 100 + 1) - 2);
    assert!(tasks as u64 >= acked / 100);
    eprintln!(
        "killed the child with rows 0..={acked} acknowledged; {stored} rows, {transitions} \
         transitions, {tasks} tasks on disk"
    );
}
