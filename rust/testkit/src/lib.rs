//! Real servers for the tests, started by the tests themselves on loopback ports in
//! temporary directories: no mocks, nothing to set up by hand beyond the Debian packages
//! (`cargo xtask test` installs them when missing).
//!
//! - [`postgres`]: a PostgreSQL server per test process, one fresh database per test.
//! - [`nats`]: a NATS server per test, which the test may restart.
//! - [`gguf`]: a tiny random-weight model file for the local model's tests.

pub mod gguf;
pub mod nats;
pub mod postgres;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// The SHA-256 of `bytes`, in lower-case hexadecimal (what a model download is checked
/// against).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A free TCP port on 127.0.0.1 (bound and released: a later bind may still race).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The first of `names` found in `PATH` or in `extra` directories.
pub fn find_binary(name: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra.iter().cloned())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A directory `<tmp>/<prefix>-<pid>` for this process, after removing the ones of processes
/// that are gone (a killed test run leaves its directory behind).
pub fn process_dir(prefix: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(prefix))
                .and_then(|n| n.strip_prefix('-'))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = tmp.join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Makes a child process get `signal` when the thread that spawns it ends (Linux's parent-death
/// signal follows the thread, not the process): a server started by a test never outlives the
/// test run. A server meant to outlive its test is spawned from a thread that never ends.
pub fn die_with_parent(command: &mut std::process::Command, signal: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec here.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
