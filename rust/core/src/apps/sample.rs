//! Arguments that satisfy a JSON Schema, drawn from a seeded generator: how the offline
//! `scripted` brain fills an app action's `params`.
//!
//! Covers what action schemas use: `type` (`object` with `properties` — every property is
//! filled —, `integer` and `number` within `minimum` / `maximum` (0 to 9 when unbounded),
//! `string` (`enum`, else a short word within `minLength` / `maxLength`), `boolean`, `array` of
//! `minItems` items, `null`), `enum` and `const` anywhere, and the first branch of
//! `oneOf` / `anyOf`. What it cannot satisfy (a `pattern`, a `format`) the app's schema check
//! refuses, and the brain is told why.

use rand::{Rng, RngExt};
use serde_json::{Map, Value, json};

/// A value for `schema`.
pub fn sample(schema: &Value, rng: &mut impl Rng) -> Value {
    sample_at(schema, rng, 0)
}

fn sample_at(schema: &Value, rng: &mut impl Rng, depth: usize) -> Value {
    if depth > 8 {
        return Value::Null;
    }
    let Some(schema) = schema.as_object() else {
        return Value::Null;
    };
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.is_empty()
    {
        return options[rng.random_range(0..options.len())].clone();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return sample_at(first, rng, depth + 1);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null"),
        _ if schema.contains_key("properties") => "object",
        _ => "null",
    };
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    match kind {
        "object" => {
            let mut object = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    object.insert(name.clone(), sample_at(property, rng, depth + 1));
                }
            }
            Value::Object(object)
        }
        "integer" => {
            let low = number("minimum")
                .or_else(|| number("exclusiveMinimum").map(|m| m + 1.0))
                .map_or(0, |m| m.ceil() as i64);
            let high = number("maximum")
                .or_else(|| number("exclusiveMaximum").map(|m| m - 1.0))
                .map_or(low.max(0) + 9, |m| m.floor() as i64);
            json!(rng.random_range(low..=high.max(low)))
        }
        "number" => {
            let low = number("minimum").unwrap_or(0.0);
            let high = number("maximum").unwrap_or(low + 9.0).max(low);
            let value: f64 = rng.random_range(low..=high);
            json!((value * 100.0).round() / 100.0)
        }
        "string" => {
            let min = number("minLength").unwrap_or(0.0) as usize;
            let max = number("maxLength").map_or(usize::MAX, |m| m as usize);
            let mut word = ["ok", "yes", "go", "north", "left"][rng.random_range(0..5)].to_string();
            while word.chars().count() < min {
                word.push('a');
            }
            word.chars().take(max.max(min)).collect::<String>().into()
        }
        "boolean" => json!(rng.random_bool(0.5)),
        "array" => {
            let items = schema.get("items").cloned().unwrap_or(Value::Null);
            let n = number("minItems").unwrap_or(0.0) as usize;
            Value::Array((0..n).map(|_| sample_at(&items, rng, depth + 1)).collect())
        }
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn samples_satisfy_their_schemas() {
        let schemas = [
            json!({"type": "object", "properties": {"row": {"type": "integer", "minimum": 0,
                   "maximum": 2}, "col": {"type": "integer", "minimum": 0, "maximum": 2}},
                   "required": ["row", "col"], "additionalProperties": false}),
            json!({"type": "object", "properties": {"card": {"enum": ["A", "K", "Q"]},
                   "bet": {"type": "number", "minimum": 1, "maximum": 5},
                   "name": {"type": "string", "minLength": 8, "maxLength": 10},
                   "fast": {"type": "boolean"}, "tags": {"type": "array", "items":
                   {"type": "string"}, "minItems": 2}, "kind": {"const": "x"},
                   "maybe": {"type": ["null", "integer"], "exclusiveMinimum": 3}},
                   "required": ["card", "bet", "name", "fast", "tags", "kind", "maybe"]}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for schema in schemas {
            let validator = jsonschema::validator_for(&schema).unwrap();
            for _ in 0..200 {
                let value = sample(&schema, &mut rng);
                assert!(validator.is_valid(&value), "{value} for {schema}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_arguments() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let a: Vec<Value> = {
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            (0..10).map(|_| sample(&schema, &mut rng)).collect()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let b: Vec<Value> = (0..10).map(|_| sample(&schema, &mut rng)).collect();
        assert_eq!(a, b);
    }
}
