//! What model brains share with their runtime: a limit on concurrent model calls, and token
//! budgets.
//!
//! - **Concurrency.** Every model call of a runtime takes a permit of one semaphore
//!   (`RuntimeOptions::max_concurrent_model_calls`, default 8) for the time of its HTTP
//!   request — not while it waits to retry. A thousand agents deciding at once queue for it
//!   instead of stampeding the provider.
//! - **Budgets.** Tokens are counted from the usage the provider reports (input + output). The
//!   runtime has a budget (`RuntimeOptions::token_budget`) and each agent one (its brain's
//!   `token_budget`); both default to none. A decision whose agent or runtime budget is spent
//!   calls no model: the agent reports `agent_error` `budget_exhausted`, until the budget is
//!   raised (`Runtime::set_token_budget`, `Runtime::set_agent_token_budget`). A call that
//!   started within budget finishes, so a budget can be overspent by one call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Semaphore;

/// The default of `RuntimeOptions::max_concurrent_model_calls`.
pub const DEFAULT_MAX_CONCURRENT_MODEL_CALLS: usize = 8;

/// Tokens spent against an optional limit. Lock-free; shared between threads.
#[derive(Debug)]
pub struct TokenBudget {
    spent: AtomicU64,
    /// `u64::MAX`: no limit.
    limit: AtomicU64,
}

impl Default for TokenBudget {
    fn default() -> Self {
        TokenBudget::new(None)
    }
}

impl TokenBudget {
    /// Nothing spent, `limit` tokens allowed (`None`: unlimited).
    pub fn new(limit: Option<u64>) -> Self {
        TokenBudget {
            spent: AtomicU64::new(0),
            limit: AtomicU64::new(limit.unwrap_or(u64::MAX)),
        }
    }

    /// Counts `tokens` as spent.
    pub fn spend(&self, tokens: u64) {
        self.spent.fetch_add(tokens, Ordering::Relaxed);
    }

    /// Tokens spent so far.
    pub fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }

    /// The limit, if any.
    pub fn limit(&self) -> Option<u64> {
        match self.limit.load(Ordering::Relaxed) {
            u64::MAX => None,
            n => Some(n),
        }
    }

    /// Sets (raises, lowers, removes) the limit.
    pub fn set_limit(&self, limit: Option<u64>) {
        self.limit
            .store(limit.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// True when a limit is set and reached.
    pub fn exhausted(&self) -> bool {
        self.limit().is_some_and(|limit| self.spent() >= limit)
    }
}

/// The limiter and the budgets one agent's model brain uses.
#[derive(Clone, Debug)]
pub struct ModelGate {
    /// The runtime's permits for concurrent model calls.
    pub calls: Arc<Semaphore>,
    /// The runtime's token budget.
    pub runtime_budget: Arc<TokenBudget>,
    /// This agent's token budget.
    pub agent_budget: Arc<TokenBudget>,
}

impl Default for ModelGate {
    /// Eight permits, no limits, a budget of its own.
    fn default() -> Self {
        ModelGate {
            calls: Arc::new(Semaphore::new(DEFAULT_MAX_CONCURRENT_MODEL_CALLS)),
            runtime_budget: Arc::default(),
            agent_budget: Arc::default(),
        }
    }
}

impl ModelGate {
    /// Why no model may be called now, if a budget is spent.
    pub fn refusal(&self) -> Option<String> {
        let spent = |b: &TokenBudget| (b.spent(), b.limit().unwrap_or(0));
        if self.agent_budget.exhausted() {
            let (spent, limit) = spent(&self.agent_budget);
            return Some(format!(
                "the agent's token budget is spent ({spent} of {limit} tokens): raise it to let \
                 it think again"
            ));
        }
        if self.runtime_budget.exhausted() {
            let (spent, limit) = spent(&self.runtime_budget);
            return Some(format!(
                "the runtime's token budget is spent ({spent} of {limit} tokens): raise it to \
                 let agents think again"
            ));
        }
        None
    }

    /// Counts a call's tokens against both budgets.
    pub fn spend(&self, tokens: u64) {
        self.agent_budget.spend(tokens);
        self.runtime_budget.spend(tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_count_and_refuse_until_raised() {
        let gate = ModelGate::default();
        gate.agent_budget.set_limit(Some(100));
        assert_eq!(gate.refusal(), None);
        gate.spend(60);
        assert_eq!(gate.refusal(), None);
        gate.spend(60);
        let why = gate.refusal().unwrap();
        assert!(why.contains("120 of 100"), "{why}");
        gate.agent_budget.set_limit(Some(1000));
        assert_eq!(gate.refusal(), None);
        gate.runtime_budget.set_limit(Some(100));
        assert!(gate.refusal().unwrap().contains("runtime's token budget"));
        gate.runtime_budget.set_limit(None);
        assert_eq!(gate.refusal(), None);
        assert_eq!(gate.runtime_budget.spent(), 120);
    }
}
