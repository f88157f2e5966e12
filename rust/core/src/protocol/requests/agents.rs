//! Requests about running agents: spawn, terminate, state, the list, speech, tasks, token
//! budgets.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Answer, Cx, Request, Route, Runs};
use crate::geometry::Position;
use crate::memory::TaskRow;
use crate::protocol::pages::{self, List};
use crate::protocol::{AgentInfo, ProtocolErrorCode};
use crate::runtime::{AgentConfig, AgentSnapshot, Runtime, RuntimeError};
use crate::tools::ToolRegistry;

/// Default `limit` of `list_agents`, `list_stored_agents` and `get_tasks`.
pub const DEFAULT_LIST_LIMIT: u32 = crate::limits::MAX_PAGE as u32;

/// Liveness check → `pong`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ping {}

impl Request for Ping {
    type Reply = Pong;
    const WRITES: bool = false;

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, _cx: &Cx<'_>) -> Answer<Self::Reply> {
        Answer::Now(Ok(Pong {}))
    }
}

/// Reply to `ping`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pong {}

/// Spawn (or, with `agent_config.agent_id`, resume) an agent → `agent_spawn_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpawnRequest {
    /// `{name, role, prompt, brain | cli_backend, initial_position: {x, y}, …}`.
    pub agent_config: Box<AgentConfig>,
}

impl Request for AgentSpawnRequest {
    type Reply = AgentSpawnResponse;
    const WRITES: bool = true;

    fn app(&self) -> Option<&str> {
        self.agent_config.app_id.as_deref()
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .spawn(*self.agent_config)
            .map(|agent_id| AgentSpawnResponse { agent_id }))
        .into()
    }
}

/// Reply to `agent_spawn_request`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentSpawnResponse {
    /// The new (or resumed) agent.
    pub agent_id: String,
}

/// Terminate an agent → `agent_terminate_response` (then the `agent_removed` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentTerminateRequest {
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
}

impl Request for AgentTerminateRequest {
    type Reply = AgentTerminateResponse;
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let agent_id = self.agent_id;
        (cx.runtime
            .terminate(&agent_id)
            .map(|()| AgentTerminateResponse { agent_id }))
        .into()
    }
}

/// Reply to `agent_terminate_request`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentTerminateResponse {
    /// The terminated agent.
    pub agent_id: String,
}

/// One running agent's state → `get_agent_state_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetAgentState {
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
}

impl Request for GetAgentState {
    type Reply = GetAgentStateResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (match cx.runtime.state(&self.agent_id) {
            Some(s) => Ok(GetAgentStateResponse {
                agent: agent_info(s),
            }),
            None => Err(RuntimeError::UnknownAgent(self.agent_id)),
        })
        .into()
    }
}

/// Reply to `get_agent_state`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetAgentStateResponse {
    /// The agent.
    pub agent: AgentInfo,
}

/// Running agents, by id, a page at a time → `list_agents_response`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAgents {
    /// Rows per page (default 500, at most 500).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::limits::MAX_PAGE))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page; absent: the first page.
    #[serde(default)]
    #[schemars(length(max = 128))]
    pub cursor: Option<String>,
}

impl Request for ListAgents {
    type Reply = ListAgentsResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::World
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let after = match self
            .cursor
            .as_deref()
            .map(|c| List::RunningAgents.key(c))
            .transpose()
        {
            Ok(after) => after,
            Err(message) => return Answer::refused(ProtocolErrorCode::InvalidRequest, message),
        };
        let agents = cx.runtime.list().into_iter().map(agent_info);
        let limit = self.limit.unwrap_or(DEFAULT_LIST_LIMIT) as usize;
        Answer::Now(Ok(agents_page(agents, after.as_deref(), limit, false)))
    }
}

/// Reply to `list_agents`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListAgentsResponse {
    /// Running agents, by id.
    pub agents: Vec<AgentInfo>,
    /// Pass as `cursor` for the next page; `null`: this is the last one.
    pub next_cursor: Option<String>,
}

/// Say something to an agent (as the player unless `sender` is given) →
/// `send_message_response` with the line's `message_id`; the agent answers with an
/// `agent_speech` event, then an `agent_replied` event whose `in_reply_to` names the line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessage {
    /// The agent spoken to.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// The line.
    #[schemars(length(max = crate::limits::MAX_MESSAGE_CHARS))]
    pub content: String,
    /// Who speaks (default: the runtime's player id, `player_0`).
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_SENDER_CHARS))]
    pub sender: Option<String>,
}

impl Request for SendMessage {
    type Reply = SendMessageResponse;
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let result = match &self.sender {
            Some(sender) => cx
                .runtime
                .send_message_from(sender, &self.agent_id, &self.content),
            None => cx.runtime.send_message(&self.agent_id, &self.content),
        };
        (result.map(|message_id| SendMessageResponse {
            agent_id: self.agent_id,
            message_id,
        }))
        .into()
    }
}

/// Reply to `send_message`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SendMessageResponse {
    /// The agent spoken to.
    pub agent_id: String,
    /// The line's id: the `agent_replied` event of the decision that answers it lists it
    /// in `in_reply_to`.
    pub message_id: i64,
}

/// Assign a task → `assign_task_response` (and the `task_assigned` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssignTask {
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// The task.
    #[schemars(length(max = crate::limits::MAX_TASK_NAME_CHARS))]
    pub task_name: String,
}

impl Request for AssignTask {
    type Reply = AssignTaskResponse;
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .assign_task(&self.agent_id, &self.task_name)
            .map(|task| AssignTaskResponse { task }))
        .into()
    }
}

/// Reply to `assign_task`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssignTaskResponse {
    /// The new task.
    pub task: TaskRow,
}

/// Complete a task → `complete_task_response` (and the `task_completed` event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteTask {
    /// The task's id.
    pub task_id: i64,
}

impl Request for CompleteTask {
    type Reply = CompleteTaskResponse;
    const WRITES: bool = true;

    fn route(&self) -> Route<'_> {
        Route::Task(self.task_id)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .complete_task(self.task_id)
            .map(|task| CompleteTaskResponse { task }))
        .into()
    }
}

/// Reply to `complete_task`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompleteTaskResponse {
    /// The completed task.
    pub task: TaskRow,
}

/// Tokens spent by model brains and the budget → `get_token_usage_response`: the
/// runtime's, or with `agent_id` a running agent's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetTokenUsage {
    /// A running agent; absent: the whole runtime.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: Option<String>,
}

impl Request for GetTokenUsage {
    type Reply = GetTokenUsageResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        self.agent_id.as_deref().map_or(Route::Here, Route::Agent)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (token_usage(cx.runtime, self.agent_id.as_deref()).map(|(spent, limit)| {
            GetTokenUsageResponse {
                agent_id: self.agent_id,
                spent,
                limit,
            }
        }))
        .into()
    }
}

/// Reply to `get_token_usage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GetTokenUsageResponse {
    /// The agent asked about; `null`: the whole runtime.
    pub agent_id: Option<String>,
    /// Tokens spent so far.
    pub spent: u64,
    /// The budget; `null`: no limit.
    pub limit: Option<u64>,
}

/// Sets, raises, lowers or removes a token budget → `set_token_budget_response`: the
/// runtime's, or with `agent_id` a running agent's. An agent stopped by a spent budget
/// thinks again once the budget allows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetTokenBudget {
    /// A running agent; absent: the whole runtime.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: Option<String>,
    /// The most tokens (input and output, as providers report them) in all; `null` or
    /// absent: no limit.
    #[serde(default)]
    pub limit: Option<u64>,
}

impl Request for SetTokenBudget {
    type Reply = SetTokenBudgetResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        self.agent_id.as_deref().map_or(Route::Here, Route::Agent)
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let set = match &self.agent_id {
            Some(agent) => cx.runtime.set_agent_token_budget(agent, self.limit),
            None => {
                cx.runtime.set_token_budget(self.limit);
                Ok(())
            }
        };
        (set.and_then(|()| token_usage(cx.runtime, self.agent_id.as_deref()))
            .map(|(spent, limit)| SetTokenBudgetResponse {
                agent_id: self.agent_id,
                spent,
                limit,
            }))
        .into()
    }
}

/// Reply to `set_token_budget`: the budget as it now is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SetTokenBudgetResponse {
    /// The agent whose budget was set; `null`: the whole runtime.
    pub agent_id: Option<String>,
    /// Tokens spent so far.
    pub spent: u64,
    /// The budget now; `null`: no limit.
    pub limit: Option<u64>,
}

/// Set where a running agent is, as the client that owns the world sees it (its physics, its
/// navigation) → `set_agent_position_response`. "Who is near me" (hearing, the brain's
/// `nearby`) uses it; no event is sent, so a client may report every frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetAgentPosition {
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// Where it is (world units; any finite position).
    pub position: Position,
}

impl Request for SetAgentPosition {
    type Reply = SetAgentPositionResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .set_position(&self.agent_id, self.position)
            .map(|()| SetAgentPositionResponse {
                agent_id: self.agent_id,
                position: self.position,
            }))
        .into()
    }
}

/// Reply to `set_agent_position`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SetAgentPositionResponse {
    /// The agent.
    pub agent_id: String,
    /// Where it is now.
    pub position: Position,
}

/// Tell a running agent what it perceives ("The cellar door is locked.") →
/// `observe_response`. The line is shown to its next decision; it is not a message: the agent
/// neither decides because of it nor answers it. The newest 32 wait.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Observe {
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// What it perceives (not empty; at most a memory's length, 2,000 characters).
    #[schemars(length(max = crate::limits::MAX_OBSERVATION_CHARS))]
    pub text: String,
}

impl Request for Observe {
    type Reply = ObserveResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        (cx.runtime
            .observe(&self.agent_id, &self.text)
            .map(|()| ObserveResponse {
                agent_id: self.agent_id,
            }))
        .into()
    }
}

/// Reply to `observe`: the line waits for the agent's next decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ObserveResponse {
    /// The agent.
    pub agent_id: String,
}

/// Finish a move the client carried out for an agent (`agent_move_requested`, for an agent
/// spawned with `movement: "requested"`) → `finish_move_response`: it `arrived`, or it is
/// `blocked` and `reason` says why ("the door is locked"). The agent's next decision is told,
/// and `agent_move_finished` is published. A move replaced by a newer one, or finished
/// already, is `unknown_move`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishMove {
    /// The agent.
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: String,
    /// The move (`agent_move_requested.move_id`).
    pub move_id: u64,
    /// `arrived` or `blocked`.
    pub outcome: crate::moves::MoveEnd,
    /// Why it is blocked (required then, at most 500 characters; not given when it arrived).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::moves::MAX_BLOCKED_REASON_CHARS))]
    pub reason: Option<String>,
}

impl Request for FinishMove {
    type Reply = FinishMoveResponse;
    const WRITES: bool = false;

    fn route(&self) -> Route<'_> {
        Route::Agent(&self.agent_id)
    }

    fn runs(&self, _tools: &ToolRegistry) -> Runs {
        Runs::Inline
    }

    fn handle(self, cx: &Cx<'_>) -> Answer<Self::Reply> {
        let outcome = crate::moves::MoveOutcome::from_parts(self.outcome, self.reason.as_deref())
            .map_err(RuntimeError::InvalidMessage);
        (outcome
            .and_then(|outcome| {
                cx.runtime
                    .finish_move(&self.agent_id, self.move_id, outcome)
            })
            .map(|()| FinishMoveResponse {
                agent_id: self.agent_id,
                move_id: self.move_id,
            }))
        .into()
    }
}

/// Reply to `finish_move`: `agent_move_finished` is published, and the agent's next decision
/// is told how the move ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FinishMoveResponse {
    /// The agent.
    pub agent_id: String,
    /// The move.
    pub move_id: u64,
}

/// Tokens spent and the budget: a running agent's, or the runtime's.
fn token_usage(
    runtime: &Runtime,
    agent_id: Option<&str>,
) -> Result<(u64, Option<u64>), RuntimeError> {
    match agent_id {
        Some(agent) => runtime.agent_token_usage(agent),
        None => Ok(runtime.token_usage()),
    }
}

/// One page of `list_agents` from running agents sorted by id: those after `after`, at most
/// `limit`, within the page's byte budget. `more`: agents that are not in `agents` follow the
/// last of them (a part of the world whose list was cut), so a `next_cursor` is given.
pub fn agents_page(
    agents: impl IntoIterator<Item = AgentInfo>,
    after: Option<&str>,
    limit: usize,
    more: bool,
) -> ListAgentsResponse {
    let mut agents: Vec<AgentInfo> = agents
        .into_iter()
        .filter(|a| after.is_none_or(|after| crate::runtime::id_order(&a.agent_id, after).is_gt()))
        .take(limit.saturating_add(1))
        .collect();
    let more = more || agents.len() > limit;
    agents.truncate(limit);
    let cut = pages::fit_from_start(&mut agents);
    let next_cursor = (more || cut)
        .then(|| {
            agents
                .last()
                .map(|a| List::RunningAgents.cursor(&a.agent_id))
        })
        .flatten();
    ListAgentsResponse {
        agents,
        next_cursor,
    }
}

/// A runtime snapshot as protocol `AgentInfo`.
pub fn agent_info(s: AgentSnapshot) -> AgentInfo {
    AgentInfo {
        agent_id: s.agent_id,
        name: s.name,
        role: s.role,
        brain: s.brain,
        state: s.state,
        position: s.position,
        current_task_id: s.current_task.as_ref().map(|t| t.id),
        current_task: s.current_task.map(|t| t.task_name),
    }
}
