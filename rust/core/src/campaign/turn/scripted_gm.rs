//! How the offline `scripted` brain runs a game master's turn ([`GmView`]'s
//! [`Section::scripted`](crate::brain::Section::scripted)): plain requests understood well
//! enough for demos and tests, from the campaign context alone (no model).
//!
//! | the player says | the GM calls | and says |
//! |---|---|---|
//! | drink a potion / heal / rest | `hp_delta` +3 on the turn actor (cause: the request) | the healing |
//! | hurt / wounded / trap / bites / claws / stabs / poison | `hp_delta` −2 on the turn actor | the wound |
//! | explore deeper / explore / search for a way down | `map_generate` under the current area (size 4, a seed from the campaign) | the new passages |
//! | where can I go / exits / options / look around | `move_options` (the turn actor) | no movement yet, and the ways out |
//! | the name of an area not one step away, someone to follow who is not one step away, or going on where there are several ways | `move_options` | that it is out of reach or which way, no movement yet |
//! | an area id, or the name of an area one step away (go to the side room); follow (the area of the first party member elsewhere); next room / through the door / go on (the one way out, when there is exactly one) | `move` | where the actor heads |
//! | anything else | nothing | a scene line: where the actor is, the ways out, what next |
//!
//! A tool not in the allowlist is not called (the GM says so instead); a dying actor is told that
//! only healing itself helps. When a call comes back refused, the GM answers with a line that
//! names the failure and asks what to do instead (no call: the turn ends there).

use serde_json::{Value, json};

use super::GmView;
use crate::brain::{BrainContext, BrainReply, ScriptedPlay};

/// Words that ask where the actor can go.
const OPTIONS_WORDS: &[&str] = &[
    "where can",
    "where could",
    "where to",
    "exits",
    "exit",
    "options",
    "way out",
    "ways out",
    "look around",
    "can i move",
    "can i go",
];
/// Words that heal.
const HEAL_WORDS: &[&str] = &["potion", "heal", "bandage", "rest", "drink"];
/// Words that hurt.
const HURT_WORDS: &[&str] = &[
    "hurt", "wound", "trap", "injur", "bleed", "bite", "claw", "stab", "poison",
];
/// Words that go on through the one way out.
const ONWARD_WORDS: &[&str] = &[
    "next room",
    "next area",
    "through the door",
    "open the door",
    "go on",
    "walk on",
    "move on",
    "onward",
    "go ahead",
];
/// Words that follow another party member.
const FOLLOW_WORDS: &[&str] = &["follow"];
/// Words that explore.
const EXPLORE_WORDS: &[&str] = &[
    "explore",
    "deeper",
    "way down",
    "descend",
    "search for a way",
];

/// An area as the context has it.
struct AreaInfo {
    id: String,
    name: String,
    reachable: Vec<String>,
}

/// What the GM reads from the context.
struct Table<'a> {
    view: &'a GmView,
    input: String,
    here: Option<AreaInfo>,
    state: String,
}

impl<'a> Table<'a> {
    fn new(view: &'a GmView) -> Table<'a> {
        let actor = &view.context["actors"][&view.turn_actor];
        let here = actor["position"].as_str().and_then(|id| area(view, id));
        Table {
            view,
            input: view.user_input.to_lowercase(),
            here,
            state: actor["character_state"]
                .as_str()
                .unwrap_or("alive")
                .to_string(),
        }
    }

    fn allowed(&self, tool: &str) -> bool {
        self.view.context["allowlist"]
            .as_array()
            .is_some_and(|a| a.iter().any(|t| t == tool))
    }

    fn says(&self, words: &[&str]) -> bool {
        words.iter().any(|w| self.input.contains(w))
    }

    /// `Side Room (area_002), Cave Entry (area_003)`, or `nowhere`.
    fn exits(&self) -> String {
        let Some(here) = &self.here else {
            return "nowhere".into();
        };
        let names: Vec<String> = here
            .reachable
            .iter()
            .map(|id| match area(self.view, id) {
                Some(a) => format!("{} ({id})", a.name),
                None => id.clone(),
            })
            .collect();
        if names.is_empty() {
            "nowhere: there is no way out from here".into()
        } else {
            names.join(", ")
        }
    }

    /// The area the player names: an `area_…` id in the input, or the longest area name it
    /// contains.
    fn named_area(&self) -> Option<AreaInfo> {
        let areas = self.view.context["map"]["areas"].as_object()?;
        if let Some(id) = self
            .input
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .find(|w| w.starts_with("area_") && areas.contains_key(*w))
        {
            return area(self.view, id);
        }
        areas
            .iter()
            .filter_map(|(id, a)| {
                let name = a["name"].as_str()?.to_lowercase();
                (!name.is_empty() && self.input.contains(&name)).then_some((name.len(), id))
            })
            .max()
            .and_then(|(_, id)| area(self.view, id))
    }
}

impl Table<'_> {
    /// The area of the first other party member who stands elsewhere, when the player follows.
    fn followed(&self) -> Option<AreaInfo> {
        if !self.says(FOLLOW_WORDS) {
            return None;
        }
        let here = self.here.as_ref().map(|h| h.id.as_str());
        let context = &self.view.context;
        context["selected"]["party_character_ids"]
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .filter(|id| *id != self.view.turn_actor)
            .filter_map(|id| context["actors"][id]["position"].as_str())
            .find(|at| Some(*at) != here)
            .and_then(|at| area(self.view, at))
    }

    /// The one way out, when the player goes on and there is exactly one.
    fn onward(&self) -> Option<AreaInfo> {
        match self.here.as_ref()?.reachable.as_slice() {
            [only] if self.says(ONWARD_WORDS) => area(self.view, only),
            _ => None,
        }
    }
}

fn area(view: &GmView, id: &str) -> Option<AreaInfo> {
    let a = view.context["map"]["areas"].get(id)?;
    Some(AreaInfo {
        id: id.to_string(),
        name: a["name"].as_str().unwrap_or(id).to_string(),
        reachable: a["reachable_area_ids"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    })
}

fn line(text: String, dialog_type: &str) -> BrainReply {
    BrainReply {
        assistant_text: text,
        dialog_type: dialog_type.to_string(),
        tool_calls: Vec::new(),
    }
}

/// A GM answer to the player's request in `view`.
// Long on purpose: one branch per row of the table in the module docs, tried in the same order
// (the first row that matches answers), so the two read side by side.
pub(crate) fn decide(ctx: &BrainContext, view: &GmView, play: &mut ScriptedPlay<'_>) -> BrainReply {
    let table = Table::new(view);
    let actor = view.turn_actor.clone();
    if let Some(step) = ctx.steps.last()
        && let Some(failed) = step.failed_calls.first()
    {
        return line(
            format!(
                "That cannot be done: {}. What do you do instead?",
                failed.message
            ),
            "rule_explanation",
        );
    }
    let heal = table.says(HEAL_WORDS);
    if table.state == "dying" && !heal {
        return line(
            format!("{actor} is dying: only healing yourself can help now."),
            "rule_explanation",
        );
    }
    if !["alive", "dying"].contains(&table.state.as_str()) {
        return line(
            format!("{actor} is {} and cannot act this turn.", table.state),
            "rule_explanation",
        );
    }
    let wants = |tool: &str| table.allowed(tool);
    let not_allowed = |tool: &str| {
        line(
            format!("That is not possible in this campaign ({tool} is not allowed)."),
            "rule_explanation",
        )
    };
    if heal || table.says(HURT_WORDS) {
        if !wants("hp_delta") {
            return not_allowed("hp_delta");
        }
        let (delta, text) = if heal {
            (3, "Warmth spreads through you: you regain 3 hp.")
        } else {
            (-2, "It hurts: you lose 2 hp.")
        };
        let call = play.call(
            "hp_delta",
            json!({"target_character_id": actor, "delta": delta, "cause": view.user_input}),
            None,
        );
        return BrainReply {
            assistant_text: text.into(),
            dialog_type: "resolution_summary".into(),
            tool_calls: vec![call],
        };
    }
    let Some(here) = &table.here else {
        return line(
            format!("{actor} is nowhere on the map yet. Where does the story begin?"),
            "action_prompt",
        );
    };
    if table.says(EXPLORE_WORDS) {
        if !wants("map_generate") {
            return not_allowed("map_generate");
        }
        let areas = view.context["map"]["areas"]
            .as_object()
            .map_or(0, |a| a.len());
        let seed = format!("{}:{}:{areas}", view.campaign_id, here.id);
        let call = play.call(
            "map_generate",
            json!({"parent_area_id": here.id, "theme": "Depths",
                   "constraints": {"size": 4, "seed": seed}}),
            Some("the player explores".into()),
        );
        return BrainReply {
            assistant_text: format!(
                "Beyond {} the way opens into new passages, leading deeper.",
                here.name
            ),
            dialog_type: "scene_description".into(),
            tool_calls: vec![call],
        };
    }
    let target = table
        .named_area()
        .or_else(|| table.followed())
        .or_else(|| table.onward())
        .filter(|t| t.id != here.id);
    let which_way = target.is_none() && table.says(ONWARD_WORDS);
    if table.says(OPTIONS_WORDS)
        || which_way
        || target
            .as_ref()
            .is_some_and(|t| !here.reachable.contains(&t.id))
    {
        if !wants("move_options") {
            return line(
                format!(
                    "You are in {}. From here you can go to: {}.",
                    here.name,
                    table.exits()
                ),
                "scene_description",
            );
        }
        let call = play.call("move_options", json!({"actor_id": actor}), None);
        let prefix = match &target {
            Some(t) if !table.says(OPTIONS_WORDS) => {
                format!("{} is not one step away from {}. ", t.name, here.name)
            }
            None if which_way => "Which way? ".to_string(),
            _ => String::new(),
        };
        return BrainReply {
            assistant_text: format!(
                "{prefix}No movement yet. From {} you can go to: {}.",
                here.name,
                table.exits()
            ),
            dialog_type: "scene_description".into(),
            tool_calls: vec![call],
        };
    }
    if let Some(target) = target {
        if !wants("move") {
            return not_allowed("move");
        }
        let call = play.call(
            "move",
            json!({"actor_id": actor, "to_area_id": target.id}),
            Some(format!("the player goes to {}", target.name)),
        );
        return BrainReply {
            assistant_text: format!("You head into {}.", target.name),
            dialog_type: "scene_description".into(),
            tool_calls: vec![call],
        };
    }
    line(
        format!(
            "You are in {} ({}). From here you can go to: {}. What do you do next?",
            here.name,
            here.id,
            table.exits()
        ),
        "action_prompt",
    )
}
