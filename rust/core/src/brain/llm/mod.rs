//! The model brains over HTTP: one [`HttpBrains`] per provider of the `agents-llm` crate
//! (`openai` for OpenAI and every compatible server, `anthropic`, `ollama`), each registered
//! in one line of [`super::BrainRegistry::with_builtins`]; what else needs to know the HTTP
//! providers ([`api`], the client policy, the protocol's schema) asks that registry.
//!
//! A brain object (`{"provider": "openai", "model": …}`) is read as its provider's options
//! ([`agents_llm::api::HttpProvider::Options`]) and checked at spawn: the fields every HTTP
//! provider takes ([`HttpOptions`]) here, the provider's own by the provider. The model is
//! required, and the API key's environment variable (`api_key_env`, default the provider's:
//! `OPENAI_API_KEY`, …) must be set unless the `base_url` is on loopback (a local server:
//! Ollama, llama.cpp, LM Studio, vLLM) or the provider needs no key (`ollama`: a key is sent when
//! there is one). The key is read when the brain is built —
//! a key handed to the runtime ([`ApiKeys`]), else the environment — and kept in memory only,
//! as a [`agents_llm::client::Secret`]: it never reaches SQLite, a log line, an error or the
//! trace.
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

pub use agents_llm::api::HttpOptions;
use agents_llm::api::{Api, HttpProvider};
use agents_llm::client::{CallError, Client, Endpoint, Secret, backoff};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

use agents_llm::{ModelReply, ModelRequest};

use super::keys::ApiKeys;
use super::provider::{check_max_tokens, check_not_blank, check_temperature, check_timeout};
use super::rating::{RateFuture, RatingRequest};
use super::reflection::{ReflectFuture, ReflectionRequest};
use super::{Brain, BrainContext, BrainError, BrainSettings, BrainSpec, DecideFuture};
use crate::memory::BrainCall;
use prompt::RequestOptions;

/// The wire format of the built-in HTTP provider registered as `provider`
/// ([`super::BrainRegistry::http_api`] of the built-in registry).
pub fn api(provider: &str) -> Option<&'static dyn Api> {
    super::BrainRegistry::builtins().http_api(provider)
}

/// The base URL a brain object of an HTTP provider calls, as its provider resolves it: its
/// `base_url`, or the provider's default when the field is left out or `null`. An error when
/// `provider` is no HTTP provider or its `base_url` is not text (the message names the field:
/// `brain.base_url: invalid type: …`). Every HTTP provider takes `base_url` ([`HttpOptions`]);
/// the other fields are not read here.
pub fn resolved_base_url(spec: &BrainSpec) -> Result<String, String> {
    let api = api(&spec.provider)
        .ok_or_else(|| format!("'{}' is not an HTTP provider", spec.provider))?;
    #[derive(Deserialize)]
    struct BaseUrl {
        #[serde(default)]
        base_url: Option<String>,
    }
    let options: BaseUrl = spec.options_as()?;
    Ok(options
        .base_url
        .unwrap_or_else(|| api.default_base_url().to_string()))
}

/// Default `timeout_seconds`.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;
/// Default `max_retries`.
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// The most `max_retries` a brain object may ask for.
pub const MAX_RETRIES: u32 = 10;
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

/// Makes the brains of one HTTP provider ([`HttpProvider`]: its wire format and its options)
/// from brain objects, with the keys of an [`ApiKeys`].
#[derive(Clone, Debug)]
pub struct HttpBrains<P: HttpProvider> {
    api: &'static P,
    keys: ApiKeys,
}

impl<P: HttpProvider> HttpBrains<P> {
    /// The brains of `api`.
    pub fn new(api: &'static P, keys: ApiKeys) -> Self {
        HttpBrains { api, keys }
    }

    fn name(&self) -> &'static str {
        self.api.name()
    }

    /// The base URL calls go to (the policy reads the same with [`resolved_base_url`]).
    fn base_url(&self, options: &HttpOptions) -> String {
        options
            .base_url
            .clone()
            .unwrap_or_else(|| self.api.default_base_url().to_string())
    }

    /// The key to send: the brain object's own (`api_key`, never the runtime's keys or the
    /// environment, even when empty), else the one handed over or in the environment under
    /// its variable. An error when a key is needed and there is none; none is needed for a
    /// loopback base URL, nor by a provider that takes calls without one.
    fn key(
        &self,
        spec: &BrainSpec,
        options: &HttpOptions,
        inline: Option<&Secret>,
    ) -> Result<Option<Secret>, BrainError> {
        let base_url = self.base_url(options);
        let env = options
            .api_key_env
            .clone()
            .unwrap_or_else(|| self.api.default_key_env().to_string());
        let key = if spec.api_key.is_some() {
            let key = inline.ok_or(BrainError::KeyNotStored)?;
            Some(key.clone()).filter(|k| !k.expose().is_empty())
        } else {
            self.keys.get(&env)
        };
        if self.api.key_required() && !is_loopback(&base_url) && key.is_none() {
            return Err(BrainError::Invalid(if spec.api_key.is_some() {
                format!(
                    "brain.api_key is empty; the {} provider needs a key for {base_url} (only a \
                     loopback base_url may go without one)",
                    self.name(),
                )
            } else {
                format!(
                    "brain: the environment variable {env} is not set; the {} provider needs \
                     an API key there, or handed to the runtime with set_api_key (set \
                     api_key_env to use another variable; a loopback base_url may go without a \
                     key)",
                    self.name()
                )
            }));
        }
        Ok(key)
    }
}

impl<P: HttpProvider> super::Provider for HttpBrains<P> {
    type Options = P::Options;

    /// The fields every HTTP provider takes, then the provider's own ([`HttpProvider::validate`]).
    fn validate(&self, spec: &BrainSpec, own: &P::Options) -> Result<(), String> {
        let options = &self.api.http_options(own);
        check_temperature(options.temperature)?;
        check_timeout(options.timeout_seconds)?;
        check_max_tokens(options.max_tokens)?;
        if let Some(r) = options.max_retries
            && r > MAX_RETRIES
        {
            return Err(format!(
                "brain.max_retries must be at most {MAX_RETRIES}, got {r}"
            ));
        }
        for (field, value) in [
            ("model", &options.model),
            ("base_url", &options.base_url),
            ("api_key_env", &options.api_key_env),
        ] {
            check_not_blank(field, value.as_deref())?;
        }
        if spec.api_key.is_some() && options.api_key_env.is_some() {
            return Err(
                "brain.api_key and brain.api_key_env both name a key: give one of the two".into(),
            );
        }
        for name in options.headers.keys() {
            if name.trim().is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                return Err(format!(
                    "brain.headers: '{name}' is not a valid header name"
                ));
            }
        }
        if options.model.is_none() {
            return Err(format!(
                "brain.model is required for the {} provider",
                self.name()
            ));
        }
        let base_url = self.base_url(options);
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!(
                "brain.base_url must start with http:// or https://, got '{base_url}'"
            ));
        }
        self.api.validate(own)
    }

    fn check(
        &self,
        spec: &BrainSpec,
        options: &P::Options,
        api_key: Option<&Secret>,
    ) -> Result<(), BrainError> {
        self.key(spec, &self.api.http_options(options), api_key)
            .map(drop)
    }

    fn build(
        &self,
        spec: &BrainSpec,
        own: P::Options,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        let options = self.api.http_options(&own);
        let api_key = self.key(spec, &options, settings.api_key.as_ref())?;
        let base_url = self.base_url(&options);
        Ok(Box::new(ModelBrain {
            provider: self.name(),
            endpoint_key: super::origin::Origin::of_url(&base_url)
                .map(|o| o.to_string())
                .unwrap_or_else(|_| base_url.clone()),
            endpoint: Endpoint {
                api: self.api.configure(&own),
                base_url,
                api_key,
                headers: options.headers.into_iter().collect(),
                timeout: Duration::from_secs_f64(
                    options.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
                ),
            },
            options: RequestOptions {
                model: options.model.unwrap_or_default(),
                temperature: options.temperature,
                max_tokens: options.max_tokens,
                stream: true,
            },
            max_retries: options.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
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
