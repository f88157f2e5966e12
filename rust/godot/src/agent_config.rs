//! `AgentConfig`: one agent's set-up as a Godot resource (inspector-editable, savable as `.tres`).

use agents_core::brain::BrainChoice;
use agents_core::runtime::AgentConfig as CoreConfig;
use godot::classes::IResource;
use godot::prelude::*;
use godot::register::info::{PropertyHintInfo, PropertyInfo};
use serde_json::Value;

use crate::agent_brain::AgentBrain;
use crate::agent_memory::AgentMemory;
use crate::convert;

/// How one agent of an [AgentRuntime] is set up: its name, role, role prompt, brain, start
/// position and timings. Create one in the inspector (New Resource → AgentConfig), save it as a
/// `.tres` file, and pass it to [method AgentRuntime.spawn_agent]:
///
/// ```gdscript
/// var baker := AgentConfig.new()
/// baker.name = "Mira"
/// baker.role = "baker"
/// baker.initial_position = Vector2(20, 30)
/// var id: String = $AgentRuntime.spawn_agent(baker)   # "agent_001"
/// ```
///
/// Numeric fields set to a negative value (the default, `-1`) and text fields left empty take the
/// runtime's defaults (the [AgentRuntime] properties of the same name). Set [member agent_id] to
/// resume an agent stored in the runtime's database instead of creating a new one.
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct AgentConfig {
    /// Display name (`"Mira"`); empty: the agent id. At most 100 characters.
    #[export(placeholder = "the agent id")]
    name: GString,
    /// What the agent is for (`"baker"`, `"guard"`); part of its brain's context.
    #[export]
    role: GString,
    /// The role prompt given to the agent's brain.
    #[export(multiline)]
    prompt: GString,
    /// Which brain decides for this agent, by name: `"scripted"` (offline, deterministic for a
    /// seed), a profile of [member AgentRuntime.brain_profiles], `"claude"` (the command-line
    /// preset), or a brain the game registered. Empty: [member brain_config] if set, else the
    /// runtime's default. The protocol's `cli_backend` maps here.
    #[export_group(name = "Brain")]
    #[var(hint = ENUM_SUGGESTION, hint_string = "scripted,claude", usage_flags = [DEFAULT])]
    brain: GString,
    /// A brain object for this agent alone (provider, model, …); used when [member brain] is
    /// empty.
    #[export]
    brain_config: Option<Gd<AgentBrain>>,
    /// Where the agent starts (world units, inside [member AgentRuntime.world_bounds]); used when
    /// [member use_initial_position] is on.
    #[export_group(name = "Start")]
    #[export]
    initial_position: Vector2,
    /// When off, the agent starts at its stored position (resuming) or at the world's centre.
    #[export]
    #[init(val = true)]
    use_initial_position: bool,
    /// Whether the agent decides on its own when idle. Off: it decides only when spoken to, so
    /// an NPC nobody talks to spends no tokens. Stored with the agent: it resumes so.
    #[export_group(name = "Autonomy")]
    #[export]
    #[init(val = true)]
    autonomous: bool,
    /// Seconds idle before the agent decides on its own; negative: the runtime's
    /// [member AgentRuntime.idle_think_seconds].
    #[export(range = (-1.0, 600.0, 0.1, or_greater, suffix = "s"))]
    #[init(val = -1.0)]
    idle_think_seconds: f64,
    /// The scripted brain's thinking latency in seconds; negative: the runtime's
    /// [member AgentRuntime.thinking_seconds].
    #[export(range = (-1.0, 60.0, 0.05, or_greater, suffix = "s"))]
    #[init(val = -1.0)]
    thinking_seconds: f64,
    /// Seconds a line takes to say; negative: the runtime's [member AgentRuntime.speaking_seconds].
    #[export(range = (-1.0, 60.0, 0.05, or_greater, suffix = "s"))]
    #[init(val = -1.0)]
    speaking_seconds: f64,
    /// Distance within which other agents count as nearby (and hear unaddressed speech, world
    /// units); negative: the runtime's [member AgentRuntime.hearing_radius].
    #[export(range = (-1.0, 1000.0, 0.1, or_greater))]
    #[init(val = -1.0)]
    hearing_radius: f64,
    /// Seed of the agent's brain; `-1`: derived from the runtime's seed and the agent id, so runs
    /// repeat.
    #[export(range = (-1.0, 2147483647.0, 1.0, or_greater, hide_slider))]
    #[init(val = -1)]
    seed: i64,
    /// The tool sets the agent may call: `"world"` (move, wait, speak, collaborate,
    /// complete_task), `"games"` (every game tool), or a set the game registers with
    /// [method AgentRuntime.register_tool]. Empty: the world tools only. Two sets with a tool of
    /// the same name cannot be combined. The inspector suggests the built-in sets, the sets
    /// declared in the project setting `godot_agents/tool_sets` (declare there the sets your
    /// scripts register, so they can be picked here) and the sets registered so far.
    #[export_group(name = "Tools and Apps")]
    #[export]
    tool_sets: PackedStringArray,
    /// Empty: spawn a new agent (ids `agent_001`, `agent_002`, …). Set to a stored id to resume that
    /// agent with its history; fields left at their defaults then take the stored values.
    #[export(placeholder = "new agent")]
    agent_id: GString,
    /// The [member AgentApp.app_id] of an app to attach the agent to as it spawns (the app must
    /// be registered and have no agent yet, else the spawn fails). Empty: none.
    #[export]
    app_id: GString,
    /// Replies the `scripted` brain gives first, in order, before it decides on its own: a
    /// cut-scene, a tutorial line, an exact test. Each is a Dictionary of the tool-call
    /// contract: `assistant_text` (what it says), `tool_calls` (an Array of `{id, tool, args}`,
    /// such as a `move` with `args` `{x, y}`) and `dialog_type`. Not carried over when the
    /// agent is resumed.
    #[export]
    scripted_replies: Array<VarDictionary>,
    /// How this agent forms and recalls memories. Empty: [member AgentRuntime.memory]. Stored
    /// with the agent: it resumes so.
    #[export_group(name = "Memory")]
    #[export]
    memory: Option<Gd<AgentMemory>>,
}

/// A seconds / radius field: negative means "runtime default" (NaN is kept so that validation
/// reports it).
fn optional_number(v: f64) -> Option<f64> {
    if v.is_nan() || v >= 0.0 {
        Some(v)
    } else {
        None
    }
}

fn optional_text(s: &GString) -> Option<String> {
    let s = s.to_string();
    (!s.trim().is_empty()).then_some(s)
}

#[godot_api]
impl IResource for AgentConfig {
    /// [member tool_sets] suggests the sets the project knows (built-in, declared in the
    /// `godot_agents/tool_sets` project setting, registered in this process).
    fn on_validate_property(&self, property: &mut PropertyInfo) {
        if property.property_name == "tool_sets" {
            let (hint, hint_string) = crate::tool_set_names::property_hint();
            property.hint_info = PropertyHintInfo { hint, hint_string };
        }
    }
}

#[godot_api]
impl AgentConfig {
    /// The config in the runtime's Dictionary form (the shape [method AgentRuntime.spawn_agent]
    /// also accepts and the WebSocket protocol's `agent_config` uses): `name`, `role`, `prompt`,
    /// `autonomous`, and only the optional keys that are set (`brain`, `initial_position` as
    /// `{x, y}`, `idle_think_seconds`, `thinking_seconds`, `speaking_seconds`,
    /// `hearing_radius`, `seed`, `tools`, `agent_id`, `app_id`, `memory`).
    /// `brain` is the name, or the [member brain_config] object as a Dictionary. Empty when
    /// the brain config is invalid.
    #[func]
    pub fn to_dictionary(&self) -> VarDictionary {
        self.to_core()
            .map(|config| convert::serialize_to_dictionary(&config))
            .unwrap_or_default()
    }
}

impl AgentConfig {
    /// The core config this resource describes (validation is the runtime's job). Errors come
    /// from a [member brain_config] that cannot be read (a header that is not text).
    pub fn to_core(&self) -> Result<CoreConfig, String> {
        let brain = match (optional_text(&self.brain), &self.brain_config) {
            (Some(name), _) => Some(BrainChoice::Named(name)),
            (None, Some(config)) => Some(BrainChoice::from(config.bind().to_core()?)),
            (None, None) => None,
        };
        Ok(CoreConfig {
            agent_id: optional_text(&self.agent_id),
            name: self.name.to_string(),
            role: self.role.to_string(),
            prompt: self.prompt.to_string(),
            brain,
            initial_position: self
                .use_initial_position
                .then(|| convert::vector2_to_position(self.initial_position)),
            idle_think_seconds: optional_number(self.idle_think_seconds),
            thinking_seconds: optional_number(self.thinking_seconds),
            speaking_seconds: optional_number(self.speaking_seconds),
            hearing_radius: optional_number(self.hearing_radius),
            seed: (self.seed != -1).then(|| Value::from(self.seed)),
            tools: (!self.tool_sets.is_empty()).then(|| {
                self.tool_sets
                    .as_slice()
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            }),
            app_id: optional_text(&self.app_id),
            autonomous: Some(self.autonomous),
            script: self
                .scripted_replies
                .iter_shared()
                .enumerate()
                .map(|(i, reply)| {
                    let json = convert::dictionary_to_json(&reply)
                        .map_err(|e| format!("scripted_replies[{i}]: {e}"))?;
                    serde_json::from_value(Value::Object(json))
                        .map_err(|e| format!("scripted_replies[{i}]: {e}"))
                })
                .collect::<Result<_, String>>()?,
            memory: self.memory.as_ref().map(|m| m.bind().to_core()),
            ..CoreConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_numbers_mean_default_but_nan_is_kept_for_validation() {
        assert_eq!(optional_number(-1.0), None);
        assert_eq!(optional_number(-0.5), None);
        assert_eq!(optional_number(0.0), Some(0.0));
        assert_eq!(optional_number(2.5), Some(2.5));
        assert!(optional_number(f64::NAN).is_some_and(f64::is_nan));
    }
}
