//! Reads of an agent's stored history (running or stored agents), a page at a time: its
//! conversation, tasks, state transitions, traced model calls; and the stored agents.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::agents::DEFAULT_LIST_LIMIT;
use super::{Answer, Cx, Request};
use crate::memory::{BrainCallRow, ConversationRow, Page, StateChangeRow, TaskRow};
use crate::protocol::ProtocolErrorCode;
use crate::protocol::pages::{self, List};
use crate::runtime::RuntimeError;

/// Default `limit` of `get_conversation`.
pub const DEFAULT_CONVERSATION_LIMIT: u32 = 50;
/// Default `limit` of `get_state_history` and `get_agent_trace`.
pub const DEFAULT_HISTORY_LIMIT: u32 = 100;

/// An agent's conversation memory, oldest first → `get_conversation_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetConversation {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// How many of the latest lines per page (default 50, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page (older lines); absent: the latest lines.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for GetConversation {
    type Reply = GetConversationResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self.limit.unwrap_or(DEFAULT_CONVERSATION_LIMIT) as usize;
        let agent_id = self.agent_id;
        page(
            List::Conversation,
            self.cursor.as_deref(),
            Keep::Newest,
            |key| cx.runtime.conversation_page(&agent_id, key, limit),
            |row| Some(row.id),
            |messages, next_cursor| GetConversationResponse {
                agent_id: agent_id.clone(),
                messages,
                next_cursor,
            },
        )
    }
}

/// Reply to `get_conversation`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetConversationResponse {
    /// The agent.
    pub agent_id: String,
    /// Lines, oldest first.
    pub messages: Vec<ConversationRow>,
    /// Pass as `cursor` for the page of older lines; `null`: there are none.
    pub next_cursor: Option<String>,
}

/// An agent's tasks, oldest first → `get_tasks_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetTasks {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// Rows per page (default 500, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page; absent: the first page.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for GetTasks {
    type Reply = GetTasksResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
        let agent_id = self.agent_id;
        page(
            List::Tasks,
            self.cursor.as_deref(),
            Keep::Oldest,
            |key| cx.runtime.tasks_page(&agent_id, key, limit),
            |row| Some(row.id),
            |tasks, next_cursor| GetTasksResponse {
                agent_id: agent_id.clone(),
                tasks,
                next_cursor,
            },
        )
    }
}

/// Reply to `get_tasks`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetTasksResponse {
    /// The agent.
    pub agent_id: String,
    /// Tasks, oldest first.
    pub tasks: Vec<TaskRow>,
    /// Pass as `cursor` for the next page; `null`: this is the last one.
    pub next_cursor: Option<String>,
}

/// An agent's state transitions, oldest first → `get_state_history_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetStateHistory {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// How many of the latest transitions per page (default 100, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page (older transitions); absent: the latest.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for GetStateHistory {
    type Reply = GetStateHistoryResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self.limit.unwrap_or(DEFAULT_HISTORY_LIMIT) as usize;
        let agent_id = self.agent_id;
        page(
            List::StateHistory,
            self.cursor.as_deref(),
            Keep::Newest,
            |key| cx.runtime.state_history_page(&agent_id, key, limit),
            |row| Some(row.id),
            |transitions, next_cursor| GetStateHistoryResponse {
                agent_id: agent_id.clone(),
                transitions,
                next_cursor,
            },
        )
    }
}

/// Reply to `get_state_history`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetStateHistoryResponse {
    /// The agent.
    pub agent_id: String,
    /// Transitions, oldest first.
    pub transitions: Vec<StateChangeRow>,
    /// Pass as `cursor` for the page of older transitions; `null`: there are none.
    pub next_cursor: Option<String>,
}

/// An agent's traced model calls (`brain_calls`), oldest first → `get_agent_trace_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAgentTrace {
    /// The agent (running or stored).
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// How many of the latest calls per page (default 100, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page (older calls); absent: the latest.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for GetAgentTrace {
    type Reply = GetAgentTraceResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self.limit.unwrap_or(DEFAULT_HISTORY_LIMIT) as usize;
        let agent_id = self.agent_id;
        page(
            List::Trace,
            self.cursor.as_deref(),
            Keep::Newest,
            |key| cx.runtime.agent_trace_page(&agent_id, key, limit),
            |row| Some(row.id),
            |calls, next_cursor| GetAgentTraceResponse {
                agent_id: agent_id.clone(),
                calls,
                next_cursor,
            },
        )
    }
}

/// Reply to `get_agent_trace`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetAgentTraceResponse {
    /// The agent.
    pub agent_id: String,
    /// Model calls, oldest first.
    pub calls: Vec<BrainCallRow>,
    /// Pass as `cursor` for the page of older calls; `null`: there are none.
    pub next_cursor: Option<String>,
}

/// The agents stored in the database, by number, a page at a time →
/// `list_stored_agents_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListStoredAgents {
    /// Rows per page (default 500, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page; absent: the first page.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for ListStoredAgents {
    type Reply = ListStoredAgentsResponse;
    const WRITES: bool = false;

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let limit = self.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
        page(
            List::StoredAgents,
            self.cursor.as_deref(),
            Keep::Oldest,
            |after| {
                let mut page = cx.runtime.stored_agents_page(after, limit)?;
                for row in &mut page.rows {
                    crate::brain::spec::redact_stored_config(&mut row.record.config);
                }
                Ok(page)
            },
            |row| crate::memory::agent_number(&row.record.agent_id),
            |agents, next_cursor| ListStoredAgentsResponse {
                agents,
                next_cursor,
            },
        )
    }
}

/// Reply to `list_stored_agents`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListStoredAgentsResponse {
    /// Stored agents, by number; one a resume could not start says what it waits for
    /// (`waiting_for`).
    pub agents: Vec<crate::runtime::StoredAgent>,
    /// Pass as `cursor` for the next page; `null`: this is the last one.
    pub next_cursor: Option<String>,
}

/// Which end of a page stays when it is cut to the reply's size.
pub(super) enum Keep {
    /// The newest rows (lists read backwards: the next page holds older rows).
    Newest,
    /// The oldest rows (lists read forwards).
    Oldest,
}

/// One page of a stored list: `cursor` read as a key of `list`, the rows fetched after (or
/// before) it, cut to the reply's byte budget keeping `keep`'s end — the next page then starts
/// at the row the cut stopped at (`key` of a row) — and the reply made of the rows and the next
/// cursor. A bad cursor is `invalid_request`.
pub(super) fn page<T: Serialize, R>(
    list: List,
    cursor: Option<&str>,
    keep: Keep,
    fetch: impl FnOnce(Option<i64>) -> Result<Page<T>, RuntimeError>,
    key: impl Fn(&T) -> Option<i64>,
    reply: impl FnOnce(Vec<T>, Option<String>) -> R,
) -> Answer<R> {
    let start = match cursor.map(|c| list.number(c)).transpose() {
        Ok(start) => start,
        Err(message) => return Answer::refused(ProtocolErrorCode::InvalidRequest, message),
    };
    (fetch(start).map(|mut page| {
        let (cut, edge) = match keep {
            Keep::Newest => (pages::fit_from_end(&mut page.rows), page.rows.first()),
            Keep::Oldest => (pages::fit_from_start(&mut page.rows), page.rows.last()),
        };
        if cut {
            page.next = edge.and_then(&key);
        }
        reply(page.rows, page.next.map(|k| list.cursor(k)))
    }))
    .into()
}
