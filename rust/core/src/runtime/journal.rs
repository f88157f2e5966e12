//! The decision journal: every running agent keeps its last [`JOURNAL_LENGTH`] decisions in
//! memory — what it saw, what it called, what came of each call, what it said, how long its
//! brain took and what that cost — for a debugger to show ([`super::Runtime::recent_decisions`]).
//!
//! It is not stored: the database already holds the lasting record of what an agent did
//! (conversations, state history, tasks, the `brain_calls` trace of model calls). The journal adds
//! what only the running agent knows — the context it decided on and which of its calls failed
//! and why — and forgets it when the agent stops. Recording costs one short lock per decision.

use std::collections::VecDeque;

use parking_lot::Mutex;
use serde::Serialize;

/// Decisions an agent keeps (older ones are dropped).
pub const JOURNAL_LENGTH: usize = 20;

/// What started a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// Lines it heard (the player, another agent).
    Message,
    /// Its own initiative: the idle time passed, or its app had something new.
    Autonomous,
    /// A game-master turn on a campaign.
    CampaignTurn,
}

pub use crate::contract::{CallOutcome, DecidedCall};

/// One decision, as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    /// The agent's decision count when it was made (1 for its first since it started).
    pub number: u64,
    /// When it started (UTC ISO-8601).
    pub started_at: String,
    /// What started it.
    pub trigger: Trigger,
    /// A one-line summary of the context the brain was given.
    pub context: String,
    /// The calls it made, in order (read-only steps first).
    pub calls: Vec<DecidedCall>,
    /// The lines it said.
    pub spoken: Vec<String>,
    /// Why it failed (`code: message`), when it did: nothing of it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Milliseconds from the first question to the brain until the answer was checked.
    pub latency_ms: u64,
    /// Model calls made (0 for brains that call no model).
    pub model_calls: u32,
    /// Prompt tokens the provider reported, summed over the model calls.
    pub input_tokens: u64,
    /// Answer tokens the provider reported, summed over the model calls.
    pub output_tokens: u64,
    /// Answers sent back for repair.
    pub repairs: u32,
    /// The calls the contract check refused on the way, each sent back to the brain for repair
    /// (an unknown tool, arguments its schema refuses — a move outside the legal list —, a call
    /// the agent may not make now): the tool, its arguments, `reason: message` as the detail.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<DecidedCall>,
    /// The memories recalled for it, best first, with their scores (those marked `in_view`
    /// were lines the decision already showed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<crate::mind::Recalled>,
}

impl Decision {
    /// A decision starting now.
    pub(crate) fn start(number: u64, trigger: Trigger, context: String) -> Decision {
        Decision {
            number,
            started_at: crate::time::now_iso(),
            trigger,
            context,
            calls: Vec::new(),
            spoken: Vec::new(),
            failure: None,
            latency_ms: 0,
            model_calls: 0,
            input_tokens: 0,
            output_tokens: 0,
            repairs: 0,
            rejected: Vec::new(),
            recalled: Vec::new(),
        }
    }

    /// Adds one model call's report.
    pub(crate) fn count_model_call(&mut self, call: &crate::memory::BrainCall) {
        self.model_calls += 1;
        self.input_tokens += call.input_tokens;
        self.output_tokens += call.output_tokens;
    }

    /// Adds a call and what came of it.
    /// Notes the calls of `reply` the contract check refused (`failed`), with why.
    pub(crate) fn push_rejected(
        &mut self,
        reply: &crate::contract::BrainReply,
        failed: &[crate::contract::FailedCall],
    ) {
        for failure in failed {
            let args = reply
                .tool_calls
                .iter()
                .find(|c| c.id == failure.id && c.tool == failure.tool)
                .map_or(serde_json::Value::Null, |c| c.args.clone());
            self.rejected.push(DecidedCall {
                id: failure.id.clone(),
                tool: failure.tool.clone(),
                args,
                outcome: CallOutcome::Failed,
                detail: Some(format!("{}: {}", failure.reason.as_str(), failure.message)),
            });
        }
    }

    pub(crate) fn push_call(
        &mut self,
        call: &crate::contract::ToolCall,
        outcome: CallOutcome,
        detail: Option<String>,
    ) {
        self.calls.push(DecidedCall {
            id: call.id.clone(),
            tool: call.tool.clone(),
            args: call.args.clone(),
            outcome,
            detail,
        });
    }
}

/// One agent's last decisions.
#[derive(Default)]
pub(crate) struct Journal {
    recent: Mutex<VecDeque<Decision>>,
}

impl Journal {
    /// Keeps `decision`, dropping the oldest beyond [`JOURNAL_LENGTH`].
    pub(crate) fn record(&self, decision: Decision) {
        let mut recent = self.recent.lock();
        if recent.len() == JOURNAL_LENGTH {
            recent.pop_front();
        }
        recent.push_back(decision);
    }

    /// The kept decisions, oldest first.
    pub(crate) fn recent(&self) -> Vec<Decision> {
        self.recent.lock().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_keeps_the_last_twenty_decisions_in_order() {
        let journal = Journal::default();
        for n in 1..=25 {
            journal.record(Decision::start(n, Trigger::Autonomous, String::new()));
        }
        let kept: Vec<u64> = journal.recent().iter().map(|d| d.number).collect();
        assert_eq!(kept, (6..=25).collect::<Vec<_>>());
    }

    #[test]
    fn a_decision_serializes_with_snake_case_outcomes_and_no_empty_optionals() {
        let mut d = Decision::start(1, Trigger::Message, "ctx".into());
        d.push_call(
            &crate::contract::ToolCall {
                id: "call_1".into(),
                tool: "move_to".into(),
                args: serde_json::json!({"x": 1, "y": 2}),
                reason: None,
            },
            CallOutcome::Failed,
            Some("outside the world bounds".into()),
        );
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["trigger"], "message");
        assert_eq!(v["calls"][0]["outcome"], "failed");
        assert_eq!(v["calls"][0]["detail"], "outside the world bounds");
        assert!(v.get("failure").is_none());
    }
}
