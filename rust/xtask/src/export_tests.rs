//! A real export of the demo project, with a model inside its pack: the suites of
//! `godot-project/tests/export/` run from the exported `.pck`, as a shipped game runs.
//!
//! The project is copied to `<target>/xtask-export/project` (its `.godot` cache left behind and
//! made again by an import) with Gemma 3 270M at `res://models/npc.gguf` (big enough for its
//! copy out of the pack to take many frames, so agents wait for it) and an export
//! preset ([`PRESET`]: everything, plus `models/*.gguf`), and exported with
//! `godot --export-pack` (no export templates needed) to `<target>/xtask-export/game/demo.pck`.
//! The game folder is laid out like an exported game's: the Godot program (the export
//! template's stand-in) and the extension's library beside the pack. The suites then run with
//! `--main-pack` and a fresh user folder (`XDG_DATA_HOME`), so `res://` is the pack and nothing
//! else.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::Ctx;
use crate::build::host_addon_file_name;
use crate::godot::Godot;
use crate::godot_tests::{self, SuiteRun};
use crate::process::{self, Echo};

/// The folder of the suites run from the pack.
pub const EXPORT_SUITES_DIR: &str = "res://tests/export";

/// The export preset written into the copy: every resource, and the model files.
const PRESET: &str = r#"[preset.0]

name="Linux"
platform="Linux"
runnable=true
export_filter="all_resources"
include_filter="models/*.gguf"
exclude_filter=""
export_path=""

[preset.0.options]

binary_format/embed_pck=false
"#;

fn failure(problem: String) -> SuiteRun {
    SuiteRun {
        passed: 0,
        failed: 1,
        problems: vec![format!("[exported game] {problem}")],
    }
}

/// Whether `name` is a suite of [`EXPORT_SUITES_DIR`].
pub fn is_export_suite(ctx: &Ctx, name: &str) -> bool {
    let stem = name.strip_suffix(".gd").unwrap_or(name);
    ctx.project_dir()
        .join("tests/export")
        .join(format!("{stem}.gd"))
        .is_file()
}

/// Exports the project with `model` inside its pack and runs the export suites (`suites`, or
/// all of them when empty) from it.
pub fn run(
    ctx: &Ctx,
    godot: &Godot,
    model: &Path,
    suites: &[String],
    timeout: Duration,
) -> SuiteRun {
    match export(ctx, godot, model) {
        Ok(game) => run_from_pack(godot, &game, suites, timeout),
        Err(e) => failure(e),
    }
}

/// Makes the export; returns the game folder.
fn export(ctx: &Ctx, godot: &Godot, model: &Path) -> Result<std::path::PathBuf, String> {
    let base = ctx.target_dir.join("xtask-export");
    if base.exists() {
        fs::remove_dir_all(&base).map_err(|e| format!("cannot clear {}: {e}", base.display()))?;
    }
    let (project, game) = (base.join("project"), base.join("game"));
    let source = ctx.project_dir();
    for entry in fs::read_dir(&source).map_err(|e| format!("{}: {e}", source.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.file_name() == ".godot" {
            continue;
        }
        let target = project.join(entry.file_name());
        if entry.path().is_dir() {
            godot_tests::copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    let models = project.join("models");
    fs::create_dir_all(&models).map_err(|e| e.to_string())?;
    fs::copy(model, models.join("npc.gguf"))
        .map_err(|e| format!("cannot copy {}: {e}", model.display()))?;
    fs::write(project.join("export_presets.cfg"), PRESET).map_err(|e| e.to_string())?;
    godot_tests::import_project(godot, &project)?;
    fs::create_dir_all(&game).map_err(|e| e.to_string())?;
    let pck = game.join("demo.pck");
    println!("xtask: godot --export-pack Linux {}", pck.display());
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(&project)
        .args(["--export-pack", "Linux"])
        .arg(&pck);
    let out = process::run(&mut cmd, Some(Duration::from_secs(600)), Echo::Quiet)?;
    if !out.success() || !pck.is_file() {
        return Err(format!(
            "the export failed ({}):\n{}",
            out.ending(),
            tail(&out.output, 30)
        ));
    }
    // An exported game's library sits beside its executable.
    let library = host_addon_file_name(false);
    let built = project.join("addons/godot_agents/bin").join(&library);
    fs::copy(&built, game.join(&library))
        .map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    Ok(game)
}

/// Runs the export suites from `game/demo.pck` with a fresh user folder.
fn run_from_pack(godot: &Godot, game: &Path, suites: &[String], timeout: Duration) -> SuiteRun {
    println!(
        "xtask: the export suites from {}",
        game.join("demo.pck").display()
    );
    let mut cmd = match godot.command_in(game) {
        Ok(cmd) => cmd,
        Err(e) => return failure(e),
    };
    let data = game.join("user-data");
    cmd.args(["--headless", "--main-pack"])
        .arg(game.join("demo.pck"))
        .args(["--script", "res://tests/run_tests.gd", "--"])
        .args(["--dir", EXPORT_SUITES_DIR])
        .env("XDG_DATA_HOME", &data)
        .current_dir(game);
    for s in suites {
        cmd.args(["--suite", s]);
    }
    let mut run = match process::run(&mut cmd, Some(timeout), Echo::Stream) {
        Ok(out) => godot_tests::judge(&out, timeout),
        Err(e) => return failure(e),
    };
    for p in &mut run.problems {
        *p = format!("[exported game] {p}");
    }
    run
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
