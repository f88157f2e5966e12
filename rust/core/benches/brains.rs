//! Model-brain benchmarks against the fake provider (a real HTTP server on loopback):
//!
//! - `overhead`: one decision end to end — message in, context, request, HTTP on loopback, parse,
//!   check, apply, line out — with the fake answering at once. An upper bound of the brain's
//!   overhead (it includes the loopback round trip and the fake's own work).
//! - `crowd`: 1,000 agents asked at once, the fake answering after 200 ms, the limiter at 16:
//!   throughput against the ideal 16 / 0.2 s = 80 decisions/s, and every agent answered once.
//! - `prompt`: prompt tokens per decision for the demo town's five villagers, as the Godot demo
//!   and the example configure them (`godot-project/demo/villagers.json`: names, roles, prompts,
//!   positions, tasks, hearing radius, world size; the fake counts 4 characters per token), and
//!   the share in the cacheable prefix (Anthropic breakpoints).
//!
//! `cargo bench -p agents-core --bench brains [-- overhead|crowd|prompt]` (release). Prints
//! markdown tables. `BRAINS_BENCH_MEMORY` (a JSON object, the agents' `memory` settings: `{"enabled":
//! false}`, `{"importance_batch": 0, "reflection_threshold": 0}`) measures `overhead` with
//! other memory settings than the defaults.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use agents_core::bus::{BusMessage, Filter, Received, Subscription};
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions, WorldBounds};
use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use serde_json::{Value, json};

/// The demo town: the villagers `godot-project/demo/town.gd` and the example spawn.
const TOWN: &str = include_str!("../../../godot-project/demo/villagers.json");

fn options(dir: &tempfile::TempDir) -> RuntimeOptions {
    RuntimeOptions {
        database: dir.path().join("bench.db"),
        idle_think_seconds: 100_000.0,
        speaking_seconds: 0.0,
        bounds: WorldBounds::from_rect(0.0, 0.0, 1000.0, 1000.0).unwrap(),
        ..RuntimeOptions::default()
    }
}

fn config(name: &str, x: f64, y: f64, brain: serde_json::Value) -> AgentConfig {
    AgentConfig::from_json(&json!({
        "name": name, "role": "villager",
        "prompt": "You live in a small market town. You sell bread, gossip about your \
                   neighbours and help the player when asked. Keep your lines short and warm.",
        "initial_position": {"x": x, "y": y}, "brain": brain
    }))
    .expect("config")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn spoke(sub: &mut Subscription, id: &str) -> Instant {
    loop {
        match tokio::time::timeout(Duration::from_secs(30), sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentSpoke { agent_id, .. } = &env.message
                    && agent_id == id
                {
                    return Instant::now();
                }
            }
            Ok(Some(Received::Lagged { .. })) => {}
            other => panic!("no answer: {other:?}"),
        }
    }
}

async fn overhead() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::Reply {
        text: "Fresh bread at the well!".into(),
        tool_calls: vec![FakeCall::new("move", json!({"x": 12, "y": 14}))],
        chunk_chars: Some(8),
    });
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(tokio::runtime::Handle::current(), options(&dir)).unwrap();
    let brain = json!({"provider": "openai", "model": "bench", "base_url": fake.openai_base(),
                       "trace_prompts": true});
    let mut mira = config("Mira", 10.0, 10.0, brain);
    if let Ok(memory) = std::env::var("BRAINS_BENCH_MEMORY") {
        mira.memory = Some(serde_json::from_str(&memory).expect("BRAINS_BENCH_MEMORY: JSON"));
        println!("memory settings: {memory}\n");
    }
    let id = rt.spawn(mira).unwrap();
    let mut sub = rt.subscribe(Filter::all().senders([id.clone()]));
    let rounds = 2_000;
    let mut times = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let sent = Instant::now();
        rt.send_message(&id, &format!("Question number {i}?"))
            .unwrap();
        let done = spoke(&mut sub, &id).await;
        if i >= 100 {
            times.push(done - sent);
        }
        // Let the agent go back to idle before the next question.
        while rt.state(&id).is_some_and(|s| s.state.as_str() != "idle") {
            tokio::task::yield_now().await;
        }
    }
    times.sort();
    // The same request, straight through the HTTP client: the loopback round trip and the
    // fake's own work, which the decision includes.
    let last = rt.agent_trace(&id, 1).unwrap();
    let request: agents_llm::ModelRequest =
        serde_json::from_str(last[0].call.prompt.as_deref().unwrap()).unwrap();
    let client = agents_llm::client::Client::new().unwrap();
    let endpoint = agents_llm::client::Endpoint {
        api: std::sync::Arc::new(agents_llm::openai::API),
        base_url: fake.openai_base(),
        api_key: None,
        headers: vec![],
        timeout: Duration::from_secs(10),
    };
    let mut http = Vec::with_capacity(rounds);
    for i in 0..rounds {
        let sent = Instant::now();
        client
            .complete(&endpoint, &request, &mut |_| {})
            .await
            .unwrap();
        if i >= 100 {
            http.push(sent.elapsed());
        }
    }
    http.sort();
    println!("| one decision, fake answering at once | p50 | p90 | p99 |");
    println!("|---|---|---|---|");
    let row = |name: &str, t: &[Duration]| {
        println!(
            "| {name} | {:?} | {:?} | {:?} |",
            percentile(t, 0.5),
            percentile(t, 0.9),
            percentile(t, 0.99)
        )
    };
    row("message → line said (the whole decision)", &times);
    row("the same request, HTTP client → fake → reply only", &http);
    let overhead: Vec<Duration> = {
        let base = percentile(&http, 0.5);
        times.iter().map(|t| t.saturating_sub(base)).collect()
    };
    row(
        "decision − median HTTP round trip (the brain and runtime)",
        &overhead,
    );
    println!("| decisions measured | {} | | |", times.len());
    rt.shutdown(Duration::from_secs(5));
}

async fn crowd() {
    const AGENTS: usize = 1_000;
    const LIMIT: usize = 16;
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_latency(Duration::from_millis(200));
    fake.set_default(Behaviour::text("Yes?"));
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        tokio::runtime::Handle::current(),
        RuntimeOptions {
            max_concurrent_model_calls: LIMIT,
            max_concurrent_model_calls_per_endpoint: LIMIT,
            bus_capacity: 1 << 16,
            ..options(&dir)
        },
    )
    .unwrap();
    let brain = json!({"provider": "openai", "model": "bench", "base_url": fake.openai_base()});
    let ids: Vec<String> = (0..AGENTS)
        .map(|i| {
            let (x, y) = ((i % 32) as f64 * 30.0, (i / 32) as f64 * 30.0);
            rt.spawn(config(&format!("V{i}"), x, y, brain.clone()))
                .unwrap()
        })
        .collect();
    let mut sub = rt.subscribe_with_capacity(
        Filter::all().kinds([agents_core::bus::MessageKind::AgentSpoke]),
        1 << 16,
    );
    let started = Instant::now();
    for id in &ids {
        rt.send_message(id, "Market day tomorrow?").unwrap();
    }
    let mut lines: HashMap<String, usize> = HashMap::new();
    while lines.len() < AGENTS {
        match tokio::time::timeout(Duration::from_secs(60), sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentSpoke { agent_id, .. } = &env.message
                    && agent_id.starts_with("agent_")
                {
                    *lines.entry(agent_id.clone()).or_default() += 1;
                }
            }
            Ok(Some(Received::Lagged { missed })) => panic!("lagged by {missed}"),
            other => panic!("stalled at {} answers: {other:?}", lines.len()),
        }
    }
    let elapsed = started.elapsed();
    // Anything more (a duplicate) would arrive right after.
    tokio::time::sleep(Duration::from_millis(500)).await;
    while let Some(Received::Message(env)) = sub.try_recv() {
        if let BusMessage::AgentSpoke { agent_id, .. } = &env.message {
            *lines.entry(agent_id.clone()).or_default() += 1;
        }
    }
    let ideal = LIMIT as f64 / 0.2;
    let rate = AGENTS as f64 / elapsed.as_secs_f64();
    println!("| 1,000 agents, fake latency 200 ms, limiter 16 | value |");
    println!("|---|---|");
    println!("| time to answer all | {elapsed:.2?} |");
    println!("| throughput | {rate:.1} decisions/s |");
    println!("| ideal (16 / 0.2 s) | {ideal:.1} decisions/s |");
    println!("| throughput / ideal | {:.1} % |", rate / ideal * 100.0);
    println!("| model requests | {} |", fake.requests().len());
    println!(
        "| peak concurrent requests at the server | {} |",
        fake.max_in_flight()
    );
    println!(
        "| agents answered exactly once | {} of {AGENTS} |",
        lines.values().filter(|n| **n == 1).count()
    );
    rt.shutdown(Duration::from_secs(10));
}

async fn prompt() {
    let town: Value = serde_json::from_str(TOWN).expect("villagers.json");
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::text("Good day to you!"));
    let dir = tempfile::tempdir().unwrap();
    let size = &town["world_size"];
    let rt = Runtime::start_on(
        tokio::runtime::Handle::current(),
        RuntimeOptions {
            speaking_seconds: 0.0,
            bounds: WorldBounds::from_rect(
                0.0,
                0.0,
                size[0].as_f64().unwrap(),
                size[1].as_f64().unwrap(),
            )
            .unwrap(),
            hearing_radius: town["hearing_radius"].as_f64().unwrap(),
            ..options(&dir)
        },
    )
    .unwrap();
    let brain = json!({"provider": "anthropic", "model": "bench",
                       "base_url": fake.anthropic_base()});
    // The demo's five villagers, where the demo puts them, with the demo's tasks.
    let villagers = town["villagers"].as_array().unwrap();
    let ids: Vec<String> = villagers
        .iter()
        .map(|v| {
            let config = AgentConfig::from_json(&json!({
                "name": v["name"], "role": v["role"], "prompt": v["prompt"],
                "initial_position": {"x": v["x"], "y": v["y"]}, "brain": brain
            }))
            .expect("villager config");
            let id = rt.spawn(config).unwrap();
            if let Some(task) = v["task"].as_str() {
                rt.assign_task(&id, task).unwrap();
            }
            id
        })
        .collect();
    let mut sub = rt.subscribe(Filter::all());
    for round in 0..5 {
        for id in &ids {
            rt.send_message(id, &format!("Round {round}: what news from the market?"))
                .unwrap();
            spoke(&mut sub, id).await;
        }
    }
    let mut input = 0u64;
    let mut cached = 0u64;
    let mut calls = 0u64;
    let mut max = 0u64;
    for id in &ids {
        for row in rt.agent_trace(id, 100).unwrap().iter().skip(1) {
            input += row.call.input_tokens;
            cached += row.call.cached_tokens;
            max = max.max(row.call.input_tokens);
            calls += 1;
        }
    }
    println!("| prompt tokens, the demo town's villagers (after each one's first call) | value |");
    println!("|---|---|");
    println!("| decisions | {calls} |");
    println!(
        "| prompt tokens per decision, mean | {} |",
        input / calls.max(1)
    );
    println!("| prompt tokens per decision, max | {max} |");
    println!(
        "| share in the cached prefix | {:.1} % |",
        cached as f64 / input.max(1) as f64 * 100.0
    );
    rt.shutdown(Duration::from_secs(5));
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let run = |name: &str| which.is_empty() || which.iter().any(|w| w == name);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if run("overhead") {
        rt.block_on(overhead());
        println!();
    }
    if run("crowd") {
        rt.block_on(crowd());
        println!();
    }
    if run("prompt") {
        rt.block_on(prompt());
    }
}
