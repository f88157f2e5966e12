//! A PostgreSQL server for tests.
//!
//! [`database`] hands each test a fresh database on one server per test process: the server is
//! `initdb`'d into `<tmp>/agents-pg-<pid>`, started on a free loopback port (never on a unix
//! socket shared with anything else), and stopped when the process ends (`PR_SET_PDEATHSIG`).
//! Settings for tests: `fsync = off` (a killed process or server loses nothing committed, the
//! page cache keeps it; only a power loss would), everything else PostgreSQL's defaults,
//! `synchronous_commit = on` included.
//!
//! `AGENTS_TEST_POSTGRES_URL` (a URL without a database name, `postgres://user@host:port`)
//! points the tests at a server started elsewhere instead.
//!
//! PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user (or
//! `nobody`), which owns the data directory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::{die_with_parent, find_binary, free_port, process_dir};

/// The server of this test process.
pub struct Server {
    /// `postgres://agents@127.0.0.1:<port>` (no database).
    pub base_url: String,
    /// The data directory (none for a server started elsewhere).
    pub data_dir: Option<PathBuf>,
    /// The process (none for a server started elsewhere).
    child: Option<Child>,
}

impl Server {
    /// The PID of the server (none for a server started elsewhere).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

/// A database of its own for one test; dropped at the end of the test.
pub struct Database {
    /// The database's URL.
    pub url: String,
    name: String,
}

impl Drop for Database {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(error) = admin(&sql) {
            eprintln!("testkit: {sql}: {error}");
        }
    }
}

/// The directories Debian installs PostgreSQL's server binaries in, newest first.
fn debian_bin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| entries.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.reverse();
    dirs
}

/// `initdb` and `postgres`, or a message saying how to get them.
pub fn binaries() -> Result<(PathBuf, PathBuf), String> {
    let extra = debian_bin_dirs();
    match (
        find_binary("initdb", &extra),
        find_binary("postgres", &extra),
    ) {
        (Some(initdb), Some(postgres)) => Ok((initdb, postgres)),
        _ => Err(
            "PostgreSQL is not installed (initdb and postgres not found in PATH or \
                  /usr/lib/postgresql/*/bin): `apt-get install postgresql`, or run \
                  `cargo xtask test`, which installs it"
                .to_string(),
        ),
    }
}

/// The user the server runs as when this process is root: `(uid, gid)`.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let find = |name: &str| {
        passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&name) && fields.len() > 3)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
    };
    find("postgres")
        .or_else(|| find("nobody"))
        .or(Some((65534, 65534)))
}

fn chown_tree(path: &Path, uid: u32, gid: u32) {
    let _ = std::os::unix::fs::chown(path, Some(uid), Some(gid));
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            chown_tree(&entry.path(), uid, gid);
        }
    }
}

fn as_server_user(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    if let Some((uid, gid)) = server_user() {
        command.uid(uid).gid(gid);
    }
}

/// Starts a server in a new data directory under `dir`, on `port`. The caller owns the child.
pub fn start_in(dir: &Path, port: u16) -> Result<Child, String> {
    let (initdb, postgres) = binaries()?;
    let data = dir.join("data");
    if !data.join("PG_VERSION").exists() {
        std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
        if let Some((uid, gid)) = server_user() {
            chown_tree(dir, uid, gid);
        }
        let mut init = Command::new(&initdb);
        init.args(["-D"])
            .arg(&data)
            .args(["-U", "agents", "--auth=trust", "--no-sync", "-E", "UTF8"])
            .args(["--locale=C"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        as_server_user(&mut init);
        let out = init.output().map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
    if let Some((uid, gid)) = server_user() {
        chown_tree(dir, uid, gid);
    }
    let mut server = Command::new(&postgres);
    server
        .arg("-D")
        .arg(&data)
        .args(["-p", &port.to_string()])
        .args(["-c", "listen_addresses=127.0.0.1"])
        .arg("-c")
        .arg(format!("unix_socket_directories={}", dir.display()))
        .args(["-c", "fsync=off", "-c", "max_connections=400"])
        .args(["-c", "shared_buffers=64MB"])
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log);
    as_server_user(&mut server);
    die_with_parent(&mut server, libc::SIGQUIT);
    let child = server.spawn().map_err(|e| format!("postgres: {e}"))?;
    wait_ready(&format!("postgres://agents@127.0.0.1:{port}/postgres"))?;
    Ok(child)
}

/// Waits until the server accepts connections (30 s at most).
pub fn wait_ready(url: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match execute(url, "SELECT 1") {
            Ok(()) => return Ok(()),
            Err(error) if Instant::now() > deadline => {
                return Err(format!("PostgreSQL did not start: {error}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Runs `sql` on `url` (a connection of its own).
pub fn execute(url: &str, sql: &str) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .map_err(|e| e.to_string())?;
        let driver = tokio::spawn(connection);
        let result = client.batch_execute(sql).await.map_err(|e| e.to_string());
        drop(client);
        let _ = driver.await;
        result
    })
}

/// The server of this test process, started on first use.
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        if let Ok(url) = std::env::var("AGENTS_TEST_POSTGRES_URL") {
            return Server {
                base_url: url.trim_end_matches('/').to_string(),
                data_dir: None,
                child: None,
            };
        }
        let dir = process_dir("agents-pg");
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = free_port();
            match start_in(&dir, port) {
                Ok(child) => {
                    return Server {
                        base_url: format!("postgres://agents@127.0.0.1:{port}"),
                        data_dir: Some(dir.join("data")),
                        child: Some(child),
                    };
                }
                Err(error) => last_error = error,
            }
        }
        panic!("testkit: {last_error}");
    })
}

fn admin(sql: &str) -> Result<(), String> {
    execute(&format!("{}/postgres", server().base_url), sql)
}

/// A fresh, empty database for one test.
pub fn database() -> Database {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let name = format!(
        "agents_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    admin(&format!("CREATE DATABASE {name}")).unwrap_or_else(|e| panic!("testkit: {e}"));
    Database {
        url: format!("{}/{name}", server().base_url),
        name,
    }
}
