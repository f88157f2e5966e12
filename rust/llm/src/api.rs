//! What makes an HTTP API a model API: [`Api`], one per wire format.
//!
//! The [`crate::client::Client`] does what every model call over HTTP does — the request, the
//! timeout, the capped reads, the Server-Sent Events, the errors by status — and asks an
//! endpoint's [`Api`] only what differs between providers: where a call goes, how its body is
//! written, which headers carry the key, how an answer (whole or streamed) is read. Each
//! provider module has one ([`crate::openai::API`], [`crate::anthropic::API`]); a new wire
//! format is a new module with one more, and nothing here changes.

use std::fmt;

use serde_json::Value;

use crate::client::Secret;
use crate::sse::SseEvent;
use crate::{ModelReply, ModelRequest, StreamEvent, WireError};

/// One provider's wire format.
pub trait Api: Send + Sync + fmt::Debug {
    /// Its name as a brain object's `provider` says it (`openai`).
    fn name(&self) -> &'static str;
    /// The base URL a call goes to when none is given.
    fn default_base_url(&self) -> &'static str;
    /// The environment variable its key is read from when none is named.
    fn default_key_env(&self) -> &'static str;
    /// The path after the base URL of a model call (`/chat/completions`).
    fn path(&self) -> &'static str;
    /// The path after the base URL of its embeddings API; `None`: it has none.
    fn embeddings_path(&self) -> Option<&'static str> {
        None
    }
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

/// Assembles one streamed answer, event by event.
pub trait StreamDecoder: Send {
    /// Takes one event; returns what it adds for a watching game (text, a call starting).
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, WireError>;
    /// Whether the stream said it is over. A stream that ends before that was cut off: its
    /// answer is not complete.
    fn is_complete(&self) -> bool;
    /// What an incomplete stream lacked, for its error (`no message_stop event`).
    fn missing_terminator(&self) -> &'static str;
    /// The whole answer.
    fn finish(self: Box<Self>) -> Result<ModelReply, WireError>;
}
