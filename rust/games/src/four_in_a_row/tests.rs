use std::collections::HashSet;

use proptest::prelude::*;
use rand::RngExt;

use super::*;
use crate::Seed;

const START: &str = "G:......./......./......./......./......./.......|T:player|ST:in_progress|LA:-|W:-";

/// The position after a sequence of 1-based column digits.
fn play(seq: &str) -> FourInARow {
    let mut pos = FourInARow::new();
    for ch in seq.chars() {
        let col = Column::from_number(i64::from(ch.to_digit(10).unwrap())).unwrap();
        pos = pos.apply(col).unwrap();
    }
    pos
}

fn col(n: i64) -> Column {
    Column::from_number(n).unwrap()
}

#[test]
fn start_position_round_trips() {
    assert_eq!(FourInARow::new().to_string(), START);
    let pos: FourInARow = START.parse().unwrap();
    assert_eq!(pos, FourInARow::new());
    assert_eq!(pos.turn(), Side::Player);
    assert_eq!(pos.status(), Status::InProgress);
    assert_eq!(pos.winner(), None);
    assert_eq!(pos.legal_moves().len(), 7);
    // Surrounding whitespace is tolerated.
    assert_eq!(format!("  {START}\n").parse::<FourInARow>().unwrap(), pos);
}

#[test]
fn first_move_drops_to_the_bottom_of_the_string() {
    let pos = FourInARow::new().apply(col(4)).unwrap();
    let s = pos.to_string();
    assert_eq!(
        s,
        "G:......./......./......./......./......./...R...|T:opponent|ST:in_progress|LA:4|W:-"
    );
    assert_eq!(s.parse::<FourInARow>().unwrap(), pos);
    let pos = pos.apply(col(4)).unwrap();
    assert_eq!(
        pos.to_string(),
        "G:......./......./......./......./...Y.../...R...|T:player|ST:in_progress|LA:4|W:-"
    );
    assert_eq!(pos.disc_at(3, 0), Some(Side::Player));
    assert_eq!(pos.disc_at(3, 1), Some(Side::Opponent));
    assert_eq!(pos.column_height(col(4)), 2);
}

#[test]
fn vertical_horizontal_and_diagonal_wins() {
    let v = play("1212121");
    assert_eq!(v.winner(), Some(Winner::Player));
    assert_eq!(v.status(), Status::GameOver);
    assert!(v.legal_moves().is_empty());
    assert_eq!(
        v.to_string(),
        "G:......./......./R....../RY...../RY...../RY.....|T:opponent|ST:game_over|LA:1|W:player"
    );
    let h = play("1122334");
    assert_eq!(h.winner(), Some(Winner::Player));
    // R: (1,1) (2,2) (3,3) (4,4) rising diagonal on the 11th move.
    let before = play("1223433454");
    assert_eq!(before.winner(), None);
    let d = before.apply(col(4)).unwrap();
    assert_eq!(d.winner(), Some(Winner::Player));
    assert_eq!(d.moves_played(), 11);
    // Y: (4,4) (5,3) (6,2) (7,1) falling diagonal (the mirror image, after an R move in 1).
    let before = play("17665455434");
    assert_eq!(before.winner(), None);
    assert_eq!(before.turn(), Side::Opponent);
    let d2 = before.apply(col(4)).unwrap();
    assert_eq!(d2.winner(), Some(Winner::Opponent), "{d2}");
    for s in [v, h, d, d2] {
        assert_eq!(s.to_string().parse::<FourInARow>().unwrap(), s);
    }
}

#[test]
fn opponent_can_win_and_draws_are_reported() {
    // Y builds a vertical four in column 7 while R spreads out.
    let pos = play("17172757");
    assert_eq!(pos.winner(), Some(Winner::Opponent));
    assert!(pos.to_string().ends_with("|T:player|ST:game_over|LA:7|W:opponent"));
    // A full board without a four.
    let draw = play("121212343434565656777777212121434343656565");
    assert_eq!(draw.moves_played(), 42);
    assert_eq!(draw.winner(), Some(Winner::Draw));
    let s = draw.to_string();
    assert_eq!(
        s,
        "G:YRYRYRY/YRYRYRR/YRYRYRY/RYRYRYR/RYRYRYY/RYRYRYR|T:player|ST:game_over|LA:5|W:draw"
    );
    assert_eq!(s.parse::<FourInARow>().unwrap(), draw);
}

#[test]
fn illegal_moves_carry_reasons() {
    let full = play("111111");
    let err = full.apply(col(1)).unwrap_err();
    assert_eq!((err.reason, err.message.as_str()), ("column_full", "Illegal move."));
    assert_eq!(full.legal_moves(), (2..=7).map(col).collect::<Vec<_>>());
    for bad in [0, 8, -1, 100] {
        let err = Column::from_number(bad).unwrap_err();
        assert_eq!((err.reason, err.message.as_str()), ("invalid_column", "Illegal move."));
    }
    for bad in ["", "x", "0", "8", "3.5"] {
        assert_eq!(bad.parse::<Column>().unwrap_err().reason, "invalid_column");
    }
    assert_eq!(" 3 ".parse::<Column>().unwrap(), col(3));
    let over = play("1212121");
    let err = over.apply(col(3)).unwrap_err();
    assert_eq!((err.reason, err.message.as_str()), ("game_over", "Illegal move."));
    // game_over wins over column_full.
    let over_full = play("2121212");
    assert_eq!(over_full.apply(col(1)).unwrap_err().reason, "game_over");
}

#[test]
fn parse_errors_name_the_problem() {
    let cases: &[(&str, &str)] = &[
        ("", "expected 5 fields"),
        ("G:x|T:player", "expected 5 fields"),
        (
            "X:......./......./......./......./......./.......|T:player|ST:in_progress|LA:-|W:-",
            "expected field G:",
        ),
        (
            "G:......./......./......./......./.......|T:player|ST:in_progress|LA:-|W:-",
            "6 rows",
        ),
        (
            "G:......./......./......./......./......./......|T:player|ST:in_progress|LA:-|W:-",
            "row 6 must have 7 cells",
        ),
        (
            "G:......./......./......./......./......./...X...|T:player|ST:in_progress|LA:-|W:-",
            "unexpected grid character 'X'",
        ),
        (
            "G:......./......./......./......./...R.../...Y...|T:player|ST:in_progress|LA:-|W:-",
            "no order of legal moves reaches this position",
        ),
        (
            "G:......./......./......./......./RR...../YY.....|T:player|ST:in_progress|LA:-|W:-",
            "no order of legal moves reaches this position",
        ),

        (
            "G:......./......./......./......./...R.../.......|T:opponent|ST:in_progress|LA:-|W:-",
            "floating disc in column 4",
        ),
        (
            "G:......./......./......./......./......./RR.....|T:opponent|ST:in_progress|LA:-|W:-",
            "disc counts R=2, Y=0",
        ),
        (
            "G:......./......./......./......./......./Y......|T:opponent|ST:in_progress|LA:-|W:-",
            "disc counts R=0, Y=1",
        ),
        (
            "G:......./......./......./......./......./R......|T:me|ST:in_progress|LA:-|W:-",
            "turn must be player or opponent",
        ),
        (
            "G:......./......./......./......./......./R......|T:opponent|ST:in_progress|LA:8|W:-",
            "last action must be a column 1-7",
        ),
        (
            "G:......./......./......./......./......./R......|T:opponent|ST:in_progress|LA:2|W:-",
            "last action column 2 is empty",
        ),
        (
            "G:......./......./......./......./......./RY.....|T:player|ST:in_progress|LA:1|W:-",
            "not the opponent's",
        ),
        (
            "G:......./......./......./......./......./R......|T:opponent|ST:running|LA:-|W:-",
            "status must be in_progress or game_over",
        ),
        (
            "G:......./......./......./......./......./R......|T:opponent|ST:in_progress|LA:-|W:nobody",
            "winner must be player, opponent, draw or '-'",
        ),
        (
            "G:......./......./......./......./......./R......|T:opponent|ST:game_over|LA:-|W:-",
            "status is game_over but the board says in_progress",
        ),
        (
            "G:......./......./......./......./......./R......|T:opponent|ST:game_over|LA:-|W:player",
            "winner is player but the board says -",
        ),
        // R has four but Y moved last.
        (
            "G:......./......./......./......./YYY..../RRRR...|T:player|ST:game_over|LA:-|W:player",
            "disc counts",
        ),
        (
            "G:......./......./......./......./YYYY.../RRRR...|T:player|ST:game_over|LA:-|W:player",
            "both sides have four in a row",
        ),
        (
            "G:......./......./......./......./YYY..../RRRRY..|T:player|ST:game_over|LA:-|W:player",
            "did not move last",
        ),
        // A four that is on the board but the game went on (not reachable).
        (
            "G:......./......./......./......./YYRY.../RRRRYYR|T:opponent|ST:game_over|LA:-|W:player",
            "would have ended before",
        ),
        // A winning line but the winner field says otherwise.
        (
            "G:......./......./......./......./YYY..../RRRR...|T:opponent|ST:in_progress|LA:4|W:-",
            "winner is - but the board says player",
        ),
        // The LA disc is not part of the four.
        (
            "G:......./......./......./R....../YYY..../RRRRY..|T:opponent|ST:game_over|LA:1|W:player",
            "would have ended before",
        ),
    ];
    for (state, needle) in cases {
        let err = match state.parse::<FourInARow>() {
            Ok(pos) => panic!("{state} parsed as {pos}"),
            Err(e) => e.to_string(),
        };
        assert!(err.starts_with("Invalid state: "), "{state}: {err}");
        assert!(err.contains(needle), "{state}: expected {needle:?} in {err:?}");
    }
}

#[test]
fn accepts_reachable_hand_made_positions() {
    for s in [
        "G:......./......./......./......./YYY..../RRRR...|T:opponent|ST:game_over|LA:4|W:player",
        "G:......./......./......./......./YYY..../RRRR...|T:opponent|ST:game_over|LA:-|W:player",
        "G:......./......./......./......./YYY..../RRR....|T:player|ST:in_progress|LA:-|W:-",
        "G:......./......./......./......./YY...../RR.....|T:player|ST:in_progress|LA:1|W:-",
        "G:......./......./......./R....../YYY..../RRRRY..|T:opponent|ST:game_over|LA:-|W:player",
    ] {
        let pos: FourInARow = s.parse().unwrap();
        assert_eq!(pos.to_string(), s);
    }
}

/// Move-sequence perft: leaves at exactly `depth` plies; finished games stop the count.
fn perft(pos: &FourInARow, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    pos.legal_moves()
        .into_iter()
        .map(|c| perft(&pos.apply(c).unwrap(), depth - 1))
        .sum()
}

/// An independent, deliberately naive array implementation used to cross-check the bitboards.
struct Naive {
    cells: [[u8; 7]; 6], // [row from bottom][col]; 0 empty, 1 R, 2 Y
    to_move: u8,
    over: bool,
}

impl Naive {
    fn wins(&self, who: u8) -> bool {
        let dirs = [(0i32, 1i32), (1, 0), (1, 1), (1, -1)];
        for r in 0..6i32 {
            for c in 0..7i32 {
                for (dr, dc) in dirs {
                    if (0..4).all(|k| {
                        let (rr, cc) = (r + k * dr, c + k * dc);
                        (0..6).contains(&rr) && (0..7).contains(&cc) && self.cells[rr as usize][cc as usize] == who
                    }) {
                        return true;
                    }
                }
            }
        }
        false
    }

    fn perft(&mut self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        if self.over {
            return 0;
        }
        let mut total = 0;
        for c in 0..7 {
            let Some(r) = (0..6).find(|&r| self.cells[r][c] == 0) else { continue };
            let who = self.to_move;
            self.cells[r][c] = who;
            let was_over = self.over;
            self.over = self.wins(who) || self.cells.iter().all(|row| row.iter().all(|&x| x != 0));
            self.to_move = 3 - who;
            total += self.perft(depth - 1);
            self.to_move = who;
            self.over = was_over;
            self.cells[r][c] = 0;
        }
        total
    }
}

#[test]
fn perft_matches_an_independent_naive_implementation() {
    let start = FourInARow::new();
    let mut naive = Naive {
        cells: [[0; 7]; 6],
        to_move: 1,
        over: false,
    };
    for depth in 0..=6 {
        assert_eq!(perft(&start, depth), naive.perft(depth), "depth {depth}");
    }
    // No game can end before ply 7.
    assert_eq!(perft(&start, 6), 7u64.pow(6));
    // From a middle-game position too (wins happen within the horizon here).
    let mid = play("44332");
    let mut naive_mid = Naive {
        cells: [[0; 7]; 6],
        to_move: 1,
        over: false,
    };
    for (i, ch) in "44332".chars().enumerate() {
        let c = ch.to_digit(10).unwrap() as usize - 1;
        let r = (0..6).find(|&r| naive_mid.cells[r][c] == 0).unwrap();
        naive_mid.cells[r][c] = if i % 2 == 0 { 1 } else { 2 };
    }
    naive_mid.to_move = 2;
    for depth in 0..=4 {
        assert_eq!(perft(&mid, depth), naive_mid.perft(depth), "mid depth {depth}");
    }
}

#[test]
#[ignore = "slow in debug builds: 7^7 and deeper perft, run with --release"]
fn perft_deep_matches_naive() {
    let start = FourInARow::new();
    let mut naive = Naive {
        cells: [[0; 7]; 6],
        to_move: 1,
        over: false,
    };
    assert_eq!(perft(&start, 7), 823_543);
    for depth in 7..=8 {
        assert_eq!(perft(&start, depth), naive.perft(depth), "depth {depth}");
    }
}

/// Distinct positions reachable after n plies (finished games are not continued).
fn distinct_positions(max_ply: usize) -> Vec<usize> {
    let mut level: HashSet<[u64; 2]> = HashSet::from([[0, 0]]);
    let mut counts = vec![1];
    for _ in 0..max_ply {
        let mut next = HashSet::new();
        for discs in &level {
            let pos = FourInARow {
                discs: *discs,
                last: None,
                winner: None,
            };
            for c in pos.legal_moves() {
                let child = pos.apply(c).unwrap();
                next.insert(child.discs);
            }
        }
        // Finished games stay in the count of their ply but are not continued.
        counts.push(next.len());
        level = next
            .into_iter()
            .filter(|d| !bitboard::has_four(d[0]) && !bitboard::has_four(d[1]))
            .collect();
    }
    counts
}

/// OEIS A212693 (John Tromp): number of legal 7×6 Connect-Four positions after n plies.
const A212693: [usize; 11] = [
    1, 7, 49, 238, 1120, 4263, 16422, 54859, 184_275, 558_186, 1_662_623,
];

#[test]
fn distinct_positions_match_oeis_a212693() {
    assert_eq!(distinct_positions(8), A212693[..=8].to_vec());
}

#[test]
#[ignore = "slow in debug builds (1.6 M positions), run with --release"]
fn distinct_positions_match_oeis_a212693_to_ply_10() {
    assert_eq!(distinct_positions(10), A212693.to_vec());
}

#[test]
fn ranked_moves_put_wins_then_blocks_first() {
    // R: 1,2,3 on the bottom row; Y: three in column 5. R wins at 4; Y threatens 5.
    let pos = play("152535");
    let ranked = pos.ranked_moves();
    assert_eq!(ranked[0], col(4));
    assert_eq!(ranked[1], col(5));
    assert_eq!(ranked.len(), 7);
    // From the start the centre is first.
    assert_eq!(FourInARow::new().ranked_moves()[0], col(4));
}

#[test]
fn every_level_takes_an_immediate_win_or_blocks() {
    let limits = SearchLimits::with_depth(6);
    // R: 1,2,3 on the bottom row, Y: three in column 5; R to move wins at 4.
    let win = play("152535");
    for seed in 0..5u64 {
        let mut rng = Seed::Int(seed).rng();
        assert_eq!(win.choose_move(Level::Hard, limits, &mut rng), Some(col(4)));
        assert_eq!(win.choose_move(Level::Easy, limits, &mut rng), Some(col(4)));
    }
    // Y to move must block R's 1,2,3 at 4.
    let must_block = play("15253");
    assert_eq!(must_block.turn(), Side::Opponent);
    let mut rng = Seed::Int(1).rng();
    assert_eq!(must_block.choose_move(Level::Hard, limits, &mut rng), Some(col(4)));
    // Vertical threat: R has three in column 2; Y to move blocks at 2.
    let v = play("26272");
    assert_eq!(v.turn(), Side::Opponent);
    assert_eq!(v.choose_move(Level::Hard, limits, &mut rng), Some(col(2)));
    // And with the default time budget.
    assert_eq!(v.choose_move(Level::Hard, SearchLimits::default(), &mut rng), Some(col(2)));
}

#[test]
fn hard_prefers_the_quickest_win_and_reports_proofs() {
    let pos = play("152535");
    let r = search::best_move(&pos, SearchLimits::with_depth(8)).unwrap();
    assert_eq!(r.best, col(4));
    assert!(r.proven && r.is_win());
    assert_eq!(r.depth, 1);
    // R: 4,5,6 on the bottom row threatens 3 and 7: Y to move is lost.
    let two = play("41516");
    assert_eq!(two.turn(), Side::Opponent);
    let r = search::best_move(&two, SearchLimits::with_depth(6)).unwrap();
    assert!(r.proven && r.is_loss(), "{r:?}");
    let after = two.apply(r.best).unwrap();
    let r2 = search::best_move(&after, SearchLimits::with_depth(2)).unwrap();
    assert!(r2.is_win() && r2.proven);
    assert!(r2.best == col(3) || r2.best == col(7));
}

#[test]
fn hard_solves_late_positions_exactly() {
    // Near the end of a drawn game the search reaches every terminal position.
    let draw_line = "121212343434565656777777212121434343656565";
    let pos = play(&draw_line[..34]);
    let r = search::best_move(&pos, SearchLimits::with_depth(64)).unwrap();
    assert!(r.proven, "{r:?}");
    assert!(r.depth as usize <= 42 - 34);
    assert!(pos.legal_moves().contains(&r.best));
}

#[test]
fn hard_beats_random_in_seeded_games() {
    let limits = SearchLimits::with_depth(5);
    for seed in 0..4u64 {
        let mut rng = Seed::Int(seed).rng();
        let mut pos = FourInARow::new();
        // Hard plays the opponent (second) in odd seeds, the player in even seeds.
        let hard_side = if seed % 2 == 0 { Side::Player } else { Side::Opponent };
        while pos.winner().is_none() {
            let level = if pos.turn() == hard_side { Level::Hard } else { Level::Random };
            let mv = pos.choose_move(level, limits, &mut rng).unwrap();
            pos = pos.apply(mv).unwrap();
        }
        assert_eq!(pos.winner(), Some(Winner::side(hard_side)), "seed {seed}: {pos}");
    }
}

#[test]
fn easy_is_deterministic_for_a_seed_and_legal() {
    let pos = play("4433");
    let a: Vec<_> = (0..5)
        .map(|_| pos.choose_move(Level::Easy, SearchLimits::default(), &mut Seed::Int(9).rng()))
        .collect();
    assert!(a.windows(2).all(|w| w[0] == w[1]));
    assert!(pos.legal_moves().contains(&a[0].unwrap()));
    assert_eq!(
        play("1212121").choose_move(Level::Hard, SearchLimits::default(), &mut Seed::Int(1).rng()),
        None
    );
}

#[test]
fn hard_answers_within_a_small_budget() {
    // Even a 1 ms budget gives a legal move (the first iteration always completes).
    let limits = SearchLimits::with_time(std::time::Duration::from_millis(1));
    for seq in ["", "4", "44", "4433"] {
        let pos = play(seq);
        let r = search::best_move(&pos, limits).unwrap();
        assert!(pos.legal_moves().contains(&r.best));
        assert!(r.depth >= 1);
    }
}

#[test]
fn seeded_random_playouts_use_only_listed_moves() {
    for seed in 0..200u64 {
        let mut rng = Seed::Int(seed).rng();
        let mut pos = FourInARow::new();
        let mut plies = 0;
        while pos.status() == Status::InProgress {
            let moves = pos.legal_moves();
            assert!(!moves.is_empty());
            let mv = moves[rng.random_range(0..moves.len())];
            pos = pos.apply(mv).unwrap();
            plies += 1;
            let s = pos.to_string();
            assert_eq!(s.parse::<FourInARow>().unwrap(), pos, "{s}");
        }
        assert!(plies >= 7 && plies <= 42);
        assert!(pos.legal_moves().is_empty());
        assert!(pos.winner().is_some());
        assert_eq!(pos.apply(col(1)).unwrap_err().reason, "game_over");
    }
}

#[test]
#[ignore = "timing measurement, run with --release --nocapture"]
fn measure_hard_latency() {
    let mut worst = std::time::Duration::ZERO;
    for seq in ["", "4", "44", "43", "4444", "3", "1", "453", "44444", "7777", "443322"] {
        let pos = play(seq);
        let t = std::time::Instant::now();
        let r = search::best_move(&pos, SearchLimits::default()).unwrap();
        let e = t.elapsed();
        worst = worst.max(e);
        println!("{seq:>8}: best {} score {} depth {} proven {} nodes {} in {e:?}", r.best, r.score, r.depth, r.proven, r.nodes);
    }
    println!("worst {worst:?}");
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in ".{0,120}") {
        if let Ok(pos) = s.parse::<FourInARow>() {
            prop_assert_eq!(pos.to_string(), s.trim());
        }
    }

    #[test]
    fn near_valid_strings_never_panic(
        grid in proptest::collection::vec(proptest::sample::select(vec!['.', 'R', 'Y']), 42),
        t in proptest::sample::select(vec!["player", "opponent", "x"]),
        st in proptest::sample::select(vec!["in_progress", "game_over"]),
        la in proptest::sample::select(vec!["-", "1", "4", "7", "9"]),
        w in proptest::sample::select(vec!["-", "player", "opponent", "draw"]),
    ) {
        let rows: Vec<String> = grid.chunks(7).map(|r| r.iter().collect()).collect();
        let s = format!("G:{}|T:{t}|ST:{st}|LA:{la}|W:{w}", rows.join("/"));
        if let Ok(pos) = s.parse::<FourInARow>() {
            prop_assert_eq!(pos.to_string(), s);
            for c in pos.legal_moves() {
                let next = pos.apply(c).unwrap();
                prop_assert_eq!(next.to_string().parse::<FourInARow>().unwrap(), next);
            }
        }
    }

    #[test]
    fn random_games_round_trip(moves in proptest::collection::vec(0usize..7, 0..42)) {
        let mut pos = FourInARow::new();
        for m in moves {
            let c = Column::ALL[m];
            match pos.apply(c) {
                Ok(next) => pos = next,
                Err(e) => prop_assert!(e.reason == "column_full" || e.reason == "game_over"),
            }
            prop_assert_eq!(pos.to_string().parse::<FourInARow>().unwrap(), pos);
        }
    }
}
