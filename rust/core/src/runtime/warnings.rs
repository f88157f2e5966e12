//! Warnings a client can make an agent repeat, logged once per window: the first of a cause
//! is logged, the repeats within [`WINDOW`] are only counted, and the next one after the window
//! is logged with how many there were ("… 1999 more like this in the last 60 s"); what is still
//! counted when the agent stops is logged then. However fast a client makes an agent fail the
//! same way, the log gains at most about one line per cause per window.
//!
//! One [`Warnings`] belongs to each running agent ([`super::agent::AgentShared::warn`]), so a
//! warning is keyed by the agent and its cause, and is dropped with the agent.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// How long the repeats of a warning are counted before the next one is logged.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The warnings of one agent, by cause.
#[derive(Debug, Default)]
pub struct Warnings {
    causes: Mutex<HashMap<&'static str, Burst>>,
}

/// The current window of one cause.
#[derive(Debug, Clone, Copy)]
struct Burst {
    /// When the last logged warning of the cause was.
    logged_at: Instant,
    /// Warnings of the cause since then, not logged.
    repeats: u64,
}

/// What to do with a warning, from [`Warnings::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Log it; `repeats` warnings of its cause were counted instead of logged in the
    /// `seconds` before it (0: none).
    Log {
        /// The warnings counted since the last one logged.
        repeats: u64,
        /// Seconds since the last one logged.
        seconds: u64,
    },
    /// Count it only: one of its cause was logged less than [`WINDOW`] ago.
    Count,
}

impl Warnings {
    /// Whether a warning of `cause` happening at `now` is logged (and how many it stands for)
    /// or only counted.
    pub fn admit(&self, cause: &'static str, now: Instant) -> Admit {
        let mut causes = self.causes.lock();
        match causes.get_mut(cause) {
            Some(burst) if now.saturating_duration_since(burst.logged_at) < WINDOW => {
                burst.repeats += 1;
                Admit::Count
            }
            Some(burst) => {
                let admit = Admit::Log {
                    repeats: burst.repeats,
                    seconds: now.saturating_duration_since(burst.logged_at).as_secs(),
                };
                *burst = Burst {
                    logged_at: now,
                    repeats: 0,
                };
                admit
            }
            None => {
                causes.insert(
                    cause,
                    Burst {
                        logged_at: now,
                        repeats: 0,
                    },
                );
                Admit::Log {
                    repeats: 0,
                    seconds: 0,
                }
            }
        }
    }

    /// The causes with repeats counted and not logged yet, with how many and over how many
    /// seconds until `now`; they are forgotten.
    pub fn take_unlogged(&self, now: Instant) -> Vec<(&'static str, u64, u64)> {
        let mut causes = self.causes.lock();
        let mut left: Vec<(&'static str, u64, u64)> = causes
            .drain()
            .filter(|(_, burst)| burst.repeats > 0)
            .map(|(cause, burst)| {
                let seconds = now.saturating_duration_since(burst.logged_at).as_secs();
                (cause, burst.repeats, seconds)
            })
            .collect();
        left.sort_unstable();
        left
    }
}

/// The note a logged warning ends with when it stands for repeats (empty when it does not).
pub fn repeats_note(repeats: u64, seconds: u64) -> String {
    if repeats == 0 {
        String::new()
    } else {
        format!(" (… {repeats} more like this in the last {seconds} s)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_a_cause_is_logged_and_its_repeats_counted_until_the_window_ends() {
        let warnings = Warnings::default();
        let start = Instant::now();
        let first = Admit::Log {
            repeats: 0,
            seconds: 0,
        };
        assert_eq!(warnings.admit("memory", start), first);
        for i in 1..2_000 {
            let at = start + Duration::from_millis(i);
            assert_eq!(warnings.admit("memory", at), Admit::Count);
        }
        // Another cause has a window of its own.
        assert_eq!(warnings.admit("brain", start), first);
        let later = start + WINDOW + Duration::from_secs(1);
        assert_eq!(
            warnings.admit("memory", later),
            Admit::Log {
                repeats: 1_999,
                seconds: 61
            }
        );
        assert_eq!(warnings.admit("memory", later), Admit::Count);
        assert_eq!(warnings.take_unlogged(later), [("memory", 1, 0)]);
        assert!(warnings.take_unlogged(later).is_empty());
        assert_eq!(repeats_note(0, 5), "");
        assert_eq!(
            repeats_note(1_999, 61),
            " (… 1999 more like this in the last 61 s)"
        );
    }
}
