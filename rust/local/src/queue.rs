//! The answers waiting for a sequence of a model, taken in turns between parties.
//!
//! A [`Job`] says whose it is ([`Job::party`]: the connection that spawned its agent, or the
//! game itself). The model's thread takes waiting answers round-robin across the parties that
//! have some, and in order within one, so a party's backlog — however long — keeps another
//! party's answer waiting for at most one turn of each other party. An answer whose [`Answer`]
//! is dropped leaves the queue at once, not when its turn comes.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::event::Event;
use crate::settings::Job;

/// One answer waiting for a sequence.
pub(crate) struct Waiting {
    /// Its number, for [`Queue::remove`].
    id: u64,
    pub(crate) job: Box<Job>,
    pub(crate) events: UnboundedSender<Event>,
}

/// The waiting answers of a model, by party.
#[derive(Default)]
pub(crate) struct Queue(Mutex<Parties>);

#[derive(Default)]
struct Parties {
    /// The parties with answers waiting, the next to be served first.
    turns: VecDeque<String>,
    /// Each party's waiting answers, oldest first.
    waiting: HashMap<String, VecDeque<Waiting>>,
    /// The next answer's number.
    next: u64,
}

impl Queue {
    /// Queues an answer at the end of its party's; returns its number.
    pub(crate) fn push(&self, job: Box<Job>, events: UnboundedSender<Event>) -> u64 {
        let mut parties = self.0.lock();
        let id = parties.next;
        parties.next += 1;
        let party = job.party.clone();
        let Parties { turns, waiting, .. } = &mut *parties;
        let queued = waiting.entry(party.clone()).or_default();
        if queued.is_empty() {
            turns.push_back(party);
        }
        queued.push_back(Waiting { id, job, events });
        id
    }

    /// The next answer to start: the oldest of the party whose turn it is (that party's next
    /// turn comes after every other waiting party's).
    pub(crate) fn pop(&self) -> Option<Waiting> {
        let mut parties = self.0.lock();
        let Parties { turns, waiting, .. } = &mut *parties;
        let party = turns.pop_front()?;
        let queued = waiting.get_mut(&party)?;
        let next = queued.pop_front();
        if queued.is_empty() {
            waiting.remove(&party);
        } else {
            turns.push_back(party);
        }
        next
    }

    /// Takes answer `id` out of the queue, if it still waits.
    pub(crate) fn remove(&self, id: u64) {
        let mut parties = self.0.lock();
        let Parties { turns, waiting, .. } = &mut *parties;
        let Some((party, queued)) = waiting
            .iter_mut()
            .find(|(_, queued)| queued.iter().any(|w| w.id == id))
        else {
            return;
        };
        queued.retain(|w| w.id != id);
        if queued.is_empty() {
            let party = party.clone();
            waiting.remove(&party);
            turns.retain(|p| *p != party);
        }
    }

    /// How many answers wait.
    pub(crate) fn len(&self) -> usize {
        self.0.lock().waiting.values().map(VecDeque::len).sum()
    }
}

/// The events of one answer ([`crate::Model::run`]). Dropping it cancels the answer: a waiting
/// one leaves the model's queue at once, a running one stops before the next decode step.
pub struct Answer {
    events: UnboundedReceiver<Event>,
    id: u64,
    queue: Arc<Queue>,
}

impl Answer {
    pub(crate) fn new(events: UnboundedReceiver<Event>, id: u64, queue: Arc<Queue>) -> Self {
        Answer { events, id, queue }
    }

    /// The next event; `None` once the model has stopped without a last one.
    pub async fn recv(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// The next event, blocking this thread (not from async code).
    pub fn blocking_recv(&mut self) -> Option<Event> {
        self.events.blocking_recv()
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        self.queue.remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Sampling;

    fn job(party: &str, key: &str) -> Box<Job> {
        Box::new(Job {
            key: key.into(),
            party: party.into(),
            messages: Vec::new(),
            schema: None,
            sampling: Sampling::default(),
            max_tokens: 1,
            timeout: None,
        })
    }

    fn order(queue: &Queue) -> Vec<String> {
        std::iter::from_fn(|| queue.pop().map(|w| w.job.key)).collect()
    }

    #[test]
    fn parties_take_turns_and_each_keeps_its_order() {
        let queue = Queue::default();
        let (events, _keep) = tokio::sync::mpsc::unbounded_channel();
        // One party's backlog of 200 comes first; two others ask after it.
        for i in 0..200 {
            queue.push(job("flood", &format!("f{i}")), events.clone());
        }
        queue.push(job("", "game"), events.clone());
        queue.push(job("other", "o0"), events.clone());
        queue.push(job("other", "o1"), events.clone());
        let order = order(&queue);
        assert_eq!(order.len(), 203);
        assert_eq!(&order[..6], ["f0", "game", "o0", "f1", "o1", "f2"]);
        let flood: Vec<_> = order.iter().filter(|k| k.starts_with('f')).collect();
        assert!(flood.windows(2).all(|w| w[0][1..].parse::<u32>().unwrap() + 1
            == w[1][1..].parse::<u32>().unwrap()));
    }

    #[test]
    fn a_dropped_answer_leaves_the_queue_at_once() {
        let queue = Arc::new(Queue::default());
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let id = queue.push(job("a", "a0"), events.clone());
        queue.push(job("b", "b0"), events.clone());
        let answer = Answer::new(receiver, id, queue.clone());
        assert_eq!(queue.len(), 2);
        drop(answer);
        assert_eq!(queue.len(), 1);
        assert_eq!(order(&queue), ["b0"]);
        // Dropping one that already started changes nothing.
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let id = queue.push(job("a", "a1"), events);
        assert!(queue.pop().is_some());
        drop(Answer::new(receiver, id, queue.clone()));
        assert_eq!(queue.len(), 0);
    }
}
