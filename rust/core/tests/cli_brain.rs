//! The `cli` brain end to end: agents whose brain is a real subprocess (the Python script
//! `fixtures/cli_model.py`), with real SQLite and real time: a repair through the JSON dialect,
//! a command that exits non-zero, one that prints garbage, one that hangs past its timeout (its
//! whole process group killed), cancellation by `terminate`, and misconfigurations refused at
//! spawn.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agents_core::bus::{BusMessage, Filter};
use agents_core::geometry::Position;
use serde_json::{Value, json};

mod common;
use common::{agent, error_of, runtime, spoke_by, until};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cli_model.py")
}

/// A `cli` brain running the script in `mode`, recording requests in `record`.
fn brain(mode: &str, record: &Path) -> Value {
    json!({"provider": "cli", "model": "script-1", "command": [
        "python3", script().to_str().unwrap(), mode, record.to_str().unwrap()
    ]})
}

fn last_error(events: &[BusMessage]) -> (String, String) {
    match events.last() {
        Some(BusMessage::AgentError { code, message, .. }) => {
            (code.as_str().to_string(), message.clone())
        }
        other => panic!("expected an agent_error, got {other:?}"),
    }
}

/// Whether process `pid` still exists (and is not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The pids the `hang` mode wrote: the script and its `sleep` child.
async fn hung_pids(record: &Path) -> Vec<u32> {
    let file = record.join("pids");
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&file)
            && text.ends_with('\n')
        {
            return text
                .split_whitespace()
                .map(|p| p.parse().unwrap())
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the hanging command never wrote its pids");
}

async fn gone(pids: &[u32]) {
    for _ in 0..200 {
        if pids.iter().all(|p| !alive(*p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("processes {pids:?} are still running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_agent_repairs_its_answer_then_moves_and_speaks() {
    let dir = tempfile::tempdir().unwrap();
    let record = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(agent(brain("repair", record.path()))).unwrap();
    assert_eq!(rt.state(&id).unwrap().brain, "cli:script-1");
    rt.send_message(&id, "Can you come to the well?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
    let errors: Vec<_> = events
        .iter()
        .filter(|m| matches!(m, BusMessage::AgentError { .. }))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let moved: Vec<Position> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentMoved { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(
        moved,
        [Position::new(12.0, 14.0)],
        "only the repaired move ran"
    );
    let Some(BusMessage::AgentSpoke { content, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(content, "Coming, player_0!");

    // What the command was sent: the protocol, the agent, its tools, the situation; the second
    // request carries the refusal of the first answer.
    let read = |n: u32| -> Value {
        let text = std::fs::read_to_string(record.path().join(format!("request-{n}.json")))
            .unwrap_or_else(|e| panic!("request {n}: {e}"));
        serde_json::from_str(&text).unwrap()
    };
    let first = read(1);
    assert_eq!(first["protocol"], "godot-agents/cli/1");
    assert_eq!(first["agent_id"], id);
    assert_eq!(first["model"], "script-1");
    assert!(first["system"].as_str().unwrap().contains("You are Mira"));
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"move") && tools.contains(&"speak"),
        "{tools:?}"
    );
    assert!(first["tools"][0]["parameters"].is_object());
    assert_eq!(first["messages"].as_array().unwrap().len(), 1);
    assert!(
        first["messages"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Can you come to the well?")
    );
    assert_eq!(
        first["context"]["incoming"][0]["content"],
        "Can you come to the well?"
    );
    let second = read(2);
    let refusal = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool_result")
        .expect("the refusal goes back");
    assert_eq!(refusal["call_id"], "c1");
    assert_eq!(refusal["is_error"], true);
    let feedback: Value = serde_json::from_str(refusal["content"].as_str().unwrap()).unwrap();
    assert_eq!(feedback["status"], "error");
    assert_eq!(feedback["reason"], "invalid_args");
    assert!(!record.path().join("request-3.json").exists());

    // Both runs are traced, with the tokens the command reported.
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(trace.len(), 2, "{trace:?}");
    for row in &trace {
        assert_eq!(row.call.provider, "cli");
        assert_eq!(row.call.model.as_deref(), Some("script-1"));
        assert_eq!(row.call.output_tokens, 7);
        assert!(row.call.input_tokens > 100, "{:?}", row.call);
    }
    assert_eq!(trace[1].call.repairs, 1);
    let (spent, _) = rt.agent_token_usage(&id).unwrap();
    assert_eq!(
        spent,
        trace
            .iter()
            .map(|r| r.call.input_tokens + r.call.output_tokens)
            .sum::<u64>()
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_commands_are_reported_and_nothing_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let record = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());

    // Exits non-zero: the status; its standard error goes to the log, never to agent_error
    // (which every client of a server receives).
    let id = rt.spawn(agent(brain("exit", record.path()))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), error_of(&id)).await;
    let (code, message) = last_error(&events);
    assert_eq!(code, "brain_error");
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(
        message.contains("the server's log has the details"),
        "{message}"
    );
    assert!(
        !message.contains("the model is overloaded, try later"),
        "{message}"
    );
    assert!(!message.contains("agents.db"), "{message}");
    assert!(
        !events
            .iter()
            .any(|m| matches!(m, BusMessage::AgentMoved { agent_id, .. }
                | BusMessage::AgentSpoke { agent_id, .. } if *agent_id == id)),
        "{events:?}"
    );
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(trace[0].call.error_code.as_deref(), Some("cli_exit_status"));
    assert_eq!(rt.state(&id).unwrap().position, Position::new(10.0, 10.0));

    // Prints something that is not JSON.
    let id = rt.spawn(agent(brain("garbage", record.path()))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), error_of(&id)).await;
    let (code, message) = last_error(&events);
    assert_eq!(code, "brain_error");
    assert!(
        message.contains("answered something that is not the contract"),
        "{message}"
    );
    assert!(!message.contains("Sure! Here is my answer"), "{message}");
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(
        trace[0].call.error_code.as_deref(),
        Some("cli_invalid_output")
    );

    // Answers without reading its input: a closed pipe is no error.
    let id = rt
        .spawn(agent(brain("ignore-input", record.path())))
        .unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
    assert!(
        matches!(events.last(), Some(BusMessage::AgentSpoke { content, .. })
        if content == "I did not read the question.")
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_command_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());

    // Past its timeout: killed, reported.
    let record = tempfile::tempdir().unwrap();
    let mut hang = brain("hang", record.path());
    hang["timeout_seconds"] = json!(1.5);
    let id = rt.spawn(agent(hang)).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let pids = hung_pids(record.path()).await;
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    let events = until(&mut sub, Duration::from_secs(20), error_of(&id)).await;
    let (code, message) = last_error(&events);
    assert_eq!(code, "brain_error");
    assert!(
        message.contains("did not answer within 1.5 s and was killed"),
        "{message}"
    );
    gone(&pids).await;
    let trace = rt.agent_trace(&id, 10).unwrap();
    assert_eq!(trace[0].call.error_code.as_deref(), Some("cli_timeout"));

    // Cancelled: terminating the agent kills the command (and its child) at once.
    let record = tempfile::tempdir().unwrap();
    let id = rt.spawn(agent(brain("hang", record.path()))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let pids = hung_pids(record.path()).await;
    rt.terminate(&id).unwrap();
    gone(&pids).await;
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misconfigured_cli_brains_are_refused_at_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let refused = |brain: Value| rt.spawn(agent(brain)).unwrap_err().to_string();
    assert!(refused(json!({"provider": "cli"})).starts_with("brain.command is required"));
    let missing = refused(json!({"provider": "cli",
                                 "command": ["agents-no-such-program-here", "-x"]}));
    assert_eq!(
        missing,
        "brain.command: the program 'agents-no-such-program-here' was not found on PATH"
    );
    let path = refused(json!({"provider": "cli", "command": ["./no/such/model.sh"]}));
    assert_eq!(
        path,
        "brain.command: the program './no/such/model.sh' was not found"
    );
    let http = refused(json!({"provider": "cli", "command": ["python3"],
                              "api_key_env": "OPENAI_API_KEY"}));
    assert!(
        http.starts_with("brain.api_key_env: unknown field `api_key_env`, expected one of")
            && http.ends_with("(the options of the cli provider)"),
        "{http}"
    );
    let other = refused(json!({"provider": "openai", "model": "m",
                               "base_url": "http://127.0.0.1:9/v1", "command": ["x"]}));
    assert!(
        other.starts_with("brain.command: unknown field `command`, expected one of `model`")
            && other.ends_with("(the options of the openai provider)"),
        "{other}"
    );
    // Nothing refused used an id.
    let id = rt
        .spawn(agent(
            json!({"provider": "cli", "command": ["python3", "-c", "pass"]}),
        ))
        .unwrap();
    assert_eq!(id, "agent_001");
    rt.shutdown(Duration::from_secs(2));
}

/// A JSON-dialect command (`sh`) that starts four `sleep`s and writes their pids to
/// `DIR/pids`: one in the background (holding the command's standard output), one in a session
/// of its own (`setsid`), one orphaned at once (its parent subshell exits), one orphaned in a
/// session of its own. Then it reads its input and answers (`answer`), or hangs (`hang`).
const SPAWNER: &str = r#"dir="$1"
sleep 300 & echo $! >> "$dir/pids"
setsid sh -c 'echo $$ >> "$0/pids"; exec sleep 301' "$dir" &
( sh -c 'echo $$ >> "$0/pids"; exec sleep 302' "$dir" & )
( setsid sh -c 'echo $$ >> "$0/pids"; exec sleep 303' "$dir" < /dev/null > /dev/null 2>&1 & )
while [ "$(cat "$dir/pids" | wc -l)" -lt 4 ]; do sleep 0.02; done
cat > /dev/null
if [ "$2" = hang ]; then sleep 600; fi
echo '{"assistant_text": "Done, and nothing left behind."}'
"#;

/// A `cli` brain running [`SPAWNER`] in `mode`, writing into `dir`.
fn spawner(dir: &Path, mode: &str) -> Value {
    let script = dir.join("spawner.sh");
    std::fs::write(&script, SPAWNER).unwrap();
    json!({"provider": "cli", "command": [
        "sh", script.to_str().unwrap(), dir.to_str().unwrap(), mode
    ]})
}

/// The four pids [`SPAWNER`] wrote, once it wrote them all.
async fn spawned(dir: &Path) -> Vec<u32> {
    for _ in 0..400 {
        let pids: Vec<u32> = std::fs::read_to_string(dir.join("pids"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() == 4 {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the command never started its four children");
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_a_command_starts_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());

    // The command answers and exits: by the time its answer is said, all four are gone (not
    // even zombies), the ones in sessions of their own included.
    let work = tempfile::tempdir().unwrap();
    let id = rt.spawn(agent(spawner(work.path(), "answer"))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let events = until(&mut sub, Duration::from_secs(20), spoke_by(&id)).await;
    assert!(
        matches!(events.last(), Some(BusMessage::AgentSpoke { content, .. })
            if content == "Done, and nothing left behind."),
        "{events:?}"
    );
    let pids = spawned(work.path()).await;
    let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "still running: {left:?} of {pids:?}");

    // It hangs past its timeout: it and all four are killed.
    let work = tempfile::tempdir().unwrap();
    let mut hang = spawner(work.path(), "hang");
    hang["timeout_seconds"] = json!(1.0);
    let id = rt.spawn(agent(hang)).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let pids = spawned(work.path()).await;
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    let events = until(&mut sub, Duration::from_secs(20), error_of(&id)).await;
    let (_, message) = last_error(&events);
    assert!(message.contains("did not answer within 1 s"), "{message}");
    let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "still running after the timeout: {left:?}");

    // The decision is cancelled (the agent is terminated): all four go too.
    let work = tempfile::tempdir().unwrap();
    let id = rt.spawn(agent(spawner(work.path(), "hang"))).unwrap();
    rt.send_message(&id, "Hello?").unwrap();
    let pids = spawned(work.path()).await;
    rt.terminate(&id).unwrap();
    gone(&pids).await;
    rt.shutdown(Duration::from_secs(2));
}

/// Set in the process [`a_killed_runtime_leaves_nothing_behind`] starts to be the runtime.
const RUNTIME_DIR: &str = "AGENTS_CLI_TEST_RUNTIME_DIR";

/// The runtime's process is SIGKILLed while its command hangs with its four children: they are
/// killed too. The runtime runs in a process of its own: this test, run again by its binary
/// with [`RUNTIME_DIR`] set.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_runtime_leaves_nothing_behind() {
    if let Some(work) = std::env::var_os(RUNTIME_DIR) {
        let dir = tempfile::tempdir().unwrap();
        let rt = runtime(&dir);
        let id = rt.spawn(agent(spawner(Path::new(&work), "hang"))).unwrap();
        rt.send_message(&id, "Hello?").unwrap();
        tokio::time::sleep(Duration::from_secs(120)).await;
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mut helper = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_killed_runtime_leaves_nothing_behind"])
        .env(RUNTIME_DIR, work.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pids = spawned(work.path()).await;
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    // SIGKILL: the runtime's process ends without a word to anyone.
    helper.kill().unwrap();
    helper.wait().unwrap();
    gone(&pids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_agent_reflects_and_rates_its_memories_through_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let record = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let mut config = agent(brain("speak", record.path()));
    config.memory = Some(agents_core::mind::MemorySettings {
        reflection_threshold: 1,
        importance_batch: 2,
        ..Default::default()
    });
    let id = rt.spawn(config).unwrap();
    rt.send_message(&id, "The cellar key is under the mat.")
        .unwrap();
    let events = until(&mut sub, Duration::from_secs(30), |m| {
        matches!(m, BusMessage::AgentReflected { .. })
    })
    .await;
    let Some(BusMessage::AgentReflected {
        memories, drawn_by, ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!(drawn_by, "model", "{memories:?}");
    assert!(
        memories
            .iter()
            .any(|m| m.text == "The command line reflects on it."),
        "{memories:?}"
    );
    // The heard line was rated by the command too.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let page = rt.memories_page(&id, None, 50).unwrap();
        if page
            .rows
            .iter()
            .any(|m| m.text.contains("The cellar key is under the mat.") && m.importance == 9)
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never rated: {:?}",
            page.rows
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // What it was sent: the task, the memories and the schema of the answer.
    let tasks: Vec<Value> = std::fs::read_dir(record.path())
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .filter_map(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(|r| r.get("task").is_some())
        .collect();
    let reflect = tasks
        .iter()
        .find(|r| r["task"] == "reflect")
        .expect("a reflection was asked");
    assert_eq!(reflect["protocol"], "godot-agents/cli/1");
    assert_eq!(reflect["agent_id"], id);
    assert!(reflect["answer_schema"]["properties"]["insights"].is_object());
    assert!(
        reflect["messages"][0]["text"]
            .as_str()
            .unwrap()
            .contains("The cellar key is under the mat.")
    );
    assert!(tasks.iter().any(|r| r["task"] == "rate"));
    // Both were traced like decisions.
    let calls = rt.agent_trace(&id, 50).unwrap();
    assert!(calls.len() >= 3, "{calls:?}");
    rt.shutdown(Duration::from_secs(5));
}
