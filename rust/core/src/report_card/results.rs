//! What a report card run came to, as `results.json` holds it: the card's metrics
//! ([`Metric`]), and per scenario what was said, asked and done ([`ScenarioResult`]).
//! docs/evaluation.md describes every field.

use serde::{Deserialize, Serialize};

use crate::eval::lines::{Line, LineReport};

/// The version of the `results.json` layout.
pub const CARD_VERSION: u32 = 1;

/// A report card run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CardResults {
    /// [`CARD_VERSION`].
    pub version: u32,
    /// The suite's name.
    pub suite: String,
    /// The brain measured (a profile or a registered brain).
    pub brain: String,
    /// The parts of the mind turned off (`memory`, `reflection`, `relationships`).
    pub without: Vec<String>,
    /// The run's seed.
    pub seed: u64,
    /// Game seconds per real second.
    pub time_scale: f64,
    /// When it started (UTC ISO-8601).
    pub started_at: String,
    /// How long it took, in milliseconds.
    pub elapsed_ms: u64,
    /// The card: every metric over every scenario.
    pub metrics: Vec<Metric>,
    /// Each scenario's record.
    pub scenarios: Vec<ScenarioResult>,
}

/// One metric of the card.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Its stable name (`memory`, `responsiveness`, …).
    pub key: String,
    /// What it is, for the reader.
    pub label: String,
    /// Its value (a share from 0 to 1, a count, milliseconds or tokens); `null` when there was
    /// nothing to measure (no memory question, no decision).
    pub value: Option<f64>,
    /// The unit: `share`, `count`, `ms`, `tokens`.
    pub unit: String,
    /// What the value is made of (`7 of 8 answers held the fact`).
    pub detail: String,
    /// The value it should reach, if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// Whether the value meets the target (`null` without a target or a value).
    pub passed: Option<bool>,
}

/// A metric's target: the value must be at least or at most this.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// The value must be at least this.
    AtLeast(f64),
    /// The value must be at most this.
    AtMost(f64),
}

impl Target {
    /// Whether `value` meets it.
    pub fn met_by(self, value: f64) -> bool {
        match self {
            Target::AtLeast(bar) => value >= bar,
            Target::AtMost(bar) => value <= bar,
        }
    }
}

/// One scenario's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// The scenario's name.
    pub name: String,
    /// Restarts played.
    pub restarts: u32,
    /// The player's id in [`ScenarioResult::lines`].
    pub player: String,
    /// Everything said, in order. A line the suite made an agent say has the speaker
    /// `<agent id>@suite`, so it is not counted as the agent's own.
    pub lines: Vec<Line>,
    /// Each agent's record.
    pub agents: Vec<AgentResult>,
    /// The player's questions of the suite, each judged.
    pub questions: Vec<QuestionResult>,
    /// The help requests of the suite, each judged.
    pub help: Vec<HelpResult>,
    /// The game master's turns, each judged.
    #[serde(default)]
    pub turns: Vec<TurnResult>,
}

/// A game-master turn, judged by the tool-call contract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnResult {
    /// What the player said.
    pub input: String,
    /// Answers sent back for repair.
    pub repairs: usize,
    /// Valid as first answered: no repair, no failed call, no dropped call.
    pub first_pass: bool,
    /// Valid after the repairs: no failed call, no dropped call.
    pub after_repair: bool,
    /// Why the turn failed or what its calls' failures were, when they did.
    pub failure: Option<String>,
    /// The dice rolled with the turn, each die's face in order (empty: none rolled).
    #[serde(default)]
    pub dice: Vec<u32>,
    /// Taken again from the campaign as it was before it, with its dice rolled again from
    /// their seed, the turn gave the same dice, answer and state.
    #[serde(default)]
    pub replays: bool,
    /// What differed when it was taken again (`None` when it replayed identically).
    #[serde(default)]
    pub replay_difference: Option<String>,
    /// The GM tools the suite expected the turn to apply (empty: no expectation).
    #[serde(default)]
    pub expected: Vec<String>,
    /// The GM tools the turn applied, in order.
    #[serde(default)]
    pub applied: Vec<String>,
}

impl TurnResult {
    /// Whether the turn applied every tool expected of it; `None` when nothing was expected.
    pub fn applied_expected(&self) -> Option<bool> {
        (!self.expected.is_empty())
            .then(|| self.expected.iter().all(|tool| self.applied.contains(tool)))
    }
}

/// One agent's record in a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    /// Its key in the suite.
    pub key: String,
    /// Its agent id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What its lines measure (repetition, echo, quotes of quotes, distinct-2, questions
    /// answered).
    pub lines: LineReport,
    /// Tasks it had (assigned by the suite or by another agent).
    pub tasks: usize,
    /// Of those, the ones it completed.
    pub tasks_completed: usize,
    /// Names in its lines (see [`super::metrics`]'s grounding).
    pub names: usize,
    /// Of those, the ones that exist in the world, its persona or its memories.
    pub grounded: usize,
    /// The names that do not, each with the line it is in.
    pub ungrounded: Vec<String>,
    /// Its decisions.
    pub decisions: Vec<DecisionCost>,
    /// Its calls that named something that does not exist, each as `tool: why`.
    pub nonexistent: Vec<String>,
}

/// What one decision cost.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionCost {
    /// Milliseconds its brain took.
    pub latency_ms: u64,
    /// Prompt and answer tokens the provider reported.
    pub tokens: u64,
}

/// A question of the suite, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionResult {
    /// The agent asked (its key).
    pub agent: String,
    /// The question.
    pub text: String,
    /// What it measures (`memory`, `persona`, `tool`, `responsiveness`).
    pub counts_for: String,
    /// Whether a restart came before it.
    pub after_restart: bool,
    /// What the answer had to hold.
    pub expect: Vec<String>,
    /// The agent's next line to the player after the question, if it said one.
    pub answer: Option<String>,
    /// Whether the answer holds every expected word or phrase.
    pub held: bool,
    /// Whether the answer names a content word of the question (as
    /// [`crate::eval::lines::answered_questions`] judges it).
    pub answered: bool,
    /// The read-only tool the question matches, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Whether the decision that answered called that tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_used: Option<bool>,
}

/// A help request of the suite, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HelpResult {
    /// Who asked (a key).
    pub from: String,
    /// Who was asked (a key).
    pub to: String,
    /// The request.
    pub text: String,
    /// What `to` said to `from` next, if anything.
    pub answer: Option<String>,
}
