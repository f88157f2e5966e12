//! Slot machine: three weighted reels, only three of a kind pays.
//!
//! # State grammar
//!
//! ```text
//! R:<reels>|BK:<stack>|B:<bet>|P:<payout>|ST:<status>|LA:<last_action>
//! ```
//!
//! - `R`: `-` before the first spin, else the three symbols of the last spin, comma separated,
//!   left to right (`R:7,7,7`, `R:BAR,CHERRY,LEMON`). Symbols are `7`, `BAR`, `BELL`, `CHERRY`,
//!   `LEMON`, `ORANGE` (upper case, exactly as written).
//! - `BK`: the stack after the last spin; `B`: the bet per spin (≥ 1); both whole numbers without
//!   sign or leading zeros, at most [`MAX_CHIPS`] (2^53 − 1, exact in JSON).
//! - `P`: the payout of the last spin (`0` before the first spin); it must equal what the reels
//!   pay at bet `B`.
//! - `ST`: `in_progress` or `game_over`. The game is over exactly when the stack no longer covers
//!   the bet (`BK < B`); a state whose `ST` disagrees with that is refused as inconsistent.
//! - `LA`: `-` before the first spin, `spin` after (so `R:-` ⇔ `LA:-`).
//!
//! # Rules
//!
//! Each reel independently shows a symbol with weight (out of 20): `7`×1, `BAR`×2, `BELL`×3,
//! `CHERRY`×4, `LEMON`×5, `ORANGE`×5. Only three of a kind pays: 10, 8, 6, 4, 3, 2 × bet
//! respectively. A spin costs the bet: new stack = stack − bet + payout (three 7s at bet 10 from
//! 1000 → 1090). Spinning when the stack is below the bet fails with `Insufficient stack.`
//! (reason `insufficient_stack`); after a spin that leaves the stack below the bet the state says
//! `ST:game_over`. A stack that would exceed [`MAX_CHIPS`] is capped there.
//!
//! Reels are drawn with [`crate::dice::uniform_below`] over the generator's `u32` stream, one
//! draw per reel, left to right: the same seed gives the same reels on every platform.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use crate::dice::uniform_below;
use crate::{MoveError, ParseError};

/// The largest stack, bet or payout a state may hold: 2^53 − 1 (exact as a JSON number).
pub const MAX_CHIPS: u64 = 9_007_199_254_740_991;

/// The error text of a spin the stack cannot pay for.
pub const INSUFFICIENT_STACK: &str = "Insufficient stack.";

/// The error text of a `new_slot_game` bet outside `1..=stack`.
pub const INVALID_BET: &str = "Bet must be between 1 and the stack.";

/// Sum of all symbol weights.
pub const TOTAL_WEIGHT: u32 = 20;

/// A reel symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Symbol {
    /// `7`: weight 1, pays 10× bet.
    Seven,
    /// `BAR`: weight 2, pays 8× bet.
    Bar,
    /// `BELL`: weight 3, pays 6× bet.
    Bell,
    /// `CHERRY`: weight 4, pays 4× bet.
    Cherry,
    /// `LEMON`: weight 5, pays 3× bet.
    Lemon,
    /// `ORANGE`: weight 5, pays 2× bet.
    Orange,
}

impl Symbol {
    /// Every symbol, rarest first (the order of the weight table).
    pub const ALL: [Symbol; 6] = [
        Symbol::Seven,
        Symbol::Bar,
        Symbol::Bell,
        Symbol::Cherry,
        Symbol::Lemon,
        Symbol::Orange,
    ];

    /// The symbol's name in states and tool outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Symbol::Seven => "7",
            Symbol::Bar => "BAR",
            Symbol::Bell => "BELL",
            Symbol::Cherry => "CHERRY",
            Symbol::Lemon => "LEMON",
            Symbol::Orange => "ORANGE",
        }
    }

    /// The symbol's weight out of [`TOTAL_WEIGHT`].
    pub fn weight(self) -> u32 {
        match self {
            Symbol::Seven => 1,
            Symbol::Bar => 2,
            Symbol::Bell => 3,
            Symbol::Cherry => 4,
            Symbol::Lemon | Symbol::Orange => 5,
        }
    }

    /// The multiple of the bet that three of this symbol pay.
    pub fn multiplier(self) -> u64 {
        match self {
            Symbol::Seven => 10,
            Symbol::Bar => 8,
            Symbol::Bell => 6,
            Symbol::Cherry => 4,
            Symbol::Lemon => 3,
            Symbol::Orange => 2,
        }
    }

    /// The symbol for a draw `0..TOTAL_WEIGHT` (cumulative weights in [`Symbol::ALL`] order).
    pub fn from_weight_index(mut index: u32) -> Symbol {
        for symbol in Symbol::ALL {
            if index < symbol.weight() {
                return symbol;
            }
            index -= symbol.weight();
        }
        Symbol::Orange
    }

    /// One reel's symbol drawn from `rng`.
    pub fn draw<R: Rng + ?Sized>(rng: &mut R) -> Symbol {
        Symbol::from_weight_index(uniform_below(rng, TOTAL_WEIGHT))
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Symbol {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Symbol::ALL
            .into_iter()
            .find(|sym| sym.as_str() == s)
            .ok_or_else(|| {
                ParseError::new(format!(
                    "unknown symbol {s:?} (expected 7, BAR, BELL, CHERRY, LEMON or ORANGE)"
                ))
            })
    }
}

/// Three reels drawn from `rng`, left to right.
pub fn spin_reels<R: Rng + ?Sized>(rng: &mut R) -> [Symbol; 3] {
    [Symbol::draw(rng), Symbol::draw(rng), Symbol::draw(rng)]
}

/// What `reels` pay at `bet`: `multiplier × bet` for three of a kind, else 0.
pub fn payout_for(reels: &[Symbol; 3], bet: u64) -> u64 {
    if reels[0] == reels[1] && reels[1] == reels[2] {
        reels[0].multiplier().saturating_mul(bet)
    } else {
        0
    }
}

/// Whether the machine can still be played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotStatus {
    /// The stack covers the bet.
    InProgress,
    /// The stack is below the bet.
    GameOver,
}

impl SlotStatus {
    /// `in_progress` or `game_over`.
    pub fn as_str(self) -> &'static str {
        match self {
            SlotStatus::InProgress => "in_progress",
            SlotStatus::GameOver => "game_over",
        }
    }
}

/// A slot machine session: the last spin, the stack and the bet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotState {
    reels: Option<[Symbol; 3]>,
    stack: u64,
    bet: u64,
    payout: u64,
}

impl SlotState {
    /// A fresh machine (no spin yet).
    ///
    /// # Errors
    ///
    /// [`INVALID_BET`] (reason `invalid_bet`) unless `1 ≤ bet ≤ stack ≤ MAX_CHIPS`.
    pub fn new(stack: u64, bet: u64) -> Result<Self, MoveError> {
        if bet == 0 || bet > stack || stack > MAX_CHIPS {
            return Err(MoveError::new("invalid_bet", INVALID_BET));
        }
        Ok(SlotState {
            reels: None,
            stack,
            bet,
            payout: 0,
        })
    }

    /// The reels of the last spin, if any.
    pub fn reels(&self) -> Option<[Symbol; 3]> {
        self.reels
    }

    /// The current stack.
    pub fn stack(&self) -> u64 {
        self.stack
    }

    /// The bet per spin.
    pub fn bet(&self) -> u64 {
        self.bet
    }

    /// The payout of the last spin (0 before the first).
    pub fn payout(&self) -> u64 {
        self.payout
    }

    /// `GameOver` when the stack no longer covers the bet.
    pub fn status(&self) -> SlotStatus {
        if self.stack < self.bet {
            SlotStatus::GameOver
        } else {
            SlotStatus::InProgress
        }
    }

    /// `spin` after a spin, `-` before.
    pub fn last_action(&self) -> &'static str {
        if self.reels.is_some() { "spin" } else { "-" }
    }

    /// Spins with reels drawn from `rng`.
    ///
    /// # Errors
    ///
    /// [`INSUFFICIENT_STACK`] (reason `insufficient_stack`) when the stack is below the bet.
    pub fn spin<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<Self, MoveError> {
        self.check_can_spin()?;
        self.with_reels(spin_reels(rng))
    }

    /// The state after a spin that showed `reels` (the deterministic half of [`SlotState::spin`]).
    ///
    /// # Errors
    ///
    /// As [`SlotState::spin`].
    pub fn with_reels(&self, reels: [Symbol; 3]) -> Result<Self, MoveError> {
        self.check_can_spin()?;
        let payout = payout_for(&reels, self.bet);
        let stack = (self.stack - self.bet)
            .saturating_add(payout)
            .min(MAX_CHIPS);
        Ok(SlotState {
            reels: Some(reels),
            stack,
            bet: self.bet,
            payout,
        })
    }

    fn check_can_spin(&self) -> Result<(), MoveError> {
        if self.stack < self.bet {
            Err(MoveError::new("insufficient_stack", INSUFFICIENT_STACK))
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for SlotState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reels {
            Some([a, b, c]) => write!(f, "R:{a},{b},{c}")?,
            None => f.write_str("R:-")?,
        }
        write!(
            f,
            "|BK:{}|B:{}|P:{}|ST:{}|LA:{}",
            self.stack,
            self.bet,
            self.payout,
            self.status().as_str(),
            self.last_action()
        )
    }
}

fn invalid(detail: impl fmt::Display) -> ParseError {
    ParseError::new(format!("Invalid state: {detail}"))
}

/// Parses a whole number without sign or leading zeros, at most [`MAX_CHIPS`].
pub(crate) fn parse_chips(key: &str, s: &str) -> Result<u64, ParseError> {
    let ok =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    let n = if ok { s.parse::<u64>().ok() } else { None };
    match n {
        Some(n) if n <= MAX_CHIPS => Ok(n),
        _ => Err(invalid(format_args!(
            "{key} must be a whole number from 0 to {MAX_CHIPS}, found {s:?}"
        ))),
    }
}

/// Splits `s` at `|` and checks that the fields carry `keys` in order; returns the values.
pub(crate) fn fields<'a, const N: usize>(
    s: &'a str,
    keys: [&str; N],
) -> Result<[&'a str; N], ParseError> {
    let parts: Vec<&str> = s.split('|').collect();
    if parts.len() != N {
        return Err(invalid(format_args!(
            "expected {N} fields separated by '|' ({}), found {}",
            keys.join(", "),
            parts.len()
        )));
    }
    let mut out = [""; N];
    for (i, (part, key)) in parts.iter().zip(keys).enumerate() {
        match part.split_once(':') {
            Some((k, v)) if k == key => out[i] = v,
            _ => {
                return Err(invalid(format_args!(
                    "field {} must be {key}:<value>, found {part:?}",
                    i + 1
                )));
            }
        }
    }
    Ok(out)
}

impl FromStr for SlotState {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let [r, bk, b, p, st, la] = fields(s, ["R", "BK", "B", "P", "ST", "LA"])?;
        let reels = if r == "-" {
            None
        } else {
            let syms: Vec<&str> = r.split(',').collect();
            if syms.len() != 3 {
                return Err(invalid(format_args!(
                    "R must be '-' or three symbols separated by commas, found {r:?}"
                )));
            }
            let mut reels = [Symbol::Seven; 3];
            for (slot, sym) in reels.iter_mut().zip(syms) {
                *slot = sym.parse().map_err(|e: ParseError| invalid(e))?;
            }
            Some(reels)
        };
        let stack = parse_chips("BK", bk)?;
        let bet = parse_chips("B", b)?;
        let payout = parse_chips("P", p)?;
        if bet == 0 {
            return Err(invalid("B must be at least 1"));
        }
        let status = match st {
            "in_progress" => SlotStatus::InProgress,
            "game_over" => SlotStatus::GameOver,
            _ => {
                return Err(invalid(format_args!(
                    "ST must be in_progress or game_over, found {st:?}"
                )));
            }
        };
        let spun = match la {
            "-" => false,
            "spin" => true,
            _ => return Err(invalid(format_args!("LA must be - or spin, found {la:?}"))),
        };
        if spun != reels.is_some() {
            return Err(invalid("LA:spin goes with three reels, LA:- with R:-"));
        }
        let expected = reels.map_or(0, |r| payout_for(&r, bet));
        if payout != expected {
            return Err(invalid(format_args!(
                "P:{payout} does not match the reels (they pay {expected} at bet {bet})"
            )));
        }
        let state = SlotState {
            reels,
            stack,
            bet,
            payout,
        };
        if status == SlotStatus::GameOver && state.status() != SlotStatus::GameOver {
            return Err(invalid("ST:game_over but the stack covers the bet"));
        }
        if status != state.status() {
            return Err(invalid(if status == SlotStatus::GameOver {
                "ST:game_over but the stack covers the bet"
            } else {
                "ST:in_progress but the stack is below the bet (that is ST:game_over)"
            }));
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests;
