//! Recognising the project's own database file before anything writes to it.
//!
//! A file is ours when its header carries [`APPLICATION_ID`] (`PRAGMA application_id`, set by
//! the first write of this library to a file), or — a file made before files were marked —
//! when it has the first migration's tables ([`OWN_TABLES`]) and a `user_version` of 1 or more.
//! A missing path, an empty file (0 bytes) and a database without a single table and at
//! `user_version` 0 (a creation interrupted before its first migration) hold nothing: they are
//! ours to create. Anything else (another application's id, foreign tables, a file that is not
//! SQLite) is refused before any write, with what was found.
//!
//! The inspection changes nothing: the header is read as bytes first, and the file is then
//! opened read-only — `immutable` when no `-wal` file lies beside it, so that SQLite creates no
//! `-wal`/`-shm` file and takes no lock; with the `-wal` of a running or crashed writer beside
//! it, a plain read-only connection, which sees that writer's commits.

use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::memory::MemoryError;
use crate::memory::migrations::{LATEST, OWN_TABLES, name_tables};

/// The `application_id` of the project's SQLite files ("AgMe"), in the header at byte 68.
pub(crate) const APPLICATION_ID: i32 = 0x4167_4d65;

/// The first bytes of every SQLite database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// The size of a SQLite file's header.
const HEADER: usize = 100;

/// What lies at a database path.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing: no file.
    Missing,
    /// A file holding nothing (0 bytes, or a database without a table at `user_version` 0).
    Empty,
    /// The project's database at schema `version`; `marked` when it carries
    /// [`APPLICATION_ID`] (else it was made before files were marked).
    Ours {
        /// Its `user_version`.
        version: i64,
        /// Whether its header carries [`APPLICATION_ID`].
        marked: bool,
    },
}

fn open_error(path: &Path, message: impl ToString) -> MemoryError {
    MemoryError::Open {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn foreign(path: &Path, found: String) -> MemoryError {
    MemoryError::Foreign {
        path: path.display().to_string(),
        found,
    }
}

/// What is at `path`, without changing anything there. Refuses (before anything is written)
/// a file that is not the project's database ([`MemoryError::Foreign`]) and a database newer
/// than this library ([`MemoryError::SchemaTooNew`]).
pub(crate) fn inspect(path: &Path) -> Result<Found, MemoryError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(open_error(path, e)),
    };
    if meta.is_dir() {
        return Err(open_error(path, "it is a directory"));
    }
    if meta.len() == 0 {
        return Ok(Found::Empty);
    }
    let mut header = Vec::with_capacity(HEADER);
    std::fs::File::open(path)
        .and_then(|file| file.take(HEADER as u64).read_to_end(&mut header))
        .map_err(|e| open_error(path, e))?;
    if header.len() < HEADER || !header.starts_with(MAGIC) {
        let head = String::from_utf8_lossy(&header[..header.len().min(MAGIC.len())]).into_owned();
        return Err(foreign(
            path,
            format!("not a SQLite database (it starts with {head:?})"),
        ));
    }
    let field = |at: usize| {
        i32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let (header_version, header_id) = (field(60), field(68));
    if header_id != 0 && header_id != APPLICATION_ID {
        return Err(foreign(
            path,
            format!(
                "application_id {header_id:#010x} (another application's; ours is \
                 {APPLICATION_ID:#010x}), user_version {header_version}"
            ),
        ));
    }
    let conn = open_untouched(path)?;
    let unreadable = |e: rusqlite::Error| foreign(path, format!("unreadable as a database ({e})"));
    let pragma = |name: &str| -> rusqlite::Result<i64> {
        conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
    };
    let version = pragma("user_version").map_err(unreadable)?;
    let id = pragma("application_id").map_err(unreadable)?;
    let tables = tables(&conn).map_err(unreadable)?;
    drop(conn);
    let marked = id == i64::from(APPLICATION_ID);
    if id == 0 && version == 0 && tables.is_empty() {
        return Ok(Found::Empty);
    }
    let has_ours = OWN_TABLES.iter().all(|own| tables.iter().any(|t| t == own));
    if marked || (id == 0 && has_ours && version >= 1) {
        return if version > LATEST {
            Err(MemoryError::SchemaTooNew {
                found: version,
                supported: LATEST,
            })
        } else {
            Ok(Found::Ours { version, marked })
        };
    }
    Err(foreign(path, describe(id, version, &tables)))
}

/// A read-only connection that creates no file beside the database and takes no lock when no
/// writer's `-wal` file is there (`immutable`); else a plain read-only one.
fn open_untouched(path: &Path) -> Result<Connection, MemoryError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = if wal_beside(path).exists() {
        Connection::open_with_flags(uri(path, ""), flags)
    } else {
        Connection::open_with_flags(uri(path, "?immutable=1"), flags)
    };
    conn.map_err(|e| open_error(path, e))
}

/// The `-wal` file SQLite keeps beside `path`.
pub(crate) fn wal_beside(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
}

/// `path` as a `file:` URI read-only, with `query` appended (`?`, `#` and `%` escaped).
fn uri(path: &Path, query: &str) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text = absolute.to_string_lossy().replace('\\', "/");
    let mut out = String::from("file://");
    if !text.starts_with('/') {
        out.push('/');
    }
    for c in text.chars() {
        match c {
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            '%' => out.push_str("%25"),
            c => out.push(c),
        }
    }
    let sep = if query.is_empty() { "?" } else { "&" };
    out.push_str(query);
    out.push_str(sep);
    out.push_str("mode=ro");
    out
}

/// The database's tables, by name.
fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut statement =
        conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?;
    statement
        .query_map([], |r| r.get::<_, String>(0))?
        .collect()
}

/// What a refused database holds, in a few words: its id, its version and a few tables.
fn describe(id: i64, version: i64, tables: &[String]) -> String {
    format!(
        "application_id {:#010x}, user_version {version}, {}",
        id as i32,
        name_tables(tables, tables.len())
    )
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::memory::migrations::{Dialect, MIGRATIONS};
    use crate::memory::{Location, Memory};

    /// The file's bytes, and whether a `-wal` or `-shm` file lies beside it.
    fn snapshot(path: &Path) -> (Vec<u8>, bool, bool) {
        let beside = |suffix: &str| {
            let mut name = path.as_os_str().to_os_string();
            name.push(suffix);
            PathBuf::from(name).exists()
        };
        (std::fs::read(path).unwrap(), beside("-wal"), beside("-shm"))
    }

    /// A SQLite file another program made: its own tables (one named like ours), rollback
    /// journal, `user_version` 0.
    fn foreign_file(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "CREATE TABLE agents (id INTEGER PRIMARY KEY, name TEXT);
             CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL);
             INSERT INTO orders (total) VALUES (12.5);",
        )
        .unwrap();
    }

    /// Both opens refuse the file with [`MemoryError::Foreign`], leaving it as it was; the
    /// refusal's description.
    fn refused_untouched(path: &Path) -> String {
        let before = snapshot(path);
        assert!(!before.1 && !before.2, "no -wal/-shm to start with");
        let mut found = Vec::new();
        for memory in [
            Memory::open(path),
            Memory::open_read_only(Location::File(path.to_path_buf())),
        ] {
            match memory {
                Err(MemoryError::Foreign {
                    path: shown,
                    found: what,
                }) => {
                    assert_eq!(shown, path.display().to_string());
                    found.push(what);
                }
                Err(other) => panic!("expected Foreign, got {other}"),
                Ok(_) => panic!("opened a file that is not ours"),
            }
            assert_eq!(snapshot(path), before, "the file is untouched");
        }
        assert_eq!(found[0], found[1]);
        found.remove(0)
    }

    #[test]
    fn a_foreign_database_is_refused_untouched_naming_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shop.db");
        foreign_file(&path);
        let found = refused_untouched(&path);
        assert_eq!(
            found,
            "application_id 0x00000000, user_version 0, tables agents, orders"
        );
        let error = Memory::open(&path).err().unwrap().to_string();
        assert!(error.contains("not an agents database"), "{error}");
        assert!(error.contains("nothing was changed"), "{error}");

        // In WAL mode (no -wal beside it once closed) just the same.
        let wal = dir.path().join("wal.db");
        foreign_file(&wal);
        Connection::open(&wal)
            .unwrap()
            .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap();
        refused_untouched(&wal);
    }

    #[test]
    fn another_applications_id_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA application_id = 305419896; PRAGMA user_version = 3;")
            .unwrap();
        drop(conn);
        let found = refused_untouched(&path);
        assert!(found.starts_with("application_id 0x12345678"), "{found}");
        assert!(found.contains("user_version 3"), "{found}");

        // Even with the project's tables in it.
        let path = dir.path().join("lookalike.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&MIGRATIONS[0].sql(Dialect::Sqlite))
            .unwrap();
        conn.execute_batch("PRAGMA application_id = 7; PRAGMA user_version = 1;")
            .unwrap();
        drop(conn);
        refused_untouched(&path);
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [
            (
                "notes.db",
                b"dear diary, the cellar key is under the mat\n".repeat(200),
            ),
            ("short.db", b"SQLite format 3\0".to_vec()),
            ("zeros.db", vec![0u8; 4096]),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let found = refused_untouched(&path);
            assert!(
                found.starts_with("not a SQLite database"),
                "{name}: {found}"
            );
        }
    }

    #[test]
    fn a_newer_schema_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("future.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&MIGRATIONS[0].sql(Dialect::Sqlite))
            .unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        drop(conn);
        let before = snapshot(&path);
        for memory in [
            Memory::open(&path),
            Memory::open_read_only(Location::File(path.clone())),
        ] {
            assert!(matches!(
                memory,
                Err(MemoryError::SchemaTooNew {
                    found: 999,
                    supported: LATEST
                })
            ));
            assert_eq!(snapshot(&path), before, "no WAL switch, nothing written");
        }
    }

    #[test]
    fn a_read_only_open_never_creates_a_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("agents.db");
        let refused = Memory::open_read_only(Location::File(path.clone()));
        assert!(
            matches!(&refused, Err(MemoryError::NoDatabase { path: shown }) if *shown == path.display().to_string())
        );
        assert!(!dir.path().join("sub").exists(), "not even its directory");

        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(
            Memory::open_read_only(Location::File(empty.clone())),
            Err(MemoryError::NoDatabase { .. })
        ));
        assert_eq!(std::fs::read(&empty).unwrap(), b"");
    }

    #[test]
    fn a_database_of_the_previous_version_still_opens_and_is_then_marked() {
        // Made the old way: the first six migrations, `user_version` 6, no application_id.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let conn = Connection::open(&path).unwrap();
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap();
        for step in &MIGRATIONS[..6] {
            conn.execute_batch(&step.sql(Dialect::Sqlite)).unwrap();
        }
        conn.execute_batch(
            "PRAGMA user_version = 6;
             INSERT INTO agent_conversations (agent_id, timestamp, sender, content)
             VALUES ('agent_001', '2026-01-01T00:00:00.000Z', 'me', 'kept');",
        )
        .unwrap();
        drop(conn);
        assert_eq!(
            inspect(&path).unwrap(),
            Found::Ours {
                version: 6,
                marked: false
            }
        );

        // Reading needs the migrations: refused, untouched.
        let before = std::fs::read(&path).unwrap();
        match Memory::open_read_only(Location::File(path.clone())) {
            Err(error @ MemoryError::Outdated { .. }) => {
                let text = error.to_string();
                assert!(text.contains("schema version 6"), "{text}");
                assert!(text.contains("run a command that writes"), "{text}");
            }
            Err(other) => panic!("expected Outdated, got {other}"),
            Ok(_) => panic!("read an old database"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);

        // Writing upgrades and marks it; the data stays.
        let mem = Memory::open(&path).unwrap();
        assert_eq!(
            mem.recent_conversation("agent_001", 5).unwrap()[0].content,
            "kept"
        );
        mem.close().unwrap();
        assert_eq!(
            inspect(&path).unwrap(),
            Found::Ours {
                version: LATEST,
                marked: true
            }
        );
        let mem = Memory::open_read_only(Location::File(path.clone())).unwrap();
        assert_eq!(mem.recent_conversation("agent_001", 5).unwrap().len(), 1);
        mem.close().unwrap();
    }

    #[test]
    fn a_new_or_empty_file_is_created_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        // A database without a table at version 0: a creation interrupted before its first
        // migration.
        let bare = dir.path().join("bare.db");
        Connection::open(&bare)
            .unwrap()
            .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap();
        assert_eq!(inspect(&bare).unwrap(), Found::Empty);
        for path in [dir.path().join("new").join("agents.db"), empty, bare] {
            let mem = Memory::open(&path).unwrap();
            mem.close().unwrap();
            assert_eq!(
                inspect(&path).unwrap(),
                Found::Ours {
                    version: LATEST,
                    marked: true
                },
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn a_read_only_memory_reads_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents.db");
        let mem = Memory::open(&path).unwrap();
        let seq = mem.record_conversation(crate::memory::NewConversation {
            agent_id: "agent_001".into(),
            sender: "me".into(),
            content: "hello".into(),
            recipient: None,
        });
        mem.wait_committed(seq).unwrap();
        mem.close().unwrap();
        let before = std::fs::read(&path).unwrap();

        let mem = Memory::open_read_only(Location::File(path.clone())).unwrap();
        assert_eq!(
            mem.recent_conversation("agent_001", 5).unwrap()[0].content,
            "hello"
        );
        assert!(matches!(mem.next_agent_id(), Err(MemoryError::Closed)));
        mem.close().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
