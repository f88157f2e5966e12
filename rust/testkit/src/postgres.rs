//! A PostgreSQL server for tests.
//!
//! [`database`] hands each test a fresh database on one server per test process: the server is
//! `initdb`'d into `<tmp>/agents-pg-<pid>`, started on a free loopback port (never on a unix
//! socket shared with anything else) from a keeper thread that lives as long as the process,
//! and stopped when the process ends (`PR_SET_PDEATHSIG`).
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
    /// The server's process id (none for a server started elsewhere).
    pub pid: Option<u32>,
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

/// Starts a server in a new data directory under `dir`, on `port`, with `fsync` on or off (the
/// tests run with it off; see the module docs). The caller owns the child.
pub fn start_in(dir: &Path, port: u16, fsync: bool) -> Result<Child, String> {
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
        .arg("-c")
        .arg(format!("fsync={}", if fsync { "on" } else { "off" }))
        .args(["-c", "max_connections=400"])
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

/// An error with the server's message and the cause (tokio-postgres's `Display` alone says
/// "db error").
fn explain(error: &tokio_postgres::Error) -> String {
    match (error.as_db_error(), std::error::Error::source(error)) {
        (Some(db), _) => format!("{error}: {}", db.message()),
        (None, Some(source)) => format!("{error}: {source}"),
        (None, None) => error.to_string(),
    }
}

/// Runs `f` with a client of `url` on a runtime of its own, on a thread of its own (so tests
/// may call this from async code too).
fn with_client<T: Send>(
    url: &str,
    f: impl for<'c> FnOnce(
        &'c tokio_postgres::Client,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<T, String>> + 'c>,
    > + Send,
) -> Result<T, String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                rt.block_on(async {
                    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                        .await
                        .map_err(|e| explain(&e))?;
                    let driver = tokio::spawn(connection);
                    let result = f(&client).await;
                    drop(client);
                    let _ = driver.await;
                    result
                })
            })
            .join()
            .map_err(|_| "the database thread panicked".to_string())?
    })
}

/// Every row of `sql` on `url`, each column as text (`NULL` as `None`): select text columns,
/// or cast (`x::text`).
pub fn query_text(url: &str, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let sql = sql.to_string();
    with_client(url, move |client| {
        Box::pin(async move {
            let rows = client
                .query(sql.as_str(), &[])
                .await
                .map_err(|e| explain(&e))?;
            rows.iter()
                .map(|row| {
                    (0..row.len())
                        .map(|i| {
                            row.try_get::<_, Option<String>>(i)
                                .map_err(|e| e.to_string())
                        })
                        .collect()
                })
                .collect()
        })
    })
}

/// The first column of the first row of `sql` on `url`, as an integer.
pub fn query_i64(url: &str, sql: &str) -> Result<i64, String> {
    let sql = sql.to_string();
    with_client(url, move |client| {
        Box::pin(async move {
            let sql = sql.as_str();
            let row = client.query_one(sql, &[]).await.map_err(|e| explain(&e))?;
            row.try_get::<_, i64>(0).map_err(|e| e.to_string())
        })
    })
}

/// Runs `sql` on `url` (a connection of its own).
pub fn execute(url: &str, sql: &str) -> Result<(), String> {
    let sql = sql.to_string();
    with_client(url, move |client| {
        Box::pin(async move { client.batch_execute(&sql).await.map_err(|e| explain(&e)) })
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
                pid: None,
            };
        }
        // The server must outlive the test thread that happens to start it: its parent-death
        // signal follows the thread that spawned it, so a keeper thread that never ends does.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("testkit-postgres".to_string())
            .spawn(move || {
                let dir = process_dir("agents-pg");
                let mut last_error = String::new();
                for _ in 0..3 {
                    let port = free_port();
                    match start_in(&dir, port, false) {
                        Ok(child) => {
                            let _ = tx.send(Ok((port, dir.join("data"), child.id())));
                            let _kept = child;
                            loop {
                                std::thread::park();
                            }
                        }
                        Err(error) => last_error = error,
                    }
                }
                let _ = tx.send(Err(last_error));
            })
            .expect("a thread for the server");
        match rx.recv() {
            Ok(Ok((port, data_dir, pid))) => Server {
                base_url: format!("postgres://agents@127.0.0.1:{port}"),
                data_dir: Some(data_dir),
                pid: Some(pid),
            },
            Ok(Err(error)) => panic!("testkit: {error}"),
            Err(_) => panic!("testkit: the PostgreSQL keeper thread died"),
        }
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
    // Concurrent CREATE DATABASE from one template conflict ("source database is being
    // accessed by other users"): one at a time, with a retry.
    static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = CREATING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut attempt = 0;
    while let Err(error) = admin(&format!("CREATE DATABASE {name}")) {
        attempt += 1;
        assert!(attempt < 20, "testkit: CREATE DATABASE {name}: {error}");
        std::thread::sleep(Duration::from_millis(100));
    }
    Database {
        url: format!("{}/{name}", server().base_url),
        name,
    }
}
