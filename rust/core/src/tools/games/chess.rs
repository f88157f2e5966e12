//! Chess tools: `new_chess_game`, `apply_chess_move`, `legal_chess_moves`,
//! `choose_chess_opponent_move` and `suggest_chess_move`.
//!
//! The state is a FEN string (see [`agents_games::chess`] for the grammar and the rules).
//! Outputs follow the game-tools contract (the fields every game tool returns); extra fields:
//!
//! - `new_chess_game`: `playerSide` (`"white"`/`"black"`, the side the user plays).
//! - `apply_chess_move`: `check` always, `winner` and `reason` (`checkmate`, `stalemate`,
//!   `insufficient_material`, `seventy_five_move_rule`) when the move ended the game. An illegal
//!   or unparsable move answers `legal: false` with the unchanged `fen`, `error`, `reason` (the
//!   engine's code: `invalid_format`, `no_piece`, `wrong_side`, `king_in_check`,
//!   `promotion_required`, `invalid_promotion`, `castling_not_allowed`, `ambiguous_move`,
//!   `illegal_move`, `game_over`), `status`, `turn` and `check` (and `winner` on a finished game);
//!   an unparsable FEN answers `reason: "invalid_state"` without `status`/`turn`.
//! - `legal_chess_moves`: `turn`, `status`, `check`, and `winner`/`reason` on a finished game.
//!   Moves are sorted UCI strings.
//! - `choose_chess_opponent_move`: `turn`, `status`; candidates best first by the engine's quick
//!   evaluation.
//! - `suggest_chess_move`: `san` besides the UCI `move`.

use agents_games::chess::{self, ChessGame};
use agents_games::seed::rng_from;
use serde_json::{Map, Value, json};

use super::board::{self, BoardState};
use super::common;
#[cfg(test)]
use super::common::NO_MOVES_NOTE;
use super::{BoardDecl, GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Chess, as the game tools, the game app and `GameTools.games()` know it.
pub const GAME: GameDecl = GameDecl::board("chess", &BOARD, register);

const BOARD: BoardDecl = BoardDecl {
    position_field: "fen",
    move_arg: "moveUci",
    legal_field: "movesUci",
    sides: ["w", "b"],
    hard_depth: Some(6),
    hidden: &[],
    move_schema: || json!({"type": "string", "minLength": 2, "maxLength": 10}),
    move_description: "Move (you play white): UCI such as e2e4 or e7e8q; SAN such as Nf3 \
                       works too.",
};

fn fen_schema() -> Value {
    common::string_schema("The position as a FEN string (Forsyth-Edwards Notation).")
}

impl BoardState for ChessGame {
    const GAME_TYPE: &'static str = GAME.name;
    const SNAPSHOT: &'static str = "chess_snapshot";
    const STATE_KEY: &'static str = BOARD.position_field;

    fn status(&self) -> &'static str {
        if self.is_game_over() {
            "game_over"
        } else {
            "in_progress"
        }
    }

    fn turn(&self) -> &'static str {
        self.turn_str()
    }

    fn winner(&self) -> Option<&'static str> {
        self.outcome().map(|end| end.winner.as_str())
    }

    /// `status`, `turn`, `check` and, on a finished game, `winner` and the end `reason` (which
    /// a refused move's own `reason` then replaces).
    ///
    /// The outcome needs a legal-move generation, so it is computed once here rather than
    /// through `status` and `winner` (this is `apply_chess_move`'s hot path).
    fn describe(&self, out: &mut Map<String, Value>) {
        let end = self.outcome();
        let status = if end.is_some() {
            "game_over"
        } else {
            "in_progress"
        };
        out.insert("status".into(), json!(status));
        out.insert("turn".into(), json!(self.turn_str()));
        out.insert("check".into(), json!(self.is_check()));
        if let Some(end) = end {
            out.insert("winner".into(), json!(end.winner.as_str()));
            out.insert("reason".into(), json!(end.reason.as_str()));
        }
    }
}

fn new_game(args: &Value) -> ToolOutput {
    let side = args.get("side").and_then(Value::as_str).unwrap_or("white");
    // The seed is accepted for uniformity with every `new_*` tool; the start is always the same.
    let _ = common::seed_arg(args);
    let mut out = board::new_snapshot(&ChessGame::new());
    out.insert("playerSide".into(), json!(side));
    ToolOutput::ok(Value::Object(out))
}

fn apply_move(args: &Value) -> ToolOutput {
    board::apply_answer(args, |game: &ChessGame| {
        let mut next = game.clone();
        let record = next.apply(common::str_arg(args, BOARD.move_arg))?;
        let mut extra = Map::new();
        extra.insert(
            "lastMove".into(),
            json!({"uci": record.uci, "san": record.san}),
        );
        Ok((next, extra))
    })
}

fn legal_moves(args: &Value) -> ToolOutput {
    let mut head = json!({"type": "legal_moves"});
    head[BOARD.legal_field] = json!([]);
    board::list_answer(args, head, |game: &ChessGame, out| {
        board::put_moves(out, BOARD.legal_field, &game.legal_moves_uci())
    })
}

fn choose_move(args: &Value) -> ToolOutput {
    let policy = common::policy("mustChooseFromMovesUci");
    let head = json!({"type": "opponent_choice", "movesUci": [], "policy": policy});
    let max = common::max_candidates_arg(args);
    board::list_answer(args, head, |game: &ChessGame, out| {
        let moves: Vec<String> = game
            .ranked_moves()
            .iter()
            .take(max)
            .map(chess::uci)
            .collect();
        out.insert("policy".into(), policy);
        board::put_moves(out, "movesUci", &moves)
    })
}

/// Custom rather than [`board::suggest_answer`]: the answer adds the move's `san` and, unlike
/// the other games, carries no `turn`.
fn suggest_move(args: &Value) -> ToolOutput {
    let game: ChessGame = match board::parse_state(args, board::ai_head::<ChessGame>()) {
        Ok(game) => game,
        Err(failed) => return failed,
    };
    let level = common::level_arg(args);
    let mut rng = rng_from(common::seed_arg(args).as_ref());
    match game.choose_move(level, common::limits_arg(args), &mut rng) {
        Some(mv) => {
            let mut out = board::ai_head::<ChessGame>();
            out["move"] = json!(chess::uci(&mv));
            out["san"] = json!(game.san(&mv));
            out["level"] = json!(level.as_str());
            ToolOutput::ok(out)
        }
        None => board::game_over(board::ai_head::<ChessGame>(), &game),
    }
}

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            "Start a chess game from the standard position (white to move). Returns the FEN to \
             pass to the other chess tools and a gameId.",
            common::object_schema(
                &[
                    (
                        "side",
                        json!({
                            "type": "string",
                            "enum": ["white", "black"],
                            "description": "The side the user plays (default white); echoed as playerSide."
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
            "Play one move in a chess position. The move is UCI (e2e4, castling e1g1, promotion \
             e7e8q) or SAN (Nf3, O-O, exd5). Returns the new FEN, status, turn, check and the \
             move in UCI and SAN; an illegal move returns legal:false with the unchanged FEN and \
             the reason.",
            common::apply_schema(
                BOARD.position_field,
                fen_schema(),
                BOARD.move_arg,
                common::string_schema(
                    "The move in UCI (e2e4, e1g1, e7e8q); SAN (Nf3, O-O) is accepted too.",
                ),
            ),
        ),
        apply_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "List the legal moves of a chess position as UCI strings (empty when the game is over).",
            common::state_only_schema(BOARD.position_field, fen_schema()),
        )
        .read_only(),
        legal_moves,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            format!(
                "Candidate moves for the side to move, best first by the built-in engine's quick \
                 evaluation. Choose exactly one of movesUci and play it with {}.",
                GAME.tool(ToolKind::Apply)
            ),
            common::choose_schema(BOARD.position_field, fen_schema()),
        )
        .read_only(),
        choose_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Suggest),
            "Ask the built-in chess engine for a move (UCI and SAN) at a level: random, easy or \
             hard (alpha-beta search within timeMs).",
            common::suggest_schema(BOARD.position_field, fen_schema()),
        )
        .read_only()
        .searches(),
        suggest_move,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const FOOLS_MATE: &str = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(r: &ToolRegistry, name: &str, args: Value) -> ToolOutput {
        r.call(name, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn registers_five_tools_with_read_only_flags() {
        let r = registry();
        let names: Vec<(&str, bool)> = r.tools().map(|t| (t.name(), t.is_read_only())).collect();
        assert_eq!(
            names,
            vec![
                ("apply_chess_move", false),
                ("choose_chess_opponent_move", true),
                ("legal_chess_moves", true),
                ("new_chess_game", false),
                ("suggest_chess_move", true),
            ]
        );
        // Also present in the full registry.
        assert!(
            ToolRegistry::with_game_tools()
                .get("apply_chess_move")
                .is_some()
        );
    }

    #[test]
    fn new_game_snapshot() {
        let r = registry();
        let out = call(&r, "new_chess_game", json!({}));
        assert!(!out.is_error);
        let mut s = out.structured.clone();
        let id = s["gameId"].as_str().unwrap().to_string();
        assert!(id.starts_with("g_") && id.len() == 34);
        s.as_object_mut().unwrap().remove("gameId");
        assert_eq!(
            s,
            json!({
                "type": "chess_snapshot", "gameType": "chess", "fen": START,
                "status": "in_progress", "turn": "w", "playerSide": "white"
            })
        );
        let out = call(&r, "new_chess_game", json!({"side": "black", "seed": 7}));
        assert_eq!(out.structured["playerSide"], "black");
        assert_eq!(out.structured["fen"], START);
        let out = call(&r, "new_chess_game", json!({"seed": "abc"}));
        assert_eq!(out.structured["turn"], "w");
        let err = r
            .call("new_chess_game", &json!({"side": "red"}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "side"));
    }

    #[test]
    fn apply_matches_the_spec_example() {
        let out = call(
            &registry(),
            "apply_chess_move",
            json!({"gameId": "g_123", "fen": START, "moveUci": "e2e4"}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "chess_snapshot", "gameType": "chess", "gameId": "g_123", "legal": true,
                "fen": AFTER_E4, "status": "in_progress", "turn": "b",
                "lastMove": {"uci": "e2e4", "san": "e4"}, "check": false
            })
        );
    }

    #[test]
    fn apply_accepts_san_and_reports_game_over() {
        let r = registry();
        let out = call(
            &r,
            "apply_chess_move",
            json!({"fen": START, "moveUci": " Nf3 "}),
        );
        assert_eq!(
            out.structured["lastMove"],
            json!({"uci": "g1f3", "san": "Nf3"})
        );
        assert!(out.structured.get("gameId").is_none());
        let out = call(
            &r,
            "apply_chess_move",
            json!({"fen": "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "moveUci": "d8h4"}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "chess_snapshot", "gameType": "chess", "legal": true, "fen": FOOLS_MATE,
                "status": "game_over", "turn": "w", "lastMove": {"uci": "d8h4", "san": "Qh4#"},
                "check": true, "winner": "b", "reason": "checkmate"
            })
        );
        let out = call(
            &r,
            "apply_chess_move",
            json!({"fen": "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "moveUci": "f1f7"}),
        );
        assert_eq!(out.structured["status"], "game_over");
        assert_eq!(out.structured["winner"], "draw");
        assert_eq!(out.structured["reason"], "stalemate");
        assert_eq!(out.structured["check"], false);
    }

    #[test]
    fn illegal_moves_keep_the_fen() {
        let r = registry();
        let pinned = "4k3/8/8/8/4r3/8/4B3/4K3 w - - 0 1";
        let out = call(
            &r,
            "apply_chess_move",
            json!({"gameId": "g_1", "fen": pinned, "moveUci": "e2d3"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "chess_snapshot", "gameType": "chess", "gameId": "g_1", "legal": false,
                "fen": pinned, "error": "Illegal move: king would be in check",
                "reason": "king_in_check", "status": "in_progress", "turn": "w", "check": false
            })
        );
        let cases = [
            ("e3e4", "Illegal move: no piece on e3", "no_piece"),
            ("e7e5", "Illegal move: not your turn", "wrong_side"),
            (
                "e2e5",
                "Illegal move: piece cannot move there",
                "illegal_move",
            ),
            ("xyz", "Invalid move format", "invalid_format"),
            (
                "e1g1",
                "Illegal move: castling path is blocked",
                "castling_not_allowed",
            ),
        ];
        for (mv, error, reason) in cases {
            let out = call(&r, "apply_chess_move", json!({"fen": START, "moveUci": mv}));
            assert!(out.is_error);
            assert_eq!(out.structured["legal"], false);
            assert_eq!(out.structured["fen"], START);
            assert_eq!(out.structured["error"], error, "{mv}");
            assert_eq!(out.structured["reason"], reason, "{mv}");
            assert_eq!(out.structured["status"], "in_progress");
            assert_eq!(out.structured["turn"], "w");
        }
        let promo = "8/4P3/8/8/8/8/k7/4K3 w - - 0 1";
        let out = call(
            &r,
            "apply_chess_move",
            json!({"fen": promo, "moveUci": "e7e8"}),
        );
        assert_eq!(
            out.structured["error"],
            "Illegal move: promotion piece required"
        );
        assert_eq!(out.structured["reason"], "promotion_required");
        let out = call(
            &r,
            "apply_chess_move",
            json!({"fen": promo, "moveUci": "e7e8q"}),
        );
        assert_eq!(
            out.structured["lastMove"],
            json!({"uci": "e7e8q", "san": "e8=Q"})
        );

        let out = call(
            &r,
            "apply_chess_move",
            json!({"fen": FOOLS_MATE, "moveUci": "e2e4"}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "chess_snapshot", "gameType": "chess", "legal": false, "fen": FOOLS_MATE,
                "error": "Illegal move: the game is over", "reason": "game_over",
                "status": "game_over", "turn": "w", "check": true, "winner": "b"
            })
        );
    }

    #[test]
    fn unparsable_fen_is_reported_not_crashed() {
        let r = registry();
        let out = call(
            &r,
            "apply_chess_move",
            json!({"gameId": "g_9", "fen": "not a fen", "moveUci": "e2e4"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "chess_snapshot", "gameType": "chess", "gameId": "g_9", "legal": false,
                "fen": "not a fen", "error": "Invalid FEN: invalid board part in fen",
                "reason": "invalid_state"
            })
        );
        let out = call(
            &r,
            "legal_chess_moves",
            json!({"fen": "8/8/8/8/8/8/8/8 w - - 0 1"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves", "movesUci": [],
                "error": "Invalid FEN: illegal position: empty board, missing king",
                "reason": "invalid_state"
            })
        );
        let out = call(&r, "choose_chess_opponent_move", json!({"fen": ""}));
        assert!(out.is_error);
        assert_eq!(out.structured["movesUci"], json!([]));
        assert_eq!(out.structured["error"], "Invalid FEN: empty string");
        let out = call(&r, "suggest_chess_move", json!({"fen": "x"}));
        assert!(out.is_error);
        assert_eq!(out.structured["reason"], "invalid_state");
        let err = r
            .call("apply_chess_move", &json!({"fen": START, "moveUci": 5}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "moveUci"));
        let err = r
            .call("apply_chess_move", &json!({"fen": START}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "moveUci"));
    }

    #[test]
    fn legal_moves_lists_and_game_over() {
        let r = registry();
        let out = call(&r, "legal_chess_moves", json!({"fen": START}));
        assert!(!out.is_error && out.notes.is_empty());
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves",
                "movesUci": ["a2a3", "a2a4", "b1a3", "b1c3", "b2b3", "b2b4", "c2c3", "c2c4",
                             "d2d3", "d2d4", "e2e3", "e2e4", "f2f3", "f2f4", "g1f3", "g1h3",
                             "g2g3", "g2g4", "h2h3", "h2h4"],
                "turn": "w", "status": "in_progress", "check": false
            })
        );
        let out = call(&r, "legal_chess_moves", json!({"fen": FOOLS_MATE}));
        assert!(!out.is_error);
        assert_eq!(out.notes, vec![NO_MOVES_NOTE.to_string()]);
        assert_eq!(
            out.structured,
            json!({
                "type": "legal_moves", "movesUci": [], "turn": "w", "status": "game_over",
                "check": true, "winner": "b", "reason": "checkmate"
            })
        );
        let out = call(
            &r,
            "legal_chess_moves",
            json!({"fen": "8/8/8/4k3/8/8/8/4K3 w - - 0 1"}),
        );
        assert_eq!(out.structured["movesUci"], json!([]));
        assert_eq!(out.structured["winner"], "draw");
        assert_eq!(out.structured["reason"], "insufficient_material");
        let out = call(
            &r,
            "legal_chess_moves",
            json!({"fen": "4k3/8/8/8/8/8/8/R3K3 w - - 150 100"}),
        );
        assert_eq!(out.structured["reason"], "seventy_five_move_rule");
    }

    #[test]
    fn choose_offers_ranked_legal_candidates() {
        let r = registry();
        let out = call(&r, "choose_chess_opponent_move", json!({"fen": AFTER_E4}));
        assert!(!out.is_error);
        let s = &out.structured;
        assert_eq!(s["type"], "opponent_choice");
        assert_eq!(
            s["policy"],
            json!({"mustChooseFromMovesUci": true, "chooseExactlyOne": true})
        );
        assert_eq!(s["movesUci"].as_array().unwrap().len(), 20);
        let legal = call(&r, "legal_chess_moves", json!({"fen": AFTER_E4})).structured;
        for mv in s["movesUci"].as_array().unwrap() {
            assert!(legal["movesUci"].as_array().unwrap().contains(mv));
        }
        let out = call(
            &r,
            "choose_chess_opponent_move",
            json!({"fen": "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "maxCandidates": 3}),
        );
        let moves = out.structured["movesUci"].as_array().unwrap();
        assert_eq!(moves.len(), 3);
        assert_eq!(moves[0], "a1a8");
        let out = call(&r, "choose_chess_opponent_move", json!({"fen": FOOLS_MATE}));
        assert!(!out.is_error);
        assert_eq!(out.structured["movesUci"], json!([]));
        assert_eq!(out.notes, vec![NO_MOVES_NOTE.to_string()]);
        let err = r
            .call(
                "choose_chess_opponent_move",
                &json!({"fen": START, "maxCandidates": 0}),
            )
            .unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "maxCandidates")
        );
    }

    #[test]
    fn suggest_finds_mate_and_handles_game_over() {
        let r = registry();
        let mate = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
        let out = call(&r, "suggest_chess_move", json!({"fen": mate}));
        assert_eq!(
            out.structured,
            json!({"type": "ai_move", "gameType": "chess", "move": "a1a8", "san": "Ra8#", "level": "hard"})
        );
        let out = call(
            &r,
            "suggest_chess_move",
            json!({"fen": mate, "level": "easy", "timeMs": 50, "seed": 1}),
        );
        assert_eq!(out.structured["level"], "easy");
        assert_eq!(out.structured["move"], "a1a8");
        let a = call(
            &r,
            "suggest_chess_move",
            json!({"fen": START, "level": "random", "seed": "s"}),
        );
        let b = call(
            &r,
            "suggest_chess_move",
            json!({"fen": START, "level": "random", "seed": "s"}),
        );
        assert_eq!(a.structured, b.structured);
        let out = call(&r, "suggest_chess_move", json!({"fen": FOOLS_MATE}));
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "ai_move", "gameType": "chess",
                "error": "No legal moves available; the game is over.", "reason": "game_over",
                "status": "game_over", "turn": "w", "winner": "b"
            })
        );
    }

    /// Perft through the JSON tools: every node lists its moves with `legal_chess_moves` and
    /// plays each with `apply_chess_move`; the leaves are the legal applications at `depth`.
    fn tool_perft(r: &ToolRegistry, fen: &str, depth: u32) -> u64 {
        let listed = call(r, "legal_chess_moves", json!({"fen": fen})).structured;
        let moves = listed["movesUci"].as_array().cloned().unwrap_or_default();
        let mut total = 0;
        for mv in moves {
            let out = call(r, "apply_chess_move", json!({"fen": fen, "moveUci": mv}));
            assert_eq!(
                out.structured["legal"], true,
                "{fen} {mv}: {}",
                out.structured
            );
            assert_eq!(out.structured["lastMove"]["uci"], mv);
            total += if depth == 1 {
                1
            } else {
                tool_perft(r, out.structured["fen"].as_str().unwrap(), depth - 1)
            };
        }
        total
    }

    #[test]
    fn perft_through_the_tool_layer() {
        let r = registry();
        let cases = [
            (START, 3, 8_902),
            (
                "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                2,
                2_039,
            ),
            ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 3, 2_812),
            (
                "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                2,
                264,
            ),
            (
                "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                2,
                1_486,
            ),
        ];
        for (fen, depth, expected) in cases {
            assert_eq!(tool_perft(&r, fen, depth), expected, "{fen} depth {depth}");
        }
    }

    #[test]
    fn seeded_playout_through_the_tools() {
        let r = registry();
        for seed in 0..3 {
            let mut fen = call(&r, "new_chess_game", json!({"seed": seed})).structured["fen"]
                .as_str()
                .unwrap()
                .to_string();
            for ply in 0..200 {
                let pick = call(
                    &r,
                    "suggest_chess_move",
                    json!({"fen": fen, "level": "random", "seed": seed * 1000 + ply}),
                );
                if pick.is_error {
                    assert_eq!(pick.structured["reason"], "game_over");
                    break;
                }
                let mv = pick.structured["move"].as_str().unwrap().to_string();
                let listed = call(&r, "legal_chess_moves", json!({"fen": fen})).structured;
                assert!(listed["movesUci"].as_array().unwrap().contains(&json!(mv)));
                let out = call(&r, "apply_chess_move", json!({"fen": fen, "moveUci": mv}));
                assert!(!out.is_error, "{}", out.structured);
                fen = out.structured["fen"].as_str().unwrap().to_string();
            }
        }
    }
}
