//! The arena: brains play the built-in games against the built-in engines and against each
//! other, through the app bridge, and what they did becomes numbers — ratings with intervals,
//! illegal attempts, repairs, latency, tokens — in the database and in `results.json`.

pub mod results;
pub mod player;
pub mod rating;
pub mod schedule;
