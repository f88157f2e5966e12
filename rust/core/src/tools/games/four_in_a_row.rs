//! Four-in-a-row tools: `new_four_in_a_row_game`, `apply_four_in_a_row_move`,
//! `legal_four_in_a_row_moves`, `choose_four_in_a_row_opponent_move` and
//! `suggest_four_in_a_row_move`.
//!
//! State strings follow [`agents_games::four_in_a_row`]: `G:<grid>|T:<turn>|ST:<status>|LA:<last>|W:<winner>`
//! with the six grid rows separated by `/`, top row first. Moves are JSON integers 1–7.

use agents_games::four_in_a_row::{Column, FourInARow};
use serde_json::{Value, json};

use super::board::{self, BoardState};
use super::common;
#[cfg(test)]
use super::common::NO_MOVES_NOTE;
use super::{BoardDecl, GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Four-in-a-row, as the game tools, the game app and `GameTools.games()` know it.
pub const GAME: GameDecl = GameDecl::board("four_in_a_row", &BOARD, register);

const BOARD: BoardDecl = BoardDecl {
    position_field: "state",
    move_arg: "column",
    legal_field: "moves",
    sides: ["player", "opponent"],
    hard_depth: Some(10),
    hidden: &[],
    move_schema: || json!({"type": "integer", "minimum": 1, "maximum": 7}),
    move_description: "Drop your disc: column 1 (left) to 7 (right).",
};

const SNAPSHOT: &str = "four_in_a_row_snapshot";

fn state_schema() -> Value {
    common::string_schema(
        "Four-in-a-row state: G:<6 rows of 7 cells ('.', 'R' player, 'Y' opponent) separated by '/', \
         top row first>|T:player|opponent|ST:in_progress|game_over|LA:<column 1-7 or ->|W:player|opponent|draw|-",
    )
}

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            "Start a four-in-a-row game (7 columns x 6 rows). The player (R) moves first.",
            common::seed_only_schema(),
        ),
        new_game,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Apply),
            "Drop a disc of the side to move into a column (1-7) and return the new state.",
            common::apply_schema(
                BOARD.position_field,
                state_schema(),
                BOARD.move_arg,
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 7,
                    "description": "The column to drop the disc into, 1 (left) to 7 (right)."
                }),
            ),
        ),
        apply_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "List the columns (1-7) the side to move may play.",
            common::state_only_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        legal_moves,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            "Candidate columns for the side to move, best first; choose exactly one of them.",
            common::choose_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        choose_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Suggest),
            "The built-in AI's column for the side to move (level random, easy or hard; hard is a \
             time-limited alpha-beta solver).",
            common::suggest_schema(BOARD.position_field, state_schema()),
        )
        .read_only()
        .searches(),
        suggest_move,
    );
}

fn new_game(_args: &Value) -> ToolOutput {
    let pos = FourInARow::new();
    ToolOutput::ok(Value::Object(board::new_snapshot(&pos)))
}

fn apply_move(args: &Value) -> ToolOutput {
    board::apply_answer(args, |pos: &FourInARow| {
        let next = Column::from_number(
            args.get(BOARD.move_arg)
                .and_then(Value::as_i64)
                .unwrap_or(0),
        )
        .and_then(|c| pos.apply(c))?;
        let extra = board::last_action(next.last_move());
        Ok((next, extra))
    })
}

fn numbers(columns: impl IntoIterator<Item = Column>) -> Vec<u8> {
    columns.into_iter().map(Column::number).collect()
}

fn legal_moves(args: &Value) -> ToolOutput {
    board::legal_answer(args, |pos: &FourInARow| numbers(pos.legal_moves()))
}

fn choose_move(args: &Value) -> ToolOutput {
    board::choose_answer(args, |pos: &FourInARow| numbers(pos.ranked_moves()))
}

fn suggest_move(args: &Value) -> ToolOutput {
    board::suggest_answer(args, |pos: &FourInARow, level, limits, rng| {
        pos.choose_move(level, limits, rng).map(|m| m.number())
    })
}

impl BoardState for FourInARow {
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

    const START: &str =
        "G:......./......./......./......./......./.......|T:player|ST:in_progress|LA:-|W:-";
    const WON: &str =
        "G:......./......./R....../RY...../RY...../RY.....|T:opponent|ST:game_over|LA:1|W:player";

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        registry().call(name, &args).unwrap()
    }

    #[test]
    fn registers_five_tools_with_read_only_flags() {
        let r = registry();
        assert_eq!(r.len(), 5);
        assert!(!r.get("new_four_in_a_row_game").unwrap().is_read_only());
        assert!(!r.get("apply_four_in_a_row_move").unwrap().is_read_only());
        for name in [
            "legal_four_in_a_row_moves",
            "choose_four_in_a_row_opponent_move",
            "suggest_four_in_a_row_move",
        ] {
            assert!(r.get(name).unwrap().is_read_only(), "{name}");
        }
        assert!(
            ToolRegistry::with_game_tools()
                .get("apply_four_in_a_row_move")
                .is_some()
        );
    }

    #[test]
    fn new_game_snapshot() {
        for args in [json!({}), json!({"seed": 5}), json!({"seed": "abc"})] {
            let out = call("new_four_in_a_row_game", args);
            assert!(!out.is_error);
            let id = out.structured["gameId"].as_str().unwrap().to_string();
            assert!(id.starts_with("g_") && id.len() == 34);
            assert_eq!(
                out.structured,
                json!({
                    "type": "four_in_a_row_snapshot",
                    "gameType": "four_in_a_row",
                    "gameId": id,
                    "state": START,
                    "status": "in_progress",
                    "turn": "player",
                })
            );
        }
    }

    #[test]
    fn apply_legal_move_matches_the_spec() {
        let out = call(
            "apply_four_in_a_row_move",
            json!({"gameId": "g_123", "state": START, "column": 4}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "four_in_a_row_snapshot",
                "gameType": "four_in_a_row",
                "gameId": "g_123",
                "legal": true,
                "state": "G:......./......./......./......./......./...R...|T:opponent|ST:in_progress|LA:4|W:-",
                "status": "in_progress",
                "turn": "opponent",
                "lastAction": "4",
            })
        );
        // Without a gameId none is invented.
        let out = call(
            "apply_four_in_a_row_move",
            json!({"state": START, "column": 1}),
        );
        assert!(out.structured.get("gameId").is_none());
    }

    #[test]
    fn winning_move_reports_the_winner() {
        let before =
            "G:......./......./......./RY...../RY...../RY.....|T:player|ST:in_progress|LA:2|W:-";
        let out = call(
            "apply_four_in_a_row_move",
            json!({"state": before, "column": 1}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "four_in_a_row_snapshot",
                "gameType": "four_in_a_row",
                "legal": true,
                "state": WON,
                "status": "game_over",
                "turn": "opponent",
                "lastAction": "1",
                "winner": "player",
            })
        );
    }

    #[test]
    fn illegal_moves_keep_the_state() {
        let full =
            "G:Y....../R....../Y....../R....../Y....../R......|T:player|ST:in_progress|LA:1|W:-";
        let out = call(
            "apply_four_in_a_row_move",
            json!({"gameId": "g_1", "state": full, "column": 1}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "four_in_a_row_snapshot",
                "gameType": "four_in_a_row",
                "gameId": "g_1",
                "legal": false,
                "state": full,
                "error": "Illegal move.",
                "reason": "column_full",
                "status": "in_progress",
                "turn": "player",
            })
        );
        let out = call(
            "apply_four_in_a_row_move",
            json!({"state": WON, "column": 3}),
        );
        assert_eq!(out.structured["reason"], "game_over");
        assert_eq!(out.structured["error"], "Illegal move.");
        assert_eq!(out.structured["state"], WON);
        assert_eq!(out.structured["status"], "game_over");
        assert_eq!(out.structured["winner"], "player");
    }

    #[test]
    fn unparsable_state_is_reported_not_crashed() {
        let out = call(
            "apply_four_in_a_row_move",
            json!({"state": "nonsense", "column": 3}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "four_in_a_row_snapshot",
                "gameType": "four_in_a_row",
                "legal": false,
                "state": "nonsense",
                "error": "Invalid state: expected 5 fields G|T|ST|LA|W separated by '|', found 1",
                "reason": "invalid_state",
            })
        );
        for name in [
            "legal_four_in_a_row_moves",
            "choose_four_in_a_row_opponent_move",
        ] {
            let out = call(name, json!({"state": "G:|T:|ST:|LA:|W:"}));
            assert!(out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["reason"], "invalid_state");
            assert!(
                out.structured["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("Invalid state: ")
            );
        }
        let out = call("suggest_four_in_a_row_move", json!({"state": "x"}));
        assert!(out.is_error);
        assert_eq!(out.structured["reason"], "invalid_state");
    }

    #[test]
    fn schema_rejects_wrong_types_and_ranges() {
        let r = registry();
        for bad in [json!("3"), json!(0), json!(8), json!(2.5)] {
            let err = r
                .call(
                    "apply_four_in_a_row_move",
                    &json!({"state": START, "column": bad}),
                )
                .unwrap_err();
            assert!(
                matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "column"),
                "{err}"
            );
        }
        let err = r
            .call("apply_four_in_a_row_move", &json!({"state": START}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "column"));
    }

    #[test]
    fn legal_and_choose_lists() {
        let out = call("legal_four_in_a_row_moves", json!({"state": START}));
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "gameType": "four_in_a_row",
                "moves": [1, 2, 3, 4, 5, 6, 7],
                "turn": "player",
                "status": "in_progress",
            })
        );
        assert!(out.notes.is_empty());
        let out = call(
            "choose_four_in_a_row_opponent_move",
            json!({"state": START}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "opponent_choice",
                "gameType": "four_in_a_row",
                "moves": [4, 3, 5, 2, 6, 1, 7],
                "policy": {"mustChooseFromMoves": true, "chooseExactlyOne": true},
                "turn": "player",
                "status": "in_progress",
            })
        );
        let out = call(
            "choose_four_in_a_row_opponent_move",
            json!({"state": START, "maxCandidates": 2}),
        );
        assert_eq!(out.structured["moves"], json!([4, 3]));
        // A block comes first for the opponent.
        let threat =
            "G:......./......./......./......./....Y../RRR.Y..|T:opponent|ST:in_progress|LA:3|W:-";
        let out = call(
            "choose_four_in_a_row_opponent_move",
            json!({"state": threat}),
        );
        assert_eq!(out.structured["moves"][0], 4);
    }

    #[test]
    fn finished_games_list_nothing_with_a_note() {
        for name in [
            "legal_four_in_a_row_moves",
            "choose_four_in_a_row_opponent_move",
        ] {
            let out = call(name, json!({"state": WON}));
            assert!(!out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["status"], "game_over");
            assert_eq!(out.structured["winner"], "player");
            assert_eq!(out.notes, vec![NO_MOVES_NOTE.to_string()]);
        }
        let out = call("suggest_four_in_a_row_move", json!({"state": WON}));
        assert!(out.is_error);
        assert_eq!(
            out.structured["error"],
            "No legal moves available; the game is over."
        );
        assert_eq!(out.structured["reason"], "game_over");
    }

    #[test]
    fn suggest_plays_the_win_and_is_seeded() {
        let win =
            "G:......./......./......./....Y../....Y../RRR.Y..|T:player|ST:in_progress|LA:5|W:-";
        for level in ["easy", "hard"] {
            let out = call(
                "suggest_four_in_a_row_move",
                json!({"state": win, "level": level, "timeMs": 50, "seed": 1}),
            );
            assert_eq!(
                out.structured,
                json!({"type": "ai_move", "gameType": "four_in_a_row", "move": 4, "level": level, "turn": "player"})
            );
        }
        let a = call(
            "suggest_four_in_a_row_move",
            json!({"state": START, "level": "random", "seed": "s"}),
        );
        let b = call(
            "suggest_four_in_a_row_move",
            json!({"state": START, "level": "random", "seed": "s"}),
        );
        assert_eq!(a.structured, b.structured);
        assert!(a.structured["move"].is_u64());
        let out = call(
            "suggest_four_in_a_row_move",
            json!({"state": START, "timeMs": 20}),
        );
        assert_eq!(out.structured["level"], "hard");
    }
}
