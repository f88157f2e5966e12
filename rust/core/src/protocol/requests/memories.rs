//! An agent's memory stream (running or stored agents): plant a memory, recall by a query,
//! forget one, page through them. The agent's id is the only thing a client names: never a
//! file, and every size is bounded (a memory's text, the limit of a page or a recall).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::history::{Keep, page};
use super::{Cx, Handled, Request};
use crate::protocol::ServerMessage;
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
    const WRITES: bool = true;

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let game_time = cx.runtime.game_time();
        cx.reply(
            cx.runtime
                .remember(&self.agent_id, self.memory)
                .map(|memory_id| ServerMessage::RememberResponse {
                    request_id: cx.id(),
                    agent_id: self.agent_id,
                    memory_id,
                    game_time,
                }),
        )
    }
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
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let limit = self.limit.unwrap_or(DEFAULT_RECALL_LIMIT) as usize;
        let game_time = cx.runtime.game_time();
        cx.reply(
            cx.runtime
                .recall(&self.agent_id, &self.query, limit.min(MAX_RECALLED))
                .map(|memories| ServerMessage::RecallResponse {
                    request_id: cx.id(),
                    agent_id: self.agent_id,
                    game_time,
                    memories,
                }),
        )
    }
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
    const WRITES: bool = true;

    fn handle(self, cx: &Cx<'_>) -> Handled {
        cx.reply(cx.runtime.forget(&self.agent_id, self.memory_id).map(|()| {
            ServerMessage::ForgetMemoryResponse {
                request_id: cx.id(),
                agent_id: self.agent_id,
                memory_id: self.memory_id,
            }
        }))
    }
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
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let limit = self
            .limit
            .unwrap_or(DEFAULT_MEMORY_PAGE)
            .min(crate::limits::MAX_PAGE as u32) as usize;
        let agent_id = self.agent_id;
        page(
            cx,
            List::Memories,
            self.cursor.as_deref(),
            Keep::Newest,
            |key| cx.runtime.memories_page(&agent_id, key, limit),
            |row| Some(row.id),
            |memories, next_cursor| ServerMessage::ListMemoriesResponse {
                request_id: cx.id(),
                agent_id: agent_id.clone(),
                memories,
                next_cursor,
            },
        )
    }
}
