//! A tool's argument schema with every value given an end, for the grammar of an answer.
//!
//! A model caught in a loop repeats what the grammar lets it repeat: digits of a number, letters
//! of a string, items of a list. With no end in the schema it runs until `max_tokens`, and an
//! answer cut inside its first call has nothing left to run (an answer with no text and no
//! whole call is a silent one, which the runtime sends back for repair). [`bounded`] narrows a
//! schema so each value ends early enough for the answer to close:
//!
//! - a string (that is not one of a fixed set) holds at most `chars` characters, or its own
//!   `maxLength` when that is smaller (never fewer than its `minLength`);
//! - an integer stays within ±(2⁵³ − 1), the integers every JSON reader holds exactly (at most
//!   16 digits), and is never written `-0` (which JSON readers such as serde_json read as the
//!   float −0.0, refused where an integer is checked strictly: `hp_delta`'s `delta`): where
//!   its range holds 0 and negative numbers it is one of `≥ 0` or `≤ −1`; a number stays within
//!   ±10¹⁵;
//! - a list holds at most [`MAX_ITEMS`] items, or its own `maxItems` when smaller (never fewer
//!   than its `minItems`).
//!
//! Every value the narrowed schema allows, the tool's own schema allows too: it is what the
//! model may write, and validation still checks the answer against the tool's schema. The
//! schema is walked through `properties`, `items`, `prefixItems`, `additionalProperties`,
//! `anyOf` / `oneOf` / `allOf` and `$defs` / `definitions`.

use serde_json::{Map, Value, json};

/// The most items of a list in a local model's answer.
pub const MAX_ITEMS: u64 = 8;

/// The largest integer every JSON reader holds exactly (2⁵³ − 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// The largest magnitude of a number a local model may write.
const MAX_NUMBER: f64 = 1e15;

/// `schema` with every string at most `chars` characters long, every number bounded and every
/// list at most [`MAX_ITEMS`] long (see the module docs).
pub fn bounded(schema: &Value, chars: u64) -> Value {
    let mut schema = schema.clone();
    narrow(&mut schema, chars);
    schema
}

fn narrow(schema: &mut Value, chars: u64) {
    let Value::Object(map) = schema else { return };
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(|child| narrow(child, chars));
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(|child| narrow(child, chars));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            narrow(child, chars);
        }
    }
    if map.contains_key("enum") || map.contains_key("const") {
        return;
    }
    let types = types(map);
    if types.contains(&"string") {
        cap(map, "minLength", "maxLength", chars);
    }
    if types.contains(&"array") {
        cap(map, "minItems", "maxItems", MAX_ITEMS);
    }
    if types.contains(&"integer") && !types.contains(&"number") {
        floor_at(map, "minimum", json!(-MAX_SAFE_INTEGER));
        ceil_at(map, "maximum", json!(MAX_SAFE_INTEGER));
        let spans_zero = map.get("minimum").and_then(Value::as_f64) < Some(0.0)
            && map.get("maximum").and_then(Value::as_f64) >= Some(0.0);
        if spans_zero && !map.contains_key("anyOf") {
            map.insert("anyOf".into(), json!([{"minimum": 0}, {"maximum": -1}]));
        }
    } else if types.contains(&"number") {
        floor_at(map, "minimum", json!(-MAX_NUMBER));
        ceil_at(map, "maximum", json!(MAX_NUMBER));
    }
}

/// The schema's `type`, as a list (empty when it has none).
fn types(map: &Map<String, Value>) -> Vec<&'static str> {
    let named = |name: &str| {
        ["string", "array", "integer", "number"]
            .into_iter()
            .find(|t| *t == name)
    };
    match map.get("type") {
        Some(Value::String(t)) => named(t).into_iter().collect(),
        Some(Value::Array(ts)) => ts.iter().filter_map(|t| named(t.as_str()?)).collect(),
        _ => Vec::new(),
    }
}

/// `max` becomes at most `limit`, and never less than `min`.
fn cap(map: &mut Map<String, Value>, min: &str, max: &str, limit: u64) {
    let floor = map.get(min).and_then(Value::as_u64).unwrap_or(0);
    let own = map.get(max).and_then(Value::as_u64).unwrap_or(u64::MAX);
    map.insert(max.into(), json!(own.min(limit.max(floor))));
}

/// `minimum` at least `limit` (a larger one stays).
fn floor_at(map: &mut Map<String, Value>, key: &str, limit: Value) {
    let limit_f = limit.as_f64().unwrap_or(f64::MIN);
    match map.get(key).and_then(Value::as_f64) {
        Some(own) if own >= limit_f => {}
        _ => {
            map.insert(key.into(), limit);
        }
    }
}

/// `maximum` at most `limit` (a smaller one stays).
fn ceil_at(map: &mut Map<String, Value>, key: &str, limit: Value) {
    let limit_f = limit.as_f64().unwrap_or(f64::MAX);
    match map.get(key).and_then(Value::as_f64) {
        Some(own) if own <= limit_f => {}
        _ => {
            map.insert(key.into(), limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_numbers_and_lists_get_an_end() {
        let schema = json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "minLength": 1, "maxLength": 1000},
                "short": {"type": "string", "maxLength": 10},
                "long_min": {"type": "string", "minLength": 100},
                "mood": {"type": "string", "enum": ["glad", "sad"]},
                "task_id": {"type": "integer", "minimum": 1},
                "x": {"type": "number"},
                "y": {"type": ["number", "null"], "maximum": 5},
                "recipients": {"type": "array", "items": {"type": "string"}, "maxItems": 50},
                "pair": {"type": "array", "minItems": 12},
                "either": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/n"}]}
            },
            "$defs": {"n": {"type": "integer"}}
        });
        let b = bounded(&schema, 64);
        let p = &b["properties"];
        assert_eq!(p["content"]["maxLength"], 64);
        assert_eq!(p["content"]["minLength"], 1);
        assert_eq!(p["short"]["maxLength"], 10, "a tighter bound stays");
        assert_eq!(p["long_min"]["maxLength"], 100, "never below minLength");
        assert!(
            p["mood"].get("maxLength").is_none(),
            "a fixed set is left alone"
        );
        assert_eq!(p["task_id"]["minimum"], 1);
        assert_eq!(p["task_id"]["maximum"], MAX_SAFE_INTEGER);
        assert_eq!(p["x"]["minimum"], -1e15);
        assert_eq!(p["x"]["maximum"], 1e15);
        assert_eq!(p["y"]["maximum"], 5);
        assert_eq!(p["recipients"]["maxItems"], 8);
        assert_eq!(p["recipients"]["items"]["maxLength"], 64);
        assert_eq!(p["pair"]["maxItems"], 12);
        assert_eq!(p["either"]["anyOf"][0]["maxLength"], 64);
        assert_eq!(b["$defs"]["n"]["maximum"], MAX_SAFE_INTEGER);
        assert_eq!(
            b["$defs"]["n"]["anyOf"],
            json!([{"minimum": 0}, {"maximum": -1}]),
            "never -0"
        );
        assert!(p["task_id"].get("anyOf").is_none(), "1 and up holds no -0");
    }

    #[test]
    fn what_the_bounded_schema_allows_the_tool_allows() {
        let schema = json!({"type": "object", "properties": {
            "content": {"type": "string", "minLength": 1, "maxLength": 1000},
            "task_id": {"type": "integer", "minimum": 1},
            "delta": {"type": "integer"},
            "recipients": {"type": "array", "items": {"type": "string"}, "maxItems": 50}}});
        let b = bounded(&schema, 64);
        let tool = jsonschema::validator_for(&schema).unwrap();
        let narrow = jsonschema::validator_for(&b).unwrap();
        for value in [
            json!({"content": "hello", "task_id": 3, "recipients": ["a"]}),
            json!({"content": "x".repeat(64), "task_id": MAX_SAFE_INTEGER}),
            json!({"content": "x".repeat(65)}),
            json!({"task_id": MAX_SAFE_INTEGER + 1}),
            json!({"recipients": vec!["a"; 9]}),
            json!({"delta": -3}),
            json!({"delta": 0}),
        ] {
            if narrow.is_valid(&value) {
                assert!(tool.is_valid(&value), "{value}");
            }
        }
        assert!(!narrow.is_valid(&json!({"content": "x".repeat(65)})));
        assert!(!narrow.is_valid(&json!({"recipients": vec!["a"; 9]})));
        assert!(narrow.is_valid(&json!({"delta": -3})) && narrow.is_valid(&json!({"delta": 0})));
    }
}
