//! The writer thread: the only writing connection of this process, batched transactions, and
//! the published `committed_seq`. The backend's [`Sink`] runs the SQL.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_channel::Receiver;
use parking_lot::{Condvar, Mutex};

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
        /// The process that ran the agent ([`super::Memory::set_process`]).
        process: Option<String>,
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
    ArenaGame {
        tournament: String,
        game_index: u32,
        game: String,
        result: String,
        record: String,
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
    /// Memories of an agent's stream (checked: [`super::NewMemory::checked`]), in one write: a
    /// reflection's insights are stored together or not at all. The agent's stream is then
    /// kept at most `max_memories` long (0: no ceiling; [`super::statements::ceilings`]).
    Memories {
        lines: Vec<MemoryLine>,
        max_memories: usize,
    },
    /// Older memories summarised (compaction): the summary stored and the memories it sums up
    /// deleted, in one write; the stream kept at most `max_memories` long, as for
    /// [`Op::Memories`].
    Compact {
        summary: MemoryLine,
        summarised: Vec<i64>,
        max_memories: usize,
    },
    /// Importance ratings of an agent's memories (a model's): `(id, importance)`.
    Rate {
        agent_id: String,
        ratings: Vec<(i64, u8)>,
    },
    /// A memory forgotten (deleted, with its place in the keyword index).
    ForgetMemory {
        agent_id: String,
        id: i64,
    },
    /// Vectors of an agent's memories, made by `model` (`(memory id, little-endian 32-bit
    /// floats)`): each replaces the memory's vector before; a memory no longer stored gets
    /// none.
    Vectors {
        agent_id: String,
        model: String,
        vectors: Vec<(i64, Vec<u8>)>,
    },
    /// Index the memories stored so far for search, now (SQLite indexes new memories in bulk,
    /// when the writer is idle or many wait; a search that must see every memory queued before
    /// it queues this first). PostgreSQL indexes each memory as it is stored: nothing to do.
    IndexMemories,
    /// Memories recalled for a decision at `game_time` (their recency starts again).
    TouchMemories {
        agent_id: String,
        ids: Vec<i64>,
        game_time: f64,
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
    /// The game's key for the agent (`config.key`), its own column to be found by.
    pub key: Option<String>,
    pub x: f64,
    pub y: f64,
    pub state: AgentState,
    pub created_at: String,
    pub updated_at: String,
    pub removed_at: Option<String>,
}

/// A memory as the writer stores it.
#[derive(Debug)]
pub(crate) struct MemoryLine {
    pub id: i64,
    pub agent_id: String,
    pub memory: super::NewMemory,
    pub created_at: String,
}

/// The writer's side of a backend: commits one batch of queued writes in one transaction, all
/// or nothing.
pub(crate) trait Sink: Send + 'static {
    /// Commits `batch` in order in one transaction. On an error nothing of it is committed.
    fn commit(&mut self, batch: &[Queued]) -> Result<(), String>;

    /// Work put off while writes were waiting (SQLite: indexing new memories for search), done
    /// in a transaction of its own when the queue is empty. The default has none.
    fn catch_up(&mut self) -> Result<(), String> {
        Ok(())
    }
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
pub(crate) fn run(mut sink: impl Sink, rx: Receiver<Queued>, state: Arc<CommitState>) {
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
        let result = match sink.commit(&batch) {
            Ok(()) => Ok(()),
            Err(first_error) => {
                tracing::warn!(error = %first_error, ops = batch.len(), "memory batch failed; retrying once");
                std::thread::sleep(RETRY_PAUSE);
                sink.commit(&batch)
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
                if rx.is_empty()
                    && let Err(error) = sink.catch_up()
                {
                    // Nothing acknowledged depends on it: the next idle moment tries again.
                    tracing::warn!(%error, "memory writer: deferred work failed");
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
