//! `campaign.json` on disk: loading, and atomic saving.
//!
//! A save writes the whole file to a temporary file in the same directory, flushes it to disk,
//! renames it over the old one and flushes the directory, so a crash at any point leaves either
//! the previous file or the new one, never a mix. An invalid campaign is never written.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::load::Loaded;
use super::{Campaign, CampaignError};

fn io_error(path: &Path, e: impl std::fmt::Display) -> CampaignError {
    CampaignError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Reads and checks the campaign at `path` (see [`Campaign::from_json`]).
pub fn load(path: &Path) -> Result<Loaded, CampaignError> {
    let text = fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse(&text)
}

/// Reads and checks a campaign from its text.
pub fn parse(text: &str) -> Result<Loaded, CampaignError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| CampaignError::Json(e.to_string()))?;
    Campaign::from_json(&value)
}

/// The campaign as the file's text: pretty JSON, non-ASCII text as it is, a final newline.
pub fn to_text(campaign: &Campaign) -> String {
    let view = super::view::FileView::of(campaign);
    let mut text = serde_json::to_string_pretty(&view).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes `campaign` to `path` atomically; refuses an invalid campaign (every problem listed)
/// and leaves the file untouched then.
pub fn save(path: &Path, campaign: &Campaign) -> Result<(), CampaignError> {
    let problems = campaign.problems();
    if !problems.is_empty() {
        return Err(CampaignError::Invalid(problems));
    }
    write_atomic(path, to_text(campaign).as_bytes())
}

/// Replaces `path` with `bytes` so that a crash leaves the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CampaignError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io_error(path, "not a file path"))?
        .to_string_lossy();
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        // The rename itself reaches the disk with the directory.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok::<(), std::io::Error>(())
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(io_error(path, e));
    }
    Ok(())
}

/// The id a new campaign in `dir` gets: `camp_` and four digits, one more than the highest
/// `camp_<digits>` id of the campaign files there (`camp_0001` in an empty directory). Only
/// regular files of at most [`crate::limits::MAX_CAMPAIGN_FILE_BYTES`] are read (never a FIFO).
pub fn next_id(dir: &Path) -> String {
    let highest = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| {
            entry.file_type().is_ok_and(|t| t.is_file())
                && entry
                    .metadata()
                    .is_ok_and(|m| m.len() <= crate::limits::MAX_CAMPAIGN_FILE_BYTES)
        })
        .filter_map(|entry| {
            let text = fs::read_to_string(entry.path()).ok()?;
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            let id = value
                .get("id")?
                .as_str()?
                .strip_prefix("camp_")?
                .to_string();
            id.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0);
    format!("camp_{:04}", highest + 1)
}

/// The turn log beside a campaign file: `turn_log.jsonl` in the same directory, one
/// [`super::turn::TurnEntry`] a line, as the reference backend keeps it.
pub fn turn_log_path(campaign_path: &Path) -> std::path::PathBuf {
    match campaign_path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join("turn_log.jsonl"),
        _ => Path::new("turn_log.jsonl").to_path_buf(),
    }
}

/// How many turns the log at `log_path` holds (0 when there is none).
pub fn turn_count(log_path: &Path) -> u64 {
    fs::read_to_string(log_path)
        .map(|text| text.lines().filter(|l| !l.trim().is_empty()).count() as u64)
        .unwrap_or(0)
}

/// Appends one turn to the log (a line, flushed to disk).
pub fn append_turn(log_path: &Path, entry: &super::turn::TurnEntry) -> Result<(), CampaignError> {
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .map_err(|e| io_error(log_path, e))?;
    let mut line = entry.to_jsonl();
    line.push('\n');
    file.write_all(line.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| io_error(log_path, e))
}
