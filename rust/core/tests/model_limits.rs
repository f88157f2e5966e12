//! What one provider can take from the others: a hanging endpoint holds at most its share of
//! the runtime's model-call permits, endpoints that hang never keep a healthy one's call
//! waiting, and a provider asking for a long wait gets no retry. Real
//! HTTP servers on loopback (the fake provider), real time.

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter};
use agents_core::runtime::{Runtime, RuntimeOptions};
use agents_fakellm::{Behaviour, FakeServer};
use serde_json::json;
use tokio::runtime::Handle;

mod common;
use common::{agent, error_of, spoke_by, until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_provider_does_not_starve_the_agents_of_another() {
    let hanging = FakeServer::start("127.0.0.1:0").await.unwrap();
    hanging.set_default(Behaviour::Hang);
    let healthy = FakeServer::start("127.0.0.1:0").await.unwrap();
    healthy.set_default(Behaviour::text("Right away."));
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 1000.0,
            speaking_seconds: 0.01,
            max_concurrent_model_calls: 4,
            max_concurrent_model_calls_per_endpoint: 3,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let stuck = json!({"provider": "openai", "model": "m", "base_url": hanging.openai_base(),
                       "timeout_seconds": 120, "max_retries": 0});
    for _ in 0..6 {
        let id = rt.spawn(agent(stuck.clone())).unwrap();
        rt.send_message(&id, "Are you there?").unwrap();
    }
    // Every permit the hanging endpoint may hold is held before the healthy agent asks (a
    // hanging request never ends, so the requests received are the calls in flight).
    for _ in 0..200 {
        if hanging.requests().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        hanging.requests().len(),
        3,
        "three calls at a time to one endpoint"
    );
    let fine = rt
        .spawn(agent(json!({"provider": "openai", "model": "m",
                            "base_url": healthy.openai_base()})))
        .unwrap();
    rt.send_message(&fine, "Bread, please.").unwrap();
    // Well before any of the hanging calls' 120 s timeouts.
    until(&mut sub, Duration::from_secs(10), spoke_by(&fine)).await;
    assert_eq!(healthy.requests().len(), 1);
    assert_eq!(
        hanging.requests().len(),
        3,
        "still three, the others queued"
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_asking_for_an_hour_gets_no_retry() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push(Behaviour::Status {
        status: 429,
        body: json!({"error": {"message": "come back in an hour"}}),
        retry_after: Some("3600".into()),
    });
    let dir = tempfile::tempdir().unwrap();
    let rt = common::runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(json!({"provider": "openai", "model": "m",
                            "base_url": fake.openai_base(), "max_retries": 3})))
        .unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), error_of(&id)).await;
    let Some(BusMessage::AgentError { message, .. }) = events.last() else {
        panic!("no error: {events:?}")
    };
    assert!(message.contains("rate limited (429)"), "{message}");
    assert!(
        !message.contains("come back"),
        "the provider's words stay in the log"
    );
    assert_eq!(fake.requests().len(), 1, "no retry");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_that_hang_do_not_hold_back_a_healthy_one() {
    // The runtime's default limits, and the counts a probe used: 4 + 4 agents hanging on two
    // endpoints, then one agent of a third.
    let hanging = [
        FakeServer::start("127.0.0.1:0").await.unwrap(),
        FakeServer::start("127.0.0.1:0").await.unwrap(),
    ];
    for server in &hanging {
        server.set_default(Behaviour::Hang);
    }
    let healthy = FakeServer::start("127.0.0.1:0").await.unwrap();
    healthy.set_default(Behaviour::text("Right away."));
    let dir = tempfile::tempdir().unwrap();
    let rt = common::runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    for server in &hanging {
        let stuck = json!({"provider": "openai", "model": "m", "base_url": server.openai_base(),
                           "timeout_seconds": 120, "max_retries": 0});
        for _ in 0..4 {
            let id = rt.spawn(agent(stuck.clone())).unwrap();
            rt.send_message(&id, "Are you there?").unwrap();
        }
    }
    // Every hanging call is in flight (a hanging request never ends, so the requests received
    // are the calls in flight): together they hold every permit of the runtime's eight.
    for _ in 0..400 {
        if hanging.iter().all(|s| s.requests().len() == 4) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(hanging.each_ref().map(|s| s.requests().len()), [4, 4]);
    let fine = rt
        .spawn(agent(json!({"provider": "openai", "model": "m",
                            "base_url": healthy.openai_base()})))
        .unwrap();
    rt.send_message(&fine, "Bread, please.").unwrap();
    // It answers while the eight still hang (their timeouts are 120 s away; this bound only
    // guards the test).
    until(&mut sub, Duration::from_secs(30), spoke_by(&fine)).await;
    assert_eq!(healthy.requests().len(), 1);
    assert_eq!(
        hanging.each_ref().map(|s| s.requests().len()),
        [4, 4],
        "the hanging calls are still in flight"
    );
    rt.shutdown(Duration::from_secs(2));
}
