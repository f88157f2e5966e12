//! The runtime's side of the app bridge ([`crate::apps`]): registering apps, attaching agents,
//! and keeping an attached agent's tools in step with its app.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use super::{Runtime, RuntimeError, WORLD_TOOLS};
use crate::apps::{
    ActionOutcome, ActionRecord, AppConfig, AppContext, AppEntry, AppError, AppHandler,
    AppOutbound, AppSession, ChatRole, ControlMode, EventRecord, Registration,
};
use crate::memory::MemoryKind;
use crate::mind::forming;

/// Who tells an agent that its app closed.
pub const APP_SYSTEM_SENDER: &str = "system";

impl Runtime {
    /// Registers an app ([`AppConfig`]); `handler` answers its actions. Returns what goes out
    /// to the app's front end: actions for a [`AppHandler::Remote`] handler to answer with
    /// [`Runtime::complete_app_action`], chat lines, the agent leaving. A session stored under
    /// the same id is read back (history, events, chat; the state when the config has none).
    ///
    /// Errors: `app_exists`; `invalid_config` naming the field (a bad `params`, a state over
    /// its limit).
    pub fn register_app(
        &self,
        config: AppConfig,
        handler: AppHandler,
    ) -> Result<mpsc::UnboundedReceiver<AppOutbound>, RuntimeError> {
        Ok(self.register_owned_app(config, handler)?.1)
    }

    /// [`Runtime::register_app`] for a front end that acts on the app it registered only, never
    /// on a later app of the same id (a WebSocket connection): also returns the
    /// [`Registration`], to compare with [`Runtime::app_registration`] and to unregister with
    /// [`Runtime::unregister_app_registration`].
    pub fn register_owned_app(
        &self,
        config: AppConfig,
        handler: AppHandler,
    ) -> Result<(Registration, mpsc::UnboundedReceiver<AppOutbound>), RuntimeError> {
        self.check_open()?;
        let (app, outbound) = self.inner.apps.register(config, handler)?;
        Ok((app.registration(), outbound))
    }

    /// The registration of the app registered under `app_id` now; `None` when there is none.
    pub fn app_registration(&self, app_id: &str) -> Option<Registration> {
        self.inner
            .apps
            .get(app_id)
            .ok()
            .map(|app| app.registration())
    }

    /// Removes an app (its session stays stored). Its agent is detached, keeps running, and
    /// is told by a line from `system`: "The app '<id>' closed; you are no longer playing it."
    pub fn unregister_app(&self, app_id: &str) -> Result<(), RuntimeError> {
        self.remove_app(self.inner.apps.get(app_id)?)
    }

    /// [`Runtime::unregister_app`] of that registration only: `unknown_app` when the app
    /// registered under `app_id` now is another one (registered since), which stays.
    pub fn unregister_app_registration(
        &self,
        app_id: &str,
        registration: Registration,
    ) -> Result<(), RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        if app.registration() != registration {
            return Err(AppError::UnknownApp(app_id.to_string()).into());
        }
        self.remove_app(app)
    }

    fn remove_app(&self, app: Arc<AppEntry>) -> Result<(), RuntimeError> {
        let app_id = app.id();
        // The agent leaves first: once the app is gone, it plays nothing.
        if let Some(agent_id) = app.detach("unregistered")
            && let Ok(shared) = self.running(&agent_id)
        {
            shared.set_app(None, &self.world_tools())?;
            self.send_message_from(
                APP_SYSTEM_SENDER,
                &agent_id,
                &format!("The app '{app_id}' closed; you are no longer playing it."),
            )?;
        }
        self.inner.apps.unregister(&app)?;
        Ok(())
    }

    /// Attaches a running agent to an app: it gets the app's actions as tools (and loses its
    /// world tools if the app hides them), sees the app in its context, and decides at once.
    /// An agent plays one app at a time, an app has one agent.
    ///
    /// Errors: `unknown_app`, `unknown_agent`, `app_attached`.
    pub fn attach_app(&self, app_id: &str, agent_id: &str) -> Result<(), RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        let shared = self.running(agent_id)?;
        if let Some(current) = shared.app()
            && current.id() != app_id
        {
            return Err(AppError::Attached(format!(
                "{agent_id} plays app '{}' already: detach it first",
                current.id()
            ))
            .into());
        }
        app.attach(agent_id, shared.app_wake.clone())?;
        if let Err(e) = shared.set_app(Some(app.clone()), &self.world_tools()) {
            app.detach("detached");
            return Err(e.into());
        }
        app.say(
            ChatRole::System,
            format!("{} joined", self.display_name(agent_id)),
        );
        // Its tools are in place: it decides now.
        shared.app_wake.notify_one();
        Ok(())
    }

    /// Detaches an app's agent (it keeps running, with its world tools back). Returns its id.
    pub fn detach_app(&self, app_id: &str) -> Result<String, RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        let agent_id = app
            .detach("detached")
            .ok_or_else(|| AppError::NoAgent(app_id.to_string()))?;
        if let Ok(shared) = self.running(&agent_id) {
            shared.set_app(None, &self.world_tools())?;
        }
        Ok(agent_id)
    }

    /// Replaces an app's state, actions and label (dynamic mode's `set_context`; any mode may
    /// call it). The agent's tools change with its next decision, and it is woken.
    pub fn set_app_context(&self, app_id: &str, context: AppContext) -> Result<(), RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        app.set_context(context)?;
        app.wake();
        Ok(())
    }

    /// Changes who may act in an app (`agent`, `human`, `copilot`).
    pub fn set_app_control_mode(
        &self,
        app_id: &str,
        mode: ControlMode,
    ) -> Result<(), RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        if app.set_control_mode(mode) {
            app.say(ChatRole::System, format!("Control: {mode}"));
            app.wake();
        }
        Ok(())
    }

    /// Sends an event to the app's agent as `Event: <name> — <payload>`, and wakes it.
    pub fn emit_app_event(
        &self,
        app_id: &str,
        name: &str,
        payload: Value,
    ) -> Result<EventRecord, RuntimeError> {
        Ok(self.inner.apps.get(app_id)?.emit_event(name, payload)?)
    }

    /// The human triggers an action: refused in `agent` control mode ("Agent is in control")
    /// and for `agentOnly` actions, checked against the schema, then handled like the agent's.
    /// Returns the action's record once the app answered.
    pub async fn app_human_action(
        &self,
        app_id: &str,
        name: &str,
        params: Value,
    ) -> Result<ActionRecord, RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        let record = app.human_action(name, params).await?;
        if let Some(agent) = app.agent_id() {
            let done = forming::human_action(
                &record.name,
                &record.params.to_string(),
                record.error.as_deref(),
            );
            let text = forming::in_app(app_id, &done);
            self.inner.form_for(
                &agent,
                MemoryKind::Event,
                text,
                Some(&self.inner.options.player_id),
            );
        }
        Ok(record)
    }

    /// Answers an action sent to the app's front end.
    pub fn complete_app_action(
        &self,
        app_id: &str,
        action_id: u64,
        outcome: ActionOutcome,
    ) -> Result<(), RuntimeError> {
        Ok(self
            .inner
            .apps
            .get(app_id)?
            .complete_action(action_id, outcome)?)
    }

    /// The human says something in the app's chat: a human line, and a message to the agent
    /// (from the player).
    pub fn app_human_says(&self, app_id: &str, text: &str) -> Result<(), RuntimeError> {
        let app = self.inner.apps.get(app_id)?;
        crate::limits::check_chars("text", text, crate::limits::MAX_MESSAGE_CHARS)
            .map_err(RuntimeError::InvalidMessage)?;
        if text.trim().is_empty() {
            return Err(RuntimeError::InvalidMessage(
                "text must not be empty".into(),
            ));
        }
        app.say(ChatRole::Human, text.to_string());
        if let Some(agent_id) = app.agent_id() {
            self.send_message(&agent_id, text)?;
        }
        Ok(())
    }

    /// An app's whole session: state, actions, control mode, the agent's tools now, history,
    /// events, chat.
    pub fn app_session(&self, app_id: &str) -> Result<AppSession, RuntimeError> {
        Ok(self.inner.apps.get(app_id)?.session())
    }

    /// The registered apps' ids, sorted.
    pub fn app_ids(&self) -> Vec<String> {
        self.inner.apps.ids()
    }

    /// The app an agent plays, if any.
    pub fn agent_app(&self, agent_id: &str) -> Result<Option<String>, RuntimeError> {
        Ok(self.running(agent_id)?.app().map(|a| a.id().to_string()))
    }

    fn world_tools(&self) -> Arc<crate::tools::ToolRegistry> {
        self.inner
            .tool_sets
            .read()
            .get(WORLD_TOOLS)
            .expect("the world tool set is built in")
    }

    fn display_name(&self, agent_id: &str) -> String {
        self.inner.display_name(agent_id)
    }
}
