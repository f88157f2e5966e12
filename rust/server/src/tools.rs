//! The one tool registry every command of the server reads.

use agents_core::campaign::file_tools::CampaignFiles;
use agents_core::tools::ToolRegistry;

/// The tools the server offers (the command line, MCP, `call_tool`): the game tools, and the GM
/// tools on campaign files (`move`, `move_options`, `hp_delta`, `map_generate` with a
/// `campaign` path naming what `files` allows: any path for the operator's `tool` command, the
/// campaign directory's files for MCP and WebSocket clients).
pub fn server_tools(files: CampaignFiles) -> ToolRegistry {
    let mut registry = ToolRegistry::with_game_tools();
    agents_core::campaign::file_tools::register(&mut registry, files);
    registry
}
