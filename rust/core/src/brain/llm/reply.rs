//! What the model answered, as the tool-call contract.
//!
//! Native tool calls become the contract's `tool_calls` (their arguments parsed; arguments that
//! are not JSON stay as the raw text, which the runtime's check refuses as `invalid_json` and
//! sends back to the model). A model that answers without native calls but with the contract as
//! a JSON object in its text (`{"assistant_text": …, "tool_calls": [{"id", "tool", "args"}]}`,
//! possibly in a ```json fence) is read as that object: a missing or `null` field is empty, a
//! call without an `id` gets `call_<n>` (its place, from 1). Anything else is plain text: a line
//! to say.
//!
//! The contract is [bounded](BrainReply::bounded) before it goes to the runtime: the text a
//! model answers is cut to the `speak` limit (1,000 characters, the last one `…`) — the line
//! spoken, stored in the conversation memory and sent in later prompts — and the calls' ids,
//! names and reasons to theirs.

use serde_json::Value;

use agents_llm::ModelReply;

use crate::contract::{BrainReply, ToolCall};
use crate::limits;

/// The contract for a model's answer, bounded.
pub fn to_contract(reply: &ModelReply) -> BrainReply {
    if reply.tool_calls.is_empty()
        && let Some(contract) = contract_in_text(&reply.text)
    {
        return contract.bounded();
    }
    BrainReply {
        // Only what is kept is copied (an answer may be megabytes long).
        assistant_text: limits::cut_copy(reply.text.trim(), limits::MAX_ASSISTANT_TEXT_CHARS),
        dialog_type: String::new(),
        tool_calls: reply
            .tool_calls
            .iter()
            .map(|call| ToolCall::new(&call.id, &call.name, arguments(&call.arguments)))
            .collect(),
    }
    .bounded()
}

/// Parsed arguments: `{}` for none, the JSON value, or the raw text when it is not JSON.
fn arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// `text` without the code fence a model may wrap a JSON answer in (```` ```json … ``` ````),
/// trimmed; `text` trimmed when it has none.
pub(crate) fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim()
}

/// The contract object written as text, if the text is one (bare or in a code fence).
fn contract_in_text(text: &str) -> Option<BrainReply> {
    let body = unfenced(text);
    if !body.starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(body).ok()?;
    let object = value.as_object()?;
    if !(object.contains_key("tool_calls") || object.contains_key("assistant_text")) {
        return None;
    }
    let text_of = |key: &str| match object.get(key) {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => None,
    };
    let tool_calls = match object.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(n, item)| call_in_text(item, n))
            .collect::<Option<_>>()?,
        Some(_) => return None,
    };
    Some(BrainReply {
        assistant_text: text_of("assistant_text")?,
        dialog_type: text_of("dialog_type")?,
        tool_calls,
    })
}

/// One call of a contract written as text: `{"id"?, "tool", "args"?, "reason"?}`.
fn call_in_text(item: &Value, n: usize) -> Option<ToolCall> {
    let object = item.as_object()?;
    let id = match object.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        None | Some(Value::Null) | Some(Value::String(_)) => format!("call_{}", n + 1),
        Some(_) => return None,
    };
    let reason = match object.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(reason)) => Some(reason.clone()),
        Some(_) => return None,
    };
    Some(ToolCall {
        reason,
        ..ToolCall::new(
            id,
            object.get("tool")?.as_str()?,
            object.get("args").cloned().unwrap_or(Value::Null),
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use agents_llm::ModelToolCall;

    fn model(text: &str, calls: &[(&str, &str, &str)]) -> ModelReply {
        ModelReply {
            text: text.into(),
            tool_calls: calls
                .iter()
                .map(|(id, name, args)| ModelToolCall {
                    id: (*id).into(),
                    name: (*name).into(),
                    arguments: (*args).into(),
                })
                .collect(),
            ..ModelReply::default()
        }
    }

    #[test]
    fn native_calls_become_the_contract() {
        let reply = to_contract(&model(
            " On my way. ",
            &[
                ("call_1", "move", "{\"x\": 1, \"y\": 2}"),
                ("call_2", "wait", ""),
                ("call_3", "speak", "{\"content\": \"Hi"),
            ],
        ));
        assert_eq!(reply.assistant_text, "On my way.");
        assert_eq!(reply.tool_calls[0].args, json!({"x": 1, "y": 2}));
        assert_eq!(reply.tool_calls[1].args, json!({}));
        assert_eq!(
            reply.tool_calls[2].args,
            json!("{\"content\": \"Hi"),
            "broken JSON stays raw, for the check to refuse"
        );
        assert_eq!(reply.tool_calls[2].id, "call_3");
    }

    #[test]
    fn the_contract_written_as_text_is_read() {
        let text = "```json\n{\"assistant_text\": \"\", \"dialog_type\": \"reply\", \"tool_calls\": [{\"id\": \"c1\", \"tool\": \"move\", \"args\": {\"x\": 3, \"y\": 4}}]}\n```";
        let reply = to_contract(&model(text, &[]));
        assert_eq!(reply.dialog_type, "reply");
        assert_eq!(reply.tool_calls[0].tool, "move");
        // Plain text, or JSON that is not the contract, is a line to say.
        assert_eq!(
            to_contract(&model("Fresh bread!", &[])).assistant_text,
            "Fresh bread!"
        );
        let other = to_contract(&model("{\"weather\": \"rain\"}", &[]));
        assert_eq!(other.assistant_text, "{\"weather\": \"rain\"}");
        assert!(other.tool_calls.is_empty());
        // Calls without ids get their place; null fields are empty.
        let loose = to_contract(&model(
            "{\"assistant_text\": null, \"dialog_type\": null, \"tool_calls\": [\
             {\"tool\": \"wait\"}, {\"id\": \"w2\", \"tool\": \"move\", \"args\": {\"x\": 1}, \"reason\": \"r\"}]}",
            &[],
        ));
        assert_eq!(loose.assistant_text, "");
        let calls: Vec<_> = loose
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.tool.as_str(), c.reason.as_deref()))
            .collect();
        assert_eq!(calls, [("call_1", "wait", None), ("w2", "move", Some("r"))]);
        assert_eq!(loose.tool_calls[0].args, Value::Null);
        // A call without a tool is no contract: the text is a line.
        let broken = to_contract(&model("{\"tool_calls\": [{\"args\": {}}]}", &[]));
        assert!(broken.tool_calls.is_empty());
        assert!(broken.assistant_text.starts_with("{\"tool_calls\""));
    }

    #[test]
    fn what_a_model_answers_is_bounded() {
        // Megabytes of text without a speak call: the line is cut to the speak limit.
        let huge = "Blah ".repeat(1 << 20);
        let reply = to_contract(&model(&huge, &[]));
        assert_eq!(
            reply.assistant_text.chars().count(),
            limits::MAX_ASSISTANT_TEXT_CHARS
        );
        assert!(reply.assistant_text.ends_with(limits::CUT_MARK));
        assert!(huge.starts_with(reply.assistant_text.trim_end_matches(limits::CUT_MARK)));
        // The same inside a contract written as text; a huge native tool name is cut too.
        let written = serde_json::json!({"assistant_text": huge, "tool_calls": []}).to_string();
        assert_eq!(
            to_contract(&model(&written, &[]))
                .assistant_text
                .chars()
                .count(),
            limits::MAX_ASSISTANT_TEXT_CHARS
        );
        let name = "x".repeat(2 << 20);
        let reply = to_contract(&model("", &[("c1", &name, "{}")]));
        assert_eq!(
            reply.tool_calls[0].tool.chars().count(),
            limits::MAX_TOOL_NAME_CHARS
        );
    }
}
