//! Recall by meaning: the runtime's embeddings endpoint — the fake provider's `/v1/embeddings`
//! on loopback, hashed bags of words — makes vectors of agents' memories in the background and
//! of what decisions recall by; recall fuses them with the keyword rank. An endpoint that is
//! down, slow, of the wrong dimension, garbled or without its key leaves recall to words: the
//! decision still happens, nothing stored is lost, and memories formed meanwhile get their
//! vectors once it answers again. Real SQLite files, real time.

use std::time::Duration;

use agents_core::bus::{BusMessage, Filter, Received, Subscription};
use agents_core::mind::{EmbeddingSettings, MemorySettings, Recalled};
use agents_core::runtime::{AgentConfig, Remember, Runtime, RuntimeOptions};
use agents_fakellm::{EmbeddingsBehaviour, FakeServer};
use tokio::runtime::Handle;
use tokio::time::Instant;

fn options(dir: &tempfile::TempDir, embeddings: Option<EmbeddingSettings>) -> RuntimeOptions {
    RuntimeOptions {
        database: dir.path().join("agents.db"),
        thinking_seconds: 0.05,
        speaking_seconds: 0.05,
        embeddings,
        ..RuntimeOptions::default()
    }
}

fn endpoint(fake: &FakeServer) -> EmbeddingSettings {
    EmbeddingSettings {
        query_timeout_ms: 300,
        timeout_seconds: 2.0,
        ..EmbeddingSettings::new(fake.openai_base(), "fake-embed")
    }
}

fn baker(memory: Option<MemorySettings>) -> AgentConfig {
    AgentConfig {
        name: "Mira".into(),
        role: "baker".into(),
        autonomous: Some(false),
        memory,
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

/// Recalls until the memory with `text` comes back with a closeness in meaning (its vector
/// was made and is held), or panics after 20 s.
async fn recalled_by_meaning(rt: &Runtime, agent: &str, query: &str, text: &str) -> Recalled {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = rt.recall(agent, query, 10).unwrap();
        if let Some(r) = found
            .into_iter()
            .find(|r| r.memory.text == text && r.semantic.is_some())
        {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "{text:?} never recalled by meaning"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Plants `fact`, then checks it is recalled by its words only (the game's recall waits for it
/// to be stored) and the baker still answers from it.
async fn words_only(rt: &Runtime, sub: &mut Subscription, mira: &str, what: &str, fact: &str) {
    rt.remember(mira, Remember::fact(fact)).unwrap();
    let found = rt.recall(mira, "cellar key", 10).unwrap();
    assert!(
        found.iter().any(|r| r.memory.text == fact),
        "{what}: nothing stored is lost: {found:?}"
    );
    assert!(
        found.iter().all(|r| r.semantic.is_none()),
        "{what}: words only: {found:?}"
    );
    let answer = ask(rt, sub, mira, "Where is the cellar key?").await;
    assert!(
        answer.contains("The cellar key is under the mat."),
        "{what}: {answer}"
    );
}

fn texts_embedded(fake: &FakeServer) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.path.ends_with("/embeddings"))
        .flat_map(|r| {
            r.body["input"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memories_get_vectors_and_recall_fuses_meaning_with_words() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(Handle::current(), options(&dir, Some(endpoint(&fake)))).unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let mira = rt.spawn(baker(None)).unwrap();
    let words_only = rt
        .spawn(AgentConfig {
            name: "Tom".into(),
            ..baker(Some(MemorySettings {
                semantic_weight: 0.0,
                ..Default::default()
            }))
        })
        .unwrap();
    let key = "The cellar key is under the mat.";
    rt.remember(&mira, Remember::fact(key)).unwrap();
    rt.remember(&mira, Remember::fact("The well is dry this summer."))
        .unwrap();
    rt.remember(&words_only, Remember::fact(key)).unwrap();

    let found = recalled_by_meaning(&rt, &mira, "Where is the cellar key?", key).await;
    let semantic = found.semantic.unwrap();
    assert!(semantic > 0.0 && semantic <= 1.0, "{found:?}");
    assert!(found.relevance > 0.0 && found.relevance <= 1.0, "{found:?}");
    // The best match by both words and meaning is fully relevant.
    assert!((found.relevance - 1.0).abs() < 1e-6, "{found:?}");
    // An agent whose recall counts words only is never given a closeness in meaning.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let tom = rt
        .recall(&words_only, "Where is the cellar key?", 5)
        .unwrap();
    assert_eq!(tom[0].memory.text, key);
    assert!(tom.iter().all(|r| r.semantic.is_none()), "{tom:?}");

    // A decision recalls by meaning too: its query is embedded, and the scripted baker
    // answers from memory after small talk.
    ask(&rt, &mut sub, &mira, "Lovely weather today.").await;
    for line in [
        "How is the bread?",
        "The festival starts soon.",
        "My boots are muddy.",
    ] {
        ask(&rt, &mut sub, &mira, line).await;
    }
    let answer = ask(&rt, &mut sub, &mira, "Where is the cellar key?").await;
    assert!(answer.contains(key), "{answer}");
    let embedded = texts_embedded(&fake);
    assert!(
        embedded
            .iter()
            .any(|t| t.starts_with("Where is the cellar key?")),
        "the decision's query was embedded: {embedded:?}"
    );
    // Memories formed as the agent heard and spoke were embedded as well.
    assert!(
        embedded.iter().any(|t| t.contains("Lovely weather today.")),
        "{embedded:?}"
    );
    // Its trace says which memories were recalled, with how close they were in meaning.
    let journal = rt.recent_decisions(&mira).unwrap();
    let recalled = &journal.last().unwrap().recalled;
    let traced = recalled
        .iter()
        .find(|r| r.memory.text == key)
        .expect("the fact was recalled");
    assert!(traced.semantic.is_some(), "{traced:?}");
    rt.shutdown(Duration::from_secs(5));
    fake.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_endpoint_leaves_recall_to_words_and_memories_catch_up_when_it_answers() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rt = Runtime::start_on(Handle::current(), options(&dir, Some(endpoint(&fake)))).unwrap();
    let mut sub = rt.subscribe(Filter::all());
    let mira = rt.spawn(baker(None)).unwrap();
    let key = "The cellar key is under the mat.";

    // Down: recall is by words, and the memory formed meanwhile waits for the endpoint (its
    // batch is retried) and gets its vector once it answers again.
    fake.set_embeddings(EmbeddingsBehaviour::Status {
        status: 503,
        body: serde_json::json!({"error": {"message": "overloaded"}}),
        retry_after: None,
    });
    let during = format!("{key} (while it was down)");
    words_only(&rt, &mut sub, &mira, "down", &during).await;
    fake.set_embeddings(EmbeddingsBehaviour::vectors(768));
    recalled_by_meaning(&rt, &mira, "cellar key", &during).await;

    // Slow, of the wrong dimension, garbled: recall is by words, the decision still happens.
    for (what, behaviour) in [
        ("slow", EmbeddingsBehaviour::Hang),
        (
            "wrong dimension",
            EmbeddingsBehaviour::WrongDimension { dimension: 3 },
        ),
        (
            "garbage",
            EmbeddingsBehaviour::Garbage {
                body: "<html>not json</html>".into(),
            },
        ),
    ] {
        fake.set_embeddings(behaviour);
        words_only(&rt, &mut sub, &mira, what, &format!("{key} ({what})")).await;
    }
    rt.shutdown(Duration::from_secs(5));
    fake.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_starts_again_gets_vectors_of_what_it_remembered_before() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key = "The cellar key is under the mat.";
    let mira = {
        // No endpoint at first: memories are stored without vectors.
        let rt = Runtime::start_on(Handle::current(), options(&dir, None)).unwrap();
        let mira = rt.spawn(baker(None)).unwrap();
        rt.remember(&mira, Remember::fact(key)).unwrap();
        rt.remember(&mira, Remember::fact("The well is dry this summer."))
            .unwrap();
        rt.shutdown(Duration::from_secs(5));
        mira
    };
    assert_eq!(fake.embedded_inputs(), 0);
    let rt = Runtime::start_on(Handle::current(), options(&dir, Some(endpoint(&fake)))).unwrap();
    rt.spawn(AgentConfig {
        agent_id: Some(mira.clone()),
        ..baker(None)
    })
    .unwrap();
    recalled_by_meaning(&rt, &mira, "Where is the cellar key?", key).await;
    assert!(texts_embedded(&fake).contains(&key.to_string()));

    // A forgotten memory is not recalled, by words or by meaning.
    let id = rt.recall(&mira, "cellar key", 1).unwrap()[0].memory.id;
    rt.forget(&mira, id).unwrap();
    let found = rt.recall(&mira, "Where is the cellar key?", 10).unwrap();
    assert!(found.iter().all(|r| r.memory.id != id), "{found:?}");
    rt.shutdown(Duration::from_secs(5));
    fake.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_that_is_not_set_is_never_asked_of_the_endpoint() {
    let fake = FakeServer::start("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let settings = EmbeddingSettings {
        api_key_env: Some("GODOT_AGENTS_TEST_NO_SUCH_EMBEDDINGS_KEY".into()),
        ..endpoint(&fake)
    };
    let rt = Runtime::start_on(Handle::current(), options(&dir, Some(settings))).unwrap();
    let mira = rt.spawn(baker(None)).unwrap();
    rt.remember(&mira, Remember::fact("The cellar key is under the mat."))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let found = rt.recall(&mira, "cellar key", 5).unwrap();
    assert_eq!(found.len(), 1);
    assert!(found[0].semantic.is_none());
    assert_eq!(texts_embedded(&fake), Vec::<String>::new());

    // Handed over, the key is sent.
    rt.set_api_key("GODOT_AGENTS_TEST_NO_SUCH_EMBEDDINGS_KEY", "sk-embed");
    rt.remember(&mira, Remember::fact("The well is dry."))
        .unwrap();
    recalled_by_meaning(&rt, &mira, "well", "The well is dry.").await;
    let sent = fake
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/embeddings"))
        .unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer sk-embed"));
    rt.shutdown(Duration::from_secs(5));
    fake.shutdown();
}
