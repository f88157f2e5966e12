//! The scripted brain in a running runtime, on a paused clock.
//!
//! - The demo town, measured: the villagers of `godot-project/demo/villagers.json` live 80 s of
//!   game time (the mayor's scripted opening, the tasks, the player's lines at their times, the
//!   baker's read-only `check_stock`), and what they say is measured with
//!   [`crate::eval::lines`]; the baker remembers what the player told her a minute before.
//! - Looking questions up: a question that shares a word with a read-only tool is answered
//!   through it, within the decision; another question calls no tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::apps::action::params_schema;
use crate::brain::{BrainReply, ToolCall};
use crate::bus::{BusMessage, Filter, Received};
use crate::eval::lines::{Line, LineReport};
use crate::geometry::{Position, WorldBounds};
use crate::runtime::{AgentConfig, Runtime, RuntimeOptions};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// The town file the Godot demo, the example town and the prompt bench share.
const TOWN: &str = include_str!("../../../../../godot-project/demo/villagers.json");

/// Seconds of game time the town lives (the Godot town's headless `duration_seconds`).
const TOWN_SECONDS: u64 = 80;

/// When the player greets (the Godot town's `GREETING_AT`).
const GREETING_AT: f64 = 3.0;

/// The bars every villager must meet.
const MAX_REPEATED: f64 = 0.10;
const MAX_ECHO: f64 = 0.05;

#[derive(Deserialize)]
struct Town {
    world_size: [f64; 2],
    hearing_radius: f64,
    player_message: PlayerLine,
    #[serde(default)]
    player_later: Vec<PlayerLine>,
    villagers: Vec<Villager>,
}

#[derive(Clone, Deserialize)]
struct PlayerLine {
    #[serde(default)]
    at: f64,
    to: String,
    text: String,
    /// The read-only tool its answer must come through.
    #[serde(default)]
    tool: Option<String>,
    /// What its answer must hold (the villager remembers what it was told).
    #[serde(default)]
    remembers: Option<String>,
}

#[derive(Deserialize)]
struct Villager {
    name: String,
    role: String,
    prompt: String,
    x: f64,
    y: f64,
    #[serde(default)]
    task: Option<String>,
    #[serde(default)]
    shop: Option<Shop>,
}

/// A villager's read-only look-up tool and what it answers from.
#[derive(Clone, Deserialize)]
struct Shop {
    tool: String,
    description: String,
    parameters: Value,
    stock: serde_json::Map<String, Value>,
}

/// What one town run came to.
struct Run {
    lines: Vec<Line>,
    /// Villagers as (agent id, name, role).
    villagers: Vec<(String, String, String)>,
    /// The player's lines that had to come through a tool: (agent id, text, tool).
    looked_up: Vec<(String, String, String)>,
    /// The player's lines whose answer must hold something: (agent id, text, what).
    remembered: Vec<(String, String, String)>,
    /// Calls of the shops' tools, by tool name.
    tool_calls: Vec<(String, Arc<AtomicUsize>)>,
    /// Every tool call the villagers made, as (agent id, tool).
    calls: Vec<(String, String)>,
}

/// A reply of the tool-call contract with `calls` (tool, args), for the mayor's opening.
fn scripted(calls: Vec<(&str, Value)>) -> BrainReply {
    BrainReply {
        assistant_text: String::new(),
        dialog_type: "collaboration".into(),
        tool_calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, (tool, args))| ToolCall::new(format!("call_{:03}", i + 1), tool, args))
            .collect(),
    }
}

/// The town for 80 s of game time with `seed` (must run on a paused clock).
async fn run_town(seed: u64) -> Run {
    let town: Town = serde_json::from_str(TOWN).expect("villagers.json");
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        tokio::runtime::Handle::current(),
        RuntimeOptions {
            database: dir.path().join("town.db"),
            seed,
            bounds: WorldBounds::from_rect(0.0, 0.0, town.world_size[0], town.world_size[1])
                .unwrap(),
            hearing_radius: town.hearing_radius,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let mut events = rt.subscribe(Filter::all());
    let mut tool_calls = Vec::new();
    let mut villagers = Vec::new();
    let mut ids = std::collections::HashMap::new();
    // The mayor last: her opening names the guard and the farmer.
    let (mayor, others): (Vec<&Villager>, Vec<&Villager>) =
        town.villagers.iter().partition(|v| v.role == "mayor");
    for v in others.into_iter().chain(mayor) {
        let mut config = AgentConfig {
            prompt: v.prompt.clone(),
            initial_position: Some(Position::new(v.x, v.y)),
            ..AgentConfig::named(&v.name, &v.role)
        };
        if let Some(shop) = &v.shop {
            let calls = Arc::new(AtomicUsize::new(0));
            let counted = calls.clone();
            let stock = shop.stock.clone();
            let mut registry = ToolRegistry::new();
            registry
                .register(
                    ToolSpec::new(
                        &shop.tool,
                        &shop.description,
                        params_schema(&shop.parameters).unwrap(),
                    )
                    .read_only(),
                    move |args| {
                        counted.fetch_add(1, Ordering::SeqCst);
                        let item = args["item"].as_str().unwrap_or("").to_lowercase();
                        let left = stock.get(&item).cloned().unwrap_or(json!(0));
                        ToolOutput::ok(json!({"item": item, "left": left}))
                    },
                )
                .unwrap();
            let set = format!("shop_{}", v.role);
            rt.register_tool_set(&set, registry).unwrap();
            config.tools = Some(vec!["world".into(), set]);
            tool_calls.push((shop.tool.clone(), calls));
        }
        if v.role == "mayor" {
            let (guard, farmer) = (&ids["guard"], &ids["farmer"]);
            config.script = vec![
                scripted(vec![(
                    "collaborate",
                    json!({"agent_id": guard, "task_name": "guard the festival square",
                           "message": "Tess, will you keep the square safe during the festival?"}),
                )]),
                scripted(vec![
                    ("move", json!({"x": 35, "y": 40})),
                    (
                        "collaborate",
                        json!({"agent_id": farmer, "task_name": "deliver wheat to the bakery",
                               "message": "Olek, Mira needs wheat for the festival bread."}),
                    ),
                ]),
            ];
        }
        let id = rt.spawn(config).unwrap();
        if let Some(task) = &v.task {
            rt.assign_task(&id, task).unwrap();
        }
        ids.insert(v.role.clone(), id.clone());
        villagers.push((id, v.name.clone(), v.role.clone()));
    }
    let mut said: Vec<PlayerLine> = vec![PlayerLine {
        at: GREETING_AT,
        ..town.player_message.clone()
    }];
    said.extend(town.player_later.iter().cloned());
    said.sort_by(|a, b| a.at.total_cmp(&b.at));
    let mut said = std::collections::VecDeque::from(said);
    let looked_up = said
        .iter()
        .filter_map(|l| Some((ids[&l.to].clone(), l.text.clone(), l.tool.clone()?)))
        .collect();
    let remembered = said
        .iter()
        .filter_map(|l| Some((ids[&l.to].clone(), l.text.clone(), l.remembers.clone()?)))
        .collect();
    let start = tokio::time::Instant::now();
    let end = start + Duration::from_secs(TOWN_SECONDS);
    let mut lines = Vec::new();
    let mut calls = Vec::new();
    loop {
        let next_line = said
            .front()
            .map(|l| start + Duration::from_secs_f64(l.at))
            .unwrap_or(end)
            .min(end);
        match tokio::time::timeout_at(next_line, events.recv()).await {
            Ok(Some(Received::Message(env))) => match &env.message {
                BusMessage::AgentSpoke {
                    agent_id,
                    content,
                    recipients,
                    ..
                } => lines.push(Line {
                    speaker: agent_id.clone(),
                    to: recipients.clone(),
                    text: content.clone(),
                }),
                BusMessage::AgentReplied {
                    agent_id, actions, ..
                } => calls.extend(actions.iter().map(|a| (agent_id.clone(), a.tool.clone()))),
                _ => {}
            },
            Ok(Some(Received::Lagged { .. })) => panic!("the test fell behind the bus"),
            Ok(None) => break,
            Err(_) if tokio::time::Instant::now() >= end => break,
            Err(_) => {
                // The player's line comes back on the bus, as the player's speech.
                if let Some(line) = said.pop_front() {
                    rt.send_message(&ids[&line.to], &line.text).unwrap();
                }
            }
        }
    }
    rt.shutdown(Duration::from_secs(1));
    Run {
        lines,
        villagers,
        looked_up,
        remembered,
        tool_calls,
        calls,
    }
}

/// One villager's numbers, as a table row.
fn row(name: &str, r: &LineReport) -> String {
    format!(
        "{name:5} {:3} lines, repeated {:4.1} %, echo {:4.1} %, quotes of quotes {}, distinct-2 \
         {:.2}, questions answered {}/{}",
        r.lines,
        r.repeated_share * 100.0,
        r.echo_share * 100.0,
        r.quotes_of_quotes,
        r.distinct_2,
        r.answered,
        r.questions
    )
}

#[tokio::test(start_paused = true)]
async fn the_town_talks_without_echoes_repeats_or_unanswered_questions() {
    let mut failures = Vec::new();
    for seed in 0..16u64 {
        let run = run_town(seed).await;
        let failed_before = failures.len();
        let player = crate::brain::DEFAULT_PLAYER_ID;
        eprintln!("seed {seed}:");
        let mut total = 0;
        for (id, name, _) in &run.villagers {
            let r = LineReport::measure(&run.lines, id, player, name);
            eprintln!("  {}", row(name, &r));
            total += r.lines;
            let mut fail = |what: String| failures.push(format!("seed {seed}, {name}: {what}"));
            if r.quotes_of_quotes > 0 {
                fail(format!(
                    "{} quotes of quotes: {:?}",
                    r.quotes_of_quotes, r.echoed
                ));
            }
            if r.repeated_share > MAX_REPEATED {
                fail(format!("{:.1} % repeated", r.repeated_share * 100.0));
            }
            if r.echo_share > MAX_ECHO {
                fail(format!(
                    "{:.1} % echo: {:?}",
                    r.echo_share * 100.0,
                    r.echoed
                ));
            }
            if r.answered < r.questions {
                fail(format!("unanswered: {:?}", r.unanswered));
            }
        }
        // A lively town: the bars are not met by silence.
        if total < 15 {
            failures.push(format!(
                "seed {seed}: only {total} lines in {TOWN_SECONDS} s"
            ));
        }
        // The player's questions were asked, and the one to look up went through its tool.
        let asked: usize = run
            .villagers
            .iter()
            .map(|(id, name, _)| LineReport::measure(&run.lines, id, player, name).questions)
            .sum();
        if asked < 3 {
            failures.push(format!(
                "seed {seed}: only {asked} questions reached the villagers"
            ));
        }
        for (id, question, tool) in &run.looked_up {
            let asked_at = run
                .lines
                .iter()
                .position(|l| l.speaker == player && l.text == *question)
                .unwrap();
            let answer = run.lines[asked_at..]
                .iter()
                .find(|l| l.speaker == *id && l.to.iter().any(|t| t == player));
            let called = run.calls.iter().any(|(a, t)| a == id && t == tool);
            match answer {
                Some(a) if called && a.text.contains("rye") && a.text.contains('3') => {}
                other => failures.push(format!(
                    "seed {seed}: {question:?} was answered {:?} (through {tool}: {called})",
                    other.map(|l| &l.text)
                )),
            }
        }
        for (id, question, what) in &run.remembered {
            let asked_at = run
                .lines
                .iter()
                .position(|l| l.speaker == player && l.text == *question)
                .unwrap();
            let answer = run.lines[asked_at..]
                .iter()
                .find(|l| l.speaker == *id && l.to.iter().any(|t| t == player));
            if !answer.is_some_and(|a| a.text.contains(what.as_str())) {
                failures.push(format!(
                    "seed {seed}: {question:?} was answered {:?}, without {what:?}",
                    answer.map(|l| &l.text)
                ));
            }
        }
        for (tool, count) in &run.tool_calls {
            if count.load(Ordering::SeqCst) == 0 {
                failures.push(format!("seed {seed}: {tool} was never called"));
            }
        }
        if failures.len() > failed_before {
            eprintln!("seed {seed}, what was said:");
            let name = |id: &str| {
                run.villagers
                    .iter()
                    .find(|(v, _, _)| v == id)
                    .map_or(id.to_string(), |(_, n, _)| n.clone())
            };
            for line in &run.lines {
                let to: Vec<String> = line.to.iter().map(|t| name(t)).collect();
                eprintln!(
                    "  {} → {}: {}",
                    name(&line.speaker),
                    to.join(", "),
                    line.text
                );
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A runtime with Mira the baker, who has a read-only `check_stock` (counting its calls) and a
/// `sell` that is not read-only; returns the runtime, her id and the calls of each.
fn baker_with_a_shop(
    dir: &tempfile::TempDir,
) -> (Runtime, String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let rt = Runtime::start_on(
        tokio::runtime::Handle::current(),
        RuntimeOptions {
            database: dir.path().join("shop.db"),
            idle_think_seconds: 1000.0,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let (looked, sold) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (l, s) = (looked.clone(), sold.clone());
    let mut shop = ToolRegistry::new();
    shop.register(
        ToolSpec::new(
            "check_stock",
            "How many loaves of a bread are left in stock.",
            params_schema(&json!({"item": "string"})).unwrap(),
        )
        .read_only(),
        move |args| {
            l.fetch_add(1, Ordering::SeqCst);
            let left = if args["item"] == "rye" { 3 } else { 0 };
            ToolOutput::ok(json!({"item": args["item"], "left": left}))
        },
    )
    .unwrap();
    shop.register(
        ToolSpec::new(
            "sell",
            "Sell loaves of bread left in stock to the player.",
            params_schema(&json!({"item": "string"})).unwrap(),
        ),
        move |_| {
            s.fetch_add(1, Ordering::SeqCst);
            ToolOutput::ok(json!({"sold": 1}))
        },
    )
    .unwrap();
    rt.register_tool_set("shop", shop).unwrap();
    let id = rt
        .spawn(AgentConfig {
            tools: Some(vec!["world".into(), "shop".into()]),
            initial_position: Some(Position::new(10.0, 10.0)),
            ..AgentConfig::named("Mira", "baker")
        })
        .unwrap();
    (rt, id, looked, sold)
}

/// Asks `id` `question` and returns what came back: its line and the tools its decision called.
async fn ask(rt: &Runtime, id: &str, question: &str) -> (String, Vec<String>) {
    let mut events = rt.subscribe(Filter::all());
    rt.send_message(id, question).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentReplied {
                    agent_id,
                    text,
                    actions,
                    error,
                    ..
                } = &env.message
                    && agent_id == id
                {
                    assert_eq!(error, &None, "{question:?}");
                    return (
                        text.clone(),
                        actions.iter().map(|a| a.tool.clone()).collect(),
                    );
                }
            }
            Ok(Some(Received::Lagged { .. })) => {}
            other => panic!("no answer to {question:?}: {other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_question_about_a_read_only_tool_is_answered_from_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, id, looked, sold) = baker_with_a_shop(&dir);
    let (text, tools) = ask(&rt, &id, "Good morning, Mira! Any rye left?").await;
    assert_eq!(looked.load(Ordering::SeqCst), 1);
    assert_eq!(
        sold.load(Ordering::SeqCst),
        0,
        "only the read-only tool is called"
    );
    assert_eq!(tools, ["check_stock", "speak"], "{text}");
    assert!(text.contains("rye") && text.contains('3'), "{text}");
    // The lookup was a step of the decision: the journal shows the call and its result.
    let decision = rt.recent_decisions(&id).unwrap().pop().unwrap();
    let call = decision
        .calls
        .iter()
        .find(|c| c.tool == "check_stock")
        .unwrap();
    assert_eq!(call.args, json!({"item": "rye"}));
    // Another bread, the same way.
    let (text, _) = ask(&rt, &id, "Do you have spelt in stock?").await;
    assert_eq!(looked.load(Ordering::SeqCst), 2);
    assert!(text.contains("spelt") && text.contains('0'), "{text}");
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_question_no_read_only_tool_knows_of_calls_none() {
    let dir = tempfile::tempdir().unwrap();
    let (rt, id, looked, sold) = baker_with_a_shop(&dir);
    for question in [
        "Is the well deep?",
        "Is the bread ready?",
        "The rye is left over.",
    ] {
        let (text, tools) = ask(&rt, &id, question).await;
        assert_eq!(tools, ["speak"], "{question:?} → {text}");
        assert!(!text.is_empty(), "{question:?}");
    }
    assert_eq!(looked.load(Ordering::SeqCst), 0);
    assert_eq!(sold.load(Ordering::SeqCst), 0);
    rt.shutdown(Duration::from_secs(1));
}
