//! Sustained writes through [`Memory`]: conversation rows queued as fast as the callers can from
//! 1 and from 4 threads into a fresh database, timed until `flush()` returns (every row
//! acknowledged, that is committed); the caller-side cost of one `record_conversation`; the
//! batch sizes the writer used; and the latency from queueing one isolated write to its commit.
//!
//! On each backend, with the same promise (an acknowledged row survives a kill of the process):
//! SQLite in WAL mode with `synchronous=NORMAL`; PostgreSQL (with the `postgres` feature) on a
//! server this bench starts on loopback with `synchronous_commit = on`, once with `fsync = off`
//! (like SQLite's NORMAL, a power loss may lose the last commits) and once with `fsync = on`
//! (PostgreSQL's default: not even that).
//!
//! Run with `cargo bench -p agents-core --bench memory` (release profile; add
//! `--features postgres` for PostgreSQL). Target: ≥ 50,000 conversation rows/s on
//! SQLite; PostgreSQL's rows/s are reported against SQLite's.

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

/// Where a run writes: a fresh database of one backend.
trait Backend {
    /// A label for the table.
    fn name(&self) -> String;
    /// Rows per run.
    fn rows(&self) -> usize;
    /// A fresh database: what `Memory::open` takes, and a guard to keep until the run ends.
    fn fresh(&self) -> (String, Box<dyn std::any::Any>);
    /// The rows of `agent_conversations` in the database at `location`.
    fn count(&self, location: &str) -> i64;
}

struct Sqlite;

impl Backend for Sqlite {
    fn name(&self) -> String {
        "SQLite (WAL, synchronous=NORMAL)".to_string()
    }
    fn rows(&self) -> usize {
        ROWS
    }
    fn fresh(&self) -> (String, Box<dyn std::any::Any>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bench.db").display().to_string();
        (path, Box::new(dir))
    }
    fn count(&self, location: &str) -> i64 {
        rusqlite::Connection::open(location)
            .expect("reopen")
            .query_row("SELECT COUNT(*) FROM agent_conversations", [], |r| r.get(0))
            .expect("count")
    }
}

#[cfg(feature = "postgres")]
struct Postgres {
    base_url: String,
    fsync: bool,
    databases: std::sync::atomic::AtomicU32,
}

#[cfg(feature = "postgres")]
impl Postgres {
    /// A server of its own on a free port (stopped when the bench ends).
    fn start(fsync: bool, dir: &std::path::Path) -> (Postgres, std::process::Child) {
        let port = agents_testkit::free_port();
        let child = agents_testkit::postgres::start_in(dir, port, fsync).expect("postgres");
        let backend = Postgres {
            base_url: format!("postgres://agents@127.0.0.1:{port}"),
            fsync,
            databases: std::sync::atomic::AtomicU32::new(0),
        };
        (backend, child)
    }
}

#[cfg(feature = "postgres")]
impl Backend for Postgres {
    fn name(&self) -> String {
        format!(
            "PostgreSQL (loopback, synchronous_commit=on, fsync={})",
            if self.fsync { "on" } else { "off" }
        )
    }
    fn rows(&self) -> usize {
        ROWS / 2
    }
    fn fresh(&self) -> (String, Box<dyn std::any::Any>) {
        let n = self
            .databases
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("bench_{n}");
        agents_testkit::postgres::execute(
            &format!("{}/postgres", self.base_url),
            &format!("CREATE DATABASE {name}"),
        )
        .expect("create database");
        (format!("{}/{name}", self.base_url), Box::new(()))
    }
    fn count(&self, location: &str) -> i64 {
        agents_testkit::postgres::query_i64(location, "SELECT COUNT(*) FROM agent_conversations")
            .expect("count")
    }
}

fn run(backend: &dyn Backend, threads: usize) -> Run {
    let (location, _guard) = backend.fresh();
    let mem = Memory::open(&location).expect("open");
    let per_thread = backend.rows() / threads;
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

    let stored = backend.count(&location);
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
fn commit_latency(backend: &dyn Backend) -> (f64, f64) {
    let (location, _guard) = backend.fresh();
    let mem = Memory::open(&location).expect("open");
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

/// The table of one backend; returns whether SQLite's target was met (always true elsewhere).
fn report(backend: &dyn Backend, target: bool) -> bool {
    println!(
        "\n{}: {} conversation rows into a fresh database, median of {RUNS} runs\n",
        backend.name(),
        backend.rows()
    );
    println!(
        "| writers | rows/s (queue → flush) | target | caller ns/record_conversation | batches | avg batch | largest batch |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut all_ok = true;
    for threads in [1, 4] {
        let runs: Vec<Run> = (0..RUNS).map(|_| run(backend, threads)).collect();
        let rate = median(runs.iter().map(|r| r.rows_per_s).collect());
        let ns = median(runs.iter().map(|r| r.queue_ns_per_call).collect());
        let batches = median(runs.iter().map(|r| r.batches as f64).collect());
        let largest = runs.iter().map(|r| r.largest_batch).max().unwrap_or(0);
        let ok = !target || rate >= TARGET_ROWS_PER_S;
        all_ok &= ok;
        let verdict = if !target {
            "—".to_string()
        } else {
            format!("≥ {TARGET_ROWS_PER_S:.0} {}", if ok { "✓" } else { "✗" })
        };
        println!(
            "| {threads} | {rate:.0} | {verdict} | {ns:.0} | {batches:.0} | {:.0} | {largest} |",
            backend.rows() as f64 / batches.max(1.0),
        );
    }
    let (p50, p99) = commit_latency(backend);
    println!(
        "\nIsolated write → committed (wait_committed), {LATENCY_SAMPLES} samples: \
         p50 {p50:.0} µs, p99 {p99:.0} µs"
    );
    all_ok
}

fn main() {
    let all_ok = report(&Sqlite, true);
    #[cfg(feature = "postgres")]
    {
        for fsync in [false, true] {
            let dir = tempfile::tempdir().expect("tempdir");
            let (backend, mut child) = Postgres::start(fsync, dir.path());
            report(&backend, false);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    if !all_ok {
        println!("\nBELOW TARGET");
    }
}
