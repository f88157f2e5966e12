//! Configuration: one agent's [`AgentConfig`] and the runtime's [`RuntimeOptions`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::brain::{BrainChoice, BrainSpec};
use crate::geometry::{Position, WorldBounds};

/// How one agent is set up. Every field but `name` is optional; unset fields take the runtime's
/// defaults ([`RuntimeOptions`]). Unknown JSON fields are an error (a typo should not be silently
/// ignored). `cli_backend` is accepted as another name of `brain`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Resume this stored agent (`agent_007`) instead of creating a new one. The stored name, role,
    /// prompt, brain and last position are used for fields left unset here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::MAX_AGENT_ID_CHARS))]
    pub agent_id: Option<String>,
    /// The game's stable name for this agent (`"baker_tom"`), so that the same character gets
    /// the same stored agent, and its memory, in every run. A spawn with a key resumes the
    /// stored agent that has it (the newest one not terminated), or creates one that keeps it.
    /// At most one running agent has a given key (`already_running`). Ignored when `agent_id`
    /// names the agent to resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::MAX_AGENT_KEY_CHARS))]
    pub key: Option<String>,
    /// Whom the agent thinks for: set by a server to the connection that spawns it, never
    /// read from or written to JSON (`None`: the game itself). A model shared between parties
    /// gives them turns ([`crate::brain::BrainSettings::party`]).
    #[serde(skip)]
    #[schemars(skip)]
    pub party: Option<String>,
    /// Display name (`"Mira"`). Defaults to the agent id.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_NAME_CHARS))]
    pub name: String,
    /// What the agent is for (`"baker"`, `"helper"`); part of its brain's context.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_ROLE_CHARS))]
    pub role: String,
    /// The role prompt given to the brain.
    #[serde(default)]
    #[schemars(length(max = crate::limits::MAX_PROMPT_CHARS))]
    pub prompt: String,
    /// Which brain decides for this agent: a name (`"scripted"`, a profile, `"claude"`) or a
    /// brain object (`{"provider": "openai", "model": …}`, [`BrainChoice`]). Unset: the
    /// runtime's default brain.
    #[serde(
        default,
        alias = "cli_backend",
        skip_serializing_if = "Option::is_none"
    )]
    pub brain: Option<BrainChoice>,
    /// Where the agent starts. Unset: the stored position when resuming, else the world's centre.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_position: Option<Position>,
    /// Whether the agent decides on its own when idle (unset: yes). `false`: it decides only
    /// when spoken to (as a paused agent does), so an NPC nobody talks to spends no tokens.
    /// Stored: a resumed agent keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autonomous: Option<bool>,
    /// Who carries out its moves: `instant` (unset: the runtime puts it at the target at once)
    /// or `requested` (the game does, after `agent_move_requested`, and reports how it ended
    /// with `finish_move`; [`crate::moves`]). Not carried over when the agent is resumed: give
    /// it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub movement: Option<crate::moves::Movement>,
    /// Seconds idle before an autonomous decision, at most a day. Unset: the runtime's
    /// `idle_think_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = crate::limits::MAX_IDLE_THINK_SECONDS))]
    pub idle_think_seconds: Option<f64>,
    /// The scripted brain's thinking latency in seconds, at most 600. Unset: the runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = crate::limits::MAX_ACT_SECONDS))]
    pub thinking_seconds: Option<f64>,
    /// How long a line takes to say, in seconds, at most 600. Unset: the runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = crate::limits::MAX_ACT_SECONDS))]
    pub speaking_seconds: Option<f64>,
    /// Distance within which other agents count as nearby (and hear unaddressed speech).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hearing_radius: Option<f64>,
    /// Seed for the agent's brain (string or integer). Unset: derived from the runtime seed and
    /// the agent id, so a run is reproducible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<serde_json::Value>,
    /// The tool sets this agent may call (`world`, `games`, or a set the application
    /// registered). Unset: `["world"]`. Two sets with a tool of the same name cannot be combined
    /// (names are scoped per agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::MAX_TOOL_SETS))]
    #[schemars(inner(length(min = 1, max = crate::limits::MAX_TOOL_SET_NAME_CHARS)))]
    pub tools: Option<Vec<String>>,
    /// An app to attach the agent to as it spawns ([`crate::apps`]): it must be registered and
    /// have no agent yet (`unknown_app`, `app_attached`, and no id is used). Not carried over
    /// when the agent is resumed: give it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::MAX_APP_ID_CHARS))]
    pub app_id: Option<String>,
    /// Replies the `scripted` brain gives first, in order, before it decides on its own (a
    /// cut-scene, a tutorial line, an exact test scenario). Each is the tool-call contract
    /// `{assistant_text, dialog_type, tool_calls}`. Not carried over when the agent is resumed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::MAX_SCRIPT_REPLIES))]
    pub script: Vec<crate::brain::BrainReply>,
    /// How this agent forms and recalls memories ([`crate::mind::MemorySettings`]). Unset: the
    /// runtime's. Stored: a resumed agent keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::mind::MemorySettings>,
}

impl AgentConfig {
    /// A config with a name and a role, everything else default.
    pub fn named(name: impl Into<String>, role: impl Into<String>) -> Self {
        AgentConfig {
            name: name.into(),
            role: role.into(),
            ..Default::default()
        }
    }

    /// Parses a JSON object (the protocol's / Godot Dictionary's shape). Errors name the field.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        serde_json::from_value(value.clone()).map_err(|e| format!("invalid agent config: {e}"))
    }

    /// Checks the numeric fields (non-negative, finite seconds and radius, the seconds within
    /// [`crate::limits::MAX_IDLE_THINK_SECONDS`] and [`crate::limits::MAX_ACT_SECONDS`]; a
    /// finite position), the
    /// seed's type, and the lengths of the texts ([`crate::limits`]). Errors name the field.
    pub fn validate(&self) -> Result<(), String> {
        use crate::limits::{MAX_ACT_SECONDS, MAX_IDLE_THINK_SECONDS};
        let secs = [
            ("hearing_radius", self.hearing_radius, f64::MAX),
            (
                "idle_think_seconds",
                self.idle_think_seconds,
                MAX_IDLE_THINK_SECONDS,
            ),
            ("thinking_seconds", self.thinking_seconds, MAX_ACT_SECONDS),
            ("speaking_seconds", self.speaking_seconds, MAX_ACT_SECONDS),
        ];
        for (field, v, max) in secs {
            if let Some(v) = v
                && (!v.is_finite() || v < 0.0)
            {
                return Err(format!("{field} must be a non-negative number, got {v}"));
            }
            if let Some(v) = v
                && v > max
            {
                return Err(format!("{field} must be at most {max} seconds, got {v}"));
            }
        }
        if let Some(p) = self.initial_position
            && !p.is_finite()
        {
            return Err("initial_position must have finite x and y".into());
        }
        if let Some(seed) = &self.seed
            && !(seed.is_string() || seed.is_i64() || seed.is_u64())
        {
            return Err("seed must be a string or an integer".into());
        }
        use crate::limits::*;
        if let Some(seed) = self.seed.as_ref().and_then(|s| s.as_str()) {
            check_chars("seed", seed, MAX_SEED_CHARS)?;
        }
        if let Some(id) = &self.agent_id {
            check_chars("agent_id", id, MAX_AGENT_ID_CHARS)?;
        }
        if let Some(app_id) = &self.app_id {
            check_chars("app_id", app_id, MAX_APP_ID_CHARS)?;
        }
        if let Some(key) = &self.key {
            if key.trim().is_empty() {
                return Err("key must not be empty (leave it out for an agent without one)".into());
            }
            check_chars("key", key, MAX_AGENT_KEY_CHARS)?;
        }
        check_chars("name", &self.name, MAX_NAME_CHARS)?;
        check_chars("role", &self.role, MAX_ROLE_CHARS)?;
        check_chars("prompt", &self.prompt, MAX_PROMPT_CHARS)?;
        match &self.brain {
            Some(BrainChoice::Named(name)) => check_chars("brain", name, MAX_BRAIN_NAME_CHARS)?,
            Some(BrainChoice::Spec(spec)) => spec.validate_shared()?,
            None => {}
        }
        if let Some(sets) = &self.tools {
            if sets.len() > MAX_TOOL_SETS {
                return Err(format!(
                    "tools has {} tool sets; the limit is {MAX_TOOL_SETS}",
                    sets.len()
                ));
            }
            for (i, set) in sets.iter().enumerate() {
                if set.trim().is_empty() {
                    return Err(format!("tools[{i}] must name a tool set"));
                }
                check_chars(&format!("tools[{i}]"), set, MAX_TOOL_SET_NAME_CHARS)?;
            }
        }
        if self.script.len() > MAX_SCRIPT_REPLIES {
            return Err(format!(
                "script has {} replies; the limit is {MAX_SCRIPT_REPLIES}",
                self.script.len()
            ));
        }
        if let Some(memory) = &self.memory {
            memory.validate()?;
        }
        Ok(())
    }
}

/// Runtime-wide settings. `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeOptions {
    /// The SQLite database file (created if missing).
    pub database: PathBuf,
    /// Seconds an agent stays idle before deciding on its own (default 5).
    pub idle_think_seconds: f64,
    /// The world's rectangle (default 0..100 × 0..100).
    pub bounds: WorldBounds,
    /// The brain agents use when their config names none: a profile of `brain_profiles` or a
    /// registered brain (default `scripted`).
    pub default_brain: String,
    /// Named brain objects agents can refer to by name (`"brain": "fast"`), from
    /// `agents-server serve --brains FILE` or the Godot `AgentBrain` resources. A profile
    /// shadows a registered brain of the same name.
    pub brain_profiles: std::collections::BTreeMap<String, BrainSpec>,
    /// The scripted brain's thinking latency in seconds (default 0.8).
    pub thinking_seconds: f64,
    /// Seconds an agent spends Speaking a line (default 1.5).
    pub speaking_seconds: f64,
    /// Distance within which agents are "nearby" (default 15).
    pub hearing_radius: f64,
    /// The id player messages are sent as (default `player_0`).
    pub player_id: String,
    /// Base seed; each agent's brain seed derives from it and the agent id (default 0).
    pub seed: u64,
    /// Queue length of each bus subscription before it lags (default 1024).
    pub bus_capacity: usize,
    /// Worker threads of the runtime's own tokio runtime (default 2).
    pub worker_threads: usize,
    /// How many times one decision may send a brain's invalid answer back to it to be repaired
    /// (an unknown tool, arguments that break the schema, a silent answer) before the decision
    /// fails with `brain_invalid_reply` (default 2).
    pub max_repairs: u32,
    /// How many model calls may be in flight at once, runtime-wide (default 8); the others
    /// queue.
    pub max_concurrent_model_calls: usize,
    /// How many of those may go to one endpoint (the scheme, host and port of a brain's
    /// `base_url`) at once (default 6): a slow or hanging provider cannot take every permit
    /// from the agents of the others. See [`crate::brain::gate`].
    pub max_concurrent_model_calls_per_endpoint: usize,
    /// Tokens all model brains together may spend (as providers report them); `None`: no
    /// limit (the default). See [`crate::brain::gate`].
    pub token_budget: Option<u64>,
    /// How many brain answers one decision may take in all: the results of read-only calls go
    /// back to the brain, which answers again, up to this many times (default 4).
    pub max_steps: u32,
    /// How many agents may run at once (default 10,000); a spawn beyond is refused with
    /// `limit_reached` until one is terminated.
    pub max_agents: usize,
    /// Where `campaign_load` finds campaign files by relative path (`None`: only inline
    /// campaigns can be loaded over the protocol). See [`Runtime::load_campaign`].
    pub campaign_dir: Option<PathBuf>,
    /// How agents form and recall memories unless their config says otherwise
    /// ([`crate::mind::MemorySettings`]; default: on, 6 memories within 240 tokens).
    pub memory: crate::mind::MemorySettings,
    /// The embeddings endpoint that makes vectors of every agent's memories, for recall by
    /// meaning as well as by words ([`crate::mind::EmbeddingSettings`]; default none: words
    /// only). The game's or the operator's, never a client's.
    pub embeddings: Option<crate::mind::EmbeddingSettings>,
    /// Game seconds per real second of the game clock memories are stamped with (default 1).
    /// A game with a calendar of its own sets the time instead ([`super::Runtime::set_game_time`]).
    pub game_time_scale: f64,
}

/// The default of [`RuntimeOptions::max_agents`].
pub const DEFAULT_MAX_AGENTS: usize = 10_000;

/// The player's id unless the options name another.
pub use crate::brain::DEFAULT_PLAYER_ID;

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            database: PathBuf::from("agents.db"),
            idle_think_seconds: 5.0,
            bounds: WorldBounds::default(),
            default_brain: "scripted".into(),
            brain_profiles: Default::default(),
            thinking_seconds: 0.8,
            speaking_seconds: 1.5,
            hearing_radius: 15.0,
            player_id: DEFAULT_PLAYER_ID.into(),
            seed: 0,
            bus_capacity: 1024,
            worker_threads: 2,
            max_concurrent_model_calls: crate::brain::gate::DEFAULT_MAX_CONCURRENT_MODEL_CALLS,
            max_concurrent_model_calls_per_endpoint:
                crate::brain::gate::DEFAULT_MAX_CONCURRENT_CALLS_PER_ENDPOINT,
            token_budget: None,
            max_repairs: 2,
            max_steps: 4,
            max_agents: DEFAULT_MAX_AGENTS,
            campaign_dir: None,
            memory: Default::default(),
            embeddings: None,
            game_time_scale: 1.0,
        }
    }
}

impl RuntimeOptions {
    /// Defaults with the given database file.
    pub fn with_database(path: impl Into<PathBuf>) -> Self {
        RuntimeOptions {
            database: path.into(),
            ..Default::default()
        }
    }

    /// Checks every field; the message names the bad one.
    pub fn validate(&self) -> Result<(), String> {
        for (field, v) in [
            ("idle_think_seconds", self.idle_think_seconds),
            ("thinking_seconds", self.thinking_seconds),
            ("speaking_seconds", self.speaking_seconds),
            ("hearing_radius", self.hearing_radius),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{field} must be a non-negative number, got {v}"));
            }
        }
        self.bounds.validate()?;
        if self.default_brain.trim().is_empty() {
            return Err("default_brain must not be empty".into());
        }
        for (name, spec) in &self.brain_profiles {
            if name.trim().is_empty() {
                return Err("brain_profiles: a profile name must not be empty".into());
            }
            spec.validate()
                .map_err(|e| format!("brain_profiles.{name}: {e}"))?;
        }
        if self.player_id.trim().is_empty() {
            return Err("player_id must not be empty".into());
        }
        if self.bus_capacity == 0 {
            return Err("bus_capacity must be at least 1".into());
        }
        if self.worker_threads == 0 {
            return Err("worker_threads must be at least 1".into());
        }
        if self.max_concurrent_model_calls == 0 {
            return Err("max_concurrent_model_calls must be at least 1".into());
        }
        if self.max_concurrent_model_calls_per_endpoint == 0 {
            return Err("max_concurrent_model_calls_per_endpoint must be at least 1".into());
        }
        if self.max_agents == 0 {
            return Err("max_agents must be at least 1".into());
        }
        if self.max_steps == 0 {
            return Err("max_steps must be at least 1".into());
        }
        self.memory.validate()?;
        if let Some(embeddings) = &self.embeddings {
            embeddings.validate()?;
        }
        if !self.game_time_scale.is_finite() || self.game_time_scale < 0.0 {
            return Err(format!(
                "game_time_scale must be a non-negative number, got {}",
                self.game_time_scale
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn position_serializes_whole_numbers_as_integers() {
        assert_eq!(
            serde_json::to_value(Position::new(12.0, 8.0)).unwrap(),
            json!({"x": 12, "y": 8})
        );
        assert_eq!(
            serde_json::to_value(Position::new(1.5, -2.0)).unwrap(),
            json!({"x": 1.5, "y": -2})
        );
        let p: Position = serde_json::from_value(json!({"x": 10, "y": 10.5})).unwrap();
        assert_eq!(p, Position::new(10.0, 10.5));
        assert!(serde_json::from_value::<Position>(json!({"x": "1", "y": 2})).is_err());
        assert_eq!(Position::new(3.0, 4.5).to_string(), "(3, 4.5)");
    }

    #[test]
    fn spec_spawn_config_parses_with_cli_backend_alias() {
        let c = AgentConfig::from_json(&json!({
            "name": "Assistant", "role": "helper", "cli_backend": "claude",
            "initial_position": {"x": 10, "y": 10}
        }))
        .unwrap();
        assert_eq!(c.name, "Assistant");
        assert_eq!(c.brain.as_ref().and_then(|b| b.name()), Some("claude"));
        assert_eq!(c.initial_position, Some(Position::new(10.0, 10.0)));
        c.validate().unwrap();
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = AgentConfig::from_json(&json!({"name": "A", "nmae": "typo"})).unwrap_err();
        assert!(e.contains("unknown field `nmae`"), "{e}");
        let e = AgentConfig::from_json(&json!({"name": 5})).unwrap_err();
        assert!(e.contains("invalid type"), "{e}");
        let c = AgentConfig {
            idle_think_seconds: Some(-1.0),
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().contains("idle_think_seconds"));
        // Durations that would keep an agent waiting, thinking or speaking for ever.
        for (config, says) in [
            (
                AgentConfig {
                    thinking_seconds: Some(1e20),
                    ..Default::default()
                },
                "thinking_seconds must be at most 600 seconds, got 100000000000000000000",
            ),
            (
                AgentConfig {
                    speaking_seconds: Some(1e300),
                    ..Default::default()
                },
                "speaking_seconds must be at most 600 seconds",
            ),
            (
                AgentConfig {
                    idle_think_seconds: Some(86_400.5),
                    ..Default::default()
                },
                "idle_think_seconds must be at most 86400 seconds",
            ),
        ] {
            let e = config.validate().unwrap_err();
            assert!(e.contains(says), "{e}");
        }
        let at_the_limits = AgentConfig {
            idle_think_seconds: Some(86_400.0),
            thinking_seconds: Some(600.0),
            speaking_seconds: Some(600.0),
            ..Default::default()
        };
        assert_eq!(at_the_limits.validate(), Ok(()));
        let c = AgentConfig {
            seed: Some(json!(1.5)),
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().contains("seed"));
    }

    #[test]
    fn bounds_contain_clamp_and_validate() {
        let b = WorldBounds::from_rect(0.0, 0.0, 10.0, 5.0).unwrap();
        assert!(b.contains(Position::new(10.0, 5.0)));
        assert!(!b.contains(Position::new(10.1, 5.0)));
        assert!(!b.contains(Position::new(f64::NAN, 1.0)));
        assert_eq!(b.clamp(Position::new(-3.0, 9.0)), Position::new(0.0, 5.0));
        assert!(WorldBounds::from_rect(0.0, 0.0, -1.0, 5.0).is_err());
        assert!(RuntimeOptions::default().validate().is_ok());
        let o = RuntimeOptions {
            bus_capacity: 0,
            ..Default::default()
        };
        assert!(o.validate().unwrap_err().contains("bus_capacity"));
    }
}
