//! World actions as tools: `move`, `wait`, `speak`, `collaborate` and `complete_task`.
//!
//! A brain asks for world actions with the tool-call contract, exactly as it would call any other
//! tool, so an LLM backend sees them in its tool list ([`world_tool_definitions`]). The registry
//! ([`world_tools`]) holds their JSON Schemas; [`parse_action`] validates a call through the
//! registry's one validation path and turns it into an [`Action`].
//!
//! The registry's handlers do **not** act on the world: they return the validated arguments as
//! their structured output. The runtime executes world actions itself (it owns positions, the bus
//! and memory), after checking what the schema cannot express (for example that a `move` target
//! lies inside the world bounds, or that `collaborate` names a running agent).
//!
//! The schemas here are the static form, listed wherever no agent is deciding. A decision
//! offers them grounded in what exists then ([`ground`]): the ids of the agents and tasks that
//! exist, the world bounds; its answer is checked against those ([`parse_with`]).

pub mod ground;

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::contract::ToolCall;
use crate::tools::{ToolError, ToolOutput, ToolRegistry, ToolSpec};

/// Name of the `move` tool.
pub const MOVE: &str = "move";
/// Name of the `wait` tool.
pub const WAIT: &str = "wait";
/// Name of the `speak` tool.
pub const SPEAK: &str = "speak";
/// Name of the `collaborate` tool.
pub const COLLABORATE: &str = "collaborate";
/// Name of the `complete_task` tool.
pub const COMPLETE_TASK: &str = "complete_task";

/// The kinds of line `speak` names in its `dialog_type` (any other short string is allowed and
/// passed on): answering someone, chatting, a progress report on a task, asking or agreeing to
/// help, talking to no one in particular. The tool's description lists them.
pub const DIALOG_TYPES: [&str; 5] = ["reply", "chat", "task_update", "collaboration", "monologue"];

/// Longest `wait`, in seconds.
pub const MAX_WAIT_SECONDS: f64 = 3600.0;
/// Longest `speak` content, in characters.
pub use crate::limits::MAX_SPEAK_CHARS;
/// Most `speak` recipients.
pub const MAX_RECIPIENTS: usize = 50;
/// Longest `collaborate` task name, in characters (the runtime's task name limit).
pub use crate::limits::MAX_TASK_NAME_CHARS;
/// Longest `collaborate` message, in characters.
pub const MAX_COLLABORATE_MESSAGE_CHARS: usize = 1000;
/// Longest `speak` dialog type, in characters.
pub use crate::limits::MAX_DIALOG_TYPE_CHARS;

/// A validated world action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Move to `(x, y)` (must be inside the world bounds).
    Move {
        /// Target x.
        x: f64,
        /// Target y.
        y: f64,
    },
    /// Stay idle; the next autonomous decision comes after `seconds` (default: the idle time).
    Wait {
        /// Seconds to wait.
        seconds: Option<f64>,
    },
    /// Say something.
    Speak {
        /// The line.
        content: String,
        /// Who to (default: whoever is being answered, else nearby agents).
        recipients: Option<Vec<String>>,
        /// Kind of line.
        dialog_type: Option<String>,
    },
    /// Ask another agent to help with a task (it gets the task assigned).
    Collaborate {
        /// The helper.
        agent_id: String,
        /// The task (default: the asker's current task).
        task_name: Option<String>,
        /// What to say when asking.
        message: Option<String>,
    },
    /// Mark a task completed (default: the current task).
    CompleteTask {
        /// The task id.
        task_id: Option<i64>,
    },
}

impl Action {
    /// The name of the tool this action comes from (`move`, `wait`, …).
    pub fn tool_name(&self) -> &'static str {
        match self {
            Action::Move { .. } => MOVE,
            Action::Wait { .. } => WAIT,
            Action::Speak { .. } => SPEAK,
            Action::Collaborate { .. } => COLLABORATE,
            Action::CompleteTask { .. } => COMPLETE_TASK,
        }
    }
}

/// The five world tools' [`ToolSpec`]s, in registration order.
fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            MOVE,
            "Walk to an absolute position in the world. `x` and `y` are world coordinates (not \
             an offset from where you stand) and must lie inside the world bounds given in your \
             context; a target outside them is refused. Use it to approach someone you want to \
             talk to or to go somewhere for your task.",
            json!({
                "type": "object",
                "properties": {
                    "x": {"type": "number", "description": "Target x coordinate (absolute)."},
                    "y": {"type": "number", "description": "Target y coordinate (absolute)."}
                },
                "required": ["x", "y"],
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            WAIT,
            "Do nothing for a while. Your next decision of your own comes after `seconds` \
             (default: your usual idle time); a message to you still wakes you up earlier.",
            json!({
                "type": "object",
                "properties": {
                    "seconds": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": MAX_WAIT_SECONDS,
                        "description": "How long to wait, 0 to 3600 seconds."
                    }
                },
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            SPEAK,
            "Say a line out loud. `recipients` are agent ids (or the player's id); without \
             them you speak to whoever you are answering, else to the agents near you; an \
             empty list talks to no one in particular. `dialog_type` says what kind of line it \
             is: `reply`, `chat`, `task_update`, `collaboration` or `monologue`. Call it last: \
             while you speak you can do nothing else, so no call may follow it in one answer.",
            json!({
                "type": "object",
                "properties": {
                    "content": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_SPEAK_CHARS,
                        "description": "What to say (1 to 1000 characters)."
                    },
                    "recipients": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "maxItems": MAX_RECIPIENTS,
                        "description": "Ids of who you are talking to (at most 50)."
                    },
                    "dialog_type": {
                        "type": "string",
                        "maxLength": MAX_DIALOG_TYPE_CHARS,
                        "description": "Kind of line: reply, chat, task_update, collaboration, monologue."
                    }
                },
                "required": ["content"],
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            COLLABORATE,
            "Ask another agent to help you with a task; the task is assigned to them too. \
             `agent_id` is who you ask, `task_name` the task (default: your current task), \
             `message` what you say when asking.",
            json!({
                "type": "object",
                "properties": {
                    "agent_id": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Id of the agent to ask (for example agent_002)."
                    },
                    "task_name": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_TASK_NAME_CHARS,
                        "description": "The task to share (1 to 200 characters)."
                    },
                    "message": {
                        "type": "string",
                        "maxLength": MAX_COLLABORATE_MESSAGE_CHARS,
                        "description": "What to say when asking (at most 1000 characters)."
                    }
                },
                "required": ["agent_id"],
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            COMPLETE_TASK,
            "Mark one of your tasks as completed. `task_id` is the task's id (default: your \
             current task).",
            json!({
                "type": "object",
                "properties": {
                    "task_id": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Id of the task to complete."
                    }
                },
                "additionalProperties": false
            }),
        ),
    ]
}

/// A new registry of the world tools (`move`, `wait`, `speak`, `collaborate`, `complete_task`).
///
/// Each handler returns its (validated) arguments as the structured output and does nothing
/// else: the runtime executes world actions itself (see the module docs).
pub fn world_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for spec in specs() {
        // The schemas above are constants; a failure here is a bug caught by the tests.
        registry
            .register(spec, |args| ToolOutput::ok(args.clone()))
            .expect("world tool schemas are valid and their names unique");
    }
    registry
}

/// The registry of world tools, built once ([`world_registry`]).
pub fn world_tools() -> &'static ToolRegistry {
    static REGISTRY: OnceLock<ToolRegistry> = OnceLock::new();
    REGISTRY.get_or_init(world_registry)
}

/// The world tools in the LLM shape (`[{name, description, parameters}]`, sorted by name), for
/// [`crate::brain::BrainContext::tools`].
pub fn world_tool_definitions() -> Vec<Value> {
    // Built once: every decision of every agent puts them in its context.
    static DEFINITIONS: OnceLock<Vec<Value>> = OnceLock::new();
    DEFINITIONS
        .get_or_init(|| world_tools().tools().map(|t| t.llm_definition()).collect())
        .clone()
}

/// Validates a tool call against the static [`world_tools`] and turns it into an [`Action`]
/// ([`parse_with`]). Bounds and ids are not checked here: the runtime does that.
pub fn parse_action(call: &ToolCall) -> Result<Action, ToolError> {
    parse_with(world_tools(), call)
}

/// Validates a tool call against `registry` (the world tools, static or grounded:
/// [`ground::Ground::registry`]) and turns it into an [`Action`].
///
/// Missing arguments (`null`) count as `{}`. Errors: [`ToolError::UnknownTool`] for a name that is
/// not a world tool of `registry`; [`ToolError::InvalidArguments`] naming the offending field when
/// the arguments do not satisfy the tool's schema (the registry's validation, see
/// [`crate::tools::Tool::validate`]); for a grounded field naming what does not exist, its
/// message says what exists ([`ground::explain`]).
pub fn parse_with(registry: &ToolRegistry, call: &ToolCall) -> Result<Action, ToolError> {
    let tool = registry
        .get(&call.tool)
        .ok_or_else(|| ToolError::UnknownTool {
            name: call.tool.clone(),
        })?;
    let empty = Value::Object(Map::new());
    let args = if call.args.is_null() {
        &empty
    } else {
        &call.args
    };
    tool.validate(args).map_err(|e| match e {
        ToolError::InvalidArguments {
            tool: name,
            field,
            message,
        } => {
            let message =
                ground::explain(&name, tool.input_schema(), args, &field).unwrap_or(message);
            ToolError::InvalidArguments {
                tool: name,
                field,
                message,
            }
        }
        other => other,
    })?;
    // The schema guarantees an object with well-typed fields; the readers below still report a
    // field error rather than panic should the two ever disagree.
    let fields = Fields {
        tool: tool.name(),
        args,
    };
    let action = match tool.name() {
        MOVE => Action::Move {
            x: fields.number("x")?.unwrap_or_default(),
            y: fields.number("y")?.unwrap_or_default(),
        },
        WAIT => Action::Wait {
            seconds: fields.number("seconds")?,
        },
        SPEAK => Action::Speak {
            content: fields.string("content")?.unwrap_or_default(),
            recipients: fields.strings("recipients")?,
            dialog_type: fields.string("dialog_type")?,
        },
        COLLABORATE => Action::Collaborate {
            agent_id: fields.string("agent_id")?.unwrap_or_default(),
            task_name: fields.string("task_name")?,
            message: fields.string("message")?,
        },
        COMPLETE_TASK => Action::CompleteTask {
            task_id: fields.integer("task_id")?,
        },
        other => {
            return Err(ToolError::UnknownTool {
                name: other.to_string(),
            });
        }
    };
    Ok(action)
}

/// Typed reads of validated arguments.
struct Fields<'a> {
    tool: &'a str,
    args: &'a Value,
}

impl Fields<'_> {
    fn invalid(&self, field: &str, message: &str) -> ToolError {
        ToolError::InvalidArguments {
            tool: self.tool.to_string(),
            field: field.to_string(),
            message: message.to_string(),
        }
    }

    fn number(&self, field: &str) -> Result<Option<f64>, ToolError> {
        match self.args.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|n| n.is_finite())
                .map(Some)
                .ok_or_else(|| self.invalid(field, "expected a finite number")),
        }
    }

    fn integer(&self, field: &str) -> Result<Option<i64>, ToolError> {
        match self.args.get(field) {
            None => Ok(None),
            Some(v) => {
                if let Some(i) = v.as_i64() {
                    return Ok(Some(i));
                }
                // JSON Schema counts 3.0 as an integer.
                match v.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
                    _ => Err(self.invalid(field, "expected an integer")),
                }
            }
        }
    }

    fn string(&self, field: &str) -> Result<Option<String>, ToolError> {
        match self.args.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.invalid(field, "expected a string")),
        }
    }

    fn strings(&self, field: &str) -> Result<Option<Vec<String>>, ToolError> {
        match self.args.get(field) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    item.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| self.invalid(&format!("{field}.{i}"), "expected a string"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(self.invalid(field, "expected an array of strings")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "call_001".into(),
            tool: tool.into(),
            args,
            reason: None,
        }
    }

    fn field_error(tool: &str, args: Value) -> String {
        match parse_action(&call(tool, args.clone())) {
            Err(ToolError::InvalidArguments { tool: t, field, .. }) => {
                assert_eq!(t, tool);
                field
            }
            other => panic!("{tool} {args}: expected InvalidArguments, got {other:?}"),
        }
    }

    #[test]
    fn registry_has_the_five_tools_with_strict_schemas() {
        let names: Vec<&str> = world_tools().tools().map(|t| t.name()).collect();
        assert_eq!(
            names,
            ["collaborate", "complete_task", "move", "speak", "wait"]
        );
        for tool in world_tools().tools() {
            let schema = tool.input_schema();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name());
            assert!(tool.description().len() > 40, "{}", tool.name());
            assert!(!tool.is_read_only());
        }
        let defs = world_tool_definitions();
        assert_eq!(defs.len(), 5);
        assert_eq!(defs[2]["name"], "move");
        assert_eq!(defs[2]["parameters"]["required"], json!(["x", "y"]));
        assert!(
            defs[3]["description"]
                .as_str()
                .unwrap()
                .contains("recipients")
        );
        // The model is told every dialog type (in the description and in the field's).
        let speak = world_tools().get(SPEAK).unwrap();
        let field = speak.input_schema()["properties"]["dialog_type"]["description"].clone();
        for kind in DIALOG_TYPES {
            assert!(speak.description().contains(kind), "{kind}");
            assert!(field.as_str().unwrap().contains(kind), "{kind}");
        }
    }

    #[test]
    fn handlers_echo_the_validated_arguments() {
        let out = world_tools()
            .call("move", &json!({"x": 3, "y": 4.5}))
            .unwrap();
        assert!(!out.is_error);
        assert_eq!(out.structured, json!({"x": 3, "y": 4.5}));
        let out = world_tools().call("wait", &Value::Null).unwrap();
        assert_eq!(out.structured, json!({}));
    }

    #[test]
    fn move_parses() {
        assert_eq!(
            parse_action(&call("move", json!({"x": 12, "y": -3.5}))).unwrap(),
            Action::Move { x: 12.0, y: -3.5 }
        );
        assert_eq!(field_error("move", json!({"x": 1})), "y");
        assert_eq!(field_error("move", json!({"y": 1})), "x");
        assert_eq!(field_error("move", json!({"x": "1", "y": 2})), "x");
        assert_eq!(field_error("move", json!({"x": 1, "y": null})), "y");
        assert_eq!(
            field_error("move", json!({"x": 1, "y": 2, "z": 3})),
            "(arguments)"
        );
        assert_eq!(field_error("move", Value::Null), "x");
        assert_eq!(field_error("move", json!([1, 2])), "(arguments)");
    }

    #[test]
    fn wait_parses() {
        assert_eq!(
            parse_action(&call("wait", json!({"seconds": 2.5}))).unwrap(),
            Action::Wait { seconds: Some(2.5) }
        );
        assert_eq!(
            parse_action(&call("wait", json!({}))).unwrap(),
            Action::Wait { seconds: None }
        );
        assert_eq!(
            parse_action(&call("wait", Value::Null)).unwrap(),
            Action::Wait { seconds: None }
        );
        assert_eq!(
            parse_action(&call("wait", json!({"seconds": 3600}))).unwrap(),
            Action::Wait {
                seconds: Some(3600.0)
            }
        );
        assert_eq!(field_error("wait", json!({"seconds": -1})), "seconds");
        assert_eq!(field_error("wait", json!({"seconds": 3600.5})), "seconds");
        assert_eq!(field_error("wait", json!({"seconds": "5"})), "seconds");
        assert_eq!(field_error("wait", json!({"minutes": 5})), "(arguments)");
    }

    #[test]
    fn speak_parses() {
        assert_eq!(
            parse_action(&call(
                "speak",
                json!({"content": "Hello", "recipients": ["agent_002", "player_0"], "dialog_type": "chat"})
            ))
            .unwrap(),
            Action::Speak {
                content: "Hello".into(),
                recipients: Some(vec!["agent_002".into(), "player_0".into()]),
                dialog_type: Some("chat".into()),
            }
        );
        assert_eq!(
            parse_action(&call("speak", json!({"content": "Hm.", "recipients": []}))).unwrap(),
            Action::Speak {
                content: "Hm.".into(),
                recipients: Some(vec![]),
                dialog_type: None,
            }
        );
        // 1000 characters (not bytes) is the limit.
        let long = "é".repeat(1000);
        assert!(parse_action(&call("speak", json!({ "content": long }))).is_ok());
        assert_eq!(
            field_error("speak", json!({"content": "é".repeat(1001)})),
            "content"
        );
        assert_eq!(field_error("speak", json!({"content": ""})), "content");
        assert_eq!(
            field_error("speak", json!({"recipients": ["a"]})),
            "content"
        );
        assert_eq!(field_error("speak", json!({"content": 5})), "content");
        assert_eq!(
            field_error("speak", json!({"content": "x", "recipients": "agent_002"})),
            "recipients"
        );
        assert_eq!(
            field_error("speak", json!({"content": "x", "recipients": ["a", 7]})),
            "recipients.1"
        );
        let many: Vec<String> = (0..51).map(|i| format!("agent_{i:03}")).collect();
        assert_eq!(
            field_error("speak", json!({"content": "x", "recipients": many})),
            "recipients"
        );
        assert_eq!(
            field_error("speak", json!({"content": "x", "dialog_type": 1})),
            "dialog_type"
        );
        assert_eq!(
            field_error("speak", json!({"content": "x", "to": ["a"]})),
            "(arguments)"
        );
    }

    #[test]
    fn collaborate_parses() {
        assert_eq!(
            parse_action(&call(
                "collaborate",
                json!({"agent_id": "agent_002", "task_name": "Bake bread", "message": "Help?"})
            ))
            .unwrap(),
            Action::Collaborate {
                agent_id: "agent_002".into(),
                task_name: Some("Bake bread".into()),
                message: Some("Help?".into()),
            }
        );
        assert_eq!(
            parse_action(&call("collaborate", json!({"agent_id": "agent_002"}))).unwrap(),
            Action::Collaborate {
                agent_id: "agent_002".into(),
                task_name: None,
                message: None,
            }
        );
        assert_eq!(field_error("collaborate", json!({})), "agent_id");
        assert_eq!(
            field_error("collaborate", json!({"agent_id": ""})),
            "agent_id"
        );
        assert_eq!(
            field_error("collaborate", json!({"agent_id": 2})),
            "agent_id"
        );
        assert_eq!(
            field_error("collaborate", json!({"agent_id": "a", "task_name": ""})),
            "task_name"
        );
        assert_eq!(
            field_error(
                "collaborate",
                json!({"agent_id": "a", "task_name": "t".repeat(201)})
            ),
            "task_name"
        );
        assert_eq!(
            field_error(
                "collaborate",
                json!({"agent_id": "a", "message": "m".repeat(1001)})
            ),
            "message"
        );
        assert_eq!(
            field_error("collaborate", json!({"agent_id": "a", "task": "x"})),
            "(arguments)"
        );
    }

    #[test]
    fn complete_task_parses() {
        assert_eq!(
            parse_action(&call("complete_task", json!({"task_id": 7}))).unwrap(),
            Action::CompleteTask { task_id: Some(7) }
        );
        assert_eq!(
            parse_action(&call("complete_task", json!({}))).unwrap(),
            Action::CompleteTask { task_id: None }
        );
        assert_eq!(
            field_error("complete_task", json!({"task_id": 0})),
            "task_id"
        );
        assert_eq!(
            field_error("complete_task", json!({"task_id": 1.5})),
            "task_id"
        );
        assert_eq!(
            field_error("complete_task", json!({"task_id": "7"})),
            "task_id"
        );
        assert_eq!(
            field_error("complete_task", json!({"id": 7})),
            "(arguments)"
        );
        // A whole float is an integer for JSON Schema; it parses as one.
        assert_eq!(
            parse_action(&call("complete_task", json!({"task_id": 3.0}))).unwrap(),
            Action::CompleteTask { task_id: Some(3) }
        );
    }

    #[test]
    fn unknown_tool_is_reported() {
        assert_eq!(
            parse_action(&call("fly", json!({}))).unwrap_err(),
            ToolError::UnknownTool { name: "fly".into() }
        );
        assert_eq!(
            parse_action(&call("", Value::Null)).unwrap_err(),
            ToolError::UnknownTool { name: "".into() }
        );
        assert_eq!(
            parse_action(&call("apply_chess_move", json!({}))).unwrap_err(),
            ToolError::UnknownTool {
                name: "apply_chess_move".into()
            }
        );
    }

    #[test]
    fn action_knows_its_tool() {
        for (tool, args) in [
            ("move", json!({"x": 1, "y": 2})),
            ("wait", json!({})),
            ("speak", json!({"content": "hi"})),
            ("collaborate", json!({"agent_id": "agent_002"})),
            ("complete_task", json!({})),
        ] {
            assert_eq!(parse_action(&call(tool, args)).unwrap().tool_name(), tool);
        }
    }
}
