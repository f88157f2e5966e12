//! OpenAI chat completions (`POST {base_url}/chat/completions`), as OpenAI and the compatible
//! servers speak it.
//!
//! # Request
//!
//! [`request_body`]: `model`; `messages` — the system blocks joined into one `system` message
//! first, then `user`, `assistant` (its `tool_calls` as `{id, type: "function", function: {name,
//! arguments}}`, `content` `null` when it said nothing) and one `tool` message per result
//! (`tool_call_id`; a failed call's content starts with `ERROR: `, as the format has no error
//! flag); `tools` as `{type: "function", function: {name, description, parameters}}` with
//! `tool_choice: "auto"`; `temperature`, `max_tokens`; `response_format: {type: "json_schema",
//! …}` when asked for and there are no tools; `stream` with `stream_options: {include_usage:
//! true}`.
//!
//! # Answers
//!
//! A JSON body ([`parse_response`]) or a stream of `data:` events ([`StreamAccumulator`]):
//! `choices[0].delta` carries `content` pieces and `tool_calls` pieces keyed by `index` — the
//! first piece of a call has its `id`, `type` and `function.name`, later ones only more
//! `function.arguments` text —; `finish_reason` comes last; with `include_usage` a final chunk
//! with empty `choices` carries `usage`; `data: [DONE]` ends the stream. An `{"error": …}` chunk
//! is the server giving up mid-stream. A stream that ends before `[DONE]` and before any
//! `finish_reason` was cut off ([`StreamAccumulator::is_complete`] is false): the client treats
//! it as a broken connection, not as an answer.
//!
//! Quirks handled, each tested below:
//! - arguments split over many chunks, joined per `index`;
//! - a usage chunk with `choices: []`;
//! - Ollama's `/v1`: a whole tool call in one chunk; parallel calls that all say `index: 0` (a
//!   piece with a new, different `id` starts a new call); `finish_reason: "stop"` although tool
//!   calls were sent (the calls count);
//! - a call without an `id` gets `call_<n>`.

use serde_json::{Map, Value, json};

use crate::api::{HttpOptions, HttpProvider};
use crate::framing::{Frame, Framing};
use crate::{
    ModelMessage, ModelReply, ModelRequest, ModelToolCall, StreamEvent, Usage, WireError,
    arguments_text, excerpt, invalid, synthetic_id,
};

/// The default base URL (the part before `/chat/completions`).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The prefix of a failed tool result's content.
pub const ERROR_PREFIX: &str = "ERROR: ";

/// The JSON body of a chat completions request.
pub fn request_body(request: &ModelRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let system: Vec<&str> = request.system.iter().map(|b| b.text.as_str()).collect();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    for message in &request.messages {
        messages.push(match message {
            ModelMessage::User { text } => json!({"role": "user", "content": text}),
            ModelMessage::Assistant { text, tool_calls } => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert(
                    "content".into(),
                    if text.is_empty() {
                        Value::Null
                    } else {
                        text.as_str().into()
                    },
                );
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    m.insert("tool_calls".into(), calls.into());
                }
                Value::Object(m)
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
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), request.model.as_str().into());
    body.insert("messages".into(), messages.into());
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
        body.insert("tool_choice".into(), "auto".into());
    } else if let Some(schema) = &request.json_schema {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema",
                   "json_schema": {"name": "reply", "schema": schema, "strict": false}}),
        );
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), t.into());
    }
    if let Some(n) = request.max_tokens {
        body.insert("max_tokens".into(), n.into());
    }
    body.insert("stream".into(), request.stream.into());
    if request.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// Reads `usage` (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`).
fn usage(value: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n(value.get("prompt_tokens")),
        output_tokens: n(value.get("completion_tokens")),
        cached_input_tokens: n(value.pointer("/prompt_tokens_details/cached_tokens")),
    }
}

/// Fails with the provider's message when `value` is an error object.
fn provider_error(value: &Value) -> Result<(), WireError> {
    if value.get("error").is_some_and(|e| !e.is_null()) {
        let message = crate::error_message(value).unwrap_or_else(|| value["error"].to_string());
        return Err(WireError::Provider(message));
    }
    Ok(())
}

/// Reads a whole (non-streamed) chat completion.
pub fn parse_response(body: &Value) -> Result<ModelReply, WireError> {
    provider_error(body)?;
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| invalid("no choices in the chat completion"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| invalid("choices[0] has no message"))?;
    let text = match message.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(invalid(format!("message.content is not text: {other}"))),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|c| !c.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| invalid("message.tool_calls is not an array"))?;
        for (n, call) in calls.iter().enumerate() {
            let function = call.get("function").unwrap_or(&Value::Null);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid(format!("tool_calls[{n}] has no function.name")))?;
            tool_calls.push(ModelToolCall {
                id: call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| synthetic_id(n), str::to_string),
                name: name.to_string(),
                arguments: arguments_text(function.get("arguments")),
            });
        }
    }
    Ok(ModelReply {
        text,
        tool_calls,
        usage: body.get("usage").map(usage).unwrap_or_default(),
        stop_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A tool call being assembled from stream pieces.
#[derive(Debug)]
struct PartialCall {
    /// The `index` the server gave it.
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Assembles a streamed chat completion, event by event.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    text: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    stop_reason: Option<String>,
    done: bool,
}

impl StreamAccumulator {
    /// An empty answer.
    pub fn new() -> Self {
        StreamAccumulator::default()
    }

    /// True once `data: [DONE]` arrived.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// True when the stream said it is over: `data: [DONE]`, or a `finish_reason` (some
    /// compatible servers close the stream after the finishing chunk without `[DONE]`). A stream
    /// that ends before either was cut off: its answer is not complete.
    pub fn is_complete(&self) -> bool {
        self.done || self.stop_reason.is_some()
    }

    /// Takes one event; returns what it adds for a watching game (text, a call starting).
    pub fn on_event(&mut self, event: &Frame) -> Result<Vec<StreamEvent>, WireError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            invalid(format!(
                "a stream chunk is not JSON ({e}): {}",
                excerpt(data, 120)
            ))
        })?;
        provider_error(&chunk)?;
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = usage(u);
        }
        let mut out = Vec::new();
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            // The usage chunk (`choices: []`), or a keep-alive.
            return Ok(out);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.stop_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(out);
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.text.push_str(text);
            out.push(StreamEvent::TextDelta(text.to_string()));
        }
        if let Some(pieces) = delta.get("tool_calls").and_then(Value::as_array) {
            for piece in pieces {
                self.on_call_piece(piece, &mut out)?;
            }
        }
        Ok(out)
    }

    fn on_call_piece(
        &mut self,
        piece: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), WireError> {
        let index = piece.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = piece
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let function = piece.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty());
        let arguments = arguments_text(function.get("arguments"));
        // The call this piece continues: the latest one with this index — unless the piece
        // brings a different id, or a name when that call has one already (Ollama numbers
        // parallel calls all 0; OpenAI sends the id and the name in a call's first piece only):
        // then it starts a new call.
        let current = self.calls.iter().rposition(|c| c.index == index);
        let continues = match (current, id) {
            (Some(at), Some(id)) => self.calls[at].id == id,
            (Some(at), None) => name.is_none() || self.calls[at].name.is_empty(),
            (None, _) => false,
        };
        if continues {
            let at = current.expect("a continued call exists");
            let call = &mut self.calls[at];
            if call.name.is_empty()
                && let Some(name) = name
            {
                call.name = name.to_string();
            }
            call.arguments.push_str(&arguments);
            return Ok(());
        }
        let name = name.ok_or_else(|| {
            invalid(format!(
                "a tool call (index {index}) starts without function.name"
            ))
        })?;
        let position = self.calls.len();
        let id = id.map_or_else(|| synthetic_id(position), str::to_string);
        out.push(StreamEvent::ToolCallStarted {
            index: position,
            id: id.clone(),
            name: name.to_string(),
        });
        self.calls.push(PartialCall {
            index,
            id,
            name: name.to_string(),
            arguments,
        });
        Ok(())
    }

    /// The whole answer. Fails when nothing at all arrived.
    pub fn finish(self) -> Result<ModelReply, WireError> {
        if self.text.is_empty() && self.calls.is_empty() && self.stop_reason.is_none() {
            return Err(invalid("the stream ended before any answer arrived"));
        }
        Ok(ModelReply {
            text: self.text,
            tool_calls: self
                .calls
                .into_iter()
                .map(|c| ModelToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            usage: self.usage,
            stop_reason: self.stop_reason,
        })
    }
}

/// The openai wire format, for an [`crate::client::Endpoint`].
pub static API: OpenAi = OpenAi;

/// See [`API`].
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAi;

impl crate::api::Api for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn default_base_url(&self) -> &'static str {
        DEFAULT_BASE_URL
    }

    fn default_key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn framing(&self) -> Framing {
        Framing::Sse
    }

    fn embeddings_path(&self) -> Option<&'static str> {
        Some("/embeddings")
    }

    fn request_body(&self, request: &ModelRequest) -> Value {
        request_body(request)
    }

    fn headers(&self, key: Option<&crate::secret::Secret>) -> Vec<(&'static str, String)> {
        key.map(|key| ("authorization", format!("Bearer {}", key.expose())))
            .into_iter()
            .collect()
    }

    fn parse_response(&self, body: &Value) -> Result<ModelReply, WireError> {
        parse_response(body)
    }

    fn stream(&self) -> Box<dyn crate::api::StreamDecoder> {
        Box::new(StreamAccumulator::new())
    }
}

/// It takes the options every HTTP provider takes, and no other.
impl HttpProvider for OpenAi {
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
        StreamAccumulator::is_complete(self)
    }

    fn missing_terminator(&self) -> &'static str {
        "no finish_reason and no data: [DONE]"
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
            model: "gpt-4o-mini".into(),
            system: vec![
                SystemBlock {
                    text: "You are Mira.".into(),
                    cache: false,
                    shared: false,
                },
                SystemBlock {
                    text: "Answer with tools.".into(),
                    cache: true,
                    shared: false,
                },
            ],
            messages: vec![
                ModelMessage::User {
                    text: "Hello".into(),
                },
                ModelMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![ModelToolCall {
                        id: "call_a".into(),
                        name: "fly".into(),
                        arguments: "{}".into(),
                    }],
                },
                ModelMessage::ToolResult {
                    call_id: "call_a".into(),
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
    fn the_request_body_is_the_chat_completions_shape() {
        let body = request_body(&request());
        assert_eq!(
            body,
            json!({
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": "You are Mira.\n\nAnswer with tools."},
                    {"role": "user", "content": "Hello"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_a", "type": "function",
                         "function": {"name": "fly", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "call_a",
                     "content": "ERROR: {\"reason\":\"tool_not_allowed\"}"}
                ],
                "tools": [{"type": "function", "function": {"name": "move", "description": "Walk.",
                    "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}}}],
                "tool_choice": "auto",
                "temperature": 0.2,
                "max_tokens": 300,
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
        // Without tools, a JSON schema becomes response_format; without stream, no options.
        let mut plain = request();
        plain.tools.clear();
        plain.stream = false;
        plain.json_schema = Some(json!({"type": "object"}));
        let body = request_body(&plain);
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(
            body["response_format"]["json_schema"]["schema"],
            json!({"type": "object"})
        );
        assert!(body.get("tools").is_none() && body.get("stream_options").is_none());
    }

    #[test]
    fn a_whole_response_with_tool_calls_and_usage() {
        let body = json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "move", "arguments": "{\"x\":1,\"y\":2}"}},
                    {"type": "function", "function": {"name": "wait", "arguments": {"seconds": 3}}}
                ]}}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240,
                      "prompt_tokens_details": {"cached_tokens": 1024}}
        });
        let reply = parse_response(&body).unwrap();
        assert_eq!(reply.text, "");
        assert_eq!(reply.tool_calls[0].arguments, "{\"x\":1,\"y\":2}");
        assert_eq!(reply.tool_calls[1].id, "call_2", "synthesized");
        assert_eq!(reply.tool_calls[1].arguments, "{\"seconds\":3}");
        assert_eq!(
            reply.usage,
            Usage {
                input_tokens: 1200,
                output_tokens: 40,
                cached_input_tokens: 1024
            }
        );
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            parse_response(&json!({"error": {"message": "Rate limit reached"}})),
            Err(WireError::Provider("Rate limit reached".into()))
        );
        assert!(matches!(
            parse_response(&json!({"choices": []})),
            Err(WireError::InvalidResponse(_))
        ));
    }

    /// Feeds raw SSE text through the decoder and the accumulator.
    fn stream(text: &str) -> (Result<ModelReply, WireError>, Vec<StreamEvent>) {
        let mut decoder = SseDecoder::new();
        let mut acc = StreamAccumulator::new();
        let mut seen = Vec::new();
        for event in decoder.feed(text.as_bytes()) {
            match acc.on_event(&event) {
                Ok(events) => seen.extend(events),
                Err(e) => return (Err(e), seen),
            }
        }
        assert!(acc.is_done() || !text.contains("[DONE]"));
        (acc.finish(), seen)
    }

    fn chunk(delta: Value, finish: Value) -> String {
        let c = json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    }

    #[test]
    fn openai_streams_text_then_arguments_split_over_many_chunks() {
        let mut text = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
        text += &chunk(json!({"content": "On my"}), Value::Null);
        text += &chunk(json!({"content": " way"}), Value::Null);
        text += &chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_m", "type": "function",
                   "function": {"name": "move", "arguments": ""}}]}),
            Value::Null,
        );
        for piece in ["{\"x\"", ": 12", ", \"y\": 1", "4}"] {
            text += &chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                Value::Null,
            );
        }
        text += &chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_s", "type": "function",
                   "function": {"name": "speak", "arguments": "{\"content\":"}}]}),
            Value::Null,
        );
        text += &chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"Hi\"}"}}]}),
            Value::Null,
        );
        text += &chunk(json!({}), json!("tool_calls"));
        text += "data: {\"id\":\"chatcmpl-9\",\"choices\":[],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":31,\"prompt_tokens_details\":{\"cached_tokens\":768}}}\n\n";
        text += "data: [DONE]\n\n";
        let (reply, events) = stream(&text);
        let reply = reply.unwrap();
        assert_eq!(reply.text, "On my way");
        assert_eq!(
            reply.tool_calls,
            [
                ModelToolCall {
                    id: "call_m".into(),
                    name: "move".into(),
                    arguments: "{\"x\": 12, \"y\": 14}".into()
                },
                ModelToolCall {
                    id: "call_s".into(),
                    name: "speak".into(),
                    arguments: "{\"content\":\"Hi\"}".into()
                },
            ]
        );
        assert_eq!(reply.usage.input_tokens, 900);
        assert_eq!(reply.usage.cached_input_tokens, 768);
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            events,
            [
                StreamEvent::TextDelta("On my".into()),
                StreamEvent::TextDelta(" way".into()),
                StreamEvent::ToolCallStarted {
                    index: 0,
                    id: "call_m".into(),
                    name: "move".into()
                },
                StreamEvent::ToolCallStarted {
                    index: 1,
                    id: "call_s".into(),
                    name: "speak".into()
                },
            ]
        );
    }

    #[test]
    fn ollama_sends_whole_calls_all_at_index_0_and_finishes_with_stop() {
        let mut text = chunk(
            json!({"role": "assistant", "content": "",
                   "tool_calls": [{"id": "call_x1", "index": 0, "type": "function",
                                   "function": {"name": "move", "arguments": "{\"x\":1,\"y\":2}"}}]}),
            Value::Null,
        );
        text += &chunk(
            json!({"role": "assistant", "content": "",
                   "tool_calls": [{"id": "call_x2", "index": 0, "type": "function",
                                   "function": {"name": "wait", "arguments": "{}"}}]}),
            Value::Null,
        );
        text += &chunk(json!({"role": "assistant", "content": ""}), json!("stop"));
        text += "data: [DONE]\n\n";
        let reply = stream(&text).0.unwrap();
        let names: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("call_x1", "move", "{\"x\":1,\"y\":2}"),
                ("call_x2", "wait", "{}")
            ]
        );
        assert_eq!(
            reply.stop_reason.as_deref(),
            Some("stop"),
            "the calls count all the same"
        );
    }

    #[test]
    fn errors_in_the_stream_and_broken_chunks() {
        let mut text = chunk(json!({"content": "Hel"}), Value::Null);
        text += "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\"}}\n\n";
        let (reply, events) = stream(&text);
        assert_eq!(
            reply,
            Err(WireError::Provider(
                "The server had an error while processing your request.".into()
            ))
        );
        assert_eq!(events, [StreamEvent::TextDelta("Hel".into())]);
        let (reply, _) = stream("data: {\"choices\": [{\"delta\": \n\n");
        assert!(
            matches!(reply, Err(WireError::InvalidResponse(ref m)) if m.contains("not JSON")),
            "{reply:?}"
        );
        let (reply, _) = stream("data: [DONE]\n\n");
        assert!(
            matches!(reply, Err(WireError::InvalidResponse(ref m)) if m.contains("before any answer"))
        );
        let (reply, _) = stream(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
            Value::Null,
        ));
        assert!(
            matches!(reply, Err(WireError::InvalidResponse(ref m)) if m.contains("without function.name"))
        );
    }

    #[test]
    fn a_stream_is_complete_at_done_or_a_finish_reason_only() {
        let feed = |text: &str| {
            let mut decoder = SseDecoder::new();
            let mut acc = StreamAccumulator::new();
            for event in decoder.feed(text.as_bytes()) {
                acc.on_event(&event).unwrap();
            }
            acc
        };
        let cut = chunk(json!({"content": "Half a li"}), Value::Null);
        assert!(!feed(&cut).is_complete(), "cut off mid-answer");
        let finished = cut.clone() + &chunk(json!({}), json!("stop"));
        assert!(
            feed(&finished).is_complete(),
            "a finish_reason without [DONE]"
        );
        assert!(!feed(&finished).is_done());
        assert!(feed(&(cut + "data: [DONE]\n\n")).is_complete());
    }

    #[test]
    fn calls_without_ids_get_synthetic_ones() {
        let mut text = chunk(
            json!({"tool_calls": [{"index": 0, "function": {"name": "wait", "arguments": "{}"}}]}),
            Value::Null,
        );
        text += &chunk(
            json!({"tool_calls": [{"index": 1, "function": {"name": "move", "arguments": "{}"}}]}),
            json!("tool_calls"),
        );
        // And a named piece at a used index without an id is a new call too.
        text += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"name": "speak", "arguments": "{}"}}]}),
            Value::Null,
        );
        let reply = stream(&text).0.unwrap();
        let calls: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_1", "wait", "{}"),
                ("call_2", "move", "{}"),
                ("call_3", "speak", "{}")
            ]
        );
    }
}
