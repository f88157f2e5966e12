use super::*;
use crate::Seed;
use proptest::prelude::*;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const POS3: &str = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
const POS4: &str = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
const POS5: &str = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";
const FOOLS_MATE: &str = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";

fn game(fen: &str) -> ChessGame {
    fen.parse().unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn err(fen: &str, mv: &str) -> MoveError {
    game(fen).parse_move(mv).expect_err(mv)
}

fn assert_err(fen: &str, mv: &str, reason: &str, message: &str) {
    let e = err(fen, mv);
    assert_eq!(
        (e.reason, e.message.as_str()),
        (reason, message),
        "{fen} {mv}"
    );
}

#[test]
fn canonical_fens_round_trip() {
    for fen in [
        START,
        KIWIPETE,
        POS3,
        POS4,
        POS5,
        FOOLS_MATE,
        // A legal en-passant capture keeps its square.
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    ] {
        assert_eq!(game(fen).to_string(), fen);
    }
    assert_eq!(ChessGame::new().to_string(), START);
}

#[test]
fn en_passant_square_is_written_only_when_the_capture_is_legal() {
    // After 1.e4 no black pawn can take en passant: the square is dropped.
    let g = game("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
    assert_eq!(
        g.to_string(),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    let mut g = ChessGame::new();
    g.apply("e2e4").unwrap();
    assert_eq!(
        g.to_string(),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    );
    // A double push next to an enemy pawn keeps it, and the capture is then legal.
    let mut g = game("rnbqkbnr/ppp1pppp/8/8/3p4/8/PPPPPPPP/RNBQKBNR w KQkq - 0 3");
    g.apply("e2e4").unwrap();
    assert_eq!(
        g.to_string(),
        "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3"
    );
    let rec = g.apply("d4e3").unwrap();
    assert_eq!(rec.san, "dxe3");
    // A pinned pawn cannot take en passant, so the square is not written.
    let g = game("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1");
    assert_eq!(g.to_string(), "8/8/8/K2pP2r/8/8/8/7k w - - 0 1");
}

#[test]
fn lenient_fen_input_is_normalised() {
    assert_eq!(
        game("  rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq ").to_string(),
        START
    );
    // Missing fields default as in python-chess: white to move, no castling rights.
    assert_eq!(
        game("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR").to_string(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"
    );
    assert_eq!(
        game("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0").to_string(),
        START
    );
    // Castling rights the position cannot have are dropped.
    assert_eq!(
        game("4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1").to_string(),
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
    );
}

#[test]
fn invalid_fens_are_reported() {
    let cases = [
        ("", "Invalid FEN: empty string"),
        ("   ", "Invalid FEN: empty string"),
        ("hello", "Invalid FEN: invalid board part in fen"),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
            "Invalid FEN: invalid turn part in fen",
        ),
        (
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "Invalid FEN: illegal position: empty board, missing king",
        ),
        (
            "4k3/8/8/8/8/8/8/8 w - - 0 1",
            "Invalid FEN: illegal position: missing king",
        ),
        (
            "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
            "Invalid FEN: illegal position: opposite check",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra",
            "Invalid FEN: invalid fen",
        ),
    ];
    for (fen, msg) in cases {
        let e = fen.parse::<ChessGame>().expect_err(fen);
        assert_eq!(e.message(), msg, "{fen:?}");
    }
}

#[test]
fn move_format_errors() {
    for mv in ["", "   ", "hello", "e2e9", "e2-e4-e5", "z9z9", "e2e4qq"] {
        assert_err(START, mv, "invalid_format", "Invalid move format");
    }
}

#[test]
fn every_illegal_move_reason() {
    assert_err(START, "e3e4", "no_piece", "Illegal move: no piece on e3");
    assert_err(START, "e7e5", "wrong_side", "Illegal move: not your turn");
    assert_err(
        START,
        "e2e5",
        "illegal_move",
        "Illegal move: piece cannot move there",
    );
    assert_err(
        START,
        "g1g3",
        "illegal_move",
        "Illegal move: piece cannot move there",
    );
    assert_err(
        START,
        "d1d2",
        "illegal_move",
        "Illegal move: piece cannot move there",
    );
    // A pinned bishop, a king stepping into an attacked square, a check left unanswered.
    assert_err(
        "4k3/8/8/8/4r3/8/4B3/4K3 w - - 0 1",
        "e2d3",
        "king_in_check",
        "Illegal move: king would be in check",
    );
    assert_err(
        "4k3/8/8/8/8/8/r7/4K3 w - - 0 1",
        "e1e2",
        "king_in_check",
        "Illegal move: king would be in check",
    );
    assert_err(
        "4k3/8/8/8/4r3/8/8/R3K3 w Q - 0 1",
        "a1a2",
        "king_in_check",
        "Illegal move: king would be in check",
    );
    // Promotions.
    let promo = "8/4P3/8/8/8/8/k7/4K3 w - - 0 1";
    assert_err(
        promo,
        "e7e8",
        "promotion_required",
        "Illegal move: promotion piece required",
    );
    assert_err(
        promo,
        "e7e8k",
        "invalid_promotion",
        "Illegal move: invalid promotion piece",
    );
    assert_err(
        START,
        "e2e4q",
        "invalid_promotion",
        "Illegal move: only a pawn reaching the last rank can promote",
    );
    assert_eq!(game(promo).apply("e7e8q").unwrap().san, "e8=Q");
    assert_eq!(game(promo).apply("e7e8N").unwrap().uci, "e7e8n");
    // Castling.
    assert_err(
        START,
        "e1g1",
        "castling_not_allowed",
        "Illegal move: castling path is blocked",
    );
    assert_err(
        "r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1",
        "e1g1",
        "castling_not_allowed",
        "Illegal move: castling rights have been lost",
    );
    assert_err(
        "4k3/8/8/8/4r3/8/8/R3K3 w Q - 0 1",
        "e1c1",
        "king_in_check",
        "Illegal move: cannot castle out of check",
    );
    assert_err(
        "4k3/8/8/5r2/8/8/8/R3K2R w KQ - 0 1",
        "e1g1",
        "king_in_check",
        "Illegal move: cannot castle through check",
    );
    assert_err(
        "4k3/8/8/6r1/8/8/8/R3K2R w KQ - 0 1",
        "e1g1",
        "king_in_check",
        "Illegal move: king would be in check",
    );
    assert_err(
        "4k3/8/8/5r2/8/8/8/R3K2R w KQ - 0 1",
        "O-O",
        "king_in_check",
        "Illegal move: cannot castle through check",
    );
    // Null moves and drops parse but are never legal.
    assert_err(
        START,
        "0000",
        "illegal_move",
        "Illegal move: null moves are not allowed",
    );
    assert_err(
        START,
        "Q@e4",
        "illegal_move",
        "Illegal move: piece drops are not allowed in standard chess",
    );
    // The game is over.
    assert_err(
        FOOLS_MATE,
        "e2e4",
        "game_over",
        "Illegal move: the game is over",
    );
    assert_err(
        "8/8/8/4k3/8/8/8/4K3 w - - 0 1",
        "e1e2",
        "game_over",
        "Illegal move: the game is over",
    );
}

#[test]
fn san_errors_are_explained() {
    assert_err(
        "4k3/8/8/8/8/8/8/N1N1K3 w - - 0 1",
        "Nb3",
        "ambiguous_move",
        "Illegal move: ambiguous move Nb3, add the origin file or rank",
    );
    assert_err(
        START,
        "Nf4",
        "illegal_move",
        "Illegal move: piece cannot move there",
    );
    assert_err(
        START,
        "Nxf3",
        "illegal_move",
        "Illegal move: nothing to capture on f3",
    );
    assert_err(
        START,
        "exd5",
        "illegal_move",
        "Illegal move: piece cannot move there",
    );
    assert_err(
        "4k3/8/8/8/4r3/8/4B3/4K3 w - - 0 1",
        "Bd3",
        "king_in_check",
        "Illegal move: king would be in check",
    );
    assert_err(
        "8/4P3/8/8/8/8/k7/4K3 w - - 0 1",
        "e8",
        "promotion_required",
        "Illegal move: promotion piece required",
    );
    assert_err(
        START,
        "O-O",
        "castling_not_allowed",
        "Illegal move: castling path is blocked",
    );
}

#[test]
fn uci_and_san_input() {
    let mut g = ChessGame::new();
    let rec = g.apply(" E2E4 ").unwrap();
    assert_eq!((rec.uci.as_str(), rec.san.as_str()), ("e2e4", "e4"));
    let rec = g.apply("d5").unwrap();
    assert_eq!((rec.uci.as_str(), rec.san.as_str()), ("d7d5", "d5"));
    let rec = g.apply("exd5").unwrap();
    assert_eq!((rec.uci.as_str(), rec.san.as_str()), ("e4d5", "exd5"));
    let rec = g.apply("Nf6").unwrap();
    assert_eq!(rec.uci, "g8f6");
    let rec = g.apply("Bb5+").unwrap();
    assert_eq!((rec.uci.as_str(), rec.san.as_str()), ("f1b5", "Bb5+"));
    g.apply("c6").unwrap();
    let rec = g.apply("Nf3").unwrap();
    assert_eq!(rec.uci, "g1f3");
    g.apply("a6").unwrap();
    let rec = g.apply("O-O").unwrap();
    assert_eq!((rec.uci.as_str(), rec.san.as_str()), ("e1g1", "O-O"));
    assert_eq!(
        g.to_string(),
        "rnbqkb1r/1p2pppp/p1p2n2/1B1P4/8/5N2/PPPP1PPP/RNBQ1RK1 b kq - 1 5"
    );

    // UCI castling both as king-two-squares and as king-takes-rook.
    for mv in ["e1g1", "e1h1"] {
        let mut g = game("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
        let rec = g.apply(mv).unwrap();
        assert_eq!((rec.uci.as_str(), rec.san.as_str()), ("e1g1", "O-O"));
        assert_eq!(g.to_string(), "4k3/8/8/8/8/8/8/R4RK1 b - - 1 1");
    }
    let mut g = game("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
    assert_eq!(g.apply("e1c1").unwrap().san, "O-O-O");
    for (text, uci) in [
        ("0-0", "e1g1"),
        ("o-o-o", "e1c1"),
        ("O-O-O+", "e1c1"),
        ("0-0-0", "e1c1"),
    ] {
        let mv = game("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1")
            .parse_move(text)
            .unwrap();
        assert_eq!(super::uci(&mv), uci, "{text}");
    }
    assert_err(
        "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "0-",
        "invalid_format",
        "Invalid move format",
    );
}

#[test]
fn legal_moves_are_sorted_uci() {
    let moves = ChessGame::new().legal_moves_uci();
    assert_eq!(moves.len(), 20);
    assert_eq!(moves.first().map(String::as_str), Some("a2a3"));
    assert!(moves.windows(2).all(|w| w[0] < w[1]));
    let kiwi = game(KIWIPETE).legal_moves_uci();
    assert_eq!(kiwi.len(), 48);
    assert!(kiwi.contains(&"e1g1".to_string()) && kiwi.contains(&"e1c1".to_string()));
}

#[test]
fn checkmate_stalemate_insufficient_and_seventy_five_moves() {
    let mut g = ChessGame::new();
    for mv in ["f2f3", "e7e5", "g2g4"] {
        g.apply(mv).unwrap();
        assert_eq!(g.outcome(), None);
    }
    let rec = g.apply("d8h4").unwrap();
    assert_eq!(rec.san, "Qh4#");
    assert!(g.is_check());
    assert_eq!(
        g.outcome(),
        Some(GameEnd {
            winner: Winner::Black,
            reason: EndReason::Checkmate
        })
    );
    assert!(g.legal_moves().is_empty());

    let stalemate = game("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    assert!(!stalemate.is_check());
    assert_eq!(
        stalemate.outcome().map(|e| (e.winner, e.reason)),
        Some((Winner::Draw, EndReason::Stalemate))
    );

    // Stalemating with the only winning material left.
    let mut g = game("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1");
    assert_eq!(g.apply("f1f7").unwrap().san, "Qf7");
    assert_eq!(g.outcome().map(|e| e.reason), Some(EndReason::Stalemate));

    // Capturing the last pawn leaves king and bishop against king.
    let mut g = game("4k3/8/8/8/8/8/3p4/4KB2 w - - 0 1");
    g.apply("e1d2").unwrap();
    let end = g.outcome().unwrap();
    assert_eq!(
        (end.winner.as_str(), end.reason.as_str()),
        ("draw", "insufficient_material")
    );
    assert!(g.legal_moves_uci().is_empty());

    let g = game("4k3/8/8/8/8/8/8/R3K3 w - - 150 100");
    assert_eq!(
        g.outcome().map(|e| e.reason.as_str()),
        Some("seventy_five_move_rule")
    );
    let mut g = game("4k3/8/8/8/8/8/8/R3K3 w - - 149 100");
    assert_eq!(g.outcome(), None);
    g.apply("a1a2").unwrap();
    assert_eq!(g.to_string(), "4k3/8/8/8/8/8/R7/4K3 b - - 150 100");
    assert_eq!(
        g.outcome().map(|e| (e.winner, e.reason)),
        Some((Winner::Draw, EndReason::SeventyFiveMoveRule))
    );
    // Checkmate on the 150th halfmove still counts as checkmate.
    let mut g = game("6k1/5ppp/8/8/8/8/8/R5K1 w - - 149 100");
    g.apply("Ra8").unwrap();
    assert_eq!(
        g.outcome().map(|e| (e.winner.as_str(), e.reason)),
        Some(("w", EndReason::Checkmate))
    );
}

#[test]
fn perft_matches_published_numbers() {
    let start = ChessGame::new();
    assert_eq!(
        (1..=4).map(|d| perft(&start, d)).collect::<Vec<_>>(),
        vec![20, 400, 8_902, 197_281]
    );
    assert_eq!(perft(&start, 0), 1);
    assert_eq!(perft(&game(KIWIPETE), 3), 97_862);
    assert_eq!(perft(&game(POS3), 4), 43_238);
    assert_eq!(perft(&game(POS4), 3), 9_467);
    assert_eq!(perft(&game(POS5), 3), 62_379);
}

#[test]
fn hard_ai_finds_mate_in_one() {
    for (fen, mate) in [
        ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
        (
            "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
            "f3f7",
        ),
        ("r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1", "a8a1"),
    ] {
        let g = game(fen);
        let mut rng = Seed::Int(1).rng();
        let mv = g
            .choose_move(Level::Hard, SearchLimits::with_depth(3), &mut rng)
            .unwrap();
        assert_eq!(uci(&mv), mate, "{fen}");
        let report = analyse(g.position(), SearchLimits::default()).unwrap();
        assert_eq!(uci(&report.best), mate);
        assert!(report.score > 30_000, "mate score {}", report.score);
        assert_eq!(uci(&g.ranked_moves()[0]), mate);
        let easy = g
            .choose_move(Level::Easy, SearchLimits::default(), &mut rng)
            .unwrap();
        assert_eq!(uci(&easy), mate);
    }
}

#[test]
fn hard_ai_takes_a_hanging_queen_and_saves_an_attacked_piece() {
    let g = game("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1");
    let mut rng = Seed::Int(2).rng();
    let mv = g
        .choose_move(Level::Hard, SearchLimits::with_depth(3), &mut rng)
        .unwrap();
    assert_eq!(uci(&mv), "d2d5");
    assert_eq!(uci(&g.ranked_moves()[0]), "d2d5");
    // Black to move, queen hanging to a knight.
    let g = game("4k3/8/8/8/3Q4/8/4n3/4K3 b - - 0 1");
    let mv = g
        .choose_move(Level::Hard, SearchLimits::default(), &mut rng)
        .unwrap();
    assert_eq!(uci(&mv), "e2d4");
    // The knight on e4 is attacked by a pawn: it must move.
    let g = game("4k3/8/8/3p4/4N3/8/8/4K3 w - - 0 1");
    let mv = g
        .choose_move(Level::Hard, SearchLimits::with_depth(3), &mut rng)
        .unwrap();
    assert_eq!(mv.from(), Some(Square::E4), "{}", uci(&mv));
    // Do not take a pawn defended by a pawn with the queen.
    let g = game("4k3/8/2p5/3p4/8/8/8/3QK3 w - - 0 1");
    let mv = g
        .choose_move(Level::Hard, SearchLimits::with_depth(3), &mut rng)
        .unwrap();
    assert_ne!(uci(&mv), "d1d5");
    assert_ne!(uci(&g.ranked_moves()[0]), "d1d5");
}

#[test]
fn huge_time_budgets_do_not_overflow() {
    let g = game("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    let limits = SearchLimits {
        time: std::time::Duration::MAX,
        max_depth: Some(2),
    };
    let mut rng = Seed::Int(4).rng();
    for level in Level::ALL {
        assert!(g.choose_move(level, limits, &mut rng).is_some());
    }
}

#[test]
fn ai_respects_game_over_and_levels() {
    let mut rng = Seed::Int(3).rng();
    assert_eq!(
        game(FOOLS_MATE).choose_move(Level::Hard, SearchLimits::default(), &mut rng),
        None
    );
    assert!(game(FOOLS_MATE).ranked_moves().is_empty());
    let g = ChessGame::new();
    let legal = g.legal_moves();
    for level in Level::ALL {
        let mv = g
            .choose_move(level, SearchLimits::default(), &mut rng)
            .unwrap();
        assert!(legal.contains(&mv), "{level}");
    }
    // Seeded random play is reproducible.
    let pick = |seed| {
        let mut r = Seed::Int(seed).rng();
        (0..5)
            .map(|_| {
                uci(&g
                    .choose_move(Level::Random, SearchLimits::default(), &mut r)
                    .unwrap())
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(pick(9), pick(9));
    assert_eq!(g.ranked_moves().len(), 20);
}

#[test]
fn seeded_random_playouts_only_see_legal_moves() {
    use rand::RngExt;
    for seed in 0..12u64 {
        let mut rng = Seed::Int(seed).rng();
        let mut g = ChessGame::new();
        for _ in 0..400 {
            let moves = g.legal_moves_uci();
            if moves.is_empty() {
                assert!(g.is_game_over());
                break;
            }
            let mv = &moves[rng.random_range(0..moves.len())];
            let before = g.to_string();
            let rec = g.apply(mv).unwrap_or_else(|e| panic!("{before} {mv}: {e}"));
            assert_eq!(&rec.uci, mv);
            // The state string always round-trips.
            assert_eq!(game(&g.to_string()).to_string(), g.to_string());
            // SAN written for the move is accepted as input in the position before.
            let replay = game(&before).parse_move(&rec.san).unwrap();
            assert_eq!(replay, rec.mv, "{before} {}", rec.san);
        }
    }
}

#[test]
fn evaluation_is_symmetric() {
    assert_eq!(evaluate(ChessGame::new().position()), 0);
    let w = game("4k3/8/8/8/8/8/8/3QK3 w - - 0 1");
    let b = game("3qk3/8/8/8/8/8/8/4K3 b - - 0 1");
    assert!(evaluate(w.position()) > 800);
    assert_eq!(evaluate(w.position()), evaluate(b.position()));
}

proptest! {
    #[test]
    fn fen_parser_never_panics(s in ".{0,100}") {
        if let Ok(g) = s.parse::<ChessGame>() {
            let out = g.to_string();
            prop_assert_eq!(game(&out).to_string(), out);
        }
    }

    #[test]
    fn fen_like_strings_never_panic(s in "[rnbqkpRNBQKP1-8/]{1,40}( [wb])?( [KQkqA-Ha-h-]{1,4})?( [a-h1-8-]{1,2})?( [0-9]{1,4})?( [0-9]{1,4})?") {
        if let Ok(g) = s.parse::<ChessGame>() {
            let out = g.to_string();
            prop_assert_eq!(game(&out).to_string(), out.clone());
            let _ = g.legal_moves_uci();
            let _ = g.outcome();
        }
    }

    #[test]
    fn move_parser_never_panics(s in ".{0,12}", which in 0usize..4) {
        let fen = [START, KIWIPETE, POS4, FOOLS_MATE][which];
        let mut g = game(fen);
        match g.apply(&s) {
            Ok(rec) => prop_assert!(game(fen).legal_moves().contains(&rec.mv)),
            Err(e) => {
                prop_assert!(e.message == "Invalid move format" || e.message.starts_with("Illegal move: "));
                prop_assert_eq!(g.to_string(), fen);
            }
        }
    }

    #[test]
    fn move_like_strings_never_panic(s in "[a-hA-H1-8xX=+#@0oO-]{1,7}[qrbnkQRBNK]?", which in 0usize..4) {
        let fen = [START, KIWIPETE, POS4, POS5][which];
        let mut g = game(fen);
        if let Err(e) = g.apply(&s) {
            prop_assert!(e.message == "Invalid move format" || e.message.starts_with("Illegal move: "));
            prop_assert_eq!(g.to_string(), fen);
        }
    }
}
