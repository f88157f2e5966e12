//! A small town without Godot: five agents move, talk, answer the player and collaborate on
//! tasks; the timeline is printed. Runs on tokio's paused clock, so 30 s of town life take a
//! moment. `cargo run -p agents-core --example town [-- SECONDS]`

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, Received};
use agents_core::runtime::{AgentConfig, Position, Runtime, RuntimeOptions};

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let dir = tempfile::tempdir().expect("temp dir");
    let options = RuntimeOptions {
        database: dir.path().join("town.db"),
        idle_think_seconds: 3.0,
        seed: 7,
        ..RuntimeOptions::default()
    };
    let rt = Runtime::start_on(tokio::runtime::Handle::current(), options).expect("runtime");
    let mut events = rt.subscribe(Filter::all());
    let people = [
        ("Mira", "baker", 40.0, 40.0),
        ("Bram", "smith", 48.0, 42.0),
        ("Tess", "guard", 55.0, 50.0),
        ("Odo", "farmer", 35.0, 55.0),
        ("Lena", "mayor", 50.0, 58.0),
    ];
    let mut ids = Vec::new();
    for (name, role, x, y) in people {
        let config = AgentConfig {
            initial_position: Some(Position::new(x, y)),
            ..AgentConfig::named(name, role)
        };
        ids.push(rt.spawn(config).expect("spawn"));
    }
    rt.assign_task(&ids[0], "bake bread for the festival")
        .unwrap();
    rt.assign_task(&ids[1], "repair the town gate").unwrap();
    rt.assign_task(&ids[4], "plan the harvest festival")
        .unwrap();
    let start = tokio::time::Instant::now();
    let mut greeted = false;
    let end = start + Duration::from_secs(seconds);
    loop {
        if !greeted && start.elapsed() >= Duration::from_secs(4) {
            rt.send_message(&ids[0], "Good morning! Is the bread ready yet?")
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
            BusMessage::AgentSpoke {
                agent_id,
                content,
                recipients,
                ..
            } => {
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
            BusMessage::AgentStateChanged { .. }
            | BusMessage::AgentRemoved { .. }
            | BusMessage::AgentSpeechDelta { .. }
            | BusMessage::AgentToolCall { .. } => continue,
        };
        println!("{t:6.1}s  {line}");
    }
    rt.shutdown(Duration::from_secs(1));
}
