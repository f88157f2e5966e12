//! The headless Godot side of `cargo xtask test` and `demo`.
//!
//! The GDScript runner (`godot-project/tests/run_tests.gd`) runs every `tests/test_*.gd` suite and
//! ends with one machine-readable line, `GODOT_TESTS_RESULT passed=N failed=N suites=N`. A run
//! fails when any assertion fails, when that line is missing (a crash, a hang killed by the
//! timeout), when Godot exits non-zero, or when [`scan_output`] finds one of the problems of
//! [`PROBLEM_PATTERNS`] in what Godot printed (script errors, an extension that did not load, a
//! missing class, a Rust panic, objects or resources leaked at exit). `cargo xtask selftest`
//! proves each of these makes a run fail, with small throw-away projects.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Ctx;
use crate::godot::Godot;
use crate::process::{self, Echo, RunOutput};

/// Substrings of Godot's output that fail a run, with what they mean.
pub const PROBLEM_PATTERNS: &[(&str, &str)] = &[
    ("Parse Error", "GDScript parse error"),
    ("SCRIPT ERROR", "GDScript error"),
    ("Failed to load script", "a script failed to load"),
    (
        "Can't open dynamic library",
        "the GDExtension library did not load",
    ),
    (
        "GDExtension dynamic library not found",
        "the GDExtension library did not load",
    ),
    (
        "No GDExtension library found",
        "the GDExtension library did not load",
    ),
    (
        "Error loading extension",
        "the GDExtension library did not load",
    ),
    (
        "GDExtension entry point",
        "the GDExtension library did not load",
    ),
    ("Cannot get class", "a class is missing"),
    ("panicked at", "a Rust panic"),
    (
        "godot-rust function call failed",
        "a Rust method call failed",
    ),
    ("ObjectDB instances leaked", "objects leaked at exit"),
    ("Leaked instance", "objects leaked at exit"),
    ("resources still in use at exit", "resources leaked at exit"),
    ("crashed with signal", "Godot crashed"),
];

/// The runner's machine-readable result line prefix.
pub const RESULT_PREFIX: &str = "GODOT_TESTS_RESULT";

/// Finds the problems of [`PROBLEM_PATTERNS`] in `output`: one entry per kind, quoting the first
/// line that shows it and how many more lines do. A line counts once, for the first pattern it
/// matches.
pub fn scan_output(output: &str) -> Vec<String> {
    let mut hits: Vec<(usize, &str, usize)> = Vec::new(); // (pattern index, first line, count)
    for line in output.lines() {
        let Some(index) = PROBLEM_PATTERNS.iter().position(|(p, _)| line.contains(p)) else {
            continue;
        };
        match hits.iter_mut().find(|h| h.0 == index) {
            Some(hit) => hit.2 += 1,
            None => hits.push((index, line, 1)),
        }
    }
    hits.sort_by_key(|h| h.0);
    hits.into_iter()
        .map(|(index, line, count)| {
            let mut quote: String = line.trim().chars().take(200).collect();
            if count > 1 {
                quote.push_str(&format!(" (+{} more)", count - 1));
            }
            format!("{}: {quote}", PROBLEM_PATTERNS[index].1)
        })
        .collect()
}

/// The runner's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Assertions that held.
    pub passed: u64,
    /// Assertions that failed (plus suites that could not run).
    pub failed: u64,
    /// Suites run.
    pub suites: u64,
}

/// Parses the last `GODOT_TESTS_RESULT passed=N failed=N suites=N` line.
pub fn parse_summary(output: &str) -> Option<Summary> {
    let line = output
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(RESULT_PREFIX))?;
    let mut summary = Summary {
        passed: 0,
        failed: 0,
        suites: 0,
    };
    let mut seen = 0;
    for field in line.split_whitespace() {
        let (key, value) = field.split_once('=')?;
        let value: u64 = value.parse().ok()?;
        match key {
            "passed" => summary.passed = value,
            "failed" => summary.failed = value,
            "suites" => summary.suites = value,
            _ => continue,
        }
        seen += 1;
    }
    (seen == 3).then_some(summary)
}

/// The outcome of one headless suite run.
#[derive(Debug, Default)]
pub struct SuiteRun {
    /// Assertions that held.
    pub passed: u64,
    /// Failed assertions, plus one per problem found.
    pub failed: u64,
    /// Everything that went wrong besides failed assertions.
    pub problems: Vec<String>,
}

/// Judges a finished runner process: totals from its result line, failures for every problem.
pub fn judge(out: &RunOutput, timeout: Duration) -> SuiteRun {
    let mut problems = scan_output(&out.output);
    let summary = parse_summary(&out.output);
    if out.timed_out {
        problems.push(format!(
            "Godot timed out after {} s and was killed",
            timeout.as_secs()
        ));
    }
    match summary {
        None => problems.push(format!(
            "the test runner printed no {RESULT_PREFIX} line ({})",
            out.ending()
        )),
        Some(s) => {
            if s.failed == 0 && !out.success() && !out.timed_out {
                problems.push(format!(
                    "Godot ended with {} although no test failed",
                    out.ending()
                ));
            }
            if s.failed > 0 {
                // Listed for the summary; the count already holds them.
                let lines: Vec<&str> = out
                    .output
                    .lines()
                    .filter(|l| l.trim_start().starts_with("FAIL "))
                    .collect();
                for l in lines.iter().take(20) {
                    problems.push(format!("failed assertion: {}", l.trim()));
                }
            }
        }
    }
    let summary = summary.unwrap_or(Summary {
        passed: 0,
        failed: 0,
        suites: 0,
    });
    let extra = problems
        .iter()
        .filter(|p| !p.starts_with("failed assertion: "))
        .count() as u64;
    SuiteRun {
        passed: summary.passed,
        failed: summary.failed + extra,
        problems,
    }
}

/// Imports the project (`--import`) so that script and scene runs load the extension. Fails when
/// Godot fails or the extension does not load.
///
/// Godot only loads extensions listed in `.godot/extension_list.cfg`, and a headless editor
/// session that discovers a `.gdextension` for the first time crashes at exit while generating
/// the extension's class documentation (godotengine/godot#111048; Godot 4.5 and 4.6). So the list
/// is written first (see [`write_extension_list`]): the import then loads the extension as a
/// known one and exits cleanly.
pub fn import_project(godot: &Godot, project: &Path) -> Result<(), String> {
    println!("xtask: importing {}", project.display());
    write_extension_list(project)?;
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(project)
        .arg("--import");
    let out = process::run(&mut cmd, Some(Duration::from_secs(600)), Echo::Quiet)?;
    let load_problems: Vec<String> = scan_output(&out.output)
        .into_iter()
        .filter(|p| p.contains("did not load") || p.contains("panic"))
        .collect();
    if !out.success() || !load_problems.is_empty() {
        return Err(format!(
            "importing {} failed ({}){}\n--- Godot output ---\n{}",
            project.display(),
            out.ending(),
            load_problems
                .iter()
                .map(|p| format!("\n  {p}"))
                .collect::<String>(),
            out.output
        ));
    }
    Ok(())
}

/// Writes `.godot/extension_list.cfg` (one `res://` path per line, as Godot writes it) listing
/// every `.gdextension` file of the project, unless the file exists already.
pub fn write_extension_list(project: &Path) -> Result<(), String> {
    let list = project.join(".godot").join("extension_list.cfg");
    if list.exists() {
        return Ok(());
    }
    let mut found = Vec::new();
    find_gdextensions(project, project, &mut found, 0);
    found.sort();
    if found.is_empty() {
        return Ok(());
    }
    let text: String = found.iter().map(|p| format!("res://{p}\n")).collect();
    std::fs::create_dir_all(project.join(".godot"))
        .and_then(|()| std::fs::write(&list, text))
        .map_err(|e| format!("cannot write {}: {e}", list.display()))
}

fn find_gdextensions(root: &Path, dir: &Path, found: &mut Vec<String>, depth: usize) {
    // Symlinked folders (godot-project/addons) are followed; the depth bound stops cycles.
    if depth > 8 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            find_gdextensions(root, &path, found, depth + 1);
        } else if name.ends_with(".gdextension")
            && let Ok(rel) = path.strip_prefix(root)
        {
            found.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Runs the runner on `project` (optionally only the named suites) with a time limit.
pub fn run_suites(godot: &Godot, project: &Path, suites: &[String], timeout: Duration) -> SuiteRun {
    run_suites_in(godot, project, &RunnerArgs::default(), suites, timeout)
}

/// Where the runner looks for suites and what environment it gets, for [`run_suites_in`].
#[derive(Debug, Default, Clone)]
pub struct RunnerArgs {
    /// The folder of the suites (`--dir`, e.g. `res://tests/ws_client`); `None`: `res://tests`.
    pub dir: Option<String>,
    /// Environment variables set for the Godot process (the suites read them).
    pub env: Vec<(String, String)>,
}

/// Runs the runner on `project` with [`RunnerArgs`] (optionally only the named suites) with a
/// time limit.
pub fn run_suites_in(
    godot: &Godot,
    project: &Path,
    args: &RunnerArgs,
    suites: &[String],
    timeout: Duration,
) -> SuiteRun {
    let dir = args.dir.as_deref().unwrap_or("res://tests");
    println!(
        "xtask: running the Godot suites of {} ({dir})",
        project.display()
    );
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"])
        .arg(project)
        .args(["--script", "res://tests/run_tests.gd"]);
    if !suites.is_empty() || args.dir.is_some() {
        cmd.arg("--");
        if let Some(dir) = &args.dir {
            cmd.args(["--dir", dir]);
        }
        for s in suites {
            cmd.args(["--suite", s]);
        }
    }
    for (key, value) in &args.env {
        cmd.env(key, value);
    }
    match process::run(&mut cmd, Some(timeout), Echo::Stream) {
        Ok(out) => judge(&out, timeout),
        Err(e) => SuiteRun {
            passed: 0,
            failed: 1,
            problems: vec![e],
        },
    }
}

/// Runs a scene of the project headless (`None`: the main scene) with a time limit; fails on a
/// non-zero exit, a timeout or any problem [`scan_output`] finds.
pub fn run_demo(
    godot: &Godot,
    project: &Path,
    scene: Option<&str>,
    timeout: Duration,
) -> Result<(), String> {
    let what = scene.unwrap_or("the main scene");
    println!("xtask: running {what} of {} headless", project.display());
    let mut cmd = godot.command();
    cmd.args(["--headless", "--path"]).arg(project);
    if let Some(scene) = scene {
        cmd.arg(scene);
    }
    let out = process::run(&mut cmd, Some(timeout), Echo::Stream)?;
    let mut problems = scan_output(&out.output);
    if !out.success() {
        problems.push(format!("{what} ended with {}", out.ending()));
    }
    if problems.is_empty() {
        println!("xtask: {what} finished cleanly");
        Ok(())
    } else {
        Err(format!("{what} failed:\n  {}", problems.join("\n  ")))
    }
}

// ---------------------------------------------------------------------------------------------
// Self-test: each failure mode must fail a run.

struct Case {
    name: &'static str,
    /// The suite file's body (it extends the base).
    suite: &'static str,
    /// True: the project gets an addon whose library is missing.
    broken_extension: bool,
    /// What the run's problems must mention (empty: the run must pass).
    expect: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "passing",
        suite: "func test_ok():\n\tassert_true(GameTools.new().list_tools() is Array)\n\tassert_eq(1 + 1, 2)\n",
        broken_extension: false,
        expect: "",
    },
    Case {
        name: "passing_async",
        suite: "func test_awaits():\n\tvar node := add_to_tree(Node.new())\n\tawait wait_frames(2)\n\tassert_true(node.is_inside_tree())\n\tassert_true(await wait_until(func(): return true))\n",
        broken_extension: false,
        expect: "",
    },
    Case {
        name: "await_timeout",
        suite: "func _init():\n\ttest_timeout_seconds = 1.0\n\nfunc test_waits_forever():\n\tawait tree.create_timer(3600.0).timeout\n\tassert_true(true)\n",
        broken_extension: false,
        expect: "did not finish within",
    },
    Case {
        name: "failed_assertion",
        suite: "func test_fails():\n\tassert_eq(1, 2, \"one is not two\")\n",
        broken_extension: false,
        expect: "failed assertion",
    },
    Case {
        name: "int_vs_float",
        suite: "func test_fails():\n\tassert_eq(1, 1.0, \"types differ\")\n",
        broken_extension: false,
        expect: "failed assertion",
    },
    Case {
        name: "script_error",
        suite: "func test_error():\n\tvar d: Dictionary = {}\n\tvar o: Object = d.get(\"missing\")\n\to.call(\"nothing\")\n\tassert_true(true)\n",
        broken_extension: false,
        expect: "GDScript error",
    },
    Case {
        name: "missing_class_parse_error",
        suite: "func test_missing():\n\tvar x = AgentNoSuchClass.new()\n\tassert_true(x != null)\n",
        broken_extension: false,
        expect: "GDScript parse error",
    },
    Case {
        name: "missing_class_at_runtime",
        suite: "func test_missing():\n\tvar x = ClassDB.instantiate(\"AgentNoSuchClass\")\n\tassert_true(x == null)\n",
        broken_extension: false,
        expect: "a class is missing",
    },
    Case {
        name: "extension_not_built",
        suite: "func test_tools():\n\tassert_true(ClassDB.class_exists(\"GameTools\"))\n",
        broken_extension: true,
        expect: "did not load",
    },
    Case {
        name: "rust_call_failed",
        suite: "func test_bad_call():\n\tvar t = GameTools.new()\n\tt.callv(\"call_tool\", [\"x\", 42])\n\tassert_true(true)\n",
        broken_extension: false,
        expect: "a Rust method call failed",
    },
    Case {
        name: "leaked_object",
        suite: "var keep\nfunc test_leak():\n\tkeep = Node.new()\n\tassert_true(keep != null)\n",
        broken_extension: false,
        expect: "leaked at exit",
    },
    Case {
        name: "leaked_resource",
        suite: "func test_leak():\n\tvar r := Resource.new()\n\tr.set_meta(\"self\", [r])\n\tassert_true(r != null)\n",
        broken_extension: false,
        expect: "leaked at exit",
    },
    Case {
        name: "crash",
        suite: "func test_crash():\n\tOS.crash(\"xtask selftest\")\n",
        broken_extension: false,
        expect: "Godot crashed",
    },
    Case {
        name: "hang",
        suite: "func test_hang():\n\tvar i := 0\n\twhile true:\n\t\ti += 1\n",
        broken_extension: false,
        expect: "timed out",
    },
];

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Links `to` to the folder `from` (a copy where links are not available).
pub(crate) fn link_or_copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(from, to)
            .map_err(|e| format!("cannot link {} to {}: {e}", to.display(), from.display()))
    }
    #[cfg(not(unix))]
    {
        copy_dir(from, to)
    }
}

/// Copies the folder `from` to `to`, recursively.
pub(crate) fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn make_case_project(ctx: &Ctx, base: &Path, case: &Case) -> Result<PathBuf, String> {
    let dir = base.join(case.name);
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    write(
        &dir.join("project.godot"),
        &format!(
            "config_version=5\n\n[application]\n\nconfig/name=\"xtask selftest {}\"\nconfig/features=PackedStringArray(\"4.5\")\n",
            case.name
        ),
    )?;
    let tests = ctx.project_dir().join("tests");
    for file in ["run_tests.gd", "test_base.gd"] {
        let text = fs::read_to_string(tests.join(file))
            .map_err(|e| format!("cannot read {}: {e}", tests.join(file).display()))?;
        write(&dir.join("tests").join(file), &text)?;
    }
    write(
        &dir.join("tests/test_case.gd"),
        &format!("extends \"res://tests/test_base.gd\"\n\n{}", case.suite),
    )?;
    if case.broken_extension {
        let text = fs::read_to_string(ctx.addon_dir().join("godot_agents.gdextension"))
            .map_err(|e| format!("cannot read the .gdextension file: {e}"))?;
        // Same configuration, but bin/ is empty: the library "was never built".
        write(
            &dir.join("addons/godot_agents/godot_agents.gdextension"),
            &text,
        )?;
        fs::create_dir_all(dir.join("addons/godot_agents/bin")).map_err(|e| e.to_string())?;
    } else {
        link_or_copy_dir(&ctx.root.join("addons"), &dir.join("addons"))?;
    }
    Ok(dir)
}

/// Runs every [`CASES`] project and checks that exactly the passing one passes and each failing
/// one fails for the expected reason.
pub fn selftest(ctx: &Ctx) -> Result<(), String> {
    crate::build::build_extension(ctx, false)?;
    let godot = crate::godot::find_or_install(ctx)?;
    println!("xtask: using {}", godot.describe());
    let base = ctx.target_dir.join("xtask-selftest");
    let timeout = Duration::from_secs(20);
    let mut wrong = Vec::new();
    for case in CASES {
        let project = make_case_project(ctx, &base, case)?;
        let mut cmd = godot.command();
        cmd.args(["--headless", "--path"])
            .arg(&project)
            .arg("--import");
        process::run(&mut cmd, Some(Duration::from_secs(300)), Echo::Quiet)?;
        let mut cmd = godot.command();
        cmd.args(["--headless", "--path"])
            .arg(&project)
            .args(["--script", "res://tests/run_tests.gd"]);
        let out = process::run(&mut cmd, Some(timeout), Echo::Quiet)?;
        let run = judge(&out, timeout);
        let failed = run.failed > 0;
        let verdict = if case.expect.is_empty() {
            !failed && run.passed > 0
        } else {
            failed && run.problems.iter().any(|p| p.contains(case.expect))
        };
        println!(
            "{} {:<28} {} passed, {} failed",
            if verdict { "ok  " } else { "BAD " },
            case.name,
            run.passed,
            run.failed
        );
        for p in &run.problems {
            println!("       {p}");
        }
        if !verdict {
            wrong.push(case.name);
            println!("--- output of {} ---\n{}", case.name, out.output);
        }
    }
    if wrong.is_empty() {
        println!("xtask: selftest ok: every failure mode fails the run");
        Ok(())
    } else {
        Err(format!("selftest: wrong verdict for {}", wrong.join(", ")))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn extension_list_names_every_gdextension_once() {
        let root = std::env::temp_dir().join(format!("xtask-extlist-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("addons/a/bin")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::write(root.join("addons/a/a.gdextension"), "").unwrap();
        std::fs::write(root.join(".hidden/h.gdextension"), "").unwrap();
        std::fs::write(root.join("addons/a/bin/lib.so"), "").unwrap();
        write_extension_list(&root).unwrap();
        let list = std::fs::read_to_string(root.join(".godot/extension_list.cfg")).unwrap();
        assert_eq!(list, "res://addons/a/a.gdextension\n");
        // An existing list (Godot's own) is left alone.
        std::fs::write(root.join(".godot/extension_list.cfg"), "custom\n").unwrap();
        write_extension_list(&root).unwrap();
        let list = std::fs::read_to_string(root.join(".godot/extension_list.cfg")).unwrap();
        assert_eq!(list, "custom\n");
        std::fs::remove_dir_all(&root).unwrap();
    }

    use super::*;

    fn out(text: &str, code: i32) -> RunOutput {
        #[cfg(unix)]
        let status = {
            use std::os::unix::process::ExitStatusExt;
            std::process::ExitStatus::from_raw(code << 8)
        };
        #[cfg(windows)]
        let status = {
            use std::os::windows::process::ExitStatusExt;
            std::process::ExitStatus::from_raw(code as u32)
        };
        RunOutput {
            status: Some(status),
            timed_out: false,
            output: text.to_string(),
        }
    }

    const T: Duration = Duration::from_secs(10);
    const OK_TAIL: &str =
        "SUITE test_x.gd: 3 passed, 0 failed\nGODOT_TESTS_RESULT passed=3 failed=0 suites=1\n";

    #[test]
    fn clean_run_passes() {
        let run = judge(&out(&format!("Godot Engine v4.6.3\n{OK_TAIL}"), 0), T);
        assert_eq!((run.passed, run.failed), (3, 0), "{:?}", run.problems);
        assert!(run.problems.is_empty());
    }

    #[test]
    fn failed_assertions_count() {
        let text = "FAIL test_x.gd::test_a: expected 2 (int), got 1 (int)\nGODOT_TESTS_RESULT passed=2 failed=1 suites=1\n";
        let run = judge(&out(text, 1), T);
        assert_eq!((run.passed, run.failed), (2, 1));
        assert!(run.problems[0].starts_with("failed assertion: FAIL test_x.gd::test_a"));
    }

    fn fails_with(noise: &str, expect: &str) {
        let run = judge(&out(&format!("{noise}\n{OK_TAIL}"), 0), T);
        assert!(run.failed >= 1, "{noise:?} did not fail the run");
        assert!(
            run.problems.iter().any(|p| p.contains(expect)),
            "{noise:?}: {:?}",
            run.problems
        );
    }

    #[test]
    fn every_problem_pattern_fails_a_run() {
        fails_with(
            "SCRIPT ERROR: Attempt to call function 'call' in base 'null instance' on a null instance.\n   at: test_error (res://tests/test_case.gd:5)",
            "GDScript error",
        );
        fails_with(
            "SCRIPT ERROR: Parse Error: Identifier \"AgentNoSuchClass\" not declared in the current scope.",
            "GDScript parse error",
        );
        fails_with(
            "ERROR: Failed to load script \"res://tests/test_case.gd\" with error \"Parse error\".",
            "failed to load",
        );
        fails_with(
            "ERROR: Can't open dynamic library: /p/addons/godot_agents/bin/libgodot_agents.linux.debug.x86_64.so. Error: cannot open shared object file",
            "did not load",
        );
        fails_with(
            "ERROR: GDExtension dynamic library not found: 'res://addons/godot_agents/bin/libgodot_agents.linux.debug.x86_64.so'.",
            "did not load",
        );
        fails_with(
            "ERROR: No GDExtension library found for current OS and architecture (linux.x86_64) in configuration file: res://addons/godot_agents/godot_agents.gdextension",
            "did not load",
        );
        fails_with(
            "ERROR: Error loading extension: 'res://addons/godot_agents/godot_agents.gdextension'.",
            "did not load",
        );
        fails_with(
            "ERROR: Cannot get class 'AgentNoSuchClass'.",
            "a class is missing",
        );
        fails_with(
            "thread '<unnamed>' panicked at rust/godot/src/game_tools.rs:42:9:\nattempt to subtract with overflow",
            "a Rust panic",
        );
        fails_with(
            "ERROR: [panic rust/godot/src/convert.rs:10]\n  panicked at rust/godot/src/convert.rs:10:5: boom",
            "a Rust panic",
        );
        fails_with(
            "ERROR: godot-rust function call failed: GameTools::call_tool()\n    Reason: parameter #1 conversion",
            "a Rust method call failed",
        );
        fails_with(
            "WARNING: ObjectDB instances leaked at exit (run with --verbose for details).",
            "objects leaked at exit",
        );
        fails_with(
            "Leaked instance: Node:9223372062624580608",
            "objects leaked at exit",
        );
        fails_with(
            "ERROR: 1 resources still in use at exit (run with --verbose for details).",
            "resources leaked at exit",
        );
        fails_with(
            "handle_crash: Program crashed with signal 11",
            "Godot crashed",
        );
    }

    #[test]
    fn missing_summary_timeout_and_bad_exit_fail() {
        let run = judge(&out("Godot Engine v4.6.3\n", 0), T);
        assert!(run.failed >= 1);
        assert!(run.problems[0].contains("printed no GODOT_TESTS_RESULT"));

        let mut hung = out("started\n", 0);
        hung.timed_out = true;
        let run = judge(&hung, T);
        assert!(run.failed >= 2);
        assert!(
            run.problems
                .iter()
                .any(|p| p.contains("timed out after 10 s"))
        );

        let run = judge(&out(OK_TAIL, 3), T);
        assert_eq!(run.failed, 1);
        assert!(run.problems[0].contains("exit code 3"));
    }

    #[test]
    fn summary_parsing() {
        assert_eq!(
            parse_summary("x\nGODOT_TESTS_RESULT passed=5 failed=2 suites=3\n"),
            Some(Summary {
                passed: 5,
                failed: 2,
                suites: 3
            })
        );
        assert_eq!(parse_summary("GODOT_TESTS_RESULT passed=5 failed=2"), None);
        assert_eq!(
            parse_summary("GODOT_TESTS_RESULT passed=x failed=2 suites=1"),
            None
        );
        assert_eq!(parse_summary("nothing"), None);
    }

    #[test]
    fn repeated_problems_are_reported_once_with_a_count() {
        let problems = scan_output("SCRIPT ERROR: a\nSCRIPT ERROR: b\nSCRIPT ERROR: c\n");
        assert_eq!(
            problems,
            vec!["GDScript error: SCRIPT ERROR: a (+2 more)".to_string()]
        );
    }
}
