//! Checkers: American / English draughts on an 8×8 board.
//!
//! # State grammar
//!
//! ```text
//! <row8>/<row7>/<row6>/<row5>/<row4>/<row3>/<row2>/<row1> <turn>
//! ```
//!
//! - Eight rows separated by `/`, the first row is rank 8 and the last rank 1; inside a row the
//!   files run `a` to `h`, left to right. Every row has exactly eight characters.
//! - `w` / `W` is a white man / king, `b` / `B` a black man / king, `.` an empty square.
//! - Dark (playable) squares are those where file index + rank index is even, so `a1` is dark.
//!   A piece on a light square is a parse error; light squares must be `.`.
//! - `<turn>` is `w` or `b`, separated from the board by one space (surrounding whitespace and a
//!   run of spaces between the two parts are tolerated on input; the output always uses one).
//! - Further rules of the format (all parse errors, each with a clear message):
//!   at most 12 pieces per side; a man on its crowning row (a white man on rank 8, a black man on
//!   rank 1) must be written as a king. No other restriction (any number of kings, any turn).
//! - Every parse error message starts with `Invalid state: `.
//!
//! The start position is
//! `.b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. w`:
//! white men on ranks 1–3, black men on ranks 6–8, **white moves first** and moves up.
//!
//! # Rules
//!
//! - Men move one step diagonally forward (white up, black down) and capture forward only.
//! - Kings move and capture one step in all four diagonal directions (no flying kings).
//! - Captures are mandatory. A jump sequence continues while a further jump exists, so each move
//!   is a maximal path; a man that reaches its crowning row by a jump is crowned and the move ends
//!   there. A piece is never jumped twice; captured pieces are removed when the move ends (with
//!   one-square jumps a path can never land on a captured piece's square, so this is exact).
//! - When captures exist every legal move is a capture; a player may choose any capture path (no
//!   "longest capture" rule), exactly as in English draughts.
//! - The game is over when the side to move has no piece or no legal move; the side that moved
//!   last wins. The state carries no move counters, so there is no draw rule.
//!
//! # Move notation
//!
//! A move is the concatenation of the squares it visits: `c3d4` (a step), `b6d4f2` (a double
//! jump). Input is trimmed and lower-cased, and `-`, `x` and whitespace are removed, so `C3-D4`
//! and `c3xe5` are accepted. As a convenience a capture may also be given by its first and last
//! square only (`b6f2`) when exactly one legal capture path joins them. The normalised form
//! ([`Move`]'s `Display`) always lists every visited square.
//!
//! Distinct capture paths are distinct moves even when they capture the same pieces and end on
//! the same square (a king going round a square clockwise or counter-clockwise). Lists are sorted
//! by notation; no two legal moves share a notation.
//!
//! # Perft
//!
//! [`Position::perft`] counts leaf nodes with bulk counting at the last ply, counting every
//! distinct capture path (see above) as its own move. From the start position it reproduces the
//! published reference numbers (Aart Bik: 7, 49, 302, 1 469, 7 361, 36 768, 179 740, 845 931,
//! 3 963 680, 18 391 564, 85 242 128, …), which are counted the same way.
//!
//! # Representation
//!
//! Bitboards in a `u64` with "ghost" squares: rank `r`, file `f` (dark) lives at bit
//! `9·(r/2) + 5·(r%2) + f/2`, so every diagonal step is a shift by 4 or 5 (up) and the ghost bits
//! 4, 13, 22, 31 (and 36+) catch steps that would leave the board.

mod ai;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;

pub use ai::SearchResult;

use crate::{MoveError, ParseError};

/// The text of every move error (the document's wording).
pub const ILLEGAL_MOVE: &str = "Illegal move.";

/// The start position in the state grammar.
pub const START_STATE: &str =
    ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. w";

/// Maximum pieces per side.
const MAX_PIECES: u32 = 12;
/// Longest possible move path: the origin plus one landing square per captured piece.
const MAX_PATH: usize = 13;

/// Internal bit index of a dark square (file, rank both 0-based).
const fn bit_index(file: u8, rank: u8) -> u8 {
    9 * (rank / 2) + 5 * (rank % 2) + file / 2
}

/// The mask of all 32 playable squares.
const VALID: u64 = {
    let mut mask = 0u64;
    let mut rank = 0u8;
    while rank < 8 {
        let mut file = rank % 2;
        while file < 8 {
            mask |= 1u64 << bit_index(file, rank);
            file += 2;
        }
        rank += 1;
    }
    mask
};

/// Masks of the dark squares of each rank (index 0 = rank 1).
const RANKS: [u64; 8] = {
    let mut ranks = [0u64; 8];
    let mut rank = 0u8;
    while rank < 8 {
        let mut file = rank % 2;
        while file < 8 {
            ranks[rank as usize] |= 1u64 << bit_index(file, rank);
            file += 2;
        }
        rank += 1;
    }
    ranks
};

/// `(file, rank)` of each bit index; `(255, 255)` for ghost bits.
const SQUARE_OF_BIT: [(u8, u8); 64] = {
    let mut table = [(255u8, 255u8); 64];
    let mut rank = 0u8;
    while rank < 8 {
        let mut file = rank % 2;
        while file < 8 {
            table[bit_index(file, rank) as usize] = (file, rank);
            file += 2;
        }
        rank += 1;
    }
    table
};

/// A side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    /// White: starts on ranks 1–3, moves up, moves first.
    White,
    /// Black: starts on ranks 6–8, moves down.
    Black,
}

impl Color {
    /// The other side.
    pub fn opposite(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// `'w'` or `'b'`, as in the state string.
    pub fn as_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// `"w"` or `"b"`, as the tools report `turn` and `winner`.
    pub fn as_str(self) -> &'static str {
        match self {
            Color::White => "w",
            Color::Black => "b",
        }
    }

    /// `"white"` or `"black"`.
    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }

    /// The squares of the rank on which this side's men are crowned.
    fn crown_mask(self) -> u64 {
        match self {
            Color::White => RANKS[7],
            Color::Black => RANKS[0],
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A piece on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Piece {
    /// A white man (`w`).
    WhiteMan,
    /// A white king (`W`).
    WhiteKing,
    /// A black man (`b`).
    BlackMan,
    /// A black king (`B`).
    BlackKing,
}

impl Piece {
    /// The piece's owner.
    pub fn color(self) -> Color {
        match self {
            Piece::WhiteMan | Piece::WhiteKing => Color::White,
            Piece::BlackMan | Piece::BlackKing => Color::Black,
        }
    }

    /// True for kings.
    pub fn is_king(self) -> bool {
        matches!(self, Piece::WhiteKing | Piece::BlackKing)
    }

    /// The state-string character (`w`, `W`, `b`, `B`).
    pub fn as_char(self) -> char {
        match self {
            Piece::WhiteMan => 'w',
            Piece::WhiteKing => 'W',
            Piece::BlackMan => 'b',
            Piece::BlackKing => 'B',
        }
    }

    fn from_char(c: char) -> Option<Piece> {
        match c {
            'w' => Some(Piece::WhiteMan),
            'W' => Some(Piece::WhiteKing),
            'b' => Some(Piece::BlackMan),
            'B' => Some(Piece::BlackKing),
            _ => None,
        }
    }
}

/// A square `a1`…`h8` (light or dark).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square {
    file: u8,
    rank: u8,
}

impl Square {
    /// The square at 0-based `file` (a = 0) and `rank` (rank 1 = 0), if on the board.
    pub fn new(file: u8, rank: u8) -> Option<Square> {
        (file < 8 && rank < 8).then_some(Square { file, rank })
    }

    /// 0-based file (a = 0).
    pub fn file(self) -> u8 {
        self.file
    }

    /// 0-based rank (rank 1 = 0).
    pub fn rank(self) -> u8 {
        self.rank
    }

    /// True for the playable (dark) squares; `a1` is dark.
    pub fn is_dark(self) -> bool {
        (self.file + self.rank).is_multiple_of(2)
    }

    fn bit(self) -> Option<u8> {
        self.is_dark().then(|| bit_index(self.file, self.rank))
    }

    fn from_bit(bit: u8) -> Square {
        let (file, rank) = SQUARE_OF_BIT[usize::from(bit & 63)];
        Square { file, rank }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", char::from(b'a' + self.file), self.rank + 1)
    }
}

impl FromStr for Square {
    type Err = ParseError;

    /// Parses `c3` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bytes = s.as_bytes();
        if bytes.len() == 2 {
            let file = bytes[0].to_ascii_lowercase();
            let rank = bytes[1];
            if (b'a'..=b'h').contains(&file) && (b'1'..=b'8').contains(&rank) {
                return Ok(Square {
                    file: file - b'a',
                    rank: rank - b'1',
                });
            }
        }
        Err(ParseError::new(format!(
            "invalid square {s:?} (expected a1..h8)"
        )))
    }
}

/// Normalises move input: trims, lower-cases, and removes `-`, `x` and whitespace.
pub fn normalize_notation(input: &str) -> String {
    input
        .trim()
        .chars()
        .filter(|c| *c != '-' && *c != 'x' && *c != 'X' && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A move as written: the visited squares (at least two), without any check of legality.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Notation(pub Vec<Square>);

impl FromStr for Notation {
    type Err = ParseError;

    /// Parses (after [`normalize_notation`]) a run of two or more squares: `c3d4`, `b6d4f2`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = normalize_notation(s);
        if !norm.is_ascii() || norm.len() < 4 || !norm.len().is_multiple_of(2) {
            return Err(ParseError::new(format!(
                "invalid move {s:?}: expected two or more squares such as c3d4 or b6d4f2"
            )));
        }
        let squares = norm
            .as_bytes()
            .chunks(2)
            .map(|pair| std::str::from_utf8(pair).unwrap_or("").parse::<Square>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ParseError::new(format!("invalid move {s:?}: {e}")))?;
        Ok(Notation(squares))
    }
}

impl fmt::Display for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for sq in &self.0 {
            write!(f, "{sq}")?;
        }
        Ok(())
    }
}

/// A legal move: the path of visited squares and the captured pieces.
///
/// `Display` writes the normalised notation (`c3d4`, `b6d4f2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    path: [u8; MAX_PATH],
    len: u8,
    captured: u64,
}

impl Move {
    fn from_path(path: &[u8], captured: u64) -> Move {
        let mut buf = [0u8; MAX_PATH];
        let len = path.len().min(MAX_PATH);
        buf[..len].copy_from_slice(&path[..len]);
        Move {
            path: buf,
            len: len as u8,
            captured,
        }
    }

    fn path_bits(&self) -> &[u8] {
        &self.path[..usize::from(self.len)]
    }

    fn origin_bit(&self) -> u8 {
        self.path[0]
    }

    fn target_bit(&self) -> u8 {
        self.path[usize::from(self.len).saturating_sub(1)]
    }

    /// The square the piece starts on.
    pub fn from(&self) -> Square {
        Square::from_bit(self.origin_bit())
    }

    /// The square the piece ends on.
    pub fn to(&self) -> Square {
        Square::from_bit(self.target_bit())
    }

    /// Every visited square, the start included.
    pub fn path(&self) -> Vec<Square> {
        self.path_bits()
            .iter()
            .map(|&b| Square::from_bit(b))
            .collect()
    }

    /// True for a jump (a capture).
    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }

    /// Number of pieces captured.
    pub fn capture_count(&self) -> u32 {
        self.captured.count_ones()
    }

    /// The squares of the captured pieces, in board order.
    pub fn captured_squares(&self) -> Vec<Square> {
        bits(self.captured).map(Square::from_bit).collect()
    }

    /// The normalised notation (`b6d4f2`).
    pub fn notation(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in self.path_bits() {
            write!(f, "{}", Square::from_bit(b))?;
        }
        Ok(())
    }
}

/// Whether the game goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// The side to move has a legal move.
    InProgress,
    /// The side to move has no piece or no legal move; `winner` moved last.
    GameOver {
        /// The side that made the last move.
        winner: Color,
    },
}

impl Status {
    /// `"in_progress"` or `"game_over"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::InProgress => "in_progress",
            Status::GameOver { .. } => "game_over",
        }
    }
}

/// Iterates over the set bits of a mask, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let b = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            Some(b)
        }
    })
}

/// Receives the capture paths found by the jump search.
trait JumpSink {
    fn emit(&mut self, path: &[u8], captured: u64);
}

impl JumpSink for Vec<Move> {
    #[inline]
    fn emit(&mut self, path: &[u8], captured: u64) {
        self.push(Move::from_path(path, captured));
    }
}

/// Counts capture paths (perft's bulk counting).
struct Counter(u64);

impl JumpSink for Counter {
    #[inline]
    fn emit(&mut self, _path: &[u8], _captured: u64) {
        self.0 += 1;
    }
}

/// The fixed inputs of one piece's jump search.
struct JumpCtx {
    up: bool,
    down: bool,
    king: bool,
    crown: u64,
}

/// A checkers position: the pieces and the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    white: u64,
    black: u64,
    kings: u64,
    turn: Color,
}

impl Default for Position {
    fn default() -> Self {
        Position::start()
    }
}

impl Position {
    /// The start position: white men on ranks 1–3, black men on ranks 6–8, white to move.
    pub fn start() -> Position {
        Position {
            white: RANKS[0] | RANKS[1] | RANKS[2],
            black: RANKS[5] | RANKS[6] | RANKS[7],
            kings: 0,
            turn: Color::White,
        }
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The piece on `square`, if any (light squares are always empty).
    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        let bit = 1u64 << square.bit()?;
        let king = self.kings & bit != 0;
        if self.white & bit != 0 {
            Some(if king {
                Piece::WhiteKing
            } else {
                Piece::WhiteMan
            })
        } else if self.black & bit != 0 {
            Some(if king {
                Piece::BlackKing
            } else {
                Piece::BlackMan
            })
        } else {
            None
        }
    }

    /// Number of pieces (men and kings) of `color`.
    pub fn piece_count(&self, color: Color) -> u32 {
        self.side(color).count_ones()
    }

    fn side(&self, color: Color) -> u64 {
        match color {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    /// (own, opponent) pieces of the side to move.
    #[inline]
    fn sides(&self) -> (u64, u64) {
        match self.turn {
            Color::White => (self.white, self.black),
            Color::Black => (self.black, self.white),
        }
    }

    /// (pieces that may step up, pieces that may step down) for the side to move.
    #[inline]
    fn movers(&self) -> (u64, u64) {
        let (own, _) = self.sides();
        let own_kings = own & self.kings;
        match self.turn {
            Color::White => (own, own_kings),
            Color::Black => (own_kings, own),
        }
    }

    #[inline]
    fn empty(&self) -> u64 {
        VALID & !(self.white | self.black)
    }

    /// Pieces of the side to move that have at least one jump.
    #[inline]
    fn jumpers(&self) -> u64 {
        let (_, opp) = self.sides();
        let (up, down) = self.movers();
        let empty = self.empty();
        let up_j = ((opp >> 4) & (empty >> 8)) | ((opp >> 5) & (empty >> 10));
        let down_j = ((opp << 4) & (empty << 8)) | ((opp << 5) & (empty << 10));
        (up & up_j) | (down & down_j)
    }

    /// Runs the jump search of every piece in `jumpers`.
    #[inline]
    fn gen_jumps<S: JumpSink>(&self, jumpers: u64, sink: &mut S) {
        let (_, opp) = self.sides();
        let (up, down) = self.movers();
        let crown = self.turn.crown_mask();
        let mut path = [0u8; MAX_PATH];
        for b in bits(jumpers) {
            let bit = 1u64 << b;
            let ctx = JumpCtx {
                up: up & bit != 0,
                down: down & bit != 0,
                king: self.kings & bit != 0,
                crown,
            };
            path[0] = b;
            // The origin is empty while the piece travels (a king may come back to it).
            jump_dfs(&ctx, b, opp, self.empty() | bit, &mut path, 1, 0, sink);
        }
    }

    /// Appends every simple (non-capturing) move to `out`.
    #[inline]
    fn gen_simple(&self, out: &mut Vec<Move>) {
        let (up, down) = self.movers();
        let empty = self.empty();
        for d in [4u8, 5] {
            for t in bits((up << d) & empty) {
                out.push(Move::from_path(&[t - d, t], 0));
            }
            for t in bits((down >> d) & empty) {
                out.push(Move::from_path(&[t + d, t], 0));
            }
        }
    }

    /// Every legal move in generation order (fast, unsorted): only captures when one exists.
    fn generate(&self, out: &mut Vec<Move>) {
        out.clear();
        let jumpers = self.jumpers();
        if jumpers != 0 {
            self.gen_jumps(jumpers, out);
        } else {
            self.gen_simple(out);
        }
    }

    /// The number of legal moves (perft's bulk count).
    fn count_moves(&self) -> u64 {
        let jumpers = self.jumpers();
        if jumpers != 0 {
            let mut counter = Counter(0);
            self.gen_jumps(jumpers, &mut counter);
            counter.0
        } else {
            let (up, down) = self.movers();
            let empty = self.empty();
            u64::from(
                ((up << 4) & empty).count_ones()
                    + ((up << 5) & empty).count_ones()
                    + ((down >> 4) & empty).count_ones()
                    + ((down >> 5) & empty).count_ones(),
            )
        }
    }

    /// Every legal move, sorted by notation. When a capture exists only captures are legal.
    /// Empty when the game is over.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut moves = Vec::with_capacity(16);
        self.generate(&mut moves);
        moves.sort_by_cached_key(Move::to_string);
        moves.dedup();
        moves
    }

    /// True when the side to move has a capture (and so must capture).
    pub fn must_capture(&self) -> bool {
        self.jumpers() != 0
    }

    /// True when the side to move has no piece or no legal move.
    pub fn is_game_over(&self) -> bool {
        self.jumpers() == 0 && {
            let (up, down) = self.movers();
            let empty = self.empty();
            ((up << 4) | (up << 5)) & empty == 0 && ((down >> 4) | (down >> 5)) & empty == 0
        }
    }

    /// The game status.
    pub fn status(&self) -> Status {
        if self.is_game_over() {
            Status::GameOver {
                winner: self.turn.opposite(),
            }
        } else {
            Status::InProgress
        }
    }

    /// The winner, when the game is over.
    pub fn winner(&self) -> Option<Color> {
        match self.status() {
            Status::GameOver { winner } => Some(winner),
            Status::InProgress => None,
        }
    }

    /// The position after a simple step `from` → `to` known to be legal (no check).
    #[inline]
    fn after_step(&self, from: u8, to: u8) -> Position {
        let mut next = *self;
        let both = (1u64 << from) | (1u64 << to);
        match self.turn {
            Color::White => next.white ^= both,
            Color::Black => next.black ^= both,
        }
        if self.kings & (1u64 << from) != 0 {
            next.kings ^= both;
        } else if (1u64 << to) & self.turn.crown_mask() != 0 {
            next.kings |= 1u64 << to;
        }
        next.turn = self.turn.opposite();
        next
    }

    /// Plays a move known to be legal here (no check).
    #[inline]
    fn make(&mut self, mv: &Move) {
        let from = 1u64 << mv.origin_bit();
        let to = 1u64 << mv.target_bit();
        let was_king = self.kings & from != 0;
        match self.turn {
            Color::White => {
                self.white = (self.white & !from) | to;
                self.black &= !mv.captured;
            }
            Color::Black => {
                self.black = (self.black & !from) | to;
                self.white &= !mv.captured;
            }
        }
        self.kings &= !mv.captured;
        if was_king {
            self.kings = (self.kings & !from) | to;
        } else if to & self.turn.crown_mask() != 0 {
            self.kings |= to;
        }
        self.turn = self.turn.opposite();
    }

    /// The position after `mv`, which must be one of [`Position::legal_moves`]; otherwise an
    /// `Illegal move.` error (`game_over` or `illegal_move`).
    pub fn apply(&self, mv: &Move) -> Result<Position, MoveError> {
        let mut moves = Vec::with_capacity(16);
        self.generate(&mut moves);
        if moves.is_empty() {
            return Err(MoveError::new("game_over", ILLEGAL_MOVE));
        }
        if !moves.iter().any(|m| m.path_bits() == mv.path_bits()) {
            return Err(MoveError::new("illegal_move", ILLEGAL_MOVE));
        }
        let mut next = *self;
        next.make(mv);
        Ok(next)
    }

    /// Parses move input (see the module docs for the accepted forms) into the legal move it
    /// names.
    ///
    /// Errors carry the message `Illegal move.` and one of the reasons `game_over`,
    /// `invalid_format`, `no_piece`, `not_your_piece`, `capture_mandatory` (a plain step while a
    /// capture exists), `incomplete_capture` (a capture path stopped before its end),
    /// `ambiguous_move` (a first-and-last-square shorthand matching several paths) or
    /// `illegal_move`.
    pub fn parse_move(&self, input: &str) -> Result<Move, MoveError> {
        let err = |reason| MoveError::new(reason, ILLEGAL_MOVE);
        let moves = self.legal_moves();
        if moves.is_empty() {
            return Err(err("game_over"));
        }
        let Ok(Notation(squares)) = input.parse::<Notation>() else {
            return Err(err("invalid_format"));
        };
        let from = squares[0];
        match self.piece_at(from) {
            None => return Err(err("no_piece")),
            Some(p) if p.color() != self.turn => return Err(err("not_your_piece")),
            Some(_) => {}
        }
        let bits: Option<Vec<u8>> = squares.iter().map(|s| s.bit()).collect();
        let Some(bits) = bits else {
            return Err(err("illegal_move"));
        };
        if let Some(mv) = moves.iter().find(|m| m.path_bits() == bits.as_slice()) {
            return Ok(*mv);
        }
        if bits.len() == 2 {
            let mut shorthand = moves.iter().filter(|m| {
                m.is_capture() && m.origin_bit() == bits[0] && m.target_bit() == bits[1]
            });
            if let Some(first) = shorthand.next() {
                return match shorthand.next() {
                    None => Ok(*first),
                    Some(_) => Err(err("ambiguous_move")),
                };
            }
        }
        if self.must_capture() {
            if bits.len() == 2 {
                let mut simple = Vec::new();
                self.gen_simple(&mut simple);
                if simple.iter().any(|m| m.path_bits() == bits.as_slice()) {
                    return Err(err("capture_mandatory"));
                }
            }
            if moves
                .iter()
                .any(|m| m.path_bits().len() > bits.len() && m.path_bits().starts_with(&bits))
            {
                return Err(err("incomplete_capture"));
            }
        }
        Err(err("illegal_move"))
    }

    /// Parses and plays move input: the new position and the move played (whose `Display` is
    /// the normalised notation).
    pub fn play(&self, input: &str) -> Result<(Position, Move), MoveError> {
        let mv = self.parse_move(input)?;
        let mut next = *self;
        next.make(&mv);
        Ok((next, mv))
    }

    /// Counts the leaf nodes of the legal-move tree `depth` plies deep (bulk counting at the
    /// last ply; every distinct capture path is one move). `perft(0)` is 1.
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut buffers: Vec<Vec<Move>> = (1..depth).map(|_| Vec::with_capacity(32)).collect();
        perft_inner(self, depth, &mut buffers)
    }

    /// Perft split by root move: `(notation, count)` sorted by notation.
    pub fn divide(&self, depth: u32) -> Vec<(String, u64)> {
        self.legal_moves()
            .into_iter()
            .map(|mv| {
                let mut next = *self;
                next.make(&mv);
                (mv.to_string(), next.perft(depth.saturating_sub(1)))
            })
            .collect()
    }
}

fn perft_inner(pos: &Position, depth: u32, buffers: &mut [Vec<Move>]) -> u64 {
    if depth <= 1 {
        return pos.count_moves();
    }
    let Some((buf, rest)) = buffers.split_first_mut() else {
        return pos.count_moves();
    };
    let jumpers = pos.jumpers();
    if jumpers == 0 {
        // Simple moves straight from the bitboards: no move list needed.
        let (up, down) = pos.movers();
        let empty = pos.empty();
        let mut total = 0;
        for d in [4u8, 5] {
            for t in bits((up << d) & empty) {
                total += perft_inner(&pos.after_step(t - d, t), depth - 1, rest);
            }
            for t in bits((down >> d) & empty) {
                total += perft_inner(&pos.after_step(t + d, t), depth - 1, rest);
            }
        }
        return total;
    }
    buf.clear();
    pos.gen_jumps(jumpers, buf);
    let mut total = 0;
    for mv in buf.iter() {
        let mut next = *pos;
        next.make(mv);
        total += perft_inner(&next, depth - 1, rest);
    }
    total
}

/// Depth-first search of every maximal jump path of one piece currently on `at`.
///
/// `opp` holds the opponent pieces not yet captured, `empty` the squares a jump may land on.
#[allow(clippy::too_many_arguments)]
fn jump_dfs<S: JumpSink>(
    ctx: &JumpCtx,
    at: u8,
    opp: u64,
    empty: u64,
    path: &mut [u8; MAX_PATH],
    len: usize,
    captured: u64,
    sink: &mut S,
) {
    let mut extended = false;
    if len < MAX_PATH {
        for d in [4u8, 5] {
            if ctx.up {
                let mid = at + d;
                let land = at + 2 * d;
                if opp & (1u64 << mid) != 0 && empty & (1u64 << land) != 0 {
                    extended = true;
                    jump_step(ctx, land, mid, opp, empty, path, len, captured, sink);
                }
            }
            if ctx.down && at >= 2 * d {
                let mid = at - d;
                let land = at - 2 * d;
                if opp & (1u64 << mid) != 0 && empty & (1u64 << land) != 0 {
                    extended = true;
                    jump_step(ctx, land, mid, opp, empty, path, len, captured, sink);
                }
            }
        }
    }
    if !extended && len > 1 {
        sink.emit(&path[..len], captured);
    }
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn jump_step<S: JumpSink>(
    ctx: &JumpCtx,
    land: u8,
    mid: u8,
    opp: u64,
    empty: u64,
    path: &mut [u8; MAX_PATH],
    len: usize,
    captured: u64,
    sink: &mut S,
) {
    path[len] = land;
    let captured = captured | (1u64 << mid);
    if !ctx.king && ctx.crown & (1u64 << land) != 0 {
        // A man crowned by a jump stops there.
        sink.emit(&path[..=len], captured);
    } else {
        jump_dfs(
            ctx,
            land,
            opp & !(1u64 << mid),
            empty,
            path,
            len + 1,
            captured,
            sink,
        );
    }
}

fn invalid(detail: impl fmt::Display) -> ParseError {
    ParseError::new(format!("Invalid state: {detail}"))
}

impl FromStr for Position {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split_whitespace();
        let Some(board) = parts.next() else {
            return Err(invalid("empty state (expected <row8>/…/<row1> <turn>)"));
        };
        let Some(turn) = parts.next() else {
            return Err(invalid(
                "missing turn after the board (expected ' w' or ' b')",
            ));
        };
        if let Some(extra) = parts.next() {
            return Err(invalid(format!("unexpected text {extra:?} after the turn")));
        }
        let rows: Vec<&str> = board.split('/').collect();
        if rows.len() != 8 {
            return Err(invalid(format!(
                "expected 8 rows separated by '/', found {}",
                rows.len()
            )));
        }
        let mut pos = Position {
            white: 0,
            black: 0,
            kings: 0,
            turn: Color::White,
        };
        for (i, row) in rows.iter().enumerate() {
            let rank = 7 - i as u8;
            let count = row.chars().count();
            if count != 8 {
                return Err(invalid(format!(
                    "row {} (rank {}) has {count} squares, expected 8",
                    i + 1,
                    rank + 1
                )));
            }
            for (file, c) in row.chars().enumerate() {
                let sq = Square {
                    file: file as u8,
                    rank,
                };
                if c == '.' {
                    continue;
                }
                let Some(piece) = Piece::from_char(c) else {
                    return Err(invalid(format!(
                        "unexpected character {c:?} on {sq} (expected w, W, b, B or .)"
                    )));
                };
                let Some(b) = sq.bit() else {
                    return Err(invalid(format!(
                        "piece '{c}' on light square {sq}; pieces stand on dark squares only \
                         (file + rank even, e.g. a1, b2, c1) and light squares must be '.'"
                    )));
                };
                if !piece.is_king() && (1u64 << b) & piece.color().crown_mask() != 0 {
                    return Err(invalid(format!(
                        "{} man on {sq} stands on its crowning row; write it as a king ('{}')",
                        piece.color().name(),
                        piece.as_char().to_ascii_uppercase()
                    )));
                }
                let bit = 1u64 << b;
                match piece.color() {
                    Color::White => pos.white |= bit,
                    Color::Black => pos.black |= bit,
                }
                if piece.is_king() {
                    pos.kings |= bit;
                }
            }
        }
        for color in [Color::White, Color::Black] {
            let n = pos.piece_count(color);
            if n > MAX_PIECES {
                return Err(invalid(format!(
                    "{} has {n} pieces; at most {MAX_PIECES} are allowed",
                    color.name()
                )));
            }
        }
        pos.turn = match turn {
            "w" => Color::White,
            "b" => Color::Black,
            other => {
                return Err(invalid(format!("turn must be 'w' or 'b', found {other:?}")));
            }
        };
        Ok(pos)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..8u8).rev() {
            for file in 0..8u8 {
                let c = self
                    .piece_at(Square { file, rank })
                    .map_or('.', Piece::as_char);
                write!(f, "{c}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        write!(f, " {}", self.turn.as_char())
    }
}
