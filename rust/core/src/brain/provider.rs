//! A provider: one module that makes brains of one kind from brain objects.
//!
//! A brain object ([`BrainSpec`]) is `provider`, the settings every model brain shares with
//! the runtime (a key it brought, a token budget, the trace), and the provider's own options. A
//! provider declares those options as its own type ([`Provider::Options`], a struct with
//! `#[serde(deny_unknown_fields)]`), so adding one touches nothing outside its module but the
//! line that registers it ([`super::BrainRegistry::with_builtins`]):
//!
//! - its options are read at spawn, before the agent gets an id: a field it does not know, a
//!   value of the wrong type, a number out of range is an error naming the field
//!   ([`Provider::validate`]);
//! - what they need from the machine — a key, a program, a file — is checked there too
//!   ([`Provider::check`]);
//! - the protocol's schema of a brain object lists its options ([`Provider::Options`]'s JSON
//!   Schema), and so do the editor's choices of a provider (the registry's names);
//! - its brains call their model through the one pipeline every model brain shares
//!   ([`super::gate::ModelGate::traced`]: the budgets, the runtime's permits, timing, tokens
//!   spent, the trace record) and stream what arrives through [`super::BrainEvents`].
//!
//! An HTTP provider is simpler still: one module of the `agents-llm` crate (its wire format and
//! its options, [`agents_llm::api::HttpProvider`]) registered in one line; the model brains
//! ([`super::llm::HttpBrains`]) make it a [`Provider`].
//!
//! The checks every provider's numbers share are here ([`check_temperature`],
//! [`check_timeout`], [`check_max_tokens`], [`check_not_blank`]), written once.

use agents_llm::client::Secret;

use super::{Brain, BrainError, BrainSettings, BrainSpec};

/// One kind of brain, made from brain objects naming it.
pub trait Provider: Send + Sync + 'static {
    /// Its options: every field of a brain object but [`super::spec::SHARED_FIELDS`]. Read
    /// with serde (so `#[serde(deny_unknown_fields)]` names a typo), described by its JSON
    /// Schema in the protocol's.
    type Options: serde::de::DeserializeOwned + schemars::JsonSchema + Send;

    /// Checks the options alone, naming the field (`brain.temperature must be between 0 and
    /// 2, got 3`): what an editor can say before anything runs.
    fn validate(&self, spec: &BrainSpec, options: &Self::Options) -> Result<(), String> {
        let _ = (spec, options);
        Ok(())
    }

    /// Checks what the options need from the machine (a key, a program, a file), after
    /// [`Provider::validate`] passed. `api_key` is the key the brain object carried itself.
    fn check(
        &self,
        spec: &BrainSpec,
        options: &Self::Options,
        api_key: Option<&Secret>,
    ) -> Result<(), BrainError> {
        let _ = (spec, options, api_key);
        Ok(())
    }

    /// Builds one agent's brain (after both checks passed).
    fn build(
        &self,
        spec: &BrainSpec,
        options: Self::Options,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError>;
}

/// The names of `P`'s options (its JSON Schema's properties).
fn option_names<P: Provider>() -> std::collections::BTreeSet<String> {
    let schema = schemars::SchemaGenerator::default().root_schema_for::<P::Options>();
    schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// A [`Provider`] as the registry holds it.
pub(crate) struct Registered<P>(pub P);

impl<P: Provider> Registered<P> {
    fn read(&self, spec: &BrainSpec) -> Result<P::Options, BrainError> {
        let options = spec.read_options::<P::Options>().map_err(|e| {
            // A field the options do not have: say whose options they are.
            let unknown = e
                .field()
                .is_some_and(|field| !option_names::<P>().contains(field));
            BrainError::Invalid(if unknown {
                format!("{e} (the options of the {} provider)", spec.provider)
            } else {
                e.to_string()
            })
        })?;
        self.0
            .validate(spec, &options)
            .map_err(|message| self.refusal(spec, message))?;
        Ok(options)
    }

    /// The error for a refusal of [`Provider::validate`]: `brain_model_missing`
    /// ([`BrainError::Config`]) when naming a model is all the brain object lacks — it names
    /// none, and the same object with one passes — else [`BrainError::Invalid`]. Told by what
    /// passes, never by the refusal's words.
    fn refusal(&self, spec: &BrainSpec, message: String) -> BrainError {
        let lacks_only_a_model = !spec.options.contains_key("model") && {
            let named = spec.clone().with("model", "model");
            named
                .read_options::<P::Options>()
                .is_ok_and(|options| self.0.validate(&named, &options).is_ok())
        };
        if lacks_only_a_model {
            BrainError::Config {
                code: crate::error_code::ErrorCode::BrainModelMissing,
                message,
            }
        } else {
            BrainError::Invalid(message)
        }
    }
}

impl<P: Provider> super::BrainFactory for Registered<P> {
    fn validate(&self, spec: &BrainSpec) -> Result<(), BrainError> {
        self.read(spec).map(drop)
    }

    fn check(&self, spec: &BrainSpec, api_key: Option<&Secret>) -> Result<(), BrainError> {
        let options = self.read(spec)?;
        self.0.check(spec, &options, api_key)
    }

    fn build(
        &self,
        spec: &BrainSpec,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        let options = self.read(spec)?;
        self.0.build(spec, options, settings)
    }

    fn options_schema(
        &self,
        generator: &mut schemars::SchemaGenerator,
    ) -> Option<schemars::Schema> {
        Some(generator.subschema_for::<P::Options>())
    }
}

/// `brain.temperature`: 0 to 2.
pub fn check_temperature(temperature: Option<f64>) -> Result<(), String> {
    match temperature {
        Some(t) if !(t.is_finite() && (0.0..=2.0).contains(&t)) => Err(format!(
            "brain.temperature must be between 0 and 2, got {t}"
        )),
        _ => Ok(()),
    }
}

/// `brain.timeout_seconds`: more than 0, at most an hour.
pub fn check_timeout(timeout_seconds: Option<f64>) -> Result<(), String> {
    match timeout_seconds {
        Some(t) if !(t.is_finite() && t > 0.0 && t <= 3600.0) => Err(format!(
            "brain.timeout_seconds must be more than 0 and at most 3600, got {t}"
        )),
        _ => Ok(()),
    }
}

/// `brain.max_tokens`: at least 1.
pub fn check_max_tokens(max_tokens: Option<u32>) -> Result<(), String> {
    match max_tokens {
        Some(0) => Err("brain.max_tokens must be at least 1".into()),
        _ => Ok(()),
    }
}

/// A text option that is given must not be blank.
pub fn check_not_blank(field: &str, value: Option<&str>) -> Result<(), String> {
    match value {
        Some(v) if v.trim().is_empty() => Err(format!("brain.{field} must not be empty")),
        _ => Ok(()),
    }
}
