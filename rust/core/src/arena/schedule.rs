//! Who plays whom: the games of a tournament, in order, with their seats and seeds.
//!
//! - **A match**: two players, `games` games.
//! - **A round robin**: every pair of the players, `games` games each.
//! - **A ladder**: every brain against every engine level, `games` games each (the engines are
//!   added to the players when missing).
//! - **Sides alternate** within a pairing: its games 1, 3, 5, … seat the pair as listed, its
//!   games 2, 4, 6, … the other way round, and each pair of games shares a seed (the same
//!   position from either side). A game a brain can play from the first side only (sea battle)
//!   seats the brain first every time, so each of its games has a seed of its own (a shared
//!   one would play the same game twice); two such brains cannot meet.
//! - **A house game** (blackjack, slot) has one seat: every player plays `games` hands, hand
//!   `k` dealt from the same seed for every player, so the players meet the same cards.

use super::player::Player;
use super::results::{GameResult, Termination};

/// How the pairings are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Two players.
    Match,
    /// Every pair of players.
    RoundRobin,
    /// Every brain against every engine.
    Ladder,
}

impl Schedule {
    /// Its name in the results (`match`, `round_robin`, `ladder`).
    pub fn as_str(self) -> &'static str {
        match self {
            Schedule::Match => "match",
            Schedule::RoundRobin => "round_robin",
            Schedule::Ladder => "ladder",
        }
    }
}

/// One scheduled game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// Its number in the tournament (1, 2, …).
    pub index: u32,
    /// The players (indices into the tournament's players) in seat order: the first moves
    /// first. One seat at a house game.
    pub seats: Vec<usize>,
    /// The game's seed.
    pub seed: String,
}

/// How the players are seated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seating {
    /// Two seats; a brain may take either.
    TwoSides,
    /// Two seats; a brain takes the first only (sea battle).
    BrainFirst,
    /// One seat (a house game).
    Alone,
}

/// The games of a tournament of `players` (already including the ladder's engines), `games` per
/// pairing (per player at a house game), seeded from `seed`. Errors say why no tournament can be
/// made of them.
pub fn fixtures(
    players: &[Player],
    schedule: Schedule,
    games: u32,
    seed: u64,
    seating: Seating,
) -> Result<Vec<Fixture>, String> {
    if games == 0 {
        return Err("--games must be at least 1".into());
    }
    if seating == Seating::Alone {
        let mut out = Vec::new();
        for player in 0..players.len() {
            for hand in 0..games {
                out.push(Fixture {
                    index: 0,
                    seats: vec![player],
                    seed: format!("{seed}:{hand}"),
                });
            }
        }
        return Ok(numbered(out));
    }
    let pairs = pairs(players, schedule)?;
    let mut out = Vec::new();
    for (p, &(a, b)) in pairs.iter().enumerate() {
        let brain_first = seating == Seating::BrainFirst;
        if brain_first && players[a].is_brain() && players[b].is_brain() {
            return Err(format!(
                "'{}' and '{}' cannot meet: both are brains, and a brain plays this game from \
                 the first side only (play them against the engines: --ladder)",
                players[a], players[b]
            ));
        }
        let fixed = brain_first && (players[a].is_brain() || players[b].is_brain());
        for k in 0..games {
            let swapped = if fixed {
                players[b].is_brain()
            } else {
                k % 2 == 1
            };
            // Alternating sides replay a seed from the other side; fixed sides never do.
            let round = if fixed { k } else { k / 2 };
            out.push(Fixture {
                index: 0,
                seats: if swapped { vec![b, a] } else { vec![a, b] },
                seed: format!("{seed}:{p}:{round}"),
            });
        }
    }
    Ok(numbered(out))
}

/// The pairings of `schedule`, each `(a, b)` with `a` listed before `b`.
fn pairs(players: &[Player], schedule: Schedule) -> Result<Vec<(usize, usize)>, String> {
    match schedule {
        Schedule::Match => {
            if players.len() != 2 {
                return Err(format!(
                    "a match is between two players; {} were given (three or more play a \
                     round robin)",
                    players.len()
                ));
            }
            Ok(vec![(0, 1)])
        }
        Schedule::RoundRobin => {
            if players.len() < 2 {
                return Err("a round robin needs at least two players".into());
            }
            let n = players.len();
            Ok((0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect())
        }
        Schedule::Ladder => {
            let brains: Vec<usize> = (0..players.len())
                .filter(|&i| players[i].is_brain())
                .collect();
            let engines: Vec<usize> = (0..players.len())
                .filter(|&i| !players[i].is_brain())
                .collect();
            if brains.is_empty() {
                return Err("a ladder needs at least one brain among the players".into());
            }
            Ok(brains
                .iter()
                .flat_map(|&b| engines.iter().map(move |&e| (b, e)))
                .collect())
        }
    }
}

impl Fixture {
    /// Its game before it is played: no moves, no result (`*`), ended in an error until the
    /// referee says otherwise.
    pub(super) fn unplayed(&self, game: &str, players: Vec<String>) -> GameResult {
        GameResult {
            index: self.index,
            game: game.to_string(),
            players,
            result: "*".into(),
            winner: None,
            termination: Termination::Error,
            reason: None,
            seed: self.seed.clone(),
            plies: 0,
            start: String::new(),
            end: String::new(),
            pgn: None,
            net: None,
            moves: Vec::new(),
        }
    }
}

fn numbered(mut fixtures: Vec<Fixture>) -> Vec<Fixture> {
    for (i, f) in fixtures.iter_mut().enumerate() {
        f.index = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    fixtures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brain(n: &str) -> Player {
        Player::Brain(n.into())
    }
    fn engine(n: &str) -> Player {
        Player::Engine(n.into())
    }

    #[test]
    fn a_match_alternates_sides_and_shares_a_seed_per_pair_of_games() {
        let players = [brain("a"), engine("hard")];
        let f = fixtures(&players, Schedule::Match, 4, 7, Seating::TwoSides).unwrap();
        let seats: Vec<_> = f.iter().map(|f| f.seats.clone()).collect();
        assert_eq!(seats, [vec![0, 1], vec![1, 0], vec![0, 1], vec![1, 0]]);
        let seeds: Vec<_> = f.iter().map(|f| f.seed.as_str()).collect();
        assert_eq!(seeds, ["7:0:0", "7:0:0", "7:0:1", "7:0:1"]);
        assert_eq!(f.iter().map(|f| f.index).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert!(fixtures(&players[..1], Schedule::Match, 2, 7, Seating::TwoSides).is_err());
        assert!(fixtures(&players, Schedule::Match, 0, 7, Seating::TwoSides).is_err());
    }

    #[test]
    fn a_round_robin_pairs_everyone_and_a_ladder_brains_with_engines() {
        let players = [brain("a"), brain("b"), engine("random"), engine("hard")];
        let rr = fixtures(&players, Schedule::RoundRobin, 2, 1, Seating::TwoSides).unwrap();
        assert_eq!(rr.len(), 6 * 2);
        let ladder = fixtures(&players, Schedule::Ladder, 1, 1, Seating::TwoSides).unwrap();
        let seats: Vec<_> = ladder.iter().map(|f| f.seats.clone()).collect();
        assert_eq!(seats, [vec![0, 2], vec![0, 3], vec![1, 2], vec![1, 3]]);
        let engines = [engine("random"), engine("hard")];
        assert!(fixtures(&engines, Schedule::Ladder, 1, 1, Seating::TwoSides).is_err());
    }

    #[test]
    fn a_first_side_game_seats_the_brain_first_and_two_brains_cannot_meet() {
        let players = [engine("easy"), brain("a")];
        let f = fixtures(&players, Schedule::Match, 3, 1, Seating::BrainFirst).unwrap();
        assert!(f.iter().all(|f| f.seats == [1, 0]), "{f:?}");
        let seeds: Vec<_> = f.iter().map(|f| f.seed.as_str()).collect();
        assert_eq!(seeds, ["1:0:0", "1:0:1", "1:0:2"], "no game played twice");
        let e = fixtures(
            &[brain("a"), brain("b")],
            Schedule::Match,
            1,
            1,
            Seating::BrainFirst,
        )
        .unwrap_err();
        assert!(e.contains("'a' and 'b' cannot meet"), "{e}");
    }

    #[test]
    fn a_house_game_deals_every_player_the_same_hands() {
        let players = [brain("a"), engine("basic")];
        let f = fixtures(&players, Schedule::Match, 3, 9, Seating::Alone).unwrap();
        assert_eq!(f.len(), 6);
        let a: Vec<_> = f
            .iter()
            .filter(|f| f.seats == [0])
            .map(|f| &f.seed)
            .collect();
        let b: Vec<_> = f
            .iter()
            .filter(|f| f.seats == [1])
            .map(|f| &f.seed)
            .collect();
        assert_eq!(a, b);
    }
}
