//! A fake LLM provider: a real HTTP server on loopback that speaks the providers' wire formats,
//! so the model brains are tested offline on the real wire.
//!
//! It writes the JSON itself (it does not share code with the client), so a test that passes
//! proves the client speaks the format, not that two halves of one library agree.
//!
//! # Routes
//!
//! - `POST /v1/chat/completions` — OpenAI chat completions (the OpenAI base URL is
//!   [`FakeServer::openai_base`], `{url}/v1`);
//! - `POST /v1/messages` — Anthropic messages (base URL [`FakeServer::anthropic_base`], `{url}`);
//! - `POST /api/chat` — Ollama's own chat API (base URL [`FakeServer::ollama_base`], `{url}`),
//!   see [Ollama](#ollama);
//! - `POST /v1/embeddings` — OpenAI embeddings (same base URL as chat completions), see
//!   [Embeddings](#embeddings);
//! - control, for processes that run the `fakellm` binary: `POST /_fake/replies` (a JSON array
//!   of [`Behaviour`]s appended to the queue), `GET /_fake/requests` (what was received),
//!   `POST /_fake/latency` (`{"ms": n}`), `POST /_fake/embeddings` (one
//!   [`EmbeddingsBehaviour`]), `POST /_fake/reset`;
//! - `GET /_fake/files/{name}` — a file of the directory [`FakeServer::serve_files`] named
//!   (`fakellm --files DIR`), for model downloads; 404 for any other name, or none served.
//!
//! Each model request takes the next queued [`Behaviour`] (the default one when the queue is
//! empty), waits the configured latency, and answers in the route's format — streamed when the
//! request says `"stream": true` (Server-Sent Events; newline-delimited JSON for Ollama, which
//! also streams when `stream` is left out), else as one JSON body.
//!
//! # Token accounting (a fixed rule, so benchmarks can count prompt tokens)
//!
//! The prompt is the request's `tools`, then `system`, then `messages`, each serialized as
//! compact JSON; it costs `ceil(chars / 4)` tokens, and an answer `ceil(chars / 4)` of its text
//! and arguments. Cached tokens: for OpenAI, the longest common prefix (in characters, / 4) with
//! any earlier prompt for the same model; for Anthropic, the part of the prompt up to and
//! including the last block carrying `cache_control` (tools, then system blocks), when an
//! earlier request for the same model had the same part ("earlier": the last
//! [`PROMPT_MEMORY`] requests). Reported as the providers report them: OpenAI `prompt_tokens`
//! (cached included) with `prompt_tokens_details.cached_tokens`; Anthropic `input_tokens` (not
//! cached) plus `cache_read_input_tokens`; Ollama `prompt_eval_count` (the whole prompt: it
//! reports no cached tokens) and `eval_count`.
//!
//! # Ollama
//!
//! `/api/chat` answers as Ollama does: streamed, one JSON object per line — the text in pieces,
//! then each call whole in a line of its own (its `arguments` a JSON object; a [`FakeCall`] whose
//! arguments are a string that is no JSON object sends that string, which Ollama itself never
//! does; no `id` unless the call has one), then a last line with `done: true`, `done_reason` and
//! the token counts —; or one JSON body with the same fields. `StreamError` is a line
//! `{"error": …}` after the first piece; `Truncated` leaves out the `done` line. As Ollama, it
//! refuses (400, `{"error": …}`) a request whose messages carry tool calls with arguments that
//! are not a JSON object.
//!
//! # Embeddings
//!
//! `/v1/embeddings` answers as its [`EmbeddingsBehaviour`] says ([`FakeServer::set_embeddings`];
//! it stays until changed, apart from the chat behaviours' queue), after the same latency. Its
//! vectors are [`fake_embedding`]s: deterministic hashed bags of words, so texts that share
//! words are close (high cosine) and texts that share none are nearly orthogonal — enough to
//! test the mechanics of retrieval by meaning, not its quality. Each vector has the request's
//! `dimensions` when it asks, else the behaviour's dimension ([`DEFAULT_EMBEDDING_DIMENSION`]).
//! `input` may be a string or a non-empty array of strings; anything else is a 400 with an
//! OpenAI-shaped error. Usage: `prompt_tokens` = `total_tokens` = the sum over the inputs of
//! `ceil(chars / 4)`. Embeddings requests are recorded with the others ([`FakeServer::requests`])
//! and [`FakeServer::embedded_inputs`] counts the texts given vectors; they take nothing from
//! the chat queue and do not count in [`FakeServer::max_in_flight`] or
//! [`FakeServer::abandoned`].

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A tool call the fake model makes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FakeCall {
    /// Its id (default: `call_<n>` / `toolu_<n>`; on Ollama's route, none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool.
    pub name: String,
    /// The arguments: an object (sent as its JSON text), or a string sent as it is — broken
    /// JSON included.
    #[serde(default)]
    pub arguments: Value,
}

impl FakeCall {
    /// A call of `name` with object arguments.
    pub fn new(name: &str, arguments: Value) -> Self {
        FakeCall {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            Value::Null => "{}".into(),
            other => other.to_string(),
        }
    }
}

/// How the fake model answers one request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Behaviour {
    /// Answer text and tool calls. Streamed, text goes out in pieces of `chunk_chars`
    /// characters (default 7), and so do each call's arguments.
    Reply {
        /// The text.
        #[serde(default)]
        text: String,
        /// The calls.
        #[serde(default)]
        tool_calls: Vec<FakeCall>,
        /// Piece size when streaming.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk_chars: Option<usize>,
    },
    /// OpenAI route, as Ollama's `/v1` streams: each call whole in one chunk, every call at
    /// `index` 0, and `finish_reason: "stop"` even with calls.
    OllamaReply {
        /// The text.
        #[serde(default)]
        text: String,
        /// The calls.
        #[serde(default)]
        tool_calls: Vec<FakeCall>,
    },
    /// An HTTP error status with a body (429 with `Retry-After`, 500, 401, 404 …).
    Status {
        /// The status code.
        status: u16,
        /// The body (a provider-shaped error object).
        #[serde(default)]
        body: Value,
        /// The `Retry-After` header, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// Starts streaming, then reports an error in the stream.
    StreamError {
        /// The error's message.
        message: String,
    },
    /// Starts answering `text`, then stops before the answer's end: streamed, the text goes out
    /// in pieces of 7 characters and the stream closes without its terminator (OpenAI: no
    /// `finish_reason`, no `data: [DONE]`; Anthropic: no `message_delta`, no `message_stop`;
    /// Ollama: no line with `done: true`), as when a connection is cut mid-answer; not streamed,
    /// the first half of the JSON body.
    Truncated {
        /// The text.
        text: String,
    },
    /// Plays what it is offered: calls `tool` with the first value listed (`enum`) for its one
    /// required argument in the request's tool definitions (OpenAI and Ollama
    /// `function.parameters`, Anthropic `input_schema`), as a model that reads the legal moves
    /// off the definition; when the request has no such tool (or it lists nothing), answers
    /// `text` alone. Set it as the default ([`FakeServer::set_default`]) for a player of a
    /// whole game.
    PickListed {
        /// The tool to call (`move`).
        tool: String,
        /// The text when there is nothing to call.
        #[serde(default)]
        text: String,
    },
    /// Never answers.
    Hang,
    /// `200 OK` with a body that is not JSON.
    Garbage {
        /// The body.
        body: String,
    },
}

impl Behaviour {
    /// A text-only answer.
    pub fn text(text: &str) -> Self {
        Behaviour::Reply {
            text: text.into(),
            tool_calls: Vec::new(),
            chunk_chars: None,
        }
    }

    /// An answer with tool calls (and no text).
    pub fn calls(tool_calls: Vec<FakeCall>) -> Self {
        Behaviour::Reply {
            text: String::new(),
            tool_calls,
            chunk_chars: None,
        }
    }
}

/// How `/v1/embeddings` answers (every request, until changed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EmbeddingsBehaviour {
    /// One [`fake_embedding`] per input, of the request's `dimensions` when it asks, else of
    /// `dimension` (at most [`MAX_FAKE_DIMENSION`]).
    Vectors {
        /// The dimension when the request does not ask for one.
        #[serde(default = "default_dimension")]
        dimension: usize,
        /// Send `data` last input first (each item keeps its `index`), as a server may.
        #[serde(default)]
        reversed: bool,
    },
    /// Like `Vectors`, but always of `dimension` (at most [`MAX_FAKE_DIMENSION`]), whatever
    /// the request asks: a model other than the one configured.
    WrongDimension {
        /// The dimension served.
        dimension: usize,
    },
    /// An HTTP error status with a body (429 with `Retry-After`, 500, 401, 404 …).
    Status {
        /// The status code.
        status: u16,
        /// The body (a provider-shaped error object).
        #[serde(default)]
        body: Value,
        /// The `Retry-After` header, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// Never answers.
    Hang,
    /// `200 OK` with a body that is not JSON.
    Garbage {
        /// The body.
        body: String,
    },
}

impl Default for EmbeddingsBehaviour {
    /// [`EmbeddingsBehaviour::Vectors`] of [`DEFAULT_EMBEDDING_DIMENSION`], in order.
    fn default() -> Self {
        EmbeddingsBehaviour::vectors(DEFAULT_EMBEDDING_DIMENSION)
    }
}

impl EmbeddingsBehaviour {
    /// Vectors of `dimension` (when the request does not ask for one), in order.
    pub fn vectors(dimension: usize) -> Self {
        EmbeddingsBehaviour::Vectors {
            dimension,
            reversed: false,
        }
    }
}

fn default_dimension() -> usize {
    DEFAULT_EMBEDDING_DIMENSION
}

/// The dimension of the fake's vectors unless the behaviour or the request says otherwise
/// (that of `nomic-embed-text`, a common local embedding model).
pub const DEFAULT_EMBEDDING_DIMENSION: usize = 768;

/// The most dimensions the fake serves: a request asking for more is a 400, a behaviour
/// configured with more serves this many.
pub const MAX_FAKE_DIMENSION: usize = 65_536;

/// How many buckets each word of a [`fake_embedding`] adds to.
const BUCKETS_PER_WORD: u64 = 3;

/// The fake embedding of `text`, `dimension` numbers long (empty for 0), of length 1:
///
/// 1. the words are the runs of alphanumeric characters, lower-cased, with a light stem: a
///    trailing `s` is dropped from a word of more than three characters not ending in `ss`
///    (`wells` → `well`, `is` and `glass` stay); a text without a word counts as the one
///    word `""`;
/// 2. each occurrence of a word adds ±1 to three components: the word's 64-bit FNV-1a hash,
///    mixed with the bucket's number (0, 1, 2) by SplitMix64's finaliser, gives the
///    component (the mix modulo `dimension`) and the sign (its top bit: set is -1);
/// 3. the sum is divided by its Euclidean norm.
///
/// So the cosine of two texts grows with the words they share (stop words included: nothing
/// is weighted), and is about 0 for texts sharing none (up to hash collisions, rarer with more
/// dimensions). Deterministic across runs and platforms.
pub fn fake_embedding(text: &str, dimension: usize) -> Vec<f32> {
    let mut vector = vec![0.0f64; dimension];
    if dimension == 0 {
        return Vec::new();
    }
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()).to_string())
        .collect();
    if words.is_empty() {
        words.push(String::new());
    }
    for word in &words {
        let hash = fnv1a(word.as_bytes());
        for bucket in 0..BUCKETS_PER_WORD {
            let mixed = splitmix64(hash ^ bucket.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let component = (mixed % dimension as u64) as usize;
            vector[component] += if mixed >> 63 == 1 { -1.0 } else { 1.0 };
        }
    }
    let norm = vector.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 {
        // Every bucket cancelled out (two words of opposite signs in one component): a fixed
        // unit vector rather than no direction at all.
        vector[0] = 1.0;
        return vector.into_iter().map(|x| x as f32).collect();
    }
    vector.into_iter().map(|x| (x / norm) as f32).collect()
}

/// Drops a trailing `s` from a word of more than three characters not ending in `ss`.
fn stem(word: &str) -> &str {
    if word.chars().count() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        &word[..word.len() - 1]
    } else {
        word
    }
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64's finaliser: spreads the bits of `x`.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How many earlier prompts the cache accounting compares with.
pub const PROMPT_MEMORY: usize = 64;

/// The answer when nothing is queued, unless [`FakeServer::set_default`] changed it.
pub const DEFAULT_TEXT: &str = "The fake model has nothing scripted to say.";

/// A request the server received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// The path (`/v1/chat/completions`, `/v1/messages`, `/api/chat`).
    pub path: String,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body (`null` when it was not JSON).
    pub body: Value,
    /// Milliseconds since the server started.
    pub received_ms: u64,
}

impl RecordedRequest {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Shared {
    queue: Mutex<VecDeque<Behaviour>>,
    default: Mutex<Behaviour>,
    latency: Mutex<Duration>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Earlier prompts, for cache accounting: (route, model, prompt, cacheable prefix).
    prompts: Mutex<Vec<(String, String, String, String)>>,
    started: Instant,
    counter: Mutex<u64>,
    /// Model requests being answered now, and the most at once.
    in_flight: Mutex<(usize, usize)>,
    /// Model requests whose client went away before the answer started.
    abandoned: AtomicUsize,
    /// How `/v1/embeddings` answers.
    embeddings: Mutex<EmbeddingsBehaviour>,
    /// Texts given a vector.
    embedded_inputs: AtomicUsize,
    /// The directory `/_fake/files/{name}` serves.
    files: Mutex<Option<std::path::PathBuf>>,
}

/// A running fake provider.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl FakeServer {
    /// Starts serving on `addr` (`127.0.0.1:0` for any free port) on the current tokio runtime.
    pub async fn start(addr: &str) -> std::io::Result<FakeServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            default: Mutex::new(Behaviour::text(DEFAULT_TEXT)),
            latency: Mutex::new(Duration::ZERO),
            requests: Mutex::new(Vec::new()),
            prompts: Mutex::new(Vec::new()),
            started: Instant::now(),
            counter: Mutex::new(0),
            in_flight: Mutex::new((0, 0)),
            abandoned: Default::default(),
            embeddings: Mutex::new(EmbeddingsBehaviour::default()),
            embedded_inputs: AtomicUsize::new(0),
            files: Mutex::new(None),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .route("/api/chat", post(ollama))
            .route("/v1/embeddings", post(embeddings))
            .route("/_fake/replies", post(push_replies))
            .route("/_fake/requests", get(list_requests))
            .route("/_fake/latency", post(set_latency))
            .route("/_fake/embeddings", post(set_embeddings))
            .route("/_fake/reset", post(reset))
            .route("/_fake/files/{name}", get(serve_file))
            .with_state(shared.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(FakeServer {
            addr,
            shared,
            shutdown: Some(tx),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The OpenAI base URL (`{url}/v1`).
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The Anthropic base URL (`{url}`).
    pub fn anthropic_base(&self) -> String {
        self.url()
    }

    /// The Ollama base URL (`{url}`).
    pub fn ollama_base(&self) -> String {
        self.url()
    }

    /// The base URL for the wire format named `api` (`openai`, `anthropic` or `ollama`, as
    /// `agents_llm::api::Api::name` says it); `None` for a format this server does not speak.
    pub fn base_for(&self, api: &str) -> Option<String> {
        match api {
            "openai" => Some(self.openai_base()),
            "anthropic" => Some(self.anthropic_base()),
            "ollama" => Some(self.ollama_base()),
            _ => None,
        }
    }

    /// Queues a behaviour for the next request.
    pub fn push(&self, behaviour: Behaviour) {
        self.shared.queue.lock().push_back(behaviour);
    }

    /// Queues several.
    pub fn push_many(&self, behaviours: impl IntoIterator<Item = Behaviour>) {
        self.shared.queue.lock().extend(behaviours);
    }

    /// The behaviour when nothing is queued.
    pub fn set_default(&self, behaviour: Behaviour) {
        *self.shared.default.lock() = behaviour;
    }

    /// How `/v1/embeddings` answers from now on (see [`EmbeddingsBehaviour`]; the default is
    /// vectors of [`DEFAULT_EMBEDDING_DIMENSION`]).
    pub fn set_embeddings(&self, behaviour: EmbeddingsBehaviour) {
        *self.shared.embeddings.lock() = behaviour;
    }

    /// How many texts `/v1/embeddings` has given a vector so far (a wrong-sized one
    /// included).
    pub fn embedded_inputs(&self) -> usize {
        self.shared.embedded_inputs.load(Ordering::SeqCst)
    }

    /// Serves the files of `dir` at `GET /_fake/files/{name}` (plain names only: letters,
    /// digits, `.`, `-`, `_`, not starting with `.`).
    pub fn serve_files(&self, dir: impl Into<std::path::PathBuf>) {
        *self.shared.files.lock() = Some(dir.into());
    }

    /// Delay before each answer's first byte (chat and embeddings alike).
    pub fn set_latency(&self, latency: Duration) {
        *self.shared.latency.lock() = latency;
    }

    /// Every model request received so far, embeddings requests included.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().clone()
    }

    /// Forgets the requests received so far (a long run keeps the record small); the queue,
    /// the default answer, the latency and the cache accounting stay.
    pub fn clear_requests(&self) {
        self.shared.requests.lock().clear();
    }

    /// The most model requests that were being answered at the same time (a request counts
    /// from its arrival until its answer starts).
    pub fn max_in_flight(&self) -> usize {
        self.shared.in_flight.lock().1
    }

    /// How many model requests were abandoned by their client (the connection closed) before
    /// their answer started: a hanging request whose caller gave up, for example.
    pub fn abandoned(&self) -> usize {
        self.shared.abandoned.load(Ordering::SeqCst)
    }

    /// How many behaviours are still queued.
    pub fn queued(&self) -> usize {
        self.shared.queue.lock().len()
    }

    /// Stops serving.
    pub fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn push_replies(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Vec<Behaviour>>(&body) {
        Ok(list) => {
            let n = list.len();
            shared.queue.lock().extend(list);
            Json(json!({"queued": n})).into_response()
        }
        Err(e) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": format!("not a list of behaviours: {e}")}})),
        )
            .into_response(),
    }
}

async fn list_requests(State(shared): State<Arc<Shared>>) -> Response {
    Json(json!(shared.requests.lock().clone())).into_response()
}

async fn set_latency(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let ms = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v["ms"].as_u64());
    match ms {
        Some(ms) => {
            *shared.latency.lock() = Duration::from_millis(ms);
            Json(json!({"latency_ms": ms})).into_response()
        }
        None => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": "expected {\"ms\": <integer>}"}})),
        )
            .into_response(),
    }
}

async fn set_embeddings(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match serde_json::from_slice::<EmbeddingsBehaviour>(&body) {
        Ok(behaviour) => {
            *shared.embeddings.lock() = behaviour;
            Json(json!({"embeddings": true})).into_response()
        }
        Err(e) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": format!("not an embeddings behaviour: {e}")}})),
        )
            .into_response(),
    }
}

async fn reset(State(shared): State<Arc<Shared>>) -> Response {
    shared.queue.lock().clear();
    shared.requests.lock().clear();
    shared.prompts.lock().clear();
    *shared.default.lock() = Behaviour::text(DEFAULT_TEXT);
    *shared.latency.lock() = Duration::ZERO;
    *shared.embeddings.lock() = EmbeddingsBehaviour::default();
    shared.embedded_inputs.store(0, Ordering::SeqCst);
    Json(json!({"reset": true})).into_response()
}

/// `axum::Json` without its extractor half (only used to answer).
struct Json(Value);

impl IntoResponse for Json {
    fn into_response(self) -> Response {
        (
            [(header::CONTENT_TYPE, "application/json")],
            self.0.to_string(),
        )
            .into_response()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Route {
    OpenAi,
    Anthropic,
    Ollama,
}

impl Route {
    fn name(self) -> &'static str {
        match self {
            Route::OpenAi => "openai",
            Route::Anthropic => "anthropic",
            Route::Ollama => "ollama",
        }
    }
}

/// Records the request; its body as JSON (`null` when it is not).
fn record(shared: &Shared, path: &str, headers: &HeaderMap, body: &Bytes) -> Value {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    shared.requests.lock().push(RecordedRequest {
        path: path.into(),
        headers: headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_ascii_lowercase(),
                    v.to_str().unwrap_or("").to_string(),
                )
            })
            .collect(),
        body: value.clone(),
        received_ms: shared.started.elapsed().as_millis() as u64,
    });
    value
}

/// Records the request, takes the next behaviour, waits the latency.
async fn receive(
    shared: &Shared,
    path: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> (Value, Behaviour, u64) {
    let value = record(shared, path, headers, body);
    let behaviour = shared
        .queue
        .lock()
        .pop_front()
        .unwrap_or_else(|| shared.default.lock().clone());
    let latency = *shared.latency.lock();
    {
        let mut in_flight = shared.in_flight.lock();
        in_flight.0 += 1;
        in_flight.1 = in_flight.1.max(in_flight.0);
    }
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    shared.in_flight.lock().0 -= 1;
    let n = {
        let mut counter = shared.counter.lock();
        *counter += 1;
        *counter
    };
    (value, behaviour, n)
}

fn tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Prompt tokens and cached prompt tokens of a request, by the documented rule.
fn prompt_usage(shared: &Shared, route: Route, body: &Value) -> (u64, u64) {
    let model = body["model"].as_str().unwrap_or("").to_string();
    let part = |key: &str| body.get(key).map(Value::to_string).unwrap_or_default();
    let prompt = format!("{}{}{}", part("tools"), part("system"), part("messages"));
    let cacheable = match route {
        Route::OpenAi | Route::Ollama => String::new(),
        Route::Anthropic => anthropic_cacheable(body),
    };
    let route_name = route.name();
    let mut prompts = shared.prompts.lock();
    let cached_chars = match route {
        // Ollama reuses a cached prefix too, but reports no cached tokens.
        Route::Ollama => 0,
        Route::OpenAi => prompts
            .iter()
            .filter(|(r, m, _, _)| r == route_name && *m == model)
            .map(|(_, _, p, _)| common_prefix(p, &prompt))
            .max()
            .unwrap_or(0),
        Route::Anthropic => {
            let hit = !cacheable.is_empty()
                && prompts
                    .iter()
                    .any(|(r, m, _, c)| r == route_name && *m == model && *c == cacheable);
            if hit { cacheable.chars().count() } else { 0 }
        }
    };
    // A cache remembers recent prompts only (and a long benchmark stays linear).
    if prompts.len() >= PROMPT_MEMORY {
        prompts.remove(0);
    }
    prompts.push((route_name.into(), model, prompt.clone(), cacheable));
    let total = tokens(prompt.chars().count());
    (total, (cached_chars / 4) as u64)
}

/// Tools, then system blocks, up to and including the last one carrying `cache_control`.
fn anthropic_cacheable(body: &Value) -> String {
    let mut blocks: Vec<&Value> = Vec::new();
    if let Some(tools) = body["tools"].as_array() {
        blocks.extend(tools);
    }
    if let Some(system) = body["system"].as_array() {
        blocks.extend(system);
    }
    match blocks
        .iter()
        .rposition(|b| b.get("cache_control").is_some())
    {
        Some(last) => blocks[..=last]
            .iter()
            .map(|b| b.to_string())
            .collect::<String>(),
        None => String::new(),
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

async fn openai(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(
        &shared,
        Route::OpenAi,
        "/v1/chat/completions",
        &headers,
        &body,
    )
    .await
}

async fn anthropic(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(&shared, Route::Anthropic, "/v1/messages", &headers, &body).await
}

async fn ollama(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(&shared, Route::Ollama, "/api/chat", &headers, &body).await
}

async fn answer(
    shared: &Shared,
    route: Route,
    path: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response {
    // Dropped with the handler when the client closes the connection before the answer starts.
    struct Pending<'a>(&'a Shared, bool);
    impl Drop for Pending<'_> {
        fn drop(&mut self) {
            if !self.1 {
                self.0.abandoned.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let mut pending = Pending(shared, false);
    let response = answer_now(shared, route, path, headers, body).await;
    pending.1 = true;
    response
}

/// [`Behaviour::PickListed`]'s answer to `request`: a call of `tool` with the first listed
/// value, or `text`.
fn picked(request: &Value, tool: &str, text: String) -> Behaviour {
    let definitions = request["tools"].as_array().cloned().unwrap_or_default();
    let call = definitions.iter().find_map(|d| {
        let (name, schema) = match d.get("function") {
            Some(f) => (f["name"].as_str()?, &f["parameters"]),
            None => (d["name"].as_str()?, &d["input_schema"]),
        };
        if name != tool {
            return None;
        }
        let arg = schema["required"].get(0)?.as_str()?;
        let first = schema["properties"][arg]["enum"].get(0)?.clone();
        Some(FakeCall::new(tool, json!({ arg: first })))
    });
    match call {
        Some(call) => Behaviour::calls(vec![call]),
        None => Behaviour::text(&text),
    }
}

async fn answer_now(
    shared: &Shared,
    route: Route,
    path: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response {
    let (request, behaviour, n) = receive(shared, path, headers, body).await;
    // Ollama streams unless told not to; the others only when asked.
    let stream = request["stream"]
        .as_bool()
        .unwrap_or(route == Route::Ollama);
    let model = request["model"].as_str().unwrap_or("fake").to_string();
    if route == Route::Ollama
        && let Some(refusal) = ollama_refusal(&request)
    {
        return (StatusCode::BAD_REQUEST, Json(json!({ "error": refusal }))).into_response();
    }
    let behaviour = match behaviour {
        Behaviour::PickListed { tool, text } => picked(&request, &tool, text),
        other => other,
    };
    match behaviour {
        Behaviour::PickListed { .. } => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the fake could not resolve its pick_listed answer",
        )
            .into_response(),
        Behaviour::Status {
            status,
            body,
            retry_after,
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = (status, Json(body)).into_response();
            if let Some(after) = retry_after
                && let Ok(value) = after.parse()
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Behaviour::Hang => {
            std::future::pending::<()>().await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
        Behaviour::Garbage { body } => {
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        Behaviour::StreamError { message } => {
            let events = match route {
                Route::OpenAi => vec![
                    openai_chunk(
                        &model,
                        n,
                        json!({"role": "assistant", "content": "I"}),
                        Value::Null,
                    ),
                    format!(
                        "data: {}\n\n",
                        json!({"error": {"message": message, "type": "server_error"}})
                    ),
                ],
                Route::Anthropic => vec![
                    sse(
                        "message_start",
                        json!({"type": "message_start", "message": {
                        "id": format!("msg_fake_{n}"), "type": "message", "role": "assistant",
                        "content": [], "model": model, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
                    ),
                    sse(
                        "error",
                        json!({"type": "error",
                        "error": {"type": "overloaded_error", "message": message}}),
                    ),
                ],
                Route::Ollama => {
                    return ndjson_response(vec![
                        ollama_line(&model, json!({"role": "assistant", "content": "I"}), None),
                        format!("{}\n", json!({ "error": message })),
                    ]);
                }
            };
            sse_response(events)
        }
        Behaviour::Reply {
            text,
            tool_calls,
            chunk_chars,
        } => {
            let (input, cached) = prompt_usage(shared, route, &request);
            let output = tokens(
                text.chars().count()
                    + tool_calls
                        .iter()
                        .map(|c| c.arguments_text().chars().count())
                        .sum::<usize>(),
            );
            let usage = Usage {
                input,
                cached,
                output,
            };
            let chunk = chunk_chars.unwrap_or(7).max(1);
            match (route, stream) {
                (Route::OpenAi, false) => {
                    Json(openai_whole(&model, n, &text, &tool_calls, usage)).into_response()
                }
                (Route::OpenAi, true) => sse_response(openai_stream(
                    &model,
                    n,
                    &text,
                    &tool_calls,
                    usage,
                    chunk,
                    include_usage(&request),
                )),
                (Route::Anthropic, false) => {
                    Json(anthropic_whole(&model, n, &text, &tool_calls, usage)).into_response()
                }
                (Route::Anthropic, true) => sse_response(anthropic_stream(
                    &model,
                    n,
                    &text,
                    &tool_calls,
                    usage,
                    chunk,
                )),
                (Route::Ollama, false) => {
                    Json(ollama_whole(&model, &text, &tool_calls, usage)).into_response()
                }
                (Route::Ollama, true) => {
                    ndjson_response(ollama_stream(&model, &text, &tool_calls, usage, chunk))
                }
            }
        }
        Behaviour::Truncated { text } => {
            let usage = Usage {
                input: 1,
                cached: 0,
                output: tokens(text.chars().count()),
            };
            if stream {
                let mut events = match route {
                    Route::OpenAi => openai_stream(&model, n, &text, &[], usage, 7, false),
                    Route::Anthropic => anthropic_stream(&model, n, &text, &[], usage, 7),
                    Route::Ollama => {
                        // Without the last line, the one saying `done: true`.
                        let mut lines = ollama_stream(&model, &text, &[], usage, 7);
                        lines.pop();
                        return ndjson_response(lines);
                    }
                };
                // Without the last two: OpenAI's finishing chunk and `[DONE]`, Anthropic's
                // `message_delta` and `message_stop`.
                events.truncate(events.len() - 2);
                return sse_response(events);
            }
            let whole = match route {
                Route::OpenAi => openai_whole(&model, n, &text, &[], usage),
                Route::Anthropic => anthropic_whole(&model, n, &text, &[], usage),
                Route::Ollama => ollama_whole(&model, &text, &[], usage),
            }
            .to_string();
            let half: String = whole.chars().take(whole.chars().count() / 2).collect();
            ([(header::CONTENT_TYPE, "application/json")], half).into_response()
        }
        Behaviour::OllamaReply { text, tool_calls } => {
            let (input, cached) = prompt_usage(shared, route, &request);
            let usage = Usage {
                input,
                cached,
                output: tokens(text.chars().count()),
            };
            // Ollama's own API sends whole calls anyway: the quirks are those of its `/v1`.
            if route == Route::Ollama {
                return if stream {
                    ndjson_response(ollama_stream(&model, &text, &tool_calls, usage, 7))
                } else {
                    Json(ollama_whole(&model, &text, &tool_calls, usage)).into_response()
                };
            }
            if route == Route::Anthropic || !stream {
                return Json(openai_whole(&model, n, &text, &tool_calls, usage)).into_response();
            }
            let mut events = Vec::new();
            if !text.is_empty() {
                events.push(openai_chunk(
                    &model,
                    n,
                    json!({"role": "assistant", "content": text}),
                    Value::Null,
                ));
            }
            for (i, call) in tool_calls.iter().enumerate() {
                events.push(openai_chunk(
                    &model,
                    n,
                    json!({"role": "assistant", "content": "", "tool_calls": [{
                        "id": call.id.clone().unwrap_or_else(|| format!("call_{n}_{i}")),
                        "index": 0, "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_text()}}]}),
                    Value::Null,
                ));
            }
            events.push(openai_chunk(
                &model,
                n,
                json!({"role": "assistant", "content": ""}),
                json!("stop"),
            ));
            if include_usage(&request) {
                events.push(openai_usage_chunk(&model, n, usage));
            }
            events.push("data: [DONE]\n\n".into());
            sse_response(events)
        }
    }
}

/// `/v1/embeddings`: records the request, waits the latency, answers as the embeddings
/// behaviour says.
async fn embeddings(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = record(&shared, "/v1/embeddings", &headers, &body);
    let behaviour = shared.embeddings.lock().clone();
    let latency = *shared.latency.lock();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let (dimension, reversed, asked_counts) = match behaviour {
        EmbeddingsBehaviour::Status {
            status,
            body,
            retry_after,
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = (status, Json(body)).into_response();
            if let Some(after) = retry_after
                && let Ok(value) = after.parse()
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            return response;
        }
        EmbeddingsBehaviour::Hang => {
            std::future::pending::<()>().await;
            return StatusCode::GATEWAY_TIMEOUT.into_response();
        }
        EmbeddingsBehaviour::Garbage { body } => {
            return ([(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        EmbeddingsBehaviour::Vectors {
            dimension,
            reversed,
        } => (dimension, reversed, true),
        EmbeddingsBehaviour::WrongDimension { dimension } => (dimension, false, false),
    };
    let refuse = |message: String| {
        (
            StatusCode::BAD_REQUEST,
            Json(
                json!({"error": {"message": message, "type": "invalid_request_error",
                                  "param": null, "code": null}}),
            ),
        )
            .into_response()
    };
    let inputs: Vec<&str> = match &request["input"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) if !items.is_empty() => {
            match items.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                Some(texts) => texts,
                None => return refuse("'input' must be a string or an array of strings".into()),
            }
        }
        Value::Array(_) => return refuse("'input' is empty".into()),
        _ => return refuse("'input' must be a string or an array of strings".into()),
    };
    let dimension = match request.get("dimensions").filter(|d| !d.is_null()) {
        Some(asked) if asked_counts => match asked.as_u64() {
            Some(d) if (1..=MAX_FAKE_DIMENSION as u64).contains(&d) => d as usize,
            _ => {
                return refuse(format!(
                    "'dimensions' must be an integer between 1 and {MAX_FAKE_DIMENSION}"
                ));
            }
        },
        _ => dimension.min(MAX_FAKE_DIMENSION),
    };
    let model = request["model"].as_str().unwrap_or("fake-embedding");
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            json!({"object": "embedding", "index": index,
                   "embedding": fake_embedding(text, dimension)})
        })
        .collect();
    if reversed {
        data.reverse();
    }
    let prompt_tokens: u64 = inputs.iter().map(|t| tokens(t.chars().count())).sum();
    shared
        .embedded_inputs
        .fetch_add(inputs.len(), Ordering::SeqCst);
    Json(json!({"object": "list", "data": data, "model": model,
                "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}}))
    .into_response()
}

#[derive(Clone, Copy)]
struct Usage {
    input: u64,
    cached: u64,
    output: u64,
}

fn include_usage(request: &Value) -> bool {
    request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn sse(event: &str, data: Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn sse_response(events: Vec<String>) -> Response {
    let stream = futures_util::stream::iter(
        events
            .into_iter()
            .map(|e| Ok::<Bytes, Infallible>(Bytes::from(e))),
    );
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

fn openai_usage(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.input, "completion_tokens": usage.output,
           "total_tokens": usage.input + usage.output,
           "prompt_tokens_details": {"cached_tokens": usage.cached}})
}

fn call_id(call: &FakeCall, prefix: &str, i: usize) -> String {
    call.id
        .clone()
        .unwrap_or_else(|| format!("{prefix}_{}", i + 1))
}

fn openai_whole(model: &str, n: u64, text: &str, calls: &[FakeCall], usage: Usage) -> Value {
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { text.into() }});
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({"id": call_id(c, "call", i), "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments_text()}})
            })
            .collect();
    }
    json!({"id": format!("chatcmpl-fake-{n}"), "object": "chat.completion", "created": 0,
           "model": model,
           "choices": [{"index": 0, "message": message,
                        "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
           "usage": openai_usage(usage)})
}

fn openai_chunk(model: &str, n: u64, delta: Value, finish: Value) -> String {
    let chunk = json!({"id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk",
                       "created": 0, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

fn openai_usage_chunk(model: &str, n: u64, usage: Usage) -> String {
    let chunk = json!({"id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk",
                       "created": 0, "model": model, "choices": [], "usage": openai_usage(usage)});
    format!("data: {chunk}\n\n")
}

fn openai_stream(
    model: &str,
    n: u64,
    text: &str,
    calls: &[FakeCall],
    usage: Usage,
    chunk: usize,
    with_usage: bool,
) -> Vec<String> {
    let mut events = vec![openai_chunk(
        model,
        n,
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for piece in pieces(text, chunk) {
        events.push(openai_chunk(
            model,
            n,
            json!({"content": piece}),
            Value::Null,
        ));
    }
    for (i, call) in calls.iter().enumerate() {
        events.push(openai_chunk(
            model,
            n,
            json!({"tool_calls": [{"index": i, "id": call_id(call, "call", i), "type": "function",
                                   "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in pieces(&call.arguments_text(), chunk) {
            events.push(openai_chunk(
                model,
                n,
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    events.push(openai_chunk(model, n, json!({}), json!(finish)));
    if with_usage {
        events.push(openai_usage_chunk(model, n, usage));
    }
    events.push("data: [DONE]\n\n".into());
    events
}

fn anthropic_usage(usage: Usage) -> Value {
    json!({"input_tokens": usage.input - usage.cached, "cache_creation_input_tokens": 0,
           "cache_read_input_tokens": usage.cached, "output_tokens": usage.output})
}

fn anthropic_whole(model: &str, n: u64, text: &str, calls: &[FakeCall], usage: Usage) -> Value {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for (i, call) in calls.iter().enumerate() {
        let input: Value = serde_json::from_str(&call.arguments_text()).unwrap_or(json!({}));
        content.push(json!({"type": "tool_use", "id": call_id(call, "toolu", i),
                            "name": call.name, "input": input}));
    }
    json!({"id": format!("msg_fake_{n}"), "type": "message", "role": "assistant", "model": model,
           "content": content,
           "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
           "stop_sequence": null, "usage": anthropic_usage(usage)})
}

fn anthropic_stream(
    model: &str,
    n: u64,
    text: &str,
    calls: &[FakeCall],
    usage: Usage,
    chunk: usize,
) -> Vec<String> {
    let mut start_usage = anthropic_usage(usage);
    start_usage["output_tokens"] = 1.into();
    let mut events = vec![
        sse(
            "message_start",
            json!({"type": "message_start", "message": {"id": format!("msg_fake_{n}"),
                   "type": "message", "role": "assistant", "content": [], "model": model,
                   "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
        ),
        sse("ping", json!({"type": "ping"})),
    ];
    // One content block: its start, its pieces, its stop.
    let mut index = 0;
    let mut block =
        |events: &mut Vec<String>, start: Value, delta: &str, field: &str, body: &str| {
            events.push(sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            for piece in pieces(body, chunk) {
                events.push(sse(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": delta, field: piece}}),
                ));
            }
            events.push(sse(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        };
    if !text.is_empty() {
        block(
            &mut events,
            json!({"type": "text", "text": ""}),
            "text_delta",
            "text",
            text,
        );
    }
    for (i, call) in calls.iter().enumerate() {
        block(
            &mut events,
            json!({"type": "tool_use", "id": call_id(call, "toolu", i), "name": call.name,
                   "input": {}}),
            "input_json_delta",
            "partial_json",
            &call.arguments_text(),
        );
    }
    events.push(sse(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" },
                         "stop_sequence": null},
               "usage": {"output_tokens": usage.output}}),
    ));
    events.push(sse("message_stop", json!({"type": "message_stop"})));
    events
}

/// Why Ollama would refuse `request` (400): a tool call of its messages whose arguments are not
/// a JSON object.
fn ollama_refusal(request: &Value) -> Option<String> {
    let messages = request["messages"].as_array()?;
    messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .find(|call| !call["function"]["arguments"].is_object())
        .map(|_| {
            "json: cannot unmarshal into Go struct field ToolCallFunction.messages.tool_calls.\
             function.arguments of type api.ToolCallFunctionArguments (not an object)"
                .to_string()
        })
}

/// A call's arguments as Ollama sends them: an object (a string that is no JSON object as it
/// is, which Ollama never sends).
fn ollama_arguments(call: &FakeCall) -> Value {
    match &call.arguments {
        Value::Null => json!({}),
        Value::String(raw) => serde_json::from_str::<Value>(raw)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::String(raw.clone())),
        other => other.clone(),
    }
}

fn ollama_call(call: &FakeCall, index: usize) -> Value {
    let mut c = json!({"function": {"index": index, "name": call.name,
                                    "arguments": ollama_arguments(call)}});
    if let Some(id) = &call.id {
        c["id"] = id.as_str().into();
    }
    c
}

/// One line of an Ollama stream: a message, and the final fields when `last` has the usage.
fn ollama_line(model: &str, message: Value, last: Option<(Usage, &str)>) -> String {
    let mut line = json!({"model": model, "created_at": "2025-01-01T00:00:00Z",
                          "message": message, "done": last.is_some()});
    if let Some((usage, reason)) = last {
        for (k, v) in ollama_final(usage, reason) {
            line[k] = v;
        }
    }
    format!("{line}\n")
}

fn ollama_final(usage: Usage, reason: &str) -> [(&'static str, Value); 6] {
    [
        ("done_reason", reason.into()),
        ("total_duration", 1_000_000.into()),
        ("load_duration", 1_000.into()),
        ("prompt_eval_count", usage.input.into()),
        ("eval_count", usage.output.into()),
        ("eval_duration", 900_000.into()),
    ]
}

fn ollama_whole(model: &str, text: &str, calls: &[FakeCall], usage: Usage) -> Value {
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .iter()
            .enumerate()
            .map(|(i, c)| ollama_call(c, i))
            .collect();
    }
    let mut body = json!({"model": model, "created_at": "2025-01-01T00:00:00Z",
                          "message": message, "done": true});
    for (k, v) in ollama_final(usage, "stop") {
        body[k] = v;
    }
    body
}

fn ollama_stream(
    model: &str,
    text: &str,
    calls: &[FakeCall],
    usage: Usage,
    chunk: usize,
) -> Vec<String> {
    let mut lines: Vec<String> = pieces(text, chunk)
        .into_iter()
        .map(|piece| ollama_line(model, json!({"role": "assistant", "content": piece}), None))
        .collect();
    for (i, call) in calls.iter().enumerate() {
        lines.push(ollama_line(
            model,
            json!({"role": "assistant", "content": "", "tool_calls": [ollama_call(call, i)]}),
            None,
        ));
    }
    lines.push(ollama_line(
        model,
        json!({"role": "assistant", "content": ""}),
        Some((usage, "stop")),
    ));
    lines
}

fn ndjson_response(lines: Vec<String>) -> Response {
    let stream = futures_util::stream::iter(
        lines
            .into_iter()
            .map(|l| Ok::<Bytes, Infallible>(Bytes::from(l))),
    );
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// `GET /_fake/files/{name}`: a file of the served directory, whole.
async fn serve_file(
    State(shared): State<Arc<Shared>>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let plain = !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    let dir = shared.files.lock().clone();
    match dir.filter(|_| plain).map(|d| std::fs::read(d.join(&name))) {
        Some(Ok(bytes)) => bytes.into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn fake_embeddings_are_deterministic_unit_vectors() {
        let a = fake_embedding("The well is dry.", 768);
        assert_eq!(a.len(), 768);
        assert_eq!(a, fake_embedding("The well is dry.", 768));
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        // Case, punctuation and a plural's `s` do not matter.
        assert_eq!(
            fake_embedding("the WELLS, is dry", 64),
            fake_embedding("The well is dry!", 64)
        );
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("glass"), "glass");
        assert_eq!(stem("apples"), "apple");
        // A text without words still has a direction.
        for text in ["", "  ...  "] {
            let v = fake_embedding(text, 16);
            assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        }
        assert!(fake_embedding("anything", 0).is_empty());
        let one = fake_embedding("a b c d e", 1);
        assert!((one[0].abs() - 1.0).abs() < 1e-6);
        // Known values: the hash must not change between versions or platforms.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn shared_words_mean_closer_vectors() {
        let query = fake_embedding("Where is the blacksmith's forge?", 768);
        let close = fake_embedding("The blacksmith works at his forge all day.", 768);
        let far = fake_embedding("Mira bakes bread at dawn.", 768);
        assert!(cosine(&query, &close) > 0.3, "{}", cosine(&query, &close));
        assert!(cosine(&query, &far).abs() < 0.2, "{}", cosine(&query, &far));
        assert!(cosine(&query, &close) > cosine(&query, &far) + 0.2);
    }

    #[test]
    fn ollama_answers_in_its_own_shape_and_refuses_what_ollama_refuses() {
        let usage = Usage {
            input: 10,
            cached: 0,
            output: 3,
        };
        let calls = [
            FakeCall::new("move", json!({"x": 1})),
            FakeCall {
                id: Some("call_srv".into()),
                ..FakeCall::new("wait", json!("{\"seconds\": 2}"))
            },
            FakeCall::new("fly", json!("{broken")),
        ];
        let lines = ollama_stream("m", "Hello!", &calls, usage, 4);
        let values: Vec<Value> = lines
            .iter()
            .map(|l| {
                assert!(l.ends_with('\n') && !l[..l.len() - 1].contains('\n'), "{l}");
                serde_json::from_str(l).unwrap()
            })
            .collect();
        // Two pieces of text, a line per call, the last line done with the counts.
        assert_eq!(values.len(), 2 + 3 + 1);
        assert_eq!(values[0]["message"]["content"], "Hell");
        let call = |i: usize| &values[2 + i]["message"]["tool_calls"][0];
        assert_eq!(call(0)["function"]["arguments"], json!({"x": 1}));
        assert!(call(0).get("id").is_none(), "Ollama sends no ids");
        assert_eq!(call(1)["id"], "call_srv");
        assert_eq!(call(1)["function"]["arguments"], json!({"seconds": 2}));
        assert_eq!(call(2)["function"]["arguments"], "{broken");
        let last = values.last().unwrap();
        assert_eq!(last["done"], true);
        assert_eq!(
            (&last["prompt_eval_count"], &last["eval_count"]),
            (&json!(10), &json!(3))
        );
        assert!(values[..5].iter().all(|v| v["done"] == false));
        let whole = ollama_whole("m", "Hello!", &calls[..1], usage);
        assert_eq!(whole["message"]["content"], "Hello!");
        assert_eq!(whole["done_reason"], "stop");

        let asking = |arguments: Value| {
            ollama_refusal(&json!({"messages": [
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "",
                 "tool_calls": [{"function": {"name": "move", "arguments": arguments}}]}]}))
        };
        assert_eq!(asking(json!({"x": 1})), None);
        assert!(asking(json!("{\"x\": 1}")).is_some());
        assert_eq!(ollama_refusal(&json!({"messages": []})), None);
    }

    #[test]
    fn embeddings_behaviours_as_json() {
        let parsed: EmbeddingsBehaviour = serde_json::from_str(r#"{"kind": "vectors"}"#).unwrap();
        assert_eq!(parsed, EmbeddingsBehaviour::default());
        let parsed: EmbeddingsBehaviour =
            serde_json::from_str(r#"{"kind": "wrong_dimension", "dimension": 3}"#).unwrap();
        assert_eq!(parsed, EmbeddingsBehaviour::WrongDimension { dimension: 3 });
        let hang = serde_json::to_value(EmbeddingsBehaviour::Hang).unwrap();
        assert_eq!(hang, json!({"kind": "hang"}));
    }
}
