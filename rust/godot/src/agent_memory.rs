//! `AgentMemory`: how agents form and recall memories, as a Godot resource; and the one
//! conversion of a memory request's options and answers between Godot and the core, which
//! [AgentRuntime] and [AgentNode] share.

use agents_core::memory::MemoryKind;
use agents_core::mind::{MemorySettings, RecallWeights, Recalled};
use agents_core::runtime::Remember;
use godot::prelude::*;

use crate::convert;

/// How agents remember: whether they form memories of what they hear, say, do and notice, how
/// many they recall for each decision and how those are chosen. Set one on
/// [member AgentRuntime.memory] for every agent, or on [member AgentConfig.memory] for one;
/// save it as a `.tres` file to share it.
///
/// Before each decision an agent recalls the memories that score best for what is happening
/// now: recency (halving every [member recency_half_life_seconds] of game time since the
/// memory was last recalled) × [member recency_weight], importance (1–10, over 10) ×
/// [member importance_weight], and relevance (how well its words match the lines to answer,
/// the current task, what it notices, who is near) × [member relevance_weight]. The best go into
/// its brain's prompt, up to [member recall_limit] and [member recall_budget_tokens]; the
/// offline `scripted` brain answers a question from them. Now and then an agent reflects
/// ([member reflection_threshold]): its insights and what it thinks of someone are memories
/// too, and what it thinks of whoever speaks to it is always recalled.
///
/// ```gdscript
/// var memory := AgentMemory.new()
/// memory.recall_limit = 4
/// memory.relevance_weight = 2.0   # what matches counts double
/// $AgentRuntime.memory = memory   # read when the runtime starts
/// ```
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct AgentMemory {
    /// Whether agents form memories of what happens to them and recall them. Off: a decision
    /// sees the last lines of the conversation only; memories the game plants
    /// ([method AgentRuntime.remember]) are still kept.
    #[export]
    #[init(val = true)]
    enabled: bool,
    /// Most memories recalled into one decision (0 to 50).
    #[export(range = (0.0, 50.0, 1.0))]
    #[init(val = 6)]
    recall_limit: i64,
    /// Prompt tokens recalled memories may take (a token is about four characters; 0 to
    /// 4,000).
    #[export(range = (0.0, 4000.0, 10.0, suffix = "tokens"))]
    #[init(val = 240)]
    recall_budget_tokens: i64,
    /// How much recency counts in a memory's score (0 to 100).
    #[export_group(name = "Weights")]
    #[export(range = (0.0, 10.0, 0.05, or_greater))]
    #[init(val = 1.0)]
    recency_weight: f64,
    /// How much importance counts in a memory's score (0 to 100).
    #[export(range = (0.0, 10.0, 0.05, or_greater))]
    #[init(val = 1.0)]
    importance_weight: f64,
    /// How much relevance to what is happening now counts in a memory's score (0 to 100).
    #[export(range = (0.0, 10.0, 0.05, or_greater))]
    #[init(val = 1.0)]
    relevance_weight: f64,
    /// With an embeddings endpoint ([member AgentRuntime.embeddings]), the share of relevance
    /// that comes from a memory's meaning (its vector's closeness to the query's), the rest
    /// from its words: 0 (words only) to 1 (meaning only). Without one, relevance is by words.
    #[export(range = (0.0, 1.0, 0.05))]
    #[init(val = 0.5)]
    semantic_weight: f64,
    /// Seconds of game time over which a memory's recency halves ([method
    /// AgentRuntime.get_game_time]).
    #[export(range = (1.0, 604800.0, 1.0, or_greater, suffix = "s"))]
    #[init(val = 3600.0)]
    recency_half_life_seconds: f64,
    /// An agent reflects — draws insights from what it went through and sums up what it thinks
    /// of the people in it ([signal AgentRuntime.agent_reflected]) — once the importance of the
    /// memories it formed since it last did adds up to this (0: never; a resumed agent counts
    /// what it went through before it stopped).
    #[export_group(name = "Reflection")]
    #[export(range = (0.0, 1000.0, 1.0, or_greater))]
    #[init(val = 60)]
    reflection_threshold: i64,
    /// Whether a decision recalls what the agent thinks of the people it answers (what
    /// reflecting summed up about them) as fully relevant; off, those memories are recalled as
    /// any other, by their words.
    #[export]
    #[init(val = true)]
    relationships: bool,
    /// With a model brain, an agent's new memories are rated again by the model, this many
    /// per call (0: the heuristic's importance only; at most 64). The `scripted` brain keeps
    /// the heuristic's.
    #[export_group(name = "Importance")]
    #[export(range = (0.0, 64.0, 1.0))]
    #[init(val = 16)]
    importance_batch: i64,
    /// Most memories an agent keeps (0: no cap; else 200 to 1,000,000). Over it, its oldest
    /// memories of what happened to it are summed up — each summary keeps their most
    /// important lines and cites their ids — and deleted, the least important first, so a long
    /// game does not grow without bound.
    #[export_group(name = "Forgetting")]
    #[export(range = (0.0, 100000.0, 100.0, or_greater))]
    #[init(val = 5000)]
    max_memories: i64,
}

#[godot_api]
impl AgentMemory {}

impl AgentMemory {
    /// The settings this resource describes (checked by the runtime, which names a bad field).
    pub fn to_core(&self) -> MemorySettings {
        let count = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
        MemorySettings {
            enabled: self.enabled,
            recall_limit: count(self.recall_limit),
            recall_budget_tokens: count(self.recall_budget_tokens),
            weights: RecallWeights {
                recency: self.recency_weight,
                importance: self.importance_weight,
                relevance: self.relevance_weight,
            },
            recency_half_life_seconds: self.recency_half_life_seconds,
            reflection_threshold: u32::try_from(self.reflection_threshold).unwrap_or(u32::MAX),
            max_memories: count(self.max_memories),
            importance_batch: count(self.importance_batch),
            semantic_weight: self.semantic_weight,
            relationships: self.relationships,
        }
    }
}

/// A memory to plant, from a `remember` call's arguments: `kind` by name, `importance` 0 for
/// "judge it", `about` empty for no one. The runtime checks the rest (the text's length,
/// importance 1–10).
pub fn remember_request(
    text: &GString,
    kind: &GString,
    importance: i64,
    about: &GString,
    supersedes: &PackedInt64Array,
) -> Result<Remember, String> {
    let kind: MemoryKind = kind.to_string().parse()?;
    let importance = match importance {
        0 => None,
        n => Some(u8::try_from(n).map_err(|_| format!("importance must be 1 to 10, got {n}"))?),
    };
    let about = about.to_string();
    Ok(Remember {
        text: text.to_string(),
        kind,
        importance,
        about: (!about.is_empty()).then_some(about),
        supersedes: supersedes.as_slice().to_vec(),
    })
}

/// Recalled memories as Dictionaries: `memory` (the stored memory's Dictionary), `score`,
/// `recency`, `importance`, `relevance`, `semantic` (when compared by meaning), `in_view`.
pub fn recalled_to_array(recalled: &[Recalled]) -> Array<VarDictionary> {
    recalled
        .iter()
        .map(convert::serialize_to_dictionary)
        .collect()
}
