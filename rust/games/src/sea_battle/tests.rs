use super::*;
use crate::Seed;
use proptest::prelude::*;

const P_ROWS: [&str; 10] = [
    "SSSSS.....",
    "..........",
    "SSSS......",
    "..........",
    "SSS.SSS...",
    "..........",
    "SS........",
    "..........",
    "..........",
    "..........",
];

const O_ROWS: [&str; 10] = [
    "S........S",
    "S........S",
    ".........S",
    ".........S",
    ".........S",
    "..........",
    "..SSSS....",
    "..........",
    "SSS...SSS.",
    "..........",
];

fn rows(r: &[&str; 10]) -> String {
    r.join("/")
}

fn fog_rows(r: &[&str; 10]) -> String {
    rows(r).replace('S', ".")
}

fn fixture() -> SeaBattleState {
    format!(
        "P:{}|O:{}|F:{}|OF:{}|T:player|ST:in_progress|LA:-|W:-",
        rows(&P_ROWS),
        rows(&O_ROWS),
        fog_rows(&O_ROWS),
        fog_rows(&P_ROWS)
    )
    .parse()
    .expect("fixture parses")
}

fn err(s: &str) -> String {
    s.parse::<SeaBattleState>().unwrap_err().to_string()
}

fn c(s: &str) -> Coord {
    s.parse().unwrap()
}

#[test]
fn coordinates_are_trimmed_and_case_insensitive() {
    assert_eq!(c(" b4 ").to_string(), "B4");
    assert_eq!(c("a1").index(), 0);
    assert_eq!(c("J1").index(), 9);
    assert_eq!(c("A2").index(), 10);
    assert_eq!(c("j10").index(), 99);
    for bad in ["", "K1", "A0", "A11", "A01", "1A", "AA", "B 4", "B4x"] {
        assert_eq!(
            bad.parse::<Coord>().unwrap_err().to_string(),
            format!("Invalid coordinate {bad:?} (expected A1 to J10)")
        );
    }
}

#[test]
fn board_layout_and_round_trip() {
    let s = fixture();
    assert_eq!(s.board(Side::Player).get(c("E1")), Cell::Ship);
    assert_eq!(s.board(Side::Player).get(c("F1")), Cell::Empty);
    assert_eq!(s.board(Side::Player).get(c("A3")), Cell::Ship);
    assert_eq!(s.board(Side::Opponent).get(c("J5")), Cell::Ship);
    let text = s.to_string();
    assert_eq!(text.parse::<SeaBattleState>().unwrap(), s);
    assert_eq!(text.parse::<SeaBattleState>().unwrap().to_string(), text);
    assert_eq!(s.board(Side::Player).to_string().len(), 109);
}

#[test]
fn miss_hit_sunk_and_fog_updates() {
    let s = fixture();
    let s = s.apply_str("a1").unwrap();
    assert_eq!(s.last_action().unwrap().to_string(), "A1:hit");
    assert_eq!(s.turn(), Side::Opponent);
    assert_eq!(s.board(Side::Opponent).get(c("A1")), Cell::Hit);
    assert_eq!(s.fog(Side::Player).get(c("A1")), Cell::Hit);
    // The player's board is untouched by the player's shot.
    assert_eq!(s.board(Side::Player), fixture().board(Side::Player));
    let s = s.apply_str("J10").unwrap();
    assert_eq!(s.last_action().unwrap().to_string(), "J10:miss");
    assert_eq!(s.board(Side::Player).get(c("J10")), Cell::Miss);
    assert_eq!(s.fog(Side::Opponent).get(c("J10")), Cell::Miss);
    let s = s.apply_str(" A2").unwrap();
    assert_eq!(s.last_action().unwrap().to_string(), "A2:sunk(2)");
    let text = s.to_string();
    let expected_f = fog_rows(&O_ROWS)
        .chars()
        .enumerate()
        .map(|(i, ch)| if i == 0 || i == 11 { 'H' } else { ch })
        .collect::<String>();
    assert!(text.contains(&format!("|F:{expected_f}|")), "{text}");
    assert!(
        text.ends_with("|T:opponent|ST:in_progress|LA:A2:sunk(2)|W:-"),
        "{text}"
    );
    assert_eq!(text.parse::<SeaBattleState>().unwrap(), s);
    // The opponent sinks a ship too: the 2-ship at A7-B7.
    let s = s.apply_str("A7").unwrap();
    assert_eq!(s.last_action().unwrap().to_string(), "A7:hit");
    let s = s.apply_str("C3").unwrap();
    let s = s.apply_str("B7").unwrap();
    assert_eq!(s.last_action().unwrap().to_string(), "B7:sunk(2)");
}

#[test]
fn illegal_moves_have_reasons() {
    let s = fixture().apply_str("A1").unwrap().apply_str("B2").unwrap();
    assert_eq!(
        s.apply_str("a1").unwrap_err(),
        MoveError::new("already_targeted", "Illegal move.")
    );
    for bad in ["K1", "A0", "", "hello", "A11"] {
        assert_eq!(
            s.apply_str(bad).unwrap_err(),
            MoveError::new("invalid_coord", "Illegal move.")
        );
    }
    // The opponent may fire at B2 of the player's board only once either.
    let s = s.apply_str("C1").unwrap();
    assert_eq!(s.apply_str("B2").unwrap_err().reason, "already_targeted");
}

#[test]
fn the_player_wins_by_sinking_every_ship() {
    let mut s = fixture();
    let targets: Vec<Coord> = (0..CELLS)
        .filter(|&i| fixture().board(Side::Opponent).cells()[i] == Cell::Ship)
        .filter_map(Coord::from_index)
        .collect();
    let waters: Vec<Coord> = (0..CELLS)
        .filter(|&i| fixture().board(Side::Player).cells()[i] == Cell::Empty)
        .filter_map(Coord::from_index)
        .collect();
    assert_eq!(targets.len(), 17);
    let mut sunk = Vec::new();
    for (k, &t) in targets.iter().enumerate() {
        s = s.apply(t).unwrap();
        if let Outcome::Sunk(n) = s.last_action().unwrap().outcome {
            sunk.push(n);
        }
        s.to_string()
            .parse::<SeaBattleState>()
            .expect("every state round-trips");
        if k + 1 < targets.len() {
            assert_eq!(s.status(), Status::InProgress);
            s = s.apply(waters[k]).unwrap();
            assert_eq!(s.last_action().unwrap().outcome, Outcome::Miss);
        }
    }
    sunk.sort_unstable();
    assert_eq!(sunk, vec![2, 3, 3, 4, 5]);
    assert_eq!(s.status(), Status::GameOver);
    assert_eq!(s.winner(), Some(Side::Player));
    assert_eq!(s.turn(), Side::Opponent);
    let text = s.to_string();
    assert!(
        text.ends_with("|T:opponent|ST:game_over|LA:I9:sunk(3)|W:player"),
        "{text}"
    );
    assert_eq!(text.parse::<SeaBattleState>().unwrap(), s);
    assert!(s.legal_moves().is_empty());
    assert!(s.ranked_moves().is_empty());
    assert_eq!(
        s.apply_str("J10").unwrap_err(),
        MoveError::new("game_over", "Illegal move.")
    );
    assert_eq!(s.apply_str("zz").unwrap_err().reason, "game_over");
    let mut rng = Seed::Int(0).rng();
    assert_eq!(
        s.choose_move(Level::Hard, SearchLimits::default(), &mut rng),
        None
    );
}

#[test]
fn legal_moves_are_row_major_untargeted_cells() {
    let s = fixture();
    let moves: Vec<String> = s.legal_moves().iter().map(Coord::to_string).collect();
    assert_eq!(moves.len(), 100);
    assert_eq!(
        &moves[..12],
        [
            "A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "I1", "J1", "A2", "B2"
        ]
    );
    assert_eq!(moves[99], "J10");
    let s = s.apply_str("B1").unwrap();
    // The opponent fires at the player's board: all 100 cells still open.
    assert_eq!(s.legal_moves().len(), 100);
    let s = s.apply_str("C1").unwrap();
    let moves: Vec<String> = s.legal_moves().iter().map(Coord::to_string).collect();
    assert_eq!(moves.len(), 99);
    assert_eq!(&moves[..2], ["A1", "C1"]);
}

#[test]
fn seeded_fleets_are_reproducible_valid_and_never_touch() {
    let a = SeaBattleState::new_game(&mut Seed::Int(42).rng());
    let b = SeaBattleState::new_game(&mut Seed::Int(42).rng());
    let other = SeaBattleState::new_game(&mut Seed::Str("42".into()).rng());
    assert_eq!(a.to_string(), b.to_string());
    assert_ne!(a.to_string(), other.to_string());
    assert_ne!(a.board(Side::Player), a.board(Side::Opponent));
    let mut seen = std::collections::HashSet::new();
    for seed in 0..40u64 {
        let s = SeaBattleState::new_game(&mut Seed::Int(seed).rng());
        assert!(seen.insert(s.to_string()), "seed {seed} repeated a layout");
        for side in [Side::Player, Side::Opponent] {
            let board = s.board(side);
            board.check_fleet("P").unwrap();
            let ships = board.ships();
            let mut lengths: Vec<usize> = ships.iter().map(Vec::len).collect();
            lengths.sort_unstable();
            assert_eq!(lengths, vec![2, 3, 3, 4, 5]);
            // No ship cell has a ship cell of another ship among its 8 neighbours.
            for ship in &ships {
                for &i in ship {
                    for n in neighbours8(i) {
                        assert!(!board.cells()[n].is_ship() || ship.contains(&n));
                    }
                }
            }
        }
        let text = s.to_string();
        assert!(text.ends_with("|T:player|ST:in_progress|LA:-|W:-"));
        assert_eq!(text.parse::<SeaBattleState>().unwrap(), s);
    }
}

#[test]
fn seeded_random_playouts_apply_only_listed_moves() {
    for seed in 0..12u64 {
        let mut rng = Seed::Int(seed).rng();
        let mut s = SeaBattleState::new_game(&mut rng);
        let mut shots = 0;
        while !s.is_over() {
            let moves = s.legal_moves();
            let level = Level::ALL[(shots + seed as usize) % 3];
            let mv = s
                .choose_move(level, SearchLimits::default(), &mut rng)
                .unwrap();
            assert!(moves.contains(&mv), "{level} chose unlisted {mv}");
            let ranked = s.ranked_moves();
            assert_eq!(ranked.len(), moves.len());
            s = s.apply(mv).unwrap();
            let text = s.to_string();
            assert_eq!(text.parse::<SeaBattleState>().unwrap(), s, "{text}");
            shots += 1;
            assert!(shots <= 2 * CELLS);
        }
        let w = s.winner().unwrap();
        assert!(s.target_board(w).all_sunk());
        assert!(!s.board(w).all_sunk());
    }
}

fn swap_field(state: &str, key: &str, value: &str) -> String {
    state
        .split('|')
        .map(|f| match f.split_once(':') {
            Some((k, _)) if k == key => format!("{key}:{value}"),
            _ => f.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

#[test]
fn parse_errors_are_precise() {
    let start = fixture().to_string();
    let one = fixture().apply_str("A1").unwrap().to_string();
    assert_eq!(
        err("x"),
        "Invalid state: expected 8 fields P|O|F|OF|T|ST|LA|W, found 1"
    );
    assert_eq!(
        err(&start.replacen("|F:", "|G:", 1)),
        "Invalid state: field 3 must start with \"F:\""
    );
    assert_eq!(
        err(&swap_field(&start, "P", &rows(&P_ROWS)[..98])),
        "Invalid state: P needs 10 rows separated by '/', found 9"
    );
    assert_eq!(
        err(&swap_field(
            &start,
            "P",
            &rows(&P_ROWS).replacen("SSSSS.....", "SSSSS....", 1)
        )),
        "Invalid state: P row 1 needs 10 cells, found 9"
    );
    assert_eq!(
        err(&swap_field(
            &start,
            "O",
            &rows(&O_ROWS).replacen('.', "x", 1)
        )),
        "Invalid state: O has 'x' at B1 (allowed: ., S, H, M)"
    );
    assert_eq!(
        err(&swap_field(
            &start,
            "O",
            &rows(&O_ROWS).replacen('.', "é", 1)
        )),
        "Invalid state: O has 'é' at B1 (allowed: ., S, H, M)"
    );
    assert_eq!(
        err(&swap_field(&start, "F", &rows(&O_ROWS))),
        "Invalid state: F has 'S' at A1 (allowed: ., H, M)"
    );
    assert_eq!(
        err(&swap_field(
            &start,
            "P",
            &rows(&P_ROWS).replacen("SSSS......", "SSSS.S....", 1)
        )),
        "Invalid state: P must hold ships of lengths 5,4,3,3,2, found 5,4,3,3,2,1"
    );
    assert_eq!(
        err(&swap_field(
            &start,
            "P",
            &rows(&P_ROWS).replacen("..........", "S.........", 1)
        )),
        "Invalid state: P has ships that touch or bend at A1"
    );
    assert_eq!(
        err(&swap_field(&start, "O", &rows(&[".........."; 10]))),
        "Invalid state: O must hold ships of lengths 5,4,3,3,2, found none"
    );
    assert_eq!(
        err(&swap_field(
            &start,
            "F",
            &fog_rows(&O_ROWS).replacen('.', "M", 1)
        )),
        "Invalid state: F does not match the shots on O at A1"
    );
    assert_eq!(
        err(&swap_field(
            &one,
            "OF",
            &fog_rows(&P_ROWS).replacen('.', "M", 1)
        )),
        "Invalid state: OF does not match the shots on P at A1"
    );
    assert_eq!(
        err(&swap_field(&start, "T", "me")),
        "Invalid state: bad turn \"me\" (expected player or opponent)"
    );
    assert_eq!(
        err(&swap_field(&start, "ST", "over")),
        "Invalid state: bad status \"over\" (expected in_progress or game_over)"
    );
    assert_eq!(
        err(&swap_field(&start, "LA", "A1:boom")),
        "Invalid state: bad last action \"A1:boom\""
    );
    assert_eq!(
        err(&swap_field(&start, "LA", "a1:hit")),
        "Invalid state: bad last action \"a1:hit\""
    );
    assert_eq!(
        err(&swap_field(&start, "LA", "A1:sunk(6)")),
        "Invalid state: bad last action \"A1:sunk(6)\""
    );
    assert_eq!(
        err(&swap_field(&start, "W", "draw")),
        "Invalid state: bad winner \"draw\" (expected player, opponent or -)"
    );
    assert_eq!(
        err(&swap_field(&start, "T", "opponent")),
        "Invalid state: shot counts do not fit T:opponent: the player fired 0, the opponent 0 \
         (the player fires first, then the sides alternate)"
    );
    assert_eq!(
        err(&swap_field(&start, "W", "player")),
        "Invalid state: W must be - while the game is in progress"
    );
    assert_eq!(
        err(&swap_field(&start, "ST", "game_over")),
        "Invalid state: ST is game_over but no fleet is sunk"
    );
    assert_eq!(
        err(&swap_field(&start, "LA", "A1:hit")),
        "Invalid state: LA must be - before the first shot"
    );
    assert_eq!(
        err(&swap_field(&one, "LA", "-")),
        "Invalid state: LA must name the last shot once shots were fired"
    );
    assert_eq!(
        err(&swap_field(&one, "LA", "A1:miss")),
        "Invalid state: LA says A1:miss but the board shows A1:hit"
    );
    assert_eq!(
        err(&swap_field(&one, "LA", "B1:miss")),
        "Invalid state: LA names B1 but the player's target board has no shot there"
    );
}

#[test]
fn finished_game_consistency_is_checked() {
    // Sink the whole opponent fleet with the opponent missing in between.
    let mut s = fixture();
    let targets: Vec<Coord> = (0..CELLS)
        .filter(|&i| fixture().board(Side::Opponent).cells()[i] == Cell::Ship)
        .filter_map(Coord::from_index)
        .collect();
    let waters = [
        "F1", "G1", "H1", "I1", "J1", "A2", "B2", "C2", "D2", "E2", "F2", "G2", "H2", "I2", "J2",
        "E3",
    ];
    for (k, t) in targets.iter().enumerate() {
        s = s.apply(*t).unwrap();
        if k < waters.len() {
            s = s.apply_str(waters[k]).unwrap();
        }
    }
    let over = s.to_string();
    assert!(over.contains("|ST:game_over|"));
    assert_eq!(
        err(&swap_field(&over, "ST", "in_progress")),
        "Invalid state: ST must be game_over: the player has sunk every ship"
    );
    assert_eq!(
        err(&swap_field(&over, "W", "opponent")),
        "Invalid state: W must be player: the player sank every ship"
    );
    assert_eq!(
        err(&swap_field(&over, "W", "-")),
        "Invalid state: W must be player: the player sank every ship"
    );
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(s in ".{0,300}") {
        let _ = s.parse::<SeaBattleState>();
        let _ = s.parse::<Coord>();
        let _ = fixture().apply_str(&s);
    }

    #[test]
    fn mutated_states_never_panic(pos in 0usize..600, ch in proptest::char::any(), seed in 0u64..50) {
        let text = SeaBattleState::new_game(&mut Seed::Int(seed).rng()).to_string();
        let mut chars: Vec<char> = text.chars().collect();
        let i = pos % chars.len();
        chars[i] = ch;
        let mutated: String = chars.into_iter().collect();
        if let Ok(state) = mutated.parse::<SeaBattleState>() {
            prop_assert_eq!(state.to_string(), mutated);
        }
    }
}
