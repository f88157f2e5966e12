//! One model call over HTTP: [`Client::complete`].
//!
//! The call is one attempt — retries are the caller's, guided by [`CallError::retryable`] and
//! [`backoff`] — bounded as a whole by the endpoint's timeout. Streamed answers are decoded as
//! they arrive and every [`StreamEvent`] is handed to the caller at once. Dropping the future
//! drops the connection: that is how an interrupted or terminated agent cancels its call.
//!
//! # What a server may send
//!
//! An answer is read with a cap, never allocated whole first: a body, or a whole event stream
//! (its framing included), longer than [`MAX_RESPONSE_BYTES`] fails the call with
//! `brain_invalid_response` as soon as the cap is passed (a `Content-Length` over it fails before
//! anything is read). An error status's body is read up to [`MAX_ERROR_BODY_BYTES`] only, to quote
//! it. A stream is cut into frames by the framing its API declares ([`Api::framing`]: Server-Sent
//! Events, newline-delimited JSON). A stream that ends without its terminator — OpenAI's
//! `data: [DONE]` (or at least a `finish_reason`), Anthropic's `message_stop`, Ollama's
//! `done: true` — is not a complete answer: the call fails as a lost connection does
//! (`brain_unreachable`, retryable). What the caller is handed while a
//! stream arrives is bounded too: at most [`MAX_STREAMED_TEXT_CHARS`] characters of
//! [`StreamEvent::TextDelta`] in all (the rest of the text is still in the reply), and at most
//! [`MAX_STREAMED_TOOL_CALLS`] [`StreamEvent::ToolCallStarted`], their ids and names cut to
//! [`MAX_STREAMED_NAME_CHARS`] characters.
//!
//! A call follows no redirect: a 3xx answer fails it with [`CallError::Redirect`] (code
//! `brain_bad_request`, not retryable), so a prompt and a key reach only the configured address.
//!
//! Keys are [`Secret`]s: their `Debug` and `Display` print `***`, and no error message ever
//! contains one (the errors quote the server's message and the URL, never a header).

use std::sync::{Arc, Once};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

use crate::api::Api;
use crate::framing::{Deframer, Framing};
use crate::ndjson::NdjsonDecoder;
pub use crate::secret::Secret;
use crate::sse::SseDecoder;
use crate::{ModelReply, ModelRequest, StreamEvent, WireError};

/// The most bytes read of one answer: a JSON body, or a whole event stream with its framing
/// (a token per event costs OpenAI's format some 200 bytes, so this leaves room for about
/// 80,000 streamed tokens). More fails the call.
pub const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// The most bytes of an error status's body that are read (to quote the server's message).
pub const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// The most characters of text handed to the caller as [`StreamEvent::TextDelta`]s during one
/// answer (the same as the `speak` limit of the agent runtime: a streamed preview is never
/// longer than the line an answer may say).
pub const MAX_STREAMED_TEXT_CHARS: usize = 1_000;

/// The most [`StreamEvent::ToolCallStarted`] handed to the caller during one answer.
pub const MAX_STREAMED_TOOL_CALLS: usize = 64;

/// The most characters of a call's id or tool name in a [`StreamEvent::ToolCallStarted`].
pub const MAX_STREAMED_NAME_CHARS: usize = 64;

/// Where and how to call.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The wire format it speaks ([`crate::openai::API`], [`crate::anthropic::API`],
    /// [`crate::ollama::API`], or one configured by a brain's options:
    /// [`crate::api::HttpProvider::configure`]).
    pub api: Arc<dyn Api>,
    /// The base URL (before the API's [`Api::path`]: `/chat/completions`, `/v1/messages`,
    /// `/api/chat`).
    pub base_url: String,
    /// The key, if the server needs one.
    pub api_key: Option<Secret>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The whole call's limit.
    pub timeout: Duration,
}

impl Endpoint {
    /// The URL requests go to.
    pub fn url(&self) -> String {
        format!("{}{}", self.base_url.trim_end_matches('/'), self.api.path())
    }
}

/// The code of a [`CallError`], as agents report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallErrorCode {
    /// `brain_unreachable`: no connection.
    Unreachable,
    /// `brain_timeout`: no whole answer in time.
    Timeout,
    /// `brain_rate_limited`: 429.
    RateLimited,
    /// `brain_server_error`: 5xx.
    ServerError,
    /// `brain_auth_failed`: 401 / 403.
    AuthFailed,
    /// `brain_model_not_found`: 404.
    ModelNotFound,
    /// `brain_bad_request`: another 4xx.
    BadRequest,
    /// `brain_provider_error`: an error reported inside an answer.
    ProviderError,
    /// `brain_invalid_response`: not the provider's format.
    InvalidResponse,
}

impl CallErrorCode {
    /// The snake_case code.
    pub fn as_str(self) -> &'static str {
        match self {
            CallErrorCode::Unreachable => "brain_unreachable",
            CallErrorCode::Timeout => "brain_timeout",
            CallErrorCode::RateLimited => "brain_rate_limited",
            CallErrorCode::ServerError => "brain_server_error",
            CallErrorCode::AuthFailed => "brain_auth_failed",
            CallErrorCode::ModelNotFound => "brain_model_not_found",
            CallErrorCode::BadRequest => "brain_bad_request",
            CallErrorCode::ProviderError => "brain_provider_error",
            CallErrorCode::InvalidResponse => "brain_invalid_response",
        }
    }
}

/// Why a call failed. Messages quote the URL and the server's words, never a key.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    /// No connection (refused, DNS, TLS).
    #[error("cannot reach {url}: {message}")]
    Unreachable {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
    /// The whole call took longer than the endpoint's timeout.
    #[error("no answer from {url} within {seconds} s")]
    Timeout {
        /// The URL.
        url: String,
        /// The limit.
        seconds: f64,
    },
    /// 429.
    #[error("rate limited (429){}: {message}", retry_after.map(|d| format!(", retry after {} s", d.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// 5xx.
    #[error("server error ({status}): {message}")]
    Server {
        /// The status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// 401 / 403.
    #[error("authentication failed ({status}): {message}")]
    Auth {
        /// The status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// 404.
    #[error("model not found (404): {message}")]
    ModelNotFound {
        /// The server's message.
        message: String,
    },
    /// A 3xx: the server sent the call elsewhere. Model calls follow no redirect, so a
    /// prompt and a key go only to the address that was configured (and that a policy
    /// checked). The target is for the operator's log, never for a client.
    #[error(
        "redirected ({status}){}: model calls follow no redirect; set the base URL to the \
         address that answers",
        location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default()
    )]
    Redirect {
        /// The status.
        status: u16,
        /// The `Location` it named, if any (cut to 200 characters).
        location: Option<String>,
    },
    /// Another 4xx.
    #[error("request refused ({status}): {message}")]
    BadRequest {
        /// The status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// An error reported inside an answer (a stream's error event).
    #[error("the provider reported an error: {0}")]
    Provider(String),
    /// An answer that is not the provider's format.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
}

impl CallError {
    /// The code.
    pub fn code(&self) -> CallErrorCode {
        match self {
            CallError::Unreachable { .. } => CallErrorCode::Unreachable,
            CallError::Timeout { .. } => CallErrorCode::Timeout,
            CallError::RateLimited { .. } => CallErrorCode::RateLimited,
            CallError::Server { .. } => CallErrorCode::ServerError,
            CallError::Auth { .. } => CallErrorCode::AuthFailed,
            CallError::ModelNotFound { .. } => CallErrorCode::ModelNotFound,
            CallError::Redirect { .. } | CallError::BadRequest { .. } => CallErrorCode::BadRequest,
            CallError::Provider(_) => CallErrorCode::ProviderError,
            CallError::InvalidResponse(_) => CallErrorCode::InvalidResponse,
        }
    }

    /// Whether trying again may help: 429, 5xx, no connection, a timeout, an error event in a
    /// stream (overloaded). Never 400 / 401 / 403 / 404 or a malformed answer.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            CallError::Unreachable { .. }
                | CallError::Timeout { .. }
                | CallError::RateLimited { .. }
                | CallError::Server { .. }
                | CallError::Provider(_)
        )
    }

    /// What may be told to someone who is not the operator (a client of the server, an
    /// agent's `agent_error`): the kind of failure and the HTTP status, never the URL, the
    /// connection's details or the provider's words (which the operator's log has).
    pub fn public_message(&self) -> String {
        match self {
            CallError::Unreachable { .. } => "the provider could not be reached".into(),
            CallError::Timeout { seconds, .. } => format!("no answer within {seconds} s"),
            CallError::RateLimited { .. } => "rate limited (429)".into(),
            CallError::Server { status, .. } => format!("server error ({status})"),
            CallError::Auth { status, .. } => format!("authentication failed ({status})"),
            CallError::ModelNotFound { .. } => "model not found (404)".into(),
            CallError::Redirect { status, .. } => {
                format!("the provider answered with a redirect ({status}), which is not followed")
            }
            CallError::BadRequest { status, .. } => format!("request refused ({status})"),
            CallError::Provider(_) => "the provider reported an error in its answer".into(),
            CallError::InvalidResponse(_) => "the answer was not in the provider's format".into(),
        }
    }

    /// The server's `Retry-After`, for a 429.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl From<WireError> for CallError {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Provider(message) => CallError::Provider(message),
            WireError::InvalidResponse(message) => CallError::InvalidResponse(message),
        }
    }
}

/// The wait before retry `attempt` (1 for the first retry): exponential from 500 ms, capped at
/// 30 s, with full jitter (`jitter` in `0.0..=1.0` scales it), and never shorter than the
/// server's `Retry-After`.
pub fn backoff(attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
    let base = Duration::from_millis(500)
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(Duration::from_secs(30));
    let jittered = base.mul_f64(jitter.clamp(0.0, 1.0));
    match retry_after {
        Some(after) => jittered.max(after),
        None => jittered,
    }
}

/// Reads `Retry-After`: seconds (`"2"`, `"1.5"`). An HTTP date is not parsed (no server here
/// sends one to a 429 of a model API); it counts as absent.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(3600.0)))
}

/// An HTTP client for model calls (cheap to clone; share one).
#[derive(Clone, Debug)]
pub struct Client {
    pub(crate) http: reqwest::Client,
}

static CRYPTO: Once = Once::new();

/// Installs the process's TLS provider (rustls with `ring`), once. Every `reqwest` client of the
/// process needs it — this crate's, and any other built in the same binary (reqwest's TLS
/// features are unified across a build) — so call it before building one elsewhere.
pub fn install_tls_provider() {
    CRYPTO.call_once(|| {
        // Fails only when another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Client {
    /// A client. Installs the TLS provider first ([`install_tls_provider`]).
    pub fn new() -> Result<Client, CallError> {
        install_tls_provider();
        let http = reqwest::Client::builder()
            .user_agent(concat!("godot-agents/", env!("CARGO_PKG_VERSION")))
            // A redirect would send the prompt (and with 307 / 308 the key's call again) to an
            // address nobody configured or checked: none is followed (`CallError::Redirect`).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| CallError::Unreachable {
                url: String::new(),
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(Client { http })
    }

    /// One model call. See the module docs.
    pub async fn complete(
        &self,
        endpoint: &Endpoint,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, CallError> {
        let url = endpoint.url();
        match tokio::time::timeout(
            endpoint.timeout,
            self.attempt(endpoint, &url, request, on_event),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(CallError::Timeout {
                url,
                seconds: endpoint.timeout.as_secs_f64(),
            }),
        }
    }

    async fn attempt(
        &self,
        endpoint: &Endpoint,
        url: &str,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, CallError> {
        let body = endpoint.api.request_body(request);
        let mut builder = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_string());
        for (name, value) in endpoint.api.headers(endpoint.api_key.as_ref()) {
            builder = builder.header(name, value);
        }
        for (name, value) in &endpoint.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let response = builder.send().await.map_err(|e| CallError::Unreachable {
            url: url.to_string(),
            message: without_url(&e),
        })?;
        if !response.status().is_success() {
            return Err(status_error(response).await);
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
        {
            return Err(too_large());
        }
        if !request.stream {
            let body = read_body(response, url, MAX_RESPONSE_BYTES).await?;
            let text = String::from_utf8_lossy(&body);
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                CallError::InvalidResponse(format!(
                    "the answer is not JSON ({e}): {}",
                    body_excerpt(&text)
                ))
            })?;
            return Ok(endpoint.api.parse_response(&value)?);
        }
        match endpoint.api.framing() {
            Framing::Sse => read_stream::<SseDecoder>(endpoint, url, response, on_event).await,
            Framing::Ndjson => {
                read_stream::<NdjsonDecoder>(endpoint, url, response, on_event).await
            }
        }
    }
}

/// Reads a streamed answer framed as `D` cuts it, handing each frame to the endpoint's
/// [`crate::api::StreamDecoder`] and what it adds to `on_event` (through an [`Announcer`]).
async fn read_stream<D: Deframer>(
    endpoint: &Endpoint,
    url: &str,
    response: reqwest::Response,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<ModelReply, CallError> {
    let mut deframer = D::default();
    let mut stream = endpoint.api.stream();
    let mut announcer = Announcer::default();
    let mut feed = |frame: &crate::framing::Frame| -> Result<(), CallError> {
        for e in stream.on_event(frame)? {
            if let Some(e) = announcer.pass(e) {
                on_event(e);
            }
        }
        Ok(())
    };
    let mut bytes = response.bytes_stream();
    let mut received = 0usize;
    let mut frames_seen = 0usize;
    while let Some(chunk) = bytes.next().await {
        let chunk = chunk.map_err(|e| CallError::Unreachable {
            url: url.to_string(),
            message: format!("the stream broke: {}", without_url(&e)),
        })?;
        received += chunk.len();
        if received > MAX_RESPONSE_BYTES {
            return Err(too_large());
        }
        for frame in deframer.feed(&chunk) {
            frames_seen += 1;
            feed(&frame)?;
        }
    }
    if let Some(frame) = deframer.finish() {
        frames_seen += 1;
        feed(&frame)?;
    }
    if frames_seen == 0 {
        // Not a stream cut short but no stream at all (an HTML error page, a JSON body):
        // asking again would get the same.
        return Err(CallError::InvalidResponse(format!(
            "the answer to a streamed request holds no event ({received} bytes, none of them \
             {})",
            endpoint.api.framing().frame_name()
        )));
    }
    if !stream.is_complete() {
        return Err(CallError::Unreachable {
            url: url.to_string(),
            message: format!(
                "the stream ended without its terminator ({}): the answer is incomplete",
                stream.missing_terminator()
            ),
        });
    }
    Ok(stream.finish()?)
}

/// The error for an answer over [`MAX_RESPONSE_BYTES`].
fn too_large() -> CallError {
    longer_than(MAX_RESPONSE_BYTES)
}

/// The error for an answer over `cap` bytes.
fn longer_than(cap: usize) -> CallError {
    CallError::InvalidResponse(format!(
        "the answer is longer than {cap} bytes (the limit of one answer)"
    ))
}

/// The error of a response whose status is not 2xx, as every call of this crate reports it:
/// a 3xx (a redirect, not followed), 429 (with its `Retry-After`), 401 / 403, 404, 5xx, any
/// other status; the message is the
/// provider's (see [`crate::error_message`]) or an excerpt of its body, which is read up to
/// [`MAX_ERROR_BODY_BYTES`] only.
pub(crate) async fn status_error(response: reqwest::Response) -> CallError {
    let status = response.status().as_u16();
    if (300..400).contains(&status) {
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(|l| l.chars().take(200).collect());
        return CallError::Redirect { status, location };
    }
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let body = read_capped(response, MAX_ERROR_BODY_BYTES)
        .await
        .map(|(body, _)| body)
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body);
    let message = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| crate::error_message(&v))
        .unwrap_or_else(|| body_excerpt(&text));
    match status {
        429 => CallError::RateLimited {
            retry_after,
            message,
        },
        401 | 403 => CallError::Auth { status, message },
        404 => CallError::ModelNotFound { message },
        500..=599 => CallError::Server { status, message },
        _ => CallError::BadRequest { status, message },
    }
}

/// The whole body of a successful response from `url`, at most `cap` bytes: longer (by its
/// `Content-Length`, or as it arrives) is `brain_invalid_response`, a body that breaks off is
/// `brain_unreachable`.
pub(crate) async fn read_body(
    response: reqwest::Response,
    url: &str,
    cap: usize,
) -> Result<Vec<u8>, CallError> {
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Err(longer_than(cap));
    }
    let (body, over) = read_capped(response, cap)
        .await
        .map_err(|e| CallError::Unreachable {
            url: url.to_string(),
            message: format!("the answer broke off: {}", without_url(&e)),
        })?;
    if over {
        return Err(longer_than(cap));
    }
    Ok(body)
}

/// Reads a response's body, at most `cap` bytes of it; the flag says whether more came (the
/// rest is not read: the connection is dropped).
async fn read_capped(
    response: reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut kept = Vec::new();
    let mut bytes = response.bytes_stream();
    while let Some(chunk) = bytes.next().await {
        let chunk = chunk?;
        let room = cap - kept.len();
        if chunk.len() > room {
            kept.extend_from_slice(&chunk[..room]);
            return Ok((kept, true));
        }
        kept.extend_from_slice(&chunk);
    }
    Ok((kept, false))
}

/// What of a stream's events the caller is handed: text up to [`MAX_STREAMED_TEXT_CHARS`]
/// characters in all (the delta that reaches it is cut on a character boundary), calls up to
/// [`MAX_STREAMED_TOOL_CALLS`], ids and names cut to [`MAX_STREAMED_NAME_CHARS`].
#[derive(Debug, Default)]
struct Announcer {
    text_chars: usize,
    calls: usize,
}

impl Announcer {
    fn pass(&mut self, event: StreamEvent) -> Option<StreamEvent> {
        match event {
            StreamEvent::TextDelta(text) => {
                let room = MAX_STREAMED_TEXT_CHARS - self.text_chars;
                let cut: String = text.chars().take(room).collect();
                self.text_chars += cut.chars().count();
                (!cut.is_empty()).then_some(StreamEvent::TextDelta(cut))
            }
            StreamEvent::ToolCallStarted { index, id, name } => {
                if self.calls == MAX_STREAMED_TOOL_CALLS {
                    return None;
                }
                self.calls += 1;
                Some(StreamEvent::ToolCallStarted {
                    index,
                    id: crate::excerpt(&id, MAX_STREAMED_NAME_CHARS),
                    name: crate::excerpt(&name, MAX_STREAMED_NAME_CHARS),
                })
            }
        }
    }
}

/// A reqwest error's text without its URL (the caller names the URL once).
pub(crate) fn without_url(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut deepest = e.to_string();
    while let Some(s) = source {
        deepest = s.to_string();
        source = s.source();
    }
    deepest
}

/// A body quoted in an error: its start, or `(empty body)`.
pub(crate) fn body_excerpt(text: &str) -> String {
    if text.is_empty() {
        "(empty body)".into()
    } else {
        crate::excerpt(text, 200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_caps_and_honours_retry_after() {
        assert_eq!(backoff(1, None, 1.0), Duration::from_millis(500));
        assert_eq!(backoff(2, None, 1.0), Duration::from_secs(1));
        assert_eq!(backoff(4, None, 1.0), Duration::from_secs(4));
        assert_eq!(backoff(30, None, 1.0), Duration::from_secs(30));
        assert_eq!(backoff(3, None, 0.5), Duration::from_secs(1));
        assert_eq!(backoff(1, None, 0.0), Duration::ZERO);
        assert_eq!(
            backoff(1, Some(Duration::from_secs(2)), 1.0),
            Duration::from_secs(2)
        );
        assert_eq!(
            parse_retry_after(" 1.5 "),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-3"), None);
    }

    #[test]
    fn keys_never_print_and_urls_join_the_path() {
        let endpoint = Endpoint {
            api: Arc::new(crate::openai::API),
            base_url: "http://127.0.0.1:1/v1/".into(),
            api_key: Some(Secret::new("sk-very-secret")),
            headers: vec![],
            timeout: Duration::from_secs(1),
        };
        assert!(!format!("{endpoint:?}").contains("sk-very-secret"));
        assert_eq!(endpoint.url(), "http://127.0.0.1:1/v1/chat/completions");
    }
}
