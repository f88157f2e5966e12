//! The inter-agent message bus (SKELETON — the bus helper replaces every `todo!()`).
//!
//! Typed [`BusMessage`]s, published without ever blocking; each subscriber has a [`Filter`]
//! (by kind, sender, recipient) checked at publish time, and its own bounded queue. A subscriber
//! whose queue is full misses messages and is told so ([`Received::Lagged`]) before its next
//! message: a slow subscriber never blocks publishers or other subscribers.

mod message;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

pub use message::{BusMessage, MessageKind, ParseKindError};

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
}

/// Which messages a subscriber wants. The default ([`Filter::all`]) accepts everything.
///
/// A message matches when its kind is accepted, its sender is accepted, and — when the filter
/// names recipients — it is addressed to one of them, or it is a broadcast (no recipients) and the
/// filter accepts broadcasts.
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
    /// Accepts every message.
    pub fn all() -> Self {
        todo!()
    }
    /// Only these kinds.
    pub fn kinds(self, kinds: impl IntoIterator<Item = MessageKind>) -> Self {
        let _ = kinds;
        todo!()
    }
    /// Only from these senders.
    pub fn senders<S: Into<String>>(self, senders: impl IntoIterator<Item = S>) -> Self {
        let _ = senders;
        todo!()
    }
    /// Only addressed to these recipients (plus broadcasts if `include_broadcasts`).
    pub fn recipients<S: Into<String>>(self, recipients: impl IntoIterator<Item = S>) -> Self {
        let _ = recipients;
        todo!()
    }
    /// Whether broadcasts pass a recipient filter.
    pub fn with_broadcasts(self, include: bool) -> Self {
        let _ = include;
        todo!()
    }
    /// Whether `message` passes.
    pub fn matches(&self, message: &BusMessage) -> bool {
        let _ = message;
        todo!()
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
    /// The message's sequence number.
    pub seq: u64,
    /// Subscribers it was queued for.
    pub delivered: usize,
    /// Subscribers that matched but whose queue was full (they will see `Lagged`).
    pub dropped: usize,
}

/// The bus. Cheap to clone (an `Arc`); `Send + Sync`.
#[derive(Clone)]
pub struct Bus {
    _private: Arc<()>,
}

impl Bus {
    /// A bus whose subscriptions queue up to `default_capacity` messages each.
    pub fn new(default_capacity: usize) -> Self {
        let _ = default_capacity;
        todo!()
    }
    /// Publishes to every matching subscriber. Never blocks, never waits for a subscriber.
    pub fn publish(&self, message: BusMessage) -> PublishReport {
        let _ = message;
        todo!()
    }
    /// Subscribes with the default capacity.
    pub fn subscribe(&self, filter: Filter) -> Subscription {
        let _ = filter;
        todo!()
    }
    /// Subscribes with a queue of `capacity` messages.
    pub fn subscribe_with_capacity(&self, filter: Filter, capacity: usize) -> Subscription {
        let _ = (filter, capacity);
        todo!()
    }
    /// Current number of subscriptions.
    pub fn subscriber_count(&self) -> usize {
        todo!()
    }
    /// Closes the bus: publishing becomes a no-op, and every subscription's `recv` returns `None`
    /// once its queue is drained.
    pub fn close(&self) {
        todo!()
    }
}

/// One subscriber's receiving end. Dropping it unsubscribes.
pub struct Subscription {
    _private: (),
}

impl Subscription {
    /// This subscription's id (unique per bus).
    pub fn id(&self) -> u64 {
        todo!()
    }
    /// The next message or lag report; `None` once the bus is closed and the queue is empty.
    pub async fn recv(&mut self) -> Option<Received> {
        todo!()
    }
    /// The next message or lag report if one is queued, without waiting.
    pub fn try_recv(&mut self) -> Option<Received> {
        todo!()
    }
    /// Total messages this subscription has missed so far.
    pub fn missed_total(&self) -> u64 {
        todo!()
    }
}
