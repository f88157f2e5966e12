//! Where running agents are: a uniform grid over the world so "who is nearby" costs the agents in
//! a few cells, not a scan of every agent (10,000 agents deciding every few seconds).

use std::collections::HashMap;

use parking_lot::RwLock;

use crate::geometry::Position;

/// One agent's entry in the index.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Placed {
    pub name: String,
    pub role: String,
    pub position: Position,
}

type Cell = (i64, i64);

#[derive(Default)]
struct Grid {
    agents: HashMap<String, (Placed, Cell)>,
    cells: HashMap<Cell, Vec<String>>,
}

/// The positions of running agents, indexed by grid cell.
pub(crate) struct World {
    cell_size: f64,
    grid: RwLock<Grid>,
}

impl World {
    /// An empty world whose cells are `cell_size` wide (the default hearing radius is a good size).
    pub fn new(cell_size: f64) -> Self {
        let cell_size = if cell_size.is_finite() && cell_size >= 1.0 {
            cell_size
        } else {
            1.0
        };
        World {
            cell_size,
            grid: RwLock::new(Grid::default()),
        }
    }

    fn cell(&self, p: Position) -> Cell {
        (
            (p.x / self.cell_size).floor() as i64,
            (p.y / self.cell_size).floor() as i64,
        )
    }

    /// Adds or replaces an agent.
    pub fn insert(&self, agent_id: &str, placed: Placed) {
        let cell = self.cell(placed.position);
        let mut g = self.grid.write();
        if let Some((_, old)) = g.agents.remove(agent_id) {
            remove_from_cell(&mut g.cells, old, agent_id);
        }
        g.cells.entry(cell).or_default().push(agent_id.to_string());
        g.agents.insert(agent_id.to_string(), (placed, cell));
    }

    /// Moves an agent (no-op if it is not in the index).
    pub fn update_position(&self, agent_id: &str, position: Position) {
        self.update_positions([(agent_id, position)]);
    }

    /// Moves several agents under one lock (those not in the index are skipped).
    pub fn update_positions<'a>(&self, moves: impl IntoIterator<Item = (&'a str, Position)>) {
        let mut guard = self.grid.write();
        let g = &mut *guard;
        for (agent_id, position) in moves {
            let cell = self.cell(position);
            let Some((placed, old)) = g.agents.get_mut(agent_id) else {
                continue;
            };
            placed.position = position;
            let old = std::mem::replace(old, cell);
            if old != cell {
                remove_from_cell(&mut g.cells, old, agent_id);
                g.cells.entry(cell).or_default().push(agent_id.to_string());
            }
        }
    }

    /// Removes an agent.
    pub fn remove(&self, agent_id: &str) {
        let mut g = self.grid.write();
        if let Some((_, cell)) = g.agents.remove(agent_id) {
            remove_from_cell(&mut g.cells, cell, agent_id);
        }
    }

    /// Whether the agent is in the index.
    #[cfg(test)]
    pub fn contains(&self, agent_id: &str) -> bool {
        self.grid.read().agents.contains_key(agent_id)
    }

    /// Agents other than `agent_id` within `radius` of `center`, nearest first (ties by id), with
    /// their distance; at most `limit`.
    pub fn nearby(
        &self,
        agent_id: &str,
        center: Position,
        radius: f64,
        limit: usize,
    ) -> Vec<(String, Placed, f64)> {
        if !(radius.is_finite() && radius >= 0.0 && center.is_finite()) {
            return Vec::new();
        }
        let g = self.grid.read();
        let span = (radius / self.cell_size).ceil() as i64;
        let (cx, cy) = self.cell(center);
        let mut found = Vec::new();
        for x in cx - span..=cx + span {
            for y in cy - span..=cy + span {
                let Some(ids) = g.cells.get(&(x, y)) else {
                    continue;
                };
                for id in ids {
                    if id == agent_id {
                        continue;
                    }
                    let (placed, _) = &g.agents[id];
                    let d = placed.position.distance(center);
                    if d <= radius {
                        found.push((id.clone(), placed.clone(), d));
                    }
                }
            }
        }
        found.sort_by(|a, b| a.2.total_cmp(&b.2).then_with(|| a.0.cmp(&b.0)));
        found.truncate(limit);
        found
    }
}

fn remove_from_cell(cells: &mut HashMap<Cell, Vec<String>>, cell: Cell, agent_id: &str) {
    if let Some(ids) = cells.get_mut(&cell) {
        ids.retain(|id| id != agent_id);
        if ids.is_empty() {
            cells.remove(&cell);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(x: f64, y: f64) -> Placed {
        Placed {
            name: "n".into(),
            role: "r".into(),
            position: Position::new(x, y),
        }
    }

    #[test]
    fn nearby_matches_a_brute_force_scan() {
        let world = World::new(10.0);
        let mut all = Vec::new();
        let mut v: u64 = 7;
        for i in 0..300 {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = (v >> 33) as f64 % 200.0 - 50.0;
            let y = (v >> 13) as f64 % 150.0;
            let id = format!("agent_{i:03}");
            world.insert(&id, placed(x, y));
            all.push((id, Position::new(x, y)));
        }
        // move some
        for (id, p) in all.iter_mut().step_by(7) {
            *p = Position::new(p.x + 13.5, p.y - 21.0);
            world.update_position(id, *p);
        }
        for (id, _) in all.iter().step_by(11) {
            world.remove(id);
        }
        let alive: Vec<_> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 11 != 0)
            .map(|(_, a)| a.clone())
            .collect();
        for (center_id, center) in alive.iter().step_by(5) {
            for radius in [0.0, 5.0, 15.0, 37.5] {
                let got: Vec<String> = world
                    .nearby(center_id, *center, radius, usize::MAX)
                    .into_iter()
                    .map(|(id, _, _)| id)
                    .collect();
                let mut want: Vec<(String, f64)> = alive
                    .iter()
                    .filter(|(id, p)| id != center_id && p.distance(*center) <= radius)
                    .map(|(id, p)| (id.clone(), p.distance(*center)))
                    .collect();
                want.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
                let want: Vec<String> = want.into_iter().map(|w| w.0).collect();
                assert_eq!(got, want, "center {center_id} radius {radius}");
            }
        }
    }

    #[test]
    fn limit_and_bad_input() {
        let world = World::new(5.0);
        world.insert("a", placed(0.0, 0.0));
        world.insert("b", placed(1.0, 0.0));
        world.insert("c", placed(2.0, 0.0));
        let near = world.nearby("a", Position::new(0.0, 0.0), 10.0, 1);
        assert_eq!(near.len(), 1);
        assert_eq!(near[0].0, "b");
        assert!(
            world
                .nearby("a", Position::new(0.0, 0.0), f64::NAN, 5)
                .is_empty()
        );
        assert!(
            world
                .nearby("a", Position::new(f64::INFINITY, 0.0), 5.0, 5)
                .is_empty()
        );
        world.update_position("zzz", Position::new(1.0, 1.0));
        assert!(!world.contains("zzz"));
    }
}
