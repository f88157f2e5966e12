//! What a tournament found: the numbers `results.json` holds, field by field.
//!
//! One [`Results`] per tournament: the players with their record, rating and costs
//! ([`PlayerResult`]), and every game with its moves ([`GameResult`], [`MoveRecord`]), so a game
//! can be replayed from the file alone. The same records are kept in the runtime's database
//! (`arena_games`), one row per game.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the `results.json` format (bumped when a field changes meaning).
pub const RESULTS_VERSION: u32 = 1;

/// A tournament's results (`results.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// [`RESULTS_VERSION`].
    pub version: u32,
    /// The tournament's id (`arena-…`), as the database keys its games.
    pub tournament: String,
    /// The game played (`chess`, `blackjack`, …).
    pub game: String,
    /// How the pairings were made: `match`, `round_robin` or `ladder`.
    pub schedule: String,
    /// The seed every game's seed derives from: the same seed with deterministic players gives
    /// the same games move for move.
    pub seed: u64,
    /// When it started (UTC, ISO 8601).
    pub started_at: String,
    /// How long it took, in milliseconds.
    pub elapsed_ms: u64,
    /// The rating scale's fixed point: the player held at a fixed rating (`engine:random` at
    /// 1000 when it played); `None` for a single-player game (no ratings).
    pub anchor: Option<Anchor>,
    /// Every player, best rated (or best scoring) first.
    pub players: Vec<PlayerResult>,
    /// Every game, in the order they were scheduled.
    pub games: Vec<GameResult>,
}

/// The player a rating scale is anchored to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    /// Its name (`engine:random`).
    pub player: String,
    /// Its rating, fixed.
    pub rating: f64,
}

/// What a player is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerKind {
    /// A built-in engine (`engine:random`, `engine:easy`, `engine:hard`; at blackjack
    /// `engine:basic` and `engine:stand`).
    Engine,
    /// A brain profile, playing through the app bridge as an agent.
    Brain,
}

/// One player's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerResult {
    /// Its name as given (`--players`): a brain profile's name or `engine:<level>`.
    pub name: String,
    /// An engine or a brain.
    pub kind: PlayerKind,
    /// Games played.
    pub games: u32,
    /// Games won (two-player games; at a house game, hands won).
    pub wins: u32,
    /// Games drawn (at a house game, hands pushed).
    pub draws: u32,
    /// Games lost (forfeits and losses on time included).
    pub losses: u32,
    /// Games lost by forfeit: too many illegal attempts in one game, or no move in time.
    pub forfeits: u32,
    /// The Bradley–Terry rating on an Elo scale (400 points = odds of 10 to 1), fitted by
    /// maximum likelihood over all games; `None` at a single-player game.
    pub rating: Option<f64>,
    /// The rating's 95 % interval `[low, high]` from a bootstrap over the games.
    pub rating_ci95: Option<[f64; 2]>,
    /// Moves it made.
    pub moves: u32,
    /// Illegal attempts: moves outside the legal list, refused by the schema or by the game,
    /// whether or not a repair followed.
    pub illegal_moves: u32,
    /// Illegal attempts per 100 moves.
    pub illegal_per_100_moves: f64,
    /// Answers its brain sent back for repair (a model's answer that broke the contract).
    pub repairs: u32,
    /// Repairs per 100 moves.
    pub repairs_per_100_moves: f64,
    /// Time per move, from the turn being its own to its move: `p50`, `p95`, `max`.
    pub latency_ms: Latency,
    /// Tokens its brain used (model brains; 0 otherwise).
    pub tokens: Tokens,
    /// What its moves cost in US dollars, where its brain profile prices the tokens
    /// (`price_per_mtok`); `None` otherwise.
    pub cost_usd: Option<f64>,
    /// At a house game: its score over its hands.
    pub score: Option<HouseScore>,
}

/// Latency percentiles, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// The median.
    pub p50: f64,
    /// The 95th percentile.
    pub p95: f64,
    /// The slowest.
    pub max: f64,
}

/// Tokens used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    /// Prompt tokens, summed.
    pub input: u64,
    /// Answer tokens, summed.
    pub output: u64,
    /// Both, per move.
    pub per_move: f64,
}

/// A player's score at a house game (blackjack, slot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HouseScore {
    /// Hands (or spins) played.
    pub hands: u32,
    /// Net chips won (negative: lost).
    pub net_chips: i64,
    /// Net chips per 100 hands.
    pub net_per_100: f64,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// By the rules: a win or a draw on the board, a settled hand.
    Normal,
    /// A player made too many illegal attempts (`--forfeit-after`).
    Forfeit,
    /// A player did not move within the time per move.
    Time,
    /// The game reached `--max-plies` (a draw).
    MaxPlies,
    /// The game could not go on (a brain that failed to start, an app that broke): no result.
    Error,
}

/// One game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Its number in the tournament (1, 2, …).
    pub index: u32,
    /// The game (`chess`).
    pub game: String,
    /// The players in seat order: the first moves first (white in chess and checkers).
    pub players: Vec<String>,
    /// The result from the seats' view: `1-0` (the first seat won), `0-1`, `1/2-1/2`; at a
    /// house game the net chips (`+10`, `-20`, `0`); `*` when it ended in an error.
    pub result: String,
    /// The winner's name; `None` for a draw, a house game or an error.
    pub winner: Option<String>,
    /// How it ended.
    pub termination: Termination,
    /// Why, in a few words, when it did not end by the rules (`3 illegal attempts`).
    pub reason: Option<String>,
    /// The game's seed (replays it with the same players).
    pub seed: String,
    /// Plies played (moves by either side).
    pub plies: u32,
    /// The starting state string (a FEN in chess).
    pub start: String,
    /// The final state string.
    pub end: String,
    /// The game in PGN (chess only).
    pub pgn: Option<String>,
    /// At a house game, the net chips of the hand.
    pub net: Option<i64>,
    /// Every move, in order.
    pub moves: Vec<MoveRecord>,
}

/// One move of a game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// Its ply (1 for the first move).
    pub ply: u32,
    /// Who moved (a name of [`GameResult::players`]).
    pub player: String,
    /// The move as played (`e2e4`, `C7`, `3`, `hit`).
    #[serde(rename = "move")]
    pub mv: Value,
    /// The state string after it.
    pub state: String,
    /// From the turn being the player's to its move, in milliseconds.
    pub latency_ms: u64,
    /// Prompt tokens of the decisions that made it.
    pub input_tokens: u64,
    /// Answer tokens of the decisions that made it.
    pub output_tokens: u64,
    /// Answers sent back for repair on the way to it.
    pub repairs: u32,
    /// Illegal attempts before it, each `move: why` (`e2e5: not one of the legal moves`).
    pub illegal: Vec<String>,
    /// What the player said on the way to it (a brain's lines; empty for an engine).
    pub text: String,
}
