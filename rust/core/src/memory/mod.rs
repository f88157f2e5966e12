//! Agent memory in a database: SQLite (a file, the default) or PostgreSQL (a
//! `postgres://` URL, for a world served by several processes; the `postgres` feature).
//!
//! One writer thread owns the only writing connection of the process; writes are queued on a
//! channel (callers never wait on the database) and committed in batched transactions. Every
//! write returns a sequence number; [`Memory::committed_seq`] says how far the writer has
//! committed, and a row whose sequence number is committed survives a kill of the process.
//! Reads use their own connections and first wait until every write queued before the read is
//! committed (read-your-writes). Migrations are versioned and idempotent, the same numbered
//! steps on both backends (`store.rs` says what a backend provides).
//!
//! Durability: SQLite runs in WAL mode with `synchronous=NORMAL`. In WAL mode a committed
//! transaction is in the WAL file when `COMMIT` returns, so it survives a kill of the process
//! (the integration test `tests/memory_kill.rs` SIGKILLs a writing child and checks every
//! acknowledged row); a power loss or OS crash may lose the last few commits, never corrupt the
//! file. PostgreSQL commits with `synchronous_commit = on`: a committed batch is in the
//! server's WAL on disk, and survives a kill of this process or of the server.
//!
//! Ordering: a write's sequence number is allocated and the write queued under one lock, so the
//! writer sees writes in sequence order and `committed_seq` is the sequence number of the last
//! write of the last committed batch. Timestamps are taken when a write is queued.
//!
//! Acknowledgement: a front end that reports a write to someone (a protocol reply) first waits
//! for its sequence number to be committed ([`Memory::committed`], or [`Memory::wait_committed`]
//! from a thread): a reply waits for its batch, not for a transaction of its own.
//!
//! Ids: agent numbers and task ids are never handed out twice, across any number of crashes.
//! On SQLite they come from reservations (`id_blocks`) committed before the id is returned;
//! after a crash the unused rest of a reservation is skipped (ids are unique, not dense). On
//! PostgreSQL every process claims its own blocks from the same table. See `ids.rs`.
//!
//! Recognition: a database that is not this library's (another application's SQLite file, a
//! file that is not SQLite, a PostgreSQL database with tables of its own) is refused before
//! anything is written to it (`sqlite/check.rs`, `postgres/schema.rs`);
//! [`Memory::open_read_only`] never creates, migrates or writes a database.
//!
//! Inbox: a line accepted for an agent ([`Memory::send_to_inbox`]) is stored with its
//! conversation row in one write and stays in `agent_inbox` until a decision of the agent has
//! answered it ([`Memory::inbox_done`]); a resumed agent starts by listening to what is left.

mod ids;
mod migrations;
#[cfg(feature = "postgres")]
mod postgres;
mod queries;
mod rows;
mod sqlite;
mod statements;
mod store;
mod stream;
#[cfg(test)]
mod tests;
mod writer;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;
use parking_lot::Mutex;

pub use rows::BadStored;
pub use rows::{
    AgentRecord, AppLogKind, AppRow, BrainCall, BrainCallRow, CallOutcome, ConversationRow,
    InboxRow, NewConversation, Page, StateChangeRow, StoredApp, TaskRow, TaskStatus,
};
pub use stream::{
    Candidates, DrawnMemory, FoundMemory, MAX_MEMORY_ABOUT_CHARS, MAX_MEMORY_SOURCES,
    MAX_MEMORY_TEXT_CHARS, MAX_SEARCH_TERMS, MemoryKind, NewMemory, StoredMemory, is_stopword,
    search_terms, stem,
};

/// Keyword matches read per line when a recall searches each line a decision answers apart.
pub const LINE_MATCHES: usize = 8;

use ids::{Claim, Claimed, IdBlock, IdKind, Reserve};
use sqlite::SqliteStore;
use store::Queries;

use crate::agent_state::AgentState;
use crate::geometry::Position;

/// Memory errors.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed (or could not be reached); the message has the server's reason.
    #[cfg(feature = "postgres")]
    #[error("database error: {}", postgres::explain(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// A stored value does not parse (an unknown state or status, invalid JSON).
    #[error("database error: {0}")]
    Stored(#[from] BadStored),
    /// The database file's directory could not be created or the file opened.
    #[error("cannot open database {path}: {message}")]
    Open {
        /// The path.
        path: String,
        /// Why.
        message: String,
    },
    /// The file or database is not this library's (another application's, a file that is not
    /// SQLite, tables of its own and none of ours): refused before anything was written to it.
    #[error("refused {path}: not an agents database ({found}); nothing was changed")]
    Foreign {
        /// The path (or the URL without its password).
        path: String,
        /// What was found there.
        found: String,
    },
    /// A read-only open found nothing to read: no file, or a database without the tables.
    #[error("no database at {path}: nothing to read (a command that writes creates it)")]
    NoDatabase {
        /// The path (or the URL without its password).
        path: String,
    },
    /// A read-only open found the database at an older schema version: reading it needs the
    /// migrations, which only a writing open runs.
    #[error(
        "database {path} is at schema version {found}, this library's is {supported}: run a \
         command that writes to it to upgrade it"
    )]
    Outdated {
        /// The path (or the URL without its password).
        path: String,
        /// The version found.
        found: i64,
        /// This library's.
        supported: i64,
    },
    /// The database was written by a newer version of this library.
    #[error("database schema version {found} is newer than this library's ({supported})")]
    SchemaTooNew {
        /// `user_version` found.
        found: i64,
        /// The newest this library knows.
        supported: i64,
    },
    /// No task with this id.
    #[error("unknown task {0}")]
    UnknownTask(i64),
    /// The task is already completed.
    #[error("task {0} is already completed")]
    TaskAlreadyCompleted(i64),
    /// The memory was closed.
    #[error("memory is closed")]
    Closed,
    /// The writer could not commit a batch, even after one retry: the writes from that batch on
    /// are not reported as committed ([`Memory::flush`] returns this instead of hanging).
    #[error("memory writer failed: {0}")]
    WriteFailed(String),
    /// Every id of a kind (2⁶³ − 1 of them) has been handed out.
    #[error("no ids left")]
    IdsExhausted,
    /// A memory that cannot be stored (empty or oversized text, an importance outside 1–10, …).
    #[error("invalid memory: {0}")]
    InvalidMemory(String),
}

impl MemoryError {
    /// The code an agent reports this failure with: `unknown_task`, `task_already_completed`, or
    /// `database_error` for everything else.
    pub fn agent_error_code(&self) -> crate::agent_error::AgentErrorCode {
        use crate::agent_error::AgentErrorCode;
        match self {
            MemoryError::UnknownTask(_) => AgentErrorCode::UnknownTask,
            MemoryError::TaskAlreadyCompleted(_) => AgentErrorCode::TaskAlreadyCompleted,
            _ => AgentErrorCode::DatabaseError,
        }
    }
}

/// What the writer has done so far (for benchmarks and diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Transactions committed.
    pub batches: u64,
    /// Writes committed.
    pub ops: u64,
    /// The most writes committed in one transaction.
    pub largest_batch: u64,
}

/// Handle to one database. Cheap to clone; `Send + Sync`. The writer thread stops when
/// [`Memory::close`] is called or the last clone is dropped.
#[derive(Clone)]
pub struct Memory {
    inner: Arc<Inner>,
}

/// The sending side of the queue: sequence allocation and `send` happen under one lock so the
/// channel order is the sequence order.
struct Queue {
    last_seq: u64,
    tx: Option<Sender<writer::Queued>>,
}

/// What an open may do to the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Create it if missing, migrate it, write to it.
    ReadWrite,
    /// Read it as it is: never create, migrate or write.
    ReadOnly,
}

/// Where a memory lives: a SQLite file, or a PostgreSQL database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file (created if missing).
    File(PathBuf),
    /// A PostgreSQL connection URL (`postgres://user:password@host:port/database`, or
    /// `postgresql://…`).
    Postgres(String),
}

impl Location {
    /// A path is a file, unless it is a `postgres://` or `postgresql://` URL.
    pub fn of(path: impl AsRef<Path>) -> Location {
        let path = path.as_ref();
        match path.to_str() {
            Some(text) if text.starts_with("postgres://") || text.starts_with("postgresql://") => {
                Location::Postgres(text.to_string())
            }
            _ => Location::File(path.to_path_buf()),
        }
    }
}

/// The file's path, or the URL with its password replaced by `***` (for messages and logs).
impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redacted(url)),
        }
    }
}

/// A URL with its password replaced by `***`: the one of the user-info
/// (`postgres://user:secret@host`) and a `password=` query parameter (`?password=secret`).
fn redacted(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
                None => base.to_string(),
            },
            None => base.to_string(),
        },
        None => base.to_string(),
    };
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => param.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

/// The open tasks, in memory.
struct TaskIndex {
    /// The task id allocator.
    ids: Allocator,
    /// The highest task id that may have been handed out before the file was opened.
    max_at_open: i64,
    open: HashMap<i64, TaskRow>,
    by_agent: HashMap<String, BTreeSet<i64>>,
}

impl TaskIndex {
    fn insert(&mut self, task: TaskRow) {
        self.by_agent
            .entry(task.agent_id.clone())
            .or_default()
            .insert(task.id);
        self.open.insert(task.id, task);
    }

    fn remove(&mut self, id: i64) -> Option<TaskRow> {
        let task = self.open.remove(&id)?;
        if let Some(ids) = self.by_agent.get_mut(&task.agent_id) {
            ids.remove(&id);
            if ids.is_empty() {
                self.by_agent.remove(&task.agent_id);
            }
        }
        Some(task)
    }
}

/// The writer thread's body, with the backend's sink in it.
type RunWriter =
    Box<dyn FnOnce(crossbeam_channel::Receiver<writer::Queued>, Arc<writer::CommitState>) + Send>;

/// The reading side of the backend.
enum Store {
    Sqlite(SqliteStore),
    #[cfg(feature = "postgres")]
    Postgres(postgres::PgStore),
}

impl Store {
    /// Runs `f` on a reader connection.
    fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Queries) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        match self {
            Store::Sqlite(store) => store.read(f),
            #[cfg(feature = "postgres")]
            Store::Postgres(store) => store.read(f),
        }
    }

    /// Whether other processes write to the same database (ids are claimed, and a task this
    /// process does not know may exist).
    fn is_shared(&self) -> bool {
        !matches!(self, Store::Sqlite(_))
    }
}

/// An id allocator of the backend's kind.
enum Allocator {
    /// SQLite: reservations that ride with the writer's batches.
    Reserved(IdBlock),
    /// A shared database: claimed blocks.
    Claimed(Claimed),
}

impl Allocator {
    fn new(store: &Store, kind: IdKind, highest: i64) -> Allocator {
        if store.is_shared() {
            Allocator::Claimed(Claimed::new(kind, highest))
        } else {
            Allocator::Reserved(IdBlock::new(kind, highest))
        }
    }

    /// The next id; [`MemoryError::Closed`] on a closed or read-only memory.
    fn next(&mut self, inner: &Inner) -> Result<i64, MemoryError> {
        if inner.is_closed() {
            return Err(MemoryError::Closed);
        }
        match self {
            Allocator::Reserved(ids) => ids.next(inner),
            Allocator::Claimed(ids) => ids.next(inner),
        }
    }

    fn observe(&mut self, id: i64) {
        match self {
            Allocator::Reserved(ids) => ids.observe(id),
            Allocator::Claimed(ids) => ids.observe(id),
        }
    }

    fn last(&self) -> i64 {
        match self {
            Allocator::Reserved(ids) => ids.last(),
            Allocator::Claimed(ids) => ids.last(),
        }
    }
}

struct Inner {
    location: Location,
    /// What [`Memory::path`] shows: the file, or the URL without its password.
    shown: PathBuf,
    store: Store,
    queue: Mutex<Queue>,
    submitted: AtomicU64,
    commit: Arc<writer::CommitState>,
    writer: Mutex<Option<JoinHandle<()>>>,
    agent_ids: Mutex<Allocator>,
    tasks: Mutex<TaskIndex>,
    /// Memory ids; held while a memory is queued, so ids grow in the order memories are stored.
    memory_ids: Mutex<Allocator>,
    /// Inbox row ids: counted here on SQLite (the last one handed out), claimed on a shared
    /// database.
    last_inbox_id: AtomicI64,
    inbox_ids: Option<Mutex<Claimed>>,
    /// The process writing, for a world served by several ([`Memory::set_process`]).
    process: std::sync::OnceLock<String>,
}

/// The number in a canonical agent id (`agent_001` → 1, `agent_1234` → 1234); `None` for any
/// other string (`agent_1`, `agent_0001`, `bob`), which keeps the id ⇄ number mapping one-to-one.
/// The number of an `agent_NNN` id (the key stored agents are ordered by), if it is one.
pub fn agent_number(agent_id: &str) -> Option<i64> {
    let digits = agent_id.strip_prefix("agent_")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    if format!("agent_{n:03}") != agent_id {
        return None;
    }
    Some(n)
}

impl Inner {
    /// Allocates the next sequence number and queues `op` (0 when closed: the write is dropped).
    fn submit(&self, op: writer::Op) -> u64 {
        let mut queue = self.queue.lock();
        let seq = queue.last_seq + 1;
        let Some(tx) = queue.tx.as_ref() else {
            tracing::debug!(?op, "memory is closed: write dropped");
            return 0;
        };
        if let Err(error) = tx.send(writer::Queued { seq, op }) {
            tracing::error!(op = ?error.0.op, "memory writer is gone: write dropped");
            return 0;
        }
        queue.last_seq = seq;
        self.submitted.store(seq, Ordering::Release);
        seq
    }

    fn is_closed(&self) -> bool {
        self.queue.lock().tx.is_none()
    }

    /// Waits until every write queued before this call is committed, then reads. If the writer
    /// failed or stopped, the read goes ahead on what is committed (the failure is reported by
    /// `flush`).
    fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Queries) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        let target = self.submitted.load(Ordering::Acquire);
        if let Err(error) = self.commit.wait_for(target) {
            tracing::debug!(%error, "reading without read-your-writes");
        }
        self.store.read(f)
    }

    /// The next inbox row id.
    fn next_inbox_id(&self) -> Result<i64, MemoryError> {
        match &self.inbox_ids {
            Some(claimed) => claimed.lock().next(self),
            None => Ok(self.last_inbox_id.fetch_add(1, Ordering::Relaxed) + 1),
        }
    }

    /// Stops the writer after it drained the queue and joins it. Idempotent. Gives back the
    /// unused rest of the id reservations first, so that a clean restart leaves no gap.
    fn shutdown(&self) -> Result<(), MemoryError> {
        self.release_ids();
        let tx = self.queue.lock().tx.take();
        drop(tx);
        let handle = self.writer.lock().take();
        if let Some(handle) = handle
            && handle.join().is_err()
        {
            tracing::error!("memory writer thread panicked");
        }
        let submitted = self.submitted.load(Ordering::Acquire);
        match self.commit.failure() {
            Some(message) => Err(MemoryError::WriteFailed(message)),
            None if self.commit.committed() < submitted => Err(MemoryError::WriteFailed(format!(
                "the writer stopped at sequence {} of {submitted}",
                self.commit.committed()
            ))),
            None => Ok(()),
        }
    }

    /// The clean-close release of the id reservations (SQLite: queued with the last writes;
    /// a shared database: given back now, where no other process claimed after).
    fn release_ids(&self) {
        if self.is_closed() {
            return;
        }
        let agents = &*self.agent_ids.lock();
        let tasks = &self.tasks.lock().ids;
        let memories = &*self.memory_ids.lock();
        for (kind, allocator) in [
            (IdKind::Agent, agents),
            (IdKind::Task, tasks),
            (IdKind::Memory, memories),
        ] {
            match allocator {
                Allocator::Reserved(ids) => {
                    self.submit(writer::Op::IdBlock {
                        kind,
                        to: ids.last(),
                        release: true,
                    });
                }
                Allocator::Claimed(ids) => self.give_back(kind, ids),
            }
        }
        if let Some(inbox) = &self.inbox_ids {
            self.give_back(IdKind::Inbox, &inbox.lock());
        }
    }

    /// Gives back the unused end of a claim.
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    fn give_back(&self, kind: IdKind, ids: &Claimed) {
        #[cfg(feature = "postgres")]
        if let (Store::Postgres(store), Some((last, claimed_to))) = (&self.store, ids.unused())
            && let Err(error) = store.release(kind, last, claimed_to)
        {
            tracing::debug!(%error, "ids not given back (they are skipped, never reused)");
        }
    }
}

impl Reserve for Inner {
    fn queue_reservation(&self, kind: IdKind, to: i64) -> u64 {
        self.submit(writer::Op::IdBlock {
            kind,
            to,
            release: false,
        })
    }
    fn is_committed(&self, seq: u64) -> bool {
        self.commit.committed() >= seq
    }
    fn wait_committed(&self, seq: u64) -> Result<(), MemoryError> {
        self.commit.wait_for(seq)
    }
}

impl Claim for Inner {
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    fn claim(&self, kind: IdKind, floor: i64, count: i64) -> Result<i64, MemoryError> {
        if self.is_closed() {
            return Err(MemoryError::Closed);
        }
        match &self.store {
            #[cfg(feature = "postgres")]
            Store::Postgres(store) => store.claim(kind, floor, count),
            Store::Sqlite(_) => unreachable!("SQLite ids are reserved, not claimed"),
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Err(error) = self.shutdown() {
            tracing::error!(%error, "memory closed with an error");
        }
    }
}

impl Memory {
    /// Opens the memory at `path`: a SQLite file (created if needed, with its parent
    /// directory), or a PostgreSQL database when `path` is a `postgres://` or
    /// `postgresql://` URL (see [`Location::of`]). Runs the migrations and starts the writer
    /// thread.
    ///
    /// The database is inspected first: one that is not this library's (another
    /// application's SQLite file, a file that is not SQLite, a PostgreSQL database with tables
    /// of its own and none of ours) is refused before anything is written to it.
    ///
    /// Errors: [`MemoryError::Foreign`] (that refusal); [`MemoryError::Open`] (with the path,
    /// or the URL without its password) when the file cannot be opened or the server cannot be
    /// reached; [`MemoryError::SchemaTooNew`] when the database is newer than
    /// [`Memory::SCHEMA_VERSION`] (refused untouched too).
    pub fn open(path: impl AsRef<Path>) -> Result<Memory, MemoryError> {
        Memory::open_at(Location::of(path))
    }

    /// Opens the memory at `location` to read and write (see [`Memory::open`]).
    pub fn open_at(location: Location) -> Result<Memory, MemoryError> {
        Memory::open_with(location, Access::ReadWrite)
    }

    /// Opens the memory at `location` to read only: nothing is created, migrated or written,
    /// and no writer thread starts. Its writes are dropped as on a closed memory
    /// ([`MemoryError::Closed`] where a write answers with a result). A search reads the
    /// keyword index as the last writer left it.
    ///
    /// Errors: those of [`Memory::open`], and [`MemoryError::NoDatabase`] (no file, an empty
    /// one, a PostgreSQL database without the tables) and [`MemoryError::Outdated`] (a
    /// database at an older schema version: a writing open upgrades it).
    pub fn open_read_only(location: Location) -> Result<Memory, MemoryError> {
        Memory::open_with(location, Access::ReadOnly)
    }

    fn open_with(location: Location, access: Access) -> Result<Memory, MemoryError> {
        let (store, sink, loaded, shown): (Store, Option<RunWriter>, store::Loaded, PathBuf) =
            match &location {
                Location::File(path) => {
                    let (store, sink, loaded) = SqliteStore::open(path, access)?;
                    let shown = store.path().to_path_buf();
                    let run = sink.map(|sink| -> RunWriter {
                        Box::new(move |rx, state| writer::run(sink, rx, state))
                    });
                    (Store::Sqlite(store), run, loaded, shown)
                }
                #[cfg(feature = "postgres")]
                Location::Postgres(url) => {
                    let (store, sink, loaded) = postgres::PgStore::open(url, &location, access)?;
                    let shown = PathBuf::from(location.to_string());
                    let run = sink.map(|sink| -> RunWriter {
                        Box::new(move |rx, state| writer::run(sink, rx, state))
                    });
                    (Store::Postgres(store), run, loaded, shown)
                }
                #[cfg(not(feature = "postgres"))]
                Location::Postgres(_) => {
                    return Err(MemoryError::Open {
                        path: location.to_string(),
                        message: "this build has no PostgreSQL support (the `postgres` \
                                  feature of agents-core)"
                            .to_string(),
                    });
                }
            };

        let mut tasks = TaskIndex {
            ids: Allocator::new(&store, IdKind::Task, loaded.max_task_id),
            max_at_open: loaded.max_task_id,
            open: HashMap::new(),
            by_agent: HashMap::new(),
        };
        for task in loaded.open_tasks {
            tasks.insert(task);
        }

        let commit = Arc::new(writer::CommitState::new());
        let (tx, handle) = match sink {
            Some(sink) => {
                let (tx, rx) = crossbeam_channel::unbounded();
                let state = commit.clone();
                let handle = std::thread::Builder::new()
                    .name("agents-memory-writer".to_string())
                    .spawn(move || sink(rx, state))
                    .map_err(|e| MemoryError::Open {
                        path: shown.display().to_string(),
                        message: format!("cannot start the writer thread: {e}"),
                    })?;
                (Some(tx), Some(handle))
            }
            None => (None, None),
        };

        let inbox_ids = store
            .is_shared()
            .then(|| Mutex::new(Claimed::new(IdKind::Inbox, loaded.max_inbox_id)));
        Ok(Memory {
            inner: Arc::new(Inner {
                location,
                shown,
                queue: Mutex::new(Queue { last_seq: 0, tx }),
                submitted: AtomicU64::new(0),
                commit,
                writer: Mutex::new(handle),
                agent_ids: Mutex::new(Allocator::new(&store, IdKind::Agent, loaded.last_agent_seq)),
                tasks: Mutex::new(tasks),
                memory_ids: Mutex::new(Allocator::new(
                    &store,
                    IdKind::Memory,
                    loaded.max_memory_id,
                )),
                last_inbox_id: AtomicI64::new(loaded.max_inbox_id),
                inbox_ids,
                store,
                process: std::sync::OnceLock::new(),
            }),
        })
    }
    /// The schema version this library writes.
    pub const SCHEMA_VERSION: i64 = sqlite::schema::LATEST;

    /// The database file (or the PostgreSQL URL, its password hidden).
    pub fn path(&self) -> &Path {
        &self.inner.shown
    }

    /// Whether the memory works now: its writer has not failed, and the database answers a
    /// query (a PostgreSQL server may be unreachable).
    pub fn check(&self) -> Result<(), MemoryError> {
        if let Some(failure) = self.inner.commit.failure() {
            return Err(MemoryError::WriteFailed(failure));
        }
        self.inner.store.read(|q| q.ping())
    }

    /// Where the memory lives.
    pub fn location(&self) -> &Location {
        &self.inner.location
    }

    /// Allocates the next agent id (`agent_001`, …), never handed out before in this database,
    /// across restarts and crashes: it comes from a reservation committed before the id is
    /// returned (see the id rules in the module docs). Usually no disk wait; at most one commit.
    ///
    /// Errors: [`MemoryError::Closed`], [`MemoryError::WriteFailed`] (the reservation could
    /// not be committed), [`MemoryError::IdsExhausted`].
    pub fn next_agent_id(&self) -> Result<String, MemoryError> {
        let n = self.inner.agent_ids.lock().next(&self.inner)?;
        Ok(format!("agent_{n:03}"))
    }
    /// Queues an insert-or-replace of an agent's resume record.
    ///
    /// An existing record keeps its `created_at` (first spawn); everything else is replaced.
    /// The id must be canonical (`agent_` and at least three digits without extra leading
    /// zeros, as [`Memory::next_agent_id`] makes them); any other id is refused with a warning
    /// and sequence 0. Saving an id ahead of the allocator moves the allocator past it.
    pub fn save_agent(&self, record: &AgentRecord) -> u64 {
        let Some(number) = agent_number(&record.agent_id) else {
            tracing::warn!(
                agent_id = record.agent_id,
                "save_agent: not an agent_NNN id; record not saved"
            );
            return 0;
        };
        self.inner.agent_ids.lock().observe(number);
        let op = writer::SaveAgent {
            agent_id: record.agent_id.clone(),
            seq: number,
            name: record.name.clone(),
            role: record.role.clone(),
            prompt: record.prompt.clone(),
            brain: record.brain.clone(),
            config: record.config.to_string(),
            key: record
                .config
                .get("key")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            x: record.position.x,
            y: record.position.y,
            state: record.state,
            created_at: record.created_at.clone(),
            updated_at: crate::time::now_iso(),
            removed_at: record.removed_at.clone(),
        };
        self.inner.submit(writer::Op::SaveAgent(Box::new(op)))
    }
    /// Queues an update of an agent's last position and state.
    pub fn save_agent_position(
        &self,
        agent_id: &str,
        position: Position,
        state: AgentState,
    ) -> u64 {
        self.inner.submit(writer::Op::AgentPosition {
            agent_id: agent_id.to_string(),
            x: position.x,
            y: position.y,
            state,
            updated_at: crate::time::now_iso(),
        })
    }
    /// Queues marking an agent terminated (`removed_at` = now).
    pub fn mark_agent_removed(&self, agent_id: &str) -> u64 {
        self.inner.submit(writer::Op::AgentRemoved {
            agent_id: agent_id.to_string(),
            removed_at: crate::time::now_iso(),
        })
    }
    /// Queues a conversation line (timestamped now).
    pub fn record_conversation(&self, line: NewConversation) -> u64 {
        let NewConversation {
            agent_id,
            sender,
            content,
            recipient,
        } = line;
        self.inner.submit(writer::Op::Conversation {
            agent_id,
            timestamp: crate::time::now_iso(),
            sender,
            content,
            recipient,
        })
    }
    /// Queues a memory of `agent_id`'s stream (checked first: [`NewMemory::checked`]); returns
    /// its id (never handed out again, as task ids) and its write's sequence number. The
    /// agent's stream is at most `max_memories` long once it is committed (0: no ceiling):
    /// this memory is stored, and the agent's least valuable memories make room (see
    /// [`Memory::remember_all`]). Errors: [`MemoryError::InvalidMemory`] naming what is wrong
    /// (nothing is queued then).
    pub fn remember(
        &self,
        agent_id: &str,
        memory: NewMemory,
        max_memories: usize,
    ) -> Result<(i64, u64), MemoryError> {
        let (ids, seq) = self.remember_all(agent_id, vec![memory], max_memories)?;
        Ok((ids[0], seq))
    }
    /// Queues several memories of `agent_id` in one write, all stored or none (a reflection's
    /// insights); returns their ids, in order, and the write's sequence number. Checked as
    /// [`Memory::remember`]; one bad memory queues nothing.
    ///
    /// The ceiling: the transaction that stores them leaves the agent at most `max_memories`
    /// memories (0: no ceiling), every kind counted. The memories this write stores are kept
    /// (the newest memory is never the one dropped); room is made by forgetting the agent's
    /// least valuable ones, with their vectors: first what a compaction would sum up (the
    /// oldest, least important of what happened to it), then the rest by importance, then
    /// age. Compaction ([`crate::mind::compaction`]) normally keeps a running agent a tenth
    /// below its cap; the ceiling is the backstop for every writer.
    pub fn remember_all(
        &self,
        agent_id: &str,
        memories: Vec<NewMemory>,
        max_memories: usize,
    ) -> Result<(Vec<i64>, u64), MemoryError> {
        if agent_id.trim().is_empty() {
            return Err(MemoryError::InvalidMemory("agent_id is empty".into()));
        }
        if memories.is_empty() {
            return Err(MemoryError::InvalidMemory("no memory to store".into()));
        }
        let memories = memories
            .into_iter()
            .map(NewMemory::checked)
            .collect::<Result<Vec<_>, _>>()?;
        let mut ids = self.inner.memory_ids.lock();
        let created_at = crate::time::now_iso();
        let mut lines = Vec::with_capacity(memories.len());
        for memory in memories {
            lines.push(writer::MemoryLine {
                id: ids.next(&self.inner)?,
                agent_id: agent_id.to_string(),
                memory,
                created_at: created_at.clone(),
            });
        }
        let ids: Vec<i64> = lines.iter().map(|l| l.id).collect();
        let seq = self.inner.submit(writer::Op::Memories {
            lines,
            max_memories,
        });
        Ok((ids, seq))
    }
    /// Queues new importances for memories of `agent_id` (`(id, 1 to 10)`, a model's ratings;
    /// others' memories, and ones that do not exist, are left alone); returns the write's
    /// sequence number. Errors: [`MemoryError::InvalidMemory`] for an importance outside 1–10.
    pub fn rate_memories(
        &self,
        agent_id: &str,
        ratings: Vec<(i64, u8)>,
    ) -> Result<u64, MemoryError> {
        if let Some((id, bad)) = ratings.iter().find(|(_, i)| !(1..=10).contains(i)) {
            return Err(MemoryError::InvalidMemory(format!(
                "importance of memory {id} must be 1 to 10, got {bad}"
            )));
        }
        Ok(self.inner.submit(writer::Op::Rate {
            agent_id: agent_id.to_string(),
            ratings,
        }))
    }
    /// Queues forgetting memory `id` of `agent_id` (its row and its place in the keyword
    /// index; a memory of another agent, or one that does not exist, is left alone); returns the
    /// write's sequence number.
    pub fn forget(&self, agent_id: &str, id: i64) -> u64 {
        self.inner.submit(writer::Op::ForgetMemory {
            agent_id: agent_id.to_string(),
            id,
        })
    }
    /// Queues marking memories of `agent_id` as recalled at `game_time` (recency decays from
    /// the last recall); returns the write's sequence number.
    pub fn touch_memories(&self, agent_id: &str, ids: Vec<i64>, game_time: f64) -> u64 {
        self.inner.submit(writer::Op::TouchMemories {
            agent_id: agent_id.to_string(),
            ids,
            game_time,
        })
    }
    /// The latest game time any memory was formed or recalled at (`None`: no memory yet): where
    /// a runtime's game clock resumes.
    pub fn latest_memory_time(&self) -> Result<Option<f64>, MemoryError> {
        self.inner.read(|q| q.latest_memory_time())
    }
    /// A page of an agent's memories, as [`Memory::conversation_page`]: the newest `limit` with
    /// an id below `before` (`None`: from the newest), oldest first within the page.
    pub fn memories_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<StoredMemory>, MemoryError> {
        let (agent_id, before) = (agent_id.to_string(), before.unwrap_or(i64::MAX));
        self.inner
            .read(move |q| q.memories_before(&agent_id, before, limit))
    }
    /// An agent's memories that share a word with `query` (its plain words: [`search_terms`]),
    /// best match first, at most `limit`; none when the query has no word to look for.
    pub fn search_memories(
        &self,
        agent_id: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<FoundMemory>, MemoryError> {
        let (agent_id, terms) = (agent_id.to_string(), search_terms(query));
        self.inner.submit(writer::Op::IndexMemories);
        self.inner
            .read(move |q| q.search_memories(&agent_id, &terms, limit))
    }
    /// What a recall chooses from, in one read: the best `matches` keyword matches of `query`
    /// ([`Memory::search_memories`]), and of each of `lines` apart (the lines a decision
    /// answers, when there are several: each finds its own best), the newest `newest`
    /// memories of `agent_id`, what it thinks of each of `people`
    /// ([`Memory::current_relationship`]), and the memories `nearest` by id (those nearest
    /// in meaning, found in [`crate::mind::vectors`]). With `committed_only` it reads what is
    /// committed without waiting for the writes queued before (a decision's recall must not
    /// wait behind the writer); else it sees them.
    pub fn recall_candidates(
        &self,
        agent_id: &str,
        (query, lines): (&str, &[String]),
        sizes: (usize, usize),
        (people, nearest): (&[String], &[i64]),
        committed_only: bool,
    ) -> Result<Candidates, MemoryError> {
        let (agent_id, terms, people, nearest) = (
            agent_id.to_string(),
            search_terms(query),
            people.to_vec(),
            nearest.to_vec(),
        );
        let line_terms: Vec<Vec<String>> = lines.iter().map(|l| search_terms(l)).collect();
        let (matches, newest) = sizes;
        let read = move |q: &mut dyn Queries| {
            let mut relationships = Vec::new();
            for person in &people {
                relationships.extend(q.current_relationship(&agent_id, person)?);
            }
            let mut per_line = Vec::with_capacity(line_terms.len());
            for terms in &line_terms {
                per_line.push(q.search_memories(&agent_id, terms, LINE_MATCHES)?);
            }
            Ok(Candidates {
                found: q.search_memories(&agent_id, &terms, matches)?,
                per_line,
                newest: q.memories_before(&agent_id, i64::MAX, newest)?.rows,
                relationships,
                nearest: if nearest.is_empty() {
                    Vec::new()
                } else {
                    q.memories_by_id(&agent_id, &nearest)?
                },
            })
        };
        if committed_only {
            self.inner.store.read(read)
        } else {
            self.inner.submit(writer::Op::IndexMemories);
            self.inner.read(read)
        }
    }
    /// Queues the vectors `model` made of memories of `agent_id` (`(memory id, vector)`): each
    /// replaces the memory's vector before, and a memory no longer stored (forgotten, summed
    /// up) gets none. Returns the write's sequence number.
    pub fn store_vectors(&self, agent_id: &str, model: &str, vectors: &[(i64, Vec<f32>)]) -> u64 {
        self.inner.submit(writer::Op::Vectors {
            agent_id: agent_id.to_string(),
            model: model.to_string(),
            vectors: vectors
                .iter()
                .map(|(id, v)| (*id, stream::vector_bytes(v)))
                .collect(),
        })
    }
    /// The vectors `model` made of `agent_id`'s memories, by memory id (waits for the writes
    /// queued before).
    pub fn memory_vectors(
        &self,
        agent_id: &str,
        model: &str,
    ) -> Result<Vec<(i64, Vec<f32>)>, MemoryError> {
        let (agent_id, model) = (agent_id.to_string(), model.to_string());
        let rows = self
            .inner
            .read(move |q| q.memory_vectors(&agent_id, &model))?;
        rows.into_iter()
            .map(|(id, bytes)| Ok((id, stream::vector_of(&bytes)?)))
            .collect()
    }
    /// `agent_id`'s memories with an id above `after` that `model` has made no vector of,
    /// `(id, text)` by id, at most `limit` (waits for the writes queued before).
    pub fn unembedded(
        &self,
        agent_id: &str,
        model: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, MemoryError> {
        let (agent_id, model) = (agent_id.to_string(), model.to_string());
        self.inner
            .read(move |q| q.unembedded(&agent_id, &model, after, limit))
    }
    /// How many memories `agent_id` has (waits for the writes queued before).
    pub fn memory_count(&self, agent_id: &str) -> Result<u64, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner.read(move |q| q.memory_count(&agent_id))
    }
    /// The oldest `limit` memories of `agent_id` that happened to it (not insights,
    /// relationships or summaries) with an importance of at most `max_importance`, oldest
    /// first: what a compaction may sum up (waits for the writes queued before).
    pub fn compactable(
        &self,
        agent_id: &str,
        max_importance: u8,
        limit: usize,
    ) -> Result<Vec<StoredMemory>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner
            .read(move |q| q.oldest_memories(&agent_id, max_importance, limit))
    }
    /// Queues a compaction of `agent_id`'s memories: `summary` stored and the memories
    /// `summarised` (its sources) deleted, in one write — after a crash either both happened
    /// or neither. Returns the summary's id and the write's sequence number. Checked as
    /// [`Memory::remember`], and kept within `max_memories` as [`Memory::remember_all`] keeps
    /// it.
    pub fn compact(
        &self,
        agent_id: &str,
        summary: NewMemory,
        summarised: Vec<i64>,
        max_memories: usize,
    ) -> Result<(i64, u64), MemoryError> {
        if agent_id.trim().is_empty() {
            return Err(MemoryError::InvalidMemory("agent_id is empty".into()));
        }
        let summary = summary.checked()?;
        let mut ids = self.inner.memory_ids.lock();
        let id = ids.next(&self.inner)?;
        let seq = self.inner.submit(writer::Op::Compact {
            summary: writer::MemoryLine {
                id,
                agent_id: agent_id.to_string(),
                memory: summary,
                created_at: crate::time::now_iso(),
            },
            summarised,
            max_memories,
        });
        Ok((id, seq))
    }
    /// What `agent_id` thinks of `about` now: its newest relationship memory about them that
    /// no other supersedes (waits for the writes queued before).
    pub fn current_relationship(
        &self,
        agent_id: &str,
        about: &str,
    ) -> Result<Option<StoredMemory>, MemoryError> {
        let (agent_id, about) = (agent_id.to_string(), about.to_string());
        self.inner
            .read(move |q| q.current_relationship(&agent_id, &about))
    }
    /// Queues a traced model call (`brain_calls`).
    pub fn record_brain_call(&self, call: BrainCall) -> u64 {
        self.inner.submit(writer::Op::BrainCall(Box::new(call)))
    }
    /// The last `limit` traced model calls of an agent, oldest first.
    pub fn brain_calls(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<BrainCallRow>, MemoryError> {
        Ok(self.brain_calls_page(agent_id, None, limit)?.rows)
    }
    /// A page of an agent's traced model calls, as [`Memory::conversation_page`].
    pub fn brain_calls_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<BrainCallRow>, MemoryError> {
        let (agent_id, before) = (agent_id.to_string(), before.unwrap_or(i64::MAX));
        self.inner
            .read(move |q| q.brain_calls_before(&agent_id, before, limit))
    }
    /// Queues an app session's row (inserted or replaced).
    pub fn save_app(&self, row: AppRow) -> u64 {
        self.inner.submit(writer::Op::App(Box::new(row)))
    }
    /// Queues an entry of an app's log (an action, an event or a chat line as JSON).
    pub fn log_app(&self, app_id: &str, kind: AppLogKind, entry: String) -> u64 {
        self.inner.submit(writer::Op::AppLog {
            app_id: app_id.to_string(),
            kind,
            entry,
        })
    }
    /// Queues a game of an arena tournament: its number in the tournament, the game's name, its
    /// result (`1-0`) and its whole record as JSON ([`crate::arena::results::GameResult`]).
    pub fn record_arena_game(
        &self,
        tournament: &str,
        game_index: u32,
        game: &str,
        result: &str,
        record: String,
    ) -> u64 {
        self.inner.submit(writer::Op::ArenaGame {
            tournament: tournament.to_string(),
            game_index,
            game: game.to_string(),
            result: result.to_string(),
            record,
        })
    }
    /// The records (JSON) of a tournament's games, by their number (waits for the writes
    /// queued before).
    pub fn arena_games(&self, tournament: &str) -> Result<Vec<String>, MemoryError> {
        let tournament = tournament.to_string();
        self.inner.read(move |q| q.arena_games(&tournament))
    }
    /// Queues a GM turn of campaign `campaign_id` (its turn-log entry as JSON).
    pub fn log_campaign_turn(&self, campaign_id: &str, turn_id: &str, entry: String) -> u64 {
        self.inner.submit(writer::Op::CampaignTurn {
            campaign_id: campaign_id.to_string(),
            turn_id: turn_id.to_string(),
            entry,
        })
    }
    /// How many turns of `campaign_id` are kept.
    pub fn campaign_turn_count(&self, campaign_id: &str) -> Result<u64, MemoryError> {
        let campaign_id = campaign_id.to_string();
        self.inner
            .read(move |q| q.campaign_turn_count(&campaign_id))
    }
    /// The turn-log entries of `campaign_id` (JSON), oldest first.
    pub fn campaign_turns(&self, campaign_id: &str) -> Result<Vec<String>, MemoryError> {
        let campaign_id = campaign_id.to_string();
        self.inner.read(move |q| q.campaign_turns(&campaign_id))
    }
    /// The stored session of `app_id`, with its last `limit` actions, events and chat lines.
    pub fn load_app(&self, app_id: &str, limit: usize) -> Result<Option<StoredApp>, MemoryError> {
        let app_id = app_id.to_string();
        self.inner.read(move |q| q.app(&app_id, limit))
    }
    /// Queues a state transition row (timestamped now, and naming this process when it is one
    /// of several: [`Memory::set_process`]).
    pub fn record_state_change(&self, agent_id: &str, old: AgentState, new: AgentState) -> u64 {
        self.inner.submit(writer::Op::StateChange {
            agent_id: agent_id.to_string(),
            old,
            new,
            timestamp: crate::time::now_iso(),
            process: self.inner.process.get().cloned(),
        })
    }
    /// Names the process writing this memory, in a world served by several processes sharing
    /// one database: from now on each state change row records it (`agent_state_history`'s
    /// `process` column, NULL otherwise), so the history says which process ran an agent when
    /// (and shows that no agent ran on two at once). Set once; returns whether this call set it.
    pub fn set_process(&self, process: &str) -> bool {
        self.inner.process.set(process.to_string()).is_ok()
    }
    /// The process named by [`Memory::set_process`], if any.
    pub fn process(&self) -> Option<&str> {
        self.inner.process.get().map(String::as_str)
    }
    /// Assigns a task: allocates its id (never handed out before, as for
    /// [`Memory::next_agent_id`]), queues the row (`assigned`), returns the row and the write's
    /// sequence number.
    ///
    /// Errors: [`MemoryError::Closed`], [`MemoryError::WriteFailed`],
    /// [`MemoryError::IdsExhausted`]; nothing is stored or indexed then.
    pub fn assign_task(
        &self,
        agent_id: &str,
        task_name: &str,
    ) -> Result<(TaskRow, u64), MemoryError> {
        let mut tasks = self.inner.tasks.lock();
        let id = tasks.ids.next(&self.inner)?;
        let row = TaskRow {
            id,
            agent_id: agent_id.to_string(),
            task_name: task_name.to_string(),
            status: TaskStatus::Assigned,
            created_at: crate::time::now_iso(),
            completed_at: None,
        };
        // Queued under the index lock: a completion can only be queued after this insert.
        let seq = self.inner.submit(writer::Op::AssignTask {
            id: row.id,
            agent_id: row.agent_id.clone(),
            task_name: row.task_name.clone(),
            created_at: row.created_at.clone(),
        });
        if seq == 0 {
            return Err(MemoryError::Closed);
        }
        tasks.insert(row.clone());
        Ok((row, seq))
    }
    /// Completes an open task: queues the update (`completed`, `completed_at` = now).
    ///
    /// Errors (synchronously, no disk wait for a task this process knows):
    /// [`MemoryError::UnknownTask`], [`MemoryError::TaskAlreadyCompleted`],
    /// [`MemoryError::Closed`]. On a shared database a task assigned by another process is
    /// looked up there and completed here.
    pub fn complete_task(&self, task_id: i64) -> Result<(TaskRow, u64), MemoryError> {
        #[cfg(feature = "postgres")]
        if self.inner.store.is_shared() {
            if task_id <= 0 {
                return Err(MemoryError::UnknownTask(task_id));
            }
            return self.complete_shared_task(task_id);
        }
        let mut tasks = self.inner.tasks.lock();
        if tasks.open.contains_key(&task_id) {
            if self.inner.is_closed() {
                return Err(MemoryError::Closed);
            }
            let completed_at = crate::time::now_iso();
            let seq = self.inner.submit(writer::Op::CompleteTask {
                id: task_id,
                completed_at: completed_at.clone(),
            });
            if seq == 0 {
                return Err(MemoryError::Closed);
            }
            let mut row = tasks
                .remove(task_id)
                .ok_or(MemoryError::UnknownTask(task_id))?;
            row.status = TaskStatus::Completed;
            row.completed_at = Some(completed_at);
            return Ok((row, seq));
        }
        let (last_id, max_at_open) = (tasks.ids.last(), tasks.max_at_open);
        drop(tasks);
        if task_id <= 0 || task_id > last_id {
            return Err(MemoryError::UnknownTask(task_id));
        }
        if task_id > max_at_open {
            // Handed out in this session and no longer open: completed.
            return Err(MemoryError::TaskAlreadyCompleted(task_id));
        }
        // Stored before this session: exists on disk (then it is completed) or never existed.
        match self.inner.store.read(move |q| q.task(task_id))? {
            Some(_) => Err(MemoryError::TaskAlreadyCompleted(task_id)),
            None => Err(MemoryError::UnknownTask(task_id)),
        }
    }
    /// [`Memory::complete_task`] on a database other processes write to: the database says
    /// whether the task is still open (another process may have completed it, or assigned it),
    /// and the completion is committed when this returns.
    #[cfg(feature = "postgres")]
    fn complete_shared_task(&self, task_id: i64) -> Result<(TaskRow, u64), MemoryError> {
        if self.inner.is_closed() {
            return Err(MemoryError::Closed);
        }
        // This process's own writes first (the task's insert may still be queued).
        let submitted = self.inner.submitted.load(Ordering::Acquire);
        self.inner.commit.wait_for(submitted)?;
        let completed_at = crate::time::now_iso();
        let completed = match &self.inner.store {
            Store::Postgres(store) => store.complete_task(task_id, completed_at)?,
            Store::Sqlite(_) => unreachable!("SQLite is not shared"),
        };
        self.inner.tasks.lock().remove(task_id);
        match completed {
            Some(row) => Ok((row, submitted)),
            None => match self.inner.store.read(move |q| q.task(task_id))? {
                Some(_) => Err(MemoryError::TaskAlreadyCompleted(task_id)),
                None => Err(MemoryError::UnknownTask(task_id)),
            },
        }
    }
    /// Open (`assigned`) tasks of an agent, oldest first, from the in-memory index (no disk).
    pub fn open_tasks(&self, agent_id: &str) -> Vec<TaskRow> {
        let tasks = self.inner.tasks.lock();
        tasks
            .by_agent
            .get(agent_id)
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| tasks.open.get(id).cloned())
                    .collect()
            })
            .unwrap_or_default()
    }
    /// The open task with this id, if any (no disk).
    pub fn open_task(&self, task_id: i64) -> Option<TaskRow> {
        self.inner.tasks.lock().open.get(&task_id).cloned()
    }
    /// The task with this id, open or completed: from the in-memory index when it is open here,
    /// else from the database (where another process of a shared database may have written it).
    pub fn task(&self, task_id: i64) -> Result<Option<TaskRow>, MemoryError> {
        if let Some(row) = self.open_task(task_id) {
            return Ok(Some(row));
        }
        self.inner.store.read(move |q| q.task(task_id))
    }
    /// Accepts a line for an agent: one write holds both its inbox row (kept until
    /// [`Memory::inbox_done`]) and its conversation row. Returns the inbox row id and the
    /// write's sequence number; once that is committed, the line survives a crash and is
    /// delivered again to the agent when it is resumed ([`Memory::inbox`]).
    pub fn send_to_inbox(
        &self,
        agent_id: &str,
        sender: &str,
        content: &str,
        dialog_type: &str,
    ) -> Result<(i64, u64), MemoryError> {
        let id = self.inner.next_inbox_id()?;
        let seq = self
            .inner
            .submit(writer::Op::Inbox(Box::new(writer::InboxLine {
                id,
                agent_id: agent_id.to_string(),
                sender: sender.to_string(),
                content: content.to_string(),
                dialog_type: dialog_type.to_string(),
                created_at: crate::time::now_iso(),
            })));
        if seq == 0 {
            return Err(MemoryError::Closed);
        }
        Ok((id, seq))
    }
    /// Queues removing an answered inbox line.
    pub fn inbox_done(&self, inbox_id: i64) -> u64 {
        self.inner.submit(writer::Op::InboxDone { id: inbox_id })
    }
    /// An agent's unanswered inbox lines, oldest first.
    pub fn inbox(&self, agent_id: &str) -> Result<Vec<InboxRow>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner.read(move |q| q.inbox(&agent_id))
    }
    /// Waits (without blocking a thread) until the write `seq` and every earlier one is
    /// committed. Errors with [`MemoryError::WriteFailed`] if the writer failed or stopped first.
    pub async fn committed(&self, seq: u64) -> Result<(), MemoryError> {
        self.inner.commit.committed_async(seq).await
    }
    /// Highest sequence number handed out.
    pub fn submitted_seq(&self) -> u64 {
        self.inner.submitted.load(Ordering::Acquire)
    }
    /// Highest sequence number committed (every write up to it is durable).
    pub fn committed_seq(&self) -> u64 {
        self.inner.commit.committed()
    }
    /// A watch that changes whenever the writer commits (value: `committed_seq`).
    pub fn commit_watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.commit.subscribe()
    }
    /// Blocks until the write with sequence number `seq` (and every earlier one) is committed.
    /// Errors with [`MemoryError::WriteFailed`] instead of hanging if the writer failed or
    /// stopped first.
    pub fn wait_committed(&self, seq: u64) -> Result<(), MemoryError> {
        self.inner.commit.wait_for(seq)
    }
    /// Blocks until every write queued so far is committed.
    pub fn flush(&self) -> Result<(), MemoryError> {
        self.wait_committed(self.submitted_seq())
    }
    /// What the writer has committed so far: transactions, writes, largest batch.
    pub fn writer_stats(&self) -> WriterStats {
        let (batches, ops, largest_batch) = self.inner.commit.stats();
        WriterStats {
            batches,
            ops,
            largest_batch,
        }
    }
    /// The last `limit` lines of an agent's memory, oldest first.
    pub fn recent_conversation(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner
            .read(move |q| q.recent_conversation(&agent_id, limit))
    }
    /// Like [`Memory::recent_conversation`], but reads what is committed now without waiting for
    /// queued writes. The agents' decision loop uses it: the lines an agent has just acknowledged
    /// are in its context already, and waiting for the writer on every decision of 10,000 agents
    /// would only park threads.
    pub fn recent_conversation_committed(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<ConversationRow>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner
            .store
            .read(move |q| q.recent_conversation(&agent_id, limit))
    }
    /// All tasks of an agent (open and completed), oldest first.
    pub fn tasks(&self, agent_id: &str) -> Result<Vec<TaskRow>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner.read(move |q| q.tasks(&agent_id))
    }
    /// The last `limit` state transitions of an agent, oldest first.
    pub fn state_history(
        &self,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<StateChangeRow>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner.read(move |q| q.state_history(&agent_id, limit))
    }
    /// A page of an agent's conversation, newest first across pages and oldest first within one:
    /// the newest `limit` lines with an id below `before` (`None`: from the newest). `next` is the
    /// `before` of the following (older) page.
    pub fn conversation_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<ConversationRow>, MemoryError> {
        let (agent_id, before) = (agent_id.to_string(), before.unwrap_or(i64::MAX));
        self.inner
            .read(move |q| q.conversation_before(&agent_id, before, limit))
    }
    /// A page of an agent's state history, as [`Memory::conversation_page`].
    pub fn state_history_page(
        &self,
        agent_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Page<StateChangeRow>, MemoryError> {
        let (agent_id, before) = (agent_id.to_string(), before.unwrap_or(i64::MAX));
        self.inner
            .read(move |q| q.state_history_before(&agent_id, before, limit))
    }
    /// A page of an agent's tasks, oldest first: `limit` tasks with an id above `after`.
    pub fn tasks_page(
        &self,
        agent_id: &str,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Page<TaskRow>, MemoryError> {
        let (agent_id, after) = (agent_id.to_string(), after.unwrap_or(0));
        self.inner
            .read(move |q| q.tasks_after(&agent_id, after, limit))
    }
    /// A page of the stored agents by agent number: `limit` agents numbered above `after`.
    pub fn agents_page(
        &self,
        after: Option<i64>,
        limit: usize,
    ) -> Result<Page<AgentRecord>, MemoryError> {
        let after = after.unwrap_or(i64::MIN);
        self.inner.read(move |q| q.agents_after(after, limit))
    }
    /// One stored agent.
    pub fn agent(&self, agent_id: &str) -> Result<Option<AgentRecord>, MemoryError> {
        let agent_id = agent_id.to_string();
        self.inner.read(move |q| q.agent(&agent_id))
    }
    /// The newest stored agent that is not terminated and has this `key`
    /// ([`crate::runtime::AgentConfig::key`]).
    pub fn agent_by_key(&self, key: &str) -> Result<Option<AgentRecord>, MemoryError> {
        let key = key.to_string();
        self.inner.read(move |q| q.agent_by_key(&key))
    }
    /// Every stored agent, by id.
    pub fn agents(&self) -> Result<Vec<AgentRecord>, MemoryError> {
        self.inner.read(|q| q.agents())
    }
    /// Flushes, stops and joins the writer thread. Later writes are dropped (sequence 0);
    /// reads still work. Idempotent.
    pub fn close(&self) -> Result<(), MemoryError> {
        self.inner.shutdown()
    }
}
