//! The decision loop end to end: a brain registered by name, answers checked before anything
//! runs, repairs with the contract's failure feedback, read-only results going back to the brain,
//! per-agent tool sets. Real SQLite, paused clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use agents_core::brain::{
    Brain, BrainContext, BrainError, BrainReply, BrainSettings, BrainSpec, DecideFuture, Provider,
    ToolCall,
};
use agents_core::bus::{BusMessage, Filter, Received, Subscription};
use agents_core::memory::{BrainCall, CallOutcome};
use agents_core::runtime::{AgentConfig, Position, Runtime, RuntimeOptions};
use agents_core::tools::{ToolOutput, ToolRegistry, ToolSpec};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::time::Instant;

/// A brain that answers from a queue and records every context it was given. With nothing left
/// it says so.
#[derive(Clone, Default)]
struct Recorder {
    answers: Arc<Mutex<VecDeque<BrainReply>>>,
    seen: Arc<Mutex<Vec<BrainContext>>>,
}

impl Brain for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        self.seen.lock().push(context.clone());
        let answer = self
            .answers
            .lock()
            .pop_front()
            .unwrap_or_else(|| reply("The recorder has nothing left to say.", vec![]));
        Box::pin(async move { Ok(answer) })
    }

    fn take_call_report(&mut self) -> Option<BrainCall> {
        let n = self.seen.lock().len() as u64;
        Some(BrainCall {
            agent_id: String::new(),
            provider: "recorder".into(),
            model: Some("tape-1".into()),
            started_at: "2026-11-25T00:00:00Z".into(),
            latency_ms: 5,
            input_tokens: 100 * n,
            output_tokens: 10,
            cached_tokens: 80,
            outcome: CallOutcome::Ok,
            repairs: 0,
            error_code: None,
            prompt: None,
            reply: None,
        })
    }
}

fn runtime(dir: &tempfile::TempDir, recorder: &Recorder) -> Runtime {
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            speaking_seconds: 1.0,
            idle_think_seconds: 1000.0,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let shared = recorder.clone();
    rt.register_brain("recorder", move |_: &BrainSettings| {
        Ok(Box::new(shared.clone()) as Box<dyn Brain>)
    })
    .unwrap();
    rt
}

fn call(id: &str, tool: &str, args: Value) -> ToolCall {
    ToolCall::new(id, tool, args)
}

fn reply(text: &str, calls: Vec<ToolCall>) -> BrainReply {
    BrainReply {
        assistant_text: text.into(),
        dialog_type: "chat".into(),
        tool_calls: calls,
    }
}

fn agent(tools: Option<Vec<&str>>) -> AgentConfig {
    AgentConfig {
        name: "Tess".into(),
        role: "tester".into(),
        brain: Some("recorder".into()),
        initial_position: Some(Position::new(10.0, 10.0)),
        tools: tools.map(|t| t.into_iter().map(String::from).collect()),
        ..AgentConfig::default()
    }
}

/// Spawns an agent and gives it something to decide about at once (agents here never decide
/// on their own: their idle time is 1000 s).
fn spawn(rt: &Runtime, config: AgentConfig) -> String {
    let id = rt.spawn(config).unwrap();
    rt.send_message(&id, "Your turn.").unwrap();
    id
}

async fn collect(sub: &mut Subscription, within: Duration) -> Vec<BusMessage> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while let Ok(Some(r)) = tokio::time::timeout_at(deadline, sub.recv()).await {
        if let Received::Message(env) = r {
            out.push(env.message.clone());
        }
    }
    out
}

fn errors(events: &[BusMessage]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentError { code, message, .. } => {
                Some((code.as_str().to_string(), message.clone()))
            }
            _ => None,
        })
        .collect()
}

fn moves(events: &[BusMessage]) -> Vec<Position> {
    events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentMoved { to, .. } => Some(*to),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn an_invalid_answer_is_repaired_with_the_failure_feedback() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    recorder.answers.lock().extend([
        reply(
            "",
            vec![
                call("c1", "fly", json!({})),
                call("c2", "move", json!({"x": "far", "y": 1})),
            ],
        ),
        reply("", vec![call("c3", "move", json!({"x": 12, "y": 14}))]),
    ]);
    let rt = runtime(&dir, &recorder);
    let mut sub = rt.subscribe(Filter::all());
    spawn(&rt, agent(None));
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(errors(&events), [], "a repaired decision reports nothing");
    assert_eq!(moves(&events), [Position::new(12.0, 14.0)]);
    let seen = recorder.seen.lock();
    assert!(seen[0].steps.is_empty());
    let feedback = &seen[1].steps;
    assert_eq!(feedback.len(), 1);
    let failed = serde_json::to_value(&feedback[0].failed_calls).unwrap();
    assert_eq!(failed[0]["id"], "c1");
    assert_eq!(failed[0]["status"], "rejected");
    assert_eq!(failed[0]["reason"], "tool_not_allowed");
    assert_eq!(failed[1]["id"], "c2");
    assert_eq!(failed[1]["status"], "error");
    assert_eq!(failed[1]["reason"], "invalid_args");
    assert!(failed[1]["message"].as_str().unwrap().contains('x'));
    // The brain sees what it answered.
    assert_eq!(feedback[0].reply.tool_calls[0].tool, "fly");
    drop(seen);
    // Both model calls are traced, the second as a repair.
    let id = rt.agent_ids()[0].clone();
    let trace = rt.agent_trace(&id, 10).unwrap();
    let got: Vec<_> = trace
        .iter()
        .map(|r| {
            (
                r.call.agent_id.as_str(),
                r.call.repairs,
                r.call.input_tokens,
            )
        })
        .collect();
    assert_eq!(got, [(id.as_str(), 0, 100), (id.as_str(), 1, 200)]);
    assert_eq!(trace[1].call.model.as_deref(), Some("tape-1"));
    assert!(trace[0].id < trace[1].id);
    assert_eq!(rt.agent_trace(&id, 1).unwrap(), trace[1..]);
    assert_eq!(
        rt.agent_trace("agent_404", 1).unwrap_err().code().as_str(),
        "unknown_agent"
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_still_invalid_after_the_repairs_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    recorder.answers.lock().extend([
        // Valid calls next to an invalid one: nothing of the answer may run.
        reply(
            "",
            vec![
                call("c1", "move", json!({"x": 20, "y": 20})),
                call("c2", "fly", json!({})),
            ],
        ),
        reply("   ", vec![]),
        reply("", vec![call("c3", "speak", json!({"content": ""}))]),
    ]);
    let rt = runtime(&dir, &recorder);
    let mut sub = rt.subscribe(Filter::all());
    let id = spawn(&rt, agent(None));
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    let errs = errors(&events);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, "brain_invalid_reply");
    assert!(errs[0].1.contains("after 2 repairs"), "{}", errs[0].1);
    assert!(
        errs[0].1.contains("c3 (speak): invalid_args"),
        "{}",
        errs[0].1
    );
    assert_eq!(moves(&events), [], "nothing of the decision was applied");
    assert_eq!(recorder.seen.lock().len(), 3, "one answer and two repairs");
    assert_eq!(recorder.answers.lock().len(), 0);
    // The anti-silent rule was the second answer's feedback.
    let seen = recorder.seen.lock();
    assert!(
        seen[2].steps[1]
            .problem
            .as_deref()
            .unwrap()
            .contains("no tool calls and no text")
    );
    drop(seen);
    assert_eq!(rt.state(&id).unwrap().state.to_string(), "idle");
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_calls_is_refused_whole_and_reported_briefly() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    // 500 moves (over the limit of 64 per answer), then 60 unknown tools with huge names,
    // then the same again: nothing of it may run, and the error stays short.
    let flood = |n: usize| {
        (0..n)
            .map(|i| call(&format!("c{i}"), "move", json!({"x": 1, "y": 1})))
            .collect::<Vec<_>>()
    };
    let unknown: Vec<ToolCall> = (0..60)
        .map(|i| call(&format!("u{i}"), &"z".repeat(100_000), json!({})))
        .collect();
    recorder.answers.lock().extend([
        reply("", flood(500)),
        reply("", unknown.clone()),
        reply("", unknown),
    ]);
    let rt = runtime(&dir, &recorder);
    let mut sub = rt.subscribe(Filter::all());
    let id = spawn(&rt, agent(None));
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(moves(&events), [], "nothing ran");
    let errs = errors(&events);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, "brain_invalid_reply");
    assert!(errs[0].1.len() < 4_000, "{} bytes", errs[0].1.len());
    assert!(errs[0].1.ends_with("… and 50 more"), "{}", errs[0].1);
    // The first repair was asked for the whole answer, with a copy of at most 64 calls.
    let seen = recorder.seen.lock();
    let first = &seen[1].steps[0];
    assert_eq!(
        first.problem.as_deref(),
        Some("the answer has 500 tool calls; the limit is 64: call fewer tools at once")
    );
    assert_eq!(first.reply.tool_calls.len(), 64);
    // The second: each refusal names the tool cut to 64 characters.
    let second = &seen[2].steps[1];
    assert_eq!(second.failed_calls.len(), 60);
    assert!(
        second
            .failed_calls
            .iter()
            .all(|f| f.tool.chars().count() == 64)
    );
    drop(seen);
    assert_eq!(rt.state(&id).unwrap().state.to_string(), "idle");
}

#[tokio::test(start_paused = true)]
async fn read_only_results_go_back_to_the_brain() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    recorder.answers.lock().extend([
        reply(
            "",
            vec![call("c1", "legal_chess_moves", json!({"fen": start}))],
        ),
        reply("I will open with e4.", vec![]),
    ]);
    let rt = runtime(&dir, &recorder);
    let mut sub = rt.subscribe(Filter::all());
    let id = spawn(&rt, agent(Some(vec!["world", "games"])));
    assert_eq!(rt.agent_tool_sets(&id).unwrap(), ["world", "games"]);
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(errors(&events), []);
    let spoke: Vec<_> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentSpoke {
                agent_id, content, ..
            } if *agent_id == id => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(spoke, ["I will open with e4."]);
    let seen = recorder.seen.lock();
    let tools: Vec<_> = seen[0].tools.iter().map(|t| t["name"].clone()).collect();
    assert!(tools.contains(&json!("move")) && tools.contains(&json!("legal_chess_moves")));
    let result = &seen[1].steps[0].results[0];
    assert_eq!(result.id, "c1");
    assert!(!result.is_error);
    assert_eq!(result.result["movesUci"].as_array().map(Vec::len), Some(20));
}

#[tokio::test(start_paused = true)]
async fn read_only_rounds_stop_at_max_steps() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let rt = runtime(&dir, &recorder);
    let mut sub = rt.subscribe(Filter::all());
    let mut peek = ToolRegistry::new();
    peek.register(
        ToolSpec::new("peek", "Looks around.", json!({"type": "object"})).read_only(),
        |_| ToolOutput::ok(json!({"seen": "nothing"})),
    )
    .unwrap();
    rt.register_tool_set("peek", peek).unwrap();
    // Four looks, the fourth past the last step's offer, then a line.
    recorder.answers.lock().extend((0..4).map(|i| {
        reply(
            "Still looking.",
            vec![call(&format!("c{i}"), "peek", json!({}))],
        )
    }));
    recorder
        .answers
        .lock()
        .push_back(reply("Nothing here, moving on.", vec![]));
    let id = spawn(&rt, agent(Some(vec!["world", "peek"])));
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(errors(&events), []);
    let seen = recorder.seen.lock();
    // Three answers continued with results; the fourth (max_steps) was offered no look-up.
    assert!(seen[2].tools.iter().any(|t| t["name"] == "peek"));
    assert!(seen[3].tools.iter().all(|t| t["name"] != "peek"));
    assert!(seen[3].read_only_tools.is_empty());
    assert_eq!(seen[3].steps.len(), 3);
    // It looked anyway: refused for repair, and the repair acted.
    let refused = &seen[4].steps[3].failed_calls;
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].reason.as_str(), "tool_not_allowed");
    assert!(
        refused[0].message.contains("no more look-ups"),
        "{}",
        refused[0].message
    );
    drop(seen);
    let spoke: Vec<_> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentSpoke {
                agent_id, content, ..
            } if *agent_id == id => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(spoke, ["Nothing here, moving on."]);
}

#[tokio::test(start_paused = true)]
async fn tool_sets_are_scoped_per_agent() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let rt = runtime(&dir, &recorder);
    let mut gm = ToolRegistry::new();
    gm.register(
        ToolSpec::new(
            "move",
            "Moves an actor to an area.",
            json!({"type": "object", "properties": {"to_area_id": {"type": "string"}},
                   "required": ["to_area_id"]}),
        ),
        |args| ToolOutput::ok(json!({"to_area_id": args["to_area_id"]})),
    )
    .unwrap();
    rt.register_tool_set("campaign", gm).unwrap();
    assert_eq!(rt.tool_set_names(), ["campaign", "games", "world"]);
    // The world's `move` and the campaign's `move` cannot meet in one agent...
    let err = rt
        .spawn(agent(Some(vec!["world", "campaign"])))
        .unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_config");
    assert!(
        err.to_string()
            .contains("clashes with 'move' of set 'world'"),
        "{err}"
    );
    // ...but each agent has its own.
    recorder.answers.lock().extend([
        reply(
            "",
            vec![call("c1", "move", json!({"to_area_id": "area_002"}))],
        ),
        reply("", vec![call("c1", "move", json!({"x": 1, "y": 2}))]),
    ]);
    let mut sub = rt.subscribe(Filter::all());
    let master = spawn(&rt, agent(Some(vec!["campaign"])));
    let villager = spawn(&rt, agent(None));
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(errors(&events), []);
    assert_eq!(moves(&events), [Position::new(1.0, 2.0)]);
    assert_eq!(rt.agent_tool_sets(&master).unwrap(), ["campaign"]);
    assert_eq!(rt.agent_tool_sets(&villager).unwrap(), ["world"]);
    // Attaching at run time, and the errors.
    rt.attach_tools(&villager, "games").unwrap();
    assert_eq!(rt.agent_tool_sets(&villager).unwrap(), ["world", "games"]);
    rt.detach_tools(&villager, "games").unwrap();
    assert_eq!(rt.agent_tool_sets(&villager).unwrap(), ["world"]);
    assert!(rt.attach_tools(&villager, "campaign").is_err());
    assert_eq!(
        rt.attach_tools(&villager, "nope").unwrap_err().to_string(),
        "unknown tool set 'nope' (available: campaign, games, world)"
    );
    assert_eq!(
        rt.attach_tools("agent_404", "games")
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_agent"
    );
    let unknown = rt.spawn(agent(Some(vec!["nope"]))).unwrap_err();
    assert_eq!(unknown.code().as_str(), "invalid_config");
}

#[tokio::test(start_paused = true)]
async fn brains_are_registered_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let rt = runtime(&dir, &recorder);
    let builtins = agents_core::brain::BrainRegistry::with_builtins();
    let mut names = builtins.names();
    names.push("recorder");
    names.sort_unstable();
    assert_eq!(rt.brain_names(), names);
    let again = rt
        .register_brain("recorder", |_: &BrainSettings| {
            Err(BrainError::Backend("unused".into()))
        })
        .unwrap_err();
    assert_eq!(again.code().as_str(), "invalid_config");
    let unknown = rt
        .spawn(AgentConfig {
            brain: Some("gpt-9".into()),
            ..agent(None)
        })
        .unwrap_err();
    assert_eq!(unknown.code().as_str(), "unknown_brain");
    assert_eq!(
        unknown.to_string(),
        format!("unknown brain 'gpt-9' (available: {})", names.join(", "))
    );
}

#[tokio::test(start_paused = true)]
async fn brain_objects_and_profiles_are_resolved_at_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let mut options = RuntimeOptions {
        database: dir.path().join("agents.db"),
        idle_think_seconds: 1000.0,
        ..RuntimeOptions::default()
    };
    options.brain_profiles.insert(
        "fast".into(),
        serde_json::from_value(json!({"provider": "recorder", "model": "m1"})).unwrap(),
    );
    let rt = Runtime::start_on(Handle::current(), options).unwrap();
    rt.register_provider("recorder", RecorderProvider(recorder.clone()))
        .unwrap();
    let config = |brain: Value| {
        AgentConfig::from_json(&json!({"name": "B", "brain": brain})).map_err(|e| e.to_string())
    };
    // A profile by name.
    let id = rt.spawn(config(json!("fast")).unwrap()).unwrap();
    assert_eq!(rt.state(&id).unwrap().brain, "fast");
    // A brain object.
    let id = rt
        .spawn(config(json!({"provider": "recorder", "model": "m2"})).unwrap())
        .unwrap();
    assert_eq!(rt.state(&id).unwrap().brain, "recorder:m2");
    rt.flush().unwrap();
    let stored = rt.stored_agents().unwrap();
    assert_eq!(
        stored[1].config["brain"],
        json!({"provider": "recorder", "model": "m2"})
    );
    // Misconfigured brains are refused at spawn, and use no id.
    let err = rt
        .spawn(config(json!({"provider": "nope"})).unwrap())
        .unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_config");
    let builtins = agents_core::brain::BrainRegistry::with_builtins();
    let mut names = builtins.names();
    names.push("recorder");
    names.sort_unstable();
    assert_eq!(
        err.to_string(),
        format!(
            "brain.provider: unknown provider 'nope' (available: {})",
            names.join(", ")
        )
    );
    let err = rt
        .spawn(config(json!({"provider": "recorder", "temperature": 9})).unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("brain.temperature"), "{err}");
    let err = rt.spawn(config(json!("slow")).unwrap()).unwrap_err();
    assert_eq!(err.code().as_str(), "unknown_brain");
    names.push("fast");
    names.sort_unstable();
    assert_eq!(
        err.to_string(),
        format!("unknown brain 'slow' (available: {})", names.join(", "))
    );
    // The provider reads its own options: a field it does not know is named.
    let err = rt
        .spawn(config(json!({"provider": "recorder", "api_kee": "sk-123"})).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "brain.api_kee: unknown field `api_kee`, expected `model` or `temperature`"
        ),
        "{err}"
    );
    let err = rt
        .spawn(config(json!({"provider": "recorder", "model": 7})).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("brain.model: invalid type: integer `7`"),
        "{err}"
    );
    let next = rt.spawn(config(json!("scripted")).unwrap()).unwrap();
    assert_eq!(next, "agent_003", "the refused spawns used no id");
}

/// The options of the `recorder` provider.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Read by serde only: the provider checks them.
struct RecorderOptions {
    model: Option<String>,
    temperature: Option<f64>,
}

/// A provider whose brains are one shared [`Recorder`].
struct RecorderProvider(Recorder);

impl Provider for RecorderProvider {
    type Options = RecorderOptions;

    fn validate(&self, _spec: &BrainSpec, options: &RecorderOptions) -> Result<(), String> {
        agents_core::brain::provider::check_temperature(options.temperature)
    }

    fn build(
        &self,
        _spec: &BrainSpec,
        _options: RecorderOptions,
        _settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        Ok(Box::new(self.0.clone()))
    }
}

/// A brain that always fails with the error it is given, counting its calls.
#[derive(Clone)]
struct Failing {
    error: BrainError,
    calls: Arc<Mutex<Vec<Instant>>>,
}

impl Brain for Failing {
    fn name(&self) -> &str {
        "failing"
    }

    fn decide<'a>(&'a mut self, _context: &'a BrainContext) -> DecideFuture<'a> {
        self.calls.lock().push(Instant::now());
        let error = self.error.clone();
        Box::pin(async move { Err(error) })
    }
}

/// A runtime whose agents decide again at once (`idle_think_seconds: 0`) with a brain that
/// always fails with `error`.
fn failing_runtime(dir: &tempfile::TempDir, error: BrainError) -> (Runtime, Failing) {
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 0.0,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let brain = Failing {
        error,
        calls: Arc::default(),
    };
    let shared = brain.clone();
    rt.register_brain("failing", move |_: &BrainSettings| {
        Ok(Box::new(shared.clone()) as Box<dyn Brain>)
    })
    .unwrap();
    (rt, brain)
}

#[tokio::test(start_paused = true)]
async fn a_failing_brain_is_asked_again_after_a_growing_wait_not_in_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, brain) = failing_runtime(&dir, BrainError::Backend("connection refused".into()));
    let mut sub = rt.subscribe(Filter::all());
    let start = Instant::now();
    let id = rt
        .spawn(AgentConfig {
            brain: Some("failing".into()),
            ..agent(None)
        })
        .unwrap();
    let events = collect(&mut sub, Duration::from_secs(20)).await;
    // Asked at 0, 0.5, 1.5, 3.5, 7.5 and 15.5 s: each failure doubles the wait.
    let at: Vec<f64> = brain
        .calls
        .lock()
        .iter()
        .map(|t| (t.duration_since(start).as_secs_f64() * 10.0).round() / 10.0)
        .collect();
    assert_eq!(at, [0.0, 0.5, 1.5, 3.5, 7.5, 15.5]);
    let errors = errors(&events);
    assert_eq!(errors.len(), 6, "every failure is reported: {errors:?}");
    assert_eq!(errors[0].0, "brain_error");
    assert!(errors[0].1.contains("connection refused"), "{errors:?}");
    // A message still wakes it at once, and the reply to it says why there is no answer.
    let before = brain.calls.lock().len();
    let line = rt.send_message(&id, "Are you there?").unwrap();
    let events = collect(&mut sub, Duration::from_millis(100)).await;
    assert_eq!(brain.calls.lock().len(), before + 1);
    let reply = events.iter().find_map(|m| match m {
        BusMessage::AgentReplied {
            in_reply_to,
            text,
            error: Some(error),
            ..
        } if in_reply_to == &[line] && text.is_empty() => Some(error.clone()),
        _ => None,
    });
    let error = reply.unwrap_or_else(|| panic!("no failed reply to the line: {events:?}"));
    assert_eq!(error.code.as_str(), "brain_error");
    assert!(error.message.contains("connection refused"), "{error:?}");
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_is_reported_once_not_at_every_try() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, brain) = failing_runtime(
        &dir,
        BrainError::BudgetExhausted("the agent's token budget is spent".into()),
    );
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(AgentConfig {
            brain: Some("failing".into()),
            ..agent(None)
        })
        .unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = collect(&mut sub, Duration::from_secs(20)).await;
    assert!(brain.calls.lock().len() >= 5);
    let errors = errors(&events);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "budget_exhausted");
    rt.shutdown(Duration::from_secs(1));
}

/// A brain with a bug: it panics while deciding.
struct Panicking;

impl Brain for Panicking {
    fn name(&self) -> &str {
        "panicking"
    }

    fn decide<'a>(&'a mut self, _context: &'a BrainContext) -> DecideFuture<'a> {
        Box::pin(async move { panic!("index out of bounds in the brain's secret table") })
    }
}

#[tokio::test(start_paused = true)]
async fn a_panicking_brain_fails_the_decision_and_the_agent_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 1000.0,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    rt.register_brain("panicking", |_: &BrainSettings| {
        Ok(Box::new(Panicking) as Box<dyn Brain>)
    })
    .unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(AgentConfig {
            brain: Some("panicking".into()),
            ..agent(None)
        })
        .unwrap();
    for line in ["Hello?", "Still there?"] {
        rt.send_message(&id, line).unwrap();
        let events = collect(&mut sub, Duration::from_secs(5)).await;
        let errors = errors(&events);
        assert_eq!(errors.len(), 1, "{events:?}");
        assert_eq!(errors[0].0, "brain_error");
        assert!(errors[0].1.contains("the brain panicked"), "{errors:?}");
        assert!(!errors[0].1.contains("secret table"), "{errors:?}");
        assert_eq!(
            rt.state(&id).map(|s| s.state.to_string()).as_deref(),
            Some("idle"),
            "the agent is back to idle, not stuck thinking"
        );
    }
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn observations_reach_the_next_decision_once_and_do_not_wake_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let rt = runtime(&dir, &recorder);
    let id = rt.spawn(agent(None)).unwrap();
    rt.observe(&id, "The cellar door is locked.").unwrap();
    rt.observe(&id, "  Smoke rises from the bakery.  ").unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        recorder.seen.lock().is_empty(),
        "an observation is not a message"
    );
    rt.send_message(&id, "What is going on?").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    rt.send_message(&id, "Anything else?").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let seen = recorder.seen.lock().clone();
    assert_eq!(seen.len(), 2, "{} decisions", seen.len());
    assert_eq!(
        seen[0].observations,
        ["The cellar door is locked.", "Smoke rises from the bakery."]
    );
    assert!(seen[1].observations.is_empty(), "shown once");
    // Refused: empty, too long, an unknown agent.
    assert_eq!(
        rt.observe(&id, " ").unwrap_err().code().as_str(),
        "invalid_message"
    );
    // Longer than a memory holds: refused whole, naming the limit (it would not be kept).
    let over = rt
        .observe(
            &id,
            &"x".repeat(agents_core::limits::MAX_OBSERVATION_CHARS + 1),
        )
        .unwrap_err();
    assert_eq!(over.code().as_str(), "invalid_message");
    assert!(
        over.to_string()
            .contains("observation is 2001 characters long; the limit is 2000"),
        "{over}"
    );
    assert_eq!(
        rt.observe("agent_404", "hi").unwrap_err().code().as_str(),
        "unknown_agent"
    );
    // Only the newest 32 wait.
    for i in 0..40 {
        rt.observe(&id, &format!("tick {i}")).unwrap();
    }
    rt.send_message(&id, "And now?").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let last = recorder.seen.lock().last().unwrap().observations.clone();
    assert_eq!(last.len(), 32);
    assert_eq!(last[0], "tick 8");
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_requested_move_is_carried_out_by_the_game_and_its_outcome_reaches_the_brain() {
    use agents_core::moves::{MoveEnd, MoveOutcome, Movement};
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    recorder.answers.lock().extend([
        reply("", vec![call("c1", "move", json!({"x": 30, "y": 10}))]),
        reply("", vec![call("c2", "move", json!({"x": 12, "y": 40}))]),
        reply("", vec![call("c3", "move", json!({"x": 50, "y": 50}))]),
    ]);
    let rt = runtime(&dir, &recorder);
    let mut sub = rt.subscribe(Filter::all());
    let id = spawn(
        &rt,
        AgentConfig {
            movement: Some(Movement::Requested),
            ..agent(None)
        },
    );
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert!(moves(&events).is_empty(), "the runtime moves no one itself");
    let requested: Vec<_> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentMoveRequested {
                move_id, from, to, ..
            } => Some((*move_id, *from, *to)),
            _ => None,
        })
        .collect();
    assert_eq!(
        requested,
        [(1, Position::new(10.0, 10.0), Position::new(30.0, 10.0))]
    );
    assert_eq!(
        rt.state(&id).unwrap().position,
        Position::new(10.0, 10.0),
        "it is where the game says until the game says otherwise"
    );
    // While it walks, a decision is told so.
    rt.send_message(&id, "Where are you going?").unwrap();
    collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(
        recorder.seen.lock()[1]
            .movement
            .as_ref()
            .map(|m| m.describe())
            .as_deref(),
        Some("You are walking to (30, 10).")
    );
    // That decision asked for move 2, which replaced move 1.
    assert_eq!(
        rt.finish_move(&id, 1, MoveOutcome::Arrived)
            .unwrap_err()
            .to_string(),
        format!("move 1 of {id} is not under way: it was replaced by move 2")
    );
    rt.set_position(&id, Position::new(11.0, 25.0)).unwrap();
    rt.finish_move(&id, 2, MoveOutcome::Blocked("the door is locked".into()))
        .unwrap();
    let events = collect(&mut sub, Duration::from_millis(100)).await;
    assert!(
        events.iter().any(|m| matches!(
            m,
            BusMessage::AgentMoveFinished { move_id: 2, outcome: MoveEnd::Blocked, reason: Some(r), to, .. }
                if r == "the door is locked" && *to == Position::new(12.0, 40.0)
        )),
        "{events:?}"
    );
    // Finishing does not make it decide; its next decision is told, once.
    assert_eq!(recorder.seen.lock().len(), 2);
    rt.send_message(&id, "Well?").unwrap();
    collect(&mut sub, Duration::from_secs(3)).await;
    rt.send_message(&id, "And now?").unwrap();
    collect(&mut sub, Duration::from_secs(3)).await;
    let seen = recorder.seen.lock().clone();
    assert_eq!(seen.len(), 4);
    assert_eq!(
        seen[2].movement.as_ref().map(|m| m.describe()).as_deref(),
        Some("You could not get to (12, 40): the door is locked")
    );
    assert_eq!(seen[2].position, Position::new(11.0, 25.0));
    // Decision 3 asked for move 3: under way when decision 4 started.
    assert_eq!(
        seen[3].movement.as_ref().map(|m| m.describe()).as_deref(),
        Some("You are walking to (50, 50).")
    );
    // Bad reports: an unknown move, a blocked move without a reason, an unknown agent.
    assert_eq!(
        rt.finish_move(&id, 9, MoveOutcome::Arrived)
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_move"
    );
    assert_eq!(
        rt.finish_move(&id, 3, MoveOutcome::Blocked("  ".into()))
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_message"
    );
    assert_eq!(
        rt.finish_move("agent_404", 1, MoveOutcome::Arrived)
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_agent"
    );
    rt.finish_move(&id, 3, MoveOutcome::Arrived).unwrap();
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_game_that_carries_out_moves_places_its_agent_anywhere() {
    use agents_core::moves::Movement;
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    let outside = Position::new(-300.0, 5000.0);
    // The runtime's own world refuses a start outside its bounds...
    let refused = rt
        .spawn(AgentConfig {
            initial_position: Some(outside),
            ..agent(None)
        })
        .unwrap_err();
    assert_eq!(refused.code().as_str(), "invalid_config");
    assert!(
        refused.to_string().contains("outside the world bounds"),
        "{refused}"
    );
    // ...a game that owns the world puts its character where it stands.
    let id = rt
        .spawn(AgentConfig {
            initial_position: Some(outside),
            movement: Some(Movement::Requested),
            ..agent(None)
        })
        .unwrap();
    assert_eq!(rt.state(&id).unwrap().position, outside);
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_tool_set_can_be_replaced_and_removed_while_agents_use_it() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let rt = runtime(&dir, &recorder);
    let set = |names: &[&str]| {
        let mut registry = ToolRegistry::new();
        for name in names {
            registry
                .register(
                    ToolSpec::new(*name, "a shop tool", json!({"type": "object"})),
                    |_| ToolOutput::ok(json!({})),
                )
                .unwrap();
        }
        registry
    };
    rt.set_tool_set("shop", set(&["price"])).unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let id = spawn(&rt, agent(Some(vec!["world", "shop"])));
    collect(&mut sub, Duration::from_secs(3)).await;
    let names = |ctx: &BrainContext| -> Vec<String> {
        ctx.tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(names(&recorder.seen.lock()[0]).contains(&"price".to_string()));
    // Replaced: the next decision sees the new tools.
    rt.set_tool_set("shop", set(&["price", "stock"])).unwrap();
    rt.send_message(&id, "Again.").unwrap();
    collect(&mut sub, Duration::from_secs(3)).await;
    assert!(names(&recorder.seen.lock()[1]).contains(&"stock".to_string()));
    // A clash with the agent's world tools changes nothing.
    let err = rt.set_tool_set("shop", set(&["move"])).unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_config");
    assert!(err.to_string().contains("'move' of set 'world'"), "{err}");
    // The built-in sets stay.
    assert!(rt.set_tool_set("world", set(&["fly"])).is_err());
    assert!(rt.remove_tool_set("games").is_err());
    // Removed: detached from the agent.
    assert!(rt.remove_tool_set("shop").unwrap());
    assert_eq!(rt.agent_tool_sets(&id).unwrap(), ["world"]);
    assert!(!rt.remove_tool_set("shop").unwrap());
    rt.send_message(&id, "And now?").unwrap();
    collect(&mut sub, Duration::from_secs(3)).await;
    let last = names(recorder.seen.lock().last().unwrap());
    assert!(!last.contains(&"stock".to_string()), "{last:?}");
    rt.shutdown(Duration::from_secs(1));
}

/// The context's tool called `name`, if it is offered.
fn offered<'a>(context: &'a BrainContext, name: &str) -> Option<&'a Value> {
    context.tools.iter().find(|t| t["name"] == name)
}

#[tokio::test(start_paused = true)]
async fn world_tools_name_only_what_exists_and_ungrounded_calls_are_refused_saying_what_does() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let rt = runtime(&dir, &recorder);
    // A helper that exists (the default offline brain; it has no reason to talk).
    let helper = rt
        .spawn(AgentConfig {
            name: "Bo".into(),
            initial_position: Some(Position::new(12.0, 10.0)),
            ..AgentConfig::default()
        })
        .unwrap();
    let id = rt.spawn(agent(None)).unwrap();
    let task = rt.assign_task(&id, "Bake bread").unwrap();
    recorder.answers.lock().extend([
        // What Gemma 3 270M did: names out of nowhere, a point outside the world.
        reply(
            "",
            vec![
                call("c1", "collaborate", json!({"agent_id": "agent_999"})),
                call(
                    "c2",
                    "complete_task",
                    json!({"task_id": 5555555555555555_i64}),
                ),
                call("c3", "move", json!({"x": 5000, "y": 10})),
            ],
        ),
        // Speaking, then more.
        reply(
            "",
            vec![
                call("c4", "speak", json!({"content": "On it."})),
                call("c5", "speak", json!({"content": "On it!"})),
            ],
        ),
        reply(
            "",
            vec![
                call("c6", "collaborate", json!({"agent_id": helper})),
                call("c7", "complete_task", json!({"task_id": task.id})),
                call(
                    "c8",
                    "speak",
                    json!({"content": "Done.", "recipients": ["player_0"]}),
                ),
            ],
        ),
    ]);
    let mut sub = rt.subscribe(Filter::all());
    rt.send_message(&id, "Your turn.").unwrap();
    let events = collect(&mut sub, Duration::from_secs(3)).await;

    // The context carried the grounded schemas.
    let seen = recorder.seen.lock().clone();
    assert!(seen.len() >= 3, "{} decisions seen", seen.len());
    let first = &seen[0];
    let collaborate = offered(first, "collaborate").unwrap();
    assert_eq!(
        collaborate["parameters"]["properties"]["agent_id"]["enum"],
        json!([helper])
    );
    let complete = offered(first, "complete_task").unwrap();
    assert_eq!(
        complete["parameters"]["properties"]["task_id"]["enum"],
        json!([task.id])
    );
    let speak = offered(first, "speak").unwrap();
    assert_eq!(
        speak["parameters"]["properties"]["recipients"]["items"]["enum"],
        json!(["player_0", helper]),
        "whoever it answers (the player), then the agents"
    );
    let walk = &offered(first, "move").unwrap()["parameters"]["properties"]["x"];
    assert_eq!(walk["minimum"], json!(first.bounds.min_x));
    assert_eq!(walk["maximum"], json!(first.bounds.max_x));
    assert_eq!(first.final_tools, ["speak"]);

    // Each ungrounded call went back saying what exists.
    let failed = &seen[1].steps[0].failed_calls;
    let messages: Vec<&str> = failed.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(failed.len(), 3, "{messages:?}");
    assert!(
        messages[0].ends_with(&format!(
            "no agent 'agent_999' can be asked for help now; you can ask: {helper}"
        )),
        "{}",
        messages[0]
    );
    assert!(
        messages[1].ends_with(&format!(
            "you have no open task 5555555555555555; your open tasks: {}",
            task.id
        )),
        "{}",
        messages[1]
    );
    assert!(
        messages[2].contains("x 5000 is outside the world bounds"),
        "{}",
        messages[2]
    );
    let after = &seen[2].steps.last().unwrap().failed_calls;
    assert_eq!(after.len(), 1);
    assert_eq!(
        (after[0].id.as_str(), after[0].reason.as_str()),
        ("c5", "invalid_actor_state")
    );

    // The repaired answer ran, without an error.
    assert_eq!(errors(&events), []);
    assert!(events.iter().any(|m| matches!(
        m,
        BusMessage::CollaborationRequested { helper_id, .. } if *helper_id == helper
    )));
    assert!(events.iter().any(|m| matches!(
        m,
        BusMessage::TaskCompleted { task_id, .. } if *task_id == task.id
    )));

    // The journal keeps every refused call with why.
    let decisions = rt.recent_decisions(&id).unwrap();
    let rejected: Vec<(&str, &str)> = decisions
        .iter()
        .flat_map(|d| d.rejected.iter())
        .map(|c| (c.id.as_str(), c.detail.as_deref().unwrap_or_default()))
        .collect();
    let ids: Vec<&str> = rejected.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c5"]);
    assert!(rejected[0].1.contains("you can ask"), "{}", rejected[0].1);
}

#[tokio::test(start_paused = true)]
async fn with_no_one_else_and_no_task_collaborate_and_complete_task_are_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    recorder.answers.lock().extend([
        reply("", vec![call("c1", "complete_task", json!({}))]),
        reply("Nothing to do yet.", vec![]),
    ]);
    let rt = runtime(&dir, &recorder);
    spawn(&rt, agent(None));
    let mut sub = rt.subscribe(Filter::all());
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(errors(&events), []);
    let seen = recorder.seen.lock().clone();
    let names: Vec<&str> = seen[0]
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["move", "speak", "wait"]);
    let speak = offered(&seen[0], "speak").unwrap();
    assert_eq!(
        speak["parameters"]["properties"]["recipients"]["items"]["enum"],
        json!(["player_0"]),
        "only the player it answers"
    );
    let failed = &seen[1].steps[0].failed_calls[0];
    assert_eq!(failed.reason.as_str(), "tool_not_allowed");
    assert_eq!(
        failed.message,
        "'complete_task' is not available now: you have no open task to complete"
    );
}
