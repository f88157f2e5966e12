//! The arena: brains play the built-in games against the built-in engines and against each
//! other, through the app bridge, and what they did becomes numbers.
//!
//! # What a tournament is
//!
//! - **Players** ([`player`]): brain profiles (or any brain the runtime knows: `scripted`), each
//!   playing as an agent attached to a game app, exactly as in a game — its plays are the app's
//!   actions offered as tools, the state is what the app sends, a refusal is the app's answer
//!   —; and the built-in engines, `engine:random`, `engine:easy`, `engine:hard` (at blackjack
//!   the baselines `engine:basic`, basic strategy, and `engine:stand`, always stand; at the slot
//!   machine `engine:spin`).
//! - **Games**: every two-player board game (chess, checkers, four-in-a-row, tic-tac-toe,
//!   mancala, sea battle), and blackjack and the slot machine as single-player scores (net chips
//!   per 100 hands, every player dealt the same hands).
//! - **Schedules** ([`schedule`]): a match, a round robin, or a ladder of every brain against
//!   every engine level; sides alternate; one seed makes the whole tournament reproducible.
//! - **Bounds**: a ply limit (a draw), a time per move (slower loses on time), a limit of
//!   illegal attempts per game (a forfeit; default 3), and how many games are played at once
//!   (several games share one local model through its batched sequences).
//!
//! # What comes out
//!
//! Every game, replayable, in the runtime's database (`arena_games`: the moves — PGN in chess,
//! the state strings otherwise —, each move's latency, tokens, repairs, illegal attempts and the
//! player's lines), and the [`results::Results`]: per player its record, a Bradley–Terry
//! rating with a bootstrap interval ([`rating`]), illegal attempts and repairs per 100 moves,
//! latency percentiles and tokens per move. `agents-server arena --report DIR` writes them as
//! `results.json` and `report.html`.

mod house;
pub mod player;
pub mod rating;
mod referee;
pub mod report;
pub mod results;
pub mod schedule;
mod seat;
mod tally;

use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::apps::games::{GameKind, game};
use crate::brain::BrainChoice;
use crate::runtime::Runtime;
use player::{Player, engines_of};
use results::{GameResult, RESULTS_VERSION, Results};
use schedule::{Fixture, Schedule, Seating};

pub use tally::ANCHOR_PLAYER;

/// The games the arena plays: the game apps but the dice tray.
pub fn games() -> Vec<&'static str> {
    crate::apps::games::GAMES
        .iter()
        .filter(|g| g.name != crate::tools::games::dice::GAME.name)
        .map(|g| g.name)
        .collect()
}

/// What to play.
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaConfig {
    /// The game (one of [`games`]).
    pub game: String,
    /// The players' names: brains (profiles) and `engine:<level>`.
    pub players: Vec<String>,
    /// Every brain against every engine level (the engines are added when missing).
    pub ladder: bool,
    /// Games per pairing (hands per player at a house game).
    pub games: u32,
    /// The tournament's seed.
    pub seed: u64,
    /// A game reaching this many plies is a draw.
    pub max_plies: u32,
    /// The time a player has for one move; slower loses on time.
    pub move_timeout: Duration,
    /// Games played at once.
    pub concurrency: usize,
    /// Illegal attempts in one game that forfeit it (0: never).
    pub forfeit_after: u32,
}

impl Default for ArenaConfig {
    fn default() -> Self {
        ArenaConfig {
            game: "tic_tac_toe".into(),
            players: Vec::new(),
            ladder: false,
            games: 2,
            seed: 1,
            max_plies: 400,
            move_timeout: Duration::from_secs(120),
            concurrency: 1,
            forfeit_after: 3,
        }
    }
}

/// A tournament that cannot be played as asked: nothing was played, nothing written. The
/// message names what is wrong (the game, the player, the number).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArenaError(pub String);

/// Where a running tournament is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Games finished.
    pub done: usize,
    /// Games in all.
    pub total: usize,
    /// Time since it started.
    pub elapsed: Duration,
}

impl Progress {
    /// The time left at the pace so far (`None` before the first game ends).
    pub fn left(&self) -> Option<Duration> {
        if self.done == 0 {
            return None;
        }
        let per_game = self.elapsed.as_secs_f64() / self.done as f64;
        Some(Duration::from_secs_f64(
            per_game * (self.total - self.done.min(self.total)) as f64,
        ))
    }

    /// One line: `arena: 12/40 games, 1m05s elapsed, about 2m32s left`.
    pub fn line(&self) -> String {
        let left = match self.left() {
            Some(left) => format!(", about {} left", clock(left)),
            None => String::new(),
        };
        format!(
            "arena: {}/{} games, {} elapsed{left}",
            self.done,
            self.total,
            clock(self.elapsed)
        )
    }
}

fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// A checked tournament, ready to play.
#[derive(Debug)]
pub struct Tournament {
    config: ArenaConfig,
    kind: &'static GameKind,
    players: Vec<Player>,
    schedule: Schedule,
    fixtures: Vec<Fixture>,
}

impl Tournament {
    /// Checks `config` against `runtime` (every brain must be one it can start): an unknown
    /// game, an unknown player, a number out of range is an [`ArenaError`] naming it.
    pub fn plan(runtime: &Runtime, config: ArenaConfig) -> Result<Tournament, ArenaError> {
        let err = |m: String| ArenaError(m);
        let kind = game(&config.game)
            .filter(|g| games().contains(&g.name))
            .ok_or_else(|| {
                err(format!(
                    "unknown game '{}' (the arena plays {})",
                    config.game,
                    games().join(", ")
                ))
            })?;
        for (value, name) in [
            (config.games, "--games"),
            (config.max_plies, "--max-plies"),
            (
                u32::try_from(config.concurrency).unwrap_or(u32::MAX),
                "--concurrency",
            ),
        ] {
            if value == 0 {
                return Err(err(format!("{name} must be at least 1")));
            }
        }
        if config.move_timeout.is_zero() {
            return Err(err("the time per move must be more than 0 seconds".into()));
        }
        let mut players = Vec::new();
        for name in &config.players {
            let player = Player::parse(name, kind).map_err(err)?;
            if players.contains(&player) {
                return Err(err(format!("player '{player}' is listed twice")));
            }
            if let Player::Brain(brain) = &player {
                runtime
                    .check_brain(&BrainChoice::named(brain))
                    .map_err(|e| err(format!("unknown player '{brain}': {e}")))?;
            }
            players.push(player);
        }
        let schedule = if config.ladder {
            for level in engines_of(kind) {
                let engine = Player::Engine((*level).to_string());
                if !players.contains(&engine) {
                    players.push(engine);
                }
            }
            Schedule::Ladder
        } else if players.len() == 2 {
            Schedule::Match
        } else {
            Schedule::RoundRobin
        };
        let seating = if kind.decl.board.is_none() {
            Seating::Alone
        } else if kind.second_side {
            Seating::TwoSides
        } else {
            Seating::BrainFirst
        };
        if seating == Seating::Alone && players.is_empty() {
            return Err(err("name at least one player (--players)".into()));
        }
        let fixtures = schedule::fixtures(&players, schedule, config.games, config.seed, seating)
            .map_err(err)?;
        Ok(Tournament {
            config,
            kind,
            players,
            schedule,
            fixtures,
        })
    }

    /// The players, engines added by a ladder included.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// How many games it has.
    pub fn len(&self) -> usize {
        self.fixtures.len()
    }

    /// Whether it has no games.
    pub fn is_empty(&self) -> bool {
        self.fixtures.is_empty()
    }

    /// Plays every game (`concurrency` at once), keeps each in the runtime's database as it
    /// ends, and reports progress after each.
    pub async fn play(self, runtime: &Runtime, mut progress: impl FnMut(&Progress)) -> Results {
        let started_at = crate::time::now_iso();
        let began = Instant::now();
        // When, the seed, and a random tag: two tournaments started in one second differ.
        let tournament = format!(
            "arena-{}-{}-{:06x}",
            started_at
                .chars()
                .filter(char::is_ascii_digit)
                .take(14)
                .collect::<String>(),
            self.config.seed,
            rand::random::<u32>() & 0xff_ffff
        );
        let table = referee::Table {
            runtime,
            kind: self.kind,
            players: &self.players,
            tournament: &tournament,
            max_plies: self.config.max_plies,
            move_timeout: self.config.move_timeout,
            forfeit_after: self.config.forfeit_after,
        };
        let total = self.fixtures.len();
        let house = self.kind.decl.board.is_none();
        let mut games: Vec<GameResult> = Vec::with_capacity(total);
        let mut played = futures_util::stream::iter(&self.fixtures)
            .map(|fixture| {
                let table = &table;
                async move {
                    if house {
                        house::play(table, fixture).await
                    } else {
                        referee::play(table, fixture).await
                    }
                }
            })
            .buffer_unordered(self.config.concurrency);
        while let Some(game) = played.next().await {
            match serde_json::to_string(&game) {
                Ok(record) => {
                    runtime.memory().record_arena_game(
                        &tournament,
                        game.index,
                        &game.game,
                        &game.result,
                        record,
                    );
                }
                Err(e) => tracing::error!("arena: a game's record: {e}"),
            }
            games.push(game);
            progress(&Progress {
                done: games.len(),
                total,
                elapsed: began.elapsed(),
            });
        }
        drop(played);
        games.sort_by_key(|g| g.index);
        let profiles = &runtime.options().brain_profiles;
        let prices: Vec<_> = self
            .players
            .iter()
            .map(|p| match p {
                Player::Brain(name) => profiles.get(name).and_then(|spec| spec.price),
                Player::Engine(_) => None,
            })
            .collect();
        let (players, anchor) =
            tally::tally(&self.players, &prices, &games, house, self.config.seed);
        Results {
            version: RESULTS_VERSION,
            tournament,
            game: self.kind.name.to_string(),
            schedule: self.schedule.as_str().to_string(),
            seed: self.config.seed,
            started_at,
            elapsed_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
            anchor,
            players,
            games,
        }
    }
}
