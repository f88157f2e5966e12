//! The app bridge over a real WebSocket on loopback: a client registers an app and handles its
//! actions while a scripted agent plays it; events, the human's actions, the human's chat lines
//! and the control mode from the client; the session; bad input; and the app unregistered (its
//! agent told) when the registering connection closes.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::*;
use crate::runtime::RuntimeOptions;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

async fn send(ws: &mut Ws, value: Value) {
    ws.send(Message::Text(value.to_string().into()))
        .await
        .unwrap();
}

/// A client connection and the messages it received but no one has asked for yet.
pub(super) struct Client {
    pub(super) ws: Ws,
    pub(super) backlog: Vec<Value>,
}

impl Client {
    pub(super) async fn send(&mut self, value: Value) {
        send(&mut self.ws, value).await
    }

    /// The first message, kept or new, that `pick` accepts (others are kept for later asks),
    /// within 10 s: replies and pushed messages may come in any order.
    pub(super) async fn until(&mut self, mut pick: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&mut pick) {
            return self.backlog.remove(i);
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let next = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "the expected message did not come; kept: {:?}",
                        self.backlog
                    )
                });
            match next {
                Some(Ok(Message::Text(text))) => {
                    let value: Value = serde_json::from_str(&text).unwrap();
                    if pick(&value) {
                        return value;
                    }
                    self.backlog.push(value);
                }
                Some(Ok(_)) => continue,
                other => panic!("the connection ended: {other:?}"),
            }
        }
    }
}

pub(super) fn of_type(kind: &'static str) -> impl FnMut(&Value) -> bool {
    move |v| v["type"] == kind
}

#[test]
fn a_client_registers_an_app_that_a_scripted_agent_plays() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = RuntimeOptions::with_database(dir.path().join("apps.db"));
    options.idle_think_seconds = 1000.0;
    options.thinking_seconds = 0.0;
    let runtime = Arc::new(Runtime::start(options).unwrap());
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
    let url = format!("ws://{}/ws", server.local_addr());
    let agent_id = client.block_on(async {
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let mut ws = Client {
            ws,
            backlog: Vec::new(),
        };
        ws.until(of_type("welcome")).await;
        ws.send(json!({"type": "subscribe", "events": []})).await;
        ws.until(of_type("subscribe_response")).await;

        // Bad params are refused, naming the action and the field.
        ws.send(
            json!({"type": "app_register", "request_id": 1, "app_id": "board",
            "actions": [{"name": "place", "params": {"row": "integr"}}]}),
        )
        .await;
        let e = ws.until(of_type("error")).await;
        assert_eq!(e["code"], "invalid_config");
        assert_eq!(e["request_id"], 1);
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with("action 'place': params.row"),
            "{e}"
        );

        ws.send(
            json!({"type": "app_register", "request_id": 2, "app_id": "board",
            "role_prompt": "You play O.", "state": {"moves": 0},
            "actions": [{"name": "place", "description": "Place mark", "params": {
                "type": "object",
                "properties": {"row": {"type": "integer", "minimum": 0, "maximum": 2},
                               "col": {"type": "integer", "minimum": 0, "maximum": 2}},
                "required": ["row", "col"], "additionalProperties": false}}]}),
        )
        .await;
        let registered = ws.until(of_type("app_register_response")).await;
        assert_eq!(registered["tools"][0]["name"], "place");
        ws.send(json!({"type": "agent_spawn_request", "request_id": 3,
            "agent_config": {"name": "Ivy", "role": "the innkeeper"}}))
            .await;
        let spawned = ws.until(of_type("agent_spawn_response")).await;
        let agent_id = spawned["agent_id"].as_str().unwrap().to_string();
        ws.send(
            json!({"type": "app_attach", "request_id": 4, "app_id": "board",
            "agent_id": agent_id}),
        )
        .await;
        ws.until(of_type("app_attach_response")).await;

        // The agent plays: each action comes here; each answer with a new state brings the
        // next one (static mode).
        for n in 1..=3 {
            let action = ws.until(of_type("app_action")).await;
            assert_eq!(action["app_id"], "board");
            assert_eq!(action["name"], "place");
            assert_eq!(action["by"], "agent");
            let row = action["params"]["row"].as_i64().unwrap();
            assert!((0..=2).contains(&row), "{action}");
            ws.send(json!({"type": "app_action_result", "request_id": 10 + n,
                "app_id": "board", "action_id": action["action_id"],
                "result": format!("move {n}"), "state": {"moves": n}}))
                .await;
            let done = ws.until(of_type("app_action_result_response")).await;
            assert_eq!(done["action_id"], action["action_id"]);
        }
        // Stop the agent from acting: the human takes over.
        ws.send(
            json!({"type": "app_set_control_mode", "request_id": 20, "app_id": "board",
            "control_mode": "human"}),
        )
        .await;
        ws.until(of_type("app_set_control_mode_response")).await;

        // The human acts: the action comes here too, and the reply once it is answered.
        ws.send(
            json!({"type": "app_human_action", "request_id": 21, "app_id": "board",
            "name": "place", "params": {"row": 2, "col": 2}}),
        )
        .await;
        let action = ws
            .until(|v| v["type"] == "app_action" && v["by"] == "human")
            .await;
        ws.send(
            json!({"type": "app_action_result", "request_id": 22, "app_id": "board",
            "action_id": action["action_id"], "result": "X at 2,2"}),
        )
        .await;
        let human = ws.until(of_type("app_human_action_response")).await;
        assert_eq!(human["request_id"], 21);
        assert_eq!(human["action"]["ok"], true);
        assert_eq!(human["action"]["result"], "X at 2,2");

        // Refusals with the spec's texts.
        ws.send(
            json!({"type": "app_set_control_mode", "request_id": 23, "app_id": "board",
            "control_mode": "agent"}),
        )
        .await;
        ws.until(of_type("app_set_control_mode_response")).await;
        ws.send(
            json!({"type": "app_human_action", "request_id": 24, "app_id": "board",
            "name": "place", "params": {"row": 0, "col": 0}}),
        )
        .await;
        let refused = ws
            .until(|v| v["type"] == "error" && v["request_id"] == 24)
            .await;
        assert_eq!(refused["code"], "action_refused");
        assert_eq!(refused["message"], "Agent is in control");
        ws.send(
            json!({"type": "app_set_control_mode", "request_id": 25, "app_id": "board",
            "control_mode": "human"}),
        )
        .await;
        ws.until(of_type("app_set_control_mode_response")).await;

        // Events and labels.
        ws.send(
            json!({"type": "app_event", "request_id": 26, "app_id": "board",
            "name": "roundEnded", "payload": {"winner": "X"}}),
        )
        .await;
        let event = ws.until(of_type("app_event_response")).await;
        assert_eq!(event["text"], "Event: roundEnded — { winner: X }");
        ws.send(
            json!({"type": "app_set_context", "request_id": 27, "app_id": "board",
            "human_label": "⚔️ Combat: Lv.15 Goblin"}),
        )
        .await;
        let chat = ws
            .until(|v| v["type"] == "app_chat" && v["text"] == "🎮 ⚔️ Combat: Lv.15 Goblin")
            .await;
        assert_eq!(chat["role"], "system");

        // The session holds it all.
        ws.send(json!({"type": "get_app_session", "request_id": 28, "app_id": "board"}))
            .await;
        let session = ws.until(of_type("get_app_session_response")).await;
        let session = &session["session"];
        assert_eq!(session["agent_id"], agent_id);
        assert_eq!(session["control_mode"], "human");
        assert_eq!(session["state"], json!({"moves": 3}));
        let by: Vec<&str> = session["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["by"].as_str().unwrap())
            .collect();
        assert_eq!(by, ["agent", "agent", "agent", "human"]);
        assert_eq!(
            session["events"][0]["text"],
            "Event: roundEnded — { winner: X }"
        );
        assert!(
            session["chat"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["text"] == "Ivy joined")
        );

        // Garbage stays an error and the connection stays usable.
        ws.send(
            json!({"type": "app_event", "request_id": 29, "app_id": "nope",
            "name": "x"}),
        )
        .await;
        let e = ws.until(|v| v["request_id"] == 29).await;
        assert_eq!(e["code"], "unknown_app");
        ws.send(
            json!({"type": "app_action_result", "request_id": 30, "app_id": "board",
            "action_id": 999}),
        )
        .await;
        let e = ws.until(|v| v["request_id"] == 30).await;
        assert_eq!(e["code"], "unknown_action");
        ws.send(json!({"type": "app_set_control_mode", "request_id": 31,
            "app_id": "board", "control_mode": "pilot"}))
            .await;
        let e = ws.until(|v| v["request_id"] == 31).await;
        assert_eq!(e["code"], "invalid_request");
        // The connection closes: the app goes with it.
        ws.ws.close(None).await.unwrap();
        agent_id
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while runtime.app_session("board").is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the app outlived its connection"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(runtime.agent_app(&agent_id).unwrap(), None);
    let told = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        runtime
            .memory()
            .recent_conversation(&agent_id, 20)
            .unwrap()
            .iter()
            .any(|r| r.content == "The app 'board' closed; you are no longer playing it.")
    });
    assert!(told, "the agent was told");
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}

/// A runtime on a temporary database whose agents wait to be spoken to, and a server on
/// loopback in front of it.
fn serve(dir: &tempfile::TempDir) -> (Arc<Runtime>, ServerHandle) {
    let mut options = RuntimeOptions::with_database(dir.path().join("apps.db"));
    options.idle_think_seconds = 1000.0;
    options.thinking_seconds = 0.0;
    let runtime = Arc::new(Runtime::start(options).unwrap());
    let tools = Arc::new(ToolRegistry::with_game_tools());
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..ServerConfig::default()
    };
    let handle = runtime.handle().clone();
    let server = Server::start(runtime.clone(), tools, config, &handle).unwrap();
    (runtime, server)
}

#[test]
fn a_client_says_a_human_line_that_joins_the_chat_and_reaches_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let (runtime, server) = serve(&dir);
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = format!("ws://{}/ws", server.local_addr());
    client.block_on(async {
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let mut ws = Client {
            ws,
            backlog: Vec::new(),
        };
        let welcome = ws.until(of_type("welcome")).await;
        assert!(
            welcome["requests"]
                .as_array()
                .unwrap()
                .contains(&json!("app_human_says")),
            "{welcome}"
        );
        ws.send(json!({"type": "subscribe", "events": []})).await;
        ws.until(of_type("subscribe_response")).await;

        // The human holds the controls, so the agent is offered no action and only talks.
        ws.send(
            json!({"type": "app_register", "request_id": 1, "app_id": "board",
            "control_mode": "human", "role_prompt": "You play O.",
            "actions": [{"name": "place", "params": {"row": "int", "col": "int"}}]}),
        )
        .await;
        ws.until(of_type("app_register_response")).await;
        ws.send(json!({"type": "agent_spawn_request", "request_id": 2,
            "agent_config": {"name": "Ivy", "role": "the innkeeper"}}))
            .await;
        let spawned = ws.until(of_type("agent_spawn_response")).await;
        let agent_id = spawned["agent_id"].as_str().unwrap().to_string();
        ws.send(
            json!({"type": "app_attach", "request_id": 3, "app_id": "board",
            "agent_id": agent_id}),
        )
        .await;
        ws.until(of_type("app_attach_response")).await;

        // The line: replied to, pushed to the registering connection as a `human` chat line.
        let line = "Nice move! Now take the corner.";
        ws.send(
            json!({"type": "app_human_says", "request_id": 4, "app_id": "board",
            "text": line}),
        )
        .await;
        let reply = ws.until(|v| v["request_id"] == 4).await;
        assert_eq!(
            reply,
            json!({"type": "app_human_says_response", "request_id": 4, "app_id": "board"})
        );
        let chat = ws
            .until(|v| v["type"] == "app_chat" && v["role"] == "human")
            .await;
        assert_eq!(chat["app_id"], "board");
        assert_eq!(chat["text"], line);

        // The session keeps it.
        ws.send(json!({"type": "get_app_session", "request_id": 5, "app_id": "board"}))
            .await;
        let session = ws.until(of_type("get_app_session_response")).await;
        let human: Vec<&Value> = session["session"]["chat"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["role"] == "human")
            .collect();
        assert_eq!(human.len(), 1, "{session}");
        assert_eq!(human[0]["text"], line);

        // The agent got it as a message from the player: its conversation holds it (stored
        // with the line's inbox entry before the reply), and the agent answers in the chat.
        ws.send(json!({"type": "get_conversation", "request_id": 6, "agent_id": agent_id}))
            .await;
        let conversation = ws.until(|v| v["request_id"] == 6).await;
        assert!(
            conversation["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["content"] == line
                    && m["sender"] == "player_0"
                    && m["recipient"] == agent_id.as_str()),
            "{conversation}"
        );
        let answer = ws
            .until(|v| v["type"] == "app_chat" && v["role"] == "agent")
            .await;
        assert!(!answer["text"].as_str().unwrap().is_empty(), "{answer}");

        // Bad requests get their own errors and the connection stays usable.
        ws.send(
            json!({"type": "app_human_says", "request_id": 7, "app_id": "nope",
            "text": "hello?"}),
        )
        .await;
        let e = ws.until(|v| v["request_id"] == 7).await;
        assert_eq!(e["type"], "error");
        assert_eq!(e["code"], "unknown_app");
        assert_eq!(e["message"], "unknown app 'nope'");
        ws.send(json!({"type": "ping", "request_id": 8})).await;
        assert_eq!(ws.until(|v| v["request_id"] == 8).await["type"], "pong");

        let max = crate::limits::MAX_MESSAGE_CHARS;
        ws.send(
            json!({"type": "app_human_says", "request_id": 9, "app_id": "board",
            "text": "x".repeat(max + 1)}),
        )
        .await;
        let e = ws.until(|v| v["request_id"] == 9).await;
        assert_eq!(e["code"], "invalid_request");
        assert_eq!(
            e["message"],
            format!(
                "invalid app_human_says: text: is {} characters long; the limit is {max}",
                max + 1
            )
        );
        ws.send(
            json!({"type": "app_human_says", "request_id": 10, "app_id": "board",
            "text": 7}),
        )
        .await;
        let e = ws.until(|v| v["request_id"] == 10).await;
        assert_eq!(e["code"], "invalid_request");
        assert_eq!(
            e["message"],
            "invalid app_human_says: text: expected a string, found a number"
        );
        ws.send(json!({"type": "app_human_says", "request_id": 11, "app_id": "board"}))
            .await;
        let e = ws.until(|v| v["request_id"] == 11).await;
        assert_eq!(e["code"], "invalid_request");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("missing field `text`"),
            "{e}"
        );
        ws.send(
            json!({"type": "app_human_says", "request_id": 12, "app_id": "board",
            "text": "   "}),
        )
        .await;
        let e = ws.until(|v| v["request_id"] == 12).await;
        assert_eq!(e["code"], "invalid_message");
        assert_eq!(e["message"], "text must not be empty");

        // A line at the limit passes; none of the refused ones reached the chat.
        ws.send(
            json!({"type": "app_human_says", "request_id": 13, "app_id": "board",
            "text": "é".repeat(max)}),
        )
        .await;
        assert_eq!(
            ws.until(|v| v["request_id"] == 13).await["type"],
            "app_human_says_response"
        );
        ws.send(json!({"type": "get_app_session", "request_id": 14, "app_id": "board"}))
            .await;
        let session = ws.until(|v| v["request_id"] == 14).await;
        let human: Vec<&str> = session["session"]["chat"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["role"] == "human")
            .map(|l| l["text"].as_str().unwrap())
            .collect();
        assert_eq!(human, [line.to_string(), "é".repeat(max)]);

        // An app without an agent keeps the line in its chat only.
        ws.send(json!({"type": "app_detach", "request_id": 15, "app_id": "board"}))
            .await;
        ws.until(of_type("app_detach_response")).await;
        ws.send(
            json!({"type": "app_human_says", "request_id": 16, "app_id": "board",
            "text": "anyone there?"}),
        )
        .await;
        assert_eq!(
            ws.until(|v| v["request_id"] == 16).await["type"],
            "app_human_says_response"
        );
        ws.ws.close(None).await.unwrap();
    });
    assert!(
        runtime
            .memory()
            .recent_conversation(&runtime.list()[0].agent_id, 50)
            .unwrap()
            .iter()
            .all(|r| r.content != "anyone there?"),
        "a detached agent is not spoken to"
    );
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}
