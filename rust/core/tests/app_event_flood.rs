//! An app that emits 100,000 events (`app_event` arrives over the
//! wire): nothing is lost on the way — every event is accepted and goes out to the app's front
//! end, in order, once — while what is kept stays bounded however many came: in memory and in
//! the agent's prompt the app's `history` (the last events), in the database the newest
//! [`MAX_APP_LOG_ROWS`] (the older ones pruned as newer are written). The agent thinks with the fake provider
//! (a real HTTP server on loopback) and keeps answering; real SQLite, real time.

use std::time::Duration;

use agents_core::apps::{AppConfig, AppHandler, AppOutbound};
use agents_core::limits::MAX_APP_LOG_ROWS;
use agents_fakellm::{Behaviour, FakeServer};
use serde_json::json;
use tokio::time::Instant;

mod common;
use common::{agent, runtime};

/// How many events the app emits.
const EVENTS: u64 = 100_000;

/// The events the app's agent is shown (the app's `history`).
const HISTORY: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_app_events_lose_nothing_and_stay_bounded() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::text("Noted."));
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut config = AppConfig::new("ticker");
    config.history = HISTORY;
    let mut outbound = rt.register_app(config, AppHandler::Remote).unwrap();
    let id = rt
        .spawn(agent(
            json!({"provider": "openai", "model": "m", "base_url": fake.openai_base()}),
        ))
        .unwrap();
    rt.attach_app("ticker", &id).unwrap();

    // The front end reads what the app sends out while the events pour in.
    let reader = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(out) = outbound.recv().await {
            if let AppOutbound::Event(event) = out {
                seen.push(event.payload["n"].as_u64().unwrap());
                if seen.len() as u64 == EVENTS {
                    break;
                }
            }
        }
        seen
    });
    for n in 0..EVENTS {
        rt.emit_app_event("ticker", "tick", json!({"n": n}))
            .unwrap_or_else(|e| panic!("event {n}: {e}"));
    }
    let seen = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("the front end got every event")
        .unwrap();
    assert!(
        seen.iter().copied().eq(0..EVENTS),
        "every event, in order, once"
    );

    // In memory: the last `history` events only.
    let session = rt.app_session("ticker").unwrap();
    let kept: Vec<u64> = session
        .events
        .iter()
        .map(|e| e.payload["n"].as_u64().unwrap())
        .collect();
    assert!(
        kept.iter().copied().eq(EVENTS - HISTORY as u64..EVENTS),
        "{kept:?}"
    );

    // The agent is woken, not once per event: it decides on the last events, shown at most
    // `history` of them, with a prompt of bounded size.
    let last = format!("Event: tick — {{ n: {} }}", EVENTS - 1);
    let deadline = Instant::now() + Duration::from_secs(30);
    let prompt = loop {
        if let Some(r) = fake
            .requests()
            .into_iter()
            .find(|r| r.body["messages"].to_string().contains(&last))
        {
            break r.body["messages"].to_string();
        }
        assert!(
            Instant::now() < deadline,
            "the agent never saw the last event"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The app's last `history` events, and at most the recalled memories of earlier ones.
    let recalled = agents_core::mind::MemorySettings::default().recall_limit;
    assert!(
        prompt.matches("Event: tick").count() <= HISTORY + recalled,
        "{prompt}"
    );
    assert!(prompt.len() < 32 * 1024, "{} bytes", prompt.len());
    let asked = fake.requests().len();
    assert!(
        asked < 1_000,
        "{asked} model calls for {EVENTS} events: wakes are not coalesced"
    );

    // Stored: the newest MAX_APP_LOG_ROWS events, the last one included.
    rt.flush().unwrap();
    let db = rusqlite::Connection::open(dir.path().join("agents.db")).unwrap();
    let entry = |order: &str| -> String {
        db.query_row(
            &format!(
                "SELECT entry FROM app_log WHERE app_id = 'ticker' AND kind = 'event' \
                 ORDER BY id {order} LIMIT 1"
            ),
            [],
            |row| row.get(0),
        )
        .unwrap()
    };
    let (first, newest) = (entry("ASC"), entry("DESC"));
    let count: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM app_log WHERE app_id = 'ticker' AND kind = 'event'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(count as usize, MAX_APP_LOG_ROWS, "the log is capped");
    let oldest_kept = EVENTS - MAX_APP_LOG_ROWS as u64;
    assert!(first.contains(&format!("\"n\":{oldest_kept}")), "{first}");
    assert!(
        newest.contains(&format!("\"n\":{}", EVENTS - 1)),
        "{newest}"
    );
    rt.shutdown(Duration::from_secs(2));
}
