//! Three `agents-server serve --cluster` processes on one real NATS server and one real
//! PostgreSQL database (both started by the test): a client of any process sees the agents
//! spawned on every process, ids never collide, requests about an agent of another process are
//! answered by it, `/healthz` and `/readyz` answer for an orchestrator, a NATS restart is
//! reported unready, then ready again, with events crossing afterwards, and the agents of a
//! killed process are reported unreachable.

mod support;

use std::time::Duration;

use agents_testkit::{nats, postgres};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use support::server::ServerProc;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

const WITHIN: Duration = Duration::from_secs(15);

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A protocol client that keeps what it did not wait for yet (an event may come before the
/// reply a test waits for).
struct Client {
    ws: Ws,
    kept: Vec<Value>,
}

impl Client {
    async fn connect(server: &ServerProc) -> Client {
        let (ws, _) = tokio_tungstenite::connect_async(server.url())
            .await
            .expect("connect");
        Client {
            ws,
            kept: Vec::new(),
        }
    }

    /// The first message (kept or new) `pick` accepts.
    async fn next(&mut self, mut pick: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.kept.iter().position(&mut pick) {
            return self.kept.remove(i);
        }
        let deadline = Instant::now() + WITHIN;
        loop {
            let frame = match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Ok(frame) => frame.expect("connection open").expect("a frame"),
                Err(_) => {
                    let kept: Vec<String> = self
                        .kept
                        .iter()
                        .map(|v| format!("{} {}", v["type"], v["agent_id"]))
                        .collect();
                    panic!("nothing matched within {WITHIN:?}; kept: {kept:?}")
                }
            };
            if let Message::Text(text) = frame {
                let value: Value = serde_json::from_str(&text).expect("JSON");
                if pick(&value) {
                    return value;
                }
                self.kept.push(value);
            }
        }
    }

    /// Sends `request` with `request_id` and returns the reply.
    async fn request(&mut self, mut request: Value, request_id: i64) -> Value {
        request["request_id"] = json!(request_id);
        self.ws
            .send(Message::text(request.to_string()))
            .await
            .unwrap();
        self.next(|v| v["request_id"] == request_id).await
    }

    async fn spawn(&mut self, name: &str, request_id: i64) -> String {
        let request = json!({"type": "agent_spawn_request",
            "agent_config": {"name": name, "role": "villager", "idle_think_seconds": 600,
                             "thinking_seconds": 0.05, "speaking_seconds": 0.05}});
        let reply = self.request(request, request_id).await;
        assert_eq!(reply["type"], "agent_spawn_response", "{reply}");
        reply["agent_id"].as_str().expect("agent_id").to_string()
    }

    async fn spawned(&mut self, agent_id: &str) {
        self.next(|v| v["type"] == "agent_spawned" && v["agent_id"] == agent_id)
            .await;
    }
}

fn serve(db: &str, nats: &str, name: &str) -> ServerProc {
    support::cluster::serve(db, nats, "e2e", name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_serve_one_world() {
    let mut nats = nats::Server::start();
    let db = postgres::database();
    let servers: Vec<ServerProc> = ["p1", "p2", "p3"]
        .iter()
        .map(|name| serve(&db.url, &nats.url, name))
        .collect();
    for (server, name) in servers.iter().zip(["p1", "p2", "p3"]) {
        server
            .wait_log(&format!("joined world 'e2e' on {} as {name}", nats.url))
            .await;
        assert_eq!(server.get("/healthz").await, (200, json!({"status": "ok"})));
        let (status, body) = server.get("/readyz").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body,
            json!({"status": "ready", "checks": {"runtime": "ok", "memory": "ok", "nats": "ok"},
                   "waiting_agents": {"count": 0, "reasons": {}}})
        );
    }
    let mut clients = Vec::new();
    for server in &servers {
        clients.push(Client::connect(server).await);
    }
    // Every client subscribes to everything (the default): give the bridges a moment to
    // listen for it.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // An agent on each process; each client sees all three.
    let mut ids = Vec::new();
    for (n, client) in clients.iter_mut().enumerate() {
        ids.push(client.spawn(&format!("Villager {n}"), 100 + n as i64).await);
    }
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 3, "one id space: {ids:?}");
    for client in clients.iter_mut() {
        for id in &ids {
            client.spawned(id).await;
        }
    }

    // Requests about an agent of another process are answered by that process: a line to the
    // agent on p2 from a client of p1 is acknowledged, and the agent's answer reaches p1.
    let said = clients[0]
        .request(
            json!({"type": "send_message", "agent_id": ids[1], "content": "Hello from p1"}),
            300,
        )
        .await;
    assert_eq!(said["type"], "send_message_response", "{said}");
    clients[0]
        .next(|v| v["type"] == "agent_speech" && v["agent_id"] == ids[1].as_str())
        .await;
    // The request can be followed through both processes' logs by its trace id.
    servers[0].wait_log("trace_id=p1-1 from=p1 to=p2").await;
    servers[1].wait_log("trace_id=p1-1 from=p1 to=p2").await;
    servers[1].wait_log("answering a routed request").await;
    let state = clients[0]
        .request(json!({"type": "get_agent_state", "agent_id": ids[2]}), 301)
        .await;
    assert_eq!(state["type"], "get_agent_state_response", "{state}");
    assert_eq!(state["agent"]["name"], "Villager 2");
    // p3's agent, terminated from p1: gone everywhere.
    let gone = clients[0]
        .request(
            json!({"type": "agent_terminate_request", "agent_id": ids[2]}),
            302,
        )
        .await;
    assert_eq!(gone["type"], "agent_terminate_response", "{gone}");
    clients[1]
        .next(|v| v["type"] == "agent_removed" && v["agent_id"] == ids[2].as_str())
        .await;
    let unknown = clients[0]
        .request(json!({"type": "get_agent_state", "agent_id": ids[2]}), 303)
        .await;
    assert_eq!(unknown["code"], "unknown_agent", "{unknown}");

    // NATS goes away: every process says it is not ready (and still alive), then recovers.
    nats.stop();
    for server in &servers {
        let deadline = Instant::now() + WITHIN;
        loop {
            let (status, body) = server.get("/readyz").await;
            if status == 503 {
                assert_eq!(body["status"], "unready");
                assert_eq!(body["checks"]["memory"], "ok");
                assert!(
                    body["checks"]["nats"]
                        .as_str()
                        .unwrap()
                        .contains("not connected")
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "still ready without NATS: {body}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(server.get("/healthz").await.0, 200);
    }
    nats.restart();
    for server in &servers {
        let deadline = Instant::now() + WITHIN;
        while server.get("/readyz").await.0 != 200 {
            assert!(
                Instant::now() < deadline,
                "not ready again after NATS came back"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = clients[2].spawn("After the restart", 200).await;
    clients[0].spawned(&after).await;
    clients[1].spawned(&after).await;

    // Load on p2's agent from a client of p3, before, while and after p2 is killed (SIGKILL):
    // every line acknowledged (committed) must be in the agent's memory afterwards; requests
    // for it fail clearly while it has no process, they do not hang; once its lease expires
    // (3 s), another process resumes it with what it had acknowledged.
    let mut loader = Client::connect(&servers[2]).await;
    let target = ids[1].clone();
    let acked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (acked, stop) = (acked.clone(), stop.clone());
        tokio::spawn(async move {
            let (mut acknowledged, mut refused) = (Vec::new(), Vec::new());
            for n in 0.. {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let content = format!("load line {n}");
                let said = loader
                    .request(
                        json!({"type": "send_message", "agent_id": target, "content": content}),
                        10_000 + n,
                    )
                    .await;
                if said["type"] == "send_message_response" {
                    acknowledged.push(content);
                    acked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                } else {
                    refused.push(said);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (acknowledged, refused)
        })
    };
    let acked_now = || acked.load(std::sync::atomic::Ordering::SeqCst);
    let deadline = Instant::now() + WITHIN;
    while acked_now() < 10 {
        assert!(Instant::now() < deadline, "p2 was up: lines acknowledged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut servers = servers;
    let mut p2 = servers.remove(1);
    let _ = p2.child.kill();
    let _ = p2.child.wait();
    let killed_at = acked_now();
    let lost = clients[0]
        .request(json!({"type": "get_agent_state", "agent_id": ids[1]}), 400)
        .await;
    assert_eq!(lost["code"], "agent_unreachable", "{lost}");
    assert!(lost["message"].as_str().unwrap().contains("p2"), "{lost}");
    let resumed = clients[0]
        .next(|v| v["type"] == "agent_spawned" && v["agent_id"] == ids[1].as_str())
        .await;
    assert_eq!(resumed["resumed"], true, "{resumed}");
    // The load goes on on its new process.
    let deadline = Instant::now() + WITHIN;
    while acked_now() < killed_at + 10 {
        assert!(
            Instant::now() < deadline,
            "lines acknowledged again after the takeover"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (acknowledged, refused) = load.await.unwrap();
    for said in &refused {
        assert_eq!(said["code"], "agent_unreachable", "{said}");
    }
    let state = clients[0]
        .request(json!({"type": "get_agent_state", "agent_id": ids[1]}), 401)
        .await;
    assert_eq!(state["type"], "get_agent_state_response", "{state}");
    let said = clients[0]
        .request(
            json!({"type": "get_conversation", "agent_id": ids[1], "limit": 500}),
            402,
        )
        .await;
    let lines = said["messages"].as_array().expect("messages");
    assert!(lines.len() < 500, "the whole conversation fits one page");
    for content in acknowledged
        .iter()
        .map(String::as_str)
        .chain(["Hello from p1"])
    {
        assert!(
            lines.iter().any(|l| l["content"] == content),
            "the acknowledged line {content:?} is kept: {said}"
        );
    }
    // The state history says who ran the agent when: p2 until it was killed, then one other
    // process — never two at once.
    let history = postgres::query_text(
        &db.url,
        &format!(
            "SELECT process, timestamp FROM agent_state_history WHERE agent_id = '{}' ORDER BY id",
            ids[1]
        ),
    )
    .unwrap();
    let runs: Vec<(String, String)> = history
        .into_iter()
        .map(|row| (row[0].clone().expect("process"), row[1].clone().unwrap()))
        .collect();
    let mut owners: Vec<&str> = runs.iter().map(|(p, _)| p.as_str()).collect();
    owners.dedup();
    assert_eq!(owners.len(), 2, "one hand-over: {owners:?}");
    assert_eq!(owners[0], "p2", "{owners:?}");
    assert!(owners[1] == "p1" || owners[1] == "p3", "{owners:?}");
    eprintln!(
        "load: {} lines acknowledged, {} refused while the agent had no process; \
         state history: {} changes, {owners:?}",
        acknowledged.len(),
        refused.len(),
        runs.len()
    );
    let last_on_p2 = runs.iter().rfind(|(p, _)| p == "p2").unwrap();
    let first_after = runs.iter().find(|(p, _)| p != "p2").unwrap();
    assert!(
        last_on_p2.1 <= first_after.1,
        "p2's last change {last_on_p2:?} comes before the new owner's first {first_after:?}"
    );
    // It runs on exactly one of the two processes left: each one's list of the world has it
    // once.
    for (n, i) in [0usize, 2].into_iter().enumerate() {
        let listed = clients[i]
            .request(json!({"type": "list_agents"}), 500 + n as i64)
            .await;
        let agents = listed["agents"].as_array().expect("agents");
        let running = agents
            .iter()
            .filter(|a| a["agent_id"] == ids[1].as_str())
            .count();
        assert_eq!(running, 1, "the agent runs once: {listed}");
    }
    for mut server in servers {
        server.terminate();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_needs_a_shared_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(support::server_bin())
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--cluster",
            "nats://127.0.0.1:1",
        ])
        .arg("--db")
        .arg(dir.path().join("local.db"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--cluster needs"), "{stderr}");
    assert!(stderr.contains("postgres://"), "{stderr}");
}
