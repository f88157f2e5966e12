//! What model brains share with their runtime: a limit on concurrent model calls, and token
//! budgets.
//!
//! - **Concurrency.** Every model call of a runtime takes a permit of one semaphore
//!   (`RuntimeOptions::max_concurrent_model_calls`, default 8) for the time of its HTTP
//!   request — not while it waits to retry. A thousand agents deciding at once queue for it
//!   instead of stampeding the provider.
//! - **Per endpoint.** Before that, an HTTP call takes a permit of its endpoint (the scheme,
//!   host and port of its `base_url`; `RuntimeOptions::max_concurrent_model_calls_per_endpoint`,
//!   default 6), and waits for it without holding a runtime permit. So one slow or hanging
//!   provider holds at most that many of the runtime's permits, and agents of every other
//!   endpoint keep thinking.
//! - **Budgets.** Tokens are counted from the usage the provider reports (input + output). The
//!   runtime has a budget (`RuntimeOptions::token_budget`) and each agent one (its brain's
//!   `token_budget`); both default to none. A decision whose agent or runtime budget is spent
//!   calls no model: the agent reports `agent_error` `budget_exhausted`, until the budget is
//!   raised (`Runtime::set_token_budget`, `Runtime::set_agent_token_budget`). A call that
//!   started within budget finishes, so a budget can be overspent by one call.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::sync::{Semaphore, SemaphorePermit};

/// The default of `RuntimeOptions::max_concurrent_model_calls`.
pub const DEFAULT_MAX_CONCURRENT_MODEL_CALLS: usize = 8;
/// The default of `RuntimeOptions::max_concurrent_model_calls_per_endpoint`.
pub const DEFAULT_MAX_CONCURRENT_CALLS_PER_ENDPOINT: usize = 6;

/// The permits of each model endpoint. An endpoint's semaphore is made on first use and
/// forgotten once nobody holds or waits for it, so endpoints named by clients do not pile up.
#[derive(Debug)]
pub struct EndpointLimits {
    per_endpoint: usize,
    endpoints: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl EndpointLimits {
    /// `per_endpoint` permits for each endpoint (at least 1).
    pub fn new(per_endpoint: usize) -> Self {
        EndpointLimits {
            per_endpoint: per_endpoint.max(1),
            endpoints: Mutex::new(HashMap::new()),
        }
    }

    /// The semaphore of `endpoint`.
    fn of(&self, endpoint: &str) -> Arc<Semaphore> {
        let mut endpoints = self.endpoints.lock();
        if let Some(semaphore) = endpoints.get(endpoint) {
            return semaphore.clone();
        }
        // Only this map holds an idle endpoint's semaphore: forget those.
        endpoints.retain(|_, s| Arc::strong_count(s) > 1);
        let semaphore = Arc::new(Semaphore::new(self.per_endpoint));
        endpoints.insert(endpoint.to_string(), semaphore.clone());
        semaphore
    }

    /// How many endpoints are known now (idle ones are forgotten at the next new one).
    pub fn known(&self) -> usize {
        self.endpoints.lock().len()
    }
}

impl Default for EndpointLimits {
    fn default() -> Self {
        EndpointLimits::new(DEFAULT_MAX_CONCURRENT_CALLS_PER_ENDPOINT)
    }
}

/// The two permits of one HTTP model call: its endpoint's and the runtime's.
pub struct CallPermit<'a> {
    _runtime: SemaphorePermit<'a>,
    _endpoint: tokio::sync::OwnedSemaphorePermit,
}

/// The runtime is shutting down (its semaphores are closed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the runtime is shutting down")]
pub struct Closed;

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
    /// The permits of each endpoint, taken before the runtime's.
    pub endpoints: Arc<EndpointLimits>,
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
            endpoints: Arc::default(),
            runtime_budget: Arc::default(),
            agent_budget: Arc::default(),
        }
    }
}

/// Who makes a traced model call, and whether its prompt and answer are kept.
pub(crate) struct CallLabel<'a> {
    /// The provider (`openai`, `cli`, …).
    pub provider: &'a str,
    /// The model, if named.
    pub model: Option<String>,
    /// Keep the prompt and the answer in the trace.
    pub trace_prompts: bool,
}

impl ModelGate {
    /// One model call through the budgets and into the trace, the sequence every model brain
    /// shares: refused (`budget_exhausted`) when a budget is spent; else `run` — which takes
    /// its own permits ([`ModelGate::permit`], or [`ModelGate::calls`]) and retries where it
    /// may — is timed, the tokens it reports are spent, and its trace record is left in
    /// `report` (the prompt, from `prompt`, and the answer when `label` keeps them; the error
    /// code from `code` when it failed). Returns the call's own outcome.
    pub(crate) async fn traced<T: serde::Serialize, E>(
        &self,
        label: CallLabel<'_>,
        prompt: impl FnOnce() -> String,
        run: impl std::future::Future<Output = Result<(T, agents_llm::Usage), E>>,
        code: impl FnOnce(&E) -> String,
        report: &mut Option<crate::memory::BrainCall>,
    ) -> Result<Result<T, E>, super::BrainError> {
        if let Some(why) = self.refusal() {
            return Err(super::BrainError::BudgetExhausted(why));
        }
        let started_at = crate::time::now_iso();
        let start = std::time::Instant::now();
        let result = run.await;
        let call = super::call_report(
            label.provider,
            label.model,
            started_at,
            start,
            result.as_ref().map(|(_, usage)| *usage).map_err(code),
        );
        self.spend(call.input_tokens + call.output_tokens);
        *report = Some(crate::memory::BrainCall {
            prompt: label.trace_prompts.then(prompt),
            reply: match (&result, label.trace_prompts) {
                (Ok((answer, _)), true) => serde_json::to_string(answer).ok(),
                _ => None,
            },
            ..call
        });
        Ok(result.map(|(answer, _)| answer))
    }

    /// Waits for a call's permits: `endpoint`'s first (holding nothing of the runtime's while
    /// it waits), then the runtime's. Held for the time of one HTTP request.
    pub async fn permit(&self, endpoint: &str) -> Result<CallPermit<'_>, Closed> {
        let endpoint = self
            .endpoints
            .of(endpoint)
            .acquire_owned()
            .await
            .map_err(|_| Closed)?;
        let runtime = self.calls.acquire().await.map_err(|_| Closed)?;
        Ok(CallPermit {
            _runtime: runtime,
            _endpoint: endpoint,
        })
    }

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

    #[tokio::test]
    async fn one_endpoint_holds_at_most_its_share_of_the_runtimes_permits() {
        let gate = ModelGate {
            calls: Arc::new(Semaphore::new(4)),
            endpoints: Arc::new(EndpointLimits::new(3)),
            ..ModelGate::default()
        };
        let mut slow = Vec::new();
        for _ in 0..3 {
            slow.push(gate.permit("http://slow.test").await.unwrap());
        }
        // A fourth call to the slow endpoint waits for its endpoint, not for the runtime…
        let waiting = gate.permit("http://slow.test");
        tokio::pin!(waiting);
        assert!(
            futures_util::FutureExt::now_or_never(waiting.as_mut()).is_none(),
            "the endpoint is full"
        );
        assert_eq!(gate.calls.available_permits(), 1);
        // …so another endpoint still gets a call through.
        let other = gate.permit("http://healthy.test").await.unwrap();
        assert_eq!(gate.calls.available_permits(), 0);
        drop(other);
        drop(slow.pop());
        let fourth = waiting.await.unwrap();
        drop(fourth);
        drop(slow);
        // Idle endpoints are forgotten when a new one comes.
        drop(gate.permit("http://third.test").await.unwrap());
        assert_eq!(gate.endpoints.known(), 1);
        gate.calls.close();
        assert_eq!(gate.permit("http://slow.test").await.err(), Some(Closed));
    }

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
