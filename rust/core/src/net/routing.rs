//! Where a request is answered in a world served by several processes ([`Remote`]).
//!
//! - A request about a running agent ([`ClientRequest::routed_agent`]; for `complete_task`, the
//!   agent the task belongs to, read from the shared memory) is answered by the process running
//!   the agent, when that is another one.
//! - A request binding an agent to something of this process ([`ClientRequest::placed_agent`]:
//!   an app, a loaded campaign) brings the agent here first (`cluster/handover.rs`), then runs
//!   here.
//! - Everything else runs here; so does a request about an agent no process is known to run
//!   (it gets this process's answer: `unknown_agent`, `unknown_task`…).

use std::sync::Arc;

use super::Remote;
use crate::protocol::dispatch;
use crate::protocol::{ClientRequest, RequestId, ServerMessage};
use crate::runtime::Runtime;

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
    if let Some(agent) = request.placed_agent() {
        let Some(owner) = remote.owner(agent).filter(|_| !runs_here(agent)) else {
            return Routed::Here(request);
        };
        return match remote.bring_here(owner, agent.to_string()).await {
            Ok(()) => Routed::Here(request),
            Err(e) => Routed::Answered(dispatch::error(e.code, e.message, request_id.clone())),
        };
    }
    let agent = match &request {
        ClientRequest::CompleteTask { task_id } => {
            let (runtime, task_id) = (runtime.clone(), *task_id);
            match tokio::task::spawn_blocking(move || runtime.memory().task(task_id)).await {
                Ok(Ok(Some(task))) => task.agent_id,
                // Unknown, or unreadable: this process's answer says so.
                _ => return Routed::Here(request),
            }
        }
        other => match other.routed_agent() {
            Some(agent) => agent.to_string(),
            None => return Routed::Here(request),
        },
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
