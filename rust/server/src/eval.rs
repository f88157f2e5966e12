//! `agents-server eval`: the NPC report card — a suite of scenarios played on one brain
//! through the agent runtime, its metrics printed and written (`--report DIR`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agents_core::error_code::ErrorCode;
use agents_core::report_card::results::{CardResults, Metric};
use agents_core::report_card::run::{Ablation, ReportCard, RunConfig};
use agents_core::report_card::suite::Suite;
use agents_core::runtime::{Runtime, RuntimeOptions};
use clap::Args;

use crate::args::{LogLevel, positive_seconds};
use crate::failure::{Failure, with};

/// Arguments of `agents-server eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The suite file (JSON; docs/evaluation.md describes it, docs/suites/town.json is the
    /// starter suite).
    #[arg(long, value_name = "FILE")]
    pub suite: PathBuf,
    /// A JSON file of named brains: `{"default": NAME, "profiles": {NAME: {brain object}}}`
    /// (see docs/brains.md).
    #[arg(long, value_name = "FILE")]
    pub brains: Option<PathBuf>,
    /// The brain every agent of the suite uses: a profile of `--brains`, or a brain the server
    /// knows (`scripted`).
    #[arg(long, value_name = "NAME", default_value = "scripted")]
    pub brain: String,
    /// Turn a part of the mind off to see what it adds: `memory`, `reflection`,
    /// `relationships` (repeatable).
    #[arg(long, value_name = "PART", value_parser = Ablation::parse)]
    pub without: Vec<Ablation>,
    /// The run's seed: each agent's brain seed derives from it, the scenario and the agent's
    /// key (when agents act also depends on timing: the agents live in scaled real time).
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Game seconds per real second (a `wait` of 30 s at 10 lasts 3 s).
    #[arg(long, value_name = "X", default_value = "10", value_parser = time_scale)]
    pub time_scale: f64,
    /// The longest real time to wait for an agent's answer to one line.
    #[arg(long, value_name = "SECONDS", default_value = "120", value_parser = positive_seconds)]
    pub answer_timeout_seconds: f64,
    /// Play every scenario in this database (a SQLite file, created if missing, or a
    /// PostgreSQL URL) instead of a fresh one each in a temporary directory.
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Write `results.json` and `report.html` into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Log verbosity (stderr).
    #[arg(long, value_enum, default_value = "warn")]
    pub log_level: LogLevel,
}

impl EvalArgs {
    fn config(&self) -> RunConfig {
        let mut without = self.without.clone();
        without.sort();
        without.dedup();
        RunConfig {
            brain: self.brain.clone(),
            without,
            seed: self.seed,
            time_scale: self.time_scale,
            answer_timeout: Duration::from_secs_f64(self.answer_timeout_seconds),
        }
    }
}

/// A time scale: a finite number more than 0, at most 1,000.
fn time_scale(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 1000.0 => Ok(x),
        _ => Err(format!(
            "'{text}' is not a time scale (game seconds per real second, more than 0 and at most 1000)"
        )),
    }
}

/// Reads the suite; errors name the file and the field.
fn read_suite(path: &Path) -> Result<Suite, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::new(
            ErrorCode::InvalidArgument,
            format!("cannot read the suite {}: {e}", path.display()),
        )
    })?;
    Suite::parse(&text).map_err(|e| {
        Failure::new(
            ErrorCode::InvalidArgument,
            format!("the suite {}: {e}", path.display()),
        )
    })
}

/// Runs the report card. Bad input (a suite with a mistake, an unknown profile, a number out
/// of range) is refused before any database is opened: nothing is run, nothing written.
pub fn run(args: EvalArgs, out: &mut impl Write) -> Result<(), Failure> {
    let suite = read_suite(&args.suite)?;
    let profiles = match &args.brains {
        Some(path) => Some(crate::brains::load(path).map_err(Failure::argument)?),
        None => None,
    };
    let options = |database: &Path| {
        let mut options = RuntimeOptions::with_database(database);
        if let Some(profiles) = &profiles {
            crate::brains::apply(profiles.clone(), &mut options);
        }
        options
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("agents-eval")
        .enable_all()
        .build()
        .map_err(with(ErrorCode::InternalError))?;
    // The plan is checked on a throw-away database: bad input touches no data.
    let card = {
        let scratch = crate::brains::ScratchDb::new();
        let runtime = Runtime::start_on(rt.handle().clone(), options(&scratch.0))
            .map_err(with(ErrorCode::InternalError))?;
        let planned = ReportCard::plan(&runtime, suite, args.config());
        runtime.shutdown(Duration::from_secs(2));
        planned.map_err(|e| Failure::new(ErrorCode::InvalidArgument, e.to_string()))?
    };
    let scratch_dir = match &args.db {
        Some(_) => None,
        None => Some(tempfile::tempdir().map_err(|e| {
            Failure::new(
                ErrorCode::DatabaseError,
                format!("cannot make a temporary directory for the databases: {e}"),
            )
        })?),
    };
    let database = |index: usize| match (&args.db, &scratch_dir) {
        (Some(db), _) => db.clone(),
        (None, Some(dir)) => dir.path().join(format!("scenario-{index}.db")),
        (None, None) => PathBuf::from(format!("scenario-{index}.db")),
    };
    let total = card.suite().scenarios.len();
    eprintln!(
        "eval: {total} scenarios of suite '{}' on brain '{}'",
        card.suite().name,
        args.brain
    );
    let results = rt
        .block_on(
            card.run(rt.handle().clone(), options, database, |done, name| {
                eprintln!("eval: {done}/{total} scenarios ({name})")
            }),
        )
        .map_err(|e| Failure::new(ErrorCode::DatabaseError, e.to_string()))?;
    rt.shutdown_timeout(Duration::from_secs(1));
    drop(scratch_dir);
    summary(&results, out).map_err(with(ErrorCode::InternalError))?;
    if let Some(dir) = &args.report {
        crate::report::write("eval", dir, |dir| {
            agents_core::report_card::report::write(dir, &results)
        })?;
    }
    Ok(())
}

/// A metric's value as the table shows it.
pub fn shown(m: &Metric) -> String {
    match (m.value, m.unit.as_str()) {
        (None, _) => "-".into(),
        (Some(v), "share") => format!("{:.1} %", v * 100.0),
        (Some(v), "ms") => format!("{v:.0} ms"),
        (Some(v), "tokens") => format!("{v:.1}"),
        (Some(v), _) => format!("{v:.0}"),
    }
}

/// The card as a table: each metric, its value, its target and whether it is met.
fn summary(results: &CardResults, out: &mut impl Write) -> std::io::Result<()> {
    let without = if results.without.is_empty() {
        String::new()
    } else {
        format!(", without {}", results.without.join(", "))
    };
    writeln!(
        out,
        "report card: suite {}, brain {}{without} (seed {}, {} scenarios, {} s)",
        results.suite,
        results.brain,
        results.seed,
        results.scenarios.len(),
        results.elapsed_ms / 1000
    )?;
    writeln!(
        out,
        "{:<34} {:>10} {:>8} {:>6}  detail",
        "metric", "value", "target", ""
    )?;
    for m in &results.metrics {
        let target = match m.target {
            Some(agents_core::report_card::results::Target::AtLeast(v)) => {
                format!(">= {}", bar(v, m))
            }
            Some(agents_core::report_card::results::Target::AtMost(v)) => {
                format!("<= {}", bar(v, m))
            }
            None => String::new(),
        };
        let verdict = match m.passed {
            Some(true) => "ok",
            Some(false) => "MISSED",
            None => "",
        };
        writeln!(
            out,
            "{:<34} {:>10} {:>8} {:>6}  {}",
            m.label,
            shown(m),
            target,
            verdict,
            m.detail
        )?;
    }
    Ok(())
}

fn bar(v: f64, m: &Metric) -> String {
    if m.unit == "share" {
        format!("{:.0}%", v * 100.0)
    } else {
        format!("{v}")
    }
}
