//! Tokens per second of one answer on the real model (`AGENTS_TEST_MODEL`, which `cargo xtask
//! bench --only-local` fetches): llama.cpp's own generation loop through the binding (as the
//! `llama-cpp-2` crate's `simple` example does it: decode one token, take the likeliest, decode
//! it) against this crate's worker on the same model, threads and context — free text with the
//! same greedy choice, then free text sampled (temperature 0.7, top-p 0.95), then an answer
//! constrained to a JSON Schema. Generation only: from the first answer token to the last.
//!
//! Prints one line per measurement and a summary. Threads: `AGENTS_BENCH_THREADS` (default: the
//! machine's cores, at most 8).

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use agents_local::{ChatMessage, Event, Job, ModelSettings, Models, Sampling};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use serde_json::json;

/// Tokens generated per run.
const TOKENS: u32 = 128;
/// Context of both.
const CONTEXT: u32 = 2048;
/// Runs of each; the median is reported.
const RUNS: usize = 3;

const PROMPT: &str = "Write a long story about Mira, the baker of a small village by the sea, \
    and the day the well ran dry. Tell it slowly, with the names of the villagers and what each \
    of them said.";

fn main() {
    let Some(path) = std::env::var_os("AGENTS_TEST_MODEL") else {
        println!(
            "throughput: skipped (AGENTS_TEST_MODEL is not set; cargo xtask bench --only-local sets it)"
        );
        return;
    };
    let threads: u32 = std::env::var("AGENTS_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(4, |n| n.get().min(8)) as u32
        });
    println!(
        "throughput: {} threads, context {CONTEXT}, {TOKENS} tokens per run, median of {RUNS}",
        threads
    );

    let plain = median((0..RUNS).map(|_| plain_loop(&path, threads)).collect());
    println!("llama.cpp loop (greedy)        {plain:7.1} tokens/s");

    let settings = ModelSettings {
        context_size: CONTEXT,
        sequences: 1,
        threads,
        ..ModelSettings::new(&path)
    };
    let model = Models::default()
        .load(&settings, false)
        .expect("the model loads");
    let run = |key: &str, temperature: f32, schema: Option<serde_json::Value>| {
        let job = Job {
            key: key.to_string(),
            party: String::new(),
            messages: vec![ChatMessage::new("user", PROMPT)],
            schema,
            sampling: Sampling {
                temperature,
                top_p: 0.95,
                seed: 7,
            },
            max_tokens: TOKENS,
            timeout: None,
        };
        let mut events = model.run(job);
        loop {
            match events.blocking_recv() {
                Some(Event::Text(_)) => {}
                Some(Event::Done(outcome)) => {
                    let generating = outcome.elapsed.saturating_sub(outcome.first_token);
                    break rate(outcome.output_tokens.saturating_sub(1), generating);
                }
                Some(Event::Failed(e)) => panic!("{e}"),
                None => panic!("the worker stopped"),
            }
        }
    };
    // A new key each run: the prompt is evaluated afresh (what is timed starts after it).
    let greedy = median(
        (0..RUNS)
            .map(|i| run(&format!("g{i}"), 0.0, None))
            .collect(),
    );
    println!("worker, free text (greedy)     {greedy:7.1} tokens/s");
    let sampled = median(
        (0..RUNS)
            .map(|i| run(&format!("s{i}"), 0.7, None))
            .collect(),
    );
    println!("worker, free text (sampled)    {sampled:7.1} tokens/s");
    let schema = json!({
        "type": "object",
        "properties": {
            "story": {"type": "string", "maxLength": 2000},
            "villagers": {"type": "array", "items": {"type": "string", "maxLength": 40}},
        },
        "required": ["story", "villagers"],
        "additionalProperties": false,
    });
    let constrained = median(
        (0..RUNS)
            .map(|i| run(&format!("c{i}"), 0.7, Some(schema.clone())))
            .collect(),
    );
    println!("worker, JSON Schema (sampled)  {constrained:7.1} tokens/s");
    println!(
        "throughput summary: worker greedy {:.1}% of llama.cpp's loop; sampled {:.1}%; constrained {:.1}%",
        100.0 * greedy / plain,
        100.0 * sampled / plain,
        100.0 * constrained / plain
    );
}

/// llama.cpp's generation through the binding: the prompt in one batch, then one token per
/// decode, the likeliest each time, until `TOKENS` or the end of generation.
fn plain_loop(path: &std::ffi::OsStr, threads: u32) -> f64 {
    let backend = agents_local::backend().expect("llama.cpp starts");
    let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
        .expect("the model loads");
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(CONTEXT))
        .with_n_batch(512)
        .with_n_threads(threads as i32)
        .with_n_threads_batch(threads as i32);
    let mut ctx = model.new_context(backend, params).expect("a context");
    let vocab = model.vocab();
    let prompt = vocab.tokenize(PROMPT.as_bytes(), true, true);
    let mut batch = LlamaBatch::new(512, 1);
    for (i, token) in prompt.iter().enumerate() {
        batch
            .add(*token, i as i32, &[0], i + 1 == prompt.len())
            .unwrap();
    }
    ctx.decode(&mut batch).expect("the prompt decodes");
    let mut position = prompt.len() as i32;
    let mut generated = 0u32;
    let mut started = None;
    while generated < TOKENS {
        let logits = ctx.get_logits_ith(batch.n_tokens() - 1);
        let best = logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(i, _)| i as i32)
            .unwrap();
        let token = llama_cpp_2::token::LlamaToken(best);
        // Timed from the first answer token, as the worker's figure is.
        started.get_or_insert_with(Instant::now);
        generated += 1;
        if vocab.is_eog(token) || generated == TOKENS {
            break;
        }
        batch.clear();
        batch.add(token, position, &[0], true).unwrap();
        position += 1;
        ctx.decode(&mut batch).expect("a token decodes");
    }
    rate(
        generated.saturating_sub(1),
        started.map_or(Duration::ZERO, |s| s.elapsed()),
    )
}

fn rate(tokens: u32, time: Duration) -> f64 {
    f64::from(tokens) / time.as_secs_f64().max(1e-9)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
