//! A brain at the table: an agent attached to its own game app, and what its decisions cost.
//!
//! The seat registers the game app (the built-in game app a game would register: actions as
//! tools, the state as the app sends it, refusals as the app answers them), spawns the agent
//! into it, and listens to the app: each of the agent's handled plays is a move. What the
//! decisions cost — tokens, repairs, lines said, and the illegal attempts (a play the contract
//! check refused, such as a move outside the listed legal moves, or one the game refused) —
//! is read from the agent's decision journal and given to the move the decision made; a
//! decision that made no move carries its costs to the next one.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::apps::{ActionRecord, Actor, AppConfig, AppHandler, AppOutbound};
use crate::brain::BrainChoice;
use crate::contract::CallOutcome;
use crate::runtime::{AgentConfig, Decision, Runtime};

/// What a player's decisions cost on the way to one move.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Cost {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub repairs: u32,
    /// Illegal attempts, each `move: why`.
    pub illegal: Vec<String>,
    /// Lines said.
    pub text: Vec<String>,
}

impl Cost {
    fn add(&mut self, decision: &Decision, plays: &[&str]) {
        self.input_tokens += decision.input_tokens;
        self.output_tokens += decision.output_tokens;
        self.repairs += decision.repairs;
        self.text.extend(decision.spoken.iter().cloned());
        let failed = decision
            .calls
            .iter()
            .filter(|c| c.outcome != CallOutcome::Done)
            .chain(&decision.rejected);
        for call in failed.filter(|c| plays.contains(&c.tool.as_str())) {
            let why = call.detail.as_deref().unwrap_or("refused");
            self.illegal.push(format!("{}: {why}", compact(&call.args)));
        }
    }
}

/// Arguments as a short text (`{"coord":"Z9"}` → `Z9` when there is one value).
fn compact(args: &Value) -> String {
    match args {
        Value::Object(o) if o.len() == 1 => match o.values().next() {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        other => other.to_string(),
    }
}

/// Spot `n` of the world's bounds: a thousandth of a unit apart along the bottom edge, so no
/// two players of a tournament stand on one point (and none hears another).
fn spot(runtime: &Runtime, n: u64) -> crate::geometry::Position {
    let bounds = &runtime.options().bounds;
    let width = (bounds.max_x - bounds.min_x).max(0.0);
    crate::geometry::Position {
        x: bounds.min_x + (n as f64 / 1000.0).min(width),
        y: bounds.min_y,
    }
}

/// What waiting for a brain's play came to.
pub(super) enum Waited {
    /// It played: the action's record.
    Played(Box<ActionRecord>),
    /// Its illegal attempts reached the limit.
    Forfeit(String),
    /// No play within the time per move.
    Time,
    /// It cannot play any more (its app or agent is gone).
    Gone(String),
}

/// What a seat is made of.
pub(super) struct SeatSpec<'a> {
    /// The app's id (unique in the runtime).
    pub app_id: String,
    /// The app's `game` object.
    pub setup: Value,
    /// The player's part, as the app's role prompt (empty: the game app's own).
    pub role: String,
    /// The brain (its agent is named after it).
    pub brain: &'a str,
    /// The agent's seed.
    pub seed: String,
    /// Its spot in the world, unique in the tournament.
    pub spot_number: u64,
    /// The plays that count as moves.
    pub plays: &'static [&'static str],
}

/// A brain's seat: its app, its agent, and the accounting of its decisions.
pub(super) struct BrainSeat {
    pub app_id: String,
    pub agent_id: String,
    /// The app's first state, as the agent found it.
    pub start: Value,
    outbound: UnboundedReceiver<AppOutbound>,
    /// The plays that count as moves (`move`; `hit`, `stand`, …).
    plays: &'static [&'static str],
    /// The newest decision read from the journal.
    seen: u64,
    /// Costs of decisions that made no move yet.
    carry: Cost,
    /// Costs of decisions that made a move, waiting for that move's record.
    decided: VecDeque<Cost>,
    /// Moves made whose costs are not known yet (indices into the game's moves).
    made: VecDeque<usize>,
    /// Illegal attempts in this game so far.
    pub illegal: u32,
}

impl BrainSeat {
    /// Registers the seat's game app and spawns its brain's agent into it.
    pub fn open(runtime: &Runtime, seat: SeatSpec<'_>) -> Result<BrainSeat, String> {
        let SeatSpec {
            app_id,
            setup,
            role,
            brain,
            seed,
            spot_number,
            plays,
        } = seat;
        let mut config: AppConfig =
            serde_json::from_value(json!({"app_id": app_id, "game": setup, "role_prompt": role}))
                .map_err(|e| format!("the game app: {e}"))?;
        config.world_tools = false;
        let outbound = runtime
            .register_app(config, AppHandler::Remote)
            .map_err(|e| format!("the game app: {e}"))?;
        // The state before the agent is there to play.
        let start = runtime
            .app_session(&app_id)
            .map(|s| s.state)
            .map_err(|e| format!("the game app: {e}"))?;
        let agent = AgentConfig {
            name: brain.to_string(),
            role: "player".into(),
            brain: Some(BrainChoice::named(brain)),
            app_id: Some(app_id.clone()),
            seed: Some(json!(seed)),
            // It plays when its app wakes it, never idly; the arena measures the brain, not
            // the scripted brain's pretend thinking time.
            idle_think_seconds: Some(crate::limits::MAX_IDLE_THINK_SECONDS),
            thinking_seconds: Some(0.0),
            speaking_seconds: Some(0.0),
            // Players do not overhear each other (two brains would chat instead of playing):
            // each stands on a spot of its own and hears nothing farther than where it stands.
            hearing_radius: Some(0.0),
            initial_position: Some(spot(runtime, spot_number)),
            // It remembers and recalls as any agent, but spends no model call away from the
            // board: no reflections, no second rating of its memories' importance.
            memory: Some(crate::mind::MemorySettings {
                reflection_threshold: 0,
                importance_batch: 0,
                ..runtime.options().memory.clone()
            }),
            ..AgentConfig::default()
        };
        let agent_id = match runtime.spawn(agent) {
            Ok(id) => id,
            Err(e) => {
                let _ = runtime.unregister_app(&app_id);
                return Err(format!("brain '{brain}': {e}"));
            }
        };
        Ok(BrainSeat {
            app_id,
            agent_id,
            start,
            outbound,
            plays,
            seen: 0,
            carry: Cost::default(),
            decided: VecDeque::new(),
            made: VecDeque::new(),
            illegal: 0,
        })
    }

    /// Waits for the agent's next handled play, reading its journal meanwhile; gives up at
    /// `limit` illegal attempts (0: never) or after `timeout`.
    pub async fn next_play(
        &mut self,
        runtime: &Runtime,
        timeout: Duration,
        limit: u32,
        costs: &mut [super::results::MoveRecord],
    ) -> Waited {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            self.read_journal(runtime, costs);
            if limit > 0 && self.illegal >= limit {
                return Waited::Forfeit(format!("{} illegal attempts", self.illegal));
            }
            tokio::select! {
                message = self.outbound.recv() => match message {
                    Some(AppOutbound::Recorded(record))
                        if record.by == Actor::Agent
                            && record.ok
                            && self.plays.contains(&record.name.as_str()) =>
                    {
                        return Waited::Played(Box::new(record));
                    }
                    Some(AppOutbound::Detached { reason, .. }) => {
                        return Waited::Gone(format!("the agent left the game ({reason})"));
                    }
                    Some(_) => {}
                    None => return Waited::Gone("the game app is gone".into()),
                },
                _ = tick.tick() => {}
                _ = tokio::time::sleep_until(deadline) => return Waited::Time,
            }
        }
    }

    /// Notes that move `index` of the game is this seat's (its costs follow from the journal).
    pub fn moved(&mut self, index: usize, costs: &mut [super::results::MoveRecord]) {
        self.made.push_back(index);
        self.settle(costs);
    }

    /// Reads the decisions the journal has added, and gives each move its costs.
    pub fn read_journal(&mut self, runtime: &Runtime, costs: &mut [super::results::MoveRecord]) {
        let Ok(decisions) = runtime.recent_decisions(&self.agent_id) else {
            return;
        };
        let seen = self.seen;
        for decision in decisions.iter().filter(|d| d.number > seen) {
            self.seen = decision.number;
            let before = self.carry.illegal.len();
            self.carry.add(decision, self.plays);
            self.illegal += u32::try_from(self.carry.illegal.len() - before).unwrap_or(u32::MAX);
            let played = decision
                .calls
                .iter()
                .any(|c| c.outcome == CallOutcome::Done && self.plays.contains(&c.tool.as_str()));
            if played {
                self.decided.push_back(std::mem::take(&mut self.carry));
            }
        }
        self.settle(costs);
    }

    /// Waits (at most `wait`) for the journal to hold the decisions of every move made, so the
    /// last move gets its costs; returns what no move took (a forfeit's attempts).
    pub async fn finish(
        &mut self,
        runtime: &Runtime,
        wait: Duration,
        costs: &mut [super::results::MoveRecord],
    ) -> Cost {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            self.read_journal(runtime, costs);
            if self.made.is_empty() || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut rest = std::mem::take(&mut self.carry);
        for cost in self.decided.drain(..) {
            rest.input_tokens += cost.input_tokens;
            rest.output_tokens += cost.output_tokens;
            rest.repairs += cost.repairs;
            rest.illegal.extend(cost.illegal);
            rest.text.extend(cost.text);
        }
        rest
    }

    /// Stops the agent and removes the app.
    pub fn close(self, runtime: &Runtime) {
        let _ = runtime.terminate(&self.agent_id);
        let _ = runtime.unregister_app(&self.app_id);
    }

    fn settle(&mut self, costs: &mut [super::results::MoveRecord]) {
        while !self.made.is_empty() && !self.decided.is_empty() {
            let (Some(index), Some(cost)) = (self.made.pop_front(), self.decided.pop_front())
            else {
                break;
            };
            if let Some(record) = costs.get_mut(index) {
                record.input_tokens += cost.input_tokens;
                record.output_tokens += cost.output_tokens;
                record.repairs += cost.repairs;
                record.illegal.extend(cost.illegal);
                record.text = join(&record.text, &cost.text);
            }
        }
    }
}

/// `old` and the `lines` after it, one per line.
pub(super) fn join(old: &str, lines: &[String]) -> String {
    let mut all: Vec<&str> = Vec::new();
    if !old.is_empty() {
        all.push(old);
    }
    all.extend(lines.iter().map(String::as_str));
    all.join("\n")
}
