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

/// Migration `i + 1` is `MIGRATIONS[i]`. The table-creating steps (1–5) are idempotent (`IF NOT
/// EXISTS`) as well, so a file whose tables were created by hand with a lower `user_version`
/// still migrates; step 6 adds a column (SQLite has no `ADD COLUMN IF NOT EXISTS`) and relies on
/// the version alone.
const MIGRATIONS: &[&str] = &[
    // v1: the three tables of the spec, the resume records, and the indexes of the queries run.
    "CREATE TABLE IF NOT EXISTS agent_conversations (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        sender TEXT NOT NULL,
        content TEXT NOT NULL,
        recipient TEXT
    );
    CREATE INDEX IF NOT EXISTS idx_agent_conversations_agent
        ON agent_conversations (agent_id, id);

    CREATE TABLE IF NOT EXISTS agent_tasks (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        task_name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('assigned','completed')),
        created_at TEXT NOT NULL,
        completed_at TEXT
    );
    CREATE INDEX IF NOT EXISTS idx_agent_tasks_agent_status
        ON agent_tasks (agent_id, status, id);

    CREATE TABLE IF NOT EXISTS agent_state_history (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        old_state TEXT NOT NULL,
        new_state TEXT NOT NULL,
        timestamp TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idx_agent_state_history_agent
        ON agent_state_history (agent_id, id);

    CREATE TABLE IF NOT EXISTS agents (
        agent_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        prompt TEXT NOT NULL,
        brain TEXT NOT NULL,
        config TEXT NOT NULL,
        x REAL,
        y REAL,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        removed_at TEXT
    );",
    // v2: acknowledged writes survive a crash. `agent_inbox` holds every line accepted for an
    // agent until a decision of the agent has answered it (delivered again after `--resume`);
    // `id_blocks` holds the reservations ids are handed out from (never reused, see `ids.rs`).
    "CREATE TABLE IF NOT EXISTS agent_inbox (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        sender TEXT NOT NULL,
        content TEXT NOT NULL,
        dialog_type TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idx_agent_inbox_agent ON agent_inbox (agent_id, id);

    CREATE TABLE IF NOT EXISTS id_blocks (
        kind TEXT PRIMARY KEY CHECK (kind IN ('agent','task')),
        reserved_to INTEGER NOT NULL
    );",
    // v3: every model call, traced (`brain_calls`): timings, tokens, outcome; the prompt and
    // the answer only when the brain opts in (`trace_prompts`). Never a key.
    "CREATE TABLE IF NOT EXISTS brain_calls (
        id INTEGER PRIMARY KEY,
        agent_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        model TEXT,
        started_at TEXT NOT NULL,
        latency_ms INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cached_tokens INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        repairs INTEGER NOT NULL,
        error_code TEXT,
        prompt TEXT,
        reply TEXT
    );
    CREATE INDEX IF NOT EXISTS idx_brain_calls_agent ON brain_calls (agent_id, id);",
    // v4: app sessions (the app bridge): one row per app with its state, actions, modes, label
    // and agent; its actions, events and chat lines in `app_log` (each entry a JSON record).
    "CREATE TABLE IF NOT EXISTS app_sessions (
        app_id TEXT PRIMARY KEY,
        agent_id TEXT,
        mode TEXT NOT NULL,
        control_mode TEXT NOT NULL,
        role_prompt TEXT NOT NULL,
        human_label TEXT,
        state TEXT NOT NULL,
        actions TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS app_log (
        id INTEGER PRIMARY KEY,
        app_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('action','event','chat')),
        entry TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idx_app_log ON app_log (app_id, kind, id);",
    // v5: the turn log of tabletop campaigns (a GM turn's entry as JSON, `turn_log.jsonl`'s
    // line).
    "CREATE TABLE IF NOT EXISTS campaign_turns (
        id INTEGER PRIMARY KEY,
        campaign_id TEXT NOT NULL,
        turn_id TEXT NOT NULL,
        entry TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS idx_campaign_turns ON campaign_turns (campaign_id, id);",
    // v6: the process that ran the agent, on each state change (NULL for one process): in a
    // world served by several processes, who ran an agent when.
    "ALTER TABLE agent_state_history ADD COLUMN process TEXT;",
    // v7: agents by the game's key (`config.key`, also in its own column), for a keyed spawn to
    // find its stored agent.
    "ALTER TABLE agents ADD COLUMN agent_key TEXT;
    CREATE INDEX IF NOT EXISTS idx_agents_key ON agents (agent_key) WHERE removed_at IS NULL;",
];

/// The newest schema version (the number of migrations).
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

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
    for (index, sql) in MIGRATIONS.iter().enumerate() {
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
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::debug!(version, "applied memory migration");
    }
    Ok(())
}
