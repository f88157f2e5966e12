//! The game side of the editor's **Agents** debugger tab: a running [`AgentRuntime`] reports its
//! agents to the editor through `EngineDebugger` messages and obeys the tab's actions.
//!
//! # When it runs
//!
//! Only in a debug build (`OS.is_debug_build()`; a release export never reports) and only while
//! a debugger session is active (`EngineDebugger.is_active()`, checked once a second). Otherwise
//! a frame costs one comparison of two instants.
//!
//! # Messages (capture `godot_agents`)
//!
//! Game → editor, only when something changed; a report starts every [`REPORT_EVERY`], or as
//! soon as the previous one is sent when building it takes longer (a second or so with 1,000
//! agents on two cores):
//!
//! | message | data |
//! |---|---|
//! | `godot_agents:agents` | `[runtime_id: int, runtime_name: String, report: PackedByteArray]` |
//! | `godot_agents:detail` | `[runtime_id: int, agent_id: String, detail: PackedByteArray]` |
//! | `godot_agents:stopped` | `[runtime_id: int]` |
//!
//! `runtime_id` is the node's instance id; `report` and `detail` are UTF-8 JSON (bytes, so the
//! game never converts a large string to Godot's UTF-32): the report is
//! `{"agents": [{agent_id, name, role, state, position: [x, y], task, brain, paused}], "count"}`;
//! the detail is `{agent_id, paused, decisions, trace, conversation, state_history, tasks,
//! memories, session}` — the decision journal ([`agents_core::runtime::Decision`], each with
//! the memories it recalled and their scores), the model-call trace (prompts left out), the
//! last lines, transitions, tasks and memories, and the attached app's view.
//!
//! Editor → game (`runtime_id` first, the agent's id second):
//!
//! | message | data | does |
//! |---|---|---|
//! | `godot_agents:select` | `[runtime_id, agent_id]` | reports that agent's detail (`""`: none) |
//! | `godot_agents:send` | `[runtime_id, agent_id, text]` | `send_message` as the player |
//! | `godot_agents:pause` | `[runtime_id, agent_id, paused: bool]` | pauses / resumes its loop |
//! | `godot_agents:terminate` | `[runtime_id, agent_id]` | terminates it |
//!
//! # Cost
//!
//! Reports are built off the main thread (a blocking task on the runtime's tokio runtime reads
//! the snapshots and the database and serializes the JSON); the main thread only collects the
//! finished bytes and hands them to `EngineDebugger.send_message`. `cargo xtask bench
//! --only-debugger` measures the frame cost with 1,000 agents, with and without a session.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::{Duration, Instant};

use agents_core::runtime::Runtime;
use godot::classes::{Engine, Object, Os};
use godot::prelude::*;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// The message capture's name (the prefix of every message).
pub const CAPTURE: &str = "godot_agents";
/// How often a report starts (unless the previous one is still being built).
pub const REPORT_EVERY: Duration = Duration::from_millis(500);
/// How often a frame asks whether a debugger session is active.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// Lines, transitions, model calls and memories in a detail.
const DETAIL_ROWS: usize = 30;

/// An action of the editor's tab for one runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Report this agent's detail (`None`: stop).
    Select(Option<String>),
    /// Say this to the agent as the player.
    Send { agent_id: String, text: String },
    /// Pause (`true`) or resume its autonomous loop.
    Pause { agent_id: String, paused: bool },
    /// Terminate it.
    Terminate { agent_id: String },
}

impl Command {
    /// Parses a message of the capture (`message` without the `godot_agents:` prefix) into the
    /// runtime it is for and the command. An unknown message or malformed data is an error that
    /// says what was expected.
    pub fn parse(message: &str, data: &VarArray) -> Result<(i64, Command), String> {
        let runtime = arg::<i64>(data, 0, message, "runtime_id (int)")?;
        let agent = || arg::<GString>(data, 1, message, "agent_id (String)").map(String::from);
        let command = match message {
            "select" => {
                let id = agent()?;
                Command::Select((!id.is_empty()).then_some(id))
            }
            "send" => Command::Send {
                agent_id: agent()?,
                text: arg::<GString>(data, 2, message, "text (String)")?.to_string(),
            },
            "pause" => Command::Pause {
                agent_id: agent()?,
                paused: arg::<bool>(data, 2, message, "paused (bool)")?,
            },
            "terminate" => Command::Terminate { agent_id: agent()? },
            other => {
                return Err(format!(
                    "unknown message '{CAPTURE}:{other}' (expected select, send, pause or terminate)"
                ));
            }
        };
        Ok((runtime, command))
    }
}

fn arg<T: FromGodot>(data: &VarArray, i: usize, message: &str, what: &str) -> Result<T, String> {
    data.get(i)
        .and_then(|v| v.try_to::<T>().ok())
        .ok_or_else(|| format!("'{CAPTURE}:{message}' needs {what} at index {i}"))
}

/// Commands the capture received, for the runtime they name (taken by its next frame).
static INBOX: Mutex<Vec<(i64, Command)>> = Mutex::new(Vec::new());
/// Runtimes reporting to a session: the last one to stop unregisters the capture (Godot
/// complains at exit about a capture registered from outside the engine that is still there).
static LINKED: Mutex<usize> = Mutex::new(0);

/// The `EngineDebugger` singleton, when this build has a debugger and a session is active.
fn engine_debugger() -> Option<Gd<Object>> {
    let debugger = Engine::singleton().get_singleton("EngineDebugger")?;
    debugger
        .clone()
        .call("is_active", &[])
        .try_to::<bool>()
        .unwrap_or(false)
        .then_some(debugger)
}

/// Registers the message capture once per process.
fn register_capture(debugger: &mut Gd<Object>) {
    let has = debugger
        .call("has_capture", &[CAPTURE.to_variant()])
        .try_to::<bool>()
        .unwrap_or(false);
    if has {
        return;
    }
    let capture = Callable::from_fn("godot_agents_debugger_capture", |args: &[&Variant]| {
        let message = args.first().and_then(|v| v.try_to::<GString>().ok());
        let data = args.get(1).and_then(|v| v.try_to::<VarArray>().ok());
        let (Some(message), Some(data)) = (message, data) else {
            godot_error!("{CAPTURE}: a debugger message without (message, data)");
            return false;
        };
        match Command::parse(&message.to_string(), &data) {
            Ok(routed) => {
                INBOX.lock().push(routed);
                true
            }
            Err(e) => {
                godot_error!("{CAPTURE}: {e}");
                false
            }
        }
    });
    debugger.call(
        "register_message_capture",
        &[CAPTURE.to_variant(), capture.to_variant()],
    );
}

/// What a finished report holds.
struct Report {
    agents: Vec<u8>,
    detail: Option<(String, Vec<u8>)>,
}

/// One runtime's link to the editor's tab (a field of `AgentRuntime`).
#[derive(Default)]
pub struct DebuggerLink {
    /// `Some(false)` in a release build: never reports.
    debug_build: Option<bool>,
    next_check: Option<Instant>,
    debugger: Option<Gd<Object>>,
    next_report: Option<Instant>,
    building: Option<Receiver<Report>>,
    selected: Option<String>,
    last_agents: Vec<u8>,
    last_detail: Vec<u8>,
    /// Whether the editor heard from this runtime (so it is told when it stops).
    reported: bool,
    /// Whether this runtime counts in [`LINKED`].
    linked: bool,
    /// Microseconds the last frame spent here (profiling).
    pub last_usec: i64,
}

impl DebuggerLink {
    /// A frame of runtime `node`: checks for a session now and then; while one is active, obeys
    /// the tab's commands, starts a report every [`REPORT_EVERY`] and sends the finished one.
    /// Returns the commands that failed, as `(code, message)`, for the node to report.
    pub fn tick(
        &mut self,
        node: &Gd<Node>,
        runtime: Option<&Arc<Runtime>>,
    ) -> Vec<(String, String)> {
        let started = Instant::now();
        let failed = self.frame(node, runtime, started);
        self.last_usec = i64::try_from(started.elapsed().as_micros()).unwrap_or(i64::MAX);
        failed
    }

    fn frame(
        &mut self,
        node: &Gd<Node>,
        runtime: Option<&Arc<Runtime>>,
        now: Instant,
    ) -> Vec<(String, String)> {
        if self.next_check.is_none_or(|at| now >= at) {
            self.next_check = Some(now + CHECK_EVERY);
            let debug_build = *self
                .debug_build
                .get_or_insert_with(|| Os::singleton().is_debug_build());
            self.debugger = if debug_build { engine_debugger() } else { None };
            if let Some(debugger) = &mut self.debugger {
                register_capture(debugger);
                if !self.linked {
                    self.linked = true;
                    *LINKED.lock() += 1;
                }
            } else {
                self.reported = false;
            }
        }
        let (Some(debugger), Some(runtime)) = (self.debugger.clone(), runtime) else {
            return Vec::new();
        };
        let id = node.instance_id().to_i64();
        let failed = self.obey(id, runtime);
        if let Some(building) = &self.building {
            match building.try_recv() {
                Ok(report) => {
                    self.building = None;
                    self.send(debugger, id, &node.get_name().to_string(), report);
                }
                Err(TryRecvError::Empty) => return failed,
                Err(TryRecvError::Disconnected) => self.building = None,
            }
        }
        if self.next_report.is_none_or(|at| now >= at) {
            self.next_report = Some(now + REPORT_EVERY);
            let (tx, rx) = channel();
            let rt = runtime.clone();
            let selected = self.selected.clone();
            runtime.handle().spawn_blocking(move || {
                let _ = tx.send(build_report(&rt, selected));
            });
            self.building = Some(rx);
        }
        failed
    }

    /// Runs this runtime's commands from the tab; drops those of runtimes that are gone.
    fn obey(&mut self, id: i64, runtime: &Runtime) -> Vec<(String, String)> {
        let mut failed = Vec::new();
        let mine: Vec<Command> = {
            let mut inbox = INBOX.lock();
            if inbox.is_empty() {
                return failed;
            }
            let (mine, others): (Vec<_>, Vec<_>) = inbox.drain(..).partition(|(r, _)| *r == id);
            inbox.extend(others.into_iter().filter(|(r, _)| {
                Gd::<Object>::try_from_instance_id(InstanceId::from_i64(*r)).is_ok()
            }));
            mine.into_iter().map(|(_, c)| c).collect()
        };
        for command in mine {
            let result = match &command {
                Command::Select(agent) => {
                    self.selected = agent.clone();
                    self.last_detail.clear();
                    self.next_report = None;
                    Ok(())
                }
                Command::Send { agent_id, text } => {
                    runtime.send_message(agent_id, text).map(|_| ())
                }
                Command::Pause { agent_id, paused } => runtime.set_paused(agent_id, *paused),
                Command::Terminate { agent_id } => runtime.terminate(agent_id),
            };
            match result {
                Err(e) => failed.push((
                    e.code().as_str().to_string(),
                    format!("the Agents debugger's {command:?} failed: {e}"),
                )),
                // Show the effect at the next frame.
                Ok(()) if !matches!(command, Command::Select(_)) => self.next_report = None,
                Ok(()) => {}
            }
        }
        failed
    }

    fn send(&mut self, mut debugger: Gd<Object>, id: i64, name: &str, report: Report) {
        if report.agents != self.last_agents {
            let data = varray![
                id,
                name,
                &PackedByteArray::from(report.agents.as_slice()).to_variant()
            ];
            debugger.call(
                "send_message",
                &[format!("{CAPTURE}:agents").to_variant(), data.to_variant()],
            );
            self.last_agents = report.agents;
            self.reported = true;
        }
        if let Some((agent_id, detail)) = report.detail
            && self.selected.as_deref() == Some(agent_id.as_str())
            && detail != self.last_detail
        {
            let data = varray![
                id,
                agent_id,
                &PackedByteArray::from(detail.as_slice()).to_variant()
            ];
            debugger.call(
                "send_message",
                &[format!("{CAPTURE}:detail").to_variant(), data.to_variant()],
            );
            self.last_detail = detail;
        }
    }

    /// The runtime stopped: tells the tab (when it heard from it) and forgets what was sent.
    pub fn stopped(&mut self, id: i64) {
        if self.reported
            && let Some(debugger) = &mut self.debugger
            && debugger.is_instance_valid()
        {
            debugger.call(
                "send_message",
                &[
                    format!("{CAPTURE}:stopped").to_variant(),
                    varray![id].to_variant(),
                ],
            );
        }
        if self.linked {
            self.linked = false;
            let mut linked = LINKED.lock();
            *linked = linked.saturating_sub(1);
            if *linked == 0
                && let Some(debugger) = &mut self.debugger
                && debugger.is_instance_valid()
            {
                debugger.call("unregister_message_capture", &[CAPTURE.to_variant()]);
            }
        }
        self.debugger = None;
        self.next_check = None;
        self.reported = false;
        self.building = None;
        self.last_agents.clear();
        self.last_detail.clear();
        self.next_report = None;
    }
}

/// Builds a report (off the main thread): every agent, and the selected one's detail.
fn build_report(runtime: &Runtime, selected: Option<String>) -> Report {
    let agents: Vec<Value> = runtime
        .list()
        .into_iter()
        .map(|s| {
            json!({
                "agent_id": s.agent_id,
                "name": s.name,
                "role": s.role,
                "state": s.state.as_str(),
                "position": [s.position.x, s.position.y],
                "task": s.current_task.map(|t| t.task_name),
                "brain": s.brain,
                "paused": runtime.is_paused(&s.agent_id).unwrap_or(false),
            })
        })
        .collect();
    let count = agents.len();
    let agents =
        serde_json::to_vec(&json!({ "agents": agents, "count": count })).unwrap_or_default();
    let detail = selected.map(|id| {
        let bytes = serde_json::to_vec(&agent_detail(runtime, &id)).unwrap_or_default();
        (id, bytes)
    });
    Report { agents, detail }
}

/// One agent's detail: its journal, trace, memory and session. A part that cannot be read
/// carries `{"error": …}` instead.
pub fn agent_detail(runtime: &Runtime, agent_id: &str) -> Value {
    fn part<T: serde::Serialize, E: std::fmt::Display>(r: Result<T, E>) -> Value {
        match r {
            Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
            Err(e) => json!({ "error": e.to_string() }),
        }
    }
    let trace = runtime.agent_trace(agent_id, DETAIL_ROWS).map(|rows| {
        rows.into_iter()
            .map(|mut row| {
                row.call.prompt = None;
                row.call.reply = None;
                row
            })
            .collect::<Vec<_>>()
    });
    json!({
        "agent_id": agent_id,
        "running": runtime.state(agent_id).is_some(),
        "paused": runtime.is_paused(agent_id).unwrap_or(false),
        "decisions": part(runtime.recent_decisions(agent_id)),
        "trace": part(trace),
        "conversation": part(runtime.conversation(agent_id, DETAIL_ROWS)),
        "state_history": part(runtime.state_history(agent_id, DETAIL_ROWS)),
        "tasks": part(runtime.tasks(agent_id)),
        "memories": part(
            runtime
                .memories_page(agent_id, None, DETAIL_ROWS)
                .map(|page| page.rows)
        ),
        "session": match runtime.agent_app(agent_id) {
            Ok(Some(app_id)) => part(runtime.app_session(&app_id)),
            _ => Value::Null,
        },
    })
}
