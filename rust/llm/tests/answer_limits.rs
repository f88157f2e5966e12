//! What a server may send, against the fake provider on loopback: answers are read with a cap,
//! a stream cut off before its terminator is a failed call (retryable), and what a stream hands
//! the caller while it arrives is bounded.

use std::sync::Arc;
use std::time::Duration;

use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use agents_llm::client::{
    CallError, CallErrorCode, Client, Endpoint, MAX_RESPONSE_BYTES, MAX_STREAMED_NAME_CHARS,
    MAX_STREAMED_TEXT_CHARS, MAX_STREAMED_TOOL_CALLS,
};
use agents_llm::framing::Framing;
use agents_llm::{ModelMessage, ModelReply, ModelRequest, StreamEvent};
use serde_json::json;

type Provider = Arc<dyn agents_llm::api::Api>;

/// Every wire format the fake speaks: two framed as Server-Sent Events, one as NDJSON.
fn providers() -> [Provider; 3] {
    [
        Arc::new(agents_llm::openai::API),
        Arc::new(agents_llm::anthropic::API),
        Arc::new(agents_llm::ollama::API.clone()),
    ]
}

fn endpoint(server: &FakeServer, provider: &Provider) -> Endpoint {
    Endpoint {
        api: provider.clone(),
        base_url: server
            .base_for(provider.name())
            .expect("the fake speaks it"),
        api_key: None,
        headers: Vec::new(),
        timeout: Duration::from_secs(20),
    }
}

fn request(stream: bool) -> ModelRequest {
    ModelRequest {
        model: "fake-1".into(),
        messages: vec![ModelMessage::User {
            text: "Say something.".into(),
        }],
        stream,
        ..ModelRequest::default()
    }
}

async fn call(
    server: &FakeServer,
    provider: &Provider,
    stream: bool,
) -> (Result<ModelReply, CallError>, Vec<StreamEvent>) {
    let client = Client::new().unwrap();
    let mut events = Vec::new();
    let result = client
        .complete(&endpoint(server, provider), &request(stream), &mut |e| {
            events.push(e)
        })
        .await;
    (result, events)
}

fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_stream_cut_off_before_its_terminator_is_a_retryable_failure() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    for provider in providers() {
        server.push(Behaviour::Truncated {
            text: "The first half of a line that never".into(),
        });
        let (result, events) = call(&server, &provider, true).await;
        let e = result.expect_err("a cut-off stream is no answer");
        assert_eq!(e.code(), CallErrorCode::Unreachable, "{provider:?}: {e}");
        assert!(e.retryable(), "{provider:?}: {e}");
        assert!(
            e.to_string().contains("ended without its terminator"),
            "{provider:?}: {e}"
        );
        // What arrived was shown as it arrived; it is not taken for the answer.
        assert_eq!(
            streamed_text(&events),
            "The first half of a line that never"
        );

        // Not streamed: half a body is not JSON.
        server.push(Behaviour::Truncated {
            text: "The first half of a line that never".into(),
        });
        let (result, _) = call(&server, &provider, false).await;
        let e = result.expect_err("half a body is no answer");
        assert_eq!(
            e.code(),
            CallErrorCode::InvalidResponse,
            "{provider:?}: {e}"
        );

        // The same text with its terminator is an answer.
        server.push(Behaviour::text("A whole line."));
        let (result, _) = call(&server, &provider, true).await;
        assert_eq!(result.unwrap().text, "A whole line.");
    }
}

#[tokio::test]
async fn an_answer_over_the_cap_fails_and_is_not_kept() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let huge = "x".repeat(MAX_RESPONSE_BYTES + 1024);
    for provider in providers() {
        for stream in [true, false] {
            server.push(Behaviour::Reply {
                text: huge.clone(),
                tool_calls: Vec::new(),
                chunk_chars: Some(1 << 20),
            });
            let (result, events) = call(&server, &provider, stream).await;
            let e = result.expect_err("over the cap");
            assert_eq!(
                e.code(),
                CallErrorCode::InvalidResponse,
                "{provider:?} stream={stream}: {e}"
            );
            assert!(!e.retryable());
            assert!(
                e.to_string()
                    .contains(&format!("longer than {MAX_RESPONSE_BYTES} bytes")),
                "{e}"
            );
            assert!(streamed_text(&events).chars().count() <= MAX_STREAMED_TEXT_CHARS);
        }
    }
}

#[tokio::test]
async fn a_long_stream_hands_over_a_bounded_preview_and_the_whole_answer() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    // A few MB of text in multi-byte characters, under the cap; a tool name far past any
    // tool's; more calls than are announced.
    let text = "é".repeat(1_500_000);
    let long_name = "n".repeat(100_000);
    for provider in providers() {
        let mut calls = vec![FakeCall::new(&long_name, json!({}))];
        calls.extend((0..MAX_STREAMED_TOOL_CALLS + 5).map(|_| FakeCall::new("wait", json!({}))));
        server.push(Behaviour::Reply {
            text: text.clone(),
            tool_calls: calls,
            chunk_chars: Some(64 * 1024),
        });
        let (result, events) = call(&server, &provider, true).await;
        let reply = result.unwrap_or_else(|e| panic!("{provider:?}: {e}"));
        assert_eq!(reply.text.len(), text.len(), "the whole answer is read");
        assert_eq!(reply.tool_calls[0].name, long_name);
        assert_eq!(reply.tool_calls.len(), MAX_STREAMED_TOOL_CALLS + 6);
        let preview = streamed_text(&events);
        assert_eq!(preview, "é".repeat(MAX_STREAMED_TEXT_CHARS));
        let started: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStarted { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(started.len(), MAX_STREAMED_TOOL_CALLS);
        assert_eq!(started[0].chars().count(), MAX_STREAMED_NAME_CHARS + 1);
        assert!(started[0].ends_with('…'), "{}", started[0]);
    }
}

/// A 200 answer to a streamed request that is no stream at all (an HTML page from a proxy, an
/// empty body) is an invalid response, not a stream cut short: asking again would get the same.
/// Server-Sent Events find no event in a page; newline-delimited JSON finds a line that is not
/// JSON.
#[tokio::test]
async fn a_streamed_request_answered_without_any_event_is_an_invalid_response() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    for provider in providers() {
        let page_says = match provider.framing() {
            Framing::Sse => "holds no event",
            Framing::Ndjson => "a stream line is not JSON",
        };
        for (body, says) in [
            ("<html><body>502 Bad Gateway</body></html>", page_says),
            ("", "holds no event"),
        ] {
            server.push(Behaviour::Garbage { body: body.into() });
            let (result, events) = call(&server, &provider, true).await;
            let err = result.expect_err("an error");
            assert_eq!(
                err.code(),
                CallErrorCode::InvalidResponse,
                "{provider:?}: {err}"
            );
            assert!(!err.retryable(), "{err}");
            assert!(err.to_string().contains(says), "{provider:?}: {err}");
            assert!(events.is_empty());
        }
    }
}
