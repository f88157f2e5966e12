//! NATS down for ten seconds: two runtimes of one world on a real
//! NATS server and one real PostgreSQL database. While NATS is down each process goes on on its
//! own — agents spawn and hear messages, every write is acknowledged in the shared memory and
//! seen by the other process there, once — and when NATS is back both reconnect by themselves
//! and live events cross again. Events published during the outage are not replayed (the
//! bridge's rule: events are live, what must survive is in the memory). Real time.

#![cfg(feature = "cluster")]

use std::sync::Arc;
use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, MessageKind, Received, Subscription};
use agents_core::cluster::{Cluster, ClusterConfig};
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
use agents_testkit::{nats, postgres};
use serde_json::json;
use tokio::runtime::Handle;
use tokio::time::Instant;

/// How long NATS stays down.
const OUTAGE: Duration = Duration::from_secs(10);
/// Agents spawned (and spoken to) on the first process while NATS is down.
const SPAWNED_WHILE_DOWN: usize = 5;
/// Lines said to each of them.
const LINES: usize = 20;

fn runtime(url: &str) -> Arc<Runtime> {
    Arc::new(
        Runtime::start_on(
            Handle::current(),
            RuntimeOptions {
                database: url.into(),
                idle_think_seconds: 1000.0,
                speaking_seconds: 0.05,
                ..RuntimeOptions::default()
            },
        )
        .unwrap(),
    )
}

fn agent(name: &str) -> AgentConfig {
    AgentConfig::from_json(&json!({
        "name": name, "role": "villager", "prompt": "You live here.",
        "initial_position": {"x": 1, "y": 10}, "brain": "scripted"
    }))
    .unwrap()
}

/// Whether a spawn of `id` arrives on `sub` within `within`.
async fn sees_spawn(sub: &mut Subscription, id: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env)))
                if matches!(&env.message, BusMessage::AgentSpawned { .. })
                    && env.message.agent_id() == Some(id) =>
            {
                return true;
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("bus closed"),
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_seconds_without_nats_lose_no_write_and_events_cross_again() {
    let mut nats = nats::Server::start();
    let db = postgres::database();
    let (a, b) = (runtime(&db.url), runtime(&db.url));
    let join =
        |rt: &Arc<Runtime>| Cluster::join(rt.clone(), ClusterConfig::new(&nats.url, "outage"));
    let (ca, cb) = (join(&a).await.unwrap(), join(&b).await.unwrap());
    let mut on_b = b.subscribe(Filter::all().kinds([MessageKind::AgentSpawned]));
    let deadline = Instant::now() + Duration::from_secs(15);
    while cb.stats().patterns < 1 {
        assert!(Instant::now() < deadline, "B never subscribed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = a.spawn(agent("Before")).unwrap();
    assert!(sees_spawn(&mut on_b, &before, Duration::from_secs(15)).await);

    nats.stop();
    let down = Instant::now();
    // A goes on alone: spawns, lines heard and stored, every write acknowledged.
    let mut spawned = Vec::new();
    for i in 0..SPAWNED_WHILE_DOWN {
        let id = a.spawn(agent(&format!("During {i}"))).unwrap();
        for n in 0..LINES {
            a.send_message(&id, &format!("line {n} to {id}")).unwrap();
        }
        spawned.push(id);
    }
    a.flush().unwrap();
    assert!(
        !sees_spawn(&mut on_b, &spawned[0], Duration::from_millis(500)).await,
        "no event crosses without NATS"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while ca.is_connected() {
        assert!(Instant::now() < deadline, "A still says it is connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // B reads every acknowledged write in the shared memory, once.
    for id in &spawned {
        let mut stored = b.memory().recent_conversation(id, 1_000).unwrap();
        stored.sort_by_key(|c| c.id);
        let lines: Vec<&str> = stored
            .iter()
            .filter(|c| c.sender != *id && c.content.starts_with("line "))
            .map(|c| c.content.as_str())
            .collect();
        let expected: Vec<String> = (0..LINES).map(|n| format!("line {n} to {id}")).collect();
        assert_eq!(lines, expected, "{id}'s lines, each once, in order");
    }
    let known: Vec<String> = b
        .memory()
        .agents()
        .unwrap()
        .into_iter()
        .map(|r| r.agent_id)
        .collect();
    assert!(spawned.iter().all(|id| known.contains(id)), "{known:?}");
    tokio::time::sleep(OUTAGE.saturating_sub(down.elapsed())).await;

    nats.restart();
    // Both reconnect and subscribe again; until they have, a spawn may go unseen, so spawn
    // until one is seen on the other side.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    loop {
        assert!(
            Instant::now() < deadline,
            "nothing crossed after the outage"
        );
        n += 1;
        let after = a.spawn(agent(&format!("After {n}"))).unwrap();
        if sees_spawn(&mut on_b, &after, Duration::from_millis(500)).await {
            break;
        }
    }
    assert!(ca.is_connected() && cb.is_connected());
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
}
