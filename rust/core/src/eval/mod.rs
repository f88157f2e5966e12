//! Measuring what agents do: pure functions over what they said and did (no I/O, no runtime),
//! so a test, a benchmark or a game computes the same numbers the same way ([`lines`],
//! [`card`]); and the NPC report card, which plays a suite of scenarios through the runtime
//! ([`suite`] the file, [`run`] the play, [`card`] the metrics, [`results`] what comes out, [`report`] its page).

pub mod card;
pub mod lines;
pub mod report;
pub mod results;
pub mod run;
pub mod suite;

#[cfg(test)]
mod run_tests;
