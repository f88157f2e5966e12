//! The app bridge end to end (`docs/apps.md`, every scenario): an app registered
//! with the runtime, an agent attached to it, its actions as the agent's tools, routing with its
//! fixed texts, control modes, static and dynamic state delivery, events, labels, the session
//! (kept in SQLite and read back), remote handlers with timeouts (a bad answer refused, the
//! action still waiting), registrations (an owner unregisters only its own), and the scripted
//! brain playing offline. Real SQLite, real time.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use agents_core::apps::{
    ActionDef, ActionOutcome, ActionRequest, Actor, AppConfig, AppContext, AppHandler, AppMode,
    AppOutbound, AppView, ChatRole, ControlMode,
};
use agents_core::brain::{Brain, BrainContext, BrainReply, BrainSettings, DecideFuture, ToolCall};
use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::time::Instant;

/// A brain that answers from a queue (then `wait`s) and records every context it was given.
#[derive(Clone, Default)]
struct Recorder {
    answers: Arc<Mutex<VecDeque<BrainReply>>>,
    seen: Arc<Mutex<Vec<BrainContext>>>,
}

impl Recorder {
    fn push(&self, calls: Vec<ToolCall>) {
        self.answers.lock().push_back(BrainReply {
            assistant_text: String::new(),
            dialog_type: String::new(),
            tool_calls: calls,
        });
    }

    fn contexts(&self) -> Vec<BrainContext> {
        self.seen.lock().clone()
    }

    /// Waits until the brain was given a context that `pick` accepts; returns it.
    async fn saw(&self, mut pick: impl FnMut(&BrainContext) -> bool) -> BrainContext {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(c) = self.seen.lock().iter().find(|c| pick(c)) {
                return c.clone();
            }
            assert!(Instant::now() < deadline, "no such context was seen");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until the brain was asked `n` times in all.
    async fn asked(&self, n: usize) -> BrainContext {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(c) = self.seen.lock().get(n - 1) {
                return c.clone();
            }
            assert!(
                Instant::now() < deadline,
                "asked {} times, not {n}",
                self.seen.lock().len()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Brain for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        self.seen.lock().push(context.clone());
        let answer = self
            .answers
            .lock()
            .pop_front()
            .unwrap_or_else(|| BrainReply {
                assistant_text: String::new(),
                dialog_type: String::new(),
                tool_calls: vec![call("wait", json!({}))],
            });
        Box::pin(async move { Ok(answer) })
    }
}

fn call(tool: &str, args: Value) -> ToolCall {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ToolCall::new(format!("c{n}"), tool, args)
}

fn runtime(dir: &tempfile::TempDir, recorder: &Recorder) -> Runtime {
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            idle_think_seconds: 1000.0,
            speaking_seconds: 0.01,
            ..RuntimeOptions::default()
        },
    )
    .unwrap();
    let recorder = recorder.clone();
    rt.register_brain("recorder", move |_: &BrainSettings| {
        Ok(Box::new(recorder.clone()) as Box<dyn Brain>)
    })
    .unwrap();
    rt
}

fn player(rt: &Runtime, brain: &str) -> String {
    rt.spawn(
        AgentConfig::from_json(&json!({"name": "Ivy", "role": "the innkeeper", "brain": brain}))
            .unwrap(),
    )
    .unwrap()
}

/// The tic-tac-toe action of the examples (`docs/apps.md`).
fn place() -> ActionDef {
    ActionDef::new("place", "Place mark").with_params(json!({"row": "int", "col": "int"}))
}

/// A Rust handler that records requests and answers with a new state `{"moves": n}`.
fn counting_handler(seen: Arc<Mutex<Vec<ActionRequest>>>) -> AppHandler {
    AppHandler::local(move |request: ActionRequest| {
        let seen = seen.clone();
        async move {
            let n = {
                let mut seen = seen.lock();
                seen.push(request.clone());
                seen.len()
            };
            ActionOutcome::ok(json!({"placed": request.params})).with_state(json!({"moves": n}))
        }
    })
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_mode_tools_routing_and_state_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut config = AppConfig::new("board");
    config.role_prompt = "You play O at tic-tac-toe.".into();
    config.state = json!({"moves": 0});
    config.actions = vec![place()];
    rt.register_app(config, counting_handler(requests.clone()))
        .unwrap();
    let id = player(&rt, "recorder");

    // Static mode tool generation: `place` with {row: integer, col: integer}.
    brain.push(vec![call("fly", json!({}))]);
    brain.push(vec![call("place", json!({"row": 1, "col": 2}))]);
    rt.attach_app("board", &id).unwrap();
    assert_eq!(rt.agent_app(&id).unwrap().as_deref(), Some("board"));
    let session = rt.app_session("board").unwrap();
    assert_eq!(session.agent_id.as_deref(), Some(id.as_str()));
    let tool = &session.tools[0];
    assert_eq!(tool["name"], "place");
    assert_eq!(tool["description"], "Place mark");
    assert_eq!(tool["parameters"]["properties"]["row"]["type"], "integer");
    assert_eq!(tool["parameters"]["properties"]["col"]["type"], "integer");
    let first = brain.asked(1).await;
    let names: Vec<&str> = first
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"place") && names.contains(&"move"),
        "{names:?}"
    );
    let app = first
        .sections
        .get::<AppView>()
        .expect("the app is in the context");
    assert_eq!(app.role_prompt, "You play O at tic-tac-toe.");
    assert_eq!(app.state, json!({"moves": 0}));
    assert_eq!(app.actions, ["place"]);

    // Action not available: the agent is told, and repairs.
    let repaired = brain.asked(2).await;
    let failed = &repaired.steps[0].failed_calls[0];
    assert_eq!(failed.reason.as_str(), "tool_not_allowed");
    assert!(
        failed
            .message
            .starts_with("Action not available: 'fly' is not one of the app's actions now"),
        "{}",
        failed.message
    );

    // Valid action: forwarded to the handler with its params.
    until("the action", || requests.lock().len() == 1).await;
    let request = requests.lock()[0].clone();
    assert_eq!((request.name.as_str(), request.by), ("place", Actor::Agent));
    assert_eq!(request.params, json!({"row": 1, "col": 2}));

    // Turn-based state update: the agent is woken and decides from the new state, the action
    // and its outcome in its history.
    let next = brain.asked(3).await;
    let app = next.sections.get::<AppView>().unwrap().clone();
    assert_eq!(app.state, json!({"moves": 1}));
    assert_eq!(app.history.len(), 1);
    assert!(app.history[0].ok);
    assert_eq!(
        app.history[0].result,
        json!({"placed": {"row": 1, "col": 2}})
    );

    // Invalid arguments are refused before the app sees them, naming the field.
    brain.push(vec![call("place", json!({"row": "one", "col": 2}))]);
    rt.emit_app_event("board", "yourTurn", Value::Null).unwrap();
    let refused = brain.asked(5).await;
    let failed = &refused.steps[0].failed_calls[0];
    assert_eq!(failed.reason.as_str(), "invalid_args");
    assert!(failed.message.contains("row"), "{}", failed.message);
    assert_eq!(requests.lock().len(), 1);
    // The journal keeps each refused call with its arguments and why (an arena counts a move
    // outside the legal list this way).
    until("the refused call in the journal", || {
        rt.recent_decisions(&id)
            .unwrap()
            .iter()
            .any(|d| !d.rejected.is_empty())
    })
    .await;
    let decisions = rt.recent_decisions(&id).unwrap();
    let rejected: Vec<_> = decisions.iter().flat_map(|d| d.rejected.iter()).collect();
    let place = rejected.iter().find(|c| c.tool == "place").unwrap();
    assert_eq!(place.args, json!({"row": "one", "col": 2}));
    assert!(
        place
            .detail
            .as_deref()
            .unwrap()
            .starts_with("invalid_args: "),
        "{place:?}"
    );
    assert!(rejected.iter().any(|c| c.tool == "fly"), "{rejected:?}");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_context_events_labels_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut config = AppConfig::new("shop");
    config.mode = AppMode::Dynamic;
    config.actions = vec![ActionDef::new("browse", "Look at the wares")];
    let mut outbound = rt
        .register_app(config, counting_handler(requests.clone()))
        .unwrap();
    let id = player(&rt, "recorder");
    rt.attach_app("shop", &id).unwrap();
    brain.asked(1).await;

    // Dynamic mode tool update: new actions are the agent's tools at its next decision.
    rt.set_app_context(
        "shop",
        AppContext {
            state: Some(json!({"gold": 12})),
            actions: Some(vec![
                ActionDef::new("buy", "Buy an item").with_params(json!({"item": "string"})),
                ActionDef::new("leave", "Leave the shop"),
            ]),
            human_label: Some("⚔️ Combat: Lv.15 Goblin".into()),
        },
    )
    .unwrap();
    let updated = brain.asked(2).await;
    let names: Vec<&str> = updated
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"buy") && names.contains(&"leave"),
        "{names:?}"
    );
    assert!(!names.contains(&"browse"));
    assert_eq!(
        updated.sections.get::<AppView>().unwrap().state,
        json!({"gold": 12})
    );
    let session = rt.app_session("shop").unwrap();
    assert_eq!(
        session
            .tools
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["buy", "leave"]
    );

    // Human label display: "🎮 <label>" once, not again for the same label.
    rt.set_app_context(
        "shop",
        AppContext {
            human_label: Some("⚔️ Combat: Lv.15 Goblin".into()),
            ..AppContext::default()
        },
    )
    .unwrap();
    let labels: Vec<String> = rt
        .app_session("shop")
        .unwrap()
        .chat
        .into_iter()
        .filter(|l| l.role == ChatRole::System && l.text.starts_with("🎮"))
        .map(|l| l.text)
        .collect();
    assert_eq!(labels, ["🎮 ⚔️ Combat: Lv.15 Goblin"]);
    let mut sent = Vec::new();
    while let Ok(out) = outbound.try_recv() {
        sent.push(out);
    }
    assert!(sent.iter().any(|o| matches!(o, AppOutbound::Chat(l)
        if l.text == "🎮 ⚔️ Combat: Lv.15 Goblin")));

    // Game event notification: "Event: roundEnded — { winner: X }", and the agent decides.
    rt.emit_app_event("shop", "roundEnded", json!({"winner": "X"}))
        .unwrap();
    brain
        .saw(|c| {
            c.sections.get::<AppView>().is_some_and(|a| {
                a.events.last().map(String::as_str) == Some("Event: roundEnded — { winner: X }")
            })
        })
        .await;

    // The agent sees its history: three actions and their outcomes (each answer is used by
    // one decision, whatever woke it).
    for item in ["apple", "rope", "lamp"] {
        brain.push(vec![call("buy", json!({"item": item}))]);
        rt.emit_app_event("shop", "tick", json!({})).unwrap();
        let n = requests.lock().len();
        until("the action", || requests.lock().len() > n).await;
    }
    rt.emit_app_event("shop", "tick", json!({})).unwrap();
    let context = brain
        .saw(|c| {
            c.sections
                .get::<AppView>()
                .is_some_and(|a| a.history.len() == 3)
        })
        .await;
    let history = context.sections.get::<AppView>().unwrap().clone().history;
    assert_eq!(history.len(), 3);
    assert_eq!(
        history
            .iter()
            .map(|a| a.params["item"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["apple", "rope", "lamp"]
    );
    assert!(history.iter().all(|a| a.ok && a.by == Actor::Agent));
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_modes_and_action_flags() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut config = AppConfig::new("fight");
    config.control_mode = ControlMode::Human;
    config.actions = vec![
        ActionDef::new("attack", "Attack"),
        ActionDef {
            human_only: true,
            ..ActionDef::new("flee", "Run away")
        },
        ActionDef {
            agent_only: true,
            ..ActionDef::new("analyze", "Study the enemy")
        },
    ];
    rt.register_app(config, counting_handler(requests.clone()))
        .unwrap();
    let id = player(&rt, "recorder");

    // Agent action blocked in human mode: "Human is in control".
    brain.push(vec![call("attack", json!({}))]);
    rt.attach_app("fight", &id).unwrap();
    assert!(rt.app_session("fight").unwrap().tools.is_empty());
    let repaired = brain.asked(2).await;
    let failed = &repaired.steps[0].failed_calls[0];
    assert_eq!(failed.message, "Human is in control");
    assert_eq!(failed.reason.as_str(), "human_in_control");
    assert_eq!(serde_json::to_value(failed.status).unwrap(), "rejected");
    // The human acts in human mode; agentOnly stays the agent's.
    let record = rt
        .app_human_action("fight", "attack", json!({}))
        .await
        .unwrap();
    assert_eq!(record.by, Actor::Human);
    let e = rt
        .app_human_action("fight", "analyze", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code().as_str(), "action_refused");
    assert_eq!(
        e.to_string(),
        "Action 'analyze' is agentOnly: only the agent can trigger it"
    );

    // Copilot action partitioning: humanOnly is never the agent's, only the human's.
    rt.set_app_control_mode("fight", ControlMode::Copilot)
        .unwrap();
    brain.push(vec![call("flee", json!({}))]);
    rt.emit_app_event("fight", "yourTurn", Value::Null).unwrap();
    let offered: Vec<String> = rt
        .app_session("fight")
        .unwrap()
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(offered, ["analyze", "attack"]);
    let repaired = brain
        .saw(|c| {
            c.steps
                .first()
                .is_some_and(|s| s.failed_calls[0].tool == "flee")
        })
        .await;
    let failed = &repaired.steps[0].failed_calls[0];
    assert_eq!(failed.reason.as_str(), "human_only");
    assert_eq!(
        failed.message,
        "Action 'flee' is humanOnly: only the human can trigger it"
    );
    rt.app_human_action("fight", "flee", json!({}))
        .await
        .unwrap();
    // The agent remembers what it witnessed in the app: the human's actions, and the events
    // it saw, formed once its decision is done (which may end after the repair it was asked).
    let witnessed = || -> Vec<String> {
        rt.memories_page(&id, None, 100)
            .unwrap()
            .rows
            .into_iter()
            .filter(|m| m.kind == agents_core::memory::MemoryKind::Event)
            .map(|m| m.text)
            .collect()
    };
    until("the witnessed actions and events in memory", || {
        let seen = witnessed();
        seen.contains(&"In fight: the human did attack {}".to_string())
            && seen.contains(&"In fight: the human did flee {}".to_string())
            && seen
                .iter()
                .any(|t| t.starts_with("In fight: Event: yourTurn"))
    })
    .await;

    // In agent mode the human is refused.
    rt.set_app_control_mode("fight", ControlMode::Agent)
        .unwrap();
    let e = rt
        .app_human_action("fight", "attack", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "Agent is in control");
    let e = rt
        .app_human_action("fight", "dance", json!({}))
        .await
        .unwrap_err();
    assert!(e.to_string().starts_with("Action not available"), "{e}");
    let by: Vec<(String, Actor)> = requests
        .lock()
        .iter()
        .map(|r| (r.name.clone(), r.by))
        .collect();
    assert_eq!(
        by,
        [
            ("attack".to_string(), Actor::Human),
            ("flee".to_string(), Actor::Human)
        ]
    );
    let chat: Vec<String> = rt
        .app_session("fight")
        .unwrap()
        .chat
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert!(chat.contains(&"Control: copilot".to_string()), "{chat:?}");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_handlers_answer_or_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    let mut config = AppConfig::new("remote");
    config.actions = vec![place()];
    config.action_timeout_seconds = 0.3;
    let mut outbound = rt.register_app(config, AppHandler::Remote).unwrap();
    let id = player(&rt, "recorder");
    brain.push(vec![call("place", json!({"row": 0, "col": 0}))]);
    rt.attach_app("remote", &id).unwrap();
    let request = loop {
        match tokio::time::timeout(Duration::from_secs(10), outbound.recv())
            .await
            .unwrap()
            .unwrap()
        {
            AppOutbound::Action(request) => break request,
            _ => continue,
        }
    };
    assert_eq!(request.name, "place");
    rt.complete_app_action(
        "remote",
        request.action_id,
        ActionOutcome::ok(json!("X at 0,0")).with_state(json!({"board": "X........"})),
    )
    .unwrap();
    // Answered once only.
    let again = rt
        .complete_app_action("remote", request.action_id, ActionOutcome::ok(json!(1)))
        .unwrap_err();
    assert_eq!(again.code().as_str(), "unknown_action");
    let woken = brain.asked(2).await;
    assert_eq!(
        woken.sections.get::<AppView>().unwrap().clone().state,
        json!({"board": "X........"})
    );

    // Not answered in time: the action fails back to the agent.
    let n = brain.contexts().len();
    brain.push(vec![call("place", json!({"row": 1, "col": 1}))]);
    rt.emit_app_event("remote", "yourTurn", Value::Null)
        .unwrap();
    brain.asked(n + 1).await;
    until("the timeout", || {
        rt.app_session("remote")
            .unwrap()
            .history
            .iter()
            .any(|a| a.error.is_some())
    })
    .await;
    let session = rt.app_session("remote").unwrap();
    let late = session.history.last().unwrap();
    assert!(!late.ok);
    assert_eq!(
        late.error.as_deref(),
        Some("the app did not answer within 0.3 s")
    );
    rt.shutdown(Duration::from_secs(2));
}

/// What a front end sees of the session comes out in order, with nothing lost in a burst
/// longer than the history: the agent coming, every record, each event after the record of
/// the action that raised it, chat lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_end_follows_the_session_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    let mut config = AppConfig::new("feed");
    config.control_mode = ControlMode::Copilot;
    config.actions = vec![place()];
    config.history = 3;
    let mut moves = 0;
    let handler = AppHandler::local(move |request: ActionRequest| {
        let row = request.params["row"].as_i64().unwrap_or(0);
        async move {
            let outcome = ActionOutcome::ok(json!(row)).with_state(json!({"row": row}));
            if row % 4 == 3 {
                outcome.with_event("fourth", json!({"row": row}))
            } else {
                outcome
            }
        }
    });
    let mut outbound = rt.register_app(config, handler).unwrap();
    let id = player(&rt, "recorder");
    rt.attach_app("feed", &id).unwrap();
    for row in 0..12 {
        rt.app_human_action("feed", "place", json!({"row": row, "col": 0}))
            .await
            .unwrap();
        moves += 1;
    }
    rt.app_human_says("feed", "done").unwrap();
    let mut seen = Vec::new();
    while let Ok(Some(out)) =
        tokio::time::timeout(Duration::from_millis(300), outbound.recv()).await
    {
        seen.push(match out {
            AppOutbound::Attached { agent_id } => format!("attached {agent_id}"),
            AppOutbound::Recorded(r) => format!("#{} {}", r.action_id, r.params["row"]),
            AppOutbound::Event(e) => e.text,
            AppOutbound::Chat(line) => format!("{}: {}", line.role, line.text),
            AppOutbound::Detached { .. } | AppOutbound::Action(_) => "?".into(),
        });
    }
    let mut expected = vec![format!("attached {id}"), "system: Ivy joined".to_string()];
    for row in 0..moves {
        expected.push(format!("#{} {row}", row + 1));
        if row % 4 == 3 {
            expected.push(format!("Event: fourth — {{ row: {row} }}"));
        }
    }
    expected.push("human: done".into());
    assert_eq!(seen, expected);
    // The session keeps only the last 3; the front end got all 12.
    assert_eq!(rt.app_session("feed").unwrap().history.len(), 3);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_kept_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    {
        let rt = runtime(&dir, &brain);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let mut config = AppConfig::new("saga");
        config.control_mode = ControlMode::Copilot;
        config.actions = vec![place()];
        config.human_label = Some("Round 1".into());
        rt.register_app(config, counting_handler(requests)).unwrap();
        rt.app_human_action("saga", "place", json!({"row": 2, "col": 2}))
            .await
            .unwrap();
        rt.emit_app_event("saga", "roundEnded", json!({"winner": "X"}))
            .unwrap();
        rt.app_human_says("saga", "Good game!").unwrap();
        rt.unregister_app("saga").unwrap();
        assert!(rt.app_session("saga").is_err());
        rt.shutdown(Duration::from_secs(2));
    }
    let rt = runtime(&dir, &brain);
    let mut config = AppConfig::new("saga");
    config.actions = vec![place()];
    rt.register_app(config, AppHandler::Remote).unwrap();
    let session = rt.app_session("saga").unwrap();
    assert_eq!(session.state, json!({"moves": 1}), "the stored state");
    assert_eq!(session.human_label.as_deref(), Some("Round 1"));
    assert_eq!(session.history.len(), 1);
    assert_eq!(session.history[0].params, json!({"row": 2, "col": 2}));
    assert_eq!(session.events[0].text, "Event: roundEnded — { winner: X }");
    assert!(
        session
            .chat
            .iter()
            .any(|l| l.role == ChatRole::Human && l.text == "Good game!")
    );
    // Ids go on after the stored ones.
    let record = rt.app_session("saga").unwrap().history[0].action_id;
    assert_eq!(record, 1);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scripted_brain_plays_apps_offline() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let mut config = AppConfig::new("grid");
    config.world_tools = false;
    config.actions = vec![ActionDef::new("place", "Place a mark").with_params(json!({
            "type": "object",
            "properties": {"row": {"type": "integer", "minimum": 0, "maximum": 2},
                           "col": {"type": "integer", "minimum": 0, "maximum": 2}},
            "required": ["row", "col"], "additionalProperties": false}))];
    rt.register_app(config, counting_handler(requests.clone()))
        .unwrap();
    let id = player(&rt, "scripted");
    rt.attach_app("grid", &id).unwrap();
    assert_eq!(rt.agent_tool_sets(&id).unwrap(), ["app"]);
    // Static mode: every processed action with a new state wakes it for the next one.
    until("five actions", || requests.lock().len() >= 5).await;
    for request in requests.lock().iter() {
        let (row, col) = (
            request.params["row"].as_i64().unwrap(),
            request.params["col"].as_i64().unwrap(),
        );
        assert!(
            (0..=2).contains(&row) && (0..=2).contains(&col),
            "{request:?}"
        );
    }
    // Detached: its world tools come back.
    assert_eq!(rt.detach_app("grid").unwrap(), id);
    assert_eq!(rt.agent_tool_sets(&id).unwrap(), ["world"]);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_apps_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    let mut config = AppConfig::new("bad");
    config.actions = vec![ActionDef::new("place", "").with_params(json!({"row": "integr"}))];
    let e = rt.register_app(config, AppHandler::Remote).unwrap_err();
    assert_eq!(e.code().as_str(), "invalid_config");
    assert_eq!(
        e.to_string(),
        "action 'place': params.row: unknown type 'integr' (use int, number, string or bool)"
    );
    rt.register_app(AppConfig::new("one"), AppHandler::Remote)
        .unwrap();
    let e = rt
        .register_app(AppConfig::new("one"), AppHandler::Remote)
        .unwrap_err();
    assert_eq!(e.code().as_str(), "app_exists");
    let a = player(&rt, "scripted");
    let b = player(&rt, "scripted");
    rt.attach_app("one", &a).unwrap();
    let e = rt.attach_app("one", &b).unwrap_err();
    assert_eq!(e.code().as_str(), "app_attached");
    assert_eq!(
        rt.attach_app("nope", &a).unwrap_err().code().as_str(),
        "unknown_app"
    );
    // A terminated agent leaves its app.
    rt.terminate(&a).unwrap();
    until("the detach", || {
        rt.app_session("one").unwrap().agent_id.is_none()
    })
    .await;
    rt.attach_app("one", &b).unwrap();
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_is_unregistered_only_while_it_is_current() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    let (first, _first_out) = rt
        .register_owned_app(AppConfig::new("board"), AppHandler::Remote)
        .unwrap();
    assert_eq!(rt.app_registration("board"), Some(first));
    // The game removes it, and the same id is registered again: another registration.
    rt.unregister_app("board").unwrap();
    assert_eq!(rt.app_registration("board"), None);
    let (second, mut second_out) = rt
        .register_owned_app(AppConfig::new("board"), AppHandler::Remote)
        .unwrap();
    assert_ne!(first, second);
    let ivy = player(&rt, "scripted");
    rt.attach_app("board", &ivy).unwrap();
    // The first registration's owner lets go of it: the second app stays, and keeps its agent.
    let e = rt.unregister_app_registration("board", first).unwrap_err();
    assert_eq!(e.code().as_str(), "unknown_app");
    assert_eq!(rt.app_registration("board"), Some(second));
    assert_eq!(rt.agent_app(&ivy).unwrap().as_deref(), Some("board"));
    // Its own owner's does remove it, detaching the agent.
    rt.unregister_app_registration("board", second).unwrap();
    assert!(rt.app_ids().is_empty());
    assert_eq!(rt.agent_app(&ivy).unwrap(), None);
    let mut detached = None;
    while let Ok(message) = second_out.try_recv() {
        if let AppOutbound::Detached { reason, .. } = message {
            detached = Some(reason);
        }
    }
    assert_eq!(detached.as_deref(), Some("unregistered"));
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_answer_is_refused_and_the_action_keeps_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    let mut config = AppConfig::new("board");
    config.actions = vec![place()];
    let mut out = rt.register_app(config, AppHandler::Remote).unwrap();
    let ivy = player(&rt, "recorder");
    brain.push(vec![call("place", json!({"row": 1, "col": 1}))]);
    rt.attach_app("board", &ivy).unwrap();
    let request = loop {
        match tokio::time::timeout(Duration::from_secs(10), out.recv()).await {
            Ok(Some(AppOutbound::Action(request))) => break request,
            Ok(Some(_)) => continue,
            other => panic!("no action came: {other:?}"),
        }
    };
    let hostile = ActionDef::new("place", "").with_params(json!({"type": "object",
        "properties": {"n": {"type": "integer", "minimum": -1.7e308}}}));
    let e = rt
        .complete_app_action(
            "board",
            request.action_id,
            ActionOutcome::ok(json!("placed")).with_actions(vec![hostile]),
        )
        .unwrap_err();
    assert_eq!(e.code().as_str(), "invalid_config");
    assert!(
        e.to_string()
            .starts_with("action 'place': params.properties.n.minimum: -1.7e308 is out of range"),
        "{e}"
    );
    rt.complete_app_action(
        "board",
        request.action_id,
        ActionOutcome::ok(json!("placed")),
    )
    .unwrap();
    until("the answer recorded", || {
        rt.app_session("board").unwrap().history.len() == 1
    })
    .await;
    let session = rt.app_session("board").unwrap();
    assert_eq!(session.history[0].result, "placed");
    assert_eq!(
        session.actions[0].params["properties"]["row"]["type"],
        "integer"
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_id_in_the_config_attaches_at_spawn() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    let mut config = AppConfig::new("cards");
    config.actions = vec![ActionDef::new("draw", "Draw a card")];
    rt.register_app(config, AppHandler::Remote).unwrap();
    let spawn = |app: &str| {
        rt.spawn(
            AgentConfig::from_json(&json!({"name": "Ivy", "brain": "recorder", "app_id": app}))
                .unwrap(),
        )
    };
    let id = spawn("cards").unwrap();
    assert_eq!(rt.agent_app(&id).unwrap().as_deref(), Some("cards"));
    assert_eq!(rt.agent_tool_sets(&id).unwrap(), ["world", "app"]);
    // Refused before an id is used.
    assert_eq!(spawn("cards").unwrap_err().code().as_str(), "app_attached");
    assert_eq!(spawn("none").unwrap_err().code().as_str(), "unknown_app");
    let next = rt
        .spawn(AgentConfig::from_json(&json!({"name": "Bo", "brain": "recorder"})).unwrap())
        .unwrap();
    assert_eq!(next, "agent_002");
    rt.shutdown(Duration::from_secs(2));
}

fn game_app(app_id: &str, game: Value) -> AppConfig {
    let mut config: AppConfig =
        serde_json::from_value(json!({"app_id": app_id, "game": game})).unwrap();
    config.world_tools = false;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_agent_plays_tic_tac_toe_to_the_end_against_the_ai() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    let config = game_app(
        "ttt",
        json!({"name": "tic_tac_toe", "opponent": "ai", "level": "random", "seed": 5}),
    );
    rt.register_app(config, AppHandler::Remote).unwrap();
    let session = rt.app_session("ttt").unwrap();
    assert_eq!(session.state["turn"], "you");
    assert_eq!(session.state["legal_moves"].as_array().unwrap().len(), 9);
    let offered: Vec<&str> = session
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["move", "suggest_move"]);
    let id = player(&rt, "scripted");
    rt.attach_app("ttt", &id).unwrap();
    // The state and the game_over event are recorded one after the other: wait for both.
    until("the game's end", || {
        let session = rt.app_session("ttt").unwrap();
        session.state["status"] == "game_over"
            && session
                .events
                .last()
                .is_some_and(|e| e.text.starts_with("Event: game_over"))
    })
    .await;
    let session = rt.app_session("ttt").unwrap();
    let winner = session.state["winner"].as_str().unwrap();
    assert!(["you", "opponent", "draw"].contains(&winner), "{winner}");
    assert!(session.actions.is_empty(), "no actions once it is over");
    assert_eq!(
        session.events.last().unwrap().text,
        format!("Event: game_over — {{ winner: {winner} }}")
    );
    // Every move of the agent was legal (the AI's pick), and each got the AI's answer.
    assert!(session.history.len() >= 3);
    assert!(
        session.history.iter().all(|a| a.ok && a.name == "move"),
        "{:?}",
        session.history
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_app_is_played_by_a_scripted_agent() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, &Recorder::default());
    for game in agents_core::apps::games::GAMES {
        let app_id = format!("g_{}", game.name);
        rt.register_app(
            game_app(
                &app_id,
                json!({"name": game.name, "level": "easy", "seed": 1}),
            ),
            AppHandler::Remote,
        )
        .unwrap();
        let id = player(&rt, "scripted");
        rt.attach_app(&app_id, &id).unwrap();
    }
    for game in agents_core::apps::games::GAMES {
        let app_id = format!("g_{}", game.name);
        until(game.name, || {
            let s = rt.app_session(&app_id).unwrap();
            s.history.iter().filter(|a| a.ok).count() >= 3 || s.state["status"] == "game_over"
        })
        .await;
        let session = rt.app_session(&app_id).unwrap();
        assert!(
            session.history.iter().all(|a| a.ok),
            "{}: {:?}",
            game.name,
            session.history
        );
        assert_eq!(session.state["game"], game.name);
    }
    // Bad setups are named.
    let e = rt
        .register_app(game_app("x", json!({"name": "go"})), AppHandler::Remote)
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("game.name: 'go' is not a game app"),
        "{e}"
    );
    let e = rt
        .register_app(
            game_app("y", json!({"name": "chess", "level": "expert"})),
            AppHandler::Remote,
        )
        .unwrap_err();
    assert!(e.to_string().starts_with("game.level"), "{e}");
    rt.shutdown(Duration::from_secs(2));
}

/// Sea battle and the house games keep what is hidden out of the agent's view: the opponent's
/// fleet, the shoe and the dealer's hole card (the state strings that carry them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_information_stays_out_of_the_agents_view() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);

    // Sea battle: the agent's board, its shots, the opponent's shots; never the opponent's fleet.
    rt.register_app(
        game_app(
            "sea",
            json!({"name": "sea_battle", "level": "hard", "seed": 3}),
        ),
        AppHandler::Remote,
    )
    .unwrap();
    let state = rt.app_session("sea").unwrap().state;
    let position = state["position"].as_str().unwrap();
    let keys: Vec<&str> = position
        .split('|')
        .map(|p| p.split(':').next().unwrap())
        .collect();
    assert_eq!(keys, ["P", "F", "OF", "T", "ST", "LA", "W"], "{position}");
    assert_eq!(state["legal_moves"].as_array().unwrap().len(), 100);
    let id = player(&rt, "recorder");
    // A shot spelled as the `move` action lists it (its `enum` of legal moves).
    brain.push(vec![call("move", json!({"coord": "E5"}))]);
    rt.attach_app("sea", &id).unwrap();
    until("the shot", || {
        !rt.app_session("sea").unwrap().history.is_empty()
    })
    .await;
    let session = rt.app_session("sea").unwrap();
    let shot = &session.history[0];
    assert!(shot.ok, "{shot:?}");
    let outcome = shot.result["outcome"].as_str().unwrap();
    assert!(outcome.starts_with("E5:"), "{outcome}");
    // The AI answered with a shot of its own, its outcome told.
    let answer = shot.result["opponent_moved"][0].as_str().unwrap();
    assert!(answer.contains(':'), "{answer}");
    assert!(!session.state["position"].as_str().unwrap().contains("|O:"));
    rt.detach_app("sea").unwrap();

    // Blackjack: hands, the up card, the stack; a scripted agent plays rounds and deals again.
    rt.register_app(
        game_app(
            "bj",
            json!({"name": "blackjack", "stack": 50, "bet": 10, "seed": 8}),
        ),
        AppHandler::Remote,
    )
    .unwrap();
    let session = rt.app_session("bj").unwrap();
    assert!(session.state.get("state").is_none(), "{}", session.state);
    assert_eq!(session.state["opponent"], "house");
    if session.state["status"] == "in_progress" {
        assert_eq!(session.state["dealerHoleCardHidden"], true);
        assert!(session.state.get("dealerCards").is_none());
        let names: Vec<&str> = session.actions.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(&names[..2], ["hit", "stand"]);
    }
    let dealer = player(&rt, "scripted");
    rt.attach_app("bj", &dealer).unwrap();
    until("two rounds", || {
        rt.app_session("bj")
            .unwrap()
            .events
            .iter()
            .filter(|e| e.name == "game_over")
            .count()
            >= 2
    })
    .await;
    let session = rt.app_session("bj").unwrap();
    assert!(
        session.history.iter().all(|a| a.ok),
        "{:?}",
        session.history
    );
    assert!(session.history.iter().any(|a| a.name == "deal"));
    let over = &session
        .events
        .iter()
        .find(|e| e.name == "game_over")
        .unwrap()
        .payload;
    assert!(["you", "opponent", "draw"].contains(&over["winner"].as_str().unwrap()));
    assert_eq!(
        over["stack"].as_i64().unwrap(),
        50 + over["net"].as_i64().unwrap()
    );
    rt.detach_app("bj").unwrap();

    // The slot machine: spins until the stack no longer covers the bet.
    rt.register_app(
        game_app(
            "slot",
            json!({"name": "slot", "stack": 20, "bet": 10, "seed": 2}),
        ),
        AppHandler::Remote,
    )
    .unwrap();
    assert!(rt.app_session("slot").unwrap().state.get("state").is_none());
    rt.attach_app("slot", &dealer).unwrap();
    until("a few spins", || {
        let s = rt.app_session("slot").unwrap();
        s.state["status"] == "game_over" || s.history.len() >= 4
    })
    .await;
    let session = rt.app_session("slot").unwrap();
    assert!(session.history.iter().all(|a| a.ok && a.name == "spin"));
    if session.state["status"] == "game_over" {
        assert!(session.actions.is_empty());
        assert_eq!(session.events.last().unwrap().name, "game_over");
    }
    rt.detach_app("slot").unwrap();

    // The dice tray: schema-valid rolls.
    rt.register_app(
        game_app("dice", json!({"name": "rpg_dice", "seed": 4})),
        AppHandler::Remote,
    )
    .unwrap();
    rt.attach_app("dice", &dealer).unwrap();
    until("two rolls", || {
        rt.app_session("dice").unwrap().history.len() >= 2
    })
    .await;
    let session = rt.app_session("dice").unwrap();
    let roll = &session.history[0];
    assert!(roll.ok, "{roll:?}");
    let rolls = roll.result["rolls"].as_array().unwrap();
    assert_eq!(rolls.len() as u64, roll.params["count"].as_u64().unwrap());
    assert_eq!(
        roll.result["total"].as_u64().unwrap(),
        rolls.iter().map(|r| r.as_u64().unwrap()).sum::<u64>()
    );
    assert!(session.state["rolls_made"].as_u64().unwrap() >= 2);

    // Setups that make no sense are refused, naming the field.
    for (game, field) in [
        (
            json!({"name": "sea_battle", "opponent": "human"}),
            "game.opponent",
        ),
        (
            json!({"name": "blackjack", "opponent": "human"}),
            "game.opponent",
        ),
        (json!({"name": "chess", "stack": 100}), "game.stack"),
        (json!({"name": "rpg_dice", "bet": 5}), "game.bet"),
        (json!({"name": "slot", "stack": 5, "bet": 10}), "game:"),
    ] {
        let e = rt
            .register_app(game_app("bad", game.clone()), AppHandler::Remote)
            .unwrap_err();
        assert!(e.to_string().starts_with(field), "{game}: {e}");
    }
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_against_the_human_takes_turns() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    rt.register_app(
        game_app(
            "duel",
            json!({"name": "four_in_a_row", "opponent": "human"}),
        ),
        AppHandler::Remote,
    )
    .unwrap();
    let session = rt.app_session("duel").unwrap();
    assert_eq!(session.control_mode, ControlMode::Copilot);
    // Not the human's turn yet.
    let e = rt
        .app_human_action("duel", "move", json!({"column": 4}))
        .await
        .unwrap_err();
    assert!(
        e.to_string().starts_with("Action 'move' is agentOnly"),
        "{e}"
    );
    let id = player(&rt, "recorder");
    brain.push(vec![call("move", json!({"column": 4}))]);
    rt.attach_app("duel", &id).unwrap();
    until("the agent's move", || {
        rt.app_session("duel").unwrap().state["turn"] == "opponent"
    })
    .await;
    // The agent is offered nothing while the human is to move; the human is.
    let session = rt.app_session("duel").unwrap();
    assert!(session.tools.is_empty());
    assert!(session.actions[0].human_only);
    let human = rt
        .app_human_action("duel", "move", json!({"column": 4}))
        .await
        .unwrap();
    assert!(human.ok, "{human:?}");
    let session = rt.app_session("duel").unwrap();
    assert_eq!(session.state["turn"], "you");
    assert_eq!(
        session.state["position"],
        "G:......./......./......./......./...Y.../...R...|T:player|ST:in_progress|LA:4|W:-"
    );
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_due_move_must_be_made_words_alone_go_back_for_repair() {
    let dir = tempfile::tempdir().unwrap();
    let brain = Recorder::default();
    let rt = runtime(&dir, &brain);
    rt.register_app(
        game_app(
            "duel",
            json!({"name": "four_in_a_row", "opponent": "human"}),
        ),
        AppHandler::Remote,
    )
    .unwrap();
    let id = player(&rt, "recorder");
    // Words only, then a move with a word.
    brain.answers.lock().push_back(BrainReply {
        assistant_text: "Let me think about this.".into(),
        dialog_type: "monologue".into(),
        tool_calls: Vec::new(),
    });
    brain.answers.lock().push_back(BrainReply {
        assistant_text: "There.".into(),
        dialog_type: "reply".into(),
        tool_calls: vec![call("move", json!({"column": 3}))],
    });
    rt.attach_app("duel", &id).unwrap();
    until("the agent's move", || {
        rt.app_session("duel").unwrap().state["turn"] == "opponent"
    })
    .await;
    let seen = brain.contexts();
    assert_eq!(seen[0].due_tools, ["move"], "its move is due on its turn");
    let view = seen[0].sections.get::<AppView>().unwrap();
    assert_eq!(view.due, ["move"]);
    let repair = &seen[1].steps[0];
    assert_eq!(
        repair.problem.as_deref(),
        Some("it is your move: the answer must call move (it may say something too)")
    );
    // The journal keeps the refused answer; the repair moved.
    let moved = || {
        rt.recent_decisions(&id)
            .unwrap()
            .into_iter()
            .find(|d| d.calls.iter().any(|c| c.tool == "move"))
    };
    until("the decision journaled", || moved().is_some()).await;
    let moved = moved().unwrap();
    assert_eq!(moved.repairs, 1);
    assert_eq!(moved.spoken, ["There."]);
    // On the human's turn nothing is due.
    let human = rt
        .app_human_action("duel", "move", json!({"column": 4}))
        .await
        .unwrap();
    assert!(human.ok, "{human:?}");
    rt.shutdown(Duration::from_secs(2));
}
