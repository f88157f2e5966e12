//! `cargo test --workspace`, counted from its `test result:` lines.

use std::process::Command;

use crate::process::{self, Echo};
use crate::{Ctx, cargo};

/// Totals of one `cargo test` run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CargoTestRun {
    /// Sum of `N passed` over every `test result:` line.
    pub passed: u64,
    /// Sum of `N failed`, plus one when cargo failed without any failing test (a build error).
    pub failed: u64,
    /// What went wrong, for the summary.
    pub problems: Vec<String>,
}

/// Sums the `N passed` / `N failed` counts of every `test result:` line (unit tests, integration
/// tests and doc tests alike).
pub fn count_results(output: &str) -> (u64, u64) {
    let mut passed = 0;
    let mut failed = 0;
    for line in output.lines() {
        let Some(rest) = line.split("test result:").nth(1) else {
            continue;
        };
        for part in rest.split([';', '.']) {
            let mut words = part.split_whitespace();
            let (Some(n), Some(label)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match label {
                "passed" => passed += n,
                "failed" => failed += n,
                _ => {}
            }
        }
    }
    (passed, failed)
}

/// Runs `cargo test --workspace --no-fail-fast` (every test binary, also after a failing one),
/// streaming its output, and counts the results. The tests that think with a real model find
/// them under [`crate::test_model::ENV`] (Gemma 3 270M) and
/// [`crate::test_model::INSTRUCT_ENV`] (SmolLM2-135M-Instruct), fetched first.
pub fn run_workspace_tests(ctx: &Ctx) -> Result<CargoTestRun, String> {
    let model = crate::test_model::ensure()?;
    let instruct = crate::test_model::SMOLLM2.ensure()?;
    println!("xtask: cargo test --workspace --no-fail-fast");
    let out = process::run(
        Command::new(cargo())
            .args(["test", "--workspace", "--no-fail-fast"])
            .env(crate::test_model::ENV, &model)
            .env(crate::test_model::INSTRUCT_ENV, &instruct)
            .current_dir(&ctx.root),
        None,
        Echo::Stream,
    )?;
    let (passed, mut failed) = count_results(&out.output);
    let mut problems = Vec::new();
    if failed > 0 {
        problems.push(format!("cargo test: {failed} test(s) failed"));
    }
    if !out.success() && failed == 0 {
        failed = 1;
        problems.push(format!(
            "cargo test --workspace failed ({}) without a failing test: a build error?",
            out.ending()
        ));
    }
    Ok(CargoTestRun {
        passed,
        failed,
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_result_line() {
        let out = "\
running 3 tests
test a ... ok
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

running 2 tests
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.20s

   Doc-tests agents_core
test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s
test something_named_failed ... ok
";
        assert_eq!(count_results(out), (8, 1));
        assert_eq!(count_results("error[E0425]: cannot find value"), (0, 0));
    }
}
