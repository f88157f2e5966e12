//! The arena end to end: brains (the scripted brain, a brain that only makes illegal moves)
//! and engines playing through real game apps on a real runtime and SQLite file — schedules,
//! sides, ratings, forfeits, the games kept in the database, the same seed giving the same
//! games, and bad input refused before anything is played.

use std::time::Duration;

use agents_core::arena::results::{PlayerKind, Results, Termination};
use agents_core::arena::{ArenaConfig, Tournament};
use agents_core::brain::{
    Brain, BrainContext, BrainProfiles, BrainReply, BrainSettings, DecideFuture, ToolCall,
};
use agents_core::runtime::{Runtime, RuntimeOptions};
use serde_json::json;
use tokio::runtime::Handle;

/// A brain that answers every decision with a move no game has (`Z9`).
struct Cheater;

impl Brain for Cheater {
    fn name(&self) -> &str {
        "cheater"
    }

    fn decide<'a>(&'a mut self, _: &'a BrainContext) -> DecideFuture<'a> {
        Box::pin(async {
            Ok(BrainReply {
                assistant_text: "I play Z9.".into(),
                dialog_type: String::new(),
                tool_calls: vec![ToolCall::new("c1", "move", json!({"coord": "Z9"}))],
            })
        })
    }
}

/// A runtime on `dir` with two brain profiles of the scripted brain (`alpha`, `beta`) and the
/// cheater.
fn runtime(dir: &tempfile::TempDir) -> Runtime {
    let rt = runtime_with(
        dir,
        json!({"profiles": {"alpha": {"provider": "scripted"}, "beta": {"provider": "scripted"}}}),
    );
    rt.register_brain("cheater", |_: &BrainSettings| {
        Ok(Box::new(Cheater) as Box<dyn Brain>)
    })
    .unwrap();
    rt
}

/// A runtime on `dir` with the brain profiles of `file` (a `--brains` file's JSON).
fn runtime_with(dir: &tempfile::TempDir, file: serde_json::Value) -> Runtime {
    let profiles = BrainProfiles::from_json(&file.to_string()).unwrap();
    Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            database: dir.path().join("agents.db"),
            brain_profiles: profiles.profiles,
            ..RuntimeOptions::default()
        },
    )
    .unwrap()
}

fn config(game: &str, players: &[&str], games: u32) -> ArenaConfig {
    ArenaConfig {
        game: game.into(),
        players: players.iter().map(ToString::to_string).collect(),
        games,
        seed: 7,
        move_timeout: Duration::from_secs(30),
        ..ArenaConfig::default()
    }
}

async fn play(rt: &Runtime, config: ArenaConfig) -> Results {
    let tournament = Tournament::plan(rt, config).unwrap();
    tournament.play(rt, |_| {}).await
}

/// The moves of every game, as played.
fn moves(results: &Results) -> Vec<Vec<String>> {
    results
        .games
        .iter()
        .map(|g| g.moves.iter().map(|m| m.mv.to_string()).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_brain_plays_a_match_against_an_engine_legally_and_it_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let mut seen = Vec::new();
    let tournament =
        Tournament::plan(&rt, config("tic_tac_toe", &["alpha", "engine:random"], 4)).unwrap();
    assert_eq!(tournament.len(), 4);
    let results = tournament.play(&rt, |p| seen.push((p.done, p.total))).await;
    assert_eq!(seen, [(1, 4), (2, 4), (3, 4), (4, 4)]);
    assert_eq!(results.schedule, "match");
    assert_eq!(results.games.len(), 4);
    // Sides alternate.
    let seats: Vec<&str> = results
        .games
        .iter()
        .map(|g| g.players[0].as_str())
        .collect();
    assert_eq!(seats, ["alpha", "engine:random", "alpha", "engine:random"]);
    for game in &results.games {
        assert_eq!(game.termination, Termination::Normal, "{game:?}");
        assert!(["1-0", "0-1", "1/2-1/2"].contains(&game.result.as_str()));
        assert_eq!(game.plies as usize, game.moves.len(), "{game:?}");
        assert!(game.moves.iter().all(|m| m.illegal.is_empty()));
        // The moves replay from the start to the end.
        assert_eq!(game.moves.last().unwrap().state, game.end);
        assert!(game.start.starts_with("G:.../.../..."), "{}", game.start);
    }
    let alpha = results.players.iter().find(|p| p.name == "alpha").unwrap();
    assert_eq!(alpha.kind, PlayerKind::Brain);
    assert_eq!(alpha.games, 4);
    assert_eq!(alpha.wins + alpha.draws + alpha.losses, 4);
    assert_eq!(alpha.illegal_moves, 0);
    assert!(alpha.moves >= 8, "{alpha:?}");
    let [low, high] = alpha.rating_ci95.unwrap();
    assert!(low <= alpha.rating.unwrap() && alpha.rating.unwrap() <= high);
    let anchor = results.anchor.as_ref().unwrap();
    assert_eq!(anchor.player, "engine:random");
    let random = results
        .players
        .iter()
        .find(|p| p.name == "engine:random")
        .unwrap();
    assert_eq!(random.rating, Some(anchor.rating));
    // Every game is in the database, as played.
    let kept = rt.memory().arena_games(&results.tournament).unwrap();
    assert_eq!(kept.len(), 4);
    let first: agents_core::arena::results::GameResult = serde_json::from_str(&kept[0]).unwrap();
    assert_eq!(first, results.games[0]);
    // The agents are gone, and so are their apps.
    assert!(rt.app_ids().is_empty(), "{:?}", rt.app_ids());
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_brains_meet_and_the_same_seed_gives_the_same_games() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let first = play(&rt, config("four_in_a_row", &["alpha", "beta"], 2)).await;
    for game in &first.games {
        assert_eq!(game.termination, Termination::Normal, "{game:?}");
        assert!(game.plies >= 7, "{game:?}");
    }
    let again = play(&rt, config("four_in_a_row", &["alpha", "beta"], 2)).await;
    assert_eq!(moves(&first), moves(&again));
    assert_ne!(first.tournament, again.tournament);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brain_making_illegal_moves_forfeits_after_three() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let results = play(&rt, config("tic_tac_toe", &["cheater", "engine:easy"], 2)).await;
    for game in &results.games {
        assert_eq!(game.termination, Termination::Forfeit, "{game:?}");
        assert_eq!(game.winner.as_deref(), Some("engine:easy"));
        let tried: Vec<&String> = game
            .moves
            .iter()
            .filter(|m| m.player == "cheater")
            .flat_map(|m| m.illegal.iter())
            .collect();
        assert!(tried.len() >= 3, "{game:?}");
        // On its turn Z9 is outside the listed moves (before it, no move is its own at all).
        assert!(tried.iter().all(|t| t.starts_with("Z9: ")), "{tried:?}");
        if game.players[0] == "cheater" {
            assert!(tried[0].starts_with("Z9: invalid_args: "), "{tried:?}");
        }
        let reason = game.reason.as_deref().unwrap();
        assert!(reason.starts_with("cheater: "), "{reason}");
    }
    let cheater = results
        .players
        .iter()
        .find(|p| p.name == "cheater")
        .unwrap();
    assert_eq!((cheater.losses, cheater.forfeits), (2, 2));
    assert!(cheater.illegal_moves >= 6);
    assert!(cheater.repairs >= 4, "{cheater:?}");
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ladder_puts_a_brain_against_every_engine_and_sea_battle_seats_it_first() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let results = play(
        &rt,
        ArenaConfig {
            ladder: true,
            concurrency: 3,
            ..config("sea_battle", &["alpha"], 1)
        },
    )
    .await;
    assert_eq!(results.schedule, "ladder");
    let names: Vec<&str> = results.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert_eq!(results.games.len(), 3);
    for game in &results.games {
        assert_eq!(game.players[0], "alpha");
        assert_eq!(game.termination, Termination::Normal, "{game:?}");
        // The referee keeps the whole state: both fleets.
        assert!(game.end.contains("|O:"), "{}", game.end);
        assert!(game.moves.iter().any(|m| m.player != "alpha"));
    }
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines_play_chess_to_the_ply_limit_in_pgn() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let results = play(
        &rt,
        ArenaConfig {
            max_plies: 10,
            ..config("chess", &["engine:random", "engine:easy"], 1)
        },
    )
    .await;
    let game = &results.games[0];
    assert_eq!(game.termination, Termination::MaxPlies);
    assert_eq!(game.result, "1/2-1/2");
    let pgn = game.pgn.as_deref().unwrap();
    assert!(pgn.contains("[White \"engine:random\"]"), "{pgn}");
    assert!(pgn.contains("1. "), "{pgn}");
    assert!(pgn.trim_end().ends_with("1/2-1/2"), "{pgn}");
    rt.shutdown(Duration::from_secs(2));
}

/// A model behind the fake provider (OpenAI's wire format, streamed) that plays the first move
/// its `move` tool lists: every move legal, its tokens and latency counted per move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_reads_the_legal_moves_off_its_tool_and_its_tokens_are_counted() {
    use agents_fakellm::{Behaviour, FakeServer};
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.set_default(Behaviour::PickListed {
        tool: "move".into(),
        text: "I wait for my turn.".into(),
    });
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime_with(
        &dir,
        json!({"profiles": {"fake": {"provider": "openai", "model": "fake-arena",
            "base_url": fake.openai_base(),
            "price": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}}}),
    );
    let results = play(&rt, config("four_in_a_row", &["fake", "engine:random"], 2)).await;
    for game in &results.games {
        assert_eq!(game.termination, Termination::Normal, "{game:?}");
    }
    let model = results.players.iter().find(|p| p.name == "fake").unwrap();
    assert_eq!(model.illegal_moves, 0, "{model:?}");
    assert!(model.moves >= 8, "{model:?}");
    assert!(
        model.tokens.input > 0 && model.tokens.per_move > 0.0,
        "{model:?}"
    );
    // Priced by its profile: what its tokens cost.
    let cost = (model.tokens.input as f64 + 4.0 * model.tokens.output as f64) / 1e6;
    assert!((model.cost_usd.unwrap() - cost).abs() < 1e-12, "{model:?}");
    let engine = results
        .players
        .iter()
        .find(|p| p.name == "engine:random")
        .unwrap();
    assert_eq!(engine.cost_usd, None);
    let played = results.games[0]
        .moves
        .iter()
        .find(|m| m.player == "fake" && !m.mv.is_null())
        .unwrap();
    assert!(played.input_tokens > 0, "{played:?}");
    // The model saw the legal moves as the move tool's enum.
    let asked = fake.requests();
    let listed = asked.iter().any(|r| {
        r.body["tools"].as_array().is_some_and(|tools| {
            tools.iter().any(|t| {
                t["function"]["name"] == "move"
                    && t["function"]["parameters"]["properties"]["column"]["enum"].is_array()
            })
        })
    });
    assert!(listed, "no request listed the legal moves");
    // It is told its part: the game, its side, how to move.
    for side in ["as the first side", "as the second side"] {
        let told = format!("You play four-in-a-row {side}");
        assert!(
            asked.iter().any(|r| r.body.to_string().contains(&told)),
            "no prompt says '{told}'"
        );
    }
    rt.shutdown(Duration::from_secs(2));
    fake.shutdown();
}

/// Blackjack is a score, not a rating: every player is dealt the same hands; basic strategy
/// beats always-stand over them; the slot machine spins the same reels for everyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn house_games_deal_every_player_the_same_hands() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let results = play(
        &rt,
        config("blackjack", &["alpha", "engine:basic", "engine:stand"], 40),
    )
    .await;
    assert!(results.anchor.is_none());
    assert_eq!(results.games.len(), 120);
    for game in &results.games {
        assert_eq!(game.termination, Termination::Normal, "{game:?}");
        assert_eq!(game.result, format!("{:+}", game.net.unwrap()));
        assert!(game.moves.iter().all(|m| m.illegal.is_empty()), "{game:?}");
    }
    let starts = |name: &str| -> Vec<&str> {
        results
            .games
            .iter()
            .filter(|g| g.players[0] == name)
            .map(|g| g.start.as_str())
            .collect()
    };
    assert_eq!(starts("alpha"), starts("engine:basic"));
    assert_eq!(starts("engine:stand"), starts("engine:basic"));
    let score = |name: &str| {
        let p = results.players.iter().find(|p| p.name == name).unwrap();
        assert_eq!(p.rating, None);
        p.score.unwrap()
    };
    assert_eq!(score("alpha").hands, 40);
    // Over enough hands (the same for both), basic strategy loses less than standing.
    let baselines = play(
        &rt,
        config("blackjack", &["engine:basic", "engine:stand"], 500),
    )
    .await;
    let net = |name: &str| {
        let p = baselines.players.iter().find(|p| p.name == name).unwrap();
        p.score.unwrap().net_per_100
    };
    assert!(
        net("engine:basic") > net("engine:stand") + 5.0,
        "{:?}",
        baselines.players
    );

    let slot = play(&rt, config("slot", &["alpha", "engine:spin"], 10)).await;
    let nets = |name: &str| -> Vec<Option<i64>> {
        slot.games
            .iter()
            .filter(|g| g.players[0] == name)
            .map(|g| g.net)
            .collect()
    };
    assert_eq!(nets("alpha"), nets("engine:spin"));
    assert_eq!(nets("alpha").len(), 10);
    rt.shutdown(Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named_and_nothing_is_played() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(&dir);
    let refused = |config| Tournament::plan(&rt, config).unwrap_err().to_string();
    assert!(refused(config("go", &["alpha", "engine:easy"], 1)).starts_with("unknown game 'go'"),);
    assert!(refused(config("rpg_dice", &["alpha"], 1)).starts_with("unknown game 'rpg_dice'"));
    let e = refused(config("chess", &["nobody", "engine:easy"], 1));
    assert!(e.starts_with("unknown player 'nobody': "), "{e}");
    let e = refused(config("chess", &["alpha", "engine:grandmaster"], 1));
    assert!(e.starts_with("unknown player 'engine:grandmaster'"), "{e}");
    let e = refused(config("chess", &["alpha", "alpha"], 1));
    assert_eq!(e, "player 'alpha' is listed twice");
    let e = refused(config("chess", &["alpha", "engine:easy"], 0));
    assert_eq!(e, "--games must be at least 1");
    let e = refused(config("sea_battle", &["alpha", "beta"], 1));
    assert!(e.contains("cannot meet"), "{e}");
    assert!(rt.agent_ids().is_empty());
    rt.shutdown(Duration::from_secs(2));
}
