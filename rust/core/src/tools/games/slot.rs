//! Slot machine tools: `new_slot_game` and `spin_slot` (no `gameId`: the state is all there is).
//!
//! Snapshots carry the document's fields (`state`, `stack`, `bet`, `reels`, `payout`, `status`,
//! `lastAction`); once the stack no longer covers the bet, `status` is `game_over` and
//! `winner: "house"` appears. Spinning then fails with `Insufficient stack.`
//! (`insufficient_stack`). `new_slot_game` accepts a `seed` like every `new_*` tool, though a
//! fresh machine involves no randomness; `spin_slot`'s `seed` fixes the reels.

use agents_games::seed::rng_from;
use agents_games::slot::{MAX_CHIPS, SlotState, SlotStatus};
use serde_json::{Map, Value, json};

use super::common;
use super::{GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// The slot machine, as the game tools, the game app and `GameTools.games()` know it: a house
/// game played for chips, spin after spin.
pub const GAME: GameDecl =
    GameDecl::house("slot", &[ToolKind::New, ToolKind::Spin], true, register);

const DEFAULT_STACK: u64 = 1000;
const DEFAULT_BET: u64 = 10;

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::New),
            "Starts a slot machine session (three weighted reels; only three of a kind pays).",
            common::object_schema(
                &[
                    (
                        "stack",
                        common::chips_schema(MAX_CHIPS, "Starting stack (default 1000)."),
                    ),
                    (
                        "bet",
                        common::chips_schema(
                            MAX_CHIPS,
                            "Bet per spin (default 10, or the stack if smaller); at most the stack.",
                        ),
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
            GAME.tool(ToolKind::Spin),
            "Spins the reels: costs the bet; three 7/BAR/BELL/CHERRY/LEMON/ORANGE pay 10/8/6/4/3/2 × bet.",
            common::object_schema(
                &[
                    (
                        "state",
                        common::string_schema(
                            "Slot state: R:<reels>|BK:<stack>|B:<bet>|P:<payout>|ST:<status>|LA:<last_action>",
                        ),
                    ),
                    ("seed", common::seed_schema()),
                ],
                &["state"],
            ),
        ),
        spin,
    );
}

fn snapshot(state: &SlotState, legal: Option<bool>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), json!("slot_snapshot"));
    m.insert("gameType".into(), json!(GAME.name));
    if let Some(legal) = legal {
        m.insert("legal".into(), json!(legal));
    }
    m.insert("state".into(), json!(state.to_string()));
    m.insert("stack".into(), json!(state.stack()));
    m.insert("bet".into(), json!(state.bet()));
    let reels: Vec<&str> = state
        .reels()
        .map(|r| r.iter().map(|s| s.as_str()).collect())
        .unwrap_or_default();
    m.insert("reels".into(), json!(reels));
    m.insert("payout".into(), json!(state.payout()));
    m.insert("status".into(), json!(state.status().as_str()));
    m.insert("lastAction".into(), json!(state.last_action()));
    if state.status() == SlotStatus::GameOver {
        m.insert("winner".into(), json!("house"));
    }
    m
}

fn new_game(args: &Value) -> ToolOutput {
    let (stack, bet) = common::stack_and_bet_args(args, DEFAULT_STACK, DEFAULT_BET);
    match SlotState::new(stack, bet) {
        Ok(state) => ToolOutput::ok(Value::Object(snapshot(&state, None))),
        Err(e) => common::stake_refused("slot_snapshot", GAME.name, stack, bet, &e),
    }
}

fn spin(args: &Value) -> ToolOutput {
    let input = common::str_arg(args, "state");
    match input.parse::<SlotState>() {
        Ok(state) => {
            let mut rng = rng_from(common::seed_arg(args).as_ref());
            match state.spin(&mut rng) {
                Ok(next) => ToolOutput::ok(Value::Object(snapshot(&next, Some(true)))),
                Err(e) => {
                    let out = Value::Object(snapshot(&state, Some(false)));
                    ToolOutput::failed(common::with_error(out, &e.message, e.reason))
                }
            }
        }
        Err(e) => ToolOutput::failed(common::with_error(
            json!({"type": "slot_snapshot", "gameType": GAME.name, "legal": false, "state": input}),
            e.message(),
            "invalid_state",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        register(&mut r);
        r
    }

    fn call(name: &str, args: Value) -> ToolOutput {
        registry()
            .call(name, &args)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn new_game_is_exactly_the_documented_shape() {
        let out = call("new_slot_game", json!({}));
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "slot_snapshot", "gameType": "slot",
                   "state": "R:-|BK:1000|B:10|P:0|ST:in_progress|LA:-",
                   "stack": 1000, "bet": 10, "reels": [], "payout": 0,
                   "status": "in_progress", "lastAction": "-"})
        );
        let out = call("new_slot_game", json!({"stack": 7, "seed": "ignored"}));
        assert_eq!(out.structured["bet"], 7);
        assert_eq!(
            out.structured["state"],
            "R:-|BK:7|B:7|P:0|ST:in_progress|LA:-"
        );
        let out = call("new_slot_game", json!({"stack": 7, "bet": 8}));
        assert!(out.is_error);
        assert_eq!(
            out.structured["error"],
            "Bet must be between 1 and the stack."
        );
        assert_eq!(out.structured["reason"], "invalid_bet");
        let err = registry()
            .call("new_slot_game", &json!({"bet": "10"}))
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "bet"));
    }

    #[test]
    fn three_sevens_from_1000_at_bet_10_give_1090() {
        // Seed 21238 shows 7,7,7 on the first spin (pinned in the engine's tests too).
        let out = call(
            "spin_slot",
            json!({"state": "R:-|BK:1000|B:10|P:0|ST:in_progress|LA:-", "seed": 21238}),
        );
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "slot_snapshot", "gameType": "slot", "legal": true,
                   "state": "R:7,7,7|BK:1090|B:10|P:100|ST:in_progress|LA:spin",
                   "stack": 1090, "bet": 10, "reels": ["7", "7", "7"], "payout": 100,
                   "status": "in_progress", "lastAction": "spin"})
        );
    }

    #[test]
    fn seeded_spins_repeat_and_chain() {
        let start = "R:-|BK:1000|B:10|P:0|ST:in_progress|LA:-";
        let a = call("spin_slot", json!({"state": start, "seed": "abc"}));
        let b = call("spin_slot", json!({"state": start, "seed": "abc"}));
        assert_eq!(a.structured, b.structured);
        let mut state = a.structured["state"].as_str().unwrap().to_string();
        for i in 0..50 {
            let out = call("spin_slot", json!({"state": state, "seed": i}));
            assert!(!out.is_error);
            let s = &out.structured;
            assert_eq!(s["reels"].as_array().unwrap().len(), 3);
            state = s["state"].as_str().unwrap().to_string();
        }
        // Without a seed the spin still works.
        assert!(!call("spin_slot", json!({"state": start})).is_error);
    }

    #[test]
    fn broke_player_cannot_spin() {
        let over = "R:BAR,BELL,LEMON|BK:5|B:10|P:0|ST:game_over|LA:spin";
        let out = call("spin_slot", json!({"state": over, "seed": 1}));
        assert!(out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "slot_snapshot", "gameType": "slot", "legal": false, "state": over,
                   "stack": 5, "bet": 10, "reels": ["BAR", "BELL", "LEMON"], "payout": 0,
                   "status": "game_over", "lastAction": "spin", "winner": "house",
                   "error": "Insufficient stack.", "reason": "insufficient_stack"})
        );
        // Losing the last affordable spin ends the game.
        let out = call(
            "spin_slot",
            json!({"state": "R:-|BK:10|B:10|P:0|ST:in_progress|LA:-", "seed": 0}),
        );
        if out.structured["payout"] == 0 {
            assert_eq!(out.structured["status"], "game_over");
            assert_eq!(out.structured["winner"], "house");
        }
    }

    #[test]
    fn unparsable_state_is_reported() {
        let out = call("spin_slot", json!({"state": "R:7|BK:1"}));
        assert!(out.is_error);
        assert_eq!(out.structured["legal"], false);
        assert_eq!(out.structured["state"], "R:7|BK:1");
        assert_eq!(out.structured["reason"], "invalid_state");
        assert!(
            out.structured["error"]
                .as_str()
                .unwrap()
                .starts_with("Invalid state: ")
        );
        assert!(registry().call("spin_slot", &json!({})).is_err());
    }
}
