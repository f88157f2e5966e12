//! Choosing the next token: within what the grammar allows, then by temperature and top-p.
//!
//! The grammar is llguidance's [`Matcher`] over the model's vocabulary: at each step it says
//! which tokens may come next (a bit mask), so only those are ever chosen and the answer matches
//! its JSON Schema by construction. After a token, the tokens the grammar forces (the rest of a
//! key, a `":"`) are taken at once without sampling ([`Constrained::forced`]), and evaluated
//! together in the next batch.

use llguidance::Matcher;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::settings::Sampling;

/// What [`Constrained::pick`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// A token of the answer.
    Token(u32),
    /// The answer is over (an end-of-generation token, or the grammar is complete).
    End,
}

/// Scaled logits this far below the likeliest token's are not drawn (weight under e^-20).
const NEGLIGIBLE: f32 = 20.0;

/// The sampler of one answer.
pub struct Constrained {
    matcher: Option<Matcher>,
    sampling: Sampling,
    rng: ChaCha8Rng,
    /// Scratch: the allowed tokens and their weights.
    candidates: Vec<(u32, f32)>,
}

impl Constrained {
    /// A sampler; `matcher` constrains it (`None`: any token).
    pub fn new(matcher: Option<Matcher>, sampling: Sampling) -> Self {
        Constrained {
            rng: ChaCha8Rng::seed_from_u64(sampling.seed),
            matcher,
            sampling,
            candidates: Vec::new(),
        }
    }

    /// Whether the grammar is complete or failed (no more tokens).
    pub fn is_done(&self) -> bool {
        self.matcher.as_ref().is_some_and(|m| m.is_stopped())
    }

    /// The grammar's error, if it failed.
    pub fn error(&self) -> Option<String> {
        self.matcher.as_ref().and_then(|m| m.get_error())
    }

    /// Chooses the next token from `logits` (one per vocabulary entry); `is_end` tells
    /// end-of-generation tokens.
    pub fn pick(&mut self, logits: &[f32], is_end: impl Fn(u32) -> bool) -> Result<Pick, String> {
        self.candidates.clear();
        match &mut self.matcher {
            Some(matcher) => {
                let mask = matcher.compute_mask().map_err(|e| e.to_string())?;
                let candidates = &mut self.candidates;
                mask.iter_set_entries(|i| {
                    if let Some(&logit) = logits.get(i) {
                        candidates.push((i as u32, logit));
                    }
                });
            }
            None => self
                .candidates
                .extend(logits.iter().enumerate().map(|(i, &l)| (i as u32, l))),
        }
        if self.candidates.is_empty() {
            return Ok(Pick::End);
        }
        let token = if self.sampling.temperature <= 0.0 {
            self.candidates
                .iter()
                .copied()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(t, _)| t)
                .unwrap_or_default()
        } else {
            self.sample()
        };
        if is_end(token) {
            if let Some(matcher) = &mut self.matcher {
                // The grammar allowed the end: it is complete.
                let _ = matcher.consume_token(token);
            }
            return Ok(Pick::End);
        }
        if let Some(matcher) = &mut self.matcher {
            matcher.consume_token(token).map_err(|e| e.to_string())?;
        }
        Ok(Pick::Token(token))
    }

    /// The tokens the grammar forces next (consumed): they need no sampling.
    pub fn forced(&mut self) -> Vec<u32> {
        match &mut self.matcher {
            Some(matcher) if !matcher.is_stopped() => matcher.consume_ff_tokens(),
            _ => Vec::new(),
        }
    }

    /// Temperature, then top-p, then a draw. Tokens less likely than e^-[`NEGLIGIBLE`] times
    /// the likeliest are dropped first: together they weigh less than one part in a thousand
    /// (of a 262,144-entry vocabulary), and the rest is sorted in a fraction of the time.
    fn sample(&mut self) -> u32 {
        let t = self.sampling.temperature;
        let max = self
            .candidates
            .iter()
            .map(|c| c.1)
            .fold(f32::NEG_INFINITY, f32::max);
        self.candidates.retain(|c| (c.1 - max) / t > -NEGLIGIBLE);
        let mut total = 0.0;
        for c in &mut self.candidates {
            c.1 = ((c.1 - max) / t).exp();
            total += c.1;
        }
        self.candidates.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
        let top_p = self.sampling.top_p.clamp(0.0, 1.0);
        let mut kept = 0.0;
        let mut n = 0;
        for c in &self.candidates {
            kept += c.1;
            n += 1;
            if kept >= top_p * total {
                break;
            }
        }
        let mut draw = self.rng.random_range(0.0..kept.max(f32::MIN_POSITIVE));
        for c in &self.candidates[..n] {
            if draw < c.1 {
                return c.0;
            }
            draw -= c.1;
        }
        self.candidates[n - 1].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_sampling_follows_the_logits() {
        let logits = [0.0, 5.0, 1.0, -3.0];
        let greedy = Sampling {
            temperature: 0.0,
            ..Sampling::default()
        };
        let mut s = Constrained::new(None, greedy);
        assert_eq!(s.pick(&logits, |_| false), Ok(Pick::Token(1)));
        assert_eq!(s.pick(&logits, |t| t == 1), Ok(Pick::End));
        // A narrow nucleus keeps only the likeliest token.
        let narrow = Sampling {
            temperature: 1.0,
            top_p: 0.5,
            seed: 3,
        };
        let mut s = Constrained::new(None, narrow);
        for _ in 0..50 {
            assert_eq!(s.pick(&logits, |_| false), Ok(Pick::Token(1)));
        }
        // A wide one draws the others too, the same way for the same seed.
        let draws = |seed| {
            let mut s = Constrained::new(
                None,
                Sampling {
                    temperature: 2.0,
                    top_p: 1.0,
                    seed,
                },
            );
            (0..200)
                .map(|_| s.pick(&logits, |_| false).unwrap())
                .collect::<Vec<_>>()
        };
        let a = draws(9);
        assert_eq!(a, draws(9));
        assert!(a.contains(&Pick::Token(2)) && a.contains(&Pick::Token(0)));
    }
}
