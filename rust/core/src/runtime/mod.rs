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
mod campaigns;
mod clock;
mod remembering;
mod resume;
mod spawn;
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

/// The stable code of a [`RuntimeError`] (wire form: [`RuntimeErrorCode::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuntimeErrorCode {
    /// `unknown_agent`.
    UnknownAgent,
    /// `already_running`.
    AlreadyRunning,
    /// `invalid_config`.
    InvalidConfig,
    /// `invalid_options`.
    InvalidOptions,
    /// `unknown_brain`.
    UnknownBrain,
    /// `brain_error`.
    BrainError,
    /// `unknown_task`.
    UnknownTask,
    /// `task_already_completed`.
    TaskAlreadyCompleted,
    /// `database_error`.
    DatabaseError,
    /// `invalid_message`.
    InvalidMessage,
    /// `shut_down`.
    ShutDown,
    /// `startup_failed`.
    StartupFailed,
    /// `unknown_app`.
    UnknownApp,
    /// `app_exists`.
    AppExists,
    /// `app_attached`.
    AppAttached,
    /// `unknown_action`.
    UnknownAction,
    /// `action_refused`.
    ActionRefused,
    /// `unknown_campaign`.
    UnknownCampaign,
    /// `limit_reached`.
    LimitReached,
    /// `unknown_move`.
    UnknownMove,
    /// `unknown_memory`.
    UnknownMemory,
}

impl RuntimeErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [RuntimeErrorCode; 21] = [
        RuntimeErrorCode::UnknownAgent,
        RuntimeErrorCode::AlreadyRunning,
        RuntimeErrorCode::InvalidConfig,
        RuntimeErrorCode::InvalidOptions,
        RuntimeErrorCode::UnknownBrain,
        RuntimeErrorCode::BrainError,
        RuntimeErrorCode::UnknownTask,
        RuntimeErrorCode::TaskAlreadyCompleted,
        RuntimeErrorCode::DatabaseError,
        RuntimeErrorCode::InvalidMessage,
        RuntimeErrorCode::ShutDown,
        RuntimeErrorCode::StartupFailed,
        RuntimeErrorCode::UnknownApp,
        RuntimeErrorCode::AppExists,
        RuntimeErrorCode::AppAttached,
        RuntimeErrorCode::UnknownAction,
        RuntimeErrorCode::ActionRefused,
        RuntimeErrorCode::UnknownCampaign,
        RuntimeErrorCode::LimitReached,
        RuntimeErrorCode::UnknownMove,
        RuntimeErrorCode::UnknownMemory,
    ];

    /// The snake_case wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            RuntimeErrorCode::UnknownAgent => "unknown_agent",
            RuntimeErrorCode::AlreadyRunning => "already_running",
            RuntimeErrorCode::InvalidConfig => "invalid_config",
            RuntimeErrorCode::InvalidOptions => "invalid_options",
            RuntimeErrorCode::UnknownBrain => "unknown_brain",
            RuntimeErrorCode::BrainError => "brain_error",
            RuntimeErrorCode::UnknownTask => "unknown_task",
            RuntimeErrorCode::TaskAlreadyCompleted => "task_already_completed",
            RuntimeErrorCode::DatabaseError => "database_error",
            RuntimeErrorCode::InvalidMessage => "invalid_message",
            RuntimeErrorCode::ShutDown => "shut_down",
            RuntimeErrorCode::StartupFailed => "startup_failed",
            RuntimeErrorCode::UnknownApp => "unknown_app",
            RuntimeErrorCode::AppExists => "app_exists",
            RuntimeErrorCode::AppAttached => "app_attached",
            RuntimeErrorCode::UnknownAction => "unknown_action",
            RuntimeErrorCode::ActionRefused => "action_refused",
            RuntimeErrorCode::UnknownCampaign => "unknown_campaign",
            RuntimeErrorCode::LimitReached => "limit_reached",
            RuntimeErrorCode::UnknownMove => "unknown_move",
            RuntimeErrorCode::UnknownMemory => "unknown_memory",
        }
    }
}

impl std::fmt::Display for RuntimeErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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

    /// Tokens the runtime's model brains have spent (as providers reported them), and the
    /// runtime-wide limit.
    pub fn token_usage(&self) -> (u64, Option<u64>) {
        let b = &self.inner.token_budget;
        (b.spent(), b.limit())
    }

    /// Sets (raises, lowers, removes) the runtime-wide token budget. Agents stopped by a spent
    /// budget think again at their next decision once it allows.
    pub fn set_token_budget(&self, limit: Option<u64>) {
        self.inner.token_budget.set_limit(limit);
    }

    /// Tokens a running agent's model brain has spent, and its limit.
    pub fn agent_token_usage(&self, agent_id: &str) -> Result<(u64, Option<u64>), RuntimeError> {
        let shared = self.running(agent_id)?;
        Ok((shared.token_budget.spent(), shared.token_budget.limit()))
    }

    /// Sets (raises, lowers, removes) a running agent's token budget.
    pub fn set_agent_token_budget(
        &self,
        agent_id: &str,
        limit: Option<u64>,
    ) -> Result<(), RuntimeError> {
        self.running(agent_id)?.token_budget.set_limit(limit);
        Ok(())
    }

    /// Checks a brain choice as a spawn would — the profile or brain exists, the object's fields
    /// are right, the provider accepts it (its model, its key variable) — without spawning.
    /// Returns how agents with it are labelled (`local`, `openai:gpt-4o-mini`). Errors:
    /// `invalid_config` naming what is wrong.
    pub fn check_brain(&self, choice: &BrainChoice) -> Result<String, RuntimeError> {
        let resolved = self
            .inner
            .brains
            .read()
            .resolve(choice, &self.inner.options.brain_profiles)?;
        Ok(resolved.label)
    }

    /// Hands the runtime an API key for the environment variable `name` (`OPENAI_API_KEY`, or a
    /// brain's `api_key_env`), in memory only: it is preferred to the variable, never stored,
    /// logged or reported, and gone when the process ends. Agents spawned from now on use it;
    /// running ones keep theirs. An empty key removes one handed over before.
    pub fn set_api_key(&self, name: &str, key: &str) {
        self.inner.brains.read().keys().set(name, key);
    }

    /// Adds a kind of brain, usable by name in [`AgentConfig::brain`] from now on. Errors:
    /// the name is taken or empty (`invalid_config`).
    pub fn register_brain(
        &self,
        name: &str,
        factory: impl BrainFactory + 'static,
    ) -> Result<(), RuntimeError> {
        self.inner.brains.write().register(name, factory)?;
        Ok(())
    }

    /// Adds a provider: brain objects naming `name` as their `provider` are read as its
    /// [`crate::brain::Provider::Options`] (a field it does not know is refused, named) and
    /// built by it. Errors: the name is taken or empty (`invalid_config`).
    pub fn register_provider(
        &self,
        name: &str,
        provider: impl crate::brain::Provider,
    ) -> Result<(), RuntimeError> {
        self.inner
            .brains
            .write()
            .register_provider(name, provider)?;
        Ok(())
    }

    /// The names of the brains agents can use, sorted.
    pub fn brain_names(&self) -> Vec<String> {
        self.inner
            .brains
            .read()
            .names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// Adds a named tool set (an app's actions, a campaign's tools), which agents can then be
    /// attached to ([`AgentConfig::tools`], [`Runtime::attach_tools`]). Errors: the name is
    /// taken (`world` and `games` are built in) or empty.
    pub fn register_tool_set(
        &self,
        name: &str,
        registry: ToolRegistry,
    ) -> Result<(), RuntimeError> {
        self.inner
            .tool_sets
            .write()
            .register(name, Arc::new(registry))?;
        Ok(())
    }

    /// Replaces the tools of a set the application registered, or adds the set (a game's tools
    /// as it defines them: the Godot extension's GDScript tools). Agents attached to it see the
    /// new tools from their next decision. Errors (nothing changes): a built-in set (`world`,
    /// `games`), an empty name, or a tool named like one of another set of an attached agent
    /// (`invalid_config`, naming both).
    pub fn set_tool_set(&self, name: &str, registry: ToolRegistry) -> Result<(), RuntimeError> {
        let registry = Arc::new(registry);
        let mut sets = self.inner.tool_sets.write();
        let agents: Vec<Arc<AgentShared>> = self
            .inner
            .agents
            .read()
            .values()
            .map(|entry| entry.shared.clone())
            .collect();
        let mut updated = Vec::new();
        for shared in &agents {
            let tools = shared.tools();
            if tools.set(name).is_some() {
                updated.push((shared, tools.replaced(name, &registry)?));
            }
        }
        sets.replace(name, registry)?;
        for (shared, tools) in updated {
            shared.update_tools(|_| Ok(tools))?;
        }
        Ok(())
    }

    /// Removes a set the application registered, detaching it from every agent; whether it
    /// was there. The built-in sets cannot be removed (`invalid_config`).
    pub fn remove_tool_set(&self, name: &str) -> Result<bool, RuntimeError> {
        let mut sets = self.inner.tool_sets.write();
        let removed = sets.remove(name)?;
        for entry in self.inner.agents.read().values() {
            entry.shared.update_tools(|tools| Ok(tools.without(name)))?;
        }
        Ok(removed)
    }

    /// The names of the registered tool sets, sorted.
    pub fn tool_set_names(&self) -> Vec<String> {
        self.inner.tool_sets.read().names()
    }

    /// Attaches a running agent to a tool set: its next decision sees the set's tools. Errors:
    /// `unknown_agent`; an unknown set, or one with a tool named like one the agent has
    /// (`invalid_config`). Attaching a set twice changes nothing.
    pub fn attach_tools(&self, agent_id: &str, set: &str) -> Result<(), RuntimeError> {
        let shared = self.running(agent_id)?;
        let registry = self.inner.tool_sets.read().get(set)?;
        shared.update_tools(|tools| tools.with(set.to_string(), registry))?;
        Ok(())
    }

    /// Detaches a running agent from a tool set (no change when it is not attached).
    pub fn detach_tools(&self, agent_id: &str, set: &str) -> Result<(), RuntimeError> {
        let shared = self.running(agent_id)?;
        shared.update_tools(|tools| Ok(tools.without(set)))?;
        Ok(())
    }

    /// The tool sets a running agent is attached to, in order.
    pub fn agent_tool_sets(&self, agent_id: &str) -> Result<Vec<String>, RuntimeError> {
        let shared = self.running(agent_id)?;
        let tools = shared.tools();
        Ok(tools.set_names().into_iter().map(str::to_string).collect())
    }

    fn running(&self, agent_id: &str) -> Result<Arc<AgentShared>, RuntimeError> {
        self.inner
            .agents
            .read()
            .get(agent_id)
            .map(|entry| entry.shared.clone())
            .ok_or_else(|| RuntimeError::UnknownAgent(agent_id.to_string()))
    }

    /// The tools of an agent attached to `sets` (default: the world tools).
    fn agent_tools(&self, sets: Option<&[String]>) -> Result<AgentTools, RuntimeError> {
        let registry = self.inner.tool_sets.read();
        let default = [WORLD_TOOLS.to_string()];
        let names = sets.unwrap_or(&default);
        let mut resolved = Vec::with_capacity(names.len());
        for name in names {
            resolved.push((name.clone(), registry.get(name)?));
        }
        Ok(AgentTools::new(resolved)?)
    }

    /// The last `limit` model calls of an agent (running or stored), oldest first: the
    /// `brain_calls` trace (timings, tokens, outcome, repairs, error code; prompts only when its
    /// brain keeps them). Read-your-writes, like every read.
    pub fn agent_trace(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<crate::memory::BrainCallRow>, RuntimeError> {
        Ok(self.agent_trace_page(agent_id, None, limit)?.rows)
    }

    /// A page of an agent's model calls, as [`Runtime::state_history_page`].
    pub fn agent_trace_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<crate::memory::BrainCallRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self
            .inner
            .memory
            .brain_calls_page(agent_id, before, limit)?)
    }

    /// A running agent's last decisions (at most [`JOURNAL_LENGTH`]), oldest first: the context
    /// it decided on, its calls and what came of each, what it said, its brain's latency and
    /// tokens. Kept in memory only (see [`journal`]).
    pub fn recent_decisions(&self, agent_id: &str) -> Result<Vec<Decision>, RuntimeError> {
        Ok(self.running(agent_id)?.journal.recent())
    }

    /// Pauses (`true`) or resumes a running agent's autonomous loop. A paused agent makes no
    /// decision of its own — its idle time passes, its app's news waits — but still listens
    /// and answers when spoken to. Resuming makes it decide at once. Not stored: a restarted
    /// agent runs.
    pub fn set_paused(&self, agent_id: &str, paused: bool) -> Result<(), RuntimeError> {
        self.check_open()?;
        self.running(agent_id)?.set_paused(paused);
        Ok(())
    }

    /// Sets where a running agent is, as the game sees it: a game that moves its characters
    /// itself (physics, navigation) reports their positions, and "who is near me" (hearing,
    /// the brain's `nearby`) uses them. Nothing is published (a game may report every frame);
    /// the position is stored when the agent stops. Any finite position is accepted: the
    /// runtime's world bounds limit its own moves, not the game's.
    pub fn set_position(&self, agent_id: &str, position: Position) -> Result<(), RuntimeError> {
        self.check_open()?;
        if !position.is_finite() {
            return Err(RuntimeError::InvalidConfig(format!(
                "position must have finite x and y, got {position}"
            )));
        }
        let shared = self.running(agent_id)?;
        shared.set_position(position);
        self.inner.world.update_position(agent_id, position);
        Ok(())
    }

    /// Finishes a move the game carried out for a running agent (one it was asked for with
    /// `agent_move_requested`): it arrived, or it is blocked and why. Publishes
    /// `agent_move_finished`; the agent's next decision is told how the move ended. Errors:
    /// `unknown_agent`; `unknown_move` when the agent never asked for that move, or it was
    /// replaced by a newer one or finished already.
    pub fn finish_move(
        &self,
        agent_id: &str,
        move_id: u64,
        outcome: crate::moves::MoveOutcome,
    ) -> Result<(), RuntimeError> {
        self.check_open()?;
        let outcome = crate::moves::MoveOutcome::from_parts(outcome.end(), outcome.reason())
            .map_err(RuntimeError::InvalidMessage)?;
        let shared = self.running(agent_id)?;
        let request = shared.end_move(move_id, outcome.clone())?;
        let text = crate::mind::forming::walked(&request.to.to_string(), outcome.reason());
        self.inner
            .form(&shared, crate::memory::MemoryKind::Did, text, None);
        self.inner.bus.publish(BusMessage::AgentMoveFinished {
            agent_id: agent_id.to_string(),
            move_id,
            to: request.to,
            outcome: outcome.end(),
            reason: outcome.reason().map(str::to_string),
        });
        Ok(())
    }

    /// Tells a running agent what it perceives ("The cellar door is locked.", "Smoke rises
    /// from the bakery."): the line is shown to its next decision (not a message: it does not
    /// make the agent decide, nor is it answered). At most 32 wait;
    /// the oldest goes first. It becomes a memory as it is, so it is at most
    /// [`crate::limits::MAX_OBSERVATION_CHARS`] (a memory's length); a longer one is refused
    /// with `invalid_message` naming the limit, and nothing is kept.
    pub fn observe(&self, agent_id: &str, text: &str) -> Result<(), RuntimeError> {
        self.check_open()?;
        check_text("observation", text, crate::limits::MAX_OBSERVATION_CHARS)?;
        let shared = self.running(agent_id)?;
        shared.observe(text.trim().to_string());
        self.inner.form(
            &shared,
            crate::memory::MemoryKind::Observed,
            text.trim().to_string(),
            None,
        );
        Ok(())
    }

    /// [`Runtime::set_position`] for many agents at once, under one lock of each table (a game
    /// reporting all its characters every frame). Agents that do not run and positions that
    /// are not finite are skipped; returns how many were set.
    pub fn set_positions<'a>(&self, positions: &[(&'a str, Position)]) -> usize {
        if self.is_shut_down() {
            return 0;
        }
        let mut applied: Vec<(&'a str, Position)> = Vec::with_capacity(positions.len());
        {
            let agents = self.inner.agents.read();
            for &(agent_id, position) in positions {
                if let Some(entry) = agents.get(agent_id)
                    && position.is_finite()
                {
                    entry.shared.set_position(position);
                    applied.push((agent_id, position));
                }
            }
        }
        let count = applied.len();
        self.inner.world.update_positions(applied);
        count
    }

    /// Whether a running agent's autonomous loop is paused ([`Runtime::set_paused`]).
    pub fn is_paused(&self, agent_id: &str) -> Result<bool, RuntimeError> {
        Ok(self.running(agent_id)?.is_paused())
    }

    /// Terminates an agent gracefully: its task stops, its subscription closes, it is marked
    /// terminated in the database (so [`Runtime::resume_all`] skips it; spawning its id resumes
    /// it), and subscribers get `AgentRemoved` with reason `terminated`. A stored agent that
    /// waits ([`Runtime::waiting_agents`]) is terminated the same way.
    pub fn terminate(&self, agent_id: &str) -> Result<(), RuntimeError> {
        let entry = match self.remove_entry(agent_id) {
            Err(RuntimeError::UnknownAgent(_)) if self.terminate_waiting(agent_id) => {
                return Ok(());
            }
            entry => entry?,
        };
        entry.shared.set_removal(Removal::Terminated);
        self.inner.memory.mark_agent_removed(agent_id);
        entry.cancel.cancel();
        Ok(())
    }

    /// Stops an agent in this process without terminating it, as a shutdown stops it: its task
    /// stops, its position is saved, it stays resumable (by this process or another one), and
    /// subscribers get `AgentRemoved` with reason `shutdown`. For a world served by several
    /// processes, when this process no longer holds the agent's lease, or hands the agent to
    /// another process. The returned [`Stopped`] says when its task has ended.
    pub fn release(&self, agent_id: &str) -> Result<Stopped, RuntimeError> {
        let entry = self.remove_entry(agent_id)?;
        self.stop(agent_id, &entry);
        Ok(Stopped(entry.shared.stopped.clone()))
    }

    /// Takes a running agent out of the table (its task still runs until cancelled).
    fn remove_entry(&self, agent_id: &str) -> Result<AgentEntry, RuntimeError> {
        self.check_open()?;
        self.inner
            .agents
            .write()
            .remove(agent_id)
            .ok_or_else(|| RuntimeError::UnknownAgent(agent_id.to_string()))
    }

    /// Stops a removed agent as a shutdown does: removal `shutdown`, its position saved, its
    /// task cancelled, out of the world, `AgentRemoved` published.
    fn stop(&self, agent_id: &str, entry: &AgentEntry) {
        entry.shared.set_removal(Removal::Shutdown);
        let (state, position) = entry.shared.state_and_position();
        self.inner
            .memory
            .save_agent_position(agent_id, position, state);
        entry.cancel.cancel();
        self.inner.world.remove(agent_id);
        self.inner.bus.publish(BusMessage::AgentRemoved {
            agent_id: agent_id.to_string(),
            reason: Removal::Shutdown.as_str().into(),
        });
    }

    /// Whether an agent runs in this runtime (no snapshot taken).
    pub fn is_running(&self, agent_id: &str) -> bool {
        self.inner.is_running(agent_id)
    }

    /// A running agent's snapshot.
    pub fn state(&self, agent_id: &str) -> Option<AgentSnapshot> {
        let shared = self
            .inner
            .agents
            .read()
            .get(agent_id)
            .map(|e| e.shared.clone())?;
        Some(shared.snapshot(&self.inner.memory))
    }

    /// Every running agent, by id (`agent_002` before `agent_010` before `agent_1000`).
    pub fn list(&self) -> Vec<AgentSnapshot> {
        let shared: Vec<Arc<AgentShared>> = self
            .inner
            .agents
            .read()
            .values()
            .map(|e| e.shared.clone())
            .collect();
        let mut list: Vec<AgentSnapshot> = shared
            .iter()
            .map(|s| s.snapshot(&self.inner.memory))
            .collect();
        list.sort_by(|a, b| id_order(&a.agent_id, &b.agent_id));
        list
    }

    /// Ids of the running agents, in [`Runtime::list`] order.
    pub fn agent_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.inner.agents.read().keys().cloned().collect();
        ids.sort_by(|a, b| id_order(a, b));
        ids
    }

    /// Number of running agents.
    pub fn agent_count(&self) -> usize {
        self.inner.agents.read().len()
    }

    /// Sends a line from the player (`options.player_id`) to an agent; returns its message id
    /// (see [`Runtime::send_message_from`]).
    pub fn send_message(&self, agent_id: &str, content: &str) -> Result<i64, RuntimeError> {
        self.send_message_from(&self.inner.options.player_id, agent_id, content)
    }

    /// Sends a line from `sender` (the player, an agent, any id) to a running agent. It is
    /// published as `AgentSpoke` addressed to the agent (dialog type `player` when the sender is the
    /// player, else `message`); the agent listens, acknowledges (records it) and answers.
    ///
    /// Returns the line's message id: the [`BusMessage::AgentReplied`] of the decision that
    /// answers it lists the id in `in_reply_to`.
    pub fn send_message_from(
        &self,
        sender: &str,
        agent_id: &str,
        content: &str,
    ) -> Result<i64, RuntimeError> {
        self.check_open()?;
        if sender.trim().is_empty() {
            return Err(RuntimeError::InvalidMessage(
                "sender must not be empty".into(),
            ));
        }
        check_text("message", content, MAX_MESSAGE_CHARS)?;
        crate::limits::check_chars("sender", sender, crate::limits::MAX_SENDER_CHARS)
            .map_err(RuntimeError::InvalidMessage)?;
        if !self.inner.agents.read().contains_key(agent_id) {
            return Err(RuntimeError::UnknownAgent(agent_id.to_string()));
        }
        let dialog_type = if sender == self.inner.options.player_id {
            "player"
        } else {
            "message"
        };
        let (inbox_id, _) =
            self.inner
                .memory
                .send_to_inbox(agent_id, sender, content, dialog_type)?;
        self.inner.bus.publish(BusMessage::AgentSpoke {
            agent_id: sender.to_string(),
            content: content.to_string(),
            recipients: vec![agent_id.to_string()],
            dialog_type: dialog_type.into(),
            inbox_id: Some(inbox_id),
        });
        Ok(inbox_id)
    }

    /// Assigns a task to a running agent (row `assigned`; `TaskAssigned` from the player id).
    /// The agent works on its oldest open task.
    pub fn assign_task(&self, agent_id: &str, task_name: &str) -> Result<TaskRow, RuntimeError> {
        self.check_open()?;
        check_text("task_name", task_name, MAX_TASK_NAME_CHARS)?;
        if !self.inner.agents.read().contains_key(agent_id) {
            return Err(RuntimeError::UnknownAgent(agent_id.to_string()));
        }
        Ok(self
            .inner
            .assign_task(agent_id, task_name.trim(), &self.inner.options.player_id)?)
    }

    /// Completes an open task (row `completed` with its completion time; `TaskCompleted`).
    pub fn complete_task(&self, task_id: i64) -> Result<TaskRow, RuntimeError> {
        self.check_open()?;
        Ok(self.inner.complete_task(task_id)?)
    }

    /// An agent's conversation memory (last `limit` lines, oldest first); works for stored agents
    /// that are not running too.
    pub fn conversation(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.recent_conversation(agent_id, limit)?)
    }

    /// An agent's tasks, open and completed, oldest first.
    pub fn tasks(&self, agent_id: &str) -> Result<Vec<TaskRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.tasks(agent_id)?)
    }

    /// An agent's state history (last `limit`, oldest first).
    pub fn state_history(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.state_history(agent_id, limit)?)
    }

    /// A page of an agent's conversation (see [`Memory::conversation_page`]).
    pub fn conversation_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<ConversationRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self
            .inner
            .memory
            .conversation_page(agent_id, before, limit)?)
    }

    /// A page of an agent's state history (see [`Memory::state_history_page`]).
    pub fn state_history_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self
            .inner
            .memory
            .state_history_page(agent_id, before, limit)?)
    }

    /// A page of an agent's tasks (see [`Memory::tasks_page`]).
    pub fn tasks_page(
        &self,
        agent_id: &str,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Page<TaskRow>, RuntimeError> {
        self.known(agent_id)?;
        Ok(self.inner.memory.tasks_page(agent_id, after, limit)?)
    }

    fn known(&self, agent_id: &str) -> Result<(), RuntimeError> {
        if self.inner.agents.read().contains_key(agent_id)
            || self.inner.memory.agent(agent_id)?.is_some()
        {
            Ok(())
        } else {
            Err(RuntimeError::UnknownAgent(agent_id.to_string()))
        }
    }

    /// Every agent stored in the database (running or not), by id.
    pub fn stored_agents(&self) -> Result<Vec<AgentRecord>, RuntimeError> {
        let mut agents = self.inner.memory.agents()?;
        agents.sort_by(|a, b| id_order(&a.agent_id, &b.agent_id));
        Ok(agents)
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
                Placed {
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

#[cfg(test)]
mod code_tests {
    use super::RuntimeErrorCode;

    #[test]
    fn all_lists_every_code_once_in_order() {
        use RuntimeErrorCode::*;
        // Exhaustive: a new code fails to compile here until it has a place in `ALL`.
        fn position(code: RuntimeErrorCode) -> usize {
            match code {
                UnknownAgent => 0,
                AlreadyRunning => 1,
                InvalidConfig => 2,
                InvalidOptions => 3,
                UnknownBrain => 4,
                BrainError => 5,
                UnknownTask => 6,
                TaskAlreadyCompleted => 7,
                DatabaseError => 8,
                InvalidMessage => 9,
                ShutDown => 10,
                StartupFailed => 11,
                UnknownApp => 12,
                AppExists => 13,
                AppAttached => 14,
                UnknownAction => 15,
                ActionRefused => 16,
                UnknownCampaign => 17,
                LimitReached => 18,
                UnknownMove => 19,
                UnknownMemory => 20,
            }
        }
        for (i, code) in RuntimeErrorCode::ALL.iter().enumerate() {
            assert_eq!(position(*code), i, "{code}");
        }
    }
}
