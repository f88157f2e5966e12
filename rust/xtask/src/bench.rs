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
//! - Godot `bench/drain_bench.gd`: the main-thread cost of `AgentRuntime` draining 10,000
//!   `agent_spawned` and 10,000 `agent_removed` events and emitting them to a GDScript handler, on
//!   a release build of the extension (see [`godot_drain_bench`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{self, Echo};
use crate::{Ctx, build, cargo, godot, godot_tests};

/// Runs every benchmark, streaming their output; with `only_godot`, only the Godot drain bench.
pub fn run(ctx: &Ctx, only_godot: bool) -> Result<(), String> {
    if only_godot {
        return godot_drain_bench(ctx);
    }
    ensure_python_chess();
    for (package, bench) in [
        ("agents-games", "engines"),
        ("agents-core", "tool_calls"),
        ("agents-core", "bus"),
        ("agents-core", "memory"),
        ("agents-core", "runtime"),
    ] {
        println!("xtask: cargo bench -p {package} --bench {bench}");
        let status = Command::new(cargo())
            .args(["bench", "-p", package, "--bench", bench])
            .current_dir(&ctx.root)
            .status()
            .map_err(|e| format!("cannot run cargo bench: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cargo bench -p {package} --bench {bench} failed ({status})"
            ));
        }
    }
    godot_drain_bench(ctx)
}

/// The drain bench's script, relative to `godot-project/`.
const DRAIN_SCRIPT: &str = "bench/drain_bench.gd";

/// Builds the release extension and runs `godot-project/bench/drain_bench.gd` headless in a
/// throw-away project under `<target>/xtask-bench/drain` whose `.gdextension` loads the release
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

fn make_release_project(ctx: &Ctx, release_lib: &Path) -> Result<PathBuf, String> {
    let dir = ctx.target_dir.join("xtask-bench").join("drain");
    let write = |path: &Path, bytes: &[u8]| -> Result<(), String> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    // Start clean except for Godot's import cache (the extension list is rewritten below).
    for stale in ["addons", "bench"] {
        let path = dir.join(stale);
        if path.exists() {
            fs::remove_dir_all(&path)
                .map_err(|e| format!("cannot clear {}: {e}", path.display()))?;
        }
    }
    let _ = fs::remove_file(dir.join(".godot").join("extension_list.cfg"));
    write(
        &dir.join("project.godot"),
        b"config_version=5\n\n[application]\n\nconfig/name=\"Godot Agents drain bench\"\nconfig/features=PackedStringArray(\"4.5\")\n",
    )?;
    let script = fs::read(ctx.project_dir().join(DRAIN_SCRIPT))
        .map_err(|e| format!("cannot read {DRAIN_SCRIPT}: {e}"))?;
    write(&dir.join(DRAIN_SCRIPT), &script)?;
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
