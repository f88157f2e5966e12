//! One WebSocket connection: a reader (requests, in order), a reply releaser (replies, in order,
//! each once the writes it reports are committed), an event forwarder (bus → filter → queue) and
//! a writer (queue → socket), joined by bounded queues and a close signal.
//!
//! Acknowledged means durable: the reply to a request that writes ([`ClientRequest::writes`])
//! carries the memory's last queued sequence number after the request was handled, and the
//! releaser sends it once that number is committed. The reader does not wait for it: it goes on
//! reading (a pipelining client keeps a batch of writes in flight, and they share one commit),
//! and later replies queue behind the held one, so replies keep the order of their requests. A
//! write that fails to commit turns its reply into `database_error`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use parking_lot::{Mutex, RwLock};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite;
use tokio_util::sync::CancellationToken;

use super::fanout::{Events, Fanned};
use super::{
    CLOSE_GOING_AWAY, CLOSE_INVALID_PAYLOAD, CLOSE_MESSAGE_TOO_BIG, CLOSE_POLICY_VIOLATION,
    CLOSE_PROTOCOL_ERROR, REASON_FLOOD, REASON_SHUTDOWN, REASON_TOO_SLOW, REASON_WRITE_TIMEOUT,
    Shared,
};
use crate::admission::{Admission, TokenBucket};
use crate::protocol::events::EventFilter;
use crate::protocol::requests::{
    self as dispatch, AgentSpawnRequest, AppHumanActionResponse, AppRegisterResponse,
    AppUnregister, ForConnection, Handled, Refusal, Runs, SubscribeResponse,
};
use crate::protocol::{
    ClientRequest, EVENT_TYPES, PROTOCOL_VERSION, ProtocolErrorCode, REQUEST_TYPES, RequestId,
    ServerMessage, parse_request, to_text,
};

/// How a connection ends.
#[derive(Clone, Debug, PartialEq)]
enum Ending {
    /// Send this close frame.
    Close(u16, String),
    /// The client closed or vanished: no close frame of ours.
    Silent,
}

/// The close decision, shared by the connection's tasks. The first decision wins.
#[derive(Clone)]
struct Closer {
    token: CancellationToken,
    ending: Arc<Mutex<Option<Ending>>>,
}

impl Closer {
    fn new(token: CancellationToken) -> Self {
        Closer {
            token,
            ending: Arc::new(Mutex::new(None)),
        }
    }

    fn end(&self, ending: Ending) {
        {
            let mut slot = self.ending.lock();
            if slot.is_none() {
                *slot = Some(ending);
            }
        }
        self.token.cancel();
    }

    fn close(&self, code: u16, reason: &str) {
        self.end(Ending::Close(code, reason.to_owned()));
    }

    /// The decision; a cancelled token without one is the server shutting down.
    fn ending(&self) -> Ending {
        self.ending
            .lock()
            .clone()
            .unwrap_or_else(|| Ending::Close(CLOSE_GOING_AWAY, REASON_SHUTDOWN.to_owned()))
    }
}

/// The sending side of the bounded outbound queue.
#[derive(Clone)]
struct Outbound {
    tx: mpsc::Sender<Utf8Bytes>,
    closer: Closer,
    id: u64,
    peer: SocketAddr,
}

impl Outbound {
    /// Queues a message without waiting. A full queue disconnects the client (1008).
    fn push(&self, message: &ServerMessage) -> bool {
        self.push_text(to_text(message).into())
    }

    /// Queues text already rendered (an event shared by every connection).
    fn push_text(&self, text: Utf8Bytes) -> bool {
        match self.tx.try_send(text) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                if !self.closer.token.is_cancelled() {
                    tracing::warn!(
                        conn = self.id,
                        peer = %self.peer,
                        "disconnecting a client: {REASON_TOO_SLOW}"
                    );
                }
                self.closer.close(CLOSE_POLICY_VIOLATION, REASON_TOO_SLOW);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

/// A reply waiting for the commit of the writes it reports (`seq`, 0 when it reports none).
struct Held {
    seq: u64,
    request_id: Option<RequestId>,
    message: ServerMessage,
}

/// Sends replies in order, each once its writes are committed (see the module docs).
async fn release_replies(
    mut replies: mpsc::Receiver<Held>,
    memory: crate::memory::Memory,
    outbound: Outbound,
) {
    while let Some(held) = replies.recv().await {
        let message = if held.seq == 0 {
            held.message
        } else {
            match memory.committed(held.seq).await {
                Ok(()) => held.message,
                Err(e) => {
                    tracing::error!(conn = outbound.id, "a reply's write was not committed: {e}");
                    dispatch::error(
                        ProtocolErrorCode::DatabaseError,
                        format!(
                            "the request was carried out but its write could not be saved: {e}"
                        ),
                        held.request_id,
                    )
                }
            }
        };
        // A closed queue: the connection is gone; drain the rest without waiting on it.
        let _ = outbound.push(&message);
    }
}

/// Decrements the connection count when the connection ends, however it ends.
struct CountGuard(Arc<Shared>);

impl Drop for CountGuard {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves one upgraded connection until it ends.
pub(crate) async fn run(shared: Arc<Shared>, socket: WebSocket, peer: SocketAddr) {
    shared.connections.fetch_add(1, Ordering::AcqRel);
    let _count = CountGuard(shared.clone());
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    tracing::info!(conn = id, %peer, "client connected");

    let (sink, stream) = socket.split();
    let (tx, rx) = mpsc::channel(shared.config.outbound_queue);
    let closer = Closer::new(shared.shutdown.child_token());
    let outbound = Outbound {
        tx,
        closer: closer.clone(),
        id,
        peer,
    };
    let close_timeout = shared.config.close_timeout;
    let writer = tokio::spawn(write_loop(
        sink,
        rx,
        closer.clone(),
        shared.config.write_timeout,
        close_timeout,
    ));

    outbound.push(&ServerMessage::Welcome {
        protocol_version: PROTOCOL_VERSION,
        server: format!("godot-agents {}", env!("CARGO_PKG_VERSION")),
        requests: REQUEST_TYPES.iter().map(|s| (*s).to_owned()).collect(),
        events: EVENT_TYPES.iter().map(|s| (*s).to_owned()).collect(),
    });

    let filter = Arc::new(RwLock::new(EventFilter::default()));
    let forwarder = tokio::spawn(forward_events(
        shared.events.subscribe(),
        filter.clone(),
        outbound.clone(),
    ));

    let (replies, held) = mpsc::channel(shared.config.outbound_queue);
    let releaser = tokio::spawn(release_replies(
        held,
        shared.runtime.memory().clone(),
        outbound.clone(),
    ));

    let apps = ConnectionApps::default();
    let stream = read_loop(&shared, stream, &outbound, &replies, &filter, &apps).await;
    forwarder.abort();
    apps.unregister_all(&shared.runtime);
    drop(replies);
    drop(outbound);

    // After a close of ours, read (and discard) until the client's close or EOF, so that unread
    // input does not turn our close into a TCP reset before the client sees the close frame.
    if matches!(closer.ending(), Ending::Close(..))
        && let Some(mut stream) = stream
    {
        let _ = tokio::time::timeout(close_timeout, async {
            while let Some(Ok(message)) = stream.next().await {
                if matches!(message, Message::Close(_)) {
                    break;
                }
            }
        })
        .await;
    }
    let _ = releaser.await;
    let _ = writer.await;
    match closer.ending() {
        Ending::Close(code, reason) => {
            tracing::info!(conn = id, %peer, code, reason, "client disconnected")
        }
        Ending::Silent => tracing::info!(conn = id, %peer, "client disconnected"),
    }
}

/// Reads requests until the connection ends; returns the stream when it can still be drained.
async fn read_loop(
    shared: &Arc<Shared>,
    mut stream: SplitStream<WebSocket>,
    outbound: &Outbound,
    replies: &mpsc::Sender<Held>,
    filter: &Arc<RwLock<EventFilter>>,
    apps: &ConnectionApps,
) -> Option<SplitStream<WebSocket>> {
    // Replies go through the releaser, in request order (it holds those that report writes).
    let reply = async |seq: u64, request_id: Option<RequestId>, message: ServerMessage| {
        let held = Held {
            seq,
            request_id,
            message,
        };
        replies.send(held).await.is_ok()
    };
    let closer = &outbound.closer;
    let config = &shared.config;
    let campaigns = super::campaign_queue::CampaignQueue::default();
    let mut bucket = TokenBucket::new(
        config.rate_limit_per_sec,
        config.rate_limit_burst,
        Instant::now(),
    );
    loop {
        let next = tokio::select! {
            biased;
            _ = closer.token.cancelled() => return Some(stream),
            next = stream.next() => next,
        };
        let text = match next {
            None => {
                closer.end(Ending::Silent);
                return None;
            }
            Some(Err(error)) => {
                match classify(error) {
                    Some((code, reason)) => {
                        tracing::warn!(conn = outbound.id, peer = %outbound.peer, code, "closing: {reason}");
                        closer.close(code, &reason);
                    }
                    None => closer.end(Ending::Silent),
                }
                return None;
            }
            Some(Ok(Message::Text(text))) => Some(text),
            Some(Ok(Message::Binary(_))) => None,
            Some(Ok(Message::Close(_))) => {
                closer.end(Ending::Silent);
                return None;
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
        };
        match bucket.take(Instant::now()) {
            Admission::Allowed => {}
            Admission::Limited => {
                let request_id = text.as_deref().and_then(peek_request_id);
                let message = dispatch::error(
                    ProtocolErrorCode::RateLimited,
                    format!(
                        "too many requests: at most {} per second (bursts of {}); slow down",
                        config.rate_limit_per_sec, config.rate_limit_burst
                    ),
                    request_id,
                );
                reply(0, None, message).await;
                continue;
            }
            Admission::Flood => {
                tracing::warn!(conn = outbound.id, peer = %outbound.peer, "closing: {REASON_FLOOD}");
                closer.close(CLOSE_POLICY_VIOLATION, REASON_FLOOD);
                return Some(stream);
            }
        }
        let Some(text) = text else {
            let message = dispatch::error(
                ProtocolErrorCode::BinaryNotSupported,
                "binary frames are not supported: send JSON text frames",
                None,
            );
            reply(0, None, message).await;
            continue;
        };
        let sent = match parse_request(text.as_str()) {
            Err(e) => reply(0, None, e.to_message()).await,
            Ok((request, request_id)) => {
                let writes = request.writes();
                let context = Context {
                    filter,
                    outbound,
                    apps,
                    campaigns: &campaigns,
                };
                match answer(shared, request, request_id.clone(), &context).await {
                    Some(message) => {
                        // Taken after the request was handled: at or past every write it
                        // queued.
                        let seq = if writes {
                            shared.runtime.memory().submitted_seq()
                        } else {
                            0
                        };
                        reply(seq, request_id, message).await
                    }
                    // Answered later, outside the order (`app_human_action`; a campaign
                    // request, in order with the connection's other campaign requests).
                    None => true,
                }
            }
        };
        if !sent {
            return Some(stream);
        }
    }
}

/// The party ([`crate::brain::BrainSettings::party`]) of the agents connection `id` spawns.
fn party(id: u64) -> String {
    format!("connection-{id}")
}

/// What a request may touch of its connection.
struct Context<'a> {
    filter: &'a Arc<RwLock<EventFilter>>,
    outbound: &'a Outbound,
    apps: &'a ConnectionApps,
    campaigns: &'a super::campaign_queue::CampaignQueue,
}

/// The apps this connection registered, each as the registration it got: it handles their
/// actions, it alone may change them (`app_not_owned` for the other connections, see
/// [`ConnectionApps::refuse_unowned`]), and they are unregistered when it closes (their agents
/// are told) — unless an app of the same id was registered since, which stays.
#[derive(Default)]
struct ConnectionApps(Mutex<Vec<(String, crate::apps::Registration)>>);

impl ConnectionApps {
    fn unregister_all(&self, runtime: &crate::runtime::Runtime) {
        for (app_id, registration) in std::mem::take(&mut *self.0.lock()) {
            if let Err(e) = runtime.unregister_app_registration(&app_id, registration) {
                tracing::debug!(app = %app_id, "not unregistered at close: {e}");
            }
        }
    }

    /// The `app_not_owned` error for a request that changes an app registered now, but not by
    /// this connection (by another one, or by the game itself). Every app request changes its
    /// app but `get_app_session` (open to all, as every read of the protocol is) and
    /// `app_register`; so does a spawn whose `agent_config.app_id` attaches the new agent. A
    /// request about an app that is not registered goes on, to be answered `unknown_app`.
    fn refuse_unowned(
        &self,
        runtime: &crate::runtime::Runtime,
        request: &ClientRequest,
        request_id: &Option<RequestId>,
    ) -> Option<ServerMessage> {
        let app_id = request.app()?;
        let current = runtime.app_registration(app_id)?;
        let owned = self.0.lock().contains(&(app_id.to_string(), current));
        if owned {
            return None;
        }
        Some(dispatch::error(
            ProtocolErrorCode::AppNotOwned,
            format!(
                "app '{app_id}' was not registered by this connection: only its front end may \
                 change it (any connection may read it with get_app_session)"
            ),
            request_id.clone(),
        ))
    }
}

/// Sends what an app registered by this connection has for it, until the app or the
/// connection goes.
async fn forward_app(
    app_id: String,
    mut from_app: mpsc::UnboundedReceiver<crate::apps::AppOutbound>,
    outbound: Outbound,
) {
    use crate::apps::AppOutbound;
    loop {
        let next = tokio::select! {
            biased;
            _ = outbound.closer.token.cancelled() => return,
            next = from_app.recv() => next,
        };
        let message = match next {
            None => return,
            // The protocol has its own app messages: the connection answers the actions
            // itself, emits the events, and reads the rest with `get_app_session`.
            Some(
                AppOutbound::Recorded(_) | AppOutbound::Event(_) | AppOutbound::Attached { .. },
            ) => continue,
            Some(AppOutbound::Action(request)) => ServerMessage::AppAction {
                app_id: request.app_id,
                action_id: request.action_id,
                name: request.name,
                params: request.params,
                by: request.by,
            },
            Some(AppOutbound::Chat(line)) => ServerMessage::AppChat {
                app_id: app_id.clone(),
                role: line.role,
                text: line.text,
                at: line.at,
            },
            Some(AppOutbound::Detached { agent_id, reason }) => ServerMessage::AppDetached {
                app_id: app_id.clone(),
                agent_id,
                reason,
            },
        };
        if !outbound.push(&message) {
            return;
        }
    }
}

/// The reply to one parsed request; `None` when it is sent later by itself
/// (`app_human_action`, answered once the app handled the action; a campaign request, answered
/// by the connection's [`CampaignQueue`](super::campaign_queue::CampaignQueue)).
///
/// Three steps: [`admit`] (who may send it, which process answers it, what a client may
/// spawn), [`run_request`] (on the connection's task or the blocking pool) and, for what only the
/// connection can finish, one function per kind of work ([`ForConnection`]).
async fn answer(
    shared: &Arc<Shared>,
    request: ClientRequest,
    request_id: Option<RequestId>,
    context: &Context<'_>,
) -> Option<ServerMessage> {
    let request = match admit(shared, request, &request_id, context).await {
        Ok(request) => request,
        Err(reply) => return Some(reply),
    };
    match run_request(shared, request, &request_id).await {
        Handled::Reply(message) => Some(message),
        Handled::Later(later) => queue_later(shared, later, request_id, context),
        Handled::Connection(ForConnection::RegisterApp(config)) => {
            Some(register_app(shared, *config, request_id, context).await)
        }
        Handled::Connection(ForConnection::HumanAction {
            app_id,
            name,
            params,
        }) => {
            human_action(shared, app_id, name, params, request_id, context);
            None
        }
        Handled::Connection(ForConnection::Subscribe { events, agents }) => {
            Some(subscribe(events, agents, request_id, context))
        }
    }
}

/// The request as this process answers it, or the reply that refuses or answers it already:
/// an app's request from a connection that does not own the app, a request answered by
/// another process of the world, a spawn of a brain or a memory a client may not choose.
async fn admit(
    shared: &Arc<Shared>,
    request: ClientRequest,
    request_id: &Option<RequestId>,
    context: &Context<'_>,
) -> Result<ClientRequest, ServerMessage> {
    if let Some(refused) = context
        .apps
        .refuse_unowned(&shared.runtime, &request, request_id)
    {
        return Err(refused);
    }
    let mut request = match &shared.remote {
        Some(remote) => {
            match super::routing::route(&**remote, &shared.runtime, request, request_id).await {
                super::routing::Routed::Here(request) => request,
                super::routing::Routed::Answered(reply) => return Err(reply),
            }
        }
        None => request,
    };
    if let ClientRequest::AgentSpawnRequest(AgentSpawnRequest { agent_config }) = &mut request {
        // Its agents think for this connection: a shared model gives each connection turns.
        agent_config.party = Some(party(context.outbound.id));
        let refused = |code, message: String| dispatch::error(code, message, request_id.clone());
        if let Err(refusal) = shared.config.client_brains.check(
            agent_config.brain.as_ref(),
            &shared.runtime.options().brain_profiles,
        ) {
            return Err(refused(
                ProtocolErrorCode::BrainNotAllowed,
                refusal.to_string(),
            ));
        }
        if let Some(memory) = &agent_config.memory
            && let Err(refusal) = memory.check_client(shared.runtime.options().memory.max_memories)
        {
            return Err(refused(ProtocolErrorCode::InvalidConfig, refusal));
        }
    }
    if let ClientRequest::AppUnregister(AppUnregister { app_id }) = &request {
        context.apps.0.lock().retain(|(a, _)| a != app_id);
    }
    Ok(request)
}

/// Answers an admitted request. Requests that only read in-memory state, and tool calls that
/// answer in microseconds, run inline; the rest may touch SQLite or search (a `suggest_*` AI,
/// up to its `timeMs`), so they go to the blocking pool and never stall the async workers.
async fn run_request(
    shared: &Arc<Shared>,
    request: ClientRequest,
    request_id: &Option<RequestId>,
) -> Handled {
    if request.runs(&shared.tools) == Runs::Inline {
        return dispatch::handle(request, request_id.clone(), &shared.runtime, &shared.tools);
    }
    let runtime = shared.runtime.clone();
    let tools = shared.tools.clone();
    let id = request_id.clone();
    match tokio::task::spawn_blocking(move || dispatch::handle(request, id, &runtime, &tools)).await
    {
        Ok(handled) => handled,
        Err(e) => {
            tracing::error!("a request handler failed: {e}");
            Handled::Reply(dispatch::error(
                ProtocolErrorCode::InternalError,
                "the request handler failed",
                request_id.clone(),
            ))
        }
    }
}

/// Queues a campaign request's reply behind the connection's others (one at a time, in
/// order); `None` once queued, the `rate_limited` error when too many wait.
fn queue_later(
    shared: &Arc<Shared>,
    later: dispatch::Later<ServerMessage>,
    request_id: Option<RequestId>,
    context: &Context<'_>,
) -> Option<ServerMessage> {
    let runtime = shared.runtime.clone();
    let outbound = context.outbound.clone();
    let id = request_id.clone();
    let queued = context.campaigns.push(async move {
        let mut message = later(runtime.clone()).await;
        // Acknowledged means durable: a turn's log row is committed first.
        if !matches!(message, ServerMessage::Error(_)) {
            let seq = runtime.memory().submitted_seq();
            if let Err(e) = runtime.memory().committed(seq).await {
                message = dispatch::error(
                    ProtocolErrorCode::DatabaseError,
                    format!("the campaign changed but its log could not be saved: {e}"),
                    request_id,
                );
            }
        }
        outbound.push(&message);
    });
    if queued {
        return None;
    }
    Some(dispatch::error(
        ProtocolErrorCode::RateLimited,
        format!(
            "too many campaign requests waiting on this connection: at most {}; wait for their \
             replies",
            crate::limits::MAX_QUEUED_CAMPAIGN_REQUESTS
        ),
        id,
    ))
}

/// Registers an app for this connection (it handles the app's actions) → `app_register_response`.
async fn register_app(
    shared: &Arc<Shared>,
    config: crate::apps::AppConfig,
    request_id: Option<RequestId>,
    context: &Context<'_>,
) -> ServerMessage {
    let app_id = config.app_id.clone();
    // Registering reads a stored session from SQLite: off the async workers.
    let runtime = shared.runtime.clone();
    let registered = tokio::task::spawn_blocking(move || {
        runtime.register_owned_app(config, crate::apps::AppHandler::Remote)
    })
    .await
    .unwrap_or_else(|e| {
        Err(crate::runtime::RuntimeError::Startup(format!(
            "the registration failed: {e}"
        )))
    });
    let reply = registered.map(|(registration, from_app)| {
        context.apps.0.lock().push((app_id.clone(), registration));
        tokio::spawn(forward_app(
            app_id.clone(),
            from_app,
            context.outbound.clone(),
        ));
        let tools = shared
            .runtime
            .app_session(&app_id)
            .map(|s| s.tools)
            .unwrap_or_default();
        AppRegisterResponse { app_id, tools }
    });
    dispatch::message(reply.map_err(Refusal::from), request_id)
}

/// Has the app handle a human's action, and replies (`app_human_action_response`) once it did
/// and its record is committed.
fn human_action(
    shared: &Arc<Shared>,
    app_id: String,
    name: String,
    params: serde_json::Value,
    request_id: Option<RequestId>,
    context: &Context<'_>,
) {
    let runtime = shared.runtime.clone();
    let outbound = context.outbound.clone();
    tokio::spawn(async move {
        let reply = match runtime.app_human_action(&app_id, &name, params).await {
            // Acknowledged means durable: the action's record is committed first.
            Ok(action) => match runtime
                .memory()
                .committed(runtime.memory().submitted_seq())
                .await
            {
                Ok(()) => Ok(AppHumanActionResponse { app_id, action }),
                Err(e) => Err(Refusal::new(
                    ProtocolErrorCode::DatabaseError,
                    format!("the action was handled but could not be saved: {e}"),
                )),
            },
            Err(e) => Err(Refusal::from(e)),
        };
        outbound.push(&dispatch::message(reply, request_id));
    });
}

/// Sets the connection's event filter → `subscribe_response` with the filter now in force.
fn subscribe(
    events: Option<Vec<String>>,
    agents: Option<Vec<String>>,
    request_id: Option<RequestId>,
    context: &Context<'_>,
) -> ServerMessage {
    let reply = EventFilter::new(events, agents)
        .map(|filter| {
            let (events, agents) = filter.describe();
            *context.filter.write() = filter;
            SubscribeResponse { events, agents }
        })
        .map_err(|message| Refusal::new(ProtocolErrorCode::InvalidFilter, message));
    dispatch::message(reply, request_id)
}

/// The `request_id` of a frame that is not going to be parsed fully (rate-limited), when cheap.
fn peek_request_id(text: &str) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Peek {
        request_id: Option<RequestId>,
    }
    serde_json::from_str::<Peek>(text).ok()?.request_id
}

/// The close frame for a read error; `None` when the connection is simply gone.
fn classify(error: axum::Error) -> Option<(u16, String)> {
    let inner = error.into_inner();
    let Some(error) = inner.downcast_ref::<tungstenite::Error>() else {
        return Some((CLOSE_PROTOCOL_ERROR, format!("protocol error: {inner}")));
    };
    match error {
        tungstenite::Error::Capacity(e) => {
            Some((CLOSE_MESSAGE_TOO_BIG, format!("message too big: {e}")))
        }
        tungstenite::Error::Utf8(_) => Some((
            CLOSE_INVALID_PAYLOAD,
            "invalid UTF-8 in a text frame".to_owned(),
        )),
        tungstenite::Error::Protocol(e) => {
            // A peer that vanished mid-handshake is not worth a close frame.
            if matches!(
                e,
                tungstenite::error::ProtocolError::ResetWithoutClosingHandshake
            ) {
                None
            } else {
                Some((CLOSE_PROTOCOL_ERROR, format!("protocol error: {e}")))
            }
        }
        tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed
        | tungstenite::Error::Io(_) => None,
        other => Some((CLOSE_PROTOCOL_ERROR, format!("protocol error: {other}"))),
    }
}

/// Forwards the events that pass the connection's filter (their text is rendered once for
/// every connection, see `fanout.rs`).
async fn forward_events(mut events: Events, filter: Arc<RwLock<EventFilter>>, outbound: Outbound) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let received = tokio::select! {
            biased;
            _ = outbound.closer.token.cancelled() => return,
            r = events.recv() => r,
        };
        let ok = match received {
            Err(RecvError::Closed) => return,
            Ok(fanned) => match &*fanned {
                Fanned::Event { envelope, text } => {
                    if filter.read().matches(&envelope.message) {
                        outbound.push_text(text.clone())
                    } else {
                        true
                    }
                }
                Fanned::Dropped(missed) => {
                    outbound.push(&ServerMessage::EventsDropped { missed: *missed })
                }
            },
            Err(RecvError::Lagged(missed)) => {
                outbound.push(&ServerMessage::EventsDropped { missed })
            }
        };
        if !ok {
            return;
        }
    }
}

/// Most messages written to a socket before one flush.
const WRITE_BATCH: usize = 256;

/// Writes `first` and whatever else is queued already (up to [`WRITE_BATCH`]), then flushes once:
/// one socket write for a burst of events instead of one per message. A message taken from the
/// queue is in the sink's buffer even if this is cancelled, and goes out with the next flush.
async fn write_batch(
    sink: &mut SplitSink<WebSocket, Message>,
    first: Utf8Bytes,
    rx: &mut mpsc::Receiver<Utf8Bytes>,
) -> Result<(), axum::Error> {
    sink.feed(Message::Text(first)).await?;
    for _ in 1..WRITE_BATCH {
        match rx.try_recv() {
            Ok(text) => sink.feed(Message::Text(text)).await?,
            Err(_) => break,
        }
    }
    sink.flush().await
}

/// Drains the outbound queue to the socket; on close, sends the close frame (bounded in time).
/// A write that stalls for `write_timeout` (a client that stopped reading, with the kernel's
/// buffers full) closes the connection (1008 [`REASON_WRITE_TIMEOUT`]).
async fn write_loop(
    mut sink: SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Utf8Bytes>,
    closer: Closer,
    write_timeout: std::time::Duration,
    close_timeout: std::time::Duration,
) {
    loop {
        let text = tokio::select! {
            biased;
            _ = closer.token.cancelled() => break,
            text = rx.recv() => match text {
                Some(text) => text,
                None => break,
            },
        };
        let sent = tokio::select! {
            biased;
            _ = closer.token.cancelled() => break,
            sent = tokio::time::timeout(write_timeout, write_batch(&mut sink, text, &mut rx)) => sent,
        };
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                closer.end(Ending::Silent);
                return;
            }
            Err(_) => {
                tracing::warn!("disconnecting a client: {REASON_WRITE_TIMEOUT}");
                closer.close(CLOSE_POLICY_VIOLATION, REASON_WRITE_TIMEOUT);
                break;
            }
        }
    }
    if let Ending::Close(code, reason) = closer.ending() {
        // What was queued before the close decision still goes out first, so a close of ours
        // (a flood, an oversized frame, shutdown) never swallows replies already answered;
        // except for a client closed for not reading: its queue is full by definition.
        let flush = reason != REASON_TOO_SLOW && reason != REASON_WRITE_TIMEOUT;
        // Replies still held for their commit are released into the queue meanwhile: drain
        // until every sender is gone (bounded by the close timeout).
        let _ = tokio::time::timeout(close_timeout, async {
            while flush && let Some(text) = rx.recv().await {
                if sink.send(Message::Text(text)).await.is_err() {
                    return;
                }
            }
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            let _ = sink.send(Message::Close(Some(frame))).await;
        })
        .await;
    }
    let _ = tokio::time::timeout(close_timeout, sink.close()).await;
}
