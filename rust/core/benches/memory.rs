//! Sustained SQLite writes through [`Memory`]: conversation rows queued as fast as the callers
//! can from 1 and from 4 threads into a fresh database (WAL, `synchronous=NORMAL`, the same
//! kill-safe settings `tests/memory_kill.rs` checks), timed until `flush()` returns; the
//! caller-side cost of one `record_conversation`; the batch sizes the writer used; and the
//! latency from queueing one isolated write to its commit.
//!
//! Run with `cargo bench -p agents-core --bench memory` (release profile). Target from issue 3:
//! ≥ 50,000 conversation rows/s.

use std::time::{Duration, Instant};

use agents_core::memory::{Memory, NewConversation};

const ROWS: usize = 500_000;
const RUNS: usize = 3;
const TARGET_ROWS_PER_S: f64 = 50_000.0;
const LATENCY_SAMPLES: usize = 1_000;

/// One run's measurements.
struct Run {
    rows_per_s: f64,
    queue_ns_per_call: f64,
    batches: u64,
    largest_batch: u64,
}

fn lines(thread: usize, count: usize) -> Vec<NewConversation> {
    let agent = format!("agent_{:03}", thread + 1);
    (0..count)
        .map(|n| NewConversation {
            agent_id: agent.clone(),
            sender: agent.clone(),
            content: format!(
                "row {n}: I'll carry the planks to the bridge, then help with the paint."
            ),
            recipient: Some("agent_099".to_string()),
        })
        .collect()
}

fn run(threads: usize) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.db");
    let mem = Memory::open(&path).expect("open");
    let per_thread = ROWS / threads;
    let prepared: Vec<Vec<NewConversation>> = (0..threads).map(|t| lines(t, per_thread)).collect();

    let start = Instant::now();
    let queue_times: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = prepared
            .into_iter()
            .map(|batch| {
                let mem = &mem;
                s.spawn(move || {
                    let t0 = Instant::now();
                    for line in batch {
                        std::hint::black_box(mem.record_conversation(line));
                    }
                    t0.elapsed()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    mem.flush().expect("flush");
    let elapsed = start.elapsed();
    let stats = mem.writer_stats();
    mem.close().expect("close");

    let conn = rusqlite::Connection::open(&path).expect("reopen");
    let stored: i64 = conn
        .query_row("SELECT COUNT(*) FROM agent_conversations", [], |r| r.get(0))
        .expect("count");
    assert_eq!(stored as usize, per_thread * threads, "every row stored");

    let queue_ns = queue_times.iter().map(Duration::as_nanos).sum::<u128>() as f64
        / (per_thread * threads) as f64;
    Run {
        rows_per_s: (per_thread * threads) as f64 / elapsed.as_secs_f64(),
        queue_ns_per_call: queue_ns,
        batches: stats.batches,
        largest_batch: stats.largest_batch,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Queue one write, wait for its commit, repeat: the time a caller waits for "durable".
fn commit_latency() -> (f64, f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mem = Memory::open(dir.path().join("latency.db")).expect("open");
    let mut samples: Vec<f64> = (0..LATENCY_SAMPLES)
        .map(|n| {
            let t0 = Instant::now();
            let seq = mem.record_conversation(NewConversation {
                agent_id: "agent_001".to_string(),
                sender: "agent_001".to_string(),
                content: format!("isolated line {n}"),
                recipient: None,
            });
            mem.wait_committed(seq).expect("commit");
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    let p = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (p(0.5), p(0.99))
}

fn main() {
    println!(
        "SQLite memory: {ROWS} conversation rows into a fresh database, median of {RUNS} runs \
         (WAL, synchronous=NORMAL)\n"
    );
    println!(
        "| writers | rows/s (queue → flush) | target | caller ns/record_conversation | batches | avg batch | largest batch |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut all_ok = true;
    for threads in [1, 4] {
        let runs: Vec<Run> = (0..RUNS).map(|_| run(threads)).collect();
        let rate = median(runs.iter().map(|r| r.rows_per_s).collect());
        let ns = median(runs.iter().map(|r| r.queue_ns_per_call).collect());
        let batches = median(runs.iter().map(|r| r.batches as f64).collect());
        let largest = runs.iter().map(|r| r.largest_batch).max().unwrap_or(0);
        let ok = rate >= TARGET_ROWS_PER_S;
        all_ok &= ok;
        println!(
            "| {threads} | {rate:.0} | ≥ {TARGET_ROWS_PER_S:.0} {} | {ns:.0} | {batches:.0} | {:.0} | {largest} |",
            if ok { "✓" } else { "✗" },
            ROWS as f64 / batches.max(1.0),
        );
    }
    let (p50, p99) = commit_latency();
    println!(
        "\nIsolated write → committed (wait_committed), {LATENCY_SAMPLES} samples: \
         p50 {p50:.0} µs, p99 {p99:.0} µs"
    );
    if !all_ok {
        println!("\nBELOW TARGET");
    }
}
