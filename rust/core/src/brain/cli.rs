//! The `cli` brain: a model behind a command line, run once per answer.
//!
//! A brain object `{"provider": "cli", "command": ["python3", "brain.py"]}` runs `command` (an
//! argv array, no shell) for every answer the agent needs, writes the request to its standard
//! input, closes it, and reads the answer from its standard output. `cli_backend` names a
//! [`Preset`] instead: `claude` runs Anthropic's Claude Code as `claude -p --output-format
//! json` (plus `--model M` when the brain has a `model`). Given both, `command` replaces the
//! preset's command line and the preset still says how to talk to it (so extra flags can be
//! added).
//!
//! # The two dialects
//!
//! - **JSON** (a plain `command`). Standard input is one [`CliRequest`] object: the protocol
//!   tag [`PROTOCOL`], the agent, the model options, the system prompt, the conversation and
//!   the tools in the provider-neutral shape the HTTP brains send ([`agents_llm::ModelMessage`],
//!   [`agents_llm::ToolSpec`]), and the whole [`BrainContext`] for programs that decide by
//!   rules. Standard output is the tool-call contract as one JSON object — `{"assistant_text",
//!   "dialog_type", "tool_calls": [{"id", "tool", "args", "reason"}]}` — with an optional
//!   `usage` object (`input_tokens`, `output_tokens`, `cached_input_tokens`) that counts
//!   against the token budgets. Other fields are ignored.
//! - **Claude Code** (the `claude` preset). Standard input is the request as one text prompt
//!   ([`text_prompt`]): the system prompt, the tools with their JSON Schemas, how to answer (the
//!   contract as JSON), the situation and the earlier rounds of this decision. Standard output
//!   is Claude Code's result object (`{"type": "result", "subtype": "success", "is_error":
//!   false, "result": "…", "usage": {…}}`); its `result` text is read as the HTTP brains read
//!   a model's text (the contract as JSON, possibly in a code fence, else a line to say). The
//!   JSON dialect accepts this object too.
//!
//! Reflections and importance ratings ([`Brain::reflect`], [`Brain::rate`]) ask the command for
//! one JSON object instead: the JSON dialect sends a [`CliTask`] (`task`: `reflect` or `rate`,
//! the material as one user message, the answer's JSON Schema); Claude Code is sent the
//! system prompt and the material as one text. The object is read from standard output (or
//! Claude's `result`) as the model brains read theirs.
//!
//! Either way the answer is [bounded](crate::contract::BrainReply::bounded) like a model's: its
//! text cut to the `speak` limit, its calls' ids, names and reasons to theirs.
//!
//! # Failures
//!
//! Each is a [`CliError`] with its own code in the `brain_calls` trace, and the agent reports
//! `agent_error` `brain_error` naming the program:
//! a program that is not found (`cli_not_found`; also refused at spawn), a command that exits
//! non-zero (`cli_exit_status`, quoting the end of its standard error), one that does not finish
//! within `timeout_seconds` (default 60; `cli_timeout`), output that is not the contract
//! (`cli_invalid_output`, quoting the start of it), more than [`MAX_OUTPUT_BYTES`] of output
//! (`cli_output_too_large`), and a Claude Code result that reports an error
//! (`cli_reported_error`). Commands are not retried: the runtime's backoff spaces out the next
//! decision.
//!
//! # Processes
//!
//! The command inherits the process's environment and working directory (a relative program
//! path is resolved against it). Nothing it starts outlives it (`cli/containment.rs` says how):
//! on Linux, every descendant — ones that called `setsid` or were orphaned included — is
//! killed when the command exits, when it times out, and when the decision is cancelled (a
//! message interrupts it, the agent is terminated, the runtime shuts down); on other Unix
//! systems its process group is killed on timeout and cancellation. Every run takes one of the
//! runtime's `max_concurrent_model_calls` permits while it runs. The answer is not streamed: no
//! `agent_speech_delta` comes from a command.

mod containment;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use agents_llm::{ModelMessage, ModelReply, ModelRequest, ToolSpec, Usage};

use super::llm::prompt::{self, RequestOptions};
use super::provider::{check_max_tokens, check_not_blank, check_temperature, check_timeout};
use super::{Brain, BrainContext, BrainError, BrainSettings, BrainSpec, DecideFuture};
use crate::contract::BrainReply;
use crate::error_code::ErrorCode;
use crate::memory::BrainCall;

/// The provider name the built-in factory registers.
pub const NAME: &str = "cli";

/// The `protocol` field of every [`CliRequest`]; a new major version changes it.
pub const PROTOCOL: &str = "godot-agents/cli/1";

/// Default `timeout_seconds` of a command.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;

/// The most a command may print on standard output; more is `cli_output_too_large`.
pub const MAX_OUTPUT_BYTES: usize = 4 << 20;

/// How much of standard error is kept for an error message.
const MAX_STDERR_BYTES: usize = 64 << 10;

/// How many characters of standard error or output an error message quotes.
const EXCERPT_CHARS: usize = 300;

/// How a command is fed and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// A [`CliRequest`] as JSON in; the contract object out.
    Json,
    /// A text prompt in ([`text_prompt`]); Claude Code's result object out.
    ClaudeCode,
}

/// A named command line (`cli_backend`).
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// Its name (`claude`).
    pub name: &'static str,
    /// The command it runs.
    pub command: &'static [&'static str],
    /// The flag that passes the brain's `model`, followed by the model.
    pub model_flag: &'static str,
    /// How the command is fed and read.
    pub dialect: Dialect,
    /// What the program is, for the error when it is not installed.
    pub program_is: &'static str,
}

/// The presets `cli_backend` may name.
pub const PRESETS: &[Preset] = &[Preset {
    name: super::spec::CLAUDE_PRESET,
    command: super::spec::CLAUDE_COMMAND,
    model_flag: "--model",
    dialect: Dialect::ClaudeCode,
    program_is: "Anthropic's Claude Code command line",
}];

/// The preset called `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// What a JSON-dialect command reads on standard input.
#[derive(Clone, Debug, Serialize)]
pub struct CliRequest<'a> {
    /// [`PROTOCOL`].
    pub protocol: &'static str,
    /// The deciding agent.
    pub agent_id: &'a str,
    /// The brain's `model`, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// The brain's `temperature`, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The brain's `max_tokens`, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The system prompt: who the agent is, how to answer, the world.
    pub system: String,
    /// The conversation, oldest first: the situation, then the earlier rounds of this decision
    /// (answers, tool results, failure feedback to repair).
    pub messages: &'a [ModelMessage],
    /// The tools the agent may call now.
    pub tools: &'a [ToolSpec],
    /// Everything the runtime knows for this decision, structured.
    pub context: &'a BrainContext,
}

/// What a [`CliTask`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// Insights and relationships drawn from the agent's recent memories.
    Reflect,
    /// Importance ratings of the agent's new memories.
    Rate,
}

/// Standard input of the JSON dialect when the runtime asks for one JSON object rather than a
/// decision: a reflection or a batch of importance ratings. Standard output must be that
/// object, as `answer_schema` describes it (with an optional `usage`).
#[derive(Serialize)]
pub struct CliTask<'a> {
    /// [`PROTOCOL`].
    pub protocol: &'static str,
    /// What is asked.
    pub task: Task,
    /// The agent.
    pub agent_id: &'a str,
    /// The brain's `model`, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// The brain's `temperature`, if set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens of the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// What to do and how to answer.
    pub system: String,
    /// The material: the memories, and the people they are about.
    pub messages: &'a [ModelMessage],
    /// The JSON Schema of the answer.
    pub answer_schema: Option<&'a Value>,
}

/// Why a command gave no answer. Messages name the program, never the environment.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CliError {
    /// The program does not exist.
    #[error("the program '{program}' was not found{hint}")]
    NotFound {
        /// The program.
        program: String,
        /// Where it was looked for, and what to do.
        hint: String,
    },
    /// The program could not be started.
    #[error("'{program}' could not be started: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's reason.
        message: String,
    },
    /// The command did not finish in time and was killed.
    #[error("'{program}' did not answer within {seconds} s and was killed")]
    Timeout {
        /// The program.
        program: String,
        /// The limit.
        seconds: f64,
    },
    /// The command exited unsuccessfully.
    #[error("'{program}' exited with {status}{stderr}")]
    Exit {
        /// The program.
        program: String,
        /// `status 3`, `signal 9`.
        status: String,
        /// `: ` and the end of its standard error, or nothing.
        stderr: String,
    },
    /// The command printed more than [`MAX_OUTPUT_BYTES`].
    #[error("'{program}' printed more than {MAX_OUTPUT_BYTES} bytes on standard output")]
    OutputTooLarge {
        /// The program.
        program: String,
    },
    /// The output is not an answer.
    #[error("'{program}' answered something that is not the contract: {message}")]
    InvalidOutput {
        /// The program.
        program: String,
        /// What is wrong, quoting the output.
        message: String,
    },
    /// Claude Code reported an error in its result object.
    #[error("'{program}' reported an error: {message}")]
    Reported {
        /// The program.
        program: String,
        /// Its message (the result text, or the result's subtype).
        message: String,
    },
}

impl CliError {
    /// The failure without what the command printed or the system said (for `agent_error`,
    /// which reaches every client; the log has the whole [`std::fmt::Display`] text).
    pub fn public_message(&self) -> String {
        match self {
            CliError::NotFound { program, .. } => format!("the program '{program}' was not found"),
            CliError::Spawn { program, .. } => format!("'{program}' could not be started"),
            CliError::Timeout { .. } | CliError::OutputTooLarge { .. } => self.to_string(),
            CliError::Exit {
                program, status, ..
            } => format!("'{program}' exited with {status}"),
            CliError::InvalidOutput { program, .. } => {
                format!("'{program}' answered something that is not the contract")
            }
            CliError::Reported { program, .. } => format!("'{program}' reported an error"),
        }
    }

    /// The code the `brain_calls` trace records.
    pub fn code(&self) -> ErrorCode {
        match self {
            CliError::NotFound { .. } => ErrorCode::CliNotFound,
            CliError::Spawn { .. } => ErrorCode::CliSpawnFailed,
            CliError::Timeout { .. } => ErrorCode::CliTimeout,
            CliError::Exit { .. } => ErrorCode::CliExitStatus,
            CliError::OutputTooLarge { .. } => ErrorCode::CliOutputTooLarge,
            CliError::InvalidOutput { .. } => ErrorCode::CliInvalidOutput,
            CliError::Reported { .. } => ErrorCode::CliReportedError,
        }
    }
}

/// The options of a `cli` brain object (besides `provider`, `token_budget`,
/// `trace_prompts`). Field names are exact; unknown fields are an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CliOptions {
    /// The command line (argv) to run; the request goes to its stdin as JSON and the contract
    /// comes back on its stdout.
    #[schemars(length(min = 1, max = 64))]
    pub command: Option<Vec<String>>,
    /// A preset instead of `command` (`claude`: `claude -p --output-format json`).
    pub cli_backend: Option<String>,
    /// The model, passed to the command (the JSON dialect's `model`, the `claude` preset's
    /// `--model`).
    #[schemars(length(max = 256))]
    pub model: Option<String>,
    /// Sampling temperature, 0 to 2, passed to the command (JSON dialect only).
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Most tokens per answer, passed to the command (JSON dialect only).
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u32>,
    /// Seconds one run may take (default 60).
    pub timeout_seconds: Option<f64>,
}

/// What a checked `cli` brain object runs.
#[derive(Clone, Debug, PartialEq)]
struct Plan {
    argv: Vec<String>,
    dialect: Dialect,
    /// For the not-found error.
    program_is: Option<&'static str>,
    model: Option<String>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    timeout: Duration,
    trace_prompts: bool,
}

impl Plan {
    fn read(spec: &BrainSpec, options: CliOptions) -> Result<Plan, String> {
        check_temperature(options.temperature)?;
        check_timeout(options.timeout_seconds)?;
        check_max_tokens(options.max_tokens)?;
        check_not_blank("model", options.model.as_deref())?;
        if spec.api_key.is_some() {
            return Err("brain.api_key does not apply to the cli provider (it runs \
                 brain.command; the command reads its own configuration and environment)"
                .into());
        }
        if let Some(command) = &options.command
            && command.first().is_none_or(|c| c.trim().is_empty())
        {
            return Err("brain.command must be a non-empty argv array (program first)".into());
        }
        let preset = match &options.cli_backend {
            None => None,
            Some(name) => Some(preset(name).ok_or_else(|| {
                format!(
                    "brain.cli_backend: unknown preset '{name}' (available: {})",
                    PRESETS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?),
        };
        let argv = match (&options.command, preset) {
            (Some(command), _) => command.clone(),
            (None, Some(preset)) => {
                let mut argv: Vec<String> = preset.command.iter().map(|s| s.to_string()).collect();
                if let Some(model) = &options.model {
                    argv.extend([preset.model_flag.to_string(), model.clone()]);
                }
                argv
            }
            (None, None) => {
                return Err(
                    "brain.command is required for the cli provider: the command line to run, \
                     as an argv array (or name a preset with brain.cli_backend: \"claude\")"
                        .into(),
                );
            }
        };
        let dialect = preset.map_or(Dialect::Json, |p| p.dialect);
        if dialect == Dialect::ClaudeCode {
            for (field, set) in [
                ("temperature", options.temperature.is_some()),
                ("max_tokens", options.max_tokens.is_some()),
            ] {
                if set {
                    return Err(format!(
                        "brain.{field}: the claude command line has no such option"
                    ));
                }
            }
        }
        Ok(Plan {
            argv,
            dialect,
            program_is: preset.map(|p| p.program_is),
            model: options.model,
            temperature: options.temperature,
            max_tokens: options.max_tokens,
            timeout: Duration::from_secs_f64(
                options.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
            ),
            trace_prompts: spec.trace_prompts,
        })
    }

    fn program(&self) -> &str {
        &self.argv[0]
    }

    /// The not-found error for this plan's program.
    fn not_found(&self) -> CliError {
        let program = self.program();
        let looked = if has_directory(program) {
            String::new()
        } else {
            " on PATH".to_string()
        };
        let hint = match self.program_is {
            Some(what) => {
                format!("{looked} (the preset runs {what}: install it, or set brain.command)")
            }
            None => looked,
        };
        CliError::NotFound {
            program: program.to_string(),
            hint,
        }
    }
}

/// Whether `program` names a path rather than a name to look up on `PATH`.
fn has_directory(program: &str) -> bool {
    Path::new(program).components().count() > 1
}

/// Where `program` would be run from: a path as given (relative to the working directory), or
/// the first match on `PATH`. `None` when there is no such file.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if has_directory(program) {
        let path = PathBuf::from(program);
        return is_executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        #[cfg(not(windows))]
        let candidates = [dir.join(program)];
        #[cfg(windows)]
        let candidates = [
            dir.join(program),
            dir.join(format!("{program}.exe")),
            dir.join(format!("{program}.cmd")),
            dir.join(format!("{program}.bat")),
        ];
        candidates.into_iter().find(|c| is_executable(c))
    })
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// Makes `cli` brains from brain objects ([`CliOptions`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CliProvider;

impl super::Provider for CliProvider {
    type Options = CliOptions;

    /// Refuses an unknown preset, a missing command, options the preset's program lacks.
    fn validate(&self, spec: &BrainSpec, options: &CliOptions) -> Result<(), String> {
        Plan::read(spec, options.clone()).map(drop)
    }

    /// Refuses a program that is not found.
    fn check(
        &self,
        spec: &BrainSpec,
        options: &CliOptions,
        _api_key: Option<&agents_llm::client::Secret>,
    ) -> Result<(), BrainError> {
        let plan = Plan::read(spec, options.clone()).map_err(BrainError::Invalid)?;
        if find_program(plan.program()).is_none() {
            return Err(BrainError::Config {
                code: ErrorCode::CliNotFound,
                message: format!("brain.command: {}", plan.not_found()),
            });
        }
        Ok(())
    }

    fn build(
        &self,
        spec: &BrainSpec,
        options: CliOptions,
        settings: &BrainSettings,
    ) -> Result<Box<dyn Brain>, BrainError> {
        let plan = Plan::read(spec, options).map_err(BrainError::Invalid)?;
        settings.gate.agent_budget.set_limit(spec.token_budget);
        Ok(Box::new(CliBrain {
            plan,
            gate: settings.gate.clone(),
            last_call: None,
        }))
    }
}

/// A brain that runs a command for every answer.
pub struct CliBrain {
    plan: Plan,
    gate: super::gate::ModelGate,
    last_call: Option<BrainCall>,
}

impl CliBrain {
    /// The options of a request built for this brain (never streamed).
    fn options(&self) -> RequestOptions {
        RequestOptions {
            model: self.plan.model.clone().unwrap_or_default(),
            temperature: self.plan.temperature,
            max_tokens: self.plan.max_tokens,
            stream: false,
        }
    }

    /// Runs the command once on `input` (within the runtime's permits and this brain's
    /// budget: [`super::gate::ModelGate::traced`]) and reads its output with `read`.
    async fn exchange<T: Serialize>(
        &mut self,
        input: String,
        read: impl FnOnce(&[u8]) -> Result<(T, Usage), CliError>,
    ) -> Result<T, BrainError> {
        let plan = &self.plan;
        let calls = &self.gate.calls;
        let run = async {
            let output = {
                let _permit = calls
                    .acquire()
                    .await
                    .map_err(|_| BrainError::Backend("the runtime is shutting down".into()))?;
                run(plan, input.as_bytes()).await
            };
            output
                .and_then(|stdout| read(&stdout))
                .map_err(BrainError::Cli)
        };
        let label = super::gate::CallLabel {
            provider: NAME,
            model: plan.model.clone(),
            trace_prompts: plan.trace_prompts,
        };
        self.gate
            .traced(
                label,
                || input.clone(),
                run,
                |e: &BrainError| match e {
                    BrainError::Cli(e) => e.code().to_string(),
                    other => other.agent_error_code().as_str().to_string(),
                },
                &mut self.last_call,
            )
            .await?
    }

    /// Asks the command for one JSON object (`request` holds what to ask and its schema):
    /// the JSON dialect's [`CliTask`], or its text for Claude Code. Returns the object's text.
    async fn ask_json(
        &mut self,
        task: Task,
        agent_id: &str,
        request: &ModelRequest,
    ) -> Result<String, BrainError> {
        let input = match self.plan.dialect {
            Dialect::Json => serde_json::to_string(&CliTask {
                protocol: PROTOCOL,
                task,
                agent_id,
                model: self.plan.model.as_deref(),
                temperature: self.plan.temperature,
                max_tokens: request.max_tokens,
                system: system_text(request),
                messages: &request.messages,
                answer_schema: request.json_schema.as_ref(),
            })
            .map_err(|e| BrainError::Backend(format!("cannot write the request: {e}")))?,
            Dialect::ClaudeCode => {
                let mut text = system_text(request);
                for message in &request.messages {
                    if let ModelMessage::User { text: user } = message {
                        text.push_str("\n\n");
                        text.push_str(user);
                    }
                }
                text
            }
        };
        let program = self.plan.program().to_string();
        self.exchange(input, |stdout| read_json_answer(&program, stdout))
            .await
    }
}

impl Brain for CliBrain {
    fn name(&self) -> &str {
        NAME
    }

    fn decide<'a>(&'a mut self, context: &'a BrainContext) -> DecideFuture<'a> {
        Box::pin(async move {
            let plan = &self.plan;
            let request = prompt::request(
                context,
                &RequestOptions {
                    model: plan.model.clone().unwrap_or_default(),
                    temperature: plan.temperature,
                    max_tokens: plan.max_tokens,
                    stream: false,
                },
            );
            let input = match plan.dialect {
                Dialect::Json => serde_json::to_string(&json_request(context, plan, &request))
                    .map_err(|e| BrainError::Backend(format!("cannot write the request: {e}")))?,
                Dialect::ClaudeCode => text_prompt(&request),
            };
            let program = plan.program().to_string();
            self.exchange(input, |stdout| read_answer(&program, stdout))
                .await
        })
    }

    /// A reflection: the command is asked for one JSON object (the JSON dialect's `task`
    /// `reflect`), read as the model brains read theirs; an unusable answer is this call's
    /// failure and the runtime draws the reflection by rule.
    fn reflect<'a>(
        &'a mut self,
        request: &'a super::reflection::ReflectionRequest,
    ) -> super::reflection::ReflectFuture<'a> {
        Box::pin(async move {
            let asked = super::llm::reflect::request(request, &self.options());
            let text = self
                .ask_json(Task::Reflect, &request.agent_id, &asked)
                .await?;
            super::llm::reflect::answer_text(&text)
                .map(Some)
                .map_err(BrainError::InvalidReply)
        })
    }

    /// A batch of importance ratings, asked as a reflection is (`task` `rate`).
    fn rate<'a>(
        &'a mut self,
        request: &'a super::rating::RatingRequest,
    ) -> super::rating::RateFuture<'a> {
        Box::pin(async move {
            let asked = super::llm::reflect::rating_request(request, &self.options());
            let text = self.ask_json(Task::Rate, &request.agent_id, &asked).await?;
            super::llm::reflect::ratings_text(&text)
                .map(Some)
                .map_err(BrainError::InvalidReply)
        })
    }

    fn take_call_report(&mut self) -> Option<BrainCall> {
        self.last_call.take()
    }
}

fn json_request<'a>(
    context: &'a BrainContext,
    plan: &'a Plan,
    request: &'a ModelRequest,
) -> CliRequest<'a> {
    CliRequest {
        protocol: PROTOCOL,
        agent_id: &context.agent_id,
        model: plan.model.as_deref(),
        temperature: plan.temperature,
        max_tokens: plan.max_tokens,
        system: system_text(request),
        messages: &request.messages,
        tools: &request.tools,
        context,
    }
}

pub(crate) fn system_text(request: &ModelRequest) -> String {
    request
        .system
        .iter()
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// How a text-prompt command is asked to answer.
pub const ANSWER_FORMAT: &str = "\
Answer with one JSON object and nothing else, in this shape:
{\"assistant_text\": \"what you say (may be empty when you call tools)\", \"dialog_type\": \
\"reply\", \"tool_calls\": [{\"id\": \"call_1\", \"tool\": \"<one of the tools above>\", \
\"args\": {\"<argument>\": \"<value>\"}, \"reason\": \"why\"}]}
`tool_calls` may be empty. Use each tool only with arguments its schema allows.";

/// A request as one text prompt (the Claude Code dialect), laid out so that what every agent is
/// given comes first ([`agents_llm::SystemBlock::shared`]): the shared system blocks (the
/// rules), the tools — each `enum` in their schemas lifted out ([`lift_enums`]), since the
/// values a tool takes (whom an agent can address, which task it can complete) differ between
/// agents and decisions —, how to answer; then the agent's own system blocks (who it is), the
/// values the tools take now, and the conversation — the situation, and each earlier round of
/// this decision as the answer given and the results (or refusals) of its calls.
pub fn text_prompt(request: &ModelRequest) -> String {
    text_prompt_with(request, ANSWER_FORMAT)
}

/// [`text_prompt`] with another text saying how to answer.
pub(crate) fn text_prompt_with(request: &ModelRequest, answer_format: &str) -> String {
    use std::fmt::Write;
    let blocks = |shared: bool| {
        request
            .system
            .iter()
            .filter(|b| b.shared == shared)
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let mut out = blocks(true);
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str("Tools (name: what it does; its arguments as a JSON Schema):");
    let mut values = Vec::new();
    for tool in &request.tools {
        let mut parameters = tool.parameters.clone();
        lift_enums(&mut parameters, &tool.name, &mut values);
        let _ = write!(
            out,
            "\n- {}: {} {}",
            tool.name,
            tool.description.trim(),
            parameters
        );
    }
    out.push_str("\n\n");
    out.push_str(answer_format);
    let own = blocks(false);
    if !own.is_empty() {
        out.push_str("\n\n");
        out.push_str(&own);
    }
    if !values.is_empty() {
        out.push_str("\n\nValues the tools take now:");
        for (path, listed) in &values {
            let _ = write!(out, "\n- {path}: {listed}");
        }
    }
    for message in &request.messages {
        out.push_str("\n\n");
        match message {
            ModelMessage::User { text } => out.push_str(text),
            ModelMessage::Assistant { text, tool_calls } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        let args = serde_json::from_str::<Value>(&c.arguments)
                            .unwrap_or_else(|_| Value::String(c.arguments.clone()));
                        json!({"id": c.id, "tool": c.name, "args": args})
                    })
                    .collect();
                let _ = write!(
                    out,
                    "You answered: {}",
                    json!({"assistant_text": text, "tool_calls": calls})
                );
            }
            ModelMessage::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let what = if *is_error { "refused" } else { "result" };
                let _ = write!(out, "Call {call_id} {what}: {content}");
            }
        }
    }
    out
}

/// Takes every `enum` out of `schema` (a tool's parameters, the tool named `path`): each becomes
/// the text `"listed below as <path>"`, and `values` gets `(path, the values as JSON, comma
/// separated)`. A property's path is its tool's and its own names joined by dots
/// (`speak.recipients`); an array's items and a schema's alternatives keep their parent's.
pub(crate) fn lift_enums(schema: &mut Value, path: &str, values: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Array(listed)) = object.get("enum") {
                let listed = listed
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                values.push((path.to_string(), listed));
                object.insert(
                    "enum".into(),
                    Value::String(format!("listed below as {path}")),
                );
            }
            for (key, value) in object.iter_mut() {
                if key == "properties"
                    && let Value::Object(properties) = value
                {
                    for (name, property) in properties.iter_mut() {
                        lift_enums(property, &format!("{path}.{name}"), values);
                    }
                } else if key != "enum" {
                    lift_enums(value, path, values);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                lift_enums(item, path, values);
            }
        }
        _ => {}
    }
}

/// What a command printed: Claude Code's result object (its `result` text and usage), or
/// another JSON object (its optional `usage` taken out) with the text it was read from.
enum Printed {
    Claude(String, Usage),
    Object(serde_json::Map<String, Value>, Usage, String),
}

/// Reads a command's standard output as one JSON object; an empty output, one that is not
/// JSON or not an object, and a Claude Code error result are the call's failure.
fn read_printed(program: &str, stdout: &[u8]) -> Result<Printed, CliError> {
    let invalid = |message: String| CliError::InvalidOutput {
        program: program.to_string(),
        message,
    };
    let text = String::from_utf8_lossy(stdout);
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid("it printed nothing on standard output".into()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        invalid(format!(
            "standard output is not JSON ({e}); it begins {}",
            excerpt_start(text)
        ))
    })?;
    let Value::Object(mut object) = value else {
        return Err(invalid(format!(
            "standard output is {}, expected a JSON object",
            crate::json_kind::json_kind(&value)
        )));
    };
    if object.get("type").and_then(Value::as_str) == Some("result") {
        let (result, usage) = claude_text(program, &object)?;
        return Ok(Printed::Claude(result, usage));
    }
    let usage = object
        .remove("usage")
        .map(|u| read_usage(&u, "cached_input_tokens"))
        .unwrap_or_default();
    Ok(Printed::Object(object, usage, text.to_string()))
}

/// Reads a command's standard output as an answer and the tokens it reports.
pub fn read_answer(program: &str, stdout: &[u8]) -> Result<(BrainReply, Usage), CliError> {
    let invalid = |message: String| CliError::InvalidOutput {
        program: program.to_string(),
        message,
    };
    let (object, usage, text) = match read_printed(program, stdout)? {
        Printed::Claude(result, usage) => {
            let reply = super::llm::reply::to_contract(&ModelReply {
                text: result,
                ..ModelReply::default()
            });
            return Ok((reply, usage));
        }
        Printed::Object(object, usage, text) => (object, usage, text),
    };
    if !(object.contains_key("assistant_text") || object.contains_key("tool_calls")) {
        return Err(invalid(format!(
            "the object has neither `assistant_text` nor `tool_calls`; it begins {}",
            excerpt_start(&text)
        )));
    }
    let reply: BrainReply =
        serde_json::from_value(Value::Object(object)).map_err(|e| invalid(e.to_string()))?;
    Ok((reply.bounded(), usage))
}

/// The `result` text of Claude Code's result object and its usage; an error result is the
/// call's failure.
fn claude_text(
    program: &str,
    object: &serde_json::Map<String, Value>,
) -> Result<(String, Usage), CliError> {
    let subtype = object.get("subtype").and_then(Value::as_str).unwrap_or("");
    let result = object.get("result").and_then(Value::as_str);
    let is_error = object.get("is_error").and_then(Value::as_bool) == Some(true)
        || !matches!(subtype, "" | "success");
    if is_error {
        let message = result
            .filter(|r| !r.trim().is_empty())
            .map(excerpt_start)
            .unwrap_or_else(|| format!("a result of subtype '{subtype}'"));
        return Err(CliError::Reported {
            program: program.to_string(),
            message,
        });
    }
    let Some(result) = result else {
        return Err(CliError::InvalidOutput {
            program: program.to_string(),
            message: "the result object has no `result` text".into(),
        });
    };
    // Claude's usage counts cache reads and writes apart from `input_tokens`.
    let usage = object
        .get("usage")
        .map(|u| {
            let mut usage = read_usage(u, "cache_read_input_tokens");
            let created = u
                .get("cache_creation_input_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            usage.input_tokens += usage.cached_input_tokens + created;
            usage
        })
        .unwrap_or_default();
    Ok((result.to_string(), usage))
}

/// Reads a command's standard output as the one JSON object a [`CliTask`] asked for (its
/// optional `usage` taken out), or as Claude Code's result object whose `result` holds it;
/// returns the object's text (checked against what was asked by the caller).
pub fn read_json_answer(program: &str, stdout: &[u8]) -> Result<(String, Usage), CliError> {
    Ok(match read_printed(program, stdout)? {
        Printed::Claude(result, usage) => (result, usage),
        Printed::Object(object, usage, _) => (Value::Object(object).to_string(), usage),
    })
}

fn read_usage(usage: &Value, cached_field: &str) -> Usage {
    let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: count("input_tokens"),
        output_tokens: count("output_tokens"),
        cached_input_tokens: count(cached_field),
    }
}

/// The first characters of `text`, quoted.
fn excerpt_start(text: &str) -> String {
    let cut: String = text.chars().take(EXCERPT_CHARS).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{:?}{more}", cut)
}

/// The last characters of `text`, where programs print their final complaint.
fn excerpt_end(text: &str) -> String {
    let chars: Vec<char> = text.trim().chars().collect();
    let skip = chars.len().saturating_sub(EXCERPT_CHARS);
    let cut: String = chars[skip..].iter().collect();
    if skip > 0 { format!("…{cut}") } else { cut }
}

/// Runs the plan's command with `input` on standard input; its standard output on success.
async fn run(plan: &Plan, input: &[u8]) -> Result<Vec<u8>, CliError> {
    let program = plan.program().to_string();
    let mut command = tokio::process::Command::new(&program);
    command
        .args(&plan.argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    containment::contain(&mut command);
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => plan.not_found(),
        _ => CliError::Spawn {
            program: program.clone(),
            message: e.to_string(),
        },
    })?;
    let mut contained = containment::Contained::new(child.id());
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(CliError::Spawn {
            program,
            message: "its standard streams could not be opened".into(),
        });
    };
    let write = async move {
        // A command may answer without reading its input: a closed pipe is not an error.
        let _ = stdin.write_all(input).await;
        let _ = stdin.shutdown().await;
    };
    let work = async {
        let ((), out, err, status) = tokio::join!(
            write,
            read_capped(stdout, MAX_OUTPUT_BYTES),
            read_capped(stderr, MAX_STDERR_BYTES),
            child.wait()
        );
        (out, err, status)
    };
    let Ok((out, err, status)) = tokio::time::timeout(plan.timeout, work).await else {
        // Ended with everything it started before the timeout is reported.
        contained.stop();
        // Off Linux `child` is the command itself (on Linux, the supervisor: never SIGKILL it).
        #[cfg(not(target_os = "linux"))]
        let _ = child.start_kill();
        let _ = tokio::time::timeout(containment::STOP_WAIT, child.wait()).await;
        return Err(CliError::Timeout {
            program,
            seconds: plan.timeout.as_secs_f64(),
        });
    };
    let status = status.map_err(|e| CliError::Spawn {
        program: program.clone(),
        message: e.to_string(),
    })?;
    contained.finished();
    let (stdout, over) = out.map_err(|e| CliError::Spawn {
        program: program.clone(),
        message: format!("reading its output failed: {e}"),
    })?;
    if !status.success() {
        let stderr = err.map(|(e, _)| e).unwrap_or_default();
        let stderr = excerpt_end(&String::from_utf8_lossy(&stderr));
        return Err(CliError::Exit {
            program,
            status: exit_status(&status),
            stderr: if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            },
        });
    }
    if over {
        return Err(CliError::OutputTooLarge { program });
    }
    Ok(stdout)
}

fn exit_status(status: &std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    status.to_string()
}

/// Reads `reader` to its end, keeping at most `cap` bytes (reading on, so the writer never
/// blocks); the flag says whether more came.
async fn read_capped(
    mut reader: impl AsyncRead + Unpin,
    cap: usize,
) -> std::io::Result<(Vec<u8>, bool)> {
    let mut kept = Vec::new();
    let mut over = false;
    let mut buf = [0u8; 16 << 10];
    loop {
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Ok((kept, over));
        }
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        over |= n > room;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(options: Value) -> Result<Plan, String> {
        let spec: BrainSpec = serde_json::from_value(options).map_err(|e| e.to_string())?;
        Plan::read(&spec, spec.options_as()?)
    }

    #[test]
    fn presets_and_commands() {
        let claude = plan(json!({"provider": "cli", "cli_backend": "claude"})).unwrap();
        assert_eq!(claude.argv, ["claude", "-p", "--output-format", "json"]);
        assert_eq!(claude.dialect, Dialect::ClaudeCode);
        let with_model =
            plan(json!({"provider": "cli", "cli_backend": "claude", "model": "sonnet"})).unwrap();
        assert_eq!(
            with_model.argv,
            [
                "claude",
                "-p",
                "--output-format",
                "json",
                "--model",
                "sonnet"
            ]
        );
        // A command replaces the preset's command line; the preset's dialect stays.
        let own = plan(json!({"provider": "cli", "cli_backend": "claude",
                              "command": ["/opt/claude", "-p", "--output-format", "json"]}))
        .unwrap();
        assert_eq!(own.argv[0], "/opt/claude");
        assert_eq!(own.dialect, Dialect::ClaudeCode);
        let json_cli = plan(
            json!({"provider": "cli", "command": ["python3", "brain.py"],
                                   "timeout_seconds": 2.5, "temperature": 0.3}),
        )
        .unwrap();
        assert_eq!(json_cli.dialect, Dialect::Json);
        assert_eq!(json_cli.timeout, Duration::from_millis(2500));
        assert_eq!(json_cli.temperature, Some(0.3));
    }

    #[test]
    fn misconfigurations_are_named() {
        for (options, says) in [
            (json!({"provider": "cli"}), "brain.command is required"),
            (
                json!({"provider": "cli", "cli_backend": "gpt"}),
                "brain.cli_backend: unknown preset 'gpt' (available: claude)",
            ),
            (
                json!({"provider": "cli", "command": ["x"], "base_url": "http://a"}),
                "brain.base_url: unknown field `base_url`, expected one of `command`",
            ),
            (
                json!({"provider": "cli", "command": ["x"], "headers": {"A": "b"}}),
                "brain.headers: unknown field `headers`",
            ),
            (
                json!({"provider": "cli", "cli_backend": "claude", "temperature": 0.5}),
                "brain.temperature: the claude command line has no such option",
            ),
        ] {
            let e = plan(options.clone()).unwrap_err();
            assert!(e.contains(says), "{options}: {e}");
        }
    }

    #[test]
    fn answers_are_read_from_either_dialect() {
        let (reply, usage) = read_answer(
            "m",
            br#"{"assistant_text": "Hi", "dialog_type": "reply",
                 "tool_calls": [{"id": "c1", "tool": "move", "args": {"x": 1, "y": 2}}],
                 "usage": {"input_tokens": 30, "output_tokens": 5}, "debug": "ignored"}"#,
        )
        .unwrap();
        assert_eq!(reply.assistant_text, "Hi");
        assert_eq!(reply.tool_calls[0].args, json!({"x": 1, "y": 2}));
        assert_eq!(usage.input_tokens, 30);
        let envelope = json!({"type": "result", "subtype": "success", "is_error": false,
            "result": "```json\n{\"assistant_text\": \"On my way\", \"tool_calls\": []}\n```",
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 100,
                      "cache_creation_input_tokens": 20, "output_tokens": 9}});
        let (reply, usage) = read_answer("claude", envelope.to_string().as_bytes()).unwrap();
        assert_eq!(reply.assistant_text, "On my way");
        assert_eq!(usage.input_tokens, 123);
        assert_eq!(usage.cached_input_tokens, 100);
        assert_eq!(usage.output_tokens, 9);
        // Plain text in a result is a line to say.
        let plain = json!({"type": "result", "subtype": "success", "result": "Hello there."});
        let (reply, _) = read_answer("claude", plain.to_string().as_bytes()).unwrap();
        assert_eq!(reply.assistant_text, "Hello there.");
    }

    #[test]
    fn bad_output_is_named() {
        for (stdout, code, says) in [
            ("", "cli_invalid_output", "printed nothing"),
            ("not json {", "cli_invalid_output", "not JSON"),
            (
                "[1, 2]",
                "cli_invalid_output",
                "is an array, expected a JSON object",
            ),
            (
                "{\"weather\": \"rain\"}",
                "cli_invalid_output",
                "neither `assistant_text`",
            ),
            (
                "{\"tool_calls\": \"move\"}",
                "cli_invalid_output",
                "invalid type",
            ),
            (
                "{\"type\": \"result\", \"subtype\": \"error_max_turns\", \"is_error\": true}",
                "cli_reported_error",
                "subtype 'error_max_turns'",
            ),
            (
                "{\"type\": \"result\", \"is_error\": true, \"result\": \"Invalid API key\"}",
                "cli_reported_error",
                "Invalid API key",
            ),
        ] {
            let e = read_answer("m", stdout.as_bytes()).unwrap_err();
            assert_eq!(e.code().as_str(), code, "{stdout}");
            assert!(e.to_string().contains(says), "{stdout}: {e}");
        }
    }

    #[test]
    fn the_text_prompt_holds_tools_format_and_rounds() {
        let request = ModelRequest {
            system: vec![
                agents_llm::SystemBlock {
                    text: "The rules.".into(),
                    cache: false,
                    shared: true,
                },
                agents_llm::SystemBlock {
                    text: "You are Mira.".into(),
                    cache: true,
                    shared: false,
                },
            ],
            tools: vec![
                ToolSpec {
                    name: "move".into(),
                    description: "Walk somewhere.".into(),
                    parameters: json!({"type": "object"}),
                },
                ToolSpec {
                    name: "speak".into(),
                    description: "Say it.".into(),
                    parameters: json!({"type": "object", "properties": {
                        "to": {"type": "array", "items": {"enum": ["player_0", "agent_002"]}},
                        "mood": {"anyOf": [{"enum": ["calm"]}, {"type": "null"}]}}}),
                },
            ],
            messages: vec![
                ModelMessage::User {
                    text: "Just now, player_0 to you: \"hi\"".into(),
                },
                ModelMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![agents_llm::ModelToolCall {
                        id: "c1".into(),
                        name: "move".into(),
                        arguments: "{\"x\": 1".into(),
                    }],
                },
                ModelMessage::ToolResult {
                    call_id: "c1".into(),
                    content: "{\"reason\": \"invalid_json\"}".into(),
                    is_error: true,
                },
            ],
            ..ModelRequest::default()
        };
        let text = text_prompt(&request);
        // What every agent is given first, then who this one is, the values its tools take
        // now, and the conversation.
        let order = [
            "The rules.",
            "- move: Walk somewhere. {\"type\":\"object\"}",
            "- speak: Say it.",
            "Answer with one JSON object",
            "You are Mira.",
            "Values the tools take now:",
            "player_0 to you",
            // The call's fields in either order (JSON objects may keep insertion order).
            "You answered: {\"assistant_text\":\"\",\"tool_calls\":[{\"",
            "Call c1 refused: {\"reason\": \"invalid_json\"}",
        ];
        let mut at = 0;
        for part in order {
            let found = text[at..]
                .find(part)
                .unwrap_or_else(|| panic!("{part} in {text}"));
            at += found + part.len();
        }
        // Each enum is lifted out of its tool (in whichever order the schema keeps its
        // properties) and its values listed after who the agent is.
        let (tools, own) = text.split_once("You are Mira.").unwrap();
        for lifted in [
            "\"enum\":\"listed below as speak.to\"",
            "\"enum\":\"listed below as speak.mood\"",
        ] {
            assert!(tools.contains(lifted), "{lifted} in {text}");
        }
        assert!(!tools.contains("agent_002"), "{text}");
        for values in [
            "\n- speak.to: \"player_0\", \"agent_002\"",
            "\n- speak.mood: \"calm\"",
        ] {
            assert!(own.contains(values), "{values} in {text}");
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_commands_exit_is_reported_as_it_was() {
        let run_sh = |script: &str| {
            let plan = plan(json!({"provider": "cli", "command": ["sh", "-c", script]})).unwrap();
            async move { run(&plan, b"{}").await }
        };
        assert_eq!(run_sh("cat > /dev/null; echo out").await.unwrap(), b"out\n");
        let status = |e: CliError| match e {
            CliError::Exit { status, stderr, .. } => format!("{status}{stderr}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            status(run_sh("echo broken >&2; exit 3").await.unwrap_err()),
            "status 3: broken"
        );
        assert_eq!(
            status(run_sh("kill -TERM $$").await.unwrap_err()),
            "signal 15"
        );
        let missing = plan(json!({"provider": "cli", "command": ["./no/such/brain"]})).unwrap();
        assert_eq!(
            run(&missing, b"").await.unwrap_err().code(),
            ErrorCode::CliNotFound
        );
    }

    #[test]
    fn excerpts_are_bounded() {
        let long = "x".repeat(1000);
        assert!(excerpt_start(&long).ends_with('…'));
        assert!(excerpt_start(&long).chars().count() < 310);
        assert!(excerpt_end(&format!("{long}END")).ends_with("END"));
        assert_eq!(excerpt_end("  short \n"), "short");
    }
}
