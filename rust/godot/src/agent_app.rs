//! `AgentApp`: a game ("app") that an agent plays through the app bridge, as a Godot node
//! (`docs/apps.md`).
//!
//! Threading: the node registers its app with the core [`Runtime`] of an [`AgentRuntime`] as a
//! remote app ([`AppHandler::Remote`]) and keeps the receiver of what goes out to it
//! ([`AppOutbound`]). `process` drains that receiver on the main thread — actions become
//! [signal action_requested] or calls of [member action_handler], chat lines [signal chat_line]
//! — exactly as `AgentRuntime` drains its bus. The human's actions are async in core: they run
//! as tasks on the runtime's tokio handle and their results come back through a channel drained
//! in the same place. Nothing on the main thread waits for the runtime, and no `Gd` leaves it.
//! What goes into the session (action records, events, chat lines, the agent coming and going)
//! arrives through the same receiver in the order it happened, so the transcript never misses a
//! line however many come at once; the session itself is read only at registration.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use agents_core::apps::{
    ActionDef, ActionOutcome, ActionRecord, ActionRequest, AppConfig, AppContext, AppHandler,
    AppMode, AppOutbound, AppSession, ChatRole, ControlMode, text,
};
use agents_core::runtime::{Runtime, RuntimeError, RuntimeErrorCode};
use godot::classes::{Engine, INode, Node};
use godot::prelude::*;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::agent_action::AgentAction;
use crate::agent_runtime::AgentRuntime;
use crate::convert;
use crate::errors::{GodotErrorCode, LastError};
use crate::guard::put;
use crate::operation::AgentOperation;

/// The `error.code` of an awaited human action refused before it reached the game.
const ACTION_REFUSED: &str = RuntimeErrorCode::ActionRefused.as_str();
/// The `error.code` of an awaited human action the game failed (or that timed out).
const ACTION_FAILED: &str = GodotErrorCode::ActionFailed.as_str();
/// A call's argument is wrong.
const INVALID_ARGUMENT: &str = GodotErrorCode::InvalidArgument.as_str();
/// The app is not registered (or its runtime does not run).
const NOT_READY: &str = GodotErrorCode::NotReady.as_str();

/// A failed call: its code and message.
type Failure = (&'static str, String);

/// Most outbound items (actions, records, events, chat lines) handled per frame; the rest wait.
const MAX_OUTBOUND_PER_FRAME: usize = 1024;

/// Most items [method AgentApp.get_transcript] keeps.
const MAX_TRANSCRIPT: usize = 500;

/// Longest text of a value shown in a transcript line before it is cut with `…`.
const MAX_SHOWN_CHARS: usize = 80;

/// Runs `f`, turning a panic into an error message.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    crate::guard::guarded(what, f, |message| {
        (GodotErrorCode::InternalError.as_str(), message)
    })
}

fn rt_error(what: &str, error: RuntimeError) -> Failure {
    (error.code().as_str(), format!("{what}: {error}"))
}

/// What the transcript holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Chat,
    Action,
    Event,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Chat => "chat",
            Kind::Action => "action",
            Kind::Event => "event",
        }
    }
}

/// One line of the transcript ([method AgentApp.get_transcript]).
#[derive(Clone, Debug, PartialEq)]
struct Item {
    seq: i64,
    kind: Kind,
    /// `agent`, `human` or `system` (chat); who acted (action); `system` (event).
    role: String,
    /// The chat line's text, the event's text, or the action's name.
    text: String,
    /// The line as a chat panel shows it.
    line: String,
    /// The action's record (actions only).
    record: Option<Value>,
}

impl Item {
    /// An item not numbered yet ([`AgentApp::push_item`] numbers it).
    fn new(kind: Kind, role: &str, text: &str, line: String, record: Option<Value>) -> Self {
        Item {
            seq: 0,
            kind,
            role: role.to_string(),
            text: text.to_string(),
            line,
            record,
        }
    }
}

/// A value written the way events are (`{ winner: X }`), cut to [`MAX_SHOWN_CHARS`].
fn shown(value: &Value) -> String {
    let text = text::relaxed(value);
    if text.chars().count() <= MAX_SHOWN_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_SHOWN_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// A chat line as a panel shows it: `Ivy: text`, `You: text`, or a system line as it is
/// (`🎮 ⚔️ Combat: Lv.15 Goblin`).
fn chat_line_text(role: ChatRole, text: &str, agent_name: Option<&str>) -> String {
    match role {
        ChatRole::Agent => format!("{}: {text}", agent_name.unwrap_or("Agent")),
        ChatRole::Human => format!("You: {text}"),
        ChatRole::System => text.to_string(),
    }
}

/// `name { col: 2, row: 1 }` (no arguments: just the name).
fn call_text(name: &str, params: &Value) -> String {
    let empty = params.is_null() || params.as_object().is_some_and(Map::is_empty);
    if empty {
        name.to_string()
    } else {
        format!("{name} {}", shown(params))
    }
}

/// An action's record as a compact line: `#3 agent place { col: 2, row: 1 } → ok`, a scalar
/// result after `ok: `, or the error after `→`.
fn action_line(record: &ActionRecord) -> String {
    let head = format!(
        "#{} {} {}",
        record.action_id,
        record.by,
        call_text(&record.name, &record.params)
    );
    match &record.error {
        Some(error) => format!("{head} → {error}"),
        None => match &record.result {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                format!("{head} → ok: {}", shown(&record.result))
            }
            _ => format!("{head} → ok"),
        },
    }
}

/// A human action refused before it reached the game: `human fly → Action not available: …`.
fn refused_line(name: &str, params: &Value, error: &str) -> String {
    format!("human {} → {error}", call_text(name, params))
}

/// An action record as JSON with `error` always present (`""` when it succeeded).
fn record_json(record: &ActionRecord) -> Value {
    let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.entry("error")
            .or_insert_with(|| Value::String(String::new()));
    }
    value
}

fn json_dict(value: &Value) -> VarDictionary {
    match value {
        Value::Null => VarDictionary::new(),
        other => convert::json_to_dictionary(other),
    }
}

/// A Variant as JSON for the core (`null` for Nil), the error naming `what`.
fn to_json(what: &str, value: &Variant) -> Result<Value, String> {
    convert::variant_to_json(value).map_err(|e| format!("{what}: {e}"))
}

/// One action of [member AgentApp.actions]: a Dictionary or an [AgentAction].
fn action_from_variant(index: usize, value: &Variant) -> Result<ActionDef, String> {
    match value.get_type() {
        VariantType::DICTIONARY => {
            let dict = value
                .try_to::<VarDictionary>()
                .map_err(|e| format!("actions[{index}]: {e}"))?;
            let map =
                convert::dictionary_to_json(&dict).map_err(|e| format!("actions[{index}]: {e}"))?;
            const KEYS: [&str; 10] = [
                "name",
                "description",
                "params",
                "humanOnly",
                "human_only",
                "agentOnly",
                "agent_only",
                "readOnly",
                "read_only",
                "due",
            ];
            if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(format!(
                    "actions[{index}]: unknown key '{key}' (use name, description, params, \
                     humanOnly, agentOnly, readOnly, due)"
                ));
            }
            serde_json::from_value(Value::Object(map)).map_err(|e| format!("actions[{index}]: {e}"))
        }
        VariantType::OBJECT => {
            let action = value.try_to::<Gd<AgentAction>>().map_err(|_| {
                format!(
                    "actions[{index}]: an action is a Dictionary or an AgentAction, got an \
                     Object of another class (or a freed one)"
                )
            })?;
            action
                .bind()
                .to_core()
                .map_err(|e| format!("actions[{index}]: {e}"))
        }
        other => Err(format!(
            "actions[{index}]: an action is a Dictionary or an AgentAction, got {}",
            other.godot_type_name()
        )),
    }
}

fn actions_from_array(actions: &VarArray) -> Result<Vec<ActionDef>, String> {
    actions
        .iter_shared()
        .enumerate()
        .map(|(i, v)| action_from_variant(i, &v))
        .collect()
}

/// An outcome Dictionary `{result, state, error, actions, events}` (see
/// [method AgentApp.complete_action_with]).
fn outcome_from_dictionary(what: &str, dict: &VarDictionary) -> Result<ActionOutcome, String> {
    let mut outcome = ActionOutcome::default();
    for (key, value) in dict.iter_shared() {
        let key = key.to_string();
        match key.as_str() {
            "result" => outcome.result = to_json(&format!("{what}: result"), &value)?,
            "state" => {
                let state = to_json(&format!("{what}: state"), &value)?;
                outcome.state = (!state.is_null()).then_some(state);
            }
            "error" => match to_json(&format!("{what}: error"), &value)? {
                Value::Null => {}
                Value::String(e) if e.is_empty() => {}
                Value::String(e) => outcome.error = Some(e),
                other => outcome.error = Some(text::relaxed(&other)),
            },
            "actions" => {
                let array = value.try_to::<VarArray>().map_err(|_| {
                    format!(
                        "{what}: actions must be an Array, got {}",
                        value.get_type().godot_type_name()
                    )
                })?;
                outcome.actions =
                    Some(actions_from_array(&array).map_err(|e| format!("{what}: {e}"))?);
            }
            "events" => {
                let array = value.try_to::<VarArray>().map_err(|_| {
                    format!(
                        "{what}: events must be an Array of {{name, payload}}, got {}",
                        value.get_type().godot_type_name()
                    )
                })?;
                for (i, event) in array.iter_shared().enumerate() {
                    let event = to_json(&format!("{what}: events[{i}]"), &event)?;
                    let name = event.get("name").and_then(Value::as_str).ok_or_else(|| {
                        format!("{what}: events[{i}] must be a Dictionary {{name, payload}}")
                    })?;
                    let payload = event.get("payload").cloned().unwrap_or(Value::Null);
                    outcome.events.push((name.to_string(), payload));
                }
            }
            other => {
                return Err(format!(
                    "{what}: unknown key '{other}' (use result, state, error, actions, events)"
                ));
            }
        }
    }
    Ok(outcome)
}

/// What an [member AgentApp.action_handler] returned, as the action's outcome: a Dictionary as
/// [`outcome_from_dictionary`] reads it, any other value as the result.
fn outcome_from_variant(value: &Variant) -> Result<ActionOutcome, String> {
    match value.try_to::<VarDictionary>() {
        Ok(dict) if value.get_type() == VariantType::DICTIONARY => {
            outcome_from_dictionary("action_handler's answer", &dict)
        }
        _ => Ok(ActionOutcome::ok(to_json(
            "action_handler's answer",
            value,
        )?)),
    }
}

/// The app while it is registered.
struct Registration {
    core: Arc<Runtime>,
    app_id: String,
    outbound: mpsc::UnboundedReceiver<AppOutbound>,
}

/// A human action's end, from the runtime's thread pool.
struct HumanDone {
    request_id: i64,
    name: String,
    params: Value,
    result: Result<ActionRecord, RuntimeError>,
}

/// A game (an "app") that an agent plays: its state and actions go to the agent attached to
/// it, each action becoming one of the agent's tools; the agent's calls are checked
/// (`Action not available`, `Human is in control`, `humanOnly` / `agentOnly`, the parameters'
/// schema) and arrive here to be carried out by the game. A human can share the controls
/// ([member control_mode]) and chat with the agent. See `docs/apps.md`.
///
/// ```gdscript
/// @onready var runtime: AgentRuntime = $AgentRuntime
/// @onready var app: AgentApp = $AgentApp   # app_id "tictactoe", runtime_path ../AgentRuntime
///
/// func _ready():
///     app.actions = [{"name": "place", "description": "Place your mark",
///             "params": {"row": "int", "col": "int"}}]
///     app.set_state(board_state())
///     app.action_handler = func(action, params, by):
///         place(params.row, params.col)
///         return {"result": "placed", "state": board_state()}
///     runtime.spawn_agent({"name": "Ivy", "app_id": "tictactoe"})   # attached as it spawns
///
/// func board_state() -> Dictionary:
///     return {"board": board}
///
/// func place(row: int, col: int) -> void:
///     board[row * 3 + col] = "O"
///
/// var board := [".", ".", ".", ".", ".", ".", ".", ".", "."]
/// ```
///
/// **Registering.** Set [member runtime_path] and the app registers with that [AgentRuntime]
/// when it enters the tree (starting the runtime first if it has `autostart` on and has not
/// started yet, so the order of the two nodes does not matter), and again after the runtime is
/// stopped and started; or call [method register] yourself.
/// Properties are read when the app registers; [member control_mode], [member human_label] and
/// [member actions] also apply at once while registered. Leaving the tree unregisters the app
/// (its session stays in the runtime's database and comes back when an app of the same
/// [member app_id] registers).
///
/// **Actions.** Each action the game must carry out arrives on the main thread while the node
/// processes: with an [member action_handler] set, it is called and its return value answers
/// the action; otherwise [signal action_requested] is emitted and the game answers with
/// [method complete_action] (or [method fail_action]) within [member action_timeout_seconds].
/// In `static` [member mode], a new state in the answer wakes the agent to act again; in
/// `dynamic` mode the game calls [method set_context] (or [method set_state]) whenever it likes.
///
/// **Errors.** A failed call returns `false`, `0` or an empty result and sets
/// [method get_last_error]; nothing is pushed to the error log and no panic reaches Godot.
///
/// **In the editor** the node only shows configuration warnings (no runtime to register with,
/// an empty [member app_id]; see [method get_configuration_warnings]): it never registers or
/// starts a runtime while a scene is edited.
#[derive(GodotClass)]
#[class(tool, init, base = Node)]
pub struct AgentApp {
    /// The [AgentRuntime] to register with when the node enters the tree (see the class
    /// description). Empty: call [method register] yourself.
    #[export(node_path = ("AgentRuntime"))]
    #[var(set = set_runtime_path)]
    runtime_path: NodePath,
    /// The app's id, unique in its runtime (`tictactoe`). An agent's config names it in
    /// `app_id` to be attached as it spawns. Read at [method register].
    #[export(placeholder = "tictactoe")]
    app_id: GString,
    /// When the agent gets the app's state: `static` (after each action the game answers with a
    /// new state: turn-based play) or `dynamic` (whenever the game calls [method set_context] or
    /// [method set_state]). Read at [method register].
    #[export_group(name = "Play")]
    #[export(enum = (static, dynamic))]
    #[init(val = GString::from("static"))]
    mode: GString,
    /// Who may act: `agent` (only the agent's actions reach the game; the human's are refused
    /// with `Agent is in control`), `human` (the agent's are refused with `Human is in control`
    /// and it is offered no actions) or `copilot` (both, respecting `humanOnly` / `agentOnly`).
    /// Applies at once while registered (the chat gets `Control: <mode>`); an unknown mode is
    /// refused (see [method get_last_error]) and the property keeps its value.
    #[export(enum = (agent, human, copilot))]
    #[var(set = set_control_mode)]
    #[init(val = GString::from("agent"))]
    control_mode: GString,
    /// A short text about what is happening (`⚔️ Combat: Lv.15 Goblin`): a change adds
    /// `🎮 <label>` to the chat once. Applies at once while registered; empty: none.
    #[export]
    #[var(set = set_human_label)]
    human_label: GString,
    /// The agent's part in the app, in its context (`You play O. Win, or at least draw.`). Read
    /// at [method register].
    #[export_group(name = "Agent")]
    #[export(multiline)]
    role_prompt: GString,
    /// Whether the attached agent keeps its world tools (`move`, `speak`, …) next to the app's
    /// actions. Off: the actions are its only tools. Read at [method register].
    #[export]
    #[init(val = true)]
    world_tools: bool,
    /// How many actions and events the agent's context (and the session) holds, 1 to 100. Read
    /// at [method register].
    #[export(range = (1.0, 100.0, 1.0))]
    #[init(val = 10)]
    history: i64,
    /// Seconds the game has to answer an action before it fails back to the agent
    /// (`the app did not answer within 30 s`); more than 0, at most 3600. Read at
    /// [method register].
    #[export(range = (0.1, 3600.0, 0.1, suffix = "s"))]
    #[init(val = 30.0)]
    action_timeout_seconds: f64,
    /// The actions the game offers now: [AgentAction] resources or Dictionaries
    /// `{name, description, params, humanOnly, agentOnly, readOnly, due}` (`params` as the shorthand
    /// `{"row": "int"}` or a JSON Schema). Setting it while registered changes the agent's tools
    /// at its next decision; invalid actions are refused (see [method get_last_error]) and the
    /// property keeps its value.
    #[export_group(name = "Actions")]
    #[export]
    #[var(set = set_actions)]
    actions: VarArray,
    /// When set, answers every action synchronously on the main thread instead of
    /// [signal action_requested]: `func(action: String, params: Dictionary, by: String)`, `by`
    /// being `agent` or `human`. It returns a Dictionary as [method complete_action_with]
    /// takes it (`{"result": …, "state": …}`), or any other value as the result (`null`: no
    /// result).
    #[var]
    #[init(val = Callable::invalid())]
    action_handler: Callable,
    /// A built-in game app instead of the game's own actions:
    /// `{name, opponent, level, seed, stack, bet}` with `name` one of the board games `chess`,
    /// `checkers`, `four_in_a_row`, `tic_tac_toe`, `mancala`, `sea_battle` or the house games
    /// `blackjack`, `slot`, `rpg_dice`; `opponent` `ai` (the built-in AI or the house answers at
    /// once, default) or `human` (board games but sea battle: the app goes to `copilot` and the
    /// human moves with [method human_action]); `level` `random`, `easy` (default) or `hard`;
    /// `stack` and `bet` for blackjack and slot. The game tools are then its state, actions and
    /// handler: [member actions], [method set_state] and [member action_handler] are not used.
    /// Empty: no built-in game. Read at [method register]; see `docs/apps.md`.
    #[export]
    game: VarDictionary,

    registration: Option<Registration>,
    /// The state [method register] sends, kept while not registered.
    pending_state: Value,
    human_tx: Option<mpsc::UnboundedSender<HumanDone>>,
    human_rx: Option<mpsc::UnboundedReceiver<HumanDone>>,
    next_request: i64,
    /// Awaited human actions ([method perform]): request id → operation.
    awaiting: Vec<(i64, Gd<AgentOperation>)>,
    /// The attached agent: id and display name.
    agent: Option<(String, String)>,
    /// Register through [member runtime_path] at the next chance.
    auto_register: bool,
    transcript: VecDeque<Item>,
    next_seq: i64,
    transcript_epoch: i64,
    last_error: LastError,
    base: Base<Node>,
}

#[godot_api]
impl INode for AgentApp {
    // A tool class (for its configuration warnings): nothing registers or runs while a scene is
    // edited.
    fn enter_tree(&mut self) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        self.auto_register = !self.runtime_path.is_empty();
    }

    fn ready(&mut self) {
        if self.auto_register && !Engine::singleton().is_editor_hint() {
            self.try_auto_register(true);
        }
    }

    fn process(&mut self, _delta: f64) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        self.pump();
    }

    fn exit_tree(&mut self) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        self.auto_register = false;
        self.unregister_quietly();
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.configuration_warnings()
    }
}

#[godot_api]
impl AgentApp {
    /// The game must carry out an action (no [member action_handler] is set): [param action]
    /// with [param params] (checked against its schema), triggered [param by] `agent` or
    /// `human`. Answer with [method complete_action] (or [method fail_action]) and
    /// [param action_id], within [member action_timeout_seconds].
    #[signal]
    fn action_requested(action_id: i64, action: GString, params: VarDictionary, by: GString);

    /// An action went into the session: `{action_id, name, params, by, ok, result, error, at}`
    /// (`error` is `""` when it succeeded). The agent's and the human's, handled, failed, timed
    /// out, or refused when it was carried out; emitted at the next frame, in the order things
    /// happened.
    #[signal]
    fn action_recorded(record: VarDictionary);

    /// The human action [param request_id] of [method human_action] ended: its record
    /// `{action_id, name, params, by, ok, result, error, at}`. Refused before it reached the
    /// game (`Agent is in control`, `Action not available: …`, invalid parameters): `ok` false,
    /// `action_id` 0.
    #[signal]
    fn human_action_done(request_id: i64, record: VarDictionary);

    /// A line was added to the session's chat: [param role] is `agent` (the attached agent
    /// spoke), `human` ([method human_says]) or `system` (`🎮 <label>`, `Ivy joined`,
    /// `Control: copilot`).
    #[signal]
    fn chat_line(role: GString, text: GString);

    /// The [member human_label] changed (its `🎮` chat line was added).
    #[signal]
    fn label_changed(label: GString);

    /// An event was sent to the agent ([method emit_event], or an action's answer such as a
    /// built-in game's `game_over`); [param text] is what it got
    /// (`Event: roundEnded — { winner: X }`). Emitted at the next frame, after the record of the
    /// action that raised it.
    #[signal]
    fn event_emitted(name: GString, text: GString);

    /// An agent was attached to the app ([method attach], or spawned with its `app_id`).
    #[signal]
    fn agent_attached(agent_id: GString);

    /// The attached agent left: [param reason] is `detached` ([method detach]), `terminated`
    /// (the agent stopped) or `unregistered` ([method unregister]).
    #[signal]
    fn agent_detached(agent_id: GString, reason: GString);

    /// A call on this app failed: [param code] (one of the `ERROR_*` constants of
    /// [AgentConstants]) and [param message], as [method get_last_error_code] and
    /// [method get_last_error] keep them (every class of the addon reports a failed call this
    /// way).
    #[signal]
    fn error_occurred(code: GString, message: GString);

    /// Registers the app with [param runtime] (which must be running), from the properties and
    /// the state given to [method set_state]. A session stored under the same [member app_id]
    /// comes back (history, events, chat; its state when none was set). Returns `false` on an
    /// error: not running, `app_id` taken or empty, invalid actions (the message names the
    /// action and the field), registered already.
    #[func]
    pub fn register(&mut self, runtime: Option<Gd<AgentRuntime>>) -> bool {
        let Some(runtime) = runtime else {
            return self.fail(
                INVALID_ARGUMENT,
                "register: no AgentRuntime given (null)".into(),
            );
        };
        let core = guarded("register", || Ok(runtime.bind().core_runtime()));
        match core {
            Ok(Some(core)) => self.register_with(core),
            Ok(None) => self.fail(
                GodotErrorCode::NotRunning.as_str(),
                "register: the AgentRuntime is not running (add it to the tree or call its \
                 start())"
                    .into(),
            ),
            Err((code, e)) => self.fail(code, e),
        }
    }

    /// Removes the app from its runtime: its agent is detached (it keeps running and is told
    /// the app closed; [signal agent_detached] follows with `unregistered`) and actions still
    /// waiting fail. The session stays stored. Returns `false` when it was not registered.
    #[func]
    pub fn unregister(&mut self) -> bool {
        let Some(reg) = self.registration.as_ref() else {
            return self.fail(NOT_READY, "unregister: the app is not registered".into());
        };
        let (core, id) = (reg.core.clone(), reg.app_id.clone());
        let result = guarded("unregister", || {
            core.unregister_app(&id)
                .map_err(|e| rt_error("unregister", e))
        });
        // What was sent before it closed (its agent leaving) is still told.
        self.drain_outbound(true);
        self.registration = None;
        self.auto_register = false;
        self.agent = None;
        self.done(result)
    }

    /// True while the app is registered with a running runtime.
    #[func]
    pub fn is_registered(&self) -> bool {
        self.registration
            .as_ref()
            .is_some_and(|r| !r.core.is_shut_down())
    }

    /// Attaches a running agent: it gets the app's actions as tools, sees the app in its
    /// context and decides at once. An app has one agent, an agent plays one app. Returns
    /// `false` on an error (unknown agent, attached elsewhere, not registered).
    #[func]
    pub fn attach(&mut self, agent_id: GString) -> bool {
        let id = agent_id.to_string();
        let result = self.with_app("attach", |core, app| {
            core.attach_app(app, &id).map_err(|e| rt_error("attach", e))
        });
        let ok = self.done(result);
        if ok {
            self.note_agent(Some(id));
        }
        ok
    }

    /// Detaches the agent (it keeps running, with its world tools back);
    /// [signal agent_detached] follows. Returns `false` when no agent is attached.
    #[func]
    pub fn detach(&mut self) -> bool {
        let result = self.with_app("detach", |core, app| {
            core.detach_app(app).map_err(|e| rt_error("detach", e))
        });
        let ok = self.done(result.map(|_| ()));
        if ok {
            self.agent = None;
        }
        ok
    }

    /// The attached agent's id, `""` when none.
    #[func]
    pub fn get_agent_id(&self) -> GString {
        self.agent
            .as_ref()
            .map(|(id, _)| GString::from(id.as_str()))
            .unwrap_or_default()
    }

    /// The action setter: see [member actions].
    #[func]
    pub fn set_actions(&mut self, actions: VarArray) {
        let parsed = match actions_from_array(&actions) {
            Ok(parsed) => parsed,
            Err(e) => {
                self.fail(INVALID_ARGUMENT, format!("set_actions: {e}"));
                return;
            }
        };
        if self.registration.is_some() {
            let context = AppContext {
                actions: Some(parsed),
                ..AppContext::default()
            };
            if !self.send_context("set_actions", context) {
                return;
            }
        }
        self.actions = actions;
        self.last_error.clear();
    }

    /// The control mode setter: see [member control_mode].
    #[func]
    pub fn set_control_mode(&mut self, mode: GString) {
        let mode_text = mode.to_string();
        let parsed = match mode_text.parse::<ControlMode>() {
            Ok(m) => m,
            Err(e) => {
                self.fail(INVALID_ARGUMENT, format!("control_mode: {e}"));
                return;
            }
        };
        let result = match self.registration.is_some() {
            true => self.with_app("control_mode", |core, app| {
                core.set_app_control_mode(app, parsed)
                    .map_err(|e| rt_error("control_mode", e))
            }),
            false => Ok(()),
        };
        if self.done(result) {
            self.control_mode = mode;
        }
    }

    /// The runtime path setter: see [member runtime_path]. Refreshes the editor's configuration
    /// warnings.
    #[func]
    pub fn set_runtime_path(&mut self, path: NodePath) {
        self.runtime_path = path;
        self.base_mut().update_configuration_warnings();
    }

    /// The configuration warnings the editor shows on this node (the yellow triangle in the
    /// Scene dock), one text per problem; empty when there is none. A game can call it too, for
    /// an app set up from code. It warns when the app has no [AgentRuntime] to register with
    /// ([member runtime_path] empty, leading to no node, or to a node that is not an
    /// AgentRuntime) and when [member app_id] is empty. An app registered from a script with
    /// [method register] needs no [member runtime_path]: ignore that warning then.
    /// ```gdscript
    /// var app := AgentApp.new()
    /// app.app_id = "tictactoe"
    /// print(app.get_configuration_warnings())   # ["No AgentRuntime to register with: …"]
    /// ```
    #[func(rename = get_configuration_warnings)]
    pub fn configuration_warnings(&self) -> PackedStringArray {
        let mut warnings = Vec::new();
        let path = self.runtime_path.clone();
        if path.is_empty() {
            warnings.push(
                "No AgentRuntime to register with: set runtime_path to the AgentRuntime node \
                 (the app then registers when it enters the tree), or register it from a script \
                 with register() and ignore this warning."
                    .to_string(),
            );
        } else if !path.is_absolute() || self.base().is_inside_tree() {
            match self.base().get_node_or_null(&path) {
                None => warnings.push(format!(
                    "runtime_path \"{path}\" leads to no node: the app will not register. Point it \
                     at the AgentRuntime node."
                )),
                Some(node) if node.clone().try_cast::<AgentRuntime>().is_err() => {
                    warnings.push(format!(
                        "runtime_path \"{path}\" leads to {} (a {}), not an AgentRuntime: the app \
                         will not register.",
                        node.get_name(),
                        node.get_class()
                    ));
                }
                Some(_) => {}
            }
        }
        if self.app_id.to_string().trim().is_empty() {
            warnings.push(
                "app_id is empty: the app will not register. Give it an id unique in its \
                 runtime (such as tictactoe); agents name it in their app_id to be attached."
                    .to_string(),
            );
        }
        convert::strings_to_packed(&warnings)
    }

    /// The label setter: see [member human_label].
    #[func]
    pub fn set_human_label(&mut self, label: GString) {
        if self.registration.is_some() && !label.is_empty() {
            let context = AppContext {
                human_label: Some(label.to_string()),
                ..AppContext::default()
            };
            if !self.send_context("human_label", context) {
                return;
            }
        }
        self.human_label = label;
        self.last_error.clear();
    }

    /// Replaces the app's state (any JSON-convertible value): the agent gets it with its next
    /// decision and is woken. Before [method register], it is the state the app registers
    /// with. Returns `false` for a value with no JSON form or over 256 KiB.
    #[func]
    pub fn set_state(&mut self, state: Variant) -> bool {
        let state = match to_json("set_state", &state) {
            Ok(s) => s,
            Err(e) => return self.fail(INVALID_ARGUMENT, e),
        };
        if self.registration.is_none() {
            self.pending_state = state;
            self.last_error.clear();
            return true;
        }
        let context = AppContext {
            state: Some(state),
            ..AppContext::default()
        };
        self.send_context("set_state", context)
    }

    /// The app's current state (`null` when none).
    #[func]
    pub fn get_state(&self) -> Variant {
        match self.session() {
            Some(session) => convert::json_to_variant(&session.state),
            None => convert::json_to_variant(&self.pending_state),
        }
    }

    /// The app bridge's `setContext`: replaces what [param context] gives — `state`, `actions` (as in
    /// [member actions]), `human_label` (or `humanLabel`) — and wakes the agent; its tools
    /// change with its next decision. A changed label adds `🎮 <label>` to the chat once.
    /// Unknown keys are refused. Before [method register], it sets what the app registers
    /// with.
    #[func]
    pub fn set_context(&mut self, context: VarDictionary) -> bool {
        let mut core = AppContext::default();
        let mut actions_array = None;
        let mut label = None;
        for (key, value) in context.iter_shared() {
            let key = key.to_string();
            match key.as_str() {
                "state" => match to_json("set_context: state", &value) {
                    Ok(s) => core.state = Some(s),
                    Err(e) => return self.fail(INVALID_ARGUMENT, e),
                },
                "actions" => {
                    let Ok(array) = value.try_to::<VarArray>() else {
                        return self.fail(
                            INVALID_ARGUMENT,
                            format!(
                                "set_context: actions must be an Array, got {}",
                                value.get_type().godot_type_name()
                            ),
                        );
                    };
                    match actions_from_array(&array) {
                        Ok(parsed) => core.actions = Some(parsed),
                        Err(e) => return self.fail(INVALID_ARGUMENT, format!("set_context: {e}")),
                    }
                    actions_array = Some(array);
                }
                "human_label" | "humanLabel" => {
                    let text = value.to_string();
                    if !text.is_empty() {
                        core.human_label = Some(text.clone());
                    }
                    label = Some(GString::from(text.as_str()));
                }
                other => {
                    return self.fail(
                        INVALID_ARGUMENT,
                        format!(
                            "set_context: unknown key '{other}' (use state, actions, human_label)"
                        ),
                    );
                }
            }
        }
        if self.registration.is_some() {
            if !self.send_context("set_context", core.clone()) {
                return false;
            }
        } else if let Some(state) = core.state {
            self.pending_state = state;
        }
        if let Some(array) = actions_array {
            self.actions = array;
        }
        if let Some(label) = label {
            self.human_label = label;
        }
        self.last_error.clear();
        true
    }

    /// Sends the event [param name] with [param payload] (`null` for none) to the agent, which
    /// gets the system message `Event: roundEnded — { winner: X }` in its context and is woken;
    /// [signal event_emitted] follows. Returns `false` when not registered, for an empty name,
    /// or a payload with no JSON form.
    #[func]
    pub fn emit_event(&mut self, name: GString, payload: Variant) -> bool {
        let name = name.to_string();
        let payload = match to_json("emit_event: payload", &payload) {
            Ok(p) => p,
            Err(e) => return self.fail(INVALID_ARGUMENT, e),
        };
        let result = self.with_app("emit_event", |core, app| {
            core.emit_app_event(app, &name, payload)
                .map_err(|e| rt_error("emit_event", e))
        });
        self.done(result.map(|_| ()))
    }

    /// The human triggers [param action] with [param params], as the app bridge's routing allows it:
    /// refused in `agent` [member control_mode] and for `agentOnly` actions, checked against
    /// the action's parameters, then carried out like the agent's (through
    /// [signal action_requested] or [member action_handler]). Returns a request id (1, 2, …)
    /// at once; [signal human_action_done] follows with it and the action's record. Returns `0`
    /// when not registered or for params with no JSON form.
    #[func]
    pub fn human_action(&mut self, action: GString, params: VarDictionary) -> i64 {
        self.start_human_action(action, params)
    }

    /// The human performs [param action] with [param params], as [method human_action] does,
    /// and returns the signal to await for its end:
    /// `var result = await app.perform("place", {"row": 0, "col": 2})`. The result ([AgentOperation]) has `ok`, `record` (the action's
    /// record, as [signal human_action_done] gives it) and `error`: `action_refused` (refused
    /// before it reached the game: `Agent is in control`, `Action not available: …`, invalid
    /// parameters, the app not registered) or `action_failed` (the game failed it, or it timed
    /// out). It always resolves.
    #[func]
    pub fn perform(&mut self, action: GString, params: VarDictionary) -> Signal {
        let op = self.perform_async(action, params);
        AgentOperation::signal(&op)
    }

    /// Like [method perform], returning the [AgentOperation] itself.
    #[func]
    pub fn perform_async(&mut self, action: GString, params: VarDictionary) -> Gd<AgentOperation> {
        let request_id = self.start_human_action(action, params);
        if request_id == 0 {
            return AgentOperation::done(Err((
                ACTION_REFUSED,
                self.last_error.message().to_string(),
            )));
        }
        let op = AgentOperation::start();
        self.awaiting.push((request_id, op.clone()));
        op
    }

    /// Starts a human action (see [method human_action]); its request id, `0` when it could
    /// not start.
    fn start_human_action(&mut self, action: GString, params: VarDictionary) -> i64 {
        let name = action.to_string();
        let params = match convert::dictionary_to_json(&params) {
            Ok(map) => Value::Object(map),
            Err(e) => {
                self.fail(INVALID_ARGUMENT, format!("human_action: params: {e}"));
                return 0;
            }
        };
        let (core, app_id) = match self.live_registration("human_action") {
            Ok(reg) => (reg.core.clone(), reg.app_id.clone()),
            Err((code, message)) => {
                self.fail(code, message);
                return 0;
            }
        };
        self.next_request += 1;
        let request_id = self.next_request;
        let tx = self.human_sender();
        let spawned = guarded("human_action", || {
            let runtime = core.clone();
            let (name, params) = (name.clone(), params.clone());
            core.handle().spawn(async move {
                let result = runtime
                    .app_human_action(&app_id, &name, params.clone())
                    .await;
                let _ = tx.send(HumanDone {
                    request_id,
                    name,
                    params,
                    result,
                });
            });
            Ok(())
        });
        match spawned {
            Ok(()) => {
                self.last_error.clear();
                request_id
            }
            Err((code, e)) => {
                self.fail(code, e);
                0
            }
        }
    }

    /// The human says [param text] in the app's chat: a `human` chat line, and a message to
    /// the attached agent (from the player), which answers. Returns `false` when not registered
    /// or for an empty text.
    #[func]
    pub fn human_says(&mut self, text: GString) -> bool {
        let text = text.to_string();
        let result = self.with_app("human_says", |core, app| {
            core.app_human_says(app, &text)
                .map_err(|e| rt_error("human_says", e))
        });
        self.done(result)
    }

    /// Answers the action [param action_id] of [signal action_requested]: [param result] is what
    /// the agent is told happened (any JSON-convertible value), [param new_state] the game's new
    /// state (`null`: unchanged; in `static` mode a new state wakes the agent to act again).
    /// Returns `false` for an unknown action id (already answered, timed out) or values with no
    /// JSON form.
    #[func]
    pub fn complete_action(&mut self, action_id: i64, result: Variant, new_state: Variant) -> bool {
        let outcome = match (
            to_json("complete_action: result", &result),
            to_json("complete_action: new_state", &new_state),
        ) {
            (Ok(result), Ok(state)) => {
                let outcome = ActionOutcome::ok(result);
                if state.is_null() {
                    outcome
                } else {
                    outcome.with_state(state)
                }
            }
            (Err(e), _) | (_, Err(e)) => return self.fail(INVALID_ARGUMENT, e),
        };
        self.answer("complete_action", action_id, outcome)
    }

    /// Refuses or fails the action [param action_id]: the agent is told [param error] (and may
    /// try something else). Returns `false` for an unknown action id.
    #[func]
    pub fn fail_action(&mut self, action_id: i64, error: GString) -> bool {
        let error = error.to_string();
        let error = if error.trim().is_empty() {
            "the game refused the action".to_string()
        } else {
            error
        };
        self.answer("fail_action", action_id, ActionOutcome::failed(error))
    }

    /// Answers the action [param action_id] with everything an answer may carry, each key
    /// optional: `result` (what happened, for the agent), `state` (the game's new state; in
    /// `static` mode it wakes the agent to act again), `error` (a refusal or failure the agent
    /// is told about), `actions` (the actions from now on, as in [member actions]: whose turn it
    /// is) and `events` (`[{name, payload}]`, sent to the agent after the result). Unknown keys
    /// are refused. Returns `false` for an unknown action id or an invalid answer.
    #[func]
    pub fn complete_action_with(&mut self, action_id: i64, outcome: VarDictionary) -> bool {
        match outcome_from_dictionary("complete_action_with", &outcome) {
            Ok(outcome) => self.answer("complete_action_with", action_id, outcome),
            Err(e) => self.fail(INVALID_ARGUMENT, e),
        }
    }

    /// The whole session: `app_id`, `mode`, `control_mode`, `role_prompt`, `state`,
    /// `human_label` (when set), `agent_id` (when attached), `actions` (their `params` as JSON
    /// Schemas), `tools` (the tool definitions the agent is offered now: `name`, `description`,
    /// `parameters`), `history` (the last actions as in [signal action_recorded]), `events`
    /// (`{name, payload, text, at}`) and `chat` (`{role, text, at}`), oldest first. Empty when
    /// not registered.
    #[func]
    pub fn get_session(&mut self) -> VarDictionary {
        let Some(session) = self.session() else {
            self.fail(NOT_READY, "get_session: the app is not registered".into());
            return VarDictionary::new();
        };
        let mut value = serde_json::to_value(&session).unwrap_or(Value::Null);
        if let Some(history) = value.get_mut("history").and_then(Value::as_array_mut) {
            for (slot, record) in history.iter_mut().zip(&session.history) {
                *slot = record_json(record);
            }
        }
        self.last_error.clear();
        json_dict(&value)
    }

    /// The transcript a chat panel shows (the session's chat, its actions and events, oldest
    /// first, at most 500): Dictionaries `{seq, kind, role, text, line}` with `seq` above
    /// [param since]. `kind` is `chat` (`role` `agent`, `human` or `system`), `action`
    /// (`role`: who acted; also `record`, as in [signal action_recorded]) or `event`; `line`
    /// is the text to show: `Ivy: Your move.`, `You: Hi`, `🎮 ⚔️ Combat: Lv.15 Goblin`,
    /// `#3 agent place { col: 2, row: 1 } → ok`, `Event: roundEnded — { winner: X }`. Filled
    /// from the stored session when the app registers; new items join it at the next frame, in
    /// the order they happened (none is missed, however many come at once).
    #[func]
    pub fn get_transcript(&self, #[opt(default = 0)] since: i64) -> Array<VarDictionary> {
        let mut out = Array::new();
        for item in self.transcript.iter().filter(|i| i.seq > since) {
            let mut d = VarDictionary::new();
            put(&mut d, "seq", item.seq.to_variant());
            put(&mut d, "kind", item.kind.as_str().to_variant());
            put(&mut d, "role", item.role.to_variant());
            put(&mut d, "text", item.text.to_variant());
            put(&mut d, "line", item.line.to_variant());
            if let Some(record) = &item.record {
                put(&mut d, "record", json_dict(record).to_variant());
            }
            out.push(&d);
        }
        out
    }

    /// Changes each time the transcript starts over (when the app registers): a panel that
    /// sees it change reads [method get_transcript] from the start.
    #[func]
    pub fn get_transcript_epoch(&self) -> i64 {
        self.transcript_epoch
    }

    /// The message of the last failed call; empty after a call that succeeded.
    #[func]
    pub fn get_last_error(&self) -> GString {
        self.last_error.message_gstring()
    }

    /// The code of the last failed call (one of the `ERROR_*` constants of [AgentConstants]);
    /// empty after a call that succeeded.
    #[func]
    pub fn get_last_error_code(&self) -> GString {
        self.last_error.code_gstring()
    }
}

impl AgentApp {
    /// Records a failure (and emits [signal error_occurred]); returns `false` for
    /// `return self.fail(…)`.
    fn fail(&mut self, code: &str, message: String) -> bool {
        self.last_error.set(code, message.as_str());
        self.signals().error_occurred().emit(code, message.as_str());
        false
    }

    /// `true` and a cleared error for `Ok`, else [`AgentApp::fail`].
    fn done(&mut self, result: Result<(), Failure>) -> bool {
        match result {
            Ok(()) => {
                self.last_error.clear();
                true
            }
            Err((code, e)) => self.fail(code, e),
        }
    }

    /// The registration, unless there is none or its runtime stopped (then it is dropped).
    fn live_registration(&mut self, what: &str) -> Result<&Registration, Failure> {
        if self
            .registration
            .as_ref()
            .is_some_and(|r| r.core.is_shut_down())
        {
            self.lost_runtime();
        }
        self.registration
            .as_ref()
            .ok_or_else(|| (NOT_READY, format!("{what}: the app is not registered")))
    }

    /// Runs `f` with the runtime and the app's id.
    fn with_app<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&Runtime, &str) -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let reg = self.live_registration(what)?;
        let (core, app_id) = (reg.core.clone(), reg.app_id.clone());
        guarded(what, || f(&core, &app_id))
    }

    fn send_context(&mut self, what: &str, context: AppContext) -> bool {
        let result = self.with_app(what, |core, app| {
            core.set_app_context(app, context)
                .map_err(|e| rt_error(what, e))
        });
        self.done(result)
    }

    fn answer(&mut self, what: &str, action_id: i64, outcome: ActionOutcome) -> bool {
        let Ok(id) = u64::try_from(action_id) else {
            return self.fail(
                RuntimeErrorCode::UnknownAction.as_str(),
                format!("{what}: no action {action_id}"),
            );
        };
        let result = self.with_app(what, |core, app| {
            core.complete_app_action(app, id, outcome)
                .map_err(|e| rt_error(what, e))
        });
        self.done(result)
    }

    fn session(&self) -> Option<AppSession> {
        let reg = self.registration.as_ref()?;
        catch_unwind(AssertUnwindSafe(|| reg.core.app_session(&reg.app_id)))
            .ok()?
            .ok()
    }

    fn human_sender(&mut self) -> mpsc::UnboundedSender<HumanDone> {
        if let Some(tx) = &self.human_tx {
            return tx.clone();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        self.human_tx = Some(tx.clone());
        self.human_rx = Some(rx);
        tx
    }

    /// The app's config from the properties.
    fn config(&self) -> Result<AppConfig, String> {
        let app_id = self.app_id.to_string();
        if app_id.trim().is_empty() {
            return Err("app_id is empty".into());
        }
        let mut config = AppConfig::new(app_id);
        config.mode = self
            .mode
            .to_string()
            .parse::<AppMode>()
            .map_err(|e| format!("mode: {e}"))?;
        config.control_mode = self
            .control_mode
            .to_string()
            .parse::<ControlMode>()
            .map_err(|e| format!("control_mode: {e}"))?;
        config.role_prompt = self.role_prompt.to_string();
        config.state = self.pending_state.clone();
        config.actions = actions_from_array(&self.actions)?;
        let label = self.human_label.to_string();
        config.human_label = (!label.is_empty()).then_some(label);
        config.world_tools = self.world_tools;
        config.history = usize::try_from(self.history)
            .map_err(|_| format!("history must be between 1 and 100, got {}", self.history))?;
        config.action_timeout_seconds = self.action_timeout_seconds;
        if !self.game.is_empty() {
            let game = convert::dictionary_to_json(&self.game).map_err(|e| format!("game: {e}"))?;
            config.game = Some(
                serde_json::from_value(Value::Object(game)).map_err(|e| format!("game: {e}"))?,
            );
        }
        config.validate()?;
        Ok(config)
    }

    fn register_with(&mut self, core: Arc<Runtime>) -> bool {
        if self.registration.is_some() && !self.is_registered() {
            self.lost_runtime();
        }
        if let Some(reg) = &self.registration {
            let message = format!(
                "register: the app is registered as '{}' already (unregister() first)",
                reg.app_id
            );
            return self.fail(RuntimeErrorCode::AppExists.as_str(), message);
        }
        let config = match self.config() {
            Ok(c) => c,
            Err(e) => return self.fail(INVALID_ARGUMENT, format!("register: {e}")),
        };
        let app_id = config.app_id.clone();
        let registered = guarded("register", || {
            let outbound = core
                .register_app(config, AppHandler::Remote)
                .map_err(|e| rt_error("register", e))?;
            let session = core
                .app_session(&app_id)
                .map_err(|e| rt_error("register", e))?;
            Ok((outbound, session))
        });
        let (outbound, session) = match registered {
            Ok(r) => r,
            Err((code, e)) => return self.fail(code, e),
        };
        self.registration = Some(Registration {
            core,
            app_id,
            outbound,
        });
        self.auto_register = false;
        self.agent = None;
        if let Some(id) = session.agent_id.clone() {
            self.note_agent(Some(id));
        }
        self.seed_transcript(&session);
        self.last_error.clear();
        true
    }

    /// Starts the transcript over from a (restored) session: its chat, actions and events in
    /// time order (a stable sort: items of the same time keep chat, actions, events order).
    fn seed_transcript(&mut self, session: &AppSession) {
        self.transcript.clear();
        self.transcript_epoch += 1;
        let name = self.agent.as_ref().map(|(_, n)| n.clone());
        let mut items: Vec<(&str, Item)> = Vec::new();
        for line in &session.chat {
            let shown = chat_line_text(line.role, &line.text, name.as_deref());
            let item = Item::new(Kind::Chat, line.role.as_str(), &line.text, shown, None);
            items.push((&line.at, item));
        }
        for record in &session.history {
            let (line, json) = (action_line(record), Some(record_json(record)));
            let item = Item::new(Kind::Action, record.by.as_str(), &record.name, line, json);
            items.push((&record.at, item));
        }
        for event in &session.events {
            let item = Item::new(Kind::Event, "system", &event.name, event.text.clone(), None);
            items.push((&event.at, item));
        }
        items.sort_by(|a, b| a.0.cmp(b.0));
        for (_, item) in items {
            self.push_item(item);
        }
    }

    /// Adds an item to the transcript (numbering it), dropping the oldest past
    /// [`MAX_TRANSCRIPT`].
    fn push_item(&mut self, mut item: Item) {
        self.next_seq += 1;
        item.seq = self.next_seq;
        self.transcript.push_back(item);
        while self.transcript.len() > MAX_TRANSCRIPT {
            self.transcript.pop_front();
        }
    }

    /// Notes the attached agent (looking up its name); [signal agent_attached] for a new one.
    fn note_agent(&mut self, agent_id: Option<String>) {
        let current = self.agent.as_ref().map(|(id, _)| id.as_str());
        if current == agent_id.as_deref() {
            return;
        }
        let Some(id) = agent_id else {
            self.agent = None;
            return;
        };
        let name = self
            .registration
            .as_ref()
            .and_then(|reg| catch_unwind(AssertUnwindSafe(|| reg.core.state(&id))).ok())
            .flatten()
            .map(|s| s.name)
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| id.clone());
        self.agent = Some((id.clone(), name));
        self.signals().agent_attached().emit(id.as_str());
    }

    /// The runtime stopped: the registration is gone; with [member runtime_path] the app
    /// registers again once the runtime runs.
    fn lost_runtime(&mut self) {
        self.registration = None;
        self.agent = None;
        self.auto_register = !self.runtime_path.is_empty() && self.base().is_inside_tree();
        self.last_error.set(
            RuntimeErrorCode::ShutDown.as_str(),
            "the AgentRuntime stopped: the app is no longer registered",
        );
    }

    /// Registers through [member runtime_path] if the runtime is there and runs; with `start`
    /// (when the node becomes ready), a runtime that has `autostart` on but has not started yet
    /// (it comes later in the tree) is started first. A failure other than "not running yet"
    /// stops trying and is reported as a warning (and in [method get_last_error]).
    fn try_auto_register(&mut self, start: bool) {
        let path = self.runtime_path.clone();
        let Some(node) = self.base().get_node_or_null(&path) else {
            return;
        };
        let Ok(mut runtime) = node.try_cast::<AgentRuntime>() else {
            self.auto_register = false;
            let message = format!("runtime_path '{path}' is not an AgentRuntime");
            godot_warn!("AgentApp: {message}");
            self.last_error.set(INVALID_ARGUMENT, message);
            return;
        };
        let mut core = runtime.bind().core_runtime();
        if start && core.is_none() && runtime.get("autostart").try_to::<bool>().unwrap_or(false) {
            runtime.bind_mut().start();
            core = runtime.bind().core_runtime();
        }
        let Some(core) = core else {
            // Not running: try again next frame.
            return;
        };
        if !self.register_with(core) {
            self.auto_register = false;
            godot_warn!("AgentApp: {}", self.last_error.message());
        }
    }

    /// One frame's work: register if waiting to, the outbound queue, the human's results.
    fn pump(&mut self) {
        if self
            .registration
            .as_ref()
            .is_some_and(|r| r.core.is_shut_down())
        {
            self.lost_runtime();
        }
        if self.auto_register {
            self.try_auto_register(false);
        }
        self.drain_outbound(false);
        self.drain_human();
    }

    /// Handles what the runtime sent out, in order. `closing`: tells all but actions to handle
    /// (the app is being unregistered; its actions fail anyway).
    fn drain_outbound(&mut self, closing: bool) {
        for _ in 0..MAX_OUTBOUND_PER_FRAME {
            let Some(reg) = self.registration.as_mut() else {
                return;
            };
            let Ok(out) = reg.outbound.try_recv() else {
                return;
            };
            match out {
                AppOutbound::Action(request) if !closing => self.handle_action(request),
                AppOutbound::Action(_) => {}
                AppOutbound::Recorded(record) => {
                    let json = record_json(&record);
                    let (by, line) = (record.by.as_str(), action_line(&record));
                    let item = Item::new(Kind::Action, by, &record.name, line, Some(json.clone()));
                    self.push_item(item);
                    self.signals().action_recorded().emit(&json_dict(&json));
                }
                AppOutbound::Event(event) => {
                    let text = event.text.clone();
                    self.push_item(Item::new(Kind::Event, "system", &event.name, text, None));
                    self.signals()
                        .event_emitted()
                        .emit(event.name.as_str(), event.text.as_str());
                }
                AppOutbound::Attached { agent_id } => self.note_agent(Some(agent_id)),
                AppOutbound::Chat(line) => {
                    let name = self.agent.as_ref().map(|(_, n)| n.clone());
                    let role = line.role.as_str();
                    let shown = chat_line_text(line.role, &line.text, name.as_deref());
                    self.push_item(Item::new(Kind::Chat, role, &line.text, shown, None));
                    self.signals().chat_line().emit(role, line.text.as_str());
                    if line.role == ChatRole::System
                        && let Some(label) = line.text.strip_prefix(text::LABEL_PREFIX)
                    {
                        self.human_label = GString::from(label);
                        self.signals().label_changed().emit(label);
                    }
                }
                AppOutbound::Detached { agent_id, reason } => {
                    if self.agent.as_ref().is_some_and(|(id, _)| *id == agent_id) {
                        self.agent = None;
                    }
                    self.signals()
                        .agent_detached()
                        .emit(agent_id.as_str(), reason.as_str());
                }
            }
        }
    }

    /// An action for the game: to the [member action_handler], or out as
    /// [signal action_requested].
    fn handle_action(&mut self, request: ActionRequest) {
        let params = json_dict(&request.params);
        let by = request.by.to_string();
        let action_id = i64::try_from(request.action_id).unwrap_or(i64::MAX);
        let handler = self.action_handler.clone();
        if !handler.is_valid() {
            self.signals().action_requested().emit(
                action_id,
                request.name.as_str(),
                &params,
                by.as_str(),
            );
            return;
        }
        // GDScript lambdas are custom callables that know their count; other custom callables
        // may answer 0 for "unknown".
        let count = handler.get_argument_count();
        let outcome = if count != 3 && !(count == 0 && handler.is_custom()) {
            Err(format!(
                "action_handler must take 3 arguments (action, params, by), it takes {count}"
            ))
        } else {
            let args = varray![request.name.as_str(), &params, by.as_str()];
            // Lets the handler call back into this node.
            let answer = {
                let _reentrant = self.base_mut();
                handler.callv(&args)
            };
            if let Some(state) = crate::script_tools::function_state(&answer) {
                // A coroutine (it awaits an animation): the action is answered when it ends.
                self.answer_when_completed(state, action_id);
                return;
            }
            outcome_from_variant(&answer)
        };
        let (outcome, handler_error) = match outcome {
            Ok(outcome) => (outcome, None),
            Err(e) => (ActionOutcome::failed(e.clone()), Some(e)),
        };
        // A failure to answer (the app was unregistered meanwhile, the action timed out) is
        // kept in get_last_error, as is a handler's mistake.
        self.answer("action_handler", action_id, outcome);
        if let Some(e) = handler_error {
            self.last_error.set(ACTION_FAILED, e);
        }
    }

    /// Answers `action_id` with what the handler coroutine `state` returns when it completes.
    fn answer_when_completed(&mut self, mut state: Gd<godot::classes::Object>, action_id: i64) {
        let app = self.to_gd().instance_id();
        let mut pending = Some(action_id);
        let done = Callable::from_fn("action_handler_completed", move |args: &[&Variant]| {
            let (Some(action_id), Ok(mut app)) =
                (pending.take(), Gd::<AgentApp>::try_from_instance_id(app))
            else {
                return;
            };
            let value = args.first().map_or_else(Variant::nil, |v| (*v).clone());
            let mut app = app.bind_mut();
            let (outcome, handler_error) = match outcome_from_variant(&value) {
                Ok(outcome) => (outcome, None),
                Err(e) => (ActionOutcome::failed(e.clone()), Some(e)),
            };
            app.answer("action_handler", action_id, outcome);
            if let Some(e) = handler_error {
                app.last_error.set(ACTION_FAILED, e);
            }
        });
        state.connect_flags(
            "completed",
            &done,
            godot::classes::object::ConnectFlags::ONE_SHOT,
        );
    }

    fn drain_human(&mut self) {
        loop {
            let Some(rx) = self.human_rx.as_mut() else {
                return;
            };
            let Ok(done) = rx.try_recv() else {
                return;
            };
            let record = match &done.result {
                Ok(record) => record_json(record),
                Err(error) => {
                    let message = error.to_string();
                    let at = agents_core::time::now_iso();
                    let record = serde_json::json!({
                        "action_id": 0,
                        "name": done.name,
                        "params": done.params,
                        "by": "human",
                        "ok": false,
                        "result": null,
                        "error": message,
                        "at": at,
                    });
                    let line = refused_line(&done.name, &done.params, &message);
                    let item = Some(record.clone());
                    self.push_item(Item::new(Kind::Action, "human", &done.name, line, item));
                    record
                }
            };
            let record_dict = json_dict(&record);
            if let Some(i) = self
                .awaiting
                .iter()
                .position(|(id, _)| *id == done.request_id)
            {
                let (_, mut op) = self.awaiting.swap_remove(i);
                let result = match (&done.result, record["ok"].as_bool()) {
                    (Ok(_), Some(true)) => {
                        let mut keys = VarDictionary::new();
                        put(&mut keys, "record", record_dict.to_variant());
                        Ok(keys)
                    }
                    (Ok(_), _) => Err((
                        ACTION_FAILED,
                        record["error"]
                            .as_str()
                            .unwrap_or("the action failed")
                            .to_string(),
                    )),
                    (Err(e), _) => Err((ACTION_REFUSED, e.to_string())),
                };
                op.bind_mut().finish(result);
            }
            self.signals()
                .human_action_done()
                .emit(done.request_id, &record_dict);
        }
    }

    /// Unregisters without telling anyone (leaving the tree, drop).
    fn unregister_quietly(&mut self) {
        if let Some(reg) = self.registration.take() {
            let _ = catch_unwind(AssertUnwindSafe(|| reg.core.unregister_app(&reg.app_id)));
        }
        self.agent = None;
    }
}

impl Drop for AgentApp {
    fn drop(&mut self) {
        self.unregister_quietly();
        // Awaited human actions resolve, never hang.
        for (_, mut op) in std::mem::take(&mut self.awaiting) {
            op.bind_mut().finish(Err((
                ACTION_FAILED,
                "the AgentApp was freed before the action ended".into(),
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::apps::Actor;
    use serde_json::json;

    fn record(id: u64, name: &str, params: Value, result: Result<Value, &str>) -> ActionRecord {
        let (ok, result, error) = match result {
            Ok(r) => (true, r, None),
            Err(e) => (false, Value::Null, Some(e.to_string())),
        };
        ActionRecord {
            action_id: id,
            name: name.into(),
            params,
            by: Actor::Agent,
            ok,
            result,
            error,
            at: "2025-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn actions_are_compact_lines() {
        let placed = record(3, "place", json!({"row": 1, "col": 2}), Ok(json!({"x": 1})));
        assert_eq!(
            action_line(&placed),
            "#3 agent place { col: 2, row: 1 } → ok"
        );
        let said = record(4, "pass", json!({}), Ok(json!("passed")));
        assert_eq!(action_line(&said), "#4 agent pass → ok: passed");
        let failed = record(5, "place", json!({"row": 0, "col": 0}), Err("taken"));
        assert_eq!(
            action_line(&failed),
            "#5 agent place { col: 0, row: 0 } → taken"
        );
        assert_eq!(
            refused_line("fly", &json!({}), "Agent is in control"),
            "human fly → Agent is in control"
        );
        let long = record(6, "say", json!({"text": "x".repeat(200)}), Ok(Value::Null));
        let line = action_line(&long);
        assert!(line.contains('…') && line.chars().count() < 120, "{line}");
    }

    #[test]
    fn chat_lines_name_who_speaks() {
        assert_eq!(
            chat_line_text(ChatRole::Agent, "Hi", Some("Ivy")),
            "Ivy: Hi"
        );
        assert_eq!(chat_line_text(ChatRole::Agent, "Hi", None), "Agent: Hi");
        assert_eq!(chat_line_text(ChatRole::Human, "Go", None), "You: Go");
        assert_eq!(
            chat_line_text(ChatRole::System, "🎮 ⚔️ Combat: Lv.15 Goblin", None),
            "🎮 ⚔️ Combat: Lv.15 Goblin"
        );
    }

    #[test]
    fn records_always_carry_an_error_text() {
        let ok = record_json(&record(1, "a", json!({}), Ok(Value::Null)));
        assert_eq!(ok["error"], "");
        let failed = record_json(&record(2, "a", json!({}), Err("no")));
        assert_eq!(failed["error"], "no");
    }
}
