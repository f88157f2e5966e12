//! The game tools of `shared/specs/game-tools.md` (with `NOTES.md`), plus one built-in-AI tool
//! per board game (`suggest_<game>_move`).
//!
//! Each submodule registers one game's tools; [`common`] holds the argument parsing and output
//! pieces they share, so every game answers in the same way (game ids, seeds, levels, candidate
//! limits, the `policy` objects, the "game is over" notes).

pub mod common;

mod board;

mod blackjack;
mod checkers;
mod chess;
mod dice;
mod four_in_a_row;
mod mancala;
mod sea_battle;
mod slot;
mod tic_tac_toe;

use super::ToolRegistry;

/// Registers every game tool.
///
/// # Panics
///
/// Only on a programming error in a built-in tool definition (duplicate name or invalid schema),
/// which the test suite catches.
pub fn register_all(registry: &mut ToolRegistry) {
    chess::register(registry);
    checkers::register(registry);
    blackjack::register(registry);
    sea_battle::register(registry);
    slot::register(registry);
    four_in_a_row::register(registry);
    tic_tac_toe::register(registry);
    dice::register(registry);
    mancala::register(registry);
}
