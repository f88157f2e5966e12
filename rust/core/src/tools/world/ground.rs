//! The world tools grounded in what exists when an agent decides.
//!
//! The static schemas ([`super::world_tools`]) accept any agent id, any task id and any
//! position. A decision's schemas ([`Ground::registry`]) accept only what exists then:
//!
//! - `move`: `x` and `y` carry the world bounds as `minimum` / `maximum`;
//! - `speak`: each of `recipients` is one of [`Ground::listeners`] (an `enum`); with no one to
//!   address, `recipients` may only be empty (`maxItems: 0`);
//! - `collaborate`: `agent_id` is one of [`Ground::helpers`]; with no one to ask, the tool is
//!   not offered; with no open task, `task_name` is required (there is no current task to share);
//! - `complete_task`: `task_id` is one of [`Ground::tasks`]; with no open task, the tool is not
//!   offered;
//! - `wait` is unchanged.
//!
//! A list holds at most [`MAX_LISTED_AGENTS`] agents or [`MAX_LISTED_TASKS`] tasks, in the
//! order the runtime gives them (the most relevant first); what is beyond cannot be named by
//! that decision. An enum is never empty: a list with nothing in it leaves the tool or the
//! field out instead, so a grammar built from the schemas can always be satisfied.
//!
//! The same schemas check the answer ([`super::parse_with`]): a call naming what does not
//! exist is refused with a message saying what does ([`explain`]), and a call of a tool not
//! offered is refused by the registry's guard saying why ([`GroundGuard`]).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{COLLABORATE, COMPLETE_TASK, MOVE, SPEAK, specs};
use crate::contract::FailureReason;
use crate::geometry::WorldBounds;
use crate::tools::{Refusal, ToolContext, ToolGuard, ToolRegistry, ToolSpec};

/// The most agent ids a grounded schema lists (`speak.recipients`, `collaborate.agent_id`).
pub const MAX_LISTED_AGENTS: usize = 64;

/// The most task ids `complete_task.task_id` lists.
pub const MAX_LISTED_TASKS: usize = 32;

/// What exists for one agent's decision: whom it can address and ask, its open tasks, the
/// world's bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Ground {
    /// Who `speak` may name: whoever it is answering, the player, then the agents it can ask
    /// (at most [`MAX_LISTED_AGENTS`], never itself).
    pub listeners: Vec<String>,
    /// Who `collaborate` may ask: running agents, the ones it is answering and the ones near
    /// it first (at most [`MAX_LISTED_AGENTS`], never itself).
    pub helpers: Vec<String>,
    /// Its open tasks' ids, the current task first (at most [`MAX_LISTED_TASKS`]).
    pub tasks: Vec<i64>,
    /// The world's rectangle.
    pub bounds: WorldBounds,
}

impl Ground {
    /// The ground of agent `me`: `answering` (who it answers), `player` (the player's id, empty
    /// for none), `helpers` (running agents, most relevant first), `tasks` (open task ids, the
    /// current first). Repeats, blanks and `me` are dropped; each list is cut to its bound.
    pub fn new(
        me: &str,
        answering: &[String],
        player: &str,
        helpers: impl IntoIterator<Item = String>,
        tasks: impl IntoIterator<Item = i64>,
        bounds: WorldBounds,
    ) -> Ground {
        let helpers = distinct(me, helpers);
        let listeners = distinct(
            me,
            answering
                .iter()
                .cloned()
                .chain(std::iter::once(player.to_string()))
                .chain(helpers.iter().cloned()),
        );
        let mut listed = std::collections::HashSet::new();
        let tasks = tasks
            .into_iter()
            .filter(|t| listed.insert(*t))
            .take(MAX_LISTED_TASKS)
            .collect();
        Ground {
            listeners,
            helpers,
            tasks,
            bounds,
        }
    }

    /// The world tools as this decision offers them: the grounded schemas, and a guard that
    /// says why a tool left out is not offered.
    pub fn registry(&self) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        for spec in specs() {
            let Some(spec) = self.ground(spec) else {
                continue;
            };
            // Grounded from valid schemas with ids and finite bounds: a failure is a bug.
            registry
                .register(spec, |args| crate::tools::ToolOutput::ok(args.clone()))
                .expect("grounded world tool schemas are valid");
        }
        registry.set_guard(Arc::new(GroundGuard {
            no_helpers: self.helpers.is_empty(),
            no_tasks: self.tasks.is_empty(),
        }));
        registry
    }

    /// `spec` grounded, or `None` when the tool is not offered.
    fn ground(&self, mut spec: ToolSpec) -> Option<ToolSpec> {
        let props = &mut spec.input_schema["properties"];
        match spec.name.as_str() {
            MOVE => {
                let b = &self.bounds;
                for (axis, min, max) in [("x", b.min_x, b.max_x), ("y", b.min_y, b.max_y)] {
                    props[axis]["minimum"] = json!(min);
                    props[axis]["maximum"] = json!(max);
                    props[axis]["description"] = json!(format!(
                        "Target {axis} coordinate (absolute, {min} to {max})."
                    ));
                }
            }
            SPEAK => {
                props["recipients"] = if self.listeners.is_empty() {
                    json!({"type": "array", "maxItems": 0,
                        "description": "No one can be addressed now: leave it out."})
                } else {
                    let max = self.listeners.len().min(super::MAX_RECIPIENTS);
                    json!({"type": "array", "maxItems": max,
                        "items": {"type": "string", "enum": self.listeners},
                        "description": "Ids of who you are talking to."})
                };
            }
            COLLABORATE => {
                if self.helpers.is_empty() {
                    return None;
                }
                props["agent_id"] = json!({"type": "string", "enum": self.helpers,
                    "description": "Id of the agent to ask."});
                if self.tasks.is_empty() {
                    spec.input_schema["required"] = json!(["agent_id", "task_name"]);
                }
            }
            COMPLETE_TASK => {
                if self.tasks.is_empty() {
                    return None;
                }
                props["task_id"] = json!({"type": "integer", "enum": self.tasks,
                    "description": "Id of one of your open tasks (default: your current task)."});
            }
            _ => {}
        }
        Some(spec)
    }
}

/// Distinct non-blank ids other than `me`, in order, at most [`MAX_LISTED_AGENTS`].
fn distinct(me: &str, ids: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.into_iter()
        .filter(|id| id != me && !id.trim().is_empty() && seen.insert(id.clone()))
        .take(MAX_LISTED_AGENTS)
        .collect()
}

/// The guard of a grounded world registry: lets every call through, and tells a caller of a
/// tool left out why it is not offered now.
struct GroundGuard {
    no_helpers: bool,
    no_tasks: bool,
}

impl ToolGuard for GroundGuard {
    fn permit(&self, _tool: &str, _ctx: &ToolContext) -> Result<(), Refusal> {
        Ok(())
    }

    fn unknown(&self, tool: &str) -> Option<Refusal> {
        let why = match tool {
            COLLABORATE if self.no_helpers => "there is no other agent to ask for help now",
            COMPLETE_TASK if self.no_tasks => "you have no open task to complete",
            _ => return None,
        };
        Some(Refusal {
            reason: FailureReason::ToolNotAllowed,
            message: format!("'{tool}' is not available now: {why}"),
        })
    }
}

/// What to tell a caller whose argument `field` of `tool` was refused by the grounded `schema`
/// because it names something that does not exist (`None`: the schema's own message says it
/// best). The message says what exists, read from the schema the call was checked against.
pub fn explain(tool: &str, schema: &Value, args: &Value, field: &str) -> Option<String> {
    let props = &schema["properties"];
    let listed = |values: &Value| -> Option<String> {
        let items: Vec<String> = values
            .as_array()?
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        Some(items.join(", "))
    };
    match (tool, field) {
        (COLLABORATE, "agent_id") => {
            let named = args["agent_id"].as_str()?;
            let allowed = listed(&props["agent_id"]["enum"])?;
            Some(format!(
                "no agent '{named}' can be asked for help now; you can ask: {allowed}"
            ))
        }
        (SPEAK, "recipients") if props["recipients"]["maxItems"] == 0 => {
            args["recipients"].as_array().filter(|r| !r.is_empty())?;
            Some("no one can be addressed now: leave `recipients` out".into())
        }
        (SPEAK, _) => {
            let index: usize = field.strip_prefix("recipients.")?.parse().ok()?;
            let named = args["recipients"][index].as_str()?;
            let allowed = listed(&props["recipients"]["items"]["enum"])?;
            Some(format!(
                "no one called '{named}' can be addressed now; you can address: {allowed}"
            ))
        }
        (COMPLETE_TASK, "task_id") => {
            let named = Some(&args["task_id"]).filter(|v| v.is_number())?;
            let allowed = listed(&props["task_id"]["enum"])?;
            Some(format!(
                "you have no open task {named}; your open tasks: {allowed}"
            ))
        }
        (MOVE, "x" | "y") => {
            let named = Some(&args[field]).filter(|v| v.is_number())?;
            let (min, max) = (&props[field]["minimum"], &props[field]["maximum"]);
            if min.is_null() || max.is_null() {
                return None;
            }
            Some(format!(
                "{field} {named} is outside the world bounds: {field} must be from {min} to {max}"
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::ToolCall;
    use crate::tools::ToolError;
    use crate::tools::world::{Action, parse_with};

    fn bounds() -> WorldBounds {
        WorldBounds::from_rect(0.0, 0.0, 100.0, 50.0).unwrap()
    }

    /// Agent `a1`, answering `player_0`, with `a2` and `a3` running and tasks 3 and 7 open.
    fn ground() -> Ground {
        Ground::new(
            "a1",
            &["player_0".into()],
            "player_0",
            ["a2", "a1", "a3", "a2"].map(String::from),
            [3, 7, 3],
            bounds(),
        )
    }

    fn parse(ground: &Ground, tool: &str, args: Value) -> Result<Action, ToolError> {
        parse_with(&ground.registry(), &ToolCall::new("c1", tool, args))
    }

    /// The message of the refusal of `tool` called with `args`, and its field.
    fn refused(ground: &Ground, tool: &str, args: Value) -> (String, String) {
        match parse(ground, tool, args.clone()) {
            Err(ToolError::InvalidArguments { field, message, .. }) => (field, message),
            other => panic!("{tool} {args}: expected a refusal, got {other:?}"),
        }
    }

    fn names(registry: &ToolRegistry) -> Vec<&str> {
        registry.tools().map(|t| t.name()).collect()
    }

    /// Every `enum` of `schema`, anywhere in it.
    fn enums(schema: &Value, out: &mut Vec<Value>) {
        match schema {
            Value::Object(map) => {
                if let Some(e) = map.get("enum") {
                    out.push(e.clone());
                }
                map.values().for_each(|v| enums(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| enums(v, out)),
            _ => {}
        }
    }

    #[test]
    fn lists_are_distinct_without_itself_and_in_order() {
        let g = ground();
        assert_eq!(g.helpers, ["a2", "a3"]);
        assert_eq!(g.listeners, ["player_0", "a2", "a3"]);
        assert_eq!(g.tasks, [3, 7]);
    }

    #[test]
    fn lists_are_bounded() {
        let many = (0..1000).map(|i| format!("agent_{i:04}"));
        let g = Ground::new("agent_0000", &[], "player_0", many, 1..=500, bounds());
        assert_eq!(g.helpers.len(), MAX_LISTED_AGENTS);
        assert_eq!(
            g.helpers[0], "agent_0001",
            "the first ones, itself left out"
        );
        assert_eq!(g.listeners.len(), MAX_LISTED_AGENTS);
        assert_eq!(g.listeners[0], "player_0");
        assert_eq!(g.tasks.len(), MAX_LISTED_TASKS);
        let registry = g.registry();
        let speak = registry.get("speak").unwrap().input_schema();
        assert_eq!(speak["properties"]["recipients"]["maxItems"], 50);
    }

    #[test]
    fn move_is_held_to_the_world_bounds() {
        let g = ground();
        let registry = g.registry();
        let x = &registry.get("move").unwrap().input_schema()["properties"]["x"];
        assert_eq!(
            (x["minimum"].clone(), x["maximum"].clone()),
            (json!(0.0), json!(100.0))
        );
        assert_eq!(
            parse(&g, "move", json!({"x": 100, "y": 0})).unwrap(),
            Action::Move { x: 100.0, y: 0.0 },
            "the edges are inside"
        );
        let (field, message) = refused(&g, "move", json!({"x": 5, "y": 50.5}));
        assert_eq!(field, "y");
        assert_eq!(
            message,
            "y 50.5 is outside the world bounds: y must be from 0.0 to 50.0"
        );
        let (field, _) = refused(&g, "move", json!({"x": -1e9, "y": 1}));
        assert_eq!(field, "x");
        // A wrong type keeps the schema's own message.
        let (_, message) = refused(&g, "move", json!({"x": "far", "y": 1}));
        assert!(!message.contains("bounds"), "{message}");
    }

    #[test]
    fn collaborate_names_a_running_agent() {
        let g = ground();
        assert_eq!(
            parse(&g, "collaborate", json!({"agent_id": "a3"})).unwrap(),
            Action::Collaborate {
                agent_id: "a3".into(),
                task_name: None,
                message: None
            }
        );
        let (field, message) = refused(&g, "collaborate", json!({"agent_id": "bob"}));
        assert_eq!(field, "agent_id");
        assert_eq!(
            message,
            "no agent 'bob' can be asked for help now; you can ask: a2, a3"
        );
        // Itself, or the player, is no helper.
        refused(&g, "collaborate", json!({"agent_id": "a1"}));
        refused(&g, "collaborate", json!({"agent_id": "player_0"}));
    }

    #[test]
    fn with_no_one_to_ask_collaborate_is_not_offered() {
        let g = Ground::new("a1", &[], "player_0", [], [3], bounds());
        let registry = g.registry();
        assert_eq!(names(&registry), ["complete_task", "move", "speak", "wait"]);
        let refusal = registry.guard().unwrap().unknown("collaborate").unwrap();
        assert_eq!(refusal.reason, FailureReason::ToolNotAllowed);
        assert_eq!(
            refusal.message,
            "'collaborate' is not available now: there is no other agent to ask for help now"
        );
        assert!(registry.guard().unwrap().unknown("fly").is_none());
    }

    #[test]
    fn with_no_open_task_complete_task_is_not_offered_and_a_task_name_is_needed() {
        let g = Ground::new("a1", &[], "", ["a2".to_string()], [], bounds());
        let registry = g.registry();
        assert_eq!(names(&registry), ["collaborate", "move", "speak", "wait"]);
        let refusal = registry.guard().unwrap().unknown("complete_task").unwrap();
        assert_eq!(
            refusal.message,
            "'complete_task' is not available now: you have no open task to complete"
        );
        let (field, _) = refused(&g, "collaborate", json!({"agent_id": "a2"}));
        assert_eq!(field, "task_name", "no current task to share");
        assert!(
            parse(
                &g,
                "collaborate",
                json!({"agent_id": "a2", "task_name": "Bake"})
            )
            .is_ok()
        );
    }

    #[test]
    fn complete_task_names_an_open_task() {
        let g = ground();
        assert_eq!(
            parse(&g, "complete_task", json!({"task_id": 7})).unwrap(),
            Action::CompleteTask { task_id: Some(7) }
        );
        assert_eq!(
            parse(&g, "complete_task", json!({})).unwrap(),
            Action::CompleteTask { task_id: None },
            "the current task"
        );
        let (field, message) = refused(
            &g,
            "complete_task",
            json!({"task_id": 5555555555555555_i64}),
        );
        assert_eq!(field, "task_id");
        assert_eq!(
            message,
            "you have no open task 5555555555555555; your open tasks: 3, 7"
        );
    }

    #[test]
    fn speak_addresses_who_can_hear() {
        let g = ground();
        let ok = json!({"content": "Hi", "recipients": ["player_0", "a3"]});
        assert!(parse(&g, "speak", ok).is_ok());
        let (field, message) = refused(
            &g,
            "speak",
            json!({"content": "Hi", "recipients": ["a2", "bob"]}),
        );
        assert_eq!(field, "recipients.1");
        assert_eq!(
            message,
            "no one called 'bob' can be addressed now; you can address: player_0, a2, a3"
        );
    }

    #[test]
    fn with_no_one_to_address_speak_takes_no_recipients() {
        let g = Ground::new("a1", &[], "", [], [], bounds());
        let registry = g.registry();
        assert_eq!(names(&registry), ["move", "speak", "wait"]);
        assert!(parse(&g, "speak", json!({"content": "Hm."})).is_ok());
        assert!(parse(&g, "speak", json!({"content": "Hm.", "recipients": []})).is_ok());
        let (field, message) =
            refused(&g, "speak", json!({"content": "Hm.", "recipients": ["a2"]}));
        assert_eq!(field, "recipients");
        assert_eq!(
            message,
            "no one can be addressed now: leave `recipients` out"
        );
    }

    #[test]
    fn no_enum_is_ever_empty() {
        for g in [
            ground(),
            Ground::new("a1", &[], "", [], [], bounds()),
            Ground::new("a1", &["a1".into()], "a1", ["a1".to_string()], [], bounds()),
        ] {
            for tool in g.registry().tools() {
                let mut found = Vec::new();
                enums(tool.input_schema(), &mut found);
                for e in found {
                    assert!(!e.as_array().unwrap().is_empty(), "{}", tool.name());
                }
            }
        }
    }
}
