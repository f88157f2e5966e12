//! The report card's page in a real browser, part of suite `report_page`: `agents-server eval`
//! (debug build) plays the starter suite (`docs/suites/town.json`) on the `scripted` brain
//! without memory — so the memory after a restart misses its target — and headless Chromium
//! renders its `report.html`, checked against the `results.json` beside it:
//!
//! - from the DOM: every metric has its row with its label, a missed target is marked `missed`
//!   on its row and a met one `met`, every scenario has its section, the content security
//!   policy is there and no `<script>` element exists;
//! - from the screenshot (`target/screenshots/card_report.png`): it is not blank, and a missed
//!   share's bar shows in red.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use agents_core::report_card::results::CardResults;

use crate::browser::{chromium, dom, escape, url};
use crate::process::{self, Echo};
use crate::screenshots::Picture;

/// A missed share's bar (`eval/report.rs`, #b3261e).
const MISSED_RGB: [u8; 3] = [0xb3, 0x26, 0x1e];

/// The screenshot's size.
const WINDOW: &str = "--window-size=1280,1400";

/// Plays the starter suite with `agents-server eval` into `dir/card`; returns that directory.
pub fn play(server: &Path, root: &Path, dir: &Path, timeout: Duration) -> Result<PathBuf, String> {
    let report = dir.join("card");
    let out = process::run(
        Command::new(server)
            .arg("eval")
            .arg("--suite")
            .arg(root.join("docs/suites/town.json"))
            .args([
                "--brain",
                "scripted",
                "--without",
                "memory",
                "--time-scale",
                "20",
            ])
            .arg("--report")
            .arg(&report),
        Some(timeout),
        Echo::Quiet,
    )?;
    if !out.success() {
        return Err(format!(
            "agents-server eval failed ({}):\n{}",
            out.ending(),
            out.output
        ));
    }
    Ok(report)
}

/// Renders `dir/report.html` in Chromium and checks it against `dir/results.json`; the
/// screenshot goes to `shot`. Returns what held.
pub fn check(dir: &Path, shot: &Path, timeout: Duration) -> Result<Vec<String>, String> {
    let json = dir.join("results.json");
    let results: CardResults = serde_json::from_str(
        &std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?,
    )
    .map_err(|e| format!("{}: {e}", json.display()))?;
    let page = url(&dir.join("report.html"))?;
    let dom = dom(&page, timeout)?;
    let mut held = Vec::new();
    let mut missed = 0;
    for m in &results.metrics {
        let at = dom
            .find(&format!("id=\"metric-{}\"", m.key))
            .ok_or_else(|| format!("the card has no row for {}", m.key))?;
        let row = &dom[at..at + dom[at..].find("</tr>").unwrap_or(0)];
        if !row.contains(&escape(&m.label)) {
            return Err(format!("the row of {} does not name it: {row}", m.key));
        }
        let (class, verdict) = match m.passed {
            Some(false) => (true, Some(">missed<")),
            Some(true) => (false, Some(">met<")),
            None => (false, None),
        };
        if row.contains("class=\"missed\"") != class || verdict.is_some_and(|v| !row.contains(v)) {
            return Err(format!(
                "the row of {} does not show its verdict ({:?}): {row}",
                m.key, m.passed
            ));
        }
        missed += usize::from(class);
    }
    if missed == 0 {
        return Err("no target was missed: the run without memory should miss one".into());
    }
    held.push(format!(
        "the card shows its {} metrics, {missed} missed and marked so",
        results.metrics.len()
    ));
    for s in &results.scenarios {
        if !dom.contains(&format!("Scenario: {}", escape(&s.name))) {
            return Err(format!("the scenario {} has no section", s.name));
        }
    }
    held.push(format!(
        "each of the {} scenarios has its section",
        results.scenarios.len()
    ));
    if !dom.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\"") {
        return Err("the page has no content security policy (default-src 'none')".into());
    }
    if dom.to_ascii_lowercase().contains("<script") {
        return Err("the DOM has a <script> element: a text was not escaped".into());
    }
    held.push("its content security policy is there and no <script> element".into());
    if let Some(parent) = shot.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let _ = std::fs::remove_file(shot);
    chromium(
        &[
            "--hide-scrollbars",
            WINDOW,
            &format!("--screenshot={}", shot.display()),
            &page,
        ],
        timeout,
    )?;
    let picture = Picture::load(shot)?;
    held.push(format!("the screenshot is not blank: {}", picture.check()?));
    let red = picture.count_near(MISSED_RGB, 12, 0..1400);
    if red < 100 {
        return Err(format!(
            "a missed share's red bar is not in the screenshot ({red} pixels): {}",
            shot.display()
        ));
    }
    held.push(format!(
        "a missed share's bar shows in red ({red} pixels): {}",
        shot.display()
    ));
    Ok(held)
}
