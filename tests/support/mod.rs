//! Shared helpers for the end-to-end tests: locating (building) the `agents-server` binary, running
//! its CLI, and the list of tools the server must offer.
//!
//! # Where the binary comes from
//!
//! These tests are the `agents-server` package's integration tests (its `Cargo.toml` points its
//! `[[test]]` targets here), so cargo builds the binary with the tests and names it in
//! `CARGO_BIN_EXE_agents-server`. `AGENTS_SERVER_BIN`, when set, overrides it (to test an
//! installed or release binary).

// Each test file includes this module and uses a different part of it.
#![allow(dead_code)]

pub mod cluster;
pub mod server;
pub mod ws;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

/// The tabletop GM tools, on campaign files.
pub const GM_TOOLS: &[&str] = &["move", "move_options", "hp_delta", "map_generate"];

/// Every tool the server must list: every declared game's tools (`new_*`, `apply_*`, `legal_*`,
/// `choose_*`, `suggest_*`, the dice and the slot machine's own; their public names are pinned in
/// `agents-core`'s `tools::games` tests) and the GM tools, sorted.
pub fn expected_tool_names() -> Vec<String> {
    let mut names: Vec<String> = agents_core::tools::games::GAMES
        .iter()
        .flat_map(|game| game.tool_names())
        .collect();
    names.extend(GM_TOOLS.iter().map(|t| (*t).to_owned()));
    names.sort();
    names
}

/// The path of the `agents-server` binary (see the module docs for where it comes from).
///
/// # Panics
///
/// When `AGENTS_SERVER_BIN` names no file.
pub fn server_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("AGENTS_SERVER_BIN") {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "AGENTS_SERVER_BIN={} is not a file",
                path.display()
            );
            path
        }
        None => PathBuf::from(env!("CARGO_BIN_EXE_agents-server")),
    })
}

/// What one run of the CLI produced.
#[derive(Debug)]
pub struct CliRun {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl CliRun {
    /// stdout parsed as one JSON value.
    ///
    /// # Panics
    ///
    /// When stdout is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs `agents-server ARGS…`, feeding `stdin` (empty when `None`).
///
/// # Panics
///
/// When the process cannot be started.
pub fn run_cli(args: &[&str], stdin: Option<&str>) -> CliRun {
    let mut child = Command::new(server_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agents-server");
    {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        if let Some(text) = stdin {
            // The process may exit without reading; a broken pipe is not a test failure.
            let _ = pipe.write_all(text.as_bytes());
        }
    }
    let output = child.wait_with_output().expect("wait for agents-server");
    CliRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `agents-server tool NAME JSON` and expects exit code 0 and a JSON object on stdout.
///
/// # Panics
///
/// When the call fails.
pub fn call_ok(name: &str, args: &Value) -> Value {
    let run = run_cli(&["tool", name, &args.to_string()], None);
    assert_eq!(
        run.code,
        Some(0),
        "{name} {args} failed:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let value = run.json();
    assert!(value.is_object(), "{name} printed a non-object: {value}");
    value
}
