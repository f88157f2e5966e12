//! Every protocol message as a Rust type (the JSON Schemas under `docs/protocol/` are generated
//! from these).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ErrorCode, RequestId};
use crate::agent_state::AgentState;
use crate::apps::{ActionDef, ActionRecord, Actor, AppMode, AppSession, ChatRole, ControlMode};
use crate::bus::AgentErrorCode;
use crate::geometry::Position;
use crate::memory::{AgentRecord, BrainCallRow, ConversationRow, StateChangeRow, TaskRow};
use crate::runtime::AgentConfig;

/// The `type` of every request, as sent by clients.
pub const REQUEST_TYPES: &[&str] = &[
    "ping",
    "agent_spawn_request",
    "agent_terminate_request",
    "get_agent_state",
    "list_agents",
    "send_message",
    "assign_task",
    "complete_task",
    "get_conversation",
    "get_tasks",
    "get_state_history",
    "get_agent_trace",
    "get_token_usage",
    "set_token_budget",
    "list_stored_agents",
    "list_tools",
    "call_tool",
    "subscribe",
    "app_register",
    "app_unregister",
    "app_attach",
    "app_detach",
    "app_set_context",
    "app_set_control_mode",
    "app_event",
    "app_action_result",
    "app_human_action",
    "app_human_says",
    "get_app_session",
    "campaign_load",
    "campaign_tool_calls",
    "campaign_turn",
    "campaign_state",
    "campaign_unload",
];

/// The messages the server pushes to the connection that registered an app (whatever its
/// `subscribe` filter says): the actions to handle, the app's chat, its agent leaving.
pub const APP_MESSAGE_TYPES: &[&str] = &["app_action", "app_chat", "app_detached"];

/// The `type` of every event the server pushes (what `subscribe.events` may name).
pub const EVENT_TYPES: &[&str] = &[
    "agent_spawned",
    "agent_state_update",
    "agent_moved",
    "agent_speech",
    "agent_removed",
    "task_assigned",
    "task_completed",
    "collaboration_requested",
    "agent_error",
    "agent_speech_delta",
    "agent_tool_call",
    "campaign_changed",
];

/// A request from a client. Besides these fields every request may carry `request_id` (a string
/// or an integer), echoed in the reply. Unknown fields are an error (`invalid_request`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientRequest {
    /// Liveness check → `pong`.
    Ping {},
    /// Spawn (or, with `agent_config.agent_id`, resume) an agent → `agent_spawn_response`.
    AgentSpawnRequest {
        /// `{name, role, prompt, brain | cli_backend, initial_position: {x, y}, …}`.
        agent_config: Box<AgentConfig>,
    },
    /// Terminate an agent → `agent_terminate_response` (then the `agent_removed` event).
    AgentTerminateRequest {
        /// The agent.
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
    },
    /// One running agent's state → `get_agent_state_response`.
    GetAgentState {
        /// The agent.
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
    },
    /// Running agents, by id, a page at a time → `list_agents_response`.
    ListAgents {
        /// Rows per page (default 500, at most 500).
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page; absent: the first page.
        #[serde(default)]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// Say something to an agent (as the player unless `sender` is given) →
    /// `send_message_response`; the agent answers with an `agent_speech` event.
    SendMessage {
        /// The agent spoken to.
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
        /// The line.
        #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
        content: String,
        /// Who speaks (default: the runtime's player id, `player_0`).
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_SENDER_CHARS))]
        sender: Option<String>,
    },
    /// Assign a task → `assign_task_response` (and the `task_assigned` event).
    AssignTask {
        /// The agent.
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
        /// The task.
        #[schemars(length(max = crate::limits::MAX_TASK_NAME_CHARS))]
        task_name: String,
    },
    /// Complete a task → `complete_task_response` (and the `task_completed` event).
    CompleteTask {
        /// The task's id.
        task_id: i64,
    },
    /// An agent's conversation memory, oldest first → `get_conversation_response`.
    GetConversation {
        /// The agent (running or stored).
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
        /// How many of the latest lines per page (default 50, at most 500).
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page (older lines); absent: the latest lines.
        #[serde(default)]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// An agent's tasks, oldest first → `get_tasks_response`.
    GetTasks {
        /// The agent (running or stored).
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
        /// Rows per page (default 500, at most 500).
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page; absent: the first page.
        #[serde(default)]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// An agent's traced model calls (`brain_calls`), oldest first → `get_agent_trace_response`.
    GetAgentTrace {
        /// The agent (running or stored).
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
        /// How many of the latest calls per page (default 100, at most 500).
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page (older calls); absent: the latest.
        #[serde(default)]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// Tokens spent by model brains and the budget → `get_token_usage_response`: the
    /// runtime's, or with `agent_id` a running agent's.
    GetTokenUsage {
        /// A running agent; absent: the whole runtime.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: Option<String>,
    },
    /// Sets, raises, lowers or removes a token budget → `set_token_budget_response`: the
    /// runtime's, or with `agent_id` a running agent's. An agent stopped by a spent budget
    /// thinks again once the budget allows.
    SetTokenBudget {
        /// A running agent; absent: the whole runtime.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: Option<String>,
        /// The most tokens (input and output, as providers report them) in all; `null` or
        /// absent: no limit.
        #[serde(default)]
        limit: Option<u64>,
    },
    /// An agent's state transitions, oldest first → `get_state_history_response`.
    GetStateHistory {
        /// The agent (running or stored).
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
        /// How many of the latest transitions per page (default 100, at most 500).
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page (older transitions); absent: the latest.
        #[serde(default)]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// The agents stored in the database, by number, a page at a time →
    /// `list_stored_agents_response`.
    ListStoredAgents {
        /// Rows per page (default 500, at most 500).
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page; absent: the first page.
        #[serde(default)]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// The tool definitions (LLM shape) → `list_tools_response`.
    ListTools {},
    /// Call a tool → `call_tool_response` (a game-level failure such as an illegal move is a
    /// normal response with `is_error: true`; an unknown tool or invalid arguments is an `error`).
    CallTool {
        /// The tool's name.
        #[schemars(length(max = crate::limits::MAX_TOOL_NAME_CHARS))]
        name: String,
        /// Its arguments (a JSON object, at most [`crate::limits::MAX_TOOL_ARGUMENTS_BYTES`] as
        /// JSON; default `{}`).
        #[serde(default)]
        #[schemars(with = "Option<serde_json::Map<String, Value>>")]
        arguments: Option<Value>,
    },
    /// Choose which events this connection receives → `subscribe_response`. Replaces the
    /// previous choice; a new connection receives every event.
    Subscribe {
        /// Event types (`agent_speech`, …); absent = all, `[]` = none.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_FILTER_ENTRIES))]
        events: Option<Vec<String>>,
        /// Only events about these agents; absent = every agent.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_FILTER_ENTRIES))]
        agents: Option<Vec<String>>,
    },
    /// Register an app (docs/apps.md) → `app_register_response`. This connection handles its
    /// actions (`app_action`, answered with `app_action_result`) and gets its chat
    /// (`app_chat`); when the connection closes, the app is unregistered and its agent told.
    AppRegister {
        /// Its id, unique in the runtime.
        #[schemars(length(min = 1, max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// `static` (default) or `dynamic`.
        #[serde(default)]
        mode: AppMode,
        /// The agent's part in the app.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_PROMPT_CHARS))]
        role_prompt: String,
        /// The app's state (any JSON).
        #[serde(default)]
        state: Value,
        /// Its actions: `{name, description, params, humanOnly, agentOnly}`; `params` a JSON
        /// Schema or the shorthand `{"row": "int"}`.
        #[serde(default)]
        #[schemars(length(max = crate::apps::action::MAX_ACTIONS))]
        actions: Vec<ActionDef>,
        /// `agent` (default), `human` or `copilot`.
        #[serde(default)]
        control_mode: ControlMode,
        /// A short text for the chat.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_HUMAN_LABEL_CHARS))]
        human_label: Option<String>,
        /// Whether the agent keeps its world tools (default true).
        #[serde(default)]
        world_tools: Option<bool>,
        /// Actions and events in the agent's context (1 to 100, default 10).
        #[serde(default)]
        #[schemars(range(min = 1, max = 100))]
        history: Option<usize>,
        /// Seconds to answer an `app_action` (default 30).
        #[serde(default)]
        action_timeout_seconds: Option<f64>,
        /// A built-in game app: `{"name": "tic_tac_toe", "opponent": "ai" | "human", "level":
        /// "easy", "seed": 7}`; the server plays the game (no `app_action` comes).
        #[serde(default)]
        game: Option<crate::apps::games::GameSetup>,
    },
    /// Remove an app registered by this connection → `app_unregister_response`.
    AppUnregister {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
    },
    /// Attach a running agent to an app → `app_attach_response`.
    AppAttach {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// The agent.
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        agent_id: String,
    },
    /// Detach an app's agent → `app_detach_response`.
    AppDetach {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
    },
    /// Replace an app's state, actions and label (dynamic mode's `setContext`) →
    /// `app_set_context_response`.
    AppSetContext {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// The new state.
        #[serde(default)]
        state: Option<Value>,
        /// The new actions.
        #[serde(default)]
        #[schemars(length(max = crate::apps::action::MAX_ACTIONS))]
        actions: Option<Vec<ActionDef>>,
        /// The new label (a change adds `🎮 <label>` to the chat).
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_HUMAN_LABEL_CHARS))]
        human_label: Option<String>,
    },
    /// Change who may act → `app_set_control_mode_response`.
    AppSetControlMode {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// `agent`, `human` or `copilot`.
        control_mode: ControlMode,
    },
    /// Send an event to the app's agent (`Event: <name> — <payload>`) → `app_event_response`.
    AppEvent {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// The event's name.
        #[schemars(length(max = crate::limits::MAX_EVENT_NAME_CHARS))]
        name: String,
        /// Its payload (any JSON).
        #[serde(default)]
        payload: Value,
    },
    /// Answer an `app_action` → `app_action_result_response`.
    AppActionResult {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// The `action_id` of the `app_action`.
        action_id: u64,
        /// What happened, for the agent (any JSON).
        #[serde(default)]
        result: Value,
        /// The app's new state, when the action changed it.
        #[serde(default)]
        state: Option<Value>,
        /// Set when the app refused or failed the action.
        #[serde(default)]
        #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
        error: Option<String>,
        /// The app's actions from now on, when the action changed them (whose turn it is).
        #[serde(default)]
        #[schemars(length(max = crate::apps::action::MAX_ACTIONS))]
        actions: Option<Vec<ActionDef>>,
    },
    /// The human triggers an action → `app_human_action_response` once the app answered it
    /// (other replies may come first).
    AppHumanAction {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// The action.
        #[schemars(length(max = crate::limits::MAX_TOOL_NAME_CHARS))]
        name: String,
        /// Its arguments (default `{}`).
        #[serde(default)]
        params: Value,
    },
    /// The human says a line in the app's chat → `app_human_says_response`: it joins the
    /// chat (role `human`, pushed as `app_chat`) and goes to the attached agent as a message
    /// from the player.
    AppHumanSays {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
        /// The line (not empty).
        #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
        text: String,
    },
    /// An app's session → `get_app_session_response`.
    GetAppSession {
        /// The app.
        #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
        app_id: String,
    },
    /// Load a tabletop campaign → `campaign_load_response`: `path` (a `campaign.json` under the
    /// server's campaign directory, relative, saved back after every applied call) or
    /// `campaign` (the campaign itself, kept in memory). Replaces a campaign loaded before under
    /// the same id.
    CampaignLoad {
        /// A file under the campaign directory (`camp_0001/campaign.json`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = crate::limits::MAX_CAMPAIGN_PATH_CHARS))]
        path: Option<String>,
        /// The campaign (`campaign.json`'s object).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        campaign: Option<Value>,
    },
    /// Run GM tool calls on a loaded campaign → `campaign_tool_calls_response` (and a
    /// `campaign_changed` event when a call was applied).
    CampaignToolCalls {
        /// The campaign.
        #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
        campaign_id: String,
        /// `[{id?, tool, args?, reason?}]`.
        calls: Value,
        /// The turn actor (a party member; default the active actor).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        actor_id: Option<String>,
    },
    /// One GM turn on a loaded campaign, answered by agent `gm_agent_id` →
    /// `campaign_turn_response` with the turn-log entry (sent once the GM answered).
    CampaignTurn {
        /// The campaign.
        #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
        campaign_id: String,
        /// The agent acting as game master.
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        gm_agent_id: String,
        /// What the player says.
        #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
        user_input: String,
        /// The turn actor (a party member; default the active actor).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
        actor_id: Option<String>,
    },
    /// A loaded campaign as its file holds it → `campaign_state_response`: whole when it fits
    /// a reply, otherwise a page of its areas and actors (`cursor`: the `next_cursor` of the
    /// page before).
    CampaignState {
        /// The campaign.
        #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
        campaign_id: String,
        /// Where the page starts: the `next_cursor` of the previous page (none: the first).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(length(max = 128))]
        cursor: Option<String>,
    },
    /// Unload a campaign → `campaign_unload_response`: requests naming it are then answered
    /// `unknown_campaign`, and its room counts toward the cap of loaded campaigns again. Its
    /// file and its turn log are kept.
    CampaignUnload {
        /// The campaign.
        #[schemars(length(max = crate::limits::MAX_CAMPAIGN_ID_CHARS))]
        campaign_id: String,
    },
}

impl ClientRequest {
    /// The request's `type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientRequest::Ping {} => "ping",
            ClientRequest::AgentSpawnRequest { .. } => "agent_spawn_request",
            ClientRequest::AgentTerminateRequest { .. } => "agent_terminate_request",
            ClientRequest::GetAgentState { .. } => "get_agent_state",
            ClientRequest::ListAgents { .. } => "list_agents",
            ClientRequest::SendMessage { .. } => "send_message",
            ClientRequest::AssignTask { .. } => "assign_task",
            ClientRequest::CompleteTask { .. } => "complete_task",
            ClientRequest::GetConversation { .. } => "get_conversation",
            ClientRequest::GetTasks { .. } => "get_tasks",
            ClientRequest::GetStateHistory { .. } => "get_state_history",
            ClientRequest::GetAgentTrace { .. } => "get_agent_trace",
            ClientRequest::GetTokenUsage { .. } => "get_token_usage",
            ClientRequest::SetTokenBudget { .. } => "set_token_budget",
            ClientRequest::ListStoredAgents { .. } => "list_stored_agents",
            ClientRequest::ListTools {} => "list_tools",
            ClientRequest::CallTool { .. } => "call_tool",
            ClientRequest::Subscribe { .. } => "subscribe",
            ClientRequest::AppRegister { .. } => "app_register",
            ClientRequest::AppUnregister { .. } => "app_unregister",
            ClientRequest::AppAttach { .. } => "app_attach",
            ClientRequest::AppDetach { .. } => "app_detach",
            ClientRequest::AppSetContext { .. } => "app_set_context",
            ClientRequest::AppSetControlMode { .. } => "app_set_control_mode",
            ClientRequest::AppEvent { .. } => "app_event",
            ClientRequest::AppActionResult { .. } => "app_action_result",
            ClientRequest::AppHumanAction { .. } => "app_human_action",
            ClientRequest::AppHumanSays { .. } => "app_human_says",
            ClientRequest::GetAppSession { .. } => "get_app_session",
            ClientRequest::CampaignLoad { .. } => "campaign_load",
            ClientRequest::CampaignToolCalls { .. } => "campaign_tool_calls",
            ClientRequest::CampaignTurn { .. } => "campaign_turn",
            ClientRequest::CampaignState { .. } => "campaign_state",
            ClientRequest::CampaignUnload { .. } => "campaign_unload",
        }
    }
    /// The running agent the request is about, for the requests only the process running it
    /// can answer (in a world served by several processes they are routed to it).
    pub fn routed_agent(&self) -> Option<&str> {
        match self {
            ClientRequest::AgentTerminateRequest { agent_id }
            | ClientRequest::GetAgentState { agent_id }
            | ClientRequest::SendMessage { agent_id, .. }
            | ClientRequest::AssignTask { agent_id, .. } => Some(agent_id),
            ClientRequest::GetTokenUsage { agent_id }
            | ClientRequest::SetTokenBudget { agent_id, .. } => agent_id.as_deref(),
            _ => None,
        }
    }

    /// The agent the request binds to something that lives on the process the client is
    /// connected to (an app: `app_attach`; a loaded campaign: the GM agent of
    /// `campaign_turn`). In a world served by several processes such an agent is brought to
    /// this process first (handed over by the process running it).
    pub fn placed_agent(&self) -> Option<&str> {
        match self {
            ClientRequest::AppAttach { agent_id, .. } => Some(agent_id),
            ClientRequest::CampaignTurn { gm_agent_id, .. } => Some(gm_agent_id),
            _ => None,
        }
    }

    /// Whether answering the request writes to the agent memory. The reply to such a request
    /// reports a write, so a front end sends it only once that write is committed
    /// ([`crate::memory::Memory::committed`]): acknowledged means durable.
    pub fn writes(&self) -> bool {
        match self {
            ClientRequest::AgentSpawnRequest { .. }
            | ClientRequest::AgentTerminateRequest { .. }
            | ClientRequest::SendMessage { .. }
            | ClientRequest::AssignTask { .. }
            | ClientRequest::CompleteTask { .. } => true,
            ClientRequest::Ping { .. }
            | ClientRequest::GetAgentState { .. }
            | ClientRequest::ListAgents { .. }
            | ClientRequest::GetConversation { .. }
            | ClientRequest::GetTasks { .. }
            | ClientRequest::GetStateHistory { .. }
            | ClientRequest::GetAgentTrace { .. }
            | ClientRequest::GetTokenUsage { .. }
            | ClientRequest::SetTokenBudget { .. }
            | ClientRequest::ListStoredAgents { .. }
            | ClientRequest::ListTools { .. }
            | ClientRequest::CallTool { .. }
            | ClientRequest::Subscribe { .. }
            | ClientRequest::GetAppSession { .. }
            | ClientRequest::CampaignState { .. }
            | ClientRequest::CampaignUnload { .. } => false,
            // Campaign files are saved before the reply; a turn's log row is committed first.
            ClientRequest::CampaignLoad { .. }
            | ClientRequest::CampaignToolCalls { .. }
            | ClientRequest::CampaignTurn { .. } => true,
            // App sessions are written as they change; their replies wait for the commit too.
            ClientRequest::AppRegister { .. }
            | ClientRequest::AppUnregister { .. }
            | ClientRequest::AppAttach { .. }
            | ClientRequest::AppDetach { .. }
            | ClientRequest::AppSetContext { .. }
            | ClientRequest::AppSetControlMode { .. }
            | ClientRequest::AppEvent { .. }
            | ClientRequest::AppActionResult { .. }
            | ClientRequest::AppHumanAction { .. }
            | ClientRequest::AppHumanSays { .. } => true,
        }
    }
}

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
    /// Reply to `list_stored_agents`.
    ListStoredAgentsResponse {
        /// Echoed.
        request_id: Option<RequestId>,
        /// Stored agents, by number.
        agents: Vec<AgentRecord>,
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
    /// Event: an agent is running (spawned or resumed).
    AgentSpawned {
        /// The agent.
        agent_id: String,
        /// Name.
        name: String,
        /// Role.
        role: String,
        /// Position.
        position: Position,
        /// State (`idle`).
        state: AgentState,
        /// Resumed from the database.
        resumed: bool,
    },
    /// Event: an agent changed state.
    AgentStateUpdate {
        /// The agent.
        agent_id: String,
        /// The new state.
        state: AgentState,
        /// The state before.
        old_state: AgentState,
        /// Position.
        position: Position,
        /// The task it works on.
        current_task: Option<String>,
    },
    /// Event: an agent moved.
    AgentMoved {
        /// The agent.
        agent_id: String,
        /// From.
        from: Position,
        /// To.
        to: Position,
    },
    /// Event: someone spoke (an agent, or the player through `send_message`).
    AgentSpeech {
        /// The speaker.
        agent_id: String,
        /// The line.
        content: String,
        /// Addressed to (empty: no one in particular).
        recipients: Vec<String>,
        /// `reply`, `chat`, `task_update`, `player`, ….
        dialog_type: String,
    },
    /// Event: an agent stopped (`terminated` or `shutdown`).
    AgentRemoved {
        /// The agent.
        agent_id: String,
        /// Why.
        reason: String,
    },
    /// Event: a task was assigned.
    TaskAssigned {
        /// The agent.
        agent_id: String,
        /// Task id.
        task_id: i64,
        /// Task.
        task_name: String,
        /// Who assigned it.
        assigned_by: String,
    },
    /// Event: a task was completed.
    TaskCompleted {
        /// The agent.
        agent_id: String,
        /// Task id.
        task_id: i64,
        /// Task.
        task_name: String,
        /// When.
        completed_at: String,
    },
    /// Event: an agent asked another for help (the helper was assigned the task).
    CollaborationRequested {
        /// The asking agent.
        agent_id: String,
        /// The helper.
        helper_id: String,
        /// The helper's new task id.
        task_id: i64,
        /// The task.
        task_name: String,
        /// What was asked.
        message: String,
    },
    /// Event: a piece of the text a model brain is generating, before the decision's
    /// `agent_speech`.
    AgentSpeechDelta {
        /// The agent.
        agent_id: String,
        /// The new text.
        delta: String,
        /// Increasing per agent, to order pieces.
        seq: u64,
    },
    /// Event: a model brain started a tool call (its arguments still streaming).
    AgentToolCall {
        /// The agent.
        agent_id: String,
        /// The tool.
        tool: String,
        /// The call's id.
        call_id: String,
    },
    /// Event: an agent-side problem (refused transition or action, brain failure, lag).
    AgentError {
        /// The agent, if any.
        agent_id: Option<String>,
        /// What went wrong ([`AgentErrorCode`]).
        code: AgentErrorCode,
        /// Explanation.
        message: String,
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
    /// Event: GM tool calls were applied to a loaded campaign (a batch, or a turn).
    CampaignChanged {
        /// The campaign.
        campaign_id: String,
        /// The turn (`turn_0003`), or `null` for a batch of calls.
        turn_id: Option<String>,
        /// The applied calls.
        applied_actions: Vec<crate::campaign::AppliedAction>,
        /// What they did: `actor_moved`, `hp_changed`, `actor_state_changed`, `map_generated`.
        effects: Vec<crate::campaign::Effect>,
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
}

/// `{"type":"error","code":…,"message":…,"request_id":…}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorMessage {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Explanation (names the field where there is one).
    pub message: String,
    /// The failed request's id, when it could be read.
    pub request_id: Option<RequestId>,
}
