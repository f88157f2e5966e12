//! The GM tools grounded in the campaign when the GM decides.
//!
//! [`GmTool::parameters`] accepts any actor id and any area id. A turn's tools
//! ([`gm_tools`]) name only what exists then, for that turn's actor, so a model sees the ids it
//! may use in the tool definitions and a `local` model's grammar cannot write any other:
//!
//! - `move`: `actor_id` is the turn actor (an `enum` of one); `to_area_id` is one of the areas
//!   reachable from its current area;
//! - `move_options`: `actor_id` is one of the actors with a position, or `null`;
//! - `hp_delta`: `target_character_id` is one of the actors, the party first;
//! - `map_generate`: `parent_area_id` is one of the areas — the turn actor's, the ones it can
//!   reach, then the others by id — or `null`.
//!
//! Calls the checks would refuse whatever their arguments are not offered: a turn actor that is
//! `dying` is offered only `hp_delta` on itself with `delta` ≥ 1; one that is `unconscious`,
//! `restrained_permanent`, `dead` or in a state the rules do not know is offered nothing (the GM
//! narrates); `move` is not offered to an actor with no position or nowhere to go, nor a tool
//! whose list would be empty. An `enum` is never empty, so a grammar built from the schemas can
//! always be satisfied.
//!
//! A list holds at most [`MAX_LISTED_IDS`] ids; what is beyond cannot be named by that turn.
//! The lists are of the campaign as the turn starts: a batch that moves twice, or moves into a
//! layer it generates, is beyond what a constrained model can write in one answer (it takes
//! two turns). The checks of [`Campaign::run_calls`] stay the one validation path: a model that
//! is not constrained and calls outside the lists gets their reasons.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::Campaign;
use super::gm::GmTool;

/// The most ids a grounded GM schema lists in one field.
pub const MAX_LISTED_IDS: usize = 128;

/// The tool definitions a GM is offered for a turn of `turn_actor`: the allowlisted GM tools
/// the turn actor's state permits, their id fields grounded in `campaign` (see the module).
pub fn gm_tools(campaign: &Campaign, turn_actor: &str) -> Vec<Value> {
    GmTool::ALL
        .into_iter()
        .filter(|t| campaign.allowlist.iter().any(|a| a == t.as_str()))
        .filter_map(|t| {
            let parameters = grounded(t, campaign, turn_actor)?;
            Some(json!({"name": t.as_str(), "description": t.description(), "parameters": parameters}))
        })
        .collect()
}

/// `tool`'s parameters for a turn of `turn_actor`, or `None` when it is not offered.
fn grounded(tool: GmTool, campaign: &Campaign, turn_actor: &str) -> Option<Value> {
    let mut parameters = tool.parameters();
    let state = campaign.state_of(turn_actor);
    match (state, tool) {
        ("alive", _) => {}
        ("dying", GmTool::HpDelta) => {
            let properties = &mut parameters["properties"];
            set_enum(
                &mut properties["target_character_id"],
                vec![turn_actor.into()],
            );
            properties["delta"]["minimum"] = json!(1);
            return Some(parameters);
        }
        _ => return None,
    }
    let properties = &mut parameters["properties"];
    match tool {
        GmTool::Move => {
            let reachable = reachable_from(campaign, turn_actor);
            if reachable.is_empty() {
                return None;
            }
            set_enum(&mut properties["actor_id"], vec![turn_actor.into()]);
            set_enum(&mut properties["to_area_id"], listed(reachable));
        }
        GmTool::MoveOptions => {
            let placed: Vec<String> = campaign
                .actors
                .iter()
                .filter(|(_, a)| {
                    a.position
                        .as_ref()
                        .is_some_and(|p| campaign.map.areas.contains_key(p))
                })
                .map(|(id, _)| id.clone())
                .collect();
            if placed.is_empty() {
                return None;
            }
            set_enum(&mut properties["actor_id"], with_null(listed(placed)));
        }
        GmTool::HpDelta => {
            let party = &campaign.selected.party_character_ids;
            let targets = party
                .iter()
                .filter(|id| campaign.actors.contains_key(*id))
                .chain(campaign.actors.keys().filter(|id| !party.contains(id)))
                .cloned();
            let targets = listed(targets);
            if targets.is_empty() {
                return None;
            }
            set_enum(&mut properties["target_character_id"], targets);
        }
        GmTool::MapGenerate => {
            let here = position(campaign, turn_actor);
            let areas = here
                .clone()
                .into_iter()
                .chain(reachable_from(campaign, turn_actor))
                .chain(campaign.map.areas.keys().cloned());
            set_enum(&mut properties["parent_area_id"], with_null(listed(areas)));
        }
    }
    Some(parameters)
}

/// The area `actor` stands in, when it exists.
fn position(campaign: &Campaign, actor: &str) -> Option<String> {
    campaign
        .actors
        .get(actor)?
        .position
        .clone()
        .filter(|p| campaign.map.areas.contains_key(p))
}

/// The existing areas one step from `actor`'s area.
fn reachable_from(campaign: &Campaign, actor: &str) -> Vec<String> {
    let Some(here) = position(campaign, actor) else {
        return Vec::new();
    };
    campaign.map.areas[&here]
        .reachable_area_ids
        .iter()
        .filter(|id| campaign.map.areas.contains_key(*id))
        .cloned()
        .collect()
}

/// `ids` without repeats or blanks, in their order, at most [`MAX_LISTED_IDS`], as JSON.
fn listed(ids: impl IntoIterator<Item = String>) -> Vec<Value> {
    let mut seen = BTreeSet::new();
    ids.into_iter()
        .filter(|id| !id.trim().is_empty() && seen.insert(id.clone()))
        .take(MAX_LISTED_IDS)
        .map(Value::String)
        .collect()
}

fn with_null(mut ids: Vec<Value>) -> Vec<Value> {
    ids.push(Value::Null);
    ids
}

fn set_enum(property: &mut Value, values: Vec<Value>) {
    property["enum"] = Value::Array(values);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::ToolCall;

    fn campaign() -> Campaign {
        Campaign::new("camp_0001", &["pc_001".to_string(), "pc_002".to_string()])
    }

    fn tool<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
        tools.iter().find(|t| t["name"] == name)
    }

    fn listed_in<'a>(tools: &'a [Value], name: &str, field: &str) -> &'a Value {
        &tool(tools, name).unwrap()["parameters"]["properties"][field]["enum"]
    }

    #[test]
    fn an_alive_actor_is_offered_what_exists() {
        let c = campaign();
        let tools = gm_tools(&c, "pc_001");
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["move", "move_options", "hp_delta", "map_generate"]);
        assert_eq!(listed_in(&tools, "move", "actor_id"), &json!(["pc_001"]));
        assert_eq!(
            listed_in(&tools, "move", "to_area_id"),
            &json!(["area_002"])
        );
        assert_eq!(
            listed_in(&tools, "hp_delta", "target_character_id")[0],
            "pc_001",
            "the party first"
        );
        let parents = listed_in(&tools, "map_generate", "parent_area_id")
            .as_array()
            .unwrap();
        assert_eq!(parents[0], "area_001", "the turn actor's area first");
        assert_eq!(parents[1], "area_002", "then where it can go");
        assert_eq!(parents.last(), Some(&Value::Null), "or a root layer");
        assert_eq!(parents.len(), c.map.areas.len() + 1);
        let who = listed_in(&tools, "move_options", "actor_id")
            .as_array()
            .unwrap();
        assert!(who.contains(&json!("pc_001")) && who.contains(&Value::Null));
    }

    #[test]
    fn every_listed_id_is_accepted_by_the_checks_and_an_unlisted_one_is_not() {
        let c = campaign();
        let tools = gm_tools(&c, "pc_001");
        for to in listed_in(&tools, "move", "to_area_id").as_array().unwrap() {
            let mut trial = c.clone();
            let call = ToolCall::new(
                "call_1",
                "move",
                json!({"actor_id": "pc_001", "to_area_id": to}),
            );
            let outcome = trial.run_calls(&[call], None).unwrap();
            assert!(outcome.tool_feedback.is_none(), "{to}: {outcome:?}");
        }
        for target in listed_in(&tools, "hp_delta", "target_character_id")
            .as_array()
            .unwrap()
        {
            let mut trial = c.clone();
            let args = json!({"target_character_id": target, "delta": -1, "cause": ""});
            let outcome = trial
                .run_calls(&[ToolCall::new("call_1", "hp_delta", args)], None)
                .unwrap();
            assert!(outcome.tool_feedback.is_none(), "{target}: {outcome:?}");
        }
        // What the small models wrote: an id that is not there.
        assert!(
            !listed_in(&tools, "move", "actor_id")
                .as_array()
                .unwrap()
                .contains(&json!("pc_00"))
        );
    }

    #[test]
    fn a_dying_actor_is_offered_only_healing_itself_and_a_dead_one_nothing() {
        let mut c = campaign();
        c.actors.get_mut("pc_001").unwrap().character_state = "dying".into();
        let tools = gm_tools(&c, "pc_001");
        assert_eq!(tools.len(), 1);
        let hp = &tool(&tools, "hp_delta").unwrap()["parameters"]["properties"];
        assert_eq!(hp["target_character_id"]["enum"], json!(["pc_001"]));
        assert_eq!(hp["delta"]["minimum"], 1);
        for state in ["unconscious", "restrained_permanent", "dead", "petrified"] {
            c.actors.get_mut("pc_001").unwrap().character_state = state.into();
            assert!(gm_tools(&c, "pc_001").is_empty(), "{state}");
        }
    }

    #[test]
    fn nowhere_to_go_leaves_move_out_and_the_allowlist_still_decides() {
        let mut c = campaign();
        let here = c.actors["pc_001"].position.clone().unwrap();
        c.map
            .areas
            .get_mut(&here)
            .unwrap()
            .reachable_area_ids
            .clear();
        let tools = gm_tools(&c, "pc_001");
        assert!(tool(&tools, "move").is_none());
        assert!(tool(&tools, "move_options").is_some());
        c.allowlist = vec!["hp_delta".into()];
        let tools = gm_tools(&c, "pc_001");
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["hp_delta"]);
    }

    #[test]
    fn long_lists_are_cut_to_their_bound() {
        let ids = (0..MAX_LISTED_IDS + 10).map(|i| format!("area_{i:03}"));
        let cut = listed(ids.chain(["area_000".to_string(), " ".to_string()]));
        assert_eq!(cut.len(), MAX_LISTED_IDS);
        assert_eq!(cut[0], "area_000");
    }
}
