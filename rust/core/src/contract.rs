//! The tool-call contract (tool-calls.md): what a brain answers, `{assistant_text, dialog_type,
//! tool_calls:[{id, tool, args, reason?}]}`.
//!
//! A leaf module: brains produce these types, the runtime executes them, the protocol and the
//! schemas describe them.

use serde::{Deserialize, Serialize};

/// One requested tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    /// Call id (`call_001`), echoed in failures.
    pub id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments (a JSON object).
    #[serde(default)]
    pub args: serde_json::Value,
    /// Why (optional, for logs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ToolCall {
    /// A call of `tool` with `args`, without a reason.
    pub fn new(id: impl Into<String>, tool: impl Into<String>, args: serde_json::Value) -> Self {
        ToolCall {
            id: id.into(),
            tool: tool.into(),
            args,
            reason: None,
        }
    }
}

/// A brain's answer (the tool-call contract). With no tool calls, `assistant_text` must be
/// non-empty (the anti-silent rule); the runtime says it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrainReply {
    /// Text to say (spoken as a `speak` to the default recipients when no `speak` call says
    /// something else).
    #[serde(default)]
    pub assistant_text: String,
    /// What kind of line this is (`reply`, `chat`, `task_update`, `collaboration`, `monologue`).
    #[serde(default)]
    pub dialog_type: String,
    /// Actions, executed in order.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
}

/// How a refused call failed (tool-calls.md "Tool Feedback").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureStatus {
    /// Blocked: the tool is not available to this agent now, or its rules refuse the call.
    Rejected,
    /// Invalid or incomplete arguments.
    Error,
}

/// Why a call was refused, as the contract's `reason` (tool-calls.md lists a non-exhaustive set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureReason {
    /// The agent has no tool of that name (status `rejected`).
    ToolNotAllowed,
    /// The arguments break the tool's JSON Schema (status `error`).
    InvalidArgs,
    /// The arguments are not a JSON object (status `error`).
    InvalidJson,
    /// Two calls in one reply share an id (status `error`).
    DuplicateCallId,
    /// The app the action belongs to is in `human` control mode: "Human is in control"
    /// (status `rejected`).
    HumanInControl,
    /// The action is marked `humanOnly`: only the human may trigger it (status `rejected`).
    HumanOnly,
    /// The turn actor's character state forbids the call (a campaign's GM tools; status
    /// `rejected`).
    ActorStateRestricted,
    /// The turn actor's character state is not one the rules know (status `rejected`).
    InvalidActorState,
}

impl FailureReason {
    /// The wire name (`tool_not_allowed`, `invalid_args`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::ToolNotAllowed => "tool_not_allowed",
            FailureReason::InvalidArgs => "invalid_args",
            FailureReason::InvalidJson => "invalid_json",
            FailureReason::DuplicateCallId => "duplicate_call_id",
            FailureReason::HumanInControl => "human_in_control",
            FailureReason::HumanOnly => "human_only",
            FailureReason::ActorStateRestricted => "actor_state_restricted",
            FailureReason::InvalidActorState => "invalid_actor_state",
        }
    }

    /// The status this reason is reported with.
    pub fn status(self) -> FailureStatus {
        match self {
            FailureReason::ToolNotAllowed
            | FailureReason::HumanInControl
            | FailureReason::HumanOnly
            | FailureReason::ActorStateRestricted
            | FailureReason::InvalidActorState => FailureStatus::Rejected,
            FailureReason::InvalidArgs
            | FailureReason::InvalidJson
            | FailureReason::DuplicateCallId => FailureStatus::Error,
        }
    }
}

/// One refused call in the contract's failure feedback: `{id, tool, status, reason}`, plus a
/// human-readable `message` naming what is wrong (the field and the rule, for a schema failure).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedCall {
    /// The call's id.
    pub id: String,
    /// The tool it asked for.
    pub tool: String,
    /// `rejected` or `error`.
    pub status: FailureStatus,
    /// Why.
    pub reason: FailureReason,
    /// What exactly is wrong.
    pub message: String,
}

impl FailedCall {
    /// A refused `call` for `reason`, explained by `message`.
    pub fn new(call: &ToolCall, reason: FailureReason, message: impl Into<String>) -> Self {
        FailedCall {
            id: call.id.clone(),
            tool: call.tool.clone(),
            status: reason.status(),
            reason,
            message: message.into(),
        }
    }
}

/// The result of a call that ran within a decision (a read-only tool whose answer goes back to
/// the brain).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallResult {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The tool's structured result.
    pub result: serde_json::Value,
    /// True when the tool reported a failure (an illegal position, a game that is over).
    pub is_error: bool,
}

/// One earlier round of the current decision, shown to the brain when it answers again: what it
/// answered, then what came of it — results of read-only calls, or the failure feedback
/// (`failed_calls`) that asks it to repair its answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DecisionStep {
    /// What the brain answered.
    pub reply: BrainReply,
    /// Results of the read-only calls that ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<CallResult>,
    /// Calls refused before anything ran (the answer must be repaired).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_calls: Vec<FailedCall>,
    /// A problem with the answer as a whole (the anti-silent rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl DecisionStep {
    /// True when this step asks the brain to repair its answer.
    pub fn is_repair(&self) -> bool {
        !self.failed_calls.is_empty() || self.problem.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_reasons_serialize_as_their_wire_names() {
        for reason in [
            FailureReason::ToolNotAllowed,
            FailureReason::InvalidArgs,
            FailureReason::InvalidJson,
            FailureReason::DuplicateCallId,
            FailureReason::ActorStateRestricted,
            FailureReason::InvalidActorState,
        ] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
    }

    #[test]
    fn failed_calls_have_the_contract_shape() {
        let call = ToolCall {
            id: "call_002".into(),
            tool: "hp_delta".into(),
            args: serde_json::json!({}),
            reason: None,
        };
        let failed = FailedCall::new(&call, FailureReason::ToolNotAllowed, "no such tool");
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            serde_json::json!({"id": "call_002", "tool": "hp_delta", "status": "rejected",
                               "reason": "tool_not_allowed", "message": "no such tool"})
        );
    }
}
