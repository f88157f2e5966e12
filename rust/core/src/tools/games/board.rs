//! The answers every board game's tools share (`new_*`, `apply_*`, `legal_*`, `choose_*`,
//! `suggest_*`), written once over the [`BoardState`] trait each game implements for its parsed
//! state. Each game keeps only what is its own: how a move is read and played, which moves are
//! listed, and any extra fields.

use std::fmt::Display;
use std::str::FromStr;

use agents_games::seed::{GameRng, rng_from};
use agents_games::{Level, MoveError, ParseError, SearchLimits};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::common::{self, NO_MOVES_NOTE};
use crate::tools::ToolOutput;

/// A board game's parsed state, as the shared answers need it.
pub(super) trait BoardState: FromStr<Err = ParseError> + Display {
    /// The `gameType` of the answers.
    const GAME_TYPE: &'static str;
    /// The `type` of the `new_*`/`apply_*` snapshots.
    const SNAPSHOT: &'static str;
    /// The argument (and snapshot field) holding the state string.
    const STATE_KEY: &'static str = "state";

    /// `in_progress` or `game_over`.
    fn status(&self) -> &'static str;
    /// The side to move.
    fn turn(&self) -> &'static str;
    /// The winner once the game is over.
    fn winner(&self) -> Option<&'static str>;

    /// Inserts what the `apply_*`/list answers say about a state: by default `status`, `turn`
    /// and (when over) `winner`, see [`insert_status`].
    fn describe(&self, out: &mut Map<String, Value>) {
        insert_status(out, self);
    }
}

/// Inserts `status`, `turn` and (when over) `winner`.
pub(super) fn insert_status<B: BoardState>(out: &mut Map<String, Value>, state: &B) {
    out.insert("status".into(), json!(state.status()));
    out.insert("turn".into(), json!(state.turn()));
    if let Some(w) = state.winner() {
        out.insert("winner".into(), json!(w));
    }
}

fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Parses the state argument; a state that does not parse answers `head` with its `error` and
/// `reason: "invalid_state"`.
pub(super) fn parse_state<B: BoardState>(args: &Value, head: Value) -> Result<B, ToolOutput> {
    common::str_arg(args, B::STATE_KEY)
        .parse::<B>()
        .map_err(|e| ToolOutput::failed(common::with_error(head, e.message(), "invalid_state")))
}

/// The `new_*` snapshot: `type`, `gameType`, a fresh `gameId`, the state, `status`, `turn`
/// (and `winner`, never present at the start). The caller adds its game's own fields.
pub(super) fn new_snapshot<B: BoardState>(state: &B) -> Map<String, Value> {
    let mut out = into_map(json!({
        "type": B::SNAPSHOT,
        "gameType": B::GAME_TYPE,
        "gameId": common::new_game_id(),
    }));
    out.insert(B::STATE_KEY.into(), json!(state.to_string()));
    insert_status(&mut out, state);
    out
}

/// `{lastAction}` when there is one: the extra field of most `apply_*` answers.
pub(super) fn last_action(last: Option<impl Display>) -> Map<String, Value> {
    let mut extra = Map::new();
    if let Some(last) = last {
        extra.insert("lastAction".into(), json!(last.to_string()));
    }
    extra
}

/// The `apply_*` answer. It echoes `gameId`; `play` turns the parsed state into the next one
/// plus the game's extra fields (`lastAction`, `lastMove`, …).
///
/// - Success: `legal: true`, the new state, [`BoardState::describe`] of it and the extras.
/// - Refused move: `legal: false`, the unchanged state, `describe` of it, `error`, `reason`.
/// - Unparsable state: `legal: false`, the state as given, `error`, `reason: "invalid_state"`.
pub(super) fn apply_answer<B: BoardState>(
    args: &Value,
    play: impl FnOnce(&B) -> Result<(B, Map<String, Value>), MoveError>,
) -> ToolOutput {
    let input = common::str_arg(args, B::STATE_KEY);
    let mut out = json!({"type": B::SNAPSHOT, "gameType": B::GAME_TYPE, "legal": false});
    out[B::STATE_KEY] = json!(input);
    common::echo_game_id(&mut out, args);
    let state: B = match parse_state(args, out.clone()) {
        Ok(state) => state,
        Err(failed) => return failed,
    };
    let mut out = into_map(out);
    match play(&state) {
        Ok((next, extra)) => {
            out.insert("legal".into(), json!(true));
            out.insert(B::STATE_KEY.into(), json!(next.to_string()));
            next.describe(&mut out);
            out.extend(extra);
            ToolOutput::ok(Value::Object(out))
        }
        Err(e) => {
            state.describe(&mut out);
            ToolOutput::failed(common::with_error(Value::Object(out), &e.message, e.reason))
        }
    }
}

/// `{type: kind, gameType, moves: []}`: the head of a `legal_*`/`choose_*` answer.
pub(super) fn list_head<B: BoardState>(kind: &str) -> Value {
    json!({"type": kind, "gameType": B::GAME_TYPE, "moves": []})
}

/// Inserts a list of moves under `key`; returns whether it is empty.
pub(super) fn put_moves<M: Serialize>(
    out: &mut Map<String, Value>,
    key: &str,
    moves: &[M],
) -> bool {
    out.insert(key.into(), json!(moves));
    moves.is_empty()
}

/// A `legal_*`/`choose_*` answer: `head` (alone, with `error`/`reason`, when the state does not
/// parse), plus what `fill` inserts (the moves; it returns whether the list is empty), plus
/// [`BoardState::describe`]. An empty list gets [`NO_MOVES_NOTE`].
pub(super) fn list_answer<B: BoardState>(
    args: &Value,
    head: Value,
    fill: impl FnOnce(&B, &mut Map<String, Value>) -> bool,
) -> ToolOutput {
    let state: B = match parse_state(args, head.clone()) {
        Ok(state) => state,
        Err(failed) => return failed,
    };
    let mut out = into_map(head);
    let empty = fill(&state, &mut out);
    state.describe(&mut out);
    common::list_output(Value::Object(out), empty, NO_MOVES_NOTE)
}

/// The usual `legal_*` answer: `{type: "legal_moves", gameType, moves, status, turn, winner?}`.
pub(super) fn legal_answer<B: BoardState, M: Serialize>(
    args: &Value,
    moves: impl FnOnce(&B) -> Vec<M>,
) -> ToolOutput {
    list_answer(args, list_head::<B>("legal_moves"), |state, out| {
        put_moves(out, "moves", &moves(state))
    })
}

/// The usual `choose_*` answer: `{type: "opponent_choice", gameType, moves, policy, status,
/// turn, winner?}`, with at most `maxCandidates` of the `ranked` moves. An unparsable state
/// answers the head with `policy` too.
pub(super) fn choose_answer<B: BoardState, M: Serialize>(
    args: &Value,
    ranked: impl FnOnce(&B) -> Vec<M>,
) -> ToolOutput {
    let policy = common::policy("mustChooseFromMoves");
    let mut head = list_head::<B>("opponent_choice");
    head["policy"] = policy.clone();
    let max = common::max_candidates_arg(args);
    list_answer(args, head, |state, out| {
        let mut moves = ranked(state);
        moves.truncate(max);
        out.insert("policy".into(), policy);
        put_moves(out, "moves", &moves)
    })
}

/// `{type: "ai_move", gameType}`: the head of a `suggest_*` answer.
pub(super) fn ai_head<B: BoardState>() -> Value {
    json!({"type": "ai_move", "gameType": B::GAME_TYPE})
}

/// The failed `suggest_*` answer on a finished game: `head` with `status`, `turn`, `winner`,
/// the "game is over" error and `reason: "game_over"`.
pub(super) fn game_over<B: BoardState>(head: Value, state: &B) -> ToolOutput {
    let mut out = into_map(head);
    insert_status(&mut out, state);
    ToolOutput::failed(common::with_error(
        Value::Object(out),
        NO_MOVES_NOTE,
        "game_over",
    ))
}

/// The usual `suggest_*` answer: `{type: "ai_move", gameType, move, level, turn}` with the move
/// `choose` picks at the `level`, `timeMs` and `seed` arguments, or [`game_over`].
pub(super) fn suggest_answer<B: BoardState, M: Serialize>(
    args: &Value,
    choose: impl FnOnce(&B, Level, SearchLimits, &mut GameRng) -> Option<M>,
) -> ToolOutput {
    let state: B = match parse_state(args, ai_head::<B>()) {
        Ok(state) => state,
        Err(failed) => return failed,
    };
    let level = common::level_arg(args);
    let mut rng = rng_from(common::seed_arg(args).as_ref());
    match choose(&state, level, common::limits_arg(args), &mut rng) {
        Some(mv) => {
            let mut out = ai_head::<B>();
            out["move"] = json!(mv);
            out["level"] = json!(level.as_str());
            out["turn"] = json!(state.turn());
            ToolOutput::ok(out)
        }
        None => game_over(ai_head::<B>(), &state),
    }
}
