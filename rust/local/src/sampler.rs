//! Choosing the next token: within what the grammar allows, then by temperature and top-p.
//!
//! The grammar is llguidance's [`Matcher`] over the model's vocabulary: at each step it says
//! which tokens may come next (a bit mask), so only those are ever chosen and the answer matches
//! its JSON Schema by construction. After a token, the tokens the grammar forces (the rest of a
//! key, a `":"`) are taken at once without sampling ([`Constrained::forced`]), and evaluated
//! together in the next batch.
//!
//! **Winding down.** An answer must end within `max_tokens`, and a JSON answer cut before its
//! end is broken (a model caught in a loop inside a string would run to the cut). So near the
//! end ([`Constrained::wind_down`]) the sampler closes what is open: of the tokens the grammar
//! allows, it ends the answer when the grammar is complete, else takes the likeliest that only
//! closes ([`Closers`]: inside a string `"` and then `}`, `]` or blanks; outside one `}`, `]`
//! and blanks); where nothing may close yet (a required key, a string's minimum length), it
//! samples as before.

use llguidance::Matcher;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::settings::Sampling;

/// The grammar of an answer matching `schema`, written as compact JSON (no blanks between
/// tokens). `lenient`: keywords the grammar compiler does not support are ignored instead of
/// refused (the worker tries a schema strictly first).
pub fn grammar(schema: &serde_json::Value, lenient: bool) -> llguidance::api::TopLevelGrammar {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        object.insert(
            "x-guidance".into(),
            serde_json::json!({"whitespace_flexible": false, "lenient": lenient}),
        );
    }
    llguidance::api::TopLevelGrammar::from_json_schema(schema)
}

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
    /// Winding down: the tokens that only close, and whether the answer is inside a string.
    closing: Option<(std::sync::Arc<Closers>, bool)>,
}

/// The tokens of a vocabulary that only close JSON, by token id.
pub struct Closers {
    /// Inside a string: `"`, then only `}`, `]` and blanks.
    pub in_string: Vec<bool>,
    /// Outside: only `}`, `]` and blanks, one of the first two at least.
    pub outside: Vec<bool>,
}

impl Closers {
    /// The closing tokens among `tokens` (each token's bytes, by id).
    pub fn new<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> Closers {
        let (mut in_string, mut outside) = (Vec::new(), Vec::new());
        for bytes in tokens {
            let closes = |b: &[u8]| b.iter().all(|c| matches!(c, b'}' | b']' | b' ' | b'\n'));
            in_string.push(bytes.first() == Some(&b'"') && closes(&bytes[1..]));
            outside.push(bytes.iter().any(|c| matches!(c, b'}' | b']')) && closes(bytes));
        }
        Closers { in_string, outside }
    }
}

/// Whether JSON text that begins `bytes` is inside a string at its end.
pub fn inside_string(bytes: &[u8]) -> bool {
    let (mut inside, mut escaped) = (false, false);
    for &b in bytes {
        match b {
            _ if escaped => escaped = false,
            b'\\' if inside => escaped = true,
            b'"' => inside = !inside,
            _ => {}
        }
    }
    inside
}

impl Constrained {
    /// A sampler; `matcher` constrains it (`None`: any token).
    pub fn new(matcher: Option<Matcher>, sampling: Sampling) -> Self {
        Constrained {
            rng: ChaCha8Rng::seed_from_u64(sampling.seed),
            matcher,
            sampling,
            candidates: Vec::new(),
            closing: None,
        }
    }

    /// The next token closes what is open if it can (see the module docs); `in_string`: the
    /// answer so far ends inside a string ([`inside_string`]).
    pub fn wind_down(&mut self, closers: &std::sync::Arc<Closers>, in_string: bool) {
        self.closing = Some((closers.clone(), in_string));
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
        if let (Some((closers, in_string)), Some(_)) = (self.closing.take(), &self.matcher) {
            let set = if in_string {
                &closers.in_string
            } else {
                &closers.outside
            };
            let closing = self
                .candidates
                .iter()
                .copied()
                .filter(|(t, _)| is_end(*t) || set.get(*t as usize) == Some(&true))
                .max_by(|a, b| is_end(a.0).cmp(&is_end(b.0)).then(a.1.total_cmp(&b.1)));
            if let Some((token, _)) = closing {
                self.candidates.clear();
                self.candidates.push((token, 0.0));
            }
        }
        let token = if self.sampling.temperature <= 0.0 || self.candidates.len() == 1 {
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
    fn closing_tokens_only_close() {
        let tokens = [
            "\"", "\"}", "\"]}\n", "}", "]}", " }", "", " ", "a\"", "\",", "},", "1}", "{", "\"a",
        ];
        let closers = Closers::new(tokens.iter().map(|t| t.as_bytes()));
        let named = |set: &[bool]| {
            tokens
                .iter()
                .zip(set)
                .filter(|(_, c)| **c)
                .map(|(t, _)| *t)
                .collect::<Vec<_>>()
        };
        assert_eq!(named(&closers.in_string), ["\"", "\"}", "\"]}\n"]);
        assert_eq!(named(&closers.outside), ["}", "]}", " }"]);
    }

    #[test]
    fn strings_are_told_from_what_is_around_them() {
        assert!(!inside_string(b"{\"a\":1"));
        assert!(inside_string(b"{\"a\":\"x"));
        assert!(
            inside_string(b"{\"a\":\"x\\\""),
            "an escaped quote does not close"
        );
        assert!(
            !inside_string(b"{\"a\":\"x\\\\\""),
            "an escaped backslash does"
        );
        assert!(inside_string(b"{\""));
    }

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
