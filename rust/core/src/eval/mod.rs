//! Measuring what agents do: pure functions over what they said and did (no I/O, no runtime),
//! so a test, a benchmark or a game computes the same numbers the same way.

pub mod lines;
