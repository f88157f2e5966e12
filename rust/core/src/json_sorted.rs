//! JSON with every object's keys in alphabetical order, however the build's `serde_json` keeps
//! them: insertion order when a dependency turns on its `preserve_order` feature (the local
//! model's grammar compiler does), alphabetical otherwise. What must read the same in every
//! build — the published protocol schemas, texts shown to agents — goes through [`sorted`].

use serde_json::Value;

/// `value` with every object's keys (at every depth) in alphabetical order.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn keys_come_in_alphabetical_order_at_every_depth() {
        let mut map = serde_json::Map::new();
        map.insert("b".into(), json!([{"z": 1, "a": 2}]));
        map.insert("a".into(), json!(null));
        let text = super::sorted(&serde_json::Value::Object(map)).to_string();
        assert_eq!(text, r#"{"a":null,"b":[{"a":2,"z":1}]}"#);
    }
}
