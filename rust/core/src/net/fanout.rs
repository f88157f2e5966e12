//! Events to every connection, each serialised once.
//!
//! One task per server subscribes to the whole bus, renders each event to its protocol text
//! once, and broadcasts the envelope with its text to every connection (a `tokio` broadcast
//! channel: one slot per event, whatever the number of connections). A connection checks the
//! event against its own filter on the typed message and, when it matches, queues a reference to
//! the shared text: no per-connection serialisation, no per-connection copy.
//!
//! Lag: a connection more than the bus capacity (`RuntimeOptions::bus_capacity`) behind loses the
//! oldest events and receives `events_dropped` with the exact count, as with a bus subscription;
//! if the renderer itself falls behind the bus, every connection gets that report.
//! Nothing is rendered while no connection listens.

use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use tokio::runtime::Handle;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::bus::{Envelope, Filter, Received};
use crate::protocol::events::event_message;
use crate::protocol::to_text;
use crate::runtime::Runtime;

/// One broadcast item.
pub(crate) enum Fanned {
    /// An event and its protocol text.
    Event {
        /// The bus envelope (the connection filters on its typed message).
        envelope: Arc<Envelope>,
        /// The `ServerMessage` text, shared by every connection that sends it.
        text: Utf8Bytes,
    },
    /// The renderer's own bus queue overflowed: this many events were lost for everyone.
    Dropped(u64),
}

/// The receiving side a connection holds.
pub(crate) type Events = broadcast::Receiver<Arc<Fanned>>;

/// Starts the renderer on `handle`; it stops with `shutdown` or when the bus closes.
pub(crate) fn start(
    runtime: &Runtime,
    shutdown: CancellationToken,
    handle: &Handle,
) -> broadcast::Sender<Arc<Fanned>> {
    let capacity = runtime.bus().default_capacity();
    let (tx, _) = broadcast::channel(capacity);
    // The renderer's queue absorbs bursts published faster than they are rendered.
    let mut subscription = runtime.subscribe_with_capacity(Filter::all(), capacity * 4);
    let sender = tx.clone();
    handle.spawn(async move {
        loop {
            let received = tokio::select! {
                biased;
                _ = shutdown.cancelled() => return,
                r = subscription.recv() => r,
            };
            let fanned = match received {
                None => return,
                Some(_) if sender.receiver_count() == 0 => continue,
                Some(Received::Message(envelope)) => {
                    let text = to_text(&event_message(&envelope.message)).into();
                    Fanned::Event { envelope, text }
                }
                Some(Received::Lagged { missed }) => {
                    tracing::warn!("the event renderer missed {missed} bus messages");
                    Fanned::Dropped(missed)
                }
            };
            // An error only means no connection listens right now.
            let _ = sender.send(Arc::new(fanned));
        }
    });
    tx
}
