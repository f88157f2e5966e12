//! The SQLite writer's transactions: one `IMMEDIATE` transaction per batch, each write's
//! statements ([`crate::memory::statements`]) run as cached statements, then the batch's
//! memory ceilings ([`ceilings`]).
//!
//! A ceiling is checked without counting an agent's memories in most batches: the sink keeps,
//! for each agent it wrote memories of, an upper bound of their number (counted once, then
//! raised by what each batch adds; a deletion only makes it looser). A batch whose additions
//! keep the bound within the ceiling needs no count; otherwise the agent's memories are
//! counted in the transaction and what is beyond the ceiling is forgotten. The bounds hold
//! only for what this connection wrote: when another connection (another process on the same
//! file: `agents-server memory remember` beside a server) has committed since
//! (`PRAGMA data_version` changed), or a batch failed, they are forgotten and counted anew.

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ToSql, TransactionBehavior, params_from_iter};

use std::collections::HashMap;

use crate::memory::statements::{Param, ceilings, statements};
use crate::memory::writer::Sink;
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
    /// For each agent this connection wrote memories of: at least as many as it has.
    counts: HashMap<String, u64>,
    /// `PRAGMA data_version` when `counts` was last right: another connection's commit
    /// changes it.
    data_version: i64,
}

/// Agents whose memory count bounds the sink keeps before it forgets them all and counts anew.
const MAX_COUNTED_AGENTS: usize = 100_000;

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
        let data_version = data_version(&conn)?;
        Ok(SqliteSink {
            conn,
            indexed_to,
            waiting: usize::try_from(waiting).unwrap_or(usize::MAX),
            counts: HashMap::new(),
            data_version,
        })
    }
}

/// The connection's `PRAGMA data_version`: it changes when another connection commits.
fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0))
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
        let version = data_version(&self.conn).map_err(|e| e.to_string())?;
        if version != self.data_version || self.counts.len() > MAX_COUNTED_AGENTS {
            self.counts.clear();
            self.data_version = version;
        }
        let done = commit(
            &mut self.conn,
            batch,
            index_now.then_some(self.indexed_to),
            &mut self.counts,
        )
        .map_err(|e| {
            // What the bounds counted may not have been committed: count anew.
            self.counts.clear();
            e.to_string()
        })?;
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

/// Commits `batch`, keeping each agent it wrote memories of within its ceiling (`counts`: the
/// upper bounds, updated), then (with `index_from`) indexes the memories above it in the same
/// transaction; returns the new highest indexed id when it indexed.
fn commit(
    conn: &mut Connection,
    batch: &[Queued],
    index_from: Option<i64>,
    counts: &mut HashMap<String, u64>,
) -> rusqlite::Result<Option<i64>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for statement in batch.iter().flat_map(|q| statements(&q.op)) {
        tx.prepare_cached(statement.sql)?
            .execute(params_from_iter(statement.params.iter()))?;
    }
    for ceiling in ceilings(batch) {
        let cap = ceiling.max_memories as u64;
        let bound = counts
            .get(ceiling.agent_id)
            .map(|n| n.saturating_add(ceiling.added as u64));
        let held = match bound {
            Some(n) if n <= cap => n,
            _ => {
                let n: i64 = tx
                    .prepare_cached("SELECT COUNT(*) FROM memories WHERE agent_id = ?1")?
                    .query_row([ceiling.agent_id], |r| r.get(0))?;
                let n = u64::try_from(n).unwrap_or(0);
                if n > cap {
                    for statement in ceiling.statements() {
                        tx.prepare_cached(statement.sql)?
                            .execute(params_from_iter(statement.params.iter()))?;
                    }
                }
                n.min(cap)
            }
        };
        counts.insert(ceiling.agent_id.to_string(), held);
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
