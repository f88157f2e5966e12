//! The built-in checkers opponent: evaluation, alpha-beta search and the quick move ordering.
//!
//! - [`Level::Random`]: a uniformly random legal move (seeded).
//! - [`Level::Easy`]: a two-ply search with seeded noise of ±40 centi-men on every root move.
//! - [`Level::Hard`]: iterative-deepening negamax alpha-beta within [`SearchLimits`] (default
//!   100 ms), with a transposition table, capture extension at the horizon (a position with a
//!   pending capture is never evaluated statically), forced-move extension, and move ordering by
//!   transposition-table move, captures (most pieces first), crowning moves and a history table.
//!
//! The evaluation (side to move's point of view, in hundredths of a man) counts material (man
//! 100, king 150), advancement of men, men guarding the back rank while the opponent still has
//! men, central squares, king activity, mobility, and a bonus for trading down when ahead.

use std::time::{Duration, Instant};

use rand::RngExt;
use rand::seq::IndexedRandom;

use super::{Color, Move, Position, RANKS, VALID, bit_index, bits};
use crate::seed::GameRng;
use crate::{Level, SearchLimits};

const INF: i32 = 1_000_000;
const WIN: i32 = 100_000;
const MAX_PLY: i32 = 64;
const TT_BITS: u32 = 16;

const MAN: i32 = 100;
const KING: i32 = 150;
/// Bonus for a man by how many ranks it has advanced (index 0 = still on its back rank).
const ADVANCE: [i32; 8] = [0, 2, 4, 7, 11, 16, 22, 0];
const BACK_GUARD: i32 = 8;
const CENTER_MAN: i32 = 4;
const KING_CENTRAL: i32 = 8;
const MOBILITY: i32 = 2;

/// Central squares c3, e3, d4, f4, c5, e5, d6, f6.
const CENTER: u64 = (1 << bit_index(2, 2))
    | (1 << bit_index(4, 2))
    | (1 << bit_index(3, 3))
    | (1 << bit_index(5, 3))
    | (1 << bit_index(2, 4))
    | (1 << bit_index(4, 4))
    | (1 << bit_index(3, 5))
    | (1 << bit_index(5, 5));

/// Squares on the rim (files a and h, ranks 1 and 8).
const EDGE: u64 = {
    let mut mask = RANKS[0] | RANKS[7];
    let mut rank = 0u8;
    while rank < 8 {
        if rank % 2 == 0 {
            mask |= 1 << bit_index(0, rank);
        } else {
            mask |= 1 << bit_index(7, rank);
        }
        rank += 1;
    }
    mask
};

/// Zobrist keys: `[white man, white king, black man, black king][bit]` and the side key.
const ZOBRIST: [[u64; 64]; 4] = {
    let mut table = [[0u64; 64]; 4];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kind = 0;
    while kind < 4 {
        let mut sq = 0;
        while sq < 64 {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            table[kind][sq] = z ^ (z >> 31);
            sq += 1;
        }
        kind += 1;
    }
    table
};
const SIDE_KEY: u64 = 0x2545_f491_4f6c_dd1d;

/// The outcome of a [`Position::search`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchResult {
    /// The best move found.
    pub best: Move,
    /// Its score for the side to move (hundredths of a man; ±100 000 minus plies for a win).
    pub score: i32,
    /// The last fully searched depth (0 when the move was forced).
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy)]
struct TtEntry {
    key: u64,
    score: i32,
    depth: i16,
    best: u8,
    bound: Bound,
}

const EMPTY_ENTRY: TtEntry = TtEntry {
    key: 0,
    score: 0,
    depth: -1,
    best: u8::MAX,
    bound: Bound::Exact,
};

struct Searcher {
    start: Instant,
    budget: Duration,
    /// False while the first iteration runs, so there is always a move.
    may_stop: bool,
    stopped: bool,
    nodes: u64,
    tt: Vec<TtEntry>,
    history: Box<[[i32; 64]; 64]>,
}

impl Searcher {
    fn new(budget: Duration) -> Searcher {
        Searcher {
            start: Instant::now(),
            budget,
            may_stop: false,
            stopped: false,
            nodes: 0,
            tt: vec![EMPTY_ENTRY; 1 << TT_BITS],
            history: Box::new([[0; 64]; 64]),
        }
    }

    fn out_of_time(&self) -> bool {
        self.start.elapsed() >= self.budget
    }

    fn negamax(&mut self, pos: &Position, depth: i32, mut alpha: i32, beta: i32, ply: i32) -> i32 {
        self.nodes += 1;
        if self.may_stop && self.nodes & 1023 == 0 && self.out_of_time() {
            self.stopped = true;
        }
        if self.stopped {
            return 0;
        }
        let mut moves = Vec::with_capacity(16);
        pos.generate(&mut moves);
        if moves.is_empty() {
            return -WIN + ply;
        }
        if ply >= MAX_PLY {
            return pos.evaluate();
        }
        let capture = moves[0].is_capture();
        if depth <= 0 && !capture {
            return pos.evaluate();
        }
        let depth = depth.max(0);

        let key = pos.hash();
        let slot = (key as usize) & ((1 << TT_BITS) - 1);
        let entry = self.tt[slot];
        let mut tt_best = u8::MAX;
        if entry.key == key {
            tt_best = entry.best;
            if i32::from(entry.depth) >= depth {
                let score = from_tt(entry.score, ply);
                match entry.bound {
                    Bound::Exact => return score,
                    Bound::Lower if score >= beta => return score,
                    Bound::Upper if score <= alpha => return score,
                    _ => {}
                }
            }
        }

        let mut order: Vec<(i32, usize)> = moves
            .iter()
            .enumerate()
            .map(|(i, mv)| (self.order_score(pos, mv, i == usize::from(tt_best)), i))
            .collect();
        order.sort_by(|a, b| b.0.cmp(&a.0));

        // A forced move costs no depth.
        let child_depth = if moves.len() == 1 { depth } else { depth - 1 };
        let alpha_orig = alpha;
        let mut best = -INF;
        let mut best_idx = 0usize;
        for &(_, i) in &order {
            let mv = &moves[i];
            let mut child = *pos;
            child.make(mv);
            let score = -self.negamax(&child, child_depth, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                best_idx = i;
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if !mv.is_capture() {
                    let h = &mut self.history[usize::from(mv.from_bit())][usize::from(mv.to_bit())];
                    *h = (*h + depth * depth).min(1 << 20);
                }
                break;
            }
        }
        let bound = if best <= alpha_orig {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        if entry.key != key || i32::from(entry.depth) <= depth {
            self.tt[slot] = TtEntry {
                key,
                score: to_tt(best, ply),
                depth: depth as i16,
                best: best_idx as u8,
                bound,
            };
        }
        best
    }

    fn order_score(&self, pos: &Position, mv: &Move, tt_move: bool) -> i32 {
        if tt_move {
            return 1 << 28;
        }
        let mut score = 0;
        if mv.is_capture() {
            score += (1 << 24) + (mv.capture_count() as i32) * (1 << 20);
        }
        let from = 1u64 << mv.from_bit();
        let to = 1u64 << mv.to_bit();
        if pos.kings & from == 0 && to & pos.turn.crown_mask() != 0 {
            score += 1 << 22;
        }
        score + self.history[usize::from(mv.from_bit())][usize::from(mv.to_bit())]
    }
}

fn to_tt(score: i32, ply: i32) -> i32 {
    if score > WIN - 1000 {
        score + ply
    } else if score < -WIN + 1000 {
        score - ply
    } else {
        score
    }
}

fn from_tt(score: i32, ply: i32) -> i32 {
    if score > WIN - 1000 {
        score - ply
    } else if score < -WIN + 1000 {
        score + ply
    } else {
        score
    }
}

/// Sum of `table[rank]` over the men in `men`, ranks counted from `color`'s back rank.
fn advancement(men: u64, color: Color) -> i32 {
    (0..8)
        .map(|r| {
            let rank = match color {
                Color::White => r,
                Color::Black => 7 - r,
            };
            (men & RANKS[rank]).count_ones() as i32 * ADVANCE[r]
        })
        .sum()
}

/// Simple-move targets (ignoring captures) for pieces of `color`.
fn mobility(pos: &Position, color: Color) -> i32 {
    let own = pos.side(color);
    let kings = own & pos.kings;
    let empty = pos.empty();
    let (up, down) = match color {
        Color::White => (own, kings),
        Color::Black => (kings, own),
    };
    (((up << 4) & empty).count_ones()
        + ((up << 5) & empty).count_ones()
        + ((down >> 4) & empty).count_ones()
        + ((down >> 5) & empty).count_ones()) as i32
}

impl Position {
    /// The static evaluation for the side to move, in hundredths of a man (positive = better).
    pub fn evaluate(&self) -> i32 {
        let white = self.white_score();
        match self.turn {
            Color::White => white,
            Color::Black => -white,
        }
    }

    /// The static evaluation from white's point of view.
    fn white_score(&self) -> i32 {
        let wm = self.white & !self.kings;
        let wk = self.white & self.kings;
        let bm = self.black & !self.kings;
        let bk = self.black & self.kings;
        let count = |m: u64| m.count_ones() as i32;

        let white_mat = MAN * count(wm) + KING * count(wk);
        let black_mat = MAN * count(bm) + KING * count(bk);
        let mut score = white_mat - black_mat;

        score += advancement(wm, Color::White) - advancement(bm, Color::Black);
        if bm != 0 {
            score += BACK_GUARD * count(wm & RANKS[0]);
        }
        if wm != 0 {
            score -= BACK_GUARD * count(bm & RANKS[7]);
        }
        score += CENTER_MAN * (count(wm & CENTER) - count(bm & CENTER));
        score += KING_CENTRAL * (count(wk & !EDGE & VALID) - count(bk & !EDGE & VALID));
        score += MOBILITY * (mobility(self, Color::White) - mobility(self, Color::Black));

        // Trade down when ahead: the same lead is worth more with fewer pieces on the board.
        let total = count(self.white | self.black);
        let lead = white_mat - black_mat;
        if lead != 0 {
            score += lead.signum() * (24 - total) * 4;
        }
        score
    }

    /// A Zobrist hash of the position.
    fn hash(&self) -> u64 {
        let mut h = match self.turn {
            Color::White => 0,
            Color::Black => SIDE_KEY,
        };
        let sets = [
            self.white & !self.kings,
            self.white & self.kings,
            self.black & !self.kings,
            self.black & self.kings,
        ];
        for (kind, set) in sets.into_iter().enumerate() {
            for b in bits(set) {
                h ^= ZOBRIST[kind][usize::from(b)];
            }
        }
        h
    }

    /// The legal moves, best first for the side to move by a quick (two-ply plus captures)
    /// search; ties keep notation order. Empty when the game is over.
    pub fn ranked_moves(&self) -> Vec<Move> {
        let moves = self.legal_moves();
        if moves.len() <= 1 {
            return moves;
        }
        let mut searcher = Searcher::new(Duration::MAX);
        let mut scored: Vec<(i32, Move)> = moves
            .into_iter()
            .map(|mv| {
                let mut child = *self;
                child.make(&mv);
                (-searcher.negamax(&child, 2, -INF, INF, 1), mv)
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0));
        scored.into_iter().map(|(_, mv)| mv).collect()
    }

    /// Iterative-deepening alpha-beta within `limits`. `None` when the game is over.
    ///
    /// The first iteration always completes, so a move is returned even with a tiny budget.
    pub fn search(&self, limits: SearchLimits) -> Option<SearchResult> {
        let mut moves = self.legal_moves();
        let first = *moves.first()?;
        if moves.len() == 1 {
            return Some(SearchResult {
                best: first,
                score: self.evaluate(),
                depth: 0,
                nodes: 0,
            });
        }
        let max_depth = limits
            .max_depth
            .map_or(MAX_PLY, |d| (d as i32).clamp(1, MAX_PLY));
        let mut searcher = Searcher::new(limits.time);
        let mut result = SearchResult {
            best: first,
            score: -INF,
            depth: 0,
            nodes: 0,
        };
        for depth in 1..=max_depth {
            searcher.may_stop = depth > 1;
            let mut alpha = -INF;
            let mut best = moves[0];
            for mv in &moves {
                let mut child = *self;
                child.make(mv);
                let score = -searcher.negamax(&child, depth - 1, -INF, -alpha, 1);
                if searcher.stopped {
                    break;
                }
                if score > alpha {
                    alpha = score;
                    best = *mv;
                }
            }
            if searcher.stopped {
                break;
            }
            result = SearchResult {
                best,
                score: alpha,
                depth: depth as u32,
                nodes: searcher.nodes,
            };
            // Search the best move first next time.
            if let Some(i) = moves.iter().position(|m| *m == best) {
                moves[..=i].rotate_right(1);
            }
            if alpha.abs() > WIN - 1000 || searcher.start.elapsed() * 2 >= limits.time {
                break;
            }
        }
        result.nodes = searcher.nodes;
        Some(result)
    }

    /// The built-in opponent's move at `level`. `None` when the game is over.
    pub fn choose_move(
        &self,
        level: Level,
        limits: SearchLimits,
        rng: &mut GameRng,
    ) -> Option<Move> {
        match level {
            Level::Random => self.legal_moves().choose(rng).copied(),
            Level::Easy => {
                let moves = self.legal_moves();
                let mut searcher = Searcher::new(Duration::MAX);
                let mut best: Option<(i32, Move)> = None;
                for mv in moves {
                    let mut child = *self;
                    child.make(&mv);
                    let score = -searcher.negamax(&child, 1, -INF, INF, 1)
                        + rng.random_range(-40..=40);
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, mv));
                    }
                }
                best.map(|(_, mv)| mv)
            }
            Level::Hard => self.search(limits).map(|r| r.best),
        }
    }
}
