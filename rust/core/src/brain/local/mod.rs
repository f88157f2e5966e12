//! The `local` provider: a model file run inside this process (the `agents-local` crate:
//! llama.cpp), for agents that think without a server.
//!
//! `{"provider": "local", "model": "models/gemma-3-270m-q4_k_m.gguf"}` ([`LocalOptions`]). The
//! file is checked at spawn (it exists, is GGUF, fits the memory free, and agrees with the
//! settings it is loaded with by other agents); it is loaded on the agent's first decision, once
//! per file however many agents name it, and unloaded when the last of them leaves (unless
//! `keep_loaded`).
//!
//! Each decision is one answer of the model, **constrained while it is generated** to the
//! contract — `{assistant_text, dialog_type, tool_calls: [{id, tool, args, reason?}]}` with
//! `tool` one of the agent's tools at this moment and `args` matching that tool's JSON Schema
//! ([`contract_schema`]) — so it is valid by construction; the runtime's validation and repair
//! loop stay as a safety net, and the trace counts what they were needed for. Reflections and
//! importance ratings are constrained to their answers' schemas the same way. The prompt is the
//! one text the `cli` brain's Claude Code dialect sends (the stable system prompt and tools
//! first, so the agent's sequence keeps that prefix cached and a decision evaluates only what
//! is new), through the model's chat template. `assistant_text` streams as
//! `agent_speech_delta` while it is generated; an interrupting message, terminating the agent
//! or shutting the runtime down stops the generation before its next step.
//!
//! The provider is always registered (so brain objects, the protocol's schema and the editor
//! know it); a build without the `local` feature refuses it at spawn, saying so.
//!
//! Decisions of many agents on one model are decoded together (up to `sequences` at once); a
//! local call takes no permit of the runtime's `max_concurrent_model_calls`, which limits calls
//! to remote providers: the model's sequences are its limit. Tokens count against the budgets
//! like a remote model's (the prompt's cached tokens included, as `cached_tokens`).

#[cfg(feature = "local")]
mod brain;
#[cfg(feature = "local")]
mod speech;

use agents_llm::ToolSpec;
use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::{check_max_tokens, check_not_blank, check_temperature};
use super::{Brain, BrainError, BrainSettings, BrainSpec};
use crate::limits;

/// The provider's name.
pub const NAME: &str = "local";

/// The most `sequences` (the engine's own limit).
pub const MAX_SEQUENCES: u32 = 64;
#[cfg(feature = "local")]
const _: () = assert!(MAX_SEQUENCES == agents_local::settings::MAX_SEQUENCES);

/// The default `max_tokens` of an answer.
pub const DEFAULT_MAX_TOKENS: u32 = 512;

/// The options of a `local` brain object (besides `provider`, `token_budget`,
/// `trace_prompts`). Field names are exact; unknown fields are an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalOptions {
    /// The GGUF model file (required for `local`): a path, absolute or relative to the working
    /// directory (in Godot also `res://` or `user://`).
    #[schemars(length(max = 4096))]
    pub model: Option<String>,
    /// Tokens of context each agent holds: its prompt and its answer (default 4096).
    #[schemars(range(min = 256, max = 131072))]
    pub context_size: Option<u32>,
    /// Agents whose decisions are decoded together (default 8); more wait for a free one.
    #[schemars(range(min = 1, max = 64))]
    pub sequences: Option<u32>,
    /// CPU threads (default: the machine's cores, at most 8).
    #[schemars(range(min = 1, max = 256))]
    pub threads: Option<u32>,
    /// Layers offloaded to the GPU, in a build with a GPU back end (default 0).
    pub gpu_layers: Option<u32>,
    /// The chat template when the file carries none: a name llama.cpp knows (`chatml`,
    /// `gemma`, `llama3`, …; default `chatml`).
    #[schemars(length(max = 64))]
    pub chat_template: Option<String>,
    /// Sampling temperature, 0 to 2 (default 0.7; 0 always takes the likeliest token).
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Nucleus sampling, more than 0 and at most 1 (default 0.95).
    pub top_p: Option<f64>,
    /// Seeds the sampling (default: the agent's seed).
    pub seed: Option<u64>,
    /// Most tokens per answer (default 512).
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
    /// Keep the model loaded when its last agent leaves (default: unloaded).
    pub keep_loaded: Option<bool>,
}

#[cfg(feature = "local")]
impl LocalOptions {
    /// How the model is loaded.
    fn model_settings(&self) -> agents_local::ModelSettings {
        use agents_local::ModelSettings;
        let defaults = ModelSettings::new(self.model.clone().unwrap_or_default());
        ModelSettings {
            context_size: self.context_size.unwrap_or(defaults.context_size),
            sequences: self.sequences.unwrap_or(defaults.sequences),
            threads: self.threads.unwrap_or(0),
            gpu_layers: self.gpu_layers.unwrap_or(0),
            chat_template: self.chat_template.clone(),
            ..defaults
        }
    }
}

/// Makes `local` brains from brain objects ([`LocalOptions`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalProvider;

impl super::Provider for LocalProvider {
    type Options = LocalOptions;

    fn validate(&self, spec: &BrainSpec, options: &LocalOptions) -> Result<(), String> {
        if spec.api_key.is_some() {
            return Err("brain.api_key does not apply to the local provider".into());
        }
        check_temperature(options.temperature)?;
        check_max_tokens(options.max_tokens)?;
        check_not_blank("model", options.model.as_deref())?;
        check_not_blank("chat_template", options.chat_template.as_deref())?;
        if options.model.is_none() {
            return Err("brain.model is required for the local provider: the GGUF file".into());
        }
        if let Some(p) = options.top_p
            && !(p.is_finite() && p > 0.0 && p <= 1.0)
        {
            return Err(format!(
                "brain.top_p must be more than 0 and at most 1, got {p}"
            ));
        }
        for (field, value, min, max) in [
            ("context_size", options.context_size, 256, 131_072),
            ("sequences", options.sequences, 1, MAX_SEQUENCES),
            ("threads", options.threads, 1, 256),
        ] {
            if let Some(v) = value
                && !(min..=max).contains(&v)
            {
                return Err(format!(
                    "brain.{field} must be between {min} and {max}, got {v}"
                ));
            }
        }
        Ok(())
    }

    /// The file exists, is GGUF, fits the memory free, and agrees with the settings other
    /// agents loaded it with.
    fn check(
        &self,
        _spec: &BrainSpec,
        options: &LocalOptions,
        _api_key: Option<&agents_llm::client::Secret>,
    ) -> Result<(), BrainError> {
        #[cfg(feature = "local")]
        {
            use agents_local::{LocalError, Models};
            Models::global()
                .check(&options.model_settings())
                .map_err(|e| match e {
                    LocalError::SettingsDiffer { .. } => BrainError::Invalid(e.to_string()),
                    other => BrainError::Invalid(format!("brain.model: {other}")),
                })
        }
        #[cfg(not(feature = "local"))]
        {
            let _ = options;
            Err(not_built())
        }
    }

    fn build(
        &self,
        spec: &BrainSpec,
        options: LocalOptions,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        #[cfg(feature = "local")]
        {
            Ok(Box::new(brain::LocalBrain::new(spec, options, settings)))
        }
        #[cfg(not(feature = "local"))]
        {
            let _ = (spec, options, settings);
            Err(not_built())
        }
    }
}

/// The error of a build without local models.
#[cfg(not(feature = "local"))]
fn not_built() -> BrainError {
    BrainError::Invalid(
        "brain.provider: this build has no local models (it was built without the `local` \
         feature of agents-core)"
            .into(),
    )
}

/// The JSON Schema of a decision with these tools: the contract, with `tool` one of the tools'
/// names and `args` matching that tool's parameters. Texts are bounded by the contract's
/// limits.
pub fn contract_schema(tools: &[ToolSpec]) -> Value {
    let calls: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": 16},
                    "tool": {"const": tool.name},
                    "args": tool.parameters,
                    "reason": {"type": "string", "maxLength": 200},
                },
                "required": ["id", "tool", "args"],
                "additionalProperties": false,
            })
        })
        .collect();
    let tool_calls = if calls.is_empty() {
        json!({"type": "array", "maxItems": 0})
    } else {
        json!({"type": "array", "maxItems": 4, "items": {"anyOf": calls}})
    };
    json!({
        "type": "object",
        "properties": {
            "assistant_text": {"type": "string", "maxLength": limits::MAX_ASSISTANT_TEXT_CHARS},
            "dialog_type": {"type": "string", "pattern": "^[a-z_]{1,32}$"},
            "tool_calls": tool_calls,
        },
        "required": ["assistant_text", "dialog_type", "tool_calls"],
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_contract_schema_names_the_tools_and_their_arguments() {
        let tools = vec![ToolSpec {
            name: "move".into(),
            description: "Walk.".into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
        }];
        let schema = contract_schema(&tools);
        let call = &schema["properties"]["tool_calls"]["items"]["anyOf"][0];
        assert_eq!(call["properties"]["tool"]["const"], "move");
        assert_eq!(call["properties"]["args"], tools[0].parameters);
        assert_eq!(
            contract_schema(&[])["properties"]["tool_calls"]["maxItems"],
            0
        );
    }
}
