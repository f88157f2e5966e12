//! An agent's memory stream (running or stored agents): plant a memory, recall by a query,
//! forget one, page through them. The agent's id is the only thing a client names: never a
//! file, and every size is bounded (a memory's text, the limit of a page or a recall).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::history::{Keep, page};
use super::{Answer, Cx, Request};
use crate::protocol::pages::List;
use crate::runtime::{MAX_RECALLED, Remember as Planted};

/// Default `limit` of `recall`.
pub const DEFAULT_RECALL_LIMIT: u32 = 10;
/// Default `limit` of `list_memories`.
pub const DEFAULT_MEMORY_PAGE: u32 = 100;

/// Plant a memory in an agent's stream ("The cellar key is under the mat.") →
/// `remember_response` with its id, once it is stored. It is stamped with the game time now,
/// and its importance is judged from its kind and text unless given. `supersedes` names older
/// memories of the agent it replaces (a belief that turned out wrong): they stay, marked, and
/// the agent prefers the new one. Bad content is `invalid_message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Remember {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// The memory.
    pub memory: Planted,
}

impl Request for Remember {
    type Reply = RememberResponse;
    const WRITES: bool = true;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let game_time = cx.runtime.game_time();
        (cx.runtime
            .remember(&self.agent_id, self.memory)
            .map(|memory_id| RememberResponse {
                agent_id: self.agent_id,
                memory_id,
                game_time,
            }))
        .into()
    }
}

/// Reply to `remember`, once the memory is stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RememberResponse {
    /// The agent.
    pub agent_id: String,
    /// The memory's id (for `forget_memory`, or to supersede it later).
    pub memory_id: i64,
    /// The game time it was stamped with, in seconds.
    pub game_time: f64,
}

/// What an agent recalls for `query` now, best first, scored as for its decisions (recency,
/// importance, relevance) → `recall_response`. Only looks: the memories are not made recent
/// again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recall {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// What to recall by (its plain words; common words are skipped).
    #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
    pub query: String,
    /// How many (default 10, at most 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

impl Request for Recall {
    type Reply = RecallResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self.limit.unwrap_or(DEFAULT_RECALL_LIMIT) as usize;
        let game_time = cx.runtime.game_time();
        (cx.runtime
            .recall(&self.agent_id, &self.query, limit.min(MAX_RECALLED))
            .map(|memories| RecallResponse {
                agent_id: self.agent_id,
                game_time,
                memories,
            }))
        .into()
    }
}

/// Reply to `recall`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecallResponse {
    /// The agent.
    pub agent_id: String,
    /// The game time the recall was scored at, in seconds.
    pub game_time: f64,
    /// The memories recalled, best first, each with its score and the parts of it.
    pub memories: Vec<crate::mind::Recalled>,
}

/// Forget one memory of an agent (its row and its place in the keyword index) →
/// `forget_memory_response`. A memory the agent does not have is `unknown_memory`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetMemory {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// The memory.
    #[schemars(range(min = 1))]
    pub memory_id: i64,
}

impl Request for ForgetMemory {
    type Reply = ForgetMemoryResponse;
    const WRITES: bool = true;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .forget(&self.agent_id, self.memory_id)
            .map(|()| ForgetMemoryResponse {
                agent_id: self.agent_id,
                memory_id: self.memory_id,
            }))
        .into()
    }
}

/// Reply to `forget_memory`, once the memory is gone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForgetMemoryResponse {
    /// The agent.
    pub agent_id: String,
    /// The memory forgotten.
    pub memory_id: i64,
}

/// A page of an agent's memories, oldest first within the page → `list_memories_response`;
/// `next_cursor` continues toward older ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListMemories {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// How many of the newest per page (default 100, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page (older memories); absent: the newest.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for ListMemories {
    type Reply = ListMemoriesResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self
            .limit
            .unwrap_or(DEFAULT_MEMORY_PAGE)
            .min(crate::limits::MAX_PAGE as u32) as usize;
        let agent_id = self.agent_id;
        page(
            List::Memories,
            self.cursor.as_deref(),
            Keep::Newest,
            |key| cx.runtime.memories_page(&agent_id, key, limit),
            |row| Some(row.id),
            |memories, next_cursor| ListMemoriesResponse {
                agent_id: agent_id.clone(),
                memories,
                next_cursor,
            },
        )
    }
}

/// Reply to `list_memories`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListMemoriesResponse {
    /// The agent.
    pub agent_id: String,
    /// Memories, oldest first within the page.
    pub memories: Vec<crate::memory::StoredMemory>,
    /// Pass as `cursor` for the page of older memories; `null`: there are none.
    pub next_cursor: Option<String>,
}
