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
    let m = model.to_str().unwrap();
    assert_eq!(
        refused(json!({"provider": "local"})),
        "brain.model is required for the local provider: the GGUF file (or brain.model_url \
         and brain.model_sha256, to download it)"
    );
    let url = "https://models.example/tiny.gguf";
    let sha = "0".repeat(64);
    for (brain, error) in [
        (
            json!({"provider": "local", "model_url": url}),
            "brain.model_sha256 is required with brain.model_url: the SHA-256 the downloaded \
             file must have",
        ),
        (
            json!({"provider": "local", "model_url": "file:///etc/passwd", "model_sha256": sha}),
            "brain.model_url: the URL's scheme is \"file\"; only http and https are downloaded",
        ),
        (
            json!({"provider": "local", "model_url": url, "model_sha256": "12ab"}),
            "brain.model_sha256: a SHA-256 is 64 hexadecimal digits; got 4 characters",
        ),
        (
            json!({"provider": "local", "model": m, "model_url": url, "model_sha256": sha}),
            "brain.model_url: give brain.model (a file) or brain.model_url (a download), not both",
        ),
        (
            json!({"provider": "local", "model": m, "model_sha256": sha}),
            "brain.model_sha256 applies to a download: it needs brain.model_url",
        ),
    ] {
        assert_eq!(refused(brain), error);
    }
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
    assert_eq!(
        refused(json!({"provider": "local", "model": m, "timeout_seconds": 0})),
        "brain.timeout_seconds must be more than 0 and at most 3600, got 0"
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

/// Serves `bytes` at `http://127.0.0.1:PORT/models/tiny.gguf`, counting requests.
async fn serve(bytes: Vec<u8>) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    let app = axum::Router::new().route(
        "/models/tiny.gguf",
        axum::routing::get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            let bytes = bytes.clone();
            async move { bytes }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/models/tiny.gguf", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, requests)
}

fn sha256(bytes: &[u8]) -> String {
    agents_testkit::sha256_hex(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_from_a_url_is_downloaded_once_with_progress_then_decides() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(tiny(dir.path())).unwrap();
    let (url, requests) = serve(bytes.clone()).await;
    let cache = dir.path().join("cache");
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let brain = json!({"provider": "local", "model_url": format!("{url}?key=hidden"),
                       "model_sha256": sha256(&bytes), "model_cache": cache.to_str().unwrap(),
                       "threads": 1, "sequences": 2, "context_size": 8192, "max_tokens": 120});
    let first = rt.spawn(agent(brain.clone())).unwrap();
    let second = rt.spawn(agent(brain)).unwrap();
    // Snapshots go to every client: a URL (and its query) is not in the brain's label.
    assert_eq!(rt.state(&first).unwrap().brain, "local");
    rt.send_message(&first, "Hello?").unwrap();
    rt.send_message(&second, "Hello?").unwrap();
    let mut progress = Vec::new();
    let mut decided = std::collections::HashSet::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while decided.len() < 2 && tokio::time::Instant::now() < deadline {
        let Ok(Some(agents_core::bus::Received::Message(env))) =
            tokio::time::timeout(Duration::from_secs(1), sub.recv()).await
        else {
            continue;
        };
        match &env.message {
            BusMessage::ModelDownloadProgress {
                agent_id,
                url: shown,
                received_bytes,
                total_bytes,
            } => {
                assert_eq!(*shown, url, "the query stays out of events");
                progress.push((agent_id.clone(), *received_bytes, *total_bytes));
            }
            BusMessage::AgentReplied { agent_id, .. } => {
                decided.insert(agent_id.clone());
            }
            BusMessage::AgentError { code, message, .. } => {
                panic!("{code}: {message}")
            }
            _ => {}
        }
    }
    assert_eq!(decided.len(), 2, "both agents decided: {progress:?}");
    let size = bytes.len() as u64;
    assert!(
        progress.contains(&(first.clone(), size, Some(size))),
        "the end of the download reported: {progress:?}"
    );
    assert_eq!(
        requests.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "downloaded once"
    );
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(files.len(), 1);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_with_another_hash_is_an_agent_error_and_others_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(tiny(dir.path())).unwrap();
    let (url, _) = serve(bytes).await;
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let wrong = "ab".repeat(32);
    let cache = dir.path().join("cache");
    let id = rt
        .spawn(agent(
            json!({"provider": "local", "model_url": url, "model_sha256": wrong,
                            "model_cache": cache.to_str().unwrap(), "threads": 1}),
        ))
        .unwrap();
    let scripted = rt.spawn(agent(json!("scripted"))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(60), |m| {
        matches!(m, BusMessage::AgentError { .. })
    })
    .await;
    let Some(BusMessage::AgentError {
        agent_id,
        code,
        message,
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!(agent_id.as_deref(), Some(id.as_str()));
    assert_eq!(code.as_str(), "brain_model_checksum_mismatch");
    assert!(message.contains(&wrong), "{message}");
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        0,
        "the wrong file is gone"
    );
    // The agent is still there, and the others go on.
    assert!(rt.state(&id).is_some());
    rt.send_message(&scripted, "Hi").unwrap();
    until(
        &mut sub,
        Duration::from_secs(20),
        |m| matches!(m, BusMessage::AgentReplied { agent_id, .. } if *agent_id == scripted),
    )
    .await;
    rt.shutdown(Duration::from_secs(2));
}

/// The first model call of `id` in the trace (rows are numbered as they are written).
fn first_call(rt: &agents_core::runtime::Runtime, id: &str) -> Option<i64> {
    rt.agent_trace(id, 100).unwrap().iter().map(|r| r.id).min()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_clients_flood_of_agents_does_not_starve_another_client() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path());
    // One sequence, so the answers are taken one at a time, in the model's turns.
    let brain = json!({"provider": "local", "model": path.to_str().unwrap(), "threads": 1,
                       "sequences": 1, "context_size": 8192, "max_tokens": 200, "seed": 3});
    let rt = runtime(&dir);
    // The sequence is held while the queue fills, by an answer of the test's own.
    let settings = agents_local::ModelSettings {
        context_size: 8192,
        sequences: 1,
        threads: 1,
        ..agents_local::ModelSettings::new(&path)
    };
    let model = agents_local::Models::global()
        .load(&settings, false)
        .unwrap();
    // A string of 7,000 characters: it cannot end before the test drops it.
    let mut holder = model.run(agents_local::Job {
        key: "holder".into(),
        party: "test".into(),
        messages: vec![agents_local::ChatMessage::new("user", "Talk.")],
        schema: Some(json!({"type": "string", "minLength": 7000, "maxLength": 7000})),
        sampling: agents_local::Sampling::default(),
        max_tokens: 7500,
        timeout: None,
    });
    assert!(matches!(
        holder.recv().await,
        Some(agents_local::Event::Text(_))
    ));
    let spawn = |party: &str| {
        let mut config = agent(brain.clone());
        config.party = Some(party.into());
        let id = rt.spawn(config).unwrap();
        rt.send_message(&id, "Can you come to the well?").unwrap();
        id
    };
    let waiting = |n: usize| {
        let model = model.clone();
        async move {
            for _ in 0..1200 {
                // At least `n` (an agent may queue more than one answer); 0: none.
                let now = model.waiting();
                if (n == 0 && now == 0) || (n > 0 && now >= n) {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            panic!("{} answers wait, not {n}", model.waiting());
        }
    };
    // One client's eight agents ask first, then another client's one.
    let flood: Vec<String> = (0..8).map(|_| spawn("connection-1")).collect();
    waiting(8).await;
    let newcomer = spawn("connection-2");
    waiting(9).await;
    drop(holder);
    let mut answered = None;
    for _ in 0..1200 {
        answered = first_call(&rt, &newcomer);
        if answered.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let answered = answered.expect("the newcomer was answered");
    // Its turn came after one answer of the flood, not after all eight.
    let before = flood
        .iter()
        .filter(|id| first_call(&rt, id).is_some_and(|first| first < answered))
        .count();
    assert_eq!(before, 1, "flood agents answered before the newcomer");
    // Terminated, the flood's waiting answers leave the queue.
    for id in &flood {
        rt.terminate(id).unwrap();
    }
    waiting(0).await;
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_its_time_limit_is_the_agents_error_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny(dir.path());
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    // A microsecond: over by the end of the first decode step, long before 200 tokens.
    let mut brain = brain(&model);
    brain["timeout_seconds"] = json!(0.000001);
    let id = rt.spawn(agent(brain)).unwrap();
    rt.send_message(&id, "Can you come to the well?").unwrap();
    let events = until(&mut sub, Duration::from_secs(60), common::error_of(&id)).await;
    let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
        panic!("no error: {events:?}")
    };
    assert_eq!(code.as_str(), "brain_error");
    assert!(
        message.contains("did not finish its answer within brain.timeout_seconds"),
        "{message}"
    );
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(
        trace[0].call.error_code.as_deref(),
        Some("brain_timeout"),
        "{trace:?}"
    );
    rt.shutdown(Duration::from_secs(2));
}
