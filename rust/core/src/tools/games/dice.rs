//! RPG dice tool: `roll_rpg_dice{sides, count?, seed?}`.
//!
//! The schema accepts any integer for `sides` and `count` so that out-of-range values reach the
//! handler and get the document's errors (`Unsupported dice sides.` / `Invalid dice count.`, with
//! `legal: false` and reason `unsupported_sides` / `invalid_count`); a value of the wrong JSON
//! type (`"sides": "20"`) still fails schema validation.

use agents_games::dice;
use agents_games::seed::rng_from;
use serde_json::{Value, json};

use super::common;
use super::{GameDecl, ToolKind};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// The RPG dice, as the game tools, the game app and `GameTools.games()` know them: a house
/// game with one tool, `roll_*`, and no end (a dice tray).
pub const GAME: GameDecl = GameDecl::house("rpg_dice", &[ToolKind::Roll], false, register);

fn register(registry: &mut ToolRegistry) {
    common::add(
        registry,
        ToolSpec::new(
            GAME.tool(ToolKind::Roll),
            "Rolls RPG dice: count (1-100, default 1) dice with 4, 6, 8, 10, 12, 20 or 100 sides.",
            common::object_schema(
                &[
                    (
                        "sides",
                        json!({"type": "integer",
                               "description": "Faces per die: 4, 6, 8, 10, 12, 20 or 100."}),
                    ),
                    (
                        "count",
                        json!({"type": "integer", "description": "Number of dice, 1-100 (default 1)."}),
                    ),
                    ("seed", common::seed_schema()),
                ],
                &["sides"],
            ),
        ),
        roll,
    );
}

fn roll(args: &Value) -> ToolOutput {
    let sides_arg = args.get("sides").cloned().unwrap_or(Value::Null);
    let count_arg = args.get("count").cloned().unwrap_or(json!(1));
    // Integers beyond i64 can only be out of range.
    let sides = common::whole_arg(args, "sides").unwrap_or(i64::MAX);
    let count = match args.get("count") {
        None => 1,
        Some(_) => common::whole_arg(args, "count").unwrap_or(i64::MAX),
    };
    let mut rng = rng_from(common::seed_arg(args).as_ref());
    match dice::roll(sides, count, &mut rng) {
        Ok(r) => ToolOutput::ok(json!({
            "type": "rpg_dice_roll",
            "gameType": GAME.name,
            "legal": true,
            "sides": r.sides,
            "count": r.count(),
            "rolls": r.rolls,
            "total": r.total(),
        })),
        Err(e) => ToolOutput::failed(common::with_error(
            json!({
                "type": "rpg_dice_roll",
                "gameType": GAME.name,
                "legal": false,
                "sides": sides_arg,
                "count": count_arg,
            }),
            &e.message,
            e.reason,
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

    fn call(args: Value) -> ToolOutput {
        registry().call("roll_rpg_dice", &args).unwrap()
    }

    #[test]
    fn roll_has_the_documented_shape() {
        let out = call(json!({"sides": 20, "count": 5, "seed": 42}));
        assert!(!out.is_error);
        assert_eq!(
            out.structured,
            json!({"type": "rpg_dice_roll", "gameType": "rpg_dice", "legal": true,
                   "sides": 20, "count": 5, "rolls": [10, 20, 17, 9, 8], "total": 64})
        );
        let one = call(json!({"sides": 6}));
        assert_eq!(one.structured["count"], 1);
        let rolls = one.structured["rolls"].as_array().unwrap();
        assert_eq!(rolls.len(), 1);
        assert_eq!(one.structured["total"], rolls[0]);
    }

    #[test]
    fn whole_floats_count_as_integers() {
        let a = call(json!({"sides": 20.0, "count": 5.0, "seed": 42}));
        let b = call(json!({"sides": 20, "count": 5, "seed": 42}));
        assert!(!a.is_error, "{}", a.structured);
        assert_eq!(a.structured, b.structured);
    }

    #[test]
    fn same_seed_same_rolls() {
        let a = call(json!({"sides": 100, "count": 10, "seed": "s"}));
        let b = call(json!({"sides": 100, "count": 10, "seed": "s"}));
        assert_eq!(a.structured, b.structured);
    }

    #[test]
    fn out_of_range_values_get_the_documented_errors() {
        for sides in [json!(0), json!(7), json!(-20), json!(1000), json!(u64::MAX)] {
            let out = call(json!({"sides": sides, "count": 2}));
            assert!(out.is_error);
            assert_eq!(
                out.structured,
                json!({"type": "rpg_dice_roll", "gameType": "rpg_dice", "legal": false,
                       "sides": sides, "count": 2, "error": "Unsupported dice sides.",
                       "reason": "unsupported_sides"})
            );
        }
        for count in [json!(0), json!(101), json!(-1), json!(i64::MIN)] {
            let out = call(json!({"sides": 20, "count": count}));
            assert!(out.is_error);
            assert_eq!(out.structured["error"], "Invalid dice count.");
            assert_eq!(out.structured["reason"], "invalid_count");
            assert_eq!(out.structured["legal"], false);
            assert_eq!(out.structured["count"], count);
        }
    }

    #[test]
    fn wrong_types_fail_schema_validation() {
        for (args, field) in [
            (json!({"sides": "20"}), "sides"),
            (json!({"sides": 20, "count": "2"}), "count"),
            (json!({"sides": 20.5}), "sides"),
            (json!({"count": 2}), "sides"),
            (json!({"sides": 20, "dice": 2}), "(arguments)"),
        ] {
            let err = registry().call("roll_rpg_dice", &args).unwrap_err();
            assert!(
                matches!(err, ToolError::InvalidArguments { field: ref f, .. } if f == field),
                "{args}: {err:?}"
            );
        }
    }

    #[test]
    fn hundred_d100_stays_in_range() {
        let out = call(json!({"sides": 100, "count": 100, "seed": 9}));
        let rolls: Vec<u64> = out.structured["rolls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(rolls.len(), 100);
        assert!(rolls.iter().all(|r| (1..=100).contains(r)));
        assert_eq!(out.structured["total"], rolls.iter().sum::<u64>());
    }
}
