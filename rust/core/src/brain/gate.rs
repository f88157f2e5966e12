//! What model brains share with their runtime: a limit on concurrent model calls, and token
//! budgets.
//!
//! - **Per endpoint.** An HTTP call takes a permit of its endpoint (the scheme, host and port
//!   of its `base_url`; `RuntimeOptions::max_concurrent_model_calls_per_endpoint`, default 6)
//!   for the time of its request — not while it waits to retry — and waits for it holding
//!   nothing else. A thousand agents deciding at once queue instead of stampeding a provider.
//! - **Concurrency.** Then the call takes its endpoint's own lane, if no other call of the
//!   endpoint holds it, else a permit of the runtime's semaphore
//!   (`RuntimeOptions::max_concurrent_model_calls`, default 8), whichever frees first. An
//!   endpoint's first call in flight is its own share and needs nothing of the others, so
//!   endpoints that hang — however many — never keep a healthy endpoint's call waiting: it
//!   starts as soon as its own endpoint has a free permit. The runtime's permits bound the
//!   calls beyond each endpoint's first: at most `max_concurrent_model_calls` plus one per
//!   endpoint in use are in flight.
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
use tokio::sync::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};

/// The default of `RuntimeOptions::max_concurrent_model_calls`.
pub const DEFAULT_MAX_CONCURRENT_MODEL_CALLS: usize = 8;
/// The default of `RuntimeOptions::max_concurrent_model_calls_per_endpoint`.
pub const DEFAULT_MAX_CONCURRENT_CALLS_PER_ENDPOINT: usize = 6;

/// The permits of each model endpoint. An endpoint's semaphores are made on first use and
/// forgotten once nobody holds or waits for them, so endpoints named by clients do not pile up.
#[derive(Debug)]
pub struct EndpointLimits {
    per_endpoint: usize,
    endpoints: Mutex<HashMap<String, Arc<Endpoint>>>,
}

/// One endpoint's semaphores.
#[derive(Debug)]
struct Endpoint {
    /// Its calls in flight (`per_endpoint` permits).
    permits: Arc<Semaphore>,
    /// Its own lane (one permit): the call holding it takes none of the runtime's permits.
    lane: Arc<Semaphore>,
}

impl EndpointLimits {
    /// `per_endpoint` permits for each endpoint (at least 1).
    pub fn new(per_endpoint: usize) -> Self {
        EndpointLimits {
            per_endpoint: per_endpoint.max(1),
            endpoints: Mutex::new(HashMap::new()),
        }
    }

    /// The semaphores of `endpoint`.
    fn of(&self, endpoint: &str) -> Arc<Endpoint> {
        let mut endpoints = self.endpoints.lock();
        if let Some(semaphores) = endpoints.get(endpoint) {
            return semaphores.clone();
        }
        // Only this map holds an idle endpoint's semaphores (a permit, held or awaited, holds
        // them too): forget those.
        endpoints.retain(|_, e| Arc::strong_count(e) > 1);
        let semaphores = Arc::new(Endpoint {
            permits: Arc::new(Semaphore::new(self.per_endpoint)),
            lane: Arc::new(Semaphore::new(1)),
        });
        endpoints.insert(endpoint.to_string(), semaphores.clone());
        semaphores
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

/// The permits of one HTTP model call: its endpoint's, and its endpoint's lane or one of the
/// runtime's (exactly one of the two).
pub struct CallPermit<'a> {
    _lane: Option<OwnedSemaphorePermit>,
    _runtime: Option<SemaphorePermit<'a>>,
    _endpoint: OwnedSemaphorePermit,
    /// Keeps the endpoint known while its call runs.
    _known: Arc<Endpoint>,
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

    /// Waits for a call's permits: `endpoint`'s first (holding nothing else while it waits),
    /// then the endpoint's lane or one of the runtime's permits, whichever is free first (the
    /// lane when both are). Held for the time of one HTTP request.
    pub async fn permit(&self, endpoint: &str) -> Result<CallPermit<'_>, Closed> {
        let known = self.endpoints.of(endpoint);
        if self.calls.is_closed() {
            return Err(Closed);
        }
        let held = known.permits.clone().acquire_owned().await;
        let held = held.map_err(|_| Closed)?;
        let (lane, runtime) = tokio::select! {
            biased;
            lane = known.lane.clone().acquire_owned() => (Some(lane.map_err(|_| Closed)?), None),
            runtime = self.calls.acquire() => (None, Some(runtime.map_err(|_| Closed)?)),
        };
        Ok(CallPermit {
            _lane: lane,
            _runtime: runtime,
            _endpoint: held,
            _known: known,
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

    /// A permit that is free now (`None`: it would wait).
    fn now<'a>(gate: &'a ModelGate, endpoint: &str) -> Option<CallPermit<'a>> {
        let permit = futures_util::FutureExt::now_or_never(gate.permit(endpoint));
        permit.map(|p| p.unwrap())
    }

    #[tokio::test]
    async fn one_endpoint_holds_at_most_its_share_of_the_runtimes_permits() {
        let gate = ModelGate {
            calls: Arc::new(Semaphore::new(4)),
            endpoints: Arc::new(EndpointLimits::new(3)),
            ..ModelGate::default()
        };
        let mut slow: Vec<_> = (0..3)
            .map(|_| now(&gate, "http://slow.test").unwrap())
            .collect();
        // Its own lane and two of the runtime's permits.
        assert_eq!(gate.calls.available_permits(), 2);
        // A fourth call to the slow endpoint waits for its endpoint, not for the runtime…
        let waiting = gate.permit("http://slow.test");
        tokio::pin!(waiting);
        assert!(
            futures_util::FutureExt::now_or_never(waiting.as_mut()).is_none(),
            "the endpoint is full"
        );
        assert_eq!(gate.calls.available_permits(), 2);
        // …so another endpoint still gets its calls through.
        let other = now(&gate, "http://healthy.test").unwrap();
        assert_eq!(gate.calls.available_permits(), 2, "its own lane");
        drop(other);
        drop(slow.pop());
        let fourth = waiting.await.unwrap();
        drop(fourth);
        drop(slow);
        assert_eq!(gate.calls.available_permits(), 4);
        // Idle endpoints are forgotten when a new one comes.
        drop(now(&gate, "http://third.test").unwrap());
        assert_eq!(gate.endpoints.known(), 1);
        gate.calls.close();
        assert_eq!(gate.permit("http://slow.test").await.err(), Some(Closed));
    }

    #[tokio::test]
    async fn endpoints_that_hang_never_hold_back_the_first_call_of_another() {
        // The runtime's defaults, and the probe's counts: 4 + 4 calls hanging on two
        // endpoints take every permit of the runtime but their two lanes' worth.
        let gate = ModelGate::default();
        let hanging: Vec<_> = ["http://a.test", "http://b.test"]
            .iter()
            .flat_map(|e| (0..4).map(|_| now(&gate, e).unwrap()).collect::<Vec<_>>())
            .collect();
        assert_eq!(gate.calls.available_permits(), 2);
        // Hanging endpoints of their own fill the rest.
        let more: Vec<_> = ["http://c.test", "http://d.test"]
            .iter()
            .flat_map(|e| (0..2).map(|_| now(&gate, e).unwrap()).collect::<Vec<_>>())
            .collect();
        assert_eq!(gate.calls.available_permits(), 0);
        // A healthy endpoint's call still starts at once; its second waits for the runtime.
        let healthy = now(&gate, "http://healthy.test").expect("its own lane is free");
        let second = gate.permit("http://healthy.test");
        tokio::pin!(second);
        assert!(futures_util::FutureExt::now_or_never(second.as_mut()).is_none());
        // Whichever frees first lets it go: its own lane here.
        drop(healthy);
        drop(second.await.unwrap());
        drop((hanging, more));
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
