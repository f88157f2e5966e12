//! The tool-call contract (tool-calls.md): what a brain answers, `{assistant_text, dialog_type,
//! tool_calls:[{id, tool, args, reason?}]}`.
//!
//! A leaf module: brains produce these types, the runtime executes them, the protocol and the
//! schemas describe them.

use serde::{Deserialize, Serialize};

/// One requested tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    /// Call id (`call_001`), echoed in failures.
    pub id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments (a JSON object).
    #[serde(default)]
    pub args: serde_json::Value,
    /// Why (optional, for logs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A brain's answer (the tool-call contract). With no tool calls, `assistant_text` must be
/// non-empty (the anti-silent rule); the runtime says it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrainReply {
    /// Text to say (spoken as a `speak` to the default recipients when no `speak` call says
    /// something else).
    #[serde(default)]
    pub assistant_text: String,
    /// What kind of line this is (`reply`, `chat`, `task_update`, `collaboration`, `monologue`).
    #[serde(default)]
    pub dialog_type: String,
    /// Actions, executed in order.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
}
