//! The agent runtime: spawns agents, each in its own tokio task running the state machine
//! `idle → listening → thinking → speaking → idle` and the autonomous decision loop; owns the bus,
//! the SQLite memory and (usually) its tokio runtime.
//!
//! - [`Runtime::start`] builds its own multi-threaded tokio runtime; [`Runtime::start_on`] runs on
//!   an existing one (the server, tests with a paused clock).
//! - Ids are `agent_001`, `agent_002`, … unique per database, also across restarts. Spawning with a
//!   stored id resumes that agent (name, role, prompt, brain, last position, memory).
//! - Everything an agent does is published on the [bus](crate::bus) and recorded in
//!   [memory](crate::memory): transitions (`agent_state_history`), lines said and heard
//!   (`agent_conversations`), tasks (`agent_tasks`).
//! - Callers never wait on disk, except the read methods, which first wait for the writes queued
//!   before them (read-your-writes).

mod agent;
mod apps;
mod brains;
mod campaigns;
mod clock;
mod control;
mod conversation;
mod remembering;
mod resume;
mod spawn;
mod tool_sets;
pub use campaigns::{CampaignSource, LoadedCampaign};
pub use remembering::{MAX_RECALLED, Remember};
pub use resume::{Resumed, StoredAgent, WaitReason, Waiting, WaitingAgent};
mod config;
mod decision;
mod embedder;
mod journal;
pub use journal::{CallOutcome, DecidedCall, Decision, JOURNAL_LENGTH, Trigger};
mod tools;
mod warnings;
mod world;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::RwLock;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use crate::agent_state::{AgentState, ParseStateError, TransitionError};
pub use crate::geometry::{Position, WorldBounds};
/// The world tools (kept under their old path; they live in [`crate::tools::world`]).
pub use crate::tools::world as actions;
pub use config::{AgentConfig, DEFAULT_MAX_AGENTS, DEFAULT_PLAYER_ID, RuntimeOptions};
pub use tools::{AgentTools, GAME_TOOLS, ToolSetError, WORLD_TOOLS};

use crate::brain::gate::{ModelGate, TokenBudget};
use crate::brain::{BrainChoice, BrainFactory, BrainRegistry};
use crate::bus::{AgentErrorCode, Bus, BusMessage, Filter, Subscription};
use crate::memory::{
    AgentRecord, ConversationRow, Memory, MemoryError, Page, StateChangeRow, TaskRow,
};
use crate::tools::ToolRegistry;
use agent::{AgentShared, Removal};
use tools::ToolSets;
use world::World;

pub use crate::limits::{MAX_MESSAGE_CHARS, MAX_TASK_NAME_CHARS};

/// Runtime errors. [`RuntimeError::code`] is the stable snake_case code (protocol error codes).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No running agent with this id.
    #[error("unknown agent '{0}'")]
    UnknownAgent(String),
    /// The id is already running.
    #[error("agent '{0}' is already running")]
    AlreadyRunning(String),
    /// A running agent has this key already.
    #[error(
        "key '{key}' is taken by the running agent '{agent_id}': two agents (two AgentNodes) \
         may not share a key in one runtime"
    )]
    KeyInUse {
        /// The key.
        key: String,
        /// The running agent that has it.
        agent_id: String,
    },
    /// The config is invalid.
    #[error("{0}")]
    InvalidConfig(String),
    /// The options are invalid.
    #[error("invalid runtime options: {0}")]
    InvalidOptions(String),
    /// No brain with that name.
    #[error(transparent)]
    Brain(#[from] crate::brain::BrainError),
    /// A tool set is unknown, taken, or clashes with another one of the agent's.
    #[error(transparent)]
    ToolSet(#[from] ToolSetError),
    /// Memory failed (includes unknown / completed tasks).
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The message or task name is empty or too long.
    #[error("{0}")]
    InvalidMessage(String),
    /// The runtime is shutting down.
    #[error("the runtime is shut down")]
    ShutDown,
    /// The tokio runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Startup(String),
    /// An app call failed ([`crate::apps`]).
    #[error(transparent)]
    App(#[from] crate::apps::AppError),
    /// A GM turn could not run (a turn actor outside the party, a brain that did not answer).
    #[error(transparent)]
    Turn(#[from] crate::campaign::turn::TurnError),
    /// A campaign could not be read, saved or used (every problem named).
    #[error(transparent)]
    Campaign(#[from] crate::campaign::CampaignError),
    /// No campaign is loaded under this id.
    #[error("unknown campaign '{0}' (load it with campaign_load)")]
    UnknownCampaign(String),
    /// A move could not be finished: the agent never asked for it, or it is not under way
    /// any more.
    #[error(transparent)]
    Move(#[from] crate::moves::MoveError),
    /// One of the runtime's caps is reached (running agents, loaded campaigns): the message
    /// names the cap, its option and what frees room.
    #[error("{0}")]
    LimitReached(String),
    /// The agent has no memory with this id (`unknown_memory`).
    #[error("{agent_id} has no memory {id}")]
    UnknownMemory {
        /// The agent.
        agent_id: String,
        /// The memory id asked for.
        id: i64,
    },
}

crate::error_code_subset! {
    /// The stable code of a runtime error (wire form: the snake_case name).
    pub enum RuntimeErrorCode: "runtime error code" {
        UnknownAgent,
        AlreadyRunning,
        InvalidConfig,
        InvalidOptions,
        UnknownBrain,
        BrainError,
        UnknownTask,
        TaskAlreadyCompleted,
        DatabaseError,
        InvalidMessage,
        ShutDown,
        StartupFailed,
        UnknownApp,
        AppExists,
        AppAttached,
        UnknownAction,
        ActionRefused,
        UnknownCampaign,
        LimitReached,
        UnknownMove,
        UnknownMemory,
    }
}

impl RuntimeError {
    /// The stable code of this error.
    pub fn code(&self) -> RuntimeErrorCode {
        match self {
            RuntimeError::UnknownAgent(_) => RuntimeErrorCode::UnknownAgent,
            RuntimeError::AlreadyRunning(_) | RuntimeError::KeyInUse { .. } => {
                RuntimeErrorCode::AlreadyRunning
            }
            RuntimeError::InvalidConfig(_) => RuntimeErrorCode::InvalidConfig,
            RuntimeError::InvalidOptions(_) => RuntimeErrorCode::InvalidOptions,
            RuntimeError::Brain(crate::brain::BrainError::Unknown { .. }) => {
                RuntimeErrorCode::UnknownBrain
            }
            RuntimeError::Brain(
                crate::brain::BrainError::Duplicate(_)
                | crate::brain::BrainError::InvalidName(_)
                | crate::brain::BrainError::Invalid(_)
                | crate::brain::BrainError::Config { .. }
                | crate::brain::BrainError::KeyNotStored
                | crate::brain::BrainError::ModelFileMissing(_),
            ) => RuntimeErrorCode::InvalidConfig,
            RuntimeError::Brain(_) => RuntimeErrorCode::BrainError,
            RuntimeError::ToolSet(_) => RuntimeErrorCode::InvalidConfig,
            RuntimeError::Memory(MemoryError::InvalidMemory(_)) => RuntimeErrorCode::InvalidMessage,
            RuntimeError::Memory(e) => match e.agent_error_code() {
                AgentErrorCode::UnknownTask => RuntimeErrorCode::UnknownTask,
                AgentErrorCode::TaskAlreadyCompleted => RuntimeErrorCode::TaskAlreadyCompleted,
                _ => RuntimeErrorCode::DatabaseError,
            },
            RuntimeError::InvalidMessage(_) => RuntimeErrorCode::InvalidMessage,
            RuntimeError::ShutDown => RuntimeErrorCode::ShutDown,
            RuntimeError::Startup(_) => RuntimeErrorCode::StartupFailed,
            RuntimeError::Turn(crate::campaign::turn::TurnError::Campaign(_)) => {
                RuntimeErrorCode::InvalidMessage
            }
            RuntimeError::Turn(crate::campaign::turn::TurnError::Brain(_)) => {
                RuntimeErrorCode::BrainError
            }
            RuntimeError::Campaign(_) => RuntimeErrorCode::InvalidMessage,
            RuntimeError::UnknownCampaign(_) => RuntimeErrorCode::UnknownCampaign,
            RuntimeError::LimitReached(_) => RuntimeErrorCode::LimitReached,
            RuntimeError::Move(_) => RuntimeErrorCode::UnknownMove,
            RuntimeError::UnknownMemory { .. } => RuntimeErrorCode::UnknownMemory,
            RuntimeError::App(e) => {
                use crate::apps::AppError as A;
                match e {
                    A::UnknownApp(_) => RuntimeErrorCode::UnknownApp,
                    A::Duplicate(_) => RuntimeErrorCode::AppExists,
                    A::Invalid(_) => RuntimeErrorCode::InvalidConfig,
                    A::Refused(_) => RuntimeErrorCode::ActionRefused,
                    A::UnknownAction { .. } => RuntimeErrorCode::UnknownAction,
                    A::Attached(_) | A::NoAgent(_) => RuntimeErrorCode::AppAttached,
                }
            }
        }
    }
}

/// A snapshot of one running agent.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AgentSnapshot {
    /// Id.
    pub agent_id: String,
    /// Name.
    pub name: String,
    /// Role.
    pub role: String,
    /// Brain name.
    pub brain: String,
    /// State.
    pub state: AgentState,
    /// Position.
    pub position: Position,
    /// The task it works on (oldest open one).
    pub current_task: Option<TaskRow>,
}

struct AgentEntry {
    shared: Arc<AgentShared>,
    cancel: CancellationToken,
}

/// The end of a released agent's task ([`Runtime::release`]).
#[derive(Clone, Debug)]
pub struct Stopped(CancellationToken);

impl Stopped {
    /// Resolves once the agent's task has ended: every write it made is submitted to memory
    /// ([`Memory::committed`] of [`Memory::submitted_seq`] then says when they are durable).
    pub async fn wait(&self) {
        self.0.cancelled().await
    }
}

/// State shared by the runtime handle and every agent task.
pub(crate) struct Inner {
    handle: Handle,
    options: RuntimeOptions,
    bus: Bus,
    memory: Memory,
    world: World,
    agents: RwLock<HashMap<String, AgentEntry>>,
    /// The stored agents a resume could not start, with what each waits for
    /// ([`Runtime::resume_all`]).
    waiting: RwLock<HashMap<String, Waiting>>,
    brains: RwLock<BrainRegistry>,
    tool_sets: RwLock<ToolSets>,
    /// Permits for concurrent model calls ([`crate::brain::gate`]).
    model_calls: Arc<tokio::sync::Semaphore>,
    /// Permits of each model endpoint ([`crate::brain::gate`]).
    model_endpoints: Arc<crate::brain::gate::EndpointLimits>,
    /// The runtime-wide token budget.
    token_budget: Arc<TokenBudget>,
    /// The registered apps ([`crate::apps`]).
    apps: crate::apps::AppHub,
    /// The campaigns loaded over the protocol ([`crate::campaign`]).
    campaigns: campaigns::CampaignHub,
    tracker: TaskTracker,
    closed: AtomicBool,
    /// Checks of what the runtime depends on besides its memory (see [`Runtime::readiness`]).
    readiness: RwLock<Vec<(String, ReadinessCheck)>>,
    /// The game time memories are stamped with.
    clock: clock::GameClock,
    /// Makes vectors of memories when an embeddings endpoint is configured.
    embedder: Option<Arc<embedder::Embedder>>,
}

/// A check of something the runtime depends on: `Err` says why it is not ready.
pub type ReadinessCheck = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The runtime. `Send + Sync` (share it in an `Arc`); shut down explicitly with [`Runtime::shutdown`] or by dropping it.
pub struct Runtime {
    inner: Arc<Inner>,
    owned: parking_lot::Mutex<Option<tokio::runtime::Runtime>>,
}

impl Runtime {
    /// Starts a runtime with its own multi-threaded tokio runtime (`options.worker_threads`
    /// workers, named `agents-runtime`).
    pub fn start(options: RuntimeOptions) -> Result<Runtime, RuntimeError> {
        options.validate().map_err(RuntimeError::InvalidOptions)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.worker_threads)
            .thread_name("agents-runtime")
            .enable_all()
            .build()
            .map_err(|e| RuntimeError::Startup(e.to_string()))?;
        let mut runtime = Runtime::start_on(rt.handle().clone(), options)?;
        *runtime.owned.get_mut() = Some(rt);
        Ok(runtime)
    }

    /// Starts a runtime on an existing tokio runtime (the server, tests with a paused clock). The
    /// tokio runtime must have time enabled and must outlive this `Runtime`.
    pub fn start_on(handle: Handle, options: RuntimeOptions) -> Result<Runtime, RuntimeError> {
        options.validate().map_err(RuntimeError::InvalidOptions)?;
        let memory = Memory::open(&options.database)?;
        let model_calls = Arc::new(tokio::sync::Semaphore::new(
            options.max_concurrent_model_calls,
        ));
        let model_endpoints = Arc::new(crate::brain::gate::EndpointLimits::new(
            options.max_concurrent_model_calls_per_endpoint,
        ));
        let token_budget = Arc::new(TokenBudget::new(options.token_budget));
        // Time never runs backwards for a resumed world.
        let resumed_at = memory.latest_memory_time().unwrap_or_else(|error| {
            tracing::warn!("the game clock starts at 0: {error}");
            None
        });
        let clock = clock::GameClock::new(resumed_at.unwrap_or(0.0), options.game_time_scale);
        let brains = BrainRegistry::with_builtins();
        let tracker = TaskTracker::new();
        let embedder = match &options.embeddings {
            Some(settings) => Some(
                embedder::Embedder::start(
                    settings.clone(),
                    brains.keys().clone(),
                    memory.clone(),
                    &handle,
                    &tracker,
                )
                .map_err(RuntimeError::Startup)?,
            ),
            None => None,
        };
        let inner = Inner {
            embedder,
            clock,
            handle,
            bus: Bus::new(options.bus_capacity),
            world: World::new(options.hearing_radius.max(1.0)),
            apps: crate::apps::AppHub::new(memory.clone()),
            campaigns: campaigns::CampaignHub::default(),
            memory,
            options,
            agents: RwLock::new(HashMap::new()),
            waiting: RwLock::new(HashMap::new()),
            readiness: RwLock::new(Vec::new()),
            brains: RwLock::new(brains),
            tool_sets: RwLock::new(ToolSets::with_builtins()),
            model_calls,
            model_endpoints,
            token_budget,
            tracker,
            closed: AtomicBool::new(false),
        };
        Ok(Runtime {
            inner: Arc::new(inner),
            owned: parking_lot::Mutex::new(None),
        })
    }

    /// The options.
    pub fn options(&self) -> &RuntimeOptions {
        &self.inner.options
    }

    fn check_open(&self) -> Result<(), RuntimeError> {
        if self.inner.closed.load(Ordering::Acquire) {
            Err(RuntimeError::ShutDown)
        } else {
            Ok(())
        }
    }

    fn running(&self, agent_id: &str) -> Result<Arc<AgentShared>, RuntimeError> {
        self.inner
            .agents
            .read()
            .get(agent_id)
            .map(|entry| entry.shared.clone())
            .ok_or_else(|| RuntimeError::UnknownAgent(agent_id.to_string()))
    }

    /// Subscribes to the bus (default queue capacity).
    pub fn subscribe(&self, filter: Filter) -> Subscription {
        self.inner.bus.subscribe(filter)
    }

    /// Subscribes with a queue capacity.
    pub fn subscribe_with_capacity(&self, filter: Filter, capacity: usize) -> Subscription {
        self.inner.bus.subscribe_with_capacity(filter, capacity)
    }

    /// The bus.
    pub fn bus(&self) -> &Bus {
        &self.inner.bus
    }

    /// Follows an agent of another process in this process's world (the cluster bridge): a
    /// spawned or moved agent is placed where it is, so this process's agents hear and see it;
    /// a removed one leaves. Agents running here are never touched; others are not in `list`.
    #[cfg(feature = "cluster")]
    pub(crate) fn follow_remote(&self, message: &BusMessage) {
        let Some(agent_id) = message.agent_id() else {
            return;
        };
        if self.inner.agents.read().contains_key(agent_id) {
            return;
        }
        match message {
            BusMessage::AgentSpawned {
                name,
                role,
                position,
                ..
            } => self.inner.world.insert(
                agent_id,
                world::Placed {
                    name: name.clone(),
                    role: role.clone(),
                    position: *position,
                },
            ),
            BusMessage::AgentMoved { to, .. } => self.inner.world.update_position(agent_id, *to),
            BusMessage::AgentRemoved { .. } => self.inner.world.remove(agent_id),
            _ => {}
        }
    }

    /// Adds a readiness check (a connection the runtime needs, say), named `name` in
    /// [`Runtime::readiness`].
    pub fn add_readiness_check(&self, name: impl Into<String>, check: ReadinessCheck) {
        self.inner.readiness.write().push((name.into(), check));
    }

    /// Whether the runtime can serve now, check by check: `runtime` (not shut down), `memory`
    /// (the writer has not failed and the database answers), then the added checks. What an
    /// orchestrator's readiness probe asks (`/readyz` of the WebSocket server).
    pub fn readiness(&self) -> Vec<(String, Result<(), String>)> {
        let mut checks = vec![
            (
                "runtime".to_string(),
                self.check_open().map_err(|e| e.to_string()),
            ),
            (
                "memory".to_string(),
                self.inner.memory.check().map_err(|e| e.to_string()),
            ),
        ];
        let added: Vec<(String, ReadinessCheck)> = self.inner.readiness.read().clone();
        checks.extend(added.into_iter().map(|(name, check)| (name, check())));
        checks
    }

    /// The memory.
    pub fn memory(&self) -> &Memory {
        &self.inner.memory
    }

    /// The tokio handle agents run on.
    pub fn handle(&self) -> &Handle {
        &self.inner.handle
    }

    /// Blocks until every queued write is committed.
    pub fn flush(&self) -> Result<(), RuntimeError> {
        Ok(self.inner.memory.flush()?)
    }

    /// Whether [`Runtime::shutdown`] has run.
    pub fn is_shut_down(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    /// Stops every agent (`AgentRemoved` reason `shutdown`; they stay resumable), saves their last
    /// positions, flushes and closes memory (joining the writer thread), closes the bus, and stops
    /// the owned tokio runtime, waiting at most `timeout` for agent tasks. Idempotent; also run on
    /// drop. Called from inside an async context it does not wait for the agent tasks (they end
    /// on their own at their next await).
    pub fn shutdown(&self, timeout: Duration) {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let entries: Vec<(String, AgentEntry)> = self.inner.agents.write().drain().collect();
        let mut entries = entries;
        entries.sort_by(|a, b| id_order(&a.0, &b.0));
        for (id, entry) in &entries {
            self.stop(id, entry);
        }
        if let Some(embedder) = &self.inner.embedder {
            embedder.stop();
        }
        self.inner.tracker.close();
        let in_async = Handle::try_current().is_ok();
        if !in_async {
            let tracker = self.inner.tracker.clone();
            let wait = async move {
                let _ = tokio::time::timeout(timeout, tracker.wait()).await;
            };
            match &*self.owned.lock() {
                Some(rt) => rt.block_on(wait),
                None => self.inner.handle.block_on(wait),
            }
        }
        if let Err(e) = self.inner.memory.close() {
            tracing::error!("closing agent memory: {e}");
        }
        self.inner.bus.close();
        let owned = self.owned.lock().take();
        if let Some(rt) = owned {
            if in_async {
                rt.shutdown_background();
            } else {
                rt.shutdown_timeout(timeout);
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown(Duration::from_secs(5));
    }
}

impl Inner {
    /// The limiter and budgets for one new model brain (an agent's, a GM turn's): the
    /// runtime's permits and budget, and a budget of its own.
    pub(crate) fn model_gate(&self) -> ModelGate {
        ModelGate {
            calls: self.model_calls.clone(),
            endpoints: self.model_endpoints.clone(),
            runtime_budget: self.token_budget.clone(),
            agent_budget: Arc::new(TokenBudget::new(None)),
        }
    }

    pub(crate) fn assign_task(
        &self,
        agent_id: &str,
        task_name: &str,
        assigned_by: &str,
    ) -> Result<TaskRow, MemoryError> {
        let (task, _) = self.memory.assign_task(agent_id, task_name)?;
        // The game assigns as the player; another agent asks by name.
        let by = (assigned_by != self.options.player_id && assigned_by != agent_id)
            .then(|| self.display_name(assigned_by));
        self.form_for(
            agent_id,
            crate::memory::MemoryKind::Task,
            crate::mind::forming::given_task(&task.task_name, by.as_deref()),
            Some(assigned_by),
        );
        self.bus.publish(BusMessage::TaskAssigned {
            agent_id: agent_id.to_string(),
            task_id: task.id,
            task_name: task.task_name.clone(),
            assigned_by: assigned_by.to_string(),
        });
        Ok(task)
    }

    pub(crate) fn complete_task(&self, task_id: i64) -> Result<TaskRow, MemoryError> {
        let (task, _) = self.memory.complete_task(task_id)?;
        self.form_for(
            &task.agent_id,
            crate::memory::MemoryKind::Task,
            crate::mind::forming::finished_task(&task.task_name),
            None,
        );
        self.bus.publish(BusMessage::TaskCompleted {
            agent_id: task.agent_id.clone(),
            task_id: task.id,
            task_name: task.task_name.clone(),
            completed_at: task.completed_at.clone().unwrap_or_default(),
        });
        Ok(task)
    }

    pub(crate) fn is_running(&self, agent_id: &str) -> bool {
        self.agents.read().contains_key(agent_id)
    }

    /// The running agent with this key, if any (a scan: keyed spawns only).
    fn running_with_key(&self, key: &str) -> Option<String> {
        self.agents
            .read()
            .values()
            .find(|a| a.shared.key.as_deref() == Some(key))
            .map(|a| a.shared.id.clone())
    }

    pub(crate) fn display_name(&self, id: &str) -> String {
        match self.agents.read().get(id) {
            Some(e) => e.shared.name.clone(),
            None => id.to_string(),
        }
    }
}

fn check_text(field: &str, text: &str, max: usize) -> Result<(), RuntimeError> {
    if text.trim().is_empty() {
        return Err(RuntimeError::InvalidMessage(format!(
            "{field} must not be empty"
        )));
    }
    let n = text.chars().count();
    if n > max {
        return Err(RuntimeError::InvalidMessage(format!(
            "{field} is {n} characters long; the limit is {max}"
        )));
    }
    Ok(())
}

/// Orders `agent_NNN` ids by number (then anything else by text).
pub fn id_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn num(id: &str) -> Option<u64> {
        id.strip_prefix("agent_")?.parse().ok()
    }
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}
