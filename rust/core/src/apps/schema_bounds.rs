//! What an app action's `params` JSON Schema may ask for.
//!
//! An action's schema comes from whoever registers the app — over the wire, an untrusted
//! client — and the server acts on it: it compiles it, checks arguments against it, and the
//! offline `scripted` brain draws arguments from it ([`super::sample`]). So before a schema is
//! compiled ([`check`], from [`params_schema`](super::action::params_schema): at
//! `app_register`, `app_set_context` and an `app_action_result` with `actions`), it must keep
//! within these bounds ([`crate::limits`]):
//!
//! - at most [`MAX_ACTION_PARAMS_BYTES`] of compact JSON, nesting at most
//!   [`MAX_ACTION_PARAMS_DEPTH`] levels of objects and arrays;
//! - `minItems` and `maxItems` at most [`MAX_SCHEMA_ITEMS`], `minLength` at most
//!   [`MAX_SCHEMA_MIN_LENGTH`];
//! - `minimum`, `maximum`, `exclusiveMinimum` and `exclusiveMaximum` finite and within
//!   ±[`MAX_SCHEMA_NUMBER`];
//! - ranges that something fits: `minimum` ≤ `maximum` (strictly below when a bound is
//!   exclusive), `minItems` ≤ `maxItems`, `minLength` ≤ `maxLength`.
//!
//! The keywords are checked wherever a schema can stand (under `properties`, `items`, `oneOf`, …);
//! the values of `enum`, `const`, `default` and `examples` are data, not schemas, and count only
//! towards the size. An error names the action, the keyword by its path in `params`, and the
//! limit: `action 'place': params.properties.row.maximum: 1e300 is out of range; a numeric
//! bound is at most 9007199254740991 in magnitude`.

use serde_json::{Map, Value};

use crate::limits::{
    MAX_ACTION_PARAMS_BYTES, MAX_ACTION_PARAMS_DEPTH, MAX_SCHEMA_ITEMS, MAX_SCHEMA_MIN_LENGTH,
    MAX_SCHEMA_NUMBER,
};

/// Keywords whose values are data, not schemas.
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// Numeric bounds: finite and within ±[`MAX_SCHEMA_NUMBER`].
const NUMBER_KEYWORDS: [&str; 4] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];

/// Sizes and their largest value.
const SIZE_KEYWORDS: [(&str, u64); 3] = [
    ("minItems", MAX_SCHEMA_ITEMS),
    ("maxItems", MAX_SCHEMA_ITEMS),
    ("minLength", MAX_SCHEMA_MIN_LENGTH),
];

/// Lower and upper bounds that must leave room for a value; `true`: the range must not be a
/// single point (one of the bounds is exclusive).
const RANGES: [(&str, &str, bool); 6] = [
    ("minimum", "maximum", false),
    ("exclusiveMinimum", "maximum", true),
    ("minimum", "exclusiveMaximum", true),
    ("exclusiveMinimum", "exclusiveMaximum", true),
    ("minItems", "maxItems", false),
    ("minLength", "maxLength", false),
];

/// Checks `schema`, an action's `params`, against the bounds (see the module docs). Errors
/// start with `params` (the caller names the action).
pub fn check(schema: &Value) -> Result<(), String> {
    crate::limits::check_json_bytes("params", schema, MAX_ACTION_PARAMS_BYTES)?;
    walk(schema, "params", 1)
}

/// Checks one value of the schema at `path`, `depth` levels down.
fn walk(value: &Value, path: &str, depth: usize) -> Result<(), String> {
    let is_nested = matches!(value, Value::Object(_) | Value::Array(_));
    if is_nested && depth > MAX_ACTION_PARAMS_DEPTH {
        return Err(format!(
            "{path}: the schema nests more than {MAX_ACTION_PARAMS_DEPTH} levels deep; the \
             limit is {MAX_ACTION_PARAMS_DEPTH}"
        ));
    }
    match value {
        Value::Object(object) => {
            check_keywords(object, path)?;
            for (key, child) in object {
                if !DATA_KEYWORDS.contains(&key.as_str()) {
                    walk(child, &format!("{path}.{key}"), depth + 1)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, child)| walk(child, &format!("{path}[{i}]"), depth + 1)),
        _ => Ok(()),
    }
}

/// The bounds of one object that may be a schema.
fn check_keywords(object: &Map<String, Value>, path: &str) -> Result<(), String> {
    let number = |key: &str| object.get(key).and_then(Value::as_f64);
    for key in NUMBER_KEYWORDS {
        if let Some(n) = number(key)
            && !(n.is_finite() && n.abs() <= MAX_SCHEMA_NUMBER)
        {
            return Err(format!(
                "{path}.{key}: {n:e} is out of range; a numeric bound is at most \
                 {MAX_SCHEMA_NUMBER} in magnitude"
            ));
        }
    }
    for (key, max) in SIZE_KEYWORDS {
        if let Some(n) = number(key)
            && n > max as f64
        {
            return Err(format!(
                "{path}.{key}: {} is over the limit; the limit is {max}",
                object[key]
            ));
        }
    }
    for (low, high, strict) in RANGES {
        if let (Some(l), Some(h)) = (number(low), number(high))
            && (l > h || (strict && l == h))
        {
            return Err(format!(
                "{path}: {low} {} and {high} {} leave no value that fits",
                object[low], object[high]
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refused(schema: Value) -> String {
        super::super::ActionDef::new("place", "")
            .with_params(schema)
            .normalized()
            .unwrap_err()
    }

    #[test]
    fn ordinary_schemas_pass() {
        for schema in [
            json!({"type": "object", "properties": {"row": {"type": "integer", "minimum": 0,
                   "maximum": 2}}, "required": ["row"]}),
            json!({"type": "object", "properties": {"tags": {"type": "array", "minItems": 1000,
                   "maxItems": 1000, "items": {"type": "string", "minLength": 4000}},
                   "x": {"type": "number", "minimum": -9_007_199_254_740_991.0,
                   "exclusiveMaximum": 9_007_199_254_740_991.0}}}),
            // Data is not a schema: an enum value may say anything.
            json!({"type": "object", "properties": {"mode": {"const": {"minItems": 1e12}},
                   "level": {"enum": [{"maximum": 1e300}]}}}),
        ] {
            assert_eq!(check(&schema), Ok(()), "{schema}");
        }
    }

    #[test]
    fn hostile_schemas_are_refused_naming_the_action_the_keyword_and_the_limit() {
        let e = refused(
            json!({"type": "object", "properties": {"a": {"type": "array",
                               "minItems": 4e9}}}),
        );
        assert_eq!(
            e,
            "action 'place': params.properties.a.minItems: 4000000000.0 is over the limit; the \
             limit is 1000"
        );
        let e = refused(
            json!({"type": "object", "properties": {"s": {"type": "string",
                               "minLength": 200_000_000}}}),
        );
        assert_eq!(
            e,
            "action 'place': params.properties.s.minLength: 200000000 is over the limit; the \
             limit is 4000"
        );
        let e = refused(
            json!({"type": "object", "properties": {"x": {"type": "number",
                               "minimum": -1.7e308, "maximum": 1.7e308}}}),
        );
        assert_eq!(
            e,
            "action 'place': params.properties.x.minimum: -1.7e308 is out of range; a numeric \
             bound is at most 9007199254740991 in magnitude"
        );
        let e = refused(
            json!({"type": "object", "properties": {"x": {"anyOf": [{"type":
                               "integer", "maximum": 1e16}]}}}),
        );
        assert!(
            e.starts_with("action 'place': params.properties.x.anyOf[0].maximum: 1e16"),
            "{e}"
        );
        let e = refused(
            json!({"type": "object", "properties": {"n": {"type": "integer",
                               "minimum": 5, "maximum": 3}}}),
        );
        assert_eq!(
            e,
            "action 'place': params.properties.n: minimum 5 and maximum 3 leave no value that fits"
        );
        let e = refused(
            json!({"type": "object", "properties": {"n": {"type": "number",
                               "exclusiveMinimum": 1, "exclusiveMaximum": 1}}}),
        );
        assert!(
            e.contains("exclusiveMinimum 1 and exclusiveMaximum 1"),
            "{e}"
        );
        let e = refused(
            json!({"type": "object", "properties": {"a": {"type": "array",
                               "minItems": 3, "maxItems": 2}}}),
        );
        assert!(e.contains("minItems 3 and maxItems 2"), "{e}");
    }

    #[test]
    fn size_and_depth_are_bounded() {
        let names: Map<String, Value> = (0..2000)
            .map(|i| (format!("field_{i}"), json!({"type": "integer"})))
            .collect();
        let e = refused(json!({"type": "object", "properties": names}));
        assert!(
            e.starts_with("action 'place': params is ")
                && e.ends_with(&format!(
                    "bytes of JSON; the limit is {MAX_ACTION_PARAMS_BYTES}"
                )),
            "{e}"
        );
        // Nested arrays of arrays: params(1) → properties(2) → a(3) → items(4) → …
        let mut deep = json!({"type": "integer"});
        for _ in 0..MAX_ACTION_PARAMS_DEPTH {
            deep = json!({"type": "array", "items": deep});
        }
        let e = refused(json!({"type": "object", "properties": {"a": deep}}));
        assert!(
            e.starts_with("action 'place': params.properties.a.items.items")
                && e.ends_with(&format!(
                    "nests more than {MAX_ACTION_PARAMS_DEPTH} levels deep; the limit is \
                     {MAX_ACTION_PARAMS_DEPTH}"
                )),
            "{e}"
        );
    }
}
