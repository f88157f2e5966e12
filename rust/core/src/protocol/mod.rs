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
//! [`ProtocolErrorCode`]d error, [`requests::handle`] runs it against a [`Runtime`](crate::runtime::Runtime)
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

crate::error_code_subset! {
    /// Error codes of `error` messages. The wire form is the snake_case name.
    pub enum ProtocolErrorCode: "protocol error code" schema "ErrorCode" {
        NotJson,
        NotAnObject,
        MissingType,
        UnknownType,
        InvalidRequest,
        DuplicateField,
        BinaryNotSupported,
        UnknownAgent,
        AlreadyRunning,
        InvalidConfig,
        UnknownBrain,
        BrainNotAllowed,
        BrainError,
        UnknownTask,
        TaskAlreadyCompleted,
        InvalidMessage,
        UnknownTool,
        InvalidArgs,
        UnknownApp,
        AppExists,
        AppAttached,
        AppNotOwned,
        UnknownAction,
        UnknownCampaign,
        ActionRefused,
        InvalidFilter,
        Unauthorized,
        RateLimited,
        DatabaseError,
        ShutDown,
        AgentUnreachable,
        LimitReached,
        UnknownMove,
        UnknownMemory,
        InternalError,
    }
}

impl ProtocolErrorCode {
    /// The protocol's code for a runtime error's. The protocol keeps the codes its clients
    /// know, so two runtime codes it has no code of are folded — explicitly, here, and only
    /// these: `invalid_options` is `invalid_config`, `startup_failed` is `internal_error`
    /// (neither is the answer to a request: the runtime's options and its start are the
    /// operator's). Every other runtime code keeps its name.
    pub const fn of_runtime(code: crate::runtime::RuntimeErrorCode) -> ProtocolErrorCode {
        use crate::runtime::RuntimeErrorCode as R;
        match code {
            R::UnknownAgent => ProtocolErrorCode::UnknownAgent,
            R::AlreadyRunning => ProtocolErrorCode::AlreadyRunning,
            R::InvalidConfig | R::InvalidOptions => ProtocolErrorCode::InvalidConfig,
            R::UnknownBrain => ProtocolErrorCode::UnknownBrain,
            R::BrainError => ProtocolErrorCode::BrainError,
            R::UnknownTask => ProtocolErrorCode::UnknownTask,
            R::TaskAlreadyCompleted => ProtocolErrorCode::TaskAlreadyCompleted,
            R::InvalidMessage => ProtocolErrorCode::InvalidMessage,
            R::DatabaseError => ProtocolErrorCode::DatabaseError,
            R::ShutDown => ProtocolErrorCode::ShutDown,
            R::StartupFailed => ProtocolErrorCode::InternalError,
            R::UnknownApp => ProtocolErrorCode::UnknownApp,
            R::AppExists => ProtocolErrorCode::AppExists,
            R::AppAttached => ProtocolErrorCode::AppAttached,
            R::UnknownAction => ProtocolErrorCode::UnknownAction,
            R::ActionRefused => ProtocolErrorCode::ActionRefused,
            R::UnknownCampaign => ProtocolErrorCode::UnknownCampaign,
            R::LimitReached => ProtocolErrorCode::LimitReached,
            R::UnknownMove => ProtocolErrorCode::UnknownMove,
            R::UnknownMemory => ProtocolErrorCode::UnknownMemory,
        }
    }

    /// The code for a runtime error ([`ProtocolErrorCode::of_runtime`] of its code).
    pub fn from_runtime(error: &crate::runtime::RuntimeError) -> ProtocolErrorCode {
        ProtocolErrorCode::of_runtime(error.code())
    }
}

/// A request that could not be parsed: the `error` reply to send (the connection stays usable).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestError {
    /// The code.
    pub code: ProtocolErrorCode,
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
            code: ProtocolErrorCode::NotJson,
            message: format!("the message is not valid JSON: {e}"),
            request_id: None,
        },
        json::JsonError::DuplicateKey(key) => RequestError {
            code: ProtocolErrorCode::DuplicateField,
            message: format!("duplicate field \"{key}\": a key may appear once per object"),
            request_id: None,
        },
    })?;
    let Value::Object(mut object) = value else {
        return Err(RequestError {
            code: ProtocolErrorCode::NotAnObject,
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
                    code: ProtocolErrorCode::InvalidRequest,
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
                    code: ProtocolErrorCode::InvalidRequest,
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
                ProtocolErrorCode::MissingType,
                format!("\"type\" must be a string, not {}", json_kind(other)),
            ));
        }
        None => {
            return Err(fail(
                ProtocolErrorCode::MissingType,
                "the message has no \"type\"".into(),
            ));
        }
    };
    if !REQUEST_TYPES.contains(&kind.as_str()) {
        return Err(fail(
            ProtocolErrorCode::UnknownType,
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
            ProtocolErrorCode::InvalidRequest,
            format!("invalid {kind}: {problem}"),
        )
    })?;
    let request = ClientRequest::deserialize(&value).map_err(|e| {
        fail(
            ProtocolErrorCode::InvalidRequest,
            format!("invalid {kind}: {e}"),
        )
    })?;
    Ok((request, request_id))
}

/// Serializes a server message as one text frame.
pub fn to_text(message: &ServerMessage) -> String {
    serde_json::to_string(message).unwrap_or_else(|e| {
        format!(
            r#"{{"type":"error","code":"{}","message":"cannot serialize a reply: {e}","request_id":null}}"#,
            ProtocolErrorCode::InternalError
        )
    })
}
