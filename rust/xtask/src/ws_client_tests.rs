//! "Godot as a client": the GDScript suites of `godot-project/tests/ws_client/` use Godot's own
//! `WebSocketPeer` against a WebSocket server running in ANOTHER process, once per target:
//!
//! 1. **serve binary** — `agents-server serve` (built here, debug), on a free loopback port with a
//!    random token; stopped with SIGTERM, after which it must exit 0 (a graceful shutdown).
//! 2. **godot node** — a second headless Godot process running `res://server/serve.gd` (an
//!    `AgentRuntime` with its WebSocket server); stopped with its `--stop-file`, after which it
//!    must exit 0, and its output must be free of the problems [`godot_tests::scan_output`]
//!    finds (script errors, panics, leaks at exit).
//!
//! Both servers allow the browser origin [`ALLOWED_ORIGIN`] (`--allow-origin`), so the suites can
//! check that it connects and a foreign one does not.
//!
//! The suites learn the target from `AGENTS_WS_URL`, `AGENTS_WS_TOKEN`, `AGENTS_WS_TARGET` and
//! `AGENTS_WS_ALLOWED_ORIGIN`.
//! Every problem is reported with the target it concerns.

use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::godot::Godot;
use crate::godot_tests::{self, RunnerArgs, SuiteRun};
use crate::process::{self, Background, Echo};
use crate::{Ctx, cargo};

/// The runner folder holding the client suites.
pub const CLIENT_SUITES_DIR: &str = "res://tests/ws_client";

/// The client suites by name (as `--suite` may name them, with or without `.gd`).
pub const CLIENT_SUITES: &[&str] = &["test_remote_server"];

/// What `agents-server serve` prints (stderr) once it listens.
pub const SERVE_MARKER: &str = "listening on ws://";

/// What `serve.gd` prints once its node listens.
const NODE_MARKER: &str = "AGENTS_NODE_SERVER_URL";

/// What `serve.gd` prints once it has shut down.
const NODE_STOPPED_MARKER: &str = "AGENTS_NODE_SERVER_STOPPED";

/// The browser origin both servers are told to allow (`--allow-origin`).
const ALLOWED_ORIGIN: &str = "https://game.example";

/// Seconds an idle agent waits before deciding on its own, on both servers (the suites' agents
/// set their own short times too).
const IDLE_THINK_SECONDS: &str = "0.3";

/// How long a server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a server may take to stop once asked.
const STOP_GRACE: Duration = Duration::from_secs(20);

/// True when `name` (a `--suite` value) names a client suite.
pub fn is_client_suite(name: &str) -> bool {
    let stem = name.strip_suffix(".gd").unwrap_or(name);
    CLIENT_SUITES.contains(&stem)
}

/// The `ws://HOST:PORT/ws` URL in a line such as `listening on ws://127.0.0.1:9080/ws` or
/// `AGENTS_NODE_SERVER_URL ws://127.0.0.1:9080/ws` (colour codes around it are ignored).
pub fn parse_ws_url(line: &str) -> Option<String> {
    let start = line.find("ws://")?;
    let url: String = line[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || ":/.[]-_".contains(*c))
        .collect();
    let authority = url.strip_prefix("ws://")?.strip_suffix("/ws")?;
    let (host, port) = authority.rsplit_once(':')?;
    let port_ok = port.parse::<u16>().is_ok_and(|p| p != 0);
    (!host.is_empty() && !host.contains('/') && port_ok).then_some(url)
}

/// A fresh random token (32 hex digits) from the standard library's randomly seeded hasher.
fn random_token() -> String {
    let mut token = String::new();
    for salt in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(salt);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        hasher.write_u32(std::process::id());
        token.push_str(&format!("{:016x}", hasher.finish()));
    }
    token
}

/// Prefixes every problem of `run` with the target's name.
fn label(target: &str, mut run: SuiteRun) -> SuiteRun {
    for p in &mut run.problems {
        *p = format!("[ws client vs {target}] {p}");
    }
    run
}

/// Adds `other` to `total`.
fn merge(total: &mut SuiteRun, other: SuiteRun) {
    total.passed += other.passed;
    total.failed += other.failed;
    total.problems.extend(other.problems);
}

/// A run that failed before or around the suites: one failure with `problem`.
fn failure(target: &str, problem: String) -> SuiteRun {
    label(
        target,
        SuiteRun {
            passed: 0,
            failed: 1,
            problems: vec![problem],
        },
    )
}

/// A scratch folder for the servers' databases and the stop file, emptied first.
fn scratch_dir(ctx: &Ctx) -> Result<PathBuf, String> {
    let dir = ctx.target_dir.join("xtask-ws-client");
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Builds `agents-server` (debug) and returns the binary's path.
pub fn build_server(ctx: &Ctx) -> Result<PathBuf, String> {
    println!("xtask: cargo build -p agents-server");
    process::run_checked(
        Command::new(cargo())
            .args(["build", "-p", "agents-server"])
            .current_dir(&ctx.root),
    )?;
    let exe = ctx
        .target_dir
        .join("debug")
        .join(format!("agents-server{}", std::env::consts::EXE_SUFFIX));
    if exe.is_file() {
        Ok(exe)
    } else {
        Err(format!(
            "cargo built agents-server but {} is missing",
            exe.display()
        ))
    }
}

/// Runs the client suites against `url` (with `token`); `suites` narrows them (empty: all).
fn run_client(
    godot: &Godot,
    project: &Path,
    target: &str,
    url: &str,
    token: &str,
    suites: &[String],
    timeout: Duration,
) -> SuiteRun {
    println!("xtask: Godot as a client of the {target} at {url}");
    let args = RunnerArgs {
        dir: Some(CLIENT_SUITES_DIR.to_string()),
        env: vec![
            ("AGENTS_WS_URL".into(), url.into()),
            ("AGENTS_WS_TOKEN".into(), token.into()),
            ("AGENTS_WS_TARGET".into(), target.into()),
            ("AGENTS_WS_ALLOWED_ORIGIN".into(), ALLOWED_ORIGIN.into()),
        ],
    };
    label(
        target,
        godot_tests::run_suites_in(godot, project, &args, suites, timeout),
    )
}

/// Target 1: `agents-server serve`.
fn against_serve_binary(
    ctx: &Ctx,
    godot: &Godot,
    scratch: &Path,
    suites: &[String],
    timeout: Duration,
) -> SuiteRun {
    const TARGET: &str = "serve binary";
    let exe = match build_server(ctx) {
        Ok(exe) => exe,
        Err(e) => return failure(TARGET, e),
    };
    let token = random_token();
    let mut cmd = Command::new(&exe);
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--db"])
        .arg(scratch.join("serve-binary.db"))
        .args([
            "--token",
            &token,
            "--idle-think-seconds",
            IDLE_THINK_SECONDS,
            "--allow-origin",
            ALLOWED_ORIGIN,
        ])
        .args(["--log-level", "warn"]);
    let (server, url) = match start_server(&mut cmd, SERVE_MARKER) {
        Ok(started) => started,
        Err(e) => return failure(TARGET, format!("the server did not start: {e}")),
    };
    let mut run = run_client(
        godot,
        &ctx.project_dir(),
        TARGET,
        &url,
        &token,
        suites,
        timeout,
    );
    let out = server.terminate(STOP_GRACE);
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!(
            "agents-server serve did not exit cleanly after SIGTERM ({}); its output ended with:\n{}",
            out.ending(),
            tail(&out.output, 15)
        ));
    }
    merge(&mut run, label_problems(TARGET, problems));
    run
}

/// Starts a server in the background and waits for the line (containing `marker`) that names
/// its `ws://` URL.
fn start_server(cmd: &mut Command, marker: &str) -> Result<(Background, String), String> {
    let mut server = Background::spawn(cmd, Echo::Quiet)?;
    let line = server.wait_for_line(marker, START_TIMEOUT)?;
    let url = parse_ws_url(&line).ok_or(format!("no ws:// URL in {line:?}"))?;
    Ok((server, url))
}

/// Target 2: an `AgentRuntime` node serving in a second Godot process (`res://server/serve.gd`).
fn against_godot_node(
    ctx: &Ctx,
    godot: &Godot,
    scratch: &Path,
    suites: &[String],
    timeout: Duration,
) -> SuiteRun {
    const TARGET: &str = "godot node";
    let project = ctx.project_dir();
    let token = random_token();
    let stop_file = scratch.join("godot-node.stop");
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args([
            "--script",
            "res://server/serve.gd",
            "--",
            "--port",
            "0",
            "--db",
        ])
        .arg(scratch.join("godot-node.db"))
        .args([
            "--token",
            &token,
            "--idle-think-seconds",
            IDLE_THINK_SECONDS,
            "--allow-origin",
            ALLOWED_ORIGIN,
        ])
        .arg("--stop-file")
        .arg(&stop_file);
    let started = Instant::now();
    let (server, url) = match start_server(&mut cmd, NODE_MARKER) {
        Ok(started) => started,
        Err(e) => return failure(TARGET, format!("serve.gd did not start: {e}")),
    };
    let mut run = run_client(godot, &project, TARGET, &url, &token, suites, timeout);
    if let Err(e) = fs::write(&stop_file, b"stop\n") {
        merge(
            &mut run,
            failure(TARGET, format!("cannot write {}: {e}", stop_file.display())),
        );
        return run;
    }
    let out = server.wait(Some(started.elapsed() + STOP_GRACE));
    let mut problems: Vec<String> = godot_tests::scan_output(&out.output)
        .into_iter()
        .map(|p| format!("in the serving Godot process: {p}"))
        .collect();
    if !out.success() {
        problems.push(format!(
            "serve.gd did not exit cleanly after its stop file ({}); its output ended with:\n{}",
            out.ending(),
            tail(&out.output, 15)
        ));
    } else if !out.output.contains(NODE_STOPPED_MARKER) {
        problems.push(format!(
            "serve.gd exited without printing {NODE_STOPPED_MARKER}"
        ));
    }
    merge(&mut run, label_problems(TARGET, problems));
    run
}

/// Problems found around a run (one failure each), labelled with the target.
fn label_problems(target: &str, problems: Vec<String>) -> SuiteRun {
    label(
        target,
        SuiteRun {
            passed: 0,
            failed: problems.len() as u64,
            problems,
        },
    )
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs the client suites (`suites` narrows them; empty: all) against both targets. The project
/// must be imported and the extension built.
pub fn run(ctx: &Ctx, godot: &Godot, suites: &[String], timeout: Duration) -> SuiteRun {
    let scratch = match scratch_dir(ctx) {
        Ok(dir) => dir,
        Err(e) => return failure("both targets", e),
    };
    let mut total = against_serve_binary(ctx, godot, &scratch, suites, timeout);
    merge(
        &mut total,
        against_godot_node(ctx, godot, &scratch, suites, timeout),
    );
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_from_both_servers_lines() {
        assert_eq!(
            parse_ws_url("listening on ws://127.0.0.1:43465/ws").as_deref(),
            Some("ws://127.0.0.1:43465/ws")
        );
        assert_eq!(
            parse_ws_url("AGENTS_NODE_SERVER_URL ws://127.0.0.1:9080/ws").as_deref(),
            Some("ws://127.0.0.1:9080/ws")
        );
        assert_eq!(
            parse_ws_url("INFO net: listening on ws://[::1]:8080/ws\u{1b}[0m").as_deref(),
            Some("ws://[::1]:8080/ws")
        );
    }

    #[test]
    fn lines_without_a_usable_url_are_rejected() {
        for line in [
            "listening on",
            "listening on ws://127.0.0.1/ws",
            "listening on ws://127.0.0.1:0/ws",
            "listening on ws://127.0.0.1:99999/ws",
            "listening on ws://127.0.0.1:9080/",
            "listening on ws://:9080/ws",
            "AGENTS_NODE_SERVER_URL ",
        ] {
            assert_eq!(parse_ws_url(line), None, "{line:?}");
        }
    }

    #[test]
    fn client_suite_names() {
        assert!(is_client_suite("test_remote_server"));
        assert!(is_client_suite("test_remote_server.gd"));
        assert!(!is_client_suite("test_websocket"));
        assert!(!is_client_suite("test_remote_server.gdx"));
    }

    #[test]
    fn tokens_are_hex_and_differ() {
        let (a, b) = (random_token(), random_token());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn problems_name_their_target_and_count_as_failures() {
        let mut total = SuiteRun::default();
        merge(
            &mut total,
            label(
                "serve binary",
                SuiteRun {
                    passed: 5,
                    failed: 1,
                    problems: vec!["failed assertion: FAIL x".into()],
                },
            ),
        );
        merge(
            &mut total,
            label_problems("godot node", vec!["exit code 1".into(), "a leak".into()]),
        );
        assert_eq!((total.passed, total.failed), (5, 3));
        assert_eq!(
            total.problems,
            vec![
                "[ws client vs serve binary] failed assertion: FAIL x",
                "[ws client vs godot node] exit code 1",
                "[ws client vs godot node] a leak",
            ]
        );
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
