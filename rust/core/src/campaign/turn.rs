//! A GM turn: the model's answer follows the tool-call contract (`docs/campaigns.md`, "A GM
//! turn").
//!
//! User input and the turn actor go in; the GM's brain answers the contract
//! `{assistant_text, dialog_type, tool_calls}` from a [`GmView`] of the campaign; the calls run
//! ([`Campaign::run_calls`]); one [`TurnEntry`] comes out, the line the reference writes to
//! `turn_log.jsonl`. The caller saves the campaign when [`TurnEntry::changed`] says a call was
//! applied.
//!
//! - **Tolerant reading.** A brain's text that is not the contract is the GM's line as it is; a
//!   contract object with some calls that are not calls (no `tool` string, `args` not an object)
//!   keeps the good ones and reports the dropped ones in `dropped_calls`.
//! - **`dialog_type`**: trimmed and lower-cased; one of `scene_description`, `action_prompt`,
//!   `resolution_summary`, `rule_explanation`, or else `scene_description` with
//!   `dialog_type_source: "fallback"` (`"model"` otherwise).
//! - **Repair.** Before anything is applied, the answer is tried on a copy of the campaign. Failed
//!   calls go back to the brain as the contract's `failed_calls` feedback, and an answer with no
//!   calls and no text as the anti-silent problem; the brain answers again, up to
//!   [`MAX_REPAIRS`] times. Then the last answer runs for real (its failures in
//!   `tool_feedback`). A turn never ends with no calls and no text: a GM that stays silent gets
//!   [`SILENT_FALLBACK`].

mod scripted_gm;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::gm::{AppliedAction, ToolFeedback};
pub use super::ground::gm_tools;
use super::{Campaign, CampaignError};
use crate::brain::{
    Brain, BrainContext, BrainReply, DecisionStep, Framing, ScriptedPlay, Section, ToolCall,
};
use crate::contract::FailedCall;

/// The dialog types of a GM line.
pub const DIALOG_TYPES: [&str; 4] = [
    "scene_description",
    "action_prompt",
    "resolution_summary",
    "rule_explanation",
];

/// How many times a GM's answer is sent back for repair.
pub const MAX_REPAIRS: usize = 2;

/// The GM's line when it stays silent after every repair.
pub const SILENT_FALLBACK: &str = "The game master pauses. What do you do next?";

/// The anti-silent problem sent back to a GM that answered nothing.
pub const SILENT_PROBLEM: &str = "tool_calls is empty and assistant_text is empty: answer with a non-empty GM response, or call a tool";

/// The tool-call contract's three examples, verbatim, for the model's instructions.
pub const EXAMPLES: &str = r#"Example 1 (move intent is explicit and IDs are known; assistant_text empty; actor_id/to_area_id must come from Context.selected.active_actor_id and the user's target; from_area_id is derived by the backend):
{"assistant_text":"","dialog_type":"scene_description","tool_calls":[{"id":"call_move_1","tool":"move","args":{"actor_id":"pc_001","to_area_id":"area_002"}}]}

Example 2 (target unclear or user asks where they can go; use move_options; no movement yet; actor_id should come from Context.selected.active_actor_id):
{"assistant_text":"No movement yet. I will fetch 1-hop options.","dialog_type":"scene_description","tool_calls":[{"id":"call_move_options_1","tool":"move_options","args":{"actor_id":"pc_001"}}]}

Example 3 (no tool call required; MUST respond with non-empty assistant_text):
{"assistant_text":"You are currently in area_002. The corridor is quiet. What do you do next?","dialog_type":"scene_description","tool_calls":[]}"#;

/// The GM's instructions: the output contract and its rules.
pub const GM_CONTRACT: &str = "\
You are the game master of a tabletop campaign. Answer with one JSON object: \
{\"assistant_text\": string, \"dialog_type\": one of scene_description, action_prompt, \
resolution_summary, rule_explanation, \"tool_calls\": [{\"id\", \"tool\", \"args\", \"reason\"}]}.
- Movement intent -> tool_calls must include `move`; assistant_text may be empty or a very short plan_note.
- Target unclear or user asks where they can go -> use `move_options`; explicitly state no movement yet.
- If tool_calls is empty -> assistant_text MUST be a non-empty GM response; must not claim completed movement.
- Movement occurs only when a `move` tool_call is executed; narration alone does not move characters.
- `move` takes actor_id (the active actor) and to_area_id; never pass from_area_id.
- Only the tools in Context.allowlist may be called. A refused call comes back as \
{id, tool, status, reason, message}: answer again with corrected calls.";

/// What the GM's brain sees of the campaign for one turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GmView {
    /// The campaign.
    pub campaign_id: String,
    /// Whose turn it is.
    pub turn_actor: String,
    /// What the player said.
    pub user_input: String,
    /// The context JSON: `selected` (with the turn actor as `active_actor_id`), `allowlist`,
    /// `map.areas`, `actors`, `goal`, `milestone`. Non-ASCII text stays as it is.
    pub context: Value,
}

impl GmView {
    /// The view of `campaign` for a turn of `turn_actor`.
    pub fn new(campaign: &Campaign, turn_actor: &str, user_input: &str) -> GmView {
        let full = campaign.to_json();
        let mut selected = full["selected"].clone();
        selected["active_actor_id"] = json!(turn_actor);
        GmView {
            campaign_id: campaign.id.clone(),
            turn_actor: turn_actor.to_string(),
            user_input: user_input.to_string(),
            context: json!({
                "selected": selected,
                "allowlist": full["allowlist"],
                "map": {"areas": full["map"]["areas"]},
                "actors": full["actors"],
                "goal": full["goal"],
                "milestone": full["milestone"],
            }),
        }
    }
}

/// A GM turn frames the whole decision: the GM's own prompt (the GM tool-call contract and its
/// examples, then who it is) and the turn as its situation (the context JSON, non-ASCII text
/// as it is; the turn actor; what the player said). Offline, the scripted brain runs the turn
/// with [`scripted_gm`].
impl Section for GmView {
    fn key(&self) -> &'static str {
        "campaign"
    }

    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn framing(&self, context: &BrainContext) -> Option<Framing> {
        let mut identity = format!(
            "You are {} ({}), the game master of campaign {}.",
            context.name, context.agent_id, self.campaign_id
        );
        if !context.prompt.trim().is_empty() {
            identity.push_str("\n\n");
            identity.push_str(context.prompt.trim());
        }
        let rules = format!("{GM_CONTRACT}\n\n{EXAMPLES}");
        let situation = format!(
            "Context: {}\nTurn actor: {}\nUser input: {}",
            self.context,
            self.turn_actor,
            serde_json::to_string(&self.user_input).unwrap_or_default()
        );
        Some(Framing {
            rules,
            identity,
            situation,
        })
    }

    fn scripted(&self, context: &BrainContext, play: &mut ScriptedPlay<'_>) -> Option<BrainReply> {
        Some(scripted_gm::decide(context, self, play))
    }

    fn summary(&self) -> Option<String> {
        Some(format!(
            "campaign '{}', turn of {}",
            self.campaign_id, self.turn_actor
        ))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Who the GM is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GmIdentity {
    /// Its agent id (`agent_001`), or any id for a GM outside a runtime.
    pub agent_id: String,
    /// Its name.
    pub name: String,
    /// Its role prompt (the campaign's tone, house rules).
    pub prompt: String,
}

/// One turn, as the log keeps it (a line of `turn_log.jsonl`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnEntry {
    /// `turn_0001`, …
    pub turn_id: String,
    /// When (UTC ISO 8601 with microseconds, `+00:00`).
    pub timestamp: String,
    /// What the player said.
    pub user_input: String,
    /// Whose turn it was.
    pub actor_id: String,
    /// The GM line's type.
    pub dialog_type: String,
    /// `model`, or `fallback` when the model's type was missing or unknown.
    pub dialog_type_source: String,
    /// The GM's line.
    pub assistant_text: String,
    /// The calls of the answer that ran, as parsed.
    pub tool_calls: Vec<ToolCall>,
    /// What was applied.
    pub applied_actions: Vec<AppliedAction>,
    /// What failed, `null` when nothing did.
    pub tool_feedback: Option<ToolFeedback>,
    /// After the turn: the active actor; positions, hp and states of every actor.
    pub state_summary: Value,
    /// What the applied calls did, one effect each (not in the log line).
    #[serde(skip)]
    pub effects: Vec<super::gm::Effect>,
    /// Calls of the answer that were not calls (dropped before anything ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_calls: Vec<String>,
    /// How many times the answer was sent back for repair.
    #[serde(default)]
    pub repairs: usize,
}

impl TurnEntry {
    /// True when a call changed the campaign (save it).
    pub fn changed(&self) -> bool {
        super::gm::changes_campaign(&self.applied_actions)
    }

    /// The entry as one JSON line (non-ASCII as it is).
    pub fn to_jsonl(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `turn_0001` for the first turn.
pub fn turn_id(number: u64) -> String {
    format!("turn_{number:04}")
}

/// The dialog type, and whether it came from the model (`model`) or is the fallback.
pub fn normalise_dialog_type(raw: &str) -> (String, &'static str) {
    let t = raw.trim().to_lowercase();
    if DIALOG_TYPES.contains(&t.as_str()) {
        (t, "model")
    } else {
        ("scene_description".into(), "fallback")
    }
}

/// Reads a GM's raw text as the contract, tolerating a model's mess: the answer and the calls
/// that were dropped (with why). Text that is not a contract object is the GM's line.
pub fn parse_answer(text: &str) -> (BrainReply, Vec<String>) {
    contract_object(text).unwrap_or_else(|| {
        (
            BrainReply {
                assistant_text: text.trim().to_string(),
                ..BrainReply::default()
            },
            Vec::new(),
        )
    })
}

/// The contract object in `text` (bare or in a code fence): one with `assistant_text` or
/// `tool_calls`, its good calls kept and the others reported.
fn contract_object(text: &str) -> Option<(BrainReply, Vec<String>)> {
    let body = crate::brain::llm::reply::unfenced(text);
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(body) else {
        return None;
    };
    if !(object.contains_key("assistant_text") || object.contains_key("tool_calls")) {
        return None;
    }
    let text_of = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut dropped = Vec::new();
    let mut calls = Vec::new();
    match object.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match call_from(item, i) {
                    Ok(call) => calls.push(call),
                    Err(why) => dropped.push(format!("tool_calls[{i}]: {why}")),
                }
            }
        }
        Some(other) => dropped.push(format!(
            "tool_calls: expected an array, got {}",
            crate::json_kind::json_kind(other)
        )),
    }
    Some((
        BrainReply {
            assistant_text: text_of("assistant_text"),
            dialog_type: text_of("dialog_type"),
            tool_calls: calls,
        },
        dropped,
    ))
}

/// A JSON array of tool calls (`[{id?, tool, args?, reason?}]`), strictly: the first element
/// that is not a call is the error, naming its index. A missing id becomes `call_NNN` (its
/// 1-based place).
pub fn parse_calls(value: &Value) -> Result<Vec<ToolCall>, String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "expected a JSON array of tool calls, got {}",
            crate::json_kind::json_kind(value)
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| call_from(item, i).map_err(|why| format!("call [{i}]: {why}")))
        .collect()
}

fn call_from(item: &Value, index: usize) -> Result<ToolCall, String> {
    let Value::Object(call) = item else {
        return Err(format!(
            "not an object ({})",
            crate::json_kind::json_kind(item)
        ));
    };
    let tool = call
        .get("tool")
        .and_then(Value::as_str)
        .ok_or("no tool name")?;
    let args = match call.get("args") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Object(a)) => Value::Object(a.clone()),
        Some(other) => {
            return Err(format!(
                "args of {tool} must be an object, got {}",
                crate::json_kind::json_kind(other)
            ));
        }
    };
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("call_{:03}", index + 1),
    };
    Ok(ToolCall {
        id,
        tool: tool.to_string(),
        args,
        reason: call
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A brain's answer with what is not a call kept out: a contract object the brain passed on as
/// text (a model that wrote JSON with a broken call) is read tolerantly, and a native call whose
/// arguments are not an object is dropped; both are reported.
fn usable(reply: BrainReply) -> (BrainReply, Vec<String>) {
    if reply.tool_calls.is_empty()
        && let Some(parsed) = contract_object(&reply.assistant_text)
    {
        return parsed;
    }
    let mut dropped = Vec::new();
    let calls = reply
        .tool_calls
        .into_iter()
        .filter(|c| {
            let ok = c.args.is_object();
            if !ok {
                dropped.push(format!("{} ({}): args must be a JSON object", c.id, c.tool));
            }
            ok
        })
        .collect();
    (
        BrainReply {
            tool_calls: calls,
            ..reply
        },
        dropped,
    )
}

/// The summary of the campaign after a turn.
pub fn state_summary(campaign: &Campaign) -> Value {
    let mut positions = BTreeMap::new();
    let mut hp = BTreeMap::new();
    let mut states = BTreeMap::new();
    for (id, actor) in &campaign.actors {
        positions.insert(id.clone(), json!(actor.position));
        hp.insert(id.clone(), json!(actor.hp));
        states.insert(id.clone(), json!(actor.character_state));
    }
    json!({
        "active_actor_id": campaign.selected.active_actor_id,
        "positions": positions,
        "hp": hp,
        "character_states": states,
    })
}

/// What a turn is asked.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRequest<'a> {
    /// The turn's number (1 for `turn_0001`).
    pub number: u64,
    /// What the player said.
    pub user_input: &'a str,
    /// The turn actor (a party member), or `None` for the active actor.
    pub actor: Option<&'a str>,
}

/// The GM's final answer for a turn, decided but not yet applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Decided {
    /// The turn actor.
    pub turn_actor: String,
    /// The answer to apply.
    pub reply: BrainReply,
    /// Calls of it that were not calls.
    pub dropped: Vec<String>,
    /// How many times it was sent back for repair.
    pub repairs: usize,
    /// The model calls behind the answers, in order, each with the repairs asked before it
    /// (empty for a brain that calls no model), for the `brain_calls` trace and the journal;
    /// `agent_id` is the GM's.
    pub model_calls: Vec<crate::memory::BrainCall>,
}

/// Runs one GM turn on `campaign` with `brain`: [`decide`] on the campaign as it is, then
/// [`finish`]. Fails only when the turn actor is not in the party or the brain cannot answer at
/// all (then nothing changed).
pub async fn take_turn(
    campaign: &mut Campaign,
    brain: &mut dyn Brain,
    gm: &GmIdentity,
    request: &TurnRequest<'_>,
) -> Result<TurnEntry, TurnError> {
    let decided = decide(campaign, brain, gm, request).await?;
    finish(campaign, decided, request)
}

/// Asks the GM's brain for its answer, repairing it against `campaign` (which is not changed:
/// answers are tried on copies).
pub async fn decide(
    campaign: &Campaign,
    brain: &mut dyn Brain,
    gm: &GmIdentity,
    request: &TurnRequest<'_>,
) -> Result<Decided, TurnError> {
    let turn_actor = campaign.turn_actor(request.actor)?;
    let view = GmView::new(campaign, &turn_actor, request.user_input);
    let mut context = gm_context(campaign, gm, view, &turn_actor);
    let mut repairs = 0;
    let mut model_calls = Vec::new();
    loop {
        let answer = brain.decide(&context).await;
        if let Some(mut call) = brain.take_call_report() {
            call.agent_id = gm.agent_id.clone();
            call.repairs = u32::try_from(repairs).unwrap_or(u32::MAX);
            model_calls.push(call);
        }
        let answer = answer.map_err(|e| TurnError::Brain(e.to_string()))?;
        let (reply, dropped) = usable(answer);
        let problem = (reply.tool_calls.is_empty() && reply.assistant_text.trim().is_empty())
            .then(|| SILENT_PROBLEM.to_string());
        let failed: Vec<FailedCall> = if reply.tool_calls.is_empty() {
            Vec::new()
        } else {
            let mut trial = campaign.clone();
            trial
                .run_calls(&reply.tool_calls, Some(&turn_actor))?
                .tool_feedback
                .map(|f| f.failed_calls)
                .unwrap_or_default()
        };
        if (failed.is_empty() && problem.is_none()) || repairs >= MAX_REPAIRS {
            return Ok(Decided {
                turn_actor,
                reply,
                dropped,
                repairs,
                model_calls,
            });
        }
        repairs += 1;
        context.steps.push(DecisionStep {
            reply,
            results: Vec::new(),
            failed_calls: failed,
            problem,
        });
    }
}

/// Applies a decided answer to `campaign` (as it is now) and makes the turn's entry.
pub fn finish(
    campaign: &mut Campaign,
    decided: Decided,
    request: &TurnRequest<'_>,
) -> Result<TurnEntry, TurnError> {
    let Decided {
        turn_actor,
        reply,
        dropped,
        repairs,
        model_calls: _,
    } = decided;
    let outcome = campaign.run_calls(&reply.tool_calls, Some(&turn_actor))?;
    let (dialog_type, mut source) = normalise_dialog_type(&reply.dialog_type);
    let mut text = reply.assistant_text.trim().to_string();
    if text.is_empty() && reply.tool_calls.is_empty() {
        text = SILENT_FALLBACK.to_string();
        source = "fallback";
    }
    Ok(TurnEntry {
        turn_id: turn_id(request.number),
        timestamp: crate::time::now_iso_micros(),
        user_input: request.user_input.to_string(),
        actor_id: turn_actor,
        dialog_type,
        dialog_type_source: source.to_string(),
        assistant_text: text,
        tool_calls: reply.tool_calls,
        applied_actions: outcome.applied_actions,
        tool_feedback: outcome.tool_feedback,
        state_summary: state_summary(campaign),
        effects: outcome.effects,
        dropped_calls: dropped,
        repairs,
    })
}

/// The brain's context for a GM turn: who the GM is, its tools, the campaign.
fn gm_context(
    campaign: &Campaign,
    gm: &GmIdentity,
    view: GmView,
    turn_actor: &str,
) -> BrainContext {
    let mut context = BrainContext::detached(&gm.agent_id, &gm.name);
    context.role = "game master".into();
    context.prompt = gm.prompt.clone();
    context.instruction = "Answer the player as the game master".into();
    context.tools = gm_tools(campaign, turn_actor);
    context.sections.put(view);
    context
}

/// Why a turn could not run.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The campaign refused the turn (a turn actor outside the party).
    #[error(transparent)]
    Campaign(#[from] CampaignError),
    /// The brain gave no answer (a model that is down, a spent budget).
    #[error("the GM's brain did not answer: {0}")]
    Brain(String),
}
