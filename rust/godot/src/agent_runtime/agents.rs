//! [AgentRuntime]'s agents: spawning and stopping them, what the player says to them, their
//! tasks, moves, pauses and observations, and what can be read of them (states, conversations,
//! decisions, stored agents), with the game clock and the token budget.

use std::panic::{AssertUnwindSafe, catch_unwind};

use agents_core::bus::BusMessage;
use agents_core::memory::AgentRecord;
use agents_core::moves::MoveEnd;
use agents_core::protocol::requests::{
    AgentTerminateRequest, AssignTask, CompleteTask, FinishMove, Observe, SendMessage,
    SetTokenBudget,
};
use agents_core::runtime::{AgentConfig as CoreConfig, AgentSnapshot};
use godot::prelude::*;
use serde_json::Value;

use super::{AgentRuntime, INVALID_CONFIG, clamp_i64, failure, guarded};
use crate::agent_brain::AgentBrain;
use crate::agent_config::AgentConfig;
use crate::convert;
use crate::guard::put;

/// Reads an [AgentConfig] resource or a Dictionary (see [method AgentRuntime.spawn_agent]).
pub(super) fn config_from_variant(config: &Variant) -> Result<CoreConfig, String> {
    match config.get_type() {
        VariantType::OBJECT => {
            let resource = config.try_to::<Gd<AgentConfig>>().map_err(|_| {
                "spawn_agent wants an AgentConfig or a Dictionary, got an Object of another \
                 class (or a freed one)"
                    .to_string()
            })?;
            resource.bind().to_core()
        }
        VariantType::DICTIONARY => {
            let mut dict = config
                .try_to::<VarDictionary>()
                .map_err(|e| format!("invalid agent config: {e}"))?
                .duplicate_shallow();
            // `brain` (or `cli_backend`) may be an AgentBrain resource.
            let mut brain_object = None;
            for key in ["brain", "cli_backend"] {
                if let Some(value) = dict.get(key)
                    && value.get_type() == VariantType::OBJECT
                {
                    let brain = value.try_to::<Gd<AgentBrain>>().map_err(|_| {
                        format!(
                            "invalid agent config: {key} must be a name, a Dictionary or an \
                             AgentBrain, got an Object of another class"
                        )
                    })?;
                    brain_object = Some(brain.bind().to_core()?);
                    dict.erase(key);
                }
            }
            let mut map = convert::dictionary_to_json(&dict)
                .map_err(|e| format!("invalid agent config: {e}"))?;
            if let Some(spec) = brain_object {
                map.insert(
                    "brain".into(),
                    serde_json::to_value(spec).map_err(|e| format!("invalid brain: {e}"))?,
                );
            }
            // A brain object's files as paths of this machine, as from an AgentBrain.
            if let Some(Value::Object(brain)) = map.get_mut("brain") {
                let provider = brain
                    .get("provider")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                crate::packed_model::localize_brain(&provider, brain);
            }
            // Godot code tends to write "" or null for "not set".
            map.retain(|key, value| match value {
                Value::Null => false,
                Value::String(s) => {
                    !(s.trim().is_empty()
                        && matches!(key.as_str(), "agent_id" | "brain" | "cli_backend"))
                }
                _ => true,
            });
            CoreConfig::from_json(&Value::Object(map))
        }
        other => Err(format!(
            "spawn_agent wants an AgentConfig or a Dictionary, got {}",
            other.godot_type_name()
        )),
    }
}

/// A snapshot as the Dictionary [method AgentRuntime.get_agent_state] returns.
pub(super) fn snapshot_to_dictionary(s: &AgentSnapshot) -> VarDictionary {
    let mut d = VarDictionary::new();
    put(&mut d, "agent_id", s.agent_id.to_variant());
    put(&mut d, "name", s.name.to_variant());
    put(&mut d, "role", s.role.to_variant());
    put(&mut d, "brain", s.brain.to_variant());
    put(&mut d, "state", s.state.as_str().to_variant());
    put(
        &mut d,
        "position",
        convert::position_to_vector2(s.position).to_variant(),
    );
    let (task, task_id) = s
        .current_task
        .as_ref()
        .map_or((String::new(), 0), |t| (t.task_name.clone(), t.id));
    put(&mut d, "current_task", task.to_variant());
    put(&mut d, "current_task_id", task_id.to_variant());
    d
}

/// An `AgentReplied` as [signal AgentRuntime.agent_replied]'s `reply`: `text`, `actions`,
/// `error` (`{code, message}`, or empty).
pub(crate) fn reply_to_dictionary(message: &BusMessage) -> VarDictionary {
    let mut d = VarDictionary::new();
    let BusMessage::AgentReplied {
        text,
        actions,
        error,
        ..
    } = message
    else {
        return d;
    };
    put(&mut d, "text", text.to_variant());
    put(&mut d, "actions", rows_to_array(actions).to_variant());
    let error = error
        .as_ref()
        .map(convert::serialize_to_dictionary)
        .unwrap_or_default();
    put(&mut d, "error", error.to_variant());
    d
}

/// A stored agent as a Dictionary, `position` as a Vector2.
pub(super) fn record_to_dictionary(r: &AgentRecord) -> VarDictionary {
    let mut d = convert::serialize_to_dictionary(r);
    put(
        &mut d,
        "position",
        convert::position_to_vector2(r.position).to_variant(),
    );
    d
}

pub(crate) fn rows_to_array<T: serde::Serialize>(rows: &[T]) -> Array<VarDictionary> {
    let mut out = Array::new();
    for row in rows {
        out.push(&convert::serialize_to_dictionary(row));
    }
    out
}

#[godot_api(secondary)]
impl AgentRuntime {
    /// Spawns an agent and returns its id (`agent_001`, …), or `""` on an error.
    ///
    /// [param config] is an [AgentConfig] or a Dictionary with the keys `name`, `role`, `prompt`,
    /// `brain` (or `cli_backend`), `initial_position` (a Vector2 or `{x, y}`),
    /// `idle_think_seconds`, `thinking_seconds`, `speaking_seconds`, `hearing_radius`, `seed`
    /// (int or String), `agent_id` and `script` (replies the `scripted` brain gives first, each
    /// `{assistant_text, dialog_type, tool_calls}`) — all optional; unknown keys are an error. With `agent_id`
    /// naming a stored agent, that agent resumes with its history (its stored name, role, … fill
    /// the keys left out). [signal agent_spawned] follows on a later frame.
    #[func]
    pub fn spawn_agent(&mut self, config: Variant) -> GString {
        let config = match guarded("spawn_agent", || {
            config_from_variant(&config).map_err(|m| (INVALID_CONFIG, m))
        }) {
            Ok(c) => c,
            Err((code, message)) => {
                self.report("", code, &message);
                return GString::new();
            }
        };
        let agent = config.agent_id.clone().unwrap_or_default();
        self.call_runtime(&agent, "spawn_agent", |rt| {
            rt.spawn(config).map_err(failure)
        })
        .map(|id| GString::from(id.as_str()))
        .unwrap_or_default()
    }

    /// Stops an agent for good: [signal agent_removed] with reason `terminated` follows, and
    /// [member resume_agents] will not bring it back (spawning with its `agent_id` still does).
    /// Returns `false` for an unknown agent.
    #[func]
    pub fn terminate_agent(&mut self, agent_id: GString) -> bool {
        let id = agent_id.to_string();
        self.call_request(
            &id,
            "terminate_agent",
            AgentTerminateRequest {
                agent_id: id.clone(),
            },
        )
        .is_ok()
    }

    /// Finishes the move [param move_id] of a running agent (from [signal agent_move_requested]):
    /// it arrived (an empty [param blocked_reason]), or it could not get there and
    /// [param blocked_reason] says why ("the door is locked"). The agent's next decision is
    /// told; [signal agent_move_finished] follows. Returns `false` (and [signal agent_error],
    /// `unknown_move`) for a move that a newer one replaced or that finished already.
    /// ```gdscript
    /// @onready var runtime: AgentRuntime = $AgentRuntime
    /// var npcs := {}   # agent id → its Node2D
    ///
    /// func _on_agent_move_requested(agent_id: String, move_id: int, _from: Vector2, to: Vector2) -> void:
    ///     var npc: Node2D = npcs[agent_id]
    ///     var tween := npc.create_tween()
    ///     tween.tween_property(npc, "position", to, 1.0)
    ///     tween.finished.connect(func(): runtime.finish_move(agent_id, move_id))
    /// ```
    #[func]
    pub fn finish_move(
        &mut self,
        agent_id: GString,
        move_id: i64,
        #[opt(default = "")] blocked_reason: GString,
    ) -> bool {
        let id = agent_id.to_string();
        let reason = blocked_reason.to_string();
        let blocked = !reason.trim().is_empty();
        let request = FinishMove {
            agent_id: id.clone(),
            move_id: u64::try_from(move_id).unwrap_or(0),
            outcome: if blocked {
                MoveEnd::Blocked
            } else {
                MoveEnd::Arrived
            },
            reason: blocked.then_some(reason),
        };
        self.call_request(&id, "finish_move", request).is_ok()
    }

    /// Tells a running agent what it perceives ([param text]: "The cellar door is locked."):
    /// the line is shown to its next decision, once. It is not a message — the agent neither
    /// decides because of it nor answers it. The newest 32 wait. Returns `false` for an agent
    /// that is not running, or a text that is empty or longer than 2,000 characters (a
    /// memory's length).
    #[func]
    pub fn observe(&mut self, agent_id: GString, text: GString) -> bool {
        let id = agent_id.to_string();
        let text = text.to_string();
        let request = Observe {
            agent_id: id.clone(),
            text,
        };
        self.call_request(&id, "observe", request).is_ok()
    }

    /// Pauses ([param paused] `true`) or resumes a running agent's autonomous loop. A paused
    /// agent decides nothing on its own — its idle time passes, its app's news waits — but still
    /// listens and answers [method send_message]; resuming makes it decide at once. The editor's
    /// Agents debugger tab does the same. Returns `false` for an agent that is not running.
    /// ```gdscript
    /// var runtime: AgentRuntime = $AgentRuntime
    /// var id: String = runtime.list_agents()[0]
    /// runtime.set_agent_paused(id, true)   # hold it still during a cutscene
    /// ```
    #[func]
    pub fn set_agent_paused(&mut self, agent_id: GString, paused: bool) -> bool {
        let id = agent_id.to_string();
        self.call_runtime(&id, "set_agent_paused", |rt| {
            rt.set_paused(&id, paused).map_err(failure)
        })
        .is_ok()
    }

    /// Whether a running agent's autonomous loop is paused ([method set_agent_paused]); `false`
    /// for an agent that is not running.
    #[func]
    pub fn is_agent_paused(&self, agent_id: GString) -> bool {
        self.runtime
            .as_ref()
            .and_then(|rt| rt.is_paused(&agent_id.to_string()).ok())
            .unwrap_or(false)
    }

    /// A running agent's last decisions (at most 20, oldest first), as the Agents debugger
    /// shows them: Dictionaries with `number`, `started_at`, `trigger` (`message`,
    /// `autonomous` or `campaign_turn`), `context` (a one-line summary of what it saw), `calls`
    /// (an Array of `{id, tool, args, outcome, detail}`, `outcome` being `done`, `failed` or
    /// `refused`), `spoken` (an Array of lines), `failure` (present when the decision failed),
    /// `latency_ms`, `model_calls`, `input_tokens`, `output_tokens`, `repairs` and, when the
    /// contract check sent calls back for repair, `rejected` (those calls, as in `calls`, each
    /// `detail` being `reason: message`). Kept in
    /// memory while the agent runs. Empty for an agent that is not running.
    #[func]
    pub fn get_recent_decisions(&mut self, agent_id: GString) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        self.call_runtime(&id, "get_recent_decisions", |rt| {
            rt.recent_decisions(&id).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// A running agent's state: `agent_id`, `name`, `role`, `brain`, `state` (`idle`,
    /// `listening`, `thinking` or `speaking`), `position` (Vector2), `current_task` (the task it
    /// works on, `""` if none) and `current_task_id` (`0` if none). Empty for an agent that is
    /// not running.
    #[func]
    pub fn get_agent_state(&self, agent_id: GString) -> VarDictionary {
        let id = agent_id.to_string();
        self.runtime
            .as_ref()
            .and_then(|rt| {
                catch_unwind(AssertUnwindSafe(|| rt.state(&id)))
                    .ok()
                    .flatten()
            })
            .map(|s| snapshot_to_dictionary(&s))
            .unwrap_or_default()
    }

    /// The ids of the running agents, in id order (`agent_002` before `agent_010`).
    #[func]
    pub fn list_agents(&self) -> PackedStringArray {
        let ids = self
            .runtime
            .as_ref()
            .and_then(|rt| catch_unwind(AssertUnwindSafe(|| rt.agent_ids())).ok())
            .unwrap_or_default();
        convert::strings_to_packed(&ids)
    }

    /// [method get_agent_state] of every running agent, in id order.
    #[func]
    pub fn get_agent_states(&self) -> Array<VarDictionary> {
        let mut out = Array::new();
        for s in self.snapshots() {
            out.push(&snapshot_to_dictionary(&s));
        }
        out
    }

    /// Says [param text] to an agent as the player ([member player_id]). The agent listens,
    /// thinks and answers with [signal agent_said] addressed to the player. Returns the line's
    /// message id ([signal agent_replied] names it), or `0` for an unknown agent, an empty or
    /// too long text ([method get_last_error]) — as [method AgentNode.say] does.
    #[func]
    pub fn say(&mut self, agent_id: GString, text: GString) -> i64 {
        let id = agent_id.to_string();
        let text = text.to_string();
        let request = SendMessage {
            agent_id: id.clone(),
            content: text,
            sender: None,
        };
        self.call_request(&id, "say", request)
            .map_or(0, |reply| reply.message_id)
    }

    /// Deprecated: use [method say], which returns the line's message id. Says [param text] to
    /// an agent as the player; `false` on an error.
    #[func]
    pub fn send_message(&mut self, agent_id: GString, text: GString) -> bool {
        self.say(agent_id, text) != 0
    }

    /// Assigns the task [param task_name] to a running agent; returns the task id ([signal
    /// task_assigned] follows), or `0` on an error.
    #[func]
    pub fn assign_task(&mut self, agent_id: GString, task_name: GString) -> i64 {
        let id = agent_id.to_string();
        let task = task_name.to_string();
        let request = AssignTask {
            agent_id: id.clone(),
            task_name: task,
        };
        self.call_request(&id, "assign_task", request)
            .map_or(0, |reply| reply.task.id)
    }

    /// Marks a task completed ([signal task_completed] follows). Returns `false` for an unknown
    /// or already completed task.
    #[func]
    pub fn complete_task(&mut self, task_id: i64) -> bool {
        self.call_request("", "complete_task", CompleteTask { task_id })
            .is_ok()
    }

    /// The last [param limit] lines of an agent's conversation memory, oldest first, as
    /// Dictionaries `{id, agent_id, timestamp, sender, content, recipient}` (`recipient`: an id,
    /// several joined with `,`, or `null`). Works for stored agents that are not running.
    #[func]
    pub fn get_conversation(
        &mut self,
        agent_id: GString,
        #[opt(default = 50)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "get_conversation", |rt| {
            rt.conversation(&id, limit).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// An agent's tasks as Dictionaries
    /// `{id, agent_id, task_name, status, created_at, completed_at}` (`status` `assigned` or
    /// `completed`; `completed_at` `null` while open).
    #[func]
    pub fn get_tasks(&mut self, agent_id: GString) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        self.call_runtime(&id, "get_tasks", |rt| rt.tasks(&id).map_err(failure))
            .map(|rows| rows_to_array(&rows))
            .unwrap_or_default()
    }

    /// The last [param limit] state changes of an agent, oldest first, as Dictionaries
    /// `{id, agent_id, old_state, new_state, timestamp}`.
    #[func]
    pub fn get_state_history(
        &mut self,
        agent_id: GString,
        #[opt(default = 100)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "get_state_history", |rt| {
            rt.state_history(&id, limit).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// The last [param limit] model calls of an agent (its `brain_calls` trace), oldest first, as
    /// Dictionaries with `id`, `agent_id`, `provider`, `model`, `started_at`, `latency_ms`,
    /// `input_tokens`, `output_tokens`, `cached_tokens`, `outcome`, `repairs`, `error_code`,
    /// `prompt` and `reply`. `outcome` is
    /// `ok`, `invalid_reply`, `error` or `cancelled`; `prompt` and `reply` are `null` unless the
    /// brain keeps them (`trace_prompts`). Empty for brains that call no model (`scripted`).
    #[func]
    pub fn get_agent_trace(
        &mut self,
        agent_id: GString,
        #[opt(default = 100)] limit: i64,
    ) -> Array<VarDictionary> {
        let id = agent_id.to_string();
        let limit = usize::try_from(limit.max(0)).unwrap_or(usize::MAX);
        self.call_runtime(&id, "get_agent_trace", |rt| {
            rt.agent_trace(&id, limit).map_err(failure)
        })
        .map(|rows| rows_to_array(&rows))
        .unwrap_or_default()
    }

    /// Every agent stored in the database, running or not, as Dictionaries with `agent_id`,
    /// `name`, `role`, `prompt`, `brain`, `config`, `position` (a Vector2), `state`,
    /// `created_at`, `removed_at` (set once terminated) and, for one that [member resume_agents]
    /// could not start, `waiting_for` (`{reason, message}`: `reason` is `api_key`, `brain`,
    /// `model_file` or `other`).
    #[func]
    pub fn get_stored_agents(&mut self) -> Array<VarDictionary> {
        self.call_runtime("", "get_stored_agents", |rt| {
            let records = rt.stored_agents().map_err(failure)?;
            Ok(records
                .into_iter()
                .map(|r| {
                    let waiting = rt.waiting_for(&r.agent_id);
                    (r, waiting)
                })
                .collect::<Vec<_>>())
        })
        .map(|records| {
            let mut out = Array::new();
            for (r, waiting) in &records {
                let mut d = record_to_dictionary(r);
                if let Some(waiting) = waiting {
                    put(
                        &mut d,
                        "waiting_for",
                        convert::serialize_to_dictionary(waiting).to_variant(),
                    );
                }
                out.push(&d);
            }
            out
        })
        .unwrap_or_default()
    }

    /// Sets, raises, lowers or removes a token budget ([param limit] ≤ 0: no budget): the whole
    /// runtime's, or with [param agent_id] a running agent's. An agent stopped by a spent budget
    /// (it reported `budget_exhausted`) thinks again once the budget allows. Returns `false` for
    /// an unknown agent.
    #[func]
    pub fn set_token_budget(&mut self, limit: i64, #[opt(default = "")] agent_id: GString) -> bool {
        let id = agent_id.to_string();
        let limit = u64::try_from(limit).ok().filter(|&l| l > 0);
        if id.is_empty() {
            self.runtime_token_budget = limit.map_or(0, clamp_i64);
        }
        let request = SetTokenBudget {
            agent_id: (!id.is_empty()).then(|| id.clone()),
            limit,
        };
        self.call_request(&id, "set_token_budget", request).is_ok()
    }

    /// Hands the runtime the API key for the environment variable [param variable] (the
    /// [member AgentBrain.api_key_env], or `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`), for a game
    /// that asks its player for a key. The key stays in this process's memory: it is preferred
    /// to the variable, never saved, logged or shown, and gone when the game quits. Agents
    /// spawned from now on use it. An empty [param key] removes it.
    #[func]
    pub fn set_api_key(&mut self, variable: GString, key: GString) -> bool {
        let variable = variable.to_string();
        let key = key.to_string();
        self.call_runtime("", "set_api_key", |rt| {
            rt.set_api_key(&variable, &key);
            Ok(())
        })
        .is_ok()
    }

    /// The game time now, in seconds: what memories are stamped with and their recency is
    /// measured in. It runs at [member game_time_scale] and starts where the database's
    /// memories left off; `0.0` while the runtime is not running.
    #[func]
    pub fn get_game_time(&self) -> f64 {
        self.runtime.as_ref().map_or(0.0, |rt| rt.game_time())
    }

    /// Sets the game time, in seconds (a day is 86,400); it runs on from there. Returns
    /// `false` when the runtime is not running or the number is not finite.
    #[func]
    pub fn set_game_time(&mut self, seconds: f64) -> bool {
        self.call_runtime("", "set_game_time", |rt| {
            rt.set_game_time(seconds).map_err(failure)
        })
        .is_ok()
    }
}

impl AgentRuntime {
    pub(super) fn snapshots(&self) -> Vec<AgentSnapshot> {
        let Some(rt) = &self.runtime else {
            return Vec::new();
        };
        catch_unwind(AssertUnwindSafe(|| rt.list())).unwrap_or_default()
    }
}
