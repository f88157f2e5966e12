//! The game clock: the time memories are stamped with and recency is measured in, in seconds.
//!
//! It runs at [`RuntimeOptions::game_time_scale`](super::RuntimeOptions::game_time_scale) game
//! seconds per real second (tokio's clock, so a paused-clock test drives it) from where it was
//! last set. A runtime starts it at the latest game time its database has seen (a memory
//! formed or recalled), so time never runs backwards for a resumed world. A game with a
//! calendar of its own sets it ([`super::Runtime::set_game_time`]), as often as it likes.

use parking_lot::Mutex;
use tokio::time::Instant;

/// Game time, running from a set point.
pub(crate) struct GameClock {
    state: Mutex<Running>,
}

struct Running {
    /// Game seconds at `since`.
    at: f64,
    since: Instant,
    /// Game seconds per real second.
    scale: f64,
}

impl GameClock {
    /// A clock at `at` game seconds, running at `scale`.
    pub(crate) fn new(at: f64, scale: f64) -> GameClock {
        GameClock {
            state: Mutex::new(Running {
                at,
                since: Instant::now(),
                scale,
            }),
        }
    }

    /// The game time now, in seconds.
    pub(crate) fn now(&self) -> f64 {
        let s = self.state.lock();
        s.at + s.since.elapsed().as_secs_f64() * s.scale
    }

    /// Sets the game time to `at` seconds; it runs on from there.
    pub(crate) fn set(&self, at: f64) {
        let mut s = self.state.lock();
        s.at = at;
        s.since = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn the_clock_runs_at_its_scale_from_where_it_was_set() {
        let clock = GameClock::new(100.0, 60.0);
        assert_eq!(clock.now(), 100.0);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(clock.now(), 220.0);
        clock.set(5.0);
        assert_eq!(clock.now(), 5.0);
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(clock.now(), 35.0);
    }
}
