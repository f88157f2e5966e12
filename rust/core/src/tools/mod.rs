//! The tool registry and the tools it ships with.

pub mod games;
mod registry;
pub mod world;

pub use registry::{
    Refusal, RegistryError, TIME_BUDGET_ARG, Tool, ToolContext, ToolError, ToolFuture, ToolGuard,
    ToolOutput, ToolRegistry, ToolSpec, panic_message,
};
