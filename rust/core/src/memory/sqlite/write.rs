//! The SQLite writer's transactions: one `IMMEDIATE` transaction per batch, one cached
//! statement per kind of write.

use rusqlite::{Connection, TransactionBehavior, params};

use crate::memory::store::Sink;
use crate::memory::writer::{Op, Queued};

/// Removes an app's rows of one kind (`?1`, `?2`) older than its newest `?3`: the row `?3`
/// places back from the newest and every row before it (the index `idx_app_log` walks them).
const PRUNE_APP_LOG: &str = "DELETE FROM app_log WHERE app_id = ?1 AND kind = ?2 AND id <= (
     SELECT id FROM app_log WHERE app_id = ?1 AND kind = ?2 ORDER BY id DESC LIMIT 1 OFFSET ?3)";

/// The writing connection.
pub(crate) struct SqliteSink(pub Connection);

impl Sink for SqliteSink {
    fn commit(&mut self, batch: &[Queued]) -> Result<(), String> {
        commit(&mut self.0, batch).map_err(|e| e.to_string())
    }
}

fn commit(conn: &mut Connection, batch: &[Queued]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for queued in batch {
        apply(&tx, &queued.op)?;
    }
    tx.commit()
}

fn apply(conn: &Connection, op: &Op) -> rusqlite::Result<()> {
    match op {
        Op::Conversation {
            agent_id,
            timestamp,
            sender,
            content,
            recipient,
        } => {
            conn.prepare_cached(
                "INSERT INTO agent_conversations (agent_id, timestamp, sender, content, recipient)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![agent_id, timestamp, sender, content, recipient])?;
        }
        Op::StateChange {
            agent_id,
            old,
            new,
            timestamp,
            process,
        } => {
            conn.prepare_cached(
                "INSERT INTO agent_state_history (agent_id, old_state, new_state, timestamp, process)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![agent_id, old.as_str(), new.as_str(), timestamp, process])?;
        }
        Op::AssignTask {
            id,
            agent_id,
            task_name,
            created_at,
        } => {
            conn.prepare_cached(
                "INSERT INTO agent_tasks (id, agent_id, task_name, status, created_at, completed_at)
                 VALUES (?1, ?2, ?3, 'assigned', ?4, NULL)",
            )?
            .execute(params![id, agent_id, task_name, created_at])?;
        }
        Op::CompleteTask { id, completed_at } => {
            conn.prepare_cached(
                "UPDATE agent_tasks SET status = 'completed', completed_at = ?2
                 WHERE id = ?1 AND status = 'assigned'",
            )?
            .execute(params![id, completed_at])?;
        }
        Op::SaveAgent(a) => {
            conn.prepare_cached(
                "INSERT INTO agents (agent_id, seq, name, role, prompt, brain, config, x, y, state,
                                     created_at, updated_at, removed_at, agent_key)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                 ON CONFLICT (agent_id) DO UPDATE SET
                     name = excluded.name, role = excluded.role, prompt = excluded.prompt,
                     brain = excluded.brain, config = excluded.config, x = excluded.x,
                     y = excluded.y, state = excluded.state, updated_at = excluded.updated_at,
                     removed_at = excluded.removed_at, agent_key = excluded.agent_key",
            )?
            .execute(params![
                a.agent_id,
                a.seq,
                a.name,
                a.role,
                a.prompt,
                a.brain,
                a.config,
                a.x,
                a.y,
                a.state.as_str(),
                a.created_at,
                a.updated_at,
                a.removed_at,
                a.key
            ])?;
        }
        Op::AgentPosition {
            agent_id,
            x,
            y,
            state,
            updated_at,
        } => {
            conn.prepare_cached(
                "UPDATE agents SET x = ?2, y = ?3, state = ?4, updated_at = ?5 WHERE agent_id = ?1",
            )?
            .execute(params![agent_id, x, y, state.as_str(), updated_at])?;
        }
        Op::App(row) => {
            let crate::memory::AppRow {
                app_id,
                agent_id,
                mode,
                control_mode,
                role_prompt,
                human_label,
                state,
                actions,
                updated_at,
            } = &**row;
            conn.prepare_cached(
                "INSERT OR REPLACE INTO app_sessions (app_id, agent_id, mode, control_mode,
                     role_prompt, human_label, state, actions, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                app_id,
                agent_id,
                mode,
                control_mode,
                role_prompt,
                human_label,
                state,
                actions,
                updated_at
            ])?;
        }
        Op::AppLog {
            app_id,
            kind,
            entry,
        } => {
            conn.prepare_cached("INSERT INTO app_log (app_id, kind, entry) VALUES (?1, ?2, ?3)")?
                .execute(params![app_id, kind.as_str(), entry])?;
            // Only the newest MAX_APP_LOG_ROWS of the app's rows of this kind are kept.
            conn.prepare_cached(PRUNE_APP_LOG)?.execute(params![
                app_id,
                kind.as_str(),
                crate::limits::MAX_APP_LOG_ROWS as i64
            ])?;
        }
        Op::CampaignTurn {
            campaign_id,
            turn_id,
            entry,
        } => {
            conn.prepare_cached(
                "INSERT INTO campaign_turns (campaign_id, turn_id, entry) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![campaign_id, turn_id, entry])?;
        }
        Op::BrainCall(call) => {
            let crate::memory::BrainCall {
                agent_id,
                provider,
                model,
                started_at,
                latency_ms,
                input_tokens,
                output_tokens,
                cached_tokens,
                outcome,
                repairs,
                error_code,
                prompt,
                reply,
            } = &**call;
            let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
            conn.prepare_cached(
                "INSERT INTO brain_calls (agent_id, provider, model, started_at, latency_ms,
                     input_tokens, output_tokens, cached_tokens, outcome, repairs, error_code,
                     prompt, reply)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?
            .execute(params![
                agent_id,
                provider,
                model,
                started_at,
                int(*latency_ms),
                int(*input_tokens),
                int(*output_tokens),
                int(*cached_tokens),
                outcome.as_str(),
                repairs,
                error_code,
                prompt,
                reply
            ])?;
        }
        Op::AgentRemoved {
            agent_id,
            removed_at,
        } => {
            conn.prepare_cached(
                "UPDATE agents SET removed_at = ?2, updated_at = ?2 WHERE agent_id = ?1",
            )?
            .execute(params![agent_id, removed_at])?;
        }
        Op::IdBlock { kind, to, release } => {
            let sql = if *release {
                "INSERT INTO id_blocks (kind, reserved_to) VALUES (?1, ?2)
                 ON CONFLICT (kind) DO UPDATE SET reserved_to = excluded.reserved_to"
            } else {
                "INSERT INTO id_blocks (kind, reserved_to) VALUES (?1, ?2)
                 ON CONFLICT (kind) DO UPDATE SET
                     reserved_to = MAX(reserved_to, excluded.reserved_to)"
            };
            conn.prepare_cached(sql)?
                .execute(params![kind.as_str(), to])?;
        }
        Op::Inbox(line) => {
            conn.prepare_cached(
                "INSERT INTO agent_inbox (id, agent_id, sender, content, dialog_type, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                line.id,
                line.agent_id,
                line.sender,
                line.content,
                line.dialog_type,
                line.created_at
            ])?;
            conn.prepare_cached(
                "INSERT INTO agent_conversations (agent_id, timestamp, sender, content, recipient)
                 VALUES (?1, ?2, ?3, ?4, ?1)",
            )?
            .execute(params![
                line.agent_id,
                line.created_at,
                line.sender,
                line.content
            ])?;
        }
        Op::InboxDone { id } => {
            conn.prepare_cached("DELETE FROM agent_inbox WHERE id = ?1")?
                .execute(params![id])?;
        }
    }
    Ok(())
}
