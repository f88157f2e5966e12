//! Fan-out over real sockets: every connection receives the same event text, and a client that
//! stops reading is disconnected once a write to it stalls for the write timeout, while the
//! others go on receiving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;

use super::*;
use crate::bus::BusMessage;
use crate::runtime::RuntimeOptions;

/// Events published, each `EVENT_BYTES` of speech: far more than loopback's socket buffers.
const EVENTS: usize = 1_000;
const EVENT_BYTES: usize = 64 * 1024;

fn speech(n: usize) -> BusMessage {
    BusMessage::AgentSpoke {
        agent_id: format!("agent_{:03}", n % 7 + 1),
        content: format!("{n:06} {}", "x".repeat(EVENT_BYTES)),
        recipients: vec!["player_0".into()],
        dialog_type: "chat".into(),
        inbox_id: None,
    }
}

#[test]
fn a_client_that_stops_reading_is_disconnected_and_the_others_get_identical_events() {
    let dir = tempfile::tempdir().unwrap();
    let runtime =
        Arc::new(Runtime::start(RuntimeOptions::with_database(dir.path().join("f.db"))).unwrap());
    let tools = Arc::new(ToolRegistry::with_game_tools());
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        // Large enough that the queue rule does not fire first: the write timeout must.
        outbound_queue: 1_000_000,
        write_timeout: Duration::from_millis(300),
        close_timeout: Duration::from_millis(200),
        ..ServerConfig::default()
    };
    let handle = runtime.handle().clone();
    let server = Server::start(runtime.clone(), tools, config, &handle).unwrap();
    let url = format!("ws://{}/ws", server.local_addr());
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let connect = |url: String| async move {
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let Some(Ok(Message::Text(welcome))) = ws.next().await else {
            panic!("no welcome")
        };
        assert!(welcome.as_str().contains("\"welcome\""));
        ws
    };
    let stalled = client.block_on(connect(url.clone()));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let ws = client.block_on(connect(url.clone()));
            client.spawn(async move {
                let mut ws = ws;
                let mut texts = Vec::with_capacity(EVENTS);
                while texts.len() < EVENTS {
                    match tokio::time::timeout(Duration::from_secs(30), ws.next()).await {
                        Ok(Some(Ok(Message::Text(t)))) => texts.push(t.as_str().to_owned()),
                        Ok(Some(Ok(_))) => {}
                        other => panic!("reader stopped after {}: {other:?}", texts.len()),
                    }
                }
                texts
            })
        })
        .collect();
    let wait_for = |n: usize, within: Duration| {
        let deadline = Instant::now() + within;
        while server.connection_count() != n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        server.connection_count()
    };
    assert_eq!(wait_for(3, Duration::from_secs(5)), 3);

    let started = Instant::now();
    for n in 0..EVENTS {
        runtime.bus().publish(speech(n));
    }
    // The stalled client: its socket fills, a write stalls for 300 ms, it is closed (plus at
    // most three close timeouts of 200 ms on the way out).
    assert_eq!(
        wait_for(2, Duration::from_secs(10)),
        2,
        "the stalled client is still connected"
    );
    let gone_after = started.elapsed();
    assert!(gone_after < Duration::from_secs(10), "{gone_after:?}");

    let texts: Vec<Vec<String>> = readers
        .into_iter()
        .map(|r| client.block_on(r).unwrap())
        .collect();
    assert_eq!(texts[0].len(), EVENTS);
    assert!(texts[0] == texts[1], "the readers received different texts");
    for (n, text) in texts[0].iter().enumerate() {
        assert!(
            text.contains(&format!("\"content\":\"{n:06} ")),
            "event {n} out of order"
        );
        assert!(
            text.starts_with("{\"type\":\"agent_speech\""),
            "{}",
            &text[..80]
        );
    }
    drop(stalled);
    server.shutdown(Duration::from_secs(5));
    runtime.shutdown(Duration::from_secs(5));
}
