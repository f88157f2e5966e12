//! What a brain is asked when its agent reflects, and what it may answer.
//!
//! A reflection looks at the memories an agent formed since its last one and draws a few
//! higher-level insights from them ("Ivy keeps asking me about the mill"), each citing the
//! memories it comes from, and a short summary of what the agent thinks of each person those
//! memories are about. A brain with a model answers with [`Brain::reflect`](super::Brain);
//! one without (the scripted brain) answers nothing and the runtime draws the insights by rule.
//! Either way the answer is checked before anything is stored: a source that is not one of
//! the memories shown, a person who is not one of those listed, an empty or oversized text
//! are dropped, never stored.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use super::BrainError;
use crate::memory::MemoryKind;

/// One memory shown to the brain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReflectionMemory {
    /// Its id: what an insight cites.
    pub id: i64,
    /// What it is of.
    pub kind: MemoryKind,
    /// Its text.
    pub text: String,
    /// Whom it is about (an id), if anyone.
    pub about: Option<String>,
    /// How much it matters, 1 to 10.
    pub importance: u8,
}

/// Someone the memories are about.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Person {
    /// Their id (an agent's, the player's).
    pub id: String,
    /// Their name.
    pub name: String,
    /// What the agent thought of them so far, if anything.
    pub thought: Option<String>,
}

/// What a reflecting agent's brain is given.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReflectionRequest {
    /// The agent's id.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its role.
    pub role: String,
    /// Who it is (its prompt).
    pub prompt: String,
    /// Its memories since its last reflection, oldest first.
    pub memories: Vec<ReflectionMemory>,
    /// The people those memories are about, most mentioned first.
    pub people: Vec<Person>,
    /// Most insights to draw.
    pub max_insights: usize,
}

/// A brain's reflection: insights, and what the agent now thinks of people.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReflectionAnswer {
    /// Higher-level insights, most important first.
    pub insights: Vec<DrawnInsight>,
    /// What the agent now thinks of some of the people listed, one each.
    #[serde(default)]
    pub relationships: Vec<DrawnRelationship>,
}

/// One insight and the memories it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DrawnInsight {
    /// The insight, in the agent's words.
    pub text: String,
    /// The ids of the memories it comes from (at least one of those shown).
    pub sources: Vec<i64>,
}

/// What the agent thinks of one person now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DrawnRelationship {
    /// The person's id, as listed.
    pub about: String,
    /// One or two sentences.
    pub text: String,
    /// The ids of the memories it comes from.
    pub sources: Vec<i64>,
}

/// A boxed reflection future: `None` when the brain has no model to reflect with.
pub type ReflectFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<ReflectionAnswer>, BrainError>> + Send + 'a>>;
