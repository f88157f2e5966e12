//! The codes an agent's errors carry: the `agent_error` event's `code`, a failed reply's, a
//! brain failure's. A leaf type, so that every layer (brains, memory, the bus) can name one.

use serde::{Deserialize, Serialize};

/// The code of an agent's error: the `agent_error` event's `code` (wire form: the snake_case
/// name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentErrorCode {
    /// A state change the state machine refuses (`speaking → thinking`).
    InvalidTransition,
    /// An action asked for while the agent cannot act (it is already speaking).
    ActionRefused,
    /// An action the world refuses (a target outside the bounds, an unknown helper, a task that
    /// is not the agent's).
    InvalidAction,
    /// The brain failed (its backend is unreachable, it crashed, …).
    BrainError,
    /// The brain kept answering something that breaks the contract, also after its repairs;
    /// nothing of that decision was applied.
    BrainInvalidReply,
    /// A token budget is spent: the agent calls no model until it is raised.
    BudgetExhausted,
    /// The model provider refused the key (401 / 403).
    BrainAuthFailed,
    /// The model provider does not know the model (404; the message quotes the server), or a
    /// local model's file does not exist.
    BrainModelNotFound,
    /// A local model's file is not a model llama.cpp can load (not GGUF, corrupt, truncated).
    BrainModelInvalid,
    /// A local model does not fit the memory free (its file, or the context asked for).
    BrainModelTooLarge,
    /// A local model's prompt and answer do not fit its context.
    BrainContextExceeded,
    /// The JSON Schema an answer must match could not be made into a grammar.
    BrainGrammarFailed,
    /// A local model's chat template could not be applied.
    BrainTemplateFailed,
    /// A local model's file could not be downloaded from its URL (the server, the connection,
    /// the disk; the next decision tries again, resuming what arrived), or copied out of the
    /// game's exported pack.
    BrainModelDownloadFailed,
    /// A local model's downloaded file does not have the SHA-256 asked for (it was deleted).
    BrainModelChecksumMismatch,
    /// A reader fell behind and missed bus messages.
    Lagged,
    /// The task named is unknown.
    UnknownTask,
    /// The task named is already completed.
    TaskAlreadyCompleted,
    /// The database failed.
    DatabaseError,
}

impl AgentErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [AgentErrorCode; 19] = [
        AgentErrorCode::InvalidTransition,
        AgentErrorCode::ActionRefused,
        AgentErrorCode::InvalidAction,
        AgentErrorCode::BrainError,
        AgentErrorCode::BrainInvalidReply,
        AgentErrorCode::BudgetExhausted,
        AgentErrorCode::BrainAuthFailed,
        AgentErrorCode::BrainModelNotFound,
        AgentErrorCode::BrainModelInvalid,
        AgentErrorCode::BrainModelTooLarge,
        AgentErrorCode::BrainContextExceeded,
        AgentErrorCode::BrainGrammarFailed,
        AgentErrorCode::BrainTemplateFailed,
        AgentErrorCode::BrainModelDownloadFailed,
        AgentErrorCode::BrainModelChecksumMismatch,
        AgentErrorCode::Lagged,
        AgentErrorCode::UnknownTask,
        AgentErrorCode::TaskAlreadyCompleted,
        AgentErrorCode::DatabaseError,
    ];

    /// The wire name (`invalid_transition`, `brain_invalid_reply`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentErrorCode::InvalidTransition => "invalid_transition",
            AgentErrorCode::ActionRefused => "action_refused",
            AgentErrorCode::InvalidAction => "invalid_action",
            AgentErrorCode::BrainError => "brain_error",
            AgentErrorCode::BrainInvalidReply => "brain_invalid_reply",
            AgentErrorCode::BudgetExhausted => "budget_exhausted",
            AgentErrorCode::BrainAuthFailed => "brain_auth_failed",
            AgentErrorCode::BrainModelNotFound => "brain_model_not_found",
            AgentErrorCode::BrainModelInvalid => "brain_model_invalid",
            AgentErrorCode::BrainModelTooLarge => "brain_model_too_large",
            AgentErrorCode::BrainContextExceeded => "brain_context_exceeded",
            AgentErrorCode::BrainGrammarFailed => "brain_grammar_failed",
            AgentErrorCode::BrainTemplateFailed => "brain_template_failed",
            AgentErrorCode::BrainModelDownloadFailed => "brain_model_download_failed",
            AgentErrorCode::BrainModelChecksumMismatch => "brain_model_checksum_mismatch",
            AgentErrorCode::Lagged => "lagged",
            AgentErrorCode::UnknownTask => "unknown_task",
            AgentErrorCode::TaskAlreadyCompleted => "task_already_completed",
            AgentErrorCode::DatabaseError => "database_error",
        }
    }
}

impl std::fmt::Display for AgentErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
