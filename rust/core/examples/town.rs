//! A small town without Godot: the demo's five villagers (`godot-project/demo/villagers.json`)
//! move, talk, answer the player and collaborate on tasks; the timeline is printed.
//! `cargo run -p agents-core --example town [-- SECONDS]` (default 30).
//!
//! By default they think with the offline `scripted` brain, on tokio's paused clock, so 30 s of
//! town life take a moment. The `AGENTS_DEMO_*` environment variables of the Godot demo town
//! (`docs/brains.md`, "Running the demo town on a real model") make every villager think with a
//! model instead, on the real clock: `AGENTS_DEMO_PROVIDER` (`openai`, `ollama`, `cli`, …),
//! `AGENTS_DEMO_MODEL`, `AGENTS_DEMO_BASE_URL`, `AGENTS_DEMO_API_KEY_ENV`, `AGENTS_DEMO_COMMAND`,
//! `AGENTS_DEMO_CLI_BACKEND`, `AGENTS_DEMO_SECONDS`, `AGENTS_DEMO_TOKEN_BUDGET`.

use std::time::Duration;

use agents_core::brain::BrainSpec;
use agents_core::bus::{BusMessage, Filter, Received};
use agents_core::runtime::{AgentConfig, Position, Runtime, RuntimeOptions, WorldBounds};
use serde::Deserialize;

/// The town file the Godot demo, this example and the prompt bench share.
const TOWN: &str = include_str!("../../../godot-project/demo/villagers.json");

/// The parts of `villagers.json` the example uses.
#[derive(Deserialize)]
struct Town {
    world_size: [f64; 2],
    hearing_radius: f64,
    player_message: PlayerMessage,
    villagers: Vec<Villager>,
}

#[derive(Deserialize)]
struct PlayerMessage {
    to: String,
    text: String,
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
}

/// The brain the `AGENTS_DEMO_*` variables describe (`None`: scripted), and the runtime-wide
/// token budget.
fn brain_from_environment() -> Result<(Option<BrainSpec>, Option<u64>), String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let budget = match var("AGENTS_DEMO_TOKEN_BUDGET") {
        Some(b) => Some(b.parse::<u64>().map_err(|_| {
            format!("AGENTS_DEMO_TOKEN_BUDGET must be a whole number of tokens, got {b}")
        })?),
        None => None,
    };
    let provider = match var("AGENTS_DEMO_PROVIDER") {
        None => return Ok((None, budget)),
        Some(p) if p == "scripted" => return Ok((None, budget)),
        Some(p) => p,
    };
    let mut spec = BrainSpec::provider(provider);
    for (field, name) in [
        ("model", "AGENTS_DEMO_MODEL"),
        ("base_url", "AGENTS_DEMO_BASE_URL"),
        ("api_key_env", "AGENTS_DEMO_API_KEY_ENV"),
        ("cli_backend", "AGENTS_DEMO_CLI_BACKEND"),
    ] {
        if let Some(value) = var(name) {
            spec = spec.with(field, value);
        }
    }
    if let Some(command) = var("AGENTS_DEMO_COMMAND") {
        let argv: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        spec = spec.with("command", argv);
    }
    agents_core::brain::BrainRegistry::with_builtins()
        .validate(&spec)
        .map_err(|e| format!("the AGENTS_DEMO_* brain: {e}"))?;
    Ok((Some(spec), budget))
}

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("AGENTS_DEMO_SECONDS").ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .unwrap_or(30.0);
    let (brain, budget) = match brain_from_environment() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("town: {e}");
            std::process::exit(2);
        }
    };
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all();
    if brain.is_none() {
        // The scripted brain only waits on timers: skip them.
        builder.start_paused(true);
    }
    let tokio = builder.build().expect("tokio runtime");
    tokio.block_on(town(Duration::from_secs_f64(seconds), brain, budget));
}

async fn town(length: Duration, brain: Option<BrainSpec>, budget: Option<u64>) {
    let town: Town = serde_json::from_str(TOWN).expect("villagers.json");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut options = RuntimeOptions {
        database: dir.path().join("town.db"),
        idle_think_seconds: 3.0,
        seed: 7,
        bounds: WorldBounds::from_rect(0.0, 0.0, town.world_size[0], town.world_size[1])
            .expect("world_size"),
        hearing_radius: town.hearing_radius,
        token_budget: budget,
        ..RuntimeOptions::default()
    };
    match &brain {
        Some(spec) => {
            println!(
                "brain: {} (AGENTS_DEMO_PROVIDER), for every villager",
                spec.label()
            );
            options.brain_profiles.insert("demo".into(), spec.clone());
            options.default_brain = "demo".into();
        }
        None => println!("brain: scripted (offline; set AGENTS_DEMO_PROVIDER for a model)"),
    }
    let rt = Runtime::start_on(tokio::runtime::Handle::current(), options).expect("runtime");
    let mut events = rt.subscribe(Filter::all());
    let mut ids = std::collections::HashMap::new();
    for v in &town.villagers {
        let config = AgentConfig {
            prompt: v.prompt.clone(),
            initial_position: Some(Position::new(v.x, v.y)),
            ..AgentConfig::named(&v.name, &v.role)
        };
        match rt.spawn(config) {
            Ok(id) => {
                ids.insert(v.role.clone(), id);
            }
            Err(e) => {
                eprintln!("town: spawning {} failed: {e}", v.name);
                rt.shutdown(Duration::from_secs(1));
                std::process::exit(1);
            }
        }
    }
    for v in &town.villagers {
        if let Some(task) = &v.task {
            rt.assign_task(&ids[&v.role], task).unwrap();
        }
    }
    let greeted_id = ids[&town.player_message.to].clone();
    let mut lines = 0usize;
    let start = tokio::time::Instant::now();
    let mut greeted = false;
    let end = start + length;
    loop {
        if !greeted && start.elapsed() >= Duration::from_secs(4) {
            rt.send_message(&greeted_id, &town.player_message.text)
                .unwrap();
            greeted = true;
        }
        let deadline = if greeted {
            end
        } else {
            start + Duration::from_secs(4)
        };
        let next = tokio::time::timeout_at(deadline, events.recv());
        let received = match next.await {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(_) if tokio::time::Instant::now() >= end => break,
            Err(_) => continue,
        };
        let Received::Message(env) = received else {
            continue;
        };
        let t = start.elapsed().as_secs_f64();
        let name = |id: &str| {
            rt.state(id)
                .map(|s| s.name)
                .unwrap_or_else(|| id.to_string())
        };
        let line = match &env.message {
            BusMessage::AgentSpawned {
                agent_id,
                name,
                role,
                position,
                ..
            } => {
                format!("{name} ({agent_id}, {role}) appears at {position}")
            }
            BusMessage::AgentMoved { agent_id, to, .. } => {
                format!("{} walks to {to}", name(agent_id))
            }
            BusMessage::AgentMoveRequested { agent_id, to, .. } => {
                format!("{} sets off for {to}", name(agent_id))
            }
            BusMessage::AgentMoveFinished {
                agent_id,
                to,
                reason,
                ..
            } => match reason {
                None => format!("{} arrives at {to}", name(agent_id)),
                Some(why) => format!("{} cannot get to {to}: {why}", name(agent_id)),
            },
            BusMessage::AgentSpoke {
                agent_id,
                content,
                recipients,
                ..
            } => {
                if ids.values().any(|id| id == agent_id) {
                    lines += 1;
                }
                let to: Vec<String> = recipients.iter().map(|r| name(r)).collect();
                format!(
                    "{} → {}: \"{content}\"",
                    name(agent_id),
                    if to.is_empty() {
                        "anyone".into()
                    } else {
                        to.join(", ")
                    }
                )
            }
            BusMessage::TaskAssigned {
                agent_id,
                task_name,
                assigned_by,
                ..
            } => {
                format!(
                    "task for {}: {task_name} (from {})",
                    name(agent_id),
                    name(assigned_by)
                )
            }
            BusMessage::TaskCompleted {
                agent_id,
                task_name,
                ..
            } => format!("{} completed: {task_name}", name(agent_id)),
            BusMessage::CollaborationRequested {
                agent_id,
                helper_id,
                task_name,
                ..
            } => {
                format!(
                    "{} asks {} for help with {task_name}",
                    name(agent_id),
                    name(helper_id)
                )
            }
            BusMessage::AgentError {
                agent_id,
                code,
                message,
            } => {
                format!(
                    "error [{code}] {}: {message}",
                    agent_id.as_deref().unwrap_or("runtime")
                )
            }
            BusMessage::AgentReflected {
                agent_id, memories, ..
            } => {
                let drawn: Vec<&str> = memories.iter().map(|m| m.text.as_str()).collect();
                format!("{} reflects: {}", name(agent_id), drawn.join(" / "))
            }
            BusMessage::AgentStateChanged { .. }
            | BusMessage::AgentRemoved { .. }
            | BusMessage::AgentSpeechDelta { .. }
            | BusMessage::AgentToolCall { .. }
            | BusMessage::ModelDownloadProgress { .. }
            | BusMessage::AgentReplied { .. }
            | BusMessage::AgentRemembered { .. }
            | BusMessage::CampaignChanged { .. } => continue,
        };
        println!("{t:6.1}s  {line}");
    }
    if let Some(spec) = &brain {
        println!("{lines} lines said by the villagers with {}", spec.label());
    }
    rt.shutdown(Duration::from_secs(1));
}
