//! One registry of tools: definition, validation, dispatch.

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

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
    /// The call was cancelled (its caller was interrupted, terminated or shut down) before the
    /// handler finished.
    #[error("Cancelled: {tool} did not finish")]
    Cancelled {
        /// The tool that was called.
        tool: String,
    },
    /// An asynchronous tool was called through the synchronous [`ToolRegistry::call`].
    #[error("{tool} is asynchronous: call it with call_async")]
    Asynchronous {
        /// The tool that was called.
        tool: String,
    },
    /// The tool set's guard refused the call before its arguments were looked at (an app in
    /// `human` control mode, a `humanOnly` action).
    #[error("{message}")]
    Refused {
        /// The tool that was called.
        tool: String,
        /// Why, as the contract's reason.
        reason: crate::contract::FailureReason,
        /// The text the caller is told ("Human is in control").
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
    /// The code of this error.
    pub fn code(&self) -> crate::error_code::ErrorCode {
        use crate::error_code::ErrorCode;
        match self {
            ToolError::UnknownTool { .. } => ErrorCode::UnknownTool,
            ToolError::InvalidArguments { .. } => ErrorCode::InvalidArgs,
            ToolError::Cancelled { .. } => ErrorCode::Cancelled,
            ToolError::Refused { reason, .. } => reason.code(),
            ToolError::Asynchronous { .. } | ToolError::Internal { .. } => ErrorCode::InternalError,
        }
    }

    /// A stable snake_case code for this error (the wire name of [`ToolError::code`]).
    pub fn reason(&self) -> &'static str {
        self.code().as_str()
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
            ToolError::Internal { tool, .. }
            | ToolError::Refused { tool, .. }
            | ToolError::Cancelled { tool }
            | ToolError::Asynchronous { tool } => {
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
    /// True when a call may take long (a search up to a time budget, the `suggest_*` AIs; the
    /// file I/O of the GM tools on campaign files):
    /// [`ToolRegistry::call_async`] runs it on a blocking thread, servers keep it off their
    /// async workers. Every other synchronous tool answers in microseconds and runs inline.
    pub searches: bool,
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
            searches: false,
        }
    }

    /// Marks the tool read-only.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Marks the tool as searching (see [`ToolSpec::searches`]).
    pub fn searches(mut self) -> Self {
        self.searches = true;
        self
    }
}

/// The argument naming a tool's search time budget (`timeMs`, on the `suggest_*` AIs).
pub const TIME_BUDGET_ARG: &str = "timeMs";

/// Who is calling a tool, and how to stop.
///
/// Front ends without a caller of their own (MCP, the CLI, a WebSocket `call_tool`) use
/// [`ToolContext::anonymous`]; an agent's calls carry its id and session, and the agent's
/// cancellation (an interruption, `terminate`, shutdown).
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    /// The calling agent, if an agent calls.
    pub agent_id: Option<String>,
    /// The session the call belongs to (a game, an app, a campaign), if any.
    pub session: Option<String>,
    /// Cancelled when the caller no longer wants the answer; async handlers should stop then,
    /// and [`ToolRegistry::call_async`] stops waiting for them.
    pub cancel: CancellationToken,
}

impl ToolContext {
    /// A call with no agent and no session that is never cancelled.
    pub fn anonymous() -> Self {
        ToolContext::default()
    }

    /// A call made by `agent_id`, cancelled with `cancel`.
    pub fn for_agent(agent_id: impl Into<String>, cancel: CancellationToken) -> Self {
        ToolContext {
            agent_id: Some(agent_id.into()),
            session: None,
            cancel,
        }
    }

    /// The same context within `session`.
    pub fn in_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }
}

/// A boxed tool future.
pub type ToolFuture = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'static>>;

type SyncHandler = dyn Fn(&Value, &ToolContext) -> ToolOutput + Send + Sync;
type AsyncHandler = dyn Fn(Value, ToolContext) -> ToolFuture + Send + Sync;

/// How a tool answers: at once, or as a future.
#[derive(Clone)]
enum Handler {
    Sync(Arc<SyncHandler>),
    Async(Arc<AsyncHandler>),
}

/// A registered tool: its spec, its compiled validator and its handler. Clones share the
/// validator and the handler.
#[derive(Clone)]
pub struct Tool {
    spec: ToolSpec,
    validator: Arc<jsonschema::Validator>,
    handler: Handler,
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

    /// True when a call may take long ([`ToolSpec::searches`]).
    pub fn searches(&self) -> bool {
        self.spec.searches
    }

    /// True when the handler is asynchronous (callable only through
    /// [`ToolRegistry::call_async`]).
    pub fn is_async(&self) -> bool {
        matches!(self.handler, Handler::Async(_))
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
                    message: crate::json_kind::schema_error_text(&err),
                })
            }
        }
    }
}

/// A guard's refusal: the contract's reason and the text the caller is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Why (`human_in_control`, `human_only`, `tool_not_allowed`).
    pub reason: crate::contract::FailureReason,
    /// What the caller is told ("Human is in control").
    pub message: String,
}

/// Who may call a registry's tools right now, checked before the arguments (the first failure
/// wins: the guard, then the schema). An app guards its actions with its control mode and the
/// actions' `humanOnly` flags; a tool set without a guard lets every caller through.
///
/// A guard answers from state that changes while agents decide, so it is asked twice: when an
/// agent's answer is checked (a refusal goes back to the brain as failure feedback) and again
/// when the call runs.
pub trait ToolGuard: Send + Sync {
    /// Whether the caller in `ctx` may call `tool` now.
    fn permit(&self, tool: &str, ctx: &ToolContext) -> Result<(), Refusal>;

    /// What a caller attached to this set is told about a tool that no attached set has (an
    /// app: "Action not available"); `None` leaves the generic message.
    fn unknown(&self, _tool: &str) -> Option<Refusal> {
        None
    }
}

/// The one registry of tools.
///
/// Tools are kept sorted by name, so definition lists are stable.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Tool>,
    guard: Option<Arc<dyn ToolGuard>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("guarded", &self.guard.is_some())
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Registers a synchronous tool that does not need to know its caller. Its schema is
    /// compiled once, here.
    pub fn register<F>(&mut self, spec: ToolSpec, handler: F) -> Result<(), RegistryError>
    where
        F: Fn(&Value) -> ToolOutput + Send + Sync + 'static,
    {
        self.insert(spec, Handler::Sync(Arc::new(move |args, _| handler(args))))
    }

    /// Registers a synchronous tool whose handler reads the [`ToolContext`] (who calls, in which
    /// session).
    pub fn register_with_context<F>(
        &mut self,
        spec: ToolSpec,
        handler: F,
    ) -> Result<(), RegistryError>
    where
        F: Fn(&Value, &ToolContext) -> ToolOutput + Send + Sync + 'static,
    {
        self.insert(spec, Handler::Sync(Arc::new(handler)))
    }

    /// Registers an asynchronous tool (it waits on something: a game's main thread, a network,
    /// another agent). Callable through [`ToolRegistry::call_async`] only.
    pub fn register_async<F, Fut>(
        &mut self,
        spec: ToolSpec,
        handler: F,
    ) -> Result<(), RegistryError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutput> + Send + 'static,
    {
        self.insert(
            spec,
            Handler::Async(Arc::new(move |args, ctx| Box::pin(handler(args, ctx)))),
        )
    }

    fn insert(&mut self, spec: ToolSpec, handler: Handler) -> Result<(), RegistryError> {
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
                spec,
                validator: Arc::new(validator),
                handler,
            },
        );
        Ok(())
    }

    /// A registry of the tools `keep` accepts, sharing their validators, handlers and this
    /// registry's guard (an app offers its agent the actions the agent may use now).
    pub fn subset(&self, mut keep: impl FnMut(&Tool) -> bool) -> ToolRegistry {
        ToolRegistry {
            tools: self
                .tools
                .iter()
                .filter(|(_, tool)| keep(tool))
                .map(|(name, tool)| (name.clone(), tool.clone()))
                .collect(),
            guard: self.guard.clone(),
        }
    }

    /// Guards every call of this registry's tools ([`ToolGuard`]).
    pub fn set_guard(&mut self, guard: Arc<dyn ToolGuard>) {
        self.guard = Some(guard);
    }

    /// The guard, if any.
    pub fn guard(&self) -> Option<&dyn ToolGuard> {
        self.guard.as_deref()
    }

    /// Asks the guard whether the caller in `ctx` may call `tool` now.
    pub fn permit(&self, tool: &str, ctx: &ToolContext) -> Result<(), ToolError> {
        match &self.guard {
            None => Ok(()),
            Some(guard) => guard.permit(tool, ctx).map_err(|r| ToolError::Refused {
                tool: tool.to_string(),
                reason: r.reason,
                message: r.message,
            }),
        }
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

    /// Looks a tool up, asks the guard, and validates the arguments (`null` counts as `{}`).
    fn prepare(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<(&Tool, Value), ToolError> {
        let tool = self.tools.get(name).ok_or_else(|| ToolError::UnknownTool {
            name: name.to_string(),
        })?;
        self.permit(name, ctx)?;
        let args = if args.is_null() {
            Value::Object(Map::new())
        } else {
            args
        };
        tool.validate(&args)?;
        Ok((tool, args))
    }

    /// Calls a synchronous tool with no caller ([`ToolContext::anonymous`]): looks it up,
    /// validates the arguments (`null` counts as `{}`), runs the handler. A panicking handler is
    /// contained and reported as [`ToolError::Internal`]; an asynchronous tool is
    /// [`ToolError::Asynchronous`].
    pub fn call(&self, name: &str, args: &Value) -> Result<ToolOutput, ToolError> {
        self.call_with(name, args, &ToolContext::anonymous())
    }

    /// [`ToolRegistry::call`] with a caller's context.
    pub fn call_with(
        &self,
        name: &str,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let tool = self.tools.get(name).ok_or_else(|| ToolError::UnknownTool {
            name: name.to_string(),
        })?;
        self.permit(name, ctx)?;
        let empty;
        let args = if args.is_null() {
            empty = Value::Object(Map::new());
            &empty
        } else {
            args
        };
        tool.validate(args)?;
        match &tool.handler {
            Handler::Sync(handler) => contain(name, || handler(args, ctx)),
            Handler::Async(_) => Err(ToolError::Asynchronous {
                tool: name.to_string(),
            }),
        }
    }

    /// Calls any tool from async code: validates, then runs a synchronous handler inline (on a
    /// blocking thread when the tool [searches](ToolSpec::searches)) or awaits an asynchronous
    /// one. Stops waiting with [`ToolError::Cancelled`] when `ctx.cancel` fires; panics are
    /// contained as [`ToolError::Internal`].
    pub async fn call_async(
        &self,
        name: &str,
        args: Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (tool, args) = self.prepare(name, args, &ctx)?;
        let cancel = ctx.cancel.clone();
        let cancelled = || ToolError::Cancelled {
            tool: name.to_string(),
        };
        let internal = |message: String| ToolError::Internal {
            tool: name.to_string(),
            message,
        };
        match tool.handler.clone() {
            Handler::Sync(handler) if !tool.spec.searches => contain(name, || handler(&args, &ctx)),
            Handler::Sync(handler) => {
                let owned = name.to_string();
                let run =
                    tokio::task::spawn_blocking(move || contain(&owned, || handler(&args, &ctx)));
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Err(cancelled()),
                    joined = run => joined.map_err(|e| internal(e.to_string()))?,
                }
            }
            Handler::Async(handler) => {
                let run = AssertUnwindSafe(handler(args, ctx)).catch_unwind();
                tokio::select! {
                    biased;
                    _ = cancel.cancelled() => Err(cancelled()),
                    result = run => result.map_err(|panic| internal(panic_message(&*panic))),
                }
            }
        }
    }

    /// Like [`ToolRegistry::call`], but every outcome is a [`ToolOutput`] (errors become failed
    /// outputs with `error` and `reason`).
    pub fn call_to_output(&self, name: &str, args: &Value) -> ToolOutput {
        self.call(name, args).unwrap_or_else(|e| e.to_output())
    }
}

/// Runs a handler, turning a panic into [`ToolError::Internal`].
fn contain(tool: &str, run: impl FnOnce() -> ToolOutput) -> Result<ToolOutput, ToolError> {
    catch_unwind(AssertUnwindSafe(run)).map_err(|panic| ToolError::Internal {
        tool: tool.to_string(),
        message: panic_message(&*panic),
    })
}

/// The text of a caught panic (its `&str` or `String` payload), else `panic`.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
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

    fn context_registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register_with_context(
            ToolSpec::new("whoami", "Who calls.", json!({"type": "object"})).read_only(),
            |_, ctx| ToolOutput::ok(json!({"agent": ctx.agent_id, "session": ctx.session})),
        )
        .unwrap();
        r.register_async(
            ToolSpec::new(
                "later",
                "Answers after `ms` milliseconds.",
                json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}},
                       "required": ["ms"]}),
            ),
            |args, ctx| async move {
                let ms = args["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                ToolOutput::ok(json!({"waited": ms, "agent": ctx.agent_id}))
            },
        )
        .unwrap();
        r.register_async(
            ToolSpec::new("async_boom", "Panics.", json!({"type": "object"})),
            |_, _| async { panic!("async kaboom") },
        )
        .unwrap();
        r.register(
            ToolSpec::new("search", "Reports its thread.", json!({"type": "object"})).searches(),
            |_| {
                let id = format!("{:?}", std::thread::current().id());
                ToolOutput::ok(json!({"thread": id}))
            },
        )
        .unwrap();
        r
    }

    #[test]
    fn handlers_see_their_caller() {
        let r = context_registry();
        let anonymous = r.call("whoami", &Value::Null).unwrap();
        assert_eq!(
            anonymous.structured,
            json!({"agent": null, "session": null})
        );
        let ctx = ToolContext::for_agent("agent_007", CancellationToken::new()).in_session("g1");
        let out = r.call_with("whoami", &json!({}), &ctx).unwrap();
        assert_eq!(
            out.structured,
            json!({"agent": "agent_007", "session": "g1"})
        );
    }

    #[test]
    fn async_tools_need_call_async() {
        let r = context_registry();
        assert!(r.get("later").unwrap().is_async());
        let err = r.call("later", &json!({"ms": 0})).unwrap_err();
        assert_eq!(
            err,
            ToolError::Asynchronous {
                tool: "later".into()
            }
        );
        assert_eq!(err.reason(), "internal_error");
    }

    #[tokio::test(start_paused = true)]
    async fn call_async_runs_validates_cancels_and_contains_panics() {
        let r = context_registry();
        let ctx = ToolContext::for_agent("agent_001", CancellationToken::new());
        let out = r
            .call_async("later", json!({"ms": 50}), ctx.clone())
            .await
            .unwrap();
        assert_eq!(out.structured, json!({"waited": 50, "agent": "agent_001"}));
        // Validation happens before the handler, as for synchronous calls.
        let err = r
            .call_async("later", json!({"ms": -1}), ctx.clone())
            .await
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments { ref field, .. } if field == "ms"));
        // Sync tools work through call_async too.
        let out = r
            .call_async("whoami", Value::Null, ctx.clone())
            .await
            .unwrap();
        assert_eq!(out.structured["agent"], "agent_001");
        // Cancellation stops the wait.
        let cancel = CancellationToken::new();
        let waiting = r.call_async(
            "later",
            json!({"ms": 60_000}),
            ToolContext::for_agent("agent_001", cancel.clone()),
        );
        let cancelling = async {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            cancel.cancel();
        };
        let (result, ()) = tokio::join!(waiting, cancelling);
        assert_eq!(
            result.unwrap_err(),
            ToolError::Cancelled {
                tool: "later".into()
            }
        );
        // A panicking async handler is an internal error, not a crash.
        let err = r
            .call_async("async_boom", json!({}), ctx)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ToolError::Internal { ref message, .. } if message == "async kaboom")
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn searching_tools_run_off_the_async_workers() {
        let r = context_registry();
        let here = format!("{:?}", std::thread::current().id());
        let out = r
            .call_async("search", json!({}), ToolContext::anonymous())
            .await
            .unwrap();
        // The handler ran on the blocking pool, not on the thread awaiting it.
        assert_ne!(out.structured["thread"], here.as_str());
        let inline = r.call("search", &json!({})).unwrap();
        assert_eq!(inline.structured["thread"], here.as_str());
    }
}
