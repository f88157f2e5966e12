//! Keys are secrets: after a full run with a key, the key is nowhere in the database files, the
//! trace, the events or the stored config — only in the request's header. One test in its own
//! binary, so setting the environment variable races with no other thread.

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, Received};
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use serde_json::json;

/// A log sink tests can read.
#[derive(Clone, Default)]
struct Logs(std::sync::Arc<parking_lot::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

const VAR: &str = "AGENTS_CORE_TEST_SECRET_KEY";
const KEY: &str = "sk-live-9c1e2f-keep-me-out-of-every-file";
/// A variable no one sets: its key is handed to the runtime in memory.
const HANDED_VAR: &str = "AGENTS_CORE_TEST_HANDED_KEY";
const HANDED_KEY: &str = "sk-handed-7d3a-only-in-memory";

#[test]
fn the_key_never_leaves_memory() {
    // SAFETY: the only test of this binary, before any other thread exists.
    unsafe { std::env::set_var(VAR, KEY) };
    // Every log line, down to debug, into a buffer.
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
        fake.push_many([
            Behaviour::calls(vec![FakeCall::new("fly", json!({}))]),
            Behaviour::Reply {
                text: "Hello.".into(),
                tool_calls: vec![FakeCall::new("move", json!({"x": 3, "y": 4}))],
                chunk_chars: None,
            },
            Behaviour::Status {
                status: 401,
                body: json!({"error": {"message": "Incorrect API key provided"}}),
                retry_after: None,
            },
        ]);
        let dir = tempfile::tempdir().unwrap();
        let runtime = Runtime::start_on(
            tokio::runtime::Handle::current(),
            RuntimeOptions {
                database: dir.path().join("agents.db"),
                idle_think_seconds: 1000.0,
                speaking_seconds: 0.01,
                ..RuntimeOptions::default()
            },
        )
        .unwrap();
        let mut sub = runtime.subscribe(Filter::all());
        let config = AgentConfig::from_json(&json!({
            "name": "Keeper",
            "brain": {"provider": "openai", "model": "fake-1", "base_url": fake.openai_base(),
                      "api_key_env": VAR, "trace_prompts": true}
        }))
        .unwrap();
        let id = runtime.spawn(config).unwrap();
        let mut seen = Vec::new();
        for line in ["hi", "again"] {
            runtime.send_message(&id, line).unwrap();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                let Ok(Some(Received::Message(env))) =
                    tokio::time::timeout_at(deadline, sub.recv()).await
                else {
                    panic!("no answer to {line}: {seen:#?}")
                };
                let done = matches!(&env.message,
                    BusMessage::AgentStateChanged { agent_id, new_state, .. }
                        if *agent_id == id && new_state.as_str() == "idle");
                seen.push(env.message.clone());
                if done {
                    break;
                }
            }
        }
        // The key went where it belongs: the Authorization header.
        let sent = fake.requests();
        assert_eq!(sent.len(), 3);
        assert!(
            sent.iter()
                .all(|r| r.header("authorization") == Some(&*format!("Bearer {KEY}")))
        );
        // And nowhere else.
        let events = format!("{seen:?}");
        assert!(
            events.contains("authentication failed (401)"),
            "the 401 was reported"
        );
        assert!(!events.contains(KEY), "an event carries the key");
        let trace = serde_json::to_string(&runtime.agent_trace(&id, 100).unwrap()).unwrap();
        assert!(trace.contains("fake-1") && !trace.contains(KEY), "{trace}");
        let stored = serde_json::to_string(&runtime.stored_agents().unwrap()).unwrap();
        assert!(stored.contains(VAR) && !stored.contains(KEY));
        // A key handed over in memory: refused at spawn before (a remote URL needs one, and
        // the message names the variable, never a value), used after.
        let remote = json!({"name": "Far", "brain": {"provider": "anthropic", "model": "m",
            "base_url": "https://models.invalid", "api_key_env": HANDED_VAR}});
        let refused = runtime
            .spawn(AgentConfig::from_json(&remote).unwrap())
            .unwrap_err()
            .to_string();
        assert!(refused.contains(HANDED_VAR), "{refused}");
        runtime.set_api_key(HANDED_VAR, HANDED_KEY);
        let far = runtime
            .spawn(AgentConfig::from_json(&remote).unwrap())
            .unwrap();
        runtime.terminate(&far).unwrap();
        let near = runtime
            .spawn(
                AgentConfig::from_json(&json!({"name": "Near", "brain": {"provider": "openai",
                    "model": "fake-1", "base_url": fake.openai_base(), "api_key_env": HANDED_VAR}}))
                .unwrap(),
            )
            .unwrap();
        fake.push(Behaviour::text("Handed over."));
        runtime.send_message(&near, "key?").unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while fake.requests().len() < 4 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no request with the handed key"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            fake.requests()[3].header("authorization"),
            Some(&*format!("Bearer {HANDED_KEY}"))
        );
        runtime.flush().unwrap();
        runtime.shutdown(Duration::from_secs(2));
        drop(runtime);
        let logs = String::from_utf8_lossy(&logs.0.lock()).into_owned();
        assert!(
            logs.contains("brain_auth_failed") || logs.contains("Incorrect API key"),
            "{logs}"
        );
        assert!(!logs.contains(KEY), "a log line carries the key");
        assert!(
            !logs.contains(HANDED_KEY),
            "a log line carries the handed key"
        );
        let mut files = 0;
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            // SQLite may remove its -wal / -shm files as it closes.
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            files += 1;
            for key in [KEY, HANDED_KEY] {
                assert!(
                    !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                    "a key is in {}",
                    path.display()
                );
            }
        }
        assert!(files >= 1);
    });
}
