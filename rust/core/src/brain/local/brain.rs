//! The `local` brain: one agent's decisions, reflections and ratings as answers of a model
//! loaded in this process ([`agents_local`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agents_llm::{ModelReply, ModelRequest, StreamEvent, Usage};
use agents_local::{
    ChatMessage, Downloads, Event, Job, LocalError, Model, ModelSettings, Models, Sampling, Source,
};
use serde_json::{Value, json};

use super::speech::SpeechStream;
use super::{
    DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT_SECONDS, LocalOptions, NAME, acting_schema, contract_schema,
};
use crate::agent_error::AgentErrorCode;
use crate::brain::llm::prompt::{self, RequestOptions};
use crate::brain::llm::{reflect, reply};
use crate::brain::rating::{RateFuture, RatingRequest};
use crate::brain::reflection::{ReflectFuture, ReflectionRequest};
use crate::brain::{
    Brain, BrainContext, BrainError, BrainEvent, BrainEvents, BrainSettings, BrainSpec,
    DecideFuture,
};
use crate::memory::BrainCall;

/// A brain that asks a model loaded in this process.
pub struct LocalBrain {
    /// Its sequence's key in the model (one per brain, so one per agent).
    key: String,
    /// Whom its agent thinks for ([`BrainSettings::party`]).
    party: String,
    /// How long one answer may take once it has a sequence.
    timeout: std::time::Duration,
    /// The model file, for the trace.
    label: String,
    model_settings: ModelSettings,
    /// Where the file is downloaded from, when it is (into `model_settings.path`).
    source: Option<Source>,
    keep: bool,
    sampling: Sampling,
    max_tokens: u32,
    trace_prompts: bool,
    gate: crate::brain::gate::ModelGate,
    events: BrainEvents,
    model: Option<Arc<Model>>,
    last_call: Option<BrainCall>,
}

impl LocalBrain {
    /// The brain of one agent (the model is loaded at its first decision).
    pub(super) fn new(spec: &BrainSpec, options: LocalOptions, settings: &BrainSettings) -> Self {
        static BRAINS: AtomicU64 = AtomicU64::new(0);
        settings.gate.agent_budget.set_limit(spec.token_budget);
        let source = options.source();
        LocalBrain {
            key: format!("brain-{}", BRAINS.fetch_add(1, Ordering::Relaxed)),
            party: settings.party.clone(),
            timeout: std::time::Duration::from_secs_f64(
                options.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
            ),
            label: match &source {
                Some(source) => source.display_url(),
                None => options.model.clone().unwrap_or_default(),
            },
            model_settings: options.model_settings(),
            source,
            keep: options.keep_loaded.unwrap_or(false),
            sampling: Sampling {
                temperature: options.temperature.unwrap_or(0.7) as f32,
                top_p: options.top_p.unwrap_or(0.95) as f32,
                seed: options.seed.unwrap_or(settings.seed),
            },
            max_tokens: options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            trace_prompts: spec.trace_prompts,
            gate: settings.gate.clone(),
            events: settings.events.clone(),
            model: None,
            last_call: None,
        }
    }
}

impl Drop for LocalBrain {
    fn drop(&mut self) {
        if let Some(model) = &self.model {
            model.forget(&self.key);
        }
    }
}

/// A local failure as the brain's error, with the agent error code the engine names.
fn failure(e: LocalError) -> BrainError {
    let code = AgentErrorCode::ALL
        .into_iter()
        .find(|code| code.as_str() == e.code())
        .unwrap_or(AgentErrorCode::BrainError);
    BrainError::Model {
        code,
        message: e.to_string(),
    }
}

impl LocalBrain {
    /// The model, loaded on first use (off the runtime's threads: loading blocks), and
    /// downloaded first when it comes from a URL, or waited for while the game copies it out
    /// of its pack (reporting the progress).
    async fn model(&mut self) -> Result<Arc<Model>, BrainError> {
        if let Some(model) = &self.model {
            return Ok(model.clone());
        }
        if let Some(source) = &self.source {
            let cache = self
                .model_settings
                .path
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default();
            let (events, url) = (&self.events, source.display_url());
            Downloads::global()
                .fetch(source, &cache, |progress| {
                    events.report_event(BrainEvent::ModelDownload {
                        url: &url,
                        received: progress.received,
                        total: progress.total,
                    })
                })
                .await
                .map_err(failure)?;
        } else {
            // A file the game is still writing (a model copied out of its pack).
            let events = &self.events;
            let copied = Downloads::global()
                .wait(&self.model_settings.path, |from, progress| {
                    events.report_event(BrainEvent::ModelDownload {
                        url: from,
                        received: progress.received,
                        total: progress.total,
                    })
                })
                .await;
            if let Some(copied) = copied {
                copied.map_err(failure)?;
            }
        }
        let (settings, keep) = (self.model_settings.clone(), self.keep);
        let model = tokio::task::spawn_blocking(move || Models::global().load(&settings, keep))
            .await
            .map_err(|e| BrainError::Backend(format!("loading the model stopped: {e}")))?
            .map_err(failure)?;
        self.model = Some(model.clone());
        Ok(model)
    }

    /// One answer constrained to `schema`, through the budgets and into the trace; text of
    /// `assistant_text` streams when `stream` is set.
    async fn call(
        &mut self,
        request: &ModelRequest,
        schema: Value,
        stream: bool,
    ) -> Result<ModelReply, BrainError> {
        let model = self.model().await?;
        let job = Job {
            key: self.key.clone(),
            party: self.party.clone(),
            messages: vec![ChatMessage::new("user", text_prompt(request))],
            schema: Some(schema),
            sampling: self.sampling.clone(),
            max_tokens: request.max_tokens.unwrap_or(self.max_tokens),
            timeout: Some(self.timeout),
        };
        let events = &self.events;
        let run = async {
            let mut answers = model.run(job);
            let mut speech = SpeechStream::default();
            loop {
                match answers.recv().await {
                    Some(Event::Text(text)) => {
                        if stream && let Some(delta) = speech.feed(&text) {
                            events.report(&StreamEvent::TextDelta(delta));
                        }
                    }
                    Some(Event::Done(outcome)) => {
                        let usage = Usage {
                            input_tokens: u64::from(outcome.prompt_tokens),
                            output_tokens: u64::from(outcome.output_tokens),
                            cached_input_tokens: u64::from(outcome.cached_tokens),
                        };
                        let reply = ModelReply {
                            text: outcome.text,
                            tool_calls: Vec::new(),
                            usage,
                            stop_reason: Some(if outcome.complete { "end" } else { CUT }.into()),
                        };
                        break Ok((reply, usage));
                    }
                    Some(Event::Failed(e)) => break Err(e),
                    None => break Err(LocalError::Stopped),
                }
            }
        };
        let label = crate::brain::gate::CallLabel {
            provider: NAME,
            model: Some(self.label.clone()),
            trace_prompts: self.trace_prompts,
        };
        self.gate
            .traced(
                label,
                || text_prompt(request),
                run,
                |e: &LocalError| e.code().to_string(),
                &mut self.last_call,
            )
            .await?
            .map_err(failure)
    }

    fn options(&self) -> RequestOptions {
        RequestOptions {
            model: self.label.clone(),
            temperature: Some(f64::from(self.sampling.temperature)),
            max_tokens: Some(self.max_tokens),
            stream: true,
        }
    }
}

impl Brain for LocalBrain {
    fn name(&self) -> &str {
        NAME
    }

    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        Box::pin(async move {
            let request = prompt::request(context, &self.options());
            let max_tokens = request.max_tokens.unwrap_or(self.max_tokens);
            let schema = if context.due_tools.is_empty() {
                contract_schema(&request.tools, &context.final_tools, max_tokens)
            } else {
                let callable: Vec<String> = context
                    .due_tools
                    .iter()
                    .chain(&context.read_only_tools)
                    .cloned()
                    .collect();
                acting_schema(&request.tools, &context.final_tools, max_tokens, &callable)
            };
            let mut reply = self.call(&request, schema, true).await?;
            if reply.stop_reason.as_deref() == Some(CUT) {
                // Closed where it stopped; never taken for plain text.
                reply.text = super::salvage::close(&reply.text).unwrap_or_else(|| SILENT.into());
            }
            Ok(reply::to_contract(&reply))
        })
    }

    fn take_call_report(&mut self) -> Option<BrainCall> {
        self.last_call.take()
    }

    fn reflect<'a>(&'a mut self, request: &'a ReflectionRequest) -> ReflectFuture<'a> {
        Box::pin(async move {
            let model_request = reflect::request(request, &self.options());
            let schema = model_request.json_schema.clone().unwrap_or(json!({}));
            let reply = self.call(&model_request, schema, false).await?;
            reflect::answer(&reply)
                .map(Some)
                .map_err(BrainError::InvalidReply)
        })
    }

    fn rate<'a>(&'a mut self, request: &'a RatingRequest) -> RateFuture<'a> {
        Box::pin(async move {
            let model_request = reflect::rating_request(request, &self.options());
            let schema = model_request.json_schema.clone().unwrap_or(json!({}));
            let reply = self.call(&model_request, schema, false).await?;
            reflect::ratings(&reply)
                .map(Some)
                .map_err(BrainError::InvalidReply)
        })
    }
}

/// The stop reason of an answer cut at `max_tokens`.
const CUT: &str = "max_tokens";

/// An answer that said nothing (the runtime asks for a repair).
const SILENT: &str = r#"{"assistant_text":"","dialog_type":"","tool_calls":[]}"#;

/// How a local model is asked to answer. The grammar holds it to the shape, so nothing here is
/// an example to copy (a small model copies an example's placeholder words).
const ANSWER_FORMAT: &str = "\
Answer with one JSON object: assistant_text is what you say now, in your own words (empty when \
you only act); dialog_type is one word for it (reply, question, statement); tool_calls are the \
tools you use now, each with the tool's name and its args.";

/// The request as one text: what every agent is given first (the rules, the tools, how to
/// answer: shared between agents, and cached), then the agent's own part and the conversation
/// ([`crate::brain::cli::text_prompt_with`]).
fn text_prompt(request: &ModelRequest) -> String {
    if request.tools.is_empty() && request.json_schema.is_some() {
        // A reflection or a rating: its own instructions, then its material.
        let mut out = crate::brain::cli::system_text(request);
        for message in &request.messages {
            if let agents_llm::ModelMessage::User { text } = message {
                out.push_str("\n\n");
                out.push_str(text);
            }
        }
        return out;
    }
    crate::brain::cli::text_prompt_with(request, ANSWER_FORMAT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_local_failure_reports_its_own_code() {
        let path = || std::path::PathBuf::from("m.gguf");
        for (e, code) in [
            (LocalError::NotFound(path()), "brain_model_not_found"),
            (LocalError::LoadFailed(path()), "brain_model_invalid"),
            (
                LocalError::TooLarge {
                    path: path(),
                    size_mb: 9,
                    available_mb: 1,
                },
                "brain_model_too_large",
            ),
            (
                LocalError::ContextTooSmall {
                    prompt: 900,
                    answer: 200,
                    context: 1024,
                },
                "brain_context_exceeded",
            ),
            (LocalError::Grammar("x".into()), "brain_grammar_failed"),
            (LocalError::Template("x".into()), "brain_template_failed"),
            (
                LocalError::Download {
                    url: "u".into(),
                    message: "m".into(),
                },
                "brain_model_download_failed",
            ),
            (
                LocalError::Copy {
                    from: "res://m.gguf".into(),
                    message: "m".into(),
                },
                "brain_model_download_failed",
            ),
            (
                LocalError::ChecksumMismatch {
                    url: "u".into(),
                    expected: "a".into(),
                    got: "b".into(),
                },
                "brain_model_checksum_mismatch",
            ),
            (LocalError::Decode("x".into()), "brain_error"),
        ] {
            let failed = failure(e);
            assert_eq!(failed.agent_error_code().as_str(), code, "{failed}");
        }
    }
}
