//! The HTTP providers (`openai`, `anthropic`, `ollama`) as the registry holds them: the model
//! client's [`HttpBrains`], whose refusal of a brain object for want of a key is given its code,
//! `brain_key_missing` ([`BrainError::Config`]). It is told by what refused — the machine check,
//! which checks only the key, refusing a brain object that brought no key of its own — never by
//! the refusal's words. (A missing model is told for every provider, in
//! [`provider`](super::provider).)
//!
//! When the HTTP brains report the kind themselves (as [`BrainError::Config`]), this wrapper
//! can go.

use agents_llm::api::HttpProvider;
use agents_llm::client::Secret;

use super::llm::HttpBrains;
use super::{Brain, BrainError, BrainSettings, BrainSpec, Provider};
use crate::error_code::ErrorCode;

/// An HTTP provider's brains, whose key refusal carries its code.
pub(crate) struct Http<P: HttpProvider>(pub(crate) HttpBrains<P>);

impl<P: HttpProvider> Provider for Http<P> {
    type Options = P::Options;

    fn validate(&self, spec: &BrainSpec, options: &P::Options) -> Result<(), String> {
        self.0.validate(spec, options)
    }

    fn check(
        &self,
        spec: &BrainSpec,
        options: &P::Options,
        api_key: Option<&Secret>,
    ) -> Result<(), BrainError> {
        self.0
            .check(spec, options, api_key)
            .map_err(|e| key_refusal(spec, e))
    }

    fn build(
        &self,
        spec: &BrainSpec,
        options: P::Options,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        self.0
            .build(spec, options, settings)
            .map_err(|e| key_refusal(spec, e))
    }
}

/// The HTTP brains' key check refuses with [`BrainError::Invalid`] only for want of a key: with
/// no key of the brain object's own, that is the environment variable not set.
fn key_refusal(spec: &BrainSpec, error: BrainError) -> BrainError {
    match error {
        BrainError::Invalid(message) if spec.api_key.is_none() => BrainError::Config {
            code: ErrorCode::BrainKeyMissing,
            message,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::BrainRegistry;

    #[test]
    fn a_missing_model_and_a_missing_key_have_their_codes() {
        let registry = BrainRegistry::with_builtins();
        for provider in ["openai", "anthropic", "ollama"] {
            let no_model = BrainSpec::provider(provider).with("base_url", "http://127.0.0.1:1/v1");
            let e = registry.validate(&no_model).unwrap_err();
            assert_eq!(e.code(), ErrorCode::BrainModelMissing, "{e}");
            assert_eq!(
                e.to_string(),
                format!("brain.model is required for the {provider} provider")
            );
            // Another problem besides the model is that problem's (the provider's words).
            let also_hot = no_model.clone().with("temperature", 3.0);
            assert_eq!(
                registry.validate(&also_hot).unwrap_err().code(),
                ErrorCode::InvalidConfig
            );
        }
        let no_key = BrainSpec::provider("openai")
            .with("model", "gpt-4o-mini")
            .with("api_key_env", "GODOT_AGENTS_TEST_NO_SUCH_VARIABLE");
        let e = registry.check(&no_key, None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::BrainKeyMissing, "{e}");
        assert!(
            e.to_string().contains("GODOT_AGENTS_TEST_NO_SUCH_VARIABLE"),
            "{e}"
        );
        // A local model names its file or a download.
        let e = registry
            .validate(&BrainSpec::provider("local"))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::BrainModelMissing, "{e}");
        // An unknown field is named with whose options it is not.
        let typo = BrainSpec::provider("openai").with("modle", "x");
        let e = registry.validate(&typo).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidConfig);
        assert!(
            e.to_string()
                .ends_with("(the options of the openai provider)"),
            "{e}"
        );
    }
}
