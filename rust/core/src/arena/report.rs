//! `report.html`: a tournament's [`Results`] as a page a person would rather look at than read.
//!
//! One self-contained file (inline CSS and SVG, no script, nothing fetched), in five parts:
//!
//! 1. **The header**: the game, the schedule, the seed, how many games, how long, the anchor.
//! 2. **Strength**: each player's rating as a dot on an axis with its 95 % interval as a bar, best
//!    first (at a house game: net chips per 100 hands as bars around zero, the baselines among
//!    them), and the players' table — record, rating, illegal attempts and repairs per 100 moves,
//!    latency, tokens, cost.
//! 3. **Legality**: illegal attempts and repairs per 100 moves as bars.
//! 4. **Latency**: every move's latency as a strip per player, on a log scale when the spread is
//!    wide, with the median marked.
//! 5. **The games**: a table linking each game to its replay below it — every move with who made
//!    it, its latency, tokens, repairs, the illegal attempts before it (with why), what the player
//!    said, and the position after it, drawn as a board for tic-tac-toe, four-in-a-row, chess,
//!    checkers and mancala (the state string otherwise), and the PGN of a chess game.
//!
//! Every text that came from a player or a model is escaped.

use std::fmt::Write as _;
use std::path::Path;

use super::results::{GameResult, MoveRecord, PlayerKind, PlayerResult, Results, Termination};

/// Writes `results.json` (pretty) and `report.html` into `dir`, creating it.
pub fn write(dir: &Path, results: &Results) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(results).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.json"), json + "\n")?;
    std::fs::write(dir.join("report.html"), render(results))
}

/// The page.
pub fn render(results: &Results) -> String {
    let mut page = String::with_capacity(64 * 1024);
    let title = format!("Arena: {}", results.game.replace('_', " "));
    let _ = writeln!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    header(&mut page, results, &title);
    strength(&mut page, results);
    players_table(&mut page, results);
    legality(&mut page, results);
    latency(&mut page, results);
    games_table(&mut page, results);
    replays(&mut page, results);
    page.push_str("</body></html>\n");
    page
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1240px;\
color:#1d2433;background:#fafbfc;padding:0 16px}h1{margin:0 0 4px}h2{margin:28px 0 8px;\
border-bottom:2px solid #dde3ec;padding-bottom:4px}.meta{color:#5a6478}table{border-collapse:\
collapse;margin:8px 0}td,th{border:1px solid #dde3ec;padding:3px 8px;text-align:right;white-space:nowrap}\
th{background:#eef2f7}td.l,th.l{text-align:left}.brain{color:#1f5fbf;font-weight:600}\
.engine{color:#5a6478}svg text{font:12px system-ui,sans-serif;fill:#1d2433}details{margin:6px 0;\
background:#fff;border:1px solid #dde3ec;border-radius:6px;padding:6px 10px}summary{cursor:\
pointer;font-weight:600}.bad{color:#b3261e}.board{border-collapse:collapse;margin:0}.board td\
{border:1px solid #b8c2d1;width:18px;height:18px;padding:0;text-align:center;font-size:14px;\
line-height:18px}.board td.dark{background:#b58863}.board td.light{background:#f0d9b5}\
pre,code{background:#eef2f7;padding:1px 4px;border-radius:3px;white-space:pre-wrap;\
word-break:break-all}.said{color:#3d4a5c;font-style:italic;text-align:left;max-width:320px;white-space:normal}";

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A name, marked as a brain's or an engine's.
fn who(results: &Results, name: &str) -> String {
    let brain = results
        .players
        .iter()
        .any(|p| p.name == name && p.kind == PlayerKind::Brain);
    format!(
        "<span class=\"{}\">{}</span>",
        if brain { "brain" } else { "engine" },
        esc(name)
    )
}

fn header(page: &mut String, r: &Results, title: &str) {
    let anchor = match &r.anchor {
        Some(a) => format!(", {} held at {:.0}", esc(&a.player), a.rating),
        None => String::new(),
    };
    let _ = writeln!(
        page,
        "<h1>{}</h1><p class=\"meta\">{} · {} games · seed {} · {:.1} s · started {}{} · \
         tournament <code>{}</code></p>",
        esc(title),
        esc(&r.schedule.replace('_', " ")),
        r.games.len(),
        r.seed,
        r.elapsed_ms as f64 / 1000.0,
        esc(&r.started_at),
        anchor,
        esc(&r.tournament)
    );
}

/// The chart's colours: a brain's, an engine's.
const BRAIN: &str = "#1f5fbf";
const ENGINE: &str = "#8a94a6";

fn colour(p: &PlayerResult) -> &'static str {
    if p.kind == PlayerKind::Brain {
        BRAIN
    } else {
        ENGINE
    }
}

/// Round ticks over `[lo, hi]`, about five.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(raw);
    let mut out = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

/// Ratings with their intervals (rated games), or net chips per 100 hands (house games).
fn strength(page: &mut String, r: &Results) {
    let (label, values): (&str, Vec<(&PlayerResult, f64, f64, f64)>) = if r.anchor.is_some() {
        (
            "Ratings (Bradley–Terry, Elo scale) with 95 % intervals",
            r.players
                .iter()
                .filter_map(|p| {
                    let rating = p.rating?;
                    let [lo, hi] = p.rating_ci95.unwrap_or([rating, rating]);
                    Some((p, rating, lo, hi))
                })
                .collect(),
        )
    } else {
        (
            "Net chips per 100 hands",
            r.players
                .iter()
                .filter_map(|p| {
                    let net = p.score?.net_per_100;
                    Some((p, net, net.min(0.0), net.max(0.0)))
                })
                .collect(),
        )
    };
    let _ = writeln!(page, "<h2>{label}</h2>");
    if values.is_empty() {
        page.push_str("<p>No games were played.</p>\n");
        return;
    }
    let lo = values.iter().map(|v| v.2).fold(f64::INFINITY, f64::min);
    let hi = values.iter().map(|v| v.3).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.08).max(10.0);
    let (lo, hi) = (lo - pad, hi + pad);
    let (left, width, row) = (190.0, 640.0, 30.0);
    // The numbers stand in a column of their own, right of the chart.
    let label_x = left + width + 24.0;
    let height = row * values.len() as f64 + 40.0;
    let x = |v: f64| left + (v - lo) / (hi - lo) * width;
    let _ = write!(
        page,
        "<svg id=\"strength\" width=\"{}\" height=\"{height}\" role=\"img\">",
        label_x + 170.0
    );
    for t in ticks(lo, hi) {
        let _ = write!(
            page,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"10\" y2=\"{1:.1}\" stroke=\"#e3e8ef\"/>\
             <text x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
            x(t),
            height - 24.0,
            height - 8.0,
            t.round()
        );
    }
    let house = r.anchor.is_none();
    if house {
        let _ = write!(
            page,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"10\" y2=\"{1:.1}\" stroke=\"#5a6478\"/>",
            x(0.0),
            height - 24.0
        );
    }
    for (i, (p, value, a, b)) in values.iter().enumerate() {
        let y = 24.0 + row * i as f64;
        let _ = write!(
            page,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 10.0,
            y + 4.0,
            esc(&p.name)
        );
        if house {
            let _ = write!(
                page,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"14\" \
                 fill=\"{}\"/><text x=\"{label_x:.1}\" y=\"{:.1}\">{value:+.1}</text>",
                x(*a),
                y - 7.0,
                (x(*b) - x(*a)).max(1.0),
                colour(p),
                y + 4.0
            );
        } else {
            let _ = write!(
                page,
                "<line class=\"ci\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" \
                 stroke=\"{c}\" stroke-width=\"6\" stroke-opacity=\"0.35\" \
                 stroke-linecap=\"round\"/><circle class=\"rating\" cx=\"{:.1}\" cy=\"{y:.1}\" \
                 r=\"6\" fill=\"{c}\"/><text x=\"{label_x:.1}\" y=\"{:.1}\">{value:.0} \
                 [{a:.0}, {b:.0}]</text>",
                x(*a),
                x(*b),
                x(*value),
                y + 4.0,
                c = colour(p),
            );
        }
    }
    page.push_str("</svg>\n");
}

fn players_table(page: &mut String, r: &Results) {
    page.push_str(
        "<table id=\"players\"><tr><th class=\"l\">player</th><th>games</th><th>W</th>\
         <th>D</th><th>L</th><th>forfeits</th><th>rating [95 % CI]</th><th>net / 100</th>\
         <th>moves</th><th>illegal / 100</th><th>repairs / 100</th><th>p50 ms</th>\
         <th>p95 ms</th><th>tokens / move</th><th>cost $</th></tr>\n",
    );
    for p in &r.players {
        let rating = match (p.rating, p.rating_ci95) {
            (Some(x), Some([lo, hi])) => format!("{x:.0} [{lo:.0}, {hi:.0}]"),
            _ => "–".into(),
        };
        let net = p
            .score
            .map_or("–".into(), |s| format!("{:+.1}", s.net_per_100));
        let cost = p.cost_usd.map_or("–".into(), |c| format!("{c:.4}"));
        let bad = |x: f64| if x > 0.0 { " class=\"bad\"" } else { "" };
        let _ = writeln!(
            page,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{rating}</td><td>{net}</td><td>{}</td><td{}>{:.1}</td>\
             <td>{:.1}</td><td>{:.0}</td><td>{:.0}</td><td>{:.1}</td><td>{cost}</td></tr>",
            who(r, &p.name),
            p.games,
            p.wins,
            p.draws,
            p.losses,
            p.forfeits,
            p.moves,
            bad(p.illegal_per_100_moves),
            p.illegal_per_100_moves,
            p.repairs_per_100_moves,
            p.latency_ms.p50,
            p.latency_ms.p95,
            p.tokens.per_move
        );
    }
    page.push_str("</table>\n");
}

fn legality(page: &mut String, r: &Results) {
    page.push_str("<h2>Illegal attempts and repairs per 100 moves</h2>\n");
    let max = r
        .players
        .iter()
        .map(|p| p.illegal_per_100_moves.max(p.repairs_per_100_moves))
        .fold(1.0, f64::max);
    let (left, width, row) = (190.0, 700.0, 34.0);
    let height = row * r.players.len() as f64 + 10.0;
    let _ = write!(
        page,
        "<svg id=\"legality\" width=\"{}\" height=\"{height}\">",
        left + width + 80.0
    );
    for (i, p) in r.players.iter().enumerate() {
        let y = 6.0 + row * i as f64;
        let _ = write!(
            page,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 10.0,
            y + 14.0,
            esc(&p.name)
        );
        for (k, (value, fill, what)) in [
            (p.illegal_per_100_moves, "#b3261e", "illegal"),
            (p.repairs_per_100_moves, "#e8a33d", "repairs"),
        ]
        .into_iter()
        .enumerate()
        {
            let yy = y + 13.0 * k as f64;
            let _ = write!(
                page,
                "<rect x=\"{left}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"11\" fill=\"{fill}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{value:.1} {what}</text>",
                (value / max * width).max(1.0),
                left + (value / max * width).max(1.0) + 6.0,
                yy + 10.0
            );
        }
    }
    page.push_str("</svg>\n");
}

fn latency(page: &mut String, r: &Results) {
    page.push_str("<h2>Latency per move (ms)</h2>\n");
    let per: Vec<(&PlayerResult, Vec<f64>)> = r
        .players
        .iter()
        .map(|p| {
            let all = r
                .games
                .iter()
                .flat_map(|g| g.moves.iter())
                .filter(|m| m.player == p.name && !m.mv.is_null())
                .map(|m| m.latency_ms as f64)
                .collect();
            (p, all)
        })
        .collect();
    let all: Vec<f64> = per.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    if all.is_empty() {
        page.push_str("<p>No moves were made.</p>\n");
        return;
    }
    let max = all.iter().copied().fold(1.0, f64::max);
    let log = max >= 100.0;
    let scale = |v: f64| {
        if log {
            (v.max(0.0) + 1.0).log10() / (max + 1.0).log10()
        } else {
            v / max
        }
    };
    let (left, width, row) = (190.0, 760.0, 26.0);
    let height = row * per.len() as f64 + 36.0;
    let _ = write!(
        page,
        "<svg id=\"latency\" width=\"{}\" height=\"{height}\">",
        left + width + 40.0
    );
    let marks: Vec<f64> = if log {
        let mut m = vec![0.0];
        let mut t = 1.0;
        while t <= max {
            m.push(t);
            t *= 10.0;
        }
        m
    } else {
        ticks(0.0, max)
    };
    for t in marks {
        let xx = left + scale(t) * width;
        let _ = write!(
            page,
            "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"4\" y2=\"{:.1}\" stroke=\"#e3e8ef\"/>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}</text>",
            height - 22.0,
            height - 8.0
        );
    }
    for (i, (p, values)) in per.iter().enumerate() {
        let y = 16.0 + row * i as f64;
        let _ = write!(
            page,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 10.0,
            y + 4.0,
            esc(&p.name)
        );
        for v in values {
            let _ = write!(
                page,
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{}\" fill-opacity=\"0.45\"/>",
                left + scale(*v) * width,
                colour(p)
            );
        }
        if !values.is_empty() {
            let xx = left + scale(p.latency_ms.p50) * width;
            let _ = write!(
                page,
                "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" \
                 stroke=\"#1d2433\" stroke-width=\"2\"/>",
                y - 9.0,
                y + 9.0
            );
        }
    }
    page.push_str("</svg>\n");
}

fn termination(g: &GameResult) -> &'static str {
    match g.termination {
        Termination::Normal => "normal",
        Termination::Forfeit => "forfeit",
        Termination::Time => "time",
        Termination::MaxPlies => "ply limit",
        Termination::Error => "error",
    }
}

fn games_table(page: &mut String, r: &Results) {
    page.push_str(
        "<h2>Games</h2>\n<table id=\"games\"><tr><th>#</th><th class=\"l\">players (seat \
         order)</th><th>result</th><th class=\"l\">ended</th><th>plies</th></tr>\n",
    );
    for g in &r.games {
        let players: Vec<String> = g.players.iter().map(|p| who(r, p)).collect();
        let reason = g
            .reason
            .as_deref()
            .map_or(String::new(), |why| format!(": {}", esc(why)));
        let _ = writeln!(
            page,
            "<tr><td><a href=\"#game-{0}\">{0}</a></td><td class=\"l\">{1}</td><td>{2}</td>\
             <td class=\"l\">{3}{reason}</td><td>{4}</td></tr>",
            g.index,
            players.join(" – "),
            esc(&g.result),
            termination(g),
            g.plies
        );
    }
    page.push_str("</table>\n");
}

fn replays(page: &mut String, r: &Results) {
    page.push_str("<h2>Replays</h2>\n");
    for (i, g) in r.games.iter().enumerate() {
        let players: Vec<String> = g.players.iter().map(|p| esc(p)).collect();
        // The first is open: a replay is seen without a click.
        let open = if i == 0 { " open" } else { "" };
        let _ = writeln!(
            page,
            "<details id=\"game-{0}\"{open}><summary>Game {0}: {1} — {2} ({3}, {4} plies, seed \
             <code>{5}</code>)</summary>\n<p>Start: {6}</p>",
            g.index,
            players.join(" – "),
            esc(&g.result),
            termination(g),
            g.plies,
            esc(&g.seed),
            position(&g.game, &g.start)
        );
        page.push_str(
            "<table><tr><th>ply</th><th class=\"l\">player</th><th class=\"l\">move</th>\
             <th>ms</th><th>tokens</th><th>repairs</th><th class=\"l\">illegal attempts</th>\
             <th class=\"l\">said</th><th class=\"l\">after</th></tr>\n",
        );
        for m in &g.moves {
            replay_row(page, r, g, m);
        }
        page.push_str("</table>\n");
        if let Some(pgn) = &g.pgn {
            let _ = writeln!(page, "<pre>{}</pre>", esc(pgn));
        }
        page.push_str("</details>\n");
    }
}

fn replay_row(page: &mut String, r: &Results, g: &GameResult, m: &MoveRecord) {
    let mv = match &m.mv {
        serde_json::Value::Null => "<span class=\"bad\">no move</span>".to_string(),
        serde_json::Value::String(s) => esc(s),
        other => esc(&other.to_string()),
    };
    let illegal: Vec<String> = m
        .illegal
        .iter()
        .map(|i| format!("<div class=\"bad\">{}</div>", esc(i)))
        .collect();
    let _ = writeln!(
        page,
        "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{mv}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"said\">{}</td>\
         <td class=\"l\">{}</td></tr>",
        m.ply,
        who(r, &m.player),
        m.latency_ms,
        m.input_tokens + m.output_tokens,
        m.repairs,
        illegal.join(""),
        esc(&m.text),
        position(&g.game, &m.state)
    );
}

/// A position drawn as a small board where the game's state string is simple to draw, else the
/// string itself.
fn position(game: &str, state: &str) -> String {
    let drawn = match game {
        "tic_tac_toe" => grid(field(state, "G"), '/', |c| match c {
            'X' => ("✕", ""),
            'O' => ("◯", ""),
            _ => ("", ""),
        }),
        "four_in_a_row" => grid(field(state, "G"), '/', |c| match c {
            'R' => ("<span style=\"color:#c62828\">●</span>", ""),
            'Y' => ("<span style=\"color:#f9a825\">●</span>", ""),
            _ => ("", ""),
        }),
        "chess" => chess(state),
        "checkers" => checkers(state),
        "mancala" => mancala(state),
        _ => None,
    };
    drawn.unwrap_or_else(|| format!("<code>{}</code>", esc(state)))
}

/// The `KEY:` part of a `|`-separated state string.
fn field<'a>(state: &'a str, key: &str) -> Option<&'a str> {
    state
        .split('|')
        .find_map(|part| part.strip_prefix(key)?.strip_prefix(':'))
}

/// Rows separated by `sep`, one cell per character.
fn grid(
    rows: Option<&str>,
    sep: char,
    cell: impl Fn(char) -> (&'static str, &'static str),
) -> Option<String> {
    let rows = rows?;
    let mut out = String::from("<table class=\"board\">");
    for row in rows.split(sep) {
        out.push_str("<tr>");
        for c in row.chars() {
            let (shown, class) = cell(c);
            let _ = write!(out, "<td class=\"{class}\">{shown}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    Some(out)
}

fn chess(fen: &str) -> Option<String> {
    let board = fen.split_whitespace().next()?;
    let mut out = String::from("<table class=\"board\">");
    for (r, row) in board.split('/').enumerate() {
        out.push_str("<tr>");
        let mut file = 0;
        for c in row.chars() {
            let empties = c.to_digit(10).unwrap_or(0);
            let pieces: Vec<&str> = if empties > 0 {
                vec![""; empties as usize]
            } else {
                vec![piece(c)?]
            };
            for p in pieces {
                let shade = if (r + file) % 2 == 0 { "light" } else { "dark" };
                let _ = write!(out, "<td class=\"{shade}\">{p}</td>");
                file += 1;
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    Some(out)
}

fn piece(c: char) -> Option<&'static str> {
    Some(match c {
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
        _ => return None,
    })
}

fn checkers(state: &str) -> Option<String> {
    let board = state.split_whitespace().next()?;
    let mut out = String::from("<table class=\"board\">");
    for (r, row) in board.split('/').enumerate() {
        out.push_str("<tr>");
        for (f, c) in row.chars().enumerate() {
            let shade = if (r + f) % 2 == 0 { "light" } else { "dark" };
            let shown = match c {
                'w' => "⛀",
                'W' => "⛁",
                'b' => "⛂",
                'B' => "⛃",
                _ => "",
            };
            let _ = write!(out, "<td class=\"{shade}\">{shown}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    Some(out)
}

fn mancala(state: &str) -> Option<String> {
    let player: Vec<&str> = field(state, "P")?.split(',').collect();
    let opponent: Vec<&str> = field(state, "O")?.split(',').collect();
    let (ps, os) = (field(state, "PS")?, field(state, "OS")?);
    let mut out = String::from("<table class=\"board\"><tr>");
    let _ = write!(out, "<td rowspan=\"2\">{}</td>", esc(os));
    for pit in opponent.iter().rev() {
        let _ = write!(out, "<td>{}</td>", esc(pit));
    }
    let _ = write!(out, "<td rowspan=\"2\">{}</td></tr><tr>", esc(ps));
    for pit in &player {
        let _ = write!(out, "<td>{}</td>", esc(pit));
    }
    out.push_str("</tr></table>");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::results::{Anchor, HouseScore, Latency, Tokens};
    use serde_json::json;

    fn player(name: &str, kind: PlayerKind, rating: Option<f64>) -> PlayerResult {
        PlayerResult {
            name: name.into(),
            kind,
            games: 2,
            wins: 1,
            draws: 0,
            losses: 1,
            forfeits: 0,
            rating,
            rating_ci95: rating.map(|r| [r - 50.0, r + 60.0]),
            moves: 3,
            illegal_moves: 1,
            illegal_per_100_moves: 33.3,
            repairs: 1,
            repairs_per_100_moves: 33.3,
            latency_ms: Latency {
                p50: 120.0,
                p95: 900.0,
                max: 900.0,
            },
            tokens: Tokens {
                input: 300,
                output: 30,
                per_move: 110.0,
            },
            cost_usd: None,
            score: None,
        }
    }

    fn results() -> Results {
        let moved = |ply, player: &str, mv: serde_json::Value, illegal: Vec<String>| MoveRecord {
            ply,
            player: player.into(),
            mv,
            state: "G:X../.O./...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O".into(),
            latency_ms: 120 * u64::from(ply),
            input_tokens: 100,
            output_tokens: 10,
            repairs: u32::try_from(illegal.len()).unwrap(),
            illegal,
            text: "I take the <b>centre</b> & win".into(),
        };
        Results {
            version: 1,
            tournament: "arena-1".into(),
            game: "tic_tac_toe".into(),
            schedule: "match".into(),
            seed: 7,
            started_at: "2026-11-29T00:00:00Z".into(),
            elapsed_ms: 1500,
            anchor: Some(Anchor {
                player: "engine:random".into(),
                rating: 1000.0,
            }),
            players: vec![
                player(
                    "gem<script>alert(1)</script>",
                    PlayerKind::Brain,
                    Some(1180.0),
                ),
                player("engine:random", PlayerKind::Engine, Some(1000.0)),
            ],
            games: vec![GameResult {
                index: 1,
                game: "tic_tac_toe".into(),
                players: vec![
                    "gem<script>alert(1)</script>".into(),
                    "engine:random".into(),
                ],
                result: "1-0".into(),
                winner: Some("gem<script>alert(1)</script>".into()),
                termination: Termination::Normal,
                reason: None,
                seed: "7:0:0".into(),
                plies: 2,
                start: "G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O".into(),
                end: String::new(),
                pgn: None,
                net: None,
                moves: vec![
                    moved(
                        1,
                        "gem<script>alert(1)</script>",
                        json!("A1"),
                        vec!["Z9: invalid_args: <not> listed".into()],
                    ),
                    moved(2, "engine:random", json!("B2"), Vec::new()),
                ],
            }],
        }
    }

    #[test]
    fn the_page_shows_ratings_intervals_games_and_replays_and_escapes_what_players_wrote() {
        let page = render(&results());
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(
            page.contains("1180 [1130, 1240]"),
            "the rating and its interval"
        );
        assert!(page.contains("id=\"strength\"") && page.contains("class=\"rating\""));
        assert!(page.contains("href=\"#game-1\"") && page.contains("id=\"game-1\""));
        assert!(!page.contains("<script>"), "a player's name is escaped");
        assert!(page.contains("gem&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("Z9: invalid_args: &lt;not&gt; listed"));
        assert!(page.contains("I take the &lt;b&gt;centre&lt;/b&gt; &amp; win"));
        // The board is drawn: an X and an O.
        assert!(page.contains("✕") && page.contains("◯"));
        assert!(page.contains("engine:random held at 1000"));
        assert_eq!(page.matches("<details").count(), 1);
    }

    #[test]
    fn a_house_game_shows_net_chips_and_an_empty_tournament_says_so() {
        let mut house = results();
        house.anchor = None;
        house.game = "blackjack".into();
        for (p, net) in house.players.iter_mut().zip([-120.0, 35.5]) {
            p.rating = None;
            p.rating_ci95 = None;
            p.score = Some(HouseScore {
                hands: 100,
                net_chips: net as i64,
                net_per_100: net,
            });
        }
        let page = render(&house);
        assert!(page.contains("Net chips per 100 hands"));
        assert!(page.contains("+35.5") && page.contains("-120.0"));
        assert!(page.contains("class=\"bar\""));
        let mut empty = results();
        empty.players.clear();
        empty.games.clear();
        let page = render(&empty);
        assert!(page.contains("No games were played.") && page.contains("No moves were made."));
    }

    #[test]
    fn boards_are_drawn_from_the_state_strings() {
        let chess = position(
            "chess",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        );
        assert_eq!(chess.matches("<td").count(), 64, "{chess}");
        assert!(chess.contains("♔") && chess.contains("♚"));
        let checkers = position(
            "checkers",
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. w",
        );
        assert_eq!(checkers.matches("⛀").count(), 12);
        let mancala = position(
            "mancala",
            "P:4,4,4,4,4,4|O:4,4,4,4,4,5|PS:1|OS:0|T:player|ST:in_progress|LA:-|W:-",
        );
        assert_eq!(mancala.matches("<td").count(), 14, "{mancala}");
        let four = position(
            "four_in_a_row",
            "G:......./......./......./......./......./...R...|T:opponent|ST:in_progress|LA:4|W:-",
        );
        assert_eq!(four.matches("●").count(), 1);
        let sea = position("sea_battle", "P:..<x>|O:..");
        assert_eq!(sea, "<code>P:..&lt;x&gt;|O:..</code>");
    }
}
