//! What an agent keeps in mind: the memories it forms of what happens to it, and those it
//! recalls for each decision.
//!
//! The memory stream itself — the rows, their keyword index, the reads and the writes — is
//! [`crate::memory`]'s. This module holds the rules on top of it:
//!
//! - [`forming`]: what a moment becomes in memory (its text, its importance without a model);
//! - [`recall`]: which memories a decision gets, scored by recency, importance and relevance;
//! - [`compaction`]: an agent's stream kept under a cap, its oldest memories summed up;
//! - [`reflection`]: the insights an agent draws from what it went through, and what it thinks
//!   of the people in it;
//! - [`Recollection`]: the recalled memories as a section of the decision's context, which
//!   every brain renders (the model brains in their prompt, the scripted brain in its answers);
//! - [`vectors`]: recall by meaning, the vectors of an agent's memories held for its
//!   decisions, made by the runtime's embeddings endpoint ([`embeddings`]);
//! - [`MemorySettings`]: how much to recall and how to weigh it, per runtime and per agent.
//!
//! The runtime forms memories as its agents hear, say, do and notice things, and recalls
//! before each decision ([`crate::runtime`]).

pub mod compaction;
pub mod embeddings;
pub mod forming;
pub mod recall;
pub mod reflection;
mod section;
mod settings;
pub mod vectors;

pub use embeddings::EmbeddingSettings;
pub use recall::{Cue, Meaning, Recalled};
pub use section::Recollection;
pub use settings::{MAX_RECALL_BUDGET_TOKENS, MAX_RECALL_LIMIT, MemorySettings, RecallWeights};
