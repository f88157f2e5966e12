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

    /// Sends `value` (which carries a `request_id`) and returns its reply or `error`, keeping
    /// what arrives before it.
    pub(super) async fn request(&mut self, value: Value) -> Value {
        let id = value["request_id"].clone();
        self.send(value).await;
        self.until(|v| v["request_id"] == id).await
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

        // Refusals with the routing's fixed texts.
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
        // The agent may start a further move while it is in control (after its third result,
        // and when control goes back to it for the refusal above); those are its own, and
        // the three it played and the human's one are all there, in order.
        assert_eq!(by[..3], ["agent", "agent", "agent"], "{by:?}");
        assert_eq!(by.iter().filter(|b| **b == "human").count(), 1, "{by:?}");
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
        let e = ws
            .request(
                json!({"type": "app_event", "request_id": 29, "app_id": "nope",
            "name": "x"}),
            )
            .await;
        assert_eq!(e["code"], "unknown_app");
        let e = ws
            .request(
                json!({"type": "app_action_result", "request_id": 30, "app_id": "board",
            "action_id": 999}),
            )
            .await;
        assert_eq!(e["code"], "unknown_action");
        let e = ws
            .request(json!({"type": "app_set_control_mode", "request_id": 31,
            "app_id": "board", "control_mode": "pilot"}))
            .await;
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
pub(super) fn serve(dir: &tempfile::TempDir) -> (Arc<Runtime>, ServerHandle) {
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
        let reply = ws
            .request(
                json!({"type": "app_human_says", "request_id": 4, "app_id": "board",
            "text": line}),
            )
            .await;
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
        let conversation = ws
            .request(json!({"type": "get_conversation", "request_id": 6, "agent_id": agent_id}))
            .await;
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
        let e = ws
            .request(
                json!({"type": "app_human_says", "request_id": 7, "app_id": "nope",
            "text": "hello?"}),
            )
            .await;
        assert_eq!(e["type"], "error");
        assert_eq!(e["code"], "unknown_app");
        assert_eq!(e["message"], "unknown app 'nope'");
        assert_eq!(
            ws.request(json!({"type": "ping", "request_id": 8})).await["type"],
            "pong"
        );

        let max = crate::limits::MAX_MESSAGE_CHARS;
        let e = ws
            .request(
                json!({"type": "app_human_says", "request_id": 9, "app_id": "board",
            "text": "x".repeat(max + 1)}),
            )
            .await;
        assert_eq!(e["code"], "invalid_request");
        assert_eq!(
            e["message"],
            format!(
                "invalid app_human_says: text: is {} characters long; the limit is {max}",
                max + 1
            )
        );
        let e = ws
            .request(
                json!({"type": "app_human_says", "request_id": 10, "app_id": "board",
            "text": 7}),
            )
            .await;
        assert_eq!(e["code"], "invalid_request");
        assert_eq!(
            e["message"],
            "invalid app_human_says: text: expected a string, found a number"
        );
        let e = ws
            .request(json!({"type": "app_human_says", "request_id": 11, "app_id": "board"}))
            .await;
        assert_eq!(e["code"], "invalid_request");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("missing field `text`"),
            "{e}"
        );
        let e = ws
            .request(
                json!({"type": "app_human_says", "request_id": 12, "app_id": "board",
            "text": "   "}),
            )
            .await;
        assert_eq!(e["code"], "invalid_message");
        assert_eq!(e["message"], "text must not be empty");

        // A line at the limit passes; none of the refused ones reached the chat.
        assert_eq!(
            ws.request(
                json!({"type": "app_human_says", "request_id": 13, "app_id": "board",
            "text": "é".repeat(max)})
            )
            .await["type"],
            "app_human_says_response"
        );
        let session = ws
            .request(json!({"type": "get_app_session", "request_id": 14, "app_id": "board"}))
            .await;
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
        assert_eq!(
            ws.request(
                json!({"type": "app_human_says", "request_id": 16, "app_id": "board",
            "text": "anyone there?"})
            )
            .await["type"],
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

/// A client of `server` past its `welcome`, subscribed to the event types `events`.
pub(super) async fn connect(server: &ServerHandle, events: Value) -> Client {
    let url = format!("ws://{}/ws", server.local_addr());
    let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let mut client = Client {
        ws,
        backlog: Vec::new(),
    };
    client.until(of_type("welcome")).await;
    client
        .send(json!({"type": "subscribe", "events": events}))
        .await;
    client.until(of_type("subscribe_response")).await;
    client
}

/// An object schema with these properties, all required.
fn object_of(properties: Value) -> Value {
    let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// The app `app_id` with one action, `fill`, taking `params`.
fn fill_app(request_id: u64, app_id: &str, params: Value) -> Value {
    json!({"type": "app_register", "request_id": request_id, "app_id": app_id,
           "actions": [{"name": "fill", "description": "Fill it in", "params": params}]})
}

#[test]
fn hostile_action_schemas_are_refused_and_a_wild_allowed_one_is_still_played() {
    use crate::limits::{
        MAX_ACTION_PARAMS_BYTES, MAX_ACTION_PARAMS_DEPTH, MAX_SCHEMA_ITEMS, MAX_SCHEMA_MIN_LENGTH,
        MAX_SCHEMA_NUMBER,
    };
    let dir = tempfile::tempdir().unwrap();
    let (runtime, server) = serve(&dir);
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    client.block_on(async {
        let mut ws = connect(&server, json!(["agent_error"])).await;
        let schema_file = dir.path().join("integer.schema.json");
        std::fs::write(&schema_file, r#"{"type": "integer"}"#).unwrap();
        let mut deep = json!({"type": "integer"});
        for _ in 0..MAX_ACTION_PARAMS_DEPTH {
            deep = json!({"type": "array", "items": deep});
        }
        let many: serde_json::Map<String, Value> = (0..1000)
            .map(|i| (format!("field_{i}"), json!({"type": "integer"})))
            .collect();
        let hostile = [
            // Each of these crashed, filled or froze the server before.
            (
                json!({"a": {"type": "array", "minItems": 4e9}}),
                format!(
                    "params.properties.a.minItems: 4000000000.0 is over the limit; the limit \
                     is {MAX_SCHEMA_ITEMS}"
                ),
            ),
            (
                json!({"s": {"type": "string", "minLength": 2e8}}),
                format!(
                    "params.properties.s.minLength: 200000000.0 is over the limit; the limit \
                     is {MAX_SCHEMA_MIN_LENGTH}"
                ),
            ),
            (
                json!({"x": {"type": "number", "minimum": -1.7e308, "maximum": 1.7e308}}),
                format!(
                    "params.properties.x.minimum: -1.7e308 is out of range; a numeric bound is \
                     at most {MAX_SCHEMA_NUMBER} in magnitude"
                ),
            ),
            (
                json!({"n": {"type": "integer", "minimum": 3, "maximum": 1}}),
                "params.properties.n: minimum 3 and maximum 1 leave no value that fits".into(),
            ),
            (
                json!({"a": deep}),
                format!("levels deep; the limit is {MAX_ACTION_PARAMS_DEPTH}"),
            ),
            (
                Value::Object(many),
                format!("bytes of JSON; the limit is {MAX_ACTION_PARAMS_BYTES}"),
            ),
            // A schema names no file and no address to fetch: a real schema file is not read.
            (
                json!({"a": {"$ref": format!("file://{}", schema_file.display())}}),
                "params is not a valid JSON Schema".into(),
            ),
            (
                json!({"a": {"$ref": "http://127.0.0.1:9/schema.json"}}),
                "params is not a valid JSON Schema".into(),
            ),
        ];
        for (n, (properties, says)) in hostile.into_iter().enumerate() {
            ws.send(fill_app(n as u64, "wild", object_of(properties)))
                .await;
            let e = ws.until(|v| v["request_id"] == n).await;
            assert_eq!(e["code"], "invalid_config", "{e}");
            let message = e["message"].as_str().unwrap();
            assert!(
                message.starts_with("action 'fill': params") && message.contains(&says),
                "{says}: {e}"
            );
        }
        assert!(runtime.app_ids().is_empty());

        // At every limit at once: allowed, and the scripted agent plays it.
        let max = MAX_SCHEMA_NUMBER;
        let wild = object_of(json!({
            "n": {"type": "integer", "minimum": -max, "maximum": max},
            "x": {"type": "number", "exclusiveMinimum": -max, "exclusiveMaximum": max},
            "s": {"type": "string", "minLength": MAX_SCHEMA_MIN_LENGTH},
            "list": {"type": "array", "minItems": MAX_SCHEMA_ITEMS, "maxItems": MAX_SCHEMA_ITEMS,
                     "items": {"type": "integer", "minimum": 0, "maximum": 9}}}));
        let validator = jsonschema::validator_for(&wild).unwrap();
        ws.send(fill_app(20, "wild", wild)).await;
        ws.until(of_type("app_register_response")).await;

        // New actions over a limit are refused, and the old ones stay.
        let too_long = object_of(json!({"s": {"type": "string", "minLength": 5000}}));
        let e = ws
            .request(
                json!({"type": "app_set_context", "request_id": 21, "app_id": "wild",
            "actions": [{"name": "fill", "params": too_long}]}),
            )
            .await;
        assert_eq!(e["code"], "invalid_config");
        assert_eq!(
            e["message"],
            format!(
                "action 'fill': params.properties.s.minLength: 5000 is over the limit; the limit \
                 is {MAX_SCHEMA_MIN_LENGTH}"
            )
        );
        let kept = runtime.app_session("wild").unwrap().actions;
        assert_eq!(kept[0].params["properties"]["s"]["minLength"], 4000);

        ws.send(json!({"type": "agent_spawn_request", "request_id": 22,
            "agent_config": {"name": "Ivy", "role": "a clerk", "app_id": "wild"}}))
            .await;
        ws.until(of_type("agent_spawn_response")).await;
        let action = ws.until(of_type("app_action")).await;
        assert_eq!(action["name"], "fill");
        assert!(validator.is_valid(&action["params"]), "{action}");

        // An answer whose new actions break a limit is refused; the action still waits for a
        // good answer, and gets it.
        let e = ws
            .request(
                json!({"type": "app_action_result", "request_id": 23, "app_id": "wild",
            "action_id": action["action_id"], "result": "filled",
            "actions": [{"name": "fill", "params": too_long}]}),
            )
            .await;
        assert_eq!(e["code"], "invalid_config");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with("action 'fill': params.properties.s.minLength: 5000"),
            "{e}"
        );
        let done = ws
            .request(
                json!({"type": "app_action_result", "request_id": 24, "app_id": "wild",
            "action_id": action["action_id"], "result": "filled", "state": {"round": 1}}),
            )
            .await;
        assert_eq!(done["type"], "app_action_result_response", "{done}");
        // Static mode: the new state brings the agent's next action.
        let next = ws.until(of_type("app_action")).await;
        assert!(validator.is_valid(&next["params"]), "{next}");

        // Allowed keyword by keyword, but no arguments within a tool call's size fit it (10^9
        // integers): the agent's tries are refused, its decision ends with a brain error, and
        // it does not stay thinking.
        let item = |items: Value| {
            json!({"type": "array", "minItems": MAX_SCHEMA_ITEMS,
                                         "items": items})
        };
        let huge = object_of(json!({"cube": item(item(item(json!({"type": "integer"}))))}));
        ws.send(fill_app(30, "cube", huge)).await;
        ws.until(|v| v["request_id"] == 30).await;
        let rex = ws
            .request(json!({"type": "agent_spawn_request", "request_id": 31,
            "agent_config": {"name": "Rex", "role": "a clerk", "app_id": "cube"}}))
            .await;
        let rex = rex["agent_id"].as_str().unwrap().to_string();
        let error = ws
            .until(|v| v["type"] == "agent_error" && v["agent_id"] == rex.as_str())
            .await;
        assert_eq!(error["code"], "brain_invalid_reply", "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("invalid_args: Invalid arguments for fill: cube"),
            "{error}"
        );
        let mut n = 100;
        loop {
            ws.send(json!({"type": "get_agent_state", "request_id": n, "agent_id": rex}))
                .await;
            let state = ws.until(|v| v["request_id"] == n).await;
            if state["agent"]["state"] != "thinking" {
                assert_eq!(state["agent"]["state"], "idle", "{state}");
                break;
            }
            assert!(n < 200, "still thinking: {state}");
            n += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ws.ws.close(None).await.unwrap();
    });
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}

/// Waits until `pick` holds of the runtime, for up to 10 s.
async fn until_runtime(what: &str, mut pick: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !pick() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn an_app_belongs_to_the_connection_that_registered_it() {
    let dir = tempfile::tempdir().unwrap();
    let (runtime, server) = serve(&dir);
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    client.block_on(async {
        let mut a = connect(&server, json!([])).await;
        let mut b = connect(&server, json!([])).await;
        // The human holds the controls, so the agent never acts by itself here.
        a.send(
            json!({"type": "app_register", "request_id": 1, "app_id": "board",
            "control_mode": "human", "actions": [{"name": "place",
            "params": {"row": "int", "col": "int"}}]}),
        )
        .await;
        a.until(of_type("app_register_response")).await;
        a.send(json!({"type": "agent_spawn_request", "request_id": 2,
            "agent_config": {"name": "Ivy", "role": "a player"}}))
            .await;
        let ivy = a.until(of_type("agent_spawn_response")).await["agent_id"]
            .as_str()
            .unwrap()
            .to_string();

        // Every request that changes the app, from the other connection: refused, and nothing
        // of it happens.
        let refused = [
            json!({"type": "app_attach", "app_id": "board", "agent_id": ivy}),
            json!({"type": "app_detach", "app_id": "board"}),
            json!({"type": "app_set_context", "app_id": "board", "state": {"stolen": true},
                   "human_label": "B was here"}),
            json!({"type": "app_set_control_mode", "app_id": "board", "control_mode": "agent"}),
            json!({"type": "app_event", "app_id": "board", "name": "hijacked"}),
            json!({"type": "app_action_result", "app_id": "board", "action_id": 1,
                   "result": "forged"}),
            json!({"type": "app_human_action", "app_id": "board", "name": "place",
                   "params": {"row": 0, "col": 0}}),
            json!({"type": "app_human_says", "app_id": "board", "text": "I am the human now"}),
            json!({"type": "app_unregister", "app_id": "board"}),
            json!({"type": "agent_spawn_request",
                   "agent_config": {"name": "Mole", "role": "a spy", "app_id": "board"}}),
        ];
        // Every app request is either here or one of the two open to all.
        let covered: Vec<&str> = refused
            .iter()
            .map(|r| r["type"].as_str().unwrap())
            .collect();
        for kind in crate::protocol::REQUEST_TYPES {
            if kind.starts_with("app_") || kind.contains("_app") {
                assert!(
                    covered.contains(kind) || ["app_register", "get_app_session"].contains(kind),
                    "{kind}: is it refused to other connections? add it here"
                );
            }
        }
        for (n, mut request) in refused.into_iter().enumerate() {
            request["request_id"] = json!(10 + n);
            b.send(request.clone()).await;
            let e = b.until(|v| v["request_id"] == 10 + n).await;
            assert_eq!(e["type"], "error", "{request}: {e}");
            assert_eq!(e["code"], "app_not_owned", "{request}: {e}");
            assert_eq!(
                e["message"],
                "app 'board' was not registered by this connection: only its front end may \
                 change it (any connection may read it with get_app_session)"
            );
        }
        let session = runtime.app_session("board").unwrap();
        assert_eq!(session.agent_id, None);
        assert_eq!(session.state, Value::Null);
        assert_eq!(session.human_label, None);
        assert_eq!(session.control_mode, crate::apps::ControlMode::Human);
        assert!(session.chat.is_empty() && session.events.is_empty());
        assert!(session.history.is_empty());
        assert_eq!(runtime.list().len(), 1, "the spy agent was not spawned");

        // Reading stays open to all.
        let read = b
            .request(json!({"type": "get_app_session", "request_id": 30, "app_id": "board"}))
            .await;
        assert_eq!(read["session"]["app_id"], "board", "{read}");
        // Asking about an app nobody registered is still `unknown_app`.
        assert_eq!(
            b.request(
                json!({"type": "app_event", "request_id": 31, "app_id": "nope", "name": "x"})
            )
            .await["code"],
            "unknown_app"
        );

        // The owner does everything, the other connection sees none of it.
        let steps = [
            (
                json!({"type": "app_attach", "app_id": "board", "agent_id": ivy}),
                "app_attach_response",
            ),
            (
                json!({"type": "app_set_context", "app_id": "board", "state": {"turn": 1},
                    "human_label": "Round 1"}),
                "app_set_context_response",
            ),
            (
                json!({"type": "app_event", "app_id": "board", "name": "roundStarted"}),
                "app_event_response",
            ),
            (
                json!({"type": "app_human_says", "app_id": "board", "text": "Your move soon"}),
                "app_human_says_response",
            ),
        ];
        for (n, (mut request, answer)) in steps.into_iter().enumerate() {
            request["request_id"] = json!(40 + n);
            a.send(request).await;
            let reply = a.until(|v| v["request_id"] == 40 + n).await;
            assert_eq!(reply["type"], answer, "{reply}");
        }
        a.send(
            json!({"type": "app_human_action", "request_id": 50, "app_id": "board",
            "name": "place", "params": {"row": 1, "col": 1}}),
        )
        .await;
        let action = a.until(of_type("app_action")).await;
        assert_eq!(
            a.request(
                json!({"type": "app_action_result", "request_id": 51, "app_id": "board",
            "action_id": action["action_id"], "result": "X at 1,1"})
            )
            .await["type"],
            "app_action_result_response"
        );
        assert_eq!(
            a.until(|v| v["request_id"] == 50).await["action"]["result"],
            "X at 1,1"
        );
        assert_eq!(
            a.request(
                json!({"type": "app_set_control_mode", "request_id": 52, "app_id": "board",
            "control_mode": "copilot"})
            )
            .await["type"],
            "app_set_control_mode_response"
        );
        assert_eq!(
            a.request(json!({"type": "app_detach", "request_id": 53, "app_id": "board"}))
                .await["agent_id"],
            ivy
        );
        // B asks something to flush what it was sent: no app message among it.
        b.request(json!({"type": "ping", "request_id": 54})).await;
        assert!(
            b.backlog
                .iter()
                .all(|m| !m["type"].as_str().unwrap().starts_with("app_")),
            "{:?}",
            b.backlog
        );

        // The owner unregisters; another connection registers the same id: it is the new
        // owner's, and the old owner may not change it.
        a.request(json!({"type": "app_unregister", "request_id": 60, "app_id": "board"}))
            .await;
        b.send(json!({"type": "app_register", "request_id": 61, "app_id": "board"}))
            .await;
        b.until(of_type("app_register_response")).await;
        assert_eq!(
            a.request(
                json!({"type": "app_event", "request_id": 62, "app_id": "board", "name": "x"})
            )
            .await["code"],
            "app_not_owned"
        );

        // The game removes A's app and B registers its id: A's old registration gives it no
        // hold on B's app either.
        a.send(json!({"type": "app_register", "request_id": 63, "app_id": "den"}))
            .await;
        a.until(of_type("app_register_response")).await;
        runtime.unregister_app("den").unwrap();
        b.send(json!({"type": "app_register", "request_id": 64, "app_id": "den"}))
            .await;
        b.until(of_type("app_register_response")).await;
        assert_eq!(
            a.request(
                json!({"type": "app_set_context", "request_id": 65, "app_id": "den",
            "human_label": "mine again?"})
            )
            .await["code"],
            "app_not_owned"
        );

        // An app the game registered itself is no connection's to change.
        let _outbound = runtime
            .register_app(
                crate::apps::AppConfig::new("lobby"),
                crate::apps::AppHandler::local(|_| async { crate::apps::ActionOutcome::default() }),
            )
            .unwrap();
        assert_eq!(
            b.request(
                json!({"type": "app_human_says", "request_id": 66, "app_id": "lobby",
            "text": "hello"})
            )
            .await["code"],
            "app_not_owned"
        );

        // A closes: its own app goes, B's apps of the ids A once held stay.
        a.send(json!({"type": "app_register", "request_id": 67, "app_id": "a-only"}))
            .await;
        a.until(of_type("app_register_response")).await;
        a.ws.close(None).await.unwrap();
        until_runtime("A's app outlived its connection", || {
            runtime.app_session("a-only").is_err()
        })
        .await;
        assert_eq!(runtime.app_ids(), ["board", "den", "lobby"]);
        for (n, app_id) in ["board", "den"].into_iter().enumerate() {
            b.send(
                json!({"type": "app_set_context", "request_id": 70 + n, "app_id": app_id,
                "human_label": "still mine"}),
            )
            .await;
            let reply = b.until(|v| v["request_id"] == 70 + n).await;
            assert_eq!(reply["type"], "app_set_context_response", "{reply}");
        }
        b.ws.close(None).await.unwrap();
    });
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}
