//! One registry of tools: definition, validation, dispatch.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::{Map, Value, json};

/// What a tool call produced: the `structuredContent` object, extra human-readable notes, and
/// whether the call failed.
///
/// Every failed output carries at least an `error` (message) field in `structured`; most also
/// carry a machine-readable `reason`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The structured result (always a JSON object).
    pub structured: Value,
    /// Extra text items for the human / LLM reader (for example "No legal moves available; the
    /// game is over."). The serialised `structured` is always the first text item on surfaces
    /// that need text (MCP); these follow it.
    pub notes: Vec<String>,
    /// True when the call failed: an illegal move, an unparsable state, invalid arguments.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(structured: Value) -> Self {
        ToolOutput {
            structured,
            notes: Vec::new(),
            is_error: false,
        }
    }

    /// A failed result; `structured` must contain an `error` field.
    pub fn failed(structured: Value) -> Self {
        debug_assert!(
            structured.get("error").is_some(),
            "failed outputs carry an error field"
        );
        ToolOutput {
            structured,
            notes: Vec::new(),
            is_error: true,
        }
    }

    /// Adds a text note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The text items a text-only surface shows: the structured JSON first, then the notes.
    pub fn text_items(&self) -> Vec<String> {
        let mut items = Vec::with_capacity(1 + self.notes.len());
        items.push(self.structured.to_string());
        items.extend(self.notes.iter().cloned());
        items
    }
}

/// Why a call never reached a tool's handler, or the handler could not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// No tool of that name is registered.
    #[error("Unknown tool: {name}")]
    UnknownTool {
        /// The name that was asked for.
        name: String,
    },
    /// The arguments do not satisfy the tool's input schema.
    #[error("Invalid arguments for {tool}: {field}: {message}")]
    InvalidArguments {
        /// The tool that was called.
        tool: String,
        /// The offending field as a JSON pointer-ish path (`column`, `constraints.size`), or
        /// `(arguments)` when the whole argument value is wrong.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The handler panicked. This is a bug; the registry contains it so it never reaches a caller
    /// as a crash.
    #[error("Internal error in {tool}: {message}")]
    Internal {
        /// The tool that was called.
        tool: String,
        /// The panic message.
        message: String,
    },
}

impl ToolError {
    /// A stable snake_case code for this error.
    pub fn reason(&self) -> &'static str {
        match self {
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::InvalidArguments { .. } => "invalid_args",
            ToolError::Internal { .. } => "internal_error",
        }
    }

    /// The error as a failed [`ToolOutput`], for surfaces that report every outcome as a result
    /// (`structuredContent` `{error, reason, tool, field?}`).
    pub fn to_output(&self) -> ToolOutput {
        let mut obj = Map::new();
        obj.insert("error".into(), Value::String(self.to_string()));
        obj.insert("reason".into(), Value::String(self.reason().into()));
        match self {
            ToolError::UnknownTool { name } => {
                obj.insert("tool".into(), Value::String(name.clone()));
            }
            ToolError::InvalidArguments { tool, field, .. } => {
                obj.insert("tool".into(), Value::String(tool.clone()));
                obj.insert("field".into(), Value::String(field.clone()));
            }
            ToolError::Internal { tool, .. } => {
                obj.insert("tool".into(), Value::String(tool.clone()));
            }
        }
        ToolOutput::failed(Value::Object(obj))
    }
}

/// A registration that could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A tool of that name exists already.
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    /// The input schema is not a valid JSON Schema.
    #[error("the input schema of {tool:?} is invalid: {message}")]
    InvalidSchema {
        /// The tool being registered.
        tool: String,
        /// The validator's complaint.
        message: String,
    },
}

/// The static description of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Unique name (`apply_chess_move`).
    pub name: String,
    /// What the tool does, for the LLM.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub input_schema: Value,
    /// True when the tool only reads (MCP `readOnlyHint`).
    pub read_only: bool,
}

impl ToolSpec {
    /// A spec; mark read-only tools with [`ToolSpec::read_only`].
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema,
            read_only: false,
        }
    }

    /// Marks the tool read-only.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }
}

/// The argument naming a tool's search time budget (see [`Tool::searches`]).
pub const TIME_BUDGET_ARG: &str = "timeMs";

type Handler = dyn Fn(&Value) -> ToolOutput + Send + Sync;

/// A registered tool: its spec, its compiled validator and its handler.
pub struct Tool {
    spec: ToolSpec,
    validator: jsonschema::Validator,
    handler: Arc<Handler>,
    searches: bool,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The tool's description.
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(&self) -> &Value {
        &self.spec.input_schema
    }

    /// True when the tool only reads.
    pub fn is_read_only(&self) -> bool {
        self.spec.read_only
    }

    /// True when a call may search for up to a time budget (the tool takes a `timeMs`
    /// argument: the `suggest_*` AIs). Async callers run such calls on a blocking thread; every
    /// other tool answers in microseconds and can run inline.
    pub fn searches(&self) -> bool {
        self.searches
    }

    /// The definition in the shape LLM chat APIs use: `{name, description, parameters}`.
    pub fn llm_definition(&self) -> Value {
        json!({
            "name": self.spec.name,
            "description": self.spec.description,
            "parameters": self.spec.input_schema,
        })
    }

    /// The definition in MCP's `tools/list` shape:
    /// `{name, description, inputSchema, annotations: {readOnlyHint}}`.
    pub fn mcp_definition(&self) -> Value {
        json!({
            "name": self.spec.name,
            "description": self.spec.description,
            "inputSchema": self.spec.input_schema,
            "annotations": { "readOnlyHint": self.spec.read_only },
        })
    }

    /// Validates `args` against the input schema; the first error names the field.
    pub fn validate(&self, args: &Value) -> Result<(), ToolError> {
        let size = json_size(args);
        if size > crate::limits::MAX_TOOL_ARGUMENTS_BYTES {
            return Err(ToolError::InvalidArguments {
                tool: self.spec.name.clone(),
                field: "(arguments)".into(),
                message: format!(
                    "the arguments are {size} bytes of JSON; the limit is {}",
                    crate::limits::MAX_TOOL_ARGUMENTS_BYTES
                ),
            });
        }
        match self.validator.iter_errors(args).next() {
            None => Ok(()),
            Some(err) => {
                let pointer = err.instance_path().to_string();
                let mut field = pointer
                    .trim_start_matches('/')
                    .replace('/', ".")
                    .replace("~1", "/")
                    .replace("~0", "~");
                // A missing required property is reported at the parent: name the property.
                if let jsonschema::error::ValidationErrorKind::Required { property } = err.kind() {
                    let prop = property
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| property.to_string());
                    field = if field.is_empty() {
                        prop
                    } else {
                        format!("{field}.{prop}")
                    };
                }
                if field.is_empty() {
                    field = "(arguments)".into();
                }
                Err(ToolError::InvalidArguments {
                    tool: self.spec.name.clone(),
                    field,
                    message: err.to_string(),
                })
            }
        }
    }
}

/// The one registry of tools.
///
/// Tools are kept sorted by name, so definition lists are stable.
#[derive(Debug, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Tool>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// A registry holding every game tool of `shared/specs/game-tools.md` plus the built-in AI
    /// tools.
    pub fn with_game_tools() -> Self {
        let mut registry = ToolRegistry::new();
        super::games::register_all(&mut registry);
        registry
    }

    /// Registers a tool. Its schema is compiled once, here.
    pub fn register<F>(&mut self, spec: ToolSpec, handler: F) -> Result<(), RegistryError>
    where
        F: Fn(&Value) -> ToolOutput + Send + Sync + 'static,
    {
        if self.tools.contains_key(&spec.name) {
            return Err(RegistryError::Duplicate(spec.name));
        }
        let validator = jsonschema::validator_for(&spec.input_schema).map_err(|e| {
            RegistryError::InvalidSchema {
                tool: spec.name.clone(),
                message: e.to_string(),
            }
        })?;
        self.tools.insert(
            spec.name.clone(),
            Tool {
                searches: spec.input_schema["properties"]
                    .get(TIME_BUDGET_ARG)
                    .is_some(),
                spec,
                validator,
                handler: Arc::new(handler),
            },
        );
        Ok(())
    }

    /// The tool of that name, if any.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// All tools, sorted by name.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &Tool> {
        self.tools.values()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every definition in the LLM shape (`[{name, description, parameters}]`).
    pub fn llm_definitions(&self) -> Value {
        Value::Array(self.tools().map(Tool::llm_definition).collect())
    }

    /// Every definition in MCP's `tools/list` shape.
    pub fn mcp_definitions(&self) -> Value {
        Value::Array(self.tools().map(Tool::mcp_definition).collect())
    }

    /// Calls a tool: looks it up, validates the arguments (`null` counts as `{}`), runs the
    /// handler. A panicking handler is contained and reported as [`ToolError::Internal`].
    pub fn call(&self, name: &str, args: &Value) -> Result<ToolOutput, ToolError> {
        let tool = self.tools.get(name).ok_or_else(|| ToolError::UnknownTool {
            name: name.to_string(),
        })?;
        let empty;
        let args = if args.is_null() {
            empty = Value::Object(Map::new());
            &empty
        } else {
            args
        };
        tool.validate(args)?;
        catch_unwind(AssertUnwindSafe(|| (tool.handler)(args))).map_err(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            ToolError::Internal {
                tool: name.to_string(),
                message,
            }
        })
    }

    /// Like [`ToolRegistry::call`], but every outcome is a [`ToolOutput`] (errors become failed
    /// outputs with `error` and `reason`).
    pub fn call_to_output(&self, name: &str, args: &Value) -> ToolOutput {
        self.call(name, args).unwrap_or_else(|e| e.to_output())
    }
}

/// The length of `value` as compact JSON, without building the text.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(
            ToolSpec::new(
                "add",
                "Adds two integers.",
                json!({
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer"},
                        "b": {"type": "integer"},
                        "opts": {"type": "object", "properties": {"scale": {"type": "integer", "minimum": 1}}}
                    },
                    "required": ["a", "b"],
                    "additionalProperties": false
                }),
            )
            .read_only(),
            |args| {
                let scale = args.pointer("/opts/scale").and_then(Value::as_i64).unwrap_or(1);
                ToolOutput::ok(json!({"sum": (args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap()) * scale}))
            },
        )
        .unwrap();
        r.register(
            ToolSpec::new("boom", "Panics.", json!({"type": "object"})),
            |_| panic!("kaboom"),
        )
        .unwrap();
        r
    }

    #[test]
    fn valid_call_runs_handler() {
        let out = registry().call("add", &json!({"a": 2, "b": 3})).unwrap();
        assert_eq!(out.structured, json!({"sum": 5}));
        assert!(!out.is_error);
    }

    #[test]
    fn wrong_type_names_field() {
        let err = registry()
            .call("add", &json!({"a": "2", "b": 3}))
            .unwrap_err();
        match err {
            ToolError::InvalidArguments { field, tool, .. } => {
                assert_eq!(field, "a");
                assert_eq!(tool, "add");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn missing_required_names_field() {
        let err = registry().call("add", &json!({"a": 2})).unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "b"),
            "{err:?}"
        );
    }

    #[test]
    fn nested_field_is_named_with_dots() {
        let err = registry()
            .call("add", &json!({"a": 1, "b": 1, "opts": {"scale": 0}}))
            .unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "opts.scale"),
            "{err:?}"
        );
    }

    #[test]
    fn non_object_arguments_are_rejected() {
        let err = registry().call("add", &json!([1, 2])).unwrap_err();
        assert!(
            matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "(arguments)"),
            "{err:?}"
        );
    }

    #[test]
    fn unknown_tool() {
        let err = registry().call("nope", &json!({})).unwrap_err();
        assert_eq!(
            err,
            ToolError::UnknownTool {
                name: "nope".into()
            }
        );
        let out = err.to_output();
        assert!(out.is_error);
        assert_eq!(out.structured["reason"], "unknown_tool");
    }

    #[test]
    fn panics_are_contained() {
        let err = registry().call("boom", &Value::Null).unwrap_err();
        assert!(matches!(err, ToolError::Internal { ref message, .. } if message == "kaboom"));
    }

    #[test]
    fn duplicate_and_bad_schema_rejected() {
        let mut r = registry();
        assert_eq!(
            r.register(ToolSpec::new("add", "", json!({})), |_| ToolOutput::ok(
                json!({})
            )),
            Err(RegistryError::Duplicate("add".into()))
        );
        assert!(matches!(
            r.register(ToolSpec::new("bad", "", json!({"type": 12})), |_| {
                ToolOutput::ok(json!({}))
            }),
            Err(RegistryError::InvalidSchema { .. })
        ));
    }

    #[test]
    fn definitions_have_both_shapes() {
        let r = registry();
        let llm = r.llm_definitions();
        assert_eq!(llm[0]["name"], "add");
        assert!(llm[0]["parameters"]["properties"]["a"].is_object());
        let mcp = r.mcp_definitions();
        assert_eq!(mcp[0]["annotations"]["readOnlyHint"], true);
        assert!(mcp[0]["inputSchema"].is_object());
    }
}
