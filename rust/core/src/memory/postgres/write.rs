//! The PostgreSQL writer's transactions: one transaction per batch, its statements pipelined
//! (sent together, answered together: a batch costs a few round trips, not one per row), and
//! the batch's last sequence number recorded in `memory_writers` in the same transaction.
//!
//! A connection lost while committing is ambiguous (the server may have committed). The sink
//! connects again and reads `memory_writers`: if its batch is there, the batch is committed and
//! is not written twice.

use std::time::{Duration, Instant};

use bytes::BytesMut;
use futures_util::future::join_all;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Config, Statement};

use super::conn::Conn;
use super::text::Text;
use crate::memory::statements::{Param as Value, ceilings, statements};
use crate::memory::writer::Sink;
use crate::memory::writer::{Op, Queued};

/// How long the writer keeps connecting again before the batch counts as failed.
const RECONNECT_FOR: Duration = Duration::from_secs(30);

/// Pause between connection attempts.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// A parameter of a pipelined statement (borrowed from the queued write, or computed).
type Param<'a> = Box<dyn ToSql + Sync + Send + 'a>;

/// The writer's connection and its identity in `memory_writers`.
pub(crate) struct PgSink {
    conn: Conn,
    config: Config,
    writer_id: String,
}

impl PgSink {
    pub(crate) fn new(conn: Conn, config: Config, writer_id: String) -> PgSink {
        PgSink {
            conn,
            config,
            writer_id,
        }
    }

    /// Connects again until it works or [`RECONNECT_FOR`] has passed.
    fn reconnect(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + RECONNECT_FOR;
        loop {
            match Conn::connect(&self.config) {
                Ok(conn) => {
                    self.conn = conn;
                    return Ok(());
                }
                Err(error) if Instant::now() >= deadline => {
                    return Err(format!(
                        "cannot reconnect to PostgreSQL: {}",
                        super::explain(&error)
                    ));
                }
                Err(error) => {
                    tracing::warn!(%error, "memory writer: PostgreSQL unreachable; retrying");
                    std::thread::sleep(RECONNECT_PAUSE);
                }
            }
        }
    }

    /// The last sequence number this writer committed, as the database knows it.
    fn committed_here(&mut self) -> Result<u64, tokio_postgres::Error> {
        let row = self.conn.query_opt(
            "SELECT last_seq FROM memory_writers WHERE writer_id = $1",
            &[&self.writer_id],
        )?;
        Ok(row.map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
    }

    fn try_commit(&mut self, batch: &[Queued]) -> Result<(), tokio_postgres::Error> {
        let mut prepared = Vec::with_capacity(batch.len());
        for statement in all_statements(batch) {
            prepared.push(self.conn.prepared_shared(statement.sql)?);
        }
        let mark = self.conn.prepared(MARK)?;
        let last = i64::try_from(batch.last().map_or(0, |q| q.seq)).unwrap_or(i64::MAX);
        let writer_id = self.writer_id.as_str();
        self.conn.run(|client| async move {
            client.batch_execute("BEGIN").await?;
            match pipeline(client, &prepared, batch, &mark, writer_id, last).await {
                Ok(()) => client.batch_execute("COMMIT").await,
                Err(error) => {
                    let _ = client.batch_execute("ROLLBACK").await;
                    Err(error)
                }
            }
        })?
    }
}

/// Records the batch's last sequence number for this writer.
const MARK: &str = "INSERT INTO memory_writers (writer_id, last_seq) VALUES ($1, $2)
     ON CONFLICT (writer_id) DO UPDATE SET last_seq = excluded.last_seq, updated_at = now()";

impl Sink for PgSink {
    fn commit(&mut self, batch: &[Queued]) -> Result<(), String> {
        let last = batch.last().map_or(0, |q| q.seq);
        match self.try_commit(batch) {
            Ok(()) => Ok(()),
            Err(error) if self.conn.is_closed() || error.is_closed() => {
                tracing::warn!(%error, "memory writer: connection lost during a batch");
                self.reconnect()?;
                match self.committed_here() {
                    Ok(done) if done >= last => Ok(()),
                    Ok(_) => self.try_commit(batch).map_err(|e| super::explain(&e)),
                    Err(error) => Err(super::explain(&error)),
                }
            }
            Err(error) => Err(super::explain(&error)),
        }
    }
}

/// Sends every write of the batch and the mark at once, then waits for all the answers.
async fn pipeline(
    client: &Client,
    prepared: &[Statement],
    batch: &[Queued],
    mark: &Statement,
    writer_id: &str,
    last: i64,
) -> Result<(), tokio_postgres::Error> {
    let mut calls = Vec::with_capacity(prepared.len() + 1);
    let mut prepared = prepared.iter();
    for statement in all_statements(batch) {
        let sql = prepared
            .next()
            .expect("one prepared statement per statement");
        let params: Vec<Param<'_>> = statement
            .params
            .into_iter()
            .map(|value| Box::new(value) as Param<'_>)
            .collect();
        calls.push(client.execute_raw(sql, params));
    }
    let mark_params: Vec<Param<'_>> = vec![Box::new(Text(writer_id)), Box::new(last)];
    calls.push(client.execute_raw(mark, mark_params));
    // Every answer is awaited (none left behind on the connection); the first error wins.
    join_all(calls)
        .await
        .into_iter()
        .find_map(Result::err)
        .map_or(Ok(()), Err)
}

/// The statements of `batch` this backend runs, in order: its writes', then its memory
/// ceilings ([`ceilings`]).
fn all_statements(
    batch: &[Queued],
) -> impl Iterator<Item = crate::memory::statements::Statement<'_>> {
    writes(batch)
        .flat_map(|queued| statements(&queued.op))
        .chain(ceilings(batch).into_iter().flat_map(|c| c.statements()))
}

/// The writes of `batch` this backend runs: all but id reservations (PostgreSQL claims ids in
/// `id_blocks` itself, outside the writer: several processes share the table).
fn writes(batch: &[Queued]) -> impl Iterator<Item = &Queued> {
    batch
        .iter()
        .filter(|queued| !matches!(queued.op, Op::IdBlock { .. }))
}

/// A statement's value as PostgreSQL takes it: text escaped ([`Text`]), each kind checked
/// against the column's type.
impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Text(text) => Text(text).to_sql_checked(ty, out),
            Value::Owned(text) => Text(text).to_sql_checked(ty, out),
            Value::MaybeText(text) => text.map(Text).to_sql_checked(ty, out),
            Value::Int(n) => n.to_sql_checked(ty, out),
            Value::Real(x) => x.to_sql_checked(ty, out),
            Value::Blob(bytes) => bytes.to_sql_checked(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <&str as ToSql>::accepts(ty)
            || <i64 as ToSql>::accepts(ty)
            || <f64 as ToSql>::accepts(ty)
            || <&[u8] as ToSql>::accepts(ty)
    }

    to_sql_checked!();
}
