//! Trust boundaries of `agents-server serve`, end to end: what a client holding the token may
//! make the server do with a brain. A loopback listener stands in for an attacker's server and
//! a command that would write a marker file for a command run; each refusal is checked
//! together with its consequence — nothing reached the listener, nothing ran, no secret left.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agents_fakellm::{Behaviour, FakeServer};
use serde_json::{Value, json};
use support::server::ServerProc;
use support::ws::{Client, ok, quiet_agent, spawn};

/// A variable only the server's environment has.
const OPERATOR_SECRET: &str = "operator-db-password-7f3a";
/// The operator's own model key, in the server's environment.
const OPERATOR_KEY: &str = "sk-operator-key-91c2";

/// An address a client names: every connection is counted and what it sent kept; it answers
/// 404 with a body that must never reach a client.
struct Attacker {
    port: u16,
    connections: Arc<AtomicUsize>,
    received: Arc<Mutex<Vec<u8>>>,
}

impl Attacker {
    fn start() -> Attacker {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let received = Arc::new(Mutex::new(Vec::new()));
        let (count, sink) = (connections.clone(), received.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                let mut buf = [0u8; 8192];
                if let Ok(n) = stream.read(&mut buf) {
                    sink.lock().unwrap().extend_from_slice(&buf[..n]);
                }
                let body = "INTERNAL-ONLY: db at 10.0.0.7, token tok-internal";
                let _ = write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Attacker {
            port,
            connections,
            received,
        }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn received(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap()).into_owned()
    }
}

/// `serve` with the operator's secrets in its environment.
fn serve(dir: &Path, extra: &[&str]) -> ServerProc {
    ServerProc::start(
        dir.join("agents.db"),
        extra,
        &[
            ("OPERATOR_DB_PASSWORD", OPERATOR_SECRET),
            ("OPENAI_API_KEY", OPERATOR_KEY),
            ("ANTHROPIC_API_KEY", OPERATOR_KEY),
            ("OLLAMA_API_KEY", OPERATOR_KEY),
        ],
    )
}

/// A spawn request with `brain`; the reply.
async fn spawn_with(client: &mut Client, brain: Value) -> Value {
    let mut config = quiet_agent("Probe");
    config["brain"] = brain;
    client
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await
}

/// Spawns an agent with `brain` (which must be accepted) and says "Hi" to it; its id.
async fn spawn_and_greet(client: &mut Client, brain: Value) -> String {
    let reply = spawn_with(client, brain).await;
    let id = ok(&reply, "agent_spawn_response")["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = client
        .request(json!({"type": "send_message", "agent_id": id, "content": "Hi"}))
        .await;
    ok(&said, "send_message_response");
    id
}

fn refused(reply: &Value, says: &str) {
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "brain_not_allowed", "{reply}");
    let message = reply["message"].as_str().unwrap();
    assert!(message.contains(says), "{says:?} not in {message}");
}

/// Every byte of the database files (the WAL included): where a stored key would be.
fn database_bytes(dir: &Path) -> String {
    let mut all = Vec::new();
    for name in ["agents.db", "agents.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.join(name)) {
            all.extend(bytes);
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

/// The brains that, on the current main before this policy, made the server leak a variable,
/// run a command or call an address: all refused by default, and none of it happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_client_names_brains_and_builds_none() {
    let dir = tempfile::tempdir().unwrap();
    let attacker = Attacker::start();
    let marker = dir.path().join("ran");
    let server = serve(dir.path(), &[]);
    let mut c = Client::connect(&server.url()).await;

    let leak = json!({"provider": "openai", "base_url": attacker.base_url(), "model": "m",
                      "api_key_env": "OPERATOR_DB_PASSWORD"});
    refused(&spawn_with(&mut c, leak).await, "--allow-client-brains");
    let run = json!({"provider": "cli",
                     "command": ["sh", "-c", format!("id > {}", marker.display())]});
    refused(&spawn_with(&mut c, run).await, "no brain objects");
    let default_key = json!({"provider": "anthropic", "base_url": attacker.base_url(),
                             "model": "m"});
    refused(&spawn_with(&mut c, default_key).await, "no brain objects");
    // A spawn that names its brain with `cli_backend`: a preset, which is accepted.
    let scripted = c
        .request(json!({"type": "agent_spawn_request",
                        "agent_config": {"name": "Ada", "cli_backend": "scripted"}}))
        .await;
    ok(&scripted, "agent_spawn_response");
    let claude = spawn_with(&mut c, json!("claude")).await;
    assert_ne!(claude["code"], "brain_not_allowed", "{claude}");
    c.assert_usable().await;

    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(attacker.connections(), 0, "the server called the address");
    assert!(!marker.exists(), "the command ran");
    assert!(!server.stderr.text().contains(OPERATOR_SECRET));
}

/// With `--allow-client-brains`, a client builds model brains with its own key and nothing
/// else: never a variable, a header, a command or the operator's key; an upstream's error body
/// goes to the log, not to the client; the key is never stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_client_brains_bring_their_own_key_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let attacker = Attacker::start();
    let marker = dir.path().join("ran");
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let mut server = serve(dir.path(), &["--allow-client-brains"]);
    let mut c = Client::connect(&server.url()).await;

    for (brain, says) in [
        (
            json!({"provider": "openai", "base_url": attacker.base_url(), "model": "m",
                   "api_key_env": "OPERATOR_DB_PASSWORD"}),
            "brain.api_key_env is not taken from a client",
        ),
        (
            json!({"provider": "openai", "base_url": attacker.base_url(), "model": "m",
                   "api_key": "k", "headers": {"X-Api-Key": "x"}}),
            "brain.headers is not taken from a client",
        ),
        (
            json!({"provider": "cli",
                   "command": ["sh", "-c", format!("id > {}", marker.display())]}),
            "not 'cli'",
        ),
        (
            json!({"provider": "openai", "base_url": attacker.base_url(), "model": "m"}),
            "brain.api_key is required",
        ),
    ] {
        refused(&spawn_with(&mut c, brain).await, says);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(attacker.connections(), 0, "the server called the address");
    assert!(!marker.exists(), "the command ran");

    // The client's own key, to the client's own model: it thinks, with that key only.
    fake.push(Behaviour::text("Hello from the client's model."));
    let own = json!({"provider": "openai", "base_url": fake.openai_base(), "model": "fake-1",
                     "api_key": "sk-client-own-5d1e"});
    let id = spawn_and_greet(&mut c, own).await;
    c.event(|m| m["type"] == "agent_speech" && m["agent_id"] == id.as_str())
        .await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-client-own-5d1e")
    );

    // A key of the client's, to an address that answers 404 with internal details: the
    // client learns the status and the provider, the log has the body.
    let probe = json!({"provider": "openai", "base_url": attacker.base_url(), "model": "m",
                       "api_key": "sk-client-probe", "max_retries": 0});
    let probe_id = spawn_and_greet(&mut c, probe).await;
    let error = c
        .event(|m| m["type"] == "agent_error" && m["agent_id"] == probe_id.as_str())
        .await;
    let message = error["message"].as_str().unwrap();
    assert_eq!(error["code"], "brain_model_not_found", "{error}");
    assert!(message.contains("404"), "{message}");
    assert!(!message.contains("INTERNAL-ONLY"), "{message}");
    assert!(!message.contains("127.0.0.1"), "{message}");
    server.wait_log("INTERNAL-ONLY").await;
    let sent = attacker.received();
    assert!(sent.contains("Bearer sk-client-probe"), "{sent}");
    assert!(!sent.contains(OPERATOR_KEY) && !sent.contains(OPERATOR_SECRET));

    c.assert_usable().await;
    server.terminate();
    let stored = database_bytes(dir.path());
    assert!(stored.contains(&id), "the agent is stored");
    assert!(!stored.contains("sk-client-own-5d1e") && !stored.contains("sk-client-probe"));
    let log = server.stderr.text();
    assert!(!log.contains("sk-client") && !log.contains(OPERATOR_KEY));
}

/// A resumed agent whose brain brought its own key needs the key again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inline_key_is_not_stored_so_a_resume_asks_for_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let brain = json!({"provider": "openai", "base_url": fake.openai_base(), "model": "fake-1",
                       "api_key": "sk-client-resume"});
    let id = {
        let mut server = serve(dir.path(), &["--allow-client-brains"]);
        let mut c = Client::connect(&server.url()).await;
        let id = ok(
            &spawn_with(&mut c, brain.clone()).await,
            "agent_spawn_response",
        )["agent_id"]
            .as_str()
            .unwrap()
            .to_owned();
        drop(c);
        server.terminate();
        id
    };
    let server = serve(dir.path(), &["--allow-client-brains"]);
    let mut c = Client::connect(&server.url()).await;
    let again = c
        .request(json!({"type": "agent_spawn_request", "agent_config": {"agent_id": id}}))
        .await;
    assert_eq!(again["code"], "invalid_config", "{again}");
    assert!(
        again["message"]
            .as_str()
            .unwrap()
            .contains("brain.api_key was given with the brain object and is not stored"),
        "{again}"
    );
    let mut config = json!({"agent_id": id});
    config["brain"] = brain;
    let resumed = c
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await;
    assert_eq!(
        ok(&resumed, "agent_spawn_response")["agent_id"],
        id.as_str()
    );
}

/// `--client-brain-origins` confines where a client's brain object may point, and
/// `--no-client-presets` leaves clients the operator's profiles only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_and_presets_are_the_operators_to_allow() {
    let dir = tempfile::tempdir().unwrap();
    let attacker = Attacker::start();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        json!({"profiles": {"local": {"provider": "scripted"}}}).to_string(),
    )
    .unwrap();
    let server = serve(
        dir.path(),
        &[
            "--brains",
            brains.to_str().unwrap(),
            "--allow-client-brains",
            "--client-brain-origins",
            &fake.url(),
            "--no-client-presets",
        ],
    );
    let mut c = Client::connect(&server.url()).await;
    let elsewhere = json!({"provider": "openai", "base_url": attacker.base_url(),
                           "model": "m", "api_key": "k"});
    refused(
        &spawn_with(&mut c, elsewhere).await,
        &format!("http://127.0.0.1:{} is not an origin", attacker.port),
    );
    let listed = json!({"provider": "openai", "base_url": fake.openai_base(),
                        "model": "m", "api_key": ""});
    ok(&spawn_with(&mut c, listed).await, "agent_spawn_response");
    refused(&spawn_with(&mut c, json!("claude")).await, "(local)");
    refused(&spawn_with(&mut c, json!("scripted")).await, "preset");
    spawn(&mut c, json!({"name": "Bo", "brain": "local"})).await;
    assert_eq!(attacker.connections(), 0);
}

/// An `ollama` brain object from a client is an HTTP provider's like the others: its own key
/// (here none), an origin on the list (its default, a local Ollama, included), none of the
/// settings of the operator's Ollama (`num_ctx`, `keep_alive`), and the operator's
/// `OLLAMA_API_KEY` is never lent to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_ollama_brain_is_held_to_the_same_rules() {
    let dir = tempfile::tempdir().unwrap();
    let attacker = Attacker::start();
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let server = serve(
        dir.path(),
        &[
            "--allow-client-brains",
            "--client-brain-origins",
            &fake.url(),
        ],
    );
    let mut c = Client::connect(&server.url()).await;
    let attacker_ollama = format!("http://127.0.0.1:{}", attacker.port);
    for (brain, says) in [
        (
            json!({"provider": "ollama", "base_url": fake.ollama_base(), "model": "m"}),
            "brain.api_key is required",
        ),
        (
            json!({"provider": "ollama", "base_url": fake.ollama_base(), "model": "m",
                   "api_key": "", "num_ctx": 1_048_576}),
            "brain.num_ctx is not taken from a client",
        ),
        (
            json!({"provider": "ollama", "base_url": fake.ollama_base(), "model": "m",
                   "api_key": "", "keep_alive": -1}),
            "brain.keep_alive is not taken from a client",
        ),
        (
            json!({"provider": "ollama", "base_url": attacker_ollama, "model": "m",
                   "api_key": ""}),
            &format!("{attacker_ollama} is not an origin"),
        ),
        // Its default is a local Ollama, which this list does not name.
        (
            json!({"provider": "ollama", "model": "m", "api_key": ""}),
            "http://127.0.0.1:11434 is not an origin",
        ),
    ] {
        refused(&spawn_with(&mut c, brain).await, says);
    }
    fake.push(Behaviour::text("Hello from the client's Ollama."));
    let own = json!({"provider": "ollama", "base_url": fake.ollama_base(), "model": "llama3.2",
                     "api_key": ""});
    let id = spawn_and_greet(&mut c, own).await;
    c.event(|m| m["type"] == "agent_speech" && m["agent_id"] == id.as_str())
        .await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/api/chat");
    assert!(
        requests[0].header("authorization").is_none(),
        "the operator's OLLAMA_API_KEY was lent: {:?}",
        requests[0].headers
    );
    assert_eq!(attacker.connections(), 0);
    c.assert_usable().await;
}

/// An address on the origin list that answers every call with a redirect (`status`) to
/// what `target` holds when the call comes; counts the calls it got.
fn redirector(status: u16, target: Arc<Mutex<String>>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let calls = Arc::new(AtomicUsize::new(0));
    let count = calls.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 16384];
            let _ = stream.read(&mut buf);
            let target = target.lock().unwrap().clone();
            let _ = write!(
                stream,
                "HTTP/1.1 {status} Moved\r\nlocation: {target}\r\ncontent-length: 0\r\n\
                 connection: close\r\n\r\n"
            );
        }
    });
    (format!("http://127.0.0.1:{port}"), calls)
}

/// A client brain on a listed origin that answers with a redirect — 301, 302, 307, 308 to an
/// address off the list, a 307 to the server's own `/mcp` — is not followed: the prompt and
/// the key go nowhere else, and the agent's error says the provider redirected (naming no
/// address). `base_url: null` is the provider's default address, checked against the list
/// as a `base_url` left out is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_brains_follow_no_redirect_and_null_is_the_default_url() {
    let dir = tempfile::tempdir().unwrap();
    let attacker = Attacker::start();
    let off_list = Arc::new(Mutex::new(format!(
        "{}/chat/completions",
        attacker.base_url()
    )));
    let own_mcp = Arc::new(Mutex::new(String::new()));
    let mut cases = Vec::new();
    for status in [301u16, 302, 307, 308] {
        cases.push((status, redirector(status, off_list.clone())));
    }
    cases.push((307, redirector(307, own_mcp.clone())));
    let origins: Vec<&str> = cases
        .iter()
        .map(|(_, (origin, _))| origin.as_str())
        .collect();
    let server = serve(
        dir.path(),
        &[
            "--allow-client-brains",
            "--client-brain-origins",
            &origins.join(","),
        ],
    );
    *own_mcp.lock().unwrap() = format!("http://{}/mcp", server.addr());
    let mut c = Client::connect(&server.url()).await;
    for (status, (origin, calls)) in &cases {
        let brain = json!({"provider": "openai", "base_url": format!("{origin}/v1"),
                           "model": "m", "api_key": "sk-client-redirect", "max_retries": 0});
        let id = spawn_and_greet(&mut c, brain).await;
        let error = c
            .event(|m| m["type"] == "agent_error" && m["agent_id"] == id.as_str())
            .await;
        assert_eq!(error["code"], "brain_error", "{status}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("redirect ({status}), which is not followed")),
            "{message}"
        );
        assert!(!message.contains("127.0.0.1"), "{message}");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "{status}: one call, to the listed origin"
        );
    }
    server.wait_log("model calls follow no redirect").await;
    assert_eq!(attacker.connections(), 0, "a redirect was followed");

    // base_url: null is api.openai.com / api.anthropic.com, not on the list: refused as when
    // it is left out, and nothing is called.
    for provider in ["openai", "anthropic"] {
        for brain in [
            json!({"provider": provider, "model": "m", "api_key": "k", "base_url": null}),
            json!({"provider": provider, "model": "m", "api_key": "k"}),
        ] {
            refused(&spawn_with(&mut c, brain).await, "is not an origin");
        }
    }
    c.assert_usable().await;
}

/// Durations a client sets are bounded (an agent would otherwise stay thinking or speaking for
/// ever), each refusal naming the field and its limit; a refused value is not echoed back
/// whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_durations_are_bounded_and_its_values_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path(), &[]);
    let mut c = Client::connect(&server.url()).await;
    for (field, value, says) in [
        ("thinking_seconds", json!(1e20), "600"),
        ("speaking_seconds", json!(1e300), "600"),
        ("idle_think_seconds", json!(1e9), "86400"),
    ] {
        let mut config = quiet_agent("Slow");
        config[field] = value;
        let reply = c
            .request(json!({"type": "agent_spawn_request", "agent_config": config}))
            .await;
        assert_eq!(reply["type"], "error", "{reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.contains(field) && message.contains(says),
            "{message}"
        );
    }
    let mut config = quiet_agent("Forgetful");
    config["memory"] = json!({"recency_half_life_seconds": 1e300});
    let reply = c
        .request(json!({"type": "agent_spawn_request", "agent_config": config}))
        .await;
    assert_eq!(reply["type"], "error", "{reply}");
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .contains("recency_half_life_seconds"),
        "{reply}"
    );
    // A tool argument of 4,001 characters where a number belongs: named, not echoed.
    let long = "7".repeat(4_001);
    let reply = c
        .request(json!({"type": "call_tool", "name": "roll_rpg_dice",
                        "arguments": {"sides": long, "count": 1}}))
        .await;
    let text = reply.to_string();
    assert!(text.len() < 1_000, "{text}");
    assert!(text.contains("4001 characters"), "{text}");
    spawn(&mut c, quiet_agent("Fine")).await;
    c.assert_usable().await;
}

/// A bad origin list stops the server before it listens, naming the entry.
#[test]
fn a_bad_origin_list_is_refused_at_start() {
    let out = std::process::Command::new(support::server_bin())
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--allow-client-brains",
            "--client-brain-origins",
            "https://api.openai.com/v1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not an origin"), "{stderr}");
}

/// A client's brains on endpoints that hang — four agents on each of two, as a probe had it,
/// against the server's default limits — do not keep a healthy endpoint's agent waiting: it
/// answers while the eight calls still hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_a_client_made_hang_do_not_hold_back_a_healthy_one() {
    let dir = tempfile::tempdir().unwrap();
    let hanging = [
        FakeServer::start("127.0.0.1:0").await.unwrap(),
        FakeServer::start("127.0.0.1:0").await.unwrap(),
    ];
    for fake in &hanging {
        fake.set_default(Behaviour::Hang);
    }
    let healthy = FakeServer::start("127.0.0.1:0").await.unwrap();
    healthy.set_default(Behaviour::text("Right away."));
    let server = serve(dir.path(), &["--allow-client-brains"]);
    let mut c = Client::connect(&server.url()).await;
    for fake in &hanging {
        let stuck = json!({"provider": "openai", "base_url": fake.openai_base(), "model": "m",
                           "api_key": "k", "timeout_seconds": 120, "max_retries": 0});
        for _ in 0..4 {
            spawn_and_greet(&mut c, stuck.clone()).await;
        }
    }
    for _ in 0..400 {
        if hanging.iter().all(|f| f.requests().len() == 4) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(hanging.each_ref().map(|f| f.requests().len()), [4, 4]);
    let fine = json!({"provider": "openai", "base_url": healthy.openai_base(), "model": "m",
                      "api_key": "k"});
    let id = spawn_and_greet(&mut c, fine).await;
    c.event(|m| m["type"] == "agent_speech" && m["agent_id"] == id.as_str())
        .await;
    assert_eq!(healthy.requests().len(), 1);
    assert_eq!(
        hanging.each_ref().map(|f| f.requests().len()),
        [4, 4],
        "the hanging calls are still in flight"
    );
    c.assert_usable().await;
}
