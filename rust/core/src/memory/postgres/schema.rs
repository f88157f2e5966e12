//! The PostgreSQL schema: the SQLite tables column for column (`BIGINT` for `INTEGER`,
//! `DOUBLE PRECISION` for `REAL`, identity columns for SQLite's row ids), migrated by the same
//! numbered steps ([`crate::memory::migrations`]). The version lives in `memory_schema` (SQLite keeps it in `user_version`);
//! each migration runs in one transaction under an advisory lock, so processes opening the
//! same database at once migrate it once.
//!
//! A database is inspected before anything is created in it ([`inspect`]): ours has
//! `memory_schema`; one without a table is ours to create; one with tables of its own and no
//! `memory_schema` is another application's, refused untouched.
//!
//! One table SQLite does not need: `memory_writers`, the last batch each writer committed, so
//! that a writer whose connection dropped while committing learns whether the commit happened
//! instead of writing the batch twice.

use super::conn::Conn;
use crate::memory::MemoryError;

use crate::memory::migrations::{Dialect, LATEST, MIGRATIONS, TABLES_NAMED, name_tables};

/// What a database holds, looked at without creating anything: `Some(version)` when it is
/// ours (it has `memory_schema`), `None` when it has no table at all (ours to create).
/// A database with tables and no `memory_schema` is refused: [`MemoryError::Foreign`] naming a
/// few of them (`shown` is the URL without its password). Tables in every schema count but
/// PostgreSQL's own.
pub(crate) fn inspect(conn: &mut Conn, shown: &str) -> Result<Option<i64>, MemoryError> {
    let (ours, total, named) = conn.run(|client| async move {
        let user_tables = "FROM pg_catalog.pg_tables \
             WHERE schemaname NOT IN ('pg_catalog', 'information_schema')";
        // Whether it is ours and how many tables it has, read in one statement (one snapshot):
        // another process creating `memory_schema` meanwhile is seen by both or by neither.
        let row = client
            .query_one(
                &format!(
                    "SELECT count(*), COALESCE(bool_or(tablename = 'memory_schema' \
                     AND schemaname = current_schema()), false) {user_tables}"
                ),
                &[],
            )
            .await?;
        let (total, ours): (i64, bool) = (row.get(0), row.get(1));
        let named = client
            .query(
                &format!(
                    "SELECT schemaname || '.' || tablename {user_tables} \
                     ORDER BY schemaname, tablename LIMIT {TABLES_NAMED}"
                ),
                &[],
            )
            .await?
            .iter()
            .map(|row| row.get::<_, String>(0))
            .collect::<Vec<_>>();
        Ok::<_, tokio_postgres::Error>((ours, total, named))
    })??;
    if ours {
        let version = conn.run(|client| async move {
            let row = client
                .query_one("SELECT COALESCE(MAX(version), 0) FROM memory_schema", &[])
                .await?;
            Ok::<i64, tokio_postgres::Error>(row.get(0))
        })??;
        return Ok(Some(version));
    }
    if total == 0 {
        return Ok(None);
    }
    Err(MemoryError::Foreign {
        path: shown.to_string(),
        found: format!(
            "{}, no memory_schema",
            name_tables(&named, usize::try_from(total).unwrap_or(usize::MAX))
        ),
    })
}

/// Checks that a database can be read as it is: ours, at this library's version.
/// Errors: [`MemoryError::NoDatabase`] (no table at all), [`MemoryError::Outdated`],
/// [`MemoryError::SchemaTooNew`], [`MemoryError::Foreign`].
pub(crate) fn check_current(conn: &mut Conn, shown: &str) -> Result<(), MemoryError> {
    match inspect(conn, shown)? {
        None => Err(MemoryError::NoDatabase {
            path: shown.to_string(),
        }),
        Some(found) if found > LATEST => Err(MemoryError::SchemaTooNew {
            found,
            supported: LATEST,
        }),
        Some(found) if found < LATEST => Err(MemoryError::Outdated {
            path: shown.to_string(),
            found,
            supported: LATEST,
        }),
        Some(_) => Ok(()),
    }
}

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
/// the migration lock. Another application's database ([`inspect`]) and a database newer than
/// this library are refused before anything is created.
pub(crate) fn migrate(conn: &mut Conn, shown: &str) -> Result<(), MemoryError> {
    let latest = LATEST;
    if let Some(found) = inspect(conn, shown)?
        && found > latest
    {
        return Err(MemoryError::SchemaTooNew {
            found,
            supported: latest,
        });
    }
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
