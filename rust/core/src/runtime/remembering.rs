//! The runtime's side of memory: the game clock, memories formed as agents hear, say, do and
//! notice things, and what a game asks of an agent's memory — plant a fact, recall by a query,
//! forget one, page through them ([`crate::mind`] holds the rules, [`crate::memory`] the rows).

use serde::{Deserialize, Serialize};

use super::agent::AgentShared;
use super::{Inner, Runtime, RuntimeError};
use crate::bus::BusMessage;
use crate::memory::{
    MAX_MEMORY_ABOUT_CHARS, MemoryError, MemoryKind, NewMemory, Page, StoredMemory,
};
use crate::mind::{Cue, MemorySettings, Recalled, forming, recall};

/// A memory a game plants in an agent's stream ([`Runtime::remember`]; the protocol's
/// `remember`). Only `text` is required.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Remember {
    /// What the agent now remembers ("The cellar key is under the mat."), 1 to 2,000
    /// characters.
    #[schemars(length(min = 1, max = 2000))]
    pub text: String,
    /// What it is of (default `fact`).
    #[serde(default = "fact")]
    pub kind: MemoryKind,
    /// How much it matters, 1 to 10 (unset: judged from the kind and the text).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10))]
    pub importance: Option<u8>,
    /// Whom it is about (an agent id, the player's id).
    #[serde(default)]
    #[schemars(length(min = 1, max = 100))]
    pub about: Option<String>,
    /// Older memories of the agent it replaces (a belief that turned out wrong), by id.
    #[serde(default)]
    #[schemars(length(max = 64))]
    pub supersedes: Vec<i64>,
}

fn fact() -> MemoryKind {
    MemoryKind::Fact
}

impl Remember {
    /// A fact with this text.
    pub fn fact(text: impl Into<String>) -> Remember {
        Remember {
            text: text.into(),
            kind: MemoryKind::Fact,
            importance: None,
            about: None,
            supersedes: Vec::new(),
        }
    }
}

/// Most memories one [`Runtime::recall`] returns.
pub const MAX_RECALLED: usize = 50;

impl Runtime {
    /// The game time now, in seconds: what memories are stamped with and their recency is
    /// measured in. It runs at [`super::RuntimeOptions::game_time_scale`] from where it was
    /// last set, and starts where the database's memories left off.
    pub fn game_time(&self) -> f64 {
        self.inner.clock.now()
    }

    /// Sets the game time (a game with a calendar of its own: a day is 86,400 seconds); it
    /// runs on from there. Errors: `invalid_message` for a number that is not finite.
    pub fn set_game_time(&self, seconds: f64) -> Result<(), RuntimeError> {
        if !seconds.is_finite() {
            return Err(RuntimeError::InvalidMessage(format!(
                "game time must be a finite number of seconds, got {seconds}"
            )));
        }
        self.inner.clock.set(seconds);
        Ok(())
    }

    /// Plants a memory in a stored agent's stream (running or not), at the game time now;
    /// returns its id. Errors: `unknown_agent`; `invalid_message` naming what is wrong (empty
    /// or oversized text, an importance outside 1–10, …), and nothing is stored.
    pub fn remember(&self, agent_id: &str, memory: Remember) -> Result<i64, RuntimeError> {
        self.check_open()?;
        self.stored(agent_id)?;
        let importance = memory
            .importance
            .unwrap_or_else(|| forming::importance(memory.kind, &memory.text));
        let new = NewMemory {
            kind: memory.kind,
            text: memory.text,
            importance,
            about: memory.about,
            sources: Vec::new(),
            game_time: self.game_time(),
            supersedes: memory.supersedes,
        };
        Ok(self.inner.store_memory(agent_id, new)?)
    }

    /// What a stored agent recalls for `query` now, best first, scored as for its decisions
    /// (its settings when it runs, else the runtime's), at most `limit` (at most 50). Unlike a
    /// decision's recall this one only looks: it does not make the memories recent again.
    /// Errors: `unknown_agent`.
    pub fn recall(
        &self,
        agent_id: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<Recalled>, RuntimeError> {
        self.check_open()?;
        self.stored(agent_id)?;
        let mut settings = match self.inner.agents.read().get(agent_id) {
            Some(entry) => entry.shared.memory.clone(),
            None => self.inner.options.memory.clone(),
        };
        settings.recall_limit = limit.min(MAX_RECALLED);
        settings.recall_budget_tokens = crate::mind::MAX_RECALL_BUDGET_TOKENS;
        let meaning = self
            .inner
            .embedder
            .as_ref()
            .filter(|_| settings.semantic_weight > 0.0)
            .and_then(|embedder| {
                embedder.meaning_now(
                    &self.inner.handle,
                    &self.inner.memory,
                    agent_id,
                    vec![query.to_string()],
                )
            });
        let cue = Cue {
            query: query.to_string(),
            now: self.game_time(),
            in_view: Vec::new(),
            shown: Vec::new(),
            lines: Vec::new(),
            wait_for_writes: true,
            people: Vec::new(),
            meaning,
        };
        Ok(recall::recall(
            &self.inner.memory,
            agent_id,
            &cue,
            &settings,
        )?)
    }

    /// Forgets one memory of a stored agent (its row and its place in the keyword index).
    /// Errors: `unknown_agent`; `unknown_memory` when the agent has no memory with that id.
    pub fn forget(&self, agent_id: &str, memory_id: i64) -> Result<(), RuntimeError> {
        self.check_open()?;
        self.stored(agent_id)?;
        let held = self
            .inner
            .memory
            .memories_page(agent_id, Some(memory_id.saturating_add(1)), 1)?
            .rows
            .first()
            .is_some_and(|m| m.id == memory_id);
        if !held {
            return Err(RuntimeError::UnknownMemory {
                agent_id: agent_id.to_string(),
                id: memory_id,
            });
        }
        self.inner.memory.forget(agent_id, memory_id);
        if let Some(embedder) = &self.inner.embedder {
            embedder.index().remove(agent_id, &[memory_id]);
        }
        Ok(())
    }

    /// A page of a stored agent's memories: the newest `limit` with an id below `before`
    /// (`None`: from the newest), oldest first within the page; `next` continues toward older
    /// ones. Errors: `unknown_agent`.
    pub fn memories_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<StoredMemory>, RuntimeError> {
        self.check_open()?;
        self.stored(agent_id)?;
        Ok(self.inner.memory.memories_page(agent_id, before, limit)?)
    }

    /// An error unless `agent_id` runs here or is stored.
    fn stored(&self, agent_id: &str) -> Result<(), RuntimeError> {
        if self.inner.is_running(agent_id) || self.inner.memory.agent(agent_id)?.is_some() {
            Ok(())
        } else {
            Err(RuntimeError::UnknownAgent(agent_id.to_string()))
        }
    }
}

impl Inner {
    /// Forms a memory of `shared`'s from what just happened, at the game time now (nothing when
    /// its memory is off). Its importance is judged from its kind and text.
    pub(crate) fn form(
        &self,
        shared: &AgentShared,
        kind: MemoryKind,
        text: String,
        about: Option<&str>,
    ) {
        if !shared.memory.enabled {
            return;
        }
        let about = about
            .filter(|a| !a.trim().is_empty() && a.chars().count() <= MAX_MEMORY_ABOUT_CHARS)
            .map(str::to_string);
        let memory = NewMemory {
            importance: forming::importance(kind, &text),
            kind,
            text,
            about,
            sources: Vec::new(),
            game_time: self.clock.now(),
            supersedes: Vec::new(),
        };
        if let Err(error) = self.store_memory(&shared.id, memory) {
            shared.warn(
                "memory_not_formed",
                format_args!("a memory was not formed: {error}"),
            );
        }
    }

    /// Stores a memory and publishes `agent_remembered`; returns its id. A memory of something
    /// that happened counts toward the agent's next reflection.
    fn store_memory(&self, agent_id: &str, memory: NewMemory) -> Result<i64, MemoryError> {
        let memory = [memory.checked()?];
        let ceiling = self.max_memories(agent_id);
        let (ids, _) = self
            .memory
            .remember_all(agent_id, memory.to_vec(), ceiling)?;
        self.remembered(agent_id, &ids, &memory);
        let [memory] = memory;
        if let Some(entry) = self.agents.read().get(agent_id) {
            let happened = !memory.kind.is_derived();
            entry
                .shared
                .count_memory(happened.then_some(memory.importance));
            if happened {
                entry.shared.to_rate(ids[0], &memory.text);
            }
        }
        Ok(ids[0])
    }

    /// Stores what a reflection drew, in one write, and publishes each memory
    /// (`agent_remembered`) and the reflection (`agent_reflected`, drawn by `drawn_by`).
    pub(crate) fn store_reflection(
        &self,
        agent_id: &str,
        drawn: Vec<NewMemory>,
        drawn_by: &str,
    ) -> Result<Vec<i64>, MemoryError> {
        let ceiling = self.max_memories(agent_id);
        let (ids, _) = self.memory.remember_all(agent_id, drawn.clone(), ceiling)?;
        self.remembered(agent_id, &ids, &drawn);
        let memories = ids
            .iter()
            .zip(drawn)
            .map(|(id, m)| crate::memory::DrawnMemory {
                memory_id: *id,
                kind: m.kind,
                text: m.text,
                about: m.about,
                sources: m.sources,
            })
            .collect();
        self.bus.publish(BusMessage::AgentReflected {
            agent_id: agent_id.to_string(),
            memories,
            drawn_by: drawn_by.to_string(),
        });
        Ok(ids)
    }

    /// Keeps `agent_id`'s stream under `cap` ([`crate::mind::compaction`]); returns how many
    /// memories were summed up (0: it was under the cap). Blocking: it reads the database.
    pub(crate) fn compact(&self, agent_id: &str, cap: usize) -> Result<usize, MemoryError> {
        use crate::mind::compaction;
        let mut left = compaction::excess(self.memory.memory_count(agent_id)?, cap);
        let mut summed = 0;
        for bar in compaction::IMPORTANCE_BARS {
            if left == 0 {
                break;
            }
            // Whole summaries: a few more than needed rather than a summary of one.
            let whole = left.div_ceil(compaction::PER_SUMMARY) * compaction::PER_SUMMARY;
            let oldest = self.memory.compactable(agent_id, bar, whole)?;
            for chunk in oldest.chunks(compaction::PER_SUMMARY) {
                let summary = compaction::summary(chunk);
                let ids = summary.sources.clone();
                let (id, _) = self
                    .memory
                    .compact(agent_id, summary.clone(), ids.clone(), cap)?;
                if let Some(embedder) = &self.embedder {
                    embedder.index().remove(agent_id, &ids);
                }
                self.remembered(agent_id, &[id], &[summary]);
                summed += chunk.len();
                left = left.saturating_sub(chunk.len());
            }
        }
        Ok(summed)
    }

    /// The most memories `agent_id` keeps, every kind counted, enforced as each is written
    /// ([`crate::memory::Memory::remember_all`]; 0: no ceiling): a running agent's
    /// `memory.max_memories`; a stored one's from its stored config, else the runtime's.
    pub(crate) fn max_memories(&self, agent_id: &str) -> usize {
        if let Some(entry) = self.agents.read().get(agent_id) {
            return entry.shared.memory.max_memories;
        }
        let stored = match self.memory.agent(agent_id) {
            Ok(record) => record.and_then(|r| MemorySettings::of_stored(&r.config)),
            Err(error) => {
                tracing::warn!(agent = %agent_id, "reading its stored memory settings: {error}");
                None
            }
        };
        stored.map_or(self.options.memory.max_memories, |s| s.max_memories)
    }

    /// Publishes `agent_remembered` for stored memories, and queues them to be embedded.
    fn remembered(&self, agent_id: &str, ids: &[i64], memories: &[NewMemory]) {
        for (memory_id, m) in ids.iter().zip(memories) {
            if let Some(embedder) = &self.embedder {
                embedder.embed(agent_id, *memory_id, &m.text);
            }
            self.bus.publish(BusMessage::AgentRemembered {
                agent_id: agent_id.to_string(),
                memory_id: *memory_id,
                kind: m.kind,
                text: m.text.clone(),
                importance: m.importance,
                game_time: m.game_time,
            });
        }
    }

    /// [`Inner::form`] for a running agent known by its id (nothing if it does not run).
    pub(crate) fn form_for(
        &self,
        agent_id: &str,
        kind: MemoryKind,
        text: String,
        about: Option<&str>,
    ) {
        let shared = self.agents.read().get(agent_id).map(|e| e.shared.clone());
        if let Some(shared) = shared {
            self.form(&shared, kind, text, about);
        }
    }

    /// The game time now.
    pub(crate) fn game_time(&self) -> f64 {
        self.clock.now()
    }
}
