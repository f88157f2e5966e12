//! Brains: what decides an agent's next actions.
//!
//! A brain answers the tool-call contract ([`BrainReply`]): `{assistant_text, dialog_type,
//! tool_calls:[{id, tool, args, reason?}]}`. World actions (`move`, `wait`, `speak`,
//! `collaborate`, `complete_task`) are tools ([`crate::tools::world`]), so an LLM backend plugs
//! in without changing the runtime.

pub mod budget;
pub mod cli;
pub mod gate;
mod http;
pub mod keys;
pub mod llm;
pub mod local;
pub mod origin;
pub mod policy;
pub mod provider;
pub mod rating;
pub mod reflection;
pub mod scripted;
pub mod section;
pub mod spec;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

pub use crate::contract::{BrainReply, DecisionStep, ToolCall};
use crate::error_code::ErrorCode;
use crate::geometry::{Position, WorldBounds};
use crate::memory::{ConversationRow, TaskRow};
pub use keys::{ApiKeys, InlineKey};
pub use policy::{BrainRefusal, ClientBrainPolicy};
pub use provider::Provider;
pub use section::{Framing, ScriptedPlay, Section, Sections};
pub use spec::{BrainChoice, BrainProfiles, BrainSpec, OptionsError, Price};

/// A message the agent has just acknowledged and should take into account.
/// The player's id (in recipients and contexts) unless the runtime's options name another.
pub const DEFAULT_PLAYER_ID: &str = "player_0";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IncomingMessage {
    /// Who sent it (an agent id or the player id).
    pub sender: String,
    /// Sender's display name (the player id for the player).
    pub sender_name: String,
    /// The text.
    pub content: String,
    /// `speech` or `collaboration` (a request to help with `task_name`).
    pub kind: IncomingKind,
    /// The sender's `dialog_type` (`reply` lines are not answered again by the scripted brain).
    pub dialog_type: String,
}

/// What an incoming message is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IncomingKind {
    /// Someone spoke to the agent.
    Speech,
    /// Another agent asked for help with a task (already assigned to this agent).
    Collaboration {
        /// The task's id.
        task_id: i64,
        /// The task.
        task_name: String,
    },
}

/// Another agent within hearing radius.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NearbyAgent {
    /// Its id.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: String,
    /// Where it is.
    pub position: Position,
    /// Distance from the deciding agent.
    pub distance: f64,
}

/// Everything a brain sees when deciding (the runtime builds it; `docs/brains.md`, "What the model
/// sees").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BrainContext {
    /// The deciding agent.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: String,
    /// Its role prompt.
    pub prompt: String,
    /// The instruction for this decision ("Analyze situation and decide next action").
    pub instruction: String,
    /// Where it is.
    pub position: Position,
    /// The world's rectangle (moves must stay inside).
    pub bounds: WorldBounds,
    /// The task it is working on (oldest open task), if any.
    pub current_task: Option<TaskRow>,
    /// Its other open tasks.
    pub other_tasks: Vec<TaskRow>,
    /// The last 5 lines of its conversation memory, oldest first (from SQLite).
    pub recent_messages: Vec<ConversationRow>,
    /// Messages acknowledged since the last decision, to answer now.
    pub incoming: Vec<IncomingMessage>,
    /// What the game told it it perceives since its last decision, oldest first ("The door to
    /// the cellar is locked."; [`crate::runtime::Runtime::observe`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observations: Vec<String>,
    /// Its latest move the game carries out: under way, or how it ended (shown once after it
    /// ended). `None` for agents the runtime moves itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub movement: Option<crate::moves::MoveStatus>,
    /// Agents within hearing radius, nearest first.
    pub nearby: Vec<NearbyAgent>,
    /// The player's id (`player_0`).
    pub player_id: String,
    /// How many decisions this agent has made before this one (in this run).
    pub decisions: u64,
    /// The tools it may call now, in LLM shape (`name`, `description`, `parameters`).
    pub tools: Vec<serde_json::Value>,
    /// The names of those of [`BrainContext::tools`] that only read (a game's look-ups, the
    /// games' `legal_*` tools): an answer that calls only these gets their results within the
    /// same decision ([`BrainContext::steps`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only_tools: Vec<String>,
    /// The names of those of [`BrainContext::tools`] after a call of which an answer takes no
    /// other call (the world's `speak`: the agent is speaking then, and the state machine
    /// refuses anything else); the answer's check refuses a call that follows one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub final_tools: Vec<String>,
    /// The names of those of [`BrainContext::tools`] that are due (an app's move on the
    /// agent's turn: [`crate::apps::ActionDef::due`]): when there are any, the answer must
    /// call one of them, after any look-ups, or it is sent back for repair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub due_tools: Vec<String>,
    /// Earlier rounds of this decision, oldest first: empty on the first call; then the results
    /// of read-only calls to continue from, or the failure feedback of an answer to repair
    /// ([`DecisionStep`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<DecisionStep>,
    /// What features contribute ([`Section`]): the app the agent plays (`app`), the campaign
    /// it is game master of for this turn (`campaign`). Each is a field of the context's JSON
    /// under its key.
    #[serde(flatten)]
    pub sections: Sections,
}

impl BrainContext {
    /// Takes the read-only tools out of [`BrainContext::tools`]: the decision's last answer
    /// must act, so its look-ups are over (a `local` model's grammar, built from the tools
    /// offered, then cannot produce one).
    pub fn withhold_reads(&mut self) {
        let reads = std::mem::take(&mut self.read_only_tools);
        self.tools.retain(|d| {
            !d["name"]
                .as_str()
                .is_some_and(|n| reads.iter().any(|r| r == n))
        });
    }

    /// A context for a decision outside the world (a GM turn): `agent_id` and `name`, at the
    /// origin, with nothing around and nothing to do yet.
    pub fn detached(agent_id: &str, name: &str) -> BrainContext {
        BrainContext {
            agent_id: agent_id.to_string(),
            name: name.to_string(),
            role: String::new(),
            prompt: String::new(),
            instruction: String::new(),
            position: Position::default(),
            bounds: WorldBounds::default(),
            current_task: None,
            other_tasks: Vec::new(),
            recent_messages: Vec::new(),
            observations: Vec::new(),
            movement: None,
            incoming: Vec::new(),
            nearby: Vec::new(),
            player_id: DEFAULT_PLAYER_ID.to_string(),
            decisions: 0,
            tools: Vec::new(),
            read_only_tools: Vec::new(),
            final_tools: Vec::new(),
            due_tools: Vec::new(),
            steps: Vec::new(),
            sections: Sections::default(),
        }
    }
}

/// Why a brain could not answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BrainError {
    /// No brain with this name.
    #[error("unknown brain '{name}' (available: {available})")]
    Unknown {
        /// The requested name.
        name: String,
        /// Comma-separated names that exist.
        available: String,
    },
    /// The brain is misconfigured (a field of the wrong type, a number out of range, …; the
    /// kinds with a code of their own are [`BrainError::Config`]) — named, never a key's value.
    #[error("{0}")]
    Invalid(String),
    /// The brain object cannot be served as it is, for a reason that has its own code: a
    /// provider that is not registered (`unknown_provider`), no key in the environment variable
    /// (`brain_key_missing`), no model named (`brain_model_missing`), a command-line model's
    /// program that does not exist (`cli_not_found`). The message names the field.
    #[error("{message}")]
    Config {
        /// What is wrong.
        code: ErrorCode,
        /// What is wrong, in words.
        message: String,
    },
    /// The brain object brought its own key (`api_key`), which is never stored: a stored agent
    /// with it runs again once its brain object is given again with the key.
    #[error(
        "brain.api_key was given with the brain object and is not stored: give the brain \
         object with its api_key again to run this agent"
    )]
    KeyNotStored,
    /// A `local` brain's model file is not there (the path, as the operator gave it).
    #[error("brain.model: the model file {0} does not exist")]
    ModelFileMissing(String),
    /// A token budget is spent; no model was called.
    #[error("{0}")]
    BudgetExhausted(String),
    /// A brain of this name is registered already.
    #[error("a brain named '{0}' is already registered")]
    Duplicate(String),
    /// A brain name must not be empty.
    #[error("invalid brain name '{0}': it must not be empty")]
    InvalidName(String),
    /// A model call failed (after its retries).
    #[error("the model call failed: {0}")]
    Call(agents_llm::client::CallError),
    /// A command-line model gave no answer (`cli`).
    #[error("the command-line model failed: {0}")]
    Cli(cli::CliError),
    /// A model run in this process could not answer (the `local` provider: a missing or
    /// invalid model file, a context too small for the prompt, a schema the grammar compiler
    /// cannot handle), with the code the agent reports.
    #[error("the local model failed: {message}")]
    Model {
        /// The agent's error code.
        code: crate::agent_error::AgentErrorCode,
        /// What went wrong.
        message: String,
    },
    /// The backend failed (network, process, …).
    #[error("brain backend failed: {0}")]
    Backend(String),
    /// The backend answered something that is not the contract.
    #[error("invalid brain reply: {0}")]
    InvalidReply(String),
}

impl BrainError {
    /// What an agent's `agent_error` says (it reaches every client): the failure without the
    /// upstream's own words — no provider error body, no command's standard error, no URL
    /// or connection detail. The whole text ([`std::fmt::Display`]) goes to the log.
    pub fn public_message(&self) -> String {
        match self {
            BrainError::Call(e) => format!(
                "the model call failed: {} (the server's log has the provider's answer)",
                e.public_message()
            ),
            BrainError::Cli(e) => format!(
                "the command-line model failed: {} (the server's log has the details)",
                e.public_message()
            ),
            other => other.to_string(),
        }
    }

    /// The code of this failure, the most precise one known: a failed model call's
    /// (`brain_timeout`, `brain_auth_failed`, …), a command-line model's (`cli_exit_status`, …),
    /// a local model's, a configuration's (`brain_key_missing`, `unknown_provider`, …),
    /// `unknown_brain`, `invalid_config` for another brain object that cannot be used, else
    /// `brain_error`.
    pub fn code(&self) -> ErrorCode {
        match self {
            BrainError::Unknown { .. } => ErrorCode::UnknownBrain,
            BrainError::Invalid(_)
            | BrainError::KeyNotStored
            | BrainError::Duplicate(_)
            | BrainError::InvalidName(_) => ErrorCode::InvalidConfig,
            BrainError::Config { code, .. } => *code,
            BrainError::ModelFileMissing(_) => ErrorCode::BrainModelNotFound,
            BrainError::BudgetExhausted(_) => ErrorCode::BudgetExhausted,
            BrainError::Call(e) => ErrorCode::of_call(e.code()),
            BrainError::Cli(e) => e.code(),
            BrainError::Model { code, .. } => code.code(),
            // A reflection's or a rating's answer that is not the contract (a decision's own
            // is reported by the runtime, after its repairs, as `brain_invalid_reply`).
            BrainError::Backend(_) | BrainError::InvalidReply(_) => ErrorCode::BrainError,
        }
    }

    /// The code an agent reports this failure with: [`BrainError::code`] when it is one of an
    /// agent's codes (`brain_auth_failed` (401/403), `brain_model_not_found` (404), a local
    /// model's own code, `budget_exhausted`), else `brain_error`.
    pub fn agent_error_code(&self) -> crate::agent_error::AgentErrorCode {
        use crate::agent_error::AgentErrorCode;
        AgentErrorCode::of(self.code()).unwrap_or(AgentErrorCode::BrainError)
    }
}

/// A boxed decision future.
pub type DecideFuture<'a> =
    Pin<Box<dyn Future<Output = Result<BrainReply, BrainError>> + Send + 'a>>;

/// Decides for one agent. One instance per agent; `decide` may be cancelled (dropped) at any
/// await point when a message interrupts the decision.
pub trait Brain: Send {
    /// The brain's name (`scripted`).
    fn name(&self) -> &str;
    /// Answers the tool-call contract for this context.
    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a>;

    /// The model call behind the last answer (or failure), for the `brain_calls` trace; `None`
    /// for brains that call no model (`scripted`). The runtime fills in `agent_id` and
    /// `repairs` and records it.
    fn take_call_report(&mut self) -> Option<crate::memory::BrainCall> {
        None
    }

    /// Reflects on the agent's recent memories ([`reflection`]): `Ok(None)` (the default) when
    /// the brain has no model to reflect with, and the runtime draws the insights by rule.
    /// Like `decide`, it may be dropped at any await point.
    fn reflect<'a>(
        &'a mut self,
        request: &'a reflection::ReflectionRequest,
    ) -> reflection::ReflectFuture<'a> {
        let _ = request;
        Box::pin(async { Ok(None) })
    }

    /// Rates the importance of the agent's new memories ([`rating`]): `Ok(None)` (the
    /// default) when the brain has no model, and the runtime's heuristic stands. Like
    /// `decide`, it may be dropped at any await point.
    fn rate<'a>(&'a mut self, request: &'a rating::RatingRequest) -> rating::RateFuture<'a> {
        let _ = request;
        Box::pin(async { Ok(None) })
    }
}

/// The trace record of a finished model call (an HTTP request with its retries, a command's
/// run): the tokens of a call that answered, the error code of one that failed. The runtime
/// fills in `agent_id` and `repairs`; the brain adds the prompt and the answer when it keeps
/// them.
pub(crate) fn call_report(
    provider: &str,
    model: Option<String>,
    started_at: String,
    start: std::time::Instant,
    outcome: Result<agents_llm::Usage, String>,
) -> crate::memory::BrainCall {
    use crate::memory::CallOutcome;
    let (usage, outcome, error_code) = match outcome {
        Ok(usage) => (usage, CallOutcome::Ok, None),
        Err(code) => (agents_llm::Usage::default(), CallOutcome::Error, Some(code)),
    };
    crate::memory::BrainCall {
        agent_id: String::new(),
        provider: provider.to_string(),
        model,
        started_at,
        latency_ms: start.elapsed().as_millis() as u64,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_tokens: usage.cached_input_tokens,
        outcome,
        repairs: 0,
        error_code,
        prompt: None,
        reply: None,
    }
}

/// Settings a brain is built with.
#[derive(Clone, Debug, Default)]
pub struct BrainSettings {
    /// Seed for deterministic brains.
    pub seed: u64,
    /// Simulated thinking latency in seconds (scripted).
    pub thinking_seconds: f64,
    /// Replies to give first, in order (scripted; see `AgentConfig::script`).
    pub script: Vec<BrainReply>,
    /// The runtime's limiter and budgets (model brains).
    pub gate: gate::ModelGate,
    /// Where a streaming brain reports text and tool calls as they arrive.
    pub events: BrainEvents,
    /// Whom the agent thinks for: the connection of a server that spawned it
    /// (`connection-3`), or the game itself (`""`). A model shared by several parties gives
    /// them turns (the `local` provider's sequences).
    pub party: String,
    /// The key the brain object carried itself ([`BrainSpec::api_key`]; empty: none), taken
    /// out of its options by [`BrainRegistry::resolve`] so that the options never hold it.
    pub api_key: Option<agents_llm::client::Secret>,
}

/// What a brain reports while it works, besides its answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BrainEvent<'a> {
    /// A piece of a streaming answer: text, or a tool call starting.
    Stream(&'a agents_llm::StreamEvent),
    /// The brain's model file is downloading (a `local` brain's `model_url`).
    ModelDownload {
        /// Where from (without the URL's query).
        url: &'a str,
        /// Bytes received.
        received: u64,
        /// The file's size, when the server says.
        total: Option<u64>,
    },
}

/// Where a brain reports what happens while it answers (the runtime publishes it as
/// `AgentSpeechDelta`, `AgentToolCall`, `ModelDownloadProgress`). The default drops
/// everything.
#[derive(Clone)]
pub struct BrainEvents(std::sync::Arc<dyn Fn(BrainEvent<'_>) + Send + Sync>);

impl BrainEvents {
    /// Reports to `sink`.
    pub fn new(sink: impl Fn(BrainEvent<'_>) + Send + Sync + 'static) -> Self {
        BrainEvents(std::sync::Arc::new(sink))
    }

    /// Reports a piece of a streaming answer.
    pub fn report(&self, event: &agents_llm::StreamEvent) {
        (self.0)(BrainEvent::Stream(event))
    }

    /// Reports any event.
    pub fn report_event(&self, event: BrainEvent<'_>) {
        (self.0)(event)
    }
}

impl Default for BrainEvents {
    fn default() -> Self {
        BrainEvents::new(|_| {})
    }
}

impl std::fmt::Debug for BrainEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BrainEvents")
    }
}

/// A brain choice resolved to a registered provider and its options.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedBrain {
    /// The brain object: its provider is registered (`scripted`, `openai`, …), and a plain
    /// registered name is the provider with no options. An inline key is only marked here
    /// ([`InlineKey::Withheld`]); the key itself is [`ResolvedBrain::api_key`].
    pub spec: BrainSpec,
    /// How snapshots and the stored record name it: the name given, or `provider:model`.
    pub label: String,
    /// The key the brain object carried ([`BrainSpec::api_key`]), for
    /// [`BrainSettings::api_key`].
    pub api_key: Option<agents_llm::client::Secret>,
}

/// Makes the brains of one kind (`scripted`, a provider). Registered by name in a
/// [`BrainRegistry`]; a provider module implements [`Provider`] instead, with options of its
/// own type ([`BrainRegistry::register_provider`]).
///
/// A plain function `Fn(&BrainSettings) -> Result<Box<dyn Brain>, BrainError>` is a factory
/// whose brains take no options (a brain object naming it with any is refused, naming the
/// field).
pub trait BrainFactory: Send + Sync {
    /// Checks a brain object's options alone (nothing of the machine), naming what is wrong.
    fn validate(&self, spec: &BrainSpec) -> Result<(), BrainError>;

    /// Checks a brain object (a plain name is its provider with no options) and what it needs
    /// from the machine, naming what is wrong. `api_key` is the key the brain object carried
    /// itself, if any. The runtime calls it at spawn before the agent gets an id, so a
    /// misconfigured brain is refused and uses no id.
    fn check(
        &self,
        spec: &BrainSpec,
        api_key: Option<&agents_llm::client::Secret>,
    ) -> Result<(), BrainError>;

    /// Builds one agent's brain (after [`BrainFactory::check`] passed).
    fn build(
        &self,
        spec: &BrainSpec,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError>;

    /// The JSON Schema of its options, for the protocol's schema of a brain object; `None`:
    /// none described.
    fn options_schema(
        &self,
        generator: &mut schemars::SchemaGenerator,
    ) -> Option<schemars::Schema> {
        let _ = generator;
        None
    }
}

impl<F> BrainFactory for F
where
    F: Fn(&BrainSettings) -> Result<Box<dyn Brain>, BrainError> + Send + Sync,
{
    fn validate(&self, spec: &BrainSpec) -> Result<(), BrainError> {
        match spec.options.keys().next() {
            Some(field) => Err(BrainError::Invalid(format!(
                "brain.{field}: the {} brain takes no options",
                spec.provider
            ))),
            None => Ok(()),
        }
    }

    fn check(
        &self,
        spec: &BrainSpec,
        _api_key: Option<&agents_llm::client::Secret>,
    ) -> Result<(), BrainError> {
        BrainFactory::validate(self, spec)
    }

    fn build(
        &self,
        _spec: &BrainSpec,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        self(settings)
    }
}

/// The brains a runtime can build, by name. [`BrainRegistry::with_builtins`] holds `scripted`,
/// the HTTP providers, `cli` and `local`; applications add their own with
/// [`BrainRegistry::register`].
#[derive(Clone)]
pub struct BrainRegistry {
    factories: std::collections::BTreeMap<String, std::sync::Arc<dyn BrainFactory>>,
    /// The wire formats of the HTTP providers among them, by name.
    apis: std::collections::BTreeMap<String, &'static dyn agents_llm::api::Api>,
    keys: ApiKeys,
}

impl std::fmt::Debug for BrainRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrainRegistry")
            .field("names", &self.names())
            .finish()
    }
}

impl Default for BrainRegistry {
    fn default() -> Self {
        BrainRegistry::with_builtins()
    }
}

impl BrainRegistry {
    /// A registry with no brains at all.
    pub fn empty() -> Self {
        BrainRegistry {
            factories: Default::default(),
            apis: Default::default(),
            keys: ApiKeys::new(),
        }
    }

    /// A registry with the built-in brains: `scripted`, every HTTP provider of the
    /// `agents-llm` crate (one line each), `cli`, `local`.
    pub fn with_builtins() -> Self {
        let mut registry = BrainRegistry::empty();
        registry.factories.insert(
            scripted::NAME.into(),
            std::sync::Arc::new(|settings: &BrainSettings| {
                Ok(Box::new(scripted::ScriptedBrain::new(settings)) as Box<dyn Brain>)
            }),
        );
        registry.add_http(&agents_llm::openai::API);
        registry.add_http(&agents_llm::anthropic::API);
        registry.add_http(&agents_llm::ollama::API);
        registry.add_provider(cli::NAME, cli::CliProvider);
        registry.add_provider(local::NAME, local::LocalProvider);
        registry
    }

    /// The built-in registry, made once: what the HTTP providers are, for the code that asks
    /// without a runtime's registry ([`llm::api`], the client policy). Its keys are never read.
    pub(crate) fn builtins() -> &'static BrainRegistry {
        static BUILTINS: std::sync::OnceLock<BrainRegistry> = std::sync::OnceLock::new();
        BUILTINS.get_or_init(BrainRegistry::with_builtins)
    }

    fn add_provider(&mut self, name: &str, provider: impl Provider) {
        self.factories.insert(
            name.to_string(),
            std::sync::Arc::new(provider::Registered(provider)),
        );
    }

    /// Registers an HTTP provider under its name: its brains ([`llm::HttpBrains`]) and its
    /// wire format ([`BrainRegistry::http_api`]).
    fn add_http<P: agents_llm::api::HttpProvider>(&mut self, api: &'static P) {
        self.apis.insert(api.name().to_string(), api);
        let keys = self.keys.clone();
        self.add_provider(api.name(), http::Http(llm::HttpBrains::new(api, keys)));
    }

    /// The wire format of the HTTP provider registered as `name`; `None` for any other brain.
    pub fn http_api(&self, name: &str) -> Option<&'static dyn agents_llm::api::Api> {
        self.apis.get(name).copied()
    }

    /// The names of the HTTP providers, sorted.
    pub fn http_names(&self) -> Vec<&'static str> {
        self.apis.values().map(|api| api.name()).collect()
    }

    /// Adds a provider: brains of `name` made from brain objects, their options read as its
    /// [`Provider::Options`]. A name already registered is [`BrainError::Duplicate`].
    pub fn register_provider(
        &mut self,
        name: impl Into<String>,
        provider: impl Provider,
    ) -> Result<(), BrainError> {
        self.register(name, provider::Registered(provider))
    }

    /// The JSON Schema of every option of the registered providers, by field: the first
    /// provider's description, then the providers that take it (`Options: openai,
    /// anthropic.`).
    pub fn options_schemas(
        &self,
        generator: &mut schemars::SchemaGenerator,
    ) -> std::collections::BTreeMap<String, serde_json::Value> {
        let mut fields: std::collections::BTreeMap<String, (serde_json::Value, Vec<&str>)> =
            Default::default();
        for (name, factory) in &self.factories {
            let Some(properties) = option_properties(factory.as_ref(), generator) else {
                continue;
            };
            for (field, property) in properties {
                fields
                    .entry(field)
                    .or_insert_with(|| (property, Vec::new()))
                    .1
                    .push(name);
            }
        }
        fields
            .into_iter()
            .map(|(field, (mut property, providers))| {
                let said = property
                    .get("description")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let description = format!(
                    "{said}{}Provider{}: {}.",
                    if said.is_empty() { "" } else { "\n\n" },
                    if providers.len() > 1 { "s" } else { "" },
                    providers.join(", ")
                );
                if let Some(object) = property.as_object_mut() {
                    object.insert("description".into(), description.into());
                }
                (field, property)
            })
            .collect()
    }

    /// Adds a kind of brain. Names are exact and case-sensitive; a name already registered is
    /// [`BrainError::Duplicate`].
    pub fn register(
        &mut self,
        name: impl Into<String>,
        factory: impl BrainFactory + 'static,
    ) -> Result<(), BrainError> {
        let name = name.into();
        if name.trim().is_empty() {
            return Err(BrainError::InvalidName(name));
        }
        if self.factories.contains_key(&name) {
            return Err(BrainError::Duplicate(name));
        }
        self.factories.insert(name, std::sync::Arc::new(factory));
        Ok(())
    }

    /// The API keys the built-in model brains read (handed over in memory, else the
    /// environment).
    pub fn keys(&self) -> &ApiKeys {
        &self.keys
    }

    /// The options `provider` declares (its brain object's own fields, as its options type
    /// names them), sorted; `None` for a name that is not registered or a brain that declares
    /// no options type (it reads them itself). What an editor shows for the provider.
    pub fn option_names(&self, provider: &str) -> Option<Vec<String>> {
        let factory = self.factories.get(provider)?;
        let mut generator = schemars::SchemaGenerator::default();
        let properties = option_properties(factory.as_ref(), &mut generator)?;
        Some(properties.keys().cloned().collect())
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.factories.keys().map(String::as_str).collect()
    }

    /// Whether a brain of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains_key(name)
    }

    fn factory(&self, name: &str) -> Result<&dyn BrainFactory, BrainError> {
        self.factories
            .get(name)
            .map(|f| f.as_ref())
            .ok_or_else(|| BrainError::Unknown {
                name: name.to_string(),
                available: self.names().join(", "),
            })
    }

    /// Resolves an agent's [`BrainChoice`] against `profiles` and this registry, and checks it
    /// ([`BrainFactory::check`]): a name is a profile, else a registered brain, else the
    /// `claude` preset; an object is checked field by field by its provider.
    pub fn resolve(
        &self,
        choice: &BrainChoice,
        profiles: &std::collections::BTreeMap<String, BrainSpec>,
    ) -> Result<ResolvedBrain, BrainError> {
        let (mut spec, label) = match choice {
            BrainChoice::Named(name) => {
                if let Some(spec) = profiles.get(name) {
                    (spec.clone(), name.clone())
                } else if self.contains(name) {
                    (BrainSpec::provider(name.clone()), name.clone())
                } else if name == spec::CLAUDE_PRESET {
                    (BrainSpec::claude_preset(), name.clone())
                } else {
                    let mut available: Vec<&str> = self.names();
                    available.extend(profiles.keys().map(String::as_str));
                    available.sort_unstable();
                    available.dedup();
                    return Err(BrainError::Unknown {
                        name: name.clone(),
                        available: available.join(", "),
                    });
                }
            }
            BrainChoice::Spec(spec) => ((**spec).clone(), spec.label()),
        };
        spec.validate_shared().map_err(BrainError::Invalid)?;
        if !self.contains(&spec.provider) {
            return Err(BrainError::Config {
                code: ErrorCode::UnknownProvider,
                message: format!(
                    "brain.provider: unknown provider '{}' (available: {})",
                    spec.provider,
                    self.names().join(", ")
                ),
            });
        }
        let api_key = spec
            .api_key
            .as_ref()
            .map(keys::InlineKey::key)
            .transpose()?;
        if api_key.is_some() {
            spec.api_key = Some(InlineKey::Withheld);
        }
        self.check(&spec, api_key.as_ref())?;
        Ok(ResolvedBrain {
            spec,
            label,
            api_key,
        })
    }

    /// Checks a brain object's options alone, by its provider ([`BrainFactory::validate`]):
    /// what an editor can say before anything runs.
    pub fn validate(&self, spec: &BrainSpec) -> Result<(), BrainError> {
        spec.validate_shared().map_err(BrainError::Invalid)?;
        self.factory(&spec.provider)?.validate(spec)
    }

    /// Checks that the brain object's provider exists and accepts it ([`BrainFactory::check`]).
    pub fn check(
        &self,
        spec: &BrainSpec,
        api_key: Option<&agents_llm::client::Secret>,
    ) -> Result<(), BrainError> {
        self.factory(&spec.provider)?.check(spec, api_key)
    }

    /// Builds a brain from a brain object (a [`ResolvedBrain::spec`]). An unknown provider is
    /// [`BrainError::Unknown`] listing the available names.
    pub fn create(
        &self,
        spec: &BrainSpec,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        self.factory(&spec.provider)?.build(spec, settings)
    }
}

/// The JSON Schema properties of the options `factory` declares (`None`: it declares none).
fn option_properties(
    factory: &dyn BrainFactory,
    generator: &mut schemars::SchemaGenerator,
) -> Option<serde_json::Map<String, serde_json::Value>> {
    let schema = factory.options_schema(generator)?;
    let schema = match schema.get("$ref").and_then(serde_json::Value::as_str) {
        Some(reference) => reference
            .rsplit('/')
            .next()
            .and_then(|def| generator.definitions().get(def).cloned())
            .unwrap_or_default(),
        None => schema.to_value(),
    };
    Some(
        schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .cloned()
            .unwrap_or_default(),
    )
}
