//! The runtime's apps: registration, routing, handlers, the session, and the attached agent's
//! tools and wake-ups.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{
    ActionDef, ActionOutcome, ActionRecord, ActionRequest, Actor, AppConfig, AppContext, AppError,
    AppHandler, AppMode, AppOutbound, AppSession, AppView, CHAT_LINES, ChatLine, ChatRole,
    ControlMode, EventRecord, Refused, Registration, text,
};
use crate::error_code::ErrorCode;
use crate::memory::{AppLogKind, AppRow, Memory};
use crate::tools::{Refusal, ToolContext, ToolGuard, ToolOutput, ToolRegistry, ToolSpec};

/// Every app of a runtime, by id.
pub struct AppHub {
    apps: RwLock<HashMap<String, Arc<AppEntry>>>,
    memory: Memory,
    /// The last registration handed out.
    registrations: AtomicU64,
}

impl AppHub {
    /// No apps yet; sessions are kept in `memory`.
    pub fn new(memory: Memory) -> Self {
        AppHub {
            apps: RwLock::new(HashMap::new()),
            memory,
            registrations: AtomicU64::new(0),
        }
    }

    /// Registers an app (a game app when `config.game` is set: its handler is the game's). A
    /// session stored under the same id (an earlier run) is read back: its history, events and
    /// chat, and its state when `config.state` is `null`. Returns the
    /// app and the receiver of what goes out to its front end ([`AppOutbound`]).
    pub fn register(
        &self,
        mut config: AppConfig,
        handler: AppHandler,
    ) -> Result<(Arc<AppEntry>, mpsc::UnboundedReceiver<AppOutbound>), AppError> {
        config.validate().map_err(AppError::Invalid)?;
        let (config, handler) = match config.game.take() {
            Some(game) => super::games::setup(config, game).map_err(AppError::Invalid)?,
            None => (config, handler),
        };
        let actions = super::action::normalize_all(&config.actions).map_err(AppError::Invalid)?;
        let mut apps = self.apps.write();
        if apps.contains_key(&config.app_id) {
            return Err(AppError::Duplicate(config.app_id));
        }
        let stored = self
            .memory
            .load_app(&config.app_id, CHAT_LINES)
            .map_err(|e| AppError::Invalid(format!("reading the stored session: {e}")))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let entry = Arc::new_cyclic(|weak: &Weak<AppEntry>| {
            let mut state = config.state.clone();
            let mut history = VecDeque::new();
            let mut events = VecDeque::new();
            let mut chat = VecDeque::new();
            let mut last_action = 0;
            let mut human_label = config.human_label.clone();
            if let Some(stored) = stored {
                // Entries this version cannot read (written by a newer one) are skipped.
                fn records<T: serde::de::DeserializeOwned>(values: Vec<Value>) -> Vec<T> {
                    values
                        .into_iter()
                        .filter_map(|v| serde_json::from_value(v).ok())
                        .collect()
                }
                let actions: Vec<ActionRecord> = records(stored.actions);
                if state.is_null() {
                    state = stored.state;
                }
                if human_label.is_none() {
                    human_label = stored.human_label;
                }
                last_action = actions.iter().map(|a| a.action_id).max().unwrap_or(0);
                let keep = |n: usize| n.saturating_sub(config.history);
                history = actions.into_iter().collect();
                history.drain(..keep(history.len()));
                events = records::<EventRecord>(stored.events).into_iter().collect();
                events.drain(..keep(events.len()));
                chat = records::<ChatLine>(stored.chat).into_iter().collect();
            }
            let (registry, offered) = tools_for(weak, &actions, config.control_mode);
            AppEntry {
                id: config.app_id.clone(),
                registration: Registration(self.registrations.fetch_add(1, Ordering::Relaxed) + 1),
                handler,
                outbound: tx,
                memory: self.memory.clone(),
                pending: Mutex::new(HashMap::new()),
                next_action: AtomicU64::new(last_action),
                removed: AtomicBool::new(false),
                inner: Mutex::new(Inner {
                    me: weak.clone(),
                    mode: config.mode,
                    control_mode: config.control_mode,
                    role_prompt: config.role_prompt.clone(),
                    state,
                    human_label,
                    world_tools: config.world_tools,
                    history_len: config.history,
                    timeout: Duration::from_secs_f64(config.action_timeout_seconds),
                    actions,
                    registry,
                    offered,
                    agent: None,
                    history,
                    emitted: events.len() as u64,
                    events,
                    chat,
                }),
            }
        });
        entry.save();
        apps.insert(config.app_id, entry.clone());
        Ok((entry, rx))
    }

    /// The app with this id.
    pub fn get(&self, app_id: &str) -> Result<Arc<AppEntry>, AppError> {
        self.apps
            .read()
            .get(app_id)
            .cloned()
            .ok_or_else(|| AppError::UnknownApp(app_id.to_string()))
    }

    /// Removes `entry` (the runtime detached its agent first): its waiting actions fail, its
    /// session stays stored. `unknown_app` when it is not registered any more (an app of the
    /// same id registered since stays).
    pub fn unregister(&self, entry: &Arc<AppEntry>) -> Result<(), AppError> {
        {
            let mut apps = self.apps.write();
            match apps.get(&entry.id) {
                Some(current) if Arc::ptr_eq(current, entry) => apps.remove(&entry.id),
                _ => return Err(AppError::UnknownApp(entry.id.clone())),
            };
        }
        entry.removed.store(true, Ordering::SeqCst);
        entry.pending.lock().clear();
        Ok(())
    }

    /// The registered ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.apps.read().keys().cloned().collect();
        ids.sort();
        ids
    }
}

/// The agent attached to an app, and how to wake it.
struct Attached {
    agent_id: String,
    wake: Arc<Notify>,
}

struct Inner {
    /// The app itself (its tools' handlers and guard hold it weakly too).
    me: Weak<AppEntry>,
    mode: AppMode,
    control_mode: ControlMode,
    role_prompt: String,
    state: Value,
    human_label: Option<String>,
    world_tools: bool,
    history_len: usize,
    timeout: Duration,
    actions: Vec<ActionDef>,
    /// Every action as a tool (schemas compiled once per change), guarded by the app.
    registry: Arc<ToolRegistry>,
    /// The tools the agent may call now.
    offered: Arc<ToolRegistry>,
    agent: Option<Attached>,
    history: VecDeque<ActionRecord>,
    events: VecDeque<EventRecord>,
    /// Events emitted so far: the last of `events` is number `emitted`.
    emitted: u64,
    chat: VecDeque<ChatLine>,
}

impl Inner {
    /// Whether `by` may trigger `name` now: availability, control mode, flags, checked in that
    /// order.
    fn permit(&self, by: Actor, name: &str) -> Result<&ActionDef, Refused> {
        let action = self
            .actions
            .iter()
            .find(|a| a.name == name)
            .ok_or_else(|| Refused::NotAvailable {
                action: name.to_string(),
                available: self.action_names(),
            })?;
        match (by, self.control_mode) {
            (Actor::Agent, ControlMode::Human) => return Err(Refused::HumanInControl),
            (Actor::Human, ControlMode::Agent) => return Err(Refused::AgentInControl),
            _ => {}
        }
        match by {
            Actor::Agent if action.human_only => Err(Refused::HumanOnly(name.to_string())),
            Actor::Human if action.agent_only => Err(Refused::AgentOnly(name.to_string())),
            _ => Ok(action),
        }
    }

    /// [`Inner::permit`], then the arguments against the action's schema.
    fn route(&self, by: Actor, name: &str, params: &Value) -> Result<(), Refused> {
        self.permit(by, name)?;
        if let Some(tool) = self.registry.get(name)
            && let Err(e) = tool.validate(params)
        {
            let (field, message) = match e {
                crate::tools::ToolError::InvalidArguments { field, message, .. } => {
                    (field, message)
                }
                other => ("(arguments)".to_string(), other.to_string()),
            };
            return Err(Refused::InvalidArgs {
                action: name.to_string(),
                field,
                message,
            });
        }
        Ok(())
    }

    fn action_names(&self) -> String {
        let names: Vec<&str> = self.actions.iter().map(|a| a.name.as_str()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    fn wake_agent(&self) {
        if let Some(agent) = &self.agent {
            agent.wake.notify_one();
        }
    }

    fn push_capped<T>(list: &mut VecDeque<T>, item: T, cap: usize) {
        list.push_back(item);
        while list.len() > cap {
            list.pop_front();
        }
    }
}

/// One registered app.
pub struct AppEntry {
    id: String,
    registration: Registration,
    handler: AppHandler,
    outbound: mpsc::UnboundedSender<AppOutbound>,
    memory: Memory,
    /// Actions sent out to a remote handler, waiting for `complete_action`.
    pending: Mutex<HashMap<u64, oneshot::Sender<ActionOutcome>>>,
    next_action: AtomicU64,
    removed: AtomicBool,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for AppEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppEntry")
            .field("id", &self.id)
            .field("handler", &self.handler)
            .finish_non_exhaustive()
    }
}

/// The app's registries: every action (guarded, handled by the app), and the subset the agent
/// may call in `control` mode.
fn tools_for(
    app: &Weak<AppEntry>,
    actions: &[ActionDef],
    control: ControlMode,
) -> (Arc<ToolRegistry>, Arc<ToolRegistry>) {
    let mut registry = ToolRegistry::new();
    for action in actions {
        let mut spec = ToolSpec::new(&action.name, &action.description, action.params.clone());
        if action.read_only {
            spec = spec.read_only();
        }
        let app = app.clone();
        let name = action.name.clone();
        // Normalized params always compile; a failure here would be a bug, and leaves the
        // action out rather than the app.
        let registered = registry.register_async(spec, move |params, ctx: ToolContext| {
            let app = app.upgrade();
            let name = name.clone();
            async move {
                match app {
                    Some(app) => app.agent_call(&name, params, ctx.cancel).await,
                    None => ToolOutput::failed(json!({"error": "the app was unregistered",
                                                      "reason": ErrorCode::AppGone.as_str()})),
                }
            }
        });
        if let Err(e) = registered {
            tracing::error!("app action '{}' left out: {e}", action.name);
        }
    }
    registry.set_guard(Arc::new(AppGuard(app.clone())));
    let offered = registry.subset(|tool| {
        control != ControlMode::Human
            && actions
                .iter()
                .any(|a| a.name == tool.name() && !a.human_only)
    });
    (Arc::new(registry), Arc::new(offered))
}

/// The app's answer to "may this agent call this action now".
struct AppGuard(Weak<AppEntry>);

impl ToolGuard for AppGuard {
    fn permit(&self, tool: &str, _ctx: &ToolContext) -> Result<(), Refusal> {
        let Some(app) = self.0.upgrade() else {
            return Err(Refused::NotAvailable {
                action: tool.to_string(),
                available: "none".into(),
            }
            .to_refusal());
        };
        let inner = app.inner.lock();
        inner
            .permit(Actor::Agent, tool)
            .map(|_| ())
            .map_err(|r| r.to_refusal())
    }

    fn unknown(&self, tool: &str) -> Option<Refusal> {
        let app = self.0.upgrade()?;
        let inner = app.inner.lock();
        Some(match inner.permit(Actor::Agent, tool) {
            Err(refused) => refused.to_refusal(),
            // An action added since the agent's decision started: it sees it next time.
            Ok(_) => Refused::NotAvailable {
                action: tool.to_string(),
                available: inner.action_names(),
            }
            .to_refusal(),
        })
    }
}

impl AppEntry {
    /// The app's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// This registration of the app.
    pub fn registration(&self) -> Registration {
        self.registration
    }

    /// The attached agent, if any.
    pub fn agent_id(&self) -> Option<String> {
        self.inner.lock().agent.as_ref().map(|a| a.agent_id.clone())
    }

    /// The tools the attached agent is offered now (set [`APP_TOOLS`]).
    pub fn offered_tools(&self) -> Arc<ToolRegistry> {
        self.inner.lock().offered.clone()
    }

    /// Whether the attached agent keeps its world tools.
    pub fn keeps_world_tools(&self) -> bool {
        self.inner.lock().world_tools
    }

    /// Attaches `agent_id`, woken through `wake` when the app has something new for it (the
    /// caller wakes it once its tools are in place).
    pub fn attach(&self, agent_id: &str, wake: Arc<Notify>) -> Result<(), AppError> {
        let mut inner = self.inner.lock();
        if let Some(other) = &inner.agent
            && other.agent_id != agent_id
        {
            return Err(AppError::Attached(format!(
                "app '{}' is played by {} already: detach it first",
                self.id, other.agent_id
            )));
        }
        let fresh = inner.agent.is_none();
        inner.agent = Some(Attached {
            agent_id: agent_id.to_string(),
            wake,
        });
        drop(inner);
        self.save();
        if fresh {
            let _ = self.outbound.send(AppOutbound::Attached {
                agent_id: agent_id.to_string(),
            });
        }
        Ok(())
    }

    /// Detaches the agent (if any), telling the front end why. Returns the agent's id.
    pub fn detach(&self, reason: &str) -> Option<String> {
        let agent = self.inner.lock().agent.take()?;
        self.save();
        let _ = self.outbound.send(AppOutbound::Detached {
            agent_id: agent.agent_id.clone(),
            reason: reason.to_string(),
        });
        Some(agent.agent_id)
    }

    /// Replaces what `context` gives; the agent's tools follow at its next decision (wake it
    /// with [`AppEntry::wake`]). A changed label adds `🎮 <label>` to the chat.
    pub fn set_context(self: &Arc<Self>, context: AppContext) -> Result<(), AppError> {
        use crate::limits::*;
        if let Some(state) = &context.state {
            check_json_bytes("state", state, MAX_APP_STATE_BYTES).map_err(AppError::Invalid)?;
        }
        if let Some(label) = &context.human_label {
            check_chars("human_label", label, MAX_HUMAN_LABEL_CHARS).map_err(AppError::Invalid)?;
        }
        let actions = context
            .actions
            .as_deref()
            .map(super::action::normalize_all)
            .transpose()
            .map_err(AppError::Invalid)?;
        let mut inner = self.inner.lock();
        if let Some(state) = context.state {
            inner.state = state;
        }
        if let Some(actions) = actions {
            let (registry, offered) =
                tools_for(&Arc::downgrade(self), &actions, inner.control_mode);
            inner.actions = actions;
            inner.registry = registry;
            inner.offered = offered;
        }
        let new_label = context
            .human_label
            .filter(|label| inner.human_label.as_deref() != Some(label.as_str()));
        if let Some(label) = &new_label {
            inner.human_label = Some(label.clone());
        }
        drop(inner);
        self.save();
        if let Some(label) = new_label {
            self.say(ChatRole::System, text::label_line(&label));
        }
        Ok(())
    }

    /// Changes who may act. Returns true when it changed; the agent's tools follow at its next
    /// decision (wake it with [`AppEntry::wake`]).
    pub fn set_control_mode(self: &Arc<Self>, mode: ControlMode) -> bool {
        let mut inner = self.inner.lock();
        if inner.control_mode == mode {
            return false;
        }
        inner.control_mode = mode;
        let (registry, offered) = tools_for(&Arc::downgrade(self), &inner.actions, mode);
        inner.registry = registry;
        inner.offered = offered;
        drop(inner);
        self.save();
        true
    }

    /// Wakes the attached agent to decide from the app as it is now.
    pub fn wake(&self) {
        self.inner.lock().wake_agent();
    }

    /// Sends an event to the agent (`Event: <name> — <payload>`) and wakes it.
    pub fn emit_event(&self, name: &str, payload: Value) -> Result<EventRecord, AppError> {
        use crate::limits::*;
        if name.trim().is_empty() {
            return Err(AppError::Invalid("name: an event needs a name".into()));
        }
        check_chars("name", name, MAX_EVENT_NAME_CHARS).map_err(AppError::Invalid)?;
        check_json_bytes("payload", &payload, MAX_EVENT_PAYLOAD_BYTES)
            .map_err(AppError::Invalid)?;
        let record = EventRecord {
            name: name.to_string(),
            text: text::event_message(name, &payload),
            payload,
            at: crate::time::now_iso(),
        };
        let mut inner = self.inner.lock();
        let cap = inner.history_len;
        Inner::push_capped(&mut inner.events, record.clone(), cap);
        inner.emitted += 1;
        inner.wake_agent();
        drop(inner);
        self.log(AppLogKind::Event, &record);
        let _ = self.outbound.send(AppOutbound::Event(record.clone()));
        Ok(record)
    }

    /// The events kept (the last `history` ones) numbered above `seen` (events are numbered
    /// from 1 as they are emitted), oldest first, and the number of the last one emitted.
    pub fn events_after(&self, seen: u64) -> (Vec<EventRecord>, u64) {
        let inner = self.inner.lock();
        let first = inner.emitted + 1 - inner.events.len() as u64;
        let skip = usize::try_from(seen.saturating_sub(first - 1)).unwrap_or(usize::MAX);
        let new = inner.events.iter().skip(skip).cloned().collect();
        (new, inner.emitted)
    }

    /// Adds a chat line and sends it to the front end.
    pub fn say(&self, role: ChatRole, text: String) -> ChatLine {
        let line = ChatLine {
            role,
            text,
            at: crate::time::now_iso(),
        };
        Inner::push_capped(&mut self.inner.lock().chat, line.clone(), CHAT_LINES);
        self.log(AppLogKind::Chat, &line);
        let _ = self.outbound.send(AppOutbound::Chat(line.clone()));
        line
    }

    /// The human triggers an action: routed (the human's side of the rules), then handled.
    /// A refusal is an error and is not recorded; a handled (or failed) action is recorded.
    pub async fn human_action(&self, name: &str, params: Value) -> Result<ActionRecord, AppError> {
        let params = if params.is_null() { json!({}) } else { params };
        self.inner
            .lock()
            .route(Actor::Human, name, &params)
            .map_err(AppError::Refused)?;
        self.forward(Actor::Human, name, params, CancellationToken::new())
            .await
            .ok_or_else(|| AppError::Invalid("the action was cancelled".into()))
    }

    /// Answers action `action_id` (sent out as [`AppOutbound::Action`]). A bad answer (a
    /// result or state over its limit, actions that [`super::action::normalize_all`] refuses)
    /// is refused and the action keeps waiting for a good one.
    pub fn complete_action(
        &self,
        action_id: u64,
        mut outcome: ActionOutcome,
    ) -> Result<(), AppError> {
        use crate::limits::*;
        check_json_bytes("result", &outcome.result, MAX_APP_STATE_BYTES)
            .map_err(AppError::Invalid)?;
        if let Some(state) = &outcome.state {
            check_json_bytes("state", state, MAX_APP_STATE_BYTES).map_err(AppError::Invalid)?;
        }
        if let Some(actions) = &outcome.actions {
            outcome.actions =
                Some(super::action::normalize_all(actions).map_err(AppError::Invalid)?);
        }
        let sender =
            self.pending
                .lock()
                .remove(&action_id)
                .ok_or_else(|| AppError::UnknownAction {
                    app_id: self.id.clone(),
                    action_id,
                })?;
        sender.send(outcome).map_err(|_| AppError::UnknownAction {
            app_id: self.id.clone(),
            action_id,
        })
    }

    /// The agent's call of one of its app tools (the registry checked the guard and the
    /// schema): routed again against the app as it is now, then handled.
    async fn agent_call(&self, name: &str, params: Value, cancel: CancellationToken) -> ToolOutput {
        let routed = self.inner.lock().route(Actor::Agent, name, &params);
        if let Err(refused) = routed {
            let record = self.record(
                Actor::Agent,
                name,
                params,
                ActionOutcome::failed(refused.to_string()),
            );
            return output(&record);
        }
        match self.forward(Actor::Agent, name, params, cancel).await {
            Some(record) => output(&record),
            None => ToolOutput::failed(
                json!({"error": "cancelled", "reason": ErrorCode::Cancelled.as_str()}),
            ),
        }
    }

    /// Hands a routed action to the handler and records the outcome. `None` when `cancel`
    /// fired first (nothing recorded; a late answer is refused as unknown).
    async fn forward(
        &self,
        by: Actor,
        name: &str,
        params: Value,
        cancel: CancellationToken,
    ) -> Option<ActionRecord> {
        let action_id = self.next_action.fetch_add(1, Ordering::SeqCst) + 1;
        let request = ActionRequest {
            app_id: self.id.clone(),
            action_id,
            name: name.to_string(),
            params: params.clone(),
            by,
        };
        let timeout = self.inner.lock().timeout;
        let late = || {
            ActionOutcome::failed(format!(
                "the app did not answer within {} s",
                timeout.as_secs_f64()
            ))
        };
        let outcome = match &self.handler {
            AppHandler::Local(handler) => {
                let run = handler(request);
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return None,
                    answered = tokio::time::timeout(timeout, run) => answered.unwrap_or_else(|_| late()),
                }
            }
            AppHandler::Remote => {
                let (tx, rx) = oneshot::channel();
                self.pending.lock().insert(action_id, tx);
                if self.removed.load(Ordering::SeqCst)
                    || self.outbound.send(AppOutbound::Action(request)).is_err()
                {
                    self.pending.lock().remove(&action_id);
                    ActionOutcome::failed("the app is gone (its front end closed)")
                } else {
                    tokio::select! {
                        biased;
                        _ = cancel.cancelled() => {
                            self.pending.lock().remove(&action_id);
                            return None;
                        }
                        answered = tokio::time::timeout(timeout, rx) => match answered {
                            Ok(Ok(outcome)) => outcome,
                            Ok(Err(_)) => ActionOutcome::failed("the app was unregistered"),
                            Err(_) => {
                                self.pending.lock().remove(&action_id);
                                late()
                            }
                        },
                    }
                }
            }
        };
        Some(self.record_with_id(action_id, by, name, params, outcome))
    }

    fn record(&self, by: Actor, name: &str, params: Value, outcome: ActionOutcome) -> ActionRecord {
        let action_id = self.next_action.fetch_add(1, Ordering::SeqCst) + 1;
        self.record_with_id(action_id, by, name, params, outcome)
    }

    /// Keeps an action's outcome in the session (a read-only action's is only returned): a new
    /// state and new actions are applied, its events sent, and in static mode the agent is
    /// woken to decide from the new state.
    fn record_with_id(
        &self,
        action_id: u64,
        by: Actor,
        name: &str,
        params: Value,
        outcome: ActionOutcome,
    ) -> ActionRecord {
        let ActionOutcome {
            result,
            state,
            error,
            actions,
            events,
        } = outcome;
        let (ok, result) = match &error {
            None => (true, result),
            Some(_) => (false, Value::Null),
        };
        let record = ActionRecord {
            action_id,
            name: name.to_string(),
            params,
            by,
            ok,
            result,
            error,
            at: crate::time::now_iso(),
        };
        // Actions a handler gives are its own: a bad list is a bug there, kept out.
        let actions = actions.and_then(|a| {
            super::action::normalize_all(&a)
                .inspect_err(|e| tracing::error!(app = %self.id, "the handler's actions: {e}"))
                .ok()
        });
        let mut inner = self.inner.lock();
        let read_only = inner.actions.iter().any(|a| a.name == name && a.read_only);
        if read_only && state.is_none() && actions.is_none() {
            return record;
        }
        let cap = inner.history_len;
        Inner::push_capped(&mut inner.history, record.clone(), cap);
        let changed = state.is_some() || actions.is_some();
        if let Some(state) = state {
            inner.state = state;
        }
        if let Some(actions) = actions
            && let Some(me) = inner.me.upgrade()
        {
            let (registry, offered) = tools_for(&Arc::downgrade(&me), &actions, inner.control_mode);
            inner.actions = actions;
            inner.registry = registry;
            inner.offered = offered;
        }
        if changed && inner.mode == AppMode::Static {
            inner.wake_agent();
        }
        drop(inner);
        self.log(AppLogKind::Action, &record);
        if changed {
            self.save();
        }
        let _ = self.outbound.send(AppOutbound::Recorded(record.clone()));
        for (name, payload) in events {
            if let Err(e) = self.emit_event(&name, payload) {
                tracing::error!(app = %self.id, "the handler's event: {e}");
            }
        }
        record
    }

    /// What the attached agent sees when it decides.
    pub fn view(&self) -> AppView {
        self.view_of(&self.inner.lock())
    }

    /// What the attached agent sees when it decides, and the actions it is offered as tools,
    /// read together: the view's actions and due actions are the set's, even when the app
    /// changes between two reads (its opponent moved, and now its move is due).
    pub fn view_with_tools(&self) -> (AppView, Arc<ToolRegistry>) {
        let inner = self.inner.lock();
        (self.view_of(&inner), inner.offered.clone())
    }

    fn view_of(&self, inner: &Inner) -> AppView {
        AppView {
            app_id: self.id.clone(),
            mode: inner.mode,
            control_mode: inner.control_mode,
            role_prompt: inner.role_prompt.clone(),
            state: inner.state.clone(),
            human_label: inner.human_label.clone(),
            actions: inner
                .offered
                .tools()
                .map(|t| t.name().to_string())
                .collect(),
            due: inner
                .actions
                .iter()
                .filter(|a| a.due && inner.offered.get(&a.name).is_some())
                .map(|a| a.name.clone())
                .collect(),
            history: inner.history.iter().cloned().collect(),
            events: inner.events.iter().map(|e| e.text.clone()).collect(),
        }
    }

    /// The whole session.
    pub fn session(&self) -> AppSession {
        let inner = self.inner.lock();
        AppSession {
            app_id: self.id.clone(),
            mode: inner.mode,
            control_mode: inner.control_mode,
            role_prompt: inner.role_prompt.clone(),
            state: inner.state.clone(),
            human_label: inner.human_label.clone(),
            agent_id: inner.agent.as_ref().map(|a| a.agent_id.clone()),
            actions: inner.actions.clone(),
            tools: inner
                .offered
                .tools()
                .map(crate::tools::Tool::llm_definition)
                .collect(),
            history: inner.history.iter().cloned().collect(),
            events: inner.events.iter().cloned().collect(),
            chat: inner.chat.iter().cloned().collect(),
        }
    }

    /// Stores the session's row (state, actions, modes, label, agent).
    fn save(&self) {
        let inner = self.inner.lock();
        let row = AppRow {
            app_id: self.id.clone(),
            agent_id: inner.agent.as_ref().map(|a| a.agent_id.clone()),
            mode: inner.mode.as_str().to_string(),
            control_mode: inner.control_mode.as_str().to_string(),
            role_prompt: inner.role_prompt.clone(),
            human_label: inner.human_label.clone(),
            state: inner.state.to_string(),
            actions: serde_json::to_string(&inner.actions).unwrap_or_else(|_| "[]".into()),
            updated_at: crate::time::now_iso(),
        };
        drop(inner);
        self.memory.save_app(row);
    }

    fn log(&self, kind: AppLogKind, entry: &impl serde::Serialize) {
        if let Ok(json) = serde_json::to_string(entry) {
            self.memory.log_app(&self.id, kind, json);
        }
    }
}

/// An action's record as the agent's tool result.
fn output(record: &ActionRecord) -> ToolOutput {
    match &record.error {
        None => ToolOutput::ok(json!({"ok": true, "action_id": record.action_id,
                                      "result": record.result})),
        Some(error) => ToolOutput::failed(json!({"ok": false, "action_id": record.action_id,
                                                 "error": error,
                                                 "reason": ErrorCode::AppRefused.as_str()})),
    }
}
