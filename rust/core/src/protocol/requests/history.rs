//! Reads of an agent's stored history (running or stored agents), a page at a time: its
//! conversation, tasks, state transitions, traced model calls; and the stored agents.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::agents::DEFAULT_LIST_LIMIT;
use super::{Cx, Handled, Request, Route, Runs};
use crate::protocol::pages::{self, List};
use crate::protocol::{ErrorCode, ServerMessage};
use crate::tools::ToolRegistry;

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
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Here
    }

    fn app(&self) -> Option<&str> {
        None
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Blocking
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let key = match self
            .cursor
            .as_deref()
            .map(|c| List::Conversation.number(c))
            .transpose()
        {
            Ok(key) => key,
            Err(message) => return cx.error(ErrorCode::InvalidRequest, message),
        };
        let limit = self.limit.unwrap_or(DEFAULT_CONVERSATION_LIMIT) as usize;
        let agent_id = self.agent_id;
        cx.reply(
            cx.runtime
                .conversation_page(&agent_id, key, limit)
                .map(|mut page| {
                    if pages::fit_from_end(&mut page.rows) {
                        page.next = page.rows.first().map(|r| r.id);
                    }
                    ServerMessage::GetConversationResponse {
                        request_id: cx.id(),
                        agent_id,
                        messages: page.rows,
                        next_cursor: page.next.map(|k| List::Conversation.cursor(k)),
                    }
                }),
        )
    }
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
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Here
    }

    fn app(&self) -> Option<&str> {
        None
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Blocking
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let key = match self
            .cursor
            .as_deref()
            .map(|c| List::Tasks.number(c))
            .transpose()
        {
            Ok(key) => key,
            Err(message) => return cx.error(ErrorCode::InvalidRequest, message),
        };
        let limit = self.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
        let agent_id = self.agent_id;
        cx.reply(
            cx.runtime
                .tasks_page(&agent_id, key, limit)
                .map(|mut page| {
                    if pages::fit_from_start(&mut page.rows) {
                        page.next = page.rows.last().map(|r| r.id);
                    }
                    ServerMessage::GetTasksResponse {
                        request_id: cx.id(),
                        agent_id,
                        tasks: page.rows,
                        next_cursor: page.next.map(|k| List::Tasks.cursor(k)),
                    }
                }),
        )
    }
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
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Here
    }

    fn app(&self) -> Option<&str> {
        None
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Blocking
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let key = match self
            .cursor
            .as_deref()
            .map(|c| List::StateHistory.number(c))
            .transpose()
        {
            Ok(key) => key,
            Err(message) => return cx.error(ErrorCode::InvalidRequest, message),
        };
        let limit = self.limit.unwrap_or(DEFAULT_HISTORY_LIMIT) as usize;
        let agent_id = self.agent_id;
        cx.reply(
            cx.runtime
                .state_history_page(&agent_id, key, limit)
                .map(|mut page| {
                    if pages::fit_from_end(&mut page.rows) {
                        page.next = page.rows.first().map(|r| r.id);
                    }
                    ServerMessage::GetStateHistoryResponse {
                        request_id: cx.id(),
                        agent_id,
                        transitions: page.rows,
                        next_cursor: page.next.map(|k| List::StateHistory.cursor(k)),
                    }
                }),
        )
    }
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
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Here
    }

    fn app(&self) -> Option<&str> {
        None
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Blocking
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let key = match self
            .cursor
            .as_deref()
            .map(|c| List::Trace.number(c))
            .transpose()
        {
            Ok(key) => key,
            Err(message) => return cx.error(ErrorCode::InvalidRequest, message),
        };
        let limit = self.limit.unwrap_or(DEFAULT_HISTORY_LIMIT) as usize;
        let agent_id = self.agent_id;
        cx.reply(
            cx.runtime
                .agent_trace_page(&agent_id, key, limit)
                .map(|mut page| {
                    if pages::fit_from_end(&mut page.rows) {
                        page.next = page.rows.first().map(|r| r.id);
                    }
                    ServerMessage::GetAgentTraceResponse {
                        request_id: cx.id(),
                        agent_id,
                        calls: page.rows,
                        next_cursor: page.next.map(|k| List::Trace.cursor(k)),
                    }
                }),
        )
    }
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
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Here
    }

    fn app(&self) -> Option<&str> {
        None
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Blocking
    }

    fn handle(self, cx: &Cx<'_>) -> Handled {
        let after = match self
            .cursor
            .as_deref()
            .map(|c| List::StoredAgents.number(c))
            .transpose()
        {
            Ok(after) => after,
            Err(message) => return cx.error(ErrorCode::InvalidRequest, message),
        };
        let limit = self.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
        cx.reply(cx.runtime.stored_agents_page(after, limit).map(|mut page| {
            for row in &mut page.rows {
                crate::brain::spec::redact_stored_config(&mut row.config);
            }
            if pages::fit_from_start(&mut page.rows) {
                page.next = page
                    .rows
                    .last()
                    .and_then(|a| crate::memory::agent_number(&a.agent_id));
            }
            ServerMessage::ListStoredAgentsResponse {
                request_id: cx.id(),
                agents: page.rows,
                next_cursor: page.next.map(|k| List::StoredAgents.cursor(k)),
            }
        }))
    }
}
