//! The PostgreSQL reader: [`Database`] on a connection (the reads themselves are
//! [`crate::memory::queries`], shared with SQLite), what opening a database loads, and the
//! reads-that-write only PostgreSQL needs (id claims, completing a task at once).

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::conn::Conn;
use super::text::{Text, opt_text, text};
use crate::memory::ids::IdKind;
use crate::memory::migrations::Dialect;
use crate::memory::queries::{self, Database, StoredRow};
use crate::memory::statements::Param;
use crate::memory::store::Loaded;
use crate::memory::{MemoryError, TaskRow};

/// A PostgreSQL connection, reading.
pub(crate) struct PgDb<'a>(pub &'a mut Conn);

/// A row of a PostgreSQL query (text unescaped as it is read: [`super::text`]).
struct PgRow<'a>(&'a Row);

impl StoredRow for PgRow<'_> {
    fn int(&self, index: usize) -> Result<i64, MemoryError> {
        Ok(self.0.try_get(index)?)
    }
    fn maybe_int(&self, index: usize) -> Result<Option<i64>, MemoryError> {
        Ok(self.0.try_get(index)?)
    }
    fn real(&self, index: usize) -> Result<Option<f64>, MemoryError> {
        Ok(self.0.try_get(index)?)
    }
    fn text(&self, index: usize) -> Result<String, MemoryError> {
        text(self.0, index)
    }
    fn bytes(&self, index: usize) -> Result<Vec<u8>, MemoryError> {
        Ok(self.0.try_get(index)?)
    }
    fn maybe_text(&self, index: usize) -> Result<Option<String>, MemoryError> {
        opt_text(self.0, index)
    }
}

impl Database for PgDb<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn rows<T>(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
        map: &mut dyn FnMut(&dyn StoredRow) -> Result<T, MemoryError>,
    ) -> Result<Vec<T>, MemoryError> {
        let params: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let found = self.0.query_shared(sql, &params)?;
        found.iter().map(|row| map(&PgRow(row))).collect()
    }
}

/// What opening the database finds (see [`Loaded`]).
pub(crate) fn load(conn: &mut Conn) -> Result<Loaded, MemoryError> {
    let max = |conn: &mut Conn, sql: &'static str| -> Result<i64, MemoryError> {
        let row = conn.query_opt(sql, &[])?;
        Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)).unwrap_or(0))
    };
    let reserved = |conn: &mut Conn, kind: IdKind| -> Result<i64, MemoryError> {
        let row = conn.query_opt(
            "SELECT reserved_to FROM id_blocks WHERE kind = $1",
            &[&kind.as_str()],
        )?;
        Ok(row.map_or(0, |r| r.get::<_, i64>(0)))
    };
    let last_agent_seq = max(conn, "SELECT MAX(seq) FROM agents")?
        .max(reserved(conn, IdKind::Agent)?)
        .max(0);
    let max_task_id = max(conn, "SELECT MAX(id) FROM agent_tasks")?
        .max(reserved(conn, IdKind::Task)?)
        .max(0);
    let max_inbox_id = max(conn, "SELECT MAX(id) FROM agent_inbox")?
        .max(reserved(conn, IdKind::Inbox)?)
        .max(0);
    let max_memory_id = max(conn, "SELECT MAX(id) FROM memories")?
        .max(reserved(conn, IdKind::Memory)?)
        .max(0);
    Ok(Loaded {
        last_agent_seq,
        max_task_id,
        max_inbox_id,
        max_memory_id,
        open_tasks: queries::open_tasks(&mut PgDb(conn))?,
    })
}

/// Claims the next `count` ids of `kind` above `floor` (and above every claim of every other
/// process): returns the last id of the claim; the claim is `last - count + 1 ..= last`. The
/// row lock of `id_blocks` orders concurrent claims; a claim is committed when this returns.
pub(crate) fn claim(
    conn: &mut Conn,
    kind: IdKind,
    floor: i64,
    count: i64,
) -> Result<i64, MemoryError> {
    let row = conn.query_opt(
        "INSERT INTO id_blocks (kind, reserved_to) VALUES ($1, $2::BIGINT + $3::BIGINT)
         ON CONFLICT (kind) DO UPDATE SET
             reserved_to = GREATEST(id_blocks.reserved_to, $2::BIGINT) + $3::BIGINT
         RETURNING reserved_to",
        &[&kind.as_str(), &floor, &count],
    )?;
    row.map(|r| r.get::<_, i64>(0))
        .ok_or_else(|| MemoryError::WriteFailed("id claim returned no row".to_string()))
}

/// Marks a task completed if it is still `assigned` (committed when this returns); the task
/// as it is now, or `None` when it is not open (completed already, or unknown).
pub(crate) fn complete_task(
    conn: &mut Conn,
    id: i64,
    completed_at: &str,
) -> Result<Option<TaskRow>, MemoryError> {
    let row = conn.query_opt(
        "UPDATE agent_tasks SET status = 'completed', completed_at = $2
         WHERE id = $1 AND status = 'assigned'
         RETURNING id, agent_id, task_name, status, created_at, completed_at",
        &[&id, &Text(completed_at)],
    )?;
    row.as_ref()
        .map(|row| queries::task_from(&PgRow(row)))
        .transpose()
}

/// Gives back the unused end of the last claim (`last + 1 ..= claimed_to`) if no process has
/// claimed after it, so that a clean restart continues without a gap.
pub(crate) fn release(
    conn: &mut Conn,
    kind: IdKind,
    last: i64,
    claimed_to: i64,
) -> Result<(), MemoryError> {
    conn.query_opt(
        "UPDATE id_blocks SET reserved_to = $2 WHERE kind = $1 AND reserved_to = $3
         RETURNING reserved_to",
        &[&kind.as_str(), &last, &claimed_to],
    )?;
    Ok(())
}
