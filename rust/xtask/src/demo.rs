//! `cargo xtask demo --fake-model`: the agent town (`demo/town.tscn`) thinking with a model,
//! offline. Starts the fake provider (the `fakellm` binary) on a free loopback port with
//! [`TOWN_REPLIES`] queued and [`TOWN_DEFAULT`] after them, runs the town headless with the
//! `AGENTS_DEMO_*` variables pointing its default brain at the fake (`openai`, base URL
//! `<fake>/v1`), and checks that the town passed its model checks and that villagers said the
//! fake's lines.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::godot::Godot;
use crate::godot_tests;
use crate::process::{self, Echo};
use crate::{Ctx, cargo};

/// The answers the fake gives first, in order: lines streamed in pieces, two with a move (to
/// points of the town's map, in its pixels: in front of the bakery, on the festival square).
pub const TOWN_REPLIES: &str = r#"[
  {"kind": "reply", "chunk_chars": 5, "text": "Morning! The first loaves are cooling by the window.",
   "tool_calls": [{"name": "move", "arguments": {"x": 280, "y": 310}}]},
  {"kind": "reply", "chunk_chars": 5, "text": "The forge is hot; the hinge will be ready by noon."},
  {"kind": "reply", "chunk_chars": 5, "text": "All quiet on the square, no strangers today.",
   "tool_calls": [{"name": "move", "arguments": {"x": 410, "y": 497}}]},
  {"kind": "reply", "chunk_chars": 5, "text": "The wheat is in; I will bring sacks to the bakery."}
]"#;

/// The fake's answer once the queue is empty.
pub const TOWN_DEFAULT: &str =
    r#"{"kind": "reply", "chunk_chars": 5, "text": "A fine day for the harvest festival."}"#;

/// The lines the fake can say (from [`TOWN_REPLIES`] and [`TOWN_DEFAULT`]).
fn fake_lines() -> Vec<String> {
    let mut replies: Vec<serde_json::Value> =
        serde_json::from_str(TOWN_REPLIES).expect("TOWN_REPLIES is JSON");
    replies.push(serde_json::from_str(TOWN_DEFAULT).expect("TOWN_DEFAULT is JSON"));
    replies
        .iter()
        .filter_map(|r| r["text"].as_str().map(str::to_string))
        .collect()
}

/// How many of the town's printed lines are a villager saying one of the fake's lines (the town
/// prints `[ 4.2s] Mira (baker) → Player: "…"`).
fn model_lines_said(output: &str) -> usize {
    let lines = fake_lines();
    output
        .lines()
        .filter(|l| l.starts_with('[') && !l.contains("Player →"))
        .filter(|l| {
            lines
                .iter()
                .any(|text| l.ends_with(&format!(": \"{text}\"")))
        })
        .count()
}

/// Builds and starts the fake provider, runs the town scene of `project` headless against it,
/// stops it.
pub fn run_fake_model_town(
    ctx: &Ctx,
    godot: &Godot,
    project: &Path,
    scene: &str,
    timeout: Duration,
) -> Result<(), String> {
    println!("xtask: cargo build -p agents-fakellm");
    process::run_checked(
        Command::new(cargo())
            .args(["build", "-p", "agents-fakellm"])
            .current_dir(&ctx.root),
    )?;
    let exe = ctx
        .target_dir
        .join("debug")
        .join(format!("fakellm{}", std::env::consts::EXE_SUFFIX));
    let replies = ctx.target_dir.join("xtask-town-replies.json");
    fs::write(&replies, TOWN_REPLIES)
        .map_err(|e| format!("cannot write {}: {e}", replies.display()))?;
    let mut cmd = Command::new(&exe);
    cmd.arg("--replies")
        .arg(&replies)
        .args(["--default", TOWN_DEFAULT]);
    let (fake, url) = crate::model_tests::start_fake(&mut cmd)?;
    let base_url = format!("{url}/v1");
    println!(
        "xtask: AGENTS_DEMO_PROVIDER=openai AGENTS_DEMO_MODEL=fake-town AGENTS_DEMO_BASE_URL={base_url} \
         godot --headless {scene}"
    );
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(project)
        .arg(scene)
        .env("AGENTS_DEMO_PROVIDER", "openai")
        .env("AGENTS_DEMO_MODEL", "fake-town")
        .env("AGENTS_DEMO_BASE_URL", &base_url)
        .env_remove("AGENTS_DEMO_API_KEY_ENV")
        .env_remove("AGENTS_DEMO_COMMAND")
        .env_remove("AGENTS_DEMO_CLI_BACKEND");
    let out = process::run(&mut cmd, Some(timeout), Echo::Stream);
    let _ = fake.terminate(Duration::from_secs(5));
    let out = out?;
    let mut problems = godot_tests::scan_output(&out.output);
    if !out.success() {
        problems.push(format!("the town ended with {}", out.ending()));
    }
    if !out.output.contains("TOWN OK (model openai fake-town") {
        problems.push("the town did not report TOWN OK for the model".into());
    }
    let said = model_lines_said(&out.output);
    if said == 0 {
        problems.push("no villager said one of the fake model's lines".into());
    }
    if problems.is_empty() {
        println!("xtask: the town on the fake model finished cleanly ({said} model lines said)");
        Ok(())
    } else {
        Err(format!(
            "the town on the fake model failed:\n  {}",
            problems.join("\n  ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fake_lines_are_found_in_the_towns_output() {
        assert_eq!(fake_lines().len(), 5);
        let output = "\
[  3.0s] Player → Mira: \"Good morning, Mira! Is the bread ready?\"
[  3.4s] Mira (baker) → Player: \"Morning! The first loaves are cooling by the window.\"
[  4.1s] Bram (smith): \"A fine day for the harvest festival.\"
[  4.5s] Tess (guard): \"Something else.\"";
        assert_eq!(model_lines_said(output), 2);
    }
}
