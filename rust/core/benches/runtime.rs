//! Runtime benchmark: 10,000 agents — spawn time, resident memory per idle agent, CPU while they
//! all wait, and CPU with everyone deciding every 5 s.
//!
//! `cargo bench -p agents-core --bench runtime` (release). Prints a markdown table.

use std::time::{Duration, Instant};

use agents_core::bus::{Filter, Received};
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions, WorldBounds};

const AGENTS: usize = 10_000;

/// Resident set size in bytes (Linux `/proc/self/statm`, second field, pages of 4 KiB).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// CPU time (user + system) of this process, from `/proc/self/stat` (clock ticks of 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the `(comm)`; utime and stime are fields 14 and 15 overall.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn options(dir: &tempfile::TempDir, idle: f64) -> RuntimeOptions {
    RuntimeOptions {
        database: dir.path().join("bench.db"),
        idle_think_seconds: idle,
        bounds: WorldBounds::from_rect(0.0, 0.0, 1000.0, 1000.0).unwrap(),
        ..RuntimeOptions::default()
    }
}

fn spawn_all(rt: &Runtime) -> Duration {
    let started = Instant::now();
    for i in 0..AGENTS {
        let config = AgentConfig {
            initial_position: Some(agents_core::runtime::Position::new(
                (i % 100) as f64 * 10.0,
                (i / 100) as f64 * 10.0,
            )),
            ..AgentConfig::named(format!("Villager {i}"), "villager")
        };
        rt.spawn(config).expect("spawn");
    }
    started.elapsed()
}

fn main() {
    println!("| measurement | value |");
    println!("|---|---|");

    // 1. Spawn 10,000 agents that then wait (idle time far away).
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start(options(&dir, 3600.0)).unwrap();
    let mut events = rt.subscribe_with_capacity(Filter::all(), 4 * AGENTS);
    std::thread::sleep(Duration::from_millis(200));
    rt.flush().unwrap();
    let rss_before = rss_bytes();
    let spawn = spawn_all(&rt);
    let flushed = Instant::now();
    rt.flush().unwrap();
    let flush = flushed.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let mut spawned = 0;
    while let Some(r) = events.try_recv() {
        if let Received::Message(_) = r {
            spawned += 1;
        }
    }
    let rss_after = rss_bytes();
    let per_agent = (rss_after.saturating_sub(rss_before)) as f64 / AGENTS as f64;
    println!(
        "| spawn {AGENTS} agents (calls return) | {:.0} ms ({:.1} µs/agent) |",
        spawn.as_secs_f64() * 1e3,
        spawn.as_secs_f64() * 1e6 / AGENTS as f64
    );
    println!(
        "| … then every row committed (flush) | {:.0} ms more |",
        flush.as_secs_f64() * 1e3
    );
    println!("| AgentSpawned events received | {spawned} |");
    println!(
        "| resident memory per idle agent | {:.1} KiB ({:.1} MiB for {AGENTS}; RSS delta incl. SQLite page cache) |",
        per_agent / 1024.0,
        (rss_after - rss_before) as f64 / 1048576.0
    );

    // 2. CPU while all 10,000 wait.
    let window = Duration::from_secs(5);
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    std::thread::sleep(window);
    let cpu = cpu_time().saturating_sub(cpu0);
    println!(
        "| CPU while {AGENTS} agents wait ({:.0} s window) | {:.0} ms CPU = {:.2} % of one core |",
        window.as_secs_f64(),
        cpu.as_secs_f64() * 1e3,
        cpu.as_secs_f64() / t0.elapsed().as_secs_f64() * 100.0
    );
    drop(events);
    rt.shutdown(Duration::from_secs(10));
    drop(rt);

    // 3. With the default 5 s idle time: everyone decides every ~5 s.
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start(options(&dir, 5.0)).unwrap();
    let mut events = rt.subscribe_with_capacity(Filter::all(), 1 << 20);
    spawn_all(&rt);
    std::thread::sleep(Duration::from_secs(5));
    while events.try_recv().is_some() {}
    let window = Duration::from_secs(10);
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    let mut count = 0u64;
    while t0.elapsed() < window {
        match events.try_recv() {
            Some(_) => count += 1,
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    let cpu = cpu_time().saturating_sub(cpu0);
    println!(
        "| {AGENTS} agents deciding every 5 s: bus events | {:.0} /s |",
        count as f64 / t0.elapsed().as_secs_f64()
    );
    println!(
        "| … CPU | {:.0} % of one core (2 worker threads + SQLite writer) |",
        cpu.as_secs_f64() / t0.elapsed().as_secs_f64() * 100.0
    );
    drop(events);
    rt.shutdown(Duration::from_secs(10));
}
