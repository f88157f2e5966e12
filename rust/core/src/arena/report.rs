//! `report.html`: a tournament's [`Results`] as a page a person would rather look at than read.
//!
//! One self-contained file — inline CSS and SVG, no script, nothing fetched — in six parts:
//!
//! 1. **The header**: the game, the schedule, how many games, the seed, how long it took, when it
//!    started, the anchor of the rating scale (`engine:random fixed at 1000`), the tournament's
//!    id, and the colours: brains in blue, engines in grey.
//! 2. **Strength**: each player's rating as a dot with its 95 % interval as a bar, best first, on
//!    an axis with ticks and the anchor dashed; at a house game (blackjack, the slot machine: no
//!    ratings) net chips per 100 hands as bars around zero, the baselines (the engines:
//!    `engine:basic`, `engine:stand`, `engine:spin`) drawn as dashed lines across the chart so
//!    each brain is seen against them. Then the players' table: games (hands), won, drawn
//!    (pushed), lost, forfeits, rating and interval (net chips), moves, illegal attempts and
//!    repairs per 100 moves, latency p50 and p95, tokens per move, cost.
//! 3. **Legality**: illegal attempts and repairs per 100 moves as bars per player (a sentence
//!    when there were none).
//! 4. **Latency**: per player a box plot of its moves' latencies (the box from the 25th to the
//!    75th percentile, whiskers to the fastest and the slowest, the median a dark line) over the
//!    moves themselves as dots, on a log scale when the slowest move is many times the fastest.
//! 5. **The games**: a table — number, players in seat order, result, winner, how it ended and
//!    why, plies — each row linking to its replay.
//! 6. **The replays** (`#game-N`, one `<details>` each, the first open): the start, then every
//!    move as a card — ply, player, move, latency, tokens, repairs, the illegal attempts before it
//!    with their reasons, what the player said — with the position after it drawn as a small
//!    board for tic-tac-toe, four-in-a-row, chess, checkers, mancala and sea battle (the state
//!    string itself otherwise, and whenever a string is not one it can read), and the PGN of a
//!    chess game.
//!
//! Every string that came from outside — player names, what a model said, reasons, state
//! strings — is HTML-escaped; board cells are drawn from fixed glyphs only. The page's content
//! security policy lets no script run and nothing load, should anything get past that.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::results::{GameResult, MoveRecord, PlayerKind, PlayerResult, Results, Termination};
use crate::report_html::{self as html, duration, escape as esc, trim};

/// Writes `results.json` (pretty-printed) and `report.html` into `dir`, creating it.
pub fn write(dir: &Path, results: &Results) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(results).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.json"), json + "\n")?;
    std::fs::write(dir.join("report.html"), render(results))
}

/// The page for `results`: a complete HTML document (see the module's documentation for what
/// it shows).
pub fn render(results: &Results) -> String {
    let mut page = String::with_capacity(64 * 1024);
    let title = format!("Arena: {}", results.game.replace('_', " "));
    html::open_page(&mut page, &title, STYLE);
    header(&mut page, results, &title);
    if is_house(results) {
        net_chips(&mut page, results);
    } else {
        ratings(&mut page, results);
    }
    players_table(&mut page, results);
    legality(&mut page, results);
    latency(&mut page, results);
    games_table(&mut page, results);
    replays(&mut page, results);
    html::close_page(&mut page);
    page
}

/// The arena page's own style, after [`html::BASE_STYLE`].
const STYLE: &str = r#"
.dot{display:inline-block;width:10px;height:10px;border-radius:50%;margin:0 4px 0 0}
.brain{color:var(--brain);font-weight:600}
.engine{color:var(--muted)}
svg text.brain{fill:var(--brain);font-weight:600}
svg text.engine{fill:var(--muted)}
details.replay{background:#fff;border:1px solid var(--line);border-radius:8px;margin:8px 0;
 padding:6px 12px}
.target{scroll-margin-top:44px}
.moves{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:8px;margin:8px 0}
.move{border:1px solid var(--line);border-radius:6px;padding:6px 8px;background:#fbfcfe;min-width:0}
.move.wide{grid-column:span 2}
.ply{color:var(--muted);font-size:12px;margin-right:4px}
.mv{font:600 13px ui-monospace,Menlo,Consolas,monospace;margin-left:4px}
.mm{color:var(--muted);font-size:12px}
.illegal{margin:4px 0;padding:0;list-style:none;color:var(--bad);font-size:12px}
.illegal li{border-left:3px solid var(--bad);padding-left:6px;margin:2px 0;word-break:break-word}
.said{display:block;font-style:italic;color:#3d4a5c;font-size:12px;margin:4px 0;max-height:7.5em;
 overflow:auto;white-space:pre-wrap;word-break:break-word}
.pos{margin-top:6px}
.pos code{display:block;max-height:9em;overflow:auto}
.board{display:inline-grid;vertical-align:top}
.board i{display:flex;align-items:center;justify-content:center;font-style:normal;line-height:1}
.chess,.checkers{border:1px solid #8d7a66;
 background:repeating-conic-gradient(#b58863 0 25%,#f0d9b5 0 50%) 0 0/var(--two) var(--two)}
.chess{--two:32px;grid-template-columns:repeat(8,16px);grid-auto-rows:16px;font-size:14px}
.checkers{--two:28px;grid-template-columns:repeat(8,14px);grid-auto-rows:14px}
.checkers i.w::after,.checkers i.b::after{content:"";width:10px;height:10px;border-radius:50%}
.checkers i.w::after{background:#fbf8ef;border:1px solid #6b5b4b}
.checkers i.b::after{background:#2b2b2b;border:1px solid #000}
.checkers i.k::after{box-shadow:0 0 0 2px #e0a800}
.chess i.hl,.checkers i.hl{background:rgba(255,208,0,.5)}
.ttt{grid-template-columns:repeat(3,20px);grid-auto-rows:20px;gap:1px;background:#9aa6b8;
 border:1px solid #9aa6b8}
.ttt i{background:#fff;font-size:14px;font-weight:700}
.ttt i.x{color:#c0392b}.ttt i.o{color:#1f6f8b}.ttt i.hl{background:#fff3b8}
.four{grid-template-columns:repeat(7,13px);grid-auto-rows:13px;gap:2px;padding:3px;
 background:#2f5fb3;border-radius:4px}
.four i{border-radius:50%;background:#e9eef6}
.four i.r{background:#d63b30}.four i.y{background:#f2c200}.four i.hl{box-shadow:0 0 0 2px #fff}
.mancala{grid-template-columns:repeat(8,20px);grid-template-rows:20px 20px;gap:2px;padding:3px;
 background:#9c6b3f;border-radius:10px;font-size:11px}
.mancala i{background:#ecd9bb;border-radius:50%;color:#3b2a18}
.mancala i.store{grid-row:span 2;border-radius:9px;font-weight:700}
.fleets{display:flex;gap:10px}
.fleets figure{margin:0}
.fleets figcaption{font-size:11px;color:var(--muted)}
.sea{grid-template-columns:repeat(10,8px);grid-auto-rows:8px;gap:1px;padding:1px;background:#9fc3e6}
.sea i{background:#d7e9fa}
.sea i.s{background:#6b7a8f}.sea i.h{background:#d63b30}
.sea i.m::after{content:"";width:4px;height:4px;border-radius:50%;background:#1f4f82}
"#;

/// A brain's colour in the charts.
const BRAIN: &str = "#1f5fbf";
/// An engine's colour in the charts.
const ENGINE: &str = "#8a94a6";
/// Illegal attempts' colour.
const ILLEGAL: &str = "#b3261e";
/// Repairs' colour.
const REPAIR: &str = "#e8a33d";

/// Where a chart's names end and its plot begins, the plot's width, and where the values are
/// written (right of the plot).
const PLOT_LEFT: f64 = 210.0;
const PLOT_WIDTH: f64 = 620.0;
const VALUES_X: f64 = PLOT_LEFT + PLOT_WIDTH + 18.0;
const CHART_WIDTH: f64 = VALUES_X + 230.0;

/// A name cut to fit a chart's name column (the whole name is in the element's `<title>`).
fn short(name: &str) -> String {
    const MAX: usize = 28;
    if name.chars().count() <= MAX {
        name.to_string()
    } else {
        let mut cut: String = name.chars().take(MAX - 1).collect();
        cut.push('…');
        cut
    }
}

/// Whether the tournament is a house game (blackjack, the slot machine): scores, no ratings.
fn is_house(r: &Results) -> bool {
    r.players.iter().any(|p| p.score.is_some()) || r.games.iter().any(|g| g.net.is_some())
}

fn is_brain(r: &Results, name: &str) -> bool {
    r.players
        .iter()
        .any(|p| p.name == name && p.kind == PlayerKind::Brain)
}

/// `brain` or `engine`: the CSS class of a name.
fn class_of(r: &Results, name: &str) -> &'static str {
    if is_brain(r, name) { "brain" } else { "engine" }
}

/// A name in the page's text, coloured as a brain's or an engine's.
fn who(r: &Results, name: &str) -> String {
    format!("<span class=\"{}\">{}</span>", class_of(r, name), esc(name))
}

fn colour(p: &PlayerResult) -> &'static str {
    if p.kind == PlayerKind::Brain {
        BRAIN
    } else {
        ENGINE
    }
}

/// The players best first: by rating, at a house game by net chips per 100 hands; players
/// without a number keep their order, after the others.
fn ranked(r: &Results) -> Vec<&PlayerResult> {
    let key = |p: &PlayerResult| p.rating.or(p.score.map(|s| s.net_per_100));
    let mut players: Vec<&PlayerResult> = r.players.iter().collect();
    players.sort_by(|a, b| match (key(a), key(b)) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    });
    players
}

fn header(page: &mut String, r: &Results, title: &str) {
    let anchor = match &r.anchor {
        Some(a) => format!("{} fixed at {:.0}", esc(&a.player), a.rating),
        None if is_house(r) => "none: scores, not ratings".into(),
        None => "none".into(),
    };
    let facts = [
        ("schedule", esc(&r.schedule.replace('_', " "))),
        ("games", r.games.len().to_string()),
        ("seed", r.seed.to_string()),
        ("elapsed", duration(r.elapsed_ms as f64)),
        ("started", esc(&r.started_at)),
        ("anchor", anchor),
        ("tournament", format!("<code>{}</code>", esc(&r.tournament))),
    ];
    html::facts(page, title, &facts);
    let _ = writeln!(
        page,
        "<p class=\"legend\"><span class=\"dot\" style=\"background:{BRAIN}\"></span>brain \
         &nbsp; <span class=\"dot\" style=\"background:{ENGINE}\"></span>engine</p></header>"
    );
}

/// A horizontal axis: linear, or logarithmic (base 10, for positive values).
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn linear(lo: f64, hi: f64) -> Axis {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Axis { lo, hi, log: false }
    }

    fn log(lo: f64, hi: f64) -> Axis {
        let lo = lo.max(1e-3);
        let hi = if hi > lo * 1.5 { hi } else { lo * 10.0 };
        Axis { lo, hi, log: true }
    }

    /// The x of `v` in the plot (clamped to it).
    fn x(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        PLOT_LEFT + t.clamp(0.0, 1.0) * PLOT_WIDTH
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            ticks(self.lo, self.hi)
        }
    }

    /// Grid lines from `top` to `bottom` and the ticks' labels under them.
    fn draw(&self, page: &mut String, top: f64, bottom: f64, label: impl Fn(f64) -> String) {
        for t in self.ticks() {
            let x = self.x(t);
            let _ = write!(
                page,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" \
                 stroke=\"#e3e8ef\"/><text class=\"dim\" x=\"{x:.1}\" y=\"{:.1}\" \
                 text-anchor=\"middle\">{}</text>",
                bottom + 15.0,
                label(t)
            );
        }
    }
}

/// Round ticks over `[lo, hi]`, about five (steps of 1, 2 or 5 times a power of ten).
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo).max(1e-9) / 5.0;
    let exponent = raw.log10().floor() as i32;
    let magnitude = 10f64.powi(exponent);
    let multiple = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * magnitude >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0);
    // The k-th tick as `k * multiple` scaled by a power of ten, not as a running sum: 0.3, not
    // 0.30000000000000004.
    let at = |k: f64| {
        if exponent >= 0 {
            k * multiple * magnitude
        } else {
            k * multiple / 10f64.powi(-exponent)
        }
    };
    let step = multiple * magnitude;
    let mut out = Vec::new();
    let mut k = (lo / step - 1e-9).ceil();
    while at(k) <= hi + step * 1e-9 {
        // `+ 0.0`: a tick at -0 is written 0.
        out.push(at(k) + 0.0);
        k += 1.0;
    }
    out
}

/// Ticks of a log axis over `[lo, hi]`: the powers of ten, and 2 and 5 times them when the
/// range spans fewer than three decades.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let few = (hi / lo).log10() < 3.0;
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if (m == 1.0 || few) && t >= lo * 0.999 && t <= hi * 1.001 {
                out.push(t);
            }
        }
        decade *= 10.0;
    }
    out
}

/// The name column of a chart's row: the (cut) name, coloured, with the whole name as a title.
fn row_name(page: &mut String, r: &Results, name: &str, y: f64, note: &str) {
    let _ = write!(
        page,
        "<text class=\"{}\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\"><title>{}</title>{}{}\
         </text>",
        class_of(r, name),
        PLOT_LEFT - 12.0,
        y + 4.0,
        esc(name),
        esc(&short(name)),
        note
    );
}

/// The ratings with their 95 % intervals, best first.
/// A chart of one row per player over an [`Axis`]: its panel and SVG, the axis's grid, each
/// row's place, and a caption under the axis (charts without one end with [`Frame::end`]).
struct Frame {
    axis: Axis,
    row: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    /// Opens the panel and the SVG `id` (`label` for assistive technology), `rows` rows of
    /// `row` pixels from `top`, `foot` pixels under them, and draws the grid with `tick`'s
    /// labels.
    fn open(
        page: &mut String,
        id: &str,
        label: &str,
        axis: Axis,
        (rows, row, top, foot): (usize, f64, f64, f64),
        tick: impl Fn(f64) -> String,
    ) -> Frame {
        let bottom = top + row * rows as f64;
        let height = bottom + foot;
        let _ = write!(
            page,
            "<div class=\"panel\"><svg id=\"{id}\" viewBox=\"0 0 {CHART_WIDTH} {height}\" \
             width=\"{CHART_WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{label}\">"
        );
        axis.draw(page, top, bottom, tick);
        Frame {
            axis,
            row,
            top,
            bottom,
        }
    }

    /// The middle of row `i`.
    fn y(&self, i: usize) -> f64 {
        self.top + self.row * (i as f64 + 0.5)
    }

    /// Ends the chart with `caption` (HTML) centred under the axis.
    fn caption(&self, page: &mut String, caption: &str) {
        let _ = write!(
            page,
            "<text class=\"dim\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{caption}</text>",
            PLOT_LEFT + PLOT_WIDTH / 2.0,
            self.bottom + 34.0
        );
        Frame::end(page);
    }

    /// Ends the chart.
    fn end(page: &mut String) {
        page.push_str("</svg></div>\n");
    }
}

fn ratings(page: &mut String, r: &Results) {
    page.push_str("<h2>Ratings, with their 95 % intervals</h2>\n");
    let rows: Vec<(&PlayerResult, f64, f64, f64)> = ranked(r)
        .into_iter()
        .filter_map(|p| {
            let rating = p.rating?;
            let [lo, hi] = p.rating_ci95.unwrap_or([rating, rating]);
            Some((p, rating, lo.min(rating), hi.max(rating)))
        })
        .collect();
    if rows.is_empty() {
        page.push_str("<p class=\"note\">No ratings: no game was played.</p>\n");
        return;
    }
    let lo = rows.iter().map(|v| v.2).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|v| v.3).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.06).max(20.0);
    let chart = Frame::open(
        page,
        "strength",
        "ratings",
        Axis::linear(lo - pad, hi + pad),
        (rows.len(), 30.0, 8.0, 42.0),
        |t| format!("{t:.0}"),
    );
    let (axis, top, bottom) = (&chart.axis, chart.top, chart.bottom);
    if let Some(a) = &r.anchor {
        let x = axis.x(a.rating);
        let _ = write!(
            page,
            "<line class=\"anchor\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" \
             y2=\"{bottom:.1}\" stroke=\"#5a6478\" stroke-dasharray=\"4 3\"><title>the anchor: {} \
             fixed at {:.0}</title></line>",
            esc(&a.player),
            a.rating
        );
    }
    for (i, (p, rating, a, b)) in rows.iter().enumerate() {
        let y = chart.y(i);
        row_name(page, r, &p.name, y, "");
        let c = colour(p);
        let shown = format!("{rating:.0} [{a:.0}, {b:.0}]");
        let _ = write!(
            page,
            "<line class=\"ci\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" \
             stroke=\"{c}\" stroke-width=\"8\" stroke-opacity=\"0.35\" stroke-linecap=\"round\"/>\
             <circle class=\"rating\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"6.5\" fill=\"{c}\" \
             stroke=\"#fff\" stroke-width=\"1.5\"><title>{}: {shown}</title></circle>\
             <text x=\"{VALUES_X:.1}\" y=\"{:.1}\">{shown}</text>",
            axis.x(*a),
            axis.x(*b),
            axis.x(*rating),
            esc(&p.name),
            y + 4.0,
        );
    }
    chart.caption(
        page,
        "rating, Elo scale (400 points: odds of 10 to 1); dashed: the anchor",
    );
}

/// A house game's scores: net chips per 100 hands as bars around zero, the baselines dashed.
fn net_chips(page: &mut String, r: &Results) {
    page.push_str("<h2>Net chips per 100 hands</h2>\n");
    let rows: Vec<(&PlayerResult, f64)> = ranked(r)
        .into_iter()
        .filter_map(|p| Some((p, p.score?.net_per_100)))
        .collect();
    if rows.is_empty() {
        page.push_str("<p class=\"note\">No scores: no hand was played.</p>\n");
        return;
    }
    let lo = rows.iter().map(|v| v.1).fold(0.0, f64::min);
    let hi = rows.iter().map(|v| v.1).fold(0.0, f64::max);
    let pad = ((hi - lo) * 0.08).max(5.0);
    let chart = Frame::open(
        page,
        "strength",
        "net chips",
        Axis::linear(lo - pad, hi + pad),
        (rows.len(), 30.0, 8.0, 42.0),
        |t| {
            if t == 0.0 {
                "0".into()
            } else {
                format!("{t:+.0}")
            }
        },
    );
    let (axis, top, bottom) = (&chart.axis, chart.top, chart.bottom);
    let zero = axis.x(0.0);
    let _ = write!(
        page,
        "<line x1=\"{zero:.1}\" x2=\"{zero:.1}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\" \
         stroke=\"#1d2433\"/>"
    );
    // The baselines across the whole chart, under the bars.
    for (p, net) in rows.iter().filter(|(p, _)| p.kind == PlayerKind::Engine) {
        let x = axis.x(*net);
        let _ = write!(
            page,
            "<line class=\"baseline\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" \
             y2=\"{bottom:.1}\" stroke=\"{ENGINE}\" stroke-width=\"1.5\" \
             stroke-dasharray=\"5 3\"><title>baseline {}: {net:+.1}</title></line>",
            esc(&p.name)
        );
    }
    for (i, (p, net)) in rows.iter().enumerate() {
        let y = chart.y(i);
        let baseline = p.kind == PlayerKind::Engine;
        row_name(
            page,
            r,
            &p.name,
            y,
            if baseline { " (baseline)" } else { "" },
        );
        let (a, b) = (axis.x(net.min(0.0)), axis.x(net.max(0.0)));
        let end = axis.x(*net);
        let score = p.score.unwrap_or_default();
        let _ = write!(
            page,
            "<rect class=\"bar\" x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"16\" \
             fill=\"{c}\" fill-opacity=\"0.8\"/><rect x=\"{:.1}\" y=\"{:.1}\" width=\"3\" \
             height=\"20\" fill=\"{c}\"><title>{}: {net:+.1} per 100 hands</title></rect>\
             <text x=\"{VALUES_X:.1}\" y=\"{:.1}\">{net:+.1} <tspan class=\"dim\">({} hands, \
             net {:+})</tspan></text>",
            y - 8.0,
            (b - a).max(0.0),
            end - 1.5,
            y - 10.0,
            esc(&p.name),
            y + 4.0,
            score.hands,
            score.net_chips,
            c = colour(p),
        );
    }
    chart.caption(
        page,
        "net chips per 100 hands (every player dealt the same hands); dashed: the baselines",
    );
}

fn players_table(page: &mut String, r: &Results) {
    let house = is_house(r);
    let (games, won, drawn, lost, strength) = if house {
        (
            "hands",
            "won",
            "pushed",
            "lost",
            "<th>net chips</th><th>net / 100 hands</th>",
        )
    } else {
        ("games", "W", "D", "L", "<th>rating [95 % CI]</th>")
    };
    let _ = writeln!(
        page,
        "<div class=\"scroll\"><table id=\"players\"><tr><th class=\"l\">player</th><th>{games}</th><th>{won}</th>\
         <th>{drawn}</th><th>{lost}</th><th>forfeits</th>{strength}<th>moves</th>\
         <th>illegal / 100 moves</th><th>repairs / 100 moves</th><th>latency p50</th>\
         <th>p95</th><th>tokens / move</th><th>cost</th></tr>"
    );
    for p in ranked(r) {
        let strength = if house {
            match p.score {
                Some(s) => format!("<td>{:+}</td><td>{:+.1}</td>", s.net_chips, s.net_per_100),
                None => "<td>–</td><td>–</td>".into(),
            }
        } else {
            match (p.rating, p.rating_ci95) {
                (Some(x), Some([lo, hi])) => format!("<td>{x:.0} [{lo:.0}, {hi:.0}]</td>"),
                (Some(x), None) => format!("<td>{x:.0}</td>"),
                _ => "<td>–</td>".into(),
            }
        };
        let cost = p.cost_usd.map_or("–".into(), |c| format!("${c:.4}"));
        let bad = |x: f64| if x > 0.0 { " class=\"bad\"" } else { "" };
        let (p50, p95) = if p.moves == 0 {
            ("–".to_string(), "–".to_string())
        } else {
            (duration(p.latency_ms.p50), duration(p.latency_ms.p95))
        };
        let _ = writeln!(
            page,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td{}>{}</td>{strength}<td>{}</td><td{}>{:.1}</td><td{}>{:.1}</td><td>{p50}</td>\
             <td>{p95}</td><td>{:.0}</td><td>{cost}</td></tr>",
            who(r, &p.name),
            p.games,
            p.wins,
            p.draws,
            p.losses,
            bad(f64::from(p.forfeits)),
            p.forfeits,
            p.moves,
            bad(p.illegal_per_100_moves),
            p.illegal_per_100_moves,
            bad(p.repairs_per_100_moves),
            p.repairs_per_100_moves,
            p.tokens.per_move
        );
    }
    page.push_str("</table></div>\n");
}

/// Illegal attempts and repairs per 100 moves, two bars per player.
fn legality(page: &mut String, r: &Results) {
    page.push_str("<h2>Illegal attempts and repairs per 100 moves</h2>\n");
    let players = ranked(r);
    if players.iter().all(|p| p.moves == 0) {
        page.push_str("<p class=\"note\">No moves were made.</p>\n");
        return;
    }
    if players
        .iter()
        .all(|p| p.illegal_moves == 0 && p.repairs == 0)
    {
        page.push_str(
            "<p class=\"note\">None: every move was legal at the first attempt, and no answer \
             was sent back for repair.</p>\n",
        );
        return;
    }
    let max = players
        .iter()
        .map(|p| p.illegal_per_100_moves.max(p.repairs_per_100_moves))
        .fold(1.0, f64::max);
    let chart = Frame::open(
        page,
        "legality",
        "illegal attempts and repairs",
        Axis::linear(0.0, max * 1.08),
        (players.len(), 40.0, 6.0, 24.0),
        trim,
    );
    let (axis, top, row) = (&chart.axis, chart.top, chart.row);
    for (i, p) in players.iter().enumerate() {
        let y = top + row * i as f64 + 4.0;
        row_name(page, r, &p.name, y + 12.0, "");
        for (k, (rate, count, fill, what)) in [
            (p.illegal_per_100_moves, p.illegal_moves, ILLEGAL, "illegal"),
            (p.repairs_per_100_moves, p.repairs, REPAIR, "repairs"),
        ]
        .into_iter()
        .enumerate()
        {
            let yy = y + 15.0 * k as f64;
            let w = axis.x(rate) - PLOT_LEFT;
            let _ = write!(
                page,
                "<rect class=\"{what}\" x=\"{PLOT_LEFT}\" y=\"{yy:.1}\" width=\"{:.1}\" \
                 height=\"12\" fill=\"{fill}\"/><text x=\"{VALUES_X:.1}\" y=\"{:.1}\">{rate:.1} \
                 {what} <tspan class=\"dim\">({count} in {} moves)</tspan></text>",
                w.max(1.0),
                yy + 10.0,
                p.moves
            );
        }
    }
    Frame::end(page);
}

/// The latencies of a player's moves (entries without a move left out), sorted.
fn latencies(r: &Results, name: &str) -> Vec<f64> {
    let mut all: Vec<f64> = r
        .games
        .iter()
        .flat_map(|g| g.moves.iter())
        .filter(|m| m.player == name && !m.mv.is_null())
        .map(|m| m.latency_ms as f64)
        .collect();
    all.sort_by(f64::total_cmp);
    all
}

/// The `q` quantile of sorted `values` by the nearest rank, as the players' table computes it.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Whether latencies from `fastest` to `slowest` are better seen on a log scale: the slowest
/// at least 30 times the fastest (the fastest counted as at least 1 ms).
fn wide_spread(fastest: f64, slowest: f64) -> bool {
    slowest >= 30.0 * fastest.max(1.0)
}

/// Per player a box plot over the dots of its moves' latencies.
fn latency(page: &mut String, r: &Results) {
    page.push_str("<h2>Latency per move</h2>\n");
    let players = ranked(r);
    let per: Vec<(&PlayerResult, Vec<f64>)> = players
        .iter()
        .map(|p| (*p, latencies(r, &p.name)))
        .collect();
    let all: Vec<f64> = per.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    if all.is_empty() {
        page.push_str("<p class=\"note\">No moves were made.</p>\n");
        return;
    }
    let fastest = all.iter().copied().fold(f64::INFINITY, f64::min);
    let slowest = all.iter().copied().fold(0.0, f64::max);
    let log = wide_spread(fastest, slowest);
    let axis = if log {
        Axis::log(1.0, slowest * 1.15)
    } else {
        Axis::linear(0.0, (slowest * 1.08).max(1.0))
    };
    // On a log scale the moves faster than 1 ms (an engine's 0 ms) are drawn at 1 ms.
    let chart = Frame::open(
        page,
        "latency",
        "latency",
        axis,
        (per.len(), 34.0, 6.0, 42.0),
        |t| {
            if log && t <= 1.0 {
                "≤ 1 ms".into()
            } else {
                duration(t)
            }
        },
    );
    let axis = &chart.axis;
    for (i, (p, values)) in per.iter().enumerate() {
        let y = chart.y(i);
        row_name(page, r, &p.name, y, "");
        if values.is_empty() {
            let _ = write!(
                page,
                "<text class=\"dim\" x=\"{:.1}\" y=\"{:.1}\">no moves</text>",
                PLOT_LEFT + 4.0,
                y + 4.0
            );
            continue;
        }
        let c = colour(p);
        let [q25, q50, q75] = [0.25, 0.5, 0.75].map(|q| axis.x(quantile(values, q)));
        let (min, max) = (axis.x(values[0]), axis.x(values[values.len() - 1]));
        let _ = write!(
            page,
            "<line x1=\"{min:.1}\" x2=\"{max:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{c}\" \
             stroke-width=\"1.5\"/><rect class=\"box\" x=\"{q25:.1}\" y=\"{:.1}\" \
             width=\"{:.1}\" height=\"20\" fill=\"{c}\" fill-opacity=\"0.18\" stroke=\"{c}\"/>",
            y - 10.0,
            (q75 - q25).max(1.0)
        );
        for (k, v) in values.iter().enumerate() {
            // A fixed jitter, so that equal latencies do not hide one another.
            let dy = ((k * 37) % 13) as f64 - 6.0;
            let _ = write!(
                page,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.4\" fill=\"{c}\" fill-opacity=\"0.55\"/>",
                axis.x(*v),
                y + dy
            );
        }
        let _ = write!(
            page,
            "<line class=\"median\" x1=\"{q50:.1}\" x2=\"{q50:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" \
             stroke=\"#1d2433\" stroke-width=\"2.5\"/><text x=\"{VALUES_X:.1}\" y=\"{:.1}\">\
             p50 {} · p95 {} <tspan class=\"dim\">({} moves)</tspan></text>",
            y - 12.0,
            y + 12.0,
            y + 4.0,
            duration(p.latency_ms.p50),
            duration(p.latency_ms.p95),
            values.len()
        );
    }
    chart.caption(
        page,
        &format!(
            "time per move{}; box: 25th to 75th percentile, dark line: the median, whiskers: \
             fastest to slowest",
            if log { " (log scale)" } else { "" }
        ),
    );
}

/// How a game ended, and why when not by the rules.
fn ending(g: &GameResult) -> String {
    let how = match g.termination {
        Termination::Normal => return "normal".into(),
        Termination::Forfeit => "forfeit",
        Termination::Time => "time",
        Termination::MaxPlies => "ply limit",
        Termination::Error => "error",
    };
    let why = g
        .reason
        .as_deref()
        .map_or(String::new(), |why| format!(": {}", esc(why)));
    format!("<span class=\"bad\">{how}{why}</span>")
}

fn games_table(page: &mut String, r: &Results) {
    page.push_str("<h2>Games</h2>\n");
    if r.games.is_empty() {
        page.push_str("<p class=\"note\">No games were played.</p>\n");
        return;
    }
    let house = is_house(r);
    page.push_str(if house {
        "<div class=\"scroll\"><table id=\"games\"><tr><th>#</th><th class=\"l\">player</th>\
         <th>net chips</th><th class=\"l\">ended</th><th>actions</th><th class=\"l\">replay</th>\
         </tr>\n"
    } else {
        "<div class=\"scroll\"><table id=\"games\"><tr><th>#</th><th class=\"l\">players (seat \
         order)</th><th>result</th><th class=\"l\">winner</th><th class=\"l\">ended</th>\
         <th>plies</th><th class=\"l\">replay</th></tr>\n"
    });
    for g in &r.games {
        let players: Vec<String> = g.players.iter().map(|p| who(r, p)).collect();
        let winner = if house {
            String::new()
        } else {
            let name = match (&g.winner, g.termination) {
                (Some(w), _) => who(r, w),
                (None, Termination::Error) => "–".into(),
                (None, _) => "draw".into(),
            };
            format!("<td class=\"l\">{name}</td>")
        };
        let _ = writeln!(
            page,
            "<tr><td><a href=\"#game-{0}\">{0}</a></td><td class=\"l\">{1}</td><td>{2}</td>\
             {winner}<td class=\"l\">{3}</td><td>{4}</td><td class=\"l\"><a href=\"#game-{0}\">\
             replay</a></td></tr>",
            g.index,
            players.join(" – "),
            esc(&g.result),
            ending(g),
            g.plies
        );
    }
    page.push_str("</table></div>\n");
}

fn replays(page: &mut String, r: &Results) {
    if r.games.is_empty() {
        return;
    }
    page.push_str("<h2>Replays</h2>\n");
    let (one, many) = if is_house(r) {
        ("action", "actions")
    } else {
        ("ply", "plies")
    };
    for (i, g) in r.games.iter().enumerate() {
        let players: Vec<String> = g.players.iter().map(|p| who(r, p)).collect();
        // The first is open: one replay is seen without a click. The anchor is inside the
        // replay, not on it: following a link to it opens it (the details' content is revealed).
        let open = if i == 0 { " open" } else { "" };
        let _ = writeln!(
            page,
            "<details class=\"replay\"{open}><summary>Game {0}: {1} · {2} · {3} · {4} {5}\
             </summary><p class=\"note target\" id=\"game-{0}\">seed <code>{6}</code></p>\
             <div class=\"moves\">",
            g.index,
            players.join(" – "),
            esc(&g.result),
            ending(g),
            g.plies,
            if g.plies == 1 { one } else { many },
            esc(&g.seed),
        );
        start_card(page, g);
        for m in &g.moves {
            move_card(page, r, g, m);
        }
        page.push_str("</div>\n");
        if g.moves.is_empty() {
            page.push_str("<p class=\"note\">No moves.</p>\n");
        }
        if let Some(pgn) = &g.pgn {
            let _ = writeln!(page, "<pre class=\"pgn\">{}</pre>", esc(pgn.trim_end()));
        }
        page.push_str("</details>\n");
    }
}

/// The card of the starting position.
fn start_card(page: &mut String, g: &GameResult) {
    let (drawn, wide) = position(&g.game, &g.start, &Value::Null);
    let _ = writeln!(
        page,
        "<div class=\"move{}\"><span class=\"ply\">start</span><div class=\"pos\">{drawn}</div>\
         </div>",
        if wide { " wide" } else { "" }
    );
}

/// One move's card: who, what, how fast, at what cost, what went wrong before it, what the
/// player said, and the position after it.
fn move_card(page: &mut String, r: &Results, g: &GameResult, m: &MoveRecord) {
    let mv = match &m.mv {
        Value::Null => "<span class=\"bad\">no move</span>".to_string(),
        Value::String(s) => esc(s),
        other => esc(&other.to_string()),
    };
    let mut meta = vec![duration(m.latency_ms as f64)];
    let tokens = m.input_tokens + m.output_tokens;
    if tokens > 0 {
        meta.push(format!("{tokens} tokens"));
    }
    if m.repairs > 0 {
        meta.push(format!(
            "<span class=\"bad\">{} repair{}</span>",
            m.repairs,
            if m.repairs == 1 { "" } else { "s" }
        ));
    }
    let (drawn, wide) = position(&g.game, &m.state, &m.mv);
    let _ = write!(
        page,
        "<div class=\"move{}\"><div><span class=\"ply\">{}</span>{}<span class=\"mv\">{mv}\
         </span></div><div class=\"mm\">{}</div>",
        if wide { " wide" } else { "" },
        m.ply,
        who(r, &m.player),
        meta.join(" · ")
    );
    if !m.illegal.is_empty() {
        page.push_str("<ul class=\"illegal\">");
        for attempt in &m.illegal {
            let _ = write!(page, "<li>{}</li>", esc(attempt));
        }
        page.push_str("</ul>");
    }
    if !m.text.trim().is_empty() {
        let _ = write!(page, "<q class=\"said\">{}</q>", esc(m.text.trim()));
    }
    let _ = writeln!(page, "<div class=\"pos\">{drawn}</div></div>");
}

/// A position: drawn as a small board where the game's state string is simple to draw (the
/// squares of `mv`, the move that led to it, marked), else the string itself; and whether it
/// wants a wide card (a long string).
fn position(game: &str, state: &str, mv: &Value) -> (String, bool) {
    let mv = match mv {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    let drawn = match game {
        "tic_tac_toe" => tic_tac_toe(state, &mv),
        "four_in_a_row" => four_in_a_row(state, &mv),
        "chess" => chess(state, &squares(&mv)),
        "checkers" => checkers(state, &squares(&mv)),
        "mancala" => mancala(state),
        "sea_battle" => sea_battle(state),
        _ => None,
    };
    match drawn {
        Some(board) => (board, false),
        None => (
            format!("<code>{}</code>", esc(state)),
            state.chars().count() > 60,
        ),
    }
}

/// The `KEY:` part of a `|`-separated state string.
fn field<'a>(state: &'a str, key: &str) -> Option<&'a str> {
    state
        .split('|')
        .find_map(|part| part.strip_prefix(key)?.strip_prefix(':'))
}

/// The squares a move names, as (row from the top, column), for boards of 8 ranks: `e2e4` → e2
/// and e4; `a3c5a7` (a checkers jump) every square on its way.
fn squares(mv: &str) -> Vec<(usize, usize)> {
    let b = mv.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        if (b'a'..=b'h').contains(&b[i]) && (b'1'..=b'8').contains(&b[i + 1]) {
            out.push((usize::from(b'8' - b[i + 1]), usize::from(b[i] - b'a')));
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

/// A board of `rows` (each `width` cells, every one known to `cell`), as a CSS grid of the class
/// `kind`, the cells of `marks` (row, column) highlighted; `None` when a row has the wrong
/// length or a cell is unknown.
fn grid(
    kind: &str,
    rows: &[&str],
    width: usize,
    marks: &[(usize, usize)],
    cell: impl Fn(char) -> Option<(&'static str, &'static str)>,
) -> Option<String> {
    let mut out = format!("<div class=\"board {kind}\">");
    for (r, row) in rows.iter().enumerate() {
        if row.chars().count() != width {
            return None;
        }
        for (c, piece) in row.chars().enumerate() {
            let (class, shown) = cell(piece)?;
            let class = match (class, marks.contains(&(r, c))) {
                ("", false) => String::new(),
                ("", true) => " class=\"hl\"".into(),
                (class, false) => format!(" class=\"{class}\""),
                (class, true) => format!(" class=\"{class} hl\""),
            };
            let _ = write!(out, "<i{class}>{shown}</i>");
        }
    }
    out.push_str("</div>");
    Some(out)
}

/// `G:X../.O./...|T:…`: three rows of three; a move `C3` is column C, row 3 from the top.
fn tic_tac_toe(state: &str, mv: &str) -> Option<String> {
    let rows: Vec<&str> = field(state, "G")?.split('/').collect();
    if rows.len() != 3 {
        return None;
    }
    let mark: Vec<(usize, usize)> = match mv.as_bytes() {
        [c @ b'A'..=b'C', r @ b'1'..=b'3'] => vec![(usize::from(r - b'1'), usize::from(c - b'A'))],
        _ => Vec::new(),
    };
    grid("ttt", &rows, 3, &mark, |c| match c {
        'X' => Some(("x", "✕")),
        'O' => Some(("o", "◯")),
        '.' => Some(("", "")),
        _ => None,
    })
}

/// `G:<6 rows of 7, top first>|T:…`: `R` and `Y` discs; a move is a column (1 to 7), its disc
/// the highest in it.
fn four_in_a_row(state: &str, mv: &str) -> Option<String> {
    let rows: Vec<&str> = field(state, "G")?.split('/').collect();
    if rows.len() != 6 {
        return None;
    }
    let mark: Vec<(usize, usize)> = mv
        .parse::<usize>()
        .ok()
        .filter(|c| (1..=7).contains(c))
        .and_then(|c| {
            let row = rows
                .iter()
                .position(|r| r.as_bytes().get(c - 1).is_some_and(|b| *b != b'.'))?;
            Some((row, c - 1))
        })
        .into_iter()
        .collect();
    grid("four", &rows, 7, &mark, |c| match c {
        'R' => Some(("r", "")),
        'Y' => Some(("y", "")),
        '.' => Some(("", "")),
        _ => None,
    })
}

/// A FEN's board, rank 8 first, in Unicode pieces.
fn chess(fen: &str, marks: &[(usize, usize)]) -> Option<String> {
    let board = fen.split_whitespace().next()?;
    let mut rows = Vec::new();
    for rank in board.split('/') {
        let mut row = String::new();
        for c in rank.chars() {
            match c.to_digit(10) {
                Some(n @ 1..=8) => row.extend(std::iter::repeat_n('.', n as usize)),
                Some(_) => return None,
                None => row.push(c),
            }
        }
        rows.push(row);
    }
    if rows.len() != 8 {
        return None;
    }
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    grid("chess", &rows, 8, marks, |c| {
        Some((
            "",
            match c {
                'K' => "♔",
                'Q' => "♕",
                'R' => "♖",
                'B' => "♗",
                'N' => "♘",
                'P' => "♙",
                'k' => "♚",
                'q' => "♛",
                'r' => "♜",
                'b' => "♝",
                'n' => "♞",
                'p' => "♟",
                '.' => "",
                _ => return None,
            },
        ))
    })
}

/// `<8 rows of 8, top first> <side>`: `w`/`b` men, `W`/`B` kings (a gold ring).
fn checkers(state: &str, marks: &[(usize, usize)]) -> Option<String> {
    let rows: Vec<&str> = state.split_whitespace().next()?.split('/').collect();
    if rows.len() != 8 {
        return None;
    }
    grid("checkers", &rows, 8, marks, |c| match c {
        'w' => Some(("w", "")),
        'W' => Some(("w k", "")),
        'b' => Some(("b", "")),
        'B' => Some(("b k", "")),
        '.' => Some(("", "")),
        _ => None,
    })
}

/// `P:<6 pits>|O:<6 pits>|PS:<store>|OS:<store>|…`: the first seat's pits below, left to
/// right; the second's above, right to left; each store at its owner's end.
fn mancala(state: &str) -> Option<String> {
    let pits = |key| -> Option<Vec<u32>> {
        let pits: Vec<u32> = field(state, key)?
            .split(',')
            .map(|p| p.trim().parse().ok())
            .collect::<Option<_>>()?;
        (pits.len() == 6).then_some(pits)
    };
    let (player, opponent) = (pits("P")?, pits("O")?);
    let ps: u32 = field(state, "PS")?.parse().ok()?;
    let os: u32 = field(state, "OS")?.parse().ok()?;
    // The grid places in order: the left store (both rows), the top row, the right store, and
    // the bottom row in the columns left free.
    let mut out = format!("<div class=\"board mancala\"><i class=\"store\">{os}</i>");
    for pit in opponent.iter().rev() {
        let _ = write!(out, "<i>{pit}</i>");
    }
    let _ = write!(out, "<i class=\"store\">{ps}</i>");
    for pit in &player {
        let _ = write!(out, "<i>{pit}</i>");
    }
    out.push_str("</div>");
    Some(out)
}

/// `P:<10 rows of 10>|O:<10 rows of 10>|…`: both fleets, ships `S`, hits `H`, misses `M`.
fn sea_battle(state: &str) -> Option<String> {
    let fleet = |key| -> Option<String> {
        let rows: Vec<&str> = field(state, key)?.split('/').collect();
        if rows.len() != 10 {
            return None;
        }
        grid("sea", &rows, 10, &[], |c| match c {
            'S' => Some(("s", "")),
            'H' => Some(("h", "")),
            'M' => Some(("m", "")),
            '.' => Some(("", "")),
            _ => None,
        })
    };
    Some(format!(
        "<div class=\"fleets\"><figure>{}<figcaption>first seat's fleet</figcaption></figure><figure>{}\
         <figcaption>second seat's fleet</figcaption></figure></div>",
        fleet("P")?,
        fleet("O")?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::results::{HouseScore, Latency, Tokens};
    use serde_json::json;

    /// A chess round robin of a brain (`gemma-3-1b`) and two engines, `engine:random` the
    /// anchor, as `agents-server arena` writes it, with illegal attempts whose reasons and a
    /// brain's line that carry markup (`<script>`, `</td>`).
    fn chess() -> Results {
        serde_json::from_str(include_str!("../../tests/fixtures/arena_results.json")).unwrap()
    }

    /// A blackjack tournament: a brain and the two baselines, a hand each.
    fn blackjack() -> Results {
        let player = |name: &str, kind, net: i64| PlayerResult {
            name: name.into(),
            kind,
            games: 1,
            wins: u32::from(net > 0),
            draws: u32::from(net == 0),
            losses: u32::from(net < 0),
            forfeits: 0,
            rating: None,
            rating_ci95: None,
            moves: 1,
            illegal_moves: 0,
            illegal_per_100_moves: 0.0,
            repairs: 0,
            repairs_per_100_moves: 0.0,
            latency_ms: Latency {
                p50: 3.0,
                p95: 3.0,
                max: 3.0,
            },
            tokens: Tokens::default(),
            cost_usd: None,
            score: Some(HouseScore {
                hands: 1,
                net_chips: net,
                net_per_100: net as f64 * 100.0,
            }),
        };
        let hand = |index: u32, name: &str, net: i64| {
            GameResult {
            index,
            game: "blackjack".into(),
            players: vec![name.into()],
            result: format!("{net:+}"),
            winner: None,
            termination: Termination::Normal,
            reason: None,
            seed: format!("1:{index}:0"),
            plies: 1,
            start: r#"{"game":"blackjack","hands":[{"cards":["9D","TS"],"total":19}],"dealerUpCard":"AH"}"#.into(),
            end: String::new(),
            pgn: None,
            net: Some(net),
            moves: vec![MoveRecord {
                ply: 1,
                player: name.into(),
                mv: json!("stand"),
                state: r#"{"game":"blackjack","lastAction":"stand","net":10,"note":"<i>won</i>"}"#
                    .into(),
                latency_ms: 3,
                input_tokens: 0,
                output_tokens: 0,
                repairs: 0,
                illegal: Vec::new(),
                text: String::new(),
            }],
        }
        };
        Results {
            version: 1,
            tournament: "arena-2".into(),
            game: "blackjack".into(),
            schedule: "round_robin".into(),
            seed: 1,
            started_at: "2026-11-29T00:00:00.000Z".into(),
            elapsed_ms: 400,
            anchor: None,
            players: vec![
                player("engine:basic", PlayerKind::Engine, 0),
                player("scripted", PlayerKind::Brain, -10),
                player("engine:stand", PlayerKind::Engine, -20),
            ],
            games: vec![
                hand(1, "scripted", -10),
                hand(2, "engine:basic", 0),
                hand(3, "engine:stand", -20),
            ],
        }
    }

    /// Checks that every element opened is closed in order (void elements and `/>` aside), the
    /// style sheet skipped; panics naming the first mismatch.
    fn assert_well_formed(page: &str) {
        const VOID: &[&str] = &["meta", "br", "hr", "img", "input", "link", "col"];
        assert!(page.starts_with("<!DOCTYPE html>"));
        let body = page.split("</style>").nth(1).expect("a style sheet");
        let mut open: Vec<String> = vec!["html".into(), "head".into()];
        let mut rest = body;
        while let Some(at) = rest.find('<') {
            let end = rest[at..].find('>').expect("a tag is closed") + at;
            let tag = &rest[at + 1..end];
            rest = &rest[end + 1..];
            assert!(!tag.contains('<'), "a '<' inside a tag: {tag}");
            if let Some(name) = tag.strip_prefix('/') {
                let top = open
                    .pop()
                    .unwrap_or_else(|| panic!("</{name}> closes nothing"));
                assert_eq!(top, name, "</{name}> closes <{top}>");
            } else if !tag.ends_with('/') {
                let name: String = tag
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                assert!(!name.is_empty(), "a tag without a name: <{tag}>");
                if !VOID.contains(&name.as_str()) {
                    open.push(name);
                }
            }
        }
        assert!(open.is_empty(), "left open: {open:?}");
    }

    /// Every `href="#x"` has an element `id="x"`, and no id is used twice.
    fn assert_links_resolve(page: &str) {
        let ids: Vec<&str> = page
            .split(" id=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "an id used twice: {ids:?}");
        for link in page.split("href=\"#").skip(1) {
            let target = &link[..link.find('"').unwrap()];
            assert!(ids.contains(&target), "#{target} has no element");
        }
    }

    #[test]
    fn the_page_shows_every_player_with_rating_and_interval_best_first() {
        let results = chess();
        let page = render(&results);
        assert_well_formed(&page);
        for p in &results.players {
            let [lo, hi] = p.rating_ci95.unwrap();
            let shown = format!("{:.0} [{lo:.0}, {hi:.0}]", p.rating.unwrap());
            // In the chart and in the table.
            assert!(page.matches(&shown).count() >= 2, "{shown}");
            assert!(page.contains(&esc(&p.name)));
        }
        assert!(page.contains("1136 [1000, 1338]"));
        let chart = &page[page.find("id=\"strength\"").unwrap()..];
        let chart = &chart[..chart.find("</svg>").unwrap()];
        assert_eq!(chart.matches("class=\"rating\"").count(), 3);
        assert_eq!(chart.matches("class=\"ci\"").count(), 3);
        let at = |name: &str| chart.find(&format!("<title>{name}: ")).unwrap();
        assert!(at("gemma-3-1b") < at("engine:easy") && at("engine:easy") < at("engine:random"));
        assert!(chart.contains("class=\"anchor\""), "the anchor is dashed");
        assert!(page.contains("engine:random fixed at 1000"));
        for fact in [
            "round robin",
            "<b>games</b>3",
            "<b>seed</b>3",
            "2026-11-29T01:21:57",
        ] {
            assert!(page.contains(fact), "{fact}");
        }
        // Latencies from a third of a second to eight: a log scale.
        assert!(page.contains("time per move (log scale)"));
        assert!(page.contains(">≤ 1 ms</text>") && page.contains(">1 s</text>"));
        assert!(page.contains("$0.0038"), "the brain's cost");
    }

    #[test]
    fn every_game_links_to_its_replay_and_the_replays_hold_the_moves() {
        let results = chess();
        let page = render(&results);
        assert_links_resolve(&page);
        for g in &results.games {
            let n = g.index;
            assert!(page.contains(&format!("<a href=\"#game-{n}\">{n}</a>")));
            let at = page.find(&format!("id=\"game-{n}\"")).unwrap();
            let replay = &page[at..at + page[at..].find("</details>").unwrap()];
            // The start and one card per move, each with a board.
            assert_eq!(
                replay.matches("<div class=\"move\">").count(),
                g.moves.len() + 1
            );
            assert_eq!(
                replay.matches("board chess").count(),
                g.moves.len() + 1,
                "game {n}"
            );
            assert!(replay.contains("class=\"pgn\""));
            assert!(replay.contains("[White &quot;"));
        }
        assert_eq!(page.matches("<details").count(), results.games.len());
        assert_eq!(
            page.matches(" open>").count(),
            1,
            "the first replay is open"
        );
        assert!(page.contains("<span class=\"ply\">5</span>"));
        assert!(page.contains("1 repair</span>") && page.contains("2 repairs</span>"));
        assert!(page.contains("ply limit: 30 plies"));
    }

    #[test]
    fn what_players_and_models_wrote_is_escaped() {
        let mut results = chess();
        let hostile = "<img src=x onerror=alert(1)>\"&'";
        results.players[1].name = hostile.into();
        results.games[2].reason = Some("<script>alert('why')</script>".into());
        results.games[2].termination = Termination::Error;
        let page = render(&results);
        assert!(!page.to_lowercase().contains("<script"), "nothing runs");
        assert!(page.contains("content=\"default-src 'none'; style-src 'unsafe-inline'\""));
        assert!(!page.contains("<img"));
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;&quot;&amp;&#39;"));
        assert!(page.contains(
            "is not one of the legal moves &lt;/td&gt;&lt;script&gt;alert(&#39;illegal&#39;)\
             &lt;/script&gt;</li>"
        ));
        assert!(page.contains("UCI (&lt;from&gt;&lt;to&gt;)"));
        assert!(page.contains("keep the &lt;b&gt;centre&lt;/b&gt;. &lt;script&gt;"));
        assert!(page.contains("error: &lt;script&gt;alert(&#39;why&#39;)&lt;/script&gt;"));
        assert_well_formed(&page);
    }

    #[test]
    fn a_house_game_shows_net_chips_with_the_baselines_and_no_ratings() {
        let results = blackjack();
        let page = render(&results);
        assert_well_formed(&page);
        assert_links_resolve(&page);
        assert!(page.contains("Net chips per 100 hands"));
        assert!(
            !page.contains("class=\"rating\""),
            "no ratings at a house game"
        );
        assert!(page.contains("none: scores, not ratings"));
        // Best first: engine:basic at 0, the brain at -1000, engine:stand at -2000.
        let chart = &page[page.find("id=\"strength\"").unwrap()..];
        let chart = &chart[..chart.find("</svg>").unwrap()];
        assert_eq!(chart.matches("class=\"baseline\"").count(), 2);
        assert_eq!(chart.matches("class=\"bar\"").count(), 3);
        assert_eq!(chart.matches(" (baseline)").count(), 2);
        let at = |s: &str| chart.find(s).unwrap();
        assert!(at("+0.0 <tspan") < at("-1000.0 <tspan"));
        assert!(at("-1000.0 <tspan") < at("-2000.0 <tspan"));
        assert!(page.contains("<th>hands</th><th>won</th><th>pushed</th><th>lost</th>"));
        assert!(page.contains("<td>-10</td><td>-1000.0</td>"));
        // A house state is not drawn: it is shown, escaped.
        assert!(page.contains("&quot;note&quot;:&quot;&lt;i&gt;won&lt;/i&gt;&quot;"));
        assert!(page.contains("None: every move was legal"));
    }

    #[test]
    fn empty_cases_render_a_sensible_page() {
        let mut empty = chess();
        empty.players.clear();
        empty.games.clear();
        let page = render(&empty);
        assert_well_formed(&page);
        for note in [
            "No ratings: no game was played.",
            "No moves were made.",
            "No games were played.",
        ] {
            assert!(page.contains(note), "{note}");
        }
        assert!(!page.contains("<details"));

        // A player that never moved (its brain failed to start: the game ended in an error).
        let mut idle = chess();
        let mut quiet = idle.players[2].clone();
        quiet.name = "claude-haiku".into();
        quiet.kind = PlayerKind::Brain;
        (
            quiet.games,
            quiet.wins,
            quiet.draws,
            quiet.losses,
            quiet.moves,
        ) = (0, 0, 0, 0, 0);
        (quiet.rating, quiet.rating_ci95) = (None, None);
        idle.players.push(quiet);
        idle.games.push(GameResult {
            index: 4,
            players: vec!["claude-haiku".into(), "engine:random".into()],
            result: "*".into(),
            winner: None,
            termination: Termination::Error,
            reason: Some("the brain failed to start".into()),
            plies: 0,
            pgn: None,
            moves: Vec::new(),
            ..idle.games[0].clone()
        });
        let page = render(&idle);
        assert_well_formed(&page);
        assert_links_resolve(&page);
        assert!(page.contains(">no moves</text>"));
        assert!(page.contains("error: the brain failed to start"));
        assert!(page.contains("No moves.</p>"));

        let mut house = blackjack();
        house.players.clear();
        house.games.clear();
        let page = render(&house);
        assert_well_formed(&page);
        assert!(page.contains("No games were played."));
    }

    #[test]
    fn boards_are_drawn_from_the_state_strings() {
        let board = |game, state| position(game, state, &Value::Null).0;
        let chess = board(
            "chess",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
        );
        assert_eq!(chess.matches("<i").count(), 64, "{chess}");
        assert!(chess.contains("♔") && chess.contains("♚"));
        assert_eq!(chess.matches("♙").count(), 8);
        let checkers = board(
            "checkers",
            ".W...W../w......./......../......../...w..../......../.w....../w...w... b",
        );
        assert_eq!(checkers.matches("<i").count(), 64);
        assert_eq!(checkers.matches("class=\"w k\"").count(), 2);
        assert_eq!(checkers.matches("class=\"w\"").count(), 5);
        let ttt = board(
            "tic_tac_toe",
            "G:X../.O./...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O",
        );
        assert_eq!(ttt.matches("<i").count(), 9);
        assert!(ttt.contains("✕") && ttt.contains("◯"));
        let four = board(
            "four_in_a_row",
            "G:......./......./......./......./Y....../YYRRRR.|T:opponent|ST:game_over|LA:6|W:player",
        );
        assert_eq!(four.matches("<i").count(), 42);
        assert_eq!(four.matches("class=\"r\"").count(), 4);
        assert_eq!(four.matches("class=\"y\"").count(), 3);
        let mancala = board(
            "mancala",
            "P:4,4,0,5,5,1|O:0,6,6,5,5,5|PS:2|OS:0|T:player|ST:in_progress|LA:pit3|W:-",
        );
        assert_eq!(mancala.matches("<i").count(), 14, "{mancala}");
        assert!(mancala.contains("<i class=\"store\">2</i>"));
        let row = |s: &str| format!("{s}/").repeat(9) + s;
        let sea = board(
            "sea_battle",
            &format!(
                "P:{}|O:{}|F:x|T:player",
                row("SH.M......"),
                row("..........")
            ),
        );
        assert_eq!(sea.matches("<i").count(), 200);
        assert_eq!(sea.matches("class=\"h\"").count(), 10);

        // The move that led to a position is marked on it.
        let (chess, _) = position(
            "chess",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
            &json!("e2e4"),
        );
        let cells: Vec<&str> = chess.split("<i").skip(1).collect();
        let marked: Vec<usize> = (0..64).filter(|i| cells[*i].contains("hl")).collect();
        assert_eq!(marked, vec![4 * 8 + 4, 6 * 8 + 4], "e4 and e2");
        assert_eq!(squares("a3c5a7"), vec![(5, 0), (3, 2), (1, 0)]);
        assert_eq!(squares("e7e8q"), vec![(1, 4), (0, 4)]);
        let (ttt, _) = position("tic_tac_toe", "G:X../.O./..X|T:player", &json!("C3"));
        assert!(ttt.ends_with("<i class=\"x hl\">✕</i></div>"), "{ttt}");
        let (four, _) = position(
            "four_in_a_row",
            "G:......./......./......./......./Y....../YYRRRR.|T:opponent",
            &json!(1),
        );
        assert_eq!(four.matches("class=\"y hl\"").count(), 1);
        assert!(four.find("y hl").unwrap() < four.find("class=\"r\"").unwrap());

        // What cannot be read is shown as it is, escaped.
        for (game, state) in [
            (
                "chess",
                "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
            ),
            ("chess", "<b>"),
            ("tic_tac_toe", "G:X<./.../...|T:player"),
            ("four_in_a_row", "G:.......|T:player"),
            ("mancala", "P:4,4,<4,4,4,4|O:4,4,4,4,4,4|PS:0|OS:0"),
            ("sea_battle", "P:..<x>|O:.."),
            ("blackjack", "{\"cards\":[\"<AH>\"]}"),
        ] {
            let (shown, _) = position(game, state, &json!("e2e4"));
            assert_eq!(shown, format!("<code>{}</code>", esc(state)), "{game}");
        }
    }

    #[test]
    fn axes_choose_round_ticks_and_a_log_scale_for_a_wide_spread() {
        assert_eq!(ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(880.0, 1410.0), vec![1000.0, 1200.0, 1400.0]);
        assert_eq!(ticks(0.0, 0.5), vec![0.0, 0.1, 0.2, 0.3, 0.4, 0.5]);
        assert_eq!(log_ticks(1.0, 9000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(
            log_ticks(1.0, 150.0),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert!(wide_spread(0.0, 120.0) && wide_spread(350.0, 12_000.0));
        assert!(!wide_spread(0.0, 9.0) && !wide_spread(400.0, 8_000.0));
        let log = Axis::log(1.0, 1000.0);
        assert!((log.x(10.0) - (PLOT_LEFT + PLOT_WIDTH / 3.0)).abs() < 1e-6);
        assert_eq!(log.x(0.0), PLOT_LEFT, "0 ms sits at the axis' start");
        assert_eq!(duration(850.0), "850 ms");
        assert_eq!(duration(1500.0), "1.5 s");
        assert_eq!(duration(0.001), "0 ms");
        assert_eq!(duration(125_000.0), "2 min 05 s");
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
    }
}
