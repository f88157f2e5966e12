//! GM turns (`docs/campaigns.md`, "A GM turn"): the offline scripted GM,
//! the repair loop and the anti-silent rule, tolerant reading of a model's answer, the turn log.

use std::collections::VecDeque;

use agents_core::brain::scripted::ScriptedBrain;
use agents_core::brain::{Brain, BrainContext, BrainReply, BrainSettings, DecideFuture};
use agents_core::campaign::Campaign;
use agents_core::campaign::turn::{
    GmIdentity, GmView, SILENT_FALLBACK, TurnRequest, parse_answer, take_turn,
};
use serde_json::{Value, json};

fn campaign() -> Campaign {
    Campaign::new("camp_0001", &["pc_001".to_string(), "pc_002".to_string()])
}

fn gm() -> GmIdentity {
    GmIdentity {
        agent_id: "agent_001".into(),
        name: "Morgana".into(),
        prompt: String::new(),
    }
}

fn scripted() -> ScriptedBrain {
    ScriptedBrain::new(&BrainSettings {
        seed: 1,
        thinking_seconds: 0.0,
        ..BrainSettings::default()
    })
}

async fn turn(
    c: &mut Campaign,
    brain: &mut dyn Brain,
    n: u64,
    input: &str,
) -> agents_core::campaign::turn::TurnEntry {
    take_turn(
        c,
        brain,
        &gm(),
        &TurnRequest {
            number: n,
            user_input: input,
            actor: None,
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn the_scripted_gm_understands_plain_requests() {
    let mut c = campaign();
    let mut brain = scripted();

    let e = turn(&mut c, &mut brain, 1, "Where can I go?").await;
    assert_eq!(e.turn_id, "turn_0001");
    assert_eq!(e.tool_calls[0].tool, "move_options");
    assert_eq!(
        e.applied_actions[0].result,
        json!({"options": [{"to_area_id": "area_002", "name": "Side Room"}]})
    );
    assert!(
        e.assistant_text.contains("No movement yet") && e.assistant_text.contains("Side Room"),
        "{}",
        e.assistant_text
    );
    assert!(!e.changed());
    assert_eq!(e.tool_feedback, None);

    let e = turn(&mut c, &mut brain, 2, "I go to the side room").await;
    assert_eq!(e.tool_calls[0].tool, "move");
    assert_eq!(
        e.tool_calls[0].args,
        json!({"actor_id": "pc_001", "to_area_id": "area_002"})
    );
    assert!(e.changed());
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_002"));
    assert_eq!(e.state_summary["positions"]["pc_001"], "area_002");

    let e = turn(&mut c, &mut brain, 3, "I drink a potion").await;
    assert_eq!(e.applied_actions[0].tool, "hp_delta");
    assert_eq!(e.applied_actions[0].result, json!({"new_hp": 13}));
    assert_eq!(e.dialog_type, "resolution_summary");

    let e = turn(&mut c, &mut brain, 4, "Let's explore deeper").await;
    assert_eq!(e.applied_actions[0].tool, "map_generate");
    let created = e.applied_actions[0].result["created_area_ids"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(created.len(), 4);
    assert_eq!(
        c.map.areas[created[0].as_str().unwrap()]
            .parent_area_id
            .as_deref(),
        Some("area_002")
    );

    // An area id, and the new entry is one step away now.
    let e = turn(
        &mut c,
        &mut brain,
        5,
        &format!("move to {}", created[0].as_str().unwrap()),
    )
    .await;
    assert_eq!(e.applied_actions[0].tool, "move", "{e:?}");

    // Anything else: a non-empty GM line and no call.
    let e = turn(&mut c, &mut brain, 6, "I sing a song").await;
    assert!(e.tool_calls.is_empty());
    assert!(
        e.assistant_text.contains("What do you do next?"),
        "{}",
        e.assistant_text
    );
    assert_eq!(
        (e.dialog_type.as_str(), e.dialog_type_source.as_str()),
        ("action_prompt", "model")
    );
}

#[tokio::test]
async fn the_scripted_gm_goes_on_follows_and_is_bitten() {
    let mut c = campaign();
    let mut brain = scripted();
    let as_actor = |n: u64, input: &'static str, actor: &'static str| TurnRequest {
        number: n,
        user_input: input,
        actor: Some(actor),
    };
    // The one way out of the starting area.
    let request = as_actor(1, "I open the door and walk into the next room.", "pc_001");
    let e = take_turn(&mut c, &mut brain, &gm(), &request)
        .await
        .unwrap();
    assert_eq!(
        e.applied_actions[0].args,
        json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
        "{e:?}"
    );
    // Bitten: a wound.
    let request = as_actor(2, "A giant rat bites me. How bad is it?", "pc_001");
    let e = take_turn(&mut c, &mut brain, &gm(), &request)
        .await
        .unwrap();
    assert_eq!(e.applied_actions[0].result, json!({"new_hp": 8}), "{e:?}");
    // The friend follows into the side room.
    let request = as_actor(3, "I follow my friend.", "pc_002");
    let e = take_turn(&mut c, &mut brain, &gm(), &request)
        .await
        .unwrap();
    assert_eq!(
        e.applied_actions[0].args,
        json!({"actor_id": "pc_002", "to_area_id": "area_002"}),
        "{e:?}"
    );
    // Going on with no way out, or following a friend who is here: nowhere to move.
    let request = as_actor(4, "I go on through the door.", "pc_002");
    let e = take_turn(&mut c, &mut brain, &gm(), &request)
        .await
        .unwrap();
    assert_eq!(e.tool_calls[0].tool, "move_options", "{e:?}");
    assert!(e.assistant_text.starts_with("Which way?"), "{e:?}");
    let request = as_actor(5, "I follow my friend.", "pc_001");
    let e = take_turn(&mut c, &mut brain, &gm(), &request)
        .await
        .unwrap();
    assert!(
        e.applied_actions.is_empty() && e.tool_feedback.is_none(),
        "{e:?}"
    );
}

#[tokio::test]
async fn out_of_reach_targets_and_other_party_members() {
    let mut c = campaign();
    c.actors.get_mut("pc_002").unwrap().position = Some("area_002".into());
    let mut brain = scripted();
    // One-way: from the side room there is no way back to the starting area.
    let e = take_turn(
        &mut c,
        &mut brain,
        &gm(),
        &TurnRequest {
            number: 1,
            user_input: "go to the starting area",
            actor: Some("pc_002"),
        },
    )
    .await
    .unwrap();
    assert_eq!(e.actor_id, "pc_002");
    assert_eq!(e.tool_calls[0].tool, "move_options");
    assert!(
        e.assistant_text.contains("not one step away"),
        "{}",
        e.assistant_text
    );
    assert_eq!(c.actors["pc_002"].position.as_deref(), Some("area_002"));
    // A turn actor outside the party fails the turn; nothing changes.
    let before = c.clone();
    let r = take_turn(
        &mut c,
        &mut brain,
        &gm(),
        &TurnRequest {
            number: 2,
            user_input: "hi",
            actor: Some("npc_1"),
        },
    )
    .await;
    assert!(r.unwrap_err().to_string().contains("not in the party"));
    assert_eq!(c, before);
}

#[tokio::test]
async fn a_dying_actor_can_only_heal() {
    let mut c = campaign();
    c.actors.get_mut("pc_001").unwrap().hp = 0;
    c.actors.get_mut("pc_001").unwrap().character_state = "dying".into();
    let mut brain = scripted();
    let e = turn(&mut c, &mut brain, 1, "go to the side room").await;
    assert!(e.tool_calls.is_empty());
    assert!(e.assistant_text.contains("dying"));
    let e = turn(&mut c, &mut brain, 2, "I drink a potion").await;
    assert_eq!(e.applied_actions.len(), 1);
    assert_eq!(c.actors["pc_001"].character_state, "alive");
}

/// A brain that answers from a queue and keeps every context it saw.
struct Queue {
    answers: VecDeque<BrainReply>,
    seen: Vec<BrainContext>,
}

impl Brain for Queue {
    fn name(&self) -> &str {
        "queue"
    }

    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        self.seen.push(context.clone());
        let answer = self.answers.pop_front().unwrap_or_default();
        Box::pin(async move { Ok(answer) })
    }
}

fn queue(answers: &[Value]) -> Queue {
    Queue {
        answers: answers
            .iter()
            .map(|a| serde_json::from_value(a.clone()).unwrap())
            .collect(),
        seen: Vec::new(),
    }
}

#[tokio::test]
async fn refused_calls_are_repaired_before_anything_is_applied() {
    let mut c = campaign();
    let mut brain = queue(&[
        json!({"assistant_text": "", "dialog_type": "scene_description", "tool_calls": [
            {"id": "call_1", "tool": "hp_delta", "args": {"target_character_id": "pc_001", "delta": -1, "cause": "x"}},
            {"id": "call_2", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002", "from_area_id": "area_001"}}]}),
        json!({"assistant_text": "", "dialog_type": "Scene_Description ", "tool_calls": [
            {"id": "call_3", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}]}),
    ]);
    let e = turn(&mut c, &mut brain, 1, "go east").await;
    assert_eq!(e.repairs, 1);
    // The first answer was only tried: its hp_delta was never applied.
    assert_eq!(c.actors["pc_001"].hp, 10);
    assert_eq!(e.applied_actions.len(), 1);
    assert_eq!(e.applied_actions[0].tool, "move");
    assert_eq!(
        (e.dialog_type.as_str(), e.dialog_type_source.as_str()),
        ("scene_description", "model")
    );
    // The brain got the contract's failure feedback for call_2.
    let step = &brain.seen[1].steps[0];
    assert_eq!(step.failed_calls.len(), 1);
    assert_eq!(step.failed_calls[0].id, "call_2");
    assert_eq!(
        serde_json::to_value(&step.failed_calls[0]).unwrap()["reason"],
        "invalid_args"
    );
    // The GM saw the GM tools and the campaign.
    let first = &brain.seen[0];
    let tools: Vec<&str> = first
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["move", "move_options", "hp_delta", "map_generate"]);
    let view = first.sections.get::<GmView>().unwrap();
    assert_eq!(view.context["selected"]["active_actor_id"], "pc_001");
    assert_eq!(
        view.context["map"]["areas"]["area_001"]["reachable_area_ids"],
        json!(["area_002"])
    );
}

#[tokio::test]
async fn a_silent_gm_is_asked_again_and_never_ends_the_turn_silent() {
    let mut c = campaign();
    let mut brain = queue(&[json!({}), json!({"assistant_text": "  "}), json!({})]);
    let e = turn(&mut c, &mut brain, 1, "hello").await;
    assert_eq!(e.repairs, 2);
    assert_eq!(e.assistant_text, SILENT_FALLBACK);
    assert_eq!(e.dialog_type_source, "fallback");
    assert!(
        brain.seen[1].steps[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("assistant_text is empty")
    );
    // After the repairs, a still-refused call is applied as it is: its failure is logged.
    let mut brain = queue(&[
        json!({"tool_calls": [{"id": "c1", "tool": "fly", "args": {}}]}),
        json!({"tool_calls": [{"id": "c2", "tool": "fly", "args": {}}]}),
        json!({"assistant_text": "Up you go", "dialog_type": "weird", "tool_calls": [{"id": "c3", "tool": "fly", "args": {}}]}),
    ]);
    let e = turn(&mut c, &mut brain, 2, "fly").await;
    assert_eq!(e.repairs, 2);
    let feedback = serde_json::to_value(e.tool_feedback.as_ref().unwrap()).unwrap();
    assert_eq!(feedback["failed_calls"][0]["reason"], "tool_not_allowed");
    assert_eq!(
        (e.dialog_type.as_str(), e.dialog_type_source.as_str()),
        ("scene_description", "fallback")
    );
}

#[test]
fn a_models_mess_is_read_tolerantly() {
    // Not JSON: the raw text is the GM's line.
    let (r, dropped) = parse_answer("The door creaks open.");
    assert_eq!(r.assistant_text, "The door creaks open.");
    assert!(r.tool_calls.is_empty() && dropped.is_empty());
    // A contract in a fence with bad calls: the good ones stay, the bad ones are reported.
    let text = "```json\n{\"assistant_text\": \"ok\", \"dialog_type\": \"action_prompt\", \"tool_calls\": [\
        {\"tool\": \"move_options\"}, {\"id\": \"c2\", \"args\": {}}, {\"id\": \"c3\", \"tool\": \"move\", \"args\": \"north\"}, 7]}\n```";
    let (r, dropped) = parse_answer(text);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].id, "call_001");
    assert_eq!(r.tool_calls[0].args, json!({}));
    assert_eq!(dropped.len(), 3, "{dropped:?}");
    assert!(dropped[0].contains("no tool name"));
    assert!(dropped[1].contains("args of move must be an object"));
    // JSON that is not the contract is a line.
    let (r, _) = parse_answer("{\"weather\": \"rain\"}");
    assert_eq!(r.assistant_text, "{\"weather\": \"rain\"}");
}

#[tokio::test]
async fn the_turn_log_line_has_the_reference_fields() {
    let mut c = campaign();
    c.actors
        .get_mut("pc_001")
        .unwrap()
        .meta
        .insert("name".into(), json!("小明"));
    let mut brain = queue(&[
        json!({"assistant_text": "小明 walks on.", "dialog_type": "scene_description",
        "tool_calls": [{"id": "call_move_1", "tool": "move", "args": {"actor_id": "pc_001", "to_area_id": "area_002"}}]}),
    ]);
    let e = turn(&mut c, &mut brain, 12, "走").await;
    let line = e.to_jsonl();
    assert!(!line.contains('\n'));
    assert!(
        line.contains("小明") && line.contains("走"),
        "non-ASCII stays readable: {line}"
    );
    let v: Value = serde_json::from_str(&line).unwrap();
    for key in [
        "turn_id",
        "timestamp",
        "user_input",
        "dialog_type",
        "dialog_type_source",
        "assistant_text",
        "tool_calls",
        "applied_actions",
        "tool_feedback",
        "state_summary",
    ] {
        assert!(v.get(key).is_some(), "{key} in {line}");
    }
    assert_eq!(v["turn_id"], "turn_0012");
    assert_eq!(v["tool_feedback"], Value::Null);
    assert_eq!(v["state_summary"]["active_actor_id"], "pc_001");
    assert_eq!(v["state_summary"]["hp"]["pc_002"], 10);
    assert_eq!(
        v["applied_actions"][0]["result"],
        json!({"from_area_id": "area_001", "to_area_id": "area_002"})
    );
}

/// A GM turn through a runtime agent: its kind of brain answers as the GM, the turn is kept in
/// SQLite and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_of_the_runtime_is_the_gm() {
    use agents_core::campaign::turn::finish;
    use agents_core::runtime::{AgentConfig, Runtime, RuntimeOptions};
    let dir = tempfile::tempdir().unwrap();
    let mut options = RuntimeOptions::with_database(dir.path().join("agents.db"));
    options.idle_think_seconds = 1000.0;
    let rt = Runtime::start_on(tokio::runtime::Handle::current(), options).unwrap();
    let gm_id = rt
        .spawn(
            AgentConfig::from_json(
                &json!({"name": "Morgana", "role": "game master", "thinking_seconds": 0.0}),
            )
            .unwrap(),
        )
        .unwrap();
    let mut c = campaign();
    let request = TurnRequest {
        number: 1,
        user_input: "go to the side room",
        actor: None,
    };
    let decided = rt.gm_decide(&c, &gm_id, &request).await.unwrap();
    // Deciding changed nothing; finishing applies the answer.
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_001"));
    let entry = finish(&mut c, decided, &request).unwrap();
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_002"));
    rt.record_campaign_turn(&c.id, &entry);
    let kept = rt.campaign_turns(&c.id).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].turn_id, "turn_0001");
    assert_eq!(kept[0].applied_actions, entry.applied_actions);
    // Unknown agents and turn actors are errors.
    assert_eq!(
        rt.gm_decide(&c, "agent_404", &request)
            .await
            .unwrap_err()
            .code()
            .as_str(),
        "unknown_agent"
    );
    let other = TurnRequest {
        actor: Some("npc"),
        ..request
    };
    assert_eq!(
        rt.gm_decide(&c, &gm_id, &other)
            .await
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_message"
    );
    rt.shutdown(std::time::Duration::from_secs(2));
}
