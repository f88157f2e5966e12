//! One world on several runtimes over a real NATS server and one real PostgreSQL database
//! (both started by the test): events cross processes, speech reaches an agent elsewhere and
//! is answered, subscriptions narrow what a process receives, and a NATS restart is survived.
//!
//! The runtimes share this test process but nothing else: each has its own bus, its own
//! connection to NATS and its own connections to the database, as separate processes would.

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

const WITHIN: Duration = Duration::from_secs(15);

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

fn agent(name: &str, x: f64) -> AgentConfig {
    AgentConfig::from_json(&json!({
        "name": name, "role": "villager", "prompt": "You live here.",
        "initial_position": {"x": x, "y": 10}, "brain": "scripted"
    }))
    .unwrap()
}

async fn join(rt: &Arc<Runtime>, nats: &str, world: &str) -> Cluster {
    Cluster::join(rt.clone(), ClusterConfig::new(nats, world))
        .await
        .unwrap()
}

/// The next message `pick` accepts, with its envelope's origin.
async fn until(
    sub: &mut Subscription,
    mut pick: impl FnMut(&BusMessage) -> bool,
) -> (BusMessage, Option<String>) {
    let deadline = Instant::now() + WITHIN;
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env))) if pick(&env.message) => {
                return (
                    env.message.clone(),
                    env.origin.as_deref().map(str::to_string),
                );
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("bus closed"),
            Err(_) => panic!("nothing matched within {WITHIN:?}"),
        }
    }
}

/// Waits until `check` holds (the bridges subscribe asynchronously).
async fn eventually(mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + WITHIN;
    while !check() {
        assert!(
            Instant::now() < deadline,
            "condition not met within {WITHIN:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn events_cross_processes_and_speech_reaches_an_agent_elsewhere() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, b) = (runtime(&db.url), runtime(&db.url));
    let (ca, cb) = (
        join(&a, &nats.url, "town").await,
        join(&b, &nats.url, "town").await,
    );
    let mut on_b = b.subscribe(Filter::all());
    // B's bridge listens to everything once its interest (the subscription above) is in.
    eventually(|| cb.stats().patterns >= 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let ada = a.spawn(agent("Ada", 10.0)).unwrap();
    let bob = b.spawn(agent("Bob", 12.0)).unwrap();
    assert_ne!(ada, bob, "one id space for the world");

    let (spawned, origin) = until(
        &mut on_b,
        |m| matches!(m, BusMessage::AgentSpawned { agent_id, .. } if *agent_id == ada),
    )
    .await;
    assert_eq!(origin.as_deref(), Some(ca.config().process_id.as_str()));
    assert!(matches!(spawned, BusMessage::AgentSpawned { .. }));

    // Bob, on B, speaks to Ada, on A; Ada hears it through her own subscription and answers
    // Bob, which B's subscribers see.
    eventually(|| ca.stats().patterns >= 2).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    b.bus().publish(BusMessage::AgentSpoke {
        agent_id: bob.clone(),
        content: "Good morning, Ada!".to_string(),
        recipients: vec![ada.clone()],
        dialog_type: "chat".to_string(),
        inbox_id: None,
    });
    let (answer, origin) = until(&mut on_b, |m| {
        matches!(m, BusMessage::AgentSpoke { agent_id, recipients, .. }
            if *agent_id == ada && recipients.contains(&bob))
    })
    .await;
    assert_eq!(origin.as_deref(), Some(ca.config().process_id.as_str()));
    let BusMessage::AgentSpoke { content, .. } = answer else {
        unreachable!()
    };
    assert!(!content.is_empty());
    // Ada's memory, in the shared database, holds what Bob said to her.
    let heard = a.memory().recent_conversation(&ada, 20).unwrap();
    assert!(
        heard
            .iter()
            .any(|l| l.sender == bob && l.content == "Good morning, Ada!"),
        "{heard:#?}"
    );

    let (sa, sb) = (ca.stats(), cb.stats());
    assert!(sa.exported > 0 && sb.imported > 0, "{sa:?} {sb:?}");
    assert_eq!(sa.garbage + sb.garbage, 0);
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_process_receives_what_its_subscribers_want_and_nothing_else() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, c) = (runtime(&db.url), runtime(&db.url));
    let (ca, cc) = (
        join(&a, &nats.url, "quiet").await,
        join(&c, &nats.url, "quiet").await,
    );
    // C's only subscriber wants what agent_xyz says.
    let mut on_c = c.subscribe(
        Filter::all()
            .senders(["agent_xyz"])
            .kinds([MessageKind::AgentSpoke]),
    );
    // Where agents are (spawned, moved, removed) and this one.
    eventually(|| cc.stats().patterns == 4).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    // A's agents chatter: state changes, speech among themselves.
    let ada = a.spawn(agent("Ada", 0.0)).unwrap();
    let eve = a.spawn(agent("Eve", 1.0)).unwrap();
    for n in 0..5 {
        a.bus().publish(BusMessage::AgentSpoke {
            agent_id: ada.clone(),
            content: format!("line {n}"),
            recipients: vec![eve.clone()],
            dialog_type: "chat".to_string(),
            inbox_id: None,
        });
    }
    a.bus().publish(BusMessage::AgentSpoke {
        agent_id: "agent_xyz".to_string(),
        content: "for C".to_string(),
        recipients: vec![],
        dialog_type: "chat".to_string(),
        inbox_id: None,
    });
    let (message, _) = until(&mut on_c, |m| matches!(m, BusMessage::AgentSpoke { .. })).await;
    assert!(matches!(message, BusMessage::AgentSpoke { ref content, .. } if content == "for C"));
    // Only the two spawns (where agents are) and the one line reached C, though A sent more.
    eventually(|| cc.stats().imported >= 3).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (sa, sc) = (ca.stats(), cc.stats());
    assert!(sa.exported >= 8, "{sa:?}");
    assert_eq!(sc.imported, 3, "{sc:?}");
    ca.leave().await;
    cc.leave().await;
    a.shutdown(Duration::from_secs(5));
    c.shutdown(Duration::from_secs(5));
}

/// A process's interest changing under traffic loses nothing: the patterns it adds are taken
/// by NATS before those it drops are drained, and what arrives on both is kept once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nothing_is_lost_or_doubled_while_the_interest_changes() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, c) = (runtime(&db.url), runtime(&db.url));
    let (ca, cc) = (
        join(&a, &nats.url, "churn").await,
        join(&c, &nats.url, "churn").await,
    );
    let mut on_c = c.subscribe_with_capacity(
        Filter::all()
            .senders(["agent_xyz"])
            .kinds([MessageKind::AgentSpoke]),
        4096,
    );
    eventually(|| cc.stats().patterns == 4).await;
    const LINES: usize = 600;
    let publisher = {
        let a = a.clone();
        tokio::spawn(async move {
            for n in 0..LINES {
                a.bus().publish(BusMessage::AgentSpoke {
                    agent_id: "agent_xyz".to_string(),
                    content: format!("line {n}"),
                    recipients: vec![],
                    dialog_type: "chat".to_string(),
                    inbox_id: None,
                });
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    // Meanwhile C's interest widens to everything (one pattern instead of four) and narrows
    // again, over and over.
    let churn = {
        let c = c.clone();
        tokio::spawn(async move {
            for _ in 0..15 {
                let wide = c.subscribe(Filter::all());
                tokio::time::sleep(Duration::from_millis(30)).await;
                drop(wide);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        })
    };
    publisher.await.unwrap();
    churn.await.unwrap();
    let mut lines = Vec::new();
    let deadline = Instant::now() + WITHIN;
    while lines.len() <= LINES {
        // One more than was sent is waited for a while: a line that arrived twice.
        let wait = if lines.len() < LINES {
            deadline
        } else {
            Instant::now() + Duration::from_millis(300)
        };
        match tokio::time::timeout_at(wait, on_c.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentSpoke { content, .. } = &env.message {
                    lines.push(content.clone());
                }
            }
            Ok(other) => panic!("the subscription ended or lagged: {other:?}"),
            Err(_) => break,
        }
    }
    lines.sort_by_key(|l| l[5..].parse::<usize>().unwrap());
    let sent: Vec<String> = (0..LINES).map(|n| format!("line {n}")).collect();
    let missing: Vec<&String> = sent.iter().filter(|l| !lines.contains(l)).collect();
    assert_eq!(
        lines.len(),
        LINES,
        "missing {missing:?}; C's bridge: {:?}",
        cc.stats()
    );
    assert_eq!(lines, sent);
    ca.leave().await;
    cc.leave().await;
    a.shutdown(Duration::from_secs(5));
    c.shutdown(Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_world_goes_on_after_nats_restarts() {
    let mut nats = nats::Server::start();
    let db = postgres::database();
    let (a, b) = (runtime(&db.url), runtime(&db.url));
    let (ca, cb) = (
        join(&a, &nats.url, "restart").await,
        join(&b, &nats.url, "restart").await,
    );
    let mut on_b = b.subscribe(Filter::all().kinds([MessageKind::AgentSpawned]));
    eventually(|| cb.stats().patterns >= 1).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let first = a.spawn(agent("Before", 0.0)).unwrap();
    until(&mut on_b, |m| m.agent_id() == Some(first.as_str())).await;

    nats.restart();
    // Both reconnect (the client retries for ever) and subscribe again; until they have, a
    // spawn may go unseen, so spawn until one is seen on the other side.
    let deadline = Instant::now() + WITHIN;
    let mut n = 0;
    loop {
        assert!(
            Instant::now() < deadline,
            "nothing crossed after the restart"
        );
        n += 1;
        let after = a.spawn(agent(&format!("After {n}"), 1.0)).unwrap();
        let seen = tokio::time::timeout(Duration::from_millis(500), async {
            until(&mut on_b, |m| m.agent_id() == Some(after.as_str())).await
        })
        .await;
        if seen.is_ok() {
            break;
        }
    }
    assert!(ca.is_connected() && cb.is_connected());
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joining_fails_clearly() {
    let db = postgres::database();
    let a = runtime(&db.url);
    let bad = Cluster::join(a.clone(), ClusterConfig::new("nats://127.0.0.1:1", "w"))
        .await
        .err()
        .expect("no NATS there");
    assert!(bad.to_string().contains("nats://127.0.0.1:1"), "{bad}");
    let nats = nats::Server::start();
    let bad = Cluster::join(a.clone(), ClusterConfig::new(&nats.url, "my.world"))
        .await
        .err()
        .expect("a dot in a world name");
    assert!(bad.to_string().contains("'my.world'"), "{bad}");
    a.shutdown(Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_agent_started_twice_keeps_running_only_where_its_lease_is() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, b, c) = (runtime(&db.url), runtime(&db.url), runtime(&db.url));
    let lease = |rt: &Arc<Runtime>| {
        let mut config = ClusterConfig::new(&nats.url, "leases");
        config.lease = Duration::from_secs(1);
        Cluster::join(rt.clone(), config)
    };
    let (ca, cb) = (lease(&a).await.unwrap(), lease(&b).await.unwrap());
    // A third process, watching: it routes requests for Ada to A before and after.
    let cc = lease(&c).await.unwrap();
    let remote = cc.remote();
    let on_a = Some(ca.config().process_id.clone());
    let ada = a.spawn(agent("Ada", 0.0)).unwrap();
    a.flush().unwrap();
    // A holds Ada's lease (its loop renews at once when she starts).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut on_b = b.subscribe(Filter::all().kinds([MessageKind::AgentRemoved]));
    let mut removed_on_c = c.subscribe(Filter::all().kinds([MessageKind::AgentRemoved]));
    eventually(|| remote.owner(&ada).map(|p| p.to_string()) == on_a).await;
    // Someone resumes Ada on B as well: B finds the lease held by a live process and releases
    // her there, while she keeps running on A.
    let again = b
        .spawn(AgentConfig::from_json(&json!({"agent_id": ada.clone()})).unwrap())
        .unwrap();
    assert_eq!(again, ada);
    let (removed, origin) = until(&mut on_b, |m| m.agent_id() == Some(ada.as_str())).await;
    assert!(origin.is_none(), "released by B itself: {removed:?}");
    assert!(b.state(&ada).is_none());
    assert!(a.state(&ada).is_some(), "still running where the lease is");
    // C heard B announce her and take her back: she runs on A.
    let (_, origin) = until(&mut removed_on_c, |m| m.agent_id() == Some(ada.as_str())).await;
    assert_eq!(origin, Some(cb.config().process_id.clone()));
    assert_eq!(remote.owner(&ada).map(|p| p.to_string()), on_a);
    cc.leave().await;
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
    c.shutdown(Duration::from_secs(5));
}

/// A WebSocket client of one process's server: replies by `request_id`, the rest dropped.
struct Ws(
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
);

impl Ws {
    async fn connect(server: &agents_core::net::ServerHandle) -> Ws {
        let url = format!("ws://{}/ws", server.local_addr());
        Ws(tokio_tungstenite::connect_async(&url).await.unwrap().0)
    }

    async fn request(&mut self, mut request: serde_json::Value, id: i64) -> serde_json::Value {
        use futures_util::{SinkExt, StreamExt};
        request["request_id"] = json!(id);
        self.0
            .send(tokio_tungstenite::tungstenite::Message::text(
                request.to_string(),
            ))
            .await
            .unwrap();
        let deadline = Instant::now() + WITHIN;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.0.next())
                .await
                .expect("a reply in time")
                .unwrap()
                .unwrap();
            if let tokio_tungstenite::tungstenite::Message::Text(text) = frame {
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                if value["request_id"] == id {
                    return value;
                }
            }
        }
    }

    /// Asks for `agent_id`'s state until its process answers it (it has learned where the
    /// agent runs), 5 s at most.
    async fn wait_until_it_knows(&mut self, agent_id: &str) {
        let mut state = json!(null);
        for attempt in 0..100 {
            state = self
                .request(
                    json!({"type": "get_agent_state", "agent_id": agent_id}),
                    attempt,
                )
                .await;
            if state["type"] == "get_agent_state_response" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the process never learned where {agent_id} runs: {state}");
    }
}

fn serve(rt: &Arc<Runtime>, cluster: &Cluster) -> agents_core::net::ServerHandle {
    agents_core::net::Server::start_with_remote(
        rt.clone(),
        Arc::new(agents_core::tools::ToolRegistry::new()),
        agents_core::net::ServerConfig {
            bind: "127.0.0.1:0".parse().unwrap(),
            ..Default::default()
        },
        &Handle::current(),
        Some(cluster.remote()),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tasks_apps_and_campaigns_reach_the_agents_of_other_processes() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, b) = (runtime(&db.url), runtime(&db.url));
    let (ca, cb) = (
        join(&a, &nats.url, "placed").await,
        join(&b, &nats.url, "placed").await,
    );
    let (sa, sb) = (serve(&a, &ca), serve(&b, &cb));
    let (mut on_a, mut on_b) = (Ws::connect(&sa).await, Ws::connect(&sb).await);
    let mut removed_on_b = b.subscribe(Filter::all().kinds([MessageKind::AgentRemoved]));
    let ada = b.spawn(agent("Ada", 0.0)).unwrap();
    let bo = b.spawn(agent("Bo", 5.0)).unwrap();
    // A learns where they run.
    on_a.wait_until_it_knows(&ada).await;

    // complete_task from A for a task of B's agent: completed by B, whose agent knows at once.
    let assigned = on_a
        .request(
            json!({"type": "assign_task", "agent_id": ada, "task_name": "fetch water"}),
            200,
        )
        .await;
    assert_eq!(assigned["type"], "assign_task_response", "{assigned}");
    let task_id = assigned["task"]["id"].as_i64().unwrap();
    assert_eq!(b.memory().open_tasks(&ada).len(), 1);
    let done = on_a
        .request(json!({"type": "complete_task", "task_id": task_id}), 201)
        .await;
    assert_eq!(done["type"], "complete_task_response", "{done}");
    assert!(b.memory().open_tasks(&ada).is_empty(), "B's index follows");
    let again = on_a
        .request(json!({"type": "complete_task", "task_id": task_id}), 202)
        .await;
    assert_eq!(again["code"], "task_already_completed", "{again}");
    let unknown = on_a
        .request(json!({"type": "complete_task", "task_id": 987654}), 203)
        .await;
    assert_eq!(unknown["code"], "unknown_task", "{unknown}");

    // An app registered on A, Ada (of B) attached to it: B hands her over, she runs on A.
    let said = on_a
        .request(
            json!({"type": "send_message", "agent_id": ada, "content": "before the move"}),
            204,
        )
        .await;
    assert_eq!(said["type"], "send_message_response", "{said}");
    let app = json!({"type": "app_register", "app_id": "board",
        "actions": [{"name": "wave", "description": "Wave."}]});
    assert_eq!(
        on_a.request(app, 300).await["type"],
        "app_register_response"
    );
    let attached = on_a
        .request(
            json!({"type": "app_attach", "app_id": "board", "agent_id": ada}),
            301,
        )
        .await;
    assert_eq!(attached["type"], "app_attach_response", "{attached}");
    assert!(a.state(&ada).is_some(), "Ada runs on A now");
    assert!(b.state(&ada).is_none(), "and not on B");
    let (removed, origin) = until(&mut removed_on_b, |m| m.agent_id() == Some(ada.as_str())).await;
    assert!(origin.is_none(), "B stopped her itself: {removed:?}");
    assert_eq!(a.agent_app(&ada).unwrap().as_deref(), Some("board"));
    let lines = a.conversation(&ada, 50).unwrap();
    assert!(
        lines.iter().any(|l| l.content == "before the move"),
        "her memory came with her: {lines:?}"
    );
    // A request for her from B now goes to A.
    let state = on_b
        .request(json!({"type": "get_agent_state", "agent_id": ada}), 302)
        .await;
    assert_eq!(state["type"], "get_agent_state_response", "{state}");
    // Her lease stays with A (B's lease loop does not take her back).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(a.state(&ada).is_some() && b.state(&ada).is_none());

    // Bo plays an app on B: he is not taken from it.
    let cards = json!({"type": "app_register", "app_id": "cards",
        "actions": [{"name": "draw", "description": "Draw."}]});
    assert_eq!(
        on_b.request(cards, 400).await["type"],
        "app_register_response"
    );
    let bo_plays = on_b
        .request(
            json!({"type": "app_attach", "app_id": "cards", "agent_id": bo}),
            401,
        )
        .await;
    assert_eq!(bo_plays["type"], "app_attach_response", "{bo_plays}");
    let other = json!({"type": "app_register", "app_id": "dice"});
    assert_eq!(
        on_a.request(other, 402).await["type"],
        "app_register_response"
    );
    let refused = on_a
        .request(
            json!({"type": "app_attach", "app_id": "dice", "agent_id": bo}),
            403,
        )
        .await;
    assert_eq!(refused["code"], "app_attached", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("'cards'") && message.contains("detach it there first"),
        "{message}"
    );
    assert!(
        b.state(&bo).is_some() && a.state(&bo).is_none(),
        "Bo stays on B"
    );

    // A campaign loaded on B, its GM (running on A) brought to B for the turn.
    let loaded = on_b
        .request(
            json!({"type": "campaign_load", "campaign": {"id": "camp_x"}}),
            500,
        )
        .await;
    assert_eq!(loaded["type"], "campaign_load_response", "{loaded}");
    let carl = a.spawn(agent("Carl", 9.0)).unwrap();
    on_b.wait_until_it_knows(&carl).await;
    let turn = on_b
        .request(
            json!({"type": "campaign_turn", "campaign_id": "camp_x", "gm_agent_id": carl,
                   "user_input": "Where are we?"}),
            502,
        )
        .await;
    assert_eq!(turn["type"], "campaign_turn_response", "{turn}");
    assert!(
        b.state(&carl).is_some() && a.state(&carl).is_none(),
        "the GM runs on B"
    );

    // An agent no process runs: this process's answer.
    let nobody = on_a
        .request(
            json!({"type": "app_attach", "app_id": "dice", "agent_id": "agent_999999"}),
            600,
        )
        .await;
    assert_eq!(nobody["code"], "unknown_agent", "{nobody}");

    sa.shutdown_async(Duration::from_secs(5)).await;
    sb.shutdown_async(Duration::from_secs(5)).await;
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
}

/// `list_agents` answers for the world: a client of either process sees every agent of both,
/// in id order, and pages through them each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn list_agents_lists_the_agents_of_every_process() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, b) = (runtime(&db.url), runtime(&db.url));
    let (ca, cb) = (
        join(&a, &nats.url, "listed").await,
        join(&b, &nats.url, "listed").await,
    );
    let (sa, sb) = (serve(&a, &ca), serve(&b, &cb));
    let (mut on_a, mut on_b) = (Ws::connect(&sa).await, Ws::connect(&sb).await);
    let mut ids = Vec::new();
    for (i, rt) in [&a, &b, &b, &a, &b].into_iter().enumerate() {
        ids.push(rt.spawn(agent(&format!("V{i}"), i as f64)).unwrap());
    }
    for id in &ids {
        on_a.wait_until_it_knows(id).await;
        on_b.wait_until_it_knows(id).await;
    }
    // Each process takes ids from its own block: the world's order is the ids' order.
    ids.sort_by(|x, y| agents_core::runtime::id_order(x, y));
    for client in [&mut on_a, &mut on_b] {
        let all = client.request(json!({"type": "list_agents"}), 500).await;
        let listed: Vec<&str> = all["agents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["agent_id"].as_str().unwrap())
            .collect();
        assert_eq!(listed, ids, "{all}");
        assert_eq!(all["next_cursor"], json!(null));
        // Two at a time: every agent once, in order.
        let (mut paged, mut cursor) = (Vec::new(), json!(null));
        for page in 0..10 {
            let mut request = json!({"type": "list_agents", "limit": 2});
            if !cursor.is_null() {
                request["cursor"] = cursor.clone();
            }
            let reply = client.request(request, 510 + page).await;
            assert_eq!(reply["type"], "list_agents_response", "{reply}");
            for agent in reply["agents"].as_array().unwrap() {
                paged.push(agent["agent_id"].as_str().unwrap().to_string());
            }
            cursor = reply["next_cursor"].clone();
            if cursor.is_null() {
                break;
            }
        }
        assert_eq!(paged, ids);
    }
    let made_up = on_a
        .request(json!({"type": "list_agents", "cursor": "c-5"}), 530)
        .await;
    assert_eq!(made_up["code"], "invalid_request", "{made_up}");
    drop((on_a, on_b));
    sa.shutdown_async(Duration::from_secs(5)).await;
    sb.shutdown_async(Duration::from_secs(5)).await;
    ca.leave().await;
    cb.leave().await;
    a.shutdown(Duration::from_secs(2));
    b.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_process_that_leaves_hands_its_agents_to_the_others() {
    let nats = nats::Server::start();
    let db = postgres::database();
    let (a, b) = (runtime(&db.url), runtime(&db.url));
    // A long lease: the hand-over at leave does not wait for it to run out (B's next tick, a
    // third of it, takes the agents over).
    let lease = Duration::from_secs(12);
    let join_with = |rt: &Arc<Runtime>, name: &str| {
        let mut config = ClusterConfig::new(&nats.url, "leaving");
        config.lease = lease;
        config.process_id = name.to_string();
        Cluster::join(rt.clone(), config)
    };
    let (ca, cb) = (
        join_with(&a, "pa").await.unwrap(),
        join_with(&b, "pb").await.unwrap(),
    );
    let ada = a.spawn(agent("Ada", 0.0)).unwrap();
    let gone = a.spawn(agent("Gone", 2.0)).unwrap();
    a.send_message(&ada, "remember the well").unwrap();
    // Leases are taken at once when agents start; a terminated agent is not handed over.
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.terminate(&gone).unwrap();
    a.flush().unwrap();
    let mut spawned_on_b = b.subscribe(Filter::all().kinds([MessageKind::AgentSpawned]));
    let left = Instant::now();
    ca.leave().await;
    let (resumed, origin) = until(&mut spawned_on_b, |m| m.agent_id() == Some(ada.as_str())).await;
    assert!(origin.is_none(), "resumed by B itself: {resumed:?}");
    assert!(
        left.elapsed() < lease,
        "taken over before the lease would have run out: {:?}",
        left.elapsed()
    );
    assert!(b.state(&ada).is_some());
    assert!(a.state(&ada).is_none());
    let lines = b.conversation(&ada, 10).unwrap();
    assert!(
        lines.iter().any(|l| l.content == "remember the well"),
        "{lines:?}"
    );
    b.send_message(&ada, "and now?").unwrap();
    // The terminated agent stays terminated.
    tokio::time::sleep(lease / 3 + Duration::from_millis(500)).await;
    b.flush().unwrap();
    assert!(b.state(&gone).is_none());
    // Who ran Ada: pa, then pb.
    let history = postgres::query_text(
        &db.url,
        &format!("SELECT process FROM agent_state_history WHERE agent_id = '{ada}' ORDER BY id"),
    )
    .unwrap();
    let mut owners: Vec<Option<String>> = history.into_iter().map(|row| row[0].clone()).collect();
    owners.dedup();
    assert_eq!(
        owners,
        vec![Some("pa".to_string()), Some("pb".to_string())],
        "one hand-over"
    );
    cb.leave().await;
    a.shutdown(Duration::from_secs(5));
    b.shutdown(Duration::from_secs(5));
}
