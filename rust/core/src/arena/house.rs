//! Plays one hand of a house game (blackjack, the slot machine) and writes down every play.
//!
//! A brain plays in the built-in game app, as in a game; an engine plays the same game object
//! the app plays, with the same seed, so every player of a tournament is dealt the same cards.
//! The state written down after each play is what the player saw (the shoe and the hole card
//! stay hidden). A blackjack hand ends when the round is settled (its `net`); a slot hand is
//! one spin (the change of the stack).

use std::time::Instant;

use serde_json::{Value, json};

use super::player::Player;
use super::referee::{JOURNAL_WAIT, Table};
use super::results::{GameResult, MoveRecord, Termination};
use super::schedule::Fixture;
use super::seat::{BrainSeat, SeatSpec, Waited, join};
use crate::apps::games::{GameKind, GameSetup, Opponent, Play, Seat};
use crate::apps::{ActionRequest, Actor};
use crate::tools::games::blackjack::{self, Baseline};

/// The plays of blackjack.
const BLACKJACK_PLAYS: &[&str] = &["hit", "stand", "double", "split"];
/// The play of the slot machine.
const SLOT_PLAYS: &[&str] = &["spin"];

/// Plays `fixture`, one hand of a house game.
pub(super) async fn play(table: &Table<'_>, fixture: &Fixture) -> GameResult {
    let kind = table.kind;
    let player = &table.players[fixture.seats[0]];
    let name = player.to_string();
    let mut game = fixture.unplayed(kind.name, vec![name.clone()]);
    let slot = kind.name == crate::tools::games::slot::GAME.name;
    let plays = if slot { SLOT_PLAYS } else { BLACKJACK_PLAYS };
    let played = match player {
        Player::Engine(level) => engine_hand(kind, fixture, level, slot, &mut game),
        Player::Brain(brain) => brain_hand(table, fixture, brain, plays, slot, &mut game).await,
    };
    match played {
        Ok((before, after)) => {
            let net = if slot {
                stack(&after) - stack(&before)
            } else {
                after["net"].as_i64().unwrap_or(0)
            };
            game.net = Some(net);
            game.result = format!("{net:+}");
            game.termination = Termination::Normal;
            game.end = after.to_string();
        }
        Err((termination, reason)) => {
            game.termination = termination;
            game.reason = Some(reason);
            if termination != Termination::Error {
                // A hand given up loses its bet.
                let bet = game_bet(&game.start);
                game.net = Some(-bet);
                game.result = format!("{:+}", -bet);
            }
        }
    }
    game
}

type Hand = Result<(Value, Value), (Termination, String)>;

fn setup(kind: &GameKind, fixture: &Fixture) -> GameSetup {
    GameSetup {
        name: kind.name.to_string(),
        opponent: Opponent::Ai,
        level: "easy".into(),
        side: Seat::First,
        seed: Some(json!(fixture.seed)),
        stack: None,
        bet: None,
    }
}

fn stack(view: &Value) -> i64 {
    view["stack"].as_i64().unwrap_or(0)
}

fn game_bet(start: &str) -> i64 {
    serde_json::from_str::<Value>(start)
        .ok()
        .and_then(|v| v["bet"].as_i64())
        .unwrap_or(0)
}

/// Whether a hand is played out: the round settled (blackjack), one spin made (slot).
fn hand_done(view: &Value, slot: bool, plies: u32) -> bool {
    view["status"] == "game_over" || (slot && plies >= 1)
}

/// An engine's hand: the game object the app would play, played directly.
fn engine_hand(
    kind: &GameKind,
    fixture: &Fixture,
    level: &str,
    slot: bool,
    game: &mut GameResult,
) -> Hand {
    let play: Box<dyn Play> = kind
        .start(&setup(kind, fixture))
        .map_err(|e| (Termination::Error, format!("the game did not start: {e}")))?;
    let before = play.view();
    game.start = before.to_string();
    let mut view = before.clone();
    while !hand_done(&view, slot, game.plies) {
        let began = Instant::now();
        let action = if slot {
            "spin".to_string()
        } else {
            let baseline = if level == "stand" {
                Baseline::AlwaysStand
            } else {
                Baseline::BasicStrategy
            };
            let state = play
                .hidden_state()
                .ok_or_else(|| (Termination::Error, "no state to play from".to_string()))?;
            blackjack::baseline_action(&state, baseline)
                .map_err(|e| (Termination::Error, format!("the engine: {e}")))?
        };
        let outcome = play.handle(&ActionRequest {
            app_id: String::new(),
            action_id: u64::from(game.plies) + 1,
            name: action.clone(),
            params: json!({}),
            by: Actor::Agent,
        });
        if let Some(e) = outcome.error {
            return Err((Termination::Error, format!("the engine's {action}: {e}")));
        }
        view = play.view();
        game.plies += 1;
        game.moves.push(MoveRecord {
            ply: game.plies,
            player: game.players[0].clone(),
            mv: json!(action),
            state: view.to_string(),
            latency_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
            input_tokens: 0,
            output_tokens: 0,
            repairs: 0,
            illegal: Vec::new(),
            text: String::new(),
        });
    }
    Ok((before, view))
}

/// A brain's hand: an agent in the game app.
async fn brain_hand(
    table: &Table<'_>,
    fixture: &Fixture,
    brain: &str,
    plays: &'static [&'static str],
    slot: bool,
    game: &mut GameResult,
) -> Hand {
    let runtime = table.runtime;
    let app_id = format!("{}-g{}-s1", table.tournament, fixture.index);
    let setup = serde_json::to_value(setup(table.kind, fixture))
        .map_err(|e| (Termination::Error, e.to_string()))?;
    // The app deals at once: its first state is the hand's start.
    let mut seat = BrainSeat::open(
        runtime,
        SeatSpec {
            app_id,
            setup,
            role: String::new(),
            brain,
            seed: format!("{}:0", fixture.seed),
            spot_number: u64::from(fixture.index) * 2,
            plays,
        },
    )
    .map_err(|e| (Termination::Error, e))?;
    let before = seat.start.clone();
    game.start = before.to_string();
    let mut view = before.clone();
    let mut turn_began = Instant::now();
    let mut stopped = None;
    while !hand_done(&view, slot, game.plies) {
        match seat
            .next_play(
                runtime,
                table.move_timeout,
                table.forfeit_after,
                &mut game.moves,
            )
            .await
        {
            Waited::Played(record) => {
                // The play's own result, not the app's state now: the agent may already be
                // playing the next round.
                view = record.result.clone();
                game.plies += 1;
                game.moves.push(MoveRecord {
                    ply: game.plies,
                    player: game.players[0].clone(),
                    mv: json!(record.name),
                    state: view.to_string(),
                    latency_ms: u64::try_from(turn_began.elapsed().as_millis()).unwrap_or(u64::MAX),
                    input_tokens: 0,
                    output_tokens: 0,
                    repairs: 0,
                    illegal: Vec::new(),
                    text: String::new(),
                });
                let index = game.moves.len() - 1;
                seat.moved(index, &mut game.moves);
                turn_began = Instant::now();
            }
            Waited::Forfeit(why) => {
                stopped = Some((Termination::Forfeit, format!("{}: {why}", game.players[0])));
                break;
            }
            Waited::Time => {
                stopped = Some((
                    Termination::Time,
                    format!(
                        "{}: no play within {} s",
                        game.players[0],
                        table.move_timeout.as_secs_f64()
                    ),
                ));
                break;
            }
            Waited::Gone(why) => {
                stopped = Some((Termination::Error, why));
                break;
            }
        }
    }
    let rest = seat.finish(runtime, JOURNAL_WAIT, &mut game.moves).await;
    if !rest.illegal.is_empty() || stopped.is_some() {
        game.moves.push(MoveRecord {
            ply: game.plies + 1,
            player: game.players[0].clone(),
            mv: Value::Null,
            state: view.to_string(),
            latency_ms: u64::try_from(turn_began.elapsed().as_millis()).unwrap_or(u64::MAX),
            input_tokens: rest.input_tokens,
            output_tokens: rest.output_tokens,
            repairs: rest.repairs,
            illegal: rest.illegal,
            text: join("", &rest.text),
        });
    }
    seat.close(runtime);
    match stopped {
        Some(stop) => Err(stop),
        None => Ok((before, view)),
    }
}
