//! One world served by several `agents-server serve --cluster` processes for the end-to-end
//! tests: a fresh PostgreSQL database of its own (`agents_testkit::postgres`), the processes on
//! a NATS server the test started (`agents_testkit::nats`), each started and joined before
//! [`World::start`] returns.
//!
//! When a test panics while a [`World`] is alive, every process's stderr is printed (labelled
//! with its process id): that is where a failed or routed request is explained.

#![allow(dead_code)]

use agents_testkit::postgres;

use super::server::ServerProc;

/// The lease of the test worlds' agents (seconds): short, so that a killed process's agents are
/// resumed quickly.
pub const LEASE_SECONDS: &str = "3";

/// Starts `agents-server serve --cluster NATS --world WORLD --process-id PROCESS --lease-seconds
/// 3 --allow-client-brains --db DB` and waits until it listens (which it does after joining the
/// world). Client brain objects are allowed: the protocol scenarios spawn one (a fake model).
pub fn serve(db: &str, nats: &str, world: &str, process: &str) -> ServerProc {
    ServerProc::start(
        db,
        &[
            "--cluster",
            nats,
            "--world",
            world,
            "--process-id",
            process,
            "--lease-seconds",
            LEASE_SECONDS,
            "--allow-client-brains",
        ],
        &[],
    )
}

/// The line a process logs once it joined `world` on `nats` as `process`.
pub fn joined_line(world: &str, nats: &str, process: &str) -> String {
    format!("joined world '{world}' on {nats} as {process}")
}

/// A world's processes and its database (dropped in that order: the processes are killed
/// before their database is dropped).
pub struct World {
    /// The processes, in the order of the ids given to [`World::start`].
    pub processes: Vec<ServerProc>,
    /// Their process ids.
    pub ids: Vec<String>,
    /// The world's name.
    pub name: String,
    /// The world's database.
    pub db: postgres::Database,
}

impl World {
    /// A fresh database and one process per id in `ids`, all of world `name` on the NATS at
    /// `nats`; returns once every one of them has joined.
    pub async fn start(nats: &str, name: &str, ids: &[&str]) -> World {
        let db = postgres::database();
        let mut processes = Vec::new();
        for id in ids {
            processes.push(serve(&db.url, nats, name, id));
        }
        let world = World {
            processes,
            ids: ids.iter().map(|id| (*id).to_owned()).collect(),
            name: name.to_owned(),
            db,
        };
        for (process, id) in world.processes.iter().zip(ids) {
            process.wait_log(&joined_line(name, nats, id)).await;
        }
        world
    }

    /// The process named `id`.
    ///
    /// # Panics
    ///
    /// When no process has that id.
    pub fn process(&self, id: &str) -> &ServerProc {
        let i = self
            .ids
            .iter()
            .position(|p| p == id)
            .unwrap_or_else(|| panic!("no process {id} in world {}", self.name));
        &self.processes[i]
    }

    /// The WebSocket URL of the process named `id`.
    pub fn url(&self, id: &str) -> String {
        self.process(id).url()
    }

    /// Every process's stderr so far, each under a header naming it.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for (process, id) in self.processes.iter().zip(&self.ids) {
            out.push_str(&format!(
                "----- {id} (world {}) stderr -----\n{}\n",
                self.name,
                process.stderr.text()
            ));
        }
        out
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
        }
    }
}
