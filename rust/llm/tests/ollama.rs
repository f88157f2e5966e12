//! Ollama's own chat API against the fake provider on loopback: whole and streamed (NDJSON)
//! answers, tool calls whose arguments arrive as objects, what a brain's options add to the
//! request, and the failures — an error body with its status, an error line mid-stream, a
//! stream cut off before `done: true`, a line that is not JSON.

use std::sync::Arc;
use std::time::Duration;

use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use agents_llm::api::{Api, HttpProvider};
use agents_llm::client::{CallError, CallErrorCode, Client, Endpoint, Secret};
use agents_llm::ollama::{self, OllamaOptions};
use agents_llm::{
    ModelMessage, ModelReply, ModelRequest, ModelToolCall, StreamEvent, SystemBlock, ToolSpec,
};
use serde_json::{Value, json};

fn endpoint(server: &FakeServer, api: Arc<dyn Api>) -> Endpoint {
    Endpoint {
        api,
        base_url: server.ollama_base(),
        api_key: None,
        headers: Vec::new(),
        timeout: Duration::from_secs(10),
    }
}

fn plain(server: &FakeServer) -> Endpoint {
    endpoint(server, Arc::new(ollama::API.clone()))
}

fn request(stream: bool) -> ModelRequest {
    ModelRequest {
        model: "llama3.2".into(),
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

async fn call(
    endpoint: &Endpoint,
    request: &ModelRequest,
) -> (Result<ModelReply, CallError>, Vec<StreamEvent>) {
    let client = Client::new().unwrap();
    let mut events = Vec::new();
    let result = client
        .complete(endpoint, request, &mut |e| events.push(e))
        .await;
    (result, events)
}

#[tokio::test]
async fn whole_and_streamed_answers_with_tool_calls_whose_arguments_are_objects() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    for stream in [true, false] {
        server.push(Behaviour::Reply {
            text: "On my way to the well.".into(),
            tool_calls: vec![
                FakeCall::new("move", json!({"x": 12, "y": 14})),
                FakeCall::new("speak", json!({"content": "Coming!"})),
            ],
            chunk_chars: Some(3),
        });
        let (reply, events) = call(&plain(&server), &request(stream)).await;
        let reply = reply.unwrap_or_else(|e| panic!("stream={stream}: {e}"));
        assert_eq!(reply.text, "On my way to the well.");
        let calls: Vec<(&str, &str, Value)> = reply
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.id.as_str(),
                    c.name.as_str(),
                    serde_json::from_str(&c.arguments).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("call_1", "move", json!({"x": 12, "y": 14})),
                ("call_2", "speak", json!({"content": "Coming!"}))
            ],
            "ids synthesized, arguments as their JSON text"
        );
        assert!(reply.usage.input_tokens > 0 && reply.usage.output_tokens > 0);
        assert_eq!(reply.usage.cached_input_tokens, 0);
        assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
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
            assert!(events.contains(&StreamEvent::ToolCallStarted {
                index: 1,
                id: "call_2".into(),
                name: "speak".into()
            }));
        } else {
            assert!(events.is_empty());
        }
    }
    // What was sent: Ollama's chat shape, `stream` said both ways, no key.
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    for (request, stream) in sent.iter().zip([true, false]) {
        assert_eq!(request.path, "/api/chat");
        assert_eq!(request.body["stream"], stream);
        assert!(
            request.header("authorization").is_none(),
            "no key, none sent"
        );
    }
    let body = &sent[0].body;
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "move");
    assert_eq!(
        body["options"],
        json!({"temperature": 0.3, "num_predict": 200})
    );
    assert!(body.get("keep_alive").is_none());
}

#[tokio::test]
async fn a_brains_options_a_key_and_a_repair_turn_reach_the_server() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let options: OllamaOptions =
        serde_json::from_value(json!({"model": "llama3.2", "num_ctx": 8192, "keep_alive": "30m"}))
            .unwrap();
    ollama::API.validate(&options).unwrap();
    let mut endpoint = endpoint(&server, ollama::API.configure(&options));
    endpoint.api_key = Some(Secret::new("ollama-cloud-key"));
    let mut req = request(true);
    // The model's earlier answer broke the contract: a call that is not its tool, with
    // arguments that are not JSON; its refusal comes back as an error result.
    req.messages.extend([
        ModelMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ModelToolCall {
                id: "call_1".into(),
                name: "fly".into(),
                arguments: "{\"to\":".into(),
            }],
        },
        ModelMessage::ToolResult {
            call_id: "call_1".into(),
            content: "{\"status\":\"rejected\",\"reason\":\"tool_not_allowed\"}".into(),
            is_error: true,
        },
    ]);
    server.push(Behaviour::text("Sorry, walking then."));
    let (reply, _) = call(&endpoint, &req).await;
    assert_eq!(
        reply
            .expect("the fake refuses arguments that are not an object, as Ollama does")
            .text,
        "Sorry, walking then."
    );
    let sent = &server.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some("Bearer ollama-cloud-key")
    );
    assert_eq!(sent.body["options"]["num_ctx"], 8192);
    assert_eq!(sent.body["keep_alive"], "30m");
    let messages = sent.body["messages"].as_array().unwrap();
    assert_eq!(
        messages[2]["tool_calls"][0]["function"],
        json!({"name": "fly", "arguments": {}})
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_name"], "fly");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("ERROR: ")
    );
}

#[tokio::test]
async fn a_stream_cut_off_before_done_is_incomplete_and_retryable() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    server.push(Behaviour::Truncated {
        text: "The first half of a line that never".into(),
    });
    let (result, events) = call(&plain(&server), &request(true)).await;
    let e = result.expect_err("a cut-off stream is no answer");
    assert_eq!(e.code(), CallErrorCode::Unreachable, "{e}");
    assert!(e.retryable());
    assert!(
        e.to_string()
            .contains("ended without its terminator (no line with done: true)"),
        "{e}"
    );
    assert_eq!(events.len(), 5, "what arrived was shown: {events:?}");
}

#[tokio::test]
async fn error_bodies_error_lines_and_garbage_lines() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let not_found = "model \"llama9\" not found, try pulling it first";
    for stream in [true, false] {
        server.push(Behaviour::Status {
            status: 404,
            body: json!({ "error": not_found }),
            retry_after: None,
        });
        let (result, _) = call(&plain(&server), &request(stream)).await;
        let e = result.unwrap_err();
        assert_eq!(e.code(), CallErrorCode::ModelNotFound);
        assert_eq!(e.to_string(), format!("model not found (404): {not_found}"));
        assert_eq!(e.public_message(), "model not found (404)");
    }
    server.push(Behaviour::Status {
        status: 500,
        body: json!({"error": "llama runner process has terminated"}),
        retry_after: None,
    });
    let e = call(&plain(&server), &request(false)).await.0.unwrap_err();
    assert_eq!(e.code(), CallErrorCode::ServerError);
    assert!(e.retryable());
    assert!(!e.public_message().contains("llama runner"), "{e:?}");

    // An error line mid-stream; an error as a 200 body.
    server.push(Behaviour::StreamError {
        message: "an error was encountered while running the model".into(),
    });
    let (result, events) = call(&plain(&server), &request(true)).await;
    let e = result.unwrap_err();
    assert_eq!(e.code(), CallErrorCode::ProviderError);
    assert!(e.retryable());
    assert_eq!(events, [StreamEvent::TextDelta("I".into())]);
    server.push(Behaviour::Garbage {
        body: json!({"error": "unexpected server status"}).to_string(),
    });
    let e = call(&plain(&server), &request(false)).await.0.unwrap_err();
    assert_eq!(e.code(), CallErrorCode::ProviderError, "{e}");

    // A line that is not JSON, after a good one.
    server.push(Behaviour::Garbage {
        body: "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n\
               <html>502 Bad Gateway</html>\n"
            .into(),
    });
    let (result, events) = call(&plain(&server), &request(true)).await;
    let e = result.unwrap_err();
    assert_eq!(e.code(), CallErrorCode::InvalidResponse, "{e}");
    assert!(!e.retryable());
    assert!(e.to_string().contains("a stream line is not JSON"), "{e}");
    assert!(e.to_string().contains("502 Bad Gateway"), "quoted: {e}");
    assert_eq!(events, [StreamEvent::TextDelta("Hi".into())]);
}
