//! The arena's report page in a real browser (suite `report_page`): a short tournament of the
//! `scripted` brain against the engines (`agents-server arena`, debug build) writes
//! `report.html`; headless Chromium (Debian's `chromium`, installed when missing) renders it,
//! and what it shows is checked:
//!
//! - **the DOM** Chromium built holds every player of `results.json` with its rating and
//!   interval as printed, the rating chart, and for every game a link to its replay and the
//!   replay it links to;
//! - **the screenshot** (`target/screenshots/arena_report.png`) is not blank and shows the
//!   brain's dot and interval in its colour in the chart at the top.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::Ctx;
use crate::godot_tests::SuiteRun;
use crate::process::{self, Echo};
use crate::screenshots::Picture;

/// The suite's name (`--suite report_page`).
pub const SUITE: &str = "report_page";

/// The chart's colour of a brain (`report.rs`'s `BRAIN`, #1f5fbf).
const BRAIN_RGB: [u8; 3] = [0x1f, 0x5f, 0xbf];

/// Whether `name` selects this suite.
pub fn is_suite(name: &str) -> bool {
    name == SUITE
}

/// Runs the suite: every check is one assertion; a failure is a problem naming what is missing.
pub fn run(ctx: &Ctx, timeout: Duration) -> SuiteRun {
    let mut run = SuiteRun::default();
    match check(ctx, timeout) {
        Ok(held) => {
            for line in &held {
                println!("xtask: [{SUITE}] {line}");
            }
            run.passed += held.len() as u64;
        }
        Err(e) => {
            run.failed += 1;
            run.problems.push(format!("[{SUITE}] {e}"));
        }
    }
    run
}

fn check(ctx: &Ctx, timeout: Duration) -> Result<Vec<String>, String> {
    crate::packages::ensure(
        "chromium for the arena's report page",
        || crate::godot::which("chromium").is_some(),
        &["chromium"],
    )?;
    let server = crate::ws_client_tests::build_server(ctx)?;
    let dir = ctx.target_dir.join("report-page");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let report = dir.join("report");
    let arena = process::run(
        Command::new(&server).args([
            "arena",
            "--game",
            "tic_tac_toe",
            "--players",
            "scripted,engine:random,engine:easy",
            "--games",
            "2",
            "--seed",
            "5",
            "--db",
            &dir.join("arena.db").to_string_lossy(),
            "--report",
            &report.to_string_lossy(),
        ]),
        Some(timeout),
        Echo::Quiet,
    )?;
    if !arena.success() {
        return Err(format!(
            "agents-server arena failed ({}):\n{}",
            arena.ending(),
            arena.output
        ));
    }
    let shot = crate::screenshots::dir(ctx).join("arena_report.png");
    check_page(&report, &shot, timeout)
}

/// Renders `report/report.html` in Chromium and checks it against `report/results.json`;
/// the screenshot goes to `shot`. Returns what held.
pub fn check_page(report: &Path, shot: &Path, timeout: Duration) -> Result<Vec<String>, String> {
    let results: Value = serde_json::from_str(
        &fs::read_to_string(report.join("results.json"))
            .map_err(|e| format!("no results.json: {e}"))?,
    )
    .map_err(|e| format!("results.json: {e}"))?;
    let page = url(&report.join("report.html"))?;
    let mut held = Vec::new();

    let dom = chromium(&["--dump-dom", &page], timeout)?;
    let dom = dom
        .find("<html")
        .map(|start| &dom[start..])
        .ok_or("Chromium printed no DOM")?;
    let players = results["players"].as_array().cloned().unwrap_or_default();
    if players.is_empty() {
        return Err("results.json has no players".into());
    }
    for p in &players {
        let name = p["name"].as_str().unwrap_or_default();
        let [rating, low, high] = [
            p["rating"].as_f64(),
            p["rating_ci95"][0].as_f64(),
            p["rating_ci95"][1].as_f64(),
        ]
        .map(|x| x.unwrap_or(f64::NAN));
        let shown = format!("{rating:.0} [{low:.0}, {high:.0}]");
        if !dom.contains(name) || !dom.contains(&shown) {
            return Err(format!(
                "the page does not show {name} rated {shown} (the DOM has {} bytes)",
                dom.len()
            ));
        }
    }
    held.push(format!(
        "the page shows all {} players with their ratings and intervals",
        players.len()
    ));
    if !dom.contains("id=\"strength\"") || dom.matches("class=\"rating\"").count() < players.len() {
        return Err("the rating chart is missing, or a player's dot in it".into());
    }
    held.push("the rating chart has a dot for every player".into());
    let games = results["games"].as_array().map_or(0, Vec::len);
    for n in 1..=games {
        let link = format!("href=\"#game-{n}\"");
        let anchor = format!("id=\"game-{n}\"");
        if !dom.contains(&link) || !dom.contains(&anchor) {
            return Err(format!("game {n}: its link or its replay is missing"));
        }
    }
    held.push(format!("{games} games link to their {games} replays"));

    if let Some(parent) = shot.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let _ = fs::remove_file(shot);
    chromium(
        &[
            "--hide-scrollbars",
            "--window-size=1280,1400",
            &format!("--screenshot={}", shot.display()),
            &page,
        ],
        timeout,
    )?;
    let picture = Picture::load(shot)?;
    held.push(format!("the screenshot is not blank: {}", picture.check()?));
    // The chart is the first thing under the header: the brain's dot and bar are there.
    let brain = picture.count_near(BRAIN_RGB, 24, 0..400);
    if brain < 40 {
        return Err(format!(
            "the screenshot shows {brain} pixels of the brain's colour in the chart's region \
             (at least 40 expected): {}",
            shot.display()
        ));
    }
    held.push(format!(
        "the chart shows the brain ({brain} pixels of its colour): {}",
        shot.display()
    ));
    Ok(held)
}

fn url(path: &Path) -> Result<String, String> {
    let absolute: PathBuf =
        fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!("file://{}", absolute.display()))
}

/// Runs headless Chromium with `args`; its standard output.
fn chromium(args: &[&str], timeout: Duration) -> Result<String, String> {
    let out = process::run(
        Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu"])
            .args(args),
        Some(timeout),
        Echo::Quiet,
    )?;
    if !out.success() {
        return Err(format!(
            "chromium {args:?} failed ({}):\n{}",
            out.ending(),
            out.output
        ));
    }
    Ok(out.output)
}
