//! PostgreSQL restarted under traffic: a memory keeps writing
//! conversation rows while the server it writes to shuts down, stays down for a while and
//! starts again on the same data and port. The writer reconnects and finishes its batch once:
//! afterwards every row written — the ones acknowledged before the restart, and the ones queued
//! while the server was down — is stored exactly once. A PostgreSQL server of this test's own
//! (not the test process's shared one, which other tests use), real time.

#![cfg(feature = "postgres")]

use std::collections::BTreeSet;
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agents_core::memory::{Memory, NewConversation};
use agents_testkit::postgres::{query_text, start_in};

/// The agent whose conversation is written.
const AGENT: &str = "agent_001";
/// Rows acknowledged before the server is stopped.
const BEFORE: usize = 300;
/// How long the server stays down (the writer retries for 30 s).
const DOWN: Duration = Duration::from_secs(3);
/// Rows acknowledged after the restart, beyond those written before it, before the writes stop.
const AFTER: usize = 300;
/// The most rows written in all.
const MAX_ROWS: usize = 100_000;

/// Stops the server as `pg_ctl stop -m fast` does (SIGINT) and waits for it to end.
fn stop(server: &mut Child) {
    let status = Command::new("kill")
        .args(["-INT", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    server.wait().unwrap();
}

/// Waits (at most a minute) until `check` holds.
fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_postgresql_restart_mid_traffic_loses_and_repeats_no_write() {
    let dir = tempfile::tempdir().unwrap();
    let port = agents_testkit::free_port();
    let mut server = start_in(dir.path(), port, false).unwrap();
    let url = format!("postgres://agents@127.0.0.1:{port}/postgres");
    let mem = Memory::open(&url).unwrap();

    // The writer: one row a millisecond, each row's sequence number kept.
    let seqs: Arc<Vec<AtomicU64>> = Arc::new((0..MAX_ROWS).map(|_| AtomicU64::new(0)).collect());
    let written = Arc::new(AtomicUsize::new(0));
    let stop_writing = Arc::new(AtomicBool::new(false));
    let writer = {
        let (mem, seqs, written, stop_writing) = (
            mem.clone(),
            seqs.clone(),
            written.clone(),
            stop_writing.clone(),
        );
        std::thread::spawn(move || {
            for n in 0..MAX_ROWS {
                if stop_writing.load(Ordering::Acquire) {
                    break;
                }
                let seq = mem.record_conversation(NewConversation {
                    agent_id: AGENT.to_string(),
                    sender: AGENT.to_string(),
                    content: format!("row {n}"),
                    recipient: Some("player".to_string()),
                });
                assert!(seq > 0, "row {n} was refused");
                seqs[n].store(seq, Ordering::Release);
                written.store(n + 1, Ordering::Release);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    // How many rows are acknowledged (their sequence number committed); rows are written in
    // order, so the acknowledged ones are a prefix.
    let acked = || {
        let committed = mem.committed_seq();
        let n = written.load(Ordering::Acquire);
        (0..n)
            .take_while(|&i| seqs[i].load(Ordering::Acquire) <= committed)
            .count()
    };

    eventually("rows acknowledged before the restart", || acked() >= BEFORE);
    stop(&mut server);
    let acked_before = acked();
    let written_at_stop = written.load(Ordering::Acquire);
    std::thread::sleep(DOWN);
    let queued_while_down = written.load(Ordering::Acquire) - written_at_stop;
    assert!(
        acked() <= written_at_stop,
        "nothing is acknowledged while the server is down"
    );
    let mut server = start_in(dir.path(), port, false).unwrap();
    eventually("rows acknowledged after the restart", || {
        acked() >= written_at_stop + queued_while_down + AFTER
    });
    stop_writing.store(true, Ordering::Release);
    writer.join().unwrap();
    mem.flush().unwrap();
    let total = written.load(Ordering::Acquire);
    assert_eq!(acked(), total, "every row is acknowledged after the flush");

    let rows: Vec<String> = query_text(
        &url,
        &format!("SELECT content FROM agent_conversations WHERE agent_id = '{AGENT}' ORDER BY id"),
    )
    .unwrap()
    .into_iter()
    .map(|mut r| r.remove(0).unwrap())
    .collect();
    let distinct: BTreeSet<&str> = rows.iter().map(String::as_str).collect();
    assert_eq!(
        distinct.len(),
        rows.len(),
        "{} rows written twice",
        rows.len() - distinct.len()
    );
    let lost: Vec<usize> = (0..total)
        .filter(|n| !distinct.contains(format!("row {n}").as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {total} rows lost (acknowledged before the restart: {acked_before}, queued \
         while down: {queued_while_down}); first: {:?}",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
    assert_eq!(rows.len(), total);
    assert!(
        queued_while_down > 0,
        "writes went on while the server was down"
    );
    drop(mem);
    stop(&mut server);
}
