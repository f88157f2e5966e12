//! The agent state machine: `idle → listening → thinking → speaking → idle`, plus
//! `idle → thinking` (an autonomous decision), `thinking → idle` (a decision without speech) and
//! `thinking → listening` (a message interrupts the decision). Every other pair is refused.

crate::wire_enum! {
    /// What an agent is doing. The wire form (`Display`/`FromStr`, serde) is lower case:
    /// `idle`, `listening`, `thinking`, `speaking`.
    pub enum AgentState: "agent state" {
        /// Waiting: for a message, or for its idle timer to start a decision.
        Idle = "idle",
        /// Taking in one or more messages; each is acknowledged (recorded) here.
        Listening = "listening",
        /// Asking its brain what to do and executing the answer's actions.
        Thinking = "thinking",
        /// Saying something; other actions are refused until it is idle again.
        Speaking = "speaking",
    }
}

impl AgentState {
    /// Whether `self → to` is one of the seven allowed transitions.
    pub fn can_transition_to(self, to: AgentState) -> bool {
        use AgentState::*;
        matches!(
            (self, to),
            (Idle, Listening)
                | (Listening, Thinking)
                | (Thinking, Speaking)
                | (Speaking, Idle)
                | (Idle, Thinking)
                | (Thinking, Idle)
                | (Thinking, Listening)
        )
    }

    /// The transition `self → to`, or the refusal (the state stays `self`).
    pub fn transition_to(self, to: AgentState) -> Result<AgentState, TransitionError> {
        if self.can_transition_to(to) {
            Ok(to)
        } else {
            Err(TransitionError { from: self, to })
        }
    }
}

/// A state string that is not one of `idle`, `listening`, `thinking`, `speaking`.
pub type ParseStateError = crate::wire::UnknownName;

/// A refused transition: the agent stays in `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("transition {from} -> {to} is not allowed")]
pub struct TransitionError {
    /// The state the agent is in (and stays in).
    pub from: AgentState,
    /// The refused target state.
    pub to: AgentState,
}

#[cfg(test)]
mod tests {
    use super::AgentState::*;
    use super::*;

    #[test]
    fn exactly_the_seven_documented_transitions_are_allowed() {
        let allowed = [
            (Idle, Listening),
            (Listening, Thinking),
            (Thinking, Speaking),
            (Speaking, Idle),
            (Idle, Thinking),
            (Thinking, Idle),
            (Thinking, Listening),
        ];
        let mut refused = 0;
        for from in AgentState::ALL {
            for to in AgentState::ALL {
                let result = from.transition_to(to);
                if allowed.contains(&(from, to)) {
                    assert_eq!(result, Ok(to), "{from} -> {to} must be allowed");
                } else {
                    refused += 1;
                    let err = result.expect_err("refused");
                    assert_eq!(err, TransitionError { from, to });
                    assert_eq!(
                        err.to_string(),
                        format!("transition {from} -> {to} is not allowed")
                    );
                }
            }
        }
        assert_eq!(refused, 16 - 7);
    }

    #[test]
    fn self_transitions_and_skips_are_refused() {
        for s in AgentState::ALL {
            assert!(!s.can_transition_to(s), "{s} -> {s}");
        }
        assert!(!Idle.can_transition_to(Speaking));
        assert!(!Speaking.can_transition_to(Thinking));
        assert!(!Speaking.can_transition_to(Listening));
        assert!(!Listening.can_transition_to(Idle));
        assert!(!Listening.can_transition_to(Speaking));
    }

    #[test]
    fn wire_names_round_trip_and_reject_garbage() {
        for s in AgentState::ALL {
            assert_eq!(s.to_string().parse::<AgentState>(), Ok(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.as_str())
            );
            let back: AgentState = serde_json::from_value(serde_json::json!(s.as_str())).unwrap();
            assert_eq!(back, s);
        }
        for bad in ["", "Idle", "IDLE", "sleeping", " idle", "idle\n"] {
            let err: ParseStateError = bad.parse::<AgentState>().unwrap_err();
            assert_eq!(err.given, bad);
            assert!(
                err.to_string()
                    .ends_with("(use idle, listening, thinking, speaking)")
            );
        }
        assert!(serde_json::from_value::<AgentState>(serde_json::json!("Speaking")).is_err());
    }
}
