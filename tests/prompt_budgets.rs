//! What a client's input may cost the operator, end to end on `agents-server serve`: over-long
//! observations are refused at the door (an observation is a memory, and a memory holds 2,000
//! characters) without a log line each; a brain that keeps failing fills the log with one
//! warning per cause and window, not one per failure; and what a client sends — observations,
//! planted memories — grows neither the next decision's prompt nor a reflection's request past
//! its budget. The fake provider (`agents_fakellm`, a real HTTP server on loopback) records the
//! exact bodies the server sends it.

mod support;

use std::path::Path;
use std::time::Duration;

use agents_fakellm::{Behaviour, FakeServer, RecordedRequest};
use serde_json::{Value, json};
use support::server::ServerProc;
use support::ws::{Client, ok, quiet_agent, spawn};

/// `serve` at `--log-level warn`, with client brains allowed and a rate limit no test reaches.
fn serve(dir: &Path) -> ServerProc {
    ServerProc::start(
        dir.join("agents.db"),
        &[
            "--log-level",
            "warn",
            "--allow-client-brains",
            "--rate-limit",
            "100000",
        ],
        &[],
    )
}

/// An agent that decides only when spoken to, thinking with the fake model.
fn fake_agent(fake: &FakeServer, name: &str) -> Value {
    let mut config = quiet_agent(name);
    config["autonomous"] = json!(false);
    config["brain"] = json!({"provider": "openai", "base_url": fake.openai_base(),
                             "model": "fake-1", "api_key": "sk-client-test", "max_retries": 0});
    config
}

/// The bytes of a recorded request's body, as JSON.
fn bytes(request: &RecordedRequest) -> usize {
    serde_json::to_vec(&request.body).unwrap().len()
}

/// Whether a recorded request is a reflection's.
fn is_reflection(request: &RecordedRequest) -> bool {
    request
        .body
        .to_string()
        .contains("You are reflecting on your recent memories")
}

/// Waits (20 s at most) until the fake has recorded a request that `pick` accepts; returns it.
async fn recorded(fake: &FakeServer, pick: impl Fn(&RecordedRequest) -> bool) -> RecordedRequest {
    for _ in 0..800 {
        if let Some(found) = fake.requests().into_iter().find(&pick) {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no such request; got {} requests", fake.requests().len());
}

/// 2,000 observations of 2,001 to 4,000 characters (which the protocol took before, and which
/// wrote a warning each because no memory holds them) are refused, each naming the field and
/// the limit; nothing is logged for them; one of 2,000 characters is taken and remembered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_long_observations_are_refused_at_the_door_and_log_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(dir.path());
    let mut c = Client::connect(&server.url()).await;
    let id = spawn(&mut c, quiet_agent("Probe")).await;
    let logged_before = server.stderr.text().lines().count();
    for i in 0..2_000 {
        let text = "o".repeat(2_001 + i);
        let reply = c
            .request(json!({"type": "observe", "agent_id": id, "text": text}))
            .await;
        assert_eq!(reply["type"], "error", "{reply}");
        assert_eq!(reply["code"], "invalid_request", "{reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.contains("text") && message.contains("the limit is 2000"),
            "{message}"
        );
    }
    let longest = "o".repeat(2_000);
    let taken = c
        .request(json!({"type": "observe", "agent_id": id, "text": longest}))
        .await;
    ok(&taken, "observe_response");
    let remembered = c
        .event(|e| e["type"] == "agent_remembered" && e["agent_id"] == id.as_str())
        .await;
    assert_eq!(remembered["kind"], "observed");
    assert_eq!(remembered["text"], longest.trim());
    c.assert_usable().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = server.stderr.text();
    let added = log.lines().count() - logged_before;
    assert!(added <= 2, "{added} lines logged:\n{log}");
    assert!(!log.contains("a memory was not formed"), "{log}");
    server.terminate();
}

/// A client whose agent's brain fails on every decision (the model answers 500) gets an
/// `agent_error` each time, and the log one warning per cause in a minute, then, as the agent
/// stops, a line counting the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brain_failing_again_and_again_warns_once_per_cause_and_window() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::Status {
        status: 500,
        body: json!({"error": {"message": "upstream exploded"}}),
        retry_after: None,
    });
    let mut server = serve(dir.path());
    let mut c = Client::connect(&server.url()).await;
    let id = spawn(&mut c, fake_agent(&fake, "Probe")).await;
    let failures = 20;
    for i in 0..failures {
        let said = c
            .request(json!({"type": "send_message", "agent_id": id, "content": format!("Hi {i}")}))
            .await;
        ok(&said, "send_message_response");
        c.event(|e| e["type"] == "agent_error" && e["agent_id"] == id.as_str())
            .await;
    }
    let log = server.stderr.text();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("WARN") && l.contains(id.as_str()))
        .collect();
    assert!(
        fake.requests().len() >= failures,
        "each decision asked the model"
    );
    // One per cause (the brain's failure, the agent error it becomes), not one per failure.
    assert!(
        (1..=4).contains(&warnings.len()),
        "{} warnings:\n{log}",
        warnings.len()
    );
    let stop = c
        .request(json!({"type": "agent_terminate_request", "agent_id": id}))
        .await;
    assert_eq!(stop["type"], "agent_terminate_response", "{stop}");
    server
        .wait_log("more warnings like the last one logged")
        .await;
    server.terminate();
}

/// 40 observations of the longest kind before a decision: its prompt keeps the newest within
/// the observations' budget and counts the rest, where it used to carry all 32 that wait
/// (132,716 bytes in the probe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_long_observations_keep_the_next_prompt_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::text("I see."));
    let mut server = serve(dir.path());
    let mut c = Client::connect(&server.url()).await;
    let mut config = fake_agent(&fake, "Probe");
    config["memory"] = json!({"importance_batch": 0});
    let id = spawn(&mut c, config).await;
    for i in 0..40 {
        let text = format!("{i:02} {}", "smoke ".repeat(333));
        let text: String = text.chars().take(2_000).collect();
        let reply = c
            .request(json!({"type": "observe", "agent_id": id, "text": text}))
            .await;
        ok(&reply, "observe_response");
    }
    let said = c
        .request(json!({"type": "send_message", "agent_id": id, "content": "What do you see?"}))
        .await;
    ok(&said, "send_message_response");
    let decision = recorded(&fake, |r| {
        r.body.to_string().contains("What do you see?") && !is_reflection(r)
    })
    .await;
    let body = decision.body.to_string();
    assert!(body.contains("You notice: 39 "), "the newest is shown");
    assert!(!body.contains("You notice: 37 "), "older ones are not");
    assert!(
        body.contains("(… and 31 earlier observations, not shown)"),
        "the rest are counted"
    );
    // The system prompt, the tools, the situation with its observations (1,000 tokens) and
    // recalled memories (240 tokens by default).
    let size = bytes(&decision);
    assert!(size <= 16_000, "the prompt is {size} bytes");
    server.terminate();
}

/// 320 planted memories of 2,000 characters: the reflection after the next decision reads the
/// most important of them within its budget, where it used to send all 100 of its window
/// (201,202 bytes in the probe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_memories_keep_the_reflection_request_within_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::text("I see."));
    let mut server = serve(dir.path());
    let mut c = Client::connect(&server.url()).await;
    let id = spawn(&mut c, fake_agent(&fake, "Probe")).await;
    for i in 0..320 {
        let text = format!("{i:03} {}", "The mill burns at noon. ".repeat(90));
        let text: String = text.chars().take(2_000).collect();
        let reply = c
            .request(json!({"type": "remember", "agent_id": id, "memory": {"text": text}}))
            .await;
        ok(&reply, "remember_response");
    }
    let said = c
        .request(json!({"type": "send_message", "agent_id": id, "content": "Hi"}))
        .await;
    ok(&said, "send_message_response");
    let reflection = recorded(&fake, is_reflection).await;
    let size = bytes(&reflection);
    // The memories' budget (3,000 tokens, about 12,000 characters) and the instructions.
    assert!(size <= 16_000, "the reflection request is {size} bytes");
    let body = reflection.body.to_string();
    assert!(body.contains("319 The mill"), "the newest are read");
    // Every request the server sent the model stays within a prompt's bounds.
    for request in fake.requests() {
        assert!(bytes(&request) <= 16_000, "{} bytes", bytes(&request));
    }
    server.terminate();
}
