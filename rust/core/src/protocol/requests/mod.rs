//! Every request of the protocol, each written once: its fields, where a world served by
//! several processes answers it, whether its reply waits for a memory write, the app it acts
//! in, how it runs and what it does.
//!
//! # Design
//!
//! A request is a struct (`SendMessage`, `CampaignTurn`, …) with an `impl Request` beside it,
//! in the module of its area (`agents`, `history`, `tools`, `apps`, `campaigns`). The trait
//! has no defaults: a new request states its route, its durability, its app and how it runs,
//! so none of them can be forgotten (a request about an agent that silently ran on the wrong
//! process of a cluster was how a `_ => None` went wrong once).
//!
//! One line of [`requests!`] registers it under its wire `type`. From that line follow the
//! [`ClientRequest`] enum the parser reads (and its JSON Schema, `docs/protocol/`), the list
//! of request types in `welcome` and in `unknown_type` errors ([`REQUEST_TYPES`]), and the
//! dispatch ([`ClientRequest::handle`]): there is no other list of requests to edit.

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
use crate::runtime::{Runtime, RuntimeError};
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
    /// The request's id, echoed in the reply.
    pub request_id: Option<RequestId>,
    /// The runtime it runs against.
    pub runtime: &'a Runtime,
    /// The tool registry.
    pub tools: &'a ToolRegistry,
}

impl Cx<'_> {
    /// The request's id, for a reply.
    pub fn id(&self) -> Option<RequestId> {
        self.request_id.clone()
    }

    /// The reply for a runtime result: the response, or the `error` for the runtime error.
    pub fn reply(&self, result: Result<ServerMessage, RuntimeError>) -> Handled {
        Handled::Reply(match result {
            Ok(message) => message,
            Err(e) => runtime_error(&e, self.id()),
        })
    }

    /// An `error` reply.
    pub fn error(&self, code: ProtocolErrorCode, message: impl Into<String>) -> Handled {
        Handled::Reply(error(code, message, self.id()))
    }
}

/// The answer of a request that is sent later, off the connection's read loop, in the order of
/// the connection's other such requests (a campaign's turn waits for its model).
pub type Later = Box<
    dyn FnOnce(
            Arc<Runtime>,
            Option<RequestId>,
        ) -> Pin<Box<dyn Future<Output = ServerMessage> + Send + 'static>>
        + Send,
>;

/// What a request produced.
pub enum Handled {
    /// Send this reply.
    Reply(ServerMessage),
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
    /// A request answered later, one at a time per connection (the campaign requests).
    Later(Later),
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

impl std::fmt::Debug for Handled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handled::Reply(message) => f.debug_tuple("Reply").field(message).finish(),
            Handled::Subscribe { events, agents } => f
                .debug_struct("Subscribe")
                .field("events", events)
                .field("agents", agents)
                .finish(),
            Handled::RegisterApp(config) => f.debug_tuple("RegisterApp").field(config).finish(),
            Handled::Later(_) => f.write_str("Later(..)"),
            Handled::HumanAction {
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

/// One request type: what the protocol needs to know of it besides its fields.
pub trait Request: Sized {
    /// Whether answering it writes to the agent memory. The reply to such a request reports a
    /// write, so a front end sends it only once that write is committed
    /// ([`crate::memory::Memory::committed`]): acknowledged means durable.
    const WRITES: bool;

    /// Where a world served by several processes answers it; by default the process the
    /// client is connected to ([`Route::Here`]).
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

    /// Answers it. Never panics on bad input: every failure is an `error` reply.
    fn handle(self, cx: &Cx<'_>) -> Handled;
}

/// Registers every request: `"wire_type" => Type`. See the module docs for what follows.
macro_rules! requests {
    ($($name:literal => $Type:ident),* $(,)?) => {
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

            /// Where a world served by several processes answers it ([`Request::route`]).
            pub fn route(&self) -> Route<'_> {
                match self {
                    $(ClientRequest::$Type(r) => r.route(),)*
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

            /// Answers it ([`Request::handle`]).
            pub fn handle(self, cx: &Cx<'_>) -> Handled {
                match self {
                    $(ClientRequest::$Type(r) => r.handle(cx),)*
                }
            }
        }
    };
}

requests! {
    "ping" => Ping,
    "agent_spawn_request" => AgentSpawnRequest,
    "agent_terminate_request" => AgentTerminateRequest,
    "get_agent_state" => GetAgentState,
    "list_agents" => ListAgents,
    "send_message" => SendMessage,
    "assign_task" => AssignTask,
    "complete_task" => CompleteTask,
    "get_conversation" => GetConversation,
    "get_tasks" => GetTasks,
    "get_state_history" => GetStateHistory,
    "get_agent_trace" => GetAgentTrace,
    "get_token_usage" => GetTokenUsage,
    "set_token_budget" => SetTokenBudget,
    "set_agent_position" => SetAgentPosition,
    "observe" => Observe,
    "finish_move" => FinishMove,
    "list_stored_agents" => ListStoredAgents,
    "remember" => Remember,
    "recall" => Recall,
    "forget_memory" => ForgetMemory,
    "list_memories" => ListMemories,
    "list_tools" => ListTools,
    "call_tool" => CallTool,
    "subscribe" => Subscribe,
    "app_register" => AppRegister,
    "app_unregister" => AppUnregister,
    "app_attach" => AppAttach,
    "app_detach" => AppDetach,
    "app_set_context" => AppSetContext,
    "app_set_control_mode" => AppSetControlMode,
    "app_event" => AppEvent,
    "app_action_result" => AppActionResult,
    "app_human_action" => AppHumanAction,
    "app_human_says" => AppHumanSays,
    "get_app_session" => GetAppSession,
    "campaign_load" => CampaignLoad,
    "campaign_tool_calls" => CampaignToolCalls,
    "campaign_turn" => CampaignTurn,
    "campaign_state" => CampaignState,
    "campaign_unload" => CampaignUnload,
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
    self::error(
        ProtocolErrorCode::from_runtime(error),
        error.to_string(),
        request_id,
    )
}

/// Answers one request against `runtime` and `tools` ([`ClientRequest::handle`]).
pub fn handle(
    request: ClientRequest,
    request_id: Option<RequestId>,
    runtime: &Runtime,
    tools: &ToolRegistry,
) -> Handled {
    request.handle(&Cx {
        request_id,
        runtime,
        tools,
    })
}
