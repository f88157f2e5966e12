//! Campaign GM tool benchmarks, on a campaign of 1,000 areas built with
//! `map_generate` (33 layers of 30 and one of 8 on the 2-area starter map, child and root layers
//! alternating, so each child layer's parent and its areas are linked both ways):
//!
//! - `move`: one call through `Campaign::run_calls` (allowlist, the actor's state, arguments,
//!   the move, the applied action with its timestamp), alternating between `area_001` and the
//!   entry of its child layer; 20,000 calls after 2,000 of warm-up.
//! - `hp_delta`: one call, alternating −1 and +1 on the turn actor; 20,000 after 2,000.
//! - `map_generate` of size 30 (alternately a root layer and a child layer, a new seed each
//!   time), each on a fresh clone of the 1,000-area campaign (the clone is not timed); 2,000 after
//!   200.
//! - `file::save` of the 1,000-area campaign to a temporary file (the check, the pretty JSON,
//!   the write, fsync, the rename, the directory fsync): a turn's save; 300 after 20.
//!
//! `cargo bench -p agents-core --bench campaign [-- move|map_generate|save]` (release; `move`
//! runs `hp_delta` too). Prints a markdown table; the "of which" rows break the save down, the
//! "for comparison" rows time whole-map work the measured paths avoid.
//! Targets: one tool call (move, hp_delta) p50 ≤ 20 µs, map_generate size 30 ≤ 200 µs, save
//! ≤ 5 ms.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agents_core::campaign::{Campaign, file};
use agents_core::contract::ToolCall;
use serde_json::{Value, json};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn show(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// Runs one call for the active actor and panics unless it was applied.
fn apply(c: &mut Campaign, call: &ToolCall) -> Value {
    let out = c.run_calls(std::slice::from_ref(call), None).unwrap();
    assert!(
        out.tool_feedback.is_none(),
        "{call:?} failed: {:?}",
        out.tool_feedback
    );
    out.applied_actions[0].result.clone()
}

/// The 1,000-area campaign: layers alternate between a child layer (of an area of the previous
/// layer, the first one under `area_001`) and a root layer.
fn big_campaign() -> Campaign {
    let mut c = Campaign::new("camp_0001", &["pc_001".to_string(), "pc_002".to_string()]);
    let mut last_first = "area_001".to_string();
    for layer in 0..34 {
        let size = if layer == 33 { 8 } else { 30 };
        let parent = if layer % 2 == 0 {
            json!(last_first)
        } else {
            Value::Null
        };
        let call = ToolCall::new(
            format!("gen_{layer}"),
            "map_generate",
            json!({"parent_area_id": parent, "theme": format!("Layer {layer}"),
                   "constraints": {"size": size, "seed": format!("bench-{layer}")}}),
        );
        let result = apply(&mut c, &call);
        last_first = result["created_area_ids"][0].as_str().unwrap().to_string();
    }
    assert_eq!(c.map.areas.len(), 1000);
    assert!(c.problems().is_empty());
    c
}

/// Times `f` `warm + measured` times and returns the measured durations, sorted.
fn measure(warm: usize, measured: usize, mut f: impl FnMut(usize) -> Duration) -> Vec<Duration> {
    let mut times = Vec::with_capacity(measured);
    for i in 0..warm + measured {
        let took = f(i);
        if i >= warm {
            times.push(took);
        }
    }
    times.sort();
    times
}

struct Row {
    what: String,
    times: Vec<Duration>,
    target: Option<(Duration, &'static str)>,
}

fn bench_move_and_hp(base: &Campaign, rows: &mut Vec<Row>) {
    // move: area_001 ↔ area_003 (the entry of area_001's child layer; both ways linked).
    let mut c = base.clone();
    let there = ToolCall::new(
        "call_1",
        "move",
        json!({"actor_id": "pc_001", "to_area_id": "area_003"}),
    );
    let back = ToolCall::new(
        "call_2",
        "move",
        json!({"actor_id": "pc_001", "to_area_id": "area_001"}),
    );
    let times = measure(2_000, 20_000, |i| {
        let call = if i % 2 == 0 { &there } else { &back };
        let t = Instant::now();
        let out = c.run_calls(std::slice::from_ref(call), None).unwrap();
        let took = t.elapsed();
        assert!(out.tool_feedback.is_none());
        black_box(out);
        took
    });
    rows.push(Row {
        what: "`move` (one call, 20,000)".into(),
        times,
        target: Some((Duration::from_micros(20), "p50 ≤ 20 µs")),
    });

    // hp_delta: −1, +1 on the turn actor.
    let hurt = ToolCall::new(
        "call_1",
        "hp_delta",
        json!({"target_character_id": "pc_001", "delta": -1, "cause": "trap"}),
    );
    let heal = ToolCall::new(
        "call_2",
        "hp_delta",
        json!({"target_character_id": "pc_001", "delta": 1, "cause": "potion"}),
    );
    let times = measure(2_000, 20_000, |i| {
        let call = if i % 2 == 0 { &hurt } else { &heal };
        let t = Instant::now();
        let out = c.run_calls(std::slice::from_ref(call), None).unwrap();
        let took = t.elapsed();
        assert!(out.tool_feedback.is_none());
        black_box(out);
        took
    });
    assert_eq!(c.actors["pc_001"].hp, 10);
    rows.push(Row {
        what: "`hp_delta` (one call, 20,000)".into(),
        times,
        target: Some((Duration::from_micros(20), "p50 ≤ 20 µs")),
    });
}

fn bench_map_generate(base: &Campaign, rows: &mut Vec<Row>) {
    // map_generate size 30 on a clone of the 1,000-area campaign.
    let ids: Vec<String> = base.map.areas.keys().cloned().collect();
    let times = measure(200, 2_000, |i| {
        let mut fresh = base.clone();
        let parent = if i % 2 == 0 {
            Value::Null
        } else {
            json!(ids[(i * 7919) % ids.len()])
        };
        let call = ToolCall::new(
            "call_1",
            "map_generate",
            json!({"parent_area_id": parent, "theme": "Crypt",
                   "constraints": {"size": 30, "seed": format!("seed-{i}")}}),
        );
        let t = Instant::now();
        let out = fresh.run_calls(std::slice::from_ref(&call), None).unwrap();
        let took = t.elapsed();
        assert!(out.tool_feedback.is_none());
        assert_eq!(fresh.map.areas.len(), 1030);
        black_box(out);
        drop(fresh);
        took
    });
    rows.push(Row {
        what: "`map_generate` size 30 (1,000 → 1,030 areas, 2,000)".into(),
        times,
        target: Some((Duration::from_micros(200), "p50 ≤ 200 µs")),
    });
    // For comparison: the whole-map check, which map_generate does not run (it checks the new
    // layer, the area given new exits and the layer's group, the rest being valid already).
    let times = measure(200, 2_000, |_| {
        let t = Instant::now();
        let problems = base.map.problems();
        let took = t.elapsed();
        black_box(problems);
        took
    });
    rows.push(Row {
        what: "for comparison: the whole-map check (`CampaignMap::problems`)".into(),
        times,
        target: None,
    });
}

fn bench_save(base: &Campaign, rows: &mut Vec<Row>) {
    // A turn's save.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("campaign.json");
    let times = measure(20, 300, |_| {
        let t = Instant::now();
        file::save(&path, base).unwrap();
        t.elapsed()
    });
    let bytes = std::fs::metadata(&path).unwrap().len();
    assert!(file::load(&path).unwrap().campaign == *base);
    rows.push(Row {
        what: format!("`file::save` (check, JSON, write, fsync, rename; {bytes} bytes, 300)"),
        times,
        target: Some((Duration::from_millis(5), "p50 ≤ 5 ms")),
    });
    let times = measure(20, 300, |_| {
        let t = Instant::now();
        let text = file::to_text(base);
        let took = t.elapsed();
        black_box(text);
        took
    });
    rows.push(Row {
        what: "of which: `file::to_text` (no disk)".into(),
        times,
        target: None,
    });
    let times = measure(20, 300, |_| {
        let t = Instant::now();
        let value = base.to_json();
        let took = t.elapsed();
        black_box(value);
        took
    });
    rows.push(Row {
        what: "for comparison: `Campaign::to_json` (a JSON tree, not on the save path)".into(),
        times,
        target: None,
    });
    let times = measure(20, 300, |_| {
        let t = Instant::now();
        let problems = base.problems();
        let took = t.elapsed();
        black_box(problems);
        took
    });
    rows.push(Row {
        what: "of which: the check (`Campaign::problems`)".into(),
        times,
        target: None,
    });
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |name: &str| which.is_empty() || which.iter().any(|w| w == name);
    let start = Instant::now();
    let base = big_campaign();
    let built = start.elapsed();
    let edges = base.map.edge_count();
    let mut rows = Vec::new();
    if run("move") || run("hp_delta") {
        bench_move_and_hp(&base, &mut rows);
    }
    if run("map_generate") {
        bench_map_generate(&base, &mut rows);
    }
    if run("save") {
        bench_save(&base, &mut rows);
    }

    println!(
        "Campaign: {} areas, {edges} reachable entries, 2 actors (built in {:.0} ms)",
        base.map.areas.len(),
        built.as_secs_f64() * 1e3
    );
    println!();
    println!("| on a 1,000-area campaign | p50 | p90 | p99 | target | verdict |");
    println!("|---|---|---|---|---|---|");
    for row in rows {
        let p50 = percentile(&row.times, 0.5);
        let (target, verdict) = match row.target {
            Some((limit, text)) => (text, if p50 <= limit { "met" } else { "MISSED" }),
            None => ("—", "—"),
        };
        println!(
            "| {} | {} | {} | {} | {target} | {verdict} |",
            row.what,
            show(p50),
            show(percentile(&row.times, 0.9)),
            show(percentile(&row.times, 0.99)),
        );
    }
    println!();
}
