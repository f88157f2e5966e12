//! The Agents debugger tab in a real editor (suite `editor_debugger` of `cargo xtask test`): the
//! Godot editor runs under Xvfb on a copy of the demo project with a test-only plugin
//! (`godot-project/tests/editor_debugger/`) that starts the town under the editor's debugger,
//! waits for the tab to list its agents, selects one and waits for its decisions, pauses and
//! resumes it, talks to it, terminates another, shows the tab and saves the editor window. The
//! plugin writes what happened as JSON; this checks it and the picture
//! (`target/screenshots/editor_debugger.png`, not blank).
//!
//! The game is started by the plugin with the command that runs Godot here (a debootstrapped
//! installation runs through its loader, which the editor's own Play button cannot re-launch)
//! and `--remote-debug` to the editor's debug server, kept open through the project metadata
//! `debug_options/server_keep_open` (the Debug menu's "Keep Debug Server Open").

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::Ctx;
use crate::godot::Godot;
use crate::godot_tests::{self, SuiteRun};
use crate::process::{self, Echo};
use crate::screenshots::{self, Picture};

/// The suite's name.
pub const SUITE: &str = "editor_debugger";
/// The editor's virtual screen.
const SCREEN: &str = "-screen 0 1600x900x24";
/// Where the driver plugin lives in the copy.
const DRIVER_DIR: &str = "editor_driver";

/// Whether `name` selects this suite.
pub fn is_suite(name: &str) -> bool {
    name == SUITE
}

/// Runs the suite.
pub fn run(ctx: &Ctx, godot: &Godot, timeout: Duration) -> SuiteRun {
    let mut run = SuiteRun::default();
    match drive(ctx, godot, timeout) {
        Ok(summary) => {
            println!("xtask: {SUITE}: {summary}");
            run.passed += 1;
        }
        Err(e) => {
            run.failed += 1;
            run.problems.push(format!("[{SUITE}] {e}"));
        }
    }
    run
}

fn drive(ctx: &Ctx, godot: &Godot, timeout: Duration) -> Result<String, String> {
    screenshots::ensure_xvfb()?;
    let work = ctx.target_dir.join(SUITE);
    let project = work.join("project");
    let _ = fs::remove_dir_all(&work);
    copy_project(ctx, &project)?;
    godot_tests::import_project(godot, &project)?;
    keep_debug_server_open(&project)?;

    let result = work.join("result.json");
    let base = godot.command();
    let mut game: Vec<String> = vec![base.get_program().to_string_lossy().into_owned()];
    game.extend(base.get_args().map(|a| a.to_string_lossy().into_owned()));
    game.extend(["--rendering-driver", "opengl3", "--audio-driver", "Dummy"].map(String::from));
    let mut cmd = Command::new("xvfb-run");
    cmd.args(["-a", "-s", SCREEN])
        .arg(base.get_program())
        .args(base.get_args())
        .args([
            "--editor",
            "--rendering-driver",
            "opengl3",
            "--audio-driver",
            "Dummy",
        ])
        .arg("--path")
        .arg(&project)
        .env("GODOT_AGENTS_EDITOR_DRIVER", &result)
        .env("GODOT_AGENTS_EDITOR_GAME", Value::from(game).to_string());
    println!("xtask: the editor under Xvfb, driving the Agents debugger tab");
    let out = process::run(&mut cmd, Some(timeout), Echo::Stream)?;
    let mut problems: Vec<String> = godot_tests::scan_output(&out.output);
    let text = fs::read_to_string(&result).map_err(|e| {
        format!(
            "the driver wrote no {} ({e}); {}",
            result.display(),
            out.ending()
        )
    })?;
    let outcome: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", result.display()))?;
    problems.extend(check_outcome(&outcome));
    if !out.success() {
        problems.push(format!("the editor ended with {}", out.ending()));
    }
    let png = outcome["screenshot"].as_str().unwrap_or_default();
    let picture = if png.is_empty() {
        problems.push("no screenshot".into());
        String::new()
    } else {
        let shots = screenshots::dir(ctx);
        fs::create_dir_all(&shots).map_err(|e| format!("{}: {e}", shots.display()))?;
        let kept = shots.join(format!("{SUITE}.png"));
        fs::copy(png, &kept).map_err(|e| format!("copying {png}: {e}"))?;
        match Picture::load(&kept).and_then(|p| p.check()) {
            Ok(summary) => format!("{}: {summary}", kept.display()),
            Err(e) => {
                problems.push(e);
                String::new()
            }
        }
    };
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    Ok(format!(
        "{} agents listed, {} decision(s) shown, paused/resumed, talked to, terminated; {picture}",
        outcome["agents"], outcome["decisions"]
    ))
}

/// What the driver's JSON says went wrong.
fn check_outcome(outcome: &Value) -> Vec<String> {
    let mut problems: Vec<String> = outcome["problems"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| p.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_else(|| vec!["the outcome has no problems list".into()]);
    if outcome["agents"].as_u64().unwrap_or(0) < 2 {
        problems.push(format!("agents listed: {}", outcome["agents"]));
    }
    if outcome["decisions"].as_u64().unwrap_or(0) < 1 {
        problems.push("no decision shown".into());
    }
    for step in [
        "tab_found",
        "paused",
        "resumed",
        "line_in_conversation",
        "line_in_memory",
        "terminated",
        "tab_visible",
    ] {
        if outcome[step] != Value::Bool(true) {
            problems.push(format!("{step}: {}", outcome[step]));
        }
    }
    problems
}

/// Copies the demo project (its scenes, not its tests, benches or import cache), the addon as a
/// link, and the driver plugin, enabled next to the addon's.
fn copy_project(ctx: &Ctx, to: &Path) -> Result<(), String> {
    let from = ctx.project_dir();
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in fs::read_dir(&from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || ["tests", "bench", "addons"].contains(&name.as_ref()) {
            continue;
        }
        let target = to.join(name.as_ref());
        if entry.path().is_dir() {
            godot_tests::copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)
                .map_err(|e| format!("copying {}: {e}", entry.path().display()))?;
        }
    }
    let addons = ctx.root.join("addons");
    let addons = addons
        .canonicalize()
        .map_err(|e| format!("{}: {e}", addons.display()))?;
    godot_tests::link_or_copy_dir(&addons, &to.join("addons"))?;
    godot_tests::copy_dir(
        &from.join("tests").join("editor_debugger"),
        &to.join(DRIVER_DIR),
    )?;
    let settings = to.join("project.godot");
    let text = fs::read_to_string(&settings).map_err(|e| format!("{}: {e}", settings.display()))?;
    let addon = "\"res://addons/godot_agents/plugin.cfg\"";
    if !text.contains(addon) {
        return Err(format!(
            "{} does not enable the addon's plugin",
            settings.display()
        ));
    }
    let text = text.replacen(
        addon,
        &format!("{addon}, \"res://{DRIVER_DIR}/plugin.cfg\""),
        1,
    );
    fs::write(&settings, text).map_err(|e| format!("{}: {e}", settings.display()))
}

/// Turns on the Debug menu's "Keep Debug Server Open" for the copy.
fn keep_debug_server_open(project: &Path) -> Result<(), String> {
    let dir = project.join(".godot").join("editor");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join("project_metadata.cfg");
    let mut text = fs::read_to_string(&file).unwrap_or_default();
    text.push_str("\n[debug_options]\n\nserver_keep_open=true\n");
    fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_complete_outcome_passes_and_each_missing_step_is_named() {
        let good = json!({"problems": [], "agents": 5, "decisions": 2, "tab_found": true,
            "paused": true, "resumed": true, "line_in_conversation": true,
            "line_in_memory": true, "terminated": true, "tab_visible": true});
        assert_eq!(check_outcome(&good), Vec::<String>::new());
        let mut bad = good.clone();
        bad["terminated"] = json!(false);
        bad["agents"] = json!(1);
        bad["problems"] = json!(["no decision of agent_001 within 45 s"]);
        let problems = check_outcome(&bad);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("terminated")));
        assert!(problems.iter().any(|p| p.contains("agents listed: 1")));
    }
}
