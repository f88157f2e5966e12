//! The SQLite backend: one file, WAL mode, the writer thread's connection and a pool of
//! read-only connections. The default, and what needs nothing installed.

pub(crate) mod read;
pub(crate) mod schema;
mod write;

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use rusqlite::Connection;

use super::MemoryError;
use super::queries::Reader;
use super::store::{Loaded, Queries};
pub(crate) use write::SqliteSink;

/// Most idle reader connections kept for reuse.
const MAX_IDLE_READERS: usize = 8;

/// The reading side of a SQLite database.
pub(crate) struct SqliteStore {
    path: PathBuf,
    readers: Mutex<Vec<Connection>>,
    /// Word counts searches choose their words by ([`read::TermCounts`]).
    terms: read::TermCounts,
}

impl SqliteStore {
    /// Opens (creating if needed) the file, runs the migrations and loads what the allocators
    /// and the task index start from; returns the store, the writer's sink and that.
    pub(crate) fn open(path: &Path) -> Result<(SqliteStore, SqliteSink, Loaded), MemoryError> {
        let mut conn = schema::connect(path, false)?;
        schema::migrate(&mut conn)?;
        let loaded = read::load(&conn)?;
        let store = SqliteStore {
            path: path.to_path_buf(),
            readers: Mutex::new(Vec::new()),
            terms: read::TermCounts::default(),
        };
        let sink = SqliteSink::new(conn)?;
        Ok((store, sink, loaded))
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on a pooled reader connection (opened on demand).
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn Queries) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let pooled = self.readers.lock().pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => schema::connect(&self.path, true)?,
        };
        let result = f(&mut Reader(read::SqliteDb(&conn, Some(&self.terms))));
        let mut pool = self.readers.lock();
        if pool.len() < MAX_IDLE_READERS {
            pool.push(conn);
        }
        result
    }
}
