//! Every protocol message as a Rust type (the JSON Schemas under `docs/protocol/` are generated
//! from these).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ProtocolErrorCode, RequestId};
use crate::agent_state::AgentState;
use crate::apps::{ActionRecord, Actor, AppSession, ChatRole, ControlMode};
use crate::bus::BusMessage;
use crate::geometry::Position;
use crate::memory::{BrainCallRow, ConversationRow, StateChangeRow, TaskRow};

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
    /// Reply to `ping`.
    Pong {
        /// Echoed.
        request_id: Option<RequestId>,
    },
    /// Reply to `agent_spawn_request`.
    AgentSpawnResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The new (or resumed) agent.
        agent_id: String,
    },
    /// Reply to `agent_terminate_request`.
    AgentTerminateResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The terminated agent.
        agent_id: String,
    },
    /// Reply to `get_agent_state`.
    GetAgentStateResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent: AgentInfo,
    },
    /// Reply to `list_agents`.
    ListAgentsResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// Running agents, by id.
        agents: Vec<AgentInfo>,
        /// Pass as `cursor` for the next page; `null`: this is the last one.
        next_cursor: Option<String>,
    },
    /// Reply to `send_message`.
    SendMessageResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent spoken to.
        agent_id: String,
        /// The line's id: the `agent_replied` event of the decision that answers it lists it
        /// in `in_reply_to`.
        message_id: i64,
    },
    /// Reply to `assign_task`.
    AssignTaskResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The new task.
        task: TaskRow,
    },
    /// Reply to `complete_task`.
    CompleteTaskResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The completed task.
        task: TaskRow,
    },
    /// Reply to `get_conversation`.
    GetConversationResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// Lines, oldest first.
        messages: Vec<ConversationRow>,
        /// Pass as `cursor` for the page of older lines; `null`: there are none.
        next_cursor: Option<String>,
    },
    /// Reply to `get_tasks`.
    GetTasksResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// Tasks, oldest first.
        tasks: Vec<TaskRow>,
        /// Pass as `cursor` for the next page; `null`: this is the last one.
        next_cursor: Option<String>,
    },
    /// Reply to `get_state_history`.
    GetStateHistoryResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// Transitions, oldest first.
        transitions: Vec<StateChangeRow>,
        /// Pass as `cursor` for the page of older transitions; `null`: there are none.
        next_cursor: Option<String>,
    },
    /// Reply to `get_agent_trace`.
    GetAgentTraceResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// Model calls, oldest first.
        calls: Vec<BrainCallRow>,
        /// Pass as `cursor` for the page of older calls; `null`: there are none.
        next_cursor: Option<String>,
    },
    /// Reply to `get_token_usage`.
    GetTokenUsageResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent asked about; `null`: the whole runtime.
        agent_id: Option<String>,
        /// Tokens spent so far.
        spent: u64,
        /// The budget; `null`: no limit.
        limit: Option<u64>,
    },
    /// Reply to `set_token_budget`: the budget as it now is.
    SetTokenBudgetResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent whose budget was set; `null`: the whole runtime.
        agent_id: Option<String>,
        /// Tokens spent so far.
        spent: u64,
        /// The budget now; `null`: no limit.
        limit: Option<u64>,
    },
    /// Reply to `set_agent_position`.
    SetAgentPositionResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// Where it is now.
        position: Position,
    },
    /// Reply to `finish_move`: `agent_move_finished` is published, and the agent's next decision
    /// is told how the move ended.
    FinishMoveResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// The move.
        move_id: u64,
    },
    /// Reply to `observe`: the line waits for the agent's next decision.
    ObserveResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
    },
    /// Reply to `remember`, once the memory is stored.
    RememberResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// The memory's id (for `forget_memory`, or to supersede it later).
        memory_id: i64,
        /// The game time it was stamped with, in seconds.
        game_time: f64,
    },
    /// Reply to `recall`.
    RecallResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// The game time the recall was scored at, in seconds.
        game_time: f64,
        /// The memories recalled, best first, each with its score and the parts of it.
        memories: Vec<crate::mind::Recalled>,
    },
    /// Reply to `forget_memory`, once the memory is gone.
    ForgetMemoryResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// The memory forgotten.
        memory_id: i64,
    },
    /// Reply to `list_memories`.
    ListMemoriesResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The agent.
        agent_id: String,
        /// Memories, oldest first within the page.
        memories: Vec<crate::memory::StoredMemory>,
        /// Pass as `cursor` for the page of older memories; `null`: there are none.
        next_cursor: Option<String>,
    },
    /// Reply to `list_stored_agents`.
    ListStoredAgentsResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// Stored agents, by number; one a resume could not start says what it waits for
        /// (`waiting_for`).
        agents: Vec<crate::runtime::StoredAgent>,
        /// Pass as `cursor` for the next page; `null`: this is the last one.
        next_cursor: Option<String>,
    },
    /// Reply to `list_tools`.
    ListToolsResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// Tool definitions: `{name, description, parameters}`.
        tools: Vec<Value>,
    },
    /// Reply to `call_tool`.
    CallToolResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The tool.
        name: String,
        /// The result (`structuredContent`).
        structured_content: Value,
        /// Text items (notes).
        content: Vec<String>,
        /// A game-level failure (illegal move, unparsable state).
        is_error: bool,
    },
    /// Reply to `subscribe`: the filter now in force.
    SubscribeResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// Event types received (`None` = all).
        events: Option<Vec<String>>,
        /// Agents whose events are received (`None` = all).
        agents: Option<Vec<String>>,
    },
    /// Reply to `app_register`.
    AppRegisterResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The tools an attached agent is offered now (`name`, `description`, `parameters`).
        tools: Vec<Value>,
    },
    /// Reply to `app_unregister`.
    AppUnregisterResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
    },
    /// Reply to `app_attach`.
    AppAttachResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The agent now playing it.
        agent_id: String,
    },
    /// Reply to `app_detach`.
    AppDetachResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The agent that left.
        agent_id: String,
    },
    /// Reply to `app_set_context`.
    AppSetContextResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The tools the agent is offered now.
        tools: Vec<Value>,
    },
    /// Reply to `app_set_control_mode`.
    AppSetControlModeResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// Who may act now.
        control_mode: ControlMode,
    },
    /// Reply to `app_event`.
    AppEventResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The system message the agent got (`Event: roundEnded — { winner: X }`).
        text: String,
    },
    /// Reply to `app_action_result`.
    AppActionResultResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The action answered.
        action_id: u64,
    },
    /// Reply to `app_human_action`, once the app answered the action.
    AppHumanActionResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
        /// The action as the session keeps it (`ok`, `result`, `error`).
        action: ActionRecord,
    },
    /// Reply to `app_human_says`: the line is in the chat and sent to the agent.
    AppHumanSaysResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The app.
        app_id: String,
    },
    /// Reply to `get_app_session`.
    GetAppSessionResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The session; when it would not fit the reply, its newest actions, events and chat
        /// lines that fit (and, if even that is too much, without its `state`).
        session: Box<AppSession>,
        /// Older actions left out of `session.history`.
        history_left_out: usize,
        /// Older events left out of `session.events`.
        events_left_out: usize,
        /// Older chat lines left out of `session.chat`.
        chat_left_out: usize,
        /// True when `session.state` was left out (`null`): the game holds it.
        state_left_out: bool,
    },
    /// Reply to `campaign_load`.
    CampaignLoadResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The campaign's id, to name it in later requests.
        campaign_id: String,
        /// What was normalised while loading (`actor:pc_002:position_missing_area`): the first
        /// that fit 4 KiB of JSON.
        warnings: Vec<String>,
        /// How many more warnings there were (not sent).
        warnings_left_out: usize,
        /// The campaign as its file holds it; when it does not fit the reply, its first page
        /// (`campaign_truncated`; read the rest with `campaign_state` and `next_cursor`).
        campaign: Value,
        /// True when `campaign` leaves areas or actors out.
        campaign_truncated: bool,
        /// How many areas the campaign has.
        area_count: usize,
        /// How many actors the campaign has.
        actor_count: usize,
        /// Pass as `campaign_state`'s `cursor` for the next page; `null` when there is none.
        next_cursor: Option<String>,
    },
    /// Reply to `campaign_tool_calls`.
    CampaignToolCallsResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The campaign.
        campaign_id: String,
        /// The applied calls: `{tool, args, result, timestamp}`.
        applied_actions: Vec<crate::campaign::AppliedAction>,
        /// `{"failed_calls": [{id, tool, status, reason, message}]}`, `null` when nothing failed.
        tool_feedback: Option<crate::campaign::ToolFeedback>,
    },
    /// Reply to `campaign_turn`.
    CampaignTurnResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The campaign.
        campaign_id: String,
        /// The turn-log entry.
        entry: Box<crate::campaign::turn::TurnEntry>,
    },
    /// Reply to `campaign_state`.
    CampaignStateResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The campaign.
        campaign_id: String,
        /// The campaign as its file holds it; when it does not fit the reply (or a `cursor`
        /// was given), a page of it (`campaign_truncated`).
        campaign: Value,
        /// How many turns its log holds.
        turns: u64,
        /// True when `campaign` leaves areas or actors out.
        campaign_truncated: bool,
        /// How many areas the campaign has.
        area_count: usize,
        /// How many actors the campaign has.
        actor_count: usize,
        /// Pass as `cursor` for the next page; `null` when there is none.
        next_cursor: Option<String>,
    },
    /// Reply to `campaign_unload`.
    CampaignUnloadResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// The campaign unloaded.
        campaign_id: String,
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
