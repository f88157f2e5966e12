//! A game-master turn played again: its dice and its answer, to check that a seeded run replays
//! identically.
//!
//! A `turn` step may roll dice ([`Roll`]): they are rolled as the `roll_rpg_dice` tool rolls
//! them, from a seed made of the run's seed, the scenario's name and the step's number
//! ([`dice_seed`]), and told to the game master after the player's input ([`told`]:
//! `"I swing at the goblin. (d20: 13)"`). Once the turn is kept, the runner takes it again from
//! the campaign as it was before it ([`crate::runtime::Runtime::replay_campaign_turn`]: the same
//! game master, turn number and brain seed), with the dice rolled again from the same seed, and
//! compares ([`difference`]). A turn *replays identically* when the dice, the narration, the
//! calls, what they did and the state after are all the same; the time stamps may differ.

use agents_games::Seed;
use agents_games::dice::{self, DiceRoll};

use super::suite::Roll;
use crate::campaign::turn::TurnEntry;

/// The seed of the dice of step `step` of scenario `scenario` in a run seeded `run_seed`.
pub fn dice_seed(run_seed: u64, scenario: &str, step: usize) -> Seed {
    Seed::Str(format!("{run_seed}:{scenario}:dice:{step}"))
}

/// Rolls `roll` from `seed`. A suite checked by [`super::suite::Suite::check`] only holds
/// rolls that can be made; any other is `None`.
pub fn roll(roll: Roll, seed: &Seed) -> Option<DiceRoll> {
    dice::roll(roll.sides, roll.count, &mut seed.rng()).ok()
}

/// The player's input with the dice told after it: `"… (d20: 13)"`, `"… (2d6: 3 + 5 = 8)"`.
pub fn told(input: &str, dice: Option<&DiceRoll>) -> String {
    let Some(dice) = dice else {
        return input.to_string();
    };
    let faces: Vec<String> = dice.rolls.iter().map(u32::to_string).collect();
    let shown = if faces.len() == 1 {
        faces[0].clone()
    } else {
        format!("{} = {}", faces.join(" + "), dice.total())
    };
    let count = if dice.count() == 1 {
        String::new()
    } else {
        dice.count().to_string()
    };
    format!("{input} ({count}d{}: {shown})", dice.sides)
}

/// What differs between a turn as it was kept and the same turn taken again, the first found
/// (`None`: it replayed identically): the narration, the calls, the calls dropped, the repairs,
/// what the calls did, the failed calls, the state after. The time stamps are not compared.
pub fn difference(kept: &TurnEntry, again: &TurnEntry) -> Option<String> {
    let applied = |e: &TurnEntry| -> Vec<(String, serde_json::Value, serde_json::Value)> {
        e.applied_actions
            .iter()
            .map(|a| (a.tool.clone(), a.args.clone(), a.result.clone()))
            .collect()
    };
    let parts: [(&str, bool); 8] = [
        ("the player's input", kept.user_input == again.user_input),
        (
            "the narration",
            kept.assistant_text == again.assistant_text && kept.dialog_type == again.dialog_type,
        ),
        ("the calls", kept.tool_calls == again.tool_calls),
        (
            "the calls dropped",
            kept.dropped_calls == again.dropped_calls,
        ),
        ("the repairs", kept.repairs == again.repairs),
        ("what the calls did", applied(kept) == applied(again)),
        (
            "the failed calls",
            kept.tool_feedback == again.tool_feedback,
        ),
        ("the state after", kept.state_summary == again.state_summary),
    ];
    parts
        .into_iter()
        .find(|(_, same)| !same)
        .map(|(part, _)| format!("taken again, the turn changed {part}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::gm::AppliedAction;
    use crate::contract::ToolCall;
    use serde_json::json;

    fn entry() -> TurnEntry {
        TurnEntry {
            turn_id: "turn_0001".into(),
            timestamp: "2026-11-29T08:00:00.000000+00:00".into(),
            user_input: "I go north. (d20: 13)".into(),
            actor_id: "pc_001".into(),
            dialog_type: "narration".into(),
            dialog_type_source: "model".into(),
            assistant_text: "You walk north.".into(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                tool: "move".into(),
                args: json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
                reason: None,
            }],
            applied_actions: vec![AppliedAction {
                tool: "move".into(),
                args: json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
                result: json!({"ok": true}),
                timestamp: "2026-11-29T08:00:00.000001+00:00".into(),
            }],
            tool_feedback: None,
            state_summary: json!({"active_actor_id": "pc_001"}),
            effects: vec![],
            dropped_calls: vec![],
            repairs: 0,
        }
    }

    #[test]
    fn the_same_turn_at_another_time_replays_identically() {
        let mut again = entry();
        again.timestamp = "2026-11-29T09:00:00.000000+00:00".into();
        again.applied_actions[0].timestamp = again.timestamp.clone();
        again.turn_id = "turn_0001".into();
        assert_eq!(difference(&entry(), &again), None);
    }

    #[test]
    fn each_part_that_differs_is_named() {
        type Change = fn(&mut TurnEntry);
        let cases: [(&str, Change); 7] = [
            ("the narration", |e| e.assistant_text = "You run.".into()),
            ("the narration", |e| e.dialog_type = "dialog".into()),
            ("the calls dropped", |e| {
                e.dropped_calls.push("not a call".into())
            }),
            ("the calls", |e| {
                e.tool_calls[0].args["to_area_id"] = json!("area_003")
            }),
            ("the repairs", |e| e.repairs = 1),
            ("what the calls did", |e| e.applied_actions.clear()),
            ("the state after", |e| e.state_summary = json!({})),
        ];
        for (part, change) in cases {
            let mut again = entry();
            change(&mut again);
            assert_eq!(
                difference(&entry(), &again).as_deref(),
                Some(format!("taken again, the turn changed {part}").as_str())
            );
        }
    }

    #[test]
    fn dice_are_told_after_the_input_and_replay_from_their_seed() {
        let d20 = Roll {
            sides: 20,
            count: 1,
        };
        let seed = dice_seed(1, "a dungeon", 3);
        let first = roll(d20, &seed).unwrap();
        assert_eq!(
            roll(d20, &dice_seed(1, "a dungeon", 3)),
            Some(first.clone())
        );
        assert_eq!(
            told("I swing.", Some(&first)),
            format!("I swing. (d20: {})", first.rolls[0])
        );
        let two = DiceRoll {
            sides: 6,
            rolls: vec![3, 5],
        };
        assert_eq!(told("I swing.", Some(&two)), "I swing. (2d6: 3 + 5 = 8)");
        assert_eq!(told("I swing.", None), "I swing.");
        // Another step, scenario or run seed rolls other dice (over enough rolls to tell).
        let many = Roll {
            sides: 100,
            count: 10,
        };
        let base = roll(many, &dice_seed(1, "a dungeon", 3));
        assert_ne!(roll(many, &dice_seed(1, "a dungeon", 4)), base);
        assert_ne!(roll(many, &dice_seed(1, "a cave", 3)), base);
        assert_ne!(roll(many, &dice_seed(2, "a dungeon", 3)), base);
    }
}
