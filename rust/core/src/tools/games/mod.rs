//! The game tools of the nine games (`new_*`, `apply_*`, `legal_*`, `choose_*`), plus one
//! built-in-AI tool per board game (`suggest_<game>_move`).
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

impl ToolRegistry {
    /// A registry holding every game tool (nine games: `new_*`, `apply_*`, `legal_*`,
    /// `choose_*`) plus the built-in AI tools.
    pub fn with_game_tools() -> Self {
        let mut registry = ToolRegistry::new();
        register_all(&mut registry);
        registry
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::ToolRegistry;

    /// Exactly the AI tools, which search within `timeMs`, count as searching (servers run them on
    /// a blocking thread; every other tool inline).
    #[test]
    fn only_the_suggest_tools_search() {
        let registry = ToolRegistry::with_game_tools();
        let searching: Vec<&str> = registry
            .tools()
            .filter(|t| t.searches())
            .map(|t| t.name())
            .collect();
        assert_eq!(
            searching,
            [
                "suggest_checkers_move",
                "suggest_chess_move",
                "suggest_four_in_a_row_move",
                "suggest_mancala_move",
                "suggest_sea_battle_move",
                "suggest_tic_tac_toe_move",
            ]
        );
    }

    /// Every board game answers an unparsable state the same way, in every read-only tool.
    #[test]
    fn unparsable_states_fail_alike_in_every_board_game() {
        let registry = ToolRegistry::with_game_tools();
        for (game, field, moves) in [
            ("chess", "fen", "movesUci"),
            ("checkers", "state", "moves"),
            ("four_in_a_row", "state", "moves"),
            ("tic_tac_toe", "state", "moves"),
            ("mancala", "state", "moves"),
            ("sea_battle", "state", "moves"),
        ] {
            let args = json!({ field: "not a state" });
            let choose = registry
                .call(&format!("choose_{game}_opponent_move"), &args)
                .unwrap();
            assert!(choose.is_error, "{game}");
            assert_eq!(choose.structured["reason"], "invalid_state", "{game}");
            assert_eq!(choose.structured[moves], json!([]), "{game}");
            assert_eq!(
                choose.structured["policy"]["chooseExactlyOne"], true,
                "{game}"
            );
            let legal = registry
                .call(&format!("legal_{game}_moves"), &args)
                .unwrap();
            assert!(legal.is_error, "{game}");
            assert_eq!(legal.structured[moves], json!([]), "{game}");
            assert!(
                legal.structured["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("Invalid"),
                "{game}"
            );
            let suggest = registry
                .call(&format!("suggest_{game}_move"), &args)
                .unwrap();
            assert!(suggest.is_error, "{game}");
            assert_eq!(suggest.structured["reason"], "invalid_state", "{game}");
        }
    }
}
