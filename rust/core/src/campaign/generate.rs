//! `map_generate`: a seeded layer of new areas (`docs/campaigns.md`), the same dungeon from the
//! same seed as the reference backend.
//!
//! - Arguments: `parent_area_id` (missing or null: a root layer), `theme` (trimmed; missing or
//!   null `Generated`, empty after trimming `Generated` with the warning `theme_defaulted`),
//!   `size` (integer 1–30, default 6, never clamped) and `seed` (string; missing or null
//!   `"default"` with the warning `seed_defaulted`), read from `constraints` when it is an
//!   object, else from the top level.
//! - Ids `area_` + at least 3 digits, counting up from one past the highest `area_<digits>`,
//!   skipping ids that exist. Names: a child layer's first area is `<Theme> Entry`, the others
//!   `<Theme> Area NN` (NN its 1-based place among the new areas).
//! - Directed edges: the chain; for size ≥ 4 the branches drawn with [`PyRandom`]; the anchor to
//!   the existing layer; in a child layer the parent and every new area both ways.
//! - The map is validated after; on any problem it is restored and the call is invalid.
//! - A layer that would take the map past [`MAX_CAMPAIGN_AREAS`] areas, or a theme longer than
//!   [`MAX_MAP_THEME_CHARS`], is invalid (`invalid_args`, naming the limit): a campaign stays
//!   within the size it may be loaded with.

use serde_json::{Value, json};

use super::load::strict_int;
use super::pyrandom::PyRandom;
use super::{Area, Campaign};
use crate::limits::{MAX_CAMPAIGN_AREAS, MAX_MAP_THEME_CHARS};

/// The layer to build, read from the arguments.
struct Request {
    parent: Option<String>,
    theme: String,
    size: usize,
    seed: String,
    warnings: Vec<&'static str>,
}

fn kind(value: &Value) -> &'static str {
    crate::json_kind::json_kind(value)
}

fn read(campaign: &Campaign, args: &Value) -> Result<Request, String> {
    let Value::Object(obj) = args else {
        return Err(format!(
            "map_generate: args must be an object, got {}",
            kind(args)
        ));
    };
    let parent = match obj.get("parent_area_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if campaign.map.contains(id) => Some(id.clone()),
        Some(Value::String(id)) => {
            return Err(format!(
                "map_generate: parent_area_id '{id}' is not an area"
            ));
        }
        Some(other) => {
            return Err(format!(
                "map_generate: parent_area_id must be a string or null, got {}",
                kind(other)
            ));
        }
    };
    let mut warnings = Vec::new();
    let theme = match obj.get("theme") {
        None | Some(Value::Null) => "Generated".to_string(),
        Some(Value::String(t)) if t.trim().is_empty() => {
            warnings.push("theme_defaulted");
            "Generated".to_string()
        }
        Some(Value::String(t)) => {
            crate::limits::check_chars("map_generate: theme", t.trim(), MAX_MAP_THEME_CHARS)?;
            t.trim().to_string()
        }
        Some(other) => {
            return Err(format!(
                "map_generate: theme must be a string or null, got {}",
                kind(other)
            ));
        }
    };
    let source = match obj.get("constraints") {
        None | Some(Value::Null) => obj,
        Some(Value::Object(c)) => c,
        Some(other) => {
            return Err(format!(
                "map_generate: constraints must be an object or null, got {}",
                kind(other)
            ));
        }
    };
    let size = match source.get("size") {
        None => 6,
        Some(v) => match strict_int(v) {
            Some(n @ 1..=30) => n as usize,
            _ => {
                return Err(format!(
                    "map_generate: size must be an integer from 1 to 30, got {v}"
                ));
            }
        },
    };
    let seed = match source.get("seed") {
        None | Some(Value::Null) => {
            warnings.push("seed_defaulted");
            "default".to_string()
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "map_generate: seed must be a string or null, got {}",
                kind(other)
            ));
        }
    };
    Ok(Request {
        parent,
        theme,
        size,
        seed,
        warnings,
    })
}

/// `size` fresh ids after the highest `area_<digits>` id.
fn new_ids(campaign: &Campaign, size: usize) -> Vec<String> {
    let highest = campaign
        .map
        .areas
        .keys()
        .filter_map(|id| id.strip_prefix("area_"))
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|digits| digits.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let mut next = highest + 1;
    let mut ids = Vec::with_capacity(size);
    while ids.len() < size {
        let id = format!("area_{next:03}");
        next += 1;
        if !campaign.map.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// Runs `map_generate` on `campaign`; the error is the `invalid_args` message (the map is then
/// as it was).
///
/// Only the new areas and the existing areas that get new exits change, so only they are kept
/// for the undo and checked, with the layer's group ([`CampaignMap::problems_around`]; the rest
/// of the map was valid before).
pub(super) fn map_generate(campaign: &mut Campaign, args: &Value) -> Result<Value, String> {
    let request = read(campaign, args)?;
    let areas = campaign.map.areas.len();
    if areas + request.size > MAX_CAMPAIGN_AREAS {
        return Err(format!(
            "map_generate: the map has {areas} areas and size {} would take it past the limit \
             of {MAX_CAMPAIGN_AREAS}",
            request.size
        ));
    }
    let parent = request.parent.as_deref();
    // The smallest existing area of the layer's group (areas are kept sorted by id).
    let first_sibling: Option<String> = campaign
        .map
        .areas
        .values()
        .find(|a| a.parent_area_id.as_deref() == parent)
        .map(|a| a.id.clone());
    // The existing areas that get new exits, with their lists as they were.
    let touched_id = match parent {
        Some(p) => Some(p.to_string()),
        None => first_sibling.clone(),
    };
    let touched: Option<(String, Vec<String>)> = touched_id.map(|id| {
        let list = campaign.map.areas[&id].reachable_area_ids.clone();
        (id, list)
    });
    let ids = new_ids(campaign, request.size);
    let map = &mut campaign.map;
    let mut created = 0usize;
    for (i, id) in ids.iter().enumerate() {
        let name = if i == 0 && parent.is_some() {
            format!("{} Entry", request.theme)
        } else {
            format!("{} Area {:02}", request.theme, i + 1)
        };
        map.areas.insert(
            id.clone(),
            Area::new(id.clone(), name, request.parent.clone()),
        );
    }
    // (1) The chain.
    for pair in ids.windows(2) {
        created += usize::from(map.link(&pair[0], &pair[1]));
    }
    // (2) Branches.
    let size = request.size;
    if size >= 4 {
        let target = (size / 3).max(1).min(size - 2);
        let mut rng = PyRandom::from_str_seed(&request.seed);
        let (mut branches, mut attempts) = (0, 0);
        while branches < target && attempts < 4 * size {
            attempts += 1;
            let i = rng.randrange(0, size as i64 - 2) as usize;
            let j = rng.randrange(i as i64 + 2, size as i64) as usize;
            if map.link(&ids[i], &ids[j]) {
                created += 1;
                branches += 1;
            }
        }
    }
    // (3) The anchor to the existing layer.
    match parent {
        None => {
            if let Some(first) = &first_sibling {
                created += usize::from(map.link(first, &ids[0]));
            }
        }
        Some(parent) => {
            created += usize::from(map.link(parent, &ids[0]));
            if let Some(first) = &first_sibling {
                created += usize::from(map.link(&ids[0], first));
            }
        }
    }
    // (4) A child layer: the parent and every new area, both ways.
    if let Some(parent) = parent {
        for id in &ids {
            created += usize::from(map.link(parent, id));
            created += usize::from(map.link(id, parent));
        }
    }
    let mut changed: Vec<&str> = ids.iter().map(String::as_str).collect();
    if let Some((id, _)) = &touched {
        changed.push(id);
    }
    let problems = map.problems_around(&changed, parent);
    if !problems.is_empty() {
        for id in &ids {
            map.areas.remove(id);
        }
        if let Some((id, list)) = touched
            && let Some(area) = map.areas.get_mut(&id)
        {
            area.reachable_area_ids = list;
        }
        return Err(format!(
            "map_generate: the generated map is invalid ({})",
            problems.join(", ")
        ));
    }
    Ok(json!({
        "created_area_ids": ids,
        "created_connections": created,
        "root_parent_area_id": request.parent,
        "warnings": request.warnings,
    }))
}
