//! The one vocabulary of error codes: every code any surface reports — the protocol's `error`
//! messages, `agent_error` events, the runtime's errors, the tool-call contract's failure
//! reasons, a model call's trace, the Godot classes' `get_last_error_code()`, MCP and the
//! command line — is a value of [`ErrorCode`], its wire name written once here, with its
//! [`Category`] and a short [hint](ErrorCode::hint) saying what to do.
//!
//! A surface that reports only some of the codes has a view of them: an enum of those codes
//! declared with [`error_code_subset!`](crate::error_code_subset), which takes the wire names
//! from here (the runtime's [`RuntimeErrorCode`](crate::runtime::RuntimeErrorCode), an agent's
//! [`AgentErrorCode`](crate::agent_error::AgentErrorCode), the protocol's
//! [`ProtocolErrorCode`](crate::protocol::ProtocolErrorCode), the contract's
//! [`FailureReason`](crate::contract::FailureReason), the Godot layer's `GodotErrorCode`). A
//! surface that folds a code into another of its own (the protocol keeps the codes its clients
//! know) says so in one explicit, tested mapping.
//!
//! The category decides what the surfaces that have no room for every code do: the command
//! line's exit status ([`Category::exit_code`]) and an MCP error's JSON-RPC code
//! ([`Category::jsonrpc_code`]).
//!
//! Adding a code: one line in the table below (its doc, wire name, category and hint), then the
//! views that report it, and a row in the table of `docs/protocol.md` if the protocol sends it.
//!
//! A leaf module (it imports only [`crate::wire`] and the model client's codes, which it maps in
//! one place: [`ErrorCode::of_call`]).

use agents_llm::client::CallErrorCode;

crate::wire_enum! {
    /// What kind of failure a code is: what the caller can do about it. The command line's exit
    /// status and an MCP error's code follow from it.
    #[derive(PartialOrd, Ord)]
    pub enum Category: "error category" {
        /// The request or its arguments are wrong: fix them.
        Input = "input",
        /// It names something that does not exist (any more).
        NotFound = "not_found",
        /// The state of things forbids it now: wait, or change the state first.
        Conflict = "conflict",
        /// The caller may not do this.
        Denied = "denied",
        /// A cap, a rate or a budget is reached: slow down, free room or raise it.
        Limit = "limit",
        /// What would do it is not running or not reachable.
        Unavailable = "unavailable",
        /// The operator's configuration is wrong or incomplete (a key, a model, a program, an
        /// option).
        Config = "config",
        /// A brain — a model, its provider, a command-line model — failed.
        Brain = "brain",
        /// The database or a file failed.
        Storage = "storage",
        /// A bug (reported, never a crash).
        Internal = "internal",
    }
}

/// The exit status of a command that failed with a code the caller must change something for
/// (its arguments, its input, the configuration): the status of a usage error.
pub const EXIT_USAGE: u8 = 2;

/// The exit status of a command that failed for another reason (the database, a model, a bug).
pub const EXIT_FAILED: u8 = 1;

/// JSON-RPC's "invalid params": the call must change.
pub const JSONRPC_INVALID_PARAMS: i32 = -32602;
/// JSON-RPC's "internal error".
pub const JSONRPC_INTERNAL_ERROR: i32 = -32603;
/// The JSON-RPC code (of the range JSON-RPC leaves to servers) of a failure the call itself is
/// not to blame for: a limit, something unavailable, a brain, the database.
pub const JSONRPC_SERVER_ERROR: i32 = -32000;

impl Category {
    /// The command line's exit status for a failure of this category: [`EXIT_USAGE`] (2) when
    /// the caller must change something — its input, what it names, the state it acts on, what
    /// it may do, the configuration — else [`EXIT_FAILED`] (1).
    pub const fn exit_code(self) -> u8 {
        match self {
            Category::Input
            | Category::NotFound
            | Category::Conflict
            | Category::Denied
            | Category::Config => EXIT_USAGE,
            Category::Limit
            | Category::Unavailable
            | Category::Brain
            | Category::Storage
            | Category::Internal => EXIT_FAILED,
        }
    }

    /// The JSON-RPC error code an MCP error of this category carries: "invalid params"
    /// (`-32602`) when the call must change, "internal error" (`-32603`) for a bug, and the
    /// server error `-32000` otherwise.
    pub const fn jsonrpc_code(self) -> i32 {
        match self {
            Category::Input
            | Category::NotFound
            | Category::Conflict
            | Category::Denied
            | Category::Config => JSONRPC_INVALID_PARAMS,
            Category::Internal => JSONRPC_INTERNAL_ERROR,
            Category::Limit | Category::Unavailable | Category::Brain | Category::Storage => {
                JSONRPC_SERVER_ERROR
            }
        }
    }
}

/// Declares [`ErrorCode`] from its table: per code its doc, wire name, category and hint.
macro_rules! error_codes {
    ($(
        $(#[doc = $doc:literal])+
        $variant:ident = $wire:literal, $category:ident, $hint:literal;
    )+) => {
        crate::wire_enum! {
            /// An error code: every code any surface reports, each once, with its category and
            /// hint. The wire form is the snake_case name.
            pub enum ErrorCode: "error code" {
                $( $(#[doc = $doc])+ $variant = $wire, )+
            }
        }

        impl ErrorCode {
            /// What kind of failure it is.
            pub const fn category(self) -> Category {
                match self {
                    $(ErrorCode::$variant => Category::$category,)+
                }
            }

            /// What to do about it, in a few words (`check the id; the agent may have
            /// stopped`).
            pub const fn hint(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $hint,)+
                }
            }
        }
    };
}

error_codes! {
    // A frame or a request of the protocol.

    /// The frame is not valid JSON.
    NotJson = "not_json", Input, "send each message as one JSON object in a text frame";
    /// The JSON is not an object.
    NotAnObject = "not_an_object", Input, "send a JSON object with a `type`";
    /// The object has no string `type`.
    MissingType = "missing_type", Input, "add `type`: the request's name";
    /// `type` names no request.
    UnknownType = "unknown_type", Input, "use one of the requests the message lists";
    /// A field is missing, mistyped, unknown or over its limit (the message names it and the
    /// limit); an array where an object belongs; also a bad `request_id`.
    InvalidRequest = "invalid_request", Input, "fix the field the message names";
    /// An object has the same key twice (the message names it).
    DuplicateField = "duplicate_field", Input, "give each key once per object";
    /// A binary frame (the protocol is JSON text).
    BinaryNotSupported = "binary_not_supported", Input, "send text frames of JSON";

    // Agents, brains, tasks, messages.

    /// No running (or stored, for history reads) agent with this id.
    UnknownAgent = "unknown_agent", NotFound, "check the agent id: the agent may have stopped";
    /// The agent is already running (or a running agent has the key asked for).
    AlreadyRunning = "already_running", Conflict,
        "use the running agent, or terminate it first";
    /// The agent config is invalid (numbers, position outside the world, a brain object the
    /// provider refuses…).
    InvalidConfig = "invalid_config", Input, "fix the config field the message names";
    /// The runtime's options are invalid (the message names the option).
    InvalidOptions = "invalid_options", Config, "fix the runtime option the message names";
    /// No brain with that name.
    UnknownBrain = "unknown_brain", NotFound,
        "use a brain the message lists, or configure a profile of that name";
    /// A brain object names a provider that is not registered.
    UnknownProvider = "unknown_provider", Config,
        "use a provider the message lists (openai, anthropic, cli, scripted, …)";
    /// The brain needs an API key and there is none: its environment variable is not set
    /// (or the key given is empty).
    BrainKeyMissing = "brain_key_missing", Config,
        "set the environment variable the message names to the API key (a loopback base_url \
         needs none)";
    /// The brain object names no model, and its provider needs one.
    BrainModelMissing = "brain_model_missing", Config, "give the model's name (`model`)";
    /// The server does not let clients choose this brain (a brain object, a field of one, a
    /// `base_url` origin, a preset): the message names what and the switch that allows it.
    BrainNotAllowed = "brain_not_allowed", Denied,
        "use a brain the server offers, or ask its operator for the switch the message names";
    /// The brain failed (its backend is unreachable, it crashed, it did not start, …).
    BrainError = "brain_error", Brain,
        "see the message: check the brain's provider, model and key";
    /// No task with that id.
    UnknownTask = "unknown_task", NotFound, "check the task id";
    /// The task is already completed.
    TaskAlreadyCompleted = "task_already_completed", Conflict,
        "nothing to do: the task is done";
    /// The message, text or name is empty or too long (also a memory, a campaign or a turn
    /// that cannot be used as given; the message says why).
    InvalidMessage = "invalid_message", Input,
        "give a text that is not empty and within its limit";
    /// A state change the state machine refuses (`speaking → thinking`).
    InvalidTransition = "invalid_transition", Conflict, "wait until the agent is idle";
    /// An action the world refuses (a target outside the bounds, an unknown helper, a task that
    /// is not the agent's).
    InvalidAction = "invalid_action", Input,
        "the agent's brain chose something the world does not allow; it chooses again";
    /// A reader fell behind and missed bus messages.
    Lagged = "lagged", Limit, "read events faster, or subscribe to fewer";

    // Tools and the tool-call contract.

    /// No tool with that name.
    UnknownTool = "unknown_tool", NotFound, "use a tool of the list of tools";
    /// The tool's arguments fail its JSON Schema (the message names the field); a refused
    /// call's reason with status `error`.
    InvalidArgs = "invalid_args", Input, "fix the argument the message names";
    /// A call's arguments are not a JSON object (status `error`).
    InvalidJson = "invalid_json", Input, "pass the arguments as one JSON object";
    /// Two calls in one reply share an id (status `error`).
    DuplicateCallId = "duplicate_call_id", Input, "give each call of a reply its own id";
    /// The agent has no tool of that name now (status `rejected`).
    ToolNotAllowed = "tool_not_allowed", Denied, "call only the tools offered now";
    /// A guarded tool refused its caller before looking at the arguments (an app's action
    /// while the other side is in control, a `humanOnly` / `agentOnly` action), or an action
    /// was asked for while the agent cannot act (it is speaking).
    ActionRefused = "action_refused", Conflict,
        "wait until the caller may act (see the message)";
    /// The app the action belongs to is in `human` control mode: "Human is in control"
    /// (status `rejected`).
    HumanInControl = "human_in_control", Conflict, "wait until the human hands control back";
    /// The action is marked `humanOnly`: only the human may trigger it (status `rejected`).
    HumanOnly = "human_only", Denied, "leave this action to the human";
    /// The turn actor's character state forbids the call (a campaign's GM tools; status
    /// `rejected`).
    ActorStateRestricted = "actor_state_restricted", Conflict,
        "choose a call the actor's state allows";
    /// The turn actor's character state is not one the rules know (status `rejected`).
    InvalidActorState = "invalid_actor_state", Input,
        "set the actor's character_state to one the rules know";
    /// The call was cancelled before it finished (its caller was interrupted, terminated or
    /// shut down).
    Cancelled = "cancelled", Unavailable, "call again if it is still wanted";

    // Apps, moves, memories, campaigns.

    /// No app with that id.
    UnknownApp = "unknown_app", NotFound, "register the app first, or check its id";
    /// An app with that id is registered already.
    AppExists = "app_exists", Conflict, "use another app_id, or unregister the app first";
    /// The app has another agent attached (or none, where one is needed), or the agent is
    /// attached to another app.
    AppAttached = "app_attached", Conflict, "detach the other agent or app first";
    /// The request changes an app this connection did not register (its front end's own
    /// requests; other connections may read it with `get_app_session`).
    AppNotOwned = "app_not_owned", Denied,
        "change an app from the connection that registered it";
    /// The app an agent's action belonged to was unregistered before the action ran.
    AppGone = "app_gone", NotFound, "the app is gone: nothing to do until it registers again";
    /// The app's handler refused or failed the agent's action (the result's `error` says why).
    AppRefused = "app_refused", Conflict, "see the app's answer; choose another action";
    /// No action with that id is waiting for the app's answer (answered already, timed out, or
    /// cancelled).
    UnknownAction = "unknown_action", NotFound,
        "answer only actions that wait (the action may have timed out)";
    /// A move could not be finished: the agent never asked for it, a newer move replaced it,
    /// or it finished already.
    UnknownMove = "unknown_move", NotFound, "finish the agent's latest move, once";
    /// The agent has no memory with that id.
    UnknownMemory = "unknown_memory", NotFound, "check the memory id";
    /// A campaign file's path is not one the caller may use (no campaign directory, a path
    /// that leaves it, no such file, not a regular file).
    InvalidPath = "invalid_path", Input,
        "name a campaign file inside the campaign directory, by a relative path";
    /// A campaign file cannot be used (not JSON, not a campaign, a broken map; every problem
    /// named).
    InvalidCampaign = "invalid_campaign", Input, "fix the campaign file as the message says";
    /// A campaign file tool's call was applied, but the file could not be saved.
    SaveFailed = "save_failed", Storage, "check the file's permissions and the free disk";
    /// No campaign with that id is loaded (`campaign_load` first).
    UnknownCampaign = "unknown_campaign", NotFound, "load the campaign first";
    /// A subscription filter names an unknown event type.
    InvalidFilter = "invalid_filter", Input, "name event types the welcome message lists";

    // The server, its limits, the runtime.

    /// The token is missing or wrong.
    Unauthorized = "unauthorized", Denied, "send the server's token";
    /// Too many requests on this connection; slow down.
    RateLimited = "rate_limited", Limit, "slow down, then try again";
    /// One of the server's caps is reached (running agents, loaded campaigns): the message
    /// names it and what frees room.
    LimitReached = "limit_reached", Limit,
        "free room as the message says, or raise the cap";
    /// A token budget is spent: the agent calls no model until it is raised.
    BudgetExhausted = "budget_exhausted", Limit, "raise the token budget, or wait for it";
    /// The database failed.
    DatabaseError = "database_error", Storage,
        "check the database: its disk, its permissions, the log";
    /// The runtime is shutting down.
    ShutDown = "shut_down", Unavailable, "start a runtime again";
    /// The runtime could not start (its async runtime or a worker could not be built).
    StartupFailed = "startup_failed", Internal,
        "see the message: the machine may be short of threads or memory";
    /// The agent runs on another process of the world (`--cluster`), which did not answer in
    /// time (it may have stopped).
    AgentUnreachable = "agent_unreachable", Unavailable,
        "try again; the agent's process may have stopped";
    /// A bug (reported, never a crash).
    InternalError = "internal_error", Internal, "a bug: report it with the log";

    // A model call (the brains' trace and `agent_error`).

    /// The model provider refused the key (401 / 403).
    BrainAuthFailed = "brain_auth_failed", Brain, "check the API key";
    /// The model provider does not know the model (404; the message quotes the server), or a
    /// local model's file does not exist.
    BrainModelNotFound = "brain_model_not_found", Brain,
        "use a model the provider lists (or a model file that exists)";
    /// Nothing answered at the provider's URL (no connection, or a stream cut short).
    BrainUnreachable = "brain_unreachable", Brain,
        "check that the model's server runs and that base_url is right";
    /// The model did not finish its answer in time.
    BrainTimeout = "brain_timeout", Brain, "raise timeout_seconds, or use a faster model";
    /// The provider is rate-limiting (429).
    BrainRateLimited = "brain_rate_limited", Brain,
        "wait, or make fewer model calls at once";
    /// The provider failed (5xx).
    BrainServerError = "brain_server_error", Brain, "try again later";
    /// The provider refused the request (another 4xx; a redirect, which is not followed).
    BrainBadRequest = "brain_bad_request", Brain,
        "use a model with tool calling, and options the provider supports";
    /// The provider reported an error inside its answer.
    BrainProviderError = "brain_provider_error", Brain, "try again later";
    /// The answer is not in the provider's wire format.
    BrainInvalidResponse = "brain_invalid_response", Brain,
        "check that the provider matches the server (openai for OpenAI-compatible servers)";
    /// The brain kept answering something that breaks the contract, also after its repairs;
    /// nothing of that decision was applied.
    BrainInvalidReply = "brain_invalid_reply", Brain,
        "use a model that follows tool-calling instructions";

    // A model run in the process (`local`).

    /// A local model's file is not a model llama.cpp can load (not GGUF, corrupt, truncated).
    BrainModelInvalid = "brain_model_invalid", Brain, "use a GGUF model file";
    /// A local model does not fit the memory free (its file, or the context asked for).
    BrainModelTooLarge = "brain_model_too_large", Brain,
        "use a smaller model or context, or free memory";
    /// A local model's prompt and answer do not fit its context.
    BrainContextExceeded = "brain_context_exceeded", Brain,
        "raise the model's context, or shorten what the prompt holds";
    /// The JSON Schema an answer must match could not be made into a grammar.
    BrainGrammarFailed = "brain_grammar_failed", Brain,
        "simplify the schema of the tools offered";
    /// A local model's chat template could not be applied.
    BrainTemplateFailed = "brain_template_failed", Brain,
        "use a model whose chat template llama.cpp supports";
    /// A local model's file could not be downloaded from its URL (the server, the connection,
    /// the disk; the next decision tries again, resuming what arrived), or copied out of the
    /// game's exported pack.
    BrainModelDownloadFailed = "brain_model_download_failed", Brain,
        "check the URL, the connection and the free disk; it is tried again";
    /// A local model's downloaded file does not have the SHA-256 asked for (it was deleted).
    BrainModelChecksumMismatch = "brain_model_checksum_mismatch", Brain,
        "check model_sha256 against the file's published hash";

    // A command-line model (`cli`).

    /// The command's program does not exist (on `PATH`, or at the path given).
    CliNotFound = "cli_not_found", Config,
        "install the command, or give its full path as the first element of `command`";
    /// The command's program could not be started.
    CliSpawnFailed = "cli_spawn_failed", Brain,
        "check that the program may be run (its permissions)";
    /// The command did not finish in time and was killed.
    CliTimeout = "cli_timeout", Brain, "raise timeout_seconds";
    /// The command exited unsuccessfully.
    CliExitStatus = "cli_exit_status", Brain,
        "run the command by hand with the request on its standard input and read its errors";
    /// The command printed more than the limit on its standard output.
    CliOutputTooLarge = "cli_output_too_large", Brain,
        "make the command print one JSON object, the contract";
    /// The command's output is not an answer (not the contract, nor Claude Code's result).
    CliInvalidOutput = "cli_invalid_output", Brain,
        "make the command print one JSON object, the contract";
    /// The command reported an error in its result (Claude Code's result object).
    CliReportedError = "cli_reported_error", Brain,
        "run the command by hand (for claude: is it logged in?)";

    // The Godot classes.

    /// The `AgentRuntime` is not running (call `start()`, or turn `autostart` on).
    NotRunning = "not_running", Unavailable, "start the AgentRuntime first";
    /// An `AgentNode` has no running agent: no `AgentRuntime` was found, the runtime has not
    /// started, or the spawn failed.
    NotSpawned = "not_spawned", Unavailable,
        "give the node an AgentRuntime that runs, and check why its spawn failed";
    /// The agent stopped (terminated, its runtime stopped, its node left the tree) before it
    /// answered.
    AgentStopped = "agent_stopped", Unavailable, "spawn the agent again to talk to it";
    /// An `AgentApp` or a `Campaign` call that needs it registered, attached or loaded first.
    NotReady = "not_ready", Conflict, "register, attach or load it first";
    /// A call's argument is wrong (a value that is not JSON, a name that is empty, an actor not
    /// in the party, a command line's argument); the message names it.
    InvalidArgument = "invalid_argument", Input, "fix the argument the message names";
    /// A file could not be read or written (a campaign's save); the message names it.
    FileError = "file_error", Storage, "check the file's path, permissions and disk";
    /// A campaign turn could not start (one is running, no game master is attached).
    TurnRefused = "turn_refused", Conflict,
        "wait for the running turn, or attach a game master";
    /// A campaign turn failed after it started (the GM's brain failed, the runtime stopped).
    TurnFailed = "turn_failed", Brain, "see the message; nothing of the turn was applied";
    /// An app's action was not carried out (its handler failed, it timed out).
    ActionFailed = "action_failed", Unavailable,
        "check the app's action handler; answer each action within its timeout";
    /// A tool written in GDScript failed (its function returned `null` or an error, its object
    /// was freed).
    ToolFailed = "tool_failed", Internal, "check the GDScript tool's function";
}

impl ErrorCode {
    /// The code a failed model call is reported with (the model client's codes, mapped here
    /// once; every one keeps its wire name).
    pub const fn of_call(code: CallErrorCode) -> ErrorCode {
        match code {
            CallErrorCode::Unreachable => ErrorCode::BrainUnreachable,
            CallErrorCode::Timeout => ErrorCode::BrainTimeout,
            CallErrorCode::RateLimited => ErrorCode::BrainRateLimited,
            CallErrorCode::ServerError => ErrorCode::BrainServerError,
            CallErrorCode::AuthFailed => ErrorCode::BrainAuthFailed,
            CallErrorCode::ModelNotFound => ErrorCode::BrainModelNotFound,
            CallErrorCode::BadRequest => ErrorCode::BrainBadRequest,
            CallErrorCode::ProviderError => ErrorCode::BrainProviderError,
            CallErrorCode::InvalidResponse => ErrorCode::BrainInvalidResponse,
        }
    }

    /// The JSON Schema of some of the codes, in the order given: `oneOf` each name with its
    /// description (what a view of the codes publishes). `description` is the view's own.
    pub fn schema_of(
        codes: &[ErrorCode],
        description: &str,
        generator: &mut schemars::SchemaGenerator,
    ) -> schemars::Schema {
        let mut all = schemars::SchemaGenerator::new(generator.settings().clone())
            .root_schema_for::<ErrorCode>();
        let entries = all
            .get_mut("oneOf")
            .and_then(serde_json::Value::as_array_mut)
            .map(std::mem::take)
            .unwrap_or_default();
        let one_of: Vec<serde_json::Value> = codes
            .iter()
            .filter_map(|code| {
                entries
                    .iter()
                    .find(|e| {
                        e.get("const").and_then(serde_json::Value::as_str) == Some(code.as_str())
                    })
                    .cloned()
            })
            .collect();
        let mut schema = serde_json::Map::new();
        let description = doc_text(description);
        if !description.is_empty() {
            schema.insert("description".into(), description.into());
        }
        schema.insert("oneOf".into(), one_of.into());
        schemars::Schema::from(schema)
    }
}

/// A doc comment's text as schemars writes it into a description: each line without its first
/// space, the whole trimmed.
fn doc_text(doc: &str) -> String {
    doc.lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

impl From<CallErrorCode> for ErrorCode {
    fn from(code: CallErrorCode) -> ErrorCode {
        ErrorCode::of_call(code)
    }
}

/// Declares a view of [`ErrorCode`]: an enum of some of the codes, for a surface that reports
/// only those. Variants are named as the codes are; their wire names, categories and hints
/// are the codes' (written once, in [`ErrorCode`]).
///
/// ```
/// agents_core::error_code_subset! {
///     /// What a lamp's switch reports.
///     pub enum LampError: "lamp error" {
///         InvalidArgument,
///         InternalError,
///     }
/// }
/// use agents_core::error_code::ErrorCode;
/// assert_eq!(LampError::InvalidArgument.as_str(), "invalid_argument");
/// assert_eq!(ErrorCode::from(LampError::InternalError), ErrorCode::InternalError);
/// assert_eq!(LampError::of(ErrorCode::NotJson), None);
/// assert_eq!("internal_error".parse::<LampError>(), Ok(LampError::InternalError));
/// ```
///
/// It generates `ALL` and `NAMES` (in the order given), `code` (the [`ErrorCode`]), `of` (the
/// view's value of a code, if it has it), `as_str`, `category`, `hint`, `Display`, `FromStr`,
/// conversions both ways (`From` into [`ErrorCode`], `TryFrom` out of it), serde by the wire
/// name and a JSON Schema of exactly these codes (named as given after `schema`, or after the
/// enum).
#[macro_export]
macro_rules! error_code_subset {
    (
        $(#[doc = $doc:literal])*
        $vis:vis enum $name:ident : $what:literal $(schema $schema:literal)? {
            $($variant:ident),+ $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $(
                #[doc = concat!("The error code `", stringify!($variant), "` (its wire name: `as_str`).")]
                $variant,
            )+
        }

        impl $name {
            /// Every code of this view, in declaration order.
            pub const ALL: [$name; $crate::wire_enum!(@count $($variant)+)] =
                [$($name::$variant),+];

            /// Every code's wire name, in declaration order.
            pub const NAMES: [&'static str; $crate::wire_enum!(@count $($variant)+)] =
                [$($crate::error_code::ErrorCode::$variant.as_str()),+];

            /// The code.
            pub const fn code(self) -> $crate::error_code::ErrorCode {
                match self {
                    $($name::$variant => $crate::error_code::ErrorCode::$variant,)+
                }
            }

            /// This view's value of `code`; `None` when the view does not have it.
            pub const fn of(code: $crate::error_code::ErrorCode) -> ::core::option::Option<$name> {
                match code {
                    $($crate::error_code::ErrorCode::$variant => {
                        ::core::option::Option::Some($name::$variant)
                    })+
                    #[allow(unreachable_patterns)]
                    _ => ::core::option::Option::None,
                }
            }

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                self.code().as_str()
            }

            /// What kind of failure it is.
            pub const fn category(self) -> $crate::error_code::Category {
                self.code().category()
            }

            /// What to do about it.
            pub const fn hint(self) -> &'static str {
                self.code().hint()
            }

            /// The value of a wire name; `None` for any other text (a code of another view
            /// too).
            pub fn from_name(name: &str) -> ::core::option::Option<$name> {
                $crate::error_code::ErrorCode::from_name(name).and_then($name::of)
            }
        }

        impl ::core::convert::From<$name> for $crate::error_code::ErrorCode {
            fn from(code: $name) -> $crate::error_code::ErrorCode {
                code.code()
            }
        }

        impl ::core::convert::TryFrom<$crate::error_code::ErrorCode> for $name {
            type Error = $crate::error_code::ErrorCode;

            /// This view's value of a code; the code itself when the view does not have it.
            fn try_from(
                code: $crate::error_code::ErrorCode,
            ) -> ::core::result::Result<$name, $crate::error_code::ErrorCode> {
                $name::of(code).ok_or(code)
            }
        }

        $crate::wire_text!($name: $what);

        impl $crate::wire::__private::serde::Serialize for $name {
            fn serialize<S: $crate::wire::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> $crate::wire::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::wire::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<$name, D::Error> {
                struct Visitor;
                impl<'de> $crate::wire::__private::serde::de::Visitor<'de> for Visitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(concat!($what, " as a string"))
                    }

                    fn visit_str<E: $crate::wire::__private::serde::de::Error>(
                        self,
                        text: &str,
                    ) -> ::core::result::Result<$name, E> {
                        $name::from_name(text).ok_or_else(|| E::unknown_variant(text, &$name::NAMES))
                    }
                }
                deserializer.deserialize_str(Visitor)
            }
        }

        impl $crate::wire::__private::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                $crate::error_code_subset!(@schema_name $name $($schema)?).into()
            }

            fn json_schema(
                generator: &mut $crate::wire::__private::schemars::SchemaGenerator,
            ) -> $crate::wire::__private::schemars::Schema {
                $crate::error_code::ErrorCode::schema_of(
                    &$name::ALL.map($name::code),
                    concat!($($doc, "\n"),*),
                    generator,
                )
            }
        }
    };
    (@schema_name $name:ident $schema:literal) => { $schema };
    (@schema_name $name:ident) => { stringify!($name) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_code_has_a_unique_wire_name_a_hint_and_round_trips() {
        let mut names = HashSet::new();
        for code in ErrorCode::ALL {
            let name = code.as_str();
            assert!(names.insert(name), "twice: {name}");
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{name}"
            );
            assert_eq!(name.parse::<ErrorCode>(), Ok(code));
            assert_eq!(code.to_string(), name);
            assert_eq!(serde_json::to_value(code).unwrap(), name);
            let hint = code.hint();
            assert!(
                !hint.trim().is_empty() && hint.len() <= 120,
                "{name}: {hint}"
            );
            assert!(!hint.ends_with('.'), "{name}: a hint is a phrase: {hint}");
            // Every category is one of the small set, and every code has one.
            assert!(Category::ALL.contains(&code.category()), "{name}");
        }
        assert!(
            "nope"
                .parse::<ErrorCode>()
                .unwrap_err()
                .to_string()
                .starts_with(
                    "unknown error code 'nope' (use not_json, not_an_object, missing_type"
                )
        );
    }

    #[test]
    fn every_category_is_used_and_maps_to_an_exit_code_and_a_jsonrpc_code() {
        for category in Category::ALL {
            assert!(
                ErrorCode::ALL.iter().any(|c| c.category() == category),
                "{category} has no code"
            );
            assert!([EXIT_USAGE, EXIT_FAILED].contains(&category.exit_code()));
            assert!(
                [
                    JSONRPC_INVALID_PARAMS,
                    JSONRPC_INTERNAL_ERROR,
                    JSONRPC_SERVER_ERROR
                ]
                .contains(&category.jsonrpc_code())
            );
        }
        assert_eq!(ErrorCode::InvalidOptions.category().exit_code(), EXIT_USAGE);
        assert_eq!(ErrorCode::DatabaseError.category().exit_code(), EXIT_FAILED);
        assert_eq!(ErrorCode::UnknownTool.category().jsonrpc_code(), -32602);
        assert_eq!(ErrorCode::InternalError.category().jsonrpc_code(), -32603);
    }

    #[test]
    fn every_model_call_code_keeps_its_wire_name() {
        // Exhaustive over the client's codes: a new one fails to compile in `of_call`.
        for call in [
            CallErrorCode::Unreachable,
            CallErrorCode::Timeout,
            CallErrorCode::RateLimited,
            CallErrorCode::ServerError,
            CallErrorCode::AuthFailed,
            CallErrorCode::ModelNotFound,
            CallErrorCode::BadRequest,
            CallErrorCode::ProviderError,
            CallErrorCode::InvalidResponse,
        ] {
            assert_eq!(ErrorCode::of_call(call).as_str(), call.as_str());
            assert_eq!(ErrorCode::of_call(call).category(), Category::Brain);
        }
    }

    crate::error_code_subset! {
        /// A test view.
        pub enum Pair: "pair code" schema "PairCode" {
            UnknownAgent,
            NotJson,
        }
    }

    #[test]
    fn a_view_takes_its_names_from_the_codes() {
        assert_eq!(Pair::NAMES, ["unknown_agent", "not_json"]);
        assert_eq!(Pair::of(ErrorCode::NotJson), Some(Pair::NotJson));
        assert_eq!(Pair::of(ErrorCode::Lagged), None);
        assert_eq!(Pair::try_from(ErrorCode::Lagged), Err(ErrorCode::Lagged));
        assert_eq!(ErrorCode::from(Pair::UnknownAgent), ErrorCode::UnknownAgent);
        assert_eq!(Pair::UnknownAgent.category(), Category::NotFound);
        for code in Pair::ALL {
            assert_eq!(code.as_str().parse::<Pair>(), Ok(code));
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
            assert_eq!(serde_json::from_value::<Pair>(json).unwrap(), code);
        }
        assert_eq!(
            "lagged".parse::<Pair>().unwrap_err().to_string(),
            "unknown pair code 'lagged' (use unknown_agent, not_json)"
        );
        let refused = serde_json::from_value::<Pair>(serde_json::json!("lagged")).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "unknown variant `lagged`, expected `unknown_agent` or `not_json`"
        );
        let schema = serde_json::to_value(schemars::schema_for!(Pair)).unwrap();
        assert_eq!(schema["title"], "PairCode");
        assert_eq!(schema["description"], "A test view.");
        let one_of = schema["oneOf"].as_array().unwrap();
        assert_eq!(one_of.len(), 2);
        assert_eq!(one_of[1]["const"], "not_json");
        assert_eq!(one_of[1]["description"], "The frame is not valid JSON.");
    }
}
