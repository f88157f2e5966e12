//! From games to numbers: each player's record, rates and costs, and the ratings.

use super::player::Player;
use super::rating::{self, ANCHOR_RATING, Outcome};
use super::results::{
    Anchor, GameResult, HouseScore, Latency, PlayerKind, PlayerResult, Termination, Tokens,
};
use crate::brain::Price;

/// The name of the player a rating scale is anchored to, when it plays.
pub const ANCHOR_PLAYER: &str = "engine:random";

/// Each player's record from `games`, best first, and the rating anchor (`None` when
/// `house`: no ratings). `prices` are the players' brains' prices (in their order; `None`: not
/// priced); `seed` seeds the bootstrap.
pub(super) fn tally(
    players: &[Player],
    prices: &[Option<Price>],
    games: &[GameResult],
    house: bool,
    seed: u64,
) -> (Vec<PlayerResult>, Option<Anchor>) {
    let names: Vec<String> = players.iter().map(ToString::to_string).collect();
    let mut out: Vec<PlayerResult> = players
        .iter()
        .zip(&names)
        .map(|(player, name)| record_of(player, name, games, house))
        .collect();
    for (record, price) in out.iter_mut().zip(prices) {
        record.cost_usd = price.map(|p| p.cost(record.tokens.input, record.tokens.output));
    }
    if house {
        out.sort_by(|a, b| {
            let net = |p: &PlayerResult| p.score.map_or(f64::MIN, |s| s.net_per_100);
            net(b).total_cmp(&net(a))
        });
        return (out, None);
    }
    let index = |name: &str| names.iter().position(|n| n == name);
    let outcomes: Vec<Outcome> = games
        .iter()
        .filter(|g| g.termination != Termination::Error && g.players.len() == 2)
        .filter_map(|g| {
            let (a, b) = (index(&g.players[0])?, index(&g.players[1])?);
            let score_a = match g.result.as_str() {
                "1-0" => 1.0,
                "0-1" => 0.0,
                _ => 0.5,
            };
            Some(Outcome { a, b, score_a })
        })
        .collect();
    let anchor = index(ANCHOR_PLAYER)
        .or_else(|| players.iter().position(|p| !p.is_brain()))
        .unwrap_or(0);
    let ratings = rating::rate(players.len(), anchor, &outcomes, seed);
    for (player, r) in out.iter_mut().zip(&ratings) {
        player.rating = Some(round1(r.rating));
        player.rating_ci95 = Some([round1(r.ci95[0]), round1(r.ci95[1])]);
    }
    let anchor = Anchor {
        player: names[anchor].clone(),
        rating: ANCHOR_RATING,
    };
    out.sort_by(|a, b| {
        b.rating
            .unwrap_or(f64::MIN)
            .total_cmp(&a.rating.unwrap_or(f64::MIN))
    });
    (out, Some(anchor))
}

fn record_of(player: &Player, name: &str, games: &[GameResult], house: bool) -> PlayerResult {
    let mut record = PlayerResult {
        name: name.to_string(),
        kind: if player.is_brain() {
            PlayerKind::Brain
        } else {
            PlayerKind::Engine
        },
        games: 0,
        wins: 0,
        draws: 0,
        losses: 0,
        forfeits: 0,
        rating: None,
        rating_ci95: None,
        moves: 0,
        illegal_moves: 0,
        illegal_per_100_moves: 0.0,
        repairs: 0,
        repairs_per_100_moves: 0.0,
        latency_ms: Latency::default(),
        tokens: Tokens::default(),
        cost_usd: None,
        score: None,
    };
    let mut latencies = Vec::new();
    let mut score = HouseScore::default();
    for game in games.iter().filter(|g| g.players.iter().any(|p| p == name)) {
        for m in game.moves.iter().filter(|m| m.player == name) {
            if !m.mv.is_null() {
                record.moves += 1;
                latencies.push(m.latency_ms as f64);
            }
            record.illegal_moves += u32::try_from(m.illegal.len()).unwrap_or(u32::MAX);
            record.repairs += m.repairs;
            record.tokens.input += m.input_tokens;
            record.tokens.output += m.output_tokens;
        }
        if game.termination == Termination::Error {
            continue;
        }
        record.games += 1;
        if house {
            let net = game.net.unwrap_or(0);
            score.hands += 1;
            score.net_chips += net;
            match net.signum() {
                1 => record.wins += 1,
                0 => record.draws += 1,
                _ => record.losses += 1,
            }
            continue;
        }
        match &game.winner {
            None => record.draws += 1,
            Some(w) if w == name => record.wins += 1,
            Some(_) => {
                record.losses += 1;
                if matches!(game.termination, Termination::Forfeit | Termination::Time) {
                    record.forfeits += 1;
                }
            }
        }
    }
    let per_100 = |n: u32| {
        if record.moves == 0 {
            0.0
        } else {
            round1(100.0 * f64::from(n) / f64::from(record.moves))
        }
    };
    record.illegal_per_100_moves = per_100(record.illegal_moves);
    record.repairs_per_100_moves = per_100(record.repairs);
    latencies.sort_by(f64::total_cmp);
    record.latency_ms = Latency {
        p50: percentile(&latencies, 0.50),
        p95: percentile(&latencies, 0.95),
        max: latencies.last().copied().unwrap_or(0.0),
    };
    if record.moves > 0 {
        record.tokens.per_move =
            round1((record.tokens.input + record.tokens.output) as f64 / f64::from(record.moves));
    }
    if house {
        if score.hands > 0 {
            score.net_per_100 = round1(100.0 * score.net_chips as f64 / f64::from(score.hands));
        }
        record.score = Some(score);
    }
    record
}

/// The `q` quantile of sorted `values` by the nearest rank (0 when there are none).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::results::MoveRecord;
    use serde_json::{Value, json};

    fn mv(ply: u32, player: &str, latency_ms: u64, illegal: usize) -> MoveRecord {
        MoveRecord {
            ply,
            player: player.into(),
            mv: json!(ply),
            state: String::new(),
            latency_ms,
            input_tokens: 10,
            output_tokens: 5,
            repairs: u32::try_from(illegal).unwrap(),
            illegal: vec!["9: not one of the legal moves".into(); illegal],
            text: String::new(),
        }
    }

    fn game(players: [&str; 2], result: &str, termination: Termination) -> GameResult {
        GameResult {
            index: 1,
            game: "tic_tac_toe".into(),
            players: players.iter().map(ToString::to_string).collect(),
            result: result.into(),
            winner: match result {
                "1-0" => Some(players[0].into()),
                "0-1" => Some(players[1].into()),
                _ => None,
            },
            termination,
            reason: None,
            seed: "1".into(),
            plies: 2,
            start: String::new(),
            end: String::new(),
            pgn: None,
            net: None,
            moves: vec![mv(1, players[0], 100, 0), mv(2, players[1], 300, 1)],
        }
    }

    #[test]
    fn records_rates_and_ratings_follow_the_games() {
        let players = [
            Player::Brain("gemma".into()),
            Player::Engine("random".into()),
        ];
        let games = vec![
            game(["gemma", "engine:random"], "1-0", Termination::Normal),
            game(["engine:random", "gemma"], "0-1", Termination::Normal),
            game(["gemma", "engine:random"], "0-1", Termination::Forfeit),
            game(["gemma", "engine:random"], "*", Termination::Error),
        ];
        let (out, anchor) = tally(&players, &[None, None], &games, false, 1);
        let anchor = anchor.unwrap();
        assert_eq!(anchor.player, "engine:random");
        let gemma = out.iter().find(|p| p.name == "gemma").unwrap();
        assert_eq!(
            (
                gemma.games,
                gemma.wins,
                gemma.draws,
                gemma.losses,
                gemma.forfeits
            ),
            (3, 2, 0, 1, 1)
        );
        assert_eq!(gemma.moves, 4);
        // Its one move from the second seat (game 2) came after an illegal attempt.
        assert_eq!(gemma.illegal_moves, 1);
        assert_eq!(gemma.illegal_per_100_moves, 25.0);
        assert_eq!(gemma.tokens.per_move, 15.0);
        assert_eq!(gemma.latency_ms.max, 300.0);
        let random = out.iter().find(|p| p.name == "engine:random").unwrap();
        assert_eq!(random.rating, Some(ANCHOR_RATING));
        assert!(gemma.rating.unwrap() > ANCHOR_RATING, "{out:?}");
        assert_eq!(out[0].name, "gemma", "best first");
        let [low, high] = gemma.rating_ci95.unwrap();
        assert!(low <= gemma.rating.unwrap() && gemma.rating.unwrap() <= high);
    }

    #[test]
    fn a_house_game_scores_net_chips_per_100_hands() {
        let players = [
            Player::Engine("basic".into()),
            Player::Engine("stand".into()),
        ];
        let hand = |player: &str, net: i64| GameResult {
            players: vec![player.into()],
            net: Some(net),
            result: format!("{net:+}"),
            winner: None,
            moves: Vec::new(),
            ..game(["x", "y"], "*", Termination::Normal)
        };
        let games = vec![
            hand("engine:basic", 10),
            hand("engine:basic", -10),
            hand("engine:basic", 20),
            hand("engine:stand", -10),
        ];
        let (out, anchor) = tally(
            &players,
            &[
                Some(Price {
                    input_per_mtok: 1.0,
                    output_per_mtok: 2.0,
                }),
                None,
            ],
            &games,
            true,
            1,
        );
        assert!(anchor.is_none());
        assert_eq!(out[0].name, "engine:basic");
        let basic = out[0].score.unwrap();
        assert_eq!((basic.hands, basic.net_chips), (3, 20));
        assert_eq!(basic.net_per_100, 666.7);
        assert_eq!((out[0].wins, out[0].losses), (2, 1));
        assert_eq!(out[1].rating, None);
        // No tokens, no cost; an unpriced player has none at all.
        assert_eq!(out[0].cost_usd, Some(0.0));
        assert_eq!(out[1].cost_usd, None);
        let _: Value = serde_json::to_value(&out).unwrap();
    }
}
