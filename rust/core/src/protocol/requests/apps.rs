//! The app bridge's requests (docs/apps.md): a front end registers its app, answers its
//! actions and feeds it events; any connection may read a session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Answer, Cx, ForConnection, Request, Route, Runs};
use crate::apps::{
    ActionDef, ActionOutcome, ActionRecord, AppConfig, AppContext, AppMode, AppSession, ControlMode,
};
use crate::protocol::pages;
use crate::tools::ToolRegistry;

/// Register an app (docs/apps.md) → `app_register_response`. This connection handles its
/// actions (`app_action`, answered with `app_action_result`) and gets its chat
/// (`app_chat`); when the connection closes, the app is unregistered and its agent told.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppRegister {
    /// Its id, unique in the runtime.
    #[schemars(length(min = 1, max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// `static` (default) or `dynamic`.
    #[serde(default)]
    pub mode: AppMode,
    /// The agent's part in the app.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_PROMPT_CHARS))]
    pub role_prompt: String,
    /// The app's state (any JSON).
    #[serde(default)]
    pub state: Value,
    /// Its actions: `{name, description, params, humanOnly, agentOnly}`; `params` a JSON
    /// Schema or the shorthand `{"row": "int"}`.
    #[serde(default)]
    #[schemars(length(max = crate::apps::action::MAX_ACTIONS))]
    pub actions: Vec<ActionDef>,
    /// `agent` (default), `human` or `copilot`.
    #[serde(default)]
    pub control_mode: ControlMode,
    /// A short text for the chat.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_HUMAN_LABEL_CHARS))]
    pub human_label: Option<String>,
    /// Whether the agent keeps its world tools (default true).
    #[serde(default)]
    pub world_tools: Option<bool>,
    /// Actions and events in the agent's context (1 to 100, default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub history: Option<usize>,
    /// Seconds to answer an `app_action` (default 30).
    #[serde(default)]
    pub action_timeout_seconds: Option<f64>,
    /// A built-in game app: `{"name": "tic_tac_toe", "opponent": "ai" | "human", "level":
    /// "easy", "seed": 7}`; the server plays the game (no `app_action` comes).
    #[serde(default)]
    pub game: Option<crate::apps::games::GameSetup>,
}

impl Request for AppRegister {
    type Reply = AppRegisterResponse;
    const WRITES: bool = true;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        let defaults = AppConfig::new(&self.app_id);
        Answer::Connection(ForConnection::RegisterApp(Box::new(AppConfig {
            app_id: self.app_id,
            mode: self.mode,
            role_prompt: self.role_prompt,
            state: self.state,
            actions: self.actions,
            control_mode: self.control_mode,
            human_label: self.human_label,
            world_tools: self.world_tools.unwrap_or(defaults.world_tools),
            history: self.history.unwrap_or(defaults.history),
            action_timeout_seconds: self
                .action_timeout_seconds
                .unwrap_or(defaults.action_timeout_seconds),
            game: self.game,
        })))
    }
}

/// Reply to `app_register`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppRegisterResponse {
    /// The app.
    pub app_id: String,
    /// The tools an attached agent is offered now (`name`, `description`, `parameters`).
    pub tools: Vec<Value>,
}

/// Remove an app registered by this connection → `app_unregister_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppUnregister {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
}

impl Request for AppUnregister {
    type Reply = AppUnregisterResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let app_id = self.app_id;
        (cx.runtime
            .unregister_app(&app_id)
            .map(|()| AppUnregisterResponse { app_id }))
        .into()
    }
}

/// Reply to `app_unregister`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppUnregisterResponse {
    /// The app.
    pub app_id: String,
}

/// Attach a running agent to an app → `app_attach_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppAttach {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
}

impl Request for AppAttach {
    type Reply = AppAttachResponse;
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::BringHere(&self.agent_id)
    }

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .attach_app(&self.app_id, &self.agent_id)
            .map(|()| AppAttachResponse {
                app_id: self.app_id,
                agent_id: self.agent_id,
            }))
        .into()
    }
}

/// Reply to `app_attach`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppAttachResponse {
    /// The app.
    pub app_id: String,
    /// The agent now playing it.
    pub agent_id: String,
}

/// Detach an app's agent → `app_detach_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppDetach {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
}

impl Request for AppDetach {
    type Reply = AppDetachResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let app_id = self.app_id;
        (cx.runtime
            .detach_app(&app_id)
            .map(|agent_id| AppDetachResponse { app_id, agent_id }))
        .into()
    }
}

/// Reply to `app_detach`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppDetachResponse {
    /// The app.
    pub app_id: String,
    /// The agent that left.
    pub agent_id: String,
}

/// Replace an app's state, actions and label (dynamic mode's `setContext`) →
/// `app_set_context_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppSetContext {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// The new state.
    #[serde(default)]
    pub state: Option<Value>,
    /// The new actions.
    #[serde(default)]
    #[schemars(length(max = crate::apps::action::MAX_ACTIONS))]
    pub actions: Option<Vec<ActionDef>>,
    /// The new label (a change adds `🎮 <label>` to the chat).
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_HUMAN_LABEL_CHARS))]
    pub human_label: Option<String>,
}

impl Request for AppSetContext {
    type Reply = AppSetContextResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let app_id = self.app_id;
        let context = AppContext {
            state: self.state,
            actions: self.actions,
            human_label: self.human_label,
        };
        (cx.runtime
            .set_app_context(&app_id, context)
            .and_then(|()| cx.runtime.app_session(&app_id))
            .map(|session| AppSetContextResponse {
                app_id,
                tools: session.tools,
            }))
        .into()
    }
}

/// Reply to `app_set_context`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppSetContextResponse {
    /// The app.
    pub app_id: String,
    /// The tools the agent is offered now.
    pub tools: Vec<Value>,
}

/// Change who may act → `app_set_control_mode_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppSetControlMode {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// `agent`, `human` or `copilot`.
    pub control_mode: ControlMode,
}

impl Request for AppSetControlMode {
    type Reply = AppSetControlModeResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .set_app_control_mode(&self.app_id, self.control_mode)
            .map(|()| AppSetControlModeResponse {
                app_id: self.app_id,
                control_mode: self.control_mode,
            }))
        .into()
    }
}

/// Reply to `app_set_control_mode`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppSetControlModeResponse {
    /// The app.
    pub app_id: String,
    /// Who may act now.
    pub control_mode: ControlMode,
}

/// Send an event to the app's agent (`Event: <name> — <payload>`) → `app_event_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppEvent {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// The event's name.
    #[schemars(length(max = crate::limits::MAX_EVENT_NAME_CHARS))]
    pub name: String,
    /// Its payload (any JSON).
    #[serde(default)]
    pub payload: Value,
}

impl Request for AppEvent {
    type Reply = AppEventResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let app_id = self.app_id;
        (cx.runtime
            .emit_app_event(&app_id, &self.name, self.payload)
            .map(|event| AppEventResponse {
                app_id,
                text: event.text,
            }))
        .into()
    }
}

/// Reply to `app_event`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppEventResponse {
    /// The app.
    pub app_id: String,
    /// The system message the agent got (`Event: roundEnded — { winner: X }`).
    pub text: String,
}

/// Answer an `app_action` → `app_action_result_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppActionResult {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// The `action_id` of the `app_action`.
    pub action_id: u64,
    /// What happened, for the agent (any JSON).
    #[serde(default)]
    pub result: Value,
    /// The app's new state, when the action changed it.
    #[serde(default)]
    pub state: Option<Value>,
    /// Set when the app refused or failed the action.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
    pub error: Option<String>,
    /// The app's actions from now on, when the action changed them (whose turn it is).
    #[serde(default)]
    #[schemars(length(max = crate::apps::action::MAX_ACTIONS))]
    pub actions: Option<Vec<ActionDef>>,
}

impl Request for AppActionResult {
    type Reply = AppActionResultResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let outcome = ActionOutcome {
            result: self.result,
            state: self.state,
            error: self.error,
            actions: self.actions,
            events: Vec::new(),
        };
        (cx.runtime
            .complete_app_action(&self.app_id, self.action_id, outcome)
            .map(|()| AppActionResultResponse {
                app_id: self.app_id,
                action_id: self.action_id,
            }))
        .into()
    }
}

/// Reply to `app_action_result`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppActionResultResponse {
    /// The app.
    pub app_id: String,
    /// The action answered.
    pub action_id: u64,
}

/// The human triggers an action → `app_human_action_response` once the app answered it
/// (other replies may come first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppHumanAction {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// The action.
    #[schemars(length(max = crate::limits::MAX_TOOL_NAME_CHARS))]
    pub name: String,
    /// Its arguments (default `{}`).
    #[serde(default)]
    pub params: Value,
}

impl Request for AppHumanAction {
    type Reply = AppHumanActionResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Connection(ForConnection::HumanAction {
            app_id: self.app_id,
            name: self.name,
            params: self.params,
        })
    }
}

/// Reply to `app_human_action`, once the app answered the action.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppHumanActionResponse {
    /// The app.
    pub app_id: String,
    /// The action as the session keeps it (`ok`, `result`, `error`).
    pub action: ActionRecord,
}

/// The human says a line in the app's chat → `app_human_says_response`: it joins the
/// chat (role `human`, pushed as `app_chat`) and goes to the attached agent as a message
/// from the player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppHumanSays {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
    /// The line (not empty).
    #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
    pub text: String,
}

impl Request for AppHumanSays {
    type Reply = AppHumanSaysResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .app_human_says(&self.app_id, &self.text)
            .map(|()| AppHumanSaysResponse {
                app_id: self.app_id,
            }))
        .into()
    }
}

/// Reply to `app_human_says`: the line is in the chat and sent to the agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppHumanSaysResponse {
    /// The app.
    pub app_id: String,
}

/// An app's session → `get_app_session_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAppSession {
    /// The app.
    #[schemars(length(max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: String,
}

impl Request for GetAppSession {
    type Reply = GetAppSessionResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime.app_session(&self.app_id).map(|mut session| {
            let left = session.fit(pages::MAX_PAGE_BYTES);
            GetAppSessionResponse {
                session: Box::new(session),
                history_left_out: left.history,
                events_left_out: left.events,
                chat_left_out: left.chat,
                state_left_out: left.state,
            }
        }))
        .into()
    }
}

/// Reply to `get_app_session`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetAppSessionResponse {
    /// The session; when it would not fit the reply, its newest actions, events and chat
    /// lines that fit (and, if even that is too much, without its `state`).
    pub session: Box<AppSession>,
    /// Older actions left out of `session.history`.
    pub history_left_out: usize,
    /// Older events left out of `session.events`.
    pub events_left_out: usize,
    /// Older chat lines left out of `session.chat`.
    pub chat_left_out: usize,
    /// True when `session.state` was left out (`null`): the game holds it.
    pub state_left_out: bool,
}
