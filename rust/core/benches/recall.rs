//! The memory stream at scale, on SQLite:
//!
//! 1. **Recall at 10,000 memories.** One agent's stream of 10,000 memories (lines heard and said
//!    by a dozen speakers about a village's days, with the place, thing and number words a town
//!    talks about), then 2,000 recalls with queries built from the same vocabulary, as a decision
//!    makes them ([`agents_core::mind::recall::recall`]: the best 32 keyword matches and the
//!    newest 16, scored and selected). Target: p99 ≤ 2 ms (keyword).
//! 2. **1,000 agents × 1,000 memories.** A million memories queued as fast as one thread can
//!    into a fresh file, timed until every one is committed; the file's size after a checkpoint.
//!
//! Run with `cargo bench -p agents-core --bench recall` (release profile). `RECALL_BENCH_AGENTS`
//! lowers the agent count of part 2 (default 1,000) for a quick look.

use std::time::{Duration, Instant};

use agents_core::memory::{Memory, MemoryKind, NewMemory};
use agents_core::mind::{Cue, MemorySettings, recall};

const STREAM: usize = 10_000;
const QUERIES: usize = 2_000;
const TARGET_P99: Duration = Duration::from_millis(2);
const PER_AGENT: usize = 1_000;

const SPEAKERS: [&str; 12] = [
    "Ivy", "Tom", "Mira", "Bram", "Tess", "Olek", "Ada", "Pell", "Rook", "Wren", "Sage", "Dell",
];
const THINGS: [&str; 24] = [
    "key", "lantern", "bread", "wheat", "hinge", "gate", "well", "cart", "rope", "ladder",
    "barrel", "map", "letter", "coin", "sword", "boots", "cloak", "basket", "candle", "anvil",
    "apple", "horse", "bell", "net",
];
const PLACES: [&str; 16] = [
    "cellar", "mill", "bakery", "forge", "square", "chapel", "tavern", "bridge", "stable",
    "orchard", "harbour", "market", "tower", "barn", "garden", "inn",
];
const FILLER: [&str; 8] = [
    "Lovely weather for it",
    "I will be there before noon",
    "The festival is coming along",
    "Nobody tells me anything these days",
    "We should ask the mayor",
    "That reminds me of last winter",
    "Keep it between us",
    "You never know with the river",
];

/// A deterministic generator (xorshift), so every run stores and asks the same things.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

fn memory_text(rng: &mut Rng) -> (MemoryKind, String) {
    let speaker = rng.pick(&SPEAKERS);
    let line = format!(
        "The {} is in the {} by the {}. {}.",
        rng.pick(&THINGS),
        rng.pick(&PLACES),
        rng.pick(&THINGS),
        rng.pick(&FILLER)
    );
    if rng.next().is_multiple_of(3) {
        (MemoryKind::Said, format!("I said to {speaker}: \"{line}\""))
    } else {
        (
            MemoryKind::Heard,
            format!("{speaker} said to me: \"{line}\""),
        )
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

fn recall_at_ten_thousand(dir: &std::path::Path) {
    let memory = Memory::open(dir.join("recall.db")).expect("open");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in 0..STREAM {
        let (kind, text) = memory_text(&mut rng);
        let importance = 1 + (rng.next() % 10) as u8;
        memory
            .remember(
                "agent_001",
                NewMemory {
                    importance,
                    game_time: n as f64 * 6.0,
                    ..NewMemory::new(kind, text)
                },
            )
            .expect("remember");
    }
    memory.flush().expect("flush");
    let settings = MemorySettings::default();
    let mut times = Vec::with_capacity(QUERIES);
    let mut recalled = 0usize;
    for n in 0..QUERIES {
        let query = format!(
            "{}, where is the {}? Was it near the {}?",
            rng.pick(&SPEAKERS),
            rng.pick(&THINGS),
            rng.pick(&PLACES)
        );
        let cue = Cue {
            query,
            now: (STREAM as f64) * 6.0 + n as f64,
            in_view: Vec::new(),
            shown: Vec::new(),
            lines: Vec::new(),
            wait_for_writes: false,
            // Who speaks: what the agent thinks of them is looked up too.
            people: vec!["player".to_string()],
        };
        let started = Instant::now();
        let found = recall::recall(&memory, "agent_001", &cue, &settings).expect("recall");
        times.push(started.elapsed());
        recalled += found.len();
    }
    times.sort();
    let p99 = percentile(&times, 0.99);
    println!("\n## Recall at {STREAM} memories of one agent (SQLite, keyword)\n");
    println!("| recalls | p50 | p90 | p99 | max | memories per recall |");
    println!("|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {QUERIES} | {:.0} µs | {:.0} µs | **{:.0} µs** | {:.0} µs | {:.1} |",
        micros(percentile(&times, 0.5)),
        micros(percentile(&times, 0.9)),
        micros(p99),
        micros(*times.last().unwrap()),
        recalled as f64 / QUERIES as f64
    );
    println!(
        "\ntarget p99 ≤ {} ms: {}",
        TARGET_P99.as_millis(),
        if p99 <= TARGET_P99 { "met" } else { "MISSED" }
    );
    memory.close().expect("close");
}

fn a_thousand_agents(dir: &std::path::Path) {
    let agents: usize = std::env::var("RECALL_BENCH_AGENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let path = dir.join("crowd.db");
    let memory = Memory::open(&path).expect("open");
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let texts: Vec<(MemoryKind, String)> = (0..4_096).map(|_| memory_text(&mut rng)).collect();
    let total = agents * PER_AGENT;
    let started = Instant::now();
    for n in 0..total {
        let agent = format!("agent_{:03}", n % agents + 1);
        let (kind, text) = &texts[n % texts.len()];
        memory
            .remember(
                &agent,
                NewMemory {
                    importance: 3,
                    game_time: (n / agents) as f64,
                    ..NewMemory::new(*kind, text.clone())
                },
            )
            .expect("remember");
    }
    memory.flush().expect("flush");
    let elapsed = started.elapsed();
    let stats = memory.writer_stats();
    memory.close().expect("close");
    let bytes: u64 = ["", "-wal"]
        .iter()
        .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", path.display())).ok())
        .map(|m| m.len())
        .sum();
    println!("\n## {agents} agents × {PER_AGENT} memories (SQLite, one writer thread)\n");
    println!(
        "| memories | committed in | memories/s | batches | largest batch | file size | bytes per memory |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {total} | {:.1} s | **{:.0}** | {} | {} | {:.0} MB | {:.0} |",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        stats.batches,
        stats.largest_batch,
        bytes as f64 / 1e6,
        bytes as f64 / total as f64
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    recall_at_ten_thousand(dir.path());
    a_thousand_agents(dir.path());
}
