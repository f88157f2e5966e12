//! The SQLite writer's transactions: one `IMMEDIATE` transaction per batch, each write's
//! statements ([`crate::memory::statements`]) run as cached statements, then the batch's
//! memory ceilings ([`ceilings`]).

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ToSql, TransactionBehavior, params_from_iter};

use crate::memory::statements::{Param, ceilings, statements};
use crate::memory::store::Sink;
use crate::memory::writer::{Op, Queued};

/// The writing connection, and how far memories are indexed for search.
///
/// New memories are not indexed as they are stored (an FTS5 insert in every small transaction
/// costs several times the row's own write, and acknowledged writes wait for their batch): the
/// sink indexes them in bulk — at the end of a batch once [`INDEX_EVERY`] wait, when the queue
/// is empty ([`Sink::catch_up`]), and where a search asks for it ([`Op::IndexMemories`]). Memory
/// ids grow in commit order, so "every memory above the highest indexed id" is exactly what
/// waits; a crash loses no memory, only the index's catching up, which the next idle moment
/// redoes.
pub(crate) struct SqliteSink {
    conn: Connection,
    /// Memories with a higher id are not indexed yet.
    indexed_to: i64,
    /// Memories stored since the last indexing (an upper bound).
    waiting: usize,
}

/// Memories that may wait for indexing before a batch indexes them in its own transaction.
pub(crate) const INDEX_EVERY: usize = 512;

impl SqliteSink {
    /// The sink of `conn`, with what its index holds.
    pub(crate) fn new(conn: Connection) -> rusqlite::Result<SqliteSink> {
        let indexed_to = indexed_to(&conn)?;
        let waiting = conn.query_row(
            "SELECT COUNT(*) FROM memories WHERE id > ?1",
            [indexed_to],
            |r| r.get::<_, i64>(0),
        )?;
        Ok(SqliteSink {
            conn,
            indexed_to,
            waiting: usize::try_from(waiting).unwrap_or(usize::MAX),
        })
    }
}

/// The highest memory id in the search index.
fn indexed_to(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT COALESCE(MAX(id), 0) FROM memories_fts_docsize",
        [],
        |r| r.get(0),
    )
}

/// Indexes every memory above `from`; returns the new highest indexed id.
fn index(tx: &rusqlite::Transaction<'_>, from: i64) -> rusqlite::Result<i64> {
    tx.prepare_cached(
        "INSERT INTO memories_fts (rowid, text, agent_id)
         SELECT id, text, agent_id FROM memories WHERE id > ?1 ORDER BY id",
    )?
    .execute([from])?;
    tx.query_row("SELECT COALESCE(MAX(id), ?1) FROM memories", [from], |r| {
        r.get(0)
    })
}

impl Sink for SqliteSink {
    fn commit(&mut self, batch: &[Queued]) -> Result<(), String> {
        let stored = batch
            .iter()
            .map(|q| match &q.op {
                Op::Memories { lines, .. } => lines.len(),
                Op::Compact { .. } => 1,
                _ => 0,
            })
            .sum::<usize>();
        let asked = batch.iter().any(|q| matches!(q.op, Op::IndexMemories));
        let index_now = asked || self.waiting + stored >= INDEX_EVERY;
        let done = commit(&mut self.conn, batch, index_now.then_some(self.indexed_to))
            .map_err(|e| e.to_string())?;
        match done {
            Some(to) => {
                self.indexed_to = to;
                self.waiting = 0;
            }
            None => self.waiting += stored,
        }
        Ok(())
    }

    fn catch_up(&mut self) -> Result<(), String> {
        if self.waiting == 0 {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        let to = index(&tx, self.indexed_to).map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())?;
        self.indexed_to = to;
        self.waiting = 0;
        Ok(())
    }
}

/// Commits `batch`, then (with `index_from`) indexes the memories above it in the same
/// transaction; returns the new highest indexed id when it indexed.
fn commit(
    conn: &mut Connection,
    batch: &[Queued],
    index_from: Option<i64>,
) -> rusqlite::Result<Option<i64>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let ceilings = ceilings(batch);
    for statement in batch.iter().flat_map(|q| statements(&q.op)).chain(ceilings) {
        tx.prepare_cached(statement.sql)?
            .execute(params_from_iter(statement.params.iter()))?;
    }
    let indexed = index_from.map(|from| index(&tx, from)).transpose()?;
    tx.commit()?;
    Ok(indexed)
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Param::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::Owned(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::MaybeText(Some(text)) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Param::MaybeText(None) => ToSqlOutput::Owned(Value::Null),
            Param::Int(n) => ToSqlOutput::Owned(Value::Integer(*n)),
            Param::Real(x) => ToSqlOutput::Owned(Value::Real(*x)),
            Param::Blob(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
        })
    }
}
