//! Agent memory in SQLite (SKELETON — the memory helper replaces every `todo!()`).
//!
//! One writer thread owns the only writing connection; writes are queued on a channel (callers
//! never wait on disk) and committed in batched transactions. WAL mode. Every write returns a
//! sequence number; [`Memory::committed_seq`] says how far the writer has committed, and a row
//! whose sequence number is committed survives a kill of the process. Reads use their own
//! connections and first wait until every write queued before the read is committed
//! (read-your-writes). Migrations are versioned with `PRAGMA user_version` and idempotent.

mod rows;

use std::path::Path;

pub use rows::{
    AgentRecord, ConversationRow, NewConversation, StateChangeRow, TaskRow, TaskStatus,
};

use crate::runtime::{AgentState, Position};

/// Memory errors.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database file's directory could not be created or the file opened.
    #[error("cannot open database {path}: {message}")]
    Open {
        /// The path.
        path: String,
        /// Why.
        message: String,
    },
    /// The database was written by a newer version of this library.
    #[error("database schema version {found} is newer than this library's ({supported})")]
    SchemaTooNew {
        /// `user_version` found.
        found: i64,
        /// The newest this library knows.
        supported: i64,
    },
    /// No task with this id.
    #[error("unknown task {0}")]
    UnknownTask(i64),
    /// The task is already completed.
    #[error("task {0} is already completed")]
    TaskAlreadyCompleted(i64),
    /// The memory was closed.
    #[error("memory is closed")]
    Closed,
}

/// Handle to one database. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Memory {
    _private: std::sync::Arc<()>,
}

impl Memory {
    /// Opens (creating if needed) the database, runs migrations, starts the writer thread.
    pub fn open(path: impl AsRef<Path>) -> Result<Memory, MemoryError> {
        let _ = path;
        todo!()
    }
    /// The schema version this library writes.
    pub const SCHEMA_VERSION: i64 = 1;

    /// Allocates the next agent id (`agent_001`, …), unique in this database also across
    /// restarts (continues after the highest stored id).
    pub fn next_agent_id(&self) -> String {
        todo!()
    }
    /// Queues an insert-or-replace of an agent's resume record.
    pub fn save_agent(&self, record: &AgentRecord) -> u64 {
        let _ = record;
        todo!()
    }
    /// Queues an update of an agent's last position and state.
    pub fn save_agent_position(
        &self,
        agent_id: &str,
        position: Position,
        state: AgentState,
    ) -> u64 {
        let _ = (agent_id, position, state);
        todo!()
    }
    /// Queues marking an agent terminated (`removed_at` = now).
    pub fn mark_agent_removed(&self, agent_id: &str) -> u64 {
        let _ = agent_id;
        todo!()
    }
    /// Queues a conversation line (timestamped now).
    pub fn record_conversation(&self, line: NewConversation) -> u64 {
        let _ = line;
        todo!()
    }
    /// Queues a state transition row (timestamped now).
    pub fn record_state_change(&self, agent_id: &str, old: AgentState, new: AgentState) -> u64 {
        let _ = (agent_id, old, new);
        todo!()
    }
    /// Assigns a task: allocates its id, queues the row (`assigned`), returns the row and the
    /// write's sequence number.
    pub fn assign_task(&self, agent_id: &str, task_name: &str) -> (TaskRow, u64) {
        let _ = (agent_id, task_name);
        todo!()
    }
    /// Completes an open task: queues the update (`completed`, `completed_at` = now).
    pub fn complete_task(&self, task_id: i64) -> Result<(TaskRow, u64), MemoryError> {
        let _ = task_id;
        todo!()
    }
    /// Open (`assigned`) tasks of an agent, oldest first, from the in-memory index (no disk).
    pub fn open_tasks(&self, agent_id: &str) -> Vec<TaskRow> {
        let _ = agent_id;
        todo!()
    }
    /// The open task with this id, if any (no disk).
    pub fn open_task(&self, task_id: i64) -> Option<TaskRow> {
        let _ = task_id;
        todo!()
    }
    /// Highest sequence number handed out.
    pub fn submitted_seq(&self) -> u64 {
        todo!()
    }
    /// Highest sequence number committed (every write up to it is durable).
    pub fn committed_seq(&self) -> u64 {
        todo!()
    }
    /// A watch that changes whenever the writer commits (value: `committed_seq`).
    pub fn commit_watch(&self) -> tokio::sync::watch::Receiver<u64> {
        todo!()
    }
    /// Blocks until every write queued so far is committed.
    pub fn flush(&self) -> Result<(), MemoryError> {
        todo!()
    }
    /// The last `limit` lines of an agent's memory, oldest first.
    pub fn recent_conversation(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError> {
        let _ = (agent_id, limit);
        todo!()
    }
    /// All tasks of an agent (open and completed), oldest first.
    pub fn tasks(&self, agent_id: &str) -> Result<Vec<TaskRow>, MemoryError> {
        let _ = agent_id;
        todo!()
    }
    /// The last `limit` state transitions of an agent, oldest first.
    pub fn state_history(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, MemoryError> {
        let _ = (agent_id, limit);
        todo!()
    }
    /// One stored agent.
    pub fn agent(&self, agent_id: &str) -> Result<Option<AgentRecord>, MemoryError> {
        let _ = agent_id;
        todo!()
    }
    /// Every stored agent, by id.
    pub fn agents(&self) -> Result<Vec<AgentRecord>, MemoryError> {
        todo!()
    }
    /// Flushes, stops and joins the writer thread. Later writes are dropped (sequence 0);
    /// reads still work. Idempotent.
    pub fn close(&self) -> Result<(), MemoryError> {
        todo!()
    }
}
