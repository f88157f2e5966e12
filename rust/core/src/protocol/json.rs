//! JSON text → [`Value`], refusing duplicate keys at any depth.
//!
//! `serde_json` keeps the last of two equal keys (`{"type":"ping","type":"agent_spawn_request"}`
//! is a spawn request), which lets a message mean one thing to one reader and another thing to
//! the next. The protocol refuses it instead: the error names the key. One parse, no second
//! pass: the map visitor checks each key as it inserts it.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Why a text is not accepted.
#[derive(Debug)]
pub enum JsonError {
    /// Not JSON (serde_json's message, with line and column).
    Syntax(serde_json::Error),
    /// An object has this key twice.
    DuplicateKey(String),
}

/// Parses `text`, refusing duplicate keys.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut duplicate = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Checked {
        duplicate: &mut duplicate,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (value, duplicate) {
        (_, Some(key)) => Err(JsonError::DuplicateKey(key)),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(JsonError::Syntax(e)),
    }
}

/// A value whose objects are checked; the first duplicate key is recorded.
struct Checked<'a> {
    duplicate: &'a mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Checked<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        DeserializeSeed::deserialize(self, d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(Checked {
            duplicate: &mut *self.duplicate,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let message = format!("duplicate field \"{key}\"");
                *self.duplicate = Some(key);
                return Err(de::Error::custom(message));
            }
            let value = map.next_value_seed(Checked {
                duplicate: &mut *self.duplicate,
            })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn same_values_as_serde_json_without_duplicates() {
        for text in [
            r#"{"type":"ping","request_id":7}"#,
            r#"[1, -2, 3.5, "x", null, true, {"a": {"b": []}}]"#,
            r#"{"n": 18446744073709551615, "m": -9223372036854775808, "u": "\u00e9"}"#,
            "  \"text\"  ",
        ] {
            let ours = parse(text).unwrap();
            let theirs: Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn duplicate_keys_at_any_depth_are_named() {
        for (text, key) in [
            (r#"{"type":"ping","type":"agent_spawn_request"}"#, "type"),
            (
                r#"{"type":"agent_spawn_request","agent_config":{"name":"a","name":"b"}}"#,
                "name",
            ),
            (r#"[{"x":1},{"y":2,"y":3}]"#, "y"),
        ] {
            match parse(text) {
                Err(JsonError::DuplicateKey(k)) => assert_eq!(k, key, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        // Equal keys in different objects are fine.
        assert_eq!(
            parse(r#"{"a":{"x":1},"b":{"x":2}}"#).unwrap(),
            json!({"a": {"x": 1}, "b": {"x": 2}})
        );
    }

    #[test]
    fn syntax_errors_and_trailing_text_are_syntax_errors() {
        for text in ["{", "{\"a\":1} x", "", "1e999", "{\"a\" 1}"] {
            assert!(matches!(parse(text), Err(JsonError::Syntax(_))), "{text}");
        }
    }
}
