//! The SQLite backend: one file, WAL mode, the writer thread's connection and a pool of
//! read-only connections. The default, and what needs nothing installed.
//!
//! Every open first inspects the file ([`check::inspect`]): a file that is not the project's
//! database is refused before anything writes to it. A read-only open
//! ([`super::Access::ReadOnly`]) never creates, migrates or marks a file.

pub(crate) mod check;
pub(crate) mod read;
pub(crate) mod schema;
mod write;

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use rusqlite::Connection;

use super::queries::Reader;
use super::store::{Loaded, Queries};
use super::{Access, MemoryError};
use check::Found;
pub(crate) use write::SqliteSink;

/// Most idle reader connections kept for reuse.
const MAX_IDLE_READERS: usize = 8;

/// The reading side of a SQLite database.
pub(crate) struct SqliteStore {
    path: PathBuf,
    /// Whether reader connections open the file read-only (no writer of this process has it).
    read_only: bool,
    readers: Mutex<Vec<Connection>>,
    /// Word counts searches choose their words by ([`read::TermCounts`]).
    terms: read::TermCounts,
}

impl SqliteStore {
    /// Inspects the file, then — to write — opens it (creating it if needed), marks it and runs
    /// the migrations, or — to read — opens it read-only when it is the project's database at
    /// the current version; loads what the allocators and the task index start from. Returns
    /// the store, the writer's sink (none to read) and that.
    ///
    /// Errors, before anything is written: [`MemoryError::Foreign`],
    /// [`MemoryError::SchemaTooNew`]; to read, [`MemoryError::NoDatabase`] (no file, or an
    /// empty one) and [`MemoryError::Outdated`].
    pub(crate) fn open(
        path: &Path,
        access: Access,
    ) -> Result<(SqliteStore, Option<SqliteSink>, Loaded), MemoryError> {
        let found = check::inspect(path)?;
        let store = SqliteStore {
            path: path.to_path_buf(),
            read_only: access == Access::ReadOnly,
            readers: Mutex::new(Vec::new()),
            terms: read::TermCounts::default(),
        };
        if access == Access::ReadOnly {
            let shown = path.display().to_string();
            match found {
                Found::Missing | Found::Empty => {
                    return Err(MemoryError::NoDatabase { path: shown });
                }
                Found::Ours { version, .. } if version < schema::LATEST => {
                    return Err(MemoryError::Outdated {
                        path: shown,
                        found: version,
                        supported: schema::LATEST,
                    });
                }
                Found::Ours { .. } => {}
            }
            let conn = schema::connect_read_only(path)?;
            let loaded = read::load(&conn)?;
            store.readers.lock().push(conn);
            return Ok((store, None, loaded));
        }
        let mut conn = schema::connect(path, false)?;
        schema::migrate(&mut conn)?;
        let loaded = read::load(&conn)?;
        let sink = SqliteSink::new(conn)?;
        Ok((store, Some(sink), loaded))
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
            None if self.read_only => schema::connect_read_only(&self.path)?,
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
