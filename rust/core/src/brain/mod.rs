//! Brains: what decides an agent's next actions.
//!
//! A brain answers the tool-call contract ([`BrainReply`]): `{assistant_text, dialog_type,
//! tool_calls:[{id, tool, args, reason?}]}`. World actions (`move`, `wait`, `speak`,
//! `collaborate`, `complete_task`) are tools ([`crate::tools::world`]), so an LLM backend plugs
//! in without changing the runtime.

pub mod scripted;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

pub use crate::contract::{BrainReply, ToolCall};
use crate::geometry::{Position, WorldBounds};
use crate::memory::{ConversationRow, TaskRow};

/// A message the agent has just acknowledged and should take into account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IncomingMessage {
    /// Who sent it (an agent id or the player id).
    pub sender: String,
    /// Sender's display name (the player id for the player).
    pub sender_name: String,
    /// The text.
    pub content: String,
    /// `speech` or `collaboration` (a request to help with `task_name`).
    pub kind: IncomingKind,
    /// The sender's `dialog_type` (`reply` lines are not answered again by the scripted brain).
    pub dialog_type: String,
}

/// What an incoming message is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IncomingKind {
    /// Someone spoke to the agent.
    Speech,
    /// Another agent asked for help with a task (already assigned to this agent).
    Collaboration {
        /// The task's id.
        task_id: i64,
        /// The task.
        task_name: String,
    },
}

/// Another agent within hearing radius.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NearbyAgent {
    /// Its id.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: String,
    /// Where it is.
    pub position: Position,
    /// Distance from the deciding agent.
    pub distance: f64,
}

/// Everything a brain sees when deciding (the runtime builds it; see DESIGN.md "An agent's turn").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BrainContext {
    /// The deciding agent.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: String,
    /// Its role prompt.
    pub prompt: String,
    /// The instruction for this decision ("Analyze situation and decide next action").
    pub instruction: String,
    /// Where it is.
    pub position: Position,
    /// The world's rectangle (moves must stay inside).
    pub bounds: WorldBounds,
    /// The task it is working on (oldest open task), if any.
    pub current_task: Option<TaskRow>,
    /// Its other open tasks.
    pub other_tasks: Vec<TaskRow>,
    /// The last 5 lines of its conversation memory, oldest first (from SQLite).
    pub recent_messages: Vec<ConversationRow>,
    /// Messages acknowledged since the last decision, to answer now.
    pub incoming: Vec<IncomingMessage>,
    /// Agents within hearing radius, nearest first.
    pub nearby: Vec<NearbyAgent>,
    /// The player's id (`player_0`).
    pub player_id: String,
    /// How many decisions this agent has made before this one (in this run).
    pub decisions: u64,
    /// The tools it may call now, in LLM shape (`name`, `description`, `parameters`).
    pub tools: Vec<serde_json::Value>,
}

/// Why a brain could not answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BrainError {
    /// No brain with this name.
    #[error("unknown brain '{name}' (available: {available})")]
    Unknown {
        /// The requested name.
        name: String,
        /// Comma-separated names that exist.
        available: String,
    },
    /// The backend failed (network, process, …).
    #[error("brain backend failed: {0}")]
    Backend(String),
    /// The backend answered something that is not the contract.
    #[error("invalid brain reply: {0}")]
    InvalidReply(String),
}

/// A boxed decision future.
pub type DecideFuture<'a> =
    Pin<Box<dyn Future<Output = Result<BrainReply, BrainError>> + Send + 'a>>;

/// Decides for one agent. One instance per agent; `decide` may be cancelled (dropped) at any
/// await point when a message interrupts the decision.
pub trait Brain: Send {
    /// The brain's name (`scripted`).
    fn name(&self) -> &str;
    /// Answers the tool-call contract for this context.
    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a>;
}

/// Settings a brain is built with.
#[derive(Clone, Debug, PartialEq)]
pub struct BrainSettings {
    /// Seed for deterministic brains.
    pub seed: u64,
    /// Simulated thinking latency in seconds (scripted).
    pub thinking_seconds: f64,
    /// Replies to give first, in order (scripted; see `AgentConfig::script`).
    pub script: Vec<BrainReply>,
}

/// Names of the brains [`create_brain`] knows.
pub const BRAINS: &[&str] = &["scripted"];

/// Builds the brain called `name` (exact, case-sensitive match against [`BRAINS`]).
///
/// `scripted` is [`scripted::ScriptedBrain::new`]. Any other name is
/// [`BrainError::Unknown`] listing the available names.
pub fn create_brain(name: &str, settings: &BrainSettings) -> Result<Box<dyn Brain>, BrainError> {
    match name {
        scripted::NAME => Ok(Box::new(scripted::ScriptedBrain::new(settings))),
        _ => Err(BrainError::Unknown {
            name: name.to_string(),
            available: BRAINS.join(", "),
        }),
    }
}
