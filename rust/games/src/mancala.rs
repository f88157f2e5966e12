//! Mancala — Kalah with six pits per side and four seeds per pit (48 seeds in all).
//!
//! # State grammar
//!
//! ```text
//! P:<p1>,<p2>,<p3>,<p4>,<p5>,<p6>|O:<o1>,…,<o6>|PS:<n>|OS:<n>|T:<player|opponent>|ST:<in_progress|game_over>|LA:<last_action>|W:<player|opponent|draw|->
//! ```
//!
//! The start position is
//! `P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-`.
//!
//! - The eight fields appear in exactly this order, separated by `|`, each with its key; pit
//!   counts are comma-separated decimal integers without sign or leading zeros (`0` itself is
//!   fine). Nothing is trimmed inside the string; surrounding whitespace of the whole string is
//!   ignored.
//! - Each side numbers its pits 1–6 in its own sowing order: a side sows from pit `k` into its pits
//!   `k+1 … 6`, then its own store, then the other side's pits `1 … 6` (the other store is skipped),
//!   and around again. The pit opposite own pit `k` is the other side's pit `7 − k`.
//! - Capture: when the last seed lands in an own pit that was empty and the opposite pit is not
//!   empty, that seed and the opposite pit's seeds go to the mover's store.
//! - Extra turn: when the last seed lands in the mover's store, the mover moves again (`T` stays).
//! - End: when after a move either side's six pits are all empty, each side sweeps the seeds left
//!   in its own pits into its own store and the game is over; the larger store wins, equal stores
//!   draw (`W:draw`).
//! - `LA` is `-` (no move yet, or a set-up position) or `pit<k>` followed by, in this order and
//!   each at most once: `,capture<N>` (N = seeds moved to the store by the capture, the capturing
//!   seed included, so N ≥ 2), `,extra_turn` (only when the game goes on: a move that ends the game
//!   never gives an extra turn), `,sweep` (the move ended the game and the sweep rule was applied —
//!   present on every move that ends the game, even when no seeds were left to sweep).
//! - After a move that ends the game `T` names the side that would have moved next (the other
//!   side), like after any other move without an extra turn.
//!
//! # Validation
//!
//! The parser rejects, with `Invalid state: <detail>`:
//! - any syntax error (missing or misplaced field, wrong key, not six pits, a bad number);
//! - a seed total other than 48 (Kalah 6×4 never creates or loses seeds, so only 48 is accepted);
//! - `ST:in_progress` with `W` other than `-`, or with a side whose pits are all empty (the game
//!   would already be over);
//! - `ST:game_over` with a seed left in any pit (the sweep empties them), or with `W` not matching
//!   the stores;
//! - `extra_turn` in `LA` of a finished game.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rand::RngExt;

use crate::seed::GameRng;
use crate::{Level, MoveError, ParseError, SearchLimits};

/// Pits per side.
pub const PITS: usize = 6;
/// Seeds in each pit at the start.
pub const SEEDS_PER_PIT: u8 = 4;
/// Seeds in the game (every legal state holds exactly this many).
pub const TOTAL_SEEDS: u32 = 48;

/// The message of every illegal move.
pub const ILLEGAL_MOVE: &str = "Illegal move.";

pub use crate::side::{Side, Status, Winner};

/// What the last move did (`LA`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LastAction {
    /// The pit sown, 1–6, numbered from the mover's side.
    pub pit: u8,
    /// Seeds moved to the store by a capture (the capturing seed included).
    pub capture: Option<u8>,
    /// The mover moves again.
    pub extra_turn: bool,
    /// The move ended the game and the remaining seeds were swept.
    pub sweep: bool,
}

impl fmt::Display for LastAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pit{}", self.pit)?;
        if let Some(n) = self.capture {
            write!(f, ",capture{n}")?;
        }
        if self.extra_turn {
            f.write_str(",extra_turn")?;
        }
        if self.sweep {
            f.write_str(",sweep")?;
        }
        Ok(())
    }
}

impl FromStr for LastAction {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || invalid(format!("bad last action {s:?}"));
        let mut parts = s.split(',');
        let first = parts.next().ok_or_else(bad)?;
        let pit = first
            .strip_prefix("pit")
            .and_then(parse_small)
            .filter(|p| (1..=6).contains(p))
            .ok_or_else(bad)? as u8;
        let mut la = LastAction {
            pit,
            capture: None,
            extra_turn: false,
            sweep: false,
        };
        // Canonical order: capture, extra_turn, sweep; each at most once.
        let mut stage = 0;
        for part in parts {
            if let Some(n) = part.strip_prefix("capture") {
                let n = parse_small(n)
                    .filter(|n| (2..=TOTAL_SEEDS).contains(n))
                    .ok_or_else(bad)?;
                if stage >= 1 {
                    return Err(bad());
                }
                stage = 1;
                la.capture = Some(n as u8);
            } else if part == "extra_turn" {
                if stage >= 2 {
                    return Err(bad());
                }
                stage = 2;
                la.extra_turn = true;
            } else if part == "sweep" {
                if stage >= 3 {
                    return Err(bad());
                }
                stage = 3;
                la.sweep = true;
            } else {
                return Err(bad());
            }
        }
        Ok(la)
    }
}

/// A Kalah position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MancalaState {
    /// `pits[side][k-1]` = seeds in that side's pit `k`.
    pits: [[u8; PITS]; 2],
    /// Stores, player first.
    stores: [u8; 2],
    turn: Side,
    status: Status,
    last_action: Option<LastAction>,
    winner: Option<Winner>,
}

impl Default for MancalaState {
    fn default() -> Self {
        Self::new()
    }
}

fn invalid(detail: impl fmt::Display) -> ParseError {
    ParseError::new(format!("Invalid state: {detail}"))
}

/// A decimal number without sign or leading zeros, at most 3 digits.
fn parse_small(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if s.len() > 1 && s.starts_with('0') {
        return None;
    }
    s.parse().ok()
}

impl MancalaState {
    /// The start position: four seeds in every pit, empty stores, the player to move.
    pub fn new() -> Self {
        MancalaState {
            pits: [[SEEDS_PER_PIT; PITS]; 2],
            stores: [0, 0],
            turn: Side::Player,
            status: Status::InProgress,
            last_action: None,
            winner: None,
        }
    }

    /// Seeds in `side`'s pits 1–6.
    pub fn pits(&self, side: Side) -> [u8; PITS] {
        self.pits[side.index()]
    }

    /// Seeds in `side`'s store.
    pub fn store(&self, side: Side) -> u8 {
        self.stores[side.index()]
    }

    /// The side to move (after the end: the side that would have moved next).
    pub fn turn(&self) -> Side {
        self.turn
    }

    /// In progress or over.
    pub fn status(&self) -> Status {
        self.status
    }

    /// What the last move did, if known.
    pub fn last_action(&self) -> Option<LastAction> {
        self.last_action
    }

    /// The result, once the game is over.
    pub fn winner(&self) -> Option<Winner> {
        self.winner
    }

    /// True when the game is over.
    pub fn is_over(&self) -> bool {
        self.status == Status::GameOver
    }

    /// The pits (1–6) the side to move may sow, ascending; empty when the game is over.
    pub fn legal_moves(&self) -> Vec<u8> {
        if self.is_over() {
            return Vec::new();
        }
        let own = &self.pits[self.turn.index()];
        (1..=PITS as u8)
            .filter(|&k| own[k as usize - 1] > 0)
            .collect()
    }

    /// Sows pit `pit` (1–6) of the side to move and returns the new position.
    ///
    /// Errors (message `Illegal move.`): `game_over`, `invalid_pit` (not 1–6), `empty_pit`.
    pub fn apply(&self, pit: i64) -> Result<MancalaState, MoveError> {
        if self.is_over() {
            return Err(MoveError::new("game_over", ILLEGAL_MOVE));
        }
        if !(1..=PITS as i64).contains(&pit) {
            return Err(MoveError::new("invalid_pit", ILLEGAL_MOVE));
        }
        let k = pit as usize;
        if self.pits[self.turn.index()][k - 1] == 0 {
            return Err(MoveError::new("empty_pit", ILLEGAL_MOVE));
        }
        let mut next = self.clone();
        next.sow(k);
        Ok(next)
    }

    /// Sows a non-empty pit `k` (1–6) of the side to move; no checks.
    fn sow(&mut self, k: usize) {
        let me = self.turn.index();
        let them = 1 - me;
        let mut seeds = self.pits[me][k - 1];
        self.pits[me][k - 1] = 0;
        // Ring positions from the mover's view: 0..=5 own pits, 6 own store, 7..=12 their pits.
        let mut pos = k - 1;
        while seeds > 0 {
            pos = (pos + 1) % 13;
            match pos {
                0..=5 => self.pits[me][pos] += 1,
                6 => self.stores[me] += 1,
                _ => self.pits[them][pos - 7] += 1,
            }
            seeds -= 1;
        }
        let mut la = LastAction {
            pit: k as u8,
            capture: None,
            extra_turn: false,
            sweep: false,
        };
        if pos <= 5 && self.pits[me][pos] == 1 {
            let opposite = PITS - 1 - pos;
            let across = self.pits[them][opposite];
            if across > 0 {
                self.pits[them][opposite] = 0;
                self.pits[me][pos] = 0;
                self.stores[me] += across + 1;
                la.capture = Some(across + 1);
            }
        }
        let empty = |side: usize, s: &Self| s.pits[side].iter().all(|&n| n == 0);
        if empty(0, self) || empty(1, self) {
            for side in 0..2 {
                let rest: u8 = self.pits[side].iter().sum();
                self.stores[side] += rest;
                self.pits[side] = [0; PITS];
            }
            la.sweep = true;
            self.status = Status::GameOver;
            self.winner = Some(winner_of(self.stores));
            self.turn = self.turn.other();
        } else if pos == 6 {
            la.extra_turn = true;
        } else {
            self.turn = self.turn.other();
        }
        self.last_action = Some(la);
    }

    /// Store difference from `side`'s point of view.
    fn store_diff(&self, side: Side) -> i32 {
        let i = side.index();
        i32::from(self.stores[i]) - i32::from(self.stores[1 - i])
    }

    /// Moves of the side to move, best first, by a shallow fixed-depth search (6 plies of the
    /// alpha-beta search used by the hard AI, about two thousand nodes). Ties keep ascending pit
    /// order.
    pub fn ranked_moves(&self) -> Vec<u8> {
        let mut search = Search::unbounded();
        let mut scored: Vec<(i32, u8)> = self
            .legal_moves()
            .into_iter()
            .map(|k| {
                let child = self.apply(i64::from(k)).expect("listed move is legal");
                (search.value_for(&child, self.turn, 5), k)
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, k)| k).collect()
    }

    /// The built-in AI's move for the side to move, or `None` when the game is over.
    ///
    /// - `Random`: a uniformly random legal pit.
    /// - `Easy`: one time in three a random pit, otherwise the best pit by a 2-ply search.
    /// - `Hard`: iterative-deepening alpha-beta (extra turns keep the same side to move) on the
    ///   store difference, within `limits` (time budget and optional depth cap).
    pub fn choose_move(&self, level: Level, limits: SearchLimits, rng: &mut GameRng) -> Option<u8> {
        let moves = self.legal_moves();
        if moves.is_empty() {
            return None;
        }
        match level {
            Level::Random => Some(moves[rng.random_range(0..moves.len())]),
            Level::Easy => {
                if rng.random_range(0..3) == 0 {
                    return Some(moves[rng.random_range(0..moves.len())]);
                }
                let mut search = Search::unbounded();
                let mut best: Vec<u8> = Vec::new();
                let mut best_score = i32::MIN;
                for &k in &moves {
                    let child = self.apply(i64::from(k)).expect("listed move is legal");
                    let score = search.value_for(&child, self.turn, 1);
                    if score > best_score {
                        best_score = score;
                        best.clear();
                    }
                    if score == best_score {
                        best.push(k);
                    }
                }
                Some(best[rng.random_range(0..best.len())])
            }
            Level::Hard => Some(self.search_best(limits)),
        }
    }

    /// Iterative deepening; returns the best move of the deepest finished iteration.
    fn search_best(&self, limits: SearchLimits) -> u8 {
        let mut order = self.legal_moves();
        let mut best = order[0];
        if order.len() == 1 {
            return best;
        }
        let mut search = Search::new(limits);
        let max_depth = limits.max_depth.unwrap_or(64).max(1);
        for depth in 1..=max_depth {
            let mut alpha = -INF;
            let mut iteration_best = None;
            let mut scores = Vec::with_capacity(order.len());
            for &k in &order {
                let child = self.apply(i64::from(k)).expect("listed move is legal");
                let score = match search.child_value(&child, self.turn, depth - 1, alpha, INF) {
                    Some(s) => s,
                    None => break,
                };
                scores.push((score, k));
                if score > alpha {
                    alpha = score;
                    iteration_best = Some(k);
                }
            }
            if search.stopped {
                // A partial iteration still improves on the previous one when its first move (the
                // previous best) was searched in full and a later move beat it.
                if let Some(k) = iteration_best
                    && scores.len() > 1
                    && scores[0].1 == best
                {
                    best = k;
                }
                break;
            }
            if let Some(k) = iteration_best {
                best = k;
            }
            // Reorder by score, best first (stable: the first of equals stays first).
            scores.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
            order = scores.into_iter().map(|(_, k)| k).collect();
            if !search.hit_horizon {
                // The whole tree was solved: deeper iterations change nothing.
                break;
            }
            search.hit_horizon = false;
        }
        best
    }
}

const INF: i32 = 1_000_000;
const WIN: i32 = 100_000;

/// Alpha-beta search state.
struct Search {
    deadline: Option<Instant>,
    nodes: u64,
    stopped: bool,
    hit_horizon: bool,
}

impl Search {
    fn new(limits: SearchLimits) -> Self {
        Search {
            deadline: Instant::now().checked_add(limits.time),
            nodes: 0,
            stopped: false,
            hit_horizon: false,
        }
    }

    fn unbounded() -> Self {
        Search {
            deadline: None,
            nodes: 0,
            stopped: false,
            hit_horizon: false,
        }
    }

    /// Value of `pos` for `me` searched `depth` more plies (no time limit is hit in shallow use).
    fn value_for(&mut self, pos: &MancalaState, me: Side, depth: u32) -> i32 {
        self.child_value(pos, me, depth, -INF, INF).unwrap_or(0)
    }

    /// Value of `child` (reached by a move of `me`) for `me`, or `None` when time ran out.
    fn child_value(
        &mut self,
        child: &MancalaState,
        me: Side,
        depth: u32,
        alpha: i32,
        beta: i32,
    ) -> Option<i32> {
        if child.turn == me && !child.is_over() {
            self.negamax(child, depth, alpha, beta)
        } else {
            self.negamax(child, depth, -beta, -alpha).map(|v| -v)
        }
    }

    /// Negamax value for the side to move in `pos`.
    fn negamax(
        &mut self,
        pos: &MancalaState,
        depth: u32,
        mut alpha: i32,
        beta: i32,
    ) -> Option<i32> {
        self.nodes += 1;
        if self.nodes & 1023 == 0
            && let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            self.stopped = true;
        }
        if self.stopped {
            return None;
        }
        let me = pos.turn;
        if pos.is_over() {
            // After the last move `turn` names the side that would move next; score for it.
            let diff = pos.store_diff(me);
            return Some(diff.signum() * WIN + diff);
        }
        if depth == 0 {
            self.hit_horizon = true;
            return Some(pos.store_diff(me));
        }
        let mut best = -INF;
        // Order: extra-turn moves (last seed in the store) first, then captures by pit order.
        let own = pos.pits[me.index()];
        let mut moves: Vec<usize> = (1..=PITS).filter(|&k| own[k - 1] > 0).collect();
        moves.sort_by_key(|&k| usize::from(usize::from(own[k - 1]) != 7 - k));
        for k in moves {
            let mut child = pos.clone();
            child.sow(k);
            let v = self.child_value(&child, me, depth - 1, alpha, beta)?;
            if v > best {
                best = v;
            }
            if best > alpha {
                alpha = best;
            }
            if alpha >= beta {
                break;
            }
        }
        Some(best)
    }
}

fn winner_of(stores: [u8; 2]) -> Winner {
    match stores[0].cmp(&stores[1]) {
        std::cmp::Ordering::Greater => Winner::Player,
        std::cmp::Ordering::Less => Winner::Opponent,
        std::cmp::Ordering::Equal => Winner::Draw,
    }
}

impl fmt::Display for MancalaState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |side: usize| {
            self.pits[side]
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        write!(
            f,
            "P:{}|O:{}|PS:{}|OS:{}|T:{}|ST:{}|LA:",
            row(0),
            row(1),
            self.stores[0],
            self.stores[1],
            self.turn,
            self.status
        )?;
        match self.last_action {
            Some(la) => write!(f, "{la}")?,
            None => f.write_str("-")?,
        }
        match self.winner {
            Some(w) => write!(f, "|W:{w}"),
            None => f.write_str("|W:-"),
        }
    }
}

impl FromStr for MancalaState {
    type Err = ParseError;

    // Long on purpose: the state string's grammar read once, field by field in its order, each
    // field's error named where it is read (split up, the fields' order and checks would scatter).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let fields: Vec<&str> = s.split('|').collect();
        const KEYS: [&str; 8] = ["P", "O", "PS", "OS", "T", "ST", "LA", "W"];
        if fields.len() != KEYS.len() {
            return Err(invalid(format!(
                "expected 8 fields P|O|PS|OS|T|ST|LA|W, found {}",
                fields.len()
            )));
        }
        let mut values = [""; 8];
        for (i, (field, key)) in fields.iter().zip(KEYS).enumerate() {
            values[i] = field
                .strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(':'))
                .ok_or_else(|| invalid(format!("field {} must start with \"{key}:\"", i + 1)))?;
        }
        let pits_of = |value: &str, key: &str| -> Result<[u8; PITS], ParseError> {
            let parts: Vec<&str> = value.split(',').collect();
            if parts.len() != PITS {
                return Err(invalid(format!(
                    "{key} needs 6 pit counts, found {}",
                    parts.len()
                )));
            }
            let mut pits = [0u8; PITS];
            for (slot, part) in pits.iter_mut().zip(parts) {
                *slot = parse_small(part)
                    .filter(|&n| n <= TOTAL_SEEDS)
                    .ok_or_else(|| invalid(format!("bad seed count {part:?} in {key}")))?
                    as u8;
            }
            Ok(pits)
        };
        let store_of = |value: &str, key: &str| -> Result<u8, ParseError> {
            parse_small(value)
                .filter(|&n| n <= TOTAL_SEEDS)
                .map(|n| n as u8)
                .ok_or_else(|| invalid(format!("bad store count {value:?} in {key}")))
        };
        let pits = [pits_of(values[0], "P")?, pits_of(values[1], "O")?];
        let stores = [store_of(values[2], "PS")?, store_of(values[3], "OS")?];
        let turn = match values[4] {
            "player" => Side::Player,
            "opponent" => Side::Opponent,
            other => {
                return Err(invalid(format!(
                    "bad turn {other:?} (expected player or opponent)"
                )));
            }
        };
        let status = match values[5] {
            "in_progress" => Status::InProgress,
            "game_over" => Status::GameOver,
            other => {
                return Err(invalid(format!(
                    "bad status {other:?} (expected in_progress or game_over)"
                )));
            }
        };
        let last_action = match values[6] {
            "-" => None,
            la => Some(la.parse::<LastAction>()?),
        };
        let winner = match values[7] {
            "-" => None,
            "player" => Some(Winner::Player),
            "opponent" => Some(Winner::Opponent),
            "draw" => Some(Winner::Draw),
            other => {
                return Err(invalid(format!(
                    "bad winner {other:?} (expected player, opponent, draw or -)"
                )));
            }
        };
        let total: u32 = pits
            .iter()
            .flatten()
            .chain(stores.iter())
            .map(|&n| u32::from(n))
            .sum();
        if total != TOTAL_SEEDS {
            return Err(invalid(format!(
                "seeds total {total}, expected {TOTAL_SEEDS}"
            )));
        }
        match status {
            Status::InProgress => {
                if winner.is_some() {
                    return Err(invalid("W must be - while the game is in progress"));
                }
                if pits.iter().any(|side| side.iter().all(|&n| n == 0)) {
                    return Err(invalid(
                        "a side has no seeds in its pits, so the game should be over",
                    ));
                }
            }
            Status::GameOver => {
                if pits.iter().flatten().any(|&n| n > 0) {
                    return Err(invalid("a finished game must have empty pits"));
                }
                let expected = winner_of(stores);
                if winner != Some(expected) {
                    return Err(invalid(format!("W must be {expected} for these stores")));
                }
                if last_action.is_some_and(|la| la.extra_turn) {
                    return Err(invalid("a move that ends the game gives no extra turn"));
                }
            }
        }
        Ok(MancalaState {
            pits,
            stores,
            turn,
            status,
            last_action,
            winner,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;
    use proptest::prelude::*;
    use std::time::Duration;

    const START: &str = "P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-";

    fn st(s: &str) -> MancalaState {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        s.parse::<MancalaState>().unwrap_err().to_string()
    }

    #[test]
    fn start_round_trips() {
        assert_eq!(MancalaState::new().to_string(), START);
        assert_eq!(st(START), MancalaState::new());
        for s in [
            "P:0,5,5,5,5,0|O:4,4,4,4,4,4|PS:1|OS:3|T:opponent|ST:in_progress|LA:pit1,capture6|W:-",
            "P:4,4,0,5,5,5|O:4,4,4,4,4,4|PS:1|OS:0|T:player|ST:in_progress|LA:pit3,extra_turn|W:-",
            "P:0,0,0,0,0,0|O:0,0,0,0,0,0|PS:24|OS:24|T:opponent|ST:game_over|LA:pit6,capture2,sweep|W:draw",
        ] {
            assert_eq!(st(s).to_string(), s);
        }
        assert_eq!(st(&format!("  {START}\n")).to_string(), START);
    }

    #[test]
    fn pit3_from_the_start_ends_in_the_store_with_an_extra_turn() {
        let next = MancalaState::new().apply(3).unwrap();
        assert_eq!(
            next.to_string(),
            "P:4,4,0,5,5,5|O:4,4,4,4,4,4|PS:1|OS:0|T:player|ST:in_progress|LA:pit3,extra_turn|W:-"
        );
        // Other openings pass the turn and reach the opponent's pits.
        let next = MancalaState::new().apply(6).unwrap();
        assert_eq!(
            next.to_string(),
            "P:4,4,4,4,4,0|O:5,5,5,4,4,4|PS:1|OS:0|T:opponent|ST:in_progress|LA:pit6|W:-"
        );
    }

    #[test]
    fn capture_takes_the_opposite_pit() {
        // Player pit 1 has 1 seed, pit 2 is empty; opposite pit 2 is the opponent's pit 5 (7 seeds).
        let s = st("P:1,0,4,4,4,4|O:4,4,4,4,7,4|PS:1|OS:3|T:player|ST:in_progress|LA:-|W:-");
        let next = s.apply(1).unwrap();
        assert_eq!(
            next.to_string(),
            "P:0,0,4,4,4,4|O:4,4,4,4,0,4|PS:9|OS:3|T:opponent|ST:in_progress|LA:pit1,capture8|W:-"
        );
        // No capture when the opposite pit is empty: the seed just stays.
        let s = st("P:1,0,4,4,4,4|O:4,4,4,4,0,4|PS:8|OS:3|T:player|ST:in_progress|LA:-|W:-");
        let next = s.apply(1).unwrap();
        assert_eq!(next.pits(Side::Player), [0, 1, 4, 4, 4, 4]);
        assert_eq!(next.last_action().unwrap().capture, None);
    }

    #[test]
    fn opponent_sows_into_player_pits_and_skips_player_store() {
        // Opponent pit 6 with 9 seeds: its store, player pits 1..6, then (player store skipped)
        // its own pits 1 and 2.
        let s = st("P:4,4,4,4,4,4|O:1,1,4,4,4,9|PS:0|OS:1|T:opponent|ST:in_progress|LA:-|W:-");
        let next = s.apply(6).unwrap();
        assert_eq!(
            next.to_string(),
            "P:5,5,5,5,5,5|O:2,2,4,4,4,0|PS:0|OS:2|T:player|ST:in_progress|LA:pit6|W:-"
        );
    }

    #[test]
    fn sweep_ends_the_game_with_a_winner() {
        // The player's last seed goes into the store: player side empty, the opponent sweeps.
        let s = st("P:0,0,0,0,0,1|O:1,2,3,0,0,0|PS:20|OS:21|T:player|ST:in_progress|LA:-|W:-");
        let next = s.apply(6).unwrap();
        assert_eq!(
            next.to_string(),
            "P:0,0,0,0,0,0|O:0,0,0,0,0,0|PS:21|OS:27|T:opponent|ST:game_over|LA:pit6,sweep|W:opponent"
        );
        assert!(next.legal_moves().is_empty());
        let e = next.apply(1).unwrap_err();
        assert_eq!(
            (e.reason, e.message.as_str()),
            ("game_over", "Illegal move.")
        );
    }

    #[test]
    fn draw_and_player_win() {
        let s = st("P:0,0,0,0,0,1|O:0,0,0,0,0,3|PS:23|OS:21|T:player|ST:in_progress|LA:-|W:-");
        let next = s.apply(6).unwrap();
        assert_eq!(next.winner(), Some(Winner::Draw));
        assert_eq!(next.store(Side::Player), 24);
        assert!(
            next.to_string()
                .ends_with("ST:game_over|LA:pit6,sweep|W:draw")
        );
        let s = st("P:0,0,0,0,0,1|O:0,0,0,0,0,3|PS:25|OS:19|T:player|ST:in_progress|LA:-|W:-");
        assert_eq!(s.apply(6).unwrap().winner(), Some(Winner::Player));
    }

    #[test]
    fn illegal_moves_have_reasons() {
        let s = st("P:0,4,4,4,4,4|O:4,4,4,4,4,4|PS:4|OS:0|T:player|ST:in_progress|LA:-|W:-");
        assert_eq!(
            s.apply(1).unwrap_err(),
            MoveError::new("empty_pit", "Illegal move.")
        );
        assert_eq!(
            s.apply(0).unwrap_err(),
            MoveError::new("invalid_pit", "Illegal move.")
        );
        assert_eq!(
            s.apply(7).unwrap_err(),
            MoveError::new("invalid_pit", "Illegal move.")
        );
        assert_eq!(s.legal_moves(), vec![2, 3, 4, 5, 6]);
    }

    #[test]
    fn parse_errors_are_precise() {
        assert_eq!(
            err("nonsense"),
            "Invalid state: expected 8 fields P|O|PS|OS|T|ST|LA|W, found 1"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|X:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: field 2 must start with \"O:\""
        );
        assert_eq!(
            err("P:4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: P needs 6 pit counts, found 5"
        );
        assert_eq!(
            err("P:4,4,4,4,4,x|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: bad seed count \"x\" in P"
        );
        assert_eq!(
            err("P:4,4,4,4,4,04|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: bad seed count \"04\" in P"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:-1|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: bad store count \"-1\" in PS"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:me|ST:in_progress|LA:-|W:-"),
            "Invalid state: bad turn \"me\" (expected player or opponent)"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:done|LA:-|W:-"),
            "Invalid state: bad status \"done\" (expected in_progress or game_over)"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:pit7|W:-"),
            "Invalid state: bad last action \"pit7\""
        );
        assert_eq!(
            err(
                "P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:pit1,sweep,capture3|W:-"
            ),
            "Invalid state: bad last action \"pit1,sweep,capture3\""
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:x"),
            "Invalid state: bad winner \"x\" (expected player, opponent, draw or -)"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:1|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: seeds total 49, expected 48"
        );
        assert_eq!(
            err("P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:draw"),
            "Invalid state: W must be - while the game is in progress"
        );
        assert_eq!(
            err("P:0,0,0,0,0,0|O:4,4,4,4,4,4|PS:24|OS:0|T:player|ST:in_progress|LA:-|W:-"),
            "Invalid state: a side has no seeds in its pits, so the game should be over"
        );
        assert_eq!(
            err("P:0,0,0,0,0,0|O:4,4,4,4,4,4|PS:24|OS:0|T:player|ST:game_over|LA:-|W:player"),
            "Invalid state: a finished game must have empty pits"
        );
        assert_eq!(
            err("P:0,0,0,0,0,0|O:0,0,0,0,0,0|PS:24|OS:24|T:player|ST:game_over|LA:-|W:player"),
            "Invalid state: W must be draw for these stores"
        );
        assert_eq!(
            err(
                "P:0,0,0,0,0,0|O:0,0,0,0,0,0|PS:30|OS:18|T:player|ST:game_over|LA:pit2,extra_turn,sweep|W:player"
            ),
            "Invalid state: a move that ends the game gives no extra turn"
        );
    }

    #[test]
    fn seeded_random_playouts_stay_valid() {
        for seed in 0..40u64 {
            let mut rng = Seed::Int(seed).rng();
            let mut s = MancalaState::new();
            let mut plies = 0;
            while !s.is_over() {
                let moves = s.legal_moves();
                assert!(!moves.is_empty());
                let mv = s
                    .choose_move(Level::Random, SearchLimits::default(), &mut rng)
                    .unwrap();
                assert!(moves.contains(&mv));
                s = s.apply(i64::from(mv)).unwrap();
                let text = s.to_string();
                assert_eq!(st(&text), s, "round trip of {text}");
                plies += 1;
                assert!(plies < 500);
            }
            assert!(s.last_action().unwrap().sweep);
            assert_eq!(
                u32::from(s.store(Side::Player)) + u32::from(s.store(Side::Opponent)),
                48
            );
        }
    }

    #[test]
    fn hard_takes_a_capture_and_prefers_it_in_ranking() {
        // Pit 1 (1 seed) lands in the empty pit 2 and captures 10 seeds opposite (their pit 5);
        // no other move ends in the store.
        let s = st("P:1,0,5,5,5,5|O:1,1,1,1,10,1|PS:6|OS:6|T:player|ST:in_progress|LA:-|W:-");
        let mut rng = Seed::Int(1).rng();
        assert_eq!(
            s.choose_move(Level::Hard, SearchLimits::with_depth(6), &mut rng),
            Some(1)
        );
        assert_eq!(s.ranked_moves()[0], 1);
        let mut ranked = s.ranked_moves();
        ranked.sort_unstable();
        assert_eq!(ranked, s.legal_moves());
    }

    #[test]
    fn hard_with_a_small_budget_beats_random() {
        let mut wins = 0;
        for seed in 0..6u64 {
            let mut rng = Seed::Int(seed).rng();
            let mut s = MancalaState::new();
            while !s.is_over() {
                let level = if s.turn() == Side::Player {
                    Level::Hard
                } else {
                    Level::Random
                };
                let mv = s
                    .choose_move(
                        level,
                        SearchLimits::with_time(Duration::from_millis(5)),
                        &mut rng,
                    )
                    .unwrap();
                s = s.apply(i64::from(mv)).unwrap();
            }
            if s.winner() == Some(Winner::Player) {
                wins += 1;
            }
        }
        assert!(wins >= 5, "hard won only {wins} of 6 against random");
    }

    #[test]
    fn choose_move_on_finished_game_is_none() {
        let s = st(
            "P:0,0,0,0,0,0|O:0,0,0,0,0,0|PS:30|OS:18|T:player|ST:game_over|LA:pit2,sweep|W:player",
        );
        let mut rng = Seed::Int(1).rng();
        for level in Level::ALL {
            assert_eq!(
                s.choose_move(level, SearchLimits::default(), &mut rng),
                None
            );
        }
        assert!(s.ranked_moves().is_empty());
    }

    proptest! {
        #[test]
        fn arbitrary_strings_never_panic(s in ".{0,120}") {
            let _ = s.parse::<MancalaState>();
        }

        #[test]
        fn near_valid_strings_never_panic(
            p in proptest::collection::vec(0u32..60, 0..8),
            ps in 0u32..60,
            la in "(-|pit[0-9](,capture[0-9]{1,3})?(,extra_turn)?(,sweep)?)",
            st in "(in_progress|game_over|x)",
            w in "(-|player|opponent|draw)",
        ) {
            let row = p.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            let text = format!("P:{row}|O:4,4,4,4,4,4|PS:{ps}|OS:0|T:player|ST:{st}|LA:{la}|W:{w}");
            if let Ok(state) = text.parse::<MancalaState>() {
                prop_assert_eq!(state.to_string(), text);
            }
        }
    }
}
