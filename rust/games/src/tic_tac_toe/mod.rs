//! Tic-tac-toe (3 × 3) with a perfect built-in player.
//!
//! # State grammar
//!
//! ```text
//! G:<grid>|T:<turn>|ST:<status>|LA:<last_action>|W:<winner>|P:<player_symbol>|O:<opponent_symbol>
//! ```
//!
//! - `G`: three rows of three characters, **separated by `/`** (as in four-in-a-row). The first
//!   row of the string is row `1`, the last row `3`; within a row the characters are columns
//!   `A`, `B`, `C`. So `A1` is the first character and `C3` the last. Cells hold `.` (empty) or
//!   the symbols `X` / `O`; which symbol is whose is given by `P` and `O`.
//!   The start is `G:.../.../...`.
//! - `T`: `player` or `opponent`, the side to move. The player moves first whatever symbol it
//!   holds, so `T` follows from the counts (equal: `player`; one more player mark: `opponent`).
//!   After a game-ending move the turn still passes to the other side.
//! - `ST`: `in_progress` or `game_over`.
//! - `LA`: the last move as an upper-case coordinate (`B2`), or `-` when unknown (the start or a
//!   position set up by hand). When given, that square must hold the last mover's symbol.
//! - `W`: `player`, `opponent`, `draw` or `-`.
//! - `P` / `O`: the player's and the opponent's symbols, `X` and `O` in either order (never the
//!   same). A game started with `side: "O"` is `P:O|O:X` and the player (O) still moves first.
//!
//! The parser accepts exactly the canonical form (after trimming surrounding whitespace), so
//! `parse(s).to_string() == s`. It checks that the position arises from a legal game: counts
//! consistent with the turn, some order of alternating moves (ending with `LA` when given) that
//! reaches it without a line appearing before the last move, and `W`/`ST` agreeing with the board.
//! Errors read `Invalid state: <detail>`.
//!
//! # Moves
//!
//! A move is a [`Coord`]: letter = column, digit = row, trimmed and case-insensitive on input,
//! upper-case on output. Illegal moves fail with `Illegal move.` and the reasons `invalid_coord`,
//! `square_occupied` or `game_over`.
//!
//! # AI
//!
//! `hard` is perfect minimax (memoised negamax): it never loses and prefers quicker wins (and
//! slower losses); `easy` takes an immediate win, otherwise plays a random move one time in
//! three and the perfect move otherwise; `random` is uniform.

use std::fmt;
use std::str::FromStr;

use rand::RngExt;

use crate::seed::GameRng;
use crate::{Level, MoveError, ParseError, SearchLimits};

pub use crate::side::{Side, Status, Winner};

/// The message of every illegal move.
pub const ILLEGAL_MOVE: &str = "Illegal move.";

/// The eight lines as 9-bit masks (bit = row * 3 + column).
const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];

const FULL: u16 = 0b111_111_111;

/// Tie-break order of equally good moves: centre, corners, edges.
const PREFERENCE: [u8; 9] = [4, 0, 2, 6, 8, 1, 3, 5, 7];

fn has_line(bits: u16) -> bool {
    LINES.iter().any(|&l| (bits & l).count_ones() == 3)
}

/// A symbol on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    /// `X`.
    X,
    /// `O`.
    O,
}

impl Mark {
    /// `'X'` or `'O'`.
    pub fn as_char(self) -> char {
        match self {
            Mark::X => 'X',
            Mark::O => 'O',
        }
    }

    /// The other symbol.
    pub fn other(self) -> Mark {
        match self {
            Mark::X => Mark::O,
            Mark::O => Mark::X,
        }
    }

    fn parse(s: &str) -> Option<Mark> {
        match s {
            "X" => Some(Mark::X),
            "O" => Some(Mark::O),
            _ => None,
        }
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

impl FromStr for Mark {
    type Err = ParseError;

    /// `X` or `O`, trimmed and case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mark::parse(&s.trim().to_ascii_uppercase())
            .ok_or_else(|| ParseError::new(format!("unknown symbol {s:?} (expected X or O)")))
    }
}

/// A square: column letter `A`–`C`, row digit `1`–`3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coord(u8);

impl Coord {
    /// All squares in row-major order: `A1`, `B1`, `C1`, `A2`, …, `C3`.
    pub const ALL: [Coord; 9] = [
        Coord(0),
        Coord(1),
        Coord(2),
        Coord(3),
        Coord(4),
        Coord(5),
        Coord(6),
        Coord(7),
        Coord(8),
    ];

    /// The square at 0-based `column` and `row` (`None` outside the board).
    pub fn new(column: usize, row: usize) -> Option<Coord> {
        (column < 3 && row < 3).then(|| Coord((row * 3 + column) as u8))
    }

    /// 0-based column (A = 0).
    pub fn column(self) -> usize {
        usize::from(self.0 % 3)
    }

    /// 0-based row (row "1" = 0).
    pub fn row(self) -> usize {
        usize::from(self.0 / 3)
    }

    /// Row-major index 0–8 (`A1` = 0, `C3` = 8).
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    fn bit(self) -> u16 {
        1 << self.0
    }
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'A' + self.0 % 3) as char, self.0 / 3 + 1)
    }
}

impl FromStr for Coord {
    type Err = MoveError;

    /// `A1`–`C3`, trimmed and case-insensitive; anything else is `invalid_coord`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().as_bytes() {
            [c @ (b'A'..=b'C' | b'a'..=b'c'), r @ b'1'..=b'3'] => {
                let col = usize::from(c.to_ascii_uppercase() - b'A');
                let row = usize::from(r - b'1');
                Ok(Coord((row * 3 + col) as u8))
            }
            _ => Err(MoveError::new("invalid_coord", ILLEGAL_MOVE)),
        }
    }
}

/// A tic-tac-toe position with its bookkeeping fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TicTacToe {
    /// Squares of each side (index 0 = player, 1 = opponent), bit = row * 3 + column.
    marks: [u16; 2],
    player_mark: Mark,
    last: Option<Coord>,
    winner: Option<Winner>,
}

impl Default for TicTacToe {
    fn default() -> Self {
        Self::new(Mark::X)
    }
}

fn side_index(side: Side) -> usize {
    match side {
        Side::Player => 0,
        Side::Opponent => 1,
    }
}

impl TicTacToe {
    /// The empty board; the player holds `player_mark` and moves first.
    pub fn new(player_mark: Mark) -> Self {
        TicTacToe {
            marks: [0, 0],
            player_mark,
            last: None,
            winner: None,
        }
    }

    /// The player's symbol.
    pub fn player_mark(&self) -> Mark {
        self.player_mark
    }

    /// The opponent's symbol.
    pub fn opponent_mark(&self) -> Mark {
        self.player_mark.other()
    }

    /// Number of marks on the board.
    pub fn moves_played(&self) -> usize {
        (self.marks[0] | self.marks[1]).count_ones() as usize
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
    pub fn last_move(&self) -> Option<Coord> {
        self.last
    }

    /// Who holds a square.
    pub fn side_at(&self, coord: Coord) -> Option<Side> {
        if self.marks[0] & coord.bit() != 0 {
            Some(Side::Player)
        } else if self.marks[1] & coord.bit() != 0 {
            Some(Side::Opponent)
        } else {
            None
        }
    }

    /// The symbol on a square.
    pub fn mark_at(&self, coord: Coord) -> Option<Mark> {
        self.side_at(coord).map(|s| match s {
            Side::Player => self.player_mark,
            Side::Opponent => self.player_mark.other(),
        })
    }

    /// Empty squares in row-major order (`A1`, `B1`, `C1`, `A2`, …); empty once the game is over.
    pub fn legal_moves(&self) -> Vec<Coord> {
        if self.winner.is_some() {
            return Vec::new();
        }
        let occupied = self.marks[0] | self.marks[1];
        Coord::ALL
            .into_iter()
            .filter(|c| occupied & c.bit() == 0)
            .collect()
    }

    /// The position after the side to move marks `coord`.
    pub fn apply(&self, coord: Coord) -> Result<TicTacToe, MoveError> {
        if self.winner.is_some() {
            return Err(MoveError::new("game_over", ILLEGAL_MOVE));
        }
        if (self.marks[0] | self.marks[1]) & coord.bit() != 0 {
            return Err(MoveError::new("square_occupied", ILLEGAL_MOVE));
        }
        let side = side_index(self.turn());
        let mut next = *self;
        next.marks[side] |= coord.bit();
        next.last = Some(coord);
        next.winner = if has_line(next.marks[side]) {
            Some(Winner::side(self.turn()))
        } else if next.marks[0] | next.marks[1] == FULL {
            Some(Winner::Draw)
        } else {
            None
        };
        Ok(next)
    }

    /// The exact minimax value of every legal move for the side to move, in row-major order:
    /// a win completed with `n` marks on the board scores `10 - n` (sooner is higher), a loss the
    /// negation, a draw `0`.
    pub fn move_values(&self) -> Vec<(Coord, i32)> {
        if self.winner.is_some() {
            return Vec::new();
        }
        let t = side_index(self.turn());
        let (cur, opp) = (self.marks[t], self.marks[1 - t]);
        let mut memo = Memo::new();
        self.legal_moves()
            .into_iter()
            .map(|c| {
                let nc = cur | c.bit();
                let v = if has_line(nc) {
                    10 - (nc | opp).count_ones() as i32
                } else if nc | opp == FULL {
                    0
                } else {
                    -memo.negamax(opp, nc)
                };
                (c, v)
            })
            .collect()
    }

    /// Legal moves best first for the side to move, by exact minimax value; equal values keep
    /// the order centre, corners, edges.
    pub fn ranked_moves(&self) -> Vec<Coord> {
        let values = self.move_values();
        let mut ordered: Vec<(i32, usize, Coord)> = values
            .into_iter()
            .map(|(c, v)| {
                let pref = PREFERENCE.iter().position(|&p| usize::from(p) == c.index());
                (v, pref.unwrap_or(9), c)
            })
            .collect();
        ordered.sort_by_key(|&(v, pref, _)| (std::cmp::Reverse(v), pref));
        ordered.into_iter().map(|(_, _, c)| c).collect()
    }

    /// The built-in opponent's move for the side to move, or `None` when the game is over.
    /// The search is exhaustive and fast, so `limits` are not needed.
    pub fn choose_move(
        &self,
        level: Level,
        _limits: SearchLimits,
        rng: &mut GameRng,
    ) -> Option<Coord> {
        let moves = self.legal_moves();
        if moves.is_empty() {
            return None;
        }
        let values = self.move_values();
        let best = values.iter().map(|&(_, v)| v).max()?;
        let optimal: Vec<Coord> = values
            .iter()
            .filter(|&&(_, v)| v == best)
            .map(|&(c, _)| c)
            .collect();
        match level {
            Level::Random => Some(moves[rng.random_range(0..moves.len())]),
            Level::Easy => {
                let t = side_index(self.turn());
                if let Some(&win) = moves.iter().find(|c| has_line(self.marks[t] | c.bit())) {
                    Some(win)
                } else if rng.random_range(0..3) == 0 {
                    Some(moves[rng.random_range(0..moves.len())])
                } else {
                    Some(optimal[rng.random_range(0..optimal.len())])
                }
            }
            Level::Hard => Some(optimal[rng.random_range(0..optimal.len())]),
        }
    }
}

/// Memoised negamax over (side to move, other side) bitboards.
struct Memo {
    values: Vec<i8>,
}

impl Memo {
    const UNKNOWN: i8 = i8::MIN;

    fn new() -> Self {
        Memo {
            values: vec![Self::UNKNOWN; 19_683],
        }
    }

    fn key(cur: u16, opp: u16) -> usize {
        (0..9).fold(0usize, |acc, i| {
            let d = if cur & (1 << i) != 0 {
                1
            } else if opp & (1 << i) != 0 {
                2
            } else {
                0
            };
            acc * 3 + d
        })
    }

    /// Value for the side to move (`cur`) of a running game.
    fn negamax(&mut self, cur: u16, opp: u16) -> i32 {
        let key = Self::key(cur, opp);
        if self.values[key] != Self::UNKNOWN {
            return i32::from(self.values[key]);
        }
        let occupied = cur | opp;
        let mut best = i32::MIN;
        for i in 0..9 {
            let bit = 1u16 << i;
            if occupied & bit != 0 {
                continue;
            }
            let nc = cur | bit;
            let v = if has_line(nc) {
                10 - (nc | opp).count_ones() as i32
            } else if nc | opp == FULL {
                0
            } else {
                -self.negamax(opp, nc)
            };
            best = best.max(v);
        }
        self.values[key] = best as i8;
        best
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

/// True when alternating moves (player first), with no line before the final move and the final
/// move on `last` when given, reach `marks`.
fn reachable(marks: [u16; 2], last: Option<Coord>) -> bool {
    fn walk(
        marks: [u16; 2],
        occupied: u16,
        top: bool,
        last: Option<Coord>,
        seen: &mut [bool; 512],
    ) -> bool {
        if occupied == 0 {
            return true;
        }
        if seen[usize::from(occupied)] {
            return false;
        }
        seen[usize::from(occupied)] = true;
        let mover = if occupied.count_ones() % 2 == 1 { 0 } else { 1 };
        for i in 0..9 {
            let bit = 1u16 << i;
            if marks[mover] & occupied & bit == 0 || (top && last.is_some_and(|l| l.bit() != bit)) {
                continue;
            }
            let rest = occupied ^ bit;
            if has_line(marks[0] & rest) || has_line(marks[1] & rest) {
                continue;
            }
            if walk(marks, rest, false, last, seen) {
                return true;
            }
        }
        false
    }
    walk(marks, marks[0] | marks[1], true, last, &mut [false; 512])
}

impl FromStr for TicTacToe {
    type Err = ParseError;

    // Long on purpose: the state string's grammar read once, field by field in its order, each
    // field's error named where it is read (split up, the fields' order and checks would scatter).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let parts: Vec<&str> = s.split('|').collect();
        if parts.len() != 7 {
            return Err(invalid(format!(
                "expected 7 fields G|T|ST|LA|W|P|O separated by '|', found {}",
                parts.len()
            )));
        }
        let grid = field(parts[0], "G")?;
        let turn = field(parts[1], "T")?;
        let status = field(parts[2], "ST")?;
        let last = field(parts[3], "LA")?;
        let winner = field(parts[4], "W")?;
        let p = field(parts[5], "P")?;
        let o = field(parts[6], "O")?;

        let player_mark = Mark::parse(p)
            .ok_or_else(|| invalid(format!("player symbol must be X or O, found {p:?}")))?;
        let opponent_mark = Mark::parse(o)
            .ok_or_else(|| invalid(format!("opponent symbol must be X or O, found {o:?}")))?;
        if player_mark == opponent_mark {
            return Err(invalid("player and opponent symbols must differ"));
        }

        let rows: Vec<&str> = grid.split('/').collect();
        if rows.len() != 3 {
            return Err(invalid(format!(
                "grid must have 3 rows separated by '/', found {}",
                rows.len()
            )));
        }
        let mut marks = [0u16; 2];
        for (r, row) in rows.iter().enumerate() {
            let chars: Vec<char> = row.chars().collect();
            if chars.len() != 3 {
                return Err(invalid(format!(
                    "grid row {} must have 3 cells, found {}",
                    r + 1,
                    chars.len()
                )));
            }
            for (c, ch) in chars.into_iter().enumerate() {
                let bit = 1u16 << (r * 3 + c);
                match ch {
                    '.' => {}
                    'X' | 'O' => {
                        let mark = if ch == 'X' { Mark::X } else { Mark::O };
                        marks[usize::from(mark != player_mark)] |= bit;
                    }
                    other => {
                        return Err(invalid(format!(
                            "unexpected grid character {other:?} (expected '.', 'X' or 'O')"
                        )));
                    }
                }
            }
        }

        let (pc, oc) = (marks[0].count_ones(), marks[1].count_ones());
        let expected_turn = if pc == oc {
            Side::Player
        } else if pc == oc + 1 {
            Side::Opponent
        } else {
            return Err(invalid(format!(
                "mark counts player={pc}, opponent={oc} are impossible (the player moves first)"
            )));
        };
        let turn = match turn {
            "player" => Side::Player,
            "opponent" => Side::Opponent,
            other => {
                return Err(invalid(format!(
                    "turn must be player or opponent, found {other:?}"
                )));
            }
        };
        if turn != expected_turn {
            return Err(invalid(format!(
                "turn is {turn} but the mark counts (player={pc}, opponent={oc}) say {expected_turn}"
            )));
        }
        let last_mover = turn.other();

        let last = match last {
            "-" => None,
            _ => {
                let coord = match last.as_bytes() {
                    [b'A'..=b'C', b'1'..=b'3'] => last.parse::<Coord>().ok(),
                    _ => None,
                }
                .ok_or_else(|| {
                    invalid(format!(
                        "last action must be an upper-case square A1-C3 or '-', found {last:?}"
                    ))
                })?;
                if marks[side_index(last_mover)] & coord.bit() == 0 {
                    return Err(invalid(format!(
                        "last action {coord} is not a square of the {last_mover}, who moved last"
                    )));
                }
                Some(coord)
            }
        };

        let lines = [has_line(marks[0]), has_line(marks[1])];
        let expected_winner = match lines {
            [true, true] => return Err(invalid("both sides have three in a row")),
            [true, false] | [false, true] => {
                let side = if lines[0] {
                    Side::Player
                } else {
                    Side::Opponent
                };
                if side != last_mover {
                    return Err(invalid(format!(
                        "the {side} has three in a row but did not move last"
                    )));
                }
                Some(Winner::side(side))
            }
            [false, false] if marks[0] | marks[1] == FULL => Some(Winner::Draw),
            _ => None,
        };
        if !reachable(marks, last) {
            return Err(invalid(
                "no order of legal moves reaches this position (the game would have ended earlier)",
            ));
        }
        let winner = match winner {
            "-" => None,
            "player" => Some(Winner::Player),
            "opponent" => Some(Winner::Opponent),
            "draw" => Some(Winner::Draw),
            other => {
                return Err(invalid(format!(
                    "winner must be player, opponent, draw or '-', found {other:?}"
                )));
            }
        };
        if winner != expected_winner {
            let show = |w: Option<Winner>| w.map_or("-", Winner::as_str);
            return Err(invalid(format!(
                "winner is {} but the board says {}",
                show(winner),
                show(expected_winner)
            )));
        }
        Status::parse_matching(status, winner.is_some()).map_err(invalid)?;
        Ok(TicTacToe {
            marks,
            player_mark,
            last,
            winner,
        })
    }
}

impl fmt::Display for TicTacToe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("G:")?;
        for r in 0..3 {
            if r > 0 {
                f.write_str("/")?;
            }
            for c in 0..3 {
                let coord = Coord((r * 3 + c) as u8);
                match self.mark_at(coord) {
                    Some(m) => write!(f, "{m}")?,
                    None => f.write_str(".")?,
                }
            }
        }
        write!(f, "|T:{}|ST:{}|LA:", self.turn(), self.status())?;
        match self.last {
            Some(c) => write!(f, "{c}")?,
            None => f.write_str("-")?,
        }
        write!(
            f,
            "|W:{}|P:{}|O:{}",
            self.winner.map_or("-", Winner::as_str),
            self.player_mark,
            self.opponent_mark()
        )
    }
}

#[cfg(test)]
mod tests;
