//! `AgentRuntime`: the agent runtime of `agents-core` as a Godot node.
//!
//! Threading: the node owns one [`Runtime`] (which owns its tokio runtime, its agents and the
//! SQLite writer thread) and one bus [`Subscription`]. Agents run on the runtime's worker threads;
//! the node drains its subscription with `try_recv` in `process` and emits the signals there, on
//! the main thread. No `Gd` ever leaves the main thread and nothing on the main thread waits for
//! an agent: method calls only queue work or read snapshots. `exit_tree` (and drop) drops the
//! subscription and shuts the runtime down (memory flushed, threads joined).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_core::brain::ClientBrainPolicy;
use agents_core::bus::{AgentErrorCode, BusMessage, Filter, Received, Subscription};
use agents_core::memory::AgentRecord;
use agents_core::moves::MoveOutcome;
use agents_core::net::{Server, ServerConfig, ServerHandle};
use agents_core::runtime::{
    AgentConfig as CoreConfig, AgentSnapshot, GAME_TOOLS, Position, Runtime, RuntimeError,
    RuntimeErrorCode, RuntimeOptions, WORLD_TOOLS, WorldBounds,
};
use agents_core::tools::ToolRegistry;
use godot::classes::{Engine, INode, Node};
use godot::prelude::*;
use serde_json::Value;

use crate::agent_brain::AgentBrain;
use crate::agent_config::AgentConfig;
use crate::agent_embeddings::AgentEmbeddings;
use crate::agent_memory::{AgentMemory, recalled_to_array, remember_request};
use crate::convert;
use crate::errors::{GodotErrorCode, LastError};
use crate::guard::put;
use crate::script_tools::{ScriptTools, ToolParts};

/// How long `stop`, `exit_tree` and drop wait for the agents and the writer thread.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Most GDScript tool calls run per frame; the rest wait for the next.
const MAX_TOOL_CALLS_PER_FRAME: usize = 256;

/// A failed call: the `agent_error` code and the message.
type Failure = (&'static str, String);

const INTERNAL_ERROR: &str = GodotErrorCode::InternalError.as_str();
const NOT_RUNNING: &str = GodotErrorCode::NotRunning.as_str();
const INVALID_CONFIG: &str = RuntimeErrorCode::InvalidConfig.as_str();
const INVALID_OPTIONS: &str = RuntimeErrorCode::InvalidOptions.as_str();

/// Runs `f`, turning a panic into an `internal_error` failure.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    crate::guard::guarded(what, f, |message| (INTERNAL_ERROR, message))
}

/// The runtime's error as a failure.
pub(crate) fn failure(error: RuntimeError) -> Failure {
    (error.code().as_str(), error.to_string())
}

/// The share of the longer side of [member AgentRuntime.world_bounds] agents hear within when
/// [member AgentRuntime.hearing_radius] is negative (its default).
const HEARING_SHARE_OF_WORLD: f64 = 0.15;

/// The profile name [member AgentRuntime.default_brain_config] is registered under.
const DEFAULT_BRAIN_PROFILE: &str = "default";

/// A count as a Godot int (saturating).
fn clamp_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Reads an [AgentConfig] resource or a Dictionary (see [method AgentRuntime.spawn_agent]).
fn config_from_variant(config: &Variant) -> Result<CoreConfig, String> {
    match config.get_type() {
        VariantType::OBJECT => {
            let resource = config.try_to::<Gd<AgentConfig>>().map_err(|_| {
                "spawn_agent wants an AgentConfig or a Dictionary, got an Object of another \
                 class (or a freed one)"
                    .to_string()
            })?;
            resource.bind().to_core()
        }
        VariantType::DICTIONARY => {
            let mut dict = config
                .try_to::<VarDictionary>()
                .map_err(|e| format!("invalid agent config: {e}"))?
                .duplicate_shallow();
            // `brain` (or `cli_backend`) may be an AgentBrain resource.
            let mut brain_object = None;
            for key in ["brain", "cli_backend"] {
                if let Some(value) = dict.get(key)
                    && value.get_type() == VariantType::OBJECT
                {
                    let brain = value.try_to::<Gd<AgentBrain>>().map_err(|_| {
                        format!(
                            "invalid agent config: {key} must be a name, a Dictionary or an \
                             AgentBrain, got an Object of another class"
                        )
                    })?;
                    brain_object = Some(brain.bind().to_core()?);
                    dict.erase(key);
                }
            }
            let mut map = convert::dictionary_to_json(&dict)
                .map_err(|e| format!("invalid agent config: {e}"))?;
            if let Some(spec) = brain_object {
                map.insert(
                    "brain".into(),
                    serde_json::to_value(spec).map_err(|e| format!("invalid brain: {e}"))?,
                );
            }
            // A brain object's files as paths of this machine, as from an AgentBrain.
            if let Some(Value::Object(brain)) = map.get_mut("brain") {
                let provider = brain
                    .get("provider")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                crate::packed_model::localize_brain(&provider, brain);
            }
            // Godot code tends to write "" or null for "not set".
            map.retain(|key, value| match value {
                Value::Null => false,
                Value::String(s) => {
                    !(s.trim().is_empty()
                        && matches!(key.as_str(), "agent_id" | "brain" | "cli_backend"))
                }
                _ => true,
            });
            CoreConfig::from_json(&Value::Object(map))
        }
        other => Err(format!(
            "spawn_agent wants an AgentConfig or a Dictionary, got {}",
            other.godot_type_name()
        )),
    }
}

/// A snapshot as the Dictionary [method AgentRuntime.get_agent_state] returns.
fn snapshot_to_dictionary(s: &AgentSnapshot) -> VarDictionary {
    let mut d = VarDictionary::new();
    put(&mut d, "agent_id", s.agent_id.to_variant());
    put(&mut d, "name", s.name.to_variant());
    put(&mut d, "role", s.role.to_variant());
    put(&mut d, "brain", s.brain.to_variant());
    put(&mut d, "state", s.state.as_str().to_variant());
    put(
        &mut d,
        "position",
        convert::position_to_vector2(s.position).to_variant(),
    );
    let (task, task_id) = s
        .current_task
        .as_ref()
        .map_or((String::new(), 0), |t| (t.task_name.clone(), t.id));
    put(&mut d, "current_task", task.to_variant());
    put(&mut d, "current_task_id", task_id.to_variant());
    d
}

/// An `AgentReplied` as [signal AgentRuntime.agent_replied]'s `reply`: `text`, `actions`,
/// `error` (`{code, message}`, or empty).
pub(crate) fn reply_to_dictionary(message: &BusMessage) -> VarDictionary {
    let mut d = VarDictionary::new();
    let BusMessage::AgentReplied {
        text,
        actions,
        error,
        ..
    } = message
    else {
        return d;
    };
    put(&mut d, "text", text.to_variant());
    put(&mut d, "actions", rows_to_array(actions).to_variant());
    let error = error
        .as_ref()
        .map(convert::serialize_to_dictionary)
        .unwrap_or_default();
    put(&mut d, "error", error.to_variant());
    d
}

/// A stored agent as a Dictionary, `position` as a Vector2.
fn record_to_dictionary(r: &AgentRecord) -> VarDictionary {
    let mut d = convert::serialize_to_dictionary(r);
    put(
        &mut d,
        "position",
        convert::position_to_vector2(r.position).to_variant(),
    );
    d
}

pub(crate) fn rows_to_array<T: serde::Serialize>(rows: &[T]) -> Array<VarDictionary> {
    let mut out = Array::new();
    for row in rows {
        out.push(&convert::serialize_to_dictionary(row));
    }
    out
}

/// Runs autonomous agents in the scene: each agent lives in its own task on a background thread
/// pool, moves, talks, answers the player and works on tasks, and everything it does arrives here
/// as signals, emitted on the main thread while the node processes (every frame).
///
/// ```gdscript
/// @onready var runtime: AgentRuntime = $AgentRuntime
///
/// func _ready():
///     runtime.agent_spoke.connect(func(id, text, to): print(id, ": ", text))
///     var id := runtime.spawn_agent({"name": "Mira", "role": "baker",
///             "initial_position": Vector2(10, 10)})
///     runtime.assign_task(id, "bake bread")
///     runtime.send_message(id, "Good morning!")
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

/// One agent's speech pieces of a frame, merged ([member AgentRuntime.merge_speech_deltas]).
#[derive(Debug, PartialEq)]
struct MergedDelta {
    agent_id: String,
    text: String,
    seq: u64,
}

/// The merged speech pieces of one drain, in the order their agents first streamed.
#[derive(Default)]
struct MergedDeltas {
    /// `None` once taken.
    pieces: Vec<Option<MergedDelta>>,
    /// Agent id → its entry in `pieces`, while not taken.
    index: std::collections::HashMap<String, usize>,
}

impl MergedDeltas {
    /// Appends a piece to the agent's merged text (a new entry if it has none waiting).
    fn push(&mut self, agent_id: &str, delta: &str, seq: u64) {
        if let Some(&i) = self.index.get(agent_id)
            && let Some(piece) = &mut self.pieces[i]
        {
            piece.text.push_str(delta);
            piece.seq = seq;
            return;
        }
        self.index.insert(agent_id.to_string(), self.pieces.len());
        self.pieces.push(Some(MergedDelta {
            agent_id: agent_id.to_string(),
            text: delta.to_string(),
            seq,
        }));
    }

    /// The agent's waiting text, if any; its next piece starts a new entry.
    fn take(&mut self, agent_id: &str) -> Option<MergedDelta> {
        let i = self.index.remove(agent_id)?;
        self.pieces[i].take()
    }

    /// Every waiting text, in order.
    fn take_all(&mut self) -> impl Iterator<Item = MergedDelta> + use<> {
        self.index.clear();
        std::mem::take(&mut self.pieces).into_iter().flatten()
    }
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
        // Models being copied out of the game's pack, a few milliseconds of the frame.
        crate::packed_model::advance(crate::packed_model::FRAME_BUDGET);
        // The game's own code first: tools written in GDScript that agents called.
        self.run_tool_calls();
        let started = Instant::now();
        let cpu_started = thread_cpu_usec();
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
                        "startup_failed",
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
                            return Err(("startup_failed", format!("WebSocket server: {e}")));
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

    /// Spawns an agent and returns its id (`agent_001`, …), or `""` on an error.
    ///
    /// [param config] is an [AgentConfig] or a Dictionary with the keys `name`, `role`, `prompt`,
    /// `brain` (or `cli_backend`), `initial_position` (a Vector2 or `{x, y}`),
    /// `idle_think_seconds`, `thinking_seconds`, `speaking_seconds`, `hearing_radius`, `seed`
    /// (int or String), `agent_id` and `script` (replies the `scripted` brain gives first, each
    /// `{assistant_text, dialog_type, tool_calls}`) — all optional; unknown keys are an error. With `agent_id`
    /// naming a stored agent, that agent resumes with its history (its stored name, role, … fill
    /// the keys left out). [signal agent_spawned] follows on a later frame.
    #[func]
    pub fn spawn_agent(&mut self, config: Variant) -> GString {
        let config = match guarded("spawn_agent", || {
            config_from_variant(&config).map_err(|m| (INVALID_CONFIG, m))
        }) {
            Ok(c) => c,
            Err((code, message)) => {
                self.report("", code, &message);
                return GString::new();
            }
        };
        let agent = config.agent_id.clone().unwrap_or_default();
        self.call_runtime(&agent, "spawn_agent", |rt| {
            rt.spawn(config).map_err(failure)
        })
        .map(|id| GString::from(id.as_str()))
        .unwrap_or_default()
    }

    /// Stops an agent for good: [signal agent_removed] with reason `terminated` follows, and
    /// [member resume_agents] will not bring it back (spawning with its `agent_id` still does).
    /// Returns `false` for an unknown agent.
    #[func]
    pub fn terminate_agent(&mut self, agent_id: GString) -> bool {
        let id = agent_id.to_string();
        self.call_runtime(&id, "terminate_agent", |rt| {
            rt.terminate(&id).map_err(failure)
        })
        .is_ok()
    }

    /// Registers a tool written in GDScript: agents attached to the tool set [param set] (by
    /// [member AgentConfig.tool_sets], or [method attach_tools]) may call it. [param parameters]
    /// is a JSON Schema object, or the shorthand `{"item": "string", "count": "int"}`; the
    /// arguments are checked against it before [param function] runs, on the main thread, with
    /// the arguments Dictionary (and, if it takes a second argument, the [AgentToolCall]). What
    /// it returns is the result: a Dictionary, or any JSON value; `{"error": "why"}` fails the
    /// call, and so do `null` (what a script error ends a function with), a freed object and a
    /// value that is not JSON. A coroutine (a function that `await`s) is an asynchronous tool:
    /// the agent waits for it. A [param read_only] tool's result goes back to the agent within
    /// the same decision (to look something up before acting). Registering a name again
    /// replaces the tool; agents see the change from their next decision. Returns `false` (and
    /// [signal agent_error], `invalid_config`) for a bad name, schema or Callable, or a tool
    /// that clashes with another set of an attached agent.
    /// ```gdscript
    /// var stock := {"rye": 3}
    ///
    /// func _ready() -> void:
    ///     var runtime: AgentRuntime = $AgentRuntime
    ///     runtime.register_tool("shop", "check_stock", "How many of an item the shop has.",
    ///             {"item": "string"}, check_stock, true)
    ///
    /// func check_stock(args: Dictionary) -> Dictionary:
    ///     return {"item": args.item, "count": stock.get(args.item, 0)}
    /// ```
    #[func]
    pub fn register_tool(
        &mut self,
        set: GString,
        name: GString,
        description: GString,
        parameters: VarDictionary,
        function: Callable,
        #[opt(default = false)] read_only: bool,
    ) -> bool {
        let tool = ToolParts {
            name: name.to_string(),
            description: description.to_string(),
            parameters,
            function,
            read_only,
        };
        let set = set.to_string();
        match self.add_tool(&set, &tool) {
            Ok(()) => {
                crate::tool_set_names::remember(&set);
                true
            }
            Err(message) => {
                self.report("", INVALID_CONFIG, &message);
                false
            }
        }
    }

    /// Removes a tool of [method register_tool]; the set goes when its last tool does (and is
    /// detached from its agents). Returns `false` when there is no such tool.
    #[func]
    pub fn unregister_tool(&mut self, set: GString, name: GString) -> bool {
        let (set, name) = (set.to_string(), name.to_string());
        match self.script_tools.unregister(&set, &name) {
            None => {
                self.report(
                    "",
                    INVALID_CONFIG,
                    &format!("no tool '{name}' in the tool set '{set}'"),
                );
                false
            }
            Some((_, true)) => {
                if self.runtime.is_some() {
                    let _ = self.call_runtime("", "unregister_tool", |rt| {
                        rt.remove_tool_set(&set).map_err(failure)
                    });
                }
                true
            }
            Some((registry, false)) => self.publish_tool_set(&set, registry),
        }
    }

    /// The tool sets agents can be attached to: the built-in `world` and `games`, and those
    /// registered (GDScript tools, apps, campaigns). Before [method start]: the built-in ones
    /// and the GDScript ones.
    #[func]
    pub fn get_tool_sets(&self) -> PackedStringArray {
        let mut names = match &self.runtime {
            Some(rt) => rt.tool_set_names(),
            None => vec![WORLD_TOOLS.to_string(), GAME_TOOLS.to_string()],
        };
        for set in self.script_tools.set_names() {
            if !names.contains(&set) {
                names.push(set);
            }
        }
        names.sort();
        convert::strings_to_packed(&names)
    }

    /// The round trip of the last GDScript tool call, in microseconds: from the agent's call,
    /// through the main thread and the function, to the answer back on the agent's side
    /// (`-1` before the first). A call waits for the next frame to run, so at 60 frames a
    /// second it takes up to 16.7 ms more than the function itself.
    #[func]
    pub fn get_last_tool_call_usec(&self) -> i64 {
        self.script_tools.last_call_usec()
    }

    /// The names of the GDScript tools of [param set] ([method register_tool]).
    #[func]
    pub fn get_tool_names(&self, set: GString) -> PackedStringArray {
        convert::strings_to_packed(&self.script_tools.tool_names(&set.to_string()))
    }

    /// Attaches a running agent to a tool set: its next decision may call the set's tools.
    /// Returns `false` for an unknown agent or set, or a set with a tool named like one the
    /// agent has.
    #[func]
    pub fn attach_tools(&mut self, agent_id: GString, set: GString) -> bool {
        let (id, set) = (agent_id.to_string(), set.to_string());
        self.call_runtime(&id, "attach_tools", |rt| {
            rt.attach_tools(&id, &set).map_err(failure)
        })
        .is_ok()
    }

    /// Detaches a running agent from a tool set. Returns `false` for an unknown agent.
    #[func]
    pub fn detach_tools(&mut self, agent_id: GString, set: GString) -> bool {
        let (id, set) = (agent_id.to_string(), set.to_string());
        self.call_runtime(&id, "detach_tools", |rt| {
            rt.detach_tools(&id, &set).map_err(failure)
        })
        .is_ok()
    }

    /// The tool sets a running agent is attached to, in order (empty for an unknown agent).
    #[func]
    pub fn get_agent_tool_sets(&mut self, agent_id: GString) -> PackedStringArray {
        let id = agent_id.to_string();
        self.call_runtime(&id, "get_agent_tool_sets", |rt| {
            rt.agent_tool_sets(&id).map_err(failure)
        })
        .map(|sets| convert::strings_to_packed(&sets))
        .unwrap_or_default()
    }

    /// Finishes the move [param move_id] of a running agent (from [signal agent_move_requested]):
    /// it arrived (an empty [param blocked_reason]), or it could not get there and
    /// [param blocked_reason] says why ("the door is locked"). The agent's next decision is
    /// told; [signal agent_move_finished] follows. Returns `false` (and [signal agent_error],
    /// `unknown_move`) for a move that a newer one replaced or that finished already.
    /// ```gdscript
    /// @onready var runtime: AgentRuntime = $AgentRuntime
    /// var npcs := {}   # agent id → its Node2D
    ///
    /// func _on_agent_move_requested(agent_id: String, move_id: int, _from: Vector2, to: Vector2) -> void:
    ///     var npc: Node2D = npcs[agent_id]
    ///     var tween := npc.create_tween()
    ///     tween.tween_property(npc, "position", to, 1.0)
    ///     tween.finished.connect(func(): runtime.finish_move(agent_id, move_id))
    /// ```
    #[func]
    pub fn finish_move(
        &mut self,
        agent_id: GString,
        move_id: i64,
        #[opt(default = "")] blocked_reason: GString,
    ) -> bool {
        let id = agent_id.to_string();
        let reason = blocked_reason.to_string();
        self.call_runtime(&id, "finish_move", |rt| {
            let outcome = if reason.trim().is_empty() {
                MoveOutcome::Arrived
            } else {
                MoveOutcome::Blocked(reason.clone())
            };
            let move_id = u64::try_from(move_id).unwrap_or(0);
            rt.finish_move(&id, move_id, outcome).map_err(failure)
        })
        .is_ok()
    }

    /// Tells a running agent what it perceives ([param text]: "The cellar door is locked."):
    /// the line is shown to its next decision, once. It is not a message — the agent neither
    /// decides because of it nor answers it. The newest 32 wait. Returns `false` for an agent
    /// that is not running, or a text that is empty or longer than 2,000 characters (a
    /// memory's length).
    #[func]
    pub fn observe(&mut self, agent_id: GString, text: GString) -> bool {
        let id = agent_id.to_string();
        let text = text.to_string();
        self.call_runtime(&id, "observe", |rt| rt.observe(&id, &text).map_err(failure))
            .is_ok()
    }

    /// Pauses ([param paused] `true`) or resumes a running agent's autonomous loop. A paused
    /// agent decides nothing on its own — its idle time passes, its app's news waits — but still
    /// listens and answers [method send_message]; resuming makes it decide at once. The editor's
    /// Agents debugger tab does the same. Returns `false` for an agent that is not running.
    /// ```gdscript
    /// var runtime: AgentRuntime = $AgentRuntime
    /// var id: String = runtime.list_agents()[0]
    /// runtime.set_agent_paused(id, true)   # hold it still during a cutscene
    /// ```
    #[func]
    pub fn set_agent_paused(&mut self, agent_id: GString, paused: bool) -> bool {
        let id = agent_id.to_string();
        self.call_runtime(&id, "set_agent_paused", |rt| {
            rt.set_paused(&id, paused).map_err(failure)
        })
        .is_ok()
    }

    /// Whether a running agent's autonomous loop is paused ([method set_agent_paused]); `false`
    /// for an agent that is not running.
    #[func]
    pub fn is_agent_paused(&self, agent_id: GString) -> bool {
        self.runtime
            .as_ref()
            .and_then(|rt| rt.is_paused(&agent_id.to_string()).ok())
            .unwrap_or(false)
    }

    /// A running agent's last decisions (at most 20, oldest first), as the Agents debugger
    /// shows them: Dictionaries with `number`, `started_at`, `trigger` (`message`,
    /// `autonomous` or `campaign_turn`), `context` (a one-line summary of what it saw), `calls`
    /// (an Array of `{id, tool, args, outcome, detail}`, `outcome` being `done`, `failed` or
    /// `refused`), `spoken` (an Array of lines), `failure` (present when the decision failed),
    /// `latency_ms`, `model_calls`, `input_tokens`, `output_tokens` and `repairs`. Kept in
    /// memory while the agent runs. Empty for an agent that is not running.
    #[func]
    pub fn get_recent_decisions(&mut self, agent_id: GString) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        self.call_runtime(&id, "get_recent_decisions", |rt| {
            rt.recent_decisions(&id).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// A running agent's state: `agent_id`, `name`, `role`, `brain`, `state` (`idle`,
    /// `listening`, `thinking` or `speaking`), `position` (Vector2), `current_task` (the task it
    /// works on, `""` if none) and `current_task_id` (`0` if none). Empty for an agent that is
    /// not running.
    #[func]
    pub fn get_agent_state(&self, agent_id: GString) -> VarDictionary {
        let id = agent_id.to_string();
        self.runtime
            .as_ref()
            .and_then(|rt| {
                catch_unwind(AssertUnwindSafe(|| rt.state(&id)))
                    .ok()
                    .flatten()
            })
            .map(|s| snapshot_to_dictionary(&s))
            .unwrap_or_default()
    }

    /// The ids of the running agents, in id order (`agent_002` before `agent_010`).
    #[func]
    pub fn list_agents(&self) -> PackedStringArray {
        let ids = self
            .runtime
            .as_ref()
            .and_then(|rt| catch_unwind(AssertUnwindSafe(|| rt.agent_ids())).ok())
            .unwrap_or_default();
        convert::strings_to_packed(&ids)
    }

    /// [method get_agent_state] of every running agent, in id order.
    #[func]
    pub fn get_agent_states(&self) -> Array<VarDictionary> {
        let mut out = Array::new();
        for s in self.snapshots() {
            out.push(&snapshot_to_dictionary(&s));
        }
        out
    }

    /// Plants a memory in an agent's stream (running, or stored in the database): [param text]
    /// is what it now remembers ("The cellar key is under the mat."), 1 to 2,000 characters;
    /// [param kind] is one of the `MEMORY_*` constants of [AgentConstants] (`"fact"` by
    /// default); [param importance] 1–10 (`0`: judged from the kind and text); [param about]
    /// whom it is about (an agent id or the player's id; `""`: no one); [param supersedes] the
    /// older memories it replaces (a belief that turned out wrong stays, marked, and the agent
    /// prefers the new one). Returns the memory's id, or `0` on an error ([method
    /// get_last_error]).
    /// ```gdscript
    /// var runtime: AgentRuntime = $AgentRuntime
    /// var baker_id: String = runtime.list_agents()[0]
    /// var key_id: int = runtime.remember(baker_id, "The cellar key is under the mat.")
    /// runtime.remember(baker_id, "Tom moved the key.", "fact", 8, "", PackedInt64Array([key_id]))
    /// ```
    #[func]
    pub fn remember(
        &mut self,
        agent_id: GString,
        text: GString,
        #[opt(default = "fact")] kind: GString,
        #[opt(default = 0)] importance: i64,
        #[opt(default = "")] about: GString,
        #[opt(default = &PackedInt64Array::new())] supersedes: PackedInt64Array,
    ) -> i64 {
        let id = agent_id.to_string();
        self.call_runtime(&id, "remember", |rt| {
            let memory = remember_request(&text, &kind, importance, &about, &supersedes)
                .map_err(|e| (RuntimeErrorCode::InvalidMessage.as_str(), e))?;
            rt.remember(&id, memory).map_err(failure)
        })
        .unwrap_or(0)
    }

    /// What an agent (running or stored) recalls for [param query] now, best first, at most
    /// [param limit] (50 at most), scored as for its decisions. Each is a Dictionary with
    /// `memory` (the stored memory: `id`, `kind`, `text`, `importance` 1–10, `about`,
    /// `game_time`, `superseded_by`, …), `score`, and the parts of it from 0 to 1: `recency`,
    /// `importance`, `relevance`, and `semantic` (how close its meaning is, when an
    /// [member embeddings] endpoint answered and the memory has a vector); `in_view` is always
    /// false here. It only looks: the memories are not made recent again. With an embeddings
    /// endpoint it waits for the query's vector (at most
    /// [member AgentEmbeddings.query_timeout_ms]).
    #[func]
    pub fn recall(
        &mut self,
        agent_id: GString,
        query: GString,
        #[opt(default = 10)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "recall", |rt| {
            rt.recall(&id, &query.to_string(), limit).map_err(failure)
        })
        .map(|recalled| recalled_to_array(&recalled))
        .unwrap_or_default()
    }

    /// Forgets one memory of an agent. Returns `false` for an agent or a memory it does not
    /// have (`unknown_memory`).
    #[func]
    pub fn forget_memory(&mut self, agent_id: GString, memory_id: i64) -> bool {
        let id = agent_id.to_string();
        self.call_runtime(&id, "forget_memory", |rt| {
            rt.forget(&id, memory_id).map_err(failure)
        })
        .is_ok()
    }

    /// An agent's memories, the newest [param limit] with an id below [param before] (`0`:
    /// from the newest), oldest first, as Dictionaries with `id`, `agent_id`, `kind`, `text`,
    /// `importance`, `about`, `game_time`, `created_at`, `accessed_at` and `superseded_by`
    /// (a key left out: not set). Pass the first one's `id` as [param before] for the page
    /// before. Works for stored agents.
    #[func]
    pub fn get_memories(
        &mut self,
        agent_id: GString,
        #[opt(default = 50)] limit: i64,
        #[opt(default = 0)] before: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        let before = (before > 0).then_some(before);
        self.call_runtime(&id, "get_memories", |rt| {
            rt.memories_page(&id, before, limit).map_err(failure)
        })
        .map(|page| rows_to_array(&page.rows))
        .unwrap_or_default()
    }

    /// The game time now, in seconds: what memories are stamped with and their recency is
    /// measured in. It runs at [member game_time_scale] and starts where the database's
    /// memories left off; `0.0` while the runtime is not running.
    #[func]
    pub fn get_game_time(&self) -> f64 {
        self.runtime.as_ref().map_or(0.0, |rt| rt.game_time())
    }

    /// Sets the game time, in seconds (a day is 86,400); it runs on from there. Returns
    /// `false` when the runtime is not running or the number is not finite.
    #[func]
    pub fn set_game_time(&mut self, seconds: f64) -> bool {
        self.call_runtime("", "set_game_time", |rt| {
            rt.set_game_time(seconds).map_err(failure)
        })
        .is_ok()
    }

    /// Says [param text] to an agent as the player ([member player_id]). The agent listens,
    /// thinks and answers with [signal agent_said] addressed to the player. Returns the line's
    /// message id ([signal agent_replied] names it), or `0` for an unknown agent, an empty or
    /// too long text ([method get_last_error]) — as [method AgentNode.say] does.
    #[func]
    pub fn say(&mut self, agent_id: GString, text: GString) -> i64 {
        let id = agent_id.to_string();
        let text = text.to_string();
        self.call_runtime(&id, "say", |rt| rt.send_message(&id, &text).map_err(failure))
            .unwrap_or(0)
    }

    /// Deprecated: use [method say], which returns the line's message id. Says [param text] to
    /// an agent as the player; `false` on an error.
    #[func]
    pub fn send_message(&mut self, agent_id: GString, text: GString) -> bool {
        let id = agent_id.to_string();
        let text = text.to_string();
        self.call_runtime(&id, "send_message", |rt| {
            rt.send_message(&id, &text).map_err(failure)
        })
        .is_ok()
    }

    /// Assigns the task [param task_name] to a running agent; returns the task id ([signal
    /// task_assigned] follows), or `0` on an error.
    #[func]
    pub fn assign_task(&mut self, agent_id: GString, task_name: GString) -> i64 {
        let id = agent_id.to_string();
        let task = task_name.to_string();
        self.call_runtime(&id, "assign_task", |rt| {
            rt.assign_task(&id, &task).map_err(failure)
        })
        .map_or(0, |row| row.id)
    }

    /// Marks a task completed ([signal task_completed] follows). Returns `false` for an unknown
    /// or already completed task.
    #[func]
    pub fn complete_task(&mut self, task_id: i64) -> bool {
        self.call_runtime("", "complete_task", |rt| {
            rt.complete_task(task_id).map_err(failure)
        })
        .is_ok()
    }

    /// The last [param limit] lines of an agent's conversation memory, oldest first, as
    /// Dictionaries `{id, agent_id, timestamp, sender, content, recipient}` (`recipient`: an id,
    /// several joined with `,`, or `null`). Works for stored agents that are not running.
    #[func]
    pub fn get_conversation(
        &mut self,
        agent_id: GString,
        #[opt(default = 50)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "get_conversation", |rt| {
            rt.conversation(&id, limit).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// An agent's tasks as Dictionaries
    /// `{id, agent_id, task_name, status, created_at, completed_at}` (`status` `assigned` or
    /// `completed`; `completed_at` `null` while open).
    #[func]
    pub fn get_tasks(&mut self, agent_id: GString) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        self.call_runtime(&id, "get_tasks", |rt| rt.tasks(&id).map_err(failure))
            .map(|rows| rows_to_array(&rows))
            .unwrap_or_default()
    }

    /// The last [param limit] state changes of an agent, oldest first, as Dictionaries
    /// `{id, agent_id, old_state, new_state, timestamp}`.
    #[func]
    pub fn get_state_history(
        &mut self,
        agent_id: GString,
        #[opt(default = 100)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "get_state_history", |rt| {
            rt.state_history(&id, limit).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// The last [param limit] model calls of an agent (its `brain_calls` trace), oldest first, as
    /// Dictionaries with `id`, `agent_id`, `provider`, `model`, `started_at`, `latency_ms`,
    /// `input_tokens`, `output_tokens`, `cached_tokens`, `outcome`, `repairs`, `error_code`,
    /// `prompt` and `reply`. `outcome` is
    /// `ok`, `invalid_reply`, `error` or `cancelled`; `prompt` and `reply` are `null` unless the
    /// brain keeps them (`trace_prompts`). Empty for brains that call no model (`scripted`).
    #[func]
    pub fn get_agent_trace(
        &mut self,
        agent_id: GString,
        #[opt(default = 100)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "get_agent_trace", |rt| {
            rt.agent_trace(&id, limit).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
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

    /// Sets, raises, lowers or removes a token budget ([param limit] ≤ 0: no budget): the whole
    /// runtime's, or with [param agent_id] a running agent's. An agent stopped by a spent budget
    /// (it reported `budget_exhausted`) thinks again once the budget allows. Returns `false` for
    /// an unknown agent.
    #[func]
    pub fn set_token_budget(&mut self, limit: i64, #[opt(default = "")] agent_id: GString) -> bool {
        let id = agent_id.to_string();
        let limit = u64::try_from(limit).ok().filter(|&l| l > 0);
        if id.is_empty() {
            self.runtime_token_budget = limit.map_or(0, clamp_i64);
        }
        self.call_runtime(&id, "set_token_budget", |rt| {
            if id.is_empty() {
                rt.set_token_budget(limit);
                Ok(())
            } else {
                rt.set_agent_token_budget(&id, limit).map_err(failure)
            }
        })
        .is_ok()
    }

    /// Hands the runtime the API key for the environment variable [param variable] (the
    /// [member AgentBrain.api_key_env], or `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), for a game
    /// that asks its player for a key. The key stays in this process's memory: it is preferred
    /// to the variable, never saved, logged or shown, and gone when the game quits. Agents
    /// spawned from now on use it. An empty [param key] removes it.
    #[func]
    pub fn set_api_key(&mut self, variable: GString, key: GString) -> bool {
        let variable = variable.to_string();
        let key = key.to_string();
        self.call_runtime("", "set_api_key", |rt| {
            rt.set_api_key(&variable, &key);
            Ok(())
        })
        .is_ok()
    }

    /// Every agent stored in the database, running or not, as Dictionaries with `agent_id`,
    /// `name`, `role`, `prompt`, `brain`, `config`, `position` (a Vector2), `state`,
    /// `created_at`, `removed_at` (set once terminated) and, for one that [member resume_agents]
    /// could not start, `waiting_for` (`{reason, message}`: `reason` is `api_key`, `brain`,
    /// `model_file` or `other`).
    #[func]
    pub fn get_stored_agents(&mut self) -> Array<VarDictionary> {
        self.call_runtime("", "get_stored_agents", |rt| {
            let records = rt.stored_agents().map_err(failure)?;
            Ok(records
                .into_iter()
                .map(|r| {
                    let waiting = rt.waiting_for(&r.agent_id);
                    (r, waiting)
                })
                .collect::<Vec<_>>())
        })
        .map(|records| {
            let mut out = Array::new();
            for (r, waiting) in &records {
                let mut d = record_to_dictionary(r);
                if let Some(waiting) = waiting {
                    put(
                        &mut d,
                        "waiting_for",
                        convert::serialize_to_dictionary(waiting).to_variant(),
                    );
                }
                out.push(&d);
            }
            out
        })
        .unwrap_or_default()
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

    /// The configuration warnings the editor shows on this node (the yellow triangle in the
    /// Scene dock), one text per problem; empty when there is none. A game can call it too, for
    /// a runtime set up from code. It warns about a [member database_path] the runtime cannot
    /// use — empty, under `res://` (read-only in an exported game), in a folder that cannot be
    /// created or written, a read-only file — and about brains of [member default_brain_config]
    /// and [member brain_profiles] that agents would be refused at spawn: an `openai` or
    /// `anthropic` brain without a model, or whose key variable ([member AgentBrain.api_key_env])
    /// is not set in this process's environment (a loopback [member AgentBrain.base_url] needs
    /// none; a key handed over later with [method set_api_key] cannot be known here), settings
    /// [method AgentBrain.validate] refuses, a profile that is not an [AgentBrain].
    /// ```gdscript
    /// for warning in $AgentRuntime.get_configuration_warnings():
    ///     push_warning(warning)
    /// ```
    #[func(rename = get_configuration_warnings)]
    pub fn configuration_warnings(&self) -> PackedStringArray {
        let mut warnings: Vec<String> = database_path_warning(&self.database_path.to_string())
            .into_iter()
            .collect();
        if let Some(brain) = &self.default_brain_config {
            warnings.extend(brain.bind().configuration_warnings("default_brain_config"));
        }
        for (name, value) in self.brain_profiles.iter_shared() {
            let label = format!("brain_profiles[\"{name}\"]");
            match value.try_to::<Gd<AgentBrain>>() {
                Ok(brain) => warnings.extend(brain.bind().configuration_warnings(&label)),
                Err(_) => warnings.push(format!(
                    "{label} is not an AgentBrain resource: the runtime will not start. Make \
                     each profile an AgentBrain (New AgentBrain in the inspector)."
                )),
            }
        }
        convert::strings_to_packed(&warnings)
    }
}

/// What keeps the runtime from creating or writing its database at `path` (the
/// [member AgentRuntime.database_path]), for the configuration warnings. Reads the file system
/// only: nothing is created.
fn database_path_warning(path: &str) -> Option<String> {
    use std::path::Path;
    if path.trim().is_empty() {
        return Some(
            "database_path is empty: the runtime will not start. Set it to a file such as \
             user://agents.db."
                .into(),
        );
    }
    if path.starts_with("res://") {
        return Some(format!(
            "database_path \"{path}\" is inside the project (res://), which is read-only in an \
             exported game: the runtime will not start there. Use a user:// path such as \
             user://agents.db."
        ));
    }
    let global = crate::paths::globalize_path(path);
    let file = Path::new(&global);
    if file.is_dir() {
        return Some(format!(
            "database_path \"{path}\" is a folder: name a file in it (such as {}/agents.db).",
            path.trim_end_matches('/')
        ));
    }
    if file.exists() {
        return (!writable(file)).then(|| {
            format!(
                "database_path \"{path}\": the file {global} is read-only: the runtime cannot \
                 write it."
            )
        });
    }
    // `start` creates the missing folders: find the closest one that exists.
    let folder = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut existing = folder;
    while !existing.exists() {
        match existing.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => existing = parent,
            _ => return None,
        }
    }
    let shown = existing.display();
    if !existing.is_dir() {
        Some(format!(
            "database_path \"{path}\": the folder {} cannot be created, {shown} is a file, not a \
             folder: the runtime will not start.",
            folder.display()
        ))
    } else if !writable(existing) {
        Some(if existing == folder {
            format!(
                "database_path \"{path}\": the folder {shown} is not writable: the runtime will not \
                 start."
            )
        } else {
            format!(
                "database_path \"{path}\": the folder {} cannot be created in {shown}, which is not \
                 writable: the runtime will not start.",
                folder.display()
            )
        })
    } else {
        None
    }
}

/// Whether this process may write `path` (a file, or a folder to create files in), without
/// writing anything.
fn writable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `access` reads a NUL-terminated path that lives through the call.
        unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
    }
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

impl AgentRuntime {
    /// The core runtime while the node runs (for other nodes of this crate, such as `AgentApp`,
    /// that call it directly and spawn on its tokio handle).
    pub(crate) fn core_runtime(&self) -> Option<Arc<Runtime>> {
        self.runtime.clone()
    }

    /// The WebSocket server's settings, or `None` when it is off.
    fn server_config(&self) -> Result<Option<ServerConfig>, String> {
        if !self.websocket_enabled {
            return Ok(None);
        }
        let port = u16::try_from(self.websocket_port).map_err(|_| {
            format!(
                "websocket_port must be 0–65535, got {}",
                self.websocket_port
            )
        })?;
        let host = self.websocket_bind.to_string();
        let ip: std::net::IpAddr = host.trim().parse().map_err(|_| {
            format!("websocket_bind must be an IP address such as 127.0.0.1, got '{host}'")
        })?;
        let token = self.websocket_token.to_string();
        let config = ServerConfig {
            bind: std::net::SocketAddr::new(ip, port),
            token: if token.is_empty() { None } else { Some(token) },
            insecure_no_token: self.websocket_insecure_no_token,
            allowed_origins: self
                .websocket_allowed_origins
                .as_slice()
                .iter()
                .map(|o| o.to_string())
                .collect(),
            allowed_hosts: self
                .websocket_allowed_hosts
                .as_slice()
                .iter()
                .map(|h| h.to_string())
                .collect(),
            mcp: self.mcp_enabled,
            client_brains: self.client_brain_policy()?,
            ..ServerConfig::default()
        };
        config.validate()?;
        Ok(Some(config))
    }

    /// What the server's clients may choose as a brain, from the properties.
    fn client_brain_policy(&self) -> Result<ClientBrainPolicy, String> {
        let origins = if self.client_brain_origins.is_empty() {
            None
        } else {
            let list: Vec<String> = self
                .client_brain_origins
                .as_slice()
                .iter()
                .map(|o| o.to_string())
                .collect();
            Some(
                agents_core::brain::policy::parse_origins(&list.join(","))
                    .map_err(|e| format!("client_brain_origins: {e}"))?,
            )
        };
        Ok(ClientBrainPolicy {
            objects: self.allow_client_brains,
            origins,
            presets: self.client_brain_presets,
        })
    }

    /// The runtime options from the properties.
    fn options(&self) -> Result<RuntimeOptions, String> {
        if self.seed < 0 {
            return Err(format!("seed must be 0 or more, got {}", self.seed));
        }
        if self.event_queue_capacity < 1 {
            return Err(format!(
                "event_queue_capacity must be at least 1, got {}",
                self.event_queue_capacity
            ));
        }
        if self.max_events_per_frame < 0 {
            return Err(format!(
                "max_events_per_frame must be 0 (unlimited) or more, got {}",
                self.max_events_per_frame
            ));
        }
        if self.max_drain_usec_per_frame < 0 {
            return Err(format!(
                "max_drain_usec_per_frame must be 0 (no limit) or more, got {}",
                self.max_drain_usec_per_frame
            ));
        }
        let path = self.database_path.to_string();
        if path.trim().is_empty() {
            return Err("database_path is empty".into());
        }
        let r = self.world_bounds;
        let bounds = WorldBounds::from_rect(
            f64::from(r.position.x),
            f64::from(r.position.y),
            f64::from(r.size.x),
            f64::from(r.size.y),
        )
        .map_err(|e| format!("world_bounds: {e}"))?;
        for (name, value) in [
            (
                "max_concurrent_model_calls",
                self.max_concurrent_model_calls,
            ),
            (
                "max_concurrent_model_calls_per_endpoint",
                self.max_concurrent_model_calls_per_endpoint,
            ),
            ("max_agents", self.max_agents),
        ] {
            if value < 1 {
                return Err(format!("{name} must be at least 1, got {value}"));
            }
        }
        let mut brain_profiles = std::collections::BTreeMap::new();
        for (name, brain) in self.brain_profiles.iter_shared() {
            let name = name.try_to::<GString>().map_err(|_| {
                format!(
                    "brain_profiles: a profile name must be text, got {}",
                    name.get_type().godot_type_name()
                )
            })?;
            let brain = brain.try_to::<Gd<AgentBrain>>().map_err(|_| {
                format!("brain_profiles.{name}: an AgentBrain resource is expected")
            })?;
            let spec = brain
                .bind()
                .to_core()
                .map_err(|e| format!("brain_profiles.{name}: {e}"))?;
            brain_profiles.insert(name.to_string(), spec);
        }
        let mut default_brain = self.default_brain.to_string();
        if let Some(brain) = &self.default_brain_config {
            let spec = brain
                .bind()
                .to_core()
                .map_err(|e| format!("default_brain_config: {e}"))?;
            brain_profiles.insert(DEFAULT_BRAIN_PROFILE.into(), spec);
            default_brain = DEFAULT_BRAIN_PROFILE.into();
        }
        let options = RuntimeOptions {
            database: PathBuf::from(crate::paths::globalize_path(&path)),
            idle_think_seconds: self.idle_think_seconds,
            bounds,
            default_brain,
            brain_profiles,
            max_concurrent_model_calls: usize::try_from(self.max_concurrent_model_calls)
                .unwrap_or(usize::MAX),
            max_concurrent_model_calls_per_endpoint: usize::try_from(
                self.max_concurrent_model_calls_per_endpoint,
            )
            .unwrap_or(usize::MAX),
            max_agents: usize::try_from(self.max_agents).unwrap_or(usize::MAX),
            token_budget: u64::try_from(self.runtime_token_budget)
                .ok()
                .filter(|&b| b > 0),
            thinking_seconds: self.thinking_seconds,
            speaking_seconds: self.speaking_seconds,
            hearing_radius: self.hearing_radius(),
            player_id: self.player_id.to_string(),
            seed: self.seed.unsigned_abs(),
            campaign_dir: (!self.campaign_dir.is_empty()).then(|| {
                PathBuf::from(crate::paths::globalize_path(&self.campaign_dir.to_string()))
            }),
            memory: self
                .memory
                .as_ref()
                .map(|m| m.bind().to_core())
                .unwrap_or_default(),
            embeddings: self.embeddings.as_ref().map(|e| e.bind().to_core()),
            game_time_scale: self.game_time_scale,
            ..RuntimeOptions::default()
        };
        options.validate()?;
        Ok(options)
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

    /// Warns, naming them, of start-time properties changed since [method start] (they are
    /// not applied), once for each change.
    fn warn_of_late_properties(&mut self) {
        let Some(started) = self.started_with.take() else {
            return;
        };
        let node = self.base_mut();
        let changed = started.changed(&node);
        let now = if changed.is_empty() {
            started
        } else {
            crate::started_with::StartedWith::take(&node, "AgentRuntime")
        };
        drop(node);
        self.started_with = Some(now);
        if !changed.is_empty() {
            godot_warn!("{}", crate::started_with::warning(&changed));
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

    /// Adds a GDScript tool to `set` and gives the runtime the set's new tools (when it runs;
    /// a runtime that starts takes them all). A tool the runtime refuses is taken out again.
    fn add_tool(&mut self, set: &str, tool: &ToolParts) -> Result<(), String> {
        let registry = self.script_tools.register(set, tool)?;
        let Some(runtime) = &self.runtime else {
            return Ok(());
        };
        let published = crate::guard::guarded(
            "register_tool",
            || {
                runtime
                    .set_tool_set(set, registry)
                    .map_err(|e| e.to_string())
            },
            |message| message,
        );
        if published.is_err()
            && let Some((registry, empty)) = self.script_tools.unregister(set, &tool.name)
            && !empty
        {
            let _ = runtime.set_tool_set(set, registry);
        }
        published
    }

    /// Gives the runtime the new tools of `set` (when it runs).
    fn publish_tool_set(&mut self, set: &str, registry: ToolRegistry) -> bool {
        if self.runtime.is_none() {
            return true;
        }
        self.call_runtime("", "register_tool", |rt| {
            rt.set_tool_set(set, registry).map_err(failure)
        })
        .is_ok()
    }

    /// A tool of an [AgentNode]'s own set ([method AgentNode.register_tool]).
    pub(crate) fn register_node_tool(&mut self, set: &str, tool: &ToolParts) -> Result<(), String> {
        self.add_tool(set, tool)
    }

    /// Removes an [AgentNode]'s own tool set (it left the tree).
    pub(crate) fn remove_node_tools(&mut self, set: &str) {
        if self.script_tools.remove_set(set)
            && let Some(runtime) = &self.runtime
        {
            let _ = runtime.remove_tool_set(set);
        }
    }

    /// Runs the GDScript tools agents called since the last frame (each with the runtime made
    /// re-entrant: a tool may call back into it).
    fn run_tool_calls(&mut self) {
        for call in self.script_tools.take_pending(MAX_TOOL_CALLS_PER_FRAME) {
            if call.is_cancelled() {
                continue;
            }
            match self.script_tools.resolve(&call) {
                Err(output) => call.answer(output),
                Ok((callable, wants_call)) => {
                    let _reentrant = self.base_mut();
                    call.run(&callable, wants_call);
                }
            }
        }
    }

    /// Records a failure: last error, `push_error`, [signal error_occurred],
    /// [signal agent_error].
    fn report(&mut self, agent_id: &str, code: &str, message: &str) {
        self.last_error.set(code, message);
        godot_error!("AgentRuntime: {message}");
        self.signals().error_occurred().emit(code, message);
        self.signals().agent_error().emit(agent_id, code, message);
    }

    fn snapshots(&self) -> Vec<AgentSnapshot> {
        let Some(rt) = &self.runtime else {
            return Vec::new();
        };
        catch_unwind(AssertUnwindSafe(|| rt.list())).unwrap_or_default()
    }

    /// Emits up to `limit` queued events, stopping at `deadline` (the frame's drain budget);
    /// returns how many were taken from the queue. Re-checks
    /// the subscription before every event: a handler may stop the runtime. With
    /// [member merge_speech_deltas], an agent's speech pieces wait in [`MergedDeltas`] until its
    /// next event of another kind, or the end of the drain.
    fn drain(&mut self, limit: usize, deadline: Option<Instant>) -> i64 {
        let mut count = 0i64;
        let mut done = 0usize;
        let mut merged = MergedDeltas::default();
        // At least one event a frame, however small the budget: the queue always moves.
        while done < limit && (done == 0 || deadline.is_none_or(|d| Instant::now() < d)) {
            let Some(subscription) = self.subscription.as_mut() else {
                break;
            };
            let Some(received) = subscription.try_recv() else {
                break;
            };
            done += 1;
            count += 1;
            if self.merge_speech_deltas {
                match &received {
                    Received::Message(envelope) => {
                        if let BusMessage::AgentSpeechDelta {
                            agent_id,
                            delta,
                            seq,
                        } = &envelope.message
                        {
                            merged.push(agent_id, delta, *seq);
                            continue;
                        }
                        if let Some(piece) =
                            envelope.message.agent_id().and_then(|id| merged.take(id))
                        {
                            self.emit_delta(&piece.agent_id, &piece.text, piece.seq);
                        }
                    }
                    Received::Lagged { .. } => {
                        for piece in merged.take_all() {
                            self.emit_delta(&piece.agent_id, &piece.text, piece.seq);
                        }
                    }
                }
            }
            self.emit(received);
        }
        for piece in merged.take_all() {
            self.emit_delta(&piece.agent_id, &piece.text, piece.seq);
        }
        count
    }

    fn emit_delta(&mut self, agent_id: &str, delta: &str, seq: u64) {
        self.signals().agent_speech_delta().emit(
            agent_id,
            delta,
            i64::try_from(seq).unwrap_or(i64::MAX),
        );
        if self.nodes.contains_key(agent_id) {
            self.deliver_to_node(&BusMessage::AgentSpeechDelta {
                agent_id: agent_id.to_string(),
                delta: delta.to_string(),
                seq,
            });
        }
    }

    /// Hands an event about an agent to its [AgentNode], if one spawned it; the node is gone
    /// from the table once its agent stopped.
    fn deliver_to_node(&mut self, message: &BusMessage) {
        let Some(agent_id) = message.agent_id() else {
            return;
        };
        let Some(deliver) = self.nodes.get(agent_id).map(|b| b.deliver.clone()) else {
            return;
        };
        if matches!(message, BusMessage::AgentRemoved { .. }) {
            self.unbind_node(agent_id);
        }
        // The node's handlers may call back into this runtime.
        let reentrant = self.base_mut();
        let delivered = deliver(message);
        drop(reentrant);
        if !delivered {
            self.unbind_node(agent_id);
        }
    }

    /// Registers the [AgentNode] that spawned `agent_id`: its events go to it, and its body's
    /// position to the agent.
    pub(crate) fn bind_node(&mut self, agent_id: &str, node: crate::body::BoundNode) {
        if self.nodes.insert(agent_id.to_string(), node).is_none() {
            self.node_order.push(agent_id.to_string());
        }
    }

    /// Reports where the bodies of the [AgentNode]s' agents are (those that sync it) to their
    /// agents, when they moved: this frame's share of them, so that every body is read once
    /// per [member position_sync_interval].
    fn sync_positions(&mut self, delta: f64) {
        let Some(runtime) = &self.runtime else {
            return;
        };
        let count = self.node_order.len();
        if count == 0 {
            return;
        }
        let share = if self.position_sync_interval > 0.0 && delta > 0.0 {
            let frames = (self.position_sync_interval / delta).max(1.0);
            ((count as f64 / frames).ceil() as usize).clamp(1, count)
        } else {
            count
        };
        let start = self.sync_cursor % count;
        self.sync_cursor = (start + share) % count;
        let (order, nodes) = (&self.node_order, &mut self.nodes);
        let mut moved: Vec<(&str, Position)> = Vec::with_capacity(share);
        for i in start..start + share {
            let agent_id = order[i % count].as_str();
            let Some(bound) = nodes.get_mut(agent_id) else {
                continue;
            };
            let Some(position) = bound.body_position() else {
                continue;
            };
            if bound.reported != Some(position) {
                bound.reported = Some(position);
                moved.push((agent_id, position));
            }
        }
        if !moved.is_empty() {
            runtime.set_positions(&moved);
            let (agent_id, at) = (moved[0].0.to_string(), moved[0].1);
            self.warn_outside_world(&agent_id, at);
        }
    }

    /// [member hearing_radius], or when it is negative its share of [member world_bounds].
    fn hearing_radius(&self) -> f64 {
        if self.hearing_radius >= 0.0 {
            return self.hearing_radius;
        }
        let size = self.world_bounds.size;
        HEARING_SHARE_OF_WORLD * f64::from(size.x.max(size.y))
    }

    /// Warns, once per start, of a bound body outside [member world_bounds]: the world is
    /// likely in other units than the level (the default 100 × 100 in a level of pixels), and
    /// who hears whom follows the world.
    fn warn_outside_world(&mut self, agent_id: &str, at: Position) {
        if self.warned_outside_world {
            return;
        }
        let r = self.world_bounds;
        let (x0, y0) = (f64::from(r.position.x), f64::from(r.position.y));
        let (x1, y1) = (x0 + f64::from(r.size.x), y0 + f64::from(r.size.y));
        if at.x >= x0 && at.x <= x1 && at.y >= y0 && at.y <= y1 {
            return;
        }
        self.warned_outside_world = true;
        godot_warn!(
            "the body of agent {agent_id}'s AgentNode is at ({}, {}), outside \
             AgentRuntime.world_bounds ({x0}, {y0}, {}, {}): set world_bounds to your level's \
             rectangle (in the bodies' units). Who hears whom (hearing_radius: {} now) and the \
             map agents are shown follow it.",
            at.x,
            at.y,
            r.size.x,
            r.size.y,
            self.hearing_radius()
        );
    }

    /// Forgets the node of `agent_id` (it left the tree, its agent stopped).
    pub(crate) fn unbind_node(&mut self, agent_id: &str) {
        if self.nodes.remove(agent_id).is_some() {
            self.node_order.retain(|id| id != agent_id);
        }
    }

    fn emit(&mut self, received: Received) {
        let envelope = match received {
            Received::Lagged { missed } => {
                let message = format!(
                    "the AgentRuntime's event queue overflowed: missed {missed} events (let the \
                     node process more often, or raise event_queue_capacity)"
                );
                self.signals()
                    .agent_error()
                    .emit("", AgentErrorCode::Lagged.as_str(), &message);
                return;
            }
            Received::Message(envelope) => envelope,
        };
        let v2 = convert::position_to_vector2;
        match &envelope.message {
            BusMessage::AgentSpawned {
                agent_id,
                name,
                role,
                position,
                ..
            } => self.signals().agent_spawned().emit(
                agent_id.as_str(),
                name.as_str(),
                role.as_str(),
                v2(*position),
            ),
            BusMessage::AgentRemoved { agent_id, reason } => self
                .signals()
                .agent_removed()
                .emit(agent_id.as_str(), reason.as_str()),
            BusMessage::AgentStateChanged {
                agent_id,
                old_state,
                new_state,
                ..
            } => self.signals().agent_state_changed().emit(
                agent_id.as_str(),
                old_state.as_str(),
                new_state.as_str(),
            ),
            BusMessage::AgentMoved { agent_id, from, to } => {
                self.signals()
                    .agent_moved()
                    .emit(agent_id.as_str(), v2(*from), v2(*to))
            }
            BusMessage::AgentMoveRequested {
                agent_id,
                move_id,
                from,
                to,
            } => self.signals().agent_move_requested().emit(
                agent_id.as_str(),
                i64::try_from(*move_id).unwrap_or(i64::MAX),
                v2(*from),
                v2(*to),
            ),
            BusMessage::AgentMoveFinished {
                agent_id,
                move_id,
                outcome,
                reason,
                ..
            } => self.signals().agent_move_finished().emit(
                agent_id.as_str(),
                i64::try_from(*move_id).unwrap_or(i64::MAX),
                outcome.as_str(),
                reason.as_deref().unwrap_or(""),
            ),
            BusMessage::AgentSpoke {
                agent_id,
                content,
                recipients,
                dialog_type,
                ..
            } => {
                let recipients = convert::strings_to_packed(recipients);
                self.signals().agent_said().emit(
                    agent_id.as_str(),
                    content.as_str(),
                    &recipients,
                    dialog_type.as_str(),
                );
                self.signals()
                    .agent_spoke()
                    .emit(agent_id.as_str(), content.as_str(), &recipients);
            }
            BusMessage::TaskAssigned {
                agent_id,
                task_id,
                task_name,
                ..
            } => {
                self.signals()
                    .task_assigned()
                    .emit(agent_id.as_str(), *task_id, task_name.as_str())
            }
            BusMessage::TaskCompleted {
                agent_id,
                task_id,
                task_name,
                ..
            } => self.signals().task_completed().emit(
                agent_id.as_str(),
                *task_id,
                task_name.as_str(),
            ),
            BusMessage::CollaborationRequested {
                agent_id,
                helper_id,
                task_name,
                ..
            } => self.signals().collaboration_requested().emit(
                agent_id.as_str(),
                helper_id.as_str(),
                task_name.as_str(),
            ),
            BusMessage::AgentError {
                agent_id,
                code,
                message,
            } => self.signals().agent_error().emit(
                agent_id.as_deref().unwrap_or(""),
                code.as_str(),
                message.as_str(),
            ),
            BusMessage::AgentSpeechDelta {
                agent_id,
                delta,
                seq,
            } => self.emit_delta(agent_id, delta, *seq),
            BusMessage::AgentToolCall {
                agent_id,
                tool,
                call_id,
            } => self.signals().agent_tool_call().emit(
                agent_id.as_str(),
                tool.as_str(),
                call_id.as_str(),
            ),
            BusMessage::ModelDownloadProgress {
                agent_id,
                url,
                received_bytes,
                total_bytes,
            } => self.signals().model_download_progress().emit(
                agent_id.as_str(),
                url.as_str(),
                *received_bytes as i64,
                total_bytes.map_or(-1, |t| t as i64),
            ),
            BusMessage::AgentReplied {
                agent_id,
                in_reply_to,
                ..
            } => {
                let ids: PackedInt64Array = in_reply_to.iter().copied().collect();
                let reply = reply_to_dictionary(&envelope.message);
                self.signals()
                    .agent_replied()
                    .emit(agent_id.as_str(), &ids, &reply);
            }
            BusMessage::AgentRemembered { agent_id, .. } => {
                let mut memory = convert::serialize_to_dictionary(&envelope.message);
                memory.remove("type");
                memory.remove("agent_id");
                self.signals()
                    .agent_remembered()
                    .emit(agent_id.as_str(), &memory);
            }
            BusMessage::AgentReflected {
                agent_id,
                memories,
                drawn_by,
            } => {
                let memories: Array<VarDictionary> = memories
                    .iter()
                    .map(convert::serialize_to_dictionary)
                    .collect();
                self.signals().agent_reflected().emit(
                    agent_id.as_str(),
                    &memories,
                    drawn_by.as_str(),
                );
            }
            BusMessage::CampaignChanged {
                campaign_id,
                turn_id,
                applied_actions,
                ..
            } => {
                let actions: VarArray = applied_actions
                    .iter()
                    .map(|a| convert::serialize_to_dictionary(a).to_variant())
                    .collect();
                self.signals().campaign_changed().emit(
                    campaign_id.as_str(),
                    turn_id.as_deref().unwrap_or(""),
                    &actions,
                );
            }
        }
        // Speech pieces reach the node through `emit_delta`.
        if !matches!(envelope.message, BusMessage::AgentSpeechDelta { .. }) {
            self.deliver_to_node(&envelope.message);
        }
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

    fn piece(agent_id: &str, text: &str, seq: u64) -> MergedDelta {
        MergedDelta {
            agent_id: agent_id.into(),
            text: text.into(),
            seq,
        }
    }

    #[test]
    fn speech_pieces_merge_per_agent_in_first_streamed_order() {
        let mut merged = MergedDeltas::default();
        merged.push("agent_002", "Fre", 0);
        merged.push("agent_001", "Hel", 4);
        merged.push("agent_002", "sh ", 1);
        merged.push("agent_001", "lo", 5);
        merged.push("agent_002", "bread", 2);
        let all: Vec<MergedDelta> = merged.take_all().collect();
        assert_eq!(
            all,
            vec![
                piece("agent_002", "Fresh bread", 2),
                piece("agent_001", "Hello", 5)
            ]
        );
        assert_eq!(merged.take_all().count(), 0);
    }

    #[test]
    fn a_taken_agent_starts_a_new_piece_after_the_others() {
        let mut merged = MergedDeltas::default();
        merged.push("agent_001", "One", 0);
        merged.push("agent_002", "Two", 0);
        // agent_001's line is said: its text goes out first.
        assert_eq!(merged.take("agent_001"), Some(piece("agent_001", "One", 0)));
        assert_eq!(merged.take("agent_001"), None);
        merged.push("agent_001", "Next", 1);
        merged.push("agent_002", "!", 1);
        let all: Vec<MergedDelta> = merged.take_all().collect();
        assert_eq!(
            all,
            vec![piece("agent_002", "Two!", 1), piece("agent_001", "Next", 1)]
        );
    }
}
