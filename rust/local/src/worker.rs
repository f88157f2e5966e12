//! The thread that owns a loaded model and its context, and decodes every agent's answer.
//!
//! One thread per loaded model, as NobodyWho keeps its model context behind a channel: llama.cpp
//! contexts are not shared between threads, and one thread feeding one context is what lets
//! answers be decoded together. The loop:
//!
//! 1. takes waiting jobs from the model's queue (blocking only while nothing runs or waits),
//!    in turns between parties ([`crate::queue`]), and starts each on a free sequence — its
//!    agent's own if it has one, so the prompt's cached prefix is reused: only the tokens
//!    after the longest common prefix with what the sequence holds are evaluated;
//! 2. shares prefixes between agents: a prompt that starts with more of what another
//!    sequence holds (the rules and tools every agent on the model is given) takes that prefix
//!    by llama.cpp's sequence copy instead of reading it; when several prompts with one prefix
//!    start together, one reads it and the others wait for it, then copy it
//!    ([`Worker::plan_share`]);
//! 3. builds one batch from every running answer — a prompt's next chunk, or the token just
//!    chosen plus those the grammar forces — up to [`BATCH_TOKENS`];
//! 4. decodes it once, and for every answer whose last token was in it chooses the next token
//!    ([`crate::sampler`]) and streams its text;
//! 5. drops answers whose receiver is gone (the agent was interrupted, terminated, or its
//!    runtime shut down) before the next batch: cancellation takes at most one decode step;
//!    and fails those past their time limit ([`Job::timeout`]), freeing their sequences.

use std::num::NonZeroU32;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use crate::error::LocalError;
use crate::event::{Event, Outcome};
use crate::queue::Queue;
use crate::sampler::{Closers, Constrained, Pick, grammar};
use crate::settings::{FALLBACK_TEMPLATE, Job, ModelSettings};

/// The most tokens decoded in one batch.
pub const BATCH_TOKENS: usize = 512;

/// The fewest tokens worth taking from another agent's sequence rather than reading: a copy
/// moves a whole sequence's cache (a few milliseconds for a small model), reading takes
/// milliseconds per token.
pub const MIN_SHARED: usize = 16;

/// What a loaded model is.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// Bytes of its weights.
    pub size_bytes: u64,
    /// Its parameters.
    pub parameters: u64,
    /// The context it was trained with.
    pub context_train: u32,
    /// Whether the file carries a chat template.
    pub has_template: bool,
    /// Entries of its vocabulary.
    pub vocabulary: u32,
}

/// What the worker is asked.
pub(crate) enum Command {
    /// An answer was queued.
    Queued,
    /// An agent left: its sequence's cache may go.
    Forget(String),
}

/// The process's llama.cpp backend (initialised once, with llama.cpp's logs off). llama.cpp
/// starts once per process: code that uses `llama-cpp-2` beside this crate takes it from here.
pub fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LocalError::Decode(format!("llama.cpp did not start: {e}")))
}

/// After how many tokens an answer of at most `max_tokens` winds down (closes what is open,
/// [`Constrained::wind_down`]): a quarter of them (4 to 48) are kept for closing.
pub fn wind_down_at(max_tokens: u32) -> u32 {
    max_tokens - (max_tokens / 4).clamp(4, 48).min(max_tokens)
}

/// The model threads started in this process (finished ones are dropped as new ones start).
static THREADS: parking_lot::Mutex<Vec<std::thread::JoinHandle<()>>> =
    parking_lot::Mutex::new(Vec::new());

/// Waits until every model thread has ended, or `deadline` passed: false then. A thread ends
/// once its model is dropped, after the decode step under way.
pub(crate) fn join_all(deadline: Instant) -> bool {
    let threads = std::mem::take(&mut *THREADS.lock());
    let mut all = true;
    for thread in threads {
        while !thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if thread.is_finished() {
            let _ = thread.join();
        } else {
            all = false;
            THREADS.lock().push(thread);
        }
    }
    all
}

/// Starts the worker of `settings`' model: loads it on its own thread and waits until it is
/// loaded (or failed to).
pub(crate) fn start(
    settings: ModelSettings,
    queue: Arc<Queue>,
) -> Result<(mpsc::Sender<Command>, ModelInfo), LocalError> {
    let (commands, receiver) = mpsc::channel();
    let (ready, loaded) = mpsc::channel();
    let name = format!(
        "agents-local-{}",
        settings
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let thread = std::thread::Builder::new()
        .name(name)
        .spawn(move || run(settings, queue, receiver, ready))
        .map_err(|e| LocalError::Decode(format!("cannot start the model's thread: {e}")))?;
    let mut threads = THREADS.lock();
    threads.retain(|t| !t.is_finished());
    threads.push(thread);
    drop(threads);
    let info = loaded.recv().map_err(|_| LocalError::Stopped)??;
    Ok((commands, info))
}

fn run(
    settings: ModelSettings,
    queue: Arc<Queue>,
    commands: mpsc::Receiver<Command>,
    ready: mpsc::Sender<Result<ModelInfo, LocalError>>,
) {
    let loaded = (|| {
        let backend = backend()?;
        let params = LlamaModelParams::default().with_n_gpu_layers(settings.gpu_layers);
        let model = LlamaModel::load_from_file(backend, &settings.path, &params)
            .map_err(|_| LocalError::LoadFailed(settings.path.clone()))?;
        Ok::<_, LocalError>((backend, Arc::new(model)))
    })();
    let (backend, model) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let threads = settings.threads();
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(settings.context_size * settings.sequences))
        .with_n_seq_max(settings.sequences)
        .with_n_batch(BATCH_TOKENS as u32)
        .with_n_ubatch(BATCH_TOKENS as u32)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        // A sliding-window model keeps its whole window, so a prefix can be kept and the rest
        // of a sequence removed.
        .with_swa_full(true);
    let ctx = match model.new_context(backend, params) {
        Ok(ctx) => ctx,
        Err(e) => {
            let _ = ready.send(Err(LocalError::ContextFailed {
                tokens: settings.context_size,
                sequences: settings.sequences,
                message: e.to_string(),
            }));
            return;
        }
    };
    let template = model.chat_template(None).ok();
    let info = ModelInfo {
        size_bytes: model.size(),
        parameters: model.n_params(),
        context_train: model.n_ctx_train(),
        has_template: template.is_some(),
        vocabulary: model.n_vocab().max(0) as u32,
    };
    let template = match template {
        Some(t) => t,
        None => match LlamaChatTemplate::new(
            settings
                .chat_template
                .as_deref()
                .unwrap_or(FALLBACK_TEMPLATE),
        ) {
            Ok(t) => t,
            Err(e) => {
                let _ = ready.send(Err(LocalError::Template(e.to_string())));
                return;
            }
        },
    };
    let tok_env: toktrie::TokEnv = Arc::new(Tokenizer {
        trie: llama_cpp_2::sampling::LlamaSampler::llguidance_tok_env(&model)
            .tok_trie()
            .clone(),
        model: model.clone(),
    });
    // Forced tokens are taken without sampling (`Constrained::forced`).
    let capabilities = toktrie::InferenceCapabilities {
        ff_tokens: true,
        ..Default::default()
    };
    let mut factory = match llguidance::ParserFactory::new(
        &tok_env,
        capabilities,
        &llguidance::earley::SlicedBiasComputer::general_slices(),
    ) {
        Ok(f) => f,
        Err(e) => {
            let _ = ready.send(Err(LocalError::Grammar(e.to_string())));
            return;
        }
    };
    factory.quiet();
    if ready.send(Ok(info)).is_err() {
        return;
    }
    let closers = {
        let trie = tok_env.tok_trie();
        Arc::new(Closers::new(
            (0..trie.vocab_size() as u32).map(|t| trie.token(t)),
        ))
    };
    let mut worker = Worker {
        closers,
        slots: (0..settings.sequences)
            .map(|seq| Slot::new(seq as i32))
            .collect(),
        settings,
        model: &model,
        ctx,
        template,
        factory,
        queue,
        tick: 0,
    };
    worker.serve(commands);
}

/// The model's own tokenizer for the grammar: the bytes a grammar forces are tokenized as the
/// model tokenizes text, so they can be taken without sampling. Whatever it answers spells the
/// bytes exactly: a SentencePiece model's leading space is left out, and a spelling that still
/// differs gives way to the vocabulary's greedy one.
struct Tokenizer {
    trie: toktrie::TokTrie,
    model: Arc<LlamaModel>,
}

impl toktrie::TokenizerEnv for Tokenizer {
    fn tok_trie(&self) -> &toktrie::TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<toktrie::TokenId> {
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(s, false, false);
        let pieces: Vec<Vec<u8>> = tokens
            .iter()
            .map(|&t| vocab.token_to_piece(t, false, None))
            .collect();
        let ids = |from: usize| tokens[from..].iter().map(|t| t.0.max(0) as u32).collect();
        if pieces.concat() == s {
            return ids(0);
        }
        if pieces.first().is_some_and(|p| p == b" ") && pieces[1..].concat() == s {
            return ids(1);
        }
        self.trie.greedy_tokenize(s)
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}

/// One sequence of the context: whose it is, what it holds, what it runs.
struct Slot {
    seq: i32,
    /// The agent whose prompt it caches.
    key: Option<String>,
    /// The tokens it holds, in order (positions 0..).
    cached: Vec<LlamaToken>,
    /// When it last finished an answer (the least recent is reused first).
    last_used: u64,
    running: Option<Running>,
}

impl Slot {
    fn new(seq: i32) -> Self {
        Slot {
            seq,
            key: None,
            cached: Vec::new(),
            last_used: 0,
            running: None,
        }
    }
}

/// An answer being generated.
struct Running {
    events: UnboundedSender<Event>,
    sampler: Constrained,
    /// Tokens to evaluate next: the rest of the prompt, or the token just chosen and those the
    /// grammar forced.
    pending: Vec<LlamaToken>,
    /// The sequence whose prefix this answer waits for before reading the rest of its prompt.
    share: Option<Share>,
    /// The answer's bytes so far, and how many of them were sent as text.
    bytes: Vec<u8>,
    sent: usize,
    outcome: Outcome,
    max_tokens: u32,
    started: Instant,
    /// When it fails unless done, and its time limit.
    deadline: Option<(Instant, Duration)>,
    answering: bool,
}

/// A prefix an answer takes from another sequence once that one has read it.
#[derive(Clone, Copy, Debug)]
struct Share {
    /// The slot reading it.
    from: usize,
    /// Its tokens.
    upto: usize,
}

/// How many of `prompt`'s first tokens `cached` starts with — at most all but the prompt's last
/// token, which is always evaluated (its logits choose the first answer token).
fn common_prefix(cached: &[LlamaToken], prompt: &[LlamaToken]) -> usize {
    common_prefix_iter(cached.iter().copied(), prompt)
}

/// [`common_prefix`] of tokens given in order.
fn common_prefix_iter(cached: impl Iterator<Item = LlamaToken>, prompt: &[LlamaToken]) -> usize {
    cached
        .zip(prompt)
        .take_while(|(a, b)| a == *b)
        .count()
        .min(prompt.len().saturating_sub(1))
}

struct Worker<'m> {
    settings: ModelSettings,
    /// Which tokens only close JSON, for answers winding down ([`Constrained::wind_down`]).
    closers: Arc<Closers>,
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    factory: llguidance::ParserFactory,
    slots: Vec<Slot>,
    queue: Arc<Queue>,
    tick: u64,
}

impl Worker<'_> {
    /// Serves until the model is dropped and nothing runs; answers still waiting then fail.
    fn serve(&mut self, commands: mpsc::Receiver<Command>) {
        self.decode_until_dropped(commands);
        while let Some(waiting) = self.queue.pop() {
            let _ = waiting.events.send(Event::Failed(LocalError::Stopped));
        }
    }

    fn decode_until_dropped(&mut self, commands: mpsc::Receiver<Command>) {
        let mut batch = LlamaBatch::new(BATCH_TOKENS, 1);
        loop {
            let idle = self.slots.iter().all(|s| s.running.is_none()) && self.queue.len() == 0;
            if idle {
                match commands.recv() {
                    Ok(command) => self.take(command),
                    Err(_) => return,
                }
            }
            loop {
                match commands.try_recv() {
                    Ok(command) => self.take(command),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        if self.slots.iter().all(|s| s.running.is_none()) {
                            return;
                        }
                        break;
                    }
                }
            }
            self.drop_cancelled();
            self.start_waiting();
            self.step(&mut batch);
        }
    }

    fn take(&mut self, command: Command) {
        match command {
            Command::Queued => {}
            Command::Forget(key) => {
                for slot in &mut self.slots {
                    if slot.key.as_deref() == Some(key.as_str()) && slot.running.is_none() {
                        slot.key = None;
                        slot.cached.clear();
                        let _ = self
                            .ctx
                            .clear_kv_cache_seq(Some(slot.seq as u32), None, None);
                    }
                }
            }
        }
    }

    /// Answers nobody waits for any more stop here, and those past their time limit fail.
    fn drop_cancelled(&mut self) {
        let now = Instant::now();
        for slot in &mut self.slots {
            let Some(running) = &slot.running else {
                continue;
            };
            let late = running.deadline.filter(|(at, _)| now >= *at);
            if let Some((_, limit)) = late {
                let _ = running.events.send(Event::Failed(LocalError::TimedOut {
                    seconds: limit.as_secs_f64(),
                    output_tokens: running.outcome.output_tokens,
                }));
            }
            if late.is_some() || running.events.is_closed() {
                slot.running = None;
                slot.last_used = self.tick;
            }
        }
    }

    /// Starts waiting jobs on free sequences, in the queue's turns.
    fn start_waiting(&mut self) {
        while self.slots.iter().any(|s| s.running.is_none()) {
            let Some(waiting) = self.queue.pop() else {
                return;
            };
            if waiting.events.is_closed() {
                continue;
            }
            let index = self
                .free_slot(&waiting.job.key)
                .expect("a sequence is free");
            let events = waiting.events;
            if let Err(e) = self.start(index, *waiting.job, events.clone()) {
                let _ = events.send(Event::Failed(e));
            }
        }
    }

    /// The agent's own idle sequence, else the idle one used least recently.
    fn free_slot(&self, key: &str) -> Option<usize> {
        let idle = || {
            self.slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.running.is_none())
        };
        idle()
            .find(|(_, s)| s.key.as_deref() == Some(key))
            .or_else(|| idle().min_by_key(|(_, s)| (s.key.is_some(), s.last_used)))
            .map(|(i, _)| i)
    }

    fn start(
        &mut self,
        index: usize,
        job: Job,
        events: UnboundedSender<Event>,
    ) -> Result<(), LocalError> {
        let started = Instant::now();
        let prompt = self.prompt(&job)?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
        let context = self.settings.context_size;
        if tokens.len() as u64 + u64::from(job.max_tokens) > u64::from(context) {
            return Err(LocalError::ContextTooSmall {
                prompt: tokens.len() as u32,
                answer: job.max_tokens,
                context,
            });
        }
        let matcher = match &job.schema {
            Some(schema) => Some(self.matcher(schema)?),
            None => None,
        };
        let slot = &mut self.slots[index];
        slot.key = Some(job.key.clone());
        // Keep the longest common prefix with what the sequence holds (the agent's earlier
        // prompt, or whichever agent's it held), but evaluate at least the prompt's last token
        // (its logits choose the first answer token).
        let mut common = common_prefix(&slot.cached, &tokens);
        if !matches!(
            self.ctx
                .clear_kv_cache_seq(Some(slot.seq as u32), Some(common as u32), None),
            Ok(true)
        ) {
            let _ = self
                .ctx
                .clear_kv_cache_seq(Some(slot.seq as u32), None, None);
            common = 0;
        }
        slot.cached.truncate(common);
        slot.running = Some(Running {
            events,
            sampler: Constrained::new(matcher, job.sampling.clone()),
            pending: tokens[common..].to_vec(),
            share: None,
            bytes: Vec::new(),
            sent: 0,
            outcome: Outcome {
                prompt_tokens: tokens.len() as u32,
                cached_tokens: common as u32,
                ..Outcome::default()
            },
            max_tokens: job.max_tokens,
            started,
            deadline: job.timeout.map(|limit| (started + limit, limit)),
            answering: false,
        });
        self.plan_share(index);
        Ok(())
    }

    /// Where slot `i`'s prompt (just started) takes the prefix it shares with other agents'
    /// prompts from: a sequence that holds at least [`MIN_SHARED`] more of it than `i` does
    /// is copied now; a sequence still reading a prompt that will hold at least
    /// [`MIN_SHARED`] more than any holds now is waited for ([`Running::share`]), and copied
    /// once it has read that far. Otherwise `i` reads its prompt itself.
    fn plan_share(&mut self, i: usize) {
        let Some(running) = &self.slots[i].running else {
            return;
        };
        let tokens: Vec<LlamaToken> = self.slots[i]
            .cached
            .iter()
            .chain(&running.pending)
            .copied()
            .collect();
        let own = self.slots[i].cached.len();
        // (slot, tokens it holds now that the prompt starts with), and the same for what it
        // will hold once it has read its own prompt.
        let mut now = (i, own);
        let mut later = (i, own);
        for (j, slot) in self.slots.iter().enumerate() {
            if j == i {
                continue;
            }
            let held = common_prefix(&slot.cached, &tokens);
            if held > now.1 {
                now = (j, held);
            }
            let Some(other) = &slot.running else {
                continue;
            };
            if other.share.is_some() || other.answering {
                continue;
            }
            let reading = slot.cached.iter().chain(&other.pending).copied();
            let will = common_prefix_iter(reading, &tokens);
            if will > later.1 {
                later = (j, will);
            }
        }
        if later.1 >= now.1.max(own) + MIN_SHARED {
            if let Some(running) = &mut self.slots[i].running {
                running.share = Some(Share {
                    from: later.0,
                    upto: later.1,
                });
            }
        } else if now.1 >= own + MIN_SHARED {
            self.copy_prefix(now.0, i, now.1);
        }
    }

    /// Copies the first `upto` tokens of slot `from`'s cache into slot `to` (whose answer
    /// starts with them): llama.cpp copies a sequence whole (across streams it must), then
    /// `to` drops what follows the prefix.
    fn copy_prefix(&mut self, from: usize, to: usize, upto: usize) {
        let (src, dst) = (self.slots[from].seq, self.slots[to].seq);
        let copied = self.ctx.copy_kv_cache_seq(src, dst, None, None).is_ok()
            && matches!(
                self.ctx
                    .clear_kv_cache_seq(Some(dst as u32), Some(upto as u32), None),
                Ok(true)
            );
        let prefix = self.slots[from].cached[..upto].to_vec();
        let slot = &mut self.slots[to];
        let Some(running) = &mut slot.running else {
            return;
        };
        let mut tokens = std::mem::take(&mut slot.cached);
        tokens.append(&mut running.pending);
        if copied {
            slot.cached = prefix;
        } else {
            let _ = self.ctx.clear_kv_cache_seq(Some(dst as u32), None, None);
        }
        let held = slot.cached.len();
        running.pending = tokens.split_off(held);
        running.outcome.cached_tokens = held as u32;
        running.outcome.shared_tokens = if copied { held as u32 } else { 0 };
    }

    /// Answers waiting for another sequence's prefix: copied once it is read; when the other
    /// sequence will not read it any more (its answer failed or was dropped), planned again.
    fn take_shared(&mut self) {
        for i in 0..self.slots.len() {
            let Some(Share { from, upto }) = self.slots[i].running.as_ref().and_then(|r| r.share)
            else {
                continue;
            };
            let tokens: Vec<LlamaToken> = {
                let slot = &self.slots[i];
                let running = slot.running.as_ref().expect("running");
                slot.cached
                    .iter()
                    .chain(&running.pending)
                    .copied()
                    .collect()
            };
            let source = &self.slots[from];
            let held = common_prefix(&source.cached, &tokens);
            let will = source.running.as_ref().map_or(0, |other| {
                common_prefix_iter(source.cached.iter().chain(&other.pending).copied(), &tokens)
            });
            if held >= upto {
                if let Some(running) = &mut self.slots[i].running {
                    running.share = None;
                }
                self.copy_prefix(from, i, upto);
            } else if will < upto {
                if let Some(running) = &mut self.slots[i].running {
                    running.share = None;
                }
                self.plan_share(i);
            }
        }
    }

    /// The job's conversation through the chat template, ending where the answer starts.
    fn prompt(&self, job: &Job) -> Result<String, LocalError> {
        let messages = job
            .messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LocalError::Template(e.to_string()))?;
        self.model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(|e| LocalError::Template(e.to_string()))
    }

    /// A grammar for `schema` (answers as compact JSON); a schema with keywords the grammar
    /// compiler does not support is tried again leniently (those keywords ignored: the
    /// caller's validation still checks the answer).
    fn matcher(&self, schema: &serde_json::Value) -> Result<llguidance::Matcher, LocalError> {
        let compile = |lenient: bool| self.factory.create_parser(grammar(schema, lenient));
        let parser = compile(false)
            .or_else(|strict| {
                tracing::debug!("the reply's schema needs lenient compilation: {strict}");
                compile(true)
            })
            .map_err(|e| LocalError::Grammar(e.to_string()))?;
        let matcher = llguidance::Matcher::new(Ok(parser));
        match matcher.get_error() {
            Some(e) => Err(LocalError::Grammar(e)),
            None => Ok(matcher),
        }
    }

    /// One batch: every running answer's next tokens, decoded together.
    fn step(&mut self, batch: &mut LlamaBatch) {
        self.take_shared();
        batch.clear();
        let mut budget = BATCH_TOKENS;
        // (slot, the batch index of its last token) for answers whose next token is chosen
        // after this batch.
        let mut choose: Vec<(usize, i32)> = Vec::new();
        let mut in_batch: Vec<usize> = Vec::new();
        // Start with a different sequence each step, so one long prompt cannot starve the
        // others of the batch.
        let n = self.slots.len();
        let first = (self.tick as usize) % n.max(1);
        for k in 0..n {
            let i = (first + k) % n;
            let slot = &mut self.slots[i];
            let Some(running) = &mut slot.running else {
                continue;
            };
            if budget == 0 || running.pending.is_empty() || running.share.is_some() {
                continue;
            }
            let take = running.pending.len().min(budget);
            let finishes = take == running.pending.len();
            let mut failed = false;
            for (j, token) in running.pending.drain(..take).enumerate() {
                let logits = finishes && j + 1 == take;
                if batch
                    .add(token, slot.cached.len() as i32, &[slot.seq], logits)
                    .is_err()
                {
                    failed = true;
                    break;
                }
                slot.cached.push(token);
            }
            if failed {
                continue;
            }
            budget -= take;
            in_batch.push(i);
            if finishes {
                choose.push((i, batch.n_tokens() - 1));
            }
        }
        self.tick += 1;
        if batch.n_tokens() == 0 {
            return;
        }
        if let Err(e) = self.ctx.decode(batch) {
            for i in in_batch {
                let slot = &mut self.slots[i];
                slot.cached.clear();
                let _ = self
                    .ctx
                    .clear_kv_cache_seq(Some(slot.seq as u32), None, None);
                if let Some(running) = slot.running.take() {
                    let _ = running
                        .events
                        .send(Event::Failed(LocalError::Decode(e.to_string())));
                }
            }
            return;
        }
        for (i, index) in choose {
            self.choose(i, index);
        }
    }

    /// Chooses the next token of slot `i`'s answer from the logits at batch `index`.
    fn choose(&mut self, i: usize, index: i32) {
        let model = self.model;
        let logits = self.ctx.get_logits_ith(index);
        let slot = &mut self.slots[i];
        let Some(running) = &mut slot.running else {
            return;
        };
        if !running.answering {
            running.answering = true;
            running.outcome.first_token = running.started.elapsed();
        }
        let vocab = model.vocab();
        if running.outcome.output_tokens >= wind_down_at(running.max_tokens) {
            let in_string = crate::sampler::inside_string(&running.bytes);
            running.sampler.wind_down(&self.closers, in_string);
        }
        let picked = running
            .sampler
            .pick(logits, |t| vocab.is_eog(LlamaToken(t as i32)));
        let done = match picked {
            Err(e) => {
                let _ = running.events.send(Event::Failed(LocalError::Grammar(e)));
                slot.running = None;
                slot.last_used = self.tick;
                return;
            }
            Ok(Pick::End) => true,
            Ok(Pick::Token(token)) => {
                let forced = running.sampler.forced();
                running.outcome.forced_tokens += forced.len() as u32;
                for t in std::iter::once(token).chain(forced) {
                    let token = LlamaToken(t as i32);
                    running.outcome.output_tokens += 1;
                    running
                        .bytes
                        .extend(vocab.token_to_piece(token, false, None));
                    running.pending.push(token);
                }
                send_text(running);
                running.sampler.is_done() || running.outcome.output_tokens >= running.max_tokens
            }
        };
        if done {
            let mut running = slot.running.take().expect("running");
            running.outcome.complete =
                running.sampler.is_done() || running.outcome.output_tokens < running.max_tokens;
            running.outcome.text = String::from_utf8_lossy(&running.bytes).into_owned();
            running.outcome.elapsed = running.started.elapsed();
            let _ = running.events.send(Event::Done(Box::new(running.outcome)));
            slot.last_used = self.tick;
        }
    }
}

/// Sends the answer's new text: the longest whole UTF-8 part not sent yet (a character split
/// between tokens waits for its other bytes).
fn send_text(running: &mut Running) {
    let new = &running.bytes[running.sent..];
    let valid = match std::str::from_utf8(new) {
        Ok(s) => s.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        // Bytes that will never be UTF-8: sent as the replacement character.
        Err(_) => new.len(),
    };
    if valid > 0 {
        let text = String::from_utf8_lossy(&new[..valid]).into_owned();
        running.sent += valid;
        let _ = running.events.send(Event::Text(text));
    }
}
