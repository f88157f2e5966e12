//! The reads on a PostgreSQL connection: the SQLite queries with `$n` parameters, and the same
//! mapping of stored rows (a stored string that does not parse is an error, never a panic).

use tokio_postgres::Row;

use super::conn::Conn;
use super::text::{Text, opt_text, text};
use crate::geometry::Position;
use crate::memory::ids::IdKind;
use crate::memory::store::{self, Loaded, Queries, limit_of, newest_first_page, oldest_first_page};
use crate::memory::{
    AgentRecord, BrainCall, BrainCallRow, ConversationRow, InboxRow, MemoryError, Page,
    StateChangeRow, StoredApp, TaskRow,
};

/// A connection answering [`Queries`].
pub(crate) struct Reader<'a>(pub &'a mut Conn);

fn task_row(row: &Row) -> Result<TaskRow, MemoryError> {
    Ok(TaskRow {
        id: row.try_get(0)?,
        agent_id: text(row, 1)?,
        task_name: text(row, 2)?,
        status: store::parse_status(row.try_get(3)?)?,
        created_at: text(row, 4)?,
        completed_at: opt_text(row, 5)?,
    })
}

fn conversation_row(row: &Row) -> Result<ConversationRow, MemoryError> {
    Ok(ConversationRow {
        id: row.try_get(0)?,
        agent_id: text(row, 1)?,
        timestamp: text(row, 2)?,
        sender: text(row, 3)?,
        content: text(row, 4)?,
        recipient: opt_text(row, 5)?,
    })
}

fn state_change_row(row: &Row) -> Result<StateChangeRow, MemoryError> {
    Ok(StateChangeRow {
        id: row.try_get(0)?,
        agent_id: text(row, 1)?,
        old_state: store::parse_state(row.try_get(2)?)?,
        new_state: store::parse_state(row.try_get(3)?)?,
        timestamp: text(row, 4)?,
    })
}

fn agent_row(row: &Row) -> Result<AgentRecord, MemoryError> {
    let x: Option<f64> = row.try_get(6)?;
    let y: Option<f64> = row.try_get(7)?;
    Ok(AgentRecord {
        agent_id: text(row, 0)?,
        name: text(row, 1)?,
        role: text(row, 2)?,
        prompt: text(row, 3)?,
        brain: text(row, 4)?,
        config: store::parse_config(&text(row, 5)?)?,
        position: Position::new(x.unwrap_or(f64::NAN), y.unwrap_or(f64::NAN)),
        state: store::parse_state(row.try_get(8)?)?,
        created_at: text(row, 9)?,
        removed_at: opt_text(row, 10)?,
    })
}

fn rows<T>(
    rows: Vec<Row>,
    map: impl Fn(&Row) -> Result<T, MemoryError>,
) -> Result<Vec<T>, MemoryError> {
    rows.iter().map(map).collect()
}

/// What opening the database finds (see [`Loaded`]).
pub(crate) fn load(conn: &mut Conn) -> Result<Loaded, MemoryError> {
    let max = |conn: &mut Conn, sql: &'static str| -> Result<i64, MemoryError> {
        let row = conn.query_opt(sql, &[])?;
        Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)).unwrap_or(0))
    };
    let reserved = |conn: &mut Conn, kind: IdKind| -> Result<i64, MemoryError> {
        let row = conn.query_opt(
            "SELECT reserved_to FROM id_blocks WHERE kind = $1",
            &[&kind.as_str()],
        )?;
        Ok(row.map_or(0, |r| r.get::<_, i64>(0)))
    };
    let last_agent_seq = max(conn, "SELECT MAX(seq) FROM agents")?
        .max(reserved(conn, IdKind::Agent)?)
        .max(0);
    let max_task_id = max(conn, "SELECT MAX(id) FROM agent_tasks")?
        .max(reserved(conn, IdKind::Task)?)
        .max(0);
    let max_inbox_id = max(conn, "SELECT MAX(id) FROM agent_inbox")?
        .max(reserved(conn, IdKind::Inbox)?)
        .max(0);
    let open = conn.query(
        "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
         WHERE status = 'assigned' ORDER BY id ASC",
        &[],
    )?;
    Ok(Loaded {
        last_agent_seq,
        max_task_id,
        max_inbox_id,
        open_tasks: rows(open, task_row)?,
    })
}

/// Claims the next `count` ids of `kind` above `floor` (and above every claim of every other
/// process): returns the last id of the claim; the claim is `last - count + 1 ..= last`. The
/// row lock of `id_blocks` orders concurrent claims; a claim is committed when this returns.
pub(crate) fn claim(
    conn: &mut Conn,
    kind: IdKind,
    floor: i64,
    count: i64,
) -> Result<i64, MemoryError> {
    let row = conn.query_opt(
        "INSERT INTO id_blocks (kind, reserved_to) VALUES ($1, $2::BIGINT + $3::BIGINT)
         ON CONFLICT (kind) DO UPDATE SET
             reserved_to = GREATEST(id_blocks.reserved_to, $2::BIGINT) + $3::BIGINT
         RETURNING reserved_to",
        &[&kind.as_str(), &floor, &count],
    )?;
    row.map(|r| r.get::<_, i64>(0))
        .ok_or_else(|| MemoryError::WriteFailed("id claim returned no row".to_string()))
}

/// Marks a task completed if it is still `assigned` (committed when this returns); the task
/// as it is now, or `None` when it is not open (completed already, or unknown).
pub(crate) fn complete_task(
    conn: &mut Conn,
    id: i64,
    completed_at: &str,
) -> Result<Option<TaskRow>, MemoryError> {
    let row = conn.query_opt(
        "UPDATE agent_tasks SET status = 'completed', completed_at = $2
         WHERE id = $1 AND status = 'assigned'
         RETURNING id, agent_id, task_name, status, created_at, completed_at",
        &[&id, &Text(completed_at)],
    )?;
    row.as_ref().map(task_row).transpose()
}

/// Gives back the unused end of the last claim (`last + 1 ..= claimed_to`) if no process has
/// claimed after it, so that a clean restart continues without a gap.
pub(crate) fn release(
    conn: &mut Conn,
    kind: IdKind,
    last: i64,
    claimed_to: i64,
) -> Result<(), MemoryError> {
    conn.query_opt(
        "UPDATE id_blocks SET reserved_to = $2 WHERE kind = $1 AND reserved_to = $3
         RETURNING reserved_to",
        &[&kind.as_str(), &last, &claimed_to],
    )?;
    Ok(())
}

impl Queries for Reader<'_> {
    fn recent_conversation(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, timestamp, sender, content, recipient FROM (
                 SELECT id, agent_id, timestamp, sender, content, recipient
                 FROM agent_conversations WHERE agent_id = $1 ORDER BY id DESC LIMIT $2
             ) AS recent ORDER BY id ASC",
            &[&Text(agent_id), &limit_of(limit)],
        )?;
        rows(found, conversation_row)
    }
    fn conversation_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<ConversationRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, timestamp, sender, content, recipient
             FROM agent_conversations WHERE agent_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
            &[&Text(agent_id), &before, &limit_of(limit.saturating_add(1))],
        )?;
        Ok(newest_first_page(
            rows(found, conversation_row)?,
            limit,
            |r| r.id,
        ))
    }
    fn state_history(
        &mut self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, old_state, new_state, timestamp FROM (
                 SELECT id, agent_id, old_state, new_state, timestamp
                 FROM agent_state_history WHERE agent_id = $1 ORDER BY id DESC LIMIT $2
             ) AS recent ORDER BY id ASC",
            &[&Text(agent_id), &limit_of(limit)],
        )?;
        rows(found, state_change_row)
    }
    fn state_history_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, old_state, new_state, timestamp
             FROM agent_state_history WHERE agent_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
            &[&Text(agent_id), &before, &limit_of(limit.saturating_add(1))],
        )?;
        Ok(newest_first_page(
            rows(found, state_change_row)?,
            limit,
            |r| r.id,
        ))
    }
    fn tasks(&mut self, agent_id: &str) -> Result<Vec<TaskRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
             WHERE agent_id = $1 ORDER BY id ASC",
            &[&Text(agent_id)],
        )?;
        rows(found, task_row)
    }
    fn tasks_after(
        &mut self,
        agent_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Page<TaskRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
             WHERE agent_id = $1 AND id > $2 ORDER BY id ASC LIMIT $3",
            &[&Text(agent_id), &after, &limit_of(limit.saturating_add(1))],
        )?;
        let keyed = rows(found, |row| Ok((task_row(row)?, row.try_get::<_, i64>(0)?)))?;
        Ok(oldest_first_page(keyed, limit))
    }
    fn task(&mut self, id: i64) -> Result<Option<TaskRow>, MemoryError> {
        let found = self.0.query_opt(
            "SELECT id, agent_id, task_name, status, created_at, completed_at FROM agent_tasks
             WHERE id = $1",
            &[&id],
        )?;
        found.as_ref().map(task_row).transpose()
    }
    fn agents_after(&mut self, after: i64, limit: usize) -> Result<Page<AgentRecord>, MemoryError> {
        let found = self.0.query(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at, seq
             FROM agents WHERE seq > $1 ORDER BY seq ASC LIMIT $2",
            &[&after, &limit_of(limit.saturating_add(1))],
        )?;
        let keyed = rows(found, |row| {
            Ok((agent_row(row)?, row.try_get::<_, i64>(11)?))
        })?;
        Ok(oldest_first_page(keyed, limit))
    }
    fn agent(&mut self, agent_id: &str) -> Result<Option<AgentRecord>, MemoryError> {
        let found = self.0.query_opt(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at
             FROM agents WHERE agent_id = $1",
            &[&Text(agent_id)],
        )?;
        found.as_ref().map(agent_row).transpose()
    }
    fn agent_by_key(&mut self, key: &str) -> Result<Option<AgentRecord>, MemoryError> {
        let found = self.0.query_opt(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at
             FROM agents WHERE agent_key = $1 AND removed_at IS NULL
             ORDER BY seq DESC LIMIT 1",
            &[&Text(key)],
        )?;
        found.as_ref().map(agent_row).transpose()
    }
    fn agents(&mut self) -> Result<Vec<AgentRecord>, MemoryError> {
        let found = self.0.query(
            "SELECT agent_id, name, role, prompt, brain, config, x, y, state, created_at,
                    removed_at
             FROM agents ORDER BY seq ASC, agent_id ASC",
            &[],
        )?;
        rows(found, agent_row)
    }
    fn brain_calls_before(
        &mut self,
        agent_id: &str,
        before: i64,
        limit: usize,
    ) -> Result<Page<BrainCallRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, provider, model, started_at, latency_ms, input_tokens,
                    output_tokens, cached_tokens, outcome, repairs, error_code, prompt, reply
             FROM brain_calls WHERE agent_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
            &[&Text(agent_id), &before, &limit_of(limit.saturating_add(1))],
        )?;
        let count = |row: &Row, i: usize| -> Result<u64, MemoryError> {
            Ok(u64::try_from(row.try_get::<_, i64>(i)?).unwrap_or(0))
        };
        let calls = rows(found, |row| {
            Ok(BrainCallRow {
                id: row.try_get(0)?,
                call: BrainCall {
                    agent_id: text(row, 1)?,
                    provider: text(row, 2)?,
                    model: opt_text(row, 3)?,
                    started_at: text(row, 4)?,
                    latency_ms: count(row, 5)?,
                    input_tokens: count(row, 6)?,
                    output_tokens: count(row, 7)?,
                    cached_tokens: count(row, 8)?,
                    outcome: store::parse_outcome(row.try_get(9)?)?,
                    repairs: u32::try_from(row.try_get::<_, i64>(10)?).unwrap_or(u32::MAX),
                    error_code: opt_text(row, 11)?,
                    prompt: opt_text(row, 12)?,
                    reply: opt_text(row, 13)?,
                },
            })
        })?;
        Ok(newest_first_page(calls, limit, |r| r.id))
    }
    fn inbox(&mut self, agent_id: &str) -> Result<Vec<InboxRow>, MemoryError> {
        let found = self.0.query(
            "SELECT id, agent_id, sender, content, dialog_type, created_at FROM agent_inbox
             WHERE agent_id = $1 ORDER BY id ASC",
            &[&Text(agent_id)],
        )?;
        rows(found, |row| {
            Ok(InboxRow {
                id: row.try_get(0)?,
                agent_id: text(row, 1)?,
                sender: text(row, 2)?,
                content: text(row, 3)?,
                dialog_type: text(row, 4)?,
                created_at: text(row, 5)?,
            })
        })
    }
    fn app(&mut self, app_id: &str, limit: usize) -> Result<Option<StoredApp>, MemoryError> {
        let Some(row) = self.0.query_opt(
            "SELECT state, human_label FROM app_sessions WHERE app_id = $1",
            &[&Text(app_id)],
        )?
        else {
            return Ok(None);
        };
        let state = text(&row, 0)?;
        let human_label = opt_text(&row, 1)?;
        let conn = &mut *self.0;
        store::stored_app(&state, human_label, |kind| {
            let found = conn.query(
                "SELECT entry FROM app_log WHERE app_id = $1 AND kind = $2
                 ORDER BY id DESC LIMIT $3",
                &[&Text(app_id), &kind.as_str(), &limit_of(limit)],
            )?;
            rows(found, |r| text(r, 0))
        })
        .map(Some)
    }
    fn campaign_turn_count(&mut self, campaign_id: &str) -> Result<u64, MemoryError> {
        let found = self.0.query_opt(
            "SELECT COUNT(*) FROM campaign_turns WHERE campaign_id = $1",
            &[&Text(campaign_id)],
        )?;
        Ok(found.map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
    }
    fn campaign_turns(&mut self, campaign_id: &str) -> Result<Vec<String>, MemoryError> {
        let found = self.0.query(
            "SELECT entry FROM campaign_turns WHERE campaign_id = $1 ORDER BY id",
            &[&Text(campaign_id)],
        )?;
        rows(found, |r| text(r, 0))
    }
    fn ping(&mut self) -> Result<(), MemoryError> {
        self.0.query_opt("SELECT 1", &[])?;
        Ok(())
    }
}
