//! The texts the app bridge shows an agent and a chat: events as system messages, human labels.
//!
//! An event reaches the agent as `Event: <name> — <payload>` (the app bridge's game event
//! notification), the payload written loosely, `{ winner: X }` rather than JSON: objects as
//! `{ key: value, … }`, strings without quotes, arrays as `[a, b]`, numbers, booleans and `null`
//! as they are. An empty object is `{}`; an event without a payload (`null`) is just
//! `Event: <name>`. Keys come in alphabetical order, however the JSON object keeps them.

use serde_json::Value;

/// The prefix of a chat line that shows a changed `humanLabel`.
pub const LABEL_PREFIX: &str = "🎮 ";

/// The system message an event becomes.
pub fn event_message(name: &str, payload: &Value) -> String {
    match payload {
        Value::Null => format!("Event: {name}"),
        payload => format!("Event: {name} — {}", relaxed(payload)),
    }
}

/// The chat line a changed `humanLabel` becomes (`🎮 ⚔️ Combat: Lv.15 Goblin`).
pub fn label_line(label: &str) -> String {
    format!("{LABEL_PREFIX}{label}")
}

/// A value written loosely, as events show payloads (`{ winner: X }`).
pub fn relaxed(value: &Value) -> String {
    let mut out = String::new();
    write_relaxed(&crate::json_sorted::sorted(value), &mut out);
    out
}

fn write_relaxed(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            out.push_str("{ ");
            for (i, (key, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push_str(": ");
                write_relaxed(v, out);
            }
            out.push_str(" }");
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_relaxed(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_read_as_the_spec_shows_them() {
        // The app bridge's game event notification.
        assert_eq!(
            event_message("roundEnded", &json!({"winner": "X"})),
            "Event: roundEnded — { winner: X }"
        );
        assert_eq!(
            event_message(
                "scored",
                &json!({"by": "O", "points": 3, "bonus": [1, 2.5],
                                           "streak": {"n": 2, "new": true}, "note": null})
            ),
            "Event: scored — { bonus: [1, 2.5], by: O, note: null, points: 3, streak: { n: 2, new: true } }"
        );
        assert_eq!(event_message("paused", &Value::Null), "Event: paused");
        assert_eq!(event_message("tick", &json!({})), "Event: tick — {}");
        assert_eq!(
            event_message("said", &json!("hi there")),
            "Event: said — hi there"
        );
    }

    #[test]
    fn labels_are_prefixed() {
        // The app bridge's context change with a label.
        assert_eq!(
            label_line("⚔️ Combat: Lv.15 Goblin"),
            "🎮 ⚔️ Combat: Lv.15 Goblin"
        );
    }
}
