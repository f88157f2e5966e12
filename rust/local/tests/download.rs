//! Model downloads against a real HTTP server on loopback: checked, cached, resumed after a
//! cut, shared by agents asking at once, refused on a wrong hash.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agents_local::download::{Progress, file_sha256};
use agents_local::{Downloads, LocalError, Source};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;

/// What the server serves, and how it misbehaves.
#[derive(Default)]
struct Served {
    file: Vec<u8>,
    /// The first request's body stops after this many bytes (the connection is cut).
    cut_first_after: Option<usize>,
    /// Ignore `Range` (always send the whole file).
    no_ranges: bool,
    requests: AtomicUsize,
    ranges: Mutex<Vec<Option<String>>>,
}

async fn serve_file(State(served): State<Arc<Served>>, headers: HeaderMap) -> Response {
    let n = served.requests.fetch_add(1, Ordering::SeqCst);
    let range = headers
        .get(header::RANGE)
        .map(|v| v.to_str().unwrap().to_string());
    served.ranges.lock().push(range.clone());
    let start = match (&range, served.no_ranges) {
        (Some(r), false) => r
            .strip_prefix("bytes=")
            .and_then(|r| r.strip_suffix('-'))
            .unwrap()
            .parse::<usize>()
            .unwrap(),
        _ => 0,
    };
    if start >= served.file.len() {
        return StatusCode::RANGE_NOT_SATISFIABLE.into_response();
    }
    let rest = served.file[start..].to_vec();
    let status = if start > 0 {
        StatusCode::PARTIAL_CONTENT
    } else {
        StatusCode::OK
    };
    let length = rest.len();
    let body = match served.cut_first_after.filter(|_| n == 0) {
        // The declared length is the whole rest; the stream ends in an error part-way.
        Some(cut) => {
            let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                vec![Ok(rest[..cut].to_vec()), Err(std::io::Error::other("cut"))];
            Body::from_stream(futures_util::stream::iter(chunks))
        }
        None => Body::from(rest),
    };
    Response::builder()
        .status(status)
        .header(header::CONTENT_LENGTH, length)
        .body(body)
        .unwrap()
}

/// Serves `served` at `http://127.0.0.1:PORT/models/tiny.gguf`; gives the URL.
async fn server(served: Arc<Served>) -> String {
    let app = axum::Router::new()
        .route("/models/tiny.gguf", axum::routing::get(serve_file))
        .with_state(served);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/models/tiny.gguf", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// A file of `len` bytes and its SHA-256.
fn file(len: usize) -> (Vec<u8>, String) {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, &bytes).unwrap();
    let hash = file_sha256(&path).unwrap();
    (bytes, hash)
}

async fn fetch(
    downloads: &Downloads,
    source: &Source,
    cache: &Path,
) -> (Result<std::path::PathBuf, LocalError>, Vec<Progress>) {
    let mut seen = Vec::new();
    let result = downloads.fetch(source, cache, |p| seen.push(p)).await;
    (result, seen)
}

#[tokio::test]
async fn a_model_is_downloaded_checked_and_then_taken_from_the_cache() {
    let (bytes, hash) = file(3 << 20);
    let served = Arc::new(Served {
        file: bytes.clone(),
        ..Default::default()
    });
    let url = server(served.clone()).await;
    let cache = tempfile::tempdir().unwrap();
    let downloads = Downloads::default();
    let source = Source::new(&format!("{url}?token=secret"), &hash).unwrap();

    let (path, progress) = fetch(&downloads, &source, cache.path()).await;
    let path = path.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert!(path.starts_with(cache.path()));
    assert!(
        path.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-tiny.gguf")
    );
    let last = progress.last().unwrap();
    assert_eq!(last.received, bytes.len() as u64);
    assert_eq!(last.total, Some(bytes.len() as u64));
    assert!(progress.windows(2).all(|w| w[0].received <= w[1].received));
    assert!(progress.len() >= 3, "progress as it goes: {progress:?}");
    assert_eq!(
        std::fs::read_dir(cache.path()).unwrap().count(),
        1,
        "no .partial left"
    );

    // Cached: no second request.
    let (again, _) = fetch(&downloads, &source, cache.path()).await;
    assert_eq!(again.unwrap(), path);
    assert_eq!(served.requests.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_cut_download_is_resumed_where_it_stopped() {
    let (bytes, hash) = file(2 << 20);
    let served = Arc::new(Served {
        file: bytes.clone(),
        cut_first_after: Some(700_000),
        ..Default::default()
    });
    let url = server(served.clone()).await;
    let cache = tempfile::tempdir().unwrap();
    let source = Source::new(&url, &hash).unwrap();

    let (path, _) = fetch(&Downloads::default(), &source, cache.path()).await;
    assert_eq!(std::fs::read(path.unwrap()).unwrap(), bytes);
    let ranges = served.ranges.lock().clone();
    assert_eq!(ranges, vec![None, Some("bytes=700000-".to_string())]);
}

#[tokio::test]
async fn a_partial_file_left_behind_is_continued_and_a_server_without_ranges_starts_over() {
    let (bytes, hash) = file(1 << 20);
    for no_ranges in [false, true] {
        let served = Arc::new(Served {
            file: bytes.clone(),
            no_ranges,
            ..Default::default()
        });
        let url = server(served.clone()).await;
        let cache = tempfile::tempdir().unwrap();
        let source = Source::new(&url, &hash).unwrap();
        let target = source.cached_path(cache.path());
        let partial = target.with_file_name(format!(
            "{}.partial",
            target.file_name().unwrap().to_str().unwrap()
        ));
        std::fs::write(&partial, &bytes[..1000]).unwrap();

        let (path, progress) = fetch(&Downloads::default(), &source, cache.path()).await;
        assert_eq!(
            std::fs::read(path.unwrap()).unwrap(),
            bytes,
            "no_ranges {no_ranges}"
        );
        assert_eq!(
            served.ranges.lock().clone(),
            vec![Some("bytes=1000-".to_string())]
        );
        let first = progress.iter().find(|p| p.total.is_some()).unwrap();
        assert_eq!(first.received, if no_ranges { 0 } else { 1000 });
    }
}

#[tokio::test]
async fn a_wrong_hash_is_refused_and_the_file_deleted() {
    let (bytes, _) = file(100_000);
    let served = Arc::new(Served {
        file: bytes,
        ..Default::default()
    });
    let url = server(served).await;
    let cache = tempfile::tempdir().unwrap();
    let wanted = "ab".repeat(32);
    let source = Source::new(&format!("{url}?sig=hidden"), &wanted).unwrap();

    let (result, _) = fetch(&Downloads::default(), &source, cache.path()).await;
    let e = result.unwrap_err();
    assert_eq!(e.code(), "brain_model_checksum_mismatch");
    let text = e.to_string();
    assert!(text.contains(&wanted) && !text.contains("hidden"), "{text}");
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn a_missing_file_or_a_dead_server_is_a_download_error() {
    let (_, hash) = file(10);
    let served = Arc::new(Served::default());
    let url = server(served).await;
    let cache = tempfile::tempdir().unwrap();
    let missing = Source::new(&url.replace("tiny.gguf", "other.gguf"), &hash).unwrap();
    let (result, _) = fetch(&Downloads::default(), &missing, cache.path()).await;
    let e = result.unwrap_err();
    assert_eq!(e.code(), "brain_model_download_failed");
    assert!(e.to_string().contains("HTTP 404"), "{e}");

    // Nothing listens on a port just closed.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dead = Source::new(&format!("http://127.0.0.1:{port}/m.gguf"), &hash).unwrap();
    let (result, _) = fetch(&Downloads::default(), &dead, cache.path()).await;
    let e = result.unwrap_err();
    assert_eq!(e.code(), "brain_model_download_failed");
    assert!(e.to_string().contains("could not be reached"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_asking_at_once_share_one_download() {
    let (bytes, hash) = file(4 << 20);
    let served = Arc::new(Served {
        file: bytes.clone(),
        ..Default::default()
    });
    let url = server(served.clone()).await;
    let cache = tempfile::tempdir().unwrap();
    let downloads = Arc::new(Downloads::default());
    let source = Source::new(&url, &hash).unwrap();
    let fetches: Vec<_> = (0..4)
        .map(|_| {
            let (downloads, source, cache) = (
                downloads.clone(),
                source.clone(),
                cache.path().to_path_buf(),
            );
            tokio::spawn(async move { downloads.fetch(&source, &cache, |_| {}).await })
        })
        .collect();
    for fetch in fetches {
        assert_eq!(std::fs::read(fetch.await.unwrap().unwrap()).unwrap(), bytes);
    }
    assert_eq!(served.requests.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_game_writes_is_waited_for_with_its_progress() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("npc.gguf");
    let downloads = Arc::new(Downloads::default());
    assert!(
        downloads.wait(&path, |_, _| {}).await.is_none(),
        "nothing writes it"
    );
    let filling = downloads.begin(&path, "res://models/npc.gguf").unwrap();
    assert!(downloads.is_pending(&path));
    assert!(
        downloads.begin(&path, "res://models/npc.gguf").is_none(),
        "one writer per file"
    );
    let heard = Arc::new(Mutex::new(Vec::new()));
    let waiting = {
        let (downloads, heard, path) = (downloads.clone(), heard.clone(), path.clone());
        tokio::spawn(async move {
            downloads
                .wait(&path, |from, progress| {
                    heard.lock().push((from.to_string(), progress))
                })
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    filling.progress(512, 1024);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    std::fs::write(&path, vec![7u8; 1024]).unwrap();
    filling.finish(Ok(()));
    let done = waiting.await.unwrap().unwrap().unwrap();
    assert_eq!(done, path);
    assert!(!downloads.is_pending(&path));
    let heard = heard.lock().clone();
    assert!(
        heard
            .iter()
            .all(|(from, _)| from == "res://models/npc.gguf")
    );
    assert!(heard.contains(&(
        "res://models/npc.gguf".into(),
        Progress {
            received: 512,
            total: Some(1024)
        }
    )));
    assert_eq!(
        heard.last().unwrap().1,
        Progress {
            received: 1024,
            total: Some(1024)
        },
        "the end is heard as the whole file: {heard:?}"
    );
}

#[tokio::test]
async fn a_copy_that_fails_or_is_dropped_tells_who_waits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("npc.gguf");
    let downloads = Arc::new(Downloads::default());
    let failing = downloads.begin(&path, "res://models/npc.gguf").unwrap();
    let waiting = {
        let (downloads, path) = (downloads.clone(), path.clone());
        tokio::spawn(async move { downloads.wait(&path, |_, _| {}).await })
    };
    tokio::task::yield_now().await;
    failing.finish(Err("no space left on the disk".into()));
    let err = waiting.await.unwrap().unwrap().unwrap_err();
    assert_eq!(
        err,
        LocalError::Copy {
            from: "res://models/npc.gguf".into(),
            message: "no space left on the disk".into()
        }
    );
    assert_eq!(err.code(), "brain_model_download_failed");
    // A writer that vanishes (its game stopped) ends the wait too, and a new copy may begin.
    let dropped = downloads.begin(&path, "res://models/npc.gguf").unwrap();
    let waiting = {
        let (downloads, path) = (downloads.clone(), path.clone());
        tokio::spawn(async move { downloads.wait(&path, |_, _| {}).await })
    };
    tokio::task::yield_now().await;
    drop(dropped);
    let err = waiting.await.unwrap().unwrap().unwrap_err();
    assert!(err.to_string().contains("stopped before the end"), "{err}");
    assert!(!downloads.is_pending(&path));
    assert!(downloads.begin(&path, "res://models/npc.gguf").is_some());
}
