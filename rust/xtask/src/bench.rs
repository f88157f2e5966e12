//! `cargo xtask bench`: the release-build benchmarks whose numbers `docs/benchmarks.md` records.
//!
//! - `agents-games` `engines`: checkers perft(10) and the `hard` AIs' time per move.
//! - `agents-core` `tool_calls`: tool calls through the registry (JSON in → JSON out), and the
//!   python-chess comparison on the same inputs in the same run (python-chess is installed with
//!   pip when missing and pip is available; otherwise the comparison is skipped with a note).

use std::process::Command;

use crate::{Ctx, cargo};

/// Runs every benchmark, streaming their output.
pub fn run(ctx: &Ctx) -> Result<(), String> {
    ensure_python_chess();
    for (package, bench) in [("agents-games", "engines"), ("agents-core", "tool_calls")] {
        println!("xtask: cargo bench -p {package} --bench {bench}");
        let status = Command::new(cargo())
            .args(["bench", "-p", package, "--bench", bench])
            .current_dir(&ctx.root)
            .status()
            .map_err(|e| format!("cannot run cargo bench: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cargo bench -p {package} --bench {bench} failed ({status})"
            ));
        }
    }
    Ok(())
}

/// Makes `import chess` work for the comparison, if pip can install it.
fn ensure_python_chess() {
    let has = |py: &str| {
        Command::new(py)
            .args(["-c", "import chess"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if has("python3") {
        return;
    }
    println!("xtask: installing python-chess for the comparison (python3 -m pip install chess)");
    let installed = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "chess"])
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        println!("xtask: could not install python-chess; the comparison will be skipped");
    }
}
