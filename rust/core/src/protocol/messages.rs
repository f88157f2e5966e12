//! Every protocol message as a Rust type (the JSON Schemas under `docs/protocol/` are generated
//! from these).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ProtocolErrorCode, RequestId};
use crate::agent_state::AgentState;
use crate::apps::{Actor, ChatRole};
use crate::bus::BusMessage;
use crate::geometry::Position;

/// The messages the server pushes to the connection that registered an app (whatever its
/// `subscribe` filter says): the actions to handle, the app's chat, its agent leaving.
pub const APP_MESSAGE_TYPES: &[&str] = &["app_action", "app_chat", "app_detached"];

/// A running agent as the protocol shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentInfo {
    /// Id (`agent_001`).
    pub agent_id: String,
    /// Name.
    pub name: String,
    /// Role.
    pub role: String,
    /// Brain.
    pub brain: String,
    /// `idle`, `listening`, `thinking` or `speaking`.
    pub state: AgentState,
    /// Position.
    pub position: Position,
    /// The task it works on, if any.
    pub current_task: Option<String>,
    /// That task's id.
    pub current_task_id: Option<i64>,
}

/// Every message the server sends: the `welcome`, replies (with the request's `request_id`),
/// events, and `error`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// First message on every connection.
    Welcome {
        /// [`super::PROTOCOL_VERSION`].
        protocol_version: u32,
        /// `godot-agents <version>`.
        server: String,
        /// Every request type.
        requests: Vec<String>,
        /// Every event type.
        events: Vec<String>,
    },
    /// An action for the app to handle (to the connection that registered it); answer with
    /// `app_action_result`.
    AppAction {
        /// The app.
        app_id: String,
        /// Answer with this id.
        action_id: u64,
        /// The action.
        name: String,
        /// Its arguments (valid against its schema).
        params: Value,
        /// `agent` or `human`.
        by: Actor,
    },
    /// A line of the app's chat (to the connection that registered it).
    AppChat {
        /// The app.
        app_id: String,
        /// `agent`, `human` or `system`.
        role: ChatRole,
        /// The text.
        text: String,
        /// When (UTC, ISO 8601).
        at: String,
    },
    /// The app's agent left (to the connection that registered it).
    AppDetached {
        /// The app.
        app_id: String,
        /// The agent.
        agent_id: String,
        /// `detached`, `terminated`, `unregistered`.
        reason: String,
    },
    /// This connection fell behind and missed events.
    EventsDropped {
        /// How many.
        missed: u64,
    },
    /// A request failed (the connection stays usable).
    Error(ErrorMessage),
    /// A request's reply (`agent_spawn_response`, `pong`, …), with its `request_id`; see
    /// [`super::requests::Reply`].
    #[serde(untagged)]
    Reply(super::requests::Reply),
    /// An event: a bus message as it is (`agent_speech`, `agent_state_update`, …; see
    /// [`crate::bus::BusMessage`]), to the connections subscribed to its type and agent.
    #[serde(untagged)]
    Event(BusMessage),
}

/// `{"type":"error","code":…,"message":…,"request_id":…}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorMessage {
    /// Machine-readable code.
    pub code: ProtocolErrorCode,
    /// Explanation (names the field where there is one).
    pub message: String,
    /// The failed request's id, when it could be read.
    pub request_id: Option<RequestId>,
}
