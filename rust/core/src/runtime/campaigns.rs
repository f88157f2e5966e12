//! Campaigns in the runtime: brains for game masters, GM turns through an agent, the turn log
//! in SQLite (`campaign_turns`), and the campaigns loaded over the protocol
//! ([`CampaignHub`]): `campaign_load`, `campaign_tool_calls`, `campaign_turn`,
//! `campaign_state`, `campaign_unload`. Every applied batch or turn is published on the bus as
//! [`BusMessage::CampaignChanged`].
//!
//! At most [`MAX_LOADED_CAMPAIGNS`] campaigns are loaded at once: loading another is refused
//! with `limit_reached` until one is unloaded; loading again under a loaded id replaces that
//! campaign. A campaign goes out in replies whole when it fits [`CAMPAIGN_REPLY_BYTES`], and
//! otherwise in pages ([`crate::campaign::page`]); a load's warnings are cut to
//! [`WARNINGS_BYTES`], the rest counted.
//!
//! A campaign loaded by path comes from the campaign directory through [`CampaignDir`] (a
//! regular campaign file inside it, nothing else); its file is read, saved and its turn log
//! appended on the blocking pool, never on the async workers. The turns of one campaign run one
//! at a time, in the order they asked: each gets the next turn number (`turn_0001`, …; unique
//! per campaign however many clients ask at once) and sees what the turn before it did.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{Runtime, RuntimeError};
use crate::brain::{Brain, BrainChoice, BrainEvents, BrainSettings};
use crate::bus::BusMessage;
use crate::campaign::dir::{CampaignDir, CampaignFile};
use crate::campaign::page::{Cursor, Page};
use crate::campaign::turn::{self, Decided, GmIdentity, TurnEntry, TurnRequest};
use crate::campaign::{BatchOutcome, Campaign, CampaignError, Loaded};
use crate::contract::ToolCall;
use crate::limits::MAX_LOADED_CAMPAIGNS;

/// The most JSON a load's warnings take in a reply; the rest are counted, not sent.
pub const WARNINGS_BYTES: usize = 4 * 1024;

/// The most JSON the campaign takes in a `campaign_load` or `campaign_state` reply: a page of
/// [`crate::limits::MAX_PAGE_BYTES`] less the warnings and 2 KiB for the reply's other
/// fields, so the reply fits the 64 KiB a Godot client reads.
pub const CAMPAIGN_REPLY_BYTES: usize = crate::limits::MAX_PAGE_BYTES - WARNINGS_BYTES - 2 * 1024;

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
    /// What was normalised while loading, the first that fit [`WARNINGS_BYTES`].
    pub warnings: Vec<String>,
    /// How many more warnings there were.
    pub warnings_left_out: usize,
    /// The campaign as its file holds it, or its first page when it does not fit
    /// [`CAMPAIGN_REPLY_BYTES`].
    pub page: Page,
}

/// One campaign and where it is saved.
struct Hosted {
    campaign: Campaign,
    file: Option<CampaignFile>,
}

/// How many turns a campaign has taken (`None` until first asked of the memory), locked for
/// the whole of a turn: one turn of a campaign at a time.
type TurnSequence = Arc<tokio::sync::Mutex<Option<u64>>>;

/// The campaigns loaded over the protocol, by id. Each is locked while a batch or a turn's
/// answer is applied (a turn's model call runs on a copy, outside the lock).
#[derive(Default)]
pub(crate) struct CampaignHub {
    loaded: parking_lot::Mutex<HashMap<String, Arc<tokio::sync::Mutex<Hosted>>>>,
    /// By campaign id; kept across reloads, so a reloaded campaign's turns count on.
    turns: parking_lot::Mutex<HashMap<String, TurnSequence>>,
}

impl CampaignHub {
    fn turn_sequence(&self, campaign_id: &str) -> TurnSequence {
        self.turns
            .lock()
            .entry(campaign_id.to_string())
            .or_default()
            .clone()
    }
}

/// The first warnings that fit [`WARNINGS_BYTES`] of JSON, and how many were left out.
fn first_warnings(mut warnings: Vec<String>) -> (Vec<String>, usize) {
    let mut used = 0;
    let keep = warnings
        .iter()
        .position(|w| {
            used += serde_json::to_string(w).map_or(0, |j| j.len()) + 1;
            used > WARNINGS_BYTES
        })
        .unwrap_or(warnings.len());
    let left_out = warnings.len() - keep;
    warnings.truncate(keep);
    (warnings, left_out)
}

/// Reads a campaign to load (blocking: the file system).
fn read_source(
    dir: Option<&Path>,
    source: CampaignSource,
) -> Result<(Loaded, Option<CampaignFile>), CampaignError> {
    match source {
        CampaignSource::Path(name) => {
            let dir = dir.ok_or(CampaignError::NoCampaignDir)?;
            let file = CampaignDir::new(dir).resolve(&name)?;
            Ok((file.load()?, Some(file)))
        }
        CampaignSource::Inline(value) => Ok((Campaign::from_json(&value)?, None)),
    }
}

/// Saves a campaign to its file (when `changed`) and appends its turn's entry to the log beside
/// it, on the blocking pool.
async fn persist(
    hosted: &Hosted,
    changed: bool,
    entry: Option<&TurnEntry>,
) -> Result<(), RuntimeError> {
    let Some(file) = hosted.file.clone() else {
        return Ok(());
    };
    let campaign = changed.then(|| hosted.campaign.clone());
    let entry = entry.cloned();
    tokio::task::spawn_blocking(move || {
        if let Some(campaign) = &campaign {
            file.save(campaign)?;
        }
        if let Some(entry) = &entry {
            file.append_turn(entry)?;
        }
        Ok::<(), CampaignError>(())
    })
    .await
    .map_err(join_failed)??;
    Ok(())
}

/// A file task of the blocking pool that did not finish (a panic, the runtime shutting down).
fn join_failed(e: tokio::task::JoinError) -> CampaignError {
    CampaignError::Io {
        path: "the campaign file".into(),
        message: format!("its file task did not finish: {e}"),
    }
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
            gate: inner.model_gate(),
            events: BrainEvents::default(),
            api_key: resolved.api_key.clone(),
            party: String::new(),
        };
        Ok(brains.create(&resolved.spec, &settings)?)
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

    /// A copy of a loaded campaign as it is now.
    pub async fn campaign_snapshot(&self, campaign_id: &str) -> Result<Campaign, RuntimeError> {
        Ok(self.hosted(campaign_id)?.lock().await.campaign.clone())
    }

    /// Takes a turn again on `before`, a copy of the campaign as it was before the turn, as
    /// [`Runtime::campaign_turn`] took it: the same game master, the same turn number and so the
    /// same brain seed. Keeps nothing (no log, no memory, no save, no event): what a replay
    /// compares with the turn as it was kept. Errors: as [`Runtime::gm_decide`].
    pub async fn replay_campaign_turn(
        &self,
        mut before: Campaign,
        gm_agent: &str,
        request: &TurnRequest<'_>,
    ) -> Result<TurnEntry, RuntimeError> {
        let decided = self.gm_decide(&before, gm_agent, request).await?;
        Ok(turn::finish(&mut before, decided, request)?)
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
    /// and keeps it by its id, replacing one loaded before under the same id. Blocks on the file
    /// system: async code calls [`Runtime::load_campaign_async`]. Errors: no campaign directory,
    /// a path that leaves it or names no regular campaign file there (see
    /// [`crate::campaign::dir`]), an unreadable or invalid campaign (every problem named).
    pub fn load_campaign(&self, source: CampaignSource) -> Result<LoadedCampaign, RuntimeError> {
        let dir = self.inner.options.campaign_dir.as_deref();
        let (loaded, file) = read_source(dir, source)?;
        self.host(loaded, file)
    }

    /// [`Runtime::load_campaign`], reading the file on the blocking pool.
    pub async fn load_campaign_async(
        &self,
        source: CampaignSource,
    ) -> Result<LoadedCampaign, RuntimeError> {
        let dir = self.inner.options.campaign_dir.clone();
        let (loaded, file) =
            tokio::task::spawn_blocking(move || read_source(dir.as_deref(), source))
                .await
                .map_err(join_failed)??;
        self.host(loaded, file)
    }

    /// Keeps a loaded campaign by its id, replacing one loaded under it. Errors:
    /// `limit_reached` when [`MAX_LOADED_CAMPAIGNS`] other campaigns are loaded.
    fn host(
        &self,
        loaded: Loaded,
        file: Option<CampaignFile>,
    ) -> Result<LoadedCampaign, RuntimeError> {
        let campaign_id = loaded.campaign.id.clone();
        let page = loaded.campaign.page(None, CAMPAIGN_REPLY_BYTES);
        let mut hosted = self.inner.campaigns.loaded.lock();
        if !hosted.contains_key(&campaign_id) && hosted.len() >= MAX_LOADED_CAMPAIGNS {
            return Err(RuntimeError::LimitReached(format!(
                "this server holds {} loaded campaigns, as many as it may \
                 (MAX_LOADED_CAMPAIGNS {MAX_LOADED_CAMPAIGNS}): unload one with campaign_unload \
                 first, or load again under a loaded id to replace it",
                hosted.len()
            )));
        }
        hosted.insert(
            campaign_id.clone(),
            Arc::new(tokio::sync::Mutex::new(Hosted {
                campaign: loaded.campaign,
                file,
            })),
        );
        drop(hosted);
        let (warnings, warnings_left_out) = first_warnings(loaded.warnings);
        Ok(LoadedCampaign {
            campaign_id,
            warnings,
            warnings_left_out,
            page,
        })
    }

    /// Unloads a campaign: later requests naming it get `unknown_campaign` until it is loaded
    /// again (a turn already running on it finishes, and saves to its file). Its turn log is
    /// kept. Errors: `unknown_campaign`.
    pub fn unload_campaign(&self, campaign_id: &str) -> Result<(), RuntimeError> {
        let hub = &self.inner.campaigns;
        if hub.loaded.lock().remove(campaign_id).is_none() {
            return Err(RuntimeError::UnknownCampaign(campaign_id.to_string()));
        }
        // The turn count is asked of the memory again after a reload, unless a turn holds it.
        let mut turns = hub.turns.lock();
        if turns
            .get(campaign_id)
            .is_some_and(|sequence| Arc::strong_count(sequence) == 1)
        {
            turns.remove(campaign_id);
        }
        Ok(())
    }

    /// How many campaigns are loaded.
    pub fn loaded_campaign_count(&self) -> usize {
        self.inner.campaigns.loaded.lock().len()
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

    /// A loaded campaign as its file holds it — whole when it fits [`CAMPAIGN_REPLY_BYTES`] and
    /// no cursor is given, otherwise the page after `after` — and how many turns its log holds.
    pub async fn campaign_state(
        &self,
        campaign_id: &str,
        after: Option<&Cursor>,
    ) -> Result<(Page, u64), RuntimeError> {
        let hosted = self.hosted(campaign_id)?;
        let page = hosted
            .lock()
            .await
            .campaign
            .page(after, CAMPAIGN_REPLY_BYTES);
        let turns = self.campaign_turn_count(campaign_id)?;
        Ok((page, turns))
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
            persist(&hosted, outcome.changed_anything(), None).await?;
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
    /// beside its file), the campaign saved when a call was applied, the change published. The
    /// turns of one campaign run one at a time, in the order they ask, each with the next turn
    /// number; a turn that fails takes no number.
    pub async fn campaign_turn(
        &self,
        campaign_id: &str,
        gm_agent: &str,
        user_input: &str,
        actor: Option<&str>,
    ) -> Result<TurnEntry, RuntimeError> {
        let hosted = self.hosted(campaign_id)?;
        let sequence = self.inner.campaigns.turn_sequence(campaign_id);
        let mut taken = sequence.lock().await;
        let done = match *taken {
            Some(done) => done,
            None => self.campaign_turn_count(campaign_id)?,
        };
        *taken = Some(done);
        let number = done + 1;
        let snapshot = hosted.lock().await.campaign.clone();
        let request = TurnRequest {
            number,
            user_input,
            actor,
        };
        let started = std::time::Instant::now();
        let mut decided = self.gm_decide(&snapshot, gm_agent, &request).await?;
        let latency = started.elapsed();
        let model_calls = std::mem::take(&mut decided.model_calls);
        let mut hosted = hosted.lock().await;
        let entry = turn::finish(&mut hosted.campaign, decided, &request)?;
        let mut journal = journal_entry(campaign_id, number, &entry, latency);
        for call in model_calls {
            journal.count_model_call(&call);
            self.inner.memory.record_brain_call(call);
        }
        if let Ok(shared) = self.running(gm_agent) {
            shared.journal.record(journal);
        }
        persist(&hosted, entry.changed(), Some(&entry)).await?;
        self.record_campaign_turn(campaign_id, &entry);
        let effects: Vec<String> = entry.effects.iter().map(|e| e.describe()).collect();
        self.inner.form_for(
            gm_agent,
            crate::memory::MemoryKind::Event,
            crate::mind::forming::campaign_turn(
                campaign_id,
                &entry.user_input,
                &entry.assistant_text,
                &effects,
            ),
            None,
        );
        *taken = Some(number);
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
