//! The Godot Agents core.
//!
//! Everything here is free of Godot types: the Godot extension (`rust/godot`) and the server
//! (`rust/server`) are thin layers over this crate.
//!
//! - [`tools`]: the one tool registry. Every tool has a name, a description, an input JSON Schema
//!   (validated with `jsonschema` before its handler runs), a read-only flag and a handler that
//!   returns a [`tools::ToolOutput`]. LLM tool definitions, MCP `tools/list`, the CLI and the Godot
//!   `GameTools` class all read the same registry.

pub mod tools;
