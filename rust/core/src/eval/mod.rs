//! Measuring what agents do: pure functions over what they said and did (no I/O, no runtime),
//! so a test, a benchmark or a game computes the same numbers the same way. The NPC report
//! card ([`crate::report_card`]) plays scenarios through the runtime and measures them with
//! these.

pub mod lines;
