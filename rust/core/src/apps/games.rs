//! Built-in game apps: a game of the game tools as an app that needs no handler.
//!
//! `AppConfig.game` (`{"name": "tic_tac_toe", "opponent": "ai", "level": "easy"}`) makes the app
//! a game of [`GAMES`]: the game tools start it (`new_*`), and its handler applies moves
//! (`apply_*`). The agent plays the first side (the player; white in chess and checkers) against
//! the built-in AI (`suggest_*` at `level`, answering at once) or against the human (who moves
//! with `app_human_action`, the app in `copilot` control mode).
//!
//! - **The state** the agent sees: `{game, position, turn: "you" | "opponent", status,
//!   legal_moves (on its turn), last_move, opponent_moved, winner: "you" | "opponent" | "draw"}`.
//!   `position` is the game's state string (a FEN in chess), as the game tools read it.
//! - **The actions** follow the turn: on the agent's turn `move` (its one argument named as the
//!   game names it: `coord`, `column`, `move`, `moveUci`, `pit`; its schema lists the legal
//!   moves as an `enum`, [`MAX_LISTED_MOVES`] at most) and the read-only `suggest_move`
//!   (the built-in AI's pick at `hard`, a hint the agent may take or leave: the `scripted` brain
//!   plays through it); on a human opponent's turn `move` for the human only; none once the game
//!   is over. On the agent's turn `move` is **due** ([`ActionDef::due`]): its answer must
//!   move (after a hint, if it asks one), and a `local` model's grammar allows nothing else.
//! - **Game over** sends the event `game_over` with `{winner}` and leaves the app with no actions.
//!
//! Sea battle is a board game too, played against the AI only: the agent sees its own board,
//! its shots and the opponent's shots, never the opponent's fleet (`position` is the state
//! string without its `O:` board; the AI shoots from its own fog board only).
//!
//! The house games have one player, the agent (or the human at the controls, in `human` and
//! `copilot` control mode), against the house; their state strings (the shoe, the hole card)
//! never reach the agent:
//! - **blackjack**: the actions are the legal ones (`hit`, `stand`, `double`, `split`), due
//!   while the round waits for the agent; the dealer
//!   plays out at once; a settled round sends `game_over` with `{winner, net, stack}` and offers
//!   `deal` (the next round, the same bet) while chips are left. `stack` and `bet` set the stakes.
//! - **slot**: `spin` while the stack covers the bet; `game_over` when it does not.
//! - **rpg_dice**: `roll` with `sides` (4, 6, 8, 10, 12, 20, 100) and `count` (1–100); it never
//!   ends (a dice tray for a table game).
//!
//! Every random draw is seeded from `seed`, so a seeded game replays: the AI's pick by the
//! position it picks in (and its level: asked twice, it picks the same), a house game's deal,
//! spin or roll by the number of them so far.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{ActionDef, ActionOutcome, ActionRequest, Actor, AppConfig, AppHandler, ControlMode};
use crate::tools::ToolRegistry;
use crate::tools::games::blackjack::GAME as BLACKJACK;
use crate::tools::games::dice::GAME as DICE;
use crate::tools::games::slot::GAME as SLOT;
use crate::tools::games::{self as tools_games, BoardDecl, GameDecl, ToolKind};

/// How a game app is set up (`AppConfig.game`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GameSetup {
    /// The game: one of [`GAMES`] (`chess`, `checkers`, `four_in_a_row`, `tic_tac_toe`,
    /// `mancala`, `sea_battle`, `blackjack`, `slot`, `rpg_dice`).
    pub name: String,
    /// Who plays the other side: `ai` (the built-in AI or the house, default) or `human` (the
    /// two-player board games but sea battle).
    #[serde(default)]
    pub opponent: Opponent,
    /// The AI's strength: `random`, `easy` (default), `hard`.
    #[serde(default = "default_level")]
    pub level: String,
    /// Which side the agent plays in a two-player board game: `first` (default: the side that
    /// moves first, white in chess and checkers) or `second` (the opponent opens; the built-in
    /// AI plays its first move at once). Sea battle is played from the first side only.
    #[serde(default)]
    pub side: Seat,
    /// Seeds the game and the AI (the same seed, the same game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<Value>,
    /// The starting stack (blackjack, slot; default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<u64>,
    /// The bet per hand or spin (blackjack, slot; default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bet: Option<u64>,
}

fn default_level() -> String {
    "easy".into()
}

impl GameSetup {
    /// The seed of draw `n` (`None` unseeded).
    pub(crate) fn seed_for(&self, n: u64) -> Option<Value> {
        self.seed.as_ref().map(|seed| json!(format!("{seed}:{n}")))
    }
}

/// Which side of a two-player board game the agent plays.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    /// The side that moves first (white in chess and checkers).
    #[default]
    First,
    /// The side that moves second.
    Second,
}

impl Seat {
    /// Its index in [`BoardDecl::sides`]: 0 for the first, 1 for the second.
    pub const fn index(self) -> usize {
        match self {
            Seat::First => 0,
            Seat::Second => 1,
        }
    }

    /// The other seat.
    pub const fn other(self) -> Seat {
        match self {
            Seat::First => Seat::Second,
            Seat::Second => Seat::First,
        }
    }
}

/// Who plays against the agent.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Opponent {
    /// The built-in AI (`suggest_*`), or the house.
    #[default]
    Ai,
    /// The human, through `app_human_action` (the app is put in `copilot` control mode).
    Human,
}

/// One kind of game app: a game of the game tools ([`tools_games::GAMES`]).
#[derive(Clone, Copy)]
pub struct GameKind {
    /// Its name (`tic_tac_toe`).
    pub name: &'static str,
    /// Whether the human may play the other side (`opponent: "human"`): the board games whose
    /// state hides nothing from either side (each side of sea battle would need a view of its own
    /// that the app does not keep).
    pub human_opponent: bool,
    /// Whether it is played for chips (`stack`, `bet`).
    pub stakes: bool,
    /// Whether the agent may play the second side (`side: "second"`): the board games whose
    /// state reads the same from either side (not sea battle, whose state string is written
    /// from the first side's view).
    pub second_side: bool,
    /// Whether `level` means anything (an AI that chooses: the board games).
    pub levels: bool,
    /// Its declaration: the tools it is played through.
    pub(crate) decl: &'static GameDecl,
}

impl GameKind {
    /// The game app of a declared game.
    const fn of(decl: &'static GameDecl) -> GameKind {
        let (human_opponent, levels) = match decl.board {
            Some(board) => (board.hidden.is_empty(), true),
            None => (false, false),
        };
        GameKind {
            name: decl.name,
            human_opponent,
            stakes: decl.stakes,
            second_side: human_opponent,
            levels,
            decl,
        }
    }

    pub(crate) fn start(&self, setup: &GameSetup) -> Result<Box<dyn Play>, String> {
        match self.decl.board {
            Some(board) => Ok(Box::new(BoardGame::start(self.decl, board, setup)?)),
            None => start_house(self.decl, setup),
        }
    }
}

impl std::fmt::Debug for GameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameKind")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A running game: what the agent sees, what may be done, and how an action plays out.
pub(crate) trait Play: Send + Sync {
    /// The state the agent sees.
    fn view(&self) -> Value;
    /// The whole state string, hidden parts included (the shoe and the hole card in
    /// blackjack), for the arena's engines; never shown to an agent. `None` where the view
    /// hides nothing an engine needs.
    fn hidden_state(&self) -> Option<String> {
        None
    }
    /// The actions for now.
    fn actions(&self) -> Vec<ActionDef>;
    /// Handles one action.
    fn handle(&self, request: &ActionRequest) -> ActionOutcome;
}

/// The most legal moves the `move` action's schema lists (an `enum`); with more, the schema
/// keeps the game's notation alone and the game refuses an illegal move. Chess, the widest of
/// the built-in games, has at most 218 in any position: each built-in game lists them all.
pub const MAX_LISTED_MOVES: usize = 256;

/// The game apps: every game of the game tools ([`tools_games::GAMES`]), in its order.
pub const GAMES: &[GameKind] = &kinds::<{ tools_games::GAMES.len() }>();

/// The [`GameKind`] of each of [`tools_games::GAMES`].
const fn kinds<const N: usize>() -> [GameKind; N] {
    let decls = tools_games::GAMES;
    let mut out = [GameKind::of(decls[0]); N];
    let mut i = 1;
    while i < N {
        out[i] = GameKind::of(decls[i]);
        i += 1;
    }
    out
}

/// Starts a house game: each has its own code here, which plays its game's tools.
fn start_house(decl: &'static GameDecl, setup: &GameSetup) -> Result<Box<dyn Play>, String> {
    if decl.name == BLACKJACK.name {
        Ok(Box::new(Blackjack::start(setup)?))
    } else if decl.name == SLOT.name {
        Ok(Box::new(Slot::start(setup)?))
    } else if decl.name == DICE.name {
        Ok(Box::new(Dice::start(setup)))
    } else {
        Err(format!("{} has no game app", decl.name))
    }
}

/// The game called `name`.
pub fn game(name: &str) -> Option<&'static GameKind> {
    GAMES.iter().find(|g| g.name == name)
}

/// The game tools (built once).
fn tools() -> &'static ToolRegistry {
    static TOOLS: OnceLock<ToolRegistry> = OnceLock::new();
    TOOLS.get_or_init(ToolRegistry::with_game_tools)
}

/// The answer of `game`'s `kind` tool, or its error text.
pub(crate) fn call(game: &GameDecl, kind: ToolKind, args: Value) -> Result<Value, String> {
    let out = tools()
        .call(&game.tool(kind), &args)
        .map_err(|e| e.to_string())?;
    if out.is_error || out.structured["legal"] == false {
        return Err(out.structured["error"]
            .as_str()
            .map_or_else(|| out.structured.to_string(), str::to_string));
    }
    Ok(out.structured)
}

/// `args` with `seed` when there is one.
pub(crate) fn seeded(mut args: Value, seed: Option<Value>) -> Value {
    if let Some(seed) = seed {
        args["seed"] = seed;
    }
    args
}

/// The fields of a game tool's snapshot the agent may see (not the state string, which holds
/// what is hidden), under `game`.
fn public_fields(game: &str, snapshot: &Value, fields: &[&str]) -> Value {
    let mut view = json!({"game": game});
    for field in fields {
        if let Some(value) = snapshot.get(*field) {
            view[*field] = value.clone();
        }
    }
    view
}

// -- Two-player board games ---------------------------------------------------------------------

/// The position between moves.
struct Position {
    /// The game tools' answer for it (a snapshot: position, status, turn, winner).
    snapshot: Value,
    /// The opponent's last moves, for the agent.
    opponent_moved: Vec<Value>,
}

/// A running board game.
struct BoardGame {
    game: &'static GameDecl,
    def: &'static BoardDecl,
    setup: GameSetup,
    /// The `turn` value of the agent's side ([`BoardDecl::sides`] at its seat).
    agent_side: &'static str,
    position: Mutex<Position>,
}

impl BoardGame {
    fn start(
        game: &'static GameDecl,
        def: &'static BoardDecl,
        setup: &GameSetup,
    ) -> Result<BoardGame, String> {
        let snapshot = call(game, ToolKind::New, seeded(json!({}), setup.seed.clone()))?;
        let board = BoardGame {
            game,
            def,
            setup: setup.clone(),
            agent_side: def.sides[setup.side.index()],
            position: Mutex::new(Position {
                snapshot: snapshot.clone(),
                opponent_moved: Vec::new(),
            }),
        };
        // The agent on the second side against the AI: the AI opens.
        {
            let mut position = board.position.lock();
            position.snapshot = board.ai_answers(&mut position, snapshot);
        }
        Ok(board)
    }

    /// The built-in AI's answer to `next`: as many moves as are its turn (mancala's extra
    /// turns; none against a human, or on the agent's turn), each noted in `opponent_moved`.
    fn ai_answers(&self, position: &mut Position, mut next: Value) -> Value {
        while self.setup.opponent == Opponent::Ai
            && !BoardGame::is_over(&next)
            && !self.agents_turn(&next)
        {
            let answered = self
                .suggest(&next, &self.setup.level)
                .and_then(|mv| self.apply(&next, &mv).map(|n| (mv, n)));
            match answered {
                Ok((mv, after)) => {
                    position
                        .opponent_moved
                        .push(after.get("lastAction").cloned().unwrap_or(mv));
                    next = after;
                }
                Err(e) => {
                    tracing::error!(game = self.game.name, "the AI could not move: {e}");
                    break;
                }
            }
        }
        next
    }

    fn position(&self, snapshot: &Value) -> Value {
        snapshot[self.def.position_field].clone()
    }

    /// The position as the agent may see it (without the [`BoardDecl::hidden`] parts).
    fn shown_position(&self, snapshot: &Value) -> Value {
        let position = self.position(snapshot);
        if self.def.hidden.is_empty() {
            return position;
        }
        let Some(text) = position.as_str() else {
            return position;
        };
        let kept: Vec<&str> = text
            .split('|')
            .filter(|part| {
                !self
                    .def
                    .hidden
                    .iter()
                    .any(|key| part.split_once(':').is_some_and(|(k, _)| k == *key))
            })
            .collect();
        json!(kept.join("|"))
    }

    fn is_over(snapshot: &Value) -> bool {
        snapshot["status"] == "game_over"
    }

    fn agents_turn(&self, snapshot: &Value) -> bool {
        !BoardGame::is_over(snapshot) && snapshot["turn"] == self.agent_side
    }

    fn winner(&self, snapshot: &Value) -> Option<&'static str> {
        let w = snapshot.get("winner")?.as_str()?;
        Some(match w {
            "draw" => "draw",
            w if w == self.agent_side => "you",
            _ => "opponent",
        })
    }

    fn view_of(&self, position: &Position) -> Value {
        let snapshot = &position.snapshot;
        let mut view = json!({
            "game": self.game.name,
            "position": self.shown_position(snapshot),
            "status": snapshot["status"],
            "turn": if BoardGame::is_over(snapshot) { "none" }
                    else if self.agents_turn(snapshot) { "you" } else { "opponent" },
            "opponent": self.setup.opponent,
        });
        if let Some(last) = snapshot
            .get("lastAction")
            .or_else(|| snapshot.get("lastMove"))
        {
            view["last_move"] = last.clone();
        }
        if !position.opponent_moved.is_empty() {
            view["opponent_moved"] = Value::Array(position.opponent_moved.clone());
        }
        if let Some(legal) = self.legal_moves(snapshot) {
            view["legal_moves"] = Value::Array(legal);
        }
        if let Some(winner) = self.winner(snapshot) {
            view["winner"] = json!(winner);
        }
        view
    }

    /// The agent's legal moves, on its turn (`None` on the opponent's, or when they cannot
    /// be listed).
    fn legal_moves(&self, snapshot: &Value) -> Option<Vec<Value>> {
        if !self.agents_turn(snapshot) {
            return None;
        }
        let legal = call(
            self.game,
            ToolKind::Legal,
            json!({self.def.position_field: self.position(snapshot)}),
        )
        .ok()?;
        legal[self.def.legal_field].as_array().cloned()
    }

    /// The `move` action's parameter schema. On the agent's turn its move is one of the legal
    /// moves (an `enum`, at most [`MAX_LISTED_MOVES`] of them): a model sees them in the tool
    /// definition, a grammar-constrained local model can produce no other, and a move outside
    /// the list is refused by the schema before the game sees it. The human's move keeps the
    /// game's own notation (any spelling the game reads), checked by the game.
    fn move_params(&self, snapshot: &Value) -> Value {
        let mut schema = (self.def.move_schema)();
        if let Some(legal) = self.legal_moves(snapshot)
            && !legal.is_empty()
            && legal.len() <= MAX_LISTED_MOVES
            && let Value::Object(o) = &mut schema
        {
            o.insert("enum".into(), Value::Array(legal));
        }
        json!({"type": "object",
            "properties": {self.def.move_arg: schema},
            "required": [self.def.move_arg], "additionalProperties": false})
    }

    fn actions_of(&self, snapshot: &Value) -> Vec<ActionDef> {
        if BoardGame::is_over(snapshot) {
            return Vec::new();
        }
        let params = self.move_params(snapshot);
        let mut play = ActionDef::new("move", self.def.move_description).with_params(params);
        if self.agents_turn(snapshot) {
            play.agent_only = true;
            play.due = true;
            let hint = ActionDef {
                agent_only: true,
                read_only: true,
                ..ActionDef::new(
                    "suggest_move",
                    "Ask the built-in AI which move it would play here (a hint; you choose).",
                )
            };
            vec![play, hint]
        } else if self.setup.opponent == Opponent::Human {
            play.human_only = true;
            vec![play]
        } else {
            Vec::new()
        }
    }

    /// The AI's pick for the side to move, seeded by the game's seed and the position: asked
    /// twice in one position it picks the same move, however often anyone asked before.
    fn suggest(&self, snapshot: &Value, level: &str) -> Result<Value, String> {
        let position = self.position(snapshot);
        let mut args = json!({self.def.position_field: position, "level": level});
        if let (Some(depth), "hard") = (self.def.hard_depth, level) {
            args[tools_games::common::DEPTH_ARG] = json!(depth);
        }
        let seed = self.setup.seed.as_ref().map(|seed| {
            let position = position
                .as_str()
                .map_or_else(|| position.to_string(), str::to_string);
            json!(format!("{seed}:{level}:{position}"))
        });
        Ok(call(self.game, ToolKind::Suggest, seeded(args, seed))?["move"].clone())
    }

    fn apply(&self, snapshot: &Value, mv: &Value) -> Result<Value, String> {
        call(
            self.game,
            ToolKind::Apply,
            json!({self.def.position_field: self.position(snapshot), self.def.move_arg: mv}),
        )
    }
}

impl Play for BoardGame {
    fn view(&self) -> Value {
        self.view_of(&self.position.lock())
    }

    fn actions(&self) -> Vec<ActionDef> {
        self.actions_of(&self.position.lock().snapshot)
    }

    fn handle(&self, request: &ActionRequest) -> ActionOutcome {
        let mut position = self.position.lock();
        let snapshot = position.snapshot.clone();
        match request.name.as_str() {
            "suggest_move" => match self.suggest(&snapshot, "hard") {
                Ok(mv) => ActionOutcome::ok(json!({"action": "move",
                    "params": {self.def.move_arg: mv}})),
                Err(e) => ActionOutcome::failed(e),
            },
            "move" => {
                let mine = match request.by {
                    Actor::Agent => self.agents_turn(&snapshot),
                    Actor::Human => !self.agents_turn(&snapshot) && !BoardGame::is_over(&snapshot),
                };
                if !mine {
                    return ActionOutcome::failed("it is not your turn");
                }
                let mv = &request.params[self.def.move_arg];
                let mut next = match self.apply(&snapshot, mv) {
                    Ok(next) => next,
                    Err(e) => return ActionOutcome::failed(e),
                };
                // What the move did (sea battle: `C7:hit`), before the AI answers.
                let moved = next.get("lastAction").cloned();
                position.opponent_moved.clear();
                // The AI answers at once.
                next = self.ai_answers(&mut position, next);
                position.snapshot = next.clone();
                let mut result = json!({"moved": mv, "opponent_moved": position.opponent_moved});
                if let Some(moved) = moved.filter(|m| m != mv) {
                    result["outcome"] = moved;
                }
                let mut outcome = ActionOutcome::ok(result)
                    .with_state(self.view_of(&position))
                    .with_actions(self.actions_of(&next));
                if BoardGame::is_over(&next) {
                    outcome = outcome.with_event(
                        "game_over",
                        json!({"winner": self.winner(&next).unwrap_or("none")}),
                    );
                }
                outcome
            }
            other => ActionOutcome::failed(format!("{other} is not an action of this game")),
        }
    }
}

// -- House games ------------------------------------------------------------------------------

/// A house game's winner as the agent's: `you`, `opponent` (the house) or `draw`.
fn house_winner(winner: &Value) -> &'static str {
    match winner.as_str() {
        Some("player") => "you",
        Some("draw") => "draw",
        _ => "opponent",
    }
}

/// An action with no parameters.
fn plain(name: &str, description: &str) -> ActionDef {
    ActionDef::new(name, description)
}

/// Blackjack against the dealer, round after round.
struct Blackjack {
    setup: GameSetup,
    /// The current round's snapshot (its `state` string stays here).
    round: Mutex<Value>,
    /// Rounds dealt so far (a seed for each).
    rounds: AtomicU64,
}

/// What each blackjack action does, for the model.
const BLACKJACK_ACTIONS: &[(&str, &str)] = &[
    ("hit", "Take another card for the hand in play."),
    ("stand", "Keep the hand in play as it is."),
    (
        "double",
        "Double the bet of the hand in play and take exactly one more card.",
    ),
    ("split", "Split a pair into two hands, each with the bet."),
];

/// The snapshot fields of a round the agent sees.
const BLACKJACK_FIELDS: &[&str] = &[
    "status",
    "handIndex",
    "stack",
    "bet",
    "hands",
    "dealerUpCard",
    "dealerHoleCardHidden",
    "dealerCards",
    "dealerTotal",
    "results",
    "net",
];

impl Blackjack {
    fn start(setup: &GameSetup) -> Result<Blackjack, String> {
        let game = Blackjack {
            setup: setup.clone(),
            round: Mutex::new(Value::Null),
            rounds: AtomicU64::new(0),
        };
        let round = game.deal(setup.stack, setup.bet)?;
        *game.round.lock() = round;
        Ok(game)
    }

    /// A new round from `stack` with `bet` (the tool's defaults when `None`).
    fn deal(&self, stack: Option<u64>, bet: Option<u64>) -> Result<Value, String> {
        let n = self.rounds.fetch_add(1, Ordering::Relaxed);
        let mut args = json!({});
        if let Some(stack) = stack {
            args["stack"] = json!(stack);
        }
        if let Some(bet) = bet {
            args["bet"] = json!(bet);
        }
        self.play_dealer(call(
            &BLACKJACK,
            ToolKind::New,
            seeded(args, self.setup.seed_for(n)),
        )?)
    }

    /// The dealer plays out its turn (a natural at the deal ends the round at once).
    fn play_dealer(&self, mut round: Value) -> Result<Value, String> {
        while round["status"] != "game_over" && round["turn"] == "dealer" {
            let choice = call(
                &BLACKJACK,
                ToolKind::Choose,
                json!({"state": round["state"]}),
            )?;
            let action = choice["actions"][0].clone();
            round = call(
                &BLACKJACK,
                ToolKind::Apply,
                json!({"state": round["state"], "action": action}),
            )?;
        }
        Ok(round)
    }

    fn is_over(round: &Value) -> bool {
        round["status"] == "game_over"
    }

    fn view_of(&self, round: &Value) -> Value {
        let mut view = public_fields(BLACKJACK.name, round, BLACKJACK_FIELDS);
        view["opponent"] = json!("house");
        view["turn"] = json!(if Blackjack::is_over(round) {
            "none"
        } else {
            "you"
        });
        if Blackjack::is_over(round) {
            view["winner"] = json!(house_winner(&round["winner"]));
        } else if let Ok(legal) = call(
            &BLACKJACK,
            ToolKind::Legal,
            json!({"state": round["state"]}),
        ) {
            view["legal_moves"] = legal["actions"].clone();
        }
        view
    }

    fn actions_of(&self, round: &Value) -> Vec<ActionDef> {
        if Blackjack::is_over(round) {
            if round["stack"].as_u64().unwrap_or(0) == 0 {
                return Vec::new();
            }
            return vec![plain(
                "deal",
                "Deal the next round with the same bet (or the whole stack when it is smaller).",
            )];
        }
        let legal = call(
            &BLACKJACK,
            ToolKind::Legal,
            json!({"state": round["state"]}),
        )
        .map(|l| l["actions"].clone())
        .unwrap_or_default();
        BLACKJACK_ACTIONS
            .iter()
            .filter(|(name, _)| {
                legal
                    .as_array()
                    .is_some_and(|l| l.iter().any(|a| a == name))
            })
            // Mid-round the hand waits for the agent: its play is due.
            .map(|(name, description)| ActionDef {
                due: true,
                ..plain(name, description)
            })
            .collect()
    }
}

impl Play for Blackjack {
    fn view(&self) -> Value {
        self.view_of(&self.round.lock())
    }

    fn hidden_state(&self) -> Option<String> {
        self.round.lock()["state"].as_str().map(str::to_string)
    }

    fn actions(&self) -> Vec<ActionDef> {
        self.actions_of(&self.round.lock())
    }

    fn handle(&self, request: &ActionRequest) -> ActionOutcome {
        let mut round = self.round.lock();
        let next = if request.name == "deal" {
            if !Blackjack::is_over(&round) {
                return ActionOutcome::failed("the round is still being played");
            }
            let stack = round["stack"].as_u64().unwrap_or(0);
            let bet = round["bet"].as_u64().unwrap_or(1).min(stack);
            self.deal(Some(stack), Some(bet))
        } else if Blackjack::is_over(&round) {
            return ActionOutcome::failed("the round is over: deal the next one");
        } else {
            call(
                &BLACKJACK,
                ToolKind::Apply,
                json!({"state": round["state"], "action": request.name}),
            )
            .and_then(|next| self.play_dealer(next))
        };
        let next = match next {
            Ok(next) => next,
            Err(e) => return ActionOutcome::failed(e),
        };
        *round = next.clone();
        let result = public_fields(
            BLACKJACK.name,
            &next,
            &[
                "lastAction",
                "status",
                "hands",
                "dealerCards",
                "net",
                "stack",
            ],
        );
        let mut outcome = ActionOutcome::ok(result)
            .with_state(self.view_of(&next))
            .with_actions(self.actions_of(&next));
        if Blackjack::is_over(&next) {
            outcome = outcome.with_event(
                "game_over",
                json!({"winner": house_winner(&next["winner"]), "net": next["net"],
                       "stack": next["stack"]}),
            );
        }
        outcome
    }
}

/// The slot machine, spin after spin.
struct Slot {
    setup: GameSetup,
    machine: Mutex<Value>,
    spins: AtomicU64,
}

const SLOT_FIELDS: &[&str] = &["stack", "bet", "reels", "payout", "status", "lastAction"];

impl Slot {
    fn start(setup: &GameSetup) -> Result<Slot, String> {
        let mut args = json!({});
        if let Some(stack) = setup.stack {
            args["stack"] = json!(stack);
        }
        if let Some(bet) = setup.bet {
            args["bet"] = json!(bet);
        }
        Ok(Slot {
            setup: setup.clone(),
            machine: Mutex::new(call(&SLOT, ToolKind::New, args)?),
            spins: AtomicU64::new(0),
        })
    }

    fn is_over(machine: &Value) -> bool {
        machine["status"] == "game_over"
    }

    fn view_of(machine: &Value) -> Value {
        let mut view = public_fields(SLOT.name, machine, SLOT_FIELDS);
        view["opponent"] = json!("house");
        view["turn"] = json!(if Slot::is_over(machine) {
            "none"
        } else {
            "you"
        });
        if Slot::is_over(machine) {
            view["winner"] = json!("opponent");
        }
        view
    }

    fn actions_of(machine: &Value) -> Vec<ActionDef> {
        if Slot::is_over(machine) {
            return Vec::new();
        }
        vec![plain(
            "spin",
            "Spin the reels for the bet: three of a kind pays (7 ×10, BAR ×8, BELL ×6, CHERRY ×4, \
             LEMON ×3, ORANGE ×2).",
        )]
    }
}

impl Play for Slot {
    fn view(&self) -> Value {
        Slot::view_of(&self.machine.lock())
    }

    fn actions(&self) -> Vec<ActionDef> {
        Slot::actions_of(&self.machine.lock())
    }

    fn handle(&self, request: &ActionRequest) -> ActionOutcome {
        if request.name != "spin" {
            return ActionOutcome::failed(format!(
                "{} is not an action of this game",
                request.name
            ));
        }
        let mut machine = self.machine.lock();
        let n = self.spins.fetch_add(1, Ordering::Relaxed);
        let args = seeded(json!({"state": machine["state"]}), self.setup.seed_for(n));
        let next = match call(&SLOT, ToolKind::Spin, args) {
            Ok(next) => next,
            Err(e) => return ActionOutcome::failed(e),
        };
        *machine = next.clone();
        let result = public_fields(SLOT.name, &next, &["reels", "payout", "stack"]);
        let mut outcome = ActionOutcome::ok(result)
            .with_state(Slot::view_of(&next))
            .with_actions(Slot::actions_of(&next));
        if Slot::is_over(&next) {
            outcome = outcome.with_event(
                "game_over",
                json!({"winner": "opponent", "stack": next["stack"]}),
            );
        }
        outcome
    }
}

/// A dice tray.
struct Dice {
    setup: GameSetup,
    last: Mutex<Option<Value>>,
    rolls: AtomicU64,
}

impl Dice {
    fn start(setup: &GameSetup) -> Dice {
        Dice {
            setup: setup.clone(),
            last: Mutex::new(None),
            rolls: AtomicU64::new(0),
        }
    }

    fn view_of(&self, last: &Option<Value>) -> Value {
        let mut view = json!({"game": DICE.name, "status": "in_progress", "turn": "you",
                              "rolls_made": self.rolls.load(Ordering::Relaxed)});
        if let Some(last) = last {
            let fields = ["sides", "count", "rolls", "total"];
            view["last_roll"] = fields
                .iter()
                .map(|f| (f.to_string(), last[*f].clone()))
                .collect();
        }
        view
    }
}

impl Play for Dice {
    fn view(&self) -> Value {
        self.view_of(&self.last.lock())
    }

    fn actions(&self) -> Vec<ActionDef> {
        let params = json!({"type": "object", "properties": {
                "sides": {"type": "integer", "enum": [4, 6, 8, 10, 12, 20, 100],
                          "description": "Faces per die."},
                "count": {"type": "integer", "minimum": 1, "maximum": 100,
                          "description": "How many dice."}},
            "required": ["sides", "count"], "additionalProperties": false});
        vec![ActionDef::new("roll", "Roll count dice with sides faces each.").with_params(params)]
    }

    fn handle(&self, request: &ActionRequest) -> ActionOutcome {
        if request.name != "roll" {
            return ActionOutcome::failed(format!(
                "{} is not an action of this game",
                request.name
            ));
        }
        let mut last = self.last.lock();
        let n = self.rolls.load(Ordering::Relaxed);
        let args = json!({"sides": request.params["sides"], "count": request.params["count"]});
        let rolled = match call(&DICE, ToolKind::Roll, seeded(args, self.setup.seed_for(n))) {
            Ok(rolled) => rolled,
            Err(e) => return ActionOutcome::failed(e),
        };
        self.rolls.fetch_add(1, Ordering::Relaxed);
        *last = Some(rolled.clone());
        ActionOutcome::ok(json!({"rolls": rolled["rolls"], "total": rolled["total"]}))
            .with_state(self.view_of(&last))
    }
}

// -- Setting up ---------------------------------------------------------------------------------

/// The config and handler of a game app: its first state and actions come from the game;
/// `human` opponents put it in `copilot` control mode. Errors name the field.
pub fn setup(mut config: AppConfig, setup: GameSetup) -> Result<(AppConfig, AppHandler), String> {
    let kind = game(&setup.name).ok_or_else(|| {
        format!(
            "game.name: '{}' is not a game app (use {})",
            setup.name,
            GAMES.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
        )
    })?;
    if !["random", "easy", "hard"].contains(&setup.level.as_str()) {
        return Err(format!(
            "game.level: '{}' is not a level (use random, easy, hard)",
            setup.level
        ));
    }
    if setup.opponent == Opponent::Human && !kind.human_opponent {
        return Err(format!(
            "game.opponent: {} is played against the {} only (use \"ai\"; the human can take \
             the agent's place with control_mode human or copilot)",
            kind.name,
            if kind.levels { "built-in AI" } else { "house" }
        ));
    }
    if setup.side == Seat::Second && !kind.second_side {
        return Err(if kind.levels {
            format!(
                "game.side: {} is played from the first side only (its state is written from \
                 the first side's view; use \"first\")",
                kind.name
            )
        } else {
            format!(
                "game.side: {} has no sides (it is played against the house; leave side out)",
                kind.name
            )
        });
    }
    if !kind.stakes && (setup.stack.is_some() || setup.bet.is_some()) {
        let field = if setup.stack.is_some() {
            "stack"
        } else {
            "bet"
        };
        return Err(format!(
            "game.{field}: {} is not played for chips (only {} are)",
            kind.name,
            GAMES
                .iter()
                .filter(|g| g.stakes)
                .map(|g| g.name)
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    let game: Arc<dyn Play> = Arc::from(kind.start(&setup).map_err(|e| format!("game: {e}"))?);
    config.state = game.view();
    config.actions = game.actions();
    if setup.opponent == Opponent::Human && config.control_mode == ControlMode::Agent {
        config.control_mode = ControlMode::Copilot;
    }
    if config.role_prompt.trim().is_empty() {
        config.role_prompt = match (kind.decl.board.is_some(), setup.opponent) {
            (true, Opponent::Ai) => format!(
                "You play {} against the built-in AI. Win if you can; play legal moves only.",
                kind.name.replace('_', "-")
            ),
            (true, Opponent::Human) => format!(
                "You play {} against the human. Win if you can; play legal moves only.",
                kind.name.replace('_', "-")
            ),
            (false, _) => format!(
                "You play {} against the house. Play the actions offered; mind your stack.",
                kind.name.replace('_', " ")
            ),
        };
    }
    let handler = AppHandler::local(move |request: ActionRequest| {
        let game = game.clone();
        async move {
            // The AIs search: off the async workers.
            tokio::task::spawn_blocking(move || game.handle(&request))
                .await
                .unwrap_or_else(|e| ActionOutcome::failed(format!("the game failed: {e}")))
        }
    });
    Ok((config, handler))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup_of(name: &str) -> GameSetup {
        GameSetup {
            name: name.into(),
            opponent: Opponent::Ai,
            level: default_level(),
            side: Seat::First,
            seed: Some(json!(1)),
            stack: None,
            bet: None,
        }
    }

    /// The game apps are the declared games, in their order: each board game is driven by its
    /// declaration alone, and each house game has its code here.
    #[test]
    fn every_declared_game_is_an_app_that_starts() {
        let names: Vec<&str> = GAMES.iter().map(|g| g.name).collect();
        let declared: Vec<&str> = tools_games::GAMES.iter().map(|g| g.name).collect();
        assert_eq!(names, declared);
        for kind in GAMES {
            assert_eq!(game(kind.name).map(|g| g.name), Some(kind.name));
            let play = kind
                .start(&setup_of(kind.name))
                .unwrap_or_else(|e| panic!("{}: {e}", kind.name));
            let view = play.view();
            assert_eq!(view["game"], kind.name);
            assert_eq!(view["turn"], "you", "{}: {view}", kind.name);
            let actions = play.actions();
            assert!(!actions.is_empty(), "{}", kind.name);
            if let Some(board) = kind.decl.board {
                assert!(view["legal_moves"].is_array(), "{}: {view}", kind.name);
                assert_eq!(actions[0].name, "move");
                assert_eq!(actions[0].params["required"], json!([board.move_arg]));
                assert_eq!(actions[0].description, board.move_description);
            }
        }
        assert!(game("go").is_none());
    }

    /// On the agent's turn the `move` action's schema lists its legal moves (the state's
    /// `legal_moves`), after every move too; a move outside the list fails the schema, the
    /// check every action goes through before the game sees it; a human's move keeps the
    /// game's own notation.
    #[test]
    fn the_agents_move_is_one_of_its_legal_moves() {
        for kind in GAMES {
            let Some(board) = kind.decl.board else {
                continue;
            };
            let play = kind.start(&setup_of(kind.name)).unwrap();
            for ply in 0..4 {
                let view = play.view();
                if view["turn"] != "you" {
                    break;
                }
                let actions = play.actions();
                let params = &actions[0].params;
                let listed = &params["properties"][board.move_arg]["enum"];
                assert_eq!(listed, &view["legal_moves"], "{} ply {ply}", kind.name);
                let moves = listed.as_array().unwrap();
                assert!(!moves.is_empty() && moves.len() <= MAX_LISTED_MOVES);
                let schema = jsonschema::validator_for(params).unwrap();
                for mv in moves {
                    assert!(schema.is_valid(&json!({board.move_arg: mv})), "{mv}");
                }
                let unlisted = (board.move_schema)();
                let outside = match unlisted["type"].as_str() {
                    Some("integer") => json!(99),
                    _ => json!("zz99"),
                };
                assert!(
                    !schema.is_valid(&json!({board.move_arg: outside})),
                    "{}: {outside} passes {params}",
                    kind.name
                );
                let out = play.handle(&ActionRequest {
                    app_id: "game".into(),
                    action_id: ply,
                    name: "move".into(),
                    params: json!({board.move_arg: moves[0]}),
                    by: Actor::Agent,
                });
                assert_eq!(out.error, None, "{}: {:?}", kind.name, out.result);
            }
            if !kind.human_opponent {
                continue;
            }
            let human = kind
                .start(&GameSetup {
                    opponent: Opponent::Human,
                    ..setup_of(kind.name)
                })
                .unwrap();
            let first = human.view()["legal_moves"][0].clone();
            let out = human.handle(&ActionRequest {
                app_id: "game".into(),
                action_id: 0,
                name: "move".into(),
                params: json!({board.move_arg: first}),
                by: Actor::Agent,
            });
            assert_eq!(out.error, None, "{}", kind.name);
            let actions = human.actions();
            assert!(actions[0].human_only, "{}: {actions:?}", kind.name);
            assert_eq!(
                actions[0].params["properties"][board.move_arg].get("enum"),
                None,
                "{}",
                kind.name
            );
        }
    }

    /// On the second side the opponent opens: against the AI the agent's first view already
    /// has the AI's move and is the agent's turn; against the human it is the human's turn.
    /// A game that cannot be played from the second side, and a house game, refuse the seat.
    #[test]
    fn the_agent_can_play_the_second_side() {
        for kind in GAMES {
            let Some(board) = kind.decl.board else {
                let refused = setup(
                    AppConfig::new("g"),
                    GameSetup {
                        side: Seat::Second,
                        ..setup_of(kind.name)
                    },
                )
                .err()
                .unwrap();
                assert!(refused.contains("has no sides"), "{refused}");
                continue;
            };
            let second = GameSetup {
                side: Seat::Second,
                ..setup_of(kind.name)
            };
            if !kind.second_side {
                let refused = setup(AppConfig::new("g"), second).err().unwrap();
                assert!(refused.starts_with("game.side: "), "{refused}");
                continue;
            }
            let play = kind.start(&second).unwrap();
            let view = play.view();
            assert_eq!(view["turn"], "you", "{}: {view}", kind.name);
            assert!(
                view["opponent_moved"][0].is_string() || view["opponent_moved"][0].is_number(),
                "{}: {view}",
                kind.name
            );
            let mv = view["legal_moves"][0].clone();
            let out = play.handle(&ActionRequest {
                app_id: "game".into(),
                action_id: 1,
                name: "move".into(),
                params: json!({board.move_arg: mv}),
                by: Actor::Agent,
            });
            assert_eq!(out.error, None, "{}: {:?}", kind.name, out.result);
            let human = kind
                .start(&GameSetup {
                    opponent: Opponent::Human,
                    ..second
                })
                .unwrap();
            assert_eq!(human.view()["turn"], "opponent", "{}", kind.name);
            assert!(human.actions()[0].human_only, "{}", kind.name);
        }
    }

    /// `game.name`'s description (in the published protocol schemas) names every game.
    #[test]
    fn the_setup_schema_names_every_game() {
        let schema = serde_json::to_value(schemars::schema_for!(GameSetup)).unwrap();
        let description = schema["properties"]["name"]["description"]
            .as_str()
            .unwrap();
        for kind in GAMES {
            assert!(
                description.contains(&format!("`{}`", kind.name)),
                "{description}"
            );
        }
    }

    /// Who may play the other side, what is played for chips and where `level` matters follow
    /// from the declarations.
    #[test]
    fn the_flags_follow_from_the_declarations() {
        let names = |keep: fn(&GameKind) -> bool| -> Vec<&str> {
            GAMES.iter().filter(|g| keep(g)).map(|g| g.name).collect()
        };
        assert_eq!(
            names(|g| g.human_opponent),
            [
                "chess",
                "checkers",
                "four_in_a_row",
                "tic_tac_toe",
                "mancala"
            ]
        );
        assert_eq!(names(|g| g.stakes), ["blackjack", "slot"]);
        assert_eq!(
            names(|g| g.levels),
            [
                "chess",
                "checkers",
                "four_in_a_row",
                "tic_tac_toe",
                "mancala",
                "sea_battle"
            ]
        );
    }
}
