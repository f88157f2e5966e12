//! The local model engine on a tiny random-weight model the test writes itself: loading, one
//! model per file, many answers decoded together, the cached prompt prefix, answers constrained
//! to a JSON Schema, streaming, cancellation, parties taking turns for the sequences, time
//! limits, and every bad input named.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agents_local::{
    Answer, ChatMessage, Event, Job, LocalError, ModelSettings, Models, Outcome, Sampling,
};
use agents_testkit::gguf::{TinyModel, write_tiny_model};
use serde_json::{Value, json};

fn tiny(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.gguf");
    write_tiny_model(&path).unwrap();
    path
}

/// One thread: the tests run side by side on few cores, and llama.cpp's worker threads wait for
/// work by spinning.
/// The tiny model in `dir`, loaded with a single sequence (so answers wait for it in turn),
/// with the `Models` that hold it.
fn one_sequence(dir: &Path) -> (Models, Arc<agents_local::Model>) {
    let models = Models::default();
    let one = ModelSettings {
        sequences: 1,
        ..settings(&tiny(dir))
    };
    let model = models.load(&one, false).unwrap();
    (models, model)
}

fn settings(path: &Path) -> ModelSettings {
    ModelSettings {
        context_size: 1024,
        sequences: 4,
        threads: 1,
        ..ModelSettings::new(path)
    }
}

/// The shape of a decision, small.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "assistant_text": {"type": "string", "maxLength": 40},
            "dialog_type": {"enum": ["statement", "question", "reply"]},
            "tool_calls": {"type": "array", "maxItems": 2, "items": {"anyOf": [
                {"type": "object", "properties": {
                    "id": {"type": "string", "maxLength": 8},
                    "tool": {"const": "move"},
                    "args": {"type": "object", "properties": {
                        "x": {"type": "integer", "minimum": 0, "maximum": 100},
                        "y": {"type": "integer", "minimum": 0, "maximum": 100}},
                        "required": ["x", "y"], "additionalProperties": false}},
                 "required": ["id", "tool", "args"], "additionalProperties": false},
                {"type": "object", "properties": {
                    "id": {"type": "string", "maxLength": 8},
                    "tool": {"const": "wait"},
                    "args": {"type": "object", "properties": {}, "additionalProperties": false}},
                 "required": ["id", "tool", "args"], "additionalProperties": false}
            ]}}
        },
        "required": ["assistant_text", "dialog_type", "tool_calls"],
        "additionalProperties": false
    })
}

/// Checks an answer against [`schema`] by hand.
fn is_a_decision(text: &str) -> bool {
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let keys: Vec<&str> = o.keys().map(String::as_str).collect();
    if keys != ["assistant_text", "dialog_type", "tool_calls"] {
        return false;
    }
    let text_ok = o["assistant_text"]
        .as_str()
        .is_some_and(|t| t.chars().count() <= 40);
    let dialog_ok = matches!(
        o["dialog_type"].as_str(),
        Some("statement" | "question" | "reply")
    );
    let calls_ok = o["tool_calls"].as_array().is_some_and(|calls| {
        calls.len() <= 2
            && calls.iter().all(|c| match c["tool"].as_str() {
                Some("move") => {
                    let (x, y) = (&c["args"]["x"], &c["args"]["y"]);
                    [x, y]
                        .iter()
                        .all(|v| v.as_i64().is_some_and(|n| (0..=100).contains(&n)))
                }
                Some("wait") => c["args"] == json!({}),
                _ => false,
            })
    });
    text_ok && dialog_ok && calls_ok
}

fn job(key: &str, prompt: &str, schema: Option<Value>, seed: u64) -> Job {
    Job {
        key: key.into(),
        party: String::new(),
        messages: vec![ChatMessage::new("user", prompt)],
        schema,
        sampling: Sampling {
            seed,
            ..Sampling::default()
        },
        max_tokens: 400,
        timeout: None,
    }
}

/// Runs `job` to its end: the streamed text, and the outcome or the failure.
async fn finish(mut events: Answer) -> (String, Result<Outcome, LocalError>) {
    let mut streamed = String::new();
    while let Some(event) = events.recv().await {
        match event {
            Event::Text(t) => streamed.push_str(&t),
            Event::Done(outcome) => return (streamed, Ok(*outcome)),
            Event::Failed(e) => return (streamed, Err(e)),
        }
    }
    (streamed, Err(LocalError::Stopped))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_match_their_schema_and_stream() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let model = models.load(&settings(&tiny(dir.path())), false).unwrap();
    assert_eq!(model.info().vocabulary, agents_testkit::gguf::VOCABULARY);
    assert!(
        !model.info().has_template,
        "the tiny model carries no template"
    );
    for seed in 0..8 {
        let (streamed, outcome) =
            finish(model.run(job("agent_001", "Say hello.", Some(schema()), seed))).await;
        let outcome = outcome.unwrap();
        assert!(
            is_a_decision(&outcome.text),
            "seed {seed}: {}",
            outcome.text
        );
        assert_eq!(streamed, outcome.text, "everything is streamed, once");
        assert!(outcome.complete);
        assert!(
            outcome.forced_tokens > 0,
            "the keys are forced, not sampled"
        );
        assert!(outcome.output_tokens > outcome.forced_tokens);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_answers_are_decoded_together_and_all_finish() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let model = models.load(&settings(&tiny(dir.path())), false).unwrap();
    // Ten agents on four sequences: six wait for a free one.
    let runs: Vec<_> = (0..10)
        .map(|i| model.run(job(&format!("agent_{i:03}"), "Decide.", Some(schema()), i)))
        .collect();
    let mut handles = Vec::new();
    for run in runs {
        handles.push(tokio::spawn(finish(run)));
    }
    for handle in handles {
        let (_, outcome) = handle.await.unwrap();
        let outcome = outcome.unwrap();
        assert!(is_a_decision(&outcome.text), "{}", outcome.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_prompt_prefix_stays_cached() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let model = models.load(&settings(&tiny(dir.path())), false).unwrap();
    let stable = "You are Mira, the baker. ".repeat(20);
    let first = finish(model.run(job("mira", &format!("{stable}Hello."), Some(schema()), 1)))
        .await
        .1
        .unwrap();
    assert_eq!(first.cached_tokens, 0);
    let second = finish(model.run(job("mira", &format!("{stable}Goodbye."), Some(schema()), 1)))
        .await
        .1
        .unwrap();
    assert!(
        second.cached_tokens > first.prompt_tokens / 2
            && second.cached_tokens < second.prompt_tokens,
        "{} of {} cached",
        second.cached_tokens,
        second.prompt_tokens
    );
    // Another agent's prompt that begins alike copies that prefix from Mira's sequence.
    let other = finish(model.run(job("ivy", &format!("{stable}Goodbye."), Some(schema()), 1)))
        .await
        .1
        .unwrap();
    assert_eq!(other.cached_tokens, other.prompt_tokens - 1);
    assert_eq!(other.shared_tokens, other.cached_tokens);
    assert_eq!(second.shared_tokens, 0, "its own sequence held it");
    // The same prompt again: all but its last token.
    let again = finish(model.run(job("mira", &format!("{stable}Goodbye."), Some(schema()), 2)))
        .await
        .1
        .unwrap();
    assert_eq!(again.cached_tokens, again.prompt_tokens - 1);
}

/// A greedy job: the same prompt always gives the same answer.
fn greedy(key: &str, prompt: &str) -> Job {
    Job {
        sampling: Sampling {
            temperature: 0.0,
            top_p: 1.0,
            seed: 1,
        },
        max_tokens: 48,
        ..job(key, prompt, Some(schema()), 1)
    }
}

/// What agents on one model share is read once: a prompt that begins like one another
/// sequence holds copies that prefix, prompts that begin alike and start together wait for the
/// one that reads it — and every answer is the one its prompt gives read afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_share_the_prefix_their_prompts_begin_with() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path());
    let rules = "Rules every villager is given: be kind, keep lines short. ".repeat(12);
    let prompts: Vec<String> = ["Mira, the baker", "Bram, the smith", "Ivy, the herbalist"]
        .iter()
        .map(|who| format!("{rules}You are {who}. Someone says hello."))
        .collect();
    // Each prompt alone, on a model of its own: the answer it gives read afresh.
    let mut alone = Vec::new();
    for prompt in &prompts {
        let models = Models::default();
        let model = models.load(&settings(&path), false).unwrap();
        let outcome = finish(model.run(greedy("a", prompt))).await.1.unwrap();
        assert_eq!((outcome.cached_tokens, outcome.shared_tokens), (0, 0));
        alone.push(outcome);
    }
    let shared = alone[0].prompt_tokens as usize / 2;

    // Started together: one reads the prefix, the others wait for it and copy it.
    let models = Models::default();
    let model = models.load(&settings(&path), false).unwrap();
    let runs: Vec<_> = prompts
        .iter()
        .enumerate()
        .map(|(i, prompt)| model.run(greedy(&format!("agent_{i}"), prompt)))
        .collect();
    let mut together = Vec::new();
    for run in runs {
        together.push(finish(run).await.1.unwrap());
    }
    let readers = together.iter().filter(|o| o.shared_tokens == 0).count();
    assert_eq!(readers, 1, "one reads the prefix: {together:?}");
    for (outcome, fresh) in together.iter().zip(&alone) {
        assert!(
            outcome.shared_tokens == 0 || outcome.shared_tokens as usize > shared,
            "{outcome:?}"
        );
        assert_eq!(outcome.cached_tokens, outcome.shared_tokens);
        assert_eq!(outcome.text, fresh.text, "the same answer as read afresh");
    }

    // A new agent later: copies the prefix from a sequence that holds it.
    let late = format!("{rules}You are Wim, the miller. Someone says hello.");
    let outcome = finish(model.run(greedy("agent_9", &late))).await.1.unwrap();
    assert!(outcome.shared_tokens as usize > shared, "{outcome:?}");
    let models = Models::default();
    let fresh = models.load(&settings(&path), false).unwrap();
    let afresh = finish(fresh.run(greedy("a", &late))).await.1.unwrap();
    assert_eq!(outcome.text, afresh.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_receiver_stops_the_answer_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_models, model) = one_sequence(dir.path());
    let mut long = job("agent_001", "Talk.", None, 1);
    long.max_tokens = 900;
    let mut events = model.run(long);
    // The first text arrives; then the receiver goes.
    match events.recv().await {
        Some(Event::Text(_)) => {}
        other => panic!("expected the answer's first text, got {other:?}"),
    }
    drop(events);
    // The only sequence is free again for the next answer, well before 900 tokens would take.
    let next = tokio::time::timeout(
        Duration::from_secs(20),
        finish(model.run(job("agent_002", "Decide.", Some(schema()), 2))),
    )
    .await
    .expect("the cancelled answer freed its sequence");
    assert!(is_a_decision(&next.1.unwrap().text));
}

/// A long free-text answer for `party` (it runs until dropped or cut at 900 tokens).
fn long(key: &str, party: &str) -> Job {
    Job {
        party: party.into(),
        max_tokens: 900,
        ..job(key, "Talk.", None, 1)
    }
}

/// A short answer for `party`.
fn short(key: &str, party: &str) -> Job {
    Job {
        party: party.into(),
        max_tokens: 8,
        ..job(key, "Decide.", None, 1)
    }
}

/// Waits for the first text of a running answer.
async fn running(answer: &mut Answer) {
    match answer.recv().await {
        Some(Event::Text(_)) => {}
        other => panic!("expected the answer's first text, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parties_take_turns_for_the_models_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let (_models, model) = one_sequence(dir.path());
    // The only sequence is busy while the queue fills: a flood of one party's answers first,
    // then one answer of another party and one of the game.
    let mut busy = model.run(long("hold", "flood"));
    running(&mut busy).await;
    let mut queued: Vec<(String, Answer)> = (0..12)
        .map(|i| {
            let key = format!("flood_{i:02}");
            (key.clone(), model.run(short(&key, "flood")))
        })
        .collect();
    queued.push((
        "newcomer".into(),
        model.run(short("newcomer", "connection-2")),
    ));
    queued.push(("game".into(), model.run(short("game", ""))));
    assert_eq!(model.waiting(), 14);
    let done = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for (key, answer) in queued {
        let done = done.clone();
        handles.push(tokio::spawn(async move {
            let outcome = finish(answer).await.1;
            assert!(outcome.is_ok(), "{key}: {outcome:?}");
            done.lock().push(key);
        }));
    }
    drop(busy);
    for handle in handles {
        handle.await.unwrap();
    }
    // One sequence: answers end in the order they started (each is recorded by its own task
    // as it ends, so two neighbours may be recorded swapped). Each other party had its turn
    // within the first answers — not after the flood's twelve — and the flood kept its own
    // order.
    let order = done.lock().clone();
    for party in ["newcomer", "game"] {
        let at = order.iter().position(|k| k == party).unwrap();
        assert!(at <= 3, "{party} answered {}th: {order:?}", at + 1);
    }
    let flood: Vec<_> = order.iter().filter(|k| k.starts_with("flood")).collect();
    let mut sorted = flood.clone();
    sorted.sort();
    for (at, key) in flood.iter().enumerate() {
        let place = sorted.iter().position(|k| k == key).unwrap();
        assert!(place.abs_diff(at) <= 1, "the flood's order: {flood:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_answer_leaves_the_queue_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_models, model) = one_sequence(dir.path());
    let mut busy = model.run(long("hold", "a"));
    running(&mut busy).await;
    let queued: Vec<_> = (0..5)
        .map(|i| model.run(short(&format!("gone_{i}"), "a")))
        .collect();
    let kept = model.run(short("kept", "b"));
    assert_eq!(model.waiting(), 6);
    // Their agents are terminated while the sequence is still busy: gone from the queue at
    // once, not when their turn would have come.
    drop(queued);
    assert_eq!(model.waiting(), 1);
    drop(busy);
    let (_, outcome) = tokio::time::timeout(Duration::from_secs(60), finish(kept))
        .await
        .expect("the answer left waiting ran");
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(model.waiting(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_its_time_limit_fails_and_frees_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let (_models, model) = one_sequence(dir.path());
    // A limit that has passed by the first decode step's end: 900 tokens cannot be answered.
    let late = Job {
        timeout: Some(Duration::ZERO),
        ..long("slow", "")
    };
    let (_, outcome) = tokio::time::timeout(Duration::from_secs(60), finish(model.run(late)))
        .await
        .expect("the answer ended");
    let e = outcome.unwrap_err();
    assert!(matches!(e, LocalError::TimedOut { .. }), "{e:?}");
    assert_eq!(e.code(), "brain_timeout");
    assert!(e.to_string().contains("brain.timeout_seconds"), "{e}");
    // Its sequence is free for the next answer.
    let (_, next) = tokio::time::timeout(
        Duration::from_secs(60),
        finish(model.run(short("next", ""))),
    )
    .await
    .expect("the next answer ran");
    assert!(next.is_ok(), "{next:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_loaded_model_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path());
    let models = Models::default();
    let a = models.load(&settings(&path), false).unwrap();
    // The same file by another name is the same model.
    let b = models
        .load(&settings(&dir.path().join(".").join("tiny.gguf")), false)
        .unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(models.loaded_count(), 1);
    let bigger = ModelSettings {
        context_size: 2048,
        ..settings(&path)
    };
    let e = models.load(&bigger, false).unwrap_err();
    assert_eq!(e.code(), "invalid_config");
    assert!(
        e.to_string().starts_with("brain.context_size: the model")
            && e.to_string()
                .contains("loaded already with context_size 1024, not 2048"),
        "{e}"
    );
    assert_eq!(models.check(&bigger), Err(e));
    // Unloaded with its last user.
    drop((a, b));
    assert_eq!(models.loaded_count(), 0);
    // Unless kept.
    let kept = models.load(&settings(&path), true).unwrap();
    drop(kept);
    assert_eq!(models.loaded_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_model_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let load = |path: PathBuf| models.load(&settings(&path), false).unwrap_err();
    let missing = load(dir.path().join("nothing.gguf"));
    assert_eq!(missing.code(), "brain_model_not_found");
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "these are not weights").unwrap();
    assert!(matches!(load(text), LocalError::NotGguf(_)));
    let tiny_file = dir.path().join("empty.gguf");
    std::fs::write(&tiny_file, "GG").unwrap();
    assert_eq!(load(tiny_file).code(), "brain_model_invalid");
    assert!(matches!(
        load(dir.path().to_path_buf()),
        LocalError::NotGguf(_)
    ));
    // A model cut mid-way: llama.cpp refuses it, nothing crashes.
    let bytes = TinyModel::default().bytes();
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = load(cut);
    assert!(matches!(e, LocalError::LoadFailed(_)), "{e}");
    assert_eq!(models.loaded_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_longer_than_the_context_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let small = ModelSettings {
        context_size: 256,
        ..settings(&tiny(dir.path()))
    };
    let model = models.load(&small, false).unwrap();
    let mut long = job("agent_001", &"words ".repeat(50), Some(schema()), 1);
    long.max_tokens = 64;
    let (_, outcome) = finish(model.run(long)).await;
    let e = outcome.unwrap_err();
    assert_eq!(e.code(), "brain_context_exceeded");
    assert!(
        e.to_string()
            .contains("more than the context of 256 tokens"),
        "{e}"
    );
    // The model goes on answering what fits.
    let mut short = job("agent_001", "Hi.", Some(schema()), 1);
    short.max_tokens = 150;
    assert!(finish(model.run(short)).await.1.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_the_grammar_compiler_cannot_handle_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let model = models.load(&settings(&tiny(dir.path())), false).unwrap();
    let broken = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}},
                        "required": ["a"]});
    let (_, outcome) = finish(model.run(job("agent_001", "Hi.", Some(broken), 1))).await;
    let e = outcome.unwrap_err();
    assert_eq!(e.code(), "brain_grammar_failed", "{e}");
    // The model goes on.
    assert!(
        finish(model.run(job("agent_001", "Hi.", Some(schema()), 1)))
            .await
            .1
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_near_max_tokens_winds_down_and_closes() {
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let model = models.load(&settings(&tiny(dir.path())), false).unwrap();
    // Strings far longer than the answer may be: the random model's noise would fill them
    // past max_tokens, and the answer would be cut in the middle.
    let long = json!({
        "type": "object",
        "properties": {
            "assistant_text": {"type": "string", "minLength": 1, "maxLength": 2000},
            "tool_calls": {"type": "array", "maxItems": 4, "items": {
                "type": "object",
                "properties": {
                    "tool": {"const": "speak"},
                    "args": {"type": "object", "properties": {
                        "content": {"type": "string", "maxLength": 2000}},
                        "required": ["content"], "additionalProperties": false}},
                "required": ["tool", "args"], "additionalProperties": false}}
        },
        "required": ["assistant_text", "tool_calls"],
        "additionalProperties": false
    });
    let validator = jsonschema::validator_for(&long).unwrap();
    for seed in 1..=4 {
        let mut ask = job(&format!("agent_{seed}"), "Talk.", Some(long.clone()), seed);
        // The tiny model's vocabulary spells keys in many tokens: closing takes about 20.
        ask.max_tokens = 96;
        let (_, outcome) = finish(model.run(ask)).await;
        let outcome = outcome.unwrap();
        assert!(outcome.output_tokens <= 96, "{outcome:?}");
        assert!(
            outcome.complete,
            "closed before max_tokens: {:?}",
            outcome.text
        );
        let answer: Value = serde_json::from_str(&outcome.text).unwrap();
        assert!(validator.is_valid(&answer), "{answer}");
    }
}

/// Layers asked of a GPU that is not there are refused before the model loads, saying why —
/// not run on the CPU without a word.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_layers_without_a_gpu_are_refused_saying_why() {
    if !agents_local::gpu::devices().unwrap().is_empty() {
        return; // this machine has one for this build
    }
    let dir = tempfile::tempdir().unwrap();
    let models = Models::default();
    let on_gpu = ModelSettings {
        gpu_layers: 4,
        ..settings(&tiny(dir.path()))
    };
    for refused in [
        models.check(&on_gpu).unwrap_err(),
        models.load(&on_gpu, false).map(|_| ()).unwrap_err(),
    ] {
        assert_eq!(refused.code(), "invalid_config");
        let message = refused.to_string();
        assert!(
            message.starts_with("brain.gpu_layers is 4, but "),
            "{message}"
        );
        assert!(message.ends_with("set it to 0 to run the model on the CPU"));
        let why = if agents_local::gpu::BACKENDS.is_empty() {
            "this build has no GPU back end"
        } else {
            "no GPU device was found"
        };
        assert!(message.contains(why), "{message}");
    }
    // On the CPU it loads.
    let model = models.load(&settings(&tiny(dir.path())), false);
    assert!(model.is_ok());
}
