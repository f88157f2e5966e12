//! What a running answer reports ([`Event`]) and what a finished one is ([`Outcome`]): the
//! worker sends them, the queue and each [`crate::Answer`] pass them on.

use std::time::Duration;

use crate::error::LocalError;

/// What a running answer reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Text as it is generated.
    Text(String),
    /// The answer.
    Done(Box<Outcome>),
    /// It failed.
    Failed(LocalError),
}

/// A finished answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The answer's text.
    pub text: String,
    /// Tokens of the prompt.
    pub prompt_tokens: u32,
    /// Of those, tokens that were cached (not evaluated): held by the sequence from the
    /// agent's previous prompt, or copied from another agent's sequence.
    pub cached_tokens: u32,
    /// Of the cached tokens, those copied from another agent's sequence: the prefix agents on
    /// one model share (the rules and the tools before each agent's own part).
    pub shared_tokens: u32,
    /// Tokens of the answer.
    pub output_tokens: u32,
    /// Of those, tokens the grammar forced (not sampled).
    pub forced_tokens: u32,
    /// From the job's start to its first answer token.
    pub first_token: Duration,
    /// From the job's start to its end.
    pub elapsed: Duration,
    /// False when the answer was cut at `max_tokens`.
    pub complete: bool,
}
