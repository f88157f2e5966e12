//! The app bridge's requests (docs/apps.md): a front end registers its app, answers its
//! actions and feeds it events; any connection may read a session.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Cx, Handled, Request, Route, Runs};
use crate::apps::{ActionDef, ActionOutcome, AppConfig, AppContext, AppMode, ControlMode};
use crate::protocol::{ServerMessage, pages};
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
    const WRITES: bool = true;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        let defaults = AppConfig::new(&self.app_id);
        Handled::RegisterApp(Box::new(AppConfig {
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
        }))
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let app_id = self.app_id;
        cx.reply(cx.runtime.unregister_app(&app_id).map(|()| {
            ServerMessage::AppUnregisterResponse {
                request_id: cx.id(),
                app_id,
            }
        }))
    }
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
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::BringHere(&self.agent_id)
    }

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        cx.reply(
            cx.runtime
                .attach_app(&self.app_id, &self.agent_id)
                .map(|()| ServerMessage::AppAttachResponse {
                    request_id: cx.id(),
                    app_id: self.app_id,
                    agent_id: self.agent_id,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let app_id = self.app_id;
        cx.reply(
            cx.runtime
                .detach_app(&app_id)
                .map(|agent_id| ServerMessage::AppDetachResponse {
                    request_id: cx.id(),
                    app_id,
                    agent_id,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let app_id = self.app_id;
        let context = AppContext {
            state: self.state,
            actions: self.actions,
            human_label: self.human_label,
        };
        cx.reply(
            cx.runtime
                .set_app_context(&app_id, context)
                .and_then(|()| cx.runtime.app_session(&app_id))
                .map(|session| ServerMessage::AppSetContextResponse {
                    request_id: cx.id(),
                    app_id,
                    tools: session.tools,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        cx.reply(
            cx.runtime
                .set_app_control_mode(&self.app_id, self.control_mode)
                .map(|()| ServerMessage::AppSetControlModeResponse {
                    request_id: cx.id(),
                    app_id: self.app_id,
                    control_mode: self.control_mode,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let app_id = self.app_id;
        cx.reply(
            cx.runtime
                .emit_app_event(&app_id, &self.name, self.payload)
                .map(|event| ServerMessage::AppEventResponse {
                    request_id: cx.id(),
                    app_id,
                    text: event.text,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let outcome = ActionOutcome {
            result: self.result,
            state: self.state,
            error: self.error,
            actions: self.actions,
            events: Vec::new(),
        };
        cx.reply(
            cx.runtime
                .complete_app_action(&self.app_id, self.action_id, outcome)
                .map(|()| ServerMessage::AppActionResultResponse {
                    request_id: cx.id(),
                    app_id: self.app_id,
                    action_id: self.action_id,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::HumanAction {
            app_id: self.app_id,
            name: self.name,
            params: self.params,
        }
    }
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
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        Some(&self.app_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        cx.reply(
            cx.runtime
                .app_human_says(&self.app_id, &self.text)
                .map(|()| ServerMessage::AppHumanSaysResponse {
                    request_id: cx.id(),
                    app_id: self.app_id,
                }),
        )
    }
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
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Handled {
        cx.reply(cx.runtime.app_session(&self.app_id).map(|mut session| {
            let left = session.fit(pages::MAX_PAGE_BYTES);
            ServerMessage::GetAppSessionResponse {
                request_id: cx.id(),
                session: Box::new(session),
                history_left_out: left.history,
                events_left_out: left.events,
                chat_left_out: left.chat,
                state_left_out: left.state,
            }
        }))
    }
}
