use proptest::prelude::*;
use rand::RngExt;

use super::*;
use crate::Seed;

const START_X: &str = "G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O";
const START_O: &str = "G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:O|O:X";

fn c(s: &str) -> Coord {
    s.parse().unwrap()
}

fn play(mark: Mark, moves: &[&str]) -> TicTacToe {
    moves
        .iter()
        .fold(TicTacToe::new(mark), |p, m| p.apply(c(m)).unwrap())
}

#[test]
fn start_positions_round_trip() {
    assert_eq!(TicTacToe::new(Mark::X).to_string(), START_X);
    assert_eq!(TicTacToe::new(Mark::O).to_string(), START_O);
    for s in [START_X, START_O] {
        let p: TicTacToe = s.parse().unwrap();
        assert_eq!(p.to_string(), s);
        assert_eq!(p.turn(), Side::Player);
        assert_eq!(p.legal_moves().len(), 9);
    }
    assert_eq!(TicTacToe::default().player_mark(), Mark::X);
}

#[test]
fn coordinates_are_letter_column_digit_row() {
    assert_eq!(c("A1").index(), 0);
    assert_eq!(c("C3").index(), 8);
    assert_eq!(c("B1").index(), 1);
    assert_eq!(c("A2").index(), 3);
    assert_eq!(c(" b2 ").to_string(), "B2");
    assert_eq!(c("c1"), Coord::new(2, 0).unwrap());
    for bad in ["", "D1", "A4", "A0", "1A", "B22", "B 2", "*"] {
        let err = bad.parse::<Coord>().unwrap_err();
        assert_eq!((err.reason, err.message.as_str()), ("invalid_coord", "Illegal move."), "{bad}");
    }
    assert_eq!(Coord::new(3, 0), None);
    let p = play(Mark::X, &["C1", "A3"]);
    assert_eq!(p.to_string(), "G:..X/.../O..|T:player|ST:in_progress|LA:A3|W:-|P:X|O:O");
    assert_eq!(p.mark_at(c("C1")), Some(Mark::X));
    assert_eq!(p.side_at(c("A3")), Some(Side::Opponent));
}

#[test]
fn the_player_moves_first_with_either_symbol() {
    let p = TicTacToe::new(Mark::O).apply(c("B2")).unwrap();
    assert_eq!(p.to_string(), "G:.../.O./...|T:opponent|ST:in_progress|LA:B2|W:-|P:O|O:X");
    let p = p.apply(c("a1")).unwrap();
    assert_eq!(p.to_string(), "G:X../.O./...|T:player|ST:in_progress|LA:A1|W:-|P:O|O:X");
    assert_eq!(p.to_string().parse::<TicTacToe>().unwrap(), p);
}

#[test]
fn wins_draws_and_errors() {
    let win = play(Mark::X, &["A1", "A2", "B1", "B2", "C1"]);
    assert_eq!(win.winner(), Some(Winner::Player));
    assert_eq!(win.to_string(), "G:XXX/OO./...|T:opponent|ST:game_over|LA:C1|W:player|P:X|O:O");
    assert!(win.legal_moves().is_empty());
    let err = win.apply(c("C3")).unwrap_err();
    assert_eq!((err.reason, err.message.as_str()), ("game_over", "Illegal move."));

    let lose = play(Mark::O, &["A1", "B2", "C3", "A3", "C1", "C2", "B1"]);
    assert_eq!(lose.winner(), Some(Winner::Player));
    let lose = play(Mark::X, &["A1", "B2", "B1", "C1", "C3", "A3"]);
    assert_eq!(lose.winner(), Some(Winner::Opponent));
    assert!(lose.to_string().ends_with("|T:player|ST:game_over|LA:A3|W:opponent|P:X|O:O"));

    let draw = play(Mark::X, &["B2", "A1", "C1", "A3", "A2", "C2", "B1", "B3", "C3"]);
    assert_eq!(draw.winner(), Some(Winner::Draw));
    assert_eq!(draw.to_string(), "G:OXX/XXO/OOX|T:opponent|ST:game_over|LA:C3|W:draw|P:X|O:O");
    for p in [win, lose, draw] {
        assert_eq!(p.to_string().parse::<TicTacToe>().unwrap(), p);
    }

    let p = play(Mark::X, &["B2"]);
    let err = p.apply(c("B2")).unwrap_err();
    assert_eq!((err.reason, err.message.as_str()), ("square_occupied", "Illegal move."));
}

#[test]
fn parse_errors_name_the_problem() {
    let cases: &[(&str, &str)] = &[
        ("", "expected 7 fields"),
        ("G:.../.../...|T:player|ST:in_progress|LA:-|W:-", "expected 7 fields"),
        ("G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|Q:O", "expected field O:"),
        ("G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:Z|O:O", "player symbol must be X or O"),
        ("G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:x", "opponent symbol must be X or O"),
        ("G:.../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:X", "must differ"),
        ("G:.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O", "3 rows"),
        ("G:.../..../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O", "row 2 must have 3 cells"),
        ("G:x../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O", "unexpected grid character 'x'"),
        ("G:O../.../...|T:opponent|ST:in_progress|LA:-|W:-|P:X|O:O", "mark counts player=0, opponent=1"),
        ("G:XX./.../...|T:opponent|ST:in_progress|LA:-|W:-|P:X|O:O", "mark counts player=2"),
        ("G:X../.../...|T:player|ST:in_progress|LA:-|W:-|P:X|O:O", "turn is player"),
        ("G:X../.../...|T:nobody|ST:in_progress|LA:-|W:-|P:X|O:O", "turn must be player or opponent"),
        ("G:X../.../...|T:opponent|ST:in_progress|LA:a1|W:-|P:X|O:O", "upper-case square"),
        ("G:X../.../...|T:opponent|ST:in_progress|LA:D1|W:-|P:X|O:O", "upper-case square"),
        ("G:X../.../...|T:opponent|ST:in_progress|LA:B2|W:-|P:X|O:O", "last action B2 is not a square of the player"),
        ("G:XXX/OOO/X..|T:opponent|ST:game_over|LA:-|W:player|P:X|O:O", "both sides have three in a row"),
        ("G:XXX/OO./O..|T:player|ST:game_over|LA:-|W:player|P:X|O:O", "did not move last"),
        // X completed two separate lines: a line existed before the last move.
        ("G:XXX/OO./XXX|T:opponent|ST:game_over|LA:-|W:player|P:X|O:O", "mark counts"),
        ("G:XXX/OO./...|T:opponent|ST:game_over|LA:A1|W:player|P:X|O:O", ""),
        ("G:XXX/O.O/O.X|T:opponent|ST:game_over|LA:C3|W:player|P:X|O:O", "no order of legal moves"),
        ("G:XXX/OO./...|T:opponent|ST:in_progress|LA:C1|W:-|P:X|O:O", "winner is - but the board says player"),
        ("G:X../.../...|T:opponent|ST:in_progress|LA:-|W:maybe|P:X|O:O", "winner must be"),
        ("G:X../.../...|T:opponent|ST:done|LA:-|W:-|P:X|O:O", "status must be"),
        ("G:X../.../...|T:opponent|ST:game_over|LA:-|W:-|P:X|O:O", "status is game_over but the board says in_progress"),
    ];
    for (state, needle) in cases {
        if needle.is_empty() {
            // Valid despite looking odd.
            assert!(state.parse::<TicTacToe>().is_ok(), "{state}");
            continue;
        }
        let err = match state.parse::<TicTacToe>() {
            Ok(p) => panic!("{state} parsed as {p}"),
            Err(e) => e.to_string(),
        };
        assert!(err.starts_with("Invalid state: "), "{state}: {err}");
        assert!(err.contains(needle), "{state}: expected {needle:?} in {err:?}");
    }
}

/// Complete games from `p`: recursion over legal moves, stopping at wins and full boards.
fn count_games(p: &TicTacToe) -> u64 {
    if p.winner().is_some() {
        return 1;
    }
    p.legal_moves()
        .into_iter()
        .map(|m| count_games(&p.apply(m).unwrap()))
        .sum()
}

#[test]
fn there_are_255168_possible_games() {
    assert_eq!(count_games(&TicTacToe::new(Mark::X)), 255_168);
    assert_eq!(count_games(&TicTacToe::new(Mark::O)), 255_168);
}

#[test]
fn perfect_values_of_known_positions() {
    // The empty board is a draw with perfect play.
    assert!(TicTacToe::new(Mark::X).move_values().iter().all(|&(_, v)| v <= 0));
    assert_eq!(TicTacToe::new(Mark::X).move_values().iter().map(|&(_, v)| v).max(), Some(0));
    // After an edge opening and a bad reply the first player wins.
    let p = play(Mark::X, &["B2", "B1"]);
    assert!(p.move_values().iter().any(|&(_, v)| v > 0));
    // Prefer the immediate win over a slower one.
    let p = play(Mark::X, &["A1", "A2", "B1", "B2"]);
    let ranked = p.ranked_moves();
    assert_eq!(ranked[0], c("C1"));
    let values = p.move_values();
    let c1 = values.iter().find(|(m, _)| *m == c("C1")).unwrap().1;
    assert_eq!(c1, 10 - 5);
    // Hard takes it.
    let mut rng = Seed::Int(3).rng();
    assert_eq!(p.choose_move(Level::Hard, SearchLimits::default(), &mut rng), Some(c("C1")));
    assert_eq!(p.choose_move(Level::Easy, SearchLimits::default(), &mut rng), Some(c("C1")));
    // Must block: O to move, X threatens C1.
    let p = play(Mark::X, &["A1", "B2", "B1"]);
    assert_eq!(p.ranked_moves()[0], c("C1"));
    assert_eq!(p.choose_move(Level::Hard, SearchLimits::default(), &mut rng), Some(c("C1")));
    // From the start the centre ranks first (all moves draw; centre preferred).
    assert_eq!(TicTacToe::new(Mark::X).ranked_moves()[0], c("B2"));
}

/// Plays every possible line of the other side against hard; returns how many games ended and
/// panics if hard ever loses.
fn hard_never_loses(p: &TicTacToe, hard: Side, seed: u64) -> u64 {
    if let Some(w) = p.winner() {
        assert_ne!(w, Winner::side(hard.other()), "hard lost: {p}");
        return 1;
    }
    if p.turn() == hard {
        let mut rng = Seed::Int(seed).rng();
        let m = p.choose_move(Level::Hard, SearchLimits::default(), &mut rng).unwrap();
        hard_never_loses(&p.apply(m).unwrap(), hard, seed.wrapping_mul(31).wrapping_add(m.index() as u64))
    } else {
        p.legal_moves()
            .into_iter()
            .map(|m| hard_never_loses(&p.apply(m).unwrap(), hard, seed ^ (m.index() as u64 + 1)))
            .sum()
    }
}

#[test]
fn hard_never_loses_as_first_or_second_player() {
    for mark in [Mark::X, Mark::O] {
        for hard in [Side::Player, Side::Opponent] {
            let games = hard_never_loses(&TicTacToe::new(mark), hard, 7);
            assert!(games > 0);
        }
    }
}

#[test]
fn hard_beats_random_often_and_easy_sometimes_errs() {
    let mut hard_wins = 0;
    for seed in 0..40u64 {
        let mut rng = Seed::Int(seed).rng();
        let mut p = TicTacToe::new(Mark::X);
        while p.winner().is_none() {
            let level = if p.turn() == Side::Player { Level::Hard } else { Level::Random };
            p = p.apply(p.choose_move(level, SearchLimits::default(), &mut rng).unwrap()).unwrap();
        }
        assert_ne!(p.winner(), Some(Winner::Opponent));
        if p.winner() == Some(Winner::Player) {
            hard_wins += 1;
        }
    }
    assert!(hard_wins >= 30, "{hard_wins}");
    // Easy plays a non-optimal move for some seed in a position with a single optimal reply.
    let p = play(Mark::X, &["A1", "B2", "B1"]);
    let picks: std::collections::HashSet<Coord> = (0..40u64)
        .map(|s| p.choose_move(Level::Easy, SearchLimits::default(), &mut Seed::Int(s).rng()).unwrap())
        .collect();
    assert!(picks.contains(&c("C1")) && picks.len() > 1);
}

#[test]
fn seeded_random_playouts_use_only_listed_moves() {
    for seed in 0..300u64 {
        let mut rng = Seed::Int(seed).rng();
        let mark = if seed % 2 == 0 { Mark::X } else { Mark::O };
        let mut p = TicTacToe::new(mark);
        while p.status() == Status::InProgress {
            let moves = p.legal_moves();
            p = p.apply(moves[rng.random_range(0..moves.len())]).unwrap();
            assert_eq!(p.to_string().parse::<TicTacToe>().unwrap(), p);
        }
        assert!(p.winner().is_some() && p.legal_moves().is_empty());
        assert_eq!(p.choose_move(Level::Hard, SearchLimits::default(), &mut rng), None);
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in ".{0,80}") {
        if let Ok(p) = s.parse::<TicTacToe>() {
            prop_assert_eq!(p.to_string(), s.trim());
        }
    }

    #[test]
    fn near_valid_strings_never_panic(
        grid in proptest::collection::vec(proptest::sample::select(vec!['.', 'X', 'O']), 9),
        t in proptest::sample::select(vec!["player", "opponent"]),
        st in proptest::sample::select(vec!["in_progress", "game_over"]),
        la in proptest::sample::select(vec!["-", "A1", "B2", "C3", "b2"]),
        w in proptest::sample::select(vec!["-", "player", "opponent", "draw"]),
        po in proptest::sample::select(vec![("X", "O"), ("O", "X"), ("X", "X")]),
    ) {
        let rows: Vec<String> = grid.chunks(3).map(|r| r.iter().collect()).collect();
        let s = format!("G:{}|T:{t}|ST:{st}|LA:{la}|W:{w}|P:{}|O:{}", rows.join("/"), po.0, po.1);
        if let Ok(p) = s.parse::<TicTacToe>() {
            prop_assert_eq!(p.to_string(), s);
            for m in p.legal_moves() {
                let next = p.apply(m).unwrap();
                prop_assert_eq!(next.to_string().parse::<TicTacToe>().unwrap(), next);
            }
        }
    }
}
