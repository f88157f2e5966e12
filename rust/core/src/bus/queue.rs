//! One subscriber's bounded queue: a lazily grown `VecDeque` behind a `parking_lot::Mutex`, a
//! missed-message counter and the waker of the (single) receiving task.
//!
//! Policy when full: **keep the oldest, drop the newest**. The dropped message is counted in
//! `missed`; the receiver is told (`Received::Lagged`) before it takes its next queued message.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;

use super::{Envelope, Filter, Received};

/// Above this many slots, an emptied queue gives its buffer back (a burst does not pin memory).
const SHRINK_ABOVE: usize = 256;

/// What [`SubEntry::push`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Push {
    /// Queued.
    Queued,
    /// The queue was full: dropped for this subscriber, counted as missed.
    Dropped,
    /// The subscription is closed.
    Closed,
}

/// A subscription's shared state: held by the bus index (to push) and by the `Subscription`.
pub(super) struct SubEntry {
    pub(super) id: u64,
    pub(super) filter: Filter,
    /// Whether the subscription is interest other processes should serve (see
    /// [`Bus::interest`](super::Bus::interest)).
    pub(super) tracked: bool,
    capacity: usize,
    state: Mutex<QueueState>,
}

#[derive(Default)]
struct QueueState {
    queue: VecDeque<Arc<Envelope>>,
    /// Missed since the last `Lagged` report.
    missed: u64,
    /// Missed since the subscription was created.
    missed_total: u64,
    waker: Option<Waker>,
    closed: bool,
}

impl SubEntry {
    /// A new entry; `capacity` is at least 1. Allocates no queue slots yet.
    pub(super) fn new(id: u64, filter: Filter, capacity: usize, closed: bool) -> Self {
        SubEntry {
            id,
            filter,
            tracked: true,
            capacity: capacity.max(1),
            state: Mutex::new(QueueState {
                closed,
                ..QueueState::default()
            }),
        }
    }

    /// The queue capacity.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Queues `envelope` unless full or closed. Never blocks beyond the short queue lock; wakes
    /// the receiver (outside the lock) when a message was queued.
    pub(super) fn push(&self, envelope: &Arc<Envelope>) -> Push {
        let waker = {
            let mut st = self.state.lock();
            if st.closed {
                return Push::Closed;
            }
            let len = st.queue.len();
            if len >= self.capacity {
                st.missed += 1;
                st.missed_total += 1;
                return Push::Dropped;
            }
            if len == st.queue.capacity() {
                // Grow geometrically but never beyond the subscription's capacity.
                let extra = len.max(4).min(self.capacity - len);
                st.queue.reserve_exact(extra);
            }
            st.queue.push_back(Arc::clone(envelope));
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Push::Queued
    }

    /// Marks the queue closed and wakes the receiver. Queued messages stay readable.
    pub(super) fn close(&self) {
        let waker = {
            let mut st = self.state.lock();
            st.closed = true;
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The next item without waiting: `Ok(Some)` an item, `Ok(None)` empty but open,
    /// `Err(())` closed and drained.
    pub(super) fn try_pop(&self) -> Result<Option<Received>, ()> {
        let mut st = self.state.lock();
        Self::pop_locked(&mut st)
    }

    /// Polls for the next item, registering `cx`'s waker when there is none. Cancel-safe: an item
    /// is only taken from the queue when it is returned.
    pub(super) fn poll_pop(&self, cx: &mut Context<'_>) -> Poll<Option<Received>> {
        let mut st = self.state.lock();
        match Self::pop_locked(&mut st) {
            Ok(Some(item)) => Poll::Ready(Some(item)),
            Err(()) => Poll::Ready(None),
            Ok(None) => {
                match &st.waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => st.waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }

    fn pop_locked(st: &mut QueueState) -> Result<Option<Received>, ()> {
        if st.missed > 0 {
            let missed = std::mem::take(&mut st.missed);
            return Ok(Some(Received::Lagged { missed }));
        }
        if let Some(env) = st.queue.pop_front() {
            if st.queue.is_empty() && st.queue.capacity() > SHRINK_ABOVE {
                st.queue = VecDeque::new();
            }
            return Ok(Some(Received::Message(env)));
        }
        if st.closed { Err(()) } else { Ok(None) }
    }

    /// Total messages missed so far.
    pub(super) fn missed_total(&self) -> u64 {
        self.state.lock().missed_total
    }

    /// Messages queued now (not counting a pending lag report).
    pub(super) fn len(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// Whether the subscription is closed (the bus was closed or dropped).
    pub(super) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }
}
