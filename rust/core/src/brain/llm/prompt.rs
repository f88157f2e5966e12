//! What the model sees: a [`BrainContext`] as a provider-neutral [`ModelRequest`].
//!
//! Laid out for the providers' prefix caches — what stays the same from one decision to the
//! next comes first, what changes comes last:
//!
//! 1. the tool definitions (the agent's tool sets; the same until a set is attached or
//!    detached);
//! 2. the system prompt, in two blocks: the rules — the contract (how to answer, the
//!    anti-silent rule, how refused calls come back), the player's id and the world's bounds,
//!    the same for every agent of the runtime ([`agents_llm::SystemBlock::shared`]) —, then
//!    who the agent is (name, role, role prompt), marked as the end of the cacheable prefix;
//! 3. one user message with the situation, in compact lines: the instruction, where the agent
//!    is, its tasks, who is near, its recent conversation, what it notices, what it just heard
//!    (the parts a client can grow each within its budget, [`crate::brain::budget`]: the
//!    newest kept, a line counting the earlier ones left out);
//! 4. the earlier rounds of this decision: each answer as an assistant message with its tool
//!    calls, then one tool result per call — a read-only call's result, or the contract's
//!    failure feedback (`{id, tool, status, reason, message}`, marked as an error) for a refused
//!    answer, so the model repairs it. Both providers need a result for every call, so the calls
//!    of a refused answer that were fine get `{"status": "not_run"}`.

use serde_json::{Value, json};

use agents_llm::{ModelMessage, ModelRequest, ModelToolCall, SystemBlock, ToolSpec};

use crate::brain::{BrainContext, budget};
use crate::contract::DecisionStep;

/// How the model is asked to answer, the same for every agent.
pub const CONTRACT: &str = "\
How to answer:
- Act only through the tools. A tool call does something in the world; text alone does not.
- To say something, call `speak` (or put the line in your text: text without a `speak` call is \
said to whoever you are answering). Keep lines short and in character.
- If you call no tool, you must say something: an empty answer is refused.
- A refused call comes back as an error result {id, tool, status, reason, message}: read it and \
answer again with a corrected call. `tool_not_allowed` means the tool is not yours; \
`invalid_args` names the argument that is wrong.
- Results of read-only tools come back to you; then decide what to do.
- Coordinates are absolute and must lie inside the world bounds.";

/// Options of the request that do not come from the context.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestOptions {
    /// The model.
    pub model: String,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Most answer tokens.
    pub max_tokens: Option<u32>,
    /// Stream the answer.
    pub stream: bool,
}

/// The request for one answer in `context`.
pub fn request(context: &BrainContext, options: &RequestOptions) -> ModelRequest {
    let tools = context
        .tools
        .iter()
        .filter_map(|definition| {
            Some(ToolSpec {
                name: definition.get("name")?.as_str()?.to_string(),
                description: definition
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                parameters: definition
                    .get("parameters")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"})),
            })
        })
        .collect();
    let mut messages = vec![ModelMessage::User {
        text: situation(context),
    }];
    for step in &context.steps {
        messages.extend(step_messages(step));
    }
    ModelRequest {
        model: options.model.clone(),
        system: system_blocks(context),
        messages,
        tools,
        temperature: options.temperature,
        max_tokens: options.max_tokens,
        json_schema: None,
        stream: options.stream,
    }
}

/// The system prompt as two blocks: the rules every agent of the runtime is given (shared),
/// then who this agent is (the end of the cacheable prefix). A framing section (a game
/// master's turn) gives both.
pub fn system_blocks(context: &BrainContext) -> Vec<SystemBlock> {
    let (rules, identity) = match context.sections.framing(context) {
        Some((_, framing)) => (framing.rules, framing.identity),
        None => (rules(context), identity(context)),
    };
    vec![
        SystemBlock {
            text: rules,
            cache: false,
            shared: true,
        },
        SystemBlock {
            text: identity,
            cache: true,
            shared: false,
        },
    ]
}

/// The system prompt as one text: the rules, then who the agent is.
pub fn system_prompt(context: &BrainContext) -> String {
    system_blocks(context)
        .iter()
        .map(|block| block.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Who the agent is: its name, id and role, and its role prompt.
pub fn identity(context: &BrainContext) -> String {
    let mut text = if context.role.trim().is_empty() {
        format!(
            "You are {} ({}), a character in a game world.",
            context.name, context.agent_id
        )
    } else {
        format!(
            "You are {} ({}), {} in a game world.",
            context.name, context.agent_id, context.role
        )
    };
    if !context.prompt.trim().is_empty() {
        text.push_str("\n\n");
        text.push_str(context.prompt.trim());
    }
    text
}

/// The contract, the player's id and the world's bounds: the same for every agent of a
/// runtime.
pub fn rules(context: &BrainContext) -> String {
    let mut text = CONTRACT.to_string();
    text.push_str(&format!(
        "\n\nThe player's id is {}. Other characters are named by their ids (agent_002, …). \
         The world spans x {} to {} and y {} to {}.",
        context.player_id,
        crate::geometry::number(context.bounds.min_x),
        crate::geometry::number(context.bounds.max_x),
        crate::geometry::number(context.bounds.min_y),
        crate::geometry::number(context.bounds.max_y),
    ));
    text
}

/// What changes from one decision to the next, as compact lines (cheaper than JSON: no
/// repeated keys, no escaped quotes inside the message). Quoted texts are JSON strings, so
/// whatever a player typed cannot break the layout.
pub fn situation(context: &BrainContext) -> String {
    if let Some((_, framing)) = context.sections.framing(context) {
        return framing.situation;
    }
    use std::fmt::Write;
    let quoted = |text: &str| serde_json::to_string(text).unwrap_or_default();
    let at = |p: crate::geometry::Position| {
        format!(
            "({}, {})",
            crate::geometry::number(p.x),
            crate::geometry::number(p.y)
        )
    };
    let you = |id: &str| {
        if id == context.agent_id {
            "you".to_string()
        } else {
            id.to_string()
        }
    };
    let mut out = format!(
        "{}\n\nYou are at {}.",
        context.instruction,
        at(context.position)
    );
    for lines in context
        .sections
        .iter()
        .filter_map(|section| section.situation_lines(context))
    {
        out.push_str("\n\n");
        out.push_str(&lines);
        out.push('\n');
    }
    match &context.current_task {
        Some(t) => {
            let _ = write!(out, "\nCurrent task {}: {}.", t.id, quoted(&t.task_name));
        }
        None => out.push_str("\nNo task."),
    }
    for t in &context.other_tasks {
        let _ = write!(out, "\nAlso task {}: {}.", t.id, quoted(&t.task_name));
    }
    if context.nearby.is_empty() {
        out.push_str("\nNo one is near.");
    }
    for a in &context.nearby {
        let _ = write!(
            out,
            "\nNear: {} {} ({}) at {}, {} away.",
            a.agent_id,
            a.name,
            a.role,
            at(a.position),
            (a.distance * 10.0).round() / 10.0
        );
    }
    let (recent, earlier) =
        budget::newest_within(&context.recent_messages, budget::RECENT_TOKENS, |r| {
            let to = r
                .recipient
                .as_deref()
                .map(|to| {
                    to.split(',')
                        .map(|t| you(t.trim()))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_else(|| "anyone".into());
            format!(
                "Earlier, {} to {}: {}",
                you(&r.sender),
                to,
                quoted(&r.content)
            )
        });
    push_lines(&mut out, budget::left_out(earlier, "lines"), recent);
    if let Some(movement) = &context.movement {
        let _ = write!(out, "\n{}", movement.describe());
    }
    let (noticed, earlier) =
        budget::newest_within(&context.observations, budget::OBSERVATIONS_TOKENS, |o| {
            format!("You notice: {o}")
        });
    push_lines(&mut out, budget::left_out(earlier, "observations"), noticed);
    let (heard, earlier) = budget::newest_within(&context.incoming, budget::INCOMING_TOKENS, |m| {
        match &m.kind {
            crate::brain::IncomingKind::Speech => format!(
                "Just now, {} ({}) to you: {}",
                m.sender,
                m.sender_name,
                quoted(&m.content)
            ),
            crate::brain::IncomingKind::Collaboration { task_id, task_name } => format!(
                "Just now, {} ({}) asks your help with task {task_id} {}: {}",
                m.sender,
                m.sender_name,
                quoted(task_name),
                quoted(&m.content)
            ),
        }
    });
    push_lines(&mut out, budget::left_out(earlier, "lines to you"), heard);
    out
}

/// Appends `note` (if any), then `lines`, each on a line of its own.
fn push_lines(out: &mut String, note: Option<String>, lines: Vec<String>) {
    for line in note.into_iter().chain(lines) {
        out.push('\n');
        out.push_str(&line);
    }
}

/// One earlier round: the answer, then one result per call.
fn step_messages(step: &DecisionStep) -> Vec<ModelMessage> {
    let calls: Vec<ModelToolCall> = step
        .reply
        .tool_calls
        .iter()
        .map(|c| ModelToolCall {
            id: c.id.clone(),
            name: c.tool.clone(),
            arguments: match &c.args {
                // Arguments that did not parse went out as their raw text: show them as sent.
                Value::String(raw) => raw.clone(),
                Value::Null => "{}".into(),
                other => other.to_string(),
            },
        })
        .collect();
    let mut messages = vec![ModelMessage::Assistant {
        text: step.reply.assistant_text.clone(),
        tool_calls: calls,
    }];
    for call in &step.reply.tool_calls {
        let failed = step.failed_calls.iter().find(|f| f.id == call.id);
        let result = step.results.iter().find(|r| r.id == call.id);
        let (content, is_error) = match (failed, result) {
            (Some(failed), _) => (serde_json::to_string(failed).unwrap_or_default(), true),
            (None, Some(result)) => (result.result.to_string(), result.is_error),
            (None, None) if step.is_repair() => (
                json!({"id": call.id, "tool": call.tool, "status": "not_run",
                       "message": "not run: another call of this answer was refused"})
                .to_string(),
                false,
            ),
            (None, None) => (json!({"status": "done"}).to_string(), false),
        };
        messages.push(ModelMessage::ToolResult {
            call_id: call.id.clone(),
            content,
            is_error,
        });
    }
    if let Some(problem) = &step.problem {
        messages.push(ModelMessage::User {
            text: format!("Your answer was refused: {problem}. Answer again."),
        });
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::{IncomingKind, IncomingMessage, NearbyAgent};
    use crate::contract::{BrainReply, CallResult, FailedCall, FailureReason, ToolCall};
    use crate::geometry::{Position, WorldBounds};

    fn context() -> BrainContext {
        BrainContext {
            agent_id: "agent_001".into(),
            name: "Mira".into(),
            role: "the baker".into(),
            prompt: "You bake bread and gossip.".into(),
            instruction: "Analyze situation and decide next action".into(),
            position: Position::new(10.0, 20.0),
            bounds: WorldBounds::default(),
            current_task: None,
            other_tasks: vec![],
            recent_messages: vec![],
            observations: Vec::new(),
            movement: None,
            incoming: vec![IncomingMessage {
                sender: "player_0".into(),
                sender_name: "player_0".into(),
                content: "Any bread left?".into(),
                kind: IncomingKind::Speech,
                dialog_type: "chat".into(),
            }],
            nearby: vec![NearbyAgent {
                agent_id: "agent_002".into(),
                name: "Bram".into(),
                role: "smith".into(),
                position: Position::new(12.0, 20.0),
                distance: 2.0,
            }],
            player_id: "player_0".into(),
            decisions: 3,
            tools: crate::tools::world::world_tool_definitions(),
            read_only_tools: Vec::new(),
            final_tools: Vec::new(),
            due_tools: Vec::new(),
            steps: vec![],
            sections: Default::default(),
        }
    }

    #[test]
    fn stable_parts_first_the_situation_last() {
        let request = request(
            &context(),
            &RequestOptions {
                model: "m".into(),
                stream: true,
                ..RequestOptions::default()
            },
        );
        // The rules, the same for every agent, then who this one is (the end of the prefix).
        let [rules, identity] = request.system.as_slice() else {
            panic!("two blocks: {:?}", request.system)
        };
        assert!(rules.shared && !rules.cache);
        assert!(rules.text.starts_with(CONTRACT));
        assert!(!identity.shared && identity.cache);
        assert!(
            identity
                .text
                .starts_with("You are Mira (agent_001), the baker in a game world.")
        );
        assert!(identity.text.contains("You bake bread and gossip."));
        let mut other = context();
        other.agent_id = "agent_002".into();
        other.name = "Bram".into();
        other.prompt = "You forge.".into();
        assert_eq!(
            super::request(&other, &RequestOptions::default()).system[0],
            *rules
        );
        let system = system_prompt(&context());
        assert!(system.starts_with(CONTRACT) && system.ends_with("You bake bread and gossip."));
        assert!(
            !system.contains("Any bread left?"),
            "what changes is not in the prefix"
        );
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["collaborate", "complete_task", "move", "speak", "wait"]
        );
        let [ModelMessage::User { text }] = request.messages.as_slice() else {
            panic!("one user message: {:?}", request.messages)
        };
        assert!(text.starts_with("Analyze situation and decide next action"));
        assert_eq!(
            text,
            "Analyze situation and decide next action\n\nYou are at (10, 20).\nNo task.\n\
             Near: agent_002 Bram (smith) at (12, 20), 2 away.\n\
             Just now, player_0 (player_0) to you: \"Any bread left?\""
        );
        assert!(system.contains("The world spans x 0 to 100 and y 0 to 100."));
        // Two decisions of one agent share the system prompt and the tools exactly.
        let mut later = context();
        later.incoming.clear();
        later.position = Position::new(11.0, 20.0);
        let again = super::request(&later, &RequestOptions::default());
        assert_eq!(again.system, request.system);
        assert_eq!(again.tools, request.tools);
    }

    #[test]
    fn observations_come_before_the_lines_to_answer() {
        let mut ctx = context();
        ctx.observations = vec!["The cellar door is locked.".into()];
        ctx.movement = Some(crate::moves::MoveStatus {
            move_id: 3,
            to: Position::new(4.0, 5.0),
            outcome: Some(crate::moves::MoveOutcome::Blocked(
                "the gate is shut".into(),
            )),
        });
        let request = request(&ctx, &RequestOptions::default());
        let [ModelMessage::User { text }] = request.messages.as_slice() else {
            panic!("one user message: {:?}", request.messages)
        };
        assert!(
            text.ends_with(
                "\nYou could not get to (4, 5): the gate is shut\n\
                 You notice: The cellar door is locked.\n\
                 Just now, player_0 (player_0) to you: \"Any bread left?\""
            ),
            "{text}"
        );
    }

    #[test]
    fn what_a_client_can_grow_stays_within_its_budget() {
        let mut ctx = context();
        let long = |i: usize| format!("{i:02} {}", "o".repeat(1_997));
        ctx.observations = (0..32).map(long).collect();
        ctx.incoming = (0..40)
            .map(|i| IncomingMessage {
                content: format!("{i:02} {}", "m".repeat(3_997)),
                ..ctx.incoming[0].clone()
            })
            .collect();
        let text = situation(&ctx);
        let budgets = budget::OBSERVATIONS_TOKENS + budget::INCOMING_TOKENS;
        assert!(
            budget::tokens(&text) <= budgets + 200,
            "{} tokens",
            budget::tokens(&text)
        );
        // The newest are shown, and the earlier ones counted.
        assert!(text.contains("You notice: 31 "), "the newest observation");
        assert!(!text.contains("You notice: 29 "));
        assert!(text.contains("(… and 31 earlier observations, not shown)\nYou notice: 31 "));
        assert!(text.contains("(… and 39 earlier lines to you, not shown)"));
        assert!(text.contains("to you: \"39 "));
    }

    fn call(id: &str, tool: &str, args: Value) -> ToolCall {
        ToolCall::new(id, tool, args)
    }

    #[test]
    fn a_repair_round_carries_the_failure_feedback_as_error_results() {
        let mut ctx = context();
        let reply = BrainReply {
            assistant_text: String::new(),
            dialog_type: String::new(),
            tool_calls: vec![
                call("c1", "fly", json!({})),
                call("c2", "move", json!("{\"x\": 1,")),
                call("c3", "wait", json!({})),
            ],
        };
        ctx.steps.push(DecisionStep {
            failed_calls: vec![
                FailedCall::new(
                    &reply.tool_calls[0],
                    FailureReason::ToolNotAllowed,
                    "no tool named 'fly'",
                ),
                FailedCall::new(
                    &reply.tool_calls[1],
                    FailureReason::InvalidJson,
                    "not an object",
                ),
            ],
            reply,
            ..DecisionStep::default()
        });
        let request = request(&ctx, &RequestOptions::default());
        assert_eq!(request.messages.len(), 5);
        let ModelMessage::Assistant { tool_calls, .. } = &request.messages[1] else {
            panic!()
        };
        assert_eq!(
            tool_calls[1].arguments, "{\"x\": 1,",
            "broken arguments as sent"
        );
        let results: Vec<(String, bool)> = request.messages[2..]
            .iter()
            .map(|m| match m {
                ModelMessage::ToolResult {
                    content, is_error, ..
                } => (content.clone(), *is_error),
                other => panic!("{other:?}"),
            })
            .collect();
        let first: Value = serde_json::from_str(&results[0].0).unwrap();
        assert_eq!(first["status"], "rejected");
        assert_eq!(first["reason"], "tool_not_allowed");
        assert!(results[0].1 && results[1].1);
        assert!(results[2].0.contains("not_run") && !results[2].1);
    }

    #[test]
    fn a_read_only_round_carries_the_results_and_a_silent_answer_a_note() {
        let mut ctx = context();
        ctx.steps.push(DecisionStep {
            reply: BrainReply {
                tool_calls: vec![call("c1", "legal_chess_moves", json!({"fen": "x"}))],
                ..BrainReply::default()
            },
            results: vec![CallResult {
                id: "c1".into(),
                tool: "legal_chess_moves".into(),
                result: json!({"movesUci": ["e2e4"]}),
                is_error: false,
            }],
            ..DecisionStep::default()
        });
        ctx.steps.push(DecisionStep {
            reply: BrainReply::default(),
            problem: Some("the answer has no tool calls and no text".into()),
            ..DecisionStep::default()
        });
        let request = request(&ctx, &RequestOptions::default());
        let ModelMessage::ToolResult {
            content, is_error, ..
        } = &request.messages[2]
        else {
            panic!()
        };
        assert_eq!(content, "{\"movesUci\":[\"e2e4\"]}");
        assert!(!is_error);
        let ModelMessage::User { text } = request.messages.last().unwrap() else {
            panic!()
        };
        assert!(text.contains("no tool calls and no text"));
    }
}
