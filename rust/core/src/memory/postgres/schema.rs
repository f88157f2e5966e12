//! The PostgreSQL schema: the SQLite tables column for column (`BIGINT` for `INTEGER`,
//! `DOUBLE PRECISION` for `REAL`, identity columns for SQLite's row ids), migrated by the same
//! numbered steps ([`crate::memory::migrations`]). The version lives in `memory_schema` (SQLite keeps it in `user_version`);
//! each migration runs in one transaction under an advisory lock, so processes opening the
//! same database at once migrate it once.
//!
//! One table SQLite does not need: `memory_writers`, the last batch each writer committed, so
//! that a writer whose connection dropped while committing learns whether the commit happened
//! instead of writing the batch twice.

use super::conn::Conn;
use crate::memory::MemoryError;

use crate::memory::migrations::{Dialect, LATEST, MIGRATIONS};

/// The key of the advisory lock migrations run under ("agents" in ASCII).
const MIGRATION_LOCK: i64 = 0x6167_656e_7473;

/// The database's schema version (0 for a new database). The version table is created under
/// the migration lock: concurrent `CREATE TABLE IF NOT EXISTS` of one table can fail in
/// PostgreSQL.
pub(crate) fn version(conn: &mut Conn) -> Result<i64, tokio_postgres::Error> {
    conn.run(|client| async move {
        client.batch_execute("BEGIN").await?;
        let outcome = async {
            client
                .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            client
                .batch_execute("CREATE TABLE IF NOT EXISTS memory_schema (version BIGINT NOT NULL)")
                .await?;
            let row = client
                .query_one("SELECT COALESCE(MAX(version), 0) FROM memory_schema", &[])
                .await?;
            Ok::<i64, tokio_postgres::Error>(row.get(0))
        }
        .await;
        match outcome {
            Ok(version) => {
                client.batch_execute("COMMIT").await?;
                Ok(version)
            }
            Err(error) => {
                let _ = client.batch_execute("ROLLBACK").await;
                Err(error)
            }
        }
    })?
}

/// Runs every migration newer than the database's version, each in its own transaction under
/// the migration lock. A database newer than this library is refused.
pub(crate) fn migrate(conn: &mut Conn) -> Result<(), MemoryError> {
    let latest = LATEST;
    let found = version(conn)?;
    if found > latest {
        return Err(MemoryError::SchemaTooNew {
            found,
            supported: latest,
        });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let step = index as i64 + 1;
        let sql = migration.sql(Dialect::Postgres);
        if found >= step {
            continue;
        }
        let applied = conn.run(|client| async move {
            client.batch_execute("BEGIN").await?;
            let outcome = async {
                client
                    .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                    .await?;
                // Re-read under the lock: another process may have migrated meanwhile.
                let current: i64 = client
                    .query_one("SELECT COALESCE(MAX(version), 0) FROM memory_schema", &[])
                    .await?
                    .get(0);
                if current >= step {
                    return Ok(current);
                }
                client.batch_execute(&sql).await?;
                client
                    .execute("INSERT INTO memory_schema (version) VALUES ($1)", &[&step])
                    .await?;
                Ok::<i64, tokio_postgres::Error>(step)
            }
            .await;
            match outcome {
                Ok(version) => {
                    client.batch_execute("COMMIT").await?;
                    Ok(version)
                }
                Err(error) => {
                    let _ = client.batch_execute("ROLLBACK").await;
                    Err(error)
                }
            }
        })??;
        if applied > latest {
            return Err(MemoryError::SchemaTooNew {
                found: applied,
                supported: latest,
            });
        }
        tracing::debug!(version = step, "applied postgres memory migration");
    }
    Ok(())
}
