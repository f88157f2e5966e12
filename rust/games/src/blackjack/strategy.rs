//! Baseline players: textbook basic strategy for this engine's rules, and "always stand".
//!
//! Both are pure functions of a [`BlackjackState`]. On the player's turn they choose the action
//! for the hand in play (`H`) and the choice is always one of [`BlackjackState::legal_actions`].
//! They read only what the player may see: the cards of the hand in play, the dealer's up card,
//! and which actions are legal (which depends on the stack) — never the hole card or the shoe.
//!
//! - On the dealer's turn both return the dealer's only legal action
//!   ([`BlackjackState::dealer_action`]), so a loop may ask them for every action of a round.
//! - Once the game is over both fail with `Illegal action.` (reason `game_over`), as
//!   [`BlackjackState::apply`] does. No state makes them panic.
//!
//! [`always_stand`] stands on every hand.
//!
//! # The rules the chart is for
//!
//! The chart below is the total-dependent basic strategy for exactly the rules of
//! [this module's parent](super):
//!
//! - one 52-card deck, shuffled for every round;
//! - the dealer stands on all 17s (S17) and a dealer natural ends the round at the deal (as with
//!   a peek), so once the player acts the dealer is known to hold no natural, and only the
//!   original bet can be lost to one;
//! - double on any two cards, split hands included (double after split), one card drawn;
//! - split two cards of equal **rank** (a ten and a king are not a pair; two kings are), to at
//!   most four hands; split aces may be resplit, hit and doubled like any other hand;
//! - blackjack pays 3:2, and a split hand that makes 21 with two cards counts as a blackjack;
//! - no surrender, no insurance.
//!
//! # Source
//!
//! The chart is the textbook total-dependent basic strategy for one deck, dealer standing on
//! soft 17, no surrender — the single-deck chart of the standard references — with the usual
//! changes for double after split: split 2s, 3s and 6s against 2–7, 4s against 4–6, 7s against
//! 2–8. Where one deck differs from the familiar multi-deck chart: double hard 8 against 5–6,
//! hard 9 against 2–6 and hard 11 against everything; double soft 13–16 against 4–6 and soft
//! 17 against 2–6; soft 18 stands against an ace; soft 19 doubles against a 6; a pair of 7s
//! stands against a ten; 7s split against an 8.
//!
//! Every cell was checked against an expected-value computation for this engine's rules (a
//! separate program, not part of this crate): hit, stand and double exactly (one deck, the up
//! card and the hand's cards removed, the hole card averaged over the cards left that do not
//! give the dealer a natural); splits as two hands each starting from one pair card with both
//! pair cards removed, the other hand's cards ignored, resplits up to four hands, and a
//! two-card 21 paid 3:2. Totals are weighted over the two-card hands that make them. The
//! computation agrees with the chart in every cell but one, by less than its precision: a pair
//! of 3s against an 8 (splitting comes out 0.01 bet ahead of hitting); the chart's hit is kept.
//! The closest cells that agree (expected value per bet): soft 19 (A,8) against a 6, double
//! +0.4826 and stand +0.4824; soft 18 (A,7) against an ace, stand −0.101 and hit −0.108.
//!
//! Two of the rules above are unusual and were checked on purpose:
//!
//! - A split ten that draws an ace is paid 3:2, yet splitting tens stays wrong: against a 6,
//!   standing on 20 is worth about +0.70 bets and splitting about +0.62; against a 5, +0.67
//!   against +0.60.
//! - Split aces may be hit, doubled and resplit, so a pair of aces that may not be split any
//!   more (four hands, or not enough stack) is played as soft 12: double against 5–6 (hit when
//!   doubling is not legal), else hit. This row is not in the usual charts (which never reach
//!   it) and comes from the computation.
//!
//! # Reading the chart
//!
//! The hand in play is looked up in this order:
//!
//! 1. **A pair** (exactly two cards of equal rank): its row in the pairs part. `P` splits when
//!    `split` is legal; when it is not (four hands already, or not enough stack) the hand is read
//!    as a hard or soft total below (a pair of aces as soft 12). Any other cell is the play for
//!    the pair as it stands (so a pair of 7s stands against a ten, where hard 14 would hit).
//! 2. **A soft total** (an ace counted as 11): its row in the soft part, totals 12 to 20.
//! 3. **A hard total**: its row in the hard part; totals below 4 read the 4 row, totals of 17 and
//!    more the 17 row.
//!
//! Cells: `H` hit, `S` stand, `Dh` double (hit when doubling is not legal: more than two cards,
//! or not enough stack), `Ds` double (else stand), `P` split. The columns are the dealer's up
//! card; `T` is any ten-valued card (`T`, `J`, `Q`, `K`). Active hands never total 21 (a hand that
//! reaches 21 stands by itself), so no row is needed for it.
//!
//! ```text
//! Hand      2  3  4  5  6  7  8  9  T  A
//! Hard 4    H  H  H  H  H  H  H  H  H  H
//! Hard 5    H  H  H  H  H  H  H  H  H  H
//! Hard 6    H  H  H  H  H  H  H  H  H  H
//! Hard 7    H  H  H  H  H  H  H  H  H  H
//! Hard 8    H  H  H  Dh Dh H  H  H  H  H
//! Hard 9    Dh Dh Dh Dh Dh H  H  H  H  H
//! Hard 10   Dh Dh Dh Dh Dh Dh Dh Dh H  H
//! Hard 11   Dh Dh Dh Dh Dh Dh Dh Dh Dh Dh
//! Hard 12   H  H  S  S  S  H  H  H  H  H
//! Hard 13   S  S  S  S  S  H  H  H  H  H
//! Hard 14   S  S  S  S  S  H  H  H  H  H
//! Hard 15   S  S  S  S  S  H  H  H  H  H
//! Hard 16   S  S  S  S  S  H  H  H  H  H
//! Hard 17+  S  S  S  S  S  S  S  S  S  S
//! Soft 12   H  H  H  Dh Dh H  H  H  H  H
//! Soft 13   H  H  Dh Dh Dh H  H  H  H  H
//! Soft 14   H  H  Dh Dh Dh H  H  H  H  H
//! Soft 15   H  H  Dh Dh Dh H  H  H  H  H
//! Soft 16   H  H  Dh Dh Dh H  H  H  H  H
//! Soft 17   Dh Dh Dh Dh Dh H  H  H  H  H
//! Soft 18   S  Ds Ds Ds Ds S  S  H  H  S
//! Soft 19   S  S  S  S  Ds S  S  S  S  S
//! Soft 20   S  S  S  S  S  S  S  S  S  S
//! A,A       P  P  P  P  P  P  P  P  P  P
//! 2,2       P  P  P  P  P  P  H  H  H  H
//! 3,3       P  P  P  P  P  P  H  H  H  H
//! 4,4       H  H  P  P  P  H  H  H  H  H
//! 5,5       Dh Dh Dh Dh Dh Dh Dh Dh H  H
//! 6,6       P  P  P  P  P  P  H  H  H  H
//! 7,7       P  P  P  P  P  P  P  H  S  H
//! 8,8       P  P  P  P  P  P  P  P  P  P
//! 9,9       P  P  P  P  P  S  P  P  S  S
//! T,T       S  S  S  S  S  S  S  S  S  S
//! ```
//!
//! Multi-card hands read the same chart by their total (the textbook convention); no
//! composition-dependent exceptions (such as standing on a three-card 16 against a ten) are
//! made.
//!
//! # Measured
//!
//! Played through this engine at a bet of 10, each round dealt from a freshly shuffled deck
//! drawn from one seeded generator (the same decks for every player), net chips per 100 hands:
//!
//! | hands     | seed | basic strategy | always stand | random legal action |
//! |-----------|------|----------------|--------------|---------------------|
//! | 20 000    | 2024 | −1.2           | −168.5       | −402.5              |
//! | 1 000 000 | 2024 | +5.4           | −155.5       | −404.6              |
//! | 1 000 000 | 7    | +7.1           | −155.7       | −408.2              |
//!
//! So basic strategy holds a small edge over the house here (about +0.6% of the bet per hand,
//! ±0.1%: one deck, double after split, hitting and doubling split aces and split 21s paid
//! 3:2 all favour the player), always standing gives away about 15.5%, and random legal play
//! about 40%. The 20 000-hand row is the simulation test of this module.

use super::{Action, BlackjackState, Card, ILLEGAL_ACTION, Turn, hand_value};
use crate::MoveError;

/// The play a chart cell asks for, before legality is taken into account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Play {
    /// Hit.
    Hit,
    /// Stand.
    Stand,
    /// Double when legal, else hit.
    DoubleElseHit,
    /// Double when legal, else stand.
    DoubleElseStand,
    /// Split (only looked up as such when splitting is legal).
    Split,
}

impl Play {
    /// The chart's abbreviation.
    #[cfg(test)]
    fn code(self) -> &'static str {
        match self {
            Play::Hit => "H",
            Play::Stand => "S",
            Play::DoubleElseHit => "Dh",
            Play::DoubleElseStand => "Ds",
            Play::Split => "P",
        }
    }
}

const H: Play = Play::Hit;
const S: Play = Play::Stand;
const DH: Play = Play::DoubleElseHit;
const DS: Play = Play::DoubleElseStand;
const P: Play = Play::Split;

/// The chart's columns: the dealer's up card 2, 3, 4, 5, 6, 7, 8, 9, ten-valued, ace.
const COLUMNS: usize = 10;

/// The lowest hard total with a row; lower totals read it.
const HARD_MIN: u32 = 4;
/// The highest hard total with a row, standing for "this or more".
const HARD_MAX: u32 = 17;
/// The lowest soft total (ace, ace).
const SOFT_MIN: u32 = 12;
/// The highest soft total of an active hand.
const SOFT_MAX: u32 = 20;

/// Hard totals 4 to 17 (17: seventeen or more), by dealer up card 2 … 9, T, A.
#[rustfmt::skip]
const HARD: [[Play; COLUMNS]; (HARD_MAX - HARD_MIN + 1) as usize] = [
    //2  3   4   5   6   7   8   9   T   A
    [H,  H,  H,  H,  H,  H,  H,  H,  H,  H], // 4
    [H,  H,  H,  H,  H,  H,  H,  H,  H,  H], // 5
    [H,  H,  H,  H,  H,  H,  H,  H,  H,  H], // 6
    [H,  H,  H,  H,  H,  H,  H,  H,  H,  H], // 7
    [H,  H,  H,  DH, DH, H,  H,  H,  H,  H], // 8
    [DH, DH, DH, DH, DH, H,  H,  H,  H,  H], // 9
    [DH, DH, DH, DH, DH, DH, DH, DH, H,  H], // 10
    [DH, DH, DH, DH, DH, DH, DH, DH, DH, DH], // 11
    [H,  H,  S,  S,  S,  H,  H,  H,  H,  H], // 12
    [S,  S,  S,  S,  S,  H,  H,  H,  H,  H], // 13
    [S,  S,  S,  S,  S,  H,  H,  H,  H,  H], // 14
    [S,  S,  S,  S,  S,  H,  H,  H,  H,  H], // 15
    [S,  S,  S,  S,  S,  H,  H,  H,  H,  H], // 16
    [S,  S,  S,  S,  S,  S,  S,  S,  S,  S], // 17+
];

/// Soft totals 12 (ace, ace) to 20, by dealer up card 2 … 9, T, A.
#[rustfmt::skip]
const SOFT: [[Play; COLUMNS]; (SOFT_MAX - SOFT_MIN + 1) as usize] = [
    //2  3   4   5   6   7   8   9   T   A
    [H,  H,  H,  DH, DH, H,  H,  H,  H,  H], // 12 (A,A)
    [H,  H,  DH, DH, DH, H,  H,  H,  H,  H], // 13
    [H,  H,  DH, DH, DH, H,  H,  H,  H,  H], // 14
    [H,  H,  DH, DH, DH, H,  H,  H,  H,  H], // 15
    [H,  H,  DH, DH, DH, H,  H,  H,  H,  H], // 16
    [DH, DH, DH, DH, DH, H,  H,  H,  H,  H], // 17
    [S,  DS, DS, DS, DS, S,  S,  H,  H,  S], // 18
    [S,  S,  S,  S,  DS, S,  S,  S,  S,  S], // 19
    [S,  S,  S,  S,  S,  S,  S,  S,  S,  S], // 20
];

/// Pairs A,A, 2,2 … 9,9, T,T (any ten-valued rank with itself), by dealer up card 2 … 9, T, A.
#[rustfmt::skip]
const PAIRS: [[Play; COLUMNS]; 10] = [
    //2  3   4   5   6   7   8   9   T   A
    [P,  P,  P,  P,  P,  P,  P,  P,  P,  P], // A,A
    [P,  P,  P,  P,  P,  P,  H,  H,  H,  H], // 2,2
    [P,  P,  P,  P,  P,  P,  H,  H,  H,  H], // 3,3
    [H,  H,  P,  P,  P,  H,  H,  H,  H,  H], // 4,4
    [DH, DH, DH, DH, DH, DH, DH, DH, H,  H], // 5,5
    [P,  P,  P,  P,  P,  P,  H,  H,  H,  H], // 6,6
    [P,  P,  P,  P,  P,  P,  P,  H,  S,  H], // 7,7
    [P,  P,  P,  P,  P,  P,  P,  P,  P,  P], // 8,8
    [P,  P,  P,  P,  P,  S,  P,  P,  S,  S], // 9,9
    [S,  S,  S,  S,  S,  S,  S,  S,  S,  S], // T,T
];

/// The chart column of a dealer up card: 2 … 9 → 0 … 7, ten-valued → 8, ace → 9.
fn column(up: Card) -> usize {
    match up.rank.value() {
        1 => COLUMNS - 1,
        v => (v as usize).saturating_sub(2).min(COLUMNS - 2),
    }
}

/// The chart's play for `cards` in column `col`; `can_split` tells whether `split` is legal.
fn chart_play(cards: &[Card], col: usize, can_split: bool) -> Play {
    if let [a, b] = cards
        && a.rank == b.rank
    {
        let row = (a.rank.value() as usize).saturating_sub(1);
        let play = PAIRS[row.min(PAIRS.len() - 1)][col];
        if play != Play::Split || can_split {
            return play;
        }
    }
    let (total, soft) = hand_value(cards);
    if soft {
        SOFT[(total.clamp(SOFT_MIN, SOFT_MAX) - SOFT_MIN) as usize][col]
    } else {
        HARD[(total.clamp(HARD_MIN, HARD_MAX) - HARD_MIN) as usize][col]
    }
}

/// The action for `play` given the legal actions (`hit` and `stand` are always legal on the
/// player's turn).
fn resolve(play: Play, legal: &[Action]) -> Action {
    let or_double = |otherwise| {
        if legal.contains(&Action::Double) {
            Action::Double
        } else {
            otherwise
        }
    };
    match play {
        Play::Hit => Action::Hit,
        Play::Stand => Action::Stand,
        Play::DoubleElseHit => or_double(Action::Hit),
        Play::DoubleElseStand => or_double(Action::Stand),
        Play::Split => Action::Split,
    }
}

/// `Err(game_over)` once the game is over, the dealer's only action on its turn, `None` on the
/// player's turn.
fn forced(state: &BlackjackState) -> Result<Option<Action>, MoveError> {
    if state.is_over() {
        return Err(MoveError::new("game_over", ILLEGAL_ACTION));
    }
    Ok(match state.turn() {
        Turn::Player => None,
        Turn::Dealer => Some(state.dealer_action().unwrap_or(Action::Stand)),
    })
}

/// The basic-strategy action for `state` (see the [module docs](self) for the chart).
///
/// On the player's turn: the chart's play for the hand in play against the dealer's up card,
/// with `double` falling back to `hit` or `stand` and `split` to the hand's total when they are
/// not legal; always one of [`BlackjackState::legal_actions`]. On the dealer's turn: the
/// dealer's only action.
///
/// # Errors
///
/// `Illegal action.` with reason `game_over` once the game is over.
pub fn basic_strategy(state: &BlackjackState) -> Result<Action, MoveError> {
    if let Some(action) = forced(state)? {
        return Ok(action);
    }
    let Some(hand) = state.hands().get(state.hand_index()) else {
        return Err(MoveError::new("not_allowed", ILLEGAL_ACTION));
    };
    let legal = state.legal_actions();
    let play = chart_play(
        &hand.cards,
        column(state.dealer_up_card()),
        legal.contains(&Action::Split),
    );
    Ok(resolve(play, &legal))
}

/// The always-stand action for `state`: `stand` on the player's turn, the dealer's only action
/// on the dealer's turn.
///
/// # Errors
///
/// `Illegal action.` with reason `game_over` once the game is over.
pub fn always_stand(state: &BlackjackState) -> Result<Action, MoveError> {
    Ok(forced(state)?.unwrap_or(Action::Stand))
}

#[cfg(test)]
mod tests;
