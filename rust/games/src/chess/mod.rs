//! Chess: standard rules over [`shakmaty`], FEN state, UCI/SAN moves and a built-in engine.
//!
//! # State grammar
//!
//! The state is a FEN string (`<board> <turn> <castling> <ep> <halfmove> <fullmove>`), parsed with
//! shakmaty and validated as a standard chess position. Choices beyond FEN itself:
//!
//! - **Output** ([`ChessGame`]'s `Display`) always writes all six fields and writes the en-passant
//!   square only when an en-passant capture is actually legal (shakmaty
//!   [`EnPassantMode::Legal`], as python-chess does). So `… b KQkq e3 0 1` is accepted and written
//!   back as `… b KQkq - 0 1`; canonical FENs round-trip exactly.
//! - **Input** is lenient where python-chess is: surrounding whitespace is ignored; missing trailing
//!   fields default to `w`, `-`, `-`, `0`, `1`; a fullmove number of `0` becomes `1`; castling
//!   rights that the position cannot have (king or rook not on its square) and an impossible
//!   en-passant square are dropped; more material than a game can reach (nine queens) is allowed.
//! - **Rejected** (`Invalid FEN: <detail>`): syntax errors, an empty board, a missing king or extra
//!   kings, pawns on the first/last rank, the side not to move being in check, and impossible
//!   checks (three checkers, aligned sliding checkers).
//!
//! # Moves
//!
//! Input is trimmed; UCI is tried first on the lower-cased text (`e2e4`, `e1g1` castles — the
//! Chess960 form `e1h1` is accepted too — and a promotion needs its suffix, `e7e8q`); if that is
//! not a syntactically valid UCI move, SAN is tried on the trimmed original (`Nf3`, `O-O`, `exd5`,
//! `e8=Q+`; castling may also be written `0-0`, `o-o-o`). Output uses UCI with castling as the king's two-square move and SAN with its `+`/`#`
//! suffix (as python-chess's `board.san()`).
//!
//! # End of game
//!
//! The game is over (and [`ChessGame::legal_moves`] is empty, every move is refused with
//! `Illegal move: the game is over`) on, in python-chess's order of precedence: checkmate,
//! insufficient material (neither side can mate, python-chess's definition), stalemate, and the
//! seventy-five-move rule (halfmove clock ≥ 150). Threefold/fivefold repetition cannot be detected
//! from a single FEN (it has no history), so it is never reported; the fifty-move rule is a claim,
//! not an automatic end, and is not reported either.

mod search;

use std::fmt;
use std::str::FromStr;

use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError, SanPlus};
use shakmaty::uci::UciMove;
use shakmaty::{
    CastlingMode, CastlingSide, Chess, Color, EnPassantMode, Move, Position, Rank, Role, Square,
    attacks,
};

pub use search::{SearchReport, analyse, evaluate, ranked_moves};

use crate::seed::GameRng;
use crate::{Level, MoveError, ParseError, SearchLimits};

/// A chess position: the game state that travels as a FEN string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChessGame {
    pos: Chess,
}

/// Who won a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Winner {
    /// White won.
    White,
    /// Black won.
    Black,
    /// Nobody won.
    Draw,
}

impl Winner {
    /// The winner as the tools write it: `w`, `b` or `draw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Winner::White => "w",
            Winner::Black => "b",
            Winner::Draw => "draw",
        }
    }
}

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// The side to move is in check and has no legal move.
    Checkmate,
    /// The side to move is not in check and has no legal move.
    Stalemate,
    /// Neither side has the material to deliver mate.
    InsufficientMaterial,
    /// 75 moves by each side without a capture or a pawn move (halfmove clock ≥ 150).
    SeventyFiveMoveRule,
}

impl EndReason {
    /// The reason as the tools write it (`checkmate`, `stalemate`, `insufficient_material`,
    /// `seventy_five_move_rule`).
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Stalemate => "stalemate",
            EndReason::InsufficientMaterial => "insufficient_material",
            EndReason::SeventyFiveMoveRule => "seventy_five_move_rule",
        }
    }
}

/// The end of a game: who won and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GameEnd {
    /// The winner (or a draw).
    pub winner: Winner,
    /// Why the game ended.
    pub reason: EndReason,
}

/// A move that was played: the move itself and its two notations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRecord {
    /// The move.
    pub mv: Move,
    /// UCI, castling as the king's two-square move (`e1g1`).
    pub uci: String,
    /// SAN with a `+`/`#` suffix (`Nf3`, `O-O`, `Qxf7#`).
    pub san: String,
}

/// The halfmove clock at which the seventy-five-move rule ends the game.
pub const SEVENTY_FIVE_MOVE_HALFMOVES: u32 = 150;

const PREFIX: &str = "Illegal move: ";

fn illegal(reason: &'static str, why: impl fmt::Display) -> MoveError {
    MoveError::new(reason, format!("{PREFIX}{why}"))
}

/// The UCI text of a move, castling written as the king's two-square move.
pub fn uci(mv: &Move) -> String {
    UciMove::from_standard(*mv).to_string()
}

impl ChessGame {
    /// The standard starting position, white to move.
    pub fn new() -> Self {
        ChessGame::default()
    }

    /// Wraps a shakmaty position.
    pub fn from_position(pos: Chess) -> Self {
        ChessGame { pos }
    }

    /// The underlying shakmaty position.
    pub fn position(&self) -> &Chess {
        &self.pos
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.pos.turn()
    }

    /// The side to move as the tools write it: `w` or `b`.
    pub fn turn_str(&self) -> &'static str {
        match self.pos.turn() {
            Color::White => "w",
            Color::Black => "b",
        }
    }

    /// True when the side to move is in check.
    pub fn is_check(&self) -> bool {
        self.pos.is_check()
    }

    /// The end of the game, if it is over (see the module docs for the rules and their order).
    pub fn outcome(&self) -> Option<GameEnd> {
        let no_moves = self.pos.legal_moves().is_empty();
        let check = self.pos.is_check();
        if no_moves && check {
            let winner = match self.pos.turn() {
                Color::White => Winner::Black,
                Color::Black => Winner::White,
            };
            return Some(GameEnd {
                winner,
                reason: EndReason::Checkmate,
            });
        }
        let reason = if self.pos.is_insufficient_material() {
            EndReason::InsufficientMaterial
        } else if no_moves {
            EndReason::Stalemate
        } else if self.pos.halfmoves() >= SEVENTY_FIVE_MOVE_HALFMOVES {
            EndReason::SeventyFiveMoveRule
        } else {
            return None;
        };
        Some(GameEnd {
            winner: Winner::Draw,
            reason,
        })
    }

    /// True when the game is over.
    pub fn is_game_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// The legal moves; empty when the game is over (also by insufficient material or the
    /// seventy-five-move rule, where shakmaty would still generate moves).
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.is_game_over() {
            return Vec::new();
        }
        self.pos.legal_moves().to_vec()
    }

    /// The legal moves as UCI strings, sorted; empty when the game is over.
    pub fn legal_moves_uci(&self) -> Vec<String> {
        let mut moves: Vec<String> = self.legal_moves().iter().map(uci).collect();
        moves.sort();
        moves
    }

    /// The SAN of a legal move in this position, with its `+`/`#` suffix.
    pub fn san(&self, mv: &Move) -> String {
        SanPlus::from_move(self.pos.clone(), *mv).to_string()
    }

    /// Parses a move (UCI first, then SAN; see the module docs) and checks that it is legal here.
    ///
    /// # Errors
    ///
    /// `Invalid move format` (`invalid_format`) when the text is neither UCI nor SAN;
    /// `Illegal move: <why>` otherwise, with reasons `game_over`, `no_piece`, `wrong_side`,
    /// `king_in_check`, `promotion_required`, `invalid_promotion`, `castling_not_allowed`,
    /// `ambiguous_move` or `illegal_move`.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let trimmed = text.trim();
        let lower = trimmed.to_ascii_lowercase();
        if let Ok(u) = UciMove::from_ascii(lower.as_bytes()) {
            self.ensure_not_over()?;
            return self.resolve_uci(u);
        }
        let castling = trimmed.contains('-')
            && trimmed
                .chars()
                .all(|c| matches!(c, '0' | 'o' | 'O' | '-' | '+' | '#'));
        let san_text = if castling {
            trimmed.replace(['0', 'o'], "O")
        } else {
            trimmed.to_string()
        };
        if let Ok(san) = San::from_ascii(san_text.as_bytes()) {
            self.ensure_not_over()?;
            return self.resolve_san(san);
        }
        Err(MoveError::new("invalid_format", "Invalid move format"))
    }

    /// Parses and plays a move given as text; the position is unchanged on error.
    ///
    /// # Errors
    ///
    /// As [`ChessGame::parse_move`].
    pub fn apply(&mut self, text: &str) -> Result<MoveRecord, MoveError> {
        let mv = self.parse_move(text)?;
        self.play(mv)
    }

    /// Plays a move; the position is unchanged on error.
    ///
    /// # Errors
    ///
    /// `Illegal move: the game is over` (`game_over`) or `Illegal move: piece cannot move there`
    /// (`illegal_move`) for a move that is not legal here.
    pub fn play(&mut self, mv: Move) -> Result<MoveRecord, MoveError> {
        self.ensure_not_over()?;
        if !self.pos.is_legal(mv) {
            return Err(illegal("illegal_move", "piece cannot move there"));
        }
        let uci = uci(&mv);
        let san = SanPlus::from_move_and_play_unchecked(&mut self.pos, mv).to_string();
        Ok(MoveRecord { mv, uci, san })
    }

    /// The built-in AI's move, or `None` when the game is over.
    ///
    /// - [`Level::Random`]: a uniformly random legal move.
    /// - [`Level::Easy`]: a depth 1–2 search with random noise on the scores.
    /// - [`Level::Hard`]: iterative-deepening alpha-beta within `limits` (see [`analyse`]).
    pub fn choose_move(
        &self,
        level: Level,
        limits: SearchLimits,
        rng: &mut GameRng,
    ) -> Option<Move> {
        if self.is_game_over() {
            return None;
        }
        search::choose_move(&self.pos, level, limits, rng)
    }

    /// The legal moves ordered best first by a quick evaluation (see [`ranked_moves`]).
    pub fn ranked_moves(&self) -> Vec<Move> {
        if self.is_game_over() {
            return Vec::new();
        }
        search::ranked_moves(&self.pos)
    }

    fn ensure_not_over(&self) -> Result<(), MoveError> {
        if self.is_game_over() {
            Err(illegal("game_over", "the game is over"))
        } else {
            Ok(())
        }
    }

    fn resolve_uci(&self, u: UciMove) -> Result<Move, MoveError> {
        match u {
            UciMove::Null => Err(illegal("illegal_move", "null moves are not allowed")),
            UciMove::Put { .. } => Err(illegal(
                "illegal_move",
                "piece drops are not allowed in standard chess",
            )),
            UciMove::Normal {
                from,
                to,
                promotion,
            } => self.resolve_from_to(from, to, promotion),
        }
    }

    /// Finds the legal move `from`→`to` (with `promotion`), or explains why there is none.
    fn resolve_from_to(
        &self,
        from: Square,
        to: Square,
        promotion: Option<Role>,
    ) -> Result<Move, MoveError> {
        let board = self.pos.board();
        let Some(piece) = board.piece_at(from) else {
            return Err(illegal("no_piece", format_args!("no piece on {from}")));
        };
        if piece.color != self.pos.turn() {
            return Err(illegal("wrong_side", "not your turn"));
        }
        let legal = self.pos.legal_moves();
        let matching: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| {
                m.from() == Some(from)
                    && match *m {
                        Move::Castle { rook, .. } => {
                            rook == to || UciMove::from_standard(*m).to() == Some(to)
                        }
                        _ => m.to() == to,
                    }
            })
            .collect();
        if let Some(m) = matching.iter().find(|m| m.promotion() == promotion) {
            return Ok(*m);
        }
        if promotion.is_some() {
            let last_rank = self.pos.turn().fold_wb(Rank::Eighth, Rank::First);
            if piece.role != Role::Pawn || to.rank() != last_rank {
                return Err(illegal(
                    "invalid_promotion",
                    "only a pawn reaching the last rank can promote",
                ));
            }
        }
        if !matching.is_empty() {
            return Err(match promotion {
                None => illegal("promotion_required", "promotion piece required"),
                Some(_) => illegal("invalid_promotion", "invalid promotion piece"),
            });
        }
        if piece.role == Role::King
            && let Some(side) = self.castling_intent(from, to)
        {
            return Err(self.castling_error(side));
        }
        if board.by_color(piece.color).contains(to) {
            return Err(illegal("illegal_move", "piece cannot move there"));
        }
        if self.pseudo_legal(from, to, piece.role) {
            Err(illegal("king_in_check", "king would be in check"))
        } else {
            Err(illegal("illegal_move", "piece cannot move there"))
        }
    }

    /// The castling side a king move `from`→`to` means, if it is a castling attempt (two files
    /// along the back rank from the e-file, or onto one of our own rooks on the back rank).
    fn castling_intent(&self, from: Square, to: Square) -> Option<CastlingSide> {
        let turn = self.pos.turn();
        let back = turn.backrank();
        if from.rank() != back || to.rank() != back {
            return None;
        }
        let own_rook = (self.pos.board().by_color(turn) & self.pos.board().rooks()).contains(to);
        let two_files =
            from == Square::from_coords(shakmaty::File::E, back) && from.distance(to) == 2;
        if own_rook || two_files {
            Some(CastlingSide::from_king_side(from.file() < to.file()))
        } else {
            None
        }
    }

    /// Explains why castling on `side` is illegal here.
    fn castling_error(&self, side: CastlingSide) -> MoveError {
        let turn = self.pos.turn();
        let castles = self.pos.castles();
        let Some(rook) = castles.rook(turn, side) else {
            return illegal("castling_not_allowed", "castling rights have been lost");
        };
        if self.pos.is_check() {
            return illegal("king_in_check", "cannot castle out of check");
        }
        if castles
            .path(turn, side)
            .intersects(self.pos.board().occupied())
        {
            return illegal("castling_not_allowed", "castling path is blocked");
        }
        let Some(king) = self.pos.board().king_of(turn) else {
            return illegal("castling_not_allowed", "castling is not allowed");
        };
        let king_to = Square::from_coords(side.king_to_file(), turn.backrank());
        let occupied = self.pos.board().occupied().without(king).without(rook);
        let passing = attacks::between(king, king_to);
        let attacked = |sq: Square| self.pos.board().attacks_to(sq, !turn, occupied).any();
        if passing.into_iter().any(attacked) {
            illegal("king_in_check", "cannot castle through check")
        } else if attacked(king_to) {
            illegal("king_in_check", "king would be in check")
        } else {
            illegal("castling_not_allowed", "castling is not allowed")
        }
    }

    /// True when `role` on `from` could move to `to` if checks were ignored.
    fn pseudo_legal(&self, from: Square, to: Square, role: Role) -> bool {
        let board = self.pos.board();
        let turn = self.pos.turn();
        let occupied = board.occupied();
        if board.by_color(turn).contains(to) {
            return false;
        }
        if role != Role::Pawn {
            return attacks::attacks(from, role.of(turn), occupied).contains(to);
        }
        let forward: i32 = turn.fold_wb(8, -8);
        let is_capture_target =
            board.by_color(!turn).contains(to) || self.pos.maybe_ep_square() == Some(to);
        if attacks::pawn_attacks(turn, from).contains(to) {
            return is_capture_target;
        }
        if occupied.contains(to) {
            return false;
        }
        if from.offset(forward) == Some(to) {
            return true;
        }
        let start_rank = turn.fold_wb(Rank::Second, Rank::Seventh);
        from.rank() == start_rank
            && from.offset(2 * forward) == Some(to)
            && from
                .offset(forward)
                .is_some_and(|mid| !occupied.contains(mid))
    }

    fn resolve_san(&self, san: San) -> Result<Move, MoveError> {
        match san.to_move(&self.pos) {
            Ok(m) => Ok(m),
            Err(SanError::AmbiguousSan) => Err(illegal(
                "ambiguous_move",
                format_args!("ambiguous move {san}, add the origin file or rank"),
            )),
            Err(SanError::IllegalSan) => Err(self.explain_illegal_san(san)),
        }
    }

    fn explain_illegal_san(&self, san: San) -> MoveError {
        match san {
            San::Null => illegal("illegal_move", "null moves are not allowed"),
            San::Put { .. } => illegal(
                "illegal_move",
                "piece drops are not allowed in standard chess",
            ),
            San::Castle(side) => self.castling_error(side),
            San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            } => {
                let board = self.pos.board();
                let ours = board.by_color(self.pos.turn()) & board.by_role(role);
                let candidates: Vec<Square> = ours
                    .into_iter()
                    .filter(|sq| {
                        file.is_none_or(|f| f == sq.file()) && rank.is_none_or(|r| r == sq.rank())
                    })
                    .filter(|sq| self.pseudo_legal(*sq, to, role))
                    .collect();
                let Some(&from) = candidates.first() else {
                    return illegal("illegal_move", "piece cannot move there");
                };
                match self.resolve_from_to(from, to, promotion) {
                    Err(e) => e,
                    Ok(_) if capture => {
                        illegal("illegal_move", format_args!("nothing to capture on {to}"))
                    }
                    Ok(_) => illegal(
                        "illegal_move",
                        format_args!("{to} is occupied, write the capture with x"),
                    ),
                }
            }
        }
    }
}

impl FromStr for ChessGame {
    type Err = ParseError;

    // shakmaty's `PositionError<Chess>` carries the position; it is large but short-lived.
    #[allow(clippy::result_large_err)]
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        if text.is_empty() {
            return Err(ParseError::new("Invalid FEN: empty string"));
        }
        let fen = Fen::from_ascii(text.as_bytes())
            .map_err(|e| ParseError::new(format!("Invalid FEN: {e}")))?;
        let pos: Chess = fen
            .into_position(CastlingMode::Standard)
            .or_else(|e| e.ignore_invalid_castling_rights())
            .or_else(|e| e.ignore_invalid_ep_square())
            .or_else(|e| e.ignore_too_much_material())
            .map_err(|e| ParseError::new(format!("Invalid FEN: {e}")))?;
        Ok(ChessGame { pos })
    }
}

impl fmt::Display for ChessGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Fen::from_position(&self.pos, EnPassantMode::Legal))
    }
}

/// Counts the leaf nodes of the legal-move tree to `depth` plies (standard perft: pure move
/// generation, the draw rules of [`ChessGame::outcome`] are not applied).
pub fn perft(game: &ChessGame, depth: u32) -> u64 {
    fn go(pos: &Chess, depth: u32) -> u64 {
        let moves = pos.legal_moves();
        if depth <= 1 {
            return if depth == 0 { 1 } else { moves.len() as u64 };
        }
        moves
            .iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play_unchecked(*m);
                go(&child, depth - 1)
            })
            .sum()
    }
    go(&game.pos, depth)
}

#[cfg(test)]
mod tests;
