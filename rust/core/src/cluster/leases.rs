//! Leases: each agent runs on exactly one process, and a dead process's agents are resumed by
//! another one.
//!
//! The lease of an agent is a row of `agent_leases` (`agent_id`, `process_id`, `expires_at`) in
//! the world's PostgreSQL database; the database's clock is the only clock. Every process, every
//! third of the lease time (and at once when one of its agents starts):
//!
//! 1. **Renews** the leases of the agents it runs (`INSERT … ON CONFLICT DO UPDATE … WHERE` the
//!    lease is its own or has expired). An agent whose lease another live process holds is
//!    released here at once ([`Runtime::release`]: stopped, not terminated). A terminated
//!    agent's lease is deleted; a released agent's lease stays until it runs out (or moves, in
//!    a hand-over), so that some process always resumes it.
//! 2. **Fences itself**: when it could not renew for 80 % of the lease time (the database is
//!    unreachable from here), it releases every agent it runs, since another process may take
//!    them over once their leases expire. No agent runs twice.
//! 3. **Takes over** the expired leases of agents that were not terminated (`UPDATE … WHERE
//!    expires_at < now() RETURNING`; the row lock gives each expired lease to one process) and
//!    resumes those agents from the shared memory, as `resume` does: their unanswered lines
//!    first.
//!
//! A process that leaves cleanly stops its agents, commits their last writes, and marks their
//! leases expired: the other processes resume them at their next tick, without waiting for the
//! lease to run out ([`hand_over_at_leave`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls};
use tokio_util::sync::CancellationToken;

use crate::bus::{Filter, MessageKind, Received};
use crate::runtime::{AgentConfig, Runtime};

/// The share of the lease after which a process that could not renew releases its agents.
const FENCE_AT: f64 = 0.8;

/// Starts the lease loop of this process.
pub(crate) fn start(
    runtime: Arc<Runtime>,
    url: String,
    process: Arc<str>,
    lease: Duration,
    cancel: CancellationToken,
) -> JoinHandle<()> {
    let handle = runtime.handle().clone();
    handle.spawn(run(runtime, url, process, lease, cancel))
}

async fn connect(url: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "lease connection ended");
        }
    });
    client
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS agent_leases (
                 agent_id TEXT PRIMARY KEY,
                 process_id TEXT NOT NULL,
                 expires_at TIMESTAMPTZ NOT NULL
             );
             CREATE INDEX IF NOT EXISTS idx_agent_leases_expiry ON agent_leases (expires_at);",
        )
        .await?;
    Ok(client)
}

async fn run(
    runtime: Arc<Runtime>,
    url: String,
    process: Arc<str>,
    lease: Duration,
    cancel: CancellationToken,
) {
    let tick = lease / 3;
    let seconds = lease.as_secs_f64();
    let mut client: Option<Client> = None;
    let mut last_renewed = Instant::now();
    // A local agent starting gets its lease at once, not at the next tick.
    let mut started = runtime
        .bus()
        .subscribe_untracked(Filter::all().kinds([MessageKind::AgentSpawned]), 1024);
    loop {
        if client.as_ref().is_none_or(Client::is_closed) {
            client = match connect(&url).await {
                Ok(c) => Some(c),
                Err(error) => {
                    tracing::warn!(%error, "leases: PostgreSQL unreachable");
                    None
                }
            };
        }
        let mut renewed = false;
        if let Some(db) = &client {
            match renew(db, &runtime, &process, seconds).await {
                Ok(lost) => {
                    renewed = true;
                    last_renewed = Instant::now();
                    for agent_id in lost {
                        tracing::warn!(agent = %agent_id, "leases: another process holds this agent; released here");
                        let _ = runtime.release(&agent_id);
                    }
                }
                Err(error) => tracing::warn!(%error, "leases: renewal failed"),
            }
        }
        if !renewed && last_renewed.elapsed().as_secs_f64() > seconds * FENCE_AT {
            let ids = runtime.agent_ids();
            if !ids.is_empty() {
                tracing::error!(
                    agents = ids.len(),
                    "leases: not renewed for {:.1} s; releasing every agent here",
                    last_renewed.elapsed().as_secs_f64()
                );
            }
            for agent_id in ids {
                let _ = runtime.release(&agent_id);
            }
        }
        if renewed && let Some(db) = &client {
            match take_over(db, &process, seconds).await {
                Ok(ids) => resume(&runtime, ids).await,
                Err(error) => tracing::warn!(%error, "leases: takeover failed"),
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = tokio::time::sleep(tick) => {}
            received = started.recv() => match received {
                Some(Received::Message(envelope)) if envelope.origin.is_none() => {}
                Some(_) => continue,
                None => break,
            },
        }
    }
    hand_over_at_leave(&runtime, client.as_ref(), &process).await;
}

/// How long a leaving process waits for its agents' tasks to end.
const LEAVE_WAIT: Duration = Duration::from_secs(5);

/// A process leaving the world stops its agents, waits until their tasks have ended and their
/// writes are committed, then marks their leases expired: the other processes take them over at
/// their next tick (a third of the lease) and resume them, as after a death but without waiting
/// for the lease to run out. A rolling restart keeps every agent running somewhere; when the
/// last process leaves, the first one to start again resumes them.
async fn hand_over_at_leave(runtime: &Arc<Runtime>, db: Option<&Client>, process: &str) {
    let stopped: Vec<_> = runtime
        .agent_ids()
        .iter()
        .filter_map(|agent_id| runtime.release(agent_id).ok())
        .collect();
    let ended = tokio::time::timeout(LEAVE_WAIT, async {
        for agent in &stopped {
            agent.wait().await;
        }
    })
    .await
    .is_ok();
    let memory = runtime.memory();
    let committed = memory.committed(memory.submitted_seq()).await.is_ok();
    if !(ended && committed) {
        // Their last writes may still be on the way: the leases run out by themselves instead.
        tracing::warn!(
            agents = stopped.len(),
            "leases: agents not stopped cleanly at leave; their leases expire by themselves"
        );
        return;
    }
    let Some(db) = db else {
        return;
    };
    match db
        .execute(
            "UPDATE agent_leases SET expires_at = now() WHERE process_id = $1",
            &[&process],
        )
        .await
    {
        Ok(n) => tracing::info!(agents = n, "leases: handed over at leave"),
        Err(error) => tracing::warn!(%error, "leases: not handed over at leave (they expire)"),
    }
}

/// Renews the leases of the agents running here; returns those another live process holds.
async fn renew(
    db: &Client,
    runtime: &Runtime,
    process: &str,
    seconds: f64,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let ids = runtime.agent_ids();
    let held: Vec<String> = db
        .query(
            "INSERT INTO agent_leases (agent_id, process_id, expires_at)
             SELECT id, $2, now() + make_interval(secs => $3::float8) FROM unnest($1::text[]) AS id
             ON CONFLICT (agent_id) DO UPDATE SET
                 process_id = excluded.process_id, expires_at = excluded.expires_at
             WHERE agent_leases.process_id = excluded.process_id
                OR agent_leases.expires_at < now()
             RETURNING agent_id",
            &[&ids, &process, &seconds],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    // Terminated agents give their leases back. The lease of an agent stopped here without
    // being terminated (released: fenced, handed over, started elsewhere) stays until it runs
    // out or moves, so that some process always resumes it.
    db.execute(
        "DELETE FROM agent_leases AS l
         WHERE l.process_id = $1 AND NOT (l.agent_id = ANY($2::text[]))
           AND EXISTS (SELECT 1 FROM agents a WHERE a.agent_id = l.agent_id
                                                AND a.removed_at IS NOT NULL)",
        &[&process, &ids],
    )
    .await?;
    Ok(ids.into_iter().filter(|id| !held.contains(id)).collect())
}

/// Takes the expired leases of agents that were not terminated.
async fn take_over(
    db: &Client,
    process: &str,
    seconds: f64,
) -> Result<Vec<String>, tokio_postgres::Error> {
    Ok(db
        .query(
            "UPDATE agent_leases AS l
             SET process_id = $1, expires_at = now() + make_interval(secs => $2::float8)
             WHERE l.expires_at < now()
               AND EXISTS (SELECT 1 FROM agents a WHERE a.agent_id = l.agent_id
                                                    AND a.removed_at IS NULL)
             RETURNING l.agent_id",
            &[&process, &seconds],
        )
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect())
}

/// Resumes agents whose leases this process took.
async fn resume(runtime: &Arc<Runtime>, ids: Vec<String>) {
    for agent_id in ids {
        match resume_one(runtime, &agent_id).await {
            Ok(()) => tracing::info!(agent = %agent_id, "leases: resumed here"),
            Err(error) => tracing::warn!(agent = %agent_id, %error, "leases: could not resume"),
        }
    }
}

/// Resumes one stored agent here from the shared memory (its unanswered lines first).
pub(crate) async fn resume_one(runtime: &Arc<Runtime>, agent_id: &str) -> Result<(), String> {
    let runtime = runtime.clone();
    let config = AgentConfig {
        agent_id: Some(agent_id.to_string()),
        ..Default::default()
    };
    match tokio::task::spawn_blocking(move || runtime.spawn(config)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(error) => Err(format!("the resume panicked: {error}")),
    }
}

/// Gives the lease of `agent_id` from process `from` to process `to` for `lease` (a hand-over:
/// `from` has stopped the agent). Fails when a third process holds a live lease on it. Opens
/// its own connection: hand-overs are rare, and the lease loop's connection is its own.
pub(crate) async fn transfer(
    url: &str,
    agent_id: &str,
    from: &str,
    to: &str,
    lease: Duration,
) -> Result<(), String> {
    let db = connect(url).await.map_err(|e| e.to_string())?;
    let given = db
        .query(
            "INSERT INTO agent_leases (agent_id, process_id, expires_at)
             VALUES ($1, $3, now() + make_interval(secs => $4::float8))
             ON CONFLICT (agent_id) DO UPDATE SET
                 process_id = excluded.process_id, expires_at = excluded.expires_at
             WHERE agent_leases.process_id IN ($2, $3) OR agent_leases.expires_at < now()
             RETURNING agent_id",
            &[&agent_id, &from, &to, &lease.as_secs_f64()],
        )
        .await
        .map_err(|e| e.to_string())?;
    if given.is_empty() {
        return Err(format!("another process holds the lease of {agent_id}"));
    }
    Ok(())
}
