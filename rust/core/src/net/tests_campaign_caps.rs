//! The caps on campaigns over a real WebSocket on loopback: how many are loaded at once
//! (`limit_reached`, `campaign_unload` frees room, a reload replaces), how large one may be
//! (areas, actors, bytes per actor), and replies that fit the 64 KiB a Godot client reads — a
//! large campaign comes in pages that a client walks with `next_cursor`, losing nothing.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::tests_campaigns::{ask, connect, serve_campaigns};
use crate::limits::{
    MAX_CAMPAIGN_ACTORS, MAX_CAMPAIGN_AREAS, MAX_CAMPAIGN_ENTRY_BYTES, MAX_LOADED_CAMPAIGNS,
};

/// What a Godot client's `WebSocketPeer` reads in one message by default.
const GODOT_INBOUND_BYTES: usize = 64 * 1024;

/// A valid campaign `id` with `areas` areas in a chain (`area_0000` → `area_0001` → …) and
/// `actors` actors spread over them, each with some `meta`.
fn campaign(id: &str, areas: usize, actors: usize) -> Value {
    let area_ids: Vec<String> = (0..areas).map(|i| format!("area_{i:04}")).collect();
    let map: serde_json::Map<String, Value> = area_ids
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let next: Vec<&String> = area_ids.get(i + 1).into_iter().collect();
            (
                a.clone(),
                json!({"id": a, "name": format!("Hall {i}"), "parent_area_id": null,
                       "reachable_area_ids": next}),
            )
        })
        .collect();
    let cast: serde_json::Map<String, Value> = (0..actors)
        .map(|i| {
            (
                format!("pc_{i:04}"),
                json!({"position": area_ids[i % areas], "hp": 10, "character_state": "alive",
                       "meta": {"notes": "x".repeat(40)}}),
            )
        })
        .collect();
    json!({"id": id,
           "selected": {"world_id": "world_001", "map_id": "map_001",
                        "party_character_ids": ["pc_0000"], "active_actor_id": "pc_0000"},
           "map": {"areas": map}, "actors": cast})
}

/// The size of a reply as the server wrote it (compact JSON).
fn bytes(reply: &Value) -> usize {
    serde_json::to_vec(reply).unwrap().len()
}

/// Loads past the cap: refused with `limit_reached` naming it, nothing loaded or lost; a reload
/// of a loaded id replaces it at the cap; `campaign_unload` frees room, then the load succeeds.
#[test]
fn loaded_campaigns_are_capped_and_unloading_frees_room() {
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir_all(&campaigns).unwrap();
    let (runtime, server, client) = serve_campaigns(dir.path(), &campaigns);
    client.block_on(async {
        let mut ws = connect(&server).await;
        for i in 0..MAX_LOADED_CAMPAIGNS {
            let id = format!("camp_{i:04}");
            let r = ask(&mut ws, i as i64, json!({"type": "campaign_load", "campaign": {"id": id}})).await;
            assert_eq!(r["type"], "campaign_load_response", "{r}");
        }
        let over = json!({"type": "campaign_load", "campaign": campaign("camp_over", 3, 1)});
        let refused = ask(&mut ws, 100, over.clone()).await;
        assert_eq!(refused["code"], "limit_reached", "{refused}");
        let says = refused["message"].as_str().unwrap();
        assert!(says.contains(&format!("MAX_LOADED_CAMPAIGNS {MAX_LOADED_CAMPAIGNS}")), "{says}");
        assert!(says.contains("campaign_unload"), "{says}");
        assert_eq!(runtime.loaded_campaign_count(), MAX_LOADED_CAMPAIGNS);
        let unknown = ask(&mut ws, 101, json!({"type": "campaign_state", "campaign_id": "camp_over"})).await;
        assert_eq!(unknown["code"], "unknown_campaign", "{unknown}");

        // A change made before the refusal is still there.
        let moved = ask(&mut ws, 102, json!({"type": "campaign_tool_calls", "campaign_id": "camp_0003",
            "calls": [{"id": "c1", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}]})).await;
        assert_eq!(moved["applied_actions"].as_array().unwrap().len(), 1, "{moved}");
        let state = ask(&mut ws, 103, json!({"type": "campaign_state", "campaign_id": "camp_0003"})).await;
        assert_eq!(state["campaign"]["actors"]["pc_001"]["position"], "area_002");

        // Loading again under a loaded id replaces it, at the cap.
        let again = ask(&mut ws, 104, json!({"type": "campaign_load", "campaign": campaign("camp_0000", 4, 2)})).await;
        assert_eq!(again["type"], "campaign_load_response", "{again}");
        assert_eq!(again["area_count"], 4);
        assert_eq!(runtime.loaded_campaign_count(), MAX_LOADED_CAMPAIGNS);

        // Unloading frees room; the unloaded one is gone, the others stay.
        let unloaded = ask(&mut ws, 105, json!({"type": "campaign_unload", "campaign_id": "camp_0000"})).await;
        assert_eq!(unloaded, json!({"type": "campaign_unload_response", "request_id": 105, "campaign_id": "camp_0000"}));
        for (i, request) in [
            json!({"type": "campaign_unload", "campaign_id": "camp_0000"}),
            json!({"type": "campaign_state", "campaign_id": "camp_0000"}),
        ]
        .into_iter()
        .enumerate()
        {
            let e = ask(&mut ws, 110 + i as i64, request).await;
            assert_eq!(e["code"], "unknown_campaign", "{e}");
            assert!(e["message"].as_str().unwrap().contains("camp_0000"), "{e}");
        }
        // An unloaded campaign's turn log is kept: loaded again, its turns count on.
        let spawned = ask(&mut ws, 130, json!({"type": "agent_spawn_request",
            "agent_config": {"name": "Morgana", "role": "game master"}})).await;
        let gm = spawned["agent_id"].as_str().unwrap().to_string();
        let turn = json!({"type": "campaign_turn", "campaign_id": "camp_0001", "gm_agent_id": gm,
            "user_input": "Onwards", "actor_id": "pc_001"});
        let first = ask(&mut ws, 131, turn.clone()).await;
        assert_eq!(first["entry"]["turn_id"], "turn_0001", "{first}");
        ask(&mut ws, 132, json!({"type": "campaign_unload", "campaign_id": "camp_0001"})).await;
        let e = ask(&mut ws, 133, turn.clone()).await;
        assert_eq!(e["code"], "unknown_campaign", "{e}");
        ask(&mut ws, 134, json!({"type": "campaign_load", "campaign": {"id": "camp_0001"}})).await;
        let second = ask(&mut ws, 135, turn).await;
        assert_eq!(second["entry"]["turn_id"], "turn_0002", "{second}");
        let state = ask(&mut ws, 136, json!({"type": "campaign_state", "campaign_id": "camp_0001"})).await;
        assert_eq!(state["turns"], 2);

        let loaded = ask(&mut ws, 120, over).await;
        assert_eq!(loaded["type"], "campaign_load_response", "{loaded}");
        assert_eq!(loaded["campaign_id"], "camp_over");
        let kept = ask(&mut ws, 121, json!({"type": "campaign_state", "campaign_id": "camp_0003"})).await;
        assert_eq!(kept["campaign"]["actors"]["pc_001"]["position"], "area_002");
        assert_eq!(runtime.loaded_campaign_count(), MAX_LOADED_CAMPAIGNS);
    });
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}

/// A campaign at the size limits loads; its replies stay under 64 KiB, and a client walking
/// `campaign_state` pages with `next_cursor` gets every area, actor and connection once. One
/// past a limit is refused naming it, and the campaign loaded under that id is unchanged.
#[test]
fn a_large_campaign_comes_in_pages_and_a_larger_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    std::fs::create_dir_all(&campaigns).unwrap();
    let (runtime, server, client) = serve_campaigns(dir.path(), &campaigns);
    client.block_on(async {
        let mut ws = connect(&server).await;
        let big = campaign("camp_big", MAX_CAMPAIGN_AREAS, MAX_CAMPAIGN_ACTORS);
        let loaded = ask(
            &mut ws,
            1,
            json!({"type": "campaign_load", "campaign": big}),
        )
        .await;
        assert_eq!(loaded["type"], "campaign_load_response", "{loaded}");
        assert!(
            bytes(&loaded) < GODOT_INBOUND_BYTES,
            "{} bytes",
            bytes(&loaded)
        );
        assert_eq!(loaded["campaign_truncated"], true);
        assert_eq!(loaded["area_count"], MAX_CAMPAIGN_AREAS);
        assert_eq!(loaded["actor_count"], MAX_CAMPAIGN_ACTORS);
        assert_eq!(loaded["campaign"]["selected"]["active_actor_id"], "pc_0000");

        // Walk every page of campaign_state.
        let (mut areas, mut actors, mut links) = (BTreeSet::new(), BTreeSet::new(), 0);
        let mut cursor = Value::Null;
        let mut pages = 0;
        loop {
            let mut request = json!({"type": "campaign_state", "campaign_id": "camp_big"});
            if !cursor.is_null() {
                request["cursor"] = cursor.clone();
            }
            let page = ask(&mut ws, 10 + pages, request).await;
            pages += 1;
            assert_eq!(page["type"], "campaign_state_response", "{page}");
            assert!(
                bytes(&page) < GODOT_INBOUND_BYTES,
                "page {pages}: {} bytes",
                bytes(&page)
            );
            assert_eq!(page["campaign_truncated"], true);
            for id in page["campaign"]["map"]["areas"].as_object().unwrap().keys() {
                assert!(areas.insert(id.clone()), "area {id} sent twice");
            }
            for id in page["campaign"]["actors"].as_object().unwrap().keys() {
                assert!(actors.insert(id.clone()), "actor {id} sent twice");
            }
            links += page["campaign"]["map"]["connections"]
                .as_array()
                .unwrap()
                .len();
            cursor = page["next_cursor"].clone();
            if cursor.is_null() {
                break;
            }
            assert!(pages < 100, "the pages never end");
        }
        assert!(pages > 2, "{pages} pages");
        assert_eq!(areas.len(), MAX_CAMPAIGN_AREAS);
        assert_eq!(actors.len(), MAX_CAMPAIGN_ACTORS);
        assert_eq!(links, MAX_CAMPAIGN_AREAS - 1);
        let bad = ask(
            &mut ws,
            200,
            json!({"type": "campaign_state", "campaign_id": "camp_big", "cursor": "t42"}),
        )
        .await;
        assert_eq!(bad["code"], "invalid_request", "{bad}");
        assert!(
            bad["message"]
                .as_str()
                .unwrap()
                .contains("cursor 't42' is not a campaign cursor"),
            "{bad}"
        );

        // Past each limit: refused, naming it; camp_big stays as it was.
        let mut fat = campaign("camp_big", 2, 2);
        fat["actors"]["pc_0001"]["meta"]["notes"] = json!("y".repeat(MAX_CAMPAIGN_ENTRY_BYTES));
        for (i, (over, says)) in [
            (
                campaign("camp_big", MAX_CAMPAIGN_AREAS + 1, 1),
                format!(
                    "map.areas: {} areas; the limit is {MAX_CAMPAIGN_AREAS}",
                    MAX_CAMPAIGN_AREAS + 1
                ),
            ),
            (
                campaign("camp_big", 3, MAX_CAMPAIGN_ACTORS + 1),
                format!(
                    "actors: {} actors; the limit is {MAX_CAMPAIGN_ACTORS}",
                    MAX_CAMPAIGN_ACTORS + 1
                ),
            ),
            (
                fat,
                format!(
                    "actor:pc_0001: 8277 bytes of JSON; the limit is {MAX_CAMPAIGN_ENTRY_BYTES}"
                ),
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let e = ask(
                &mut ws,
                300 + i as i64,
                json!({"type": "campaign_load", "campaign": over}),
            )
            .await;
            assert_eq!(e["code"], "invalid_message", "{e}");
            assert!(
                e["message"].as_str().unwrap().contains(&says),
                "{says}: {e}"
            );
        }
        let still = ask(
            &mut ws,
            400,
            json!({"type": "campaign_state", "campaign_id": "camp_big"}),
        )
        .await;
        assert_eq!(still["area_count"], MAX_CAMPAIGN_AREAS);
        assert_eq!(still["actor_count"], MAX_CAMPAIGN_ACTORS);

        // Within the reply budget, the campaign comes whole.
        let small = ask(
            &mut ws,
            500,
            json!({"type": "campaign_load", "campaign": campaign("camp_small", 3, 2)}),
        )
        .await;
        assert_eq!(small["campaign_truncated"], false);
        assert_eq!(small["next_cursor"], Value::Null);
        assert_eq!(
            small["campaign"]["map"]["connections"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    });
    server.shutdown(std::time::Duration::from_secs(2));
    runtime.shutdown(std::time::Duration::from_secs(2));
}
