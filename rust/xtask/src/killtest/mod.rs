//! `cargo xtask killtest [--rounds N] [--seed S] [--clients N]`: proves on the real binary that an
//! acknowledged write survives `kill -9` and that no id is ever handed out twice.
//!
//! Each round starts `agents-server serve --resume` on the same database, restarted after the
//! previous round's kill; checks (in the SQLite file, read-only, and through the protocol) that
//! every write acknowledged so far is there; then lets concurrent WebSocket clients pipeline
//! `agent_spawn_request`, `assign_task`, `complete_task` (also of tasks acknowledged before the
//! crash) and `send_message`, recording every acknowledged reply, until the server is SIGKILLed —
//! at a random time, or in every other round the instant the round's `k`-th acknowledged reply
//! arrives (the client that receives it kills the server first). A final restart checks the last
//! round and, when the database has an `agent_inbox`, that the messages waiting there are
//! delivered after `--resume`; then the server is stopped with SIGTERM.
//!
//! Failures: an acknowledged row missing after a restart (*lost*), an agent or task id handed
//! out a second time in the run (*reused*), and any other misbehaviour (an unexpected error
//! reply, a server that dies on its own, a hang — every wait has a timeout, and the server is
//! killed whatever happens). The kill points and the clients' operations come from the seed,
//! printed first so a failing run can be replayed (`--seed`).
//!
//! Modules: [`plan`] (the seeded plan), [`ws`] (a client connection), [`client`] (the workload),
//! [`ledger`] (what was acknowledged), [`verify`] (the checks).

mod client;
mod ledger;
mod plan;
mod verify;
mod ws;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::process::{Background, Echo};
use crate::{Ctx, ws_client_tests};
use client::{Client, Round};
use ledger::Ledger;
use plan::KillPoint;
use verify::Missing;

/// The options of `cargo xtask killtest`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Rounds (kills) to run.
    pub rounds: u32,
    /// The seed; `None` picks one (printed).
    pub seed: Option<u64>,
    /// Concurrent clients per round.
    pub clients: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rounds: DEFAULT_ROUNDS,
            seed: None,
            clients: DEFAULT_CLIENTS,
        }
    }
}

/// Rounds of a plain `cargo xtask killtest`.
pub const DEFAULT_ROUNDS: u32 = 10;
/// Rounds run by `cargo xtask test`.
pub const TEST_ROUNDS: u32 = 3;
/// Concurrent clients per round.
pub const DEFAULT_CLIENTS: usize = 4;

/// How long a server may take to start listening (it resumes every agent of earlier rounds).
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// A round's clients are stopped (and the server killed) after this, whatever the kill point.
const ROUND_DEADLINE: Duration = Duration::from_secs(60);
/// How long the final restart may take to deliver the messages waiting in `agent_inbox`.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the final server may take to stop after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// What a run found.
#[derive(Debug, Default)]
pub struct Summary {
    /// Rounds run (kills).
    pub rounds: u32,
    /// The seed.
    pub seed: u64,
    /// Every acknowledgement.
    pub counts: ledger::Counts,
    /// Acknowledged rows found missing after a restart (over the whole run).
    pub lost: Missing,
    /// Reuses of ids, one line each.
    pub reused: Vec<String>,
    /// Completions of earlier tasks the restarted server did not know.
    pub stale_completions: u64,
    /// Messages still undelivered in `agent_inbox` after the final restart (`None`: no inbox).
    pub undelivered: Option<u64>,
    /// Other failures.
    pub problems: Vec<String>,
}

impl Summary {
    /// The summary line: `killtest: N rounds, A agents, T tasks, C completions, M messages
    /// acknowledged; lost L; reused R`.
    pub fn line(&self) -> String {
        let c = &self.counts;
        format!(
            "killtest: {} rounds, {} agents, {} tasks, {} completions, {} messages acknowledged; lost {}; reused {}",
            self.rounds,
            c.agents,
            c.tasks,
            c.completions,
            c.messages,
            self.lost.total(),
            self.reused.len()
        )
    }

    /// True when nothing was lost, reused or otherwise wrong.
    pub fn passed(&self) -> bool {
        self.lost.total() == 0
            && self.reused.is_empty()
            && self.problems.is_empty()
            && self.undelivered.unwrap_or(0) == 0
    }
}

/// Parses `killtest`'s options.
pub fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or_else(|| format!("{name} needs a value"))?;
            v.parse()
                .map_err(|_| format!("{name} wants a whole number, got {v:?}"))
        };
        match arg.as_str() {
            "--rounds" => {
                let n = number("--rounds")?;
                opts.rounds = u32::try_from(n)
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or("--rounds must be between 1 and 4294967295")?;
            }
            "--seed" => opts.seed = Some(number("--seed")?),
            "--clients" => {
                let n = number("--clients")?;
                opts.clients = usize::try_from(n)
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or("--clients must be between 1 and 64")?;
            }
            other => return Err(format!("unknown killtest option {other:?}")),
        }
    }
    Ok(opts)
}

/// Runs the harness: builds `agents-server`, runs the rounds, prints the summary line last.
/// `Err` when anything was lost or reused or went wrong (the summary is printed first).
pub fn run(ctx: &Ctx, opts: &Options) -> Result<Summary, String> {
    let exe = ws_client_tests::build_server(ctx)?;
    let seed = opts.seed.unwrap_or_else(plan::fresh_seed);
    let dir = ctx
        .target_dir
        .join("xtask-killtest")
        .join(format!("seed-{seed}"));
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let db = dir.join("agents.db");
    println!(
        "killtest: seed {seed}, {} rounds, {} clients, database {} (replay: cargo xtask killtest --rounds {} --seed {seed})",
        opts.rounds,
        opts.clients,
        db.display(),
        opts.rounds
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;

    let mut summary = Summary {
        seed,
        ..Summary::default()
    };
    let mut ledger = Ledger::default();
    for round in 0..=opts.rounds {
        // A server that does not come back is a failure, reported with the summary.
        let server = match Server::start(&exe, &db) {
            Ok(s) => s,
            Err(e) => {
                let when = match round {
                    0 => "the first start".to_string(),
                    r => format!("the restart after round {}", r - 1),
                };
                summary.problems.push(format!("{when}: {e}"));
                break;
            }
        };
        if round > 0 {
            verify_restart(&runtime, &server, &db, &mut ledger, &mut summary, round);
        }
        if round == opts.rounds {
            // The final restart: the last round checked, the inbox delivered, a clean stop.
            summary.undelivered = wait_for_delivery(&db, &mut summary.problems);
            server.stop(&mut summary.problems);
            break;
        }
        ledger = run_round(&runtime, server, seed, round, opts, ledger, &mut summary);
        summary.rounds = round + 1;
    }

    summary.counts = ledger.counts;
    summary.reused = ledger.reused;
    report(&summary, &db);
    if summary.passed() {
        Ok(summary)
    } else {
        Err(String::new())
    }
}

/// Prints the details of a run and the summary line (last).
fn report(summary: &Summary, db: &Path) {
    if summary.lost.total() > 0 {
        println!("killtest: LOST {}", summary.lost.describe());
    }
    for r in summary.reused.iter().take(10) {
        println!("killtest: REUSED {r}");
    }
    if summary.reused.len() > 10 {
        println!("killtest: … and {} more reuses", summary.reused.len() - 10);
    }
    if summary.stale_completions > 0 {
        println!(
            "killtest: {} completions of tasks acknowledged before a crash were refused as unknown_task",
            summary.stale_completions
        );
    }
    match summary.undelivered {
        None => println!("killtest: no agent_inbox table: delivery after --resume not checked"),
        Some(0) => {
            println!("killtest: every message waiting in agent_inbox was delivered after --resume")
        }
        Some(n) => println!(
            "killtest: {n} messages still in agent_inbox {DELIVERY_TIMEOUT:?} after the final --resume"
        ),
    }
    for p in &summary.problems {
        println!("killtest: PROBLEM {p}");
    }
    if !summary.passed() {
        println!(
            "killtest: FAILED; the database is kept at {} (replay: cargo xtask killtest --rounds {} --seed {})",
            db.display(),
            summary.rounds,
            summary.seed
        );
    }
    println!("{}", summary.line());
}

/// After a restart: checks everything acknowledged so far, in the file and over the protocol
/// (tasks of round `round - 1` onwards), and adds what is missing to the run's losses.
fn verify_restart(
    runtime: &tokio::runtime::Runtime,
    server: &Server,
    db: &Path,
    ledger: &mut Ledger,
    summary: &mut Summary,
    round: u32,
) {
    let mut missing = match verify::check_database(db, ledger) {
        Ok(m) => m,
        Err(e) => {
            summary
                .problems
                .push(format!("after round {}: {e}", round - 1));
            Missing::default()
        }
    };
    match runtime.block_on(verify::check_protocol(&server.url, ledger, round - 1)) {
        Ok(m) => missing.merge(&m),
        Err(e) => summary
            .problems
            .push(format!("after round {}: protocol check: {e}", round - 1)),
    }
    let new_losses = {
        let mut all = summary.lost.clone();
        all.merge(&missing);
        all.total() - summary.lost.total()
    };
    summary.lost.merge(&missing);
    ledger.lost_tasks.extend(missing.tasks.iter().copied());
    ledger.lost_agents.extend(missing.agents.iter().cloned());
    println!(
        "killtest: restart after round {}: {} acknowledged rows checked; lost {} (new {}), reused {}",
        round - 1,
        ledger.counts.rows(),
        summary.lost.total(),
        new_losses,
        ledger.reused.len()
    );
}

/// One round on a started server: the clients until the kill, then the reaped server.
fn run_round(
    runtime: &tokio::runtime::Runtime,
    server: Server,
    seed: u64,
    round: u32,
    opts: &Options,
    ledger: Ledger,
    summary: &mut Summary,
) -> Ledger {
    let kill = plan::kill_point(seed, round);
    let at_reply = match kill {
        KillPoint::AtReply(n) => Some(n),
        KillPoint::AfterMillis(_) => None,
    };
    let before = ledger.counts;
    let clients = make_clients(&ledger, seed, round, opts.clients);
    let shared = Arc::new(Round::new(
        round,
        ledger,
        server.process.kill_switch(),
        at_reply,
    ));
    runtime.block_on(drive(&server.url, &shared, clients, kill));
    let Server { process, .. } = server;
    let out = process.wait(Some(Duration::from_secs(30)));
    let shared = match Arc::try_unwrap(shared) {
        Ok(r) => r,
        Err(_) => unreachable!("every client task has ended"),
    };
    check_killed(&out, &shared);
    let note = shared
        .kill_note()
        .unwrap_or_else(|| "never killed".to_string());
    summary.stale_completions += shared
        .stale_completions
        .load(std::sync::atomic::Ordering::Relaxed);
    summary.problems.extend(
        shared
            .problems
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
    );
    let ledger = shared
        .ledger
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let c = ledger.counts;
    println!(
        "killtest: round {round}: kill {kill}: {note}; acknowledged {} agents, {} tasks, {} completions, {} messages",
        c.agents - before.agents,
        c.tasks - before.tasks,
        c.completions - before.completions,
        c.messages - before.messages
    );
    if c.rows() == before.rows() {
        summary
            .problems
            .push(format!("round {round}: nothing was acknowledged"));
    }
    ledger
}

/// The round's clients: each gets a share of the agents and open tasks of earlier rounds that
/// are still there (chosen with the seed), so clients talk to resumed agents and complete tasks
/// acknowledged before the crash.
fn make_clients(ledger: &Ledger, seed: u64, round: u32, count: usize) -> Vec<Client> {
    let earlier_agents: Vec<&String> = ledger
        .agents
        .iter()
        .filter(|(id, a)| a.round < round && !ledger.lost_agents.contains(*id))
        .map(|(id, _)| id)
        .collect();
    let open = ledger.open_tasks_before(round);
    (0..count)
        .map(|id| {
            let mut rng = plan::client_rng(seed, round, id);
            let mut agents = Vec::new();
            if !earlier_agents.is_empty() {
                for _ in 0..2 {
                    agents.push(earlier_agents[rng.index(earlier_agents.len())].clone());
                }
            }
            let tasks: Vec<i64> = open
                .iter()
                .copied()
                .filter(|t| (*t as u64 % count as u64) as usize == id)
                .collect();
            Client::new(id, rng, agents, tasks)
        })
        .collect()
}

/// Runs the clients and the timed kill until every client has ended; the server is killed at
/// the deadline whatever happens.
async fn drive(url: &str, shared: &Arc<Round>, clients: Vec<Client>, kill: KillPoint) {
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        tasks.spawn(client.run(url.to_string(), Arc::clone(shared)));
    }
    let timer = {
        let shared = Arc::clone(shared);
        tokio::spawn(async move {
            if let KillPoint::AfterMillis(ms) = kill {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                shared.kill(&format!("after {ms} ms"));
            }
        })
    };
    let deadline = tokio::time::Instant::now() + ROUND_DEADLINE;
    loop {
        match tokio::time::timeout_at(deadline, tasks.join_next()).await {
            Ok(Some(Ok(()))) => {}
            Ok(Some(Err(e))) => shared.problem(format!("a client task failed: {e}")),
            Ok(None) => break,
            Err(_) => {
                shared.problem(format!(
                    "the clients were still running after {ROUND_DEADLINE:?}"
                ));
                shared.kill("at the round deadline");
                tasks.abort_all();
            }
        }
    }
    timer.abort();
    if !shared.killed() {
        shared.problem(format!(
            "the clients stopped before the kill point ({} acknowledged replies)",
            shared.acks()
        ));
        shared.kill("after the clients stopped");
    }
}

/// The server must have died of our SIGKILL, and printed no panic.
fn check_killed(out: &crate::process::RunOutput, shared: &Round) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        let signal = out.status.and_then(|s| s.signal());
        if signal != Some(9) {
            shared.problem(format!(
                "the server ended with {} rather than our SIGKILL; its output:\n{}",
                out.ending(),
                tail(&out.output)
            ));
        }
    }
    if out.output.contains("panicked") {
        shared.problem(format!("the server panicked:\n{}", tail(&out.output)));
    }
}

fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Polls `agent_inbox` until none of our messages wait there; `None` when there is no inbox.
fn wait_for_delivery(db: &Path, problems: &mut Vec<String>) -> Option<u64> {
    let start = Instant::now();
    loop {
        match verify::inbox_pending(db) {
            Ok(None) => return None,
            Ok(Some(0)) => return Some(0),
            Ok(Some(n)) if start.elapsed() > DELIVERY_TIMEOUT => return Some(n),
            Ok(Some(_)) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => {
                problems.push(format!("reading agent_inbox: {e}"));
                return None;
            }
        }
    }
}

/// A running `agents-server serve --resume` on the run's database.
struct Server {
    process: Background,
    url: String,
}

impl Server {
    /// Starts the server on a free loopback port and waits until it listens.
    fn start(exe: &Path, db: &Path) -> Result<Server, String> {
        let mut cmd = Command::new(exe);
        cmd.args(["serve", "--bind", "127.0.0.1:0", "--db"])
            .arg(db)
            .args(["--resume", "--no-mcp", "--log-level", "warn"])
            // The harness measures durability, not the limits: no rate limit to speak of, and
            // agents that never decide on their own (the clients make all the writes).
            .args(["--rate-limit", "1000000", "--idle-think-seconds", "3600"])
            .env_remove("AGENTS_SERVER_TOKEN");
        let mut process = Background::spawn(&mut cmd, Echo::Quiet)?;
        let line = process.wait_for_line(ws_client_tests::SERVE_MARKER, START_TIMEOUT)?;
        let url = ws_client_tests::parse_ws_url(&line)
            .ok_or_else(|| format!("no ws:// URL in {line:?}"))?;
        Ok(Server { process, url })
    }

    /// Stops the final server with SIGTERM; it must exit cleanly.
    fn stop(self, problems: &mut Vec<String>) {
        let out = self.process.terminate(STOP_GRACE);
        if !out.success() {
            problems.push(format!(
                "the final server did not stop cleanly on SIGTERM ({}):\n{}",
                out.ending(),
                tail(&out.output)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn options_parse() {
        assert_eq!(parse_options(&[]).unwrap(), Options::default());
        let o = parse_options(&s(&["--rounds", "200", "--seed", "42", "--clients", "2"])).unwrap();
        assert_eq!(
            o,
            Options {
                rounds: 200,
                seed: Some(42),
                clients: 2
            }
        );
        for bad in [
            &["--rounds"][..],
            &["--rounds", "0"],
            &["--rounds", "x"],
            &["--seed", "-1"],
            &["--clients", "0"],
            &["--clients", "65"],
            &["--bogus"],
        ] {
            assert!(parse_options(&s(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn summary_line_and_verdict() {
        let mut s = Summary {
            rounds: 3,
            ..Summary::default()
        };
        s.counts.agents = 5;
        s.counts.tasks = 7;
        s.counts.completions = 2;
        s.counts.messages = 11;
        assert_eq!(
            s.line(),
            "killtest: 3 rounds, 5 agents, 7 tasks, 2 completions, 11 messages acknowledged; lost 0; reused 0"
        );
        assert!(s.passed());
        s.undelivered = Some(1);
        assert!(!s.passed());
        s.undelivered = Some(0);
        s.lost.messages.insert("kt0c0m1 hello".into());
        assert!(!s.passed());
        assert!(s.line().ends_with("lost 1; reused 0"));
    }
}
