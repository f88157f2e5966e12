//! Opponent strength levels and search limits shared by every built-in AI.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How hard a built-in opponent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Level {
    /// A uniformly random legal move (seeded).
    Random,
    /// A shallow search with some randomness: beatable, but not silly.
    Easy,
    /// The engine's full strength within the [`SearchLimits`].
    #[default]
    Hard,
}

impl Level {
    /// All levels, weakest first.
    pub const ALL: [Level; 3] = [Level::Random, Level::Easy, Level::Hard];

    /// The level's name as used in tool arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Random => "random",
            Level::Easy => "easy",
            Level::Hard => "hard",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a level name that is not `random`, `easy` or `hard`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLevelError(pub String);

impl fmt::Display for ParseLevelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown level {:?} (expected random, easy or hard)",
            self.0
        )
    }
}

impl std::error::Error for ParseLevelError {}

impl FromStr for Level {
    type Err = ParseLevelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "random" => Ok(Level::Random),
            "easy" => Ok(Level::Easy),
            "hard" => Ok(Level::Hard),
            _ => Err(ParseLevelError(s.to_string())),
        }
    }
}

/// Bounds for a search: wall-clock budget and an optional depth cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    /// Time budget for one move (default 100 ms).
    pub time: Duration,
    /// Maximum depth in plies, if any (iterative deepening stops there).
    pub max_depth: Option<u32>,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            time: Duration::from_millis(100),
            max_depth: None,
        }
    }
}

impl SearchLimits {
    /// Limits with the given time budget and no depth cap.
    pub fn with_time(time: Duration) -> Self {
        SearchLimits {
            time,
            max_depth: None,
        }
    }

    /// Limits that stop at a fixed depth (time budget still applies as a safety net).
    pub fn with_depth(max_depth: u32) -> Self {
        SearchLimits {
            time: Duration::from_secs(3600),
            max_depth: Some(max_depth),
        }
    }
}
