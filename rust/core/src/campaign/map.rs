//! The campaign map: areas with **directed** reachability (`docs/campaigns.md`).
//!
//! An area's `reachable_area_ids` are its outbound one-hop neighbours, kept sorted; A → B says
//! nothing about B → A. `connections` is not stored here: it is derived from the reachable lists
//! whenever the map is written ([`CampaignMap::connections`]). A map is valid when no reachable
//! entry is a duplicate, a self-loop or a missing area, and each group of areas sharing a
//! `parent_area_id` (with more than one member) is connected when its inner edges are taken as
//! undirected; [`CampaignMap::problems`] lists every problem in the reference's words.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

/// One area.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Area {
    /// Its id (`area_001`), the key it is stored under.
    pub id: String,
    /// Its name (`Starting Area`).
    pub name: String,
    /// The area it lies in (a layer's parent), or `None` for a root area.
    pub parent_area_id: Option<String>,
    /// The areas one step away, outbound, sorted.
    pub reachable_area_ids: Vec<String>,
}

impl Area {
    /// An area with no exits.
    pub fn new(id: impl Into<String>, name: impl Into<String>, parent: Option<String>) -> Area {
        Area {
            id: id.into(),
            name: name.into(),
            parent_area_id: parent,
            reachable_area_ids: Vec::new(),
        }
    }
}

/// One derived connection `{from_area_id, to_area_id}`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Connection {
    /// Where it starts.
    pub from_area_id: String,
    /// Where it leads.
    pub to_area_id: String,
}

/// The areas by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CampaignMap {
    /// Every area, by id.
    pub areas: BTreeMap<String, Area>,
}

impl CampaignMap {
    /// The starter map: `area_001` "Starting Area" reaching `area_002` "Side Room".
    pub fn starter() -> CampaignMap {
        let mut start = Area::new("area_001", "Starting Area", None);
        start.reachable_area_ids.push("area_002".into());
        let side = Area::new("area_002", "Side Room", None);
        CampaignMap {
            areas: [(start.id.clone(), start), (side.id.clone(), side)].into(),
        }
    }

    /// Whether `id` is an area.
    pub fn contains(&self, id: &str) -> bool {
        self.areas.contains_key(id)
    }

    /// Sorts every reachable list (duplicates stay, for [`CampaignMap::problems`] to report).
    pub fn sort_reachable(&mut self) {
        for area in self.areas.values_mut() {
            area.reachable_area_ids.sort();
        }
    }

    /// Adds `from → to` unless it is there; true when it was added.
    pub fn link(&mut self, from: &str, to: &str) -> bool {
        let Some(area) = self.areas.get_mut(from) else {
            return false;
        };
        match area
            .reachable_area_ids
            .binary_search_by(|id| id.as_str().cmp(to))
        {
            Ok(_) => false,
            Err(at) => {
                area.reachable_area_ids.insert(at, to.to_string());
                true
            }
        }
    }

    /// Reachable entries over the whole map.
    pub fn edge_count(&self) -> usize {
        self.areas
            .values()
            .map(|a| a.reachable_area_ids.len())
            .sum()
    }

    /// One connection per (area, target), sorted by (from, to).
    pub fn connections(&self) -> Vec<Connection> {
        let mut out: Vec<Connection> = self
            .areas
            .values()
            .flat_map(|a| {
                a.reachable_area_ids.iter().map(|to| Connection {
                    from_area_id: a.id.clone(),
                    to_area_id: to.clone(),
                })
            })
            .collect();
        out.sort();
        out
    }

    /// Every problem that makes the map invalid, in area order then parent order:
    /// `area:<id>:reachable_duplicate`, `area:<id>:reachable_self_loop`,
    /// `area:<id>:reachable_missing_target`, `parent:<id or None>:disconnected`. Empty: valid.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for area in self.areas.values() {
            self.list_problems(area, &mut problems);
        }
        let mut groups: BTreeMap<Option<&str>, Vec<&str>> = BTreeMap::new();
        for area in self.areas.values() {
            groups
                .entry(area.parent_area_id.as_deref())
                .or_default()
                .push(&area.id);
        }
        for (parent, members) in groups {
            self.group_problems(parent, &members, &mut problems);
        }
        problems
    }

    /// The problems [`CampaignMap::problems`] would find in the lists of `areas` and in the
    /// group of `parent`, for a change that touched only those (the rest of the map being
    /// valid): a cheaper check of the same rules.
    pub fn problems_around(&self, areas: &[&str], parent: Option<&str>) -> Vec<String> {
        let mut problems = Vec::new();
        let mut ids: Vec<&str> = areas.to_vec();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            if let Some(area) = self.areas.get(id) {
                self.list_problems(area, &mut problems);
            }
        }
        let members: Vec<&str> = self
            .areas
            .values()
            .filter(|a| a.parent_area_id.as_deref() == parent)
            .map(|a| a.id.as_str())
            .collect();
        self.group_problems(parent, &members, &mut problems);
        problems
    }

    /// An area's reachable-list problems: a duplicate, a self-loop, a missing target.
    fn list_problems(&self, area: &Area, problems: &mut Vec<String>) {
        let list = &area.reachable_area_ids;
        let duplicate = if list.windows(2).all(|w| w[0] < w[1]) {
            false
        } else {
            let mut sorted: Vec<&String> = list.iter().collect();
            sorted.sort_unstable();
            sorted.windows(2).any(|w| w[0] == w[1])
        };
        let self_loop = list.contains(&area.id);
        let missing = list.iter().any(|t| !self.areas.contains_key(t));
        for (found, what) in [
            (duplicate, "reachable_duplicate"),
            (self_loop, "reachable_self_loop"),
            (missing, "reachable_missing_target"),
        ] {
            if found {
                problems.push(format!("area:{}:{what}", area.id));
            }
        }
    }

    /// `parent:<id or None>:disconnected` when `members` (the areas of `parent`) are more than
    /// one and not one component over their inner edges taken as undirected.
    fn group_problems(&self, parent: Option<&str>, members: &[&str], problems: &mut Vec<String>) {
        if members.len() > 1 && !self.group_connected(members) {
            problems.push(format!("parent:{}:disconnected", parent.unwrap_or("None")));
        }
    }

    /// Whether `members` form one component over their inner edges taken as undirected
    /// (union-find over their indices).
    fn group_connected(&self, members: &[&str]) -> bool {
        let index: HashMap<&str, usize> =
            members.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let mut root: Vec<usize> = (0..members.len()).collect();
        fn find(root: &mut [usize], mut i: usize) -> usize {
            while root[i] != i {
                root[i] = root[root[i]];
                i = root[i];
            }
            i
        }
        let mut components = members.len();
        for (i, id) in members.iter().enumerate() {
            for target in &self.areas[*id].reachable_area_ids {
                if let Some(&j) = index.get(target.as_str()) {
                    let (a, b) = (find(&mut root, i), find(&mut root, j));
                    if a != b {
                        root[a] = b;
                        components -= 1;
                    }
                }
            }
        }
        components == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(areas: &[(&str, Option<&str>, &[&str])]) -> CampaignMap {
        let mut m = CampaignMap::default();
        for (id, parent, reach) in areas {
            let mut a = Area::new(*id, *id, parent.map(str::to_string));
            a.reachable_area_ids = reach.iter().map(|s| s.to_string()).collect();
            m.areas.insert(a.id.clone(), a);
        }
        m
    }

    #[test]
    fn the_starter_map_is_valid_and_directed() {
        let m = CampaignMap::starter();
        assert!(m.problems().is_empty());
        let c = m.connections();
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].from_area_id.as_str(), c[0].to_area_id.as_str()),
            ("area_001", "area_002")
        );
    }

    #[test]
    fn every_problem_is_listed() {
        let m = map(&[
            ("a", None, &["a", "b", "b", "zz"]),
            ("b", None, &[]),
            ("c", Some("p"), &[]),
            ("d", Some("p"), &[]),
        ]);
        assert_eq!(
            m.problems(),
            [
                "area:a:reachable_duplicate",
                "area:a:reachable_self_loop",
                "area:a:reachable_missing_target",
                "parent:p:disconnected",
            ]
        );
        let m = map(&[("x", None, &[]), ("y", None, &[])]);
        assert_eq!(m.problems(), ["parent:None:disconnected"]);
    }

    #[test]
    fn groups_are_connected_through_edges_either_way() {
        // b → a and b → c connect {a, b, c} although nothing leaves a or c.
        let m = map(&[("a", None, &[]), ("b", None, &["a", "c"]), ("c", None, &[])]);
        assert!(m.problems().is_empty());
        // Edges leaving the group do not connect it.
        let m = map(&[
            ("p", None, &["c", "d"]),
            ("c", Some("p"), &["p"]),
            ("d", Some("p"), &["p"]),
        ]);
        assert_eq!(m.problems(), ["parent:p:disconnected"]);
    }

    #[test]
    fn link_keeps_lists_sorted_and_unique() {
        let mut m = map(&[("a", None, &[]), ("b", None, &[]), ("c", None, &[])]);
        assert!(m.link("a", "c"));
        assert!(m.link("a", "b"));
        assert!(!m.link("a", "b"));
        assert_eq!(m.areas["a"].reachable_area_ids, ["b", "c"]);
        assert_eq!(m.edge_count(), 2);
    }
}
