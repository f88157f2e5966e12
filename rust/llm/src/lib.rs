//! The LLM providers' wire formats, and the provider-neutral shapes the agent runtime speaks.
//!
//! A brain builds one [`ModelRequest`] per model call — system blocks (stable first, so the
//! providers' prefix caches hit), the conversation as [`ModelMessage`]s, the tools the agent may
//! call as [`ToolSpec`]s — and gets back one [`ModelReply`]: text, tool calls (their arguments as
//! the raw text the model produced, which may not even be JSON), token usage. Each provider
//! module turns a request into that provider's exact JSON body and its answers (a JSON body, or
//! a stream framed as its API says: Server-Sent Events decoded by [`sse`], newline-delimited
//! JSON by [`ndjson`]) back into a reply, and declares the options a brain object gives it
//! ([`api`] says what a provider module holds):
//!
//! - [`openai`]: chat completions — OpenAI and every compatible server (Ollama's `/v1`,
//!   llama.cpp's `llama-server`, LM Studio, vLLM, OpenRouter), with their streaming quirks;
//! - [`anthropic`]: messages, with prompt-cache breakpoints and the named stream events;
//! - [`ollama`]: Ollama's own chat API, streamed as NDJSON, with its context size and how long
//!   it keeps a model loaded.
//!
//! [`embeddings`] turns texts into vectors with OpenAI's embeddings API (served by the same
//! compatible servers), for recalling memories by meaning.
//!
//! The wire formats are pure (bytes in, values out); [`client`] does the HTTP, and the brains
//! that use it live in the core crate. API keys are [`secret::Secret`]s. Nothing here panics on what a server sends: every
//! malformed answer is a [`WireError`].

pub mod anthropic;
pub mod api;
pub mod client;
pub mod embeddings;
pub mod framing;
pub mod ndjson;
pub mod ollama;
pub mod openai;
pub mod secret;
pub mod sse;

use serde::{Deserialize, Serialize};

/// One block of the system prompt.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    /// The text.
    pub text: String,
    /// True on the last block of a cacheable prefix (Anthropic puts a `cache_control`
    /// breakpoint there; OpenAI caches prefixes on its own and ignores it).
    pub cache: bool,
    /// True when the text is the same for every agent asked this kind of request (the rules,
    /// not who the agent is). A one-text prompt puts the shared blocks before the tools and the
    /// others after them, so the prompts of agents on one model begin alike for as long as
    /// possible and that prefix is read once (the `local` provider copies it between agents).
    #[serde(default)]
    pub shared: bool,
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its arguments object.
    pub parameters: serde_json::Value,
}

/// A tool call as the model made it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// The provider's call id (`call_abc…`, `toolu_…`); synthesized (`call_1`, …) when the
    /// server sent none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as the model produced them: usually a JSON object's text, but
    /// possibly broken JSON (the brain reports that back to the model as `invalid_json`).
    pub arguments: String,
}

/// One message of the conversation sent to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ModelMessage {
    /// What the model is told (the situation, the failure feedback of a repair).
    User {
        /// The text.
        text: String,
    },
    /// What the model answered earlier in this decision.
    Assistant {
        /// Its text.
        text: String,
        /// Its tool calls.
        tool_calls: Vec<ModelToolCall>,
    },
    /// The result of one of its tool calls. Consecutive results belong to the assistant
    /// message before them.
    ToolResult {
        /// The call's id.
        call_id: String,
        /// The result (JSON text), or why the call was refused.
        content: String,
        /// True when the call failed or was refused.
        is_error: bool,
    },
}

/// A provider-neutral request for one answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The model.
    pub model: String,
    /// The system prompt, stable blocks first.
    pub system: Vec<SystemBlock>,
    /// The conversation, oldest first.
    pub messages: Vec<ModelMessage>,
    /// The tools the model may call now.
    pub tools: Vec<ToolSpec>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Most tokens in the answer.
    pub max_tokens: Option<u32>,
    /// When set (and there are no tools), ask for a JSON object matching this schema (OpenAI
    /// `response_format: json_schema`, honoured by servers that support it).
    pub json_schema: Option<serde_json::Value>,
    /// Stream the answer (Server-Sent Events).
    pub stream: bool,
}

/// Tokens a call used, as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_input_tokens: u64,
}

/// The model's whole answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelReply {
    /// Its text (empty when it only called tools).
    pub text: String,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ModelToolCall>,
    /// Tokens used.
    pub usage: Usage,
    /// Why it stopped (`stop`, `tool_calls`, `length`, `end_turn`, `tool_use`, …), as sent.
    pub stop_reason: Option<String>,
}

/// Something arriving while an answer streams, for a game to show as it happens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// More text.
    TextDelta(String),
    /// A tool call starts (its arguments follow).
    ToolCallStarted {
        /// Its position in the answer (0, 1, …).
        index: usize,
        /// Its id.
        id: String,
        /// The tool.
        name: String,
    },
}

/// An answer that is not the provider's wire format, or a failure the provider reported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The provider reported an error (in a stream, or as the body of a successful status).
    #[error("the provider reported an error: {0}")]
    Provider(String),
    /// The answer is not what the provider's format says.
    #[error("invalid response: {0}")]
    InvalidResponse(String),
}

/// `message` as a [`WireError::InvalidResponse`].
pub(crate) fn invalid(message: impl Into<String>) -> WireError {
    WireError::InvalidResponse(message.into())
}

/// The first `max` characters of `text` (marked `…` when cut), for error messages that quote
/// what a server sent.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let mut s: String = text.chars().take(max).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

/// `call_1`, `call_2`, … for the `n`th call (from 0) of an answer whose server sent no id.
pub(crate) fn synthetic_id(n: usize) -> String {
    format!("call_{}", n + 1)
}

/// A call's arguments as text: a string as it is (broken JSON included); an object (Ollama
/// sends one, and some compatible servers do) as its JSON; nothing as nothing.
pub(crate) fn arguments_text(arguments: Option<&serde_json::Value>) -> String {
    match arguments {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The message of a provider's error body: `{"error": {"message": …}}` (OpenAI and most
/// compatible servers), `{"type": "error", "error": {"message": …}}` (Anthropic),
/// `{"error": "…"}` (Ollama and others), `{"message": …}`. `None` for anything else.
pub fn error_message(body: &serde_json::Value) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    match error {
        serde_json::Value::String(message) => Some(message.clone()),
        serde_json::Value::Object(fields) => fields
            .get("message")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn error_messages_of_every_shape() {
        let openai = json!({"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error"}});
        assert_eq!(
            error_message(&openai).as_deref(),
            Some("The model `gpt-9` does not exist")
        );
        let anthropic = json!({"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9"}});
        assert_eq!(
            error_message(&anthropic).as_deref(),
            Some("model: claude-9")
        );
        let ollama = json!({"error": "model \"llama9\" not found, try pulling it first"});
        assert!(
            error_message(&ollama)
                .unwrap()
                .starts_with("model \"llama9\"")
        );
        assert_eq!(
            error_message(&json!({"message": "busy"})).as_deref(),
            Some("busy")
        );
        assert_eq!(error_message(&json!([1, 2])), None);
        assert_eq!(error_message(&json!({"error": 3})), None);
    }
}
