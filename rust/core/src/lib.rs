//! The Godot Agents core.
//!
//! Everything here is free of Godot types: the Godot extension (`rust/godot`) and the server
//! (`rust/server`) are thin layers over this crate.
//!
//! - [`tools`]: the one tool registry. Every tool has a name, a description, an input JSON Schema
//!   (validated with `jsonschema` before its handler runs), a read-only flag and a handler that
//!   returns a [`tools::ToolOutput`]. LLM tool definitions, MCP `tools/list`, the CLI and the Godot
//!   `GameTools` class all read the same registry.
//! - [`runtime`]: the agent runtime: agents in tokio tasks with the state machine
//!   idle → listening → thinking → speaking → idle, the autonomous decision loop, tasks.
//! - [`bus`]: the typed message bus (filters by kind, sender, recipient; lag reports).
//! - [`memory`]: the database (SQLite or PostgreSQL): conversations, tasks, state history,
//!   resume records, and each agent's memory stream.
//! - [`mind`]: the memories an agent forms of what happens to it and recalls for a decision.
//! - [`eval`]: measures of what agents said (repeats, echoes, quotes of quotes, variety, answers
//!   to the player's questions), pure functions shared by tests and games.
//! - [`brain`]: brains (the `scripted` brain and the factory that builds one by name).
//! - [`contract`], [`geometry`], [`agent_state`], [`agent_error`]: leaf types every layer speaks
//!   (the tool-call contract, positions and world bounds, the agent state machine, the codes of
//!   an agent's errors).
//! - [`error_code`]: the one vocabulary of error codes (each with its category and a hint) that
//!   every surface's codes are views of.
//! - [`protocol`]: the WebSocket protocol's messages, parsing, dispatch and events.
//! - [`net`]: the WebSocket server (axum on tokio): `/ws`, token auth, frame and rate limits,
//!   bounded per-client queues, graceful shutdown; MCP over HTTP at `/mcp` on the same port.
//! - [`mcp`]: the tool registry as an MCP server (stdio in `agents-server mcp`, Streamable HTTP
//!   at `/mcp`).
//! - [`admission`]: per-connection rate limits and the constant-time token comparison, shared by
//!   both servers.
//! - [`wire`]: the macro that declares a wire vocabulary (an enum whose values travel as names)
//!   with each name written once.
//! - [`time`]: UTC ISO-8601 timestamps; [`json_kind`]: how errors name a JSON value's type.

pub mod admission;
pub mod agent_error;
pub mod agent_state;
pub mod apps;
pub mod arena;
pub mod brain;
pub mod bus;
pub mod campaign;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod contract;
pub mod error_code;
pub mod eval;
pub mod geometry;
pub mod json_kind;
pub mod json_sorted;
pub mod limits;
pub mod mcp;
pub mod memory;
pub mod mind;
pub mod moves;
pub mod net;
pub mod protocol;
pub mod report_card;
pub mod report_html;
pub mod runtime;
pub mod time;
pub mod tools;
pub mod wire;
