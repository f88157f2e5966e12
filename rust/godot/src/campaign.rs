//! `Campaign`: a tabletop campaign as a Godot resource (`docs/campaigns.md`).
//!
//! The data and the rules are the core's ([`agents_core::campaign`]); this class converts at the
//! edges and turns the core's effects into signals. GM tool calls run synchronously on the main
//! thread ([method Campaign.call_tools]). A GM turn ([method Campaign.take_turn]) asks the attached
//! agent's kind of brain on the runtime's tokio threads — answers are tried on a copy of the
//! campaign, nothing changes meanwhile — and is finished on the main thread: the resource
//! listens to the scene tree's `process_frame` while a turn is out, applies the answer to the
//! campaign as it is then, and emits [signal Campaign.turn_completed].

use std::path::PathBuf;
use std::sync::Arc;

use agents_core::campaign::turn::{self, Decided, TurnEntry, TurnRequest};
use agents_core::campaign::{self as core, AppliedAction, BatchOutcome, Effect, file};
use agents_core::runtime::{Runtime, RuntimeError, RuntimeErrorCode};
use godot::classes::{Engine, IResource, Resource, SceneTree};
use godot::prelude::*;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::agent_runtime::AgentRuntime;
use crate::convert;
use crate::errors::{GodotErrorCode, LastError};
use crate::operation::AgentOperation;

/// The name of the method polled each frame while a turn is out.
const POLL_METHOD: &str = "_poll_turn";

/// The `error.code` of an awaited turn that could not start ([method Campaign.turn]).
const TURN_REFUSED: &str = GodotErrorCode::TurnRefused.as_str();
/// The `error.code` of an awaited turn whose GM could not decide.
const TURN_FAILED: &str = GodotErrorCode::TurnFailed.as_str();
/// A call's argument is wrong (a campaign that does not parse, an actor not in the party).
const INVALID_ARGUMENT: &str = GodotErrorCode::InvalidArgument.as_str();
/// A file could not be read or written.
const FILE_ERROR: &str = GodotErrorCode::FileError.as_str();

/// A turn whose answer is being decided.
struct Pending {
    number: u64,
    user_input: String,
    actor: Option<String>,
    answer: oneshot::Receiver<Result<Decided, RuntimeError>>,
}

/// A tabletop campaign (`campaign.json`): a party of actors on a map of areas with one-way
/// exits, the GM tools `move`, `move_options`, `hp_delta` and `map_generate`, and GM turns
/// answered by an agent of an [AgentRuntime].
///
/// ```gdscript
/// var campaign := Campaign.new()
/// campaign.load_file("user://campaigns/camp_0001/campaign.json")  # or reset(["pc_001"])
/// campaign.actor_moved.connect(func(id, from, to): print(id, " ", from, " → ", to))
/// var out := campaign.call_tools([{"id": "call_1", "tool": "move",
///         "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}])
/// # out = {applied_actions: [...], tool_feedback: null}
/// var gm_agent_id: String = $AgentRuntime.spawn_agent({"name": "Morgana", "role": "game master"})
/// campaign.attach_gm($AgentRuntime, gm_agent_id)
/// campaign.turn_completed.connect(func(entry): print(entry.assistant_text))
/// campaign.take_turn("Where can I go?")
/// ```
///
/// A call is checked against the allowlist, then the turn actor's character state, then its
/// arguments; the first failure decides its `status` (`rejected` / `error`) and `reason`
/// (`tool_not_allowed`, `actor_state_restricted`, `invalid_actor_state`, `invalid_args`), and a
/// failed call changes nothing. With [member autosave] and a [member path], the file is saved
/// (atomically) whenever a call was applied.
#[derive(GodotClass)]
#[class(base = Resource, tool)]
pub struct Campaign {
    /// The `campaign.json` this campaign is loaded from and saved to (`res://`, `user://` or an
    /// absolute path; kept as a path, never turned into a `uid://`). Set by [method load_file]
    /// and [method save_file].
    #[var(hint = FILE_PATH, hint_string = "*.json", usage_flags = [DEFAULT])]
    path: GString,
    /// Save to [member path] after every call or turn that applied something.
    #[export]
    autosave: bool,
    data: core::Campaign,
    turns: Vec<TurnEntry>,
    actions: Vec<AppliedAction>,
    gm: Option<(Gd<AgentRuntime>, String)>,
    pending: Option<Pending>,
    /// The awaited turn ([method turn]), finished with the turn.
    waiting: Option<Gd<AgentOperation>>,
    last_error: LastError,
    base: Base<Resource>,
}

#[godot_api]
impl IResource for Campaign {
    fn init(base: Base<Resource>) -> Self {
        Campaign {
            path: GString::new(),
            autosave: true,
            data: core::Campaign::new("camp_0001", &[]),
            turns: Vec::new(),
            actions: Vec::new(),
            gm: None,
            pending: None,
            waiting: None,
            last_error: LastError::default(),
            base,
        }
    }
}

/// A Godot path as a file path (`res://` and `user://` globalized).
fn os_path(path: &str) -> PathBuf {
    PathBuf::from(crate::paths::globalize_path(path))
}

fn strings(items: &PackedStringArray) -> Vec<String> {
    items.as_slice().iter().map(|s| s.to_string()).collect()
}

#[godot_api]
impl Campaign {
    /// An actor moved (a `move` call).
    #[signal]
    fn actor_moved(actor_id: GString, from_area_id: GString, to_area_id: GString);

    /// An actor's hp changed (an `hp_delta` call; also a hit at 0, old and new both 0).
    #[signal]
    fn hp_changed(actor_id: GString, old_hp: i64, new_hp: i64);

    /// An actor's character state changed (`alive` → `dying` at hp 0, `dying` → `alive` when
    /// healed).
    #[signal]
    fn actor_state_changed(actor_id: GString, old_state: GString, new_state: GString);

    /// A layer of areas was generated (`map_generate`): the new ids, and their parent (`""` for a
    /// root layer).
    #[signal]
    fn map_generated(created_area_ids: PackedStringArray, parent_area_id: GString);

    /// A GM turn ended: its log entry, a Dictionary with `turn_id`, `timestamp`, `user_input`,
    /// `actor_id`, `dialog_type`, `dialog_type_source`, `assistant_text`, `tool_calls`,
    /// `applied_actions`, `tool_feedback`, `state_summary` and `repairs`. The effects' signals
    /// come first.
    #[signal]
    fn turn_completed(entry: VarDictionary);

    /// A GM turn could not run (the GM agent is gone, its brain did not answer); nothing
    /// changed.
    #[signal]
    fn turn_failed(message: GString);

    /// A call on this campaign failed, or a turn did: [param code] (one of the `ERROR_*`
    /// constants of [AgentConstants]) and [param message], as [method get_last_error_code] and
    /// [method get_last_error] keep them (every class of the addon reports a failed call this
    /// way). A failed turn emits this after [signal turn_failed].
    #[signal]
    fn error_occurred(code: GString, message: GString);

    /// Starts over with a fresh campaign: the starter map (`area_001` "Starting Area" →
    /// `area_002` "Side Room"), [param party] (empty: `["pc_001"]`) in `area_001` with 10 hp.
    /// The logs are emptied; [member path] stays.
    #[func]
    pub fn reset(&mut self, party: PackedStringArray) {
        self.data = core::Campaign::new(self.data.id.clone(), &strings(&party));
        self.turns.clear();
        self.actions.clear();
        self.last_error.clear();
    }

    /// Loads `campaign.json` from [param file_path] (older layouts are migrated) and its
    /// `turn_log.jsonl` beside it; sets [member path]. Returns `false` with
    /// [method get_last_error] naming every problem when the file cannot be read or is invalid
    /// (the campaign is then unchanged).
    #[func]
    pub fn load_file(&mut self, file_path: GString) -> bool {
        let os = os_path(&file_path.to_string());
        match file::load(&os) {
            Ok(loaded) => {
                for warning in &loaded.warnings {
                    godot_warn!("Campaign {}: {warning}", os.display());
                }
                self.data = loaded.campaign;
                self.turns = std::fs::read_to_string(file::turn_log_path(&os))
                    .map(|text| {
                        text.lines()
                            .filter_map(|l| serde_json::from_str(l).ok())
                            .collect()
                    })
                    .unwrap_or_default();
                self.actions = self
                    .turns
                    .iter()
                    .flat_map(|t| t.applied_actions.clone())
                    .collect();
                self.path = file_path;
                self.last_error.clear();
                true
            }
            Err(e) => self.fail(FILE_ERROR, format!("load_file: {e}")),
        }
    }

    /// Saves the campaign to [param file_path] (default: [member path]) atomically, and makes
    /// it the [member path]. Returns `false` when there is no path, the map is invalid or the
    /// file cannot be written.
    #[func]
    pub fn save_file(&mut self, #[opt(default = "")] file_path: GString) -> bool {
        let target = if file_path.is_empty() {
            self.path.clone()
        } else {
            file_path
        };
        if target.is_empty() {
            return self.fail(
                INVALID_ARGUMENT,
                "save_file: no path (pass one, or set path)".into(),
            );
        }
        let os = os_path(&target.to_string());
        if let Some(dir) = os.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return self.fail(
                FILE_ERROR,
                format!("save_file: cannot create {}: {e}", dir.display()),
            );
        }
        match file::save(&os, &self.data) {
            Ok(()) => {
                self.path = target;
                self.last_error.clear();
                true
            }
            Err(e) => self.fail(FILE_ERROR, format!("save_file: {e}")),
        }
    }

    /// Replaces the campaign with the one in [param json] (the text of a `campaign.json`).
    /// Returns `false` naming every problem when it is not a valid campaign.
    #[func]
    pub fn load_json(&mut self, json: GString) -> bool {
        match file::parse(&json.to_string()) {
            Ok(loaded) => {
                self.data = loaded.campaign;
                self.last_error.clear();
                true
            }
            Err(e) => self.fail(INVALID_ARGUMENT, format!("load_json: {e}")),
        }
    }

    /// The campaign as the text of its `campaign.json`.
    #[func]
    pub fn to_json(&self) -> GString {
        GString::from(file::to_text(&self.data).as_str())
    }

    /// Its id (`camp_0001`).
    #[func]
    pub fn get_campaign_id(&self) -> GString {
        GString::from(self.data.id.as_str())
    }

    /// The party, in order.
    #[func]
    pub fn get_party(&self) -> PackedStringArray {
        convert::strings_to_packed(&self.data.selected.party_character_ids)
    }

    /// Whose turn it is unless a turn names another party member.
    #[func]
    pub fn get_active_actor_id(&self) -> GString {
        GString::from(self.data.selected.active_actor_id.as_str())
    }

    /// Makes [param actor_id] (a party member) the active actor. Returns `false` otherwise.
    #[func]
    pub fn set_active_actor_id(&mut self, actor_id: GString) -> bool {
        let id = actor_id.to_string();
        if !self.data.selected.party_character_ids.contains(&id) {
            return self.fail(
                INVALID_ARGUMENT,
                format!("set_active_actor_id: '{id}' is not in the party"),
            );
        }
        self.data.selected.active_actor_id = id;
        self.last_error.clear();
        self.autosave_now();
        true
    }

    /// The GM tools that may be called.
    #[func]
    pub fn get_allowlist(&self) -> PackedStringArray {
        convert::strings_to_packed(&self.data.allowlist)
    }

    /// Sets the GM tools that may be called (names not in it are refused with
    /// `tool_not_allowed`).
    #[func]
    pub fn set_allowlist(&mut self, tools: PackedStringArray) {
        self.data.allowlist = strings(&tools);
        self.autosave_now();
    }

    /// Every actor: `{id: {position, hp, character_state, meta}}` (`position` is `null` for an
    /// actor off the map).
    #[func]
    pub fn get_actors(&self) -> VarDictionary {
        convert::serialize_to_dictionary(&self.data.actors)
    }

    /// One actor as in [method get_actors], or an empty Dictionary.
    #[func]
    pub fn get_actor(&self, actor_id: GString) -> VarDictionary {
        match self.data.actors.get(&actor_id.to_string()) {
            Some(actor) => convert::serialize_to_dictionary(actor),
            None => VarDictionary::new(),
        }
    }

    /// Every area: `{id: {id, name, parent_area_id, reachable_area_ids}}`; reachability is
    /// one-way.
    #[func]
    pub fn get_areas(&self) -> VarDictionary {
        convert::serialize_to_dictionary(&self.data.map.areas)
    }

    /// One area as in [method get_areas], or an empty Dictionary.
    #[func]
    pub fn get_area(&self, area_id: GString) -> VarDictionary {
        match self.data.map.areas.get(&area_id.to_string()) {
            Some(area) => convert::serialize_to_dictionary(area),
            None => VarDictionary::new(),
        }
    }

    /// The one-way connections, sorted: `[{from_area_id, to_area_id}]`.
    #[func]
    pub fn get_connections(&self) -> Array<VarDictionary> {
        self.data
            .map
            .connections()
            .into_iter()
            .map(|c| {
                convert::json_to_dictionary(
                    &json!({"from_area_id": c.from_area_id, "to_area_id": c.to_area_id}),
                )
            })
            .collect()
    }

    /// The GM turns so far (loaded from `turn_log.jsonl` beside the file, then this session's),
    /// oldest first, as [signal turn_completed] gives them.
    #[func]
    pub fn get_turn_log(&self) -> Array<VarDictionary> {
        self.turns
            .iter()
            .map(convert::serialize_to_dictionary)
            .collect()
    }

    /// Every applied call so far (of [method call_tools] and of turns):
    /// `{tool, args, result, timestamp}`.
    #[func]
    pub fn get_action_log(&self) -> Array<VarDictionary> {
        self.actions
            .iter()
            .map(convert::serialize_to_dictionary)
            .collect()
    }

    /// Runs GM tool calls (`[{id, tool, args, reason?}]`; a missing id becomes `call_NNN`) in
    /// order for the turn actor ([param actor_id], a party member; default the active actor).
    /// Returns `{applied_actions, tool_feedback}` (`tool_feedback` null when nothing failed);
    /// the effects' signals are emitted first. A malformed list or a turn actor outside the party
    /// runs nothing and returns `{applied_actions: [], tool_feedback: null, error: "…"}`.
    #[func]
    pub fn call_tools(
        &mut self,
        calls: VarArray,
        #[opt(default = "")] actor_id: GString,
    ) -> VarDictionary {
        let refused = |this: &mut Self, message: String| {
            this.fail(INVALID_ARGUMENT, message.clone());
            convert::json_to_dictionary(
                &json!({"applied_actions": [], "tool_feedback": null, "error": message}),
            )
        };
        let value = match convert::array_to_json(&calls) {
            Ok(items) => Value::Array(items),
            Err(e) => return refused(self, format!("call_tools: {e}")),
        };
        let calls = match turn::parse_calls(&value) {
            Ok(calls) => calls,
            Err(e) => return refused(self, format!("call_tools: {e}")),
        };
        let actor = (!actor_id.is_empty()).then(|| actor_id.to_string());
        let outcome = match self.data.run_calls(&calls, actor.as_deref()) {
            Ok(outcome) => outcome,
            Err(e) => return refused(self, format!("call_tools: {e}")),
        };
        self.last_error.clear();
        self.applied(&outcome.applied_actions, &outcome.effects);
        let BatchOutcome {
            applied_actions,
            tool_feedback,
            ..
        } = outcome;
        convert::json_to_dictionary(&json!({
            "applied_actions": applied_actions,
            "tool_feedback": tool_feedback,
        }))
    }

    /// Makes agent [param agent_id] of [param runtime] (which must be running) the game master:
    /// [method take_turn] asks its kind of brain, with its name and role prompt, the GM tools
    /// and this campaign as its context. Returns `false` when the runtime is not running or has
    /// no such agent.
    #[func]
    pub fn attach_gm(&mut self, runtime: Option<Gd<AgentRuntime>>, agent_id: GString) -> bool {
        let Some(runtime) = runtime else {
            return self.fail(
                INVALID_ARGUMENT,
                "attach_gm: no AgentRuntime given (null)".into(),
            );
        };
        let Some(core) = runtime.bind().core_runtime() else {
            return self.fail(
                GodotErrorCode::NotRunning.as_str(),
                "attach_gm: the AgentRuntime is not running".into(),
            );
        };
        let id = agent_id.to_string();
        if core.state(&id).is_none() {
            return self.fail(
                RuntimeErrorCode::UnknownAgent.as_str(),
                format!("attach_gm: unknown agent '{id}'"),
            );
        }
        self.gm = Some((runtime, id));
        self.last_error.clear();
        true
    }

    /// The game master's agent id, or `""`.
    #[func]
    pub fn get_gm_agent_id(&self) -> GString {
        self.gm
            .as_ref()
            .map_or_else(GString::new, |(_, id)| GString::from(id.as_str()))
    }

    /// True while a turn's answer is being decided.
    #[func]
    pub fn is_turn_running(&self) -> bool {
        self.pending.is_some()
    }

    /// Starts a GM turn: [param user_input] from the turn actor ([param actor_id], a party
    /// member; default the active actor). The attached GM answers on the runtime's threads;
    /// the answer is applied on the main thread and [signal turn_completed] (or
    /// [signal turn_failed]) follows, the turn kept in the runtime's database and appended to
    /// `turn_log.jsonl` beside [member path]. Returns `false` when no GM is attached, a turn is
    /// already running or the actor is not in the party.
    #[func]
    pub fn take_turn(
        &mut self,
        user_input: GString,
        #[opt(default = "")] actor_id: GString,
    ) -> bool {
        if self.pending.is_some() {
            return self.fail(TURN_REFUSED, "take_turn: a turn is running already".into());
        }
        let actor = (!actor_id.is_empty()).then(|| actor_id.to_string());
        if let Err(e) = self.data.turn_actor(actor.as_deref()) {
            return self.fail(TURN_REFUSED, format!("take_turn: {e}"));
        }
        let Some(core) = self.gm_runtime() else {
            return false;
        };
        let gm_agent = self
            .gm
            .as_ref()
            .map(|(_, id)| id.clone())
            .unwrap_or_default();
        let number = self.turn_number(&core);
        let (tx, rx) = oneshot::channel();
        let snapshot = self.data.clone();
        let (input, who) = (user_input.to_string(), actor.clone());
        let spawned = crate::guard::guarded(
            "take_turn",
            || {
                let runtime = core.clone();
                core.handle().spawn(async move {
                    let request = TurnRequest {
                        number,
                        user_input: &input,
                        actor: who.as_deref(),
                    };
                    let answer = runtime.gm_decide(&snapshot, &gm_agent, &request).await;
                    let _ = tx.send(answer);
                });
                Ok(())
            },
            |message| message,
        );
        if let Err(e) = spawned {
            return self.fail(GodotErrorCode::InternalError.as_str(), e);
        }
        self.pending = Some(Pending {
            number,
            user_input: user_input.to_string(),
            actor,
            answer: rx,
        });
        self.listen_to_frames(true);
        self.last_error.clear();
        true
    }

    /// Takes a GM turn as [method take_turn] does and returns the signal to await for its end:
    /// `var result = await campaign.turn("Where can I go?")`. The result ([AgentOperation]) has
    /// `ok`, `entry` (the turn, as [signal turn_completed] gives it) and `error`: `turn_refused`
    /// (no GM attached, its runtime not running, a turn already running, an actor outside the
    /// party) or `turn_failed` (the GM could not decide; the message says why). It always
    /// resolves.
    #[func]
    pub fn turn(&mut self, user_input: GString, #[opt(default = "")] actor_id: GString) -> Signal {
        let op = self.turn_async(user_input, actor_id);
        AgentOperation::signal(&op)
    }

    /// Like [method turn], returning the [AgentOperation] itself.
    #[func]
    pub fn turn_async(
        &mut self,
        user_input: GString,
        #[opt(default = "")] actor_id: GString,
    ) -> Gd<AgentOperation> {
        if !self.take_turn(user_input, actor_id) {
            return AgentOperation::done(Err((
                TURN_REFUSED,
                self.last_error.message().to_string(),
            )));
        }
        let op = AgentOperation::start();
        self.waiting = Some(op.clone());
        op
    }

    /// Why the last call failed (or the last turn); empty after a call that succeeded.
    #[func]
    pub fn get_last_error(&self) -> GString {
        self.last_error.message_gstring()
    }

    /// The code of the last failed call or turn (one of the `ERROR_*` constants of
    /// [AgentConstants]: `turn_refused`, `turn_failed`, `invalid_argument`, `file_error`, …);
    /// empty after a call that succeeded.
    #[func]
    pub fn get_last_error_code(&self) -> GString {
        self.last_error.code_gstring()
    }

    /// Called each frame while a turn is out (connected to the scene tree's `process_frame`).
    #[func]
    fn _poll_turn(&mut self) {
        let Some(pending) = self.pending.as_mut() else {
            self.listen_to_frames(false);
            return;
        };
        let answer = match pending.answer.try_recv() {
            Ok(answer) => answer,
            Err(oneshot::error::TryRecvError::Empty) => return,
            Err(oneshot::error::TryRecvError::Closed) => Err(RuntimeError::ShutDown),
        };
        let Some(pending) = self.pending.take() else {
            return;
        };
        self.listen_to_frames(false);
        let finished = answer.map_err(|e| e.to_string()).and_then(|decided| {
            let request = TurnRequest {
                number: pending.number,
                user_input: &pending.user_input,
                actor: pending.actor.as_deref(),
            };
            turn::finish(&mut self.data, decided, &request).map_err(|e| e.to_string())
        });
        match finished {
            Ok(entry) => self.completed(entry),
            Err(message) => {
                if let Some(mut op) = self.waiting.take() {
                    op.bind_mut().finish(Err((TURN_FAILED, message.clone())));
                }
                self.signals().turn_failed().emit(message.as_str());
                self.fail(TURN_FAILED, format!("take_turn: {message}"));
            }
        }
    }
}

impl Campaign {
    /// Records a failure and emits [signal error_occurred]; returns `false` for
    /// `return self.fail(…)`.
    fn fail(&mut self, code: &str, message: String) -> bool {
        self.last_error.set(code, message.as_str());
        self.signals().error_occurred().emit(code, message.as_str());
        false
    }

    /// The running core runtime of the attached GM.
    fn gm_runtime(&mut self) -> Option<Arc<Runtime>> {
        let Some((runtime, _)) = self.gm.as_ref() else {
            self.fail(
                TURN_REFUSED,
                "take_turn: no game master attached (attach_gm first)".into(),
            );
            return None;
        };
        let core = runtime.bind().core_runtime();
        if core.is_none() {
            self.fail(
                TURN_REFUSED,
                "take_turn: the GM's AgentRuntime is not running".into(),
            );
        }
        core
    }

    /// The next turn's number: one past the turns kept in the runtime's database and in the
    /// log loaded with the file.
    fn turn_number(&self, core: &Runtime) -> u64 {
        let stored = core.campaign_turn_count(&self.data.id).unwrap_or(0) as usize;
        stored.max(self.turns.len()) as u64 + 1
    }

    /// Connects (or disconnects) [`POLL_METHOD`] to the scene tree's `process_frame`.
    fn listen_to_frames(&mut self, on: bool) {
        let Some(tree) = Engine::singleton()
            .get_main_loop()
            .and_then(|l| l.try_cast::<SceneTree>().ok())
        else {
            return;
        };
        let mut tree = tree;
        let callable = Callable::from_object_method(&self.to_gd(), POLL_METHOD);
        let connected = tree.is_connected("process_frame", &callable);
        if on && !connected {
            tree.connect("process_frame", &callable);
        } else if !on && connected {
            tree.disconnect("process_frame", &callable);
        }
    }

    /// A finished turn: kept, logged, saved, signalled.
    fn completed(&mut self, entry: TurnEntry) {
        if let Some((runtime, _)) = &self.gm
            && let Some(core) = runtime.bind().core_runtime()
        {
            core.record_campaign_turn(&self.data.id, &entry);
        }
        if !self.path.is_empty() {
            let log = file::turn_log_path(&os_path(&self.path.to_string()));
            if let Err(e) = file::append_turn(&log, &entry) {
                godot_warn!("Campaign: {e}");
            }
        }
        self.applied(&entry.applied_actions, &entry.effects);
        let dict = convert::serialize_to_dictionary(&entry);
        self.turns.push(entry);
        if let Some(mut op) = self.waiting.take() {
            let mut keys = VarDictionary::new();
            crate::guard::put(&mut keys, "entry", dict.to_variant());
            op.bind_mut().finish(Ok(keys));
        }
        self.signals().turn_completed().emit(&dict);
    }

    /// After applied calls: the action log, the autosave, the effects' signals.
    fn applied(&mut self, actions: &[AppliedAction], effects: &[Effect]) {
        self.actions.extend_from_slice(actions);
        let changed = core::gm::changes_campaign(actions);
        if changed {
            self.autosave_now();
        }
        for effect in effects {
            match effect {
                Effect::ActorMoved {
                    actor_id,
                    from_area_id,
                    to_area_id,
                } => self.signals().actor_moved().emit(
                    actor_id.as_str(),
                    from_area_id.as_str(),
                    to_area_id.as_str(),
                ),
                Effect::HpChanged {
                    actor_id,
                    old_hp,
                    new_hp,
                } => self
                    .signals()
                    .hp_changed()
                    .emit(actor_id.as_str(), *old_hp, *new_hp),
                Effect::ActorStateChanged {
                    actor_id,
                    old_state,
                    new_state,
                } => self.signals().actor_state_changed().emit(
                    actor_id.as_str(),
                    old_state.as_str(),
                    new_state.as_str(),
                ),
                Effect::MapGenerated {
                    created_area_ids,
                    parent_area_id,
                } => self.signals().map_generated().emit(
                    &convert::strings_to_packed(created_area_ids),
                    parent_area_id.as_deref().unwrap_or(""),
                ),
            }
        }
    }

    /// Saves to [member path] when [member autosave] is on and there is a path.
    fn autosave_now(&mut self) {
        if self.autosave && !self.path.is_empty() {
            let os = os_path(&self.path.to_string());
            if let Err(e) = file::save(&os, &self.data) {
                self.fail(FILE_ERROR, format!("autosave: {e}"));
                godot_warn!("Campaign: autosave to {}: {e}", os.display());
            }
        }
    }
}
