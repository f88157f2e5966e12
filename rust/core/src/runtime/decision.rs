//! Checking a brain's answer before anything of it runs.
//!
//! Every call of an answer is checked first, all of them, against the deciding agent's tools
//! ([`AgentTools`]): the tool must be one the agent has (`tool_not_allowed`), its arguments a
//! JSON object (`invalid_json`) that satisfies the tool's JSON Schema (`invalid_args`), and call
//! ids unique within the answer (`duplicate_call_id`). An answer without calls must say
//! something (the anti-silent rule). A failing answer becomes the contract's failure feedback
//! ([`DecisionStep`] with `failed_calls`), which goes back to the brain to repair its answer;
//! nothing of it runs. What the world itself may refuse (a target outside the bounds, a helper
//! that is not running) is checked when the action runs.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::tools::{AgentTools, WORLD_TOOLS};
use crate::contract::{BrainReply, DecisionStep, FailedCall, FailureReason, ToolCall};
use crate::tools::world::{self, Action};
use crate::tools::{ToolContext, ToolRegistry};

/// The text of the anti-silent rule's feedback.
pub(crate) const SILENT_REPLY: &str = "the answer has no tool calls and no text: call a tool, or \
     say something in assistant_text (a reply without tool calls must not be empty)";

/// One checked call, ready to run.
#[derive(Clone)]
pub(crate) enum Planned {
    /// A world action; the runtime executes it.
    World(Action),
    /// A call of another tool set's tool.
    Tool {
        /// The registry that has it.
        registry: Arc<ToolRegistry>,
        /// Whether the tool only reads (its result can go back to the brain).
        read_only: bool,
    },
}

/// A checked answer: its calls, in order, each with what runs it.
pub(crate) struct Plan {
    pub calls: Vec<(ToolCall, Planned)>,
}

impl Plan {
    /// True when the answer only asks read-only tools (outside the world actions) something:
    /// their results go back to the brain, which continues.
    pub(crate) fn only_reads(&self) -> bool {
        !self.calls.is_empty()
            && self.calls.iter().all(|(_, planned)| {
                matches!(
                    planned,
                    Planned::Tool {
                        read_only: true,
                        ..
                    }
                )
            })
    }
}

/// Checks every call of `reply` against `tools`, as called by the agent in `ctx`. `Err` is the
/// feedback that asks the brain to repair the answer.
pub(crate) fn check(
    reply: &BrainReply,
    tools: &AgentTools,
    ctx: &ToolContext,
) -> Result<Plan, Box<DecisionStep>> {
    let mut failed = Vec::new();
    let mut calls = Vec::with_capacity(reply.tool_calls.len());
    let mut ids = HashSet::new();
    for call in &reply.tool_calls {
        if !call.id.is_empty() && !ids.insert(call.id.as_str()) {
            failed.push(FailedCall::new(
                call,
                FailureReason::DuplicateCallId,
                format!("another call of this answer has the id '{}'", call.id),
            ));
            continue;
        }
        match check_call(call, tools, ctx) {
            Ok(planned) => calls.push((call.clone(), planned)),
            Err(failure) => failed.push(failure),
        }
    }
    let silent = reply.tool_calls.is_empty() && reply.assistant_text.trim().is_empty();
    if failed.is_empty() && !silent {
        return Ok(Plan { calls });
    }
    Err(Box::new(DecisionStep {
        reply: reply.clone(),
        results: Vec::new(),
        failed_calls: failed,
        problem: silent.then(|| SILENT_REPLY.to_string()),
    }))
}

fn check_call(
    call: &ToolCall,
    tools: &AgentTools,
    ctx: &ToolContext,
) -> Result<Planned, FailedCall> {
    let Some((set, registry, tool)) = tools.lookup(&call.tool) else {
        if let Some(refusal) = tools.unknown_refusal(&call.tool) {
            return Err(FailedCall::new(call, refusal.reason, refusal.message));
        }
        let available: Vec<&str> = tools
            .definitions()
            .iter()
            .filter_map(|d| d["name"].as_str())
            .collect();
        return Err(FailedCall::new(
            call,
            FailureReason::ToolNotAllowed,
            format!(
                "no tool named '{}' is available to this agent (available: {})",
                call.tool,
                available.join(", ")
            ),
        ));
    };
    if !(call.args.is_object() || call.args.is_null()) {
        return Err(FailedCall::new(
            call,
            FailureReason::InvalidJson,
            match &call.args {
                // Arguments a model wrote that do not parse stay as their text.
                Value::String(_) => {
                    "the arguments must be a JSON object, got a string (text that is not a JSON \
                     object)"
                        .to_string()
                }
                other => format!(
                    "the arguments must be a JSON object, got {}",
                    crate::json_kind::json_kind(other)
                ),
            },
        ));
    }
    if let Some(refusal) = registry
        .guard()
        .and_then(|guard| guard.permit(&call.tool, ctx).err())
    {
        return Err(FailedCall::new(call, refusal.reason, refusal.message));
    }
    let invalid = |e: crate::tools::ToolError| {
        FailedCall::new(call, FailureReason::InvalidArgs, e.to_string())
    };
    if set == WORLD_TOOLS {
        return world::parse_action(call)
            .map(Planned::World)
            .map_err(invalid);
    }
    let empty = Value::Object(Default::default());
    tool.validate(if call.args.is_null() {
        &empty
    } else {
        &call.args
    })
    .map_err(invalid)?;
    Ok(Planned::Tool {
        registry: registry.clone(),
        read_only: tool.is_read_only(),
    })
}

/// One line naming what was wrong with an answer, for the `brain_invalid_reply` error.
pub(crate) fn summary(step: &DecisionStep) -> String {
    let mut parts: Vec<String> = step
        .failed_calls
        .iter()
        .map(|f| {
            format!(
                "{} ({}): {}: {}",
                f.id,
                f.tool,
                f.reason.as_str(),
                f.message
            )
        })
        .collect();
    if let Some(problem) = &step.problem {
        parts.push(problem.clone());
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::FailureStatus;
    use crate::tools::{ToolOutput, ToolSpec};

    fn tools() -> AgentTools {
        let mut board = ToolRegistry::new();
        board
            .register(
                ToolSpec::new(
                    "legal_moves",
                    "Lists moves.",
                    json!({"type": "object", "properties": {"state": {"type": "string"}},
                           "required": ["state"], "additionalProperties": false}),
                )
                .read_only(),
                |_| ToolOutput::ok(json!({"moves": []})),
            )
            .unwrap();
        board
            .register(
                ToolSpec::new("play", "Plays.", json!({"type": "object"})),
                |_| ToolOutput::ok(json!({})),
            )
            .unwrap();
        AgentTools::new(vec![
            (WORLD_TOOLS.into(), Arc::new(world::world_registry())),
            ("board".into(), Arc::new(board)),
        ])
        .unwrap()
    }

    fn call(id: &str, tool: &str, args: Value) -> ToolCall {
        ToolCall::new(id, tool, args)
    }

    fn reply(text: &str, calls: Vec<ToolCall>) -> BrainReply {
        BrainReply {
            assistant_text: text.into(),
            dialog_type: String::new(),
            tool_calls: calls,
        }
    }

    #[test]
    fn a_valid_answer_is_planned_in_order() {
        let plan = check(
            &reply(
                "",
                vec![
                    call("c1", "move", json!({"x": 1, "y": 2})),
                    call("c2", "legal_moves", json!({"state": "s"})),
                    call("c3", "play", Value::Null),
                ],
            ),
            &tools(),
            &ToolContext::anonymous(),
        )
        .unwrap_or_else(|step| panic!("{}", summary(&step)));
        assert_eq!(plan.calls.len(), 3);
        assert!(matches!(
            plan.calls[0].1,
            Planned::World(Action::Move { .. })
        ));
        assert!(matches!(
            plan.calls[1].1,
            Planned::Tool {
                read_only: true,
                ..
            }
        ));
        assert!(matches!(
            plan.calls[2].1,
            Planned::Tool {
                read_only: false,
                ..
            }
        ));
        assert!(!plan.only_reads());
        let reads = check(
            &reply("", vec![call("c1", "legal_moves", json!({"state": "s"}))]),
            &tools(),
            &ToolContext::anonymous(),
        )
        .unwrap_or_else(|step| panic!("{}", summary(&step)));
        assert!(reads.only_reads());
    }

    #[test]
    fn every_failure_is_reported_with_its_status_and_reason() {
        let step = check(
            &reply(
                "",
                vec![
                    call("c1", "fly", json!({})),
                    call("c2", "move", json!({"x": "far", "y": 1})),
                    call("c3", "legal_moves", json!("{\"state\": ")),
                    call("c4", "legal_moves", json!({})),
                    call("c4", "wait", json!({})),
                    call("c5", "wait", json!({"seconds": 1})),
                ],
            ),
            &tools(),
            &ToolContext::anonymous(),
        )
        .err()
        .expect("the answer is refused");
        let got: Vec<_> = step
            .failed_calls
            .iter()
            .map(|f| (f.id.as_str(), f.status, f.reason))
            .collect();
        assert_eq!(
            got,
            [
                ("c1", FailureStatus::Rejected, FailureReason::ToolNotAllowed),
                ("c2", FailureStatus::Error, FailureReason::InvalidArgs),
                ("c3", FailureStatus::Error, FailureReason::InvalidJson),
                ("c4", FailureStatus::Error, FailureReason::InvalidArgs),
                ("c4", FailureStatus::Error, FailureReason::DuplicateCallId),
            ]
        );
        let messages: Vec<_> = step
            .failed_calls
            .iter()
            .map(|f| f.message.as_str())
            .collect();
        assert!(
            messages[0].contains("'fly'") && messages[0].contains("legal_moves"),
            "{}",
            messages[0]
        );
        assert!(messages[1].contains("x"), "{}", messages[1]);
        assert!(messages[3].contains("state"), "{}", messages[3]);
        assert_eq!(step.problem, None);
    }

    #[test]
    fn a_silent_answer_breaks_the_anti_silent_rule() {
        let step = check(&reply("  ", vec![]), &tools(), &ToolContext::anonymous())
            .err()
            .unwrap();
        assert!(step.failed_calls.is_empty());
        assert_eq!(step.problem.as_deref(), Some(SILENT_REPLY));
        assert!(step.is_repair());
        assert!(
            check(
                &reply("Hello.", vec![]),
                &tools(),
                &ToolContext::anonymous()
            )
            .is_ok()
        );
    }

    #[test]
    fn tools_of_sets_the_agent_lacks_are_not_allowed() {
        let world_only = AgentTools::new(vec![(
            WORLD_TOOLS.into(),
            Arc::new(world::world_registry()),
        )])
        .unwrap();
        let step = check(
            &reply("", vec![call("c1", "legal_moves", json!({"state": "s"}))]),
            &world_only,
            &ToolContext::anonymous(),
        )
        .err()
        .unwrap();
        assert_eq!(step.failed_calls[0].reason, FailureReason::ToolNotAllowed);
    }

    #[test]
    fn a_guarded_set_refuses_before_the_schema_and_names_unknown_tools() {
        struct Closed;
        impl crate::tools::ToolGuard for Closed {
            fn permit(&self, tool: &str, ctx: &ToolContext) -> Result<(), crate::tools::Refusal> {
                match (tool, ctx.agent_id.as_deref()) {
                    ("play", Some("agent_001")) => Err(crate::tools::Refusal {
                        reason: FailureReason::HumanInControl,
                        message: "Human is in control".into(),
                    }),
                    _ => Ok(()),
                }
            }
            fn unknown(&self, tool: &str) -> Option<crate::tools::Refusal> {
                Some(crate::tools::Refusal {
                    reason: FailureReason::ToolNotAllowed,
                    message: format!("Action not available: {tool}"),
                })
            }
        }
        let mut app = ToolRegistry::new();
        app.register(
            ToolSpec::new(
                "play",
                "Plays.",
                json!({"type": "object", "properties": {"at": {"type": "integer"}},
                       "required": ["at"]}),
            ),
            |_| ToolOutput::ok(json!({})),
        )
        .unwrap();
        app.set_guard(Arc::new(Closed));
        let tools = AgentTools::new(vec![("app".into(), Arc::new(app))]).unwrap();
        let agent = ToolContext::for_agent("agent_001", Default::default());
        let step = check(
            &reply(
                "",
                vec![
                    // Refused by the guard although its arguments are wrong too.
                    call("c1", "play", json!({"at": "x"})),
                    call("c2", "fly", json!({})),
                ],
            ),
            &tools,
            &agent,
        )
        .err()
        .unwrap();
        let got: Vec<_> = step
            .failed_calls
            .iter()
            .map(|f| (f.reason, f.status, f.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    FailureReason::HumanInControl,
                    FailureStatus::Rejected,
                    "Human is in control"
                ),
                (
                    FailureReason::ToolNotAllowed,
                    FailureStatus::Rejected,
                    "Action not available: fly"
                ),
            ]
        );
        // Another caller is let through to the schema.
        let other = ToolContext::for_agent("agent_002", Default::default());
        let step = check(
            &reply("", vec![call("c1", "play", json!({"at": "x"}))]),
            &tools,
            &other,
        )
        .err()
        .unwrap();
        assert_eq!(step.failed_calls[0].reason, FailureReason::InvalidArgs);
    }
}
