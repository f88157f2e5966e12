//! How error messages name the type of a JSON value that is not what was expected.

use serde_json::Value;

/// `null`, `a boolean`, `a number`, `a string`, `an array` or `an object`.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
