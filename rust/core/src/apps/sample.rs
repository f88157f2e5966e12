//! Arguments that satisfy a JSON Schema, drawn from a seeded generator: how the offline
//! `scripted` brain fills an app action's `params`.
//!
//! Covers what action schemas use: `type` (`object` with `properties` — every property is
//! filled —, `integer` and `number` within `minimum` / `maximum` / `exclusiveMinimum` /
//! `exclusiveMaximum` (0 to 9 when unbounded), `string` (`enum`, else a short word within
//! `minLength` / `maxLength`), `boolean`, `array` of `minItems` items, `null`), `enum` and
//! `const` anywhere, and the first branch of `oneOf` / `anyOf`. What it cannot satisfy (a
//! `pattern`, a `format`, a `multipleOf`) the app's schema check refuses, and the brain is told
//! why.
//!
//! Bounded whatever the schema says (schemas from clients are checked at registration, see
//! [`super::schema_bounds`]; this holds for any schema): at most 8 levels deep, at most
//! [`MAX_SCHEMA_ITEMS`] items in an array, and about [`MAX_SAMPLED_ARGUMENTS_BYTES`] of JSON in
//! all — once that budget is spent, arrays stop growing, strings stop lengthening and optional
//! properties are left out (the arguments may then fail the schema, and the brain is told).
//! Numbers are drawn within ±[`MAX_SCHEMA_NUMBER`]; a range with no value in it gives its lower
//! bound. Nothing panics.

use rand::{Rng, RngExt};
use serde_json::{Map, Value, json};

use crate::limits::{MAX_SAMPLED_ARGUMENTS_BYTES, MAX_SCHEMA_ITEMS, MAX_SCHEMA_NUMBER};

/// How many schema levels deep sampling goes (deeper: `null`).
const MAX_DEPTH: usize = 8;

/// The words a string starts from.
const WORDS: [&str; 5] = ["ok", "yes", "go", "north", "left"];

/// A value for `schema`.
pub fn sample(schema: &Value, rng: &mut impl Rng) -> Value {
    let mut sampler = Sampler {
        rng,
        left: MAX_SAMPLED_ARGUMENTS_BYTES,
    };
    sampler.at(schema, 0)
}

/// The generator and what is left of the output budget (bytes of JSON, roughly).
struct Sampler<'a, R: Rng> {
    rng: &'a mut R,
    left: usize,
}

impl<R: Rng> Sampler<'_, R> {
    /// Takes `n` bytes from the budget.
    fn spend(&mut self, n: usize) {
        self.left = self.left.saturating_sub(n);
    }

    /// A value for `schema`, `depth` schema levels down, paid for.
    fn at(&mut self, schema: &Value, depth: usize) -> Value {
        let value = self.draw(schema, depth);
        if !matches!(value, Value::Array(_) | Value::Object(_) | Value::String(_)) {
            // Containers and strings spend as they grow.
            self.spend(8);
        }
        value
    }

    /// A value for `schema` by its `const`, `enum`, first `oneOf` / `anyOf` branch or `type`.
    fn draw(&mut self, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return Value::Null;
        }
        let Some(schema) = schema.as_object() else {
            return Value::Null;
        };
        if let Some(value) = schema.get("const") {
            return self.given(value);
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array)
            && !options.is_empty()
        {
            let pick = &options[self.rng.random_range(0..options.len())];
            return self.given(pick);
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(first) = schema
                .get(key)
                .and_then(Value::as_array)
                .and_then(|a| a.first())
            {
                return self.at(first, depth + 1);
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
        match kind {
            "object" => self.object(schema, depth),
            "integer" => self.integer(schema),
            "number" => self.number(schema),
            "string" => self.string(schema),
            "boolean" => json!(self.rng.random_bool(0.5)),
            "array" => self.array(schema, depth),
            _ => Value::Null,
        }
    }

    /// A value the schema gives (`const`, an `enum` option), paid for by its size.
    fn given(&mut self, value: &Value) -> Value {
        self.spend(serde_json::to_vec(value).map_or(0, |v| v.len()));
        value.clone()
    }

    /// Every property while the budget lasts; the required ones always.
    fn object(&mut self, schema: &Map<String, Value>, depth: usize) -> Value {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut object = Map::new();
        self.spend(2);
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                if self.left == 0 && !required.contains(&name.as_str()) {
                    continue;
                }
                self.spend(name.len() + 4);
                let value = self.at(property, depth + 1);
                object.insert(name.clone(), value);
            }
        }
        Value::Object(object)
    }

    /// `minItems` items (at most [`MAX_SCHEMA_ITEMS`]) while the budget lasts.
    fn array(&mut self, schema: &Map<String, Value>, depth: usize) -> Value {
        let items = schema.get("items").unwrap_or(&Value::Null);
        let wanted = schema
            .get("minItems")
            .and_then(Value::as_f64)
            .filter(|n| *n > 0.0)
            .map_or(0, |n| n.min(MAX_SCHEMA_ITEMS as f64) as usize);
        self.spend(2);
        let mut array = Vec::new();
        while array.len() < wanted && self.left > 0 {
            self.spend(1);
            array.push(self.at(items, depth + 1));
        }
        Value::Array(array)
    }

    /// A short word, padded to `minLength` and cut to `maxLength`, within the budget.
    fn string(&mut self, schema: &Map<String, Value>) -> Value {
        let length = |key: &str| {
            schema
                .get(key)
                .and_then(Value::as_f64)
                .filter(|n| *n > 0.0)
                .map(|n| n.min(usize::MAX as f64) as usize)
        };
        let min = length("minLength").unwrap_or(0);
        let max = length("maxLength").unwrap_or(usize::MAX).max(min);
        let word = WORDS[self.rng.random_range(0..WORDS.len())];
        let chars = word.len().max(min).min(max).min(self.left.max(word.len()));
        let text: String = word
            .chars()
            .chain(std::iter::repeat('a'))
            .take(chars)
            .collect();
        self.spend(text.len() + 2);
        Value::String(text)
    }

    /// An integer in the schema's range.
    fn integer(&mut self, schema: &Map<String, Value>) -> Value {
        let (low, high) = range(schema);
        // Whole numbers inside the bounds: past an exclusive bound when it is whole.
        let low = match low {
            Some(Bound { value, exclusive }) if exclusive => Some(value.floor() + 1.0),
            Some(Bound { value, .. }) => Some(value.ceil()),
            None => None,
        };
        let high = match high {
            Some(Bound { value, exclusive }) if exclusive => Some(value.ceil() - 1.0),
            Some(Bound { value, .. }) => Some(value.floor()),
            None => None,
        };
        let (low, high) = defaults(low, high);
        // Within ±2^53: exact as f64, far from i64's ends.
        let (low, high) = (low as i64, high as i64);
        if low >= high {
            return json!(low);
        }
        json!(self.rng.random_range(low..=high))
    }

    /// A number in the schema's range, with two decimals when they fit.
    fn number(&mut self, schema: &Map<String, Value>) -> Value {
        let (low_bound, high_bound) = range(schema);
        let (low, high) = defaults(low_bound.map(|b| b.value), high_bound.map(|b| b.value));
        let inside = |x: f64| {
            low_bound.is_none_or(|b| {
                if b.exclusive {
                    x > b.value
                } else {
                    x >= b.value
                }
            }) && high_bound.is_none_or(|b| {
                if b.exclusive {
                    x < b.value
                } else {
                    x <= b.value
                }
            })
        };
        if low >= high {
            return json!(low);
        }
        let drawn: f64 = self.rng.random_range(low..=high);
        let rounded = (drawn * 100.0).round() / 100.0;
        let value = [rounded, drawn, low + (high - low) / 2.0]
            .into_iter()
            .find(|x| inside(*x))
            .unwrap_or(low);
        json!(value)
    }
}

/// A numeric bound, clamped to ±[`MAX_SCHEMA_NUMBER`].
#[derive(Clone, Copy, Debug)]
struct Bound {
    value: f64,
    exclusive: bool,
}

/// The tightest lower and upper bounds of `minimum` / `exclusiveMinimum` and `maximum` /
/// `exclusiveMaximum` (a draft-4 boolean `exclusive*` is ignored; so is anything not finite).
fn range(schema: &Map<String, Value>) -> (Option<Bound>, Option<Bound>) {
    let bound = |key: &str, exclusive: bool| {
        schema
            .get(key)
            .and_then(Value::as_f64)
            .filter(|n| n.is_finite())
            .map(|n| Bound {
                value: n.clamp(-MAX_SCHEMA_NUMBER, MAX_SCHEMA_NUMBER),
                exclusive,
            })
    };
    let tighter = |a: Option<Bound>, b: Option<Bound>, higher: bool| match (a, b) {
        (Some(a), Some(b)) => {
            let a_wins = if a.value == b.value {
                a.exclusive
            } else {
                (a.value > b.value) == higher
            };
            Some(if a_wins { a } else { b })
        }
        (a, b) => a.or(b),
    };
    let low = tighter(
        bound("minimum", false),
        bound("exclusiveMinimum", true),
        true,
    );
    let high = tighter(
        bound("maximum", false),
        bound("exclusiveMaximum", true),
        false,
    );
    (low, high)
}

/// A range from optional ends: 0 to 9 with neither; with only a lower end, ten values up from
/// it; with only an upper end, from 0 (or ten values down from it when it is negative).
fn defaults(low: Option<f64>, high: Option<f64>) -> (f64, f64) {
    match (low, high) {
        (Some(low), Some(high)) => (low, high),
        (Some(low), None) => (low, low + 9.0),
        (None, Some(high)) if high >= 0.0 => (0.0, high),
        (None, Some(high)) => (high - 9.0, high),
        (None, None) => (0.0, 9.0),
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

    /// The size of `value` as compact JSON.
    fn bytes(value: &Value) -> usize {
        serde_json::to_vec(value).unwrap().len()
    }

    #[test]
    fn hostile_schemas_give_bounded_arguments_without_panicking() {
        let budget = MAX_SAMPLED_ARGUMENTS_BYTES;
        let nested = json!({"type": "array", "minItems": 1000, "items": {"type": "array",
            "minItems": 1000, "items": {"type": "array", "minItems": 1000,
            "items": {"type": "integer"}}}});
        let schemas = [
            // Would be 128 GB of nulls.
            json!({"type": "object", "properties": {"a": {"type": "array", "minItems": 4e9}}}),
            // Would be 10^9 integers.
            json!({"type": "object", "properties": {"a": nested}}),
            // Would be 200 MB, built quadratically.
            json!({"type": "object", "properties": {"s": {"type": "string",
                   "minLength": 200_000_000}}}),
            json!({"type": "object", "properties": {"s": {"type": "string",
                   "minLength": 1e300, "maxLength": 5}}}),
            json!({"type": "object", "properties": {"x": {"type": "number",
                   "minimum": -1.7e308, "maximum": 1.7e308}}}),
            json!({"type": "object", "properties": {"n": {"type": "integer",
                   "minimum": -1.7e308, "maximum": 1.7e308}}}),
            json!({"type": "object", "properties": {"n": {"type": "integer",
                   "minimum": 1.7e308}}}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5,
                   "maximum": 3}, "x": {"type": "number", "minimum": 5, "maximum": 3},
                   "e": {"type": "number", "exclusiveMinimum": 1, "exclusiveMaximum": 1}}}),
            json!({"type": "object", "properties": {"e": {"type": "integer",
                   "exclusiveMinimum": 1.5, "exclusiveMaximum": 2.5}}}),
            // Many required properties, each a long string: the budget still holds (roughly:
            // required properties are never left out).
            json!({"type": "array", "minItems": 1000, "items": {"type": "object",
                   "properties": {"a": {"type": "string", "minLength": 4000},
                                  "b": {"type": "string", "minLength": 4000}},
                   "required": ["a", "b"]}}),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for schema in &schemas {
            for _ in 0..20 {
                let value = sample(schema, &mut rng);
                let n = bytes(&value);
                assert!(n <= budget + 8 * 1024, "{n} bytes for {schema}");
            }
        }
    }

    #[test]
    fn bounds_are_kept_exactly_where_a_value_fits() {
        let schemas = [json!({"type": "object", "properties": {
                "n": {"type": "integer", "minimum": -9_007_199_254_740_991.0,
                      "maximum": 9_007_199_254_740_991.0},
                "x": {"type": "number", "minimum": -9_007_199_254_740_991.0,
                      "maximum": 9_007_199_254_740_991.0},
                "tiny": {"type": "number", "exclusiveMinimum": 0.001, "exclusiveMaximum": 0.002},
                "open": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.004},
                "one": {"type": "integer", "exclusiveMinimum": 1.5, "exclusiveMaximum": 2.5},
                "edge": {"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 5},
                "neg": {"type": "integer", "maximum": -20},
                "both": {"type": "integer", "minimum": 2, "exclusiveMinimum": 2, "maximum": 3},
                "s": {"type": "string", "minLength": 4000},
                "list": {"type": "array", "minItems": 1000, "items": {"type": "integer",
                         "minimum": 0, "maximum": 9}}},
                "required": ["n", "x", "tiny", "open", "one", "edge", "neg", "both", "s", "list"]})];
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for schema in schemas {
            let validator = jsonschema::validator_for(&schema).unwrap();
            for _ in 0..100 {
                let value = sample(&schema, &mut rng);
                assert!(validator.is_valid(&value), "{value} for {schema}");
                assert_eq!(value["one"], 2);
                assert_eq!(value["edge"], 4);
                assert_eq!(value["both"], 3);
            }
        }
    }
}
