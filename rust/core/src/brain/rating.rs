//! What a brain is asked when its agent's memories are rated: how much each would matter to
//! the agent later, 1 to 10. The runtime judges every memory's importance at once by a
//! heuristic (`crate::mind::forming::importance`); an agent whose brain has a model has its new
//! memories rated again by it, a batch per call ([`Brain::rate`](super::Brain)). A rating of a
//! memory not asked about, or outside 1–10, is dropped.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use super::BrainError;

/// One memory to rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unrated {
    /// Its id.
    pub id: i64,
    /// Its text.
    pub text: String,
}

/// What a brain is given to rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatingRequest {
    /// The agent's id.
    pub agent_id: String,
    /// The agent's name.
    pub name: String,
    /// Who it is (its prompt).
    pub prompt: String,
    /// The memories, oldest first.
    pub memories: Vec<Unrated>,
}

/// A brain's ratings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ratings {
    /// One per memory rated.
    pub ratings: Vec<Rating>,
}

/// How much one memory matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rating {
    /// The memory's id, as given.
    pub id: i64,
    /// 1 (mundane: a greeting) to 10 (life-changing).
    pub importance: i64,
}

impl Ratings {
    /// The ratings that may be stored for `request`: of memories asked about, each once, from
    /// 1 to 10.
    pub fn checked(self, request: &RatingRequest) -> Vec<(i64, u8)> {
        let mut kept: Vec<(i64, u8)> = Vec::new();
        for r in self.ratings {
            let asked = request.memories.iter().any(|m| m.id == r.id);
            if asked && (1..=10).contains(&r.importance) && !kept.iter().any(|(id, _)| *id == r.id)
            {
                kept.push((r.id, r.importance as u8));
            }
        }
        kept
    }
}

/// A boxed rating future: `None` when the brain has no model to rate with.
pub type RateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<Ratings>, BrainError>> + Send + 'a>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ratings_of_memories_asked_about_from_1_to_10_are_kept_once() {
        let request = RatingRequest {
            agent_id: "agent_001".into(),
            name: "Mira".into(),
            prompt: String::new(),
            memories: vec![
                Unrated {
                    id: 1,
                    text: "a".into(),
                },
                Unrated {
                    id: 2,
                    text: "b".into(),
                },
            ],
        };
        let rating = |id, importance| Rating { id, importance };
        let ratings = Ratings {
            ratings: vec![
                rating(1, 7),
                rating(1, 3),
                rating(2, 11),
                rating(2, 0),
                rating(9, 5),
            ],
        };
        assert_eq!(ratings.checked(&request), vec![(1, 7)]);
    }
}
