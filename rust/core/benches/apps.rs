//! App bridge benchmarks:
//!
//! - `routing`: one agent action through the bridge in core — the guard and the schema check,
//!   the route, the app's handler answering at once with a new state, the session updated (its
//!   history, the state, the SQLite log queued) and the result back as a tool output. Measured
//!   by calling the attached agent's app tool as the runtime does (`call_async` with the agent's
//!   context), 20,000 times after 2,000 of warm-up.
//! - `ws`: 100 apps, each played by its own scripted agent, all registered over one WebSocket
//!   connection on loopback; the client answers every `app_action` at once with a new state, so
//!   each answer brings the agent's next action (static mode). Actions per second over 5 s, and
//!   per app every action id arriving once, in order (none lost, none twice).
//!
//! `cargo bench -p agents-core --bench apps [-- routing|ws]` (release). Prints markdown tables.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::apps::{ActionDef, ActionOutcome, AppConfig, AppHandler, AppHub};
use agents_core::memory::Memory;
use agents_core::net::{Server, ServerConfig};
use agents_core::runtime::{Runtime, RuntimeOptions};
use agents_core::tools::{ToolContext, ToolRegistry};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn place() -> ActionDef {
    ActionDef::new("place", "Place a mark").with_params(json!({
        "type": "object",
        "properties": {"row": {"type": "integer", "minimum": 0, "maximum": 2},
                       "col": {"type": "integer", "minimum": 0, "maximum": 2}},
        "required": ["row", "col"], "additionalProperties": false}))
}

fn routing() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let memory = Memory::open(dir.path().join("bench.db")).unwrap();
    let hub = AppHub::new(memory.clone());
    let mut config = AppConfig::new("board");
    config.actions = vec![place()];
    config.state = json!({"moves": 0});
    let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = counter.clone();
    let (app, _outbound) = hub
        .register(
            config,
            AppHandler::local(move |request| {
                let n = seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                async move {
                    ActionOutcome::ok(json!({"placed": request.params}))
                        .with_state(json!({"moves": n}))
                }
            }),
        )
        .unwrap();
    app.attach("agent_001", Arc::new(tokio::sync::Notify::new()))
        .unwrap();
    let tools = app.offered_tools();
    let (warm, measured) = (2_000, 20_000);
    let times = rt.block_on(async {
        let mut times = Vec::with_capacity(measured);
        for i in 0..warm + measured {
            let args = json!({"row": i % 3, "col": (i / 3) % 3});
            let ctx = ToolContext::for_agent("agent_001", Default::default());
            let start = Instant::now();
            let out = tools.call_async("place", args, ctx).await.unwrap();
            let took = start.elapsed();
            assert!(!out.is_error, "{:?}", out.structured);
            if i >= warm {
                times.push(took);
            }
        }
        times
    });
    memory.flush().unwrap();
    let mut sorted = times.clone();
    sorted.sort();
    let session = app.session();
    assert_eq!(session.state, json!({"moves": warm + measured}));
    println!("| one agent action through the bridge (in core) | p50 | p90 | p99 |");
    println!("|---|---|---|---|");
    println!(
        "| guard, schema, route, handler, session, result ({measured} calls) | {:.1} µs | {:.1} µs | {:.1} µs |",
        percentile(&sorted, 0.5).as_secs_f64() * 1e6,
        percentile(&sorted, 0.9).as_secs_f64() * 1e6,
        percentile(&sorted, 0.99).as_secs_f64() * 1e6,
    );
    println!();
}

fn ws() {
    const APPS: usize = 100;
    const SECONDS: f64 = 5.0;
    let dir = tempfile::tempdir().unwrap();
    let mut options = RuntimeOptions::with_database(dir.path().join("bench.db"));
    options.idle_think_seconds = 100_000.0;
    options.thinking_seconds = 0.0;
    options.worker_threads = 2;
    let runtime = Arc::new(Runtime::start(options).unwrap());
    let handle = runtime.handle().clone();
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        rate_limit_per_sec: 1_000_000,
        rate_limit_burst: 1_000_000,
        ..ServerConfig::default()
    };
    let server = Server::start(
        runtime.clone(),
        Arc::new(ToolRegistry::new()),
        config,
        &handle,
    )
    .unwrap();
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = format!("ws://{}/ws", server.local_addr());
    let sessions = runtime.clone();
    let (answered, elapsed, order_ok, recorded) = client.block_on(async move {
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let (mut tx, mut rx) = ws.split();
        let send = |v: Value| Message::Text(v.to_string().into());
        tx.send(send(json!({"type": "subscribe", "events": []})))
            .await
            .unwrap();
        let mut ids = Vec::new();
        for i in 0..APPS {
            let app_id = format!("app_{i:03}");
            tx.send(send(json!({"type": "app_register", "app_id": app_id,
                "world_tools": false, "actions": [{"name": "place", "description": "Place",
                "params": place().params}]})))
                .await
                .unwrap();
            tx.send(send(json!({"type": "agent_spawn_request", "request_id": i,
                "agent_config": {"name": format!("p{i}"), "brain": "scripted"}})))
                .await
                .unwrap();
            ids.push(app_id);
        }
        // Spawn replies carry the agent ids, in order.
        let mut agents = Vec::new();
        while agents.len() < APPS {
            let Some(Ok(Message::Text(text))) = rx.next().await else {
                panic!("connection ended")
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["type"] == "agent_spawn_response" {
                agents.push(v["agent_id"].as_str().unwrap().to_string());
            }
            assert_ne!(v["type"], "error", "{v}");
        }
        for (app_id, agent_id) in ids.iter().zip(&agents) {
            tx.send(send(json!({"type": "app_attach", "app_id": app_id,
                "agent_id": agent_id})))
                .await
                .unwrap();
        }
        let start = Instant::now();
        let deadline = start + Duration::from_secs_f64(SECONDS);
        let mut last: HashMap<String, u64> = HashMap::new();
        let mut answered = 0u64;
        let mut order_ok = true;
        while Instant::now() < deadline {
            let next = tokio::time::timeout_at(deadline.into(), rx.next()).await;
            let Ok(Some(Ok(Message::Text(text)))) = next else {
                continue;
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["type"] == "error" {
                panic!("{v}");
            }
            if v["type"] != "app_action" {
                continue;
            }
            let app_id = v["app_id"].as_str().unwrap().to_string();
            let action_id = v["action_id"].as_u64().unwrap();
            let previous = last.insert(app_id.clone(), action_id).unwrap_or(0);
            order_ok &= action_id == previous + 1;
            answered += 1;
            tx.send(send(json!({"type": "app_action_result", "app_id": app_id,
                "action_id": action_id, "result": "ok", "state": {"n": action_id}})))
                .await
                .unwrap();
        }
        let elapsed = start.elapsed();
        // Let the answers still in flight be applied, then read the sessions (while this
        // connection, and so its apps, still exist): every action answered is applied, once.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let recorded: u64 = (0..APPS)
            .map(|i| {
                let session = sessions.app_session(&format!("app_{i:03}")).unwrap();
                session.state["n"].as_u64().unwrap_or(0)
            })
            .sum();
        (answered, elapsed, order_ok && last.len() == APPS, recorded)
    });
    let rate = answered as f64 / elapsed.as_secs_f64();
    println!("| 100 apps, 100 scripted agents, one WebSocket client | value |");
    println!("|---|---|");
    println!(
        "| actions answered in {:.1} s | {answered} |",
        elapsed.as_secs_f64()
    );
    println!("| actions per second | **{rate:.0}** |");
    println!("| actions applied to the apps' states (sum of their last ids) | {recorded} |");
    println!(
        "| lost (answered but not applied) | {} |",
        answered.saturating_sub(recorded)
    );
    println!(
        "| every app's action ids arrived once, in order | {} |",
        if order_ok { "yes" } else { "**no**" }
    );
    println!();
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |name: &str| which.is_empty() || which.iter().any(|w| w == name);
    if run("routing") {
        routing();
    }
    if run("ws") {
        ws();
    }
}
