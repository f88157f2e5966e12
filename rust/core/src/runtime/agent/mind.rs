//! What an agent does with its memories between decisions: reflecting on what it went
//! through, rating the importance of new memories, remembering its app's events, compacting.

use super::*;

impl Agent {
    /// Reflects ([`crate::mind::reflection`]): reads the memories formed since the last
    /// reflection and who they are about, asks the brain (or the rules, for a brain without a
    /// model or when its answer is unusable), keeps what may be stored and stores it in one
    /// write. A failed read or an empty reflection stores nothing; a stop cancels it.
    pub(super) async fn reflect(&mut self) {
        use crate::brain::reflection::Person;
        use crate::mind::reflection;
        let (inner, id) = (self.inner.clone(), self.shared.id.clone());
        let read = tokio::task::spawn_blocking(move || {
            let page = inner.memory.memories_page(&id, None, reflection::WINDOW)?;
            let memories = reflection::since_last(&page.rows);
            let mut people = Vec::new();
            let mut before = std::collections::HashMap::new();
            for person in reflection::people_in(&memories) {
                let thought = inner.memory.current_relationship(&id, &person)?;
                if let Some(t) = &thought {
                    before.insert(person.clone(), t.id);
                }
                people.push(Person {
                    name: reflection::name_in(&memories, &person)
                        .unwrap_or_else(|| inner.display_name(&person)),
                    thought: thought.map(|t| t.text),
                    id: person,
                });
            }
            Ok::<_, crate::memory::MemoryError>((memories, people, before))
        })
        .await;
        let (memories, people, before) = match read {
            Ok(Ok(read)) => read,
            Ok(Err(e)) => {
                tracing::warn!(agent = %self.shared.id, "reflecting: {e}");
                return;
            }
            Err(e) => {
                tracing::warn!(agent = %self.shared.id, "reflecting: {e}");
                return;
            }
        };
        if memories.is_empty() {
            return;
        }
        let shared = &self.shared;
        let request = reflection::request(
            (&shared.id, &shared.name, &shared.role, &shared.prompt),
            &memories,
            people,
        );
        let drawn = tokio::select! {
            _ = self.cancel.cancelled() => return,
            drawn = self.brain.reflect(&request) => drawn,
        };
        self.record_call();
        let (answer, drawn_by) = match drawn {
            Ok(Some(answer)) => (answer, "model"),
            Ok(None) => (reflection::by_rule(&request), "rules"),
            Err(e) => {
                self.shared.warn(
                    "reflection_unusable",
                    format_args!("the brain's reflection is unusable, drawn by rule instead: {e}"),
                );
                (reflection::by_rule(&request), "rules")
            }
        };
        let answer = reflection::checked(answer, &request);
        let now = self.inner.game_time();
        let drawn = reflection::to_memories(answer, now, &before);
        if drawn.is_empty() {
            return;
        }
        if let Err(e) = self
            .inner
            .store_reflection(&self.shared.id, drawn, drawn_by)
        {
            tracing::warn!(agent = %self.shared.id, "a reflection was not stored: {e}");
        }
    }

    /// Records the model call behind the brain's last answer, if it made one (a reflection's,
    /// a rating's: no repairs).
    pub(super) fn record_call(&mut self) {
        if let Some(mut call) = self.brain.take_call_report() {
            call.agent_id = self.shared.id.clone();
            self.inner.memory.record_brain_call(call);
        }
    }

    /// Has its brain rate the importance of a batch of its memories
    /// ([`crate::brain::rating`]) and stores the ratings kept. A brain without a model says so
    /// and is not asked again; a failed call is logged and the heuristic's importance stays.
    pub(super) async fn rate(&mut self, batch: Vec<(i64, String)>) {
        use crate::brain::rating::{RatingRequest, Unrated};
        let request = RatingRequest {
            agent_id: self.shared.id.clone(),
            name: self.shared.name.clone(),
            prompt: self.shared.prompt.clone(),
            memories: batch
                .into_iter()
                .map(|(id, text)| Unrated { id, text })
                .collect(),
        };
        let rated = tokio::select! {
            _ = self.cancel.cancelled() => return,
            rated = self.brain.rate(&request) => rated,
        };
        self.record_call();
        match rated {
            Ok(Some(ratings)) => {
                let ratings = ratings.checked(&request);
                if !ratings.is_empty()
                    && let Err(e) = self.inner.memory.rate_memories(&self.shared.id, ratings)
                {
                    tracing::warn!(agent = %self.shared.id, "storing importance ratings: {e}");
                }
            }
            Ok(None) => {
                let mut unrated = self.shared.unrated.lock();
                *unrated = (Vec::new(), false);
            }
            Err(e) => self.shared.warn(
                "ratings_unusable",
                format_args!(
                    "the brain's importance ratings are unusable, the heuristic's stand: {e}"
                ),
            ),
        }
    }

    /// Remembers the events of its app it has not remembered yet (those the app still keeps:
    /// what its decisions could see), once a decision is made: a flood of events becomes at
    /// most the app's `history` memories per decision.
    pub(super) fn remember_app_events(&self) {
        let Some(app) = self.shared.app() else {
            return;
        };
        let events = {
            let mut seen = self.shared.app_events_seen.lock();
            let from = if seen.0 == app.id() { seen.1 } else { 0 };
            let (events, last) = app.events_after(from);
            *seen = (app.id().to_string(), last);
            events
        };
        for event in events {
            let text = forming::in_app(app.id(), &event.text);
            self.inner.form(&self.shared, MemoryKind::Event, text, None);
        }
    }

    /// Keeps its stream under its cap ([`crate::mind::compaction`]): counts it and, over the
    /// cap, sums up its oldest memories, the least important first. Runs off the runtime's
    /// threads; a failure is logged and nothing is lost.
    pub(super) async fn compact(&mut self) {
        let (inner, id) = (self.inner.clone(), self.shared.id.clone());
        let cap = self.shared.memory.max_memories;
        let done = tokio::task::spawn_blocking(move || inner.compact(&id, cap)).await;
        match done {
            Ok(Ok(0)) => {}
            Ok(Ok(summed)) => {
                tracing::debug!(agent = %self.shared.id, summed, "memories summed up under the cap")
            }
            Ok(Err(e)) => tracing::warn!(agent = %self.shared.id, "compacting memories: {e}"),
            Err(e) => tracing::warn!(agent = %self.shared.id, "compacting memories: {e}"),
        }
    }
}
