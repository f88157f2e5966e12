//! Debian packages the tests need, installed when missing (as root, with `apt-get`, running
//! `apt-get update` once if the first try fails): Xvfb for the screenshots, PostgreSQL for the
//! memory's second backend, NATS for the world served by several processes.

use std::process::Command;

use crate::{godot, process};

/// Installs `packages` unless `present()` says they are there already; `why` is for messages.
pub fn ensure(why: &str, present: impl Fn() -> bool, packages: &[&str]) -> Result<(), String> {
    if present() {
        return Ok(());
    }
    let list = packages.join(" ");
    if !godot::is_root() {
        return Err(format!(
            "{why}: not installed; apt-get install {list} (as root)"
        ));
    }
    eprintln!("xtask: installing {list} ({why})");
    let install = || {
        process::run_checked(
            Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends"])
                .args(packages)
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
    };
    if install().is_err() {
        process::run_checked(Command::new("apt-get").arg("update"))?;
        install().map_err(|e| format!("installing {list}: {e}"))?;
    }
    if !present() {
        return Err(format!("{why}: {list} installed, but still not found"));
    }
    Ok(())
}

/// PostgreSQL's server binaries, for the memory tests on PostgreSQL.
pub fn ensure_postgres() -> Result<(), String> {
    ensure(
        "PostgreSQL for the memory tests",
        || agents_testkit::postgres::binaries().is_ok(),
        &["postgresql"],
    )
}

/// `nats-server`, for the cluster tests.
pub fn ensure_nats() -> Result<(), String> {
    ensure(
        "nats-server for the cluster tests",
        || agents_testkit::nats::binary().is_ok(),
        &["nats-server"],
    )
}

/// cmake and libclang, which building llama.cpp (the `agents-local` crate) needs: cmake drives
/// its C++ build, libclang its Rust bindings. Checked on Linux only (elsewhere the platform's
/// developer tools provide them).
pub fn ensure_build_tools() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    ensure(
        "cmake and libclang to build llama.cpp",
        || godot::which("cmake").is_some() && libclang_found(),
        &["cmake", "libclang-dev"],
    )
}

/// Whether a libclang shared library is where bindgen looks for one.
fn libclang_found() -> bool {
    if std::env::var_os("LIBCLANG_PATH").is_some() {
        return true;
    }
    let has_libclang = |dir: &std::path::Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("libclang") && name.contains(".so") && !name.contains("cpp")
            })
        })
    };
    let lib = std::path::Path::new("/usr/lib");
    has_libclang(&lib.join("x86_64-linux-gnu"))
        || has_libclang(&lib.join("aarch64-linux-gnu"))
        || std::fs::read_dir(lib).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name().to_string_lossy().starts_with("llvm-")
                    && has_libclang(&e.path().join("lib"))
            })
        })
}
