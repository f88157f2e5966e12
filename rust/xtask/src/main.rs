//! Project automation: `cargo xtask <command>` (the alias lives in `.cargo/config.toml`).
//!
//! - `godot [--install [--dir DIR]]` — find a Godot ≥ 4.5 (installing one on Debian-family Linux
//!   as root when none is found) and print its command line and version.
//! - `build [--release]` — build the GDExtension and copy it into `addons/godot_agents/bin/`.
//! - `demo [--release] [--timeout SECS] [--fake-model]` — build, provide Godot, import
//!   `godot-project` and run its main scene (the games) and then the agent town
//!   (`demo/town.tscn`) headless, streaming what they print. `--fake-model`: only the town, its
//!   villagers thinking with the `openai` brain against the fake provider (see [`demo`]).
//! - `test [--skip-cargo | --only-godot] [--only-cargo] [--suite NAME]… [--timeout SECS]` —
//!   `cargo test --workspace` and a short `killtest`, then the headless GDScript suites of `godot-project/tests/`, then
//!   Godot as a WebSocket client (`godot-project/tests/ws_client/`) of `agents-server serve` and of
//!   an `AgentRuntime` serving in another Godot process, the arena's and the report card's pages
//!   in headless Chromium (suite `report_page`, which alone needs no Godot), then the package smoke test
//!   (suite `package`); the last line printed is `N passed, N failed`.
//! - `bench [--only-godot | --only-stream | --only-ws | --only-debugger | --only-nodes |
//!   --only-local | --only-arena [--profile NAME]… [--game NAME]…]` — the release-build
//!   benchmarks recorded
//!   in `docs/benchmarks.md` (`--only-godot`: only the Godot drain bench; `--only-stream`: only
//!   the Godot drain with 100 agents streaming from the fake provider; `--only-ws`: only the
//!   WebSocket server bench with its Godot comparison servers; `--only-local`: the on-device
//!   model's benches on Gemma 3 270M; `--only-arena`: the arena on the local models, see
//!   [`arena_bench`]).
//! - `killtest [--rounds N] [--seed S] [--clients N]` — kills a real `agents-server serve` with
//!   SIGKILL mid-burst, round after round, and proves that every acknowledged write survives and
//!   no id is handed out twice (see [`killtest`]); `test` runs it with a few rounds.
//! - `fuzz [--seconds N] [--target NAME]…` — builds the coverage-guided fuzz targets of `fuzz/`
//!   (libFuzzer, SanitizerCoverage on the stable toolchain) and runs each for N seconds (default
//!   60); a crash fails it (see [`fuzz`]); `test` runs every target briefly.
//! - `package [--out DIR] [--libs DIR] [--smoke]` — the release zips in `target/package/`: the
//!   addon in the Asset Library's layout and the standalone demo project, with this machine's
//!   stripped release library (`--libs`: prebuilt libraries, e.g. every platform's from the
//!   release workflow); `--smoke` unzips and runs them headless (see [`package`]).
//! - `selftest` — proves the Godot test runner fails on every failure mode it must catch.
//! - `setup` — installs what building the workspace needs beyond Rust (cmake and libclang, for
//!   llama.cpp), from Debian's packages when missing; `test`, `build` and `bench` do it too.
//! - `protocol-schemas [--check]` — writes the WebSocket protocol's JSON Schemas to
//!   `docs/protocol/` (`--check`: fails when the committed files are stale).
//!
//! Modules: [`godot`] (finding / installing Godot), [`build`] (the extension), [`godot_tests`]
//! (headless suites, output scanning, self-test), [`cargo_tests`] (parsing `cargo test`),
//! [`process`] (running children with a timeout while streaming their output),
//! [`editor_debugger`] (the Agents debugger tab in a real editor under Xvfb, suite
//! `editor_debugger`),
//! [`protocol_schemas`] (the published protocol schemas), [`ws_client_tests`] (Godot as a
//! WebSocket client of both servers), [`killtest`] (the kill harness), [`package`] (the release
//! zips and their smoke test), [`report_page`] and [`card_page`] (the arena's and the report
//! card's pages in a browser, suite `report_page`).

mod arena_bench;
mod bench;
mod browser;
mod build;
mod card_page;
mod cargo_tests;
mod demo;
#[cfg(test)]
mod docs_checks;
mod editor_debugger;
mod export_tests;
mod fuzz;
mod godot;
mod godot_tests;
mod killtest;
mod model_tests;
mod package;
mod packages;
mod phases;
mod process;
mod protocol_schemas;
mod report_page;
mod screenshots;
mod test_model;
mod ws_client_tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Paths every command needs.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The workspace root (where `Cargo.toml`, `addons/` and `godot-project/` live).
    pub root: PathBuf,
    /// Cargo's target directory.
    pub target_dir: PathBuf,
}

impl Ctx {
    fn discover() -> Result<Ctx, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .ok_or("cannot locate the workspace root")?
            .to_path_buf();
        let target_dir = cargo_target_dir(&root).unwrap_or_else(|| root.join("target"));
        Ok(Ctx { root, target_dir })
    }

    /// The Godot project used by `demo` and `test`.
    pub fn project_dir(&self) -> PathBuf {
        self.root.join("godot-project")
    }

    /// The addon folder (`addons/godot_agents`).
    pub fn addon_dir(&self) -> PathBuf {
        self.root.join("addons").join("godot_agents")
    }
}

/// Asks cargo for the target directory (honours `CARGO_TARGET_DIR` and config files).
fn cargo_target_dir(root: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new(cargo())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    meta.get("target_directory")?.as_str().map(PathBuf::from)
}

/// The cargo executable that runs us (`$CARGO`), or `cargo`.
pub fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  godot [--install [--dir DIR]]   find (or install) Godot >= 4.5 and print its path and version
  build [--release]               build the GDExtension into addons/godot_agents/bin/
  demo [--release] [--timeout S]  build, import and run the games demo and the agent town headless
       --fake-model                  only the town, its villagers thinking with a model: the fake
                                     provider on loopback (AGENTS_DEMO_* variables, docs/brains.md)
  test [options]                  cargo test --workspace + killtest (3 rounds) + fuzz (10 s per
                                  target) + the headless Godot
                                  suites + Godot as a WebSocket client of agents-server serve and
                                  of a serving Godot
       --skip-cargo | --only-godot   skip cargo test and killtest
       --only-cargo                  skip the Godot suites
       --suite NAME                  run only this Godot suite (repeatable; test_convert or test_convert.gd;
                                     test_remote_server: only the WebSocket client suite;
                                     package: only the release zips' smoke test;
                                     report_page: only the arena's and the report card's
                                     pages in headless Chromium, without Godot)
       --timeout S                   time limit of one Godot run (default 300)
       --release                     test a release build of the extension
  bench [--only-godot | --only-stream | --only-ws | --only-debugger | --only-nodes | --only-local
         | --only-arena]
                                  release-build benchmarks (engines, tool calls, python-chess,
                                  Godot event drain, WebSocket server vs GDScript; --only-godot:
                                  just the Godot drain bench; --only-stream: just the Godot drain
                                  with 100 agents streaming from the fake model; --only-ws: just
                                  the WebSocket bench; --only-debugger: the Agents debugger's
                                  frame cost with 1,000 agents, with and without a session;
                                  --only-nodes: 500 AgentNodes' frame cost, the ask round trip, and
                                  8 NPCs' frames while a model is copied, loads and streams;
                                  --only-local: the on-device model on Gemma 3 270M: tokens/s
                                  against llama.cpp's loop, agents decided together, the prompt
                                  cache, memory, answers valid without repair);
                                  --only-arena: the arena on the local models (scripted, Gemma 3
                                  270M, SmolLM2-135M-Instruct against the engines on every board
                                  game and blackjack, and the engines' round robins; hours on 2
                                  cores), into target/arena-bench/
       --profile NAME                the arena bench: only this brain (scripted, smollm2-135m,
                                     gemma-270m, engines; repeatable)
       --game NAME                   the arena bench: only this game (repeatable)
       --resume                      the arena bench: keep the runs an earlier one finished
  killtest [options]              SIGKILL agents-server serve mid-burst, restart it, and check that
                                  every acknowledged agent, task, completion and message survived
                                  and no id was handed out twice
       --rounds N                    kills (default 10; e.g. 200 for a long run)
       --seed S                      replay a run (the seed is printed first)
       --clients N                   concurrent clients per round (default 4)
  fuzz [options]                  build the coverage-guided fuzz targets (fuzz/) and run each
                                  for a bounded time; a crash fails (its input is named)
       --seconds N                   seconds per target (default 60)
       --target NAME                 only this target (repeatable): protocol_request,
                                     game_states, agent_config, mcp_line, brain_policy
  package [options]               build the release library and write the zips to target/package/:
                                  godot-agents-<version>.zip (the addon, Asset Library layout) and
                                  godot-agents-demo-<version>.zip (the demo project)
       --out DIR                     write the zips to DIR
       --libs DIR                    ship the prebuilt libraries found under DIR (named as the
                                     .gdextension lists them) instead of building this machine's
       --smoke                       then unzip both into fresh projects and run them headless
  selftest                        prove the Godot test runner fails on each failure mode
  setup                           install what building needs beyond Rust (cmake, libclang)
  protocol-schemas [--check]      write the protocol's JSON Schemas to docs/protocol/
                                  (--check: fail when the committed files are stale)
";

/// Command-line options shared by the subcommands.
#[derive(Debug, Default)]
struct Opts {
    release: bool,
    skip_cargo: bool,
    only_cargo: bool,
    install: bool,
    dir: Option<PathBuf>,
    timeout: Option<Duration>,
    suites: Vec<String>,
    check: bool,
    /// `bench --only-ws`.
    only_ws: bool,
    /// `bench --only-stream`.
    only_stream: bool,
    /// `bench --only-debugger`.
    only_debugger: bool,
    /// `bench --only-nodes`.
    only_nodes: bool,
    /// `bench --only-local`.
    only_local: bool,
    /// `bench --only-arena`.
    only_arena: bool,
    /// `bench --profile NAME`, `--game NAME`: which runs of the arena bench.
    arena: arena_bench::Filter,
    /// `demo --fake-model`.
    fake_model: bool,
}

fn parse_opts(args: &[String]) -> Result<Opts, String> {
    let mut opts = Opts::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--release" => opts.release = true,
            "--skip-cargo" | "--only-godot" => opts.skip_cargo = true,
            "--only-cargo" => opts.only_cargo = true,
            "--install" => opts.install = true,
            "--check" => opts.check = true,
            "--only-ws" => opts.only_ws = true,
            "--only-stream" => opts.only_stream = true,
            "--only-debugger" => opts.only_debugger = true,
            "--only-nodes" => opts.only_nodes = true,
            "--only-local" => opts.only_local = true,
            "--only-arena" => opts.only_arena = true,
            "--profile" => opts.arena.profiles.push(value("--profile")?),
            "--game" => opts.arena.games.push(value("--game")?),
            "--resume" => opts.arena.resume = true,
            "--fake-model" => opts.fake_model = true,
            "--dir" => opts.dir = Some(PathBuf::from(value("--dir")?)),
            "--suite" => opts.suites.push(value("--suite")?),
            "--timeout" => {
                let v = value("--timeout")?;
                let secs: u64 = v
                    .parse()
                    .map_err(|_| format!("--timeout wants whole seconds, got {v:?}"))?;
                opts.timeout = Some(Duration::from_secs(secs.max(1)));
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if opts.skip_cargo && opts.only_cargo {
        return Err("--skip-cargo/--only-godot and --only-cargo exclude each other".into());
    }
    if [
        opts.skip_cargo,
        opts.only_ws,
        opts.only_stream,
        opts.only_debugger,
        opts.only_nodes,
        opts.only_local,
        opts.only_arena,
    ]
    .iter()
    .filter(|&&on| on)
    .count()
        > 1
    {
        return Err(
            "--only-godot, --only-stream, --only-ws, --only-debugger, --only-nodes, --only-local \
             and --only-arena exclude each other"
                .into(),
        );
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    if matches!(command.as_str(), "-h" | "--help" | "help") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if command == "killtest" {
        return cmd_killtest(rest);
    }
    if command == "fuzz" {
        return cmd_fuzz(rest);
    }
    if command == "package" {
        return cmd_package(rest);
    }
    let opts = match parse_opts(rest) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let ctx = match Ctx::discover() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match command.as_str() {
        "godot" => cmd_godot(&ctx, &opts),
        "build" => build::build_extension(&ctx, opts.release).map(|path| {
            println!("xtask: extension ready at {}", path.display());
        }),
        "demo" => cmd_demo(&ctx, &opts),
        "test" => cmd_test(&ctx, &opts),
        "setup" => packages::ensure_build_tools(),
        "bench" => bench::run(&ctx, bench_selection(&opts), &opts.arena),
        "selftest" => godot_tests::selftest(&ctx),
        "protocol-schemas" => protocol_schemas::run(&ctx, opts.check),
        other => Err(format!("unknown command {other:?}\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("xtask: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// `killtest`, with its own options; the summary line is the last line printed.
fn cmd_killtest(args: &[String]) -> ExitCode {
    let opts = match killtest::parse_options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = Ctx::discover().and_then(|ctx| killtest::run(&ctx, &opts));
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("xtask: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

/// `fuzz`, with its own options.
fn cmd_fuzz(args: &[String]) -> ExitCode {
    let opts = match fuzz::parse_options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match Ctx::discover().and_then(|ctx| fuzz::run(&ctx, &opts)) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `package`, with its own options.
fn cmd_package(args: &[String]) -> ExitCode {
    let opts = match package::parse_options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("xtask: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match Ctx::discover().and_then(|ctx| package::run(&ctx, &opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `bench`'s selection from its flags.
fn bench_selection(opts: &Opts) -> bench::Selection {
    if opts.only_ws {
        bench::Selection::OnlyWs
    } else if opts.only_stream {
        bench::Selection::OnlyStream
    } else if opts.only_debugger {
        bench::Selection::OnlyDebugger
    } else if opts.only_nodes {
        bench::Selection::OnlyNodes
    } else if opts.only_local {
        bench::Selection::OnlyLocal
    } else if opts.only_arena {
        bench::Selection::OnlyArena
    } else if opts.skip_cargo {
        bench::Selection::OnlyGodot
    } else {
        bench::Selection::All
    }
}

fn cmd_godot(ctx: &Ctx, opts: &Opts) -> Result<(), String> {
    let godot = if opts.install {
        let dir = opts
            .dir
            .clone()
            .unwrap_or_else(|| godot::cached_rootfs_dir(ctx));
        godot::install_rootfs(&dir)?
    } else {
        godot::find_or_install(ctx)?
    };
    println!("{}", godot.describe());
    Ok(())
}

fn cmd_demo(ctx: &Ctx, opts: &Opts) -> Result<(), String> {
    build::build_extension(ctx, opts.release)?;
    let godot = godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let project = ctx.project_dir();
    godot_tests::import_project(&godot, &project)?;
    let timeout = opts.timeout.unwrap_or(Duration::from_secs(300));
    if opts.fake_model {
        return demo::run_fake_model_town(ctx, &godot, &project, TOWN_SCENE, timeout);
    }
    godot_tests::run_demo(&godot, &project, None, timeout)?;
    godot_tests::run_demo(&godot, &project, Some(TOWN_SCENE), timeout)?;
    godot_tests::run_demo(&godot, &project, Some(APP_SCENE), timeout)?;
    godot_tests::run_demo(&godot, &project, Some(DUNGEON_SCENE), timeout)
}

/// The agent town, run by `demo` after the main scene (the games).
const TOWN_SCENE: &str = "res://demo/town.tscn";

/// Tic-tac-toe through the app bridge in the three control modes, run by `demo` after the town.
const APP_SCENE: &str = "res://demo/app_chat.tscn";

/// A tabletop campaign with a scripted game master (every GM tool, the map drawn), run by `demo`
/// last.
const DUNGEON_SCENE: &str = "res://demo/dungeon.tscn";

fn cmd_test(ctx: &Ctx, opts: &Opts) -> Result<(), String> {
    let mut passed = 0u64;
    let mut failed = 0u64;
    let mut problems: Vec<String> = Vec::new();
    let mut phases = phases::Phases::default();

    phases.time("build tools", packages::ensure_build_tools)?;
    if !opts.skip_cargo {
        phases.time("PostgreSQL and NATS", || {
            packages::ensure_postgres()?;
            packages::ensure_nats()
        })?;
        let r = phases.time("cargo test --workspace", || {
            cargo_tests::run_workspace_tests(ctx)
        })?;
        passed += r.passed;
        failed += r.failed;
        problems.extend(r.problems);
        let opts = killtest::Options {
            rounds: killtest::TEST_ROUNDS,
            ..killtest::Options::default()
        };
        println!("xtask: cargo xtask killtest --rounds {}", opts.rounds);
        match phases.time("killtest", || killtest::run(ctx, &opts)) {
            Ok(_) => passed += 1,
            Err(e) => {
                failed += 1;
                problems.push(if e.is_empty() {
                    "killtest failed (see its report above)".into()
                } else {
                    format!("killtest: {e}")
                });
            }
        }
        let opts = fuzz::Options {
            seconds: fuzz::TEST_SECONDS,
            ..fuzz::Options::default()
        };
        println!("xtask: cargo xtask fuzz --seconds {}", opts.seconds);
        match phases.time("fuzz", || fuzz::run(ctx, &opts)) {
            Ok(results) => passed += results.len() as u64,
            Err(e) => {
                failed += 1;
                problems.push(format!("fuzz: {e}"));
            }
        }
    }

    if !opts.only_cargo {
        let r = if report_page_only(opts) {
            Ok(phases.time("report page", || {
                report_page::run(ctx, opts.timeout.unwrap_or(Duration::from_secs(300)))
            }))
        } else {
            run_godot_suites(ctx, opts, &mut phases)
        };
        match r {
            Ok(run) => {
                passed += run.passed;
                failed += run.failed;
                problems.extend(run.problems);
            }
            Err(e) => {
                failed += 1;
                problems.push(e);
            }
        }
    }

    println!();
    print!("{}", phases.table());
    if problems.is_empty() {
        println!("xtask: all green");
    } else {
        println!("xtask: problems:");
        for p in &problems {
            println!("  - {p}");
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 && problems.is_empty() {
        Ok(())
    } else {
        // The summary line must stay the last line printed: fail without another message.
        Err(String::new())
    }
}

/// Whether `--suite` names only the report page, which needs a browser, not Godot: then nothing
/// is built for Godot.
fn report_page_only(opts: &Opts) -> bool {
    !opts.suites.is_empty() && opts.suites.iter().all(|s| report_page::is_suite(s))
}

/// The normal suites (`tests/`), then the WebSocket client suites (`tests/ws_client/`) against
/// both servers, then the model suites (`tests/model/`) against the fake provider, the
/// screenshots, the editor's debugger, the arena's report page in a browser (`report_page`),
/// and last the release zips' smoke test (`package`); `--suite` names pick from any of them
/// (none: everything).
fn run_godot_suites(
    ctx: &Ctx,
    opts: &Opts,
    phases: &mut phases::Phases,
) -> Result<godot_tests::SuiteRun, String> {
    phases.time("build the extension", || {
        build::build_extension(ctx, opts.release)
    })?;
    let godot = phases.time("find or install Godot", || godot::find_or_install(ctx))?;
    println!("xtask: using {}", godot.describe());
    let project = ctx.project_dir();
    phases.time("import the Godot project", || {
        godot_tests::import_project(&godot, &project)
    })?;
    let timeout = opts.timeout.unwrap_or(Duration::from_secs(300));
    let (model, others): (Vec<String>, Vec<String>) = opts.suites.iter().cloned().partition(|s| {
        model_tests::is_model_suite(ctx, s) || export_tests::is_export_suite(ctx, s)
    });
    let (shots, others): (Vec<String>, Vec<String>) = others
        .into_iter()
        .partition(|s| screenshots::is_screenshot_suite(s));
    let (packaged, others): (Vec<String>, Vec<String>) = others
        .into_iter()
        .partition(|s| package::is_package_suite(s));
    let (editor, others): (Vec<String>, Vec<String>) = others
        .into_iter()
        .partition(|s| editor_debugger::is_suite(s));
    let (page, others): (Vec<String>, Vec<String>) =
        others.into_iter().partition(|s| report_page::is_suite(s));
    let (client, normal): (Vec<String>, Vec<String>) = others
        .into_iter()
        .partition(|s| ws_client_tests::is_client_suite(s));
    let all = opts.suites.is_empty();
    let mut run = godot_tests::SuiteRun::default();
    let mut add = |r: godot_tests::SuiteRun| {
        run.passed += r.passed;
        run.failed += r.failed;
        run.problems.extend(r.problems);
    };
    if all || !normal.is_empty() {
        add(phases.time("Godot suites", || {
            godot_tests::run_suites(&godot, &project, &normal, timeout)
        }));
    }
    if all || !client.is_empty() {
        add(phases.time("WebSocket client suites", || {
            ws_client_tests::run(ctx, &godot, &client, timeout)
        }));
    }
    if all || !model.is_empty() {
        add(phases.time("model suites", || {
            model_tests::run(ctx, &godot, &model, timeout)
        }));
    }
    if all || !shots.is_empty() {
        add(phases.time("screenshots", || {
            screenshots::run(ctx, &godot, &shots, timeout)
        }));
    }
    if all || !editor.is_empty() {
        add(phases.time("editor debugger", || {
            editor_debugger::run(ctx, &godot, timeout)
        }));
    }
    if all || !page.is_empty() {
        add(phases.time("report page", || report_page::run(ctx, timeout)));
    }
    if all || !packaged.is_empty() {
        add(phases.time("release package", || {
            package::run_suite(ctx, &godot, timeout)
        }));
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn options_parse() {
        let o = parse_opts(&s(&[
            "--only-godot",
            "--suite",
            "test_convert",
            "--timeout",
            "30",
        ]))
        .unwrap();
        assert!(o.skip_cargo);
        assert_eq!(o.suites, vec!["test_convert"]);
        assert_eq!(o.timeout, Some(Duration::from_secs(30)));
        assert!(parse_opts(&s(&["--timeout"])).is_err());
        assert!(parse_opts(&s(&["--timeout", "x"])).is_err());
        assert!(parse_opts(&s(&["--bogus"])).is_err());
        assert!(parse_opts(&s(&["--skip-cargo", "--only-cargo"])).is_err());
        assert!(parse_opts(&s(&["--check"])).unwrap().check);
        assert!(!parse_opts(&[]).unwrap().check);
        let ws = parse_opts(&s(&["--only-ws"])).unwrap();
        assert_eq!(bench_selection(&ws), bench::Selection::OnlyWs);
        let godot = parse_opts(&s(&["--only-godot"])).unwrap();
        assert_eq!(bench_selection(&godot), bench::Selection::OnlyGodot);
        assert_eq!(bench_selection(&Opts::default()), bench::Selection::All);
        assert!(parse_opts(&s(&["--only-ws", "--only-godot"])).is_err());
        let stream = parse_opts(&s(&["--only-stream"])).unwrap();
        assert_eq!(bench_selection(&stream), bench::Selection::OnlyStream);
        assert!(parse_opts(&s(&["--only-stream", "--only-ws"])).is_err());
        assert!(parse_opts(&s(&["--only-stream", "--only-godot"])).is_err());
        let page = parse_opts(&s(&["--only-godot", "--suite", "report_page"])).unwrap();
        assert!(report_page_only(&page));
        let more = parse_opts(&s(&["--suite", "report_page", "--suite", "test_convert"])).unwrap();
        assert!(!report_page_only(&more) && !report_page_only(&Opts::default()));
        let arena = parse_opts(&s(&[
            "--only-arena",
            "--profile",
            "gemma-270m",
            "--game",
            "chess",
            "--game",
            "mancala",
            "--resume",
        ]))
        .unwrap();
        assert_eq!(bench_selection(&arena), bench::Selection::OnlyArena);
        assert_eq!(arena.arena.profiles, vec!["gemma-270m"]);
        assert_eq!(arena.arena.games, vec!["chess", "mancala"]);
        assert!(arena.arena.resume);
        assert!(parse_opts(&s(&["--only-arena", "--only-local"])).is_err());
        assert!(parse_opts(&s(&["--profile"])).is_err());
    }
}
