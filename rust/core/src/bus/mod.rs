//! The inter-agent message bus.
//!
//! Typed [`BusMessage`]s, published without ever blocking; each subscriber has a [`Filter`]
//! (by kind, sender, recipient) checked at publish time, and its own bounded queue. A subscriber
//! whose queue is full misses messages and is told so ([`Received::Lagged`]) before its next
//! message: a slow subscriber never blocks publishers or other subscribers.
//!
//! # Design
//!
//! - **Publishing** takes the read side of one `parking_lot::RwLock` over the subscription
//!   index, allocates one `Arc<Envelope>`, and pushes a clone of that `Arc` into each matching
//!   subscriber's queue (a short per-subscriber mutex, never an await). Subscribing and dropping a
//!   [`Subscription`] take the write side.
//! - **Index.** Subscriptions are indexed by recipient (when their filter names recipients), by
//!   sender (when it names senders but no recipients), otherwise by kind; recipient-filtered
//!   subscriptions that accept broadcasts are also indexed by kind for broadcasts. A publish only
//!   visits the candidates its recipients / sender / kind select — a message to one agent among
//!   10,000 agent subscriptions visits one — and applies [`Filter::matches`] to each. A
//!   subscription is never visited twice for one message (even when it lists several of the
//!   message's recipients).
//! - **Queues** are bounded (`capacity` messages) and allocated lazily: an idle subscription
//!   holds no slot buffer. An emptied queue larger than 256 slots gives its buffer back.
//! - **Overflow policy: keep the oldest, drop the newest.** A message that finds a subscriber's
//!   queue full is dropped *for that subscriber only* and counted. The subscriber's next `recv` /
//!   `try_recv` yields [`Received::Lagged`] with the exact count missed since the previous
//!   report, *before* the messages still queued (which are older than the dropped ones). Example:
//!   capacity 3, ten messages published, none read → `Lagged { missed: 7 }`, then messages 1, 2, 3.
//! - **Order.** Messages from one publisher (thread or task) reach each subscriber in publish
//!   order. Concurrent publishers interleave; `seq` is unique per bus and increasing per
//!   publisher, but a subscriber may see two concurrent publishers' messages out of `seq` order.
//! - **Closing.** [`Bus::close`], or dropping the last [`Bus`] clone, closes the bus: publishing
//!   becomes a no-op and each subscription yields what it still has queued, then `None`.
//! - **Several processes** (the cluster bridge, `crate::cluster`). A message that came from another
//!   process is published with [`Bus::publish_from`] and carries its origin
//!   ([`Envelope::origin`]), so the bridge never sends it back out. What this process's
//!   subscribers want is its *interest* ([`Bus::interest`]: the filters of every tracked
//!   subscription, and a generation that changes with them), which the bridge turns into the
//!   subjects it listens to; the bridge's own subscriptions are untracked
//!   ([`Bus::subscribe_untracked`]).

mod index;
mod message;
mod queue;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::fmt;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::RwLock;

use index::Index;
use queue::{Push, SubEntry};

pub use message::{
    AgentErrorCode, BusMessage, EVENT_TYPES, MessageKind, ParseKindError, ReplyFailure,
};

/// A published message with its envelope data. Subscribers receive `Arc<Envelope>`.
#[derive(Debug)]
pub struct Envelope {
    /// Publish sequence number (1, 2, …; per bus).
    pub seq: u64,
    /// When it was published (monotonic; for latency measurement).
    pub published_at: Instant,
    /// When it was published, milliseconds since the Unix epoch.
    pub timestamp_ms: u64,
    /// The message.
    pub message: BusMessage,
    /// The process the message came from, when it was published elsewhere and relayed here
    /// ([`Bus::publish_from`]); `None` for a message published in this process.
    pub origin: Option<Arc<str>>,
}

/// Which messages a subscriber wants. The default ([`Filter::all`]) accepts everything.
///
/// A message matches when its kind is accepted, its sender is accepted, and — when the filter
/// names recipients — it is addressed to one of them, or it is a broadcast (no recipients) and the
/// filter accepts broadcasts.
///
/// An empty set accepts nothing in its dimension (`kinds([])` matches no message;
/// `recipients([])` matches only broadcasts, and only with `include_broadcasts`).
/// `include_broadcasts` has no effect without `recipients`. Typical agent filter:
///
/// ```
/// use agents_core::bus::{Filter, MessageKind};
/// let f = Filter::all()
///     .recipients(["agent_001"])
///     .kinds([MessageKind::AgentSpoke, MessageKind::TaskAssigned])
///     .with_broadcasts(true);
/// assert!(f.include_broadcasts);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Accepted kinds; `None` = all.
    pub kinds: Option<HashSet<MessageKind>>,
    /// Accepted senders ([`BusMessage::sender`]); `None` = all.
    pub senders: Option<HashSet<String>>,
    /// Accepted recipients; `None` = any message, addressed or not.
    pub recipients: Option<HashSet<String>>,
    /// With `recipients` set: also accept broadcasts (messages addressed to no one).
    pub include_broadcasts: bool,
}

impl Filter {
    /// Accepts every message (equal to `Filter::default()`; `include_broadcasts` is `false`,
    /// which only matters once recipients are set).
    pub fn all() -> Self {
        Filter::default()
    }
    /// Only these kinds (replaces any previous kind set).
    pub fn kinds(mut self, kinds: impl IntoIterator<Item = MessageKind>) -> Self {
        self.kinds = Some(kinds.into_iter().collect());
        self
    }
    /// Only from these senders (replaces any previous sender set).
    pub fn senders<S: Into<String>>(mut self, senders: impl IntoIterator<Item = S>) -> Self {
        self.senders = Some(senders.into_iter().map(Into::into).collect());
        self
    }
    /// Only addressed to these recipients (plus broadcasts if `include_broadcasts`); replaces any
    /// previous recipient set.
    pub fn recipients<S: Into<String>>(mut self, recipients: impl IntoIterator<Item = S>) -> Self {
        self.recipients = Some(recipients.into_iter().map(Into::into).collect());
        self
    }
    /// Whether broadcasts pass a recipient filter.
    pub fn with_broadcasts(mut self, include: bool) -> Self {
        self.include_broadcasts = include;
        self
    }
    /// Whether `message` passes.
    pub fn matches(&self, message: &BusMessage) -> bool {
        if let Some(kinds) = &self.kinds
            && !kinds.contains(&message.kind())
        {
            return false;
        }
        if let Some(senders) = &self.senders
            && !senders.contains(message.sender())
        {
            return false;
        }
        match &self.recipients {
            None => true,
            Some(accepted) => {
                let to = message.recipients();
                if to.is_empty() {
                    self.include_broadcasts
                } else {
                    to.iter().any(|r| accepted.contains(r.as_str()))
                }
            }
        }
    }
}

/// What a subscription yields.
#[derive(Clone, Debug)]
pub enum Received {
    /// The next message.
    Message(Arc<Envelope>),
    /// The queue overflowed: this many messages were dropped for this subscriber since the last
    /// report. Yielded once, before the next message.
    Lagged {
        /// How many messages were missed.
        missed: u64,
    },
}

/// What one `publish` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishReport {
    /// The message's sequence number; `0` when the bus is closed (nothing was published).
    pub seq: u64,
    /// Subscribers it was queued for.
    pub delivered: usize,
    /// Subscribers that matched but whose queue was full (they will see `Lagged`).
    pub dropped: usize,
}

/// Counters of a bus since it was created (see [`Bus::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusStats {
    /// Messages published (publishes on a closed bus are not counted).
    pub published: u64,
    /// Deliveries: messages queued for a subscriber, summed over subscribers.
    pub delivered: u64,
    /// Messages dropped for a subscriber whose queue was full, summed over subscribers.
    pub dropped: u64,
    /// Current number of subscriptions.
    pub subscribers: usize,
    /// Whether the bus is closed.
    pub closed: bool,
}

/// State shared by every clone of a bus and by its subscriptions.
struct Shared {
    default_capacity: usize,
    next_seq: AtomicU64,
    next_id: AtomicU64,
    closed: AtomicBool,
    index: RwLock<Index>,
    delivered: AtomicU64,
    dropped: AtomicU64,
    /// Changes whenever a tracked subscription comes or goes.
    interest: tokio::sync::watch::Sender<u64>,
}

impl Shared {
    fn close(&self) {
        let index = self.index.write();
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        for entry in index.all() {
            entry.close();
        }
    }
}

/// The publishing handle; the bus closes when the last one is dropped.
struct Handle(Arc<Shared>);

impl Drop for Handle {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The bus. Cheap to clone (an `Arc`); `Send + Sync`. Dropping the last clone closes it
/// (subscriptions then drain and end, as after [`Bus::close`]).
#[derive(Clone)]
pub struct Bus {
    handle: Arc<Handle>,
}

impl fmt::Debug for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bus")
            .field("default_capacity", &self.shared().default_capacity)
            .field("stats", &self.stats())
            .finish()
    }
}

impl Bus {
    /// A bus whose subscriptions queue up to `default_capacity` messages each (at least 1).
    pub fn new(default_capacity: usize) -> Self {
        let shared = Shared {
            default_capacity: default_capacity.max(1),
            next_seq: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            index: RwLock::new(Index::default()),
            delivered: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            interest: tokio::sync::watch::Sender::new(0),
        };
        Bus {
            handle: Arc::new(Handle(Arc::new(shared))),
        }
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.handle.0
    }

    /// Publishes to every matching subscriber. Never blocks, never waits for a subscriber.
    /// On a closed bus it does nothing and reports `seq` 0, nothing delivered.
    pub fn publish(&self, message: BusMessage) -> PublishReport {
        self.publish_with_origin(message, None)
    }

    /// Publishes a message that was published in another process (`origin`) and relayed here:
    /// delivered like any other, with [`Envelope::origin`] set.
    pub fn publish_from(&self, message: BusMessage, origin: Arc<str>) -> PublishReport {
        self.publish_with_origin(message, Some(origin))
    }

    fn publish_with_origin(&self, message: BusMessage, origin: Option<Arc<str>>) -> PublishReport {
        let shared = self.shared();
        let index = shared.index.read();
        if shared.closed.load(Ordering::Acquire) {
            return PublishReport {
                seq: 0,
                delivered: 0,
                dropped: 0,
            };
        }
        let seq = shared.next_seq.fetch_add(1, Ordering::Relaxed) + 1;
        let envelope = Arc::new(Envelope {
            seq,
            published_at: Instant::now(),
            timestamp_ms: crate::time::unix_millis(),
            message,
            origin,
        });
        let (mut delivered, mut dropped) = (0usize, 0usize);
        index.for_each_candidate(&envelope.message, |entry| {
            if entry.filter.matches(&envelope.message) {
                match entry.push(&envelope) {
                    Push::Queued => delivered += 1,
                    Push::Dropped => dropped += 1,
                    Push::Closed => {}
                }
            }
        });
        drop(index);
        if delivered > 0 {
            shared
                .delivered
                .fetch_add(delivered as u64, Ordering::Relaxed);
        }
        if dropped > 0 {
            shared.dropped.fetch_add(dropped as u64, Ordering::Relaxed);
        }
        PublishReport {
            seq,
            delivered,
            dropped,
        }
    }

    /// Subscribes with the default capacity.
    pub fn subscribe(&self, filter: Filter) -> Subscription {
        self.subscribe_with_capacity(filter, self.shared().default_capacity)
    }

    /// Subscribes with a queue of `capacity` messages (at least 1; the queue's memory grows only
    /// as messages wait in it). On a closed bus the subscription is not registered and yields
    /// `None` at once.
    pub fn subscribe_with_capacity(&self, filter: Filter, capacity: usize) -> Subscription {
        self.subscribe_entry(filter, capacity, true)
    }

    /// Like [`Bus::subscribe_with_capacity`], but not part of the [`Bus::interest`]: for the
    /// bridge that sends this process's messages to other processes.
    pub fn subscribe_untracked(&self, filter: Filter, capacity: usize) -> Subscription {
        self.subscribe_entry(filter, capacity, false)
    }

    fn subscribe_entry(&self, filter: Filter, capacity: usize, tracked: bool) -> Subscription {
        let shared = self.shared();
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut index = shared.index.write();
        let closed = shared.closed.load(Ordering::Acquire);
        let mut entry = SubEntry::new(id, filter, capacity, closed);
        entry.tracked = tracked;
        let entry = Arc::new(entry);
        if !closed {
            index.insert(&entry);
        }
        drop(index);
        if tracked {
            shared.interest.send_modify(|generation| *generation += 1);
        }
        Subscription {
            shared: Arc::clone(shared),
            entry,
        }
    }

    /// What this process's subscribers want: the filter of every tracked subscription.
    pub fn interest(&self) -> Vec<Filter> {
        let index = self.shared().index.read();
        index
            .all()
            .filter(|entry| entry.tracked)
            .map(|entry| entry.filter.clone())
            .collect()
    }

    /// A watch whose value changes whenever [`Bus::interest`] may have changed.
    pub fn watch_interest(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared().interest.subscribe()
    }

    /// Current number of subscriptions.
    pub fn subscriber_count(&self) -> usize {
        self.shared().index.read().len()
    }

    /// Closes the bus: publishing becomes a no-op, and every subscription's `recv` returns `None`
    /// once its queue is drained. Idempotent.
    pub fn close(&self) {
        self.shared().close();
    }

    /// Whether the bus is closed.
    pub fn is_closed(&self) -> bool {
        self.shared().closed.load(Ordering::Acquire)
    }

    /// The queue capacity [`Bus::subscribe`] uses.
    pub fn default_capacity(&self) -> usize {
        self.shared().default_capacity
    }

    /// Counters since the bus was created: messages published, deliveries, drops (lag), current
    /// subscriptions, closed flag. Cheap (atomic loads and one read lock).
    pub fn stats(&self) -> BusStats {
        let shared = self.shared();
        BusStats {
            published: shared.next_seq.load(Ordering::Relaxed),
            delivered: shared.delivered.load(Ordering::Relaxed),
            dropped: shared.dropped.load(Ordering::Relaxed),
            subscribers: self.subscriber_count(),
            closed: self.is_closed(),
        }
    }
}

/// One subscriber's receiving end. Dropping it unsubscribes.
pub struct Subscription {
    shared: Arc<Shared>,
    entry: Arc<SubEntry>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.entry.id)
            .field("filter", &self.entry.filter)
            .field("capacity", &self.entry.capacity())
            .field("queued", &self.entry.len())
            .finish()
    }
}

impl Subscription {
    /// This subscription's id (unique per bus).
    pub fn id(&self) -> u64 {
        self.entry.id
    }

    /// The next message or lag report; `None` once the bus is closed and the queue is empty.
    ///
    /// Cancel-safe: when the future is dropped before it completes (e.g. the other branch of a
    /// `tokio::select!` won), nothing is taken from the queue.
    pub async fn recv(&mut self) -> Option<Received> {
        let entry = &self.entry;
        poll_fn(|cx| entry.poll_pop(cx)).await
    }

    /// The next message or lag report if one is queued, without waiting. Works from any thread,
    /// with or without a tokio runtime. `None` when nothing is queued (see
    /// [`Subscription::is_closed`] to tell an ended subscription apart).
    pub fn try_recv(&mut self) -> Option<Received> {
        self.entry.try_pop().ok().flatten()
    }

    /// Total messages this subscription has missed so far.
    pub fn missed_total(&self) -> u64 {
        self.entry.missed_total()
    }

    /// This subscription's filter.
    pub fn filter(&self) -> &Filter {
        &self.entry.filter
    }

    /// This subscription's queue capacity.
    pub fn capacity(&self) -> usize {
        self.entry.capacity()
    }

    /// Messages queued now, waiting to be received (a pending lag report is not counted).
    pub fn queued(&self) -> usize {
        self.entry.len()
    }

    /// Whether the bus was closed (queued messages may still be waiting: `recv` yields them, then
    /// `None`).
    pub fn is_closed(&self) -> bool {
        self.entry.is_closed()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.shared.index.write().remove(&self.entry);
        if self.entry.tracked {
            self.shared
                .interest
                .send_modify(|generation| *generation += 1);
        }
    }
}
