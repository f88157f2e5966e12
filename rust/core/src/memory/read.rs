//! Queries on a reader connection, and the mapping of stored rows to the row types.
//!
//! A stored string that does not parse (an unknown state or task status, invalid JSON config) is
//! an error ([`rusqlite::Error::FromSqlConversionFailure`]), never a panic.

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::ids::IdKind;
use super::{
    AgentRecord, BrainCall, BrainCallRow, ConversationRow, InboxRow, Page, StateChangeRow, TaskRow,
    TaskStatus,
};
use crate::agent_state::AgentState;
use crate::geometry::Position;

fn conversion(
    index: usize,
    error: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(error))
}

/// A stored task status that is neither `assigned` nor `completed`.
#[derive(Debug, thiserror::Error)]
#[error("unknown task status '{0}'")]
struct BadStatus(String);

fn state_at(row: &Row<'_>, index: usize) -> rusqlite::Result<AgentState> {
    let text: String = row.get(index)?;
    text.parse().map_err(|e| conversion(index, e))
}

fn status_at(row: &Row<'_>, index: usize) -> rusqlite::Result<TaskStatus> {
    let text: String = row.get(index)?;
    match text.as_str() {
        "assigned" => Ok(TaskStatus::Assigned),
        "completed" => Ok(TaskStatus::Completed),
        _ => Err(conversion(index, BadStatus(text))),
    }
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
    let config = serde_json::from_str(&config).map_err(|e| conversion(5, e))?;
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

/// SQLite's `LIMIT` takes an `i64`.
fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
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
    newest_first_page(rows.collect::<rusqlite::Result<_>>()?, limit, |r| r.id)
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
    newest_first_page(rows.collect::<rusqlite::Result<_>>()?, limit, |r| r.id)
}

/// Rows read newest first (`limit + 1` of them at most) as a page in time order.
fn newest_first_page<T>(
    mut rows: Vec<T>,
    limit: usize,
    id: impl Fn(&T) -> i64,
) -> rusqlite::Result<Page<T>> {
    let more = rows.len() > limit;
    rows.truncate(limit);
    rows.reverse();
    let next = if more { rows.first().map(&id) } else { None };
    Ok(Page { rows, next })
}

/// Rows read in order (`limit + 1` of them at most) as a page.
fn oldest_first_page<T>(mut rows: Vec<(T, i64)>, limit: usize) -> Page<T> {
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
                    outcome: outcome
                        .parse()
                        .map_err(|e: String| conversion(9, BadText(e)))?,
                    repairs: row.get(10)?,
                    error_code: row.get(11)?,
                    prompt: row.get(12)?,
                    reply: row.get(13)?,
                },
            })
        },
    )?;
    newest_first_page(rows.collect::<rusqlite::Result<_>>()?, limit, |r| r.id)
}

/// A stored text that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadText(String);

pub(crate) fn agent(conn: &Connection, agent_id: &str) -> rusqlite::Result<Option<AgentRecord>> {
    conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE agent_id = ?1"
    ))?
    .query_row(params![agent_id], agent_row)
    .optional()
}

pub(crate) fn agents(conn: &Connection) -> rusqlite::Result<Vec<AgentRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {AGENT_COLUMNS} FROM agents ORDER BY seq ASC, agent_id ASC"
    ))?;
    let rows = stmt.query_map([], agent_row)?;
    rows.collect()
}

/// Whether a task row with this id exists (any status).
pub(crate) fn task_exists(conn: &Connection, id: i64) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM agent_tasks WHERE id = ?1")?
        .query_row(params![id], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// What `open` loads: the highest agent number, the highest task id, and the open tasks.
pub(crate) struct Loaded {
    /// The larger of the highest stored agent number and the agent reservation.
    pub last_agent_seq: i64,
    /// The larger of the highest stored task id and the task reservation.
    pub max_task_id: i64,
    /// The highest inbox row id.
    pub max_inbox_id: i64,
    pub open_tasks: Vec<TaskRow>,
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
) -> rusqlite::Result<Option<super::StoredApp>> {
    let row = conn
        .prepare_cached("SELECT state, human_label FROM app_sessions WHERE app_id = ?1")?
        .query_row([app_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })
        .optional()?;
    let Some((state, human_label)) = row else {
        return Ok(None);
    };
    fn entries<T: serde::de::DeserializeOwned>(
        conn: &Connection,
        app_id: &str,
        kind: super::AppLogKind,
        limit: usize,
    ) -> rusqlite::Result<Vec<T>> {
        let mut stmt = conn.prepare_cached(
            "SELECT entry FROM app_log WHERE app_id = ?1 AND kind = ?2 ORDER BY id DESC LIMIT ?3",
        )?;
        let texts = stmt
            .query_map(
                rusqlite::params![app_id, kind.as_str(), limit as i64],
                |r| r.get::<_, String>(0),
            )?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        // Entries this version cannot read (written by a newer one) are skipped.
        Ok(texts
            .iter()
            .rev()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect())
    }
    Ok(Some(super::StoredApp {
        state: serde_json::from_str(&state).unwrap_or(serde_json::Value::Null),
        human_label,
        actions: entries(conn, app_id, super::AppLogKind::Action, limit)?,
        events: entries(conn, app_id, super::AppLogKind::Event, limit)?,
        chat: entries(conn, app_id, super::AppLogKind::Chat, limit)?,
    }))
}
