//! `agents-server arena`: a tournament of brains and engines on a built-in game, its games kept
//! in the database, its numbers printed and written (`--report DIR`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agents_core::arena::results::Results;
use agents_core::arena::{ArenaConfig, Tournament};
use agents_core::error_code::ErrorCode;
use agents_core::runtime::{Runtime, RuntimeOptions};
use clap::Args;

use crate::args::{LogLevel, positive_seconds};
use crate::failure::{Failure, with};

/// Arguments of `agents-server arena`.
#[derive(Debug, Args)]
pub struct ArenaArgs {
    /// The game: chess, checkers, four_in_a_row, tic_tac_toe, mancala, sea_battle (two-player
    /// games, rated), blackjack or slot (single-player scores: net chips per 100 hands).
    #[arg(long, value_name = "NAME")]
    pub game: String,
    /// The players, comma-separated: brain profiles of `--brains` (or a brain the server knows,
    /// `scripted`) and engines `engine:random`, `engine:easy`, `engine:hard` (at blackjack
    /// `engine:basic` and `engine:stand`, at the slot machine `engine:spin`). Two players play a
    /// match, more a round robin.
    #[arg(long, value_name = "A,B[,…]", value_delimiter = ',', required = true)]
    pub players: Vec<String>,
    /// Every brain of `--players` against every engine level (added when not listed).
    #[arg(long)]
    pub ladder: bool,
    /// A JSON file of named brains: `{"default": NAME, "profiles": {NAME: {brain object}}}`
    /// (see docs/brains.md).
    #[arg(long, value_name = "FILE")]
    pub brains: Option<PathBuf>,
    /// Games per pairing (sides alternate); hands per player at blackjack and the slot machine.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub games: u32,
    /// The tournament's seed: the same seed with deterministic players (the engines, the
    /// scripted brain) gives the same games move for move.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// A game reaching this many plies (moves of either side) is a draw.
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub max_plies: u32,
    /// The time a player has for one move; slower loses the game on time.
    #[arg(long, value_name = "SECONDS", default_value = "120", value_parser = positive_seconds)]
    pub move_timeout_seconds: f64,
    /// Games played at once (on a local model, several games share it through its batched
    /// sequences).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub concurrency: usize,
    /// Illegal attempts in one game that forfeit it (0: never).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub forfeit_after: u32,
    /// Where the games are kept (`arena_games`): a SQLite file (created if missing) or a
    /// PostgreSQL URL. A database that is not this project's is refused untouched.
    #[arg(long, value_name = "PATH|URL", default_value = "arena.db")]
    pub db: PathBuf,
    /// Write `results.json` and `report.html` into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Log verbosity (stderr).
    #[arg(long, value_enum, default_value = "warn")]
    pub log_level: LogLevel,
}

impl ArenaArgs {
    fn config(&self) -> ArenaConfig {
        ArenaConfig {
            game: self.game.clone(),
            players: self.players.clone(),
            ladder: self.ladder,
            games: self.games,
            seed: self.seed,
            max_plies: self.max_plies,
            move_timeout: Duration::from_secs_f64(self.move_timeout_seconds),
            concurrency: self.concurrency,
            forfeit_after: self.forfeit_after,
        }
    }
}

/// Runs the tournament. Bad input (an unknown game, player or profile, a number out of range)
/// is refused before the database is opened: nothing is played, nothing written.
pub fn run(args: ArenaArgs, out: &mut impl Write) -> Result<(), Failure> {
    let profiles = match &args.brains {
        Some(path) => Some(crate::brains::load(path).map_err(Failure::argument)?),
        None => None,
    };
    let options = |database: &Path| {
        let mut options = RuntimeOptions::with_database(database);
        options.idle_think_seconds = agents_core::limits::MAX_IDLE_THINK_SECONDS;
        if let Some(profiles) = &profiles {
            crate::brains::apply(profiles.clone(), &mut options);
        }
        options
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("agents-arena")
        .enable_all()
        .build()
        .map_err(with(ErrorCode::InternalError))?;
    // The plan is checked on a throw-away database first: bad input touches no data.
    {
        let scratch = crate::brains::ScratchDb::new();
        let runtime = Runtime::start_on(rt.handle().clone(), options(&scratch.0))
            .map_err(with(ErrorCode::InternalError))?;
        let planned = Tournament::plan(&runtime, args.config());
        runtime.shutdown(Duration::from_secs(2));
        planned.map_err(|e| Failure::new(ErrorCode::InvalidArgument, e.to_string()))?;
    }
    let runtime = Runtime::start_on(rt.handle().clone(), options(&args.db)).map_err(|e| {
        Failure::new(
            ErrorCode::DatabaseError,
            format!(
                "cannot start the agent runtime on {}: {e}",
                agents_core::memory::Location::of(&args.db)
            ),
        )
    })?;
    let tournament = match Tournament::plan(&runtime, args.config()) {
        Ok(t) => t,
        Err(e) => {
            runtime.shutdown(Duration::from_secs(2));
            return Err(Failure::new(ErrorCode::InvalidArgument, e.to_string()));
        }
    };
    eprintln!(
        "arena: {} games of {} ({})",
        tournament.len(),
        args.game,
        tournament
            .players()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let results = rt.block_on(tournament.play(&runtime, |p| eprintln!("{}", p.line())));
    runtime.shutdown(Duration::from_secs(5));
    drop(runtime);
    rt.shutdown_timeout(Duration::from_secs(1));
    summary(&results, out).map_err(with(ErrorCode::InternalError))?;
    if let Some(dir) = &args.report {
        crate::report::write("arena", dir, |dir| {
            agents_core::arena::report::write(dir, &results)
        })?;
    }
    Ok(())
}

/// The players' table, best first.
fn summary(results: &Results, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} games of {} (seed {}, {} s), tournament {}",
        results.games.len(),
        results.game,
        results.seed,
        results.elapsed_ms / 1000,
        results.tournament
    )?;
    let house = results.anchor.is_none();
    writeln!(
        out,
        "{:<24} {:>5} {:>11} {:>20} {:>9} {:>9} {:>10} {:>9}",
        "player",
        "games",
        "W-D-L",
        if house {
            "net per 100 hands"
        } else {
            "rating [95% CI]"
        },
        "illegal%",
        "repairs%",
        "p50 ms",
        "tok/move"
    )?;
    for p in &results.players {
        let strength = match (p.rating, p.rating_ci95, p.score) {
            (Some(r), Some([lo, hi]), _) => format!("{r:.0} [{lo:.0}, {hi:.0}]"),
            (_, _, Some(score)) => format!("{:+.1}", score.net_per_100),
            _ => "-".into(),
        };
        writeln!(
            out,
            "{:<24} {:>5} {:>11} {:>20} {:>9.1} {:>9.1} {:>10.0} {:>9.1}",
            p.name,
            p.games,
            format!("{}-{}-{}", p.wins, p.draws, p.losses),
            strength,
            p.illegal_per_100_moves,
            p.repairs_per_100_moves,
            p.latency_ms.p50,
            p.tokens.per_move
        )?;
    }
    Ok(())
}
