//! Where a request is answered in a world served by several processes ([`Remote`]).
//!
//! Each request says where it is answered ([`ClientRequest::route`]):
//!
//! - A request about a running agent ([`Route::Agent`]; [`Route::Task`] for `complete_task`,
//!   the agent the task belongs to, read from the shared memory) is answered by the process
//!   running the agent, when that is another one.
//! - A request binding an agent to something of this process ([`Route::BringHere`]: an app, a
//!   loaded campaign) brings the agent here first (`cluster/handover.rs`), then runs here.
//! - `list_agents` ([`Route::World`]) answers for the whole world: every process lists its own
//!   agents after the cursor, and the lists are merged here into one page in id order (a
//!   process that does not answer in time is left out). A process's list that was cut (more
//!   agents follow it) bounds the page, so paging goes through every agent of the world once.
//! - Everything else ([`Route::Here`]) runs here; so does a request about an agent no process is known to run
//!   (it gets this process's answer: `unknown_agent`, `unknown_task`…).

use std::sync::Arc;

use super::Remote;
use crate::protocol::pages::List;
use crate::protocol::requests::{self, IsReply, ListAgentsResponse, Replied, Reply, Route};
use crate::protocol::{AgentInfo, ClientRequest, RequestId, ServerMessage};
use crate::runtime::{Runtime, id_order};

/// Where a request goes.
pub(crate) enum Routed {
    /// Run it here.
    Here(ClientRequest),
    /// Answered elsewhere (or refused): this is the reply.
    Answered(ServerMessage),
}

/// Routes `request` (see the module docs).
pub(crate) async fn route(
    remote: &dyn Remote,
    runtime: &Arc<Runtime>,
    request: ClientRequest,
    request_id: &Option<RequestId>,
) -> Routed {
    let runs_here = |agent: &str| runtime.is_running(agent);
    let agent = match request.route() {
        Route::Here => return Routed::Here(request),
        Route::BringHere(agent) => {
            let Some(owner) = remote.owner(agent).filter(|_| !runs_here(agent)) else {
                return Routed::Here(request);
            };
            return match remote.bring_here(owner, agent.to_string()).await {
                Ok(()) => Routed::Here(request),
                Err(e) => Routed::Answered(requests::error(e.code, e.message, request_id.clone())),
            };
        }
        Route::World => {
            let ClientRequest::ListAgents(list) = &request else {
                // Only `list_agents` is answered by the whole world.
                return Routed::Here(request);
            };
            return match List::RunningAgents.key_of(list.cursor.as_deref()) {
                // A bad cursor: this process's answer says so.
                Err(_) => Routed::Here(request),
                Ok(after) => {
                    let limit = list.limit.unwrap_or(requests::DEFAULT_LIST_LIMIT) as usize;
                    let others = remote.gather(request.clone()).await;
                    Routed::Answered(world_agents(
                        runtime,
                        others,
                        after.as_deref(),
                        limit,
                        request_id.clone(),
                    ))
                }
            };
        }
        Route::Agent(agent) => agent.to_string(),
        Route::Task(task_id) => {
            let runtime = runtime.clone();
            match tokio::task::spawn_blocking(move || runtime.memory().task(task_id)).await {
                Ok(Ok(Some(task))) => task.agent_id,
                // Unknown, or unreadable: this process's answer says so.
                _ => return Routed::Here(request),
            }
        }
    };
    match remote.owner(&agent).filter(|_| !runs_here(&agent)) {
        Some(owner) => Routed::Answered(
            remote
                .forward(owner, agent, request, request_id.clone())
                .await,
        ),
        None => Routed::Here(request),
    }
}

/// One `list_agents` page of the world: this process's agents after `after` and the other
/// processes' pages (`others`, their replies to the same request), merged in id order. A list
/// that was cut — this process's beyond `limit`, another's with a `next_cursor` — ends where
/// the page may end: agents past the first such end could be preceded by ones not listed yet.
fn world_agents(
    runtime: &Runtime,
    others: Vec<ServerMessage>,
    after: Option<&str>,
    limit: usize,
    request_id: Option<RequestId>,
) -> ServerMessage {
    let mut here: Vec<AgentInfo> = runtime
        .list()
        .into_iter()
        .map(requests::agent_info)
        .filter(|a| after.is_none_or(|after| id_order(&a.agent_id, after).is_gt()))
        .take(limit.saturating_add(1))
        .collect();
    let mut bound: Option<String> = None;
    let mut narrow = |last: Option<&AgentInfo>| {
        if let Some(last) = last
            && bound
                .as_deref()
                .is_none_or(|b| id_order(&last.agent_id, b).is_lt())
        {
            bound = Some(last.agent_id.clone());
        }
    };
    if here.len() > limit {
        here.truncate(limit);
        narrow(here.last());
    }
    let mut agents = here;
    for reply in others {
        if let ServerMessage::Reply(Reply::ListAgentsResponse(Replied {
            reply:
                ListAgentsResponse {
                    agents: theirs,
                    next_cursor,
                },
            ..
        })) = reply
        {
            if next_cursor.is_some() {
                narrow(theirs.last());
            }
            agents.extend(theirs);
        }
    }
    agents.sort_by(|a, b| id_order(&a.agent_id, &b.agent_id));
    // An agent moving between processes may be listed by both.
    agents.dedup_by(|a, b| a.agent_id == b.agent_id);
    if let Some(bound) = &bound {
        agents.retain(|a| id_order(&a.agent_id, bound).is_le());
    }
    requests::agents_page(agents, after, limit, bound.is_some()).message(request_id)
}
