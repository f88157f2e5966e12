//! `get_app_session` over a real WebSocket on loopback stays under the 64 KiB a Godot client
//! reads: a long session's reply holds its newest chat lines and events that fit and counts the
//! rest, a state too large for the reply is left out and said so, and the session itself keeps
//! everything.

use std::time::Duration;

use serde_json::{Value, json};

use super::tests_apps::{connect, of_type, serve};

/// What a Godot client's `WebSocketPeer` reads in one message by default.
const GODOT_INBOUND_BYTES: usize = 64 * 1024;

#[test]
fn a_long_app_session_is_cut_to_its_newest_rows_that_fit() {
    let dir = tempfile::tempdir().unwrap();
    let (runtime, server) = serve(&dir);
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    client.block_on(async {
        let mut ws = connect(&server, json!([])).await;
        ws.send(json!({"type": "app_register", "request_id": 1, "app_id": "board",
            "actions": [{"name": "place", "params": {"row": "int"}}]}))
            .await;
        ws.until(of_type("app_register_response")).await;
        let lines = crate::apps::CHAT_LINES;
        for i in 0..lines {
            let text = format!("line {i:03} {}", "w".repeat(3_900));
            ws.send(json!({"type": "app_human_says", "request_id": 100 + i, "app_id": "board", "text": text}))
                .await;
            let r = ws.until(|v| v["request_id"] == 100 + i).await;
            assert_eq!(r["type"], "app_human_says_response", "{r}");
        }
        for i in 0..5 {
            ws.send(json!({"type": "app_event", "request_id": 1000 + i, "app_id": "board",
                "name": "tick", "payload": {"n": i, "pad": "p".repeat(10_000)}}))
                .await;
            let r = ws.until(|v| v["request_id"] == 1000 + i).await;
            assert_eq!(r["type"], "app_event_response", "{r}");
        }

        ws.send(json!({"type": "get_app_session", "request_id": 2, "app_id": "board"})).await;
        let reply = ws.until(of_type("get_app_session_response")).await;
        let size = serde_json::to_vec(&reply).unwrap().len();
        assert!(size < GODOT_INBOUND_BYTES, "{size} bytes");
        let session = &reply["session"];
        let chat = session["chat"].as_array().unwrap();
        let chat_left_out = reply["chat_left_out"].as_u64().unwrap() as usize;
        assert!(chat_left_out > 0 && !chat.is_empty(), "{chat_left_out} left out");
        assert_eq!(chat.len() + chat_left_out, lines);
        let newest = chat.last().unwrap()["text"].as_str().unwrap();
        assert!(newest.starts_with(&format!("line {:03} ", lines - 1)), "{newest:.12}");
        let oldest_kept = chat[0]["text"].as_str().unwrap();
        assert!(oldest_kept.starts_with(&format!("line {chat_left_out:03} ")), "{oldest_kept:.12}");
        let held = runtime.app_session("board").unwrap();
        let events_left_out = reply["events_left_out"].as_u64().unwrap() as usize;
        assert_eq!(session["events"].as_array().unwrap().len() + events_left_out, held.events.len());
        assert_eq!(reply["state_left_out"], false);
        assert_eq!(held.chat.len(), lines, "the session keeps every line");

        // A state too large for the reply is left out of it, not out of the session.
        let state = json!({"board": "x".repeat(200_000)});
        ws.send(json!({"type": "app_set_context", "request_id": 3, "app_id": "board", "state": state})).await;
        let r = ws.until(|v| v["request_id"] == 3).await;
        assert_eq!(r["type"], "app_set_context_response", "{r}");
        ws.send(json!({"type": "get_app_session", "request_id": 4, "app_id": "board"})).await;
        let reply = ws.until(|v| v["request_id"] == 4).await;
        let size = serde_json::to_vec(&reply).unwrap().len();
        assert!(size < GODOT_INBOUND_BYTES, "{size} bytes");
        assert_eq!(reply["state_left_out"], true);
        assert_eq!(reply["session"]["state"], Value::Null);
        assert_eq!(reply["session"]["actions"][0]["name"], "place");
        assert_eq!(runtime.app_session("board").unwrap().state, state);
    });
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}
