//! The built-in chess engine: evaluation, quick move ordering and the alpha-beta search.
//!
//! - Evaluation: material (P 100, N 320, B 330, R 500, Q 900) plus the piece-square tables of
//!   Tomasz Michniewski's "simplified evaluation function", the king table tapered between its
//!   middle-game and end-game forms by the remaining material, a bishop-pair bonus and a mop-up
//!   term (drive the lone king to the edge) in won endgames without pawns.
//! - Search: iterative deepening negamax alpha-beta with principal-variation search, check
//!   extensions, null-move pruning, late-move reductions and a quiescence search (captures and
//!   promotions; every evasion when in check). Moves are ordered transposition-table move first,
//!   then captures by MVV-LVA, promotions, two killer moves per ply and the history heuristic.
//!   A transposition table keyed by shakmaty's Zobrist hash stores bounds and best moves. Draws by
//!   repetition along the searched line, the fifty-move rule and insufficient material score 0.
//! - Time: the clock is checked every 2,048 nodes; the first iteration (depth 1) always completes,
//!   and the move returned is the best move of the deepest completed iteration.

use std::time::Instant;

use rand::RngExt;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, Color, EnPassantMode, Move, Position, Role, Square};

use super::uci;
use crate::seed::GameRng;
use crate::{Level, SearchLimits};

const INF: i32 = 32_000;
const MATE: i32 = 31_000;
/// Scores beyond this are mate scores.
const MATE_BOUND: i32 = MATE - 1_000;
const MAX_PLY: usize = 96;
const MAX_DEPTH: u32 = 64;
const TT_BITS: u32 = 16;
const CHECK_INTERVAL: u64 = 2_048;
/// Random noise (± centipawns) the easy level adds to every root score.
const EASY_NOISE: i32 = 40;
/// Node budget for the quiescence search of one candidate in [`ranked_moves`].
const RANK_NODE_BUDGET: u64 = 1_500;

#[rustfmt::skip]
const PAWN_TABLE: [i32; 64] = [
     0,  0,  0,  0,  0,  0,  0,  0,
    50, 50, 50, 50, 50, 50, 50, 50,
    10, 10, 20, 30, 30, 20, 10, 10,
     5,  5, 10, 25, 25, 10,  5,  5,
     0,  0,  0, 20, 20,  0,  0,  0,
     5, -5,-10,  0,  0,-10, -5,  5,
     5, 10, 10,-20,-20, 10, 10,  5,
     0,  0,  0,  0,  0,  0,  0,  0,
];
#[rustfmt::skip]
const KNIGHT_TABLE: [i32; 64] = [
    -50,-40,-30,-30,-30,-30,-40,-50,
    -40,-20,  0,  0,  0,  0,-20,-40,
    -30,  0, 10, 15, 15, 10,  0,-30,
    -30,  5, 15, 20, 20, 15,  5,-30,
    -30,  0, 15, 20, 20, 15,  0,-30,
    -30,  5, 10, 15, 15, 10,  5,-30,
    -40,-20,  0,  5,  5,  0,-20,-40,
    -50,-40,-30,-30,-30,-30,-40,-50,
];
#[rustfmt::skip]
const BISHOP_TABLE: [i32; 64] = [
    -20,-10,-10,-10,-10,-10,-10,-20,
    -10,  0,  0,  0,  0,  0,  0,-10,
    -10,  0,  5, 10, 10,  5,  0,-10,
    -10,  5,  5, 10, 10,  5,  5,-10,
    -10,  0, 10, 10, 10, 10,  0,-10,
    -10, 10, 10, 10, 10, 10, 10,-10,
    -10,  5,  0,  0,  0,  0,  5,-10,
    -20,-10,-10,-10,-10,-10,-10,-20,
];
#[rustfmt::skip]
const ROOK_TABLE: [i32; 64] = [
     0,  0,  0,  0,  0,  0,  0,  0,
     5, 10, 10, 10, 10, 10, 10,  5,
    -5,  0,  0,  0,  0,  0,  0, -5,
    -5,  0,  0,  0,  0,  0,  0, -5,
    -5,  0,  0,  0,  0,  0,  0, -5,
    -5,  0,  0,  0,  0,  0,  0, -5,
    -5,  0,  0,  0,  0,  0,  0, -5,
     0,  0,  0,  5,  5,  0,  0,  0,
];
#[rustfmt::skip]
const QUEEN_TABLE: [i32; 64] = [
    -20,-10,-10, -5, -5,-10,-10,-20,
    -10,  0,  0,  0,  0,  0,  0,-10,
    -10,  0,  5,  5,  5,  5,  0,-10,
     -5,  0,  5,  5,  5,  5,  0, -5,
      0,  0,  5,  5,  5,  5,  0, -5,
    -10,  5,  5,  5,  5,  5,  0,-10,
    -10,  0,  5,  0,  0,  0,  0,-10,
    -20,-10,-10, -5, -5,-10,-10,-20,
];
#[rustfmt::skip]
const KING_MG_TABLE: [i32; 64] = [
    -30,-40,-40,-50,-50,-40,-40,-30,
    -30,-40,-40,-50,-50,-40,-40,-30,
    -30,-40,-40,-50,-50,-40,-40,-30,
    -30,-40,-40,-50,-50,-40,-40,-30,
    -20,-30,-30,-40,-40,-30,-30,-20,
    -10,-20,-20,-20,-20,-20,-20,-10,
     20, 20,  0,  0,  0,  0, 20, 20,
     20, 30, 10,  0,  0, 10, 30, 20,
];
#[rustfmt::skip]
const KING_EG_TABLE: [i32; 64] = [
    -50,-40,-30,-20,-20,-30,-40,-50,
    -30,-20,-10,  0,  0,-10,-20,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 30, 40, 40, 30,-10,-30,
    -30,-10, 20, 30, 30, 20,-10,-30,
    -30,-30,  0,  0,  0,  0,-30,-30,
    -50,-30,-30,-30,-30,-30,-30,-50,
];

/// Material value of a role in centipawns (the king counts 0 for material, 20,000 for MVV-LVA).
fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 0,
    }
}

fn phase_weight(role: Role) -> i32 {
    match role {
        Role::Knight | Role::Bishop => 1,
        Role::Rook => 2,
        Role::Queen => 4,
        _ => 0,
    }
}

/// Index into a table written rank 8 first, from `color`'s point of view.
fn table_index(color: Color, sq: Square) -> usize {
    match color {
        Color::White => sq.to_usize() ^ 56,
        Color::Black => sq.to_usize(),
    }
}

fn color_index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// Static evaluation in centipawns from the side to move's point of view.
pub fn evaluate(pos: &Chess) -> i32 {
    let board = pos.board();
    let mut score = [0i32; 2];
    let mut king_mg = [0i32; 2];
    let mut king_eg = [0i32; 2];
    let mut material = [0i32; 2];
    let mut phase = 0;
    let mut bishops = [0u32; 2];
    for (sq, piece) in board.iter() {
        let c = color_index(piece.color);
        let idx = table_index(piece.color, sq);
        phase += phase_weight(piece.role);
        material[c] += value(piece.role);
        score[c] += value(piece.role)
            + match piece.role {
                Role::Pawn => PAWN_TABLE[idx],
                Role::Knight => KNIGHT_TABLE[idx],
                Role::Bishop => {
                    bishops[c] += 1;
                    BISHOP_TABLE[idx]
                }
                Role::Rook => ROOK_TABLE[idx],
                Role::Queen => QUEEN_TABLE[idx],
                Role::King => {
                    king_mg[c] = KING_MG_TABLE[idx];
                    king_eg[c] = KING_EG_TABLE[idx];
                    0
                }
            };
    }
    let phase = phase.min(24);
    for c in 0..2 {
        score[c] += (king_mg[c] * phase + king_eg[c] * (24 - phase)) / 24;
        if bishops[c] >= 2 {
            score[c] += 30;
        }
    }
    // Mop-up: with no pawns left and a clear material edge, drive the lone king to the edge and
    // bring our king close.
    if board.pawns().is_empty() {
        for c in 0..2 {
            let o = 1 - c;
            if material[c] >= material[o] + 400 {
                let color = if c == color_index(Color::White) {
                    Color::White
                } else {
                    Color::Black
                };
                if let (Some(our_king), Some(their_king)) =
                    (board.king_of(color), board.king_of(!color))
                {
                    let file = their_king.file().to_u32() as i32;
                    let rank = their_king.rank().to_u32() as i32;
                    let center_distance = (2 * file - 7).abs() + (2 * rank - 7).abs();
                    let kings_distance = our_king.distance(their_king) as i32;
                    score[c] += 5 * center_distance + 4 * (14 - kings_distance);
                }
            }
        }
    }
    let white_minus_black = score[color_index(Color::White)] - score[color_index(Color::Black)];
    match pos.turn() {
        Color::White => white_minus_black,
        Color::Black => -white_minus_black,
    }
}

fn hash(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

fn mvv_lva(m: &Move) -> i32 {
    match m.capture() {
        Some(victim) => 10 * value(victim) - value(m.role()) / 10,
        None => 0,
    }
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
    mv: Option<Move>,
    score: i32,
    depth: i32,
    bound: Bound,
}

/// Mate scores are stored relative to the node, not the root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchReport {
    /// The best move of the deepest completed iteration.
    pub best: Move,
    /// Its score in centipawns from the side to move's point of view (mates are ±(31,000 − plies)).
    pub score: i32,
    /// The deepest completed iteration.
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
}

struct Searcher {
    deadline: Instant,
    node_limit: Option<u64>,
    can_stop: bool,
    stopped: bool,
    nodes: u64,
    tt: Vec<Option<TtEntry>>,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// Hashes of the positions from the root to the current node's parent.
    path: Vec<u64>,
}

impl Searcher {
    fn new(deadline: Instant, tt_bits: u32) -> Self {
        Searcher {
            deadline,
            node_limit: None,
            can_stop: true,
            stopped: false,
            nodes: 0,
            tt: vec![None; 1 << tt_bits],
            killers: vec![[None; 2]; MAX_PLY],
            history: vec![0; 64 * 64],
            path: Vec::with_capacity(MAX_PLY),
        }
    }

    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.stopped {
            return true;
        }
        if !self.can_stop {
            return false;
        }
        if let Some(limit) = self.node_limit
            && self.nodes >= limit
        {
            self.stopped = true;
        }
        if self.nodes.is_multiple_of(CHECK_INTERVAL) && Instant::now() >= self.deadline {
            self.stopped = true;
        }
        self.stopped
    }

    fn tt_slot(&self, key: u64) -> usize {
        (key as usize) & (self.tt.len() - 1)
    }

    fn tt_probe(&self, key: u64) -> Option<TtEntry> {
        self.tt[self.tt_slot(key)].filter(|e| e.key == key)
    }

    fn tt_store(&mut self, entry: TtEntry) {
        let slot = self.tt_slot(entry.key);
        let replace = match self.tt[slot] {
            Some(old) => {
                old.key != entry.key || entry.depth >= old.depth || entry.bound == Bound::Exact
            }
            None => true,
        };
        if replace {
            self.tt[slot] = Some(entry);
        }
    }

    fn is_repetition(&self, key: u64, halfmoves: u32) -> bool {
        // Positions with the same side to move are two plies apart; the halfmove clock bounds
        // how far back a repetition can reach.
        let n = self.path.len();
        let reach = (halfmoves as usize).min(n);
        (2..=reach)
            .step_by(2)
            .any(|back| self.path[n - back] == key)
    }

    fn order(&self, moves: &[Move], tt_move: Option<Move>, ply: usize) -> Vec<Move> {
        let killers = self.killers.get(ply).copied().unwrap_or([None; 2]);
        let mut scored: Vec<(i32, Move)> = moves
            .iter()
            .map(|m| {
                let s = if Some(*m) == tt_move {
                    10_000_000
                } else if m.is_capture() {
                    1_000_000 + mvv_lva(m) + m.promotion().map_or(0, value)
                } else if let Some(p) = m.promotion() {
                    900_000 + value(p)
                } else if Some(*m) == killers[0] {
                    800_000
                } else if Some(*m) == killers[1] {
                    790_000
                } else {
                    self.history_score(m)
                };
                (s, *m)
            })
            .collect();
        scored.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
        scored.into_iter().map(|(_, m)| m).collect()
    }

    fn history_index(m: &Move) -> usize {
        let from = m.from().map_or(0, Square::to_usize);
        from * 64 + m.to().to_usize()
    }

    fn history_score(&self, m: &Move) -> i32 {
        self.history[Self::history_index(m)].min(700_000)
    }

    fn record_cutoff(&mut self, m: Move, depth: i32, ply: usize) {
        if let Some(k) = self.killers.get_mut(ply)
            && k[0] != Some(m)
        {
            k[1] = k[0];
            k[0] = Some(m);
        }
        let h = &mut self.history[Self::history_index(&m)];
        *h = (*h + depth * depth).min(700_000);
    }

    // Long on purpose: one node of the alpha-beta search, its steps (the table, the moves in
    // order, the cut-offs) sharing the node's bounds, read top to bottom as the algorithm is.
    fn negamax(
        &mut self,
        pos: &Chess,
        depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        key: u64,
    ) -> i32 {
        if self.tick() {
            return 0;
        }
        if ply > 0 {
            if pos.halfmoves() >= 100
                || pos.is_insufficient_material()
                || self.is_repetition(key, pos.halfmoves())
            {
                return 0;
            }
            // Mate-distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }
        let in_check = pos.is_check();
        let depth = if in_check { depth + 1 } else { depth };
        if depth <= 0 {
            return self.quiesce(pos, alpha, beta, ply);
        }
        if ply >= MAX_PLY - 1 {
            return evaluate(pos);
        }
        let tt = self.tt_probe(key);
        if let Some(e) = tt
            && ply > 0
            && e.depth >= depth
        {
            let s = score_from_tt(e.score, ply);
            match e.bound {
                Bound::Exact => return s,
                Bound::Lower if s >= beta => return s,
                Bound::Upper if s <= alpha => return s,
                _ => {}
            }
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        // Null-move pruning (not in check, not in pawn endings, where zugzwang is common).
        let has_pieces = (pos.us() & !pos.board().pawns() & !pos.board().kings()).any();
        if !in_check
            && ply > 0
            && depth >= 3
            && beta.abs() < MATE_BOUND
            && has_pieces
            && evaluate(pos) >= beta
            && let Ok(null) = pos.clone().swap_turn()
        {
            self.path.push(key);
            let null_key = hash(&null);
            let s = -self.negamax(&null, depth - 3, -beta, -beta + 1, ply + 1, null_key);
            self.path.pop();
            if self.stopped {
                return 0;
            }
            if s >= beta {
                return beta;
            }
        }
        let ordered = self.order(&moves, tt.and_then(|e| e.mv), ply);
        let original_alpha = alpha;
        let mut best = -INF;
        let mut best_move = None;
        for (i, m) in ordered.into_iter().enumerate() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_key = hash(&child);
            let quiet = !m.is_capture() && !m.is_promotion();
            self.path.push(key);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, child_key)
            } else {
                let reduction = if depth >= 3 && i >= 3 && quiet && !in_check && !child.is_check() {
                    if i >= 8 { 2 } else { 1 }
                } else {
                    0
                };
                let mut s = -self.negamax(
                    &child,
                    depth - 1 - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    child_key,
                );
                if s > alpha && reduction > 0 {
                    s = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, ply + 1, child_key);
                }
                if s > alpha && s < beta {
                    s = -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, child_key);
                }
                s
            };
            self.path.pop();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if quiet {
                    self.record_cutoff(m, depth, ply);
                }
                break;
            }
        }
        let bound = if best <= original_alpha {
            Bound::Upper
        } else if best >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.tt_store(TtEntry {
            key,
            mv: best_move,
            score: score_to_tt(best, ply),
            depth,
            bound,
        });
        best
    }

    fn quiesce(&mut self, pos: &Chess, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        if self.tick() {
            return 0;
        }
        if ply >= MAX_PLY - 1 {
            return evaluate(pos);
        }
        if pos.is_check() {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return -MATE + ply as i32;
            }
            let mut best = -INF;
            for m in self.order(&moves, None, ply) {
                let mut child = pos.clone();
                child.play_unchecked(m);
                let s = -self.quiesce(&child, -beta, -alpha, ply + 1);
                if self.stopped {
                    return 0;
                }
                best = best.max(s);
                alpha = alpha.max(s);
                if alpha >= beta {
                    break;
                }
            }
            return best;
        }
        let stand_pat = evaluate(pos);
        if stand_pat >= beta {
            return stand_pat;
        }
        alpha = alpha.max(stand_pat);
        let mut moves = pos.capture_moves();
        for m in pos.promotion_moves() {
            if !m.is_capture() {
                moves.push(m);
            }
        }
        let mut best = stand_pat;
        for m in self.order(&moves, None, ply) {
            // Delta pruning: a capture that cannot lift the score near alpha is skipped.
            let gain = m.capture().map_or(0, value) + m.promotion().map_or(0, |p| value(p) - 100);
            if stand_pat + gain + 200 < alpha {
                continue;
            }
            // Losing captures (a more valuable piece takes a defended one) are skipped.
            if m.promotion().is_none() && value(m.role()) > m.capture().map_or(0, value) + 50 {
                let occupied = pos.board().occupied().without(m.from().unwrap_or(m.to()));
                if pos.board().attacks_to(m.to(), !pos.turn(), occupied).any() {
                    continue;
                }
            }
            let mut child = pos.clone();
            child.play_unchecked(m);
            let s = -self.quiesce(&child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            best = best.max(s);
            alpha = alpha.max(s);
            if alpha >= beta {
                break;
            }
        }
        best
    }

    /// One root iteration; `None` when the clock stopped it.
    fn root(&mut self, pos: &Chess, moves: &mut [Move], depth: i32) -> Option<(Move, i32)> {
        let key = hash(pos);
        let mut alpha = -INF;
        let beta = INF;
        let mut best: Option<(Move, i32)> = None;
        for i in 0..moves.len() {
            let m = moves[i];
            let mut child = pos.clone();
            child.play_unchecked(m);
            let child_key = hash(&child);
            self.path.push(key);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, -beta, -alpha, 1, child_key)
            } else {
                let s = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, 1, child_key);
                if s > alpha {
                    -self.negamax(&child, depth - 1, -beta, -alpha, 1, child_key)
                } else {
                    s
                }
            };
            self.path.pop();
            if self.stopped {
                return None;
            }
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((m, score));
                // Keep the best move first for the next iteration.
                moves[..=i].rotate_right(1);
            }
            alpha = alpha.max(score);
        }
        if let Some((m, s)) = best {
            self.tt_store(TtEntry {
                key,
                mv: Some(m),
                score: s,
                depth,
                bound: Bound::Exact,
            });
        }
        best
    }
}

/// The instant the time budget of `limits` runs out (a day at most, so it never overflows).
fn deadline_after(limits: SearchLimits) -> Instant {
    let day = std::time::Duration::from_secs(86_400);
    let now = Instant::now();
    now.checked_add(limits.time.min(day)).unwrap_or(now)
}

/// Iterative-deepening search within `limits` (at least depth 1 always completes).
/// `None` when there is no legal move.
pub fn analyse(pos: &Chess, limits: SearchLimits) -> Option<SearchReport> {
    let deadline = deadline_after(limits);
    let mut moves: Vec<Move> = pos.legal_moves().to_vec();
    if moves.is_empty() {
        return None;
    }
    moves.sort_by_key(uci);
    let mut searcher = Searcher::new(deadline, TT_BITS);
    let ordered = searcher.order(&moves, None, 0);
    moves = ordered;
    let max_depth = limits.max_depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
    let mut report: Option<SearchReport> = None;
    for depth in 1..=max_depth {
        searcher.can_stop = depth > 1;
        let Some((best, score)) = searcher.root(pos, &mut moves, depth as i32) else {
            break;
        };
        report = Some(SearchReport {
            best,
            score,
            depth,
            nodes: searcher.nodes,
        });
        if moves.len() == 1 || score >= MATE_BOUND || Instant::now() >= deadline {
            break;
        }
    }
    if let Some(r) = report.as_mut() {
        r.nodes = searcher.nodes;
    }
    report
}

/// The AI's move for `level` (see [`super::ChessGame::choose_move`]).
pub(super) fn choose_move(
    pos: &Chess,
    level: Level,
    limits: SearchLimits,
    rng: &mut GameRng,
) -> Option<Move> {
    let mut moves: Vec<Move> = pos.legal_moves().to_vec();
    if moves.is_empty() {
        return None;
    }
    moves.sort_by_key(uci);
    match level {
        Level::Random => Some(moves[rng.random_range(0..moves.len())]),
        Level::Easy => {
            let depth: i32 = rng.random_range(1..=2);
            let mut searcher = Searcher::new(deadline_after(limits), 12);
            let key = hash(pos);
            let mut best: Option<(i32, Move)> = None;
            for (i, m) in moves.into_iter().enumerate() {
                // The first move is always scored; later ones only within the time budget.
                searcher.can_stop = i > 0;
                let mut child = pos.clone();
                child.play_unchecked(m);
                let child_key = hash(&child);
                searcher.path.clear();
                searcher.path.push(key);
                let score = -searcher.negamax(&child, depth - 1, -INF, INF, 1, child_key)
                    + rng.random_range(-EASY_NOISE..=EASY_NOISE);
                if searcher.stopped {
                    break;
                }
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, m));
                }
            }
            best.map(|(_, m)| m)
        }
        Level::Hard => analyse(pos, limits).map(|r| r.best),
    }
}

/// The legal moves ordered best first by a quick evaluation (for the `choose_*` tools).
///
/// Each move is scored by what it wins after the opponent's best capture sequence: mate first,
/// then `-quiescence(position after the move)` (a capture/promotion-only search with a small node
/// budget; stalemates and insufficient-material draws score 0). Ties are broken by MVV-LVA
/// (captures of valuable pieces by cheap ones first), then checks, then promotions, then UCI
/// order, so the list is deterministic.
pub fn ranked_moves(pos: &Chess) -> Vec<Move> {
    let moves = pos.legal_moves();
    let far = Instant::now() + std::time::Duration::from_secs(3_600);
    let mut searcher = Searcher::new(far, 8);
    let mut scored: Vec<(i32, i32, bool, i32, String, Move)> = moves
        .iter()
        .map(|m| {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            let check = child.is_check();
            let score = if child.legal_moves().is_empty() {
                if check { MATE } else { 0 }
            } else if child.is_insufficient_material() {
                0
            } else {
                searcher.stopped = false;
                searcher.nodes = 0;
                searcher.node_limit = Some(RANK_NODE_BUDGET);
                let s = -searcher.quiesce(&child, -INF, INF, 1);
                if searcher.stopped {
                    -evaluate(&child)
                } else {
                    s
                }
            };
            let promo = m.promotion().map_or(0, value);
            (score, mvv_lva(m), check, promo, uci(m), *m)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(b.3.cmp(&a.3))
            .then(a.4.cmp(&b.4))
    });
    scored.into_iter().map(|t| t.5).collect()
}
