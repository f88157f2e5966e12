//! Model files inside an exported game's pack, copied once into the user folder.
//!
//! llama.cpp opens a model by its path, and a file inside an exported game's `.pck` has none.
//! So a `local` brain naming `res://models/npc.gguf` opens:
//!
//! - the file itself when `res://` is a folder on disk (the editor, a project run from source);
//! - otherwise its copy at `user://models/packed/models/npc.gguf` ([`copy_path`]). A copy of
//!   the file's size is the file, copied before: used as it is. Else the copy is begun (the
//!   first time the brain becomes its settings: a spawn, `validate()`) and made — into
//!   `<copy>.partial`, flushed to disk and renamed on a thread of its own when complete — a
//!   millisecond of each frame ([`FRAME_BUDGET`], on the main thread: only Godot reads its
//!   pack) while any
//!   [`AgentRuntime`](crate::agent_runtime::AgentRuntime) runs. Agents that need the model wait
//!   for it at their first decision and report its progress like a download's
//!   (`model_download_progress`, with the `res://` path); a copy that fails (a full disk) is
//!   their `brain_model_download_failed` error, and the next spawn tries again.
//!
//! No Godot object is held between frames (each step opens the pack file again at its offset),
//! so a copy left unfinished at exit leaks nothing.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agents_local::download::partial_path;
use agents_local::{Downloads, Filling};
use godot::classes::FileAccess;
use godot::classes::file_access::ModeFlags;
use godot::prelude::*;

use crate::paths::globalize_path;

/// The folder under `user://` copies are kept in.
pub const COPY_DIR: &str = "user://models/packed";

/// The longest a frame spends copying: a game's frame keeps its pace while a model is copied
/// (about 60 MB a second at 60 frames a second: a 250 MB model in four seconds).
pub const FRAME_BUDGET: Duration = Duration::from_millis(1);

/// Bytes read from the pack at a time: small enough that one read and write stays well
/// within [`FRAME_BUDGET`].
const CHUNK: i64 = 1 << 18;

/// A copy under way.
struct Copy {
    /// The file in the pack (`res://…`).
    from: String,
    /// `<copy>.partial`, being written.
    file: std::fs::File,
    /// The file's size, and how much of it was copied.
    total: u64,
    copied: u64,
    filling: Filling,
}

thread_local! {
    /// The copies under way (Godot's main thread makes and advances them).
    static COPIES: RefCell<Vec<Copy>> = const { RefCell::new(Vec::new()) };
}

/// A `local` brain's files as paths of this machine, whichever way the brain arrived (an
/// [AgentBrain](crate::agent_brain::AgentBrain), a Dictionary given to `spawn_agent`, an
/// [AgentConfig](crate::agent_config::AgentConfig)): `model` in the project (`res://`: the file,
/// or its copy out of an exported game's pack, [`model_path`]) or in the user folder
/// (`user://`), and `model_cache`, which is the user folder's `models` when a `model_url` is
/// given without one. Other providers' options, and paths already of this machine, are left as
/// they are.
pub fn localize_brain(provider: &str, options: &mut serde_json::Map<String, serde_json::Value>) {
    use serde_json::Value;
    if provider != "local" {
        return;
    }
    if let Some(Value::String(model)) = options.get("model") {
        let local = if model.starts_with("res://") {
            model_path(model)
        } else {
            globalize_path(model)
        };
        options.insert("model".into(), Value::String(local));
    }
    let has_url = options
        .get("model_url")
        .is_some_and(|url| url.as_str().is_some_and(|u| !u.trim().is_empty()));
    if has_url && !options.contains_key("model_cache") {
        options.insert("model_cache".into(), Value::String("user://models".into()));
    }
    if let Some(Value::String(cache)) = options.get("model_cache") {
        let local = globalize_path(cache);
        options.insert("model_cache".into(), Value::String(local));
    }
}

/// Where the copy of `res_path` (a `res://` path) is kept: `user://models/packed/` and the path
/// under `res://`, as a path of this machine.
pub fn copy_path(res_path: &str) -> PathBuf {
    let under = res_path.trim_start_matches("res://");
    PathBuf::from(globalize_path(COPY_DIR)).join(under)
}

/// The file a `local` brain opens for the model at `res_path` (see the module docs): the file
/// itself when it is on disk, else its copy — begun here when it is not there yet. A path that
/// names no file stays as it is (the brain says it does not exist).
pub fn model_path(res_path: &str) -> String {
    let global = globalize_path(res_path);
    if Path::new(&global).is_absolute() && Path::new(&global).is_file() {
        return global;
    }
    if !FileAccess::file_exists(res_path) {
        return res_path.to_string();
    }
    let target = copy_path(res_path);
    let shown = target.to_string_lossy().into_owned();
    if Downloads::global().is_pending(&target) {
        return shown;
    }
    let Some(total) = FileAccess::open(res_path, ModeFlags::READ).map(|f| f.get_length()) else {
        return res_path.to_string();
    };
    if std::fs::metadata(&target).is_ok_and(|m| m.len() == total) {
        return shown;
    }
    if let Some(filling) = Downloads::global().begin(&target, res_path) {
        match start(res_path, &target, total, filling) {
            Ok(copy) => COPIES.with_borrow_mut(|copies| copies.push(copy)),
            Err(e) => godot_error!("Godot Agents: {e}"),
        }
    }
    shown
}

/// Opens `<target>.partial` for a copy of `from` (the filling ends with the error otherwise).
fn start(from: &str, target: &Path, total: u64, filling: Filling) -> Result<Copy, String> {
    let partial = partial_path(target);
    let opened = target
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::File::create(&partial));
    match opened {
        Ok(file) => {
            filling.progress(0, total);
            Ok(Copy {
                from: from.to_string(),
                file,
                total,
                copied: 0,
                filling,
            })
        }
        Err(e) => {
            let message = format!("cannot write {}: {e}", partial.display());
            filling.finish(Err(message.clone()));
            Err(format!("cannot copy the model {from}: {message}"))
        }
    }
}

/// Copies for at most `budget`; copies that end (complete or failed) are finished.
pub fn advance(budget: Duration) {
    report_failures();
    let started = Instant::now();
    COPIES.with_borrow_mut(|copies| {
        let mut i = 0;
        while i < copies.len() {
            let left = budget.saturating_sub(started.elapsed());
            match step(&mut copies[i], left) {
                Ok(false) => i += 1,
                ended => {
                    let copy = copies.remove(i);
                    finish(copy, ended.map(|_| ()));
                }
            }
            if started.elapsed() >= budget {
                break;
            }
        }
    });
}

/// Copies chunks of `copy` for up to `budget` (one at least): `Ok(true)` when it is complete.
fn step(copy: &mut Copy, budget: Duration) -> Result<bool, String> {
    if copy.copied >= copy.total {
        // An empty file is copied at once (and the brain then says it is no model).
        return Ok(true);
    }
    let started = Instant::now();
    let mut source = FileAccess::open(&copy.from, ModeFlags::READ)
        .ok_or_else(|| format!("cannot open {} in the game's pack", copy.from))?;
    source.seek(copy.copied);
    loop {
        let want = CHUNK.min(i64::try_from(copy.total - copy.copied).unwrap_or(CHUNK));
        let bytes = source.get_buffer(want);
        if bytes.is_empty() {
            return Err(format!(
                "{} ended after {} of {} bytes",
                copy.from, copy.copied, copy.total
            ));
        }
        copy.file.write_all(bytes.as_slice()).map_err(|e| {
            let partial = partial_path(copy.filling.path());
            format!("cannot write {}: {e}", partial.display())
        })?;
        copy.copied += bytes.len() as u64;
        copy.filling.progress(copy.copied, copy.total);
        if copy.copied >= copy.total {
            return Ok(true);
        }
        if started.elapsed() >= budget {
            return Ok(false);
        }
    }
}

/// Copies that failed since the last frame, reported on the main thread.
static FAILED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Ends a copy on a thread of its own (flushing hundreds of megabytes to disk takes longer
/// than a frame): the complete one becomes the file, a failed one is deleted and reported at
/// the next frame.
fn finish(copy: Copy, result: Result<(), String>) {
    let Copy {
        from,
        file,
        filling,
        ..
    } = copy;
    let end = move || {
        let target = filling.path().to_path_buf();
        let partial = partial_path(&target);
        let result = result.and_then(|()| {
            file.sync_all()
                .and_then(|()| std::fs::rename(&partial, &target))
                .map_err(|e| format!("cannot move it to {}: {e}", target.display()))
        });
        if let Err(e) = &result {
            let _ = std::fs::remove_file(&partial);
            if let Ok(mut failed) = FAILED.lock() {
                failed.push(format!("cannot copy the model {from}: {e}"));
            }
        }
        filling.finish(result);
    };
    let spawned = std::thread::Builder::new()
        .name("agents-model-copy".into())
        .spawn(end);
    if let Err(e) = spawned {
        godot_error!("Godot Agents: cannot finish a model's copy: {e}");
    }
}

/// Reports the copies that failed since the last frame.
fn report_failures() {
    let failed = FAILED.lock().map(|mut f| std::mem::take(&mut *f));
    for message in failed.unwrap_or_default() {
        godot_error!("Godot Agents: {message}");
    }
}
