//! The runtime's brains: the providers and named brains it knows, the API keys it was given,
//! and the tokens its model brains spent against their budgets.

use super::*;

impl Runtime {
    /// Tokens the runtime's model brains have spent (as providers reported them), and the
    /// runtime-wide limit.
    pub fn token_usage(&self) -> (u64, Option<u64>) {
        let b = &self.inner.token_budget;
        (b.spent(), b.limit())
    }

    /// Sets (raises, lowers, removes) the runtime-wide token budget. Agents stopped by a spent
    /// budget think again at their next decision once it allows.
    pub fn set_token_budget(&self, limit: Option<u64>) {
        self.inner.token_budget.set_limit(limit);
    }

    /// Tokens a running agent's model brain has spent, and its limit.
    pub fn agent_token_usage(&self, agent_id: &str) -> Result<(u64, Option<u64>), RuntimeError> {
        let shared = self.running(agent_id)?;
        Ok((shared.token_budget.spent(), shared.token_budget.limit()))
    }

    /// Sets (raises, lowers, removes) a running agent's token budget.
    pub fn set_agent_token_budget(
        &self,
        agent_id: &str,
        limit: Option<u64>,
    ) -> Result<(), RuntimeError> {
        self.running(agent_id)?.token_budget.set_limit(limit);
        Ok(())
    }

    /// Checks a brain choice as a spawn would — the profile or brain exists, the object's fields
    /// are right, the provider accepts it (its model, its key variable) — without spawning.
    /// Returns how agents with it are labelled (`local`, `openai:gpt-4o-mini`). Errors:
    /// `invalid_config` naming what is wrong.
    pub fn check_brain(&self, choice: &BrainChoice) -> Result<String, RuntimeError> {
        let resolved = self
            .inner
            .brains
            .read()
            .resolve(choice, &self.inner.options.brain_profiles)?;
        Ok(resolved.label)
    }

    /// Hands the runtime an API key for the environment variable `name` (`OPENAI_API_KEY`, or a
    /// brain's `api_key_env`), in memory only: it is preferred to the variable, never stored,
    /// logged or reported, and gone when the process ends. Agents spawned from now on use it;
    /// running ones keep theirs. An empty key removes one handed over before.
    pub fn set_api_key(&self, name: &str, key: &str) {
        self.inner.brains.read().keys().set(name, key);
    }

    /// Adds a kind of brain, usable by name in [`AgentConfig::brain`] from now on. Errors:
    /// the name is taken or empty (`invalid_config`).
    pub fn register_brain(
        &self,
        name: &str,
        factory: impl BrainFactory + 'static,
    ) -> Result<(), RuntimeError> {
        self.inner.brains.write().register(name, factory)?;
        Ok(())
    }

    /// Adds a provider: brain objects naming `name` as their `provider` are read as its
    /// [`crate::brain::Provider::Options`] (a field it does not know is refused, named) and
    /// built by it. Errors: the name is taken or empty (`invalid_config`).
    pub fn register_provider(
        &self,
        name: &str,
        provider: impl crate::brain::Provider,
    ) -> Result<(), RuntimeError> {
        self.inner
            .brains
            .write()
            .register_provider(name, provider)?;
        Ok(())
    }

    /// The names of the brains agents can use, sorted.
    pub fn brain_names(&self) -> Vec<String> {
        self.inner
            .brains
            .read()
            .names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }
}
