//! Anthropic messages (`POST {base_url}/v1/messages`, headers `x-api-key` and
//! `anthropic-version: 2023-06-01`).
//!
//! # Request
//!
//! [`request_body`]: `model`; `max_tokens` (required by the API: [`DEFAULT_MAX_TOKENS`] unless
//! given); `system` as text blocks, a block marked `cache` carrying `cache_control: {type:
//! "ephemeral"}`; `tools` as `{name, description, input_schema}`, the last one carrying a
//! `cache_control` breakpoint too (tool definitions are a stable prefix); `messages` alternating
//! `user` / `assistant` — consecutive messages of one role are merged into one message of
//! content blocks: an assistant's calls are `tool_use` blocks (`input` the parsed arguments, `{}`
//! when they do not parse), results are `tool_result` blocks (`is_error` on failures) —;
//! `temperature`; `stream`.
//!
//! # Answers
//!
//! A JSON body ([`parse_response`]: `content` blocks `text` and `tool_use`, `stop_reason`,
//! `usage`) or a stream of named events ([`StreamAccumulator`]): `message_start` (input usage),
//! `content_block_start` (a text block, or a `tool_use` block with its id and name),
//! `content_block_delta` (`text_delta`, or `input_json_delta` whose `partial_json` pieces join
//! into the call's arguments), `content_block_stop`, `message_delta` (`stop_reason`, output
//! usage), `message_stop`, `ping` (ignored), and `error` (the API giving up mid-stream). A
//! stream that ends before `message_stop` was cut off ([`StreamAccumulator::is_done`] is
//! false): the client treats it as a broken connection, not as an answer.
//!
//! Usage: `input_tokens` reported here counts the whole prompt — Anthropic's `input_tokens`
//! plus `cache_creation_input_tokens` plus `cache_read_input_tokens` —, and `cached` is
//! `cache_read_input_tokens`.

use serde_json::{Map, Value, json};

use crate::api::{HttpOptions, HttpProvider};
use crate::framing::{Frame, Framing};
use crate::{
    ModelMessage, ModelReply, ModelRequest, ModelToolCall, StreamEvent, Usage, WireError, excerpt,
    invalid,
};

/// The default base URL (the part before `/v1/messages`).
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version header's value.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when the request gives none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The JSON body of a messages request.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), request.model.as_str().into());
    body.insert(
        "max_tokens".into(),
        request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
    );
    if !request.system.is_empty() {
        let blocks: Vec<Value> = request
            .system
            .iter()
            .map(|b| {
                let mut block = json!({"type": "text", "text": b.text});
                if b.cache {
                    block["cache_control"] = ephemeral();
                }
                block
            })
            .collect();
        body.insert("system".into(), blocks.into());
    }
    if !request.tools.is_empty() {
        let last = request.tools.len() - 1;
        let tools: Vec<Value> = request
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut tool = json!({"name": t.name, "description": t.description,
                                      "input_schema": t.parameters});
                if i == last {
                    tool["cache_control"] = ephemeral();
                }
                tool
            })
            .collect();
        body.insert("tools".into(), tools.into());
    }
    body.insert("messages".into(), messages(&request.messages).into());
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), t.into());
    }
    body.insert("stream".into(), request.stream.into());
    Value::Object(body)
}

/// The conversation as alternating messages of content blocks.
fn messages(messages: &[ModelMessage]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            ModelMessage::User { text } => ("user", vec![json!({"type": "text", "text": text})]),
            ModelMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                                       "input": input}));
                }
                ("assistant", blocks)
            }
            ModelMessage::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    block["is_error"] = true.into();
                }
                ("user", vec![block])
            }
        };
        match out.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .filter(|(_, blocks)| !blocks.is_empty())
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect()
}

/// Adds what a `usage` object reports to `into` (fields it lacks leave the counts as they are).
fn read_usage(value: &Value, into: &mut Usage) {
    let n = |k: &str| value.get(k).and_then(Value::as_u64);
    let fresh = n("input_tokens");
    let created = n("cache_creation_input_tokens");
    let read = n("cache_read_input_tokens");
    if fresh.is_some() || created.is_some() || read.is_some() {
        into.input_tokens = fresh.unwrap_or(0) + created.unwrap_or(0) + read.unwrap_or(0);
        into.cached_input_tokens = read.unwrap_or(0);
    }
    if let Some(out) = n("output_tokens") {
        into.output_tokens = out;
    }
}

fn provider_error(value: &Value) -> Result<(), WireError> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        let message = crate::error_message(value).unwrap_or_else(|| value.to_string());
        return Err(WireError::Provider(message));
    }
    Ok(())
}

/// Reads a whole (non-streamed) message.
pub fn parse_response(body: &Value) -> Result<ModelReply, WireError> {
    provider_error(body)?;
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("the message has no content array"))?;
    let mut reply = ModelReply::default();
    for (n, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                reply
                    .text
                    .push_str(block.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            Some("tool_use") => {
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid(format!("content[{n}] (tool_use) has no name")))?;
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(
                        || format!("toolu_{}", reply.tool_calls.len() + 1),
                        str::to_string,
                    );
                reply.tool_calls.push(ModelToolCall {
                    id,
                    name: name.to_string(),
                    arguments: block.get("input").unwrap_or(&json!({})).to_string(),
                });
            }
            // Thinking and other blocks carry nothing the contract needs.
            _ => {}
        }
    }
    if let Some(usage) = body.get("usage") {
        read_usage(usage, &mut reply.usage);
    }
    reply.stop_reason = body
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(reply)
}

/// A content block being streamed.
#[derive(Debug)]
enum Block {
    Text,
    Tool {
        call: usize,
        /// `input` of `content_block_start`, used when no `input_json_delta` follows.
        start_input: String,
        /// Whether any `partial_json` arrived.
        streamed: bool,
    },
    Other,
}

/// Assembles a streamed message, event by event.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    reply: ModelReply,
    /// Blocks by the stream's `index`.
    blocks: Vec<(u64, Block)>,
    started: bool,
    stopped: bool,
}

impl StreamAccumulator {
    /// An empty message.
    pub fn new() -> Self {
        StreamAccumulator::default()
    }

    /// True once `message_stop` arrived.
    pub fn is_done(&self) -> bool {
        self.stopped
    }

    /// Takes one event; returns what it adds for a watching game.
    pub fn on_event(&mut self, event: &Frame) -> Result<Vec<StreamEvent>, WireError> {
        let data: Value = serde_json::from_str(event.data.trim()).map_err(|e| {
            invalid(format!(
                "a stream event is not JSON ({e}): {}",
                excerpt(&event.data, 120)
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                self.started = true;
                if let Some(usage) = data.pointer("/message/usage") {
                    read_usage(usage, &mut self.reply.usage);
                }
            }
            "content_block_start" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let started = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        self.push_text(text, &mut out);
                        Block::Text
                    }
                    Some("tool_use") => {
                        let name = block.get("name").and_then(Value::as_str).ok_or_else(|| {
                            invalid(format!("tool_use block {index} starts without a name"))
                        })?;
                        let call = self.reply.tool_calls.len();
                        let id = block
                            .get("id")
                            .and_then(Value::as_str)
                            .filter(|id| !id.is_empty())
                            .map_or_else(|| format!("toolu_{}", call + 1), str::to_string);
                        out.push(StreamEvent::ToolCallStarted {
                            index: call,
                            id: id.clone(),
                            name: name.to_string(),
                        });
                        self.reply.tool_calls.push(ModelToolCall {
                            id,
                            name: name.to_string(),
                            arguments: String::new(),
                        });
                        Block::Tool {
                            call,
                            start_input: block.get("input").unwrap_or(&json!({})).to_string(),
                            streamed: false,
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.push((index, started));
            }
            "content_block_delta" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        self.push_text(text, &mut out);
                    }
                    Some("input_json_delta") => {
                        let piece = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        let Some((_, Block::Tool { call, streamed, .. })) =
                            self.blocks.iter_mut().rev().find(|(i, _)| *i == index)
                        else {
                            return Err(invalid(format!(
                                "input_json_delta for block {index}, which is not a tool_use block"
                            )));
                        };
                        *streamed = true;
                        self.reply.tool_calls[*call].arguments.push_str(piece);
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some((
                    _,
                    Block::Tool {
                        call,
                        start_input,
                        streamed: false,
                    },
                )) = self.blocks.iter().rev().find(|(i, _)| *i == index)
                {
                    self.reply.tool_calls[*call].arguments = start_input.clone();
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.reply.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    read_usage(usage, &mut self.reply.usage);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => provider_error(&data)?,
            // `ping`, and event types added later.
            _ => {}
        }
        Ok(out)
    }

    fn push_text(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        if !text.is_empty() {
            self.reply.text.push_str(text);
            out.push(StreamEvent::TextDelta(text.to_string()));
        }
    }

    /// The whole message. Fails when the stream never started a message.
    pub fn finish(mut self) -> Result<ModelReply, WireError> {
        if !self.started {
            return Err(invalid("the stream ended before the message started"));
        }
        // A tool block cut off before its stop still has its start input.
        for (_, block) in &self.blocks {
            if let Block::Tool {
                call,
                start_input,
                streamed: false,
            } = block
                && self.reply.tool_calls[*call].arguments.is_empty()
            {
                self.reply.tool_calls[*call].arguments = start_input.clone();
            }
        }
        Ok(self.reply)
    }
}

/// The anthropic wire format, for an [`crate::client::Endpoint`].
pub static API: Anthropic = Anthropic;

/// See [`API`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Anthropic;

impl crate::api::Api for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn default_base_url(&self) -> &'static str {
        DEFAULT_BASE_URL
    }

    fn default_key_env(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn path(&self) -> &'static str {
        "/v1/messages"
    }

    fn framing(&self) -> Framing {
        Framing::Sse
    }

    fn request_body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn headers(&self, key: Option<&crate::secret::Secret>) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
        if let Some(key) = key {
            headers.push(("x-api-key", key.expose().to_string()));
        }
        headers
    }

    fn parse_response(&self, body: &Value) -> Result<ModelReply, WireError> {
        parse_response(body)
    }

    fn stream(&self) -> Box<dyn crate::api::StreamDecoder> {
        Box::new(StreamAccumulator::new())
    }
}

/// It takes the options every HTTP provider takes, and no other.
impl HttpProvider for Anthropic {
    type Options = HttpOptions;

    fn http_options(&self, options: &HttpOptions) -> HttpOptions {
        options.clone()
    }
}

impl crate::api::StreamDecoder for StreamAccumulator {
    fn on_event(&mut self, event: &Frame) -> Result<Vec<StreamEvent>, WireError> {
        StreamAccumulator::on_event(self, event)
    }

    fn is_complete(&self) -> bool {
        self.is_done()
    }

    fn missing_terminator(&self) -> &'static str {
        "no message_stop event"
    }

    fn finish(self: Box<Self>) -> Result<ModelReply, WireError> {
        StreamAccumulator::finish(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::Deframer;
    use crate::sse::SseDecoder;
    use crate::{SystemBlock, ToolSpec};

    fn request() -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: vec![
                SystemBlock {
                    text: "The contract.".into(),
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
                    text: "Let me look.".into(),
                    tool_calls: vec![
                        ModelToolCall {
                            id: "toolu_1".into(),
                            name: "legal_chess_moves".into(),
                            arguments: "{\"fen\": \"x\"}".into(),
                        },
                        ModelToolCall {
                            id: "toolu_2".into(),
                            name: "fly".into(),
                            arguments: "{broken".into(),
                        },
                    ],
                },
                ModelMessage::ToolResult {
                    call_id: "toolu_1".into(),
                    content: "{\"movesUci\": []}".into(),
                    is_error: false,
                },
                ModelMessage::ToolResult {
                    call_id: "toolu_2".into(),
                    content: "tool_not_allowed".into(),
                    is_error: true,
                },
                ModelMessage::User {
                    text: "Answer again.".into(),
                },
            ],
            tools: vec![
                ToolSpec {
                    name: "move".into(),
                    description: "Walk.".into(),
                    parameters: json!({"type": "object"}),
                },
                ToolSpec {
                    name: "wait".into(),
                    description: "Wait.".into(),
                    parameters: json!({"type": "object"}),
                },
            ],
            temperature: Some(0.5),
            max_tokens: None,
            json_schema: None,
            stream: true,
        }
    }

    #[test]
    fn the_request_body_is_the_messages_shape_with_cache_breakpoints() {
        assert_eq!(
            request_body(&request()),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "system": [
                    {"type": "text", "text": "The contract.", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "The world now."}
                ],
                "tools": [
                    {"name": "move", "description": "Walk.", "input_schema": {"type": "object"}},
                    {"name": "wait", "description": "Wait.", "input_schema": {"type": "object"},
                     "cache_control": {"type": "ephemeral"}}
                ],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_1", "name": "legal_chess_moves", "input": {"fen": "x"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "fly", "input": {}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"movesUci\": []}"},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "tool_not_allowed", "is_error": true},
                        {"type": "text", "text": "Answer again."}
                    ]}
                ],
                "temperature": 0.5,
                "stream": true
            })
        );
    }

    #[test]
    fn a_whole_message_with_tool_use_and_cache_usage() {
        let body = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Moving."},
                {"type": "tool_use", "id": "toolu_9", "name": "move", "input": {"x": 1, "y": 2}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 50, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 1200, "output_tokens": 30}
        });
        let reply = parse_response(&body).unwrap();
        assert_eq!(reply.text, "Moving.");
        assert_eq!(reply.tool_calls[0].id, "toolu_9");
        assert_eq!(
            serde_json::from_str::<Value>(&reply.tool_calls[0].arguments).unwrap(),
            json!({"x": 1, "y": 2})
        );
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 1250,
                output_tokens: 30,
                cached_input_tokens: 1200
            }
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_use"));
        let error = json!({"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9"}});
        assert_eq!(
            parse_response(&error),
            Err(WireError::Provider("model: claude-9".into()))
        );
        assert!(parse_response(&json!({"type": "message"})).is_err());
    }

    fn event(name: &str, data: Value) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    fn stream(text: &str) -> (Result<ModelReply, WireError>, Vec<StreamEvent>) {
        let mut decoder = SseDecoder::new();
        let mut acc = StreamAccumulator::new();
        let mut seen = Vec::new();
        for e in decoder.feed(text.as_bytes()) {
            match acc.on_event(&e) {
                Ok(events) => seen.extend(events),
                Err(err) => return (Err(err), seen),
            }
        }
        (acc.finish(), seen)
    }

    #[test]
    fn a_streamed_message_with_text_and_a_tool_call() {
        let mut text = event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                   "role": "assistant", "content": [], "model": "claude-sonnet-4-5",
                   "stop_reason": null, "usage": {"input_tokens": 40,
                   "cache_read_input_tokens": 1100, "output_tokens": 1}}}),
        );
        text += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        );
        text += &event("ping", json!({"type": "ping"}));
        for piece in ["On my", " way."] {
            text += &event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        text += &event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        );
        text += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block":
                   {"type": "tool_use", "id": "toolu_m", "name": "move", "input": {}}}),
        );
        for piece in ["", "{\"x\": 1", "2, \"y\"", ": 14}"] {
            text += &event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        text += &event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 1}),
        );
        // A call with no arguments at all: its start input stands.
        text += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block":
                   {"type": "tool_use", "id": "toolu_w", "name": "wait", "input": {}}}),
        );
        text += &event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 2}),
        );
        text += &event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                   "usage": {"output_tokens": 57}}),
        );
        text += &event("message_stop", json!({"type": "message_stop"}));
        let (reply, events) = stream(&text);
        let reply = reply.unwrap();
        assert_eq!(reply.text, "On my way.");
        let calls: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("toolu_m", "move", "{\"x\": 12, \"y\": 14}"),
                ("toolu_w", "wait", "{}")
            ]
        );
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 1140,
                output_tokens: 57,
                cached_input_tokens: 1100
            }
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            events,
            [
                StreamEvent::TextDelta("On my".into()),
                StreamEvent::TextDelta(" way.".into()),
                StreamEvent::ToolCallStarted {
                    index: 0,
                    id: "toolu_m".into(),
                    name: "move".into()
                },
                StreamEvent::ToolCallStarted {
                    index: 1,
                    id: "toolu_w".into(),
                    name: "wait".into()
                },
            ]
        );
    }

    #[test]
    fn an_error_event_and_broken_streams() {
        let mut text = event(
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        );
        text += &event(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
        assert_eq!(
            stream(&text).0,
            Err(WireError::Provider("Overloaded".into()))
        );
        assert!(matches!(
            stream("event: ping\ndata: {\n\n").0,
            Err(WireError::InvalidResponse(_))
        ));
        assert!(matches!(
            stream(&event("ping", json!({"type": "ping"}))).0,
            Err(WireError::InvalidResponse(ref m)) if m.contains("before the message started")
        ));
        let mut text = event(
            "message_start",
            json!({"type": "message_start", "message": {}}),
        );
        text += &event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 4,
                   "delta": {"type": "input_json_delta", "partial_json": "{"}}),
        );
        assert!(
            matches!(stream(&text).0, Err(WireError::InvalidResponse(ref m)) if m.contains("not a tool_use block"))
        );
    }
}
