//! Parsing the state string (the grammar and checks are described in the parent module).

use std::str::FromStr;

use super::{
    Action, BlackjackState, Hand, HandResult, HandState, LastAction, MAX_HANDS, Status, Turn,
    hand_value, invalid, is_natural, parse_cards,
};
use crate::ParseError;
use crate::slot::{fields, parse_chips};

fn parse_hand(i: usize, s: &str) -> Result<Hand, ParseError> {
    let parts: Vec<&str> = s.split('@').collect();
    let [cards, state, doubled, bet] = parts[..] else {
        return Err(invalid(format_args!(
            "hand {} must be cards@state@doubled@bet, found {s:?}",
            i + 1
        )));
    };
    let cards = parse_cards(cards).map_err(|e| invalid(format_args!("hand {}: {e}", i + 1)))?;
    let state = HandState::parse(state).ok_or_else(|| {
        invalid(format_args!(
            "hand {} state must be active, stood, bust or blackjack, found {state:?}",
            i + 1
        ))
    })?;
    let doubled = match doubled {
        "0" => false,
        "1" => true,
        _ => {
            return Err(invalid(format_args!(
                "hand {} doubled flag must be 0 or 1, found {doubled:?}",
                i + 1
            )));
        }
    };
    let bet = parse_chips("hand bet", bet)?;
    Ok(Hand {
        cards,
        state,
        doubled,
        bet,
    })
}

fn check_hand(i: usize, hand: &Hand, base_bet: u64) -> Result<(), ParseError> {
    let n = i + 1;
    if hand.cards.len() < 2 {
        return Err(invalid(format_args!(
            "hand {n} must hold at least two cards"
        )));
    }
    let total = hand.total();
    let expected_bet = if hand.doubled {
        base_bet.saturating_mul(2)
    } else {
        base_bet
    };
    if hand.bet != expected_bet {
        return Err(invalid(format_args!(
            "hand {n} bet {} does not match B:{base_bet}{}",
            hand.bet,
            if hand.doubled { " doubled" } else { "" }
        )));
    }
    if (total > 21) != (hand.state == HandState::Bust) {
        return Err(invalid(format_args!(
            "hand {n} totals {total}, which does not fit state {}",
            hand.state.as_str()
        )));
    }
    if is_natural(&hand.cards) != (hand.state == HandState::Blackjack) {
        return Err(invalid(format_args!(
            "hand {n}: a two-card 21 is a blackjack and only it is (state {})",
            hand.state.as_str()
        )));
    }
    if hand.state == HandState::Active && total >= 21 {
        return Err(invalid(format_args!(
            "hand {n} totals {total} and cannot be active"
        )));
    }
    if hand.doubled
        && (hand.cards.len() != 3 || !matches!(hand.state, HandState::Stood | HandState::Bust))
    {
        return Err(invalid(format_args!(
            "hand {n} is doubled, so it holds three cards and is stood or bust"
        )));
    }
    Ok(())
}

impl FromStr for BlackjackState {
    type Err = ParseError;

    // Long on purpose: the state string's grammar read once, field by field in its order, each
    // field's error named where it is read (split up, the fields' order and checks would scatter).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const KEYS: [&str; 10] = ["S", "P", "D", "BK", "B", "T", "H", "ST", "LA", "R"];
        let [sh, p, d, bk, b, t, h, st, la, r] = if s.split('|').count() == 9 {
            let [sh, p, d, bk, b, t, h, st, la] =
                fields(s, ["S", "P", "D", "BK", "B", "T", "H", "ST", "LA"])?;
            [sh, p, d, bk, b, t, h, st, la, "-"]
        } else {
            fields(s, KEYS)?
        };
        let shoe = parse_cards(sh).map_err(|e| invalid(format_args!("shoe: {e}")))?;
        if p.is_empty() {
            return Err(invalid("P must hold at least one hand"));
        }
        let hands = p
            .split(';')
            .enumerate()
            .map(|(i, h)| parse_hand(i, h))
            .collect::<Result<Vec<Hand>, ParseError>>()?;
        if hands.len() > MAX_HANDS {
            return Err(invalid(format_args!(
                "at most {MAX_HANDS} hands, found {}",
                hands.len()
            )));
        }
        let dealer = parse_cards(d).map_err(|e| invalid(format_args!("dealer: {e}")))?;
        if dealer.len() < 2 {
            return Err(invalid("the dealer must hold at least two cards"));
        }
        let stack = parse_chips("BK", bk)?;
        let bet = parse_chips("B", b)?;
        if bet == 0 {
            return Err(invalid("B must be at least 1"));
        }
        let turn = match t {
            "player" => Turn::Player,
            "dealer" => Turn::Dealer,
            _ => {
                return Err(invalid(format_args!(
                    "T must be player or dealer, found {t:?}"
                )));
            }
        };
        let hand_index = match h.parse::<usize>() {
            Ok(i)
                if i < hands.len()
                    && h.bytes().all(|c| c.is_ascii_digit())
                    && (h == "0" || !h.starts_with('0')) =>
            {
                i
            }
            _ => {
                return Err(invalid(format_args!(
                    "H must be a hand index from 0 to {}, found {h:?}",
                    hands.len() - 1
                )));
            }
        };
        let status = match st {
            "in_progress" => Status::InProgress,
            "game_over" => Status::GameOver,
            _ => {
                return Err(invalid(format_args!(
                    "ST must be in_progress or game_over, found {st:?}"
                )));
            }
        };
        let last_action = match la {
            "deal" => LastAction::Deal,
            other => match Action::ALL.into_iter().find(|a| a.as_str() == other) {
                Some(a) => LastAction::Action(a),
                None => {
                    return Err(invalid(format_args!(
                        "LA must be deal, hit, stand, double or split, found {la:?}"
                    )));
                }
            },
        };
        let results = if r == "-" {
            None
        } else {
            Some(
                r.split(',')
                    .map(|x| {
                        HandResult::parse(x).ok_or_else(|| {
                            invalid(format_args!(
                                "R must be - or results (win, lose, push, bust, blackjack), found {x:?}"
                            ))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            )
        };

        let mut seen = [false; 52];
        for c in shoe
            .iter()
            .chain(hands.iter().flat_map(|h| &h.cards))
            .chain(&dealer)
        {
            if std::mem::replace(&mut seen[c.index()], true) {
                return Err(invalid(format_args!("card {c} appears twice")));
            }
        }
        for (i, hand) in hands.iter().enumerate() {
            check_hand(i, hand, bet)?;
        }
        let any_active = hands.iter().any(|h| h.state == HandState::Active);
        match status {
            Status::InProgress => {
                if results.is_some() {
                    return Err(invalid("R must be - while the game is in progress"));
                }
                if hands.iter().map(|h| u128::from(h.bet)).sum::<u128>() > u128::from(stack) {
                    return Err(invalid("the bets exceed the stack"));
                }
                if is_natural(&dealer) {
                    return Err(invalid(
                        "the dealer holds a natural, which ends the game at the deal",
                    ));
                }
                match turn {
                    Turn::Player => {
                        if hands[hand_index].state != HandState::Active {
                            return Err(invalid(format_args!(
                                "hand {} (H:{hand_index}) is not active",
                                hand_index + 1
                            )));
                        }
                        if hands[..hand_index]
                            .iter()
                            .any(|h| h.state == HandState::Active)
                        {
                            return Err(invalid("an active hand comes before H"));
                        }
                        if dealer.len() != 2 {
                            return Err(invalid("the dealer draws only after the player"));
                        }
                    }
                    Turn::Dealer => {
                        if any_active {
                            return Err(invalid("the dealer acts only when no hand is active"));
                        }
                        if !hands.iter().any(|h| h.state == HandState::Stood) {
                            return Err(invalid(
                                "with every hand bust or blackjack the game is already settled",
                            ));
                        }
                        if hand_value(&dealer).0 > 21 {
                            return Err(invalid("a dealer bust ends the game"));
                        }
                    }
                }
            }
            Status::GameOver => {
                let Some(results) = &results else {
                    return Err(invalid("R must list the results once the game is over"));
                };
                if any_active {
                    return Err(invalid("no hand may be active once the game is over"));
                }
                if results.len() != hands.len() {
                    return Err(invalid(format_args!(
                        "R lists {} results for {} hands",
                        results.len(),
                        hands.len()
                    )));
                }
                for (i, (res, hand)) in results.iter().zip(&hands).enumerate() {
                    let fits = match hand.state {
                        HandState::Bust => *res == HandResult::Bust,
                        HandState::Blackjack => {
                            matches!(res, HandResult::Blackjack | HandResult::Push)
                        }
                        _ => matches!(res, HandResult::Win | HandResult::Lose | HandResult::Push),
                    };
                    if !fits {
                        return Err(invalid(format_args!(
                            "result {} does not fit hand {} ({})",
                            res.as_str(),
                            i + 1,
                            hand.state.as_str()
                        )));
                    }
                }
            }
        }
        Ok(BlackjackState {
            shoe,
            hands,
            dealer,
            stack,
            bet,
            turn,
            hand_index,
            status,
            last_action,
            results,
        })
    }
}
