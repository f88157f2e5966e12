//! `cargo xtask fuzz [--seconds N] [--target NAME]…`: builds the coverage-guided fuzz targets of
//! `fuzz/` and runs each for a bounded time.
//!
//! The stable toolchain has no `-Zsanitizer`, but rustc's SanitizerCoverage pass runs on stable:
//! the targets are built with `-Cpasses=sancov-module` and the inline-8bit-counter, pc-table and
//! trace-compares options (what `cargo fuzz build --sanitizer none` passes), for the host triple
//! given explicitly so build scripts and proc macros stay uninstrumented, and linked against
//! libFuzzer by `libfuzzer-sys`. Each target runs with two corpus directories: a working one under
//! `target/fuzz/corpus/<target>` (grows across runs, not committed) and the checked-in seeds of
//! `fuzz/corpus/<target>`. A crash (a panic, an abort, a timeout, a leak of memory) fails the
//! command, naming the input libFuzzer wrote under `target/fuzz/artifacts/<target>/`; the
//! regression test for a fixed crash goes next to the parser it broke.
//!
//! Prints one line per target: runs, executions per second, coverage (`cov`, the edges reached)
//! and features (`ft`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::Ctx;
use crate::process::{self, Echo};

/// Every target in `fuzz/fuzz_targets/`.
pub const TARGETS: [&str; 5] = [
    "protocol_request",
    "game_states",
    "agent_config",
    "mcp_line",
    "brain_policy",
];

/// Seconds per target of a plain `cargo xtask fuzz`.
pub const DEFAULT_SECONDS: u64 = 60;
/// Seconds per target run by `cargo xtask test`.
pub const TEST_SECONDS: u64 = 10;

/// The SanitizerCoverage flags of `cargo fuzz build --sanitizer none`.
const RUSTFLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing";

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Seconds per target.
    pub seconds: u64,
    /// The targets (empty: all).
    pub targets: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seconds: DEFAULT_SECONDS,
            targets: Vec::new(),
        }
    }
}

/// Parses `fuzz`'s arguments.
pub fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--seconds" => {
                let v = value("--seconds")?;
                opts.seconds = v
                    .parse()
                    .ok()
                    .filter(|s| (1..=86_400).contains(s))
                    .ok_or_else(|| format!("--seconds must be 1..86400, not {v:?}"))?;
            }
            "--target" => {
                let v = value("--target")?;
                if !TARGETS.contains(&v.as_str()) {
                    return Err(format!(
                        "unknown fuzz target {v:?} (targets: {})",
                        TARGETS.join(", ")
                    ));
                }
                opts.targets.push(v);
            }
            other => return Err(format!("unknown fuzz option {other:?}")),
        }
    }
    Ok(opts)
}

/// One target's run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Inputs executed.
    pub runs: u64,
    /// Executions per second.
    pub execs_per_sec: u64,
    /// Coverage: edges reached.
    pub cov: u64,
    /// Features.
    pub ft: u64,
    /// Inputs in the working corpus.
    pub corpus: u64,
}

/// Reads libFuzzer's last status line (`#123 DONE cov: 9957 ft: 15685 corp: 1301/177Kb … exec/s: 80046`).
pub fn parse_stats(output: &str) -> Option<Stats> {
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with('#') && l.contains(" cov: "))?;
    let field = |name: &str| -> Option<u64> {
        let rest = line.split(name).nth(1)?.trim_start();
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    Some(Stats {
        runs: line[1..].split_whitespace().next()?.parse().ok()?,
        execs_per_sec: field("exec/s:").unwrap_or(0),
        cov: field("cov:")?,
        ft: field("ft:").unwrap_or(0),
        corpus: field("corp:").unwrap_or(0),
    })
}

/// The host triple (`x86_64-unknown-linux-gnu`).
fn host_triple() -> Result<String, String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| "rustc -vV names no host".into())
}

/// Builds the instrumented targets; returns the directory holding the binaries.
fn build(ctx: &Ctx) -> Result<std::path::PathBuf, String> {
    let triple = host_triple()?;
    let manifest = ctx.root.join("fuzz/Cargo.toml");
    let target_dir = ctx.root.join("fuzz/target");
    println!("xtask: building the fuzz targets (instrumented, {triple})");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["build", "--release", "--bins", "--target", &triple])
        .arg("--manifest-path")
        .arg(&manifest)
        .env("RUSTFLAGS", RUSTFLAGS)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    let out = process::run(&mut cmd, Some(Duration::from_secs(3600)), Echo::Stream)?;
    if !out.success() {
        return Err(format!(
            "building the fuzz targets failed ({})",
            out.ending()
        ));
    }
    Ok(target_dir.join(triple).join("release"))
}

/// Runs one target for `seconds`.
fn run_target(ctx: &Ctx, bin_dir: &Path, target: &str, seconds: u64) -> Result<Stats, String> {
    let work = ctx.target_dir.join("fuzz/corpus").join(target);
    let artifacts = ctx.target_dir.join("fuzz/artifacts").join(target);
    for dir in [&work, &artifacts] {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let seeds = ctx.root.join("fuzz/corpus").join(target);
    let mut cmd = Command::new(bin_dir.join(target));
    cmd.arg(&work)
        .arg(&seeds)
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1")
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048");
    let limit = Duration::from_secs(seconds + 120);
    let out = process::run(&mut cmd, Some(limit), Echo::Quiet)?;
    if !out.success() {
        let input = out
            .output
            .lines()
            .find_map(|l| l.split("Test unit written to ").nth(1))
            .unwrap_or("(no input written)");
        let tail: Vec<&str> = out.output.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "fuzz target {target} failed ({}); the input: {input}\n{}",
            out.ending(),
            tail.join("\n")
        ));
    }
    parse_stats(&out.output)
        .ok_or_else(|| format!("fuzz target {target}: no statistics in its output"))
}

/// Builds and runs the selected targets; prints a line per target.
pub fn run(ctx: &Ctx, opts: &Options) -> Result<Vec<(String, Stats)>, String> {
    let bin_dir = build(ctx)?;
    let targets: Vec<String> = if opts.targets.is_empty() {
        TARGETS.iter().map(|t| t.to_string()).collect()
    } else {
        opts.targets.clone()
    };
    let mut results = Vec::new();
    let mut failures = Vec::new();
    for target in &targets {
        match run_target(ctx, &bin_dir, target, opts.seconds) {
            Ok(stats) => {
                println!(
                    "xtask: fuzz {target}: {} runs in {} s ({} exec/s), cov {}, ft {}, corpus {}",
                    stats.runs,
                    opts.seconds,
                    stats.execs_per_sec,
                    stats.cov,
                    stats.ft,
                    stats.corpus
                );
                results.push((target.clone(), stats));
            }
            Err(e) => {
                println!("xtask: {e}");
                failures.push(target.clone());
            }
        }
    }
    if failures.is_empty() {
        Ok(results)
    } else {
        Err(format!("fuzz targets failed: {}", failures.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libfuzzer_statistics() {
        let out = "INFO: Seed: 1\n#2\tINITED cov: 5 ft: 5 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   #2481455\tDONE   cov: 9957 ft: 15685 corp: 1301/177Kb lim: 4096 exec/s: 80046 rss: 43Mb\n\
                   Done 2481455 runs in 31 second(s)\n";
        assert_eq!(
            parse_stats(out),
            Some(Stats {
                runs: 2_481_455,
                execs_per_sec: 80_046,
                cov: 9957,
                ft: 15685,
                corpus: 1301,
            })
        );
        assert_eq!(parse_stats("nothing here"), None);
    }

    #[test]
    fn options() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_options(&args(&["--seconds", "5", "--target", "mcp_line"])),
            Ok(Options {
                seconds: 5,
                targets: vec!["mcp_line".into()]
            })
        );
        assert!(parse_options(&args(&["--target", "nope"])).is_err());
        assert!(parse_options(&args(&["--seconds", "0"])).is_err());
    }
}
