use super::*;
use crate::seed::Seed;
use crate::{Level, SearchLimits};
use proptest::prelude::*;

fn pos(s: &str) -> Position {
    match s.parse::<Position>() {
        Ok(p) => p,
        Err(e) => panic!("{s:?} did not parse: {e}"),
    }
}

fn notations(p: &Position) -> Vec<String> {
    p.legal_moves().iter().map(Move::to_string).collect()
}

/// Builds a state from `(square, piece)` pairs.
fn state(pieces: &[(&str, char)], turn: char) -> String {
    let mut grid = [['.'; 8]; 8];
    for (sq, c) in pieces {
        let sq: Square = sq.parse().unwrap();
        grid[7 - usize::from(sq.rank())][usize::from(sq.file())] = *c;
    }
    let rows: Vec<String> = grid.iter().map(|r| r.iter().collect()).collect();
    format!("{} {turn}", rows.join("/"))
}

fn reason(r: Result<Move, MoveError>) -> &'static str {
    match r {
        Ok(mv) => panic!("expected an error, got {mv}"),
        Err(e) => {
            assert_eq!(e.message, "Illegal move.");
            e.reason
        }
    }
}

#[test]
fn start_state_round_trips() {
    let p = Position::start();
    assert_eq!(p.to_string(), START_STATE);
    assert_eq!(pos(START_STATE), p);
    assert_eq!(p.turn(), Color::White);
    assert_eq!(p.piece_count(Color::White), 12);
    assert_eq!(p.piece_count(Color::Black), 12);
    assert_eq!(p.piece_at("a1".parse().unwrap()), Some(Piece::WhiteMan));
    assert_eq!(p.piece_at("b6".parse().unwrap()), Some(Piece::BlackMan));
    assert_eq!(p.piece_at("b1".parse().unwrap()), None);
    assert_eq!(p.status(), Status::InProgress);
}

#[test]
fn other_states_round_trip() {
    let s = state(&[("c5", 'B'), ("d4", 'w'), ("f2", 'W'), ("a1", 'B')], 'b');
    assert_eq!(s, "......../......../......../..B...../...w..../......../.....W../B....... b");
    let p = pos(&s);
    assert_eq!(p.to_string(), s);
    assert_eq!(p.turn(), Color::Black);
    assert_eq!(p.piece_at("a1".parse().unwrap()), Some(Piece::BlackKing));
    assert_eq!(p.piece_at("f2".parse().unwrap()), Some(Piece::WhiteKing));
    let empty = "......../......../......../......../......../......../......../........ w";
    assert_eq!(pos(empty).to_string(), empty);
    assert_eq!(pos(empty).status(), Status::GameOver { winner: Color::Black });
    // Tolerated whitespace is canonicalised.
    let loose = format!("  {}  ", START_STATE.replace(" w", "   w"));
    assert_eq!(pos(&loose).to_string(), START_STATE);
}

#[test]
fn parse_errors_have_clear_messages() {
    let cases: &[(&str, &str)] = &[
        ("", "Invalid state: empty state (expected <row8>/…/<row1> <turn>)"),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w.",
            "Invalid state: missing turn after the board (expected ' w' or ' b')",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. x",
            "Invalid state: turn must be 'w' or 'b', found \"x\"",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. W",
            "Invalid state: turn must be 'w' or 'b', found \"W\"",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. w extra",
            "Invalid state: unexpected text \"extra\" after the turn",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......../w.w.w.w./.w.w.w.w/w.w.w.w. w",
            "Invalid state: expected 8 rows separated by '/', found 7",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/......./......../w.w.w.w./.w.w.w.w/w.w.w.w. w",
            "Invalid state: row 4 (rank 5) has 7 squares, expected 8",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/...q..../......../w.w.w.w./.w.w.w.w/w.w.w.w. w",
            "Invalid state: unexpected character 'q' on d5 (expected w, W, b, B or .)",
        ),
        (
            "b.b.b.b./b.b.b.b./.b.b.b.b/......../......../w.w.w.w./.w.w.w.w/w.w.w.w. w",
            "Invalid state: piece 'b' on light square a8; pieces stand on dark squares only \
             (file + rank even, e.g. a1, b2, c1) and light squares must be '.'",
        ),
        (
            ".w....../......../......../......../......../......../......../b....... b",
            "Invalid state: white man on b8 stands on its crowning row; write it as a king ('W')",
        ),
        (
            "......../......../......../......../......../......../......../b....... w",
            "Invalid state: black man on a1 stands on its crowning row; write it as a king ('B')",
        ),
        (
            ".b.b.b.b/b.b.b.b./.b.b.b.b/b......./......../w.w.w.w./.w.w.w.w/w.w.w.w. w",
            "Invalid state: black has 13 pieces; at most 12 are allowed",
        ),
    ];
    for (input, message) in cases {
        match input.parse::<Position>() {
            Ok(p) => panic!("{input:?} parsed as {p}"),
            Err(e) => assert_eq!(e.message(), *message, "input {input:?}"),
        }
    }
}

#[test]
fn white_first_moves_are_exact() {
    assert_eq!(
        notations(&Position::start()),
        ["a3b4", "c3b4", "c3d4", "e3d4", "e3f4", "g3f4", "g3h4"]
    );
    assert!(!Position::start().must_capture());
}

#[test]
fn black_replies_from_rank_six() {
    let (p, mv) = Position::start().play("c3d4").unwrap();
    assert_eq!(mv.to_string(), "c3d4");
    assert_eq!(p.turn(), Color::Black);
    assert_eq!(
        p.to_string(),
        ".b.b.b.b/b.b.b.b./.b.b.b.b/......../...w..../w...w.w./.w.w.w.w/w.w.w.w. b"
    );
    assert_eq!(
        notations(&p),
        ["b6a5", "b6c5", "d6c5", "d6e5", "f6e5", "f6g5", "h6g5"]
    );
    // The document's `b6a5` is a black move.
    let (q, mv) = p.play("b6a5").unwrap();
    assert_eq!(mv.to_string(), "b6a5");
    assert_eq!(q.turn(), Color::White);
    assert_eq!(reason(Position::start().parse_move("b6a5")), "not_your_piece");
}

#[test]
fn double_jump_from_the_document() {
    let p = pos(&state(&[("b6", 'b'), ("c5", 'w'), ("e3", 'w'), ("h2", 'w')], 'b'));
    assert!(p.must_capture());
    assert_eq!(notations(&p), ["b6d4f2"]);
    let (q, mv) = p.play("b6d4f2").unwrap();
    assert_eq!(mv.capture_count(), 2);
    assert_eq!(
        mv.captured_squares(),
        vec!["e3".parse::<Square>().unwrap(), "c5".parse().unwrap()]
    );
    assert_eq!(q.to_string(), state(&[("f2", 'b'), ("h2", 'w')], 'w'));
    // Stopping halfway is not a legal move; the shorthand from + to is.
    assert_eq!(reason(p.parse_move("b6d4")), "incomplete_capture");
    assert_eq!(p.parse_move("b6f2").unwrap().to_string(), "b6d4f2");
    assert_eq!(p.parse_move("B6xD4xF2").unwrap().to_string(), "b6d4f2");
}

#[test]
fn capture_branches_are_listed_and_sorted() {
    // White man on c3 can jump d4 to e5 and then either f6->g7 or d6->c7.
    let p = pos(&state(
        &[("c3", 'w'), ("d4", 'b'), ("d6", 'b'), ("f6", 'b'), ("a7", 'b')],
        'w',
    ));
    assert_eq!(notations(&p), ["c3e5c7", "c3e5g7"]);
    assert_eq!(reason(p.parse_move("c3e5")), "incomplete_capture");
}

#[test]
fn crowning_by_a_jump_ends_the_move() {
    // The white man on d6 jumps e7 and is crowned on f8: the move ends there although a king
    // could go on over g7 to h6.
    let p = pos(&state(&[("d6", 'w'), ("e7", 'b'), ("g7", 'b'), ("a5", 'b')], 'w'));
    assert_eq!(notations(&p), ["d6f8"]);
    assert_eq!(reason(p.parse_move("d6f8h6")), "illegal_move");
    let (q, _) = p.play("d6f8").unwrap();
    assert_eq!(q.piece_at("f8".parse().unwrap()), Some(Piece::WhiteKing));
    assert_eq!(q.piece_at("g7".parse().unwrap()), Some(Piece::BlackMan));
    assert_eq!(q.turn(), Color::Black);
    // A king already crowned keeps jumping through the back rank.
    let k = pos(&state(&[("d6", 'W'), ("e7", 'b'), ("g7", 'b'), ("a5", 'b')], 'w'));
    assert_eq!(notations(&k), ["d6f8h6"]);
}

#[test]
fn crowning_by_a_step() {
    let p = pos(&state(&[("c7", 'w'), ("h2", 'b')], 'w'));
    let (q, _) = p.play("c7d8").unwrap();
    assert_eq!(q.piece_at("d8".parse().unwrap()), Some(Piece::WhiteKing));
    let p = pos(&state(&[("c7", 'w'), ("d2", 'b')], 'b'));
    let (q, _) = p.play("d2c1").unwrap();
    assert_eq!(q.piece_at("c1".parse().unwrap()), Some(Piece::BlackKing));
}

#[test]
fn kings_move_backwards_men_do_not() {
    let king = pos(&state(&[("d4", 'W'), ("h8", 'B')], 'w'));
    assert_eq!(notations(&king), ["d4c3", "d4c5", "d4e3", "d4e5"]);
    let man = pos(&state(&[("d4", 'w'), ("h8", 'B')], 'w'));
    assert_eq!(notations(&man), ["d4c5", "d4e5"]);
    assert_eq!(reason(man.parse_move("d4c3")), "illegal_move");
    let black_king = pos(&state(&[("e5", 'B'), ("a1", 'W')], 'b'));
    assert_eq!(notations(&black_king), ["e5d4", "e5d6", "e5f4", "e5f6"]);
    // Men capture forward only; kings capture backwards too.
    let man_back = pos(&state(&[("d4", 'w'), ("c3", 'b'), ("h8", 'B')], 'w'));
    assert!(!man_back.must_capture());
    let king_back = pos(&state(&[("d4", 'W'), ("c3", 'b'), ("h8", 'B')], 'w'));
    assert_eq!(notations(&king_back), ["d4b2"]);
}

#[test]
fn king_round_trip_paths_are_distinct_moves() {
    // A king on d2 with black men on c3, c5, e5 and e3 can go round clockwise or
    // counter-clockwise and come back to d2: two distinct moves.
    let p = pos(&state(
        &[("d2", 'W'), ("c3", 'b'), ("c5", 'b'), ("e5", 'b'), ("e3", 'b')],
        'w',
    ));
    assert_eq!(notations(&p), ["d2b4d6f4d2", "d2f4d6b4d2"]);
    let (q, mv) = p.play("d2b4d6f4d2").unwrap();
    assert_eq!(mv.capture_count(), 4);
    assert_eq!(q.piece_at("d2".parse().unwrap()), Some(Piece::WhiteKing));
    assert_eq!(q.piece_count(Color::Black), 0);
    assert_eq!(q.status(), Status::GameOver { winner: Color::White });
    // A from/to shorthand for two different paths is ambiguous.
    assert_eq!(reason(p.parse_move("d2d2")), "ambiguous_move");
}

#[test]
fn mandatory_capture_rejects_steps() {
    let p = pos(&state(&[("c3", 'w'), ("d4", 'b'), ("g3", 'w'), ("a7", 'b')], 'w'));
    assert!(p.must_capture());
    assert_eq!(notations(&p), ["c3e5"]);
    assert_eq!(reason(p.parse_move("g3h4")), "capture_mandatory");
    assert_eq!(reason(p.parse_move("c3b4")), "capture_mandatory");
    assert_eq!(reason(p.parse_move("g3e5")), "illegal_move");
}

#[test]
fn notation_is_normalised() {
    let start = Position::start();
    for input in ["C3-D4", "  c3d4 ", "c3 d4", "c3xd4", "C3XD4"] {
        let (_, mv) = start.play(input).unwrap();
        assert_eq!(mv.to_string(), "c3d4", "input {input:?}");
    }
    let p = pos(&state(&[("c3", 'w'), ("d4", 'b'), ("a7", 'b')], 'w'));
    assert_eq!(p.play("c3xe5").unwrap().1.to_string(), "c3e5");
    assert_eq!(normalize_notation(" B6x-D4 F2 "), "b6d4f2");
    assert_eq!("b6d4f2".parse::<Notation>().unwrap().to_string(), "b6d4f2");
}

#[test]
fn every_move_error_reason() {
    let start = Position::start();
    assert_eq!(reason(start.parse_move("")), "invalid_format");
    assert_eq!(reason(start.parse_move("c3")), "invalid_format");
    assert_eq!(reason(start.parse_move("c3d")), "invalid_format");
    assert_eq!(reason(start.parse_move("i3d4")), "invalid_format");
    assert_eq!(reason(start.parse_move("c9d4")), "invalid_format");
    assert_eq!(reason(start.parse_move("é3d4")), "invalid_format");
    assert_eq!(reason(start.parse_move("d4e5")), "no_piece");
    assert_eq!(reason(start.parse_move("b3c4")), "no_piece");
    assert_eq!(reason(start.parse_move("b6a5")), "not_your_piece");
    assert_eq!(reason(start.parse_move("b2c3")), "illegal_move");
    assert_eq!(reason(start.parse_move("c3c4")), "illegal_move");
    assert_eq!(reason(start.parse_move("c3e5")), "illegal_move");
    let over = pos(&state(&[("a1", 'W')], 'b'));
    assert_eq!(over.status(), Status::GameOver { winner: Color::White });
    assert_eq!(reason(over.parse_move("a1b2")), "game_over");
    assert!(over.legal_moves().is_empty());
    // apply() checks membership.
    let other = Position::start().play("c3d4").unwrap().0;
    let black_move = other.legal_moves()[0];
    let err = start.apply(&black_move).unwrap_err();
    assert_eq!((err.reason, err.message.as_str()), ("illegal_move", "Illegal move."));
    assert_eq!(over.apply(&black_move).unwrap_err().reason, "game_over");
    assert!(start.apply(&start.legal_moves()[0]).is_ok());
}

#[test]
fn blocked_side_loses() {
    // Black's only man on a7 is blocked by b6 and cannot jump it (c5 is occupied).
    let p = pos(&state(&[("a7", 'b'), ("b6", 'w'), ("c5", 'w')], 'b'));
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.winner(), Some(Color::White));
    assert!(p.is_game_over());
}

#[test]
fn perft_matches_reference() {
    let expected = [1u64, 7, 49, 302, 1_469, 7_361, 36_768, 179_740, 845_931];
    let start = Position::start();
    for (depth, n) in expected.iter().enumerate() {
        assert_eq!(start.perft(depth as u32), *n, "perft({depth})");
    }
    let divide = start.divide(3);
    assert_eq!(divide.iter().map(|(_, n)| n).sum::<u64>(), 302);
    assert_eq!(divide.len(), 7);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow in debug builds; run with --release")]
fn perft_deep_matches_reference() {
    let start = Position::start();
    assert_eq!(start.perft(9), 3_963_680);
    let t = std::time::Instant::now();
    assert_eq!(start.perft(10), 18_391_564);
    eprintln!("perft(10) took {:?}", t.elapsed());
}

#[test]
fn random_playouts_reach_the_end() {
    for seed in 0..20u64 {
        let mut rng = Seed::Int(seed).rng();
        let mut p = Position::start();
        let mut plies = 0;
        while !p.is_game_over() {
            let mv = p
                .choose_move(Level::Random, SearchLimits::default(), &mut rng)
                .expect("a move while the game goes on");
            let text = mv.to_string();
            assert!(notations(&p).contains(&text));
            let (next, played) = p.play(&text).expect("listed moves are legal");
            assert_eq!(played, mv);
            let reparsed = pos(&next.to_string());
            assert_eq!(reparsed, next);
            p = next;
            plies += 1;
            assert!(plies < 5_000, "seed {seed} did not finish");
        }
        assert!(p.legal_moves().is_empty());
        assert_eq!(p.winner(), Some(p.turn().opposite()));
    }
}

#[test]
fn ai_takes_the_free_piece_and_avoids_losing_one() {
    // White to move: c3d4 would be captured by e5; a3b4 and c3b4 are safe.
    let p = pos(&state(&[("c3", 'w'), ("a3", 'w'), ("e5", 'b'), ("h8", 'b')], 'w'));
    let best = p.search(SearchLimits::with_depth(4)).unwrap();
    assert_ne!(best.best.to_string(), "c3d4");
    // Ranked moves put the blunder last.
    let ranked: Vec<String> = p.ranked_moves().iter().map(Move::to_string).collect();
    assert_eq!(ranked.last().map(String::as_str), Some("c3d4"));
    assert_eq!(ranked.len(), p.legal_moves().len());
}

#[test]
fn depth_limited_search_reports_its_depth() {
    let p = pos(&state(&[("e3", 'w'), ("g3", 'w'), ("f6", 'b'), ("h6", 'b')], 'w'));
    let r = p.search(SearchLimits::with_depth(6)).unwrap();
    assert!(p.legal_moves().contains(&r.best));
    assert_eq!(r.depth, 6);
    assert!(r.nodes > 0);
}

#[test]
fn ai_levels_return_legal_moves() {
    let p = Position::start().play("c3d4").unwrap().0;
    for level in Level::ALL {
        let mut rng = Seed::Str("x".into()).rng();
        let limits = SearchLimits::with_time(std::time::Duration::from_millis(20));
        let mv = p.choose_move(level, limits, &mut rng).unwrap();
        assert!(p.legal_moves().contains(&mv), "{level}");
    }
    let over = pos(&state(&[("a1", 'W')], 'b'));
    assert!(over.search(SearchLimits::default()).is_none());
    assert!(over.ranked_moves().is_empty());
    let mut rng = Seed::Int(1).rng();
    assert!(over.choose_move(Level::Easy, SearchLimits::default(), &mut rng).is_none());
    // Seeded random choice is reproducible.
    let a = p.choose_move(Level::Random, SearchLimits::default(), &mut Seed::Int(9).rng());
    let b = p.choose_move(Level::Random, SearchLimits::default(), &mut Seed::Int(9).rng());
    assert_eq!(a, b);
}

#[test]
fn hard_beats_random() {
    // Hard (shallow, for speed) plays white against a random black: it should win.
    let mut rng = Seed::Int(3).rng();
    let mut p = Position::start();
    for _ in 0..300 {
        if p.is_game_over() {
            break;
        }
        let level = if p.turn() == Color::White { Level::Hard } else { Level::Random };
        let mv = p
            .choose_move(level, SearchLimits::with_depth(4), &mut rng)
            .unwrap();
        p = p.apply(&mv).unwrap();
    }
    assert_eq!(p.winner(), Some(Color::White));
}

proptest! {
    #[test]
    fn parser_never_panics(s in ".{0,120}") {
        if let Ok(p) = s.parse::<Position>() {
            prop_assert_eq!(p.to_string().parse::<Position>().ok(), Some(p));
        }
    }

    #[test]
    fn state_like_strings_never_panic(
        rows in proptest::collection::vec("[wWbB.]{7,9}", 7..10),
        turn in "[wbx ]",
    ) {
        let s = format!("{} {turn}", rows.join("/"));
        if let Ok(p) = s.parse::<Position>() {
            prop_assert_eq!(p.to_string(), s.trim().to_string());
            let _ = p.legal_moves();
            let _ = p.status();
        }
    }

    #[test]
    fn move_parser_never_panics(s in ".{0,40}") {
        let _ = Position::start().parse_move(&s);
    }
}
