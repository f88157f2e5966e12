//! The bus bridge: this process's messages out to NATS, the other processes' messages in.
//!
//! - **Out.** An untracked subscription to everything published here (not what came from
//!   elsewhere: [`Envelope::origin`] is set on those) sends each message, as JSON, on its
//!   subjects ([`Subjects::of_message`]) with the headers `Agents-Origin` (this process) and
//!   `Agents-Seq` (its bus sequence number).
//! - **In.** The bridge listens to the patterns of this process's interest
//!   ([`Subjects::interest`] of [`Bus::interest`]), plus the spawned, moved and removed
//!   messages of every agent (so the local world knows where remote agents are), subscribed
//!   before [`Cluster::join`](super::Cluster::join) returns. When the interest changes (a
//!   client subscribes with a filter, an agent starts or stops), the patterns follow within
//!   [`INTEREST_DEBOUNCE`], without a gap: the new ones are in before the old ones go. Each message received is published on the
//!   local bus with its origin ([`Bus::publish_from`]), once: a message that arrives on two
//!   matching subjects is dropped the second time by its `(origin, seq)`.
//! - **Who runs which agent** is learned on the way in (the directory of `router.rs`), from
//!   the newest of each process's messages about an agent by its `Agents-Seq`: the kinds come
//!   on separate subscriptions, so a start and the release right after it can arrive swapped.
//! - **Garbage** (a payload that is not a bus message, missing headers) is counted and logged,
//!   never published.
//! - **A lost connection** is the client's to repair: async-nats reconnects and subscribes again;
//!   what was published meanwhile is not replayed (events are live; what must survive is in the
//!   shared memory).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_nats::HeaderMap;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::router::Directory;
use super::subjects::{ORIGIN_HEADER, SEQ_HEADER, Subjects};
use crate::bus::{BusMessage, Filter, MessageKind, Received, Subscription};
use crate::runtime::Runtime;

/// How long the bridge waits after an interest change for more before it resubscribes.
pub const INTEREST_DEBOUNCE: Duration = Duration::from_millis(20);

/// How long a pattern the interest no longer holds is still read, once the patterns that
/// replace it are subscribed: NATS may still send it a message matched before they were.
pub const RETIRE_OVERLAP: Duration = Duration::from_millis(250);

/// How long the bridge waits for NATS to confirm new subscriptions.
const ROUND_TRIP_TIMEOUT: Duration = Duration::from_secs(5);

/// Queue of the outgoing subscription (messages not yet sent to NATS).
const EXPORT_CAPACITY: usize = 65_536;
/// Messages remembered per origin to drop repeats.
const SEEN_PER_ORIGIN: usize = 8_192;

/// What the bridge has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    /// Messages of this process sent to NATS.
    pub exported: u64,
    /// Messages of this process the bridge could not keep up with (never sent).
    pub export_missed: u64,
    /// Messages of other processes published on this bus.
    pub imported: u64,
    /// Messages received twice (two matching subjects) and dropped the second time.
    pub duplicates: u64,
    /// Payloads that were not bus messages.
    pub garbage: u64,
    /// Subject patterns listened to now.
    pub patterns: u64,
}

#[derive(Default)]
struct Counters {
    exported: AtomicU64,
    export_missed: AtomicU64,
    imported: AtomicU64,
    duplicates: AtomicU64,
    garbage: AtomicU64,
    patterns: AtomicU64,
}

/// The running bridge.
pub(crate) struct Bridge {
    counters: Arc<Counters>,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Bridge {
    /// Starts the bridge of `runtime` on `client`. Returns once NATS has taken the first
    /// patterns' subscriptions: from then on no spawned, moved or removed message of the world
    /// is missed.
    pub(crate) async fn start(
        runtime: Arc<Runtime>,
        client: async_nats::Client,
        subjects: Subjects,
        process: Arc<str>,
        directory: Arc<Directory>,
    ) -> Bridge {
        let counters = Arc::new(Counters::default());
        let cancel = CancellationToken::new();
        let handle = runtime.handle().clone();
        let (tx, rx) = mpsc::channel::<async_nats::Message>(EXPORT_CAPACITY);
        let mut listener = Listener {
            runtime: runtime.clone(),
            client: client.clone(),
            subjects: subjects.clone(),
            tx,
            counters: counters.clone(),
            readers: HashMap::new(),
            sync_subject: subjects.sync(&process),
        };
        let interest = runtime.bus().watch_interest();
        listener.follow().await;
        // Subscribed here, not in the task: what is published once `start` returns is sent.
        let outgoing = runtime
            .bus()
            .subscribe_untracked(Filter::all(), EXPORT_CAPACITY);
        let tasks = vec![
            handle.spawn(export(
                outgoing,
                client,
                subjects,
                process.clone(),
                counters.clone(),
                cancel.clone(),
            )),
            handle.spawn(listener.run(interest, cancel.clone())),
            handle.spawn(import(
                runtime,
                rx,
                process,
                directory,
                counters.clone(),
                cancel.clone(),
            )),
        ];
        Bridge {
            counters,
            cancel,
            tasks,
        }
    }

    /// What the bridge has done so far.
    pub(crate) fn stats(&self) -> BridgeStats {
        let c = &self.counters;
        BridgeStats {
            exported: c.exported.load(Ordering::Relaxed),
            export_missed: c.export_missed.load(Ordering::Relaxed),
            imported: c.imported.load(Ordering::Relaxed),
            duplicates: c.duplicates.load(Ordering::Relaxed),
            garbage: c.garbage.load(Ordering::Relaxed),
            patterns: c.patterns.load(Ordering::Relaxed),
        }
    }

    /// Stops the tasks (what is queued for NATS is dropped).
    pub(crate) async fn stop(self) {
        self.cancel.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// This process's messages out.
async fn export(
    mut outgoing: Subscription,
    client: async_nats::Client,
    subjects: Subjects,
    process: Arc<str>,
    counters: Arc<Counters>,
    cancel: CancellationToken,
) {
    loop {
        let received = tokio::select! {
            _ = cancel.cancelled() => return,
            received = outgoing.recv() => received,
        };
        let envelope = match received {
            None => return,
            Some(Received::Lagged { missed }) => {
                counters.export_missed.fetch_add(missed, Ordering::Relaxed);
                tracing::warn!(
                    missed,
                    "cluster bridge: messages not sent to other processes"
                );
                continue;
            }
            Some(Received::Message(envelope)) => envelope,
        };
        if envelope.origin.is_some() {
            continue;
        }
        let payload = match serde_json::to_vec(&envelope.message) {
            Ok(payload) => bytes::Bytes::from(payload),
            Err(error) => {
                tracing::error!(%error, "cluster bridge: a bus message did not serialize");
                continue;
            }
        };
        let mut headers = HeaderMap::new();
        headers.insert(ORIGIN_HEADER, &*process);
        headers.insert(SEQ_HEADER, envelope.seq.to_string().as_str());
        for subject in subjects.of_message(&envelope.message) {
            if let Err(error) = client
                .publish_with_headers(subject, headers.clone(), payload.clone())
                .await
            {
                tracing::warn!(%error, "cluster bridge: publish failed");
            }
        }
        counters.exported.fetch_add(1, Ordering::Relaxed);
    }
}

/// What every process listens to whatever its interest: where agents are.
fn world_filter() -> Filter {
    Filter::all().kinds([
        MessageKind::AgentSpawned,
        MessageKind::AgentMoved,
        MessageKind::AgentRemoved,
    ])
}

/// Keeps one NATS subscription per pattern of the interest, feeding `tx`.
///
/// A change of patterns loses nothing: the new patterns are subscribed and NATS has taken them
/// (a round trip: `Client::flush` only empties the socket) before the patterns no longer wanted
/// are retired, and those are still read for [`RETIRE_OVERLAP`] before they are unsubscribed.
/// The overlap matters: NATS may send a message it matched against the old subscriptions only
/// after its answer to the round trip, and
/// async-nats drops what arrives for a subscription once its unsubscribe is written (so
/// `Subscriber::drain` would lose it). A message that arrives on both is dropped the second
/// time by the importer.
struct Listener {
    runtime: Arc<Runtime>,
    client: async_nats::Client,
    subjects: Subjects,
    tx: mpsc::Sender<async_nats::Message>,
    counters: Arc<Counters>,
    readers: HashMap<String, Reader>,
    /// Where [`Listener::round_trip`] asks.
    sync_subject: String,
}

/// One pattern's subscription, forwarded by a task until it is drained.
struct Reader {
    task: JoinHandle<()>,
    retire: CancellationToken,
}

impl Listener {
    /// Follows the interest until cancelled.
    async fn run(
        mut self,
        mut interest: tokio::sync::watch::Receiver<u64>,
        cancel: CancellationToken,
    ) {
        loop {
            tokio::select! {
                _ = cancel.cancelled() => break,
                changed = interest.changed() => if changed.is_err() { break },
            }
            tokio::time::sleep(INTEREST_DEBOUNCE).await;
            interest.borrow_and_update();
            self.follow().await;
        }
        for (_, reader) in self.readers {
            reader.task.abort();
        }
    }

    /// Waits until NATS has read what this client sent before: a request nobody answers comes
    /// back as "no responders" once it has.
    async fn round_trip(&self) {
        let request = self
            .client
            .request(self.sync_subject.clone(), bytes::Bytes::new());
        match tokio::time::timeout(ROUND_TRIP_TIMEOUT, request).await {
            Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => {}
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                tracing::warn!(%error, "cluster bridge: no round trip after subscribing")
            }
            Err(_) => tracing::warn!(
                "cluster bridge: no round trip after subscribing within {ROUND_TRIP_TIMEOUT:?}"
            ),
        }
    }

    /// Subscribes the patterns of the interest now, then retires the ones it no longer holds.
    async fn follow(&mut self) {
        let mut filters = self.runtime.bus().interest();
        filters.push(world_filter());
        let wanted: BTreeSet<String> = self.subjects.interest(filters.iter());
        let mut added = false;
        for pattern in &wanted {
            if self.readers.contains_key(pattern) {
                continue;
            }
            match self.client.subscribe(pattern.clone()).await {
                Ok(subscriber) => {
                    let retire = CancellationToken::new();
                    let task = self.runtime.handle().spawn(forward(
                        subscriber,
                        self.tx.clone(),
                        retire.clone(),
                    ));
                    self.readers
                        .insert(pattern.clone(), Reader { task, retire });
                    added = true;
                }
                Err(error) => {
                    tracing::warn!(%error, pattern, "cluster bridge: subscribe failed");
                }
            }
        }
        if added {
            self.round_trip().await;
        }
        self.readers.retain(|pattern, reader| {
            let keep = wanted.contains(pattern);
            if !keep {
                reader.retire.cancel();
            }
            keep
        });
        self.counters
            .patterns
            .store(self.readers.len() as u64, Ordering::Relaxed);
    }
}

/// Forwards what `subscriber` receives to `tx`; once `retire` is cancelled, goes on for
/// [`RETIRE_OVERLAP`], then unsubscribes.
async fn forward(
    mut subscriber: async_nats::Subscriber,
    tx: mpsc::Sender<async_nats::Message>,
    retire: CancellationToken,
) {
    let overlap_ended = async {
        retire.cancelled().await;
        tokio::time::sleep(RETIRE_OVERLAP).await;
    };
    tokio::pin!(overlap_ended);
    loop {
        tokio::select! {
            _ = &mut overlap_ended => break,
            next = subscriber.next() => {
                let Some(message) = next else { return };
                if tx.send(message).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = subscriber.unsubscribe().await;
}

/// The last messages seen from each origin.
#[derive(Default)]
struct Seen {
    by_origin: HashMap<Arc<str>, (HashSet<u64>, VecDeque<u64>)>,
}

impl Seen {
    /// Whether `(origin, seq)` is new (and remembers it).
    fn first_time(&mut self, origin: &Arc<str>, seq: u64) -> bool {
        let (set, order) = self.by_origin.entry(origin.clone()).or_default();
        if !set.insert(seq) {
            return false;
        }
        order.push_back(seq);
        if order.len() > SEEN_PER_ORIGIN
            && let Some(old) = order.pop_front()
        {
            set.remove(&old);
        }
        true
    }
}

/// The other processes' messages in.
async fn import(
    runtime: Arc<Runtime>,
    mut rx: mpsc::Receiver<async_nats::Message>,
    process: Arc<str>,
    directory: Arc<Directory>,
    counters: Arc<Counters>,
    cancel: CancellationToken,
) {
    let mut seen = Seen::default();
    let mut origins: HashMap<String, Arc<str>> = HashMap::new();
    loop {
        let message = tokio::select! {
            _ = cancel.cancelled() => return,
            message = rx.recv() => match message {
                Some(message) => message,
                None => return,
            },
        };
        let header = |name: &str| {
            message
                .headers
                .as_ref()
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_string())
        };
        let (Some(origin), Some(seq)) = (
            header(ORIGIN_HEADER),
            header(SEQ_HEADER).and_then(|s| s.parse::<u64>().ok()),
        ) else {
            counters.garbage.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(subject = %message.subject, "cluster bridge: a message without its origin headers");
            continue;
        };
        if origin == *process {
            continue;
        }
        let origin = origins
            .entry(origin)
            .or_insert_with_key(|o| Arc::from(o.as_str()))
            .clone();
        if !seen.first_time(&origin, seq) {
            counters.duplicates.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let bus_message: BusMessage = match serde_json::from_slice(&message.payload) {
            Ok(m) => m,
            Err(error) => {
                counters.garbage.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%error, subject = %message.subject, "cluster bridge: not a bus message");
                continue;
            }
        };
        // Where agents are follows only the newest of a process's word about each (the kinds
        // arrive on separate subscriptions, in any order between them).
        if directory.is_current(&bus_message, &origin, seq) {
            runtime.follow_remote(&bus_message);
            directory.learn(&bus_message, &origin);
        }
        runtime.bus().publish_from(bus_message, origin);
        counters.imported.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_seen_and_the_memory_is_bounded() {
        let mut seen = Seen::default();
        let a: Arc<str> = Arc::from("a");
        let b: Arc<str> = Arc::from("b");
        assert!(seen.first_time(&a, 1));
        assert!(!seen.first_time(&a, 1));
        assert!(seen.first_time(&b, 1), "origins are apart");
        for seq in 2..(SEEN_PER_ORIGIN as u64 + 10) {
            assert!(seen.first_time(&a, seq));
        }
        assert!(seen.by_origin[&a].0.len() <= SEEN_PER_ORIGIN);
        assert!(seen.first_time(&a, 1), "forgotten after the window");
    }
}
