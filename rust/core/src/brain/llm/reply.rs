//! What the model answered, as the tool-call contract.
//!
//! Native tool calls become the contract's `tool_calls` (their arguments parsed; arguments that
//! are not JSON stay as the raw text, which the runtime's check refuses as `invalid_json` and
//! sends back to the model). A model that answers without native calls but with the contract as
//! a JSON object in its text (`{"assistant_text": …, "tool_calls": [{"id", "tool", "args"}]}`,
//! possibly in a ```json fence) is read as that object. Anything else is plain text: a line to
//! say.

use serde_json::Value;

use agents_llm::ModelReply;

use crate::contract::{BrainReply, ToolCall};

/// The contract for a model's answer.
pub fn to_contract(reply: &ModelReply) -> BrainReply {
    if reply.tool_calls.is_empty()
        && let Some(contract) = contract_in_text(&reply.text)
    {
        return contract;
    }
    BrainReply {
        assistant_text: reply.text.trim().to_string(),
        dialog_type: String::new(),
        tool_calls: reply
            .tool_calls
            .iter()
            .map(|call| ToolCall::new(&call.id, &call.name, arguments(&call.arguments)))
            .collect(),
    }
}

/// Parsed arguments: `{}` for none, the JSON value, or the raw text when it is not JSON.
fn arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// The contract object written as text, if the text is one (bare or in a code fence).
fn contract_in_text(text: &str) -> Option<BrainReply> {
    let trimmed = text.trim();
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    if !body.starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(body).ok()?;
    let object = value.as_object()?;
    if !(object.contains_key("tool_calls") || object.contains_key("assistant_text")) {
        return None;
    }
    serde_json::from_value(value).ok()
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
    }
}
