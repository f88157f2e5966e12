//! What makes an HTTP API a model API: [`Api`], one per wire format, and [`HttpProvider`], the
//! same API with the options a brain object gives it.
//!
//! The [`crate::client::Client`] does what every model call over HTTP does — the request, the
//! timeout, the capped reads, the stream's framing, the errors by status — and asks an
//! endpoint's [`Api`] only what differs between providers: where a call goes, how its body is
//! written, which headers carry the key, how an answer (whole or streamed) is read, and how a
//! stream is framed ([`Framing`]: Server-Sent Events or newline-delimited JSON).
//!
//! # Adding a provider
//!
//! A provider is one module of this crate ([`crate::openai`], [`crate::anthropic`],
//! [`crate::ollama`]) holding:
//!
//! - its wire format: a type implementing [`Api`] (its name, default base URL and key
//!   variable, path, framing, request body, headers, whole answers) and a [`StreamDecoder`]
//!   for its streamed answers;
//! - its options: the type a brain object's fields are read as ([`HttpProvider::Options`],
//!   `#[serde(deny_unknown_fields)]`, so an unknown field is named) — [`HttpOptions`] when it
//!   takes only the fields every HTTP provider takes, else a struct of its own listing them
//!   and its own ones —, its checks of its own fields ([`HttpProvider::validate`], naming the
//!   field: `brain.num_ctx must be …`), and how they configure its wire format for one brain
//!   ([`HttpProvider::configure`]);
//! - a `pub static API` of its type, which the brain registry of the core crate registers in
//!   one line. Everything else — the client's schema of a brain object, the providers a client
//!   of the server may use, the names listed in errors — is read from that registry.
//!
//! The fake provider (`agents-fakellm`) then learns to speak the format, for its tests.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::framing::{Frame, Framing};
use crate::secret::Secret;
use crate::{ModelReply, ModelRequest, StreamEvent, WireError};

/// One provider's wire format.
pub trait Api: Send + Sync + fmt::Debug {
    /// Its name as a brain object's `provider` says it (`openai`).
    fn name(&self) -> &'static str;
    /// The base URL a call goes to when none is given.
    fn default_base_url(&self) -> &'static str;
    /// The environment variable its key is read from when none is named.
    fn default_key_env(&self) -> &'static str;
    /// Whether a call needs a key unless its base URL is on loopback (true); false: a key is
    /// sent when there is one, and a call without one is made all the same.
    fn key_required(&self) -> bool {
        true
    }
    /// The path after the base URL of a model call (`/chat/completions`).
    fn path(&self) -> &'static str;
    /// The path after the base URL of its embeddings API; `None`: it has none.
    fn embeddings_path(&self) -> Option<&'static str> {
        None
    }
    /// How its streamed answers are framed.
    fn framing(&self) -> Framing;
    /// The request's JSON body.
    fn request_body(&self, request: &ModelRequest) -> Value;
    /// The headers of every request: the one carrying the key (when there is a key), and any the
    /// API always wants.
    fn headers(&self, key: Option<&Secret>) -> Vec<(&'static str, String)>;
    /// Reads a whole (not streamed) answer.
    fn parse_response(&self, body: &Value) -> Result<ModelReply, WireError>;
    /// A decoder for one streamed answer.
    fn stream(&self) -> Box<dyn StreamDecoder>;
}

/// Assembles one streamed answer, frame by frame.
pub trait StreamDecoder: Send {
    /// Takes one frame (an SSE event, an NDJSON line); returns what it adds for a watching game
    /// (text, a call starting).
    fn on_event(&mut self, frame: &Frame) -> Result<Vec<StreamEvent>, WireError>;
    /// Whether the stream said it is over. A stream that ends before that was cut off: its
    /// answer is not complete.
    fn is_complete(&self) -> bool;
    /// What an incomplete stream lacked, for its error (`no message_stop event`).
    fn missing_terminator(&self) -> &'static str;
    /// The whole answer.
    fn finish(self: Box<Self>) -> Result<ModelReply, WireError>;
}

/// An [`Api`] with the options a brain object gives it: what the model brains of the core crate
/// need to make brains that call it. See [Adding a provider](self#adding-a-provider).
pub trait HttpProvider: Api + Clone + 'static {
    /// Its options: every field of a brain object but the ones every brain object has
    /// (`provider`, `api_key`, `token_budget`, `trace_prompts`). A struct with
    /// `#[serde(deny_unknown_fields)]`; its JSON Schema is part of the protocol's.
    type Options: DeserializeOwned + schemars::JsonSchema + Clone + Send + Sync + 'static;

    /// The fields every HTTP provider takes, as `options` set them: the model, the base URL,
    /// the key's variable, the sampling, the limits, the headers. The brains check them and
    /// call with them.
    fn http_options(&self, options: &Self::Options) -> HttpOptions;

    /// Checks the provider's own fields, naming the field (`brain.num_ctx must be …`), after
    /// the shared ones passed.
    fn validate(&self, options: &Self::Options) -> Result<(), String> {
        let _ = options;
        Ok(())
    }

    /// The wire format one brain calls with, configured by its options.
    fn configure(&self, options: &Self::Options) -> Arc<dyn Api> {
        let _ = options;
        Arc::new(self.clone())
    }
}

/// The options every HTTP provider takes (and all that a provider with no options of its own,
/// such as `openai`, takes). Field names are exact; unknown fields are an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpOptions {
    /// The model (`gpt-4o-mini`, `claude-sonnet-4-5`, `llama3.2`); required.
    #[schemars(length(max = 256))]
    pub model: Option<String>,
    /// The API's base URL: what comes before the provider's path (`/chat/completions` for
    /// openai, `/api/chat` for ollama, …). Default: the provider's own
    /// (`https://api.openai.com/v1` for openai, …).
    #[schemars(length(max = 2048))]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (default: the provider's, such as
    /// `OPENAI_API_KEY`). A loopback `base_url` may go without a key, and so may a provider
    /// that needs none (ollama). Never taken from a client of the server.
    #[schemars(length(max = 256))]
    pub api_key_env: Option<String>,
    /// Sampling temperature, 0 to 2.
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Most tokens per answer.
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
    /// Seconds one whole request may take (default 60).
    pub timeout_seconds: Option<f64>,
    /// Retries of a request that failed for a passing reason: 429, 5xx, a lost connection
    /// (default 3, at most 10).
    #[schemars(range(max = 10))]
    pub max_retries: Option<u32>,
    /// Extra HTTP headers sent with every request. Stored with the agent: put keys in
    /// `api_key_env`, never here.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}
