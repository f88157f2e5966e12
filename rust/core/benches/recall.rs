//! The memory stream at scale, on SQLite:
//!
//! 1. **Recall at 10,000 memories.** One agent's stream of 10,000 memories (lines heard and said
//!    by a dozen speakers about a village's days, with the place, thing and number words a town
//!    talks about), then 2,000 recalls with queries built from the same vocabulary, as a decision
//!    makes them ([`agents_core::mind::recall::recall`]: the best 32 keyword matches and the
//!    newest 16, scored and selected). Target: p99 ≤ 2 ms (keyword). Then the same recalls
//!    hybrid: every memory given a 768-number vector (the fake provider's hashed bag of words,
//!    made in-process), the agent's vectors held in a [`VectorIndex`] as recall holds them, each
//!    query's vector made beforehand (the embeddings endpoint's answer time is not recall's),
//!    and each recall also compares the query with all 10,000 vectors and fuses the two.
//!    Target: p99 ≤ 5 ms (hybrid).
//! 2. **1,000 agents × 1,000 memories.** A million memories queued as fast as one thread can
//!    into a fresh file, timed until every one is committed; the file's size after a checkpoint.
//!    Each write keeps its agent within the runtime's default ceiling (5,000), as the runtime's
//!    writes do.
//!
//! Run with `cargo bench -p agents-core --bench recall` (release profile). `RECALL_BENCH_AGENTS`
//! lowers the agent count of part 2 (default 1,000) for a quick look; `RECALL_BENCH_CEILING`
//! sets part 2's ceiling (0: none).

use std::time::{Duration, Instant};

use agents_core::memory::{Memory, MemoryKind, NewMemory};
use agents_core::mind::vectors::{Query, VectorIndex};
use agents_core::mind::{Cue, Meaning, MemorySettings, recall};

const STREAM: usize = 10_000;
const QUERIES: usize = 2_000;
const TARGET_P99: Duration = Duration::from_millis(2);
const TARGET_HYBRID_P99: Duration = Duration::from_millis(5);
const DIMENSION: usize = 768;
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
                0,
            )
            .expect("remember");
    }
    memory.flush().expect("flush");
    let queries: Vec<String> = (0..QUERIES)
        .map(|_| {
            format!(
                "{}, where is the {}? Was it near the {}?",
                rng.pick(&SPEAKERS),
                rng.pick(&THINGS),
                rng.pick(&PLACES)
            )
        })
        .collect();
    let keyword = recalls(&memory, &queries, |_| None);
    report("keyword", &keyword, TARGET_P99);

    // Every memory's vector, stored as the embedder stores them.
    let page = memory
        .unembedded("agent_001", "fake", 0, STREAM)
        .expect("memories");
    let vectors: Vec<(i64, Vec<f32>)> = page
        .iter()
        .map(|(id, text)| (*id, agents_fakellm::fake_embedding(text, DIMENSION)))
        .collect();
    for chunk in vectors.chunks(256) {
        memory.store_vectors("agent_001", "fake", chunk);
    }
    memory.flush().expect("flush");
    let index = VectorIndex::new("fake", 256 << 20);
    let held = index.agent("agent_001", &memory).expect("vectors");
    assert_eq!(held.read().len(), STREAM);
    let query_vectors: Vec<Query> = queries
        .iter()
        .map(|q| Query::new(&agents_fakellm::fake_embedding(q, DIMENSION)))
        .collect();
    // The part of it that compares the query with every vector.
    let started = Instant::now();
    for q in &query_vectors {
        std::hint::black_box(held.read().nearest(q, 32));
    }
    let scan = micros(started.elapsed()) / query_vectors.len() as f64;
    let hybrid = recalls(&memory, &queries, |n| {
        Some(Meaning {
            vectors: held.clone(),
            queries: vec![query_vectors[n].clone()],
        })
    });
    report(
        &format!("hybrid, {DIMENSION} dimensions, 8-bit held"),
        &hybrid,
        TARGET_HYBRID_P99,
    );
    println!("of which comparing the query with all {STREAM} vectors: {scan:.0} µs on average");
    memory.close().expect("close");
}

/// Times one recall per query; returns the sorted times and the memories recalled per recall.
fn recalls(
    memory: &Memory,
    queries: &[String],
    meaning: impl Fn(usize) -> Option<Meaning>,
) -> (Vec<Duration>, f64) {
    let settings = MemorySettings::default();
    let mut times = Vec::with_capacity(queries.len());
    let mut recalled = 0usize;
    for (n, query) in queries.iter().enumerate() {
        let cue = Cue {
            query: query.clone(),
            now: (STREAM as f64) * 6.0 + n as f64,
            in_view: Vec::new(),
            shown: Vec::new(),
            lines: Vec::new(),
            wait_for_writes: false,
            // Who speaks: what the agent thinks of them is looked up too.
            people: vec!["player".to_string()],
            meaning: meaning(n),
        };
        let started = Instant::now();
        let found = recall::recall(memory, "agent_001", &cue, &settings).expect("recall");
        times.push(started.elapsed());
        recalled += found.len();
    }
    times.sort();
    (times, recalled as f64 / queries.len() as f64)
}

fn report(what: &str, (times, per_recall): &(Vec<Duration>, f64), target: Duration) {
    let p99 = percentile(times, 0.99);
    println!("\n## Recall at {STREAM} memories of one agent (SQLite, {what})\n");
    println!("| recalls | p50 | p90 | p99 | max | memories per recall |");
    println!("|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {:.0} µs | {:.0} µs | **{:.0} µs** | {:.0} µs | {:.1} |",
        times.len(),
        micros(percentile(times, 0.5)),
        micros(percentile(times, 0.9)),
        micros(p99),
        micros(*times.last().unwrap()),
        per_recall
    );
    println!(
        "\ntarget p99 ≤ {} ms: {}",
        target.as_millis(),
        if p99 <= target { "met" } else { "MISSED" }
    );
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
    // Each write keeps its agent within the runtime's default ceiling, as the runtime's do
    // (`RECALL_BENCH_CEILING=0`: none).
    let ceiling: usize = std::env::var("RECALL_BENCH_CEILING")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(agents_core::mind::MemorySettings::default().max_memories);
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
                ceiling,
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
