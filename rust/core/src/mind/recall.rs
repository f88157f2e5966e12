//! Recall: the memories a decision is given, scored as in Generative Agents — recency ×
//! importance × relevance, each between 0 and 1, weighted and summed.
//!
//! - **Recency** halves every [`MemorySettings::recency_half_life_seconds`] of game time since
//!   the memory was last recalled (or formed, if never): `0.5^(age / half_life)`.
//! - **Importance** is the memory's 1–10 over 10.
//! - **Relevance** is the keyword rank of the memory for the query (what is happening now:
//!   the lines to answer, the current task, what the agent notices, who is near), over the best
//!   rank of the search; 0 for a memory that shares no word with it. With an embeddings
//!   endpoint ([`super::EmbeddingSettings`]) it is fused with the memory's closeness in
//!   meaning: `(1 − w) × keyword + w × semantic`, `w` the agent's
//!   [`MemorySettings::semantic_weight`] and `semantic` the cosine of the memory's vector with
//!   the query's over the best cosine of any of its memories (negative cosines count 0) — a
//!   convex combination of normalised scores, which Bruch, Gai and Ingber ("An Analysis of
//!   Fusion Functions for Hybrid Retrieval", 2023) found better than reciprocal-rank fusion.
//!   A memory not embedded yet counts by its keyword rank alone.
//!
//! The candidates are the best keyword matches ([`CANDIDATES`]), the nearest in meaning
//! ([`CANDIDATES`] more, with an endpoint) and the newest memories ([`NEWEST`]), so an agent with 10,000 memories reads a few dozen rows per decision. Each
//! line a decision answers is also searched apart (its best [`crate::memory::LINE_MATCHES`];
//! by meaning too when it answers several), without the agent's own name ([`without_name`]), a
//! memory's relevance is its best over the searches, and each line's best match is kept before
//! the others: a question keeps its answer beside a chatty line, the task and the names in the
//! query. A
//! superseded memory (a belief that turned out wrong) scores a quarter of its score, so the
//! current one comes first while the old one can still be recalled, marked. The best are kept
//! up to [`MemorySettings::recall_limit`] and within [`MemorySettings::recall_budget_tokens`];
//! a memory of a line the decision already shows in its recent conversation is kept too (the
//! scripted brain may answer from it) but costs nothing and is not shown twice. What the agent
//! thinks of the people whose lines it answers (their current relationship memory) is a
//! candidate too, with full relevance: it comes up whenever they speak to it.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use super::MemorySettings;
use super::vectors::{AgentVectors, Query};
use crate::brain::BrainContext;
use crate::memory::{Memory, MemoryError, StoredMemory};

/// Keyword matches read per recall.
pub const CANDIDATES: usize = 32;
/// Newest memories read per recall (recent and important ones count even without a match).
pub const NEWEST: usize = 16;
/// The factor of a superseded memory's score.
pub const SUPERSEDED_FACTOR: f64 = 0.25;

/// A memory recalled for a decision, with its score and the parts of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Recalled {
    /// The memory.
    pub memory: StoredMemory,
    /// The weighted sum of the parts (a superseded memory's is a quarter of it).
    pub score: f64,
    /// 0 to 1: how recently it happened or was last recalled.
    pub recency: f64,
    /// 0 to 1: its importance over 10.
    pub importance: f64,
    /// 0 to 1: how well it matches what is happening now (by its words, and by its meaning
    /// when `semantic` is set).
    pub relevance: f64,
    /// 0 to 1: how close its meaning is to what is happening now, when the recall compared
    /// vectors (an embeddings endpoint answered and the memory has a vector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<f64>,
    /// Whether the decision already shows it (a line of the recent conversation): then it is
    /// not shown again and costs no budget.
    pub in_view: bool,
}

/// What a decision recalls by: the words of what is happening now, the game time, and the
/// lines the decision already shows.
#[derive(Clone, Debug, Default)]
pub struct Cue {
    /// What is happening now, as text (searched by its plain words).
    pub query: String,
    /// The game time now, in seconds.
    pub now: f64,
    /// Lines the decision shows already, as `(speaker id, line)`: memories of them are in
    /// view.
    pub in_view: Vec<(String, String)>,
    /// Memory texts the decision shows already in another form (its app's last events, as
    /// [`super::forming::in_app`] writes them): those memories are in view too.
    pub shown: Vec<String>,
    /// Whether to wait for the memories queued before the recall to be stored (the game's
    /// `recall`), or to read what is stored now (a decision's).
    pub wait_for_writes: bool,
    /// The lines the decision answers, each searched apart as well when there are several
    /// (at most [`MAX_LINES`]).
    pub lines: Vec<String>,
    /// Who the decision is with (the ids of those whose lines it answers): what the agent
    /// thinks of each ([`crate::memory::MemoryKind::Relationship`]) is recalled as fully
    /// relevant.
    pub people: Vec<String>,
    /// What to recall by in meaning, when the runtime has an embeddings endpoint and it
    /// answered: none, words only.
    pub meaning: Option<Meaning>,
}

/// What a recall compares by meaning: the vectors of its query and of each line searched
/// apart, and the agent's memories' vectors.
#[derive(Clone, Debug)]
pub struct Meaning {
    /// The agent's memories' vectors ([`super::vectors::VectorIndex::agent`]).
    pub vectors: Arc<RwLock<AgentVectors>>,
    /// The query's vector, then each line's (as [`Cue::lines`]).
    pub queries: Vec<Query>,
}

impl Meaning {
    /// The memories nearest to each query vector (the query's best [`CANDIDATES`], each
    /// line's best [`crate::memory::LINE_MATCHES`]), each once; and per query vector the
    /// best cosine of any memory (what closeness is measured against).
    fn nearest(&self) -> (Vec<i64>, Vec<f32>) {
        let held = self.vectors.read();
        let mut ids: Vec<i64> = Vec::new();
        let mut best = Vec::with_capacity(self.queries.len());
        for (i, query) in self.queries.iter().enumerate() {
            let k = if i == 0 {
                CANDIDATES
            } else {
                crate::memory::LINE_MATCHES
            };
            let found = held.nearest(query, k);
            best.push(found.first().map_or(0.0, |(_, cosine)| *cosine));
            for (id, _) in found {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        (ids, best)
    }

    /// Memory `id`'s closeness in meaning, 0 to 1: its best cosine over the query vectors,
    /// each over that vector's best (`None`: it has no vector).
    fn closeness(&self, held: &AgentVectors, id: i64, best: &[f32]) -> Option<f64> {
        self.queries
            .iter()
            .zip(best)
            .filter_map(|(query, best)| {
                let cosine = held.similarity(id, query)?;
                Some(if *best > 0.0 {
                    f64::from((cosine / best).clamp(0.0, 1.0))
                } else {
                    0.0
                })
            })
            .reduce(f64::max)
    }
}

/// What a decision recalls by, as text: the lines it answers, what it notices, how its walk
/// went, its current task, then who is near (the first words count first: a search keeps
/// [`crate::memory::MAX_SEARCH_TERMS`]).
pub fn query_of(context: &BrainContext) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(
        context
            .incoming
            .iter()
            .map(|m| without_name(&m.content, &context.name)),
    );
    parts.extend(context.observations.iter().cloned());
    if let Some(movement) = &context.movement {
        parts.push(movement.describe());
    }
    if let Some(task) = &context.current_task {
        parts.push(task.task_name.clone());
    }
    parts.extend(context.nearby.iter().map(|a| a.name.clone()));
    parts.join("\n")
}

/// Most lines of one decision searched apart.
pub const MAX_LINES: usize = 4;

/// The lines a decision answers, at most [`MAX_LINES`] (the newest), without the agent's own
/// name (see [`without_name`]).
pub fn lines_of(context: &BrainContext) -> Vec<String> {
    let skip = context.incoming.len().saturating_sub(MAX_LINES);
    context
        .incoming
        .iter()
        .skip(skip)
        .map(|m| without_name(&m.content, &context.name))
        .collect()
}

/// `line` without the words of `name` ("Mira, where are the lanterns?" → "where are the
/// lanterns" for Mira): a line says the listener's name to address it, not to ask about it,
/// and every line addressed to it would otherwise match.
pub fn without_name(line: &str, name: &str) -> String {
    let own: Vec<String> = name
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if own.is_empty() {
        return line.to_string();
    }
    line.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !own.contains(&w.to_lowercase()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Most people one decision recalls what it thinks of.
pub const MAX_PEOPLE: usize = 4;

/// What a decision shows already as memory texts: its app's last events, as the memories of
/// them read ([`super::forming::in_app`]).
pub fn shown_of(context: &BrainContext) -> Vec<String> {
    context
        .sections
        .get::<crate::apps::AppView>()
        .map(|app| {
            app.events
                .iter()
                .map(|event| super::forming::in_app(&app.app_id, event))
                .collect()
        })
        .unwrap_or_default()
}

/// Who a decision is with: the senders of the lines it answers, each once, in order, at most
/// [`MAX_PEOPLE`].
pub fn people_of(context: &BrainContext) -> Vec<String> {
    let mut people: Vec<String> = Vec::new();
    for message in &context.incoming {
        if people.len() == MAX_PEOPLE {
            break;
        }
        if !message.sender.is_empty() && !people.contains(&message.sender) {
            people.push(message.sender.clone());
        }
    }
    people
}

/// Recalls `agent_id`'s memories for `cue`: reads the candidates, scores them, keeps the best.
pub fn recall(
    memory: &Memory,
    agent_id: &str,
    cue: &Cue,
    settings: &MemorySettings,
) -> Result<Vec<Recalled>, MemoryError> {
    // Each line to answer is also searched apart, so the best match of a question is not
    // crowded out by the words of another line, nor by the task and the names in the query;
    // and that best match is kept.
    let lines: &[String] = &cue.lines;
    let meaning = cue
        .meaning
        .as_ref()
        .filter(|_| settings.semantic_weight > 0.0);
    let (nearest_ids, best) = meaning.map(Meaning::nearest).unwrap_or_default();
    let crate::memory::Candidates {
        found,
        per_line,
        newest,
        relationships,
        nearest,
    } = memory.recall_candidates(
        agent_id,
        (&cue.query, lines),
        (CANDIDATES, NEWEST),
        (&cue.people, &nearest_ids),
        !cue.wait_for_writes,
    )?;
    // The best match of each line searched apart: what answers it.
    let answers: Vec<i64> = per_line
        .iter()
        .filter_map(|search| {
            search
                .iter()
                .filter(|f| f.relevance > 0.0)
                .max_by(|a, b| a.relevance.total_cmp(&b.relevance))
                .map(|f| f.memory.id)
        })
        .collect();
    let mut candidates: HashMap<i64, (StoredMemory, f64)> = HashMap::new();
    for search in std::iter::once(found).chain(per_line) {
        // Relevance within one search: its rank over the search's best.
        let best = search.iter().map(|f| f.relevance).fold(0.0_f64, f64::max);
        for f in search {
            let relevance = if best > 0.0 {
                (f.relevance / best).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let entry = candidates.entry(f.memory.id).or_insert((f.memory, 0.0));
            entry.1 = entry.1.max(relevance);
        }
    }
    // What it thinks of who it is talking with is about the conversation itself.
    if settings.relationships {
        for m in relationships {
            candidates.insert(m.id, (m, 1.0));
        }
    }
    for m in newest.into_iter().chain(nearest) {
        candidates.entry(m.id).or_insert((m, 0.0));
    }
    let held = meaning.map(|m| (m, m.vectors.read()));
    let w = settings.semantic_weight;
    let scored = candidates
        .into_values()
        .map(|(memory, keyword)| {
            let semantic = held
                .as_ref()
                .and_then(|(m, held)| m.closeness(held, memory.id, &best));
            let relevance = match semantic {
                Some(semantic) => (1.0 - w) * keyword + w * semantic,
                None => keyword,
            };
            Recalled {
                semantic,
                ..score(memory, relevance, cue, settings)
            }
        })
        .collect();
    drop(held);
    Ok(select_keeping(scored, settings, &answers))
}

/// A memory's score for `cue`, given its normalised relevance.
pub fn score(
    memory: StoredMemory,
    relevance: f64,
    cue: &Cue,
    settings: &MemorySettings,
) -> Recalled {
    let last = memory.accessed_at.unwrap_or(memory.game_time);
    let age = (cue.now - last).max(0.0);
    let recency = 0.5_f64.powf(age / settings.recency_half_life_seconds);
    let importance = f64::from(memory.importance) / 10.0;
    let w = &settings.weights;
    let mut score = w.recency * recency + w.importance * importance + w.relevance * relevance;
    if memory.superseded_by.is_some() {
        score *= SUPERSEDED_FACTOR;
    }
    let in_view = super::forming::quoted_line(&memory.text).is_some_and(|line| {
        let speaker = match memory.kind {
            crate::memory::MemoryKind::Said => Some(memory.agent_id.as_str()),
            crate::memory::MemoryKind::Heard => memory.about.as_deref(),
            _ => None,
        };
        cue.in_view
            .iter()
            .any(|(who, said)| Some(who.as_str()) == speaker && *said == line)
    }) || cue.shown.contains(&memory.text);
    Recalled {
        memory,
        score,
        recency,
        importance,
        relevance,
        semantic: None,
        in_view,
    }
}

/// The fewest tokens left in a recall's budget worth a memory cut to fit them.
pub const MIN_CUT_TOKENS: usize = 32;

/// The best of `scored`, best first (ties: the newer first): up to the limit and within the
/// token budget for those not in view; those in view only when they match the cue. A memory
/// that would not fit even in the whole budget is cut to what is left of it (marked
/// [`crate::limits::CUT_MARK`]) when at least [`MIN_CUT_TOKENS`] are left, so a long memory
/// is shown in part rather than never; one that would fit in the whole budget but not in
/// what is left is skipped.
pub fn select(scored: Vec<Recalled>, settings: &MemorySettings) -> Vec<Recalled> {
    select_keeping(scored, settings, &[])
}

/// [`select`], taking the memories `first` names before the others (within the same limit and
/// budget): the best match of each line a decision answers.
fn select_keeping(
    mut scored: Vec<Recalled>,
    settings: &MemorySettings,
    first: &[i64],
) -> Vec<Recalled> {
    scored.sort_by(|a, b| {
        first
            .contains(&b.memory.id)
            .cmp(&first.contains(&a.memory.id))
            .then_with(|| b.score.total_cmp(&a.score))
            .then_with(|| b.memory.id.cmp(&a.memory.id))
    });
    let mut kept = Vec::new();
    let (mut shown, mut tokens) = (0, 0);
    for mut r in scored {
        if r.in_view {
            if r.relevance > 0.0 {
                kept.push(r);
            }
            continue;
        }
        if shown == settings.recall_limit {
            continue;
        }
        let mut cost = tokens_of(&r.memory.text);
        let left = settings.recall_budget_tokens.saturating_sub(tokens);
        if cost > settings.recall_budget_tokens && left >= MIN_CUT_TOKENS {
            // The frame's 20 characters are counted in the cost, as for a whole memory.
            crate::limits::cut_chars(&mut r.memory.text, (left * 4).saturating_sub(20));
            cost = tokens_of(&r.memory.text);
        }
        if tokens + cost > settings.recall_budget_tokens {
            continue;
        }
        tokens += cost;
        shown += 1;
        kept.push(r);
    }
    kept
}

/// The tokens a memory's line costs in a prompt: a quarter of its characters, plus the
/// line's frame, rounded up.
pub fn tokens_of(text: &str) -> usize {
    (text.chars().count() + 20).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryKind;

    fn stored(id: i64, kind: MemoryKind, text: &str, importance: u8, at: f64) -> StoredMemory {
        StoredMemory {
            id,
            agent_id: "agent_001".into(),
            kind,
            text: text.into(),
            importance,
            about: None,
            sources: Vec::new(),
            game_time: at,
            created_at: String::new(),
            accessed_at: None,
            superseded_by: None,
        }
    }

    fn cue(now: f64) -> Cue {
        Cue {
            query: String::new(),
            now,
            in_view: Vec::new(),
            shown: Vec::new(),
            wait_for_writes: false,
            lines: Vec::new(),
            people: Vec::new(),
            meaning: None,
        }
    }

    #[test]
    fn a_line_is_searched_without_the_listeners_name() {
        assert_eq!(
            without_name("Mira, where are the festival lanterns?", "Mira"),
            "where are the festival lanterns"
        );
        assert_eq!(without_name("MIRA STONE? Mira!", "mira stone"), "");
        assert_eq!(without_name("Hello, Miranda!", "Mira"), "Hello Miranda");
        assert_eq!(without_name("Hello!", ""), "Hello!");
    }

    #[test]
    fn the_best_match_of_a_line_is_kept_before_better_scores() {
        let settings = MemorySettings {
            recall_limit: 2,
            ..MemorySettings::default()
        };
        let now = cue(100.0);
        let scored = vec![
            score(
                stored(1, MemoryKind::Heard, "chat", 5, 99.0),
                1.0,
                &now,
                &settings,
            ),
            score(
                stored(2, MemoryKind::Heard, "chat", 5, 98.0),
                1.0,
                &now,
                &settings,
            ),
            score(
                stored(3, MemoryKind::Heard, "the answer", 2, 10.0),
                1.0,
                &now,
                &settings,
            ),
        ];
        let ids = |kept: Vec<Recalled>| kept.iter().map(|r| r.memory.id).collect::<Vec<_>>();
        assert_eq!(ids(select(scored.clone(), &settings)), [1, 2]);
        assert_eq!(ids(select_keeping(scored, &settings, &[3])), [3, 1]);
    }

    #[test]
    fn recency_halves_each_half_life_from_the_last_recall() {
        let settings = MemorySettings::default();
        let m = stored(1, MemoryKind::Fact, "x", 5, 0.0);
        let r = score(m.clone(), 0.0, &cue(3_600.0), &settings);
        assert!((r.recency - 0.5).abs() < 1e-9, "{r:?}");
        assert!((r.importance - 0.5).abs() < 1e-9);
        assert!((r.score - 1.0).abs() < 1e-9);
        let touched = StoredMemory {
            accessed_at: Some(3_600.0),
            ..m.clone()
        };
        assert_eq!(score(touched, 0.0, &cue(3_600.0), &settings).recency, 1.0);
        // A clock set back never makes a memory newer than new.
        assert_eq!(score(m, 0.0, &cue(-50.0), &settings).recency, 1.0);
    }

    #[test]
    fn the_current_belief_outranks_the_one_it_replaced() {
        let settings = MemorySettings::default();
        let old = StoredMemory {
            superseded_by: Some(2),
            ..stored(1, MemoryKind::Fact, "The key is under the mat.", 6, 0.0)
        };
        let new = stored(
            2,
            MemoryKind::Fact,
            "Ivy moved the key to the shelf.",
            6,
            0.0,
        );
        let picked = select(
            vec![
                score(old, 1.0, &cue(0.0), &settings),
                score(new, 0.8, &cue(0.0), &settings),
            ],
            &settings,
        );
        assert_eq!(
            picked.iter().map(|r| r.memory.id).collect::<Vec<_>>(),
            [2, 1]
        );
    }

    #[test]
    fn selection_keeps_the_best_within_the_limit_and_the_budget() {
        let settings = MemorySettings {
            recall_limit: 2,
            ..Default::default()
        };
        let scored: Vec<Recalled> = (1..=5)
            .map(|i| {
                let m = stored(i, MemoryKind::Fact, "a memory", i as u8, 0.0);
                score(m, 0.0, &cue(0.0), &settings)
            })
            .collect();
        let ids: Vec<i64> = select(scored.clone(), &settings)
            .iter()
            .map(|r| r.memory.id)
            .collect();
        assert_eq!(ids, [5, 4]);
        let tight = MemorySettings {
            recall_budget_tokens: tokens_of("a memory"),
            ..Default::default()
        };
        assert_eq!(select(scored, &tight).len(), 1);
    }

    #[test]
    fn a_memory_longer_than_the_whole_budget_is_cut_to_what_is_left() {
        use crate::brain::Section as _;
        let settings = MemorySettings::default();
        let long = stored(1, MemoryKind::Fact, &"k".repeat(2_000), 9, 0.0);
        let short = stored(2, MemoryKind::Fact, "The well is dry.", 1, 0.0);
        let picked = select(
            vec![
                score(long, 1.0, &cue(0.0), &settings),
                score(short, 0.0, &cue(0.0), &settings),
            ],
            &settings,
        );
        let shown: usize = picked.iter().map(|r| tokens_of(&r.memory.text)).sum();
        assert!(shown <= settings.recall_budget_tokens, "{shown}");
        assert_eq!(picked[0].memory.id, 1);
        assert!(picked[0].memory.text.ends_with(crate::limits::CUT_MARK));
        // What the model reads is within the budget too (each line with its frame).
        let lines = crate::mind::Recollection {
            recalled: picked,
            now: 0.0,
        }
        .situation_lines(&crate::brain::BrainContext::detached("agent_001", "Mira"))
        .unwrap();
        assert!(
            lines.chars().count() <= settings.recall_budget_tokens * 4 + 40,
            "{}",
            lines.chars().count()
        );
    }

    #[test]
    fn a_line_the_decision_shows_is_kept_only_when_it_matches_and_costs_nothing() {
        let settings = MemorySettings {
            recall_limit: 1,
            ..Default::default()
        };
        let line = "The key is under the mat.";
        let heard = StoredMemory {
            about: Some("player_0".into()),
            ..stored(
                1,
                MemoryKind::Heard,
                &super::super::forming::heard("player_0", line),
                9,
                0.0,
            )
        };
        let other = stored(2, MemoryKind::Fact, "The well is dry.", 2, 0.0);
        let shown = Cue {
            in_view: vec![("player_0".into(), line.into())],
            ..cue(0.0)
        };
        let picked = select(
            vec![
                score(heard.clone(), 1.0, &shown, &settings),
                score(other.clone(), 0.0, &shown, &settings),
            ],
            &settings,
        );
        assert_eq!(picked.len(), 2, "{picked:?}");
        assert!(picked[0].in_view && !picked[1].in_view);
        let unmatched = select(vec![score(heard, 0.0, &shown, &settings)], &settings);
        assert!(unmatched.is_empty());
    }
}
