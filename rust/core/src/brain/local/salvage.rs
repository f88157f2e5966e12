//! An answer cut at `max_tokens`, made whole.
//!
//! A constrained answer is compact JSON in the contract's key order
//! (`{"assistant_text":…,"dialog_type":…,"tool_calls":[…]}`), and every prefix of it is a prefix
//! of a valid answer. When it stops at `max_tokens` the runtime would otherwise see broken JSON
//! (and a model brain takes broken JSON for plain text: the agent would say it). So the prefix is
//! closed where it stopped: a text cut mid-way is kept as far as it went, and of the calls only
//! the complete ones are kept (an incomplete one never runs). What is left is checked like any
//! answer.

use serde_json::{Map, Value};

/// The contract answer `text` began, closed: `None` when it is not one at all.
pub(super) fn close(text: &str) -> Option<String> {
    let mut answer = Map::new();
    let rest = text.strip_prefix("{\"assistant_text\":")?;
    let (assistant_text, rest) = match rest {
        "" => (String::new(), None),
        rest => string(rest)?,
    };
    answer.insert("assistant_text".into(), Value::String(assistant_text));
    answer.insert("dialog_type".into(), Value::String(String::new()));
    answer.insert("tool_calls".into(), Value::Array(Vec::new()));
    let dialog = rest.and_then(|r| r.strip_prefix(",\"dialog_type\":"));
    if let Some((dialog_type, rest)) = dialog.and_then(string) {
        answer.insert("dialog_type".into(), Value::String(dialog_type));
        let mut calls = Vec::new();
        let mut rest = rest.and_then(|r| r.strip_prefix(",\"tool_calls\":["));
        while let Some(r) = rest {
            let Some(end) = object_end(r) else { break };
            let Ok(call) = serde_json::from_str::<Value>(&r[..end]) else {
                break;
            };
            calls.push(call);
            rest = r[end..].strip_prefix(',');
        }
        answer.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(answer).to_string())
}

/// The JSON string at the start of `s`, decoded, and what follows it; a string cut before its
/// end is decoded as far as it went (an escape cut in two is dropped), with nothing after it.
fn string(s: &str) -> Option<(String, Option<&str>)> {
    let body = s.strip_prefix('"')?;
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => {
                let text = serde_json::from_str(&s[..i + 2]).ok()?;
                return Some((text, Some(&body[i + 1..])));
            }
            _ => {}
        }
    }
    // Cut inside: close it, dropping at most an escape's worth of characters at its end.
    let cut = body.len();
    (0..=6.min(cut))
        .filter_map(|drop| body.get(..cut - drop))
        .find_map(|prefix| serde_json::from_str::<String>(&format!("\"{prefix}\"")).ok())
        .map(|text| (text, None))
}

/// The length of the complete JSON object at the start of `s`; `None` when it is cut.
fn object_end(s: &str) -> Option<usize> {
    if !s.starts_with('{') {
        return None;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn closed(text: &str) -> Value {
        serde_json::from_str(&close(text).expect("a contract answer")).unwrap()
    }

    #[test]
    fn a_cut_answer_keeps_its_text_and_its_complete_calls() {
        let whole = r#"{"assistant_text":"Fresh \"bread\"!","dialog_type":"reply","tool_calls":[{"tool":"move","args":{"x":1,"y":2}},{"tool":"speak","args":{"content":"Hello, wor"#;
        assert_eq!(
            closed(whole),
            json!({"assistant_text": "Fresh \"bread\"!", "dialog_type": "reply",
                   "tool_calls": [{"tool": "move", "args": {"x": 1, "y": 2}}]})
        );
        // Every prefix closes into an answer whose calls are complete ones.
        for end in "{\"assistant_text\":".len()..whole.len() {
            let Some(prefix) = whole.get(..end) else {
                continue;
            };
            let answer = closed(prefix);
            let calls = answer["tool_calls"].as_array().unwrap();
            assert!(calls.len() <= 1, "{prefix}");
            for call in calls {
                assert_eq!(call["args"], json!({"x": 1, "y": 2}), "{prefix}");
            }
            let text = answer["assistant_text"].as_str().unwrap();
            assert!("Fresh \"bread\"!".starts_with(text), "{prefix}: {text}");
        }
    }

    #[test]
    fn a_text_cut_inside_an_escape_drops_the_escape() {
        let cut = r#"{"assistant_text":"Caf\u00"#;
        assert_eq!(closed(cut)["assistant_text"], "Caf");
        assert_eq!(closed(r#"{"assistant_text":"a\"#)["assistant_text"], "a");
        assert_eq!(closed(r#"{"assistant_text":"#)["assistant_text"], "");
    }

    #[test]
    fn what_is_no_contract_answer_is_not_closed() {
        assert_eq!(close("Hello there"), None);
        assert_eq!(close(r#"{"tool_calls":[]}"#), None);
    }
}
