//! Tic-tac-toe tools: `new_tic_tac_toe_game`, `apply_tic_tac_toe_move`,
//! `legal_tic_tac_toe_moves`, `choose_tic_tac_toe_opponent_move` and `suggest_tic_tac_toe_move`.
//!
//! State strings follow [`agents_games::tic_tac_toe`]:
//! `G:<grid>|T:<turn>|ST:<status>|LA:<last>|W:<winner>|P:<player symbol>|O:<opponent symbol>`
//! with the three grid rows separated by `/`, row 1 first. Moves are squares `A1`–`C3`
//! (letter = column), accepted trimmed and case-insensitive, answered upper-case.

use agents_games::tic_tac_toe::{Coord, Mark, TicTacToe};
use serde_json::{Value, json};

use super::board::{self, BoardState};
use super::common;
#[cfg(test)]
use super::common::NO_MOVES_NOTE;
use super::{BoardDecl, GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Tic-tac-toe, as the game tools, the game app and `GameTools.games()` know it.
pub const GAME: GameDecl = GameDecl::board("tic_tac_toe", &BOARD, register);

const BOARD: BoardDecl = BoardDecl {
    position_field: "state",
    move_arg: "coord",
    legal_field: "moves",
    sides: ["player", "opponent"],
    hard_depth: None,
    hidden: &[],
    move_schema: || json!({"type": "string", "pattern": "^[A-Ca-c][1-3]$"}),
    move_description: "Place your mark: coord A1 to C3 (letter = column, digit = row).",
};

const SNAPSHOT: &str = "tic_tac_toe_snapshot";

fn state_schema() -> Value {
    common::string_schema(
        "Tic-tac-toe state: G:<3 rows of 3 cells ('.', 'X', 'O') separated by '/', row 1 first, \
         columns A-C>|T:player|opponent|ST:in_progress|game_over|LA:<square or ->|W:player|opponent|draw|-|P:<X|O>|O:<X|O>",
    )
}

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            "Start a tic-tac-toe game. The player moves first with the chosen symbol (default X).",
            common::object_schema(
                &[
                    (
                        "side",
                        json!({
                            "type": "string",
                            "enum": ["X", "O"],
                            "description": "The player's symbol (default X); the player moves first either way."
                        }),
                    ),
                    ("seed", common::seed_schema()),
                ],
                &[],
            ),
        ),
        new_game,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Apply),
            "Mark a square (A1-C3, letter = column, digit = row) for the side to move and return \
             the new state.",
            common::apply_schema(
                BOARD.position_field,
                state_schema(),
                BOARD.move_arg,
                common::string_schema("The square, A1 through C3 (letter = column, digit = row)."),
            ),
        ),
        apply_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "List the empty squares the side to move may mark.",
            common::state_only_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        legal_moves,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            "Candidate squares for the side to move, best first (perfect play); choose exactly one.",
            common::choose_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        choose_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Suggest),
            "The built-in AI's square for the side to move (level random, easy or hard; hard is \
             perfect and never loses).",
            common::suggest_schema(BOARD.position_field, state_schema()),
        )
        .read_only()
        .searches(),
        suggest_move,
    );
}

fn new_game(args: &Value) -> ToolOutput {
    let mark = match args.get("side").and_then(Value::as_str) {
        Some("O") => Mark::O,
        _ => Mark::X,
    };
    let pos = TicTacToe::new(mark);
    let mut out = board::new_snapshot(&pos);
    out.insert("playerSymbol".into(), json!(pos.player_mark().to_string()));
    out.insert(
        "opponentSymbol".into(),
        json!(pos.opponent_mark().to_string()),
    );
    ToolOutput::ok(Value::Object(out))
}

fn apply_move(args: &Value) -> ToolOutput {
    board::apply_answer(args, |pos: &TicTacToe| {
        let next = common::str_arg(args, BOARD.move_arg)
            .parse::<Coord>()
            .and_then(|c| pos.apply(c))?;
        let extra = board::last_action(next.last_move());
        Ok((next, extra))
    })
}

fn names(coords: impl IntoIterator<Item = Coord>) -> Vec<String> {
    coords.into_iter().map(|c| c.to_string()).collect()
}

fn legal_moves(args: &Value) -> ToolOutput {
    board::legal_answer(args, |pos: &TicTacToe| names(pos.legal_moves()))
}

fn choose_move(args: &Value) -> ToolOutput {
    board::choose_answer(args, |pos: &TicTacToe| names(pos.ranked_moves()))
}

fn suggest_move(args: &Value) -> ToolOutput {
    board::suggest_answer(args, |pos: &TicTacToe, level, limits, rng| {
        pos.choose_move(level, limits, rng).map(|m| m.to_string())
    })
}

impl BoardState for TicTacToe {
    const GAME_TYPE: &'static str = GAME.name;
    const SNAPSHOT: &'static str = SNAPSHOT;
    const STATE_KEY: &'static str = BOARD.position_field;

    fn status(&self) -> &'static str {
        self.status().as_str()
    }

    fn turn(&self) -> &'static str {
        self.turn().as_str()
    }

    fn winner(&self) -> Option<&'static str> {
        self.winner().map(|w| w.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;

    const START: &str = "G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O";
    const WON: &str = "G:XXX/OO./...|T:opponent|ST:game_over|LA:C1|W:player|P:X|O:O";

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        registry().call(name, &args).unwrap()
    }

    #[test]
    fn registers_five_tools() {
        let r = registry();
        assert_eq!(r.len(), 5);
        assert!(r.get("legal_tic_tac_toe_moves").unwrap().is_read_only());
        assert!(
            r.get("choose_tic_tac_toe_opponent_move")
                .unwrap()
                .is_read_only()
        );
        assert!(r.get("suggest_tic_tac_toe_move").unwrap().is_read_only());
        assert!(!r.get("apply_tic_tac_toe_move").unwrap().is_read_only());
        assert!(
            ToolRegistry::with_game_tools()
                .get("new_tic_tac_toe_game")
                .is_some()
        );
    }

    #[test]
    fn new_game_with_either_side() {
        for (args, state, p, o) in [
            (json!({}), START, "X", "O"),
            (json!({"side": "X", "seed": 3}), START, "X", "O"),
            (
                json!({"side": "O"}),
                "G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:O|O:X",
                "O",
                "X",
            ),
        ] {
            let out = call("new_tic_tac_toe_game", args);
            let id = out.structured["gameId"].as_str().unwrap().to_string();
            assert!(id.starts_with("g_") && id.len() == 34);
            assert_eq!(
                out.structured,
                json!({
                    "type": "tic_tac_toe_snapshot",
                    "gameType": "tic_tac_toe",
                    "gameId": id,
                    "state": state,
                    "status": "in_progress",
                    "turn": "player",
                    "playerSymbol": p,
                    "opponentSymbol": o,
                })
            );
        }
        let err = registry()
            .call("new_tic_tac_toe_game", &json!({"side": "Z"}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "side"));
    }

    #[test]
    fn apply_matches_the_spec_and_normalises_the_coord() {
        let out = call(
            "apply_tic_tac_toe_move",
            json!({"gameId": "g_123", "state": START, "coord": " b2 "}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "tic_tac_toe_snapshot",
                "gameType": "tic_tac_toe",
                "gameId": "g_123",
                "legal": true,
                "state": "G:.../.X./...|T:opponent|ST:in_progress|LA:B2|W:-|P:X|O:O",
                "status": "in_progress",
                "turn": "opponent",
                "lastAction": "B2",
            })
        );
        let before = "G:XX./OO./...|T:player|ST:in_progress|LA:B2|W:-|P:X|O:O";
        let out = call(
            "apply_tic_tac_toe_move",
            json!({"state": before, "coord": "C1"}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "tic_tac_toe_snapshot",
                "gameType": "tic_tac_toe",
                "legal": true,
                "state": WON,
                "status": "game_over",
                "turn": "opponent",
                "lastAction": "C1",
                "winner": "player",
            })
        );
    }

    #[test]
    fn illegal_moves_keep_the_state() {
        let state = "G:.../.X./...|T:opponent|ST:in_progress|LA:B2|W:-|P:X|O:O";
        for (coord, reason) in [
            ("B2", "square_occupied"),
            ("D4", "invalid_coord"),
            ("", "invalid_coord"),
        ] {
            let out = call(
                "apply_tic_tac_toe_move",
                json!({"gameId": "g_9", "state": state, "coord": coord}),
            );
            assert!(out.is_error);
            assert_eq!(
                out.structured,
                json!({
                    "type": "tic_tac_toe_snapshot",
                    "gameType": "tic_tac_toe",
                    "gameId": "g_9",
                    "legal": false,
                    "state": state,
                    "error": "Illegal move.",
                    "reason": reason,
                    "status": "in_progress",
                    "turn": "opponent",
                })
            );
        }
        let out = call(
            "apply_tic_tac_toe_move",
            json!({"state": WON, "coord": "C3"}),
        );
        assert_eq!(out.structured["reason"], "game_over");
        assert_eq!(out.structured["winner"], "player");
        let out = call(
            "apply_tic_tac_toe_move",
            json!({"state": "G:bad", "coord": "A1"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "tic_tac_toe_snapshot",
                "gameType": "tic_tac_toe",
                "legal": false,
                "state": "G:bad",
                "error": "Invalid state: expected 7 fields G|T|ST|LA|W|P|O separated by '|', found 1",
                "reason": "invalid_state",
            })
        );
        let err = registry()
            .call(
                "apply_tic_tac_toe_move",
                &json!({"state": START, "coord": 5}),
            )
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "coord"));
    }

    #[test]
    fn legal_and_choose_lists() {
        let state = "G:X../.O./...|T:player|ST:in_progress|LA:B2|W:-|P:X|O:O";
        let out = call("legal_tic_tac_toe_moves", json!({"state": state}));
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "gameType": "tic_tac_toe",
                "moves": ["B1", "C1", "A2", "C2", "A3", "B3", "C3"],
                "turn": "player",
                "status": "in_progress",
            })
        );
        // O to move must block C1.
        let threat = "G:XX./.O./...|T:opponent|ST:in_progress|LA:B1|W:-|P:X|O:O";
        let out = call(
            "choose_tic_tac_toe_opponent_move",
            json!({"state": threat, "maxCandidates": 3}),
        );
        assert_eq!(out.structured["type"], "opponent_choice");
        assert_eq!(
            out.structured["policy"],
            json!({"mustChooseFromMoves": true, "chooseExactlyOne": true})
        );
        let moves = out.structured["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 3);
        assert_eq!(moves[0], "C1");
        for name in [
            "legal_tic_tac_toe_moves",
            "choose_tic_tac_toe_opponent_move",
        ] {
            let out = call(name, json!({"state": WON}));
            assert!(!out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.notes, vec![NO_MOVES_NOTE.to_string()]);
            let out = call(name, json!({"state": "junk"}));
            assert!(out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["reason"], "invalid_state");
        }
    }

    #[test]
    fn suggest_blocks_and_reports_game_over() {
        let threat = "G:XX./.O./...|T:opponent|ST:in_progress|LA:B1|W:-|P:X|O:O";
        let out = call(
            "suggest_tic_tac_toe_move",
            json!({"state": threat, "seed": 4}),
        );
        assert_eq!(
            out.structured,
            json!({"type": "ai_move", "gameType": "tic_tac_toe", "move": "C1", "level": "hard", "turn": "opponent"})
        );
        let out = call("suggest_tic_tac_toe_move", json!({"state": WON}));
        assert!(out.is_error);
        assert_eq!(
            out.structured["error"],
            "No legal moves available; the game is over."
        );
        assert_eq!(out.structured["reason"], "game_over");
        let a = call(
            "suggest_tic_tac_toe_move",
            json!({"state": START, "level": "random", "seed": 11}),
        );
        let b = call(
            "suggest_tic_tac_toe_move",
            json!({"state": START, "level": "random", "seed": 11}),
        );
        assert_eq!(a.structured, b.structured);
    }
}
