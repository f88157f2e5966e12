//! Campaigns in the runtime: brains for game masters, GM turns through an agent, the turn log
//! in SQLite (`campaign_turns`), and the campaigns loaded over the protocol
//! ([`CampaignHub`]): `campaign_load`, `campaign_tool_calls`, `campaign_turn`,
//! `campaign_state`. Every applied batch or turn is published on the bus as
//! [`BusMessage::CampaignChanged`].

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{Runtime, RuntimeError};
use crate::brain::gate::{ModelGate, TokenBudget};
use crate::brain::{Brain, BrainChoice, BrainEvents, BrainSettings};
use crate::bus::BusMessage;
use crate::campaign::turn::{self, Decided, GmIdentity, TurnEntry, TurnRequest};
use crate::campaign::{BatchOutcome, Campaign, CampaignError, file};
use crate::contract::ToolCall;

/// Where a campaign to load comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum CampaignSource {
    /// A `campaign.json` under the runtime's campaign directory, by relative path (saved back
    /// there after every applied call, its turns appended to `turn_log.jsonl` beside it).
    Path(String),
    /// The campaign itself (kept in memory only).
    Inline(Value),
}

/// A campaign loaded over the protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedCampaign {
    /// Its id.
    pub campaign_id: String,
    /// What was normalised while loading.
    pub warnings: Vec<String>,
    /// The campaign as its file holds it.
    pub campaign: Value,
}

/// One campaign and where it is saved.
struct Hosted {
    campaign: Campaign,
    path: Option<PathBuf>,
}

/// The campaigns loaded over the protocol, by id. Each is locked while a batch or a turn's
/// answer is applied (a turn's model call runs on a copy, outside the lock).
#[derive(Default)]
pub(crate) struct CampaignHub {
    loaded: parking_lot::Mutex<HashMap<String, Arc<tokio::sync::Mutex<Hosted>>>>,
}

/// A path under `dir` that cannot leave it (relative, no `..`).
fn inside(dir: &Path, relative: &str) -> Result<PathBuf, RuntimeError> {
    let path = Path::new(relative);
    let plain = !relative.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain {
        return Err(RuntimeError::InvalidMessage(format!(
            "path '{relative}' must be relative to the campaign directory, without '..'"
        )));
    }
    Ok(dir.join(path))
}

impl Runtime {
    /// A brain of its own, outside any agent (a GM turn from the command line or a `Campaign`
    /// resource): `choice` resolved as a spawn would (a profile, a brain name, a brain object),
    /// drawing on the runtime's model-call limiter and token budget, thinking without delay.
    /// Errors: `invalid_config` naming what is wrong.
    pub fn build_brain(
        &self,
        choice: &BrainChoice,
        seed: u64,
    ) -> Result<Box<dyn Brain>, RuntimeError> {
        let inner = &self.inner;
        let brains = inner.brains.read();
        let resolved = brains.resolve(choice, &inner.options.brain_profiles)?;
        let settings = BrainSettings {
            seed,
            thinking_seconds: 0.0,
            script: Vec::new(),
            gate: ModelGate {
                calls: inner.model_calls.clone(),
                runtime_budget: inner.token_budget.clone(),
                agent_budget: Arc::new(TokenBudget::new(None)),
            },
            events: BrainEvents::default(),
            api_key: resolved.api_key.clone(),
        };
        Ok(brains.create(&resolved.provider, &resolved.options, &settings)?)
    }

    /// The GM answer of agent `gm_agent` for a turn on `campaign` (not applied: see
    /// [`turn::finish`]). The agent's kind of brain answers with its name and role prompt, as
    /// the campaign's game master: the GM tools instead of the world tools, the campaign as its
    /// context. Errors: an unknown agent, a turn actor outside the party, a brain that did not
    /// answer.
    pub async fn gm_decide(
        &self,
        campaign: &Campaign,
        gm_agent: &str,
        request: &TurnRequest<'_>,
    ) -> Result<Decided, RuntimeError> {
        let shared = self.running(gm_agent)?;
        let seed = self.inner.options.seed
            ^ agents_games::seed::Seed::Str(format!(
                "{gm_agent}:{}:{}",
                campaign.id, request.number
            ))
            .to_u64();
        let mut brain = self.build_brain(&shared.brain_choice, seed)?;
        let gm = GmIdentity {
            agent_id: shared.id.clone(),
            name: shared.name.clone(),
            prompt: shared.prompt.clone(),
        };
        Ok(turn::decide(campaign, brain.as_mut(), &gm, request).await?)
    }

    /// Keeps a turn in the campaign's log (SQLite).
    pub fn record_campaign_turn(&self, campaign_id: &str, entry: &TurnEntry) {
        self.inner
            .memory
            .log_campaign_turn(campaign_id, &entry.turn_id, entry.to_jsonl());
    }

    /// How many turns of `campaign_id` are kept.
    pub fn campaign_turn_count(&self, campaign_id: &str) -> Result<u64, RuntimeError> {
        Ok(self.inner.memory.campaign_turn_count(campaign_id)?)
    }

    /// The turns of `campaign_id` kept so far, oldest first.
    pub fn campaign_turns(&self, campaign_id: &str) -> Result<Vec<TurnEntry>, RuntimeError> {
        Ok(self
            .inner
            .memory
            .campaign_turns(campaign_id)?
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect())
    }

    /// Loads a campaign (from a file under [`super::RuntimeOptions::campaign_dir`], or inline)
    /// and keeps it by its id, replacing one loaded before under the same id. Errors: no
    /// campaign directory, a path that leaves it, an unreadable or invalid campaign (every
    /// problem named).
    pub fn load_campaign(&self, source: CampaignSource) -> Result<LoadedCampaign, RuntimeError> {
        let (loaded, path) = match source {
            CampaignSource::Path(relative) => {
                let dir = self.inner.options.campaign_dir.as_ref().ok_or_else(|| {
                    RuntimeError::InvalidMessage(
                        "this server has no campaign directory (start it with --campaign-dir \
                         DIR), so campaigns load only inline"
                            .into(),
                    )
                })?;
                let path = inside(dir, &relative)?;
                (file::load(&path)?, Some(path))
            }
            CampaignSource::Inline(value) => (Campaign::from_json(&value)?, None),
        };
        let campaign_id = loaded.campaign.id.clone();
        let json = loaded.campaign.to_json();
        self.inner.campaigns.loaded.lock().insert(
            campaign_id.clone(),
            Arc::new(tokio::sync::Mutex::new(Hosted {
                campaign: loaded.campaign,
                path,
            })),
        );
        Ok(LoadedCampaign {
            campaign_id,
            warnings: loaded.warnings,
            campaign: json,
        })
    }

    fn hosted(&self, campaign_id: &str) -> Result<Arc<tokio::sync::Mutex<Hosted>>, RuntimeError> {
        self.inner
            .campaigns
            .loaded
            .lock()
            .get(campaign_id)
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownCampaign(campaign_id.to_string()))
    }

    /// A loaded campaign as its file holds it, and how many turns its log holds.
    pub async fn campaign_state(&self, campaign_id: &str) -> Result<(Value, u64), RuntimeError> {
        let hosted = self.hosted(campaign_id)?;
        let json = hosted.lock().await.campaign.to_json();
        let turns = self.campaign_turn_count(campaign_id)?;
        Ok((json, turns))
    }

    /// Runs GM tool calls on a loaded campaign for the turn actor (`actor`, default the active
    /// actor), saves it when a call was applied, and publishes what changed.
    pub async fn campaign_tool_calls(
        &self,
        campaign_id: &str,
        calls: &[ToolCall],
        actor: Option<&str>,
    ) -> Result<BatchOutcome, RuntimeError> {
        let hosted = self.hosted(campaign_id)?;
        let mut hosted = hosted.lock().await;
        let outcome = hosted.campaign.run_calls(calls, actor)?;
        if !outcome.applied_actions.is_empty() {
            save(&hosted)?;
            self.inner.bus.publish(BusMessage::CampaignChanged {
                campaign_id: campaign_id.to_string(),
                turn_id: None,
                applied_actions: outcome.applied_actions.clone(),
                effects: outcome.effects.clone(),
            });
        }
        Ok(outcome)
    }

    /// Runs a GM turn of agent `gm_agent` on a loaded campaign: the answer decided on a copy,
    /// applied to the campaign as it is then, the turn kept in SQLite (and in `turn_log.jsonl`
    /// beside its file), the campaign saved when a call was applied, the change published.
    pub async fn campaign_turn(
        &self,
        campaign_id: &str,
        gm_agent: &str,
        user_input: &str,
        actor: Option<&str>,
    ) -> Result<TurnEntry, RuntimeError> {
        let hosted = self.hosted(campaign_id)?;
        let snapshot = hosted.lock().await.campaign.clone();
        let number = self.campaign_turn_count(campaign_id)? + 1;
        let request = TurnRequest {
            number,
            user_input,
            actor,
        };
        let started = std::time::Instant::now();
        let decided = self.gm_decide(&snapshot, gm_agent, &request).await?;
        let latency = started.elapsed();
        let mut hosted = hosted.lock().await;
        let entry = turn::finish(&mut hosted.campaign, decided, &request)?;
        if let Ok(shared) = self.running(gm_agent) {
            shared
                .journal
                .record(journal_entry(campaign_id, number, &entry, latency));
        }
        if entry.changed() {
            save(&hosted)?;
        }
        if let Some(path) = &hosted.path {
            file::append_turn(&file::turn_log_path(path), &entry)?;
        }
        self.record_campaign_turn(campaign_id, &entry);
        if !entry.applied_actions.is_empty() {
            self.inner.bus.publish(BusMessage::CampaignChanged {
                campaign_id: campaign_id.to_string(),
                turn_id: Some(entry.turn_id.clone()),
                applied_actions: entry.applied_actions.clone(),
                effects: entry.effects.clone(),
            });
        }
        Ok(entry)
    }
}

/// A GM turn as the GM agent's journal keeps it: the player's input as the context, each call
/// `done` when it was applied and `failed` when it was dropped, the narration as what was said.
fn journal_entry(
    campaign_id: &str,
    number: u64,
    entry: &TurnEntry,
    latency: std::time::Duration,
) -> super::Decision {
    use super::journal::{CallOutcome, Decision, Trigger};
    let mut input: String = entry.user_input.chars().take(200).collect();
    if input.len() < entry.user_input.len() {
        input.push('…');
    }
    let context = format!(
        "campaign '{campaign_id}' turn {number}, {} acting: {input}",
        entry.actor_id
    );
    let mut decision = Decision::start(number, Trigger::CampaignTurn, context);
    let mut applied = entry.applied_actions.iter().peekable();
    for call in &entry.tool_calls {
        match applied.peek() {
            Some(a) if a.tool == call.tool && a.args == call.args => {
                decision.push_call(call, CallOutcome::Done, Some(a.result.to_string()));
                applied.next();
            }
            _ => {
                let why = entry
                    .tool_feedback
                    .as_ref()
                    .and_then(|f| serde_json::to_string(f).ok())
                    .unwrap_or_else(|| "not applied".to_string());
                decision.push_call(call, CallOutcome::Failed, Some(why));
            }
        }
    }
    if !entry.assistant_text.trim().is_empty() {
        decision.spoken.push(entry.assistant_text.clone());
    }
    decision.latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
    decision.repairs = u32::try_from(entry.repairs).unwrap_or(u32::MAX);
    decision
}

/// Saves a hosted campaign to its file, if it has one.
fn save(hosted: &Hosted) -> Result<(), CampaignError> {
    match &hosted.path {
        Some(path) => file::save(path, &hosted.campaign),
        None => Ok(()),
    }
}
