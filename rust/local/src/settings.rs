//! How a model is loaded and how one answer is sampled.

use std::path::PathBuf;

/// How a model file is loaded: one loaded model per file ([`crate::Models`]); every agent
/// naming the file shares it, so these must agree between them.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSettings {
    /// The GGUF file.
    pub path: PathBuf,
    /// Tokens of context each agent's sequence holds: its prompt and its answer.
    pub context_size: u32,
    /// Sequences decoded together: agents deciding at once beyond this wait for a free one.
    /// Each keeps its agent's prompt cached between decisions.
    pub sequences: u32,
    /// CPU threads (0: [`default_threads`]).
    pub threads: u32,
    /// Layers offloaded to a GPU (0 on a CPU-only build).
    pub gpu_layers: u32,
    /// A chat template to use when the file carries none (a name llama.cpp knows: `chatml`,
    /// `gemma`, `llama3`, …); `None`: the file's own, else `chatml`.
    pub chat_template: Option<String>,
}

/// The default [`ModelSettings::context_size`].
pub const DEFAULT_CONTEXT_SIZE: u32 = 4096;
/// The default [`ModelSettings::sequences`].
pub const DEFAULT_SEQUENCES: u32 = 8;
/// The most [`ModelSettings::sequences`].
pub const MAX_SEQUENCES: u32 = 64;
/// The template used when the file carries none and none is named.
pub const FALLBACK_TEMPLATE: &str = "chatml";

impl ModelSettings {
    /// Defaults for `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ModelSettings {
            path: path.into(),
            context_size: DEFAULT_CONTEXT_SIZE,
            sequences: DEFAULT_SEQUENCES,
            threads: 0,
            gpu_layers: 0,
            chat_template: None,
        }
    }

    /// The threads to run with: the setting, else [`default_threads`].
    pub fn threads(&self) -> i32 {
        match self.threads {
            0 => default_threads(),
            n => n as i32,
        }
    }
}

/// The most threads a model takes by default.
pub const MAX_DEFAULT_THREADS: usize = 8;

/// The threads a model runs with unless told: the machine's physical cores but one (at least
/// one, at most [`MAX_DEFAULT_THREADS`]), capped by the cores this process may use. The game
/// keeps a core for its frames: llama.cpp's threads spin while they work, and a model that
/// takes every core delays the main thread's frames.
pub fn default_threads() -> i32 {
    let physical = num_cpus::get_physical();
    let usable = std::thread::available_parallelism().map_or(physical, |n| n.get());
    physical
        .min(usable)
        .saturating_sub(1)
        .clamp(1, MAX_DEFAULT_THREADS) as i32
}

/// How one answer is sampled.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// 0: always the likeliest token.
    pub temperature: f32,
    /// Nucleus sampling: the smallest set of tokens whose probabilities add up to this.
    pub top_p: f32,
    /// Seeds the choice (the same seed and prompt give the same answer).
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.7,
            top_p: 0.95,
            seed: 0,
        }
    }
}

/// One chat message of a prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message.
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        ChatMessage {
            role: role.to_string(),
            content: content.into(),
        }
    }
}

/// One answer to generate.
#[derive(Clone, Debug)]
pub struct Job {
    /// Whose answer (an agent's id): its sequence keeps this prompt cached, and its next
    /// prompt evaluates only what differs.
    pub key: String,
    /// Who the answer is for: the connection that spawned its agent, or the game itself (`""`).
    /// Waiting answers take the model's free sequences in turns between parties
    /// ([`crate::queue`]).
    pub party: String,
    /// The conversation, templated with the model's chat template.
    pub messages: Vec<ChatMessage>,
    /// The JSON Schema every answer must match; `None`: free text.
    pub schema: Option<serde_json::Value>,
    /// How tokens are chosen.
    pub sampling: Sampling,
    /// Most tokens of the answer.
    pub max_tokens: u32,
    /// How long the answer may take from the moment it gets a sequence; past it, it fails
    /// ([`crate::LocalError::TimedOut`]). `None`: as long as its `max_tokens` take.
    pub timeout: Option<std::time::Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_threads_leave_the_game_a_core() {
        let physical = num_cpus::get_physical();
        let usable = std::thread::available_parallelism().map_or(physical, |n| n.get());
        let threads = default_threads() as usize;
        assert!((1..=MAX_DEFAULT_THREADS).contains(&threads));
        if physical.min(usable) >= 2 {
            assert!(threads < physical.min(usable), "a core is left: {threads}");
        }
        assert_eq!(ModelSettings::new("m.gguf").threads(), threads as i32);
        let two = ModelSettings {
            threads: 2,
            ..ModelSettings::new("m.gguf")
        };
        assert_eq!(two.threads(), 2, "a setting is taken as it is");
    }
}
