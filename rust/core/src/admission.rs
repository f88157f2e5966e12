//! Who may come in, and how often: per-connection rate limiting (token buckets, floods) and the
//! constant-time token comparison. A leaf: the WebSocket server ([`crate::net`]) and the MCP
//! endpoint ([`crate::mcp`]) both use it.

use std::time::{Duration, Instant};

/// A connection whose rejected requests within one second exceed this many times its
/// `rate_limit_per_sec` is closed with `1008` "rate limit exceeded".
pub const FLOOD_FACTOR: u64 = 10;

/// A token bucket: `burst` requests at once, refilled at `rate` per second. Also counts the
/// requests rejected in the current one-second window, to detect floods.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
    window_start: Instant,
    rejected_in_window: u64,
}

/// What [`TokenBucket::take`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Handle the request.
    Allowed,
    /// Reply `rate_limited`.
    Limited,
    /// The client keeps flooding: close the connection.
    Flood,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate_per_sec: u32, burst: u32, now: Instant) -> Self {
        TokenBucket {
            rate: f64::from(rate_per_sec.max(1)),
            burst: f64::from(burst.max(1)),
            tokens: f64::from(burst.max(1)),
            last: now,
            window_start: now,
            rejected_in_window: 0,
        }
    }

    /// Takes one token for a request arriving at `now`.
    pub fn take(&mut self, now: Instant) -> Admission {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Admission::Allowed;
        }
        if now.saturating_duration_since(self.window_start) >= Duration::from_secs(1) {
            self.window_start = now;
            self.rejected_in_window = 0;
        }
        self.rejected_in_window += 1;
        if self.rejected_in_window > FLOOD_FACTOR * self.rate as u64 {
            Admission::Flood
        } else {
            Admission::Limited
        }
    }
}

/// Compares two byte strings in time independent of where they differ (the length still shows).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_the_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(10, 5, t0);
        for _ in 0..5 {
            assert_eq!(b.take(t0), Admission::Allowed);
        }
        assert_eq!(b.take(t0), Admission::Limited);
        // 0.25 s later: 2.5 tokens.
        let t1 = t0 + Duration::from_millis(250);
        assert_eq!(b.take(t1), Admission::Allowed);
        assert_eq!(b.take(t1), Admission::Allowed);
        assert_eq!(b.take(t1), Admission::Limited);
        // Refill never exceeds the burst.
        let t2 = t1 + Duration::from_secs(60);
        for _ in 0..5 {
            assert_eq!(b.take(t2), Admission::Allowed);
        }
        assert_eq!(b.take(t2), Admission::Limited);
    }

    #[test]
    fn flooding_ten_times_the_rate_is_detected() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(2, 1, t0);
        assert_eq!(b.take(t0), Admission::Allowed);
        for _ in 0..FLOOD_FACTOR * 2 {
            assert_eq!(b.take(t0), Admission::Limited);
        }
        assert_eq!(b.take(t0), Admission::Flood);
        let later = t0 + Duration::from_millis(1100);
        // A new window starts over: one token (the burst), then limited, not a flood.
        assert_eq!(b.take(later), Admission::Allowed);
        assert_eq!(b.take(later), Admission::Limited);
    }

    #[test]
    fn constant_time_eq_compares_bytes() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
