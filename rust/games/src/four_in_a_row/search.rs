//! The hard opponent: a negamax alpha-beta solver on bitboards.
//!
//! - Transposition table keyed by `discs_to_move + occupied` (unique per position), storing
//!   score, depth, bound type and best move.
//! - Move ordering: transposition-table move, then moves by the number of winning cells they
//!   create, then the centre-first order.
//! - Tactics at every node: an immediate win ends the search; an opponent's immediate win must be
//!   blocked (two of them lose); moves that let the opponent win on top are never tried; score
//!   bounds from the earliest possible win/loss narrow the window.
//! - Iterative deepening by one ply until the position is solved (a forced win or loss shows up,
//!   or the search reached the end of the game on every line) or the time budget runs out; then
//!   the best move of the deepest completed iteration is returned.
//!
//! Scores are from the side to move: above [`WIN`] a forced win (higher = sooner), below
//! `-WIN` a forced loss (lower = sooner), `0` a proven draw when [`SearchResult::proven`], and in
//! between a heuristic estimate (threats, their row parity, centre control).

use std::time::{Duration, Instant};

use super::bitboard::{BOTTOM_MASK, CELL_WEIGHTS, CELLS, H1, column_mask, playable, winning_cells};
use super::{CENTER_ORDER, Column, FourInARow};
use crate::SearchLimits;

/// Scores above this (or below its negation) are proven wins (losses).
pub const WIN: i32 = 1000;

const INF: i32 = 10_000;
const TT_BITS: u32 = 19;
const TT_TAG: u64 = 1 << 63;

const EXACT: u64 = 0;
const LOWER: u64 = 1;
const UPPER: u64 = 2;

/// Cells of rows 1, 3 and 5 counted from the bottom (indices 0, 2, 4): the first player's good
/// threat rows in the classic parity (zugzwang) analysis.
const ODD_ROWS: u64 = BOTTOM_MASK * 0b010101;
/// Cells of rows 2, 4 and 6 counted from the bottom: the second player's good threat rows.
const EVEN_ROWS: u64 = BOTTOM_MASK * 0b101010;

/// The score of a win completed when the board holds `discs` discs (sooner is higher).
fn win_score(discs: u32) -> i32 {
    WIN + (CELLS as i32 + 1 - discs as i32)
}

/// What a search found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play.
    pub best: Column,
    /// Its score for the side to move (see the module docs).
    pub score: i32,
    /// Depth in plies of the deepest completed iteration.
    pub depth: u32,
    /// True when the result is exact: a forced win, a forced loss, or a search that reached the
    /// end of the game on every line.
    pub proven: bool,
    /// Nodes visited.
    pub nodes: u64,
}

impl SearchResult {
    /// True when the side to move has a forced win.
    pub fn is_win(&self) -> bool {
        self.score > WIN
    }

    /// True when the side to move loses against best play.
    pub fn is_loss(&self) -> bool {
        self.score < -WIN
    }
}

struct Searcher {
    keys: Vec<u64>,
    data: Vec<u64>,
    /// The deadline of the whole search.
    deadline: Option<Instant>,
    /// The deadline the node counter checks (none during the first iteration).
    active_deadline: Option<Instant>,
    nodes: u64,
    aborted: bool,
}

fn weight_of_bits(mut bits: u64) -> i32 {
    let mut sum = 0;
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        sum += CELL_WEIGHTS[i / H1][i % H1];
        bits &= bits - 1;
    }
    sum
}

/// Static evaluation for the side to move (`cur`), well inside `±WIN`.
fn evaluate(cur: u64, mask: u64) -> i32 {
    let opp = cur ^ mask;
    let mine = winning_cells(cur, mask);
    let theirs = winning_cells(opp, mask);
    let cur_is_first = mask.count_ones().is_multiple_of(2);
    let (my_rows, their_rows) = if cur_is_first {
        (ODD_ROWS, EVEN_ROWS)
    } else {
        (EVEN_ROWS, ODD_ROWS)
    };
    let threats = 8 * (mine.count_ones() as i32 - theirs.count_ones() as i32)
        + 6 * ((mine & my_rows).count_ones() as i32 - (theirs & their_rows).count_ones() as i32);
    let position = weight_of_bits(cur) - weight_of_bits(opp);
    (threats + position).clamp(-(WIN - 100), WIN - 100)
}

impl Searcher {
    fn new(limits: SearchLimits) -> Self {
        let size = 1usize << TT_BITS;
        Searcher {
            keys: vec![0; size],
            data: vec![0; size],
            // Stop a little early (10 %, at most 10 ms) so that unwinding, the last node batch
            // and the caller's bookkeeping still fit in the budget.
            deadline: Instant::now()
                .checked_add(limits.time - (limits.time / 10).min(Duration::from_millis(10))),
            active_deadline: None,
            nodes: 0,
            aborted: false,
        }
    }

    fn slot(key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TT_BITS)) as usize
    }

    fn tick(&mut self) {
        self.nodes += 1;
        if self.nodes & 255 == 0
            && let Some(deadline) = self.active_deadline
            && Instant::now() >= deadline
        {
            self.aborted = true;
        }
    }

    fn store(&mut self, key: u64, score: i32, depth: u32, flag: u64, column: usize) {
        let i = Self::slot(key);
        self.keys[i] = key | TT_TAG;
        self.data[i] = u64::from(score as i16 as u16)
            | (u64::from(depth.min(255)) << 16)
            | (flag << 24)
            | ((column as u64) << 32);
    }

    fn probe(&self, key: u64) -> Option<(i32, u32, u64, usize)> {
        let i = Self::slot(key);
        (self.keys[i] == key | TT_TAG).then(|| {
            let d = self.data[i];
            (
                i32::from(d as u16 as i16),
                ((d >> 16) & 0xff) as u32,
                (d >> 24) & 0xff,
                ((d >> 32) & 0xff) as usize,
            )
        })
    }

    // Long on purpose: one node of the alpha-beta search, its steps (the table, the moves in
    // order, the cut-offs) sharing the node's bounds, read top to bottom as the algorithm is.
    /// Negamax for the side whose discs are `cur`; the game is not over at entry.
    fn negamax(&mut self, cur: u64, mask: u64, depth: u32, mut alpha: i32, mut beta: i32) -> i32 {
        self.tick();
        if self.aborted {
            return 0;
        }
        let moves = mask.count_ones();
        if moves as usize == CELLS {
            return 0;
        }
        let opp = cur ^ mask;
        let play = playable(mask);
        if winning_cells(cur, mask) & play != 0 {
            return win_score(moves + 1);
        }
        let opp_wins = winning_cells(opp, mask);
        let forced = play & opp_wins;
        let mut candidates = play;
        if forced != 0 {
            if forced & (forced - 1) != 0 {
                return -win_score(moves + 2);
            }
            candidates = forced;
        }
        candidates &= !(opp_wins >> 1);
        if candidates == 0 {
            return -win_score(moves + 2);
        }
        if depth == 0 {
            return evaluate(cur, mask);
        }
        // Earliest possible outcomes bound the score.
        if (moves + 3) as usize <= CELLS {
            let max = win_score(moves + 3);
            if beta > max {
                beta = max;
                if alpha >= beta {
                    return beta;
                }
            }
        } else if beta > 0 && depth as usize >= CELLS - moves as usize {
            // No win is possible any more and the search sees to the end: at best a draw.
            beta = 0;
            if alpha >= beta {
                return beta;
            }
        }
        if (moves + 4) as usize <= CELLS {
            let min = -win_score(moves + 4);
            if alpha < min {
                alpha = min;
                if alpha >= beta {
                    return alpha;
                }
            }
        }

        let key = cur + mask;
        let mut tt_move = usize::MAX;
        if let Some((score, d, flag, column)) = self.probe(key) {
            tt_move = column;
            if d >= depth {
                match flag {
                    EXACT => return score,
                    LOWER => alpha = alpha.max(score),
                    _ => beta = beta.min(score),
                }
                if alpha >= beta {
                    return score;
                }
            }
        }

        // Order the candidates.
        let mut list = [(0i32, 0u64, 0usize); 7];
        let mut n = 0;
        for col in CENTER_ORDER {
            let bit = candidates & column_mask(col);
            if bit == 0 {
                continue;
            }
            let key = if col == tt_move {
                i32::MAX
            } else {
                let threats = winning_cells(cur | bit, mask | bit).count_ones() as i32;
                threats * 16 + CELL_WEIGHTS[col][(bit.trailing_zeros() as usize) % H1]
            };
            let mut j = n;
            while j > 0 && list[j - 1].0 < key {
                list[j] = list[j - 1];
                j -= 1;
            }
            list[j] = (key, bit, col);
            n += 1;
        }

        let alpha_orig = alpha;
        let mut best = -INF;
        let mut best_col = list[0].2;
        for &(_, bit, col) in &list[..n] {
            let score = -self.negamax(opp, mask | bit, depth - 1, -beta, -alpha);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                best_col = col;
            }
            if score > alpha {
                alpha = score;
                if alpha >= beta {
                    break;
                }
            }
        }
        let flag = if best <= alpha_orig {
            UPPER
        } else if best >= beta {
            LOWER
        } else {
            EXACT
        };
        self.store(key, best, depth, flag, best_col);
        best
    }
}

/// Searches `pos` for the side to move within `limits`; `None` when the game is over.
///
/// Always completes at least the first iteration (one ply plus the tactical checks), so a move
/// comes back even with a tiny budget; after that the deadline (the budget minus 10 %, at most
/// 10 ms) is checked every 256 nodes.
pub fn best_move(pos: &FourInARow, limits: SearchLimits) -> Option<SearchResult> {
    let ranked = pos.ranked_moves();
    let first = *ranked.first()?;
    let (cur, opp) = pos.sides_to_move();
    let mask = cur | opp;
    let moves = mask.count_ones();
    let remaining = (CELLS - moves as usize) as u32;
    let max_depth = limits.max_depth.unwrap_or(u32::MAX).clamp(1, remaining);

    let mut searcher = Searcher::new(limits);
    let mut result = SearchResult {
        best: first,
        score: 0,
        depth: 0,
        proven: false,
        nodes: 0,
    };
    let mut order: Vec<Column> = ranked;
    let immediate = winning_cells(cur, mask) & playable(mask);
    for depth in 1..=max_depth {
        // The first iteration always completes so that a searched move comes back.
        searcher.active_deadline = if depth == 1 { None } else { searcher.deadline };
        let mut alpha = -INF;
        let mut best: Option<(i32, Column)> = None;
        for &column in &order {
            let bit = playable(mask) & column_mask(column.index());
            let score = if immediate & bit != 0 {
                win_score(moves + 1)
            } else if moves + 1 == CELLS as u32 {
                0
            } else {
                -searcher.negamax(opp, mask | bit, depth - 1, -INF, -alpha)
            };
            if searcher.aborted {
                break;
            }
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, column));
            }
            alpha = alpha.max(score);
        }
        if searcher.aborted {
            break;
        }
        let Some((score, column)) = best else { break };
        result = SearchResult {
            best: column,
            score,
            depth,
            proven: score.abs() > WIN || depth >= remaining,
            nodes: searcher.nodes,
        };
        // Search the best move first next time.
        order.retain(|&c| c != column);
        order.insert(0, column);
        if result.proven {
            break;
        }
        if searcher.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
    }
    result.nodes = searcher.nodes;
    Some(result)
}
