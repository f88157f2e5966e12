//! The WebSocket protocol: JSON text messages, each an object with a `type`.
//!
//! Clients send [`ClientRequest`]s, optionally with a `request_id` (a string or an integer) that
//! the reply echoes. Every request gets exactly one reply: its response (named after the request:
//! `agent_spawn_request` → `agent_spawn_response`, `get_agent_state` → `get_agent_state_response`,
//! `ping` → `pong`) or an `error` `{code, message, request_id}`. The server also pushes events
//! (the Godot node's signals, as messages) to clients subscribed to them. The first message on a
//! connection is `welcome`, naming the protocol version.
//!
//! One implementation serves both the `agents-server serve` binary and an `AgentRuntime` node
//! with its server enabled: [`parse_request`] turns a text frame into a request or an
//! [`ErrorCode`]d error, [`requests::handle`] runs it against a [`Runtime`](crate::runtime::Runtime)
//! and the tool registry, and [`events::event_message`] turns bus messages into events.

pub mod events;
pub mod json;
mod messages;
pub mod pages;
pub mod requests;
pub mod schema;
#[cfg(test)]
mod tests;

pub use crate::bus::EVENT_TYPES;
pub use messages::*;
pub use requests::{ClientRequest, REQUEST_TYPES};

use crate::json_kind::json_kind;
use serde::Deserialize;
use serde_json::Value;

/// The protocol version in `welcome` (bumped on incompatible changes).
pub const PROTOCOL_VERSION: u32 = 1;

/// A request id as the client sent it: a string or an integer, echoed unchanged.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(untagged)]
pub enum RequestId {
    /// `"request_id": 7`
    Int(i64),
    /// `"request_id": "abc"` (at most [`MAX_REQUEST_ID_CHARS`](crate::limits::MAX_REQUEST_ID_CHARS)
    /// characters: every reply echoes it)
    Str(#[schemars(length(max = crate::limits::MAX_REQUEST_ID_CHARS))] String),
}

/// Error codes of `error` messages. The wire form is the snake_case name.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The frame is not valid JSON.
    NotJson,
    /// The JSON is not an object.
    NotAnObject,
    /// The object has no string `type`.
    MissingType,
    /// `type` names no request.
    UnknownType,
    /// A field is missing, mistyped, unknown or over its limit (the message names it and the
    /// limit); an array where an object belongs; also a bad `request_id`.
    InvalidRequest,
    /// An object has the same key twice (the message names it).
    DuplicateField,
    /// A binary frame (the protocol is JSON text).
    BinaryNotSupported,
    /// No running (or stored, for history reads) agent with this id.
    UnknownAgent,
    /// The agent is already running.
    AlreadyRunning,
    /// The agent config is invalid (numbers, position outside the world…).
    InvalidConfig,
    /// No brain with that name.
    UnknownBrain,
    /// The server does not let clients choose this brain (a brain object, a field of one, a
    /// `base_url` origin, a preset): the message names what and the switch that allows it.
    BrainNotAllowed,
    /// The brain failed.
    BrainError,
    /// No task with that id.
    UnknownTask,
    /// The task is already completed.
    TaskAlreadyCompleted,
    /// The message or task name is empty or too long.
    InvalidMessage,
    /// No tool with that name.
    UnknownTool,
    /// The tool's arguments fail its JSON Schema (the message names the field).
    InvalidArgs,
    /// No app with that id.
    UnknownApp,
    /// An app with that id is registered already.
    AppExists,
    /// The app has another agent attached (or none, where one is needed), or the agent is
    /// attached to another app.
    AppAttached,
    /// The request changes an app this connection did not register (its front end's own
    /// requests; other connections may read it with `get_app_session`).
    AppNotOwned,
    /// No action with that id is waiting for the app's answer.
    UnknownAction,
    /// No campaign with that id is loaded (`campaign_load` first).
    UnknownCampaign,
    /// A guarded tool refused its caller before looking at the arguments (an app's action while
    /// the other side is in control, a `humanOnly` / `agentOnly` action; the message says which).
    ActionRefused,
    /// A subscription filter names an unknown event type.
    InvalidFilter,
    /// The token is missing or wrong.
    Unauthorized,
    /// Too many requests on this connection; slow down.
    RateLimited,
    /// The database failed.
    DatabaseError,
    /// The runtime is shutting down.
    ShutDown,
    /// The agent runs on another process of the world (`--cluster`), which did not answer in
    /// time (it may have stopped).
    AgentUnreachable,
    /// One of the server's caps is reached (running agents, loaded campaigns): the message names
    /// it and what frees room.
    LimitReached,
    /// `finish_move` names a move the agent never asked for, one a newer move replaced, or
    /// one that finished already.
    UnknownMove,
    /// `forget_memory` names a memory the agent does not have.
    UnknownMemory,
    /// A bug on the server side (reported, never a crash).
    InternalError,
}

impl ErrorCode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotJson => "not_json",
            ErrorCode::NotAnObject => "not_an_object",
            ErrorCode::MissingType => "missing_type",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::DuplicateField => "duplicate_field",
            ErrorCode::BinaryNotSupported => "binary_not_supported",
            ErrorCode::UnknownAgent => "unknown_agent",
            ErrorCode::AlreadyRunning => "already_running",
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::UnknownBrain => "unknown_brain",
            ErrorCode::BrainNotAllowed => "brain_not_allowed",
            ErrorCode::BrainError => "brain_error",
            ErrorCode::UnknownTask => "unknown_task",
            ErrorCode::TaskAlreadyCompleted => "task_already_completed",
            ErrorCode::InvalidMessage => "invalid_message",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::InvalidArgs => "invalid_args",
            ErrorCode::ActionRefused => "action_refused",
            ErrorCode::UnknownApp => "unknown_app",
            ErrorCode::AppExists => "app_exists",
            ErrorCode::AppAttached => "app_attached",
            ErrorCode::AppNotOwned => "app_not_owned",
            ErrorCode::UnknownAction => "unknown_action",
            ErrorCode::UnknownCampaign => "unknown_campaign",
            ErrorCode::InvalidFilter => "invalid_filter",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::DatabaseError => "database_error",
            ErrorCode::ShutDown => "shut_down",
            ErrorCode::AgentUnreachable => "agent_unreachable",
            ErrorCode::LimitReached => "limit_reached",
            ErrorCode::UnknownMove => "unknown_move",
            ErrorCode::UnknownMemory => "unknown_memory",
            ErrorCode::InternalError => "internal_error",
        }
    }

    /// The code for a runtime error.
    pub fn from_runtime(error: &crate::runtime::RuntimeError) -> ErrorCode {
        use crate::runtime::RuntimeErrorCode as R;
        match error.code() {
            R::UnknownAgent => ErrorCode::UnknownAgent,
            R::AlreadyRunning => ErrorCode::AlreadyRunning,
            R::InvalidConfig | R::InvalidOptions => ErrorCode::InvalidConfig,
            R::UnknownBrain => ErrorCode::UnknownBrain,
            R::BrainError => ErrorCode::BrainError,
            R::UnknownTask => ErrorCode::UnknownTask,
            R::TaskAlreadyCompleted => ErrorCode::TaskAlreadyCompleted,
            R::InvalidMessage => ErrorCode::InvalidMessage,
            R::DatabaseError => ErrorCode::DatabaseError,
            R::ShutDown => ErrorCode::ShutDown,
            R::StartupFailed => ErrorCode::InternalError,
            R::UnknownApp => ErrorCode::UnknownApp,
            R::AppExists => ErrorCode::AppExists,
            R::AppAttached => ErrorCode::AppAttached,
            R::UnknownAction => ErrorCode::UnknownAction,
            R::ActionRefused => ErrorCode::ActionRefused,
            R::UnknownCampaign => ErrorCode::UnknownCampaign,
            R::LimitReached => ErrorCode::LimitReached,
            R::UnknownMove => ErrorCode::UnknownMove,
            R::UnknownMemory => ErrorCode::UnknownMemory,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request that could not be parsed: the `error` reply to send (the connection stays usable).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestError {
    /// The code.
    pub code: ErrorCode,
    /// What is wrong, naming the field where there is one.
    pub message: String,
    /// The request's id, when it could be read.
    pub request_id: Option<RequestId>,
}

impl RequestError {
    /// The `error` message for this failure.
    pub fn to_message(&self) -> ServerMessage {
        ServerMessage::Error(ErrorMessage {
            code: self.code,
            message: self.message.clone(),
            request_id: self.request_id.clone(),
        })
    }
}

/// Parses one text frame into a request and its id. Every failure is a [`RequestError`] with the
/// precise code: `not_json`, `duplicate_field` (a key twice in one object, at any depth),
/// `not_an_object`, `missing_type`, `unknown_type`, `invalid_request` (a missing, unknown or
/// mistyped field — an array is never an object —, or a value over its [`crate::limits`] limit).
pub fn parse_request(text: &str) -> Result<(ClientRequest, Option<RequestId>), RequestError> {
    let value: Value = json::parse(text).map_err(|e| match e {
        json::JsonError::Syntax(e) => RequestError {
            code: ErrorCode::NotJson,
            message: format!("the message is not valid JSON: {e}"),
            request_id: None,
        },
        json::JsonError::DuplicateKey(key) => RequestError {
            code: ErrorCode::DuplicateField,
            message: format!("duplicate field \"{key}\": a key may appear once per object"),
            request_id: None,
        },
    })?;
    let Value::Object(mut object) = value else {
        return Err(RequestError {
            code: ErrorCode::NotAnObject,
            message: format!(
                "a message must be a JSON object with a \"type\", not {}",
                json_kind(&value)
            ),
            request_id: None,
        });
    };
    let request_id = match object.remove("request_id") {
        None | Some(Value::Null) => None,
        Some(v) => match serde_json::from_value::<RequestId>(v.clone()) {
            Ok(RequestId::Str(id)) if id.chars().count() > crate::limits::MAX_REQUEST_ID_CHARS => {
                return Err(RequestError {
                    code: ErrorCode::InvalidRequest,
                    message: format!(
                        "request_id is {} characters long; the limit is {}",
                        id.chars().count(),
                        crate::limits::MAX_REQUEST_ID_CHARS
                    ),
                    request_id: None,
                });
            }
            Ok(id) => Some(id),
            Err(_) => {
                return Err(RequestError {
                    code: ErrorCode::InvalidRequest,
                    message: format!(
                        "request_id must be a string or an integer, not {}",
                        json_kind(&v)
                    ),
                    request_id: None,
                });
            }
        },
    };
    let fail = |code, message: String| RequestError {
        code,
        message,
        request_id: request_id.clone(),
    };
    let kind = match object.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => {
            return Err(fail(
                ErrorCode::MissingType,
                format!("\"type\" must be a string, not {}", json_kind(other)),
            ));
        }
        None => {
            return Err(fail(
                ErrorCode::MissingType,
                "the message has no \"type\"".into(),
            ));
        }
    };
    if !REQUEST_TYPES.contains(&kind.as_str()) {
        return Err(fail(
            ErrorCode::UnknownType,
            format!(
                "unknown message type '{kind}' (requests: {})",
                REQUEST_TYPES.join(", ")
            ),
        ));
    }
    let value = Value::Object(object);
    // Types and limits first (serde would take `[7, 8]` for `{x, y}`), then serde (which names
    // missing and unknown fields with the expected ones).
    schema::check_request(&kind, &value).map_err(|problem| {
        fail(
            ErrorCode::InvalidRequest,
            format!("invalid {kind}: {problem}"),
        )
    })?;
    let request = ClientRequest::deserialize(&value)
        .map_err(|e| fail(ErrorCode::InvalidRequest, format!("invalid {kind}: {e}")))?;
    Ok((request, request_id))
}

/// Serializes a server message as one text frame.
pub fn to_text(message: &ServerMessage) -> String {
    serde_json::to_string(message).unwrap_or_else(|e| {
        format!(r#"{{"type":"error","code":"internal_error","message":"cannot serialize a reply: {e}","request_id":null}}"#)
    })
}
