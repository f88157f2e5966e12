//! Blackjack: one player (up to four split hands) against the dealer, one 52-card deck per game.
//!
//! # State grammar
//!
//! ```text
//! S:<shoe>|P:<hand1;hand2>|D:<dealer>|BK:<stack>|B:<bet>|T:<turn>|H:<hand_index>|ST:<status>|LA:<last_action>|R:<results>
//! ```
//!
//! Fields always appear in this order. Cards are rank `A23456789TJQK` + suit `SHDC` (`AS`, `TD`).
//!
//! - `S`: the cards left in the shoe, comma separated; the next card drawn is the **first** one.
//!   An empty shoe is the empty string (`S:|P:…`).
//! - `P`: one to four player hands separated by `;`, each `cards@state@doubled@bet`:
//!   - `cards`: at least two cards, comma separated, in the order received;
//!   - `state`: `active` (still to be played, or being played), `stood` (finished at 21 or less:
//!     by `stand`, a hit to exactly 21, a double that did not bust, or closed by a dealer natural
//!     at the deal), `bust` (over 21), `blackjack` (a two-card 21, split hands included; a
//!     two-card 21 is always `blackjack`);
//!   - `doubled`: `1` when the hand was doubled (it then holds exactly three cards and is `stood`
//!     or `bust`), else `0`;
//!   - `bet`: the chips riding on the hand, **including** the double: `B` or, doubled, `2×B`.
//! - `D`: the dealer's cards in the order received, comma separated. The first is the up card,
//!   the second the hole card. The hole card is hidden while `T:player` and the game is in
//!   progress ([`BlackjackState::hole_card_hidden`]); the state string holds it regardless, so
//!   only the derived views ([`BlackjackState::dealer_up_card`]) must be shown to the player.
//! - `BK`: the stack. It changes only at settlement (bets are not deducted at the deal), so
//!   during play it is the stack before the round and after `ST:game_over` the settled stack.
//! - `B`: the base bet per hand (≥ 1). Whole numbers in `BK`, `B` and hand bets have no sign or
//!   leading zeros and are at most [`MAX_CHIPS`].
//! - `T`: `player` or `dealer`: who acts next. At `ST:game_over` it is `dealer` (the dealer's
//!   reveal closes every game); `player` is accepted there too and kept.
//! - `H`: the index (0-based) of the hand being played. When the turn passes to the dealer and
//!   at the end it stays at the last hand the player acted on (0 for a single hand).
//! - `ST`: `in_progress` or `game_over`.
//! - `LA`: `deal`, `hit`, `stand`, `double` or `split` (dealer moves are `hit`/`stand` too; `T`
//!   tells whose they were).
//! - `R`: `-` while in progress, else one result per hand, comma separated, in hand order:
//!   `win`, `lose`, `push`, `bust` or `blackjack`. The field may be omitted while in progress
//!   (the document calls it optional); it is always written.
//!
//! The shoe plus the cards in play need not total 52 (hand-made positions are allowed), but no
//! card may appear twice. States that the rules cannot reach are refused with
//! `Invalid state: <detail>` (for example an `active` hand after `H`, a bust hand marked `stood`,
//! a dealer natural in a game in progress, or bets above the stack).
//!
//! # Rules
//!
//! - Deal: player, dealer, player, dealer from the front of the shoe. A natural (two-card 21)
//!   on either side ends the game at once: both natural → `push`; player only → `blackjack`;
//!   dealer only → `lose` (the player's hand is closed as `stood`).
//! - Player actions, listed in this order: `hit`, `stand`, then `double` (any two-card hand,
//!   split hands included) and `split` (two cards of equal **rank**, at most four hands) when
//!   allowed; both need `stack ≥ total bets + this hand's bet`. Split aces play like any hand.
//!   A split moves the second card to a new hand right after the current one and deals one card
//!   to each (current hand first); a split hand that makes 21 with two cards is a `blackjack`.
//!   A hit to exactly 21 stands automatically; a double draws one card and ends the hand.
//! - When no player hand is `active` the turn passes to the dealer — unless no hand is `stood`
//!   (all are `bust` or `blackjack`): then the dealer's play cannot change anything and the game
//!   settles at once.
//! - Dealer: its only legal action is `hit` below 17, else `stand` (it stands on all 17s, soft
//!   ones included). A dealer bust or stand settles the game.
//! - Settlement (the only time `BK` changes): `win` +bet, `blackjack` +⌊3×bet/2⌋ (odd bets round
//!   down: a blackjack on a bet of 5 pays 7), `lose`/`bust` −bet, `push` 0, where "bet" is the
//!   hand's bet (doubled hands count double). A blackjack beats any dealer hand except a dealer
//!   natural. The stack is capped to `0..=MAX_CHIPS`.
//! - Drawing from an empty shoe fails with `Shoe is empty.` (reason `shoe_empty`); a split needs
//!   two cards. With one 52-card deck a real game can never run out; only hand-made states can.
//! - Other refusals are `Illegal action.` with reason `game_over`, `not_your_turn` (`double` or
//!   `split` on the dealer's turn), `not_allowed` (the rules forbid it here) or `invalid_action`
//!   (an unknown action name).
//!
//! # Baseline players
//!
//! [`strategy`] holds textbook basic strategy for exactly these rules, and always stand: the
//! baselines other players are scored against.

mod card;
mod parse;
pub mod strategy;

use std::fmt;
use std::str::FromStr;

use rand::Rng;

pub use card::{Card, Rank, Suit, hand_value, is_natural, join_cards, parse_cards};

use crate::{MoveError, ParseError};

/// The largest stack or bet a state may hold: 2^53 − 1 (exact as a JSON number).
pub const MAX_CHIPS: u64 = crate::slot::MAX_CHIPS;

/// The most hands a player may hold after splits.
pub const MAX_HANDS: usize = 4;

/// The default stack of a new game.
pub const DEFAULT_STACK: u64 = 1000;

/// The default bet of a new game (or the stack, if smaller).
pub const DEFAULT_BET: u64 = 10;

/// The text of every refused action except an empty shoe.
pub const ILLEGAL_ACTION: &str = "Illegal action.";

/// The text of a draw from an empty shoe.
pub const SHOE_EMPTY: &str = "Shoe is empty.";

/// The text of a new game whose bet is not within `1..=stack`.
pub const INVALID_BET: &str = "Bet must be between 1 and the stack.";

/// A player or dealer action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Take a card.
    Hit,
    /// End the hand (or, for the dealer, settle).
    Stand,
    /// Double the bet, take exactly one card, end the hand.
    Double,
    /// Split a pair into two hands.
    Split,
}

impl Action {
    /// Every action, in listing order.
    pub const ALL: [Action; 4] = [Action::Hit, Action::Stand, Action::Double, Action::Split];

    /// `hit`, `stand`, `double` or `split`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Hit => "hit",
            Action::Stand => "stand",
            Action::Double => "double",
            Action::Split => "split",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = MoveError;

    /// Parses an action name (trimmed, case-insensitive); unknown names are `Illegal action.`
    /// with reason `invalid_action`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        Action::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| MoveError::new("invalid_action", ILLEGAL_ACTION))
    }
}

/// The `LA` field: the deal or the last action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LastAction {
    /// The cards were just dealt.
    Deal,
    /// The last action taken (by whoever `T` says acted; see [`BlackjackState::turn`]).
    Action(Action),
}

impl LastAction {
    /// `deal`, `hit`, `stand`, `double` or `split`.
    pub fn as_str(self) -> &'static str {
        match self {
            LastAction::Deal => "deal",
            LastAction::Action(a) => a.as_str(),
        }
    }
}

/// Who acts next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Turn {
    /// The player plays hand `H`.
    Player,
    /// The dealer draws to 17.
    Dealer,
}

impl Turn {
    /// `player` or `dealer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Turn::Player => "player",
            Turn::Dealer => "dealer",
        }
    }
}

/// Whether the round is still being played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Still being played.
    InProgress,
    /// Settled.
    GameOver,
}

impl Status {
    /// `in_progress` or `game_over`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::InProgress => "in_progress",
            Status::GameOver => "game_over",
        }
    }
}

/// The state of one player hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandState {
    /// Still to be played (or being played).
    Active,
    /// Finished at 21 or less.
    Stood,
    /// Over 21.
    Bust,
    /// A two-card 21.
    Blackjack,
}

impl HandState {
    /// `active`, `stood`, `bust` or `blackjack`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandState::Active => "active",
            HandState::Stood => "stood",
            HandState::Bust => "bust",
            HandState::Blackjack => "blackjack",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [
            HandState::Active,
            HandState::Stood,
            HandState::Bust,
            HandState::Blackjack,
        ]
        .into_iter()
        .find(|h| h.as_str() == s)
    }
}

/// The outcome of one hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandResult {
    /// Beat the dealer: +bet.
    Win,
    /// Lost to the dealer: −bet.
    Lose,
    /// Tie: 0.
    Push,
    /// Went over 21: −bet.
    Bust,
    /// Two-card 21 against a dealer without a natural: +⌊3×bet/2⌋.
    Blackjack,
}

impl HandResult {
    /// `win`, `lose`, `push`, `bust` or `blackjack`.
    pub fn as_str(self) -> &'static str {
        match self {
            HandResult::Win => "win",
            HandResult::Lose => "lose",
            HandResult::Push => "push",
            HandResult::Bust => "bust",
            HandResult::Blackjack => "blackjack",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [
            HandResult::Win,
            HandResult::Lose,
            HandResult::Push,
            HandResult::Bust,
            HandResult::Blackjack,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// The change to the stack for a hand with this result and `bet` (the hand's whole bet).
    pub fn stack_delta(self, bet: u64) -> i128 {
        let bet = i128::from(bet);
        match self {
            HandResult::Win => bet,
            HandResult::Blackjack => bet * 3 / 2,
            HandResult::Push => 0,
            HandResult::Lose | HandResult::Bust => -bet,
        }
    }
}

/// Who came out ahead over all hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Winner {
    /// The stack grew.
    Player,
    /// The stack shrank.
    Dealer,
    /// Net zero.
    Draw,
}

impl Winner {
    /// `player`, `dealer` or `draw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Winner::Player => "player",
            Winner::Dealer => "dealer",
            Winner::Draw => "draw",
        }
    }
}

/// One player hand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Hand {
    /// The cards, in the order received.
    pub cards: Vec<Card>,
    /// Where the hand stands.
    pub state: HandState,
    /// True when the hand was doubled.
    pub doubled: bool,
    /// The chips riding on the hand (doubled hands: twice the base bet).
    pub bet: u64,
}

impl Hand {
    /// The best total and whether it is soft.
    pub fn value(&self) -> (u32, bool) {
        hand_value(&self.cards)
    }

    /// The best total.
    pub fn total(&self) -> u32 {
        self.value().0
    }

    fn after_cards(cards: Vec<Card>, bet: u64) -> Hand {
        let state = if is_natural(&cards) {
            HandState::Blackjack
        } else {
            HandState::Active
        };
        Hand {
            cards,
            state,
            doubled: false,
            bet,
        }
    }
}

impl fmt::Display for Hand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}@{}@{}@{}",
            join_cards(&self.cards),
            self.state.as_str(),
            u8::from(self.doubled),
            self.bet
        )
    }
}

/// A blackjack round: shoe, hands, dealer, stack, whose turn, results.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BlackjackState {
    shoe: Vec<Card>,
    hands: Vec<Hand>,
    dealer: Vec<Card>,
    stack: u64,
    bet: u64,
    turn: Turn,
    hand_index: usize,
    status: Status,
    last_action: LastAction,
    results: Option<Vec<HandResult>>,
}

fn illegal(reason: &'static str) -> MoveError {
    MoveError::new(reason, ILLEGAL_ACTION)
}

fn shoe_empty() -> MoveError {
    MoveError::new("shoe_empty", SHOE_EMPTY)
}

fn invalid(detail: impl fmt::Display) -> ParseError {
    ParseError::new(format!("Invalid state: {detail}"))
}

impl BlackjackState {
    /// A new game from a freshly shuffled deck drawn from `rng`.
    ///
    /// # Errors
    ///
    /// [`INVALID_BET`] (reason `invalid_bet`) unless `1 ≤ bet ≤ stack ≤ MAX_CHIPS`.
    pub fn new_game<R: Rng + ?Sized>(stack: u64, bet: u64, rng: &mut R) -> Result<Self, MoveError> {
        check_bet(stack, bet)?;
        Self::deal(stack, bet, Card::shuffled_deck(rng))
    }

    /// A new game dealt from `shoe` in the given order (the first card goes to the player).
    /// Useful for reproducing a position; the shoe may be any set of distinct cards.
    ///
    /// # Errors
    ///
    /// [`INVALID_BET`] (`invalid_bet`) as [`BlackjackState::new_game`]; [`SHOE_EMPTY`]
    /// (`shoe_empty`) when the shoe holds fewer than four cards; [`ILLEGAL_ACTION`]
    /// (`invalid_shoe`) when a card repeats.
    pub fn deal(stack: u64, bet: u64, shoe: Vec<Card>) -> Result<Self, MoveError> {
        check_bet(stack, bet)?;
        if shoe.len() < 4 {
            return Err(shoe_empty());
        }
        let mut seen = [false; 52];
        for c in &shoe {
            if std::mem::replace(&mut seen[c.index()], true) {
                return Err(MoveError::new("invalid_shoe", ILLEGAL_ACTION));
            }
        }
        let player = vec![shoe[0], shoe[2]];
        let dealer = vec![shoe[1], shoe[3]];
        let mut state = BlackjackState {
            shoe: shoe[4..].to_vec(),
            hands: vec![Hand::after_cards(player, bet)],
            dealer,
            stack,
            bet,
            turn: Turn::Player,
            hand_index: 0,
            status: Status::InProgress,
            last_action: LastAction::Deal,
            results: None,
        };
        let player_natural = state.hands[0].state == HandState::Blackjack;
        if player_natural || is_natural(&state.dealer) {
            if !player_natural {
                state.hands[0].state = HandState::Stood;
            }
            state.settle();
        }
        Ok(state)
    }

    /// The cards left in the shoe, next card first.
    pub fn shoe(&self) -> &[Card] {
        &self.shoe
    }

    /// The player's hands.
    pub fn hands(&self) -> &[Hand] {
        &self.hands
    }

    /// Every dealer card, hole card included. Show [`BlackjackState::visible_dealer_cards`] to
    /// the player instead.
    pub fn dealer_cards(&self) -> &[Card] {
        &self.dealer
    }

    /// The dealer's cards the player may see: only the up card while the hole card is hidden.
    pub fn visible_dealer_cards(&self) -> &[Card] {
        if self.hole_card_hidden() {
            &self.dealer[..1]
        } else {
            &self.dealer
        }
    }

    /// The dealer's up card (first card).
    pub fn dealer_up_card(&self) -> Card {
        self.dealer[0]
    }

    /// The dealer's total, only once the hole card is revealed.
    pub fn dealer_total(&self) -> Option<u32> {
        (!self.hole_card_hidden()).then(|| hand_value(&self.dealer).0)
    }

    /// True while the player is acting and the game is in progress.
    pub fn hole_card_hidden(&self) -> bool {
        self.status == Status::InProgress && self.turn == Turn::Player
    }

    /// The stack (settled once the game is over).
    pub fn stack(&self) -> u64 {
        self.stack
    }

    /// The base bet per hand.
    pub fn bet(&self) -> u64 {
        self.bet
    }

    /// The sum of all hands' bets.
    pub fn total_bets(&self) -> u64 {
        self.hands.iter().map(|h| h.bet).sum()
    }

    /// Who acts next.
    pub fn turn(&self) -> Turn {
        self.turn
    }

    /// The index of the hand being played (see the module docs for the dealer's turn).
    pub fn hand_index(&self) -> usize {
        self.hand_index
    }

    /// In progress or over.
    pub fn status(&self) -> Status {
        self.status
    }

    /// True once settled.
    pub fn is_over(&self) -> bool {
        self.status == Status::GameOver
    }

    /// The `LA` field.
    pub fn last_action(&self) -> LastAction {
        self.last_action
    }

    /// Per-hand results once the game is over.
    pub fn results(&self) -> Option<&[HandResult]> {
        self.results.as_deref()
    }

    /// The stack change of the settled round (sum over hands), once the game is over.
    pub fn net(&self) -> Option<i128> {
        let results = self.results.as_ref()?;
        Some(
            results
                .iter()
                .zip(&self.hands)
                .map(|(r, h)| r.stack_delta(h.bet))
                .sum(),
        )
    }

    /// `player` when the round gained chips, `dealer` when it lost, `draw` at net zero.
    pub fn winner(&self) -> Option<Winner> {
        self.net().map(|n| match n.signum() {
            1 => Winner::Player,
            -1 => Winner::Dealer,
            _ => Winner::Draw,
        })
    }

    fn can_raise(&self, hand: &Hand) -> bool {
        self.stack >= self.total_bets().saturating_add(hand.bet)
    }

    fn can_double(&self, hand: &Hand) -> bool {
        hand.cards.len() == 2 && self.can_raise(hand)
    }

    fn can_split(&self, hand: &Hand) -> bool {
        hand.cards.len() == 2
            && hand.cards[0].rank == hand.cards[1].rank
            && self.hands.len() < MAX_HANDS
            && self.can_raise(hand)
    }

    /// The legal actions for whoever acts: the player's `hit`, `stand`, then `double`/`split`
    /// when allowed; the dealer's single `hit` (below 17) or `stand`; none once over.
    ///
    /// Draws are listed even when the shoe is empty (applying them answers `Shoe is empty.`).
    pub fn legal_actions(&self) -> Vec<Action> {
        if self.is_over() {
            return Vec::new();
        }
        match self.turn {
            Turn::Player => {
                let hand = &self.hands[self.hand_index];
                let mut actions = vec![Action::Hit, Action::Stand];
                if self.can_double(hand) {
                    actions.push(Action::Double);
                }
                if self.can_split(hand) {
                    actions.push(Action::Split);
                }
                actions
            }
            Turn::Dealer => vec![self.dealer_action().unwrap_or(Action::Stand)],
        }
    }

    /// The dealer's only legal action on its turn (`hit` below 17, else `stand`); `None` when it
    /// is not the dealer's turn or the game is over.
    pub fn dealer_action(&self) -> Option<Action> {
        if self.is_over() || self.turn != Turn::Dealer {
            return None;
        }
        Some(if hand_value(&self.dealer).0 < 17 {
            Action::Hit
        } else {
            Action::Stand
        })
    }

    /// The state after `action` by whoever's turn it is.
    ///
    /// # Errors
    ///
    /// `Illegal action.` with reason `game_over`, `not_your_turn` or `not_allowed`, or
    /// `Shoe is empty.` (`shoe_empty`). The state is never changed.
    pub fn apply(&self, action: Action) -> Result<Self, MoveError> {
        if self.is_over() {
            return Err(illegal("game_over"));
        }
        let mut next = self.clone();
        match self.turn {
            Turn::Player => next.apply_player(action)?,
            Turn::Dealer => next.apply_dealer(action)?,
        }
        next.last_action = LastAction::Action(action);
        Ok(next)
    }

    /// [`BlackjackState::apply`] with an action name (`"hit"`, …; unknown names are
    /// `Illegal action.` with reason `invalid_action`).
    ///
    /// # Errors
    ///
    /// As [`BlackjackState::apply`], plus `invalid_action`.
    pub fn apply_str(&self, action: &str) -> Result<Self, MoveError> {
        if self.is_over() {
            return Err(illegal("game_over"));
        }
        self.apply(action.parse()?)
    }

    fn draw(&mut self) -> Result<Card, MoveError> {
        if self.shoe.is_empty() {
            return Err(shoe_empty());
        }
        Ok(self.shoe.remove(0))
    }

    fn apply_player(&mut self, action: Action) -> Result<(), MoveError> {
        let h = self.hand_index;
        match action {
            Action::Hit => {
                let card = self.draw()?;
                let hand = &mut self.hands[h];
                hand.cards.push(card);
                match hand.total() {
                    t if t > 21 => hand.state = HandState::Bust,
                    21 => hand.state = HandState::Stood,
                    _ => {}
                }
            }
            Action::Stand => self.hands[h].state = HandState::Stood,
            Action::Double => {
                if !self.can_double(&self.hands[h]) {
                    return Err(illegal("not_allowed"));
                }
                let card = self.draw()?;
                let hand = &mut self.hands[h];
                hand.cards.push(card);
                hand.doubled = true;
                hand.bet = hand.bet.saturating_mul(2);
                hand.state = if hand.total() > 21 {
                    HandState::Bust
                } else {
                    HandState::Stood
                };
            }
            Action::Split => {
                if !self.can_split(&self.hands[h]) {
                    return Err(illegal("not_allowed"));
                }
                if self.shoe.len() < 2 {
                    return Err(shoe_empty());
                }
                let first_draw = self.draw()?;
                let second_draw = self.draw()?;
                let bet = self.hands[h].bet;
                let [first, second] = [self.hands[h].cards[0], self.hands[h].cards[1]];
                self.hands[h] = Hand::after_cards(vec![first, first_draw], bet);
                self.hands
                    .insert(h + 1, Hand::after_cards(vec![second, second_draw], bet));
            }
        }
        self.advance_player();
        Ok(())
    }

    /// Moves `H` to the next active hand, or ends the player's turn.
    fn advance_player(&mut self) {
        if self.hands[self.hand_index].state == HandState::Active {
            return;
        }
        if let Some(next) = (self.hand_index + 1..self.hands.len())
            .find(|&i| self.hands[i].state == HandState::Active)
        {
            self.hand_index = next;
            return;
        }
        if self.hands.iter().any(|h| h.state == HandState::Stood) {
            self.turn = Turn::Dealer;
        } else {
            self.settle();
        }
    }

    fn apply_dealer(&mut self, action: Action) -> Result<(), MoveError> {
        let total = hand_value(&self.dealer).0;
        match action {
            Action::Double | Action::Split => Err(illegal("not_your_turn")),
            Action::Hit if total >= 17 => Err(illegal("not_allowed")),
            Action::Stand if total < 17 => Err(illegal("not_allowed")),
            Action::Hit => {
                let card = self.draw()?;
                self.dealer.push(card);
                if hand_value(&self.dealer).0 > 21 {
                    self.settle();
                }
                Ok(())
            }
            Action::Stand => {
                self.settle();
                Ok(())
            }
        }
    }

    /// Scores every hand against the dealer and pays out.
    fn settle(&mut self) {
        let dealer_natural = is_natural(&self.dealer);
        let dealer_total = hand_value(&self.dealer).0;
        let results: Vec<HandResult> = self
            .hands
            .iter()
            .map(|hand| match hand.state {
                HandState::Bust => HandResult::Bust,
                HandState::Blackjack if dealer_natural => HandResult::Push,
                HandState::Blackjack => HandResult::Blackjack,
                HandState::Active | HandState::Stood => {
                    let total = hand.total();
                    if dealer_natural {
                        HandResult::Lose
                    } else if dealer_total > 21 || total > dealer_total {
                        HandResult::Win
                    } else if total < dealer_total {
                        HandResult::Lose
                    } else {
                        HandResult::Push
                    }
                }
            })
            .collect();
        let delta: i128 = results
            .iter()
            .zip(&self.hands)
            .map(|(r, h)| r.stack_delta(h.bet))
            .sum();
        let stack = (i128::from(self.stack) + delta).clamp(0, i128::from(MAX_CHIPS));
        self.stack = stack as u64;
        self.results = Some(results);
        self.status = Status::GameOver;
        self.turn = Turn::Dealer;
    }
}

fn check_bet(stack: u64, bet: u64) -> Result<(), MoveError> {
    if bet == 0 || bet > stack || stack > MAX_CHIPS {
        Err(MoveError::new("invalid_bet", INVALID_BET))
    } else {
        Ok(())
    }
}

impl fmt::Display for BlackjackState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S:{}|P:", join_cards(&self.shoe))?;
        for (i, hand) in self.hands.iter().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{hand}")?;
        }
        write!(
            f,
            "|D:{}|BK:{}|B:{}|T:{}|H:{}|ST:{}|LA:{}|R:",
            join_cards(&self.dealer),
            self.stack,
            self.bet,
            self.turn.as_str(),
            self.hand_index,
            self.status.as_str(),
            self.last_action.as_str()
        )?;
        match &self.results {
            None => f.write_str("-"),
            Some(results) => {
                for (i, r) in results.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    f.write_str(r.as_str())?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
