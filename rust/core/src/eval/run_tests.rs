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

async fn run(config: RunConfig) -> CardResults {
    let dir = tempfile::tempdir().unwrap();
    let suite = Suite::parse(TOWN).unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_starter_suite_runs_on_the_scripted_brain() {
    let card = run(fast()).await;
    for m in &card.metrics {
        eprintln!("{:24} {:?} {} {:?}", m.key, m.value, m.detail, m.passed);
    }
    for s in &card.scenarios {
        eprintln!("{}:", s.name);
        for l in &s.lines {
            eprintln!("  {} -> {:?}: {}", l.speaker, l.to, l.text);
        }
        for q in &s.questions {
            eprintln!("  Q {:?} -> {:?} held {} tool {:?}", q.text, q.answer, q.held, q.tool_used);
        }
        for a in &s.agents {
            eprintln!("  {} ungrounded {:?} nonexistent {:?} tasks {}/{}", a.name, a.ungrounded, a.nonexistent, a.tasks_completed, a.tasks);
        }
    }
    assert_eq!(card.scenarios.len(), 3);
    assert_eq!(card.scenarios[0].restarts, 1);
}

#[test]
fn ablations_turn_their_part_off() {
    let mut settings = crate::mind::MemorySettings::default();
    for a in Ablation::ALL {
        assert_eq!(Ablation::parse(a.as_str()), Ok(a));
        a.apply(&mut settings);
    }
    assert!(!settings.enabled && settings.reflection_threshold == 0 && !settings.relationships);
    assert!(Ablation::parse("dreams").unwrap_err().contains("memory, reflection, relationships"));
}
