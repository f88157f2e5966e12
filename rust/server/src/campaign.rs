//! `agents-server campaign`: campaigns from the command line (`docs/campaigns.md`).
//!
//! - `campaign new [--party pc_001,pc_002] FILE` writes a fresh campaign (the starter map, the
//!   party in `area_001`); an existing file is refused unless `--force`.
//! - `campaign apply FILE [--actor ID]` reads a JSON array of tool calls on stdin, runs them,
//!   saves the file when a call was applied, and prints `{"applied_actions", "tool_feedback"}`.
//! - `campaign turn FILE [--actor ID] [--brain PROFILE] "user input"` runs one GM turn (the
//!   offline `scripted` GM unless a brain is named), saves the file when a call was applied,
//!   appends the entry to `turn_log.jsonl` beside the file, and prints it.
//!
//! Exit codes: 0 done; 1 a call failed (`apply`) or the GM's brain did not answer (`turn`);
//! otherwise the failure's code's ([`Failure::exit_code`]): 2 bad input — an unreadable or
//! invalid campaign file, input that is not a JSON array of calls, a turn actor outside the
//! party, an unknown brain — with the file left untouched; 1 a file that cannot be saved.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use agents_core::brain::BrainChoice;
use agents_core::campaign::turn::{GmIdentity, TurnError, TurnRequest, parse_calls, take_turn};
use agents_core::campaign::{Campaign, CampaignError, file};
use agents_core::error_code::{EXIT_FAILED, ErrorCode};
use agents_core::runtime::{Runtime, RuntimeOptions};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::brains::ScratchDb;
use crate::failure::{self, Failure};

/// The campaign subcommands.
#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Write a fresh campaign: the starter map (area_001 "Starting Area" → area_002 "Side
    /// Room"), the party in area_001 with 10 hp, the default allowlist.
    New(NewArgs),
    /// Run a JSON array of tool calls from stdin on the campaign, for the turn actor; save it
    /// when a call was applied; print {"applied_actions": [...], "tool_feedback": ...}.
    Apply(ApplyArgs),
    /// Run one GM turn on the campaign and print the turn-log entry.
    Turn(TurnArgs),
}

/// Arguments of `campaign new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The party's ids, comma-separated; the first is the active actor.
    #[arg(
        long,
        value_name = "IDS",
        value_delimiter = ',',
        default_value = "pc_001"
    )]
    pub party: Vec<String>,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
    /// The campaign file to write.
    pub file: PathBuf,
}

/// Arguments of `campaign apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The campaign file.
    pub file: PathBuf,
    /// The turn actor (a party member; default: the active actor).
    #[arg(long, value_name = "ID")]
    pub actor: Option<String>,
}

/// Arguments of `campaign turn`.
#[derive(Debug, Args)]
pub struct TurnArgs {
    /// The campaign file.
    pub file: PathBuf,
    /// What the player says.
    pub input: String,
    /// The turn actor (a party member; default: the active actor).
    #[arg(long, value_name = "ID")]
    pub actor: Option<String>,
    /// The GM's brain: a profile of `--brains FILE`, or a brain name (`scripted`, the default).
    #[arg(long, value_name = "PROFILE", default_value = "scripted")]
    pub brain: String,
    /// A JSON file of named brains (see docs/brains.md).
    #[arg(long, value_name = "FILE")]
    pub brains: Option<PathBuf>,
    /// The GM's name in its instructions.
    #[arg(long, value_name = "NAME", default_value = "Game Master")]
    pub gm_name: String,
    /// Seconds to wait for the GM's answer (repairs included).
    #[arg(long, value_name = "S", default_value_t = 120.0)]
    pub timeout_seconds: f64,
}

/// A campaign file that cannot be used: `invalid_path` or `invalid_campaign` (exit 2).
fn unusable(error: CampaignError) -> Failure {
    Failure::new(error.file_code(), error.to_string())
}

/// Runs a campaign command; prints to `out`. Returns the exit code, the message on failure.
pub fn run(
    command: CampaignCommand,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
) -> Result<u8, Failure> {
    match command {
        CampaignCommand::New(args) => new(args, out),
        CampaignCommand::Apply(args) => apply(args, stdin, out),
        CampaignCommand::Turn(args) => turn(args, out),
    }
}

fn load(path: &Path) -> Result<Campaign, Failure> {
    let loaded = file::load(path).map_err(unusable)?;
    for warning in &loaded.warnings {
        eprintln!("warning: {}: {warning}", path.display());
    }
    Ok(loaded.campaign)
}

fn print(out: &mut dyn Write, value: &Value) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    writeln!(out, "{text}").map_err(|e| {
        Failure::new(
            ErrorCode::FileError,
            format!("cannot write the output: {e}"),
        )
    })
}

fn new(args: NewArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    if args.file.exists() && !args.force {
        return Err(Failure::argument(format!(
            "{} exists already (pass --force to replace it)",
            args.file.display()
        )));
    }
    let party: Vec<String> = args
        .party
        .iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    let dir = match args.file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        Failure::new(
            ErrorCode::InvalidPath,
            format!("cannot create {}: {e}", dir.display()),
        )
    })?;
    let campaign = Campaign::new(file::next_id(&dir), &party);
    file::save(&args.file, &campaign).map_err(unusable)?;
    print(
        out,
        &json!({"id": campaign.id, "file": args.file.display().to_string(),
                       "party": campaign.selected.party_character_ids}),
    )?;
    Ok(0)
}

fn apply(args: ApplyArgs, stdin: &mut dyn Read, out: &mut dyn Write) -> Result<u8, Failure> {
    let mut campaign = load(&args.file)?;
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .map_err(|e| Failure::argument(format!("cannot read the calls from stdin: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::new(ErrorCode::InvalidJson, format!("stdin is not JSON: {e}")))?;
    let calls = parse_calls(&value).map_err(Failure::argument)?;
    let outcome = campaign
        .run_calls(&calls, args.actor.as_deref())
        .map_err(failure::with(ErrorCode::InvalidArgument))?;
    if !outcome.applied_actions.is_empty() {
        file::save(&args.file, &campaign).map_err(failure::with(ErrorCode::SaveFailed))?;
    }
    print(out, &outcome.to_json())?;
    Ok(if outcome.tool_feedback.is_some() {
        EXIT_FAILED
    } else {
        0
    })
}

fn turn(args: TurnArgs, out: &mut dyn Write) -> Result<u8, Failure> {
    let mut campaign = load(&args.file)?;
    // Checked before any brain starts, so a bad actor leaves everything as it was.
    campaign
        .turn_actor(args.actor.as_deref())
        .map_err(failure::with(ErrorCode::InvalidArgument))?;
    let log = file::turn_log_path(&args.file);
    let number = file::turn_count(&log) + 1;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::new(
                ErrorCode::StartupFailed,
                format!("cannot start the tokio runtime: {e}"),
            )
        })?;
    let db = ScratchDb::new();
    let mut options = RuntimeOptions::with_database(&db.0);
    options.idle_think_seconds = 3600.0;
    if let Some(path) = &args.brains {
        crate::brains::apply(
            crate::brains::load(path).map_err(Failure::argument)?,
            &mut options,
        );
    }
    let runtime = Runtime::start_on(rt.handle().clone(), options).map_err(|e| {
        Failure::new(
            e.code().code(),
            format!("cannot start the agent runtime: {e}"),
        )
    })?;
    let seed = number;
    let outcome = runtime
        .build_brain(&BrainChoice::named(&args.brain), seed)
        .map_err(|e| Failure::new(e.code().code(), format!("--brain {}: {e}", args.brain)))
        .and_then(|mut brain| {
            let gm = GmIdentity {
                agent_id: "gm".into(),
                name: args.gm_name.clone(),
                prompt: String::new(),
            };
            let request = TurnRequest {
                number,
                user_input: &args.input,
                actor: args.actor.as_deref(),
            };
            let timeout = Duration::from_secs_f64(args.timeout_seconds.max(0.001));
            rt.block_on(async {
                tokio::time::timeout(
                    timeout,
                    take_turn(&mut campaign, brain.as_mut(), &gm, &request),
                )
                .await
                .map_err(|_| {
                    Failure::new(
                        ErrorCode::BrainTimeout,
                        format!("the GM did not answer within {} s", args.timeout_seconds),
                    )
                })?
                .map_err(|e| {
                    let code = match &e {
                        TurnError::Brain(_) => ErrorCode::TurnFailed,
                        TurnError::Campaign(_) => ErrorCode::InvalidArgument,
                    };
                    Failure::new(code, e.to_string())
                })
            })
        });
    runtime.shutdown(Duration::from_secs(2));
    drop(runtime);
    rt.shutdown_timeout(Duration::from_secs(1));
    let entry = outcome?;
    if entry.changed() {
        file::save(&args.file, &campaign).map_err(failure::with(ErrorCode::SaveFailed))?;
    }
    file::append_turn(&log, &entry).map_err(failure::with(ErrorCode::FileError))?;
    print(out, &serde_json::to_value(&entry).unwrap_or(Value::Null))?;
    Ok(0)
}
