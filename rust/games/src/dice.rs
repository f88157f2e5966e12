//! RPG dice: `count` dice with `sides` faces each.
//!
//! - `sides` must be one of 4, 6, 8, 10, 12, 20 or 100, otherwise the roll fails with
//!   `Unsupported dice sides.` (reason `unsupported_sides`);
//! - `count` must be 1–100, otherwise `Invalid dice count.` (reason `invalid_count`).
//!   The sides are checked first.
//!
//! Rolls come from a [`GameRng`] through [`uniform_below`], an unbiased rejection sampler over
//! `next_u32`, so the same seed gives the same rolls on every platform and with every `rand`
//! version that keeps ChaCha8's output stable. Dice have no state string.

use rand::Rng;

use crate::MoveError;
use crate::seed::GameRng;

/// The die sizes that can be rolled.
pub const SUPPORTED_SIDES: [u32; 7] = [4, 6, 8, 10, 12, 20, 100];

/// The largest number of dice in one roll.
pub const MAX_COUNT: u32 = 100;

/// The error text for an unsupported die size.
pub const UNSUPPORTED_SIDES: &str = "Unsupported dice sides.";

/// The error text for a dice count outside 1–100.
pub const INVALID_COUNT: &str = "Invalid dice count.";

/// A uniformly distributed integer in `0..n` (0 when `n` is 0), without modulo bias.
///
/// Draws `u32`s and rejects the top partial bucket, so the result depends only on the generator's
/// `next_u32` stream: portable across platforms (no `usize`) and independent of `rand`'s own range
/// sampling algorithm.
pub fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u32) -> u32 {
    if n <= 1 {
        return 0;
    }
    let limit = (u32::MAX / n) * n;
    loop {
        let x = rng.next_u32();
        if x < limit {
            return x % n;
        }
    }
}

/// The outcome of one roll: every die's face (1-based) in rolling order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiceRoll {
    /// Faces per die.
    pub sides: u32,
    /// Each die's result, `1..=sides`, in order.
    pub rolls: Vec<u32>,
}

impl DiceRoll {
    /// Number of dice rolled.
    pub fn count(&self) -> u32 {
        self.rolls.len() as u32
    }

    /// Sum of all dice.
    pub fn total(&self) -> u64 {
        self.rolls.iter().map(|&r| u64::from(r)).sum()
    }
}

/// Checks `sides` and `count` (as given by a caller, any integer) and returns them as `u32`.
///
/// # Errors
///
/// [`UNSUPPORTED_SIDES`] (`unsupported_sides`) first, then [`INVALID_COUNT`] (`invalid_count`).
pub fn check(sides: i64, count: i64) -> Result<(u32, u32), MoveError> {
    let sides = u32::try_from(sides)
        .ok()
        .filter(|s| SUPPORTED_SIDES.contains(s))
        .ok_or_else(|| MoveError::new("unsupported_sides", UNSUPPORTED_SIDES))?;
    let count = u32::try_from(count)
        .ok()
        .filter(|c| (1..=MAX_COUNT).contains(c))
        .ok_or_else(|| MoveError::new("invalid_count", INVALID_COUNT))?;
    Ok((sides, count))
}

/// Rolls `count` dice with `sides` faces.
///
/// # Errors
///
/// As [`check`]: unsupported sides or a count outside 1–100.
pub fn roll(sides: i64, count: i64, rng: &mut GameRng) -> Result<DiceRoll, MoveError> {
    let (sides, count) = check(sides, count)?;
    let rolls = (0..count).map(|_| uniform_below(rng, sides) + 1).collect();
    Ok(DiceRoll { sides, rolls })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;

    #[test]
    fn errors_have_the_documented_text_and_order() {
        let mut rng = Seed::Int(1).rng();
        for sides in [0, 1, 2, 3, 5, 7, 13, 99, 101, -6, i64::MAX] {
            let e = roll(sides, 1, &mut rng).unwrap_err();
            assert_eq!(
                (e.reason, e.message.as_str()),
                ("unsupported_sides", "Unsupported dice sides.")
            );
        }
        for count in [0, -1, 101, i64::MIN] {
            let e = roll(20, count, &mut rng).unwrap_err();
            assert_eq!(
                (e.reason, e.message.as_str()),
                ("invalid_count", "Invalid dice count.")
            );
        }
        // Both wrong: the sides are reported.
        assert_eq!(
            roll(7, 0, &mut rng).unwrap_err().reason,
            "unsupported_sides"
        );
    }

    #[test]
    fn every_supported_die_stays_in_range_and_hits_every_face() {
        let mut rng = Seed::Str("ranges".into()).rng();
        for sides in SUPPORTED_SIDES {
            let mut seen = vec![0u32; sides as usize + 1];
            for _ in 0..40 {
                let r = roll(i64::from(sides), 100, &mut rng).unwrap();
                assert_eq!(r.count(), 100);
                assert_eq!(
                    r.total(),
                    r.rolls.iter().map(|&x| u64::from(x)).sum::<u64>()
                );
                for x in r.rolls {
                    assert!((1..=sides).contains(&x), "d{sides} gave {x}");
                    seen[x as usize] += 1;
                }
            }
            assert!(seen[1..].iter().all(|&n| n > 0), "d{sides} missed a face");
        }
    }

    #[test]
    fn d6_is_roughly_uniform() {
        let mut rng = Seed::Int(6).rng();
        let mut counts = [0u32; 7];
        for _ in 0..600 {
            for x in roll(6, 100, &mut rng).unwrap().rolls {
                counts[x as usize] += 1;
            }
        }
        // 60000 rolls: expected 10000 per face, standard deviation about 91.
        for &c in &counts[1..] {
            assert!((9500..=10500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn same_seed_same_rolls() {
        let a = roll(20, 10, &mut Seed::Str("x".into()).rng()).unwrap();
        let b = roll(20, 10, &mut Seed::Str("x".into()).rng()).unwrap();
        let c = roll(20, 10, &mut Seed::Str("y".into()).rng()).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn seeded_rolls_are_pinned() {
        // Pinned so a change in sampling (which would change every seeded roll) is noticed.
        let r = roll(20, 5, &mut Seed::Int(42).rng()).unwrap();
        assert_eq!(r.rolls, vec![10, 20, 17, 9, 8]);
        assert_eq!(r.total(), 64);
    }

    #[test]
    fn uniform_below_edge_cases() {
        let mut rng = Seed::Int(0).rng();
        assert_eq!(uniform_below(&mut rng, 0), 0);
        assert_eq!(uniform_below(&mut rng, 1), 0);
        for _ in 0..1000 {
            assert!(uniform_below(&mut rng, 3) < 3);
            assert!(uniform_below(&mut rng, u32::MAX) < u32::MAX);
        }
    }
}
