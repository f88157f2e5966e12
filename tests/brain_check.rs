//! `agents-server brain-check` and `serve --brains FILE`, run as real processes against the fake
//! provider (a real HTTP server on loopback): what came back, latency and tokens on success; a
//! diagnosis naming what to check on each kind of failure; a profiles file read, checked and
//! used by name over the WebSocket.

mod support;

use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use serde_json::json;
use support::{CliRun, run_cli};

/// Runs the CLI off the async runtime (the fake server keeps answering meanwhile).
async fn cli(args: Vec<String>) -> CliRun {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_cli(&args, None)
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_model_prints_what_it_did_the_latency_and_the_tokens() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push(Behaviour::Reply {
        text: "I'm Tester. Off to the well!".into(),
        tool_calls: vec![FakeCall::new("move", json!({"x": 40, "y": 45}))],
        chunk_chars: Some(4),
    });
    let base = fake.openai_base();
    let run = cli(args(&[
        "brain-check",
        "--provider",
        "openai",
        "--model",
        "fake-1",
        "--base-url",
        &base,
        "--message",
        "Who are you?",
    ]))
    .await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    for line in [
        "brain: openai:fake-1",
        "player: Who are you?",
        "tool call: move",
        "moved: ",
        "said: I'm Tester. Off to the well!",
        "streamed text: I'm Tester. Off to the well!",
        "model call: openai fake-1 — ",
        "ok: the model answered with a valid decision",
    ] {
        assert!(
            run.stdout.contains(line),
            "{line:?} missing:\n{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("input tokens"), "{}", run.stdout);
    let sent = fake.requests();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].body["messages"]
            .to_string()
            .contains("Who are you?")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failure_says_what_to_check() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        json!({"default": "local", "profiles": {
            "local": {"provider": "openai", "model": "llama9", "base_url": fake.openai_base(),
                      "max_retries": 0},
            "gone": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                     "max_retries": 0, "timeout_seconds": 5},
            "remote": {"provider": "anthropic", "model": "claude-x",
                       "api_key_env": "AGENTS_TEST_UNSET_KEY_VAR"}
        }})
        .to_string(),
    )
    .unwrap();
    let file = brains.to_str().unwrap();

    // An unknown model (404), through the file's default profile.
    fake.push(Behaviour::Status {
        status: 404,
        body: json!({"error": {"message": "model \"llama9\" not found, try pulling it first"}}),
        retry_after: None,
    });
    let run = cli(args(&["brain-check", "--brains", file])).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(run.stdout.contains("brain: local"), "{}", run.stdout);
    assert!(
        run.stdout.contains("failed: brain_model_not_found"),
        "{}",
        run.stdout
    );
    // The provider's words: in the log (stderr), not in the agent's error.
    assert!(
        run.stderr.contains("try pulling it first"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("try pulling it first"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("does not know llama9"),
        "{}",
        run.stdout
    );

    // Nothing listening.
    let run = cli(args(&["brain-check", "--brains", file, "gone"])).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("nothing answered at http://127.0.0.1:9/v1"),
        "{}",
        run.stdout
    );

    // A key variable that is not set: refused before any call, naming the variable.
    let run = cli(args(&["brain-check", "--brains", file, "remote"])).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains("refused before any call"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("AGENTS_TEST_UNSET_KEY_VAR"),
        "{}",
        run.stdout
    );

    // A model that never answers with the contract: the repairs, then the verdict.
    fake.push_many([
        Behaviour::calls(vec![FakeCall::new("teleport", json!({}))]),
        Behaviour::calls(vec![FakeCall::new("teleport", json!({}))]),
        Behaviour::calls(vec![FakeCall::new("teleport", json!({}))]),
    ]);
    let run = cli(args(&["brain-check", "--brains", file, "local"])).await;
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains("failed: brain_invalid_reply"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("after 2 repair(s)"), "{}", run.stdout);
    assert!(
        run.stdout.contains("tool-calling instructions"),
        "{}",
        run.stdout
    );

    // Usage errors.
    let run = cli(args(&["brain-check"])).await;
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("name the PROFILE"), "{}", run.stderr);
    let run = cli(args(&[
        "brain-check",
        "--brains",
        "/nonexistent/brains.json",
        "x",
    ]))
    .await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("/nonexistent/brains.json"),
        "{}",
        run.stderr
    );
}

#[test]
fn serve_refuses_a_bad_brains_file_or_an_unusable_default() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("agents.db");
    let db = db.to_str().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"profiles": {"a": {"provider": "openai", "modle": "x"}}}"#,
    )
    .unwrap();
    let run = run_cli(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--db",
            db,
            "--brains",
            bad.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("bad.json"), "{}", run.stderr);
    assert!(
        run.stderr.contains("unknown field `modle`"),
        "{}",
        run.stderr
    );
    let unusable = dir.path().join("unusable.json");
    std::fs::write(
        &unusable,
        json!({"default": "cloud", "profiles": {"cloud": {"provider": "openai", "model": "m",
            "api_key_env": "AGENTS_TEST_UNSET_KEY_VAR"}}})
        .to_string(),
    )
    .unwrap();
    let run = run_cli(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--db",
            db,
            "--brains",
            unusable.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("the default brain 'cloud'"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("AGENTS_TEST_UNSET_KEY_VAR"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_line_model_is_checked_too() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/cli_model.py");
    let script = script.to_str().unwrap();
    let record = tempfile::tempdir().unwrap();
    let record = record.path().to_str().unwrap();
    let run = cli(args(&[
        "brain-check",
        "--provider",
        "cli",
        "--",
        "python3",
        script,
        "speak",
        record,
    ]))
    .await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    for line in [
        "brain: cli",
        "said: Fresh bread, straight from the command line.",
        "model call: cli - — ",
        "output tokens, ok",
        "ok: the model answered with a valid decision",
    ] {
        assert!(
            run.stdout.contains(line),
            "{line:?} missing:\n{}",
            run.stdout
        );
    }
    let run = cli(args(&[
        "brain-check",
        "--provider",
        "cli",
        "--",
        "python3",
        script,
        "exit",
        record,
    ]))
    .await;
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("exited with status 3"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("(cli_exit_status)"), "{}", run.stdout);
    assert!(
        run.stdout.contains("read its standard error"),
        "{}",
        run.stdout
    );
    let run = cli(args(&[
        "brain-check",
        "--provider",
        "cli",
        "--",
        "agents-no-such-model-command",
    ]))
    .await;
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("refused before any call"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("install the command"), "{}", run.stdout);
}
