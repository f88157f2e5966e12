//! The soak: 200 agents thinking with the fake provider (a real
//! HTTP server on loopback) are spoken to for three minutes — each one a line every five
//! seconds, so about 40 model calls a second — and this process's resident memory (`VmRSS`) is
//! sampled every five seconds. It must be flat in the last minute: whatever the runtime keeps
//! per agent (history, inboxes, traces, connections) has reached its bound by then. The agents
//! must keep answering, without an `agent_error`.
//!
//! Three minutes is too long for every test run: the test is ignored; run it with
//! `cargo test -p agents-core --release --test soak -- --ignored --nocapture`.

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, Received};
use agents_core::runtime::{Runtime, RuntimeOptions};
use agents_fakellm::{Behaviour, FakeServer};
use serde_json::json;
use tokio::runtime::Handle;
use tokio::time::Instant;

mod common;
use common::agent;

/// How many agents.
const AGENTS: usize = 200;
/// How long the traffic lasts.
const SOAK: Duration = Duration::from_secs(180);
/// The window whose memory must be flat (the end of the soak).
const FLAT_WINDOW: Duration = Duration::from_secs(60);
/// How often each agent is spoken to, and memory sampled.
const ROUND: Duration = Duration::from_secs(5);
/// The most the resident memory may grow over [`FLAT_WINDOW`]: this share of it at the
/// window's start…
const FLAT_SHARE: f64 = 0.05;
/// …plus this many KiB (allocator noise).
const FLAT_SLACK_KIB: u64 = 4 * 1024;

/// This process's resident memory in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "three minutes; run by hand (see the module docs)"]
async fn two_hundred_agents_for_three_minutes_keep_memory_flat() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::text("Fine, thank you."));
    fake.set_latency(Duration::from_millis(20));
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 1000.0,
            speaking_seconds: 0.05,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let brain = json!({"provider": "openai", "model": "m", "base_url": fake.openai_base()});
    let ids: Vec<String> = (0..AGENTS)
        .map(|_| rt.spawn(agent(brain.clone())).unwrap())
        .collect();

    let agents: std::collections::HashSet<&String> = ids.iter().collect();
    let started = Instant::now();
    let mut samples: Vec<(Duration, u64)> = Vec::new();
    // The agents' lines (the lines they are sent are `agent_spoke` messages too).
    let (mut spoke, mut errors) = (0usize, Vec::new());
    let mut round = 0u64;
    while started.elapsed() < SOAK {
        round += 1;
        // Spread the round's lines over the round.
        for (i, id) in ids.iter().enumerate() {
            rt.send_message(id, &format!("Round {round}: how are you?"))
                .unwrap();
            if i % 20 == 19 {
                tokio::time::sleep(ROUND / (AGENTS as u32 / 20)).await;
            }
            while let Ok(Some(received)) = tokio::time::timeout(Duration::ZERO, sub.recv()).await {
                if let Received::Message(env) = received {
                    match &env.message {
                        BusMessage::AgentSpoke { agent_id, .. } if agents.contains(agent_id) => {
                            spoke += 1
                        }
                        BusMessage::AgentError { message, .. } => errors.push(message.clone()),
                        _ => {}
                    }
                }
            }
        }
        fake.clear_requests();
        samples.push((started.elapsed(), rss_kib()));
        let (at, kib) = samples[samples.len() - 1];
        eprintln!("{:>4} s  {kib} KiB  {spoke} lines", at.as_secs());
    }
    assert!(
        errors.is_empty(),
        "{} errors: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    let rounds = samples.len();
    assert!(
        spoke >= AGENTS * (rounds - 1),
        "{spoke} lines for {rounds} rounds of {AGENTS} agents: the agents fell behind"
    );
    let window_start = SOAK - FLAT_WINDOW;
    let window: Vec<u64> = samples
        .iter()
        .filter(|(at, _)| *at >= window_start)
        .map(|(_, kib)| *kib)
        .collect();
    let first = window[0];
    let most = *window.iter().max().unwrap();
    let allowed = first + (first as f64 * FLAT_SHARE) as u64 + FLAT_SLACK_KIB;
    assert!(
        most <= allowed,
        "memory grew in the last minute: {first} KiB → {most} KiB (allowed {allowed}); \
         samples: {samples:?}"
    );
    rt.shutdown(Duration::from_secs(5));
}
