//! The ceiling of an agent's memories and the rate of memory writes, end to end: the real
//! `agents-server serve` on loopback, a client holding the token on a real WebSocket and over
//! MCP (Streamable HTTP). A client may lower the operator's ceiling but not lift it nor turn it
//! off; planted memories stop at the ceiling, running or stored; MCP tool calls are
//! rate-limited as the WebSocket's requests are.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::server::ServerProc;
use support::ws::{Client, ok, quiet_agent, spawn};

/// A client holding `token` (`Authorization: Bearer`), the welcome read.
async fn connect(url: &str, token: &str) -> Client {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("connect with the token");
    let mut client = Client::over(ws);
    let welcome = client.next().await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    client
}

/// A spawn request with `memory` settings; the reply.
async fn spawn_with_memory(client: &mut Client, memory: Value) -> Value {
    let mut config = quiet_agent("Probe");
    config["memory"] = memory;
    client
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await
}

/// Plants `n` facts in `agent` over the WebSocket; the last one's id.
async fn plant(client: &mut Client, agent: &str, n: usize) -> i64 {
    let mut last = 0;
    for i in 0..n {
        let reply = client
            .request(json!({"type": "remember", "agent_id": agent,
                            "memory": {"text": format!("Fact number {i}."), "importance": 5}}))
            .await;
        last = ok(&reply, "remember_response")["memory_id"]
            .as_i64()
            .unwrap();
    }
    last
}

/// The ids of `agent`'s memories (at most 500).
async fn memory_ids(client: &mut Client, agent: &str) -> Vec<i64> {
    let page = client
        .request(json!({"type": "list_memories", "agent_id": agent, "limit": 500}))
        .await;
    ok(&page, "list_memories_response")["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_lowers_the_memory_ceiling_but_never_lifts_it_and_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &[
            "--token",
            "ceiling-token",
            "--memory",
            r#"{"max_memories": 1000}"#,
            "--rate-limit",
            "5000",
        ],
        &[],
    );
    let mut client = connect(&server.url(), "ceiling-token").await;
    // No cap, or one above the operator's: refused, naming the field and the server's ceiling;
    // no agent is made.
    for asked in [0, 1_001, 1_000_000] {
        let reply = spawn_with_memory(&mut client, json!({"max_memories": asked})).await;
        assert_eq!(reply["type"], "error", "{reply}");
        assert_eq!(reply["code"], "invalid_config", "{reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.contains("memory.max_memories must be from 200 to 1000")
                && message.contains(&format!("got {asked}")),
            "{message}"
        );
    }
    let agents = client.request(json!({"type": "list_agents"})).await;
    assert_eq!(
        ok(&agents, "list_agents_response")["agents"]
            .as_array()
            .unwrap()
            .len(),
        0,
        "{agents}"
    );
    // Lower is fine, and it holds: 1,500 planted facts leave the newest 200.
    let reply = spawn_with_memory(&mut client, json!({"max_memories": 200})).await;
    let mira = ok(&reply, "agent_spawn_response")["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let last = plant(&mut client, &mira, 1_500).await;
    let ids = memory_ids(&mut client, &mira).await;
    assert_eq!(ids.len(), 200);
    assert_eq!(ids.last(), Some(&last), "the newest is kept");
    // Stopped, it keeps the same ceiling.
    let reply = client
        .request(json!({"type": "agent_terminate_request", "agent_id": mira}))
        .await;
    ok(&reply, "agent_terminate_response");
    let last = plant(&mut client, &mira, 300).await;
    let ids = memory_ids(&mut client, &mira).await;
    assert_eq!(ids.len(), 200);
    assert_eq!(ids.last(), Some(&last));
    // Without settings of its own, an agent keeps the operator's ceiling.
    let ivy = spawn(&mut client, quiet_agent("Ivy")).await;
    plant(&mut client, &ivy, 1_100).await;
    let count = client
        .request(json!({"type": "list_memories", "agent_id": ivy, "limit": 500}))
        .await;
    ok(&count, "list_memories_response");
    let page_two = count["next_cursor"].clone();
    assert!(page_two.is_string(), "{count}");
    let mut total = count["memories"].as_array().unwrap().len();
    let mut cursor = page_two;
    while let Some(c) = cursor.as_str().map(str::to_owned) {
        let page = client
            .request(
                json!({"type": "list_memories", "agent_id": ivy, "limit": 500,
                            "cursor": c}),
            )
            .await;
        total += ok(&page, "list_memories_response")["memories"]
            .as_array()
            .unwrap()
            .len();
        cursor = page["next_cursor"].clone();
    }
    assert_eq!(total, 1_000, "the operator's ceiling");
    client.assert_usable().await;
}

/// MCP over HTTP: a session's `tools/call`s beyond the WebSocket's rate and burst are failed
/// results with the reason `rate_limited`, and what they asked for is not done; the bucket
/// refills.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tool_calls_beyond_the_rate_are_rate_limited() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    agents_llm::client::install_tls_provider();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--token", "mcp-token", "--rate-limit", "20"],
        &[],
    );
    let mut ws = connect(&server.url(), "mcp-token").await;
    let mira = spawn(&mut ws, quiet_agent("Mira")).await;
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.addr))
            .auth_header("mcp-token");
    let mcp = tokio::time::timeout(
        Duration::from_secs(30),
        ().serve(StreamableHttpClientTransport::from_config(config)),
    )
    .await
    .expect("initialize timed out")
    .expect("initialize over HTTP");
    let remember = |n: usize| {
        CallToolRequestParams::new("remember".to_owned()).with_arguments(
            json!({"agent_id": mira, "text": format!("Planted over MCP {n}.")})
                .as_object()
                .unwrap()
                .clone(),
        )
    };
    let (mut stored, mut limited) = (0, 0);
    for n in 0..100 {
        let result = mcp.call_tool(remember(n)).await.expect("tools/call");
        if result.is_error == Some(true) {
            let content = result.structured_content.expect("structuredContent");
            assert_eq!(content["reason"], "rate_limited", "{content}");
            limited += 1;
        } else {
            stored += 1;
        }
    }
    assert!(limited >= 50, "{stored} stored, {limited} limited");
    assert!(
        (20..=50).contains(&stored),
        "the burst and the refill: {stored}"
    );
    let ids = memory_ids(&mut ws, &mira).await;
    assert_eq!(ids.len(), stored, "a refused call stores nothing");
    // A second later the bucket has refilled.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let result = mcp.call_tool(remember(100)).await.expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    mcp.cancel().await.expect("close the session");
    ws.assert_usable().await;
}
