//! The subscription index: which subscriptions can match a message, found without scanning
//! every subscription.
//!
//! Each subscription lands in exactly one *class*, chosen from its filter:
//!
//! 1. **recipient-filtered** (`recipients` set): in `by_recipient[r]` for each listed recipient
//!    `r`, and — when it accepts broadcasts — in `broadcast_by_kind[k]` for each accepted kind;
//! 2. **sender-filtered** (no recipients, `senders` set): in `by_sender[s]` for each listed sender;
//! 3. **general** (neither): in `by_kind[k]` for each accepted kind.
//!
//! A message's candidates are: the `by_recipient` buckets of its recipients (or, for a broadcast,
//! `broadcast_by_kind[its kind]`), `by_sender[its sender]` and `by_kind[its kind]`. Those sets are
//! disjoint across classes, and within class 1 a subscription reached through an earlier
//! recipient of the same message is skipped, so each subscription is visited at most once per
//! message. The caller still applies [`Filter::matches`](super::Filter::matches) to each one.

use std::collections::HashMap;
use std::sync::Arc;

use super::BusMessage;
use super::message::MessageKind;
use super::queue::SubEntry;

/// Buckets up to this size are searched linearly on removal; larger ones keep a position map.
const LINEAR_MAX: usize = 16;

/// A set of subscriptions with fast iteration (a `Vec`) and O(1) removal once large.
#[derive(Default)]
pub(super) struct Bucket {
    items: Vec<Arc<SubEntry>>,
    /// id → position in `items`; only kept when `items` is larger than [`LINEAR_MAX`] (boxed:
    /// the many small buckets pay 8 bytes for it, not 48).
    #[allow(
        clippy::box_collection,
        reason = "most buckets are small: an empty Option<Box<_>> is 8 bytes, a HashMap 48"
    )]
    pos: Option<Box<HashMap<u64, usize>>>,
}

impl Bucket {
    fn insert(&mut self, entry: &Arc<SubEntry>) {
        if let Some(pos) = &mut self.pos {
            pos.insert(entry.id, self.items.len());
        }
        self.items.push(Arc::clone(entry));
        if self.pos.is_none() && self.items.len() > LINEAR_MAX {
            self.pos = Some(Box::new(
                self.items
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (e.id, i))
                    .collect(),
            ));
        }
    }

    fn remove(&mut self, id: u64) -> bool {
        let at = match &mut self.pos {
            Some(pos) => pos.remove(&id),
            None => self.items.iter().position(|e| e.id == id),
        };
        let Some(at) = at else { return false };
        self.items.swap_remove(at);
        if let (Some(pos), Some(moved)) = (&mut self.pos, self.items.get(at)) {
            pos.insert(moved.id, at);
        }
        if self.items.len() <= LINEAR_MAX / 2 {
            self.pos = None;
        }
        if self.items.is_empty() {
            self.items = Vec::new();
        }
        true
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, Arc<SubEntry>> {
        self.items.iter()
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

const KINDS: usize = MessageKind::ALL.len();

/// All subscriptions of a bus, indexed for publishing.
#[derive(Default)]
pub(super) struct Index {
    all: Bucket,
    by_recipient: HashMap<String, Bucket>,
    broadcast_by_kind: [Bucket; KINDS],
    by_sender: HashMap<String, Bucket>,
    by_kind: [Bucket; KINDS],
}

/// The kinds a filter accepts, as indexes.
fn accepted_kinds(entry: &SubEntry) -> impl Iterator<Item = usize> + '_ {
    MessageKind::ALL
        .into_iter()
        .filter(|k| entry.filter.kinds.as_ref().is_none_or(|ks| ks.contains(k)))
        .map(MessageKind::index)
}

impl Index {
    /// Number of subscriptions.
    pub(super) fn len(&self) -> usize {
        self.all.len()
    }

    /// Every subscription.
    pub(super) fn all(&self) -> std::slice::Iter<'_, Arc<SubEntry>> {
        self.all.iter()
    }

    /// Adds a subscription.
    pub(super) fn insert(&mut self, entry: &Arc<SubEntry>) {
        self.all.insert(entry);
        let f = &entry.filter;
        if let Some(recipients) = &f.recipients {
            for r in recipients {
                self.by_recipient
                    .entry(r.clone())
                    .or_default()
                    .insert(entry);
            }
            if f.include_broadcasts {
                for k in accepted_kinds(entry) {
                    self.broadcast_by_kind[k].insert(entry);
                }
            }
        } else if let Some(senders) = &f.senders {
            for s in senders {
                self.by_sender.entry(s.clone()).or_default().insert(entry);
            }
        } else {
            for k in accepted_kinds(entry) {
                self.by_kind[k].insert(entry);
            }
        }
    }

    /// Removes a subscription (a no-op when it is not indexed).
    pub(super) fn remove(&mut self, entry: &SubEntry) {
        if !self.all.remove(entry.id) {
            return;
        }
        let f = &entry.filter;
        if let Some(recipients) = &f.recipients {
            for r in recipients {
                remove_keyed(&mut self.by_recipient, r, entry.id);
            }
            if f.include_broadcasts {
                for k in accepted_kinds(entry) {
                    self.broadcast_by_kind[k].remove(entry.id);
                }
            }
        } else if let Some(senders) = &f.senders {
            for s in senders {
                remove_keyed(&mut self.by_sender, s, entry.id);
            }
        } else {
            for k in accepted_kinds(entry) {
                self.by_kind[k].remove(entry.id);
            }
        }
    }

    /// Calls `f` once for every subscription that may match `message` (see the module docs).
    pub(super) fn for_each_candidate(
        &self,
        message: &BusMessage,
        mut f: impl FnMut(&Arc<SubEntry>),
    ) {
        let kind = message.kind().index();
        let recipients = message.recipients();
        if recipients.is_empty() {
            self.broadcast_by_kind[kind].iter().for_each(&mut f);
        } else {
            for (i, r) in recipients.iter().enumerate() {
                let Some(bucket) = self.by_recipient.get(r.as_str()) else {
                    continue;
                };
                let earlier = &recipients[..i];
                for entry in bucket.iter() {
                    // Already visited through an earlier recipient of this message?
                    let seen = !earlier.is_empty()
                        && entry.filter.recipients.as_ref().is_some_and(|listed| {
                            earlier.iter().any(|p| listed.contains(p.as_str()))
                        });
                    if !seen {
                        f(entry);
                    }
                }
            }
        }
        if let Some(bucket) = self.by_sender.get(message.sender()) {
            bucket.iter().for_each(&mut f);
        }
        self.by_kind[kind].iter().for_each(&mut f);
    }
}

fn remove_keyed(map: &mut HashMap<String, Bucket>, key: &str, id: u64) {
    if let Some(bucket) = map.get_mut(key) {
        bucket.remove(id);
        if bucket.is_empty() {
            map.remove(key);
            if map.capacity() > 64 && map.len() < map.capacity() / 4 {
                map.shrink_to_fit();
            }
        }
    }
}
