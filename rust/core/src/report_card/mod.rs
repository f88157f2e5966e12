//! The NPC report card: a suite of scenarios played through the runtime exactly as a game
//! drives it, on one brain, and what the agents said and decided measured without a human or a
//! judge model — [`suite`] the file, [`run`] the play, [`played`] what it collected,
//! [`replay`] a game-master turn taken again, [`metrics`] the card's numbers (on top of
//! [`crate::eval::lines`]), [`results`] what comes out (`results.json`), [`report`] its page.
//! `agents-server eval` runs it.

pub mod metrics;
pub mod played;
pub mod replay;
pub mod report;
pub mod results;
pub mod run;
pub mod suite;

#[cfg(test)]
mod run_tests;
