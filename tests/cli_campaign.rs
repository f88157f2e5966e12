//! `agents-server campaign new | apply | turn`, run as a real process on real files, and a
//! process killed (SIGKILL) while it saves: the campaign always loads afterwards.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agents_core::campaign::file;
use serde_json::{Value, json};
use support::{run_cli, server_bin};

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn new_campaign(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("camp").join("campaign.json");
    let run = run_cli(
        &[
            "campaign",
            "new",
            "--party",
            "pc_001,pc_002",
            path_str(&path),
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json()["id"], "camp_0001");
    path
}

#[test]
fn new_apply_and_turn() {
    let dir = tempfile::tempdir().unwrap();
    let path = new_campaign(dir.path());
    let c = file::load(&path).unwrap().campaign;
    assert_eq!(c.selected.party_character_ids, ["pc_001", "pc_002"]);
    // Not over an existing file.
    let run = run_cli(&["campaign", "new", path_str(&path)], None);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("exists already"), "{}", run.stderr);

    // apply: the calls run, the file is saved, the outcome printed.
    let calls = json!([
        {"id": "call_1", "tool": "move", "args": {"actor_id": "pc_002", "to_area_id": "area_002"}},
        {"id": "call_2", "tool": "hp_delta", "args": {"target_character_id": "pc_001", "delta": -3, "cause": "trap"}},
    ]);
    let run = run_cli(
        &["campaign", "apply", path_str(&path), "--actor", "pc_002"],
        Some(&calls.to_string()),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = run.json();
    assert_eq!(out["tool_feedback"], Value::Null);
    assert_eq!(
        out["applied_actions"][0]["result"],
        json!({"from_area_id": "area_001", "to_area_id": "area_002"})
    );
    let c = file::load(&path).unwrap().campaign;
    assert_eq!(c.actors["pc_002"].position.as_deref(), Some("area_002"));
    assert_eq!(c.actors["pc_001"].hp, 7);

    // A failed call: exit 1, its feedback printed, the rest applied.
    let calls = json!([{"tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002", "from_area_id": null}}]);
    let run = run_cli(
        &["campaign", "apply", path_str(&path)],
        Some(&calls.to_string()),
    );
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.json()["tool_feedback"]["failed_calls"][0]["reason"],
        "invalid_args"
    );
    assert_eq!(
        run.json()["tool_feedback"]["failed_calls"][0]["id"],
        "call_001"
    );

    // Bad input: exit 2 and the file untouched.
    let before = std::fs::read(&path).unwrap();
    for (args, stdin, says) in [
        (
            vec!["campaign", "apply", path_str(&path)],
            "not json",
            "stdin is not JSON",
        ),
        (
            vec!["campaign", "apply", path_str(&path)],
            "{\"tool\": \"move\"}",
            "expected a JSON array",
        ),
        (
            vec!["campaign", "apply", path_str(&path)],
            "[{\"args\": {}}]",
            "call [0]: no tool name",
        ),
        (
            vec!["campaign", "apply", path_str(&path), "--actor", "npc_7"],
            "[]",
            "not in the party",
        ),
    ] {
        let run = run_cli(&args, Some(stdin));
        assert_eq!(run.code, Some(2), "{stdin}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{stdin}: {}", run.stderr);
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        "{\"map\": {\"areas\": {\"a\": {\"reachable_area_ids\": [\"a\"]}}}}",
    )
    .unwrap();
    let run = run_cli(&["campaign", "apply", path_str(&broken)], Some("[]"));
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("area:a:reachable_self_loop"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&broken).unwrap(),
        "{\"map\": {\"areas\": {\"a\": {\"reachable_area_ids\": [\"a\"]}}}}"
    );

    // turn: the offline GM; the entry printed and appended to turn_log.jsonl.
    let run = run_cli(
        &["campaign", "turn", path_str(&path), "Where can I go?"],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let entry = run.json();
    assert_eq!(entry["turn_id"], "turn_0001");
    assert_eq!(entry["applied_actions"][0]["tool"], "move_options");
    let run = run_cli(
        &[
            "campaign",
            "turn",
            path_str(&path),
            "--actor",
            "pc_001",
            "I go to the side room",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json()["turn_id"], "turn_0002");
    assert_eq!(
        file::load(&path).unwrap().campaign.actors["pc_001"]
            .position
            .as_deref(),
        Some("area_002")
    );
    let log = std::fs::read_to_string(path.parent().unwrap().join("turn_log.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["user_input"], "I go to the side room");
    // An unknown brain is bad input.
    let run = run_cli(
        &["campaign", "turn", path_str(&path), "--brain", "nope", "hi"],
        None,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--brain nope"), "{}", run.stderr);
}

/// SIGKILL lands while `campaign apply` saves a campaign of about a thousand areas; after every
/// kill the file loads (the old campaign or the new one, never a torn file).
#[test]
fn a_process_killed_while_saving_leaves_a_loadable_campaign() {
    let dir = tempfile::tempdir().unwrap();
    let path = new_campaign(dir.path());
    // About 900 areas, so a save takes a while.
    let grow: Vec<Value> = (0..30)
        .map(|i| json!({"tool": "map_generate", "args": {"parent_area_id": null, "constraints": {"size": 30, "seed": format!("g{i}")}}}))
        .collect();
    let run = run_cli(
        &["campaign", "apply", path_str(&path)],
        Some(&Value::Array(grow).to_string()),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let mut areas = file::load(&path).unwrap().campaign.map.areas.len();
    assert!(areas > 900);
    let mut killed_mid_run = 0;
    for round in 0..24u64 {
        let calls = json!([{"tool": "map_generate", "args": {"constraints": {"size": 3, "seed": format!("k{round}")}}}]);
        let mut child = Command::new(server_bin())
            .args(["campaign", "apply", path_str(&path)])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(calls.to_string().as_bytes());
        }
        // Spread the kills over the process's life: start-up, load, run, save.
        std::thread::sleep(Duration::from_micros(500 + (round * 7919) % 12_000));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if !status.success() {
            killed_mid_run += 1;
        }
        let loaded = file::load(&path)
            .unwrap_or_else(|e| panic!("round {round}: the campaign does not load: {e}"));
        let now = loaded.campaign.map.areas.len();
        assert!(
            now == areas || now == areas + 3,
            "round {round}: {areas} → {now} areas"
        );
        areas = now;
    }
    assert!(
        killed_mid_run > 0,
        "no process was killed before it finished"
    );
    // No temporary files are left where a save completed; a killed save may leave one, which
    // never shadows the campaign.
    assert!(file::load(&path).is_ok());
}
