//! `cargo xtask bench --only-arena` (and part of `cargo xtask bench`): the arena on the local
//! models.
//!
//! Builds the release `agents-server`, fetches Gemma 3 270M and SmolLM2-135M-Instruct
//! ([`crate::test_model`]), writes a brains file with one `local` profile each into
//! `<target>/arena-bench/brains.json` ([`brains_file`]), and runs `agents-server arena`:
//!
//! - for every brain ([`BRAINS`]: the `scripted` brain, then the two models) a ladder against
//!   `engine:random`, `engine:easy` and `engine:hard` on every board game ([`BOARD_RUNS`]:
//!   enough games that a model makes at least [`MIN_MOVES`] moves in each; chess and checkers
//!   bounded by `--max-plies`), and blackjack ([`BLACKJACK_HANDS`] hands) against
//!   `engine:basic` and `engine:stand`;
//! - the engines' calibration: `engine:random`, `engine:easy` and `engine:hard` in a round
//!   robin on every board game, and the two blackjack baselines.
//!
//! Each run writes `results.json`, `report.html` and its database (`arena.db`, where the model
//! calls' trace is) into `<target>/arena-bench/<brain>/<game>/` (`engines/<game>/` for the
//! calibration). A model that made fewer than [`MIN_MOVES`] moves in a board game is run
//! again once, with the games scaled up to what its first run averaged. The summary — every
//! run's numbers as Markdown tables, and how long each took — is printed and written to
//! `<target>/arena-bench/summary.txt` as each run ends.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agents_core::arena::results::{PlayerKind, PlayerResult, Results, Termination};
use serde_json::{Value, json};

use crate::process::{self, Echo};
use crate::test_model::{GEMMA, Model, SMOLLM2};
use crate::{Ctx, cargo};

/// The fewest moves a model must make in each board game.
pub const MIN_MOVES: u32 = 100;

/// Hands per player at blackjack.
pub const BLACKJACK_HANDS: u32 = 200;

/// The time a player has for one move. A model's answer waits behind the other games' answers
/// on two shared cores: Gemma 3 270M in eight games at once on a busy machine answered in 56 s
/// (median) to 106 s (95th percentile) and lost 16 of 30 tic-tac-toe games on time at 120 s.
/// The bench measures how a model plays, so a move may take up to five minutes.
pub const MOVE_TIMEOUT_SECONDS: u32 = 300;

/// The arena's seed for every run.
pub const SEED: u64 = 1;

/// A brain of the bench: a brain the server knows, or a `local` profile on a model.
#[derive(Debug)]
pub struct Brain {
    /// Its name: the profile's, or the brain's (`scripted`).
    pub name: &'static str,
    /// The model of its `local` profile; `None` for a built-in brain.
    pub model: Option<&'static Model>,
    /// Games played at once (`--concurrency`); a model's games share its batched sequences,
    /// and its profile has as many.
    pub concurrency: u32,
}

/// The brains, cheapest first. A model's move is due on its turn, so it answers every turn
/// with a move: four games at once keep its four sequences busy without queueing answers
/// behind each other.
pub const BRAINS: [Brain; 3] = [
    Brain {
        name: "scripted",
        model: None,
        concurrency: 4,
    },
    Brain {
        name: "smollm2-135m",
        model: Some(&SMOLLM2),
        concurrency: 4,
    },
    Brain {
        name: "gemma-270m",
        model: Some(&GEMMA),
        concurrency: 4,
    },
];

/// Games played at once by the engines' calibration.
pub const ENGINE_CONCURRENCY: u32 = 2;

/// One board game of the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardRun {
    /// The game.
    pub game: &'static str,
    /// Games per pairing of a brain's ladder (three pairings): enough for [`MIN_MOVES`] moves.
    pub games: u32,
    /// Games per pairing of the engines' round robin.
    pub calibration_games: u32,
    /// `--max-plies`, when the arena's default (400) is too long.
    pub max_plies: Option<u32>,
}

/// The board games, with games per pairing sized for [`MIN_MOVES`] moves of a model that moves
/// on every turn (its move is due, so it does): about 30 of its moves in a chess game cut at
/// 60 plies, up to 50 in checkers at 100, 5 to 10 in four-in-a-row (a weak player's games end
/// soon), 4 in tic-tac-toe, 25 in mancala, 60 to 90 shots in sea battle — over the three
/// pairings of the ladder.
pub const BOARD_RUNS: [BoardRun; 6] = [
    BoardRun {
        game: "tic_tac_toe",
        games: 10,
        calibration_games: 30,
        max_plies: None,
    },
    BoardRun {
        game: "four_in_a_row",
        games: 8,
        calibration_games: 20,
        max_plies: None,
    },
    BoardRun {
        game: "mancala",
        games: 2,
        calibration_games: 20,
        max_plies: None,
    },
    BoardRun {
        game: "chess",
        games: 2,
        calibration_games: 20,
        max_plies: Some(60),
    },
    BoardRun {
        game: "checkers",
        games: 2,
        calibration_games: 20,
        max_plies: Some(100),
    },
    BoardRun {
        game: "sea_battle",
        games: 1,
        calibration_games: 20,
        max_plies: None,
    },
];

/// The house game of the bench.
pub const BLACKJACK: &str = "blackjack";

/// Which parts of the arena bench run (`--profile NAME`, `--game NAME`, repeatable; empty:
/// all). `engines` names the calibration as a profile.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Brains to run (`scripted`, `smollm2-135m`, `gemma-270m`, `engines`).
    pub profiles: Vec<String>,
    /// Games to run.
    pub games: Vec<String>,
    /// Keep the runs an earlier bench finished with the same plan (`--resume`): their reports
    /// are read again, not played again.
    pub resume: bool,
}

impl Filter {
    fn profile(&self, name: &str) -> bool {
        self.profiles.is_empty() || self.profiles.iter().any(|p| p == name)
    }

    fn game(&self, name: &str) -> bool {
        self.games.is_empty() || self.games.iter().any(|g| g == name)
    }

    /// Refuses a name that is no brain or game of the bench.
    pub fn check(&self) -> Result<(), String> {
        for p in &self.profiles {
            if p != ENGINES && !BRAINS.iter().any(|b| b.name == p) {
                return Err(format!(
                    "--profile {p}: the arena bench runs {}, {ENGINES}",
                    BRAINS.map(|b| b.name).join(", ")
                ));
            }
        }
        for g in &self.games {
            if g != BLACKJACK && !BOARD_RUNS.iter().any(|r| r.game == g) {
                return Err(format!(
                    "--game {g}: the arena bench plays {}, {BLACKJACK}",
                    BOARD_RUNS.map(|r| r.game).join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The calibration's name among the profiles and its report folder.
pub const ENGINES: &str = "engines";

/// The settings of a `local` profile for a small model on a CPU: answers short (a move is
/// about 40 tokens, and every token is a decoding step), sampling cool, a sequence for each
/// game played at once, the model kept loaded between games, every core of the machine (no
/// game's frames share it: [`bench_threads`]), and as long for an answer as a move may take.
pub fn local_profile(model: &Path, sequences: u32) -> Value {
    json!({
        "provider": "local",
        "model": model.to_string_lossy(),
        "threads": bench_threads(),
        "context_size": 4096,
        "sequences": sequences,
        "max_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.9,
        "keep_loaded": true,
        "timeout_seconds": MOVE_TIMEOUT_SECONDS,
        // The answers are kept in the trace: the bench reads why a turn got no move.
        "trace_prompts": true,
    })
}

/// The threads a bench's model runs with: the machine's cores, at most 8. (A game's model
/// leaves a core for the frames by default; a bench measures the model alone.)
pub fn bench_threads() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get().min(8) as u32)
}

/// The brains file: a `local` profile per model brain (its name, its file, its games at once).
pub fn brains_file(models: &[(&str, PathBuf, u32)]) -> Value {
    let profiles: serde_json::Map<String, Value> = models
        .iter()
        .map(|(name, path, sequences)| ((*name).to_string(), local_profile(path, *sequences)))
        .collect();
    json!({ "profiles": profiles })
}

/// What one `agents-server arena` run is.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// `scripted`, a profile, or [`ENGINES`].
    pub profile: String,
    /// The game.
    pub game: String,
    /// `--players`.
    pub players: Vec<String>,
    /// `--ladder`.
    pub ladder: bool,
    /// `--games`.
    pub games: u32,
    /// `--max-plies`.
    pub max_plies: Option<u32>,
    /// `--concurrency`.
    pub concurrency: u32,
}

impl RunSpec {
    /// A brain's ladder on a board game.
    pub fn ladder(brain: &Brain, run: &BoardRun, games: u32) -> RunSpec {
        RunSpec {
            profile: brain.name.into(),
            game: run.game.into(),
            players: vec![brain.name.into()],
            ladder: true,
            games,
            max_plies: run.max_plies,
            concurrency: brain.concurrency,
        }
    }

    /// A brain's blackjack hands beside the two baselines.
    pub fn blackjack(brain: &Brain) -> RunSpec {
        RunSpec {
            profile: brain.name.into(),
            game: BLACKJACK.into(),
            players: vec![brain.name.into()],
            ladder: true,
            games: BLACKJACK_HANDS,
            max_plies: None,
            concurrency: brain.concurrency,
        }
    }

    /// The engines' round robin on a board game.
    pub fn calibration(run: &BoardRun) -> RunSpec {
        RunSpec {
            profile: ENGINES.into(),
            game: run.game.into(),
            players: ["random", "easy", "hard"]
                .map(|l| format!("engine:{l}"))
                .to_vec(),
            ladder: false,
            games: run.calibration_games,
            max_plies: run.max_plies,
            concurrency: ENGINE_CONCURRENCY,
        }
    }

    /// The blackjack baselines on the same hands.
    pub fn blackjack_calibration() -> RunSpec {
        RunSpec {
            profile: ENGINES.into(),
            game: BLACKJACK.into(),
            players: vec!["engine:basic".into(), "engine:stand".into()],
            ladder: false,
            games: BLACKJACK_HANDS,
            max_plies: None,
            concurrency: ENGINE_CONCURRENCY,
        }
    }

    /// Where it writes: `<bench dir>/<profile>/<game>/`.
    pub fn dir(&self, bench: &Path) -> PathBuf {
        bench.join(&self.profile).join(&self.game)
    }

    /// The arguments after `agents-server`.
    pub fn args(&self, bench: &Path) -> Vec<String> {
        let dir = self.dir(bench);
        let mut args = vec![
            "arena".to_string(),
            "--game".into(),
            self.game.clone(),
            "--players".into(),
            self.players.join(","),
        ];
        if self.ladder {
            args.push("--ladder".into());
        }
        args.extend([
            "--games".into(),
            self.games.to_string(),
            "--seed".into(),
            SEED.to_string(),
            "--concurrency".into(),
            self.concurrency.to_string(),
            "--move-timeout-seconds".into(),
            MOVE_TIMEOUT_SECONDS.to_string(),
        ]);
        if let Some(plies) = self.max_plies {
            args.extend(["--max-plies".into(), plies.to_string()]);
        }
        args.extend([
            "--brains".into(),
            bench.join("brains.json").to_string_lossy().into_owned(),
            "--db".into(),
            dir.join("arena.db").to_string_lossy().into_owned(),
            "--report".into(),
            dir.to_string_lossy().into_owned(),
        ]);
        args
    }

    /// The command line as a user types it, cargo's target directory `target` (wherever
    /// `CARGO_TARGET_DIR` put it).
    pub fn shown(&self, bench: &Path, target: &Path) -> String {
        let args: Vec<String> = self
            .args(bench)
            .into_iter()
            .map(|a| match Path::new(&a).strip_prefix(target) {
                Ok(rest) => Path::new("target")
                    .join(rest)
                    .to_string_lossy()
                    .into_owned(),
                Err(_) => a,
            })
            .collect();
        format!("target/release/agents-server {}", args.join(" "))
    }
}

/// The model calls of a run, from its database's trace (`brain_calls`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Calls {
    /// Model calls (decisions' rounds, repairs, reflections and importance ratings).
    pub count: u64,
    /// Calls that did not end `ok`, with their error codes.
    pub failed: Vec<(String, u64)>,
    /// Per call, in milliseconds: p50, p95.
    pub latency_p50: f64,
    /// See `latency_p50`.
    pub latency_p95: f64,
    /// Prompt tokens per call, mean.
    pub input_mean: f64,
    /// Of them cached (the sequence's kept prefix), mean.
    pub cached_mean: f64,
    /// Answer tokens per call, mean.
    pub output_mean: f64,
}

/// The plays that count as moves (the seat's: a board game's `move`, blackjack's actions).
const PLAYS: [&str; 5] = ["move", "hit", "stand", "double", "split"];

/// Why a brain's turns ran out of time: for every game (hand) it lost on time, what the last
/// answer of its agent in that game was, from the trace (`trace_prompts`):
///
/// - `words only`: an answer without calls (a line said), which makes no move;
/// - `hints only`: only `suggest_move` calls, read-only, until the decision's rounds ran out;
/// - `other calls`: calls, none of them a play;
/// - `no answer in time`: no answer of that turn was recorded (still being generated, or
///   waiting for a sequence, when the time ran out);
/// - an error code: the last call failed (`brain_timeout`, …).
pub fn read_stalls(
    db: &Path,
    results: &Results,
    brain: &str,
) -> Result<Vec<(String, usize)>, String> {
    let lost_on_time: Vec<u32> = results
        .games
        .iter()
        .filter(|g| {
            g.termination == Termination::Time
                && g.reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with(&format!("{brain}:")))
        })
        .map(|g| g.index)
        .collect();
    if lost_on_time.is_empty() {
        return Ok(Vec::new());
    }
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("cannot open {}: {e}", db.display()))?;
    let err = |e: rusqlite::Error| format!("{}: {e}", db.display());
    // The brain's agent in each game: its app is `<tournament>-g<index>-…`.
    let mut agents: Vec<(String, String)> = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT agent_id, config FROM agents WHERE name = ?1")
            .map_err(err)?;
        let rows = stmt
            .query_map([brain], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(err)?;
        for row in rows {
            let (agent, config) = row.map_err(err)?;
            let app = serde_json::from_str::<Value>(&config)
                .ok()
                .and_then(|c| c["app_id"].as_str().map(str::to_string))
                .unwrap_or_default();
            agents.push((agent, app));
        }
    }
    let mut why: Vec<(String, usize)> = Vec::new();
    for index in lost_on_time {
        let tag = format!("-g{index}-");
        let reason = match agents.iter().find(|(_, app)| app.contains(&tag)) {
            None => "no answer in time".to_string(),
            Some((agent, _)) => {
                let mut stmt = conn
                    .prepare(
                        "SELECT outcome, COALESCE(error_code, ''), COALESCE(reply, '') \
                         FROM brain_calls WHERE agent_id = ?1 ORDER BY id",
                    )
                    .map_err(err)?;
                let calls: Vec<(String, String, String)> = stmt
                    .query_map([agent], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .map_err(err)?
                    .collect::<Result<_, _>>()
                    .map_err(err)?;
                stall_reason(&calls)
            }
        };
        match why.iter_mut().find(|(w, _)| *w == reason) {
            Some((_, n)) => *n += 1,
            None => why.push((reason, 1)),
        }
    }
    why.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(why)
}

/// Why a turn got no move, from its agent's model calls in order (outcome, error code, the
/// traced reply): see [`read_stalls`].
fn stall_reason(calls: &[(String, String, String)]) -> String {
    if let Some((outcome, code, _)) = calls.last()
        && outcome != "ok"
    {
        return if code.is_empty() {
            outcome.clone()
        } else {
            code.clone()
        };
    }
    // The last decision's answer: a reply whose text is the contract (reflections and
    // importance ratings answer other objects).
    let last_answer = calls.iter().rev().find_map(|(_, _, reply)| {
        let reply: Value = serde_json::from_str(reply).ok()?;
        let answer: Value = serde_json::from_str(reply["text"].as_str()?).ok()?;
        answer.get("tool_calls").cloned()
    });
    let Some(Value::Array(tool_calls)) = last_answer else {
        return "no answer in time".into();
    };
    let tools: Vec<&str> = tool_calls
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    if tools.is_empty() {
        "words only".into()
    } else if tools.iter().any(|t| PLAYS.contains(t)) {
        // Its last recorded answer played: the answer of the turn that ran out is not there.
        "no answer in time".into()
    } else if tools.iter().all(|t| *t == "suggest_move") {
        "hints only".into()
    } else {
        "other calls".into()
    }
}

/// Reads the model calls of the database at `db`; none when it has no trace.
pub fn read_calls(db: &Path) -> Result<Calls, String> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("cannot open {}: {e}", db.display()))?;
    let mut stmt = conn
        .prepare(
            "SELECT latency_ms, input_tokens, cached_tokens, output_tokens, outcome, \
             COALESCE(error_code, '') FROM brain_calls",
        )
        .map_err(|e| format!("{}: {e}", db.display()))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, String>(5)?,
            ))
        })
        .map_err(|e| format!("{}: {e}", db.display()))?;
    let mut latencies = Vec::new();
    let mut calls = Calls::default();
    let (mut input, mut cached, mut output) = (0i64, 0i64, 0i64);
    for row in rows {
        let (latency, i, c, o, outcome, code) =
            row.map_err(|e| format!("{}: {e}", db.display()))?;
        latencies.push(latency as f64);
        input += i;
        cached += c;
        output += o;
        if outcome != "ok" {
            let what = if code.is_empty() { outcome } else { code };
            match calls.failed.iter_mut().find(|(c, _)| *c == what) {
                Some((_, n)) => *n += 1,
                None => calls.failed.push((what, 1)),
            }
        }
    }
    calls.count = latencies.len() as u64;
    if calls.count > 0 {
        let n = calls.count as f64;
        calls.input_mean = input as f64 / n;
        calls.cached_mean = cached as f64 / n;
        calls.output_mean = output as f64 / n;
        latencies.sort_by(f64::total_cmp);
        calls.latency_p50 = percentile(&latencies, 50.0);
        calls.latency_p95 = percentile(&latencies, 95.0);
    }
    Ok(calls)
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// One finished run: what it was, what it found, how long it took.
#[derive(Debug, Clone)]
pub struct Run {
    /// What was run.
    pub spec: RunSpec,
    /// Its results.
    pub results: Results,
    /// Its model calls (empty for the scripted brain and the engines).
    pub calls: Calls,
    /// Why the brain's games lost on time got no move ([`read_stalls`]), most frequent first.
    pub stalls: Vec<(String, usize)>,
    /// Its wall time.
    pub elapsed: Duration,
    /// A run that was repeated with more games: what the first found (`62 moves in 9 games`).
    pub rerun_of: Option<String>,
    /// The machine's load (the 1-minute load average) when it started and when it ended: the
    /// machine is shared, and its numbers are slower the busier it was.
    pub load: [Option<f64>; 2],
}

impl Run {
    /// The brain's line of its results (the first brain).
    pub fn brain(&self) -> Option<&PlayerResult> {
        self.results
            .players
            .iter()
            .find(|p| p.kind == PlayerKind::Brain)
    }

    /// The games that ended other than by the rules, by how (`time`: 3).
    pub fn endings(&self) -> Vec<(&'static str, usize)> {
        [
            (Termination::Time, "time"),
            (Termination::Forfeit, "forfeit"),
            (Termination::MaxPlies, "max plies"),
            (Termination::Error, "error"),
        ]
        .into_iter()
        .map(|(t, name)| {
            (
                name,
                self.results
                    .games
                    .iter()
                    .filter(|g| g.termination == t)
                    .count(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
    }
}

/// `1206 [1028, 1344]`, or `-`.
fn rating(p: &PlayerResult) -> String {
    match (p.rating, p.rating_ci95) {
        (Some(r), Some([lo, hi])) => format!("{r:.0} [{lo:.0}, {hi:.0}]"),
        (Some(r), None) => format!("{r:.0}"),
        _ => "-".into(),
    }
}

fn record(p: &PlayerResult) -> String {
    format!("{}-{}-{}", p.wins, p.draws, p.losses)
}

fn minutes(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() / 60.0)
}

/// The brains' board games as a Markdown table.
pub fn board_table(runs: &[Run]) -> String {
    let mut out = String::from(
        "| brain | game | games | W-D-L | rating [95 % CI] | moves | illegal /100 moves | \
         repairs /100 moves | latency p50 / p95 per move | tokens per move | model calls | \
         per call p50 / p95 | ended otherwise | minutes | load |\n\
         |---|---|---:|---:|---|---:|---:|---:|---|---:|---:|---|---|---:|---|\n",
    );
    for run in runs.iter().filter(|r| r.spec.game != BLACKJACK) {
        let Some(p) = run.brain() else { continue };
        let calls = if run.calls.count == 0 {
            ("-".to_string(), "-".to_string())
        } else {
            (
                run.calls.count.to_string(),
                format!(
                    "{} / {}",
                    seconds(run.calls.latency_p50),
                    seconds(run.calls.latency_p95)
                ),
            )
        };
        let mut endings: Vec<String> = run
            .endings()
            .iter()
            .map(|(what, n)| {
                if *what == "time" && !run.stalls.is_empty() {
                    format!("{n} {what} ({})", stalls(&run.stalls))
                } else {
                    format!("{n} {what}")
                }
            })
            .collect();
        endings.extend(
            run.calls
                .failed
                .iter()
                .map(|(code, n)| format!("{n} calls {code}")),
        );
        if endings.is_empty() {
            endings.push("-".into());
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {}{} | {:.1} | {:.1} | {} / {} | {:.0} | {} | {} | {} | {} | {} |",
            p.name,
            run.spec.game,
            p.games,
            record(p),
            rating(p),
            p.moves,
            if run.rerun_of.is_some() { "¹" } else { "" },
            p.illegal_per_100_moves,
            p.repairs_per_100_moves,
            seconds(p.latency_ms.p50),
            seconds(p.latency_ms.p95),
            p.tokens.per_move,
            calls.0,
            calls.1,
            endings.join(", "),
            minutes(run.elapsed),
            load(run.load),
        );
    }
    let reruns: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            r.rerun_of.as_ref().map(|why| {
                format!(
                    "{} on {}: the first run made {why}",
                    r.spec.profile, r.spec.game
                )
            })
        })
        .collect();
    if !reruns.is_empty() {
        let _ = writeln!(out, "\n¹ Run again with more games: {}.", reruns.join("; "));
    }
    out
}

/// `3 words only, 1 hints only`.
fn stalls(stalls: &[(String, usize)]) -> String {
    stalls
        .iter()
        .map(|(why, n)| format!("{n} {why}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The load at a run's start and end (`4.5 → 0.9`).
fn load(load: [Option<f64>; 2]) -> String {
    let one = |l: Option<f64>| l.map_or("?".into(), |l| format!("{l:.1}"));
    format!("{} → {}", one(load[0]), one(load[1]))
}

/// The 1-minute load average, where the system tells it (`/proc/loadavg`).
fn load_now() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A latency in milliseconds, as seconds when it is one or more (`12.3 s`, `5 ms`).
fn seconds(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format!("{ms:.0} ms")
    }
}

/// Blackjack, every brain beside the baselines, as a Markdown table.
pub fn blackjack_table(runs: &[Run]) -> String {
    let mut out = String::from(
        "| player | hands | won-pushed-lost | net chips /100 hands | decisions | illegal /100 \
         | repairs /100 | latency p50 / p95 per decision | tokens per decision | hands lost on \
         time | minutes | load |\n\
         |---|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---|\n",
    );
    let mut baselines_shown = false;
    for run in runs.iter().filter(|r| r.spec.game == BLACKJACK) {
        for p in &run.results.players {
            let baseline = p.kind == PlayerKind::Engine;
            if baseline && baselines_shown {
                continue;
            }
            let net = p
                .score
                .map_or("-".into(), |s| format!("{:+.1}", s.net_per_100));
            let hands = p.score.map_or(p.games, |s| s.hands);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} | {} |",
                p.name,
                hands,
                record(p),
                net,
                p.moves,
                p.illegal_per_100_moves,
                p.repairs_per_100_moves,
                if baseline {
                    "-".into()
                } else {
                    format!(
                        "{} / {}",
                        seconds(p.latency_ms.p50),
                        seconds(p.latency_ms.p95)
                    )
                },
                if baseline {
                    "-".into()
                } else {
                    format!("{:.0}", p.tokens.per_move)
                },
                if baseline {
                    "-".into()
                } else {
                    let lost: usize = run.stalls.iter().map(|(_, n)| n).sum();
                    if lost == 0 {
                        "0".into()
                    } else {
                        format!("{lost} ({})", stalls(&run.stalls))
                    }
                },
                if baseline {
                    "-".into()
                } else {
                    minutes(run.elapsed)
                },
                if baseline { "-".into() } else { load(run.load) },
            );
        }
        baselines_shown = true;
    }
    out
}

/// The engines' round robins as a Markdown table: each engine's rating and record per game.
pub fn calibration_table(runs: &[Run]) -> String {
    let levels = ["engine:random", "engine:easy", "engine:hard"];
    let mut out = String::from("| game | games |");
    for level in levels {
        let _ = write!(out, " {level}: rating [95 % CI], W-D-L |");
    }
    out.push_str(" minutes |\n|---|---:|---|---|---|---:|\n");
    for run in runs
        .iter()
        .filter(|r| r.spec.profile == ENGINES && r.spec.game != BLACKJACK)
    {
        let _ = write!(out, "| {} | {} |", run.spec.game, run.results.games.len());
        for level in levels {
            match run.results.players.iter().find(|p| p.name == level) {
                Some(p) => {
                    let _ = write!(out, " {}, {} |", rating(p), record(p));
                }
                None => out.push_str(" - |"),
            }
        }
        let _ = writeln!(out, " {} |", minutes(run.elapsed));
    }
    out
}

/// The whole summary: the tables, the commands, the warnings.
pub fn summary(runs: &[Run], commands: &[String], warnings: &[String], total: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The arena bench\n\n{} runs, {} minutes in all.\n",
        runs.len(),
        minutes(total)
    );
    out.push_str("## Board games, each brain against the ladder\n\n");
    out.push_str(&board_table(runs));
    out.push_str("\n## Blackjack\n\n");
    out.push_str(&blackjack_table(runs));
    out.push_str("\n## The engines against each other\n\n");
    out.push_str(&calibration_table(runs));
    if !warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
    out.push_str("\n## Commands\n\n```sh\n");
    for c in commands {
        let _ = writeln!(out, "{c}");
    }
    out.push_str("```\n");
    out
}

/// A run is repeated with at most this many times its games: a model that moves more rarely
/// is reported, not played for hours.
pub const MAX_SCALE: u32 = 3;

/// The games per pairing that should give a brain [`MIN_MOVES`] moves, from a run that gave
/// it `moves` in `games` games per pairing (a fifth more, at least one game more); `None` when
/// that is more than [`MAX_SCALE`] times `games` (or it made no move at all).
pub fn scaled_games(games: u32, moves: u32) -> Option<u32> {
    if moves == 0 {
        return None;
    }
    let want = (f64::from(games) * f64::from(MIN_MOVES) / f64::from(moves) * 1.2).ceil() as u32;
    let want = want.max(games + 1);
    (want <= games * MAX_SCALE).then_some(want)
}

/// Runs the arena bench (see the module's documentation).
pub fn run(ctx: &Ctx, filter: &Filter) -> Result<(), String> {
    filter.check()?;
    crate::packages::ensure_build_tools()?;
    println!("xtask: cargo build --release -p agents-server");
    process::run_checked(
        Command::new(cargo())
            .args(["build", "--release", "-p", "agents-server"])
            .current_dir(&ctx.root),
    )?;
    let server = ctx
        .target_dir
        .join("release")
        .join(format!("agents-server{}", std::env::consts::EXE_SUFFIX));
    let bench = ctx.target_dir.join("arena-bench");
    fs::create_dir_all(&bench).map_err(|e| format!("cannot create {}: {e}", bench.display()))?;
    let mut models = Vec::new();
    for brain in &BRAINS {
        if let Some(model) = brain.model {
            models.push((brain.name, model.ensure()?, brain.concurrency));
        }
    }
    let brains = brains_file(&models);
    let text = serde_json::to_string_pretty(&brains).map_err(|e| e.to_string())?;
    fs::write(bench.join("brains.json"), text + "\n")
        .map_err(|e| format!("cannot write the brains file: {e}"))?;

    let began = Instant::now();
    let mut runs: Vec<Run> = Vec::new();
    let mut commands = Vec::new();
    let mut warnings = Vec::new();
    let mut plan: Vec<RunSpec> = Vec::new();
    if filter.profile(ENGINES) {
        plan.extend(
            BOARD_RUNS
                .iter()
                .filter(|r| filter.game(r.game))
                .map(RunSpec::calibration),
        );
        if filter.game(BLACKJACK) {
            plan.push(RunSpec::blackjack_calibration());
        }
    }
    for brain in BRAINS.iter().filter(|b| filter.profile(b.name)) {
        plan.extend(
            BOARD_RUNS
                .iter()
                .filter(|r| filter.game(r.game))
                .map(|r| RunSpec::ladder(brain, r, r.games)),
        );
        if filter.game(BLACKJACK) {
            plan.push(RunSpec::blackjack(brain));
        }
    }
    for spec in plan {
        let is_model = BRAINS
            .iter()
            .any(|b| b.name == spec.profile && b.model.is_some());
        let kept = if filter.resume {
            kept(&bench, &spec)?
        } else {
            None
        };
        let run = match kept {
            Some(run) => {
                println!(
                    "xtask: {} on {}: kept from an earlier run (--resume)",
                    spec.profile, spec.game
                );
                run
            }
            None => {
                let mut run = play(&server, &bench, &spec)?;
                let moves = run.brain().map_or(0, |p| p.moves);
                if is_model
                    && spec.game != BLACKJACK
                    && moves < MIN_MOVES
                    && let Some(games) = scaled_games(spec.games, moves)
                {
                    let first = format!(
                        "{moves} moves in {} games ({} per pairing)",
                        run.results.games.len(),
                        spec.games
                    );
                    println!(
                        "xtask: {} made {first} of {}: again with {games} games per pairing",
                        spec.profile, spec.game
                    );
                    let again = RunSpec {
                        games,
                        ..spec.clone()
                    };
                    run = play(&server, &bench, &again)?;
                    run.rerun_of = Some(first);
                }
                keep(&bench, &spec, &run)?;
                run
            }
        };
        commands.push(run.spec.shown(&bench, &ctx.target_dir));
        warnings.extend(warnings_of(&run, is_model));
        runs.push(run);
        let text = summary(&runs, &commands, &warnings, began.elapsed());
        fs::write(bench.join("summary.txt"), &text)
            .map_err(|e| format!("cannot write the summary: {e}"))?;
    }
    let text = summary(&runs, &commands, &warnings, began.elapsed());
    println!("{text}");
    println!("xtask: wrote {}", bench.join("summary.txt").display());
    Ok(())
}

/// What a finished run makes the summary warn about: a model short of [`MIN_MOVES`] moves,
/// illegal attempts, games that ended other than by the rules or a ply limit.
pub fn warnings_of(run: &Run, is_model: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    let spec = &run.spec;
    let moves = run.brain().map_or(0, |p| p.moves);
    if is_model && spec.game != BLACKJACK && moves < MIN_MOVES {
        let games = run.results.games.len();
        warnings.push(match &run.rerun_of {
            Some(first) => format!(
                "{} made only {moves} moves of {} in {games} games, run again after {first}",
                spec.profile, spec.game
            ),
            None => format!(
                "{} made only {moves} moves of {} in {games} games: not run again, \
                 {MIN_MOVES} moves would take more than {MAX_SCALE} times the games",
                spec.profile, spec.game
            ),
        });
    }
    if let Some(p) = run.brain()
        && p.illegal_moves > 0
    {
        warnings.push(format!(
            "{} made {} illegal attempts at {}",
            p.name, p.illegal_moves, spec.game
        ));
    }
    for (how, n) in run.endings() {
        if how != "max plies" {
            warnings.push(format!(
                "{}/{}: {n} games ended by {how}",
                spec.profile, spec.game
            ));
        }
    }
    warnings
}

/// The file beside a run's report that lets `--resume` keep it: the planned run's arguments
/// (before any scaling up), the games per pairing played, the time, the load, why it was run
/// again.
const KEPT: &str = "bench.json";

/// Records a finished run for `--resume`.
fn keep(bench: &Path, planned: &RunSpec, run: &Run) -> Result<(), String> {
    let file = run.spec.dir(bench).join(KEPT);
    let kept = json!({
        "planned": planned.args(bench),
        "games": run.spec.games,
        "elapsed_ms": u64::try_from(run.elapsed.as_millis()).unwrap_or(u64::MAX),
        "load": run.load,
        "rerun_of": run.rerun_of,
    });
    fs::write(&file, kept.to_string()).map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// A run kept by an earlier bench with the same plan, if its report is whole.
fn kept(bench: &Path, planned: &RunSpec) -> Result<Option<Run>, String> {
    let dir = planned.dir(bench);
    let Ok(text) = fs::read_to_string(dir.join(KEPT)) else {
        return Ok(None);
    };
    let Ok(kept) = serde_json::from_str::<Value>(&text) else {
        return Ok(None);
    };
    if kept["planned"] != json!(planned.args(bench)) {
        return Ok(None);
    }
    let Ok(text) = fs::read_to_string(dir.join("results.json")) else {
        return Ok(None);
    };
    let Ok(results) = serde_json::from_str::<Results>(&text) else {
        return Ok(None);
    };
    let spec = RunSpec {
        games: kept["games"]
            .as_u64()
            .and_then(|g| u32::try_from(g).ok())
            .unwrap_or(planned.games),
        ..planned.clone()
    };
    let db = dir.join("arena.db");
    if !db.is_file() {
        return Ok(None);
    }
    let stalls = match spec.players.iter().find(|p| !p.starts_with("engine:")) {
        Some(brain) => read_stalls(&db, &results, brain)?,
        None => Vec::new(),
    };
    Ok(Some(Run {
        spec,
        calls: read_calls(&db)?,
        stalls,
        results,
        elapsed: Duration::from_millis(kept["elapsed_ms"].as_u64().unwrap_or(0)),
        rerun_of: kept["rerun_of"].as_str().map(str::to_string),
        load: [kept["load"][0].as_f64(), kept["load"][1].as_f64()],
    }))
}

/// Plays one run into its folder (cleared first) and reads what it wrote.
fn play(server: &Path, bench: &Path, spec: &RunSpec) -> Result<Run, String> {
    let dir = spec.dir(bench);
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let args = spec.args(bench);
    println!("xtask: agents-server {}", args.join(" "));
    let started = Instant::now();
    let load_start = load_now();
    let out = process::run(Command::new(server).args(&args), None, Echo::Stream)?;
    let elapsed = started.elapsed();
    let load_end = load_now();
    if !out.success() {
        use std::os::unix::process::ExitStatusExt;
        let signal = out
            .status
            .and_then(|s| s.signal())
            .map_or(String::new(), |n| format!(", signal {n}"));
        return Err(format!(
            "agents-server arena --game {} --players {} failed ({}{signal}); \
             `cargo xtask bench --only-arena --resume` keeps the runs that finished",
            spec.game,
            spec.players.join(","),
            out.ending()
        ));
    }
    let file = dir.join("results.json");
    let text =
        fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let results: Results =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let calls = read_calls(&dir.join("arena.db"))?;
    let stalls = match spec.players.iter().find(|p| !p.starts_with("engine:")) {
        Some(brain) => read_stalls(&dir.join("arena.db"), &results, brain)?,
        None => Vec::new(),
    };
    println!(
        "xtask: {} on {}: {} games in {} min",
        spec.profile,
        spec.game,
        results.games.len(),
        minutes(elapsed)
    );
    Ok(Run {
        spec: spec.clone(),
        results,
        calls,
        stalls,
        elapsed,
        rerun_of: None,
        load: [load_start, load_end],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_run(game: &str) -> &'static BoardRun {
        BOARD_RUNS.iter().find(|r| r.game == game).unwrap()
    }

    fn results(game: &str, players: Value, games: Value) -> Results {
        serde_json::from_value(json!({
            "version": 1, "tournament": "arena-1", "game": game, "schedule": "ladder",
            "seed": 1, "started_at": "2026-11-29T00:00:00Z", "elapsed_ms": 1000,
            "anchor": null, "players": players, "games": games,
        }))
        .unwrap()
    }

    fn player(name: &str, kind: &str, extra: Value) -> Value {
        let mut p = json!({
            "name": name, "kind": kind, "games": 9, "wins": 1, "draws": 2, "losses": 6,
            "forfeits": 0, "rating": 812.4, "rating_ci95": [700.0, 901.6], "moves": 120,
            "illegal_moves": 0, "illegal_per_100_moves": 0.0, "repairs": 3,
            "repairs_per_100_moves": 2.5, "latency_ms": {"p50": 6400.0, "p95": 21000.0, "max": 1.0},
            "tokens": {"input": 1, "output": 1, "per_move": 1234.4}, "cost_usd": null,
            "score": null,
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    }

    /// The tables of the runtime's database the bench reads (as the runtime makes them).
    const TRACE: &str = "CREATE TABLE brain_calls (id INTEGER PRIMARY KEY, agent_id TEXT NOT \
        NULL, provider TEXT NOT NULL, model TEXT, started_at TEXT NOT NULL, latency_ms INTEGER \
        NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cached_tokens \
        INTEGER NOT NULL, outcome TEXT NOT NULL, repairs INTEGER NOT NULL, error_code TEXT, \
        prompt TEXT, reply TEXT); CREATE TABLE agents (agent_id TEXT PRIMARY KEY, name TEXT NOT \
        NULL, config TEXT NOT NULL);";

    fn game(termination: &str) -> Value {
        json!({"index": 1, "game": "chess", "players": ["a", "b"], "result": "0-1",
               "winner": "b", "termination": termination, "reason": null, "seed": "1",
               "plies": 3, "start": "", "end": "", "pgn": null, "net": null, "moves": []})
    }

    #[test]
    fn the_brains_file_holds_a_local_profile_per_model() {
        let file = brains_file(&[
            ("gemma-270m", PathBuf::from("/cache/gemma.gguf"), 8),
            ("smollm2-135m", PathBuf::from("/cache/smol.gguf"), 4),
        ]);
        let profiles = file["profiles"].as_object().unwrap();
        assert_eq!(profiles.len(), 2);
        let gemma = &profiles["gemma-270m"];
        assert_eq!(gemma["provider"], "local");
        assert_eq!(gemma["model"], "/cache/gemma.gguf");
        assert_eq!(gemma["sequences"], 8);
        assert_eq!(profiles["smollm2-135m"]["sequences"], 4);
        assert_eq!(gemma["keep_loaded"], true);
        // The profile is a brain object the server takes: every option is the local
        // provider's, spelled as it reads them.
        let spec: agents_core::brain::BrainSpec = serde_json::from_value(gemma.clone()).unwrap();
        assert_eq!(spec.provider, "local");
        let options: agents_core::brain::local::LocalOptions =
            serde_json::from_value(Value::Object(spec.options)).unwrap();
        assert_eq!(options.max_tokens, Some(64));
        assert_eq!(options.keep_loaded, Some(true));
    }

    #[test]
    fn every_board_game_of_the_arena_is_run_and_chess_is_bounded() {
        let mut games: Vec<&str> = BOARD_RUNS.iter().map(|r| r.game).collect();
        games.push(BLACKJACK);
        games.sort_unstable();
        let mut arena: Vec<&str> = agents_core::arena::games()
            .into_iter()
            .filter(|g| *g != "slot")
            .collect();
        arena.sort_unstable();
        assert_eq!(games, arena);
        let chess = BOARD_RUNS.iter().find(|r| r.game == "chess").unwrap();
        assert_eq!(chess.max_plies, Some(60));
    }

    #[test]
    fn a_run_writes_into_its_folder_with_the_bench_settings() {
        let bench = Path::new("/repo/target/arena-bench");
        let spec = RunSpec::ladder(&BRAINS[2], board_run("chess"), 3);
        let args = spec.args(bench);
        let text = args.join(" ");
        assert!(
            text.starts_with("arena --game chess --players gemma-270m --ladder --games 3"),
            "{text}"
        );
        assert!(text.contains("--max-plies 60"), "{text}");
        assert!(text.contains("--concurrency 4"), "{text}");
        assert!(
            text.contains("--report /repo/target/arena-bench/gemma-270m/chess"),
            "{text}"
        );
        assert!(
            text.contains("--db /repo/target/arena-bench/gemma-270m/chess/arena.db"),
            "{text}"
        );
        assert!(
            text.contains("--brains /repo/target/arena-bench/brains.json"),
            "{text}"
        );
        assert_eq!(
            spec.shown(bench, Path::new("/repo/target")),
            format!(
                "target/release/agents-server {}",
                text.replace("/repo/", "")
            )
        );
        let bj = RunSpec::blackjack(&BRAINS[1]).args(bench).join(" ");
        assert!(
            bj.starts_with("arena --game blackjack --players smollm2-135m --ladder --games 200"),
            "{bj}"
        );
        assert!(!bj.contains("--max-plies"), "{bj}");
        let cal = RunSpec::calibration(board_run("tic_tac_toe"))
            .args(bench)
            .join(" ");
        assert!(
            cal.starts_with(
                "arena --game tic_tac_toe --players engine:random,engine:easy,engine:hard --games 30"
            ),
            "{cal}"
        );
        assert!(cal.contains("--report /repo/target/arena-bench/engines/tic_tac_toe"));
    }

    #[test]
    fn the_filter_names_what_the_bench_does_not_run() {
        let ok = Filter {
            profiles: vec!["gemma-270m".into(), ENGINES.into()],
            games: vec!["chess".into(), BLACKJACK.into()],
            resume: false,
        };
        assert!(ok.check().is_ok());
        assert!(ok.profile("gemma-270m") && !ok.profile("scripted"));
        assert!(ok.game("chess") && !ok.game("mancala"));
        assert!(Filter::default().profile("scripted") && Filter::default().game("mancala"));
        let e = Filter {
            profiles: vec!["gpt".into()],
            ..Filter::default()
        }
        .check()
        .unwrap_err();
        assert!(
            e.contains("--profile gpt") && e.contains("smollm2-135m"),
            "{e}"
        );
        let e = Filter {
            games: vec!["go".into()],
            ..Filter::default()
        }
        .check()
        .unwrap_err();
        assert!(e.contains("--game go") && e.contains("sea_battle"), "{e}");
    }

    #[test]
    fn too_few_moves_scale_the_games_up() {
        assert_eq!(scaled_games(5, 80), Some(8));
        assert_eq!(scaled_games(3, 99), Some(4));
        assert_eq!(scaled_games(3, 50), Some(8));
        assert_eq!(
            scaled_games(3, 30),
            None,
            "12 games is more than three times 3"
        );
        assert_eq!(scaled_games(12, 0), None);
        assert_eq!(scaled_games(2, 1), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 10.0);
        assert_eq!(percentile(&v, 95.0), 19.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
        assert_eq!(percentile(&[7.0], 95.0), 7.0);
    }

    #[test]
    fn the_tables_show_every_number_and_what_ended_otherwise() {
        let board = Run {
            spec: RunSpec::ladder(&BRAINS[2], board_run("chess"), 3),
            results: results(
                "chess",
                json!([
                    player("engine:hard", "engine", json!({})),
                    player("gemma-270m", "brain", json!({}))
                ]),
                json!([
                    game("normal"),
                    game("time"),
                    game("time"),
                    game("max_plies")
                ]),
            ),
            calls: Calls {
                count: 150,
                failed: vec![("brain_timeout".into(), 2)],
                latency_p50: 5000.0,
                latency_p95: 12000.0,
                ..Calls::default()
            },
            stalls: vec![("words only".into(), 1), ("hints only".into(), 1)],
            elapsed: Duration::from_secs(600),
            rerun_of: Some("62 moves in 9 games (3 per pairing)".into()),
            load: [Some(4.52), None],
        };
        let table = board_table(std::slice::from_ref(&board));
        let row = table.lines().nth(2).unwrap();
        assert_eq!(
            row,
            "| gemma-270m | chess | 9 | 1-2-6 | 812 [700, 902] | 120¹ | 0.0 | 2.5 | 6.4 s / 21.0 s \
             | 1234 | 150 | 5.0 s / 12.0 s | 2 time (1 words only, 1 hints only), 1 max plies, \
             2 calls brain_timeout | 10.0 | 4.5 → ? |"
        );
        assert!(table.contains("¹ Run again with more games: gemma-270m on chess: the first run made 62 moves in 9 games"));

        let house = |brain: &str| Run {
            spec: RunSpec::blackjack(BRAINS.iter().find(|b| b.name == brain).unwrap()),
            results: results(
                "blackjack",
                json!([
                    player(
                        "engine:basic",
                        "engine",
                        json!({"rating": null, "rating_ci95": null,
                        "score": {"hands": 200, "net_chips": -40, "net_per_100": -20.0}})
                    ),
                    player(
                        brain,
                        "brain",
                        json!({"rating": null, "rating_ci95": null,
                        "score": {"hands": 200, "net_chips": -300, "net_per_100": -150.0}})
                    ),
                    player(
                        "engine:stand",
                        "engine",
                        json!({"rating": null, "rating_ci95": null,
                        "score": {"hands": 200, "net_chips": -320, "net_per_100": -160.0}})
                    ),
                ]),
                json!([]),
            ),
            calls: Calls::default(),
            stalls: if brain == "scripted" {
                Vec::new()
            } else {
                vec![("words only".into(), 7)]
            },
            elapsed: Duration::from_secs(60),
            rerun_of: None,
            load: [None, None],
        };
        let table = blackjack_table(&[house("scripted"), house("gemma-270m")]);
        assert_eq!(table.matches("engine:basic").count(), 1, "{table}");
        assert!(
            table.contains("| gemma-270m | 200 | 1-2-6 | -150.0 |"),
            "{table}"
        );
        assert!(
            table.contains("| engine:stand | 200 | 1-2-6 | -160.0 |"),
            "{table}"
        );

        let cal = Run {
            spec: RunSpec::calibration(board_run("chess")),
            results: results(
                "chess",
                json!([
                    player("engine:hard", "engine", json!({"rating": 1500.0})),
                    player(
                        "engine:random",
                        "engine",
                        json!({"rating": 1000.0, "rating_ci95": [1000.0, 1000.0]})
                    )
                ]),
                json!([]),
            ),
            calls: Calls::default(),
            stalls: Vec::new(),
            elapsed: Duration::from_secs(30),
            rerun_of: None,
            load: [None, None],
        };
        let table = calibration_table(&[board.clone(), cal]);
        assert!(
            table.contains(
                "| chess | 0 | 1000 [1000, 1000], 1-2-6 | - | 1500 [700, 902], 1-2-6 | 0.5 |"
            ),
            "{table}"
        );
        let all = summary(
            &[board],
            &["agents-server arena …".into()],
            &["w".into()],
            Duration::from_secs(90),
        );
        assert!(all.contains("## Warnings\n\n- w"));
        assert!(all.contains("```sh\nagents-server arena …\n```"));
    }

    #[test]
    fn a_finished_run_is_kept_for_resume_and_warned_about() {
        let bench = std::env::temp_dir().join(format!("xtask-arena-kept-{}", std::process::id()));
        let _ = fs::remove_dir_all(&bench);
        let planned = RunSpec::ladder(&BRAINS[1], board_run("chess"), 3);
        let played = RunSpec {
            games: 6,
            ..planned.clone()
        };
        let dir = played.dir(&bench);
        fs::create_dir_all(&dir).unwrap();
        assert!(
            kept(&bench, &planned).unwrap().is_none(),
            "nothing kept yet"
        );
        let results = results(
            "chess",
            json!([player(
                "smollm2-135m",
                "brain",
                json!({"moves": 40, "illegal_moves": 2})
            )]),
            json!([game("time"), game("normal")]),
        );
        fs::write(
            dir.join("results.json"),
            serde_json::to_string(&results).unwrap(),
        )
        .unwrap();
        assert!(kept(&bench, &planned).unwrap().is_none(), "no database");
        rusqlite::Connection::open(dir.join("arena.db"))
            .unwrap()
            .execute_batch(TRACE)
            .unwrap();
        let run = Run {
            spec: played,
            results,
            calls: Calls::default(),
            stalls: Vec::new(),
            elapsed: Duration::from_millis(61_000),
            rerun_of: Some("20 moves in 9 games (3 per pairing)".into()),
            load: [Some(4.5), Some(2.0)],
        };
        keep(&bench, &planned, &run).unwrap();
        let again = kept(&bench, &planned).unwrap().expect("kept");
        assert_eq!(again.spec, run.spec);
        assert_eq!(again.results, run.results);
        assert_eq!(again.elapsed, run.elapsed);
        assert_eq!(again.rerun_of, run.rerun_of);
        assert_eq!(again.load, run.load);
        // Another plan does not take it.
        let other = RunSpec::ladder(&BRAINS[1], board_run("chess"), 4);
        assert!(kept(&bench, &other).unwrap().is_none());
        let warnings = warnings_of(&again, true);
        assert_eq!(
            warnings,
            [
                "smollm2-135m made only 40 moves of chess in 2 games, run again after 20 moves \
                 in 9 games (3 per pairing)",
                "smollm2-135m made 2 illegal attempts at chess",
                "smollm2-135m/chess: 1 games ended by time",
            ]
        );
        let _ = fs::remove_dir_all(&bench);
    }

    #[test]
    fn a_turn_without_a_move_is_told_by_its_last_answer() {
        let ok = |reply: Value| ("ok".to_string(), String::new(), reply.to_string());
        let answer = |calls: Value| {
            ok(
                json!({"text": json!({"assistant_text": "hi", "dialog_type": "reply",
                                     "tool_calls": calls}).to_string(), "tool_calls": []}),
            )
        };
        let reflection = ok(json!({"text": "{\"insights\": []}", "tool_calls": []}));
        assert_eq!(stall_reason(&[answer(json!([]))]), "words only");
        assert_eq!(
            stall_reason(&[answer(json!([])), reflection.clone()]),
            "words only",
            "a reflection after the answer is not the answer"
        );
        assert_eq!(
            stall_reason(&[answer(json!([{"tool": "suggest_move", "args": {}},
                                         {"tool": "suggest_move", "args": {}}]))]),
            "hints only"
        );
        assert_eq!(
            stall_reason(&[answer(json!([{"tool": "move", "args": {"coord": "A1"}}]))]),
            "no answer in time"
        );
        assert_eq!(
            stall_reason(&[answer(json!([{"tool": "deal", "args": {}}]))]),
            "other calls"
        );
        assert_eq!(stall_reason(&[]), "no answer in time");
        assert_eq!(
            stall_reason(&[("error".into(), "brain_timeout".into(), String::new())]),
            "brain_timeout"
        );
    }

    #[test]
    fn model_calls_are_read_from_the_trace() {
        let dir = std::env::temp_dir().join(format!("xtask-arena-calls-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let db = dir.join("arena.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(TRACE).unwrap();
        conn.execute_batch(
            "INSERT INTO brain_calls VALUES (1,'a','local',NULL,'',1000,700,300,50,'ok',0,NULL,NULL,NULL);
             INSERT INTO brain_calls VALUES (2,'a','local',NULL,'',3000,900,500,70,'ok',0,NULL,NULL,NULL);
             INSERT INTO brain_calls VALUES (3,'a','local',NULL,'',9000,800,0,0,'error',0,'brain_timeout',NULL,NULL);",
        )
        .unwrap();
        drop(conn);
        let calls = read_calls(&db).unwrap();
        // Why a game was lost on time: its agent (by its app) and that agent's last answer.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            r#"INSERT INTO agents VALUES ('a', 'gemma-270m', '{"app_id": "arena-1-g1-s1"}');
             INSERT INTO agents VALUES ('b', 'gemma-270m', '{"app_id": "arena-1-g2-s1"}');
             INSERT INTO brain_calls VALUES (4,'b','local',NULL,'',500,700,0,20,'ok',0,NULL,NULL,
               '{"text": "{\"assistant_text\": \"Hello\", \"dialog_type\": \"reply\", \"tool_calls\": []}"}');"#,
        )
        .unwrap();
        drop(conn);
        let mut lost = game("time");
        lost["reason"] = json!("gemma-270m: no move within 120 s");
        let mut lost2 = lost.clone();
        lost2["index"] = json!(2);
        let mut by_engine = game("time");
        by_engine["index"] = json!(3);
        by_engine["reason"] = json!("engine:hard: no move within 120 s");
        let results = results(
            "chess",
            json!([]),
            json!([lost, lost2, by_engine, game("normal")]),
        );
        assert_eq!(
            read_stalls(&db, &results, "gemma-270m").unwrap(),
            vec![
                ("brain_timeout".to_string(), 1),
                ("words only".to_string(), 1)
            ]
        );
        assert_eq!(calls.count, 3);
        assert_eq!(calls.latency_p50, 3000.0);
        assert_eq!(calls.latency_p95, 9000.0);
        assert_eq!(calls.input_mean, 800.0);
        assert_eq!(calls.failed, vec![("brain_timeout".to_string(), 1)]);
        let _ = fs::remove_dir_all(&dir);
    }
}
