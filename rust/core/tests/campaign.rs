//! Campaigns and the GM tools against the campaign format and the tool-call contract: the
//! conformance vectors of `map_generate`, every row of the state matrix, every reason, the check
//! order, and the file format (defaults, migration, round trips, atomic saves).

use agents_core::campaign::{Campaign, file};
use agents_core::contract::ToolCall;
use serde_json::{Value, json};

fn fresh() -> Campaign {
    Campaign::new("camp_0001", &["pc_001".to_string(), "pc_002".to_string()])
}

fn call(tool: &str, args: Value) -> ToolCall {
    ToolCall::new(format!("call_{tool}"), tool, args)
}

/// Runs one call for the active actor; the applied result or `(status, reason)`.
fn run(c: &mut Campaign, tool: &str, args: Value) -> Result<Value, (String, String)> {
    run_as(c, None, tool, args)
}

fn run_as(
    c: &mut Campaign,
    actor: Option<&str>,
    tool: &str,
    args: Value,
) -> Result<Value, (String, String)> {
    let out = c.run_calls(&[call(tool, args)], actor).unwrap();
    match out.tool_feedback {
        None => Ok(out.applied_actions[0].result.clone()),
        Some(f) => {
            let failed = &f.failed_calls[0];
            let j = serde_json::to_value(failed).unwrap();
            Err((
                j["status"].as_str().unwrap().to_string(),
                j["reason"].as_str().unwrap().to_string(),
            ))
        }
    }
}

fn err(status: &str, reason: &str) -> Result<Value, (String, String)> {
    Err((status.to_string(), reason.to_string()))
}

fn edges(c: &Campaign) -> Vec<(String, String)> {
    c.map
        .connections()
        .into_iter()
        .map(|e| (e.from_area_id, e.to_area_id))
        .collect()
}

fn e(from: u32, to: u32) -> (String, String) {
    (format!("area_{from:03}"), format!("area_{to:03}"))
}

fn has_all(c: &Campaign, wanted: &[(u32, u32)]) {
    let all = edges(c);
    for (from, to) in wanted {
        assert!(
            all.contains(&e(*from, *to)),
            "missing {from}→{to} in {all:?}"
        );
    }
}

/// Every edge that starts or ends at a new area (ids from `first` on), plus 001→first.
fn new_edges(c: &Campaign, first: u32) -> Vec<(String, String)> {
    let first = format!("area_{first:03}");
    edges(c)
        .into_iter()
        .filter(|(f, t)| *f >= first || *t >= first)
        .collect()
}

// -- map_generate: the reference GM backend's layers for known seeds ------------------------------

#[test]
fn vector_root_forest_4_alpha() {
    let mut c = fresh();
    let r = run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": null, "theme": "Forest", "constraints": {"size": 4, "seed": "alpha"}}),
    )
    .unwrap();
    assert_eq!(
        r["created_area_ids"],
        json!(["area_003", "area_004", "area_005", "area_006"])
    );
    let names: Vec<&str> = (3..=6)
        .map(|i| c.map.areas[&format!("area_{i:03}")].name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Forest Area 01",
            "Forest Area 02",
            "Forest Area 03",
            "Forest Area 04"
        ]
    );
    assert_eq!(
        new_edges(&c, 3),
        [e(1, 3), e(3, 4), e(3, 6), e(4, 5), e(5, 6)]
    );
    assert_eq!(r["created_connections"], 5);
    assert_eq!(r["warnings"], json!([]));
    assert_eq!(r["root_parent_area_id"], Value::Null);
}

#[test]
fn vector_child_cave_6_alpha() {
    let mut c = fresh();
    let r = run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": "area_001", "theme": "Cave", "constraints": {"size": 6, "seed": "alpha"}}),
    )
    .unwrap();
    assert_eq!(c.map.areas["area_003"].name, "Cave Entry");
    for i in 4..=8 {
        assert_eq!(
            c.map.areas[&format!("area_{i:03}")].name,
            format!("Cave Area {:02}", i - 2)
        );
    }
    let mut wanted = vec![(3, 4), (4, 5), (5, 6), (6, 7), (7, 8), (3, 7), (4, 7)];
    for i in 3..=8 {
        wanted.push((1, i));
        wanted.push((i, 1));
    }
    has_all(&c, &wanted);
    // Nothing else among the new areas: 7 inner edges + 12 to and from the parent.
    assert_eq!(new_edges(&c, 3).len(), 19);
    assert_eq!(r["created_connections"], 19);
    assert_eq!(r["warnings"], json!([]));
    assert_eq!(r["root_parent_area_id"], "area_001");
}

#[test]
fn vector_child_no_theme_3_beta() {
    let mut c = fresh();
    let r = run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": "area_001", "constraints": {"size": 3, "seed": "beta"}}),
    )
    .unwrap();
    assert_eq!(c.map.areas["area_003"].name, "Generated Entry");
    assert_eq!(c.map.areas["area_004"].name, "Generated Area 02");
    assert_eq!(c.map.areas["area_005"].name, "Generated Area 03");
    assert_eq!(r["created_connections"], 8);
    assert_eq!(new_edges(&c, 3).len(), 8);
    has_all(
        &c,
        &[
            (3, 4),
            (4, 5),
            (1, 3),
            (1, 4),
            (1, 5),
            (3, 1),
            (4, 1),
            (5, 1),
        ],
    );
}

#[test]
fn vector_empty_args() {
    let mut c = fresh();
    let r = run(&mut c, "map_generate", json!({})).unwrap();
    assert_eq!(r["created_area_ids"].as_array().unwrap().len(), 6);
    assert_eq!(c.map.areas["area_003"].name, "Generated Area 01");
    assert_eq!(
        new_edges(&c, 3),
        [
            e(1, 3),
            e(3, 4),
            e(4, 5),
            e(5, 6),
            e(5, 8),
            e(6, 7),
            e(6, 8),
            e(7, 8)
        ]
    );
    assert_eq!(r["created_connections"], 8);
    assert_eq!(r["warnings"], json!(["seed_defaulted"]));
}

#[test]
fn vector_blank_theme_top_level_size_2() {
    let mut c = fresh();
    let r = run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": null, "theme": "  ", "size": 2}),
    )
    .unwrap();
    assert_eq!(r["created_area_ids"], json!(["area_003", "area_004"]));
    assert_eq!(c.map.areas["area_004"].name, "Generated Area 02");
    assert_eq!(new_edges(&c, 3), [e(1, 3), e(3, 4)]);
    assert_eq!(r["created_connections"], 2);
    assert_eq!(r["warnings"], json!(["theme_defaulted", "seed_defaulted"]));
}

#[test]
fn vector_root_7_three_seeds() {
    for (seed, branches, warnings) in [
        (json!("alpha"), [(3, 9), (7, 9)], json!([])),
        (json!("beta"), [(5, 8), (6, 8)], json!([])),
        (Value::Null, [(5, 9), (7, 9)], json!(["seed_defaulted"])),
    ] {
        let mut c = fresh();
        let r = run(
            &mut c,
            "map_generate",
            json!({"parent_area_id": null, "constraints": {"size": 7, "seed": seed}}),
        )
        .unwrap();
        assert_eq!(r["created_connections"], 9, "{seed}");
        assert_eq!(r["warnings"], warnings, "{seed}");
        let mut wanted = vec![(1, 3)];
        wanted.extend((3..9).map(|i| (i, i + 1)));
        wanted.extend(branches);
        wanted.sort();
        let wanted: Vec<_> = wanted.into_iter().map(|(f, t)| e(f, t)).collect();
        assert_eq!(new_edges(&c, 3), wanted, "{seed}");
    }
}

#[test]
fn map_generate_ids_skip_existing_and_layers_anchor_to_siblings() {
    let mut c = fresh();
    // A second child layer under area_001 links its entry to the smallest existing sibling.
    run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": "area_001", "size": 2, "seed": "a"}),
    )
    .unwrap();
    let r = run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": "area_001", "size": 2, "seed": "b"}),
    )
    .unwrap();
    assert_eq!(r["created_area_ids"], json!(["area_005", "area_006"]));
    has_all(&c, &[(1, 5), (5, 3)]);
    // Ids count from the highest area_<digits>, skipping taken ones; other ids do not count.
    let mut c = fresh();
    c.map.areas.insert(
        "area_0010".into(),
        agents_core::campaign::Area::new("area_0010", "x", None),
    );
    c.map.link("area_002", "area_0010");
    c.map.areas.insert(
        "area_x".into(),
        agents_core::campaign::Area::new("area_x", "y", None),
    );
    c.map.link("area_002", "area_x");
    let r = run(&mut c, "map_generate", json!({"size": 1, "seed": "s"})).unwrap();
    assert_eq!(r["created_area_ids"], json!(["area_011"]));
    // Positions are never touched.
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_001"));
}

#[test]
fn map_generate_bad_arguments_are_invalid_and_change_nothing() {
    let bad = [
        json!({"size": 0}),
        json!({"size": 31}),
        json!({"size": null}),
        json!({"size": 6.0}),
        json!({"size": true}),
        json!({"constraints": {"size": 40}, "size": 3}),
        json!({"constraints": 5}),
        json!({"constraints": []}),
        json!({"parent_area_id": "area_999"}),
        json!({"parent_area_id": 1}),
        json!({"theme": 7}),
        json!({"seed": 3}),
        json!([]),
    ];
    for args in bad {
        let mut c = fresh();
        let before = c.clone();
        assert_eq!(
            run(&mut c, "map_generate", args.clone()),
            err("error", "invalid_args"),
            "{args}"
        );
        assert_eq!(c, before, "{args}");
    }
    // Top-level size and seed are ignored when constraints is an object.
    let mut c = fresh();
    let r = run(
        &mut c,
        "map_generate",
        json!({"constraints": {}, "size": 99, "seed": 5}),
    )
    .unwrap();
    assert_eq!(r["created_area_ids"].as_array().unwrap().len(), 6);
    assert_eq!(r["warnings"], json!(["seed_defaulted"]));
}

// -- The check order and the state matrix --------------------------------------------------------

fn with_state(state: &str) -> Campaign {
    let mut c = fresh();
    c.actors.get_mut("pc_001").unwrap().character_state = state.into();
    c
}

#[test]
fn state_matrix() {
    let heal_self = json!({"target_character_id": "pc_001", "delta": 2, "cause": "potion"});
    let calls: [(&str, Value); 5] = [
        (
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
        ),
        ("move_options", json!({})),
        ("hp_delta", heal_self.clone()),
        (
            "hp_delta",
            json!({"target_character_id": "pc_002", "delta": -1, "cause": "hit"}),
        ),
        ("map_generate", json!({"size": 2, "seed": "x"})),
    ];
    let restricted = err("rejected", "actor_state_restricted");
    for state in [
        "alive",
        "dying",
        "unconscious",
        "restrained_permanent",
        "dead",
    ] {
        for (i, (tool, args)) in calls.iter().enumerate() {
            let mut c = with_state(state);
            let got = run(&mut c, tool, args.clone());
            let allowed = state == "alive" || (state == "dying" && i == 2);
            if allowed {
                assert!(got.is_ok(), "{state} {tool} {args}: {got:?}");
            } else {
                assert_eq!(got, restricted, "{state} {tool} {args}");
            }
        }
    }
    // An unknown state string.
    let mut c = with_state("petrified");
    assert_eq!(
        run(&mut c, "move_options", json!({})),
        err("rejected", "invalid_actor_state")
    );
    // An actor without a record counts as alive.
    let mut c = fresh();
    c.actors.remove("pc_001");
    assert_eq!(
        run(&mut c, "map_generate", json!({"size": 1})).map(|_| ()),
        Ok(())
    );
}

#[test]
fn dying_heals_only_itself_with_a_positive_integer() {
    let restricted = err("rejected", "actor_state_restricted");
    for args in [
        json!({"target_character_id": "pc_001", "delta": 0, "cause": "x"}),
        json!({"target_character_id": "pc_001", "delta": -1, "cause": "x"}),
        json!({"target_character_id": "pc_001", "delta": 2.0, "cause": "x"}),
        json!({"target_character_id": "pc_001", "delta": true, "cause": "x"}),
        json!({"target_character_id": "pc_001", "delta": "2", "cause": "x"}),
        json!({"target_character_id": "pc_002", "delta": 2, "cause": "x"}),
        json!({"delta": 2, "cause": "x"}),
    ] {
        let mut c = with_state("dying");
        assert_eq!(run(&mut c, "hp_delta", args.clone()), restricted, "{args}");
    }
    // Past the state check, a bad cause is an argument error.
    let mut c = with_state("dying");
    assert_eq!(
        run(
            &mut c,
            "hp_delta",
            json!({"target_character_id": "pc_001", "delta": 2, "cause": 5})
        ),
        err("error", "invalid_args")
    );
    let mut c = with_state("dying");
    c.actors.get_mut("pc_001").unwrap().hp = 0;
    let r = run(
        &mut c,
        "hp_delta",
        json!({"target_character_id": "pc_001", "delta": 3, "cause": "potion"}),
    );
    assert_eq!(r, Ok(json!({"new_hp": 3})));
    assert_eq!(c.actors["pc_001"].character_state, "alive");
}

#[test]
fn the_first_failing_check_decides() {
    // A disallowed tool with bad args: tool_not_allowed.
    let mut c = fresh();
    c.allowlist.retain(|t| t != "hp_delta");
    assert_eq!(
        run(&mut c, "hp_delta", json!({"delta": "x"})),
        err("rejected", "tool_not_allowed")
    );
    // Not allowlisted at all, and unknown: tool_not_allowed.
    assert_eq!(
        run(&mut c, "teleport", json!({})),
        err("rejected", "tool_not_allowed")
    );
    // Allowlisted but not a tool: invalid_args.
    c.allowlist.push("teleport".into());
    assert_eq!(
        run(&mut c, "teleport", json!({})),
        err("error", "invalid_args")
    );
    // A dead actor calling map_generate with a bad size: actor_state_restricted.
    let mut c = with_state("dead");
    assert_eq!(
        run(&mut c, "map_generate", json!({"size": 99})),
        err("rejected", "actor_state_restricted")
    );
    // An unknown state with bad args: invalid_actor_state.
    let mut c = with_state("ghost");
    assert_eq!(
        run(&mut c, "move", json!(7)),
        err("rejected", "invalid_actor_state")
    );
}

#[test]
fn move_rules() {
    let mut c = fresh();
    let bad = [
        json!({"actor_id": "pc_001", "to_area_id": "area_002", "from_area_id": "area_001"}),
        json!({"actor_id": "pc_001", "to_area_id": "area_002", "from_area_id": null}),
        json!({"actor_id": "pc_002", "to_area_id": "area_002"}),
        json!({"actor_id": "pc_001"}),
        json!({"to_area_id": "area_002"}),
        json!({"actor_id": "pc_001", "to_area_id": 2}),
        json!({"actor_id": "pc_001", "to_area_id": "area_001"}),
        json!({"actor_id": "pc_001", "to_area_id": "area_404"}),
        json!("pc_001"),
    ];
    for args in bad {
        assert_eq!(
            run(&mut c, "move", args.clone()),
            err("error", "invalid_args"),
            "{args}"
        );
        assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_001"));
    }
    let r = run(
        &mut c,
        "move",
        json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
    );
    assert_eq!(
        r,
        Ok(json!({"from_area_id": "area_001", "to_area_id": "area_002"}))
    );
    // The edge is one-way: no way back.
    assert_eq!(
        run(
            &mut c,
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_001"})
        ),
        err("error", "invalid_args")
    );
    // Another party member as the turn actor moves itself.
    let r = run_as(
        &mut c,
        Some("pc_002"),
        "move",
        json!({"actor_id": "pc_002", "to_area_id": "area_002"}),
    );
    assert!(r.is_ok(), "{r:?}");
    // A turn actor outside the party fails the whole turn.
    assert!(
        c.run_calls(&[call("move_options", json!({}))], Some("npc_9"))
            .is_err()
    );
    // No position: invalid.
    c.actors.get_mut("pc_001").unwrap().position = None;
    c.map.link("area_002", "area_001");
    assert_eq!(
        run(
            &mut c,
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_001"})
        ),
        err("error", "invalid_args")
    );
}

#[test]
fn move_options_for_anyone_sorted() {
    let mut c = fresh();
    run(
        &mut c,
        "map_generate",
        json!({"parent_area_id": "area_001", "size": 2, "seed": "q"}),
    )
    .unwrap();
    let r = run(&mut c, "move_options", json!({})).unwrap();
    let ids: Vec<&str> = r["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["to_area_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["area_002", "area_003", "area_004"]);
    assert_eq!(r["options"][0]["name"], "Side Room");
    // Another actor, and null meaning the turn actor.
    c.actors.get_mut("pc_002").unwrap().position = Some("area_002".into());
    assert_eq!(
        run(&mut c, "move_options", json!({"actor_id": "pc_002"})),
        Ok(json!({"options": []}))
    );
    assert!(run(&mut c, "move_options", json!({"actor_id": null})).is_ok());
    for args in [
        json!({"actor_id": "nobody"}),
        json!({"actor_id": 3}),
        json!([]),
    ] {
        assert_eq!(
            run(&mut c, "move_options", args.clone()),
            err("error", "invalid_args"),
            "{args}"
        );
    }
    // Read-only: a batch of only move_options changes nothing.
    let out = c
        .run_calls(&[call("move_options", json!({}))], None)
        .unwrap();
    assert!(!out.changed_anything());
}

#[test]
fn hp_rules() {
    let mut c = fresh();
    let hit = |d: Value| json!({"target_character_id": "pc_002", "delta": d, "cause": "trap"});
    assert_eq!(
        run(&mut c, "hp_delta", hit(json!(-4))),
        Ok(json!({"new_hp": 6}))
    );
    assert_eq!(
        run(&mut c, "hp_delta", hit(json!(-40))),
        Ok(json!({"new_hp": 0}))
    );
    assert_eq!(c.actors["pc_002"].character_state, "dying");
    assert_eq!(
        run(&mut c, "hp_delta", hit(json!(-1))),
        Ok(json!({"new_hp": 0}))
    );
    assert_eq!(
        run(&mut c, "hp_delta", hit(json!(5))),
        Ok(json!({"new_hp": 5}))
    );
    assert_eq!(c.actors["pc_002"].character_state, "alive");
    // No maximum; an empty cause is fine.
    assert_eq!(
        run(
            &mut c,
            "hp_delta",
            json!({"target_character_id": "pc_002", "delta": 100, "cause": ""})
        ),
        Ok(json!({"new_hp": 105}))
    );
    for args in [
        hit(json!(1.5)),
        hit(json!(2.0)),
        hit(json!(true)),
        hit(json!(null)),
        json!({"target_character_id": "ghost", "delta": 1, "cause": ""}),
        json!({"target_character_id": "pc_002", "delta": 1}),
    ] {
        assert_eq!(
            run(&mut c, "hp_delta", args.clone()),
            err("error", "invalid_args"),
            "{args}"
        );
    }
    assert_eq!(c.actors["pc_002"].hp, 105);
    // Without the rule, hp 0 changes no state.
    let mut c = fresh();
    c.settings_snapshot["rules"]["hp_zero_ends_game"] = json!(false);
    run(&mut c, "hp_delta", hit(json!(-10))).unwrap();
    assert_eq!(c.actors["pc_002"].character_state, "alive");
    // Dead stays dead.
    let mut c = fresh();
    c.actors.get_mut("pc_002").unwrap().character_state = "dead".into();
    run(&mut c, "hp_delta", hit(json!(-10))).unwrap();
    assert_eq!(c.actors["pc_002"].character_state, "dead");
}

#[test]
fn a_batch_sees_its_own_effects() {
    let mut c = fresh();
    let calls = [
        call(
            "hp_delta",
            json!({"target_character_id": "pc_001", "delta": -10, "cause": "fall"}),
        ),
        ToolCall::new(
            "call_2",
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
        ),
        ToolCall::new(
            "call_3",
            "hp_delta",
            json!({"target_character_id": "pc_001", "delta": 1, "cause": "potion"}),
        ),
        ToolCall::new(
            "call_4",
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
        ),
    ];
    let out = c.run_calls(&calls, None).unwrap();
    // The first call makes the turn actor dying: its move is refused, its self-heal allowed,
    // and once alive again it moves.
    let applied: Vec<&str> = out
        .applied_actions
        .iter()
        .map(|a| a.tool.as_str())
        .collect();
    assert_eq!(applied, ["hp_delta", "hp_delta", "move"]);
    let feedback = serde_json::to_value(out.tool_feedback.unwrap()).unwrap();
    assert_eq!(feedback["failed_calls"][0]["id"], "call_2");
    assert_eq!(feedback["failed_calls"][0]["status"], "rejected");
    assert_eq!(
        feedback["failed_calls"][0]["reason"],
        "actor_state_restricted"
    );
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_002"));
    // The effects, in order, for front ends.
    use agents_core::campaign::Effect;
    assert_eq!(
        out.effects,
        [
            Effect::HpChanged {
                actor_id: "pc_001".into(),
                old_hp: 10,
                new_hp: 0
            },
            Effect::ActorStateChanged {
                actor_id: "pc_001".into(),
                old_state: "alive".into(),
                new_state: "dying".into()
            },
            Effect::HpChanged {
                actor_id: "pc_001".into(),
                old_hp: 0,
                new_hp: 1
            },
            Effect::ActorStateChanged {
                actor_id: "pc_001".into(),
                old_state: "dying".into(),
                new_state: "alive".into()
            },
            Effect::ActorMoved {
                actor_id: "pc_001".into(),
                from_area_id: "area_001".into(),
                to_area_id: "area_002".into()
            },
        ]
    );
    // Applied actions: args as received, a microsecond UTC timestamp.
    let first = &out.applied_actions[0];
    assert_eq!(first.args, calls[0].args);
    assert_eq!(first.result, json!({"new_hp": 0}));
    assert!(
        first.timestamp.ends_with("+00:00") && first.timestamp.len() == 32,
        "{}",
        first.timestamp
    );
    // Nothing failed: tool_feedback is null.
    let out = c
        .run_calls(&[call("move_options", json!({}))], None)
        .unwrap();
    assert_eq!(out.to_json()["tool_feedback"], Value::Null);
}

// -- The file -------------------------------------------------------------------------------------

#[test]
fn a_minimal_file_gets_the_defaults() {
    let loaded = Campaign::from_json(&json!({})).unwrap();
    let c = loaded.campaign;
    assert_eq!(c.id, "camp_0001");
    assert_eq!(c.selected.party_character_ids, ["pc_001"]);
    assert_eq!(c.selected.active_actor_id, "pc_001");
    assert_eq!(
        c.allowlist,
        ["move", "hp_delta", "map_generate", "move_options"]
    );
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_001"));
    assert_eq!(c.actors["pc_001"].hp, 10);
    assert_eq!(c.goal.text, "Define the main objective");
    assert_eq!(c.milestone.current, "intro");
    assert!(c.hp_zero_ends_game());
    assert!(c.created_at.ends_with("+00:00"));
    let j = c.to_json();
    assert_eq!(
        j["map"]["connections"],
        json!([{"from_area_id": "area_001", "to_area_id": "area_002"}])
    );
    assert_eq!(j["settings_snapshot"]["dialog"]["auto_type_enabled"], true);
    // An active actor outside the party is put at its front.
    let c = Campaign::from_json(
        &json!({"selected": {"party_character_ids": ["pc_001"], "active_actor_id": "pc_007"}}),
    )
    .unwrap()
    .campaign;
    assert_eq!(c.selected.party_character_ids, ["pc_007", "pc_001"]);
}

#[test]
fn the_older_layout_is_migrated() {
    let old = json!({
        "id": "camp_0042",
        "selected": {"party_character_ids": ["pc_001", "pc_002"], "active_actor_id": "pc_001"},
        "positions": {"pc_001": "area_002"},
        "hp": {"pc_001": 7, "npc_1": "lots"},
        "character_states": {"pc_002": "unconscious", "npc_1": 5},
        "state": {"positions_parent": {"pc_002": "area_001"}, "positions": {"npc_1": "area_404"}},
        "map": {"areas": {
            "area_001": {"id": "area_001", "name": "Gate", "parent_area_id": null},
            "area_002": {"id": "area_002", "name": "Hall", "parent_area_id": null}},
            "connections": [{"from_area_id": "area_002", "to_area_id": "area_001"},
                            {"from_area_id": "area_001", "to_area_id": "area_002"}]},
    });
    let loaded = Campaign::from_json(&old).unwrap();
    let c = &loaded.campaign;
    assert_eq!(
        c.actors.keys().collect::<Vec<_>>(),
        ["npc_1", "pc_001", "pc_002"]
    );
    assert_eq!(c.actors["pc_001"].position.as_deref(), Some("area_002"));
    assert_eq!(c.actors["pc_001"].hp, 7);
    assert_eq!(c.actors["pc_002"].position.as_deref(), Some("area_001"));
    assert_eq!(c.actors["pc_002"].character_state, "unconscious");
    assert_eq!(c.actors["pc_002"].hp, 10);
    assert_eq!(c.actors["npc_1"].hp, 10);
    assert_eq!(c.actors["npc_1"].character_state, "alive");
    assert_eq!(c.actors["npc_1"].position, None);
    assert!(
        loaded
            .warnings
            .contains(&"actor:npc_1:position_missing_area".to_string()),
        "{:?}",
        loaded.warnings
    );
    // Reachable lists from the connections; the old fields are gone on save.
    assert_eq!(c.map.areas["area_002"].reachable_area_ids, ["area_001"]);
    let saved = c.to_json();
    for key in ["positions", "hp", "character_states", "state"] {
        assert!(saved.get(key).is_none(), "{key}");
    }
    assert_eq!(saved["actors"]["pc_001"]["position"], "area_002");
}

#[test]
fn invalid_files_list_every_problem() {
    let bad = json!({
        "allowlist": "move",
        "settings_revision": 1.5,
        "map": {"areas": {
            "a": {"name": "A", "parent_area_id": null, "reachable_area_ids": ["a", "b", "b", "zz"]},
            "b": {"name": "B", "parent_area_id": null, "reachable_area_ids": []},
            "c": {"name": "C", "parent_area_id": "a", "reachable_area_ids": []},
            "d": {"name": "D", "parent_area_id": "a", "reachable_area_ids": []}}},
        "actors": {"pc_001": {"position": "a", "hp": 10, "character_state": "alive"}},
    });
    let e = Campaign::from_json(&bad).unwrap_err().to_string();
    for p in [
        "allowlist: expected an array of strings, got a string",
        "settings_revision: expected an integer",
        "area:a:reachable_duplicate",
        "area:a:reachable_self_loop",
        "area:a:reachable_missing_target",
        "parent:a:disconnected",
    ] {
        assert!(e.contains(p), "{p} missing from {e}");
    }
    assert!(Campaign::from_json(&json!([1])).is_err());
}

#[test]
fn files_round_trip_and_saves_are_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("campaign.json");
    let mut c = fresh();
    c.actors
        .get_mut("pc_002")
        .unwrap()
        .meta
        .insert("name".into(), json!("李雷"));
    run(&mut c, "map_generate", json!({"parent_area_id": "area_001", "theme": "洞窟", "constraints": {"size": 5, "seed": "s"}})).unwrap();
    file::save(&path, &c).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("李雷") && text.contains("洞窟 Entry"),
        "non-ASCII stays readable"
    );
    let back = file::load(&path).unwrap().campaign;
    assert_eq!(back, c);
    // Load → save → load is the identity.
    file::save(&path, &back).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // An invalid campaign is never written, and the old file stays.
    let mut broken = back.clone();
    broken
        .map
        .areas
        .get_mut("area_001")
        .unwrap()
        .reachable_area_ids
        .push("area_001".into());
    assert!(file::save(&path, &broken).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(file::next_id(dir.path()), "camp_0002");
}

/// `map_generate` keeps a campaign within the size it may be loaded with: a layer that would
/// take the map past `MAX_CAMPAIGN_AREAS`, or an over-long theme, is `invalid_args` naming the
/// limit, and the map is left as it was.
#[test]
fn map_generate_stops_at_the_campaign_size_limits() {
    use agents_core::limits::{MAX_CAMPAIGN_AREAS, MAX_MAP_THEME_CHARS};
    let mut c = fresh();
    while c.map.areas.len() + 30 <= MAX_CAMPAIGN_AREAS {
        run(&mut c, "map_generate", json!({"size": 30, "seed": "s"})).unwrap();
    }
    let before = c.clone();
    let left = MAX_CAMPAIGN_AREAS - c.map.areas.len();
    for (args, says) in [
        (
            json!({"size": left + 1}),
            format!("past the limit of {MAX_CAMPAIGN_AREAS}"),
        ),
        (
            json!({"size": 1, "theme": "t".repeat(MAX_MAP_THEME_CHARS + 1)}),
            format!(
                "theme is {} characters long; the limit is {MAX_MAP_THEME_CHARS}",
                MAX_MAP_THEME_CHARS + 1
            ),
        ),
    ] {
        let out = c.run_calls(&[call("map_generate", args)], None).unwrap();
        let failed = serde_json::to_value(&out.tool_feedback.unwrap().failed_calls[0]).unwrap();
        assert_eq!(failed["reason"], "invalid_args", "{failed}");
        assert!(
            failed["message"].as_str().unwrap().contains(&says),
            "{says}: {failed}"
        );
        assert_eq!(c, before);
    }
    run(&mut c, "map_generate", json!({"size": left})).unwrap();
    assert_eq!(c.map.areas.len(), MAX_CAMPAIGN_AREAS);
    let reloaded = Campaign::from_json(&c.to_json()).unwrap();
    assert_eq!(reloaded.campaign.map.areas.len(), MAX_CAMPAIGN_AREAS);
}
