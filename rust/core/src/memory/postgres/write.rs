//! The PostgreSQL writer's transactions: one transaction per batch, its statements pipelined
//! (sent together, answered together: a batch costs a few round trips, not one per row), and
//! the batch's last sequence number recorded in `memory_writers` in the same transaction.
//!
//! A connection lost while committing is ambiguous (the server may have committed). The sink
//! connects again and reads `memory_writers`: if its batch is there, the batch is committed and
//! is not written twice.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, Statement};

use super::conn::Conn;
use super::text::Text;
use crate::memory::store::Sink;
use crate::memory::writer::{Op, Queued};

/// How long the writer keeps connecting again before the batch counts as failed.
const RECONNECT_FOR: Duration = Duration::from_secs(30);

/// Pause between connection attempts.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// A parameter of a pipelined statement (borrowed from the queued write, or computed).
type Param<'a> = Box<dyn ToSql + Sync + Send + 'a>;

/// The writer's connection and its identity in `memory_writers`.
pub(crate) struct PgSink {
    conn: Conn,
    config: Config,
    writer_id: String,
}

impl PgSink {
    pub(crate) fn new(conn: Conn, config: Config, writer_id: String) -> PgSink {
        PgSink {
            conn,
            config,
            writer_id,
        }
    }

    /// Connects again until it works or [`RECONNECT_FOR`] has passed.
    fn reconnect(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + RECONNECT_FOR;
        loop {
            match Conn::connect(&self.config) {
                Ok(conn) => {
                    self.conn = conn;
                    return Ok(());
                }
                Err(error) if Instant::now() >= deadline => {
                    return Err(format!(
                        "cannot reconnect to PostgreSQL: {}",
                        super::explain(&error)
                    ));
                }
                Err(error) => {
                    tracing::warn!(%error, "memory writer: PostgreSQL unreachable; retrying");
                    std::thread::sleep(RECONNECT_PAUSE);
                }
            }
        }
    }

    /// The last sequence number this writer committed, as the database knows it.
    fn committed_here(&mut self) -> Result<u64, tokio_postgres::Error> {
        let row = self.conn.query_opt(
            "SELECT last_seq FROM memory_writers WHERE writer_id = $1",
            &[&self.writer_id],
        )?;
        Ok(row.map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
    }

    fn try_commit(&mut self, batch: &[Queued]) -> Result<(), tokio_postgres::Error> {
        let mut statements = Vec::with_capacity(batch.len());
        for queued in batch {
            for sql in statements_of(&queued.op) {
                statements.push(self.conn.prepared(sql)?);
            }
        }
        let mark = self.conn.prepared(MARK)?;
        let last = i64::try_from(batch.last().map_or(0, |q| q.seq)).unwrap_or(i64::MAX);
        let writer_id = self.writer_id.as_str();
        self.conn.run(|client| async move {
            client.batch_execute("BEGIN").await?;
            match pipeline(client, &statements, batch, &mark, writer_id, last).await {
                Ok(()) => client.batch_execute("COMMIT").await,
                Err(error) => {
                    let _ = client.batch_execute("ROLLBACK").await;
                    Err(error)
                }
            }
        })?
    }
}

/// Records the batch's last sequence number for this writer.
const MARK: &str = "INSERT INTO memory_writers (writer_id, last_seq) VALUES ($1, $2)
     ON CONFLICT (writer_id) DO UPDATE SET last_seq = excluded.last_seq, updated_at = now()";

impl Sink for PgSink {
    fn commit(&mut self, batch: &[Queued]) -> Result<(), String> {
        let last = batch.last().map_or(0, |q| q.seq);
        match self.try_commit(batch) {
            Ok(()) => Ok(()),
            Err(error) if self.conn.is_closed() || error.is_closed() => {
                tracing::warn!(%error, "memory writer: connection lost during a batch");
                self.reconnect()?;
                match self.committed_here() {
                    Ok(done) if done >= last => Ok(()),
                    Ok(_) => self.try_commit(batch).map_err(|e| super::explain(&e)),
                    Err(error) => Err(super::explain(&error)),
                }
            }
            Err(error) => Err(super::explain(&error)),
        }
    }
}

/// Sends every write of the batch and the mark at once, then waits for all the answers.
async fn pipeline(
    client: &Client,
    statements: &[Statement],
    batch: &[Queued],
    mark: &Statement,
    writer_id: &str,
    last: i64,
) -> Result<(), tokio_postgres::Error> {
    let mut calls = Vec::with_capacity(statements.len() + 1);
    let mut statements = statements.iter();
    for queued in batch {
        for params in params_of(&queued.op) {
            let statement = statements.next().expect("one statement per parameter list");
            calls.push(client.execute_raw(statement, params));
        }
    }
    let mark_params: Vec<Param<'_>> = vec![Box::new(Text(writer_id)), Box::new(last)];
    calls.push(client.execute_raw(mark, mark_params));
    // Every answer is awaited (none left behind on the connection); the first error wins.
    join_all(calls)
        .await
        .into_iter()
        .find_map(Result::err)
        .map_or(Ok(()), Err)
}

/// The SQL of each statement a write runs, in order.
fn statements_of(op: &Op) -> &'static [&'static str] {
    match op {
        Op::Conversation { .. } => &[INSERT_CONVERSATION],
        Op::StateChange { .. } => &[
            "INSERT INTO agent_state_history (agent_id, old_state, new_state, timestamp, process)
             VALUES ($1, $2, $3, $4, $5)",
        ],
        Op::AssignTask { .. } => &[
            "INSERT INTO agent_tasks (id, agent_id, task_name, status, created_at, completed_at)
             VALUES ($1, $2, $3, 'assigned', $4, NULL)",
        ],
        Op::CompleteTask { .. } => &[
            "UPDATE agent_tasks SET status = 'completed', completed_at = $2
             WHERE id = $1 AND status = 'assigned'",
        ],
        Op::SaveAgent(_) => &[
            "INSERT INTO agents (agent_id, seq, name, role, prompt, brain, config, x, y, state,
                                 created_at, updated_at, removed_at, agent_key)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
             ON CONFLICT (agent_id) DO UPDATE SET
                 name = excluded.name, role = excluded.role, prompt = excluded.prompt,
                 brain = excluded.brain, config = excluded.config, x = excluded.x,
                 y = excluded.y, state = excluded.state, updated_at = excluded.updated_at,
                 removed_at = excluded.removed_at, agent_key = excluded.agent_key",
        ],
        Op::AgentPosition { .. } => {
            &["UPDATE agents SET x = $2, y = $3, state = $4, updated_at = $5 WHERE agent_id = $1"]
        }
        Op::AgentRemoved { .. } => {
            &["UPDATE agents SET removed_at = $2, updated_at = $2 WHERE agent_id = $1"]
        }
        Op::BrainCall(_) => &[
            "INSERT INTO brain_calls (agent_id, provider, model, started_at, latency_ms,
                 input_tokens, output_tokens, cached_tokens, outcome, repairs, error_code,
                 prompt, reply)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        ],
        Op::App(_) => &[
            "INSERT INTO app_sessions (app_id, agent_id, mode, control_mode, role_prompt,
                 human_label, state, actions, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (app_id) DO UPDATE SET
                 agent_id = excluded.agent_id, mode = excluded.mode,
                 control_mode = excluded.control_mode, role_prompt = excluded.role_prompt,
                 human_label = excluded.human_label, state = excluded.state,
                 actions = excluded.actions, updated_at = excluded.updated_at",
        ],
        // Only the newest MAX_APP_LOG_ROWS of the app's rows of this kind are kept.
        Op::AppLog { .. } => &[
            "INSERT INTO app_log (app_id, kind, entry) VALUES ($1, $2, $3)",
            "DELETE FROM app_log WHERE app_id = $1 AND kind = $2 AND id <= (
             SELECT id FROM app_log WHERE app_id = $1 AND kind = $2 ORDER BY id DESC
             LIMIT 1 OFFSET $3)",
        ],
        Op::CampaignTurn { .. } => {
            &["INSERT INTO campaign_turns (campaign_id, turn_id, entry) VALUES ($1, $2, $3)"]
        }
        // Ids are claimed from `id_blocks` by the store itself here (several processes share
        // the table); the writer's reservations are SQLite's way.
        Op::IdBlock { .. } => &[],
        Op::Inbox(_) => &[
            "INSERT INTO agent_inbox (id, agent_id, sender, content, dialog_type, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
            INSERT_CONVERSATION,
        ],
        Op::InboxDone { .. } => &["DELETE FROM agent_inbox WHERE id = $1"],
    }
}

const INSERT_CONVERSATION: &str =
    "INSERT INTO agent_conversations (agent_id, timestamp, sender, content, recipient)
     VALUES ($1, $2, $3, $4, $5)";

/// An unsigned count as a `BIGINT`.
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The parameters of each statement of [`statements_of`], in the same order.
fn params_of(op: &Op) -> Vec<Vec<Param<'_>>> {
    fn b<'a, T: ToSql + Sync + Send + 'a>(value: T) -> Param<'a> {
        Box::new(value)
    }
    fn t(value: &str) -> Param<'_> {
        Box::new(Text(value))
    }
    fn ot(value: &Option<String>) -> Param<'_> {
        Box::new(value.as_deref().map(Text))
    }
    match op {
        Op::Conversation {
            agent_id,
            timestamp,
            sender,
            content,
            recipient,
        } => vec![vec![
            t(agent_id),
            t(timestamp),
            t(sender),
            t(content),
            ot(recipient),
        ]],
        Op::StateChange {
            agent_id,
            old,
            new,
            timestamp,
            process,
        } => vec![vec![
            t(agent_id),
            b(old.as_str()),
            b(new.as_str()),
            t(timestamp),
            ot(process),
        ]],
        Op::AssignTask {
            id,
            agent_id,
            task_name,
            created_at,
        } => vec![vec![b(id), t(agent_id), t(task_name), t(created_at)]],
        Op::CompleteTask { id, completed_at } => vec![vec![b(id), t(completed_at)]],
        Op::SaveAgent(a) => vec![vec![
            t(&a.agent_id),
            b(a.seq),
            t(&a.name),
            t(&a.role),
            t(&a.prompt),
            t(&a.brain),
            t(&a.config),
            b(a.x),
            b(a.y),
            b(a.state.as_str()),
            t(&a.created_at),
            t(&a.updated_at),
            ot(&a.removed_at),
            ot(&a.key),
        ]],
        Op::AgentPosition {
            agent_id,
            x,
            y,
            state,
            updated_at,
        } => vec![vec![
            t(agent_id),
            b(x),
            b(y),
            b(state.as_str()),
            t(updated_at),
        ]],
        Op::AgentRemoved {
            agent_id,
            removed_at,
        } => vec![vec![t(agent_id), t(removed_at)]],
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
            vec![vec![
                t(agent_id),
                t(provider),
                ot(model),
                t(started_at),
                b(int(*latency_ms)),
                b(int(*input_tokens)),
                b(int(*output_tokens)),
                b(int(*cached_tokens)),
                b(outcome.as_str()),
                b(i64::from(*repairs)),
                ot(error_code),
                ot(prompt),
                ot(reply),
            ]]
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
            vec![vec![
                t(app_id),
                ot(agent_id),
                t(mode),
                t(control_mode),
                t(role_prompt),
                ot(human_label),
                t(state),
                t(actions),
                t(updated_at),
            ]]
        }
        Op::AppLog {
            app_id,
            kind,
            entry,
        } => vec![
            vec![t(app_id), b(kind.as_str()), t(entry)],
            vec![
                t(app_id),
                b(kind.as_str()),
                b(i64::try_from(crate::limits::MAX_APP_LOG_ROWS).unwrap_or(i64::MAX)),
            ],
        ],
        Op::CampaignTurn {
            campaign_id,
            turn_id,
            entry,
        } => vec![vec![t(campaign_id), t(turn_id), t(entry)]],
        Op::IdBlock { .. } => vec![],
        Op::Inbox(line) => vec![
            vec![
                b(line.id),
                t(&line.agent_id),
                t(&line.sender),
                t(&line.content),
                t(&line.dialog_type),
                t(&line.created_at),
            ],
            vec![
                t(&line.agent_id),
                t(&line.created_at),
                t(&line.sender),
                t(&line.content),
                t(&line.agent_id),
            ],
        ],
        Op::InboxDone { id } => vec![vec![b(id)]],
    }
}
