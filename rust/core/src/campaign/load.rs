//! Reading and writing `campaign.json` (`docs/campaigns.md`): defaults for what is missing, the
//! migration of the older layout, normalisation (with warnings), and a problem for everything
//! that cannot be read — all of them listed, not just the first.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{
    Actor, Area, Campaign, CampaignError, CampaignMap, DEFAULT_ALLOWLIST, DEFAULT_HP, Goal,
    Milestone, Selected, default_settings,
};

/// A campaign read from JSON, and what was normalised on the way.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The campaign.
    pub campaign: Campaign,
    /// What was changed to make it valid (`actor:pc_002:position_missing_area`).
    pub warnings: Vec<String>,
}

/// Collects problems while fields are read.
#[derive(Default)]
struct Reader {
    problems: Vec<String>,
    warnings: Vec<String>,
}

impl Reader {
    fn string(&mut self, obj: &Map<String, Value>, key: &str, default: &str) -> String {
        match obj.get(key) {
            None | Some(Value::Null) => default.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                self.problems
                    .push(format!("{key}: expected a string, got {}", kind(other)));
                default.to_string()
            }
        }
    }

    fn int(&mut self, obj: &Map<String, Value>, key: &str, default: i64) -> i64 {
        match obj.get(key) {
            None | Some(Value::Null) => default,
            Some(v) if strict_int(v).is_some() => strict_int(v).unwrap_or(default),
            Some(other) => {
                self.problems
                    .push(format!("{key}: expected an integer, got {}", kind(other)));
                default
            }
        }
    }

    fn object<'a>(
        &mut self,
        obj: &'a Map<String, Value>,
        key: &str,
    ) -> Option<&'a Map<String, Value>> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                self.problems
                    .push(format!("{key}: expected an object, got {}", kind(other)));
                None
            }
        }
    }

    fn strings(&mut self, obj: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        other => self.problems.push(format!(
                            "{key}[{i}]: expected a string, got {}",
                            kind(other)
                        )),
                    }
                }
                Some(out)
            }
            Some(other) => {
                self.problems.push(format!(
                    "{key}: expected an array of strings, got {}",
                    kind(other)
                ));
                None
            }
        }
    }
}

/// The JSON type of `value`, for messages.
fn kind(value: &Value) -> &'static str {
    crate::json_kind::json_kind(value)
}

/// An integer, never a boolean or a float (what `campaign.json`'s integer fields hold).
pub(crate) fn strict_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

impl Campaign {
    /// Reads a campaign from its JSON. Missing fields get their defaults (an `id` of
    /// `camp_0001`); unknown keys are ignored. Wrong types and an invalid map are problems, all
    /// of them in the error; positions naming a missing area, non-integer hp and non-string
    /// states are normalised, with a warning each.
    pub fn from_json(value: &Value) -> Result<Loaded, CampaignError> {
        let Value::Object(root) = value else {
            return Err(CampaignError::Invalid(vec![format!(
                "campaign: expected a JSON object, got {}",
                kind(value)
            )]));
        };
        let mut r = Reader::default();
        let id = r.string(root, "id", "camp_0001");
        let selected = read_selected(&mut r, root);
        let settings_snapshot = r
            .object(root, "settings_snapshot")
            .cloned()
            .unwrap_or_else(default_settings);
        let settings_revision = r.int(root, "settings_revision", 0);
        let allowlist = r
            .strings(root, "allowlist")
            .unwrap_or_else(|| DEFAULT_ALLOWLIST.iter().map(|s| s.to_string()).collect());
        let map = read_map(&mut r, root);
        let actors = read_actors(&mut r, root, &selected, &map);
        let goal = match r.object(root, "goal") {
            Some(g) => {
                let d = Goal::default();
                Goal {
                    text: r.string(g, "text", &d.text),
                    status: r.string(g, "status", &d.status),
                }
            }
            None => Goal::default(),
        };
        let milestone = match r.object(root, "milestone") {
            Some(m) => {
                let d = Milestone::default();
                Milestone {
                    current: r.string(m, "current", &d.current),
                    last_advanced_turn: r.int(m, "last_advanced_turn", d.last_advanced_turn),
                }
            }
            None => Milestone::default(),
        };
        let created_at = match root.get("created_at") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => crate::time::now_iso_micros(),
            Some(other) => {
                r.problems.push(format!(
                    "created_at: expected a string, got {}",
                    kind(other)
                ));
                String::new()
            }
        };
        let campaign = Campaign {
            id,
            selected,
            settings_snapshot,
            settings_revision,
            allowlist,
            map,
            actors,
            goal,
            milestone,
            created_at,
        };
        r.problems.extend(campaign.problems());
        r.problems.extend(super::bounds::problems(&campaign));
        if !r.problems.is_empty() {
            return Err(CampaignError::Invalid(r.problems));
        }
        Ok(Loaded {
            campaign,
            warnings: r.warnings,
        })
    }

    /// The campaign as `campaign.json` holds it: `map.connections` derived from the reachable
    /// lists, the older layout's fields left out.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(super::view::FileView::of(self)).unwrap_or(Value::Null)
    }
}

fn read_selected(r: &mut Reader, root: &Map<String, Value>) -> Selected {
    let empty = Map::new();
    let obj = r.object(root, "selected").unwrap_or(&empty);
    let world_id = r.string(obj, "world_id", "world_001");
    let map_id = r.string(obj, "map_id", "map_001");
    let mut party = r
        .strings(obj, "party_character_ids")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| vec!["pc_001".into()]);
    let mut active = r.string(obj, "active_actor_id", "");
    if active.is_empty() {
        active = party[0].clone();
    }
    if !party.contains(&active) {
        party.insert(0, active.clone());
    }
    Selected {
        world_id,
        map_id,
        party_character_ids: party,
        active_actor_id: active,
    }
}

fn read_map(r: &mut Reader, root: &Map<String, Value>) -> CampaignMap {
    let Some(obj) = r.object(root, "map") else {
        return CampaignMap::starter();
    };
    let mut map = CampaignMap::default();
    let mut lists_given = false;
    if let Some(areas) = r.object(obj, "areas") {
        for (key, value) in areas {
            let Value::Object(a) = value else {
                r.problems.push(format!(
                    "map.areas.{key}: expected an object, got {}",
                    kind(value)
                ));
                continue;
            };
            let mut area = Area::new(key.clone(), r.string(a, "name", key), None);
            area.parent_area_id = match a.get("parent_area_id") {
                None | Some(Value::Null) => None,
                Some(Value::String(p)) => Some(p.clone()),
                Some(other) => {
                    r.problems.push(format!(
                        "map.areas.{key}.parent_area_id: expected a string or null, got {}",
                        kind(other)
                    ));
                    None
                }
            };
            if a.contains_key("reachable_area_ids") {
                lists_given = true;
                area.reachable_area_ids = r.strings(a, "reachable_area_ids").unwrap_or_default();
            }
            map.areas.insert(key.clone(), area);
        }
    }
    // An older file: connections but no reachable lists.
    if !lists_given && let Some(Value::Array(connections)) = obj.get("connections") {
        for (i, c) in connections.iter().enumerate() {
            let from = c.get("from_area_id").and_then(Value::as_str);
            let to = c.get("to_area_id").and_then(Value::as_str);
            match (from, to) {
                (Some(from), Some(to)) if map.contains(from) => {
                    if let Some(area) = map.areas.get_mut(from) {
                        area.reachable_area_ids.push(to.to_string());
                    }
                }
                (Some(from), Some(_)) => r
                    .problems
                    .push(format!("map.connections[{i}]: no area '{from}'")),
                _ => r.problems.push(format!(
                    "map.connections[{i}]: expected {{from_area_id, to_area_id}} strings"
                )),
            }
        }
    }
    map.sort_reachable();
    map
}

fn read_actors(
    r: &mut Reader,
    root: &Map<String, Value>,
    selected: &Selected,
    map: &CampaignMap,
) -> BTreeMap<String, Actor> {
    let given = r.object(root, "actors").filter(|a| !a.is_empty());
    let mut actors = BTreeMap::new();
    match given {
        Some(records) => {
            for (id, value) in records {
                let Value::Object(a) = value else {
                    r.problems.push(format!(
                        "actors.{id}: expected an object, got {}",
                        kind(value)
                    ));
                    continue;
                };
                let position = match a.get("position") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(p)) => Some(p.clone()),
                    Some(_) => {
                        r.warnings.push(format!("actor:{id}:position_not_string"));
                        None
                    }
                };
                let actor = Actor {
                    position,
                    hp: normal_hp(r, id, a.get("hp").unwrap_or(&Value::Null)),
                    character_state: normal_state(r, id, a.get("character_state")),
                    meta: match a.get("meta") {
                        Some(Value::Object(m)) => m.clone(),
                        _ => Map::new(),
                    },
                };
                actors.insert(id.clone(), actor);
            }
        }
        None => migrate(r, root, selected, &mut actors),
    }
    for (id, actor) in actors.iter_mut() {
        if let Some(position) = &actor.position
            && !map.contains(position)
        {
            r.warnings.push(format!("actor:{id}:position_missing_area"));
            actor.position = None;
        }
    }
    actors
}

/// Builds the actors of an older file (or of a file with none) from `positions`, `hp`,
/// `character_states` and `state`.
fn migrate(
    r: &mut Reader,
    root: &Map<String, Value>,
    selected: &Selected,
    actors: &mut BTreeMap<String, Actor>,
) {
    let empty = Map::new();
    let map_of = |key: &str| match root.get(key) {
        Some(Value::Object(m)) => m,
        _ => &empty,
    };
    let positions = map_of("positions");
    let hp = map_of("hp");
    let states = map_of("character_states");
    let state = map_of("state");
    let nested = |key: &str| match state.get(key) {
        Some(Value::Object(m)) => m,
        _ => &empty,
    };
    let parent_positions = nested("positions_parent");
    let state_positions = nested("positions");
    let legacy = !(positions.is_empty() && hp.is_empty() && states.is_empty() && state.is_empty());
    let mut ids: BTreeSet<String> = selected.party_character_ids.iter().cloned().collect();
    ids.insert(selected.active_actor_id.clone());
    for m in [positions, hp, states] {
        ids.extend(m.keys().cloned());
    }
    for id in ids {
        let position = if legacy {
            [positions, parent_positions, state_positions]
                .iter()
                .find_map(|m| m.get(&id).and_then(Value::as_str))
                .map(str::to_string)
        } else {
            Some("area_001".to_string())
        };
        let actor = Actor {
            position,
            hp: normal_hp(r, &id, hp.get(&id).unwrap_or(&Value::Null)),
            character_state: normal_state(r, &id, states.get(&id)),
            meta: Map::new(),
        };
        actors.insert(id, actor);
    }
}

/// hp as an integer ≥ 0: a missing one is [`DEFAULT_HP`], a non-integer becomes it with a
/// warning, a negative one 0.
fn normal_hp(r: &mut Reader, id: &str, value: &Value) -> i64 {
    match value {
        Value::Null => DEFAULT_HP,
        v => match strict_int(v) {
            Some(hp) if hp >= 0 => hp,
            Some(_) => {
                r.warnings.push(format!("actor:{id}:hp_negative"));
                0
            }
            None => {
                r.warnings.push(format!("actor:{id}:hp_not_integer"));
                DEFAULT_HP
            }
        },
    }
}

/// The state as given when it is a string (also an unknown one: calls then fail with
/// `invalid_actor_state`), `alive` otherwise.
fn normal_state(r: &mut Reader, id: &str, value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => "alive".into(),
        Some(_) => {
            r.warnings.push(format!("actor:{id}:state_not_string"));
            "alive".into()
        }
    }
}
