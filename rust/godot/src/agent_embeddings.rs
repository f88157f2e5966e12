//! `AgentEmbeddings`: the runtime's embeddings endpoint, as a Godot resource.

use agents_core::mind::EmbeddingSettings;
use godot::prelude::*;

/// An OpenAI-compatible embeddings endpoint (`POST {base_url}/embeddings`: OpenAI, Ollama's
/// `/v1`, llama.cpp's `llama-server`, LM Studio) that makes vectors of agents' memories, so
/// they recall by meaning as well as by words. Set one on [member AgentRuntime.embeddings];
/// each agent's [member AgentMemory.semantic_weight] says how much meaning counts.
///
/// Memories are embedded in the background as they are formed; a decision embeds what it
/// recalls by and waits at most [member query_timeout_ms] for it. An endpoint that is down,
/// slow or answers wrongly is logged, and agents recall by words until it answers again:
/// their decisions never fail for it.
///
/// ```gdscript
/// var embeddings := AgentEmbeddings.new()
/// embeddings.base_url = "http://127.0.0.1:11434/v1"   # Ollama
/// embeddings.model = "nomic-embed-text"
/// $AgentRuntime.embeddings = embeddings               # read when the runtime starts
/// ```
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct AgentEmbeddings {
    /// The API's base URL, up to and including `/v1`.
    #[export]
    #[init(val = GString::from("http://127.0.0.1:11434/v1"))]
    base_url: GString,
    /// The embedding model (`nomic-embed-text`, `text-embedding-3-small`, …). Vectors are
    /// stored with its name: another model makes them again.
    #[export]
    model: GString,
    /// The environment variable holding the API key (a key handed over with
    /// [method AgentRuntime.set_api_key] under this name comes first). Empty: no key is sent
    /// (a local server). The key is never stored.
    #[export]
    api_key_env: GString,
    /// Ask the model for vectors of this many numbers (models that support it shorten theirs)
    /// and refuse others. 0: the model's own size.
    #[export(range = (0.0, 16384.0, 1.0))]
    dimensions: i64,
    /// Memories embedded per call (1 to 256).
    #[export(range = (1.0, 256.0, 1.0))]
    #[init(val = 32)]
    batch_size: i64,
    /// Seconds one call for a batch of memories may take.
    #[export(range = (1.0, 600.0, 1.0, suffix = "s"))]
    #[init(val = 30.0)]
    timeout_seconds: f64,
    /// Milliseconds a decision waits for the vectors of what it recalls by; past it, it recalls
    /// by words.
    #[export(range = (1.0, 60000.0, 1.0, suffix = "ms"))]
    #[init(val = 1000)]
    query_timeout_ms: i64,
    /// Megabytes the vectors held for recall may take in all (8 bits a number: 256 MB holds
    /// about 330,000 vectors of 768).
    #[export(range = (1.0, 65536.0, 1.0, suffix = "MB"))]
    #[init(val = 256)]
    cache_megabytes: i64,
}

#[godot_api]
impl AgentEmbeddings {}

impl AgentEmbeddings {
    /// The settings this resource describes (checked by the runtime, which names a bad field).
    pub fn to_core(&self) -> EmbeddingSettings {
        let count = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
        let api_key_env = self.api_key_env.to_string();
        EmbeddingSettings {
            api_key_env: (!api_key_env.trim().is_empty()).then_some(api_key_env),
            dimensions: (self.dimensions != 0)
                .then(|| u32::try_from(self.dimensions).unwrap_or(u32::MAX)),
            batch_size: count(self.batch_size),
            timeout_seconds: self.timeout_seconds,
            query_timeout_ms: u64::try_from(self.query_timeout_ms).unwrap_or(0),
            cache_megabytes: count(self.cache_megabytes),
            ..EmbeddingSettings::new(self.base_url.to_string(), self.model.to_string())
        }
    }
}
