//! Checkers tools: `new_checkers_game`, `apply_checkers_move`, `legal_checkers_moves`,
//! `choose_checkers_opponent_move` and `suggest_checkers_move`.
//!
//! The state grammar, rules and move notation are documented in [`agents_games::checkers`].

use agents_games::checkers::{Color, Move, Position, Status};
use serde_json::{Map, Value, json};

use super::board::{self, BoardState};
use super::common;
use super::{BoardDecl, GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Checkers, as the game tools, the game app and `GameTools.games()` know it.
pub const GAME: GameDecl = GameDecl::board("checkers", &BOARD, register);

const BOARD: BoardDecl = BoardDecl {
    position_field: "state",
    move_arg: "move",
    legal_field: "moves",
    sides: ["w", "b"],
    hard_depth: Some(8),
    hidden: &[],
    move_schema: || json!({"type": "string", "minLength": 4, "maxLength": 40}),
    move_description: "Move a piece (you play white, moving up): the squares visited, \
                       'c3d4' for a step, 'b6d4f2' for a double jump.",
};

const SNAPSHOT: &str = "checkers_snapshot";

fn state_schema() -> Value {
    common::string_schema(
        "Checkers state '<row8>/<row7>/…/<row1> <turn>': eight rows of eight characters, rank 8 \
         first, files a-h left to right; 'w'/'W' white man/king, 'b'/'B' black man/king, '.' \
         empty (pieces only on dark squares, a1 is dark); turn 'w' or 'b'. White moves first \
         and moves up the board.",
    )
}

fn move_schema() -> Value {
    common::string_schema(
        "The move as the squares visited, concatenated: 'c3d4' for a step, 'b6d4f2' for a \
         double jump. Case, '-', 'x' and spaces are ignored ('C3-D4', 'c3xe5').",
    )
}

fn notations<'a>(moves: impl IntoIterator<Item = &'a Move>) -> Vec<String> {
    moves.into_iter().map(Move::to_string).collect()
}

fn new_game(_args: &Value) -> ToolOutput {
    ToolOutput::ok(Value::Object(board::new_snapshot(&Position::start())))
}

fn apply_move(args: &Value) -> ToolOutput {
    board::apply_answer(args, |pos: &Position| {
        let (next, mv) = pos.play(common::str_arg(args, BOARD.move_arg))?;
        let mut extra = Map::new();
        extra.insert("lastMove".into(), json!({"notation": mv.to_string()}));
        Ok((next, extra))
    })
}

fn legal_moves(args: &Value) -> ToolOutput {
    let mut head = board::list_head::<Position>("legal_moves");
    head["forcedCaptures"] = json!([]);
    head["mustCapture"] = json!(false);
    board::list_answer(args, head, |pos: &Position, out| {
        let moves = pos.legal_moves();
        // Captures first, then simple moves; when a capture exists only captures are legal.
        let (captures, simple): (Vec<&Move>, Vec<&Move>) =
            moves.iter().partition(|m| m.is_capture());
        let forced = notations(captures.iter().copied());
        let mut listed = forced.clone();
        listed.extend(notations(simple));
        out.insert("mustCapture".into(), json!(!forced.is_empty()));
        out.insert("forcedCaptures".into(), json!(forced));
        board::put_moves(out, "moves", &listed)
    })
}

fn choose_move(args: &Value) -> ToolOutput {
    let policy = common::policy("mustChooseFromMoves");
    let mut head = board::list_head::<Position>("opponent_choice");
    head["policy"] = policy.clone();
    let max = common::max_candidates_arg(args);
    board::list_answer(args, head, |pos: &Position, out| {
        let ranked = pos.ranked_moves();
        board::put_moves(out, "moves", &notations(ranked.iter().take(max)));
        out.insert("mustCapture".into(), json!(pos.must_capture()));
        out.insert("policy".into(), policy);
        ranked.is_empty()
    })
}

fn suggest_move(args: &Value) -> ToolOutput {
    board::suggest_answer(args, |pos: &Position, level, limits, rng| {
        pos.choose_move(level, limits, rng).map(|m| m.to_string())
    })
}

impl BoardState for Position {
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
        match self.status() {
            Status::GameOver { winner } => Some(winner.as_str()),
            Status::InProgress => None,
        }
    }
}

/// The side names used in descriptions, kept next to the engine's own.
fn side_note() -> String {
    format!(
        "White ('{}') moves first and up the board; black ('{}') moves down.",
        Color::White.as_str(),
        Color::Black.as_str()
    )
}

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            format!(
                "Start a game of checkers (American/English draughts, 8x8). Returns the state \
                 string and a gameId. {}",
                side_note()
            ),
            common::seed_only_schema(),
        ),
        new_game,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Apply),
            "Apply one checkers move to a state and return the new state. Captures are \
             mandatory and a multi-jump must be written in full (every landing square). An \
             illegal move returns legal:false, the unchanged state and a reason.",
            common::apply_schema(
                BOARD.position_field,
                state_schema(),
                BOARD.move_arg,
                move_schema(),
            ),
        ),
        apply_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "List the legal checkers moves of the side to move (captures first; when a capture \
             exists only captures are legal).",
            common::state_only_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        legal_moves,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            "Candidate moves for the checkers opponent, best first by a quick evaluation. \
             Choose exactly one of them.",
            common::choose_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        choose_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Suggest),
            "The built-in checkers AI's move for the side to move (levels random, easy, hard; \
             hard searches within timeMs).",
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
    use agents_games::checkers::START_STATE;

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        register(&mut registry);
        registry
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        match registry().call(name, &args) {
            Ok(out) => out,
            Err(e) => panic!("{name} failed: {e}"),
        }
    }

    const AFTER_C3D4: &str =
        ".b.b.b.b/b.b.b.b./.b.b.b.b/......../...w..../w...w.w./.w.w.w.w/w.w.w.w. b";
    /// Black man b6, white men c5, e3, h2; black to move: `b6d4f2` is forced.
    const DOUBLE_JUMP: &str =
        "......../......../.b....../..w...../......../....w.../.......w/........ b";
    /// White king alone, black to move: black has no piece, white has won.
    const OVER: &str = "......../......../......../......../......../......../......../W....... b";

    #[test]
    fn new_game_has_the_documented_shape() {
        let out = call("new_checkers_game", json!({}));
        assert!(!out.is_error);
        let id = out.structured["gameId"].as_str().unwrap().to_string();
        assert!(id.starts_with("g_") && id.len() == 34);
        assert_eq!(
            out.structured,
            json!({
                "type": "checkers_snapshot",
                "gameType": "checkers",
                "gameId": id,
                "state": START_STATE,
                "status": "in_progress",
                "turn": "w",
            })
        );
        let seeded = call("new_checkers_game", json!({"seed": "abc"}));
        assert_eq!(seeded.structured["state"], START_STATE);
        assert!(
            registry()
                .call("new_checkers_game", &json!({"seed": 1.5}))
                .is_err()
        );
    }

    #[test]
    fn apply_legal_move() {
        let out = call(
            "apply_checkers_move",
            json!({"gameId": "g_1", "state": START_STATE, "move": "C3-D4"}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "checkers_snapshot",
                "gameType": "checkers",
                "gameId": "g_1",
                "legal": true,
                "state": AFTER_C3D4,
                "status": "in_progress",
                "turn": "b",
                "lastMove": {"notation": "c3d4"},
            })
        );
        let out = call(
            "apply_checkers_move",
            json!({"state": AFTER_C3D4, "move": "b6a5"}),
        );
        assert_eq!(out.structured["lastMove"], json!({"notation": "b6a5"}));
        assert_eq!(out.structured["turn"], "w");
        assert!(out.structured.get("gameId").is_none());
    }

    #[test]
    fn apply_double_jump_and_a_winning_capture() {
        let out = call(
            "apply_checkers_move",
            json!({"state": DOUBLE_JUMP, "move": "b6xd4xf2"}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "checkers_snapshot",
                "gameType": "checkers",
                "legal": true,
                "state": "......../......../......../......../......../......../.....b.w/........ w",
                "status": "in_progress",
                "turn": "w",
                "lastMove": {"notation": "b6d4f2"},
            })
        );
        // A king capturing the last black piece wins.
        let last = "......../......../......../......../......../..b...../.W....../........ w";
        let out = call(
            "apply_checkers_move",
            json!({"state": last, "move": "b2d4"}),
        );
        assert_eq!(out.structured["status"], "game_over");
        assert_eq!(out.structured["winner"], "w");
        assert_eq!(out.structured["turn"], "b");
    }

    #[test]
    fn apply_illegal_moves() {
        let cases = [
            (START_STATE, "b6a5", "not_your_piece", "in_progress", "w"),
            (START_STATE, "d4e5", "no_piece", "in_progress", "w"),
            (START_STATE, "c3", "invalid_format", "in_progress", "w"),
            (START_STATE, "c3c4", "illegal_move", "in_progress", "w"),
            (DOUBLE_JUMP, "b6a5", "capture_mandatory", "in_progress", "b"),
            (
                DOUBLE_JUMP,
                "b6d4",
                "incomplete_capture",
                "in_progress",
                "b",
            ),
        ];
        for (state, mv, reason, status, turn) in cases {
            let out = call(
                "apply_checkers_move",
                json!({"gameId": "g_x", "state": state, "move": mv}),
            );
            assert!(out.is_error, "{mv}");
            assert_eq!(
                out.structured,
                json!({
                    "type": "checkers_snapshot",
                    "gameType": "checkers",
                    "gameId": "g_x",
                    "legal": false,
                    "state": state,
                    "error": "Illegal move.",
                    "reason": reason,
                    "status": status,
                    "turn": turn,
                }),
                "{mv}"
            );
        }
        let out = call(
            "apply_checkers_move",
            json!({"state": OVER, "move": "a1b2"}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "checkers_snapshot",
                "gameType": "checkers",
                "legal": false,
                "state": OVER,
                "error": "Illegal move.",
                "reason": "game_over",
                "status": "game_over",
                "turn": "b",
                "winner": "w",
            })
        );
    }

    #[test]
    fn apply_with_bad_state() {
        let bad = "b.b.b.b./......../......../......../......../......../......../........ w";
        let out = call(
            "apply_checkers_move",
            json!({"gameId": "g_2", "state": bad, "move": "c3d4"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "checkers_snapshot",
                "gameType": "checkers",
                "gameId": "g_2",
                "legal": false,
                "state": bad,
                "error": "Invalid state: piece 'b' on light square a8; pieces stand on dark \
                          squares only (file + rank even, e.g. a1, b2, c1) and light squares \
                          must be '.'",
                "reason": "invalid_state",
            })
        );
        let err = registry()
            .call(
                "apply_checkers_move",
                &json!({"state": START_STATE, "move": 34}),
            )
            .unwrap_err();
        assert_eq!(err.reason(), "invalid_args");
        assert!(
            registry()
                .call("apply_checkers_move", &json!({"state": START_STATE}))
                .is_err()
        );
    }

    #[test]
    fn legal_moves_lists() {
        let out = call("legal_checkers_moves", json!({"state": START_STATE}));
        assert!(!out.is_error && out.notes.is_empty());
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "gameType": "checkers",
                "moves": ["a3b4", "c3b4", "c3d4", "e3d4", "e3f4", "g3f4", "g3h4"],
                "forcedCaptures": [],
                "mustCapture": false,
                "status": "in_progress",
                "turn": "w",
            })
        );
        let out = call("legal_checkers_moves", json!({"state": DOUBLE_JUMP}));
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "gameType": "checkers",
                "moves": ["b6d4f2"],
                "forcedCaptures": ["b6d4f2"],
                "mustCapture": true,
                "status": "in_progress",
                "turn": "b",
            })
        );
        let out = call("legal_checkers_moves", json!({"state": OVER}));
        assert!(!out.is_error);
        assert_eq!(out.notes, vec![common::NO_MOVES_NOTE.to_string()]);
        assert_eq!(out.structured["moves"], json!([]));
        assert_eq!(out.structured["winner"], "w");
        assert_eq!(out.structured["status"], "game_over");
        let out = call("legal_checkers_moves", json!({"state": "nonsense"}));
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "gameType": "checkers",
                "moves": [],
                "forcedCaptures": [],
                "mustCapture": false,
                "error": "Invalid state: missing turn after the board (expected ' w' or ' b')",
                "reason": "invalid_state",
            })
        );
    }

    #[test]
    fn choose_offers_only_legal_moves_best_first() {
        let out = call(
            "choose_checkers_opponent_move",
            json!({"state": AFTER_C3D4}),
        );
        assert!(!out.is_error);
        let moves: Vec<String> = serde_json::from_value(out.structured["moves"].clone()).unwrap();
        let mut sorted = moves.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            ["b6a5", "b6c5", "d6c5", "d6e5", "f6e5", "f6g5", "h6g5"]
        );
        assert_eq!(
            out.structured["policy"],
            json!({"mustChooseFromMoves": true, "chooseExactlyOne": true})
        );
        assert_eq!(out.structured["type"], "opponent_choice");
        assert_eq!(out.structured["gameType"], "checkers");
        // From a quiet position with one blunder (c3d4 is jumped by e5), the blunder is last.
        let blunder = ".......b/......../......../....b.../......../w.w...../......../........ w";
        let out = call("choose_checkers_opponent_move", json!({"state": blunder}));
        assert_eq!(out.structured["moves"].as_array().unwrap().len(), 3);
        assert_eq!(out.structured["moves"][2], "c3d4");
        let limited = call(
            "choose_checkers_opponent_move",
            json!({"state": AFTER_C3D4, "maxCandidates": 3}),
        );
        assert_eq!(limited.structured["moves"], json!(moves[..3]));
        let forced = call(
            "choose_checkers_opponent_move",
            json!({"state": DOUBLE_JUMP}),
        );
        assert_eq!(forced.structured["moves"], json!(["b6d4f2"]));
        let over = call("choose_checkers_opponent_move", json!({"state": OVER}));
        assert!(!over.is_error);
        assert_eq!(over.structured["moves"], json!([]));
        assert_eq!(over.notes, vec![common::NO_MOVES_NOTE.to_string()]);
        let bad = call("choose_checkers_opponent_move", json!({"state": "x w"}));
        assert!(bad.is_error);
        assert_eq!(bad.structured["reason"], "invalid_state");
        assert_eq!(bad.structured["moves"], json!([]));
    }

    #[test]
    fn suggest_returns_a_legal_move() {
        for level in ["random", "easy", "hard"] {
            let out = call(
                "suggest_checkers_move",
                json!({"state": AFTER_C3D4, "level": level, "timeMs": 20, "seed": 5}),
            );
            assert!(!out.is_error);
            assert_eq!(out.structured["type"], "ai_move");
            assert_eq!(out.structured["gameType"], "checkers");
            assert_eq!(out.structured["level"], level);
            let mv = out.structured["move"].as_str().unwrap();
            let pos: Position = AFTER_C3D4.parse().unwrap();
            assert!(pos.play(mv).is_ok(), "{level}: {mv}");
        }
        let out = call("suggest_checkers_move", json!({"state": DOUBLE_JUMP}));
        assert_eq!(out.structured["move"], "b6d4f2");
        assert_eq!(out.structured["level"], "hard");
        let out = call("suggest_checkers_move", json!({"state": OVER}));
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "ai_move",
                "gameType": "checkers",
                "error": "No legal moves available; the game is over.",
                "reason": "game_over",
                "status": "game_over",
                "turn": "b",
                "winner": "w",
            })
        );
        let seeded = |seed: i64| {
            call(
                "suggest_checkers_move",
                json!({"state": START_STATE, "level": "random", "seed": seed}),
            )
            .structured["move"]
                .clone()
        };
        assert_eq!(seeded(11), seeded(11));
        let bad = call("suggest_checkers_move", json!({"state": ""}));
        assert_eq!(bad.structured["reason"], "invalid_state");
        assert!(
            registry()
                .call(
                    "suggest_checkers_move",
                    &json!({"state": START_STATE, "level": "expert"})
                )
                .is_err()
        );
    }

    #[test]
    fn a_full_game_through_the_tools() {
        let mut state = call("new_checkers_game", json!({"seed": 1})).structured["state"]
            .as_str()
            .unwrap()
            .to_string();
        for ply in 0..400 {
            let choice = call("choose_checkers_opponent_move", json!({"state": state}));
            let Some(mv) = choice.structured["moves"]
                .get(ply % 2)
                .or(choice.structured["moves"].get(0))
            else {
                assert_eq!(choice.structured["status"], "game_over");
                return;
            };
            let out = call("apply_checkers_move", json!({"state": state, "move": mv}));
            assert_eq!(out.structured["legal"], true, "{state} {mv}");
            state = out.structured["state"].as_str().unwrap().to_string();
        }
    }
}
