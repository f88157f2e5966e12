//! How an agent's brain is chosen: a name, or a brain object.
//!
//! `brain` in an agent's config ([`crate::runtime::AgentConfig::brain`], the protocol's
//! `agent_config.brain`, a Godot `AgentConfig`) is a [`BrainChoice`]:
//!
//! - a **string** names a profile of [`crate::runtime::RuntimeOptions::brain_profiles`] (a
//!   name → [`BrainSpec`] map, `agents-server serve --brains FILE`), else a registered brain
//!   (`scripted`, or one the application registered), else the preset `claude` (the seeds'
//!   `cli_backend: "claude"`: Anthropic's `claude -p --output-format json` on the command line);
//! - an **object** is a [`BrainSpec`]: `provider` plus that provider's options. Unknown fields
//!   are an error naming the field.
//!
//! A spec is checked at spawn, before the agent gets an id: an unknown provider, a missing
//! `model`, an environment variable that is not set (its name, never a value) are refused there.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The name of the built-in preset for Anthropic's `claude` command line.
pub const CLAUDE_PRESET: &str = "claude";

/// The command the `claude` preset runs (the request on stdin as JSON, the answer on stdout).
pub const CLAUDE_COMMAND: &[&str] = &["claude", "-p", "--output-format", "json"];

/// `brain` in an agent's config: a name, or a brain object.
#[derive(Clone, Debug, PartialEq)]
pub enum BrainChoice {
    /// A profile, a registered brain, or the `claude` preset.
    Named(String),
    /// A brain object.
    Spec(Box<BrainSpec>),
}

impl BrainChoice {
    /// A named brain.
    pub fn named(name: impl Into<String>) -> Self {
        BrainChoice::Named(name.into())
    }

    /// The name, for a named brain.
    pub fn name(&self) -> Option<&str> {
        match self {
            BrainChoice::Named(name) => Some(name),
            BrainChoice::Spec(_) => None,
        }
    }
}

impl From<&str> for BrainChoice {
    fn from(name: &str) -> Self {
        BrainChoice::Named(name.to_string())
    }
}

impl From<String> for BrainChoice {
    fn from(name: String) -> Self {
        BrainChoice::Named(name)
    }
}

impl From<BrainSpec> for BrainChoice {
    fn from(spec: BrainSpec) -> Self {
        BrainChoice::Spec(Box::new(spec))
    }
}

impl fmt::Display for BrainChoice {
    /// The name, or `provider` / `provider:model` for an object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BrainChoice::Named(name) => f.write_str(name),
            BrainChoice::Spec(spec) => f.write_str(&spec.label()),
        }
    }
}

impl Serialize for BrainChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            BrainChoice::Named(name) => serializer.serialize_str(name),
            BrainChoice::Spec(spec) => spec.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for BrainChoice {
    /// A string, or an object read as a [`BrainSpec`] (so an unknown field is named); anything
    /// else is an error saying what is accepted.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(name) => Ok(BrainChoice::Named(name)),
            object @ serde_json::Value::Object(_) => serde_json::from_value(object)
                .map(|spec| BrainChoice::Spec(Box::new(spec)))
                .map_err(|e| D::Error::custom(format!("brain: {e}"))),
            other => Err(D::Error::custom(format!(
                "brain must be a string (a profile or brain name) or an object with a \
                 `provider`, got {}",
                crate::json_kind::json_kind(&other)
            ))),
        }
    }
}

impl schemars::JsonSchema for BrainChoice {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BrainChoice".into()
    }

    /// Inline, so that `Option<BrainChoice>` becomes `type: [string, object, null]`.
    fn inline_schema() -> bool {
        true
    }

    /// One schema for both shapes (JSON Schema's string keywords ignore objects and its object
    /// keywords ignore strings), so a validator names the exact failure — a name over its
    /// length, an unknown field of the object — instead of "matches no alternative".
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = <BrainSpec as schemars::JsonSchema>::json_schema(generator);
        schema.insert("type".into(), serde_json::json!(["string", "object"]));
        schema.insert(
            "maxLength".into(),
            crate::limits::MAX_BRAIN_NAME_CHARS.into(),
        );
        schema.insert(
            "description".into(),
            "A profile or brain name (`scripted`, `claude`, a profile of --brains), or a brain \
             object with a `provider`."
                .into(),
        );
        schema
    }
}

/// A brain object: which provider, and its options. Field names are exact; unknown fields are an
/// error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrainSpec {
    /// `scripted`, `openai` (and every OpenAI-compatible server), `anthropic`, `cli`, or a brain
    /// the application registered.
    #[schemars(length(min = 1, max = crate::limits::MAX_BRAIN_NAME_CHARS))]
    pub provider: String,
    /// The model (required for `openai` and `anthropic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub model: Option<String>,
    /// The API's base URL: the prefix before `/chat/completions` (openai, default
    /// `https://api.openai.com/v1`) or before `/v1/messages` (anthropic, default
    /// `https://api.anthropic.com`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048))]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (defaults `OPENAI_API_KEY`,
    /// `ANTHROPIC_API_KEY`). A loopback `base_url` may go without a key. Never taken from a
    /// client of the server ([`super::policy`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub api_key_env: Option<String>,
    /// The API key itself, instead of `api_key_env`: how a client of the server brings its own
    /// key (`""` for a server that needs none). Kept in memory only; the stored agent record
    /// and every serialization write `"***"` instead ([`super::keys::InlineKey`]), so an agent
    /// whose brain brought its key needs it again to be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<super::keys::InlineKey>,
    /// Sampling temperature, 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Most tokens per answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
    /// Seconds one whole request may take (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
    /// Retries of a request that failed for a passing reason: 429, 5xx, a lost connection
    /// (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10))]
    pub max_retries: Option<u32>,
    /// Extra HTTP headers sent with every request. Stored with the agent: put keys in
    /// `api_key_env`, never here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// `cli`: the command line (argv) to run; the request goes to its stdin as JSON and the
    /// contract comes back on its stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub command: Option<Vec<String>>,
    /// `cli`: a preset instead of `command` (`claude`: `claude -p --output-format json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_backend: Option<String>,
    /// Tokens (input and output, as the provider reports them) this agent may spend in all;
    /// when spent it reports `budget_exhausted` and stops calling the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Keep the prompts and answers in the `brain_calls` trace (off by default: the trace
    /// holds timings, tokens and outcomes only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace_prompts: bool,
}

impl BrainSpec {
    /// A spec for `provider` with no options.
    pub fn provider(provider: impl Into<String>) -> Self {
        BrainSpec {
            provider: provider.into(),
            ..BrainSpec::default()
        }
    }

    /// `provider` or `provider:model`, for logs, snapshots and the stored agent record.
    pub fn label(&self) -> String {
        match &self.model {
            Some(model) => format!("{}:{model}", self.provider),
            None => self.provider.clone(),
        }
    }

    /// The `claude` preset: the `cli` provider running Anthropic's `claude -p`.
    pub fn claude_preset() -> Self {
        BrainSpec {
            provider: "cli".into(),
            cli_backend: Some(CLAUDE_PRESET.into()),
            ..BrainSpec::default()
        }
    }

    /// Checks what does not depend on the provider: finite, in-range numbers, non-empty texts.
    /// Errors name the field (`brain.temperature must be between 0 and 2, got 3`).
    pub fn validate(&self) -> Result<(), String> {
        if self.provider.trim().is_empty() {
            return Err(
                "brain.provider must name a provider (scripted, openai, anthropic, cli)".into(),
            );
        }
        crate::limits::check_chars(
            "brain.provider",
            &self.provider,
            crate::limits::MAX_BRAIN_NAME_CHARS,
        )?;
        if let Some(t) = self.temperature
            && !(t.is_finite() && (0.0..=2.0).contains(&t))
        {
            return Err(format!(
                "brain.temperature must be between 0 and 2, got {t}"
            ));
        }
        if let Some(t) = self.timeout_seconds
            && !(t.is_finite() && t > 0.0 && t <= 3600.0)
        {
            return Err(format!(
                "brain.timeout_seconds must be more than 0 and at most 3600, got {t}"
            ));
        }
        if self.max_tokens == Some(0) {
            return Err("brain.max_tokens must be at least 1".into());
        }
        if let Some(r) = self.max_retries
            && r > 10
        {
            return Err(format!("brain.max_retries must be at most 10, got {r}"));
        }
        if self.api_key.is_some() && self.api_key_env.is_some() {
            return Err(
                "brain.api_key and brain.api_key_env both name a key: give one of the two".into(),
            );
        }
        if let Some(super::keys::InlineKey::Given(key)) = &self.api_key {
            crate::limits::check_chars(
                "brain.api_key",
                key.expose(),
                crate::limits::MAX_API_KEY_CHARS,
            )?;
        }
        for (field, value) in [
            ("model", &self.model),
            ("base_url", &self.base_url),
            ("api_key_env", &self.api_key_env),
        ] {
            if let Some(v) = value
                && v.trim().is_empty()
            {
                return Err(format!("brain.{field} must not be empty"));
            }
        }
        if let Some(command) = &self.command
            && command.first().is_none_or(|c| c.trim().is_empty())
        {
            return Err("brain.command must be a non-empty argv array (program first)".into());
        }
        for name in self.headers.keys() {
            if name.trim().is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                return Err(format!(
                    "brain.headers: '{name}' is not a valid header name"
                ));
            }
        }
        Ok(())
    }
}

/// A stored agent config as a client may read it (`list_stored_agents`): the values of its
/// brain object's `headers` are written as `"***"`. The game's own brain objects may carry
/// credentials there (the docs say not to, but a client never reads them back either way); an
/// inline `api_key` is never stored in the first place.
pub fn redact_stored_config(config: &mut serde_json::Value) {
    if let Some(headers) = config
        .pointer_mut("/brain/headers")
        .and_then(serde_json::Value::as_object_mut)
    {
        for value in headers.values_mut() {
            *value = super::keys::WITHHELD_KEY.into();
        }
    }
}

/// A file of named brains (`agents-server serve --brains FILE`, `brain-check --brains FILE`):
///
/// ```json
/// {
///   "default": "local",
///   "profiles": {
///     "local": {"provider": "openai", "model": "llama3.2", "base_url": "http://127.0.0.1:11434/v1"},
///     "smart": {"provider": "anthropic", "model": "claude-sonnet-4-5", "token_budget": 200000}
///   }
/// }
/// ```
///
/// `profiles` maps a name to a brain object ([`BrainSpec`]); agents name a profile as their
/// `brain`. `default` (optional) is the brain of agents whose config names none. Unknown fields
/// are an error naming the field, and every profile is checked as a brain object is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrainProfiles {
    /// The brain of agents whose config names none: a profile, or a registered brain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Brain objects by name.
    pub profiles: BTreeMap<String, BrainSpec>,
}

impl BrainProfiles {
    /// Reads a profiles file's text. Errors say where (`line 3 column 14`) and what: JSON that
    /// does not parse, an unknown field, an empty name, a profile that breaks a brain object's
    /// rules (`profiles.fast: brain.temperature must be between 0 and 2, got 3`).
    pub fn from_json(text: &str) -> Result<Self, String> {
        let profiles: BrainProfiles = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (name, spec) in &profiles.profiles {
            if name.trim().is_empty() {
                return Err("profiles: a profile name must not be empty".into());
            }
            crate::limits::check_chars(
                "a profile name",
                name,
                crate::limits::MAX_BRAIN_NAME_CHARS,
            )?;
            spec.validate()
                .map_err(|e| format!("profiles.{name}: {e}"))?;
        }
        if let Some(default) = &profiles.default
            && default.trim().is_empty()
        {
            return Err("default must name a profile or a brain".into());
        }
        Ok(profiles)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_profiles_file_is_read_and_checked() {
        let file = r#"{"default": "local", "profiles": {
            "local": {"provider": "openai", "model": "llama3.2", "base_url": "http://127.0.0.1:11434/v1"},
            "cheap": {"provider": "anthropic", "model": "claude-haiku-4-5", "token_budget": 5000}}}"#;
        let profiles = BrainProfiles::from_json(file).unwrap();
        assert_eq!(profiles.default.as_deref(), Some("local"));
        assert_eq!(profiles.profiles["cheap"].token_budget, Some(5000));
        for (bad, says) in [
            (
                "{\"profiles\": {}, \"defualt\": \"x\"}",
                "unknown field `defualt`",
            ),
            (
                "{\"profiles\": {\"a\": {\"provider\": \"openai\", \"modle\": \"m\"}}}",
                "unknown field `modle`",
            ),
            (
                "{\"profiles\": {\"a\": {\"provider\": \"openai\", \"temperature\": 3}}}",
                "profiles.a: brain.temperature",
            ),
            (
                "{\"profiles\": {\"\": {\"provider\": \"openai\"}}}",
                "must not be empty",
            ),
            (
                "{\"profiles\": {}, \"default\": \" \"}",
                "default must name",
            ),
            ("{\"profiles\": [}", "line 1 column"),
            ("{}", "missing field `profiles`"),
        ] {
            let e = BrainProfiles::from_json(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_string_is_a_name_and_an_object_a_spec() {
        let named: BrainChoice = serde_json::from_value(json!("scripted")).unwrap();
        assert_eq!(named, BrainChoice::named("scripted"));
        let spec: BrainChoice = serde_json::from_value(json!({
            "provider": "openai", "model": "gpt-4o-mini", "base_url": "http://127.0.0.1:8080/v1",
            "temperature": 0.2, "headers": {"X-Title": "town"}
        }))
        .unwrap();
        let BrainChoice::Spec(spec) = &spec else {
            panic!("an object is a spec")
        };
        assert_eq!(spec.label(), "openai:gpt-4o-mini");
        assert_eq!(spec.headers["X-Title"], "town");
        // Round trip.
        let back = serde_json::to_value(BrainChoice::Spec(spec.clone())).unwrap();
        assert_eq!(back["provider"], "openai");
        assert!(
            back.get("trace_prompts").is_none(),
            "defaults are not written"
        );
        assert_eq!(serde_json::to_value(&named).unwrap(), json!("scripted"));
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_named() {
        let err =
            serde_json::from_value::<BrainChoice>(json!({"provider": "openai", "modle": "x"}))
                .unwrap_err()
                .to_string();
        assert!(err.contains("brain: unknown field `modle`"), "{err}");
        let err = serde_json::from_value::<BrainChoice>(json!(12))
            .unwrap_err()
            .to_string();
        assert!(err.contains("brain must be a string"), "{err}");
        assert!(err.contains("got a number"), "{err}");
        let err = serde_json::from_value::<BrainChoice>(json!({"model": "x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `provider`"), "{err}");
    }

    #[test]
    fn validation_names_the_field() {
        let mut spec = BrainSpec::provider("openai");
        assert_eq!(spec.validate(), Ok(()));
        spec.temperature = Some(3.0);
        assert_eq!(
            spec.validate().unwrap_err(),
            "brain.temperature must be between 0 and 2, got 3"
        );
        spec.temperature = None;
        spec.timeout_seconds = Some(f64::NAN);
        assert!(
            spec.validate()
                .unwrap_err()
                .starts_with("brain.timeout_seconds")
        );
        spec.timeout_seconds = None;
        spec.command = Some(vec![]);
        assert!(spec.validate().unwrap_err().starts_with("brain.command"));
        spec.command = None;
        spec.model = Some(" ".into());
        assert_eq!(
            spec.validate().unwrap_err(),
            "brain.model must not be empty"
        );
        spec.model = None;
        spec.headers.insert("Bad Header".into(), "x".into());
        assert!(
            spec.validate()
                .unwrap_err()
                .contains("not a valid header name")
        );
        assert!(BrainSpec::provider(" ").validate().is_err());
    }

    #[test]
    fn stored_header_values_are_withheld_from_clients() {
        let mut config = json!({"name": "Mira", "brain": {"provider": "openai", "model": "m",
            "headers": {"X-Title": "town", "X-Gateway-Token": "gw-secret"}}});
        redact_stored_config(&mut config);
        assert_eq!(
            config["brain"]["headers"],
            json!({"X-Title": "***", "X-Gateway-Token": "***"})
        );
        let mut named = json!({"name": "Bo", "brain": "scripted"});
        redact_stored_config(&mut named);
        assert_eq!(named["brain"], "scripted");
    }

    #[test]
    fn the_claude_preset_is_the_cli_provider() {
        let spec = BrainSpec::claude_preset();
        assert_eq!(spec.provider, "cli");
        assert_eq!(spec.cli_backend.as_deref(), Some(CLAUDE_PRESET));
        assert_eq!(CLAUDE_COMMAND, ["claude", "-p", "--output-format", "json"]);
    }
}
