//! The `claude` preset (`brain: "claude"`, the seeds' `cli_backend: "claude"`): the `cli`
//! brain running `claude -p --output-format json` from `PATH`, against a stand-in with Claude
//! Code's formats (`fixtures/claude-bin/claude`: the prompt as text on standard input, a result
//! object on standard output). Alone in its test binary, because it sets `PATH`.

use std::path::Path;
use std::time::Duration;

use agents_core::bus::{BusMessage, Filter};
use agents_core::geometry::Position;
use serde_json::{Value, json};

mod common;
use common::{agent, runtime, spoke_by, until};

#[test]
fn the_claude_preset_runs_claude_from_path() {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-bin");
    let record = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let original = std::env::var_os("PATH").unwrap_or_default();
    let with_claude =
        std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&original)))
            .unwrap();
    // SAFETY: this is the only test in this binary and no other thread reads the environment
    // while it is changed (the tokio runtime is built after).
    unsafe {
        std::env::set_var("PATH", empty.path());
        std::env::set_var("FAKE_CLAUDE_RECORD", record.path());
    }
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _guard = tokio.enter();
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);

    // Not installed: refused at spawn, saying what the preset runs.
    let refused = rt.spawn(agent(json!("claude"))).unwrap_err().to_string();
    assert_eq!(
        refused,
        "brain.command: the program 'claude' was not found on PATH (the preset runs \
         Anthropic's Claude Code command line: install it, or set brain.command)"
    );

    // SAFETY: as above; the runtime's threads do not read the environment.
    unsafe { std::env::set_var("PATH", &with_claude) };
    tokio.block_on(async {
        let mut sub = rt.subscribe(Filter::all());
        let id = rt.spawn(agent(json!("claude"))).unwrap();
        assert_eq!(rt.state(&id).unwrap().brain, "claude");
        rt.send_message(&id, "Is the oven hot?").unwrap();
        let events = until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
        assert!(
            !events
                .iter()
                .any(|m| matches!(m, BusMessage::AgentError { .. })),
            "{events:?}"
        );
        assert!(
            events
                .iter()
                .any(|m| matches!(m, BusMessage::AgentMoved { to, .. }
            if *to == Position::new(11.0, 12.0)))
        );
        assert!(
            matches!(events.last(), Some(BusMessage::AgentSpoke { content, .. })
            if content == "The oven is hot, come by!")
        );
        let args: Value = serde_json::from_str(
            &std::fs::read_to_string(record.path().join("args-1.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(args, json!(["-p", "--output-format", "json"]));
        let prompt = std::fs::read_to_string(record.path().join("prompt-1.txt")).unwrap();
        for part in [
            "You are Mira (agent_001), the baker",
            "- move: ",
            "Answer with one JSON object and nothing else",
            "Just now, player_0 (player_0) to you: \"Is the oven hot?\"",
        ] {
            assert!(prompt.contains(part), "{part:?} not in {prompt}");
        }
        let trace = rt.agent_trace(&id, 10).unwrap();
        assert_eq!(trace[0].call.provider, "cli");
        assert_eq!(trace[0].call.output_tokens, 30);
        assert_eq!(
            trace[0].call.input_tokens,
            12 + trace[0].call.cached_tokens,
            "cache reads count as input"
        );

        // A model flag, and Claude Code reporting an error.
        let id = rt
            .spawn(agent(json!({"provider": "cli", "cli_backend": "claude",
                                "model": "logged-out"})))
            .unwrap();
        rt.send_message(&id, "Hello?").unwrap();
        let events = until(&mut sub, Duration::from_secs(20), |m| {
            matches!(m, BusMessage::AgentError { .. })
        })
        .await;
        let Some(BusMessage::AgentError { code, message, .. }) = events.last() else {
            unreachable!()
        };
        assert_eq!(code.as_str(), "brain_error");
        // What Claude Code said goes to the log; agent_error reaches every client.
        assert!(message.contains("'claude' reported an error"), "{message}");
        assert!(!message.contains("Invalid API key"), "{message}");
        let args: Value = serde_json::from_str(
            &std::fs::read_to_string(record.path().join("args-2.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            args,
            json!(["-p", "--output-format", "json", "--model", "logged-out"])
        );
    });
    rt.shutdown(Duration::from_secs(2));
}
