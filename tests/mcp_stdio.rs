//! `agents-server mcp`, run as a real child process and driven by a real MCP client (rmcp's
//! client over its child-process transport), plus a raw line-level client for what a well-behaved
//! client never sends (garbage lines).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod support;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use support::{expected_tool_names, run_cli, server_bin};

/// Generous: debug builds on a loaded machine.
const TIMEOUT: Duration = Duration::from_secs(30);

type Client = RunningService<RoleClient, ()>;

async fn connect() -> Client {
    connect_with(&[]).await
}

/// `agents-server mcp` with `args`.
async fn connect_with(args: &[&str]) -> Client {
    let cmd = tokio::process::Command::new(server_bin()).configure(|c| {
        c.arg("mcp").args(args);
    });
    let transport = TokioChildProcess::new(cmd).expect("spawn agents-server mcp");
    tokio::time::timeout(TIMEOUT, ().serve(transport))
        .await
        .expect("initialize timed out")
        .expect("initialize")
}

async fn try_call(
    client: &Client,
    name: &str,
    args: Value,
) -> Result<CallToolResult, ServiceError> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    tokio::time::timeout(TIMEOUT, client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{name} timed out"))
}

async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let shown = args.to_string();
    try_call(client, name, args)
        .await
        .unwrap_or_else(|e| panic!("{name} {shown}: {e}"))
}

/// A successful call's structured content, checked against its first text item.
async fn call_ok(client: &Client, name: &str, args: Value) -> Value {
    let shown = args.to_string();
    let result = call(client, name, args).await;
    assert_eq!(
        result.is_error,
        Some(false),
        "{name} {shown} failed: {result:?}"
    );
    structured(&result)
}

fn structured(result: &CallToolResult) -> Value {
    let value = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let texts = texts(result);
    let first: Value = serde_json::from_str(&texts[0]).expect("the first text item is JSON");
    assert_eq!(
        first, value,
        "the first text item is the structured content"
    );
    value
}

fn texts(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .map(|c| c.as_text().expect("text content").text.clone())
        .collect()
}

async fn close(client: Client) {
    let _ = tokio::time::timeout(TIMEOUT, client.cancel()).await;
}

fn is_read_only_by_convention(name: &str) -> bool {
    name.starts_with("legal_") || name.starts_with("choose_") || name.starts_with("suggest_")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_names_the_server() {
    let client = connect().await;
    let info = client.peer_info().expect("server info after initialize");
    let implementation = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(implementation.name, "godot-agents");
    assert_eq!(implementation.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some(), "tools capability");
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_every_tool_with_read_only_hints() {
    let client = connect().await;
    let tools = tokio::time::timeout(TIMEOUT, client.list_all_tools())
        .await
        .expect("tools/list timed out")
        .expect("tools/list");
    let listed: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let missing: Vec<_> = expected_tool_names()
        .into_iter()
        .filter(|n| !listed.contains(n))
        .collect();
    assert!(missing.is_empty(), "missing tools: {missing:?}");
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        let hint = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
        assert!(hint.is_some(), "{} has a readOnlyHint", tool.name);
        if is_read_only_by_convention(&tool.name) {
            assert_eq!(hint, Some(true), "{} is read-only", tool.name);
        }
    }
    // tools/list and `agents-server tools --format mcp` are the same definitions.
    let cli = run_cli(&["tools", "--format", "mcp"], None).json();
    assert_eq!(serde_json::to_value(&tools).unwrap(), cli);
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plays_a_full_tic_tac_toe_game_with_the_built_in_ai() {
    let client = connect().await;
    let game = call_ok(&client, "new_tic_tac_toe_game", json!({})).await;
    assert_eq!(game["type"], "tic_tac_toe_snapshot");
    assert_eq!(game["gameType"], "tic_tac_toe");
    assert_eq!(game["status"], "in_progress");
    assert_eq!(game["turn"], "player");
    let game_id = game["gameId"].clone();
    let mut state = game["state"].clone();
    let mut turn = game["turn"].clone();
    let mut last = Value::Null;
    for ply in 0..9 {
        let legal = call_ok(&client, "legal_tic_tac_toe_moves", json!({"state": state})).await;
        assert_eq!(legal["type"], "legal_moves");
        let moves = legal["moves"].as_array().expect("moves").clone();
        assert_eq!(moves.len(), 9 - ply, "one square fewer each ply");

        let suggestion = call_ok(
            &client,
            "suggest_tic_tac_toe_move",
            json!({"state": state, "seed": 7}),
        )
        .await;
        assert_eq!(suggestion["type"], "ai_move");
        assert_eq!(suggestion["gameType"], "tic_tac_toe");
        let mv = suggestion["move"].clone();
        assert!(moves.contains(&mv), "suggested {mv} is legal: {moves:?}");

        let after = call_ok(
            &client,
            "apply_tic_tac_toe_move",
            json!({"gameId": game_id, "state": state, "coord": mv}),
        )
        .await;
        assert_eq!(after["legal"], true);
        assert_eq!(after["gameId"], game_id, "gameId is echoed");
        assert_eq!(after["lastAction"], mv);
        assert_ne!(after["state"], state);
        state = after["state"].clone();
        last = after.clone();
        if after["status"] == "game_over" {
            break;
        }
        assert_eq!(after["status"], "in_progress");
        assert_ne!(after["turn"], turn, "turns alternate");
        turn = after["turn"].clone();
    }
    assert_eq!(
        last["status"], "game_over",
        "the game ends within 9 plies: {last}"
    );
    assert_eq!(
        last["winner"], "draw",
        "perfect play on both sides draws: {last}"
    );

    // A finished game: no legal moves (plus the note), and no suggestion.
    let result = call(&client, "legal_tic_tac_toe_moves", json!({"state": state})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(structured(&result)["moves"], json!([]));
    assert_eq!(
        texts(&result)[1..],
        ["No legal moves available; the game is over.".to_owned()]
    );
    let result = call(&client, "suggest_tic_tac_toe_move", json!({"state": state})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(structured(&result)["reason"], "game_over");
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn illegal_move_is_an_error_result() {
    let client = connect().await;
    let game = call_ok(&client, "new_tic_tac_toe_game", json!({})).await;
    let after = call_ok(
        &client,
        "apply_tic_tac_toe_move",
        json!({"state": game["state"], "coord": "A1"}),
    )
    .await;
    let result = call(
        &client,
        "apply_tic_tac_toe_move",
        json!({"gameId": game["gameId"], "state": after["state"], "coord": "A1"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let out = structured(&result);
    assert_eq!(out["legal"], false);
    assert_eq!(out["state"], after["state"], "the state is unchanged");
    assert_eq!(out["gameId"], game["gameId"]);
    assert_eq!(out["error"], "Illegal move.");
    assert_eq!(out["reason"], "square_occupied");
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_invalid_arguments_are_an_error_result_naming_the_field() {
    let client = connect().await;
    let game = call_ok(&client, "new_four_in_a_row_game", json!({})).await;
    let result = call(
        &client,
        "apply_four_in_a_row_move",
        json!({"gameId": game["gameId"], "state": game["state"], "column": "3"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let out = structured(&result);
    assert_eq!(out["reason"], "invalid_args");
    assert_eq!(out["field"], "column");
    assert_eq!(out["tool"], "apply_four_in_a_row_move");
    assert!(out["error"].as_str().unwrap().contains("column"), "{out}");

    // A missing required argument is named too; so is an unexpected one.
    let result = call(&client, "apply_tic_tac_toe_move", json!({"state": "x"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(structured(&result)["field"], "coord");
    let result = call(
        &client,
        "roll_rpg_dice",
        json!({"sides": 6, "colour": "red"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(structured(&result)["reason"], "invalid_args");

    // The server is still fine afterwards.
    let roll = call_ok(&client, "roll_rpg_dice", json!({"sides": 6, "seed": 3})).await;
    assert_eq!(roll["sides"], 6);
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tool_is_a_json_rpc_invalid_params_error() {
    let client = connect().await;
    match try_call(&client, "no_such_tool", json!({})).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("no_such_tool"), "{}", e.message);
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    // The connection stays usable.
    call_ok(&client, "new_tic_tac_toe_game", json!({})).await;
    close(client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_searches_do_not_block_other_requests() {
    let client = connect().await;
    let game = call_ok(&client, "new_chess_game", json!({})).await;
    let start = Instant::now();
    // More searches than the server has runtime worker threads (one per core), each 1.5 s long.
    let searches: Vec<_> = (0..4)
        .map(|i| {
            let params = CallToolRequestParams::new("suggest_chess_move").with_arguments(
                json!({"fen": game["fen"], "timeMs": 1500, "seed": i})
                    .as_object()
                    .unwrap()
                    .clone(),
            );
            let peer = client.peer().clone();
            tokio::spawn(async move {
                let result = peer.call_tool(params).await;
                (result, start.elapsed())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let quick = call_ok(&client, "legal_chess_moves", json!({"fen": game["fen"]})).await;
    let quick_done = start.elapsed();
    assert_eq!(quick["movesUci"].as_array().map(Vec::len), Some(20));
    let mut first_search = Duration::MAX;
    for search in searches {
        let (result, done) = tokio::time::timeout(TIMEOUT, search)
            .await
            .expect("search timed out")
            .unwrap();
        let result = result.expect("suggest_chess_move");
        assert_eq!(result.is_error, Some(false), "{result:?}");
        first_search = first_search.min(done);
    }
    // Only meaningful when the searches really used their budget.
    if first_search >= Duration::from_millis(1000) {
        assert!(
            quick_done < first_search,
            "a quick call ({quick_done:?}) waited for the searches ({first_search:?})"
        );
    } else {
        eprintln!("note: the searches ended early ({first_search:?}); blocking check inconclusive");
    }
    close(client).await;
}

/// A raw line-level client: garbage lines get no answer (or a JSON-RPC error), never a crash.
#[test]
fn garbage_lines_do_not_kill_the_server() {
    let mut child = Command::new(server_bin())
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agents-server mcp");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    // Every line the server writes must be one JSON-RPC message; returns the response to `id`.
    let wait_for = |id: i64| -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no response to id {id}: {e}"));
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(msg["jsonrpc"], "2.0", "{msg}");
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    };

    send("this is not JSON at all");
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"0"}}}"#,
    );
    let init = wait_for(1);
    assert_eq!(
        init["result"]["serverInfo"]["name"], "godot-agents",
        "{init}"
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(r#"{"jsonrpc": "2.0", "id": 2, "method": "#);
    send("[1, 2, 3]");
    send(r#"{"hello": "world"}"#);
    send("");
    send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    let list = wait_for(3);
    let count = list["result"]["tools"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0);
    assert!(count >= expected_tool_names().len(), "{list}");
    send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
    );
    let unknown = wait_for(4);
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    send(r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method"}"#);
    let no_method = wait_for(5);
    assert!(no_method["error"]["code"].is_i64(), "{no_method}");
    send(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"roll_rpg_dice","arguments":{"sides":20,"count":2,"seed":1}}}"#,
    );
    let roll = wait_for(6);
    assert_eq!(roll["result"]["isError"], false, "{roll}");
    assert_eq!(
        roll["result"]["structuredContent"]["type"], "rpg_dice_roll",
        "{roll}"
    );
    assert_eq!(roll["result"]["content"][0]["type"], "text", "{roll}");

    // Closing stdin ends the server cleanly.
    drop(stdin);
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not exit after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit status {status}");
    reader.join().unwrap();
}

/// JSON-RPC 2.0 over the real binary: a parse error for garbage (id null), invalid requests,
/// invalid params with the request's id (also for a number no f64 holds), never silence.
#[test]
fn every_bad_line_gets_its_json_rpc_error() {
    let mut child = Command::new(server_bin())
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agents-server mcp");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut exchange = |line: &str| -> Value {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let answer = rx
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|e| panic!("no answer to {line}: {e}"));
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{answer}: {e}"))
    };
    let init = exchange(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"0"}}}"#,
    );
    assert_eq!(init["id"], 1, "{init}");
    for (line, code, id) in [
        ("this is not JSON at all", -32700, Value::Null),
        (
            r#"{"jsonrpc": "2.0", "id": 2, "method": "#,
            -32700,
            Value::Null,
        ),
        ("[1, 2, 3]", -32600, Value::Null),
        (r#"{"hello": "world"}"#, -32600, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"roll_rpg_dice","arguments":{"sides":1e999}}}"#,
            -32602,
            json!(3),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"four","method":"tools/call","params":{"arguments":{}}}"#,
            -32602,
            json!("four"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roll_rpg_dice","arguments":[20]}}"#,
            -32602,
            json!(5),
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"roll"}"#,
            -32602,
            json!(6),
        ),
    ] {
        let answer = exchange(line);
        assert_eq!(answer["jsonrpc"], "2.0", "{line}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
        assert_eq!(answer["id"], id, "{line}: {answer}");
    }
    // Still serving.
    let roll = exchange(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roll_rpg_dice","arguments":{"sides":20,"count":1,"seed":1}}}"#,
    );
    assert_eq!(roll["result"]["isError"], false, "{roll}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    reader.join().unwrap();
}

/// The GM tools on a campaign file over MCP, the file named inside `--campaign-dir`:
/// `move_options` read-only, a `move` applied and saved, a refused call an error result with its
/// tool feedback, the state check before the arguments.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gm_tools_act_on_a_campaign_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("campaign.json");
    let run = run_cli(
        &[
            "campaign",
            "new",
            "--party",
            "pc_001,pc_002",
            path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let client = connect_with(&["--campaign-dir", dir.path().to_str().unwrap()]).await;
    let tools = client.list_all_tools().await.unwrap();
    let options = tools
        .iter()
        .find(|t| t.name == "move_options")
        .expect("move_options is listed");
    assert_eq!(
        options.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );

    let name = "campaign.json";
    let out = call_ok(&client, "move_options", json!({"campaign": name})).await;
    assert_eq!(
        out["applied_actions"][0]["result"]["options"][0]["to_area_id"],
        "area_002"
    );
    let out = call_ok(&client, "move",
        json!({"campaign": name, "actor_id": "pc_002", "to_area_id": "area_002", "turn_actor_id": "pc_002"})).await;
    assert_eq!(out["tool_feedback"], Value::Null);
    let saved = agents_core::campaign::file::load(&path).unwrap().campaign;
    assert_eq!(saved.actors["pc_002"].position.as_deref(), Some("area_002"));

    // Refused: an error result carrying the contract's feedback; the file unchanged.
    let refused = call(&client, "move",
        json!({"campaign": name, "actor_id": "pc_002", "to_area_id": "area_001", "turn_actor_id": "pc_002"})).await;
    assert_eq!(refused.is_error, Some(true));
    let body = refused.structured_content.clone().unwrap();
    assert_eq!(
        body["tool_feedback"]["failed_calls"][0]["reason"],
        "invalid_args"
    );
    // A dying turn actor: the state decides before the (bad) arguments.
    call_ok(
        &client,
        "hp_delta",
        json!({"campaign": name, "target_character_id": "pc_001", "delta": -10, "cause": "trap"}),
    )
    .await;
    let refused = call(
        &client,
        "map_generate",
        json!({"campaign": name, "size": 99}),
    )
    .await;
    let body = refused.structured_content.clone().unwrap();
    assert_eq!(body["reason"], "actor_state_restricted");
    let missing = call(&client, "hp_delta", json!({"campaign": "none.json"})).await;
    assert_eq!(
        missing.structured_content.unwrap()["reason"],
        "invalid_path"
    );
    close(client).await;
}

/// An MCP host is not trusted with the machine's files: without `--campaign-dir` every path is
/// refused; with one, an absolute path, `..` and a symlink leading out are refused alike, a
/// FIFO inside is refused without waiting, and no file outside changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gm_tools_never_reach_files_outside_the_campaign_dir() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    let outside = dir.path().join("outside.json");
    std::fs::create_dir_all(&campaigns).unwrap();
    let run = run_cli(&["campaign", "new", outside.to_str().unwrap()], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let before = std::fs::read(&outside).unwrap();
    symlink(&outside, campaigns.join("link.json")).unwrap();
    let fifo = campaigns.join("pipe.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let hurt = |campaign: &str| json!({"campaign": campaign, "target_character_id": "pc_001", "delta": -3, "cause": "x"});
    let absolute = outside.to_str().unwrap();

    let client = connect().await;
    let refused = call(&client, "hp_delta", hurt(absolute)).await;
    assert_eq!(refused.is_error, Some(true));
    let body = refused.structured_content.unwrap();
    assert_eq!(body["reason"], "invalid_path");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("no campaign directory"),
        "{body}"
    );
    close(client).await;

    let client = connect_with(&["--campaign-dir", campaigns.to_str().unwrap()]).await;
    for (name, says) in [
        (absolute, "must be relative to the campaign directory"),
        (
            "../outside.json",
            "must be relative to the campaign directory",
        ),
        (
            "link.json",
            "no file 'link.json' inside the campaign directory",
        ),
        ("pipe.json", "'pipe.json' is a FIFO, not a regular file"),
    ] {
        let refused = call(&client, "hp_delta", hurt(name)).await;
        assert_eq!(refused.is_error, Some(true), "{name}");
        let body = refused.structured_content.unwrap();
        assert_eq!(body["reason"], "invalid_path", "{name}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(says),
            "{name}: {body}"
        );
    }
    close(client).await;
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        before,
        "the file outside is unchanged"
    );
}
