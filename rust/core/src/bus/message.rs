//! The typed messages that travel on the bus, and their kinds.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use crate::agent_error::AgentErrorCode;
use crate::agent_state::AgentState;
use crate::geometry::Position;

/// Declares every event once: its variant of [`BusMessage`] (with its fields), its
/// [`MessageKind`], and its wire name (the serde tag, the protocol event's `type`, a
/// `subscribe` filter's entry, [`MessageKind::as_str`]). The protocol pushes a bus message as
/// it is (`ServerMessage::Event`), and its schema, the `welcome` list and the `subscribe`
/// check follow from here ([`EVENT_TYPES`]).
macro_rules! events {
    ($(
        $(#[$doc:meta])*
        $Variant:ident = $wire:literal {
            $($(#[$field_meta:meta])* $field:ident : $Type:ty),* $(,)?
        }
    ),* $(,)?) => {
        /// One bus message: an event. Serialized with a `type` tag, its wire name
        /// ([`MessageKind::as_str`]: `{"type":"agent_speech",…}`), exactly as the protocol
        /// pushes it.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(tag = "type")]
        pub enum BusMessage {
            $($(#[$doc])* #[serde(rename = $wire)] $Variant { $($(#[$field_meta])* $field: $Type),* },)*
        }

        /// The kind of a [`BusMessage`], for filtering. Wire names are the serde tags.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[repr(u8)]
        pub enum MessageKind {
            $(#[doc = concat!("[`BusMessage::", stringify!($Variant), "`] (`", $wire, "`).")]
            #[serde(rename = $wire)]
            $Variant,)*
        }

        /// The wire name of every event (what `subscribe.events` may name), in declaration
        /// order.
        pub const EVENT_TYPES: &[&str] = &[$($wire),*];

        impl MessageKind {
            /// Every kind, in declaration order.
            pub const ALL: [MessageKind; EVENT_TYPES.len()] = [$(MessageKind::$Variant),*];

            /// The wire name (`agent_speech`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(MessageKind::$Variant => $wire,)*
                }
            }
        }

        impl BusMessage {
            /// This message's kind.
            pub fn kind(&self) -> MessageKind {
                match self {
                    $(BusMessage::$Variant { .. } => MessageKind::$Variant,)*
                }
            }
        }
    };
}

events! {
    /// A new or resumed agent is running.
    AgentSpawned = "agent_spawned" {
        /// The agent.
        agent_id: String,
        /// Display name.
        name: String,
        /// Role.
        role: String,
        /// Where it is.
        position: Position,
        /// Its state (always `idle` at spawn).
        state: AgentState,
        /// True when an agent stored in the database was resumed.
        resumed: bool,
    },
    /// An agent changed state (every transition; also written to `agent_state_history`).
    AgentStateChanged = "agent_state_update" {
        /// The agent.
        agent_id: String,
        /// State before.
        old_state: AgentState,
        /// State after (`state` on the wire).
        #[serde(rename = "state")]
        new_state: AgentState,
        /// Position at the time.
        position: Position,
        /// Name of the task it is working on, if any.
        current_task: Option<String>,
    },
    /// An agent moved.
    AgentMoved = "agent_moved" {
        /// The agent.
        agent_id: String,
        /// Where it was.
        from: Position,
        /// Where it is now.
        to: Position,
    },
    /// An agent whose moves the game carries out (`movement: "requested"`) decided to move:
    /// the game should take it from `from` to `to` (replacing any move under way) and finish the
    /// move with `finish_move` when it gets there or cannot.
    AgentMoveRequested = "agent_move_requested" {
        /// The agent.
        agent_id: String,
        /// The move's number, counted per agent from 1 (`finish_move` names it).
        move_id: u64,
        /// Where the agent was when it decided.
        from: Position,
        /// Where it wants to go.
        to: Position,
    },
    /// A move the game carried out ended: `arrived`, or `blocked` with the game's reason. The
    /// agent's next decision is told.
    AgentMoveFinished = "agent_move_finished" {
        /// The agent.
        agent_id: String,
        /// The move's number.
        move_id: u64,
        /// Its target.
        to: Position,
        /// `arrived` or `blocked`.
        outcome: crate::moves::MoveEnd,
        /// Why it was blocked (`null` when it arrived).
        reason: Option<String>,
    },
    /// Someone said something: an agent, or the player (`agent_id` is then the player id).
    AgentSpoke = "agent_speech" {
        /// The speaker.
        agent_id: String,
        /// What was said.
        content: String,
        /// Who it is addressed to (agents or the player); empty when said to no one in particular.
        recipients: Vec<String>,
        /// The brain's `dialog_type` (`reply`, `chat`, `task_update`, `player`, …).
        dialog_type: String,
        /// For a line sent to an agent from outside (the game, the player, a client): its row in
        /// the recipient's stored inbox, removed once a decision answered it. `None` for speech
        /// between agents.
        /// Never serialized: only the process that stored the line answers it.
        #[serde(skip)]
        inbox_id: Option<i64>,
    },
    /// An agent stopped: terminated, or the runtime shut down.
    AgentRemoved = "agent_removed" {
        /// The agent.
        agent_id: String,
        /// `terminated` (by request; it will not resume with `resume_all`) or `shutdown`.
        reason: String,
    },
    /// A task was assigned to an agent (by the game, the player or another agent).
    TaskAssigned = "task_assigned" {
        /// The agent that owns the task.
        agent_id: String,
        /// The task's id (`agent_tasks.id`).
        task_id: i64,
        /// The task.
        task_name: String,
        /// Who assigned it: the player id, `runtime`, or an agent id (collaboration).
        assigned_by: String,
    },
    /// A task was completed.
    TaskCompleted = "task_completed" {
        /// The agent that owned the task.
        agent_id: String,
        /// The task's id.
        task_id: i64,
        /// The task.
        task_name: String,
        /// When (UTC ISO-8601).
        completed_at: String,
    },
    /// An agent asked another one to help with a task (the helper was assigned the task).
    CollaborationRequested = "collaboration_requested" {
        /// The agent asking.
        agent_id: String,
        /// The agent asked.
        helper_id: String,
        /// The task the helper was assigned.
        task_id: i64,
        /// Its name.
        task_name: String,
        /// What the asking agent said.
        message: String,
    },
    /// Something went wrong: a refused transition or action, a brain failure, a lagged reader.
    AgentError = "agent_error" {
        /// The agent concerned, if any.
        agent_id: Option<String>,
        /// Machine-readable code.
        code: AgentErrorCode,
        /// Human-readable explanation.
        message: String,
    },
    /// A piece of text a model brain is generating, as it streams in (before the decision's
    /// `AgentSpoke`). Ephemeral: for a UI that shows the line as it is written; not stored.
    AgentSpeechDelta = "agent_speech_delta" {
        /// The agent whose brain is answering.
        agent_id: String,
        /// The new text.
        delta: String,
        /// Increasing per agent (0, 1, …), to order pieces.
        seq: u64,
    },
    /// A model brain started a tool call (its arguments are still streaming): a UI can show
    /// "thinking…". Ephemeral; the call may still be refused and repaired.
    AgentToolCall = "agent_tool_call" {
        /// The agent whose brain is answering.
        agent_id: String,
        /// The tool.
        tool: String,
        /// The call's id.
        call_id: String,
    },
    /// The model file of an agent's `local` brain is downloading (its `model_url`), before
    /// the agent's first decision: bytes received of how many. At most one per MiB and one at
    /// the end; agents asking for a file that is downloading already report it too.
    /// Ephemeral: for a loading screen; not stored.
    ModelDownloadProgress = "model_download_progress" {
        /// The agent waiting for the model.
        agent_id: String,
        /// Where it comes from (without the URL's query).
        url: String,
        /// Bytes received so far.
        received_bytes: u64,
        /// The file's size; absent when the server does not say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total_bytes: Option<u64>,
    },
    /// An agent's decision answered lines sent to it from outside (`send_message`, an
    /// `AgentNode`'s `ask`): what it said and did, or why it could not decide. One per
    /// decision, after its speech and its actions; `in_reply_to` names the lines, so an answer
    /// is matched to the line that caused it even when several are in flight.
    AgentReplied = "agent_replied" {
        /// The agent.
        agent_id: String,
        /// The lines answered: the `message_id`s their `send_message` returned, oldest first.
        in_reply_to: Vec<i64>,
        /// What it said, its lines joined by a newline (empty when it said nothing).
        text: String,
        /// The calls of its decision (world actions, tools) and what came of each.
        actions: Vec<crate::contract::DecidedCall>,
        /// Why it could not decide (then nothing of the decision ran); `null` when it did.
        error: Option<ReplyFailure>,
    },
    /// An agent formed a memory (of a line it heard or said, something it did or noticed, a
    /// task), or the game planted one (`remember`).
    AgentRemembered = "agent_remembered" {
        /// The agent.
        agent_id: String,
        /// The memory's id.
        memory_id: i64,
        /// What it is of (`heard`, `said`, `did`, `observed`, `fact`, `task`, …).
        kind: crate::memory::MemoryKind,
        /// What the agent remembers.
        text: String,
        /// How much it matters, 1 to 10.
        importance: u8,
        /// When it happened, in seconds of game time.
        game_time: f64,
    },
    /// An agent reflected: it drew insights from what it went through and summed up what it
    /// now thinks of the people in it (each also published as `agent_remembered`).
    AgentReflected = "agent_reflected" {
        /// The agent.
        agent_id: String,
        /// What it drew: its insights, then what it thinks of people (`relationship`), each
        /// with the memories it cites.
        memories: Vec<crate::memory::DrawnMemory>,
        /// `model` (its brain drew them) or `rules` (a brain without a model, or a model
        /// answer that could not be used: drawn by the runtime's rules).
        drawn_by: String,
    },
    /// GM tool calls were applied to a campaign loaded in the runtime (a `campaign_tool_calls`
    /// batch, or a GM turn).
    CampaignChanged = "campaign_changed" {
        /// The campaign.
        campaign_id: String,
        /// The turn (`turn_0003`), or `None` for a batch of calls.
        turn_id: Option<String>,
        /// The applied calls, as the log keeps them.
        applied_actions: Vec<crate::campaign::AppliedAction>,
        /// What they did.
        effects: Vec<crate::campaign::Effect>,
    },
}

/// Why a decision that answered lines failed ([`BusMessage::AgentReplied`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplyFailure {
    /// What went wrong (`brain_error`, `budget_exhausted`, …; the same code as the
    /// decision's `agent_error`).
    pub code: AgentErrorCode,
    /// Explanation.
    pub message: String,
}

impl MessageKind {
    /// Index `0..EVENT_TYPES.len()`, for bit sets and per-kind tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A message type name that is not one of [`MessageKind::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown message type '{0}'")]
pub struct ParseKindError(pub String);

impl FromStr for MessageKind {
    type Err = ParseKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MessageKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| ParseKindError(s.to_string()))
    }
}

impl BusMessage {
    /// Who the message is from, for sender filters: the speaking / acting agent, the assigner of
    /// a task, or `runtime` for an error without an agent.
    pub fn sender(&self) -> &str {
        match self {
            BusMessage::AgentSpawned { agent_id, .. }
            | BusMessage::AgentRemoved { agent_id, .. }
            | BusMessage::AgentStateChanged { agent_id, .. }
            | BusMessage::AgentMoved { agent_id, .. }
            | BusMessage::AgentMoveRequested { agent_id, .. }
            | BusMessage::AgentMoveFinished { agent_id, .. }
            | BusMessage::AgentSpoke { agent_id, .. }
            | BusMessage::TaskCompleted { agent_id, .. }
            | BusMessage::CollaborationRequested { agent_id, .. }
            | BusMessage::AgentSpeechDelta { agent_id, .. }
            | BusMessage::AgentToolCall { agent_id, .. }
            | BusMessage::ModelDownloadProgress { agent_id, .. }
            | BusMessage::AgentReplied { agent_id, .. }
            | BusMessage::AgentRemembered { agent_id, .. }
            | BusMessage::AgentReflected { agent_id, .. } => agent_id,
            BusMessage::TaskAssigned { assigned_by, .. } => assigned_by,
            BusMessage::AgentError { agent_id, .. } => agent_id.as_deref().unwrap_or("runtime"),
            BusMessage::CampaignChanged { .. } => "runtime",
        }
    }

    /// Who the message is addressed to, for recipient filters. Empty for broadcasts (state
    /// changes, moves, spawns, removals, errors, speech to no one in particular).
    pub fn recipients(&self) -> &[String] {
        match self {
            BusMessage::AgentSpoke { recipients, .. } => recipients,
            BusMessage::TaskAssigned { agent_id, .. } => std::slice::from_ref(agent_id),
            BusMessage::CollaborationRequested { helper_id, .. } => std::slice::from_ref(helper_id),
            _ => &[],
        }
    }

    /// The agent the message is about (`agent_id`), when there is one.
    pub fn agent_id(&self) -> Option<&str> {
        match self {
            BusMessage::AgentError { agent_id, .. } => agent_id.as_deref(),
            BusMessage::CampaignChanged { .. } => None,
            BusMessage::AgentSpawned { agent_id, .. }
            | BusMessage::AgentRemoved { agent_id, .. }
            | BusMessage::AgentStateChanged { agent_id, .. }
            | BusMessage::AgentMoved { agent_id, .. }
            | BusMessage::AgentMoveRequested { agent_id, .. }
            | BusMessage::AgentMoveFinished { agent_id, .. }
            | BusMessage::AgentSpoke { agent_id, .. }
            | BusMessage::TaskAssigned { agent_id, .. }
            | BusMessage::TaskCompleted { agent_id, .. }
            | BusMessage::CollaborationRequested { agent_id, .. }
            | BusMessage::AgentSpeechDelta { agent_id, .. }
            | BusMessage::AgentToolCall { agent_id, .. }
            | BusMessage::ModelDownloadProgress { agent_id, .. }
            | BusMessage::AgentReplied { agent_id, .. }
            | BusMessage::AgentRemembered { agent_id, .. }
            | BusMessage::AgentReflected { agent_id, .. } => Some(agent_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_round_trip_and_match_serde_tags() {
        for k in MessageKind::ALL {
            assert_eq!(k.to_string().parse::<MessageKind>(), Ok(k));
            assert_eq!(serde_json::to_value(k).unwrap(), json!(k.as_str()));
        }
        assert_eq!(
            "agent_said".parse::<MessageKind>().unwrap_err().to_string(),
            "unknown message type 'agent_said'"
        );
        let m = BusMessage::AgentSpoke {
            agent_id: "agent_001".into(),
            content: "hi".into(),
            recipients: vec!["player_0".into()],
            dialog_type: "chat".into(),
            inbox_id: None,
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["type"], json!(m.kind().as_str()));
        assert_eq!(serde_json::from_value::<BusMessage>(v).unwrap(), m);
    }

    #[test]
    fn agent_error_codes_serialize_as_their_wire_names() {
        for code in AgentErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
            assert_eq!(code.to_string(), code.as_str());
        }
    }

    #[test]
    fn sender_and_recipients() {
        let t = BusMessage::TaskAssigned {
            agent_id: "agent_002".into(),
            task_id: 1,
            task_name: "bake".into(),
            assigned_by: "player_0".into(),
        };
        assert_eq!(t.sender(), "player_0");
        assert_eq!(t.recipients(), ["agent_002".to_string()]);
        let e = BusMessage::AgentError {
            agent_id: None,
            code: AgentErrorCode::Lagged,
            message: "x".into(),
        };
        assert_eq!(e.sender(), "runtime");
        assert!(e.recipients().is_empty());
        assert_eq!(e.agent_id(), None);
    }
}
