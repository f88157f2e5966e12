//! The WebSocket server: the [`protocol`](crate::protocol) over real sockets.
//!
//! One implementation for the `agents-server serve` binary and the Godot `AgentRuntime` node: an
//! [axum](https://docs.rs/axum) router on tokio.
//!
//! # Routes
//!
//! `GET /ws` and `GET /` upgrade to a WebSocket. `/mcp` serves MCP over Streamable HTTP
//! ([`crate::mcp::http_service`], the same tool registry) unless [`ServerConfig::mcp`] is off.
//!
//! # Who may connect
//!
//! Every request passes the same checks first (`access.rs`): on a loopback bind the `Host` must
//! be loopback (DNS rebinding: 403); a browser `Origin` must be allowed
//! ([`ServerConfig::allowed_origins`]; loopback origins on a loopback bind; 403 otherwise); with a
//! token, `Authorization: Bearer <token>` or the subprotocols `godot-agents` +
//! `agents.token.<token>` (401 otherwise; presented twice: 401; `?token=` or `?access_token=` in
//! the URL: 400; a token that is not a valid subprotocol name is logged as a warning at start). A
//! non-loopback bind without a token refuses to start unless
//! [`ServerConfig::insecure_no_token`] says so.
//!
//! # Per connection
//!
//! The first message is `welcome`. Each text frame is one request: it is parsed
//! ([`protocol::parse_request`](crate::protocol::parse_request)), answered
//! ([`protocol::requests::handle`](crate::protocol::requests::handle)) and the reply queued.
//! One renderer serialises each bus event once for every connection (`fanout.rs`); a connection
//! forwards the events that pass its `subscribe` filter (default: every event); a connection
//! that lags becomes `events_dropped`. Requests of one connection are answered in order, a reply
//! that reports a write once the write is committed (`connection.rs`).
//!
//! # Limits and close codes
//!
//! | Situation | Result |
//! |---|---|
//! | A frame or message over [`ServerConfig::max_frame_bytes`] | close `1009` (message too big) |
//! | Invalid UTF-8 in a text frame | close `1007` (invalid payload) |
//! | Any other WebSocket protocol violation | close `1002` (protocol error) |
//! | More requests than the token bucket allows ([`ServerConfig::rate_limit_per_sec`], burst [`ServerConfig::rate_limit_burst`]) | `error` `rate_limited` for that request; the connection stays |
//! | More than [`FLOOD_FACTOR`] × `rate_limit_per_sec` rejected requests within one second | close `1008` "rate limit exceeded" |
//! | The outbound queue ([`ServerConfig::outbound_queue`] messages) is full: the client reads too slowly | close `1008` "client too slow: outbound queue full" |
//! | One write to the socket stalls for [`ServerConfig::write_timeout`]: the client reads nothing | close `1008` "client too slow: write timed out" |
//! | Server shutdown | close `1001` "server shutting down" |
//!
//! Nothing a client sends can block the bus or another client: events and replies are queued
//! with `try_send` on a bounded queue, and a writer task per connection drains it to the socket.

mod access;
mod campaign_queue;
mod connection;
mod fanout;
mod routing;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_acked;
#[cfg(test)]
mod tests_app_caps;
#[cfg(test)]
mod tests_apps;
#[cfg(test)]
mod tests_campaign_caps;
#[cfg(test)]
mod tests_campaigns;
#[cfg(test)]
mod tests_fanout;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;

use crate::protocol::{ClientRequest, RequestId, ServerMessage};
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::runtime::Runtime;
use crate::tools::ToolRegistry;

pub use crate::admission::{Admission, FLOOD_FACTOR, TokenBucket, constant_time_eq};
pub use access::{Refusal, SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX, token_fits_subprotocol};

/// Close code: the server is going away (shutdown).
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code: a WebSocket protocol violation.
pub const CLOSE_PROTOCOL_ERROR: u16 = 1002;
/// Close code: a text frame is not valid UTF-8.
pub const CLOSE_INVALID_PAYLOAD: u16 = 1007;
/// Close code: policy violation (slow client, request flood).
pub const CLOSE_POLICY_VIOLATION: u16 = 1008;
/// Close code: a frame or message is larger than [`ServerConfig::max_frame_bytes`].
pub const CLOSE_MESSAGE_TOO_BIG: u16 = 1009;

/// Close reason of a client whose outbound queue is full.
pub const REASON_TOO_SLOW: &str = "client too slow: outbound queue full";
/// Close reason of a client that stops reading: a write to its socket stalled for
/// [`ServerConfig::write_timeout`] (the kernel's buffers are full).
pub const REASON_WRITE_TIMEOUT: &str = "client too slow: write timed out";
/// Close reason of a client that floods requests far beyond its rate limit.
pub const REASON_FLOOD: &str = "rate limit exceeded";
/// Close reason on shutdown.
pub const REASON_SHUTDOWN: &str = "server shutting down";

/// The initial read buffer of a connection (tungstenite's default is 128 KiB).
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// The default address: loopback only.
pub const DEFAULT_BIND: &str = "127.0.0.1:9080";

/// How the server listens and what it allows.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// Where to listen (default `127.0.0.1:9080`, loopback only). Port 0 picks a free port.
    pub bind: SocketAddr,
    /// A shared secret clients must present at the upgrade (`Authorization: Bearer …`, or the
    /// subprotocol entry `agents.token.…` beside `godot-agents`). `None`: no authentication,
    /// allowed on a loopback bind only unless [`ServerConfig::insecure_no_token`].
    pub token: Option<String>,
    /// Start on a non-loopback bind without a token (anyone who can reach the port drives the
    /// runtime). Default off: such a config is refused.
    pub insecure_no_token: bool,
    /// Browser origins allowed to connect besides the loopback ones a loopback bind allows:
    /// `scheme://host[:port]` (`https://game.example`), `null` for the opaque origin, `*` for
    /// any. Requests without an `Origin` (native clients) always pass.
    pub allowed_origins: Vec<String>,
    /// Extra `Host` names accepted on a loopback bind (besides `localhost`, `127.x.y.z`, `[::1]`),
    /// and by `/mcp`'s DNS-rebinding protection on any bind.
    pub allowed_hosts: Vec<String>,
    /// The largest frame and the largest (reassembled) message accepted, in bytes (default 1 MiB).
    pub max_frame_bytes: usize,
    /// Requests per second each connection may send on average (default 200).
    pub rate_limit_per_sec: u32,
    /// How many requests a connection may send at once before the rate applies (default 200).
    pub rate_limit_burst: u32,
    /// Messages (replies and events) queued per client before it counts as too slow and is
    /// disconnected (default 1024).
    pub outbound_queue: usize,
    /// How long the server tries to deliver a close frame, and waits for the client's, before it
    /// drops the connection (default 2 s).
    pub close_timeout: Duration,
    /// How long one write to a client's socket may stall (the client reads nothing and the
    /// kernel's buffers are full) before the client is disconnected with 1008
    /// [`REASON_WRITE_TIMEOUT`] (default 10 s). A client that stops reading is gone within
    /// `write_timeout + close_timeout`, or sooner when its [`ServerConfig::outbound_queue`]
    /// fills up first.
    pub write_timeout: Duration,
    /// Serve MCP over Streamable HTTP at `/mcp` on the same port (default on).
    pub mcp: bool,
    /// The brains clients may choose in `agent_spawn_request` (default: the operator's
    /// profiles and the presets by name, no brain objects; see [`crate::brain::policy`]).
    pub client_brains: crate::brain::ClientBrainPolicy,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 9080)),
            token: None,
            insecure_no_token: false,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_frame_bytes: 1024 * 1024,
            rate_limit_per_sec: 200,
            rate_limit_burst: 200,
            outbound_queue: 1024,
            close_timeout: Duration::from_secs(2),
            write_timeout: Duration::from_secs(10),
            mcp: true,
            client_brains: crate::brain::ClientBrainPolicy::default(),
        }
    }
}

impl ServerConfig {
    /// Checks the numbers; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_frame_bytes < 1024 {
            return Err(format!(
                "max_frame_bytes must be at least 1024, not {}",
                self.max_frame_bytes
            ));
        }
        if self.rate_limit_per_sec == 0 {
            return Err("rate_limit_per_sec must be at least 1".into());
        }
        if self.rate_limit_burst == 0 {
            return Err("rate_limit_burst must be at least 1".into());
        }
        if self.outbound_queue == 0 {
            return Err("outbound_queue must be at least 1".into());
        }
        if self.write_timeout.is_zero() {
            return Err("write_timeout must be more than zero".into());
        }
        if self.token.as_deref().is_some_and(str::is_empty) {
            return Err("token must not be empty (omit it to disable authentication)".into());
        }
        if let Some(token) = &self.token
            && !token.bytes().all(|b| b.is_ascii_graphic() && b != b',')
        {
            return Err(
                "token must be printable ASCII without spaces or commas (it travels in an HTTP header)"
                    .into(),
            );
        }
        if self.token.is_none() && !self.bind.ip().is_loopback() && !self.insecure_no_token {
            return Err(format!(
                "refusing to listen on {} (not loopback) without a token: anyone who can reach it could drive the runtime; set a token (--token, AGENTS_SERVER_TOKEN, AgentRuntime.websocket_token) or accept the risk with --insecure-no-token",
                self.bind
            ));
        }
        access::Access::new(self)?;
        Ok(())
    }
}

/// Why the server did not start.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The configuration is invalid.
    #[error("invalid server config: {0}")]
    InvalidConfig(String),
    /// The address cannot be bound (in use, not local, no permission).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
}

/// State shared by the router and every connection.
pub(crate) struct Shared {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) tools: Arc<ToolRegistry>,
    /// The agents of the other processes of the world, when there are some.
    pub(crate) remote: Option<Arc<dyn Remote>>,
    pub(crate) config: ServerConfig,
    /// Cancelled by [`ServerHandle::shutdown`]; each connection watches a child token.
    pub(crate) shutdown: CancellationToken,
    pub(crate) connections: AtomicUsize,
    pub(crate) next_id: AtomicU64,
    pub(crate) tracker: TaskTracker,
    /// Who may connect.
    pub(crate) access: access::Access,
    /// Every event, serialised once (see `fanout.rs`).
    pub(crate) events: tokio::sync::broadcast::Sender<Arc<fanout::Fanned>>,
}

/// The agents that live in other processes of the world (`crate::cluster`): requests about one
/// of them are answered by the process that runs it, and requests binding one to something of
/// this process bring it here first ([`ClientRequest::route`]).
pub trait Remote: Send + Sync {
    /// The process running `agent_id`, when another process does.
    fn owner(&self, agent_id: &str) -> Option<Arc<str>>;
    /// Has `owner` answer `request` (about its agent `agent_id`) and returns its reply (an
    /// `agent_unreachable` error when it does not answer in time).
    fn forward(
        &self,
        owner: Arc<str>,
        agent_id: String,
        request: ClientRequest,
        request_id: Option<RequestId>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ServerMessage> + Send + 'static>>;
    /// Has every other process that runs agents answer `request` (a list request, each
    /// answering for its own agents) and returns their replies; a process that does not answer
    /// in time is left out (and logged).
    fn gather(
        &self,
        request: ClientRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<ServerMessage>> + Send + 'static>>;
    /// Has `owner` hand its agent `agent_id` over, and resumes it here; resolves once it runs
    /// here.
    fn bring_here(
        &self,
        owner: Arc<str>,
        agent_id: String,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<(), RemoteError>> + Send + 'static>,
    >;
}

/// Why another process did not do what a [`Remote`] asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// The protocol error the client's request is answered with.
    pub code: crate::protocol::ProtocolErrorCode,
    /// What happened, naming the agent and the processes.
    pub message: String,
}

impl RemoteError {
    /// An error with this code and message.
    pub fn new(
        code: crate::protocol::ProtocolErrorCode,
        message: impl Into<String>,
    ) -> RemoteError {
        RemoteError {
            code,
            message: message.into(),
        }
    }
}

/// The WebSocket server.
pub struct Server;

impl Server {
    /// Binds `config.bind` and serves `/ws` (and `/`, and `/mcp` when [`ServerConfig::mcp`]) on
    /// `handle`'s tokio runtime. Works with the runtime's own tokio runtime (`runtime.handle()`)
    /// or any other multi-threaded one.
    pub fn start(
        runtime: Arc<Runtime>,
        tools: Arc<ToolRegistry>,
        config: ServerConfig,
        handle: &Handle,
    ) -> Result<ServerHandle, NetError> {
        Server::start_with_remote(runtime, tools, config, handle, None)
    }

    /// Like [`Server::start`], for one process of a world served by several: requests about an
    /// agent of another process go to it through `remote`.
    pub fn start_with_remote(
        runtime: Arc<Runtime>,
        tools: Arc<ToolRegistry>,
        config: ServerConfig,
        handle: &Handle,
        remote: Option<Arc<dyn Remote>>,
    ) -> Result<ServerHandle, NetError> {
        config.validate().map_err(NetError::InvalidConfig)?;
        let addr = config.bind;
        let bind_err = |source| NetError::Bind { addr, source };
        let std_listener = std::net::TcpListener::bind(addr).map_err(bind_err)?;
        std_listener.set_nonblocking(true).map_err(bind_err)?;
        let local_addr = std_listener.local_addr().map_err(bind_err)?;
        let listener = {
            let _enter = handle.enter();
            tokio::net::TcpListener::from_std(std_listener).map_err(bind_err)?
        };
        if config.token.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                "listening on {addr} WITHOUT A TOKEN (--insecure-no-token): anyone who can reach this port can drive the runtime"
            );
        }
        if let Some(token) = &config.token
            && !access::token_fits_subprotocol(token)
        {
            tracing::warn!(
                "the token has characters a subprotocol name cannot hold (only letters, digits and !#$%&'*+-.^_`|~): browsers cannot present it as `{TOKEN_SUBPROTOCOL_PREFIX}<token>`, only clients that send `Authorization: Bearer <token>` can connect"
            );
        }
        let access = access::Access::new(&config).map_err(NetError::InvalidConfig)?;
        let shutdown = CancellationToken::new();
        let mut routes = Router::new();
        if config.mcp {
            let mcp = crate::mcp::http_service(
                Arc::new(crate::mcp::memory::with_memory_tools(&tools, &runtime)),
                local_addr,
                &config.allowed_hosts,
                shutdown.clone(),
                (config.rate_limit_per_sec, config.rate_limit_burst),
            );
            routes = routes.nest_service("/mcp", mcp);
        }
        let events = fanout::start(&runtime, shutdown.clone(), handle);
        let shared = Arc::new(Shared {
            runtime,
            tools,
            remote,
            config,
            access,
            events,
            shutdown,
            connections: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            tracker: TaskTracker::new(),
        });
        let app = Router::new()
            .route("/ws", get(upgrade))
            .route("/", get(upgrade))
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .with_state(shared.clone())
            .merge(routes.layer(axum::middleware::from_fn_with_state(
                shared.clone(),
                require_access,
            )));
        let stop = shared.shutdown.clone();
        let serve = handle.spawn(async move {
            // Replies are small and latency matters: no Nagle delay (with a client's delayed
            // ACKs it adds tens of milliseconds to a request → reply round trip).
            let listener = listener.tap_io(|tcp| {
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!("cannot set TCP_NODELAY: {e}");
                }
            });
            let result = axum::serve(
                listener,
                app.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
            if let Err(e) = result {
                tracing::error!("websocket server failed: {e}");
            }
        });
        tracing::info!("websocket server listening on ws://{local_addr}/ws");
        Ok(ServerHandle {
            shared,
            local_addr,
            handle: handle.clone(),
            serve: parking_lot::Mutex::new(Some(serve)),
        })
    }
}

/// A running server. Dropping it does not stop the server; call [`ServerHandle::shutdown`].
pub struct ServerHandle {
    shared: Arc<Shared>,
    local_addr: SocketAddr,
    handle: Handle,
    serve: parking_lot::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl ServerHandle {
    /// The bound address (with the real port when the config asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The configuration the server runs with.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// How many WebSocket connections are open.
    pub fn connection_count(&self) -> usize {
        self.shared.connections.load(Ordering::Acquire)
    }

    /// Whether shutdown has begun.
    pub fn is_shut_down(&self) -> bool {
        self.shared.shutdown.is_cancelled()
    }

    /// Graceful shutdown from async code: stops accepting, sends every connection a close frame
    /// (`1001` "server shutting down") and waits at most `timeout` for the connections to end.
    /// Idempotent. The runtime is not shut down (it belongs to the caller).
    pub async fn shutdown_async(&self, timeout: Duration) {
        let serve = self.serve.lock().take();
        stop(self.shared.clone(), serve, timeout, self.local_addr).await;
    }

    /// Graceful shutdown from any thread (see [`ServerHandle::shutdown_async`]); blocks at most
    /// about `timeout`. From inside the server's own tokio runtime prefer `shutdown_async`.
    pub fn shutdown(&self, timeout: Duration) {
        self.shared.shutdown.cancel();
        let (tx, rx) = std::sync::mpsc::channel();
        let serve = self.serve.lock().take();
        let shared = self.shared.clone();
        let local_addr = self.local_addr;
        self.handle.spawn(async move {
            stop(shared, serve, timeout, local_addr).await;
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(timeout + Duration::from_millis(500));
    }
}

async fn stop(
    shared: Arc<Shared>,
    serve: Option<tokio::task::JoinHandle<()>>,
    timeout: Duration,
    local_addr: SocketAddr,
) {
    shared.shutdown.cancel();
    shared.tracker.close();
    let deadline = tokio::time::Instant::now() + timeout;
    let _ = tokio::time::timeout_at(deadline, shared.tracker.wait()).await;
    if let Some(mut serve) = serve {
        if tokio::time::timeout_at(deadline, &mut serve).await.is_err() {
            serve.abort();
        }
        tracing::info!("websocket server on {local_addr} stopped");
    }
}

/// `GET /ws` and `GET /`: authenticate, then upgrade.
/// `GET /healthz`: the process serves (liveness). Always `200 {"status":"ok"}`; no token
/// needed, nothing revealed.
async fn healthz() -> Response {
    json_response(StatusCode::OK, &serde_json::json!({"status": "ok"}))
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `GET /readyz`: whether the runtime can serve now (readiness): `200` when every check of
/// [`Runtime::readiness`] passes, else `503`; the body names each check and, for a failing one,
/// why (`{"status":"unready","checks":{"memory":"ok","nats":"disconnected"}}`), and counts the
/// stored agents a resume left waiting, by reason
/// (`"waiting_agents":{"count":1,"reasons":{"api_key":1}}`: counts only, no id, no message —
/// `list_stored_agents` has those). Waiting agents do not make the server unready. No token
/// needed.
async fn readyz(State(shared): State<Arc<Shared>>) -> Response {
    let runtime = shared.runtime.clone();
    let (checks, waiting) =
        tokio::task::spawn_blocking(move || (runtime.readiness(), runtime.waiting_agents()))
            .await
            .unwrap_or_else(|_| {
                let failed = ("runtime".to_string(), Err("the check panicked".to_string()));
                (vec![failed], Vec::new())
            });
    let ready = checks.iter().all(|(_, r)| r.is_ok());
    let mut reasons = std::collections::BTreeMap::<&str, usize>::new();
    for (_, w) in &waiting {
        *reasons.entry(w.reason.as_str()).or_default() += 1;
    }
    let body = serde_json::json!({
        "status": if ready { "ready" } else { "unready" },
        "checks": checks
            .into_iter()
            .map(|(name, r)| (name, serde_json::Value::String(r.err().unwrap_or_else(|| "ok".to_string()))))
            .collect::<serde_json::Map<String, serde_json::Value>>(),
        "waiting_agents": {"count": waiting.len(), "reasons": reasons},
    });
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(status, &body)
}

async fn upgrade(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    uri: Uri,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if shared.shutdown.is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "server shutting down\n").into_response();
    }
    if let Err(refusal) = shared.access.check(&headers, &uri) {
        tracing::warn!(%peer, "refused a connection: {}", refusal.message());
        return refusal.into_response();
    }
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(rejection) => return rejection.into_response(),
    };
    let max = shared.config.max_frame_bytes;
    let tracker = shared.tracker.clone();
    upgrade
        // Selected when offered (a browser sending its token as a subprotocol entry offers it).
        .protocols([SUBPROTOCOL])
        .max_frame_size(max)
        .max_message_size(max)
        // Requests are small: start with a small read buffer (it grows for a large message)
        // instead of tungstenite's 128 KiB, which an idle connection would keep.
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_failed_upgrade(move |e| tracing::warn!(%peer, "websocket upgrade failed: {e}"))
        .on_upgrade(move |socket| tracker.track_future(connection::run(shared, socket, peer)))
}

/// Guards the extra routes (MCP over HTTP) with the same checks as the WebSocket upgrade.
async fn require_access(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Err(refusal) = shared.access.check(request.headers(), request.uri()) {
        tracing::warn!("refused an HTTP request: {}", refusal.message());
        return refusal.into_response();
    }
    next.run(request).await
}
