//! The GM tools on a campaign: `move`, `move_options`, `hp_delta`, `map_generate`
//! (their arguments, checks and reasons: `docs/campaigns.md`).
//!
//! A batch runs in order for the **turn actor** (the active actor unless the turn names another
//! party member; one outside the party fails the whole turn). Calls are independent: a failure
//! stops nothing, and each call sees what the earlier ones did, permission changes included. For
//! each call the first failing check decides:
//!
//! 1. the allowlist: a tool not in it is `rejected` / `tool_not_allowed`;
//! 2. the turn actor's `character_state` (no record counts as `alive`): a state the rules do not
//!    know is `rejected` / `invalid_actor_state`; a state that forbids the call is `rejected` /
//!    `actor_state_restricted` — `alive` may call everything, `dying` only `hp_delta` with an
//!    integer `delta` > 0 on itself, `unconscious`, `restrained_permanent` and `dead` nothing;
//! 3. the arguments and their target: `error` / `invalid_args` (also an allowlisted tool that
//!    does not exist).
//!
//! A failed call changes nothing. JSON booleans and floats are never integers. Every applied call
//! is logged as `{tool, args (as received), result, timestamp}`; the failures come back as
//! `{"failed_calls": [{id, tool, status, reason, message}]}`, or `null` when nothing failed.
//!
//! `hp_delta` with `rules.hp_zero_ends_game` (the default) makes a target at hp 0 `dying` and a
//! `dying` target healed above 0 `alive`. A `dead` target stays `dead` at hp 0: death is not
//! undone by damage (the reference's text names no transition out of `dead`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::load::strict_int;
use super::{CHARACTER_STATES, Campaign, CampaignError};
use crate::contract::{FailedCall, FailureReason, ToolCall};

crate::wire_enum! {
    /// One GM tool (its name in calls and in the allowlist).
    pub enum GmTool: "GM tool" {
        /// Moves the turn actor one step along a directed edge.
        Move = "move",
        /// Lists where an actor can go (read-only).
        MoveOptions = "move_options",
        /// Changes an actor's hp.
        HpDelta = "hp_delta",
        /// Generates a layer of areas.
        MapGenerate = "map_generate",
    }
}

impl GmTool {
    /// True for the tools that change nothing.
    pub fn is_read_only(self) -> bool {
        self == GmTool::MoveOptions
    }

    /// What the model is told the tool does.
    pub fn description(self) -> &'static str {
        match self {
            GmTool::Move => {
                "Move the turn actor one step to an area reachable from its current area \
                 (reachability is one-way). actor_id must be the active actor; never pass \
                 from_area_id (the backend derives it). Narration alone moves no one."
            }
            GmTool::MoveOptions => {
                "Read-only: list the areas one step away from an actor's current area (default: \
                 the active actor). Use it when the target is unclear or the player asks where \
                 they can go; it moves no one."
            }
            GmTool::HpDelta => {
                "Change a character's hit points by an integer delta (negative for damage, \
                 positive for healing), with the cause. hp never goes below 0; at 0 the \
                 character is dying, and healing a dying character makes it alive."
            }
            GmTool::MapGenerate => {
                "Generate a connected layer of new areas: under parent_area_id (an existing \
                 area, linked both ways to each new area), or a root layer with \
                 parent_area_id null. Same seed, same layer."
            }
        }
    }

    /// Its arguments' JSON Schema, as the model is shown it.
    pub fn parameters(self) -> Value {
        match self {
            GmTool::Move => json!({
                "type": "object",
                "properties": {
                    "actor_id": {"type": "string", "description": "The active actor's id."},
                    "to_area_id": {"type": "string", "description": "An area reachable in one step."},
                },
                "required": ["actor_id", "to_area_id"],
                "additionalProperties": false,
            }),
            GmTool::MoveOptions => json!({
                "type": "object",
                "properties": {
                    "actor_id": {"type": ["string", "null"],
                                 "description": "Whose options (default: the active actor)."},
                },
                "additionalProperties": false,
            }),
            GmTool::HpDelta => json!({
                "type": "object",
                "properties": {
                    "target_character_id": {"type": "string", "description": "Whose hp changes."},
                    "delta": {"type": "integer", "description": "The change: -3 for damage, 2 for healing."},
                    "cause": {"type": "string", "description": "Why (may be empty)."},
                },
                "required": ["target_character_id", "delta", "cause"],
                "additionalProperties": false,
            }),
            GmTool::MapGenerate => json!({
                "type": "object",
                "properties": {
                    "parent_area_id": {"type": ["string", "null"],
                                       "description": "The area the layer lies in, or null for a root layer."},
                    "theme": {"type": ["string", "null"], "description": "Names the areas (default Generated)."},
                    "constraints": {
                        "type": ["object", "null"],
                        "properties": {
                            "size": {"type": "integer", "minimum": 1, "maximum": 30,
                                     "description": "How many areas (default 6)."},
                            "seed": {"type": ["string", "null"], "description": "Same seed, same layer."},
                        },
                        "additionalProperties": false,
                    },
                    "size": {"type": "integer", "minimum": 1, "maximum": 30,
                             "description": "How many areas, when there is no constraints object."},
                    "seed": {"type": ["string", "null"],
                             "description": "The seed, when there is no constraints object."},
                },
                "required": ["parent_area_id"],
                "additionalProperties": false,
            }),
        }
    }
}

/// One applied call, as the log keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppliedAction {
    /// The tool.
    pub tool: String,
    /// The arguments exactly as received.
    pub args: Value,
    /// What it did.
    pub result: Value,
    /// When (UTC ISO 8601 with microseconds, `+00:00`).
    pub timestamp: String,
}

/// The failures of a batch: `{"failed_calls": [...]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolFeedback {
    /// Each refused call.
    pub failed_calls: Vec<FailedCall>,
}

/// What an applied call did to the campaign, for front ends (Godot signals, protocol events).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// An actor moved.
    ActorMoved {
        /// Who.
        actor_id: String,
        /// From where.
        from_area_id: String,
        /// To where.
        to_area_id: String,
    },
    /// An actor's hp changed (also to the same value: a hit at 0).
    HpChanged {
        /// Whose.
        actor_id: String,
        /// Before.
        old_hp: i64,
        /// After.
        new_hp: i64,
    },
    /// An actor's character state changed.
    ActorStateChanged {
        /// Whose.
        actor_id: String,
        /// Before.
        old_state: String,
        /// After.
        new_state: String,
    },
    /// A layer of areas was generated.
    MapGenerated {
        /// The new areas.
        created_area_ids: Vec<String>,
        /// Their parent (`None`: a root layer).
        parent_area_id: Option<String>,
    },
}

impl Effect {
    /// The effect in words ("pc_001 moved from the gate to the hall").
    pub fn describe(&self) -> String {
        match self {
            Effect::ActorMoved {
                actor_id,
                from_area_id,
                to_area_id,
            } => format!("{actor_id} moved from {from_area_id} to {to_area_id}"),
            Effect::HpChanged {
                actor_id,
                old_hp,
                new_hp,
            } => format!("{actor_id}'s hp went from {old_hp} to {new_hp}"),
            Effect::ActorStateChanged {
                actor_id,
                new_state,
                ..
            } => format!("{actor_id} is now {new_state}"),
            Effect::MapGenerated {
                created_area_ids, ..
            } => format!("{} new areas appeared", created_area_ids.len()),
        }
    }
}

/// What a batch did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchOutcome {
    /// The applied calls, in order.
    pub applied_actions: Vec<AppliedAction>,
    /// The failures, `null` when nothing failed.
    pub tool_feedback: Option<ToolFeedback>,
    /// What the applied calls did, in order (not part of the contract's output).
    #[serde(skip)]
    pub effects: Vec<Effect>,
}

impl BatchOutcome {
    /// `{"applied_actions": [...], "tool_feedback": {...} | null}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// True when a call changed the campaign (a read-only call changes nothing).
    pub fn changed_anything(&self) -> bool {
        changes_campaign(&self.applied_actions)
    }
}

/// True when one of `actions` changed the campaign (a read-only call changes nothing).
pub fn changes_campaign(actions: &[AppliedAction]) -> bool {
    actions
        .iter()
        .any(|a| a.tool.parse::<GmTool>().is_ok_and(|t| !t.is_read_only()))
}

/// A call that failed a check: its reason and what exactly is wrong.
type Refusal = (FailureReason, String);

fn invalid(message: impl Into<String>) -> Refusal {
    (FailureReason::InvalidArgs, message.into())
}

/// A string argument that must be there.
fn required_str<'a>(tool: GmTool, args: &'a Value, key: &str) -> Result<&'a str, Refusal> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => Err(invalid(format!("{tool}: {key} is required"))),
        Some(other) => Err(invalid(format!(
            "{tool}: {key} must be a string, got {}",
            crate::json_kind::json_kind(other)
        ))),
    }
}

impl Campaign {
    /// The turn's actor: `requested` when given (it must be a party member), else the active
    /// actor.
    pub fn turn_actor(&self, requested: Option<&str>) -> Result<String, CampaignError> {
        match requested.filter(|r| !r.is_empty()) {
            None => Ok(self.selected.active_actor_id.clone()),
            Some(id) if self.selected.party_character_ids.iter().any(|p| p == id) => {
                Ok(id.to_string())
            }
            Some(id) => Err(CampaignError::NotInParty {
                actor: id.to_string(),
                party: self.selected.party_character_ids.join(", "),
            }),
        }
    }

    /// Runs `calls` in order for the turn actor (`actor`, default the active actor). Fails as a
    /// whole only when the turn actor is not in the party; each call otherwise is applied or
    /// reported in the feedback.
    pub fn run_calls(
        &mut self,
        calls: &[ToolCall],
        actor: Option<&str>,
    ) -> Result<BatchOutcome, CampaignError> {
        let turn_actor = self.turn_actor(actor)?;
        let mut outcome = BatchOutcome::default();
        let mut failed = Vec::new();
        for call in calls {
            match self.run_call(call, &turn_actor) {
                Ok((applied, effects)) => {
                    outcome.effects.extend(effects);
                    outcome.applied_actions.push(applied);
                }
                Err((reason, message)) => failed.push(FailedCall::new(call, reason, message)),
            }
        }
        if !failed.is_empty() {
            outcome.tool_feedback = Some(ToolFeedback {
                failed_calls: failed,
            });
        }
        Ok(outcome)
    }

    /// One call for `turn_actor`, through the three checks in order; changes nothing when it
    /// fails.
    fn run_call(
        &mut self,
        call: &ToolCall,
        turn_actor: &str,
    ) -> Result<(AppliedAction, Vec<Effect>), Refusal> {
        if !self.allowlist.contains(&call.tool) {
            return Err((
                FailureReason::ToolNotAllowed,
                format!(
                    "'{}' is not in the campaign's allowlist ({})",
                    call.tool,
                    self.allowlist.join(", ")
                ),
            ));
        }
        self.permit(call, turn_actor)?;
        let tool: GmTool = call
            .tool
            .parse()
            .map_err(|e| invalid(format!("{e}; the allowlist names it")))?;
        let (result, effects) = match tool {
            GmTool::Move => self.apply_move(&call.args, turn_actor)?,
            GmTool::MoveOptions => (self.move_options(&call.args, turn_actor)?, Vec::new()),
            GmTool::HpDelta => self.apply_hp_delta(&call.args)?,
            GmTool::MapGenerate => {
                let result = super::generate::map_generate(self, &call.args).map_err(invalid)?;
                let effect = Effect::MapGenerated {
                    created_area_ids: serde_json::from_value(result["created_area_ids"].clone())
                        .unwrap_or_default(),
                    parent_area_id: result["root_parent_area_id"].as_str().map(str::to_string),
                };
                (result, vec![effect])
            }
        };
        let applied = AppliedAction {
            tool: call.tool.clone(),
            args: call.args.clone(),
            result,
            timestamp: crate::time::now_iso_micros(),
        };
        Ok((applied, effects))
    }

    /// Check 2: what the turn actor's state allows.
    fn permit(&self, call: &ToolCall, turn_actor: &str) -> Result<(), Refusal> {
        let state = self.state_of(turn_actor);
        if !CHARACTER_STATES.contains(&state) {
            return Err((
                FailureReason::InvalidActorState,
                format!(
                    "{turn_actor}'s character_state '{state}' is not one of {}",
                    CHARACTER_STATES.join(", ")
                ),
            ));
        }
        let allowed = match state {
            "alive" => true,
            "dying" => {
                call.tool == GmTool::HpDelta.as_str()
                    && strict_int(&call.args["delta"]).is_some_and(|d| d > 0)
                    && call.args["target_character_id"].as_str() == Some(turn_actor)
            }
            _ => false,
        };
        if allowed {
            return Ok(());
        }
        let what = if state == "dying" {
            "may only heal itself (hp_delta with an integer delta above 0 on itself)"
        } else {
            "may not act"
        };
        Err((
            FailureReason::ActorStateRestricted,
            format!("{turn_actor} is {state} and {what}"),
        ))
    }

    fn apply_move(
        &mut self,
        args: &Value,
        turn_actor: &str,
    ) -> Result<(Value, Vec<Effect>), Refusal> {
        let tool = GmTool::Move;
        if !args.is_object() {
            return Err(invalid("move: args must be an object"));
        }
        if args.get("from_area_id").is_some() {
            return Err(invalid(
                "move: from_area_id must not be given (the backend derives it from the actor's position)",
            ));
        }
        let actor_id = required_str(tool, args, "actor_id")?;
        let to = required_str(tool, args, "to_area_id")?;
        if actor_id != turn_actor {
            return Err(invalid(format!(
                "move: actor_id '{actor_id}' is not the turn actor '{turn_actor}'"
            )));
        }
        let from = self
            .actors
            .get(actor_id)
            .and_then(|a| a.position.clone())
            .ok_or_else(|| invalid(format!("move: {actor_id} has no position")))?;
        let reachable = self
            .map
            .areas
            .get(&from)
            .map(|a| a.reachable_area_ids.as_slice())
            .unwrap_or_default();
        if !reachable.iter().any(|r| r == to) {
            return Err(invalid(format!(
                "move: {to} is not reachable from {from} (reachable: {})",
                if reachable.is_empty() {
                    "none".to_string()
                } else {
                    reachable.join(", ")
                }
            )));
        }
        if let Some(actor) = self.actors.get_mut(actor_id) {
            actor.position = Some(to.to_string());
        }
        let effect = Effect::ActorMoved {
            actor_id: actor_id.to_string(),
            from_area_id: from.clone(),
            to_area_id: to.to_string(),
        };
        Ok((
            json!({"from_area_id": from, "to_area_id": to}),
            vec![effect],
        ))
    }

    fn move_options(&self, args: &Value, turn_actor: &str) -> Result<Value, Refusal> {
        if !args.is_object() {
            return Err(invalid("move_options: args must be an object"));
        }
        let actor_id = match args.get("actor_id") {
            None | Some(Value::Null) => turn_actor,
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(invalid(format!(
                    "move_options: actor_id must be a string or null, got {}",
                    crate::json_kind::json_kind(other)
                )));
            }
        };
        let actor = self
            .actors
            .get(actor_id)
            .ok_or_else(|| invalid(format!("move_options: no actor '{actor_id}'")))?;
        let area = actor
            .position
            .as_ref()
            .and_then(|p| self.map.areas.get(p))
            .ok_or_else(|| invalid(format!("move_options: {actor_id} has no position")))?;
        let options: Vec<Value> = area
            .reachable_area_ids
            .iter()
            .map(|id| {
                let name = self.map.areas.get(id).map_or("", |a| a.name.as_str());
                json!({"to_area_id": id, "name": name})
            })
            .collect();
        Ok(json!({"options": options}))
    }

    fn apply_hp_delta(&mut self, args: &Value) -> Result<(Value, Vec<Effect>), Refusal> {
        let tool = GmTool::HpDelta;
        if !args.is_object() {
            return Err(invalid("hp_delta: args must be an object"));
        }
        let target = required_str(tool, args, "target_character_id")?;
        let delta = match args.get("delta") {
            None => return Err(invalid("hp_delta: delta is required")),
            Some(v) => strict_int(v).ok_or_else(|| {
                invalid(format!(
                    "hp_delta: delta must be an integer, got {}",
                    match v {
                        Value::Number(n) => n.to_string(),
                        other => crate::json_kind::json_kind(other).to_string(),
                    }
                ))
            })?,
        };
        required_str(tool, args, "cause")?;
        let ends_game = self.hp_zero_ends_game();
        let actor = self
            .actors
            .get_mut(target)
            .ok_or_else(|| invalid(format!("hp_delta: no character '{target}'")))?;
        let (old_hp, old_state) = (actor.hp, actor.character_state.clone());
        let new_hp = actor.hp.saturating_add(delta).max(0);
        actor.hp = new_hp;
        if ends_game {
            if new_hp == 0 && actor.character_state != "dead" {
                actor.character_state = "dying".into();
            } else if new_hp > 0 && actor.character_state == "dying" {
                actor.character_state = "alive".into();
            }
        }
        let mut effects = vec![Effect::HpChanged {
            actor_id: target.to_string(),
            old_hp,
            new_hp,
        }];
        if actor.character_state != old_state {
            effects.push(Effect::ActorStateChanged {
                actor_id: target.to_string(),
                old_state,
                new_state: actor.character_state.clone(),
            });
        }
        Ok((json!({"new_hp": new_hp}), effects))
    }
}
