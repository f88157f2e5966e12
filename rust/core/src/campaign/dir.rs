//! Campaign files named by callers the server does not trust (a WebSocket client's
//! `campaign_load` and `call_tool`, an MCP host's `tools/call`): confined to one campaign
//! directory, read without blocking, never replacing anything that is not a campaign.
//!
//! - **Names.** A name is a path relative to the campaign directory: an empty name, an absolute
//!   path, a `..` component, or more than [`MAX_CAMPAIGN_PATH_CHARS`] characters is refused
//!   ([`CampaignError::PathNotRelative`]) before the file system is asked anything.
//! - **Containment.** The directory and the name are resolved with every symlink followed
//!   (`canonicalize`); the result must lie inside the resolved directory. A name that resolves
//!   to nothing and one that leads out of the directory (a symlink to `/etc`) get the same
//!   [`CampaignError::NoSuchFile`], so a caller learns nothing about what lies outside. A symlink
//!   that stays inside is followed.
//! - **Regular files only.** A directory, FIFO, device or socket inside is refused
//!   ([`CampaignError::NotRegularFile`]) from its metadata, without being opened; the file is
//!   then opened non-blocking and without following a symlink (a FIFO or a symlink swapped in
//!   meanwhile is refused, not waited on), and checked again before a byte is read.
//! - **Size.** A file over [`MAX_CAMPAIGN_FILE_BYTES`] is refused ([`CampaignError::TooLarge`]);
//!   no more than that is ever read.
//! - **Campaigns only.** JSON that is not a campaign file — not an object with a string `id` and
//!   at least one of `selected`, `map`, `actors` (or the older `positions`) — is refused
//!   ([`CampaignError::NotACampaign`]) and so never saved over. A save replaces the file only
//!   while it is still a regular file; the turn log beside it (`turn_log.jsonl`) is appended
//!   only when it is a regular file or absent.
//! - **Messages** name the file as the caller named it, never the server's own path.
//!
//! Everything here blocks on the file system: async callers run it with `spawn_blocking`.

use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::load::Loaded;
use super::turn::TurnEntry;
use super::{Campaign, CampaignError, file};
use crate::limits::{MAX_CAMPAIGN_FILE_BYTES, MAX_CAMPAIGN_PATH_CHARS};

/// The keys of which a campaign file holds at least one (besides its `id`).
const CAMPAIGN_KEYS: [&str; 4] = ["selected", "map", "actors", "positions"];

/// How much of a refused name an error echoes back.
const SHOWN_NAME_CHARS: usize = 64;

/// The campaign directory the untrusted surfaces name files in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignDir {
    dir: PathBuf,
}

impl CampaignDir {
    /// The directory `dir` (the operator's `--campaign-dir`; resolved at each use, so it may be
    /// created later).
    pub fn new(dir: impl Into<PathBuf>) -> CampaignDir {
        CampaignDir { dir: dir.into() }
    }

    /// The regular file `name` names inside the directory (see the module docs for what is
    /// refused, and how).
    pub fn resolve(&self, name: &str) -> Result<CampaignFile, CampaignError> {
        let plain = !name.is_empty()
            && name.chars().count() <= MAX_CAMPAIGN_PATH_CHARS
            && Path::new(name)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !plain {
            // Echoed back cut, whatever its length.
            let mut shown: String = name.chars().take(SHOWN_NAME_CHARS).collect();
            if shown.len() < name.len() {
                shown.push('…');
            }
            return Err(CampaignError::PathNotRelative(shown));
        }
        let root = self.dir.canonicalize().map_err(|e| CampaignError::Io {
            path: "the campaign directory".into(),
            message: e.to_string(),
        })?;
        let missing = || CampaignError::NoSuchFile(name.to_string());
        let path = root.join(name).canonicalize().map_err(|_| missing())?;
        if !path.starts_with(&root) {
            return Err(missing());
        }
        let file = CampaignFile {
            path,
            name: name.to_string(),
        };
        file.check_regular()?;
        Ok(file)
    }
}

/// A campaign file: where it is, and how its caller named it (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CampaignFile {
    path: PathBuf,
    name: String,
}

impl CampaignFile {
    /// `path` as the operator gave it (the command line): no containment, the other checks
    /// apply.
    pub fn any(path: impl Into<PathBuf>) -> CampaignFile {
        let path = path.into();
        CampaignFile {
            name: path.display().to_string(),
            // The operator's symlinks are followed; the file itself must still be regular.
            path: path.canonicalize().unwrap_or(path),
        }
    }

    /// Where the file is (resolved, for a file inside a [`CampaignDir`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name as the caller gave it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn io(&self, e: impl std::fmt::Display) -> CampaignError {
        CampaignError::Io {
            path: self.name.clone(),
            message: e.to_string(),
        }
    }

    /// Refuses anything but a regular file, from its metadata (a symlink is not followed).
    fn check_regular(&self) -> Result<(), CampaignError> {
        match fs::symlink_metadata(&self.path) {
            Ok(meta) => self.regular(&meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(CampaignError::NoSuchFile(self.name.clone()))
            }
            Err(e) => Err(self.io(e)),
        }
    }

    fn regular(&self, meta: &fs::Metadata) -> Result<(), CampaignError> {
        if meta.is_file() {
            return Ok(());
        }
        Err(CampaignError::NotRegularFile {
            path: self.name.clone(),
            kind: kind_of(meta),
        })
    }

    /// Reads and checks the campaign: a regular file of at most [`MAX_CAMPAIGN_FILE_BYTES`],
    /// holding a campaign file's JSON (see [`Campaign::from_json`] for the rest).
    pub fn load(&self) -> Result<Loaded, CampaignError> {
        self.check_regular()?;
        let mut opened = open_options(fs::OpenOptions::new().read(true))
            .open(&self.path)
            .map_err(|e| self.open_error(e))?;
        let meta = opened.metadata().map_err(|e| self.io(e))?;
        self.regular(&meta)?;
        let too_large = |bytes| CampaignError::TooLarge {
            path: self.name.clone(),
            bytes,
            limit: MAX_CAMPAIGN_FILE_BYTES,
        };
        if meta.len() > MAX_CAMPAIGN_FILE_BYTES {
            return Err(too_large(meta.len()));
        }
        let mut bytes = Vec::new();
        (&mut opened)
            .take(MAX_CAMPAIGN_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| self.io(e))?;
        if bytes.len() as u64 > MAX_CAMPAIGN_FILE_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| CampaignError::Json(e.to_string()))?;
        if !is_campaign_file(&value) {
            return Err(CampaignError::NotACampaign(self.name.clone()));
        }
        Campaign::from_json(&value)
    }

    /// Saves `campaign` over the file (atomically, see [`file::save`]) while it is still a
    /// regular file or gone; anything else put there since it was loaded is left alone.
    pub fn save(&self, campaign: &Campaign) -> Result<(), CampaignError> {
        match self.check_regular() {
            Ok(()) | Err(CampaignError::NoSuchFile(_)) => {}
            Err(e) => return Err(e),
        }
        file::save(&self.path, campaign).map_err(|e| self.renamed(e))
    }

    /// Appends `entry` to `turn_log.jsonl` beside the file, when that is a regular file or
    /// absent (never through a symlink, never waiting on a FIFO).
    pub fn append_turn(&self, entry: &TurnEntry) -> Result<(), CampaignError> {
        let log = CampaignFile {
            path: file::turn_log_path(&self.path),
            name: file::turn_log_path(Path::new(&self.name))
                .display()
                .to_string(),
        };
        let mut opened = open_options(fs::OpenOptions::new().create(true).append(true))
            .open(&log.path)
            .map_err(|e| log.open_error(e))?;
        log.regular(&opened.metadata().map_err(|e| log.io(e))?)?;
        let mut line = entry.to_jsonl();
        line.push('\n');
        opened
            .write_all(line.as_bytes())
            .and_then(|()| opened.sync_data())
            .map_err(|e| log.io(e))
    }

    /// An error of the file's own opening: a symlink met where none may be is refused as one.
    fn open_error(&self, e: std::io::Error) -> CampaignError {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return CampaignError::NotRegularFile {
                path: self.name.clone(),
                kind: "a symlink",
            };
        }
        self.io(e)
    }

    /// An error of [`file`] naming the server's path, naming the caller's instead.
    fn renamed(&self, e: CampaignError) -> CampaignError {
        match e {
            CampaignError::Io { message, .. } => CampaignError::Io {
                path: self.name.clone(),
                message,
            },
            other => other,
        }
    }
}

/// Opening without blocking on a FIFO and without following a final symlink.
fn open_options(options: &mut fs::OpenOptions) -> &mut fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
    }
    #[cfg(not(unix))]
    {
        options
    }
}

/// What a file that is not regular is, for messages.
fn kind_of(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    if t.is_symlink() {
        return "a symlink";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// True for a campaign file's JSON: an object with a string `id` and at least one of
/// [`CAMPAIGN_KEYS`] (a file of the reference backend has all of them).
pub fn is_campaign_file(value: &Value) -> bool {
    value.get("id").is_some_and(Value::is_string)
        && CAMPAIGN_KEYS.iter().any(|k| value.get(k).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_that_could_leave_are_refused_before_the_file_system() {
        let dir = CampaignDir::new("/nonexistent-campaign-dir");
        let long = "a".repeat(MAX_CAMPAIGN_PATH_CHARS + 1);
        for name in [
            "",
            "/etc/passwd",
            "../x.json",
            "a/../../x.json",
            long.as_str(),
        ] {
            assert!(
                matches!(dir.resolve(name), Err(CampaignError::PathNotRelative(_))),
                "{name}"
            );
        }
        // A long name is echoed back cut.
        match dir.resolve(&long) {
            Err(CampaignError::PathNotRelative(shown)) => {
                assert_eq!(shown, format!("{}…", &long[..SHOWN_NAME_CHARS]))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_campaign_file_has_an_id_and_a_campaign_key() {
        assert!(is_campaign_file(&json!({"id": "camp_0001", "map": {}})));
        assert!(is_campaign_file(
            &json!({"id": "c", "selected": {}, "positions": {}})
        ));
        assert!(!is_campaign_file(&json!({"id": "c"})));
        assert!(!is_campaign_file(
            &json!({"name": "pkg", "version": "1.0.0"})
        ));
        assert!(!is_campaign_file(&json!({"id": 7, "map": {}})));
        assert!(!is_campaign_file(&json!([1, 2])));
    }
}
