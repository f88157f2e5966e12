//! JSON nested 100,000 deep from a provider, against the fake
//! provider on loopback: a whole answer that is such JSON — bare, or hidden in a tool call's
//! arguments inside an answer of the right shape — fails the call with
//! `brain_invalid_response`, for every provider, without a stack overflow; the error quotes a
//! bounded excerpt, not the answer.

use std::time::Duration;

use agents_fakellm::{Behaviour, FakeServer};
use agents_llm::api::Api;
use agents_llm::client::{CallErrorCode, Client, Endpoint};
use agents_llm::{ModelMessage, ModelRequest};

/// How deep the JSON is nested.
const DEPTH: usize = 100_000;

/// `[` nested [`DEPTH`] deep, then closed.
fn deep() -> String {
    "[".repeat(DEPTH) + &"]".repeat(DEPTH)
}

#[tokio::test]
async fn json_nested_100_000_deep_is_an_invalid_response_not_a_crash() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let request = ModelRequest {
        model: "fake-1".into(),
        messages: vec![ModelMessage::User {
            text: "Say something.".into(),
        }],
        stream: false,
        ..ModelRequest::default()
    };
    let deep = deep();
    let providers: [std::sync::Arc<dyn Api>; 3] = [
        std::sync::Arc::new(agents_llm::openai::API),
        std::sync::Arc::new(agents_llm::anthropic::API),
        std::sync::Arc::new(agents_llm::ollama::API.clone()),
    ];
    for provider in providers {
        // An answer of the provider's shape, with the deep JSON as a call's arguments.
        let hidden = match provider.name() {
            "openai" => format!(
                r#"{{"choices": [{{"index": 0, "finish_reason": "tool_calls", "message":
                {{"role": "assistant", "content": null, "tool_calls": [{{"id": "c1",
                "type": "function", "function": {{"name": "move", "arguments": {deep}}}}}]}}}}]}}"#
            ),
            "anthropic" => format!(
                r#"{{"id": "m", "type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": [{{"type": "tool_use", "id": "t1", "name": "move", "input": {deep}}}]}}"#
            ),
            _ => format!(
                r#"{{"model": "m", "done": true, "message": {{"role": "assistant", "content": "",
                "tool_calls": [{{"function": {{"name": "move", "arguments": {deep}}}}}]}}}}"#
            ),
        };
        let endpoint = Endpoint {
            base_url: server
                .base_for(provider.name())
                .expect("the fake speaks it"),
            api: provider.clone(),
            api_key: None,
            headers: Vec::new(),
            timeout: Duration::from_secs(20),
        };
        for (what, body) in [("bare", deep.clone()), ("in a tool call", hidden)] {
            server.push(Behaviour::Garbage { body });
            let err = client
                .complete(&endpoint, &request, &mut |_| {})
                .await
                .expect_err(what);
            assert_eq!(
                err.code(),
                CallErrorCode::InvalidResponse,
                "{provider:?} {what}: {err}"
            );
            assert!(
                err.to_string().len() < 1_000,
                "{provider:?} {what}: {} bytes",
                err.to_string().len()
            );
        }
    }
}
