//! `agents-server serve --resume`, end to end, when some stored agents cannot start: the real
//! binary, a real SQLite file, real WebSocket connections. An agent whose brain brought its own
//! key (never stored), one whose brain profile left `--brains`, and one whose `local` model file
//! is gone each wait, stored, with the reason — in the log, in `list_stored_agents`, counted in
//! `/readyz` — while the server serves and the other agents run; each starts once a client gives
//! what it lacked.

mod support;

use std::path::Path;

use agents_fakellm::FakeServer;
use serde_json::{Value, json};
use support::server::ServerProc;
use support::ws::{Client, ok, quiet_agent, spawn};

/// The client's own key: it must never be stored, logged or listed.
const CLIENT_KEY: &str = "sk-client-own-resume-3b7e";

fn write_brains(path: &Path, profiles: Value) {
    std::fs::write(path, json!({ "profiles": profiles }).to_string()).unwrap();
}

fn serve(dir: &Path, extra: &[&str]) -> ServerProc {
    let brains = dir.join("brains.json");
    let mut args = vec![
        "--allow-client-brains",
        "--brains",
        brains.to_str().unwrap(),
        "--idle-think-seconds",
        "600",
    ];
    args.extend_from_slice(extra);
    ServerProc::start(dir.join("agents.db"), &args, &[])
}

/// The stored agents, by id.
async fn stored(c: &mut Client) -> serde_json::Map<String, Value> {
    let reply = c.request(json!({"type": "list_stored_agents"})).await;
    ok(&reply, "list_stored_agents_response")["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["agent_id"].as_str().unwrap().to_owned(), a.clone()))
        .collect()
}

async fn running(c: &mut Client, id: &str) -> bool {
    let reply = c
        .request(json!({"type": "get_agent_state", "agent_id": id}))
        .await;
    reply["type"] == "get_agent_state_response"
}

/// Resumes `agent_id` with `config` added; the reply must be its spawn response.
async fn resume(c: &mut Client, agent_id: &str, mut config: Value) {
    config["agent_id"] = json!(agent_id);
    let reply = c
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await;
    assert_eq!(ok(&reply, "agent_spawn_response")["agent_id"], agent_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_serves_and_the_agents_that_cannot_start_wait_for_what_they_lack() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let model = dir.path().join("tiny.gguf");
    agents_testkit::gguf::write_tiny_model(&model).unwrap();
    let brains = dir.path().join("brains.json");
    write_brains(
        &brains,
        json!({
            "steady": {"provider": "scripted"},
            "fleeting": {"provider": "scripted"},
            "tiny": {"provider": "local", "model": model.to_str().unwrap()},
        }),
    );
    let own_brain = json!({"provider": "openai", "base_url": fake.openai_base(),
                           "model": "fake-1", "api_key": CLIENT_KEY});

    // First run: a normal agent, one with the client's own key, one on a profile that will
    // leave, one on a model file that will go.
    let (normal, keyed, profiled, local) = {
        let mut server = serve(dir.path(), &[]);
        let mut c = Client::connect(&server.url()).await;
        let normal = spawn(&mut c, quiet_agent("Normal")).await;
        let mut config = quiet_agent("Keyed");
        config["brain"] = own_brain.clone();
        let keyed = spawn(&mut c, config).await;
        let mut config = quiet_agent("Profiled");
        config["brain"] = json!("fleeting");
        let profiled = spawn(&mut c, config).await;
        let mut config = quiet_agent("Local");
        config["brain"] = json!("tiny");
        let local = spawn(&mut c, config).await;
        drop(c);
        server.terminate();
        (normal, keyed, profiled, local)
    };

    // The operator drops a profile and the model file is gone.
    write_brains(
        &brains,
        json!({
            "steady": {"provider": "scripted"},
            "tiny": {"provider": "local", "model": model.to_str().unwrap()},
        }),
    );
    std::fs::remove_file(&model).unwrap();

    // The restart serves; the normal agent runs, the other three wait.
    let mut server = serve(dir.path(), &["--resume"]);
    let mut c = Client::connect(&server.url()).await;
    assert!(running(&mut c, &normal).await, "the normal agent runs");
    for id in [&keyed, &profiled, &local] {
        assert!(!running(&mut c, id).await, "{id} runs");
    }
    let agents = stored(&mut c).await;
    assert!(agents[&normal].get("waiting_for").is_none(), "{agents:?}");
    let expected = [
        (
            &keyed,
            "api_key",
            "brain.api_key was given with the brain object",
        ),
        (&profiled, "brain", "unknown brain 'fleeting'"),
        (&local, "model_file", "does not exist"),
    ];
    for (id, reason, says) in expected {
        let waiting = &agents[id]["waiting_for"];
        assert_eq!(waiting["reason"], reason, "{id}: {waiting}");
        let message = waiting["message"].as_str().unwrap();
        assert!(message.contains(says), "{id}: {message}");
        assert!(
            agents[id]["removed_at"].is_null(),
            "{id} is still resumable"
        );
        server
            .wait_log(&format!("agent={id} reason={reason}"))
            .await;
    }
    let listed = serde_json::to_string(&agents).unwrap();
    assert!(!listed.contains(CLIENT_KEY), "{listed}");

    // /readyz: ready, and the waiting agents counted by reason (no id, no message).
    let (status, body) = server.get("/readyz").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "ready", "{body}");
    assert_eq!(
        body["waiting_agents"],
        json!({"count": 3, "reasons": {"api_key": 1, "brain": 1, "model_file": 1}}),
        "{body}"
    );
    let text = body.to_string();
    assert!(
        !text.contains(&keyed) && !text.contains("fleeting"),
        "{text}"
    );

    // Each starts once it is given what it lacked: the brain object with its key again, another
    // profile, the model file back.
    let mut config = json!({});
    config["brain"] = own_brain;
    resume(&mut c, &keyed, config).await;
    resume(&mut c, &profiled, json!({"brain": "steady"})).await;
    agents_testkit::gguf::write_tiny_model(&model).unwrap();
    resume(&mut c, &local, json!({})).await;
    for id in [&normal, &keyed, &profiled, &local] {
        assert!(running(&mut c, id).await, "{id} runs");
    }
    let agents = stored(&mut c).await;
    assert!(
        agents.values().all(|a| a.get("waiting_for").is_none()),
        "{agents:?}"
    );
    let (status, body) = server.get("/readyz").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["waiting_agents"], json!({"count": 0, "reasons": {}}));

    server.terminate();
    assert!(!server.stderr.text().contains(CLIENT_KEY));
}

/// A waiting agent is terminated as a running one is: a later resume skips it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_agent_can_be_terminated() {
    let dir = tempfile::tempdir().unwrap();
    write_brains(
        &dir.path().join("brains.json"),
        json!({"fleeting": {"provider": "scripted"}}),
    );
    let id = {
        let mut server = serve(dir.path(), &[]);
        let mut c = Client::connect(&server.url()).await;
        let mut config = quiet_agent("Profiled");
        config["brain"] = json!("fleeting");
        let id = spawn(&mut c, config).await;
        drop(c);
        server.terminate();
        id
    };
    write_brains(&dir.path().join("brains.json"), json!({}));
    let mut server = serve(dir.path(), &["--resume"]);
    let mut c = Client::connect(&server.url()).await;
    assert_eq!(stored(&mut c).await[&id]["waiting_for"]["reason"], "brain");
    let reply = c
        .request(json!({"type": "agent_terminate_request", "agent_id": id}))
        .await;
    ok(&reply, "agent_terminate_response");
    let agents = stored(&mut c).await;
    assert!(agents[&id].get("waiting_for").is_none(), "{agents:?}");
    assert!(agents[&id]["removed_at"].is_string(), "{agents:?}");
    drop(c);
    server.terminate();

    let mut server = serve(dir.path(), &["--resume"]);
    let mut c = Client::connect(&server.url()).await;
    assert!(stored(&mut c).await[&id].get("waiting_for").is_none());
    let (_, body) = server.get("/readyz").await;
    assert_eq!(body["waiting_agents"]["count"], 0, "{body}");
    drop(c);
    server.terminate();
}
