//! The HTTP client against the fake provider: a real server on loopback, the wire formats,
//! streamed and not, and every failure mode (Ollama's own API has its suite, `ollama.rs`).

use std::sync::Arc;
use std::time::Duration;

use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use agents_llm::client::{CallError, CallErrorCode, Client, Endpoint, Secret};
use agents_llm::{ModelMessage, ModelRequest, ModelToolCall, StreamEvent, SystemBlock, ToolSpec};
use serde_json::json;

type Provider = Arc<dyn agents_llm::api::Api>;

fn openai() -> Provider {
    Arc::new(agents_llm::openai::API)
}

fn anthropic() -> Provider {
    Arc::new(agents_llm::anthropic::API)
}

fn ollama() -> Provider {
    Arc::new(agents_llm::ollama::API.clone())
}

const KEY: &str = "sk-test-4f1c9a7e-never-print-me";

fn endpoint(server: &FakeServer, provider: &Provider) -> Endpoint {
    Endpoint {
        api: provider.clone(),
        base_url: server
            .base_for(provider.name())
            .expect("the fake speaks it"),
        api_key: Some(Secret::new(KEY)),
        headers: vec![("X-Title".into(), "town".into())],
        timeout: Duration::from_secs(5),
    }
}

fn request(stream: bool) -> ModelRequest {
    ModelRequest {
        model: "fake-1".into(),
        system: vec![SystemBlock {
            text: "You are Mira. Answer with the tools.".into(),
            cache: true,
            shared: false,
        }],
        messages: vec![ModelMessage::User {
            text: "The player says hello.".into(),
        }],
        tools: vec![ToolSpec {
            name: "move".into(),
            description: "Walk.".into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}),
        }],
        temperature: Some(0.3),
        max_tokens: Some(200),
        json_schema: None,
        stream,
    }
}

fn reply_with_move() -> Behaviour {
    Behaviour::Reply {
        text: "On my way to the well.".into(),
        tool_calls: vec![FakeCall::new("move", json!({"x": 12, "y": 14}))],
        chunk_chars: Some(3),
    }
}

async fn call(
    client: &Client,
    endpoint: &Endpoint,
    request: &ModelRequest,
) -> (Result<agents_llm::ModelReply, CallError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let result = client
        .complete(endpoint, request, &mut |e| events.push(e))
        .await;
    (result, events)
}

#[tokio::test]
async fn both_providers_streamed_and_whole() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    for provider in [openai(), anthropic()] {
        for stream in [true, false] {
            server.push(reply_with_move());
            let (reply, events) =
                call(&client, &endpoint(&server, &provider), &request(stream)).await;
            let reply = reply.unwrap_or_else(|e| panic!("{provider:?} stream={stream}: {e}"));
            assert_eq!(reply.text, "On my way to the well.");
            assert_eq!(reply.tool_calls.len(), 1);
            assert_eq!(reply.tool_calls[0].name, "move");
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&reply.tool_calls[0].arguments).unwrap(),
                json!({"x": 12, "y": 14})
            );
            assert!(reply.usage.input_tokens > 0 && reply.usage.output_tokens > 0);
            if stream {
                let text: String = events
                    .iter()
                    .filter_map(|e| match e {
                        StreamEvent::TextDelta(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(text, "On my way to the well.");
                assert!(events.len() > 5, "the text came in pieces: {events:?}");
                assert!(events.iter().any(
                    |e| matches!(e, StreamEvent::ToolCallStarted { name, .. } if name == "move")
                ));
            } else {
                assert!(events.is_empty());
            }
        }
    }
    // What was sent: the headers and the bodies.
    let sent = server.requests();
    assert_eq!(sent.len(), 4);
    let openai_sent = &sent[0];
    assert_eq!(openai_sent.path, "/v1/chat/completions");
    assert_eq!(
        openai_sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(openai_sent.header("x-title"), Some("town"));
    assert_eq!(openai_sent.body["tools"][0]["function"]["name"], "move");
    assert_eq!(openai_sent.body["stream_options"]["include_usage"], true);
    let anthropic_sent = &sent[2];
    assert_eq!(anthropic_sent.path, "/v1/messages");
    assert_eq!(anthropic_sent.header("x-api-key"), Some(KEY));
    assert_eq!(
        anthropic_sent.header("anthropic-version"),
        Some("2023-06-01")
    );
    assert!(anthropic_sent.header("authorization").is_none());
    assert_eq!(
        anthropic_sent.body["system"][0]["cache_control"]["type"],
        "ephemeral"
    );
    assert_eq!(
        anthropic_sent.body["tools"][0]["input_schema"]["type"],
        "object"
    );
    // The second identical Anthropic request reads its prefix from the cache.
    server.push(reply_with_move());
    let (reply, _) = call(&client, &endpoint(&server, &anthropic()), &request(false)).await;
    assert!(reply.unwrap().usage.cached_input_tokens > 0);
}

#[tokio::test]
async fn ollama_quirks_and_a_repair_turn() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    server.push(Behaviour::OllamaReply {
        text: String::new(),
        tool_calls: vec![
            FakeCall::new("move", json!({"x": 1, "y": 2})),
            FakeCall::new("wait", json!({})),
        ],
    });
    let mut req = request(true);
    req.messages.extend([
        ModelMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ModelToolCall {
                id: "call_9".into(),
                name: "fly".into(),
                arguments: "{".into(),
            }],
        },
        ModelMessage::ToolResult {
            call_id: "call_9".into(),
            content: "{\"status\":\"rejected\",\"reason\":\"tool_not_allowed\"}".into(),
            is_error: true,
        },
    ]);
    let (reply, _) = call(&client, &endpoint(&server, &openai()), &req).await;
    let reply = reply.unwrap();
    let names: Vec<_> = reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["move", "wait"]);
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    let sent = &server.requests()[0].body["messages"];
    assert_eq!(sent[2]["tool_calls"][0]["function"]["arguments"], "{");
    assert_eq!(sent[3]["role"], "tool");
    assert!(sent[3]["content"].as_str().unwrap().starts_with("ERROR: "));
}

#[tokio::test]
async fn every_failure_has_its_code_and_never_shows_the_key() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let cases = [
        (
            Behaviour::Status {
                status: 429,
                body: json!({"error": {"message": "Rate limit reached for requests"}}),
                retry_after: Some("2".into()),
            },
            CallErrorCode::RateLimited,
            true,
        ),
        (
            Behaviour::Status {
                status: 500,
                body: json!({"error": {"message": "The server had an error"}}),
                retry_after: None,
            },
            CallErrorCode::ServerError,
            true,
        ),
        (
            Behaviour::Status {
                status: 401,
                body: json!({"error": {"message": "Incorrect API key provided"}}),
                retry_after: None,
            },
            CallErrorCode::AuthFailed,
            false,
        ),
        (
            Behaviour::Status {
                status: 404,
                body: json!({"error": {"message": "The model `gpt-9` does not exist"}}),
                retry_after: None,
            },
            CallErrorCode::ModelNotFound,
            false,
        ),
        (
            Behaviour::Status {
                status: 400,
                body: json!({"error": {"message": "Invalid schema for function 'move'"}}),
                retry_after: None,
            },
            CallErrorCode::BadRequest,
            false,
        ),
        (
            Behaviour::Garbage {
                body: "<html>502 Bad Gateway</html>".into(),
            },
            CallErrorCode::InvalidResponse,
            false,
        ),
        (
            Behaviour::StreamError {
                message: "Overloaded".into(),
            },
            CallErrorCode::ProviderError,
            true,
        ),
    ];
    for provider in [openai(), anthropic(), ollama()] {
        for (behaviour, code, retryable) in &cases {
            server.push(behaviour.clone());
            let stream = matches!(behaviour, Behaviour::StreamError { .. });
            let (result, _) = call(&client, &endpoint(&server, &provider), &request(stream)).await;
            let err = result.expect_err("an error");
            assert_eq!(err.code(), *code, "{provider:?}: {err}");
            assert_eq!(err.retryable(), *retryable, "{err}");
            for shown in [err.to_string(), format!("{err:?}")] {
                assert!(!shown.contains(KEY), "the key leaked: {shown}");
            }
        }
    }
    // The server's words are quoted, and Retry-After is read.
    server.push(cases[0].0.clone());
    let (err, _) = call(&client, &endpoint(&server, &openai()), &request(false)).await;
    let err = err.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
    assert!(err.to_string().contains("Rate limit reached"), "{err}");
    server.push(cases[3].0.clone());
    let (err, _) = call(&client, &endpoint(&server, &openai()), &request(false)).await;
    assert_eq!(
        err.unwrap_err().to_string(),
        "model not found (404): The model `gpt-9` does not exist"
    );
}

#[tokio::test]
async fn timeouts_and_unreachable_servers() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    server.push(Behaviour::Hang);
    let mut slow = endpoint(&server, &openai());
    slow.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let (err, _) = call(&client, &slow, &request(true)).await;
    let err = err.unwrap_err();
    assert_eq!(err.code(), CallErrorCode::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // Nothing listens on this port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut gone = endpoint(&server, &anthropic());
    gone.base_url = format!("http://{closed}");
    let (err, _) = call(&client, &gone, &request(false)).await;
    let err = err.unwrap_err();
    assert_eq!(err.code(), CallErrorCode::Unreachable, "{err}");
    assert!(err.to_string().contains(&closed.to_string()), "{err}");
    assert!(!format!("{err:?}").contains(KEY));
}
