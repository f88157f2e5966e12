//! The campaign's JSON shapes, borrowed from a [`Campaign`] and serialized without building a
//! JSON tree first: the file's layout ([`FileView`], what `campaign.json` holds), one connection
//! ([`ConnectionView`], also a page's), and the size of a value as compact JSON
//! ([`json_bytes`], what the bounds and the pages measure). A leaf: loading, saving, paging and
//! the bounds all use it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Actor, Area, Campaign, Goal, Milestone, Selected};

/// The size of `value` as compact JSON.
pub(super) fn json_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}

/// The file's layout, borrowed from a [`Campaign`] and serialized without building a JSON tree
/// first (a save of a thousand areas writes straight from the campaign). Its parts serialize as
/// the file holds them; only `map.connections` is derived here.
#[derive(Serialize)]
pub(super) struct FileView<'a> {
    id: &'a str,
    selected: &'a Selected,
    settings_snapshot: &'a Map<String, Value>,
    settings_revision: i64,
    allowlist: &'a [String],
    map: MapView<'a>,
    actors: &'a BTreeMap<String, Actor>,
    goal: &'a Goal,
    milestone: &'a Milestone,
    created_at: &'a str,
}

#[derive(Serialize)]
struct MapView<'a> {
    areas: &'a BTreeMap<String, Area>,
    connections: Vec<ConnectionView<'a>>,
}

/// One connection, borrowed from the area it leaves.
#[derive(Serialize)]
pub(super) struct ConnectionView<'a> {
    from_area_id: &'a str,
    to_area_id: &'a str,
}

impl<'a> ConnectionView<'a> {
    /// The connection `from` → `to`.
    pub(super) fn new(from: &'a str, to: &'a str) -> ConnectionView<'a> {
        ConnectionView {
            from_area_id: from,
            to_area_id: to,
        }
    }
}

impl<'a> FileView<'a> {
    pub(super) fn of(c: &'a Campaign) -> FileView<'a> {
        // Areas are sorted by id and their lists sorted: the connections come out sorted by
        // (from, to) as they are walked.
        let connections = c
            .map
            .areas
            .values()
            .flat_map(|a| {
                a.reachable_area_ids
                    .iter()
                    .map(|to| ConnectionView::new(&a.id, to))
            })
            .collect();
        FileView {
            id: &c.id,
            selected: &c.selected,
            settings_snapshot: &c.settings_snapshot,
            settings_revision: c.settings_revision,
            allowlist: &c.allowlist,
            map: MapView {
                areas: &c.map.areas,
                connections,
            },
            actors: &c.actors,
            goal: &c.goal,
            milestone: &c.milestone,
            created_at: &c.created_at,
        }
    }
}
