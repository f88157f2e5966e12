//! The report card played on the scripted brain: the starter suite (docs/suites/town.json)
//! through a real runtime on SQLite files, a restart resuming the agents, and the card's
//! numbers.

use std::time::Duration;

use super::results::CardResults;
use super::run::{Ablation, ReportCard, RunConfig};
use super::suite::Suite;
use crate::runtime::{Runtime, RuntimeOptions};

/// The starter suite users run.
const TOWN: &str = include_str!("../../../../docs/suites/town.json");

/// The game-master suite users run.
const GAME_MASTER: &str = include_str!("../../../../docs/suites/game-master.json");

/// Plays the first `scenarios` of the starter suite with `config`.
async fn run(config: RunConfig, scenarios: usize) -> CardResults {
    run_suite(TOWN, config, scenarios).await
}

/// Plays the first `scenarios` of the suite `text` with `config`.
async fn run_suite(text: &str, config: RunConfig, scenarios: usize) -> CardResults {
    let dir = tempfile::tempdir().unwrap();
    let mut suite = Suite::parse(text).unwrap();
    suite.scenarios.truncate(scenarios);
    let scratch = Runtime::start_on(
        tokio::runtime::Handle::current(),
        RuntimeOptions::with_database(dir.path().join("plan.db")),
    )
    .unwrap();
    let card = ReportCard::plan(&scratch, suite, config).unwrap();
    scratch.shutdown(Duration::from_secs(1));
    let base = dir.path().to_path_buf();
    card.run(
        tokio::runtime::Handle::current(),
        |db: &std::path::Path| RuntimeOptions::with_database(db),
        |i| base.join(format!("scenario-{i}.db")),
        |_, _| {},
    )
    .await
    .unwrap()
}

fn value(card: &CardResults, key: &str) -> Option<f64> {
    card.metrics.iter().find(|m| m.key == key).unwrap().value
}

fn fast() -> RunConfig {
    RunConfig {
        time_scale: 20.0,
        answer_timeout: Duration::from_secs(10),
        ..RunConfig::default()
    }
}

/// What the card says, for a failing assertion.
fn shown(card: &CardResults) -> String {
    let mut text = String::new();
    for m in &card.metrics {
        text += &format!("{}: {:?} ({})\n", m.key, m.value, m.detail);
    }
    for s in &card.scenarios {
        for q in &s.questions {
            text += &format!("{:?} -> {:?}\n", q.text, q.answer);
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_starter_suite_runs_on_the_scripted_brain() {
    let card = run(fast(), 3).await;
    let why = shown(&card);
    assert_eq!(card.scenarios.len(), 3);
    // The restart resumed the same agents from the database, and the baker still knew.
    let baker = &card.scenarios[0];
    assert_eq!(baker.restarts, 1);
    let after: Vec<_> = baker.questions.iter().filter(|q| q.after_restart).collect();
    assert_eq!(after.len(), 2);
    assert!(after[0].held, "{why}");
    assert_eq!(value(&card, "memory_after_restart"), Some(1.0), "{why}");
    assert_eq!(value(&card, "memory"), Some(1.0), "{why}");
    // The stock was looked up through the tool given as data, and the answer named it.
    assert_eq!(value(&card, "tool_use"), Some(1.0), "{why}");
    assert!(
        baker
            .questions
            .iter()
            .any(|q| q.tool_used == Some(true)
                && q.answer.as_deref().is_some_and(|a| a.contains("12"))),
        "{why}"
    );
    // Lines were said and measured; nothing named that does not exist.
    assert!(card.scenarios.iter().all(|s| s.lines.len() >= 5), "{why}");
    assert_eq!(value(&card, "nonexistent_calls"), Some(0.0));
    assert!(value(&card, "responsiveness").unwrap() >= 0.8, "{why}");
    assert!(value(&card, "repeated").unwrap() <= 0.1, "{why}");
    assert_eq!(value(&card, "help_answered"), Some(1.0), "{why}");
    assert!(value(&card, "grounding").is_some());
    assert!(
        card.metrics
            .iter()
            .find(|m| m.key == "latency_ms")
            .unwrap()
            .value
            .is_some()
    );
    // A line the suite made an agent say is not that agent's own.
    assert!(baker.lines.iter().any(|l| l.speaker.ends_with("@suite")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_memory_the_baker_forgets_across_the_restart() {
    let config = RunConfig {
        without: vec![Ablation::Memory],
        ..fast()
    };
    let card = run(config, 1).await;
    assert_eq!(card.without, vec!["memory"]);
    assert_eq!(
        value(&card, "memory_after_restart"),
        Some(0.0),
        "{}",
        shown(&card)
    );
}

#[test]
fn ablations_turn_their_part_off() {
    let mut settings = crate::mind::MemorySettings::default();
    for a in Ablation::ALL {
        assert_eq!(Ablation::parse(a.as_str()), Ok(a));
        a.apply(&mut settings);
    }
    assert!(!settings.enabled && settings.reflection_threshold == 0 && !settings.relationships);
    assert!(
        Ablation::parse("dreams")
            .unwrap_err()
            .contains("memory, reflection, relationships")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_game_master_suite_runs_on_the_scripted_brain() {
    let card = run_suite(GAME_MASTER, fast(), 1).await;
    let turns = &card.scenarios[0].turns;
    assert_eq!(card.scenarios[0].restarts, 1);
    let dice: Vec<usize> = turns.iter().map(|t| t.dice.len()).collect();
    assert_eq!(dice, [0, 1, 1, 2, 0, 0], "{turns:?}");
    assert!(
        turns[3]
            .input
            .starts_with("I drink my healing potion. (2d4: "),
        "{turns:?}"
    );
    assert_eq!(
        value(&card, "contract_after_repair"),
        Some(1.0),
        "{turns:?}"
    );
    assert_eq!(value(&card, "contract_replay"), Some(1.0), "{turns:?}");
    // The offline game master applies what each request calls for: options, the move through
    // the door, the bite, the potion, the friend following, the look around.
    let applied: Vec<&[String]> = turns.iter().map(|t| &t.applied[..]).collect();
    assert_eq!(
        applied,
        [
            &["move_options".to_string()][..],
            &["move".to_string()],
            &["hp_delta".to_string()],
            &["hp_delta".to_string()],
            &["move".to_string()],
            &["move_options".to_string()],
        ],
        "{turns:?}"
    );
    assert_eq!(value(&card, "contract_expected"), Some(1.0), "{turns:?}");
    // The same seed rolls the same dice in another run; another seed, others.
    let again = run_suite(GAME_MASTER, fast(), 1).await;
    let rolled = |card: &CardResults| -> Vec<Vec<u32>> {
        card.scenarios[0]
            .turns
            .iter()
            .map(|t| t.dice.clone())
            .collect()
    };
    assert_eq!(rolled(&again), rolled(&card));
    let other = run_suite(GAME_MASTER, RunConfig { seed: 2, ..fast() }, 1).await;
    assert_ne!(rolled(&other), rolled(&card));
}

/// A game-master scenario: the GM runs a fresh campaign, a restart comes between turns, and the
/// last turn rolls a die.
const GM_SUITE: &str = r#"{
    "name": "gm",
    "scenarios": [{
        "name": "a dungeon",
        "agents": [{"key": "gm", "name": "Morgana", "role": "game master", "autonomous": false}],
        "campaign": {"gm": "gm", "party": ["pc_001", "pc_002"]},
        "steps": [
            {"turn": {"input": "Where can I go?", "expect": ["move_options"]}},
            {"turn": {"input": "I walk to area_002.", "actor": "pc_001", "expect": ["move"]}},
            {"restart": {}},
            {"turn": {"input": "I swing at the rat.", "roll": {"sides": 20}}}
        ]
    }]
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_master_s_turns_are_judged_by_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let suite = Suite::parse(GM_SUITE).unwrap();
    let scratch = Runtime::start_on(
        tokio::runtime::Handle::current(),
        RuntimeOptions::with_database(dir.path().join("plan.db")),
    )
    .unwrap();
    let card = ReportCard::plan(&scratch, suite, fast()).unwrap();
    scratch.shutdown(Duration::from_secs(1));
    let base = dir.path().to_path_buf();
    let card = card
        .run(
            tokio::runtime::Handle::current(),
            |db: &std::path::Path| RuntimeOptions::with_database(db),
            |i| base.join(format!("gm-{i}.db")),
            |_, _| {},
        )
        .await
        .unwrap();
    let turns = &card.scenarios[0].turns;
    assert_eq!(turns.len(), 3);
    assert_eq!(value(&card, "contract_first_pass"), Some(1.0), "{turns:?}");
    assert_eq!(
        value(&card, "contract_after_repair"),
        Some(1.0),
        "{turns:?}"
    );
    // The die is rolled from the run's seed, told to the game master, and every turn of the
    // scripted game master replays identically.
    let seed = super::replay::dice_seed(fast().seed, "a dungeon", 3);
    let d20 = super::suite::Roll {
        sides: 20,
        count: 1,
    };
    let rolled = super::replay::roll(d20, &seed).unwrap().rolls;
    assert_eq!(turns[2].dice, rolled);
    assert_eq!(
        turns[2].input,
        format!("I swing at the rat. (d20: {})", rolled[0])
    );
    assert!(turns[0].dice.is_empty());
    assert!(turns.iter().all(|t| t.replays), "{turns:?}");
    assert_eq!(value(&card, "contract_replay"), Some(1.0));
    // The two turns with expected tools applied them; the third expected none.
    assert_eq!(turns[1].applied, ["move"]);
    assert_eq!(turns[2].applied_expected(), None);
    assert_eq!(value(&card, "contract_expected"), Some(1.0));
    // The restart keeps the campaign as its turns left it: the move of turn 2 holds after it.
    let db = rusqlite::Connection::open(base.join("gm-0.db")).unwrap();
    let positions = |turn: &str| -> serde_json::Value {
        let entry: String = db
            .query_row(
                "SELECT entry FROM campaign_turns WHERE turn_id = ?1",
                [turn],
                |r| r.get(0),
            )
            .unwrap();
        serde_json::from_str::<serde_json::Value>(&entry).unwrap()["state_summary"]["positions"]
            .clone()
    };
    assert_eq!(positions("turn_0002")["pc_001"], "area_002");
    assert_eq!(positions("turn_0003"), positions("turn_0002"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_game_master_repaired_is_valid_after_repair_not_first_time() {
    use agents_fakellm::{Behaviour, FakeCall, FakeServer};
    use serde_json::json;
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    fake.push_many([
        // A move the contract refuses (from_area_id is not an argument), then the same move.
        Behaviour::calls(vec![FakeCall::new(
            "move",
            json!({"actor_id": "pc_001", "to_area_id": "area_002", "from_area_id": "area_001"}),
        )]),
        Behaviour::Reply {
            text: "You slip into the side room.".into(),
            tool_calls: vec![FakeCall::new(
                "move",
                json!({"actor_id": "pc_001", "to_area_id": "area_002"}),
            )],
            chunk_chars: None,
        },
    ]);
    fake.set_default(Behaviour::text("The torches flicker."));
    let base = fake.openai_base();
    let options = move |db: &std::path::Path| {
        let mut options = RuntimeOptions::with_database(db);
        options.brain_profiles.insert(
            "fake".into(),
            serde_json::from_value(json!({"provider": "openai", "model": "fake-1",
                "base_url": base, "max_retries": 0}))
            .unwrap(),
        );
        options
    };
    let dir = tempfile::tempdir().unwrap();
    let mut suite = Suite::parse(GM_SUITE).unwrap();
    suite.scenarios[0].steps.truncate(2);
    let scratch = Runtime::start_on(
        tokio::runtime::Handle::current(),
        options(&dir.path().join("plan.db")),
    )
    .unwrap();
    let config = RunConfig {
        brain: "fake".into(),
        ..fast()
    };
    let card = ReportCard::plan(&scratch, suite, config).unwrap();
    scratch.shutdown(Duration::from_secs(1));
    let at = dir.path().to_path_buf();
    let card = card
        .run(
            tokio::runtime::Handle::current(),
            options,
            |i| at.join(format!("gm-{i}.db")),
            |_, _| {},
        )
        .await
        .unwrap();
    let turns = &card.scenarios[0].turns;
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[0].repairs, 1, "{turns:?}");
    assert!(!turns[0].first_pass && turns[0].after_repair, "{turns:?}");
    assert!(turns[1].first_pass, "{turns:?}");
    assert_eq!(value(&card, "contract_first_pass"), Some(0.5));
    assert_eq!(value(&card, "contract_after_repair"), Some(1.0));
    // Taken again, the first turn gets the model's next answer, not the one it kept: it does
    // not replay. The second gets the same answer both times.
    assert!(!turns[0].replays, "{turns:?}");
    assert_eq!(
        turns[0].replay_difference.as_deref(),
        Some("taken again, the turn changed the narration")
    );
    assert!(turns[1].replays, "{turns:?}");
    assert_eq!(value(&card, "contract_replay"), Some(0.5));
    // The GM's model calls count: three answers (one repaired) over two turns kept.
    let tokens = value(&card, "tokens_per_decision").unwrap_or(0.0);
    assert!(tokens > 0.0, "the provider's tokens per GM turn: {tokens}");
}
