//! What the brain tests share: a runtime on a temporary database, an agent with a given brain,
//! and waiting for bus messages.

#![allow(dead_code)]

use std::time::Duration;

use agents_core::bus::{BusMessage, Received, Subscription};
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::time::Instant;

/// A runtime on `dir`'s `agents.db` whose agents only think when spoken to.
pub fn runtime(dir: &tempfile::TempDir) -> Runtime {
    Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 1000.0,
            speaking_seconds: 0.05,
            ..RuntimeOptions::default()
        },
    )
    .unwrap()
}

/// Mira the baker at (10, 10), thinking with `brain`.
pub fn agent(brain: Value) -> AgentConfig {
    AgentConfig::from_json(&json!({
        "name": "Mira", "role": "the baker", "prompt": "You bake bread.",
        "initial_position": {"x": 10, "y": 10}, "brain": brain
    }))
    .unwrap()
}

/// Collects bus messages until `pick` accepts one (returned last); panics after `within`.
pub async fn until(
    sub: &mut Subscription,
    within: Duration,
    mut pick: impl FnMut(&BusMessage) -> bool,
) -> Vec<BusMessage> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                let done = pick(&env.message);
                seen.push(env.message.clone());
                if done {
                    return seen;
                }
            }
            Ok(Some(Received::Lagged { .. })) => {}
            Ok(None) => panic!("bus closed"),
            Err(_) => panic!("nothing matched within {within:?}; saw {seen:#?}"),
        }
    }
}

/// Accepts the line agent `id` says.
pub fn spoke_by(id: &str) -> impl FnMut(&BusMessage) -> bool + use<> {
    let id = id.to_string();
    move |m| matches!(m, BusMessage::AgentSpoke { agent_id, .. } if *agent_id == id)
}

/// Accepts an `agent_error` about agent `id`.
pub fn error_of(id: &str) -> impl FnMut(&BusMessage) -> bool + use<> {
    let id = id.to_string();
    move |m| matches!(m, BusMessage::AgentError { agent_id: Some(a), .. } if *a == id)
}
