//! A GM turn with model brains against the fake provider (a real HTTP server on loopback,
//! streaming): the GM contract and the campaign in the request, a refused call repaired through
//! the contract's feedback, the contract written as text, and a silent model.

use agents_core::campaign::Campaign;
use agents_core::campaign::turn::{SILENT_FALLBACK, TurnRequest, finish};
use agents_core::runtime::AgentConfig;
use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use serde_json::{Value, json};

mod common;
use common::runtime;

fn gm(provider: &str, base: String) -> AgentConfig {
    AgentConfig::from_json(&json!({
        "name": "Morgana", "role": "game master", "prompt": "Keep it spooky.",
        "brain": {"provider": provider, "model": "fake-1", "base_url": base}
    }))
    .unwrap()
}

fn campaign() -> Campaign {
    let mut c = Campaign::new("camp_0001", &["pc_001".to_string()]);
    c.actors
        .get_mut("pc_001")
        .unwrap()
        .meta
        .insert("name".into(), json!("小明"));
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_gm_is_repaired_then_applied() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push_many([
        // A move the contract refuses (from_area_id given).
        Behaviour::calls(vec![FakeCall::new(
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_002", "from_area_id": "area_001"}),
        )]),
        Behaviour::Reply {
            text: "You slip into the side room.".into(),
            tool_calls: vec![FakeCall::new(
                "move",
                json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
            )],
            chunk_chars: Some(5),
        },
    ]);
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let id = rt.spawn(gm("openai", fake.openai_base())).unwrap();
    let mut c = campaign();
    let request = TurnRequest {
        number: 1,
        user_input: "我去旁边的房间",
        actor: None,
    };
    let decided = rt.gm_decide(&c, &id, &request).await.unwrap();
    assert_eq!(decided.repairs, 1);
    // Each model call is reported for the trace, with the repairs asked before it.
    let calls: Vec<(u32, bool)> = decided
        .model_calls
        .iter()
        .map(|c| (c.repairs, c.input_tokens > 0 && c.agent_id == id))
        .collect();
    assert_eq!(calls, [(0, true), (1, true)]);
    let entry = finish(&mut c, decided, &request).unwrap();
    assert_eq!(entry.assistant_text, "You slip into the side room.");
    assert_eq!(entry.applied_actions.len(), 1);
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_002"));

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    let system = first["messages"][0]["content"].to_string();
    assert!(
        system.contains("game master of campaign camp_0001"),
        "{system}"
    );
    assert!(system.contains("Keep it spooky."));
    assert!(
        system.contains("call_move_options_1"),
        "the three examples are in: {system}"
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["move", "move_options", "hp_delta", "map_generate"]);
    // The definitions name only what exists for this turn: the turn actor, where it can go.
    let moving = &first["tools"][0]["function"]["parameters"]["properties"];
    assert_eq!(moving["actor_id"]["enum"], json!(["pc_001"]));
    assert_eq!(moving["to_area_id"]["enum"], json!(["area_002"]));
    let user = first["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("小明") && user.contains("我去旁边的房间"),
        "non-ASCII stays readable: {user}"
    );
    assert!(
        user.contains("\"reachable_area_ids\":[\"area_002\"]"),
        "{user}"
    );
    // The repair: the refused call comes back as a tool result with the contract's feedback.
    let second = &requests[1].body;
    let feedback: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(feedback.len(), 1);
    let content = feedback[0]["content"].as_str().unwrap();
    assert!(
        content.contains("invalid_args") && content.contains("from_area_id"),
        "{content}"
    );
    rt.shutdown(std::time::Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_gm_writes_the_contract_as_text_or_stays_silent() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let contract = json!({"assistant_text": "No movement yet. I will fetch 1-hop options.",
        "dialog_type": "scene_description",
        "tool_calls": [{"id": "call_move_options_1", "tool": "move_options", "args": {"actor_id": "pc_001"}},
                       {"id": "bad", "args": {}}]});
    fake.push_many([
        Behaviour::text(&format!("```json\n{contract}\n```")),
        Behaviour::text(""),
        Behaviour::text(""),
        Behaviour::text(""),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let id = rt.spawn(gm("anthropic", fake.anthropic_base())).unwrap();
    let mut c = campaign();
    let request = TurnRequest {
        number: 1,
        user_input: "Where can I go?",
        actor: None,
    };
    let decided = rt.gm_decide(&c, &id, &request).await.unwrap();
    assert_eq!(decided.dropped.len(), 1, "{:?}", decided.dropped);
    let entry = finish(&mut c, decided, &request).unwrap();
    assert_eq!(entry.tool_calls[0].tool, "move_options");
    assert_eq!(entry.dialog_type_source, "model");
    assert_eq!(
        entry.applied_actions[0].result["options"][0]["to_area_id"],
        "area_002"
    );
    assert!(
        fake.requests()[0].body["system"]
            .to_string()
            .contains("game master")
    );

    // A model that says nothing: asked again twice, then the fallback line.
    let request = TurnRequest {
        number: 2,
        user_input: "...",
        actor: None,
    };
    let decided = rt.gm_decide(&c, &id, &request).await.unwrap();
    assert_eq!(decided.repairs, 2);
    let entry = finish(&mut c, decided, &request).unwrap();
    assert_eq!(entry.assistant_text, SILENT_FALLBACK);
    rt.shutdown(std::time::Duration::from_secs(2));
}
