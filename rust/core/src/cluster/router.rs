//! Requests about agents of other processes.
//!
//! - **The directory**: which process runs which agent, learned from the bus (an
//!   `agent_spawned` from a process means it runs the agent, an `agent_removed` that it stopped)
//!   and, when a process joins, from every process's answer on `<root>.dir`.
//! - **Answering**: each process answers on `<root>.rpc.<process>` the requests routed to it —
//!   the client's request as it would have been sent to this process, run by the same dispatcher
//!   as a WebSocket request, the reply sent once its writes are committed (acknowledged means
//!   durable, whichever process a client talks to).
//! - **Routing**: [`Remote`] for the WebSocket server: a request about an agent that is not
//!   running here but runs on another process ([`ClientRequest::routed_agent`]) is sent there
//!   with NATS request/reply; no answer within [`FORWARD_TIMEOUT`] is `agent_unreachable`.
//! - **Tracing**: a routed request is a `routed_request` span on both sides with the same
//!   `trace_id` (`<process>-<n>`, sent in the [`TRACE_HEADER`] header), so one request can be
//!   followed through the logs of both processes.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use parking_lot::RwLock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::handover;
use super::leases;
use super::subjects::{ORIGIN_HEADER, Subjects};
use crate::bus::BusMessage;
use crate::net::{Remote, RemoteError};
use crate::protocol::requests::{self as dispatch, Handled};
use crate::protocol::{ClientRequest, ProtocolErrorCode, RequestId, ServerMessage, parse_request};
use crate::runtime::Runtime;
use crate::tools::ToolRegistry;

/// How long a routed request waits for the process running the agent.
pub const FORWARD_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a list request waits for the other processes' lists; one that has not answered
/// by then is left out of the page.
pub const GATHER_TIMEOUT: Duration = Duration::from_secs(2);

/// Header: the id of a routed request, the same in the logs of both processes (the
/// `routed_request` span's `trace_id`).
pub const TRACE_HEADER: &str = "Agents-Trace";

/// How long a joining process collects the other processes' agent lists.
const DIRECTORY_WAIT: Duration = Duration::from_millis(300);

/// Which process runs which agent.
#[derive(Default)]
pub(crate) struct Directory {
    owners: RwLock<HashMap<String, Owner>>,
    /// Per agent, the bus sequence number of the last spawned, moved or removed message heard
    /// about it from each process: the bridge reads those kinds on separate subscriptions, so
    /// a process's removal of an agent can arrive before its start; the older one is stale.
    /// One entry per agent and process that ever announced it.
    heard: parking_lot::Mutex<HashMap<String, Heard>>,
}

/// The last sequence number heard about one agent from each process that announced it.
type Heard = Vec<(Arc<str>, u64)>;

/// The process running an agent, and the one that ran it before while that one may still run it
/// (an agent started on a second process is announced there, then released there at once when
/// its lease is found held: the first process still runs it). A removal from `now` within
/// [`SECOND_START_WINDOW`] of its start gives the agent back to `before`; later, `before` is
/// history (a process that died and whose agent was taken over, say).
struct Owner {
    now: Arc<str>,
    before: Option<(Arc<str>, std::time::Instant)>,
}

/// How soon after its start on a second process an agent is released there, at most (the lease
/// loop checks a starting agent's lease at once).
const SECOND_START_WINDOW: Duration = Duration::from_secs(10);

impl Directory {
    /// Whether `message`, number `seq` on `origin`'s bus, is newer than what was heard about its
    /// agent from `origin` (and remembers it). Messages of other kinds are always current.
    pub(crate) fn is_current(&self, message: &BusMessage, origin: &Arc<str>, seq: u64) -> bool {
        let agent_id = match message {
            BusMessage::AgentSpawned { agent_id, .. }
            | BusMessage::AgentMoved { agent_id, .. }
            | BusMessage::AgentRemoved { agent_id, .. } => agent_id,
            _ => return true,
        };
        let mut heard = self.heard.lock();
        let from = heard.entry(agent_id.clone()).or_default();
        match from.iter_mut().find(|(o, _)| o == origin) {
            Some((_, last)) if *last >= seq => false,
            Some((_, last)) => {
                *last = seq;
                true
            }
            None => {
                from.push((origin.clone(), seq));
                true
            }
        }
    }

    /// Learns from a message of another process (a current one: [`Directory::is_current`]).
    pub(crate) fn learn(&self, message: &BusMessage, origin: &Arc<str>) {
        match message {
            BusMessage::AgentSpawned { agent_id, .. } => {
                let mut owners = self.owners.write();
                let before = owners
                    .get(agent_id)
                    .map(|o| o.now.clone())
                    .filter(|before| before != origin)
                    .map(|before| (before, std::time::Instant::now()));
                owners.insert(
                    agent_id.clone(),
                    Owner {
                        now: origin.clone(),
                        before,
                    },
                );
            }
            BusMessage::AgentRemoved { agent_id, .. } => {
                let mut owners = self.owners.write();
                let Some(owner) = owners.get_mut(agent_id) else {
                    return;
                };
                if owner.now == *origin {
                    match owner.before.take() {
                        Some((before, since)) if since.elapsed() < SECOND_START_WINDOW => {
                            owner.now = before;
                        }
                        _ => {
                            owners.remove(agent_id);
                        }
                    }
                } else if owner.before.as_ref().is_some_and(|(b, _)| b == origin) {
                    // The process that ran it before stopped it: it moved for good.
                    owner.before = None;
                }
            }
            _ => {}
        }
    }

    fn extend(&self, process: &Arc<str>, agents: Vec<String>) {
        let mut owners = self.owners.write();
        for agent in agents {
            owners.entry(agent).or_insert_with(|| Owner {
                now: process.clone(),
                before: None,
            });
        }
    }

    fn owner(&self, agent_id: &str) -> Option<Arc<str>> {
        self.owners.read().get(agent_id).map(|o| o.now.clone())
    }

    /// The processes known to run agents, each once.
    fn processes(&self) -> Vec<Arc<str>> {
        let mut processes: Vec<Arc<str>> =
            self.owners.read().values().map(|o| o.now.clone()).collect();
        processes.sort_unstable();
        processes.dedup();
        processes
    }
}

/// One process's answer on `<root>.dir`.
#[derive(serde::Serialize, serde::Deserialize)]
struct AgentList {
    process: String,
    agents: Vec<String>,
}

/// The routing of one process.
pub(crate) struct Router {
    client: async_nats::Client,
    subjects: Subjects,
    process: Arc<str>,
    directory: Arc<Directory>,
    next_trace: AtomicU64,
    runtime: Arc<Runtime>,
    /// The shared database (for hand-overs' leases) and the lease time.
    db_url: String,
    lease: Duration,
}

/// What a [`Router`] is made of.
pub(crate) struct RouterParts {
    pub client: async_nats::Client,
    pub subjects: Subjects,
    pub process: Arc<str>,
    pub directory: Arc<Directory>,
    pub runtime: Arc<Runtime>,
    pub db_url: String,
    pub lease: Duration,
}

impl Router {
    pub(crate) fn new(parts: RouterParts) -> Router {
        let RouterParts {
            client,
            subjects,
            process,
            directory,
            runtime,
            db_url,
            lease,
        } = parts;
        Router {
            client,
            subjects,
            process,
            directory,
            next_trace: AtomicU64::new(1),
            runtime,
            db_url,
            lease,
        }
    }

    /// A fresh trace id and the headers carrying it (and this process's name).
    fn trace(&self) -> (String, async_nats::HeaderMap) {
        let trace_id = format!(
            "{}-{}",
            self.process,
            self.next_trace.fetch_add(1, Ordering::Relaxed)
        );
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(TRACE_HEADER, trace_id.as_str());
        headers.insert(ORIGIN_HEADER, &*self.process);
        (trace_id, headers)
    }

    /// Asks the processes already in the world which agents they run.
    pub(crate) async fn learn_directory(&self) {
        let inbox = self.client.new_inbox();
        let Ok(mut answers) = self.client.subscribe(inbox.clone()).await else {
            return;
        };
        let dir = format!("{}.dir", self.subjects.root());
        if self
            .client
            .publish_with_reply(dir, inbox, bytes::Bytes::new())
            .await
            .is_err()
        {
            return;
        }
        let deadline = tokio::time::Instant::now() + DIRECTORY_WAIT;
        while let Ok(Some(answer)) = tokio::time::timeout_at(deadline, answers.next()).await {
            if let Ok(list) = serde_json::from_slice::<AgentList>(&answer.payload)
                && list.process != *self.process
            {
                self.directory
                    .extend(&Arc::from(list.process.as_str()), list.agents);
            }
        }
    }

    /// Answers `<root>.dir`, `<root>.rpc.<process>` and `<root>.move.<process>` until
    /// cancelled.
    pub(crate) async fn serve(
        &self,
        cancel: CancellationToken,
    ) -> Result<JoinHandle<()>, async_nats::SubscribeError> {
        let mut dir = self
            .client
            .subscribe(format!("{}.dir", self.subjects.root()))
            .await?;
        let mut rpc = self
            .client
            .subscribe(self.subjects.rpc(&self.process))
            .await?;
        let mut moves = self
            .client
            .subscribe(self.subjects.moves(&self.process))
            .await?;
        let client = self.client.clone();
        let process = self.process.to_string();
        let runtime = self.runtime.clone();
        let (db_url, lease) = (self.db_url.clone(), self.lease);
        let tools = Arc::new(ToolRegistry::new());
        Ok(tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    Some(ask) = moves.next() => {
                        let Some(reply) = ask.reply else { continue };
                        let (client, runtime, db_url, here) =
                            (client.clone(), runtime.clone(), db_url.clone(), process.clone());
                        // The asking process's `agent_handover` span, continued here.
                        let span = tracing::info_span!(
                            "agent_handover",
                            trace_id = %header_of(ask.headers.as_ref(), TRACE_HEADER),
                            from = %process,
                            to = %header_of(ask.headers.as_ref(), ORIGIN_HEADER),
                        );
                        tokio::spawn(async move {
                            let answer = match serde_json::from_slice::<handover::MoveRequest>(&ask.payload) {
                                Ok(request) => handover::give(&runtime, &db_url, &here, lease, request).await,
                                Err(e) => handover::MoveAnswer::Refused {
                                    code: ProtocolErrorCode::InvalidRequest,
                                    message: format!("not a hand-over request: {e}"),
                                },
                            };
                            tracing::info!(moved = matches!(answer, handover::MoveAnswer::Moved), "answered a hand-over");
                            let payload = serde_json::to_vec(&answer).unwrap_or_default();
                            let _ = client.publish(reply, payload.into()).await;
                        }.instrument(span));
                    }
                    Some(ask) = dir.next() => {
                        if let Some(reply) = ask.reply {
                            let list = AgentList { process: process.clone(), agents: runtime.agent_ids() };
                            let payload = serde_json::to_vec(&list).unwrap_or_default();
                            let _ = client.publish(reply, payload.into()).await;
                        }
                    }
                    Some(request) = rpc.next() => {
                        let Some(reply) = request.reply else { continue };
                        let (client, runtime, tools) = (client.clone(), runtime.clone(), tools.clone());
                        // The span of the request the forwarding process opened, continued here.
                        let span = tracing::info_span!(
                            "routed_request",
                            trace_id = %header_of(request.headers.as_ref(), TRACE_HEADER),
                            from = %header_of(request.headers.as_ref(), ORIGIN_HEADER),
                            to = %process,
                        );
                        tokio::spawn(
                            async move {
                                tracing::info!("answering a routed request");
                                let answer = answer(&runtime, &tools, &request.payload).await;
                                tracing::info!(ok = !matches!(answer, ServerMessage::Error(_)), "answered");
                                let payload = serde_json::to_vec(&answer).unwrap_or_default();
                                let _ = client.publish(reply, payload.into()).await;
                            }
                            .instrument(span),
                        );
                    }
                    else => return,
                }
            }
        }))
    }
}

/// Sends `payload` to `subject` as a NATS request and parses the JSON answer; the error says
/// why there is none (no answer within `timeout`, no process listening, an answer that does not
/// parse).
async fn ask<T: serde::de::DeserializeOwned>(
    client: &async_nats::Client,
    subject: String,
    headers: async_nats::HeaderMap,
    payload: Vec<u8>,
    timeout: Duration,
) -> Result<T, String> {
    let answer = tokio::time::timeout(
        timeout,
        client.request_with_headers(subject, headers, payload.into()),
    )
    .await
    .map_err(|_| format!("no answer within {timeout:?}"))?
    .map_err(|e| e.to_string())?;
    serde_json::from_slice(&answer.payload).map_err(|e| format!("its answer did not parse: {e}"))
}

/// A header of a NATS message (`headers`), empty when missing.
fn header_of(headers: Option<&async_nats::HeaderMap>, name: &str) -> String {
    headers
        .and_then(|h| h.get(name))
        .map(|v| v.as_str().to_string())
        .unwrap_or_default()
}

/// Runs a routed request here, as the WebSocket server would.
async fn answer(
    runtime: &Arc<Runtime>,
    tools: &Arc<ToolRegistry>,
    payload: &[u8],
) -> ServerMessage {
    let text = String::from_utf8_lossy(payload);
    let (request, request_id) = match parse_request(&text) {
        Ok(parsed) => parsed,
        Err(e) => return e.to_message(),
    };
    let writes = request.writes();
    let (rt, tools_here, id) = (runtime.clone(), tools.clone(), request_id.clone());
    let handled =
        tokio::task::spawn_blocking(move || dispatch::handle(request, id, &rt, &tools_here)).await;
    let message = match handled {
        Ok(Handled::Reply(message)) => message,
        Ok(_) => {
            return dispatch::error(
                ProtocolErrorCode::InternalError,
                "this request is not routed to another process",
                request_id,
            );
        }
        Err(e) => {
            tracing::error!("a routed request failed: {e}");
            return dispatch::error(
                ProtocolErrorCode::InternalError,
                "the request handler failed",
                request_id,
            );
        }
    };
    if writes && !matches!(message, ServerMessage::Error(_)) {
        let seq = runtime.memory().submitted_seq();
        if let Err(e) = runtime.memory().committed(seq).await {
            return dispatch::error(ProtocolErrorCode::DatabaseError, e.to_string(), request_id);
        }
    }
    message
}

impl Remote for Router {
    fn owner(&self, agent_id: &str) -> Option<Arc<str>> {
        self.directory
            .owner(agent_id)
            .filter(|owner| **owner != *self.process)
    }

    fn forward(
        &self,
        owner: Arc<str>,
        agent_id: String,
        request: ClientRequest,
        request_id: Option<RequestId>,
    ) -> Pin<Box<dyn Future<Output = ServerMessage> + Send + 'static>> {
        let client = self.client.clone();
        let subject = self.subjects.rpc(&owner);
        let (trace_id, headers) = self.trace();
        let span = tracing::info_span!(
            "routed_request",
            trace_id = %trace_id,
            from = %self.process,
            to = %owner,
            agent = %agent_id,
        );
        Box::pin(
            async move {
                tracing::info!("forwarding a request to the process running its agent");
                let unreachable = |why: String| {
                    dispatch::error(
                        ProtocolErrorCode::AgentUnreachable,
                        format!(
                            "agent {agent_id} runs on process {owner}, which did not answer: {why}"
                        ),
                        request_id.clone(),
                    )
                };
                let mut value = match serde_json::to_value(&request) {
                    Ok(value) => value,
                    Err(e) => return unreachable(e.to_string()),
                };
                if let (Some(object), Some(id)) = (value.as_object_mut(), &request_id) {
                    object.insert(
                        "request_id".to_string(),
                        serde_json::to_value(id).unwrap_or_default(),
                    );
                }
                let payload = serde_json::to_vec(&value).unwrap_or_default();
                let reply =
                    ask::<ServerMessage>(&client, subject, headers, payload, FORWARD_TIMEOUT)
                        .await
                        .unwrap_or_else(unreachable);
                tracing::info!(
                    ok = !matches!(reply, ServerMessage::Error(_)),
                    "the routed request was answered"
                );
                reply
            }
            .instrument(span),
        )
    }

    fn gather(
        &self,
        request: ClientRequest,
    ) -> Pin<Box<dyn Future<Output = Vec<ServerMessage>> + Send + 'static>> {
        let payload = serde_json::to_vec(&request).unwrap_or_default();
        let asks: Vec<_> = self
            .directory
            .processes()
            .into_iter()
            .filter(|p| **p != *self.process)
            .map(|process| {
                let (client, subject) = (self.client.clone(), self.subjects.rpc(&process));
                let (trace_id, headers) = self.trace();
                let payload = payload.clone();
                let kind = request.type_name();
                async move {
                    let reply =
                        ask::<ServerMessage>(&client, subject, headers, payload, GATHER_TIMEOUT)
                            .await;
                    reply
                        .inspect_err(|why| {
                            tracing::warn!(
                                %trace_id,
                                %process,
                                "{kind}: the process's part of the world is left out: {why}"
                            );
                        })
                        .ok()
                }
            })
            .collect();
        Box::pin(async move {
            futures_util::future::join_all(asks)
                .await
                .into_iter()
                .flatten()
                .collect()
        })
    }

    fn bring_here(
        &self,
        owner: Arc<str>,
        agent_id: String,
    ) -> Pin<Box<dyn Future<Output = Result<(), RemoteError>> + Send + 'static>> {
        let client = self.client.clone();
        let subject = self.subjects.moves(&owner);
        let runtime = self.runtime.clone();
        let here = self.process.to_string();
        let (trace_id, headers) = self.trace();
        let span = tracing::info_span!(
            "agent_handover",
            trace_id = %trace_id,
            from = %owner,
            to = %here,
            agent = %agent_id,
        );
        Box::pin(
            async move {
                tracing::info!("asking the process running the agent to hand it over");
                let unreachable = |why: String| {
                    RemoteError::new(
                        ProtocolErrorCode::AgentUnreachable,
                        format!("agent {agent_id} runs on process {owner}, which did not hand it over: {why}"),
                    )
                };
                let request = handover::MoveRequest {
                    agent_id: agent_id.clone(),
                    to: here.clone(),
                };
                let payload = serde_json::to_vec(&request).unwrap_or_default();
                let answer = ask(&client, subject, headers, payload, handover::MOVE_TIMEOUT)
                    .await
                    .map_err(unreachable)?;
                if let handover::MoveAnswer::Refused { code, message } = answer {
                    return Err(RemoteError::new(code, message));
                }
                leases::resume_one(&runtime, &agent_id).await.map_err(|why| {
                    RemoteError::new(
                        ProtocolErrorCode::InternalError,
                        format!("agent {agent_id} was handed over by process {owner} but did not start on {here}: {why}"),
                    )
                })?;
                tracing::info!("the agent runs here now");
                Ok(())
            }
            .instrument(span),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_state::AgentState;
    use crate::geometry::Position;

    #[test]
    fn the_directory_follows_spawns_and_removals_of_their_owner() {
        let directory = Directory::default();
        let (p1, p2): (Arc<str>, Arc<str>) = (Arc::from("p1"), Arc::from("p2"));
        let spawned = BusMessage::AgentSpawned {
            agent_id: "agent_001".into(),
            name: "A".into(),
            role: "r".into(),
            position: Position::new(0.0, 0.0),
            state: AgentState::Idle,
            resumed: false,
        };
        directory.learn(&spawned, &p1);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p1"));
        // Resumed elsewhere: the new owner.
        directory.learn(&spawned, &p2);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p2"));
        // A late removal from the old owner does not forget the new one.
        let removed = BusMessage::AgentRemoved {
            agent_id: "agent_001".into(),
            reason: "shutdown".into(),
        };
        directory.learn(&removed, &p1);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p2"));
        directory.learn(&removed, &p2);
        assert_eq!(directory.owner("agent_001"), None);
        // Started on a second process and released there (its lease is held by the first): the
        // first one still runs it.
        directory.learn(&spawned, &p1);
        directory.learn(&spawned, &p2);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p2"));
        directory.learn(&removed, &p2);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p1"));
        // Moved for good (p1's removal seen after p2's start): a later removal from p2 does not
        // bring p1 back.
        directory.learn(&spawned, &p2);
        directory.learn(&removed, &p1);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p2"));
        directory.learn(&removed, &p2);
        assert_eq!(directory.owner("agent_001"), None);
        // What a joining process hears does not override what it learned live.
        directory.learn(&spawned, &p1);
        directory.extend(&p2, vec!["agent_001".into(), "agent_002".into()]);
        assert_eq!(directory.owner("agent_001").as_deref(), Some("p1"));
        assert_eq!(directory.owner("agent_002").as_deref(), Some("p2"));
    }

    #[test]
    fn a_message_older_than_what_was_heard_from_its_process_is_stale() {
        let directory = Directory::default();
        let (p1, p2): (Arc<str>, Arc<str>) = (Arc::from("p1"), Arc::from("p2"));
        let spawned = BusMessage::AgentSpawned {
            agent_id: "agent_001".into(),
            name: "A".into(),
            role: "r".into(),
            position: Position::new(0.0, 0.0),
            state: AgentState::Idle,
            resumed: false,
        };
        let removed = BusMessage::AgentRemoved {
            agent_id: "agent_001".into(),
            reason: "released".into(),
        };
        // p2 started the agent (seq 7) and released it (seq 8); the release arrived first.
        assert!(directory.is_current(&removed, &p2, 8));
        assert!(!directory.is_current(&spawned, &p2, 7));
        assert!(!directory.is_current(&removed, &p2, 8), "a repeat is stale");
        // Sequence numbers are per process, and per agent.
        assert!(directory.is_current(&spawned, &p1, 3));
        let other = BusMessage::AgentRemoved {
            agent_id: "agent_002".into(),
            reason: "r".into(),
        };
        assert!(directory.is_current(&other, &p2, 5));
        // Other kinds are not sequenced here.
        let spoke = BusMessage::AgentSpoke {
            agent_id: "agent_001".into(),
            content: "hi".into(),
            recipients: vec![],
            dialog_type: "chat".into(),
            inbox_id: None,
        };
        assert!(directory.is_current(&spoke, &p2, 1));
    }
}
