//! `AgentBrain`: a brain object as a Godot resource (inspector-editable, savable as `.tres`).

use std::collections::BTreeMap;

use agents_core::brain::BrainSpec;
use godot::prelude::*;

use crate::convert;

/// Which model an agent thinks with, and how: the brain object of `docs/brains.md` as a
/// resource. Set one on [member AgentConfig.brain_config] for one agent, or on
/// [member AgentRuntime.default_brain_config] for every agent whose config names no brain; save
/// it as a `.tres` file to share it between agents and scenes.
///
/// ```gdscript
/// var brain := AgentBrain.new()
/// brain.provider = "openai"
/// brain.model = "llama3.2"
/// brain.base_url = "http://127.0.0.1:11434/v1"   # Ollama: no key needed on loopback
/// var config := AgentConfig.new()
/// config.name = "Mira"
/// config.brain_config = brain
/// $AgentRuntime.spawn_agent(config)
/// ```
///
/// The resource never holds an API key: it names the environment variable that does
/// ([member api_key_env]), and a game that asks its player for a key hands it over with
/// [method AgentRuntime.set_api_key], in memory only. A misconfigured brain (an unknown provider,
/// no model, a key variable that is not set) is refused when the agent is spawned, with
/// [signal AgentRuntime.agent_error] naming what is wrong.
///
/// Numbers left at their defaults (`-1`, or `0` for [member max_tokens] and
/// [member token_budget]) take the provider's defaults.
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct AgentBrain {
    /// `scripted` (offline), `openai` (OpenAI and every compatible server: Ollama, llama.cpp,
    /// LM Studio, vLLM, OpenRouter), `anthropic`, `cli` (a command-line model), or a brain the
    /// game registered.
    #[var(hint = ENUM_SUGGESTION, hint_string = "scripted,openai,anthropic,cli", usage_flags = [DEFAULT])]
    #[init(val = GString::from("openai"))]
    provider: GString,
    /// The model (`gpt-4o-mini`, `claude-sonnet-4-5`, `llama3.2`); required for `openai` and
    /// `anthropic`.
    #[export]
    model: GString,
    /// The API's base URL: the part before `/chat/completions` (`openai`, default
    /// `https://api.openai.com/v1`) or before `/v1/messages` (`anthropic`, default
    /// `https://api.anthropic.com`). Empty: the default.
    #[export]
    base_url: GString,
    /// The environment variable holding the API key (empty: `OPENAI_API_KEY` /
    /// `ANTHROPIC_API_KEY`). Never the key itself. A loopback [member base_url] may go without.
    #[export]
    api_key_env: GString,
    /// Sampling temperature, 0 to 2; negative: the provider's default.
    #[export(range = (-1.0, 2.0, 0.05))]
    #[init(val = -1.0)]
    temperature: f64,
    /// Most tokens per answer; `0`: the provider's default.
    #[export(range = (0.0, 200000.0, 1.0, or_greater))]
    max_tokens: i64,
    /// Seconds one whole request may take; negative: 60.
    #[export(range = (-1.0, 3600.0, 1.0))]
    #[init(val = -1.0)]
    timeout_seconds: f64,
    /// Retries of a request that failed for a passing reason (429, 5xx, a lost connection);
    /// negative: 3.
    #[export(range = (-1.0, 10.0, 1.0))]
    #[init(val = -1)]
    max_retries: i64,
    /// Extra HTTP headers sent with every request (`String` → `String`). Stored with the
    /// resource and the agent: never put a key here.
    #[export]
    headers: VarDictionary,
    /// `cli`: the command to run, as its arguments (`["my-model", "--json"]`); the request goes
    /// to its standard input as JSON and the answer comes back on its standard output.
    #[export]
    command: PackedStringArray,
    /// `cli`: a preset instead of [member command]: `claude` runs `claude -p --output-format json`.
    #[export]
    cli_backend: GString,
    /// Tokens (input and output) the agent may spend in all; `0`: no limit. When spent, the
    /// agent reports `budget_exhausted` and calls no model until it is raised
    /// ([method AgentRuntime.set_token_budget]).
    #[export(range = (0.0, 1000000000.0, 1.0, or_greater))]
    token_budget: i64,
    /// Keep prompts and answers in the trace ([method AgentRuntime.get_agent_trace]) for
    /// debugging. Off: timings, tokens and outcomes only.
    #[export]
    trace_prompts: bool,
}

#[godot_api]
impl AgentBrain {
    /// The brain object as a Dictionary (`provider` and only the options that are set): the
    /// shape `AgentConfig`'s `brain` takes in a Dictionary and in the WebSocket protocol.
    /// Empty when the resource is invalid (see [method validate]).
    #[func]
    pub fn to_dictionary(&self) -> VarDictionary {
        self.to_core()
            .map(|spec| convert::serialize_to_dictionary(&spec))
            .unwrap_or_default()
    }

    /// What is wrong with the settings that can be told without spawning (an empty provider, a
    /// number out of range, a header that is not text); empty when nothing is. Whether the
    /// provider exists and its key variable is set is checked at spawn.
    #[func]
    pub fn validate(&self) -> GString {
        match self.to_core().and_then(|spec| spec.validate()) {
            Ok(()) => GString::new(),
            Err(message) => GString::from(message.as_str()),
        }
    }
}

fn text(s: &GString) -> Option<String> {
    let s = s.to_string();
    (!s.trim().is_empty()).then_some(s)
}

impl AgentBrain {
    /// The brain object this resource describes. Errors name the field (a header that is not
    /// `String` → `String`).
    pub fn to_core(&self) -> Result<BrainSpec, String> {
        let mut headers = BTreeMap::new();
        for (key, value) in self.headers.iter_shared() {
            let (Ok(key), Ok(value)) = (key.try_to::<GString>(), value.try_to::<GString>()) else {
                return Err(format!(
                    "brain.headers must map text to text, got {} → {}",
                    key.get_type().godot_type_name(),
                    value.get_type().godot_type_name()
                ));
            };
            headers.insert(key.to_string(), value.to_string());
        }
        Ok(BrainSpec {
            provider: self.provider.to_string(),
            model: text(&self.model),
            base_url: text(&self.base_url),
            api_key_env: text(&self.api_key_env),
            temperature: (self.temperature >= 0.0 || self.temperature.is_nan())
                .then_some(self.temperature),
            // Negative becomes 0, which validation refuses by name.
            max_tokens: (self.max_tokens != 0)
                .then(|| u32::try_from(self.max_tokens.max(0)).unwrap_or(u32::MAX)),
            timeout_seconds: (self.timeout_seconds >= 0.0 || self.timeout_seconds.is_nan())
                .then_some(self.timeout_seconds),
            max_retries: u32::try_from(self.max_retries).ok(),
            headers,
            command: (!self.command.is_empty()).then(|| {
                self.command
                    .as_slice()
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            }),
            cli_backend: text(&self.cli_backend),
            token_budget: u64::try_from(self.token_budget).ok().filter(|&b| b > 0),
            trace_prompts: self.trace_prompts,
        })
    }
}
