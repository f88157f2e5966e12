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
