//! Cards: rank `A23456789TJQK` + suit `SHDC` (`AS`, `TD`, `7C`).

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use crate::ParseError;
use crate::dice::uniform_below;

/// A card rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    /// `A`: counts 1 or 11.
    Ace,
    /// `2`.
    Two,
    /// `3`.
    Three,
    /// `4`.
    Four,
    /// `5`.
    Five,
    /// `6`.
    Six,
    /// `7`.
    Seven,
    /// `8`.
    Eight,
    /// `9`.
    Nine,
    /// `T`: counts 10.
    Ten,
    /// `J`: counts 10.
    Jack,
    /// `Q`: counts 10.
    Queen,
    /// `K`: counts 10.
    King,
}

impl Rank {
    /// Every rank in `A23456789TJQK` order.
    pub const ALL: [Rank; 13] = [
        Rank::Ace,
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
    ];

    const CHARS: &'static [u8; 13] = b"A23456789TJQK";

    /// The rank's character.
    pub fn as_char(self) -> char {
        char::from(Self::CHARS[self as usize])
    }

    /// The rank for a character of `A23456789TJQK`.
    pub fn from_char(c: char) -> Option<Rank> {
        Self::CHARS
            .iter()
            .position(|&b| char::from(b) == c)
            .map(|i| Rank::ALL[i])
    }

    /// Hard value: ace 1, faces 10.
    pub fn value(self) -> u32 {
        match self {
            Rank::Ace => 1,
            Rank::Ten | Rank::Jack | Rank::Queen | Rank::King => 10,
            other => other as u32 + 1,
        }
    }
}

/// A card suit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    /// `S`.
    Spades,
    /// `H`.
    Hearts,
    /// `D`.
    Diamonds,
    /// `C`.
    Clubs,
}

impl Suit {
    /// Every suit in `SHDC` order.
    pub const ALL: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Diamonds, Suit::Clubs];

    /// The suit's character.
    pub fn as_char(self) -> char {
        ['S', 'H', 'D', 'C'][self as usize]
    }

    /// The suit for a character of `SHDC`.
    pub fn from_char(c: char) -> Option<Suit> {
        Suit::ALL.into_iter().find(|s| s.as_char() == c)
    }
}

/// A playing card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card {
    /// The rank.
    pub rank: Rank,
    /// The suit.
    pub suit: Suit,
}

impl Card {
    /// A card.
    pub fn new(rank: Rank, suit: Suit) -> Self {
        Card { rank, suit }
    }

    /// A distinct index `0..52` (rank-major).
    pub fn index(self) -> usize {
        self.rank as usize * 4 + self.suit as usize
    }

    /// The 52 cards in a fixed order (`AS AH AD AC 2S …`).
    pub fn deck() -> Vec<Card> {
        Rank::ALL
            .into_iter()
            .flat_map(|r| Suit::ALL.into_iter().map(move |s| Card::new(r, s)))
            .collect()
    }

    /// A shuffled 52-card deck (Fisher–Yates with [`uniform_below`]: portable for a seed).
    pub fn shuffled_deck<R: Rng + ?Sized>(rng: &mut R) -> Vec<Card> {
        let mut deck = Card::deck();
        for i in (1..deck.len()).rev() {
            let j = uniform_below(rng, i as u32 + 1) as usize;
            deck.swap(i, j);
        }
        deck
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank.as_char(), self.suit.as_char())
    }
}

impl FromStr for Card {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut chars = s.chars();
        let (r, su) = (chars.next(), chars.next());
        match (
            r.and_then(Rank::from_char),
            su.and_then(Suit::from_char),
            chars.next(),
        ) {
            (Some(rank), Some(suit), None) => Ok(Card { rank, suit }),
            _ => Err(ParseError::new(format!(
                "invalid card {s:?} (expected a rank of A23456789TJQK and a suit of SHDC, e.g. AS)"
            ))),
        }
    }
}

/// The best total of `cards` and whether it is soft (an ace counted as 11).
pub fn hand_value(cards: &[Card]) -> (u32, bool) {
    let hard: u32 = cards.iter().map(|c| c.rank.value()).sum();
    if hard + 10 <= 21 && cards.iter().any(|c| c.rank == Rank::Ace) {
        (hard + 10, true)
    } else {
        (hard, false)
    }
}

/// True for a two-card 21.
pub fn is_natural(cards: &[Card]) -> bool {
    cards.len() == 2 && hand_value(cards).0 == 21
}

/// Formats cards comma separated (empty for none).
pub fn join_cards(cards: &[Card]) -> String {
    let mut out = String::with_capacity(cards.len() * 3);
    for (i, c) in cards.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push(c.rank.as_char());
        out.push(c.suit.as_char());
    }
    out
}

/// Parses a comma-separated card list; the empty string is no cards.
pub fn parse_cards(s: &str) -> Result<Vec<Card>, ParseError> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    s.split(',').map(str::parse).collect()
}
