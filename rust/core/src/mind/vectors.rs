//! Recall by meaning: the vectors an embeddings endpoint made of an agent's memories, kept in
//! memory per agent so a decision compares its query with all of them without reading the
//! database.
//!
//! - **Stored** exactly (32-bit floats, length 1) in `memory_vectors`, one row per memory,
//!   with the model's name: [`crate::memory::Memory::store_vectors`].
//! - **Held** here quantised to 8 bits per number with one scale per vector (a quarter of the
//!   memory; the query is quantised the same way, so a comparison is a dot product of small
//!   whole numbers; the cosine moves by well under 0.01), an agent's vectors read from the database
//!   the first time it recalls, then kept up to date as new ones are made
//!   ([`VectorIndex::add`]) and memories are forgotten or summed up ([`VectorIndex::remove`]).
//! - **Bounded**: when an agent's vectors are read in and the index holds more than its
//!   capacity, the agents that recalled least recently are dropped (and read again when they
//!   next recall).
//! - **Searched** by brute force: the cosine of the query with every vector of the agent, the
//!   best [`AgentVectors::nearest`] kept. At 10,000 memories of 768 numbers that is 7.7 MB
//!   read per search (`docs/benchmarks.md` has its cost).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::memory::{Memory, MemoryError};

/// An agent's vectors, quantised: its memories' ids, their codes (`dimension` per memory,
/// one after the other) and each vector's scale.
#[derive(Default)]
pub struct AgentVectors {
    dimension: usize,
    ids: Vec<i64>,
    codes: Vec<i8>,
    scales: Vec<f32>,
    positions: HashMap<i64, usize>,
}

impl std::fmt::Debug for AgentVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentVectors")
            .field("vectors", &self.ids.len())
            .field("dimension", &self.dimension)
            .finish()
    }
}

/// Bytes one held vector of `dimension` numbers takes (its codes, scale, id and place).
fn bytes_per_vector(dimension: usize) -> usize {
    dimension + 4 + 8 + 24
}

impl AgentVectors {
    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes it holds.
    fn bytes(&self) -> usize {
        self.ids.len() * bytes_per_vector(self.dimension)
    }

    /// Adds (or replaces) the vector of memory `id`. A vector of another dimension than those
    /// held, empty or not finite is refused (false).
    pub fn insert(&mut self, id: i64, vector: &[f32]) -> bool {
        if vector.is_empty() || vector.iter().any(|x| !x.is_finite()) {
            return false;
        }
        if self.ids.is_empty() {
            self.dimension = vector.len();
        } else if vector.len() != self.dimension {
            return false;
        }
        let (codes, scale) = quantise(vector);
        match self.positions.get(&id) {
            Some(&at) => {
                let d = self.dimension;
                self.codes[at * d..(at + 1) * d].copy_from_slice(&codes);
                self.scales[at] = scale;
            }
            None => {
                self.positions.insert(id, self.ids.len());
                self.ids.push(id);
                self.codes.extend_from_slice(&codes);
                self.scales.push(scale);
            }
        }
        true
    }

    /// Removes the vector of memory `id`, if held.
    pub fn remove(&mut self, id: i64) {
        let Some(at) = self.positions.remove(&id) else {
            return;
        };
        let last = self.ids.len() - 1;
        let d = self.dimension;
        if at != last {
            let moved = self.ids[last];
            self.ids[at] = moved;
            self.scales[at] = self.scales[last];
            self.codes.copy_within(last * d..(last + 1) * d, at * d);
            self.positions.insert(moved, at);
        }
        self.ids.pop();
        self.scales.pop();
        self.codes.truncate(last * d);
    }

    /// The cosine of `query` with memory `id`'s vector, if one is held and the dimensions
    /// agree.
    pub fn similarity(&self, id: i64, query: &Query) -> Option<f32> {
        let at = *self.positions.get(&id)?;
        (query.codes.len() == self.dimension).then(|| self.cosine_at(at, query))
    }

    /// The `k` memories nearest to `query` by cosine, nearest first (ties: the newer first);
    /// none when the dimensions differ.
    pub fn nearest(&self, query: &Query, k: usize) -> Vec<(i64, f32)> {
        if query.codes.len() != self.dimension || k == 0 || self.ids.is_empty() {
            return Vec::new();
        }
        let mut all: Vec<(i64, f32)> = (0..self.ids.len())
            .map(|at| (self.ids[at], self.cosine_at(at, query)))
            .collect();
        let order = |a: &(i64, f32), b: &(i64, f32)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
        if all.len() > k {
            all.select_nth_unstable_by(k - 1, order);
            all.truncate(k);
        }
        all.sort_by(order);
        all
    }

    /// The cosine of `query` with the vector at `at`.
    fn cosine_at(&self, at: usize, query: &Query) -> f32 {
        let d = self.dimension;
        dot_codes(&query.codes, &self.codes[at * d..(at + 1) * d]) as f32
            * query.scale
            * self.scales[at]
    }
}

/// A query's vector, quantised as held vectors are (once per recall, not per comparison).
#[derive(Clone)]
pub struct Query {
    codes: Vec<i8>,
    scale: f32,
}

impl Query {
    /// `vector` (any length: it is scaled to 1) as a query.
    pub fn new(vector: &[f32]) -> Query {
        let (codes, scale) = quantise(vector);
        Query { codes, scale }
    }
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("dimension", &self.codes.len())
            .finish()
    }
}

/// `vector` scaled to length 1 (a zero vector stays zero).
pub fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    agents_llm::embeddings::normalize(&mut vector);
    vector
}

/// A vector as 8-bit codes and the scale that brings them back: `x ≈ code × scale`, after
/// scaling the vector to length 1.
fn quantise(vector: &[f32]) -> (Vec<i8>, f32) {
    let unit = unit(vector.to_vec());
    let largest = unit.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return (vec![0; unit.len()], 0.0);
    }
    let scale = largest / 127.0;
    let codes = unit
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (codes, scale)
}

/// `Σ a[i] × b[i]` in whole numbers: with AVX2 where the CPU has it (checked once and
/// cached by the standard library), else as the build's target allows.
fn dot_codes(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { dot_codes_avx2(a, b) };
    }
    dot_codes_portable(a, b)
}

/// [`dot_codes_portable`] compiled for AVX2 (32-byte multiply-adds).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_codes_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_codes_portable(a, b)
}

/// `Σ a[i] × b[i]` in whole numbers, sixteen lanes at a time (so the compiler vectorises
/// it into multiply-adds of 16-bit pairs). At most 127² × 16,384 per vector: no overflow.
#[inline(always)]
fn dot_codes_portable(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0_i32; 16];
    let (a_chunks, b_chunks) = (a.chunks_exact(16), b.chunks_exact(16));
    let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
    for (a, b) in a_chunks.zip(b_chunks) {
        for lane in 0..16 {
            lanes[lane] += i32::from(a[lane]) * i32::from(b[lane]);
        }
    }
    let rest: i32 = a_rest
        .iter()
        .zip(b_rest)
        .map(|(a, b)| i32::from(*a) * i32::from(*b))
        .sum();
    lanes.iter().sum::<i32>() + rest
}

/// The vectors of every agent that recalled lately, made by one model, within a byte bound.
#[derive(Debug)]
pub struct VectorIndex {
    model: String,
    capacity_bytes: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    agents: HashMap<String, Held>,
    tick: u64,
}

#[derive(Debug)]
struct Held {
    vectors: Arc<RwLock<AgentVectors>>,
    /// Whether the database's vectors were read in (else only those added since are held).
    loaded: Arc<Mutex<bool>>,
    last_used: u64,
}

impl VectorIndex {
    /// An empty index of `model`'s vectors holding at most `capacity_bytes`.
    pub fn new(model: impl Into<String>, capacity_bytes: usize) -> VectorIndex {
        VectorIndex {
            model: model.into(),
            capacity_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// The model whose vectors it holds.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// `agent_id`'s vectors, read from `memory` the first time (waiting for the vectors queued
    /// before) — and then, if the index is over its bound, the agents that recalled least
    /// recently are dropped. Vectors stored with another dimension than the first are skipped.
    pub fn agent(
        &self,
        agent_id: &str,
        memory: &Memory,
    ) -> Result<Arc<RwLock<AgentVectors>>, MemoryError> {
        let (vectors, loaded) = {
            let mut state = self.state.lock();
            state.tick += 1;
            let tick = state.tick;
            let held = state
                .agents
                .entry(agent_id.to_string())
                .or_insert_with(|| Held {
                    vectors: Arc::default(),
                    loaded: Arc::default(),
                    last_used: tick,
                });
            held.last_used = tick;
            (held.vectors.clone(), held.loaded.clone())
        };
        let mut loaded = loaded.lock();
        if !*loaded {
            let stored = memory.memory_vectors(agent_id, &self.model)?;
            let mut held = vectors.write();
            let skipped = stored
                .into_iter()
                .filter(|(id, v)| !held.positions.contains_key(id) && !held.insert(*id, v))
                .count();
            if skipped > 0 {
                tracing::warn!(
                    agent = %agent_id,
                    "{skipped} stored memory vectors of model '{}' have another dimension than \
                     the agent's others and are not used",
                    self.model
                );
            }
            *loaded = true;
            drop(held);
            // Reading an agent in is what grows the index: the bound is checked then, not at
            // every recall.
            self.bound(agent_id);
        }
        drop(loaded);
        Ok(vectors)
    }

    /// Adds new vectors of `agent_id`'s memories to its vectors, when they are held (else the
    /// database has them for its next read). Returns how many were refused for their
    /// dimension.
    pub fn add(&self, agent_id: &str, vectors: &[(i64, Vec<f32>)]) -> usize {
        let Some(held) = self.held(agent_id) else {
            return 0;
        };
        let mut held = held.write();
        vectors
            .iter()
            .filter(|(id, v)| !held.insert(*id, v))
            .count()
    }

    /// Drops the vectors of `agent_id`'s memories `ids` (forgotten, summed up).
    pub fn remove(&self, agent_id: &str, ids: &[i64]) {
        if let Some(held) = self.held(agent_id) {
            let mut held = held.write();
            for id in ids {
                held.remove(*id);
            }
        }
    }

    /// `agent_id`'s vectors, if held (without making them recent).
    fn held(&self, agent_id: &str) -> Option<Arc<RwLock<AgentVectors>>> {
        let state = self.state.lock();
        state.agents.get(agent_id).map(|h| h.vectors.clone())
    }

    /// Drops the agents that recalled least recently, other than `keep`, while over the bound.
    fn bound(&self, keep: &str) {
        let mut state = self.state.lock();
        let mut total: usize = state
            .agents
            .values()
            .map(|h| h.vectors.read().bytes())
            .sum();
        while total > self.capacity_bytes {
            let oldest = state
                .agents
                .iter()
                .filter(|(id, _)| id.as_str() != keep)
                .min_by_key(|(_, h)| h.last_used)
                .map(|(id, h)| (id.clone(), h.vectors.read().bytes()));
            let Some((id, bytes)) = oldest else { break };
            state.agents.remove(&id);
            total -= bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(seed: u64, d: usize) -> Vec<f32> {
        // A deterministic spread of numbers in [-1, 1).
        let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (0..d)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((x >> 40) as f32 / (1u64 << 23) as f32) - 1.0
            })
            .collect()
    }

    #[test]
    fn quantised_cosines_stay_within_a_hundredth_of_the_exact_ones() {
        let mut held = AgentVectors::default();
        let d = 768;
        for id in 1..=200 {
            assert!(held.insert(id, &vector(id as u64, d)));
        }
        let exact_query = unit(vector(7, d));
        let query = Query::new(&exact_query);
        for id in 1..=200 {
            let exact = agents_llm::embeddings::cosine(&exact_query, &vector(id as u64, d));
            let near = held.similarity(id, &query).unwrap();
            assert!((exact - near).abs() < 0.01, "{id}: {exact} vs {near}");
        }
        let nearest = held.nearest(&query, 3);
        assert_eq!(nearest[0].0, 7, "{nearest:?}");
        assert!((nearest[0].1 - 1.0).abs() < 0.01);
        assert_eq!(nearest.len(), 3);
        assert!(nearest[0].1 >= nearest[1].1 && nearest[1].1 >= nearest[2].1);
    }

    #[test]
    fn vectors_are_replaced_removed_and_refused_by_dimension() {
        let mut held = AgentVectors::default();
        assert!(held.insert(1, &[1.0, 0.0]));
        assert!(held.insert(2, &[0.0, 1.0]));
        assert!(held.insert(3, &[1.0, 1.0]));
        assert!(!held.insert(4, &[1.0, 0.0, 0.0]), "another dimension");
        assert!(!held.insert(4, &[f32::NAN, 0.0]), "not finite");
        assert!(held.insert(1, &[0.0, -1.0]), "replaced");
        assert_eq!(held.len(), 3);
        let up = Query::new(&[0.0, 1.0]);
        assert!((held.similarity(1, &up).unwrap() + 1.0).abs() < 0.01);
        held.remove(1);
        held.remove(1);
        assert_eq!(held.len(), 2);
        assert_eq!(held.similarity(1, &up), None);
        // The last vector moved into the removed one's place is still found.
        assert!((held.similarity(3, &Query::new(&[1.0, 1.0])).unwrap() - 1.0).abs() < 0.01);
        assert_eq!(held.nearest(&up, 1)[0].0, 2);
        assert!(held.nearest(&Query::new(&[1.0, 0.0, 0.0]), 5).is_empty());
    }

    #[test]
    fn past_its_bound_the_agent_that_recalled_least_recently_is_dropped_and_read_again() {
        use crate::memory::{MemoryKind, NewMemory};
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::open(dir.path().join("vectors.db")).unwrap();
        for agent in ["agent_001", "agent_002"] {
            let (id, _) = memory
                .remember(agent, NewMemory::new(MemoryKind::Fact, "A fact."), 0)
                .unwrap();
            memory.store_vectors(agent, "m", &[(id, vec![1.0, 0.0])]);
        }
        // Room for one vector.
        let index = VectorIndex::new("m", bytes_per_vector(2));
        assert_eq!(index.agent("agent_001", &memory).unwrap().read().len(), 1);
        index.agent("agent_002", &memory).unwrap();
        assert!(index.held("agent_001").is_none());
        assert!(index.held("agent_002").is_some());
        assert_eq!(index.agent("agent_001", &memory).unwrap().read().len(), 1);
        assert!(index.held("agent_002").is_none());
    }
}
