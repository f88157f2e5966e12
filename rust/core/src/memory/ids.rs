//! Id allocation that never reuses an id, across any number of crashes.
//!
//! Agent numbers, task ids and memory ids are handed out from *reserved blocks*: before an id is handed out,
//! a row of `id_blocks` saying "ids up to `reserved_to` may be in use" is committed. A restart
//! continues after the larger of the highest stored id and `reserved_to`, so an id that was
//! handed out (in a reply, an event, a log line) before a crash is never handed out again, even
//! if the row that used it never reached the disk.
//!
//! - Blocks are [`BLOCK`] ids long ([`MEMORY_BLOCK`] for memories). When fewer than half a block is left, the next reservation is
//!   queued *without waiting* (it rides along with the ordinary write batches); an allocation
//!   only waits for a commit when it runs past every committed reservation, which at the normal
//!   write rates happens at the first allocation after opening the file and almost never again.
//! - A clean [`close`](super::Memory::close) writes a *release*: `reserved_to` goes back to the
//!   last id handed out, so a clean restart continues without a gap. After a crash the unused rest
//!   of the block is skipped (at most `2 × BLOCK` ids): ids are unique, not dense.
//!
//! A database several processes share (PostgreSQL) cannot extend one process's reservation:
//! there each process *claims* whole blocks ([`Claimed`]), and a claim is committed, by the
//! database's row lock, before any id in it is handed out.

use super::MemoryError;

/// Ids per reservation.
pub(crate) const BLOCK: i64 = 64;
/// Memory ids per reservation.
pub(crate) const MEMORY_BLOCK: i64 = 4096;

/// What a block of ids numbers: the key of its `id_blocks` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdKind {
    /// Agent numbers (`agent_001` is 1).
    Agent,
    /// Task ids.
    Task,
    /// Inbox row ids (claimed in blocks on a shared database; SQLite counts them in memory).
    Inbox,
    /// Memory ids (of the memory stream).
    Memory,
}

impl IdKind {
    /// Ids per reservation: [`BLOCK`], and [`MEMORY_BLOCK`] for memories (formed many times a
    /// second in a busy world: a bigger block keeps their writes from waiting on a commit).
    pub(crate) fn block(self) -> i64 {
        match self {
            IdKind::Memory => MEMORY_BLOCK,
            _ => BLOCK,
        }
    }

    /// The stored key (`id_blocks.kind`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            IdKind::Agent => "agent",
            IdKind::Task => "task",
            IdKind::Inbox => "inbox",
            IdKind::Memory => "memory",
        }
    }
}

/// Queues and commits reservations (the memory's writer, or a test double).
pub(crate) trait Reserve {
    /// Queues "ids of `kind` up to `to` may be in use"; returns the write's sequence number
    /// (0: the memory is closed).
    fn queue_reservation(&self, kind: IdKind, to: i64) -> u64;
    /// Whether the write `seq` is committed.
    fn is_committed(&self, seq: u64) -> bool;
    /// Blocks until the write `seq` is committed (an error if the writer failed or stopped).
    fn wait_committed(&self, seq: u64) -> Result<(), MemoryError>;
}

/// The allocator of one kind of id.
#[derive(Debug)]
pub(crate) struct IdBlock {
    kind: IdKind,
    /// The last id handed out (or, right after opening, the highest id that may be in use).
    last: i64,
    /// Ids up to here are covered by a committed reservation.
    durable_to: i64,
    /// A reservation queued but not known to be committed: `(sequence number, to)`.
    in_flight: Option<(u64, i64)>,
}

impl IdBlock {
    /// An allocator that continues after `highest`, the larger of the highest stored id and the
    /// stored reservation.
    pub(crate) fn new(kind: IdKind, highest: i64) -> IdBlock {
        let highest = highest.max(0);
        IdBlock {
            kind,
            last: highest,
            durable_to: highest,
            in_flight: None,
        }
    }

    /// The last id handed out (or the highest that may be in use).
    pub(crate) fn last(&self) -> i64 {
        self.last
    }

    /// Moves the allocator past `id` (an id stored by other means). Its reservation follows
    /// with the next allocation.
    pub(crate) fn observe(&mut self, id: i64) {
        self.last = self.last.max(id);
    }

    /// Hands out the next id once a committed reservation covers it.
    pub(crate) fn next(&mut self, reserve: &impl Reserve) -> Result<i64, MemoryError> {
        if let Some((seq, to)) = self.in_flight
            && reserve.is_committed(seq)
        {
            self.durable_to = self.durable_to.max(to);
            self.in_flight = None;
        }
        let id = self.last.checked_add(1).ok_or(MemoryError::IdsExhausted)?;
        if id > self.durable_to {
            let (seq, to) = match self.in_flight.take() {
                Some((seq, to)) if to >= id => (seq, to),
                _ => {
                    let to = id.saturating_add(self.kind.block() - 1);
                    (self.queue(reserve, to)?, to)
                }
            };
            reserve.wait_committed(seq)?;
            self.durable_to = to;
        }
        self.last = id;
        let block = self.kind.block();
        if self.in_flight.is_none() && self.durable_to - id < block / 2 {
            let to = self.durable_to.saturating_add(block);
            // A failure here surfaces at the allocation that needs this block.
            if let Ok(seq) = self.queue(reserve, to) {
                self.in_flight = Some((seq, to));
            }
        }
        Ok(id)
    }

    fn queue(&self, reserve: &impl Reserve, to: i64) -> Result<u64, MemoryError> {
        match reserve.queue_reservation(self.kind, to) {
            0 => Err(MemoryError::Closed),
            seq => Ok(seq),
        }
    }
}

/// Claims blocks of ids for one process of several (see [`Claimed`]).
pub(crate) trait Claim {
    /// Claims the next `count` ids above `floor` and above every earlier claim of any
    /// process; returns the last id of the claim (committed when this returns).
    fn claim(&self, kind: IdKind, floor: i64, count: i64) -> Result<i64, MemoryError>;
}

/// The allocator of one kind of id on a shared database: hands out the ids of its current
/// claim, and claims the next block when it is used up.
#[derive(Debug)]
pub(crate) struct Claimed {
    kind: IdKind,
    /// The last id handed out, or the highest id known to be in use.
    last: i64,
    /// The current claim: ids up to here (above `last`) are this process's.
    claimed_to: i64,
}

impl Claimed {
    /// An allocator that claims above `highest` (the highest id known when opening).
    pub(crate) fn new(kind: IdKind, highest: i64) -> Claimed {
        let highest = highest.max(0);
        Claimed {
            kind,
            last: highest,
            claimed_to: highest,
        }
    }

    /// The last id handed out (or the highest known in use).
    pub(crate) fn last(&self) -> i64 {
        self.last
    }

    /// The end of the current claim, and the last id handed out from it: what a clean close
    /// gives back.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn unused(&self) -> Option<(i64, i64)> {
        (self.claimed_to > self.last).then_some((self.last, self.claimed_to))
    }

    /// Moves past `id` (an id stored by other means): the next claim starts above it.
    pub(crate) fn observe(&mut self, id: i64) {
        if id > self.last {
            self.last = id;
            // Inside the claim, the ids above `id` are still this process's; past it, the
            // next id needs a new claim.
            self.claimed_to = self.claimed_to.max(id);
        }
    }

    /// Hands out the next id, claiming a new block first when the claim is used up.
    pub(crate) fn next(&mut self, store: &impl Claim) -> Result<i64, MemoryError> {
        if self.last >= self.claimed_to {
            let block = self.kind.block();
            let to = store.claim(self.kind, self.last, block)?;
            self.last = to - block;
            self.claimed_to = to;
        }
        let id = self.last.checked_add(1).ok_or(MemoryError::IdsExhausted)?;
        self.last = id;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    /// Reservations as a list; commits happen when the test says so.
    #[derive(Default)]
    struct Log {
        queued: RefCell<Vec<(u64, i64)>>,
        committed: RefCell<u64>,
        waits: RefCell<u32>,
    }

    impl Reserve for Log {
        fn queue_reservation(&self, _kind: IdKind, to: i64) -> u64 {
            let mut queued = self.queued.borrow_mut();
            let seq = queued.len() as u64 + 1;
            queued.push((seq, to));
            seq
        }
        fn is_committed(&self, seq: u64) -> bool {
            *self.committed.borrow() >= seq
        }
        fn wait_committed(&self, seq: u64) -> Result<(), MemoryError> {
            *self.waits.borrow_mut() += 1;
            let mut committed = self.committed.borrow_mut();
            *committed = (*committed).max(seq);
            Ok(())
        }
    }

    #[test]
    fn the_first_id_waits_for_a_reservation_then_the_block_is_used_without_waiting() {
        let log = Log::default();
        let mut ids = IdBlock::new(IdKind::Task, 10);
        assert_eq!(ids.next(&log).unwrap(), 11);
        assert_eq!(*log.waits.borrow(), 1);
        assert_eq!(log.queued.borrow()[0], (1, 10 + BLOCK));
        for expected in 12..=10 + BLOCK / 2 {
            assert_eq!(ids.next(&log).unwrap(), expected);
        }
        assert_eq!(*log.waits.borrow(), 1, "no waiting inside a reserved block");
    }

    #[test]
    fn the_next_block_is_queued_at_half_and_waited_for_only_if_still_in_flight() {
        let log = Log::default();
        let mut ids = IdBlock::new(IdKind::Agent, 0);
        for _ in 0..=BLOCK / 2 {
            ids.next(&log).unwrap();
        }
        assert_eq!(
            log.queued.borrow().len(),
            2,
            "prefetch queued at half a block"
        );
        assert_eq!(log.queued.borrow()[1].1, 2 * BLOCK);
        // The prefetch commits with the ordinary writes: crossing into it does not wait.
        *log.committed.borrow_mut() = 2;
        while ids.last() < BLOCK + 1 {
            ids.next(&log).unwrap();
        }
        assert_eq!(*log.waits.borrow(), 1);
    }

    #[test]
    fn an_id_is_never_handed_out_beyond_a_committed_reservation() {
        let log = Log::default();
        let mut ids = IdBlock::new(IdKind::Task, 0);
        for _ in 0..10 * BLOCK {
            let id = ids.next(&log).unwrap();
            let committed = *log.committed.borrow();
            let covered = log
                .queued
                .borrow()
                .iter()
                .filter(|(seq, _)| *seq <= committed)
                .map(|(_, to)| *to)
                .max()
                .unwrap();
            assert!(
                id <= covered,
                "id {id} beyond the committed reservation {covered}"
            );
        }
    }

    #[test]
    fn observing_a_higher_id_moves_the_allocator_and_its_reservation() {
        let log = Log::default();
        let mut ids = IdBlock::new(IdKind::Agent, 3);
        ids.observe(500);
        assert_eq!(ids.next(&log).unwrap(), 501);
        assert!(log.queued.borrow().iter().any(|&(_, to)| to >= 501));
    }

    struct Closed;
    impl Reserve for Closed {
        fn queue_reservation(&self, _: IdKind, _: i64) -> u64 {
            0
        }
        fn is_committed(&self, _: u64) -> bool {
            false
        }
        fn wait_committed(&self, _: u64) -> Result<(), MemoryError> {
            unreachable!("nothing was queued")
        }
    }

    /// A shared table of claims, as several processes see it.
    #[derive(Default)]
    struct Table {
        reserved_to: RefCell<i64>,
    }

    impl Claim for Table {
        fn claim(&self, _kind: IdKind, floor: i64, count: i64) -> Result<i64, MemoryError> {
            let mut to = self.reserved_to.borrow_mut();
            *to = (*to).max(floor) + count;
            Ok(*to)
        }
    }

    #[test]
    fn processes_claiming_from_one_table_never_share_an_id() {
        let table = Table::default();
        let mut a = Claimed::new(IdKind::Agent, 0);
        let mut b = Claimed::new(IdKind::Agent, 0);
        let mut seen = std::collections::BTreeSet::new();
        for n in 0..(5 * BLOCK) {
            let allocator = if n % 3 == 0 { &mut a } else { &mut b };
            let id = allocator.next(&table).unwrap();
            assert!(seen.insert(id), "id {id} handed out twice");
        }
        // A process opening later starts above every claim.
        let mut c = Claimed::new(IdKind::Agent, 3);
        let id = c.next(&table).unwrap();
        assert!(seen.iter().all(|&old| old < id));
    }

    #[test]
    fn an_observed_id_moves_the_next_claim_above_it() {
        let table = Table::default();
        let mut ids = Claimed::new(IdKind::Task, 0);
        assert_eq!(ids.next(&table).unwrap(), 1);
        ids.observe(1_000);
        assert_eq!(ids.next(&table).unwrap(), 1_001);
        assert_eq!(ids.unused(), Some((1_001, 1_000 + BLOCK)));
    }

    #[test]
    fn a_closed_memory_hands_out_no_id() {
        let mut ids = IdBlock::new(IdKind::Task, 7);
        assert!(matches!(ids.next(&Closed), Err(MemoryError::Closed)));
        assert_eq!(ids.last(), 7, "a failed allocation uses no id");
    }
}
