//! The HTTP model brains (`openai`, `anthropic`, `ollama`) end to end: a runtime whose agents
//! think with the fake provider (a real HTTP server on loopback), real SQLite, real time.

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter};
use agents_core::geometry::Position;
use agents_core::runtime::{Runtime, RuntimeOptions};

use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::time::Instant;

mod common;
use common::{agent, error_of, runtime, spoke_by, until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_agent_moves_and_speaks_after_a_repair() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push_many([
        // Breaks the contract: not its tool, and arguments that are not JSON.
        Behaviour::calls(vec![
            FakeCall::new("fly", json!({})),
            FakeCall::new("move", json!("{\"x\": 12,")),
        ]),
        Behaviour::Reply {
            text: "Fresh bread at the well!".into(),
            tool_calls: vec![FakeCall::new("move", json!({"x": 12, "y": 14}))],
            chunk_chars: Some(4),
        },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(json!({"provider": "openai", "model": "fake-1",
                            "base_url": fake.openai_base(), "temperature": 0.4})))
        .unwrap();
    assert_eq!(rt.state(&id).unwrap().brain, "openai:fake-1");
    rt.send_message(&id, "Any bread left?").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), spoke_by(&id)).await;
    let moved: Vec<Position> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentMoved { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(moved, [Position::new(12.0, 14.0)]);
    let errors: Vec<_> = events
        .iter()
        .filter(|m| matches!(m, BusMessage::AgentError { .. }))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let BusMessage::AgentSpoke {
        content,
        recipients,
        ..
    } = events.last().unwrap()
    else {
        unreachable!()
    };
    assert_eq!(content, "Fresh bread at the well!");
    assert_eq!(recipients, &["player_0".to_string()]);
    // The text streamed in before the line was said, in order; each call announced itself.
    let deltas: Vec<(String, u64)> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentSpeechDelta { delta, seq, .. } => Some((delta.clone(), *seq)),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas.iter().map(|(d, _)| d.as_str()).collect::<String>(),
        "Fresh bread at the well!"
    );
    assert!(deltas.len() >= 6, "in pieces: {deltas:?}");
    assert!(
        deltas.windows(2).all(|w| w[1].1 == w[0].1 + 1),
        "{deltas:?}"
    );
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentToolCall { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        ["fly", "move", "move"],
        "the refused answer's calls too"
    );

    // What the model was sent.
    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    let first = &sent[0].body;
    assert_eq!(first["model"], "fake-1");
    assert_eq!(first["temperature"], 0.4);
    assert_eq!(first["stream"], true);
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("You bake bread.")
    );
    assert!(
        first["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Any bread left?")
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // Alone and without a task: no one to ask, nothing to complete (grounded tools).
    assert_eq!(tools, ["move", "speak", "wait"]);
    let speak = &first["tools"][1]["function"]["parameters"]["properties"];
    assert_eq!(
        speak["recipients"]["items"]["enum"],
        json!(["player_0"]),
        "the model is shown whom it can address"
    );
    assert!(
        sent[0].header("authorization").is_none(),
        "loopback, no key configured"
    );
    // The repair: the refused answer and its failure feedback as error results.
    let messages = sent[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["arguments"],
        "{\"x\": 12,"
    );
    let feedback: Vec<&str> = messages[3..5]
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        feedback[0].starts_with("ERROR: ")
            && feedback[0].contains("\"reason\":\"tool_not_allowed\""),
        "{}",
        feedback[0]
    );
    assert!(
        feedback[1].contains("\"reason\":\"invalid_json\""),
        "{}",
        feedback[1]
    );
    // The system prompt and the tools are the same in both requests (the cacheable prefix).
    assert_eq!(sent[0].body["tools"], sent[1].body["tools"]);
    assert_eq!(sent[0].body["messages"][0], sent[1].body["messages"][0]);

    // Both calls are traced, with the tokens the server reported.
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(trace.len(), 2);
    assert_eq!(trace[0].call.provider, "openai");
    assert_eq!(trace[0].call.model.as_deref(), Some("fake-1"));
    assert_eq!((trace[0].call.repairs, trace[1].call.repairs), (0, 1));
    assert!(
        trace
            .iter()
            .all(|r| r.call.input_tokens > 0 && r.call.output_tokens > 0)
    );
    assert!(
        trace[1].call.cached_tokens > 0,
        "the second request shares the prefix"
    );
    assert!(
        trace.iter().all(|r| r.call.prompt.is_none()),
        "no prompts unless asked"
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_agent_and_the_provider_errors() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push_many([
        Behaviour::Status {
            status: 429,
            body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
            retry_after: Some("0.05".into()),
        },
        Behaviour::text("Good morning!"),
        Behaviour::Status {
            status: 401,
            body: json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
            retry_after: None,
        },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(
            json!({"provider": "anthropic", "model": "claude-fake",
                            "base_url": fake.anthropic_base(), "trace_prompts": true}),
        ))
        .unwrap();
    rt.send_message(&id, "Hello!").unwrap();
    until(&mut sub, Duration::from_secs(10), |m| {
        matches!(m, BusMessage::AgentSpoke { agent_id, content, .. } if *agent_id == id && content == "Good morning!")
    })
    .await;
    // The 429 was retried (after its Retry-After), within one traced call.
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(
        fake.requests()[0].header("anthropic-version"),
        Some("2023-06-01")
    );
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(trace.len(), 1);
    assert!(trace[0].call.latency_ms >= 50, "{:?}", trace[0].call);
    assert!(
        trace[0]
            .call
            .prompt
            .as_deref()
            .unwrap()
            .contains("You bake bread.")
    );
    assert!(
        trace[0]
            .call
            .reply
            .as_deref()
            .unwrap()
            .contains("Good morning!")
    );

    // 401: not retried; the agent reports brain_auth_failed and is idle again.
    rt.send_message(&id, "Still there?").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), |m| {
        matches!(m, BusMessage::AgentError { .. })
    })
    .await;
    let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(code.as_str(), "brain_auth_failed");
    assert!(message.contains("authentication failed (401)"), "{message}");
    assert!(
        !message.contains("invalid x-api-key"),
        "the provider's words stay in the log"
    );
    assert_eq!(fake.requests().len(), 3, "no retry of a 401");
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(
        trace[1].call.error_code.as_deref(),
        Some("brain_auth_failed")
    );
    rt.shutdown(Duration::from_secs(2));
}

/// An `ollama` brain speaks Ollama's own API: streamed NDJSON, calls whose arguments are
/// objects, a repair turn whose results name their tool, and its own options on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ollama_agent_decides_through_the_native_api() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push_many([
        // Not its tool: refused, and repaired.
        Behaviour::calls(vec![FakeCall::new("fly", json!({"to": "the mill"}))]),
        Behaviour::Reply {
            text: "Fresh bread at the well!".into(),
            tool_calls: vec![FakeCall::new("move", json!({"x": 12, "y": 14}))],
            chunk_chars: Some(4),
        },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(json!({"provider": "ollama", "model": "llama3.2",
                            "base_url": fake.ollama_base(), "temperature": 0.4,
                            "max_tokens": 256, "num_ctx": 8192, "keep_alive": "10m"})))
        .unwrap();
    assert_eq!(rt.state(&id).unwrap().brain, "ollama:llama3.2");
    rt.send_message(&id, "Any bread left?").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), spoke_by(&id)).await;
    let moved: Vec<Position> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentMoved { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(moved, [Position::new(12.0, 14.0)]);
    let Some(BusMessage::AgentSpoke { content, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(content, "Fresh bread at the well!");
    let streamed: String = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentSpeechDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        streamed, "Fresh bread at the well!",
        "streamed line by line"
    );
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentToolCall { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["fly", "move"]);

    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    let first = &sent[0];
    assert_eq!(first.path, "/api/chat");
    assert!(first.header("authorization").is_none(), "no key, none sent");
    assert_eq!(first.body["stream"], true);
    assert_eq!(
        first.body["options"],
        json!({"temperature": 0.4, "num_predict": 256, "num_ctx": 8192})
    );
    assert_eq!(first.body["keep_alive"], "10m");
    assert_eq!(first.body["messages"][0]["role"], "system");
    assert!(
        first.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("You bake bread.")
    );
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // Alone and without a task: no one to ask, nothing to complete (grounded tools).
    assert_eq!(tools, ["move", "speak", "wait"]);
    // The repair: the refused call with its arguments as an object, its result naming it.
    let messages = sent[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"],
        json!({"name": "fly", "arguments": {"to": "the mill"}})
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_name"], "fly");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("\"reason\":\"tool_not_allowed\""),
        "{}",
        messages[3]
    );

    // Traced like the others, with the tokens Ollama reported.
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(trace.len(), 2);
    assert!(trace.iter().all(|r| r.call.provider == "ollama"));
    assert_eq!(trace[0].call.model.as_deref(), Some("llama3.2"));
    assert_eq!((trace[0].call.repairs, trace[1].call.repairs), (0, 1));
    assert!(
        trace
            .iter()
            .all(|r| r.call.input_tokens > 0 && r.call.output_tokens > 0)
    );
    rt.shutdown(Duration::from_secs(2));
}

/// An `ollama` brain object's options are its own: each mistake is refused at spawn naming the
/// field, and no key is needed wherever Ollama runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_options_are_checked_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let refused = |extra: Value| {
        let mut brain = json!({"provider": "ollama", "model": "llama3.2"});
        for (k, v) in extra.as_object().unwrap() {
            brain[k] = v.clone();
        }
        let e = rt.spawn(agent(brain)).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_config", "{e}");
        e.to_string()
    };
    for (extra, says) in [
        (
            json!({"num_gpu": 1}),
            "brain.num_gpu: unknown field `num_gpu`, expected one of `model`",
        ),
        (
            json!({"num_gpu": 1}),
            "(the options of the ollama provider)",
        ),
        (
            json!({"num_ctx": "8k"}),
            "brain.num_ctx: invalid type: string \"8k\"",
        ),
        (json!({"num_ctx": 4096.5}), "brain.num_ctx: invalid type"),
        (
            json!({"num_ctx": 64}),
            "brain.num_ctx must be between 256 and 1048576, got 64",
        ),
        (
            json!({"num_ctx": 5_000_000}),
            "brain.num_ctx must be between",
        ),
        (
            json!({"keep_alive": "5 minutes"}),
            "brain.keep_alive must be a duration such as \"5m\"",
        ),
        (
            json!({"keep_alive": "10"}),
            "brain.keep_alive must be a duration",
        ),
        (
            json!({"keep_alive": false}),
            "brain.keep_alive: expected a duration such as \"5m\" or a number of seconds",
        ),
        (
            json!({"temperature": 3}),
            "brain.temperature must be between 0 and 2",
        ),
        (
            json!({"model": null}),
            "brain.model is required for the ollama provider",
        ),
    ] {
        let e = refused(extra.clone());
        assert!(e.contains(says), "{extra}: {e}");
    }
    // No key anywhere: a local Ollama by default, and one elsewhere too.
    for brain in [
        json!({"provider": "ollama", "model": "llama3.2"}),
        json!({"provider": "ollama", "model": "llama3.2", "base_url": "http://10.0.0.5:11434",
               "api_key_env": "AGENTS_TEST_KEY_THAT_IS_NOT_SET", "keep_alive": -1}),
    ] {
        rt.spawn(agent(brain.clone()))
            .unwrap_or_else(|e| panic!("{brain}: {e}"));
    }
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misconfigured_model_brains_are_refused_at_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let refused = |brain: Value| rt.spawn(agent(brain)).unwrap_err().to_string();
    assert_eq!(
        refused(json!({"provider": "openai"})),
        "brain.model is required for the openai provider"
    );
    let no_key = refused(json!({"provider": "anthropic", "model": "m",
                                "api_key_env": "AGENTS_TEST_KEY_THAT_IS_NOT_SET"}));
    assert!(
        no_key.contains("AGENTS_TEST_KEY_THAT_IS_NOT_SET is not set"),
        "{no_key}"
    );
    let bad_url = refused(json!({"provider": "openai", "model": "m", "base_url": "ftp://x"}));
    assert!(bad_url.contains("brain.base_url"), "{bad_url}");
    // A loopback server needs no key.
    rt.spawn(agent(json!({"provider": "openai", "model": "m",
                          "base_url": "http://127.0.0.1:9/v1"})))
        .unwrap();
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_calls_queue_at_the_limiter() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_latency(Duration::from_millis(100));
    fake.set_default(Behaviour::text("Yes?"));
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 1000.0,
            speaking_seconds: 0.01,
            max_concurrent_model_calls: 2,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let brain = json!({"provider": "openai", "model": "m", "base_url": fake.openai_base()});
    let ids: Vec<String> = (0..6)
        .map(|_| rt.spawn(agent(brain.clone())).unwrap())
        .collect();
    for id in &ids {
        rt.send_message(id, "Hello?").unwrap();
    }
    let mut answered = std::collections::HashSet::new();
    until(&mut sub, Duration::from_secs(10), |m| {
        if let BusMessage::AgentSpoke { agent_id, .. } = m
            && ids.contains(agent_id)
        {
            answered.insert(agent_id.clone());
        }
        answered.len() == ids.len()
    })
    .await;
    assert_eq!(fake.requests().len(), 6);
    // Two of the runtime's permits, and the endpoint's own lane (its first call in flight
    // takes none of them): three calls at a time, never more.
    assert_eq!(fake.max_in_flight(), 3, "six agents, 2 + 1 calls at a time");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_budget_stops_the_model_until_raised() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::text("A long enough answer to cost some tokens."));
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(json!({"provider": "openai", "model": "m",
                            "base_url": fake.openai_base(), "token_budget": 50})))
        .unwrap();
    assert_eq!(rt.agent_token_usage(&id).unwrap(), (0, Some(50)));
    rt.send_message(&id, "One.").unwrap();
    until(&mut sub, Duration::from_secs(10), spoke_by(&id)).await;
    let (spent, limit) = rt.agent_token_usage(&id).unwrap();
    assert!(spent > 50, "the first call overspent: {spent}");
    assert_eq!(limit, Some(50));
    assert_eq!(rt.token_usage().0, spent);
    // Spent: the next decision calls no model.
    rt.send_message(&id, "Two.").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), |m| {
        matches!(m, BusMessage::AgentError { .. })
    })
    .await;
    let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(code.as_str(), "budget_exhausted");
    assert!(message.contains("of 50 tokens"), "{message}");
    assert_eq!(fake.requests().len(), 1);
    // Raised: it thinks again.
    rt.set_agent_token_budget(&id, Some(100_000)).unwrap();
    rt.send_message(&id, "Three.").unwrap();
    until(&mut sub, Duration::from_secs(10), spoke_by(&id)).await;
    assert_eq!(fake.requests().len(), 2);
    // The runtime-wide budget works the same way.
    rt.set_token_budget(Some(1));
    rt.send_message(&id, "Four.").unwrap();
    let events = until(&mut sub, Duration::from_secs(10), |m| {
        matches!(m, BusMessage::AgentError { .. })
    })
    .await;
    let Some(BusMessage::AgentError { message, .. }) = events.last() else {
        unreachable!()
    };
    assert!(message.contains("runtime's token budget"), "{message}");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_or_terminated_decision_drops_its_request() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push_many([Behaviour::Hang]);
    fake.set_default(Behaviour::Reply {
        text: "Coming!".into(),
        tool_calls: vec![FakeCall::new("move", json!({"x": 12, "y": 14}))],
        chunk_chars: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(
            json!({"provider": "openai", "model": "m", "base_url": fake.openai_base()}),
        ))
        .unwrap();
    let requests = |n: usize| {
        let fake = &fake;
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while fake.requests().len() < n {
                assert!(Instant::now() < deadline, "no request {n}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    let abandoned = |n: usize| {
        let fake = &fake;
        async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            while fake.abandoned() < n {
                assert!(Instant::now() < deadline, "request {n} was not dropped");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    // A message while the model is answering: the request is dropped (the connection closes)
    // and the decision starts again, hearing both lines.
    rt.send_message(&id, "Hello?").unwrap();
    requests(1).await;
    rt.send_message(&id, "Are you there?").unwrap();
    abandoned(1).await;
    let events = until(&mut sub, Duration::from_secs(10), spoke_by(&id)).await;
    let moves = events
        .iter()
        .filter(|m| matches!(m, BusMessage::AgentMoved { .. }))
        .count();
    assert_eq!(moves, 1, "only the answered decision moved: {events:?}");
    let second = &fake.requests()[1].body;
    let situation = second["messages"].to_string();
    assert!(situation.contains("Are you there?"), "{situation}");
    // Terminating the agent while the model answers drops the request too.
    fake.push_many([Behaviour::Hang]);
    rt.send_message(&id, "Bye?").unwrap();
    requests(3).await;
    rt.terminate(&id).unwrap();
    abandoned(2).await;
    assert_eq!(fake.requests().len(), 3);
    rt.shutdown(Duration::from_secs(2));
}

/// The text of an agent's `agent_speech_delta`s among `events`.
fn streamed(events: &[BusMessage]) -> String {
    events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentSpeechDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_answer_is_spoken_stored_and_sent_again_bounded() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    // A few MB of text and no speak call.
    let huge = "Bread! ".repeat(500_000);
    fake.push(Behaviour::Reply {
        text: huge.clone(),
        tool_calls: Vec::new(),
        chunk_chars: Some(64 * 1024),
    });
    fake.set_default(Behaviour::text("Anything else?"));
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(
            json!({"provider": "openai", "model": "m", "base_url": fake.openai_base()}),
        ))
        .unwrap();
    rt.send_message(&id, "What do you sell?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
    let Some(BusMessage::AgentSpoke { content, .. }) = events.last() else {
        unreachable!()
    };
    // Cut to the speak limit, on a character boundary, marked.
    assert_eq!(content.chars().count(), 1_000);
    assert!(content.ends_with('…'), "{content}");
    assert!(huge.starts_with(content.trim_end_matches('…')));
    // What streamed in while the model answered is bounded too.
    assert!(streamed(&events).chars().count() <= 1_000);
    assert!(huge.starts_with(&streamed(&events)));
    // Stored as it was said.
    let stored = rt.conversation(&id, 10).unwrap();
    let line = stored
        .iter()
        .find(|row| row.sender == id)
        .expect("the line is stored");
    assert_eq!(&line.content, content);
    // And the next request carries the bounded line, not the answer.
    rt.send_message(&id, "And tomorrow?").unwrap();
    until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
    let next = fake.requests()[1].body.to_string();
    assert!(next.contains(content.trim_end_matches('…')), "{next}");
    assert!(next.len() < 64 * 1024, "{} bytes", next.len());
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_tool_name_gives_a_bounded_invalid_reply() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    // Every answer (the first and both repairs): a 2 MB tool name, and many unknown tools.
    let mut calls = vec![FakeCall::new(&"n".repeat(2 << 20), json!({}))];
    calls.extend((0..30).map(|n| FakeCall::new(&format!("fly_{n}"), json!({}))));
    fake.set_default(Behaviour::Reply {
        text: String::new(),
        tool_calls: calls,
        chunk_chars: Some(64 * 1024),
    });
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(agent(
            json!({"provider": "anthropic", "model": "m", "base_url": fake.anthropic_base()}),
        ))
        .unwrap();
    rt.send_message(&id, "Fly?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), |m| {
        matches!(m, BusMessage::AgentError { .. })
    })
    .await;
    let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(code.as_str(), "brain_invalid_reply");
    assert!(message.len() < 8 * 1024, "{} bytes", message.len());
    assert!(message.contains("tool_not_allowed"), "{message}");
    assert!(message.contains("… and 21 more"), "{message}");
    // The calls announced while streaming name the tool cut short.
    let announced: Vec<&str> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentToolCall { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        announced.iter().all(|t| t.chars().count() <= 65),
        "{announced:?}"
    );
    // The repairs repeated the answer with the name cut short.
    let sent = fake.requests();
    assert_eq!(sent.len(), 3, "the answer and two repairs");
    assert!(sent[2].body.to_string().len() < 256 * 1024);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_stream_is_a_failed_call_for_every_http_provider() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let providers = agents_core::brain::BrainRegistry::with_builtins().http_names();
    assert!(providers.len() >= 3, "{providers:?}");
    for provider in providers {
        let base = fake
            .base_for(provider)
            .expect("the fake speaks every HTTP provider");
        // Retried like a lost connection: the second try answers whole.
        let sent = fake.requests().len();
        fake.push_many([
            Behaviour::Truncated {
                text: "I would say that the".into(),
            },
            Behaviour::text("A whole line."),
        ]);
        let id = rt
            .spawn(agent(
                json!({"provider": provider, "model": "m", "base_url": base}),
            ))
            .unwrap();
        rt.send_message(&id, "Hello?").unwrap();
        let events = until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
        let Some(BusMessage::AgentSpoke { content, .. }) = events.last() else {
            unreachable!()
        };
        assert_eq!(content, "A whole line.", "{provider}");
        assert_eq!(fake.requests().len(), sent + 2, "{provider}");

        // Without retries: an error, and nothing of the cut answer is said.
        fake.push(Behaviour::Truncated {
            text: "I would say that the".into(),
        });
        let id = rt
            .spawn(agent(json!({"provider": provider, "model": "m",
                                "base_url": base, "max_retries": 0})))
            .unwrap();
        rt.send_message(&id, "Hello?").unwrap();
        let events = until(&mut sub, Duration::from_secs(20), error_of(&id)).await;
        let Some(BusMessage::AgentError { code, .. }) = events.last() else {
            unreachable!()
        };
        assert_eq!(code.as_str(), "brain_error", "{provider}");
        assert!(
            !events
                .iter()
                .any(|m| matches!(m, BusMessage::AgentSpoke { agent_id, .. } if *agent_id == id)),
            "{provider}: {events:?}"
        );
        let trace = rt.agent_trace(&id, 10).unwrap();
        assert_eq!(
            trace[0].call.error_code.as_deref(),
            Some("brain_unreachable")
        );
    }
    rt.shutdown(Duration::from_secs(2));
}

/// A model brain reflects with one more call: a JSON answer (not streamed, a schema asked for)
/// citing the memories shown; what it cites beyond them is dropped. An answer that is not the
/// JSON asked for is drawn by rule instead, and the agent goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_brain_reflects_with_a_json_answer_and_falls_back_to_rules_on_garbage() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let mut config = agent(json!({"provider": "openai", "model": "fake-1",
                                  "base_url": fake.openai_base()}));
    config.memory = Some(agents_core::mind::MemorySettings {
        reflection_threshold: 5,
        ..Default::default()
    });
    let id = rt.spawn(config).unwrap();
    fake.push_many([
        Behaviour::text("The lanterns are in the mill, I know."),
        Behaviour::text(
            r#"{"insights": [{"text": "The player relies on me for the festival.", "sources": [1, 2, 999]},
                             {"text": "Cites nothing I was shown.", "sources": [999]}],
                "relationships": [{"about": "player_0", "text": "The player is organised and kind.", "sources": [1]},
                                  {"about": "agent_404", "text": "Not listed.", "sources": [1]}]}"#,
        ),
    ]);
    rt.send_message(&id, "Remember, the festival lanterns are in the mill.")
        .unwrap();
    let events = until(&mut sub, Duration::from_secs(15), |m| {
        matches!(m, BusMessage::AgentReflected { .. })
    })
    .await;
    let Some(BusMessage::AgentReflected {
        memories, drawn_by, ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!(drawn_by, "model");
    let texts: Vec<(&str, Option<&str>, &[i64])> = memories
        .iter()
        .map(|m| (m.text.as_str(), m.about.as_deref(), m.sources.as_slice()))
        .collect();
    assert_eq!(
        texts,
        [
            (
                "The player relies on me for the festival.",
                None,
                &[1, 2][..]
            ),
            (
                "The player is organised and kind.",
                Some("player_0"),
                &[1][..]
            ),
        ]
    );
    // The reflection's request: no tools, not streamed, one JSON object asked for, the
    // memories listed by id.
    let requests = fake.requests();
    let reflection = &requests.last().unwrap().body;
    assert_eq!(reflection["stream"], json!(false), "{reflection}");
    assert!(reflection.get("tools").is_none(), "{reflection}");
    assert_eq!(reflection["response_format"]["type"], "json_schema");
    let shown = reflection["messages"].to_string();
    assert!(shown.contains("[1] (heard, importance"), "{shown}");
    // The call is traced like a decision's.
    let calls = rt.memory().brain_calls(&id, 10).unwrap();
    assert_eq!(calls.len(), 2, "{calls:#?}");

    // Garbage the second time: drawn by rule; the agent answers on.
    fake.push_many([
        Behaviour::text("See you at the festival."),
        Behaviour::text("I think the player is nice."),
        Behaviour::text("Yes?"),
    ]);
    rt.send_message(&id, "See you at the festival, bring the lanterns!")
        .unwrap();
    let events = until(&mut sub, Duration::from_secs(15), |m| {
        matches!(m, BusMessage::AgentReflected { .. })
    })
    .await;
    let Some(BusMessage::AgentReflected {
        memories, drawn_by, ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!(drawn_by, "rules");
    let thought = memories
        .iter()
        .find(|m| m.about.as_deref() == Some("player_0"))
        .expect("what it thinks of the player, by rule");
    assert!(
        thought.text.starts_with("What I think of player_0"),
        "{thought:?}"
    );
    rt.send_message(&id, "Still there?").unwrap();
    until(&mut sub, Duration::from_secs(15), spoke_by(&id)).await;
    rt.shutdown(Duration::from_secs(5));
    fake.shutdown();
}

/// A model brain rates its agent's new memories, a batch per call: what it rates of the batch,
/// from 1 to 10, replaces the heuristic's importance; the rest of its answer is dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_brain_rates_the_importance_of_new_memories_in_batches() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let mut config = agent(json!({"provider": "openai", "model": "fake-1",
                                  "base_url": fake.openai_base()}));
    config.memory = Some(agents_core::mind::MemorySettings {
        importance_batch: 2,
        reflection_threshold: 0,
        ..Default::default()
    });
    let id = rt.spawn(config).unwrap();
    fake.push_many([
        Behaviour::text("Noted."),
        Behaviour::text(
            r#"{"ratings": [{"id": 1, "importance": 9}, {"id": 2, "importance": 1},
                            {"id": 77, "importance": 5}, {"id": 1, "importance": 3}]}"#,
        ),
    ]);
    rt.send_message(&id, "The dragon sleeps under the mill. Tell no one.")
        .unwrap();
    until(&mut sub, Duration::from_secs(15), spoke_by(&id)).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    let importances = loop {
        let stream = rt.memories_page(&id, None, 10).unwrap().rows;
        let now: Vec<(i64, u8)> = stream.iter().map(|m| (m.id, m.importance)).collect();
        if now == [(1, 9), (2, 1)] {
            break now;
        }
        assert!(Instant::now() < deadline, "never rated: {now:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(importances.len(), 2);
    let requests = fake.requests();
    let rating = &requests.last().unwrap().body;
    assert_eq!(rating["stream"], json!(false), "{rating}");
    assert_eq!(rating["response_format"]["type"], "json_schema");
    let shown = rating["messages"].to_string();
    assert!(shown.contains("[1] player_0 said to me"), "{shown}");
    assert!(shown.contains("[2] I said to player_0"), "{shown}");
    // Garbage: the heuristic's stand, the agent goes on.
    fake.push_many([Behaviour::text("Hm."), Behaviour::text("nine and one")]);
    rt.send_message(&id, "Did you hear me?").unwrap();
    until(&mut sub, Duration::from_secs(15), spoke_by(&id)).await;
    fake.push(Behaviour::text("Yes."));
    rt.send_message(&id, "Good.").unwrap();
    until(&mut sub, Duration::from_secs(15), spoke_by(&id)).await;
    let stream = rt.memories_page(&id, None, 10).unwrap().rows;
    assert!(stream.iter().all(|m| (1..=10).contains(&m.importance)));
    rt.shutdown(Duration::from_secs(5));
    fake.shutdown();
}
