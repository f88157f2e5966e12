//! `AgentNode`: one agent as a node under the character it drives, and `AgentAsk`, an awaited
//! question to it.
//!
//! Threading and borrows: the node talks to the core runtime through the `Arc` its
//! [AgentRuntime] hands out (never binding the runtime node while it emits), and the runtime
//! delivers the node's events on the main thread as it drains its queue
//! ([`AgentNode::deliver`]), with the runtime made re-entrant first, so a handler may call back
//! into either node.

use std::sync::Arc;

use agents_core::agent_state::AgentState;
use agents_core::bus::BusMessage;

use crate::agent_memory::{recalled_to_array, remember_request};
use crate::agent_runtime::failure;
use agents_core::moves::{MoveOutcome, Movement};
use agents_core::runtime::{AgentConfig as CoreConfig, Runtime, RuntimeErrorCode};
use godot::classes::{Engine, INode, IRefCounted, Node, RefCounted};
use godot::prelude::*;

use crate::agent_config::AgentConfig;
use crate::agent_runtime::{AgentRuntime, reply_to_dictionary};
use crate::body::{Body, BoundNode, Step, Walk};
use crate::convert;
use crate::errors::{GodotErrorCode, LastError};
use crate::guard::put;

/// The `code` of an ask that could not be sent: the node has no running agent (no
/// [AgentRuntime] found, the runtime not started, the spawn failed).
const NOT_SPAWNED: &str = GodotErrorCode::NotSpawned.as_str();
/// The `code` of an ask whose agent stopped (terminated, the runtime stopped, the node left
/// the tree) before it answered.
const AGENT_STOPPED: &str = GodotErrorCode::AgentStopped.as_str();

/// One question to an agent, in flight: [method AgentNode.ask] returns its [signal finished],
/// so `await` waits for the answer to that line; [method AgentNode.ask_async] returns the
/// object itself, to poll or to keep. It always finishes: with the agent's answer, or with a
/// failure (the agent could not decide, stopped before answering, or had never started).
///
/// ```gdscript
/// var reply: Dictionary = await $Baker/AgentNode.ask("Is the bread ready?")
/// print(reply.text if reply.ok else reply.error.message)
///
/// var pending: AgentAsk = $Baker/AgentNode.ask_async("And the rye?")
/// # … later, in _process:
/// if pending.is_finished():
///     print(pending.get_reply().text)
/// ```
#[derive(GodotClass)]
#[class(init, base = RefCounted)]
pub struct AgentAsk {
    /// The line's message id (`0` when it could not be sent).
    message_id: i64,
    /// The reply, once finished.
    reply: VarDictionary,
    finished: bool,
    base: Base<RefCounted>,
}

#[godot_api]
impl IRefCounted for AgentAsk {}

#[godot_api]
impl AgentAsk {
    /// The answer, a Dictionary with `ok` (bool), `text` (String), `actions` (Array), `error`
    /// (Dictionary), `message_id` (int) and `agent_id` (String). `text` is what the agent said
    /// (its lines joined by a newline), `actions` its calls (each with `id`, `tool`, `args`,
    /// `outcome`, `detail`); when `ok` is false, `error` is `{code, message}`: `not_spawned`,
    /// `agent_stopped`, `invalid_message`, or the agent's failure (`brain_error`,
    /// `budget_exhausted`, …).
    #[signal]
    fn finished(reply: VarDictionary);

    /// Whether it has finished.
    #[func]
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The line's message id (`0` when it could not be sent).
    #[func]
    pub fn get_message_id(&self) -> i64 {
        self.message_id
    }

    /// The reply once finished (see [signal finished]); empty before.
    #[func]
    pub fn get_reply(&self) -> VarDictionary {
        self.reply.clone()
    }

    /// Emits [signal finished] (deferred from `finish`; `_keep` holds this object alive until
    /// then).
    #[func(rename = _emit_finished)]
    fn emit_finished(&mut self, _keep: Variant) {
        let reply = self.reply.clone();
        self.signals().finished().emit(&reply);
    }
}

impl AgentAsk {
    /// Finishes it (once): the reply is readable now, and [signal finished] is emitted at the
    /// next idle time — after the caller began to await it, and never while the runtime or the
    /// node is busy, so the awaiting code may do anything (free the node, ask again).
    fn finish(&mut self, reply: VarDictionary) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.reply = reply;
        let keep = self.to_gd().to_variant();
        self.base_mut().call_deferred("_emit_finished", &[keep]);
    }
}

/// A tool of one node ([method AgentNode.register_tool]), kept to register with the runtime
/// when the agent spawns.
#[derive(Clone)]
struct OwnTool {
    name: GString,
    description: GString,
    parameters: VarDictionary,
    function: Callable,
    read_only: bool,
}

impl OwnTool {
    fn as_parts(&self) -> crate::script_tools::ToolParts {
        crate::script_tools::ToolParts {
            name: self.name.to_string(),
            description: self.description.to_string(),
            parameters: self.parameters.clone(),
            function: self.function.clone(),
            read_only: self.read_only,
        }
    }
}

/// A failed reply: `ok` false and `error` `{code, message}`.
fn failed_reply(agent_id: &str, message_id: i64, code: &str, message: &str) -> VarDictionary {
    let mut d = VarDictionary::new();
    put(&mut d, "ok", false.to_variant());
    put(&mut d, "text", "".to_variant());
    put(&mut d, "actions", VarArray::new().to_variant());
    let mut error = VarDictionary::new();
    put(&mut error, "code", code.to_variant());
    put(&mut error, "message", message.to_variant());
    put(&mut d, "error", error.to_variant());
    put(&mut d, "message_id", message_id.to_variant());
    put(&mut d, "agent_id", agent_id.to_variant());
    d
}

/// One agent as a node: add it under the character it drives (any `Node2D` or `Node3D`,
/// typically a `CharacterBody2D`), give it an [AgentConfig], and the agent runs while the node
/// is in the tree — spawned when it enters, released (or terminated) when it leaves.
///
/// ```gdscript
/// @onready var baker: AgentNode = $Baker/AgentNode
///
/// func _ready() -> void:
///     baker.spoke.connect(func(text, _to): $Baker/Bubble.text = text)
///
/// func _on_talk_pressed() -> void:
///     var reply: Dictionary = await baker.ask("Is the bread ready?")
///     if reply.ok:
///         print(reply.text)
///     else:
///         print("no answer: ", reply.error.message)
/// ```
///
/// The node finds its runtime itself: the nearest [AgentRuntime] going up the tree — an
/// ancestor, or a child of an ancestor (beside the character, beside the level) — and last an
/// autoload (a child of the root: add an `AgentRuntime` scene in Project Settings → Autoload,
/// so agents outlive scene changes). It spawns once that runtime runs.
///
/// Give it a [member key] so the same character gets the same stored agent, and its memory, in
/// every run (a saved game resumes it); two nodes with one key in one runtime are refused. Its
/// signals are about its own agent only: no filtering by id.
#[derive(GodotClass)]
#[class(tool, init, base = Node)]
pub struct AgentNode {
    /// How the agent is set up (name, role, prompt, brain, timings, tool sets, autonomy).
    #[export]
    config: Option<Gd<AgentConfig>>,
    /// The game's stable name for this character (`"baker_tom"`): the node resumes the stored
    /// agent with this key (the newest one not terminated) or creates one that keeps it, so its
    /// memory carries over between runs. Empty: a new agent every time the node enters the
    /// tree. At most one running agent per key (a second node is refused with
    /// `already_running`).
    #[export(placeholder = "a new agent each run")]
    key: GString,
    /// What happens to the agent when the node leaves the tree: off (default), it is released —
    /// stopped and stored, resumed the next time a node with its [member key] enters; on, it is
    /// terminated (its history stays readable, it does not resume).
    #[export]
    terminate_on_exit: bool,
    /// Report the parent's global position to the agent as it moves (a `Node2D`'s
    /// `global_position`; a `Node3D`'s `x` and `z`): who hears whom, and the `nearby` agents
    /// its brain is shown, follow the game's characters. The runtime reads the bodies in turns,
    /// each within [member AgentRuntime.position_sync_interval]. Off: the agent lives in the
    /// runtime's own world ([member AgentRuntime.world_bounds]) and moves there.
    #[export]
    #[init(val = true)]
    sync_position: bool,
    /// Walk the parent where the agent decides to go: along the path of its
    /// `NavigationAgent2D`/`3D` child when it has one (around walls), else in a straight line;
    /// a `CharacterBody2D`/`3D` moves with `move_and_slide`. How the walk ended (arrived, or
    /// blocked and why) goes back to the agent. Off: the node only emits
    /// [signal move_requested], and the game moves the character and calls
    /// [method report_arrived] or [method report_blocked]. Used with [member sync_position].
    #[export]
    #[init(val = true)]
    drive_movement: bool,
    /// Walking speed in units per second (pixels in 2D, metres in 3D). Negative (the
    /// default): a walking pace in the body's units — 100 pixels a second for a `Node2D`,
    /// 2 metres a second for a `Node3D`.
    #[export(range = (-1.0, 10000.0, or_greater))]
    #[init(val = -1.0)]
    move_speed: f64,
    /// A walk that makes no headway (a tenth of what it could cover) for this many seconds is
    /// blocked ("something is in the way"). `0`: never.
    #[export(range = (0.0, 60.0, or_greater))]
    #[init(val = 2.0)]
    stuck_seconds: f64,

    agent_id: String,
    /// The move under way that this node drives, if any.
    walk: Option<Walk>,
    /// The number of the agent's last requested move (its finish is reported as
    /// [signal move_finished]).
    last_move: u64,
    /// Its own tools written in GDScript ([method register_tool]).
    own_tools: Vec<OwnTool>,
    /// The runtime node it found (by id: the runtime may be freed first).
    runtime: Option<InstanceId>,
    core: Option<Arc<Runtime>>,
    asks: Vec<(i64, Gd<AgentAsk>)>,
    last_error: LastError,
    /// Its agent's state as last reported ([signal state_changed]); empty while it does not run.
    state: &'static str,
    base: Base<Node>,
}

#[godot_api]
impl INode for AgentNode {
    fn enter_tree(&mut self) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        // Deferred: an AgentRuntime ancestor is ready (and started) after its children. Every
        // time it enters: a node moved to another parent spawns again.
        self.base_mut().call_deferred("_attach", &[]);
    }

    fn ready(&mut self) {
        // Physics runs only while it walks its body.
        self.base_mut().set_physics_process(false);
    }

    fn physics_process(&mut self, delta: f64) {
        let Some(mut walk) = self.walk.take() else {
            self.base_mut().set_physics_process(false);
            return;
        };
        let Some(mut body) = self.body() else {
            let _ = self.finish_walk(walk.move_id, MoveOutcome::Blocked("it has no body".into()));
            return;
        };
        let speed = if self.move_speed >= 0.0 {
            self.move_speed
        } else {
            body.walking_speed()
        };
        let outcome = match walk.step(&mut body, delta, speed, self.stuck_seconds) {
            Step::Walking => {
                self.walk = Some(walk);
                return;
            }
            Step::Arrived => MoveOutcome::Arrived,
            Step::Blocked(reason) => MoveOutcome::Blocked(reason),
        };
        // A failure is reported by `finish_walk` (error_occurred).
        let _ = self.finish_walk(walk.move_id, outcome);
    }

    fn exit_tree(&mut self) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        self.detach();
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.configuration_warnings()
    }
}

#[godot_api]
impl AgentNode {
    /// Its agent runs: [param agent_id] (`agent_007`), [param resumed] when it came back with
    /// its stored memory.
    #[signal]
    fn spawned(agent_id: GString, resumed: bool);

    /// It said [param text] to [param recipients] (agent ids or the player id; empty: to no one
    /// in particular). [param dialog_type] is the kind of line, one of the `DIALOG_*` constants
    /// of [AgentConstants] (`reply`, `chat`, `task_update`, …; a model may use others).
    #[signal]
    fn spoke(text: GString, recipients: PackedStringArray, dialog_type: GString);

    /// Its state changed: `idle`, `listening`, `thinking` or `speaking`.
    #[signal]
    fn state_changed(old_state: GString, new_state: GString);

    /// It moved in the runtime's world, from [param from] to [param to].
    #[signal]
    fn moved(from: Vector2, to: Vector2);

    /// Its agent decided to go to [param target] (a `Vector2`, or a `Vector3` at the body's
    /// height). With [member drive_movement] the node walks there itself; off, move the
    /// character and call [method report_arrived] or [method report_blocked]. A new request
    /// replaces the one under way.
    #[signal]
    fn move_requested(target: Variant);

    /// Its move ended: [param arrived], or blocked and [param reason] says why (the target is
    /// off the navigation map, no path, stuck, or the game's reason). Its agent's next
    /// decision is told.
    #[signal]
    fn move_finished(arrived: bool, reason: GString);

    /// A decision answered lines said to it: [param reply] as [signal AgentAsk.finished] gives
    /// it (with `message_id` the first line's, `in_reply_to` them all).
    #[signal]
    fn replied(reply: VarDictionary);

    /// A piece of the line its model brain is writing, before [signal spoke].
    #[signal]
    fn speech_streamed(delta: GString);

    /// Its model brain started a call of [param tool] (arguments still streaming).
    #[signal]
    fn tool_called(tool: GString, call_id: GString);

    /// Its on-device brain's model file is downloading ([member AgentBrain.model_url]):
    /// [param received] bytes of [param total] ([code]-1[/code] when unknown).
    #[signal]
    fn model_downloading(received: i64, total: i64);

    /// Something went wrong for this agent, or a call on this node failed: [param code] is one
    /// of the `ERROR_*` constants of [AgentConstants] — the codes of
    /// [signal AgentRuntime.agent_error] (`brain_error`, `invalid_action`, …), of a failed spawn
    /// (`already_running` for a key in use, `invalid_config`, `unknown_brain`, `not_spawned`
    /// when no runtime was found) or of a call. [method get_last_error_code] and
    /// [method get_last_error] keep the last one.
    #[signal]
    fn error_occurred(code: GString, message: GString);

    /// Its agent stopped: `terminated`, or `shutdown` (released; it resumes with its key).
    #[signal]
    fn removed(reason: GString);

    /// Its agent formed a memory, or the game planted one ([method remember]): [param memory]
    /// as [signal AgentRuntime.agent_remembered] gives it (`memory_id`, `kind`, `text`,
    /// `importance`, `game_time`).
    #[signal]
    fn remembered(memory: VarDictionary);

    /// Its agent reflected: [param memories] as [signal AgentRuntime.agent_reflected] gives
    /// them (its insights, and what it now thinks of someone), drawn by `model` or `rules`.
    #[signal]
    fn reflected(memories: Array<VarDictionary>, drawn_by: GString);

    /// Asks the agent [param text] as the player and returns the signal to await for its answer
    /// to that line: `var reply = await npc.ask("Hello?")` (see [signal AgentAsk.finished] for
    /// the Dictionary). Answers are matched to their line, even with several in flight; a
    /// failure resolves it too (never a hang).
    #[func]
    pub fn ask(&mut self, text: GString) -> Signal {
        let ask = self.ask_object(text);
        Signal::from_object_signal(&ask, "finished")
    }

    /// Like [method ask], returning the [AgentAsk] itself (its [method AgentAsk.is_finished],
    /// its reply once finished).
    #[func]
    pub fn ask_async(&mut self, text: GString) -> Gd<AgentAsk> {
        self.ask_object(text)
    }

    /// Says [param text] to the agent as the player without waiting: returns the line's message
    /// id ([signal replied] names it), or `0` on an error ([method get_last_error]).
    #[func]
    pub fn say(&mut self, text: GString) -> i64 {
        match self.send(&text.to_string()) {
            Ok(id) => id,
            Err((code, message)) => {
                self.fail(code, &message);
                0
            }
        }
    }

    /// Tells the agent what it perceives ("The cellar door is locked."): shown to its next
    /// decision, once, without making it decide or answer. Returns `false` (and
    /// [signal error_occurred]) when it does not run, or the text is empty or longer than
    /// 2,000 characters (a memory's length).
    #[func]
    pub fn observe(&mut self, text: GString) -> bool {
        let result = match self.core.as_ref().filter(|_| !self.agent_id.is_empty()) {
            Some(core) => core
                .observe(&self.agent_id, &text.to_string())
                .map_err(|e| (e.code().as_str(), e.to_string())),
            None => Err(self.no_agent()),
        };
        match result {
            Ok(()) => true,
            Err((code, message)) => {
                self.fail(code, &message);
                false
            }
        }
    }

    /// Plants a memory in its agent's stream, with the arguments of
    /// [method AgentRuntime.remember]. Returns the memory's id, or `0` (and
    /// [signal error_occurred]) when the agent does not run or the memory is refused.
    /// ```gdscript
    /// $Baker/AgentNode.remember("The cellar key is under the mat.", "fact", 8)
    /// ```
    #[func]
    pub fn remember(
        &mut self,
        text: GString,
        #[opt(default = "fact")] kind: GString,
        #[opt(default = 0)] importance: i64,
        #[opt(default = "")] about: GString,
        #[opt(default = &PackedInt64Array::new())] supersedes: PackedInt64Array,
    ) -> i64 {
        self.with_agent(|core, id| {
            let memory = remember_request(&text, &kind, importance, &about, &supersedes)
                .map_err(|e| (RuntimeErrorCode::InvalidMessage.as_str(), e))?;
            core.remember(id, memory).map_err(failure)
        })
        .unwrap_or(0)
    }

    /// What its agent recalls for [param query] now, best first (at most [param limit]), as
    /// [method AgentRuntime.recall] gives it; empty (and [signal error_occurred]) when the
    /// agent does not run.
    #[func]
    pub fn recall(
        &mut self,
        query: GString,
        #[opt(default = 10)] limit: i64,
    ) -> Array<VarDictionary> {
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.with_agent(|core, id| core.recall(id, &query.to_string(), limit).map_err(failure))
            .map(|recalled| recalled_to_array(&recalled))
            .unwrap_or_default()
    }

    /// Forgets one memory of its agent; `false` (and [signal error_occurred]) for a memory it
    /// does not have (`unknown_memory`) or when the agent does not run.
    #[func]
    pub fn forget_memory(&mut self, memory_id: i64) -> bool {
        self.with_agent(|core, id| core.forget(id, memory_id).map_err(failure))
            .is_some()
    }

    /// Its agent's memories, as [method AgentRuntime.get_memories] gives them.
    #[func]
    pub fn get_memories(
        &mut self,
        #[opt(default = 50)] limit: i64,
        #[opt(default = 0)] before: i64,
    ) -> Array<VarDictionary> {
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        let before = (before > 0).then_some(before);
        self.with_agent(|core, id| core.memories_page(id, before, limit).map_err(failure))
            .map(|page| crate::agent_runtime::rows_to_array(&page.rows))
            .unwrap_or_default()
    }

    /// Reports that the character got where its agent wanted to go (with
    /// [member drive_movement] off; the node reports its own walks). Returns `false` (and
    /// [signal error_occurred], `unknown_move`) when no move is under way.
    #[func]
    pub fn report_arrived(&mut self) -> bool {
        self.report(MoveOutcome::Arrived)
    }

    /// Reports that the character cannot get where its agent wanted to go, and why
    /// ([param reason]: "the door is locked"); the agent's next decision is told. Returns
    /// `false` (and [signal error_occurred]) when no move is under way or the reason is empty.
    #[func]
    pub fn report_blocked(&mut self, reason: GString) -> bool {
        self.report(MoveOutcome::Blocked(reason.to_string()))
    }

    /// Whether a move of its agent is under way (requested, not finished).
    #[func]
    pub fn is_moving(&self) -> bool {
        self.walk.is_some()
    }

    /// Where the move under way goes (a `Vector2`, or a `Vector3` at the body's height); `null`
    /// when none is.
    #[func]
    pub fn get_move_target(&self) -> Variant {
        match (&self.walk, self.body()) {
            (Some(walk), Some(body)) => body.point(walk.target),
            _ => Variant::nil(),
        }
    }

    /// Gives this agent alone a tool written in GDScript (others cannot call it): as
    /// [method AgentRuntime.register_tool], in a tool set of the node's own. Registered before
    /// the agent spawns, it is there from its first decision. Returns `false` (and
    /// [signal error_occurred], `invalid_config`) for a bad name, schema or Callable.
    /// ```gdscript
    /// func _ready() -> void:
    ///     $AgentNode.register_tool("open_door", "Open the bakery's back door.", {}, open_door)
    ///
    /// func open_door(_args: Dictionary) -> Dictionary:
    ///     $BackDoor.open()
    ///     return {"opened": true}
    /// ```
    #[func]
    pub fn register_tool(
        &mut self,
        name: GString,
        description: GString,
        parameters: VarDictionary,
        function: Callable,
        #[opt(default = false)] read_only: bool,
    ) -> bool {
        let tool = OwnTool {
            name,
            description,
            parameters,
            function,
            read_only,
        };
        let result = match self.runtime_node().or_else(|| self.find_runtime()) {
            // Checked now even before it spawns: the runtime's registry validates.
            Some(mut runtime) => runtime
                .bind_mut()
                .register_node_tool(&self.tool_set_name(), &tool.as_parts()),
            None => Ok(()),
        };
        match result {
            Ok(()) => {
                self.own_tools.retain(|t| t.name != tool.name);
                self.own_tools.push(tool);
                if let (Some(core), false) = (self.core.clone(), self.agent_id.is_empty()) {
                    let _ = core.attach_tools(&self.agent_id, &self.tool_set_name());
                }
                true
            }
            Err(message) => {
                self.fail(RuntimeErrorCode::InvalidConfig.as_str(), &message);
                false
            }
        }
    }

    /// The names of its own tools ([method register_tool]).
    #[func]
    pub fn get_tool_names(&self) -> PackedStringArray {
        self.own_tools.iter().map(|t| t.name.clone()).collect()
    }

    /// What the editor warns about on this node (the yellow triangle in the Scene dock), one text
    /// per problem; empty when it is set up well: no [member config], no [AgentRuntime] it can
    /// find (and no autoloads), a [member key] with spaces at its ends, a parent that is not a
    /// `Node2D` or `Node3D` while [member sync_position] is on.
    /// ```gdscript
    /// for warning in $Baker/AgentNode.get_configuration_warnings():
    ///     push_warning(warning)
    /// ```
    #[func(rename = get_configuration_warnings)]
    pub fn configuration_warnings(&self) -> PackedStringArray {
        let mut warnings = PackedStringArray::new();
        if self.config.is_none() {
            warnings
                .push("Set a config (an AgentConfig resource): the agent's name, role and brain.");
        }
        if self.find_runtime().is_none() && !has_autoloads() {
            warnings.push(
                "No AgentRuntime: add one above this node (an ancestor, or beside one), or as an autoload \
                 (Project Settings → Autoload) so agents survive scene changes.",
            );
        }
        if let Some(config) = &self.config {
            let sets: Vec<String> = config
                .get("tool_sets")
                .try_to::<PackedStringArray>()
                .unwrap_or_default()
                .as_slice()
                .iter()
                .map(GString::to_string)
                .collect();
            for set in crate::tool_set_names::unknown(&sets) {
                warnings.push(&format!(
                    "The config names the tool set '{set}', which is not built in, not declared \
                     and not registered yet. If a script registers it (register_tool), declare it \
                     in Project Settings → godot_agents/tool_sets; else the spawn fails."
                ));
            }
        }
        let key = self.key.to_string();
        if key.trim() != key {
            warnings.push("The key has spaces at its ends: they are part of it.");
        }
        if self.sync_position
            && let Some(parent) = self.base().get_parent()
            && Body::of(parent.clone()).is_none()
        {
            warnings.push(&format!(
                "The parent ({}, a {}) is not a Node2D or a Node3D: the agent has no position in \
                 your world and cannot walk. Put the AgentNode under the character it drives, \
                 or turn sync_position off.",
                parent.get_name(),
                parent.get_class()
            ));
        }
        warnings
    }

    /// Its agent's id (`agent_007`); empty while it does not run.
    #[func]
    pub fn get_agent_id(&self) -> GString {
        self.agent_id.as_str().into()
    }

    /// Whether its agent runs.
    #[func]
    pub fn is_spawned(&self) -> bool {
        !self.agent_id.is_empty()
    }

    /// The [AgentRuntime] it found (null before it entered the tree, or when there is none).
    #[func]
    pub fn get_runtime(&self) -> Option<Gd<AgentRuntime>> {
        self.runtime_node().or_else(|| self.find_runtime())
    }

    /// Its agent's state: one of the `STATE_*` constants of [AgentConstants] (`idle`,
    /// `listening`, `thinking`, `speaking`), as [signal state_changed] last reported it; empty
    /// while it does not run.
    #[func]
    pub fn get_state(&self) -> GString {
        self.state.into()
    }

    /// The message of the last failed call or error (empty when the last call succeeded).
    #[func]
    pub fn get_last_error(&self) -> GString {
        self.last_error.message_gstring()
    }

    /// The code of the last failed call or error (one of the `ERROR_*` constants of
    /// [AgentConstants]; empty when the last call succeeded).
    #[func]
    pub fn get_last_error_code(&self) -> GString {
        self.last_error.code_gstring()
    }

    /// Finds the runtime and spawns the agent, now if it runs, else when it starts (called
    /// deferred when the node is ready).
    #[func(rename = _attach)]
    fn attach(&mut self) {
        if !self.agent_id.is_empty() || !self.base().is_inside_tree() {
            return;
        }
        let Some(runtime) = self.find_runtime() else {
            let path = self.base().get_path();
            self.fail(
                NOT_SPAWNED,
                &format!(
                    "AgentNode {path} found no AgentRuntime: add one above it (an ancestor, or beside one), or as an \
                     autoload (Project Settings → Autoload)"
                ),
            );
            return;
        };
        self.runtime = Some(runtime.instance_id());
        let core = runtime.bind().core_runtime();
        let Some(core) = core else {
            // Not started yet (autostart off): spawn when it starts.
            self.attach_when_started(runtime);
            return;
        };
        let config = match self.core_config() {
            Ok(config) => config,
            Err(message) => {
                self.fail(RuntimeErrorCode::InvalidConfig.as_str(), &message);
                return;
            }
        };
        let set = self.tool_set_name();
        for tool in self.own_tools.clone() {
            if let Err(message) = runtime
                .clone()
                .bind_mut()
                .register_node_tool(&set, &tool.as_parts())
            {
                self.fail(RuntimeErrorCode::InvalidConfig.as_str(), &message);
                return;
            }
        }
        match crate::guard::guarded(
            "AgentNode spawn",
            || {
                core.spawn(config)
                    .map_err(|e| (e.code().as_str(), e.to_string()))
            },
            |message| (GodotErrorCode::InternalError.as_str(), message),
        ) {
            Ok(agent_id) => {
                self.agent_id = agent_id.clone();
                self.core = Some(core);
                self.state = AgentState::Idle.as_str();
                self.last_error.clear();
                let node = self.base().instance_id();
                let deliver = move |message: &BusMessage| {
                    let Ok(mut node) = Gd::<AgentNode>::try_from_instance_id(node) else {
                        return false;
                    };
                    node.bind_mut().deliver(message);
                    true
                };
                let bound = BoundNode::new(std::rc::Rc::new(deliver), self.body());
                runtime.clone().bind_mut().bind_node(&agent_id, bound);
            }
            Err((code, message)) => self.fail(code, &message),
        }
    }
}

impl AgentNode {
    /// The nearest [AgentRuntime]: going up from its parent, each ancestor, else a child of
    /// that ancestor (a runtime beside the character, or beside one of its ancestors), up to
    /// the root, whose children are the autoloads.
    fn find_runtime(&self) -> Option<Gd<AgentRuntime>> {
        let mut at = self.base().get_parent();
        while let Some(node) = at {
            let node = match node.try_cast::<AgentRuntime>() {
                Ok(runtime) => return Some(runtime),
                Err(node) => node,
            };
            if let Some(runtime) = node
                .get_children()
                .iter_shared()
                .find_map(|child| child.try_cast::<AgentRuntime>().ok())
            {
                return Some(runtime);
            }
            at = node.get_parent();
        }
        None
    }

    /// The body whose position it reports: its parent, when [member sync_position] is on.
    fn body(&self) -> Option<Body> {
        if !self.sync_position {
            return None;
        }
        Body::of(self.base().get_parent()?)
    }

    /// Spawns (`_attach`, deferred) the next time `runtime` emits `started`.
    fn attach_when_started(&self, runtime: Gd<AgentRuntime>) {
        let callable = Callable::from_object_method(&self.to_gd(), "_attach");
        let mut node = runtime.upcast::<Node>();
        if !node.is_connected("started", &callable) {
            node.connect_flags(
                "started",
                &callable,
                godot::classes::object::ConnectFlags::DEFERRED
                    | godot::classes::object::ConnectFlags::ONE_SHOT,
            );
        }
    }

    /// The runtime node it attached to, while it exists.
    fn runtime_node(&self) -> Option<Gd<AgentRuntime>> {
        self.runtime
            .and_then(|id| Gd::<AgentRuntime>::try_from_instance_id(id).ok())
    }

    /// The config to spawn with: the resource's, with the node's key.
    fn core_config(&self) -> Result<CoreConfig, String> {
        let mut config = match &self.config {
            Some(config) => config.bind().to_core()?,
            None => CoreConfig::default(),
        };
        if config.name.trim().is_empty() {
            config.name = self.base().get_parent().map_or_else(
                || self.base().get_name().to_string(),
                |p| p.get_name().to_string(),
            );
        }
        let key = self.key.to_string();
        if !key.is_empty() {
            config.key = Some(key);
        }
        // Its own tools come in their own set.
        if !self.own_tools.is_empty() {
            let set = self.tool_set_name();
            let mut sets = config
                .tools
                .take()
                .unwrap_or_else(|| vec![agents_core::runtime::WORLD_TOOLS.to_string()]);
            if !sets.contains(&set) {
                sets.push(set);
            }
            config.tools = Some(sets);
        }
        // The game owns a body's position: the agent starts where the body stands, and its
        // moves are the game's to carry out.
        if let Some(body) = self.body() {
            config.movement = Some(Movement::Requested);
            if let Some(at) = body.position() {
                config.initial_position = Some(at);
            }
        }
        Ok(config)
    }

    /// The error of a call that needs its agent while it has none, saying why: the node is
    /// outside the scene tree, found no [AgentRuntime], waits for it to start, or its spawn
    /// failed.
    fn no_agent(&self) -> (&'static str, String) {
        let name = self.base().get_name().to_string();
        let who = if name.is_empty() {
            "this AgentNode (unnamed)".to_string()
        } else {
            format!("AgentNode '{name}'")
        };
        let why = if !self.base().is_inside_tree() {
            "it is not in the scene tree; its agent spawns when it enters one under an \
             AgentRuntime"
        } else {
            match self.runtime_node() {
                None => "no AgentRuntime was found among its ancestors or the scene's nodes",
                Some(runtime) if !runtime.bind().is_running() => {
                    "its AgentRuntime has not started; the agent spawns when it does"
                }
                Some(_) => "its agent did not spawn or has stopped (see its error_occurred signal)",
            }
        };
        (NOT_SPAWNED, format!("{who} has no running agent: {why}"))
    }

    /// The name of the tool set of its own tools: `node:<instance id>`.
    fn tool_set_name(&self) -> String {
        format!("node:{}", self.base().instance_id().to_i64())
    }

    /// Sends a line as the player; returns its message id.
    fn send(&self, text: &str) -> Result<i64, (&'static str, String)> {
        let Some(core) = self.core.as_ref().filter(|_| !self.agent_id.is_empty()) else {
            return Err(self.no_agent());
        };
        core.send_message(&self.agent_id, text)
            .map_err(|e| (e.code().as_str(), e.to_string()))
    }

    fn ask_object(&mut self, text: GString) -> Gd<AgentAsk> {
        let mut ask = AgentAsk::new_gd();
        match self.send(&text.to_string()) {
            Ok(message_id) => {
                ask.bind_mut().message_id = message_id;
                self.asks.push((message_id, ask.clone()));
            }
            Err((code, message)) => {
                self.fail(code, &message);
                let reply = failed_reply(&self.agent_id, 0, code, &message);
                ask.bind_mut().finish(reply);
            }
        }
        ask
    }

    /// Finishes the move under way with `outcome` (the game's report).
    fn report(&mut self, outcome: MoveOutcome) -> bool {
        let Some(walk) = self.walk.as_ref() else {
            self.fail(
                RuntimeErrorCode::UnknownMove.as_str(),
                "no move is under way (report_arrived and report_blocked answer move_requested)",
            );
            return false;
        };
        if let MoveOutcome::Blocked(reason) = &outcome
            && reason.trim().is_empty()
        {
            self.fail(
                RuntimeErrorCode::InvalidMessage.as_str(),
                "report_blocked needs a reason (what is in the way: \"the door is locked\")",
            );
            return false;
        }
        let move_id = walk.move_id;
        self.finish_walk(move_id, outcome)
    }

    /// Ends the walk `move_id` and tells the runtime ([signal move_finished] follows from its
    /// event).
    fn finish_walk(&mut self, move_id: u64, outcome: MoveOutcome) -> bool {
        self.walk = None;
        self.base_mut().set_physics_process(false);
        let Some(core) = self.core.as_ref().filter(|_| !self.agent_id.is_empty()) else {
            return false;
        };
        match core.finish_move(&self.agent_id, move_id, outcome) {
            Ok(()) => true,
            Err(e) => {
                self.fail(e.code().as_str(), &e.to_string());
                false
            }
        }
    }

    /// Records and reports an error of this node.
    /// Runs `f` on the runtime with its agent's id; a failure (or no running agent) is
    /// reported as [signal error_occurred] and gives `None`.
    fn with_agent<T>(
        &mut self,
        f: impl FnOnce(&Runtime, &str) -> Result<T, (&'static str, String)>,
    ) -> Option<T> {
        let result = match self.core.as_ref().filter(|_| !self.agent_id.is_empty()) {
            Some(core) => f(core, &self.agent_id),
            None => Err(self.no_agent()),
        };
        match result {
            Ok(v) => Some(v),
            Err((code, message)) => {
                self.fail(code, &message);
                None
            }
        }
    }

    fn fail(&mut self, code: &str, message: &str) {
        self.last_error.set(code, message);
        godot_error!("AgentNode: {message}");
        self.signals().error_occurred().emit(code, message);
    }

    /// Releases or terminates the agent, and finishes every open ask.
    fn detach(&mut self) {
        self.walk = None;
        if !self.own_tools.is_empty()
            && let Some(mut runtime) = self.runtime_node()
        {
            let set = self.tool_set_name();
            runtime.bind_mut().remove_node_tools(&set);
        }
        let agent_id = std::mem::take(&mut self.agent_id);
        self.state = "";
        if !agent_id.is_empty()
            && let Some(mut runtime) = self.runtime_node()
        {
            runtime.bind_mut().unbind_node(&agent_id);
        }
        if let Some(core) = self.core.take()
            && !agent_id.is_empty()
        {
            let _ = if self.terminate_on_exit {
                core.terminate(&agent_id)
            } else {
                core.release(&agent_id).map(|_| ())
            };
        }
        self.finish_all(
            &agent_id,
            AGENT_STOPPED,
            "the agent stopped before it answered (its AgentNode left the tree)",
        );
    }

    /// Finishes every open ask with a failure.
    fn finish_all(&mut self, agent_id: &str, code: &str, message: &str) {
        for (message_id, mut ask) in std::mem::take(&mut self.asks) {
            let reply = failed_reply(agent_id, message_id, code, message);
            ask.bind_mut().finish(reply);
        }
    }

    /// One event about its agent, from the runtime's drain.
    // Long on purpose: one arm per bus message about the agent, the exhaustive list of which
    // of the node's signals each becomes.
    pub(crate) fn deliver(&mut self, message: &BusMessage) {
        let v2 = convert::position_to_vector2;
        match message {
            BusMessage::AgentSpawned {
                agent_id, resumed, ..
            } => self.signals().spawned().emit(agent_id.as_str(), *resumed),
            BusMessage::AgentStateChanged {
                old_state,
                new_state,
                ..
            } => {
                self.state = new_state.as_str();
                self.signals()
                    .state_changed()
                    .emit(old_state.as_str(), new_state.as_str())
            }
            BusMessage::AgentMoved { from, to, .. } => {
                self.signals().moved().emit(v2(*from), v2(*to))
            }
            BusMessage::AgentMoveRequested { move_id, to, .. } => {
                self.last_move = *move_id;
                let target = match self.body() {
                    Some(body) => {
                        if self.drive_movement {
                            self.walk = Some(Walk::new(*move_id, *to, &body));
                            self.base_mut().set_physics_process(true);
                        } else {
                            self.walk = Some(Walk::waiting(*move_id, *to));
                        }
                        body.point(*to)
                    }
                    None => v2(*to).to_variant(),
                };
                self.signals().move_requested().emit(&target);
            }
            BusMessage::AgentMoveFinished {
                move_id,
                outcome,
                reason,
                ..
            } => {
                if *move_id == self.last_move {
                    if self.walk.as_ref().is_some_and(|w| w.move_id == *move_id) {
                        // Finished by someone else (a protocol client, the runtime's method).
                        self.walk = None;
                        self.base_mut().set_physics_process(false);
                    }
                    self.signals().move_finished().emit(
                        *outcome == agents_core::moves::MoveEnd::Arrived,
                        reason.as_deref().unwrap_or(""),
                    );
                }
            }
            BusMessage::AgentSpoke {
                agent_id,
                content,
                recipients,
                dialog_type,
                ..
            } if *agent_id == self.agent_id => self.signals().spoke().emit(
                content.as_str(),
                &convert::strings_to_packed(recipients),
                dialog_type.as_str(),
            ),
            BusMessage::AgentSpoke { .. } => {}
            BusMessage::AgentReplied {
                agent_id,
                in_reply_to,
                error,
                ..
            } => {
                let mut reply = reply_to_dictionary(message);
                put(&mut reply, "ok", error.is_none().to_variant());
                put(&mut reply, "agent_id", agent_id.to_variant());
                let ids: PackedInt64Array = in_reply_to.iter().copied().collect();
                put(&mut reply, "in_reply_to", ids.to_variant());
                let first = in_reply_to.first().copied().unwrap_or(0);
                let (answered, open): (Vec<_>, Vec<_>) = std::mem::take(&mut self.asks)
                    .into_iter()
                    .partition(|(id, _)| in_reply_to.contains(id));
                self.asks = open;
                for (message_id, mut ask) in answered {
                    let mut own = reply.duplicate_shallow();
                    put(&mut own, "message_id", message_id.to_variant());
                    ask.bind_mut().finish(own);
                }
                put(&mut reply, "message_id", first.to_variant());
                self.signals().replied().emit(&reply);
            }
            BusMessage::AgentSpeechDelta { delta, .. } => {
                self.signals().speech_streamed().emit(delta.as_str())
            }
            BusMessage::AgentToolCall { tool, call_id, .. } => self
                .signals()
                .tool_called()
                .emit(tool.as_str(), call_id.as_str()),
            BusMessage::ModelDownloadProgress {
                received_bytes,
                total_bytes,
                ..
            } => self
                .signals()
                .model_downloading()
                .emit(*received_bytes as i64, total_bytes.map_or(-1, |t| t as i64)),
            BusMessage::AgentError { code, message, .. } => {
                self.last_error.set(code.as_str(), message.as_str());
                self.signals()
                    .error_occurred()
                    .emit(code.as_str(), message.as_str())
            }
            BusMessage::AgentRemoved { agent_id, reason } => {
                let agent_id = agent_id.clone();
                self.agent_id.clear();
                self.state = "";
                self.core = None;
                self.finish_all(
                    &agent_id,
                    AGENT_STOPPED,
                    &format!("the agent stopped ({reason}) before it answered"),
                );
                self.signals().removed().emit(reason.as_str());
                // Stopped with its runtime: spawn again when the runtime starts again.
                if reason != "terminated"
                    && let Some(runtime) = self.runtime_node()
                {
                    self.attach_when_started(runtime);
                }
            }
            BusMessage::AgentRemembered { .. } => {
                let mut memory = convert::serialize_to_dictionary(message);
                memory.remove("type");
                memory.remove("agent_id");
                self.signals().remembered().emit(&memory);
            }
            BusMessage::AgentReflected {
                memories, drawn_by, ..
            } => {
                let memories: Array<VarDictionary> = memories
                    .iter()
                    .map(convert::serialize_to_dictionary)
                    .collect();
                self.signals()
                    .reflected()
                    .emit(&memories, drawn_by.as_str());
            }
            BusMessage::TaskAssigned { .. }
            | BusMessage::TaskCompleted { .. }
            | BusMessage::CollaborationRequested { .. }
            | BusMessage::CampaignChanged { .. } => {}
        }
    }
}

/// Whether the project has autoloads (one may be an AgentRuntime scene; the editor cannot
/// tell without instancing it).
fn has_autoloads() -> bool {
    let Some(settings) = Engine::singleton().get_singleton("ProjectSettings") else {
        return false;
    };
    settings.get_property_list().iter_shared().any(|p| {
        p.get("name")
            .is_some_and(|n| n.to_string().starts_with("autoload/"))
    })
}
