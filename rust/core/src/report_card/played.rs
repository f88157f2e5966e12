//! What playing one scenario collected ([`Played`]): the runner fills it, the metrics judge
//! it.

use std::collections::BTreeMap;

use super::suite::{Ask, Say};
use crate::eval::lines::Line;
use crate::runtime::Decision;

/// What a line the suite makes an agent say is recorded as: `<agent id>@suite`.
pub fn suite_speaker(agent_id: &str) -> String {
    format!("{agent_id}@suite")
}

/// What one scenario's play collected, for the metrics to judge.
#[derive(Debug, Default)]
pub struct Played {
    /// The player's id.
    pub player: String,
    /// Everything said, in order (the suite's agent lines as [`suite_speaker`]).
    pub lines: Vec<Line>,
    /// The agents' ids, by key.
    pub ids: BTreeMap<String, String>,
    /// Every decision of every agent, by agent id, in order.
    pub decisions: BTreeMap<String, Vec<Decision>>,
    /// Each agent's tasks at the end, as (had, completed), by agent id.
    pub tasks: BTreeMap<String, (usize, usize)>,
    /// The questions asked: the step, whether a restart came before, and how many lines were
    /// said before it was sent.
    pub asked: Vec<(Ask, bool, usize)>,
    /// The help requests: the step and how many lines were said before it was sent.
    pub helped: Vec<(Say, usize)>,
    /// Restarts played.
    pub restarts: u32,
    /// The game master's turns.
    pub turns: Vec<super::results::TurnResult>,
}
