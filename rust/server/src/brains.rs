//! Brain profiles for the server: `--brains FILE` read into the runtime's options, and
//! `agents-server brain-check`, one real decision against a configured model.

use std::path::Path;
use std::time::Duration;

use agents_core::brain::{BrainChoice, BrainProfiles, BrainSpec};
use agents_core::bus::{BusMessage, Filter, Received};
use agents_core::error_code::ErrorCode;
use agents_core::memory::BrainCallRow;
use agents_core::runtime::{AgentConfig, Runtime, RuntimeError, RuntimeOptions};

use clap::Args;

use crate::args::{LogLevel, positive_seconds};

/// Reads a profiles file; errors name the file.
pub fn load(path: &Path) -> Result<BrainProfiles, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the brains file {}: {e}", path.display()))?;
    BrainProfiles::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Puts the profiles (and their default) into the runtime's options.
pub fn apply(profiles: BrainProfiles, options: &mut RuntimeOptions) {
    if let Some(default) = profiles.default {
        options.default_brain = default;
    }
    options.brain_profiles = profiles.profiles;
}

/// Checks every profile and the default brain against a started runtime, as a spawn would.
/// A default that cannot be used is an error (every agent without a brain would be refused);
/// another profile that cannot be used is a warning naming it (a key may be set later).
pub fn check_all(runtime: &Runtime, options: &RuntimeOptions) -> Result<(), String> {
    runtime
        .check_brain(&BrainChoice::named(&options.default_brain))
        .map_err(|e| format!("the default brain '{}': {e}", options.default_brain))?;
    for name in options.brain_profiles.keys() {
        if let Err(e) = runtime.check_brain(&BrainChoice::named(name)) {
            eprintln!("warning: brain profile '{name}' cannot be used yet: {e}");
        }
    }
    Ok(())
}

/// What to check and how to look at it afterwards.
struct Target {
    choice: BrainChoice,
    /// The brain object, when there is one (a profile or the one-off flags).
    spec: Option<BrainSpec>,
}

fn target(args: &BrainCheckArgs, profiles: &BrainProfiles) -> Result<Target, String> {
    if let Some(provider) = &args.provider {
        let mut spec = BrainSpec::provider(provider);
        for (field, value) in [
            ("model", &args.model),
            ("base_url", &args.base_url),
            ("api_key_env", &args.api_key_env),
        ] {
            if let Some(value) = value {
                spec = spec.with(field, value.as_str());
            }
        }
        if !args.command.is_empty() {
            spec = spec.with("command", args.command.clone());
        }
        return Ok(Target {
            choice: BrainChoice::from(spec.clone()),
            spec: Some(spec),
        });
    }
    let name = args
        .profile
        .clone()
        .or_else(|| profiles.default.clone())
        .ok_or_else(|| {
            "name the PROFILE to check (or give --brains FILE with a `default`), or describe a \
             one-off brain with --provider and --model"
                .to_string()
        })?;
    Ok(Target {
        spec: profiles.profiles.get(&name).cloned(),
        choice: BrainChoice::Named(name),
    })
}

/// A throw-away database path (removed afterwards, with SQLite's side files).
pub(crate) struct ScratchDb(pub(crate) std::path::PathBuf);

impl ScratchDb {
    /// A database path in the temporary directory, removed (with its WAL files) on drop.
    pub(crate) fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        ScratchDb(std::env::temp_dir().join(format!(
            "agents-brain-check-{}-{nanos}.db",
            std::process::id()
        )))
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut path = self.0.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Runs `brain-check`: `Ok(true)` when the model answered with a valid decision.
pub fn check(args: BrainCheckArgs) -> Result<bool, String> {
    let profiles = match &args.brains {
        Some(path) => load(path)?,
        None => BrainProfiles::default(),
    };
    let target = target(&args, &profiles)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    let db = ScratchDb::new();
    let mut options = RuntimeOptions::with_database(&db.0);
    options.idle_think_seconds = 3600.0;
    options.speaking_seconds = 0.01;
    apply(profiles, &mut options);
    let runtime = Runtime::start_on(rt.handle().clone(), options)
        .map_err(|e| format!("cannot start the agent runtime: {e}"))?;
    let outcome = rt.block_on(decide(&runtime, &args, &target));
    runtime.shutdown(Duration::from_secs(2));
    drop(runtime);
    rt.shutdown_timeout(Duration::from_secs(1));
    outcome
}

/// What one decision showed.
#[derive(Default)]
struct Seen {
    streamed: String,
    said: Vec<String>,
    error: Option<(String, String)>,
    finished: bool,
}

async fn decide(runtime: &Runtime, args: &BrainCheckArgs, target: &Target) -> Result<bool, String> {
    let label = match runtime.check_brain(&target.choice) {
        Ok(label) => label,
        Err(e) => {
            println!("brain: {}", target.choice);
            println!("refused before any call: {e}");
            println!("check: {}", diagnosis_of_config(refusal_code(&e)));
            return Ok(false);
        }
    };
    println!("brain: {label}");
    let mut sub = runtime.subscribe(Filter::all());
    let config = AgentConfig {
        name: "Tester".into(),
        role: "a villager in a small test town".into(),
        prompt: "You are checking that your model works. Answer the player briefly, in \
                 character, and act through your tools."
            .into(),
        brain: Some(target.choice.clone()),
        ..AgentConfig::default()
    };
    let id = runtime
        .spawn(config)
        .map_err(|e| format!("cannot spawn the test agent: {e}"))?;
    runtime
        .send_message(&id, &args.message)
        .map_err(|e| format!("cannot send the message: {e}"))?;
    println!("player: {}", args.message);
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(args.timeout_seconds);
    let mut seen = Seen::default();
    let mut thought = false;
    while !seen.finished {
        let received = match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(received)) => received,
            Ok(None) => break,
            Err(_) => {
                println!(
                    "no decision within {} s (raise --timeout-seconds, or the brain's \
                     timeout_seconds for a slow local model)",
                    args.timeout_seconds
                );
                break;
            }
        };
        let Received::Message(envelope) = received else {
            continue;
        };
        match &envelope.message {
            BusMessage::AgentSpeechDelta {
                agent_id, delta, ..
            } if *agent_id == id => {
                seen.streamed.push_str(delta);
            }
            BusMessage::AgentToolCall {
                agent_id,
                tool,
                call_id,
            } if *agent_id == id => {
                println!("tool call: {tool} ({call_id})");
            }
            BusMessage::AgentMoved { agent_id, from, to } if *agent_id == id => {
                println!("moved: {from} → {to}");
            }
            BusMessage::AgentSpoke {
                agent_id, content, ..
            } if *agent_id == id => {
                println!("said: {content}");
                seen.said.push(content.clone());
            }
            BusMessage::AgentError {
                agent_id: Some(agent_id),
                code,
                message,
            } if *agent_id == id => {
                seen.error = Some((code.as_str().to_string(), message.clone()));
            }
            BusMessage::AgentStateChanged {
                agent_id,
                new_state,
                ..
            } if *agent_id == id => match new_state.as_str() {
                "thinking" => thought = true,
                "idle" if thought => seen.finished = true,
                _ => {}
            },
            _ => {}
        }
    }
    if !seen.streamed.is_empty() {
        println!("streamed text: {}", seen.streamed);
    }
    let _ = runtime.flush();
    let calls = runtime.agent_trace(&id, 100).unwrap_or_default();
    for call in &calls {
        print_call(call);
    }
    let (input, output): (u64, u64) = calls.iter().fold((0, 0), |(i, o), c| {
        (i + c.call.input_tokens, o + c.call.output_tokens)
    });
    if !calls.is_empty() {
        println!(
            "total: {} call(s), {input} input + {output} output tokens",
            calls.len()
        );
    }
    if let Some((code, message)) = &seen.error {
        println!("failed: {code}: {message}");
        let detail = calls
            .iter()
            .rev()
            .find_map(|c| c.call.error_code.clone())
            .unwrap_or_else(|| code.clone());
        println!("check: {}", diagnosis(&detail, target.spec.as_ref()));
        return Ok(false);
    }
    if !seen.finished {
        return Ok(false);
    }
    println!("ok: the model answered with a valid decision");
    Ok(true)
}

fn print_call(row: &BrainCallRow) {
    let call = &row.call;
    println!(
        "model call: {} {} — {} ms, {} input tokens ({} cached), {} output tokens, {}{}{}",
        call.provider,
        call.model.as_deref().unwrap_or("-"),
        call.latency_ms,
        call.input_tokens,
        call.cached_tokens,
        call.output_tokens,
        call.outcome.as_str(),
        if call.repairs > 0 {
            format!(" after {} repair(s)", call.repairs)
        } else {
            String::new()
        },
        call.error_code
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default(),
    );
}

/// The code of a brain refused before any call: its brain's own, the most precise.
fn refusal_code(error: &RuntimeError) -> ErrorCode {
    match error {
        RuntimeError::Brain(brain) => brain.code(),
        other => other.code().code(),
    }
}

/// What to look at for a brain refused before any call, by its code.
fn diagnosis_of_config(code: ErrorCode) -> String {
    match code {
        ErrorCode::BrainKeyMissing => "set the variable named above to your API key (or point \
             api_key_env at the one that holds it); a local server on 127.0.0.1 needs none"
            .into(),
        ErrorCode::BrainModelMissing => {
            "give the model's name (`--model`, or `model` in the profile)".into()
        }
        ErrorCode::UnknownBrain | ErrorCode::UnknownProvider => format!(
            "use a provider of {}, or a profile of --brains FILE",
            agents_core::brain::BrainRegistry::with_builtins()
                .names()
                .join(", ")
        ),
        ErrorCode::CliNotFound => "install the command, or give its full path in `command`".into(),
        ErrorCode::InvalidConfig => {
            "fix the field named above (docs/brains.md lists every option)".into()
        }
        other => other.hint().into(),
    }
}

/// What to look at for a failure, by the most specific code known (a model call's trace code,
/// else the agent's error code).
fn diagnosis(code: &str, spec: Option<&BrainSpec>) -> String {
    let option = |field: &str, otherwise: &str| {
        spec.and_then(|s| s.options.get(field))
            .and_then(serde_json::Value::as_str)
            .unwrap_or(otherwise)
            .to_string()
    };
    let url = option("base_url", "the provider's default URL");
    let key = option("api_key_env", "the provider's key variable");
    let model = option("model", "the model");
    // The path the provider's calls go to after the base URL (`/chat/completions`).
    let path = spec
        .and_then(|s| agents_core::brain::llm::api(&s.provider))
        .map_or("the provider's path", |api| api.path());
    let Some(code) = ErrorCode::from_name(code) else {
        return "see the message above; docs/brains.md has the failure list".into();
    };
    match code {
        ErrorCode::BrainUnreachable => format!(
            "nothing answered at {url}: is the server running, and is base_url the part before \
             {path}?"
        ),
        ErrorCode::BrainTimeout => {
            "the model did not finish in time: raise timeout_seconds (a local model's first \
             answer loads it)"
                .into()
        }
        ErrorCode::BrainAuthFailed => format!("the key was refused: check {key}"),
        ErrorCode::BrainModelNotFound => format!(
            "the server does not know {model}: list its models (Ollama: `ollama list`; OpenAI: \
             GET /v1/models) and use one of their names"
        ),
        ErrorCode::BrainRateLimited => "the provider is rate-limiting: wait, or lower \
             max_concurrent_model_calls"
            .into(),
        ErrorCode::BrainServerError | ErrorCode::BrainProviderError => {
            "the provider failed (5xx or an error in the stream): try again later".into()
        }
        ErrorCode::BrainBadRequest => "the server refused the request: it may not support tool \
             calling for this model (pick a model with tool support) or an option such as \
             temperature"
            .into(),
        ErrorCode::BrainInvalidResponse => "the server's answer is not the provider's wire \
             format: check that the provider matches the server (openai for OpenAI-compatible \
             servers, ollama for Ollama's own API)"
            .into(),
        ErrorCode::BrainInvalidReply => "the model answered, but not the contract even after \
             the repairs: use a model that follows tool-calling instructions"
            .into(),
        ErrorCode::BudgetExhausted => "the token budget is spent: raise token_budget".into(),
        ErrorCode::CliNotFound | ErrorCode::CliSpawnFailed => "the command could not be \
             started: install it, or give its full path as the first element of `command`"
            .into(),
        ErrorCode::CliExitStatus => "the command failed: run it by hand with the request on \
             its standard input (docs/brains.md, the cli provider) and read its standard error"
            .into(),
        ErrorCode::CliTimeout => "the command did not finish in time: raise timeout_seconds".into(),
        ErrorCode::CliInvalidOutput | ErrorCode::CliOutputTooLarge => "the command's standard \
             output must be one JSON object: the contract {assistant_text, dialog_type, \
             tool_calls}, or Claude Code's result object"
            .into(),
        ErrorCode::CliReportedError => "the command line reported an error (for claude: is it \
             logged in? run `claude -p hello` by hand)"
            .into(),
        ErrorCode::BrainError => {
            "see the message above; docs/brains.md has the failure list".into()
        }
        other => other.hint().into(),
    }
}

/// Arguments of `agents-server brain-check`.
#[derive(Debug, Args)]
pub struct BrainCheckArgs {
    /// The profile (or brain name) to check; default: the file's `default`.
    pub profile: Option<String>,
    /// A JSON file of named brains: `{"default": NAME, "profiles": {NAME: {brain object}}}`
    /// (see docs/brains.md).
    #[arg(long, value_name = "FILE")]
    pub brains: Option<std::path::PathBuf>,
    /// A one-off brain instead of a profile: a provider's name (`openai`, `ollama`, `cli`, …;
    /// an unknown one is refused with the list).
    #[arg(long, value_name = "NAME", conflicts_with = "profile")]
    pub provider: Option<String>,
    /// The model of a one-off brain.
    #[arg(long, value_name = "MODEL", requires = "provider")]
    pub model: Option<String>,
    /// The base URL of a one-off brain (`http://127.0.0.1:11434/v1` for Ollama's
    /// OpenAI-compatible API with `openai`; `ollama` calls `http://127.0.0.1:11434` unless
    /// told otherwise).
    #[arg(long, value_name = "URL", requires = "provider")]
    pub base_url: Option<String>,
    /// The environment variable holding a one-off brain's key.
    #[arg(long, value_name = "VAR", requires = "provider")]
    pub api_key_env: Option<String>,
    /// The command line of a one-off `cli` brain, after `--`:
    /// `brain-check --provider cli -- python3 my_model.py --fast`.
    #[arg(last = true, value_name = "COMMAND", requires = "provider")]
    pub command: Vec<String>,
    /// What the player says to the agent.
    #[arg(
        long,
        value_name = "TEXT",
        default_value = "Hello! Who are you, and what will you do next?"
    )]
    pub message: String,
    /// Seconds to wait for the whole decision (repairs and retries included).
    #[arg(long, value_name = "S", default_value_t = 120.0, value_parser = positive_seconds)]
    pub timeout_seconds: f64,
    /// How much is logged to stderr.
    #[arg(long, value_enum, default_value_t = LogLevel::Warn)]
    pub log_level: LogLevel,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_has_advice_naming_what_to_check() {
        let spec = BrainSpec::provider("openai")
            .with("model", "llama9")
            .with("base_url", "http://127.0.0.1:1/v1")
            .with("api_key_env", "MY_KEY");
        assert!(diagnosis("brain_unreachable", Some(&spec)).contains("http://127.0.0.1:1/v1"));
        assert!(diagnosis("brain_unreachable", Some(&spec)).contains("before /chat/completions?"));
        let ollama = BrainSpec::provider("ollama").with("model", "llama3.2");
        assert!(diagnosis("brain_unreachable", Some(&ollama)).contains("before /api/chat?"));
        assert!(diagnosis_of_config(ErrorCode::UnknownProvider).contains("ollama, openai"));
        assert!(diagnosis("brain_auth_failed", Some(&spec)).contains("MY_KEY"));
        assert!(diagnosis("brain_model_not_found", Some(&spec)).contains("llama9"));
    }

    /// The code a brain check is refused with, from a runtime that checks it as a spawn would.
    fn refused(spec: BrainSpec) -> ErrorCode {
        let db = ScratchDb::new();
        let runtime = Runtime::start(RuntimeOptions::with_database(&db.0)).unwrap();
        let error = runtime.check_brain(&BrainChoice::from(spec)).unwrap_err();
        runtime.shutdown(Duration::from_secs(1));
        refusal_code(&error)
    }

    #[test]
    fn a_refused_brain_is_diagnosed_by_its_code() {
        let no_key = BrainSpec::provider("openai")
            .with("model", "gpt-4o-mini")
            .with("api_key_env", "AGENTS_BRAIN_CHECK_TEST_UNSET_KEY");
        let code = refused(no_key);
        assert_eq!(code, ErrorCode::BrainKeyMissing);
        assert!(diagnosis_of_config(code).contains("API key"));

        let no_model = BrainSpec::provider("openai").with("base_url", "http://127.0.0.1:1/v1");
        let code = refused(no_model);
        assert_eq!(code, ErrorCode::BrainModelMissing);
        assert!(diagnosis_of_config(code).contains("--model"));

        let code = refused(BrainSpec::provider("gpt-7"));
        assert_eq!(code, ErrorCode::UnknownProvider);
        assert!(diagnosis_of_config(code).contains("a provider of "));

        let no_program = BrainSpec::provider("cli").with(
            "command",
            vec!["agents-brain-check-test-no-such-program".to_string()],
        );
        let code = refused(no_program);
        assert_eq!(code, ErrorCode::CliNotFound);
        assert!(diagnosis_of_config(code).contains("install the command"));

        // Every other code falls back on the code's own hint.
        assert_eq!(
            diagnosis_of_config(ErrorCode::ShutDown),
            ErrorCode::ShutDown.hint()
        );
    }

    #[test]
    fn every_code_a_check_can_meet_has_advice() {
        for code in ErrorCode::ALL {
            assert!(!diagnosis(code.as_str(), None).is_empty(), "{code}");
            assert!(!diagnosis_of_config(code).is_empty(), "{code}");
        }
        assert!(diagnosis("no_such_code", None).contains("docs/brains.md"));
    }
}
