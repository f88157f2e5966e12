//! `agents-server serve` end to end: the real binary on an ephemeral loopback port, real
//! WebSocket clients (tokio-tungstenite) and raw TCP clients for misbehaviour.

mod support;

use agents_core::protocol::REQUEST_TYPES;
use support::cluster::World;
use support::server::ServerProc;
use support::ws::{Client, EVENT_TYPES, WAIT, ok, quiet_agent, spawn};

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_and_every_event_between_two_clients() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--allow-client-brains"],
        &[],
    );
    every_request_and_every_event_scenario(&server.url(), &server.url()).await;
}

/// Every request and every event type, between a client `c1` of `c1_url` that spawns the
/// agents and an observer `c2` of `c2_url` (the same server, or another process of the same
/// world: then every event crosses processes and `c2`'s requests about `c1`'s agents are
/// routed). Assumes a world with no agents yet (it counts them).
async fn every_request_and_every_event_scenario(c1_url: &str, c2_url: &str) {
    // The raw welcome.
    let (mut raw, _) = tokio_tungstenite::connect_async(c1_url).await.unwrap();
    let Some(Ok(Message::Text(text))) = raw.next().await else {
        panic!("no welcome")
    };
    let welcome: Value = serde_json::from_str(text.as_str()).unwrap();
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(welcome["protocol_version"], 1);
    assert!(
        welcome["server"]
            .as_str()
            .unwrap()
            .starts_with("godot-agents ")
    );
    // The welcome lists every registered request, as the server declares them.
    assert_eq!(welcome["requests"], json!(REQUEST_TYPES));
    assert_eq!(welcome["events"], json!(EVENT_TYPES));
    drop(raw);

    let mut c1 = Client::connect(c1_url).await;
    let mut c2 = Client::connect(c2_url).await;

    // Ids: a string and an integer, echoed unchanged.
    c1.send(&json!({"type": "ping", "request_id": "abc"})).await;
    assert_eq!(
        ok(&c1.reply_to(&json!("abc")).await, "pong")["request_id"],
        "abc"
    );
    c1.send(&json!({"type": "ping", "request_id": 42})).await;
    assert_eq!(ok(&c1.reply_to(&json!(42)).await, "pong")["request_id"], 42);

    let tools = c1.request(json!({"type": "list_tools"})).await;
    let names: Vec<&str> = ok(&tools, "list_tools_response")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"roll_rpg_dice"), "{names:?}");
    let roll = c1
        .request(json!({"type": "call_tool", "name": "roll_rpg_dice",
                         "arguments": {"sides": 6, "count": 3, "seed": 1}}))
        .await;
    ok(&roll, "call_tool_response");
    assert_eq!(roll["is_error"], false, "{roll}");
    assert_eq!(
        roll["structured_content"]["rolls"]
            .as_array()
            .unwrap()
            .len(),
        3,
        "{roll}"
    );

    let subscribed = c2.request(json!({"type": "subscribe"})).await;
    ok(&subscribed, "subscribe_response");
    assert_eq!(subscribed["events"], Value::Null);

    // Bo helps; Ada is scripted: a first decision whose answers break the contract until the
    // repairs run out (a tool that does not exist, then twice a task she does not have: her
    // world tools do not offer `complete_task`), then move, ask Bo for help, and speak.
    // Bo reflects after every decision (reflection_threshold 1).
    let mut bo_config = quiet_agent("Bo");
    bo_config["memory"] = json!({"reflection_threshold": 1});
    let bo = spawn(&mut c1, bo_config).await;
    let ada = spawn(
        &mut c1,
        json!({
            "name": "Ada", "role": "builder", "initial_position": {"x": 10, "y": 10},
            "idle_think_seconds": 0.2, "thinking_seconds": 0.05, "speaking_seconds": 0.05,
            "script": [{
                "assistant_text": "",
                "tool_calls": [{"id": "c0", "tool": "fly", "args": {}}]
            }, {
                "assistant_text": "",
                "tool_calls": [{"id": "c3", "tool": "complete_task", "args": {"task_id": 999999}}]
            }, {
                "assistant_text": "",
                "tool_calls": [{"id": "c3", "tool": "complete_task", "args": {"task_id": 999999}}]
            }, {
                "assistant_text": "On my way",
                "dialog_type": "chat",
                "tool_calls": [
                    {"id": "c1", "tool": "move", "args": {"x": 14, "y": 12}},
                    {"id": "c2", "tool": "collaborate", "args": {"agent_id": bo, "task_name": "haul crates"}}
                ]
            }]
        }),
    )
    .await;
    // c2 sees what c1 did.
    let spawned = c2
        .event(|e| e["type"] == "agent_spawned" && e["agent_id"] == ada.as_str())
        .await;
    assert_eq!(spawned["name"], "Ada");

    let state = c1
        .request(json!({"type": "get_agent_state", "agent_id": ada}))
        .await;
    assert_eq!(
        ok(&state, "get_agent_state_response")["agent"]["name"],
        "Ada"
    );
    let list = c1.request(json!({"type": "list_agents"})).await;
    assert_eq!(
        ok(&list, "list_agents_response")["agents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // c2 acts; c1 sees it.
    let assigned = c2
        .request(json!({"type": "assign_task", "agent_id": bo, "task_name": "sweep the yard"}))
        .await;
    let task_id = ok(&assigned, "assign_task_response")["task"]["id"].clone();
    c1.event(|e| e["type"] == "task_assigned" && e["task_name"] == "sweep the yard")
        .await;
    let tasks = c1
        .request(json!({"type": "get_tasks", "agent_id": bo}))
        .await;
    assert!(
        !ok(&tasks, "get_tasks_response")["tasks"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Completed by c2 (on a cluster: another process than Bo's, which completes it).
    let done = c2
        .request(json!({"type": "complete_task", "task_id": task_id}))
        .await;
    ok(&done, "complete_task_response");
    c1.event(|e| e["type"] == "task_completed" && e["task_name"] == "sweep the yard")
        .await;
    let again = c2
        .request(json!({"type": "complete_task", "task_id": task_id}))
        .await;
    assert_eq!(ok(&again, "error")["code"], "task_already_completed");

    let said = c2
        .request(json!({"type": "send_message", "agent_id": bo, "content": "Hello Bo"}))
        .await;
    ok(&said, "send_message_response");
    c1.event(|e| e["type"] == "agent_speech" && e["agent_id"] == bo.as_str())
        .await;
    // Having talked with c2's player, Bo reflects: what it thinks of them, citing the lines.
    let reflected = c2
        .event(|e| e["type"] == "agent_reflected" && e["agent_id"] == bo.as_str())
        .await;
    assert_eq!(reflected["drawn_by"], "rules", "{reflected}");
    assert!(
        reflected["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["kind"] == "relationship" && !m["sources"].as_array().unwrap().is_empty()),
        "{reflected}"
    );
    let conversation = c1
        .request(json!({"type": "get_conversation", "agent_id": bo, "limit": 10}))
        .await;
    let lines = ok(&conversation, "get_conversation_response")["messages"].to_string();
    assert!(lines.contains("Hello Bo"), "{lines}");
    let history = c1
        .request(json!({"type": "get_state_history", "agent_id": bo}))
        .await;
    assert!(
        !ok(&history, "get_state_history_response")["transitions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let stored = c1.request(json!({"type": "list_stored_agents"})).await;
    assert_eq!(
        ok(&stored, "list_stored_agents_response")["agents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Memory: the observer plants a memory in an agent of c1, recalls it, pages, forgets it.
    let planted = c2
        .request(json!({"type": "remember", "agent_id": ada,
            "memory": {"text": "The e2e lantern is in the old mill.", "importance": 9}}))
        .await;
    let memory_id = ok(&planted, "remember_response")["memory_id"].clone();
    c2.event(|e| e["type"] == "agent_remembered" && e["memory_id"] == memory_id)
        .await;
    let recalled = c2
        .request(json!({"type": "recall", "agent_id": ada, "query": "e2e lantern"}))
        .await;
    assert_eq!(
        ok(&recalled, "recall_response")["memories"][0]["memory"]["id"],
        memory_id
    );
    let page = c2
        .request(json!({"type": "list_memories", "agent_id": ada, "limit": 500}))
        .await;
    assert!(
        ok(&page, "list_memories_response")["memories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == memory_id)
    );
    let forgotten = c2
        .request(json!({"type": "forget_memory", "agent_id": ada, "memory_id": memory_id}))
        .await;
    ok(&forgotten, "forget_memory_response");

    // Ada's script: moved, collaboration, agent_error, speech.
    c2.event(|e| e["type"] == "agent_moved" && e["agent_id"] == ada.as_str())
        .await;
    c2.event(|e| e["type"] == "collaboration_requested" && e["helper_id"] == bo.as_str())
        .await;
    let refused = c2
        .event(|e| e["type"] == "agent_error" && e["agent_id"] == ada.as_str())
        .await;
    assert_eq!(refused["code"], "brain_invalid_reply", "{refused}");
    let why = refused["message"].as_str().unwrap();
    assert!(
        why.contains("c3 (complete_task): tool_not_allowed: 'complete_task' is not available now"),
        "the last answer's refusal is the error: {refused}"
    );
    c2.event(|e| e["type"] == "agent_speech" && e["content"] == "On my way")
        .await;

    // Dee's moves are carried out by the client that owns the world: asked for, then finished
    // by c2 (on a cluster: routed to Dee's process), and told to Dee's next decision.
    let dee = spawn(
        &mut c1,
        json!({
            "name": "Dee", "role": "courier", "initial_position": {"x": 10, "y": 10},
            "movement": "requested", "idle_think_seconds": 600, "thinking_seconds": 0.05,
            "script": [{"assistant_text": "", "tool_calls": [
                {"id": "m1", "tool": "move", "args": {"x": 40, "y": 12}}]}]
        }),
    )
    .await;
    c1.request(json!({"type": "send_message", "agent_id": dee, "content": "Fetch the mail"}))
        .await;
    let requested = c2
        .event(|e| e["type"] == "agent_move_requested" && e["agent_id"] == dee.as_str())
        .await;
    assert_eq!(requested["move_id"], 1, "{requested}");
    assert_eq!(requested["to"], json!({"x": 40, "y": 12}), "{requested}");
    let unreasoned = c2
        .request(
            json!({"type": "finish_move", "agent_id": dee, "move_id": 1, "outcome": "blocked"}),
        )
        .await;
    assert_eq!(
        ok(&unreasoned, "error")["code"],
        "invalid_message",
        "{unreasoned}"
    );
    let finished = c2
        .request(json!({"type": "finish_move", "agent_id": dee, "move_id": 1,
                        "outcome": "blocked", "reason": "the bridge is out"}))
        .await;
    assert_eq!(ok(&finished, "finish_move_response")["move_id"], 1);
    let event = c1
        .event(|e| e["type"] == "agent_move_finished" && e["agent_id"] == dee.as_str())
        .await;
    assert_eq!(
        (event["outcome"].as_str(), event["reason"].as_str()),
        (Some("blocked"), Some("the bridge is out")),
        "{event}"
    );
    c2.event(|e| e["type"] == "agent_move_finished").await;
    let again = c2
        .request(
            json!({"type": "finish_move", "agent_id": dee, "move_id": 1, "outcome": "arrived"}),
        )
        .await;
    assert_eq!(ok(&again, "error")["code"], "unknown_move", "{again}");

    // An agent with a brain object thinks with a model (the fake provider, in this process):
    // its text streams to the clients before its line.
    let fake = agents_fakellm::FakeServer::start("127.0.0.1:0")
        .await
        .unwrap();
    fake.push(agents_fakellm::Behaviour::Reply {
        text: "Crates are heavy today.".into(),
        tool_calls: vec![agents_fakellm::FakeCall::new(
            "wait",
            json!({"seconds": 60}),
        )],
        chunk_chars: Some(5),
    });
    let cy = spawn(
        &mut c1,
        json!({"name": "Cy", "role": "porter", "idle_think_seconds": 600,
               "speaking_seconds": 0.05,
               "brain": {"provider": "openai", "model": "fake-1", "api_key": "",
                         "base_url": fake.openai_base()}}),
    )
    .await;
    let sent = c1
        .request(json!({"type": "send_message", "agent_id": cy, "content": "How are the crates?"}))
        .await;
    ok(&sent, "send_message_response");
    let first = c2
        .event(|e| e["type"] == "agent_speech_delta" && e["agent_id"] == cy.as_str())
        .await;
    assert_eq!(first["seq"], 0, "{first}");
    let called = c2
        .event(|e| e["type"] == "agent_tool_call" && e["agent_id"] == cy.as_str())
        .await;
    assert_eq!(called["tool"], "wait");
    let said = c2
        .event(|e| e["type"] == "agent_speech" && e["agent_id"] == cy.as_str())
        .await;
    assert_eq!(said["content"], "Crates are heavy today.");
    let state = c1
        .request(json!({"type": "get_agent_state", "agent_id": cy}))
        .await;
    assert_eq!(
        ok(&state, "get_agent_state_response")["agent"]["brain"],
        "openai:fake-1",
        "{state}"
    );
    let trace = c1
        .request(json!({"type": "get_agent_trace", "agent_id": cy}))
        .await;
    let calls = &ok(&trace, "get_agent_trace_response")["calls"];
    assert_eq!(calls.as_array().map(Vec::len), Some(1), "{trace}");
    assert_eq!(calls[0]["provider"], "openai");
    assert_eq!(fake.requests().len(), 1);
    // What it spent, as the fake reported it, and a budget set over the wire.
    let usage = c1
        .request(json!({"type": "get_token_usage", "agent_id": cy}))
        .await;
    let spent = ok(&usage, "get_token_usage_response")["spent"].clone();
    assert_eq!(
        spent.as_u64(),
        Some(
            calls[0]["input_tokens"].as_u64().unwrap()
                + calls[0]["output_tokens"].as_u64().unwrap()
        ),
        "{usage}"
    );
    let set = c1
        .request(json!({"type": "set_token_budget", "agent_id": cy, "limit": 1_000_000}))
        .await;
    assert_eq!(ok(&set, "set_token_budget_response")["limit"], 1_000_000);
    let runtime = c1.request(json!({"type": "get_token_usage"})).await;
    assert_eq!(ok(&runtime, "get_token_usage_response")["spent"], spent);

    let gone = c2
        .request(json!({"type": "agent_terminate_request", "agent_id": bo}))
        .await;
    ok(&gone, "agent_terminate_response");
    c1.event(|e| e["type"] == "agent_removed" && e["agent_id"] == bo.as_str())
        .await;
    c2.event(|e| e["type"] == "agent_removed" && e["agent_id"] == bo.as_str())
        .await;
    c2.event(|e| e["type"] == "agent_state_update").await;

    // A campaign loaded inline and changed by a GM tool call: every client hears of it.
    let loaded = c1
        .request(json!({"type": "campaign_load", "campaign": {"id": "camp_e2e"}}))
        .await;
    assert_eq!(
        ok(&loaded, "campaign_load_response")["campaign_id"],
        "camp_e2e"
    );
    let moved = c1
        .request(
            json!({"type": "campaign_tool_calls", "campaign_id": "camp_e2e",
            "calls": [{"tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}]}),
        )
        .await;
    assert_eq!(
        ok(&moved, "campaign_tool_calls_response")["tool_feedback"],
        Value::Null
    );
    c2.event(|e| e["type"] == "campaign_changed" && e["campaign_id"] == "camp_e2e")
        .await;

    // Every event type reached the observer (but a model download's progress, which needs a
    // model file served for download: tests/local_model.rs sees it over the WebSocket); both
    // clients stay usable.
    let all: BTreeSet<String> = EVENT_TYPES
        .iter()
        .filter(|kind| **kind != "model_download_progress")
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(c2.seen, all);
    c1.assert_usable().await;
    c2.assert_usable().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_code_leaves_the_connection_usable() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(dir.path().join("agents.db"), &[], &[]);
    every_error_code_scenario(&server.url()).await;
}

/// Every error code, each followed by a request that works, from one client of `url`.
async fn every_error_code_scenario(url: &str) {
    let mut c = Client::connect(url).await;
    let agent = spawn(&mut c, quiet_agent("Cy")).await;

    let cases: Vec<(String, &str)> = vec![
        ("{\"type\": ".into(), "not_json"),
        ("[1, 2]".into(), "not_an_object"),
        (json!({"agent_id": "x"}).to_string(), "missing_type"),
        (json!({"type": "fly"}).to_string(), "unknown_type"),
        (
            json!({"type": "get_agent_state", "agent_id": 5}).to_string(),
            "invalid_request",
        ),
        (
            json!({"type": "ping", "request_id": [1]}).to_string(),
            "invalid_request",
        ),
        (
            json!({"type": "ping", "extra": 1}).to_string(),
            "invalid_request",
        ),
    ];
    for (frame, code) in cases {
        c.send_text(frame.clone()).await;
        let e = c.next_non_event().await;
        assert_eq!(e["type"], "error", "{frame}: {e}");
        assert_eq!(e["code"], code, "{frame}: {e}");
        assert!(!e["message"].as_str().unwrap().is_empty());
        c.assert_usable().await;
    }
    c.ws.send(Message::Binary(vec![1u8, 2, 3].into()))
        .await
        .unwrap();
    let e = c.next_non_event().await;
    assert_eq!(e["code"], "binary_not_supported", "{e}");
    c.assert_usable().await;

    let first = c
        .request(json!({"type": "assign_task", "agent_id": agent, "task_name": "dig"}))
        .await;
    let task_id = first["task"]["id"].clone();
    ok(
        &c.request(json!({"type": "complete_task", "task_id": task_id}))
            .await,
        "complete_task_response",
    );
    let requests = vec![
        (
            json!({"type": "get_agent_state", "agent_id": "agent_999"}),
            "unknown_agent",
        ),
        (
            json!({"type": "agent_spawn_request", "agent_config": {"agent_id": agent}}),
            "already_running",
        ),
        (
            json!({"type": "agent_spawn_request", "agent_config": {"name": "Far", "initial_position": {"x": -500, "y": 0}}}),
            "invalid_config",
        ),
        (
            json!({"type": "agent_spawn_request", "agent_config": {"name": "B", "brain": "nope"}}),
            "unknown_brain",
        ),
        (
            json!({"type": "complete_task", "task_id": 99999}),
            "unknown_task",
        ),
        (
            json!({"type": "complete_task", "task_id": task_id}),
            "task_already_completed",
        ),
        (
            json!({"type": "send_message", "agent_id": agent, "content": ""}),
            "invalid_message",
        ),
        (
            json!({"type": "call_tool", "name": "no_such_tool"}),
            "unknown_tool",
        ),
        (
            json!({"type": "call_tool", "name": "roll_rpg_dice", "arguments": {"sides": "six"}}),
            "invalid_args",
        ),
        (
            json!({"type": "subscribe", "events": ["agent_dance"]}),
            "invalid_filter",
        ),
    ];
    for (i, (mut request, code)) in requests.into_iter().enumerate() {
        let id = format!("r{i}");
        request["request_id"] = json!(id);
        c.send(&request).await;
        let e = c.reply_to(&json!(id)).await;
        assert_eq!(e["type"], "error", "{request}: {e}");
        assert_eq!(e["code"], code, "{request}: {e}");
        c.assert_usable().await;
    }

    // rate_limited: 300 pings at once against 200/s with bursts of 200.
    for i in 0..300 {
        c.send(&json!({"type": "ping", "request_id": 10_000 + i}))
            .await;
    }
    let mut limited = 0;
    for i in 0..300 {
        let m = c.reply_to(&json!(10_000 + i)).await;
        if m["type"] == "error" {
            assert_eq!(m["code"], "rate_limited", "{m}");
            limited += 1;
        }
    }
    assert!(limited >= 50, "{limited} of 300 rate-limited");
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.assert_usable().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_filters_by_event_type_and_agent() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(dir.path().join("agents.db"), &[], &[]);
    subscribe_filters_scenario(&server.url(), &server.url()).await;
}

/// Subscriptions filtered by event type and by agent: an `actor` client of `actor_url` spawns
/// and drives the agents, two observers of `observer_url` (the same server, or another process
/// of the same world) subscribe with filters and get only what they asked for.
async fn subscribe_filters_scenario(actor_url: &str, observer_url: &str) {
    let mut actor = Client::connect(actor_url).await;
    let mut by_type = Client::connect(observer_url).await;
    let mut by_agent = Client::connect(observer_url).await;
    let x = spawn(&mut actor, quiet_agent("X")).await;

    let r = by_type
        .request(json!({"type": "subscribe", "events": ["agent_spawned", "task_assigned"]}))
        .await;
    assert_eq!(
        ok(&r, "subscribe_response")["events"],
        json!(["agent_spawned", "task_assigned"])
    );
    let r = by_agent
        .request(json!({"type": "subscribe", "agents": [x]}))
        .await;
    assert_eq!(ok(&r, "subscribe_response")["agents"], json!([x]));
    by_type.drain(Duration::from_millis(100)).await;
    by_agent.drain(Duration::from_millis(100)).await;

    let y = spawn(&mut actor, quiet_agent("Y")).await;
    actor
        .request(json!({"type": "assign_task", "agent_id": y, "task_name": "for y"}))
        .await;
    actor
        .request(json!({"type": "assign_task", "agent_id": x, "task_name": "for x"}))
        .await;
    actor
        .request(json!({"type": "send_message", "agent_id": y, "content": "only y hears this"}))
        .await;
    by_agent
        .event(|e| e["type"] == "task_assigned" && e["agent_id"] == x.as_str())
        .await;
    by_type
        .event(|e| e["type"] == "task_assigned" && e["agent_id"] == x.as_str())
        .await;
    by_type
        .event(|e| e["type"] == "agent_spawned" && e["agent_id"] == y.as_str())
        .await;
    actor
        .event(|e| e["type"] == "agent_speech" && e["agent_id"] == y.as_str())
        .await;

    let typed = by_type.drain(Duration::from_millis(300)).await;
    for e in &typed {
        assert!(
            e["type"] == "agent_spawned" || e["type"] == "task_assigned",
            "{e}"
        );
    }
    for e in by_agent.drain(Duration::from_millis(300)).await {
        assert_ne!(e["agent_id"], y.as_str(), "an event about Y: {e}");
    }
    // `events: []` receives nothing; the reply still comes.
    ok(
        &by_type
            .request(json!({"type": "subscribe", "events": []}))
            .await,
        "subscribe_response",
    );
    actor
        .request(json!({"type": "assign_task", "agent_id": x, "task_name": "again"}))
        .await;
    by_agent.event(|e| e["task_name"] == "again").await;
    assert!(by_type.drain(Duration::from_millis(200)).await.is_empty());
}

/// The protocol scenarios above against a world served by three processes on one NATS and one
/// PostgreSQL: each scenario in a world (and a database) of its own, so that what it counts is
/// its own; every process serves some client.
/// - every request and every event: `c1` on p1 spawns, `c2` on p2 observes and acts on p1's
///   agents (every event crosses processes, every request about an agent is routed);
/// - every error code: one client of p3;
/// - filtered subscriptions: the actor on p3, the observers on p2 (the filters must hold for
///   events coming from another process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_scenarios_pass_against_any_process_of_a_cluster() {
    let started = std::time::Instant::now();
    let nats = agents_testkit::nats::Server::start();
    let ids = ["p1", "p2", "p3"];

    let world = World::start(&nats.url, "ws_every_request", &ids).await;
    every_request_and_every_event_scenario(&world.url("p1"), &world.url("p2")).await;
    // c2's requests about Bo (assign_task, send_message) were answered by p1, which runs him.
    let (p1, p2) = (world.process("p1"), world.process("p2"));
    p2.wait_log("trace_id=p2-1 from=p2 to=p1").await;
    p1.wait_log("trace_id=p2-1 from=p2 to=p1").await;
    p1.wait_log("answering a routed request").await;
    drop(world);
    eprintln!(
        "every request and every event: done at {:?}",
        started.elapsed()
    );

    let world = World::start(&nats.url, "ws_every_error", &ids).await;
    every_error_code_scenario(&world.url("p3")).await;
    drop(world);
    eprintln!("every error code: done at {:?}", started.elapsed());

    let world = World::start(&nats.url, "ws_subscribe", &ids).await;
    subscribe_filters_scenario(&world.url("p3"), &world.url("p2")).await;
    drop(world);
    eprintln!("filtered subscriptions: done at {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_required_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &[],
        &[("AGENTS_SERVER_TOKEN", "s3cret")],
    );
    let url = server.url();
    assert_eq!(refused(&url, &[]).await, 401);
    assert_eq!(
        refused(&url, &[("Authorization", "Bearer wrong")]).await,
        401
    );
    // In the URL: refused even when right (it would end up in logs).
    assert_eq!(refused(&format!("{url}?token=s3cret"), &[]).await, 400);
    assert_eq!(
        refused(
            &format!("{url}?token=s3cret"),
            &[("Authorization", "Bearer s3cret")]
        )
        .await,
        400
    );
    // Nor under RFC 6750's name, another letter case or a percent-encoded key.
    for query in ["access_token=s3cret", "TOKEN=s3cret", "%74oken=s3cret"] {
        assert_eq!(
            refused(
                &format!("{url}?{query}"),
                &[("Authorization", "Bearer s3cret")]
            )
            .await,
            400,
            "{query}"
        );
    }
    // Twice: refused even when one copy is right.
    assert_eq!(
        refused(
            &url,
            &[
                ("Authorization", "Bearer wrong"),
                ("Authorization", "Bearer s3cret")
            ]
        )
        .await,
        401
    );
    assert_eq!(
        refused(
            &url,
            &[(
                "Sec-WebSocket-Protocol",
                "godot-agents, agents.token.wrong, agents.token.s3cret"
            )]
        )
        .await,
        401
    );

    let mut request = server.url().into_client_request().unwrap();
    request
        .headers_mut()
        .insert("Authorization", "Bearer s3cret".parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let mut c = Client::over(ws);
    assert_eq!(c.next().await["type"], "welcome");
    c.assert_usable().await;

    // A browser: the token as a subprotocol entry beside `godot-agents`, which the server selects.
    let mut request = server.url().into_client_request().unwrap();
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "godot-agents, agents.token.s3cret".parse().unwrap(),
    );
    request
        .headers_mut()
        .insert("Origin", "http://localhost:8060".parse().unwrap());
    let (ws, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(
        response
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok()),
        Some("godot-agents")
    );
    let mut b = Client::over(ws);
    assert_eq!(b.next().await["type"], "welcome");
    b.assert_usable().await;
}

/// The HTTP status of a refused upgrade (panics if it connects).
async fn refused(url: &str, headers: &[(&str, &str)]) -> u16 {
    let mut request = url.into_client_request().unwrap();
    for (k, v) in headers {
        let name =
            tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(k.as_bytes()).unwrap();
        request.headers_mut().append(name, v.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
        Ok(_) => panic!("connected"),
    }
}

/// The answer to a hand-written upgrade request (status line and headers).
async fn raw_upgrade(addr: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "GET {path} HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let mut got = Vec::new();
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_pages_need_an_allowed_origin_and_a_loopback_host() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--allow-origin", "https://game.example"],
        &[],
    );
    let addr = server.addr();
    let host = ("Host", addr.as_str());
    let status = |answer: &str| answer.split(' ').nth(1).unwrap_or("").to_string();
    // Native clients (no Origin), loopback origins and listed ones are welcome.
    for origin in [
        None,
        Some("http://localhost:8060"),
        Some("http://127.0.0.1"),
        Some("https://game.example"),
    ] {
        let mut headers = vec![host];
        if let Some(o) = origin {
            headers.push(("Origin", o));
        }
        let answer = raw_upgrade(&addr, "/ws", &headers).await;
        assert_eq!(status(&answer), "101", "{origin:?}: {answer}");
    }
    // A foreign page, the opaque origin, a DNS-rebinding Host: 403 before any upgrade.
    for headers in [
        vec![host, ("Origin", "http://evil.example")],
        vec![host, ("Origin", "null")],
        vec![
            ("Host", "evil.example:9080"),
            ("Origin", "http://evil.example:9080"),
        ],
        vec![("Host", "evil.example:9080")],
    ] {
        for path in ["/ws", "/", "/mcp"] {
            let answer = raw_upgrade(&addr, path, &headers).await;
            assert_eq!(status(&answer), "403", "{path} {headers:?}: {answer}");
        }
    }
    let answer = raw_upgrade(&addr, "/ws", &[host, ("Origin", "http://evil.example")]).await;
    assert!(
        answer.contains("--allow-origin http://evil.example"),
        "{answer}"
    );
    // The server is still fine.
    let mut c = Client::connect(&server.url()).await;
    c.assert_usable().await;
}

/// A raw WebSocket client over TCP: upgrade by hand, then write masked frames and parse frames.
struct Raw {
    tcp: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    async fn connect(addr: &str) -> Raw {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let end = loop {
            let n = tcp.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed during the upgrade");
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        Raw {
            tcp,
            buf: buf[end..].to_vec(),
        }
    }

    fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0x80 | opcode];
        let len = payload.len();
        if len < 126 {
            out.push(0x80 | len as u8);
        } else if len <= 0xFFFF {
            out.push(0x80 | 126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            out.push(0x80 | 127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
        let mask = [1u8, 2, 3, 4];
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    /// Reads every frame until EOF; returns (opcode, payload) pairs.
    async fn read_all(&mut self) -> Vec<(u8, Vec<u8>)> {
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            match tokio::time::timeout(WAIT, self.tcp.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
                Err(_) => panic!("the server did not close the connection"),
            }
        }
        let mut frames = Vec::new();
        let b = &self.buf;
        let mut i = 0;
        while i + 2 <= b.len() {
            let opcode = b[i] & 0x0F;
            let mut len = (b[i + 1] & 0x7F) as usize;
            let mut at = i + 2;
            if len == 126 {
                len = u16::from_be_bytes([b[at], b[at + 1]]) as usize;
                at += 2;
            } else if len == 127 {
                len = u64::from_be_bytes(b[at..at + 8].try_into().unwrap()) as usize;
                at += 8;
            }
            if at + len > b.len() {
                break;
            }
            frames.push((opcode, b[at..at + len].to_vec()));
            i = at + len;
        }
        frames
    }

    async fn close_code(&mut self) -> (u16, String) {
        let frames = self.read_all().await;
        let (opcode, payload) = frames.last().expect("some frames").clone();
        assert_eq!(opcode, 8, "the last frame is a close frame");
        let code = u16::from_be_bytes([payload[0], payload[1]]);
        (code, String::from_utf8_lossy(&payload[2..]).to_string())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_and_garbage_frames_close_with_the_right_code() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--max-frame-bytes", "65536"],
        &[],
    );
    let mut other = Client::connect(&server.url()).await;

    let mut big = Client::connect(&server.url()).await;
    let padding = "x".repeat(100_000);
    big.send(&json!({"type": "ping", "pad": padding})).await;
    assert_eq!(big.close_frame().await.0, 1009);

    // Reserved bits set: a protocol violation.
    let mut raw = Raw::connect(&server.addr).await;
    raw.tcp.write_all(&[0xF1, 0x80, 0, 0, 0, 0]).await.unwrap();
    assert_eq!(raw.close_code().await.0, 1002);

    // A text frame that is not UTF-8.
    let mut raw = Raw::connect(&server.addr).await;
    raw.tcp
        .write_all(&Raw::frame(1, &[0xFF, 0xFE, 0xFD]))
        .await
        .unwrap();
    assert_eq!(raw.close_code().await.0, 1007);

    other.assert_usable().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_is_disconnected_and_others_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--outbound-queue", "16", "--rate-limit", "1000000"],
        &[],
    );
    let mut good = Client::connect(&server.url()).await;
    let mut slow = Raw::connect(&server.addr).await;
    // Thousands of large replies, never read.
    let request = Raw::frame(1, json!({"type": "list_tools"}).to_string().as_bytes());
    let mut batch = Vec::new();
    for _ in 0..3000 {
        batch.extend_from_slice(&request);
    }
    slow.tcp.write_all(&batch).await.unwrap();
    server.wait_log("client too slow").await;
    good.assert_usable().await;
    let (code, reason) = slow.close_code().await;
    assert_eq!(code, 1008);
    assert_eq!(reason, "client too slow: outbound queue full");
    good.assert_usable().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_client_is_rate_limited_then_closed_and_others_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    // 5 requests/s with a burst of 5: a client whose rejected requests within one second exceed
    // 10 × 5 = 50 is closed.
    let server = ServerProc::start(dir.path().join("agents.db"), &["--rate-limit", "5"], &[]);
    let mut other = Client::connect(&server.url()).await;
    let mut flood = Client::connect(&server.url()).await;
    for id in 0..100 {
        flood.send(&json!({"type": "ping", "request_id": id})).await;
    }
    // Every request before the close gets its answer, in order: the burst's pongs, then
    // `rate_limited` errors naming their request, then the close frame.
    let mut pongs = Vec::new();
    let mut limited = Vec::new();
    let (code, reason) = loop {
        match tokio::time::timeout(WAIT, flood.ws.next())
            .await
            .expect("a message in time")
        {
            Some(Ok(Message::Text(t))) => {
                let m: Value = serde_json::from_str(t.as_str()).unwrap();
                match m["type"].as_str() {
                    Some("pong") => pongs.push(m["request_id"].as_i64().unwrap()),
                    Some("error") => {
                        assert_eq!(m["code"], "rate_limited", "{m}");
                        limited.push(m["request_id"].as_i64().unwrap());
                    }
                    _ => panic!("unexpected {m}"),
                }
            }
            Some(Ok(Message::Close(Some(frame)))) => {
                break (u16::from(frame.code), frame.reason.to_string());
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(code, 1008);
    assert_eq!(reason, "rate limit exceeded");
    assert_eq!(pongs, (0..5).collect::<Vec<i64>>(), "the burst is served");
    assert_eq!(
        limited,
        (5..55).collect::<Vec<i64>>(),
        "50 rejections are answered; the 51st closes the connection"
    );
    server.wait_log("rate limit exceeded").await;
    other.assert_usable().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_on_the_same_database_keeps_history_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agents.db");
    let mut first = ServerProc::start(&db, &[], &[]);
    let mut c = Client::connect(&first.url()).await;
    let agent = spawn(&mut c, quiet_agent("Dee")).await;
    ok(
        &c.request(
            json!({"type": "send_message", "agent_id": agent, "content": "remember the blue door"}),
        )
        .await,
        "send_message_response",
    );
    c.event(|e| e["type"] == "agent_speech" && e["agent_id"] == agent.as_str())
        .await;
    first.terminate();
    assert_eq!(
        c.close_frame().await,
        (1001, "server shutting down".to_owned())
    );

    let mut second = ServerProc::start(&db, &[], &[]);
    let mut c = Client::connect(&second.url()).await;
    let stored = c.request(json!({"type": "list_stored_agents"})).await;
    assert!(
        ok(&stored, "list_stored_agents_response")["agents"]
            .to_string()
            .contains(&agent)
    );
    let conv = c
        .request(json!({"type": "get_conversation", "agent_id": agent}))
        .await;
    assert!(
        ok(&conv, "get_conversation_response")["messages"]
            .to_string()
            .contains("remember the blue door")
    );
    let running = c.request(json!({"type": "list_agents"})).await;
    assert_eq!(running["agents"], json!([]));
    second.terminate();

    let third = ServerProc::start(&db, &["--resume"], &[]);
    let mut c = Client::connect(&third.url()).await;
    let state = c
        .request(json!({"type": "get_agent_state", "agent_id": agent}))
        .await;
    assert_eq!(
        ok(&state, "get_agent_state_response")["agent"]["name"],
        "Dee"
    );
}

/// MCP over Streamable HTTP on the same server (`/mcp`): rmcp's HTTP client lists and calls the
/// same tools as the stdio mode; with a token, it must present it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_http_serves_the_tool_registry_with_the_token() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    // rmcp's HTTP client is reqwest, built with this workspace's TLS (rustls, no default
    // provider): install the provider as the library does.
    agents_llm::client::install_tls_provider();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(dir.path().join("mcp.db"), &["--token", "mcp-secret"], &[]);
    let url = format!("http://{}/mcp", server.addr);

    // Without the token: no session.
    let anonymous = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await;
    assert!(anonymous.is_err(), "MCP over HTTP must require the token");

    let config =
        StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header("mcp-secret");
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        ().serve(StreamableHttpClientTransport::from_config(config)),
    )
    .await
    .expect("initialize timed out")
    .expect("initialize over HTTP");
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let mut expected: BTreeSet<String> = support::expected_tool_names().into_iter().collect();
    // A server that runs agents also serves their memories.
    expected.extend(
        agents_core::mcp::memory::MEMORY_TOOLS
            .iter()
            .map(|t| t.to_string()),
    );
    assert_eq!(
        names, expected,
        "the stdio mode's registry and the memory tools"
    );

    let mut params = CallToolRequestParams::new("new_tic_tac_toe_game".to_owned());
    params = params.with_arguments(serde_json::Map::new());
    let result = client.call_tool(params).await.expect("tools/call");
    assert_ne!(result.is_error, Some(true));
    let state = result.structured_content.expect("structuredContent")["state"].clone();
    assert!(state.as_str().is_some_and(|s| s.contains("G:")), "{state}");
    // The memory tools reach the server's runtime: an agent it does not know is a failed call.
    let mut params = CallToolRequestParams::new("recall".to_owned());
    params = params.with_arguments(
        json!({"agent_id": "agent_404", "query": "key"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let result = client.call_tool(params).await.expect("tools/call recall");
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        result.structured_content.expect("structuredContent")["reason"],
        "unknown_agent"
    );
    client.cancel().await.expect("close the session");
}

/// `--no-mcp` leaves `/mcp` unserved (HTTP 404) while the WebSocket keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_mcp_leaves_the_route_unserved() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(dir.path().join("nomcp.db"), &["--no-mcp"], &[]);
    let mut tcp = tokio::net::TcpStream::connect(&server.addr).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(WAIT, tcp.read_to_end(&mut response))
        .await
        .expect("a response in time")
        .unwrap();
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    let mut client = Client::connect(&server.url()).await;
    client.assert_usable().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_values_are_refused_and_list_pages_stay_small() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agents.db");
    let server = ServerProc::start(&db, &["--rate-limit", "10000"], &[]);
    let mut c = Client::connect(&server.url()).await;
    c.request(json!({"type": "subscribe", "events": []})).await;
    let huge = "p".repeat(1_000_000);
    for _ in 0..50 {
        let reply = c
            .request(json!({"type": "agent_spawn_request", "agent_config": {"name": "Big", "prompt": huge}}))
            .await;
        assert_eq!(reply["code"], "invalid_request", "{reply}");
        assert!(
            reply["message"]
                .as_str()
                .unwrap()
                .contains("agent_config.prompt: is 1000000 characters long; the limit is 16384"),
            "{reply}"
        );
    }
    // Nothing was stored: the file did not grow by the prompts.
    let size = std::fs::metadata(&db).unwrap().len()
        + std::fs::metadata(dir.path().join("agents.db-wal")).map_or(0, |m| m.len());
    assert!(size < 2_000_000, "database is {size} bytes");
    // At the limit they are stored, and listing them pages by size.
    let prompt = "p".repeat(16_384);
    for n in 0..30 {
        let reply = c
            .request(json!({"type": "agent_spawn_request", "agent_config": {"name": format!("A{n}"), "prompt": prompt}}))
            .await;
        assert_eq!(reply["type"], "agent_spawn_response", "{reply}");
    }
    let mut cursor = Value::Null;
    let mut seen = 0;
    let mut pages = 0;
    loop {
        let mut req = json!({"type": "list_stored_agents"});
        if !cursor.is_null() {
            req["cursor"] = cursor.clone();
        }
        let reply = c.request(req).await;
        assert!(reply.to_string().len() < 64 * 1024, "a page over 64 KiB");
        seen += reply["agents"].as_array().unwrap().len();
        pages += 1;
        cursor = reply["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(seen, 30);
    assert!(pages > 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brain_profiles_from_a_file_are_used_by_name_and_as_the_default() {
    let fake = agents_fakellm::FakeServer::start("127.0.0.1:0")
        .await
        .unwrap();
    fake.set_default(agents_fakellm::Behaviour::text("Profiles work."));
    let dir = tempfile::tempdir().unwrap();
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        json!({"default": "local", "profiles": {
            "local": {"provider": "openai", "model": "fake-local", "base_url": fake.openai_base()},
            "offline": {"provider": "scripted"}
        }})
        .to_string(),
    )
    .unwrap();
    let server = ServerProc::start(
        dir.path().join("profiles.db"),
        &[
            "--brains",
            brains.to_str().unwrap(),
            "--token-budget",
            "1000000",
        ],
        &[],
    );
    let mut c = Client::connect(&server.url()).await;
    let by_default = spawn(&mut c, quiet_agent("Dee")).await;
    let mut named = quiet_agent("Ned");
    named["brain"] = json!("offline");
    let offline = spawn(&mut c, named).await;
    for (id, brain) in [(&by_default, "local"), (&offline, "offline")] {
        let state = c
            .request(json!({"type": "get_agent_state", "agent_id": id}))
            .await;
        assert_eq!(
            ok(&state, "get_agent_state_response")["agent"]["brain"],
            brain
        );
    }
    let sent = c
        .request(json!({"type": "send_message", "agent_id": by_default, "content": "Hi"}))
        .await;
    ok(&sent, "send_message_response");
    let said = c
        .event(|e| e["type"] == "agent_speech" && e["agent_id"] == by_default.as_str())
        .await;
    assert_eq!(said["content"], "Profiles work.");
    assert_eq!(fake.requests()[0].body["model"], "fake-local");
    let usage = c.request(json!({"type": "get_token_usage"})).await;
    let usage = ok(&usage, "get_token_usage_response");
    assert_eq!(usage["limit"], 1_000_000, "{usage}");
    assert!(usage["spent"].as_u64().unwrap() > 0, "{usage}");
    let mut unknown = quiet_agent("Una");
    unknown["brain"] = json!("lcoal");
    let e = c
        .request(json!({"type": "agent_spawn_request", "agent_config": unknown}))
        .await;
    assert_eq!(e["code"], "unknown_brain", "{e}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("lcoal") && message.contains("local"),
        "{message}"
    );
}
