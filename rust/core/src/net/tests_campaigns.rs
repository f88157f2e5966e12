//! Campaigns over a real WebSocket on loopback: `campaign_load` by path (under the campaign
//! directory) and inline, `campaign_tool_calls` with the spec's feedback, a GM turn answered by a
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
