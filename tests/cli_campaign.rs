//! `agents-server campaign new | apply | turn`, run as a real process on real files, and a
//! process killed (SIGKILL) while it saves: the campaign always loads afterwards. And the trust
//! split for campaign files: `agents-server serve`'s clients (WebSocket `call_tool` and
//! `campaign_load`, MCP over HTTP at `/mcp`) reach only regular campaign files inside
//! `--campaign-dir`, while the operator's `agents-server tool` takes any path.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agents_core::campaign::file;
use serde_json::{Value, json};
use support::server::ServerProc;
use support::ws::Client;
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

/// The reply to each of `ids`, sent pipelined (replies of different kinds may come in any
/// order between them), by id.
async fn replies(client: &mut Client, ids: &[i64]) -> std::collections::BTreeMap<i64, Value> {
    let mut got = std::collections::BTreeMap::new();
    while got.len() < ids.len() {
        let reply = client.next_non_event().await;
        let id = reply["request_id"]
            .as_i64()
            .expect("a reply with a request_id");
        assert!(ids.contains(&id), "{reply}");
        got.insert(id, reply);
    }
    got
}

/// An `hp_delta` of −3 on `pc_001` of the campaign `name`.
fn hurt(name: &str) -> Value {
    json!({"campaign": name, "target_character_id": "pc_001", "delta": -3, "cause": "trap"})
}

/// `serve --campaign-dir`: over WebSocket and MCP over HTTP, an absolute path, `..` and a
/// symlink out are refused as `invalid_path`, a FIFO without waiting (pings and a new
/// connection answered meanwhile), JSON that is no campaign as `invalid_campaign`; no file
/// outside changes; a file inside is acted on. Without a campaign directory every path is
/// refused. The operator's own `agents-server tool` still takes the absolute path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_clients_reach_only_campaign_files_inside_the_campaign_dir() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let campaigns = dir.path().join("campaigns");
    let outside = dir.path().join("outside").join("campaign.json");
    std::fs::create_dir_all(campaigns.join("camp")).unwrap();
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    let inside = campaigns.join("camp").join("campaign.json");
    for path in [&inside, &outside] {
        let run = run_cli(&["campaign", "new", path_str(path)], None);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    let outside_before = std::fs::read(&outside).unwrap();
    symlink(&outside, campaigns.join("out.json")).unwrap();
    let fifo = campaigns.join("pipe.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let package = "{\"name\": \"tool\", \"version\": \"1.0.0\"}\n";
    std::fs::write(campaigns.join("package.json"), package).unwrap();
    let absolute = path_str(&outside).to_owned();
    let refusals = [
        (
            absolute.as_str(),
            "invalid_path",
            "must be relative to the campaign directory",
        ),
        (
            "../outside/campaign.json",
            "invalid_path",
            "must be relative to the campaign directory",
        ),
        (
            "out.json",
            "invalid_path",
            "no file 'out.json' inside the campaign directory",
        ),
        (
            "pipe.json",
            "invalid_path",
            "'pipe.json' is a FIFO, not a regular file",
        ),
        (
            "package.json",
            "invalid_campaign",
            "'package.json' is not a campaign file",
        ),
    ];

    let server = ServerProc::start(
        dir.path().join("serve.db"),
        &["--campaign-dir", path_str(&campaigns)],
        &[],
    );
    let mut ws = Client::connect(&server.url()).await;
    // Two loads of the FIFO and a ping, pipelined: all answered, nothing waits on the FIFO.
    for id in [1, 2] {
        ws.send(&json!({"type": "campaign_load", "request_id": id, "path": "pipe.json"}))
            .await;
    }
    ws.send(&json!({"type": "ping", "request_id": 3})).await;
    let got = replies(&mut ws, &[1, 2, 3]).await;
    assert_eq!(got[&3]["type"], "pong");
    for id in [1, 2] {
        assert_eq!(got[&id]["code"], "invalid_message", "{}", got[&id]);
        assert_eq!(
            got[&id]["message"],
            "'pipe.json' is a FIFO, not a regular file"
        );
    }
    Client::connect(&server.url()).await.assert_usable().await;

    for (name, reason, says) in refusals {
        let out = ws
            .request(json!({"type": "call_tool", "name": "hp_delta", "arguments": hurt(name)}))
            .await;
        assert_eq!(out["type"], "call_tool_response", "{name}: {out}");
        assert_eq!(out["is_error"], true, "{name}: {out}");
        assert_eq!(out["structured_content"]["reason"], reason, "{name}: {out}");
        let error = out["structured_content"]["error"].as_str().unwrap();
        assert!(error.contains(says), "{name}: {out}");
        let load = ws
            .request(json!({"type": "campaign_load", "path": name}))
            .await;
        assert_eq!(load["code"], "invalid_message", "{name}: {load}");
        assert!(
            load["message"].as_str().unwrap().contains(says),
            "{name}: {load}"
        );
    }
    let out = ws
        .request(json!({"type": "call_tool", "name": "hp_delta", "arguments": hurt("camp/campaign.json")}))
        .await;
    assert_eq!(out["is_error"], false, "{out}");
    assert_eq!(
        out["structured_content"]["applied_actions"][0]["result"]["new_hp"],
        7
    );

    // MCP over HTTP: the same registry, the same refusals.
    agents_llm::client::install_tls_provider();
    let mcp = mcp_http(&server).await;
    for (name, reason, says) in refusals {
        let result = mcp_call(&mcp, "hp_delta", hurt(name)).await;
        assert_eq!(result.is_error, Some(true), "{name}");
        let body = result.structured_content.unwrap();
        assert_eq!(body["reason"], reason, "{name}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(says),
            "{name}: {body}"
        );
    }
    let result = mcp_call(&mcp, "hp_delta", hurt("camp/campaign.json")).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    mcp.cancel().await.unwrap();
    ws.assert_usable().await;
    drop(server);

    assert_eq!(
        std::fs::read(&outside).unwrap(),
        outside_before,
        "the file outside is unchanged"
    );
    assert_eq!(
        std::fs::read_to_string(campaigns.join("package.json")).unwrap(),
        package
    );
    assert_eq!(file::load(&inside).unwrap().campaign.actors["pc_001"].hp, 4);

    // No campaign directory: every path is refused.
    let server = ServerProc::start(dir.path().join("bare.db"), &[], &[]);
    let mut ws = Client::connect(&server.url()).await;
    let out = ws
        .request(json!({"type": "call_tool", "name": "hp_delta", "arguments": hurt(&absolute)}))
        .await;
    assert_eq!(out["structured_content"]["reason"], "invalid_path", "{out}");
    assert!(
        out["structured_content"]["error"]
            .as_str()
            .unwrap()
            .contains("no campaign directory"),
        "{out}"
    );
    drop(server);
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        outside_before,
        "the file outside is unchanged"
    );

    // The operator's shell is trusted: `agents-server tool` takes the absolute path.
    let run = run_cli(&["tool", "hp_delta", &hurt(&absolute).to_string()], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        file::load(&outside).unwrap().campaign.actors["pc_001"].hp,
        7
    );
}

/// An MCP session over Streamable HTTP with `server`'s `/mcp`.
async fn mcp_http(server: &ServerProc) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    let url = format!("http://{}/mcp", server.addr);
    tokio::time::timeout(
        Duration::from_secs(30),
        ().serve(StreamableHttpClientTransport::from_uri(url)),
    )
    .await
    .expect("initialize timed out")
    .expect("initialize over HTTP")
}

/// `tools/call` of `name` with `args`.
async fn mcp_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &str,
    args: Value,
) -> rmcp::model::CallToolResult {
    let mut params = rmcp::model::CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client.call_tool(params).await.expect("tools/call")
}
