//! CPython's `random.Random`, as far as `map_generate` needs it: seeding from a string, and
//! `getrandbits` / `randrange` on top of Mersenne Twister MT19937, as the
//! reference GM backend draws its maps.
//!
//! Seeding (CPython 3, `random.seed(str)`, version 2): the string's UTF-8 bytes followed by their
//! SHA-512 digest, read as one big-endian integer; its 32-bit words, least significant first and
//! without leading zero words, are the key of MT19937's `init_by_array`. `getrandbits(k)` takes
//! the top `k` bits of one output for `k ≤ 32` and fills 32-bit words least significant first
//! beyond; `randrange(a, b)` is `a + _randbelow(b − a)`, drawing `getrandbits(bit_length)` until
//! the value is below the bound (also for a bound of 1).

use rand_mt::Mt;
use sha2::{Digest, Sha512};

/// A `random.Random(seed)` of CPython.
pub struct PyRandom {
    mt: Mt,
}

impl PyRandom {
    /// `random.Random(seed)` for a string seed.
    pub fn from_str_seed(seed: &str) -> PyRandom {
        let mut bytes = seed.as_bytes().to_vec();
        bytes.extend_from_slice(&Sha512::digest(seed.as_bytes()));
        PyRandom {
            mt: Mt::new_with_key(key_words(&bytes)),
        }
    }

    /// `getrandbits(k)` for `k ≤ 128`.
    pub fn getrandbits(&mut self, k: u32) -> u128 {
        assert!(k <= 128, "getrandbits({k}): at most 128 bits here");
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return u128::from(self.mt.next_u32() >> (32 - k));
        }
        let mut value = 0u128;
        let mut filled = 0;
        let mut left = k;
        while left > 0 {
            let mut word = self.mt.next_u32();
            if left < 32 {
                word >>= 32 - left;
            }
            value |= u128::from(word) << filled;
            filled += 32;
            left = left.saturating_sub(32);
        }
        value
    }

    /// `_randbelow(n)` for `n ≥ 1`.
    fn randbelow(&mut self, n: u64) -> u64 {
        let bits = u64::BITS - n.leading_zeros();
        loop {
            let r = self.getrandbits(bits) as u64;
            if r < n {
                return r;
            }
        }
    }

    /// `randrange(start, stop)` for `start < stop`.
    pub fn randrange(&mut self, start: i64, stop: i64) -> i64 {
        assert!(start < stop, "randrange({start}, {stop}): empty range");
        start + self.randbelow(stop.abs_diff(start)) as i64
    }
}

/// The big-endian integer `bytes` as 32-bit words, least significant first, without leading
/// zero words (`[0]` for zero), as CPython passes an int to `init_by_array`.
fn key_words(bytes: &[u8]) -> Vec<u32> {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let significant = &bytes[start..];
    let mut words: Vec<u32> = significant
        .rchunks(4)
        .map(|chunk| chunk.iter().fold(0u32, |w, &b| (w << 8) | u32::from(b)))
        .collect();
    if words.is_empty() {
        words.push(0);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference numbers from CPython 3.11: `random.Random(seed)`.
    #[test]
    fn matches_cpython() {
        let cases: &[(&str, [u32; 3], [i64; 10], u128)] = &[
            (
                "alpha",
                [133732088, 2608660305, 3210288984],
                [0, 4, 4, 4, 2, 1, 3, 2, 0, 1],
                516986542764952856046,
            ),
            (
                "beta",
                [1135050754, 1502981783, 1994809184],
                [2, 2, 3, 1, 0, 4, 2, 3, 1, 0],
                922379438273424215434,
            ),
            (
                "default",
                [1176211856, 3973823875, 3404336587],
                [2, 2, 4, 4, 3, 3, 1, 1, 2, 0],
                1059725144934204470753,
            ),
            // Leading NUL bytes: the key has no leading zero words.
            (
                "\0\0abc",
                [1217561204, 2009949103, 3408464373],
                [2, 3, 4, 3, 0, 0, 3, 0, 4, 4],
                917186205534257408237,
            ),
            (
                "日本",
                [3122422353, 485739126, 1569066241],
                [0, 2, 4, 1, 3, 0, 0, 3, 0, 1],
                945616354337143976710,
            ),
        ];
        for (seed, words, ranged, big) in cases {
            let mut r = PyRandom::from_str_seed(seed);
            let got: Vec<u32> = (0..3).map(|_| r.getrandbits(32) as u32).collect();
            assert_eq!(got, words, "getrandbits(32) for {seed:?}");
            let mut r = PyRandom::from_str_seed(seed);
            let got: Vec<i64> = (0..10).map(|_| r.randrange(0, 5)).collect();
            assert_eq!(got, ranged, "randrange(0, 5) for {seed:?}");
            // A bound of 1 still draws until it gets 0.
            assert_eq!([r.randrange(3, 4), r.randrange(3, 4)], [3, 3]);
            assert_eq!(r.getrandbits(70), *big, "getrandbits(70) for {seed:?}");
        }
        let mut empty = PyRandom::from_str_seed("");
        assert_eq!(empty.getrandbits(32), 4124137760);
        assert_eq!(empty.getrandbits(32), 1951988028);
    }

    #[test]
    fn key_words_are_minimal_and_little_endian() {
        assert_eq!(key_words(&[0, 0, 0, 0, 0, 1]), [1]);
        assert_eq!(key_words(&[1, 0, 0, 0, 2]), [2, 1]);
        assert_eq!(
            key_words(&[0x12, 0x34, 0x56, 0x78, 0x9a]),
            [0x3456789a, 0x12]
        );
        assert_eq!(key_words(&[0, 0]), [0]);
    }
}
