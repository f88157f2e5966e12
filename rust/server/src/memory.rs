//! `agents-server memory`: an agent's memory stream from a database (a SQLite file or a
//! PostgreSQL URL), for the operator: list a page, search it, export all of it, plant a fact.
//!
//! - `memory list --db DB --agent ID [--before MEMORY_ID] [--limit N]` prints a page:
//!   `{"memories": [...], "next": ID|null}` (the newest `N` below `--before`, oldest first;
//!   `next` is the `--before` of the older page).
//! - `memory search --db DB --agent ID [--limit N] QUERY` prints the memories that share a word
//!   with `QUERY`, best first: `[{"memory": {...}, "relevance": R}, ...]`.
//! - `memory export --db DB --agent ID` prints every memory of the agent as JSON lines, oldest
//!   first.
//! - `memory remember --db DB --agent ID [--kind fact] [--importance 5] [--about ID]
//!   [--game-time S] TEXT` stores one memory (a fact the game knows, say) and prints
//!   `{"agent_id", "remembered": true}` once it is committed. The agent keeps at most its
//!   stored config's `memory.max_memories` (else the default 5,000), as a runtime keeps it.
//! - `memory forget --db DB --agent ID --id MEMORY_ID` forgets one memory of the agent and
//!   prints `{"agent_id", "forgotten": MEMORY_ID}` once it is committed (a memory the agent does
//!   not have is left alone: exit code 2).
//!
//! `list`, `search` and `export` only read: they open the database read-only, never create,
//! migrate or mark it (a missing path is an error, an older schema asks for a command that
//! writes). `remember` and `forget` open it to write (creating and upgrading it). Both refuse
//! a database that is not this project's, untouched.
//!
//! Exit codes: 0 done; otherwise the failure's code's ([`Failure::exit_code`]): 2 bad input
//! (an agent the database does not know, a memory that cannot be stored, an unknown kind); 1 the
//! database failed.

use std::io::Write;

use agents_core::error_code::ErrorCode;
use agents_core::memory::{Location, Memory, MemoryError, MemoryKind, NewMemory};
use agents_core::mind::MemorySettings;
use agents_core::runtime::RuntimeError;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::failure::{self, Failure};

/// Most memories one page holds.
const MAX_PAGE: usize = 500;

/// The memory subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Print a page of an agent's memories (newest page first, oldest first within it).
    List(ListArgs),
    /// Print the agent's memories that share a word with a query, best match first.
    Search(SearchArgs),
    /// Print every memory of the agent as JSON lines, oldest first.
    Export(AgentArgs),
    /// Store one memory for the agent.
    Remember(RememberArgs),
    /// Forget one memory of the agent.
    Forget(ForgetArgs),
}

/// Arguments of `memory forget`.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    #[command(flatten)]
    pub target: AgentArgs,
    /// The memory (its `id`).
    #[arg(long, value_name = "MEMORY_ID")]
    pub id: i64,
}

/// The database and the agent.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The database: a SQLite file or a `postgres://` URL.
    #[arg(long, value_name = "DB")]
    pub db: String,
    /// The agent (`agent_001`).
    #[arg(long, value_name = "ID")]
    pub agent: String,
}

/// Arguments of `memory list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub target: AgentArgs,
    /// Only memories with an id below this one (the `next` of the page before).
    #[arg(long, value_name = "MEMORY_ID")]
    pub before: Option<i64>,
    /// Memories in the page (1 to 500).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=500))]
    pub limit: u16,
}

/// Arguments of `memory search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    #[command(flatten)]
    pub target: AgentArgs,
    /// Most memories printed (1 to 500).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=500))]
    pub limit: u16,
    /// What to look for (its plain words).
    pub query: String,
}

/// Arguments of `memory remember`.
#[derive(Debug, Args)]
pub struct RememberArgs {
    #[command(flatten)]
    pub target: AgentArgs,
    /// What the memory is of: heard, said, did, observed, fact, task, event, insight, summary,
    /// relationship.
    #[arg(long, default_value = "fact")]
    pub kind: String,
    /// How much it matters, 1 to 10.
    #[arg(long, default_value_t = 5)]
    pub importance: u8,
    /// Whom it is about (an agent id, the player's id).
    #[arg(long, value_name = "ID")]
    pub about: Option<String>,
    /// When it happened, in seconds of game time.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub game_time: f64,
    /// An older memory of the agent this one replaces (a belief that turned out wrong); may
    /// be given more than once.
    #[arg(long, value_name = "ID")]
    pub supersedes: Vec<i64>,
    /// What to remember.
    pub text: String,
}

/// A failure of a database's: its code is the runtime's for it (`invalid_message` for a
/// memory that cannot be stored, exit 2; `database_error`, exit 1).
fn failed(error: MemoryError) -> Failure {
    let message = error.to_string();
    Failure::new(RuntimeError::from(error).code().code(), message)
}

/// Runs `command`, writing its output to `out`.
pub fn run(command: MemoryCommand, out: &mut dyn Write) -> Result<u8, Failure> {
    let target = match &command {
        MemoryCommand::List(args) => &args.target,
        MemoryCommand::Search(args) => &args.target,
        MemoryCommand::Export(args) => args,
        MemoryCommand::Remember(args) => &args.target,
        MemoryCommand::Forget(args) => &args.target,
    };
    let location = Location::of(&target.db);
    let opened = match &command {
        MemoryCommand::Remember(_) | MemoryCommand::Forget(_) => Memory::open_at(location),
        MemoryCommand::List(_) | MemoryCommand::Search(_) | MemoryCommand::Export(_) => {
            Memory::open_read_only(location)
        }
    };
    let memory = opened.map_err(failed)?;
    let Some(record) = memory.agent(&target.agent).map_err(failed)? else {
        return Err(Failure::new(
            ErrorCode::UnknownAgent,
            format!("the database has no agent '{}'", target.agent),
        ));
    };
    // The agent's own ceiling (its stored config's), else the default one.
    let max_memories = MemorySettings::of_stored(&record.config)
        .unwrap_or_default()
        .max_memories;
    let agent = target.agent.clone();
    let write = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| {
            Failure::new(
                ErrorCode::FileError,
                format!("cannot write the output: {e}"),
            )
        })
    };
    match command {
        MemoryCommand::List(args) => {
            let page = memory
                .memories_page(&agent, args.before, usize::from(args.limit))
                .map_err(failed)?;
            let value = json!({"memories": page.rows, "next": page.next});
            write(
                out,
                serde_json::to_string_pretty(&value).unwrap_or_default(),
            )?;
        }
        MemoryCommand::Search(args) => {
            let found = memory
                .search_memories(&agent, &args.query, usize::from(args.limit))
                .map_err(failed)?;
            write(
                out,
                serde_json::to_string_pretty(&found).unwrap_or_default(),
            )?;
        }
        MemoryCommand::Export(_) => {
            // Pages newest first; the file is written oldest first.
            let mut pages = Vec::new();
            let mut before = None;
            loop {
                let page = memory
                    .memories_page(&agent, before, MAX_PAGE)
                    .map_err(failed)?;
                before = page.next;
                pages.push(page.rows);
                if before.is_none() {
                    break;
                }
            }
            for row in pages.into_iter().rev().flatten() {
                write(out, serde_json::to_string(&row).unwrap_or_default())?;
            }
        }
        MemoryCommand::Remember(args) => {
            let kind: MemoryKind = args
                .kind
                .parse()
                .map_err(failure::with(ErrorCode::InvalidArgument))?;
            let (id, seq) = memory
                .remember(
                    &agent,
                    NewMemory {
                        kind,
                        text: args.text,
                        importance: args.importance,
                        about: args.about,
                        sources: Vec::new(),
                        game_time: args.game_time,
                        supersedes: args.supersedes,
                    },
                    max_memories,
                )
                .map_err(failed)?;
            memory.wait_committed(seq).map_err(failed)?;
            write(
                out,
                json!({"agent_id": agent, "remembered": true, "id": id}).to_string(),
            )?;
        }
        MemoryCommand::Forget(args) => {
            let has = |memory: &Memory| -> Result<bool, Failure> {
                Ok(memory
                    .memories_page(&agent, Some(args.id.saturating_add(1)), 1)
                    .map_err(failed)?
                    .rows
                    .first()
                    .is_some_and(|m| m.id == args.id))
            };
            if !has(&memory)? {
                return Err(Failure::new(
                    ErrorCode::UnknownMemory,
                    format!("{agent} has no memory {}", args.id),
                ));
            }
            let seq = memory.forget(&agent, args.id);
            memory.wait_committed(seq).map_err(failed)?;
            write(
                out,
                json!({"agent_id": agent, "forgotten": args.id}).to_string(),
            )?;
        }
    }
    memory.close().map_err(failed)?;
    Ok(0)
}
