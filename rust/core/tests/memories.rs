//! Agents remember: memories formed as they hear, say, do and notice things, recalled for
//! their decisions, planted, recalled, forgotten and paged by the game. Real SQLite files, the
//! scripted brain, tokio's paused clock.

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, Received, Subscription};
use agents_core::memory::MemoryKind;
use agents_core::mind::MemorySettings;
use agents_core::runtime::{AgentConfig, Remember, Runtime, RuntimeError, RuntimeOptions};
use tokio::runtime::Handle;
use tokio::time::Instant;

fn options(dir: &tempfile::TempDir) -> RuntimeOptions {
    RuntimeOptions {
        database: dir.path().join("agents.db"),
        thinking_seconds: 0.2,
        speaking_seconds: 0.5,
        ..RuntimeOptions::default()
    }
}

fn start(dir: &tempfile::TempDir) -> Runtime {
    Runtime::start_on(Handle::current(), options(dir)).expect("runtime starts")
}

/// A baker who speaks only when spoken to.
fn baker() -> AgentConfig {
    AgentConfig {
        name: "Mira".into(),
        role: "baker".into(),
        autonomous: Some(false),
        ..Default::default()
    }
}

/// Says `line` to `agent` as the player and returns the agent's answer.
async fn ask(rt: &Runtime, sub: &mut Subscription, agent: &str, line: &str) -> String {
    let id = rt.send_message(agent, line).expect("sent");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentReplied {
                    in_reply_to, text, ..
                } = &env.message
                    && in_reply_to.contains(&id)
                {
                    return text.clone();
                }
            }
            Ok(Some(Received::Lagged { missed })) => panic!("lagged by {missed}"),
            Ok(None) => panic!("bus closed"),
            Err(_) => panic!("no answer to {line:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn told_something_then_asked_after_small_talk_the_scripted_baker_answers_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let mira = rt.spawn(baker()).unwrap();
    ask(&rt, &mut sub, &mira, "The cellar key is under the mat.").await;
    // Small talk pushes the line out of the five lines a decision sees.
    for line in [
        "Lovely weather today.",
        "How is the bread this morning?",
        "The festival starts soon.",
        "My boots are muddy.",
    ] {
        ask(&rt, &mut sub, &mira, line).await;
        tokio::time::sleep(Duration::from_secs(15)).await;
    }
    let answer = ask(&rt, &mut sub, &mira, "Where is the cellar key?").await;
    assert_eq!(
        answer,
        "You told me: \u{201c}The cellar key is under the mat.\u{201d}"
    );
    // The decision's trace says which memories it recalled, and why.
    let last = rt.recent_decisions(&mira).unwrap().pop().unwrap();
    let told = last
        .recalled
        .iter()
        .find(|r| r.memory.text.contains("under the mat"))
        .expect("the told line was recalled");
    assert_eq!(told.memory.kind, MemoryKind::Heard);
    assert_eq!(told.memory.about.as_deref(), Some("player_0"));
    assert_eq!(told.relevance, 1.0, "{told:?}");
    assert!(!told.in_view);
    assert!(
        last.context.contains("memory(ies) recalled"),
        "{}",
        last.context
    );
    // What it heard and said is in its stream, in order, each with an importance.
    let stream = rt.memories_page(&mira, None, 100).unwrap().rows;
    assert_eq!(stream.len(), 12, "{stream:#?}");
    assert_eq!(stream[0].kind, MemoryKind::Heard);
    assert_eq!(
        stream[0].text,
        "player_0 said to me: \"The cellar key is under the mat.\""
    );
    assert_eq!(stream[0].importance, 5);
    assert_eq!(stream[1].kind, MemoryKind::Said);
    assert_eq!(stream[1].about.as_deref(), Some("player_0"));
    assert!(stream.windows(2).all(|w| w[0].id < w[1].id));
    assert!(stream.windows(2).all(|w| w[0].game_time <= w[1].game_time));
    // Recalled memories are recent again.
    let key = rt.memories_page(&mira, Some(2), 1).unwrap().rows.remove(0);
    assert!(key.accessed_at.unwrap() > key.game_time, "{key:?}");
    rt.shutdown(Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn tasks_walks_and_observations_are_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mira = rt.spawn(baker()).unwrap();
    let task = rt.assign_task(&mira, "bake twelve loaves").unwrap();
    rt.observe(&mira, "Smoke rises from the mill.").unwrap();
    rt.complete_task(task.id).unwrap();
    let stream = rt.memories_page(&mira, None, 10).unwrap().rows;
    let kinds: Vec<(MemoryKind, &str)> = stream.iter().map(|m| (m.kind, m.text.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (
                MemoryKind::Task,
                "I was given the task \"bake twelve loaves\""
            ),
            (MemoryKind::Observed, "Smoke rises from the mill."),
            (
                MemoryKind::Task,
                "I finished the task \"bake twelve loaves\""
            ),
        ]
    );
    rt.shutdown(Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn a_game_plants_recalls_supersedes_and_forgets_memories() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let mira = rt.spawn(baker()).unwrap();
    rt.set_game_time(1_000.0).unwrap();
    let first = rt
        .remember(&mira, Remember::fact("The cellar key is under the mat."))
        .unwrap();
    let moved = rt
        .remember(
            &mira,
            Remember {
                supersedes: vec![first],
                importance: Some(8),
                ..Remember::fact("Tom moved the cellar key to the top shelf.")
            },
        )
        .unwrap();
    let recalled = rt.recall(&mira, "cellar key", 10).unwrap();
    let ids: Vec<i64> = recalled.iter().map(|r| r.memory.id).collect();
    assert_eq!(ids, [moved, first], "{recalled:#?}");
    assert_eq!(recalled[1].memory.superseded_by, Some(moved));
    assert!(recalled[0].score > recalled[1].score);
    assert!(recalled.iter().all(|r| r.memory.game_time >= 1_000.0));
    // Only looking: recall leaves them as they were.
    assert!(recalled.iter().all(|r| r.memory.accessed_at.is_none()));
    // The belief it holds now is the one it answers with.
    let answer = ask(&rt, &mut sub, &mira, "Where is the cellar key?").await;
    assert_eq!(
        answer,
        "I remember: Tom moved the cellar key to the top shelf."
    );

    // Bad input: a specific error, nothing stored.
    let err = |e: RuntimeError| (e.code().as_str(), e.to_string());
    assert_eq!(
        err(rt.remember(&mira, Remember::fact("   ")).unwrap_err()),
        ("invalid_message", "invalid memory: text is empty".into())
    );
    let loud = Remember {
        importance: Some(11),
        ..Remember::fact("x")
    };
    assert_eq!(
        err(rt.remember(&mira, loud).unwrap_err()).0,
        "invalid_message"
    );
    assert_eq!(
        err(rt.remember("agent_404", Remember::fact("x")).unwrap_err()),
        ("unknown_agent", "unknown agent 'agent_404'".into())
    );
    assert_eq!(
        err(rt.recall("agent_404", "x", 5).unwrap_err()).0,
        "unknown_agent"
    );
    rt.forget(&mira, first).unwrap();
    assert_eq!(
        err(rt.forget(&mira, first).unwrap_err()),
        ("unknown_memory", format!("{mira} has no memory {first}"))
    );
    let left: Vec<i64> = rt
        .memories_page(&mira, None, 50)
        .unwrap()
        .rows
        .iter()
        .map(|m| m.id)
        .collect();
    assert!(!left.contains(&first) && left.contains(&moved), "{left:?}");
    rt.shutdown(Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn an_agent_with_memory_off_forms_none_and_the_clock_resumes_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let quiet = rt
        .spawn(AgentConfig {
            memory: Some(MemorySettings {
                enabled: false,
                ..Default::default()
            }),
            ..baker()
        })
        .unwrap();
    ask(&rt, &mut sub, &quiet, "The cellar key is under the mat.").await;
    assert!(rt.memories_page(&quiet, None, 10).unwrap().rows.is_empty());
    // Planted facts are still kept.
    rt.set_game_time(5_000.0).unwrap();
    rt.remember(&quiet, Remember::fact("The mill burned down."))
        .unwrap();
    assert!(rt.set_game_time(f64::NAN).is_err());
    rt.shutdown(Duration::from_secs(5));
    drop(rt);
    let rt = start(&dir);
    let now = rt.game_time();
    assert!((5_000.0..5_001.0).contains(&now), "{now}");
    rt.shutdown(Duration::from_secs(5));
}

/// The next `agent_reflected` on `sub`, as `(memories, drawn_by)`.
async fn reflected(sub: &mut Subscription) -> (Vec<agents_core::memory::DrawnMemory>, String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentReflected {
                    memories, drawn_by, ..
                } = &env.message
                {
                    return (memories.clone(), drawn_by.clone());
                }
            }
            Ok(other) => panic!("{other:?}"),
            Err(_) => panic!("no reflection"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_scripted_agent_reflects_by_rule_and_recalls_what_it_thinks_of_whoever_speaks() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            memory: MemorySettings {
                reflection_threshold: 20,
                ..Default::default()
            },
            ..options(&dir)
        },
    )
    .unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let mut reflections =
        rt.subscribe(Filter::all().kinds([agents_core::bus::MessageKind::AgentReflected]));
    let mira = rt.spawn(baker()).unwrap();
    for line in [
        "The festival lanterns are in the old mill.",
        "Could you bring the lanterns before dusk?",
        "The lanterns need new candles too.",
        "Thank you for helping with the lanterns!",
    ] {
        ask(&rt, &mut sub, &mira, line).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let (drawn, drawn_by) = reflected(&mut reflections).await;
    assert_eq!(drawn_by, "rules");
    let stream = rt.memories_page(&mira, None, 100).unwrap().rows;
    let cited = |ids: &[i64]| {
        ids.iter()
            .all(|id| stream.iter().any(|m| m.id == *id && !m.kind.is_derived()))
    };
    let insights: Vec<_> = drawn
        .iter()
        .filter(|m| m.kind == MemoryKind::Insight)
        .collect();
    assert!(!insights.is_empty(), "{drawn:#?}");
    assert!(
        insights
            .iter()
            .all(|i| !i.sources.is_empty() && cited(&i.sources))
    );
    assert!(
        insights.iter().any(|i| i
            .text
            .starts_with("I talk with player_0 more than with anyone else")),
        "{insights:#?}"
    );
    let thought = drawn
        .iter()
        .find(|m| m.kind == MemoryKind::Relationship)
        .expect("what it thinks of the player");
    assert_eq!(thought.about.as_deref(), Some("player_0"));
    assert!(
        thought
            .text
            .starts_with("What I think of player_0: we exchanged"),
        "{}",
        thought.text
    );
    assert!(thought.text.contains("lanterns"), "{}", thought.text);
    assert!(cited(&thought.sources));
    // Stored, in the stream, as published.
    for m in &drawn {
        assert!(
            stream
                .iter()
                .any(|s| s.id == m.memory_id && s.text == m.text)
        );
    }

    // When the player speaks again, what Mira thinks of them is recalled, fully relevant.
    ask(&rt, &mut sub, &mira, "Good evening!").await;
    let decisions = rt.recent_decisions(&mira).unwrap();
    let last = decisions.last().unwrap();
    let recalled = last
        .recalled
        .iter()
        .find(|r| r.memory.id == thought.memory_id)
        .unwrap_or_else(|| panic!("{:#?}", last.recalled));
    assert_eq!(recalled.relevance, 1.0);

    // More talk, a second reflection: the new relationship supersedes the first.
    for line in [
        "The mill door sticks, pull hard.",
        "The candles are in the chapel.",
        "See you at the festival!",
        "Do not forget the lanterns.",
    ] {
        ask(&rt, &mut sub, &mira, line).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let (again, _) = reflected(&mut reflections).await;
    let newer = again
        .iter()
        .find(|m| m.kind == MemoryKind::Relationship)
        .expect("a newer thought");
    let old = rt
        .memories_page(&mira, Some(thought.memory_id + 1), 1)
        .unwrap()
        .rows
        .remove(0);
    assert_eq!(old.id, thought.memory_id);
    assert_eq!(old.superseded_by, Some(newer.memory_id));
    rt.shutdown(Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn over_its_cap_an_agent_sums_up_its_oldest_least_important_memories() {
    let dir = tempfile::tempdir().unwrap();
    let rt = start(&dir);
    let mut sub = rt.subscribe(Filter::all());
    let mira = rt
        .spawn(AgentConfig {
            memory: Some(MemorySettings {
                max_memories: 200,
                ..Default::default()
            }),
            ..baker()
        })
        .unwrap();
    let key = rt
        .remember(
            &mira,
            Remember {
                importance: Some(9),
                ..Remember::fact("The cellar key is under the mat.")
            },
        )
        .unwrap();
    for n in 0..400 {
        rt.remember(
            &mira,
            Remember {
                importance: Some(2),
                ..Remember::fact(format!("Bread batch {n} came out fine."))
            },
        )
        .unwrap();
    }
    // Each write kept it at its cap (the ceiling forgot the least valuable); counted between
    // decisions: after the next one, compaction takes it a tenth below.
    let count = || rt.memory().memory_count(&mira).unwrap();
    assert_eq!(count(), 200);
    ask(&rt, &mut sub, &mira, "Good morning!").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while count() > 183 {
        assert!(Instant::now() < deadline, "still {} memories", count());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stream = rt.memories_page(&mira, None, 500).unwrap().rows;
    assert!(stream.len() <= 183, "{}", stream.len());
    let summaries: Vec<_> = stream
        .iter()
        .filter(|m| m.kind == MemoryKind::Summary)
        .collect();
    assert!(!summaries.is_empty());
    for s in &summaries {
        assert!(s.text.starts_with("Earlier ("), "{}", s.text);
        assert!(!s.sources.is_empty() && s.sources.len() <= 64);
        // What it sums up is gone from the stream.
        assert!(
            s.sources
                .iter()
                .all(|id| stream.iter().all(|m| m.id != *id))
        );
    }
    // The important fact stays; the oldest batches went first, the newest are kept.
    assert!(stream.iter().any(|m| m.id == key));
    assert!(
        stream
            .iter()
            .any(|m| m.text == "Bread batch 399 came out fine.")
    );
    assert!(
        !stream
            .iter()
            .any(|m| m.text == "Bread batch 0 came out fine.")
    );
    // And it still answers from memory.
    let answer = ask(&rt, &mut sub, &mira, "Where is the cellar key?").await;
    assert!(answer.contains("under the mat"), "{answer}");
    rt.shutdown(Duration::from_secs(5));
}

/// The town's case: the baker was told where the lanterns are, has talked a lot with Ada since
/// (so she has reflected, and thinks things of both), and the player's question arrives with
/// one of Ada's lines in the same decision: she still answers the player from memory.
#[tokio::test(start_paused = true)]
async fn asked_together_with_another_line_after_reflections_the_baker_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(
        Handle::current(),
        RuntimeOptions {
            memory: MemorySettings {
                reflection_threshold: 15,
                ..Default::default()
            },
            ..options(&dir)
        },
    )
    .unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let mira = rt.spawn(baker()).unwrap();
    ask(
        &rt,
        &mut sub,
        &mira,
        "By the way, the festival lanterns are stored in the old mill.",
    )
    .await;
    for n in 0..12 {
        let line = format!(
            "Mira, you told me thanks for the thought about the festival, baker, on day {n}."
        );
        rt.send_message_from("agent_009", &mira, &line).unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let kinds: Vec<MemoryKind> = rt
        .memories_page(&mira, None, 200)
        .unwrap()
        .rows
        .iter()
        .map(|m| m.kind)
        .collect();
    assert!(kinds.contains(&MemoryKind::Relationship), "{kinds:?}");
    let question = rt
        .send_message(&mira, "Mira, where are the festival lanterns?")
        .unwrap();
    let also = rt
        .send_message_from(
            "agent_009",
            &mira,
            "Did you hear that, Mira? You told me 'Thanks, Mira. I hadn't thought about a baker.'",
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(Received::Message(env))) => {
                if let BusMessage::AgentReplied {
                    in_reply_to, text, ..
                } = &env.message
                    && in_reply_to.contains(&question)
                {
                    assert!(in_reply_to.contains(&also), "one decision answers both");
                    break text.clone();
                }
            }
            Ok(other) => panic!("{other:?}"),
            Err(_) => panic!("no answer"),
        }
    };
    assert!(
        answer.contains(
            "You told me: \u{201c}By the way, the festival lanterns are stored in the old mill.\u{201d}"
        ),
        "{answer}"
    );
    rt.shutdown(Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn a_resumed_agent_goes_on_counting_toward_its_next_reflection() {
    let dir = tempfile::tempdir().unwrap();
    let with_threshold = |dir: &tempfile::TempDir| RuntimeOptions {
        memory: MemorySettings {
            reflection_threshold: 20,
            ..Default::default()
        },
        ..options(dir)
    };
    let lines = [
        "The festival lanterns are in the old mill.",
        "Could you bring the lanterns before dusk?",
        "The lanterns need new candles too.",
        "Thank you for helping with the lanterns!",
    ];
    // Two exchanges before a restart, two after: the threshold is passed only by all four.
    let mira = {
        let rt = Runtime::start_on(Handle::current(), with_threshold(&dir)).unwrap();
        let mut sub = rt.subscribe(Filter::all());
        let mira = rt.spawn(baker()).unwrap();
        for line in &lines[..2] {
            ask(&rt, &mut sub, &mira, line).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
        let stream = rt.memories_page(&mira, None, 100).unwrap().rows;
        assert!(
            stream.iter().all(|m| !m.kind.is_derived()),
            "no reflection yet: {stream:#?}"
        );
        let counted: u32 = stream.iter().map(|m| u32::from(m.importance)).sum();
        assert!(counted < 20, "{counted}");
        rt.shutdown(Duration::from_secs(5));
        mira
    };
    let rt = Runtime::start_on(Handle::current(), with_threshold(&dir)).unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let mut reflections =
        rt.subscribe(Filter::all().kinds([agents_core::bus::MessageKind::AgentReflected]));
    rt.spawn(AgentConfig {
        agent_id: Some(mira.clone()),
        ..Default::default()
    })
    .unwrap();
    for line in &lines[2..] {
        ask(&rt, &mut sub, &mira, line).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let (drawn, _) = reflected(&mut reflections).await;
    // It drew on the lines heard before the restart too.
    let stream = rt.memories_page(&mira, None, 100).unwrap().rows;
    let first = stream
        .iter()
        .find(|m| m.text.contains("in the old mill"))
        .expect("the first line")
        .id;
    assert!(
        drawn.iter().any(|m| m.sources.contains(&first)),
        "{drawn:#?}"
    );
    rt.shutdown(Duration::from_secs(5));
}
