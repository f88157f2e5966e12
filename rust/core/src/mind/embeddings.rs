//! Where memories' vectors come from: [`EmbeddingSettings`], the runtime's embeddings endpoint
//! ([`crate::runtime::RuntimeOptions::embeddings`]).
//!
//! The endpoint is the runtime's, not an agent's: vectors of different models cannot be
//! compared, so every agent of one database is embedded by one model; an agent chooses how
//! much meaning counts in its recall ([`super::MemorySettings::semantic_weight`], 0: words
//! only). It is configured by the game or the operator (`agents-server serve --embeddings`,
//! `AgentRuntime.embeddings`), never by a client of the server: it names an address the
//! server sends its agents' memories to and an environment variable holding a key.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The longest model name.
pub const MAX_EMBEDDING_MODEL_CHARS: usize = 200;
/// The largest batch of memories embedded in one call (the embeddings API's bound).
pub const MAX_EMBEDDING_BATCH: usize = agents_llm::embeddings::MAX_INPUTS;
/// The longest wait for a batch's vectors, in seconds.
pub const MAX_EMBEDDING_TIMEOUT_SECONDS: f64 = 600.0;
/// The longest a decision waits for its query's vectors, in milliseconds.
pub const MAX_QUERY_TIMEOUT_MS: u64 = 60_000;
/// The largest memory the vectors held for recall may take, in megabytes.
pub const MAX_CACHE_MEGABYTES: usize = 65_536;

/// An OpenAI-compatible embeddings endpoint (`POST {base_url}/embeddings`: OpenAI, Ollama's
/// `/v1`, llama.cpp's `llama-server`, LM Studio, vLLM) that makes vectors of agents'
/// memories and of what their decisions recall by. Only `base_url` and `model` are required.
/// Unknown fields are an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingSettings {
    /// The API's base URL, up to and including `/v1` (`http://127.0.0.1:11434/v1`).
    pub base_url: String,
    /// The embedding model (`text-embedding-3-small`, `nomic-embed-text`, …). Vectors are
    /// stored with its name: a new model's vectors are made again for every memory.
    pub model: String,
    /// The environment variable holding the API key, sent as `Authorization: Bearer` (a key
    /// handed to the runtime under this name comes first, as for brains). Unset: no key is
    /// sent (a local server). Never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Ask the model for vectors of this many numbers (`dimensions`; models that support it
    /// shorten theirs), and refuse vectors of another size. Unset: the model's own size, the
    /// first answer's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 16384))]
    pub dimensions: Option<u32>,
    /// Memories embedded per call (default 32, at most 256).
    #[serde(default = "default_batch")]
    #[schemars(range(min = 1, max = 256))]
    pub batch_size: usize,
    /// Seconds a batch's call may take (default 30).
    #[serde(default = "default_timeout")]
    pub timeout_seconds: f64,
    /// Milliseconds a decision waits for the vectors of what it recalls by (default 1,000);
    /// past it, or while the endpoint is failing, it recalls by words alone.
    #[serde(default = "default_query_timeout")]
    #[schemars(range(min = 1, max = 60000))]
    pub query_timeout_ms: u64,
    /// Megabytes the vectors held for recall may take in all (default 256, 8 bits per
    /// number: about 330,000 vectors of 768). Past it, the agents that recalled least recently
    /// are read from the database again when they next recall.
    #[serde(default = "default_cache")]
    #[schemars(range(min = 1, max = 65536))]
    pub cache_megabytes: usize,
}

fn default_batch() -> usize {
    32
}

fn default_timeout() -> f64 {
    30.0
}

fn default_query_timeout() -> u64 {
    1_000
}

fn default_cache() -> usize {
    256
}

impl EmbeddingSettings {
    /// Settings for `model` at `base_url`, everything else default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> EmbeddingSettings {
        EmbeddingSettings {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            dimensions: None,
            batch_size: default_batch(),
            timeout_seconds: default_timeout(),
            query_timeout_ms: default_query_timeout(),
            cache_megabytes: default_cache(),
        }
    }

    /// Checks every field; the message names the bad one (`embeddings.model must be …`).
    pub fn validate(&self) -> Result<(), String> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://"))
            || url::Url::parse(url).is_err()
        {
            return Err(format!(
                "embeddings.base_url must be an http:// or https:// URL, got '{}'",
                self.base_url
            ));
        }
        let model = self.model.trim().chars().count();
        if model == 0 || model > MAX_EMBEDDING_MODEL_CHARS {
            return Err(format!(
                "embeddings.model must be 1 to {MAX_EMBEDDING_MODEL_CHARS} characters, got \
                 {model}"
            ));
        }
        if let Some(name) = &self.api_key_env {
            let mut chars = name.chars();
            let good = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !good {
                return Err(format!(
                    "embeddings.api_key_env must be an environment variable's name (letters, \
                     digits and _), got '{name}'"
                ));
            }
        }
        if let Some(d) = self.dimensions
            && !(1..=agents_llm::embeddings::MAX_DIMENSION).contains(&(d as usize))
        {
            return Err(format!(
                "embeddings.dimensions must be from 1 to {}, got {d}",
                agents_llm::embeddings::MAX_DIMENSION
            ));
        }
        if !(1..=MAX_EMBEDDING_BATCH).contains(&self.batch_size) {
            return Err(format!(
                "embeddings.batch_size must be from 1 to {MAX_EMBEDDING_BATCH}, got {}",
                self.batch_size
            ));
        }
        let t = self.timeout_seconds;
        if !t.is_finite() || t <= 0.0 || t > MAX_EMBEDDING_TIMEOUT_SECONDS {
            return Err(format!(
                "embeddings.timeout_seconds must be a number above 0 and at most \
                 {MAX_EMBEDDING_TIMEOUT_SECONDS}, got {t}"
            ));
        }
        if !(1..=MAX_QUERY_TIMEOUT_MS).contains(&self.query_timeout_ms) {
            return Err(format!(
                "embeddings.query_timeout_ms must be from 1 to {MAX_QUERY_TIMEOUT_MS}, got {}",
                self.query_timeout_ms
            ));
        }
        if !(1..=MAX_CACHE_MEGABYTES).contains(&self.cache_megabytes) {
            return Err(format!(
                "embeddings.cache_megabytes must be from 1 to {MAX_CACHE_MEGABYTES}, got {}",
                self.cache_megabytes
            ));
        }
        Ok(())
    }

    /// A batch's time limit.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_seconds)
    }

    /// A decision's wait for its query's vectors.
    pub fn query_timeout(&self) -> Duration {
        Duration::from_millis(self.query_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_with_defaults_and_name_what_is_wrong() {
        let parsed: EmbeddingSettings = serde_json::from_value(serde_json::json!({
            "base_url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text"
        }))
        .unwrap();
        assert_eq!(
            parsed,
            EmbeddingSettings::new("http://127.0.0.1:11434/v1", "nomic-embed-text")
        );
        assert!(parsed.validate().is_ok());
        let unknown = serde_json::from_value::<EmbeddingSettings>(serde_json::json!({
            "base_url": "http://x/v1", "model": "m", "api_key": "sk-1"
        }))
        .unwrap_err()
        .to_string();
        assert!(unknown.contains("unknown field `api_key`"), "{unknown}");
        let bad = |change: &dyn Fn(&mut EmbeddingSettings)| {
            let mut s = EmbeddingSettings::new("http://127.0.0.1:1/v1", "m");
            change(&mut s);
            s.validate().unwrap_err()
        };
        assert!(bad(&|s| s.base_url = "file:///etc/passwd".into()).contains("embeddings.base_url"));
        assert!(bad(&|s| s.model = " ".into()).contains("embeddings.model must be 1 to 200"));
        assert!(
            bad(&|s| s.api_key_env = Some("A B".into()))
                .contains("embeddings.api_key_env must be an environment variable's name")
        );
        assert!(bad(&|s| s.dimensions = Some(0)).contains("embeddings.dimensions"));
        assert!(bad(&|s| s.batch_size = 257).contains("embeddings.batch_size"));
        assert!(bad(&|s| s.timeout_seconds = f64::NAN).contains("embeddings.timeout_seconds"));
        assert!(bad(&|s| s.query_timeout_ms = 0).contains("embeddings.query_timeout_ms"));
        assert!(bad(&|s| s.cache_megabytes = 0).contains("embeddings.cache_megabytes"));
    }
}
