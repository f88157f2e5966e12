//! Ending the process's models (its own test binary: `Models::shutdown` waits for every model
//! thread of the process).

use std::time::{Duration, Instant};

use agents_local::{ChatMessage, Event, Job, ModelSettings, Models, Sampling};
use agents_testkit::gguf::write_tiny_model;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_the_model_threads_and_tells_when_one_is_still_held() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.gguf");
    write_tiny_model(&path).unwrap();
    let settings = ModelSettings {
        context_size: 1024,
        sequences: 1,
        threads: 1,
        ..ModelSettings::new(&path)
    };
    let models = Models::default();
    let model = models.load(&settings, false).unwrap();
    // A model an agent still holds keeps its thread: shutdown says so after its timeout.
    let started = Instant::now();
    assert!(!models.shutdown(Duration::from_millis(200)));
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The game ends mid-answer: the answer's receiver and the model go, and the thread ends
    // after the step under way.
    let mut events = model.run(Job {
        key: "agent_001".into(),
        party: String::new(),
        messages: vec![ChatMessage::new("user", "Talk.")],
        schema: None,
        sampling: Sampling::default(),
        max_tokens: 900,
        timeout: None,
    });
    assert!(matches!(events.recv().await, Some(Event::Text(_))));
    drop(events);
    drop(model);
    assert!(models.shutdown(Duration::from_secs(20)), "the thread ended");
    // A kept model is let go by shutdown.
    let kept = models.load(&settings, true).unwrap();
    drop(kept);
    assert_eq!(models.loaded_count(), 1, "kept after its last agent left");
    assert!(models.shutdown(Duration::from_secs(20)));
    assert_eq!(models.loaded_count(), 0);
}
