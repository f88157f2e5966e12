//! [AgentRuntime]'s memory calls: planting a memory, recalling, listing and forgetting.

use agents_core::protocol::requests::{ForgetMemory, Remember};
use agents_core::runtime::RuntimeErrorCode;
use godot::prelude::*;

use super::AgentRuntime;
use super::agents::rows_to_array;
use super::failure;
use crate::agent_memory::{recalled_to_array, remember_request};

#[godot_api(secondary)]
impl AgentRuntime {
    /// Plants a memory in an agent's stream (running, or stored in the database): [param text]
    /// is what it now remembers ("The cellar key is under the mat."), 1 to 2,000 characters;
    /// [param kind] is one of the `MEMORY_*` constants of [AgentConstants] (`"fact"` by
    /// default); [param importance] 1–10 (`0`: judged from the kind and text); [param about]
    /// whom it is about (an agent id or the player's id; `""`: no one); [param supersedes] the
    /// older memories it replaces (a belief that turned out wrong stays, marked, and the agent
    /// prefers the new one). Returns the memory's id, or `0` on an error ([method
    /// get_last_error]).
    /// ```gdscript
    /// var runtime: AgentRuntime = $AgentRuntime
    /// var baker_id: String = runtime.list_agents()[0]
    /// var key_id: int = runtime.remember(baker_id, "The cellar key is under the mat.")
    /// runtime.remember(baker_id, "Tom moved the key.", "fact", 8, "", PackedInt64Array([key_id]))
    /// ```
    #[func]
    pub fn remember(
        &mut self,
        agent_id: GString,
        text: GString,
        #[opt(default = "fact")] kind: GString,
        #[opt(default = 0)] importance: i64,
        #[opt(default = "")] about: GString,
        #[opt(default = &PackedInt64Array::new())] supersedes: PackedInt64Array,
    ) -> i64 {
        let id = agent_id.to_string();
        let memory = match remember_request(&text, &kind, importance, &about, &supersedes) {
            Ok(memory) => memory,
            Err(message) => {
                self.report(&id, RuntimeErrorCode::InvalidMessage.as_str(), &message);
                return 0;
            }
        };
        let request = Remember {
            agent_id: id.clone(),
            memory,
        };
        self.call_request(&id, "remember", request)
            .map_or(0, |reply| reply.memory_id)
    }

    /// What an agent (running or stored) recalls for [param query] now, best first, at most
    /// [param limit] (50 at most), scored as for its decisions. Each is a Dictionary with
    /// `memory` (the stored memory: `id`, `kind`, `text`, `importance` 1–10, `about`,
    /// `game_time`, `superseded_by`, …), `score`, and the parts of it from 0 to 1: `recency`,
    /// `importance`, `relevance`, and `semantic` (how close its meaning is, when an
    /// [member embeddings] endpoint answered and the memory has a vector); `in_view` is always
    /// false here. It only looks: the memories are not made recent again. With an embeddings
    /// endpoint it waits for the query's vector (at most
    /// [member AgentEmbeddings.query_timeout_ms]).
    #[func]
    pub fn recall(
        &mut self,
        agent_id: GString,
        query: GString,
        #[opt(default = 10)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "recall", |rt| {
            rt.recall(&id, &query.to_string(), limit).map_err(failure)
        })
        .map(|recalled| recalled_to_array(&recalled))
        .unwrap_or_default()
    }

    /// Forgets one memory of an agent. Returns `false` for an agent or a memory it does not
    /// have (`unknown_memory`).
    #[func]
    pub fn forget_memory(&mut self, agent_id: GString, memory_id: i64) -> bool {
        let id = agent_id.to_string();
        let request = ForgetMemory {
            agent_id: id.clone(),
            memory_id,
        };
        self.call_request(&id, "forget_memory", request).is_ok()
    }

    /// An agent's memories, the newest [param limit] with an id below [param before] (`0`:
    /// from the newest), oldest first, as Dictionaries with `id`, `agent_id`, `kind`, `text`,
    /// `importance`, `about`, `game_time`, `created_at`, `accessed_at` and `superseded_by`
    /// (a key left out: not set). Pass the first one's `id` as [param before] for the page
    /// before. Works for stored agents.
    #[func]
    pub fn get_memories(
        &mut self,
        agent_id: GString,
        #[opt(default = 50)] limit: i64,
        #[opt(default = 0)] before: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        let before = (before > 0).then_some(before);
        self.call_runtime(&id, "get_memories", |rt| {
            rt.memories_page(&id, before, limit).map_err(failure)
        })
        .map(|page| rows_to_array(&page.rows))
        .unwrap_or_default()
    }
}
