//! Playing a suite through the runtime exactly as a game drives it: agents spawned with their
//! personas, tools and tasks, the player's and the agents' lines sent, game time passing, the
//! runtime restarted on the same database with the agents resumed, and what was said and
//! decided collected for the card ([`super::metrics`]).
//!
//! # Time
//!
//! Game time runs at [`RunConfig::time_scale`] game seconds per real second: a `wait` of 30
//! game seconds at scale 10 lasts 3 real seconds, and an agent's idle time before it decides on
//! its own ([`IDLE_GAME_SECONDS`]) shrinks alike. The scripted brain thinks and speaks without
//! pretend delays here. After a line to an agent, the runner waits for the agent to answer or
//! to decide on the line without answering, at most [`RunConfig::answer_timeout`] real time
//! (a model brain answers when it answers).
//!
//! # Agents
//!
//! Each agent is spawned with the runtime key `eval:<run>:<scenario number>:<key>`, so scenarios
//! sharing one database (`--db`) never resume each other's agents; a restart resumes them by
//! that key. Their brain is [`RunConfig::brain`], their memory settings the runtime's with the
//! [ablations](Ablation) applied.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::played::{Played, suite_speaker};
use super::replay;
use super::results::CardResults;
use super::results::TurnResult;
use super::suite::{AgentSpec, PLAYER, Scenario, Step, Suite, Turn};
use crate::brain::BrainChoice;
use crate::bus::{BusMessage, Filter, Received, Subscription};
use crate::campaign::turn::TurnRequest;
use crate::eval::lines::Line;
use crate::geometry::{Position, WorldBounds};
use crate::mind::MemorySettings;
use crate::runtime::{AgentConfig, CampaignSource, Decision, Runtime, RuntimeOptions, Trigger};
use crate::tools::{ToolOutput, ToolRegistry, ToolSpec};

/// Game seconds an agent stays idle before it decides on its own.
pub const IDLE_GAME_SECONDS: f64 = 10.0;

/// A part of the mind a run turns off, to show what it adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ablation {
    /// No memories formed nor recalled ([`MemorySettings::enabled`] false).
    Memory,
    /// No reflection ([`MemorySettings::reflection_threshold`] 0).
    Reflection,
    /// What the agent thinks of people is not recalled ([`MemorySettings::relationships`]
    /// false).
    Relationships,
}

impl Ablation {
    /// Every ablation.
    pub const ALL: [Ablation; 3] = [
        Ablation::Memory,
        Ablation::Reflection,
        Ablation::Relationships,
    ];

    /// Its name (`memory`, `reflection`, `relationships`).
    pub fn as_str(self) -> &'static str {
        match self {
            Ablation::Memory => "memory",
            Ablation::Reflection => "reflection",
            Ablation::Relationships => "relationships",
        }
    }

    /// The ablation named `name`.
    pub fn parse(name: &str) -> Result<Ablation, String> {
        Ablation::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Ablation::ALL.iter().map(|a| a.as_str()).collect();
                format!("unknown part '{name}' (one of {})", names.join(", "))
            })
    }

    /// Turns its part off in `settings`.
    pub fn apply(self, settings: &mut MemorySettings) {
        match self {
            Ablation::Memory => settings.enabled = false,
            Ablation::Reflection => settings.reflection_threshold = 0,
            Ablation::Relationships => settings.relationships = false,
        }
    }
}

/// How to run a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The brain every agent uses: a profile or a registered brain (`scripted`).
    pub brain: String,
    /// Parts of the mind turned off.
    pub without: Vec<Ablation>,
    /// The run's seed (the runtime's; each agent's brain seed derives from it).
    pub seed: u64,
    /// Game seconds per real second (more than 0).
    pub time_scale: f64,
    /// The longest real time the runner waits for an agent's answer to one line.
    pub answer_timeout: Duration,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            brain: "scripted".into(),
            without: Vec::new(),
            seed: 1,
            time_scale: 10.0,
            answer_timeout: Duration::from_secs(120),
        }
    }
}

/// A run that cannot be played as asked: nothing was run, nothing written. The message names
/// what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CardError(pub String);

/// A checked run, ready to play.
#[derive(Debug)]
pub struct ReportCard {
    suite: Suite,
    config: RunConfig,
}

impl ReportCard {
    /// Checks `suite` and `config` against `runtime` (the brain must be one it can start):
    /// an unknown brain, a bad number is a [`CardError`] naming it.
    pub fn plan(
        runtime: &Runtime,
        suite: Suite,
        config: RunConfig,
    ) -> Result<ReportCard, CardError> {
        suite.check().map_err(|e| CardError(e.to_string()))?;
        runtime
            .check_brain(&BrainChoice::named(&config.brain))
            .map_err(|e| CardError(format!("the brain '{}' cannot be used: {e}", config.brain)))?;
        if !(config.time_scale.is_finite() && config.time_scale > 0.0) {
            return Err(CardError(format!(
                "the time scale must be a positive number, got {}",
                config.time_scale
            )));
        }
        if config.answer_timeout.is_zero() {
            return Err(CardError(
                "the time to wait for an answer must be more than 0 seconds".into(),
            ));
        }
        Ok(ReportCard { suite, config })
    }

    /// The suite.
    pub fn suite(&self) -> &Suite {
        &self.suite
    }

    /// Plays every scenario, each on a runtime started with `options(database)` on the
    /// database `database(index)` (on `handle`), and judges them. `progress` hears of each
    /// scenario as it ends.
    pub async fn run(
        self,
        handle: tokio::runtime::Handle,
        options: impl Fn(&Path) -> RuntimeOptions,
        database: impl Fn(usize) -> PathBuf,
        mut progress: impl FnMut(usize, &str),
    ) -> Result<CardResults, CardError> {
        let started_at = crate::time::now_iso();
        let began = Instant::now();
        let run = format!(
            "{}-{:06x}",
            started_at
                .chars()
                .filter(char::is_ascii_digit)
                .take(14)
                .collect::<String>(),
            rand::random::<u32>() & 0xff_ffff
        );
        let mut scenarios = Vec::new();
        for (index, scenario) in self.suite.scenarios.iter().enumerate() {
            let mut options = options(&database(index));
            options.seed = self.config.seed;
            options.game_time_scale = self.config.time_scale;
            options.bounds = WorldBounds::from_rect(
                0.0,
                0.0,
                self.suite.world.size[0],
                self.suite.world.size[1],
            )
            .map_err(CardError)?;
            if let Some(radius) = self.suite.world.hearing_radius {
                options.hearing_radius = radius;
            }
            for ablation in &self.config.without {
                ablation.apply(&mut options.memory);
            }
            let play = Play::start(
                handle.clone(),
                options,
                scenario,
                &self.config,
                format!("eval:{run}:{index}"),
            )?;
            let played = play.play().await?;
            scenarios.push(super::metrics::judge(scenario, &self.suite.world, played));
            progress(index + 1, &scenario.name);
        }
        let metrics = super::metrics::metrics(&scenarios);
        Ok(CardResults {
            version: super::results::CARD_VERSION,
            suite: self.suite.name.clone(),
            brain: self.config.brain.clone(),
            without: self
                .config
                .without
                .iter()
                .map(|a| a.as_str().to_string())
                .collect(),
            seed: self.config.seed,
            time_scale: self.config.time_scale,
            started_at,
            elapsed_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
            metrics,
            scenarios,
        })
    }
}

/// One scenario being played.
struct Play<'a> {
    handle: tokio::runtime::Handle,
    options: RuntimeOptions,
    scenario: &'a Scenario,
    config: &'a RunConfig,
    prefix: String,
    runtime: Runtime,
    events: Subscription,
    /// Lines the suite made agents say that the bus has not carried yet: (agent id, text).
    puppeted: Vec<(String, String)>,
    /// The newest decision read per agent id, since the runtime started.
    seen: BTreeMap<String, u64>,
    /// The scenario's campaign's id, once loaded.
    campaign: Option<String>,
    played: Played,
}

impl<'a> Play<'a> {
    fn start(
        handle: tokio::runtime::Handle,
        options: RuntimeOptions,
        scenario: &'a Scenario,
        config: &'a RunConfig,
        prefix: String,
    ) -> Result<Play<'a>, CardError> {
        let (runtime, events) = Self::open(&handle, &options)?;
        let mut play = Play {
            handle,
            options,
            scenario,
            config,
            prefix,
            runtime,
            events,
            puppeted: Vec::new(),
            seen: BTreeMap::new(),
            campaign: None,
            played: Played::default(),
        };
        play.played.player = play.runtime.options().player_id.clone();
        play.spawn_all(true)?;
        Ok(play)
    }

    fn open(
        handle: &tokio::runtime::Handle,
        options: &RuntimeOptions,
    ) -> Result<(Runtime, Subscription), CardError> {
        let runtime = Runtime::start_on(handle.clone(), options.clone()).map_err(|e| {
            CardError(format!(
                "cannot start the agent runtime on {}: {e}",
                crate::memory::Location::of(&options.database)
            ))
        })?;
        let events = runtime.subscribe(Filter::all());
        Ok((runtime, events))
    }

    /// Spawns (or, after a restart, resumes) every agent; `first`: assign their tasks too.
    fn spawn_all(&mut self, first: bool) -> Result<(), CardError> {
        for (index, agent) in self.scenario.agents.iter().enumerate() {
            let config = self.agent_config(index, agent)?;
            let id = self
                .runtime
                .spawn(config)
                .map_err(|e| CardError(format!("agent '{}': {e}", agent.key)))?;
            if first {
                for task in &agent.tasks {
                    self.runtime
                        .assign_task(&id, task)
                        .map_err(|e| CardError(format!("agent '{}': {e}", agent.key)))?;
                }
            }
            self.played.ids.insert(agent.key.clone(), id);
        }
        Ok(())
    }

    fn agent_config(&self, index: usize, agent: &AgentSpec) -> Result<AgentConfig, CardError> {
        let scale = self.config.time_scale;
        let mut config = AgentConfig {
            key: Some(format!("{}:{}", self.prefix, agent.key)),
            prompt: agent.prompt.clone(),
            brain: Some(BrainChoice::named(&self.config.brain)),
            initial_position: agent.position.map(|[x, y]| Position::new(x, y)),
            autonomous: Some(agent.autonomous),
            idle_think_seconds: Some(IDLE_GAME_SECONDS / scale),
            thinking_seconds: Some(0.0),
            speaking_seconds: Some(0.0),
            seed: Some(json!(format!(
                "{}:{}:{}",
                self.config.seed, self.scenario.name, agent.key
            ))),
            memory: Some(self.options.memory.clone()),
            ..AgentConfig::named(&agent.name, &agent.role)
        };
        if !agent.tools.is_empty() {
            let mut registry = ToolRegistry::new();
            for tool in &agent.tools {
                let schema = tool
                    .schema()
                    .map_err(|e| CardError(format!("tool '{}': {e}", tool.name)))?;
                let data = tool.clone();
                registry
                    .register(
                        ToolSpec::new(&tool.name, &tool.description, schema).read_only(),
                        move |args: &Value| match data.answer(args) {
                            Ok(answer) => ToolOutput::ok(answer),
                            Err(failed) => ToolOutput::failed(failed),
                        },
                    )
                    .map_err(|e| CardError(format!("tool '{}': {e}", tool.name)))?;
            }
            let set = format!("eval_tools_{index}");
            self.runtime
                .register_tool_set(&set, registry)
                .map_err(|e| CardError(format!("agent '{}': {e}", agent.key)))?;
            config.tools = Some(vec![crate::runtime::WORLD_TOOLS.into(), set]);
        }
        Ok(config)
    }

    fn id(&self, key: &str) -> String {
        self.played.ids.get(key).cloned().unwrap_or_default()
    }

    /// Loads the scenario's campaign, as the suite gives it.
    async fn load_campaign(&mut self) -> Result<(), CardError> {
        self.load_campaign_from(None).await
    }

    /// The scenario's campaign as its turns left it, to load again after a restart (as a game
    /// loads its saved campaign); `None` without one.
    async fn carried_campaign(&self) -> Result<Option<Value>, CardError> {
        let Some(id) = &self.campaign else {
            return Ok(None);
        };
        let campaign = self.runtime.campaign_snapshot(id).await.map_err(|e| {
            CardError(format!(
                "scenario '{}': the campaign before the restart: {e}",
                self.scenario.name
            ))
        })?;
        Ok(Some(campaign.to_json()))
    }

    /// Loads the scenario's campaign: `carried` (the campaign as it was before a restart), or
    /// as the scenario gives it.
    async fn load_campaign_from(&mut self, carried: Option<Value>) -> Result<(), CardError> {
        let Some(spec) = &self.scenario.campaign else {
            return Ok(());
        };
        let campaign = match (carried, &spec.campaign) {
            (Some(carried), _) => carried,
            (None, Some(campaign)) => campaign.clone(),
            (None, None) => crate::campaign::Campaign::new("camp_0001", &spec.party).to_json(),
        };
        let loaded = self
            .runtime
            .load_campaign_async(CampaignSource::Inline(campaign))
            .await
            .map_err(|e| {
                CardError(format!(
                    "scenario '{}': the campaign: {e}",
                    self.scenario.name
                ))
            })?;
        self.campaign = Some(loaded.campaign_id);
        Ok(())
    }

    /// A game-master turn on the scenario's campaign (step `step`), judged by the contract,
    /// then taken again to check that it replays identically ([`super::replay`]).
    async fn turn(&mut self, step: usize, turn: &Turn) {
        let (Some(campaign), Some(spec)) = (self.campaign.clone(), &self.scenario.campaign) else {
            return;
        };
        let gm = self.id(&spec.gm);
        let seed = replay::dice_seed(self.config.seed, &self.scenario.name, step);
        let dice = turn.roll.and_then(|r| replay::roll(r, &seed));
        let input = replay::told(&turn.input, dice.as_ref());
        let before = self.runtime.campaign_snapshot(&campaign).await;
        let number = self.runtime.campaign_turn_count(&campaign).map(|n| n + 1);
        let kept = self
            .runtime
            .campaign_turn(&campaign, &gm, &input, turn.actor.as_deref())
            .await;
        let (repairs, first_pass, after_repair, failure) = match &kept {
            Ok(entry) => {
                let clean = entry.tool_feedback.is_none() && entry.dropped_calls.is_empty();
                let failure = entry
                    .tool_feedback
                    .as_ref()
                    .map(|f| serde_json::to_string(f).unwrap_or_default())
                    .or_else(|| {
                        (!entry.dropped_calls.is_empty())
                            .then(|| format!("dropped: {}", entry.dropped_calls.join("; ")))
                    });
                (entry.repairs, clean && entry.repairs == 0, clean, failure)
            }
            Err(e) => (0, false, false, Some(e.to_string())),
        };
        let difference = match (before, number, &kept) {
            (Ok(before), Ok(number), Ok(kept)) => {
                let again_dice = turn.roll.and_then(|r| replay::roll(r, &seed));
                let request = TurnRequest {
                    number,
                    user_input: &replay::told(&turn.input, again_dice.as_ref()),
                    actor: turn.actor.as_deref(),
                };
                if again_dice != dice {
                    Some("rolled again from their seed, the dice came out otherwise".to_string())
                } else {
                    match self
                        .runtime
                        .replay_campaign_turn(before, &gm, &request)
                        .await
                    {
                        Ok(again) => replay::difference(kept, &again),
                        Err(e) => Some(format!("the turn failed when taken again: {e}")),
                    }
                }
            }
            // A turn that failed takes no number and changes nothing: it replays when it
            // fails again alike, which taking it again on the unchanged campaign shows.
            (Ok(before), Ok(number), Err(first)) => {
                let request = TurnRequest {
                    number,
                    user_input: &input,
                    actor: turn.actor.as_deref(),
                };
                match self
                    .runtime
                    .replay_campaign_turn(before, &gm, &request)
                    .await
                {
                    Err(e) if e.to_string() == first.to_string() => None,
                    Err(e) => Some(format!("the turn failed otherwise when taken again: {e}")),
                    Ok(_) => Some("the turn failed, but not when taken again".to_string()),
                }
            }
            (Err(e), _, _) | (_, Err(e), _) => Some(format!(
                "the campaign could not be read to take the turn again: {e}"
            )),
        };
        self.played.turns.push(TurnResult {
            input,
            repairs,
            first_pass,
            after_repair,
            failure,
            dice: dice.map(|d| d.rolls).unwrap_or_default(),
            replays: difference.is_none(),
            replay_difference: difference,
            expected: turn.expect.iter().map(|t| t.to_string()).collect(),
            applied: kept
                .iter()
                .flat_map(|e| &e.applied_actions)
                .map(|a| a.tool.clone())
                .collect(),
        });
    }

    async fn play(mut self) -> Result<Played, CardError> {
        self.load_campaign().await?;
        let scenario = self.scenario;
        for (index, step) in scenario.steps.iter().enumerate() {
            match step {
                Step::Say(say) => {
                    let to = self.id(&say.to);
                    let at = self.played.lines.len();
                    let from = if say.from == PLAYER {
                        self.played.player.clone()
                    } else {
                        self.id(&say.from)
                    };
                    if say.help {
                        self.played.helped.push((say.clone(), at));
                    }
                    self.send(&from, &to, &say.text)?;
                    self.answer_of(&to, &from, at).await;
                }
                Step::Ask(ask) => {
                    let to = self.id(&ask.to);
                    let at = self.played.lines.len();
                    let player = self.played.player.clone();
                    self.played
                        .asked
                        .push((ask.clone(), self.played.restarts > 0, at));
                    self.send(&player, &to, &ask.text)?;
                    self.answer_of(&to, &player, at).await;
                }
                Step::Task(task) => {
                    let to = self.id(&task.to);
                    self.runtime
                        .assign_task(&to, &task.name)
                        .map_err(|e| CardError(format!("task for '{}': {e}", task.to)))?;
                }
                Step::Wait(wait) => {
                    let until = tokio::time::Instant::now()
                        + Duration::from_secs_f64(wait.seconds / self.config.time_scale);
                    self.pump(until, |_| false).await;
                }
                Step::Restart(_) => {
                    let carried = self.carried_campaign().await?;
                    self.restart()?;
                    self.load_campaign_from(carried).await?;
                }
                Step::Turn(turn) => self.turn(index, turn).await,
            }
        }
        // Lines already on their way are heard; the last decisions are read.
        let settle = tokio::time::Instant::now() + Duration::from_millis(200);
        self.pump(settle, |_| false).await;
        self.read_journals();
        self.read_tasks();
        self.runtime.shutdown(Duration::from_secs(2));
        Ok(self.played)
    }

    /// Sends `text` from `from` (the player or an agent) to `to`.
    fn send(&mut self, from: &str, to: &str, text: &str) -> Result<(), CardError> {
        if *from != self.played.player {
            self.puppeted.push((from.to_string(), text.to_string()));
        }
        self.runtime
            .send_message_from(from, to, text)
            .map(|_| ())
            .map_err(|e| CardError(format!("a line to {to}: {e}")))
    }

    /// Waits until `agent` answers `asker` after line `at`, or decides on the line without
    /// answering, or the time to answer is up.
    async fn answer_of(&mut self, agent: &str, asker: &str, at: usize) {
        self.read_journals();
        let before = self.played.decisions.get(agent).map_or(0, Vec::len);
        let until = tokio::time::Instant::now() + self.config.answer_timeout;
        let (agent, asker) = (agent.to_string(), asker.to_string());
        self.pump(until, |play| {
            let answered = play.played.lines[at.min(play.played.lines.len())..]
                .iter()
                .any(|l| l.speaker == agent && l.to.contains(&asker));
            let decided = play
                .played
                .decisions
                .get(&agent)
                .is_some_and(|d| d.iter().skip(before).any(|d| d.trigger == Trigger::Message));
            answered || decided
        })
        .await;
    }

    /// Hears the bus and reads the journals until `until` or until `done`.
    async fn pump(&mut self, until: tokio::time::Instant, done: impl Fn(&Play<'_>) -> bool) {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            if done(self) {
                return;
            }
            tokio::select! {
                received = self.events.recv() => match received {
                    Some(Received::Message(envelope)) => self.hear(&envelope.message),
                    Some(Received::Lagged { missed }) => {
                        tracing::warn!("eval: the runner missed {missed} bus messages");
                    }
                    None => return,
                },
                _ = tick.tick() => self.read_journals(),
                _ = tokio::time::sleep_until(until) => {
                    self.read_journals();
                    return;
                }
            }
        }
    }

    fn hear(&mut self, message: &BusMessage) {
        if let BusMessage::AgentSpoke {
            agent_id,
            content,
            recipients,
            ..
        } = message
        {
            let puppet = self
                .puppeted
                .iter()
                .position(|(who, text)| who == agent_id && text == content);
            let speaker = match puppet {
                Some(i) => {
                    self.puppeted.remove(i);
                    suite_speaker(agent_id)
                }
                None => agent_id.clone(),
            };
            self.played.lines.push(Line {
                speaker,
                to: recipients.clone(),
                text: content.clone(),
            });
        }
    }

    fn read_journals(&mut self) {
        for id in self.played.ids.values() {
            let Ok(decisions) = self.runtime.recent_decisions(id) else {
                continue;
            };
            let seen = self.seen.entry(id.clone()).or_default();
            let kept = self.played.decisions.entry(id.clone()).or_default();
            let newer: Vec<Decision> = decisions.into_iter().filter(|d| d.number > *seen).collect();
            if let Some(last) = newer.last() {
                *seen = last.number;
            }
            kept.extend(newer);
        }
    }

    fn read_tasks(&mut self) {
        for id in self.played.ids.values() {
            if let Ok(tasks) = self.runtime.tasks(id) {
                let done = tasks
                    .iter()
                    .filter(|t| t.status == crate::memory::TaskStatus::Completed)
                    .count();
                self.played.tasks.insert(id.clone(), (tasks.len(), done));
            }
        }
    }

    /// Stops the runtime and starts a new one on the same database, the agents resumed.
    fn restart(&mut self) -> Result<(), CardError> {
        self.read_journals();
        self.runtime.shutdown(Duration::from_secs(2));
        let (runtime, events) = Self::open(&self.handle, &self.options)?;
        self.runtime = runtime;
        self.events = events;
        self.seen.clear();
        self.puppeted.clear();
        self.played.restarts += 1;
        self.spawn_all(false)
    }
}
