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

/// A brain object: which provider, what every model brain shares with the runtime (a key it
/// brought, a token budget, the trace), and the provider's own options.
///
/// As JSON it is one flat object (`{"provider": "openai", "model": "gpt-4o-mini",
/// "token_budget": 5000}`). `provider`, `api_key`, `token_budget` and `trace_prompts` are read
/// here; every other field is the provider's ([`BrainSpec::options`]), read and checked by the
/// provider itself when an agent is spawned ([`super::provider::Provider`]): a field it does not
/// know is an error naming the field and the ones it takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BrainSpec {
    /// A registered brain: a built-in one (`scripted`, `openai` for every OpenAI-compatible
    /// server, `anthropic`, `ollama`, `cli`, `local`) or one the application registered.
    pub provider: String,
    /// The API key itself: how a client of the server brings its own key (`""` for a server
    /// that needs none). Kept in memory only; the stored agent record and every serialization
    /// write `"***"` instead ([`super::keys::InlineKey`]), so an agent whose brain brought its
    /// key needs it again to be resumed.
    pub api_key: Option<super::keys::InlineKey>,
    /// Tokens (input and output, as the provider reports them) this agent may spend in all;
    /// when spent it reports `budget_exhausted` and stops calling the model.
    pub token_budget: Option<u64>,
    /// Keep the prompts and answers in the `brain_calls` trace (off by default: the trace holds
    /// timings, tokens and outcomes only).
    pub trace_prompts: bool,
    /// What the provider charges for its tokens, for the costs the arena reports; the runtime
    /// never bills anything.
    pub price: Option<Price>,
    /// The provider's own options (`model`, `base_url`, `command`, …), as given.
    pub options: serde_json::Map<String, serde_json::Value>,
}

/// The fields of a brain object that are [`BrainSpec`]'s own rather than its provider's.
pub const SHARED_FIELDS: [&str; 5] = [
    "provider",
    "api_key",
    "token_budget",
    "trace_prompts",
    "price",
];

/// What a provider charges, in US dollars per million tokens (`{"input_per_mtok": 0.15,
/// "output_per_mtok": 0.6}`), as its price list says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Dollars per million prompt tokens.
    pub input_per_mtok: f64,
    /// Dollars per million answer tokens.
    pub output_per_mtok: f64,
}

impl Price {
    /// What `input` prompt tokens and `output` answer tokens cost, in dollars.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_per_mtok + output as f64 * self.output_per_mtok) / 1e6
    }
}

impl BrainSpec {
    /// A spec for `provider` with no options.
    pub fn provider(provider: impl Into<String>) -> Self {
        BrainSpec {
            provider: provider.into(),
            ..BrainSpec::default()
        }
    }

    /// Sets one of the provider's options (`spec.with("model", "gpt-4o-mini")`).
    pub fn with(mut self, field: &str, value: impl Into<serde_json::Value>) -> Self {
        self.options.insert(field.to_string(), value.into());
        self
    }

    /// The provider's `model` option, when it is text.
    pub fn model(&self) -> Option<&str> {
        self.options
            .get("model")
            .and_then(serde_json::Value::as_str)
    }

    /// `provider` or `provider:model`, for logs, snapshots and the stored agent record.
    pub fn label(&self) -> String {
        match self.model() {
            Some(model) => format!("{}:{model}", self.provider),
            None => self.provider.clone(),
        }
    }

    /// The `claude` preset: the `cli` provider running Anthropic's `claude -p`.
    pub fn claude_preset() -> Self {
        BrainSpec::provider("cli").with("cli_backend", CLAUDE_PRESET)
    }

    /// Reads the provider's options as its own type `O` (which refuses fields it does not
    /// know). Errors name the field: `brain: unknown field `modle`, expected one of …`.
    pub fn options_as<O: serde::de::DeserializeOwned>(&self) -> Result<O, String> {
        self.read_options().map_err(|e| e.to_string())
    }

    /// [`BrainSpec::options_as`] with the error's parts: the field it is about and what is
    /// wrong.
    pub fn read_options<O: serde::de::DeserializeOwned>(&self) -> Result<O, OptionsError> {
        serde_path_to_error::deserialize(serde_json::Value::Object(self.options.clone())).map_err(
            |e| OptionsError {
                path: match e.path().to_string().as_str() {
                    "." => String::new(),
                    path => path.to_string(),
                },
                message: e.inner().to_string(),
            },
        )
    }

    /// Checks the brain object as far as it can be told without a runtime: the shared fields
    /// ([`BrainSpec::validate_shared`]), then, for a built-in provider
    /// ([`super::BrainRegistry::with_builtins`]), its own options
    /// ([`super::provider::Provider`]). A
    /// provider the application registers checks its options at spawn. Errors name the field
    /// (`brain.temperature must be between 0 and 2, got 3`).
    pub fn validate(&self) -> Result<(), String> {
        let builtins = super::BrainRegistry::with_builtins();
        if builtins.contains(&self.provider) {
            builtins.validate(self).map_err(|e| e.to_string())
        } else {
            self.validate_shared()
        }
    }

    /// Checks what does not depend on the provider: a provider named, a key within its
    /// length.
    pub fn validate_shared(&self) -> Result<(), String> {
        if self.provider.trim().is_empty() {
            return Err(format!(
                "brain.provider must name a provider ({})",
                super::BrainRegistry::with_builtins().names().join(", ")
            ));
        }
        crate::limits::check_chars(
            "brain.provider",
            &self.provider,
            crate::limits::MAX_BRAIN_NAME_CHARS,
        )?;
        if let Some(price) = &self.price
            && !(price.input_per_mtok.is_finite()
                && price.input_per_mtok >= 0.0
                && price.output_per_mtok.is_finite()
                && price.output_per_mtok >= 0.0)
        {
            return Err(format!(
                "brain.price: prices must be finite and not negative, got {} and {}",
                price.input_per_mtok, price.output_per_mtok
            ));
        }
        if let Some(super::keys::InlineKey::Given(key)) = &self.api_key {
            crate::limits::check_chars(
                "brain.api_key",
                key.expose(),
                crate::limits::MAX_API_KEY_CHARS,
            )?;
        }
        Ok(())
    }
}

impl Serialize for BrainSpec {
    /// One flat object: `provider`, the options, then the shared settings that are set (an
    /// inline key as `"***"`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("provider", &self.provider)?;
        for (field, value) in &self.options {
            map.serialize_entry(field, value)?;
        }
        if let Some(key) = &self.api_key {
            map.serialize_entry("api_key", key)?;
        }
        if let Some(budget) = self.token_budget {
            map.serialize_entry("token_budget", &budget)?;
        }
        if self.trace_prompts {
            map.serialize_entry("trace_prompts", &true)?;
        }
        if let Some(price) = &self.price {
            map.serialize_entry("price", price)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for BrainSpec {
    /// An object with a `provider`; the shared fields are read with their types, every other
    /// field is kept for the provider. Errors name the field.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut object = match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Object(object) => object,
            other => {
                return Err(D::Error::custom(format!(
                    "a brain object must be an object, got {}",
                    crate::json_kind::json_kind(&other)
                )));
            }
        };
        fn take<T: serde::de::DeserializeOwned, E: Error>(
            object: &mut serde_json::Map<String, serde_json::Value>,
            field: &str,
        ) -> Result<Option<T>, E> {
            match object.remove(field) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(value) => serde_json::from_value(value)
                    .map(Some)
                    .map_err(|e| E::custom(format!("{field}: {e}"))),
            }
        }
        let provider: String =
            take(&mut object, "provider")?.ok_or_else(|| D::Error::missing_field("provider"))?;
        Ok(BrainSpec {
            provider,
            api_key: take(&mut object, "api_key")?,
            token_budget: take(&mut object, "token_budget")?,
            trace_prompts: take(&mut object, "trace_prompts")?.unwrap_or(false),
            price: take(&mut object, "price")?,
            options: object,
        })
    }
}

impl schemars::JsonSchema for BrainSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BrainSpec".into()
    }

    /// The shared fields and every built-in provider's options, each described with the
    /// providers it applies to ([`super::BrainRegistry::options_schemas`]).
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let builtins = super::BrainRegistry::with_builtins();
        let names: Vec<String> = builtins.names().iter().map(|n| format!("`{n}`")).collect();
        let mut properties = serde_json::Map::new();
        properties.insert(
            "provider".into(),
            serde_json::json!({
                "type": "string", "minLength": 1,
                "maxLength": crate::limits::MAX_BRAIN_NAME_CHARS,
                "description": format!(
                    "{} (`openai` speaks to every OpenAI-compatible server), or a brain the \
                     application registered.",
                    names.join(", ")
                )
            }),
        );
        let mut api_key =
            <super::keys::InlineKey as schemars::JsonSchema>::json_schema(generator).to_value();
        api_key["type"] = serde_json::json!(["string", "null"]);
        properties.insert("api_key".into(), api_key);
        properties.insert(
            "token_budget".into(),
            serde_json::json!({
                "type": ["integer", "null"], "minimum": 0,
                "description": "Tokens (input and output, as the provider reports them) this \
                    agent may spend in all; when spent it reports `budget_exhausted` and stops \
                    calling the model."
            }),
        );
        properties.insert(
            "trace_prompts".into(),
            serde_json::json!({
                "type": ["boolean", "null"],
                "description": "Keep the prompts and answers in the `brain_calls` trace (off \
                    by default: the trace holds timings, tokens and outcomes only)."
            }),
        );
        properties.insert(
            "price".into(),
            serde_json::json!({
                "type": ["object", "null"],
                "description": "What the provider charges, in US dollars per million tokens, \
                    for the costs the arena reports (nothing is billed).",
                "required": ["input_per_mtok", "output_per_mtok"],
                "properties": {
                    "input_per_mtok": {"type": "number", "minimum": 0,
                        "description": "Dollars per million prompt tokens."},
                    "output_per_mtok": {"type": "number", "minimum": 0,
                        "description": "Dollars per million answer tokens."}
                },
                "additionalProperties": false
            }),
        );
        for (field, schema) in builtins.options_schemas(generator) {
            properties.entry(field).or_insert(schema);
        }
        schemars::json_schema!({
            "type": "object",
            "description": "A brain object: `provider` and that provider's options. Unknown \
                fields are an error naming the field.",
            "required": ["provider"],
            "properties": properties,
            "additionalProperties": false
        })
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

/// Options a provider could not read: where (`brain.temperature`) and what is wrong. Its text
/// is `brain.<path>: <message>` (`brain: <message>` for the object as a whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionsError {
    /// The field's path inside the options (`temperature`, `headers.X`); empty for the object
    /// as a whole.
    pub path: String,
    /// What is wrong (serde's words: `unknown field `modle`, expected one of …`).
    pub message: String,
}

impl OptionsError {
    /// The option the error is about: the first segment of its path (`headers` of
    /// `headers.X`); `None` for the object as a whole.
    pub fn field(&self) -> Option<&str> {
        self.path.split(['.', '[']).next().filter(|f| !f.is_empty())
    }
}

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path.as_str() {
            "" => write!(f, "brain: {}", self.message),
            path => write!(f, "brain.{path}: {}", self.message),
        }
    }
}

impl std::error::Error for OptionsError {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_profiles_file_is_read_and_checked() {
        let file = r#"{"default": "local", "profiles": {
            "local": {"provider": "openai", "model": "llama3.2", "base_url": "http://127.0.0.1:11434/v1"},
            "cheap": {"provider": "anthropic", "model": "claude-haiku-4-5", "token_budget": 5000,
                      "price": {"input_per_mtok": 1.0, "output_per_mtok": 5.0}}}}"#;
        let profiles = BrainProfiles::from_json(file).unwrap();
        assert_eq!(profiles.default.as_deref(), Some("local"));
        assert_eq!(profiles.profiles["cheap"].token_budget, Some(5000));
        let price = profiles.profiles["cheap"].price.unwrap();
        assert_eq!(price.cost(1_000_000, 200_000), 2.0);
        assert_eq!(
            serde_json::to_value(&profiles.profiles["cheap"]).unwrap()["price"],
            json!({"input_per_mtok": 1.0, "output_per_mtok": 5.0})
        );
        assert_eq!(profiles.profiles["local"].price, None);
        for (bad, says) in [
            (
                "{\"profiles\": {}, \"defualt\": \"x\"}",
                "unknown field `defualt`",
            ),
            (
                "{\"profiles\": {\"a\": {\"provider\": \"openai\", \"modle\": \"m\"}}}",
                "profiles.a: brain.modle: unknown field `modle`",
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
            (
                "{\"profiles\": {\"a\": {\"provider\": \"openai\", \"price\": \
                 {\"input_per_mtok\": -1, \"output_per_mtok\": 1}}}}",
                "brain.price: prices must be finite and not negative",
            ),
            (
                "{\"profiles\": {\"a\": {\"provider\": \"openai\", \"price\": \
                 {\"input\": 1}}}}",
                "price: unknown field `input`",
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
        assert_eq!(spec.options["headers"]["X-Title"], "town");
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
        // The provider's own fields are its to check: a typo is named when it reads them.
        let BrainChoice::Spec(typo) =
            serde_json::from_value::<BrainChoice>(json!({"provider": "openai", "modle": "x"}))
                .unwrap()
        else {
            panic!("an object is a spec")
        };
        let err = typo.validate().unwrap_err();
        assert!(
            err.starts_with("brain.modle: unknown field `modle`, expected one of `model`"),
            "{err}"
        );
        assert!(
            err.ends_with("(the options of the openai provider)"),
            "{err}"
        );
        let wrong = BrainSpec::provider("openai")
            .with("model", "m")
            .with("temperature", "hot");
        let err = wrong.validate().unwrap_err();
        assert!(
            err.starts_with("brain.temperature: invalid type: string"),
            "{err}"
        );
        let err = serde_json::from_value::<BrainChoice>(json!(12))
            .unwrap_err()
            .to_string();
        assert!(err.contains("brain must be a string"), "{err}");
        assert!(err.contains("got a number"), "{err}");
        let err = serde_json::from_value::<BrainChoice>(json!({"model": "x"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `provider`"), "{err}");
        // The shared fields are read with their types.
        let err = serde_json::from_value::<BrainChoice>(json!({"provider": "openai",
            "token_budget": "lots"}))
        .unwrap_err()
        .to_string();
        assert!(err.contains("brain: token_budget: invalid type"), "{err}");
    }

    #[test]
    fn validation_names_the_field() {
        let spec = BrainSpec::provider("openai").with("model", "m");
        assert_eq!(spec.validate(), Ok(()));
        assert_eq!(
            spec.clone()
                .with("temperature", 3.0)
                .validate()
                .unwrap_err(),
            "brain.temperature must be between 0 and 2, got 3"
        );
        assert!(
            spec.clone()
                .with("timeout_seconds", 0.0)
                .validate()
                .unwrap_err()
                .starts_with("brain.timeout_seconds")
        );
        assert!(
            BrainSpec::provider("cli")
                .with("command", Vec::<String>::new())
                .validate()
                .unwrap_err()
                .starts_with("brain.command")
        );
        assert_eq!(
            spec.clone().with("base_url", " ").validate().unwrap_err(),
            "brain.base_url must not be empty"
        );
        assert!(
            spec.clone()
                .with("headers", json!({"Bad Header": "x"}))
                .validate()
                .unwrap_err()
                .contains("not a valid header name")
        );
        assert_eq!(
            BrainSpec::provider("openai").validate().unwrap_err(),
            "brain.model is required for the openai provider"
        );
        assert!(BrainSpec::provider(" ").validate().is_err());
        // A provider the application registers checks its own options at spawn.
        assert_eq!(
            BrainSpec::provider("mine").with("anything", 1).validate(),
            Ok(())
        );
    }

    #[test]
    fn the_flat_object_round_trips_and_never_writes_a_key() {
        let given = json!({"provider": "openai", "model": "m", "api_key": "sk-secret",
            "token_budget": 10, "trace_prompts": true, "headers": {"X": "y"}});
        let spec: BrainSpec = serde_json::from_value(given.clone()).unwrap();
        assert_eq!(spec.token_budget, Some(10));
        assert!(spec.trace_prompts);
        assert_eq!(
            spec.options.len(),
            2,
            "model and headers are the provider's"
        );
        let back = serde_json::to_value(&spec).unwrap();
        let mut expected = given;
        expected["api_key"] = json!("***");
        assert_eq!(back, expected);
        assert!(!format!("{spec:?}").contains("sk-secret"));
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
        assert_eq!(spec.options["cli_backend"], CLAUDE_PRESET);
        assert_eq!(CLAUDE_COMMAND, ["claude", "-p", "--output-format", "json"]);
    }
}
