//! The `local` provider on the real model (`AGENTS_TEST_MODEL`: Gemma 3 270M, which `cargo
//! xtask bench --only-local` fetches), through the runtime, as a game runs it:
//!
//! - `crowd`: 1, 8 and 32 agents on one model asked a question at once, two rounds (the first
//!   reads each agent's whole prompt, the second only what is new): decisions per second with
//!   their decisions decoded together (`sequences` = agents) against one at a time
//!   (`sequences: 1`: one context behind one lock, what a single inference lock per model
//!   gives). Together, the prefix the agents' prompts share is read once and copied.
//! - `cache`: on the model directly, real prompts of two agents: time to the first answer token
//!   of an agent's second prompt with its first cached in its sequence, and of the other
//!   agent's first prompt with the first agent's cached in another sequence (the shared
//!   prefix copied, as a newly spawned agent's is), each against the same prompt read afresh.
//! - `memory`: resident memory of the process with 1 agent and with 32 agents on one model
//!   (both with 32 sequences, so the context is the same): the model counted once.
//! - `valid`: 8 agents asked round after round until they made at least 500 decisions in
//!   this run (the other parts' decisions count; standing together, they also decide on what
//!   they hear each other say): calls whose answer broke the contract (so a
//!   repair was asked) against all calls; nothing may need a repair.
//!
//! `cargo bench -p agents-core --features local --bench local [-- crowd|cache|memory|valid]`.
//! Threads: `AGENTS_BENCH_THREADS` (default: the machine's cores, at most 8). The crowds:
//! `AGENTS_BENCH_CROWDS` (default `1,8,32`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use agents_core::bus::{BusMessage, Filter, Received};
use agents_core::memory::CallOutcome;
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions, WorldBounds};
use agents_local::{ChatMessage, Event, Job, ModelSettings, Models, Sampling};
use serde_json::{Value, json};

/// Tokens of context per agent.
const CONTEXT: u32 = 3072;
/// Most tokens per answer.
const MAX_TOKENS: u32 = 128;
/// Decisions the `valid` part makes sure of.
const VALID_DECISIONS: usize = 500;

const NAMES: [&str; 8] = [
    "Mira", "Tomas", "Ilse", "Bram", "Odile", "Piet", "Rosa", "Wim",
];
const QUESTIONS: [&str; 6] = [
    "Good morning! Is there fresh bread today?",
    "Could you walk over to the well with me?",
    "Have you seen the miller anywhere?",
    "What do you think of the new mayor?",
    "Can you help me carry this flour to the bakery?",
    "Is the market open tomorrow?",
];

struct Bench {
    model: String,
    threads: u32,
    decisions: usize,
    calls: usize,
    invalid_calls: usize,
    /// Calls that were repairs (an earlier answer of their decision broke the contract).
    repaired_decisions: usize,
}

fn options(dir: &tempfile::TempDir) -> RuntimeOptions {
    RuntimeOptions {
        database: dir.path().join("bench.db"),
        idle_think_seconds: 100_000.0,
        speaking_seconds: 0.0,
        bounds: WorldBounds::from_rect(0.0, 0.0, 1000.0, 1000.0).unwrap(),
        ..RuntimeOptions::default()
    }
}

impl Bench {
    fn brain(&self, sequences: u32, trace_prompts: bool) -> Value {
        json!({"provider": "local", "model": self.model, "threads": self.threads,
               "sequences": sequences, "context_size": CONTEXT, "max_tokens": MAX_TOKENS,
               "temperature": 0.7, "trace_prompts": trace_prompts})
    }

    fn spawn(&self, rt: &Runtime, n: usize, sequences: u32, trace_prompts: bool) -> Vec<String> {
        (0..n)
            .map(|i| {
                let name = format!("{} {}", NAMES[i % NAMES.len()], i / NAMES.len() + 1);
                let config = AgentConfig::from_json(&json!({
                    "name": name, "role": "villager",
                    "prompt": "You live in a small market town by the sea. You sell bread, \
                               gossip about your neighbours and help the player when asked. \
                               Keep your lines short and warm.",
                    "initial_position": {"x": 20.0 + 30.0 * i as f64, "y": 40.0},
                    "brain": self.brain(sequences, trace_prompts)
                }))
                .unwrap();
                rt.spawn(config).unwrap()
            })
            .collect()
    }

    /// Asks every agent at once; waits until each has replied. The time it took, and when
    /// each agent's first speech piece arrived.
    async fn round(
        &mut self,
        rt: &Runtime,
        ids: &[String],
        question: &str,
    ) -> (Duration, HashMap<String, Duration>) {
        let mut sub = rt.subscribe(Filter::all());
        let started = Instant::now();
        for id in ids {
            rt.send_message(id, question).unwrap();
        }
        let mut first_piece = HashMap::new();
        let mut replied = 0;
        while replied < ids.len() {
            match tokio::time::timeout(Duration::from_secs(600), sub.recv()).await {
                Ok(Some(Received::Message(env))) => match &env.message {
                    BusMessage::AgentSpeechDelta { agent_id, .. } => {
                        first_piece
                            .entry(agent_id.clone())
                            .or_insert_with(|| started.elapsed());
                    }
                    BusMessage::AgentReplied {
                        agent_id, error, ..
                    } if ids.contains(agent_id) => {
                        if let Some(error) = error {
                            panic!("{agent_id} could not decide: {error:?}");
                        }
                        replied += 1;
                    }
                    _ => {}
                },
                Ok(Some(Received::Lagged { .. })) => {}
                other => panic!("no answer within 10 minutes: {other:?}"),
            }
        }
        self.decisions += ids.len();
        (started.elapsed(), first_piece)
    }

    /// Decisions the agents made since they started (each agent's own count, asked or not).
    fn decisions_made(rt: &Runtime, ids: &[String]) -> usize {
        ids.iter()
            .map(|id| {
                rt.recent_decisions(id)
                    .unwrap()
                    .last()
                    .map_or(0, |decision| decision.number as usize)
            })
            .sum()
    }

    /// Counts the agents' calls: all, and those whose answer broke the contract.
    fn count_calls(&mut self, rt: &Runtime, ids: &[String]) {
        for id in ids {
            let trace = rt.agent_trace(id, 10_000).unwrap();
            self.calls += trace.len();
            self.invalid_calls += trace
                .iter()
                .filter(|row| row.call.outcome == CallOutcome::InvalidReply)
                .count();
            self.repaired_decisions += trace.iter().filter(|row| row.call.repairs > 0).count();
        }
    }

    /// With prompts traced: prints each repaired answer not printed yet (in `shown`), with the
    /// end of the prompt that asked for its repair (the rule it broke).
    fn show_repairs(rt: &Runtime, ids: &[String], shown: &mut std::collections::HashSet<i64>) {
        for id in ids {
            let mut rows = rt.agent_trace(id, 10_000).unwrap();
            rows.sort_by_key(|row| row.id);
            for pair in rows.windows(2) {
                let (broken, repair) = (&pair[0], &pair[1]);
                if repair.call.repairs == 0 || !shown.insert(repair.id) {
                    continue;
                }
                let answer = broken.call.reply.as_deref().unwrap_or("?");
                let prompt = repair.call.prompt.as_deref().unwrap_or("?");
                let tail: String = {
                    let chars: Vec<char> = prompt.chars().collect();
                    chars[chars.len().saturating_sub(800)..].iter().collect()
                };
                println!("repaired answer of {id}: {answer}\n  asked to repair with: …{tail}\n");
            }
        }
    }

    async fn crowd(&mut self) {
        println!("\n### crowd: decisions per second, one model\n");
        println!(
            "| agents | decoding | round 1 (whole prompts) | round 2 (prompts cached) | both rounds |"
        );
        println!("|---|---|---|---|---|");
        let crowds: Vec<usize> = std::env::var("AGENTS_BENCH_CROWDS")
            .ok()
            .map(|list| {
                list.split(',')
                    .filter_map(|n| n.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_else(|| vec![1, 8, 32]);
        for n in crowds {
            for (mode, sequences) in [("together", n as u32), ("one at a time", 1)] {
                if n == 1 && sequences == 1 && mode == "one at a time" {
                    continue;
                }
                let dir = tempfile::tempdir().unwrap();
                let rt =
                    Runtime::start_on(tokio::runtime::Handle::current(), options(&dir)).unwrap();
                let ids = self.spawn(&rt, n, sequences, false);
                let (first, _) = self.round(&rt, &ids, QUESTIONS[0]).await;
                let (second, _) = self.round(&rt, &ids, QUESTIONS[1]).await;
                self.count_calls(&rt, &ids);
                let rate = |t: Duration| n as f64 / t.as_secs_f64();
                println!(
                    "| {n} | {mode} | {:.2}/s ({:.1} s) | {:.2}/s ({:.1} s) | {:.2}/s |",
                    rate(first),
                    first.as_secs_f64(),
                    rate(second),
                    second.as_secs_f64(),
                    2.0 * n as f64 / (first + second).as_secs_f64()
                );
                rt.shutdown(Duration::from_secs(10));
            }
        }
    }

    async fn cache(&mut self) {
        println!("\n### cache: time to the first answer token, prompts cached and shared\n");
        // Real prompts of two agents: the first one's first and second decisions, the other
        // one's first decision.
        let dir = tempfile::tempdir().unwrap();
        let rt = Runtime::start_on(tokio::runtime::Handle::current(), options(&dir)).unwrap();
        let ids = self.spawn(&rt, 2, 2, true);
        self.round(&rt, &ids, QUESTIONS[2]).await;
        self.round(&rt, &ids[..1], QUESTIONS[3]).await;
        let prompts_of = |id: &str| {
            let mut trace = rt.agent_trace(id, 100).unwrap();
            trace.sort_by_key(|row| row.id);
            let mut prompts: Vec<String> = trace
                .iter()
                .filter(|row| row.call.repairs == 0)
                .filter_map(|row| row.call.prompt.clone())
                .collect();
            prompts.dedup();
            prompts
        };
        let (mine, theirs) = (prompts_of(&ids[0]), prompts_of(&ids[1]));
        self.count_calls(&rt, &ids);
        rt.shutdown(Duration::from_secs(10));
        assert!(mine.len() >= 2 && !theirs.is_empty(), "decisions traced");
        let (first, second, other) = (&mine[0], &mine[1], &theirs[0]);

        let settings = ModelSettings {
            context_size: CONTEXT,
            sequences: 2,
            threads: self.threads,
            ..ModelSettings::new(&self.model)
        };
        // A model of its own for each prompt read afresh.
        let load = || Models::default().load(&settings, false).unwrap();
        let ask = |model: &agents_local::Model, key: &str, prompt: &str| {
            let mut events = model.run(Job {
                key: key.to_string(),
                party: String::new(),
                messages: vec![ChatMessage::new("user", prompt)],
                schema: None,
                sampling: Sampling {
                    temperature: 0.0,
                    top_p: 1.0,
                    seed: 1,
                },
                max_tokens: 1,
                timeout: None,
            });
            loop {
                match events.blocking_recv() {
                    Some(Event::Done(outcome)) => break outcome,
                    Some(Event::Text(_)) => {}
                    other => panic!("{other:?}"),
                }
            }
        };
        println!("| prompt | tokens | of them cached | of them shared | time to first token |");
        println!("|---|---|---|---|---|");
        let row = |name: &str, model: &agents_local::Model, key: &str, prompt: &str| {
            let outcome = tokio::task::block_in_place(|| ask(model, key, prompt));
            println!(
                "| {name} | {} | {} | {} | {:.0} ms |",
                outcome.prompt_tokens,
                outcome.cached_tokens,
                outcome.shared_tokens,
                outcome.first_token.as_secs_f64() * 1000.0
            );
            outcome.first_token
        };
        let model = load();
        let cold_first = row("an agent's first decision, read afresh", &model, "a", first);
        let cached = row("its second decision, the first cached", &model, "a", second);
        let shared = row(
            "another agent's first decision, the first agent's prompt cached",
            &model,
            "b",
            other,
        );
        drop(model);
        let cold_second = row("its second decision, read afresh", &load(), "x", second);
        let cold_other = row(
            "another agent's first decision, read afresh",
            &load(),
            "x",
            other,
        );
        println!(
            "\ncache: second decision {:.1}x faster to its first token than the first ({:.1}x than the same prompt read afresh)",
            cold_first.as_secs_f64() / cached.as_secs_f64(),
            cold_second.as_secs_f64() / cached.as_secs_f64()
        );
        println!(
            "cache: a new agent's first decision, the shared prefix copied: {:.0} ms, {:.1}x faster than read afresh",
            shared.as_secs_f64() * 1000.0,
            cold_other.as_secs_f64() / shared.as_secs_f64()
        );
    }

    async fn memory(&mut self) {
        println!("\n### memory: resident memory, one model, 32 sequences\n");
        let before = rss();
        let dir = tempfile::tempdir().unwrap();
        let rt = Runtime::start_on(tokio::runtime::Handle::current(), options(&dir)).unwrap();
        let one = self.spawn(&rt, 1, 32, false);
        self.round(&rt, &one, QUESTIONS[4]).await;
        let with_one = rss();
        let more = self.spawn(&rt, 31, 32, false);
        let all: Vec<String> = one.iter().chain(&more).cloned().collect();
        self.round(&rt, &all, QUESTIONS[5]).await;
        let with_all = rss();
        self.count_calls(&rt, &all);
        let file = std::fs::metadata(&self.model).unwrap().len();
        println!("| | resident memory |");
        println!("|---|---|");
        println!("| before the model | {} MB |", before >> 20);
        println!("| 1 agent decided | {} MB |", with_one >> 20);
        println!("| 32 agents decided | {} MB |", with_all >> 20);
        println!("| the model file | {} MB |", file >> 20);
        println!(
            "\nmemory: 31 more agents added {} MB (the model file is {} MB)",
            with_all.saturating_sub(with_one) >> 20,
            file >> 20
        );
        rt.shutdown(Duration::from_secs(10));
    }

    async fn valid(&mut self) {
        println!("\n### valid: contract-valid answers without repair\n");
        let dir = tempfile::tempdir().unwrap();
        let rt = Runtime::start_on(tokio::runtime::Handle::current(), options(&dir)).unwrap();
        let ids = self.spawn(&rt, 8, 8, true);
        let wanted = std::env::var("AGENTS_BENCH_DECISIONS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(VALID_DECISIONS);
        let started = Instant::now();
        let mut shown = std::collections::HashSet::new();
        let mut round = 0;
        let before = self.decisions;
        while self.decisions < wanted {
            self.round(&rt, &ids, QUESTIONS[round % QUESTIONS.len()])
                .await;
            round += 1;
            // Agents standing together also hear each other's answers and decide on them: the
            // decisions made are the agents' own counts, not the questions asked.
            self.decisions = before + Self::decisions_made(&rt, &ids);
            Self::show_repairs(&rt, &ids, &mut shown);
            println!(
                "round {round}: {} decisions so far, {:.0} s",
                self.decisions,
                started.elapsed().as_secs_f64()
            );
        }
        self.count_calls(&rt, &ids);
        rt.shutdown(Duration::from_secs(10));
    }
}

/// Resident memory of this process, in bytes (Linux).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .unwrap_or(0)
        * 1024
}

fn main() {
    let Ok(model) = std::env::var("AGENTS_TEST_MODEL") else {
        println!(
            "local: skipped (AGENTS_TEST_MODEL is not set; cargo xtask bench --only-local sets it)"
        );
        return;
    };
    let threads = std::env::var("AGENTS_BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(4, |n| n.get().min(8)))
        as u32;
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);
    let mut bench = Bench {
        model,
        threads,
        decisions: 0,
        calls: 0,
        invalid_calls: 0,
        repaired_decisions: 0,
    };
    println!(
        "local: {} threads, context {CONTEXT} per agent, at most {MAX_TOKENS} tokens per answer",
        threads
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if wanted("crowd") {
            bench.crowd().await;
        }
        if wanted("cache") {
            bench.cache().await;
        }
        if wanted("memory") {
            bench.memory().await;
        }
        if wanted("valid") {
            bench.valid().await;
        }
    });
    // A call made after a repair was asked is a repair: one earlier answer of its decision broke
    // the contract (the runtime's check). So the answers that broke it are the repairs, and the
    // answers the brain itself could not read.
    println!(
        "\nlocal summary: {} decisions, {} model calls, {} of them repairs (an earlier answer of \
         their decision broke the contract), {} answers the brain could not read: {:.2}% of the \
         answers valid without repair",
        bench.decisions,
        bench.calls,
        bench.repaired_decisions,
        bench.invalid_calls,
        100.0 * (bench.calls - bench.repaired_decisions - bench.invalid_calls) as f64
            / bench.calls.max(1) as f64
    );
}
