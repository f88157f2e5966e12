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
//! Five games have no hidden information and two sides, and are apps: chess, checkers,
//! four-in-a-row, tic-tac-toe, mancala. Sea battle and blackjack hide state from the player
//! (the fleet, the shoe) that their state strings carry, and the slot machine and the dice have
//! no opponent; they stay tools ([`crate::tools`]).

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
    /// The game: `chess`, `checkers`, `four_in_a_row`, `tic_tac_toe`, `mancala`.
    pub name: String,
    /// Who plays the other side: `ai` (the built-in AI, default) or `human`.
    #[serde(default)]
    pub opponent: Opponent,
    /// The AI's strength: `random`, `easy` (default), `hard`.
    #[serde(default = "default_level")]
    pub level: String,
    /// Seeds the game and the AI (the same seed, the same game).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<Value>,
}

fn default_level() -> String {
    "easy".into()
}

/// Who plays against the agent.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Opponent {
    /// The built-in AI (`suggest_*`).
    #[default]
    Ai,
    /// The human, through `app_human_action` (the app is put in `copilot` control mode).
    Human,
}

/// One game as an app: its tools and how to read them.
#[derive(Clone, Copy, Debug)]
pub struct GameDef {
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
}

/// The games that are apps.
pub const GAMES: &[GameDef] = &[
    GameDef {
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
    },
    GameDef {
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
    },
    GameDef {
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
    },
    GameDef {
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
    },
    GameDef {
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
    },
];

/// The game called `name`.
pub fn game(name: &str) -> Option<&'static GameDef> {
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

/// The position between moves.
struct Position {
    /// The game tools' answer for it (a snapshot: position, status, turn, winner).
    snapshot: Value,
    /// The opponent's last moves, for the agent.
    opponent_moved: Vec<Value>,
}

/// A running game app.
struct Game {
    def: &'static GameDef,
    setup: GameSetup,
    position: Mutex<Position>,
    /// AI moves so far (a seed for each, so games replay).
    ai_moves: std::sync::atomic::AtomicU64,
}

impl Game {
    fn position(&self, snapshot: &Value) -> Value {
        snapshot[self.def.position_field].clone()
    }

    fn is_over(snapshot: &Value) -> bool {
        snapshot["status"] == "game_over"
    }

    fn agents_turn(&self, snapshot: &Value) -> bool {
        !Game::is_over(snapshot) && snapshot["turn"] == self.def.agent_side
    }

    fn winner(&self, snapshot: &Value) -> Option<&'static str> {
        let w = snapshot.get("winner")?.as_str()?;
        Some(match w {
            "draw" => "draw",
            w if w == self.def.agent_side => "you",
            _ => "opponent",
        })
    }

    /// What the agent sees.
    fn view(&self, position: &Position) -> Value {
        let snapshot = &position.snapshot;
        let mut view = json!({
            "game": self.def.name,
            "position": self.position(snapshot),
            "status": snapshot["status"],
            "turn": if Game::is_over(snapshot) { "none" }
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

    /// The actions for whoever's turn it is.
    fn actions(&self, snapshot: &Value) -> Vec<ActionDef> {
        if Game::is_over(snapshot) {
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
        let n = self
            .ai_moves
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut args = json!({self.def.position_field: self.position(snapshot), "level": level});
        if let Some(seed) = &self.setup.seed {
            args["seed"] = json!(format!("{seed}:{n}"));
        }
        Ok(call(self.def.suggest_tool, args)?["move"].clone())
    }

    fn apply(&self, snapshot: &Value, mv: &Value) -> Result<Value, String> {
        call(
            self.def.apply_tool,
            json!({self.def.position_field: self.position(snapshot), self.def.move_arg: mv}),
        )
    }

    /// Handles one action.
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
                    Actor::Human => !self.agents_turn(&snapshot) && !Game::is_over(&snapshot),
                };
                if !mine {
                    return ActionOutcome::failed("it is not your turn");
                }
                let mv = &request.params[self.def.move_arg];
                let mut next = match self.apply(&snapshot, mv) {
                    Ok(next) => next,
                    Err(e) => return ActionOutcome::failed(e),
                };
                position.opponent_moved.clear();
                // The AI answers at once, as many moves as are its turn (mancala's extra turns).
                while self.setup.opponent == Opponent::Ai
                    && !Game::is_over(&next)
                    && !self.agents_turn(&next)
                {
                    let answered = self
                        .suggest(&next, &self.setup.level)
                        .and_then(|mv| self.apply(&next, &mv).map(|n| (mv, n)));
                    match answered {
                        Ok((mv, after)) => {
                            position.opponent_moved.push(mv);
                            next = after;
                        }
                        Err(e) => {
                            tracing::error!(game = self.def.name, "the AI could not move: {e}");
                            break;
                        }
                    }
                }
                position.snapshot = next.clone();
                let mut outcome = ActionOutcome::ok(json!({"moved": mv,
                    "opponent_moved": position.opponent_moved}))
                .with_state(self.view(&position))
                .with_actions(self.actions(&next));
                if Game::is_over(&next) {
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

/// The config and handler of a game app: its first state and actions come from `new_*`;
/// `human` opponents put it in `copilot` control mode. Errors name the field.
pub fn setup(mut config: AppConfig, setup: GameSetup) -> Result<(AppConfig, AppHandler), String> {
    let def = game(&setup.name).ok_or_else(|| {
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
    let mut args = json!({});
    if let Some(seed) = &setup.seed {
        args["seed"] = seed.clone();
    }
    let snapshot = call(def.new_tool, args).map_err(|e| format!("game: {e}"))?;
    let game = Game {
        def,
        setup: setup.clone(),
        position: Mutex::new(Position {
            snapshot,
            opponent_moved: Vec::new(),
        }),
        ai_moves: Default::default(),
    };
    {
        let position = game.position.lock();
        config.state = game.view(&position);
        config.actions = game.actions(&position.snapshot);
    }
    if setup.opponent == Opponent::Human && config.control_mode == ControlMode::Agent {
        config.control_mode = ControlMode::Copilot;
    }
    if config.role_prompt.trim().is_empty() {
        config.role_prompt = format!(
            "You play {} against {}. Win if you can; play legal moves only.",
            def.name.replace('_', "-"),
            match setup.opponent {
                Opponent::Ai => "the built-in AI",
                Opponent::Human => "the human",
            }
        );
    }
    let game = Arc::new(game);
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
