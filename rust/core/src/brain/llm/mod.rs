//! The model brains: `openai` (OpenAI and every compatible server) and `anthropic`.
//!
//! A brain object (`{"provider": "openai", "model": …}`, [`crate::brain::BrainSpec`]) is checked
//! at spawn ([`ProviderFactory`]): the model is required, and the API key's environment variable
//! (`api_key_env`, default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`) must be set unless the
//! `base_url` is on loopback (a local server: Ollama, llama.cpp, LM Studio, vLLM). The key is
//! read when the brain is built — a key handed to the runtime ([`ApiKeys`]), else the
//! environment — and kept in memory only, as a [`agents_llm::client::Secret`]: it never
//! reaches SQLite, a log line, an error or the trace.
//!
//! Each decision is one streamed request ([`prompt`]), retried on passing failures (429 —
//! honouring `Retry-After` up to [`MAX_RETRY_WAIT`]: a longer one is not retried —, 5xx, a lost
//! connection, a timeout) with exponential backoff and jitter, up to `max_retries` times; the
//! answer becomes the contract ([`reply`]). Every HTTP request holds a permit of its endpoint and
//! one of the runtime ([`super::gate`]). Every call is reported for the `brain_calls` trace.
//! A reflection and a batch of importance ratings ([`reflect`]) are calls of the same kind,
//! not streamed, each asking for one JSON object.

pub mod prompt;
pub mod reflect;
pub mod reply;

use std::sync::OnceLock;
use std::time::Duration;

use agents_llm::client::{CallError, Client, Endpoint, Provider, Secret, backoff};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use agents_llm::{ModelReply, ModelRequest};

use super::keys::ApiKeys;
use super::rating::{RateFuture, RatingRequest};
use super::reflection::{ReflectFuture, ReflectionRequest};
use super::{Brain, BrainContext, BrainError, BrainSettings, BrainSpec, DecideFuture};
use crate::memory::BrainCall;
use prompt::RequestOptions;

/// The provider names the built-in factories register.
pub const OPENAI: &str = "openai";
/// See [`OPENAI`].
pub const ANTHROPIC: &str = "anthropic";

/// Default `timeout_seconds`.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;
/// Default `max_retries`.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// The longest a brain waits before a retry: a provider asking for a longer wait
/// (`Retry-After`) gets no retry, and the call fails at once as rate limited.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// The process's HTTP client (one connection pool for every agent).
fn client() -> Result<&'static Client, BrainError> {
    static CLIENT: OnceLock<Result<Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| Client::new().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| BrainError::Backend(e.clone()))
}

/// Builds `openai` or `anthropic` brains from brain objects, with the keys of an [`ApiKeys`].
#[derive(Clone, Debug)]
pub struct ProviderFactory {
    provider: Provider,
    keys: ApiKeys,
}

impl ProviderFactory {
    /// The `openai` factory.
    pub fn openai(keys: ApiKeys) -> Self {
        ProviderFactory {
            provider: Provider::OpenAi,
            keys,
        }
    }

    /// The `anthropic` factory.
    pub fn anthropic(keys: ApiKeys) -> Self {
        ProviderFactory {
            provider: Provider::Anthropic,
            keys,
        }
    }

    fn name(&self) -> &'static str {
        match self.provider {
            Provider::OpenAi => OPENAI,
            Provider::Anthropic => ANTHROPIC,
        }
    }

    fn default_base_url(&self) -> &'static str {
        match self.provider {
            Provider::OpenAi => agents_llm::openai::DEFAULT_BASE_URL,
            Provider::Anthropic => agents_llm::anthropic::DEFAULT_BASE_URL,
        }
    }

    fn default_key_env(&self) -> &'static str {
        match self.provider {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The checked parts of a spec: model, base URL, key variable, whether a key is needed.
    fn read(&self, options: &serde_json::Value) -> Result<Checked, BrainError> {
        let spec: BrainSpec = serde_json::from_value(options.clone())
            .map_err(|e| BrainError::Invalid(format!("brain: {e}")))?;
        for (field, set) in [
            ("command", spec.command.is_some()),
            ("cli_backend", spec.cli_backend.is_some()),
        ] {
            if set {
                return Err(BrainError::Invalid(format!(
                    "brain.{field} applies to the cli provider only, not to {}",
                    self.name()
                )));
            }
        }
        let model = spec.model.clone().ok_or_else(|| {
            BrainError::Invalid(format!(
                "brain.model is required for the {} provider",
                self.name()
            ))
        })?;
        let base_url = spec
            .base_url
            .clone()
            .unwrap_or_else(|| self.default_base_url().to_string());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(BrainError::Invalid(format!(
                "brain.base_url must start with http:// or https://, got '{base_url}'"
            )));
        }
        let key = match spec.api_key {
            Some(_) => KeySource::Inline,
            None => KeySource::Env(
                spec.api_key_env
                    .clone()
                    .unwrap_or_else(|| self.default_key_env().to_string()),
            ),
        };
        Ok(Checked {
            needs_key: !is_loopback(&base_url),
            spec,
            model,
            base_url,
            key,
        })
    }

    /// The key to send: the brain object's own (`api_key`, never the runtime's keys or the
    /// environment, even when empty), else the one handed over or in the environment under
    /// its variable. An error when a key is needed and there is none.
    fn key(
        &self,
        checked: &Checked,
        inline: Option<&Secret>,
    ) -> Result<Option<Secret>, BrainError> {
        let key = match &checked.key {
            KeySource::Inline => {
                let key = inline.ok_or_else(|| {
                    BrainError::Invalid(
                        "brain.api_key is not stored: give the brain object with its api_key \
                         again to run this agent"
                            .into(),
                    )
                })?;
                Some(key.clone()).filter(|k| !k.expose().is_empty())
            }
            KeySource::Env(name) => self.keys.get(name),
        };
        if checked.needs_key && key.is_none() {
            return Err(BrainError::Invalid(match &checked.key {
                KeySource::Inline => format!(
                    "brain.api_key is empty; the {} provider needs a key for {} (only a \
                     loopback base_url may go without one)",
                    self.name(),
                    checked.base_url
                ),
                KeySource::Env(name) => format!(
                    "brain: the environment variable {name} is not set; the {} provider needs \
                     an API key there, or handed to the runtime with set_api_key (set \
                     api_key_env to use another variable; a loopback base_url may go without a \
                     key)",
                    self.name()
                ),
            }));
        }
        Ok(key)
    }
}

/// Where a brain's key comes from.
enum KeySource {
    /// The brain object's own `api_key`.
    Inline,
    /// A key handed to the runtime, else the environment, under this variable name.
    Env(String),
}

struct Checked {
    spec: BrainSpec,
    model: String,
    base_url: String,
    key: KeySource,
    needs_key: bool,
}

/// Whether a URL's host is this machine (`localhost`, `127.*`, `[::1]`).
pub fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or("");
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl super::BrainFactory for ProviderFactory {
    fn check(
        &self,
        options: &serde_json::Value,
        api_key: Option<&Secret>,
    ) -> Result<(), BrainError> {
        let checked = self.read(options)?;
        self.key(&checked, api_key).map(drop)
    }

    fn build(
        &self,
        options: &serde_json::Value,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        let checked = self.read(options)?;
        let api_key = self.key(&checked, settings.api_key.as_ref())?;
        let spec = &checked.spec;
        Ok(Box::new(ModelBrain {
            provider: self.name(),
            endpoint_key: super::policy::Origin::of_url(&checked.base_url)
                .map(|o| o.to_string())
                .unwrap_or_else(|_| checked.base_url.clone()),
            endpoint: Endpoint {
                provider: self.provider,
                base_url: checked.base_url,
                api_key,
                headers: spec.headers.clone().into_iter().collect(),
                timeout: Duration::from_secs_f64(
                    spec.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
                ),
            },
            options: RequestOptions {
                model: checked.model,
                temperature: spec.temperature,
                max_tokens: spec.max_tokens,
                stream: true,
            },
            max_retries: spec.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            trace_prompts: spec.trace_prompts,
            rng: ChaCha8Rng::seed_from_u64(settings.seed),
            gate: {
                settings.gate.agent_budget.set_limit(spec.token_budget);
                settings.gate.clone()
            },
            events: settings.events.clone(),
            last_call: None,
        }))
    }
}

/// A brain that asks a model over HTTP.
pub struct ModelBrain {
    provider: &'static str,
    endpoint: Endpoint,
    /// The endpoint's limiter key: its base URL's origin.
    endpoint_key: String,
    options: RequestOptions,
    max_retries: u32,
    trace_prompts: bool,
    rng: ChaCha8Rng,
    gate: super::gate::ModelGate,
    events: super::BrainEvents,
    last_call: Option<BrainCall>,
}

impl ModelBrain {
    /// One model call with the gate's budgets and permit, retries with backoff, the trace
    /// record ([`Brain::take_call_report`]) and the tokens spent; text streams to the game's
    /// events when the request streams.
    async fn call(&mut self, request: &ModelRequest) -> Result<ModelReply, BrainError> {
        let client = client()?;
        let (gate, endpoint, endpoint_key, events) =
            (&self.gate, &self.endpoint, &self.endpoint_key, &self.events);
        let (rng, max_retries, provider) = (&mut self.rng, self.max_retries, self.provider);
        let run = async {
            let mut retries = 0;
            loop {
                let attempt = {
                    // One permit per HTTP request (not while waiting to retry).
                    let _permit = match gate.permit(endpoint_key).await {
                        Ok(permit) => permit,
                        Err(e) => break Err(BrainError::Backend(e.to_string())),
                    };
                    client
                        .complete(endpoint, request, &mut |event| events.report(&event))
                        .await
                };
                match attempt {
                    Err(e)
                        if e.retryable()
                            && retries < max_retries
                            && e.retry_after().is_none_or(|w| w <= MAX_RETRY_WAIT) =>
                    {
                        retries += 1;
                        let jitter = rng.random_range(0.0..=1.0);
                        let wait = backoff(retries, e.retry_after(), jitter);
                        tracing::debug!(provider, retries, ?wait, "retrying: {e}");
                        tokio::time::sleep(wait).await;
                    }
                    other => {
                        break other
                            .map(|reply| {
                                let usage = reply.usage;
                                (reply, usage)
                            })
                            .map_err(BrainError::Call);
                    }
                }
            }
        };
        let label = super::gate::CallLabel {
            provider,
            model: Some(self.options.model.clone()),
            trace_prompts: self.trace_prompts,
        };
        gate.traced(
            label,
            || serde_json::to_string(request).unwrap_or_default(),
            run,
            |e: &BrainError| match e {
                BrainError::Call(e) => e.code().as_str().to_string(),
                other => other.agent_error_code().as_str().to_string(),
            },
            &mut self.last_call,
        )
        .await?
    }
}

impl Brain for ModelBrain {
    fn name(&self) -> &str {
        self.provider
    }

    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        Box::pin(async move {
            let request = prompt::request(context, &self.options);
            let reply = self.call(&request).await?;
            Ok(reply::to_contract(&reply))
        })
    }

    fn take_call_report(&mut self) -> Option<BrainCall> {
        self.last_call.take()
    }

    fn reflect<'a>(&'a mut self, request: &'a ReflectionRequest) -> ReflectFuture<'a> {
        Box::pin(async move {
            let model_request = reflect::request(request, &self.options);
            let reply = self.call(&model_request).await?;
            reflect::answer(&reply)
                .map(Some)
                .map_err(BrainError::InvalidReply)
        })
    }

    fn rate<'a>(&'a mut self, request: &'a RatingRequest) -> RateFuture<'a> {
        Box::pin(async move {
            let model_request = reflect::rating_request(request, &self.options);
            let reply = self.call(&model_request).await?;
            reflect::ratings(&reply)
                .map(Some)
                .map_err(BrainError::InvalidReply)
        })
    }
}

impl From<CallError> for BrainError {
    fn from(e: CallError) -> Self {
        BrainError::Call(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080/v1",
            "http://LOCALHOST/v1",
            "http://[::1]:8000/v1",
            "http://127.1.2.3/",
            "http://user@127.0.0.1:9/v1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.5:8080/v1",
            "http://localhost.evil.com/v1",
            "http://127.0.0.1.nip.io/v1",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }
}
