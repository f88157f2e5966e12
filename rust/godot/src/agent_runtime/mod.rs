//! `AgentRuntime`: the agent runtime of `agents-core` as a Godot node.
//!
//! Threading: the node owns one [`Runtime`] (which owns its tokio runtime, its agents and the
//! SQLite writer thread) and one bus [`Subscription`]. Agents run on the runtime's worker threads;
//! the node drains its subscription with `try_recv` in `process` and emits the signals there, on
//! the main thread. No `Gd` ever leaves the main thread and nothing on the main thread waits for
//! an agent: method calls only queue work or read snapshots. `exit_tree` (and drop) drops the
//! subscription and shuts the runtime down (memory flushed, threads joined).

mod agents;
mod events;
mod memory;
mod nodes;
mod settings;
mod tools;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::bus::{Filter, Subscription};
use agents_core::eval::lines::{Line, LineReport};
use agents_core::net::{Server, ServerHandle};
use agents_core::protocol::requests::{self, Request};
use agents_core::runtime::{Runtime, RuntimeError, RuntimeErrorCode};
use agents_core::tools::ToolRegistry;
use godot::classes::{Engine, INode, Node};
use godot::prelude::*;

use crate::agent_brain::AgentBrain;
use crate::agent_embeddings::AgentEmbeddings;
use crate::agent_memory::AgentMemory;
use crate::convert::{json_to_variant, variant_to_json};
use crate::errors::{GodotErrorCode, LastError};
use crate::guard::put;
use crate::script_tools::ScriptTools;

pub(crate) use agents::{reply_to_dictionary, rows_to_array};

/// How long `stop`, `exit_tree` and drop wait for the agents and the writer thread.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// A failed call: the `agent_error` code and the message.
type Failure = (&'static str, String);

const INTERNAL_ERROR: &str = GodotErrorCode::InternalError.as_str();
const NOT_RUNNING: &str = GodotErrorCode::NotRunning.as_str();
const INVALID_CONFIG: &str = RuntimeErrorCode::InvalidConfig.as_str();
const INVALID_OPTIONS: &str = RuntimeErrorCode::InvalidOptions.as_str();
const STARTUP_FAILED: &str = RuntimeErrorCode::StartupFailed.as_str();

/// Runs `f`, turning a panic into an `internal_error` failure.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    crate::guard::guarded(what, f, |message| (INTERNAL_ERROR, message))
}

/// The runtime's error as a failure.
pub(crate) fn failure(error: RuntimeError) -> Failure {
    (error.code().as_str(), error.to_string())
}

/// A count as a Godot int (saturating).
fn clamp_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// This thread's CPU time in microseconds (`CLOCK_THREAD_CPUTIME_ID`), where the platform has
/// it.
fn thread_cpu_usec() -> Option<i64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec through a valid pointer.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
        // `time_t` and `c_long` are 32 bits wide on some platforms: widen, whatever they are.
        #[allow(clippy::useless_conversion)]
        let usec = i64::from(ts.tv_sec) * 1_000_000 + i64::from(ts.tv_nsec) / 1_000;
        ok.then_some(usec)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Runs autonomous agents in the scene: each agent lives in its own task on a background thread
/// pool, moves, talks, answers the player and works on tasks, and everything it does arrives here
/// as signals, emitted on the main thread while the node processes (every frame).
///
/// ```gdscript
/// @onready var runtime: AgentRuntime = $AgentRuntime
///
/// func _ready():
///     runtime.agent_said.connect(func(id, text, to, dialog_type): print(id, ": ", text))
///     var id := runtime.spawn_agent({"name": "Mira", "role": "baker",
///             "initial_position": Vector2(10, 10)})
///     runtime.assign_task(id, "bake bread")
///     var line_id := runtime.say(id, "Good morning!")
/// ```
///
/// Agents, their conversations, tasks and state changes are stored in the SQLite database at
/// [member database_path]; ids (`agent_001`, …) stay unique per database across runs, and a
/// stored agent resumes with its history (set [member resume_agents], or spawn with its
/// `agent_id`). Property changes take effect at the next [method start]. A call that fails returns
/// `false`, `""`, `0` or an empty result, keeps the failure ([method get_last_error_code] and
/// [method get_last_error], the same on every class of the addon), pushes an error and emits
/// [signal error_occurred] and [signal agent_error].
///
/// When the node leaves the tree it stops: the agents stop, every row is flushed to the database
/// and the background threads are joined. While the node does not process (paused), agents keep
/// running and events wait in a queue of [member event_queue_capacity] entries; beyond that the
/// oldest are dropped and [signal agent_error] reports `lagged`.
///
/// In the editor the node only shows configuration warnings (a database path that cannot be
/// written, a brain without its API key; see [method get_configuration_warnings]): it never
/// starts, serves or writes anything while a scene is edited.
#[derive(GodotClass)]
#[class(tool, init, base = Node)]
pub struct AgentRuntime {
    /// The SQLite database (created when missing, and its folder too). `user://` and `res://`
    /// paths are globalized; use `user://`: `res://` is read-only in an exported game (the
    /// configuration warnings say so).
    #[export_group(name = "Storage")]
    #[var(hint = SAVE_FILE, hint_string = "*.db,*.sqlite,*.sqlite3", usage_flags = [DEFAULT])]
    #[init(val = GString::from("user://agents.db"))]
    database_path: GString,
    /// Where WebSocket clients' `campaign_load` finds campaign files by relative path (`user://`
    /// and `res://` globalized; saved back after every applied call). Empty: campaigns load over
    /// the protocol only inline. A [Campaign] resource needs none of this.
    #[export(dir)]
    campaign_dir: GString,
    /// Seconds an agent stays idle before it decides on its own (per agent:
    /// [member AgentConfig.idle_think_seconds]).
    #[export_group(name = "Agents")]
    #[export(range = (0.0, 600.0, 0.1, or_greater, suffix = "s"))]
    #[init(val = 5.0)]
    idle_think_seconds: f64,
    /// The rectangle agents live in (world units); moves outside it are refused.
    #[export]
    #[init(val = Rect2::new(Vector2::ZERO, Vector2::new(100.0, 100.0)))]
    world_bounds: Rect2,
    /// The brain of agents whose config names none, by name: `"scripted"` (offline,
    /// deterministic), a profile of [member brain_profiles], `"claude"`, or a brain the game
    /// registered. [member default_brain_config] takes its place when set.
    #[export_group(name = "Brains")]
    #[var(hint = ENUM_SUGGESTION, hint_string = "scripted,claude", usage_flags = [DEFAULT])]
    #[init(val = GString::from("scripted"))]
    default_brain: GString,
    /// A brain object for every agent whose config names no brain (it becomes the profile
    /// `"default"`). Read at [method start].
    #[export]
    default_brain_config: Option<Gd<AgentBrain>>,
    /// Named brains: profile name (`String`) → [AgentBrain]. An [AgentConfig] (or a
    /// Dictionary's `brain`) names one to use it. Read at [method start].
    #[export]
    brain_profiles: VarDictionary,
    /// How many model requests may be in flight at once, across every agent: the rest queue,
    /// so a thousand agents do not stampede a provider. Read at [method start].
    #[export(range = (1.0, 256.0, 1.0, or_greater))]
    #[init(val = 8)]
    max_concurrent_model_calls: i64,
    /// How many of those may go to one endpoint (the scheme, host and port of a brain's
    /// `base_url`) at once: a slow or hanging provider cannot hold every permit from the agents
    /// of the others. Read at [method start].
    #[export(range = (1.0, 256.0, 1.0, or_greater))]
    #[init(val = 6)]
    max_concurrent_model_calls_per_endpoint: i64,
    /// How many agents may run at once; a spawn beyond fails (`limit_reached`) until one is
    /// terminated. Read at [method start].
    #[export(range = (1.0, 100000.0, 1.0, or_greater))]
    #[init(val = 10_000)]
    max_agents: i64,
    /// Tokens (input and output, as providers report them) every model brain together may
    /// spend; `0`: no limit. Read at [method start]; change it while running with
    /// [method set_token_budget].
    #[export(range = (0.0, 1000000000.0, 1.0, or_greater, suffix = "tokens"))]
    runtime_token_budget: i64,
    /// The scripted brain's thinking latency in seconds.
    #[export(range = (0.0, 60.0, 0.05, or_greater, suffix = "s"))]
    #[init(val = 0.8)]
    thinking_seconds: f64,
    /// Seconds an agent spends saying a line (Speaking).
    // The inspector merges this group with the "Agents" group above.
    #[export_group(name = "Agents")]
    #[export(range = (0.0, 60.0, 0.05, or_greater, suffix = "s"))]
    #[init(val = 1.5)]
    speaking_seconds: f64,
    /// Distance within which agents count as nearby and hear unaddressed speech (world units).
    /// Negative (the default): 15% of the longer side of [member world_bounds] — 15 in the
    /// default 100 × 100 world, 192 pixels in a 1280 × 720 level — so it follows the world's
    /// scale.
    #[export(range = (-1.0, 1000.0, 0.1, or_greater))]
    #[init(val = -1.0)]
    hearing_radius: f64,
    /// The id [method send_message] speaks as; agents address their replies to it.
    #[export]
    #[init(val = GString::from("player_0"))]
    player_id: GString,
    /// Base seed (≥ 0): each agent's brain seed derives from it and the agent id, so runs repeat.
    #[export(range = (0.0, 2147483647.0, 1.0, or_greater, hide_slider))]
    seed: i64,
    /// On start, resume every agent stored in the database that was not terminated. One that
    /// cannot start (its brain object's own key is not stored, its brain or model file is
    /// gone) is reported ([signal agent_error]) and waits, stored, with the reason
    /// ([method get_stored_agents]'s `waiting_for`); the others run.
    #[export]
    resume_agents: bool,
    /// Start the runtime when the node is ready (in the game; never in the editor). Off: call
    /// [method start] yourself.
    #[export]
    #[init(val = true)]
    autostart: bool,
    /// How agents form and recall memories (per agent: [member AgentConfig.memory]). Empty:
    /// the defaults of [AgentMemory]. Read at [method start].
    #[export_group(name = "Memory")]
    #[export]
    memory: Option<Gd<AgentMemory>>,
    /// An embeddings endpoint that makes vectors of agents' memories, so they recall by meaning
    /// as well as by words ([AgentEmbeddings]). Empty: by words only. Read at [method start].
    #[export]
    embeddings: Option<Gd<AgentEmbeddings>>,
    /// Game seconds per real second of the game clock memories are stamped with and their
    /// recency is measured in ([method get_game_time]). A game with a calendar of its own sets
    /// the time with [method set_game_time] instead. Read at [method start].
    #[export(range = (0.0, 3600.0, 0.1, or_greater))]
    #[init(val = 1.0)]
    game_time_scale: f64,
    /// How many events wait for the next frame before the oldest are dropped (reported as
    /// [signal agent_error] `lagged`).
    #[export_group(name = "Events")]
    #[export(range = (1.0, 1000000.0, 1.0, or_greater))]
    #[init(val = 65536)]
    event_queue_capacity: i64,
    /// Most events emitted per frame; `0`: everything that is queued (at most
    /// [member event_queue_capacity] per frame). The rest waits for the next frame.
    #[export(range = (0.0, 100000.0, 1.0, or_greater))]
    max_events_per_frame: i64,
    /// Seconds within which every [AgentNode]'s body position is reported to its agent (`0.1`
    /// by default; `0`: every body every frame). The bodies are read in turns, a share each
    /// frame, so 500 characters cost a sixth of their reads per frame at 60 fps — and hearing
    /// follows them within a tenth of a second.
    #[export(range = (0.0, 5.0, 0.01, or_greater, suffix = "s"))]
    #[init(val = 0.1)]
    position_sync_interval: f64,
    /// Most microseconds the main thread spends emitting events in one frame (1000 by
    /// default); `0`: no limit. Once it is spent, the rest waits for the next frame, in order
    /// and nothing lost, so a burst (a hundred agents streaming at once) spreads over a few
    /// frames instead of stretching one. At least one event is emitted every frame.
    #[export(range = (0.0, 100000.0, 1.0, or_greater, suffix = "µs"))]
    #[init(val = 1000)]
    max_drain_usec_per_frame: i64,
    /// Merge the [signal agent_speech_delta] pieces one agent streams within a frame into one
    /// signal: their texts joined, [param seq] the last piece's (it still increases, by more than
    /// one). With many agents streaming, the main thread then emits one signal per streaming
    /// agent per frame instead of one per piece. A merged piece still comes before that agent's
    /// next signal of another kind ([signal agent_spoke], …). Off: one signal per piece, with
    /// [param seq] increasing by one.
    #[export]
    merge_speech_deltas: bool,
    /// Serve the WebSocket protocol (`docs/protocol.md`) from this node's runtime, so external
    /// clients see and drive the same agents as the game. Read at [method start].
    #[export_group(name = "Server")]
    #[export]
    websocket_enabled: bool,
    /// The address the WebSocket server binds (`127.0.0.1`: this machine only; `0.0.0.0`: every
    /// interface — [member websocket_token] is required then, unless
    /// [member websocket_insecure_no_token]).
    #[var(hint = ENUM_SUGGESTION, hint_string = "127.0.0.1,0.0.0.0", usage_flags = [DEFAULT])]
    #[init(val = GString::from("127.0.0.1"))]
    websocket_bind: GString,
    /// The WebSocket server's port; `0` picks a free one ([method get_websocket_url] tells which).
    #[export(range = (0.0, 65535.0, 1.0))]
    #[init(val = 9080)]
    websocket_port: i64,
    /// When not empty, clients must present this token (`Authorization: Bearer <token>`, or
    /// from a browser the subprotocols `godot-agents` and `agents.token.<token>`); others get
    /// HTTP 401. A token in the URL (`?token=`) is refused. Stored with the scene: for a shipped
    /// game, set it from code instead.
    #[export_subgroup(name = "Access")]
    #[var(hint = PASSWORD, usage_flags = [DEFAULT])]
    websocket_token: GString,
    /// Serve on a non-loopback [member websocket_bind] without a token: anyone who can reach the
    /// port can drive the runtime. Off: such a server does not start.
    #[export]
    websocket_insecure_no_token: bool,
    /// Browser origins allowed to connect (`https://game.example`, `http://localhost:8060`,
    /// `null`, or `*` for any). Clients that send no `Origin` (a game's `WebSocketPeer`, native
    /// tools) always pass; on a loopback bind, loopback origins do too. Other web pages get HTTP
    /// 403.
    #[export]
    websocket_allowed_origins: PackedStringArray,
    /// `Host` names clients may use besides the loopback ones (`game.local`, `192.168.1.20`):
    /// checked on a loopback [member websocket_bind] (a page reaching the port through a name it
    /// controls — DNS rebinding — gets HTTP 403), and by `/mcp` on every bind: an MCP client
    /// reaching a `0.0.0.0` bind by a LAN address or name needs it listed here.
    #[export]
    websocket_allowed_hosts: PackedStringArray,
    /// Let the server's clients spawn agents with a brain object of their own: `openai` or
    /// `anthropic` only, with the client's own key as `api_key` (kept in memory, never stored).
    /// Off: clients name a profile of [member brain_profiles] (or a preset). A client never
    /// sets `api_key_env`, `headers`, `command` or `cli_backend` in a brain object. Your own
    /// code is not concerned: [method spawn_agent] takes any brain.
    #[export_subgroup(name = "Client brains")]
    #[export]
    allow_client_brains: bool,
    /// The origins (`https://api.openai.com`, `http://127.0.0.1:11434`) a client's brain
    /// object may call when [member allow_client_brains] is on; empty: any.
    #[export]
    client_brain_origins: PackedStringArray,
    /// Accept the preset brain names `scripted` and `claude` from the server's clients. Off:
    /// clients name a profile of [member brain_profiles] only.
    #[export]
    #[init(val = true)]
    client_brain_presets: bool,
    /// Also serve MCP over Streamable HTTP at `/mcp` on the WebSocket server's port (the game
    /// tools, for LLM hosts; behind the same token). Read at [method start].
    #[export_subgroup(name = "")]
    #[export]
    #[init(val = true)]
    mcp_enabled: bool,

    runtime: Option<Arc<Runtime>>,
    server: Option<ServerHandle>,
    subscription: Option<Subscription>,
    last_error: LastError,
    last_frame_events: i64,
    last_frame_drain_usec: i64,
    last_frame_drain_cpu_usec: i64,
    debugger: crate::debugger::DebuggerLink,
    /// The start-time properties as they were at [method start] (or at the last warning).
    started_with: Option<crate::started_with::StartedWith>,
    /// Whether a frame since [method start] looked for late properties.
    late_checked: bool,
    /// Whether a body outside [member world_bounds] was warned of since [method start].
    warned_outside_world: bool,
    /// The [AgentNode] of each agent spawned by one: agent id → node.
    nodes: std::collections::HashMap<String, crate::body::BoundNode>,
    /// The agents of `nodes`, in the order their bodies are read.
    node_order: Vec<String>,
    /// Where the next frame's share of body reads starts in `node_order`.
    sync_cursor: usize,
    /// The tools written in GDScript ([method register_tool]).
    script_tools: ScriptTools,
    base: Base<Node>,
}

#[godot_api]
impl INode for AgentRuntime {
    fn ready(&mut self) {
        // A tool class (for its configuration warnings): nothing runs while a scene is edited.
        if Engine::singleton().is_editor_hint() {
            return;
        }
        if self.autostart {
            self.start();
        }
    }

    fn process(&mut self, delta: f64) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        // The first frame after start: properties its parent's `_ready` set too late.
        if !self.late_checked {
            self.late_checked = true;
            self.warn_of_late_properties();
        }
        // The game's own code first: tools written in GDScript that agents called.
        self.run_tool_calls();
        let started = Instant::now();
        let cpu_started = thread_cpu_usec();
        // Models being copied out of the game's pack, a millisecond of the frame.
        crate::packed_model::advance(crate::packed_model::FRAME_BUDGET);
        let limit = self.frame_limit();
        let deadline = u64::try_from(self.max_drain_usec_per_frame)
            .ok()
            .filter(|usec| *usec > 0)
            .map(|usec| started + std::time::Duration::from_micros(usec));
        self.sync_positions(delta);
        let events = self.drain(limit, deadline);
        self.last_frame_events = events;
        self.last_frame_drain_usec =
            i64::try_from(started.elapsed().as_micros()).unwrap_or(i64::MAX);
        self.last_frame_drain_cpu_usec = match (cpu_started, thread_cpu_usec()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => -1,
        };
        let node = self.base().clone();
        for (code, message) in self.debugger.tick(&node, self.runtime.as_ref()) {
            self.report("", &code, &message);
        }
    }

    fn exit_tree(&mut self) {
        if Engine::singleton().is_editor_hint() {
            return;
        }
        self.shut_down();
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.configuration_warnings()
    }
}

#[godot_api]
impl AgentRuntime {
    /// A new or resumed agent is running, at [param position].
    #[signal]
    fn agent_spawned(agent_id: GString, name: GString, role: GString, position: Vector2);

    /// An agent changed state: [param old_state] and [param new_state] are `idle`, `listening`,
    /// `thinking` or `speaking`.
    #[signal]
    fn agent_state_changed(agent_id: GString, old_state: GString, new_state: GString);

    /// An agent moved from [param from] to [param to].
    #[signal]
    fn agent_moved(agent_id: GString, from: Vector2, to: Vector2);

    /// An agent whose moves the game carries out (spawned with `movement` `"requested"`; every
    /// [AgentNode] on a body) decided to move from [param from] to [param to]: take it there
    /// (this replaces any move under way), then call [method finish_move] with [param move_id].
    /// An [AgentNode] does this itself, and emits [signal AgentNode.move_requested].
    #[signal]
    fn agent_move_requested(agent_id: GString, move_id: i64, from: Vector2, to: Vector2);

    /// A move the game carried out ended: [param outcome] is `arrived` or `blocked`, with the
    /// game's [param reason] (empty when it arrived). The agent's next decision is told.
    #[signal]
    fn agent_move_finished(agent_id: GString, move_id: i64, outcome: GString, reason: GString);

    /// Someone said [param text] to [param recipients] (agent ids or the player id; empty: to
    /// no one in particular). [param agent_id] is usually an agent; lines sent with
    /// [method say] come back with the player id. [param dialog_type] is the kind of line, one
    /// of the `DIALOG_*` constants of [AgentConstants] (`reply`, `chat`, `task_update`,
    /// `player`, …; a model may use others): the same fields as [signal AgentNode.spoke], with
    /// the agent's id.
    #[signal]
    fn agent_said(
        agent_id: GString,
        text: GString,
        recipients: PackedStringArray,
        dialog_type: GString,
    );

    /// Deprecated: use [signal agent_said], which also carries the line's `dialog_type`. Emitted
    /// with it, for programs written before it.
    #[signal]
    fn agent_spoke(agent_id: GString, content: GString, recipients: PackedStringArray);

    /// An agent stopped: [param reason] is `terminated` ([method terminate_agent]) or `shutdown`
    /// ([method stop]; it can be resumed).
    #[signal]
    fn agent_removed(agent_id: GString, reason: GString);

    /// A task was assigned to [param agent_id] (by the game, the player or a collaborating agent).
    #[signal]
    fn task_assigned(agent_id: GString, task_id: i64, task_name: GString);

    /// A task of [param agent_id] was completed.
    #[signal]
    fn task_completed(agent_id: GString, task_id: i64, task_name: GString);

    /// [param agent_id] asked [param helper_id] to help with [param task_name] (the helper was
    /// assigned the task: a [signal task_assigned] follows).
    #[signal]
    fn collaboration_requested(agent_id: GString, helper_id: GString, task_name: GString);

    /// A model brain is generating text: [param delta] is the next piece, [param seq] increases
    /// per agent. Pieces arrive before the decision's [signal agent_spoke]; show the line as it
    /// is written. Only model brains (`openai`, `anthropic`) stream.
    #[signal]
    fn agent_speech_delta(agent_id: GString, delta: GString, seq: i64);

    /// A model brain started the tool call [param call_id] of [param tool] (its arguments are
    /// still streaming): a UI can show that the agent is thinking.
    #[signal]
    fn agent_tool_call(agent_id: GString, tool: GString, call_id: GString);

    /// The model file of [param agent_id]'s on-device brain is downloading from [param url]
    /// (an [AgentBrain]'s [member AgentBrain.model_url], before the agent's first decision):
    /// [param received] bytes of [param total] ([code]-1[/code] when the server does not say).
    /// At most once per MiB, and once at the end: for a loading screen.
    #[signal]
    fn model_download_progress(agent_id: GString, url: GString, received: i64, total: i64);

    /// GM tool calls were applied to a campaign loaded in this runtime over the protocol
    /// (`campaign_tool_calls`, `campaign_turn`): [param turn_id] is `""` for a batch,
    /// [param applied_actions] the `{tool, args, result, timestamp}` records. A [Campaign]
    /// resource has signals of its own.
    #[signal]
    fn campaign_changed(campaign_id: GString, turn_id: GString, applied_actions: VarArray);

    /// Something went wrong. [param agent_id] is the agent concerned or `""`; [param code] is
    /// machine-readable: `invalid_transition`, `action_refused`, `invalid_action`, `brain_error`,
    /// `brain_invalid_reply`, `budget_exhausted`, `brain_auth_failed`, `brain_model_not_found`
    /// (from the agents), `lagged` (events were dropped because the node did not drain them in
    /// time), or the code of a failed call: `invalid_config`, `unknown_agent`, `already_running`,
    /// `unknown_brain`, `unknown_task`, `task_already_completed`, `invalid_message`,
    /// `database_error`, `not_running`, `invalid_options`, `startup_failed`, `shut_down`.
    #[signal]
    fn agent_error(agent_id: GString, code: GString, message: GString);

    /// A call on this node failed: [param code] (one of the `ERROR_*` constants of
    /// [AgentConstants]) and [param message], as [method get_last_error_code] and
    /// [method get_last_error] keep them. Every class of the addon reports a failed call this
    /// way; [signal agent_error] also carries the agents' own errors.
    #[signal]
    fn error_occurred(code: GString, message: GString);

    /// The runtime started ([method start], or `_ready` with [member autostart]): agents can be
    /// spawned. [AgentNode]s waiting for it spawn their agents then.
    #[signal]
    fn started();

    /// An agent's decision answered lines sent to it ([method send_message]):
    /// [param in_reply_to] holds their message ids, and [param reply] has `text` (String),
    /// `actions` (Array) and `error` (Dictionary) — what it said (its lines joined by a
    /// newline), its calls (`{id, tool, args, outcome, detail}`, `outcome` `done`, `failed` or
    /// `refused`), and, when it could not decide, `{code, message}` (otherwise empty; nothing
    /// of the decision ran then).
    #[signal]
    fn agent_replied(agent_id: GString, in_reply_to: PackedInt64Array, reply: VarDictionary);

    /// An agent formed a memory (of a line it heard or said, a tool it used, a task, a walk,
    /// something it noticed), or the game planted one ([method remember]): [param memory] has
    /// `memory_id`, `kind` (one of the `MEMORY_*` constants of [AgentConstants]), `text`,
    /// `importance` (1–10) and `game_time`.
    #[signal]
    fn agent_remembered(agent_id: GString, memory: VarDictionary);

    /// An agent reflected ([member AgentMemory.reflection_threshold]): [param memories] are
    /// what it drew, each a Dictionary with `memory_id`, `kind` (`insight`, or `relationship`
    /// for what it now thinks of someone), `text`, `about` (the person's id, or `null`) and
    /// `sources` (the ids of the memories it comes from); [param drawn_by] is `model` or
    /// `rules` (a brain without a model).
    #[signal]
    fn agent_reflected(agent_id: GString, memories: Array<VarDictionary>, drawn_by: GString);

    /// Starts the runtime with the current properties (done in `_ready` when [member autostart]
    /// is on): opens the database, and with [member resume_agents] resumes the stored agents.
    /// Returns `true` when it runs (also when it already ran), `false` on an error (see
    /// [method get_last_error]).
    #[func]
    pub fn start(&mut self) -> bool {
        if self.runtime.is_some() {
            self.warn_of_late_properties();
            return true;
        }
        let options = match self.options() {
            Ok(o) => o,
            Err(message) => {
                self.report("", INVALID_OPTIONS, &message);
                return false;
            }
        };
        let capacity = usize::try_from(self.event_queue_capacity.max(1)).unwrap_or(usize::MAX);
        let server_config = match self.server_config() {
            Ok(c) => c,
            Err(message) => {
                self.report("", INVALID_OPTIONS, &message);
                return false;
            }
        };
        let started = guarded("start", || {
            if let Some(dir) = options.database.parent()
                && !dir.as_os_str().is_empty()
            {
                std::fs::create_dir_all(dir).map_err(|e| {
                    (
                        STARTUP_FAILED,
                        format!("cannot create the folder {}: {e}", dir.display()),
                    )
                })?;
            }
            let runtime = Arc::new(Runtime::start(options).map_err(failure)?);
            let subscription = runtime.subscribe_with_capacity(Filter::all(), capacity);
            let server = match server_config {
                None => None,
                Some(config) => {
                    let tools = Arc::new(ToolRegistry::with_game_tools());
                    let handle = runtime.handle().clone();
                    match Server::start(runtime.clone(), tools, config, &handle) {
                        Ok(server) => Some(server),
                        Err(e) => {
                            runtime.shutdown(SHUTDOWN_TIMEOUT);
                            return Err((STARTUP_FAILED, format!("WebSocket server: {e}")));
                        }
                    }
                }
            };
            Ok((runtime, subscription, server))
        });
        let started = started.and_then(|(runtime, subscription, server)| {
            match crate::script_tools::register_all(&self.script_tools, &runtime) {
                Ok(()) => Ok((runtime, subscription, server)),
                Err(message) => {
                    runtime.shutdown(SHUTDOWN_TIMEOUT);
                    Err((INVALID_CONFIG, message))
                }
            }
        });
        match started {
            Ok((runtime, subscription, server)) => {
                self.runtime = Some(runtime);
                self.subscription = Some(subscription);
                self.server = server;
                self.last_error.clear();
                let node = self.base_mut();
                let taken = crate::started_with::StartedWith::take(&node, "AgentRuntime");
                drop(node);
                self.started_with = Some(taken);
                self.late_checked = false;
                self.warned_outside_world = false;
            }
            Err((code, message)) => {
                self.report("", code, &message);
                return false;
            }
        }
        if self.resume_agents {
            // The runtime runs even when resuming fails; each agent that waits is reported.
            if let Ok(resumed) =
                self.call_runtime("", "resume_agents", |rt| rt.resume_all().map_err(failure))
            {
                for agent in resumed.waiting {
                    self.report(
                        &agent.agent_id,
                        agent.code.as_str(),
                        &format!(
                            "{} is not resumed and waits ({}): {}",
                            agent.agent_id, agent.waiting.reason, agent.waiting.message
                        ),
                    );
                }
            }
        }
        self.signals().started().emit();
        true
    }

    /// Stops the runtime: every agent stops (it stays resumable), memory is flushed and the
    /// background threads are joined (waiting at most 5 s). The events still queued — including
    /// one [signal agent_removed] with reason `shutdown` per agent — are emitted before this
    /// returns. Does nothing when not running.
    #[func]
    pub fn stop(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        self.started_with = None;
        let server = self.server.take();
        if let Err((code, message)) = guarded("stop", || {
            if let Some(server) = &server {
                server.shutdown(SHUTDOWN_TIMEOUT);
            }
            runtime.shutdown(SHUTDOWN_TIMEOUT);
            Ok(())
        }) {
            self.report("", code, &message);
        }
        drop(runtime);
        // The bus is closed: the queue is finite.
        self.drain(usize::MAX, None);
        self.subscription = None;
    }

    /// The WebSocket server's address (`ws://127.0.0.1:9080/ws`) while it serves, else `""`.
    #[func]
    pub fn get_websocket_url(&self) -> GString {
        match &self.server {
            Some(server) => GString::from(format!("ws://{}/ws", server.local_addr()).as_str()),
            None => GString::new(),
        }
    }

    /// The MCP over HTTP endpoint (`http://127.0.0.1:9080/mcp`) while the WebSocket server serves
    /// it ([member mcp_enabled]), else `""`.
    #[func]
    pub fn get_mcp_url(&self) -> GString {
        match &self.server {
            Some(server) if server.config().mcp => {
                GString::from(format!("http://{}/mcp", server.local_addr()).as_str())
            }
            _ => GString::new(),
        }
    }

    /// True while the runtime runs (between [method start] and [method stop]).
    #[func]
    pub fn is_running(&self) -> bool {
        self.runtime.is_some()
    }

    /// Tokens spent by model brains, and the budget, as `{spent: int, limit: int}` (`limit` 0:
    /// no budget): the whole runtime's, or with [param agent_id] a running agent's. Brains that
    /// call no model (`scripted`) spend nothing.
    #[func]
    pub fn get_token_usage(&mut self, #[opt(default = "")] agent_id: GString) -> VarDictionary {
        let id = agent_id.to_string();
        self.call_runtime(&id, "get_token_usage", |rt| {
            if id.is_empty() {
                Ok(rt.token_usage())
            } else {
                rt.agent_token_usage(&id).map_err(failure)
            }
        })
        .map(|(spent, limit)| {
            let mut d = VarDictionary::new();
            put(&mut d, "spent", clamp_i64(spent).to_variant());
            put(&mut d, "limit", clamp_i64(limit.unwrap_or(0)).to_variant());
            d
        })
        .unwrap_or_default()
    }

    /// Measures what one agent said, for a test or a report card. [param lines] (an Array,
    /// typed or not) are everyone's lines in the order they were said, each a Dictionary with
    /// `speaker` (an agent id or [member player_id]), `to` (the ids it was said to, empty for
    /// no one in particular) and `text`; [param agent_id] is the agent to measure and
    /// [param name] its name (its words are not what a question asks about). Returns a
    /// Dictionary with `lines` (how many it said), `repeated`, `repeated_share`, `echoes`,
    /// `echo_share`, `quotes_of_quotes`, `distinct_2`, `questions`, `answered`, `unanswered`
    /// and `echoed`:
    /// - `repeated_share`: its lines equal to one of its own earlier lines (case, punctuation
    ///   and whitespace aside), over its lines;
    /// - `echo_share`: its lines that quote a line another agent said earlier — five words in a
    ///   row of it, or two or more of its words in double quotation marks — over its lines;
    /// - `quotes_of_quotes`: its lines that quote a line which itself quotes another;
    /// - `distinct_2`: distinct pairs of consecutive words over all such pairs in its lines;
    /// - `questions`, `answered`: the player's lines to it ending with `?`, and those its next
    ///   line to the player answers by naming one of their words (stemmed; stop words and its
    ///   name aside); `unanswered` describes the others, `echoed` each echo.
    ///
    /// Shares are 0 for an agent that said nothing. A malformed line is an error
    /// (`invalid_message`) and the result is empty.
    /// ```gdscript
    /// var runtime: AgentRuntime = $AgentRuntime
    /// var lines := [
    ///     {"speaker": "player_0", "to": ["agent_001"], "text": "Any rye left?"},
    ///     {"speaker": "agent_001", "to": ["player_0"], "text": "Let me check… rye — left: 3."},
    /// ]
    /// var card: Dictionary = runtime.measure_lines(lines, "agent_001", "Mira")
    /// print(card.answered, "/", card.questions, " answered, echo ", card.echo_share)
    /// ```
    #[func]
    pub fn measure_lines(
        &mut self,
        lines: Variant,
        agent_id: GString,
        #[opt(default = "")] name: GString,
    ) -> VarDictionary {
        let id = agent_id.to_string();
        let parsed = variant_to_json(&lines)
            .map_err(|e| e.to_string())
            .and_then(|value| {
                serde_json::from_value::<Vec<Line>>(value)
                    .map_err(|e| format!("measure_lines: a line is not {{speaker, to, text}}: {e}"))
            });
        let lines = match parsed {
            Ok(lines) => lines,
            Err(message) => {
                self.report(&id, RuntimeErrorCode::InvalidMessage.as_str(), &message);
                return VarDictionary::new();
            }
        };
        let report =
            LineReport::measure(&lines, &id, &self.player_id.to_string(), &name.to_string());
        match serde_json::to_value(&report) {
            Ok(value) => json_to_variant(&value).to::<VarDictionary>(),
            Err(e) => {
                self.report(
                    &id,
                    RuntimeErrorCode::InvalidMessage.as_str(),
                    &e.to_string(),
                );
                VarDictionary::new()
            }
        }
    }

    /// Waits until every row written so far is committed to the database. Returns `false` on an
    /// error.
    #[func]
    pub fn flush(&mut self) -> bool {
        self.call_runtime("", "flush", |rt| rt.flush().map_err(failure))
            .is_ok()
    }

    /// Emits the queued events now (at most [param max_events]; `0`: everything queued), as a
    /// frame does; for use while the node does not process. Returns how many were emitted.
    #[func]
    pub fn drain_events(&mut self, #[opt(default = 0)] max_events: i64) -> i64 {
        let limit = if max_events > 0 {
            usize::try_from(max_events).unwrap_or(usize::MAX)
        } else {
            self.queue_capacity()
        };
        self.drain(limit, None)
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

    /// How many events the last frame took from the queue and emitted (profiling; merged speech
    /// pieces count one each, see [member merge_speech_deltas]).
    #[func]
    pub fn get_last_frame_event_count(&self) -> i64 {
        self.last_frame_events
    }

    /// Microseconds the last frame spent draining events and emitting their signals, connected
    /// handlers included (profiling).
    #[func]
    pub fn get_last_frame_drain_usec(&self) -> i64 {
        self.last_frame_drain_usec
    }

    /// Microseconds of the main thread's own CPU time the last frame's drain used (profiling):
    /// [method get_last_frame_drain_usec] without the time the thread waited for a core. `-1`
    /// where the platform does not tell (non-Unix).
    #[func]
    pub fn get_last_frame_drain_cpu_usec(&self) -> i64 {
        self.last_frame_drain_cpu_usec
    }

    /// Microseconds the last frame spent reporting to the editor's Agents debugger tab
    /// (profiling): `0`-ish without a debugger session and in a release build, where nothing is
    /// reported.
    #[func]
    pub fn get_last_frame_debugger_usec(&self) -> i64 {
        self.debugger.last_usec
    }
}

impl AgentRuntime {
    /// The core runtime while the node runs (for other nodes of this crate, such as `AgentApp`,
    /// that call it directly and spawn on its tokio handle).
    pub(crate) fn core_runtime(&self) -> Option<Arc<Runtime>> {
        self.runtime.clone()
    }

    fn queue_capacity(&self) -> usize {
        usize::try_from(self.event_queue_capacity.max(1)).unwrap_or(usize::MAX)
    }

    fn frame_limit(&self) -> usize {
        if self.max_events_per_frame > 0 {
            usize::try_from(self.max_events_per_frame).unwrap_or(usize::MAX)
        } else {
            self.queue_capacity()
        }
    }

    /// Runs `f` on the runtime; a failure (or "not running") is reported. Clears the last error
    /// on success.
    fn call_runtime<T>(
        &mut self,
        agent_id: &str,
        what: &str,
        f: impl FnOnce(&Runtime) -> Result<T, Failure>,
    ) -> Result<T, ()> {
        let result = match &self.runtime {
            Some(rt) => guarded(what, || f(rt)),
            None => Err((
                NOT_RUNNING,
                format!("{what}: the AgentRuntime is not running (call start())"),
            )),
        };
        match result {
            Ok(v) => {
                self.last_error.clear();
                Ok(v)
            }
            Err((code, message)) => {
                self.report(agent_id, code, &message);
                Err(())
            }
        }
    }

    /// Calls the operation `request` declares — the protocol's request of the same name —
    /// through the same checks and typed reply a protocol client gets
    /// ([`requests::answer`]); a refusal is reported as every failed call is, with its own
    /// code.
    fn call_request<R: Request>(
        &mut self,
        agent_id: &str,
        what: &str,
        request: R,
    ) -> Result<R::Reply, ()> {
        self.call_runtime(agent_id, what, |rt| {
            requests::answer(request, rt)
                .map_err(|refusal| (refusal.code.as_str(), refusal.message))
        })
    }

    /// Records a failure: last error, `push_error`, [signal error_occurred],
    /// [signal agent_error].
    fn report(&mut self, agent_id: &str, code: &str, message: &str) {
        self.last_error.set(code, message);
        godot_error!("AgentRuntime: {message}");
        self.signals().error_occurred().emit(code, message);
        self.signals().agent_error().emit(agent_id, code, message);
    }

    /// Stops without emitting anything (leaving the tree, drop).
    fn shut_down(&mut self) {
        let id = self.base().instance_id().to_i64();
        self.debugger.stopped(id);
        self.subscription = None;
        if let Some(server) = self.server.take() {
            let _ = catch_unwind(AssertUnwindSafe(|| server.shutdown(SHUTDOWN_TIMEOUT)));
        }
        if let Some(runtime) = self.runtime.take() {
            let _ = catch_unwind(AssertUnwindSafe(|| runtime.shutdown(SHUTDOWN_TIMEOUT)));
        }
    }
}

impl Drop for AgentRuntime {
    fn drop(&mut self) {
        self.shut_down();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_internal_errors() {
        let r: Result<(), Failure> = guarded("thing", || panic!("boom"));
        let (code, message) = r.unwrap_err();
        assert_eq!(code, "internal_error");
        assert!(
            message.contains("internal error in thing: boom"),
            "{message}"
        );
        assert_eq!(guarded("thing", || Ok::<_, Failure>(3)), Ok(3));
    }
}
