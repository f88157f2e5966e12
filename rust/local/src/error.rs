//! What can go wrong with a local model, each with its own code.

use std::path::PathBuf;

/// A local model's failure. [`LocalError::code`] is what an agent reports it with.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LocalError {
    /// No file at the path.
    #[error("the model file {} does not exist", .0.display())]
    NotFound(PathBuf),
    /// The file cannot be read.
    #[error("the model file {} cannot be read: {message}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
    /// The file is not a GGUF model.
    #[error("{} is not a GGUF model file (it does not start with the GGUF magic bytes)", .0.display())]
    NotGguf(PathBuf),
    /// The file is bigger than the memory this machine has free.
    #[error(
        "the model file {} is {size_mb} MB, more than the {available_mb} MB of memory this machine \
         has free",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size_mb: u64,
        /// Memory available.
        available_mb: u64,
    },
    /// llama.cpp could not load the file (a corrupt or truncated file, an architecture it does
    /// not know).
    #[error("llama.cpp could not load {}: the file is corrupt, truncated, or of an architecture this build does not know", .0.display())]
    LoadFailed(PathBuf),
    /// llama.cpp could not make a context (too little memory for the context size asked).
    #[error(
        "llama.cpp could not make a context of {tokens} tokens for {sequences} agents: {message}"
    )]
    ContextFailed {
        /// Tokens per agent.
        tokens: u32,
        /// Sequences.
        sequences: u32,
        /// What it said.
        message: String,
    },
    /// The prompt and the answer do not fit the context.
    #[error(
        "the prompt is {prompt} tokens and the answer may take {answer}, more than the context of \
         {context} tokens: raise brain.context_size, or lower brain.max_tokens"
    )]
    ContextTooSmall {
        /// Prompt tokens.
        prompt: u32,
        /// Most answer tokens.
        answer: u32,
        /// Tokens one agent's sequence holds.
        context: u32,
    },
    /// The chat template could not be applied.
    #[error("the chat template could not be applied: {0}")]
    Template(String),
    /// The JSON Schema of the reply could not be made into a grammar.
    #[error("the reply's JSON Schema could not be compiled into a grammar: {0}")]
    Grammar(String),
    /// Decoding failed.
    #[error("decoding failed: {0}")]
    Decode(String),
    /// The file is loaded already, with other settings (one loaded model per file).
    #[error(
        "brain.{field}: the model {} is loaded already with {field} {loaded}, not {asked} (every \
         agent on one model file shares its settings)",
        path.display()
    )]
    SettingsDiffer {
        /// The file.
        path: PathBuf,
        /// The setting.
        field: &'static str,
        /// What it is loaded with.
        loaded: String,
        /// What was asked.
        asked: String,
    },
    /// A model file could not be downloaded (the server, the connection, the disk).
    #[error("the model could not be downloaded from {url}: {message}")]
    Download {
        /// The URL, without its query.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// A downloaded model file is not the one asked for: its SHA-256 differs (it was deleted).
    #[error(
        "the model downloaded from {url} has SHA-256 {got}, not the {expected} asked for (the \
         file was deleted; check brain.model_sha256, or the server's file)"
    )]
    ChecksumMismatch {
        /// The URL, without its query.
        url: String,
        /// The hash asked for.
        expected: String,
        /// The hash of what arrived.
        got: String,
    },
    /// A model file the game writes itself (copied out of its pack) could not be written.
    #[error("the model could not be copied from {from}: {message}")]
    Copy {
        /// Where it comes from (`res://models/npc.gguf`).
        from: String,
        /// What went wrong.
        message: String,
    },
    /// `gpu_layers` asks for a GPU this build or this machine does not have.
    #[error(
        "brain.gpu_layers is {gpu_layers}, but {reason}: set it to 0 to run the model on the CPU"
    )]
    NoGpu {
        /// The layers asked for.
        gpu_layers: u32,
        /// Why none can be offloaded.
        reason: String,
    },
    /// The model's worker has stopped (the process is shutting down).
    #[error("the model's worker has stopped")]
    Stopped,
    /// The answer was not done within its time limit ([`crate::Job::timeout`]), counted from
    /// when it got a sequence.
    #[error(
        "the model did not finish its answer within brain.timeout_seconds ({seconds} s; \
         {output_tokens} tokens answered): raise it, lower brain.max_tokens, or give the model \
         more threads"
    )]
    TimedOut {
        /// The limit.
        seconds: f64,
        /// Tokens of the answer by then.
        output_tokens: u32,
    },
}

impl LocalError {
    /// The code of this failure in the `brain_calls` trace, and the one an agent reports
    /// (`agent_error`) — but `brain_timeout`, reported as `brain_error` as a remote model's
    /// timeout is.
    pub fn code(&self) -> &'static str {
        match self {
            LocalError::NotFound(_) | LocalError::Unreadable { .. } => "brain_model_not_found",
            LocalError::NotGguf(_) | LocalError::LoadFailed(_) => "brain_model_invalid",
            LocalError::TooLarge { .. } | LocalError::ContextFailed { .. } => {
                "brain_model_too_large"
            }
            LocalError::ContextTooSmall { .. } => "brain_context_exceeded",
            LocalError::SettingsDiffer { .. } | LocalError::NoGpu { .. } => "invalid_config",
            LocalError::Template(_) => "brain_template_failed",
            LocalError::Grammar(_) => "brain_grammar_failed",
            LocalError::Download { .. } | LocalError::Copy { .. } => "brain_model_download_failed",
            LocalError::ChecksumMismatch { .. } => "brain_model_checksum_mismatch",
            LocalError::Decode(_) | LocalError::Stopped => "brain_error",
            LocalError::TimedOut { .. } => "brain_timeout",
        }
    }
}
