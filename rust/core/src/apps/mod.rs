//! The app bridge (`docs/apps.md`): a game — an "app" — exposes its state and
//! actions, the agent attached to it plays through them, and a human can share the controls.
//!
//! # Design
//!
//! - **An app** ([`AppConfig`]) has an id, a mode (`static` | `dynamic`), a role prompt, a
//!   state (any JSON), actions ([`ActionDef`]: `name`, `description`, `params` as a JSON Schema
//!   or a shorthand, `humanOnly`, `agentOnly`), a control mode (`agent` | `human` |
//!   `copilot`), a `human_label`, and at most one attached agent (an agent is attached to at
//!   most one app).
//! - **Actions are tools.** The app's actions make one [`ToolRegistry`](crate::tools::ToolRegistry)
//!   (schemas compiled once per change); the attached agent is offered the subset it may use
//!   now — none in `human` control mode, never a `humanOnly` one — as its tool set
//!   [`APP_TOOLS`], next to its world tools (an app may hide those: `world_tools: false`). The
//!   agent's calls go through the runtime's one decision check; the app's [guard](crate::tools::ToolGuard)
//!   answers with the routing's fixed texts.
//! - **Routing**, first failure wins ([`Refused`]): an action that is not in the current list
//!   → "Action not available"; the other side in control → "Human is in control" (an agent in
//!   `human` mode) / "Agent is in control" (a human in `agent` mode); `humanOnly` for the agent,
//!   `agentOnly` for the human → refused; arguments against the schema → `invalid_args` naming
//!   the field. Otherwise the action goes to the app's handler ([`AppHandler`]): a Rust
//!   function, or out to whoever registered the app (the Godot node, a WebSocket connection) as
//!   an [`AppOutbound::Action`] answered with [`ActionOutcome`] by `complete_action` within the
//!   app's `action_timeout_seconds` (30 by default). The result, and the new state if the
//!   handler gives one, go into the session.
//! - **State delivery.** Static mode: after an action is processed with a new state (by the
//!   agent or the human), the agent is woken to decide its next action from it. Dynamic mode:
//!   `set_context` replaces the state, the actions and the label whenever the game likes, and
//!   wakes the agent; its tools change with its next decision.
//! - **Events** become the system message `Event: <name> — <payload>` ([`text::event_message`])
//!   in the agent's context, and wake it.
//! - **The session** ([`AppSession`]): role prompt, state, actions, control mode, the last N
//!   actions (default 10; the agent's and the human's, with params, results and who did them),
//!   events, and the chat (agent, human and system lines; a changed `humanLabel` adds `🎮
//!   <label>` once). It is kept in SQLite (`app_sessions`, `app_log`, the newest
//!   [`MAX_APP_LOG_ROWS`](crate::limits::MAX_APP_LOG_ROWS) rows of each kind) and read back when
//!   an app of the same id registers again. A reply cuts it to fit ([`session_fit`]).

pub mod action;
pub mod games;
mod hub;
pub mod sample;
pub mod schema_bounds;
mod section;
pub mod session_fit;
pub mod text;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use action::ActionDef;
pub use hub::{AppEntry, AppHub};

use crate::contract::FailureReason;

/// The name of the tool set an attached agent gets its app's actions in.
pub const APP_TOOLS: &str = "app";

/// Default `history`: how many actions (and events) the session keeps for the agent's context.
pub const DEFAULT_HISTORY: usize = 10;

/// Default `action_timeout_seconds`.
pub const DEFAULT_ACTION_TIMEOUT_SECONDS: f64 = 30.0;

/// How many chat lines a session keeps.
pub const CHAT_LINES: usize = 100;

crate::wire_enum! {
    /// When the agent gets the app's state.
    #[derive(Default)]
    pub enum AppMode: "app mode" {
        /// After each processed action (turn-based play).
        #[default]
        Static = "static",
        /// Whenever the app calls `set_context`.
        Dynamic = "dynamic",
    }
}

crate::wire_enum! {
    /// Who may act.
    #[derive(Default)]
    pub enum ControlMode: "control mode" {
        /// Only the agent's actions are forwarded.
        #[default]
        Agent = "agent",
        /// Only the human's actions are forwarded ("Human is in control").
        Human = "human",
        /// Both, respecting `humanOnly` / `agentOnly`.
        Copilot = "copilot",
    }
}

crate::wire_enum! {
    /// Who triggered an action (`by`).
    #[derive(Default)]
    pub enum Actor: "actor" {
        /// The attached agent.
        #[default]
        Agent = "agent",
        /// The human at the controls.
        Human = "human",
    }
}

crate::wire_enum! {
    /// Who wrote a chat line.
    #[derive(Default)]
    pub enum ChatRole: "chat role" {
        /// The attached agent.
        #[default]
        Agent = "agent",
        /// The human.
        Human = "human",
        /// The app or the platform (a changed label, an event, an attach).
        System = "system",
    }
}

fn default_true() -> bool {
    true
}

fn default_history() -> usize {
    DEFAULT_HISTORY
}

fn default_timeout() -> f64 {
    DEFAULT_ACTION_TIMEOUT_SECONDS
}

/// An app as it registers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    /// Its id, unique in the runtime.
    pub app_id: String,
    /// `static` (default) or `dynamic`.
    #[serde(default)]
    pub mode: AppMode,
    /// What the agent is told about its part in the app.
    #[serde(default)]
    pub role_prompt: String,
    /// The app's state (any JSON; `null`: none yet).
    #[serde(default)]
    pub state: Value,
    /// The actions it offers now.
    #[serde(default)]
    pub actions: Vec<ActionDef>,
    /// `agent` (default), `human` or `copilot`.
    #[serde(default)]
    pub control_mode: ControlMode,
    /// A short text for the chat about what is happening (`⚔️ Combat: Lv.15 Goblin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_label: Option<String>,
    /// Whether the attached agent keeps its world tools (`move`, `speak`, …) next to the app's
    /// actions (default true).
    #[serde(default = "default_true")]
    pub world_tools: bool,
    /// How many actions and events the agent's context holds (1 to 100, default 10).
    #[serde(default = "default_history")]
    pub history: usize,
    /// Seconds the app has to answer an action before it fails back to the agent (default 30).
    #[serde(default = "default_timeout")]
    pub action_timeout_seconds: f64,
    /// A built-in game app ([`games`]): the game tools are its state, actions and handler (the
    /// handler given at registration is not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<games::GameSetup>,
}

impl AppConfig {
    /// A static app in `agent` control mode with no actions yet.
    pub fn new(app_id: impl Into<String>) -> Self {
        AppConfig {
            app_id: app_id.into(),
            mode: AppMode::Static,
            role_prompt: String::new(),
            state: Value::Null,
            actions: Vec::new(),
            control_mode: ControlMode::Agent,
            human_label: None,
            world_tools: true,
            history: DEFAULT_HISTORY,
            action_timeout_seconds: DEFAULT_ACTION_TIMEOUT_SECONDS,
            game: None,
        }
    }

    /// Checks everything but the actions (see [`action::normalize_all`]); errors name the
    /// field.
    pub fn validate(&self) -> Result<(), String> {
        use crate::limits::*;
        if self.app_id.trim().is_empty() {
            return Err("app_id must not be empty".into());
        }
        check_chars("app_id", &self.app_id, MAX_APP_ID_CHARS)?;
        check_chars("role_prompt", &self.role_prompt, MAX_PROMPT_CHARS)?;
        check_json_bytes("state", &self.state, MAX_APP_STATE_BYTES)?;
        if let Some(label) = &self.human_label {
            check_chars("human_label", label, MAX_HUMAN_LABEL_CHARS)?;
        }
        if !(1..=100).contains(&self.history) {
            return Err(format!(
                "history must be between 1 and 100, got {}",
                self.history
            ));
        }
        let t = self.action_timeout_seconds;
        if !(t.is_finite() && t > 0.0 && t <= 3600.0) {
            return Err(format!(
                "action_timeout_seconds must be more than 0 and at most 3600, got {t}"
            ));
        }
        Ok(())
    }
}

/// What `set_context` changes (each field only when given).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppContext {
    /// The new state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// The new actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<ActionDef>>,
    /// The new label (a change adds `🎮 <label>` to the chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_label: Option<String>,
}

/// One processed (or refused) action, as the session keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionRecord {
    /// The action's id in its app (1, 2, …).
    pub action_id: u64,
    /// The action.
    pub name: String,
    /// Its arguments.
    pub params: Value,
    /// Who triggered it.
    pub by: Actor,
    /// True when the app handled it.
    pub ok: bool,
    /// What the app answered (`null` when it gave nothing).
    pub result: Value,
    /// Why it failed: the app's error, a timeout, a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// When (UTC, ISO 8601).
    pub at: String,
}

/// An event the app emitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventRecord {
    /// Its name (`roundEnded`).
    pub name: String,
    /// Its payload.
    pub payload: Value,
    /// The system message the agent got (`Event: roundEnded — { winner: X }`).
    pub text: String,
    /// When (UTC, ISO 8601).
    pub at: String,
}

/// One line of the session's chat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChatLine {
    /// Who wrote it.
    pub role: ChatRole,
    /// The text.
    pub text: String,
    /// When (UTC, ISO 8601).
    pub at: String,
}

/// An action going to the app's handler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionRequest {
    /// The app.
    pub app_id: String,
    /// The action's id, to answer with.
    pub action_id: u64,
    /// The action.
    pub name: String,
    /// Its arguments (valid against its schema).
    pub params: Value,
    /// Who triggered it.
    pub by: Actor,
}

/// How the app answered an action.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionOutcome {
    /// What happened, for the agent (any JSON).
    #[serde(default)]
    pub result: Value,
    /// The app's new state, when the action changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// Set when the app refused or failed the action (the agent is told).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The app's actions from now on, when the action changed them (whose turn it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<ActionDef>>,
    /// Events the action caused (`game_over`), sent to the agent after its result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<(String, Value)>,
}

impl ActionOutcome {
    /// A handled action with its result.
    pub fn ok(result: Value) -> Self {
        ActionOutcome {
            result,
            ..ActionOutcome::default()
        }
    }

    /// A failed action.
    pub fn failed(error: impl Into<String>) -> Self {
        ActionOutcome {
            error: Some(error.into()),
            ..ActionOutcome::default()
        }
    }

    /// The same outcome with the app's new state.
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }

    /// The same outcome with the app's actions from now on.
    pub fn with_actions(mut self, actions: Vec<ActionDef>) -> Self {
        self.actions = Some(actions);
        self
    }

    /// The same outcome with an event the action caused.
    pub fn with_event(mut self, name: impl Into<String>, payload: Value) -> Self {
        self.events.push((name.into(), payload));
        self
    }
}

/// What goes out to whoever registered an app (the Godot `AgentApp` node, a WebSocket
/// connection), in the order it happened: actions to handle, what went into the session (action
/// records, events, chat lines), the agent coming and leaving. A front end that shows the
/// session follows it from these alone, with no reading of the session in between.
#[derive(Clone, Debug, PartialEq)]
pub enum AppOutbound {
    /// Handle this action and answer with `complete_action` (remote handlers).
    Action(ActionRequest),
    /// An action went into the session's history: handled, failed, timed out, or refused when
    /// the agent called it (read-only actions are not recorded, and not sent).
    Recorded(ActionRecord),
    /// An event was sent to the agent.
    Event(EventRecord),
    /// A line was added to the chat.
    Chat(ChatLine),
    /// An agent was attached to the app.
    Attached {
        /// The agent.
        agent_id: String,
    },
    /// The attached agent left the app (detached, terminated).
    Detached {
        /// The agent.
        agent_id: String,
        /// Why (`detached`, `terminated`, `unregistered`).
        reason: String,
    },
}

/// A Rust function answering an app's actions.
pub type LocalHandler = Arc<
    dyn Fn(
            ActionRequest,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ActionOutcome> + Send>>
        + Send
        + Sync,
>;

/// Who answers an app's actions.
#[derive(Clone)]
pub enum AppHandler {
    /// Whoever registered the app: actions go out as [`AppOutbound::Action`] and come back
    /// through `complete_action`.
    Remote,
    /// A Rust function.
    Local(LocalHandler),
}

impl AppHandler {
    /// A handler from an async function.
    pub fn local<F, Fut>(f: F) -> Self
    where
        F: Fn(ActionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ActionOutcome> + Send + 'static,
    {
        AppHandler::Local(Arc::new(move |request| Box::pin(f(request))))
    }
}

impl fmt::Debug for AppHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AppHandler::Remote => "Remote",
            AppHandler::Local(_) => "Local",
        })
    }
}

/// One registration of an app. The same id registered again, after an unregister, is another
/// registration: a front end keeps the one it got
/// ([`Runtime::register_owned_app`](crate::runtime::Runtime::register_owned_app)) to act on
/// the app it registered, and on no later app of the same id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Registration(u64);

/// Why an action was not forwarded to the app (first failure wins, in this order).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Not in the current action list.
    #[error(
        "Action not available: '{action}' is not one of the app's actions now (available: {available})"
    )]
    NotAvailable {
        /// The action asked for.
        action: String,
        /// The current actions, comma-separated.
        available: String,
    },
    /// The agent acted while the human is in control.
    #[error("Human is in control")]
    HumanInControl,
    /// The human acted while the agent is in control.
    #[error("Agent is in control")]
    AgentInControl,
    /// The agent asked for a `humanOnly` action.
    #[error("Action '{0}' is humanOnly: only the human can trigger it")]
    HumanOnly(String),
    /// The human asked for an `agentOnly` action.
    #[error("Action '{0}' is agentOnly: only the agent can trigger it")]
    AgentOnly(String),
    /// The arguments break the action's schema.
    #[error("Invalid arguments for {action}: {field}: {message}")]
    InvalidArgs {
        /// The action.
        action: String,
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
}

impl Refused {
    /// The contract's reason an agent is refused with.
    pub fn reason(&self) -> FailureReason {
        match self {
            Refused::NotAvailable { .. } | Refused::AgentInControl | Refused::AgentOnly(_) => {
                FailureReason::ToolNotAllowed
            }
            Refused::HumanInControl => FailureReason::HumanInControl,
            Refused::HumanOnly(_) => FailureReason::HumanOnly,
            Refused::InvalidArgs { .. } => FailureReason::InvalidArgs,
        }
    }

    /// As a guard's refusal.
    pub fn to_refusal(&self) -> crate::tools::Refusal {
        crate::tools::Refusal {
            reason: self.reason(),
            message: self.to_string(),
        }
    }
}

/// Why an app call failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AppError {
    /// No app with this id.
    #[error("unknown app '{0}'")]
    UnknownApp(String),
    /// An app with this id is registered already.
    #[error("an app with id '{0}' is registered already")]
    Duplicate(String),
    /// The config, context or event is invalid (the message names the field).
    #[error("{0}")]
    Invalid(String),
    /// The action was refused.
    #[error("{0}")]
    Refused(Refused),
    /// No action with this id is waiting for an answer.
    #[error("app '{app_id}' has no action {action_id} waiting for an answer")]
    UnknownAction {
        /// The app.
        app_id: String,
        /// The id given.
        action_id: u64,
    },
    /// The app (or the agent) is attached elsewhere.
    #[error("{0}")]
    Attached(String),
    /// The app has no agent attached.
    #[error("app '{0}' has no agent attached")]
    NoAgent(String),
}

/// What an agent sees of its app when it decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppView {
    /// The app.
    pub app_id: String,
    /// `static` or `dynamic`.
    pub mode: AppMode,
    /// Who may act now.
    pub control_mode: ControlMode,
    /// The agent's part in the app.
    pub role_prompt: String,
    /// The current state.
    pub state: Value,
    /// The app's label, if it set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_label: Option<String>,
    /// The actions the agent may call now (its app tools).
    pub actions: Vec<String>,
    /// Those of them that are due ([`ActionDef::due`]): the agent's answer must call one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub due: Vec<String>,
    /// The last actions, oldest first (the agent's and the human's).
    pub history: Vec<ActionRecord>,
    /// The last events' system messages, oldest first.
    pub events: Vec<String>,
}

/// Everything about an app session (`get_app_session`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppSession {
    /// The app.
    pub app_id: String,
    /// `static` or `dynamic`.
    pub mode: AppMode,
    /// Who may act now.
    pub control_mode: ControlMode,
    /// The agent's part.
    pub role_prompt: String,
    /// The current state.
    pub state: Value,
    /// The label, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub human_label: Option<String>,
    /// The attached agent, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The actions, their `params` as JSON Schemas.
    pub actions: Vec<ActionDef>,
    /// The tool definitions the agent is offered now (`name`, `description`, `parameters`).
    pub tools: Vec<Value>,
    /// The last actions, oldest first.
    pub history: Vec<ActionRecord>,
    /// The last events, oldest first.
    pub events: Vec<EventRecord>,
    /// The chat, oldest first.
    pub chat: Vec<ChatLine>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print() {
        for m in ControlMode::ALL {
            assert_eq!(m.as_str().parse::<ControlMode>(), Ok(m));
        }
        assert_eq!(
            "pilot".parse::<ControlMode>().unwrap_err().to_string(),
            "unknown control mode 'pilot' (use agent, human, copilot)"
        );
        assert_eq!("dynamic".parse::<AppMode>(), Ok(AppMode::Dynamic));
        assert_eq!(serde_json::to_value(Actor::Human).unwrap(), "human");
    }

    #[test]
    fn configs_are_checked_naming_the_field() {
        let mut config = AppConfig::new("board");
        assert_eq!(config.validate(), Ok(()));
        config.history = 0;
        assert!(config.validate().unwrap_err().starts_with("history"));
        config.history = 10;
        config.action_timeout_seconds = f64::INFINITY;
        assert!(
            config
                .validate()
                .unwrap_err()
                .starts_with("action_timeout_seconds")
        );
        let e =
            serde_json::from_value::<AppConfig>(serde_json::json!({"app_id": "a", "mdoe": "x"}))
                .unwrap_err()
                .to_string();
        assert!(e.contains("unknown field `mdoe`"), "{e}");
        assert!(
            AppConfig::new(" ")
                .validate()
                .unwrap_err()
                .starts_with("app_id")
        );
    }

    #[test]
    fn refusals_say_the_spec_texts() {
        assert_eq!(Refused::HumanInControl.to_string(), "Human is in control");
        let not = Refused::NotAvailable {
            action: "fly".into(),
            available: "place".into(),
        };
        assert!(not.to_string().starts_with("Action not available"));
        assert_eq!(not.reason(), FailureReason::ToolNotAllowed);
        assert_eq!(
            Refused::HumanOnly("flee".into()).reason(),
            FailureReason::HumanOnly
        );
    }
}
