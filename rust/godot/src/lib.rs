//! The Godot Agents GDExtension (`godot_agents`, entry symbol `gdext_rust_init`).
//!
//! A thin layer over `agents-core`: [`convert`] turns Variants into `serde_json::Value` and back
//! (integers stay integers), and the classes registered here call into the core.
//!
//! Classes:
//! - [`GameTools`](game_tools::GameTools) (`RefCounted`): every game tool of the registry as a
//!   method call (`call_tool`, `list_tools`, `has_tool`).
//! - [`AgentRuntime`](agent_runtime::AgentRuntime) (`Node`): the agent runtime of `agents-core`
//!   (autonomous agents, message bus, SQLite memory); spawn, terminate, query, talk to agents and
//!   assign tasks; bus events are drained on the main thread every frame and emitted as typed
//!   signals.
//! - [`AgentNode`](agent_node::AgentNode) (`Node`): one agent under the character it drives,
//!   spawned while the node is in the tree, with its own signals and an awaitable `ask`
//!   ([`AgentAsk`](agent_node::AgentAsk), `RefCounted`).
//! - [`AgentConfig`](agent_config::AgentConfig) (`Resource`): one agent's set-up, editable in the
//!   inspector and savable as `.tres`.
//! - [`AgentBrain`](agent_brain::AgentBrain) (`Resource`): a brain object (provider, model, …)
//!   for one agent or as the runtime's default.
//! - [`AgentApp`](agent_app::AgentApp) (`Node`): a game (an "app") an agent plays through the
//!   app bridge: its actions become the agent's tools, the agent's calls arrive as signals (or
//!   an `action_handler` call) on the main thread, a human shares the controls and chats.
//! - [`AgentAction`](agent_action::AgentAction) (`Resource`): one action of an `AgentApp`, for
//!   the inspector.
//!
//! The chat panel that follows an `AgentApp` (`AgentChatPanel`) is a GDScript `Control` in
//! `addons/godot_agents/agent_chat_panel.gd`: the extension is built with gdext's minimal class
//! set, which has no `Control` classes.
//!
//! [`docs`] gives Godot's help (and `GameTools.class_reference()`) the class reference with
//! Godot's type names and GDScript defaults instead of the Rust ones gdext writes.
//!
//! Nothing here lets a Rust panic reach Godot: tool handlers run behind the registry's
//! `catch_unwind`, runtime calls behind the node's own, and conversions return errors instead of
//! panicking.

pub mod agent_action;
pub mod agent_app;
pub mod agent_brain;
pub mod agent_config;
pub mod agent_embeddings;
pub mod agent_memory;
pub mod agent_node;
pub mod agent_runtime;
mod body;
pub mod campaign;
pub mod convert;
pub mod debugger;
pub mod docs;
pub mod errors;
pub mod game_tools;
mod guard;
pub mod operation;
mod packed_model;
mod paths;
pub mod script_tools;
mod started_with;
pub mod tool_set_names;

use godot::prelude::*;

/// The extension's entry point type.
struct GodotAgents;

#[gdextension]
unsafe impl ExtensionLibrary for GodotAgents {
    fn on_stage_init(stage: InitStage) {
        // gdext registered the classes' documents just before (at the same stage): load them
        // again with Godot's types and GDScript defaults (see `docs`).
        if stage == InitStage::Editor {
            docs::register_with_editor();
        }
        if stage == InitStage::Scene {
            tool_set_names::declare_setting();
        }
    }

    fn on_stage_deinit(stage: InitStage) {
        // The runtimes have shut down with their nodes: wait for the local models' threads
        // to finish their last decode step, before Godot unloads this library under them.
        if stage == InitStage::Scene
            && !agents_local::Models::global().shutdown(std::time::Duration::from_secs(30))
        {
            godot_warn!("Godot Agents: a local model was still decoding when the game ended");
        }
    }
}
