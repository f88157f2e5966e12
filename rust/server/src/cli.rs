//! The command line: argument definitions (clap derive) and the `tools` / `tool` commands.

use std::io::{self, Read, Write};

use crate::args::{LogLevel, positive_seconds};
use agents_core::error_code::ErrorCode;
use agents_core::tools::{ToolOutput, ToolRegistry};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

/// Exit code of a successful command.
pub const EXIT_OK: u8 = 0;
/// Exit code of a tool call that failed in the tool (an illegal move, a state that does not
/// parse) or whose output could not be written.
pub const EXIT_FAILED: u8 = agents_core::error_code::EXIT_FAILED;

/// The Godot Agents headless server: the game tools from the command line and over MCP.
///
/// Every command reads the same tool registry that the Godot extension and the agents use, so a
/// tool behaves identically everywhere. Tools are stateless: the game state string travels in
/// every call.
#[derive(Debug, Parser)]
#[command(
    name = "agents-server",
    version,
    after_help = "Examples:\n  \
        agents-server tools\n  \
        agents-server tools --format mcp\n  \
        agents-server tool roll_rpg_dice '{\"sides\":20,\"count\":2,\"seed\":1}'\n  \
        echo '{}' | agents-server tool new_tic_tac_toe_game -\n  \
        agents-server mcp\n  \
        agents-server serve --bind 127.0.0.1:9080 --db agents.db\n  \
        agents-server arena --game tic_tac_toe --players scripted,engine:easy --games 4\n  \
        agents-server eval --suite docs/suites/town.json --brain scripted --report card"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every tool definition as pretty JSON.
    ///
    /// The default format is the LLM function-calling shape, an array of
    /// `{name, description, parameters}`; `--format mcp` prints MCP's `tools/list` shape,
    /// `{name, description, inputSchema, annotations: {readOnlyHint}}`. Tools are sorted by name.
    Tools(ToolsArgs),
    /// Call one tool and print its result (the `structuredContent` JSON object) to stdout.
    ///
    /// Exit code 0 when the call succeeded, 1 when it failed: an unknown tool, arguments that do
    /// not match the tool's JSON Schema, arguments that are not valid JSON, or a call the tool
    /// itself rejects (an illegal move, an unparsable state). On failure stdout still carries a
    /// JSON object with `error` and `reason`, and the error message goes to stderr. Extra notes
    /// (such as "No legal moves available; the game is over.") go to stderr as `note: …` lines.
    Tool(ToolArgs),
    /// Serve the tools over the Model Context Protocol on stdin/stdout.
    ///
    /// Line-delimited JSON-RPC as MCP hosts expect when they launch a stdio server: `initialize`,
    /// `tools/list` (with `readOnlyHint` annotations) and `tools/call` (`structuredContent`, the
    /// JSON as the first text item followed by any notes, and `isError`). An unknown tool is a
    /// JSON-RPC "invalid params" error; invalid arguments are a result with `isError: true` naming
    /// the field. Per JSON-RPC 2.0, a line that is not JSON gets -32700 (`id: null`), a message
    /// that is not a valid request -32600, malformed `tools/call` params (or a number no f64
    /// holds, `1e999`) -32602 with the request's id: every request with an id is answered.
    /// stdout carries only the protocol; logs go to stderr. The server exits when stdin closes.
    Mcp(McpArgs),
    /// Run the agent runtime and serve it over WebSocket (`ws://ADDR/ws`).
    ///
    /// Clients send JSON requests (spawn, terminate, get state, list agents, send a message,
    /// assign / complete tasks, history reads, list / call tools, subscribe, ping) and receive
    /// every agent event; see `docs/protocol.md`. Prints `listening on ws://ADDR/ws` to stderr once
    /// ready. Agents and their history are stored in the database (`--db`: a SQLite file or a
    /// PostgreSQL URL); `--resume` brings back the agents that were running when the server
    /// last stopped. Ctrl-C or SIGTERM shuts down gracefully: every client gets a close frame
    /// (1001) and the database is flushed.
    ///
    /// Limits: frames over `--max-frame-bytes` close the connection (1009); more than
    /// `--rate-limit` requests per second get `rate_limited` errors (ten times that in one second
    /// closes it, 1008); a client that reads too slowly for `--outbound-queue` messages is
    /// disconnected (1008 "client too slow: outbound queue full"), and so is one whose socket
    /// accepts nothing for `--write-timeout-seconds` (1008 "client too slow: write timed out").
    Serve(ServeArgs),
    /// Send one real decision to a configured model and print what came back.
    ///
    /// Spawns one agent with the brain to check — a profile of `--brains FILE` (its `default`
    /// when no PROFILE is given), a brain name, or a one-off brain from `--provider`,
    /// `--model`, `--base-url`, `--api-key-env`, and for `cli` the command after `--` —, sends
    /// it `--message`, and prints what the
    /// model did (its streamed text, its tool calls, the line said), the latency and the tokens.
    /// When it fails, it says why and what to check: an unreachable URL, a refused key, an
    /// unknown model, an answer that is not the contract, a timeout. Uses a throw-away database.
    /// Exit code 0 when the model answered with a valid decision, 1 otherwise.
    BrainCheck(crate::brains::BrainCheckArgs),
    /// Play a tournament of brains and engines on a built-in game, and rate them.
    ///
    /// Brains (profiles of `--brains`, or `scripted`) play as agents through the game's app —
    /// its actions as their tools, its state as it sends it, its refusals as it answers them —
    /// against the built-in engines and each other: a match (two players), a round robin (more),
    /// or a ladder against every engine level (`--ladder`); sides alternate. Prints each
    /// player's record, rating with its 95 % interval (Bradley–Terry, `engine:random` held at
    /// 1000), illegal attempts and repairs per 100 moves, latency and tokens per move; keeps
    /// every game in `--db` (`arena_games`); `--report DIR` writes `results.json` and
    /// `report.html`. Progress goes to stderr. Exit code 2 for bad input (an unknown game,
    /// player or profile, a number out of range: nothing is played or written), 1 when the
    /// database or the runtime fails.
    Arena(crate::arena::ArenaArgs),
    /// Play the NPC report card: a suite of scenarios on one brain, and its metrics.
    ///
    /// Each scenario (docs/evaluation.md; the starter suite is docs/suites/town.json) spawns
    /// its agents with their personas, tasks and read-only tools on the brain `--brain`, says
    /// its lines, lets game time pass, restarts the runtime where it asks (the agents resumed
    /// from the database) and asks its questions; then prints memory, persona,
    /// responsiveness, repetition and echo, follow-through, grounding, calls naming what does
    /// not exist, read-only tool use, the validity of a game master's answers (first time,
    /// after repair), latency and tokens per decision, each against its target.
    /// `--without memory|reflection|relationships` turns a part of the mind off; `--report
    /// DIR` writes `results.json` and `report.html`. Each scenario runs on a fresh
    /// database in a temporary directory unless `--db` names one. Exit code 2 for bad input (a
    /// suite with a mistake, named by its field; an unknown profile: nothing is run or
    /// written), 1 when the database or the runtime fails.
    Eval(crate::eval::EvalArgs),
    /// Tabletop campaigns (`campaign.json`): create one, run GM tool calls on it, run a GM turn.
    ///
    /// `campaign new [--party pc_001,pc_002] FILE`; `campaign apply FILE [--actor ID]` with a
    /// JSON array of tool calls on stdin, printing {"applied_actions", "tool_feedback"};
    /// `campaign turn FILE [--actor ID] [--brain PROFILE] "user input"`, printing the turn-log
    /// entry (also appended to turn_log.jsonl beside FILE). The file is saved when a call was
    /// applied. Exit code 2 for a bad file or bad input (the file untouched), 1 when a call
    /// failed (`apply`) or the GM's brain did not answer (`turn`).
    Campaign {
        /// What to do with the campaign.
        #[command(subcommand)]
        command: crate::campaign::CampaignCommand,
    },
    /// An agent's memory stream in a database: list, search, export, remember, forget.
    ///
    /// `memory list --db DB --agent ID [--before MEMORY_ID] [--limit N]` prints a page
    /// {"memories": [...], "next"}; `memory search --db DB --agent ID [--limit N] QUERY` the
    /// memories sharing a word with QUERY, best first; `memory export --db DB --agent ID` every
    /// memory as JSON lines, oldest first; `memory remember --db DB --agent ID [--kind fact]
    /// [--importance 5] [--about ID] [--game-time S] TEXT` stores one; `memory forget --db DB
    /// --agent ID --id MEMORY_ID` forgets one. DB is a SQLite file or a
    /// PostgreSQL URL; list, search and export open it read-only (never creating, upgrading or
    /// writing it), and a database that is not this project's is refused untouched. Exit code 2 for bad input (an unknown agent, a memory that cannot be
    /// stored), 1 when the database fails.
    Memory {
        /// What to do with the memory.
        #[command(subcommand)]
        command: crate::memory::MemoryCommand,
    },
}

/// Arguments of `agents-server serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. The default is loopback only; use e.g. `0.0.0.0:9080` to accept
    /// remote clients (a token is required then, see `--insecure-no-token`). Port 0 picks a free
    /// port.
    #[arg(long, value_name = "ADDR", default_value = agents_core::net::DEFAULT_BIND)]
    pub bind: std::net::SocketAddr,
    /// The database holding agents, conversations, tasks and state history: a SQLite file
    /// (created if missing), or a PostgreSQL database given as a URL,
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (migrated on first use; several
    /// processes may share it). A database that is not this project's is refused untouched.
    /// The password never appears in messages or logs.
    #[arg(long, value_name = "PATH|URL", default_value = "agents.db")]
    pub db: std::path::PathBuf,
    /// Serve one world with other `agents-server` processes: the NATS server (or servers,
    /// comma-separated) they share, `nats://HOST:4222`. Needs a PostgreSQL `--db` (the world's
    /// memory is shared). Every client of any process sees the events of the agents of every
    /// process. Without it, nothing changes.
    #[arg(long, value_name = "NATS_URL")]
    pub cluster: Option<String>,
    /// The world's name in the cluster (letters, digits, `_`, `-`); processes with the same
    /// `--cluster` and `--world` serve one world.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "default",
        requires = "cluster"
    )]
    pub world: String,
    /// This process's name in the world (default: host name, PID and a random number).
    #[arg(long, value_name = "NAME", requires = "cluster")]
    pub process_id: Option<String>,
    /// How long an agent's lease lasts: when a process dies, another one resumes its agents
    /// within about this time (at least 1).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        requires = "cluster"
    )]
    pub lease_seconds: f64,
    /// A shared secret clients must present at the upgrade, as `Authorization: Bearer TOKEN`,
    /// or from a browser as the subprotocols `godot-agents` and `agents.token.TOKEN`; others get
    /// HTTP 401 (a token in the URL, `?token=` or `?access_token=`, is refused with 400). For
    /// browsers, use letters, digits and `-._~` only (a subprotocol name cannot hold `=`, `/`, …).
    /// Unset: no authentication, loopback binds only.
    #[arg(
        long,
        env = "AGENTS_SERVER_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Listen on a non-loopback address without a token: anyone who can reach the port can
    /// spawn agents and read their conversations. Refused without this flag.
    #[arg(long)]
    pub insecure_no_token: bool,
    /// A browser origin allowed to connect (`https://game.example`, `http://localhost:8060`,
    /// `null`, or `*` for any); repeatable. Clients without an `Origin` (native ones) always
    /// pass; on a loopback bind, loopback origins are allowed too. Others get HTTP 403.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// A `Host` name clients may use besides the loopback ones (checked on a loopback bind, and
    /// by `/mcp` on any bind); repeatable.
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,
    /// Seconds an agent stays idle before deciding on its own (default 5).
    #[arg(long, value_name = "S")]
    pub idle_think_seconds: Option<f64>,
    /// How agents form and recall memories, as a JSON object (`{"recall_limit": 3}`,
    /// `{"enabled": false}`; fields left out keep their defaults; docs/runtime.md). An agent's
    /// config may give its own.
    #[arg(long, value_name = "JSON", value_parser = memory_settings)]
    pub memory: Option<Box<agents_core::mind::MemorySettings>>,
    /// An OpenAI-compatible embeddings endpoint that makes vectors of agents' memories, so they
    /// are recalled by meaning as well as by words, as a JSON object (`{"base_url":
    /// "http://127.0.0.1:11434/v1", "model": "nomic-embed-text"}`; also `api_key_env`,
    /// `dimensions`, `batch_size`, `timeout_seconds`, `query_timeout_ms`, `cache_megabytes`;
    /// docs/runtime.md). The key is read from the environment variable `api_key_env` names.
    #[arg(long, value_name = "JSON", value_parser = embedding_settings)]
    pub embeddings: Option<Box<agents_core::mind::EmbeddingSettings>>,
    /// Game seconds per real second of the clock memories are stamped with (default 1).
    #[arg(long, value_name = "X", value_parser = non_negative)]
    pub game_time_scale: Option<f64>,
    /// The largest frame / message a client may send, in bytes.
    #[arg(long, value_name = "N", default_value_t = 1024 * 1024)]
    pub max_frame_bytes: usize,
    /// Requests per second each connection may send (also the burst size).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub rate_limit: u32,
    /// Messages queued per client before a slow client is disconnected.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub outbound_queue: usize,
    /// Seconds one write to a client may stall (it reads nothing, the kernel's buffers are full)
    /// before the client is disconnected (1008 "client too slow: write timed out").
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = positive_seconds)]
    pub write_timeout_seconds: f64,
    /// Resume the agents that were running when the server last stopped.
    #[arg(long)]
    pub resume: bool,
    /// The directory `campaign_load` reads campaign files from, by relative path (saved back
    /// after every applied call; their turn logs beside them). Without it, campaigns load
    /// only inline.
    #[arg(long, value_name = "DIR")]
    pub campaign_dir: Option<std::path::PathBuf>,
    /// Do not serve MCP over HTTP at `/mcp` (served by default, behind the same token).
    #[arg(long)]
    pub no_mcp: bool,
    /// A JSON file of named brains agents can use by name:
    /// `{"default": NAME, "profiles": {NAME: {"provider": …, "model": …}}}` (see
    /// docs/brains.md). `default` becomes the brain of agents whose config names none.
    #[arg(long, value_name = "FILE")]
    pub brains: Option<std::path::PathBuf>,
    /// Let clients spawn agents with a brain object of their own: an HTTP provider's only
    /// (`openai`, `anthropic`, `ollama`), carrying the client's own key as `api_key` (kept in
    /// memory, never stored or logged). Off: clients name a profile of --brains (or a preset).
    /// Never from a client, even then: `api_key_env`, `headers`, `command`, `cli_backend`,
    /// `num_ctx`, `keep_alive` in an object.
    #[arg(long)]
    pub allow_client_brains: bool,
    /// The origins (`scheme://host[:port]`, comma-separated) a client's brain object may call,
    /// e.g. `https://api.openai.com,http://127.0.0.1:11434`. Unset: any.
    #[arg(long, value_name = "ORIGIN,...", requires = "allow_client_brains",
          value_parser = client_brain_origins)]
    pub client_brain_origins: Option<Origins>,
    /// Refuse the preset brain names `scripted` and `claude` from clients (profiles only).
    #[arg(long)]
    pub no_client_presets: bool,
    /// How many model requests may be in flight at once across every agent (the rest queue).
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_model_calls: u32,
    /// How many of those may go to one endpoint (scheme, host and port of a brain's base URL):
    /// a slow or hanging provider cannot hold every permit.
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_model_calls_per_endpoint: u32,
    /// How many agents may run at once; a spawn beyond is refused (`limit_reached`) until one
    /// is terminated.
    #[arg(long, value_name = "N", default_value_t = agents_core::runtime::DEFAULT_MAX_AGENTS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_agents: usize,
    /// Tokens every model brain together may spend (as providers report them); unset: no
    /// limit. Clients change it with `set_token_budget`.
    #[arg(long, value_name = "N")]
    pub token_budget: Option<u64>,
    /// How much the server logs to stderr.
    #[arg(long, value_enum, default_value_t = LogLevel::Info)]
    pub log_level: LogLevel,
}

/// Arguments of `agents-server tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The shape of the definitions.
    #[arg(long, value_enum, default_value_t = DefinitionFormat::Llm)]
    pub format: DefinitionFormat,
}

/// The shape `agents-server tools` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DefinitionFormat {
    /// `[{name, description, parameters}]`, as LLM chat APIs take tools.
    Llm,
    /// `[{name, description, inputSchema, annotations}]`, as MCP `tools/list` answers.
    Mcp,
}

/// Arguments of `agents-server tool`.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool to call (see `agents-server tools`), e.g. `apply_chess_move`.
    pub name: String,
    /// The arguments as one JSON object, e.g. '{"sides":20}'. Omitted means `{}`; `-` reads the
    /// JSON from stdin (empty stdin means `{}`).
    #[arg(value_name = "JSON")]
    pub arguments: Option<String>,
}

/// Arguments of `agents-server mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The directory the GM tools' `campaign` argument names files in, by relative path (the
    /// MCP host is not trusted with other files). Without it, the GM tools refuse every path.
    #[arg(long, value_name = "DIR")]
    pub campaign_dir: Option<std::path::PathBuf>,
    /// How much the server logs to stderr.
    #[arg(long, value_enum, default_value_t = LogLevel::Warn)]
    pub log_level: LogLevel,
}

/// Writes every definition in `format` as pretty JSON followed by a newline.
pub fn print_definitions(
    registry: &ToolRegistry,
    format: DefinitionFormat,
    out: &mut impl Write,
) -> io::Result<()> {
    let definitions = match format {
        DefinitionFormat::Llm => registry.llm_definitions(),
        DefinitionFormat::Mcp => registry.mcp_definitions(),
    };
    write_pretty(out, &definitions)?;
    out.flush()
}

/// Runs `agents-server tool NAME [JSON]` and returns the process exit code: 0 when the call
/// succeeded, 1 when the tool reported a failure (an illegal move), and the code's
/// ([`Category::exit_code`](agents_core::error_code::Category::exit_code)) when the call could not
/// be made: 2 for an unknown tool, arguments that fail the tool's schema or are not JSON.
///
/// `arguments` is the JSON text (`None` = `{}`, `-` = read `stdin`). The structured result goes
/// to `out` as pretty JSON; the error message and notes go to `err`.
pub fn run_tool(
    registry: &ToolRegistry,
    name: &str,
    arguments: Option<&str>,
    stdin: &mut impl Read,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    // The code of a call that could not be made (`None`: it ran).
    let (output, refused) = match read_arguments(arguments, stdin) {
        Ok(args) => match registry.call(name, &args) {
            Ok(output) => (output, None),
            Err(error) => {
                let mut output = error.to_output();
                if matches!(error, agents_core::tools::ToolError::UnknownTool { .. }) {
                    output =
                        output.with_note("run `agents-server tools` to list the available tools");
                }
                (output, Some(error.code()))
            }
        },
        Err(message) => (
            ToolOutput::failed(
                json!({"error": message, "reason": ErrorCode::InvalidJson.as_str()}),
            ),
            Some(ErrorCode::InvalidJson),
        ),
    };
    // Diagnostics first, so a reader of a terminal sees them next to the result.
    if output.is_error {
        let message = output
            .structured
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| "the call failed".to_owned());
        let _ = writeln!(err, "error: {message}");
    }
    for note in &output.notes {
        let _ = writeln!(err, "note: {note}");
    }
    let _ = err.flush();
    if write_pretty(out, &output.structured)
        .and_then(|()| out.flush())
        .is_err()
    {
        return EXIT_FAILED;
    }
    match refused {
        Some(code) => code.category().exit_code(),
        None if output.is_error => EXIT_FAILED,
        None => EXIT_OK,
    }
}

/// The arguments value: `{}` when omitted (or empty), the parsed JSON otherwise; `-` reads the
/// text from `stdin`. The error is a message for the user.
fn read_arguments(arguments: Option<&str>, stdin: &mut impl Read) -> Result<Value, String> {
    let (text, source) = match arguments {
        None => return Ok(json!({})),
        Some("-") => {
            let mut text = String::new();
            stdin
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the arguments from stdin: {e}"))?;
            (text, "stdin")
        }
        Some(text) => (text.to_owned(), "the command line"),
    };
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(&text).map_err(|e| {
        format!("the arguments from {source} are not valid JSON ({e}); pass one JSON object, e.g. '{{\"sides\":20}}'")
    })
}

fn write_pretty(out: &mut impl Write, value: &Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use agents_core::error_code::EXIT_USAGE;
    use agents_core::tools::ToolSpec;
    use clap::CommandFactory;

    use super::*;

    fn registry() -> ToolRegistry {
        let mut r = ToolRegistry::new();
        r.register(
            ToolSpec::new(
                "add",
                "Adds two integers.",
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a"],
                    "additionalProperties": false
                }),
            )
            .read_only(),
            |args| {
                let a = args["a"].as_i64().unwrap_or(0);
                let b = args.get("b").and_then(Value::as_i64).unwrap_or(0);
                if a < 0 {
                    ToolOutput::failed(json!({"error": "Negative.", "reason": "negative"}))
                } else if b == 0 {
                    ToolOutput::ok(json!({"sum": a})).with_note("b defaulted to 0")
                } else {
                    ToolOutput::ok(json!({"sum": a + b}))
                }
            },
        )
        .unwrap();
        r.register(
            ToolSpec::new("empty", "No arguments.", json!({"type": "object"})),
            |args| ToolOutput::ok(json!({"args": args})),
        )
        .unwrap();
        r
    }

    struct Run {
        code: u8,
        out: Value,
        err: String,
    }

    fn run(name: &str, arguments: Option<&str>, stdin: &str) -> Run {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = run_tool(
            &registry(),
            name,
            arguments,
            &mut stdin.as_bytes(),
            &mut out,
            &mut err,
        );
        let out = String::from_utf8(out).unwrap();
        assert!(out.ends_with('\n'), "stdout ends with a newline: {out:?}");
        Run {
            code,
            out: serde_json::from_str(&out).unwrap(),
            err: String::from_utf8(err).unwrap(),
        }
    }

    #[test]
    fn success_prints_structured_json_and_exits_0() {
        let r = run("add", Some(r#"{"a": 2, "b": 3}"#), "");
        assert_eq!(r.code, EXIT_OK);
        assert_eq!(r.out, json!({"sum": 5}));
        assert_eq!(r.err, "");
    }

    #[test]
    fn notes_go_to_stderr() {
        let r = run("add", Some(r#"{"a": 2}"#), "");
        assert_eq!(r.code, EXIT_OK);
        assert_eq!(r.out, json!({"sum": 2}));
        assert_eq!(r.err, "note: b defaulted to 0\n");
    }

    #[test]
    fn omitted_and_empty_arguments_are_an_empty_object() {
        assert_eq!(run("empty", None, "").out, json!({"args": {}}));
        assert_eq!(run("empty", Some("-"), "  \n").out, json!({"args": {}}));
        assert_eq!(run("empty", Some(" "), "").out, json!({"args": {}}));
    }

    #[test]
    fn dash_reads_stdin() {
        let r = run("add", Some("-"), r#"{"a": 40, "b": 2}"#);
        assert_eq!(r.code, EXIT_OK);
        assert_eq!(r.out, json!({"sum": 42}));
    }

    #[test]
    fn failed_call_exits_1_with_message() {
        let r = run("add", Some(r#"{"a": -1, "b": 1}"#), "");
        assert_eq!(r.code, EXIT_FAILED);
        assert_eq!(r.out, json!({"error": "Negative.", "reason": "negative"}));
        assert_eq!(r.err, "error: Negative.\n");
    }

    #[test]
    fn invalid_arguments_name_the_field() {
        let r = run("add", Some(r#"{"a": "2"}"#), "");
        assert_eq!(r.code, EXIT_USAGE);
        assert_eq!(r.out["reason"], "invalid_args");
        assert_eq!(r.out["field"], "a");
        assert_eq!(r.out["tool"], "add");
        assert!(
            r.err.starts_with("error: Invalid arguments for add: a: "),
            "{}",
            r.err
        );
    }

    #[test]
    fn unknown_tool_exits_2() {
        let r = run("nope", None, "");
        assert_eq!(r.code, EXIT_USAGE);
        assert_eq!(r.out["reason"], "unknown_tool");
        assert_eq!(r.out["tool"], "nope");
        assert!(r.err.contains("error: Unknown tool: nope"), "{}", r.err);
        assert!(r.err.contains("agents-server tools"), "{}", r.err);
    }

    #[test]
    fn bad_json_exits_2() {
        for (args, stdin, source) in [
            (Some("{\"a\": "), "", "the command line"),
            (Some("-"), "{oops}", "stdin"),
        ] {
            let r = run("add", args, stdin);
            assert_eq!(r.code, EXIT_USAGE);
            assert_eq!(r.out["reason"], "invalid_json");
            assert!(r.err.starts_with("error: the arguments from "), "{}", r.err);
            assert!(r.err.contains(source), "{}", r.err);
        }
    }

    #[test]
    fn non_object_arguments_are_invalid() {
        let r = run("add", Some("[1, 2]"), "");
        assert_eq!(r.code, EXIT_USAGE);
        assert_eq!(r.out["field"], "(arguments)");
    }

    #[test]
    fn definitions_in_both_formats() {
        let mut out = Vec::new();
        print_definitions(&registry(), DefinitionFormat::Llm, &mut out).unwrap();
        let llm: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(llm, registry().llm_definitions());
        assert_eq!(llm[0]["name"], "add");
        assert!(llm[0]["parameters"].is_object());

        let mut out = Vec::new();
        print_definitions(&registry(), DefinitionFormat::Mcp, &mut out).unwrap();
        let mcp: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(mcp, registry().mcp_definitions());
        assert_eq!(mcp[0]["annotations"]["readOnlyHint"], true);
    }

    #[test]
    fn memory_remember_help_names_every_memory_kind() {
        let cli = Cli::command();
        let kind = cli
            .find_subcommand("memory")
            .and_then(|memory| memory.find_subcommand("remember"))
            .and_then(|remember| remember.get_arguments().find(|a| a.get_id() == "kind"))
            .expect("`memory remember` has --kind");
        let help = kind.get_help().map(ToString::to_string).unwrap_or_default();
        let words: Vec<&str> = help
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .collect();
        for k in agents_core::memory::MemoryKind::ALL {
            assert!(
                words.contains(&k.as_str()),
                "`memory remember --kind`'s help does not name `{k}`: {help}"
            );
        }
    }

    #[test]
    fn command_line_is_well_formed() {
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from(["agents-server", "tools", "--format", "mcp"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Tools(ToolsArgs {
                format: DefinitionFormat::Mcp
            })
        ));
        let cli = Cli::try_parse_from(["agents-server", "tool", "x", "-"]).unwrap();
        assert!(
            matches!(cli.command, Command::Tool(ToolArgs { ref name, arguments: Some(ref a) }) if name == "x" && a == "-")
        );
        assert!(Cli::try_parse_from(["agents-server", "tools", "--format", "xml"]).is_err());
        let cli = Cli::try_parse_from([
            "agents-server",
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--rate-limit",
            "7",
            "--resume",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("serve parses as Serve");
        };
        assert_eq!(serve.bind.port(), 0);
        assert_eq!(serve.rate_limit, 7);
        assert!(serve.resume);
        assert_eq!(serve.max_frame_bytes, 1024 * 1024);
        assert!(Cli::try_parse_from(["agents-server", "serve", "--bind", "nowhere"]).is_err());
        assert_eq!(serve.memory, None);
        let cli = Cli::try_parse_from([
            "agents-server",
            "serve",
            "--memory",
            r#"{"recall_limit": 3}"#,
            "--game-time-scale",
            "60",
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("serve parses as Serve");
        };
        assert_eq!(serve.memory.unwrap().recall_limit, 3);
        assert_eq!(serve.game_time_scale, Some(60.0));
        for (bad, named) in [
            (r#"{"recal_limit": 3}"#, "unknown field `recal_limit`"),
            (
                r#"{"recall_limit": 99}"#,
                "memory.recall_limit must be at most 50",
            ),
        ] {
            let error = Cli::try_parse_from(["agents-server", "serve", "--memory", bad])
                .unwrap_err()
                .to_string();
            assert!(error.contains(named), "{error}");
        }
        let cli = Cli::try_parse_from([
            "agents-server",
            "serve",
            "--embeddings",
            r#"{"base_url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text"}"#,
        ])
        .unwrap();
        let Command::Serve(serve) = cli.command else {
            panic!("serve parses as Serve");
        };
        assert_eq!(serve.embeddings.unwrap().model, "nomic-embed-text");
        for (bad, named) in [
            (r#"{"base_url": "http://x/v1"}"#, "missing field `model`"),
            (
                r#"{"base_url": "ftp://x", "model": "m"}"#,
                "embeddings.base_url must be an http:// or https:// URL",
            ),
        ] {
            let error = Cli::try_parse_from(["agents-server", "serve", "--embeddings", bad])
                .unwrap_err()
                .to_string();
            assert!(error.contains(named), "{error}");
        }
    }
}

/// The origins of `--client-brain-origins`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origins(pub Vec<agents_core::brain::origin::Origin>);

/// `--client-brain-origins`: a comma-separated list of origins.
fn client_brain_origins(list: &str) -> Result<Origins, String> {
    agents_core::brain::origin::parse_origins(list).map(Origins)
}

/// `--memory`: a memory settings object, checked (an unknown field or a number out of range is
/// named).
fn memory_settings(text: &str) -> Result<Box<agents_core::mind::MemorySettings>, String> {
    let settings: agents_core::mind::MemorySettings =
        serde_json::from_str(text).map_err(|e| format!("not memory settings: {e}"))?;
    settings.validate()?;
    Ok(Box::new(settings))
}

/// `--embeddings`: an embeddings endpoint object, checked (an unknown field or a bad value is
/// named).
fn embedding_settings(text: &str) -> Result<Box<agents_core::mind::EmbeddingSettings>, String> {
    let settings: agents_core::mind::EmbeddingSettings =
        serde_json::from_str(text).map_err(|e| format!("not embeddings settings: {e}"))?;
    settings.validate()?;
    Ok(Box::new(settings))
}

/// A finite number ≥ 0.
fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a number of 0 or more, got '{text}'")),
    }
}
