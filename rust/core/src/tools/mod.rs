//! The tool registry and the tools it ships with.

pub mod games;
mod registry;
pub mod world;

pub use registry::{
    RegistryError, TIME_BUDGET_ARG, Tool, ToolContext, ToolError, ToolFuture, ToolOutput,
    ToolRegistry, ToolSpec,
};
