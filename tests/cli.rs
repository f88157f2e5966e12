//! The `agents-server` CLI, run as a real process: `tools`, `tool`, `--help`, `--version`.

mod support;

use serde_json::{Value, json};
use support::{call_ok, expected_tool_names, run_cli};

fn names(definitions: &Value) -> Vec<String> {
    definitions
        .as_array()
        .expect("an array of definitions")
        .iter()
        .map(|d| d["name"].as_str().expect("a name").to_owned())
        .collect()
}

fn is_read_only_by_convention(name: &str) -> bool {
    name.starts_with("legal_") || name.starts_with("choose_") || name.starts_with("suggest_")
}

#[test]
fn tools_lists_every_tool_in_the_llm_shape() {
    let run = run_cli(&["tools"], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("\n  "), "pretty-printed JSON");
    let defs = run.json();
    let listed = names(&defs);
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "definitions are sorted by name");
    let missing: Vec<_> = expected_tool_names()
        .into_iter()
        .filter(|n| !listed.contains(n))
        .collect();
    assert!(missing.is_empty(), "missing tools: {missing:?}");
    for def in defs.as_array().unwrap() {
        let mut keys: Vec<&str> = def
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["description", "name", "parameters"], "{def}");
        assert!(!def["description"].as_str().unwrap().is_empty(), "{def}");
        assert_eq!(def["parameters"]["type"], "object", "{def}");
        assert_eq!(def["parameters"]["additionalProperties"], false, "{def}");
    }
}

#[test]
fn tools_mcp_format_has_input_schema_and_read_only_hints() {
    let run = run_cli(&["tools", "--format", "mcp"], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let defs = run.json();
    let listed = names(&defs);
    let missing: Vec<_> = expected_tool_names()
        .into_iter()
        .filter(|n| !listed.contains(n))
        .collect();
    assert!(missing.is_empty(), "missing tools: {missing:?}");
    for def in defs.as_array().unwrap() {
        let name = def["name"].as_str().unwrap();
        assert_eq!(def["inputSchema"]["type"], "object", "{def}");
        assert!(def["annotations"]["readOnlyHint"].is_boolean(), "{def}");
        if is_read_only_by_convention(name) {
            assert_eq!(
                def["annotations"]["readOnlyHint"], true,
                "{name} is read-only"
            );
        }
    }
}

#[test]
fn tools_rejects_an_unknown_format() {
    let run = run_cli(&["tools", "--format", "xml"], None);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("xml"), "{}", run.stderr);
}

#[test]
fn dice_roll_is_deterministic_with_a_seed() {
    let args = json!({"sides": 20, "count": 2, "seed": 1});
    let first = call_ok("roll_rpg_dice", &args);
    let second = call_ok("roll_rpg_dice", &args);
    assert_eq!(first, second, "same seed, same roll");
    assert_eq!(first["type"], "rpg_dice_roll");
    assert_eq!(first["gameType"], "rpg_dice");
    assert_eq!(first["legal"], true);
    assert_eq!(first["sides"], 20);
    assert_eq!(first["count"], 2);
    let rolls: Vec<i64> = first["rolls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_i64().unwrap())
        .collect();
    assert_eq!(rolls.len(), 2);
    assert!(rolls.iter().all(|r| (1..=20).contains(r)), "{rolls:?}");
    assert_eq!(first["total"], rolls.iter().sum::<i64>());
    // A different seed gives a valid roll too (and across 3 seeds, not always the same one).
    let others: Vec<Value> = (2..5)
        .map(|seed| {
            call_ok(
                "roll_rpg_dice",
                &json!({"sides": 20, "count": 2, "seed": seed}),
            )["rolls"]
                .clone()
        })
        .collect();
    assert!(
        others.iter().any(|r| *r != first["rolls"]),
        "seeds change the roll: {others:?}"
    );
}

#[test]
fn arguments_can_come_from_stdin() {
    let run = run_cli(
        &["tool", "roll_rpg_dice", "-"],
        Some(r#"{"sides": 6, "seed": "abc"}"#),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = run.json();
    assert_eq!(out["sides"], 6);
    assert_eq!(out["count"], 1);
    assert_eq!(
        out,
        call_ok("roll_rpg_dice", &json!({"sides": 6, "seed": "abc"}))
    );
}

#[test]
fn omitted_arguments_are_an_empty_object() {
    let run = run_cli(&["tool", "new_tic_tac_toe_game"], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = run.json();
    assert_eq!(out["type"], "tic_tac_toe_snapshot");
    assert_eq!(out["status"], "in_progress");
    assert_eq!(out["turn"], "player");
    let id = out["gameId"].as_str().unwrap();
    assert!(id.starts_with("g_") && id.len() == 34, "{id}");
}

/// Arguments that fail the tool's schema are the caller's to fix: exit 2 (the code
/// `invalid_args` is of the category `input`).
#[test]
fn wrong_argument_type_exits_2_naming_the_field() {
    let game = call_ok("new_four_in_a_row_game", &json!({}));
    let args = json!({"gameId": game["gameId"], "state": game["state"], "column": "3"});
    let run = run_cli(
        &["tool", "apply_four_in_a_row_move", &args.to_string()],
        None,
    );
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["reason"], "invalid_args");
    assert_eq!(out["field"], "column");
    assert_eq!(out["tool"], "apply_four_in_a_row_move");
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("column"), "{}", run.stderr);
}

#[test]
fn illegal_move_exits_1_with_the_unchanged_state() {
    let game = call_ok("new_tic_tac_toe_game", &json!({}));
    let after = call_ok(
        "apply_tic_tac_toe_move",
        &json!({"gameId": game["gameId"], "state": game["state"], "coord": "B2"}),
    );
    assert_eq!(after["legal"], true);
    let args = json!({"gameId": game["gameId"], "state": after["state"], "coord": "B2"});
    let run = run_cli(&["tool", "apply_tic_tac_toe_move", &args.to_string()], None);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let out = run.json();
    assert_eq!(out["legal"], false);
    assert_eq!(out["state"], after["state"]);
    assert_eq!(out["error"], "Illegal move.");
    assert_eq!(run.stderr.trim_end(), "error: Illegal move.");
}

#[test]
fn unknown_tool_exits_2() {
    let run = run_cli(&["tool", "no_such_tool", "{}"], None);
    assert_eq!(run.code, Some(2));
    let out = run.json();
    assert_eq!(out["reason"], "unknown_tool");
    assert_eq!(out["tool"], "no_such_tool");
    assert!(
        run.stderr.contains("Unknown tool: no_such_tool"),
        "{}",
        run.stderr
    );
}

#[test]
fn unparsable_json_exits_2() {
    let run = run_cli(&["tool", "roll_rpg_dice", "{sides: 20}"], None);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.json()["reason"], "invalid_json");
    assert!(run.stderr.contains("not valid JSON"), "{}", run.stderr);
}

#[test]
fn notes_go_to_stderr_not_stdout() {
    // A finished game: X took the top row; legal_* answers an empty list plus a note.
    let game = call_ok("new_tic_tac_toe_game", &json!({}));
    let mut state = game["state"].clone();
    for coord in ["A1", "A2", "B1", "B2", "C1"] {
        let next = call_ok(
            "apply_tic_tac_toe_move",
            &json!({"state": state, "coord": coord}),
        );
        state = next["state"].clone();
    }
    let run = run_cli(
        &[
            "tool",
            "legal_tic_tac_toe_moves",
            &json!({"state": state}).to_string(),
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json()["moves"], json!([]));
    assert_eq!(
        run.stderr.trim_end(),
        "note: No legal moves available; the game is over."
    );
}

#[test]
fn help_and_version() {
    let run = run_cli(&["--help"], None);
    assert_eq!(run.code, Some(0));
    for word in ["tools", "tool", "mcp", "--version"] {
        assert!(
            run.stdout.contains(word),
            "--help mentions {word}:\n{}",
            run.stdout
        );
    }
    let run = run_cli(&["tool", "--help"], None);
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("structuredContent"), "{}", run.stdout);
    let run = run_cli(&["--version"], None);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.stdout.trim(),
        format!("agents-server {}", env!("CARGO_PKG_VERSION"))
    );
    let run = run_cli(&[], None);
    assert_eq!(run.code, Some(2), "a subcommand is required");
}

#[test]
fn a_non_loopback_bind_without_a_token_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agents.db");
    let run = run_cli(
        &["serve", "--bind", "0.0.0.0:0", "--db", db.to_str().unwrap()],
        None,
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("without a token") && run.stderr.contains("--insecure-no-token"),
        "{}",
        run.stderr
    );
    let run = run_cli(
        &[
            "serve",
            "--allow-origin",
            "localhost:8060",
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("'localhost:8060' is not an origin"),
        "{}",
        run.stderr
    );
}

/// Sends one HTTP request to `port` on loopback with `host` as the `Host` header; the status.
fn http_status(port: u16, host: &str, extra: &str) -> String {
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.split(' ').nth(1).unwrap_or("").to_string()
}

#[test]
fn insecure_no_token_starts_loudly_and_mcp_keeps_its_host_check() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(support::server_bin())
        .args([
            "serve",
            "--bind",
            "0.0.0.0:0",
            "--insecure-no-token",
            "--db",
        ])
        .arg(dir.path().join("agents.db"))
        .env_remove("AGENTS_SERVER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let port: u16 = loop {
        let line = lines.next().expect("the server exited").unwrap();
        seen.push(line.clone());
        if let Some(url) = line.strip_prefix("listening on ws://") {
            break url
                .trim_end_matches("/ws")
                .rsplit(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
        }
    };
    assert!(
        seen.iter().any(|l| l.contains("WITHOUT A TOKEN")),
        "no warning: {seen:?}"
    );
    // MCP's DNS-rebinding protection stays on off loopback: a foreign Host is refused.
    assert_eq!(http_status(port, "evil.example", ""), "403");
    assert_eq!(http_status(port, &format!("localhost:{port}"), ""), "200");
    // So is a foreign page.
    assert_eq!(
        http_status(
            port,
            &format!("localhost:{port}"),
            "Origin: http://evil.example\r\n"
        ),
        "403"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_token_browsers_cannot_send_is_a_warning_and_still_works_in_the_header() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let token = "c2VjcmV0/dG9rZW4=";
    let mut child = Command::new(support::server_bin())
        .args(["serve", "--bind", "127.0.0.1:0", "--token", token, "--db"])
        .arg(dir.path().join("agents.db"))
        .env_remove("AGENTS_SERVER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let port: u16 = loop {
        let line = lines.next().expect("the server exited").unwrap();
        seen.push(line.clone());
        if let Some(url) = line.strip_prefix("listening on ws://") {
            break url
                .trim_end_matches("/ws")
                .rsplit(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
        }
    };
    assert!(
        seen.iter()
            .any(|l| l.contains("browsers cannot present it") && !l.contains(token)),
        "no warning (or it shows the token): {seen:?}"
    );
    let host = format!("localhost:{port}");
    assert_eq!(http_status(port, &host, ""), "401");
    assert_eq!(
        http_status(port, &host, &format!("Authorization: Bearer {token}\r\n")),
        "200"
    );
    let _ = child.kill();
    let _ = child.wait();
}
