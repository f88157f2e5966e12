//! The agent runtime (SKELETON — the lead implements it; signatures are the contract).

pub mod actions;
mod config;
mod state;

pub use config::{AgentConfig, Position, RuntimeOptions, WorldBounds};
pub use state::{AgentState, ParseStateError, TransitionError};

use crate::bus::{Bus, Filter, Subscription};
use crate::memory::{AgentRecord, ConversationRow, Memory, MemoryError, StateChangeRow, TaskRow};

/// Runtime errors. [`RuntimeError::code`] is the stable snake_case code (protocol error codes).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No running agent with this id.
    #[error("unknown agent '{0}'")]
    UnknownAgent(String),
    /// The id is already running.
    #[error("agent '{0}' is already running")]
    AlreadyRunning(String),
    /// The config is invalid.
    #[error("{0}")]
    InvalidConfig(String),
    /// The options are invalid.
    #[error("invalid runtime options: {0}")]
    InvalidOptions(String),
    /// No brain with that name.
    #[error(transparent)]
    Brain(#[from] crate::brain::BrainError),
    /// Memory failed (includes unknown / completed tasks).
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The message is empty or too long.
    #[error("{0}")]
    InvalidMessage(String),
    /// The runtime is shutting down.
    #[error("the runtime is shut down")]
    ShutDown,
    /// The tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Startup(String),
}

/// A snapshot of one running agent.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AgentSnapshot {
    /// Id.
    pub agent_id: String,
    /// Name.
    pub name: String,
    /// Role.
    pub role: String,
    /// Brain name.
    pub brain: String,
    /// State.
    pub state: AgentState,
    /// Position.
    pub position: Position,
    /// The task it works on (oldest open one).
    pub current_task: Option<TaskRow>,
}

/// The runtime.
pub struct Runtime {
    _private: (),
}

impl Runtime {
    /// Starts a runtime with its own multi-threaded tokio runtime.
    pub fn start(options: RuntimeOptions) -> Result<Runtime, RuntimeError> {
        let _ = options;
        todo!()
    }
    /// Starts a runtime on an existing tokio runtime (tests with a paused clock, the server).
    pub fn start_on(
        handle: tokio::runtime::Handle,
        options: RuntimeOptions,
    ) -> Result<Runtime, RuntimeError> {
        let _ = (handle, options);
        todo!()
    }
    /// The options.
    pub fn options(&self) -> &RuntimeOptions {
        todo!()
    }
    /// Spawns (or resumes, with `config.agent_id`) an agent.
    pub fn spawn(&self, config: AgentConfig) -> Result<String, RuntimeError> {
        let _ = config;
        todo!()
    }
    /// Resumes every stored agent that was not terminated and is not running.
    pub fn resume_all(&self) -> Result<Vec<String>, RuntimeError> {
        todo!()
    }
    /// Terminates an agent gracefully (`AgentRemoved` reason `terminated`).
    pub fn terminate(&self, agent_id: &str) -> Result<(), RuntimeError> {
        let _ = agent_id;
        todo!()
    }
    /// A running agent's snapshot.
    pub fn state(&self, agent_id: &str) -> Option<AgentSnapshot> {
        let _ = agent_id;
        todo!()
    }
    /// Every running agent, by id.
    pub fn list(&self) -> Vec<AgentSnapshot> {
        todo!()
    }
    /// Sends a line from the player to an agent.
    pub fn send_message(&self, agent_id: &str, content: &str) -> Result<(), RuntimeError> {
        let _ = (agent_id, content);
        todo!()
    }
    /// Sends a line from `sender` (any id) to an agent.
    pub fn send_message_from(
        &self,
        sender: &str,
        agent_id: &str,
        content: &str,
    ) -> Result<(), RuntimeError> {
        let _ = (sender, agent_id, content);
        todo!()
    }
    /// Assigns a task to a running agent; returns the task row.
    pub fn assign_task(&self, agent_id: &str, task_name: &str) -> Result<TaskRow, RuntimeError> {
        let _ = (agent_id, task_name);
        todo!()
    }
    /// Completes a task.
    pub fn complete_task(&self, task_id: i64) -> Result<TaskRow, RuntimeError> {
        let _ = task_id;
        todo!()
    }
    /// An agent's conversation memory (last `limit` lines, oldest first); works for stored agents.
    pub fn conversation(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, RuntimeError> {
        let _ = (agent_id, limit);
        todo!()
    }
    /// An agent's tasks.
    pub fn tasks(&self, agent_id: &str) -> Result<Vec<TaskRow>, RuntimeError> {
        let _ = agent_id;
        todo!()
    }
    /// An agent's state history (last `limit`, oldest first).
    pub fn state_history(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, RuntimeError> {
        let _ = (agent_id, limit);
        todo!()
    }
    /// Every agent stored in the database (running or not).
    pub fn stored_agents(&self) -> Result<Vec<AgentRecord>, RuntimeError> {
        todo!()
    }
    /// Subscribes to the bus.
    pub fn subscribe(&self, filter: Filter) -> Subscription {
        let _ = filter;
        todo!()
    }
    /// Subscribes with a queue capacity.
    pub fn subscribe_with_capacity(&self, filter: Filter, capacity: usize) -> Subscription {
        let _ = (filter, capacity);
        todo!()
    }
    /// The bus.
    pub fn bus(&self) -> &Bus {
        todo!()
    }
    /// The memory.
    pub fn memory(&self) -> &Memory {
        todo!()
    }
    /// Blocks until every queued write is committed.
    pub fn flush(&self) -> Result<(), RuntimeError> {
        todo!()
    }
    /// Stops every agent (`AgentRemoved` reason `shutdown`; they stay resumable), flushes and
    /// closes memory, closes the bus, and stops the owned tokio runtime (waiting at most
    /// `timeout`). Idempotent; also run on drop.
    pub fn shutdown(&mut self, timeout: std::time::Duration) {
        let _ = timeout;
        todo!()
    }
}
