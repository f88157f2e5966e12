//! The bus over NATS against the bus in one process, on this machine:
//!
//! - **Latency**: a message published on one runtime's bus and received by a subscriber of
//!   another runtime (its own NATS connection and bridge; a real `nats-server` on loopback), p50
//!   and p99, against the same on one runtime's bus. 5,000 messages paced at 5,000/s.
//! - **Fan-out**: 1, 2 and 3 runtimes, each with one subscriber to everything (a WebSocket
//!   server's renderer subscribes so); 60,000 messages published as fast as possible, spread
//!   over the runtimes; the aggregate deliveries per second until every subscriber has every
//!   message.
//!
//! - **Hand-over**: an agent of one runtime brought to another (`app_attach` with an agent of
//!   another process does this): asked over NATS, stopped, its writes committed, its lease
//!   given, resumed from PostgreSQL; 50 agents one after the other, p50 and p99. And a runtime
//!   leaving with 50 agents: the time until the other one runs all of them (bounded by its
//!   lease tick, a third of the 3 s lease here).
//!
//! - **A list of the world**: `list_agents` on one runtime gathers the other runtime's page
//!   over NATS (100 agents there): p50 and p99 of the gathering, against this runtime's own
//!   list of 100 agents.
//!
//! The runtimes share this benchmark's process (and its two cores) but nothing else: each has
//! its own bus, NATS connection and database connections, as separate processes would; so the
//! numbers include every serialisation, socket and NATS hop a second process adds.
//!
//! `cargo bench -p agents-core --features cluster --bench cluster` (needs `nats-server` and
//! PostgreSQL's binaries, as the tests do); `… --bench cluster -- list` runs only the list.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::bus::{BusMessage, Filter, Received, Subscription};
use agents_core::cluster::{Cluster, ClusterConfig};
use agents_core::geometry::Position;
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
use agents_testkit::{nats, postgres};

const LATENCY_SAMPLES: usize = 5_000;
const PACE: Duration = Duration::from_micros(200);
const FANOUT_MESSAGES: usize = 60_000;

fn moved(n: usize) -> BusMessage {
    BusMessage::AgentMoved {
        agent_id: "agent_bench".to_string(),
        from: Position::new(0.0, 0.0),
        to: Position::new(n as f64, 0.0),
    }
}

fn index_of(message: &BusMessage) -> Option<usize> {
    match message {
        BusMessage::AgentMoved { to, agent_id, .. } if agent_id == "agent_bench" => {
            Some(to.x as usize)
        }
        _ => None,
    }
}

fn runtime(url: &str) -> Arc<Runtime> {
    Arc::new(
        Runtime::start_on(
            tokio::runtime::Handle::current(),
            RuntimeOptions {
                database: url.into(),
                ..RuntimeOptions::default()
            },
        )
        .expect("runtime"),
    )
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q) as usize]
}

/// Publishes `LATENCY_SAMPLES` paced messages on `from` and times their arrival at `sub`.
async fn latency(from: &Runtime, sub: &mut Subscription) -> (f64, f64) {
    let sent: Arc<parking_lot::Mutex<Vec<Option<Instant>>>> =
        Arc::new(parking_lot::Mutex::new(vec![None; LATENCY_SAMPLES]));
    let mut samples = Vec::with_capacity(LATENCY_SAMPLES);
    let receiver = async {
        while samples.len() < LATENCY_SAMPLES {
            match tokio::time::timeout(Duration::from_secs(10), sub.recv()).await {
                Ok(Some(Received::Message(env))) => {
                    if let Some(n) = index_of(&env.message)
                        && let Some(at) = sent.lock()[n]
                    {
                        samples.push(at.elapsed().as_secs_f64() * 1e6);
                    }
                }
                Ok(Some(Received::Lagged { missed })) => panic!("subscriber lagged {missed}"),
                Ok(None) => panic!("bus closed"),
                Err(_) => panic!("messages lost: {} of {LATENCY_SAMPLES}", samples.len()),
            }
        }
    };
    let sender = async {
        let start = Instant::now();
        for n in 0..LATENCY_SAMPLES {
            let due = start + PACE * n as u32;
            tokio::time::sleep_until(due.into()).await;
            sent.lock()[n] = Some(Instant::now());
            from.bus().publish(moved(n));
        }
    };
    tokio::join!(receiver, sender);
    samples.sort_by(f64::total_cmp);
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

async fn join(rt: &Arc<Runtime>, nats: &str, world: &str) -> Cluster {
    Cluster::join(rt.clone(), ClusterConfig::new(nats, world))
        .await
        .expect("join")
}

/// Waits until every bridge listens (and a moment more, for the server to have it).
async fn settle(clusters: &[Cluster]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while clusters.iter().any(|c| c.stats().patterns == 0) {
        assert!(Instant::now() < deadline, "bridges did not subscribe");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// `k` runtimes, one subscriber each; the messages spread over them; deliveries per second.
async fn fanout(k: usize, nats: &str, db: &str) -> (f64, f64) {
    let runtimes: Vec<Arc<Runtime>> = (0..k).map(|_| runtime(db)).collect();
    let mut subs: Vec<Subscription> = runtimes
        .iter()
        .map(|rt| rt.subscribe_with_capacity(Filter::all(), FANOUT_MESSAGES * 2))
        .collect();
    let mut clusters = Vec::new();
    if k > 1 {
        for rt in &runtimes {
            clusters.push(join(rt, nats, &format!("fanout{k}")).await);
        }
        settle(&clusters).await;
    }
    let start = Instant::now();
    for n in 0..FANOUT_MESSAGES {
        runtimes[n % k].bus().publish(moved(n));
    }
    let published = start.elapsed();
    for sub in &mut subs {
        let mut got = 0;
        while got < FANOUT_MESSAGES {
            match tokio::time::timeout(Duration::from_secs(30), sub.recv()).await {
                Ok(Some(Received::Message(env))) if index_of(&env.message).is_some() => got += 1,
                Ok(Some(Received::Message(_))) => {}
                Ok(Some(Received::Lagged { missed })) => panic!("subscriber lagged {missed}"),
                Ok(None) | Err(_) => panic!("lost messages: {got} of {FANOUT_MESSAGES}"),
            }
        }
    }
    let elapsed = start.elapsed();
    for cluster in clusters {
        cluster.leave().await;
    }
    for rt in runtimes {
        rt.shutdown(Duration::from_secs(5));
    }
    let deliveries = (FANOUT_MESSAGES * k) as f64;
    (
        deliveries / elapsed.as_secs_f64(),
        FANOUT_MESSAGES as f64 / published.as_secs_f64(),
    )
}

const HANDOVERS: usize = 50;

fn quiet_agent(n: usize) -> AgentConfig {
    AgentConfig::from_json(&serde_json::json!({
        "name": format!("Mover {n}"), "role": "villager", "idle_think_seconds": 600,
        "brain": "scripted"
    }))
    .expect("config")
}

async fn join_with_lease(rt: &Arc<Runtime>, nats: &str, world: &str, lease: Duration) -> Cluster {
    let mut config = ClusterConfig::new(nats, world);
    config.lease = lease;
    Cluster::join(rt.clone(), config).await.expect("join")
}

/// Hand-over p50 and p99 (ms), then the time (ms) until every agent of a leaving runtime runs on
/// the other one.
async fn handover(nats: &str, db: &str) -> (f64, f64, f64) {
    let lease = Duration::from_secs(3);
    let (a, b) = (runtime(db), runtime(db));
    let ca = join_with_lease(&a, nats, "handover", lease).await;
    let cb = join_with_lease(&b, nats, "handover", lease).await;
    let ids: Vec<String> = (0..HANDOVERS)
        .map(|n| b.spawn(quiet_agent(n)).expect("spawn"))
        .collect();
    let remote = ca.remote();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ids.iter().any(|id| remote.owner(id).is_none()) {
        assert!(
            Instant::now() < deadline,
            "A did not learn where the agents run"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut samples = Vec::with_capacity(HANDOVERS);
    for id in &ids {
        let owner = remote.owner(id).expect("owner");
        let start = Instant::now();
        remote
            .bring_here(owner, id.clone())
            .await
            .expect("hand-over");
        samples.push(start.elapsed().as_secs_f64() * 1e3);
        assert!(a.state(id).is_some() && b.state(id).is_none());
    }
    samples.sort_by(f64::total_cmp);
    // A leaves with all of them: B runs them again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let start = Instant::now();
    ca.leave().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while ids.iter().any(|id| b.state(id).is_none()) {
        assert!(Instant::now() < deadline, "B did not resume the agents");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let left = start.elapsed().as_secs_f64() * 1e3;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
    (percentile(&samples, 0.5), percentile(&samples, 0.99), left)
}

/// Gathering another runtime's `list_agents` page (100 agents), p50 and p99 in ms, and this
/// runtime's own list of 100 agents, p50 in µs.
async fn world_list(nats: &str, db: &str) -> (f64, f64, f64) {
    const AGENTS: usize = 100;
    const SAMPLES: usize = 300;
    let (a, b) = (runtime(db), runtime(db));
    let (ca, cb) = (join(&a, nats, "list").await, join(&b, nats, "list").await);
    let ids: Vec<String> = (0..AGENTS)
        .map(|n| b.spawn(quiet_agent(n)).expect("spawn"))
        .collect();
    for n in 0..AGENTS {
        a.spawn(quiet_agent(n)).expect("spawn");
    }
    let remote = ca.remote();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ids.iter().any(|id| remote.owner(id).is_none()) {
        assert!(
            Instant::now() < deadline,
            "A did not learn where the agents run"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let request =
        agents_core::protocol::ClientRequest::from(agents_core::protocol::requests::ListAgents {
            limit: None,
            cursor: None,
        });
    let mut gathered = Vec::with_capacity(SAMPLES);
    let mut own = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let start = Instant::now();
        let replies = remote.gather(request.clone()).await;
        gathered.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(replies.len(), 1, "B answers");
        let start = Instant::now();
        assert_eq!(a.list().len(), AGENTS);
        own.push(start.elapsed().as_secs_f64() * 1e6);
    }
    gathered.sort_by(f64::total_cmp);
    own.sort_by(f64::total_cmp);
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
    (
        percentile(&gathered, 0.5),
        percentile(&gathered, 0.99),
        percentile(&own, 0.5),
    )
}

fn main() {
    let only_list = std::env::args().any(|a| a == "list");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let nats = nats::Server::start();
        let db = postgres::database();

        let (p50, p99, own) = world_list(&nats.url, &db.url).await;
        println!("list_agents of a world of two runtimes, 100 agents each: gathering the other's page p50 {p50:.2} ms, p99 {p99:.2} ms (this runtime's own list: p50 {own:.0} µs)\n");
        if only_list {
            return;
        }

        let a = runtime(&db.url);
        let b = runtime(&db.url);
        let mut local = a.subscribe_with_capacity(Filter::all(), LATENCY_SAMPLES * 2);
        let (local_p50, local_p99) = latency(&a, &mut local).await;
        drop(local);
        let mut remote = b.subscribe_with_capacity(Filter::all(), LATENCY_SAMPLES * 2);
        let clusters = vec![join(&a, &nats.url, "latency").await, join(&b, &nats.url, "latency").await];
        settle(&clusters).await;
        let (cross_p50, cross_p99) = latency(&a, &mut remote).await;
        for cluster in clusters {
            cluster.leave().await;
        }
        a.shutdown(Duration::from_secs(5));
        b.shutdown(Duration::from_secs(5));

        println!("Event delivery latency, {LATENCY_SAMPLES} messages at {}/s\n", 1_000_000 / PACE.as_micros());
        println!("| path | p50 | p99 |");
        println!("|---|---:|---:|");
        println!("| one runtime's bus (in process) | {local_p50:.1} µs | {local_p99:.1} µs |");
        println!("| another runtime over NATS (loopback) | {cross_p50:.1} µs | {cross_p99:.1} µs |");
        println!(
            "| ratio | {:.0}× | {:.0}× |\n",
            cross_p50 / local_p50,
            cross_p99 / local_p99
        );

        let (p50, p99, left) = handover(&nats.url, &db.url).await;
        println!("Hand-over of an agent to another runtime, {HANDOVERS} one after the other: p50 {p50:.1} ms, p99 {p99:.1} ms");
        println!("A runtime leaving with {HANDOVERS} agents: all running on the other one after {left:.0} ms (3 s lease, 1 s tick)\n");

        println!("Fan-out: {FANOUT_MESSAGES} messages spread over the runtimes, one subscriber to everything on each\n");
        println!("| runtimes | deliveries/s (all subscribers, all messages) | publish rate | vs 1 |");
        println!("|---:|---:|---:|---:|");
        let mut base = 0.0;
        for k in 1..=3 {
            let (delivered, published) = fanout(k, &nats.url, &db.url).await;
            if k == 1 {
                base = delivered;
            }
            println!(
                "| {k} | {delivered:.0} | {published:.0}/s | {:.2}× |",
                delivered / base
            );
        }
    });
}
