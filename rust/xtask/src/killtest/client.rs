//! One round's workload: concurrent clients pipeline `agent_spawn_request`, `assign_task`,
//! `complete_task` and `send_message` (each with a `request_id`) until the server dies, recording
//! every acknowledged reply in the [`Ledger`]. The client that receives the round's chosen reply
//! kills the server before it even looks at the reply.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use agents_core::protocol::requests::{self, Reply};
use agents_core::protocol::{ClientRequest, ProtocolErrorCode, ServerMessage};
use agents_core::runtime::{AgentConfig, Position};
use serde_json::Value;

use super::ledger::Ledger;
use super::plan::Rng;
use super::ws::{Conn, REPLY_TIMEOUT, Received};
use crate::process::KillSwitch;

/// Requests each client keeps in flight.
pub const WINDOW: usize = 8;

/// Agents one client spawns per round at most (every agent is resumed on every restart).
pub const MAX_SPAWNS_PER_CLIENT: usize = 4;

/// Seconds a harness agent spends thinking and speaking (small: queued messages drain fast).
const AGENT_STEP_SECONDS: f64 = 0.05;

/// What the clients of one round share.
pub struct Round {
    /// The round (from 0).
    pub round: u32,
    /// The run's acknowledgements.
    pub ledger: Mutex<Ledger>,
    /// Acknowledged write replies this round, over all clients.
    acks: AtomicU64,
    /// Kill when `acks` reaches this.
    kill_at_reply: Option<u64>,
    switch: KillSwitch,
    killed: AtomicBool,
    started: Instant,
    /// When and why the server was killed.
    kill_note: Mutex<Option<String>>,
    /// Completions of earlier rounds' tasks the server did not know (`unknown_task`): the lost
    /// rows, seen from a client holding their ids.
    pub stale_completions: AtomicU64,
    /// Problems of the harness or the server other than lost rows and reused ids.
    pub problems: Mutex<Vec<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Round {
    /// A round whose server `switch` kills; `kill_at_reply` is the `AtReply` kill point.
    pub fn new(round: u32, ledger: Ledger, switch: KillSwitch, kill_at_reply: Option<u64>) -> Self {
        Round {
            round,
            ledger: Mutex::new(ledger),
            acks: AtomicU64::new(0),
            kill_at_reply,
            switch,
            killed: AtomicBool::new(false),
            started: Instant::now(),
            kill_note: Mutex::new(None),
            stale_completions: AtomicU64::new(0),
            problems: Mutex::new(Vec::new()),
        }
    }

    /// Kills the server now (once); `why` is kept for the report.
    pub fn kill(&self, why: &str) {
        if self.killed.swap(true, Ordering::SeqCst) {
            return;
        }
        let result = self.switch.kill();
        let at = self.started.elapsed().as_secs_f64();
        *lock(&self.kill_note) = Some(format!("killed {why}, {at:.2} s into the round"));
        if let Err(e) = result {
            self.problem(e);
        }
    }

    /// True once the server was killed.
    pub fn killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }

    /// How the server was killed (`None` while it was not).
    pub fn kill_note(&self) -> Option<String> {
        lock(&self.kill_note).clone()
    }

    /// Records a problem.
    pub fn problem(&self, what: impl Into<String>) {
        lock(&self.problems).push(format!("round {}: {}", self.round, what.into()));
    }

    /// Counts one acknowledged write; kills the server when it is the chosen one.
    fn acknowledged(&self) {
        let n = self.acks.fetch_add(1, Ordering::SeqCst) + 1;
        if self.kill_at_reply == Some(n) {
            self.kill(&format!("at acknowledged reply #{n}"));
        }
    }

    /// Acknowledged write replies so far.
    pub fn acks(&self) -> u64 {
        self.acks.load(Ordering::SeqCst)
    }
}

/// A request in flight.
#[derive(Clone, Debug)]
enum Op {
    Spawn { name: String },
    Assign { agent_id: String },
    Complete { task_id: i64, inherited: bool },
    Send { agent_id: String, content: String },
}

/// One client's view: its agents and open tasks, and its generator.
pub struct Client {
    /// Its number in the round.
    pub id: usize,
    rng: Rng,
    /// Agents it may address: its own acknowledged ones and some of earlier rounds.
    agents: Vec<String>,
    /// Acknowledged open tasks it may complete (its own and some of earlier rounds).
    open_tasks: Vec<(i64, bool)>,
    spawned: usize,
    spawns_in_flight: usize,
    serial: u64,
}

impl Client {
    /// Client `id` with its generator, the earlier agents it may address and the earlier tasks
    /// it should complete.
    pub fn new(id: usize, rng: Rng, agents: Vec<String>, inherited_tasks: Vec<i64>) -> Client {
        Client {
            id,
            rng,
            agents,
            open_tasks: inherited_tasks.into_iter().map(|t| (t, true)).collect(),
            spawned: 0,
            spawns_in_flight: 0,
            serial: 0,
        }
    }

    /// A name unique in the run: `kt<round>c<client><kind><serial>`.
    fn unique(&mut self, round: u32, kind: char) -> String {
        self.serial += 1;
        format!("kt{round}c{}{kind}{}", self.id, self.serial)
    }

    /// The next operation, or `None` when the client must wait (no agent yet).
    fn choose(&mut self, round: u32) -> Option<(Op, ClientRequest)> {
        let can_spawn = self.spawned + self.spawns_in_flight < MAX_SPAWNS_PER_CLIENT;
        let roll = self.rng.range(0, 99);
        if self.agents.is_empty() || (roll < 8 && can_spawn) {
            if !can_spawn || (self.agents.is_empty() && self.spawns_in_flight > 0) {
                return None;
            }
            return Some(self.spawn(round));
        }
        let agent_id = self.agents[self.rng.index(self.agents.len())].clone();
        if roll < 40 {
            let task_name = self.unique(round, 't');
            let request = ClientRequest::from(requests::AssignTask {
                agent_id: agent_id.clone(),
                task_name,
            });
            return Some((Op::Assign { agent_id }, request));
        }
        if roll < 60 && !self.open_tasks.is_empty() {
            let (task_id, inherited) = self
                .open_tasks
                .swap_remove(self.rng.index(self.open_tasks.len()));
            let request = ClientRequest::from(requests::CompleteTask { task_id });
            return Some((Op::Complete { task_id, inherited }, request));
        }
        let content = format!("{} hello", self.unique(round, 'm'));
        let request = ClientRequest::from(requests::SendMessage {
            agent_id: agent_id.clone(),
            content: content.clone(),
            sender: None,
        });
        Some((Op::Send { agent_id, content }, request))
    }

    fn spawn(&mut self, round: u32) -> (Op, ClientRequest) {
        self.spawns_in_flight += 1;
        let name = self.unique(round, 'a');
        let config = AgentConfig {
            name: name.clone(),
            role: "killtest".into(),
            initial_position: Some(Position::new(
                self.rng.range(0, 100) as f64,
                self.rng.range(0, 100) as f64,
            )),
            thinking_seconds: Some(AGENT_STEP_SECONDS),
            speaking_seconds: Some(AGENT_STEP_SECONDS),
            hearing_radius: Some(0.0),
            ..AgentConfig::default()
        };
        let request = ClientRequest::from(requests::AgentSpawnRequest {
            agent_config: Box::new(config),
        });
        (Op::Spawn { name }, request)
    }

    /// Runs until the server dies (or a problem stops it), then returns.
    pub async fn run(mut self, url: String, round: Arc<Round>) {
        let mut conn = match Conn::open(&url).await {
            Ok(c) => c,
            Err(e) => {
                if !round.killed() {
                    round.problem(format!("client {}: {e}", self.id));
                }
                return;
            }
        };
        let mut pending: HashMap<i64, Op> = HashMap::new();
        let mut next_id: i64 = 0;
        loop {
            while pending.len() < WINDOW && !round.killed() {
                let Some((op, request)) = self.choose(round.round) else {
                    break;
                };
                next_id += 1;
                let mut value = match serde_json::to_value(&request) {
                    Ok(v) => v,
                    Err(e) => {
                        round.problem(format!("cannot encode {request:?}: {e}"));
                        return;
                    }
                };
                value["request_id"] = Value::from(next_id);
                if conn.send(&value).await.is_err() {
                    self.ended(&round, "a send failed");
                    return;
                }
                pending.insert(next_id, op);
            }
            if pending.is_empty() {
                if !round.killed() {
                    round.problem(format!("client {} has nothing to do", self.id));
                }
                break;
            }
            match conn.reply(REPLY_TIMEOUT).await {
                Received::Reply(reply) => {
                    if !self.handle(&round, &mut pending, reply) {
                        break;
                    }
                }
                Received::Closed(why) => {
                    self.ended(&round, &why);
                    return;
                }
                Received::TimedOut => {
                    if !round.killed() {
                        round.problem(format!(
                            "client {}: no reply within {REPLY_TIMEOUT:?} from a live server",
                            self.id
                        ));
                    }
                    break;
                }
            }
        }
        conn.close().await;
    }

    /// The connection ended: expected once the server was killed, a problem before.
    fn ended(&self, round: &Round, why: &str) {
        if !round.killed() {
            round.problem(format!(
                "client {}: the connection ended before the kill: {why}",
                self.id
            ));
        }
    }

    /// Handles one reply; false when the client must stop.
    fn handle(&mut self, round: &Round, pending: &mut HashMap<i64, Op>, reply: Value) -> bool {
        let Some(op) = reply["request_id"]
            .as_i64()
            .and_then(|id| pending.remove(&id))
        else {
            round.problem(format!(
                "client {}: a reply to no request: {reply}",
                self.id
            ));
            return false;
        };
        let message: ServerMessage = match serde_json::from_value(reply.clone()) {
            Ok(m) => m,
            Err(e) => {
                round.problem(format!(
                    "client {}: unreadable reply ({e}): {reply}",
                    self.id
                ));
                return false;
            }
        };
        let is_ack = !matches!(message, ServerMessage::Error(_));
        if is_ack {
            // The chosen reply kills the server before anything else happens.
            round.acknowledged();
        }
        let r = round.round;
        match (op, message) {
            (Op::Spawn { name }, ServerMessage::Reply(Reply::AgentSpawnResponse(reply))) => {
                let agent_id = reply.reply.agent_id;
                self.spawns_in_flight -= 1;
                self.spawned += 1;
                if lock(&round.ledger).ack_spawn(&agent_id, &name, r) {
                    self.agents.push(agent_id);
                }
            }
            (Op::Assign { agent_id }, ServerMessage::Reply(Reply::AssignTaskResponse(reply))) => {
                let task = reply.reply.task;
                if task.agent_id != agent_id {
                    round.problem(format!(
                        "assigned a task to {agent_id}, the reply names {}",
                        task.agent_id
                    ));
                }
                if lock(&round.ledger).ack_assign(&task, r) {
                    self.open_tasks.push((task.id, false));
                }
            }
            (
                Op::Complete { task_id, .. },
                ServerMessage::Reply(Reply::CompleteTaskResponse(c)),
            ) => {
                lock(&round.ledger).ack_complete(task_id, &c.reply.task, r);
            }
            (
                Op::Send { agent_id, content },
                ServerMessage::Reply(Reply::SendMessageResponse(_)),
            ) => {
                lock(&round.ledger).ack_message(&agent_id, &content, r);
            }
            (op, ServerMessage::Error(e)) => return self.refused(round, op, e.code, &e.message),
            (op, other) => {
                round.problem(format!(
                    "client {}: {op:?} was answered with {}",
                    self.id,
                    serde_json::to_string(&other).unwrap_or_default()
                ));
                return false;
            }
        }
        true
    }

    /// An `error` reply: the expected ones after a crash are noted, anything else is a problem.
    fn refused(&mut self, round: &Round, op: Op, code: ProtocolErrorCode, message: &str) -> bool {
        match (&op, code) {
            // An earlier round's task the server no longer knows: a lost row (counted by the
            // verifier) seen from a client that holds its id.
            (
                Op::Complete {
                    inherited: true, ..
                },
                ProtocolErrorCode::UnknownTask,
            ) => {
                round.stale_completions.fetch_add(1, Ordering::Relaxed);
                true
            }
            // Its completion reached the database but the reply was cut off by a kill.
            (
                Op::Complete {
                    task_id,
                    inherited: true,
                },
                ProtocolErrorCode::TaskAlreadyCompleted,
            ) => {
                lock(&round.ledger).close_task(*task_id);
                true
            }
            _ => {
                if matches!(op, Op::Spawn { .. }) {
                    self.spawns_in_flight -= 1;
                }
                round.problem(format!(
                    "client {}: {op:?} was refused: {code}: {message}",
                    self.id
                ));
                true
            }
        }
    }
}
