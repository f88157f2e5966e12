//! The report card's `report.html`: a run's [`CardResults`] as one self-contained page — inline
//! CSS and SVG, no script, nothing fetched (the page shell of [`crate::report_html`], which the
//! arena's page shares) — in three parts:
//!
//! 1. **The header**: the suite, the brain, the parts turned off, the seed, the time scale,
//!    how many scenarios, how long it took, when it started.
//! 2. **The card**: every metric as a row (`id="metric-<key>"`) — its value, a bar for a share
//!    with its target marked, the target, `met` or `missed` (a missed row is marked `missed`
//!    and drawn in red), and what the value is made of.
//! 3. **The scenarios**, one section each: its agents' numbers (lines, repeated and echoed
//!    lines, quotes of quotes, distinct-2, questions answered, tasks, names grounded, calls
//!    naming what does not exist, decisions), its questions (the answer, whether it held what
//!    was expected, whether the tool was used), its help requests, its game master's turns
//!    (repairs, valid first time, valid after repair, what failed), and everything said.
//!
//! Every string that came from outside — names, lines, answers — is HTML-escaped.

use std::fmt::Write as _;
use std::path::Path;

use super::results::{CardResults, Metric, ScenarioResult, Target};
use crate::report_html::{self as html, duration, escape as esc, trim};

/// The card page's own style, after [`html::BASE_STYLE`].
const STYLE: &str = r#"
tr.missed td{background:#fdf0ef}
tr.missed td.verdict{color:var(--bad);font-weight:700}
td.verdict.met{color:var(--good);font-weight:600}
.said{white-space:normal;max-width:640px}
.lines{list-style:none;padding:0;margin:6px 0}
.lines li{padding:2px 0;border-bottom:1px solid #eef2f7}
.who{font-weight:600;margin-right:6px}
.who.suite{color:var(--muted)}
details.talk{background:#fff;border:1px solid var(--line);border-radius:8px;margin:8px 0;padding:6px 12px}
"#;

/// Width and height of a share's bar.
const BAR_WIDTH: f64 = 160.0;
const BAR_HEIGHT: f64 = 14.0;

/// Writes `results.json` (pretty-printed) and `report.html` into `dir`, creating it.
pub fn write(dir: &Path, results: &CardResults) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(results).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.json"), json + "\n")?;
    std::fs::write(dir.join("report.html"), render(results))
}

/// The page for `results` (see the module's documentation for what it shows).
pub fn render(results: &CardResults) -> String {
    let mut page = String::with_capacity(32 * 1024);
    let title = format!("Report card: {} on {}", results.suite, results.brain);
    html::open_page(&mut page, &title, STYLE);
    let without = if results.without.is_empty() {
        "nothing".to_string()
    } else {
        esc(&results.without.join(", "))
    };
    html::facts(
        &mut page,
        &title,
        &[
            ("brain", esc(&results.brain)),
            ("without", without),
            ("seed", results.seed.to_string()),
            ("time scale", format!("{}×", trim(results.time_scale))),
            ("scenarios", results.scenarios.len().to_string()),
            ("elapsed", duration(results.elapsed_ms as f64)),
            ("started", esc(&results.started_at)),
        ],
    );
    page.push_str("</header>\n");
    card(&mut page, &results.metrics);
    for scenario in &results.scenarios {
        scenario_section(&mut page, scenario);
    }
    html::close_page(&mut page);
    page
}

/// A metric's value as the page shows it.
fn value(m: &Metric) -> String {
    match (m.value, m.unit.as_str()) {
        (None, _) => "–".into(),
        (Some(v), "share") => format!("{} %", trim(v * 100.0)),
        (Some(v), "ms") => duration(v),
        (Some(v), "tokens") => trim(v),
        (Some(v), _) => trim(v),
    }
}

fn target(m: &Metric) -> String {
    let shown = |v: f64| {
        if m.unit == "share" {
            format!("{} %", trim(v * 100.0))
        } else {
            trim(v)
        }
    };
    match m.target {
        Some(Target::AtLeast(v)) => format!("≥ {}", shown(v)),
        Some(Target::AtMost(v)) => format!("≤ {}", shown(v)),
        None => String::new(),
    }
}

/// A share as a bar, its target a dark tick.
fn bar(m: &Metric) -> String {
    let Some(v) = m.value.filter(|_| m.unit == "share") else {
        return String::new();
    };
    let fill = match m.passed {
        Some(false) => "#b3261e",
        Some(true) => "#1e7b3c",
        None => "#1f5fbf",
    };
    let mut svg = format!(
        "<svg width=\"{BAR_WIDTH}\" height=\"{BAR_HEIGHT}\" viewBox=\"0 0 {BAR_WIDTH} {BAR_HEIGHT}\" \
         role=\"img\"><rect width=\"{BAR_WIDTH}\" height=\"{BAR_HEIGHT}\" fill=\"#eef2f7\"/>\
         <rect width=\"{:.1}\" height=\"{BAR_HEIGHT}\" fill=\"{fill}\"/>",
        v.clamp(0.0, 1.0) * BAR_WIDTH
    );
    if let Some(Target::AtLeast(t) | Target::AtMost(t)) = m.target {
        let x = t.clamp(0.0, 1.0) * BAR_WIDTH;
        let _ = write!(
            svg,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"0\" y2=\"{BAR_HEIGHT}\" stroke=\"#1d2433\" \
             stroke-width=\"2\"/>"
        );
    }
    svg.push_str("</svg>");
    svg
}

fn card(page: &mut String, metrics: &[Metric]) {
    let missed = metrics.iter().filter(|m| m.passed == Some(false)).count();
    let with_target = metrics.iter().filter(|m| m.passed.is_some()).count();
    let _ = writeln!(
        page,
        "<h2>The card</h2><p class=\"note\">{} of {with_target} targets met{}.</p>\
         <div class=\"scroll\"><table id=\"card\"><tr><th class=\"l\">metric</th><th>value</th>\
         <th></th><th>target</th><th>verdict</th><th class=\"l\">what it is made of</th></tr>",
        with_target - missed,
        if missed > 0 {
            format!(", <span class=\"bad\">{missed} missed</span>")
        } else {
            String::new()
        }
    );
    for m in metrics {
        let (class, verdict) = match m.passed {
            Some(true) => ("", "<td class=\"verdict met\">met</td>"),
            Some(false) => (" class=\"missed\"", "<td class=\"verdict\">missed</td>"),
            None => ("", "<td class=\"verdict\"></td>"),
        };
        let _ = writeln!(
            page,
            "<tr id=\"metric-{}\"{class}><td class=\"l\">{}</td><td class=\"value\">{}</td>\
             <td>{}</td><td>{}</td>{verdict}<td class=\"l\">{}</td></tr>",
            esc(&m.key),
            esc(&m.label),
            value(m),
            bar(m),
            target(m),
            esc(&m.detail)
        );
    }
    page.push_str("</table></div>\n");
}

fn percent(v: f64) -> String {
    format!("{} %", trim(v * 100.0))
}

fn scenario_section(page: &mut String, s: &ScenarioResult) {
    let restarts = match s.restarts {
        0 => String::new(),
        1 => " (1 restart)".into(),
        n => format!(" ({n} restarts)"),
    };
    let _ = writeln!(
        page,
        "<h2>Scenario: {}{restarts}</h2><div class=\"scroll\"><table><tr><th class=\"l\">agent</th>\
         <th>lines</th><th>repeated</th><th>echo</th><th>quotes of quotes</th><th>distinct-2</th>\
         <th>questions answered</th><th>tasks done</th><th>names grounded</th>\
         <th>calls naming what does not exist</th><th>decisions</th></tr>",
        esc(&s.name)
    );
    for a in &s.agents {
        let nonexistent = if a.nonexistent.is_empty() {
            "0".to_string()
        } else {
            format!(
                "<span class=\"bad\" title=\"{}\">{}</span>",
                esc(&a.nonexistent.join("\n")),
                a.nonexistent.len()
            )
        };
        let _ = writeln!(
            page,
            "<tr><td class=\"l\">{} <code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.2}</td><td>{}/{}</td><td>{}/{}</td><td title=\"{}\">{}/{}</td><td>{nonexistent}</td>\
             <td>{}</td></tr>",
            esc(&a.name),
            esc(&a.id),
            a.lines.lines,
            percent(a.lines.repeated_share),
            percent(a.lines.echo_share),
            a.lines.quotes_of_quotes,
            a.lines.distinct_2,
            a.lines.answered,
            a.lines.questions,
            a.tasks_completed,
            a.tasks,
            esc(&a.ungrounded.join("\n")),
            a.grounded,
            a.names,
            a.decisions.len()
        );
    }
    page.push_str("</table></div>\n");
    if !s.questions.is_empty() {
        page.push_str(
            "<div class=\"scroll\"><table><tr><th class=\"l\">asked</th><th class=\"l\">question</th>\
             <th>counts for</th><th class=\"l\">expected</th><th class=\"l\">answer</th><th>held</th>\
             <th>tool used</th></tr>",
        );
        for q in &s.questions {
            let held = if q.held {
                "<span class=\"good\">yes</span>"
            } else {
                "<span class=\"bad\">no</span>"
            };
            let tool = match (&q.tool, q.tool_used) {
                (Some(tool), Some(true)) => format!("<span class=\"good\">{}</span>", esc(tool)),
                (Some(tool), _) => format!("<span class=\"bad\">not {}</span>", esc(tool)),
                (None, _) => String::new(),
            };
            let _ = writeln!(
                page,
                "<tr><td class=\"l\">{}</td><td class=\"l said\">{}</td><td>{}{}</td>\
                 <td class=\"l\">{}</td><td class=\"l said\">{}</td><td>{held}</td><td>{tool}</td></tr>",
                esc(&q.agent),
                esc(&q.text),
                esc(&q.counts_for),
                if q.after_restart {
                    ", after a restart"
                } else {
                    ""
                },
                esc(&q.expect.join(", ")),
                q.answer.as_deref().map_or("<i>no answer</i>".into(), esc)
            );
        }
        page.push_str("</table></div>\n");
    }
    if !s.help.is_empty() {
        page.push_str(
            "<div class=\"scroll\"><table><tr><th class=\"l\">help asked</th><th class=\"l\">of</th>\
             <th class=\"l\">request</th><th class=\"l\">answer</th></tr>",
        );
        for h in &s.help {
            let _ = writeln!(
                page,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l said\">{}</td>\
                 <td class=\"l said\">{}</td></tr>",
                esc(&h.from),
                esc(&h.to),
                esc(&h.text),
                h.answer
                    .as_deref()
                    .map_or("<span class=\"bad\">no answer</span>".into(), esc)
            );
        }
        page.push_str("</table></div>\n");
    }
    if !s.turns.is_empty() {
        page.push_str(
            "<div class=\"scroll\"><table><tr><th class=\"l\">game-master turn</th>\
             <th>repairs</th><th>valid first time</th><th>valid after repair</th>\
             <th>replays identically</th><th class=\"l\">tools applied (expected)</th>\
             <th class=\"l\">what failed</th></tr>",
        );
        let yes_no = |ok: bool| {
            if ok {
                "<span class=\"good\">yes</span>"
            } else {
                "<span class=\"bad\">no</span>"
            }
        };
        let applied = |t: &crate::report_card::results::TurnResult| {
            let tools = if t.applied.is_empty() {
                "none".to_string()
            } else {
                esc(&t.applied.join(", "))
            };
            match t.applied_expected() {
                None => tools,
                Some(ok) => format!(
                    "{tools} ({}{})",
                    esc(&t.expected.join(", ")),
                    if ok {
                        ""
                    } else {
                        ": <span class=\"bad\">missing</span>"
                    }
                ),
            }
        };
        for t in &s.turns {
            let _ = writeln!(
                page,
                "<tr><td class=\"l said\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td class=\"l\">{}</td><td class=\"l said\">{}</td></tr>",
                esc(&t.input),
                t.repairs,
                yes_no(t.first_pass),
                yes_no(t.after_repair),
                yes_no(t.replays),
                applied(t),
                esc(&[t.failure.as_deref(), t.replay_difference.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("; "))
            );
        }
        page.push_str("</table></div>\n");
    }
    let name = |id: &str| {
        let (id, suite) = match id.strip_suffix("@suite") {
            Some(id) => (id, true),
            None => (id, false),
        };
        let shown = if id == s.player {
            "player".to_string()
        } else {
            s.agents
                .iter()
                .find(|a| a.id == id)
                .map_or(id.to_string(), |a| a.name.clone())
        };
        (shown, suite)
    };
    let _ = writeln!(
        page,
        "<details class=\"talk\"><summary>Everything said ({} lines)</summary><ul class=\"lines\">",
        s.lines.len()
    );
    for line in &s.lines {
        let (who, suite) = name(&line.speaker);
        let to: Vec<String> = line.to.iter().map(|t| name(t).0).collect();
        let _ = writeln!(
            page,
            "<li><span class=\"who{}\">{} → {}</span>{}</li>",
            if suite { " suite" } else { "" },
            esc(&who),
            esc(&to.join(", ")),
            esc(&line.text)
        );
    }
    page.push_str("</ul></details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::lines::{Line, LineReport};
    use crate::report_card::metrics::metrics;
    use crate::report_card::results::{AgentResult, QuestionResult};

    fn results() -> CardResults {
        let lines = vec![
            Line::new("player_0", &["agent_001"], "Where is the <lantern>?"),
            Line::new(
                "agent_001",
                &["player_0"],
                "In the old mill </td><script>x</script>",
            ),
        ];
        let scenario = ScenarioResult {
            name: "s <1>".into(),
            restarts: 1,
            player: "player_0".into(),
            agents: vec![AgentResult {
                key: "baker".into(),
                id: "agent_001".into(),
                name: "Mira".into(),
                lines: LineReport::measure(&lines, "agent_001", "player_0", "Mira"),
                tasks: 1,
                tasks_completed: 0,
                names: 0,
                grounded: 0,
                ungrounded: vec![],
                decisions: vec![],
                nonexistent: vec!["speak: unknown agent 'agent_9'".into()],
            }],
            lines,
            questions: vec![QuestionResult {
                agent: "baker".into(),
                text: "Where is the <lantern>?".into(),
                counts_for: "memory".into(),
                after_restart: true,
                expect: vec!["old mill".into()],
                answer: Some("In the old mill </td><script>x</script>".into()),
                held: true,
                answered: true,
                tool: None,
                tool_used: None,
            }],
            help: vec![],
            turns: vec![crate::report_card::results::TurnResult {
                input: "I open the <door>.".into(),
                repairs: 1,
                first_pass: false,
                after_repair: true,
                failure: None,
                dice: vec![13],
                replays: false,
                replay_difference: Some("taken again, the turn changed the narration".into()),
                expected: vec!["move".into()],
                applied: vec!["move_options".into()],
            }],
        };
        let metrics = metrics(std::slice::from_ref(&scenario));
        CardResults {
            version: 1,
            suite: "town".into(),
            brain: "scripted".into(),
            without: vec!["memory".into()],
            seed: 1,
            time_scale: 10.0,
            started_at: "2026-01-01T00:00:00Z".into(),
            elapsed_ms: 1500,
            metrics,
            scenarios: vec![scenario],
        }
    }

    #[test]
    fn the_page_shows_the_card_and_marks_what_missed() {
        let page = render(&results());
        assert!(page.contains(html::CSP));
        assert!(!page.contains("<script>"), "markup from outside is escaped");
        assert!(page.contains("&lt;script&gt;"));
        assert!(page.contains("<tr id=\"metric-memory_after_restart\"><td class=\"l\">"));
        assert!(page.contains("<tr id=\"metric-nonexistent_calls\" class=\"missed\">"));
        assert!(page.contains("<td class=\"verdict\">missed</td>"));
        assert!(page.contains("Scenario: s &lt;1&gt; (1 restart)"));
        assert!(page.contains("<b>without</b>memory"));
        assert!(page.contains("I open the &lt;door&gt;.</td><td>1</td>"));
        assert!(page.contains(
            "<td><span class=\"bad\">no</span></td>\
             <td class=\"l\">move_options (move: <span class=\"bad\">missing</span>)</td>\
             <td class=\"l said\">taken again, the turn changed the narration</td>"
        ));
        assert!(page.contains("<tr id=\"metric-contract_expected\">"));
        assert!(page.contains("<tr id=\"metric-contract_replay\" class=\"missed\">"));
        assert!(page.contains("<tr id=\"metric-contract_first_pass\">"));
    }

    #[test]
    fn write_puts_both_files() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &results()).unwrap();
        let back: CardResults = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("results.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(back, results());
        assert!(dir.path().join("report.html").exists());
    }
}
