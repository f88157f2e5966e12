//! The tool registry's requests, and the connection's event subscription.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Answer, Cx, ForConnection, Refusal, Request, Runs};
use crate::protocol::ProtocolErrorCode;
use crate::tools::{ToolError, ToolRegistry};

/// The tool definitions (LLM shape) → `list_tools_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTools {}

impl Request for ListTools {
    type Reply = ListToolsResponse;
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let tools = match cx.tools.llm_definitions() {
            Value::Array(list) => list,
            other => vec![other],
        };
        Answer::Now(Ok(ListToolsResponse { tools }))
    }
}

/// Reply to `list_tools`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListToolsResponse {
    /// Tool definitions: `{name, description, parameters}`.
    pub tools: Vec<Value>,
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
    type Reply = CallToolResponse;
    const WRITES: bool = false;

    fn runs(&self, tools: &ToolRegistry) -> Runs {
        // A `suggest_*` AI searches up to its `timeMs`; every other tool answers in
        // microseconds.
        match tools.get(&self.name) {
            Some(tool) if tool.searches() => Runs::Blocking,
            _ => Runs::Inline,
        }
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let args = self.arguments.unwrap_or_else(|| serde_json::json!({}));
        Answer::Now(match cx.tools.call(&self.name, &args) {
            Ok(output) => Ok(CallToolResponse {
                name: self.name,
                content: output.text_items(),
                structured_content: output.structured,
                is_error: output.is_error,
            }),
            Err(e) => Err(Refusal::new(tool_code(&e), e.to_string())),
        })
    }
}

/// Reply to `call_tool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallToolResponse {
    /// The tool.
    pub name: String,
    /// The result (`structuredContent`).
    pub structured_content: Value,
    /// Text items (notes).
    pub content: Vec<String>,
    /// A game-level failure (illegal move, unparsable state).
    pub is_error: bool,
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
    type Reply = SubscribeResponse;
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let _ = cx;
        Answer::Connection(ForConnection::Subscribe {
            events: self.events,
            agents: self.agents,
        })
    }
}

/// Reply to `subscribe`: the filter now in force.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubscribeResponse {
    /// Event types received (`None` = all).
    pub events: Option<Vec<String>>,
    /// Agents whose events are received (`None` = all).
    pub agents: Option<Vec<String>>,
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
