//! blackjack (to be written).
