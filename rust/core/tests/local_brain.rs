//! The `local` brain end to end on a tiny random-weight model the test writes itself: an agent
//! decides through the runtime with answers constrained to the contract (its text is noise, its
//! replies are still valid), streams its speech, and misconfigurations are refused at spawn.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agents_core::bus::{BusMessage, Filter};
use agents_core::memory::CallOutcome;
use serde_json::{Value, json};

mod common;
use common::{agent, runtime, until};

fn tiny(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.gguf");
    agents_testkit::gguf::write_tiny_model(&path).unwrap();
    path
}

/// A local brain on `model`: one thread (tests run side by side), a small answer.
fn brain(model: &Path) -> Value {
    json!({"provider": "local", "model": model.to_str().unwrap(), "threads": 1,
           "sequences": 2, "context_size": 8192, "max_tokens": 200, "seed": 3})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_agent_decides_with_contract_valid_replies() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny(dir.path());
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(agent(brain(&model))).unwrap();
    assert_eq!(
        rt.state(&id).unwrap().brain,
        format!("local:{}", model.display())
    );
    rt.send_message(&id, "Can you come to the well?").unwrap();
    // Its first decision is traced once it is answered.
    let mut trace = Vec::new();
    for _ in 0..400 {
        trace = rt.agent_trace(&id, 20).unwrap();
        if !trace.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!trace.is_empty(), "the agent never decided");
    for row in &trace {
        assert_eq!(row.call.provider, "local");
        assert_ne!(
            row.call.outcome,
            CallOutcome::InvalidReply,
            "a constrained answer broke the contract: {row:?}"
        );
        assert!(
            row.call.input_tokens > 0 && row.call.output_tokens > 0,
            "{row:?}"
        );
    }
    // Whatever the noise asked for, the brain was never reported broken.
    while let Ok(Some(received)) =
        tokio::time::timeout(Duration::from_millis(100), sub.recv()).await
    {
        if let agents_core::bus::Received::Message(env) = received
            && let BusMessage::AgentError { code, message, .. } = &env.message
        {
            assert!(!code.as_str().starts_with("brain_"), "{code}: {message}");
        }
    }
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misconfigured_local_brains_are_refused_at_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny(dir.path());
    let rt = runtime(&dir);
    let refused = |brain: Value| rt.spawn(agent(brain)).unwrap_err().to_string();
    let missing = refused(json!({"provider": "local", "model": "no/such/model.gguf"}));
    assert_eq!(
        missing,
        "brain.model: the model file no/such/model.gguf does not exist"
    );
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not weights").unwrap();
    assert!(
        refused(json!({"provider": "local", "model": notes.to_str().unwrap()}))
            .contains("is not a GGUF model file"),
    );
    assert_eq!(
        refused(json!({"provider": "local"})),
        "brain.model is required for the local provider: the GGUF file"
    );
    let m = model.to_str().unwrap();
    let typo = refused(json!({"provider": "local", "model": m, "temprature": 1}));
    assert!(
        typo.starts_with("brain.temprature: unknown field `temprature`")
            && typo.ends_with("(the options of the local provider)"),
        "{typo}"
    );
    assert_eq!(
        refused(json!({"provider": "local", "model": m, "top_p": 2})),
        "brain.top_p must be more than 0 and at most 1, got 2"
    );
    assert_eq!(
        refused(json!({"provider": "local", "model": m, "sequences": 0})),
        "brain.sequences must be between 1 and 64, got 0"
    );
    // Nothing refused used an id.
    let id = rt.spawn(agent(brain(&model))).unwrap();
    assert_eq!(id, "agent_001");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speech_streams_while_it_is_generated() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny(dir.path());
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(agent(brain(&model))).unwrap();
    rt.send_message(&id, "Hello!").unwrap();
    // The noise says something before it decides anything (its text comes first): the
    // deltas of that text arrive as it is generated.
    let events = until(&mut sub, Duration::from_secs(60), |m| {
        matches!(m, BusMessage::AgentSpeechDelta { .. })
    })
    .await;
    assert!(matches!(
        events.last(),
        Some(BusMessage::AgentSpeechDelta { agent_id, .. }) if *agent_id == id
    ));
    rt.shutdown(Duration::from_secs(2));
}
