//! `agents-server mcp`: the tool registry over MCP on stdin/stdout, with
//! [`agents_core::mcp::McpHandler`] (the same handler `serve` mounts at `/mcp`).

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use agents_core::mcp::{McpHandler, SERVER_NAME};
use agents_core::tools::ToolRegistry;
use tracing::level_filters::LevelFilter;

/// How long shutdown waits for tool calls still running (a search is bounded by its `timeMs`).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Sends logs to stderr (stdout is the protocol) at `level`.
pub fn init_logging(level: LevelFilter) {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_max_level(level)
        .try_init();
}

/// Serves `registry` over MCP on stdin/stdout until stdin closes.
///
/// # Errors
///
/// The runtime could not start, or the `initialize` handshake failed.
pub fn run_stdio(registry: Arc<ToolRegistry>) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("agents-mcp")
        .build()?;
    let result = runtime.block_on(async move {
        let handler = McpHandler::new(registry);
        let count = handler.tool_definitions().len();
        tracing::info!(tools = count, "{SERVER_NAME} MCP server listening on stdio");
        // Every line is framed per JSON-RPC 2.0 before the service sees it.
        agents_core::mcp::stdio::serve(handler, tokio::io::stdin(), tokio::io::stdout())
            .await
            .map_err(|e| -> Box<dyn std::error::Error> { e })
    });
    // Do not wait forever for a search a client abandoned, nor for a blocked stdin read.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}
