//! MCP: the tool registry as a Model Context Protocol server (the `rmcp` crate).
//!
//! [`McpHandler`] is transport-independent (it wraps an `Arc<ToolRegistry>`). `agents-server mcp`
//! serves it on stdin/stdout; [`http_service`] serves it over Streamable HTTP, mounted at `/mcp`
//! on the WebSocket server (`agents-server serve` and the Godot `AgentRuntime` node) — the same
//! handler, so every transport lists and calls the same tools the same way.
//!
//! - `tools/list`: the registry's MCP definitions, converted from [`Tool::mcp_definition`]
//!   so `agents-server tools --format mcp` and `tools/list` can never disagree.
//! - `tools/call`: `structuredContent`, the text items of [`ToolOutput::text_items`] (the JSON
//!   first, then the notes) and `isError`. A failure that is not a call's result is a JSON-RPC
//!   error whose code follows from its [error code](crate::error_code)'s category
//!   ([`mcp_error`]): an unknown tool is "invalid params" (`-32602`), a bug "internal error";
//!   invalid arguments are a result with `isError: true` whose structured content names the field
//!   (`{error, reason: "invalid_args", tool, field}`).
//! - Over HTTP, each session's `tools/call`s are rate-limited as a WebSocket connection's
//!   requests are ([`http_service`]): beyond the bucket, a failed result with the reason
//!   `rate_limited`.
//! - Calls of tools that search ([`Tool::searches`]: the `suggest_*` AIs, up to their `timeMs`)
//!   run on tokio's blocking pool; the others answer in microseconds and run inline.

pub mod memory;
pub mod stdio;

use std::net::SocketAddr;
use std::sync::Arc;

use crate::admission::{Admission, TokenBucket};
use crate::error_code::ErrorCode;
use crate::tools::{Tool, ToolError, ToolOutput, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The name this server gives in `initialize` (`serverInfo.name`).
pub const SERVER_NAME: &str = "godot-agents";

/// The MCP server handler: the tool registry behind `tools/list` and `tools/call`.
///
/// Cheap to clone (shared registry); serve it with any rmcp transport.
#[derive(Debug, Clone)]
pub struct McpHandler {
    registry: Arc<ToolRegistry>,
    tools: Arc<Vec<rmcp::model::Tool>>,
    /// The session's token bucket ([`McpHandler::rate_limited`]); `None`: no limit.
    bucket: Option<Arc<parking_lot::Mutex<TokenBucket>>>,
}

impl McpHandler {
    /// A handler serving every tool of `registry`, without a rate limit (stdio: the
    /// operator's own host).
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        let tools = registry.tools().map(to_mcp_tool).collect();
        McpHandler {
            registry,
            tools: Arc::new(tools),
            bucket: None,
        }
    }

    /// This handler for one session whose `tools/call`s are limited as a WebSocket
    /// connection's requests are: a token bucket of `burst` calls at once, refilled at
    /// `rate_per_sec` a second; a call beyond it is a failed result with the reason
    /// `rate_limited`, and is not run.
    pub fn rate_limited(&self, rate_per_sec: u32, burst: u32) -> Self {
        McpHandler {
            bucket: Some(Arc::new(parking_lot::Mutex::new(TokenBucket::new(
                rate_per_sec,
                burst,
                std::time::Instant::now(),
            )))),
            ..self.clone()
        }
    }

    /// Whether the session's bucket refuses a call now.
    fn refuses(&self) -> bool {
        self.bucket.as_ref().is_some_and(|bucket| {
            bucket.lock().take(std::time::Instant::now()) != Admission::Allowed
        })
    }

    /// The registry this handler serves.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The tool definitions in rmcp's form, sorted by name.
    pub fn tool_definitions(&self) -> &[rmcp::model::Tool] {
        &self.tools
    }

    /// Calls `name` with `arguments` (on the blocking pool when it searches) and shapes the MCP
    /// result.
    ///
    /// # Errors
    ///
    /// An unknown tool is a JSON-RPC "invalid params" error; a call that could not complete
    /// (the blocking task was cancelled) is an internal error. Everything else, including invalid
    /// arguments and illegal moves, is an `Ok` result with `isError` set accordingly.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, McpError> {
        if self.registry.get(name).is_none() {
            let error = ToolError::UnknownTool {
                name: name.to_owned(),
            };
            return Err(mcp_error(
                error.code(),
                error.to_string(),
                Some(json!({"reason": error.reason(), "tool": name})),
            ));
        }
        let args = arguments.map(Value::Object).unwrap_or(Value::Null);
        let searches = self.registry.get(name).is_some_and(|t| t.searches());
        let output = if searches {
            let registry = Arc::clone(&self.registry);
            let tool = name.to_owned();
            tokio::task::spawn_blocking(move || registry.call_to_output(&tool, &args))
                .await
                .map_err(|e| {
                    mcp_error(
                        ErrorCode::InternalError,
                        format!("the call to {name} did not complete: {e}"),
                        None,
                    )
                })?
        } else {
            self.registry.call_to_output(name, &args)
        };
        if output.is_error {
            tracing::debug!(tool = name, "tool call failed: {}", output.structured);
        }
        Ok(to_call_result(&output))
    }
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Godot Agents game tools. Tools are stateless: pass the state string a previous \
                 call returned (new_* starts a game, apply_* plays a move, legal_* lists the legal \
                 moves, choose_* offers ranked candidates, suggest_* asks the built-in AI). A \
                 server that runs agents also offers their memories: remember, recall, \
                 list_memories and forget_memory, each naming the agent by id.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        tracing::debug!(tool = %request.name, "tools/call");
        if self.refuses() {
            let code = ErrorCode::RateLimited;
            let refused = ToolOutput::failed(json!({
                "error": "too many tool calls in this session; slow down",
                "reason": code.as_str(),
                "tool": request.name,
            }));
            return Ok(CallToolResponse::from(to_call_result(&refused)));
        }
        self.call(&request.name, request.arguments)
            .await
            .map(CallToolResponse::from)
    }
}

/// An MCP (JSON-RPC) error for a failure of `code`: its JSON-RPC code follows from the code's
/// category ([`Category::jsonrpc_code`](crate::error_code::Category::jsonrpc_code): "invalid
/// params" when the call must change, "internal error" for a bug, the server error `-32000`
/// otherwise). `data` carries the code's name as `reason`.
pub fn mcp_error(code: ErrorCode, message: impl Into<String>, data: Option<Value>) -> McpError {
    let data = match data {
        Some(Value::Object(mut object)) => {
            object
                .entry("reason")
                .or_insert_with(|| code.as_str().into());
            Some(Value::Object(object))
        }
        Some(other) => Some(other),
        None => Some(json!({"reason": code.as_str()})),
    };
    McpError::new(
        rmcp::model::ErrorCode(code.category().jsonrpc_code()),
        message.into(),
        data,
    )
}

/// One registry tool as an rmcp tool, converted from [`Tool::mcp_definition`] (the single source
/// of the MCP shape).
pub fn to_mcp_tool(tool: &Tool) -> rmcp::model::Tool {
    serde_json::from_value(tool.mcp_definition()).unwrap_or_else(|e| {
        // Only reachable if the registry's MCP shape and rmcp's drift apart; keep the tool usable.
        tracing::error!(tool = tool.name(), "cannot convert the MCP definition: {e}");
        let schema = tool.input_schema().as_object().cloned().unwrap_or_default();
        rmcp::model::Tool::new(
            tool.name().to_owned(),
            tool.description().to_owned(),
            schema,
        )
    })
}

/// A tool output as an MCP result: `structuredContent`, the text items (JSON first, then the
/// notes) and `isError`.
pub fn to_call_result(output: &ToolOutput) -> CallToolResult {
    let mut result = if output.is_error {
        CallToolResult::structured_error(output.structured.clone())
    } else {
        CallToolResult::structured(output.structured.clone())
    };
    result.content = output
        .text_items()
        .into_iter()
        .map(ContentBlock::text)
        .collect();
    result
}

/// The Streamable HTTP service type [`http_service`] builds.
pub type McpHttpService = StreamableHttpService<McpHandler, LocalSessionManager>;

/// MCP over Streamable HTTP for `registry`, to mount at `/mcp` (the WebSocket server does, see
/// [`ServerConfig::mcp`](crate::net::ServerConfig::mcp)).
///
/// Each session's `tools/call`s are rate-limited as a WebSocket connection's requests are
/// (`rate`: `(per second, burst)`, [`McpHandler::rate_limited`]); a session is what rmcp
/// makes per `initialize` (its `Mcp-Session-Id`), each with a bucket of its own.
///
/// Cancelling `shutdown` ends every MCP session. The service accepts only these `Host` headers
/// (rmcp's protection against DNS rebinding), on any bind: the loopback names, the bound address
/// when it is a specific one, and `allowed_hosts` (the names a server on another interface is
/// reached by: `--allow-host`).
pub fn http_service(
    registry: Arc<ToolRegistry>,
    bind: SocketAddr,
    allowed_hosts: &[String],
    shutdown: CancellationToken,
    (rate_per_sec, burst): (u32, u32),
) -> McpHttpService {
    let handler = McpHandler::new(registry);
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown;
    let mut hosts = config.allowed_hosts.clone();
    // The bound address when it is a specific one — loopback ones too: a server on 127.0.0.2
    // is reached as `http://127.0.0.2:PORT/mcp`, which the defaults (`127.0.0.1`) do not cover.
    if !bind.ip().is_unspecified() && !hosts.contains(&bind.ip().to_string()) {
        hosts.push(bind.ip().to_string());
    }
    hosts.extend(allowed_hosts.iter().cloned());
    config = config.with_allowed_hosts(hosts);
    StreamableHttpService::new(
        move || Ok(handler.rate_limited(rate_per_sec, burst)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

#[cfg(test)]
mod tests {
    use crate::tools::ToolSpec;

    use super::*;

    fn registry() -> Arc<ToolRegistry> {
        let mut r = ToolRegistry::new();
        r.register(
            ToolSpec::new(
                "echo",
                "Echoes n.",
                json!({
                    "type": "object",
                    "properties": {"n": {"type": "integer", "description": "A number."}},
                    "required": ["n"],
                    "additionalProperties": false
                }),
            )
            .read_only(),
            |args| {
                let n = args["n"].as_i64().unwrap_or(0);
                if n < 0 {
                    ToolOutput::failed(json!({"error": "Negative.", "reason": "negative"}))
                } else {
                    ToolOutput::ok(json!({"n": n})).with_note("a note")
                }
            },
        )
        .unwrap();
        r.register(
            ToolSpec::new("write", "Not read-only.", json!({"type": "object"})),
            |_| ToolOutput::ok(json!({})),
        )
        .unwrap();
        Arc::new(r)
    }

    #[test]
    fn definitions_match_the_registry_mcp_shape() {
        let handler = McpHandler::new(registry());
        let tools = handler.tool_definitions();
        assert_eq!(tools.len(), 2);
        assert_eq!(
            serde_json::to_value(tools).unwrap(),
            handler.registry().mcp_definitions()
        );
        assert_eq!(
            tools[0].annotations.as_ref().unwrap().read_only_hint,
            Some(true)
        );
        assert_eq!(
            tools[1].annotations.as_ref().unwrap().read_only_hint,
            Some(false)
        );
    }

    #[test]
    fn server_info_names_the_server() {
        let info = McpHandler::new(registry()).get_info();
        assert_eq!(info.server_info.name, SERVER_NAME);
        assert_eq!(info.server_info.version, env!("CARGO_PKG_VERSION"));
        assert!(info.capabilities.tools.is_some());
    }

    #[tokio::test]
    async fn successful_call_has_structured_content_then_notes() {
        let result = McpHandler::new(registry())
            .call("echo", Some(json!({"n": 3}).as_object().unwrap().clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"n": 3})));
        let texts: Vec<&str> = result
            .content
            .iter()
            .map(|c| c.as_text().unwrap().text.as_str())
            .collect();
        assert_eq!(texts, vec![r#"{"n":3}"#, "a note"]);
    }

    #[tokio::test]
    async fn failed_call_is_an_error_result() {
        let result = McpHandler::new(registry())
            .call("echo", Some(json!({"n": -1}).as_object().unwrap().clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content.unwrap()["reason"], "negative");
    }

    #[tokio::test]
    async fn invalid_arguments_are_an_error_result_naming_the_field() {
        let handler = McpHandler::new(registry());
        let result = handler
            .call("echo", Some(json!({"n": "3"}).as_object().unwrap().clone()))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["reason"], "invalid_args");
        assert_eq!(structured["field"], "n");
        // Missing arguments count as `{}`: the required field is named.
        let result = handler.call("echo", None).await.unwrap();
        assert_eq!(result.structured_content.unwrap()["field"], "n");
    }

    #[tokio::test]
    async fn unknown_tool_is_invalid_params() {
        let err = McpHandler::new(registry())
            .call("nope", None)
            .await
            .unwrap_err();
        assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(
            err.message.contains("Unknown tool: nope"),
            "{}",
            err.message
        );
    }
}
