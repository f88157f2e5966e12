//! [AgentRuntime]'s GDScript tools: tool sets the game registers (and each [AgentNode]'s own),
//! which agents may call them, and running the calls agents made, on the main thread.

use agents_core::runtime::{GAME_TOOLS, WORLD_TOOLS};
use agents_core::tools::ToolRegistry;
use godot::prelude::*;

use super::{AgentRuntime, INVALID_CONFIG, failure};
use crate::convert;
use crate::script_tools::ToolParts;

/// Most GDScript tool calls run per frame; the rest wait for the next.
pub(super) const MAX_TOOL_CALLS_PER_FRAME: usize = 256;

#[godot_api(secondary)]
impl AgentRuntime {
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
}

impl AgentRuntime {
    /// Adds a GDScript tool to `set` and gives the runtime the set's new tools (when it runs;
    /// a runtime that starts takes them all). A tool the runtime refuses is taken out again.
    pub(super) fn add_tool(&mut self, set: &str, tool: &ToolParts) -> Result<(), String> {
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
    pub(super) fn publish_tool_set(&mut self, set: &str, registry: ToolRegistry) -> bool {
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
    pub(super) fn run_tool_calls(&mut self) {
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
}
