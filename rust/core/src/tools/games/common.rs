//! Pieces every game tool shares: ids, seeds, levels, limits, policies and notes.

use std::time::Duration;

use agents_games::{Level, MoveError, SearchLimits, Seed};
use rand::RngExt;
use serde_json::{Map, Value, json};

use crate::tools::{TIME_BUDGET_ARG, ToolOutput, ToolRegistry, ToolSpec};

/// Default number of candidates a `choose_*` tool returns.
pub const DEFAULT_MAX_CANDIDATES: usize = 20;

/// The text note added when a `choose_*`/`legal_*` list is empty because the game is over.
pub const NO_MOVES_NOTE: &str = "No legal moves available; the game is over.";

/// The blackjack variant of [`NO_MOVES_NOTE`].
pub const NO_DEALER_ACTIONS_NOTE: &str = "No legal dealer actions available; the game is over.";

/// A fresh game id: `g_` + 32 lowercase hex digits.
pub fn new_game_id() -> String {
    let n: u128 = rand::rng().random();
    format!("g_{n:032x}")
}

/// Registers a built-in tool; a failure is a programming error.
pub fn add<F>(registry: &mut ToolRegistry, spec: ToolSpec, handler: F)
where
    F: Fn(&Value) -> ToolOutput + Send + Sync + 'static,
{
    let name = spec.name.clone();
    if let Err(e) = registry.register(spec, handler) {
        panic!("built-in tool {name} could not be registered: {e}");
    }
}

/// Builds an object schema from `(name, schema)` properties and the required names.
/// Extra properties are refused, so a misspelt argument is reported rather than ignored.
pub fn object_schema(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let props: Map<String, Value> = properties
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

/// Schema of the optional `gameId` argument.
pub fn game_id_schema() -> Value {
    json!({"type": "string", "description": "The game id returned by new_*; echoed back."})
}

/// Schema of a string argument with a description.
pub fn string_schema(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// Schema of the optional `seed` argument.
pub fn seed_schema() -> Value {
    json!({
        "type": ["string", "integer"],
        "description": "Optional seed: the same seed gives the same result on every platform."
    })
}

/// Schema of the optional `level` argument of the AI tools.
pub fn level_schema() -> Value {
    json!({
        "type": "string",
        "enum": ["random", "easy", "hard"],
        "description": "Opponent strength (default hard)."
    })
}

/// Schema of the optional `timeMs` argument of the AI tools.
pub fn time_ms_schema() -> Value {
    json!({
        "type": "integer",
        "minimum": 1,
        "maximum": 10000,
        "description": "Search time budget in milliseconds (default 100)."
    })
}

/// The argument capping a search's depth (`maxDepth`, on the `suggest_*` AIs).
pub const DEPTH_ARG: &str = "maxDepth";

/// Schema of the optional `maxDepth` argument of the AI tools.
pub fn max_depth_schema() -> Value {
    json!({
        "type": "integer",
        "minimum": 1,
        "maximum": 64,
        "description": "Search at most this many plies deep (hard level). Without timeMs the \
            search is bounded by the depth alone (10 s at most), so the same position and seed \
            always give the same move: a reproducible opponent. Default: the time budget decides."
    })
}

/// Schema of the optional `maxCandidates` argument of the `choose_*` tools.
pub fn max_candidates_schema() -> Value {
    json!({
        "type": "integer",
        "minimum": 1,
        "maximum": 500,
        "description": "At most this many candidates, best first (default 20)."
    })
}

/// Arguments of a `new_*` tool that takes only the optional `seed`.
pub fn seed_only_schema() -> Value {
    object_schema(&[("seed", seed_schema())], &[])
}

/// Arguments of a `legal_*` tool: the required state under `state_key`.
pub fn state_only_schema(state_key: &str, state: Value) -> Value {
    object_schema(&[(state_key, state)], &[state_key])
}

/// Arguments of an `apply_*` tool: the optional `gameId`, the required state under `state_key`
/// and the required move under `move_key`.
pub fn apply_schema(state_key: &str, state: Value, move_key: &str, mv: Value) -> Value {
    object_schema(
        &[
            ("gameId", game_id_schema()),
            (state_key, state),
            (move_key, mv),
        ],
        &[state_key, move_key],
    )
}

/// Arguments of a `choose_*` tool: the required state under `state_key` and `maxCandidates`.
pub fn choose_schema(state_key: &str, state: Value) -> Value {
    object_schema(
        &[
            (state_key, state),
            ("maxCandidates", max_candidates_schema()),
        ],
        &[state_key],
    )
}

/// Arguments of a `suggest_*` tool: the required state under `state_key`, `level`, `timeMs`
/// and `seed`.
pub fn suggest_schema(state_key: &str, state: Value) -> Value {
    object_schema(
        &[
            (state_key, state),
            ("level", level_schema()),
            (TIME_BUDGET_ARG, time_ms_schema()),
            (DEPTH_ARG, max_depth_schema()),
            ("seed", seed_schema()),
        ],
        &[state_key],
    )
}

/// The `seed` argument, if given. Integers (negative ones too) and strings are accepted.
pub fn seed_arg(args: &Value) -> Option<Seed> {
    match args.get("seed")? {
        Value::String(s) => Some(Seed::Str(s.clone())),
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_i64().map(|i| i as u64))
            .map(Seed::Int),
        _ => None,
    }
}

/// The `level` argument (default [`Level::Hard`]); the schema has already checked the value.
pub fn level_arg(args: &Value) -> Level {
    args.get("level")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or_default()
}

/// The most time a search bounded by `maxDepth` alone may take (a safety net: hit, the move is
/// no longer reproducible).
pub const DEPTH_TIME_CAP: Duration = Duration::from_secs(10);

/// Search limits from the `timeMs` and `maxDepth` arguments: the time budget (default 100 ms)
/// and the depth cap; a depth without a time budget searches to that depth
/// ([`DEPTH_TIME_CAP`] at most).
pub fn limits_arg(args: &Value) -> SearchLimits {
    let time = args.get(TIME_BUDGET_ARG).and_then(Value::as_u64);
    let depth = args
        .get(DEPTH_ARG)
        .and_then(Value::as_u64)
        .and_then(|d| u32::try_from(d).ok());
    match (time, depth) {
        (Some(ms), depth) => SearchLimits {
            time: Duration::from_millis(ms),
            max_depth: depth,
        },
        (None, Some(depth)) => SearchLimits {
            time: DEPTH_TIME_CAP,
            max_depth: Some(depth),
        },
        (None, None) => SearchLimits::default(),
    }
}

/// Schema of a chip amount (`stack`, `bet`): an integer from 1 to `max`.
pub fn chips_schema(max: u64, description: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": max, "description": description})
}

/// A whole-number argument as `i64`: JSON integers, and floats with no fractional part (JSON
/// Schema counts `20.0` as an integer). `None` when absent or not representable.
pub fn whole_arg(args: &Value, name: &str) -> Option<i64> {
    let v = args.get(name)?;
    v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= i64::MIN as f64 && *f < i64::MAX as f64)
            .map(|f| f as i64)
    })
}

/// The `stack` and `bet` arguments of a `new_*` casino tool, with their defaults (the bet
/// defaults to `default_bet`, or the stack if smaller). The schema bounds both to
/// `1..=MAX_CHIPS`.
pub fn stack_and_bet_args(args: &Value, default_stack: u64, default_bet: u64) -> (u64, u64) {
    let stack = whole_arg(args, "stack").map_or(default_stack, |n| n.max(0) as u64);
    let bet = whole_arg(args, "bet").map_or(default_bet.min(stack), |n| n.max(0) as u64);
    (stack, bet)
}

/// The failed answer of a `new_*` casino tool whose stack or bet the engine refused:
/// `{type, gameType, legal: false, stack, bet, error, reason}`.
pub fn stake_refused(
    snapshot: &str,
    game_type: &str,
    stack: u64,
    bet: u64,
    e: &MoveError,
) -> ToolOutput {
    let out = json!({
        "type": snapshot,
        "gameType": game_type,
        "legal": false,
        "stack": stack,
        "bet": bet,
    });
    ToolOutput::failed(with_error(out, &e.message, e.reason))
}

/// The `maxCandidates` argument (default 20).
pub fn max_candidates_arg(args: &Value) -> usize {
    args.get("maxCandidates")
        .and_then(Value::as_u64)
        .map(|n| n as usize)
        .unwrap_or(DEFAULT_MAX_CANDIDATES)
}

/// A string argument the schema made required.
pub fn str_arg<'a>(args: &'a Value, name: &str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or("")
}

/// Inserts `gameId` into an output object when the caller gave one (`apply_*` echoes it).
pub fn echo_game_id(out: &mut Value, args: &Value) {
    if let (Some(obj), Some(id)) = (out.as_object_mut(), args.get("gameId")) {
        obj.insert("gameId".into(), id.clone());
    }
}

/// The `policy` object of a `choose_*` answer: `{<must_key>: true, chooseExactlyOne: true}`.
pub fn policy(must_key: &str) -> Value {
    let mut policy = Map::new();
    policy.insert(must_key.into(), Value::Bool(true));
    policy.insert("chooseExactlyOne".into(), Value::Bool(true));
    Value::Object(policy)
}

/// Finishes a `legal_*`/`choose_*` output: an empty list gets the "game is over" note.
pub fn list_output(structured: Value, is_empty: bool, note: &str) -> ToolOutput {
    let out = ToolOutput::ok(structured);
    if is_empty { out.with_note(note) } else { out }
}

/// A failed output for a state that did not parse: `{…base, error, reason:"invalid_state"}`.
pub fn with_error(mut base: Value, error: &str, reason: &str) -> Value {
    if let Some(obj) = base.as_object_mut() {
        obj.insert("error".into(), Value::String(error.to_string()));
        obj.insert("reason".into(), Value::String(reason.to_string()));
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_have_the_documented_shape() {
        let id = new_game_id();
        assert_eq!(id.len(), 34);
        assert!(id.starts_with("g_"));
        assert!(
            id[2..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(id, new_game_id());
    }

    #[test]
    fn seeds_parse_from_strings_and_integers() {
        assert_eq!(seed_arg(&json!({"seed": 7})), Some(Seed::Int(7)));
        assert_eq!(seed_arg(&json!({"seed": "x"})), Some(Seed::Str("x".into())));
        assert_eq!(seed_arg(&json!({"seed": -1})), Some(Seed::Int(u64::MAX)));
        assert_eq!(seed_arg(&json!({})), None);
    }
}
