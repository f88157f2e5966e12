//! The codes an agent's errors carry: the `agent_error` event's `code`, a failed reply's, a
//! brain failure's. A leaf type, so that every layer (brains, memory, the bus) can name one:
//! a view of the [error codes](crate::error_code), whose wire names it takes.

crate::error_code_subset! {
    /// The code of an agent's error: the `agent_error` event's `code` (wire form: the snake_case
    /// name).
    pub enum AgentErrorCode: "agent error code" {
        InvalidTransition,
        ActionRefused,
        InvalidAction,
        BrainError,
        BrainInvalidReply,
        BudgetExhausted,
        BrainAuthFailed,
        BrainModelNotFound,
        BrainModelInvalid,
        BrainModelTooLarge,
        BrainContextExceeded,
        BrainGrammarFailed,
        BrainTemplateFailed,
        BrainModelDownloadFailed,
        BrainModelChecksumMismatch,
        Lagged,
        UnknownTask,
        TaskAlreadyCompleted,
        DatabaseError,
    }
}
