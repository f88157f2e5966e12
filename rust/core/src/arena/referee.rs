//! Plays one game of a two-player board game, and writes down every move.
//!
//! The referee keeps the one true position (the game tools' snapshot, hidden parts included),
//! and each side plays as it would in a game:
//!
//! - **A brain** plays in its own built-in game app ([`super::seat`]), with the other side as
//!   the app's human (`opponent: "human"`, its `side` the brain's seat): the referee hands it
//!   the other side's moves as the human's actions, and takes its moves from the app's record.
//!   At sea battle, whose app has no human side, the brain plays the first side against the
//!   app's own AI at the engine's level, and the referee reads the AI's shots from the result.
//! - **An engine** is the built-in AI (`suggest_*` at its level), seeded by the game's seed
//!   and the ply.
//!
//! A game ends by the rules, by a forfeit (too many illegal attempts, or no move within the
//! time per move: the other side wins), at the ply limit (a draw), or in an error (no result).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::player::Player;
use super::results::{GameResult, MoveRecord, Termination};
use super::schedule::Fixture;
use super::seat::{BrainSeat, SeatSpec, Waited, join};
use crate::apps::games::{GameKind, call, seeded};
use crate::runtime::Runtime;
use crate::tools::games::{BoardDecl, GameDecl, ToolKind, common};

/// What every game of a tournament shares.
pub(super) struct Table<'a> {
    pub runtime: &'a Runtime,
    pub kind: &'static GameKind,
    pub players: &'a [Player],
    pub tournament: &'a str,
    pub max_plies: u32,
    pub move_timeout: Duration,
    pub forfeit_after: u32,
}

/// The plays of a board game that are moves.
const BOARD_PLAYS: &[&str] = &["move"];

/// How long the referee waits, once a game is over, for the last decision to reach the journal.
pub(super) const JOURNAL_WAIT: Duration = Duration::from_secs(2);

enum Side {
    Engine(String),
    Brain(Box<BrainSeat>),
}

/// How a game ended, when not by the rules.
struct Stopped {
    termination: Termination,
    /// The seat that lost (a forfeit, on time); `None`: a draw or no result.
    loser: Option<usize>,
    reason: String,
}

impl Stopped {
    fn error(reason: impl Into<String>) -> Stopped {
        Stopped {
            termination: Termination::Error,
            loser: None,
            reason: reason.into(),
        }
    }
}

/// Plays `fixture`, a game of a two-player board game.
pub(super) async fn play(table: &Table<'_>, fixture: &Fixture) -> GameResult {
    let decl = table.kind.decl;
    let board = decl.board.expect("a board game");
    let names: Vec<String> = fixture
        .seats
        .iter()
        .map(|&p| table.players[p].to_string())
        .collect();
    let mut game = fixture.unplayed(decl.name, names.clone());
    let mut snapshot = match call(
        decl,
        ToolKind::New,
        seeded(json!({}), Some(json!(fixture.seed))),
    ) {
        Ok(s) => s,
        Err(e) => {
            game.reason = Some(format!("the game did not start: {e}"));
            return game;
        }
    };
    game.start = position(&snapshot, board);
    game.end = game.start.clone();
    // At sea battle the brain's app plays the engine's side itself.
    let in_app_ai =
        !table.kind.second_side && fixture.seats.iter().any(|&p| table.players[p].is_brain());
    let mut sides = Vec::new();
    for (seat, &p) in fixture.seats.iter().enumerate() {
        let side = match &table.players[p] {
            Player::Engine(level) => Side::Engine(level.clone()),
            Player::Brain(brain) => {
                let level = match fixture.seats.get(1 - seat).map(|&o| &table.players[o]) {
                    Some(Player::Engine(level)) if in_app_ai => level.clone(),
                    _ => "easy".into(),
                };
                let setup = json!({
                    "name": decl.name,
                    "opponent": if in_app_ai { "ai" } else { "human" },
                    "side": if seat == 0 { "first" } else { "second" },
                    "level": level,
                    "seed": fixture.seed,
                });
                let opened = BrainSeat::open(
                    table.runtime,
                    SeatSpec {
                        app_id: format!("{}-g{}-s{}", table.tournament, fixture.index, seat + 1),
                        setup,
                        role: role(decl.name, seat, in_app_ai),
                        brain,
                        seed: format!("{}:{}", fixture.seed, seat),
                        spot_number: u64::from(fixture.index) * 2 + seat as u64,
                        plays: BOARD_PLAYS,
                    },
                );
                match opened {
                    Ok(seat) => Side::Brain(Box::new(seat)),
                    Err(e) => {
                        close(table.runtime, sides);
                        game.reason = Some(e);
                        return game;
                    }
                }
            }
        };
        sides.push(side);
    }

    let mut sans = Vec::new();
    // The AI's shots the brain's app answered with (sea battle).
    let mut app_ai_moves: VecDeque<Value> = VecDeque::new();
    let mut turn_began = Instant::now();
    let stopped = loop {
        if is_over(&snapshot) {
            break None;
        }
        if game.plies >= table.max_plies {
            break Some(Stopped {
                termination: Termination::MaxPlies,
                loser: None,
                reason: format!("{} plies", table.max_plies),
            });
        }
        // Illegal attempts count on the other side's turn too (a play out of turn).
        if let Some(stop) = forfeit_meanwhile(table, &mut sides, &names, &mut game.moves) {
            break Some(stop);
        }
        let Some(seat) = board.sides.iter().position(|s| snapshot["turn"] == *s) else {
            break Some(Stopped::error(format!(
                "no side is to move ({})",
                snapshot["turn"]
            )));
        };
        let ply = game.plies + 1;
        let (mv, latency) = match &mut sides[seat] {
            Side::Engine(level) => {
                let began = Instant::now();
                let mv = if in_app_ai {
                    match app_ai_moves.pop_front() {
                        Some(mv) => mv,
                        None => break Some(Stopped::error("the app's AI did not answer")),
                    }
                } else {
                    let mut args = json!({board.position_field: snapshot[board.position_field],
                        "level": level});
                    if let (Some(depth), "hard") = (board.hard_depth, level.as_str()) {
                        args[common::DEPTH_ARG] = json!(depth);
                    }
                    let seed = Some(json!(format!("{}:{ply}", fixture.seed)));
                    match suggest(decl, args, seed).await {
                        Ok(mv) => mv,
                        Err(e) => break Some(Stopped::error(format!("the engine: {e}"))),
                    }
                };
                (mv, began.elapsed())
            }
            Side::Brain(brain) => {
                let waited = brain
                    .next_play(
                        table.runtime,
                        table.move_timeout,
                        table.forfeit_after,
                        &mut game.moves,
                    )
                    .await;
                match waited {
                    Waited::Played(record) => {
                        if in_app_ai {
                            app_ai_moves.extend(shots(&record.result));
                        }
                        (record.params[board.move_arg].clone(), turn_began.elapsed())
                    }
                    Waited::Forfeit(why) => {
                        break Some(Stopped {
                            termination: Termination::Forfeit,
                            loser: Some(seat),
                            reason: format!("{}: {why}", names[seat]),
                        });
                    }
                    Waited::Time => {
                        break Some(Stopped {
                            termination: Termination::Time,
                            loser: Some(seat),
                            reason: format!(
                                "{}: no move within {} s",
                                names[seat],
                                table.move_timeout.as_secs_f64()
                            ),
                        });
                    }
                    Waited::Gone(why) => break Some(Stopped::error(why)),
                }
            }
        };
        let next = match call(
            decl,
            ToolKind::Apply,
            json!({board.position_field: snapshot[board.position_field], board.move_arg: mv}),
        ) {
            Ok(next) => next,
            Err(e) => {
                break Some(Stopped::error(format!(
                    "{}'s move {mv} was taken by its app but the game refuses it: {e}",
                    names[seat]
                )));
            }
        };
        if let Some(san) = next["lastMove"]["san"].as_str() {
            sans.push(san.to_string());
        }
        snapshot = next;
        game.plies = ply;
        game.moves.push(MoveRecord {
            ply,
            player: names[seat].clone(),
            mv: mv.clone(),
            state: position(&snapshot, board),
            latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
            input_tokens: 0,
            output_tokens: 0,
            repairs: 0,
            illegal: Vec::new(),
            text: String::new(),
        });
        let index = game.moves.len() - 1;
        if let Side::Brain(brain) = &mut sides[seat] {
            brain.moved(index, &mut game.moves);
        }
        // The other side's app hears of the move as its human's action.
        if !in_app_ai {
            let other = 1 - seat;
            if let Side::Brain(brain) = &sides[other] {
                let relayed = table
                    .runtime
                    .app_human_action(&brain.app_id, "move", json!({board.move_arg: mv}))
                    .await;
                match relayed {
                    Ok(record) if record.ok => {}
                    Ok(record) => {
                        break Some(Stopped::error(format!(
                            "{}'s app refused the move {mv}: {}",
                            names[other],
                            record.error.unwrap_or_default()
                        )));
                    }
                    Err(e) => {
                        break Some(Stopped::error(format!(
                            "{}'s app refused the move {mv}: {e}",
                            names[other]
                        )));
                    }
                }
            }
        }
        turn_began = Instant::now();
    };

    // The costs of the last decisions; what no move took goes on a last entry of the seat.
    for (seat, side) in sides.iter_mut().enumerate() {
        if let Side::Brain(brain) = side {
            let rest = brain
                .finish(table.runtime, JOURNAL_WAIT, &mut game.moves)
                .await;
            if !rest.illegal.is_empty() || stopped.as_ref().is_some_and(|s| s.loser == Some(seat)) {
                game.moves.push(MoveRecord {
                    ply: game.plies + 1,
                    player: names[seat].clone(),
                    mv: Value::Null,
                    state: position(&snapshot, board),
                    latency_ms: u64::try_from(turn_began.elapsed().as_millis()).unwrap_or(u64::MAX),
                    input_tokens: rest.input_tokens,
                    output_tokens: rest.output_tokens,
                    repairs: rest.repairs,
                    illegal: rest.illegal,
                    text: join("", &rest.text),
                });
            }
        }
    }
    close(table.runtime, sides);

    game.end = position(&snapshot, board);
    match stopped {
        None => {
            let winner = snapshot["winner"]
                .as_str()
                .and_then(|w| board.sides.iter().position(|s| *s == w));
            game.termination = Termination::Normal;
            set_result(&mut game, winner);
        }
        Some(stop) => {
            game.termination = stop.termination;
            game.reason = Some(stop.reason);
            match stop.termination {
                Termination::Error => {}
                _ => set_result(&mut game, stop.loser.map(|l| 1 - l)),
            }
        }
    }
    if decl.name == crate::tools::games::chess::GAME.name {
        game.pgn = Some(pgn(&game, &sans));
    }
    game
}

/// The forfeit of a brain whose illegal attempts reached the limit, whoever's turn it is.
fn forfeit_meanwhile(
    table: &Table<'_>,
    sides: &mut [Side],
    names: &[String],
    moves: &mut [MoveRecord],
) -> Option<Stopped> {
    for (seat, side) in sides.iter_mut().enumerate() {
        if let Side::Brain(brain) = side {
            brain.read_journal(table.runtime, moves);
            if table.forfeit_after > 0 && brain.illegal >= table.forfeit_after {
                return Some(Stopped {
                    termination: Termination::Forfeit,
                    loser: Some(seat),
                    reason: format!("{}: {} illegal attempts", names[seat], brain.illegal),
                });
            }
        }
    }
    None
}

/// A brain's part at the table: the game, its side, its opponent, and how to move.
fn role(game: &str, seat: usize, in_app_ai: bool) -> String {
    let game = game.replace('_', "-");
    let side = if seat == 0 {
        "the first side: you move first"
    } else {
        "the second side: your opponent moves first"
    };
    let opponent = if in_app_ai {
        "the built-in AI"
    } else {
        "another player"
    };
    format!(
        "You play {game} as {side}, against {opponent}. Win if you can. On your turn, call the \
         move tool with one of the moves it lists; on your opponent's turn, wait."
    )
}

/// The result of a finished game: `winner`'s seat, or a draw.
fn set_result(game: &mut GameResult, winner: Option<usize>) {
    game.result = match winner {
        Some(0) => "1-0",
        Some(_) => "0-1",
        None => "1/2-1/2",
    }
    .into();
    game.winner = winner.and_then(|w| game.players.get(w).cloned());
}

fn is_over(snapshot: &Value) -> bool {
    snapshot["status"] == "game_over"
}

fn position(snapshot: &Value, board: &BoardDecl) -> String {
    match &snapshot[board.position_field] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The built-in AI's move (it searches: off the async workers).
async fn suggest(
    decl: &'static GameDecl,
    args: Value,
    seed: Option<Value>,
) -> Result<Value, String> {
    tokio::task::spawn_blocking(move || {
        call(decl, ToolKind::Suggest, seeded(args, seed)).map(|s| s["move"].clone())
    })
    .await
    .map_err(|e| format!("the engine failed: {e}"))?
}

/// The shots of the app's AI in a move's result (`opponent_moved`: `C7:hit` → `C7`).
fn shots(result: &Value) -> Vec<Value> {
    result["opponent_moved"]
        .as_array()
        .map(|moved| {
            moved
                .iter()
                .map(|m| match m.as_str() {
                    Some(s) => json!(s.split(':').next().unwrap_or(s)),
                    None => m.clone(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn close(runtime: &Runtime, sides: Vec<Side>) {
    for side in sides {
        if let Side::Brain(brain) = side {
            brain.close(runtime);
        }
    }
}

/// The game in PGN: its tags, then the moves in SAN and the result.
fn pgn(game: &GameResult, sans: &[String]) -> String {
    let result = match game.result.as_str() {
        r @ ("1-0" | "0-1" | "1/2-1/2") => r,
        _ => "*",
    };
    let tag = |name: &str, value: &str| {
        format!(
            "[{name} \"{}\"]\n",
            value.replace('\\', "\\\\").replace('"', "\\\"")
        )
    };
    let mut out = String::new();
    out += &tag("Event", "Godot Agents arena");
    out += &tag("Site", "?");
    out += &tag("Round", &game.index.to_string());
    out += &tag("White", game.players.first().map_or("?", String::as_str));
    out += &tag("Black", game.players.get(1).map_or("?", String::as_str));
    out += &tag("Result", result);
    out += "\n";
    let mut line = String::new();
    for (i, san) in sans.iter().enumerate() {
        if i % 2 == 0 {
            line += &format!("{}. ", i / 2 + 1);
        }
        line += san;
        line += " ";
    }
    line += result;
    out += &line;
    out += "\n";
    out
}
