//! WebSocket server benchmark: `cargo bench -p agents-server --bench ws` (release build,
//! loopback). `cargo xtask bench --only-ws` runs it with the Godot comparison servers.
//!
//! Every measurement talks to a separately spawned `agents-server serve` (the release binary cargo
//! builds for this bench, `CARGO_BIN_EXE_agents-server`) over real sockets with tokio-tungstenite
//! clients living in this process:
//!
//! 1. **Idle connections** — resident memory (`VmRSS` of the server process) before and after
//!    1,000 clients connected and received their `welcome`, settled; reported per connection.
//! 2. **Event fan-out** — 1,000 scripted agents deciding every ~second, 100 clients subscribed to
//!    `agent_state_update`; the messages the clients actually received in a measured window,
//!    plus any `events_dropped` and slow-client closes.
//! 3. **Request → reply latency** — open loop at a fixed offered rate (10,000 and 1,000
//!    requests/s), spread over 100 connections (100 requests/s each: under the default
//!    per-connection rate limit of 200/s, so the server runs with its default limits). A pacer
//!    thread sends request `n` at `t0 + n / rate` whether or not earlier replies came back;
//!    latency is measured from that *scheduled* time to the reply's arrival (no coordinated
//!    omission), and also from the actual send, for comparison.
//! 5. **Acknowledged writes** — 16 connections pipelining `assign_task` and
//!    `send_message` to 50 running agents, 16 requests in flight each; every reply is sent only
//!    after the SQLite commit holding its write, so this is the rate of durable acknowledgements
//!    and their latency (send → reply).
//!
//! 6. **Wide fan-out** — 1,500 connections subscribed to every event of 200 agents
//!    (default agent settings), and one more, well-behaved connection sending a `ping` every
//!    10 ms: its round-trip p50/p99/max while the server fans out, and what the 1,500 received.
//!
//! `cargo bench -p agents-server --bench ws -- NAME` runs only the sections whose name contains
//! `NAME` (`idle`, `fanout`, `latency`, `acked`, `wide`).
//!
//! 4. **Comparison** — the same latency runs against the servers named by
//!    `AGENTS_BENCH_GDSCRIPT_URL` (`godot-project/bench/ws_gdscript_server.gd`: Godot's
//!    `TCPServer` + `WebSocketPeer` in GDScript, answering `get_agent_state` with the same reply,
//!    polling without headless Godot's per-frame sleep while clients are connected), and
//!    `AGENTS_BENCH_GDSCRIPT_DEFAULT_URL` (the same script keeping Godot's default sleep)
//!    and `AGENTS_BENCH_NODE_URL` (`godot-project/server/serve.gd`: the `AgentRuntime` node serving
//!    inside Godot on the release extension). `cargo xtask bench` starts both and sets the
//!    variables; without them the comparison is skipped with a note.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async_with_config};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Idle clients of the memory measurement.
const IDLE_CLIENTS: usize = 1_000;
/// Agents publishing state updates in the fan-out measurement.
const FANOUT_AGENTS: usize = 1_000;
/// Subscribed clients in the fan-out measurement.
const FANOUT_CLIENTS: usize = 100;
/// Seconds a fan-out agent stays idle before deciding on its own.
const FANOUT_IDLE_SECONDS: f64 = 2.0;
/// The fan-out agents' thinking latency.
const FANOUT_THINKING_SECONDS: f64 = 0.05;
/// How long a fan-out agent speaks a line.
const FANOUT_SPEAKING_SECONDS: f64 = 0.1;
/// Fan-out warm-up (agents spread their decisions out) and measured window.
const FANOUT_WARMUP: Duration = Duration::from_secs(3);
const FANOUT_WINDOW: Duration = Duration::from_secs(10);
/// Connections the open-loop load is spread over.
const LOAD_CONNECTIONS: usize = 100;
/// Open-loop warm-up (not counted) and measured span.
const LOAD_WARMUP: Duration = Duration::from_secs(1);
const LOAD_MEASURE: Duration = Duration::from_secs(4);
/// How long replies may still arrive after the last scheduled send.
const LOAD_DRAIN: Duration = Duration::from_secs(5);
/// The GDScript baseline polling as fast as it can (no per-frame sleep while clients are on).
const GDSCRIPT_TUNED: &str = "GDScript TCPServer+WebSocketPeer (no frame sleep)";
/// The same script with headless Godot's default 6.9 ms sleep after every frame.
const GDSCRIPT_DEFAULT: &str =
    "GDScript TCPServer+WebSocketPeer (Godot's default headless frame sleep)";
/// The offered rates of the latency runs.
const RATES: [u32; 2] = [10_000, 1_000];
/// The game tool of the `call_tool` runs: one chess move from the start position.
const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn main() {
    println!("## WebSocket server (`cargo bench -p agents-server --bench ws`)\n");
    println!(
        "Release build, loopback; machine: {} cores, load {}.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        loadavg()
    );
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => fail(&format!("cannot start tokio: {e}")),
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => fail(&format!("cannot create a temporary directory: {e}")),
    };
    // `cargo bench` passes `--bench`; the first other argument picks the sections.
    let only = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_default();
    if let Err(e) = rt.block_on(run_all(dir.path(), &only)) {
        fail(&e);
    }
}

fn fail(message: &str) -> ! {
    eprintln!("ws bench failed: {message}");
    std::process::exit(1);
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

async fn run_all(dir: &Path, only: &str) -> Result<(), String> {
    let runs = |name: &str| name.contains(only);
    // 1. Memory per idle connection.
    if runs("idle") {
        let server = ServerProc::start(&dir.join("idle.db"), &[])?;
        idle_connections(&server).await?;
        server.stop()?;
    }

    // 2. Fan-out. The control connection spawns 1,000 agents back to back, which the default
    // per-connection rate limit (200/s) would refuse: raise it for this server.
    if runs("fanout") {
        let server = ServerProc::start(&dir.join("fanout.db"), &["--rate-limit", "100000"])?;
        fanout(&server).await?;
        server.stop()?;
    }

    // 6. Wide fan-out (the spawning connection needs a higher rate limit).
    if runs("wide") {
        println!(
            "### Wide fan-out: {WIDE_CLIENTS} connections × every event of {WIDE_AGENTS} agents, and one pinging client\n"
        );
        println!(
            "| agents' idle_think_seconds | ping p50 | ping p99 | ping max | pings | events published / s | events delivered / s | events_dropped reports | closed connections | server CPU |"
        );
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for idle in WIDE_IDLE_THINK {
            let db = dir.join(format!("wide-{idle}.db"));
            let server = ServerProc::start(&db, &["--rate-limit", "100000"])?;
            wide_fanout(&server, idle).await?;
            server.stop()?;
        }
        println!(
            "\n(agents: scripted brain, default settings but `idle_think_seconds`; the {WIDE_CLIENTS} connections keep the default subscription (every event) and read as fast as they can, in this process; the pinger sends one `ping` every {} ms and waits for its `pong`; {} s warm-up, {} s window; server CPU = % of one core)\n",
            WIDE_PING_EVERY.as_millis(),
            WIDE_WARMUP.as_secs(),
            WIDE_WINDOW.as_secs()
        );
    }

    // 5. Acknowledged writes (pipelined clients: no rate limit in the way).
    // Three times: agents forming memories of every line they hear and say and every task they
    // are given and recalling before every decision (the default); forming them without
    // recalling (the memory writes alone); and with memory off, as before agents remembered.
    if runs("acked") {
        for (label, memory) in [
            ("memory on", r#"{"enabled": true}"#),
            ("memories formed, none recalled", r#"{"recall_limit": 0}"#),
            ("memory off", r#"{"enabled": false}"#),
        ] {
            let server = ServerProc::start(
                &dir.join(format!("acked-{}.db", label.replace(' ', "-"))),
                &[
                    "--rate-limit",
                    "1000000",
                    "--idle-think-seconds",
                    "3600",
                    "--memory",
                    memory,
                ],
            )?;
            println!("({label})\n");
            acked_writes(&server).await?;
            server.stop()?;
        }
    }
    if !runs("latency") {
        return Ok(());
    }

    // 3 and 4. Latency, our server (default limits) and the comparison servers.
    let server = ServerProc::start(&dir.join("latency.db"), &[])?;
    let mut targets = vec![Target {
        name: "agents-server",
        url: server.url.clone(),
        tools: true,
    }];
    let gdscript = std::env::var("AGENTS_BENCH_GDSCRIPT_URL").ok();
    let node = std::env::var("AGENTS_BENCH_NODE_URL").ok();
    if let Some(url) = node.filter(|u| !u.is_empty()) {
        targets.push(Target {
            name: "Godot AgentRuntime node",
            url,
            tools: true,
        });
    }
    if let Some(url) = gdscript.filter(|u| !u.is_empty()) {
        targets.push(Target {
            name: GDSCRIPT_TUNED,
            url,
            tools: false,
        });
    }
    let gdscript_default = std::env::var("AGENTS_BENCH_GDSCRIPT_DEFAULT_URL").ok();
    if let Some(url) = gdscript_default.filter(|u| !u.is_empty()) {
        targets.push(Target {
            name: GDSCRIPT_DEFAULT,
            url,
            tools: false,
        });
    }
    let results = latency(&targets).await;
    server.stop()?;
    let results = results?;
    ratios(&results);
    Ok(())
}

/// A running `agents-server serve` on an ephemeral loopback port.
struct ServerProc {
    child: Child,
    url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl ServerProc {
    fn start(db: &Path, extra: &[&str]) -> Result<ServerProc, String> {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agents-server"));
        cmd.args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--log-level",
            "warn",
            "--db",
        ])
        .arg(db)
        .args(extra)
        .env_remove("AGENTS_SERVER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start agents-server serve: {e}"))?;
        let stderr = child
            .stderr
            .take()
            .ok_or("agents-server stderr is not piped")?;
        let (tx, rx) = std_mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
                if let Ok(mut lines) = sink.lock() {
                    lines.push(line);
                }
            }
        });
        let mut server = ServerProc {
            child,
            url: String::new(),
            log,
        };
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => {
                server.url = url;
                Ok(server)
            }
            Err(_) => Err(format!(
                "agents-server serve did not start:\n{}",
                server.log_text()
            )),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn log_text(&self) -> String {
        self.log.lock().map(|l| l.join("\n")).unwrap_or_default()
    }

    /// SIGTERM, then waits for a clean exit (graceful shutdown stops every agent).
    fn stop(mut self) -> Result<(), String> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!(
                        "agents-server exited with {status}:\n{}",
                        self.log_text()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("cannot wait for agents-server: {e}")),
            }
        }
        Err(format!(
            "agents-server did not stop within 30 s of SIGTERM:\n{}",
            self.log_text()
        ))
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `VmRSS` of a process in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The next text message (skipping pings); an error on close or failure.
async fn next_text(ws: &mut Ws) -> Result<String, String> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return Ok(t.to_string()),
            Some(Ok(Message::Close(frame))) => {
                return Err(format!("closed by the server: {frame:?}"));
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("read failed: {e}")),
            None => return Err("the connection ended".into()),
        }
    }
}

/// Connects (with `TCP_NODELAY`, as a latency-minded client would) and waits for the `welcome`.
async fn connect(url: &str) -> Result<Ws, String> {
    let connecting = connect_async_with_config(url, None, true);
    let (mut ws, _) = tokio::time::timeout(Duration::from_secs(20), connecting)
        .await
        .map_err(|_| format!("connecting to {url} took over 20 s"))?
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    let first = tokio::time::timeout(Duration::from_secs(20), next_text(&mut ws))
        .await
        .map_err(|_| format!("no welcome from {url} within 20 s"))??;
    let v: Value = serde_json::from_str(&first).map_err(|e| format!("bad welcome {first}: {e}"))?;
    if v["type"] != "welcome" {
        return Err(format!("expected a welcome from {url}, got {first}"));
    }
    Ok(ws)
}

/// Sends `req` with `request_id` = `id` and returns its reply (events in between are skipped);
/// an `error` reply is an error.
async fn request(ws: &mut Ws, mut req: Value, id: &str) -> Result<Value, String> {
    req["request_id"] = json!(id);
    ws.send(Message::text(req.to_string()))
        .await
        .map_err(|e| format!("send failed: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let text = tokio::time::timeout(left, next_text(ws))
            .await
            .map_err(|_| format!("no reply to {req} within 30 s"))??;
        let v: Value =
            serde_json::from_str(&text).map_err(|e| format!("reply is not JSON ({e}): {text}"))?;
        if v["request_id"] == id {
            if v["type"] == "error" {
                return Err(format!("{req} failed: {text}"));
            }
            return Ok(v);
        }
    }
}

/// `subscribe` to only these event types.
async fn subscribe(ws: &mut Ws, events: &[&str]) -> Result<(), String> {
    request(
        ws,
        json!({"type": "subscribe", "events": events}),
        "subscribe",
    )
    .await?;
    Ok(())
}

async fn close_all(clients: Vec<Ws>) {
    for mut ws in clients {
        let _ = tokio::time::timeout(Duration::from_millis(200), ws.close(None)).await;
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// ------------------------------------------------------------------------------------------------
// 1. Idle connections

async fn idle_connections(server: &ServerProc) -> Result<(), String> {
    let pid = server.pid();
    // One connection first, so the lazily built parts (accept path, first subscription) are in
    // the baseline, then let the server settle.
    let warm = connect(&server.url).await?;
    close_all(vec![warm]).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = rss_kib(pid).ok_or("cannot read the server's VmRSS")?;
    let started = Instant::now();
    let mut clients = Vec::with_capacity(IDLE_CLIENTS);
    let mut failures = Vec::new();
    for wave in (0..IDLE_CLIENTS).step_by(100) {
        let n = 100.min(IDLE_CLIENTS - wave);
        let results = futures_util::future::join_all((0..n).map(|_| connect(&server.url))).await;
        for r in results {
            match r {
                Ok(ws) => clients.push(ws),
                Err(e) => failures.push(e),
            }
        }
    }
    let connect_time = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = rss_kib(pid).ok_or("cannot read the server's VmRSS")?;
    let connected = clients.len();
    println!(
        "### Idle connections: `agents-server serve` memory with {IDLE_CLIENTS} connected clients\n"
    );
    println!(
        "| clients connected (welcomed) / attempted | connect time | server RSS before | RSS after (settled 2 s) | per idle connection |"
    );
    println!("|---|---:|---:|---:|---:|");
    let per = if connected > 0 {
        format!(
            "{:.1} KiB",
            after.saturating_sub(before) as f64 / connected as f64
        )
    } else {
        "n/a".into()
    };
    println!(
        "| {connected} / {IDLE_CLIENTS} | {:.2} s | {} KiB | {} KiB | {per} |\n",
        connect_time.as_secs_f64(),
        thousands(before),
        thousands(after),
    );
    if let Some(first) = failures.first() {
        println!(
            "({} connections failed; the first: {first})\n",
            failures.len()
        );
    }
    close_all(clients).await;
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// 2. Fan-out

#[derive(Default)]
struct FanoutCounters {
    /// `agent_state_update`s received, per client.
    updates: Vec<AtomicU64>,
    other: AtomicU64,
    dropped: AtomicU64,
    closes: Mutex<Vec<String>>,
}

async fn read_events(mut ws: Ws, counters: Arc<FanoutCounters>, client: usize) {
    let reason = loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => {
                let t = t.as_str();
                if t.contains("\"agent_state_update\"") {
                    counters.updates[client].fetch_add(1, Ordering::Relaxed);
                } else if t.contains("\"events_dropped\"") {
                    let missed = serde_json::from_str::<Value>(t)
                        .ok()
                        .and_then(|v| v["missed"].as_u64())
                        .unwrap_or(0);
                    counters.dropped.fetch_add(missed, Ordering::Relaxed);
                } else {
                    counters.other.fetch_add(1, Ordering::Relaxed);
                }
            }
            Some(Ok(Message::Close(frame))) => break format!("closed: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => break format!("error: {e}"),
            None => break "ended".to_string(),
        }
    };
    if let Ok(mut closes) = counters.closes.lock() {
        closes.push(reason);
    }
}

async fn fanout(server: &ServerProc) -> Result<(), String> {
    let counters = Arc::new(FanoutCounters {
        updates: (0..FANOUT_CLIENTS).map(|_| AtomicU64::new(0)).collect(),
        ..FanoutCounters::default()
    });
    let mut readers = Vec::with_capacity(FANOUT_CLIENTS);
    for client in 0..FANOUT_CLIENTS {
        let mut ws = connect(&server.url).await?;
        subscribe(&mut ws, &["agent_state_update"]).await?;
        readers.push(tokio::spawn(read_events(ws, counters.clone(), client)));
    }
    let mut control = connect(&server.url).await?;
    subscribe(&mut control, &[]).await?;
    // Spawned in batches spread over one decision cycle, so the agents' decisions are spread out
    // too (1,000 agents deciding in the same instant would be a burst no outbound queue absorbs).
    let spawn_started = Instant::now();
    let cycle = FANOUT_IDLE_SECONDS + FANOUT_THINKING_SECONDS + FANOUT_SPEAKING_SECONDS;
    let batches = 50;
    for i in 0..FANOUT_AGENTS {
        if i % (FANOUT_AGENTS / batches) == 0 {
            let batch = (i / (FANOUT_AGENTS / batches)) as f64;
            let due = spawn_started + Duration::from_secs_f64(cycle * batch / batches as f64);
            tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
        }
        let req = json!({
            "type": "agent_spawn_request",
            "request_id": i,
            "agent_config": {
                "name": format!("Fan {i}"),
                "role": "villager",
                "idle_think_seconds": FANOUT_IDLE_SECONDS,
                "thinking_seconds": FANOUT_THINKING_SECONDS,
                "speaking_seconds": FANOUT_SPEAKING_SECONDS,
                "initial_position": {"x": (i % 40) as f64 * 2.5, "y": (i / 40) as f64 * 4.0},
            },
        });
        control
            .send(Message::text(req.to_string()))
            .await
            .map_err(|e| format!("send failed: {e}"))?;
    }
    let mut spawned = 0;
    while spawned < FANOUT_AGENTS {
        let text = tokio::time::timeout(Duration::from_secs(60), next_text(&mut control))
            .await
            .map_err(|_| format!("only {spawned} agents spawned within 60 s"))??;
        if text.contains("\"agent_spawn_response\"") {
            spawned += 1;
        } else if text.contains("\"error\"") {
            return Err(format!("spawning failed: {text}"));
        }
    }
    let spawn_time = spawn_started.elapsed();
    tokio::time::sleep(FANOUT_WARMUP).await;
    let snapshot = |c: &FanoutCounters| -> Vec<u64> {
        c.updates
            .iter()
            .map(|u| u.load(Ordering::Relaxed))
            .collect()
    };
    let u0 = snapshot(&counters);
    let d0 = counters.dropped.load(Ordering::Relaxed);
    let t0 = Instant::now();
    let load0 = cpu_ticks(server.pid());
    tokio::time::sleep(FANOUT_WINDOW).await;
    let window = t0.elapsed().as_secs_f64();
    let u1 = snapshot(&counters);
    let d1 = counters.dropped.load(Ordering::Relaxed);
    let load1 = cpu_ticks(server.pid());
    let closes = counters
        .closes
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    for r in &readers {
        r.abort();
    }
    close_all(vec![control]).await;

    let per_client: Vec<u64> = u0.iter().zip(&u1).map(|(a, b)| b - a).collect();
    let delivered = per_client.iter().sum::<u64>() as f64 / window;
    // Every client receives every state update: the busiest client saw the published rate.
    let published = per_client.iter().copied().max().unwrap_or(0) as f64 / window;
    println!(
        "### Event fan-out: {FANOUT_AGENTS} agents → {FANOUT_CLIENTS} clients subscribed to `agent_state_update`\n"
    );
    println!(
        "| agents | clients | window | state updates published / s (per client received) | delivered messages / s | events_dropped (missed) | slow-client closes | server CPU |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    let cpu = match (load0, load1) {
        (Some(a), Some(b)) => format!("{:.0} %", (b - a) as f64 / window),
        _ => "n/a".into(),
    };
    println!(
        "| {FANOUT_AGENTS} | {FANOUT_CLIENTS} | {window:.1} s | {} | **{}** | {} | {} | {cpu} |\n",
        thousands(published as u64),
        thousands(delivered as u64),
        thousands(d1 - d0),
        closes.len(),
    );
    println!(
        "(agents: scripted brain, idle_think_seconds {FANOUT_IDLE_SECONDS}, thinking_seconds {FANOUT_THINKING_SECONDS}, speaking_seconds {FANOUT_SPEAKING_SECONDS}; {FANOUT_AGENTS} spawned over one connection in {:.2} s, in batches spread over one decision cycle; {} s warm-up; server `--rate-limit 100000` for the spawning connection, default `--outbound-queue 1024`; server CPU = % of one core)\n",
        spawn_time.as_secs_f64(),
        FANOUT_WARMUP.as_secs()
    );
    if let Some(first) = closes.first() {
        println!("(first client close: {first})\n");
    }
    Ok(())
}

/// User + system CPU ticks (1/100 s) of a process.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

// ------------------------------------------------------------------------------------------------
// 3 and 4. Latency

/// A server the latency runs talk to.
struct Target {
    name: &'static str,
    url: String,
    /// Whether it serves the game tools (`call_tool`).
    tools: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    GetAgentState,
    CallTool,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::GetAgentState => "`get_agent_state`",
            Kind::CallTool => "`call_tool` apply_chess_move",
        }
    }

    fn payload(self, agent_id: &str, seq: u64) -> String {
        match self {
            Kind::GetAgentState => format!(
                "{{\"type\":\"get_agent_state\",\"agent_id\":\"{agent_id}\",\"request_id\":{seq}}}"
            ),
            Kind::CallTool => format!(
                "{{\"type\":\"call_tool\",\"name\":\"apply_chess_move\",\"arguments\":{{\"fen\":\"{START_FEN}\",\"moveUci\":\"e2e4\"}},\"request_id\":{seq}}}"
            ),
        }
    }

    /// Checks one reply's shape (so every server is measured answering the same thing).
    fn check(self, reply: &Value, agent_id: &str) -> Result<(), String> {
        let ok = match self {
            Kind::GetAgentState => {
                reply["type"] == "get_agent_state_response"
                    && reply["agent"]["agent_id"] == agent_id
                    && reply["agent"]["state"].is_string()
                    && reply["agent"]["position"]["x"].is_number()
                    && reply["agent"]["name"] == "Bench"
            }
            Kind::CallTool => {
                reply["type"] == "call_tool_response"
                    && reply["is_error"] == false
                    && reply["structured_content"].is_object()
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!("unexpected reply shape: {reply}"))
        }
    }
}

/// One open-loop run's outcome.
struct LoadResult {
    target: &'static str,
    kind: Kind,
    rate: u32,
    sent: usize,
    answered: usize,
    errors: usize,
    achieved: f64,
    /// Nanoseconds from the scheduled send to the reply, sorted.
    from_schedule: Vec<u64>,
    /// Nanoseconds from the actual send to the reply, sorted.
    from_send: Vec<u64>,
}

impl LoadResult {
    fn p(&self, q: f64) -> u64 {
        percentile(&self.from_schedule, q)
    }
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((q / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn fmt_ns(ns: u64) -> String {
    if ns >= 10_000_000 {
        format!("{:.0} ms", ns as f64 / 1e6)
    } else if ns >= 1_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{} µs", ns / 1_000)
    }
}

/// The integer after `"request_id":` in a reply (GDScript may print it as `12.0`).
fn request_id_of(text: &str) -> Option<u64> {
    let at = text.find("\"request_id\"")? + "\"request_id\"".len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse().ok()
}

fn is_error_reply(text: &str) -> bool {
    text.contains("\"type\":\"error\"") || text.contains("\"type\": \"error\"")
}

async fn latency(targets: &[Target]) -> Result<Vec<LoadResult>, String> {
    println!(
        "### Request → reply latency, open loop ({LOAD_CONNECTIONS} connections, {} s warm-up + {} s measured per row)\n",
        LOAD_WARMUP.as_secs(),
        LOAD_MEASURE.as_secs()
    );
    println!(
        "| server | request | offered / s | answered / sent | errors | achieved / s | p50 | p99 | p99.9 | max | p50 (from send) | p99 (from send) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut results = Vec::new();
    for &rate in &RATES {
        for target in targets {
            for kind in [Kind::GetAgentState, Kind::CallTool] {
                if kind == Kind::CallTool && !target.tools {
                    continue;
                }
                let r = open_loop(target, kind, rate).await?;
                let mark = if r.answered < r.sent { "≥ " } else { "" };
                println!(
                    "| {} | {} | {} | {} / {} | {} | {} | {mark}{} | {mark}{} | {mark}{} | {mark}{} | {} | {} |",
                    r.target,
                    kind.label(),
                    thousands(u64::from(rate)),
                    thousands(r.answered as u64),
                    thousands(r.sent as u64),
                    r.errors,
                    thousands(r.achieved as u64),
                    fmt_ns(r.p(50.0)),
                    fmt_ns(r.p(99.0)),
                    fmt_ns(r.p(99.9)),
                    fmt_ns(r.from_schedule.last().copied().unwrap_or(0)),
                    fmt_ns(percentile(&r.from_send, 50.0)),
                    fmt_ns(percentile(&r.from_send, 99.0)),
                );
                results.push(r);
            }
        }
    }
    println!(
        "\n(latency from the scheduled send time: request n is due at t0 + n / rate and sent then by a pacer thread whether or not earlier replies arrived; \"from send\" starts when the client handed the frame to its socket. Percentiles over the measured span's answered requests; \"≥\" marks rows where some requests were not answered within {} s. {LOAD_CONNECTIONS} connections × rate/{LOAD_CONNECTIONS} each: 100 requests/s per connection at 10,000/s, under the default per-connection limit of 200/s, so every server runs with its default limits. Clients: tokio-tungstenite in the bench process on the same machine.)\n",
        LOAD_DRAIN.as_secs()
    );
    if !targets.iter().any(|t| !t.tools) {
        println!(
            "(comparison skipped: AGENTS_BENCH_GDSCRIPT_URL / AGENTS_BENCH_NODE_URL are not set; `cargo xtask bench --only-ws` starts the Godot servers and sets them)\n"
        );
    }
    Ok(results)
}

async fn open_loop(target: &Target, kind: Kind, rate: u32) -> Result<LoadResult, String> {
    let url = &target.url;
    let mut control = connect(url).await?;
    subscribe(&mut control, &[]).await?;
    let spawned = request(
        &mut control,
        json!({
            "type": "agent_spawn_request",
            "agent_config": {"name": "Bench", "role": "benchmark", "idle_think_seconds": 3600.0},
        }),
        "spawn",
    )
    .await?;
    let agent_id = spawned["agent_id"]
        .as_str()
        .ok_or_else(|| format!("{}: no agent_id in {spawned}", target.name))?
        .to_string();
    let probe: Value =
        serde_json::from_str(&kind.payload(&agent_id, 0)).map_err(|e| e.to_string())?;
    let reply = request(&mut control, probe, "probe").await?;
    kind.check(&reply, &agent_id)
        .map_err(|e| format!("{}: {e}", target.name))?;

    let total = (f64::from(rate) * (LOAD_WARMUP + LOAD_MEASURE).as_secs_f64()) as u64;
    let warm = (f64::from(rate) * LOAD_WARMUP.as_secs_f64()) as u64;
    let interval_ns = 1e9 / f64::from(rate);
    let sent_ns: Arc<Vec<AtomicU64>> = Arc::new((0..total).map(|_| AtomicU64::new(0)).collect());
    let mut senders = Vec::with_capacity(LOAD_CONNECTIONS);
    let mut connections = Vec::with_capacity(LOAD_CONNECTIONS);
    for _ in 0..LOAD_CONNECTIONS {
        let mut ws = connect(url).await?;
        subscribe(&mut ws, &[]).await?;
        connections.push(ws);
    }
    let t0 = Instant::now() + Duration::from_millis(200);
    let deadline = tokio::time::Instant::from_std(t0 + LOAD_WARMUP + LOAD_MEASURE + LOAD_DRAIN);
    let mut readers = Vec::with_capacity(LOAD_CONNECTIONS);
    let mut writers = Vec::with_capacity(LOAD_CONNECTIONS);
    for (c, ws) in connections.into_iter().enumerate() {
        let (mut sink, mut stream) = ws.split();
        let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
        senders.push(tx);
        let sent = sent_ns.clone();
        let agent = agent_id.clone();
        // The writer hands its half back instead of closing: a close frame right after the last
        // request would race that request's reply.
        writers.push(tokio::spawn(async move {
            while let Some(seq) = rx.recv().await {
                let text = kind.payload(&agent, seq);
                let now = Instant::now().saturating_duration_since(t0).as_nanos() as u64;
                sent[seq as usize].store(now, Ordering::Relaxed);
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            sink
        }));
        let expected = (c as u64..total).step_by(LOAD_CONNECTIONS).count();
        readers.push(tokio::spawn(async move {
            let mut got: Vec<(u64, u64)> = Vec::with_capacity(expected);
            let mut errors = 0usize;
            while got.len() + errors < expected {
                let next = tokio::time::timeout_at(deadline, stream.next()).await;
                let Ok(Some(Ok(msg))) = next else { break };
                let Message::Text(text) = msg else { continue };
                let at = Instant::now().saturating_duration_since(t0).as_nanos() as u64;
                if is_error_reply(text.as_str()) {
                    errors += 1;
                } else if let Some(seq) = request_id_of(text.as_str()) {
                    got.push((seq, at));
                }
            }
            (got, errors, stream)
        }));
    }
    let pacer = std::thread::spawn(move || {
        for seq in 0..total {
            let due = t0 + Duration::from_nanos((seq as f64 * interval_ns) as u64);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if senders[(seq % LOAD_CONNECTIONS as u64) as usize]
                .send(seq)
                .is_err()
            {
                break;
            }
        }
    });
    let mut from_schedule = Vec::new();
    let mut from_send = Vec::new();
    let mut errors = 0;
    let mut last_reply = 0u64;
    let mut finished = Vec::with_capacity(LOAD_CONNECTIONS);
    for (r, w) in readers.into_iter().zip(writers) {
        let (got, e, stream) = r.await.map_err(|e| format!("reader task failed: {e}"))?;
        let sink = w.await.map_err(|e| format!("writer task failed: {e}"))?;
        if let Ok(ws) = sink.reunite(stream) {
            finished.push(ws);
        }
        errors += e;
        for (seq, at) in got {
            if seq >= total {
                continue;
            }
            if seq >= warm {
                let scheduled = (seq as f64 * interval_ns) as u64;
                from_schedule.push(at.saturating_sub(scheduled));
                from_send.push(at.saturating_sub(sent_ns[seq as usize].load(Ordering::Relaxed)));
                last_reply = last_reply.max(at);
            }
        }
    }
    let _ = pacer.join();
    close_all(finished).await;
    from_schedule.sort_unstable();
    from_send.sort_unstable();
    let measured_start = (warm as f64 * interval_ns) as u64;
    let span = last_reply.saturating_sub(measured_start).max(1) as f64 / 1e9;
    let achieved = from_schedule.len() as f64 / span;
    // Clean up: the agent goes, so every run starts from one agent.
    let _ = request(
        &mut control,
        json!({"type": "agent_terminate_request", "agent_id": agent_id}),
        "terminate",
    )
    .await;
    close_all(vec![control]).await;
    Ok(LoadResult {
        target: target.name,
        kind,
        rate,
        sent: (total - warm) as usize,
        answered: from_schedule.len(),
        errors,
        achieved,
        from_schedule,
        from_send,
    })
}

/// p50 / p99 of the GDScript server divided by ours, per rate.
fn ratios(results: &[LoadResult]) {
    let Some(_) = results.iter().find(|r| r.target.starts_with("GDScript")) else {
        return;
    };
    println!(
        "### Ratio: GDScript server latency ÷ ours (`get_agent_state`; > 1 = ours is faster)\n"
    );
    println!(
        "| offered / s | GDScript server | server | p50 ratio | p99 ratio | achieved / s: ours vs GDScript |"
    );
    println!("|---:|---|---|---:|---:|---:|");
    for &rate in &RATES {
        let find = |name: &str| {
            results.iter().find(|r| {
                r.rate == rate && r.kind == Kind::GetAgentState && r.target.starts_with(name)
            })
        };
        for (baseline, label) in [
            (GDSCRIPT_TUNED, "no frame sleep"),
            (GDSCRIPT_DEFAULT, "default frame sleep"),
        ] {
            let Some(gd) = find(baseline) else { continue };
            for ours in ["agents-server", "Godot AgentRuntime"] {
                let Some(r) = find(ours) else { continue };
                let ratio = |a: u64, b: u64| {
                    if b == 0 {
                        "n/a".to_string()
                    } else {
                        format!("{:.1}×", a as f64 / b as f64)
                    }
                };
                println!(
                    "| {} | {label} | {} | {} | {} | {} vs {} |",
                    thousands(u64::from(rate)),
                    r.target,
                    ratio(gd.p(50.0), r.p(50.0)),
                    ratio(gd.p(99.0), r.p(99.0)),
                    thousands(r.achieved as u64),
                    thousands(gd.achieved as u64),
                );
            }
        }
    }
    println!();
}

// ------------------------------------------------------------------------------------------------
// 5. Acknowledged writes
// ------------------------------------------------------------------------------------------------

/// Running agents the writes go to.
const ACKED_AGENTS: usize = 50;
/// Pipelining connections.
const ACKED_CONNECTIONS: usize = 16;
/// Requests each connection keeps in flight.
const ACKED_IN_FLIGHT: usize = 16;
const ACKED_WARMUP: Duration = Duration::from_secs(1);
const ACKED_MEASURE: Duration = Duration::from_secs(5);

/// What one pipelining connection saw in the measured window.
#[derive(Default)]
struct AckedResult {
    /// Send → reply of every acknowledged write, in ns.
    latencies: Vec<u64>,
    errors: u64,
}

/// Keeps [`ACKED_IN_FLIGHT`] writes in flight on one connection until `end`; measures those
/// sent after `measure_from`.
async fn acked_client(
    mut ws: Ws,
    agents: Arc<Vec<String>>,
    client: usize,
    measure_from: Instant,
    end: Instant,
) -> Result<AckedResult, String> {
    let mut sent: std::collections::HashMap<u64, Instant> = std::collections::HashMap::new();
    let mut result = AckedResult::default();
    let mut n: u64 = 0;
    loop {
        while sent.len() < ACKED_IN_FLIGHT && Instant::now() < end {
            n += 1;
            let agent = &agents[(client * 7 + n as usize) % agents.len()];
            let req = if n.is_multiple_of(2) {
                json!({"type": "assign_task", "agent_id": agent, "task_name": format!("task {client}.{n}"), "request_id": n})
            } else {
                json!({"type": "send_message", "agent_id": agent, "content": format!("line {client}.{n}"), "request_id": n})
            };
            ws.feed(Message::text(req.to_string()))
                .await
                .map_err(|e| format!("send failed: {e}"))?;
            sent.insert(n, Instant::now());
        }
        ws.flush().await.map_err(|e| format!("flush failed: {e}"))?;
        if sent.is_empty() {
            break;
        }
        let text = tokio::time::timeout(Duration::from_secs(30), next_text(&mut ws))
            .await
            .map_err(|_| "no reply within 30 s".to_string())??;
        let Some(id) = request_id_of(&text) else {
            continue; // an event
        };
        let Some(at) = sent.remove(&id) else {
            continue;
        };
        if at < measure_from {
            continue;
        }
        if is_error_reply(&text) {
            result.errors += 1;
        } else {
            result.latencies.push(at.elapsed().as_nanos() as u64);
        }
    }
    let _ = ws.close(None).await;
    Ok(result)
}

async fn acked_writes(server: &ServerProc) -> Result<(), String> {
    println!("### Acknowledged writes (every write reply waits for its commit)\n");
    let mut control = connect(&server.url).await?;
    subscribe(&mut control, &[]).await?;
    let mut agents = Vec::new();
    for i in 0..ACKED_AGENTS {
        let reply = request(
            &mut control,
            json!({"type": "agent_spawn_request", "agent_config": {"name": format!("Writer {i}")}}),
            &format!("spawn-{i}"),
        )
        .await?;
        agents.push(reply["agent_id"].as_str().unwrap_or_default().to_string());
    }
    let agents = Arc::new(agents);
    let mut clients = Vec::new();
    for _ in 0..ACKED_CONNECTIONS {
        let mut ws = connect(&server.url).await?;
        subscribe(&mut ws, &[]).await?;
        clients.push(ws);
    }
    let start = Instant::now();
    let measure_from = start + ACKED_WARMUP;
    let end = measure_from + ACKED_MEASURE;
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, ws)| tokio::spawn(acked_client(ws, agents.clone(), i, measure_from, end)))
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let r = task
            .await
            .map_err(|e| format!("client task failed: {e}"))??;
        latencies.extend(r.latencies);
        errors += r.errors;
    }
    latencies.sort_unstable();
    let acked = latencies.len() as u64;
    let per_sec = acked as f64 / ACKED_MEASURE.as_secs_f64();
    println!("| acknowledged writes/s | p50 | p99 | max | errors |");
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {} | {} | {} | {errors} |\n",
        thousands(per_sec as u64),
        fmt_ns(percentile(&latencies, 0.50)),
        fmt_ns(percentile(&latencies, 0.99)),
        fmt_ns(latencies.last().copied().unwrap_or(0)),
    );
    println!(
        "({ACKED_CONNECTIONS} connections × {ACKED_IN_FLIGHT} requests in flight, `assign_task` and `send_message` alternating over {ACKED_AGENTS} running agents (scripted brain, they answer the lines); {} s warm-up, {} s measured; latency from the request's send to its reply; server `--rate-limit 1000000`)\n",
        ACKED_WARMUP.as_secs(),
        ACKED_MEASURE.as_secs()
    );
    close_all(vec![control]).await;
    Ok(())
}

// ------------------------------------------------------------------------------------------------
// 6. Wide fan-out
// ------------------------------------------------------------------------------------------------

const WIDE_CLIENTS: usize = 1_500;
const WIDE_AGENTS: usize = 200;
const WIDE_WARMUP: Duration = Duration::from_secs(5);
const WIDE_WINDOW: Duration = Duration::from_secs(10);
const WIDE_PING_EVERY: Duration = Duration::from_millis(10);
/// The agents' `idle_think_seconds` per run: the default, and five times as many decisions.
const WIDE_IDLE_THINK: [f64; 2] = [5.0, 1.0];

/// Counts every event a client receives until it is closed.
async fn count_events(mut ws: Ws, received: Arc<AtomicU64>, counters: Arc<FanoutCounters>) {
    let reason = loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => {
                if t.as_str().contains("\"events_dropped\"") {
                    counters.dropped.fetch_add(1, Ordering::Relaxed);
                }
                received.fetch_add(1, Ordering::Relaxed);
            }
            Some(Ok(Message::Close(frame))) => break format!("closed: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => break format!("error: {e}"),
            None => break "ended".to_string(),
        }
    };
    if let Ok(mut closes) = counters.closes.lock() {
        closes.push(reason);
    }
}

async fn wide_fanout(server: &ServerProc, idle_think: f64) -> Result<(), String> {
    let received = Arc::new(AtomicU64::new(0));
    let counters = Arc::new(FanoutCounters::default());
    let mut readers = Vec::with_capacity(WIDE_CLIENTS);
    for _ in 0..WIDE_CLIENTS {
        let ws = connect(&server.url).await?;
        readers.push(tokio::spawn(count_events(
            ws,
            received.clone(),
            counters.clone(),
        )));
    }
    let mut control = connect(&server.url).await?;
    subscribe(&mut control, &[]).await?;
    for i in 0..WIDE_AGENTS {
        request(
            &mut control,
            json!({"type": "agent_spawn_request", "agent_config": {
                "name": format!("Crowd {i}"),
                "idle_think_seconds": idle_think,
                "initial_position": {"x": (i % 20) as f64 * 5.0, "y": (i / 20) as f64 * 10.0},
            }}),
            &format!("spawn-{i}"),
        )
        .await?;
    }
    let mut pinger = connect(&server.url).await?;
    subscribe(&mut pinger, &[]).await?;
    // Every event once: the busiest connection's count is the published rate.
    let mut witness = connect(&server.url).await?;
    let published = Arc::new(AtomicU64::new(0));
    let witness_counters = Arc::new(FanoutCounters::default());
    subscribe(&mut witness, &[]).await?;
    request(&mut witness, json!({"type": "subscribe"}), "all").await?;
    let witness = tokio::spawn(count_events(witness, published.clone(), witness_counters));
    tokio::time::sleep(WIDE_WARMUP).await;
    let p0 = published.load(Ordering::Relaxed);

    let r0 = received.load(Ordering::Relaxed);
    let cpu0 = cpu_ticks(server.pid());
    let t0 = Instant::now();
    let mut rtts = Vec::new();
    let mut n = 0u64;
    while t0.elapsed() < WIDE_WINDOW {
        n += 1;
        let sent = Instant::now();
        request(&mut pinger, json!({"type": "ping"}), &format!("p{n}")).await?;
        rtts.push(sent.elapsed().as_nanos() as u64);
        tokio::time::sleep_until(tokio::time::Instant::from_std(sent + WIDE_PING_EVERY)).await;
    }
    let window = t0.elapsed().as_secs_f64();
    let r1 = received.load(Ordering::Relaxed);
    let p1 = published.load(Ordering::Relaxed);
    let cpu1 = cpu_ticks(server.pid());
    witness.abort();
    let closes = counters
        .closes
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    for r in &readers {
        r.abort();
    }
    close_all(vec![control, pinger]).await;
    rtts.sort_unstable();
    let cpu = match (cpu0, cpu1) {
        (Some(a), Some(b)) => format!("{:.0} %", (b - a) as f64 / window),
        _ => "n/a".into(),
    };
    println!(
        "| {idle_think} | {} | **{}** | {} | {} | {} | {} | {} | {} | {cpu} |",
        fmt_ns(percentile(&rtts, 0.50)),
        fmt_ns(percentile(&rtts, 0.99)),
        fmt_ns(rtts.last().copied().unwrap_or(0)),
        rtts.len(),
        thousands(((p1 - p0) as f64 / window) as u64),
        thousands(((r1 - r0) as f64 / window) as u64),
        counters.dropped.load(Ordering::Relaxed),
        closes.len(),
    );
    if let Some(first) = closes.first() {
        eprintln!("(idle_think_seconds {idle_think}: first close: {first})");
    }
    Ok(())
}
