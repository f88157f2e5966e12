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
//! ([`contract_schema`], which also keeps out silent answers and repeated call ids) — so it is
//! valid by construction; an answer cut at `max_tokens` is closed where it stopped (its
//! complete calls only). The runtime's validation and repair loop stay as a safety net, and the
//! trace counts what they were needed for. Reflections and
//! importance ratings are constrained to their answers' schemas the same way. The prompt is the
//! one text the `cli` brain's Claude Code dialect sends, through the model's chat template:
//! what every agent is given first (the rules, the tools, how to answer), then the agent's own
//! part (who it is, the values its tools take now, the situation) — so the prompts of agents
//! on one model share a long prefix, read once and copied between their sequences, and each
//! agent's sequence keeps its own prompt cached: a decision evaluates only what is new. `assistant_text` streams as
//! `agent_speech_delta` while it is generated; an interrupting message, terminating the agent
//! or shutting the runtime down stops the generation before its next step.
//!
//! The provider is always registered (so brain objects, the protocol's schema and the editor
//! know it); a build without the `local` feature refuses it at spawn, saying so.
//!
//! Decisions of many agents on one model are decoded together (up to `sequences` at once); a
//! local call takes no permit of the runtime's `max_concurrent_model_calls`, which limits calls
//! to remote providers: the model's sequences are its limit. Answers waiting for a sequence
//! take turns between the parties their agents think for — each connection of a server that
//! spawned agents, and the game itself ([`crate::brain::BrainSettings::party`]) — so one
//! client's agents cannot starve another's; a waiting answer whose agent is interrupted or
//! terminated leaves the queue at once. An answer ends by its `max_tokens`, or fails
//! (`brain_error`, traced as `brain_timeout`) when it is not done `timeout_seconds` after it got
//! its sequence. Tokens count against the budgets like a remote model's (the prompt's cached
//! tokens included, as `cached_tokens`).

pub mod bounds;
#[cfg(feature = "local")]
mod brain;
#[cfg(feature = "local")]
mod salvage;
#[cfg(feature = "local")]
mod speech;

use agents_llm::ToolSpec;
use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::{check_max_tokens, check_not_blank, check_temperature, check_timeout};
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

/// Ends the process's local models before the process ends: the kept ones are let go, and
/// this waits up to `timeout` until every model's thread has finished its decode step and
/// ended (a thread still decoding while the process exits runs code being torn down, and
/// crashes it). Call it after the runtimes have shut down. False when a thread had not ended
/// in time; true at once in a build without the `local` feature.
pub fn end_models(timeout: std::time::Duration) -> bool {
    #[cfg(feature = "local")]
    return agents_local::Models::global().shutdown(timeout);
    #[cfg(not(feature = "local"))]
    {
        let _ = timeout;
        true
    }
}

/// The default `timeout_seconds` of an answer, as a remote call's: a 512-token answer of a
/// small model on two CPU threads ends well within it.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;

/// The options of a `local` brain object (besides `provider`, `token_budget`,
/// `trace_prompts`). Field names are exact; unknown fields are an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalOptions {
    /// The GGUF model file: a path, absolute or relative to the working directory (in Godot
    /// also `res://` or `user://`). Either this or `model_url`.
    #[schemars(length(max = 4096))]
    pub model: Option<String>,
    /// Where to download the GGUF model file from (`http` or `https`), once, into
    /// `model_cache`; with `model_sha256`. Either this or `model`.
    #[schemars(length(max = 4096))]
    pub model_url: Option<String>,
    /// The SHA-256 the file at `model_url` must have (64 hexadecimal digits): a file that
    /// differs is deleted and the agent reports `brain_model_checksum_mismatch`.
    #[schemars(length(min = 64, max = 64))]
    pub model_sha256: Option<String>,
    /// The directory downloaded models are kept in (default: the user's cache directory,
    /// `godot-agents/models` in it; in Godot `user://models`).
    #[schemars(length(max = 4096))]
    pub model_cache: Option<String>,
    /// Tokens of context each agent holds: its prompt and its answer (default 4096).
    #[schemars(range(min = 256, max = 131072))]
    pub context_size: Option<u32>,
    /// Agents whose decisions are decoded together (default 8); more wait for a free one.
    #[schemars(range(min = 1, max = 64))]
    pub sequences: Option<u32>,
    /// CPU threads (default: the machine's physical cores but one — the game keeps a core for
    /// its frames —, at least 1, at most 8).
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
    /// Seconds one answer may take once it has a sequence, more than 0 and at most 3600
    /// (default 60); an answer not done by then fails, naming the limit.
    pub timeout_seconds: Option<f64>,
}

#[cfg(feature = "local")]
impl LocalOptions {
    /// Where the model comes from, when it is downloaded (the options were validated).
    fn source(&self) -> Option<agents_local::Source> {
        let url = self.model_url.as_deref()?;
        agents_local::Source::new(url, self.model_sha256.as_deref().unwrap_or_default()).ok()
    }

    /// The directory downloads are kept in.
    fn cache_dir(&self) -> std::path::PathBuf {
        self.model_cache
            .as_ref()
            .map(std::path::PathBuf::from)
            .unwrap_or_else(agents_local::download::default_cache_dir)
    }

    /// The model file: `model`, or where `model_url`'s download is kept.
    fn model_path(&self) -> std::path::PathBuf {
        match self.source() {
            Some(source) => source.cached_path(&self.cache_dir()),
            None => self.model.clone().unwrap_or_default().into(),
        }
    }

    /// How the model is loaded.
    fn model_settings(&self) -> agents_local::ModelSettings {
        use agents_local::ModelSettings;
        let defaults = ModelSettings::new(self.model_path());
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
        check_timeout(options.timeout_seconds)?;
        check_not_blank("model", options.model.as_deref())?;
        check_not_blank("model_url", options.model_url.as_deref())?;
        check_not_blank("model_cache", options.model_cache.as_deref())?;
        check_not_blank("chat_template", options.chat_template.as_deref())?;
        match (&options.model, &options.model_url) {
            (None, None) => {
                return Err(
                    "brain.model is required for the local provider: the GGUF file \
                            (or brain.model_url and brain.model_sha256, to download it)"
                        .into(),
                );
            }
            (Some(_), Some(_)) => {
                return Err(
                    "brain.model_url: give brain.model (a file) or brain.model_url \
                            (a download), not both"
                        .into(),
                );
            }
            (Some(_), None) => {
                for (field, set) in [
                    ("model_sha256", options.model_sha256.is_some()),
                    ("model_cache", options.model_cache.is_some()),
                ] {
                    if set {
                        return Err(format!(
                            "brain.{field} applies to a download: it needs brain.model_url"
                        ));
                    }
                }
            }
            (None, Some(url)) => {
                let Some(sha256) = &options.model_sha256 else {
                    return Err("brain.model_sha256 is required with brain.model_url: the \
                                SHA-256 the downloaded file must have"
                        .into());
                };
                check_source(url, sha256)?;
            }
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
    /// agents loaded it with. A download not made yet is made at the agent's first decision;
    /// a file being copied out of the game's pack is waited for then.
    fn check(
        &self,
        _spec: &BrainSpec,
        options: &LocalOptions,
        _api_key: Option<&agents_llm::client::Secret>,
    ) -> Result<(), BrainError> {
        #[cfg(feature = "local")]
        {
            use agents_local::{LocalError, Models};
            let settings = options.model_settings();
            // A download not made yet, or a file the game is copying out of its pack, is
            // checked when the agent first decides.
            let pending = options.model_url.is_some()
                || agents_local::Downloads::global().is_pending(&settings.path);
            if pending && !settings.path.is_file() {
                return Ok(());
            }
            Models::global().check(&settings).map_err(|e| match e {
                LocalError::SettingsDiffer { .. } => BrainError::Invalid(e.to_string()),
                LocalError::NotFound(path) => {
                    BrainError::ModelFileMissing(path.display().to_string())
                }
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

/// A download's URL and hash, checked.
fn check_source(url: &str, sha256: &str) -> Result<(), String> {
    #[cfg(feature = "local")]
    {
        use agents_local::Source;
        Source::check_url(url).map_err(|e| format!("brain.model_url: {e}"))?;
        Source::check_sha256(sha256).map_err(|e| format!("brain.model_sha256: {e}"))
    }
    #[cfg(not(feature = "local"))]
    {
        // A build without local models refuses the provider when the agent spawns.
        let _ = (url, sha256);
        Ok(())
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

/// The JSON Schema of a decision with these tools, answered in at most `max_tokens` tokens:
/// the contract, with `tool` one of the tools' names and `args` matching that tool's
/// parameters, and nothing the runtime would send back for repair:
///
/// - an answer without calls says something (`assistant_text` starts with a character that is
///   not blank: the anti-silent rule), and no line says `<|`, which opens a chat template's
///   turn markers;
/// - calls carry no `id` (the brain numbers them `call_1`, `call_2`, …, so no two share one);
/// - at most [`MAX_LOCAL_CALLS`] calls, and none after a call of one of `final_tools` (the
///   world's `speak`: [`crate::brain::BrainContext::final_tools`]), which comes last or not at
///   all;
/// - `assistant_text` takes at most half of the answer's tokens (a token is at least one
///   character), and so does every string of the arguments, each number and list has an end
///   ([`bounds::bounded`]): a model caught in a loop cannot run a call past `max_tokens`, so
///   an answer cut there is rare, and keeps its text and its whole calls.
pub fn contract_schema(tools: &[ToolSpec], final_tools: &[String], max_tokens: u32) -> Value {
    schema_of(tools, final_tools, max_tokens, None)
}

/// The schema of a decision that must act ([`crate::brain::BrainContext::due_tools`]): as
/// [`contract_schema`], with exactly one call, one of `callable` (the due actions and the
/// look-ups still offered): a move, or a look-up before it (a look-up after a move would ask
/// about a turn that is over). The answer may still say something beside its call.
pub fn acting_schema(
    tools: &[ToolSpec],
    final_tools: &[String],
    max_tokens: u32,
    callable: &[String],
) -> Value {
    schema_of(tools, final_tools, max_tokens, Some(callable))
}

fn schema_of(
    tools: &[ToolSpec],
    final_tools: &[String],
    max_tokens: u32,
    callable: Option<&[String]>,
) -> Value {
    let text_chars = (max_tokens as usize / 2).clamp(1, limits::MAX_ASSISTANT_TEXT_CHARS);
    let call_of = |tool: &ToolSpec| {
        json!({
            "type": "object",
            "properties": {
                "tool": {"const": tool.name},
                "args": bounds::bounded(&tool.parameters, text_chars as u64),
                "reason": {"type": "string", "maxLength": text_chars.min(MAX_REASON_CHARS)},
            },
            "required": ["tool", "args"],
            "additionalProperties": false,
        })
    };
    let (last, free): (Vec<&ToolSpec>, Vec<&ToolSpec>) = tools
        .iter()
        .filter(|tool| callable.is_none_or(|names| names.contains(&tool.name)))
        .partition(|t| final_tools.contains(&t.name));
    let calls: Vec<Value> = free.iter().map(|t| call_of(t)).collect();
    let last: Vec<Value> = last.iter().map(|t| call_of(t)).collect();
    let dialog_type = json!({"type": "string", "pattern": "^[a-z_]{1,32}$"});
    let answer = |text: Value, tool_calls: Value| {
        json!({
            "type": "object",
            "properties": {
                "assistant_text": text,
                "dialog_type": dialog_type,
                "tool_calls": tool_calls,
            },
            "required": ["assistant_text", "dialog_type", "tool_calls"],
            "additionalProperties": false,
        })
    };
    let said = line(true, text_chars);
    let no_calls = json!({"type": "array", "maxItems": 0});
    if calls.is_empty() && last.is_empty() {
        return answer(said, no_calls);
    }
    let some_calls = |min: usize| calls_schema(&calls, &last, min);
    if callable.is_some() {
        let any: Vec<&Value> = calls.iter().chain(&last).collect();
        let one_call = json!({"type": "array", "minItems": 1, "maxItems": 1,
                              "items": {"anyOf": any}});
        return answer(line(false, text_chars), one_call);
    }
    json!({"anyOf": [
        answer(said, some_calls(0)),
        answer(line(false, text_chars), some_calls(1)),
    ]})
}

/// The schema of an answer's calls: at least `min`, at most [`MAX_LOCAL_CALLS`], each one of
/// `calls` — or, when `last` has some, `k` of `calls` followed by one of `last`.
fn calls_schema(calls: &[Value], last: &[Value], min: usize) -> Value {
    let free = json!({"type": "array", "minItems": min, "maxItems": MAX_LOCAL_CALLS,
                      "items": {"anyOf": calls}});
    if last.is_empty() {
        return free;
    }
    let mut shapes = Vec::with_capacity(MAX_LOCAL_CALLS + 1);
    if !calls.is_empty() {
        shapes.push(free);
    } else if min == 0 {
        shapes.push(json!({"type": "array", "maxItems": 0}));
    }
    let before = if calls.is_empty() {
        0
    } else {
        MAX_LOCAL_CALLS - 1
    };
    for k in 0..=before {
        let mut prefix = vec![json!({"anyOf": calls}); k];
        prefix.push(json!({"anyOf": last}));
        shapes.push(
            json!({"type": "array", "prefixItems": prefix, "items": false,
                           "minItems": k + 1}),
        );
    }
    json!({"anyOf": shapes})
}

/// The schema of what an agent says in a local model's answer: at most `max_chars`
/// characters, starting with one that is not blank when `said` (an answer without calls must
/// say something), and never `<|` — the opening of the turn markers of ChatML (the template a
/// model without its own is given) and of most chat templates (`<|im_start|>`, `<|user|>`,
/// `<|eot_id|>`), which a model imitating its prompt's turns would otherwise say. A `<`
/// followed by anything else is allowed.
fn line(said: bool, max_chars: usize) -> Value {
    // Runs of `<` are followed by a character that is neither `<` nor `|`, or end the line.
    let body = "(?:[^<]|<+[^<|])*<*";
    let pattern = if said {
        format!("^(?:(?:[^\\s<]|<+[^<|]){body}|<+)$")
    } else {
        format!("^{body}$")
    };
    json!({"type": "string", "maxLength": max_chars, "pattern": pattern})
}

/// The most characters of a call's `reason` in a local model's answer.
pub const MAX_REASON_CHARS: usize = 200;

/// The most calls in one answer of a local model.
pub const MAX_LOCAL_CALLS: usize = 4;

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
        let schema = contract_schema(&tools, &[], 512);
        let [said, acted] = [&schema["anyOf"][0], &schema["anyOf"][1]];
        let call = &said["properties"]["tool_calls"]["items"]["anyOf"][0];
        assert_eq!(call["properties"]["tool"]["const"], "move");
        assert_eq!(
            call["properties"]["args"],
            bounds::bounded(&tools[0].parameters, 256),
            "the tool's arguments, every value with an end"
        );
        assert_eq!(
            call["properties"]["args"]["properties"]["x"]["maximum"],
            1e15
        );
        assert_eq!(
            call["required"],
            json!(["tool", "args"]),
            "no ids to repeat"
        );
        assert_eq!(said["properties"]["assistant_text"], line(true, 256));
        assert_eq!(acted["properties"]["tool_calls"]["minItems"], 1);
        assert_eq!(acted["properties"]["assistant_text"], line(false, 256));
        let silent = contract_schema(&[], &[], 512);
        assert_eq!(silent["properties"]["tool_calls"]["maxItems"], 0);
        assert!(silent["properties"]["assistant_text"]["pattern"].is_string());
    }

    #[test]
    fn a_decision_that_must_act_calls_a_due_action_or_a_look_up() {
        let tool = |name: &str| ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        };
        let tools = [tool("move"), tool("suggest_move"), tool("speak")];
        let schema = acting_schema(&tools, &[], 128, &["move".into(), "suggest_move".into()]);
        let valid = jsonschema::validator_for(&schema).unwrap();
        let answer = |text: &str, calls: Value| json!({"assistant_text": text, "dialog_type": "reply", "tool_calls": calls});
        assert!(valid.is_valid(&answer("", json!([{"tool": "move", "args": {}}]))));
        assert!(valid.is_valid(&answer(
            "Hm.",
            json!([{"tool": "suggest_move", "args": {}}])
        )));
        assert!(
            !valid.is_valid(&answer("Your move!", json!([]))),
            "words only"
        );
        assert!(
            !valid.is_valid(&answer("", json!([{"tool": "speak", "args": {}}]))),
            "a tool that is neither due nor a look-up"
        );
        let both = json!([{"tool": "move", "args": {}}, {"tool": "suggest_move", "args": {}}]);
        assert!(
            !valid.is_valid(&answer("", both)),
            "a look-up after the move"
        );
    }

    #[test]
    fn a_line_never_says_a_turn_marker() {
        let said = jsonschema::validator_for(&line(true, 40)).unwrap();
        let any = jsonschema::validator_for(&line(false, 40)).unwrap();
        for ok in [
            "Hello!",
            "a < b",
            "<3 you",
            "<",
            "x <<",
            "<< x",
            "Hi\n<b>bread</b>",
        ] {
            assert!(said.is_valid(&json!(ok)), "{ok:?} may be said");
            assert!(any.is_valid(&json!(ok)), "{ok:?} may be said");
        }
        for marker in [
            "Sure.<|im_start|>assistant",
            "<|im_end|>",
            "a <<|user|>",
            "ok<|",
        ] {
            assert!(
                !said.is_valid(&json!(marker)),
                "{marker:?} is a turn marker"
            );
            assert!(!any.is_valid(&json!(marker)), "{marker:?} is a turn marker");
        }
        // An answer without calls says something: not blank, not empty.
        for silent in ["", " hi", "\nhi"] {
            assert!(!said.is_valid(&json!(silent)), "{silent:?} is silent");
        }
        assert!(any.is_valid(&json!("")), "calls may come without a line");
        assert!(
            !any.is_valid(&json!("x".repeat(41))),
            "at most 40 characters"
        );
    }

    /// How many bytes of `answer` the grammar of `schema` takes before it refuses one
    /// (compiled strictly, as the model's worker first compiles it; over one token per byte).
    #[cfg(feature = "local")]
    fn taken(schema: &Value, answer: &str) -> usize {
        let env = toktrie::ApproximateTokEnv::single_byte_env();
        let factory = llguidance::ParserFactory::new_simple(&env).unwrap();
        let parser = factory
            .create_parser(agents_local::sampler::grammar(schema, false))
            .unwrap();
        let mut matcher = llguidance::Matcher::new(Ok(parser));
        assert_eq!(matcher.get_error(), None);
        let tokens = env.tokenize_bytes(answer.as_bytes());
        assert_eq!(tokens.len(), answer.len());
        matcher.try_consume_tokens(&tokens).unwrap()
    }

    #[cfg(feature = "local")]
    #[test]
    fn the_grammar_refuses_a_turn_marker_as_it_starts() {
        let tools = [ToolSpec {
            name: "move".into(),
            description: "Walk.".into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
        }];
        let schema = contract_schema(&tools, &[], 128);
        let whole = r#"{"assistant_text":"Hi <b>!","dialog_type":"chat","tool_calls":[]}"#;
        assert_eq!(taken(&schema, whole), whole.len(), "a `<` of anything else");
        let acting = r#"{"assistant_text":"","dialog_type":"act","tool_calls":[{"tool":"move","args":{"x":1}}]}"#;
        assert_eq!(taken(&schema, acting), acting.len());
        for start in [r#"{"assistant_text":"Hi <"#, r#"{"assistant_text":"<"#] {
            let marker = format!("{start}|im_start|>assistant");
            assert_eq!(
                taken(&schema, &marker),
                start.len(),
                "the `|` after the `<` is refused"
            );
        }
        // Without tools an answer must say something: no blank start.
        let blank = r#"{"assistant_text":" "#;
        assert_eq!(
            taken(&contract_schema(&[], &[], 128), blank),
            blank.len() - 1
        );
    }

    /// The world tools grounded for agent `a1` (who can ask `a2`, has task 3 open, in a world
    /// 100 × 50), as a local brain is given them.
    #[cfg(feature = "local")]
    fn grounded_tools() -> Vec<ToolSpec> {
        let ground = crate::tools::world::ground::Ground::new(
            "a1",
            &[],
            "player_0",
            ["a2".to_string()],
            [3],
            crate::geometry::WorldBounds::from_rect(0.0, 0.0, 100.0, 50.0).unwrap(),
        );
        grounded_tools_of(&ground.registry())
    }

    /// An answer calling `calls` (each `"tool":…,"args":…`), as far as the grammar takes it.
    #[cfg(feature = "local")]
    fn answer_with(calls: &[&str]) -> String {
        let calls: Vec<String> = calls.iter().map(|c| format!("{{{c}}}")).collect();
        format!(
            r#"{{"assistant_text":"","dialog_type":"act","tool_calls":[{}]}}"#,
            calls.join(",")
        )
    }

    #[cfg(feature = "local")]
    #[test]
    fn the_grammar_of_grounded_tools_names_only_what_exists() {
        let schema = contract_schema(&grounded_tools(), &["speak".into()], 256);
        let taken_all = |calls: &[&str]| {
            let answer = answer_with(calls);
            (taken(&schema, &answer), answer.len())
        };
        for ok in [
            r#""tool":"collaborate","args":{"agent_id":"a2"}"#,
            r#""tool":"complete_task","args":{"task_id":3}"#,
            r#""tool":"move","args":{"x":100,"y":12.5}"#,
            r#""tool":"speak","args":{"content":"Hi","recipients":["player_0","a2"]}"#,
        ] {
            let (taken, len) = taken_all(&[ok]);
            assert_eq!(taken, len, "{ok} is grounded");
        }
        for (bad, stops_at) in [
            (
                r#""tool":"collaborate","args":{"agent_id":"bob"}"#,
                r#""agent_id":""#,
            ),
            (
                r#""tool":"complete_task","args":{"task_id":5555555555555555}"#,
                r#""task_id":"#,
            ),
            (r#""tool":"move","args":{"x":101,"y":1}"#, r#""x":10"#),
            (r#""tool":"move","args":{"x":-3,"y":1}"#, r#""x":"#),
            (r#""tool":"move","args":{"x":5,"y":50.5}"#, r#""y":50."#),
            (
                r#""tool":"speak","args":{"content":"Hi","recipients":["bob"]}"#,
                r#""recipients":[""#,
            ),
        ] {
            let answer = answer_with(&[bad]);
            let at = answer.find(stops_at).unwrap() + stops_at.len();
            assert_eq!(taken(&schema, &answer), at, "{bad} is refused there");
        }
        // Nothing follows `speak`; it may come last.
        let speak = r#""tool":"speak","args":{"content":"Hi"}"#;
        let walk = r#""tool":"move","args":{"x":1,"y":1}"#;
        let (taken_speak_last, len) = taken_all(&[walk, walk, speak]);
        assert_eq!(taken_speak_last, len, "speak last");
        let answer = answer_with(&[speak, walk]);
        // The `,` that would open another call is refused.
        let after = answer.find(walk).unwrap() - 2;
        assert_eq!(taken(&schema, &answer), after, "no call after speak");
        let (taken_twice, _) = taken_all(&[speak, speak]);
        assert_eq!(taken_twice, after, "no second speak");
    }

    #[cfg(feature = "local")]
    #[test]
    fn the_grammar_writes_no_negative_zero() {
        let tools = [ToolSpec {
            name: "hp_delta".into(),
            description: "Heal or hurt.".into(),
            parameters: json!({"type": "object", "properties": {"delta": {"type": "integer"}}}),
        }];
        let schema = contract_schema(&tools, &[], 128);
        for delta in ["-3", "0", "12", "-10"] {
            let answer =
                answer_with(&[&format!(r#""tool":"hp_delta","args":{{"delta":{delta}}}"#)]);
            assert_eq!(taken(&schema, &answer), answer.len(), "{delta}");
        }
        let answer = answer_with(&[r#""tool":"hp_delta","args":{"delta":-0}"#]);
        let at = answer.find("-0").unwrap() + 1;
        assert_eq!(taken(&schema, &answer), at, "the 0 after the - is refused");
    }

    #[cfg(feature = "local")]
    #[test]
    fn the_grammar_of_tools_left_out_refuses_them() {
        let ground = crate::tools::world::ground::Ground::new(
            "a1",
            &[],
            "",
            [],
            [],
            crate::geometry::WorldBounds::default(),
        );
        let tools = grounded_tools_of(&ground.registry());
        let schema = contract_schema(&tools, &["speak".into()], 256);
        for gone in ["collaborate", "complete_task"] {
            let answer = answer_with(&[&format!(r#""tool":"{gone}","args":{{}}"#)]);
            let whole = answer.find(gone).unwrap() + gone.len();
            assert!(taken(&schema, &answer) < whole, "{gone} is not offered");
        }
        let lonely =
            answer_with(&[r#""tool":"speak","args":{"content":"Hm.","recipients":["a2"]}"#]);
        let at = lonely.find(r#"["a2"#).unwrap() + 1;
        assert_eq!(taken(&schema, &lonely), at, "no one to address");
        // Speaking alone is fine.
        let alone = answer_with(&[r#""tool":"speak","args":{"content":"Hm.","recipients":[]}"#]);
        assert_eq!(taken(&schema, &alone), alone.len());
    }

    /// `n` answers drawn at random from the grammar of `schema`, byte by byte (printable ASCII
    /// where the grammar allows it), as a model that knows nothing would write them.
    #[cfg(feature = "local")]
    fn sampled(schema: &Value, n: usize, seed: u64) -> Vec<Value> {
        use rand::{RngExt, SeedableRng};
        let env = toktrie::ApproximateTokEnv::single_byte_env();
        let eos = env.tok_trie().eos_token();
        let factory = llguidance::ParserFactory::new_simple(&env).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let parser = factory
                    .create_parser(agents_local::sampler::grammar(schema, false))
                    .unwrap();
                let mut matcher = llguidance::Matcher::new(Ok(parser));
                let mut bytes = Vec::new();
                while bytes.len() < 8000 && !matcher.is_stopped() {
                    let mask = matcher.compute_mask().unwrap();
                    if mask.is_allowed(eos) {
                        break;
                    }
                    let allowed = mask.to_list();
                    let printable: Vec<u32> = allowed
                        .iter()
                        .copied()
                        .filter(|t| (0x20..0x7f).contains(t))
                        .collect();
                    let pool = if printable.is_empty() {
                        &allowed
                    } else {
                        &printable
                    };
                    let token = pool[rng.random_range(0..pool.len())];
                    matcher.consume_token(token).unwrap();
                    bytes.push(token as u8);
                }
                serde_json::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
            })
            .collect()
    }

    /// The calls of `answers` that `refuses` refuses, and all calls.
    #[cfg(feature = "local")]
    fn refused_by(
        answers: &[Value],
        refuses: impl Fn(crate::contract::ToolCall) -> bool,
    ) -> (usize, usize) {
        let calls: Vec<&Value> = answers
            .iter()
            .flat_map(|a| a["tool_calls"].as_array().unwrap())
            .collect();
        let refused = calls
            .iter()
            .filter(|call| {
                refuses(crate::contract::ToolCall::new(
                    "c",
                    call["tool"].as_str().unwrap(),
                    call["args"].clone(),
                ))
            })
            .count();
        (refused, calls.len())
    }

    /// The calls of `answers` refused by `registry` (the grounded world tools), and all calls.
    #[cfg(feature = "local")]
    fn refused_calls(answers: &[Value], registry: &crate::tools::ToolRegistry) -> (usize, usize) {
        refused_by(answers, |call| {
            crate::tools::world::parse_with(registry, &call).is_err()
        })
    }

    /// A measurement as much as a test: answers drawn at random from the grammar name nothing
    /// that does not exist with grounded schemas; with the static ones, many do.
    #[cfg(feature = "local")]
    #[test]
    fn random_answers_of_the_grounded_grammar_name_only_what_exists() {
        let ground = crate::tools::world::ground::Ground::new(
            "a1",
            &[],
            "player_0",
            ["a2".to_string(), "a3".to_string()],
            [3, 7],
            crate::geometry::WorldBounds::from_rect(0.0, 0.0, 100.0, 50.0).unwrap(),
        );
        let registry = ground.registry();
        let speak = ["speak".to_string()];
        let grounded = sampled(
            &contract_schema(&grounded_tools_of(&registry), &speak, 64),
            120,
            1,
        );
        let statics = crate::tools::world::world_tools();
        let unground = sampled(
            &contract_schema(&grounded_tools_of(statics), &speak, 64),
            120,
            1,
        );
        let (bad, all) = refused_calls(&grounded, &registry);
        let (static_bad, static_all) = refused_calls(&unground, &registry);
        eprintln!(
            "grounded grammar: {bad} of {all} calls name what does not exist; \
             static grammar: {static_bad} of {static_all}"
        );
        assert!(all > 50, "{all} calls drawn");
        assert_eq!(bad, 0);
        assert!(static_bad * 4 > static_all, "{static_bad} of {static_all}");
        for answer in &grounded {
            let calls = answer["tool_calls"].as_array().unwrap();
            let spoken = calls.iter().position(|c| c["tool"] == "speak");
            assert!(spoken.is_none_or(|i| i + 1 == calls.len()), "{answer}");
        }
    }

    /// The GM's tool definitions as a local brain is given them.
    #[cfg(feature = "local")]
    fn gm_specs(tools: Vec<Value>) -> Vec<ToolSpec> {
        tools
            .into_iter()
            .map(|t| ToolSpec {
                name: t["name"].as_str().unwrap().into(),
                description: t["description"].as_str().unwrap().into(),
                parameters: t["parameters"].clone(),
            })
            .collect()
    }

    /// The calls of `answers` a campaign's checks refuse, each run alone on a fresh copy of
    /// `campaign` for its turn actor `pc_001`, and all calls.
    #[cfg(feature = "local")]
    fn refused_gm_calls(answers: &[Value], campaign: &crate::campaign::Campaign) -> (usize, usize) {
        refused_by(answers, |call| {
            let mut trial = campaign.clone();
            let outcome = trial.run_calls(&[call], Some("pc_001")).unwrap();
            outcome.tool_feedback.is_some()
        })
    }

    /// A measurement as much as a test: a GM's answers drawn at random from the grammar of its
    /// grounded tools name only actors and areas that exist, and a dying turn actor's only
    /// heal it; with the tools' static schemas, many calls are refused.
    #[cfg(feature = "local")]
    #[test]
    fn random_gm_answers_of_the_grounded_grammar_are_accepted_by_the_campaign() {
        use crate::campaign::{Campaign, GmTool, turn::gm_tools};
        let campaign = Campaign::new("camp_0001", &["pc_001".to_string(), "pc_002".to_string()]);
        let grounded = sampled(
            &contract_schema(&gm_specs(gm_tools(&campaign, "pc_001")), &[], 64),
            120,
            1,
        );
        let statics: Vec<Value> = GmTool::ALL
            .into_iter()
            .map(|t| json!({"name": t.as_str(), "description": t.description(), "parameters": t.parameters()}))
            .collect();
        let unground = sampled(&contract_schema(&gm_specs(statics), &[], 64), 120, 1);
        let (bad, all) = refused_gm_calls(&grounded, &campaign);
        let (static_bad, static_all) = refused_gm_calls(&unground, &campaign);
        eprintln!(
            "grounded GM grammar: {bad} of {all} calls refused; static grammar: {static_bad} of \
             {static_all}"
        );
        assert!(all > 50, "{all} calls drawn");
        assert_eq!(bad, 0);
        assert!(static_bad * 4 > static_all, "{static_bad} of {static_all}");

        let mut dying = campaign.clone();
        dying.actors.get_mut("pc_001").unwrap().character_state = "dying".into();
        let answers = sampled(
            &contract_schema(&gm_specs(gm_tools(&dying, "pc_001")), &[], 64),
            40,
            2,
        );
        let (bad, all) = refused_gm_calls(&answers, &dying);
        assert!(all > 10, "{all} calls drawn");
        assert_eq!(bad, 0, "a dying actor's GM only heals it");
    }

    /// A registry's tools as a local brain is given them.
    #[cfg(feature = "local")]
    fn grounded_tools_of(registry: &crate::tools::ToolRegistry) -> Vec<ToolSpec> {
        registry
            .tools()
            .map(|t| ToolSpec {
                name: t.name().into(),
                description: t.description().into(),
                parameters: t.input_schema().clone(),
            })
            .collect()
    }
}
