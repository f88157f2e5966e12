//! Engine benchmarks: checkers perft(10) from the start position (target ≤ 2 s) and the time
//! the `hard` AIs take per move at the default budget (100 ms; four-in-a-row's worst case is the
//! number with a target).
//!
//! Run with `cargo bench -p agents-games --bench engines` (release profile).

use std::time::{Duration, Instant};

use agents_games::seed::GameRng;
use agents_games::{Level, SearchLimits, checkers, chess, four_in_a_row, mancala};
use rand::SeedableRng;
use rand::seq::IndexedRandom;

/// Times `choose` on every position; prints count, p50 and max.
fn time_moves<P>(name: &str, positions: &[P], mut choose: impl FnMut(&P) -> bool) {
    let mut times: Vec<Duration> = positions
        .iter()
        .map(|p| {
            let start = Instant::now();
            assert!(choose(p), "{name}: the AI found no move in a live position");
            start.elapsed()
        })
        .collect();
    times.sort();
    let p50 = times[times.len() / 2];
    let max = *times.last().expect("positions");
    println!(
        "{name:<34} positions {:>3}   p50 {:>7.1} ms   max {:>7.1} ms",
        times.len(),
        p50.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
}

/// Positions from seeded random playouts, sampled every `step` plies up to `max_ply`.
fn sample<P: Clone>(
    start: P,
    games: u64,
    step: usize,
    max_ply: usize,
    mut next: impl FnMut(&P, &mut GameRng) -> Option<P>,
) -> Vec<P> {
    let mut out = vec![start.clone()];
    for g in 0..games {
        let mut rng = GameRng::seed_from_u64(g);
        let mut pos = start.clone();
        for ply in 1..=max_ply {
            match next(&pos, &mut rng) {
                Some(p) => pos = p,
                None => break,
            }
            if ply % step == 0 {
                out.push(pos.clone());
            }
        }
    }
    out
}

fn main() {
    // Checkers perft(10): best of three runs.
    let start = checkers::Position::start();
    let mut best = Duration::MAX;
    let mut nodes = 0;
    for _ in 0..3 {
        let t = Instant::now();
        nodes = start.perft(10);
        best = best.min(t.elapsed());
    }
    assert_eq!(nodes, 18_391_564, "checkers perft(10) reference number");
    println!(
        "checkers perft(10) = {nodes}: best of 3 {:.0} ms ({:.1} M leaf nodes/s)   target <= 2000 ms: {}",
        best.as_secs_f64() * 1e3,
        nodes as f64 / best.as_secs_f64() / 1e6,
        if best <= Duration::from_secs(2) {
            "met"
        } else {
            "MISSED"
        }
    );

    let limits = SearchLimits::default();
    let mut rng = GameRng::seed_from_u64(1);
    println!(
        "hard AI, default budget {} ms per move:",
        limits.time.as_millis()
    );

    let c4 = sample(four_in_a_row::FourInARow::new(), 12, 3, 30, |p, r| {
        let moves = p.legal_moves();
        let mv = *moves.choose(r)?;
        let next = p.apply(mv).ok()?;
        (!next.legal_moves().is_empty()).then_some(next)
    });
    time_moves("four_in_a_row hard", &c4, |p| {
        p.choose_move(Level::Hard, limits, &mut rng).is_some()
    });

    let ck = sample(checkers::Position::start(), 6, 8, 40, |p, r| {
        let moves = p.legal_moves();
        let mv = moves.choose(r)?;
        let next = p.apply(mv).ok()?;
        (!next.legal_moves().is_empty()).then_some(next)
    });
    time_moves("checkers hard", &ck, |p| {
        p.choose_move(Level::Hard, limits, &mut rng).is_some()
    });

    let mc = sample(mancala::MancalaState::new(), 6, 4, 30, |p, r| {
        let moves = p.legal_moves();
        let mv = *moves.choose(r)?;
        let next = p.apply(i64::from(mv)).ok()?;
        (!next.legal_moves().is_empty()).then_some(next)
    });
    time_moves("mancala hard", &mc, |p| {
        p.choose_move(Level::Hard, limits, &mut rng).is_some()
    });

    let ch = sample(chess::ChessGame::new(), 4, 10, 40, |p, r| {
        let moves = p.legal_moves();
        let mv = *moves.choose(r)?;
        let mut next = p.clone();
        next.play(mv).ok()?;
        (!next.legal_moves().is_empty()).then_some(next)
    });
    time_moves("chess hard", &ch, |p| {
        p.choose_move(Level::Hard, limits, &mut rng).is_some()
    });
}
