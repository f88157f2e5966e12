//! Checking a brain's answer before anything of it runs.
//!
//! Every call of an answer is checked first, all of them, against the deciding agent's tools
//! ([`AgentTools`]): the tool must be one the agent has (`tool_not_allowed`), its arguments a
//! JSON object (`invalid_json`) that satisfies the tool's JSON Schema (`invalid_args`), and call
//! ids unique within the answer (`duplicate_call_id`). An answer without calls must say
//! something (the anti-silent rule), and an answer with more than
//! [`limits::MAX_REPLY_TOOL_CALLS`] calls is refused as a whole (none of its calls is checked).
//! A failing answer becomes the contract's failure feedback ([`DecisionStep`] with
//! `failed_calls`), which goes back to the brain to repair its answer; nothing of it runs. What
//! the world itself may refuse is checked again when the action runs.
//!
//! The world tools are checked against the schemas the brain was shown, grounded in what
//! exists for the decision ([`world::ground`]): a call naming an agent or a task that does not
//! exist, or a position outside the bounds, is refused here with a message saying what exists.
//! No call may follow a `speak` in one answer (`invalid_actor_state`): the agent is speaking
//! then, and the state machine would refuse it.
//!
//! What goes back is bounded, whoever answered: the feedback's copy of the answer keeps at most
//! [`limits::MAX_REPLY_TOOL_CALLS`] calls, and arguments over
//! [`limits::MAX_TOOL_ARGUMENTS_BYTES`] are replaced there by a note of their size; each failure
//! is bounded by [`FailedCall::new`]. The one-line [`summary`] of a refused answer (the
//! `brain_invalid_reply` error) lists at most [`MAX_FAILURES_LISTED`] failures, each cut to
//! [`MAX_FAILURE_LISTED_CHARS`] characters, then `… and N more`.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::tools::{AgentTools, WORLD_TOOLS};
use crate::contract::{BrainReply, DecisionStep, FailedCall, FailureReason, ToolCall};
use crate::limits;
use crate::tools::world::{self, Action};
use crate::tools::{ToolContext, ToolRegistry};

/// The text of the anti-silent rule's feedback.
pub(crate) const SILENT_REPLY: &str = "the answer has no tool calls and no text: call a tool, or \
     say something in assistant_text (a reply without tool calls must not be empty)";

/// The most failures [`summary`] lists.
pub(crate) const MAX_FAILURES_LISTED: usize = 10;

/// The most characters of one failure in [`summary`].
pub(crate) const MAX_FAILURE_LISTED_CHARS: usize = 300;

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
    let count = reply.tool_calls.len();
    if count > limits::MAX_REPLY_TOOL_CALLS {
        return Err(Box::new(DecisionStep {
            reply: feedback_copy(reply),
            results: Vec::new(),
            failed_calls: Vec::new(),
            problem: Some(format!(
                "the answer has {count} tool calls; the limit is {}: call fewer tools at once",
                limits::MAX_REPLY_TOOL_CALLS
            )),
        }));
    }
    let mut failed = Vec::new();
    let mut calls = Vec::with_capacity(count);
    let mut ids = HashSet::new();
    // The id of the answer's `speak`, once there is one: the state machine refuses every call
    // after it (the agent is Speaking), so the check refuses them first.
    let mut spoken: Option<String> = None;
    for call in &reply.tool_calls {
        if !call.id.is_empty() && !ids.insert(call.id.as_str()) {
            failed.push(FailedCall::new(
                call,
                FailureReason::DuplicateCallId,
                format!("another call of this answer has the id '{}'", call.id),
            ));
            continue;
        }
        if let Some(speech) = &spoken {
            failed.push(FailedCall::new(
                call,
                FailureReason::InvalidActorState,
                format!(
                    "no call can follow `speak` ({speech}) in one answer: the agent is speaking \
                     then and does nothing else; call `speak` last"
                ),
            ));
            continue;
        }
        if ends_answer(tools, &call.tool) {
            spoken = Some(call.id.clone());
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
        reply: feedback_copy(reply),
        results: Vec::new(),
        failed_calls: failed,
        problem: silent.then(|| SILENT_REPLY.to_string()),
    }))
}

/// Whether a call of `tool` ends an answer: the world's `speak` (the agent is speaking then).
fn ends_answer(tools: &AgentTools, tool: &str) -> bool {
    tool == world::SPEAK && tools.find(tool).is_some_and(|(set, _)| set == WORLD_TOOLS)
}

/// The names of the tools of `tools` after a call of which an answer takes no other call
/// ([`crate::brain::BrainContext::final_tools`]).
pub(crate) fn final_tools(tools: &AgentTools) -> Vec<String> {
    [world::SPEAK]
        .into_iter()
        .filter(|name| ends_answer(tools, name))
        .map(str::to_string)
        .collect()
}

/// The answer as the failure feedback repeats it: its first [`limits::MAX_REPLY_TOOL_CALLS`]
/// calls, arguments over [`limits::MAX_TOOL_ARGUMENTS_BYTES`] replaced by a note of their size.
fn feedback_copy(reply: &BrainReply) -> BrainReply {
    BrainReply {
        assistant_text: reply.assistant_text.clone(),
        dialog_type: reply.dialog_type.clone(),
        tool_calls: reply
            .tool_calls
            .iter()
            .take(limits::MAX_REPLY_TOOL_CALLS)
            .map(|call| {
                match limits::check_json_bytes("args", &call.args, limits::MAX_TOOL_ARGUMENTS_BYTES)
                {
                    Ok(()) => call.clone(),
                    Err(why) => ToolCall {
                        args: Value::String(format!("({why}: not repeated)")),
                        ..ToolCall::new(&call.id, &call.tool, Value::Null)
                    },
                }
            })
            .collect(),
    }
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
                limits::cut_copy(&call.tool, limits::MAX_TOOL_NAME_CHARS),
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
        return world::parse_with(registry, call)
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

/// One line naming what was wrong with an answer, for the `brain_invalid_reply` error: the
/// problem with the answer as a whole first, then at most [`MAX_FAILURES_LISTED`] failures,
/// each cut to [`MAX_FAILURE_LISTED_CHARS`] characters, then `… and N more`.
pub(crate) fn summary(step: &DecisionStep) -> String {
    let mut parts: Vec<String> = step
        .problem
        .iter()
        .map(|p| limits::cut_copy(p, MAX_FAILURE_LISTED_CHARS))
        .collect();
    parts.extend(step.failed_calls.iter().take(MAX_FAILURES_LISTED).map(|f| {
        let line = format!(
            "{} ({}): {}: {}",
            f.id,
            f.tool,
            f.reason.as_str(),
            f.message
        );
        limits::cut_copy(&line, MAX_FAILURE_LISTED_CHARS)
    }));
    let more = step.failed_calls.len().saturating_sub(MAX_FAILURES_LISTED);
    if more > 0 {
        parts.push(format!("… and {more} more"));
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
    fn nothing_may_follow_speak() {
        let speak = || call("s", "speak", json!({"content": "Hi"}));
        let walk = |id: &str| call(id, "move", json!({"x": 1, "y": 2}));
        let plan = check(
            &reply("", vec![walk("m1"), walk("m2"), speak()]),
            &tools(),
            &ToolContext::anonymous(),
        )
        .unwrap_or_else(|step| panic!("{}", summary(&step)));
        assert_eq!(plan.calls.len(), 3, "speak last is fine");
        let step = check(
            &reply(
                "",
                vec![
                    walk("m1"),
                    speak(),
                    walk("m2"),
                    call("s2", "speak", json!({"content": "Again"})),
                    call("r", "legal_moves", json!({"state": "s"})),
                ],
            ),
            &tools(),
            &ToolContext::anonymous(),
        )
        .err()
        .expect("calls after speak are refused");
        let refused: Vec<_> = step
            .failed_calls
            .iter()
            .map(|f| (f.id.as_str(), f.status, f.reason))
            .collect();
        let after = (FailureStatus::Rejected, FailureReason::InvalidActorState);
        assert_eq!(
            refused,
            [
                ("m2", after.0, after.1),
                ("s2", after.0, after.1),
                ("r", after.0, after.1)
            ]
        );
        assert_eq!(
            step.failed_calls[0].message,
            "no call can follow `speak` (s) in one answer: the agent is speaking then and does \
             nothing else; call `speak` last"
        );
        // An app's tool named `speak` is no world action: calls may follow it.
        let mut app = ToolRegistry::new();
        app.register(
            ToolSpec::new("speak", "Says.", json!({"type": "object"})),
            |_| ToolOutput::ok(json!({})),
        )
        .unwrap();
        let app = AgentTools::new(vec![("app".into(), Arc::new(app))]).unwrap();
        assert!(final_tools(&app).is_empty());
        assert_eq!(final_tools(&tools()), ["speak"]);
        let both = reply(
            "",
            vec![call("a", "speak", json!({})), call("b", "speak", json!({}))],
        );
        assert!(check(&both, &app, &ToolContext::anonymous()).is_ok());
    }

    #[test]
    fn world_calls_are_checked_against_the_grounded_schemas() {
        use crate::geometry::WorldBounds;
        use crate::tools::world::ground::Ground;
        let bounds = WorldBounds::from_rect(0.0, 0.0, 10.0, 10.0).unwrap();
        let ground = Ground::new("a1", &[], "player_0", ["a2".to_string()], [], bounds);
        let tools = tools()
            .replaced(WORLD_TOOLS, &Arc::new(ground.registry()))
            .unwrap();
        let step = check(
            &reply(
                "",
                vec![
                    call(
                        "c1",
                        "collaborate",
                        json!({"agent_id": "ghost", "task_name": "t"}),
                    ),
                    call(
                        "c2",
                        "complete_task",
                        json!({"task_id": 5555555555555555_i64}),
                    ),
                    call("c3", "move", json!({"x": 11, "y": 0})),
                    call(
                        "c4",
                        "collaborate",
                        json!({"agent_id": "a2", "task_name": "t"}),
                    ),
                ],
            ),
            &tools,
            &ToolContext::anonymous(),
        )
        .err()
        .expect("ungrounded calls are refused");
        let refused: Vec<_> = step
            .failed_calls
            .iter()
            .map(|f| (f.id.as_str(), f.reason, f.message.as_str()))
            .collect();
        assert_eq!(
            refused,
            [
                (
                    "c1",
                    FailureReason::InvalidArgs,
                    "Invalid arguments for collaborate: agent_id: no agent 'ghost' can be asked \
                     for help now; you can ask: a2"
                ),
                (
                    "c2",
                    FailureReason::ToolNotAllowed,
                    "'complete_task' is not available now: you have no open task to complete"
                ),
                (
                    "c3",
                    FailureReason::InvalidArgs,
                    "Invalid arguments for move: x: x 11 is outside the world bounds: x must be \
                     from 0.0 to 10.0"
                ),
            ]
        );
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
    fn what_a_refused_answer_sends_back_and_reports_is_bounded() {
        // A huge tool name (as a trusted brain may pass it on), many failures, huge arguments.
        let huge_name = "n".repeat(2 << 20);
        let mut calls = vec![
            call("c0", &huge_name, json!({})),
            call(
                "c1",
                "legal_moves",
                json!({"state": "s".repeat(limits::MAX_TOOL_ARGUMENTS_BYTES)}),
            ),
        ];
        calls.extend((2..40).map(|n| call(&format!("c{n}"), "fly", json!({}))));
        let step = check(&reply("", calls), &tools(), &ToolContext::anonymous())
            .err()
            .unwrap();
        assert_eq!(step.failed_calls.len(), 40);
        assert_eq!(step.failed_calls[0].tool.chars().count(), 64);
        assert!(step.failed_calls[0].message.chars().count() <= 1_000);
        assert_eq!(step.failed_calls[1].reason, FailureReason::InvalidArgs);
        assert!(
            step.failed_calls[1].message.contains("the limit is 65536"),
            "{}",
            step.failed_calls[1].message
        );
        // The answer repeated to the brain: names cut, oversized arguments not repeated.
        assert_eq!(step.reply.tool_calls.len(), 40);
        let size = limits::MAX_TOOL_ARGUMENTS_BYTES + "{\"state\":\"\"}".len();
        assert_eq!(
            step.reply.tool_calls[1].args,
            json!(format!(
                "(args is {size} bytes of JSON; the limit is 65536: not repeated)"
            ))
        );
        let line = summary(&step);
        assert!(line.chars().count() < 4_000, "{} characters", line.len());
        assert!(line.ends_with("… and 30 more"), "{line}");
        assert!(line.starts_with("c0 (nnnn"), "{line}");
    }

    #[test]
    fn an_answer_with_too_many_calls_is_refused_as_a_whole() {
        let calls: Vec<ToolCall> = (0..limits::MAX_REPLY_TOOL_CALLS + 1)
            .map(|n| call(&format!("c{n}"), "wait", json!({})))
            .collect();
        let step = check(&reply("", calls), &tools(), &ToolContext::anonymous())
            .err()
            .unwrap();
        assert!(step.failed_calls.is_empty());
        assert_eq!(
            step.problem.as_deref(),
            Some("the answer has 65 tool calls; the limit is 64: call fewer tools at once")
        );
        assert_eq!(step.reply.tool_calls.len(), limits::MAX_REPLY_TOOL_CALLS);
        let calls: Vec<ToolCall> = (0..limits::MAX_REPLY_TOOL_CALLS)
            .map(|n| call(&format!("c{n}"), "wait", json!({})))
            .collect();
        assert!(check(&reply("", calls), &tools(), &ToolContext::anonymous()).is_ok());
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
