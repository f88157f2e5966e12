//! Pure game rules for Godot Agents.
//!
//! Every engine here is free of I/O, async and Godot. Each game module offers:
//!
//! - a state type that implements [`std::str::FromStr`] (parsing the state string of
//!   game tools, failing with a [`ParseError`]) and [`std::fmt::Display`]
//!   (serialising it back; `parse(s).to_string() == s` for every canonical string);
//! - `legal_moves()` (read-only) and `apply(..)` (failing with a [`MoveError`] that carries the
//!   document's message and a machine-readable reason);
//! - for board games, a built-in opponent ([`Level`]) and a quick move ordering used by the
//!   `choose_*` tools (best first).
//!
//! The tool layer (`agents-core`) turns these into JSON tools; nothing here knows about JSON.

pub mod seed;
pub mod side;

pub mod blackjack;
pub mod checkers;
pub mod chess;
pub mod dice;
pub mod four_in_a_row;
pub mod mancala;
pub mod sea_battle;
pub mod slot;
pub mod tic_tac_toe;

mod error;
mod level;

pub use error::{MoveError, ParseError};
pub use level::{Level, ParseLevelError, SearchLimits};
pub use seed::Seed;
