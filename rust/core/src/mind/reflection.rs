//! Reflection: what an agent makes of its recent memories, as in Generative Agents — when the
//! importance of what it went through since its last reflection passes
//! [`MemorySettings::reflection_threshold`], it draws a few insights, each citing the memories
//! it comes from, and sums up what it now thinks of the people those memories are about.
//! Insights and relationships are memories too ([`MemoryKind::Insight`],
//! [`MemoryKind::Relationship`]): recalled, cited, inspected like the rest.
//!
//! - **What it looks at**: its newest [`WINDOW`] memories formed after its last insight or
//!   relationship ([`since_last`]), within a token budget ([`shown`]): the most important
//!   first, each cut to a few hundred characters; oldest first.
//! - **Who draws**: its brain when it has a model ([`crate::brain::Brain::reflect`]); else, or
//!   when the model's answer is unusable, the rules here ([`by_rule`]), which are
//!   deterministic: whom it talks with most, what it keeps failing at, what keeps coming up,
//!   and per person how much they talked lately, about what, and the last thing they said.
//! - **What is kept** ([`checked`]): at most [`MAX_INSIGHTS`] insights and one relationship per
//!   person listed, each with a text of 1 to [`MAX_INSIGHT_CHARS`] characters citing at least
//!   one of the memories shown; anything else the brain answered is dropped.
//! - **How it is stored** ([`to_memories`]): all in one write, each relationship superseding
//!   what the agent thought of that person before. A crash before the write leaves the stream
//!   as it was (the next reflection looks at the same memories); after it, the reflection is
//!   whole.
//!
//! [`MemorySettings::reflection_threshold`]: super::MemorySettings::reflection_threshold

use std::collections::{BTreeMap, HashMap, HashSet};

use super::forming::{self, clip, quoted_line};
use crate::brain::budget;
use crate::brain::reflection::{
    DrawnInsight, DrawnRelationship, Person, ReflectionAnswer, ReflectionMemory, ReflectionRequest,
};
use crate::memory::{MAX_MEMORY_SOURCES, MemoryKind, NewMemory, StoredMemory, search_terms};

/// Most memories one reflection looks at.
pub const WINDOW: usize = 100;
/// Most insights one reflection draws.
pub const MAX_INSIGHTS: usize = 3;
/// Most characters of an insight's or a relationship's text.
pub const MAX_INSIGHT_CHARS: usize = 400;
/// Most people one reflection sums up.
pub const MAX_PEOPLE: usize = 8;
/// Lines with one person (heard or said) that make them "the one I talk with most".
const MIN_PARTNER_LINES: usize = 3;
/// Failures of one kind that make a pattern.
const MIN_SETBACKS: usize = 2;
/// Memories a word must be in to "keep coming up".
const MIN_TOPIC_MEMORIES: usize = 3;
/// Lines with a person that are worth a relationship.
const MIN_RELATIONSHIP_LINES: usize = 2;

/// The memories of `page` (an agent's newest, oldest first) formed after its last insight or
/// relationship, without those.
pub fn since_last(page: &[StoredMemory]) -> Vec<StoredMemory> {
    let last = page
        .iter()
        .filter(|m| matches!(m.kind, MemoryKind::Insight | MemoryKind::Relationship))
        .map(|m| m.id)
        .max()
        .unwrap_or(i64::MIN);
    page.iter()
        .filter(|m| m.id > last && !m.kind.is_derived())
        .cloned()
        .collect()
}

/// The importance the memories of `page` (an agent's newest) add toward its next reflection:
/// that of those formed after its last insight or relationship. A resumed agent goes on
/// counting from there.
pub fn pending_importance(page: &[StoredMemory]) -> u32 {
    since_last(page)
        .iter()
        .map(|m| u32::from(m.importance))
        .sum()
}

/// The people `memories` are about, the most mentioned first (ties: by id), at most
/// [`MAX_PEOPLE`].
pub fn people_in(memories: &[StoredMemory]) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in memories {
        if let Some(about) = m.about.as_deref() {
            *counts.entry(about).or_default() += 1;
        }
    }
    let mut people: Vec<(&str, usize)> = counts.into_iter().collect();
    people.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    people
        .into_iter()
        .take(MAX_PEOPLE)
        .map(|(p, _)| p.to_string())
        .collect()
}

/// The name `person` goes by in `memories` (as the lines heard from them give it), if any.
pub fn name_in(memories: &[StoredMemory], person: &str) -> Option<String> {
    memories
        .iter()
        .rev()
        .filter(|m| m.kind == MemoryKind::Heard && m.about.as_deref() == Some(person))
        .find_map(|m| forming::speaker_of(&m.text).map(str::to_string))
}

/// The memories as a brain is shown them, within [`budget::REFLECTION_TOKENS`]: each text
/// cut to [`budget::REFLECTION_MEMORY_CHARS`], the most important first (of equal importance,
/// the newest), as many as fit; oldest first.
pub fn shown(memories: &[StoredMemory]) -> Vec<ReflectionMemory> {
    let mut ranked: Vec<&StoredMemory> = memories.iter().collect();
    ranked.sort_by(|a, b| b.importance.cmp(&a.importance).then(b.id.cmp(&a.id)));
    let mut spent = 0;
    let mut kept: Vec<ReflectionMemory> = Vec::new();
    for m in ranked {
        let text = crate::limits::cut_copy(&m.text, budget::REFLECTION_MEMORY_CHARS);
        // The line's frame: `[id] (kind, importance n) `.
        let cost = budget::tokens(&text) + REFLECTION_FRAME_TOKENS;
        if spent + cost > budget::REFLECTION_TOKENS {
            continue;
        }
        spent += cost;
        kept.push(ReflectionMemory {
            id: m.id,
            kind: m.kind,
            text,
            about: m.about.clone(),
            importance: m.importance,
        });
    }
    kept.sort_by_key(|m| m.id);
    kept
}

/// The tokens of a memory's frame in a reflection's prompt (its id, kind and importance).
const REFLECTION_FRAME_TOKENS: usize = 10;

/// A reflection drawn by rule from `request` (the same request, the same answer): whom it talks
/// with most, what it keeps failing at, what keeps coming up, and what it thinks of each person.
pub fn by_rule(request: &ReflectionRequest) -> ReflectionAnswer {
    let names: HashSet<String> = request
        .people
        .iter()
        .flat_map(|p| search_terms(&p.name))
        .chain(search_terms(&request.name))
        .collect();
    let mut insights: Vec<DrawnInsight> = partner(request).into_iter().collect();
    insights.extend(setbacks(request));
    insights.extend(topic(request, &names));
    insights.truncate(request.max_insights);
    let relationships = request
        .people
        .iter()
        .filter_map(|person| relationship(request, person, &names))
        .collect();
    ReflectionAnswer {
        insights,
        relationships,
    }
}

/// The lines of `request` heard from or said to `id`.
fn lines_with<'a>(request: &'a ReflectionRequest, id: &str) -> Vec<&'a ReflectionMemory> {
    request
        .memories
        .iter()
        .filter(|m| {
            matches!(m.kind, MemoryKind::Heard | MemoryKind::Said) && m.about.as_deref() == Some(id)
        })
        .collect()
}

/// Whom it talks with most (at least [`MIN_PARTNER_LINES`] lines).
fn partner(request: &ReflectionRequest) -> Option<DrawnInsight> {
    let lines = request
        .memories
        .iter()
        .filter(|m| matches!(m.kind, MemoryKind::Heard | MemoryKind::Said))
        .count();
    let (person, with) = request
        .people
        .iter()
        .map(|p| (p, lines_with(request, &p.id)))
        .filter(|(_, with)| with.len() >= MIN_PARTNER_LINES)
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.0.id.cmp(&a.0.id)))?;
    Some(DrawnInsight {
        text: format!(
            "I talk with {} more than with anyone else lately ({} of the {lines} lines I heard \
             or said).",
            person.name,
            with.len()
        ),
        sources: with.iter().map(|m| m.id).collect(),
    })
}

/// What it keeps failing at (at least [`MIN_SETBACKS`] times), most often first.
fn setbacks(request: &ReflectionRequest) -> Vec<DrawnInsight> {
    let mut by_what: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
    for m in &request.memories {
        if m.kind == MemoryKind::Did
            && let Some((what, why)) = forming::setback(&m.text)
        {
            by_what.entry(what).or_default().push((m.id, why));
        }
    }
    let mut repeated: Vec<(String, Vec<(i64, String)>)> = by_what
        .into_iter()
        .filter(|(_, times)| times.len() >= MIN_SETBACKS)
        .collect();
    repeated.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    repeated
        .into_iter()
        .map(|(what, times)| {
            let last = times
                .last()
                .map(|(_, why)| clip(why, 120))
                .unwrap_or_default();
            DrawnInsight {
                text: format!(
                    "I keep failing at {what} ({} times lately); the last time: {last}",
                    times.len()
                ),
                sources: times.iter().map(|(id, _)| *id).collect(),
            }
        })
        .collect()
}

/// What keeps coming up (a word in at least [`MIN_TOPIC_MEMORIES`] memories, not a name).
fn topic(request: &ReflectionRequest, names: &HashSet<String>) -> Option<DrawnInsight> {
    let (word, ids) = topics(&request.memories, names).into_iter().next()?;
    (ids.len() >= MIN_TOPIC_MEMORIES).then(|| DrawnInsight {
        text: format!(
            "\"{word}\" keeps coming up lately ({} of my memories).",
            ids.len()
        ),
        sources: ids,
    })
}

/// What it thinks of `person` (at least [`MIN_RELATIONSHIP_LINES`] lines exchanged): how much
/// they talked, about what, and the last thing they said.
fn relationship(
    request: &ReflectionRequest,
    person: &crate::brain::reflection::Person,
    names: &HashSet<String>,
) -> Option<DrawnRelationship> {
    let with = lines_with(request, &person.id);
    if with.len() < MIN_RELATIONSHIP_LINES {
        return None;
    }
    let owned: Vec<ReflectionMemory> = with.iter().map(|m| (*m).clone()).collect();
    let about: Vec<String> = topics(&owned, names)
        .into_iter()
        .filter(|(_, ids)| ids.len() >= 2)
        .take(3)
        .map(|(word, _)| word)
        .collect();
    let name = &person.name;
    let mut text = format!(
        "What I think of {name}: we exchanged {} lines lately",
        with.len()
    );
    if !about.is_empty() {
        text.push_str(&format!(", mostly about {}", about.join(", ")));
    }
    text.push('.');
    if let Some(line) = with
        .iter()
        .rev()
        .find(|m| m.kind == MemoryKind::Heard)
        .and_then(|m| quoted_line(&m.text))
    {
        text.push_str(&format!(
            " The last thing {name} told me: \"{}\"",
            clip(&line, 80)
        ));
    }
    Some(DrawnRelationship {
        about: person.id.clone(),
        text,
        sources: with.iter().map(|m| m.id).collect(),
    })
}

/// The words of `memories`' lines (their quoted line, else their text) by how many memories
/// hold them, most first (ties: alphabetical), without `names`; each with the memories' ids.
fn topics(memories: &[ReflectionMemory], names: &HashSet<String>) -> Vec<(String, Vec<i64>)> {
    let mut by_word: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for m in memories {
        let line = quoted_line(&m.text).unwrap_or_else(|| m.text.clone());
        for word in search_terms(&line) {
            if word.chars().count() >= 4 && !names.contains(&word) {
                by_word.entry(word).or_default().push(m.id);
            }
        }
    }
    let mut words: Vec<(String, Vec<i64>)> = by_word.into_iter().collect();
    words.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    words
}

/// What of `answer` may be stored for `request`: texts trimmed, cut to [`MAX_INSIGHT_CHARS`]
/// and not empty; sources among the memories shown (each once, at most
/// [`MAX_MEMORY_SOURCES`], at least one); at most the insights asked for; relationships only
/// about the people listed, one each.
pub fn checked(answer: ReflectionAnswer, request: &ReflectionRequest) -> ReflectionAnswer {
    let shown: HashSet<i64> = request.memories.iter().map(|m| m.id).collect();
    let sources = |ids: Vec<i64>| -> Vec<i64> {
        let mut kept: Vec<i64> = Vec::new();
        for id in ids {
            if shown.contains(&id) && !kept.contains(&id) {
                kept.push(id);
            }
        }
        // The newest sources when there are too many.
        let extra = kept.len().saturating_sub(MAX_MEMORY_SOURCES);
        kept.drain(..extra);
        kept
    };
    let text = |t: &str| clip(t.trim(), MAX_INSIGHT_CHARS);
    let insights = answer
        .insights
        .into_iter()
        .map(|i| DrawnInsight {
            text: text(&i.text),
            sources: sources(i.sources),
        })
        .filter(|i| !i.text.is_empty() && !i.sources.is_empty())
        .take(request.max_insights)
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    let relationships = answer
        .relationships
        .into_iter()
        .filter(|r| request.people.iter().any(|p| p.id == r.about))
        .filter(|r| seen.insert(r.about.clone()))
        .map(|r| DrawnRelationship {
            about: r.about,
            text: text(&r.text),
            sources: sources(r.sources),
        })
        .filter(|r| !r.text.is_empty() && !r.sources.is_empty())
        .collect();
    ReflectionAnswer {
        insights,
        relationships,
    }
}

/// The memories a checked reflection becomes, at game time `now`: its insights, then its
/// relationships, each superseding what `before` says the agent thought of that person (a
/// memory id per person).
pub fn to_memories(
    answer: ReflectionAnswer,
    now: f64,
    before: &HashMap<String, i64>,
) -> Vec<NewMemory> {
    let insights = answer.insights.into_iter().map(|i| NewMemory {
        importance: forming::importance(MemoryKind::Insight, &i.text),
        sources: i.sources,
        game_time: now,
        ..NewMemory::new(MemoryKind::Insight, i.text)
    });
    let relationships = answer.relationships.into_iter().map(|r| NewMemory {
        importance: forming::importance(MemoryKind::Relationship, &r.text),
        sources: r.sources,
        game_time: now,
        supersedes: before.get(&r.about).copied().into_iter().collect(),
        about: Some(r.about),
        ..NewMemory::new(MemoryKind::Relationship, r.text)
    });
    insights.chain(relationships).collect()
}

/// The request for `memories` (checked by [`since_last`]) of an agent, with the people they
/// are about: the memories within their budget ([`shown`]), what the agent thought of each
/// person cut to [`MAX_INSIGHT_CHARS`] (what a reflection draws; a planted one may be longer).
pub fn request(
    agent: (&str, &str, &str, &str),
    memories: &[StoredMemory],
    mut people: Vec<Person>,
) -> ReflectionRequest {
    let (agent_id, name, role, prompt) = agent;
    for person in &mut people {
        if let Some(thought) = &mut person.thought {
            crate::limits::cut_chars(thought, MAX_INSIGHT_CHARS);
        }
    }
    ReflectionRequest {
        agent_id: agent_id.to_string(),
        name: name.to_string(),
        role: role.to_string(),
        prompt: prompt.to_string(),
        memories: shown(memories),
        people,
        max_insights: MAX_INSIGHTS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reflection_reads_its_memories_within_its_budget() {
        let memories: Vec<StoredMemory> = (1..=100)
            .map(|id| {
                let mut m = memory(id, MemoryKind::Fact, &"w".repeat(2_000), None);
                m.importance = if id == 7 { 9 } else { 6 };
                m
            })
            .collect();
        let mut thinks = person("agent_002", "Ivy");
        thinks.thought = Some("t".repeat(2_000));
        let request = request(("agent_001", "Mira", "", ""), &memories, vec![thinks]);
        let spent: usize = request
            .memories
            .iter()
            .map(|m| budget::tokens(&m.text) + REFLECTION_FRAME_TOKENS)
            .sum();
        assert!(spent <= budget::REFLECTION_TOKENS, "{spent}");
        assert!(request.memories.len() >= 5, "{}", request.memories.len());
        // The most important first, then the newest; shown oldest first.
        assert_eq!(request.memories[0].id, 7);
        assert_eq!(request.memories.last().unwrap().id, 100);
        assert!(request.memories.windows(2).all(|w| w[0].id < w[1].id));
        assert!(
            request
                .memories
                .iter()
                .all(|m| m.text.chars().count() <= budget::REFLECTION_MEMORY_CHARS)
        );
        assert_eq!(
            request.people[0].thought.as_ref().unwrap().chars().count(),
            MAX_INSIGHT_CHARS
        );
    }

    fn memory(id: i64, kind: MemoryKind, text: &str, about: Option<&str>) -> StoredMemory {
        StoredMemory {
            id,
            agent_id: "agent_001".into(),
            kind,
            text: text.into(),
            importance: 3,
            about: about.map(str::to_string),
            sources: vec![],
            game_time: id as f64,
            created_at: String::new(),
            accessed_at: None,
            superseded_by: None,
        }
    }

    fn person(id: &str, name: &str) -> Person {
        Person {
            id: id.into(),
            name: name.into(),
            thought: None,
        }
    }

    fn day() -> Vec<StoredMemory> {
        let heard = |id, line: &str| {
            memory(
                id,
                MemoryKind::Heard,
                &forming::heard("Ivy", line),
                Some("agent_002"),
            )
        };
        vec![
            memory(1, MemoryKind::Insight, "Old insight.", None),
            heard(2, "The festival lanterns are in the old mill."),
            memory(
                3,
                MemoryKind::Said,
                &forming::said(&["Ivy".into()], "Thanks, I will fetch the lanterns."),
                Some("agent_002"),
            ),
            heard(4, "Bring the lanterns before dusk."),
            memory(
                5,
                MemoryKind::Did,
                &forming::walked("the mill", Some("a fence is in the way")),
                None,
            ),
            memory(
                6,
                MemoryKind::Did,
                &forming::walked("the mill", Some("the river is too deep")),
                None,
            ),
            heard(7, "Did you find the lanterns?"),
            memory(
                8,
                MemoryKind::Heard,
                &forming::heard("Tom", "Nice weather."),
                Some("agent_003"),
            ),
        ]
    }

    #[test]
    fn the_rules_find_the_partner_the_setbacks_the_topic_and_each_relationship() {
        let memories = since_last(&day());
        assert_eq!(memories.len(), 7, "after the last insight, without it");
        assert_eq!(people_in(&memories), vec!["agent_002", "agent_003"]);
        let request = request(
            ("agent_001", "Mira", "baker", "You bake."),
            &memories,
            vec![person("agent_002", "Ivy"), person("agent_003", "Tom")],
        );
        let answer = checked(by_rule(&request), &request);
        let texts: Vec<&str> = answer.insights.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "I talk with Ivy more than with anyone else lately (4 of the 5 lines I heard or said).",
                "I keep failing at walking (2 times lately); the last time: the river is too deep",
                "\"lanterns\" keeps coming up lately (4 of my memories).",
            ]
        );
        assert_eq!(answer.insights[0].sources, vec![2, 3, 4, 7]);
        assert_eq!(answer.insights[1].sources, vec![5, 6]);
        assert_eq!(answer.relationships.len(), 1, "Tom said one line only");
        let ivy = &answer.relationships[0];
        assert_eq!(ivy.about, "agent_002");
        assert_eq!(
            ivy.text,
            "What I think of Ivy: we exchanged 4 lines lately, mostly about lanterns. The last \
             thing Ivy told me: \"Did you find the lanterns?\""
        );
        // Deterministic.
        assert_eq!(by_rule(&request), by_rule(&request));
    }

    #[test]
    fn what_a_brain_answers_is_cut_to_what_may_be_stored() {
        let memories = since_last(&day());
        let request = request(
            ("agent_001", "Mira", "baker", ""),
            &memories,
            vec![person("agent_002", "Ivy")],
        );
        let answer = ReflectionAnswer {
            insights: vec![
                DrawnInsight {
                    text: "  Ivy relies on me.  ".into(),
                    sources: vec![2, 2, 99, 4],
                },
                DrawnInsight {
                    text: "Made up.".into(),
                    sources: vec![99],
                },
                DrawnInsight {
                    text: "   ".into(),
                    sources: vec![2],
                },
                DrawnInsight {
                    text: "x".repeat(1000),
                    sources: vec![3],
                },
                DrawnInsight {
                    text: "One too many.".into(),
                    sources: vec![3],
                },
                DrawnInsight {
                    text: "Two too many.".into(),
                    sources: vec![3],
                },
            ],
            relationships: vec![
                DrawnRelationship {
                    about: "agent_002".into(),
                    text: "Ivy is kind.".into(),
                    sources: vec![2],
                },
                DrawnRelationship {
                    about: "agent_002".into(),
                    text: "A second one.".into(),
                    sources: vec![2],
                },
                DrawnRelationship {
                    about: "agent_009".into(),
                    text: "Not listed.".into(),
                    sources: vec![2],
                },
            ],
        };
        let kept = checked(answer, &request);
        assert_eq!(kept.insights.len(), 3);
        assert_eq!(kept.insights[0].text, "Ivy relies on me.");
        assert_eq!(kept.insights[0].sources, vec![2, 4]);
        assert_eq!(kept.insights[1].text.chars().count(), MAX_INSIGHT_CHARS + 1);
        assert_eq!(kept.insights[2].text, "One too many.");
        assert_eq!(kept.relationships.len(), 1);
        assert_eq!(kept.relationships[0].text, "Ivy is kind.");

        let before = HashMap::from([("agent_002".to_string(), 41)]);
        let stored = to_memories(kept, 500.0, &before);
        assert_eq!(stored.len(), 4);
        assert!(stored[..3].iter().all(|m| m.kind == MemoryKind::Insight));
        let ivy = &stored[3];
        assert_eq!(ivy.kind, MemoryKind::Relationship);
        assert_eq!(ivy.about.as_deref(), Some("agent_002"));
        assert_eq!(ivy.supersedes, vec![41]);
        assert_eq!(ivy.game_time, 500.0);
        assert!(stored.iter().all(|m| m.clone().checked().is_ok()));
    }
}
