use proptest::prelude::*;

use super::*;
use crate::Seed;

fn st(s: &str) -> SlotState {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn new_state_prints_as_documented() {
    let s = SlotState::new(1000, 10).unwrap();
    assert_eq!(s.to_string(), "R:-|BK:1000|B:10|P:0|ST:in_progress|LA:-");
    assert_eq!(st(&s.to_string()), s);
    assert_eq!(s.reels(), None);
    assert_eq!(s.last_action(), "-");
    for (stack, bet) in [(1000, 0), (5, 10), (MAX_CHIPS + 1, 10)] {
        assert_eq!(
            SlotState::new(stack, bet).unwrap_err(),
            MoveError::new("invalid_bet", "Bet must be between 1 and the stack.")
        );
    }
}

#[test]
fn three_sevens_at_bet_10_from_1000_give_1090() {
    let s = SlotState::new(1000, 10).unwrap();
    let after = s.with_reels([Symbol::Seven; 3]).unwrap();
    assert_eq!(after.stack(), 1090);
    assert_eq!(after.payout(), 100);
    assert_eq!(
        after.to_string(),
        "R:7,7,7|BK:1090|B:10|P:100|ST:in_progress|LA:spin"
    );
    // The same through a seeded spin: this seed shows three 7s.
    let spun = s.spin(&mut Seed::Int(SEVENS_SEED).rng()).unwrap();
    assert_eq!(spun, after);
    assert_eq!(
        find_seed_for([Symbol::Seven; 3], SEVENS_SEED + 1),
        Some(SEVENS_SEED)
    );
}

/// An integer seed whose first spin shows `7,7,7` (found by search; see `find_seed_for`).
const SEVENS_SEED: u64 = 21238;

fn find_seed_for(target: [Symbol; 3], limit: u64) -> Option<u64> {
    (0..limit).find(|&n| spin_reels(&mut Seed::Int(n).rng()) == target)
}

#[test]
#[ignore = "search helper: prints the seed pinned as SEVENS_SEED (about 8000 spins)"]
fn print_sevens_seed() {
    println!("{:?}", find_seed_for([Symbol::Seven; 3], 1_000_000));
}

#[test]
fn every_three_of_a_kind_pays_its_multiple_and_nothing_else_pays() {
    let s = SlotState::new(1000, 10).unwrap();
    let pays = [
        (Symbol::Seven, 1090),
        (Symbol::Bar, 1070),
        (Symbol::Bell, 1050),
        (Symbol::Cherry, 1030),
        (Symbol::Lemon, 1020),
        (Symbol::Orange, 1010),
    ];
    for (sym, stack) in pays {
        let after = s.with_reels([sym; 3]).unwrap();
        assert_eq!(after.stack(), stack, "{sym}");
        assert_eq!(st(&after.to_string()), after);
    }
    for a in Symbol::ALL {
        for b in Symbol::ALL {
            for c in Symbol::ALL {
                let expected = if a == b && b == c {
                    a.multiplier() * 7
                } else {
                    0
                };
                assert_eq!(payout_for(&[a, b, c], 7), expected);
            }
        }
    }
    let miss = s
        .with_reels([Symbol::Seven, Symbol::Seven, Symbol::Bar])
        .unwrap();
    assert_eq!(
        miss.to_string(),
        "R:7,7,BAR|BK:990|B:10|P:0|ST:in_progress|LA:spin"
    );
}

#[test]
fn running_out_of_chips_ends_the_game() {
    let s = SlotState::new(15, 10).unwrap();
    let after = s
        .with_reels([Symbol::Bar, Symbol::Bell, Symbol::Lemon])
        .unwrap();
    assert_eq!(after.stack(), 5);
    assert_eq!(after.status(), SlotStatus::GameOver);
    assert_eq!(
        after.to_string(),
        "R:BAR,BELL,LEMON|BK:5|B:10|P:0|ST:game_over|LA:spin"
    );
    let err = after.spin(&mut Seed::Int(1).rng()).unwrap_err();
    assert_eq!(
        err,
        MoveError::new("insufficient_stack", "Insufficient stack.")
    );
    assert_eq!(st(&after.to_string()), after);
    // Exactly the bet left: one more spin is allowed.
    let edge = s
        .with_reels([Symbol::Bar, Symbol::Bell, Symbol::Lemon])
        .unwrap();
    assert_eq!(edge.stack(), 5);
    let exact = SlotState::new(10, 10)
        .unwrap()
        .with_reels([Symbol::Orange; 3])
        .unwrap();
    assert_eq!(exact.stack(), 20);
    assert_eq!(exact.status(), SlotStatus::InProgress);
}

#[test]
fn huge_stacks_are_capped() {
    let s = st(&format!(
        "R:-|BK:{MAX_CHIPS}|B:{MAX_CHIPS}|P:0|ST:in_progress|LA:-"
    ));
    let after = s.with_reels([Symbol::Seven; 3]).unwrap();
    assert_eq!(after.stack(), MAX_CHIPS);
    assert_eq!(after.payout(), MAX_CHIPS * 10);
    // The payout exceeds MAX_CHIPS, so that state does not parse back; the spin itself is fine.
    assert!(after.to_string().parse::<SlotState>().is_err());
}

#[test]
fn weights_match_the_table() {
    let mut counts = [0u32; 6];
    for i in 0..TOTAL_WEIGHT {
        let sym = Symbol::from_weight_index(i);
        counts[Symbol::ALL.iter().position(|&s| s == sym).unwrap()] += 1;
    }
    assert_eq!(counts, [1, 2, 3, 4, 5, 5]);
    assert_eq!(
        Symbol::ALL.iter().map(|s| s.weight()).sum::<u32>(),
        TOTAL_WEIGHT
    );
}

#[test]
fn seeded_spins_follow_the_weights() {
    let mut rng = Seed::Str("weights".into()).rng();
    let mut counts = [0u32; 6];
    let n = 60_000;
    for _ in 0..n / 3 {
        for sym in spin_reels(&mut rng) {
            counts[Symbol::ALL.iter().position(|&s| s == sym).unwrap()] += 1;
        }
    }
    for (sym, &count) in Symbol::ALL.iter().zip(&counts) {
        let expected = f64::from(n) * f64::from(sym.weight()) / f64::from(TOTAL_WEIGHT);
        let sd = (expected * (1.0 - f64::from(sym.weight()) / 20.0)).sqrt();
        assert!(
            (f64::from(count) - expected).abs() < 5.0 * sd,
            "{sym}: {count} vs {expected} ({counts:?})"
        );
    }
}

#[test]
fn same_seed_same_reels() {
    let s = SlotState::new(1000, 10).unwrap();
    let a = s.spin(&mut Seed::Str("x".into()).rng()).unwrap();
    let b = s.spin(&mut Seed::Str("x".into()).rng()).unwrap();
    assert_eq!(a, b);
    let differ = (0..20).any(|n| s.spin(&mut Seed::Int(n).rng()).unwrap() != a);
    assert!(differ);
}

#[test]
fn parse_errors_name_the_problem() {
    let cases: &[(&str, &str)] = &[
        ("", "expected 6 fields"),
        ("R:-|BK:1000|B:10|P:0|ST:in_progress", "expected 6 fields"),
        (
            "X:-|BK:1000|B:10|P:0|ST:in_progress|LA:-",
            "field 1 must be R",
        ),
        (
            "R:7,7|BK:1000|B:10|P:0|ST:in_progress|LA:spin",
            "three symbols",
        ),
        (
            "R:7,7,7,7|BK:1000|B:10|P:0|ST:in_progress|LA:spin",
            "three symbols",
        ),
        (
            "R:7,7,PLUM|BK:1000|B:10|P:0|ST:in_progress|LA:spin",
            "unknown symbol \"PLUM\"",
        ),
        (
            "R:bar,bar,bar|BK:1000|B:10|P:80|ST:in_progress|LA:spin",
            "unknown symbol",
        ),
        ("R:-|BK:x|B:10|P:0|ST:in_progress|LA:-", "BK must be"),
        ("R:-|BK:1000|B:-1|P:0|ST:in_progress|LA:-", "B must be"),
        (
            "R:-|BK:1000|B:0|P:0|ST:in_progress|LA:-",
            "B must be at least 1",
        ),
        ("R:-|BK:1000|B:10|P:|ST:in_progress|LA:-", "P must be"),
        ("R:-|BK:1000|B:10|P:0|ST:done|LA:-", "ST must be"),
        ("R:-|BK:1000|B:10|P:0|ST:in_progress|LA:pull", "LA must be"),
        (
            "R:-|BK:1000|B:10|P:0|ST:in_progress|LA:spin",
            "LA:spin goes with",
        ),
        (
            "R:7,7,7|BK:1000|B:10|P:100|ST:in_progress|LA:-",
            "LA:spin goes with",
        ),
        (
            "R:7,7,7|BK:1090|B:10|P:90|ST:in_progress|LA:spin",
            "does not match the reels",
        ),
        (
            "R:-|BK:1000|B:10|P:5|ST:in_progress|LA:-",
            "does not match the reels",
        ),
        (
            "R:-|BK:1000|B:10|P:0|ST:game_over|LA:-",
            "stack covers the bet",
        ),
        (
            "R:-|BK:5|B:10|P:0|ST:in_progress|LA:-",
            "stack is below the bet",
        ),
    ];
    for (s, needle) in cases {
        let err = s.parse::<SlotState>().unwrap_err();
        assert!(err.message().starts_with("Invalid state: "), "{s}: {err}");
        assert!(
            err.message().contains(needle),
            "{s}: {err} (wanted {needle:?})"
        );
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,120}") {
        let _ = s.parse::<SlotState>();
    }

    #[test]
    fn parsed_states_round_trip(
        r in prop_oneof![Just("-".to_string()), "(7|BAR|BELL|CHERRY|LEMON|ORANGE),(7|BAR|BELL|CHERRY|LEMON|ORANGE),(7|BAR|BELL|CHERRY|LEMON|ORANGE)"],
        stack in 0u64..5000, bet in 0u64..100, p in 0u64..1000,
        st in "(in_progress|game_over)", la in "(-|spin)"
    ) {
        let s = format!("R:{r}|BK:{stack}|B:{bet}|P:{p}|ST:{st}|LA:{la}");
        if let Ok(state) = s.parse::<SlotState>() {
            prop_assert_eq!(state.to_string(), s);
            let _ = state.spin(&mut Seed::Int(stack).rng());
        }
    }

    #[test]
    fn spins_keep_the_books(seed in any::<u64>(), stack in 1u64..10_000, bet in 1u64..100) {
        prop_assume!(bet <= stack);
        let s = SlotState::new(stack, bet).unwrap();
        let after = s.spin(&mut Seed::Int(seed).rng()).unwrap();
        prop_assert_eq!(after.stack(), stack - bet + after.payout());
        prop_assert_eq!(after.to_string().parse::<SlotState>().unwrap(), after);
    }
}
