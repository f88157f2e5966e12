//! Model brains in Godot: the GDScript suites of `godot-project/tests/model/` run an
//! `AgentRuntime` whose agents think with the `openai` brain against the fake provider — the
//! `fakellm` binary, started here on a free loopback port with the replies of
//! [`REPLIES`] queued. The suites learn its URL from `AGENTS_FAKE_LLM_URL`, and the path of a
//! command-line model for the `cli` brain (Python, run with `python3`) from
//! `AGENTS_CLI_MODEL_SCRIPT`, and a tiny random-weight model file for the `local` brain from
//! `AGENTS_TINY_MODEL` (served by the fake too, at `/_fake/files/tiny.gguf`, with its SHA-256
//! in `AGENTS_TINY_MODEL_SHA256`), and Gemma 3 270M from `AGENTS_TEST_MODEL` (fetched first, see
//! [`crate::test_model`]). Then the demo project is exported with Gemma inside its pack, and the suites of `tests/export/` run from the export ([`crate::export_tests`]).

use std::fs;
use std::process::Command;
use std::time::Duration;

use crate::godot::Godot;
use crate::godot_tests::{self, RunnerArgs, SuiteRun};
use crate::process::{self, Background, Echo};
use crate::{Ctx, cargo};

/// The runner folder holding the model suites.
pub const MODEL_SUITES_DIR: &str = "res://tests/model";

/// The command-line model the `cli` brain's suite runs (the JSON dialect; passed as
/// `AGENTS_CLI_MODEL_SCRIPT`).
const CLI_MODEL_SCRIPT: &str = "rust/core/tests/fixtures/cli_model.py";

/// What `fakellm` prints once it listens.
const MARKER: &str = "listening http://";

/// The answers the fake gives first, in order (then its default line).
pub const REPLIES: &str = r#"[
  {"kind": "reply", "text": "Fresh bread at the well!", "chunk_chars": 3,
   "tool_calls": [{"name": "move", "arguments": {"x": 12, "y": 14}}]}
]"#;

fn failure(problem: String) -> SuiteRun {
    SuiteRun {
        passed: 0,
        failed: 1,
        problems: vec![format!("[model brains] {problem}")],
    }
}

/// Whether `name` (`test_model_brain` or `test_model_brain.gd`) is a suite of
/// [`MODEL_SUITES_DIR`].
pub fn is_model_suite(ctx: &Ctx, name: &str) -> bool {
    let stem = name.strip_suffix(".gd").unwrap_or(name);
    ctx.project_dir()
        .join("tests/model")
        .join(format!("{stem}.gd"))
        .is_file()
}

/// Starts the `fakellm` binary of `cmd` (its own arguments given) on a free loopback port and
/// waits for its `listening http://…` line; returns it running, and its URL.
pub fn start_fake(cmd: &mut Command) -> Result<(Background, String), String> {
    cmd.args(["--listen", "127.0.0.1:0"]);
    let mut fake = Background::spawn(cmd, Echo::Quiet)
        .map_err(|e| format!("cannot start the fake provider: {e}"))?;
    match fake.wait_for_line(MARKER, Duration::from_secs(60)) {
        Ok(line) => {
            let url = line
                .split_once("listening ")
                .map(|(_, url)| url.trim().to_string())
                .unwrap_or_default();
            Ok((fake, url))
        }
        Err(e) => {
            let _ = fake.terminate(Duration::from_secs(5));
            Err(format!("the fake provider did not start: {e}"))
        }
    }
}

/// Builds and starts the fake provider, runs the model suites (`suites`, or all of them when
/// empty) against it, stops it.
pub fn run(ctx: &Ctx, godot: &Godot, suites: &[String], timeout: Duration) -> SuiteRun {
    println!("xtask: cargo build -p agents-fakellm");
    if let Err(e) = process::run_checked(
        Command::new(cargo())
            .args(["build", "-p", "agents-fakellm"])
            .current_dir(&ctx.root),
    ) {
        return failure(e);
    }
    let exe = ctx
        .target_dir
        .join("debug")
        .join(format!("fakellm{}", std::env::consts::EXE_SUFFIX));
    let replies = ctx.target_dir.join("xtask-model-replies.json");
    if let Err(e) = fs::write(&replies, REPLIES) {
        return failure(format!("cannot write {}: {e}", replies.display()));
    }
    // A tiny random-weight model for the `local` brain's suite, also served for download.
    let files = ctx.target_dir.join("xtask-model-files");
    let tiny = files.join("tiny.gguf");
    if let Err(e) =
        fs::create_dir_all(&files).and_then(|()| agents_testkit::gguf::write_tiny_model(&tiny))
    {
        return failure(format!("cannot write {}: {e}", tiny.display()));
    }
    let tiny_sha256 = match crate::test_model::sha256(&tiny) {
        Ok(hash) => hash,
        Err(e) => return failure(e),
    };
    // The real model, for agents deciding with it in Godot.
    let gemma = match crate::test_model::ensure() {
        Ok(path) => path,
        Err(e) => return failure(e),
    };
    let mut cmd = Command::new(&exe);
    cmd.arg("--replies")
        .arg(&replies)
        .arg("--files")
        .arg(&files);
    let (fake, url) = match start_fake(&mut cmd) {
        Ok(started) => started,
        Err(e) => return failure(e),
    };
    println!("xtask: the model suites against the fake provider at {url}");
    let args = RunnerArgs {
        dir: Some(MODEL_SUITES_DIR.to_string()),
        env: vec![
            ("AGENTS_FAKE_LLM_URL".into(), url),
            (
                "AGENTS_CLI_MODEL_SCRIPT".into(),
                ctx.root
                    .join(CLI_MODEL_SCRIPT)
                    .to_string_lossy()
                    .into_owned(),
            ),
            (
                "AGENTS_TINY_MODEL".into(),
                tiny.to_string_lossy().into_owned(),
            ),
            ("AGENTS_TINY_MODEL_SHA256".into(), tiny_sha256),
            (
                crate::test_model::ENV.into(),
                gemma.to_string_lossy().into_owned(),
            ),
        ],
    };
    let (exported, model): (Vec<String>, Vec<String>) = suites
        .iter()
        .cloned()
        .partition(|s| crate::export_tests::is_export_suite(ctx, s));
    let mut run = SuiteRun::default();
    if suites.is_empty() || !model.is_empty() {
        run = godot_tests::run_suites_in(godot, &ctx.project_dir(), &args, &model, timeout);
        for p in &mut run.problems {
            *p = format!("[model brains] {p}");
        }
    }
    let _ = fake.terminate(Duration::from_secs(5));
    if suites.is_empty() || !exported.is_empty() {
        let r = crate::export_tests::run(ctx, godot, &gemma, &exported, timeout);
        run.passed += r.passed;
        run.failed += r.failed;
        run.problems.extend(r.problems);
    }
    run
}
