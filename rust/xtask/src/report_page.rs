//! The report pages in a real browser (suite `report_page`): headless Chromium (Debian's
//! `chromium`, installed when missing) renders the arena's `report.html`s and the report
//! card's ([`crate::card_page`]), and what each shows is checked against the `results.json`
//! beside it. The arena's three:
//!
//! - **a tournament** (`agents-server arena`, debug build: the `scripted` brain against two
//!   engines at tic-tac-toe) — its screenshot is the one the docs show;
//! - **the fixture** (`rust/core/tests/fixtures/arena_results.json`, written by
//!   `agents_core::arena::report::write`): a brain at chess with illegal attempts and a line
//!   whose text carries markup (`<script>`, `</td>`);
//! - **a house game** (`agents-server arena` at blackjack: the brain and the baselines
//!   `engine:basic` and `engine:stand`): net chips, no ratings.
//!
//! For each, from the DOM Chromium built (`--dump-dom`): every player is there with its rating
//! and interval as printed (at a house game its net chips per 100 hands), every game's link
//! has the replay it points to, following the link to the last game opens that replay, and no
//! `<script>` element exists (every text from outside was escaped). From its screenshot
//! (`target/screenshots/arena_report*.png`): it is not blank, and the chart at the top shows
//! its marks (a brain's dot and interval, or the net chips' bars) in their colours.
//!
//! [`check_page`] takes any directory holding `results.json` and `report.html`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agents_core::arena::report;
use agents_core::arena::results::Results;
use serde_json::Value;

use crate::Ctx;
use crate::browser::{chromium, dom, escape, url};
use crate::godot_tests::SuiteRun;
use crate::process::{self, Echo};
use crate::screenshots::Picture;

/// The suite's name (`--suite report_page`).
pub const SUITE: &str = "report_page";

/// The fixture rendered by [`report::write`], relative to the workspace.
pub const FIXTURE: &str = "rust/core/tests/fixtures/arena_results.json";

/// A brain's colour in the charts (`report.rs`'s `BRAIN`, #1f5fbf).
const BRAIN_RGB: [u8; 3] = [0x1f, 0x5f, 0xbf];

/// A brain's 95 % interval: its colour at 35 % over white.
const BRAIN_INTERVAL_RGB: [u8; 3] = [177, 199, 233];

/// An engine's colour in the charts (`ENGINE`, #8a94a6).
const ENGINE_RGB: [u8; 3] = [0x8a, 0x94, 0xa6];

/// A bar of net chips: a brain's colour at 80 % over white.
const BRAIN_BAR_RGB: [u8; 3] = [76, 127, 204];

/// A bar of net chips: an engine's colour at 80 % over white.
const ENGINE_BAR_RGB: [u8; 3] = [161, 169, 184];

/// The screenshots' rows where the chart is (under the header, above the players' table).
const CHART_ROWS: std::ops::Range<u32> = 100..700;

/// The screenshots' columns where a chart's plot is: right of the names, left of the numbers
/// (`report.rs`: the page 1240 px wide centred, 20 px of padding, the panel's border and 10 px
/// of padding, then 210 px of names and 620 of plot).
const PLOT_COLUMNS: std::ops::Range<u32> = 255..890;

/// The screenshots' size.
const WINDOW: &str = "--window-size=1280,2000";

/// Whether `name` selects this suite.
pub fn is_suite(name: &str) -> bool {
    name == SUITE
}

/// Runs the suite: one assertion per check that held; a failure is a problem naming what is
/// missing, and the pages are left in `target/report-page/` to look at.
pub fn run(ctx: &Ctx, timeout: Duration) -> SuiteRun {
    let began = Instant::now();
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
    println!(
        "xtask: [{SUITE}] done in {:.1} s",
        began.elapsed().as_secs_f64()
    );
    run
}

fn check(ctx: &Ctx, timeout: Duration) -> Result<Vec<String>, String> {
    crate::packages::ensure(
        "chromium for the arena's report page",
        || crate::godot::which("chromium").is_some(),
        &["chromium"],
    )?;
    let dir = ctx.target_dir.join("report-page");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let shots = crate::screenshots::dir(ctx);
    let mut held = Vec::new();

    let fixture = dir.join("fixture");
    let results: Results = serde_json::from_str(
        &fs::read_to_string(ctx.root.join(FIXTURE)).map_err(|e| format!("{FIXTURE}: {e}"))?,
    )
    .map_err(|e| format!("{FIXTURE}: {e}"))?;
    report::write(&fixture, &results).map_err(|e| format!("{}: {e}", fixture.display()))?;
    held.extend(tagged(
        "fixture",
        check_page(&fixture, &shots.join("arena_report_fixture.png"), timeout)?,
    ));

    let server = crate::ws_client_tests::build_server(ctx)?;
    let tournament = arena(
        &server,
        &dir,
        "tournament",
        &["--game", "tic_tac_toe"],
        &["--players", "scripted,engine:random,engine:easy"],
        timeout,
    )?;
    held.extend(tagged(
        "tournament",
        check_page(&tournament, &shots.join("arena_report.png"), timeout)?,
    ));
    let house = arena(
        &server,
        &dir,
        "house",
        &["--game", "blackjack"],
        &["--players", "scripted,engine:basic,engine:stand"],
        timeout,
    )?;
    held.extend(tagged(
        "house",
        check_page(&house, &shots.join("arena_report_house.png"), timeout)?,
    ));
    let card = crate::card_page::play(&server, &ctx.root, &dir, timeout)?;
    held.extend(tagged(
        "report card",
        crate::card_page::check(&card, &shots.join("card_report.png"), timeout)?,
    ));
    Ok(held)
}

fn tagged(page: &str, held: Vec<String>) -> Vec<String> {
    held.into_iter().map(|h| format!("{page}: {h}")).collect()
}

/// Plays a short tournament with `agents-server arena` (seed 5, 2 games per pairing, 10 hands
/// per player at a house game) writing its report into `dir/name`; returns that directory.
fn arena(
    server: &Path,
    dir: &Path,
    name: &str,
    game: &[&str],
    players: &[&str],
    timeout: Duration,
) -> Result<PathBuf, String> {
    let report = dir.join(name);
    let games = if game.contains(&"blackjack") {
        "10"
    } else {
        "2"
    };
    let out = process::run(
        Command::new(server)
            .arg("arena")
            .args(game)
            .args(players)
            .args(["--games", games, "--seed", "5", "--db"])
            .arg(dir.join(format!("{name}.db")))
            .arg("--report")
            .arg(&report),
        Some(timeout),
        Echo::Quiet,
    )?;
    if !out.success() {
        return Err(format!(
            "agents-server arena {game:?} failed ({}):\n{}",
            out.ending(),
            out.output
        ));
    }
    Ok(report)
}

/// Renders `dir/report.html` in Chromium and checks it against `dir/results.json`; the
/// screenshot goes to `shot`. Returns what held.
pub fn check_page(dir: &Path, shot: &Path, timeout: Duration) -> Result<Vec<String>, String> {
    let results: Value = serde_json::from_str(
        &fs::read_to_string(dir.join("results.json"))
            .map_err(|e| format!("no results.json in {}: {e}", dir.display()))?,
    )
    .map_err(|e| format!("{}: {e}", dir.join("results.json").display()))?;
    let page = url(&dir.join("report.html"))?;
    let mut held = Vec::new();

    let dom = dom(&page, timeout)?;
    let players = results["players"].as_array().cloned().unwrap_or_default();
    if players.is_empty() {
        return Err(format!("{} has no players", dir.display()));
    }
    let house = results["anchor"].is_null();
    for p in &players {
        let name = p["name"].as_str().unwrap_or_default();
        let shown = if house {
            format!(
                "{:+.1}",
                p["score"]["net_per_100"].as_f64().unwrap_or(f64::NAN)
            )
        } else {
            let [rating, low, high] = [
                p["rating"].as_f64(),
                p["rating_ci95"][0].as_f64(),
                p["rating_ci95"][1].as_f64(),
            ]
            .map(|x| x.unwrap_or(f64::NAN));
            format!("{rating:.0} [{low:.0}, {high:.0}]")
        };
        if !dom.contains(&escape(name)) || !dom.contains(&shown) {
            return Err(format!(
                "the page does not show {name} at {shown} (the DOM has {} bytes): {}",
                dom.len(),
                dir.display()
            ));
        }
    }
    held.push(format!(
        "the page shows all {} players with their {}",
        players.len(),
        if house {
            "net chips per 100 hands"
        } else {
            "ratings and intervals"
        }
    ));
    let chart = dom
        .find("id=\"strength\"")
        .map(|at| &dom[at..at + dom[at..].find("</svg>").unwrap_or(0)])
        .ok_or("the chart (#strength) is missing")?;
    let marks = if house {
        "class=\"bar\""
    } else {
        "class=\"rating\""
    };
    if chart.matches(marks).count() != players.len() {
        return Err(format!(
            "the chart has {} marks ({marks}) for {} players",
            chart.matches(marks).count(),
            players.len()
        ));
    }
    held.push("the chart has a mark for every player".into());
    let games = results["games"].as_array().map_or(0, Vec::len);
    for n in 1..=games {
        let link = format!("href=\"#game-{n}\"");
        let anchor = format!("id=\"game-{n}\"");
        if !dom.contains(&link) || dom.matches(&anchor).count() != 1 {
            return Err(format!("game {n}: its link or its replay is missing"));
        }
    }
    held.push(format!("{games} games link to their {games} replays"));
    if games > 1 {
        let followed = self::dom(&format!("{page}#game-{games}"), timeout)?;
        let last = followed
            .rfind("<details")
            .map(|at| &followed[at..at + followed[at..].find('>').unwrap_or(0)])
            .unwrap_or_default();
        if !last.contains("open") {
            return Err(format!(
                "following #game-{games} leaves its replay closed: {last}>"
            ));
        }
        held.push(format!("following #game-{games} opens its replay"));
    }
    if !dom.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\"") {
        return Err("the page has no content security policy (default-src 'none')".into());
    }
    held.push("its content security policy lets nothing load and no script run".into());
    if dom.to_ascii_lowercase().contains("<script") {
        return Err("the DOM has a <script> element: a text was not escaped".into());
    }
    held.push("no <script> element: every text from outside is escaped".into());

    if let Some(parent) = shot.parent() {
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let _ = fs::remove_file(shot);
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
    let count = |colour| picture.count_near(colour, 10, CHART_ROWS);
    let brain = players.iter().any(|p| p["kind"] == "brain");
    let (shown, enough) = if house {
        let bars = count(BRAIN_BAR_RGB) + count(ENGINE_BAR_RGB);
        (format!("the bars: {bars} pixels"), bars >= 200)
    } else if brain {
        // The dot sits on its interval: it is counted in the interval's rows, in the plot's
        // columns (the brain's name, left of them, is in its colour too).
        let rows = picture.rows_with(BRAIN_INTERVAL_RGB, 10, 20, CHART_ROWS);
        let dot: usize = rows
            .iter()
            .map(|row| picture.count_near_in(BRAIN_RGB, 10, *row..row + 1, PLOT_COLUMNS))
            .sum();
        (
            format!(
                "the brain's interval: {} pixels in {} rows, its dot: {dot} pixels on them",
                count(BRAIN_INTERVAL_RGB),
                rows.len()
            ),
            rows.len() >= 4 && dot >= 40,
        )
    } else {
        let dots = count(ENGINE_RGB);
        (format!("the engines' dots: {dots} pixels"), dots >= 100)
    };
    if !enough {
        return Err(format!(
            "the chart's marks are missing from the screenshot's rows {CHART_ROWS:?} ({shown}): \
             {}",
            shot.display()
        ));
    }
    held.push(format!("the chart shows ({shown}): {}", shot.display()));
    Ok(held)
}
