//! The PostgreSQL backend (`--db postgres://…`): the same tables, migrations and promises as
//! SQLite, for a world served by several processes.
//!
//! - **Connections.** The writer thread owns one connection; reads go to a small pool of reader
//!   threads ([`READERS`]), each with its own connection. Every connection is driven by its
//!   thread's own current-thread runtime, so callers may be async tasks or plain threads.
//! - **Durability.** A batch is one transaction, committed with PostgreSQL's default
//!   `synchronous_commit = on`: an acknowledged write is on the server's disk (WAL), and
//!   survives a kill of this process or of the server. A connection lost while committing is
//!   resolved through `memory_writers` (see `write.rs`), never by writing a batch twice.
//! - **Ids across processes.** Agent numbers, task ids and inbox row ids are *claimed* in
//!   blocks from `id_blocks` (`INSERT … ON CONFLICT DO UPDATE … RETURNING`, ordered by the row
//!   lock): two processes never hand out the same id, and a claim is committed before any of its
//!   ids is used. A clean close gives back the unused end of its last claims when no process
//!   claimed after them.
//! - **Lost server.** Readers and the writer connect again on their next use; the writer keeps
//!   trying for 30 s before a batch counts as failed.
//!
//! TLS is not used: the server is expected on a private network or loopback.

mod conn;
pub(crate) mod read;
mod schema;
mod text;
mod write;

use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use tokio_postgres::Config;

use super::ids::IdKind;
use super::store::{Loaded, Queries};
use super::{Access, MemoryError};
use conn::Conn;
pub(crate) use conn::explain;
pub(crate) use write::PgSink;

/// Reader threads (and connections) per memory.
pub(crate) const READERS: usize = 4;

/// A read to run on a reader thread's connection.
type Job = Box<dyn FnOnce(Result<&mut Conn, MemoryError>) + Send>;

/// The reading side of a PostgreSQL database: the reader threads and their queue.
pub(crate) struct PgStore {
    jobs: Mutex<Option<Sender<Job>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl PgStore {
    /// Connects, inspects the database ([`schema::inspect`]), then — to write — runs the
    /// migrations, or — to read — checks it is ours at this library's version and makes every
    /// connection read-only (`default_transaction_read_only`); loads what the allocators and
    /// the task index start from. Returns the store, the writer's sink (none to read) and that.
    pub(crate) fn open(
        url: &str,
        location: &super::Location,
        access: Access,
    ) -> Result<(PgStore, Option<PgSink>, Loaded), MemoryError> {
        // The first connection blocks on its own runtime: on a thread of its own, so that
        // opening works from async code too. It then belongs to the writer thread.
        std::thread::scope(|scope| {
            scope
                .spawn(|| PgStore::open_here(url, location, access))
                .join()
                .unwrap_or_else(|_| {
                    Err(MemoryError::Open {
                        path: location.to_string(),
                        message: "the opening thread panicked".to_string(),
                    })
                })
        })
    }

    fn open_here(
        url: &str,
        location: &super::Location,
        access: Access,
    ) -> Result<(PgStore, Option<PgSink>, Loaded), MemoryError> {
        let shown = location.to_string();
        let open_error = |message: String| MemoryError::Open {
            path: shown.clone(),
            message,
        };
        let mut config: Config = url
            .parse()
            .map_err(|e: tokio_postgres::Error| open_error(explain(&e)))?;
        if access == Access::ReadOnly {
            let options = match config.get_options() {
                Some(options) => format!("{options} -c default_transaction_read_only=on"),
                None => "-c default_transaction_read_only=on".to_string(),
            };
            config.options(options);
        }
        let mut conn = Conn::connect(&config).map_err(|e| open_error(explain(&e)))?;
        match access {
            Access::ReadWrite => schema::migrate(&mut conn, &shown)?,
            Access::ReadOnly => schema::check_current(&mut conn, &shown)?,
        }
        let loaded = read::load(&mut conn)?;
        let writer_id = format!(
            "{}-{}-{:016x}",
            crate::time::hostname(),
            std::process::id(),
            rand::random::<u64>()
        );
        let sink =
            (access == Access::ReadWrite).then(|| PgSink::new(conn, config.clone(), writer_id));

        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let mut threads = Vec::with_capacity(READERS);
        for n in 0..READERS {
            let rx: Receiver<Job> = rx.clone();
            let config = config.clone();
            let handle = std::thread::Builder::new()
                .name(format!("agents-pg-reader-{n}"))
                .spawn(move || reader(config, rx))
                .map_err(|e| open_error(format!("cannot start a reader thread: {e}")))?;
            threads.push(handle);
        }
        let store = PgStore {
            jobs: Mutex::new(Some(tx)),
            threads: Mutex::new(threads),
        };
        Ok((store, sink, loaded))
    }

    /// Runs `f` on a reader thread's connection and waits for its answer.
    pub(crate) fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Queries) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        self.on_connection(move |conn| f(&mut crate::memory::queries::Reader(read::PgDb(conn))))
    }

    /// Claims ids (see [`read::claim`]).
    pub(crate) fn claim(&self, kind: IdKind, floor: i64, count: i64) -> Result<i64, MemoryError> {
        self.on_connection(move |conn| read::claim(conn, kind, floor, count))
    }

    /// Completes a task if it is still open (see [`read::complete_task`]).
    pub(crate) fn complete_task(
        &self,
        id: i64,
        completed_at: String,
    ) -> Result<Option<super::TaskRow>, MemoryError> {
        self.on_connection(move |conn| read::complete_task(conn, id, &completed_at))
    }

    /// Gives back the end of a claim (see [`read::release`]).
    pub(crate) fn release(
        &self,
        kind: IdKind,
        last: i64,
        claimed_to: i64,
    ) -> Result<(), MemoryError> {
        self.on_connection(move |conn| read::release(conn, kind, last, claimed_to))
    }

    fn on_connection<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Conn) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        let job: Job = Box::new(move |conn| {
            let _ = reply.send(conn.and_then(f));
        });
        {
            let jobs = self.jobs.lock();
            let Some(jobs) = jobs.as_ref() else {
                return Err(MemoryError::Closed);
            };
            jobs.send(job).map_err(|_| MemoryError::Closed)?;
        }
        answer.recv().map_err(|_| MemoryError::Closed)?
    }

    /// Stops the reader threads (reads after this fail with [`MemoryError::Closed`]).
    pub(crate) fn shutdown(&self) {
        drop(self.jobs.lock().take());
        for handle in self.threads.lock().drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A reader thread: connects on first use (and again after a lost connection), runs jobs.
fn reader(config: Config, jobs: Receiver<Job>) {
    let mut conn: Option<Conn> = None;
    while let Ok(job) = jobs.recv() {
        if conn.as_ref().is_some_and(Conn::is_closed) {
            conn = None;
        }
        if conn.is_none() {
            match Conn::connect(&config) {
                Ok(c) => conn = Some(c),
                Err(error) => {
                    job(Err(MemoryError::from(error)));
                    continue;
                }
            }
        }
        job(Ok(conn.as_mut().expect("connected above")));
    }
}
