//! Loaded models, one per file, shared by every agent that names it.
//!
//! [`Models::load`] gives the model of a file, loading it the first time: each [`Model`] is an
//! `Arc` that its agents' brains hold, so its memory is counted once however many agents think
//! with it, and it is unloaded (its thread ends, its memory is freed) when the last one is
//! dropped — unless it was loaded with `keep` ([`Models::load`]), then it stays until the
//! process ends.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak, mpsc};

use parking_lot::Mutex;
use tokio::sync::mpsc::unbounded_channel;

use crate::error::LocalError;
use crate::event::Event;
use crate::queue::{Answer, Queue};
use crate::settings::{Job, ModelSettings};
use crate::worker::{self, Command, ModelInfo};

/// The magic bytes every GGUF file starts with.
pub const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// A loaded model: a thread that owns it and decodes its agents' answers.
pub struct Model {
    settings: ModelSettings,
    info: ModelInfo,
    commands: mpsc::Sender<Command>,
    queue: Arc<Queue>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("settings", &self.settings)
            .field("info", &self.info)
            .finish()
    }
}

impl Model {
    /// How it was loaded.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// What it is.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Queues an answer ([`crate::queue`]): it starts when a sequence is free and its party's
    /// turn has come. Its events arrive on the [`Answer`]; dropping it cancels the answer (a
    /// waiting one leaves the queue at once, a running one stops before the next decode step).
    pub fn run(&self, job: Job) -> Answer {
        let (events, receiver) = unbounded_channel();
        let id = self.queue.push(Box::new(job), events.clone());
        if self.commands.send(Command::Queued).is_err() {
            self.queue.remove(id);
            let _ = events.send(Event::Failed(LocalError::Stopped));
        }
        Answer::new(receiver, id, self.queue.clone())
    }

    /// How many answers wait for a sequence.
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// The agent `key` left: the cache of its prompt may be dropped.
    pub fn forget(&self, key: &str) {
        let _ = self.commands.send(Command::Forget(key.to_string()));
    }
}

/// The models loaded in this process, by file.
#[derive(Default)]
pub struct Models {
    loaded: Mutex<HashMap<PathBuf, Weak<Model>>>,
    kept: Mutex<Vec<Arc<Model>>>,
}

impl Models {
    /// The process's models.
    pub fn global() -> &'static Models {
        static MODELS: OnceLock<Models> = OnceLock::new();
        MODELS.get_or_init(Models::default)
    }

    /// Checks, without loading, what can be told before an agent uses `settings`: the file
    /// exists, is GGUF, fits the memory free, a GPU is there for `gpu_layers`
    /// ([`crate::gpu::check`]), and it agrees with the settings it is loaded with already.
    pub fn check(&self, settings: &ModelSettings) -> Result<(), LocalError> {
        check_file(&settings.path)?;
        crate::gpu::check(settings.gpu_layers)?;
        if let Some(model) = self.loaded_model(&settings.path) {
            agree(&model.settings, settings)?;
        }
        Ok(())
    }

    /// The model of `settings.path`, loaded now unless it is already (then its settings must
    /// agree). Blocks while it loads, and so does every other load meanwhile (two agents
    /// naming one file at once must not load it twice). `keep`: it stays loaded when its last
    /// agent leaves.
    pub fn load(&self, settings: &ModelSettings, keep: bool) -> Result<Arc<Model>, LocalError> {
        let mut loaded = self.loaded.lock();
        let key = canonical(&settings.path);
        if let Some(model) = loaded.get(&key).and_then(Weak::upgrade) {
            agree(&model.settings, settings)?;
            if keep {
                self.keep(&model);
            }
            return Ok(model);
        }
        check_file(&settings.path)?;
        crate::gpu::check(settings.gpu_layers)?;
        let queue = Arc::new(Queue::default());
        let (commands, info) = worker::start(settings.clone(), queue.clone())?;
        let model = Arc::new(Model {
            settings: settings.clone(),
            info,
            commands,
            queue,
        });
        loaded.retain(|_, m| m.strong_count() > 0);
        loaded.insert(key, Arc::downgrade(&model));
        if keep {
            self.keep(&model);
        }
        Ok(model)
    }

    fn keep(&self, model: &Arc<Model>) {
        let mut kept = self.kept.lock();
        if !kept.iter().any(|m| Arc::ptr_eq(m, model)) {
            kept.push(model.clone());
        }
    }

    /// The model of `path` if it is loaded.
    pub fn loaded_model(&self, path: &Path) -> Option<Arc<Model>> {
        self.loaded
            .lock()
            .get(&canonical(path))
            .and_then(Weak::upgrade)
    }

    /// Ends the models of this process before it ends or the library holding this code is
    /// unloaded (a Godot extension at its end): the kept models are let go, and this waits, up
    /// to `timeout`, until every model's thread has ended — a model ends when the last agent
    /// using it is gone, after the decode step under way (at most a batch of prompt tokens).
    /// A thread still decoding while the process exits would run code being torn down. False
    /// when some thread had not ended in time (an agent still holds its model).
    pub fn shutdown(&self, timeout: std::time::Duration) -> bool {
        self.kept.lock().clear();
        worker::join_all(std::time::Instant::now() + timeout)
    }

    /// How many models are loaded.
    pub fn loaded_count(&self) -> usize {
        self.loaded
            .lock()
            .values()
            .filter(|m| m.strong_count() > 0)
            .count()
    }
}

/// The path a file is known by (the same file named two ways is one model).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A model file that exists, is GGUF, and fits the memory this machine has free.
fn check_file(path: &Path) -> Result<(), LocalError> {
    use std::io::Read;
    let unreadable = |e: std::io::Error| LocalError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LocalError::NotFound(path.to_path_buf()));
        }
        Err(e) => return Err(unreadable(e)),
    };
    if !meta.is_file() {
        return Err(LocalError::NotGguf(path.to_path_buf()));
    }
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => LocalError::NotGguf(path.to_path_buf()),
            _ => unreadable(e),
        });
    read?;
    if &magic != GGUF_MAGIC {
        return Err(LocalError::NotGguf(path.to_path_buf()));
    }
    if let Some(available) = available_memory()
        && meta.len() > available
    {
        return Err(LocalError::TooLarge {
            path: path.to_path_buf(),
            size_mb: meta.len() >> 20,
            available_mb: available >> 20,
        });
    }
    Ok(())
}

/// Bytes of memory available now (Linux: `MemAvailable`); `None` where it cannot be told.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Agents on one file share its settings: a different one is an error naming it.
fn agree(loaded: &ModelSettings, asked: &ModelSettings) -> Result<(), LocalError> {
    for (field, a, b) in [
        (
            "context_size",
            loaded.context_size.to_string(),
            asked.context_size.to_string(),
        ),
        (
            "sequences",
            loaded.sequences.to_string(),
            asked.sequences.to_string(),
        ),
        (
            "threads",
            loaded.threads.to_string(),
            asked.threads.to_string(),
        ),
        (
            "gpu_layers",
            loaded.gpu_layers.to_string(),
            asked.gpu_layers.to_string(),
        ),
        (
            "chat_template",
            format!("{:?}", loaded.chat_template),
            format!("{:?}", asked.chat_template),
        ),
    ] {
        if a != b {
            return Err(LocalError::SettingsDiffer {
                path: asked.path.clone(),
                field,
                loaded: a,
                asked: b,
            });
        }
    }
    Ok(())
}
