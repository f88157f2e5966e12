//! What a broken or hostile model provider can do to an agent, and what must keep holding
//!: the provider is a hand-made HTTP server on loopback that
//! writes exactly the bytes a test scripts — an event stream that drips one byte at a time or
//! stops mid-answer, invalid UTF-8, an HTML page, JSON nested 100,000 deep — or the fake
//! provider answering 10,000 tool calls at once. Each time the call ends with a clean
//! `brain_error` (its cause in the agent's trace), at the brain's `timeout_seconds` when the
//! provider stalls, the connection is dropped, nothing of the answer runs, and the agent is idle
//! again. Terminating an agent mid-stream drops the connection at once. Real time, real SQLite.

use std::sync::Arc;
use std::time::Duration;

use agents_core::bus::{BusMessage, Filter};
use agents_core::runtime::Runtime;
use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

mod common;
use common::{agent, error_of, runtime, until};

/// One step of a [`RawServer`]'s answer.
#[derive(Clone)]
enum Step {
    /// Writes these bytes.
    Write(Vec<u8>),
    /// Writes these bytes one at a time, `every` apart.
    Drip { bytes: Vec<u8>, every: Duration },
    /// Sends nothing more and keeps the connection open (the last step).
    Hold,
}

/// A provider that answers every request with the same scripted bytes, and notes when each
/// client closed its connection.
struct RawServer {
    base: String,
    /// How many requests were read.
    requests: Arc<Mutex<usize>>,
    /// When clients closed their connections (before the script ended).
    dropped: Arc<Mutex<Vec<Instant>>>,
}

impl RawServer {
    async fn start(script: Vec<Step>) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(0));
        let dropped = Arc::new(Mutex::new(Vec::new()));
        let (r, d) = (requests.clone(), dropped.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (script, r, d) = (script.clone(), r.clone(), d.clone());
                tokio::spawn(async move { serve(socket, script, r, d).await });
            }
        });
        RawServer {
            base,
            requests,
            dropped,
        }
    }

    fn requests(&self) -> usize {
        *self.requests.lock()
    }

    fn dropped(&self) -> Vec<Instant> {
        self.dropped.lock().clone()
    }
}

/// Reads one request (head and `Content-Length` body), then plays `script` while watching for
/// the client closing the connection.
async fn serve(
    mut socket: TcpStream,
    script: Vec<Step>,
    requests: Arc<Mutex<usize>>,
    dropped: Arc<Mutex<Vec<Instant>>>,
) {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    let body_start = loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
        if let Some(at) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&got[..body_start]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while got.len() < body_start + length {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    *requests.lock() += 1;
    let (mut reader, mut writer) = socket.into_split();
    let play = async move {
        for step in script {
            match step {
                Step::Write(bytes) => writer.write_all(&bytes).await?,
                Step::Drip { bytes, every } => {
                    for b in bytes {
                        writer.write_all(&[b]).await?;
                        tokio::time::sleep(every).await;
                    }
                }
                Step::Hold => std::future::pending::<()>().await,
            }
        }
        writer.shutdown().await
    };
    // The client sends nothing more: a read that ends is the client closing.
    let closed = async move {
        let mut rest = [0u8; 1024];
        while let Ok(n) = reader.read(&mut rest).await {
            if n == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = play => {}
        _ = closed => dropped.lock().push(Instant::now()),
    }
}

/// A `200 OK` head with `content_type`; the body runs until the connection closes.
fn head(content_type: &str) -> Step {
    Step::Write(
        format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n")
            .into_bytes(),
    )
}

/// An OpenAI stream event carrying `text`, as bytes.
fn openai_delta(text: &str) -> Vec<u8> {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    format!("data: {chunk}\n\n").into_bytes()
}

/// An OpenAI brain on `base` that tries once and waits at most `timeout_seconds`.
fn brain(base: &str, timeout_seconds: f64) -> Value {
    json!({"provider": "openai", "model": "m", "base_url": format!("{base}/v1"),
           "timeout_seconds": timeout_seconds, "max_retries": 0})
}

/// What became of one failed decision.
struct Failure {
    /// The `agent_error`'s message.
    message: String,
    /// The failed call's code in the agent's trace (`brain_timeout`, …).
    call_code: String,
    /// From the message to the error.
    took: Duration,
}

/// Spawns an agent thinking with `brain`, says hello, and waits (at most `within`) for its
/// `agent_error`, which must be a `brain_error`; the agent must be idle afterwards.
async fn fails(rt: &Runtime, brain: Value, within: Duration) -> Failure {
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(agent(brain)).unwrap();
    let asked = Instant::now();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, within, error_of(&id)).await;
    let took = asked.elapsed();
    let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(code.as_str(), "brain_error", "{message}");
    assert!(
        !events
            .iter()
            .any(|m| matches!(m, BusMessage::AgentSpoke { agent_id, .. } if *agent_id == id)),
        "nothing of a failed answer is said: {events:?}"
    );
    let trace = rt.agent_trace(&id, 10).unwrap();
    let call_code = trace[0].call.error_code.clone().unwrap_or_default();
    becomes_idle(rt, &id).await;
    Failure {
        message: message.clone(),
        call_code,
        took,
    }
}

/// Waits (at most 5 s) for agent `id` to be idle again: a failed decision ends its thinking.
async fn becomes_idle(rt: &Runtime, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while rt.state(id).unwrap().state.to_string() != "idle" {
        assert!(Instant::now() < deadline, "the agent stays busy");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts a timed-out call ended at about its one-second timeout and its connection was
/// dropped (the server sees that at its next write: a dripping one within a second or two).
async fn assert_timed_out(server: &RawServer, failure: &Failure) {
    assert_eq!(failure.call_code, "brain_timeout", "{}", failure.message);
    assert!(
        failure.message.contains("no answer within 1 s"),
        "{}",
        failure.message
    );
    assert!(
        failure.took >= Duration::from_secs(1),
        "not before the timeout: {:?}",
        failure.took
    );
    assert!(
        failure.took < Duration::from_secs(4),
        "at the timeout, not later: {:?}",
        failure.took
    );
    assert_eq!(server.requests(), 1, "no retry");
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.dropped().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.dropped().len(), 1, "the connection was dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_dripping_one_byte_a_second_ends_at_the_brain_timeout() {
    let mut answer = openai_delta("Hello there, I am answering very slowly.");
    answer.extend(b"data: [DONE]\n\n");
    let server = RawServer::start(vec![
        head("text/event-stream"),
        Step::Drip {
            bytes: answer,
            every: Duration::from_secs(1),
        },
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let failure = fails(&rt, brain(&server.base, 1.0), Duration::from_secs(10)).await;
    assert_timed_out(&server, &failure).await;
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stops_sending_ends_at_the_brain_timeout() {
    let server = RawServer::start(vec![
        head("text/event-stream"),
        Step::Write(openai_delta("I was about to say")),
        Step::Hold,
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let failure = fails(&rt, brain(&server.base, 1.0), Duration::from_secs(10)).await;
    assert_timed_out(&server, &failure).await;
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_an_agent_mid_stream_drops_the_connection_at_once() {
    // Whole events about every 300 ms, for far longer than the test: only the terminate ends it.
    let events: Vec<u8> = (0..1000)
        .flat_map(|i| openai_delta(&format!("word{i} ")))
        .collect();
    let server = RawServer::start(vec![
        head("text/event-stream"),
        Step::Drip {
            bytes: events,
            every: Duration::from_millis(2),
        },
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(agent(brain(&server.base, 60.0))).unwrap();
    rt.send_message(&id, "Tell me a long story.").unwrap();
    // The answer is streaming: its first words reached the bus.
    let seen = id.clone();
    until(
        &mut sub,
        Duration::from_secs(10),
        move |m| matches!(m, BusMessage::AgentSpeechDelta { agent_id, .. } if *agent_id == seen),
    )
    .await;
    assert!(server.dropped().is_empty());
    let terminated = Instant::now();
    rt.terminate(&id).unwrap();
    let deadline = terminated + Duration::from_secs(2);
    while server.dropped().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the call goes on after terminate"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let after = server.dropped()[0] - terminated;
    assert!(
        after < Duration::from_secs(1),
        "dropped {after:?} after terminate"
    );
    assert!(rt.state(&id).is_none(), "the agent is gone");
    assert_eq!(server.requests(), 1);
    rt.shutdown(Duration::from_secs(2));
}

/// `[` nested `depth` deep (then closed).
fn nested(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_html_and_deep_json_answers_are_clean_brain_errors() {
    let deep = nested(100_000);
    let mut bad_utf8_frame = b"data: \xff\xfe\xfd\xc0\xaf\n\n".to_vec();
    bad_utf8_frame.extend(b"data: [DONE]\n\n");
    // A body that is not an event stream at all, and an event that is not the provider's
    // JSON, are both `brain_invalid_response` (not retried: asking again gets the same).
    let not_a_stream = ["brain_invalid_response"].as_slice();
    let bad_event = ["brain_invalid_response"].as_slice();
    let cases: Vec<(&str, &[&str], Vec<Step>)> = vec![
        (
            "an HTML page",
            not_a_stream,
            vec![
                head("text/html"),
                Step::Write(b"<html><body><h1>502 Bad Gateway</h1></body></html>".to_vec()),
            ],
        ),
        (
            "a body of invalid UTF-8",
            not_a_stream,
            vec![
                head("application/json"),
                Step::Write(b"\xff\xfe\x00\x80\xc3\x28{\"choices\": \xf0\x28\x8c\xbc".to_vec()),
            ],
        ),
        (
            "JSON nested 100,000 deep, whole",
            not_a_stream,
            vec![
                head("application/json"),
                Step::Write(deep.clone().into_bytes()),
            ],
        ),
        (
            "JSON nested 100,000 deep as an event",
            bad_event,
            vec![
                head("text/event-stream"),
                Step::Write(format!("data: {deep}\n\ndata: [DONE]\n\n").into_bytes()),
            ],
        ),
        (
            "an event whose data is invalid UTF-8",
            bad_event,
            vec![head("text/event-stream"), Step::Write(bad_utf8_frame)],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    for (what, expected, script) in cases {
        let server = RawServer::start(script).await;
        let failure = fails(&rt, brain(&server.base, 5.0), Duration::from_secs(10)).await;
        assert!(
            expected.contains(&failure.call_code.as_str()),
            "{what}: {} — {}",
            failure.call_code,
            failure.message
        );
        assert!(
            !failure.message.contains("Bad Gateway") && !failure.message.contains("[[["),
            "{what}: the upstream's words stay out of the error: {}",
            failure.message
        );
        assert!(failure.message.len() < 1_000, "{what}: {}", failure.message);
    }
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tool_calls_in_one_answer_are_refused_whole() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let flood: Vec<FakeCall> = (0..10_000)
        .map(|i| FakeCall::new("move", json!({"x": i % 20, "y": 3})))
        .collect();
    fake.set_default(Behaviour::calls(flood));
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(json!({"provider": "openai", "model": "m",
                            "base_url": fake.openai_base(), "max_retries": 0})))
        .unwrap();
    rt.send_message(&id, "Go everywhere at once.").unwrap();
    let events = until(&mut sub, Duration::from_secs(60), error_of(&id)).await;
    let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(code.as_str(), "brain_invalid_reply", "{message}");
    assert!(message.len() < 4_000, "{} bytes", message.len());
    assert!(message.contains("10000 tool calls"), "{message}");
    assert!(
        !events
            .iter()
            .any(|m| matches!(m, BusMessage::AgentMoved { .. })),
        "nothing ran"
    );
    becomes_idle(&rt, &id).await;
    // The first ask and its repairs: a few requests, each sending back a bounded copy.
    let requests = fake.requests();
    assert!(
        (2..=4).contains(&requests.len()),
        "{} requests",
        requests.len()
    );
    for r in &requests[1..] {
        let sent = r.body["messages"].to_string();
        assert!(sent.len() < 64 * 1024, "a repair sent {} bytes", sent.len());
    }
    // The agent lives on: the next answer is obeyed.
    fake.set_default(Behaviour::text("Fine, one step at a time."));
    rt.send_message(&id, "One step, please.").unwrap();
    until(&mut sub, Duration::from_secs(10), common::spoke_by(&id)).await;
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_inside_streamed_text_becomes_replacement_characters() {
    let mut event =
        b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Bread ".to_vec();
    event.extend(b"\xff\xfe\xc3\x28 \xed\xa0\x80");
    event.extend(b" here.\"}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n");
    let server = RawServer::start(vec![head("text/event-stream"), Step::Write(event)]).await;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(agent(brain(&server.base, 5.0))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), common::spoke_by(&id)).await;
    let Some(BusMessage::AgentSpoke { content, .. }) = events.last() else {
        unreachable!()
    };
    assert!(content.starts_with("Bread \u{FFFD}"), "{content:?}");
    assert!(content.ends_with(" here."), "{content:?}");
    rt.shutdown(Duration::from_secs(2));
}
