//! Moves: who carries out an agent's `move`, and how a move the game carries out ends.
//!
//! An agent decides to move with the `move` world tool. What happens next depends on its
//! [`Movement`]:
//!
//! - [`Movement::Instant`] (the default, for headless worlds): the runtime owns the agent's
//!   position, checks the target against the world bounds and puts the agent there at once
//!   (`agent_moved`).
//! - [`Movement::Requested`] (a game that owns its world: physics, navigation, walls): the runtime
//!   checks the target the same way, then asks the game to carry the move out
//!   (`agent_move_requested {agent_id, move_id, from, to}`) and the agent goes on — it walks while
//!   it listens, talks and decides. The game moves its character (a `NavigationAgent2D`, a
//!   tween, a client's own physics), reports positions as they change, and finishes the move with
//!   its [`MoveOutcome`]: arrived, or blocked with a reason ("the door is locked"). The runtime
//!   publishes `agent_move_finished`, and the agent's next decision is told how it ended, as the
//!   move's result ([`MoveStatus`]).
//!
//! A move requested while another is under way replaces it: the game steers to the new target,
//! and the old move can no longer be finished (`unknown_move`). A move the game never finishes
//! stays under way until the next one; nothing times out on the runtime's side.

use serde::{Deserialize, Serialize};

use crate::geometry::Position;

/// Longest reason a blocked move may give, in characters.
pub const MAX_BLOCKED_REASON_CHARS: usize = 500;

crate::wire_enum! {
    /// Who carries out an agent's moves (wire form: `instant`, `requested`).
    #[derive(Default)]
    pub enum Movement: "movement" {
        /// The runtime puts the agent at its target at once (`agent_moved`).
        #[default]
        Instant = "instant",
        /// The game carries the move out and reports how it ended (`agent_move_requested`,
        /// `finish_move`).
        Requested = "requested",
    }
}

/// How a move the game carried out ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveOutcome {
    /// The character got there.
    Arrived,
    /// It could not get there, and why ("the door is locked", "no path to the target").
    Blocked(String),
}

impl MoveOutcome {
    /// Its kind, as the wire names it.
    pub fn end(&self) -> MoveEnd {
        match self {
            MoveOutcome::Arrived => MoveEnd::Arrived,
            MoveOutcome::Blocked(_) => MoveEnd::Blocked,
        }
    }

    /// The reason of a blocked move.
    pub fn reason(&self) -> Option<&str> {
        match self {
            MoveOutcome::Arrived => None,
            MoveOutcome::Blocked(reason) => Some(reason),
        }
    }

    /// The outcome from its wire form: `arrived`, or `blocked` with a reason (required, at most
    /// [`MAX_BLOCKED_REASON_CHARS`] characters; an arrival takes none).
    pub fn from_parts(end: MoveEnd, reason: Option<&str>) -> Result<MoveOutcome, String> {
        let reason = reason.map(str::trim).filter(|r| !r.is_empty());
        match (end, reason) {
            (MoveEnd::Arrived, None) => Ok(MoveOutcome::Arrived),
            (MoveEnd::Arrived, Some(_)) => {
                Err("an arrived move takes no reason (a blocked one does)".into())
            }
            (MoveEnd::Blocked, None) => Err(
                "a blocked move needs a reason (what is in the way: \"the door is locked\")".into(),
            ),
            (MoveEnd::Blocked, Some(reason)) => {
                let chars = reason.chars().count();
                if chars > MAX_BLOCKED_REASON_CHARS {
                    return Err(format!(
                        "reason is {chars} characters; the limit is {MAX_BLOCKED_REASON_CHARS}"
                    ));
                }
                Ok(MoveOutcome::Blocked(reason.to_string()))
            }
        }
    }
}

impl std::fmt::Display for MoveOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MoveOutcome::Arrived => f.write_str("arrived"),
            MoveOutcome::Blocked(reason) => write!(f, "blocked: {reason}"),
        }
    }
}

crate::wire_enum! {
    /// How a move ended, without the reason (wire form: `arrived`, `blocked`).
    pub enum MoveEnd: "move end" {
        /// The character got there.
        Arrived = "arrived",
        /// It could not get there (the event's `reason` says why).
        Blocked = "blocked",
    }
}

/// A move the game was asked to carry out.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRequest {
    /// Its number, counted per agent from 1.
    pub move_id: u64,
    /// Where the agent was when it decided to move.
    pub from: Position,
    /// Where it wants to go.
    pub to: Position,
}

/// An agent's latest move the game carries out, as its next decision is shown it: under way,
/// or how it ended (shown once, like an observation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveStatus {
    /// The move's number.
    pub move_id: u64,
    /// Its target.
    pub to: Position,
    /// `None` while under way.
    #[serde(skip)]
    pub outcome: Option<MoveOutcome>,
}

impl MoveStatus {
    /// The line a brain is shown: "You are walking to (3, 4).", "You arrived at (3, 4).",
    /// "You could not get to (3, 4): the door is locked."
    pub fn describe(&self) -> String {
        match &self.outcome {
            None => format!("You are walking to {}.", self.to),
            Some(MoveOutcome::Arrived) => format!("You arrived at {}.", self.to),
            Some(MoveOutcome::Blocked(reason)) => {
                format!("You could not get to {}: {reason}", self.to)
            }
        }
    }
}

/// One agent's moves the game carries out: the one under way, the last one that ended.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    issued: u64,
    under_way: Option<MoveRequest>,
    ended: Option<(MoveRequest, MoveOutcome)>,
}

/// Why a move could not be finished.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The agent never asked for a move with this number.
    #[error("{agent_id} has no move {move_id} (its last is move {last})")]
    Unknown {
        /// The agent.
        agent_id: String,
        /// The number given.
        move_id: u64,
        /// Its last move's number (0: none yet).
        last: u64,
    },
    /// The move was replaced by a newer one, or finished already.
    #[error("move {move_id} of {agent_id} is not under way: {why}")]
    NotUnderWay {
        /// The agent.
        agent_id: String,
        /// The number given.
        move_id: u64,
        /// "it was replaced by move 4", "it finished already".
        why: String,
    },
}

impl Walk {
    /// Starts a move (replacing one under way); returns it.
    pub(crate) fn begin(&mut self, from: Position, to: Position) -> MoveRequest {
        self.issued += 1;
        let request = MoveRequest {
            move_id: self.issued,
            from,
            to,
        };
        self.under_way = Some(request.clone());
        self.ended = None;
        request
    }

    /// Ends the move under way numbered `move_id` with `outcome`; returns it.
    pub(crate) fn end(
        &mut self,
        agent_id: &str,
        move_id: u64,
        outcome: MoveOutcome,
    ) -> Result<MoveRequest, MoveError> {
        match &self.under_way {
            Some(request) if request.move_id == move_id => {
                let request = self.under_way.take().expect("checked above");
                self.ended = Some((request.clone(), outcome));
                Ok(request)
            }
            _ if move_id == 0 || move_id > self.issued => Err(MoveError::Unknown {
                agent_id: agent_id.to_string(),
                move_id,
                last: self.issued,
            }),
            Some(newer) => Err(MoveError::NotUnderWay {
                agent_id: agent_id.to_string(),
                move_id,
                why: format!("it was replaced by move {}", newer.move_id),
            }),
            None => Err(MoveError::NotUnderWay {
                agent_id: agent_id.to_string(),
                move_id,
                why: if self
                    .ended
                    .as_ref()
                    .is_some_and(|(r, _)| r.move_id == move_id)
                {
                    "it finished already".into()
                } else {
                    format!("it was replaced by move {}", self.issued)
                },
            }),
        }
    }

    /// What a decision starting now is shown.
    pub(crate) fn status(&self) -> Option<MoveStatus> {
        if let Some(request) = &self.under_way {
            return Some(MoveStatus {
                move_id: request.move_id,
                to: request.to,
                outcome: None,
            });
        }
        self.ended.as_ref().map(|(request, outcome)| MoveStatus {
            move_id: request.move_id,
            to: request.to,
            outcome: Some(outcome.clone()),
        })
    }

    /// Forgets how move `move_id` ended once a decision was shown it.
    pub(crate) fn seen(&mut self, status: &MoveStatus) {
        if status.outcome.is_some()
            && self
                .ended
                .as_ref()
                .is_some_and(|(r, _)| r.move_id == status.move_id)
        {
            self.ended = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Position {
        Position::new(x, y)
    }

    #[test]
    fn a_move_ends_once_and_is_shown_until_seen() {
        let mut walk = Walk::default();
        assert_eq!(walk.status(), None);
        let first = walk.begin(p(0.0, 0.0), p(3.0, 4.0));
        assert_eq!(first.move_id, 1);
        assert_eq!(
            walk.status().unwrap().describe(),
            "You are walking to (3, 4)."
        );
        walk.end("a", 1, MoveOutcome::Blocked("the door is locked".into()))
            .unwrap();
        let status = walk.status().unwrap();
        assert_eq!(
            status.describe(),
            "You could not get to (3, 4): the door is locked"
        );
        assert_eq!(
            walk.end("a", 1, MoveOutcome::Arrived)
                .unwrap_err()
                .to_string(),
            "move 1 of a is not under way: it finished already"
        );
        walk.seen(&status);
        assert_eq!(walk.status(), None);
    }

    #[test]
    fn a_new_move_replaces_the_one_under_way() {
        let mut walk = Walk::default();
        walk.begin(p(0.0, 0.0), p(1.0, 0.0));
        walk.begin(p(0.5, 0.0), p(9.0, 0.0));
        assert_eq!(
            walk.end("a", 1, MoveOutcome::Arrived)
                .unwrap_err()
                .to_string(),
            "move 1 of a is not under way: it was replaced by move 2"
        );
        assert_eq!(
            walk.end("a", 7, MoveOutcome::Arrived)
                .unwrap_err()
                .to_string(),
            "a has no move 7 (its last is move 2)"
        );
        let status_before = walk.status().unwrap();
        walk.end("a", 2, MoveOutcome::Arrived).unwrap();
        // Seeing the walking status does not forget the arrival that came after it.
        walk.seen(&status_before);
        assert_eq!(walk.status().unwrap().describe(), "You arrived at (9, 0).");
    }

    #[test]
    fn outcomes_from_the_wire_need_a_reason_exactly_when_blocked() {
        assert_eq!(
            MoveOutcome::from_parts(MoveEnd::Arrived, None),
            Ok(MoveOutcome::Arrived)
        );
        assert_eq!(
            MoveOutcome::from_parts(MoveEnd::Blocked, Some("  a wall ")),
            Ok(MoveOutcome::Blocked("a wall".into()))
        );
        assert!(
            MoveOutcome::from_parts(MoveEnd::Blocked, Some("  "))
                .unwrap_err()
                .contains("needs a reason")
        );
        assert!(
            MoveOutcome::from_parts(MoveEnd::Arrived, Some("why"))
                .unwrap_err()
                .contains("takes no reason")
        );
        let long = "x".repeat(MAX_BLOCKED_REASON_CHARS + 1);
        assert!(
            MoveOutcome::from_parts(MoveEnd::Blocked, Some(&long))
                .unwrap_err()
                .contains("the limit is 500")
        );
    }
}
