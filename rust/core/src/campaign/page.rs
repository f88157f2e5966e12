//! A campaign in pages, for replies that must fit a client's WebSocket buffer.
//!
//! [`Campaign::page`] gives the whole campaign when it fits the byte budget. Otherwise it gives
//! a page: every field of the campaign but its areas and actors, then as many of its areas (by
//! id) and after them its actors (by id) as fit, with `map.connections` holding the connections
//! out of the areas on the page. The page says it is one ([`Page::truncated`]), how many areas
//! and actors the campaign has, and where the next page starts ([`Page::next_cursor`], `None`
//! after the last). The size limits applied at load (`campaign/bounds.rs`) keep every
//! campaign small enough that a page always has room for at least one area or actor.
//!
//! A cursor is `area:<id>` or `actor:<id>`: the last area or actor a page sent. The next page
//! starts after it, whether or not that area or actor is still there.

use std::collections::BTreeMap;
use std::ops::Bound;

use serde::Serialize;
use serde_json::{Map, Value};

use super::view::{ConnectionView, FileView, json_bytes};
use super::{Actor, Area, Campaign, Goal, Milestone, Selected};

/// Where a page of a campaign starts: after this area or actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cursor {
    /// After this area (then the rest of the areas, then every actor).
    Area(String),
    /// After this actor (no areas).
    Actor(String),
}

impl Cursor {
    /// A cursor as [`Page::next_cursor`] wrote it. Errors: anything else, named (cut to 64
    /// characters).
    pub fn parse(cursor: &str) -> Result<Cursor, String> {
        if let Some(id) = cursor.strip_prefix("area:") {
            return Ok(Cursor::Area(id.to_string()));
        }
        if let Some(id) = cursor.strip_prefix("actor:") {
            return Ok(Cursor::Actor(id.to_string()));
        }
        Err(format!(
            "cursor '{}' is not a campaign cursor: pass the next_cursor of the previous page",
            crate::limits::cut_copy(cursor, 64)
        ))
    }

    fn write(&self) -> String {
        match self {
            Cursor::Area(id) => format!("area:{id}"),
            Cursor::Actor(id) => format!("actor:{id}"),
        }
    }
}

/// A campaign, whole or a page of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// The campaign as its file holds it, or, on a page, with only some of its areas and actors.
    pub campaign: Value,
    /// True when `campaign` leaves areas or actors out.
    pub truncated: bool,
    /// How many areas the campaign has.
    pub area_count: usize,
    /// How many actors the campaign has.
    pub actor_count: usize,
    /// The cursor of the next page; `None` when this page ends the campaign.
    pub next_cursor: Option<String>,
}

/// A campaign with some of its areas and actors, serialized as the file lays it out.
#[derive(Serialize)]
pub(super) struct PageView<'a> {
    id: &'a str,
    selected: &'a Selected,
    settings_snapshot: &'a Map<String, Value>,
    settings_revision: i64,
    allowlist: &'a [String],
    map: MapPage<'a>,
    actors: BTreeMap<&'a str, &'a Actor>,
    goal: &'a Goal,
    milestone: &'a Milestone,
    created_at: &'a str,
}

#[derive(Serialize)]
struct MapPage<'a> {
    areas: BTreeMap<&'a str, &'a Area>,
    connections: Vec<ConnectionView<'a>>,
}

impl<'a> PageView<'a> {
    /// The campaign without its areas and actors.
    pub(super) fn head(c: &'a Campaign) -> PageView<'a> {
        PageView {
            id: &c.id,
            selected: &c.selected,
            settings_snapshot: &c.settings_snapshot,
            settings_revision: c.settings_revision,
            allowlist: &c.allowlist,
            map: MapPage {
                areas: BTreeMap::new(),
                connections: Vec::new(),
            },
            actors: BTreeMap::new(),
            goal: &c.goal,
            milestone: &c.milestone,
            created_at: &c.created_at,
        }
    }
}

impl Campaign {
    /// The campaign whole when no cursor is given and it fits `budget` bytes of JSON; otherwise
    /// the page after `after` (the first page without it) that fits `budget`, holding at least
    /// one area or actor when any is left.
    pub fn page(&self, after: Option<&Cursor>, budget: usize) -> Page {
        let mut page = Page {
            campaign: Value::Null,
            truncated: false,
            area_count: self.map.areas.len(),
            actor_count: self.actors.len(),
            next_cursor: None,
        };
        if after.is_none() && json_bytes(&FileView::of(self)) <= budget {
            page.campaign = self.to_json();
            return page;
        }
        page.truncated = true;
        let mut view = PageView::head(self);
        let mut used = json_bytes(&view);
        let mut sent = 0usize;
        let fits = |used: &mut usize, sent: &mut usize, cost: usize| {
            if *sent > 0 && *used + cost > budget {
                return false;
            }
            *used += cost;
            *sent += 1;
            true
        };
        let areas_from = match after {
            None => Some(Bound::Unbounded),
            Some(Cursor::Area(id)) => Some(Bound::Excluded(id.as_str())),
            Some(Cursor::Actor(_)) => None,
        };
        let areas = areas_from
            .into_iter()
            .flat_map(|from| self.map.areas.range::<str, _>((from, Bound::Unbounded)));
        let mut last = None;
        for (id, area) in areas {
            let links: Vec<ConnectionView> = area
                .reachable_area_ids
                .iter()
                .map(|to| ConnectionView::new(&area.id, to))
                .collect();
            let cost = json_bytes(id) + json_bytes(area) + json_bytes(&links) + 2;
            if !fits(&mut used, &mut sent, cost) {
                page.next_cursor = last.map(|c: Cursor| c.write());
                page.campaign = serde_json::to_value(&view).unwrap_or(Value::Null);
                return page;
            }
            view.map.areas.insert(id, area);
            view.map.connections.extend(links);
            last = Some(Cursor::Area(id.clone()));
        }
        let actors_from = match after {
            Some(Cursor::Actor(id)) => Bound::Excluded(id.as_str()),
            _ => Bound::Unbounded,
        };
        let actors = self.actors.range::<str, _>((actors_from, Bound::Unbounded));
        for (id, actor) in actors {
            let cost = json_bytes(id) + json_bytes(actor) + 2;
            if !fits(&mut used, &mut sent, cost) {
                page.next_cursor = last.map(|c: Cursor| c.write());
                break;
            }
            view.actors.insert(id, actor);
            last = Some(Cursor::Actor(id.clone()));
        }
        page.campaign = serde_json::to_value(&view).unwrap_or(Value::Null);
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_anything_else_is_refused() {
        for c in [
            Cursor::Area("area_007".into()),
            Cursor::Actor("pc:1".into()),
        ] {
            assert_eq!(Cursor::parse(&c.write()), Ok(c));
        }
        let e = Cursor::parse(&format!("t{}", "x".repeat(100))).unwrap_err();
        assert!(e.contains("is not a campaign cursor"), "{e}");
        assert!(e.len() < 160, "the cursor is echoed cut: {e}");
    }

    #[test]
    fn a_small_campaign_is_whole_and_a_tight_budget_pages_it_from_any_cursor() {
        let c = Campaign::new("camp_0001", &["pc_001".into(), "pc_002".into()]);
        let whole = c.page(None, 60 * 1024);
        assert!(!whole.truncated);
        assert_eq!(whole.campaign, c.to_json());
        assert_eq!(whole.next_cursor, None);
        // One entry a page: area_001, area_002, pc_001, pc_002.
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let page = c.page(after.as_ref(), 1);
            assert!(page.truncated);
            assert_eq!((page.area_count, page.actor_count), (2, 2));
            let areas = page.campaign["map"]["areas"].as_object().unwrap();
            let actors = page.campaign["actors"].as_object().unwrap();
            seen.extend(areas.keys().chain(actors.keys()).cloned());
            assert_eq!(areas.len() + actors.len(), 1);
            match page.next_cursor {
                Some(next) => after = Some(Cursor::parse(&next).unwrap()),
                None => break,
            }
        }
        assert_eq!(seen, ["area_001", "area_002", "pc_001", "pc_002"]);
        // After the last actor: nothing left, no next page.
        let end = c.page(Some(&Cursor::Actor("pc_002".into())), 60 * 1024);
        assert!(end.campaign["actors"].as_object().unwrap().is_empty());
        assert_eq!(end.next_cursor, None);
    }
}
