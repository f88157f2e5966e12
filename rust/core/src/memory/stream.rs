//! The memory stream: what an agent heard, said, did, saw and was told, one row each
//! (`memories`), with a kind, an importance from 1 to 10, the game time it happened at, whom it
//! is about and the memories it comes from. It is searched by keywords: SQLite's FTS5 (BM25)
//! and PostgreSQL's text search (`ts_rank`) index the text, both stemming English (`porter`,
//! `english`), so "keys" finds "key".
//!
//! This module holds the stream's types and the rules for what may be stored; the SQL is in
//! [`super::statements`] (the write), [`super::queries`] (the reads) and
//! [`super::migrations`] (the table, step 8).

use serde::{Deserialize, Serialize};

use super::MemoryError;
use crate::limits::MAX_GAME_TIME_SECONDS;

pub use crate::limits::MAX_MEMORY_TEXT_CHARS;
/// Most memory ids one memory may cite as its sources.
pub const MAX_MEMORY_SOURCES: usize = 64;
/// Longest "about" (an agent id, the player's id), in characters.
pub const MAX_MEMORY_ABOUT_CHARS: usize = 100;
/// Most search terms a query is cut to.
pub const MAX_SEARCH_TERMS: usize = 16;

crate::wire_enum! {
    /// What a memory is of.
    pub enum MemoryKind: "memory kind" {
        /// A line it heard.
        Heard = "heard",
        /// A line it said.
        Said = "said",
        /// Something it did, and how it turned out (a tool's result, a refusal, a blocked move).
        Did = "did",
        /// What the game told it it perceives.
        Observed = "observed",
        /// A fact the game planted (`remember`).
        Fact = "fact",
        /// A task it was given, or finished.
        Task = "task",
        /// Something that happened in an app or a campaign it takes part in.
        Event = "event",
        /// An insight drawn from other memories (a reflection).
        Insight = "insight",
        /// A summary of older memories (compaction).
        Summary = "summary",
        /// What it thinks of someone (`about`): drawn by a reflection, each new one superseding
        /// the last, and recalled whenever that one speaks to it.
        Relationship = "relationship",
    }
}

impl MemoryKind {
    /// Whether a reflection drew it (an insight, a relationship) or a compaction wrote it (a
    /// summary): what the agent made of its memories, not something that happened to it.
    pub const fn is_derived(self) -> bool {
        matches!(
            self,
            MemoryKind::Insight | MemoryKind::Summary | MemoryKind::Relationship
        )
    }
}

/// A memory to store.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMemory {
    /// What it is of.
    pub kind: MemoryKind,
    /// What happened, as the agent would tell it ("Ivy said the cellar key is under the mat.").
    pub text: String,
    /// How much it matters, 1 (mundane) to 10 (life-changing).
    pub importance: u8,
    /// Whom it is about (an agent id, the player's id), if anyone.
    pub about: Option<String>,
    /// The memories it comes from (an insight's, a summary's), by id.
    pub sources: Vec<i64>,
    /// When it happened, in seconds of game time.
    pub game_time: f64,
    /// Older memories of this agent it replaces (a belief that turned out wrong: "the key was
    /// moved"), by id: they stay, marked [`StoredMemory::superseded_by`] this one, and recall
    /// prefers this one. Ids of other agents' memories are left alone.
    pub supersedes: Vec<i64>,
}

impl NewMemory {
    /// A memory of `kind` with `text`, importance 1, about no one, from no source, at game time
    /// 0 (set the fields that matter).
    pub fn new(kind: MemoryKind, text: impl Into<String>) -> NewMemory {
        NewMemory {
            kind,
            text: text.into(),
            importance: 1,
            about: None,
            sources: Vec::new(),
            game_time: 0.0,
            supersedes: Vec::new(),
        }
    }

    /// The memory as it will be stored (text trimmed), or why it cannot be: empty or longer than
    /// [`MAX_MEMORY_TEXT_CHARS`], an importance outside 1–10, a game time that is not a finite
    /// number, too many sources, an "about" that is empty or too long.
    pub fn checked(mut self) -> Result<NewMemory, MemoryError> {
        let bad = |message: String| Err(MemoryError::InvalidMemory(message));
        self.text = self.text.trim().to_string();
        let chars = self.text.chars().count();
        if chars == 0 {
            return bad("text is empty".into());
        }
        if chars > MAX_MEMORY_TEXT_CHARS {
            return bad(format!(
                "text has {chars} characters; the limit is {MAX_MEMORY_TEXT_CHARS}"
            ));
        }
        if !(1..=10).contains(&self.importance) {
            return bad(format!(
                "importance must be 1 to 10, got {}",
                self.importance
            ));
        }
        if !self.game_time.is_finite() {
            return bad(format!(
                "game_time must be a finite number, got {}",
                self.game_time
            ));
        }
        if !(-MAX_GAME_TIME_SECONDS..=MAX_GAME_TIME_SECONDS).contains(&self.game_time) {
            return bad(format!(
                "game_time must be within ±{MAX_GAME_TIME_SECONDS} seconds, got {}",
                self.game_time
            ));
        }
        if self.sources.len() > MAX_MEMORY_SOURCES {
            return bad(format!(
                "{} sources; the limit is {MAX_MEMORY_SOURCES}",
                self.sources.len()
            ));
        }
        if self.supersedes.len() > MAX_MEMORY_SOURCES {
            return bad(format!(
                "it supersedes {} memories; the limit is {MAX_MEMORY_SOURCES}",
                self.supersedes.len()
            ));
        }
        if let Some(about) = &self.about {
            let chars = about.trim().chars().count();
            if chars == 0 || chars > MAX_MEMORY_ABOUT_CHARS {
                return bad(format!(
                    "about must be 1 to {MAX_MEMORY_ABOUT_CHARS} characters, got {chars}"
                ));
            }
        }
        Ok(self)
    }
}

/// A stored memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StoredMemory {
    /// Its id (increasing in the order memories were stored).
    pub id: i64,
    /// The agent it belongs to.
    pub agent_id: String,
    /// What it is of.
    pub kind: MemoryKind,
    /// What happened.
    pub text: String,
    /// How much it matters, 1 to 10.
    pub importance: u8,
    /// Whom it is about, if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    /// The memories it comes from, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<i64>,
    /// When it happened, in seconds of game time.
    pub game_time: f64,
    /// When it was stored (UTC, ISO 8601).
    pub created_at: String,
    /// When it was last recalled for a decision, in seconds of game time (`None`: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accessed_at: Option<f64>,
    /// The newer memory that replaced it when it turned out wrong (`None`: still held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<i64>,
}

/// A memory a search found, with how well it matches (higher is better; the scale is the
/// backend's: BM25 on SQLite, `ts_rank` on PostgreSQL, so compare within one search only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FoundMemory {
    /// The memory.
    pub memory: StoredMemory,
    /// How well it matches the query.
    pub relevance: f64,
}

/// A memory an agent drew from others (an insight, a relationship), as its reflection reports
/// it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DrawnMemory {
    /// Its id.
    pub memory_id: i64,
    /// `insight` or `relationship`.
    pub kind: MemoryKind,
    /// What the agent concluded.
    pub text: String,
    /// Whom it is about (a relationship's person).
    pub about: Option<String>,
    /// The ids of the memories it comes from.
    pub sources: Vec<i64>,
}

/// What a recall chooses from ([`super::Memory::recall_candidates`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Candidates {
    /// The best keyword matches of the query, best first.
    pub found: Vec<FoundMemory>,
    /// The best matches of each line searched apart, best first, a list per line.
    pub per_line: Vec<Vec<FoundMemory>>,
    /// The newest memories, oldest first.
    pub newest: Vec<StoredMemory>,
    /// What the agent thinks of the people asked about, one each at most.
    pub relationships: Vec<StoredMemory>,
    /// The memories asked for by id (the nearest by meaning), those still stored, by id.
    pub nearest: Vec<StoredMemory>,
}

/// A vector as stored: its numbers as little-endian 32-bit floats.
pub(crate) fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector read back; a length that is not a whole number of floats is an error.
pub(crate) fn vector_of(bytes: &[u8]) -> Result<Vec<f32>, super::rows::BadStored> {
    if !bytes.len().is_multiple_of(4) {
        return Err(super::rows::BadStored {
            what: "memory vector",
            text: format!("{} bytes", bytes.len()),
            reason: "not a whole number of 32-bit floats".into(),
        });
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// English words too common to say what a memory is about ("the", "where", "you"), and
/// greetings ("hello", "good morning"): a search skips them, else every memory would match
/// every question.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "afternoon",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "but",
    "by",
    "bye",
    "can",
    "could",
    "did",
    "do",
    "does",
    "evening",
    "for",
    "from",
    "good",
    "goodbye",
    "greetings",
    "had",
    "has",
    "have",
    "he",
    "hello",
    "her",
    "here",
    "hers",
    "hey",
    "hi",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "know",
    "let",
    "me",
    "morning",
    "my",
    "no",
    "not",
    "now",
    "of",
    "oh",
    "ok",
    "on",
    "or",
    "our",
    "please",
    "remember",
    "said",
    "say",
    "she",
    "should",
    "so",
    "some",
    "tell",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "told",
    "too",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yes",
    "you",
    "your",
    "yours",
];

/// Whether `word` (lower case) is too common to search for ([`search_terms`] skips it).
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// A word's English (Porter) stem, lower-cased, as the full-text index stems it ("Lanterns" →
/// "lantern", "loaves" → "loav"): two words match, whatever their form, when their stems do.
pub fn stem(word: &str) -> String {
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    if word.chars().any(char::is_uppercase) {
        stemmer.stem(&word.to_lowercase()).into_owned()
    } else {
        stemmer.stem(word).into_owned()
    }
}

/// The words of `query` a search looks for: lower-cased runs of letters and digits of two
/// characters or more that are not [common words](is_stopword), each once, at most
/// [`MAX_SEARCH_TERMS`]. Nothing of the query's own syntax reaches a full-text engine: only
/// these words, quoted by the backend's query.
pub fn search_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.chars().count() >= 2 && !is_stopword(&word) && !terms.contains(&word) {
            terms.push(word);
            if terms.len() == MAX_SEARCH_TERMS {
                break;
            }
        }
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(text: &str) -> NewMemory {
        NewMemory {
            kind: MemoryKind::Fact,
            text: text.into(),
            importance: 5,
            about: None,
            sources: Vec::new(),
            game_time: 0.0,
            supersedes: Vec::new(),
        }
    }

    #[test]
    fn kinds_round_trip_and_an_unknown_one_is_named() {
        for kind in MemoryKind::ALL {
            assert_eq!(kind.as_str().parse::<MemoryKind>(), Ok(kind));
        }
        let error = "gossip".parse::<MemoryKind>().unwrap_err().to_string();
        assert!(
            error.starts_with("unknown memory kind 'gossip' (use heard, said"),
            "{error}"
        );
    }

    #[test]
    fn a_memory_is_checked_before_it_is_stored() {
        let ok = memory("  The key is under the mat. ").checked().unwrap();
        assert_eq!(ok.text, "The key is under the mat.");
        let reason = |m: NewMemory| m.checked().unwrap_err().to_string();
        assert!(reason(memory("   ")).contains("text is empty"));
        assert!(
            reason(memory(&"x".repeat(MAX_MEMORY_TEXT_CHARS + 1)))
                .contains("text has 2001 characters; the limit is 2000")
        );
        for importance in [0, 11] {
            let m = NewMemory {
                importance,
                ..memory("a")
            };
            assert!(reason(m).contains("importance must be 1 to 10"));
        }
        let m = NewMemory {
            game_time: f64::NAN,
            ..memory("a")
        };
        assert!(reason(m).contains("game_time must be a finite number"));
        let m = NewMemory {
            sources: vec![1; MAX_MEMORY_SOURCES + 1],
            ..memory("a")
        };
        assert!(reason(m).contains("65 sources; the limit is 64"));
        let m = NewMemory {
            about: Some(" ".into()),
            ..memory("a")
        };
        assert!(reason(m).contains("about must be 1 to 100 characters"));
    }

    #[test]
    fn search_terms_are_plain_words_only() {
        assert_eq!(
            search_terms("Where is the cellar KEY? \"key\" OR NEAR(x) -- * a"),
            ["cellar", "key", "near"]
        );
        assert!(search_terms("Where is it? Do you know?").is_empty());
        assert!(
            STOPWORDS.windows(2).all(|w| w[0] < w[1]),
            "sorted, for the binary search"
        );
        assert!(search_terms("?!* a").is_empty());
        let many = (0..40)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(search_terms(&many).len(), MAX_SEARCH_TERMS);
    }
}
