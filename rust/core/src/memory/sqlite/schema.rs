//! Connection set-up and versioned migrations.
//!
//! Every connection runs in WAL mode with `synchronous=NORMAL`: in WAL mode a committed
//! transaction is in the WAL file (the OS page cache at least) when `COMMIT` returns, so it
//! survives a kill of the process; a power loss or OS crash may lose the last few commits (never
//! corrupt the file). Migrations are numbered from 1; migration `n` runs in one `IMMEDIATE`
//! transaction that also sets `PRAGMA user_version = n`, so a crash mid-migration leaves the file
//! at `n - 1` and the next open simply runs it again.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::MemoryError;

/// How long a connection waits on a lock held by another connection before `SQLITE_BUSY`.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) use crate::memory::migrations::LATEST;
use crate::memory::migrations::{Dialect, MIGRATIONS};
use crate::memory::sqlite::check::APPLICATION_ID;

fn open_error(path: &Path, message: impl ToString) -> MemoryError {
    MemoryError::Open {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// Creates the parent directory if missing and opens a connection with the pragmas every
/// connection uses. `query_only` connections refuse writes (the readers).
pub(crate) fn connect(path: &Path, query_only: bool) -> Result<Connection, MemoryError> {
    if path.as_os_str().is_empty() {
        return Err(open_error(path, "empty path"));
    }
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
        && !parent.exists()
    {
        std::fs::create_dir_all(parent).map_err(|e| open_error(path, e))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
    configure(&conn, query_only).map_err(|e| open_error(path, e))?;
    Ok(conn)
}

fn configure(conn: &Connection, query_only: bool) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // `journal_mode` answers the mode in effect; reading it also proves the file is a database.
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(mode, "SQLite did not switch to WAL mode");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", false)?;
    if query_only {
        conn.pragma_update(None, "query_only", true)?;
    }
    Ok(())
}

/// A connection that never writes: opened read-only, its journal mode left as the file has
/// it. For reading a database no writer of this process opened.
pub(crate) fn connect_read_only(path: &Path) -> Result<Connection, MemoryError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .and_then(|()| conn.pragma_update(None, "query_only", true))
        .map_err(|e| open_error(path, e))?;
    Ok(conn)
}

/// The file's `user_version`.
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Runs every migration newer than the file's `user_version`, each in its own transaction.
/// A file newer than this library is refused with [`MemoryError::SchemaTooNew`].
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), MemoryError> {
    let found = user_version(conn)?;
    if found > LATEST {
        return Err(MemoryError::SchemaTooNew {
            found,
            supported: LATEST,
        });
    }
    let id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    if id != APPLICATION_ID {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.commit()?;
        tracing::debug!(from = id, "marked the database as this library's");
    }
    for (index, step) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if found >= version {
            continue;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Re-read under the write lock: another process may have migrated meanwhile.
        let current = user_version(&tx)?;
        if current > LATEST {
            return Err(MemoryError::SchemaTooNew {
                found: current,
                supported: LATEST,
            });
        }
        if current >= version {
            continue;
        }
        tx.execute_batch(&step.sql(Dialect::Sqlite))?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::debug!(version, "applied memory migration");
    }
    Ok(())
}
