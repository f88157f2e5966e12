//! What a database backend provides for reading: the reads ([`Queries`], one connection's
//! worth), and the pieces both backends share (pages, app log entries, stored strings that must
//! parse). Its writes are the writer's [`Sink`](super::writer::Sink).
//!
//! [`Memory`](super::Memory) owns the queue, the sequence numbers, the commit watch, the id
//! allocators and the open-task index; a backend only runs SQL. Two exist: SQLite (a file, the
//! default) and PostgreSQL (a URL, behind the `postgres` feature), with the same tables, the
//! same migrations and the same kill-safety promise (an acknowledged write is committed).

use super::AppLogKind;
use super::rows::BadStored;
use super::{
    AgentRecord, BrainCallRow, ConversationRow, InboxRow, MemoryError, Page, StateChangeRow,
    StoredApp, TaskRow, TaskStatus,
};
use crate::agent_state::AgentState;

/// The reads of the memory, on one connection of a backend. Every method reads what is
/// committed; [`Memory`](super::Memory) waits for the writer first where read-your-writes is
/// promised.
pub(crate) trait Queries {
    /// The last `limit` lines of an agent, oldest first.
    fn recent_conversation(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError>;
    /// The newest `limit` lines of an agent with an id below `before`, as a page.
    fn conversation_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<ConversationRow>, MemoryError>;
    /// The last `limit` transitions of an agent, oldest first.
    fn state_history(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, MemoryError>;
    /// The newest `limit` transitions of an agent with an id below `before`, as a page.
    fn state_history_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, MemoryError>;
    /// Every task of an agent, oldest first.
    fn tasks(&mut self, agent_id: &str) -> Result<Vec<TaskRow>, MemoryError>;
    /// An agent's tasks with an id above `after`, oldest first, as a page.
    fn tasks_after(
        &mut self,
        agent_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Page<TaskRow>, MemoryError>;
    /// A stored task, if it exists.
    fn task(&mut self, id: i64) -> Result<Option<TaskRow>, MemoryError>;
    /// Stored agents numbered above `after`, by number, as a page.
    fn agents_after(&mut self, after: i64, limit: usize) -> Result<Page<AgentRecord>, MemoryError>;
    /// One stored agent.
    fn agent(&mut self, agent_id: &str) -> Result<Option<AgentRecord>, MemoryError>;
    /// The newest stored agent, not terminated, whose config has this `key`.
    fn agent_by_key(&mut self, key: &str) -> Result<Option<AgentRecord>, MemoryError>;
    /// Every stored agent, by number.
    fn agents(&mut self) -> Result<Vec<AgentRecord>, MemoryError>;
    /// The newest `limit` traced model calls of an agent with an id below `before`, as a page.
    fn brain_calls_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<BrainCallRow>, MemoryError>;
    /// An agent's unanswered inbox lines, oldest first.
    fn inbox(&mut self, agent_id: &str) -> Result<Vec<InboxRow>, MemoryError>;
    /// An app's session row (`state`, `human_label`) and its last `limit` log entries of
    /// `kinds`, each oldest first.
    fn app(&mut self, app_id: &str, limit: usize) -> Result<Option<StoredApp>, MemoryError>;
    /// A tournament's game records (JSON), by their number.
    fn arena_games(&mut self, tournament: &str) -> Result<Vec<String>, MemoryError>;
    /// How many turns of a campaign are kept.
    fn campaign_turn_count(&mut self, campaign_id: &str) -> Result<u64, MemoryError>;
    /// A campaign's turn-log entries (JSON), oldest first.
    fn campaign_turns(&mut self, campaign_id: &str) -> Result<Vec<String>, MemoryError>;
    /// The newest `limit` memories of an agent with an id below `before`, as a page.
    fn memories_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<super::StoredMemory>, MemoryError>;
    /// An agent's memories that match any of `terms` (plain words), best first, at most `limit`.
    fn search_memories(
        &mut self,
        agent_id: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<super::FoundMemory>, MemoryError>;
    /// How many memories `agent_id` has.
    fn memory_count(&mut self, agent_id: &str) -> Result<u64, MemoryError>;
    /// The oldest `limit` memories of `agent_id` that happened to it (not insights,
    /// relationships or summaries) with an importance of at most `max_importance`, oldest
    /// first.
    fn oldest_memories(
        &mut self,
        agent_id: &str,
        max_importance: u8,
        limit: usize,
    ) -> Result<Vec<super::StoredMemory>, MemoryError>;
    /// What `agent_id` thinks of `about` now: its newest relationship memory about them that no
    /// other supersedes.
    fn current_relationship(
        &mut self,
        agent_id: &str,
        about: &str,
    ) -> Result<Option<super::StoredMemory>, MemoryError>;
    /// The vectors of `agent_id`'s memories made by `model`, as stored (`(memory id, bytes)`),
    /// by memory id.
    fn memory_vectors(
        &mut self,
        agent_id: &str,
        model: &str,
    ) -> Result<Vec<(i64, Vec<u8>)>, MemoryError>;
    /// Those of `ids` that are memories of `agent_id`, by id.
    fn memories_by_id(
        &mut self,
        agent_id: &str,
        ids: &[i64],
    ) -> Result<Vec<super::StoredMemory>, MemoryError>;
    /// `agent_id`'s memories with an id above `after` that have no vector made by `model`,
    /// `(id, text)` by id, at most `limit`.
    fn unembedded(
        &mut self,
        agent_id: &str,
        model: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, MemoryError>;
    /// The latest game time any memory was formed or recalled at (`None`: no memory yet).
    fn latest_memory_time(&mut self) -> Result<Option<f64>, MemoryError>;
    /// Whether the database answers.
    fn ping(&mut self) -> Result<(), MemoryError>;
}

/// What opening a database finds: the highest ids in use and the open tasks.
pub(crate) struct Loaded {
    /// The larger of the highest stored agent number and the agent reservation.
    pub last_agent_seq: i64,
    /// The larger of the highest stored task id and the task reservation.
    pub max_task_id: i64,
    /// The larger of the highest inbox row id and the inbox reservation.
    pub max_inbox_id: i64,
    /// The larger of the highest memory id and the memory reservation.
    pub max_memory_id: i64,
    /// Every open task, by id.
    pub open_tasks: Vec<TaskRow>,
}

/// Rows read newest first (`limit + 1` of them at most) as a page in time order.
pub(crate) fn newest_first_page<T>(
    mut rows: Vec<T>,
    limit: usize,
    id: impl Fn(&T) -> i64,
) -> Page<T> {
    let more = rows.len() > limit;
    rows.truncate(limit);
    rows.reverse();
    let next = if more { rows.first().map(&id) } else { None };
    Page { rows, next }
}

/// Rows read in order with their keys (`limit + 1` of them at most) as a page.
pub(crate) fn oldest_first_page<T>(mut rows: Vec<(T, i64)>, limit: usize) -> Page<T> {
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = if more {
        rows.last().map(|(_, k)| *k)
    } else {
        None
    };
    Page {
        rows: rows.into_iter().map(|(r, _)| r).collect(),
        next,
    }
}

/// A `LIMIT` as SQL takes it.
pub(crate) fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// A stored agent state.
pub(crate) fn parse_state(text: &str) -> Result<AgentState, BadStored> {
    text.parse()
        .map_err(|e: crate::agent_state::ParseStateError| BadStored {
            what: "agent state",
            text: text.to_string(),
            reason: e.to_string(),
        })
}

/// A stored task status.
pub(crate) fn parse_status(text: &str) -> Result<TaskStatus, BadStored> {
    text.parse()
        .map_err(|e: crate::wire::UnknownName| BadStored {
            what: "task status",
            text: text.to_string(),
            reason: e.to_string(),
        })
}

/// A stored agent config (JSON).
pub(crate) fn parse_config(text: &str) -> Result<serde_json::Value, BadStored> {
    serde_json::from_str(text).map_err(|e| BadStored {
        what: "agent config",
        text: text.chars().take(80).collect(),
        reason: e.to_string(),
    })
}

/// A stored model-call outcome.
pub(crate) fn parse_outcome(text: &str) -> Result<super::CallOutcome, BadStored> {
    text.parse()
        .map_err(|reason: crate::wire::UnknownName| BadStored {
            what: "call outcome",
            text: text.to_string(),
            reason: reason.to_string(),
        })
}

/// An app's stored session from its row and its log entries (JSON texts, newest first, as
/// read): entries that are not JSON are skipped.
pub(crate) fn stored_app(
    state: &str,
    human_label: Option<String>,
    mut entries: impl FnMut(AppLogKind) -> Result<Vec<String>, MemoryError>,
) -> Result<StoredApp, MemoryError> {
    fn parse(newest_first: Vec<String>) -> Vec<serde_json::Value> {
        newest_first
            .iter()
            .rev()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect()
    }
    Ok(StoredApp {
        state: serde_json::from_str(state).unwrap_or(serde_json::Value::Null),
        human_label,
        actions: parse(entries(AppLogKind::Action)?),
        events: parse(entries(AppLogKind::Event)?),
        chat: parse(entries(AppLogKind::Chat)?),
    })
}
