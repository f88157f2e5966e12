//! The sea battle AI. It sees only a [`FogView`]: the shooter's fog board plus the sunk
//! announcements, never an unhit ship cell.

use rand::RngExt;

use super::{Board, CELLS, Cell, Coord, FLEET, SIZE, neighbours8, placements};
use crate::Level;
use crate::seed::GameRng;

/// What one cell of the target board is known to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Known {
    /// Not shot at.
    Unknown,
    /// A shot into water.
    Miss,
    /// A hit on a ship that still floats.
    Hit,
    /// A hit on a ship that was announced sunk.
    Sunk,
}

/// What a shooter legitimately knows of the board it fires at: its fog board (which cells were
/// shot, hit or missed) and what the "sunk" announcements told it (which hits belong to sunk
/// ships, hence the lengths still afloat). Built from a full board, it copies nothing else: an
/// unhit ship cell looks exactly like unshot water.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FogView {
    cells: [Known; CELLS],
    /// Lengths of the ships still afloat (longest first).
    remaining: Vec<usize>,
}

impl FogView {
    /// The view of a shooter firing at `target`.
    pub fn from_target(target: &Board) -> FogView {
        let mut cells = [Known::Unknown; CELLS];
        for (known, cell) in cells.iter_mut().zip(target.cells()) {
            *known = match cell {
                Cell::Empty | Cell::Ship => Known::Unknown,
                Cell::Miss => Known::Miss,
                Cell::Hit => Known::Hit,
            };
        }
        let mut remaining: Vec<usize> = FLEET.iter().map(|&n| usize::from(n)).collect();
        for ship in target.ships() {
            if ship.iter().all(|&i| target.cells()[i] == Cell::Hit) {
                for &i in &ship {
                    cells[i] = Known::Sunk;
                }
                if let Some(pos) = remaining.iter().position(|&n| n == ship.len()) {
                    remaining.remove(pos);
                }
            }
        }
        FogView { cells, remaining }
    }

    /// What is known of cell `c`.
    pub fn get(&self, c: Coord) -> Known {
        self.cells[c.index()]
    }

    /// Lengths of the ships still afloat, longest first.
    pub fn remaining(&self) -> &[usize] {
        &self.remaining
    }

    fn unknown_cells(&self) -> Vec<usize> {
        (0..CELLS)
            .filter(|&i| self.cells[i] == Known::Unknown)
            .collect()
    }

    fn open_hits(&self) -> Vec<usize> {
        (0..CELLS)
            .filter(|&i| self.cells[i] == Known::Hit)
            .collect()
    }

    /// For every cell, the number of ways the ships still afloat can lie over it, given the
    /// misses, the sunk ships (whose cells and neighbours hold no other ship) and the open hits
    /// (diagonal neighbours of a hit hold no ship; a ship next to a hit contains it). When open
    /// hits exist (target mode) only placements through at least one of them count, weighted by
    /// the number of hits they explain. Shot cells always score 0.
    pub fn density(&self) -> [u32; CELLS] {
        let mut water = [false; CELLS];
        for i in 0..CELLS {
            match self.cells[i] {
                Known::Miss => water[i] = true,
                Known::Sunk => {
                    water[i] = true;
                    for n in neighbours8(i) {
                        water[n] = true;
                    }
                }
                Known::Hit => {
                    let (r, c) = (i / SIZE, i % SIZE);
                    for n in neighbours8(i) {
                        if n / SIZE != r && n % SIZE != c {
                            water[n] = true;
                        }
                    }
                }
                Known::Unknown => {}
            }
        }
        let open_hits = self.open_hits();
        let target_mode = !open_hits.is_empty();
        let mut density = [0u32; CELLS];
        let mut lengths = self.remaining.clone();
        lengths.dedup();
        for len in lengths {
            let copies = self.remaining.iter().filter(|&&n| n == len).count() as u32;
            for cells in placements(len) {
                if cells
                    .iter()
                    .any(|&i| water[i] && self.cells[i] != Known::Hit)
                {
                    continue;
                }
                let covered = cells
                    .iter()
                    .filter(|&&i| self.cells[i] == Known::Hit)
                    .count() as u32;
                if target_mode && covered == 0 {
                    continue;
                }
                // A hit touching the placement from outside would touch this ship.
                let touches_hit = cells.iter().any(|&i| {
                    neighbours8(i).any(|n| self.cells[n] == Known::Hit && !cells.contains(&n))
                });
                if touches_hit {
                    continue;
                }
                let weight = copies * if target_mode { 1 + 4 * covered } else { 1 };
                for &i in &cells {
                    if self.cells[i] == Known::Unknown {
                        density[i] += weight;
                    }
                }
            }
        }
        density
    }

    /// Unshot cells best first: highest density, then the parity lattice (cells with an even
    /// column + row sum, where every ship of length ≥ 2 has a cell), then row-major order.
    pub fn ranked(&self) -> Vec<Coord> {
        let density = self.density();
        let mut cells = self.unknown_cells();
        cells.sort_by(|&a, &b| {
            density[b]
                .cmp(&density[a])
                .then(parity(a).cmp(&parity(b)))
                .then(a.cmp(&b))
        });
        cells.into_iter().filter_map(Coord::from_index).collect()
    }

    /// A shot for this view, or `None` when every cell was shot.
    ///
    /// - `Random`: a uniformly random unshot cell.
    /// - `Easy`: random, but after a hit it fires at random unshot cells orthogonally next to the
    ///   open hits (target mode) until the ship sinks.
    /// - `Hard`: the highest probability density ([`FogView::density`]), preferring the parity
    ///   lattice, ties broken at random.
    pub fn choose(&self, level: Level, rng: &mut GameRng) -> Option<Coord> {
        let unknown = self.unknown_cells();
        if unknown.is_empty() {
            return None;
        }
        let pick = |cells: &[usize], rng: &mut GameRng| cells[rng.random_range(0..cells.len())];
        let index = match level {
            Level::Random => pick(&unknown, rng),
            Level::Easy => {
                let mut around: Vec<usize> = self
                    .open_hits()
                    .into_iter()
                    .flat_map(orthogonal)
                    .filter(|&n| self.cells[n] == Known::Unknown)
                    .collect();
                around.sort_unstable();
                around.dedup();
                if around.is_empty() {
                    pick(&unknown, rng)
                } else {
                    pick(&around, rng)
                }
            }
            Level::Hard => {
                let density = self.density();
                let key = |i: usize| (density[i], parity(i) == 0);
                let best = unknown.iter().map(|&i| key(i)).max()?;
                let ties: Vec<usize> = unknown.into_iter().filter(|&i| key(i) == best).collect();
                pick(&ties, rng)
            }
        };
        Coord::from_index(index)
    }
}

/// 0 on the lattice of cells with an even row + column sum, else 1.
fn parity(index: usize) -> usize {
    (index / SIZE + index % SIZE) % 2
}

/// The up to four orthogonal neighbours of a cell.
fn orthogonal(index: usize) -> impl Iterator<Item = usize> {
    let (row, col) = (index / SIZE, index % SIZE);
    [
        (row > 0).then(|| index - SIZE),
        (row + 1 < SIZE).then(|| index + SIZE),
        (col > 0).then(|| index - 1),
        (col + 1 < SIZE).then(|| index + 1),
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;

    /// Shots `level` needs to sink a whole random fleet (alone on the board).
    fn shots_to_sink(level: Level, seed: u64) -> usize {
        let mut rng = Seed::Int(seed).rng();
        let mut board = Board::random(&mut rng);
        let mut shots = 0;
        while !board.all_sunk() {
            let view = FogView::from_target(&board);
            let c = view
                .choose(level, &mut rng)
                .expect("cells remain while ships float");
            let cell = &mut board.cells[c.index()];
            assert!(!cell.is_targeted(), "{level} fired twice at {c}");
            *cell = if *cell == Cell::Ship {
                Cell::Hit
            } else {
                Cell::Miss
            };
            shots += 1;
            assert!(shots <= CELLS);
        }
        shots
    }

    #[test]
    fn hard_sinks_a_fleet_in_far_fewer_shots_than_random() {
        let games = 12;
        let avg = |level| {
            (0..games).map(|s| shots_to_sink(level, s)).sum::<usize>() as f64 / games as f64
        };
        let (random, easy, hard) = (avg(Level::Random), avg(Level::Easy), avg(Level::Hard));
        eprintln!("average shots to sink: random {random}, easy {easy}, hard {hard}");
        assert!(hard + 25.0 < random, "hard {hard} vs random {random}");
        assert!(hard < easy, "hard {hard} vs easy {easy}");
        assert!(easy < random, "easy {easy} vs random {random}");
        assert!(hard < 50.0, "hard averaged {hard} shots");
    }

    #[test]
    fn the_view_hides_unhit_ships() {
        let mut rng = Seed::Int(3).rng();
        let board = Board::random(&mut rng);
        assert_eq!(
            FogView::from_target(&board),
            FogView::from_target(&Board::empty())
        );
        let view = FogView::from_target(&board);
        assert_eq!(view.remaining(), &[5, 4, 3, 3, 2]);
    }

    #[test]
    fn target_mode_follows_the_hit_line_and_avoids_sunk_neighbours() {
        // A sunk 2-ship at A1-B1; an open hit pair at E5-F5 (horizontal).
        let mut board = Board::empty();
        for i in [0, 1] {
            board.cells[i] = Cell::Hit;
        }
        for i in [44, 45] {
            board.cells[i] = Cell::Hit;
        }
        board.cells[46] = Cell::Ship;
        let view = FogView::from_target(&board);
        assert_eq!(view.get(Coord::from_index(0).unwrap()), Known::Sunk);
        assert_eq!(view.remaining(), &[5, 4, 3, 3]);
        let density = view.density();
        // Only D5 and G5 (extending the line) and beyond along row 5 can hold the ship.
        let ranked = view.ranked();
        let top: Vec<String> = ranked[..2].iter().map(Coord::to_string).collect();
        assert!(
            top.contains(&"D5".to_string()) && top.contains(&"G5".to_string()),
            "{top:?}"
        );
        // Cells above or below the hits cannot be ships (the line is horizontal).
        assert_eq!(density[34], 0);
        assert_eq!(density[54], 0);
        // Cells next to the sunk ship are known water.
        assert_eq!(density[2], 0);
        assert_eq!(density[10], 0);
        assert_eq!(density[12], 0);
        let mut rng = Seed::Int(1).rng();
        let shot = view.choose(Level::Hard, &mut rng).unwrap().to_string();
        assert!(shot == "D5" || shot == "G5", "{shot}");
        for _ in 0..20 {
            let shot = view.choose(Level::Easy, &mut rng).unwrap().to_string();
            assert!(
                ["D5", "G5", "E4", "F4", "E6", "F6"].contains(&shot.as_str()),
                "{shot}"
            );
        }
    }
}
