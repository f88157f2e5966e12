//! The game tools of the nine games (`new_*`, `apply_*`, `legal_*`, `choose_*`), plus one
//! built-in-AI tool per board game (`suggest_<game>_move`).
//!
//! Each game is one submodule: its declaration (`GAME`, a [`GameDecl`]: its name, which tools it
//! has, and what drives a board game) and the tools it registers, named from the declaration.
//! [`GAMES`] lists the declarations once; the registration ([`register_all`]), the game apps
//! (`apps::games`) and the Godot `GameTools.games()` read them from there. [`common`] holds the
//! argument parsing and output pieces the tools share, so every game answers in the same way
//! (game ids, seeds, levels, candidate limits, the `policy` objects, the "game is over" notes).
//!
//! Adding a game: its module (its `GAME` and its `register`), `pub mod` here and one line in
//! [`GAMES`].

pub mod common;

mod board;
mod decl;

pub mod blackjack;
pub mod checkers;
pub mod chess;
pub mod dice;
pub mod four_in_a_row;
pub mod mancala;
pub mod sea_battle;
pub mod slot;
pub mod tic_tac_toe;

pub use decl::{BOARD_TOOLS, BoardDecl, GameDecl, ToolKind};

use super::ToolRegistry;

/// Every game, declared once in its own module: the two-player board games first, then the house
/// games. The order is the one games are listed in (the game apps, `GameTools.games()`).
pub const GAMES: &[&GameDecl] = &[
    &chess::GAME,
    &checkers::GAME,
    &four_in_a_row::GAME,
    &tic_tac_toe::GAME,
    &mancala::GAME,
    &sea_battle::GAME,
    &blackjack::GAME,
    &slot::GAME,
    &dice::GAME,
];

/// The game called `name` (its `gameType`).
pub fn game(name: &str) -> Option<&'static GameDecl> {
    GAMES.iter().copied().find(|g| g.name == name)
}

/// Registers every game tool: each of [`GAMES`] registers its own.
///
/// # Panics
///
/// Only on a programming error in a built-in tool definition (duplicate name or invalid schema),
/// which the test suite catches.
pub fn register_all(registry: &mut ToolRegistry) {
    for game in GAMES {
        game.register(registry);
    }
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
    use std::collections::BTreeSet;

    use serde_json::{Value, json};

    use super::{GAMES, ToolKind, game};
    use crate::tools::ToolRegistry;

    /// The public names of the game tools, which clients call: pinned here once, so a rename (or
    /// a new game) shows up as a change to this list.
    const PUBLIC_TOOL_NAMES: &[&str] = &[
        "apply_blackjack_action",
        "apply_checkers_move",
        "apply_chess_move",
        "apply_four_in_a_row_move",
        "apply_mancala_move",
        "apply_sea_battle_move",
        "apply_tic_tac_toe_move",
        "choose_blackjack_dealer_action",
        "choose_checkers_opponent_move",
        "choose_chess_opponent_move",
        "choose_four_in_a_row_opponent_move",
        "choose_mancala_opponent_move",
        "choose_sea_battle_opponent_move",
        "choose_tic_tac_toe_opponent_move",
        "legal_blackjack_actions",
        "legal_checkers_moves",
        "legal_chess_moves",
        "legal_four_in_a_row_moves",
        "legal_mancala_moves",
        "legal_sea_battle_moves",
        "legal_tic_tac_toe_moves",
        "new_blackjack_game",
        "new_checkers_game",
        "new_chess_game",
        "new_four_in_a_row_game",
        "new_mancala_game",
        "new_sea_battle_game",
        "new_slot_game",
        "new_tic_tac_toe_game",
        "roll_rpg_dice",
        "spin_slot",
        "suggest_checkers_move",
        "suggest_chess_move",
        "suggest_four_in_a_row_move",
        "suggest_mancala_move",
        "suggest_sea_battle_move",
        "suggest_tic_tac_toe_move",
    ];

    #[test]
    fn the_public_tool_names_are_pinned() {
        let registry = ToolRegistry::with_game_tools();
        let registered: Vec<&str> = registry.tools().map(|t| t.name()).collect();
        assert_eq!(registered, PUBLIC_TOOL_NAMES, "the registry, sorted");
        let mut declared: Vec<String> = GAMES.iter().flat_map(|g| g.tool_names()).collect();
        declared.sort();
        assert_eq!(declared, PUBLIC_TOOL_NAMES, "the declarations");
        let names: Vec<&str> = GAMES.iter().map(|g| g.name).collect();
        assert_eq!(
            names,
            [
                "chess",
                "checkers",
                "four_in_a_row",
                "tic_tac_toe",
                "mancala",
                "sea_battle",
                "blackjack",
                "slot",
                "rpg_dice"
            ]
        );
    }

    /// Each declared game registers its declared tools and no other, with the read-only flags
    /// their kinds imply; names and games are unique.
    #[test]
    fn every_game_registers_exactly_its_declared_tools() {
        let mut names = BTreeSet::new();
        for decl in GAMES {
            assert!(names.insert(decl.name), "{} is declared twice", decl.name);
            assert_eq!(game(decl.name).map(|g| g.name), Some(decl.name));
            let mut registry = ToolRegistry::new();
            decl.register(&mut registry);
            let registered: BTreeSet<&str> = registry.tools().map(|t| t.name()).collect();
            let declared = decl.tool_names();
            let declared: BTreeSet<&str> = declared.iter().map(String::as_str).collect();
            assert_eq!(registered, declared, "{}", decl.name);
            assert_eq!(
                decl.board.is_some(),
                decl.has(ToolKind::Suggest),
                "{}",
                decl.name
            );
            for &kind in decl.tools {
                let tool = registry.get(&decl.tool(kind)).unwrap();
                let read_only =
                    matches!(kind, ToolKind::Legal | ToolKind::Choose | ToolKind::Suggest);
                assert_eq!(tool.is_read_only(), read_only, "{}", tool.name());
                // `stakes`: the new game takes `stack` and `bet`.
                if kind == ToolKind::New {
                    let props = &tool.input_schema()["properties"];
                    for arg in ["stack", "bet"] {
                        assert_eq!(
                            props.get(arg).is_some(),
                            decl.stakes,
                            "{} {arg}",
                            tool.name()
                        );
                    }
                }
            }
        }
        assert_eq!(game("go").map(|g| g.name), None);
    }

    /// Exactly the AI tools, which search within `timeMs`, count as searching (servers run them on
    /// a blocking thread; every other tool inline).
    #[test]
    fn only_the_suggest_tools_search() {
        let registry = ToolRegistry::with_game_tools();
        let searching: BTreeSet<&str> = registry
            .tools()
            .filter(|t| t.searches())
            .map(|t| t.name())
            .collect();
        let suggest: Vec<String> = GAMES
            .iter()
            .filter(|g| g.has(ToolKind::Suggest))
            .map(|g| g.tool(ToolKind::Suggest))
            .collect();
        let suggest: BTreeSet<&str> = suggest.iter().map(String::as_str).collect();
        assert_eq!(searching, suggest);
        assert_eq!(searching.len(), 6);
    }

    /// At its `hard_depth` (`maxDepth`, no `timeMs`), each board game's AI picks the same move
    /// in the same position every time, and a depth out of range is refused by the schema.
    #[test]
    fn a_depth_bounded_ai_is_reproducible() {
        let registry = ToolRegistry::with_game_tools();
        for decl in GAMES {
            let Some(board) = decl.board else { continue };
            let start = first_answer(&registry, decl);
            let mut args = json!({board.position_field: start[board.position_field],
                "level": "hard", "seed": 3});
            if let Some(depth) = board.hard_depth {
                // Shallower than the app plays, to keep debug builds quick.
                args[super::common::DEPTH_ARG] = json!(depth.min(4));
            }
            let suggest = decl.tool(ToolKind::Suggest);
            let first = registry.call(&suggest, &args).unwrap().structured["move"].clone();
            for _ in 0..3 {
                let again = registry.call(&suggest, &args).unwrap().structured["move"].clone();
                assert_eq!(again, first, "{}", decl.name);
            }
            args[super::common::DEPTH_ARG] = json!(65);
            assert!(registry.call(&suggest, &args).is_err(), "{}", decl.name);
        }
    }

    /// The first answer of a game: its `new_*` (or the dice's one roll).
    fn first_answer(registry: &ToolRegistry, decl: &super::GameDecl) -> Value {
        let (kind, args) = if decl.has(ToolKind::New) {
            (ToolKind::New, json!({"seed": 1}))
        } else {
            (ToolKind::Roll, json!({"sides": 6, "seed": 1}))
        };
        let out = registry.call(&decl.tool(kind), &args).unwrap();
        assert!(!out.is_error, "{}: {}", decl.name, out.structured);
        out.structured
    }

    /// Every game answers with its declared name as `gameType`.
    #[test]
    fn games_answer_under_their_declared_name() {
        let registry = ToolRegistry::with_game_tools();
        for decl in GAMES {
            assert_eq!(first_answer(&registry, decl)["gameType"], decl.name);
        }
    }

    /// What a board game declares for its app and the demo is what its tools read and answer:
    /// the position field, the move argument (required by `apply_*`), the legal-moves field, the
    /// side that moves first (the agent's), the hidden parts of the state, and a move schema the
    /// legal moves satisfy.
    #[test]
    fn board_declarations_match_their_tools() {
        let registry = ToolRegistry::with_game_tools();
        for decl in GAMES {
            let Some(board) = decl.board else { continue };
            let name = decl.name;
            let start = first_answer(&registry, decl);
            let position = &start[board.position_field];
            assert!(position.is_string(), "{name}: {start}");
            assert_eq!(
                start["turn"], board.sides[0],
                "{name}: the first side moves first"
            );
            for key in board.hidden {
                let part = format!("{key}:");
                assert!(
                    position
                        .as_str()
                        .unwrap()
                        .split('|')
                        .any(|p| p.starts_with(&part)),
                    "{name}: hides {key}, which its state has"
                );
            }
            let apply = registry.get(&decl.tool(ToolKind::Apply)).unwrap();
            let required = &apply.input_schema()["required"];
            assert_eq!(
                required,
                &json!([board.position_field, board.move_arg]),
                "{name}"
            );
            let legal = registry
                .call(
                    &decl.tool(ToolKind::Legal),
                    &json!({board.position_field: position}),
                )
                .unwrap()
                .structured;
            let moves = legal[board.legal_field].as_array().unwrap();
            assert!(!moves.is_empty(), "{name}: {legal}");
            let schema = jsonschema::validator_for(&(board.move_schema)()).unwrap();
            for mv in moves {
                assert!(
                    schema.is_valid(mv),
                    "{name}: the app's move schema refuses {mv}"
                );
            }
            let played = registry
                .call(
                    &decl.tool(ToolKind::Apply),
                    &json!({board.position_field: position, board.move_arg: moves[0]}),
                )
                .unwrap();
            assert_eq!(
                played.structured["legal"], true,
                "{name}: {}",
                played.structured
            );
            assert!(!board.move_description.is_empty(), "{name}");
        }
    }

    /// Every board game answers an unparsable state the same way, in every read-only tool.
    #[test]
    fn unparsable_states_fail_alike_in_every_board_game() {
        let registry = ToolRegistry::with_game_tools();
        for decl in GAMES {
            let Some(board) = decl.board else { continue };
            let (game, moves) = (decl.name, board.legal_field);
            let args = json!({ board.position_field: "not a state" });
            let choose = registry.call(&decl.tool(ToolKind::Choose), &args).unwrap();
            assert!(choose.is_error, "{game}");
            assert_eq!(choose.structured["reason"], "invalid_state", "{game}");
            assert_eq!(choose.structured[moves], json!([]), "{game}");
            assert_eq!(
                choose.structured["policy"]["chooseExactlyOne"], true,
                "{game}"
            );
            let legal = registry.call(&decl.tool(ToolKind::Legal), &args).unwrap();
            assert!(legal.is_error, "{game}");
            assert_eq!(legal.structured[moves], json!([]), "{game}");
            assert!(
                legal.structured["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("Invalid"),
                "{game}"
            );
            let suggest = registry.call(&decl.tool(ToolKind::Suggest), &args).unwrap();
            assert!(suggest.is_error, "{game}");
            assert_eq!(suggest.structured["reason"], "invalid_state", "{game}");
        }
    }
}
