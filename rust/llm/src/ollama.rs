//! Ollama's own chat API (`POST {base_url}/api/chat`; default base URL
//! `http://127.0.0.1:11434`, no key needed — a key, when there is one, goes in
//! `Authorization: Bearer`, as Ollama's cloud API wants it).
//!
//! # Request
//!
//! The body: `model`; `messages` — the system blocks joined into one `system` message first,
//! then `user`, `assistant` (its `tool_calls` as `{id, function: {name, arguments}}`, the
//! arguments as the JSON object the model wrote, `{}` when they are not one: Ollama refuses
//! arguments that are not an object) and one `tool` message per result (`tool_name`, the name
//! of the call it answers, and its `tool_call_id`; a failed call's content starts with
//! `ERROR: `, as the format has no error flag); `tools` as `{type: "function", function: {name,
//! description, parameters}}`; `format`, the JSON schema, when one is asked for and there are no
//! tools (Ollama's structured outputs); `options` with `temperature`, `num_predict` (the
//! request's most tokens) and `num_ctx` (the brain's context size) when they are set;
//! `keep_alive` when the brain sets it; `stream`, always (Ollama streams unless told not to).
//!
//! # Answers
//!
//! A JSON body ([`parse_response`]) or newline-delimited JSON ([`StreamAccumulator`]), each
//! line one object: `message.content` is a piece of text; `message.tool_calls` holds whole
//! calls, their `arguments` a JSON object (turned into its text here); the last line says
//! `done: true`, with `done_reason` and the token counts `prompt_eval_count` and `eval_count`.
//! `{"error": "…"}` is the server giving up (a body, or a line mid-stream). Ollama sends no call
//! ids (newer versions may): a call without one gets `call_<n>`. A stream that ends before a
//! line with `done: true` was cut off ([`StreamAccumulator::is_done`] is false): the client
//! treats it as a broken connection, not as an answer. `message.thinking` (a thinking model's
//! reasoning) is not part of the answer.
//!
//! # Options
//!
//! [`OllamaOptions`]: the fields every HTTP provider takes, plus `num_ctx` and `keep_alive`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use crate::api::{Api, HttpOptions, HttpProvider, StreamDecoder};
use crate::framing::{Frame, Framing};
use crate::secret::Secret;
use crate::{
    ModelMessage, ModelReply, ModelRequest, ModelToolCall, StreamEvent, Usage, WireError,
    arguments_text, excerpt, invalid, synthetic_id,
};

/// The default base URL (the part before `/api/chat`): a local Ollama.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434";

/// The environment variable a key is read from unless another is named (Ollama's cloud API
/// reads its key from the same variable).
pub const DEFAULT_KEY_ENV: &str = "OLLAMA_API_KEY";

/// The prefix of a failed tool result's content.
pub const ERROR_PREFIX: &str = "ERROR: ";

/// The smallest `num_ctx` a brain may ask for.
pub const MIN_NUM_CTX: u32 = 256;

/// The largest `num_ctx` a brain may ask for (2^20 tokens; the largest models' contexts).
pub const MAX_NUM_CTX: u32 = 1 << 20;

/// The most characters of a `keep_alive` duration.
pub const MAX_KEEP_ALIVE_CHARS: usize = 64;

/// How long Ollama keeps the model loaded after a call (`keep_alive`), as a brain object gives
/// it and Ollama reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum KeepAlive {
    /// A number of seconds (0: unload at once; negative: keep it loaded).
    Seconds(serde_json::Number),
    /// A duration: a sequence of numbers with units (`ns`, `us`, `ms`, `s`, `m`, `h`), with an
    /// optional sign — `"5m"`, `"1h30m"`, `"-1m"` (negative: keep it loaded) —, or `"0"`.
    Duration(String),
}

impl KeepAlive {
    /// As Ollama reads it: the number or the text.
    pub fn to_json(&self) -> Value {
        match self {
            KeepAlive::Seconds(n) => Value::Number(n.clone()),
            KeepAlive::Duration(text) => Value::String(text.clone()),
        }
    }

    /// Checks a duration's text as Ollama parses it (Go's `time.ParseDuration`), naming the
    /// field.
    pub fn check(&self) -> Result<(), String> {
        let KeepAlive::Duration(text) = self else {
            return Ok(());
        };
        let refuse = |why: &str| {
            Err(format!(
                "brain.keep_alive must be a duration such as \"5m\", \"1h30m\", \"0\" or \"-1m\" \
                 (units ns, us, ms, s, m, h), or a number of seconds; {why}, got \"{}\"",
                excerpt(text, MAX_KEEP_ALIVE_CHARS)
            ))
        };
        if text.chars().count() > MAX_KEEP_ALIVE_CHARS {
            return refuse(&format!("at most {MAX_KEEP_ALIVE_CHARS} characters"));
        }
        match duration_nanos(text) {
            Some(nanos) if nanos.abs() <= i64::MAX as f64 => Ok(()),
            Some(_) => refuse("it is too long"),
            None => refuse("it is not one"),
        }
    }
}

/// The nanoseconds of a Go duration's text (`[-+]?([0-9]*(\.[0-9]*)?unit)+`, or `0`); `None`
/// when it is not one.
fn duration_nanos(text: &str) -> Option<f64> {
    let (sign, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0.0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..number_len];
        if number.matches('.').count() > 1 || !number.bytes().any(|b| b.is_ascii_digit()) {
            return None;
        }
        let value: f64 = if number.starts_with('.') {
            format!("0{number}").parse().ok()?
        } else {
            number.trim_end_matches('.').parse().ok()?
        };
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    Some(sign * total)
}

impl<'de> Deserialize<'de> for KeepAlive {
    /// A number, or a text (checked by [`KeepAlive::check`]); anything else is an error
    /// saying what is accepted.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Number(n) => Ok(KeepAlive::Seconds(n)),
            Value::String(text) => Ok(KeepAlive::Duration(text)),
            other => Err(serde::de::Error::custom(format!(
                "expected a duration such as \"5m\" or a number of seconds, got {}",
                match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Array(_) => "an array",
                    _ => "an object",
                }
            ))),
        }
    }
}

impl schemars::JsonSchema for KeepAlive {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "KeepAlive".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["string", "number"],
            "maxLength": MAX_KEEP_ALIVE_CHARS,
        })
    }
}

/// The options of an `ollama` brain object (besides `provider`, `api_key`, `token_budget`,
/// `trace_prompts`): those every HTTP provider takes ([`HttpOptions`]), plus `num_ctx` and
/// `keep_alive`. Field names are exact; unknown fields are an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OllamaOptions {
    /// The model as Ollama names it (`llama3.2`, `qwen3:8b`); required.
    #[schemars(length(max = 256))]
    pub model: Option<String>,
    /// Ollama's address, the part before `/api/chat` (default `http://127.0.0.1:11434`).
    #[schemars(length(max = 2048))]
    pub base_url: Option<String>,
    /// The environment variable holding a key, sent as `Authorization: Bearer` when it is set
    /// (default `OLLAMA_API_KEY`). Ollama needs none, wherever it runs.
    #[schemars(length(max = 256))]
    pub api_key_env: Option<String>,
    /// Sampling temperature, 0 to 2 (sent as `options.temperature`).
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Most tokens per answer (sent as `options.num_predict`).
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
    /// Tokens of context the model is loaded with, prompt and answer (sent as
    /// `options.num_ctx`), 256 to 1,048,576. Default: Ollama's (4096 unless its server says
    /// otherwise).
    #[schemars(range(min = 256, max = 1_048_576))]
    pub num_ctx: Option<u32>,
    /// How long Ollama keeps the model loaded after a call: a duration (`"5m"`, `"1h30m"`;
    /// `"0"` unloads it at once, a negative one keeps it loaded) or a number of seconds.
    /// Default: Ollama's (5 minutes unless its server says otherwise).
    pub keep_alive: Option<KeepAlive>,
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

/// The ollama wire format, for an [`crate::client::Endpoint`]: [`API`] sends neither `num_ctx`
/// nor `keep_alive`; a brain's is configured by its options ([`HttpProvider::configure`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ollama {
    /// Sent as `options.num_ctx`.
    pub num_ctx: Option<u32>,
    /// Sent as `keep_alive`.
    pub keep_alive: Option<KeepAlive>,
}

/// The ollama wire format, with Ollama's own defaults.
pub static API: Ollama = Ollama {
    num_ctx: None,
    keep_alive: None,
};

impl Ollama {
    /// The JSON body of a chat request.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), request.model.as_str().into());
        body.insert("messages".into(), messages(request).into());
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
            body.insert("tools".into(), tools.into());
        } else if let Some(schema) = &request.json_schema {
            body.insert("format".into(), schema.clone());
        }
        let mut options = Map::new();
        if let Some(t) = request.temperature {
            options.insert("temperature".into(), t.into());
        }
        if let Some(n) = request.max_tokens {
            options.insert("num_predict".into(), n.into());
        }
        if let Some(n) = self.num_ctx {
            options.insert("num_ctx".into(), n.into());
        }
        if !options.is_empty() {
            body.insert("options".into(), options.into());
        }
        if let Some(keep_alive) = &self.keep_alive {
            body.insert("keep_alive".into(), keep_alive.to_json());
        }
        body.insert("stream".into(), request.stream.into());
        Value::Object(body)
    }
}

/// The conversation as Ollama's messages.
fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    let system: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).collect();
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    // A result names its tool: the name of the call it answers.
    let mut tools_of_calls: HashMap<&str, &str> = HashMap::new();
    for message in &request.messages {
        out.push(match message {
            ModelMessage::User { text } => json!({"role": "user", "content": text}),
            ModelMessage::Assistant { text, tool_calls } => {
                let mut m = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            tools_of_calls.insert(&c.id, &c.name);
                            let arguments = serde_json::from_str::<Value>(&c.arguments)
                                .ok()
                                .filter(Value::is_object)
                                .unwrap_or_else(|| json!({}));
                            json!({"id": c.id, "function": {"name": c.name, "arguments": arguments}})
                        })
                        .collect();
                    m["tool_calls"] = calls.into();
                }
                m
            }
            ModelMessage::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let content = if *is_error {
                    format!("{ERROR_PREFIX}{content}")
                } else {
                    content.clone()
                };
                let mut m = json!({"role": "tool", "content": content, "tool_call_id": call_id});
                if let Some(name) = tools_of_calls.get(call_id.as_str()) {
                    m["tool_name"] = (*name).into();
                }
                m
            }
        });
    }
    out
}

/// Fails with the provider's message when `value` is an error object.
fn provider_error(value: &Value) -> Result<(), WireError> {
    if value.get("error").is_some_and(|e| !e.is_null()) {
        let message = crate::error_message(value).unwrap_or_else(|| value["error"].to_string());
        return Err(WireError::Provider(message));
    }
    Ok(())
}

/// Reads the token counts of a final object (`prompt_eval_count`, `eval_count`; Ollama reports
/// no cached tokens).
fn usage(value: &Value) -> Usage {
    let n = |k: &str| value.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("prompt_eval_count"),
        output_tokens: n("eval_count"),
        cached_input_tokens: 0,
    }
}

/// `message.content` of an object, as text (none is empty).
fn content(message: &Value) -> Result<&str, WireError> {
    match message.get("content") {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(invalid(format!(
            "message.content is not text: {}",
            excerpt(&other.to_string(), 120)
        ))),
    }
}

/// The calls of `message.tool_calls` (whole calls), numbered from `first` for the ids of calls
/// that came without one.
fn tool_calls(message: &Value, first: usize) -> Result<Vec<ModelToolCall>, WireError> {
    let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) else {
        return Ok(Vec::new());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| invalid("message.tool_calls is not an array"))?;
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let function = call.get("function").unwrap_or(&Value::Null);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| invalid(format!("tool_calls[{i}] has no function.name")))?;
            Ok(ModelToolCall {
                id: call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| synthetic_id(first + i), str::to_string),
                name: name.to_string(),
                arguments: arguments_text(function.get("arguments")),
            })
        })
        .collect()
}

/// Reads a whole (non-streamed) chat response.
pub fn parse_response(body: &Value) -> Result<ModelReply, WireError> {
    provider_error(body)?;
    let message = body
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| invalid("the chat response has no message"))?;
    Ok(ModelReply {
        text: content(message)?.to_string(),
        tool_calls: tool_calls(message, 0)?,
        usage: usage(body),
        stop_reason: body
            .get("done_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// Assembles a streamed chat response, line by line.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    reply: ModelReply,
    /// Whether any object arrived.
    started: bool,
    done: bool,
}

impl StreamAccumulator {
    /// An empty answer.
    pub fn new() -> Self {
        StreamAccumulator::default()
    }

    /// True once a line said `done: true`.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Takes one line; returns what it adds for a watching game (text, calls starting).
    pub fn on_event(&mut self, frame: &Frame) -> Result<Vec<StreamEvent>, WireError> {
        let data = frame.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            invalid(format!(
                "a stream line is not JSON ({e}): {}",
                excerpt(data, 120)
            ))
        })?;
        if !chunk.is_object() {
            return Err(invalid(format!(
                "a stream line is not a JSON object: {}",
                excerpt(data, 120)
            )));
        }
        provider_error(&chunk)?;
        self.started = true;
        let mut out = Vec::new();
        if let Some(message) = chunk.get("message").filter(|m| !m.is_null()) {
            let text = content(message)?;
            if !text.is_empty() {
                self.reply.text.push_str(text);
                out.push(StreamEvent::TextDelta(text.to_string()));
            }
            for call in tool_calls(message, self.reply.tool_calls.len())? {
                out.push(StreamEvent::ToolCallStarted {
                    index: self.reply.tool_calls.len(),
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                self.reply.tool_calls.push(call);
            }
        }
        if chunk.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            self.reply.usage = usage(&chunk);
            self.reply.stop_reason = chunk
                .get("done_reason")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        Ok(out)
    }

    /// The whole answer. Fails when nothing at all arrived.
    pub fn finish(self) -> Result<ModelReply, WireError> {
        if !self.started {
            return Err(invalid("the stream ended before any answer arrived"));
        }
        Ok(self.reply)
    }
}

impl Api for Ollama {
    fn name(&self) -> &'static str {
        "ollama"
    }

    fn default_base_url(&self) -> &'static str {
        DEFAULT_BASE_URL
    }

    fn default_key_env(&self) -> &'static str {
        DEFAULT_KEY_ENV
    }

    fn key_required(&self) -> bool {
        false
    }

    fn path(&self) -> &'static str {
        "/api/chat"
    }

    fn framing(&self) -> Framing {
        Framing::Ndjson
    }

    fn request_body(&self, request: &ModelRequest) -> Value {
        self.body(request)
    }

    fn headers(&self, key: Option<&Secret>) -> Vec<(&'static str, String)> {
        key.map(|key| ("authorization", format!("Bearer {}", key.expose())))
            .into_iter()
            .collect()
    }

    fn parse_response(&self, body: &Value) -> Result<ModelReply, WireError> {
        parse_response(body)
    }

    fn stream(&self) -> Box<dyn StreamDecoder> {
        Box::new(StreamAccumulator::new())
    }
}

impl HttpProvider for Ollama {
    type Options = OllamaOptions;

    fn http_options(&self, options: &OllamaOptions) -> HttpOptions {
        HttpOptions {
            model: options.model.clone(),
            base_url: options.base_url.clone(),
            api_key_env: options.api_key_env.clone(),
            temperature: options.temperature,
            max_tokens: options.max_tokens,
            timeout_seconds: options.timeout_seconds,
            max_retries: options.max_retries,
            headers: options.headers.clone(),
        }
    }

    fn validate(&self, options: &OllamaOptions) -> Result<(), String> {
        if let Some(n) = options.num_ctx
            && !(MIN_NUM_CTX..=MAX_NUM_CTX).contains(&n)
        {
            return Err(format!(
                "brain.num_ctx must be between {MIN_NUM_CTX} and {MAX_NUM_CTX}, got {n}"
            ));
        }
        options.keep_alive.as_ref().map_or(Ok(()), KeepAlive::check)
    }

    fn configure(&self, options: &OllamaOptions) -> Arc<dyn Api> {
        Arc::new(Ollama {
            num_ctx: options.num_ctx,
            keep_alive: options.keep_alive.clone(),
        })
    }
}

impl StreamDecoder for StreamAccumulator {
    fn on_event(&mut self, frame: &Frame) -> Result<Vec<StreamEvent>, WireError> {
        StreamAccumulator::on_event(self, frame)
    }

    fn is_complete(&self) -> bool {
        self.is_done()
    }

    fn missing_terminator(&self) -> &'static str {
        "no line with done: true"
    }

    fn finish(self: Box<Self>) -> Result<ModelReply, WireError> {
        StreamAccumulator::finish(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::Deframer;
    use crate::ndjson::NdjsonDecoder;
    use crate::{SystemBlock, ToolSpec};

    fn request() -> ModelRequest {
        ModelRequest {
            model: "llama3.2".into(),
            system: vec![
                SystemBlock {
                    text: "You are Mira.".into(),
                    cache: true,
                    shared: false,
                },
                SystemBlock {
                    text: "The world now.".into(),
                    cache: false,
                    shared: false,
                },
            ],
            messages: vec![
                ModelMessage::User {
                    text: "Hello".into(),
                },
                ModelMessage::Assistant {
                    text: "Let me see.".into(),
                    tool_calls: vec![
                        ModelToolCall {
                            id: "call_1".into(),
                            name: "move".into(),
                            arguments: "{\"x\": 1, \"y\": 2}".into(),
                        },
                        ModelToolCall {
                            id: "call_2".into(),
                            name: "fly".into(),
                            arguments: "{broken".into(),
                        },
                    ],
                },
                ModelMessage::ToolResult {
                    call_id: "call_1".into(),
                    content: "{\"status\":\"ok\"}".into(),
                    is_error: false,
                },
                ModelMessage::ToolResult {
                    call_id: "call_2".into(),
                    content: "{\"reason\":\"tool_not_allowed\"}".into(),
                    is_error: true,
                },
            ],
            tools: vec![ToolSpec {
                name: "move".into(),
                description: "Walk.".into(),
                parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
            }],
            temperature: Some(0.2),
            max_tokens: Some(300),
            json_schema: None,
            stream: true,
        }
    }

    #[test]
    fn the_request_body_is_the_chat_shape_with_options() {
        let api = Ollama {
            num_ctx: Some(8192),
            keep_alive: Some(KeepAlive::Duration("10m".into())),
        };
        assert_eq!(
            api.request_body(&request()),
            json!({
                "model": "llama3.2",
                "messages": [
                    {"role": "system", "content": "You are Mira.\n\nThe world now."},
                    {"role": "user", "content": "Hello"},
                    {"role": "assistant", "content": "Let me see.", "tool_calls": [
                        {"id": "call_1", "function": {"name": "move", "arguments": {"x": 1, "y": 2}}},
                        {"id": "call_2", "function": {"name": "fly", "arguments": {}}}
                    ]},
                    {"role": "tool", "content": "{\"status\":\"ok\"}", "tool_name": "move",
                     "tool_call_id": "call_1"},
                    {"role": "tool", "content": "ERROR: {\"reason\":\"tool_not_allowed\"}",
                     "tool_name": "fly", "tool_call_id": "call_2"}
                ],
                "tools": [{"type": "function", "function": {"name": "move", "description": "Walk.",
                    "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}}}],
                "options": {"temperature": 0.2, "num_predict": 300, "num_ctx": 8192},
                "keep_alive": "10m",
                "stream": true
            })
        );
        // The default API sends no options of its own; a schema becomes `format` when there
        // are no tools; `stream: false` is said.
        let mut plain = request();
        plain.tools.clear();
        plain.temperature = None;
        plain.max_tokens = None;
        plain.stream = false;
        plain.json_schema = Some(json!({"type": "object"}));
        let body = API.request_body(&plain);
        assert_eq!(body["format"], json!({"type": "object"}));
        assert_eq!(body["stream"], false);
        assert!(body.get("options").is_none() && body.get("keep_alive").is_none());
        let seconds = Ollama {
            keep_alive: Some(KeepAlive::Seconds(serde_json::Number::from(-1))),
            ..Ollama::default()
        };
        assert_eq!(seconds.request_body(&plain)["keep_alive"], -1);
    }

    #[test]
    fn a_whole_response_with_tool_calls_and_usage() {
        let body = json!({
            "model": "llama3.2", "created_at": "2025-07-07T20:32:53.844124Z",
            "message": {"role": "assistant", "content": "",
                "tool_calls": [
                    {"function": {"name": "move", "arguments": {"x": 12, "y": 14}}},
                    {"id": "call_srv", "function": {"index": 1, "name": "wait", "arguments": {}}}
                ]},
            "done_reason": "stop", "done": true, "total_duration": 3_244_883_583_u64,
            "prompt_eval_count": 169, "prompt_eval_duration": 141656333, "eval_count": 18
        });
        let reply = parse_response(&body).unwrap();
        assert_eq!(reply.text, "");
        assert_eq!(
            reply.tool_calls,
            [
                ModelToolCall {
                    id: "call_1".into(),
                    name: "move".into(),
                    arguments: "{\"x\":12,\"y\":14}".into()
                },
                ModelToolCall {
                    id: "call_srv".into(),
                    name: "wait".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 169,
                output_tokens: 18,
                cached_input_tokens: 0
            }
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
        assert_eq!(
            parse_response(&json!({"error": "model \"llama9\" not found, try pulling it first"})),
            Err(WireError::Provider(
                "model \"llama9\" not found, try pulling it first".into()
            ))
        );
        for broken in [
            json!({"done": true}),
            json!({"message": {"content": 3}}),
            json!({"message": {"tool_calls": [{"function": {"arguments": {}}}]}}),
            json!({"message": {"tool_calls": {"function": {}}}}),
        ] {
            assert!(
                matches!(parse_response(&broken), Err(WireError::InvalidResponse(_))),
                "{broken}"
            );
        }
    }

    /// Feeds raw NDJSON through the decoder and the accumulator.
    fn stream(text: &str) -> (Result<ModelReply, WireError>, Vec<StreamEvent>, bool) {
        let mut decoder = NdjsonDecoder::new();
        let mut acc = StreamAccumulator::new();
        let mut seen = Vec::new();
        let mut frames = decoder.feed(text.as_bytes());
        frames.extend(decoder.finish());
        for frame in frames {
            match acc.on_event(&frame) {
                Ok(events) => seen.extend(events),
                Err(e) => return (Err(e), seen, false),
            }
        }
        let done = acc.is_done();
        (acc.finish(), seen, done)
    }

    fn line(message: Value, done: bool) -> String {
        format!(
            "{}\n",
            json!({"model": "llama3.2", "created_at": "2025-07-07T20:22:19.184789Z",
                   "message": message, "done": done})
        )
    }

    #[test]
    fn a_streamed_answer_with_text_and_whole_calls() {
        let mut text = line(json!({"role": "assistant", "content": "On my"}), false);
        text += &line(json!({"role": "assistant", "content": " way"}), false);
        text += &line(
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": "move", "arguments": {"x": 12, "y": 14}}},
                {"function": {"name": "speak", "arguments": {"content": "Hi"}}}]}),
            false,
        );
        text += &line(
            json!({"role": "assistant", "content": "", "thinking": "hmm", "tool_calls": [
                {"function": {"name": "wait", "arguments": {}}}]}),
            false,
        );
        text += "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\
                 \"done_reason\":\"stop\",\"done\":true,\"prompt_eval_count\":900,\"eval_count\":31}";
        let (reply, events, done) = stream(&text);
        assert!(done);
        let reply = reply.unwrap();
        assert_eq!(reply.text, "On my way");
        let calls: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_1", "move", "{\"x\":12,\"y\":14}"),
                ("call_2", "speak", "{\"content\":\"Hi\"}"),
                ("call_3", "wait", "{}")
            ]
        );
        assert_eq!(
            (reply.usage.input_tokens, reply.usage.output_tokens),
            (900, 31)
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
        assert_eq!(
            events,
            [
                StreamEvent::TextDelta("On my".into()),
                StreamEvent::TextDelta(" way".into()),
                StreamEvent::ToolCallStarted {
                    index: 0,
                    id: "call_1".into(),
                    name: "move".into()
                },
                StreamEvent::ToolCallStarted {
                    index: 1,
                    id: "call_2".into(),
                    name: "speak".into()
                },
                StreamEvent::ToolCallStarted {
                    index: 2,
                    id: "call_3".into(),
                    name: "wait".into()
                },
            ]
        );
    }

    #[test]
    fn errors_in_the_stream_cut_off_streams_and_garbage_lines() {
        let mut text = line(json!({"role": "assistant", "content": "Hel"}), false);
        text += "{\"error\":\"an error was encountered while running the model\"}\n";
        let (reply, events, _) = stream(&text);
        assert_eq!(
            reply,
            Err(WireError::Provider(
                "an error was encountered while running the model".into()
            ))
        );
        assert_eq!(events, [StreamEvent::TextDelta("Hel".into())]);
        // Cut off before `done: true`: not done (the client refuses it as incomplete).
        let (reply, _, done) = stream(&line(json!({"content": "Half a li"}), false));
        assert!(!done);
        assert_eq!(reply.unwrap().text, "Half a li");
        for garbage in ["<html>502 Bad Gateway</html>\n", "[1, 2]\n"] {
            let (reply, _, _) = stream(garbage);
            assert!(
                matches!(reply, Err(WireError::InvalidResponse(ref m)) if m.contains("stream line")),
                "{reply:?}"
            );
        }
        let (reply, _, _) = stream("\n\n");
        assert!(
            matches!(reply, Err(WireError::InvalidResponse(ref m)) if m.contains("before any answer"))
        );
    }

    #[test]
    fn options_are_checked_naming_the_field() {
        let check = |options: Value| -> Result<OllamaOptions, String> {
            let options: OllamaOptions =
                serde_json::from_value(options).map_err(|e| e.to_string())?;
            API.validate(&options)?;
            Ok(options)
        };
        let ok = check(json!({"model": "m", "num_ctx": 8192, "keep_alive": "1h30m"})).unwrap();
        assert_eq!(API.http_options(&ok).model.as_deref(), Some("m"));
        for fine in [
            json!("5m"),
            json!("0"),
            json!("-1m"),
            json!("1.5h"),
            json!(".5s"),
            json!("300ms"),
            json!("2h45m10.5s"),
            json!("+1µs"),
            json!(300),
            json!(-1),
            json!(0.5),
        ] {
            check(json!({"keep_alive": fine})).unwrap_or_else(|e| panic!("{fine}: {e}"));
        }
        for (options, says) in [
            (
                json!({"num_ctx": 100}),
                "brain.num_ctx must be between 256 and 1048576, got 100",
            ),
            (json!({"num_ctx": 2_000_000}), "got 2000000"),
            (json!({"num_ctx": "big"}), "invalid type: string \"big\""),
            (json!({"num_ctx": -1}), "invalid value: integer `-1`"),
            (
                json!({"keep_alive": "5 minutes"}),
                "brain.keep_alive must be a duration",
            ),
            (
                json!({"keep_alive": "300"}),
                "brain.keep_alive must be a duration",
            ),
            (json!({"keep_alive": "5d"}), "it is not one, got \"5d\""),
            (json!({"keep_alive": ""}), "brain.keep_alive"),
            (json!({"keep_alive": "1..5s"}), "brain.keep_alive"),
            (json!({"keep_alive": "99999999h"}), "too long"),
            (
                json!({"keep_alive": true}),
                "expected a duration such as \"5m\"",
            ),
            (json!({"num_gpu": 1}), "unknown field `num_gpu`"),
        ] {
            let e = check(options.clone()).unwrap_err();
            assert!(e.contains(says), "{options}: {e}");
        }
    }

    #[test]
    fn a_key_goes_in_the_bearer_header_and_none_is_needed() {
        assert!(!API.key_required());
        assert!(API.headers(None).is_empty());
        assert_eq!(
            API.headers(Some(&Secret::new("k"))),
            [("authorization", "Bearer k".to_string())]
        );
        assert_eq!(API.framing(), Framing::Ndjson);
    }
}
