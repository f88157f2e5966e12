//! Spawning an agent, or resuming a stored one: [`Runtime::spawn`].
//!
//! A spawn runs in three steps, so that a failed one leaves nothing behind:
//!
//! 1. **Checked** ([`Runtime::check_spawn`]): the stored agent to resume (by `agent_id`, or by
//!    `key`), the brain, the tool sets, the app to attach, the position, the agent limit —
//!    everything that can fail is checked before an id is allocated, so a refused spawn uses
//!    none.
//! 2. **Registered** ([`Runtime::register`]): the id allocated, the brain built, the agent
//!    entered in the table under its lock, where the races the first step could not see (the
//!    same id, the same key, the limit) are checked again.
//! 3. **Started** ([`Runtime::announce`], then its task): placed in the world, its record saved,
//!    `agent_spawned` published, its task running on the runtime's threads.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use super::agent::{self, AgentShared};
use super::world::Placed;
use super::{AgentConfig, AgentEntry, AgentState, Position, Runtime, RuntimeError};
use crate::brain::{BrainChoice, BrainSettings, ResolvedBrain};
use crate::bus::{Bus, BusMessage, Filter, MessageKind};
use crate::memory::AgentRecord;

/// A spawn that passed every check of the first step.
struct Checked {
    /// The config the agent runs with (a resumed agent's stored one under the given one).
    config: AgentConfig,
    /// Where it starts.
    position: Position,
    /// When it was first created (now, for a new agent).
    created_at: String,
    /// Whether a stored agent resumes.
    resumed: bool,
    brain: ResolvedBrain,
    tools: super::AgentTools,
}

impl Runtime {
    /// Spawns an agent, or resumes a stored one when `config.agent_id` is set. Returns its id.
    ///
    /// Errors: `invalid_config` (bad numbers, unknown brain), `unknown_agent` (an `agent_id`
    /// that is not stored), `already_running`, `shut_down`.
    pub fn spawn(&self, config: AgentConfig) -> Result<String, RuntimeError> {
        self.check_open()?;
        config
            .validate()
            .map_err(|e| RuntimeError::InvalidConfig(format!("invalid agent config: {e}")))?;
        let Checked {
            mut config,
            position,
            created_at,
            resumed,
            brain,
            tools,
        } = self.check_spawn(config)?;
        let inner = &self.inner;
        let opts = &inner.options;
        let agent_id = match &config.agent_id {
            Some(id) => id.clone(),
            None => inner.memory.next_agent_id()?,
        };
        config.agent_id = Some(agent_id.clone());
        if config.name.trim().is_empty() {
            config.name = agent_id.clone();
        }
        let seed = config.seed.as_ref().map(seed_value).unwrap_or_else(|| {
            opts.seed ^ agents_games::seed::Seed::Str(agent_id.clone()).to_u64()
        });
        let gate = inner.model_gate();
        let settings = BrainSettings {
            seed,
            thinking_seconds: config.thinking_seconds.unwrap_or(opts.thinking_seconds),
            script: std::mem::take(&mut config.script),
            gate: gate.clone(),
            events: stream_events(&inner.bus, &agent_id),
            api_key: brain.api_key.clone(),
            party: config.party.clone().unwrap_or_default(),
        };
        let made = inner.brains.read().create(&brain.spec, &settings)?;
        let shared = Arc::new(AgentShared::new(
            &agent_id,
            &config,
            &brain.label,
            position,
            tools,
            gate.agent_budget,
            opts,
        ));
        // What a resumed agent went through since its last reflection still counts toward
        // its next one.
        if resumed && shared.memory.enabled && shared.memory.reflection_threshold > 0 {
            let newest =
                inner
                    .memory
                    .memories_page(&agent_id, None, crate::mind::reflection::WINDOW)?;
            shared
                .count_toward_reflection(crate::mind::reflection::pending_importance(&newest.rows));
        }
        // Lines accepted for a resumed agent before it stopped and not answered yet.
        let inbox = if resumed {
            inner.memory.inbox(&agent_id)?
        } else {
            Vec::new()
        };
        let cancel = CancellationToken::new();
        let subscription = inner.bus.subscribe(
            Filter::all()
                .recipients([agent_id.clone()])
                .kinds([MessageKind::AgentSpoke, MessageKind::CollaborationRequested])
                .with_broadcasts(false),
        );
        self.register(&shared, &cancel)?;
        self.announce(&shared, &config, position, brain.label, created_at, resumed);
        let task = agent::run(
            self.inner.clone(),
            shared,
            made,
            subscription,
            cancel,
            inbox,
        );
        inner.tracker.spawn_on(task, &inner.handle);
        if let Some(embedder) = &inner.embedder {
            embedder.backfill(&agent_id);
        }
        if let Some(app_id) = &config.app_id
            && let Err(e) = self.attach_app(app_id, &agent_id)
        {
            // Taken in between by another agent: the spawn is undone.
            let _ = self.terminate(&agent_id);
            return Err(e);
        }
        Ok(agent_id)
    }

    /// The first step: everything about `config` that can fail, before an id is allocated.
    fn check_spawn(&self, mut config: AgentConfig) -> Result<Checked, RuntimeError> {
        let inner = &self.inner;
        // A key names the stored agent to resume, unless an id does.
        if config.agent_id.is_none()
            && let Some(key) = &config.key
        {
            if let Some(agent_id) = inner.running_with_key(key) {
                return Err(RuntimeError::KeyInUse {
                    key: key.clone(),
                    agent_id,
                });
            }
            config.agent_id = inner.memory.agent_by_key(key)?.map(|a| a.agent_id);
        }
        let given_position = config.initial_position;
        let (config, stored_position, created_at, resumed) = match &config.agent_id {
            Some(id) => {
                if inner.agents.read().contains_key(id) {
                    return Err(RuntimeError::AlreadyRunning(id.clone()));
                }
                let Some(stored) = inner.memory.agent(id)? else {
                    return Err(RuntimeError::UnknownAgent(id.clone()));
                };
                let base: AgentConfig =
                    serde_json::from_value(stored.config.clone()).unwrap_or_default();
                (
                    merge(base, config),
                    Some(stored.position),
                    stored.created_at,
                    true,
                )
            }
            None => (config, None, crate::time::now_iso(), false),
        };
        let choice = config
            .brain
            .clone()
            .unwrap_or_else(|| BrainChoice::Named(inner.options.default_brain.clone()));
        let brain = inner
            .brains
            .read()
            .resolve(&choice, &inner.options.brain_profiles)?;
        let tools = self.agent_tools(config.tools.as_deref())?;
        if let Some(app_id) = &config.app_id {
            let app = inner.apps.get(app_id)?;
            if let Some(other) = app.agent_id() {
                return Err(crate::apps::AppError::Attached(format!(
                    "app '{app_id}' is played by {other} already: detach it first"
                ))
                .into());
            }
        }
        let position = self.place(&config, given_position, stored_position)?;
        let running = inner.agents.read().len();
        if running >= inner.options.max_agents {
            return Err(too_many_agents(running, inner.options.max_agents));
        }
        Ok(Checked {
            config,
            position,
            created_at,
            resumed,
            brain,
            tools,
        })
    }

    /// Where a spawning agent starts. A resumed agent comes back where it was, unless the
    /// caller places it somewhere. A stored position may lie outside the bounds (the game
    /// reported it, `Runtime::set_position`): only a position the caller asks for is checked. A
    /// game that carries out its agent's moves (`movement: requested`) owns the world it
    /// stands in and places it anywhere, as `set_position` accepts: the bounds limit the
    /// runtime's own moves, not the game's.
    fn place(
        &self,
        config: &AgentConfig,
        given: Option<Position>,
        stored: Option<Position>,
    ) -> Result<Position, RuntimeError> {
        let bounds = &self.inner.options.bounds;
        let position = given
            .or(stored)
            .or(config.initial_position)
            .unwrap_or_else(|| bounds.center());
        let placed_by_caller = given.is_some() || stored.is_none();
        let placed_by_game = config.movement == Some(crate::moves::Movement::Requested);
        if placed_by_caller && !placed_by_game && !bounds.contains(position) {
            return Err(RuntimeError::InvalidConfig(format!(
                "initial_position {position} is outside the world bounds ({}, {})..({}, {})",
                bounds.min_x, bounds.min_y, bounds.max_x, bounds.max_y
            )));
        }
        Ok(position)
    }

    /// The second step: enters the agent in the table, checking again under the lock what
    /// [`Runtime::check_spawn`] checked without it (a spawn that raced past it stops here).
    fn register(
        &self,
        shared: &Arc<AgentShared>,
        cancel: &CancellationToken,
    ) -> Result<(), RuntimeError> {
        let max = self.inner.options.max_agents;
        let mut agents = self.inner.agents.write();
        if agents.contains_key(&shared.id) {
            return Err(RuntimeError::AlreadyRunning(shared.id.clone()));
        }
        if let Some(key) = &shared.key
            && let Some(other) = agents.values().find(|a| a.shared.key.as_ref() == Some(key))
        {
            return Err(RuntimeError::KeyInUse {
                key: key.clone(),
                agent_id: other.shared.id.clone(),
            });
        }
        if agents.len() >= max {
            return Err(too_many_agents(agents.len(), max));
        }
        agents.insert(
            shared.id.clone(),
            AgentEntry {
                shared: shared.clone(),
                cancel: cancel.clone(),
            },
        );
        Ok(())
    }

    /// The third step: the registered agent placed in the world, its record saved and
    /// `agent_spawned` published.
    fn announce(
        &self,
        shared: &AgentShared,
        config: &AgentConfig,
        position: Position,
        brain_label: String,
        created_at: String,
        resumed: bool,
    ) {
        let inner = &self.inner;
        let agent_id = &shared.id;
        // A stored agent that waited has what it lacked now.
        inner.waiting.write().remove(agent_id);
        inner.world.insert(
            agent_id,
            Placed {
                name: shared.name.clone(),
                role: shared.role.clone(),
                position,
            },
        );
        inner.memory.save_agent(&AgentRecord {
            agent_id: agent_id.clone(),
            name: shared.name.clone(),
            role: shared.role.clone(),
            prompt: shared.prompt.clone(),
            brain: brain_label,
            config: serde_json::to_value(config).unwrap_or(serde_json::Value::Null),
            position,
            state: AgentState::Idle,
            created_at,
            removed_at: None,
        });
        inner.bus.publish(BusMessage::AgentSpawned {
            agent_id: agent_id.clone(),
            name: shared.name.clone(),
            role: shared.role.clone(),
            position,
            state: AgentState::Idle,
            resumed,
        });
    }
}

/// The refusal of a spawn beyond [`RuntimeOptions::max_agents`].
fn too_many_agents(running: usize, max: usize) -> RuntimeError {
    RuntimeError::LimitReached(format!(
        "this runtime runs {running} agents, as many as it may (max_agents {max}): terminate \
         one first"
    ))
}

/// Fields set in `over` replace those of `base` (resume: the stored config under the given one).
/// `app_id`, `movement`, `script` and `party` are the given run's alone. Both configs are taken
/// apart field by field: a new field of [`AgentConfig`] does not compile until it is merged here.
fn merge(base: AgentConfig, over: AgentConfig) -> AgentConfig {
    let AgentConfig {
        agent_id,
        key,
        autonomous,
        name,
        role,
        prompt,
        brain,
        initial_position,
        idle_think_seconds,
        thinking_seconds,
        speaking_seconds,
        hearing_radius,
        seed,
        tools,
        app_id,
        movement,
        script,
        memory,
        party,
    } = over;
    let text = |over: String, base: String| if over.is_empty() { base } else { over };
    AgentConfig {
        agent_id: agent_id.or(base.agent_id),
        key: key.or(base.key),
        autonomous: autonomous.or(base.autonomous),
        name: if name.trim().is_empty() {
            base.name
        } else {
            name
        },
        role: text(role, base.role),
        prompt: text(prompt, base.prompt),
        brain: brain.or(base.brain),
        initial_position: initial_position.or(base.initial_position),
        idle_think_seconds: idle_think_seconds.or(base.idle_think_seconds),
        thinking_seconds: thinking_seconds.or(base.thinking_seconds),
        speaking_seconds: speaking_seconds.or(base.speaking_seconds),
        hearing_radius: hearing_radius.or(base.hearing_radius),
        seed: seed.or(base.seed),
        tools: tools.or(base.tools),
        app_id,
        movement,
        script,
        memory: memory.or(base.memory),
        party,
    }
}

/// Publishes what a brain reports as `AgentSpeechDelta` (numbered per agent),
/// `AgentToolCall` and `ModelDownloadProgress`.
fn stream_events(bus: &Bus, agent_id: &str) -> crate::brain::BrainEvents {
    let bus = bus.clone();
    let agent_id = agent_id.to_string();
    let seq = std::sync::atomic::AtomicU64::new(0);
    crate::brain::BrainEvents::new(move |event| {
        use crate::brain::BrainEvent;
        let message = match event {
            BrainEvent::Stream(agents_llm::StreamEvent::TextDelta(delta)) => {
                BusMessage::AgentSpeechDelta {
                    agent_id: agent_id.clone(),
                    delta: delta.clone(),
                    seq: seq.fetch_add(1, Ordering::Relaxed),
                }
            }
            BrainEvent::Stream(agents_llm::StreamEvent::ToolCallStarted { id, name, .. }) => {
                BusMessage::AgentToolCall {
                    agent_id: agent_id.clone(),
                    tool: name.clone(),
                    call_id: id.clone(),
                }
            }
            BrainEvent::ModelDownload {
                url,
                received,
                total,
            } => BusMessage::ModelDownloadProgress {
                agent_id: agent_id.clone(),
                url: url.to_string(),
                received_bytes: received,
                total_bytes: total,
            },
        };
        bus.publish(message);
    })
}

fn seed_value(v: &serde_json::Value) -> u64 {
    use agents_games::seed::Seed;
    match v {
        serde_json::Value::String(s) => Seed::Str(s.clone()).to_u64(),
        other => match other.as_u64().or_else(|| other.as_i64().map(|i| i as u64)) {
            Some(n) => Seed::Int(n).to_u64(),
            None => 0,
        },
    }
}
