//! Property tests of campaigns and the GM tools (`docs/campaigns.md`): random valid
//! campaigns (maps grown by random `map_generate` layers, actors with random hp, states and
//! positions, random allowlists), then random batches of calls — sometimes valid, sometimes junk
//! (wrong JSON types, floats, booleans, nulls, missing keys, `from_area_id`, unknown tools) — for
//! a random party member. After every batch: the campaign is valid, `connections` is derived from
//! sorted duplicate-free reachable lists, a failed call changed nothing, the batch equals its
//! calls run one by one, and the counts and the feedback agree. Also: load → save → load is the
//! identity, and `map_generate` is deterministic.

use std::collections::BTreeSet;

use agents_core::campaign::{CHARACTER_STATES, Campaign, file};
use agents_core::contract::{FailureReason, ToolCall};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

// -- Campaigns --------------------------------------------------------------------------------------

/// One `map_generate` layer used to grow the map.
#[derive(Clone, Debug)]
struct Layer {
    /// `None`: a root layer; else an index into the areas there are when it is generated.
    parent: Option<Index>,
    size: i64,
    seed: String,
    theme: Option<String>,
}

/// An actor's hp, state (index into [`CHARACTER_STATES`]) and position (`None`: no position).
#[derive(Clone, Debug)]
struct ActorSpec {
    hp: i64,
    state: usize,
    position: Option<Index>,
}

#[derive(Clone, Debug)]
struct CampaignSpec {
    party: usize,
    active: Index,
    layers: Vec<Layer>,
    /// One per party member (only the first `party` are used).
    actors: Vec<ActorSpec>,
    /// Actors outside the party.
    npcs: Vec<ActorSpec>,
    /// `None`: the default allowlist; else which of [`ALLOWABLE`] are allowed.
    allowlist: Option<Vec<bool>>,
    hp_zero_ends_game: bool,
}

/// What an allowlist may hold: the four GM tools and one name that is no tool.
const ALLOWABLE: [&str; 5] = [
    "move",
    "hp_delta",
    "map_generate",
    "move_options",
    "teleport",
];

fn seed() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        "\\PC{0,6}",
        Just("\0\0seed".to_string()),
        Just(String::new()),
    ]
}

fn theme() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z]{1,8}",
        " [A-Za-z ]{0,8} ",
        "\\PC{0,6}",
        Just("  ".to_string())
    ]
}

fn layer() -> impl Strategy<Value = Layer> {
    (
        prop::option::weighted(0.7, any::<Index>()),
        1i64..=30,
        seed(),
        prop::option::of(theme()),
    )
        .prop_map(|(parent, size, seed, theme)| Layer {
            parent,
            size,
            seed,
            theme,
        })
}

fn actor_spec() -> impl Strategy<Value = ActorSpec> {
    (
        prop_oneof![6 => 0i64..=30, 1 => Just(0i64), 1 => 0i64..=i64::MAX],
        prop_oneof![6 => Just(0usize), 1 => 1usize..CHARACTER_STATES.len()],
        prop::option::weighted(0.9, any::<Index>()),
    )
        .prop_map(|(hp, state, position)| ActorSpec {
            hp,
            state,
            position,
        })
}

fn campaign_spec() -> impl Strategy<Value = CampaignSpec> {
    (
        1usize..=4,
        any::<Index>(),
        prop::collection::vec(layer(), 0..6),
        prop::collection::vec(actor_spec(), 4),
        prop::collection::vec(actor_spec(), 0..=2),
        prop::option::weighted(0.3, prop::collection::vec(any::<bool>(), ALLOWABLE.len())),
        prop::bool::weighted(0.8),
    )
        .prop_map(
            |(party, active, layers, actors, npcs, allowlist, hp_zero_ends_game)| CampaignSpec {
                party,
                active,
                layers,
                actors,
                npcs,
                allowlist,
                hp_zero_ends_game,
            },
        )
}

fn area_ids(c: &Campaign) -> Vec<String> {
    c.map.areas.keys().cloned().collect()
}

/// The campaign `spec` describes: a fresh campaign, its map grown layer by layer through
/// `map_generate` (every layer must be accepted), then the actors, the allowlist and the rules.
fn build(spec: &CampaignSpec) -> Campaign {
    let party: Vec<String> = (1..=spec.party).map(|i| format!("pc_{i:03}")).collect();
    let mut c = Campaign::new("camp_0001", &party);
    for (n, layer) in spec.layers.iter().enumerate() {
        let parent = layer.parent.map(|i| i.get(&area_ids(&c)).clone());
        let args = json!({
            "parent_area_id": parent,
            "theme": layer.theme,
            "constraints": {"size": layer.size, "seed": layer.seed},
        });
        let before = c.map.areas.len();
        let out = c
            .run_calls(
                &[ToolCall::new(
                    format!("gen_{n}"),
                    "map_generate",
                    args.clone(),
                )],
                None,
            )
            .unwrap();
        assert!(
            out.tool_feedback.is_none(),
            "a valid layer was refused: {args} → {:?}",
            out.tool_feedback
        );
        assert_eq!(c.map.areas.len(), before + layer.size as usize);
    }
    let areas = area_ids(&c);
    let place = |a: &ActorSpec| a.position.map(|i| i.get(&areas).clone());
    for (id, a) in party.iter().zip(&spec.actors) {
        let actor = c.actors.get_mut(id).unwrap();
        actor.hp = a.hp;
        actor.character_state = CHARACTER_STATES[a.state].to_string();
        actor.position = place(a);
    }
    for (n, a) in spec.npcs.iter().enumerate() {
        let mut actor = agents_core::campaign::Actor::new(place(a));
        actor.hp = a.hp;
        actor.character_state = CHARACTER_STATES[a.state].to_string();
        actor.meta.insert("npc".into(), json!(n));
        c.actors.insert(format!("npc_{n:03}"), actor);
    }
    c.selected.active_actor_id = spec.active.get(&party).clone();
    if let Some(allowed) = &spec.allowlist {
        c.allowlist = ALLOWABLE
            .iter()
            .zip(allowed)
            .filter(|(_, on)| **on)
            .map(|(t, _)| t.to_string())
            .collect();
    }
    c.settings_snapshot["rules"]["hp_zero_ends_game"] = json!(spec.hp_zero_ends_game);
    assert_eq!(
        c.problems(),
        Vec::<String>::new(),
        "the built campaign is invalid"
    );
    c
}

// -- Calls ------------------------------------------------------------------------------------------

/// A string-ish argument, resolved against the campaign when the batch is built.
#[derive(Clone, Debug)]
enum Slot {
    /// An existing area.
    Area(Index),
    /// An area reachable from the turn actor's position (any area when there is none).
    Reachable(Index),
    /// An existing actor.
    Actor(Index),
    /// The turn actor.
    TurnActor,
    /// The key is left out.
    Missing,
    /// Any JSON value (`null`, wrong types, unknown ids).
    Junk(Value),
}

/// A JSON value of the wrong kind, or an id that names nothing.
fn junk() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        (-1e9f64..1e9).prop_map(Value::from),
        (-40i64..40).prop_map(|n| Value::from(n as f64)),
        "[a-z_0-9 ]{0,10}".prop_map(Value::String),
        Just(json!("area_999999")),
        Just(json!("pc_001")),
        Just(json!("")),
        Just(json!([])),
        Just(json!(["area_001"])),
        Just(json!({})),
        Just(json!({"size": 3})),
    ]
}

/// An integer argument: mostly `valid`, sometimes missing or junk.
fn int_arg(valid: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        8 => valid.prop_map(|n| Some(json!(n))),
        1 => Just(None),
        2 => junk().prop_map(Some),
    ]
}

#[derive(Clone, Debug)]
enum SizeAt {
    /// `constraints: {size, seed}`.
    Constraints,
    /// Top-level `size` and `seed`, no `constraints`.
    TopLevel,
    /// `constraints: null` and top-level `size` and `seed`.
    NullConstraints,
    /// Both; the top-level ones (other values) are ignored.
    Both(Option<Value>, Option<Value>),
    /// `constraints` of a wrong kind.
    BadConstraints(Value),
}

// Generated test input, short-lived: its variants' sizes follow `serde_json::Value`'s, which
// grows when a dependency turns on `preserve_order` (the local model's grammar compiler does).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum CallSpec {
    Move {
        actor: Slot,
        to: Slot,
        from: Slot,
    },
    MoveOptions {
        actor: Slot,
    },
    HpDelta {
        target: Slot,
        delta: Option<Value>,
        cause: Option<Value>,
    },
    MapGenerate {
        parent: Slot,
        theme: Option<Value>,
        size: Option<Value>,
        seed: Option<Value>,
        at: SizeAt,
    },
    /// A tool that is not a GM tool (`teleport` may be on the allowlist).
    Unknown {
        tool: String,
        args: Value,
    },
    /// A GM tool with args that are not an object.
    NotObject {
        tool: &'static str,
        args: Value,
    },
}

fn actor_slot() -> impl Strategy<Value = Slot> {
    prop_oneof![
        5 => Just(Slot::TurnActor),
        3 => any::<Index>().prop_map(Slot::Actor),
        1 => Just(Slot::Missing),
        2 => junk().prop_map(Slot::Junk),
    ]
}

fn map_generate_spec() -> impl Strategy<Value = CallSpec> {
    (
        prop_oneof![
            4 => any::<Index>().prop_map(Slot::Area),
            2 => Just(Slot::Missing),
            2 => Just(Slot::Junk(Value::Null)),
            1 => junk().prop_map(Slot::Junk),
        ],
        prop_oneof![
            4 => theme().prop_map(|t| Some(json!(t))),
            1 => Just(None),
            1 => junk().prop_map(Some),
        ],
        prop_oneof![
            8 => (1i64..=30).prop_map(|n| Some(json!(n))),
            1 => Just(None),
            1 => prop_oneof![Just(0i64), Just(31), Just(-1), Just(1000)].prop_map(|n| Some(json!(n))),
            2 => junk().prop_map(Some),
        ],
        prop_oneof![
            4 => seed().prop_map(|s| Some(json!(s))),
            1 => Just(None),
            1 => junk().prop_map(Some),
        ],
        prop_oneof![
            4 => Just(SizeAt::Constraints),
            2 => Just(SizeAt::TopLevel),
            1 => Just(SizeAt::NullConstraints),
            1 => (int_arg(1..=30), junk().prop_map(Some)).prop_map(|(s, d)| SizeAt::Both(s, d)),
            1 => junk()
                .prop_filter("not an object or null", |v| !v.is_object() && !v.is_null())
                .prop_map(SizeAt::BadConstraints),
        ],
    )
        .prop_map(|(parent, theme, size, seed, at)| CallSpec::MapGenerate {
            parent,
            theme,
            size,
            seed,
            at,
        })
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    prop_oneof![
        6 => (
            actor_slot(),
            prop_oneof![
                6 => any::<Index>().prop_map(Slot::Reachable),
                2 => any::<Index>().prop_map(Slot::Area),
                1 => Just(Slot::Missing),
                2 => junk().prop_map(Slot::Junk),
            ],
            prop_oneof![
                8 => Just(Slot::Missing),
                1 => any::<Index>().prop_map(Slot::Area),
                1 => junk().prop_map(Slot::Junk),
            ],
        )
            .prop_map(|(actor, to, from)| CallSpec::Move { actor, to, from }),
        2 => actor_slot().prop_map(|actor| CallSpec::MoveOptions { actor }),
        5 => (
            actor_slot(),
            int_arg(-15..=15),
            prop_oneof![
                6 => "[a-z ]{0,8}".prop_map(|s| Some(json!(s))),
                1 => Just(None),
                1 => junk().prop_map(Some),
            ],
        )
            .prop_map(|(target, delta, cause)| CallSpec::HpDelta {
                target,
                delta,
                cause,
            }),
        3 => map_generate_spec(),
        1 => (
            prop_oneof![
                Just("teleport"),
                Just("attack"),
                Just(""),
                Just("Move"),
                Just("move "),
            ],
            prop_oneof![Just(json!({})), junk()],
        )
            .prop_map(|(tool, args)| CallSpec::Unknown {
                tool: tool.to_string(),
                args,
            }),
        1 => (
            prop_oneof![
                Just("move"),
                Just("move_options"),
                Just("hp_delta"),
                Just("map_generate"),
            ],
            junk().prop_filter("not an object", |v| !v.is_object()),
        )
            .prop_map(|(tool, args)| CallSpec::NotObject { tool, args }),
    ]
}

/// What a batch runs on: the campaign, the turn actor (a party member), the calls.
#[derive(Clone, Debug)]
struct BatchSpec {
    campaign: CampaignSpec,
    /// `None`: the active actor.
    turn_actor: Option<Index>,
    calls: Vec<CallSpec>,
}

fn batch_spec() -> impl Strategy<Value = BatchSpec> {
    (
        campaign_spec(),
        prop::option::weighted(0.7, any::<Index>()),
        prop::collection::vec(call_spec(), 1..8),
    )
        .prop_map(|(campaign, turn_actor, calls)| BatchSpec {
            campaign,
            turn_actor,
            calls,
        })
}

fn resolve(slot: &Slot, c: &Campaign, turn_actor: &str) -> Option<Value> {
    match slot {
        Slot::Area(i) => Some(json!(i.get(&area_ids(c)))),
        Slot::Reachable(i) => {
            let reachable = c
                .actors
                .get(turn_actor)
                .and_then(|a| a.position.as_ref())
                .and_then(|p| c.map.areas.get(p))
                .map(|a| a.reachable_area_ids.clone())
                .unwrap_or_default();
            if reachable.is_empty() {
                Some(json!(i.get(&area_ids(c))))
            } else {
                Some(json!(i.get(&reachable)))
            }
        }
        Slot::Actor(i) => {
            let ids: Vec<&String> = c.actors.keys().collect();
            Some(json!(i.get(&ids)))
        }
        Slot::TurnActor => Some(json!(turn_actor)),
        Slot::Missing => None,
        Slot::Junk(v) => Some(v.clone()),
    }
}

fn object(entries: &[(&str, Option<Value>)]) -> Value {
    let mut m = Map::new();
    for (key, value) in entries {
        if let Some(v) = value {
            m.insert(key.to_string(), v.clone());
        }
    }
    Value::Object(m)
}

/// The call `spec` describes, its ids and areas taken from `c` as it is now.
fn make_call(n: usize, spec: &CallSpec, c: &Campaign, turn_actor: &str) -> ToolCall {
    let r = |slot: &Slot| resolve(slot, c, turn_actor);
    let (tool, args) = match spec {
        CallSpec::Move { actor, to, from } => (
            "move".to_string(),
            object(&[
                ("actor_id", r(actor)),
                ("to_area_id", r(to)),
                ("from_area_id", r(from)),
            ]),
        ),
        CallSpec::MoveOptions { actor } => (
            "move_options".to_string(),
            object(&[("actor_id", r(actor))]),
        ),
        CallSpec::HpDelta {
            target,
            delta,
            cause,
        } => (
            "hp_delta".to_string(),
            object(&[
                ("target_character_id", r(target)),
                ("delta", delta.clone()),
                ("cause", cause.clone()),
            ]),
        ),
        CallSpec::MapGenerate {
            parent,
            theme,
            size,
            seed,
            at,
        } => {
            let inner = || object(&[("size", size.clone()), ("seed", seed.clone())]);
            let mut entries = vec![("parent_area_id", r(parent)), ("theme", theme.clone())];
            match at {
                SizeAt::Constraints => entries.push(("constraints", Some(inner()))),
                SizeAt::TopLevel => {
                    entries.push(("size", size.clone()));
                    entries.push(("seed", seed.clone()));
                }
                SizeAt::NullConstraints => {
                    entries.push(("constraints", Some(Value::Null)));
                    entries.push(("size", size.clone()));
                    entries.push(("seed", seed.clone()));
                }
                SizeAt::Both(top_size, top_seed) => {
                    entries.push(("constraints", Some(inner())));
                    entries.push(("size", top_size.clone()));
                    entries.push(("seed", top_seed.clone()));
                }
                SizeAt::BadConstraints(v) => {
                    entries.push(("constraints", Some(v.clone())));
                    entries.push(("size", size.clone()));
                }
            }
            ("map_generate".to_string(), object(&entries))
        }
        CallSpec::Unknown { tool, args } => (tool.clone(), args.clone()),
        CallSpec::NotObject { tool, args } => (tool.to_string(), args.clone()),
    };
    ToolCall::new(format!("call_{n:03}"), tool, args)
}

// -- Invariants -------------------------------------------------------------------------------------

/// The map is valid, positions are in it, hp ≥ 0; every reachable list is sorted and
/// duplicate-free; `connections` is exactly the set the lists give.
fn check_campaign(c: &Campaign) {
    assert_eq!(
        c.problems(),
        Vec::<String>::new(),
        "the campaign is invalid"
    );
    let mut derived = BTreeSet::new();
    for area in c.map.areas.values() {
        assert!(
            area.reachable_area_ids.windows(2).all(|w| w[0] < w[1]),
            "{}'s reachable list is not sorted and unique: {:?}",
            area.id,
            area.reachable_area_ids
        );
        for to in &area.reachable_area_ids {
            derived.insert((area.id.clone(), to.clone()));
        }
    }
    let connections: Vec<(String, String)> = c
        .map
        .connections()
        .into_iter()
        .map(|e| (e.from_area_id, e.to_area_id))
        .collect();
    let derived: Vec<(String, String)> = derived.into_iter().collect();
    assert_eq!(
        connections, derived,
        "connections are not the reachable lists"
    );
    for (id, actor) in &c.actors {
        assert!(actor.hp >= 0, "{id} has hp {}", actor.hp);
    }
}

/// Runs the batch on `c` and checks every invariant; returns the calls.
fn run_and_check(c: &mut Campaign, spec: &BatchSpec) -> Vec<ToolCall> {
    let party = c.selected.party_character_ids.clone();
    let requested = spec.turn_actor.map(|i| i.get(&party).clone());
    let turn_actor = requested
        .clone()
        .unwrap_or_else(|| c.selected.active_actor_id.clone());
    let calls: Vec<ToolCall> = spec
        .calls
        .iter()
        .enumerate()
        .map(|(n, s)| make_call(n, s, c, &turn_actor))
        .collect();

    // The calls one by one, each alone on a copy: a failed one changes nothing.
    let mut shadow = c.clone();
    let mut singles = Vec::new();
    for call in &calls {
        let before = shadow.clone();
        let out = shadow
            .run_calls(std::slice::from_ref(call), requested.as_deref())
            .unwrap();
        assert_eq!(
            out.applied_actions.len()
                + out
                    .tool_feedback
                    .as_ref()
                    .map_or(0, |f| f.failed_calls.len()),
            1
        );
        match &out.tool_feedback {
            Some(feedback) => {
                assert!(out.applied_actions.is_empty());
                assert!(
                    shadow == before,
                    "a failed call changed the campaign: {call:?} → {feedback:?}"
                );
                let failed = &feedback.failed_calls[0];
                assert_eq!(failed.id, call.id);
                assert_eq!(failed.tool, call.tool);
                let allowed = before.allowlist.contains(&call.tool);
                assert_eq!(
                    failed.reason == FailureReason::ToolNotAllowed,
                    !allowed,
                    "{call:?} → {failed:?}"
                );
                if allowed
                    && ["unconscious", "restrained_permanent", "dead"]
                        .contains(&before.state_of(&turn_actor))
                {
                    assert_eq!(failed.reason, FailureReason::ActorStateRestricted);
                }
            }
            None => {
                let applied = &out.applied_actions[0];
                assert_eq!(applied.args, call.args);
                check_applied(&before, &shadow, call, &applied.result, &turn_actor);
            }
        }
        check_campaign(&shadow);
        singles.push(out);
    }

    // The batch itself.
    let out = c.run_calls(&calls, requested.as_deref()).unwrap();
    let failed = out
        .tool_feedback
        .as_ref()
        .map_or(0, |f| f.failed_calls.len());
    assert_eq!(out.applied_actions.len() + failed, calls.len());
    assert_eq!(out.tool_feedback.is_none(), failed == 0);
    if let Some(f) = &out.tool_feedback {
        assert!(!f.failed_calls.is_empty());
    }
    check_campaign(c);
    // The batch is its calls one after another.
    assert!(
        *c == shadow,
        "the batch differs from its calls run one by one"
    );
    let single_failures: Vec<_> = singles
        .iter()
        .filter_map(|o| o.tool_feedback.as_ref())
        .flat_map(|f| f.failed_calls.clone())
        .collect();
    assert_eq!(
        out.tool_feedback
            .map(|f| f.failed_calls)
            .unwrap_or_default(),
        single_failures
    );
    let single_results: Vec<_> = singles
        .iter()
        .flat_map(|o| {
            o.applied_actions
                .iter()
                .map(|a| (a.tool.clone(), a.result.clone()))
        })
        .collect();
    let batch_results: Vec<_> = out
        .applied_actions
        .iter()
        .map(|a| (a.tool.clone(), a.result.clone()))
        .collect();
    assert_eq!(batch_results, single_results);
    calls
}

/// What an applied call must have done, and nothing else.
fn check_applied(before: &Campaign, after: &Campaign, call: &ToolCall, result: &Value, turn: &str) {
    match call.tool.as_str() {
        "move" => {
            let from = result["from_area_id"].as_str().unwrap();
            let to = result["to_area_id"].as_str().unwrap();
            assert_eq!(call.args["actor_id"], json!(turn));
            assert_eq!(before.actors[turn].position.as_deref(), Some(from));
            assert!(
                before.map.areas[from]
                    .reachable_area_ids
                    .iter()
                    .any(|r| r == to)
            );
            let mut expected = before.clone();
            expected.actors.get_mut(turn).unwrap().position = Some(to.to_string());
            assert!(*after == expected, "move changed more than the position");
        }
        "move_options" => assert!(*after == *before, "move_options changed the campaign"),
        "hp_delta" => {
            let target = call.args["target_character_id"].as_str().unwrap();
            let delta = call.args["delta"].as_i64().unwrap();
            let hp = before.actors[target].hp.saturating_add(delta).max(0);
            assert_eq!(result["new_hp"], json!(hp));
            assert_eq!(after.actors[target].hp, hp);
            assert_eq!(after.map, before.map);
        }
        "map_generate" => check_generated(before, after, result),
        other => panic!("applied a call of '{other}'"),
    }
}

/// A generated layer: new ids only, as many as asked for, the edge count matching, positions and
/// everything but the map untouched.
fn check_generated(before: &Campaign, after: &Campaign, result: &Value) {
    let created: Vec<&str> = result["created_area_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!created.is_empty() && created.len() <= 30);
    assert_eq!(
        after.map.areas.len(),
        before.map.areas.len() + created.len()
    );
    for id in &created {
        assert!(!before.map.contains(id) && after.map.contains(id), "{id}");
    }
    assert_eq!(
        result["created_connections"],
        json!(after.map.edge_count() - before.map.edge_count())
    );
    let mut rest = after.clone();
    rest.map = before.map.clone();
    assert!(rest == *before, "map_generate changed more than the map");
}

// -- Properties -------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn batches_keep_every_invariant(spec in batch_spec()) {
        let mut c = build(&spec.campaign);
        check_campaign(&c);
        run_and_check(&mut c, &spec);
        // A second batch on the result (the calls resolved against the changed campaign).
        let again = BatchSpec { calls: spec.calls.iter().rev().cloned().collect(), ..spec.clone() };
        run_and_check(&mut c, &again);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_turn_actor_outside_the_party_fails_the_turn_and_changes_nothing(spec in batch_spec()) {
        let mut c = build(&spec.campaign);
        let before = c.clone();
        let calls: Vec<ToolCall> = spec
            .calls
            .iter()
            .enumerate()
            .map(|(n, s)| make_call(n, s, &c, "pc_999"))
            .collect();
        prop_assert!(c.run_calls(&calls, Some("pc_999")).is_err());
        prop_assert!(c == before);
    }

    #[test]
    fn load_save_load_is_the_identity(spec in batch_spec()) {
        let mut c = build(&spec.campaign);
        run_and_check(&mut c, &spec);
        let text = file::to_text(&c);
        let loaded = file::parse(&text).unwrap();
        prop_assert_eq!(&loaded.warnings, &Vec::<String>::new());
        prop_assert!(loaded.campaign == c, "load changed the campaign");
        prop_assert_eq!(file::to_text(&loaded.campaign), text);
    }

    #[test]
    fn map_generate_is_deterministic(campaign in campaign_spec(), generate in map_generate_spec()) {
        let c = build(&campaign);
        let turn = c.selected.active_actor_id.clone();
        let call = make_call(0, &generate, &c, &turn);
        let (mut a, mut b) = (c.clone(), c.clone());
        // Whatever the actor's state, the map tool must be allowed for this check.
        for x in [&mut a, &mut b] {
            x.actors.get_mut(&turn).unwrap().character_state = "alive".into();
            x.allowlist = vec!["map_generate".into()];
        }
        let out_a = a.run_calls(std::slice::from_ref(&call), None).unwrap();
        let out_b = b.run_calls(std::slice::from_ref(&call), None).unwrap();
        prop_assert!(a == b, "the same call built different maps");
        prop_assert_eq!(&out_a.tool_feedback, &out_b.tool_feedback);
        let results = |o: &agents_core::campaign::BatchOutcome| -> Vec<Value> {
            o.applied_actions.iter().map(|x| x.result.clone()).collect()
        };
        prop_assert_eq!(results(&out_a), results(&out_b));
        check_campaign(&a);
        // On a clone of the result the same call again gives the same second layer too.
        let (mut a2, mut b2) = (a.clone(), a.clone());
        a2.run_calls(std::slice::from_ref(&call), None).unwrap();
        b2.run_calls(std::slice::from_ref(&call), None).unwrap();
        prop_assert!(a2 == b2);
    }
}
