//! Campaigns in the runtime: brains for game masters.

use std::sync::Arc;

use super::{Runtime, RuntimeError};
use crate::brain::gate::{ModelGate, TokenBudget};
use crate::brain::{Brain, BrainChoice, BrainEvents, BrainSettings};

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
}
