//! Every request of the protocol, each written once: its fields, where a world served by
//! several processes answers it, whether its reply waits for a memory write, the app it acts
//! in, how it runs and what it does.
//!
//! # Design
//!
//! A request is a struct (`SendMessage`, `CampaignTurn`, …) with an `impl Request` beside it,
//! in the module of its area (`agents`, `history`, `tools`, `apps`, `campaigns`), and so is
//! its reply (`SendMessageResponse`): [`Request::Reply`] ties the two by type, so a handler
//! cannot answer with another request's reply, and it never copies the `request_id` (the
//! dispatch adds it, [`Replied`]). Its durability ([`Request::WRITES`]) is stated; its route,
//! its app and how it runs have defaults (the connection's own process, none, the blocking
//! pool) that a request overrides where they differ.
//!
//! One line of [`requests!`] registers it: `"send_message" => SendMessage ->
//! SendMessageResponse by agent_id`. From that line follow the [`ClientRequest`] enum the
//! parser reads and the [`Reply`] enum the server sends (and their JSON Schemas,
//! `docs/protocol/`), the list of request types in `welcome` and in `unknown_type` errors
//! ([`REQUEST_TYPES`]), the routing of a request about one agent (`by agent_id`: answered by
//! the process running it) and the dispatch ([`ClientRequest::handle`]): there is no other
//! list of requests or replies to edit.

mod agents;
mod apps;
mod campaigns;
mod history;
mod memories;
mod tools;

pub use agents::*;
pub use apps::*;
pub use campaigns::*;
pub use history::*;
pub use memories::*;
pub use tools::*;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ErrorMessage, ProtocolErrorCode, RequestId, ServerMessage};
use crate::apps::AppConfig;
use crate::error_code::ErrorCode;
use crate::runtime::{Runtime, RuntimeError, RuntimeErrorCode};
use crate::tools::ToolRegistry;

/// Where a request is answered in a world served by several processes (`--cluster`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route<'a> {
    /// The process the client is connected to (reads of the shared memory, tools, the
    /// connection's own state, the apps and campaigns that live on it).
    Here,
    /// The process running this agent (a request only it can answer).
    Agent(&'a str),
    /// The process running the agent that owns this task.
    Task(i64),
    /// The process the client is connected to, after the agent was handed over to it: the
    /// request binds the agent to something that lives there (an app, a loaded campaign).
    BringHere(&'a str),
    /// Every process, each for its own agents; the replies are merged into one.
    World,
}

/// How a request runs on the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// On the connection's task: it reads memory-resident state or hands work on, in
    /// microseconds.
    Inline,
    /// On the blocking pool: it may touch SQLite or search (a `suggest_*` AI).
    Blocking,
}

/// What a request needs to be answered.
pub struct Cx<'a> {
    /// The runtime it runs against.
    pub runtime: &'a Runtime,
    /// The tool registry.
    pub tools: &'a ToolRegistry,
}

/// Why a request was refused: its code, without loss (a runtime error keeps its own code),
/// and its message. Over the protocol it is an `error` reply ([`Refusal::protocol_code`]); an
/// embedding surface (the Godot classes) reports [`Refusal::code`] itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The code.
    pub code: ErrorCode,
    /// The message (names the field where there is one).
    pub message: String,
}

impl Refusal {
    /// A refusal with `code`.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Refusal {
        Refusal {
            code: code.into(),
            message: message.into(),
        }
    }

    /// The code a protocol client gets: a runtime code as the protocol maps it
    /// ([`ProtocolErrorCode::of_runtime`]), another protocol code as it is.
    pub fn protocol_code(&self) -> ProtocolErrorCode {
        RuntimeErrorCode::of(self.code)
            .map(ProtocolErrorCode::of_runtime)
            .or_else(|| ProtocolErrorCode::of(self.code))
            .unwrap_or(ProtocolErrorCode::InternalError)
    }

    /// The `error` message of this refusal.
    pub fn to_message(&self, request_id: Option<RequestId>) -> ServerMessage {
        error(self.protocol_code(), self.message.clone(), request_id)
    }
}

impl From<RuntimeError> for Refusal {
    fn from(e: RuntimeError) -> Refusal {
        Refusal::new(e.code(), e.to_string())
    }
}

/// Answers `request` against `runtime` now, as an embedding surface calls an operation (the
/// Godot classes' methods): the same declaration, checks and typed reply as over the protocol,
/// without a connection. A request whose work only a connection can finish (`subscribe`,
/// `app_register`, `app_human_action`) or that answers later (the campaign requests) is
/// refused with `internal_error`: such a surface has its own calls for those.
pub fn answer<R: Request>(request: R, runtime: &Runtime) -> Result<R::Reply, Refusal> {
    static NO_TOOLS: std::sync::LazyLock<ToolRegistry> =
        std::sync::LazyLock::new(ToolRegistry::new);
    match request.handle(&Cx {
        runtime,
        tools: &NO_TOOLS,
    }) {
        Answer::Now(result) => result,
        Answer::Later(_) | Answer::Connection(_) => Err(Refusal::new(
            ProtocolErrorCode::InternalError,
            "this request is answered by a connection, not directly",
        )),
    }
}

/// A reply that is sent later, off the connection's read loop, in the order of the
/// connection's other such requests (a campaign's turn waits for its model).
pub type Later<R> =
    Box<dyn FnOnce(Arc<Runtime>) -> Pin<Box<dyn Future<Output = R> + Send + 'static>> + Send>;

/// What a request of reply type `R` answers: its reply (or a refusal) now, its reply later,
/// or work only the connection can finish.
pub enum Answer<R> {
    /// The reply, or why there is none.
    Now(Result<R, Refusal>),
    /// The reply (or why there is none), once the future resolves ([`Later`]).
    Later(Later<Result<R, Refusal>>),
    /// Work the connection finishes (it holds the event filter, the app registrations and
    /// the outbound queue), answering with the request's reply type.
    Connection(ForConnection),
}

impl<R> Answer<R> {
    /// A refusal with `code`.
    pub fn refused(code: ProtocolErrorCode, message: impl Into<String>) -> Answer<R> {
        Answer::Now(Err(Refusal::new(code, message)))
    }
}

impl<R> From<Result<R, RuntimeError>> for Answer<R> {
    fn from(result: Result<R, RuntimeError>) -> Answer<R> {
        Answer::Now(result.map_err(Refusal::from))
    }
}

/// Work only the connection can finish; it answers with the request's own reply type
/// ([`SubscribeResponse`], [`AppRegisterResponse`], [`AppHumanActionResponse`]).
pub enum ForConnection {
    /// A `subscribe`: the connection updates its filter and replies.
    Subscribe {
        /// Requested event types.
        events: Option<Vec<String>>,
        /// Requested agents.
        agents: Option<Vec<String>>,
    },
    /// An `app_register`: the connection registers the app (it handles its actions) and
    /// replies.
    RegisterApp(Box<AppConfig>),
    /// An `app_human_action`: the connection replies once the app answered it.
    HumanAction {
        /// The app.
        app_id: String,
        /// The action.
        name: String,
        /// Its arguments.
        params: serde_json::Value,
    },
}

/// What a request produced, for the connection: its reply as a message, or the work left.
pub enum Handled {
    /// Send this reply.
    Reply(ServerMessage),
    /// Send the message this resolves to, in order with the connection's other such requests.
    Later(Later<ServerMessage>),
    /// Finish this and reply ([`ForConnection`]).
    Connection(ForConnection),
}

impl Handled {
    /// `answer` (of a request whose id is `request_id`) as the connection needs it.
    fn of<R: IsReply + 'static>(answer: Answer<R>, request_id: Option<RequestId>) -> Handled {
        match answer {
            Answer::Now(result) => Handled::Reply(message(result, request_id)),
            Answer::Later(later) => Handled::Later(Box::new(move |runtime| {
                Box::pin(async move { message(later(runtime).await, request_id) })
            })),
            Answer::Connection(work) => Handled::Connection(work),
        }
    }
}

/// The reply or `error` message of a request's result.
pub fn message<R: IsReply>(
    result: Result<R, Refusal>,
    request_id: Option<RequestId>,
) -> ServerMessage {
    match result {
        Ok(reply) => reply.message(request_id),
        Err(refusal) => refusal.to_message(request_id),
    }
}

impl std::fmt::Debug for ForConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForConnection::Subscribe { events, agents } => f
                .debug_struct("Subscribe")
                .field("events", events)
                .field("agents", agents)
                .finish(),
            ForConnection::RegisterApp(config) => {
                f.debug_tuple("RegisterApp").field(config).finish()
            }
            ForConnection::HumanAction {
                app_id,
                name,
                params,
            } => f
                .debug_struct("HumanAction")
                .field("app_id", app_id)
                .field("name", name)
                .field("params", params)
                .finish(),
        }
    }
}

impl std::fmt::Debug for Handled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handled::Reply(message) => f.debug_tuple("Reply").field(message).finish(),
            Handled::Later(_) => f.write_str("Later(..)"),
            Handled::Connection(work) => f.debug_tuple("Connection").field(work).finish(),
        }
    }
}

/// A reply with the request's id, as sent: `{"type": …, "request_id": …, …its fields}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replied<R> {
    /// The request's `request_id`, echoed.
    pub request_id: Option<RequestId>,
    /// The reply's fields.
    #[serde(flatten)]
    pub reply: R,
}

impl<R: JsonSchema> JsonSchema for Replied<R> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Replied_{}", R::schema_name()).into()
    }

    /// Inline: each reply's schema is its own object, as it is sent.
    fn inline_schema() -> bool {
        true
    }

    /// The reply's own schema (its description, its fields) with `request_id` first among
    /// its required fields.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = R::json_schema(generator);
        let mut request_id = generator.subschema_for::<Option<RequestId>>();
        request_id.insert("description".into(), "Echoed.".into());
        if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
            properties.insert("request_id".into(), request_id.to_value());
        } else {
            schema.insert(
                "properties".into(),
                serde_json::json!({ "request_id": request_id.to_value() }),
            );
        }
        match schema.get_mut("required") {
            Some(serde_json::Value::Array(required)) => required.insert(0, "request_id".into()),
            _ => {
                schema.insert("required".into(), serde_json::json!(["request_id"]));
            }
        }
        schema
    }
}

/// A reply type of [`requests!`]: it becomes a message with the request's id.
pub trait IsReply: Sized {
    /// The message sent for it.
    fn message(self, request_id: Option<RequestId>) -> ServerMessage;
}

/// One request type: what the protocol needs to know of it besides its fields.
pub trait Request: Sized {
    /// What it answers: a struct declared beside it and registered with it in [`requests!`],
    /// sent with the request's `request_id` under its own `type`.
    type Reply: IsReply;

    /// Whether answering it writes to the agent memory. The reply to such a request reports a
    /// write, so a front end sends it only once that write is committed
    /// ([`crate::memory::Memory::committed`]): acknowledged means durable.
    const WRITES: bool;

    /// Where a world served by several processes answers it; by default the process the
    /// client is connected to ([`Route::Here`]). A request registered `by agent_id` in
    /// [`requests!`] routes to the process of that agent instead, without this method.
    fn route(&self) -> Route<'_> {
        Route::Here
    }

    /// The app it changes or acts in, if any: only the connection that registered that app
    /// may send it (a spawn attaching its agent to an app counts). By default none.
    fn app(&self) -> Option<&str> {
        None
    }

    /// How it runs on the connection; by default on a blocking thread ([`Runs::Blocking`]:
    /// it may wait for the memory).
    fn runs(&self, tools: &ToolRegistry) -> Runs {
        let _ = tools;
        Runs::Blocking
    }

    /// Answers it. Never panics on bad input: every failure is a [`Refusal`].
    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply>;
}

/// Registers every request: `"wire_type" => Type -> Reply`, and `by agent_id` for a request
/// about one agent, answered by the process running it. See the module docs for what follows.
macro_rules! requests {
    ($($name:literal => $Type:ident -> $Reply:ident $(by $field:ident)?),* $(,)?) => {
        /// A request from a client: one variant per request type, each the struct of the same
        /// name (whose docs say what it does and what it answers). Besides its fields every
        /// request may carry `request_id` (a string or an integer), echoed in the reply.
        /// Unknown fields are an error (`invalid_request`).
        #[allow(missing_docs)]
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "type")]
        pub enum ClientRequest {
            $(#[serde(rename = $name)] $Type($Type),)*
        }

        /// Every reply a request answers with, under its `type` (the reply struct's name in
        /// snake case: `agent_spawn_response`, `pong`), with the request's `request_id`.
        #[allow(missing_docs)]
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum Reply {
            $($Reply(Replied<$Reply>),)*
        }

        $(impl IsReply for $Reply {
            fn message(self, request_id: Option<RequestId>) -> ServerMessage {
                ServerMessage::Reply(Reply::$Reply(Replied { request_id, reply: self }))
            }
        })*

        /// The `type` of every request, as sent by clients.
        pub const REQUEST_TYPES: &[&str] = &[$($name),*];

        $(impl From<$Type> for ClientRequest {
            fn from(request: $Type) -> ClientRequest {
                ClientRequest::$Type(request)
            }
        })*

        impl ClientRequest {
            /// The request's `type`.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(ClientRequest::$Type(_) => $name,)*
                }
            }

            /// Where a world served by several processes answers it: by its `agent_id` where
            /// it is registered so, else [`Request::route`].
            pub fn route(&self) -> Route<'_> {
                match self {
                    $(ClientRequest::$Type(r) => requests!(@route r $($field)?),)*
                }
            }

            /// Whether answering it writes to the agent memory ([`Request::WRITES`]).
            pub fn writes(&self) -> bool {
                match self {
                    $(ClientRequest::$Type(_) => <$Type as Request>::WRITES,)*
                }
            }

            /// The app it changes or acts in ([`Request::app`]).
            pub fn app(&self) -> Option<&str> {
                match self {
                    $(ClientRequest::$Type(r) => r.app(),)*
                }
            }

            /// How it runs on the connection ([`Request::runs`]).
            pub fn runs(&self, tools: &ToolRegistry) -> Runs {
                match self {
                    $(ClientRequest::$Type(r) => r.runs(tools),)*
                }
            }

            /// Answers it ([`Request::handle`]); the reply is the one registered with it.
            pub fn handle(self, cx: &Cx<'_>, request_id: Option<RequestId>) -> Handled {
                match self {
                    $(ClientRequest::$Type(r) => {
                        let answer: Answer<$Reply> = r.handle(cx);
                        Handled::of(answer, request_id)
                    })*
                }
            }
        }
    };
    (@route $r:ident) => { $r.route() };
    (@route $r:ident $field:ident) => { Route::Agent(&$r.$field) };
}

requests! {
    "ping" => Ping -> Pong,
    "agent_spawn_request" => AgentSpawnRequest -> AgentSpawnResponse,
    "agent_terminate_request" => AgentTerminateRequest -> AgentTerminateResponse by agent_id,
    "get_agent_state" => GetAgentState -> GetAgentStateResponse by agent_id,
    "list_agents" => ListAgents -> ListAgentsResponse,
    "send_message" => SendMessage -> SendMessageResponse by agent_id,
    "assign_task" => AssignTask -> AssignTaskResponse by agent_id,
    "complete_task" => CompleteTask -> CompleteTaskResponse,
    "get_conversation" => GetConversation -> GetConversationResponse,
    "get_tasks" => GetTasks -> GetTasksResponse,
    "get_state_history" => GetStateHistory -> GetStateHistoryResponse,
    "get_agent_trace" => GetAgentTrace -> GetAgentTraceResponse,
    "get_token_usage" => GetTokenUsage -> GetTokenUsageResponse,
    "set_token_budget" => SetTokenBudget -> SetTokenBudgetResponse,
    "set_agent_position" => SetAgentPosition -> SetAgentPositionResponse by agent_id,
    "observe" => Observe -> ObserveResponse by agent_id,
    "finish_move" => FinishMove -> FinishMoveResponse by agent_id,
    "list_stored_agents" => ListStoredAgents -> ListStoredAgentsResponse,
    "remember" => Remember -> RememberResponse,
    "recall" => Recall -> RecallResponse,
    "forget_memory" => ForgetMemory -> ForgetMemoryResponse,
    "list_memories" => ListMemories -> ListMemoriesResponse,
    "list_tools" => ListTools -> ListToolsResponse,
    "call_tool" => CallTool -> CallToolResponse,
    "subscribe" => Subscribe -> SubscribeResponse,
    "app_register" => AppRegister -> AppRegisterResponse,
    "app_unregister" => AppUnregister -> AppUnregisterResponse,
    "app_attach" => AppAttach -> AppAttachResponse,
    "app_detach" => AppDetach -> AppDetachResponse,
    "app_set_context" => AppSetContext -> AppSetContextResponse,
    "app_set_control_mode" => AppSetControlMode -> AppSetControlModeResponse,
    "app_event" => AppEvent -> AppEventResponse,
    "app_action_result" => AppActionResult -> AppActionResultResponse,
    "app_human_action" => AppHumanAction -> AppHumanActionResponse,
    "app_human_says" => AppHumanSays -> AppHumanSaysResponse,
    "get_app_session" => GetAppSession -> GetAppSessionResponse,
    "campaign_load" => CampaignLoad -> CampaignLoadResponse,
    "campaign_tool_calls" => CampaignToolCalls -> CampaignToolCallsResponse,
    "campaign_turn" => CampaignTurn -> CampaignTurnResponse,
    "campaign_state" => CampaignState -> CampaignStateResponse,
    "campaign_unload" => CampaignUnload -> CampaignUnloadResponse,
}

/// An `error` message.
pub fn error(
    code: ProtocolErrorCode,
    message: impl Into<String>,
    request_id: Option<RequestId>,
) -> ServerMessage {
    ServerMessage::Error(ErrorMessage {
        code,
        message: message.into(),
        request_id,
    })
}

/// The `error` message for a runtime error.
pub fn runtime_error(error: &RuntimeError, request_id: Option<RequestId>) -> ServerMessage {
    Refusal::new(error.code(), error.to_string()).to_message(request_id)
}

/// Answers one request against `runtime` and `tools` ([`ClientRequest::handle`]).
pub fn handle(
    request: ClientRequest,
    request_id: Option<RequestId>,
    runtime: &Runtime,
    tools: &ToolRegistry,
) -> Handled {
    request.handle(&Cx { runtime, tools }, request_id)
}
