//! Mancala (Kalah 6×4) tools: `new_mancala_game`, `apply_mancala_move`, `legal_mancala_moves`,
//! `choose_mancala_opponent_move` and `suggest_mancala_move`.
//!
//! The state string and the rules are those of [`agents_games::mancala`]. Moves are pit numbers
//! 1–6 (JSON integers) of the side to move, numbered in its own sowing order.

use agents_games::mancala::MancalaState;
use serde_json::{Value, json};

use super::board::{self, BoardState};
use super::common;
use super::{BoardDecl, GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Mancala, as the game tools, the game app and `GameTools.games()` know it.
pub const GAME: GameDecl = GameDecl::board("mancala", &BOARD, register);

const BOARD: BoardDecl = BoardDecl {
    position_field: "state",
    move_arg: "pit",
    legal_field: "moves",
    sides: ["player", "opponent"],
    hard_depth: Some(10),
    hidden: &[],
    move_schema: || json!({"type": "integer", "minimum": 1, "maximum": 6}),
    move_description: "Sow the seeds of one of your pits, 1 to 6.",
};

const SNAPSHOT: &str = "mancala_snapshot";

fn state_schema() -> Value {
    common::string_schema(
        "Mancala state: P:<p1,…,p6>|O:<o1,…,o6>|PS:<n>|OS:<n>|T:<player|opponent>|ST:<in_progress|game_over>|LA:<last_action>|W:<player|opponent|draw|->",
    )
}

fn new_game(args: &Value) -> ToolOutput {
    // The start position involves no randomness; `seed` is accepted (and ignored) so every
    // `new_*` tool takes the same arguments.
    let _ = common::seed_arg(args);
    ToolOutput::ok(Value::Object(board::new_snapshot(&MancalaState::new())))
}

fn apply_move(args: &Value) -> ToolOutput {
    let pit = args
        .get(BOARD.move_arg)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    board::apply_answer(args, |state: &MancalaState| {
        let next = state.apply(pit)?;
        let extra = board::last_action(next.last_action());
        Ok((next, extra))
    })
}

fn legal_moves(args: &Value) -> ToolOutput {
    board::legal_answer(args, |state: &MancalaState| state.legal_moves())
}

fn choose_move(args: &Value) -> ToolOutput {
    board::choose_answer(args, |state: &MancalaState| state.ranked_moves())
}

fn suggest_move(args: &Value) -> ToolOutput {
    board::suggest_answer(args, |state: &MancalaState, level, limits, rng| {
        state.choose_move(level, limits, rng)
    })
}

impl BoardState for MancalaState {
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

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            "Start a game of mancala (Kalah, 6 pits per side, 4 seeds each). The player moves first. \
             Returns the state string to pass to the other mancala tools.",
            common::seed_only_schema(),
        ),
        new_game,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Apply),
            "Sow one pit (1-6, numbered in the mover's sowing order) for the side to move. Last \
             seed in the own store gives another turn; last seed in an own empty pit captures the \
             opposite pit. Returns the new state, or legal:false with the unchanged state.",
            common::apply_schema(
                BOARD.position_field,
                state_schema(),
                BOARD.move_arg,
                json!({
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 6,
                    "description": "The pit to sow, 1-6, counted from the side to move's first pit."
                }),
            ),
        ),
        apply_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "List the pits (integers 1-6) the side to move may sow.",
            common::state_only_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        legal_moves,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            "Candidate pits for the side to move, best first by the built-in evaluation; choose \
             exactly one of them.",
            common::choose_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        choose_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Suggest),
            "The built-in AI's pit for the side to move (random, easy, or hard: alpha-beta search \
             within timeMs).",
            common::suggest_schema(BOARD.position_field, state_schema()),
        )
        .read_only()
        .searches(),
        suggest_move,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const START: &str = "P:4,4,4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0|T:player|ST:in_progress|LA:-|W:-";
    const OVER: &str =
        "P:0,0,0,0,0,0|O:0,0,0,0,0,0|PS:21|OS:27|T:opponent|ST:game_over|LA:pit6,sweep|W:opponent";

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        registry().call(name, &args).expect("valid arguments")
    }

    #[test]
    fn all_tools_are_registered_in_the_game_registry() {
        let all = ToolRegistry::with_game_tools();
        for name in [
            "new_mancala_game",
            "apply_mancala_move",
            "legal_mancala_moves",
            "choose_mancala_opponent_move",
            "suggest_mancala_move",
        ] {
            assert!(all.get(name).is_some(), "{name}");
        }
        assert!(all.get("legal_mancala_moves").unwrap().is_read_only());
        assert!(!all.get("apply_mancala_move").unwrap().is_read_only());
    }

    #[test]
    fn new_game_snapshot() {
        for args in [json!({}), json!({"seed": 5}), json!({"seed": "x"})] {
            let out = call("new_mancala_game", args);
            assert!(!out.is_error);
            let id = out.structured["gameId"].as_str().unwrap().to_string();
            assert!(id.starts_with("g_") && id.len() == 34);
            assert_eq!(
                out.structured,
                json!({
                    "type": "mancala_snapshot",
                    "gameType": "mancala",
                    "gameId": id,
                    "state": START,
                    "status": "in_progress",
                    "turn": "player"
                })
            );
        }
    }

    #[test]
    fn apply_pit3_gives_an_extra_turn() {
        let out = call(
            "apply_mancala_move",
            json!({"gameId": "g_1", "state": START, "pit": 3}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "mancala_snapshot",
                "gameType": "mancala",
                "gameId": "g_1",
                "legal": true,
                "state": "P:4,4,0,5,5,5|O:4,4,4,4,4,4|PS:1|OS:0|T:player|ST:in_progress|LA:pit3,extra_turn|W:-",
                "status": "in_progress",
                "turn": "player",
                "lastAction": "pit3,extra_turn"
            })
        );
    }

    #[test]
    fn apply_that_ends_the_game_reports_the_winner() {
        let state = "P:0,0,0,0,0,1|O:1,2,3,0,0,0|PS:20|OS:21|T:player|ST:in_progress|LA:-|W:-";
        let out = call("apply_mancala_move", json!({"state": state, "pit": 6}));
        assert_eq!(
            out.structured,
            json!({
                "type": "mancala_snapshot",
                "gameType": "mancala",
                "legal": true,
                "state": OVER,
                "status": "game_over",
                "turn": "opponent",
                "winner": "opponent",
                "lastAction": "pit6,sweep"
            })
        );
    }

    #[test]
    fn illegal_moves_keep_the_state() {
        let state = "P:0,4,4,4,4,4|O:4,4,4,4,4,4|PS:4|OS:0|T:player|ST:in_progress|LA:-|W:-";
        let out = call(
            "apply_mancala_move",
            json!({"gameId": "g_2", "state": state, "pit": 1}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "mancala_snapshot",
                "gameType": "mancala",
                "gameId": "g_2",
                "legal": false,
                "state": state,
                "error": "Illegal move.",
                "reason": "empty_pit",
                "status": "in_progress",
                "turn": "player"
            })
        );
        let out = call("apply_mancala_move", json!({"state": OVER, "pit": 1}));
        assert_eq!(out.structured["reason"], "game_over");
        assert_eq!(out.structured["error"], "Illegal move.");
        assert_eq!(out.structured["winner"], "opponent");
        assert_eq!(out.structured["state"], OVER);
    }

    #[test]
    fn unparsable_state_is_reported() {
        let out = call("apply_mancala_move", json!({"state": "junk", "pit": 1}));
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "mancala_snapshot",
                "gameType": "mancala",
                "legal": false,
                "state": "junk",
                "error": "Invalid state: expected 8 fields P|O|PS|OS|T|ST|LA|W, found 1",
                "reason": "invalid_state"
            })
        );
        for tool in ["legal_mancala_moves", "choose_mancala_opponent_move"] {
            let out = call(tool, json!({"state": "junk"}));
            assert!(out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["reason"], "invalid_state");
        }
        let out = call("suggest_mancala_move", json!({"state": "junk"}));
        assert_eq!(out.structured["reason"], "invalid_state");
    }

    #[test]
    fn schema_rejects_bad_pits() {
        let r = registry();
        for pit in [json!(0), json!(7), json!("3"), json!(2.5)] {
            let err = r
                .call("apply_mancala_move", &json!({"state": START, "pit": pit}))
                .unwrap_err();
            assert_eq!(err.reason(), "invalid_args", "{pit}");
        }
        assert!(
            r.call("apply_mancala_move", &json!({"state": START}))
                .is_err()
        );
        assert!(
            r.call("legal_mancala_moves", &json!({"state": START, "x": 1}))
                .is_err()
        );
    }

    #[test]
    fn legal_and_choose_lists() {
        let out = call("legal_mancala_moves", json!({"state": START}));
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "gameType": "mancala",
                "moves": [1, 2, 3, 4, 5, 6],
                "status": "in_progress",
                "turn": "player"
            })
        );
        assert!(out.notes.is_empty());
        let out = call(
            "choose_mancala_opponent_move",
            json!({"state": START, "maxCandidates": 2}),
        );
        assert_eq!(out.structured["type"], "opponent_choice");
        assert_eq!(
            out.structured["policy"],
            json!({"mustChooseFromMoves": true, "chooseExactlyOne": true})
        );
        let moves = out.structured["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 2);
        // The engine's quick ordering, best first.
        let ranked = MancalaState::new().ranked_moves();
        assert_eq!(moves, &vec![json!(ranked[0]), json!(ranked[1])]);
        let out = call("choose_mancala_opponent_move", json!({"state": START}));
        assert_eq!(out.structured["moves"].as_array().unwrap().len(), 6);
        for tool in ["legal_mancala_moves", "choose_mancala_opponent_move"] {
            let out = call(tool, json!({"state": OVER}));
            assert!(!out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["winner"], "opponent");
            assert_eq!(out.notes, vec![common::NO_MOVES_NOTE.to_string()]);
        }
    }

    #[test]
    fn suggest_returns_a_legal_pit() {
        let state = "P:1,0,5,5,5,5|O:1,1,1,1,10,1|PS:6|OS:6|T:player|ST:in_progress|LA:-|W:-";
        let out = call(
            "suggest_mancala_move",
            json!({"state": state, "timeMs": 20}),
        );
        assert_eq!(
            out.structured,
            json!({"type": "ai_move", "gameType": "mancala", "move": 1, "level": "hard", "turn": "player"})
        );
        let out = call(
            "suggest_mancala_move",
            json!({"state": START, "level": "random", "seed": 9}),
        );
        let again = call(
            "suggest_mancala_move",
            json!({"state": START, "level": "random", "seed": 9}),
        );
        assert_eq!(out.structured, again.structured);
        assert_eq!(out.structured["level"], "random");
        assert!((1..=6).contains(&out.structured["move"].as_i64().unwrap()));
        let out = call("suggest_mancala_move", json!({"state": OVER}));
        assert!(out.is_error);
        assert_eq!(
            out.structured["error"],
            "No legal moves available; the game is over."
        );
        assert_eq!(out.structured["reason"], "game_over");
    }
}
