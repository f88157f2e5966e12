//! The protocol module's unit tests: request parsing and its error codes, dispatch against a real
//! runtime, bus events, filters, and the published schemas (current, and matching both the
//! examples of `docs/protocol.md` and the messages the server really sends).

use std::path::PathBuf;

use serde_json::{Value, json};
use tokio::runtime::Handle;

use super::events::{EventFilter, event_message, event_type};
use super::requests::{self as dispatch, ForConnection, Handled};
use super::*;
use crate::bus::BusMessage;
use crate::runtime::{AgentConfig, AgentState, Position, Runtime, RuntimeOptions};
use crate::tools::ToolRegistry;

// ---------------------------------------------------------------------------------------------
// helpers

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

fn err(text: &str) -> RequestError {
    match parse_request(text) {
        Ok(r) => panic!("{text} parsed as {r:?}, expected an error"),
        Err(e) => e,
    }
}

/// Validates `instance` against `schema`; the error lists every failure.
fn check(schema: &Value, instance: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema).map_err(|e| format!("bad schema: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// The schemas a message of this `type` must satisfy: the top-level one and its own.
fn schemas_for(message: &Value) -> Vec<Value> {
    let kind = message["type"].as_str().unwrap_or_default();
    let top = if REQUEST_TYPES.contains(&kind) {
        schema::client_request()
    } else {
        schema::server_message()
    };
    let own = schema::message_schema(kind)
        .unwrap_or_else(|| panic!("no schema for message type {kind:?}"));
    vec![top, own]
}

fn assert_valid(message: &Value) {
    for s in schemas_for(message) {
        if let Err(e) = check(&s, message) {
            panic!("{message} does not match the {} schema: {e}", s["title"]);
        }
    }
}

/// Serializes a server message as the server sends it and validates it.
fn wire(message: &ServerMessage) -> Value {
    let value: Value = serde_json::from_str(&to_text(message)).expect("to_text gives JSON");
    assert_valid(&value);
    value
}

fn reply(handled: Handled) -> ServerMessage {
    match handled {
        Handled::Reply(m) => m,
        other => panic!("expected a reply, got {other:?}"),
    }
}

struct Fixture {
    runtime: Runtime,
    tools: ToolRegistry,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = Runtime::start_on(
            Handle::current(),
            RuntimeOptions {
                database: dir.path().join("agents.db"),
                idle_think_seconds: 3600.0,
                ..RuntimeOptions::default()
            },
        )
        .expect("runtime starts");
        Fixture {
            runtime,
            tools: ToolRegistry::with_game_tools(),
            _dir: dir,
        }
    }

    /// Sends one frame as a client would: parse, dispatch, serialize, validate.
    fn send(&self, request: Value) -> Value {
        let (req, id) = parse_request(&request.to_string())
            .unwrap_or_else(|e| panic!("{request} does not parse: {e:?}"));
        assert_valid(&request);
        let message = reply(dispatch::handle(req, id, &self.runtime, &self.tools));
        wire(&message)
    }

    /// Like `send`, expecting an `error` with `code`.
    fn send_err(&self, request: Value, code: &str) -> Value {
        let out = self.send(request.clone());
        assert_eq!(out["type"], "error", "{request} → {out}");
        assert_eq!(out["code"], code, "{request} → {out}");
        out
    }

    fn spawn(&self, name: &str) -> String {
        let out = self.send(json!({"type": "agent_spawn_request", "agent_config": {"name": name}}));
        assert_eq!(out["type"], "agent_spawn_response", "{out}");
        out["agent_id"].as_str().expect("agent_id").to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// parse_request

#[test]
fn not_json() {
    for text in ["", "{", "nope", "{\"type\": \"ping\",}"] {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::NotJson, "{text:?}");
        assert_eq!(e.request_id, None);
    }
}

#[test]
fn not_an_object() {
    for (text, kind) in [
        ("[1, 2]", "an array"),
        ("42", "a number"),
        ("\"ping\"", "a string"),
        ("null", "null"),
        ("true", "a boolean"),
    ] {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::NotAnObject, "{text}");
        assert!(e.message.contains(kind), "{text}: {}", e.message);
    }
}

#[test]
fn missing_type() {
    let e = err(r#"{"request_id": 3}"#);
    assert_eq!(e.code, ProtocolErrorCode::MissingType);
    assert_eq!(
        e.request_id,
        Some(RequestId::Int(3)),
        "the id is still echoed"
    );
    for (text, kind) in [
        (r#"{"type": 5}"#, "a number"),
        (r#"{"type": null}"#, "null"),
        (r#"{"type": ["ping"]}"#, "an array"),
    ] {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::MissingType, "{text}");
        assert!(e.message.contains(kind), "{text}: {}", e.message);
    }
}

#[test]
fn unknown_type() {
    let e = err(r#"{"type": "agent_speech", "request_id": "x"}"#);
    assert_eq!(e.code, ProtocolErrorCode::UnknownType);
    assert!(e.message.contains("agent_speech"), "{}", e.message);
    assert!(
        e.message.contains("agent_spawn_request"),
        "lists the requests"
    );
    assert_eq!(e.request_id, Some(RequestId::Str("x".into())));
}

#[test]
fn invalid_request_names_the_field() {
    let cases = [
        (r#"{"type": "get_agent_state"}"#, "agent_id"),
        (
            r#"{"type": "get_agent_state", "agent_id": 7}"#,
            "agent_id: expected a string, found a number",
        ),
        (
            r#"{"type": "complete_task", "task_id": "one"}"#,
            "task_id: expected an integer, found a string",
        ),
        (
            r#"{"type": "send_message", "agent_id": "a", "content": "hi", "colour": 1}"#,
            "colour",
        ),
        (
            r#"{"type": "agent_spawn_request", "agent_config": {"name": "A", "nmae": "B"}}"#,
            "nmae",
        ),
        (r#"{"type": "ping", "extra": true}"#, "extra"),
        (
            r#"{"type": "agent_spawn_request", "agent_config": {"name": "A", "initial_position": {"x": "1", "y": 2}}}"#,
            "agent_config.initial_position",
        ),
        (
            r#"{"type": "subscribe", "events": ["agent_speech", 3]}"#,
            "events.1: expected a string, found a number",
        ),
    ];
    for (text, needle) in cases {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest, "{text}");
        assert!(e.message.contains(needle), "{text}: {}", e.message);
    }
    // A missing field is named.
    let e = err(r#"{"type": "assign_task", "agent_id": "a"}"#);
    assert!(e.message.contains("task_name"), "{}", e.message);
}

#[test]
fn bad_request_id() {
    for (text, kind) in [
        (r#"{"type": "ping", "request_id": 1.5}"#, "a number"),
        (r#"{"type": "ping", "request_id": true}"#, "a boolean"),
        (r#"{"type": "ping", "request_id": {"a": 1}}"#, "an object"),
        (r#"{"type": "ping", "request_id": [1]}"#, "an array"),
    ] {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest, "{text}");
        assert!(e.message.contains("request_id"), "{}", e.message);
        assert!(e.message.contains(kind), "{text}: {}", e.message);
        assert_eq!(e.request_id, None);
    }
    // Every reply echoes it: a string id is bounded.
    let long = format!(r#"{{"type": "ping", "request_id": "{}"}}"#, "x".repeat(129));
    let e = err(&long);
    assert_eq!(e.code, ProtocolErrorCode::InvalidRequest);
    assert_eq!(
        e.message,
        "request_id is 129 characters long; the limit is 128"
    );
    assert_eq!(e.request_id, None);
    let (_, id) = parse_request(&long.replace(&"x".repeat(129), &"x".repeat(128))).unwrap();
    assert!(id.is_some());
}

#[test]
fn request_ids_are_read_and_stripped() {
    let (r, id) = parse_request(r#"{"type": "ping", "request_id": "abc"}"#).unwrap();
    assert_eq!(r, ClientRequest::Ping(requests::Ping {}));
    assert_eq!(id, Some(RequestId::Str("abc".into())));
    let (_, id) = parse_request(r#"{"type": "ping", "request_id": -42}"#).unwrap();
    assert_eq!(id, Some(RequestId::Int(-42)));
    let (_, id) = parse_request(r#"{"type": "ping", "request_id": null}"#).unwrap();
    assert_eq!(id, None);
    let (r, id) = parse_request(r#"{"type": "get_agent_state", "agent_id": "agent_001"}"#).unwrap();
    assert_eq!(
        r,
        ClientRequest::GetAgentState(requests::GetAgentState {
            agent_id: "agent_001".into()
        })
    );
    assert_eq!(id, None);
}

#[test]
fn every_request_type_parses() {
    let examples = [
        json!({"type": "ping"}),
        json!({"type": "agent_spawn_request", "agent_config": {"name": "A", "cli_backend": "scripted"}}),
        json!({"type": "agent_terminate_request", "agent_id": "a"}),
        json!({"type": "get_agent_state", "agent_id": "a"}),
        json!({"type": "list_agents"}),
        json!({"type": "send_message", "agent_id": "a", "content": "hi"}),
        json!({"type": "assign_task", "agent_id": "a", "task_name": "t"}),
        json!({"type": "complete_task", "task_id": 1}),
        json!({"type": "get_conversation", "agent_id": "a", "limit": 5}),
        json!({"type": "get_tasks", "agent_id": "a"}),
        json!({"type": "get_state_history", "agent_id": "a"}),
        json!({"type": "get_agent_trace", "agent_id": "a", "limit": 3}),
        json!({"type": "get_token_usage"}),
        json!({"type": "set_token_budget", "agent_id": "a", "limit": 5000}),
        json!({"type": "set_agent_position", "agent_id": "a", "position": {"x": 1, "y": 2}}),
        json!({"type": "observe", "agent_id": "a", "text": "The door is locked."}),
        json!({"type": "finish_move", "agent_id": "a", "move_id": 1, "outcome": "blocked",
               "reason": "The door is locked."}),
        json!({"type": "list_stored_agents"}),
        json!({"type": "remember", "agent_id": "a", "memory": {"text": "The key is under the mat."}}),
        json!({"type": "recall", "agent_id": "a", "query": "key"}),
        json!({"type": "forget_memory", "agent_id": "a", "memory_id": 3}),
        json!({"type": "list_memories", "agent_id": "a"}),
        json!({"type": "list_tools"}),
        json!({"type": "call_tool", "name": "x", "arguments": {}}),
        json!({"type": "subscribe", "events": ["agent_speech"]}),
        json!({"type": "app_register", "app_id": "board", "mode": "static",
               "actions": [{"name": "place", "params": {"row": "int", "col": "int"}}]}),
        json!({"type": "app_unregister", "app_id": "board"}),
        json!({"type": "app_attach", "app_id": "board", "agent_id": "a"}),
        json!({"type": "app_detach", "app_id": "board"}),
        json!({"type": "app_set_context", "app_id": "board", "human_label": "Round 2"}),
        json!({"type": "app_set_control_mode", "app_id": "board", "control_mode": "copilot"}),
        json!({"type": "app_event", "app_id": "board", "name": "roundEnded",
               "payload": {"winner": "X"}}),
        json!({"type": "app_action_result", "app_id": "board", "action_id": 1,
               "result": "ok", "state": {"board": "X........"}}),
        json!({"type": "app_human_action", "app_id": "board", "name": "place",
               "params": {"row": 0, "col": 0}}),
        json!({"type": "app_human_says", "app_id": "board", "text": "Good game!"}),
        json!({"type": "get_app_session", "app_id": "board"}),
        json!({"type": "campaign_load", "path": "camp_0001/campaign.json"}),
        json!({"type": "campaign_tool_calls", "campaign_id": "camp_0001",
               "calls": [{"id": "call_1", "tool": "move_options", "args": {}}]}),
        json!({"type": "campaign_turn", "campaign_id": "camp_0001", "gm_agent_id": "a",
               "user_input": "Where can I go?", "actor_id": "pc_001"}),
        json!({"type": "campaign_state", "campaign_id": "camp_0001"}),
        json!({"type": "campaign_unload", "campaign_id": "camp_0001"}),
    ];
    assert_eq!(examples.len(), REQUEST_TYPES.len());
    for (example, kind) in examples.iter().zip(REQUEST_TYPES) {
        let (r, _) = parse_request(&example.to_string()).unwrap();
        assert_eq!(r.type_name(), *kind);
        assert_valid(example);
    }
}

#[test]
fn the_spec_spawn_request_parses_and_validates() {
    let spec = json!({
        "type": "agent_spawn_request",
        "agent_config": {
            "name": "Assistant",
            "role": "helper",
            "cli_backend": "claude",
            "initial_position": { "x": 10, "y": 10 }
        }
    });
    let (r, _) = parse_request(&spec.to_string()).unwrap();
    let ClientRequest::AgentSpawnRequest(requests::AgentSpawnRequest { agent_config }) = r else {
        panic!("not a spawn request: {r:?}");
    };
    assert_eq!(
        agent_config.brain.as_ref().and_then(|b| b.name()),
        Some("claude")
    );
    assert_eq!(
        agent_config.initial_position,
        Some(Position::new(10.0, 10.0))
    );
    assert_valid(&spec);
}

#[test]
fn request_errors_become_error_messages() {
    let e = err(r#"{"type": "nope", "request_id": 9}"#);
    let v = wire(&e.to_message());
    assert_eq!(v["type"], "error");
    assert_eq!(v["code"], "unknown_type");
    assert_eq!(v["request_id"], 9);
    let v = wire(&err("[]").to_message());
    assert_eq!(v["request_id"], Value::Null);
}

// ---------------------------------------------------------------------------------------------
// dispatch::handle against a real runtime

#[tokio::test]
async fn ping_echoes_string_and_integer_ids() {
    let f = Fixture::new();
    let out = f.send(json!({"type": "ping", "request_id": "r-1"}));
    assert_eq!(out, json!({"type": "pong", "request_id": "r-1"}));
    let out = f.send(json!({"type": "ping", "request_id": 77}));
    assert_eq!(out, json!({"type": "pong", "request_id": 77}));
    let out = f.send(json!({"type": "ping"}));
    assert_eq!(out, json!({"type": "pong", "request_id": null}));
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn agent_lifecycle_requests() {
    let f = Fixture::new();
    let out = f.send(json!({
        "type": "agent_spawn_request",
        "request_id": 1,
        "agent_config": {"name": "Mira", "role": "baker", "initial_position": {"x": 12, "y": 8}}
    }));
    assert_eq!(out["type"], "agent_spawn_response");
    assert_eq!(out["request_id"], 1);
    let id = out["agent_id"].as_str().unwrap().to_string();
    assert_eq!(id, "agent_001");

    let out = f.send(json!({"type": "get_agent_state", "agent_id": id, "request_id": "s"}));
    assert_eq!(out["type"], "get_agent_state_response");
    assert_eq!(out["request_id"], "s");
    assert_eq!(out["agent"]["agent_id"], id.as_str());
    assert_eq!(out["agent"]["name"], "Mira");
    assert_eq!(out["agent"]["role"], "baker");
    assert_eq!(out["agent"]["brain"], "scripted");
    assert_eq!(out["agent"]["position"], json!({"x": 12, "y": 8}));
    assert_eq!(out["agent"]["current_task"], Value::Null);

    let other = f.spawn("Bo");
    let out = f.send(json!({"type": "list_agents"}));
    assert_eq!(out["type"], "list_agents_response");
    let ids: Vec<&str> = out["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![id.as_str(), other.as_str()]);

    let out = f.send(json!({"type": "agent_terminate_request", "agent_id": other}));
    assert_eq!(out["type"], "agent_terminate_response");
    assert_eq!(out["agent_id"], other.as_str());
    f.send_err(
        json!({"type": "get_agent_state", "agent_id": other}),
        "unknown_agent",
    );

    let out = f.send(json!({"type": "list_stored_agents"}));
    assert_eq!(out["type"], "list_stored_agents_response");
    assert_eq!(out["agents"].as_array().unwrap().len(), 2);
    assert!(out["agents"][1]["removed_at"].is_string(), "{out}");
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn spawn_errors() {
    let f = Fixture::new();
    let id = f.spawn("Mira");
    let out = f.send_err(
        json!({"type": "agent_spawn_request", "request_id": "dup", "agent_config": {"agent_id": id}}),
        "already_running",
    );
    assert_eq!(out["request_id"], "dup");
    f.send_err(
        json!({"type": "agent_spawn_request", "agent_config": {"agent_id": "agent_999"}}),
        "unknown_agent",
    );
    let out = f.send_err(
        json!({"type": "agent_spawn_request", "agent_config": {"name": "X", "brain": "nope"}}),
        "unknown_brain",
    );
    assert!(out["message"].as_str().unwrap().contains("nope"), "{out}");
    let out = f.send_err(
        json!({"type": "agent_spawn_request", "agent_config": {"name": "X", "thinking_seconds": -1}}),
        "invalid_config",
    );
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("thinking_seconds"),
        "{out}"
    );
    f.send_err(
        json!({"type": "agent_terminate_request", "agent_id": "agent_404"}),
        "unknown_agent",
    );
    // A failed spawn allocates no id.
    assert_eq!(f.spawn("Next"), "agent_002");
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn a_client_that_owns_the_world_sets_positions() {
    let f = Fixture::new();
    let id = f.spawn("Mira");
    let out = f.send(json!({
        "type": "set_agent_position", "agent_id": id, "position": {"x": 412.5, "y": -96.25}
    }));
    assert_eq!(
        out,
        json!({"type": "set_agent_position_response", "request_id": null, "agent_id": id,
               "position": {"x": 412.5, "y": -96.25}})
    );
    let state = f.send(json!({"type": "get_agent_state", "agent_id": id}));
    assert_eq!(state["agent"]["position"], json!({"x": 412.5, "y": -96.25}));
    let seen =
        f.send(json!({"type": "observe", "agent_id": id, "text": "A cart blocks the road."}));
    assert_eq!(
        seen,
        json!({"type": "observe_response", "request_id": null, "agent_id": id})
    );
    f.send_err(
        json!({"type": "observe", "agent_id": id, "text": ""}),
        "invalid_message",
    );
    f.send_err(
        json!({"type": "set_agent_position", "agent_id": "agent_404", "position": {"x": 1, "y": 2}}),
        "unknown_agent",
    );
    let bad = parse_request(
        &json!({"type": "set_agent_position", "agent_id": id, "position": {"x": "far"}})
            .to_string(),
    )
    .unwrap_err();
    assert_eq!(bad.code, ProtocolErrorCode::InvalidRequest);
    assert!(bad.message.contains("position.x"), "{bad:?}");
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn messages_and_tasks() {
    let f = Fixture::new();
    let id = f.spawn("Mira");
    let out = f.send(json!({"type": "send_message", "agent_id": id, "content": "Good morning!"}));
    let message_id = out["message_id"].as_i64().expect("a message id");
    assert_eq!(
        out,
        json!({"type": "send_message_response", "request_id": null, "agent_id": id, "message_id": message_id})
    );
    let out = f.send(json!({
        "type": "send_message", "agent_id": id, "content": "hello", "sender": "player_7"
    }));
    assert_eq!(out["type"], "send_message_response");
    f.send_err(
        json!({"type": "send_message", "agent_id": id, "content": ""}),
        "invalid_message",
    );
    f.send_err(
        json!({"type": "send_message", "agent_id": "agent_404", "content": "hi"}),
        "unknown_agent",
    );

    let out = f.send(json!({"type": "assign_task", "agent_id": id, "task_name": "bake bread"}));
    assert_eq!(out["type"], "assign_task_response");
    assert_eq!(out["task"]["task_name"], "bake bread");
    assert_eq!(out["task"]["status"], "assigned");
    assert_eq!(out["task"]["agent_id"], id.as_str());
    let task_id = out["task"]["id"].as_i64().unwrap();
    f.send_err(
        json!({"type": "assign_task", "agent_id": id, "task_name": "   "}),
        "invalid_message",
    );
    f.send_err(
        json!({"type": "assign_task", "agent_id": "agent_404", "task_name": "x"}),
        "unknown_agent",
    );

    let out = f.send(json!({"type": "get_agent_state", "agent_id": id}));
    assert_eq!(out["agent"]["current_task"], "bake bread");
    assert_eq!(out["agent"]["current_task_id"], task_id);

    let out = f.send(json!({"type": "complete_task", "task_id": task_id, "request_id": 5}));
    assert_eq!(out["type"], "complete_task_response");
    assert_eq!(out["request_id"], 5);
    assert_eq!(out["task"]["status"], "completed");
    assert!(out["task"]["completed_at"].is_string());
    f.send_err(
        json!({"type": "complete_task", "task_id": task_id}),
        "task_already_completed",
    );
    f.send_err(
        json!({"type": "complete_task", "task_id": 987_654}),
        "unknown_task",
    );

    f.runtime.flush().expect("flush");
    let out = f.send(json!({"type": "get_tasks", "agent_id": id}));
    assert_eq!(out["type"], "get_tasks_response");
    assert_eq!(out["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(out["tasks"][0]["status"], "completed");

    // The agent records the line when it hears it (on its own task): give it a moment.
    let mut heard = false;
    for _ in 0..300 {
        f.runtime.flush().expect("flush");
        let out = f.send(json!({"type": "get_conversation", "agent_id": id}));
        assert_eq!(out["type"], "get_conversation_response");
        if out["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["content"] == "Good morning!")
        {
            heard = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(heard, "the conversation never showed the player's line");
    let out = f.send(json!({"type": "get_conversation", "agent_id": id, "limit": 1}));
    assert_eq!(out["messages"].as_array().unwrap().len(), 1);

    let out = f.send(json!({"type": "get_state_history", "agent_id": id, "limit": 10}));
    assert_eq!(out["type"], "get_state_history_response");
    assert!(out["transitions"].is_array());

    for kind in ["get_conversation", "get_tasks", "get_state_history"] {
        f.send_err(
            json!({"type": kind, "agent_id": "agent_404"}),
            "unknown_agent",
        );
    }
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn tools_over_the_protocol() {
    let f = Fixture::new();
    let out = f.send(json!({"type": "list_tools", "request_id": "t"}));
    assert_eq!(out["type"], "list_tools_response");
    let tools = out["tools"].as_array().unwrap();
    assert_eq!(tools.len(), f.tools.len());
    assert!(tools.iter().all(|t| t["name"].is_string()
        && t["description"].is_string()
        && t["parameters"].is_object()));

    let out = f.send(json!({"type": "call_tool", "name": "new_tic_tac_toe_game", "request_id": 1}));
    assert_eq!(out["type"], "call_tool_response");
    assert_eq!(out["request_id"], 1);
    assert_eq!(out["is_error"], false);
    let state = out["structured_content"]["state"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        out["content"][0].as_str().unwrap(),
        out["structured_content"].to_string()
    );

    let out = f.send(json!({
        "type": "call_tool", "name": "apply_tic_tac_toe_move",
        "arguments": {"state": state, "coord": "B2"}
    }));
    assert_eq!(out["is_error"], false, "{out}");
    let state = out["structured_content"]["state"]
        .as_str()
        .unwrap()
        .to_string();

    // An illegal move is a normal response with is_error, not an error message.
    let out = f.send(json!({
        "type": "call_tool", "name": "apply_tic_tac_toe_move", "request_id": "bad-move",
        "arguments": {"state": state, "coord": "B2"}
    }));
    assert_eq!(out["type"], "call_tool_response");
    assert_eq!(out["is_error"], true);
    assert_eq!(out["request_id"], "bad-move");
    assert_eq!(out["structured_content"]["reason"], "square_occupied");
    assert_eq!(out["structured_content"]["state"], state.as_str());

    let out = f.send_err(
        json!({"type": "call_tool", "name": "no_such_tool", "request_id": 3}),
        "unknown_tool",
    );
    assert_eq!(out["request_id"], 3);
    let out = f.send_err(
        json!({"type": "call_tool", "name": "apply_tic_tac_toe_move",
               "arguments": {"state": state, "coord": 5}}),
        "invalid_args",
    );
    assert!(out["message"].as_str().unwrap().contains("coord"), "{out}");
    // Arguments that are not an object are refused at the parse, before the tool is looked up.
    let e = err(r#"{"type": "call_tool", "name": "apply_tic_tac_toe_move", "arguments": [1]}"#);
    assert_eq!(e.code, ProtocolErrorCode::InvalidRequest);
    // Arguments too large for any tool: invalid_args naming the limit.
    let big = "x".repeat(crate::limits::MAX_TOOL_ARGUMENTS_BYTES);
    let out = f.send_err(
        json!({"type": "call_tool", "name": "apply_tic_tac_toe_move", "arguments": {"state": big}}),
        "invalid_args",
    );
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("the limit is 65536"),
        "{out}"
    );
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn subscribe_is_left_to_the_connection() {
    let f = Fixture::new();
    let (req, id) = parse_request(
        r#"{"type": "subscribe", "events": ["agent_speech"], "agents": ["agent_001"], "request_id": 4}"#,
    )
    .unwrap();
    assert_eq!(id, Some(RequestId::Int(4)));
    let handled = dispatch::handle(req, id, &f.runtime, &f.tools);
    assert!(
        matches!(
            &handled,
            Handled::Connection(ForConnection::Subscribe { events: Some(events), agents: Some(agents) })
                if events == &["agent_speech"] && agents == &["agent_001"]
        ),
        "{handled:?}"
    );
    let (req, _) = parse_request(r#"{"type": "subscribe"}"#).unwrap();
    let handled = dispatch::handle(req, None, &f.runtime, &f.tools);
    assert!(
        matches!(
            handled,
            Handled::Connection(ForConnection::Subscribe {
                events: None,
                agents: None
            })
        ),
        "{handled:?}"
    );
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

/// An embedding surface (the Godot classes) calls the same declaration: the typed reply, the
/// same refusals with the runtime's own code (the protocol maps it when it sends it), and no
/// answer for what only a connection finishes.
#[tokio::test]
async fn a_request_answered_directly_gives_its_typed_reply_and_keeps_its_code() {
    let f = Fixture::new();
    let agent_id = f
        .runtime
        .spawn(AgentConfig {
            autonomous: Some(false),
            ..AgentConfig::named("Mira", "baker")
        })
        .unwrap();
    let reply = dispatch::answer(
        dispatch::AssignTask {
            agent_id: agent_id.clone(),
            task_name: "bake bread".into(),
        },
        &f.runtime,
    )
    .unwrap();
    assert_eq!(reply.task.agent_id, agent_id);
    assert_eq!(reply.task.task_name, "bake bread");
    // The request's own checks: a blocked move needs its reason.
    let refusal = dispatch::answer(
        dispatch::FinishMove {
            agent_id: agent_id.clone(),
            move_id: 1,
            outcome: crate::moves::MoveEnd::Blocked,
            reason: None,
        },
        &f.runtime,
    )
    .unwrap_err();
    assert_eq!(refusal.code.as_str(), "invalid_message", "{refusal:?}");
    let refusal = dispatch::answer(
        dispatch::Observe {
            agent_id: "agent_404".into(),
            text: "a door".into(),
        },
        &f.runtime,
    )
    .unwrap_err();
    assert_eq!(refusal.code.as_str(), "unknown_agent");
    assert_eq!(refusal.protocol_code(), ProtocolErrorCode::UnknownAgent);
    // Lossless: a code the protocol folds keeps its own name here.
    let options =
        dispatch::Refusal::from(crate::runtime::RuntimeError::InvalidOptions("bad".into()));
    assert_eq!(options.code.as_str(), "invalid_options");
    assert_eq!(options.protocol_code(), ProtocolErrorCode::InvalidConfig);
    // What only a connection finishes is not answered directly.
    let refusal = dispatch::answer(
        dispatch::Subscribe {
            events: None,
            agents: None,
        },
        &f.runtime,
    )
    .unwrap_err();
    assert_eq!(refusal.code.as_str(), "internal_error");
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn requests_after_shutdown_are_errors() {
    let f = Fixture::new();
    f.runtime.shutdown(std::time::Duration::from_secs(1));
    f.send_err(
        json!({"type": "agent_spawn_request", "agent_config": {"name": "Late"}}),
        "shut_down",
    );
    // Reads and pings still answer.
    assert_eq!(f.send(json!({"type": "ping"}))["type"], "pong");
}

// ---------------------------------------------------------------------------------------------
// events

fn p(x: f64, y: f64) -> Position {
    Position::new(x, y)
}

fn every_bus_message() -> Vec<BusMessage> {
    vec![
        BusMessage::AgentSpawned {
            agent_id: "agent_001".into(),
            name: "Mira".into(),
            role: "baker".into(),
            position: p(10.0, 10.0),
            state: AgentState::Idle,
            resumed: false,
        },
        BusMessage::AgentRemoved {
            agent_id: "agent_001".into(),
            reason: "terminated".into(),
        },
        BusMessage::AgentStateChanged {
            agent_id: "agent_001".into(),
            old_state: AgentState::Thinking,
            new_state: AgentState::Speaking,
            position: p(12.0, 8.0),
            current_task: Some("analyzing data".into()),
        },
        BusMessage::AgentMoved {
            agent_id: "agent_001".into(),
            from: p(10.0, 10.0),
            to: p(12.5, 8.0),
        },
        BusMessage::AgentSpoke {
            agent_id: "agent_001".into(),
            content: "I've finished the analysis".into(),
            recipients: vec!["player_0".into(), "agent_002".into()],
            dialog_type: "reply".into(),
            inbox_id: None,
        },
        BusMessage::TaskAssigned {
            agent_id: "agent_002".into(),
            task_id: 3,
            task_name: "bake bread".into(),
            assigned_by: "player_0".into(),
        },
        BusMessage::TaskCompleted {
            agent_id: "agent_002".into(),
            task_id: 3,
            task_name: "bake bread".into(),
            completed_at: "2025-01-01T12:00:00.000Z".into(),
        },
        BusMessage::CollaborationRequested {
            agent_id: "agent_001".into(),
            helper_id: "agent_003".into(),
            task_id: 4,
            task_name: "carry flour".into(),
            message: "Can you help?".into(),
        },
        BusMessage::AgentError {
            agent_id: None,
            code: crate::bus::AgentErrorCode::Lagged,
            message: "missed 3".into(),
        },
        BusMessage::AgentSpeechDelta {
            agent_id: "agent_001".into(),
            delta: "Fresh br".into(),
            seq: 7,
        },
        BusMessage::AgentToolCall {
            agent_id: "agent_001".into(),
            tool: "move".into(),
            call_id: "call_1".into(),
        },
        BusMessage::ModelDownloadProgress {
            agent_id: "agent_001".into(),
            url: "https://example.com/models/m.gguf".into(),
            received_bytes: 1 << 20,
            total_bytes: Some(250 << 20),
        },
        BusMessage::AgentReplied {
            agent_id: "agent_001".into(),
            in_reply_to: vec![42],
            text: String::new(),
            actions: Vec::new(),
            error: Some(crate::bus::ReplyFailure {
                code: crate::bus::AgentErrorCode::BrainError,
                message: "the model server is unreachable".into(),
            }),
        },
        BusMessage::CampaignChanged {
            campaign_id: "camp_0001".into(),
            turn_id: Some("turn_0001".into()),
            applied_actions: vec![crate::campaign::AppliedAction {
                tool: "move".into(),
                args: json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
                result: json!({"from_area_id": "area_001", "to_area_id": "area_002"}),
                timestamp: "2026-01-14T16:05:31.000000+00:00".into(),
            }],
            effects: vec![crate::campaign::Effect::ActorMoved {
                actor_id: "pc_001".into(),
                from_area_id: "area_001".into(),
                to_area_id: "area_002".into(),
            }],
        },
        BusMessage::AgentMoveRequested {
            agent_id: "agent_001".into(),
            move_id: 2,
            from: Position::new(10.0, 10.0),
            to: Position::new(40.0, 12.0),
        },
        BusMessage::AgentMoveFinished {
            agent_id: "agent_001".into(),
            move_id: 2,
            to: Position::new(40.0, 12.0),
            outcome: crate::moves::MoveEnd::Blocked,
            reason: Some("the bridge is out".into()),
        },
        BusMessage::AgentRemembered {
            agent_id: "agent_001".into(),
            memory_id: 18,
            kind: crate::memory::MemoryKind::Heard,
            text: "player_0 said to me: \"Where is the key?\"".into(),
            importance: 5,
            game_time: 401.2,
        },
        BusMessage::AgentReflected {
            agent_id: "agent_001".into(),
            memories: vec![crate::memory::DrawnMemory {
                memory_id: 40,
                kind: crate::memory::MemoryKind::Relationship,
                text: "What I think of Ivy: we exchanged 4 lines lately.".into(),
                about: Some("agent_002".into()),
                sources: vec![12, 15, 18, 21],
            }],
            drawn_by: "rules".into(),
        },
    ]
}

#[test]
fn every_bus_message_becomes_its_event() {
    let all = every_bus_message();
    let mut seen: Vec<&str> = Vec::new();
    for m in &all {
        let v = wire(&event_message(m));
        assert_eq!(v["type"], event_type(m));
        assert!(EVENT_TYPES.contains(&event_type(m)));
        seen.push(event_type(m));
    }
    seen.sort();
    let mut expected = EVENT_TYPES.to_vec();
    expected.sort();
    assert_eq!(seen, expected, "one bus message per event type");

    // The state and speech events, field for field as docs/protocol.md gives them.
    let state = wire(&event_message(&all[2]));
    assert_eq!(
        state,
        json!({
            "type": "agent_state_update",
            "agent_id": "agent_001",
            "state": "speaking",
            "old_state": "thinking",
            "position": {"x": 12, "y": 8},
            "current_task": "analyzing data"
        })
    );
    let speech = wire(&event_message(&all[4]));
    assert_eq!(
        speech,
        json!({
            "type": "agent_speech",
            "agent_id": "agent_001",
            "content": "I've finished the analysis",
            "recipients": ["player_0", "agent_002"],
            "dialog_type": "reply"
        })
    );
    let moved = wire(&event_message(&all[3]));
    assert_eq!(moved["to"], json!({"x": 12.5, "y": 8}));
    let error = wire(&event_message(&all[8]));
    assert_eq!(error["agent_id"], Value::Null);
    assert_eq!(error["code"], "lagged");
}

#[test]
fn event_filter_by_type_and_agent() {
    let all = every_bus_message();
    let everything = EventFilter::default();
    assert!(all.iter().all(|m| everything.matches(m)));

    let speech_only = EventFilter::new(Some(vec!["agent_speech".into()]), None).unwrap();
    let kept: Vec<&str> = all
        .iter()
        .filter(|m| speech_only.matches(m))
        .map(event_type)
        .collect();
    assert_eq!(kept, vec!["agent_speech"]);

    let none = EventFilter::new(Some(vec![]), None).unwrap();
    assert!(!all.iter().any(|m| none.matches(m)));

    // agent_002 is the subject of the task events and a recipient of the speech; a campaign's
    // change is about no agent and passes every agents filter.
    let agent_2 = EventFilter::new(None, Some(vec!["agent_002".into()])).unwrap();
    let kept: Vec<&str> = all
        .iter()
        .filter(|m| agent_2.matches(m))
        .map(event_type)
        .collect();
    assert_eq!(
        kept,
        vec![
            "agent_speech",
            "task_assigned",
            "task_completed",
            "campaign_changed"
        ]
    );

    // A helper sees the collaboration request addressed to it.
    let helper = EventFilter::new(None, Some(vec!["agent_003".into()])).unwrap();
    let kept: Vec<&str> = all
        .iter()
        .filter(|m| helper.matches(m))
        .map(event_type)
        .collect();
    assert_eq!(kept, vec!["collaboration_requested", "campaign_changed"]);

    let both = EventFilter::new(
        Some(vec!["agent_moved".into(), "agent_removed".into()]),
        Some(vec!["agent_001".into()]),
    )
    .unwrap();
    let kept: Vec<&str> = all
        .iter()
        .filter(|m| both.matches(m))
        .map(event_type)
        .collect();
    assert_eq!(kept, vec!["agent_removed", "agent_moved"]);
    assert_eq!(
        both.describe(),
        (
            Some(vec!["agent_moved".to_string(), "agent_removed".to_string()]),
            Some(vec!["agent_001".to_string()])
        )
    );
    assert_eq!(EventFilter::default().describe(), (None, None));
}

#[test]
fn event_filter_rejects_unknown_event_types() {
    let e = EventFilter::new(
        Some(vec!["agent_speech".into(), "agent_spoke".into()]),
        None,
    )
    .unwrap_err();
    assert!(e.contains("agent_spoke"), "{e}");
    assert!(e.contains("agent_state_update"), "lists the events: {e}");
    assert!(EventFilter::new(Some(vec!["pong".into()]), None).is_err());
}

// ---------------------------------------------------------------------------------------------
// schemas

#[test]
fn committed_schemas_are_current() {
    let dir = docs_dir().join("protocol");
    let problems = schema::stale_files(&dir);
    assert!(
        problems.is_empty(),
        "the protocol schemas in {} are stale; run `{}` and commit docs/protocol/:\n  {}",
        dir.display(),
        schema::REGENERATE_COMMAND,
        problems.join("\n  ")
    );
}

#[test]
fn schemas_are_valid_and_cover_every_message() {
    let files = schema::all();
    for (name, s) in &files {
        assert!(
            jsonschema::meta::is_valid(s),
            "{name} is not a valid JSON Schema"
        );
        jsonschema::validator_for(s).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for kind in REQUEST_TYPES {
        let file = format!("requests/{kind}.schema.json");
        assert!(files.iter().any(|(n, _)| *n == file), "no {file}");
    }
    for kind in EVENT_TYPES {
        let file = format!("events/{kind}.schema.json");
        assert!(files.iter().any(|(n, _)| *n == file), "no {file}");
    }
    for kind in REQUEST_TYPES
        .iter()
        .filter(|k| **k != "subscribe" && **k != "ping")
    {
        let response = format!("responses/{kind}_response.schema.json")
            .replace("_request_response", "_response");
        assert!(files.iter().any(|(n, _)| *n == response), "no {response}");
    }
    assert!(files.iter().any(|(n, _)| n == "error.schema.json"));
    assert!(schema::message_schema("no_such_message").is_none());
    assert_eq!(schema::error_message()["title"], "error");
}

#[test]
fn schemas_reject_what_the_server_rejects() {
    let client = schema::client_request();
    for bad in [
        json!({"type": "ping", "extra": 1}),
        json!({"type": "get_agent_state"}),
        json!({"type": "get_agent_state", "agent_id": 7}),
        json!({"type": "ping", "request_id": 1.5}),
        json!({"type": "ping", "request_id": true}),
        json!({"type": "nope"}),
        json!({"type": "agent_spawn_request", "agent_config": {"nmae": "x"}}),
    ] {
        assert!(check(&client, &bad).is_err(), "{bad} should be invalid");
        assert!(parse_request(&bad.to_string()).is_err(), "{bad} parses");
    }
    let error = schema::error_message();
    assert!(
        check(
            &error,
            &json!({"type": "error", "code": "not_json", "message": "x", "request_id": null})
        )
        .is_ok()
    );
    assert!(
        check(
            &error,
            &json!({"type": "error", "code": "bogus", "message": "x", "request_id": null})
        )
        .is_err()
    );
    assert!(
        check(
            &error,
            &json!({"type": "error", "code": "not_json", "request_id": null})
        )
        .is_err()
    );
}

/// Every fenced ```json block of docs/protocol.md.
fn doc_examples() -> Vec<Value> {
    let path = docs_dir().join("protocol.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        match &mut block {
            None if trimmed == "```json" => block = Some(String::new()),
            None => {}
            Some(b) if trimmed == "```" => {
                let v: Value = serde_json::from_str(b).unwrap_or_else(|e| {
                    panic!("a json block of protocol.md is not JSON: {e}\n{b}")
                });
                out.push(v);
                block = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
        }
    }
    assert!(block.is_none(), "protocol.md has an unclosed ```json block");
    out
}

#[test]
fn doc_examples_validate_and_cover_every_message() {
    let examples = doc_examples();
    let mut types: Vec<String> = Vec::new();
    for e in &examples {
        let kind = e["type"]
            .as_str()
            .unwrap_or_else(|| panic!("protocol.md example without a type: {e}"));
        assert_valid(e);
        if REQUEST_TYPES.contains(&kind) {
            parse_request(&e.to_string()).unwrap_or_else(|err| panic!("{e}: {err:?}"));
        } else {
            let _: ServerMessage = serde_json::from_value(e.clone())
                .unwrap_or_else(|err| panic!("{e} is not a server message: {err}"));
        }
        types.push(kind.to_string());
    }
    let server = schema::server_message();
    let server_types = server["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.pointer("/properties/type/const").and_then(Value::as_str));
    for kind in REQUEST_TYPES.iter().copied().chain(server_types) {
        assert!(
            types.iter().any(|t| t == kind),
            "docs/protocol.md has no example of {kind}"
        );
    }
}

/// The `code` values of `error` messages clients know: a client written against an earlier
/// version keeps working only while each of these stays, spelt so.
const PROTOCOL_ERROR_CODES: [&str; 35] = [
    "not_json",
    "not_an_object",
    "missing_type",
    "unknown_type",
    "invalid_request",
    "duplicate_field",
    "binary_not_supported",
    "unknown_agent",
    "already_running",
    "invalid_config",
    "unknown_brain",
    "brain_not_allowed",
    "brain_error",
    "unknown_task",
    "task_already_completed",
    "invalid_message",
    "unknown_tool",
    "invalid_args",
    "unknown_app",
    "app_exists",
    "app_attached",
    "app_not_owned",
    "unknown_action",
    "unknown_campaign",
    "action_refused",
    "invalid_filter",
    "unauthorized",
    "rate_limited",
    "database_error",
    "shut_down",
    "agent_unreachable",
    "limit_reached",
    "unknown_move",
    "unknown_memory",
    "internal_error",
];

/// The codes of the rows of `docs/protocol.md`'s error table (the section `## Errors`).
fn doc_error_table(text: &str) -> Vec<String> {
    let section = text
        .split("\n## Errors\n")
        .nth(1)
        .expect("docs/protocol.md has a section `## Errors`");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once("` |"))
        .map(|(code, _)| code.to_string())
        .collect()
}

#[test]
fn doc_lists_every_error_code() {
    let text = std::fs::read_to_string(docs_dir().join("protocol.md")).unwrap();
    let codes = schema::error_message();
    let codes = codes
        .pointer("/$defs/ErrorCode/oneOf")
        .and_then(Value::as_array)
        .expect("ErrorCode is a oneOf of consts");
    let published: Vec<&str> = codes.iter().map(|c| c["const"].as_str().unwrap()).collect();
    // The names clients see are unchanged: exactly these, in this order, in the code, the
    // published schema and the table of docs/protocol.md.
    assert_eq!(published, PROTOCOL_ERROR_CODES);
    assert_eq!(ProtocolErrorCode::NAMES, PROTOCOL_ERROR_CODES);
    let mut table = doc_error_table(&text);
    let mut expected: Vec<String> = PROTOCOL_ERROR_CODES.map(String::from).to_vec();
    table.sort();
    expected.sort();
    assert_eq!(table, expected, "docs/protocol.md's error table");
    for name in PROTOCOL_ERROR_CODES {
        let code: ProtocolErrorCode = serde_json::from_value(json!(name)).unwrap();
        assert_eq!(code.as_str(), name);
        assert_eq!(name.parse::<ProtocolErrorCode>(), Ok(code));
        // Each is a code of the one vocabulary, of the same name.
        assert_eq!(crate::error_code::ErrorCode::from(code).as_str(), name);
    }
    for kind in EVENT_TYPES.iter().chain(REQUEST_TYPES) {
        assert!(
            text.contains(&format!("`{kind}`")),
            "docs/protocol.md never names `{kind}`"
        );
    }
}

#[test]
fn doc_lists_every_memory_kind() {
    let text = std::fs::read_to_string(docs_dir().join("protocol.md")).unwrap();
    let list = text
        .split("Each has a `kind` (")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("docs/protocol.md lists the memory kinds");
    let listed: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
    let declared: Vec<&str> = crate::memory::MemoryKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        listed, declared,
        "docs/protocol.md's memory kinds, in declaration order"
    );
}

#[test]
fn runtime_error_codes_map_to_protocol_codes() {
    use crate::runtime::{RuntimeError, RuntimeErrorCode};
    // Every runtime code keeps its name on the protocol but the two it folds, explicitly.
    for code in RuntimeErrorCode::ALL {
        let on_the_wire = ProtocolErrorCode::of_runtime(code);
        match code {
            RuntimeErrorCode::InvalidOptions => {
                assert_eq!(on_the_wire, ProtocolErrorCode::InvalidConfig)
            }
            RuntimeErrorCode::StartupFailed => {
                assert_eq!(on_the_wire, ProtocolErrorCode::InternalError)
            }
            _ => assert_eq!(on_the_wire.as_str(), code.as_str()),
        }
    }
    let cases = [
        (
            RuntimeError::UnknownAgent("a".into()),
            ProtocolErrorCode::UnknownAgent,
        ),
        (
            RuntimeError::AlreadyRunning("a".into()),
            ProtocolErrorCode::AlreadyRunning,
        ),
        (
            RuntimeError::InvalidConfig("x".into()),
            ProtocolErrorCode::InvalidConfig,
        ),
        (
            RuntimeError::InvalidOptions("x".into()),
            ProtocolErrorCode::InvalidConfig,
        ),
        (
            RuntimeError::InvalidMessage("x".into()),
            ProtocolErrorCode::InvalidMessage,
        ),
        (RuntimeError::ShutDown, ProtocolErrorCode::ShutDown),
        (
            RuntimeError::Startup("x".into()),
            ProtocolErrorCode::InternalError,
        ),
    ];
    // A brain object's precise codes (a key, a model, a provider, a program missing) stay
    // `invalid_config` for the runtime and on the wire, as before they had codes of their own.
    for code in [
        crate::error_code::ErrorCode::BrainKeyMissing,
        crate::error_code::ErrorCode::BrainModelMissing,
        crate::error_code::ErrorCode::UnknownProvider,
        crate::error_code::ErrorCode::CliNotFound,
    ] {
        let e = RuntimeError::Brain(crate::brain::BrainError::Config {
            code,
            message: "x".into(),
        });
        assert_eq!(e.code(), RuntimeErrorCode::InvalidConfig, "{code}");
        assert_eq!(
            ProtocolErrorCode::from_runtime(&e),
            ProtocolErrorCode::InvalidConfig
        );
    }
    for (e, code) in cases {
        assert_eq!(ProtocolErrorCode::from_runtime(&e), code, "{e}");
    }
    // The runtime keeps both apart, for the surfaces that can say so (Godot, the CLI).
    assert_eq!(
        RuntimeError::InvalidOptions("x".into()).code(),
        RuntimeErrorCode::InvalidOptions
    );
    assert_eq!(
        RuntimeError::Startup("x".into()).code(),
        RuntimeErrorCode::StartupFailed
    );
}

#[test]
fn agent_config_round_trips_through_the_spawn_schema() {
    // A config with every field set validates: the schema knows every field serde accepts.
    let config = AgentConfig {
        agent_id: None,
        key: Some("baker_mira".into()),
        autonomous: Some(false),
        name: "Mira".into(),
        role: "baker".into(),
        prompt: "You bake.".into(),
        brain: Some("scripted".into()),
        initial_position: Some(p(1.0, 2.0)),
        idle_think_seconds: Some(5.0),
        thinking_seconds: Some(0.5),
        speaking_seconds: Some(1.0),
        hearing_radius: Some(15.0),
        seed: Some(json!(7)),
        tools: Some(vec!["world".into(), "games".into()]),
        app_id: Some("board".into()),
        movement: Some(crate::moves::Movement::Requested),
        script: vec![],
        memory: Some(crate::mind::MemorySettings {
            recall_limit: 3,
            ..Default::default()
        }),
        party: Some("connection-1".into()),
    };
    let request = json!({"type": "agent_spawn_request", "agent_config": config});
    assert_valid(&request);
    parse_request(&request.to_string()).unwrap();
    // Whom an agent thinks for is the server's to say: never written, never read.
    assert_eq!(request["agent_config"].get("party"), None);
    let mut claimed = request.clone();
    claimed["agent_config"]["party"] = json!("connection-2");
    assert!(parse_request(&claimed.to_string()).is_err());
}

#[test]
fn an_array_is_never_an_object() {
    for (text, needle) in [
        (
            r#"{"type": "agent_spawn_request", "agent_config": []}"#,
            "agent_config: expected an object, found an array",
        ),
        (
            r#"{"type": "agent_spawn_request", "agent_config": {"initial_position": [7, 8]}}"#,
            "agent_config.initial_position: expected an object or null, found an array",
        ),
        (
            r#"{"type": "call_tool", "name": "dice_roll", "arguments": []}"#,
            "arguments: expected an object or null, found an array",
        ),
        (
            r#"{"type": "agent_spawn_request", "agent_config": {"script": [[]]}}"#,
            "agent_config.script.0: expected an object, found an array",
        ),
        (
            r#"{"type": "subscribe", "events": {"0": "agent_speech"}}"#,
            "events: expected an array or null, found an object",
        ),
    ] {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest, "{text}");
        assert!(e.message.contains(needle), "{text}: {}", e.message);
    }
}

#[test]
fn a_key_twice_is_duplicate_field_at_any_depth() {
    for (text, key) in [
        (r#"{"type": "ping", "type": "agent_spawn_request"}"#, "type"),
        (
            r#"{"type": "ping", "request_id": 1, "request_id": 2}"#,
            "request_id",
        ),
        (
            r#"{"type": "agent_spawn_request", "agent_config": {"name": "A", "name": "B"}}"#,
            "name",
        ),
        (
            r#"{"type": "call_tool", "name": "dice_roll", "arguments": {"sides": 6, "sides": 20}}"#,
            "sides",
        ),
    ] {
        let e = err(text);
        assert_eq!(e.code, ProtocolErrorCode::DuplicateField, "{text}");
        assert!(
            e.message.contains(&format!("duplicate field \"{key}\"")),
            "{text}: {}",
            e.message
        );
    }
}

#[test]
fn every_limit_just_under_passes_and_just_over_names_the_field_and_the_limit() {
    use crate::limits::*;
    let s = |n: usize| "é".repeat(n);
    let cases: Vec<(String, String, usize)> = vec![
        (
            "agent_config.name".into(),
            "agent_spawn_request\", \"agent_config\": {\"name\": \"@\"}".into(),
            MAX_NAME_CHARS,
        ),
        (
            "agent_config.role".into(),
            "agent_spawn_request\", \"agent_config\": {\"role\": \"@\"}".into(),
            MAX_ROLE_CHARS,
        ),
        (
            "agent_config.prompt".into(),
            "agent_spawn_request\", \"agent_config\": {\"prompt\": \"@\"}".into(),
            MAX_PROMPT_CHARS,
        ),
        (
            "agent_config.agent_id".into(),
            "agent_spawn_request\", \"agent_config\": {\"agent_id\": \"@\"}".into(),
            MAX_AGENT_ID_CHARS,
        ),
        (
            "agent_config.brain".into(),
            "agent_spawn_request\", \"agent_config\": {\"brain\": \"@\"}".into(),
            MAX_BRAIN_NAME_CHARS,
        ),
        (
            "content".into(),
            "send_message\", \"agent_id\": \"a\", \"content\": \"@\"".into(),
            MAX_MESSAGE_CHARS,
        ),
        (
            "text".into(),
            "app_human_says\", \"app_id\": \"board\", \"text\": \"@\"".into(),
            MAX_MESSAGE_CHARS,
        ),
        (
            "sender".into(),
            "send_message\", \"agent_id\": \"a\", \"content\": \"hi\", \"sender\": \"@\"".into(),
            MAX_SENDER_CHARS,
        ),
        (
            "agent_id".into(),
            "get_agent_state\", \"agent_id\": \"@\"".into(),
            MAX_AGENT_ID_CHARS,
        ),
        (
            "task_name".into(),
            "assign_task\", \"agent_id\": \"a\", \"task_name\": \"@\"".into(),
            MAX_TASK_NAME_CHARS,
        ),
        (
            "name".into(),
            "call_tool\", \"name\": \"@\"".into(),
            MAX_TOOL_NAME_CHARS,
        ),
    ];
    for (field, template, max) in cases {
        let under = format!("{{\"type\": \"{}}}", template.replace('@', &s(max)));
        assert!(parse_request(&under).is_ok(), "{field} at {max}");
        let over = format!("{{\"type\": \"{}}}", template.replace('@', &s(max + 1)));
        let e = err(&over);
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest, "{field}");
        assert!(
            e.message.contains(&format!(
                "{field}: is {} characters long; the limit is {max}",
                max + 1
            )),
            "{field}: {}",
            e.message
        );
    }
    let many = |n: usize| {
        let list: Vec<String> = (0..n).map(|i| format!("\"agent_{i}\"")).collect();
        format!(
            "{{\"type\": \"subscribe\", \"agents\": [{}]}}",
            list.join(",")
        )
    };
    assert!(parse_request(&many(MAX_FILTER_ENTRIES)).is_ok());
    let e = err(&many(MAX_FILTER_ENTRIES + 1));
    assert!(
        e.message.contains(&format!(
            "agents: has {} entries; the limit is {MAX_FILTER_ENTRIES}",
            MAX_FILTER_ENTRIES + 1
        )),
        "{}",
        e.message
    );
}

/// Walks a paginated list with `limit`, returning every page's rows under `field`.
fn walk(f: &Fixture, request: Value, field: &str, limit: u32) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut req = request.clone();
        req["limit"] = json!(limit);
        if !cursor.is_null() {
            req["cursor"] = cursor.clone();
        }
        let out = f.send(req);
        assert!(
            out.to_string().len() <= pages::MAX_PAGE_BYTES + 1024,
            "a page of {} bytes",
            out.to_string().len()
        );
        pages.push(out[field].as_array().expect("rows").clone());
        cursor = out["next_cursor"].clone();
        if cursor.is_null() {
            return pages;
        }
        assert!(pages.len() < 1000, "no end");
    }
}

#[tokio::test]
async fn paginated_lists_walk_every_row_once() {
    let f = Fixture::new();
    let id = f.spawn("Pager");
    let memory = f.runtime.memory();
    let mut task_ids = Vec::new();
    for n in 0..1234 {
        task_ids.push(memory.assign_task(&id, &format!("task {n}")).unwrap().0.id);
    }
    for n in 0..321 {
        memory.record_conversation(crate::memory::NewConversation {
            agent_id: id.clone(),
            sender: "player_0".into(),
            content: format!("line {n}"),
            recipient: Some(id.clone()),
        });
    }
    memory.flush().unwrap();

    let pages = walk(
        &f,
        json!({"type": "get_tasks", "agent_id": id}),
        "tasks",
        100,
    );
    assert_eq!(pages.len(), 13);
    let got: Vec<i64> = pages
        .iter()
        .flatten()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(got, task_ids, "every task once, oldest first");

    let pages = walk(
        &f,
        json!({"type": "get_conversation", "agent_id": id}),
        "messages",
        50,
    );
    // Newest page first, each page in time order: reversed pages give the whole history.
    let lines: Vec<String> = pages
        .iter()
        .rev()
        .flatten()
        .map(|m| m["content"].as_str().unwrap().to_string())
        .filter(|c| c.starts_with("line "))
        .collect();
    assert_eq!(
        lines,
        (0..321).map(|n| format!("line {n}")).collect::<Vec<_>>()
    );

    let history = walk(
        &f,
        json!({"type": "get_state_history", "agent_id": id}),
        "transitions",
        1,
    );
    let all = f.runtime.state_history(&id, 10_000).unwrap();
    assert_eq!(history.len(), all.len().max(1));

    // The model-call trace pages back like the history.
    for n in 0..25u64 {
        memory.record_brain_call(crate::memory::BrainCall {
            agent_id: id.clone(),
            provider: "openai".into(),
            model: Some("m".into()),
            started_at: crate::time::now_iso(),
            latency_ms: n,
            input_tokens: 10,
            output_tokens: 1,
            cached_tokens: 0,
            outcome: crate::memory::CallOutcome::Ok,
            repairs: 0,
            error_code: None,
            prompt: None,
            reply: None,
        });
    }
    let trace = walk(
        &f,
        json!({"type": "get_agent_trace", "agent_id": id}),
        "calls",
        10,
    );
    assert_eq!(trace.len(), 3);
    let latencies: Vec<u64> = trace
        .iter()
        .rev()
        .flatten()
        .map(|c| c["latency_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(latencies, (0..25).collect::<Vec<_>>(), "every call once");
    f.send_err(
        json!({"type": "get_agent_trace", "agent_id": "agent_404"}),
        "unknown_agent",
    );

    // A cursor from another list, or made up, is refused.
    let e = f.send_err(
        json!({"type": "get_tasks", "agent_id": id, "cursor": "c12"}),
        "invalid_request",
    );
    assert!(e["message"].as_str().unwrap().contains("cursor"), "{e}");
    f.send_err(
        json!({"type": "list_stored_agents", "cursor": "s-x"}),
        "invalid_request",
    );
    for text in [
        r#"{"type": "list_agents", "limit": 0}"#,
        r#"{"type": "list_agents", "limit": 501}"#,
    ] {
        assert!(err(text).message.contains("limit"), "{text}");
    }
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test]
async fn agent_lists_page_by_count_and_by_size() {
    let f = Fixture::new();
    let prompt = "p".repeat(crate::limits::MAX_PROMPT_CHARS);
    let mut ids = Vec::new();
    for n in 0..23 {
        let out = f.send(json!({"type": "agent_spawn_request", "agent_config": {
            "name": format!("A{n}"), "prompt": prompt}}));
        ids.push(out["agent_id"].as_str().unwrap().to_string());
    }
    f.runtime.memory().flush().unwrap();
    let pages = walk(&f, json!({"type": "list_agents"}), "agents", 7);
    let got: Vec<String> = pages
        .iter()
        .flatten()
        .map(|a| a["agent_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, ids);
    assert_eq!(pages.len(), 4);
    // Stored agents carry their 16 KiB prompts (twice: the field and the config): the pages stop
    // at the byte budget long before 500 rows.
    let pages = walk(&f, json!({"type": "list_stored_agents"}), "agents", 500);
    assert!(pages.len() > 1, "{} pages", pages.len());
    let got: Vec<String> = pages
        .iter()
        .flatten()
        .map(|a| a["agent_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, ids);
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_budgets_are_read_and_set_for_the_runtime_and_for_one_agent() {
    let f = Fixture::new();
    let usage = f.send(json!({"type": "get_token_usage", "request_id": 1}));
    assert_eq!(
        usage,
        json!({"type": "get_token_usage_response", "request_id": 1, "agent_id": null,
               "spent": 0, "limit": null})
    );
    let set = f.send(json!({"type": "set_token_budget", "limit": 20000}));
    assert_eq!(set["type"], "set_token_budget_response");
    assert_eq!(set["limit"], 20000);
    assert_eq!(f.runtime.token_usage(), (0, Some(20000)));

    let id = f.spawn("Ada");
    let set = f.send(json!({"type": "set_token_budget", "agent_id": id, "limit": 500}));
    assert_eq!(
        (&set["agent_id"], &set["spent"], &set["limit"]),
        (&json!(id), &json!(0), &json!(500))
    );
    assert_eq!(f.runtime.agent_token_usage(&id).unwrap(), (0, Some(500)));
    let usage = f.send(json!({"type": "get_token_usage", "agent_id": id}));
    assert_eq!(usage["limit"], 500);
    // `null` (or no `limit`) removes a budget; the runtime's is untouched by an agent's.
    let set = f.send(json!({"type": "set_token_budget", "agent_id": id, "limit": null}));
    assert_eq!(set["limit"], Value::Null);
    assert_eq!(f.runtime.token_usage(), (0, Some(20000)));
    f.send(json!({"type": "set_token_budget"}));
    assert_eq!(f.runtime.token_usage(), (0, None));

    f.send_err(
        json!({"type": "get_token_usage", "agent_id": "agent_404"}),
        "unknown_agent",
    );
    f.send_err(
        json!({"type": "set_token_budget", "agent_id": "agent_404", "limit": 1}),
        "unknown_agent",
    );
    for (request, says) in [
        (
            json!({"type": "set_token_budget", "limit": -5}),
            "limit: -5 is less than the minimum of 0",
        ),
        (
            json!({"type": "set_token_budget", "limit": "lots"}),
            "limit",
        ),
    ] {
        let e = err(&request.to_string());
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest);
        assert!(e.message.contains(says), "{}", e.message);
    }
}

#[test]
fn campaign_requests_are_bounded() {
    for (text, field) in [
        (
            format!(
                r#"{{"type": "campaign_unload", "campaign_id": "{}"}}"#,
                "c".repeat(65)
            ),
            "campaign_id",
        ),
        (
            format!(
                r#"{{"type": "campaign_turn", "campaign_id": "c", "gm_agent_id": "agent_001", "user_input": "{}"}}"#,
                "x".repeat(4_001)
            ),
            "user_input",
        ),
        (
            format!(
                r#"{{"type": "campaign_load", "path": "{}"}}"#,
                "p".repeat(1_025)
            ),
            "path",
        ),
    ] {
        let e = err(&text);
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest, "{field}");
        assert!(e.message.contains(field), "{field}: {}", e.message);
    }
}

#[tokio::test]
async fn memories_are_planted_recalled_paged_and_forgotten_over_the_protocol() {
    let f = Fixture::new();
    let id = f.spawn("Mira");
    let out = f.send(json!({"type": "remember", "request_id": 1, "agent_id": id,
        "memory": {"text": "The cellar key is under the mat.", "about": "player_0"}}));
    assert_eq!(out["type"], "remember_response", "{out}");
    let key = out["memory_id"].as_i64().unwrap();
    assert!(out["game_time"].as_f64().is_some());
    let out = f.send(json!({"type": "remember", "agent_id": id, "memory": {
        "text": "Tom moved the cellar key to the shelf.", "kind": "observed", "importance": 9,
        "supersedes": [key]}}));
    let moved = out["memory_id"].as_i64().unwrap();
    for i in 0..3 {
        f.send(json!({"type": "remember", "agent_id": id,
            "memory": {"text": format!("The weather was fine on day {i}.")}}));
    }
    let out =
        f.send(json!({"type": "recall", "agent_id": id, "query": "Where is the key?", "limit": 5}));
    assert_eq!(out["type"], "recall_response", "{out}");
    let found = out["memories"].as_array().unwrap();
    assert_eq!(found.len(), 5);
    assert_eq!(found[0]["memory"]["id"], moved);
    assert_eq!(found[0]["memory"]["kind"], "observed");
    assert!(found[0]["relevance"].as_f64().unwrap() > 0.5);
    // The belief it replaced is still there, marked, and last.
    assert_eq!(found[4]["memory"]["id"], key);
    assert_eq!(found[4]["memory"]["superseded_by"], moved);
    let out = f.send(json!({"type": "recall", "agent_id": id, "query": "key", "limit": 2}));
    assert_eq!(out["memories"].as_array().unwrap().len(), 2);

    // Pages walk back from the newest.
    let out = f.send(json!({"type": "list_memories", "agent_id": id, "limit": 3}));
    assert_eq!(out["memories"].as_array().unwrap().len(), 3);
    let cursor = out["next_cursor"].as_str().unwrap().to_string();
    assert!(cursor.starts_with('m'), "{cursor}");
    let out = f.send(json!({"type": "list_memories", "agent_id": id, "cursor": cursor}));
    let older: Vec<i64> = out["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    assert_eq!(older, [key, moved]);
    assert_eq!(out["next_cursor"], Value::Null);
    f.send_err(
        json!({"type": "list_memories", "agent_id": id, "cursor": "t4"}),
        "invalid_request",
    );

    // Forgotten once; a second time it is unknown.
    let out = f.send(json!({"type": "forget_memory", "agent_id": id, "memory_id": key}));
    assert_eq!(out["type"], "forget_memory_response", "{out}");
    let out = f.send_err(
        json!({"type": "forget_memory", "agent_id": id, "memory_id": key}),
        "unknown_memory",
    );
    assert_eq!(out["message"], format!("{id} has no memory {key}"));

    // Bad input: named, nothing stored.
    f.send_err(
        json!({"type": "remember", "agent_id": id, "memory": {"text": "  "}}),
        "invalid_message",
    );
    f.send_err(
        json!({"type": "recall", "agent_id": "agent_404", "query": "key"}),
        "unknown_agent",
    );
    for (bad, needle) in [
        (
            json!({"type": "remember", "agent_id": id, "memory": {"text": "x".repeat(2001)}}),
            "memory.text",
        ),
        (
            json!({"type": "remember", "agent_id": id, "memory": {"text": "x", "importance": 11}}),
            "memory.importance",
        ),
        (
            json!({"type": "remember", "agent_id": id, "memory": {"text": 7}}),
            "memory.text: expected a string, found a number",
        ),
        (
            json!({"type": "remember", "agent_id": id, "memory": {"text": "x", "kind": "gossip"}}),
            "memory.kind",
        ),
        (
            json!({"type": "remember", "agent_id": id, "memory": {"text": "x", "file": "/etc/passwd"}}),
            "file",
        ),
        (
            json!({"type": "recall", "agent_id": id, "query": "key", "limit": 51}),
            "limit",
        ),
    ] {
        let e = err(&bad.to_string());
        assert_eq!(e.code, ProtocolErrorCode::InvalidRequest, "{bad}: {e:?}");
        assert!(e.message.contains(needle), "{bad}: {}", e.message);
    }
    let out = f.send(json!({"type": "list_memories", "agent_id": id, "limit": 500}));
    assert_eq!(out["memories"].as_array().unwrap().len(), 4);
    f.runtime.shutdown(std::time::Duration::from_secs(1));
}
