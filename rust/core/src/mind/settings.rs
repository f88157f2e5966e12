//! How an agent forms and recalls memories: [`MemorySettings`], the runtime's for every agent
//! ([`crate::runtime::RuntimeOptions::memory`]) unless an agent's config gives its own.

use serde::{Deserialize, Serialize};

/// Most memories one decision may recall, whatever the settings say.
pub const MAX_RECALL_LIMIT: usize = 50;
/// Most prompt tokens recalled memories may take, whatever the settings say.
pub const MAX_RECALL_BUDGET_TOKENS: usize = 4_000;
/// The largest reflection threshold.
pub const MAX_REFLECTION_THRESHOLD: u32 = 100_000;
/// The largest batch of memories a model rates in one call.
pub const MAX_IMPORTANCE_BATCH: usize = 64;
/// The largest cap of an agent's memories.
pub const MAX_MAX_MEMORIES: usize = 1_000_000;
/// The smallest cap (other than 0, no cap): a compaction needs room for its summaries.
pub const MIN_MAX_MEMORIES: usize = 200;

/// How an agent forms memories and recalls them for its decisions. Every field has a default,
/// so `{}` is the default settings and `{"recall_limit": 3}` changes one thing. Unknown fields
/// are an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MemorySettings {
    /// Whether the agent forms memories of what happens to it and recalls them (default
    /// true). `false`: its decisions see the last lines of its conversation only; memories the
    /// game plants are still stored.
    pub enabled: bool,
    /// Most memories recalled into one decision (default 6, at most 50); 0: memories are
    /// formed, and a decision reads none.
    #[schemars(range(max = 50))]
    pub recall_limit: usize,
    /// Prompt tokens the recalled memories may take, counted as a quarter of their characters
    /// (default 240, at most 4,000).
    #[schemars(range(max = 4000))]
    pub recall_budget_tokens: usize,
    /// How much recency, importance and relevance each count in a memory's score.
    pub weights: RecallWeights,
    /// Seconds of game time over which a memory's recency halves, counted from when it was
    /// last recalled (default 3,600: an hour of game time; at most 10¹²).
    #[schemars(range(max = 1e12))]
    pub recency_half_life_seconds: f64,
    /// The agent reflects (draws insights and sums up what it thinks of people: see
    /// [`crate::mind::reflection`]) once the importance of the memories it formed since it
    /// last did adds up to this (default 60: a conversation of a dozen or so lines); 0: never.
    /// Counted from its last reflection, across restarts (a resumed agent counts what it
    /// went through before it stopped).
    #[schemars(range(max = 100000))]
    pub reflection_threshold: u32,
    /// Most memories the agent keeps, every kind counted (default 5,000; 0: no cap; else at
    /// least 200). It holds as each memory is written, for running and stored agents alike:
    /// the new memory is stored and the least valuable ones are forgotten to make room. Before
    /// that, at the cap, its oldest memories of what happened to it are summed up and deleted,
    /// the least important first (see [`crate::mind::compaction`]). A client's spawn may
    /// lower the server's, not raise it nor set 0.
    #[schemars(range(max = 1000000))]
    pub max_memories: usize,
    /// With a model brain, the agent's new memories are rated again by the model, this many
    /// per call (default 16, at most 64; 0: the heuristic importance only). The scripted
    /// brain has no model: its memories keep the heuristic's importance.
    #[schemars(range(max = 64))]
    pub importance_batch: usize,
    /// With an embeddings endpoint configured for the runtime
    /// ([`super::EmbeddingSettings`]), the share of a memory's relevance that comes from its
    /// meaning (the cosine of its vector with the query's), the rest from its words (the
    /// keyword rank), from 0 (words only) to 1 (meaning only); default 0.5. Without an
    /// endpoint, relevance is the keyword rank alone.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub semantic_weight: f64,
    /// Whether a decision recalls what the agent thinks of the people it answers (its
    /// relationship memories, formed when it reflects) as fully relevant (default true).
    /// `false`: they are recalled only as any other memory, by their words; a report card's
    /// `--without relationships` measures what they add.
    pub relationships: bool,
}

/// The weights of a memory's score: `recency × w_recency + importance × w_importance +
/// relevance × w_relevance`, each part between 0 and 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RecallWeights {
    /// Weight of recency (default 1).
    pub recency: f64,
    /// Weight of importance (default 1).
    pub importance: f64,
    /// Weight of relevance to what is happening now (default 1).
    pub relevance: f64,
}

impl Default for MemorySettings {
    fn default() -> Self {
        MemorySettings {
            enabled: true,
            recall_limit: 6,
            recall_budget_tokens: 240,
            weights: RecallWeights::default(),
            recency_half_life_seconds: 3_600.0,
            reflection_threshold: 60,
            max_memories: 5_000,
            importance_batch: 16,
            semantic_weight: 0.5,
            relationships: true,
        }
    }
}

impl Default for RecallWeights {
    fn default() -> Self {
        RecallWeights {
            recency: 1.0,
            importance: 1.0,
            relevance: 1.0,
        }
    }
}

impl MemorySettings {
    /// The memory settings a stored agent's config gives (its `memory`; the config as the
    /// runtime stores it, [`crate::memory::AgentRecord::config`]); `None` when it gives none
    /// (the runtime's apply) or they cannot be read.
    pub fn of_stored(config: &serde_json::Value) -> Option<MemorySettings> {
        serde_json::from_value(config.get("memory")?.clone()).ok()
    }

    /// Checks a client's settings (an `agent_spawn_request`'s `memory`; the game's own code
    /// and the operator are trusted) against the operator's ceiling `operator`
    /// ([`crate::runtime::RuntimeOptions::memory`]'s `max_memories`): a client may lower it,
    /// down to [`MIN_MAX_MEMORIES`], but not raise it nor set 0 (no cap). When the operator's
    /// is 0 (no cap), any valid ceiling is accepted.
    pub fn check_client(&self, operator: usize) -> Result<(), String> {
        let asked = self.max_memories;
        if operator == 0 || (asked != 0 && asked <= operator) {
            return Ok(());
        }
        Err(format!(
            "memory.max_memories must be from {MIN_MAX_MEMORIES} to {operator} (the server's ceiling; 0, no \
             cap, is not a client's to choose), got {asked}"
        ))
    }

    /// Checks every field; the message names the bad one (`memory.weights.recency must be …`).
    pub fn validate(&self) -> Result<(), String> {
        if self.recall_limit > MAX_RECALL_LIMIT {
            return Err(format!(
                "memory.recall_limit must be at most {MAX_RECALL_LIMIT}, got {}",
                self.recall_limit
            ));
        }
        if self.recall_budget_tokens > MAX_RECALL_BUDGET_TOKENS {
            return Err(format!(
                "memory.recall_budget_tokens must be at most {MAX_RECALL_BUDGET_TOKENS}, got {}",
                self.recall_budget_tokens
            ));
        }
        if self.reflection_threshold > MAX_REFLECTION_THRESHOLD {
            return Err(format!(
                "memory.reflection_threshold must be at most {MAX_REFLECTION_THRESHOLD}, got {}",
                self.reflection_threshold
            ));
        }
        if self.max_memories != 0
            && !(MIN_MAX_MEMORIES..=MAX_MAX_MEMORIES).contains(&self.max_memories)
        {
            return Err(format!(
                "memory.max_memories must be 0 (no cap) or from {MIN_MAX_MEMORIES} to \
                 {MAX_MAX_MEMORIES}, got {}",
                self.max_memories
            ));
        }
        if self.importance_batch > MAX_IMPORTANCE_BATCH {
            return Err(format!(
                "memory.importance_batch must be at most {MAX_IMPORTANCE_BATCH}, got {}",
                self.importance_batch
            ));
        }
        let semantic = self.semantic_weight;
        if !semantic.is_finite() || !(0.0..=1.0).contains(&semantic) {
            return Err(format!(
                "memory.semantic_weight must be a number from 0 to 1, got {semantic}"
            ));
        }
        let half_life = self.recency_half_life_seconds;
        if !half_life.is_finite() || half_life <= 0.0 {
            return Err(format!(
                "memory.recency_half_life_seconds must be a positive number, got {half_life}"
            ));
        }
        let longest = crate::limits::MAX_GAME_TIME_SECONDS;
        if half_life > longest {
            return Err(format!(
                "memory.recency_half_life_seconds must be at most {longest}, got {half_life}"
            ));
        }
        for (name, weight) in [
            ("recency", self.weights.recency),
            ("importance", self.weights.importance),
            ("relevance", self.weights.relevance),
        ] {
            if !weight.is_finite() || !(0.0..=100.0).contains(&weight) {
                return Err(format!(
                    "memory.weights.{name} must be a number from 0 to 100, got {weight}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_default_field_by_field_and_name_what_is_wrong() {
        let parsed: MemorySettings =
            serde_json::from_value(serde_json::json!({"recall_limit": 3})).unwrap();
        assert_eq!(
            parsed,
            MemorySettings {
                recall_limit: 3,
                ..Default::default()
            }
        );
        assert!(
            serde_json::from_value::<MemorySettings>(serde_json::json!({"recal_limit": 3}))
                .unwrap_err()
                .to_string()
                .contains("unknown field `recal_limit`")
        );
        let bad = |settings: MemorySettings| settings.validate().unwrap_err();
        assert!(
            bad(MemorySettings {
                recall_limit: 51,
                ..Default::default()
            })
            .contains("memory.recall_limit must be at most 50")
        );
        assert!(
            bad(MemorySettings {
                recency_half_life_seconds: 0.0,
                ..Default::default()
            })
            .contains("memory.recency_half_life_seconds must be a positive number")
        );
        assert!(
            bad(MemorySettings {
                weights: RecallWeights {
                    relevance: f64::NAN,
                    ..Default::default()
                },
                ..Default::default()
            })
            .contains("memory.weights.relevance must be a number from 0 to 100")
        );
        assert!(
            bad(MemorySettings {
                max_memories: 50,
                ..Default::default()
            })
            .contains("memory.max_memories must be 0 (no cap) or from 200 to 1000000, got 50")
        );
        assert!(
            bad(MemorySettings {
                reflection_threshold: 100_001,
                ..Default::default()
            })
            .contains("memory.reflection_threshold must be at most 100000")
        );
        assert!(
            bad(MemorySettings {
                semantic_weight: 1.5,
                ..Default::default()
            })
            .contains("memory.semantic_weight must be a number from 0 to 1, got 1.5")
        );
        assert!(MemorySettings::default().validate().is_ok());
    }
}
