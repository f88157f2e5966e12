//! `agents-server`: the Godot Agents headless server.
//!
//! A thin layer over `agents-core`: every command reads the one tool registry
//! ([`tools::server_tools`]: the game tools and the GM tools on campaign files).
//!
//! - `agents-server tools [--format llm|mcp]` prints every tool definition as pretty JSON.
//! - `agents-server tool NAME [JSON|-]` calls one tool and prints its `structuredContent`.
//! - `agents-server mcp` serves the tools over MCP on stdin/stdout.
//! - `agents-server serve` runs the agent runtime and serves it over WebSocket.
//! - `agents-server brain-check` sends one real decision to a configured model.
//! - `agents-server campaign new | apply | turn` works on a tabletop campaign file.
//! - `agents-server arena` plays a tournament of brains and engines and rates them.
//! - `agents-server eval` plays the NPC report card: a suite of scenarios on one brain.
//!
//! Exit codes: 0 success; 2 a command-line usage error, and a failure the caller must change
//! something for (an unknown tool, arguments that fail its schema, bad input, an unknown
//! agent…); 1 another failure (a tool that refused the move, the database, a model, a runtime
//! error). A failure with an [error code](agents_core::error_code) takes the exit status of its
//! category ([`agents_core::error_code::Category::exit_code`]).

mod arena;
mod args;
mod brains;
mod campaign;
mod cli;
mod eval;
mod failure;
mod mcp;
mod memory;
mod report;
mod serve;
mod tools;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use agents_core::campaign::file_tools::CampaignFiles;
use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let code = run(Cli::parse());
    // The runtimes are down: let the local models' threads end before the process does.
    if !agents_core::brain::local::end_models(std::time::Duration::from_secs(30)) {
        let _ = writeln!(
            std::io::stderr(),
            "warning: a local model was still decoding when the server ended"
        );
    }
    code
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Tools(args) => {
            let registry = tools::server_tools(CampaignFiles::AnyPath);
            let stdout = std::io::stdout();
            match cli::print_definitions(&registry, args.format, &mut stdout.lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    // A closed pipe (`agents-server tools | head`) is not worth a message.
                    if e.kind() != std::io::ErrorKind::BrokenPipe {
                        let _ = writeln!(
                            std::io::stderr(),
                            "error: cannot write the definitions: {e}"
                        );
                    }
                    ExitCode::FAILURE
                }
            }
        }
        Command::Tool(args) => {
            // The operator's own shell: any path.
            let registry = tools::server_tools(CampaignFiles::AnyPath);
            let outcome = cli::run_tool(
                &registry,
                &args.name,
                args.arguments.as_deref(),
                &mut std::io::stdin().lock(),
                &mut std::io::stdout().lock(),
                &mut std::io::stderr().lock(),
            );
            ExitCode::from(outcome)
        }
        Command::Mcp(args) => {
            mcp::init_logging(args.log_level.into());
            // An MCP host is not trusted: campaign files only inside --campaign-dir.
            let registry = Arc::new(tools::server_tools(CampaignFiles::for_clients(
                args.campaign_dir,
            )));
            match mcp::run_stdio(registry) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "error: MCP server failed: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::BrainCheck(args) => {
            mcp::init_logging(args.log_level.into());
            match brains::check(args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Campaign { command } => {
            let outcome = campaign::run(
                command,
                &mut std::io::stdin().lock(),
                &mut std::io::stdout().lock(),
            );
            match outcome {
                Ok(code) => ExitCode::from(code),
                Err(failure) => {
                    let _ = writeln!(std::io::stderr(), "error: {}", failure.message);
                    ExitCode::from(failure.exit_code())
                }
            }
        }
        Command::Memory { command } => match memory::run(command, &mut std::io::stdout().lock()) {
            Ok(code) => ExitCode::from(code),
            Err(failure) => {
                let _ = writeln!(std::io::stderr(), "error: {}", failure.message);
                ExitCode::from(failure.exit_code())
            }
        },
        Command::Arena(args) => {
            mcp::init_logging(args.log_level.into());
            match arena::run(args, &mut std::io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(failure) => {
                    let _ = writeln!(std::io::stderr(), "error: {}", failure.message);
                    ExitCode::from(failure.exit_code())
                }
            }
        }
        Command::Eval(args) => {
            mcp::init_logging(args.log_level.into());
            match eval::run(args, &mut std::io::stdout().lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(failure) => {
                    let _ = writeln!(std::io::stderr(), "error: {}", failure.message);
                    ExitCode::from(failure.exit_code())
                }
            }
        }
        Command::Serve(args) => {
            mcp::init_logging(args.log_level.into());
            match serve::run(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
