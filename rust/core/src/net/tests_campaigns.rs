//! Campaigns over a real WebSocket on loopback: `campaign_load` by path (under the campaign
//! directory) and inline, `campaign_tool_calls` with its tool feedback, a GM turn answered by a
//! scripted agent, `campaign_state`, the `campaign_changed` event, the file saved and the turn
//! logged beside it, and bad input answered with specific errors.

use std::sync::Arc;

use serde_json::json;

use super::tests_apps::{Client, of_type};
use super::*;
use crate::campaign::{Campaign, file};
use crate::runtime::RuntimeOptions;

#[test]
fn campaigns_over_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    let camp_file = campaigns.join("camp_0007").join("campaign.json");
    std::fs::create_dir_all(camp_file.parent().unwrap()).unwrap();
    file::save(
        &camp_file,
        &Campaign::new("camp_0007", &["pc_001".into(), "pc_002".into()]),
    )
    .unwrap();
    let mut options = RuntimeOptions::with_database(dir.path().join("campaigns.db"));
    options.idle_think_seconds = 1000.0;
    options.thinking_seconds = 0.0;
    options.campaign_dir = Some(campaigns.clone());
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
    client.block_on(async {
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let mut ws = Client { ws, backlog: Vec::new() };
        ws.until(of_type("welcome")).await;
        // Only campaign events, for any agent filter.
        ws.send(json!({"type": "subscribe", "events": ["campaign_changed"], "agents": ["agent_999"]})).await;
        ws.until(of_type("subscribe_response")).await;

        // Paths stay inside the campaign directory.
        for (i, path) in ["../x.json", "/etc/passwd", "camp_0007/../../x.json", ""].iter().enumerate() {
            ws.send(json!({"type": "campaign_load", "request_id": 100 + i, "path": path})).await;
            let e = ws.until(|v| v["request_id"] == 100 + i).await;
            assert_eq!(e["code"], "invalid_message", "{path}: {e}");
            assert!(e["message"].as_str().unwrap().contains("relative to the campaign directory"), "{e}");
        }
        ws.send(json!({"type": "campaign_load", "request_id": 1, "path": "camp_0007/campaign.json"})).await;
        let loaded = ws.until(of_type("campaign_load_response")).await;
        assert_eq!(loaded["campaign_id"], "camp_0007");
        assert_eq!(loaded["campaign"]["map"]["connections"][0]["to_area_id"], "area_002");

        // A batch: one applied, one refused; the file saved; the event pushed.
        ws.send(json!({"type": "campaign_tool_calls", "request_id": 2, "campaign_id": "camp_0007",
            "calls": [{"id": "call_1", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}},
                      {"id": "call_2", "tool": "hp_delta", "args": {"target_character_id": "pc_002", "delta": 1.5, "cause": "x"}}]})).await;
        let out = ws.until(of_type("campaign_tool_calls_response")).await;
        assert_eq!(out["request_id"], 2);
        assert_eq!(out["applied_actions"][0]["result"], json!({"from_area_id": "area_001", "to_area_id": "area_002"}));
        assert_eq!(out["tool_feedback"]["failed_calls"][0]["reason"], "invalid_args");
        let changed = ws.until(of_type("campaign_changed")).await;
        assert_eq!(changed["turn_id"], serde_json::Value::Null);
        assert_eq!(changed["effects"][0], json!({"effect": "actor_moved", "actor_id": "pc_001",
            "from_area_id": "area_001", "to_area_id": "area_002"}));
        assert_eq!(file::load(&camp_file).unwrap().campaign.actors["pc_001"].position.as_deref(), Some("area_002"));

        // A GM turn answered by a scripted agent.
        ws.send(json!({"type": "agent_spawn_request", "request_id": 3,
            "agent_config": {"name": "Morgana", "role": "game master"}})).await;
        let spawned = ws.until(of_type("agent_spawn_response")).await;
        let gm = spawned["agent_id"].as_str().unwrap().to_string();
        ws.send(json!({"type": "campaign_turn", "request_id": 4, "campaign_id": "camp_0007",
            "gm_agent_id": gm, "user_input": "Let's explore deeper", "actor_id": "pc_001"})).await;
        let turn = ws.until(of_type("campaign_turn_response")).await;
        let entry = &turn["entry"];
        assert_eq!(entry["turn_id"], "turn_0001");
        assert_eq!(entry["applied_actions"][0]["tool"], "map_generate");
        let changed = ws.until(of_type("campaign_changed")).await;
        assert_eq!(changed["turn_id"], "turn_0001");
        assert_eq!(changed["effects"][0]["effect"], "map_generated");
        let log = std::fs::read_to_string(camp_file.parent().unwrap().join("turn_log.jsonl")).unwrap();
        assert_eq!(log.lines().count(), 1);

        ws.send(json!({"type": "campaign_state", "request_id": 5, "campaign_id": "camp_0007"})).await;
        let state = ws.until(of_type("campaign_state_response")).await;
        assert_eq!(state["turns"], 1);
        assert_eq!(state["campaign"]["map"]["areas"].as_object().unwrap().len(), 6);

        // Inline campaigns, and bad input.
        ws.send(json!({"type": "campaign_load", "request_id": 6, "campaign": {"id": "camp_mem"}})).await;
        assert_eq!(ws.until(of_type("campaign_load_response")).await["campaign_id"], "camp_mem");
        for (i, (request, code, says)) in [
            (json!({"type": "campaign_load", "campaign": {"map": {"areas": {"a": {"reachable_area_ids": ["a"]}}}}}),
             "invalid_message", "area:a:reachable_self_loop"),
            (json!({"type": "campaign_load"}), "invalid_request", "exactly one of path and campaign"),
            (json!({"type": "campaign_state", "campaign_id": "nope"}), "unknown_campaign", "unknown campaign 'nope'"),
            (json!({"type": "campaign_tool_calls", "campaign_id": "camp_mem", "calls": {"tool": "move"}}),
             "invalid_request", "expected a JSON array"),
            (json!({"type": "campaign_tool_calls", "campaign_id": "camp_mem", "calls": [], "actor_id": "npc"}),
             "invalid_message", "not in the party"),
            (json!({"type": "campaign_turn", "campaign_id": "camp_mem", "gm_agent_id": "agent_404", "user_input": "hi"}),
             "unknown_agent", "agent_404"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut request = request;
            request["request_id"] = json!(200 + i);
            ws.send(request.clone()).await;
            let e = ws.until(|v| v["request_id"] == 200 + i).await;
            assert_eq!(e["type"], "error", "{request}: {e}");
            assert_eq!(e["code"], code, "{request}: {e}");
            assert!(e["message"].as_str().unwrap().contains(says), "{request}: {e}");
        }
    });
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}

/// A runtime with `campaigns` as its campaign directory, a server with the GM file tools
/// confined to it, and a client runtime.
pub(super) fn serve_campaigns(
    dir: &std::path::Path,
    campaigns: &std::path::Path,
) -> (Arc<Runtime>, ServerHandle, tokio::runtime::Runtime) {
    let mut options = RuntimeOptions::with_database(dir.join("campaigns.db"));
    options.idle_think_seconds = 1000.0;
    options.thinking_seconds = 0.0;
    options.campaign_dir = Some(campaigns.to_path_buf());
    let runtime = Arc::new(Runtime::start(options).unwrap());
    let mut tools = ToolRegistry::with_game_tools();
    crate::campaign::file_tools::register(
        &mut tools,
        crate::campaign::file_tools::CampaignFiles::Inside(campaigns.to_path_buf()),
    );
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..ServerConfig::default()
    };
    let handle = runtime.handle().clone();
    let server = Server::start(runtime.clone(), Arc::new(tools), config, &handle).unwrap();
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    (runtime, server, client)
}

/// A client of `server` past its `welcome`.
pub(super) async fn connect(server: &ServerHandle) -> Client {
    let url = format!("ws://{}/ws", server.local_addr());
    let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let mut client = Client {
        ws,
        backlog: Vec::new(),
    };
    client.until(of_type("welcome")).await;
    client
}

/// The reply to `request` (sent with `request_id`).
pub(super) async fn ask(
    ws: &mut Client,
    request_id: i64,
    mut request: serde_json::Value,
) -> serde_json::Value {
    request["request_id"] = json!(request_id);
    ws.send(request).await;
    ws.until(|v| v["request_id"] == request_id).await
}

/// `campaign_load` and the GM file tools over `call_tool` reach only regular campaign files
/// inside the campaign directory: a symlink out, a FIFO, a JSON file that is not a campaign, an
/// absolute path and `..` are refused with specific errors, nothing outside changes, and a
/// FIFO loaded twice blocks nothing (pings and a new connection are answered meanwhile).
#[test]
fn clients_reach_only_regular_campaign_files_inside_the_directory() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(campaigns.join("camp")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    file::save(
        &campaigns.join("camp/campaign.json"),
        &Campaign::new("camp_0001", &[]),
    )
    .unwrap();
    file::save(
        &outside.join("campaign.json"),
        &Campaign::new("camp_0666", &[]),
    )
    .unwrap();
    let outside_text = std::fs::read_to_string(outside.join("campaign.json")).unwrap();
    symlink(outside.join("campaign.json"), campaigns.join("out.json")).unwrap();
    let fifo = campaigns.join("pipe.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let package = "{\"name\": \"tool\", \"version\": \"1.0.0\"}\n";
    std::fs::write(campaigns.join("package.json"), package).unwrap();
    let absolute = outside.join("campaign.json").display().to_string();

    let (runtime, server, client) = serve_campaigns(dir.path(), &campaigns);
    client.block_on(async {
        let mut ws = connect(&server).await;
        // Two loads of the FIFO pipelined with a ping: all answered, none waits on the FIFO.
        for id in [1, 2] {
            ws.send(json!({"type": "campaign_load", "request_id": id, "path": "pipe.json"})).await;
        }
        ws.send(json!({"type": "ping", "request_id": 3})).await;
        assert_eq!(ws.until(|v| v["request_id"] == 3).await["type"], "pong");
        for id in [1, 2] {
            let e = ws.until(|v| v["request_id"] == id).await;
            assert_eq!(e["code"], "invalid_message", "{e}");
            assert_eq!(e["message"], "'pipe.json' is a FIFO, not a regular file");
        }
        let mut other = connect(&server).await;
        assert_eq!(ask(&mut other, 1, json!({"type": "ping"})).await["type"], "pong");

        for (i, (path, says)) in [
            ("out.json", "no file 'out.json' inside the campaign directory"),
            ("package.json", "'package.json' is not a campaign file"),
            (absolute.as_str(), "must be relative to the campaign directory"),
            ("../outside/campaign.json", "must be relative to the campaign directory"),
        ]
        .into_iter()
        .enumerate()
        {
            let id = 10 + i as i64;
            let e = ask(&mut ws, id, json!({"type": "campaign_load", "path": path})).await;
            assert_eq!(e["code"], "invalid_message", "{path}: {e}");
            assert!(e["message"].as_str().unwrap().contains(says), "{path}: {e}");
            // The GM tools over `call_tool`: the same refusal, as a failed tool result.
            let out = ask(&mut ws, 100 + id, json!({"type": "call_tool", "name": "hp_delta",
                "arguments": {"campaign": path, "target_character_id": "pc_001", "delta": -3, "cause": "x"}})).await;
            assert_eq!(out["is_error"], true, "{path}: {out}");
            let reason = if path == "package.json" { "invalid_campaign" } else { "invalid_path" };
            assert_eq!(out["structured_content"]["reason"], reason, "{path}: {out}");
            assert!(out["structured_content"]["error"].as_str().unwrap().contains(says), "{out}");
            assert!(!out.to_string().contains(dir.path().to_str().unwrap()) || path == absolute,
                "the server's own paths stay private: {out}");
        }
        // A file inside, by its relative name: applied and saved there.
        let out = ask(&mut ws, 30, json!({"type": "call_tool", "name": "hp_delta",
            "arguments": {"campaign": "camp/campaign.json", "target_character_id": "pc_001", "delta": -3, "cause": "x"}})).await;
        assert_eq!(out["is_error"], false, "{out}");
        assert_eq!(out["structured_content"]["applied_actions"][0]["result"]["new_hp"], 7);
        assert_eq!(ask(&mut ws, 31, json!({"type": "ping"})).await["type"], "pong");
    });
    assert_eq!(
        std::fs::read_to_string(outside.join("campaign.json")).unwrap(),
        outside_text
    );
    assert_eq!(
        std::fs::read_to_string(campaigns.join("package.json")).unwrap(),
        package
    );
    assert_eq!(
        file::load(&campaigns.join("camp/campaign.json"))
            .unwrap()
            .campaign
            .actors["pc_001"]
            .hp,
        7
    );
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}

/// 60 GM turns on one campaign asked at once from 6 connections: 60 distinct turn ids,
/// `turn_0001` to `turn_0060`, in the replies, in `turn_log.jsonl` and in the runtime's log.
#[test]
fn concurrent_turns_of_a_campaign_get_distinct_turn_ids() {
    const CONNECTIONS: usize = 6;
    const TURNS: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir_all(campaigns.join("camp")).unwrap();
    file::save(
        &campaigns.join("camp/campaign.json"),
        &Campaign::new("camp_0001", &[]),
    )
    .unwrap();
    let (runtime, server, client) = serve_campaigns(dir.path(), &campaigns);
    let replies = client.block_on(async {
        let mut ws = connect(&server).await;
        let loaded = ask(
            &mut ws,
            1,
            json!({"type": "campaign_load", "path": "camp/campaign.json"}),
        )
        .await;
        assert_eq!(loaded["campaign_id"], "camp_0001", "{loaded}");
        let spawned = ask(
            &mut ws,
            2,
            json!({"type": "agent_spawn_request",
            "agent_config": {"name": "Morgana", "role": "game master"}}),
        )
        .await;
        let gm = spawned["agent_id"].as_str().unwrap().to_string();
        let mut clients = Vec::new();
        for _ in 0..CONNECTIONS {
            clients.push(connect(&server).await);
        }
        // Every turn sent before any reply is read.
        for ws in &mut clients {
            for t in 0..TURNS {
                ws.send(
                    json!({"type": "campaign_turn", "request_id": t, "campaign_id": "camp_0001",
                    "gm_agent_id": gm, "user_input": "Where can I go?"}),
                )
                .await;
            }
        }
        let mut ids = Vec::new();
        for ws in &mut clients {
            for t in 0..TURNS {
                let reply = ws.until(|v| v["request_id"] == t).await;
                assert_eq!(reply["type"], "campaign_turn_response", "{reply}");
                ids.push(reply["entry"]["turn_id"].as_str().unwrap().to_string());
            }
        }
        ids
    });
    let expected: Vec<String> = (1..=CONNECTIONS * TURNS)
        .map(|n| format!("turn_{n:04}"))
        .collect();
    let mut sorted = replies.clone();
    sorted.sort();
    assert_eq!(sorted, expected, "the replies' turn ids");
    let log = std::fs::read_to_string(campaigns.join("camp/turn_log.jsonl")).unwrap();
    let logged: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["turn_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        logged, expected,
        "turn_log.jsonl: one line a turn, in turn order"
    );
    let kept: Vec<String> = runtime
        .campaign_turns("camp_0001")
        .unwrap()
        .into_iter()
        .map(|e| e.turn_id)
        .collect();
    assert_eq!(kept, expected, "the runtime's log");
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}

/// Campaign requests pipelined on one connection are answered in their order, each seeing what
/// the one before it did: a `campaign_state` right behind its `campaign_load` finds the campaign,
/// and a batch behind the state changes what the next state shows.
#[test]
fn a_connections_campaign_requests_are_answered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir_all(&campaigns).unwrap();
    // 60 requests: fewer than the queue holds (MAX_QUEUED_CAMPAIGN_REQUESTS).
    for i in 0..15 {
        file::save(
            &campaigns.join(format!("c{i}.json")),
            &Campaign::new(format!("camp_{i:04}"), &[]),
        )
        .unwrap();
    }
    let (runtime, server, client) = serve_campaigns(dir.path(), &campaigns);
    client.block_on(async {
        let mut ws = connect(&server).await;
        let mut sent = Vec::new();
        for i in 0..15 {
            let id = format!("camp_{i:04}");
            let requests = [
                json!({"type": "campaign_load", "path": format!("c{i}.json")}),
                json!({"type": "campaign_state", "campaign_id": id}),
                json!({"type": "campaign_tool_calls", "campaign_id": id, "calls": [
                    {"id": "call_1", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}]}),
                json!({"type": "campaign_state", "campaign_id": id}),
            ];
            for mut request in requests {
                let n = sent.len();
                request["request_id"] = json!(n);
                sent.push(request["type"].as_str().unwrap().to_string());
                ws.send(request).await;
            }
        }
        let mut replies = Vec::new();
        while replies.len() < sent.len() {
            replies.push(ws.until(|v| !v["request_id"].is_null()).await);
        }
        for (n, reply) in replies.iter().enumerate() {
            assert_eq!(reply["request_id"], n, "replies in request order: {reply}");
            assert_eq!(reply["type"], format!("{}_response", sent[n]), "{reply}");
            if n % 4 == 1 {
                assert_eq!(reply["campaign"]["actors"]["pc_001"]["position"], "area_001");
            }
            if n % 4 == 3 {
                assert_eq!(reply["campaign"]["actors"]["pc_001"]["position"], "area_002");
            }
        }
    });
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}

/// A GM turn whose model never answers holds up neither the connection's other requests (a
/// `ping`, `list_agents`) nor another connection's campaign requests; the campaign requests
/// behind it on its own connection wait for it, up to the queue's limit (one more is
/// `rate_limited`).
#[test]
fn a_long_gm_turn_holds_up_no_other_request() {
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir_all(&campaigns).unwrap();
    let (runtime, server, client) = serve_campaigns(dir.path(), &campaigns);
    let fake = runtime
        .handle()
        .block_on(agents_fakellm::FakeServer::start("127.0.0.1:0"))
        .unwrap();
    fake.push_many([agents_fakellm::Behaviour::Hang]);
    let gm = runtime
        .spawn(
            crate::runtime::AgentConfig::from_json(&json!({
                "name": "Morgana", "role": "game master",
                "brain": {"provider": "openai", "model": "fake-1", "base_url": fake.openai_base()}
            }))
            .unwrap(),
        )
        .unwrap();
    client.block_on(async {
        let mut ws = connect(&server).await;
        let loaded = ask(
            &mut ws,
            1,
            json!({"type": "campaign_load", "campaign": {"id": "camp_slow", "map": null}}),
        )
        .await;
        assert_eq!(loaded["type"], "campaign_load_response", "{loaded}");
        ws.send(
            json!({"type": "campaign_turn", "request_id": 2, "campaign_id": "camp_slow",
            "gm_agent_id": gm, "user_input": "Where can I go?"}),
        )
        .await;
        ws.send(json!({"type": "campaign_state", "request_id": 3, "campaign_id": "camp_slow"}))
            .await;
        // The model has the turn's request: the turn is waiting for it.
        for _ in 0..1_000 {
            if !fake.requests().is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(fake.requests().len(), 1, "the GM's model was asked");
        assert_eq!(
            ask(&mut ws, 4, json!({"type": "ping"})).await["type"],
            "pong"
        );
        let agents = ask(&mut ws, 5, json!({"type": "list_agents"})).await;
        assert_eq!(agents["type"], "list_agents_response", "{agents}");
        let mut other = connect(&server).await;
        let state = ask(
            &mut other,
            1,
            json!({"type": "campaign_state", "campaign_id": "camp_slow"}),
        )
        .await;
        assert_eq!(state["turns"], 0, "{state}");
        // Nothing of the turn, nor of the state queued behind it, has come.
        assert!(
            ws.backlog
                .iter()
                .all(|m| m["request_id"] != 2 && m["request_id"] != 3),
            "{:?}",
            ws.backlog
        );
        // The queue fills up behind the turn: one more than its limit waiting is refused.
        let limit = crate::limits::MAX_QUEUED_CAMPAIGN_REQUESTS as i64;
        for id in 100..100 + limit - 1 {
            ws.send(json!({"type": "campaign_state", "request_id": id, "campaign_id": "camp_slow"}))
                .await;
        }
        let refused = ask(&mut ws, 999, json!({"type": "campaign_state", "campaign_id": "camp_slow"})).await;
        assert_eq!(refused["code"], "rate_limited", "{refused}");
        assert_eq!(
            refused["message"],
            format!("too many campaign requests waiting on this connection: at most {limit}; wait for their replies")
        );
        assert_eq!(ask(&mut ws, 1000, json!({"type": "ping"})).await["type"], "pong");
    });
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}
