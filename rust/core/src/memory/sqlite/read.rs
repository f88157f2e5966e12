//! The reads on a SQLite reader connection, and the mapping of stored rows to the row types.
//!
//! A stored string that does not parse (an unknown state or task status, invalid JSON config) is
//! an error ([`rusqlite::Error::FromSqlConversionFailure`]), never a panic.

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::agent_state::AgentState;
use crate::geometry::Position;
use crate::memory::ids::IdKind;
use crate::memory::store::{
    self, BadStored, Loaded, Queries, limit_of, newest_first_page, oldest_first_page,
};
use crate::memory::{
    AgentRecord, BrainCall, BrainCallRow, ConversationRow, InboxRow, MemoryError, Page,
    StateChangeRow, StoredApp, TaskRow, TaskStatus,
};

fn conversion(index: usize, error: BadStored) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(error))
}

fn state_at(row: &Row<'_>, index: usize) -> rusqlite::Result<AgentState> {
    let text: String = row.get(index)?;
    store::parse_state(&text).map_err(|e| conversion(index, e))
}

fn status_at(row: &Row<'_>, index: usize) -> rusqlite::Result<TaskStatus> {
    let text: String = row.get(index)?;
    store::parse_status(&text).map_err(|e| conversion(index, e))
}

/// Columns: `id, agent_id, task_name, status, created_at, completed_at`.
pub(crate) const TASK_COLUMNS: &str = "id, agent_id, task_name, status, created_at, completed_at";

pub(crate) fn task_row(row: &Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok(TaskRow {
        id: row.get(0)?,
        agent_id: row.get(1)?,
        task_name: row.get(2)?,
        status: status_at(row, 3)?,
        created_at: row.get(4)?,
        completed_at: row.get(5)?,
    })
}

fn conversation_row(row: &Row<'_>) -> rusqlite::Result<ConversationRow> {
    Ok(ConversationRow {
        id: row.get(0)?,
        agent_id: row.get(1)?,
        timestamp: row.get(2)?,
        sender: row.get(3)?,
        content: row.get(4)?,
        recipient: row.get(5)?,
    })
}

fn state_change_row(row: &Row<'_>) -> rusqlite::Result<StateChangeRow> {
    Ok(StateChangeRow {
        id: row.get(0)?,
        agent_id: row.get(1)?,
        old_state: state_at(row, 2)?,
        new_state: state_at(row, 3)?,
        timestamp: row.get(4)?,
    })
}

const AGENT_COLUMNS: &str =
    "agent_id, name, role, prompt, brain, config, x, y, state, created_at, removed_at";

fn agent_row(row: &Row<'_>) -> rusqlite::Result<AgentRecord> {
    let config: String = row.get(5)?;
    let config = store::parse_config(&config).map_err(|e| conversion(5, e))?;
    // SQLite stores a NaN coordinate as NULL; it reads back as NaN.
    let x: Option<f64> = row.get(6)?;
    let y: Option<f64> = row.get(7)?;
    Ok(AgentRecord {
        agent_id: row.get(0)?,
        name: row.get(1)?,
        role: row.get(2)?,
        prompt: row.get(3)?,
        brain: row.get(4)?,
        config,
        position: Position::new(x.unwrap_or(f64::NAN), y.unwrap_or(f64::NAN)),
        state: state_at(row, 8)?,
        created_at: row.get(9)?,
        removed_at: row.get(10)?,
    })
}

pub(crate) fn recent_conversation(
    conn: &Connection,
    agent_id: &str,
    limit: usize,
) -> rusqlite::Result<Vec<ConversationRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_id, timestamp, sender, content, recipient FROM (
             SELECT id, agent_id, timestamp, sender, content, recipient
             FROM agent_conversations WHERE agent_id = ?1 ORDER BY id DESC LIMIT ?2
         ) ORDER BY id ASC",
    )?;
    let rows = stmt.query_map(params![agent_id, limit_of(limit)], conversation_row)?;
    rows.collect()
}

/// The newest `limit` lines of an agent with an id below `before`, oldest first; `next` is the
/// oldest id returned when older lines remain.
pub(crate) fn conversation_before(
    conn: &Connection,
    agent_id: &str,
    before: i64,
    limit: usize,
) -> rusqlite::Result<Page<ConversationRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_id, timestamp, sender, content, recipient
         FROM agent_conversations WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        params![agent_id, before, limit_of(limit.saturating_add(1))],
        conversation_row,
    )?;
    Ok(newest_first_page(
        rows.collect::<rusqlite::Result<_>>()?,
        limit,
        |r| r.id,
    ))
}

/// The newest `limit` transitions of an agent with an id below `before`, oldest first.
pub(crate) fn state_history_before(
    conn: &Connection,
    agent_id: &str,
    before: i64,
    limit: usize,
) -> rusqlite::Result<Page<StateChangeRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_id, old_state, new_state, timestamp
         FROM agent_state_history WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(
        params![agent_id, before, limit_of(limit.saturating_add(1))],
        state_change_row,
    )?;
    Ok(newest_first_page(
        rows.collect::<rusqlite::Result<_>>()?,
        limit,
        |r| r.id,
    ))
}

/// An agent's tasks with an id above `after`, oldest first.
pub(crate) fn tasks_after(
    conn: &Connection,
    agent_id: &str,
    after: i64,
    limit: usize,
) -> rusqlite::Result<Page<TaskRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {TASK_COLUMNS} FROM agent_tasks WHERE agent_id = ?1 AND id > ?2 ORDER BY id ASC LIMIT ?3"
    ))?;
    let rows = stmt.query_map(
        params![agent_id, after, limit_of(limit.saturating_add(1))],
        |row| Ok((task_row(row)?, row.get::<_, i64>(0)?)),
    )?;
    Ok(oldest_first_page(
        rows.collect::<rusqlite::Result<_>>()?,
        limit,
    ))
}

/// Stored agents with an agent number above `after`, by number.
pub(crate) fn agents_after(
    conn: &Connection,
    after: i64,
    limit: usize,
) -> rusqlite::Result<Page<AgentRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS}, seq FROM agents WHERE seq > ?1 ORDER BY seq ASC LIMIT ?2"
    ))?;
    let columns = stmt.column_count();
    let rows = stmt.query_map(params![after, limit_of(limit.saturating_add(1))], |row| {
        Ok((agent_row(row)?, row.get::<_, i64>(columns - 1)?))
    })?;
    Ok(oldest_first_page(
        rows.collect::<rusqlite::Result<_>>()?,
        limit,
    ))
}

pub(crate) fn tasks(conn: &Connection, agent_id: &str) -> rusqlite::Result<Vec<TaskRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {TASK_COLUMNS} FROM agent_tasks WHERE agent_id = ?1 ORDER BY id ASC"
    ))?;
    let rows = stmt.query_map(params![agent_id], task_row)?;
    rows.collect()
}

pub(crate) fn state_history(
    conn: &Connection,
    agent_id: &str,
    limit: usize,
) -> rusqlite::Result<Vec<StateChangeRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_id, old_state, new_state, timestamp FROM (
             SELECT id, agent_id, old_state, new_state, timestamp
             FROM agent_state_history WHERE agent_id = ?1 ORDER BY id DESC LIMIT ?2
         ) ORDER BY id ASC",
    )?;
    let rows = stmt.query_map(params![agent_id, limit_of(limit)], state_change_row)?;
    rows.collect()
}

/// A page of an agent's traced calls: the newest `limit` with an id below `before`, in time
/// order.
pub(crate) fn brain_calls_before(
    conn: &Connection,
    agent_id: &str,
    before: i64,
    limit: usize,
) -> rusqlite::Result<Page<BrainCallRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_id, provider, model, started_at, latency_ms, input_tokens,
                output_tokens, cached_tokens, outcome, repairs, error_code, prompt, reply
         FROM brain_calls WHERE agent_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
    )?;
    let count = |row: &Row<'_>, i: usize| -> rusqlite::Result<u64> {
        Ok(u64::try_from(row.get::<_, i64>(i)?).unwrap_or(0))
    };
    let rows = stmt.query_map(
        params![agent_id, before, limit_of(limit.saturating_add(1))],
        |row| {
            let outcome: String = row.get(9)?;
            Ok(BrainCallRow {
                id: row.get(0)?,
                call: BrainCall {
                    agent_id: row.get(1)?,
                    provider: row.get(2)?,
                    model: row.get(3)?,
                    started_at: row.get(4)?,
                    latency_ms: count(row, 5)?,
                    input_tokens: count(row, 6)?,
                    output_tokens: count(row, 7)?,
                    cached_tokens: count(row, 8)?,
                    outcome: store::parse_outcome(&outcome).map_err(|e| conversion(9, e))?,
                    repairs: row.get(10)?,
                    error_code: row.get(11)?,
                    prompt: row.get(12)?,
                    reply: row.get(13)?,
                },
            })
        },
    )?;
    Ok(newest_first_page(
        rows.collect::<rusqlite::Result<_>>()?,
        limit,
        |r| r.id,
    ))
}

pub(crate) fn agent(conn: &Connection, agent_id: &str) -> rusqlite::Result<Option<AgentRecord>> {
    conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE agent_id = ?1"
    ))?
    .query_row(params![agent_id], agent_row)
    .optional()
}

/// The newest agent, not terminated, whose config has this key (index `idx_agents_key`).
fn agent_by_key(conn: &Connection, key: &str) -> rusqlite::Result<Option<AgentRecord>> {
    conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents
         WHERE agent_key = ?1 AND removed_at IS NULL
         ORDER BY seq DESC LIMIT 1"
    ))?
    .query_row(params![key], agent_row)
    .optional()
}

pub(crate) fn agents(conn: &Connection) -> rusqlite::Result<Vec<AgentRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents ORDER BY seq ASC, agent_id ASC"
    ))?;
    let rows = stmt.query_map([], agent_row)?;
    rows.collect()
}

/// The task with this id, if it exists.
fn task(conn: &Connection, id: i64) -> rusqlite::Result<Option<TaskRow>> {
    conn.prepare_cached(&format!(
        "SELECT {TASK_COLUMNS} FROM agent_tasks WHERE id = ?1"
    ))?
    .query_row(params![id], task_row)
    .optional()
}

fn reserved_to(conn: &Connection, kind: IdKind) -> rusqlite::Result<i64> {
    Ok(conn
        .query_row(
            "SELECT reserved_to FROM id_blocks WHERE kind = ?1",
            [kind.as_str()],
            |r| r.get::<_, i64>(0),
        )
        .optional()?
        .unwrap_or(0))
}

pub(crate) fn load(conn: &Connection) -> rusqlite::Result<Loaded> {
    let last_agent_seq: i64 =
        conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM agents", [], |r| r.get(0))?;
    let max_task_id: i64 =
        conn.query_row("SELECT COALESCE(MAX(id), 0) FROM agent_tasks", [], |r| {
            r.get(0)
        })?;
    let max_inbox_id: i64 =
        conn.query_row("SELECT COALESCE(MAX(id), 0) FROM agent_inbox", [], |r| {
            r.get(0)
        })?;
    let mut stmt = conn.prepare(&format!(
        "SELECT {TASK_COLUMNS} FROM agent_tasks WHERE status = 'assigned' ORDER BY id ASC"
    ))?;
    let open_tasks = stmt
        .query_map([], task_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Loaded {
        last_agent_seq: last_agent_seq.max(reserved_to(conn, IdKind::Agent)?).max(0),
        max_task_id: max_task_id.max(reserved_to(conn, IdKind::Task)?).max(0),
        max_inbox_id: max_inbox_id.max(0),
        open_tasks,
    })
}

/// An agent's unanswered inbox lines, oldest first.
pub(crate) fn inbox(conn: &Connection, agent_id: &str) -> rusqlite::Result<Vec<InboxRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent_id, sender, content, dialog_type, created_at FROM agent_inbox
         WHERE agent_id = ?1 ORDER BY id ASC",
    )?;
    stmt.query_map([agent_id], |row| {
        Ok(InboxRow {
            id: row.get(0)?,
            agent_id: row.get(1)?,
            sender: row.get(2)?,
            content: row.get(3)?,
            dialog_type: row.get(4)?,
            created_at: row.get(5)?,
        })
    })?
    .collect()
}

/// An app's stored session and its last `limit` log entries of each kind.
pub(crate) fn app(
    conn: &Connection,
    app_id: &str,
    limit: usize,
) -> Result<Option<StoredApp>, MemoryError> {
    let row = conn
        .prepare_cached("SELECT state, human_label FROM app_sessions WHERE app_id = ?1")?
        .query_row([app_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })
        .optional()?;
    let Some((state, human_label)) = row else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT entry FROM app_log WHERE app_id = ?1 AND kind = ?2 ORDER BY id DESC LIMIT ?3",
    )?;
    store::stored_app(&state, human_label, |kind| {
        let texts = stmt
            .query_map(params![app_id, kind.as_str(), limit_of(limit)], |r| {
                r.get::<_, String>(0)
            })?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(texts)
    })
    .map(Some)
}

/// How many turns of `campaign_id` are kept.
pub(crate) fn campaign_turn_count(conn: &Connection, campaign_id: &str) -> rusqlite::Result<u64> {
    conn.prepare_cached("SELECT COUNT(*) FROM campaign_turns WHERE campaign_id = ?1")?
        .query_row([campaign_id], |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
}

/// The turn-log entries of `campaign_id` (JSON), oldest first.
pub(crate) fn campaign_turns(
    conn: &Connection,
    campaign_id: &str,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT entry FROM campaign_turns WHERE campaign_id = ?1 ORDER BY id")?;
    let rows = stmt.query_map([campaign_id], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// A reader connection answering [`Queries`].
pub(crate) struct Reader<'a>(pub &'a Connection);

impl Queries for Reader<'_> {
    fn recent_conversation(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError> {
        Ok(recent_conversation(self.0, agent_id, limit)?)
    }
    fn conversation_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<ConversationRow>, MemoryError> {
        Ok(conversation_before(self.0, agent_id, before, limit)?)
    }
    fn state_history(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, MemoryError> {
        Ok(state_history(self.0, agent_id, limit)?)
    }
    fn state_history_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, MemoryError> {
        Ok(state_history_before(self.0, agent_id, before, limit)?)
    }
    fn tasks(&mut self, agent_id: &str) -> Result<Vec<TaskRow>, MemoryError> {
        Ok(tasks(self.0, agent_id)?)
    }
    fn tasks_after(
        &mut self,
        agent_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Page<TaskRow>, MemoryError> {
        Ok(tasks_after(self.0, agent_id, after, limit)?)
    }
    fn task(&mut self, id: i64) -> Result<Option<TaskRow>, MemoryError> {
        Ok(task(self.0, id)?)
    }
    fn agents_after(&mut self, after: i64, limit: usize) -> Result<Page<AgentRecord>, MemoryError> {
        Ok(agents_after(self.0, after, limit)?)
    }
    fn agent(&mut self, agent_id: &str) -> Result<Option<AgentRecord>, MemoryError> {
        Ok(agent(self.0, agent_id)?)
    }
    fn agent_by_key(&mut self, key: &str) -> Result<Option<AgentRecord>, MemoryError> {
        Ok(agent_by_key(self.0, key)?)
    }
    fn agents(&mut self) -> Result<Vec<AgentRecord>, MemoryError> {
        Ok(agents(self.0)?)
    }
    fn brain_calls_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<BrainCallRow>, MemoryError> {
        Ok(brain_calls_before(self.0, agent_id, before, limit)?)
    }
    fn inbox(&mut self, agent_id: &str) -> Result<Vec<InboxRow>, MemoryError> {
        Ok(inbox(self.0, agent_id)?)
    }
    fn app(&mut self, app_id: &str, limit: usize) -> Result<Option<StoredApp>, MemoryError> {
        app(self.0, app_id, limit)
    }
    fn campaign_turn_count(&mut self, campaign_id: &str) -> Result<u64, MemoryError> {
        Ok(campaign_turn_count(self.0, campaign_id)?)
    }
    fn campaign_turns(&mut self, campaign_id: &str) -> Result<Vec<String>, MemoryError> {
        Ok(campaign_turns(self.0, campaign_id)?)
    }
    fn ping(&mut self) -> Result<(), MemoryError> {
        Ok(self.0.query_row("SELECT 1", [], |_| Ok(()))?)
    }
}
