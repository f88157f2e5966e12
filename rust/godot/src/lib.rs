//! The Godot Agents GDExtension (`godot_agents`, entry symbol `gdext_rust_init`).
//!
//! A thin layer over `agents-core`: [`convert`] turns Variants into `serde_json::Value` and back
//! (integers stay integers), and the classes registered here call into the core.
//!
//! Classes:
//! - [`GameTools`](game_tools::GameTools) (`RefCounted`): every game tool of the registry as a
//!   method call (`call_tool`, `list_tools`, `has_tool`).
//!
//! Nothing here lets a Rust panic reach Godot: tool handlers run behind the registry's
//! `catch_unwind`, and conversions return errors instead of panicking.

pub mod convert;
pub mod game_tools;

use godot::prelude::*;

/// The extension's entry point type.
struct GodotAgents;

#[gdextension]
unsafe impl ExtensionLibrary for GodotAgents {}
