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
//!   game names it: `coord`, `column`, `move`, `moveUci`, `pit`) and the read-only `suggest_move`
//!   (the built-in AI's pick at `hard`, a hint the agent may take or leave: the `scripted` brain
//!   plays through it); on a human opponent's turn `move` for the human only; none once the game
//!   is over.
//! - **Game over** sends the event `game_over` with `{winner}` and leaves the app with no actions.
//!
//! Sea battle is a board game too, played against the AI only: the agent sees its own board,
//! its shots and the opponent's shots, never the opponent's fleet (`position` is the state
//! string without its `O:` board; the AI shoots from its own fog board only).
//!
//! The house games have one player, the agent (or the human at the controls, in `human` and
//! `copilot` control mode), against the house; their state strings (the shoe, the hole card)
//! never reach the agent:
//! - **blackjack**: the actions are the legal ones (`hit`, `stand`, `double`, `split`); the dealer
//!   plays out at once; a settled round sends `game_over` with `{winner, net, stack}` and offers
//!   `deal` (the next round, the same bet) while chips are left. `stack` and `bet` set the stakes.
//! - **slot**: `spin` while the stack covers the bet; `game_over` when it does not.
//! - **rpg_dice**: `roll` with `sides` (4, 6, 8, 10, 12, 20, 100) and `count` (1–100); it never
//!   ends (a dice tray for a table game).
//!
//! Every random draw is seeded from `seed` (and the number of draws so far), so a seeded game
//! replays.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{ActionDef, ActionOutcome, ActionRequest, Actor, AppConfig, AppHandler, ControlMode};
use crate::tools::ToolRegistry;

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
    fn seed_for(&self, n: u64) -> Option<Value> {
        self.seed.as_ref().map(|seed| json!(format!("{seed}:{n}")))
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

/// One kind of game app.
pub struct GameKind {
    /// Its name (`tic_tac_toe`).
    pub name: &'static str,
    /// Whether the human may play the other side (`opponent: "human"`).
    pub human_opponent: bool,
    /// Whether it is played for chips (`stack`, `bet`).
    pub stakes: bool,
    /// Whether `level` means anything (an AI that chooses).
    pub levels: bool,
    rules: Rules,
}

/// Where a game's rules come from.
enum Rules {
    /// A two-player board game of the game tools.
    Board(&'static BoardDef),
    /// A house game, started by this.
    House(fn(&GameSetup) -> Result<Box<dyn Play>, String>),
}

impl GameKind {
    fn start(&self, setup: &GameSetup) -> Result<Box<dyn Play>, String> {
        match self.rules {
            Rules::Board(def) => Ok(Box::new(BoardGame::start(def, setup)?)),
            Rules::House(start) => start(setup),
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
trait Play: Send + Sync {
    /// The state the agent sees.
    fn view(&self) -> Value;
    /// The actions for now.
    fn actions(&self) -> Vec<ActionDef>;
    /// Handles one action.
    fn handle(&self, request: &ActionRequest) -> ActionOutcome;
}

/// The game apps.
pub const GAMES: &[GameKind] = &[
    board(&TIC_TAC_TOE, true),
    board(&FOUR_IN_A_ROW, true),
    board(&CHECKERS, true),
    board(&CHESS, true),
    board(&MANCALA, true),
    // Each side's fleet is hidden from the other: a human opponent would need a view of their
    // own that the app does not keep.
    board(&SEA_BATTLE, false),
    house("blackjack", true, |setup| {
        Ok(Box::new(Blackjack::start(setup)?))
    }),
    house("slot", true, |setup| Ok(Box::new(Slot::start(setup)?))),
    house("rpg_dice", false, |setup| Ok(Box::new(Dice::start(setup)))),
];

const fn board(def: &'static BoardDef, human_opponent: bool) -> GameKind {
    GameKind {
        name: def.name,
        human_opponent,
        stakes: false,
        levels: true,
        rules: Rules::Board(def),
    }
}

const fn house(
    name: &'static str,
    stakes: bool,
    start: fn(&GameSetup) -> Result<Box<dyn Play>, String>,
) -> GameKind {
    GameKind {
        name,
        human_opponent: false,
        stakes,
        levels: false,
        rules: Rules::House(start),
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

/// A game tool's answer, or its error text.
fn call(tool: &str, args: Value) -> Result<Value, String> {
    let out = tools().call(tool, &args).map_err(|e| e.to_string())?;
    if out.is_error || out.structured["legal"] == false {
        return Err(out.structured["error"]
            .as_str()
            .map_or_else(|| out.structured.to_string(), str::to_string));
    }
    Ok(out.structured)
}

/// `args` with `seed` when there is one.
fn seeded(mut args: Value, seed: Option<Value>) -> Value {
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

/// A two-player board game of the game tools.
#[derive(Debug)]
pub struct BoardDef {
    /// The game's name (`tic_tac_toe`).
    pub name: &'static str,
    /// `new_*`.
    pub new_tool: &'static str,
    /// `apply_*`.
    pub apply_tool: &'static str,
    /// `legal_*`.
    pub legal_tool: &'static str,
    /// `suggest_*`.
    pub suggest_tool: &'static str,
    /// The argument (and result field) holding the position: `state`, or `fen` in chess.
    pub position_field: &'static str,
    /// The move's argument: `coord`, `column`, `move`, `moveUci`, `pit`.
    pub move_arg: &'static str,
    /// The move argument's JSON Schema.
    pub move_schema: fn() -> Value,
    /// What the move is, for the model.
    pub move_description: &'static str,
    /// The legal-moves field of `legal_*`'s answer.
    pub legal_field: &'static str,
    /// The `turn` (and `winner`) value that is the agent's side.
    pub agent_side: &'static str,
    /// Parts of the state string (`|`-separated, by their `KEY:` prefix) the agent must not
    /// see: the opponent's fleet in sea battle.
    pub hidden: &'static [&'static str],
}

const TIC_TAC_TOE: BoardDef = BoardDef {
    name: "tic_tac_toe",
    new_tool: "new_tic_tac_toe_game",
    apply_tool: "apply_tic_tac_toe_move",
    legal_tool: "legal_tic_tac_toe_moves",
    suggest_tool: "suggest_tic_tac_toe_move",
    position_field: "state",
    move_arg: "coord",
    move_schema: || json!({"type": "string", "pattern": "^[A-Ca-c][1-3]$"}),
    move_description: "Place your mark: coord A1 to C3 (letter = column, digit = row).",
    legal_field: "moves",
    agent_side: "player",
    hidden: &[],
};

const FOUR_IN_A_ROW: BoardDef = BoardDef {
    name: "four_in_a_row",
    new_tool: "new_four_in_a_row_game",
    apply_tool: "apply_four_in_a_row_move",
    legal_tool: "legal_four_in_a_row_moves",
    suggest_tool: "suggest_four_in_a_row_move",
    position_field: "state",
    move_arg: "column",
    move_schema: || json!({"type": "integer", "minimum": 1, "maximum": 7}),
    move_description: "Drop your disc: column 1 (left) to 7 (right).",
    legal_field: "moves",
    agent_side: "player",
    hidden: &[],
};

const CHECKERS: BoardDef = BoardDef {
    name: "checkers",
    new_tool: "new_checkers_game",
    apply_tool: "apply_checkers_move",
    legal_tool: "legal_checkers_moves",
    suggest_tool: "suggest_checkers_move",
    position_field: "state",
    move_arg: "move",
    move_schema: || json!({"type": "string", "minLength": 4, "maxLength": 40}),
    move_description: "Move a piece (you play white, moving up): the squares visited, \
                       'c3d4' for a step, 'b6d4f2' for a double jump.",
    legal_field: "moves",
    agent_side: "w",
    hidden: &[],
};

const CHESS: BoardDef = BoardDef {
    name: "chess",
    new_tool: "new_chess_game",
    apply_tool: "apply_chess_move",
    legal_tool: "legal_chess_moves",
    suggest_tool: "suggest_chess_move",
    position_field: "fen",
    move_arg: "moveUci",
    move_schema: || json!({"type": "string", "minLength": 2, "maxLength": 10}),
    move_description: "Move (you play white): UCI such as e2e4 or e7e8q; SAN such as Nf3 \
                       works too.",
    legal_field: "movesUci",
    agent_side: "w",
    hidden: &[],
};

const MANCALA: BoardDef = BoardDef {
    name: "mancala",
    new_tool: "new_mancala_game",
    apply_tool: "apply_mancala_move",
    legal_tool: "legal_mancala_moves",
    suggest_tool: "suggest_mancala_move",
    position_field: "state",
    move_arg: "pit",
    move_schema: || json!({"type": "integer", "minimum": 1, "maximum": 6}),
    move_description: "Sow the seeds of one of your pits, 1 to 6.",
    legal_field: "moves",
    agent_side: "player",
    hidden: &[],
};

const SEA_BATTLE: BoardDef = BoardDef {
    name: "sea_battle",
    new_tool: "new_sea_battle_game",
    apply_tool: "apply_sea_battle_move",
    legal_tool: "legal_sea_battle_moves",
    suggest_tool: "suggest_sea_battle_move",
    position_field: "state",
    move_arg: "coord",
    move_schema: || json!({"type": "string", "pattern": "^[A-Ja-j]([1-9]|10)$"}),
    move_description: "Fire at a cell of the opponent's board: A1 to J10 (letter = column, \
                       number = row). In `position`, P is your board, F your shots at the \
                       opponent (hits and misses), OF the opponent's shots at you.",
    legal_field: "moves",
    agent_side: "player",
    hidden: &["O"],
};

/// The position between moves.
struct Position {
    /// The game tools' answer for it (a snapshot: position, status, turn, winner).
    snapshot: Value,
    /// The opponent's last moves, for the agent.
    opponent_moved: Vec<Value>,
}

/// A running board game.
struct BoardGame {
    def: &'static BoardDef,
    setup: GameSetup,
    position: Mutex<Position>,
    /// AI moves so far (a seed for each, so games replay).
    ai_moves: AtomicU64,
}

impl BoardGame {
    fn start(def: &'static BoardDef, setup: &GameSetup) -> Result<BoardGame, String> {
        let snapshot = call(def.new_tool, seeded(json!({}), setup.seed.clone()))?;
        Ok(BoardGame {
            def,
            setup: setup.clone(),
            position: Mutex::new(Position {
                snapshot,
                opponent_moved: Vec::new(),
            }),
            ai_moves: AtomicU64::new(0),
        })
    }

    fn position(&self, snapshot: &Value) -> Value {
        snapshot[self.def.position_field].clone()
    }

    /// The position as the agent may see it (without the [`BoardDef::hidden`] parts).
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
        !BoardGame::is_over(snapshot) && snapshot["turn"] == self.def.agent_side
    }

    fn winner(&self, snapshot: &Value) -> Option<&'static str> {
        let w = snapshot.get("winner")?.as_str()?;
        Some(match w {
            "draw" => "draw",
            w if w == self.def.agent_side => "you",
            _ => "opponent",
        })
    }

    fn view_of(&self, position: &Position) -> Value {
        let snapshot = &position.snapshot;
        let mut view = json!({
            "game": self.def.name,
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
        if self.agents_turn(snapshot)
            && let Ok(legal) = call(
                self.def.legal_tool,
                json!({self.def.position_field: self.position(snapshot)}),
            )
        {
            view["legal_moves"] = legal[self.def.legal_field].clone();
        }
        if let Some(winner) = self.winner(snapshot) {
            view["winner"] = json!(winner);
        }
        view
    }

    fn actions_of(&self, snapshot: &Value) -> Vec<ActionDef> {
        if BoardGame::is_over(snapshot) {
            return Vec::new();
        }
        let params = json!({"type": "object",
            "properties": {self.def.move_arg: (self.def.move_schema)()},
            "required": [self.def.move_arg], "additionalProperties": false});
        let mut play = ActionDef::new("move", self.def.move_description).with_params(params);
        if self.agents_turn(snapshot) {
            play.agent_only = true;
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

    /// The AI's pick for the side to move.
    fn suggest(&self, snapshot: &Value, level: &str) -> Result<Value, String> {
        let n = self.ai_moves.fetch_add(1, Ordering::Relaxed);
        let args = json!({self.def.position_field: self.position(snapshot), "level": level});
        Ok(call(self.def.suggest_tool, seeded(args, self.setup.seed_for(n)))?["move"].clone())
    }

    fn apply(&self, snapshot: &Value, mv: &Value) -> Result<Value, String> {
        call(
            self.def.apply_tool,
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
                // The AI answers at once, as many moves as are its turn (mancala's extra turns).
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
                            tracing::error!(game = self.def.name, "the AI could not move: {e}");
                            break;
                        }
                    }
                }
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
            "new_blackjack_game",
            seeded(args, self.setup.seed_for(n)),
        )?)
    }

    /// The dealer plays out its turn (a natural at the deal ends the round at once).
    fn play_dealer(&self, mut round: Value) -> Result<Value, String> {
        while round["status"] != "game_over" && round["turn"] == "dealer" {
            let choice = call(
                "choose_blackjack_dealer_action",
                json!({"state": round["state"]}),
            )?;
            let action = choice["actions"][0].clone();
            round = call(
                "apply_blackjack_action",
                json!({"state": round["state"], "action": action}),
            )?;
        }
        Ok(round)
    }

    fn is_over(round: &Value) -> bool {
        round["status"] == "game_over"
    }

    fn view_of(&self, round: &Value) -> Value {
        let mut view = public_fields("blackjack", round, BLACKJACK_FIELDS);
        view["opponent"] = json!("house");
        view["turn"] = json!(if Blackjack::is_over(round) {
            "none"
        } else {
            "you"
        });
        if Blackjack::is_over(round) {
            view["winner"] = json!(house_winner(&round["winner"]));
        } else if let Ok(legal) = call("legal_blackjack_actions", json!({"state": round["state"]}))
        {
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
        let legal = call("legal_blackjack_actions", json!({"state": round["state"]}))
            .map(|l| l["actions"].clone())
            .unwrap_or_default();
        BLACKJACK_ACTIONS
            .iter()
            .filter(|(name, _)| {
                legal
                    .as_array()
                    .is_some_and(|l| l.iter().any(|a| a == name))
            })
            .map(|(name, description)| plain(name, description))
            .collect()
    }
}

impl Play for Blackjack {
    fn view(&self) -> Value {
        self.view_of(&self.round.lock())
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
                "apply_blackjack_action",
                json!({"state": round["state"], "action": request.name}),
            )
            .and_then(|next| self.play_dealer(next))
        };
        let next = match next {
            Ok(next) => next,
            Err(e) => return ActionOutcome::failed(e),
        };
        *round = next.clone();
        let result = public_fields("blackjack", &next, &["lastAction", "hands", "dealerCards"]);
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
            machine: Mutex::new(call("new_slot_game", args)?),
            spins: AtomicU64::new(0),
        })
    }

    fn is_over(machine: &Value) -> bool {
        machine["status"] == "game_over"
    }

    fn view_of(machine: &Value) -> Value {
        let mut view = public_fields("slot", machine, SLOT_FIELDS);
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
        let next = match call("spin_slot", args) {
            Ok(next) => next,
            Err(e) => return ActionOutcome::failed(e),
        };
        *machine = next.clone();
        let result = public_fields("slot", &next, &["reels", "payout", "stack"]);
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
        let mut view = json!({"game": "rpg_dice", "status": "in_progress", "turn": "you",
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
        let rolled = match call("roll_rpg_dice", seeded(args, self.setup.seed_for(n))) {
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
        config.role_prompt = match (matches!(kind.rules, Rules::Board(_)), setup.opponent) {
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
