//! The sides, statuses and winners shared by the player-versus-opponent games (four-in-a-row,
//! tic-tac-toe, mancala, sea battle), with the words their state strings use.

use std::fmt;

/// A side of a two-player game: the player (the user; moves first) or the opponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The user; moves first.
    Player,
    /// The built-in or LLM opponent.
    Opponent,
}

impl Side {
    /// `"player"` or `"opponent"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Player => "player",
            Side::Opponent => "opponent",
        }
    }

    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::Player => Side::Opponent,
            Side::Opponent => Side::Player,
        }
    }

    /// 0 for the player, 1 for the opponent (array index).
    pub(crate) fn index(self) -> usize {
        match self {
            Side::Player => 0,
            Side::Opponent => 1,
        }
    }

    /// Parses `player` / `opponent`.
    pub(crate) fn parse(s: &str) -> Option<Side> {
        match s {
            "player" => Some(Side::Player),
            "opponent" => Some(Side::Opponent),
            _ => None,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the game is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Moves remain.
    InProgress,
    /// The game has ended (a win, a draw, a sunk fleet, emptied pits).
    GameOver,
}

impl Status {
    /// `"in_progress"` or `"game_over"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::InProgress => "in_progress",
            Status::GameOver => "game_over",
        }
    }

    /// Checks an `ST` field against what the board says (`game_over` exactly when someone won
    /// or drew). The error is the parse-error detail, without the `Invalid state: ` prefix.
    pub(crate) fn parse_matching(text: &str, game_over: bool) -> Result<Status, String> {
        let status = Status::parse(text)
            .ok_or_else(|| format!("status must be in_progress or game_over, found {text:?}"))?;
        let expected = if game_over {
            Status::GameOver
        } else {
            Status::InProgress
        };
        if status != expected {
            return Err(format!("status is {status} but the board says {expected}"));
        }
        Ok(status)
    }

    /// Parses `in_progress` / `game_over`.
    pub(crate) fn parse(s: &str) -> Option<Status> {
        match s {
            "in_progress" => Some(Status::InProgress),
            "game_over" => Some(Status::GameOver),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a finished game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Winner {
    /// The player won.
    Player,
    /// The opponent won.
    Opponent,
    /// Neither side won (games that can draw).
    Draw,
}

impl Winner {
    /// `"player"`, `"opponent"` or `"draw"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Winner::Player => "player",
            Winner::Opponent => "opponent",
            Winner::Draw => "draw",
        }
    }

    /// The winner for a side that won.
    pub fn side(side: Side) -> Winner {
        match side {
            Side::Player => Winner::Player,
            Side::Opponent => Winner::Opponent,
        }
    }

    /// Parses `player` / `opponent` / `draw`.
    pub(crate) fn parse(s: &str) -> Option<Winner> {
        match s {
            "player" => Some(Winner::Player),
            "opponent" => Some(Winner::Opponent),
            "draw" => Some(Winner::Draw),
            _ => None,
        }
    }
}

impl fmt::Display for Winner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
