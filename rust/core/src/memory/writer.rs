//! The writer thread: the only writing connection, batched transactions, and the published
//! `committed_seq`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_channel::Receiver;
use parking_lot::{Condvar, Mutex};
use rusqlite::{Connection, TransactionBehavior, params};

use super::MemoryError;
use super::ids::IdKind;
use crate::agent_state::AgentState;

/// Most operations committed in one transaction.
pub(crate) const MAX_BATCH: usize = 8_192;

/// Pause before the one retry of a failed batch (lets a transient condition pass).
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// One queued write. Every timestamp was taken when the write was queued.
#[derive(Debug)]
pub(crate) enum Op {
    Conversation {
        agent_id: String,
        timestamp: String,
        sender: String,
        content: String,
        recipient: Option<String>,
    },
    StateChange {
        agent_id: String,
        old: AgentState,
        new: AgentState,
        timestamp: String,
    },
    AssignTask {
        id: i64,
        agent_id: String,
        task_name: String,
        created_at: String,
    },
    CompleteTask {
        id: i64,
        completed_at: String,
    },
    SaveAgent(Box<SaveAgent>),
    AgentPosition {
        agent_id: String,
        x: f64,
        y: f64,
        state: AgentState,
        updated_at: String,
    },
    AgentRemoved {
        agent_id: String,
        removed_at: String,
    },
    BrainCall(Box<super::BrainCall>),
    App(Box<super::AppRow>),
    AppLog {
        app_id: String,
        kind: super::AppLogKind,
        entry: String,
    },
    CampaignTurn {
        campaign_id: String,
        turn_id: String,
        entry: String,
    },
    /// A reservation of ids up to `to` (see `ids.rs`); a `release` sets it back to `to`
    /// (clean close), otherwise it only ever grows.
    IdBlock {
        kind: IdKind,
        to: i64,
        release: bool,
    },
    /// A line accepted for an agent: its inbox row and its conversation row, in one write.
    Inbox(Box<InboxLine>),
    /// The inbox line was answered.
    InboxDone {
        id: i64,
    },
}

/// A line accepted for an agent (see [`Op::Inbox`]).
#[derive(Debug)]
pub(crate) struct InboxLine {
    pub id: i64,
    pub agent_id: String,
    pub sender: String,
    pub content: String,
    pub dialog_type: String,
    pub created_at: String,
}

/// An agent's resume record, ready to bind.
#[derive(Debug)]
pub(crate) struct SaveAgent {
    pub agent_id: String,
    pub seq: i64,
    pub name: String,
    pub role: String,
    pub prompt: String,
    pub brain: String,
    pub config: String,
    pub x: f64,
    pub y: f64,
    pub state: AgentState,
    pub created_at: String,
    pub updated_at: String,
    pub removed_at: Option<String>,
}

/// An operation with its sequence number (allocated in submission order).
#[derive(Debug)]
pub(crate) struct Queued {
    pub seq: u64,
    pub op: Op,
}

/// What the writer publishes: how far it has committed, whether it failed, whether it stopped.
pub(crate) struct CommitState {
    committed: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
    watch: tokio::sync::watch::Sender<u64>,
    failed: AtomicBool,
    failure: Mutex<Option<String>>,
    done: AtomicBool,
    batches: AtomicU64,
    ops: AtomicU64,
    largest_batch: AtomicU64,
}

impl CommitState {
    pub(crate) fn new() -> CommitState {
        CommitState {
            committed: AtomicU64::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            watch: tokio::sync::watch::Sender::new(0),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            done: AtomicBool::new(false),
            batches: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            largest_batch: AtomicU64::new(0),
        }
    }

    /// Highest committed sequence number.
    pub(crate) fn committed(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// A receiver of `committed` changes.
    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.watch.subscribe()
    }

    /// The writer's first unrecoverable error, if any.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure.lock().clone()
    }

    /// `(batches, ops, largest batch)` committed so far.
    pub(crate) fn stats(&self) -> (u64, u64, u64) {
        (
            self.batches.load(Ordering::Relaxed),
            self.ops.load(Ordering::Relaxed),
            self.largest_batch.load(Ordering::Relaxed),
        )
    }

    /// Wakes the blocking waiters and the async ones (a watch notification even when the value
    /// did not change: a failure or a stop is news too).
    fn wake(&self) {
        {
            let _guard = self.lock.lock();
            self.cv.notify_all();
        }
        self.watch.send_modify(|_| {});
    }

    /// `Some(Ok)` when `seq` is committed, `Some(Err)` when it never will be (the writer failed
    /// or stopped first), `None` while it may still be.
    pub(crate) fn check(&self, seq: u64) -> Option<Result<(), MemoryError>> {
        if self.committed() >= seq {
            return Some(Ok(()));
        }
        if self.failed.load(Ordering::Acquire) {
            let message = self
                .failure()
                .unwrap_or_else(|| "the writer failed".to_string());
            return Some(Err(MemoryError::WriteFailed(message)));
        }
        if self.done.load(Ordering::Acquire) {
            // Re-read: the last batch may have been published just before the stop.
            if self.committed() >= seq {
                return Some(Ok(()));
            }
            return Some(Err(MemoryError::WriteFailed(format!(
                "the writer stopped at sequence {} before {seq}",
                self.committed()
            ))));
        }
        None
    }

    fn publish(&self, seq: u64) {
        self.committed.store(seq, Ordering::Release);
        self.watch.send_replace(seq);
        let _guard = self.lock.lock();
        self.cv.notify_all();
    }

    fn fail(&self, message: String) {
        {
            let mut failure = self.failure.lock();
            if failure.is_none() {
                *failure = Some(message);
            }
        }
        self.failed.store(true, Ordering::Release);
        self.wake();
    }

    /// Blocks until `committed >= seq`. Returns an error instead of waiting forever when the
    /// writer failed or stopped before reaching `seq`.
    pub(crate) fn wait_for(&self, seq: u64) -> Result<(), MemoryError> {
        if self.committed() >= seq {
            return Ok(());
        }
        let mut guard = self.lock.lock();
        loop {
            if let Some(outcome) = self.check(seq) {
                return outcome;
            }
            self.cv.wait(&mut guard);
        }
    }

    /// Like [`CommitState::wait_for`], without blocking a thread.
    pub(crate) async fn committed_async(&self, seq: u64) -> Result<(), MemoryError> {
        let mut rx = self.watch.subscribe();
        loop {
            rx.borrow_and_update();
            if let Some(outcome) = self.check(seq) {
                return outcome;
            }
            if rx.changed().await.is_err() {
                return self.check(seq).unwrap_or(Err(MemoryError::Closed));
            }
        }
    }
}

/// Marks the writer stopped and wakes every waiter, also if the thread unwinds.
struct DoneGuard(Arc<CommitState>);

impl Drop for DoneGuard {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Release);
        self.0.wake();
    }
}

/// The writer thread's body: block for the first op, drain what else is queued (up to
/// [`MAX_BATCH`]), commit it in one transaction, publish. Returns when every sender is gone and
/// the queue is empty.
pub(crate) fn run(mut conn: Connection, rx: Receiver<Queued>, state: Arc<CommitState>) {
    let _done = DoneGuard(state.clone());
    let mut batch: Vec<Queued> = Vec::with_capacity(1024);
    while let Ok(first) = rx.recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(op) => batch.push(op),
                Err(_) => break,
            }
        }
        let last = batch.last().map_or(0, |q| q.seq);
        let result = match commit(&mut conn, &batch) {
            Ok(()) => Ok(()),
            Err(first_error) => {
                tracing::warn!(error = %first_error, ops = batch.len(), "memory batch failed; retrying once");
                std::thread::sleep(RETRY_PAUSE);
                commit(&mut conn, &batch)
            }
        };
        match result {
            Ok(()) => {
                let len = batch.len() as u64;
                state.batches.fetch_add(1, Ordering::Relaxed);
                state.ops.fetch_add(len, Ordering::Relaxed);
                state.largest_batch.fetch_max(len, Ordering::Relaxed);
                // After a failed batch nothing later may be reported as committed: the failed
                // sequence numbers lie below it.
                if !state.failed.load(Ordering::Acquire) {
                    state.publish(last);
                }
            }
            Err(error) => {
                let first = batch.first().map_or(0, |q| q.seq);
                let message =
                    format!("could not commit writes {first}..={last} (after one retry): {error}");
                tracing::error!(%error, first, last, "memory writer: batch lost");
                state.fail(message);
            }
        }
        batch.clear();
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
        } => {
            conn.prepare_cached(
                "INSERT INTO agent_state_history (agent_id, old_state, new_state, timestamp)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![agent_id, old.as_str(), new.as_str(), timestamp])?;
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
                                     created_at, updated_at, removed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                 ON CONFLICT (agent_id) DO UPDATE SET
                     name = excluded.name, role = excluded.role, prompt = excluded.prompt,
                     brain = excluded.brain, config = excluded.config, x = excluded.x,
                     y = excluded.y, state = excluded.state, updated_at = excluded.updated_at,
                     removed_at = excluded.removed_at",
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
                a.removed_at
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
            let super::AppRow {
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
            let super::BrainCall {
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
