//! The tool-call contract: what a brain answers, `{assistant_text, dialog_type,
//! tool_calls:[{id, tool, args, reason?}]}`.
//!
//! A leaf module: brains produce these types, the runtime executes them, the protocol and the
//! schemas describe them.
//!
//! # Bounds
//!
//! A model's answer is untrusted: whatever it says, what it can put anywhere is bounded.
//! [`BrainReply::bounded`] is applied by the model brains (`openai`, `anthropic`, `cli`) to
//! every answer before the runtime sees it: `assistant_text` — which is spoken, stored in the
//! conversation memory and sent in later prompts — is cut to the `speak` limit
//! ([`limits::MAX_ASSISTANT_TEXT_CHARS`], 1,000 characters) on a character boundary, its last
//! character then being [`limits::CUT_MARK`] (`…`); `dialog_type`, each call's `id`, `tool` and
//! `reason` are cut the same way to their limits. A tool name cut so is no tool's name (a
//! name's limit is [`limits::MAX_TOOL_NAME_CHARS`]), so the call is refused as
//! `tool_not_allowed`. Arguments and the number of calls are left as they are: the runtime's
//! check refuses an answer with too many calls, or arguments over
//! [`limits::MAX_TOOL_ARGUMENTS_BYTES`], naming the limit. A [`FailedCall`] holds at most the
//! same lengths, and its `message` at most [`MAX_FAILURE_MESSAGE_CHARS`] characters, whoever
//! answered.

use crate::limits;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

impl BrainReply {
    /// This answer with every text cut to its limit (see the module docs): what a model's answer
    /// may carry into the runtime.
    pub fn bounded(mut self) -> BrainReply {
        limits::cut_chars(&mut self.assistant_text, limits::MAX_ASSISTANT_TEXT_CHARS);
        limits::cut_chars(&mut self.dialog_type, limits::MAX_DIALOG_TYPE_CHARS);
        for call in &mut self.tool_calls {
            limits::cut_chars(&mut call.id, limits::MAX_CALL_ID_CHARS);
            limits::cut_chars(&mut call.tool, limits::MAX_TOOL_NAME_CHARS);
            if let Some(reason) = &mut call.reason {
                limits::cut_chars(reason, limits::MAX_CALL_REASON_CHARS);
            }
        }
        self
    }
}

// A streamed preview of an answer is never longer than the line the answer may say.
const _: () =
    assert!(agents_llm::client::MAX_STREAMED_TEXT_CHARS == limits::MAX_ASSISTANT_TEXT_CHARS);

/// The longest [`FailedCall::message`], in characters.
pub const MAX_FAILURE_MESSAGE_CHARS: usize = 1_000;

/// How a refused call failed (the contract's tool feedback).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureStatus {
    /// Blocked: the tool is not available to this agent now, or its rules refuse the call.
    Rejected,
    /// Invalid or incomplete arguments.
    Error,
}

crate::error_code_subset! {
    /// Why a call was refused, as the contract's `reason` (the contract's set is open-ended).
    pub enum FailureReason: "failure reason" {
        ToolNotAllowed,
        InvalidArgs,
        InvalidJson,
        DuplicateCallId,
        HumanInControl,
        HumanOnly,
        ActorStateRestricted,
        InvalidActorState,
    }
}

impl FailureReason {
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
    /// A refused `call` for `reason`, explained by `message`; the id, the tool and the message
    /// cut to their limits (see the module docs).
    pub fn new(call: &ToolCall, reason: FailureReason, message: impl Into<String>) -> Self {
        let mut message = message.into();
        limits::cut_chars(&mut message, MAX_FAILURE_MESSAGE_CHARS);
        FailedCall {
            id: limits::cut_copy(&call.id, limits::MAX_CALL_ID_CHARS),
            tool: limits::cut_copy(&call.tool, limits::MAX_TOOL_NAME_CHARS),
            status: reason.status(),
            reason,
            message,
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

/// How one call of a decision ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// It ran.
    Done,
    /// It ran and failed (the tool's error, an action the world refused).
    Failed,
    /// It did not run: the agent was no longer thinking (it had spoken, or was interrupted).
    Refused,
}

/// One call of a decision and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DecidedCall {
    /// The call's id in the brain's answer.
    pub id: String,
    /// The tool (a world action, a game tool, an app action, a GM tool).
    pub tool: String,
    /// Its arguments, as the brain gave them.
    pub args: Value,
    /// How it ended.
    pub outcome: CallOutcome,
    /// The failure's reason, or a read-only tool's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
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
    fn bounded_answers_cut_every_text_to_its_limit() {
        let huge = "é".repeat(50_000);
        let reply = BrainReply {
            assistant_text: huge.clone(),
            dialog_type: huge.clone(),
            tool_calls: vec![ToolCall {
                id: huge.clone(),
                tool: huge.clone(),
                args: serde_json::json!({"x": 1}),
                reason: Some(huge.clone()),
            }],
        }
        .bounded();
        let cut = |max: usize| format!("{}…", "é".repeat(max - 1));
        assert_eq!(reply.assistant_text, cut(limits::MAX_ASSISTANT_TEXT_CHARS));
        assert_eq!(reply.assistant_text.chars().count(), 1_000);
        assert_eq!(reply.dialog_type, cut(limits::MAX_DIALOG_TYPE_CHARS));
        let call = &reply.tool_calls[0];
        assert_eq!(call.id, cut(limits::MAX_CALL_ID_CHARS));
        assert_eq!(call.tool, cut(limits::MAX_TOOL_NAME_CHARS));
        assert_eq!(call.reason, Some(cut(limits::MAX_CALL_REASON_CHARS)));
        assert_eq!(call.args, serde_json::json!({"x": 1}));
        // Within the limits nothing changes.
        let fine = BrainReply {
            assistant_text: "Hello.".into(),
            dialog_type: "reply".into(),
            tool_calls: vec![ToolCall::new("c1", "move", serde_json::json!({}))],
        };
        assert_eq!(fine.clone().bounded(), fine);
        // A refusal of an unbounded call is bounded too.
        let failed = FailedCall::new(
            &ToolCall::new(&huge, &huge, serde_json::json!({})),
            FailureReason::ToolNotAllowed,
            huge.clone(),
        );
        assert_eq!(failed.id.chars().count(), limits::MAX_CALL_ID_CHARS);
        assert_eq!(failed.tool.chars().count(), limits::MAX_TOOL_NAME_CHARS);
        assert_eq!(failed.message.chars().count(), MAX_FAILURE_MESSAGE_CHARS);
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
