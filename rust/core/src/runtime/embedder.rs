//! The runtime's embedder ([`crate::mind::EmbeddingSettings`]): vectors of agents' memories
//! made in the background, and of what a decision recalls by, when it asks.
//!
//! - **Memories** are queued as they are stored (and, when an agent starts, those of its
//!   memories the model has not embedded yet) and embedded `batch_size` at a time by one task;
//!   their vectors are stored ([`crate::memory::Memory::store_vectors`]) and added to the
//!   agents' held vectors ([`VectorIndex`]). A memory waits at most for the batch before it:
//!   until its vector exists, it is recalled by its words.
//! - **A decision's query** is embedded when it recalls, waiting at most
//!   `query_timeout_ms`. No answer in time, or an endpoint known to be failing: the decision
//!   recalls by words alone and goes on.
//! - **Failures** are logged, never an agent's error: the first of an outage as a warning
//!   (then at most one a minute), the recovery as information. A call that may succeed later
//!   (no connection, a timeout, 429, 5xx) is retried, waiting 1 s, then twice as long each
//!   time up to a minute, while decisions recall by words; a call that will not (a refused
//!   request, an answer with the wrong dimension or not JSON, an unknown model, a refused key)
//!   drops its batch — those memories are embedded again when their agent next starts.
//!
//! At most [`MAX_PENDING`] memories wait; past it the oldest are dropped (logged) and wait for
//! their agent's next start.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agents_llm::client::{CallError, Client, Endpoint};
use agents_llm::embeddings::EmbeddingRequest;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::brain::ApiKeys;
use crate::memory::Memory;
use crate::mind::vectors::{Query, VectorIndex, unit};
use crate::mind::{EmbeddingSettings, Meaning};

/// Most memories waiting to be embedded.
pub const MAX_PENDING: usize = 100_000;
/// The longest text sent to be embedded, in characters (a query of many lines is cut).
pub const MAX_EMBEDDED_CHARS: usize = 4_000;
/// How long the embedder waits for more memories before it sends a batch that is not full.
const GATHER: Duration = Duration::from_millis(20);
/// The first wait after a failed call, doubled after each further one.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between failed calls.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How often an outage is logged again.
const WARN_EVERY: Duration = Duration::from_secs(60);
/// Memories of one agent read per page when it starts.
const BACKFILL_PAGE: usize = 1_024;

/// A memory to embed.
struct Pending {
    agent_id: String,
    id: i64,
    text: String,
}

enum Job {
    Embed(Pending),
    /// Embed the memories of an agent that have no vector of the model yet.
    Backfill(String),
}

/// Whether the endpoint answers, for logging once per outage and skipping queries while it
/// fails.
#[derive(Default)]
struct Health {
    /// Consecutive failed calls.
    failures: u32,
    /// No query is tried before this.
    retry_at: Option<Instant>,
    last_warned: Option<Instant>,
}

/// Makes vectors of memories and queries with the runtime's embeddings endpoint.
pub(crate) struct Embedder {
    settings: EmbeddingSettings,
    client: Client,
    keys: ApiKeys,
    index: VectorIndex,
    jobs: mpsc::UnboundedSender<Job>,
    health: Mutex<Health>,
    cancel: CancellationToken,
    /// The vectors' dimension: `dimensions` when set, else the first answer's (0 before);
    /// an answer of another is refused.
    dimension: std::sync::atomic::AtomicUsize,
}

impl Embedder {
    /// An embedder for `settings`, its task started on `handle` (tracked by `tracker`).
    pub(crate) fn start(
        settings: EmbeddingSettings,
        keys: ApiKeys,
        memory: Memory,
        handle: &tokio::runtime::Handle,
        tracker: &tokio_util::task::TaskTracker,
    ) -> Result<Arc<Embedder>, String> {
        let client = Client::new().map_err(|e| format!("embeddings: {e}"))?;
        let (jobs, rx) = mpsc::unbounded_channel();
        let capacity = settings.cache_megabytes.saturating_mul(1 << 20);
        let embedder = Arc::new(Embedder {
            index: VectorIndex::new(settings.model.trim(), capacity),
            settings,
            client,
            keys,
            jobs,
            health: Mutex::default(),
            cancel: CancellationToken::new(),
            dimension: std::sync::atomic::AtomicUsize::new(0),
        });
        tracker.spawn_on(embedder.clone().run(rx, memory), handle);
        Ok(embedder)
    }

    /// The vectors held for recall.
    pub(crate) fn index(&self) -> &VectorIndex {
        &self.index
    }

    /// Queues a stored memory to be embedded.
    pub(crate) fn embed(&self, agent_id: &str, id: i64, text: &str) {
        let _ = self.jobs.send(Job::Embed(Pending {
            agent_id: agent_id.to_string(),
            id,
            text: text.to_string(),
        }));
    }

    /// Queues the memories of `agent_id` the model has not embedded yet (it started).
    pub(crate) fn backfill(&self, agent_id: &str) {
        let _ = self.jobs.send(Job::Backfill(agent_id.to_string()));
    }

    /// Stops the task (the runtime shuts down); what still waits is embedded at the agents'
    /// next start.
    pub(crate) fn stop(&self) {
        self.cancel.cancel();
    }

    /// The vectors of `texts` (each of length 1, in order), or `None` — logged — when the
    /// endpoint is failing, answers wrongly or not within `query_timeout_ms`.
    pub(crate) async fn query(&self, texts: &[String]) -> Option<Vec<Vec<f32>>> {
        if texts.is_empty() || texts.iter().any(|t| t.trim().is_empty()) {
            return None;
        }
        if self
            .health
            .lock()
            .retry_at
            .is_some_and(|at| Instant::now() < at)
        {
            return None;
        }
        let inputs: Vec<String> = texts.iter().map(|t| cut(t)).collect();
        let asked = tokio::time::timeout(self.settings.query_timeout(), self.call(&inputs)).await;
        match asked {
            Ok(Ok(vectors)) => {
                self.answered();
                Some(vectors)
            }
            Ok(Err(error)) => {
                self.failed(&error.to_string(), error.retryable());
                None
            }
            Err(_) => {
                self.failed(
                    &format!(
                        "no vectors for a decision's query within {} ms",
                        self.settings.query_timeout_ms
                    ),
                    true,
                );
                None
            }
        }
    }

    /// What a recall of `agent_id` compares by meaning, given its query vectors: `None`
    /// (logged) when the agent's vectors cannot be read.
    pub(crate) fn meaning(
        &self,
        memory: &Memory,
        agent_id: &str,
        queries: Vec<Vec<f32>>,
    ) -> Option<Meaning> {
        match self.index.agent(agent_id, memory) {
            Ok(vectors) => Some(Meaning {
                vectors,
                queries: queries.iter().map(|q| Query::new(q)).collect(),
            }),
            Err(e) => {
                tracing::warn!(agent = %agent_id, "reading memory vectors: {e}");
                None
            }
        }
    }

    /// [`Embedder::query`] and [`Embedder::meaning`] for a caller outside the runtime's tasks
    /// (the game's `recall`): blocks up to `query_timeout_ms` and a little more.
    pub(crate) fn meaning_now(
        self: &Arc<Self>,
        handle: &tokio::runtime::Handle,
        memory: &Memory,
        agent_id: &str,
        texts: Vec<String>,
    ) -> Option<Meaning> {
        let (tx, rx) = std::sync::mpsc::channel();
        let embedder = self.clone();
        handle.spawn(async move {
            let _ = tx.send(embedder.query(&texts).await);
        });
        let wait = self.settings.query_timeout() + Duration::from_millis(250);
        let queries = rx.recv_timeout(wait).ok().flatten()?;
        self.meaning(memory, agent_id, queries)
    }

    /// One call: `inputs`' vectors, of length 1.
    async fn call(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, CallError> {
        let api_key = match &self.settings.api_key_env {
            Some(name) => Some(self.keys.get(name).ok_or_else(|| CallError::Auth {
                status: 0,
                message: format!(
                    "embeddings.api_key_env names {name}, which is not set (nor handed to the \
                     runtime with set_api_key)"
                ),
            })?),
            None => None,
        };
        let endpoint = Endpoint {
            api: std::sync::Arc::new(agents_llm::openai::API),
            base_url: self.settings.base_url.trim().to_string(),
            api_key,
            headers: Vec::new(),
            timeout: self.settings.timeout(),
        };
        use std::sync::atomic::Ordering;
        let known = self.dimension.load(Ordering::Relaxed);
        let request = EmbeddingRequest {
            model: self.settings.model.trim(),
            inputs,
            dimensions: self.settings.dimensions,
            expected_dimension: (known > 0).then_some(known),
        };
        let answer = self.client.embed(&endpoint, &request).await?;
        if known == 0 {
            let _ = self.dimension.compare_exchange(
                0,
                answer.dimension(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
        Ok(answer.vectors.into_iter().map(unit).collect())
    }

    fn answered(&self) {
        let mut health = self.health.lock();
        if health.failures > 0 {
            tracing::info!(
                "the embeddings endpoint {} answers again: memories are recalled by meaning",
                self.settings.base_url
            );
        }
        *health = Health::default();
    }

    /// Notes a failed call; a `retryable` one makes queries wait for the backoff.
    fn failed(&self, error: &str, retryable: bool) -> Duration {
        let mut health = self.health.lock();
        health.failures = health.failures.saturating_add(1);
        let wait = FIRST_BACKOFF
            .saturating_mul(1 << (health.failures - 1).min(6))
            .min(MAX_BACKOFF);
        let now = Instant::now();
        if retryable {
            health.retry_at = Some(now + wait);
        }
        if health
            .last_warned
            .is_none_or(|at| now.duration_since(at) >= WARN_EVERY)
        {
            health.last_warned = Some(now);
            tracing::warn!(
                failures = health.failures,
                "the embeddings endpoint {} failed: {error}; memories are recalled by their \
                 words until it answers",
                self.settings.base_url
            );
        }
        wait
    }

    /// The task: gathers memories, embeds them a batch at a time, stores the vectors.
    async fn run(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Job>, memory: Memory) {
        let mut pending: VecDeque<Pending> = VecDeque::new();
        loop {
            if pending.is_empty() {
                let job = tokio::select! {
                    _ = self.cancel.cancelled() => return,
                    job = rx.recv() => job,
                };
                match job {
                    Some(job) => self.take(job, &mut pending, &memory).await,
                    None => return,
                }
                // A moment for the rest of a burst to arrive.
                tokio::select! {
                    _ = self.cancel.cancelled() => return,
                    _ = tokio::time::sleep(GATHER) => {}
                }
            }
            while let Ok(job) = rx.try_recv() {
                self.take(job, &mut pending, &memory).await;
            }
            let n = pending.len().min(self.settings.batch_size);
            let batch: Vec<Pending> = pending.drain(..n).collect();
            let inputs: Vec<String> = batch.iter().map(|p| cut(&p.text)).collect();
            let called = tokio::select! {
                _ = self.cancel.cancelled() => return,
                called = self.call(&inputs) => called,
            };
            match called {
                Ok(vectors) => {
                    self.answered();
                    self.keep(batch, vectors, &memory);
                }
                Err(error) if error.retryable() => {
                    let wait = self.failed(&error.to_string(), true);
                    for p in batch.into_iter().rev() {
                        pending.push_front(p);
                    }
                    tokio::select! {
                        _ = self.cancel.cancelled() => return,
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
                Err(error) => {
                    self.failed(
                        &format!("{error} ({} memories are left to their words)", batch.len()),
                        false,
                    );
                }
            }
        }
    }

    /// Stores a batch's vectors, each agent's in one write, and holds them for recall.
    fn keep(&self, batch: Vec<Pending>, vectors: Vec<Vec<f32>>, memory: &Memory) {
        type Vectors = Vec<(i64, Vec<f32>)>;
        let mut by_agent: Vec<(String, Vectors)> = Vec::new();
        for (p, vector) in batch.into_iter().zip(vectors) {
            match by_agent.iter_mut().find(|(a, _)| *a == p.agent_id) {
                Some((_, list)) => list.push((p.id, vector)),
                None => by_agent.push((p.agent_id, vec![(p.id, vector)])),
            }
        }
        for (agent_id, vectors) in by_agent {
            memory.store_vectors(&agent_id, self.index.model(), &vectors);
            let refused = self.index.add(&agent_id, &vectors);
            if refused > 0 {
                tracing::warn!(
                    agent = %agent_id,
                    "{refused} new memory vectors have another dimension than the agent's \
                     others and are not used for recall"
                );
            }
        }
    }

    /// Puts a job's memories in line.
    async fn take(&self, job: Job, pending: &mut VecDeque<Pending>, memory: &Memory) {
        match job {
            Job::Embed(p) => push(pending, p),
            Job::Backfill(agent_id) => {
                let mut after = 0;
                loop {
                    let (memory, agent, model) = (
                        memory.clone(),
                        agent_id.clone(),
                        self.index.model().to_string(),
                    );
                    let page = tokio::task::spawn_blocking(move || {
                        memory.unembedded(&agent, &model, after, BACKFILL_PAGE)
                    })
                    .await;
                    let page = match page {
                        Ok(Ok(page)) => page,
                        Ok(Err(e)) => {
                            tracing::warn!(agent = %agent_id, "finding memories to embed: {e}");
                            return;
                        }
                        Err(e) => {
                            tracing::warn!(agent = %agent_id, "finding memories to embed: {e}");
                            return;
                        }
                    };
                    let full = page.len() == BACKFILL_PAGE;
                    for (id, text) in page {
                        after = id;
                        push(
                            pending,
                            Pending {
                                agent_id: agent_id.clone(),
                                id,
                                text,
                            },
                        );
                    }
                    if !full || pending.len() >= MAX_PENDING {
                        return;
                    }
                }
            }
        }
    }
}

/// Adds a memory to the line, dropping the oldest past [`MAX_PENDING`] (logged for the
/// first and every 10,000th dropped).
fn push(pending: &mut VecDeque<Pending>, p: Pending) {
    static DROPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if pending.len() >= MAX_PENDING
        && let Some(d) = pending.pop_front()
    {
        let n = DROPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n.is_multiple_of(10_000) {
            tracing::warn!(
                agent = %d.agent_id,
                "{MAX_PENDING} memories wait to be embedded: the oldest ({} so far) are left to \
                 their words until their agents start again",
                n + 1
            );
        }
    }
    pending.push_back(p);
}

/// The texts a recall embeds: its query, then each line it searches apart (when there are
/// several, as [`crate::mind::recall::recall`] does).
pub(crate) fn recall_texts(query: &str, lines: &[String]) -> Vec<String> {
    let mut texts = vec![query.to_string()];
    if lines.len() > 1 {
        texts.extend(lines.iter().cloned());
    }
    texts
}

/// A text cut to [`MAX_EMBEDDED_CHARS`].
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_EMBEDDED_CHARS) {
        Some((at, _)) => text[..at].to_string(),
        None => text.to_string(),
    }
}
