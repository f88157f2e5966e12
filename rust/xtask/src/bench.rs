//! `cargo xtask bench`: the release-build benchmarks whose numbers `docs/benchmarks.md` records.
//!
//! - `agents-games` `engines`: checkers perft(10) and the `hard` AIs' time per move.
//! - `agents-core` `tool_calls`: tool calls through the registry (JSON in → JSON out), and the
//!   python-chess comparison on the same inputs in the same run (python-chess is installed with
//!   pip when missing and pip is available; otherwise the comparison is skipped with a note).
//! - `agents-core` `bus`: delivery latency with 1,000 subscribers, publish cost with 10,000
//!   recipient-filtered subscriptions, memory per subscription.
//! - `agents-core` `memory`: sustained conversation-row writes through the SQLite writer.
//! - `agents-core` `runtime`: 10,000 agents: spawn time, memory per idle agent, CPU.
//! - `agents-core` `apps`: one action through the app bridge, and 100 apps over one WebSocket.
//! - `agents-core` `campaign`: the GM tools, `map_generate` and a save on a 1,000-area campaign.
//! - Godot `bench/drain_bench.gd`: the main-thread cost of `AgentRuntime` draining 10,000
//!   `agent_spawned` and 10,000 `agent_removed` events and emitting them to a GDScript handler, on
//!   a release build of the extension (see [`godot_drain_bench`]).
//! - Godot `bench/stream_bench.gd`: the main thread's per-frame drain while 100 agents think with
//!   the `openai` brain against the fake provider (the `fakellm` binary, started here) and stream
//!   their lines as `agent_speech_delta` signals, on the release extension (see
//!   [`godot_stream_bench`]).
//! - `agents-local` `throughput` and `agents-core` `local` (feature `local`): the on-device
//!   model on Gemma 3 270M (fetched and checked by [`crate::test_model`]): tokens/s against
//!   llama.cpp's own loop, agents decided together against one at a time, the prompt cache,
//!   memory with 32 agents, answers valid without repair (see [`local_bench`]).
//! - the arena on the local models (`agents-server arena`, release): the `scripted` brain,
//!   Gemma 3 270M and SmolLM2-135M-Instruct against the engines on every board game and at
//!   blackjack, and the engines against each other (see [`crate::arena_bench`]); last, as the
//!   longest.
//! - `agents-server` `ws`: the WebSocket server — memory per idle connection (1,000 clients),
//!   event fan-out (1,000 agents → 100 clients), open-loop request → reply latency — compared in
//!   the same run with two Godot servers this module starts (see [`ws_bench`]): the GDScript
//!   baseline `bench/ws_gdscript_server.gd` (`TCPServer` + `WebSocketPeer`) and the
//!   `AgentRuntime` node serving inside Godot (`server/serve.gd`), both on the release extension.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::process::{self, Background, Echo};
use crate::{Ctx, build, cargo, godot, godot_tests};

/// Which benchmarks `cargo xtask bench` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Every benchmark.
    All,
    /// Only the Godot drain bench (`--only-godot`).
    OnlyGodot,
    /// Only the WebSocket server bench with its Godot comparison servers (`--only-ws`).
    OnlyWs,
    /// Only the Godot drain with 100 agents streaming from the fake provider
    /// (`--only-stream`).
    OnlyStream,
    /// Only the Agents debugger's frame cost (`--only-debugger`).
    OnlyDebugger,
    /// Only AgentNode's costs: 500 NPC nodes' frame cost and the `ask` round trip
    /// (`--only-nodes`).
    OnlyNodes,
    /// Only the on-device model's benches (`--only-local`).
    OnlyLocal,
    /// Only the arena on the local models (`--only-arena`).
    OnlyArena,
}

/// Runs the selected benchmarks, streaming their output; `arena` narrows the arena bench.
pub fn run(
    ctx: &Ctx,
    selection: Selection,
    arena: &crate::arena_bench::Filter,
) -> Result<(), String> {
    match selection {
        Selection::OnlyGodot => return godot_drain_bench(ctx),
        Selection::OnlyWs => return ws_bench(ctx),
        Selection::OnlyStream => return godot_stream_bench(ctx),
        Selection::OnlyDebugger => return debugger_bench(ctx),
        Selection::OnlyNodes => return node_bench(ctx),
        Selection::OnlyLocal => return local_bench(ctx),
        Selection::OnlyArena => return crate::arena_bench::run(ctx, arena),
        Selection::All => {}
    }
    ensure_python_chess();
    crate::packages::ensure_build_tools()?;
    crate::packages::ensure_postgres()?;
    crate::packages::ensure_nats()?;
    // `memory` measures PostgreSQL beside SQLite, `cluster` the bus over NATS.
    for (package, bench, features) in [
        ("agents-games", "engines", ""),
        ("agents-core", "tool_calls", ""),
        ("agents-core", "bus", ""),
        ("agents-core", "memory", "postgres"),
        ("agents-core", "recall", ""),
        ("agents-core", "recall_facts", ""),
        ("agents-core", "cluster", "cluster"),
        ("agents-core", "runtime", ""),
        ("agents-core", "brains", ""),
        ("agents-core", "apps", ""),
        ("agents-core", "campaign", ""),
    ] {
        let features: &[&str] = if features.is_empty() {
            &[]
        } else {
            &["--features", features]
        };
        println!(
            "xtask: cargo bench -p {package} --bench {bench} {}",
            features.join(" ")
        );
        let status = Command::new(cargo())
            .args(["bench", "-p", package, "--bench", bench])
            .args(features)
            .current_dir(&ctx.root)
            .status()
            .map_err(|e| format!("cannot run cargo bench: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cargo bench -p {package} --bench {bench} failed ({status})"
            ));
        }
    }
    godot_drain_bench(ctx)?;
    godot_stream_bench(ctx)?;
    debugger_bench(ctx)?;
    node_bench(ctx)?;
    local_bench(ctx)?;
    ws_bench(ctx)?;
    crate::arena_bench::run(ctx, arena)
}

/// The on-device model's benches on the real models (fetched once into the cache and checked,
/// named in [`crate::test_model::ENV`] and [`crate::test_model::INSTRUCT_ENV`]):
/// `agents-local`'s `throughput`, then `agents-core`'s `local`.
pub fn local_bench(ctx: &Ctx) -> Result<(), String> {
    crate::packages::ensure_build_tools()?;
    let model = crate::test_model::ensure()?;
    let instruct = crate::test_model::SMOLLM2.ensure()?;
    for (package, bench, features) in [
        ("agents-local", "throughput", None),
        ("agents-core", "local", Some("local")),
    ] {
        println!("xtask: cargo bench -p {package} --bench {bench}");
        let mut cmd = Command::new(cargo());
        cmd.args(["bench", "-p", package, "--bench", bench])
            .env(crate::test_model::ENV, &model)
            .env(crate::test_model::INSTRUCT_ENV, &instruct)
            .current_dir(&ctx.root);
        if let Some(features) = features {
            cmd.args(["--features", features]);
        }
        let status = cmd
            .status()
            .map_err(|e| format!("cannot run cargo bench: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cargo bench -p {package} --bench {bench} failed ({status})"
            ));
        }
    }
    Ok(())
}

/// The drain bench's script, relative to `godot-project/`.
const DRAIN_SCRIPT: &str = "bench/drain_bench.gd";
/// The streaming drain bench's script, relative to `godot-project/`.
const STREAM_SCRIPT: &str = "bench/stream_bench.gd";
/// The GDScript WebSocket server of the ws comparison, relative to `godot-project/`.
const GDSCRIPT_SERVER: &str = "bench/ws_gdscript_server.gd";
/// The headless `AgentRuntime` server of the ws comparison, relative to `godot-project/`.
const NODE_SERVER: &str = "server/serve.gd";
/// The debugger bench's script, relative to `godot-project/`.
const DEBUGGER_SCRIPT: &str = "bench/debugger_bench.gd";
/// AgentNode's bench script, relative to `godot-project/`.
const NODE_SCRIPT: &str = "bench/node_bench.gd";
/// The on-device model's frame bench script, relative to `godot-project/`.
const MODEL_FRAME_SCRIPT: &str = "bench/model_frame_bench.gd";
/// The scripts the release bench project carries.
const BENCH_SCRIPTS: [&str; 7] = [
    DRAIN_SCRIPT,
    NODE_SCRIPT,
    MODEL_FRAME_SCRIPT,
    STREAM_SCRIPT,
    DEBUGGER_SCRIPT,
    GDSCRIPT_SERVER,
    NODE_SERVER,
];
/// The debugger bench's result line.
const DEBUGGER_MARKER: &str = "DEBUGGER_BENCH session=";

/// The Agents debugger's main-thread cost with 1,000 agents on the release extension: runs
/// `godot-project/bench/debugger_bench.gd` headless once on its own (no debugger session) and
/// once with `--remote-debug` to a loopback debug server started here, a stand-in for the editor
/// that reads everything the game sends and counts the `godot_agents:agents` reports. Fails when
/// a run prints no result, the session run sees no session or the server got no report.
pub fn debugger_bench(ctx: &Ctx) -> Result<(), String> {
    let release_lib = build::build_extension(ctx, true)?;
    let godot = godot::find_or_install(ctx)?;
    let project = make_release_project(ctx, &release_lib)?;
    godot_tests::import_project(&godot, &project)?;
    let server = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot bind a debug server: {e}"))?;
    let port = server.local_addr().map_err(|e| e.to_string())?.port();
    let reader = std::thread::spawn(move || -> (u64, usize) {
        use std::io::Read;
        let Ok((mut stream, _)) = server.accept() else {
            return (0, 0);
        };
        let (mut bytes, mut reports, mut buf, mut tail) = (0u64, 0usize, [0u8; 65536], Vec::new());
        let needle = b"godot_agents:agents";
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes += n as u64;
            tail.extend_from_slice(&buf[..n]);
            reports += tail.windows(needle.len()).filter(|w| w == needle).count();
            let keep = tail.len().min(needle.len() - 1);
            tail.drain(..tail.len() - keep);
        }
        (bytes, reports)
    });
    let mut results = Vec::new();
    for session in [false, true] {
        let mut cmd = godot.command();
        cmd.args(["--headless", "--path"]).arg(&project);
        if session {
            cmd.args(["--remote-debug", &format!("tcp://127.0.0.1:{port}")]);
        }
        cmd.args(["--script", &format!("res://{DEBUGGER_SCRIPT}")]);
        println!(
            "xtask: godot --headless --script res://{DEBUGGER_SCRIPT} (release extension{})",
            if session { ", debugger session" } else { "" }
        );
        let out = process::run(&mut cmd, Some(Duration::from_secs(300)), Echo::Stream)?;
        let line = out
            .output
            .lines()
            .find(|l| l.starts_with(DEBUGGER_MARKER))
            .map(str::to_string)
            .ok_or_else(|| format!("the debugger bench printed no result ({})", out.ending()))?;
        if !line.starts_with(&format!("{DEBUGGER_MARKER}{session}")) {
            return Err(format!("expected session={session}: {line}"));
        }
        results.push(line);
    }
    let (bytes, reports) = reader.join().map_err(|_| "the debug server panicked")?;
    if reports == 0 {
        return Err("the debug server got no godot_agents:agents report".into());
    }
    println!("xtask: debugger bench: the debug server read {bytes} bytes, {reports} agent reports");
    for line in results {
        println!("xtask: {line}");
    }
    Ok(())
}

/// Builds the release extension and runs `godot-project/bench/drain_bench.gd` headless in a
/// throw-away project under `<target>/xtask-bench/project` (see [`make_release_project`]) whose `.gdextension` loads the release
/// library for every build of Godot (an editor binary would otherwise pick the debug library).
pub fn godot_drain_bench(ctx: &Ctx) -> Result<(), String> {
    let release_lib = build::build_extension(ctx, true)?;
    let godot = godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let project = make_release_project(ctx, &release_lib)?;
    godot_tests::import_project(&godot, &project)?;
    println!("xtask: godot --headless --script res://{DRAIN_SCRIPT} (release extension)");
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args(["--script", &format!("res://{DRAIN_SCRIPT}")]);
    let out = process::run(&mut cmd, Some(Duration::from_secs(600)), Echo::Stream)?;
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!("the drain bench ended with {}", out.ending()));
    }
    if !out.output.contains("DRAIN_BENCH signal=agent_removed") {
        problems.push("the drain bench printed no result for agent_removed".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the Godot drain bench failed:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// AgentNode's costs on the release extension: `godot-project/bench/node_bench.gd` headless in
/// the release bench project (500 NPC nodes' main-thread cost per frame, then the `ask` round
/// trip on the scripted brain), then [`model_frame_bench`].
pub fn node_bench(ctx: &Ctx) -> Result<(), String> {
    nodes_on_the_scripted_brain(ctx)?;
    model_frame_bench(ctx)
}

/// The phases `model_frame_bench.gd` prints.
const MODEL_FRAME_PHASES: [&str; 4] = ["idle", "copy", "load", "stream"];

/// What an on-device model costs the frames: `godot-project/bench/model_frame_bench.gd`
/// headless in the release bench project with Gemma 3 270M ([`crate::test_model::ensure`]): 8
/// NPCs' frames while the model is copied out of a resource pack, while it loads, and while
/// their answers stream, against the same frames without a model. Fails when a phase prints no
/// result or the script fails.
pub fn model_frame_bench(ctx: &Ctx) -> Result<(), String> {
    let model = crate::test_model::ensure()?;
    let release_lib = build::build_extension(ctx, true)?;
    let godot = godot::find_or_install(ctx)?;
    let project = make_release_project(ctx, &release_lib)?;
    godot_tests::import_project(&godot, &project)?;
    println!("xtask: godot --headless --script res://{MODEL_FRAME_SCRIPT} (release extension)");
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args([
            "--script",
            &format!("res://{MODEL_FRAME_SCRIPT}"),
            "--",
            "--model",
        ])
        .arg(&model);
    let out = process::run(&mut cmd, Some(Duration::from_secs(1200)), Echo::Stream)?;
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!("the model frame bench ended with {}", out.ending()));
    }
    for phase in MODEL_FRAME_PHASES {
        if !out.output.contains(&format!("MODEL_FRAMES phase={phase} ")) {
            problems.push(format!(
                "the model frame bench printed nothing for `{phase}`"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the model frame bench failed:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// The node bench proper (`node_bench.gd`).
fn nodes_on_the_scripted_brain(ctx: &Ctx) -> Result<(), String> {
    let release_lib = build::build_extension(ctx, true)?;
    let godot = godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let project = make_release_project(ctx, &release_lib)?;
    godot_tests::import_project(&godot, &project)?;
    println!("xtask: godot --headless --script res://{NODE_SCRIPT} (release extension)");
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args(["--script", &format!("res://{NODE_SCRIPT}")]);
    let out = process::run(&mut cmd, Some(Duration::from_secs(600)), Echo::Stream)?;
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!("the node bench ended with {}", out.ending()));
    }
    for marker in ["NODE_BENCH frame ", "NODE_BENCH ask ", "NODE_BENCH tool "] {
        if !out.output.contains(marker) {
            problems.push(format!("the node bench printed no `{marker}` line"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the Godot node bench failed:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// What the fake provider answers every request of the streaming bench with: a line of 96
/// characters, streamed in pieces of 4 (24 `agent_speech_delta` events per answer).
pub const STREAM_REPLY: &str = r#"{"kind": "reply", "chunk_chars": 4,
  "text": "Fresh bread at the well this morning, and the smith says the gate is mended before the festival."}"#;

/// The streaming bench's result line, checked in its output.
const STREAM_MARKER: &str = "STREAM_BENCH merge_deltas=";

/// Builds the fake provider (`fakellm`, release) and the release extension, starts the fake on a
/// free loopback port answering every request with [`STREAM_REPLY`], and runs
/// `godot-project/bench/stream_bench.gd` headless in the release bench project with the fake's
/// URL in `AGENTS_FAKE_LLM_URL`: once with one `agent_speech_delta` signal per piece (the
/// default), once with `merge_speech_deltas` (`-- --merge-deltas`). Fails when the script fails
/// (nothing streamed, an agent error), prints no result, or Godot complains.
pub fn godot_stream_bench(ctx: &Ctx) -> Result<(), String> {
    println!("xtask: cargo build --release -p agents-fakellm");
    process::run_checked(
        Command::new(cargo())
            .args(["build", "--release", "-p", "agents-fakellm"])
            .current_dir(&ctx.root),
    )?;
    let release_lib = build::build_extension(ctx, true)?;
    let godot = godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let project = make_release_project(ctx, &release_lib)?;
    godot_tests::import_project(&godot, &project)?;

    let exe = ctx
        .target_dir
        .join("release")
        .join(format!("fakellm{}", std::env::consts::EXE_SUFFIX));
    let mut cmd = Command::new(&exe);
    cmd.args(["--default", STREAM_REPLY]);
    let (fake, url) = crate::model_tests::start_fake(&mut cmd)?;
    let mut problems = Vec::new();
    for merge in [false, true] {
        let extra = if merge { " -- --merge-deltas" } else { "" };
        println!(
            "xtask: AGENTS_FAKE_LLM_URL={url} godot --headless --script res://{STREAM_SCRIPT}{extra} (release extension)"
        );
        let mut cmd = godot.command();
        cmd.args(["--headless", "--path"])
            .arg(&project)
            .args(["--script", &format!("res://{STREAM_SCRIPT}")])
            .env("AGENTS_FAKE_LLM_URL", &url);
        if merge {
            cmd.args(["--", "--merge-deltas"]);
        }
        let out = match process::run(&mut cmd, Some(Duration::from_secs(600)), Echo::Stream) {
            Ok(out) => out,
            Err(e) => {
                problems.push(e);
                break;
            }
        };
        let what = if merge {
            "the streaming bench (merged deltas)"
        } else {
            "the streaming bench"
        };
        problems.extend(
            godot_tests::scan_output(&out.output)
                .into_iter()
                .map(|p| format!("{what}: {p}")),
        );
        if !out.success() {
            problems.push(format!("{what} ended with {}", out.ending()));
        }
        if !out.output.contains(STREAM_MARKER) {
            problems.push(format!("{what} printed no result"));
        }
    }
    let _ = fake.terminate(Duration::from_secs(5));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the Godot streaming bench failed:\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// The WebSocket bench's result marker (its last table), checked in its output.
const WS_DONE_MARKER: &str = "### Request → reply latency";

/// Runs `cargo bench -p agents-server --bench ws` with the two Godot comparison servers: builds
/// the bench and the release extension first, starts `bench/ws_gdscript_server.gd` and
/// `server/serve.gd` headless on free loopback ports in the release bench project, passes their
/// URLs as `AGENTS_BENCH_GDSCRIPT_URL` / `AGENTS_BENCH_NODE_URL`, and stops them afterwards
/// through their stop files (a SIGTERM would end Godot without cleanup).
pub fn ws_bench(ctx: &Ctx) -> Result<(), String> {
    let bench_args = ["bench", "-p", "agents-server", "--bench", "ws"];
    println!("xtask: cargo bench -p agents-server --bench ws --no-run");
    let status = Command::new(cargo())
        .args(bench_args)
        .arg("--no-run")
        .current_dir(&ctx.root)
        .status()
        .map_err(|e| format!("cannot run cargo bench: {e}"))?;
    if !status.success() {
        return Err(format!("building the ws bench failed ({status})"));
    }
    let release_lib = build::build_extension(ctx, true)?;
    let godot = godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let project = make_release_project(ctx, &release_lib)?;
    godot_tests::import_project(&godot, &project)?;

    let work = ctx.target_dir.join("xtask-bench").join("ws");
    if work.exists() {
        fs::remove_dir_all(&work).map_err(|e| format!("cannot clear {}: {e}", work.display()))?;
    }
    fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let gd_stop = work.join("gdscript.stop");
    let node_stop = work.join("node.stop");

    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args(["--script", &format!("res://{GDSCRIPT_SERVER}"), "--"])
        .args(["--port", "0", "--stop-file"])
        .arg(&gd_stop);
    let gdscript = GodotServer::start(&mut cmd, "AGENTS_GDSCRIPT_SERVER_URL", gd_stop)?;
    let gd_default_stop = work.join("gdscript-default.stop");
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args(["--script", &format!("res://{GDSCRIPT_SERVER}"), "--"])
        .args(["--port", "0", "--headless-sleep", "--stop-file"])
        .arg(&gd_default_stop);
    let gdscript_default =
        match GodotServer::start(&mut cmd, "AGENTS_GDSCRIPT_SERVER_URL", gd_default_stop) {
            Ok(server) => server,
            Err(e) => {
                let _ = gdscript.stop();
                return Err(e);
            }
        };
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args(["--script", &format!("res://{NODE_SERVER}"), "--"])
        .args(["--port", "0", "--db"])
        .arg(work.join("node.db"))
        .arg("--stop-file")
        .arg(&node_stop);
    let node = match GodotServer::start(&mut cmd, "AGENTS_NODE_SERVER_URL", node_stop) {
        Ok(node) => node,
        Err(e) => {
            let _ = gdscript.stop();
            let _ = gdscript_default.stop();
            return Err(e);
        }
    };
    println!(
        "xtask: AGENTS_BENCH_GDSCRIPT_URL={} AGENTS_BENCH_GDSCRIPT_DEFAULT_URL={} AGENTS_BENCH_NODE_URL={} cargo bench -p agents-server --bench ws",
        gdscript.url, gdscript_default.url, node.url
    );
    let bench = process::run(
        Command::new(cargo())
            .args(bench_args)
            .current_dir(&ctx.root)
            .env("AGENTS_BENCH_GDSCRIPT_URL", &gdscript.url)
            .env("AGENTS_BENCH_GDSCRIPT_DEFAULT_URL", &gdscript_default.url)
            .env("AGENTS_BENCH_NODE_URL", &node.url),
        Some(Duration::from_secs(600)),
        Echo::Stream,
    );
    let mut problems = Vec::new();
    for (name, server) in [
        ("GDScript server", gdscript),
        ("GDScript server (default frame sleep)", gdscript_default),
        ("node server", node),
    ] {
        if let Err(e) = server.stop() {
            problems.push(format!("the {name}: {e}"));
        }
    }
    match bench {
        Ok(out) if out.success() && out.output.contains(WS_DONE_MARKER) => {}
        Ok(out) => problems.push(format!("the ws bench ended with {}", out.ending())),
        Err(e) => problems.push(e),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("the ws bench failed:\n  {}", problems.join("\n  ")))
    }
}

/// A headless Godot server of the ws comparison.
struct GodotServer {
    process: Background,
    spawned: Instant,
    url: String,
    stop_file: PathBuf,
}

impl GodotServer {
    /// Starts `cmd` and waits for the line `MARKER ws://…`.
    fn start(cmd: &mut Command, marker: &str, stop_file: PathBuf) -> Result<GodotServer, String> {
        let spawned = Instant::now();
        let mut process = Background::spawn(cmd, Echo::Quiet)?;
        let line = process.wait_for_line(marker, Duration::from_secs(120))?;
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("ws://"))
            .ok_or_else(|| format!("no ws:// URL in {line:?}"))?
            .to_string();
        Ok(GodotServer {
            process,
            spawned,
            url,
            stop_file,
        })
    }

    /// Creates the stop file and waits up to 30 s for a clean exit; Godot's complaints (script
    /// errors, leaks) are errors.
    fn stop(self) -> Result<(), String> {
        fs::write(&self.stop_file, b"stop")
            .map_err(|e| format!("cannot write {}: {e}", self.stop_file.display()))?;
        let out = self
            .process
            .wait(Some(self.spawned.elapsed() + Duration::from_secs(30)));
        for line in out.output.lines().filter(|l| l.contains("_STATS ")) {
            println!("xtask: {}", line.trim());
        }
        let mut problems = godot_tests::scan_output(&out.output);
        if !out.success() {
            problems.push(format!("it ended with {}", out.ending()));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{}; its output:\n{}",
                problems.join("; "),
                out.output
            ))
        }
    }
}

/// The `.gdextension` text of the bench project: one library for the platform, whatever the
/// build of Godot.
pub fn release_gdextension(lib_file: &str) -> String {
    format!(
        "[configuration]\nentry_symbol = \"gdext_rust_init\"\ncompatibility_minimum = \"4.5\"\n\n\
         [libraries]\n{}.{} = \"res://addons/godot_agents/bin/{lib_file}\"\n",
        build::godot_os(std::env::consts::OS),
        build::godot_arch(std::env::consts::ARCH),
    )
}

/// A throw-away Godot project under `<target>/xtask-bench/project` with the bench scripts
/// ([`BENCH_SCRIPTS`]) and the release extension.
fn make_release_project(ctx: &Ctx, release_lib: &Path) -> Result<PathBuf, String> {
    let dir = ctx.target_dir.join("xtask-bench").join("project");
    let write = |path: &Path, bytes: &[u8]| -> Result<(), String> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    // Start clean except for Godot's import cache (the extension list is rewritten below).
    for stale in ["addons", "bench", "server"] {
        let path = dir.join(stale);
        if path.exists() {
            fs::remove_dir_all(&path)
                .map_err(|e| format!("cannot clear {}: {e}", path.display()))?;
        }
    }
    let _ = fs::remove_file(dir.join(".godot").join("extension_list.cfg"));
    write(
        &dir.join("project.godot"),
        b"config_version=5\n\n[application]\n\nconfig/name=\"Godot Agents benchmarks\"\nconfig/features=PackedStringArray(\"4.5\")\n",
    )?;
    for script in BENCH_SCRIPTS {
        let text = fs::read(ctx.project_dir().join(script))
            .map_err(|e| format!("cannot read {script}: {e}"))?;
        write(&dir.join(script), &text)?;
    }
    let lib_name = release_lib
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("the release library has no file name")?
        .to_string();
    let lib =
        fs::read(release_lib).map_err(|e| format!("cannot read {}: {e}", release_lib.display()))?;
    let addon = dir.join("addons").join("godot_agents");
    write(&addon.join("bin").join(&lib_name), &lib)?;
    write(
        &addon.join("godot_agents.gdextension"),
        release_gdextension(&lib_name).as_bytes(),
    )?;
    Ok(dir)
}

/// Makes `import chess` work for the comparison, if pip can install it.
fn ensure_python_chess() {
    let has = |py: &str| {
        Command::new(py)
            .args(["-c", "import chess"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if has("python3") {
        return;
    }
    println!("xtask: installing python-chess for the comparison (python3 -m pip install chess)");
    let installed = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "chess"])
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        println!("xtask: could not install python-chess; the comparison will be skipped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_reply_is_a_streamed_line() {
        let reply: serde_json::Value = serde_json::from_str(STREAM_REPLY).unwrap();
        assert_eq!(reply["kind"], "reply");
        assert_eq!(reply["chunk_chars"], 4);
        assert!(reply["text"].as_str().unwrap().chars().count() > 80);
    }

    #[test]
    fn release_gdextension_names_one_library_for_any_build() {
        let text = release_gdextension("libgodot_agents.linux.release.x86_64.so");
        assert!(text.contains("entry_symbol = \"gdext_rust_init\""));
        let line = text
            .lines()
            .find(|l| l.contains("res://addons/godot_agents/bin/"))
            .unwrap();
        let key = line.split(" = ").next().unwrap();
        assert!(!key.contains("debug") && !key.contains("release"), "{line}");
        assert!(
            line.ends_with("libgodot_agents.linux.release.x86_64.so\""),
            "{line}"
        );
    }
}
