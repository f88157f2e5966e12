//! The two error types every engine uses.

use std::fmt;

/// A state string (or a notation inside one) that does not follow the grammar.
///
/// The message is shown to users and LLMs as the tool's `error` field, so it names what is wrong
/// ("expected 8 rows, found 7"), never an internal detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    message: String,
}

impl ParseError {
    /// A parse error with the given message.
    pub fn new(message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
        }
    }

    /// The human-readable message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// A move (or action) that the rules do not allow in the given position.
///
/// `message` is the document's text (for example `"Illegal move."`), `reason` a stable
/// snake_case code such as `column_full`, `square_occupied` or `capture_mandatory`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveError {
    /// Stable machine-readable code (snake_case).
    pub reason: &'static str,
    /// Human-readable message, in fixed wording.
    pub message: String,
}

impl MoveError {
    /// A move error with a reason code and a message.
    pub fn new(reason: &'static str, message: impl Into<String>) -> Self {
        MoveError {
            reason,
            message: message.into(),
        }
    }
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MoveError {}
