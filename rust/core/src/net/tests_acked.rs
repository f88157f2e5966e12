//! Acknowledged means durable, over a real socket: a reply that reports a write is sent only
//! once the write is committed to the SQLite file, replies keep their request order behind a held
//! one, and a write that cannot be committed is answered with `database_error`.
//!
//! The commit is held back the way a slow disk or a checkpoint would: another connection to the
//! same file holds the write lock (`BEGIN IMMEDIATE`), so the memory's writer waits on it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rusqlite::Connection;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::*;
use crate::runtime::RuntimeOptions;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

struct Setup {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    runtime: Arc<Runtime>,
    server: ServerHandle,
    client: tokio::runtime::Runtime,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("acked.db");
    let runtime = Arc::new(Runtime::start(RuntimeOptions::with_database(&db)).unwrap());
    let tools = Arc::new(ToolRegistry::with_game_tools());
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..ServerConfig::default()
    };
    let handle = runtime.handle().clone();
    let server = Server::start(runtime.clone(), tools, config, &handle).unwrap();
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    Setup {
        _dir: dir,
        db,
        runtime,
        server,
        client,
    }
}

impl Setup {
    /// A connection past its welcome, subscribed to no events (only replies arrive).
    async fn connect(&self) -> Ws {
        let url = format!("ws://{}/ws", self.server.local_addr());
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let welcome = next_json(&mut ws).await;
        assert_eq!(welcome["type"], "welcome");
        send(
            &mut ws,
            json!({"type": "subscribe", "events": [], "request_id": "sub"}),
        )
        .await;
        assert_eq!(next_json(&mut ws).await["type"], "subscribe_response");
        ws
    }

    fn shutdown(self) {
        self.server.shutdown(Duration::from_secs(5));
        self.runtime.shutdown(Duration::from_secs(5));
    }
}

async fn send(ws: &mut Ws, value: Value) {
    ws.send(Message::Text(value.to_string().into()))
        .await
        .unwrap();
}

async fn next_json(ws: &mut Ws) -> Value {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => return serde_json::from_str(&text).unwrap(),
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

/// Whatever arrives within `window` (nothing, for a held reply).
async fn within(ws: &mut Ws, window: Duration) -> Option<Value> {
    match tokio::time::timeout(window, ws.next()).await {
        Err(_) => None,
        Ok(Some(Ok(Message::Text(text)))) => Some(serde_json::from_str(&text).unwrap()),
        Ok(other) => panic!("unexpected {other:?}"),
    }
}

/// Takes the database's write lock from another connection until dropped (rolled back).
fn hold_write_lock(db: &Path) -> Connection {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn
}

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

#[test]
fn replies_that_report_writes_wait_for_their_commit_and_keep_their_order() {
    let s = setup();
    s.client.block_on(async {
        let mut ws = s.connect().await;
        // A first spawn: the id reservations are committed, the agent runs.
        send(&mut ws, json!({"type": "agent_spawn_request", "agent_config": {}, "request_id": 1})).await;
        let first = next_json(&mut ws).await;
        assert_eq!(first["type"], "agent_spawn_response", "{first}");
        let agent = first["agent_id"].as_str().unwrap().to_string();

        let lock = hold_write_lock(&s.db);
        // Pipelined: three writes and a read behind them.
        send(&mut ws, json!({"type": "agent_spawn_request", "agent_config": {}, "request_id": 2})).await;
        send(
            &mut ws,
            json!({"type": "assign_task", "agent_id": agent, "task_name": "mend the fence", "request_id": 3}),
        )
        .await;
        send(
            &mut ws,
            json!({"type": "send_message", "agent_id": agent, "content": "hello there", "request_id": 4}),
        )
        .await;
        send(&mut ws, json!({"type": "ping", "request_id": 5})).await;
        // Nothing is acknowledged while the commit cannot happen, not even the ping queued
        // behind the writes.
        assert_eq!(within(&mut ws, Duration::from_millis(600)).await, None);
        assert_eq!(count(&s.db, "SELECT COUNT(*) FROM agents"), 1);

        drop(lock);
        let spawned = next_json(&mut ws).await;
        assert_eq!(
            (spawned["type"].as_str(), spawned["request_id"].as_i64()),
            (Some("agent_spawn_response"), Some(2)),
            "{spawned}"
        );
        // At reply time the rows are in the file.
        let second = spawned["agent_id"].as_str().unwrap();
        assert_eq!(
            count(&s.db, &format!("SELECT COUNT(*) FROM agents WHERE agent_id = '{second}'")),
            1
        );
        let assigned = next_json(&mut ws).await;
        assert_eq!(assigned["request_id"], 3, "{assigned}");
        let task_id = assigned["task"]["id"].as_i64().expect("a task id");
        assert_eq!(
            count(&s.db, &format!("SELECT COUNT(*) FROM agent_tasks WHERE id = {task_id}")),
            1
        );
        let sent = next_json(&mut ws).await;
        assert_eq!(sent["request_id"], 4, "{sent}");
        assert_eq!(
            count(
                &s.db,
                &format!(
                    "SELECT COUNT(*) FROM agent_conversations WHERE agent_id = '{agent}' AND content = 'hello there'"
                )
            ),
            1
        );
        let pong = next_json(&mut ws).await;
        assert_eq!((pong["type"].as_str(), pong["request_id"].as_i64()), (Some("pong"), Some(5)));
    });
    s.shutdown();
}

#[test]
fn reads_are_not_held_behind_unrelated_writes() {
    let s = setup();
    s.client.block_on(async {
        let mut writer = s.connect().await;
        let mut reader = s.connect().await;
        send(
            &mut writer,
            json!({"type": "agent_spawn_request", "agent_config": {}, "request_id": 1}),
        )
        .await;
        assert_eq!(next_json(&mut writer).await["type"], "agent_spawn_response");
        let lock = hold_write_lock(&s.db);
        send(
            &mut writer,
            json!({"type": "agent_spawn_request", "agent_config": {}, "request_id": 2}),
        )
        .await;
        // Another connection's ping and list are answered while that spawn waits.
        send(&mut reader, json!({"type": "ping", "request_id": "p"})).await;
        assert_eq!(next_json(&mut reader).await["type"], "pong");
        send(
            &mut reader,
            json!({"type": "list_agents", "request_id": "l"}),
        )
        .await;
        assert_eq!(next_json(&mut reader).await["type"], "list_agents_response");
        assert_eq!(within(&mut writer, Duration::from_millis(300)).await, None);
        drop(lock);
        assert_eq!(next_json(&mut writer).await["request_id"], 2);
    });
    s.shutdown();
}

#[test]
fn a_write_that_cannot_be_committed_is_answered_with_database_error() {
    let s = setup();
    s.client.block_on(async {
        let mut ws = s.connect().await;
        send(&mut ws, json!({"type": "agent_spawn_request", "agent_config": {}, "request_id": 1})).await;
        let agent = next_json(&mut ws).await["agent_id"].as_str().unwrap().to_string();
        send(
            &mut ws,
            json!({"type": "assign_task", "agent_id": agent, "task_name": "first", "request_id": 2}),
        )
        .await;
        let first = next_json(&mut ws).await["task"]["id"].as_i64().unwrap();
        // Someone else took the next task id in the file: the batch holding ours fails.
        Connection::open(&s.db)
            .unwrap()
            .execute(
                "INSERT INTO agent_tasks (id, agent_id, task_name, status, created_at)
                 VALUES (?1, 'x', 'intruder', 'assigned', 'now')",
                [first + 1],
            )
            .unwrap();
        send(
            &mut ws,
            json!({"type": "assign_task", "agent_id": agent, "task_name": "second", "request_id": 3}),
        )
        .await;
        let reply = next_json(&mut ws).await;
        assert_eq!(
            (reply["type"].as_str(), reply["code"].as_str(), reply["request_id"].as_i64()),
            (Some("error"), Some("database_error"), Some(3)),
            "{reply}"
        );
        // The connection still answers.
        send(&mut ws, json!({"type": "ping", "request_id": 4})).await;
        assert_eq!(next_json(&mut ws).await["type"], "pong");
    });
    s.shutdown();
}
