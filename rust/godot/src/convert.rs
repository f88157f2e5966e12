//! Variant ⇄ JSON (`serde_json::Value`) conversion, shared by every class of the extension.
//!
//! # Godot → JSON ([`variant_to_json`])
//!
//! | Variant | JSON |
//! |---|---|
//! | `null` | `null` |
//! | `bool` | boolean |
//! | `int` | integer (never a float) |
//! | `float` | float (a whole float such as `2.0` stays a float: `2.0`); NaN and ±INF are errors |
//! | `String`, `StringName`, `NodePath` | string |
//! | `Array` (typed or untyped), `Dictionary` (typed or untyped) | array, object (recursively) |
//! | `PackedByteArray`, `PackedInt32Array`, `PackedInt64Array` | array of integers |
//! | `PackedFloat32Array`, `PackedFloat64Array` | array of floats |
//! | `PackedStringArray` | array of strings |
//! | `Vector2`, `Vector2i` | `{"x", "y"}` (floats for `Vector2`, integers for `Vector2i`) |
//! | `Vector3`, `Vector3i` | `{"x", "y", "z"}` |
//! | `Vector4`, `Vector4i` | `{"x", "y", "z", "w"}` |
//! | `Color` | `{"r", "g", "b", "a"}` (floats) |
//! | `PackedVector2/3/4Array`, `PackedColorArray` | arrays of the objects above |
//!
//! Dictionary keys become strings: `String`, `StringName` and `NodePath` keys as they are, `int`
//! keys in decimal (`3` → `"3"`), `bool` keys as `"true"` / `"false"`, finite `float` keys in
//! Rust's shortest round-trip form (`1.5` → `"1.5"`, `2.0` → `"2"`). Two keys that map to the same
//! string (`1` and `"1"`) are an error rather than a silent overwrite.
//!
//! Every other type — `Object` (including nodes and resources), `Callable`, `Signal`, `RID`,
//! `Rect2`, `Transform2D/3D`, `Basis`, `Quaternion`, `Plane`, `AABB`, `Projection` — has no JSON
//! form here and gives a [`ConvertError`] that names the offending path and type. Nesting deeper
//! than [`MAX_DEPTH`] (for example an array that contains itself) is an error too, never a stack
//! overflow. Nothing in this module panics.
//!
//! # JSON → Godot ([`json_to_variant`])
//!
//! `null` → `null`, booleans → `bool`, integers → `int`, floats → `float` (`2.0` stays a float),
//! strings → `String`, arrays → untyped `Array`, objects → untyped `Dictionary` with `String`
//! keys. JSON objects are **not** turned back into vectors or colors: `{"x": 1, "y": 2}` becomes a
//! `Dictionary`. The only lossy case is an unsigned integer above `i64::MAX` (Godot's `int` is 64-bit
//! signed), which becomes the nearest `float`.

use std::fmt;

use godot::builtin::{
    AnyArray, AnyDictionary, Color, GString, NodePath, PackedByteArray, PackedColorArray,
    PackedFloat32Array, PackedFloat64Array, PackedInt32Array, PackedInt64Array, PackedStringArray,
    PackedVector2Array, PackedVector3Array, PackedVector4Array, StringName, VarArray,
    VarDictionary, Variant, VariantType, Vector2, Vector2i, Vector3, Vector3i, Vector4, Vector4i,
};
use godot::meta::{FromGodot, ToGodot};
use serde_json::{Map, Number, Value};

/// Deepest nesting of arrays/dictionaries [`variant_to_json`] follows before giving up.
pub const MAX_DEPTH: usize = 64;

/// Why a Variant could not be converted to JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    /// Where the problem is, as a dotted path from the converted value (`moves.2`,
    /// `options.size`); empty for the value itself.
    pub path: String,
    /// What is wrong.
    pub kind: ConvertErrorKind,
}

/// The kinds of [`ConvertError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConvertErrorKind {
    /// A value of a Godot type that has no JSON form (`Object`, `Callable`, `Rect2`, …).
    Unsupported {
        /// Godot's name of the type (`Object`, `Callable`).
        type_name: String,
    },
    /// A dictionary key of a type that cannot become a JSON object key.
    UnsupportedKey {
        /// Godot's name of the key's type.
        type_name: String,
    },
    /// Two dictionary keys map to the same JSON key (`1` and `"1"`).
    DuplicateKey {
        /// The JSON key both map to.
        key: String,
    },
    /// A NaN or infinite float, which JSON cannot represent.
    NonFiniteFloat,
    /// Nesting deeper than [`MAX_DEPTH`] (possibly an array or dictionary containing itself).
    TooDeep,
    /// The Variant claimed a type but could not be read as it (should not happen).
    Unreadable {
        /// Godot's name of the type.
        type_name: String,
        /// The conversion error gdext reported.
        detail: String,
    },
}

impl ConvertError {
    fn new(path: &str, kind: ConvertErrorKind) -> Self {
        ConvertError {
            path: path.to_string(),
            kind,
        }
    }

    /// The offending path, or `root` when the problem is the value itself.
    pub fn field_or<'a>(&'a self, root: &'a str) -> &'a str {
        if self.path.is_empty() {
            root
        } else {
            &self.path
        }
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "the value".to_string()
        } else {
            format!("'{}'", self.path)
        };
        match &self.kind {
            ConvertErrorKind::Unsupported { type_name } => write!(
                f,
                "{at} is of type {type_name}, which has no JSON form (use null, bool, int, float, String, \
                 StringName, NodePath, Array, Dictionary, packed arrays, vectors or Color)"
            ),
            ConvertErrorKind::UnsupportedKey { type_name } => write!(
                f,
                "{at} has a dictionary key of type {type_name}; JSON keys must be strings \
                 (String, StringName, NodePath, int, bool or float keys are converted)"
            ),
            ConvertErrorKind::DuplicateKey { key } => {
                write!(f, "{at} has two keys that both become the JSON key {key:?}")
            }
            ConvertErrorKind::NonFiniteFloat => {
                write!(f, "{at} is NaN or infinite, which JSON cannot represent")
            }
            ConvertErrorKind::TooDeep => write!(
                f,
                "{at} is nested deeper than {MAX_DEPTH} levels (does an Array or Dictionary contain itself?)"
            ),
            ConvertErrorKind::Unreadable { type_name, detail } => {
                write!(f, "{at} could not be read as {type_name}: {detail}")
            }
        }
    }
}

impl std::error::Error for ConvertError {}

// ---------------------------------------------------------------------------------------------
// Pure helpers (no engine needed; unit-tested in Rust)

/// The path of a child: `parent.key` (or `key` at the top).
pub fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// A float as JSON: always a JSON float (`2.0` stays `2.0`); `None` for NaN and ±∞.
pub fn float_to_json(value: f64) -> Option<Value> {
    Number::from_f64(value).map(Value::Number)
}

/// What a JSON number becomes in Godot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumberKind {
    /// A Godot `int`.
    Int(i64),
    /// A Godot `float`.
    Float(f64),
}

/// Decides what a JSON number becomes: integers stay `int` (unsigned ones above `i64::MAX`
/// become the nearest `float`), floats stay `float`.
pub fn classify_number(n: &Number) -> NumberKind {
    if let Some(i) = n.as_i64() {
        NumberKind::Int(i)
    } else if let Some(u) = n.as_u64() {
        NumberKind::Float(u as f64)
    } else {
        NumberKind::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// The JSON key for a float dictionary key (Rust's shortest round-trip form), `None` when not
/// finite.
pub fn float_key(value: f64) -> Option<String> {
    value.is_finite().then(|| format!("{value}"))
}

// ---------------------------------------------------------------------------------------------
// Godot → JSON

/// Converts a Variant to JSON (see the module docs for the mapping). Never panics.
pub fn variant_to_json(value: &Variant) -> Result<Value, ConvertError> {
    to_json(value, "", 0)
}

/// Converts a Dictionary (typed or untyped) to a JSON object.
pub fn dictionary_to_json(dict: &AnyDictionary) -> Result<Map<String, Value>, ConvertError> {
    dict_to_json(dict, "", 0)
}

/// Converts an Array (typed or untyped) to a JSON array.
pub fn array_to_json(array: &AnyArray) -> Result<Vec<Value>, ConvertError> {
    array_to_json_at(array, "", 0)
}

fn read<T: FromGodot>(value: &Variant, path: &str) -> Result<T, ConvertError> {
    value.try_to::<T>().map_err(|e| {
        ConvertError::new(
            path,
            ConvertErrorKind::Unreadable {
                type_name: value.get_type().godot_type_name().to_string(),
                detail: e.to_string(),
            },
        )
    })
}

fn float(value: f64, path: &str) -> Result<Value, ConvertError> {
    float_to_json(value).ok_or_else(|| ConvertError::new(path, ConvertErrorKind::NonFiniteFloat))
}

fn floats_object(names: &[&str], values: &[f64], path: &str) -> Result<Value, ConvertError> {
    let mut map = Map::new();
    for (name, v) in names.iter().zip(values) {
        map.insert((*name).to_string(), float(*v, &child_path(path, name))?);
    }
    Ok(Value::Object(map))
}

fn ints_object(names: &[&str], values: &[i64]) -> Value {
    Value::Object(
        names
            .iter()
            .zip(values)
            .map(|(name, v)| ((*name).to_string(), Value::from(*v)))
            .collect(),
    )
}

fn vector2(v: Vector2, path: &str) -> Result<Value, ConvertError> {
    floats_object(&["x", "y"], &[f64::from(v.x), f64::from(v.y)], path)
}

fn vector3(v: Vector3, path: &str) -> Result<Value, ConvertError> {
    floats_object(
        &["x", "y", "z"],
        &[f64::from(v.x), f64::from(v.y), f64::from(v.z)],
        path,
    )
}

fn vector4(v: Vector4, path: &str) -> Result<Value, ConvertError> {
    floats_object(
        &["x", "y", "z", "w"],
        &[
            f64::from(v.x),
            f64::from(v.y),
            f64::from(v.z),
            f64::from(v.w),
        ],
        path,
    )
}

fn color(c: Color, path: &str) -> Result<Value, ConvertError> {
    floats_object(
        &["r", "g", "b", "a"],
        &[
            f64::from(c.r),
            f64::from(c.g),
            f64::from(c.b),
            f64::from(c.a),
        ],
        path,
    )
}

fn indexed<T: Copy>(
    items: &[T],
    path: &str,
    f: impl Fn(T, &str) -> Result<Value, ConvertError>,
) -> Result<Value, ConvertError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| f(*item, &child_path(path, &i.to_string())))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn to_json(value: &Variant, path: &str, depth: usize) -> Result<Value, ConvertError> {
    let ty = value.get_type();
    let json = match ty {
        VariantType::NIL => Value::Null,
        VariantType::BOOL => Value::Bool(read::<bool>(value, path)?),
        VariantType::INT => Value::from(read::<i64>(value, path)?),
        VariantType::FLOAT => float(read::<f64>(value, path)?, path)?,
        VariantType::STRING => Value::String(read::<GString>(value, path)?.to_string()),
        VariantType::STRING_NAME => Value::String(read::<StringName>(value, path)?.to_string()),
        VariantType::NODE_PATH => Value::String(read::<NodePath>(value, path)?.to_string()),
        VariantType::ARRAY => Value::Array(array_to_json_at(
            &read::<AnyArray>(value, path)?,
            path,
            depth,
        )?),
        VariantType::DICTIONARY => Value::Object(dict_to_json(
            &read::<AnyDictionary>(value, path)?,
            path,
            depth,
        )?),
        VariantType::VECTOR2 => vector2(read(value, path)?, path)?,
        VariantType::VECTOR3 => vector3(read(value, path)?, path)?,
        VariantType::VECTOR4 => vector4(read(value, path)?, path)?,
        VariantType::VECTOR2I => {
            let v: Vector2i = read(value, path)?;
            ints_object(&["x", "y"], &[v.x.into(), v.y.into()])
        }
        VariantType::VECTOR3I => {
            let v: Vector3i = read(value, path)?;
            ints_object(&["x", "y", "z"], &[v.x.into(), v.y.into(), v.z.into()])
        }
        VariantType::VECTOR4I => {
            let v: Vector4i = read(value, path)?;
            ints_object(
                &["x", "y", "z", "w"],
                &[v.x.into(), v.y.into(), v.z.into(), v.w.into()],
            )
        }
        VariantType::COLOR => color(read(value, path)?, path)?,
        VariantType::PACKED_BYTE_ARRAY => {
            let a: PackedByteArray = read(value, path)?;
            Value::Array(a.as_slice().iter().map(|b| Value::from(*b)).collect())
        }
        VariantType::PACKED_INT32_ARRAY => {
            let a: PackedInt32Array = read(value, path)?;
            Value::Array(a.as_slice().iter().map(|b| Value::from(*b)).collect())
        }
        VariantType::PACKED_INT64_ARRAY => {
            let a: PackedInt64Array = read(value, path)?;
            Value::Array(a.as_slice().iter().map(|b| Value::from(*b)).collect())
        }
        VariantType::PACKED_FLOAT32_ARRAY => {
            let a: PackedFloat32Array = read(value, path)?;
            indexed(a.as_slice(), path, |f, p| float(f64::from(f), p))?
        }
        VariantType::PACKED_FLOAT64_ARRAY => {
            let a: PackedFloat64Array = read(value, path)?;
            indexed(a.as_slice(), path, float)?
        }
        VariantType::PACKED_STRING_ARRAY => {
            let a: PackedStringArray = read(value, path)?;
            Value::Array(
                a.as_slice()
                    .iter()
                    .map(|s| Value::String(s.to_string()))
                    .collect(),
            )
        }
        VariantType::PACKED_VECTOR2_ARRAY => {
            let a: PackedVector2Array = read(value, path)?;
            indexed(a.as_slice(), path, vector2)?
        }
        VariantType::PACKED_VECTOR3_ARRAY => {
            let a: PackedVector3Array = read(value, path)?;
            indexed(a.as_slice(), path, vector3)?
        }
        VariantType::PACKED_VECTOR4_ARRAY => {
            let a: PackedVector4Array = read(value, path)?;
            indexed(a.as_slice(), path, vector4)?
        }
        VariantType::PACKED_COLOR_ARRAY => {
            let a: PackedColorArray = read(value, path)?;
            indexed(a.as_slice(), path, color)?
        }
        other => {
            return Err(ConvertError::new(
                path,
                ConvertErrorKind::Unsupported {
                    type_name: other.godot_type_name().to_string(),
                },
            ));
        }
    };
    Ok(json)
}

fn array_to_json_at(
    array: &AnyArray,
    path: &str,
    depth: usize,
) -> Result<Vec<Value>, ConvertError> {
    if depth >= MAX_DEPTH {
        return Err(ConvertError::new(path, ConvertErrorKind::TooDeep));
    }
    array
        .iter_shared()
        .enumerate()
        .map(|(i, item)| to_json(&item, &child_path(path, &i.to_string()), depth + 1))
        .collect()
}

fn key_to_string(key: &Variant, path: &str) -> Result<String, ConvertError> {
    let ty = key.get_type();
    let unsupported = || {
        ConvertError::new(
            path,
            ConvertErrorKind::UnsupportedKey {
                type_name: ty.godot_type_name().to_string(),
            },
        )
    };
    match ty {
        VariantType::STRING => Ok(read::<GString>(key, path)?.to_string()),
        VariantType::STRING_NAME => Ok(read::<StringName>(key, path)?.to_string()),
        VariantType::NODE_PATH => Ok(read::<NodePath>(key, path)?.to_string()),
        VariantType::INT => Ok(read::<i64>(key, path)?.to_string()),
        VariantType::BOOL => Ok(read::<bool>(key, path)?.to_string()),
        VariantType::FLOAT => float_key(read::<f64>(key, path)?).ok_or_else(unsupported),
        _ => Err(unsupported()),
    }
}

fn dict_to_json(
    dict: &AnyDictionary,
    path: &str,
    depth: usize,
) -> Result<Map<String, Value>, ConvertError> {
    if depth >= MAX_DEPTH {
        return Err(ConvertError::new(path, ConvertErrorKind::TooDeep));
    }
    let mut map = Map::new();
    for (key, value) in dict.iter_shared() {
        let key = key_to_string(&key, path)?;
        let child = child_path(path, &key);
        let json = to_json(&value, &child, depth + 1)?;
        if map.insert(key.clone(), json).is_some() {
            return Err(ConvertError::new(
                path,
                ConvertErrorKind::DuplicateKey { key },
            ));
        }
    }
    Ok(map)
}

// ---------------------------------------------------------------------------------------------
// JSON → Godot

/// Converts JSON to a Variant (see the module docs). Never fails, never panics.
pub fn json_to_variant(value: &Value) -> Variant {
    match value {
        Value::Null => Variant::nil(),
        Value::Bool(b) => b.to_variant(),
        Value::Number(n) => match classify_number(n) {
            NumberKind::Int(i) => i.to_variant(),
            NumberKind::Float(f) => f.to_variant(),
        },
        Value::String(s) => GString::from(s.as_str()).to_variant(),
        Value::Array(items) => json_array_to_godot(items).to_variant(),
        Value::Object(map) => json_object_to_dictionary(map).to_variant(),
    }
}

/// Converts a JSON array to an untyped Godot `Array`.
pub fn json_array_to_godot(items: &[Value]) -> VarArray {
    let mut array = VarArray::new();
    for item in items {
        array.push(&json_to_variant(item));
    }
    array
}

/// Converts a JSON object to an untyped Godot `Dictionary` with `String` keys.
pub fn json_object_to_dictionary(map: &Map<String, Value>) -> VarDictionary {
    let mut dict = VarDictionary::new();
    for (key, value) in map {
        dict.set(
            &GString::from(key.as_str()).to_variant(),
            &json_to_variant(value),
        );
    }
    dict
}

/// Converts any JSON value to a Dictionary: an object as it is, anything else wrapped as
/// `{"value": …}`.
pub fn json_to_dictionary(value: &Value) -> VarDictionary {
    match value {
        Value::Object(map) => json_object_to_dictionary(map),
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other.clone());
            json_object_to_dictionary(&map)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Agent runtime geometry

/// A core [`Position`](agents_core::runtime::Position) as a Godot `Vector2` (f64 → f32).
pub fn position_to_vector2(p: agents_core::runtime::Position) -> Vector2 {
    Vector2::new(p.x as f32, p.y as f32)
}

/// A Godot `Vector2` as a core [`Position`](agents_core::runtime::Position).
pub fn vector2_to_position(v: Vector2) -> agents_core::runtime::Position {
    agents_core::runtime::Position::new(f64::from(v.x), f64::from(v.y))
}

/// A list of strings as a `PackedStringArray`.
pub fn strings_to_packed<S: AsRef<str>>(items: &[S]) -> PackedStringArray {
    items.iter().map(|s| GString::from(s.as_ref())).collect()
}

/// Any serializable value as a Dictionary (through its JSON form, see [`json_to_dictionary`]);
/// a value that does not serialize gives `{"error": "<why>"}` instead of panicking.
pub fn serialize_to_dictionary<T: serde::Serialize>(value: &T) -> VarDictionary {
    match serde_json::to_value(value) {
        Ok(json) => json_to_dictionary(&json),
        Err(e) => {
            let mut map = Map::new();
            map.insert("error".into(), Value::String(e.to_string()));
            json_object_to_dictionary(&map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn child_paths_are_dotted() {
        assert_eq!(child_path("", "moves"), "moves");
        assert_eq!(child_path("moves", "2"), "moves.2");
        assert_eq!(child_path("a.b", "c"), "a.b.c");
    }

    #[test]
    fn whole_floats_stay_floats() {
        let v = float_to_json(2.0).unwrap();
        assert!(v.is_f64());
        assert_eq!(v.to_string(), "2.0");
        assert_eq!(float_to_json(0.5).unwrap(), json!(0.5));
    }

    #[test]
    fn non_finite_floats_have_no_json_form() {
        assert_eq!(float_to_json(f64::NAN), None);
        assert_eq!(float_to_json(f64::INFINITY), None);
        assert_eq!(float_to_json(f64::NEG_INFINITY), None);
    }

    #[test]
    fn integers_stay_integers() {
        let n = |v: Value| match v {
            Value::Number(n) => classify_number(&n),
            _ => unreachable!(),
        };
        assert_eq!(n(json!(3)), NumberKind::Int(3));
        assert_eq!(n(json!(-7)), NumberKind::Int(-7));
        assert_eq!(n(json!(i64::MAX)), NumberKind::Int(i64::MAX));
        assert_eq!(n(json!(3.0)), NumberKind::Float(3.0));
        assert_eq!(n(json!(0.25)), NumberKind::Float(0.25));
        assert_eq!(n(json!(u64::MAX)), NumberKind::Float(u64::MAX as f64));
    }

    #[test]
    fn parsed_json_keeps_the_int_float_distinction() {
        let v: Value = serde_json::from_str(r#"{"a": 1, "b": 1.0}"#).unwrap();
        let Value::Number(a) = &v["a"] else {
            unreachable!()
        };
        let Value::Number(b) = &v["b"] else {
            unreachable!()
        };
        assert_eq!(classify_number(a), NumberKind::Int(1));
        assert_eq!(classify_number(b), NumberKind::Float(1.0));
    }

    #[test]
    fn float_keys() {
        assert_eq!(float_key(1.5).as_deref(), Some("1.5"));
        assert_eq!(float_key(2.0).as_deref(), Some("2"));
        assert_eq!(float_key(f64::NAN), None);
    }

    #[test]
    fn errors_name_the_path() {
        let e = ConvertError::new(
            "args.callback",
            ConvertErrorKind::Unsupported {
                type_name: "Callable".into(),
            },
        );
        let text = e.to_string();
        assert!(
            text.starts_with("'args.callback' is of type Callable"),
            "{text}"
        );
        assert_eq!(e.field_or("(arguments)"), "args.callback");
        let top = ConvertError::new("", ConvertErrorKind::TooDeep);
        assert_eq!(top.field_or("(arguments)"), "(arguments)");
        assert!(top.to_string().contains("deeper than 64"));
    }
}
