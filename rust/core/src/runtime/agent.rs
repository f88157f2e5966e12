//! One agent's task: the state machine and the decision loop.
//!
//! ```text
//!            message                     ack (recorded)
//!   idle ─────────────► listening ─────────────────────► thinking ──speak──► speaking
//!    │ ▲                    ▲                            │  │  │               │
//!    │ │                    └──── message (interrupt) ───┘  │  │               │
//!    │ └──────────────── decision without speech ───────────┘  │               │
//!    └──────── idle_think_seconds elapsed ─────────────────────┘               │
//!    ▲                                                                        │
//!    └──────────────────────── line said (speaking_seconds) ──────────────────┘
//! ```
//!
//! An idle agent waits on three things only — its bus subscription, its idle deadline and its
//! cancellation — so it costs nothing while it waits.

mod act;
mod decide;
mod mind;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::config::{AgentConfig, RuntimeOptions};
use super::decision::{self, Plan, Planned};
use super::journal::{CallOutcome, Decision, Journal, Trigger};
use super::tools::{AgentTools, ToolSetError, WORLD_TOOLS};
use super::{AgentSnapshot, Inner};
use crate::agent_state::AgentState;
use crate::apps::{APP_TOOLS, AppEntry, ChatRole};
use crate::brain::{
    Brain, BrainContext, BrainError, BrainReply, IncomingKind, IncomingMessage, NearbyAgent,
};
use crate::bus::{AgentErrorCode, BusMessage, Received, ReplyFailure, Subscription};
use crate::contract::{CallResult, DecisionStep, FailedCall, FailureReason};
use crate::geometry::Position;
use crate::memory::{InboxRow, Memory, MemoryKind, NewConversation};
use crate::mind::{Cue, Recollection, forming, recall};
use crate::moves::{MoveError, MoveOutcome, MoveRequest, MoveStatus, Movement, Walk};
use crate::tools::ToolContext;
use crate::tools::world::Action;
use crate::tools::world::ground::Ground;

/// The instruction every autonomous decision starts from (`docs/runtime.md`, "The decision loop").
pub(crate) const INSTRUCTION: &str = "Analyze situation and decide next action";
/// At most this many nearby agents go into a brain's context.
const NEARBY_LIMIT: usize = 8;
/// The conversation lines a decision sees.
const CONTEXT_MESSAGES: usize = 5;
/// Timers are capped at a year so a huge setting never overflows a deadline.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// Why an agent's task stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Removal {
    /// Still running.
    None = 0,
    /// `terminate`: marked removed in the database; the agent task publishes `AgentRemoved`.
    Terminated = 1,
    /// Runtime shutdown: the runtime publishes `AgentRemoved`; the agent stays resumable.
    Shutdown = 2,
}

impl Removal {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Removal::None => "running",
            Removal::Terminated => "terminated",
            Removal::Shutdown => "shutdown",
        }
    }
}

pub(crate) fn seconds(v: f64) -> Duration {
    Duration::from_secs_f64(if v.is_finite() {
        v.clamp(0.0, MAX_SECONDS)
    } else {
        0.0
    })
}

struct Status {
    state: AgentState,
    position: Position,
}

/// What the runtime handle and the agent task share.
pub(crate) struct AgentShared {
    pub id: String,
    /// The game's stable name for it ([`AgentConfig::key`]).
    pub key: Option<String>,
    pub name: String,
    pub role: String,
    pub prompt: String,
    pub brain: String,
    /// The brain it was spawned with (a GM turn builds another of the same kind).
    pub brain_choice: crate::brain::BrainChoice,
    pub idle_think: Duration,
    pub speaking: Duration,
    pub hearing_radius: f64,
    /// Who carries out its moves.
    pub movement: Movement,
    /// Its moves the game carries out (with [`Movement::Requested`]).
    walk: Mutex<Walk>,
    status: Mutex<Status>,
    tools: parking_lot::RwLock<Arc<AgentTools>>,
    /// The agent's token budget (its model brain spends from it).
    pub token_budget: Arc<crate::brain::gate::TokenBudget>,
    removal: AtomicU8,
    /// Wakes the idle agent when its app has something new (a state, an event, a context).
    pub app_wake: Arc<tokio::sync::Notify>,
    /// The app it is attached to, and whether attaching hid its world tools.
    app: parking_lot::RwLock<Option<(Arc<AppEntry>, bool)>>,
    /// Its autonomous loop is paused: it decides only when spoken to.
    paused: std::sync::atomic::AtomicBool,
    /// Its last decisions, for a debugger.
    pub journal: Journal,
    /// What the game told it it perceives, not yet shown to a decision: numbered, oldest
    /// first, at most [`MAX_OBSERVATIONS`].
    /// The last number given, and the waiting observations.
    observations: Mutex<(u64, std::collections::VecDeque<(u64, String)>)>,
    /// Cancelled when its task has ended (after its last write was submitted).
    pub stopped: tokio_util::sync::CancellationToken,
    /// How it forms and recalls memories.
    pub memory: crate::mind::MemorySettings,
    /// The importance of the memories it formed since it last reflected (or started).
    unreflected: std::sync::atomic::AtomicU32,
    /// The memories it formed since its stream was last counted (for its cap).
    uncounted: std::sync::atomic::AtomicU32,
    /// The app whose events it has remembered, and the number of the last one.
    app_events_seen: Mutex<(String, u64)>,
    /// Its memories waiting for its brain's ratings (`id`, text), oldest first, and whether
    /// its brain rates at all (until it says it has no model).
    unrated: Mutex<(Vec<(i64, String)>, bool)>,
    /// Its warnings a client can make it repeat, logged once per window and cause.
    warnings: super::warnings::Warnings,
}

impl AgentShared {
    pub(crate) fn new(
        id: &str,
        config: &AgentConfig,
        brain: &str,
        position: Position,
        tools: AgentTools,
        token_budget: Arc<crate::brain::gate::TokenBudget>,
        opts: &RuntimeOptions,
    ) -> Self {
        AgentShared {
            id: id.to_string(),
            key: config.key.clone(),
            name: config.name.clone(),
            role: config.role.clone(),
            prompt: config.prompt.clone(),
            brain: brain.to_string(),
            brain_choice: config
                .brain
                .clone()
                .unwrap_or_else(|| crate::brain::BrainChoice::Named(opts.default_brain.clone())),
            idle_think: seconds(config.idle_think_seconds.unwrap_or(opts.idle_think_seconds)),
            speaking: seconds(config.speaking_seconds.unwrap_or(opts.speaking_seconds)),
            hearing_radius: config.hearing_radius.unwrap_or(opts.hearing_radius),
            movement: config.movement.unwrap_or_default(),
            walk: Mutex::new(Walk::default()),
            status: Mutex::new(Status {
                state: AgentState::Idle,
                position,
            }),
            tools: parking_lot::RwLock::new(Arc::new(tools)),
            token_budget,
            removal: AtomicU8::new(Removal::None as u8),
            app_wake: Arc::new(tokio::sync::Notify::new()),
            app: parking_lot::RwLock::new(None),
            observations: Mutex::new((0, std::collections::VecDeque::new())),
            // Not autonomous: it decides only when spoken to, as a paused agent does.
            paused: std::sync::atomic::AtomicBool::new(config.autonomous == Some(false)),
            journal: Journal::default(),
            stopped: tokio_util::sync::CancellationToken::new(),
            memory: config.memory.clone().unwrap_or_else(|| opts.memory.clone()),
            unreflected: std::sync::atomic::AtomicU32::new(0),
            // Counted once soon after it starts (a stream may be over a lowered cap).
            uncounted: std::sync::atomic::AtomicU32::new(crate::mind::compaction::CHECK_EVERY - 1),
            app_events_seen: Mutex::new((String::new(), 0)),
            unrated: Mutex::new((Vec::new(), true)),
            warnings: super::warnings::Warnings::default(),
        }
    }

    /// Logs a warning of `cause` about the agent (`agent` and `cause` fields), unless one of
    /// that cause was logged less than [`super::warnings::WINDOW`] ago: then it is only
    /// counted, and the next one logged says how many it stands for.
    pub(crate) fn warn(&self, cause: &'static str, message: impl std::fmt::Display) {
        use super::warnings::{Admit, repeats_note};
        if let Admit::Log { repeats, seconds } =
            self.warnings.admit(cause, std::time::Instant::now())
        {
            let note = repeats_note(repeats, seconds);
            tracing::warn!(agent = %self.id, cause, "{message}{note}");
        }
    }

    /// Logs how many warnings of each cause were counted and not logged yet (as it stops).
    fn flush_warnings(&self) {
        for (cause, repeats, seconds) in self.warnings.take_unlogged(std::time::Instant::now()) {
            tracing::warn!(
                agent = %self.id,
                cause,
                "… {repeats} more warnings like the last one logged in the last {seconds} s"
            );
        }
    }

    /// Queues a memory it formed for its brain's rating (while its brain rates), its text cut
    /// to [`crate::brain::budget::RATING_MEMORY_CHARS`].
    pub(crate) fn to_rate(&self, id: i64, text: &str) {
        let batch = self.memory.importance_batch;
        if batch == 0 {
            return;
        }
        let mut unrated = self.unrated.lock();
        if !unrated.1 {
            return;
        }
        // What a rating reads of it: a batch stays within its budget whatever the texts.
        let text = crate::limits::cut_copy(text, crate::brain::budget::RATING_MEMORY_CHARS);
        unrated.0.push((id, text));
        // A brain that cannot keep up rates the newest: the oldest keep the heuristic's.
        let excess = unrated.0.len().saturating_sub(4 * batch);
        unrated.0.drain(..excess);
    }

    /// A batch of memories to rate, when one is full.
    fn rating_due(&self) -> Option<Vec<(i64, String)>> {
        let batch = self.memory.importance_batch;
        let mut unrated = self.unrated.lock();
        (batch > 0 && unrated.1 && unrated.0.len() >= batch)
            .then(|| unrated.0.drain(..batch).collect())
    }

    /// Counts `importance` toward its next reflection: what a resumed agent went through after
    /// its last reflection, before it stopped.
    pub(crate) fn count_toward_reflection(&self, importance: u32) {
        self.unreflected
            .fetch_add(importance, std::sync::atomic::Ordering::Relaxed);
    }

    /// Counts a memory it formed toward its next reflection (`importance`: one of what
    /// happened to it; `None`: one it drew) and its stream's next count.
    pub(crate) fn count_memory(&self, importance: Option<u8>) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(importance) = importance {
            self.unreflected.fetch_add(u32::from(importance), Relaxed);
        }
        self.uncounted.fetch_add(1, Relaxed);
    }

    /// Whether it is time to count its stream against its cap (and starts again if so).
    fn count_due(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if self.memory.max_memories == 0 {
            return false;
        }
        self.uncounted
            .fetch_update(Relaxed, Relaxed, |n| {
                (n >= crate::mind::compaction::CHECK_EVERY).then_some(0)
            })
            .is_ok()
    }

    /// Whether it is time to reflect (and starts counting again if so).
    fn reflection_due(&self) -> bool {
        let threshold = self.memory.reflection_threshold;
        if !self.memory.enabled || threshold == 0 {
            return false;
        }
        self.unreflected
            .fetch_update(
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
                |n| (n >= threshold).then_some(0),
            )
            .is_ok()
    }

    /// The app it is attached to.
    pub(crate) fn app(&self) -> Option<Arc<AppEntry>> {
        self.app.read().as_ref().map(|(app, _)| app.clone())
    }

    /// Attaches it to `app` (its tools: the app's, and its world tools unless the app hides
    /// them), or detaches it (`None`), giving back the world tools an app hid. Returns the app
    /// it was attached to before.
    pub(crate) fn set_app(
        &self,
        app: Option<Arc<AppEntry>>,
        world: &Arc<crate::tools::ToolRegistry>,
    ) -> Result<Option<Arc<AppEntry>>, ToolSetError> {
        let mut slot = self.app.write();
        let hid_world = slot.as_ref().is_some_and(|(_, hid)| *hid);
        let hide = app.as_ref().is_some_and(|a| !a.keeps_world_tools());
        self.update_tools(|tools| {
            let mut tools = tools.without(APP_TOOLS);
            if hid_world && !hide {
                tools = tools.with(WORLD_TOOLS.into(), world.clone())?;
            }
            if hide {
                tools = tools.without(WORLD_TOOLS);
            }
            match &app {
                Some(app) => tools.with(APP_TOOLS.into(), app.offered_tools()),
                None => Ok(tools),
            }
        })?;
        let before = std::mem::replace(&mut *slot, app.map(|a| (a, hide)));
        Ok(before.map(|(app, _)| app))
    }

    /// Its tools for a decision starting now, with `offered` as its app's set (read with the
    /// app's view the decision shows, [`AppEntry::view_with_tools`]): the app's set follows
    /// the app (the actions, the control mode, whose turn it is) and is taken anew when the
    /// app changed it.
    pub(crate) fn decision_tools(
        &self,
        offered: Option<&Arc<crate::tools::ToolRegistry>>,
    ) -> Arc<AgentTools> {
        let tools = self.tools();
        let Some(offered) = offered else {
            return tools;
        };
        if tools
            .set(APP_TOOLS)
            .is_some_and(|current| Arc::ptr_eq(current, offered))
        {
            return tools;
        }
        let updated = self.update_tools(|tools| {
            tools
                .without(APP_TOOLS)
                .with(APP_TOOLS.into(), offered.clone())
        });
        if let Err(e) = updated {
            self.warn(
                "app_tools_clash",
                format_args!("its app's tools clash with its own: {e}"),
            );
        }
        self.tools()
    }

    /// The agent's tools now (a snapshot; a decision keeps the one it started with).
    pub(crate) fn tools(&self) -> Arc<AgentTools> {
        self.tools.read().clone()
    }

    /// Replaces the agent's tools with `change(current)`.
    pub(crate) fn update_tools(
        &self,
        change: impl FnOnce(&AgentTools) -> Result<AgentTools, ToolSetError>,
    ) -> Result<(), ToolSetError> {
        let mut tools = self.tools.write();
        *tools = Arc::new(change(&tools)?);
        Ok(())
    }

    pub(crate) fn state(&self) -> AgentState {
        self.status.lock().state
    }

    pub(crate) fn state_and_position(&self) -> (AgentState, Position) {
        let s = self.status.lock();
        (s.state, s.position)
    }

    /// Whether its autonomous loop is paused.
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// Pauses or resumes its autonomous loop; resuming wakes it to decide at once.
    /// Adds what the game says it perceives; the oldest goes when [`MAX_OBSERVATIONS`] wait.
    pub(crate) fn observe(&self, text: String) {
        let mut guard = self.observations.lock();
        let (last, queue) = &mut *guard;
        *last += 1;
        if queue.len() >= MAX_OBSERVATIONS {
            queue.pop_front();
        }
        queue.push_back((*last, text));
    }

    /// The observations waiting, oldest first.
    pub(crate) fn observations(&self) -> Vec<String> {
        self.observations
            .lock()
            .1
            .iter()
            .map(|(_, text)| text.clone())
            .collect()
    }

    /// The number of the newest observation waiting (0: none).
    pub(crate) fn last_observation(&self) -> u64 {
        self.observations.lock().1.back().map_or(0, |(seq, _)| *seq)
    }

    /// Forgets the observations up to number `seen` (those a decision was shown).
    pub(crate) fn forget_observations(&self, seen: u64) {
        self.observations.lock().1.retain(|(seq, _)| *seq > seen);
    }

    /// Its latest move the game carries out, as a decision starting now is shown it.
    pub(crate) fn move_status(&self) -> Option<MoveStatus> {
        self.walk.lock().status()
    }

    /// Forgets how a move ended once a decision was shown it.
    pub(crate) fn move_seen(&self, status: &MoveStatus) {
        self.walk.lock().seen(status);
    }

    /// Ends its move `move_id` (the game's report); returns the move.
    pub(crate) fn end_move(
        &self,
        move_id: u64,
        outcome: MoveOutcome,
    ) -> Result<MoveRequest, MoveError> {
        self.walk.lock().end(&self.id, move_id, outcome)
    }

    /// Sets its position (reported by the game).
    pub(crate) fn set_position(&self, position: Position) {
        self.status.lock().position = position;
    }

    pub(crate) fn set_paused(&self, paused: bool) {
        if self.paused.swap(paused, Ordering::AcqRel) && !paused {
            self.app_wake.notify_one();
        }
    }

    pub(crate) fn set_removal(&self, removal: Removal) {
        self.removal.store(removal as u8, Ordering::Release);
    }

    fn removal(&self) -> Removal {
        match self.removal.load(Ordering::Acquire) {
            1 => Removal::Terminated,
            2 => Removal::Shutdown,
            _ => Removal::None,
        }
    }

    pub(crate) fn snapshot(&self, memory: &Memory) -> AgentSnapshot {
        let (state, position) = self.state_and_position();
        AgentSnapshot {
            agent_id: self.id.clone(),
            name: self.name.clone(),
            role: self.role.clone(),
            brain: self.brain.clone(),
            state,
            position,
            current_task: memory.open_tasks(&self.id).into_iter().next(),
        }
    }
}

/// How asking the brain ended.
enum Asked {
    /// The brain answered; the context comes back for the next round.
    Answered(Result<BrainReply, BrainError>, Box<BrainContext>),
    /// A message interrupted the question.
    Interrupted,
    /// Cancelled (terminate / shutdown) or the bus closed.
    Stopped,
}

/// How a thinking phase ended.
enum Outcome {
    /// Back to idle; the next autonomous decision after this long.
    Idle(Duration),
    /// Cancelled (terminate / shutdown) or the bus closed.
    Stopped,
}

struct Agent {
    inner: Arc<Inner>,
    shared: Arc<AgentShared>,
    brain: Box<dyn Brain>,
    sub: Subscription,
    cancel: CancellationToken,
    /// Messages heard and acknowledged, not yet answered by a decision, each with its stored
    /// inbox row when it has one (a line sent from outside; see `Memory::send_to_inbox`).
    pending: Vec<(IncomingMessage, Option<i64>)>,
    /// How many of `pending` are acknowledged (recorded).
    acknowledged: usize,
    decisions: u64,
    /// Decisions failed in a row (a brain error, a spent budget, an answer past repair), and
    /// the code of the last one: each failure doubles the wait before the next autonomous
    /// decision ([`error_backoff`]), and a spent budget is reported once, not at every try.
    failures: u32,
    last_failure: Option<AgentErrorCode>,
    /// The errors reported since the current call of a decision began (for the journal).
    errors: std::cell::RefCell<Vec<String>>,
    /// The last decision's grounded world tools and what they were grounded in: the next
    /// decision reuses them while nothing they name changed.
    grounded: std::cell::RefCell<Option<(Ground, Arc<crate::tools::ToolRegistry>)>>,
}

/// Observations an agent keeps until a decision sees them (older ones are dropped).
pub(crate) const MAX_OBSERVATIONS: usize = 32;

/// The first wait after a failed decision; it doubles with each failure in a row.
pub(crate) const ERROR_BACKOFF_START: Duration = Duration::from_millis(500);
/// The longest wait after failed decisions.
pub(crate) const ERROR_BACKOFF_MAX: Duration = Duration::from_secs(60);

/// How long an agent whose last `failures` decisions failed waits before deciding on its own
/// again: 0.5 s, 1 s, 2 s, … up to a minute, or its idle time if that is longer. A message
/// still wakes it at once. Without this, an agent with `idle_think_seconds: 0` and a brain
/// that keeps failing (a server down, a spent budget) would spin.
fn error_backoff(failures: u32, idle: Duration) -> Duration {
    let doubled = ERROR_BACKOFF_START.saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    doubled.min(ERROR_BACKOFF_MAX).max(idle)
}

/// The agent task: runs until cancelled, then cleans up.
pub(crate) async fn run(
    inner: Arc<Inner>,
    shared: Arc<AgentShared>,
    brain: Box<dyn Brain>,
    sub: Subscription,
    cancel: CancellationToken,
    inbox: Vec<InboxRow>,
) {
    // Lines accepted before a stop and not answered yet: already recorded, heard first.
    let pending: Vec<_> = inbox
        .into_iter()
        .map(|row| {
            let message = IncomingMessage {
                sender_name: inner.display_name(&row.sender),
                sender: row.sender,
                content: row.content,
                kind: IncomingKind::Speech,
                dialog_type: row.dialog_type,
            };
            (message, Some(row.id))
        })
        .collect();
    let mut agent = Agent {
        inner,
        shared,
        brain,
        sub,
        cancel,
        acknowledged: pending.len(),
        pending,
        decisions: 0,
        failures: 0,
        last_failure: None,
        errors: std::cell::RefCell::new(Vec::new()),
        grounded: std::cell::RefCell::new(None),
    };
    agent.main_loop().await;
    let stopped = agent.shared.stopped.clone();
    agent.finish();
    stopped.cancel();
}

impl Agent {
    async fn main_loop(&mut self) {
        let mut idle_for = self.shared.idle_think;
        if !self.pending.is_empty() && self.transition(AgentState::Listening).is_ok() {
            self.acknowledge();
            if self.transition(AgentState::Thinking).is_ok() {
                match Box::pin(self.think()).await {
                    Outcome::Idle(next) => idle_for = next,
                    Outcome::Stopped => return,
                }
            }
        }
        loop {
            // Idle: wait for a message, the idle deadline, or cancellation (no polling). A
            // paused agent has no deadline and ignores its app until it is resumed (which
            // wakes it through `app_wake`).
            let deadline = Instant::now() + idle_for;
            let heard = loop {
                let paused = self.shared.is_paused();
                tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => return,
                    received = self.sub.recv() => match received {
                        None => return,
                        Some(r) => if take(&self.inner, &self.shared, &mut self.pending, r) { break true },
                    },
                    _ = tokio::time::sleep_until(deadline), if !paused => break false,
                    // Its app has something new (or it was resumed): decide now.
                    _ = self.shared.app_wake.notified() => if !self.shared.is_paused() { break false },
                }
            };
            if heard {
                if self.transition(AgentState::Listening).is_err() {
                    continue;
                }
                self.acknowledge();
            }
            if self.transition(AgentState::Thinking).is_err() {
                continue;
            }
            // Boxed so the idle loop's future stays small (10,000 idle agents).
            match Box::pin(self.think()).await {
                Outcome::Idle(next) => idle_for = next,
                Outcome::Stopped => return,
            }
            if let Some(batch) = self.shared.rating_due() {
                Box::pin(self.rate(batch)).await;
            }
            if self.shared.reflection_due() {
                Box::pin(self.reflect()).await;
            }
            if self.shared.count_due() {
                self.compact().await;
            }
        }
    }

    /// Records every heard message not yet recorded (and anything else already queued).
    fn acknowledge(&mut self) {
        while let Some(r) = self.sub.try_recv() {
            take(&self.inner, &self.shared, &mut self.pending, r);
        }
        // Lines with an inbox row were recorded when they were accepted.
        for (message, _) in self.pending[self.acknowledged..]
            .iter()
            .filter(|(_, inbox)| inbox.is_none())
        {
            self.inner.memory.record_conversation(NewConversation {
                agent_id: self.shared.id.clone(),
                sender: message.sender.clone(),
                content: message.content.clone(),
                recipient: Some(self.shared.id.clone()),
            });
        }
        self.acknowledged = self.pending.len();
    }

    /// After the loop: leave the world; a terminated agent says goodbye on the bus.
    fn finish(self) {
        let Agent {
            inner, shared, sub, ..
        } = self;
        drop(sub);
        shared.flush_warnings();
        inner.world.remove(&shared.id);
        if let Some(app) = shared.app() {
            app.detach(shared.removal().as_str());
        }
        if shared.removal() == Removal::Terminated {
            let (state, position) = shared.state_and_position();
            inner
                .memory
                .save_agent_position(&shared.id, position, state);
            inner.bus.publish(BusMessage::AgentRemoved {
                agent_id: shared.id.clone(),
                reason: Removal::Terminated.as_str().into(),
            });
        }
    }
}

/// Turns a bus delivery into a pending message. Returns true when it is something to listen to
/// (speech addressed to the agent, a collaboration request); lag reports become error events.
fn take(
    inner: &Inner,
    shared: &AgentShared,
    pending: &mut Vec<(IncomingMessage, Option<i64>)>,
    received: Received,
) -> bool {
    let envelope = match received {
        Received::Lagged { missed } => {
            let message = format!(
                "{} missed {missed} bus messages (its queue was full)",
                shared.id
            );
            shared.warn(AgentErrorCode::Lagged.as_str(), &message);
            inner.bus.publish(BusMessage::AgentError {
                agent_id: Some(shared.id.clone()),
                code: AgentErrorCode::Lagged,
                message,
            });
            return false;
        }
        Received::Message(envelope) => envelope,
    };
    match &envelope.message {
        BusMessage::AgentSpoke {
            agent_id: sender,
            content,
            recipients,
            dialog_type,
            inbox_id,
        } if sender != &shared.id && recipients.iter().any(|r| r == &shared.id) => {
            let message = IncomingMessage {
                sender: sender.clone(),
                sender_name: inner.display_name(sender),
                content: content.clone(),
                kind: IncomingKind::Speech,
                dialog_type: dialog_type.clone(),
            };
            pending.push((message, *inbox_id));
            true
        }
        BusMessage::CollaborationRequested {
            agent_id: asker,
            helper_id,
            task_id,
            task_name,
            message,
        } if helper_id == &shared.id => {
            let message = IncomingMessage {
                sender: asker.clone(),
                sender_name: inner.display_name(asker),
                content: message.clone(),
                kind: IncomingKind::Collaboration {
                    task_id: *task_id,
                    task_name: task_name.clone(),
                },
                dialog_type: "collaboration".into(),
            };
            pending.push((message, None));
            true
        }
        _ => false,
    }
}

/// Who said a line, as a memory names them: their name, or their id when they have none.
fn display_name(message: &IncomingMessage) -> String {
    if message.sender_name.trim().is_empty() {
        message.sender.clone()
    } else {
        message.sender_name.clone()
    }
}

fn dialog_type_or(dialog_type: &str) -> String {
    if dialog_type.trim().is_empty() {
        "chat".into()
    } else {
        dialog_type.to_string()
    }
}

/// A tool result or reason cut to a readable length for the journal.
fn clip(text: &str) -> String {
    forming::clip(text, 300)
}

/// The journal's one-line summary of a decision's context.
fn context_summary(context: &BrainContext) -> String {
    let mut parts = vec![
        format!("{} line(s) heard", context.incoming.len()),
        format!("{} agent(s) nearby", context.nearby.len()),
        match &context.current_task {
            Some(task) => format!("task '{}'", task.task_name),
            None => "no task".to_string(),
        },
        format!("{} tool(s)", context.tools.len()),
        format!("at ({}, {})", context.position.x, context.position.y),
    ];
    parts.extend(context.sections.iter().filter_map(|s| s.summary()));
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_after_failures_doubles_up_to_a_minute_and_never_undercuts_idle() {
        let zero = Duration::ZERO;
        let waits: Vec<f64> = (1..=9)
            .map(|n| error_backoff(n, zero).as_secs_f64())
            .collect();
        assert_eq!(waits, [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]);
        assert_eq!(error_backoff(u32::MAX, zero), ERROR_BACKOFF_MAX);
        assert_eq!(
            error_backoff(1, Duration::from_secs(300)),
            Duration::from_secs(300)
        );
    }
}
