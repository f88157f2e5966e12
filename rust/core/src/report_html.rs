//! What the report pages share (the arena's `report.html`, the report card's): HTML escaping,
//! the page's shell — its content security policy (no script runs, nothing is fetched), its
//! base style, its header of facts — and how numbers and durations are written.

use std::fmt::Write as _;

/// The pages' content security policy: nothing is fetched and no script runs, even one that
/// got past the escaping; inline styles only.
pub const CSP: &str = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
                       style-src 'unsafe-inline'\">";

/// The style every report page starts from (a page adds its own after it).
pub const BASE_STYLE: &str = r#"
:root{--ink:#1d2433;--muted:#5a6478;--line:#dde3ec;--brain:#1f5fbf;--engine:#8a94a6;--bad:#b3261e;
 --good:#1e7b3c}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1240px;
 color:var(--ink);background:#f6f8fb;padding:20px 20px 60px}
h1{margin:0 0 10px;font-size:26px}
h2{margin:28px 0 10px;font-size:19px;border-bottom:2px solid var(--line);padding-bottom:4px}
.facts{display:flex;flex-wrap:wrap;gap:8px;margin:0 0 6px}
.fact{background:#fff;border:1px solid var(--line);border-radius:8px;padding:4px 12px}
.fact b{display:block;font-size:11px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;
 color:var(--muted)}
.legend,.note{color:var(--muted);font-size:13px;margin:4px 0 8px}
.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 10px;overflow-x:auto}
table{border-collapse:collapse;background:#fff;margin:10px 0}
td,th{border:1px solid var(--line);padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#eef2f7;font-weight:600;white-space:normal;vertical-align:bottom}
.scroll{overflow-x:auto}
.l{text-align:left}
.bad{color:var(--bad)}
.good{color:var(--good)}
svg{display:block;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif;fill:var(--ink)}
svg text.dim{fill:var(--muted)}
code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;background:#eef2f7;border-radius:4px;
 padding:1px 4px;white-space:pre-wrap;word-break:break-all}
pre{padding:8px 10px}
summary{cursor:pointer;font-weight:600;padding:2px 0}
"#;

/// Escapes text for HTML and XML (element content and attribute values alike).
pub fn escape(text: &str) -> String {
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

/// Starts a page: the doctype, the head (the policy, [`BASE_STYLE`] then `style`, the title)
/// and the body's opening tag.
pub fn open_page(page: &mut String, title: &str, style: &str) {
    let _ = writeln!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{CSP}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{BASE_STYLE}{style}</style></head><body>",
        escape(title)
    );
}

/// Ends a page.
pub fn close_page(page: &mut String) {
    page.push_str("</body></html>\n");
}

/// The header's title and its facts, each `(label, HTML)`; the header is left open for a
/// legend (close it with `</header>`).
pub fn facts(page: &mut String, title: &str, facts: &[(&str, String)]) {
    let _ = writeln!(
        page,
        "<header><h1>{}</h1><div class=\"facts\">",
        escape(title)
    );
    for (what, value) in facts {
        let _ = write!(page, "<div class=\"fact\"><b>{what}</b>{value}</div>");
    }
    page.push_str("</div>");
}

/// A duration in milliseconds as a person reads it: `850 ms`, `4.2 s`, `3 min 05 s`,
/// `1 h 02 min`.
pub fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", trim(ms))
    } else if ms < 60_000.0 {
        format!("{} s", trim(ms / 1000.0))
    } else if ms < 3_600_000.0 {
        let s = (ms / 1000.0).round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        let m = (ms / 60_000.0).round() as u64;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// A number without a useless fraction: `3`, `1.5`, `0.25`.
pub fn trim(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn a_page_has_the_policy_and_the_escaped_title() {
        let mut page = String::new();
        open_page(&mut page, "A <b> page", ".x{}");
        facts(&mut page, "A <b> page", &[("seed", "1".into())]);
        page.push_str("</header>");
        close_page(&mut page);
        assert!(page.contains(CSP));
        assert!(page.contains("<title>A &lt;b&gt; page</title>"));
        assert!(page.contains(".x{}</style>"));
        assert!(page.contains("<b>seed</b>1"));
        assert!(page.ends_with("</body></html>\n"));
    }

    #[test]
    fn durations_and_numbers_read_well() {
        assert_eq!(duration(850.0), "850 ms");
        assert_eq!(duration(4200.0), "4.2 s");
        assert_eq!(duration(185_000.0), "3 min 05 s");
        assert_eq!(trim(0.25), "0.25");
        assert_eq!(trim(12.34), "12.3");
    }
}
