//! One world served by several processes (the `cluster` feature): the bus bridged over NATS,
//! the memory shared on PostgreSQL.
//!
//! A process joins a world with [`Cluster::join`]: it connects to NATS, and from then on every
//! message published on its bus goes to the other processes of the world, and the messages of
//! theirs that its subscribers want come in (see `bridge.rs` for how, and `subjects.rs` for the
//! subjects and how filters become wildcards). Agents stay where they were spawned; an agent
//! of another process is followed in this process's world (its position, for hearing and for
//! the "nearby" of local agents), not run here; requests about it are answered by the process
//! that runs it (`router.rs`, [`Cluster::remote`]). Each agent runs on exactly one process,
//! held by a lease; a dead process's agents are resumed by another one (`leases.rs`).
//!
//! Why core NATS and not JetStream: what must survive a restart (every acknowledged line, task
//! and state) is already in the shared memory, committed before it is acknowledged; the bus
//! carries live events, which a process that was away does not need replayed.

mod bridge;
mod handover;
mod leases;
mod router;
pub mod subjects;

use std::sync::Arc;
use std::time::Duration;

use crate::runtime::Runtime;
pub use bridge::BridgeStats;
pub use router::{FORWARD_TIMEOUT, TRACE_HEADER};
use subjects::Subjects;
pub use subjects::{ORIGIN_HEADER, SEQ_HEADER};

/// The default lease of an agent.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// How long joining waits for the first connection to NATS.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and as what a process joins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The NATS server (`nats://host:4222`; several, comma-separated, for a NATS cluster).
    pub nats_url: String,
    /// The world's name (letters, digits, `_`, `-`): processes of one world share its agents'
    /// events; several worlds may share one NATS.
    pub world: String,
    /// The first token of every subject (`agents`).
    pub prefix: String,
    /// This process's name in the world (unique; [`ClusterConfig::new`] makes one from the
    /// host name, the PID and a random number).
    pub process_id: String,
    /// How long an agent's lease lasts (10 s by default): a process that died loses its agents
    /// to another process within about this time (see `leases.rs`).
    pub lease: Duration,
}

impl ClusterConfig {
    /// A process of `world` on the NATS at `nats_url`, with the default prefix and a fresh
    /// process id.
    pub fn new(nats_url: impl Into<String>, world: impl Into<String>) -> ClusterConfig {
        ClusterConfig {
            nats_url: nats_url.into(),
            world: world.into(),
            prefix: "agents".to_string(),
            process_id: format!(
                "{}-{}-{:08x}",
                subjects::token(&crate::time::hostname()),
                std::process::id(),
                rand::random::<u32>()
            ),
            lease: DEFAULT_LEASE,
        }
    }
}

/// Why a process could not join.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The world or prefix cannot be a subject token.
    #[error(transparent)]
    BadName(#[from] subjects::BadName),
    /// The runtime's memory is not shared (a world's processes share a PostgreSQL database).
    #[error("a world served by several processes needs a shared PostgreSQL memory, not {0}")]
    NotShared(String),
    /// The lease is too short to be renewed in time.
    #[error("the lease must be at least 1 second, not {0:?}")]
    BadLease(Duration),
    /// NATS could not be reached.
    #[error("cannot connect to NATS at {url}: {message}")]
    Connect {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
}

/// A process's membership in a world.
pub struct Cluster {
    config: ClusterConfig,
    client: async_nats::Client,
    bridge: bridge::Bridge,
    router: Arc<router::Router>,
    cancel: tokio_util::sync::CancellationToken,
    answering: tokio::task::JoinHandle<()>,
    leasing: tokio::task::JoinHandle<()>,
}

impl Cluster {
    /// Connects to NATS and starts bridging `runtime`'s bus. Fails when the world's name is not
    /// usable or NATS cannot be reached within [`CONNECT_TIMEOUT`]; once joined, a lost
    /// connection is retried for ever (and reported by [`Cluster::is_connected`]).
    pub async fn join(
        runtime: Arc<Runtime>,
        config: ClusterConfig,
    ) -> Result<Cluster, ClusterError> {
        let subjects = Subjects::new(&config.prefix, &config.world)?;
        let url = match runtime.memory().location() {
            crate::memory::Location::Postgres(url) => url.clone(),
            other => return Err(ClusterError::NotShared(other.to_string())),
        };
        if config.lease < Duration::from_secs(1) {
            return Err(ClusterError::BadLease(config.lease));
        }
        let connect_error = |message: String| ClusterError::Connect {
            url: config.nats_url.clone(),
            message,
        };
        let client = tokio::time::timeout(
            CONNECT_TIMEOUT,
            async_nats::ConnectOptions::new()
                .name(format!("godot-agents {}", config.process_id))
                .no_echo()
                .max_reconnects(None)
                .connect(config.nats_url.as_str()),
        )
        .await
        .map_err(|_| connect_error(format!("no answer within {CONNECT_TIMEOUT:?}")))?
        .map_err(|e| connect_error(e.to_string()))?;
        let process: Arc<str> = Arc::from(config.process_id.as_str());
        runtime.memory().set_process(&process);
        let probe = client.clone();
        runtime.add_readiness_check(
            "nats",
            Arc::new(move || match probe.connection_state() {
                async_nats::connection::State::Connected => Ok(()),
                state => Err(format!("not connected to NATS ({state})")),
            }),
        );
        let directory = Arc::new(router::Directory::default());
        let router = Arc::new(router::Router::new(router::RouterParts {
            client: client.clone(),
            subjects: subjects.clone(),
            process: process.clone(),
            directory: directory.clone(),
            runtime: runtime.clone(),
            db_url: url.clone(),
            lease: config.lease,
        }));
        let cancel = tokio_util::sync::CancellationToken::new();
        let answering = router
            .serve(cancel.clone())
            .await
            .map_err(|e| connect_error(e.to_string()))?;
        let bridge = bridge::Bridge::start(
            runtime.clone(),
            client.clone(),
            subjects,
            process.clone(),
            directory,
        )
        .await;
        router.learn_directory().await;
        let leasing = leases::start(runtime, url, process, config.lease, cancel.clone());
        Ok(Cluster {
            config,
            client,
            bridge,
            router,
            cancel,
            answering,
            leasing,
        })
    }

    /// How this process joined.
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// Whether the connection to NATS is up now.
    pub fn is_connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// What the bridge has done so far.
    pub fn stats(&self) -> BridgeStats {
        self.bridge.stats()
    }

    /// The agents of the other processes, for the WebSocket server
    /// ([`Server::start_with_remote`](crate::net::Server::start_with_remote)): requests about
    /// them are answered by the process that runs them.
    pub fn remote(&self) -> Arc<dyn crate::net::Remote> {
        self.router.clone()
    }

    /// Leaves the world: this process's agents stop and their leases are marked expired once
    /// their last writes are committed, so that the other processes resume them at their next
    /// lease tick (see `leases.rs`); then the bridge stops, what is queued for NATS sent first.
    pub async fn leave(self) {
        let _ = self.client.flush().await;
        self.cancel.cancel();
        let _ = self.answering.await;
        let _ = self.leasing.await;
        self.bridge.stop().await;
        let _ = self.client.drain().await;
    }
}
