//! Row types read from and written to the database.

use serde::{Deserialize, Serialize};

use crate::agent_state::AgentState;
use crate::geometry::Position;

/// One line in an agent's conversation memory (`agent_conversations`). `agent_id` owns the memory:
/// a line said by `agent_001` to `agent_002` is stored twice, once in each agent's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConversationRow {
    /// Row id (increasing in insertion order).
    pub id: i64,
    /// The agent whose memory this is.
    pub agent_id: String,
    /// UTC ISO-8601 with milliseconds.
    pub timestamp: String,
    /// Who said it.
    pub sender: String,
    /// What was said.
    pub content: String,
    /// Who it was said to: one id, several ids joined with `,`, or `None` (no one in particular).
    pub recipient: Option<String>,
}

/// A line to store (the writer stamps nothing: the timestamp is taken when it is queued).
#[derive(Clone, Debug, PartialEq)]
pub struct NewConversation {
    /// The agent whose memory this is.
    pub agent_id: String,
    /// Who said it.
    pub sender: String,
    /// What was said.
    pub content: String,
    /// Who it was said to (see [`ConversationRow::recipient`]).
    pub recipient: Option<String>,
}

crate::wire_enum! {
    /// Task status: `assigned` or `completed` (the strings stored in `agent_tasks.status`).
    pub enum TaskStatus: "task status" {
        /// Open.
        Assigned = "assigned",
        /// Done; `completed_at` is set.
        Completed = "completed",
    }
}

/// One task (`agent_tasks`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskRow {
    /// Task id (allocated when assigned, before the row is on disk).
    pub id: i64,
    /// The agent that owns it.
    pub agent_id: String,
    /// What to do.
    pub task_name: String,
    /// `assigned` or `completed`.
    pub status: TaskStatus,
    /// UTC ISO-8601.
    pub created_at: String,
    /// UTC ISO-8601, when completed.
    pub completed_at: Option<String>,
}

/// One state transition (`agent_state_history`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StateChangeRow {
    /// Row id.
    pub id: i64,
    /// The agent.
    pub agent_id: String,
    /// State before.
    pub old_state: AgentState,
    /// State after.
    pub new_state: AgentState,
    /// UTC ISO-8601.
    pub timestamp: String,
}

/// What is stored to resume an agent (`agents`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentRecord {
    /// `agent_001`, ….
    pub agent_id: String,
    /// Display name.
    pub name: String,
    /// Role.
    pub role: String,
    /// Role prompt.
    pub prompt: String,
    /// Brain name.
    pub brain: String,
    /// The full effective config as JSON (for resume).
    pub config: serde_json::Value,
    /// Last known position.
    pub position: Position,
    /// Last known state.
    pub state: AgentState,
    /// UTC ISO-8601, first spawn.
    pub created_at: String,
    /// UTC ISO-8601, when terminated (then `resume_all` skips it); `None` while resumable.
    pub removed_at: Option<String>,
}

/// A line accepted for an agent and not yet answered by one of its decisions (`agent_inbox`).
/// It is in the agent's conversation memory too (written in the same transaction).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InboxRow {
    /// Row id (increasing in acceptance order).
    pub id: i64,
    /// The agent spoken to.
    pub agent_id: String,
    /// Who spoke.
    pub sender: String,
    /// What was said.
    pub content: String,
    /// The dialog type it was sent with (`player`, `message`, …).
    pub dialog_type: String,
    /// When it was accepted (UTC ISO-8601 with milliseconds).
    pub created_at: String,
}

/// One page of a list read by keyset: `rows` in the list's order, and `next`, the key to pass
/// for the following page (`None`: this is the last page).
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    /// The rows.
    pub rows: Vec<T>,
    /// Where the next page starts (a row id or an agent number), if there is one.
    pub next: Option<i64>,
}

crate::wire_enum! {
    /// How a model call ended.
    pub enum CallOutcome: "call outcome" {
        /// The model answered the contract.
        Ok = "ok",
        /// The model answered something that is not the contract (the decision repairs it or
        /// fails with `brain_invalid_reply`).
        InvalidReply = "invalid_reply",
        /// The call failed: unreachable, refused, timed out, out of budget.
        Error = "error",
        /// The decision was interrupted, terminated or shut down while the call was in flight.
        Cancelled = "cancelled",
    }
}

/// One traced model call (`brain_calls`), as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrainCall {
    /// The deciding agent.
    pub agent_id: String,
    /// The provider (`openai`, `anthropic`, `cli`, …).
    pub provider: String,
    /// The model, when the provider has one.
    pub model: Option<String>,
    /// When the call started (UTC ISO-8601).
    pub started_at: String,
    /// How long it took, retries included, in milliseconds.
    pub latency_ms: u64,
    /// Prompt tokens the provider reported (cached ones included).
    pub input_tokens: u64,
    /// Answer tokens the provider reported.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache.
    pub cached_tokens: u64,
    /// How it ended.
    pub outcome: CallOutcome,
    /// Repairs asked for within the decision before this call.
    pub repairs: u32,
    /// The error code when it failed (`brain_auth_failed`, `brain_model_not_found`, …).
    pub error_code: Option<String>,
    /// The request as sent, when the brain keeps prompts (`trace_prompts`).
    pub prompt: Option<String>,
    /// The answer as received, when the brain keeps prompts.
    pub reply: Option<String>,
}

/// A stored [`BrainCall`] with its row id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrainCallRow {
    /// Row id (increasing).
    pub id: i64,
    /// The call.
    #[serde(flatten)]
    pub call: BrainCall,
}

/// An app session's row (`app_sessions`): what [`crate::apps`] stores of an app.
#[derive(Clone, Debug, PartialEq)]
pub struct AppRow {
    /// The app.
    pub app_id: String,
    /// The attached agent, if any.
    pub agent_id: Option<String>,
    /// `static` or `dynamic`.
    pub mode: String,
    /// `agent`, `human` or `copilot`.
    pub control_mode: String,
    /// The agent's part.
    pub role_prompt: String,
    /// The label, if any.
    pub human_label: Option<String>,
    /// The state, as JSON text.
    pub state: String,
    /// The actions, as JSON text.
    pub actions: String,
    /// When it was written (UTC ISO-8601).
    pub updated_at: String,
}

/// What an `app_log` entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppLogKind {
    /// An [`crate::apps::ActionRecord`].
    Action,
    /// An [`crate::apps::EventRecord`].
    Event,
    /// A [`crate::apps::ChatLine`].
    Chat,
}

impl AppLogKind {
    /// The `kind` column's value.
    pub fn as_str(self) -> &'static str {
        match self {
            AppLogKind::Action => "action",
            AppLogKind::Event => "event",
            AppLogKind::Chat => "chat",
        }
    }
}

/// A stored app session, read back when an app of the same id registers again.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredApp {
    /// The state it had.
    pub state: serde_json::Value,
    /// The label it had.
    pub human_label: Option<String>,
    /// Its last actions, oldest first, as the app bridge wrote them (JSON objects: the memory
    /// layer stores them without reading them).
    pub actions: Vec<serde_json::Value>,
    /// Its last events, oldest first, as written.
    pub events: Vec<serde_json::Value>,
    /// Its last chat lines, oldest first, as written.
    pub chat: Vec<serde_json::Value>,
}

/// A stored string that does not parse (an unknown state or status, invalid JSON).
#[derive(Debug, thiserror::Error)]
#[error("stored {what} '{text}' does not parse: {reason}")]
pub struct BadStored {
    /// What the column holds.
    pub what: &'static str,
    /// The text found.
    pub text: String,
    /// Why it does not parse.
    pub reason: String,
}
