//! Model files from a URL: downloaded once into a cache, resumed after a cut, checked against
//! their SHA-256 before they are used.
//!
//! A [`Source`] is a URL and the SHA-256 the file must have. [`Downloads::fetch`] gives the
//! file's place in a cache directory ([`Source::cached_path`]), downloading it first unless it
//! is there already:
//!
//! - **Once.** The bytes arrive in `<file>.partial`, which becomes `<file>` only when its hash is
//!   the one asked for; a file at `<file>` is a checked one, and is used as it is. Agents asking
//!   for a file that is downloading share that download ([`Downloads::fetch`] joins it), and the
//!   download goes on if the agent that started it stops waiting.
//! - **Resumed.** A `.partial` left by a cut (a dropped connection, a stopped game) is
//!   continued with an HTTP `Range` request; a server that ignores ranges sends the whole file
//!   again. Within one fetch a cut is resumed up to [`ATTEMPTS`] times while bytes still arrive.
//! - **Checked.** A file whose SHA-256 differs is deleted and reported
//!   ([`LocalError::ChecksumMismatch`]): the next fetch starts over.
//! - **Watched.** Every fetch reports [`Progress`] (bytes received, of how many when the server
//!   says), at most every [`PROGRESS_BYTES`], and the end (the whole file) to every agent that
//!   waited for it.
//!
//! A file can also be written by its owner rather than downloaded — a game copying a model out
//! of its exported pack, where llama.cpp cannot open it. [`Downloads::begin`] announces it; the
//! owner reports its progress and its end on the [`Filling`] it gets, and agents that need the
//! file wait for it ([`Downloads::wait`]) as they would for a download.
//!
//! URLs are the game's or the operator's configuration, never a client's; errors name them
//! without their query string (which may hold a token).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::error::LocalError;

/// Tries per fetch: a cut after some bytes arrived is resumed, up to this many times in all.
pub const ATTEMPTS: u32 = 4;

/// Progress is reported after at least this many new bytes (and at the end).
pub const PROGRESS_BYTES: u64 = 1 << 20;

/// The longest a fetch waits for the server to answer or for the next bytes.
const STALL: std::time::Duration = std::time::Duration::from_secs(60);

/// A model file to download: where from, and the hash it must have.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    url: reqwest::Url,
    sha256: String,
}

impl Source {
    /// A source: `url` is `http` or `https`; `sha256` is 64 hexadecimal digits (either case).
    /// The error says which is wrong.
    pub fn new(url: &str, sha256: &str) -> Result<Source, String> {
        let url = Source::check_url(url)?;
        Source::check_sha256(sha256)?;
        Ok(Source {
            url,
            sha256: sha256.to_ascii_lowercase(),
        })
    }

    /// The URL of a source, checked: `http` or `https`, with a host. The error says why not.
    pub fn check_url(url: &str) -> Result<reqwest::Url, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "the URL's scheme is {:?}; only http and https are downloaded",
                parsed.scheme()
            ));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err("the URL names no host".into());
        }
        Ok(parsed)
    }

    /// A source's hash, checked: 64 hexadecimal digits (either case). The error says why not.
    pub fn check_sha256(sha256: &str) -> Result<(), String> {
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "a SHA-256 is 64 hexadecimal digits; got {} characters",
                sha256.chars().count()
            ));
        }
        Ok(())
    }

    /// The URL as errors and progress show it: without its query and fragment.
    pub fn display_url(&self) -> String {
        let mut shown = self.url.clone();
        shown.set_query(None);
        shown.set_fragment(None);
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        shown.to_string()
    }

    /// The hash the file must have (lower case).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Where the file is kept in `cache_dir`: `<first 16 digits of its hash>-<the URL's file
    /// name>`, so two files of one name are two files, and one file under two URLs is one.
    pub fn cached_path(&self, cache_dir: &Path) -> PathBuf {
        let name: String = self
            .url
            .path_segments()
            .and_then(|mut segments| segments.next_back())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .take(96)
            .collect();
        let name = match name.trim_start_matches('.') {
            "" => "model.gguf".to_string(),
            n => n.to_string(),
        };
        cache_dir.join(format!("{}-{name}", &self.sha256[..16]))
    }
}

/// The cache for downloaded models when none is named: the user's cache directory
/// (`$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on
/// Windows), then `godot-agents/models`. A Godot game uses `user://models` instead.
pub fn default_cache_dir() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|home| home.join("Library").join("Caches"))
    } else {
        var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|home| home.join(".cache")))
    };
    base.unwrap_or_else(std::env::temp_dir)
        .join("godot-agents")
        .join("models")
}

/// How far a download is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the file received (a resumed download counts what it had).
    pub received: u64,
    /// The file's size, when the server says.
    pub total: Option<u64>,
}

/// Where a fetch is: running, or ended.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// Bytes are arriving.
    Running(Progress),
    /// The file is at the path, checked; or the fetch failed.
    Done(Result<PathBuf, LocalError>),
}

/// The files being written, each with where it comes from (a URL without its query, or the
/// name a [`Filling`] was begun with) and how far it is.
type Running = Arc<Mutex<HashMap<PathBuf, (String, watch::Receiver<State>)>>>;

/// The downloads of this process, one per file.
#[derive(Default)]
pub struct Downloads {
    running: Running,
}

impl Downloads {
    /// The process's downloads.
    pub fn global() -> &'static Downloads {
        static DOWNLOADS: OnceLock<Downloads> = OnceLock::new();
        DOWNLOADS.get_or_init(Downloads::default)
    }

    /// The file of `source` in `cache_dir`: at once when it is there, else when it has been
    /// downloaded and checked. `on_progress` hears how the download goes (whoever started
    /// it). Dropping the future stops waiting, not the download (it runs on the Tokio runtime
    /// it was started from).
    pub async fn fetch(
        &self,
        source: &Source,
        cache_dir: &Path,
        on_progress: impl FnMut(Progress),
    ) -> Result<PathBuf, LocalError> {
        let path = source.cached_path(cache_dir);
        if path.is_file() {
            return Ok(path);
        }
        let state = {
            let mut running = self.running.lock();
            match running.get(&path) {
                Some((_, state)) if !matches!(*state.borrow(), State::Done(_)) => state.clone(),
                _ => {
                    let (sender, receiver) = watch::channel(State::Running(Progress::default()));
                    running.insert(path.clone(), (source.display_url(), receiver.clone()));
                    let (source, target) = (source.clone(), path.clone());
                    let downloads = self.running.clone();
                    tokio::spawn(async move {
                        let result = download(&source, &target, &sender).await;
                        downloads.lock().remove(&target);
                        let _ = sender.send(State::Done(result));
                    });
                    receiver
                }
            }
        };
        follow(state, on_progress, || LocalError::Download {
            url: source.display_url(),
            message: "the download stopped (the runtime is shutting down)".into(),
        })
        .await
    }

    /// Announces that the file at `path` is being written by the caller, from `from` (what
    /// progress and errors name it by, such as `res://models/npc.gguf`): until the returned
    /// [`Filling`] ends, agents that need the file wait for it ([`Downloads::wait`]). `None`
    /// when the file is being downloaded or written already.
    pub fn begin(&self, path: &Path, from: &str) -> Option<Filling> {
        let mut running = self.running.lock();
        if running
            .get(path)
            .is_some_and(|(_, state)| !matches!(*state.borrow(), State::Done(_)))
        {
            return None;
        }
        let (sender, receiver) = watch::channel(State::Running(Progress::default()));
        running.insert(path.to_path_buf(), (from.to_string(), receiver));
        Some(Filling {
            path: path.to_path_buf(),
            from: from.to_string(),
            sender,
            running: self.running.clone(),
            ended: false,
        })
    }

    /// True while the file at `path` is being downloaded or written.
    pub fn is_pending(&self, path: &Path) -> bool {
        self.running
            .lock()
            .get(path)
            .is_some_and(|(_, state)| !matches!(*state.borrow(), State::Done(_)))
    }

    /// When the file at `path` is being downloaded or written: waits for its end, giving
    /// `on_progress` where it comes from and how far it is (the end included). `None` when
    /// nothing is writing it.
    pub async fn wait(
        &self,
        path: &Path,
        mut on_progress: impl FnMut(&str, Progress),
    ) -> Option<Result<PathBuf, LocalError>> {
        let (from, state) = self.running.lock().get(path).cloned()?;
        let stopped = || LocalError::Copy {
            from: from.clone(),
            message: "it stopped before the end".into(),
        };
        Some(follow(state, |progress| on_progress(&from, progress), stopped).await)
    }
}

/// A file being written by the caller of [`Downloads::begin`]. Dropping it before
/// [`Filling::finish`] ends it as failed, so nobody waits for it forever.
pub struct Filling {
    path: PathBuf,
    from: String,
    sender: watch::Sender<State>,
    running: Running,
    ended: bool,
}

impl Filling {
    /// Where the file is being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reports how far it is: `received` of `total` bytes.
    pub fn progress(&self, received: u64, total: u64) {
        self.sender.send_replace(State::Running(Progress {
            received,
            total: Some(total),
        }));
    }

    /// Ends it: the file is complete at its path, or `Err` says why it is not (waiting agents
    /// get [`LocalError::Copy`]).
    pub fn finish(mut self, result: Result<(), String>) {
        self.end(result.map_err(|message| LocalError::Copy {
            from: self.from.clone(),
            message,
        }));
    }

    fn end(&mut self, result: Result<(), LocalError>) {
        self.ended = true;
        self.running.lock().remove(&self.path);
        self.sender
            .send_replace(State::Done(result.map(|()| self.path.clone())));
    }
}

impl Drop for Filling {
    fn drop(&mut self) {
        if !self.ended {
            let stopped = LocalError::Copy {
                from: self.from.clone(),
                message: "it stopped before the end".into(),
            };
            self.end(Err(stopped));
        }
    }
}

/// Follows a file being written to its end, reporting progress (and, to every follower, the
/// end as the whole file however many reports it missed). `stopped` is the error when the
/// writer vanished without a word.
async fn follow(
    mut state: watch::Receiver<State>,
    mut on_progress: impl FnMut(Progress),
    stopped: impl FnOnce() -> LocalError,
) -> Result<PathBuf, LocalError> {
    loop {
        let now = state.borrow_and_update().clone();
        match now {
            State::Running(progress) => on_progress(progress),
            State::Done(result) => {
                if let Ok(done) = &result
                    && let Ok(meta) = std::fs::metadata(done)
                {
                    on_progress(Progress {
                        received: meta.len(),
                        total: Some(meta.len()),
                    });
                }
                return result;
            }
        }
        if state.changed().await.is_err() {
            // The writer ended without a word (a download's task, when the runtime shuts down).
            return match state.borrow().clone() {
                State::Done(result) => result,
                State::Running(_) => Err(stopped()),
            };
        }
    }
}

/// Downloads `source` to `target` (through `target.partial`), resuming and checking it.
async fn download(
    source: &Source,
    target: &Path,
    progress: &watch::Sender<State>,
) -> Result<PathBuf, LocalError> {
    let failed = |message: String| LocalError::Download {
        url: source.display_url(),
        message,
    };
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
    }
    agents_llm::client::install_tls_provider();
    let client = reqwest::Client::builder()
        .user_agent(concat!("godot-agents/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(STALL)
        .read_timeout(STALL)
        .build()
        .map_err(|e| failed(format!("cannot build the HTTP client: {e}")))?;
    let partial = partial_path(target);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let had = std::fs::metadata(&partial).map_or(0, |m| m.len());
        match receive(&client, source, &partial, had, progress).await {
            Ok(()) => break,
            Err(Cut::Retry(message)) if attempt < ATTEMPTS => {
                tracing::warn!(url = %source.display_url(), "model download cut, resuming: {message}");
            }
            Err(Cut::Retry(message) | Cut::Fail(message)) => return Err(failed(message)),
        }
    }
    let hashed = partial.clone();
    let got = tokio::task::spawn_blocking(move || file_sha256(&hashed))
        .await
        .map_err(|e| failed(format!("hashing it stopped: {e}")))?
        .map_err(|e| failed(format!("cannot read it back: {e}")))?;
    if got != source.sha256 {
        let _ = std::fs::remove_file(&partial);
        return Err(LocalError::ChecksumMismatch {
            url: source.display_url(),
            expected: source.sha256.clone(),
            got,
        });
    }
    std::fs::rename(&partial, target)
        .map_err(|e| failed(format!("cannot move it to {}: {e}", target.display())))?;
    Ok(target.to_path_buf())
}

/// Why one request ended before the whole file: worth resuming, or not.
enum Cut {
    Retry(String),
    Fail(String),
}

/// One request: the rest of the file from byte `had` appended to `partial`.
async fn receive(
    client: &reqwest::Client,
    source: &Source,
    partial: &Path,
    had: u64,
    progress: &watch::Sender<State>,
) -> Result<(), Cut> {
    let mut request = client.get(source.url.clone());
    if had > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={had}-"));
    }
    let mut response = request
        .send()
        .await
        .map_err(|e| Cut::Retry(format!("the server could not be reached: {}", plain(e))))?;
    let status = response.status();
    let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT && had > 0;
    if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && had > 0 {
        // What is there may be the whole file: the hash will tell.
        return Ok(());
    }
    if !status.is_success() {
        let retry = status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
        let message = format!("the server answered HTTP {status}");
        return Err(if retry {
            Cut::Retry(message)
        } else {
            Cut::Fail(message)
        });
    }
    let io = |e: std::io::Error| Cut::Fail(format!("cannot write {}: {e}", partial.display()));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(resumed)
        .truncate(!resumed)
        .open(partial)
        .map_err(io)?;
    let mut received = if resumed { had } else { 0 };
    let total = response.content_length().map(|rest| rest + received);
    let mut reported = received;
    progress.send_replace(State::Running(Progress { received, total }));
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                file.flush().map_err(io)?;
                return Err(Cut::Retry(format!(
                    "the connection was cut after {received} bytes: {}",
                    plain(e)
                )));
            }
        };
        file.write_all(&chunk).map_err(io)?;
        received += chunk.len() as u64;
        if received - reported >= PROGRESS_BYTES {
            reported = received;
            progress.send_replace(State::Running(Progress { received, total }));
        }
    }
    file.flush().map_err(io)?;
    progress.send_replace(State::Running(Progress { received, total }));
    if let Some(total) = total
        && received < total
    {
        return Err(Cut::Retry(format!(
            "the connection was cut after {received} of {total} bytes"
        )));
    }
    Ok(())
}

/// An HTTP error without the URL reqwest puts in it (it may hold a token).
fn plain(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `<target>.partial`: where a file is written until it is complete.
pub fn partial_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    target.with_file_name(name)
}

/// The SHA-256 of a file, in lower-case hexadecimal.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_checked_and_named_by_their_hash_and_file() {
        let hash = "A5FD3B62230AA5EC60212297DC9D20EAA70578AC519E00D93A17E44C087A6818";
        let source = Source::new(
            "https://user:pw@models.example/g/gemma 3.gguf?token=secret#x",
            hash,
        )
        .unwrap();
        assert_eq!(source.sha256(), hash.to_ascii_lowercase());
        assert_eq!(
            source.display_url(),
            "https://models.example/g/gemma%203.gguf"
        );
        assert_eq!(
            source.cached_path(Path::new("/c")),
            Path::new("/c/a5fd3b62230aa5ec-gemma_203.gguf")
        );
        let bare = Source::new("http://h/", hash).unwrap();
        assert_eq!(
            bare.cached_path(Path::new("/c")),
            Path::new("/c/a5fd3b62230aa5ec-model.gguf")
        );
        assert!(
            Source::new("file:///etc/passwd", hash)
                .unwrap_err()
                .contains("only http and https")
        );
        assert!(
            Source::new("not a url", hash)
                .unwrap_err()
                .contains("not a URL")
        );
        assert!(
            Source::new("https://h/m.gguf", "abc")
                .unwrap_err()
                .contains("64 hexadecimal digits; got 3")
        );
        assert!(Source::new("https://h/m.gguf", &"g".repeat(64)).is_err());
    }
}
