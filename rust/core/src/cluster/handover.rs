//! Handing an agent over to another process.
//!
//! An agent runs next to what it is bound to: an app lives on the process its front end is
//! connected to (its actions go to that connection), a campaign on the process that loaded it.
//! A request that binds an agent of another process to one of them (`app_attach`, the GM agent
//! of `campaign_turn`: [`ClientRequest::placed_agent`](crate::protocol::ClientRequest::placed_agent))
//! first moves the agent here:
//!
//! 1. This process asks the owner on `<root>.move.<owner>` (a [`MoveRequest`]).
//! 2. The owner refuses when the agent plays an app there (`app_attached`: detach it there
//!    first) or does not run there (`unknown_agent`). Otherwise it releases the agent (its
//!    subscribers see `agent_removed`, reason `shutdown`), waits until the agent's task has
//!    ended and its writes are committed, gives the agent's lease to this process in the shared
//!    database, and answers [`MoveAnswer::Moved`]. If the lease cannot be given, it starts the
//!    agent again itself and refuses.
//! 3. This process resumes the agent from the shared memory, as a takeover does
//!    (`agent_spawned` with `resumed: true`), and the request goes on here.
//!
//! The agent never runs on two processes: its task on the owner has ended before its lease
//! moves, and this process starts it only once the lease is its own.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::leases;
use crate::protocol::ProtocolErrorCode;
use crate::runtime::Runtime;

/// How long the owner waits for a released agent's task to end.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// How long a process waits for the owner to hand an agent over (the owner may wait
/// [`STOP_WAIT`] for the agent's task).
pub(crate) const MOVE_TIMEOUT: Duration = Duration::from_secs(15);

/// "Hand `agent_id` over to process `to`."
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct MoveRequest {
    pub agent_id: String,
    pub to: String,
}

/// The owner's answer to a [`MoveRequest`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub(crate) enum MoveAnswer {
    /// The agent stopped there and its lease is the asking process's.
    Moved,
    /// The agent stays where it is.
    Refused {
        code: ProtocolErrorCode,
        message: String,
    },
}

/// The owner's side: stops the agent and gives its lease to `request.to`.
pub(crate) async fn give(
    runtime: &Arc<Runtime>,
    db_url: &str,
    here: &str,
    lease: Duration,
    request: MoveRequest,
) -> MoveAnswer {
    let MoveRequest { agent_id, to } = request;
    let refused = |code, message: String| MoveAnswer::Refused { code, message };
    match runtime.agent_app(&agent_id) {
        Err(_) => {
            return refused(
                ProtocolErrorCode::UnknownAgent,
                format!("agent {agent_id} does not run on process {here}"),
            );
        }
        Ok(Some(app)) => {
            return refused(
                ProtocolErrorCode::AppAttached,
                format!(
                    "agent {agent_id} plays app '{app}' on process {here}: detach it there first"
                ),
            );
        }
        Ok(None) => {}
    }
    let stopped = match runtime.release(&agent_id) {
        Ok(stopped) => stopped,
        Err(e) => return refused(ProtocolErrorCode::from_runtime(&e), e.to_string()),
    };
    tracing::info!(agent = %agent_id, to = %to, "handing an agent over");
    let moved = async {
        tokio::time::timeout(STOP_WAIT, stopped.wait())
            .await
            .map_err(|_| format!("its task did not end within {STOP_WAIT:?}"))?;
        let memory = runtime.memory();
        memory
            .committed(memory.submitted_seq())
            .await
            .map_err(|e| format!("its last writes were not committed: {e}"))?;
        leases::transfer(db_url, &agent_id, here, &to, lease)
            .await
            .map_err(|e| format!("its lease could not be given: {e}"))
    };
    match moved.await {
        Ok(()) => MoveAnswer::Moved,
        Err(why) => {
            tracing::warn!(agent = %agent_id, to = %to, %why, "hand-over failed; the agent stays here");
            // Started again here once its task has ended (at once, unless that timed out).
            let (runtime, id) = (runtime.clone(), agent_id.clone());
            tokio::spawn(async move {
                stopped.wait().await;
                if let Err(e) = leases::resume_one(&runtime, &id).await {
                    tracing::error!(agent = %id, %e, "could not start the agent again after a failed hand-over");
                }
            });
            refused(
                ProtocolErrorCode::DatabaseError,
                format!("agent {agent_id} could not be handed over by process {here}: {why}"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_travel_as_tagged_json() {
        let moved = serde_json::to_value(MoveAnswer::Moved).unwrap();
        assert_eq!(moved, serde_json::json!({"result": "moved"}));
        let refused = MoveAnswer::Refused {
            code: ProtocolErrorCode::AppAttached,
            message: "detach it first".into(),
        };
        let text = serde_json::to_string(&refused).unwrap();
        assert_eq!(
            text,
            r#"{"result":"refused","code":"app_attached","message":"detach it first"}"#
        );
        match serde_json::from_str::<MoveAnswer>(&text).unwrap() {
            MoveAnswer::Refused { code, .. } => assert_eq!(code, ProtocolErrorCode::AppAttached),
            other => panic!("{other:?}"),
        }
    }
}
