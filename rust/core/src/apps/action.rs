//! An app's actions, and their parameters as JSON Schema.
//!
//! An action is `{name, description, params, humanOnly, agentOnly}` (the app bridge's shape).
//! `params` is a JSON Schema object, or a shorthand — an object whose values name types:
//!
//! ```json
//! {"row": "int", "col": "int"}
//! ```
//!
//! becomes
//!
//! ```json
//! {"type": "object", "properties": {"row": {"type": "integer"}, "col": {"type": "integer"}},
//!  "required": ["col", "row"], "additionalProperties": false}
//! ```
//!
//! Shorthand types: `int` / `integer`, `number` / `float`, `string`, `bool` / `boolean`. A
//! `params` that has `"type": "object"` or `properties` is a JSON Schema and is kept as it is;
//! it must describe an object. No `params` (or `{}`, or `null`) is an action without arguments.
//! A schema keeps within the bounds of [`super::schema_bounds`] (size, depth, array sizes,
//! string lengths, numeric ranges). A bad `params` is refused when the app sets its actions,
//! naming the action and the field.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The most actions one app may offer at once.
pub const MAX_ACTIONS: usize = 128;

/// One action an app offers: a tool of the agent attached to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActionDef {
    /// The tool's name: letters, digits, `_` and `-`, at most 64 characters.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: String,
    /// Its arguments: a JSON Schema object, or the shorthand (`{"row": "int"}`). Normalized to
    /// a JSON Schema by [`ActionDef::normalized`].
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
    /// Only the human may trigger it.
    #[serde(default, rename = "humanOnly", alias = "human_only")]
    pub human_only: bool,
    /// Only the agent may trigger it.
    #[serde(default, rename = "agentOnly", alias = "agent_only")]
    pub agent_only: bool,
    /// It only reads (a hint, a look at something): its result goes back to the agent within
    /// the same decision, and it changes nothing.
    #[serde(
        default,
        rename = "readOnly",
        alias = "read_only",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub read_only: bool,
    /// The agent must take it now (its move in a turn-based game): while any offered action
    /// is due, the agent's answer must call one of them — after any look-ups (read-only
    /// actions) — or it is sent back for repair, and a `local` model's grammar allows no
    /// other answer. Never read-only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub due: bool,
}

impl ActionDef {
    /// An action without arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ActionDef {
            name: name.into(),
            description: description.into(),
            params: Value::Null,
            human_only: false,
            agent_only: false,
            read_only: false,
            due: false,
        }
    }

    /// The same action with `params` (a JSON Schema or the shorthand).
    pub fn with_params(mut self, params: Value) -> Self {
        self.params = params;
        self
    }

    /// The same action with its `params` as a JSON Schema, checked: a valid name, not both
    /// `humanOnly` and `agentOnly`, parameters that make an object schema. Errors name the
    /// action and the field (`action 'place': params.row: unknown type 'integr' …`).
    pub fn normalized(&self) -> Result<ActionDef, String> {
        check_name(&self.name)?;
        if self.due && (self.read_only || self.human_only) {
            return Err(format!(
                "action '{}': a due action is the agent's to take: it cannot be readOnly or \
                 humanOnly",
                self.name
            ));
        }
        if self.human_only && self.agent_only {
            return Err(format!(
                "action '{}': it cannot be both humanOnly and agentOnly",
                self.name
            ));
        }
        crate::limits::check_chars(
            &format!("action '{}': description", self.name),
            &self.description,
            crate::limits::MAX_TOOL_DESCRIPTION_CHARS,
        )?;
        let params =
            params_schema(&self.params).map_err(|e| format!("action '{}': {e}", self.name))?;
        Ok(ActionDef {
            params,
            ..self.clone()
        })
    }
}

/// Normalizes and checks a list of actions: each as [`ActionDef::normalized`], names unique,
/// at most [`MAX_ACTIONS`].
pub fn normalize_all(actions: &[ActionDef]) -> Result<Vec<ActionDef>, String> {
    if actions.len() > MAX_ACTIONS {
        return Err(format!(
            "actions: {} actions; an app may offer at most {MAX_ACTIONS}",
            actions.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    actions
        .iter()
        .map(|action| {
            if !seen.insert(action.name.as_str()) {
                return Err(format!("actions: '{}' is listed twice", action.name));
            }
            action.normalized()
        })
        .collect()
}

/// Checks a name that becomes a tool name: 1 to 64 letters, digits, `_` or `-`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "action name '{name}': use 1 to 64 letters, digits, '_' or '-' (it becomes a tool \
             name)"
        ))
    }
}

/// `params` as a JSON Schema of an object.
pub fn params_schema(params: &Value) -> Result<Value, String> {
    let object = match params {
        Value::Null => {
            return Ok(json!({"type": "object", "properties": {}, "additionalProperties": false}));
        }
        Value::Object(object) => object,
        other => {
            return Err(format!(
                "params must be an object (a JSON Schema or {{\"field\": \"type\"}}), got {}",
                crate::json_kind::json_kind(other)
            ));
        }
    };
    let is_schema = object.get("type").and_then(Value::as_str) == Some("object")
        || object.get("properties").is_some_and(Value::is_object);
    if is_schema {
        if let Some(kind) = object.get("type")
            && kind != "object"
        {
            return Err(format!(
                "params must describe an object (\"type\": \"object\"), got \"type\": {kind}"
            ));
        }
        super::schema_bounds::check(params)?;
        jsonschema::validator_for(params)
            .map_err(|e| format!("params is not a valid JSON Schema: {e}"))?;
        return Ok(params.clone());
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (field, kind) in object {
        let Some(name) = kind.as_str() else {
            return Err(format!(
                "params.{field}: a shorthand type is a string (int, number, string, bool), got {}; \
                 for anything else give a JSON Schema with \"type\": \"object\"",
                crate::json_kind::json_kind(kind)
            ));
        };
        let json_type = shorthand_type(name).ok_or_else(|| {
            format!("params.{field}: unknown type '{name}' (use int, number, string or bool)")
        })?;
        properties.insert(field.clone(), json!({"type": json_type}));
        required.push(field.clone());
    }
    // In alphabetical order, however the JSON object keeps its keys.
    required.sort_unstable();
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    }))
}

/// The JSON Schema type a shorthand type name stands for.
fn shorthand_type(name: &str) -> Option<&'static str> {
    Some(match name.trim().to_ascii_lowercase().as_str() {
        "int" | "integer" => "integer",
        "number" | "float" => "number",
        "string" | "str" => "string",
        "bool" | "boolean" => "boolean",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_shorthand_becomes_a_schema() {
        // The app bridge's static-mode tool generation.
        let place = ActionDef::new("place", "Place mark")
            .with_params(json!({"row": "int", "col": "int"}))
            .normalized()
            .unwrap();
        assert_eq!(
            place.params,
            json!({"type": "object",
                   "properties": {"row": {"type": "integer"}, "col": {"type": "integer"}},
                   "required": ["col", "row"], "additionalProperties": false})
        );
        let mixed = params_schema(&json!({"name": "string", "price": "float", "gift": "bool",
                                          "n": "integer", "x": "number", "ok": "boolean"}))
        .unwrap();
        let types: Vec<&str> = ["name", "price", "gift", "n", "x", "ok"]
            .iter()
            .map(|f| mixed["properties"][f]["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "string", "number", "boolean", "integer", "number", "boolean"
            ]
        );
    }

    #[test]
    fn schemas_and_empty_params_are_kept() {
        let schema = json!({"type": "object", "properties": {"card": {"type": "string",
                             "enum": ["A", "K"]}}, "required": ["card"]});
        assert_eq!(params_schema(&schema).unwrap(), schema);
        let none = params_schema(&Value::Null).unwrap();
        assert_eq!(none["additionalProperties"], false);
        let empty = params_schema(&json!({})).unwrap();
        assert_eq!(empty["required"], json!([]));
    }

    #[test]
    fn bad_actions_are_named() {
        for (action, says) in [
            (
                ActionDef::new("place", "").with_params(json!({"row": "integr"})),
                "action 'place': params.row: unknown type 'integr' (use int, number, string or bool)",
            ),
            (
                ActionDef::new("place", "").with_params(json!({"row": 3})),
                "action 'place': params.row: a shorthand type is a string",
            ),
            (
                ActionDef::new("place", "").with_params(json!(["row"])),
                "action 'place': params must be an object",
            ),
            (
                // Shorthand for a field named `type`.
                ActionDef::new("place", "").with_params(json!({"type": "array"})),
                "action 'place': params.type: unknown type 'array'",
            ),
            (
                ActionDef::new("place", "").with_params(json!({"properties": {}, "type": "array"})),
                "action 'place': params must describe an object",
            ),
            (
                ActionDef::new("place", "")
                    .with_params(json!({"type": "object", "properties": {"a": {"type": 7}}})),
                "action 'place': params is not a valid JSON Schema",
            ),
            (ActionDef::new("place mark", ""), "action name 'place mark'"),
            (ActionDef::new("", ""), "action name ''"),
            (
                ActionDef {
                    human_only: true,
                    agent_only: true,
                    ..ActionDef::new("both", "")
                },
                "action 'both': it cannot be both humanOnly and agentOnly",
            ),
        ] {
            let e = action.normalized().unwrap_err();
            assert!(e.starts_with(says), "{action:?}: {e}");
        }
        let twice = normalize_all(&[ActionDef::new("a", ""), ActionDef::new("a", "")]);
        assert_eq!(twice.unwrap_err(), "actions: 'a' is listed twice");
    }

    #[test]
    fn flags_read_as_the_spec_writes_them() {
        let action: ActionDef = serde_json::from_value(json!({
            "name": "flee", "description": "Run away", "params": {}, "humanOnly": true
        }))
        .unwrap();
        assert!(action.human_only && !action.agent_only);
        let snake: ActionDef =
            serde_json::from_value(json!({"name": "buy", "agent_only": true})).unwrap();
        assert!(snake.agent_only);
        assert_eq!(
            serde_json::to_value(&snake).unwrap(),
            json!({"name": "buy", "description": "", "humanOnly": false, "agentOnly": true})
        );
    }
}
