//! The SQLite reader: [`Database`] on a connection (the reads themselves are
//! [`crate::memory::queries`], shared with PostgreSQL), and what opening a file loads.

use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, params_from_iter};

use crate::memory::MemoryError;
use crate::memory::ids::IdKind;
use crate::memory::migrations::Dialect;
use crate::memory::queries::{self, Database, StoredRow};
use crate::memory::statements::Param;
use crate::memory::store::Loaded;

/// A SQLite connection, reading, and the store's word counts when it keeps them.
pub(crate) struct SqliteDb<'a>(pub &'a Connection, pub Option<&'a TermCounts>);

/// How many memories each word is in, as `memories_vocab` said a moment ago: counting a
/// common word walks its whole list in the index (every agent's memories), and a search only
/// needs to know which of its words are rare, so each count is kept for [`TERM_COUNT_TTL`].
#[derive(Default)]
pub(crate) struct TermCounts(parking_lot::Mutex<std::collections::HashMap<String, (i64, Instant)>>);

/// How long a word's count is used before it is counted again.
pub(crate) const TERM_COUNT_TTL: Duration = Duration::from_secs(10);
/// Most words whose counts are kept (past it, they are all dropped at once).
const TERM_COUNTS_KEPT: usize = 50_000;

/// A row of a SQLite query.
struct Row<'a, 'b>(&'a rusqlite::Row<'b>);

impl StoredRow for Row<'_, '_> {
    fn int(&self, index: usize) -> Result<i64, MemoryError> {
        Ok(self.0.get(index)?)
    }
    fn maybe_int(&self, index: usize) -> Result<Option<i64>, MemoryError> {
        Ok(self.0.get(index)?)
    }
    fn real(&self, index: usize) -> Result<Option<f64>, MemoryError> {
        Ok(self.0.get(index)?)
    }
    fn text(&self, index: usize) -> Result<String, MemoryError> {
        Ok(self.0.get(index)?)
    }
    fn bytes(&self, index: usize) -> Result<Vec<u8>, MemoryError> {
        Ok(self.0.get(index)?)
    }
    fn maybe_text(&self, index: usize) -> Result<Option<String>, MemoryError> {
        Ok(self.0.get(index)?)
    }
}

impl Database for SqliteDb<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn term_docs(&mut self, stems: &[String]) -> Result<Vec<i64>, MemoryError> {
        let Some(cache) = self.1 else {
            return queries::count_terms(self, stems);
        };
        let now = Instant::now();
        let known: Vec<Option<i64>> = {
            let counts = cache.0.lock();
            stems
                .iter()
                .map(|s| {
                    counts
                        .get(s)
                        .filter(|(_, at)| now.duration_since(*at) < TERM_COUNT_TTL)
                        .map(|(n, _)| *n)
                })
                .collect()
        };
        let missing: Vec<String> = stems
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(s, _)| s.clone())
            .collect();
        if missing.is_empty() {
            return Ok(known.into_iter().map(|k| k.unwrap_or(0)).collect());
        }
        let fresh = queries::count_terms(&mut SqliteDb(self.0, None), &missing)?;
        let mut counts = cache.0.lock();
        if counts.len() > TERM_COUNTS_KEPT {
            counts.clear();
        }
        for (stem, n) in missing.iter().zip(&fresh) {
            counts.insert(stem.clone(), (*n, now));
        }
        Ok(stems
            .iter()
            .zip(known)
            .map(|(s, k)| k.unwrap_or_else(|| counts.get(s).map_or(0, |(n, _)| *n)))
            .collect())
    }

    fn rows<T>(
        &mut self,
        sql: &'static str,
        params: &[Param<'_>],
        map: &mut dyn FnMut(&dyn StoredRow) -> Result<T, MemoryError>,
    ) -> Result<Vec<T>, MemoryError> {
        let mut statement = self.0.prepare_cached(sql)?;
        let mut rows = statement.query(params_from_iter(params.iter()))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(map(&Row(row))?);
        }
        Ok(out)
    }
}

fn reserved_to(conn: &Connection, kind: IdKind) -> rusqlite::Result<i64> {
    Ok(conn
        .query_row(
            "SELECT reserved_to FROM id_blocks WHERE kind = ?1",
            [kind.as_str()],
            |r| r.get::<_, i64>(0),
        )
        .optional()?
        .unwrap_or(0))
}

/// What opening the file finds (see [`Loaded`]).
pub(crate) fn load(conn: &Connection) -> Result<Loaded, MemoryError> {
    let max = |sql: &str| -> rusqlite::Result<i64> { conn.query_row(sql, [], |r| r.get(0)) };
    let last_agent_seq = max("SELECT COALESCE(MAX(seq), 0) FROM agents")?;
    let max_task_id = max("SELECT COALESCE(MAX(id), 0) FROM agent_tasks")?;
    let max_inbox_id = max("SELECT COALESCE(MAX(id), 0) FROM agent_inbox")?;
    let max_memory_id = max("SELECT COALESCE(MAX(id), 0) FROM memories")?;
    Ok(Loaded {
        last_agent_seq: last_agent_seq.max(reserved_to(conn, IdKind::Agent)?).max(0),
        max_task_id: max_task_id.max(reserved_to(conn, IdKind::Task)?).max(0),
        max_inbox_id: max_inbox_id.max(0),
        max_memory_id: max_memory_id.max(reserved_to(conn, IdKind::Memory)?).max(0),
        open_tasks: queries::open_tasks(&mut SqliteDb(conn, None))?,
    })
}
