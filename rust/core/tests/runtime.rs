//! The agent runtime end to end: real SQLite files, the scripted brain, tokio's paused clock (so
//! "5 seconds idle" is exact and the tests take milliseconds).

use std::time::Duration;

use agents_core::brain::{BrainReply, ToolCall};
use agents_core::bus::{BusMessage, Filter, MessageKind, Received, Subscription};
use agents_core::runtime::{
    AgentConfig, AgentState, Position, Runtime, RuntimeError, RuntimeOptions,
};
use serde_json::json;
use tokio::runtime::Handle;
use tokio::time::Instant;

fn options(dir: &tempfile::TempDir) -> RuntimeOptions {
    RuntimeOptions {
        database: dir.path().join("agents.db"),
        thinking_seconds: 0.5,
        speaking_seconds: 1.0,
        ..RuntimeOptions::default()
    }
}

fn start(dir: &tempfile::TempDir) -> Runtime {
    Runtime::start_on(Handle::current(), options(dir)).expect("runtime starts")
}

fn call(id: &str, tool: &str, args: serde_json::Value) -> ToolCall {
    ToolCall::new(id, tool, args)
}

fn reply(text: &str, calls: Vec<ToolCall>) -> BrainReply {
    BrainReply {
        assistant_text: text.into(),
        dialog_type: "chat".into(),
        tool_calls: calls,
    }
}

fn scripted(name: &str, script: Vec<BrainReply>) -> AgentConfig {
    AgentConfig {
        name: name.into(),
        role: "tester".into(),
        script,
        ..Default::default()
    }
}

/// Next message for which `pick` returns Some, within `within` of virtual time.
async fn expect<T>(
    sub: &mut Subscription,
    within: Duration,
    mut pick: impl FnMut(&BusMessage) -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        let got = tokio::time::timeout_at(deadline, sub.recv()).await;
        match got {
            Ok(Some(Received::Message(env))) => {
                if let Some(v) = pick(&env.message) {
                    return v;
                }
            }
            Ok(Some(Received::Lagged { missed })) => panic!("test subscription lagged by {missed}"),
            Ok(None) => panic!("bus closed"),
            Err(_) => panic!("nothing matched within {within:?}"),
        }
    }
}

/// Collects every message published within `within`.
async fn collect(sub: &mut Subscription, within: Duration) -> Vec<BusMessage> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while let Ok(Some(r)) = tokio::time::timeout_at(deadline, sub.recv()).await {
        if let Received::Message(env) = r {
            out.push(env.message.clone());
        }
    }
    out
}

fn transitions(messages: &[BusMessage], agent: &str) -> Vec<(AgentState, AgentState)> {
    messages
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentStateChanged {
                agent_id,
                old_state,
                new_state,
                ..
            } if agent_id == agent => Some((*old_state, *new_state)),
            _ => None,
        })
        .collect()
}

fn errors(messages: &[BusMessage]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentError { code, message, .. } => {
                Some((code.as_str().to_string(), message.clone()))
            }
            _ => None,
        })
        .collect()
}

use AgentState::*;

#[tokio::test(start_paused = true)]
async fn spawn_gives_sequential_ids_snapshots_and_events() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let a = rt
        .spawn(
            AgentConfig::from_json(&json!({
                "name": "Assistant", "role": "helper", "cli_backend": "scripted",
                "initial_position": {"x": 10, "y": 10}
            }))
            .unwrap(),
        )
        .unwrap();
    let b = rt.spawn(AgentConfig::default()).unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("agent_001", "agent_002"));
    let spawned = expect(&mut sub, Duration::from_millis(1), |m| match m {
        BusMessage::AgentSpawned {
            agent_id,
            name,
            position,
            state,
            resumed,
            ..
        } => Some((agent_id.clone(), name.clone(), *position, *state, *resumed)),
        _ => None,
    })
    .await;
    assert_eq!(
        spawned,
        (
            "agent_001".into(),
            "Assistant".into(),
            Position::new(10.0, 10.0),
            Idle,
            false
        )
    );
    let s = rt.state("agent_001").unwrap();
    assert_eq!(
        (s.name.as_str(), s.role.as_str(), s.brain.as_str(), s.state),
        ("Assistant", "helper", "scripted", Idle)
    );
    assert_eq!(s.current_task, None);
    // Defaults: the name is the id, the position the world's centre.
    let s2 = rt.state("agent_002").unwrap();
    assert_eq!(
        (s2.name.as_str(), s2.position),
        ("agent_002", Position::new(50.0, 50.0))
    );
    let ids: Vec<String> = rt.list().into_iter().map(|s| s.agent_id).collect();
    assert_eq!(ids, ["agent_001", "agent_002"]);
    assert!(rt.state("agent_404").is_none());
}

#[tokio::test(start_paused = true)]
async fn an_idle_agent_decides_after_exactly_idle_think_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let started = Instant::now();
    rt.spawn(scripted(
        "Idler",
        vec![reply("", vec![call("c1", "wait", json!({}))])],
    ))
    .unwrap();
    let (old, new) = expect(&mut sub, Duration::from_secs(60), |m| match m {
        BusMessage::AgentStateChanged {
            old_state,
            new_state,
            ..
        } => Some((*old_state, *new_state)),
        _ => None,
    })
    .await;
    assert_eq!((old, new), (Idle, Thinking));
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(5),
        "the default idle time is 5 s"
    );
    // Thinking takes thinking_seconds (0.5), then back to idle (a wait decides without speech).
    expect(&mut sub, Duration::from_secs(60), |m| match m {
        BusMessage::AgentStateChanged {
            old_state: Thinking,
            new_state: Idle,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(started.elapsed(), Duration::from_millis(5500));
    // And the next decision comes 5 s after that.
    expect(&mut sub, Duration::from_secs(60), |m| match m {
        BusMessage::AgentStateChanged {
            new_state: Thinking,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(started.elapsed(), Duration::from_millis(10_500));
}

#[tokio::test(start_paused = true)]
async fn per_agent_idle_think_overrides_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let started = Instant::now();
    let config = AgentConfig {
        idle_think_seconds: Some(2.0),
        ..scripted("Quick", vec![])
    };
    rt.spawn(config).unwrap();
    expect(&mut sub, Duration::from_secs(60), |m| match m {
        BusMessage::AgentStateChanged {
            new_state: Thinking,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(started.elapsed(), Duration::from_secs(2));
}

#[tokio::test(start_paused = true)]
async fn a_message_runs_the_full_cycle_and_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt.spawn(AgentConfig::named("Mira", "baker")).unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    rt.send_message(&id, "Good morning, is the bread ready?")
        .unwrap();
    let events = collect(&mut sub, Duration::from_secs(3)).await;
    assert_eq!(
        transitions(&events, &id),
        [
            (Idle, Listening),
            (Listening, Thinking),
            (Thinking, Speaking),
            (Speaking, Idle)
        ]
    );
    let spoke: Vec<_> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentSpoke {
                agent_id,
                recipients,
                dialog_type,
                content,
                ..
            } if agent_id == &id => {
                Some((recipients.clone(), dialog_type.clone(), content.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(spoke.len(), 1, "{events:?}");
    assert_eq!(spoke[0].0, ["player_0"]);
    assert!(!spoke[0].2.is_empty());
    // Memory: the player's line (acknowledged) then the reply.
    let rows = rt.conversation(&id, 10).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (rows[0].sender.as_str(), rows[0].content.as_str()),
        ("player_0", "Good morning, is the bread ready?")
    );
    assert_eq!(rows[0].recipient.as_deref(), Some(id.as_str()));
    assert_eq!(
        (rows[1].sender.as_str(), rows[1].recipient.as_deref()),
        (id.as_str(), Some("player_0"))
    );
    // Every transition is in agent_state_history, in order.
    let history: Vec<(AgentState, AgentState)> = rt
        .state_history(&id, 100)
        .unwrap()
        .into_iter()
        .map(|r| (r.old_state, r.new_state))
        .collect();
    assert_eq!(history, transitions(&events, &id));
}

#[tokio::test(start_paused = true)]
async fn a_message_while_thinking_interrupts_and_cancels_the_brain_call() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let config = AgentConfig {
        thinking_seconds: Some(2.0),
        ..AgentConfig::named("Tom", "guard")
    };
    let id = rt.spawn(config).unwrap();
    let started = Instant::now();
    // It starts thinking at 5 s; the answer would come at 7 s.
    expect(&mut sub, Duration::from_secs(10), |m| match m {
        BusMessage::AgentStateChanged {
            new_state: Thinking,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    tokio::time::sleep(Duration::from_secs(1)).await;
    rt.send_message(&id, "Halt! Who goes there?").unwrap();
    let events = collect(&mut sub, Duration::from_millis(1)).await;
    assert_eq!(
        transitions(&events, &id),
        [(Thinking, Listening), (Listening, Thinking)]
    );
    // The cancelled call never answers at 7 s; the new decision (with the message) answers at 8 s.
    let answered_at = expect(&mut sub, Duration::from_secs(10), |m| match m {
        BusMessage::AgentStateChanged {
            old_state: Thinking,
            new_state,
            ..
        } => Some(*new_state),
        _ => None,
    })
    .await;
    assert_eq!(answered_at, Speaking);
    assert_eq!(started.elapsed(), Duration::from_secs(8));
    let to = expect(&mut sub, Duration::from_millis(1), |m| match m {
        BusMessage::AgentSpoke { recipients, .. } => Some(recipients.clone()),
        _ => None,
    })
    .await;
    assert_eq!(
        to,
        ["player_0"],
        "the reply answers the interrupting message"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_after_speak_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let config = AgentConfig {
        initial_position: Some(Position::new(20.0, 20.0)),
        ..scripted(
            "Talker",
            vec![
                reply(
                    "",
                    vec![
                        call("c1", "move", json!({"x": 21, "y": 20})),
                        call("c2", "speak", json!({"content": "Hello there"})),
                        call("c3", "move", json!({"x": 30, "y": 30})),
                    ],
                ),
                // The repair: speak last.
                reply(
                    "",
                    vec![
                        call("c4", "move", json!({"x": 21, "y": 20})),
                        call("c5", "speak", json!({"content": "Hello there"})),
                    ],
                ),
            ],
        )
    };
    let id = rt.spawn(config).unwrap();
    let events = collect(&mut sub, Duration::from_secs(8)).await;
    let moves: Vec<_> = events
        .iter()
        .filter_map(|m| match m {
            BusMessage::AgentMoved { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .collect();
    assert_eq!(
        moves,
        [(Position::new(20.0, 20.0), Position::new(21.0, 20.0))],
        "nothing of the refused answer ran"
    );
    assert_eq!(errors(&events), [], "a repaired decision reports nothing");
    assert_eq!(rt.state(&id).unwrap().position, Position::new(21.0, 20.0));
    assert_eq!(
        transitions(&events, &id),
        [(Idle, Thinking), (Thinking, Speaking), (Speaking, Idle)]
    );
    let decisions = rt.recent_decisions(&id).unwrap();
    let rejected: Vec<_> = decisions[0]
        .rejected
        .iter()
        .map(|c| (c.id.as_str(), c.detail.as_deref().unwrap_or_default()))
        .collect();
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0].0, "c3");
    assert!(
        rejected[0]
            .1
            .starts_with("invalid_actor_state: no call can follow `speak` (c2)"),
        "{}",
        rejected[0].1
    );
}

#[tokio::test(start_paused = true)]
async fn ungrounded_actions_are_refused_before_anything_runs_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(scripted(
            "Clumsy",
            vec![
                reply(
                    "",
                    vec![
                        call("c3", "move", json!({"x": 500, "y": 1})),
                        call(
                            "c4",
                            "collaborate",
                            json!({"agent_id": "agent_404", "task_name": "x"}),
                        ),
                        call("c5", "complete_task", json!({})),
                        call("c6", "wait", json!({"seconds": 1})),
                    ],
                ),
                reply("", vec![call("c7", "wait", json!({"seconds": 1}))]),
            ],
        ))
        .unwrap();
    let events = collect(&mut sub, Duration::from_millis(6500)).await;
    // Refused by the decision's grounded schemas, each saying why; the repaired answer runs.
    assert_eq!(errors(&events), []);
    let decisions = rt.recent_decisions(&id).unwrap();
    let rejected: Vec<_> = decisions[0]
        .rejected
        .iter()
        .map(|c| (c.id.as_str(), c.detail.as_deref().unwrap_or_default()))
        .collect();
    let ids: Vec<&str> = rejected.iter().map(|r| r.0).collect();
    assert_eq!(ids, ["c3", "c4", "c5"], "{rejected:?}");
    assert!(
        rejected[0].1.contains("outside the world bounds"),
        "{}",
        rejected[0].1
    );
    assert!(
        rejected[1].1.contains("'collaborate' is not available now"),
        "alone, there is no one to ask: {}",
        rejected[1].1
    );
    assert!(rejected[2].1.contains("no open task"), "{}", rejected[2].1);
    assert_eq!(
        transitions(&events, &id),
        [(Idle, Thinking), (Thinking, Idle)]
    );
    // `wait 1` makes the next decision come 1 s later, not 5 s.
    let t = Instant::now();
    expect(&mut sub, Duration::from_secs(10), |m| match m {
        BusMessage::AgentStateChanged {
            new_state: Thinking,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    assert!(t.elapsed() <= Duration::from_secs(1), "{:?}", t.elapsed());
}

#[tokio::test(start_paused = true)]
async fn tasks_are_assigned_worked_on_and_completed() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub =
        rt.subscribe(Filter::all().kinds([MessageKind::TaskAssigned, MessageKind::TaskCompleted]));
    let id = rt
        .spawn(scripted(
            "Worker",
            vec![reply(
                "Done with the fence.",
                vec![call("c1", "complete_task", json!({}))],
            )],
        ))
        .unwrap();
    let task = rt.assign_task(&id, "mend the fence").unwrap();
    assert_eq!(
        (task.task_name.as_str(), task.agent_id.as_str()),
        ("mend the fence", id.as_str())
    );
    assert_eq!(rt.state(&id).unwrap().current_task.unwrap().id, task.id);
    let assigned = expect(&mut sub, Duration::from_millis(1), |m| match m {
        BusMessage::TaskAssigned {
            task_id,
            assigned_by,
            ..
        } => Some((*task_id, assigned_by.clone())),
        _ => None,
    })
    .await;
    assert_eq!(assigned, (task.id, "player_0".to_string()));
    let completed = expect(&mut sub, Duration::from_secs(10), |m| match m {
        BusMessage::TaskCompleted {
            task_id,
            completed_at,
            ..
        } => Some((*task_id, completed_at.clone())),
        _ => None,
    })
    .await;
    assert_eq!(completed.0, task.id);
    assert!(completed.1.ends_with('Z'));
    let tasks = rt.tasks(&id).unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].status.as_str(), "completed");
    assert_eq!(tasks[0].completed_at.as_deref(), Some(completed.1.as_str()));
    assert!(rt.state(&id).unwrap().current_task.is_none());
    let err = rt.complete_task(task.id).unwrap_err();
    assert_eq!(err.code().as_str(), "task_already_completed");
    assert_eq!(
        rt.complete_task(9999).unwrap_err().code().as_str(),
        "unknown_task"
    );
    assert_eq!(
        rt.assign_task(&id, "  ").unwrap_err().code().as_str(),
        "invalid_message"
    );
    assert_eq!(
        rt.assign_task("agent_404", "x")
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_agent"
    );
}

#[tokio::test(start_paused = true)]
async fn collaboration_assigns_the_task_and_the_helper_answers() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let asker = rt
        .spawn(AgentConfig {
            initial_position: Some(Position::new(10.0, 10.0)),
            ..scripted(
                "Asker",
                vec![reply(
                    "",
                    vec![call("c1", "collaborate", json!({"agent_id": "agent_002"}))],
                )],
            )
        })
        .unwrap();
    let helper = rt
        .spawn(AgentConfig {
            initial_position: Some(Position::new(12.0, 10.0)),
            idle_think_seconds: Some(100.0),
            ..AgentConfig::named("Helper", "smith")
        })
        .unwrap();
    rt.assign_task(&asker, "build a cart").unwrap();
    let events = collect(&mut sub, Duration::from_secs(9)).await;
    let req = events
        .iter()
        .find_map(|m| match m {
            BusMessage::CollaborationRequested {
                agent_id,
                helper_id,
                task_name,
                message,
                ..
            } => Some((
                agent_id.clone(),
                helper_id.clone(),
                task_name.clone(),
                message.clone(),
            )),
            _ => None,
        })
        .expect("collaboration requested");
    assert_eq!(
        req,
        (
            asker.clone(),
            helper.clone(),
            "build a cart".into(),
            "Could you help me with build a cart?".into()
        )
    );
    assert!(events.iter().any(|m| matches!(m,
        BusMessage::TaskAssigned { agent_id, assigned_by, task_name, .. }
            if agent_id == &helper && assigned_by == &asker && task_name == "build a cart")));
    // The helper listened, thought and answered the asker (they may chat on after that).
    assert_eq!(
        transitions(&events, &helper)[..4],
        [
            (Idle, Listening),
            (Listening, Thinking),
            (Thinking, Speaking),
            (Speaking, Idle)
        ]
    );
    assert!(events.iter().any(|m| matches!(m,
        BusMessage::AgentSpoke { agent_id, recipients, .. } if agent_id == &helper && recipients == std::slice::from_ref(&asker))));
    assert_eq!(
        rt.state(&helper).unwrap().current_task.unwrap().task_name,
        "build a cart"
    );
    let helper_memory = rt.conversation(&helper, 5).unwrap();
    assert_eq!(helper_memory[0].sender, asker);
}

#[tokio::test(start_paused = true)]
async fn speech_reaches_only_its_recipients() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let quiet = AgentConfig {
        idle_think_seconds: Some(100.0),
        ..Default::default()
    };
    let a = rt.spawn(quiet.clone()).unwrap();
    let b = rt.spawn(quiet).unwrap();
    rt.send_message(&a, "only for a").unwrap();
    let events = collect(&mut sub, Duration::from_secs(5)).await;
    assert!(!transitions(&events, &a).is_empty());
    assert!(
        transitions(&events, &b).is_empty(),
        "b heard a message addressed to a"
    );
}

#[tokio::test(start_paused = true)]
async fn an_idle_agent_does_nothing_until_its_timer() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    rt.spawn(AgentConfig {
        idle_think_seconds: Some(60.0),
        ..Default::default()
    })
    .unwrap();
    let events = collect(&mut sub, Duration::from_secs(59)).await;
    assert_eq!(events.len(), 1, "only AgentSpawned: {events:?}");
}

#[tokio::test(start_paused = true)]
async fn api_errors_have_codes() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let id = rt.spawn(AgentConfig::default()).unwrap();
    let cases: Vec<(Result<String, RuntimeError>, &str)> = vec![
        (
            rt.spawn(AgentConfig {
                brain: Some("gpt-9".into()),
                ..Default::default()
            }),
            "unknown_brain",
        ),
        (
            rt.spawn(AgentConfig {
                initial_position: Some(Position::new(-1.0, 0.0)),
                ..Default::default()
            }),
            "invalid_config",
        ),
        (
            rt.spawn(AgentConfig {
                idle_think_seconds: Some(f64::NAN),
                ..Default::default()
            }),
            "invalid_config",
        ),
        (
            rt.spawn(AgentConfig {
                agent_id: Some("agent_404".into()),
                ..Default::default()
            }),
            "unknown_agent",
        ),
        (
            rt.spawn(AgentConfig {
                agent_id: Some(id.clone()),
                ..Default::default()
            }),
            "already_running",
        ),
    ];
    for (result, code) in cases {
        let err = result.expect_err(code);
        assert_eq!(err.code().as_str(), code, "{err}");
    }
    let e = rt
        .spawn(AgentConfig {
            brain: Some("gpt-9".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "unknown brain 'gpt-9' (available: {})",
            agents_core::brain::BrainRegistry::with_builtins()
                .names()
                .join(", ")
        )
    );
    assert_eq!(
        rt.send_message("agent_404", "hi")
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_agent"
    );
    assert_eq!(
        rt.send_message(&id, "   ").unwrap_err().code().as_str(),
        "invalid_message"
    );
    assert_eq!(
        rt.send_message(&id, &"x".repeat(5000))
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_message"
    );
    assert_eq!(
        rt.terminate("agent_404").unwrap_err().code().as_str(),
        "unknown_agent"
    );
    assert_eq!(
        rt.conversation("agent_404", 5).unwrap_err().code().as_str(),
        "unknown_agent"
    );
    // Failed spawns used no id.
    assert_eq!(rt.spawn(AgentConfig::default()).unwrap(), "agent_002");
}

#[tokio::test(start_paused = true)]
async fn terminate_removes_and_respawning_the_id_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub =
        rt.subscribe(Filter::all().kinds([MessageKind::AgentRemoved, MessageKind::AgentSpawned]));
    let id = rt
        .spawn(AgentConfig {
            initial_position: Some(Position::new(3.0, 4.0)),
            ..AgentConfig::named("Ann", "farmer")
        })
        .unwrap();
    rt.send_message(&id, "remember me").unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    rt.terminate(&id).unwrap();
    assert!(rt.state(&id).is_none());
    assert!(rt.list().is_empty());
    let removed = expect(&mut sub, Duration::from_secs(1), |m| match m {
        BusMessage::AgentRemoved { agent_id, reason } => Some((agent_id.clone(), reason.clone())),
        _ => None,
    })
    .await;
    assert_eq!(removed, (id.clone(), "terminated".to_string()));
    assert_eq!(
        rt.terminate(&id).unwrap_err().code().as_str(),
        "unknown_agent"
    );
    // History is still readable, and the id resumes with its name and memory.
    assert_eq!(rt.conversation(&id, 10).unwrap()[0].content, "remember me");
    let again = rt
        .spawn(AgentConfig {
            agent_id: Some(id.clone()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(again, id);
    let resumed = expect(&mut sub, Duration::from_secs(1), |m| match m {
        BusMessage::AgentSpawned {
            agent_id,
            name,
            resumed: true,
            position,
            ..
        } => Some((agent_id.clone(), name.clone(), *position)),
        _ => None,
    })
    .await;
    assert_eq!(resumed, (id.clone(), "Ann".into(), Position::new(3.0, 4.0)));
    assert_eq!(rt.state(&id).unwrap().role, "farmer");
}

#[tokio::test(start_paused = true)]
async fn a_restart_on_the_same_database_keeps_ids_history_and_resumable_agents() {
    let dir = tempfile::tempdir().unwrap();
    let (kept, gone);
    {
        let rt = start(&dir);
        kept = rt.spawn(AgentConfig::named("Keeper", "mayor")).unwrap();
        gone = rt.spawn(AgentConfig::named("Leaver", "bard")).unwrap();
        rt.send_message(&kept, "see you after the restart").unwrap();
        rt.assign_task(&kept, "count the votes").unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        rt.terminate(&gone).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        rt.shutdown(Duration::from_secs(1));
        assert!(rt.is_shut_down());
        assert_eq!(
            rt.spawn(AgentConfig::default())
                .unwrap_err()
                .code()
                .as_str(),
            "shut_down"
        );
    }
    let rt = start(&dir);
    let stored: Vec<(String, bool)> = rt
        .stored_agents()
        .unwrap()
        .into_iter()
        .map(|a| (a.agent_id, a.removed_at.is_some()))
        .collect();
    assert_eq!(stored, [(kept.clone(), false), (gone.clone(), true)]);
    assert_eq!(
        rt.resume_all().unwrap().running,
        std::slice::from_ref(&kept)
    );
    let s = rt.state(&kept).unwrap();
    assert_eq!(
        (s.name.as_str(), s.current_task.unwrap().task_name.as_str()),
        ("Keeper", "count the votes")
    );
    let lines = rt.conversation(&kept, 10).unwrap();
    assert_eq!(lines[0].content, "see you after the restart");
    assert!(rt.state_history(&kept, 100).unwrap().len() >= 4);
    assert_eq!(
        rt.spawn(AgentConfig::default()).unwrap(),
        "agent_003",
        "ids continue after a restart"
    );
}

#[test]
fn an_owned_runtime_runs_agents_on_its_own_threads_and_shuts_down_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(&dir);
    opts.idle_think_seconds = 0.05;
    opts.thinking_seconds = 0.01;
    opts.speaking_seconds = 0.01;
    let rt = Runtime::start(opts).unwrap();
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let ids: Vec<String> = (0..20)
        .map(|i| {
            rt.spawn(AgentConfig::named(format!("A{i}"), "villager"))
                .unwrap()
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut seen = std::collections::HashSet::new();
    while seen.len() < ids.len() && std::time::Instant::now() < deadline {
        match sub.try_recv() {
            Some(Received::Message(env)) => {
                if let BusMessage::AgentStateChanged {
                    agent_id,
                    new_state: Thinking,
                    ..
                } = &env.message
                {
                    seen.insert(agent_id.clone());
                }
            }
            _ => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    assert_eq!(seen.len(), ids.len(), "every agent decided on its own");
    rt.shutdown(Duration::from_secs(5));
    // Everything is on disk: a fresh connection sees the state history of every agent.
    let conn = rusqlite::Connection::open(dir.path().join("agents.db")).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(DISTINCT agent_id) FROM agent_state_history",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, ids.len() as i64);
}

#[tokio::test(start_paused = true)]
async fn a_line_not_answered_before_a_stop_is_answered_after_resume() {
    let dir = tempfile::tempdir().unwrap();
    let question = "will you still remember this after a restart?";
    let id;
    {
        let rt = start(&dir);
        // Slow to think: the stop comes while the answer is being worked out.
        id = rt
            .spawn(AgentConfig {
                thinking_seconds: Some(60.0),
                ..AgentConfig::named("Slowpoke", "sage")
            })
            .unwrap();
        rt.send_message(&id, question).unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(rt.state(&id).unwrap().state, AgentState::Thinking);
        rt.shutdown(Duration::from_secs(1));
    }
    {
        let rt = start(&dir);
        let mut sub = rt.subscribe(Filter::all());
        assert_eq!(rt.resume_all().unwrap().running, std::slice::from_ref(&id));
        let events = collect(&mut sub, Duration::from_secs(65)).await;
        assert_eq!(
            transitions(&events, &id)[..4],
            [
                (Idle, Listening),
                (Listening, Thinking),
                (Thinking, Speaking),
                (Speaking, Idle)
            ]
        );
        let answer = events.iter().find_map(|m| match m {
            BusMessage::AgentSpoke {
                agent_id,
                recipients,
                ..
            } if agent_id == &id => Some(recipients.clone()),
            _ => None,
        });
        assert_eq!(answer, Some(vec!["player_0".to_string()]));
        // The line is in the conversation once: stored when it was accepted, not again.
        let asked = rt
            .conversation(&id, 20)
            .unwrap()
            .into_iter()
            .filter(|r| r.content == question)
            .count();
        assert_eq!(asked, 1);
        rt.shutdown(Duration::from_secs(1));
    }
    // Answered: a second resume does not hear it again.
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    rt.resume_all().unwrap();
    let events = collect(&mut sub, Duration::from_secs(1)).await;
    assert!(
        !transitions(&events, &id).contains(&(Idle, Listening)),
        "{events:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn every_front_end_gets_the_limits() {
    use agents_core::limits::*;
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let long = |n: usize| "é".repeat(n);
    for (config, field, max) in [
        (
            AgentConfig {
                prompt: long(MAX_PROMPT_CHARS + 1),
                ..AgentConfig::named("A", "r")
            },
            "prompt",
            MAX_PROMPT_CHARS,
        ),
        (
            AgentConfig::named("A", long(MAX_ROLE_CHARS + 1)),
            "role",
            MAX_ROLE_CHARS,
        ),
        (
            AgentConfig::named(long(MAX_NAME_CHARS + 1), "r"),
            "name",
            MAX_NAME_CHARS,
        ),
    ] {
        let e = rt.spawn(config).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_config");
        assert!(
            e.to_string().contains(&format!(
                "{field} is {} characters long; the limit is {max}",
                max + 1
            )),
            "{e}"
        );
    }
    let id = rt.spawn(AgentConfig::named("A", "r")).unwrap();
    let e = rt
        .send_message_from(&long(MAX_SENDER_CHARS + 1), &id, "hi")
        .unwrap_err();
    assert_eq!(e.code().as_str(), "invalid_message");
    assert!(e.to_string().contains("sender is"), "{e}");
    assert_eq!(
        rt.stored_agents().unwrap().len(),
        1,
        "nothing over a limit was stored"
    );
}

#[tokio::test(start_paused = true)]
async fn the_journal_keeps_each_call_with_its_outcome_and_what_was_said() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let config = AgentConfig {
        initial_position: Some(Position::new(20.0, 20.0)),
        ..scripted(
            "Talker",
            vec![
                reply(
                    "",
                    vec![
                        call("c1", "move", json!({"x": 500, "y": 20})),
                        call("c2", "speak", json!({"content": "Hello there"})),
                        call("c3", "move", json!({"x": 30, "y": 30})),
                    ],
                ),
                reply(
                    "",
                    vec![
                        call("c4", "move", json!({"x": 30, "y": 30})),
                        call("c5", "speak", json!({"content": "Hello there"})),
                    ],
                ),
            ],
        )
    };
    let id = rt.spawn(config).unwrap();
    assert!(rt.recent_decisions(&id).unwrap().is_empty());
    expect(&mut sub, Duration::from_secs(10), |m| match m {
        BusMessage::AgentStateChanged {
            old_state: Speaking,
            new_state: Idle,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    let decisions = rt.recent_decisions(&id).unwrap();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    let d = &decisions[0];
    assert_eq!(d.number, 1);
    assert_eq!(d.trigger, agents_core::runtime::Trigger::Autonomous);
    assert!(d.context.contains("0 line(s) heard"), "{}", d.context);
    assert!(d.context.contains("at (20, 20)"), "{}", d.context);
    let outcomes: Vec<_> = d
        .calls
        .iter()
        .map(|c| (c.id.as_str(), c.tool.as_str(), c.outcome))
        .collect();
    use agents_core::runtime::CallOutcome::*;
    assert_eq!(outcomes, [("c4", "move", Done), ("c5", "speak", Done)]);
    assert_eq!(d.calls[0].args, json!({"x": 30, "y": 30}));
    // The refused answer's calls, with their arguments and why.
    let rejected: Vec<_> = d
        .rejected
        .iter()
        .map(|c| (c.id.as_str(), c.outcome, c.detail.as_deref().unwrap()))
        .collect();
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert_eq!((rejected[0].0, rejected[0].1), ("c1", Failed));
    assert!(
        rejected[0].2.contains("outside the world bounds"),
        "{}",
        rejected[0].2
    );
    assert_eq!(d.rejected[0].args, json!({"x": 500, "y": 20}));
    assert_eq!(rejected[1].0, "c3");
    assert!(
        rejected[1].2.contains("no call can follow `speak`"),
        "{}",
        rejected[1].2
    );
    assert_eq!(d.repairs, 1);
    assert_eq!(d.spoken, ["Hello there"]);
    assert_eq!(d.failure, None);
    assert_eq!(d.model_calls, 0, "the scripted brain calls no model");
    // The thinking latency of the scripted brain (0.5 s on the paused clock), twice.
    assert_eq!(d.latency_ms, 1000);
    assert!(matches!(
        rt.recent_decisions("agent_999"),
        Err(RuntimeError::UnknownAgent(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_paused_agent_decides_only_when_spoken_to_and_resuming_decides_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let id = rt.spawn(scripted("Sleeper", vec![])).unwrap();
    rt.set_paused(&id, true).unwrap();
    assert!(rt.is_paused(&id).unwrap());
    // A minute passes (twelve idle periods): nothing.
    let quiet = collect(&mut sub, Duration::from_secs(60)).await;
    assert_eq!(
        transitions(&quiet, &id),
        [],
        "a paused agent decides nothing"
    );
    // Spoken to, it still answers.
    rt.send_message(&id, "Are you there?").unwrap();
    let answered = collect(&mut sub, Duration::from_secs(4)).await;
    assert_eq!(
        transitions(&answered, &id)[..2],
        [(Idle, Listening), (Listening, Thinking)]
    );
    let decisions = rt.recent_decisions(&id).unwrap();
    assert_eq!(
        decisions.last().unwrap().trigger,
        agents_core::runtime::Trigger::Message
    );
    // Then quiet again.
    let quiet = collect(&mut sub, Duration::from_secs(60)).await;
    assert_eq!(transitions(&quiet, &id), []);
    // Resumed: it decides at once, then every idle period again.
    let resumed_at = Instant::now();
    rt.set_paused(&id, false).unwrap();
    assert!(!rt.is_paused(&id).unwrap());
    expect(&mut sub, Duration::from_secs(1), |m| match m {
        BusMessage::AgentStateChanged {
            new_state: Thinking,
            ..
        } => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(resumed_at.elapsed(), Duration::ZERO);
    assert!(matches!(
        rt.set_paused("agent_999", true),
        Err(RuntimeError::UnknownAgent(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_gm_turn_goes_into_the_gm_agents_journal() {
    use agents_core::campaign::Campaign;
    use agents_core::runtime::{CampaignSource, Trigger};
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let gm = rt.spawn(scripted("Morgana", vec![])).unwrap();
    rt.set_paused(&gm, true).unwrap();
    let campaign = Campaign::new("camp_0001", &["pc_001".to_string()]);
    let loaded = rt
        .load_campaign(CampaignSource::Inline(campaign.to_json()))
        .unwrap();
    let entry = rt
        .campaign_turn(&loaded.campaign_id, &gm, "I drink a potion", None)
        .await
        .unwrap();
    let decisions = rt.recent_decisions(&gm).unwrap();
    let d = decisions.last().expect("the turn is in the journal");
    assert_eq!(d.trigger, Trigger::CampaignTurn);
    assert!(
        d.context
            .contains("campaign 'camp_0001' turn 1, pc_001 acting: I drink a potion"),
        "{}",
        d.context
    );
    assert_eq!(d.calls.len(), 1, "{d:?}");
    assert_eq!(d.calls[0].tool, "hp_delta");
    assert_eq!(d.calls[0].outcome, agents_core::runtime::CallOutcome::Done);
    assert_eq!(d.spoken, std::slice::from_ref(&entry.assistant_text));
    // The GM remembers the turn it ran: what the player said, what it narrated, what changed.
    let remembered = rt.memories_page(&gm, None, 10).unwrap().rows;
    let turn = remembered
        .iter()
        .find(|m| m.kind == agents_core::memory::MemoryKind::Event)
        .expect("the turn is remembered");
    assert!(
        turn.text
            .starts_with("In camp_0001 the player said \"I drink a potion\" and I narrated"),
        "{}",
        turn.text
    );
    assert!(turn.text.contains("pc_001's hp went from"), "{}", turn.text);
}

#[tokio::test(start_paused = true)]
async fn spawns_beyond_max_agents_are_refused_until_one_is_terminated() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            max_agents: 2,
            ..options(&dir)
        },
    )
    .unwrap();
    let a = rt.spawn(AgentConfig::named("A", "tester")).unwrap();
    rt.spawn(AgentConfig::named("B", "tester")).unwrap();
    let refused = rt.spawn(AgentConfig::named("C", "tester")).unwrap_err();
    assert_eq!(refused.code().as_str(), "limit_reached");
    assert!(refused.to_string().contains("max_agents 2"), "{refused}");
    rt.terminate(&a).unwrap();
    let c = rt.spawn(AgentConfig::named("C", "tester")).unwrap();
    assert_eq!(c, "agent_003", "the refused spawn used no id");
    rt.shutdown(Duration::from_secs(1));
}

/// An `AgentReplied`'s `in_reply_to`, text, actions and failure.
type Replied = (
    Vec<i64>,
    String,
    Vec<agents_core::runtime::DecidedCall>,
    Option<agents_core::bus::ReplyFailure>,
);

/// The `AgentReplied` of `agent`.
fn replied(message: &BusMessage, agent: &str) -> Option<Replied> {
    match message {
        BusMessage::AgentReplied {
            agent_id,
            in_reply_to,
            text,
            actions,
            error,
        } if agent_id == agent => Some((
            in_reply_to.clone(),
            text.clone(),
            actions.clone(),
            error.clone(),
        )),
        _ => None,
    }
}

#[tokio::test(start_paused = true)]
async fn a_reply_names_the_line_it_answers_with_what_was_said_and_done() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let id = rt
        .spawn(scripted(
            "Mira",
            vec![reply(
                "",
                vec![
                    call("c1", "move", json!({"x": 60.0, "y": 50.0})),
                    call("c2", "speak", json!({"content": "Fresh bread at noon."})),
                ],
            )],
        ))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let line = rt.send_message(&id, "Is the bread ready?").unwrap();
    let (in_reply_to, text, actions, error) =
        expect(&mut sub, Duration::from_secs(5), |m| replied(m, &id)).await;
    assert_eq!(in_reply_to, [line]);
    assert_eq!(text, "Fresh bread at noon.");
    let tools: Vec<(&str, agents_core::runtime::CallOutcome)> = actions
        .iter()
        .map(|c| (c.tool.as_str(), c.outcome))
        .collect();
    assert_eq!(
        tools,
        [
            ("move", agents_core::runtime::CallOutcome::Done),
            ("speak", agents_core::runtime::CallOutcome::Done)
        ]
    );
    assert_eq!(error, None);
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn lines_in_flight_are_each_answered_by_the_decision_that_heard_them() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let a = rt.spawn(AgentConfig::named("Mira", "baker")).unwrap();
    let b = rt.spawn(AgentConfig::named("Tom", "smith")).unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let to_a = rt.send_message(&a, "Good morning!").unwrap();
    let to_b = rt.send_message(&b, "Is the forge hot?").unwrap();
    // Said while Mira is thinking: it interrupts, and one decision answers both lines.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let again = rt.send_message(&a, "And the bread?").unwrap();
    assert!(
        to_a < to_b && to_b < again,
        "ids increase: {to_a} {to_b} {again}"
    );
    let events = collect(&mut sub, Duration::from_secs(6)).await;
    let for_a: Vec<Vec<i64>> = events
        .iter()
        .filter_map(|m| replied(m, &a))
        .map(|r| r.0)
        .collect();
    let for_b: Vec<Vec<i64>> = events
        .iter()
        .filter_map(|m| replied(m, &b))
        .map(|r| r.0)
        .collect();
    assert_eq!(for_a, [vec![to_a, again]], "{events:?}");
    assert_eq!(for_b, [vec![to_b]]);
    // An autonomous decision answers no line: no reply event.
    let quiet = collect(&mut sub, Duration::from_secs(12)).await;
    assert!(quiet.iter().all(|m| replied(m, &a).is_none()), "{quiet:?}");
    rt.shutdown(Duration::from_secs(1));
}

fn keyed(key: &str, name: &str) -> AgentConfig {
    AgentConfig {
        key: Some(key.into()),
        ..AgentConfig::named(name, "baker")
    }
}

#[tokio::test(start_paused = true)]
async fn a_key_resumes_the_same_stored_agent_and_is_unique_while_running() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let rt = start(&dir);
        let id = rt.spawn(keyed("baker_tom", "Tom")).unwrap();
        let other = rt.spawn(keyed("smith_ann", "Ann")).unwrap();
        assert_ne!(id, other);
        // One running agent per key: the error names the key and the agent that has it.
        let taken = rt.spawn(keyed("baker_tom", "Tom again")).unwrap_err();
        assert_eq!(taken.code().as_str(), "already_running");
        let text = taken.to_string();
        assert!(text.contains("'baker_tom'") && text.contains(&id), "{text}");
        rt.send_message(&id, "Remember the rye.").unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        // Released (a scene change): the key is free again and resumes the same agent.
        rt.release(&id).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(rt.spawn(keyed("baker_tom", "Tom")).unwrap(), id);
        rt.shutdown(Duration::from_secs(1));
        id
    };
    // The next run (the same database): the key finds the same agent and its memory.
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentSpawned]));
    let again = rt.spawn(keyed("baker_tom", "")).unwrap();
    assert_eq!(again, first);
    let (name, resumed) = expect(&mut sub, Duration::from_secs(1), |m| match m {
        BusMessage::AgentSpawned { name, resumed, .. } => Some((name.clone(), *resumed)),
        _ => None,
    })
    .await;
    assert_eq!((name.as_str(), resumed), ("Tom", true));
    assert_eq!(
        rt.conversation(&first, 10).unwrap()[0].content,
        "Remember the rye."
    );
    // Terminated, the key starts over with a new agent.
    rt.terminate(&first).unwrap();
    let fresh = rt.spawn(keyed("baker_tom", "Tom")).unwrap();
    assert_ne!(fresh, first);
    assert!(rt.conversation(&fresh, 10).unwrap().is_empty());
    // An empty key is a config error, not an anonymous agent.
    let empty = rt.spawn(keyed("  ", "Nobody")).unwrap_err();
    assert_eq!(empty.code().as_str(), "invalid_config");
    assert!(empty.to_string().contains("key"), "{empty}");
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_reactive_agent_decides_only_when_spoken_to_and_stays_so_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentStateChanged]));
    let id = rt
        .spawn(AgentConfig {
            autonomous: Some(false),
            idle_think_seconds: Some(1.0),
            ..AgentConfig::named("Guard", "guard")
        })
        .unwrap();
    let idle = collect(&mut sub, Duration::from_secs(30)).await;
    assert!(transitions(&idle, &id).is_empty(), "{idle:?}");
    rt.send_message(&id, "Halt! Who goes there?").unwrap();
    let spoken = collect(&mut sub, Duration::from_secs(5)).await;
    assert!(
        transitions(&spoken, &id).contains(&(Listening, Thinking)),
        "{spoken:?}"
    );
    // Stored: a resumed agent is still reactive.
    rt.release(&id).unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    rt.spawn(AgentConfig {
        agent_id: Some(id.clone()),
        ..Default::default()
    })
    .unwrap();
    let resumed = collect(&mut sub, Duration::from_secs(30)).await;
    assert!(transitions(&resumed, &id).is_empty(), "{resumed:?}");
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn positions_the_game_reports_decide_who_hears_whom() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentSpoke]));
    let crier = rt
        .spawn(scripted(
            "Crier",
            vec![reply(
                "",
                vec![call("c1", "speak", json!({"content": "Fresh bread!"}))],
            )],
        ))
        .unwrap();
    let near = rt.spawn(AgentConfig::named("Near", "listener")).unwrap();
    let far = rt.spawn(AgentConfig::named("Far", "listener")).unwrap();
    // The game's coordinates, well outside the runtime's 100×100 world.
    rt.set_position(&crier, Position::new(1000.0, 1000.0))
        .unwrap();
    rt.set_position(&near, Position::new(1005.0, 1000.0))
        .unwrap();
    rt.set_position(&far, Position::new(10.0, 10.0)).unwrap();
    assert_eq!(
        rt.state(&near).unwrap().position,
        Position::new(1005.0, 1000.0)
    );
    let to = expect(&mut sub, Duration::from_secs(10), |m| match m {
        BusMessage::AgentSpoke {
            agent_id,
            recipients,
            ..
        } if agent_id == &crier => Some(recipients.clone()),
        _ => None,
    })
    .await;
    assert_eq!(
        to,
        std::slice::from_ref(&near),
        "only the agent near it hears it"
    );
    // Released there, it resumes there: a stored position outside the bounds is the game's.
    rt.release(&near).unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    rt.spawn(AgentConfig {
        agent_id: Some(near.clone()),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        rt.state(&near).unwrap().position,
        Position::new(1005.0, 1000.0)
    );
    let bad = rt
        .set_position(&near, Position::new(f64::NAN, 0.0))
        .unwrap_err();
    assert_eq!(bad.code().as_str(), "invalid_config");
    assert_eq!(
        rt.set_position("agent_404", Position::new(0.0, 0.0))
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_agent"
    );
    rt.shutdown(Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_stored_agent_that_cannot_start_waits_and_the_others_resume() {
    use agents_core::brain::{BrainChoice, BrainSpec};
    use agents_core::runtime::WaitReason;
    let dir = tempfile::tempdir().unwrap();
    let with_profile = |name: &str| {
        let mut opts = options(&dir);
        opts.brain_profiles
            .insert(name.into(), BrainSpec::provider("scripted"));
        Runtime::start_on(Handle::current(), opts).unwrap()
    };
    let (steady, fleeting);
    {
        let rt = with_profile("fleeting");
        steady = rt.spawn(AgentConfig::named("Steady", "mayor")).unwrap();
        fleeting = rt
            .spawn(AgentConfig {
                brain: Some(BrainChoice::named("fleeting")),
                ..AgentConfig::named("Fleeting", "bard")
            })
            .unwrap();
        rt.shutdown(Duration::from_secs(1));
    }
    let rt = with_profile("other");
    let resumed = rt.resume_all().unwrap();
    assert_eq!(resumed.running, std::slice::from_ref(&steady));
    assert_eq!(resumed.waiting.len(), 1);
    let waiting = &resumed.waiting[0];
    assert_eq!(waiting.agent_id, fleeting);
    assert_eq!(waiting.code.as_str(), "unknown_brain");
    assert_eq!(waiting.waiting.reason, WaitReason::Brain);
    assert!(
        waiting.waiting.message.contains("unknown brain 'fleeting'"),
        "{waiting:?}"
    );
    assert_eq!(rt.waiting_for(&fleeting).as_ref(), Some(&waiting.waiting));
    assert!(rt.state(&fleeting).is_none());
    // A second resume changes nothing for the running one.
    assert!(rt.resume_all().unwrap().running.is_empty());

    // Given another brain, it starts and waits no more.
    rt.spawn(AgentConfig {
        agent_id: Some(fleeting.clone()),
        brain: Some(BrainChoice::named("other")),
        ..Default::default()
    })
    .unwrap();
    assert!(rt.waiting_agents().is_empty());
    assert!(rt.state(&fleeting).is_some());
    rt.shutdown(Duration::from_secs(1));

    // Waiting again (its stored brain is `other` now, gone too); terminated, it is not resumed.
    let rt = start(&dir);
    let resumed = rt.resume_all().unwrap();
    assert_eq!(resumed.waiting[0].agent_id, fleeting);
    let mut sub = rt.subscribe(Filter::all().kinds([MessageKind::AgentRemoved]));
    rt.terminate(&fleeting).unwrap();
    assert!(rt.waiting_for(&fleeting).is_none());
    let reason = expect(&mut sub, Duration::from_secs(1), |m| match m {
        BusMessage::AgentRemoved { agent_id, reason } if agent_id == &fleeting => {
            Some(reason.clone())
        }
        _ => None,
    })
    .await;
    assert_eq!(reason, "terminated");
    assert_eq!(
        rt.terminate(&fleeting).unwrap_err().code().as_str(),
        "unknown_agent"
    );
    rt.shutdown(Duration::from_secs(1));
    let rt = start(&dir);
    let resumed = rt.resume_all().unwrap();
    assert_eq!(resumed.running, std::slice::from_ref(&steady));
    assert!(resumed.waiting.is_empty());
}
