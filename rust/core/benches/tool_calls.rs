//! Tool-call throughput through the registry, JSON text in → JSON text out, one thread, plus the
//! python-chess comparison (same FEN → push UCI → FEN/SAN work, same inputs, same run).
//!
//! Run with `cargo bench -p agents-core --bench tool_calls` (release profile). Targets:
//! `apply_chess_move` ≥ 100,000 calls/s; `legal_*` for checkers, four-in-a-row,
//! tic-tac-toe and mancala ≥ 250,000 calls/s.

use std::hint::black_box;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use agents_core::tools::ToolRegistry;
use agents_core::tools::games::{GameDecl, ToolKind, game};
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

/// One workload: a tool and a pool of argument texts cycled through.
struct Workload {
    tool: String,
    args: Vec<String>,
    target: f64,
}

/// Plays seeded random games of a board game through its tools and collects `(state, move)`
/// pairs.
fn playout_pairs(reg: &ToolRegistry, game: &GameDecl, want: usize) -> Vec<(Value, Value)> {
    let board = game.board.expect("a board game");
    let (state_field, moves_field, move_arg) =
        (board.position_field, board.legal_field, board.move_arg);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut pairs = Vec::with_capacity(want);
    let mut seed = 0u64;
    while pairs.len() < want {
        seed += 1;
        let new = reg
            .call(&game.tool(ToolKind::New), &json!({"seed": seed}))
            .expect("new game");
        let mut state = new.structured[state_field].clone();
        for _ply in 0..200 {
            let legal = reg
                .call(
                    &game.tool(ToolKind::Legal),
                    &json!({ state_field: state.clone() }),
                )
                .expect("legal moves");
            let moves = legal.structured[moves_field]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if moves.is_empty() || pairs.len() >= want {
                break;
            }
            let mv = moves[rng.random_range(0..moves.len())].clone();
            pairs.push((state.clone(), mv.clone()));
            let applied = reg
                .call(
                    &game.tool(ToolKind::Apply),
                    &json!({ state_field: state.clone(), move_arg: mv }),
                )
                .expect("apply");
            assert!(
                !applied.is_error,
                "playout applied an illegal move: {applied:?}"
            );
            state = applied.structured[state_field].clone();
        }
    }
    pairs
}

/// Calls per second: the best of several one-second rounds (least disturbed by other load).
fn measure(reg: &ToolRegistry, w: &Workload) -> f64 {
    let run = |iters: usize| {
        let start = Instant::now();
        for i in 0..iters {
            let text = &w.args[i % w.args.len()];
            let args: Value = serde_json::from_str(text).expect("args parse");
            let out = reg.call(&w.tool, &args).expect("call");
            black_box(serde_json::to_string(&out.structured).expect("serialize"));
        }
        start.elapsed()
    };
    run(w.args.len().min(2000)); // warm-up
    let mut iters = 1000;
    while run(iters) < Duration::from_millis(200) {
        iters *= 2;
    }
    let per_round = iters * 5; // ≈ 1 s
    (0..5)
        .map(|_| per_round as f64 / run(per_round).as_secs_f64())
        .fold(0.0, f64::max)
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let reg = ToolRegistry::with_game_tools();
    let mut workloads = Vec::new();

    let chess = game("chess").expect("chess");
    let chess_board = chess.board.expect("a board game");
    let chess_apply = chess.tool(ToolKind::Apply);
    let chess_pairs = playout_pairs(&reg, chess, 2000);
    workloads.push(Workload {
        tool: chess_apply.clone(),
        args: chess_pairs
            .iter()
            .map(|(fen, mv)| {
                json!({chess_board.position_field: fen, chess_board.move_arg: mv}).to_string()
            })
            .collect(),
        target: 100_000.0,
    });
    for name in ["checkers", "four_in_a_row", "tic_tac_toe", "mancala"] {
        let game = game(name).expect("a declared game");
        let state_field = game.board.expect("a board game").position_field;
        let pairs = playout_pairs(&reg, game, 1000);
        workloads.push(Workload {
            tool: game.tool(ToolKind::Legal),
            args: pairs
                .iter()
                .map(|(state, _)| json!({ state_field: state }).to_string())
                .collect(),
            target: 250_000.0,
        });
    }

    println!(
        "{:<28} {:>14} {:>12}  verdict",
        "tool (JSON in -> JSON out)", "calls/s", "target"
    );
    let mut rust_chess = 0.0;
    for w in &workloads {
        let rate = measure(&reg, w);
        if w.tool == chess_apply {
            rust_chess = rate;
        }
        let verdict = if rate >= w.target { "met" } else { "MISSED" };
        println!(
            "{:<28} {:>14.0} {:>12.0}  {verdict}",
            w.tool, rate, w.target
        );
    }

    // python-chess on the very same (FEN, UCI) pairs.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let pairs_file = std::env::temp_dir().join("godot_agents_chess_pairs.txt");
    let mut f = std::fs::File::create(&pairs_file).expect("pairs file");
    for (fen, mv) in &chess_pairs {
        writeln!(f, "{}\t{}", fen.as_str().unwrap(), mv.as_str().unwrap()).unwrap();
    }
    drop(f);
    let script = dir.join("benches/python_chess.py");
    match Command::new("python3")
        .arg(&script)
        .arg(&pairs_file)
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let py: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix("ops_per_sec "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0.0);
            print!("{text}");
            if py > 0.0 {
                println!(
                    "{chess_apply} vs python-chess (FEN -> push UCI -> FEN+SAN): {rust_chess:.0} vs {py:.0} ops/s = {:.1}x",
                    rust_chess / py
                );
            }
        }
        Ok(out) => println!(
            "python-chess comparison skipped: {} (install with `pip install chess`)",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("python-chess comparison skipped: python3 not runnable ({e})"),
    }
}
