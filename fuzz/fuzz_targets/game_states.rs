//! Every game's state-string parser (`FromStr`): never a panic, and a parsed state printed
//! (`Display`) parses back to the same state. The first byte picks the game.
#![no_main]

use std::fmt::Display;
use std::str::FromStr;

use agents_games::{
    blackjack::BlackjackState, checkers, chess::ChessGame, four_in_a_row::FourInARow,
    mancala::MancalaState, sea_battle::SeaBattleState, slot::SlotState, tic_tac_toe::TicTacToe,
};
use libfuzzer_sys::fuzz_target;

fn round_trip<T>(text: &str)
where
    T: FromStr + Display + PartialEq + std::fmt::Debug,
    T::Err: std::fmt::Debug,
{
    if let Ok(state) = text.parse::<T>() {
        let printed = state.to_string();
        match printed.parse::<T>() {
            Ok(back) => assert_eq!(back, state, "{text:?} printed as {printed:?}"),
            Err(e) => panic!("{text:?} printed as {printed:?}, which does not parse: {e:?}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&game, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match game % 8 {
        0 => round_trip::<ChessGame>(text),
        1 => round_trip::<checkers::Position>(text),
        2 => round_trip::<FourInARow>(text),
        3 => round_trip::<TicTacToe>(text),
        4 => round_trip::<MancalaState>(text),
        5 => round_trip::<SeaBattleState>(text),
        6 => round_trip::<BlackjackState>(text),
        _ => round_trip::<SlotState>(text),
    }
});
