//! Sea battle tools: `new_sea_battle_game`, `apply_sea_battle_move`, `legal_sea_battle_moves`,
//! `choose_sea_battle_opponent_move` and `suggest_sea_battle_move`.
//!
//! The state string and the rules are those of [`agents_games::sea_battle`]. Moves are
//! coordinates `A1`–`J10` (trimmed, case-insensitive on input; upper case on output) of the board
//! the side to move (`T`) fires at. The AI tools play for whoever's turn it is and only use that
//! side's fog board and the sunk announcements.

use agents_games::sea_battle::{Coord, SeaBattleState};
use agents_games::seed::rng_from;
use serde_json::{Value, json};

use super::board::{self, BoardState};
use super::common;
use super::{BoardDecl, GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Sea battle, as the game tools, the game app and `GameTools.games()` know it.
pub const GAME: GameDecl = GameDecl::board("sea_battle", &BOARD, register);

const BOARD: BoardDecl = BoardDecl {
    position_field: "state",
    move_arg: "coord",
    legal_field: "moves",
    sides: ["player", "opponent"],
    hard_depth: None,
    hidden: &["O"],
    move_schema: || json!({"type": "string", "pattern": "^[A-Ja-j]([1-9]|10)$"}),
    move_description: "Fire at a cell of the opponent's board: A1 to J10 (letter = column, \
                       number = row). In `position`, P is your board, F your shots at the \
                       opponent (hits and misses), OF the opponent's shots at you.",
};

const SNAPSHOT: &str = "sea_battle_snapshot";

fn state_schema() -> Value {
    common::string_schema(
        "Sea battle state: P:<board>|O:<board>|F:<fog>|OF:<fog>|T:<player|opponent>|ST:<in_progress|game_over>|LA:<last_action>|W:<player|opponent|->; a board is 10 rows of 10 cells (row 1 first, columns A-J) separated by '/'.",
    )
}

fn names(coords: impl IntoIterator<Item = Coord>) -> Vec<String> {
    coords.into_iter().map(|c| c.to_string()).collect()
}

fn new_game(args: &Value) -> ToolOutput {
    let mut rng = rng_from(common::seed_arg(args).as_ref());
    let state = SeaBattleState::new_game(&mut rng);
    ToolOutput::ok(Value::Object(board::new_snapshot(&state)))
}

fn apply_move(args: &Value) -> ToolOutput {
    board::apply_answer(args, |state: &SeaBattleState| {
        let next = state.apply_str(common::str_arg(args, BOARD.move_arg))?;
        let extra = board::last_action(next.last_action());
        Ok((next, extra))
    })
}

fn legal_moves(args: &Value) -> ToolOutput {
    board::legal_answer(args, |state: &SeaBattleState| names(state.legal_moves()))
}

fn choose_move(args: &Value) -> ToolOutput {
    board::choose_answer(args, |state: &SeaBattleState| names(state.ranked_moves()))
}

fn suggest_move(args: &Value) -> ToolOutput {
    board::suggest_answer(args, |state: &SeaBattleState, level, limits, rng| {
        state.choose_move(level, limits, rng).map(|c| c.to_string())
    })
}

impl BoardState for SeaBattleState {
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
            "Start a sea battle: two 10x10 boards, each with ships of lengths 5, 4, 3, 3 and 2 \
             placed at random (never touching). The player fires first. Pass a seed for a \
             reproducible fleet.",
            common::seed_only_schema(),
        ),
        new_game,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Apply),
            "The side to move (T) fires at a coordinate of the other side's board. Returns the new \
             state and lastAction <COORD>:miss|hit|sunk(N), or legal:false with the unchanged state.",
            common::apply_schema(
                BOARD.position_field,
                state_schema(),
                BOARD.move_arg,
                json!({
                    "type": "string",
                    "description": "Target cell A1 through J10 (column letter A-J, row 1-10; case-insensitive)."
                }),
            ),
        ),
        apply_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Legal),
            "List the cells the side to move has not fired at yet, row by row (A1, B1, ..., J1, A2, ...).",
            common::state_only_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        legal_moves,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Choose),
            "Candidate cells for the side to move, most likely ship locations first (from its own \
             fog board only); choose exactly one of them.",
            common::choose_schema(BOARD.position_field, state_schema()),
        )
        .read_only(),
        choose_move,
    );
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Suggest),
            "The built-in AI's shot for the side to move (random; easy: random plus targeting after \
             a hit; hard: probability density hunting and targeting). Uses only that side's fog board.",
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

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        registry().call(name, &args).expect("valid arguments")
    }

    fn new_state(seed: Value) -> String {
        let out = call("new_sea_battle_game", json!({"seed": seed}));
        out.structured["state"].as_str().unwrap().to_string()
    }

    /// The first cell of `board_key`'s board holding `cell`.
    fn find_cell(state: &str, board_key: &str, cell: char) -> String {
        let board = state
            .split('|')
            .find_map(|f| f.strip_prefix(&format!("{board_key}:")))
            .unwrap();
        let i = board.replace('/', "").find(cell).unwrap();
        format!("{}{}", (b'A' + (i % 10) as u8) as char, i / 10 + 1)
    }

    /// Plays `apply_sea_battle_move` through the registry until the game ends.
    fn play_out(mut state: String) -> Value {
        loop {
            let moves = call(
                "choose_sea_battle_opponent_move",
                json!({"state": state, "maxCandidates": 1}),
            );
            let Some(mv) = moves.structured["moves"][0].as_str() else {
                return moves.structured;
            };
            let out = call(
                "apply_sea_battle_move",
                json!({"state": state, "coord": mv}),
            );
            assert!(!out.is_error, "{}", out.structured);
            if out.structured["status"] == "game_over" {
                return out.structured;
            }
            state = out.structured["state"].as_str().unwrap().to_string();
        }
    }

    #[test]
    fn all_tools_are_registered_in_the_game_registry() {
        let all = ToolRegistry::with_game_tools();
        for name in [
            "new_sea_battle_game",
            "apply_sea_battle_move",
            "legal_sea_battle_moves",
            "choose_sea_battle_opponent_move",
            "suggest_sea_battle_move",
        ] {
            assert!(all.get(name).is_some(), "{name}");
        }
        assert!(
            all.get("choose_sea_battle_opponent_move")
                .unwrap()
                .is_read_only()
        );
        assert!(!all.get("new_sea_battle_game").unwrap().is_read_only());
    }

    #[test]
    fn new_game_is_seedable() {
        let out = call("new_sea_battle_game", json!({"seed": 7}));
        let s = &out.structured;
        assert_eq!(s["type"], "sea_battle_snapshot");
        assert_eq!(s["gameType"], "sea_battle");
        assert_eq!(s["status"], "in_progress");
        assert_eq!(s["turn"], "player");
        assert!(s["gameId"].as_str().unwrap().starts_with("g_"));
        assert_eq!(s.as_object().unwrap().len(), 6);
        let state = s["state"].as_str().unwrap();
        assert!(state.ends_with("|T:player|ST:in_progress|LA:-|W:-"));
        assert_eq!(new_state(json!(7)), state);
        assert_ne!(new_state(json!(8)), state);
        assert_ne!(new_state(json!("7")), state);
        let unseeded = call("new_sea_battle_game", json!({}));
        assert!(
            unseeded.structured["state"]
                .as_str()
                .unwrap()
                .parse::<SeaBattleState>()
                .is_ok()
        );
    }

    #[test]
    fn apply_reports_hit_miss_and_echoes_the_game_id() {
        let state = new_state(json!(1));
        let ship = find_cell(&state, "O", 'S');
        let out = call(
            "apply_sea_battle_move",
            json!({"gameId": "g_9", "state": state, "coord": format!(" {} ", ship.to_lowercase())}),
        );
        assert!(!out.is_error);
        let next = out.structured["state"].as_str().unwrap().to_string();
        assert_eq!(
            out.structured,
            json!({
                "type": "sea_battle_snapshot",
                "gameType": "sea_battle",
                "gameId": "g_9",
                "legal": true,
                "state": next,
                "status": "in_progress",
                "turn": "opponent",
                "lastAction": format!("{ship}:hit")
            })
        );
        // The opponent now fires at the player's board; water there is a miss.
        let water = find_cell(&next, "P", '.');
        let out = call(
            "apply_sea_battle_move",
            json!({"state": next, "coord": water}),
        );
        assert_eq!(out.structured["lastAction"], format!("{water}:miss"));
        assert_eq!(out.structured["turn"], "player");
    }

    #[test]
    fn illegal_moves_keep_the_state_and_give_reasons() {
        let state = new_state(json!(2));
        let out = call(
            "apply_sea_battle_move",
            json!({"gameId": "g_3", "state": state, "coord": "K11"}),
        );
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({
                "type": "sea_battle_snapshot",
                "gameType": "sea_battle",
                "gameId": "g_3",
                "legal": false,
                "state": state,
                "error": "Illegal move.",
                "reason": "invalid_coord",
                "status": "in_progress",
                "turn": "player"
            })
        );
        let s1 = call(
            "apply_sea_battle_move",
            json!({"state": state, "coord": "A1"}),
        )
        .structured["state"]
            .as_str()
            .unwrap()
            .to_string();
        let s2 =
            call("apply_sea_battle_move", json!({"state": s1, "coord": "A1"})).structured["state"]
                .as_str()
                .unwrap()
                .to_string();
        let out = call("apply_sea_battle_move", json!({"state": s2, "coord": "a1"}));
        assert_eq!(out.structured["reason"], "already_targeted");
        assert_eq!(out.structured["error"], "Illegal move.");
        assert_eq!(out.structured["state"], s2.as_str());
        let out = call(
            "apply_sea_battle_move",
            json!({"state": "nope", "coord": "A1"}),
        );
        assert_eq!(
            out.structured,
            json!({
                "type": "sea_battle_snapshot",
                "gameType": "sea_battle",
                "legal": false,
                "state": "nope",
                "error": "Invalid state: expected 8 fields P|O|F|OF|T|ST|LA|W, found 1",
                "reason": "invalid_state"
            })
        );
    }

    #[test]
    fn legal_and_choose_lists() {
        let state = new_state(json!(3));
        let out = call("legal_sea_battle_moves", json!({"state": state}));
        let moves = out.structured["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 100);
        assert_eq!(moves[..3], [json!("A1"), json!("B1"), json!("C1")]);
        assert_eq!(moves[10], json!("A2"));
        assert_eq!(out.structured["turn"], "player");
        let out = call("choose_sea_battle_opponent_move", json!({"state": state}));
        assert_eq!(out.structured["type"], "opponent_choice");
        assert_eq!(out.structured["moves"].as_array().unwrap().len(), 20);
        assert_eq!(
            out.structured["policy"],
            json!({"mustChooseFromMoves": true, "chooseExactlyOne": true})
        );
        let out = call(
            "choose_sea_battle_opponent_move",
            json!({"state": state, "maxCandidates": 3}),
        );
        assert_eq!(out.structured["moves"].as_array().unwrap().len(), 3);
        for tool in ["legal_sea_battle_moves", "choose_sea_battle_opponent_move"] {
            let out = call(tool, json!({"state": "bad"}));
            assert!(out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["reason"], "invalid_state");
        }
    }

    #[test]
    fn a_game_played_through_the_tools_ends_with_a_winner() {
        let end = play_out(new_state(json!(11)));
        assert_eq!(end["status"], "game_over");
        let winner = end["winner"].as_str().unwrap();
        assert!(winner == "player" || winner == "opponent");
        let over = end["state"].as_str().unwrap();
        for tool in ["legal_sea_battle_moves", "choose_sea_battle_opponent_move"] {
            let out = call(tool, json!({"state": over}));
            assert!(!out.is_error);
            assert_eq!(out.structured["moves"], json!([]));
            assert_eq!(out.structured["winner"], winner);
            assert_eq!(out.notes, vec![common::NO_MOVES_NOTE.to_string()]);
        }
        let out = call(
            "apply_sea_battle_move",
            json!({"state": over, "coord": "A1"}),
        );
        assert_eq!(out.structured["reason"], "game_over");
        let out = call("suggest_sea_battle_move", json!({"state": over}));
        assert!(out.is_error);
        assert_eq!(
            out.structured["error"],
            "No legal moves available; the game is over."
        );
        assert_eq!(out.structured["reason"], "game_over");
    }

    #[test]
    fn suggest_is_seedable_and_legal() {
        let state = new_state(json!(4));
        for level in ["random", "easy", "hard"] {
            let a = call(
                "suggest_sea_battle_move",
                json!({"state": state, "level": level, "seed": 1}),
            );
            let b = call(
                "suggest_sea_battle_move",
                json!({"state": state, "level": level, "seed": 1}),
            );
            assert_eq!(a.structured, b.structured);
            assert_eq!(a.structured["level"], level);
            assert_eq!(a.structured["type"], "ai_move");
            let mv = a.structured["move"].as_str().unwrap();
            assert!(mv.parse::<Coord>().is_ok());
        }
        let out = call("suggest_sea_battle_move", json!({"state": "x"}));
        assert_eq!(out.structured["reason"], "invalid_state");
        assert!(
            registry()
                .call(
                    "suggest_sea_battle_move",
                    &json!({"state": state, "level": "max"})
                )
                .is_err()
        );
    }
}
