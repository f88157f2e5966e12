//! Ratings: a Bradley–Terry model fitted by maximum likelihood, on an Elo scale, with a 95 %
//! interval from a bootstrap.
//!
//! - **The model.** Player `i` has a strength `γᵢ`; it beats `j` with probability
//!   `γᵢ / (γᵢ + γⱼ)`. A draw counts half a win to each side. The strengths maximising the
//!   likelihood of the games are found by the minorisation–maximisation iteration of Hunter
//!   (2004): `γᵢ ← Wᵢ / Σⱼ nᵢⱼ / (γᵢ + γⱼ)`, with `Wᵢ` the player's score and `nᵢⱼ` the games
//!   between `i` and `j`, until no strength moves by more than one part in 10⁹.
//! - **The scale.** `rating = anchor + 400 · log₁₀(γᵢ / γ_anchor)`: 400 points are odds of 10
//!   to 1, as in Elo. The anchor player (`engine:random`) is held at its fixed rating
//!   ([`ANCHOR_RATING`]).
//! - **A prior.** Every player gets one virtual draw against the anchor ([`PRIOR_DRAWS`]), so a
//!   player that won (or lost) every game still has a finite rating, and players that never
//!   met are still on one scale. With many games it weighs little.
//! - **The interval.** The games are resampled with replacement [`BOOTSTRAP_SAMPLES`] times
//!   (seeded: the same games give the same interval), the model refitted on each sample, and
//!   the 2.5th and 97.5th percentiles of each player's ratings kept.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The anchor's fixed rating.
pub const ANCHOR_RATING: f64 = 1000.0;
/// Virtual draws each player gets against the anchor (the prior).
pub const PRIOR_DRAWS: f64 = 1.0;
/// Bootstrap samples for the interval.
pub const BOOTSTRAP_SAMPLES: usize = 500;
/// Iterations the fit may take before it stops where it is.
const MAX_ITERATIONS: usize = 10_000;

/// One game between two players: the score of `a` (1 a win, 0.5 a draw, 0 a loss).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// One player (an index into the players).
    pub a: usize,
    /// The other.
    pub b: usize,
    /// `a`'s score.
    pub score_a: f64,
}

/// A player's rating and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// The maximum-likelihood rating.
    pub rating: f64,
    /// The 95 % interval, `[low, high]`.
    pub ci95: [f64; 2],
}

/// Rates `players` players from `games`, with player `anchor` held at [`ANCHOR_RATING`];
/// `seed` seeds the bootstrap.
pub fn rate(players: usize, anchor: usize, games: &[Outcome], seed: u64) -> Vec<Rating> {
    let point = fit(players, anchor, games);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(BOOTSTRAP_SAMPLES); players];
    let mut sample = Vec::with_capacity(games.len());
    for _ in 0..BOOTSTRAP_SAMPLES {
        sample.clear();
        for _ in 0..games.len() {
            sample.push(games[rng.random_range(0..games.len())]);
        }
        for (i, r) in fit(players, anchor, &sample).into_iter().enumerate() {
            samples[i].push(r);
        }
    }
    point
        .into_iter()
        .zip(samples)
        .map(|(rating, mut s)| {
            s.sort_by(f64::total_cmp);
            Rating {
                rating,
                ci95: [percentile(&s, 0.025), percentile(&s, 0.975)],
            }
        })
        .collect()
}

/// The maximum-likelihood ratings (see the module docs).
pub fn fit(players: usize, anchor: usize, games: &[Outcome]) -> Vec<f64> {
    if players == 0 {
        return Vec::new();
    }
    // Scores and game counts, the prior's draws included.
    let mut score = vec![0.0; players];
    let mut met = vec![vec![0.0; players]; players];
    for g in games {
        if g.a == g.b || g.a >= players || g.b >= players {
            continue;
        }
        score[g.a] += g.score_a;
        score[g.b] += 1.0 - g.score_a;
        met[g.a][g.b] += 1.0;
        met[g.b][g.a] += 1.0;
    }
    for i in (0..players).filter(|&i| i != anchor) {
        score[i] += PRIOR_DRAWS / 2.0;
        score[anchor] += PRIOR_DRAWS / 2.0;
        met[i][anchor] += PRIOR_DRAWS;
        met[anchor][i] += PRIOR_DRAWS;
    }
    let mut gamma = vec![1.0; players];
    for _ in 0..MAX_ITERATIONS {
        let mut next = gamma.clone();
        for i in 0..players {
            let denominator: f64 = (0..players)
                .filter(|&j| met[i][j] > 0.0)
                .map(|j| met[i][j] / (gamma[i] + gamma[j]))
                .sum();
            if denominator > 0.0 {
                // A score of 0 would send the strength to 0: keep it tiny but positive.
                next[i] = (score[i] / denominator).max(1e-12);
            }
        }
        // Only ratios matter: hold the anchor at 1.
        let held = next[anchor];
        for g in &mut next {
            *g /= held;
        }
        let moved = gamma
            .iter()
            .zip(&next)
            .map(|(a, b)| ((a - b) / a).abs())
            .fold(0.0, f64::max);
        gamma = next;
        if moved < 1e-9 {
            break;
        }
    }
    gamma
        .iter()
        .map(|g| ANCHOR_RATING + 400.0 * (g / gamma[anchor]).log10())
        .collect()
}

/// The `q` quantile of sorted `values` (linear between neighbours).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(a: usize, b: usize, wins: u32, draws: u32, losses: u32) -> Vec<Outcome> {
        let mut out = Vec::new();
        for (n, score_a) in [(wins, 1.0), (draws, 0.5), (losses, 0.0)] {
            for _ in 0..n {
                out.push(Outcome { a, b, score_a });
            }
        }
        out
    }

    #[test]
    fn equal_players_rate_equal_and_the_anchor_stays_fixed() {
        let g = games(0, 1, 10, 0, 10);
        let r = fit(2, 0, &g);
        assert!((r[0] - ANCHOR_RATING).abs() < 1e-9);
        assert!((r[1] - ANCHOR_RATING).abs() < 1e-6, "{r:?}");
    }

    /// A player scoring 75 % against the anchor over many games sits near the Elo difference
    /// of 75 %: 400·log₁₀(3) ≈ 191 (the prior's one draw pulls it in a little).
    #[test]
    fn a_score_maps_to_the_elo_difference() {
        let g = games(1, 0, 300, 0, 100);
        let r = fit(2, 0, &g);
        let expected = ANCHOR_RATING + 400.0 * 3f64.log10();
        assert!((r[1] - expected).abs() < 2.0, "{} vs {expected}", r[1]);
    }

    #[test]
    fn a_perfect_score_is_finite_and_the_order_follows_the_results() {
        // 2 beats 1 beats 0 (the anchor) every time.
        let mut g = games(1, 0, 5, 0, 0);
        g.extend(games(2, 1, 5, 0, 0));
        let r = fit(3, 0, &g);
        assert!(r.iter().all(|x| x.is_finite()), "{r:?}");
        assert!(r[2] > r[1] && r[1] > r[0], "{r:?}");
    }

    #[test]
    fn the_interval_holds_the_rating_narrows_with_games_and_replays() {
        let few = rate(2, 0, &games(1, 0, 6, 2, 2), 3);
        let many = rate(2, 0, &games(1, 0, 60, 20, 20), 3);
        for r in [few[1], many[1]] {
            assert!(r.ci95[0] <= r.rating && r.rating <= r.ci95[1], "{r:?}");
        }
        let width = |r: Rating| r.ci95[1] - r.ci95[0];
        assert!(width(many[1]) < width(few[1]) / 2.0, "{few:?} {many:?}");
        assert_eq!(rate(2, 0, &games(1, 0, 6, 2, 2), 3), few);
        assert_eq!(few[0].ci95, [ANCHOR_RATING, ANCHOR_RATING]);
    }

    #[test]
    fn no_games_leaves_everyone_at_the_anchor() {
        let r = rate(3, 1, &[], 1);
        assert!(
            r.iter().all(|x| (x.rating - ANCHOR_RATING).abs() < 1e-9),
            "{r:?}"
        );
    }
}
