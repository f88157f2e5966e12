//! The ceiling of an agent's memories (`memory.max_memories`) holds as each memory is written:
//! planted memories of every kind, on a running idle agent and on a stored (terminated) one,
//! and what a reflection draws. A real SQLite file, and a real PostgreSQL with the `postgres`
//! feature; the scripted brain, tokio's paused clock.

use std::path::PathBuf;
use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, MessageKind, Received, Subscription};
use agents_core::memory::MemoryKind;
use agents_core::mind::MemorySettings;
use agents_core::runtime::{AgentConfig, Remember, Runtime, RuntimeOptions};
use tokio::runtime::Handle;
use tokio::time::Instant;

/// Memories planted of each kind, against a ceiling of 200 or 300.
const PLANTED: usize = 1_500;

/// A baker who speaks only when spoken to, keeping at most `cap` memories when given.
fn baker(cap: Option<usize>) -> AgentConfig {
    AgentConfig {
        autonomous: Some(false),
        memory: cap.map(|max_memories| MemorySettings {
            max_memories,
            ..Default::default()
        }),
        ..AgentConfig::named("Mira", "baker")
    }
}

/// Plants [`PLANTED`] memories of `kind` in `agent`; returns the last one's id.
fn plant(rt: &Runtime, agent: &str, kind: MemoryKind) -> i64 {
    let mut last = 0;
    for n in 0..PLANTED {
        last = rt
            .remember(
                agent,
                Remember {
                    kind,
                    importance: Some(5),
                    ..Remember::fact(format!("{kind} number {n}."))
                },
            )
            .unwrap();
    }
    last
}

/// How many memories `agent` has once every write queued is committed, and whether `id` is
/// one of them.
fn count_and_holds(rt: &Runtime, agent: &str, id: i64) -> (u64, bool) {
    rt.memory().flush().unwrap();
    let count = rt.memory().memory_count(agent).unwrap();
    let rows = rt.memories_page(agent, None, 500).unwrap().rows;
    (count, rows.iter().any(|m| m.id == id))
}

/// A running idle agent with a ceiling of its own (200, the game's), then stopped: planted
/// insights, summaries, relationships and facts stop at 200, the newest kept. A stored agent
/// without one keeps the runtime's (300).
async fn every_kind_stops_at_the_cap_running_idle_and_stored(database: PathBuf) {
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            memory: MemorySettings {
                max_memories: 300,
                ..Default::default()
            },
            ..RuntimeOptions::with_database(database)
        },
    )
    .unwrap();
    let mira = rt.spawn(baker(Some(200))).unwrap();
    let ivy = rt.spawn(baker(None)).unwrap();
    for kind in [
        MemoryKind::Insight,
        MemoryKind::Summary,
        MemoryKind::Relationship,
        MemoryKind::Fact,
    ] {
        let last = plant(&rt, &mira, kind);
        let (count, kept) = count_and_holds(&rt, &mira, last);
        assert_eq!(count, 200, "{kind} on a running idle agent");
        assert!(kept, "the newest {kind} is kept");
    }
    rt.terminate(&mira).unwrap();
    rt.terminate(&ivy).unwrap();
    for (agent, cap) in [(&mira, 200), (&ivy, 300)] {
        let last = plant(&rt, agent, MemoryKind::Fact);
        let (count, kept) = count_and_holds(&rt, agent, last);
        assert_eq!(count, cap, "a stored agent keeps its cap");
        assert!(kept);
    }
    rt.shutdown(Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn sqlite_every_kind_stops_at_the_cap_running_idle_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    every_kind_stops_at_the_cap_running_idle_and_stored(dir.path().join("agents.db")).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(start_paused = true)]
async fn postgres_every_kind_stops_at_the_cap_running_idle_and_stored() {
    let db = agents_testkit::postgres::database();
    every_kind_stops_at_the_cap_running_idle_and_stored(PathBuf::from(&db.url)).await;
}

/// Says `line` to `agent` as the player and waits for its answer.
async fn ask(rt: &Runtime, sub: &mut Subscription, agent: &str, line: &str) {
    let id = rt.send_message(agent, line).expect("sent");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentReplied { in_reply_to, .. } = &env.message
                    && in_reply_to.contains(&id)
                {
                    return;
                }
            }
            Ok(Some(Received::Lagged { missed })) => panic!("lagged by {missed}"),
            Ok(None) => panic!("bus closed"),
            Err(_) => panic!("no answer to {line:?}"),
        }
    }
}

/// An agent at its cap that goes on talking reflects, again and again, and what it draws is
/// stored without taking it past the cap.
#[tokio::test(start_paused = true)]
async fn reflections_do_not_pile_past_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            memory: MemorySettings {
                reflection_threshold: 20,
                ..Default::default()
            },
            ..RuntimeOptions::with_database(dir.path().join("agents.db"))
        },
    )
    .unwrap();
    let mira = rt.spawn(baker(Some(200))).unwrap();
    // At its cap with small talk (importance 2): what it hears now ranks above it.
    for n in 0..PLANTED {
        rt.remember(
            &mira,
            Remember {
                importance: Some(2),
                ..Remember::fact(format!("Small talk {n}."))
            },
        )
        .unwrap();
    }
    let mut sub = rt.subscribe(Filter::all());
    let mut reflections = rt.subscribe(Filter::all().kinds([MessageKind::AgentReflected]));
    let mut drawn = Vec::new();
    for round in 0..6 {
        for line in [
            "The festival lanterns are in the old mill.",
            "Could you bring the lanterns before dusk?",
            "The lanterns need new candles too.",
        ] {
            ask(&rt, &mut sub, &mira, &format!("{line} ({round})")).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
        while let Some(Received::Message(env)) = reflections.try_recv() {
            if let BusMessage::AgentReflected { memories, .. } = &env.message {
                drawn.extend(memories.iter().map(|m| m.memory_id));
            }
        }
        rt.memory().flush().unwrap();
        let count = rt.memory().memory_count(&mira).unwrap();
        assert!(count <= 200, "round {round}: {count} memories");
    }
    assert!(!drawn.is_empty(), "it reflected");
    let (count, kept) = count_and_holds(&rt, &mira, *drawn.last().unwrap());
    assert!(count <= 200, "{count}");
    assert!(kept, "the newest reflection is kept");
    rt.shutdown(Duration::from_secs(5));
}
