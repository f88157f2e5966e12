//! Headless Chromium for the report pages' checks: a page's DOM as Chromium builds it, a
//! screenshot, and text as the DOM dump writes it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{self, Echo};

/// Text as the DOM dump writes it (`&`, `<`, `>` escaped; quotes as they are).
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub(crate) fn url(path: &Path) -> Result<String, String> {
    let absolute: PathBuf =
        fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!("file://{}", absolute.display()))
}

/// The DOM Chromium builds from `page`, serialised.
pub(crate) fn dom(page: &str, timeout: Duration) -> Result<String, String> {
    let out = chromium(&["--dump-dom", page], timeout)?;
    out.find("<html")
        .map(|start| out[start..].to_string())
        .ok_or_else(|| format!("Chromium printed no DOM for {page}"))
}

/// Runs headless Chromium with `args`; its output.
pub(crate) fn chromium(args: &[&str], timeout: Duration) -> Result<String, String> {
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
