//! How error messages name the type of a JSON value that is not what was expected, and how
//! they quote a value that failed a JSON Schema: whole when it is short, by its kind and size
//! when it is not (a 4,001-character string is never echoed back to whoever sent it).

use serde_json::Value;

/// The longest value, as compact JSON, a schema error quotes; a longer one is named by its
/// kind and size instead.
pub const MAX_QUOTED_VALUE_BYTES: usize = 64;

/// A JSON Schema failure in jsonschema's words, with the failing value quoted only when it
/// is at most [`MAX_QUOTED_VALUE_BYTES`] of compact JSON (`"gossip" is not one of …`);
/// otherwise it stands as `the string given (4001 characters)` and the like.
pub fn schema_error_text(e: &jsonschema::ValidationError<'_>) -> String {
    let instance = e.instance();
    let size = serde_json::to_string(instance.as_ref()).map_or(usize::MAX, |t| t.len());
    if size <= MAX_QUOTED_VALUE_BYTES {
        return e.to_string();
    }
    let given = match instance.as_ref() {
        Value::String(s) => format!("the string given ({} characters)", s.chars().count()),
        Value::Array(a) => format!("the array given ({} entries)", a.len()),
        Value::Object(o) => format!("the object given ({} fields)", o.len()),
        other => format!("the {} given", json_kind(other).trim_start_matches("a ")),
    };
    e.masked_with(given).to_string()
}

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
