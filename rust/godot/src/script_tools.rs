//! Tools written in GDScript: a `Callable` registered as a tool of a named tool set, called
//! when an agent calls it.
//!
//! Threading: a script tool is an asynchronous tool of the core registry. Its handler (on the
//! runtime's threads) sends the call through a channel and waits for the answer; the
//! [AgentRuntime](crate::agent_runtime::AgentRuntime) drains the channel on the main thread each
//! frame, calls the `Callable`, and answers — at once for a plain function, when its
//! `completed` signal fires for a coroutine (a function that `await`s). The agent waits for the
//! answer; the decision's cancellation (an interrupting message, terminate, shutdown) stops the
//! wait, and a coroutine can see it with [method AgentToolCall.is_cancelled].
//!
//! What the `Callable` returns is the call's result: a Dictionary as the structured result
//! (`{"error": "why"}` fails the call), any other JSON-able value as `{"result": value}`. A
//! freed object, a `null` (also what a script error ends a function with), or a value that is
//! not JSON (an Object, a Callable) fails the call with the reason; nothing reaches the
//! caller as a crash.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use agents_core::tools::{ToolContext, ToolOutput, ToolRegistry, ToolSpec};
use godot::classes::{IRefCounted, Object, RefCounted};
use godot::prelude::*;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::convert;
use crate::errors::GodotErrorCode;

/// The code of a GDScript tool call that failed.
const TOOL_FAILED: &str = GodotErrorCode::ToolFailed.as_str();

/// A tool call waiting for the main thread.
pub(crate) struct PendingCall {
    set: String,
    tool: String,
    args: Value,
    agent_id: Option<String>,
    cancel: CancellationToken,
    reply: oneshot::Sender<ToolOutput>,
}

/// A tool as the game gives it: name, description, parameters (a JSON Schema or the
/// shorthand), its function, and whether it only reads.
#[derive(Clone)]
pub(crate) struct ToolParts {
    pub name: String,
    pub description: String,
    pub parameters: VarDictionary,
    pub function: Callable,
    pub read_only: bool,
}

/// One registered tool: its spec and its function.
struct ScriptTool {
    spec: ToolSpec,
    callable: Callable,
    /// It takes a second argument, the [AgentToolCall].
    wants_call: bool,
}

/// The tools written in GDScript, by set, and the channel their calls come through.
pub(crate) struct ScriptTools {
    sets: BTreeMap<String, BTreeMap<String, ScriptTool>>,
    tx: mpsc::UnboundedSender<PendingCall>,
    rx: mpsc::UnboundedReceiver<PendingCall>,
    /// The last call's round trip in microseconds (-1: none yet): from the agent's call to
    /// the answer back on its side.
    last_usec: Arc<AtomicI64>,
}

impl Default for ScriptTools {
    fn default() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        ScriptTools {
            sets: BTreeMap::new(),
            tx,
            rx,
            last_usec: Arc::new(AtomicI64::new(-1)),
        }
    }
}

/// The failed output of a script tool: `{error, reason, tool}`.
fn failed(tool: &str, reason: &str, message: String) -> ToolOutput {
    ToolOutput::failed(json!({"error": message, "reason": reason, "tool": tool}))
}

impl ScriptTools {
    /// Adds (or replaces) `name` in `set`: `parameters` is a JSON Schema object or the app
    /// bridge's shorthand (`{"item": "string"}`). Returns the set's registry to give the
    /// runtime.
    pub fn register(&mut self, set: &str, tool: &ToolParts) -> Result<ToolRegistry, String> {
        let ToolParts {
            name,
            description,
            parameters,
            function: callable,
            read_only,
        } = tool.clone();
        let (name, description, read_only) = (name.as_str(), description.as_str(), read_only);
        if set.trim().is_empty() {
            return Err("a tool set name must not be empty".into());
        }
        if name.trim().is_empty() {
            return Err("a tool name must not be empty".into());
        }
        if !callable.is_valid() {
            return Err(format!(
                "the Callable of tool '{name}' is not valid (its object was freed?)"
            ));
        }
        let arity = callable.get_argument_count();
        if !(1..=2).contains(&arity) {
            return Err(format!(
                "the Callable of tool '{name}' takes {arity} arguments: it takes the arguments \
                 Dictionary, and optionally the AgentToolCall (func(args) or func(args, call))"
            ));
        }
        let parameters = convert::dictionary_to_json(&parameters)
            .map_err(|e| format!("tool '{name}': parameters: {e}"))?;
        let schema = agents_core::apps::action::params_schema(&Value::Object(parameters))
            .map_err(|e| format!("tool '{name}': {e}"))?;
        let mut spec = ToolSpec::new(name, description, schema);
        spec.read_only = read_only;
        // Compiles the schema now, so a bad one is refused at registration.
        ToolRegistry::new()
            .register(spec.clone(), |_| ToolOutput::ok(json!({})))
            .map_err(|e| e.to_string())?;
        self.sets.entry(set.to_string()).or_default().insert(
            name.to_string(),
            ScriptTool {
                spec,
                callable,
                wants_call: arity == 2,
            },
        );
        Ok(self.registry(set))
    }

    /// Removes `name` from `set`; the set's registry when the tool was there (`None` when it
    /// was not), and whether the set is empty now.
    pub fn unregister(&mut self, set: &str, name: &str) -> Option<(ToolRegistry, bool)> {
        let tools = self.sets.get_mut(set)?;
        tools.remove(name)?;
        let empty = tools.is_empty();
        if empty {
            self.sets.remove(set);
        }
        Some((self.registry(set), empty))
    }

    /// Removes every tool of `set`; whether it had any.
    pub fn remove_set(&mut self, set: &str) -> bool {
        self.sets.remove(set).is_some()
    }

    /// The sets and their registries (to give a runtime that starts).
    pub fn registries(&self) -> Vec<(String, ToolRegistry)> {
        self.sets
            .keys()
            .map(|set| (set.clone(), self.registry(set)))
            .collect()
    }

    /// The last call's round trip in microseconds (-1: none yet).
    pub fn last_call_usec(&self) -> i64 {
        self.last_usec.load(Ordering::Relaxed)
    }

    /// The names of the sets with tools.
    pub fn set_names(&self) -> Vec<String> {
        self.sets.keys().cloned().collect()
    }

    /// The tool names of `set`.
    pub fn tool_names(&self, set: &str) -> Vec<String> {
        self.sets
            .get(set)
            .map(|tools| tools.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The core registry of `set`: each tool's handler sends its call to the main thread.
    fn registry(&self, set: &str) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        for tool in self.sets.get(set).into_iter().flat_map(BTreeMap::values) {
            let tx = self.tx.clone();
            let last_usec = self.last_usec.clone();
            let (set, name) = (set.to_string(), tool.spec.name.clone());
            let added =
                registry.register_async(tool.spec.clone(), move |args, ctx: ToolContext| {
                    let called = Instant::now();
                    let last_usec = last_usec.clone();
                    let (reply, answer) = oneshot::channel();
                    let sent = tx.send(PendingCall {
                        set: set.clone(),
                        tool: name.clone(),
                        args,
                        agent_id: ctx.agent_id.clone(),
                        cancel: ctx.cancel.clone(),
                        reply,
                    });
                    let name = name.clone();
                    async move {
                        if sent.is_err() {
                            return failed(&name, TOOL_FAILED, "the game is gone".into());
                        }
                        let answer = answer.await;
                        let usec = i64::try_from(called.elapsed().as_micros()).unwrap_or(i64::MAX);
                        last_usec.store(usec, Ordering::Relaxed);
                        answer.unwrap_or_else(|_| {
                            failed(
                                &name,
                                TOOL_FAILED,
                                format!(
                                    "tool '{name}' ended without an answer (its coroutine's object \
                                 was freed before it finished)"
                                ),
                            )
                        })
                    }
                });
            // The schema compiled at registration.
            debug_assert!(added.is_ok());
        }
        registry
    }

    /// The calls waiting for the main thread (taken out, so the runtime can run them without
    /// holding these tools).
    pub fn take_pending(&mut self, limit: usize) -> Vec<PendingCall> {
        let mut calls = Vec::new();
        while calls.len() < limit {
            match self.rx.try_recv() {
                Ok(call) => calls.push(call),
                Err(_) => break,
            }
        }
        calls
    }

    /// What to call for `call`, or the failed answer when it cannot be called.
    pub fn resolve(&self, call: &PendingCall) -> Result<(Callable, bool), ToolOutput> {
        let tool = self
            .sets
            .get(&call.set)
            .and_then(|tools| tools.get(&call.tool))
            .ok_or_else(|| {
                failed(
                    &call.tool,
                    TOOL_FAILED,
                    format!(
                        "tool '{}' was removed from the tool set '{}'",
                        call.tool, call.set
                    ),
                )
            })?;
        if !tool.callable.is_valid() {
            return Err(failed(
                &call.tool,
                TOOL_FAILED,
                format!(
                    "the Callable of tool '{}' is no longer valid: its object was freed",
                    call.tool
                ),
            ));
        }
        Ok((tool.callable.clone(), tool.wants_call))
    }
}

impl PendingCall {
    /// Whether its caller stopped waiting.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled() || self.reply.is_closed()
    }

    /// Answers it with `output`.
    pub fn answer(self, output: ToolOutput) {
        let _ = self.reply.send(output);
    }

    /// Calls `callable` with the arguments (and the call object when it wants one), on the
    /// main thread. A plain function answers now; a coroutine answers when it completes.
    pub fn run(self, callable: &Callable, wants_call: bool) {
        let args = convert::json_to_dictionary(&self.args).to_variant();
        let info = AgentToolCall::create(&self);
        let value = if wants_call {
            callable.call(&[args, info.to_variant()])
        } else {
            callable.call(&[args])
        };
        let tool = self.tool.clone();
        let Some(mut state) = function_state(&value) else {
            self.answer(output_from_value(&tool, &value));
            return;
        };
        // A coroutine: it answers when it completes.
        let mut pending = Some(self);
        let done = Callable::from_fn("script_tool_completed", move |args: &[&Variant]| {
            if let Some(call) = pending.take() {
                let value = args.first().map_or_else(Variant::nil, |v| (*v).clone());
                call.answer(output_from_value(&tool, &value));
            }
        });
        state.connect_flags(
            "completed",
            &done,
            godot::classes::object::ConnectFlags::ONE_SHOT,
        );
    }
}

/// The coroutine state a function returned when it `await`ed (its `completed` signal carries
/// the function's final value), or `None` when it returned a value.
pub(crate) fn function_state(value: &Variant) -> Option<Gd<Object>> {
    value
        .try_to::<Gd<Object>>()
        .ok()
        .filter(|o| o.is_class("GDScriptFunctionState"))
}

/// What a tool's function returned, as its output.
fn output_from_value(tool: &str, value: &Variant) -> ToolOutput {
    if value.is_nil() {
        return failed(
            tool,
            TOOL_FAILED,
            format!(
                "tool '{tool}' returned null (a script error ends a function this way): return \
                 a Dictionary, or any JSON value"
            ),
        );
    }
    match convert::variant_to_json(value) {
        Ok(Value::Object(map)) if map.get("error").is_some_and(Value::is_string) => {
            ToolOutput::failed(Value::Object(map))
        }
        Ok(Value::Object(map)) => ToolOutput::ok(Value::Object(map)),
        Ok(other) => ToolOutput::ok(json!({ "result": other })),
        Err(e) => failed(
            tool,
            TOOL_FAILED,
            format!("tool '{tool}' returned a value that is not JSON: {e}"),
        ),
    }
}

/// One call of a tool written in GDScript, as its function's optional second argument: who
/// calls, which tool, and whether the caller still waits. A coroutine that awaits something long
/// (an animation, a timer) checks [method is_cancelled] when it resumes.
///
/// ```gdscript
/// func bake(args: Dictionary, call: AgentToolCall) -> Dictionary:
///     await get_tree().create_timer(2.0).timeout
///     if call.is_cancelled():
///         return {"error": "interrupted"}
///     return {"baked": args.item, "by": call.get_agent_id()}
/// ```
#[derive(GodotClass)]
#[class(no_init, base = RefCounted)]
pub struct AgentToolCall {
    agent_id: String,
    tool: String,
    set: String,
    cancel: CancellationToken,
    base: Base<RefCounted>,
}

#[godot_api]
impl IRefCounted for AgentToolCall {}

#[godot_api]
impl AgentToolCall {
    /// The calling agent's id (empty when no agent calls).
    #[func]
    pub fn get_agent_id(&self) -> GString {
        self.agent_id.as_str().into()
    }

    /// The tool called.
    #[func]
    pub fn get_tool(&self) -> GString {
        self.tool.as_str().into()
    }

    /// The tool set it belongs to.
    #[func]
    pub fn get_tool_set(&self) -> GString {
        self.set.as_str().into()
    }

    /// Whether the caller stopped waiting (its decision was interrupted, the agent terminated,
    /// the runtime stopped): what the function returns now is dropped.
    #[func]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

impl AgentToolCall {
    fn create(call: &PendingCall) -> Gd<AgentToolCall> {
        Gd::from_init_fn(|base| AgentToolCall {
            agent_id: call.agent_id.clone().unwrap_or_default(),
            tool: call.tool.clone(),
            set: call.set.clone(),
            cancel: call.cancel.clone(),
            base,
        })
    }
}

/// Registers every set of `tools` with `runtime` (a runtime that starts).
pub(crate) fn register_all(
    tools: &ScriptTools,
    runtime: &Arc<agents_core::runtime::Runtime>,
) -> Result<(), String> {
    for (set, registry) in tools.registries() {
        runtime
            .set_tool_set(&set, registry)
            .map_err(|e| format!("tool set '{set}': {e}"))?;
    }
    Ok(())
}
