//! Four-in-a-row (Connect Four, 7 columns × 6 rows) on bitboards, with a solver.
//!
//! # State grammar
//!
//! ```text
//! G:<grid>|T:<turn>|ST:<status>|LA:<last_action>|W:<winner>
//! ```
//!
//! - `G`: six rows of seven characters, **separated by `/`**; the first row of the string is the
//!   top of the board, the last the bottom. `.` is empty, `R` a player disc, `Y` an opponent
//!   disc. Columns are numbered 1–7 from the left.
//!   The start is `G:......./......./......./......./......./.......`.
//! - `T`: `player` or `opponent`, the side to move. The player (`R`) always moves first, so `T`
//!   follows from the disc counts (equal counts: `player`; one more `R`: `opponent`) and must
//!   agree with them. After a game-ending move the turn still passes to the other side.
//! - `ST`: `in_progress` or `game_over`.
//! - `LA`: the column of the last move as one digit `1`–`7`, or `-` when unknown (the start,
//!   or a position set up by hand). When given, the top disc of that column must belong to the
//!   side that moved last.
//! - `W`: `player`, `opponent`, `draw` or `-` (game still running).
//!
//! Exactly one space-free canonical form exists for every position, so `parse(s).to_string()`
//! gives back `s` (surrounding whitespace is trimmed before parsing).
//!
//! The parser checks that the string describes a reachable game: no floating discs (gravity),
//! disc counts consistent with the turn, at most one side with four in a row, the winner having
//! made the last move, the winning line(s) all passing through one disc that could have been
//! played last (the `LA` disc when `LA` is given), `W`/`ST` agreeing with the board (a full
//! board without a four is a draw). Errors read `Invalid state: <detail>`.
//!
//! # Moves
//!
//! A move is a [`Column`] (1–7). Illegal moves fail with the message `Illegal move.` and the
//! reasons `invalid_column`, `column_full` or `game_over`.
//!
//! # AI
//!
//! [`FourInARow::choose_move`] plays at three [`Level`]s: `random` (uniform), `easy` (always takes
//! a win, usually blocks, otherwise a shallow search with randomness) and `hard` (the solver in
//! [`search`]: negamax alpha-beta on bitboards with a transposition table, iterative deepening,
//! threat-based move ordering; it returns the proven best move when it solves the position within
//! the time budget and otherwise the best move of the deepest completed iteration).

mod bitboard;
pub mod search;

use std::fmt;
use std::str::FromStr;

use rand::RngExt;

use crate::seed::GameRng;
use crate::{Level, MoveError, ParseError, SearchLimits};

use bitboard::{
    BOARD_MASK, CELL_WEIGHTS, H1, column_mask, has_four, playable, top_mask, winning_cells,
};
pub use bitboard::{CELLS, HEIGHT, WIDTH};

/// The message of every illegal move.
pub const ILLEGAL_MOVE: &str = "Illegal move.";

/// Columns from the centre outwards: the default move ordering.
pub(crate) const CENTER_ORDER: [usize; WIDTH] = [3, 2, 4, 1, 5, 0, 6];

pub use crate::side::{Side, Status, Winner};

/// A column, 1–7 from the left (stored 0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Column(u8);

impl Column {
    /// All columns, left to right.
    pub const ALL: [Column; WIDTH] = [
        Column(0),
        Column(1),
        Column(2),
        Column(3),
        Column(4),
        Column(5),
        Column(6),
    ];

    /// The column with the given 1-based number, or an `invalid_column` error.
    pub fn from_number(n: i64) -> Result<Column, MoveError> {
        if (1..=WIDTH as i64).contains(&n) {
            Ok(Column((n - 1) as u8))
        } else {
            Err(MoveError::new("invalid_column", ILLEGAL_MOVE))
        }
    }

    /// The column with the given 0-based index (`None` when ≥ 7).
    pub fn from_index(index: usize) -> Option<Column> {
        (index < WIDTH).then_some(Column(index as u8))
    }

    /// The 1-based number (1–7).
    pub fn number(self) -> u8 {
        self.0 + 1
    }

    /// The 0-based index (0–6).
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

impl FromStr for Column {
    type Err = MoveError;

    /// Parses `1`–`7` (surrounding whitespace allowed); anything else is `invalid_column`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let n: i64 = s
            .trim()
            .parse()
            .map_err(|_| MoveError::new("invalid_column", ILLEGAL_MOVE))?;
        Column::from_number(n)
    }
}

/// A four-in-a-row position with its bookkeeping fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FourInARow {
    /// Discs of each side (index 0 = player `R`, 1 = opponent `Y`).
    discs: [u64; 2],
    /// The last move, when known.
    last: Option<Column>,
    /// The result, once the game is over.
    winner: Option<Winner>,
}

impl Default for FourInARow {
    fn default() -> Self {
        Self::new()
    }
}

impl FourInARow {
    /// The empty board, player (`R`) to move.
    pub fn new() -> Self {
        FourInARow {
            discs: [0, 0],
            last: None,
            winner: None,
        }
    }

    fn mask(&self) -> u64 {
        self.discs[0] | self.discs[1]
    }

    /// Number of discs on the board.
    pub fn moves_played(&self) -> usize {
        self.mask().count_ones() as usize
    }

    /// The side to move (after a game-ending move, the side that would move next).
    pub fn turn(&self) -> Side {
        if self.moves_played().is_multiple_of(2) {
            Side::Player
        } else {
            Side::Opponent
        }
    }

    /// `in_progress` or `game_over`.
    pub fn status(&self) -> Status {
        if self.winner.is_some() {
            Status::GameOver
        } else {
            Status::InProgress
        }
    }

    /// The result, if the game is over.
    pub fn winner(&self) -> Option<Winner> {
        self.winner
    }

    /// The last move, if known.
    pub fn last_move(&self) -> Option<Column> {
        self.last
    }

    /// The disc at `column`, `row` (both 0-based; row 0 = bottom).
    pub fn disc_at(&self, column: usize, row: usize) -> Option<Side> {
        if column >= WIDTH || row >= HEIGHT {
            return None;
        }
        let bit = bitboard::cell(column, row);
        if self.discs[0] & bit != 0 {
            Some(Side::Player)
        } else if self.discs[1] & bit != 0 {
            Some(Side::Opponent)
        } else {
            None
        }
    }

    /// Discs in a column (0–6).
    pub fn column_height(&self, column: Column) -> usize {
        (self.mask() & column_mask(column.index())).count_ones() as usize
    }

    /// True when the column has room for a disc.
    pub fn can_play(&self, column: Column) -> bool {
        self.mask() & top_mask(column.index()) == 0
    }

    /// Legal moves, left to right; empty once the game is over.
    pub fn legal_moves(&self) -> Vec<Column> {
        if self.winner.is_some() {
            return Vec::new();
        }
        Column::ALL
            .into_iter()
            .filter(|&c| self.can_play(c))
            .collect()
    }

    /// Checks a move without playing it.
    pub fn check_move(&self, column: Column) -> Result<(), MoveError> {
        if self.winner.is_some() {
            return Err(MoveError::new("game_over", ILLEGAL_MOVE));
        }
        if !self.can_play(column) {
            return Err(MoveError::new("column_full", ILLEGAL_MOVE));
        }
        Ok(())
    }

    /// The position after dropping a disc of the side to move into `column`.
    pub fn apply(&self, column: Column) -> Result<FourInARow, MoveError> {
        self.check_move(column)?;
        let side = self.turn();
        let mask = self.mask();
        let bit = playable(mask) & column_mask(column.index());
        let mut next = *self;
        next.discs[side.index()] |= bit;
        next.last = Some(column);
        next.winner = if has_four(next.discs[side.index()]) {
            Some(Winner::side(side))
        } else if next.moves_played() == CELLS {
            Some(Winner::Draw)
        } else {
            None
        };
        Ok(next)
    }

    /// Legal moves ordered best first for the side to move by a cheap evaluation: immediate
    /// wins, then blocks of the opponent's immediate wins, then ordinary moves by threats made
    /// and centre weight, and last the moves that let the opponent win at once (by playing on
    /// top). Ties keep the centre-first order.
    pub fn ranked_moves(&self) -> Vec<Column> {
        if self.winner.is_some() {
            return Vec::new();
        }
        let (cur, opp) = self.sides_to_move();
        let mask = cur | opp;
        let my_wins = winning_cells(cur, mask);
        let opp_wins = winning_cells(opp, mask);
        let mut scored: Vec<(i32, Column)> = Vec::with_capacity(WIDTH);
        for col in CENTER_ORDER {
            let column = Column(col as u8);
            if !self.can_play(column) {
                continue;
            }
            let bit = playable(mask) & column_mask(col);
            let score = if my_wins & bit != 0 {
                10_000
            } else if opp_wins & bit != 0 {
                5_000
            } else if opp_wins & (bit << 1) & BOARD_MASK != 0 {
                -5_000
            } else {
                let new_mask = mask | bit;
                let threats = (winning_cells(cur | bit, new_mask) & !new_mask).count_ones() as i32;
                let row = (bit.trailing_zeros() as usize) % H1;
                threats * 20 + CELL_WEIGHTS[col][row]
            };
            scored.push((score, column));
        }
        scored.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        scored.into_iter().map(|(_, c)| c).collect()
    }

    /// The built-in opponent's move for the side to move, or `None` when the game is over.
    pub fn choose_move(
        &self,
        level: Level,
        limits: SearchLimits,
        rng: &mut GameRng,
    ) -> Option<Column> {
        let moves = self.legal_moves();
        if moves.is_empty() {
            return None;
        }
        match level {
            Level::Random => Some(moves[rng.random_range(0..moves.len())]),
            Level::Easy => Some(self.easy_move(rng)),
            Level::Hard => search::best_move(self, limits).map(|r| r.best),
        }
    }

    /// Easy: always wins at once when it can, blocks nine times in ten, otherwise a 2-ply
    /// search picks the move, with a one-in-four chance of a random move that does not hand
    /// the opponent an immediate win.
    fn easy_move(&self, rng: &mut GameRng) -> Column {
        let ranked = self.ranked_moves();
        let (cur, opp) = self.sides_to_move();
        let mask = cur | opp;
        let cell_of = |c: Column| playable(mask) & column_mask(c.index());
        let my_wins = winning_cells(cur, mask);
        if let Some(&c) = ranked.iter().find(|&&c| my_wins & cell_of(c) != 0) {
            return c;
        }
        let opp_wins = winning_cells(opp, mask);
        if let Some(&c) = ranked.iter().find(|&&c| opp_wins & cell_of(c) != 0)
            && rng.random_range(0..10) < 9
        {
            return c;
        }
        if rng.random_range(0..4) == 0 {
            let safe: Vec<Column> = ranked
                .iter()
                .copied()
                .filter(|&c| opp_wins & (cell_of(c) << 1) & BOARD_MASK == 0)
                .collect();
            let pool = if safe.is_empty() { &ranked } else { &safe };
            return pool[rng.random_range(0..pool.len())];
        }
        search::best_move(self, SearchLimits::with_depth(2))
            .map(|r| r.best)
            .unwrap_or(ranked[0])
    }

    /// (discs of the side to move, discs of the other side).
    fn sides_to_move(&self) -> (u64, u64) {
        let t = self.turn().index();
        (self.discs[t], self.discs[1 - t])
    }
}

fn invalid(detail: impl fmt::Display) -> ParseError {
    ParseError::new(format!("Invalid state: {detail}"))
}

fn field<'a>(part: &'a str, key: &str) -> Result<&'a str, ParseError> {
    part.strip_prefix(key)
        .and_then(|rest| rest.strip_prefix(':'))
        .ok_or_else(|| invalid(format!("expected field {key}:<value>, found {part:?}")))
}

/// True when every line of `discs` passes through `bit` (so `bit` can have been the winning
/// move).
fn lines_through(discs: u64, bit: u64) -> bool {
    discs & bit != 0 && !has_four(discs ^ bit)
}

/// True when some order of legal moves (R first, alternating, nobody completing four before the
/// last move) produces `discs`; `last` forces the column of the final move.
///
/// Works backwards: a prefix of the game is described by the column heights alone (the discs
/// are fixed), so at most 7^7 prefixes exist; a bitset marks the ones already explored.
fn reachable(discs: [u64; 2], last: Option<Column>) -> bool {
    let mask = discs[0] | discs[1];
    let heights: [usize; WIDTH] =
        std::array::from_fn(|c| (mask & column_mask(c)).count_ones() as usize);
    let encode = |h: &[usize; WIDTH]| h.iter().rev().fold(0usize, |acc, &x| acc * 7 + x);
    let prefix_mask =
        |h: &[usize; WIDTH]| (0..WIDTH).fold(0u64, |m, c| m | (((1u64 << h[c]) - 1) << (c * H1)));
    let mut seen = vec![0u64; 7usize.pow(WIDTH as u32).div_ceil(64)];
    let mut stack = vec![(heights, true)];
    while let Some((h, top)) = stack.pop() {
        let count: usize = h.iter().sum();
        if count == 0 {
            return true;
        }
        let code = encode(&h);
        if seen[code / 64] & (1 << (code % 64)) != 0 {
            continue;
        }
        seen[code / 64] |= 1 << (code % 64);
        // The disc played last belongs to R when the count is odd (R moves first).
        let mover = if count % 2 == 1 { 0 } else { 1 };
        for c in 0..WIDTH {
            if h[c] == 0 || (top && last.is_some_and(|l| l.index() != c)) {
                continue;
            }
            if discs[mover] & bitboard::cell(c, h[c] - 1) == 0 {
                continue;
            }
            let mut next = h;
            next[c] -= 1;
            let m = prefix_mask(&next);
            // Before the last move the game was still running: no four on the board.
            if has_four(discs[0] & m) || has_four(discs[1] & m) {
                continue;
            }
            stack.push((next, false));
        }
    }
    false
}

impl FromStr for FourInARow {
    type Err = ParseError;

    // Long on purpose: the state string's grammar read once, field by field in its order, each
    // field's error named where it is read (split up, the fields' order and checks would scatter).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let parts: Vec<&str> = s.split('|').collect();
        if parts.len() != 5 {
            return Err(invalid(format!(
                "expected 5 fields G|T|ST|LA|W separated by '|', found {}",
                parts.len()
            )));
        }
        let grid = field(parts[0], "G")?;
        let turn = field(parts[1], "T")?;
        let status = field(parts[2], "ST")?;
        let last = field(parts[3], "LA")?;
        let winner = field(parts[4], "W")?;

        // Grid.
        let rows: Vec<&str> = grid.split('/').collect();
        if rows.len() != HEIGHT {
            return Err(invalid(format!(
                "grid must have {HEIGHT} rows separated by '/', found {}",
                rows.len()
            )));
        }
        let mut discs = [0u64; 2];
        for (i, row) in rows.iter().enumerate() {
            let chars: Vec<char> = row.chars().collect();
            if chars.len() != WIDTH {
                return Err(invalid(format!(
                    "grid row {} must have {WIDTH} cells, found {}",
                    i + 1,
                    chars.len()
                )));
            }
            let r = HEIGHT - 1 - i;
            for (c, ch) in chars.into_iter().enumerate() {
                let bit = bitboard::cell(c, r);
                match ch {
                    '.' => {}
                    'R' => discs[0] |= bit,
                    'Y' => discs[1] |= bit,
                    other => {
                        return Err(invalid(format!(
                            "unexpected grid character {other:?} (expected '.', 'R' or 'Y')"
                        )));
                    }
                }
            }
        }
        let mask = discs[0] | discs[1];
        for c in 0..WIDTH {
            let col = (mask & column_mask(c)) >> (c * H1);
            if col & (col + 1) != 0 {
                return Err(invalid(format!("floating disc in column {}", c + 1)));
            }
        }

        // Counts and turn.
        let (r, y) = (discs[0].count_ones(), discs[1].count_ones());
        let expected_turn = if r == y {
            Side::Player
        } else if r == y + 1 {
            Side::Opponent
        } else {
            return Err(invalid(format!(
                "disc counts R={r}, Y={y} are impossible (R moves first, so R = Y or R = Y + 1)"
            )));
        };
        let turn = Side::parse(turn)
            .ok_or_else(|| invalid(format!("turn must be player or opponent, found {turn:?}")))?;
        if turn != expected_turn {
            return Err(invalid(format!(
                "turn is {turn} but the disc counts (R={r}, Y={y}) say {expected_turn}"
            )));
        }
        let last_mover = turn.other();

        // Last action.
        let last = match last {
            "-" => None,
            _ => {
                let col = match last.as_bytes() {
                    [d @ b'1'..=b'7'] => Column(d - b'1'),
                    _ => {
                        return Err(invalid(format!(
                            "last action must be a column 1-7 or '-', found {last:?}"
                        )));
                    }
                };
                let colbits = mask & column_mask(col.index());
                if colbits == 0 {
                    return Err(invalid(format!("last action column {col} is empty")));
                }
                let top = 1u64 << (63 - colbits.leading_zeros());
                if discs[last_mover.index()] & top == 0 {
                    return Err(invalid(format!(
                        "the top disc of last action column {col} is not the {last_mover}'s"
                    )));
                }
                Some(col)
            }
        };

        // Winner.
        let fours = [has_four(discs[0]), has_four(discs[1])];
        let board_winner = match fours {
            [true, true] => return Err(invalid("both sides have four in a row")),
            [true, false] => Some(Side::Player),
            [false, true] => Some(Side::Opponent),
            [false, false] => None,
        };
        let expected_winner = if let Some(side) = board_winner {
            if side != last_mover {
                return Err(invalid(format!(
                    "the {side} has four in a row but did not move last"
                )));
            }
            let d = discs[side.index()];
            let possible_last: Vec<u64> = match last {
                Some(col) => {
                    let colbits = mask & column_mask(col.index());
                    vec![1u64 << (63 - colbits.leading_zeros())]
                }
                None => (0..WIDTH)
                    .filter_map(|c| {
                        let colbits = mask & column_mask(c);
                        (colbits != 0).then(|| 1u64 << (63 - colbits.leading_zeros()))
                    })
                    .collect(),
            };
            if !possible_last.iter().any(|&b| lines_through(d, b)) {
                return Err(invalid(
                    "the game would have ended before this position (no single last move makes the four in a row)",
                ));
            }
            Some(Winner::side(side))
        } else if mask.count_ones() as usize == CELLS {
            Some(Winner::Draw)
        } else {
            None
        };
        let winner = match winner {
            "-" => None,
            w => Some(Winner::parse(w).ok_or_else(|| {
                invalid(format!(
                    "winner must be player, opponent, draw or '-', found {w:?}"
                ))
            })?),
        };
        if winner != expected_winner {
            let show = |w: Option<Winner>| w.map_or("-", Winner::as_str);
            return Err(invalid(format!(
                "winner is {} but the board says {}",
                show(winner),
                show(expected_winner)
            )));
        }
        if !reachable(discs, last) {
            return Err(invalid(
                "no order of legal moves reaches this position (R moves first, discs alternate)",
            ));
        }
        Status::parse_matching(status, winner.is_some()).map_err(invalid)?;
        Ok(FourInARow {
            discs,
            last,
            winner,
        })
    }
}

impl fmt::Display for FourInARow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("G:")?;
        for i in 0..HEIGHT {
            if i > 0 {
                f.write_str("/")?;
            }
            let r = HEIGHT - 1 - i;
            for c in 0..WIDTH {
                let ch = match self.disc_at(c, r) {
                    None => '.',
                    Some(Side::Player) => 'R',
                    Some(Side::Opponent) => 'Y',
                };
                write!(f, "{ch}")?;
            }
        }
        write!(f, "|T:{}|ST:{}|LA:", self.turn(), self.status())?;
        match self.last {
            Some(c) => write!(f, "{c}")?,
            None => f.write_str("-")?,
        }
        f.write_str("|W:")?;
        f.write_str(self.winner.map_or("-", Winner::as_str))
    }
}

#[cfg(test)]
mod tests;
