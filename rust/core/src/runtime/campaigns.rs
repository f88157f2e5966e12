//! Campaigns in the runtime: brains for game masters, GM turns through an agent, and the
//! turn log in SQLite (`campaign_turns`).

use std::sync::Arc;

use super::{Runtime, RuntimeError};
use crate::brain::gate::{ModelGate, TokenBudget};
use crate::brain::{Brain, BrainChoice, BrainEvents, BrainSettings};
use crate::campaign::Campaign;
use crate::campaign::turn::{self, Decided, GmIdentity, TurnEntry, TurnRequest};

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
}
