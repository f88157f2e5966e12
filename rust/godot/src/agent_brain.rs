//! `AgentBrain`: a brain object as a Godot resource (inspector-editable, savable as `.tres`).

use std::collections::BTreeMap;

use agents_core::brain::{BrainRegistry, BrainSpec};
use godot::classes::FileAccess;
use godot::obj::EngineBitfield;
use godot::prelude::*;
use godot::register::info::PropertyUsageFlags;

use crate::convert;

/// Properties every brain has, whatever its provider: always shown in the inspector.
const SHARED_PROPERTIES: [&str; 3] = ["provider", "token_budget", "trace_prompts"];

/// The inspector's usage flag.
const EDITOR: PropertyUsageFlags = PropertyUsageFlags::EDITOR;

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
/// [signal AgentRuntime.agent_error] naming what is wrong; an [AgentRuntime] holding the brain
/// (as [member AgentRuntime.default_brain_config] or in [member AgentRuntime.brain_profiles])
/// says so beforehand among its configuration warnings in the editor.
///
/// Numbers left at their defaults (`-1`, or `0` for [member max_tokens] and
/// [member token_budget]) take the provider's defaults.
#[derive(GodotClass)]
#[class(init, base = Resource)]
pub struct AgentBrain {
    /// `scripted` (offline), `openai` (OpenAI and every compatible server: Ollama, llama.cpp,
    /// LM Studio, vLLM, OpenRouter), `anthropic`, `cli` (a command-line model), `local` (a model
    /// file run inside the game), or a brain the game registered.
    #[var(hint = ENUM_SUGGESTION, usage_flags = [DEFAULT], set = set_provider)]
    #[init(val = GString::from("openai"))]
    provider: GString,
    /// The model (`gpt-4o-mini`, `claude-sonnet-4-5`, `llama3.2`); required for `openai` and
    /// `anthropic`. For `local`, the GGUF file: a path, `res://` or `user://`. A `res://` file
    /// inside an exported game's pack is copied once to `user://models/packed/`, from the
    /// first time the brain is used or checked, in a few milliseconds of each frame; agents
    /// waiting for it report it as [signal AgentRuntime.model_download_progress].
    #[export(placeholder = "gpt-4o-mini, claude-sonnet-4-5, llama3.2, res://models/x.gguf")]
    model: GString,
    /// The API's base URL: the part before `/chat/completions` (`openai`, default
    /// `https://api.openai.com/v1`) or before `/v1/messages` (`anthropic`, default
    /// `https://api.anthropic.com`). Empty: the default.
    #[export(placeholder = "the provider's default (https://api.openai.com/v1)")]
    base_url: GString,
    /// The environment variable holding the API key (empty: `OPENAI_API_KEY` /
    /// `ANTHROPIC_API_KEY`). Never the key itself. A loopback [member base_url] may go without.
    /// An [AgentRuntime] holding this brain warns in the editor while the variable is not set.
    #[export(placeholder = "OPENAI_API_KEY / ANTHROPIC_API_KEY")]
    api_key_env: GString,
    /// Sampling temperature, 0 to 2; negative: the provider's default.
    #[export_group(name = "Sampling")]
    #[export(range = (-1.0, 2.0, 0.05))]
    #[init(val = -1.0)]
    temperature: f64,
    /// Most tokens per answer; `0`: the provider's default.
    #[export(range = (0.0, 200000.0, 1.0, or_greater, suffix = "tokens"))]
    max_tokens: i64,
    /// `local`: nucleus sampling, more than 0 and at most 1; negative: 0.95.
    #[export(range = (-1.0, 1.0, 0.01))]
    #[init(val = -1.0)]
    top_p: f64,
    /// `local`: seeds the sampling; negative: the agent's seed.
    #[export(range = (-1.0, 2147483647.0, 1.0, or_greater))]
    #[init(val = -1)]
    seed: i64,
    /// Seconds one whole request may take; negative: 60.
    #[export_group(name = "Requests")]
    #[export(range = (-1.0, 3600.0, 1.0, suffix = "s"))]
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
    #[export_group(name = "Command Line")]
    #[export]
    command: PackedStringArray,
    /// `cli`: a preset instead of [member command]: `claude` runs `claude -p --output-format json`.
    #[var(hint = ENUM_SUGGESTION, hint_string = "claude", usage_flags = [DEFAULT])]
    cli_backend: GString,
    /// `local`: where to download the GGUF model file from (`https://…`) instead of a
    /// [member model] file: once, into [member model_cache], checked against
    /// [member model_sha256]. The agent's first decision waits for it;
    /// [signal AgentRuntime.model_download_progress] tells how it goes.
    #[export_group(name = "On-device Model")]
    #[export(placeholder = "https://example.com/models/model.gguf")]
    model_url: GString,
    /// `local`: the SHA-256 of the file at [member model_url] (64 hexadecimal digits),
    /// required with it; a download that differs is deleted
    /// (`brain_model_checksum_mismatch`).
    #[export]
    model_sha256: GString,
    /// `local`: the folder downloaded models are kept in; empty: `user://models`.
    #[export(placeholder = "user://models")]
    model_cache: GString,
    /// `local`: tokens of context each agent holds, its prompt and its answer; `0`: 4096.
    #[export(range = (0.0, 131072.0, 256.0, or_greater, suffix = "tokens"))]
    context_size: i64,
    /// `local`: agents whose decisions are decoded together (more wait for a free slot); `0`:
    /// 8. Agents on one model file share this and the settings below.
    #[export(range = (0.0, 64.0, 1.0))]
    sequences: i64,
    /// `local`: CPU threads; `0`: the machine's cores (at most 8).
    #[export(range = (0.0, 64.0, 1.0))]
    threads: i64,
    /// `local`: layers offloaded to a GPU (a build with a GPU back end); `0`: none.
    #[export(range = (0.0, 256.0, 1.0, or_greater))]
    gpu_layers: i64,
    /// `local`: the chat template when the model file carries none (`chatml`, `gemma`,
    /// `llama3`, …); empty: `chatml`.
    #[export(placeholder = "chatml")]
    chat_template: GString,
    /// `local`: keep the model loaded when its last agent leaves.
    #[export]
    keep_loaded: bool,
    /// `ollama`: tokens of context the model holds (`options.num_ctx`, 256 to 1,048,576); `0`:
    /// the server's default.
    #[export_group(name = "Ollama")]
    #[export(range = (0.0, 1048576.0, 256.0, or_greater, suffix = "tokens"))]
    num_ctx: i64,
    /// `ollama`: how long the server keeps the model loaded after a call: a duration (`5m`,
    /// `1h30m`, `0` to unload at once, `-1m` to keep it) or a number of seconds; empty: the
    /// server's default.
    #[export(placeholder = "5m")]
    keep_alive: GString,
    /// Tokens (input and output) the agent may spend in all; `0`: no limit. When spent, the
    /// agent reports `budget_exhausted` and calls no model until it is raised
    /// ([method AgentRuntime.set_token_budget]).
    #[export_group(name = "Budget and Trace")]
    #[export(range = (0.0, 1000000000.0, 1.0, or_greater, suffix = "tokens"))]
    token_budget: i64,
    /// Keep prompts and answers in the trace ([method AgentRuntime.get_agent_trace]) for
    /// debugging. Off: timings, tokens and outcomes only.
    #[export]
    trace_prompts: bool,
    base: Base<Resource>,
}

#[godot_api]
impl IResource for AgentBrain {
    // The editor suggests the built-in providers for `provider`: the registry's names, so a
    // provider added to it is offered without touching this resource. (A plain comment: a doc
    // comment here would show Rust's types in the class reference.)
    //
    // The inspector shows the options the chosen provider declares (its options type, the
    // registry's `option_names`), and hides the others: a provider added to the registry shows
    // its own fields without a list kept here. Hidden fields keep their values.
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        let name = property.property_name.to_string();
        if name == "provider" {
            property.hint_info.hint_string =
                GString::from(&BrainRegistry::with_builtins().names().join(","));
            return;
        }
        if SHARED_PROPERTIES.contains(&name.as_str()) || !property.usage.is_set(EDITOR) {
            return;
        }
        if let Some(options) =
            BrainRegistry::with_builtins().option_names(&self.provider.to_string())
            && !options.contains(&name)
        {
            property.usage = PropertyUsageFlags::from_ord(property.usage.ord() & !EDITOR.ord());
        }
    }
}

#[godot_api]
impl AgentBrain {
    /// The provider setter: see [member provider]. The inspector then shows that provider's
    /// options.
    #[func]
    pub fn set_provider(&mut self, provider: GString) {
        self.provider = provider;
        self.base_mut().notify_property_list_changed();
    }

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
    /// missing model, a number out of range, a header that is not text); empty when nothing
    /// is. A built-in provider checks its own options here; a provider the game registered,
    /// and whether a key variable is set, are checked at spawn.
    #[func]
    pub fn validate(&self) -> GString {
        match self.to_core().and_then(|spec| spec.validate()) {
            Ok(()) => GString::new(),
            Err(message) => GString::from(message.as_str()),
        }
    }
}

/// The environment variable a brain needs its API key in and that `has_key` says is not set;
/// `None` when it needs none (a provider without keys, a loopback `base_url`) or has it. Mirrors
/// the check at spawn (`agents_core::brain::llm`).
fn missing_key_variable(
    provider: &str,
    base_url: &str,
    api_key_env: &str,
    has_key: impl Fn(&str) -> bool,
) -> Option<String> {
    let api = agents_core::brain::llm::api(provider)?;
    if !api.key_required() {
        return None;
    }
    let default_variable = api.default_key_env();
    let base_url = match base_url.trim() {
        "" => api.default_base_url(),
        given => given,
    };
    if agents_core::brain::llm::is_loopback(base_url) {
        return None;
    }
    let variable = match api_key_env.trim() {
        "" => default_variable,
        named => named,
    };
    (!has_key(variable)).then(|| variable.to_string())
}

/// Whether the environment variable `name` is set to something other than blanks.
fn environment_has(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
}

fn text(s: &GString) -> Option<String> {
    let s = s.to_string();
    (!s.trim().is_empty()).then_some(s)
}

impl AgentBrain {
    /// What an [AgentRuntime] holding this brain (as `label`: `default_brain_config`,
    /// `brain_profiles["fast"]`) shows among its configuration warnings: what would get agents
    /// using it refused at spawn. Resources show no warnings of their own in the editor.
    pub(crate) fn configuration_warnings(&self, label: &str) -> Vec<String> {
        let mut out = Vec::new();
        let problem = self.validate();
        if !problem.is_empty() {
            out.push(format!(
                "{label}: {problem}: agents using this brain will not spawn."
            ));
        }
        let provider = self.provider.to_string();
        if let Some(variable) = missing_key_variable(
            &provider,
            &self.base_url.to_string(),
            &self.api_key_env.to_string(),
            environment_has,
        ) {
            out.push(format!(
                "{label}: the {provider} brain needs an API key in the environment variable \
                 {variable}, which is not set: agents using it will not spawn. Set the variable \
                 before starting Godot, hand the key over at run time with \
                 set_api_key(\"{variable}\", key) (then ignore this warning), or point base_url at \
                 a local server (a loopback base_url needs no key)."
            ));
        }
        if provider == "local"
            && let Some(model) = text(&self.model)
            && !FileAccess::file_exists(&model)
        {
            out.push(format!(
                "{label}: the local brain's model file {model} does not exist: agents using it \
                 will not spawn. Put the GGUF file there, or name where to download it with \
                 model_url and model_sha256."
            ));
        }
        out
    }

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
        // NaN is no JSON number: refused here with the provider's words.
        use agents_core::brain::provider::{check_temperature, check_timeout};
        check_temperature(self.temperature.is_nan().then_some(self.temperature))?;
        if self.top_p.is_nan() {
            return Err("brain.top_p must be more than 0 and at most 1, got NaN".into());
        }
        check_timeout(
            self.timeout_seconds
                .is_nan()
                .then_some(self.timeout_seconds),
        )?;
        let mut spec = BrainSpec::provider(self.provider.to_string());
        let mut set = |field: &str, value: Option<serde_json::Value>| {
            if let Some(value) = value {
                spec.options.insert(field.to_string(), value);
            }
        };
        set("model", text(&self.model).map(Into::into));
        set("model_url", text(&self.model_url).map(Into::into));
        set("model_cache", text(&self.model_cache).map(Into::into));
        set("model_sha256", text(&self.model_sha256).map(Into::into));
        for (field, value) in [
            ("base_url", &self.base_url),
            ("api_key_env", &self.api_key_env),
            ("cli_backend", &self.cli_backend),
            ("chat_template", &self.chat_template),
        ] {
            set(field, text(value).map(Into::into));
        }
        set(
            "num_ctx",
            (self.num_ctx != 0).then(|| self.num_ctx.max(0).into()),
        );
        // A number of seconds as a number, a duration as its text.
        set(
            "keep_alive",
            text(&self.keep_alive).map(|k| match k.trim().parse::<i64>() {
                Ok(seconds) => seconds.into(),
                Err(_) => k.trim().to_string().into(),
            }),
        );
        for (field, value) in [
            ("context_size", self.context_size),
            ("sequences", self.sequences),
            ("threads", self.threads),
            ("gpu_layers", self.gpu_layers),
        ] {
            set(field, (value != 0).then(|| value.max(0).into()));
        }
        set(
            "top_p",
            (self.top_p >= 0.0 || self.top_p.is_nan()).then(|| number(self.top_p)),
        );
        set("seed", (self.seed >= 0).then(|| self.seed.into()));
        set("keep_loaded", self.keep_loaded.then_some(true.into()));
        set(
            "temperature",
            (self.temperature >= 0.0 || self.temperature.is_nan())
                .then(|| number(self.temperature)),
        );
        // Negative becomes 0, which validation refuses by name.
        set(
            "max_tokens",
            (self.max_tokens != 0).then(|| self.max_tokens.max(0).into()),
        );
        set(
            "timeout_seconds",
            (self.timeout_seconds >= 0.0 || self.timeout_seconds.is_nan())
                .then(|| number(self.timeout_seconds)),
        );
        set(
            "max_retries",
            u32::try_from(self.max_retries).ok().map(Into::into),
        );
        set(
            "headers",
            (!headers.is_empty()).then(|| serde_json::to_value(&headers).unwrap_or_default()),
        );
        set(
            "command",
            (!self.command.is_empty()).then(|| {
                self.command
                    .as_slice()
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .into()
            }),
        );
        // A resource is saved with the scene: it names the key's variable, never a key.
        spec.token_budget = u64::try_from(self.token_budget).ok().filter(|&b| b > 0);
        spec.trace_prompts = self.trace_prompts;
        crate::packed_model::localize_brain(&spec.provider, &mut spec.options);
        Ok(spec)
    }
}

/// A number as JSON (`null` for NaN, which JSON cannot hold: `to_core` refuses it first).
fn number(value: f64) -> serde_json::Value {
    serde_json::Number::from_f64(value).map_or(serde_json::Value::Null, Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_providers_need_their_variable_unless_on_loopback() {
        let none = |_: &str| false;
        let all = |_: &str| true;
        assert_eq!(
            missing_key_variable("openai", "", "", none).as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(
            missing_key_variable("anthropic", "https://api.anthropic.com", " ", none).as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(
            missing_key_variable(
                "openai",
                "https://openrouter.ai/api/v1",
                "OPENROUTER_KEY",
                none
            )
            .as_deref(),
            Some("OPENROUTER_KEY")
        );
        assert_eq!(missing_key_variable("openai", "", "", all), None);
        // Ollama's native API needs no key: on its default loopback URL or elsewhere.
        assert_eq!(missing_key_variable("ollama", "", "", none), None);
        assert_eq!(
            missing_key_variable("ollama", "https://ollama.example", "", none),
            None
        );
        // Only the named variable counts.
        let only_openai = |name: &str| name == "OPENAI_API_KEY";
        assert_eq!(
            missing_key_variable("openai", "", "MY_KEY", only_openai).as_deref(),
            Some("MY_KEY")
        );
        assert_eq!(missing_key_variable("openai", "", "", only_openai), None);
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080",
            "http://[::1]:1234/v1",
        ] {
            assert_eq!(
                missing_key_variable("openai", local, "", none),
                None,
                "{local}"
            );
        }
        for keyless in ["scripted", "cli", "my_brain", ""] {
            assert_eq!(
                missing_key_variable(keyless, "", "", none),
                None,
                "{keyless}"
            );
        }
    }
}
