//! `agents-server eval`, run as a real process: the starter suite (docs/suites/town.json) on
//! the scripted brain and on a model brain through the fake provider (a real HTTP server on
//! loopback) prints the card against its targets and writes `results.json` and `report.html`
//! (a call of a tool that does not exist counted from the decision journal);
//! bad input (a suite with a mistake, an unknown profile, an unknown part of the mind) is
//! refused with exit code 2 and a message naming it, and touches no data.

mod support;

use std::time::Duration;

use agents_core::report_card::results::CardResults;
use agents_core::runtime::{Runtime, RuntimeOptions};
use agents_fakellm::{Behaviour, FakeCall, FakeServer};
use serde_json::json;
use support::{CliRun, run_cli};

/// The starter suite, as shipped.
fn town() -> String {
    format!("{}/../../docs/suites/town.json", env!("CARGO_MANIFEST_DIR"))
}

fn metric(card: &CardResults, key: &str) -> (Option<f64>, Option<bool>) {
    let m = card.metrics.iter().find(|m| m.key == key).unwrap();
    (m.value, m.passed)
}

/// Runs the CLI off the async runtime (the fake server keeps answering meanwhile).
async fn cli(args: Vec<String>) -> CliRun {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_cli(&args, None)
    })
    .await
    .unwrap()
}

#[test]
fn the_starter_suite_on_the_scripted_brain_prints_and_writes_its_card() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("eval.db");
    let report = dir.path().join("card");
    let suite = town();
    let run = run_cli(
        &[
            "eval",
            "--suite",
            &suite,
            "--brain",
            "scripted",
            "--time-scale",
            "20",
            "--db",
            db.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for line in [
        "report card: suite town, brain scripted (seed 1, 3 scenarios",
        "memory after a restart",
        "read-only tool use",
        "calls naming what does not exist",
    ] {
        assert!(run.stdout.contains(line), "{line:?}:\n{}", run.stdout);
    }
    assert!(run.stderr.contains("eval: 3/3 scenarios"), "{}", run.stderr);
    let text = std::fs::read_to_string(report.join("results.json")).unwrap();
    let card: CardResults = serde_json::from_str(&text).unwrap();
    assert_eq!(card.brain, "scripted");
    assert_eq!(card.scenarios.len(), 3);
    assert_eq!(card.scenarios[0].restarts, 1);
    assert_eq!(
        metric(&card, "memory_after_restart"),
        (Some(1.0), Some(true))
    );
    assert_eq!(metric(&card, "tool_use"), (Some(1.0), Some(true)));
    assert_eq!(metric(&card, "nonexistent_calls"), (Some(0.0), Some(true)));
    let page = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(page.contains("<tr id=\"metric-memory\">"), "{page}");
    assert!(page.contains("Scenario: the baker remembers (1 restart)"));
    // Every scenario played in the database asked for, its agents stored under their keys.
    let runtime = Runtime::start(RuntimeOptions::with_database(&db)).unwrap();
    let stored = runtime.stored_agents().unwrap();
    runtime.shutdown(Duration::from_secs(5));
    assert_eq!(stored.len(), 8, "{stored:?}");
    assert!(
        stored.iter().all(|a| a.config["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("eval:"))),
        "{stored:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_brain_is_measured_through_the_fake_provider() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    // A model that first calls a tool that does not exist (twice: the contract check refuses
    // it and sends it back for repair), then always says the same line and never looks
    // anything up.
    let teleport = || Behaviour::calls(vec![FakeCall::new("teleport", json!({"to": "moon"}))]);
    fake.push_many([teleport(), teleport()]);
    fake.set_default(Behaviour::text(
        "The festival lanterns are in the old mill, by the town gate.",
    ));
    let dir = tempfile::tempdir().unwrap();
    let brains = dir.path().join("brains.json");
    std::fs::write(
        &brains,
        json!({"profiles": {"fake": {"provider": "openai", "model": "fake-1",
            "base_url": fake.openai_base(), "max_retries": 0}}})
        .to_string(),
    )
    .unwrap();
    let report = dir.path().join("card");
    let run = cli([
        "eval",
        "--suite",
        &town(),
        "--brains",
        brains.to_str().unwrap(),
        "--brain",
        "fake",
        "--time-scale",
        "30",
        "--answer-timeout-seconds",
        "10",
        "--report",
        report.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect())
    .await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!fake.requests().is_empty());
    let card: CardResults =
        serde_json::from_str(&std::fs::read_to_string(report.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(card.brain, "fake");
    // The fake's tokens and latency, from the decision journal.
    let (tokens, _) = metric(&card, "tokens_per_decision");
    assert!(tokens.unwrap() > 0.0, "{:?}", card.metrics);
    // The same line every time: the memory questions hold the fact, the stock questions are
    // not looked up, and the lines repeat.
    assert_eq!(metric(&card, "memory"), (Some(1.0), Some(true)));
    assert_eq!(metric(&card, "tool_use"), (Some(0.0), Some(false)));
    // The calls of a tool that does not exist, from the decision journal.
    assert_eq!(metric(&card, "nonexistent_calls"), (Some(2.0), Some(false)));
    let refused: Vec<&String> = card.scenarios[0]
        .agents
        .iter()
        .flat_map(|a| &a.nonexistent)
        .collect();
    assert!(
        refused.len() == 2
            && refused
                .iter()
                .all(|r| r.starts_with("teleport: tool_not_allowed")),
        "{refused:?}"
    );
    let (repeated, passed) = metric(&card, "repeated");
    assert!(
        repeated.unwrap() > 0.5 && passed == Some(false),
        "{repeated:?}"
    );
    // A missed target is shown as such, in the table and on the page.
    let missed = run
        .stdout
        .lines()
        .find(|l| l.starts_with("read-only tool use"));
    assert!(
        missed.is_some_and(|l| l.contains("MISSED")),
        "{}",
        run.stdout
    );
    let page = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(page.contains("<tr id=\"metric-tool_use\" class=\"missed\">"));
}

#[test]
fn bad_input_is_named_and_touches_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("eval.db");
    let report = dir.path().join("card");
    let (db_arg, report_arg) = (db.to_str().unwrap(), report.to_str().unwrap());
    let refused = |args: &[&str], says: &str| {
        let mut all = vec!["eval", "--db", db_arg, "--report", report_arg];
        all.extend_from_slice(args);
        let run = run_cli(&all, None);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    };
    let suite = dir.path().join("suite.json");
    let text = std::fs::read_to_string(town()).unwrap();
    let mistaken = text.replacen(
        r#"{"ask": {"to": "baker", "text": "Any rye left?""#,
        r#"{"ask": {"to": "bakr", "text": "Any rye left?""#,
        1,
    );
    assert_ne!(mistaken, text);
    std::fs::write(&suite, mistaken).unwrap();
    let suite = suite.to_str().unwrap();
    refused(
        &["--suite", suite],
        "suite.json: scenarios[0].steps[6].ask.to: no agent 'bakr' in scenario 'the baker \
         remembers' (its agents: baker, smith)",
    );
    let town = town();
    refused(
        &["--suite", &town, "--brain", "gemma"],
        "error: the brain 'gemma' cannot be used: unknown brain 'gemma'",
    );
    refused(
        &["--suite", &town, "--without", "dreams"],
        "unknown part 'dreams' (one of memory, reflection, relationships)",
    );
    refused(
        &["--suite", "/nonexistent/suite.json"],
        "cannot read the suite /nonexistent/suite.json",
    );
    let brains = dir.path().join("brains.json");
    std::fs::write(&brains, r#"{"profiles": {"x": {"provider": "scripted""#).unwrap();
    refused(
        &[
            "--suite",
            &town,
            "--brains",
            brains.to_str().unwrap(),
            "--brain",
            "x",
        ],
        "brains.json: ",
    );
    assert!(!db.exists(), "bad input created the database");
    assert!(!report.exists(), "bad input wrote a report");
}
