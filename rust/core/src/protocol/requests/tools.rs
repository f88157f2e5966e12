//! The tool registry's requests, and the connection's event subscription.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Cx, Handled, Request, Runs, error};
use crate::protocol::{ProtocolErrorCode, ServerMessage};
use crate::tools::{ToolError, ToolRegistry};

/// The tool definitions (LLM shape) → `list_tools_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTools {}

impl Request for ListTools {
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let tools = match cx.tools.llm_definitions() {
            Value::Array(list) => list,
            other => vec![other],
        };
        Handled::Reply(ServerMessage::ListToolsResponse {
            request_id: cx.id(),
            tools,
        })
    }
}

/// Call a tool → `call_tool_response` (a game-level failure such as an illegal move is a
/// normal response with `is_error: true`; an unknown tool or invalid arguments is an `error`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallTool {
    /// The tool's name.
    #[schemars(length(max = crate::limits::MAX_TOOL_NAME_CHARS))]
    pub name: String,
    /// Its arguments (a JSON object, at most [`crate::limits::MAX_TOOL_ARGUMENTS_BYTES`] as
    /// JSON; default `{}`).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub arguments: Option<Value>,
}

impl Request for CallTool {
    const WRITES: bool = false;

    fn runs(&self, tools: &ToolRegistry) -> Runs {
        // A `suggest_*` AI searches up to its `timeMs`; every other tool answers in
        // microseconds.
        match tools.get(&self.name) {
            Some(tool) if tool.searches() => Runs::Blocking,
            _ => Runs::Inline,
        }
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let args = self.arguments.unwrap_or_else(|| serde_json::json!({}));
        Handled::Reply(match cx.tools.call(&self.name, &args) {
            Ok(output) => ServerMessage::CallToolResponse {
                request_id: cx.id(),
                name: self.name,
                content: output.text_items(),
                structured_content: output.structured,
                is_error: output.is_error,
            },
            Err(e) => error(tool_code(&e), e.to_string(), cx.id()),
        })
    }
}

/// Choose which events this connection receives → `subscribe_response`. Replaces the
/// previous choice; a new connection receives every event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Subscribe {
    /// Event types (`agent_speech`, …); absent = all, `[]` = none.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_FILTER_ENTRIES))]
    pub events: Option<Vec<String>>,
    /// Only events about these agents; absent = every agent.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_FILTER_ENTRIES))]
    pub agents: Option<Vec<String>>,
}

impl Request for Subscribe {
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let _ = cx;
        Handled::Subscribe {
            events: self.events,
            agents: self.agents,
        }
    }
}

/// The protocol code of a tool error.
fn tool_code(e: &ToolError) -> ProtocolErrorCode {
    match e {
        ToolError::UnknownTool { .. } => ProtocolErrorCode::UnknownTool,
        ToolError::InvalidArguments { .. } => ProtocolErrorCode::InvalidArgs,
        ToolError::Refused { .. } => ProtocolErrorCode::ActionRefused,
        ToolError::Internal { .. }
        | ToolError::Asynchronous { .. }
        | ToolError::Cancelled { .. } => ProtocolErrorCode::InternalError,
    }
}
