//! The embeddings client against the fake provider: a real server on loopback — vectors in the
//! inputs' order and of the dimension asked, closer for texts that share words, and every
//! failure with its code, its log quoting the server while its public message never does.

use std::time::{Duration, Instant};

use agents_fakellm::{DEFAULT_EMBEDDING_DIMENSION, EmbeddingsBehaviour, FakeServer};
use agents_llm::client::{CallError, CallErrorCode, Client, Endpoint, Secret};
use agents_llm::embeddings::{EmbeddingRequest, Embeddings, MAX_INPUTS, cosine};
use serde_json::json;

const KEY: &str = "sk-embed-7d2e-never-print-me";

fn endpoint(server: &FakeServer) -> Endpoint {
    Endpoint {
        api: std::sync::Arc::new(agents_llm::openai::API),
        base_url: server.openai_base(),
        api_key: Some(Secret::new(KEY)),
        headers: vec![("X-Title".into(), "town".into())],
        timeout: Duration::from_secs(5),
    }
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|t| t.to_string()).collect()
}

async fn embed(
    client: &Client,
    endpoint: &Endpoint,
    request: &EmbeddingRequest<'_>,
) -> Result<Embeddings, CallError> {
    client.embed(endpoint, request).await
}

#[tokio::test]
async fn vectors_come_back_in_input_order_with_the_dimension_asked() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let inputs = texts(&[
        "The well by the mill is dry.",
        "Mira sells apples at the market.",
        "A storm is coming from the north.",
    ]);
    // The default dimension, then the one asked, in order and reversed on the wire.
    let whole = embed(
        &client,
        &endpoint(&server),
        &EmbeddingRequest::new("nomic-embed-text", &inputs),
    )
    .await
    .unwrap();
    assert_eq!(whole.vectors.len(), 3);
    assert_eq!(whole.dimension(), DEFAULT_EMBEDDING_DIMENSION);
    assert!(whole.input_tokens > 0);
    let asked = EmbeddingRequest {
        dimensions: Some(256),
        ..EmbeddingRequest::new("nomic-embed-text", &inputs)
    };
    let in_order = embed(&client, &endpoint(&server), &asked).await.unwrap();
    server.set_embeddings(EmbeddingsBehaviour::Vectors {
        dimension: DEFAULT_EMBEDDING_DIMENSION,
        reversed: true,
    });
    let reversed = embed(&client, &endpoint(&server), &asked).await.unwrap();
    assert_eq!(in_order.dimension(), 256);
    assert_eq!(
        in_order, reversed,
        "the indexes put the vectors back in order"
    );
    for (i, text) in inputs.iter().enumerate() {
        // Each vector is its own input's: a text is closest to itself.
        let alone = embed(
            &client,
            &endpoint(&server),
            &EmbeddingRequest {
                dimensions: Some(256),
                ..EmbeddingRequest::new("nomic-embed-text", std::slice::from_ref(text))
            },
        )
        .await
        .unwrap();
        assert_eq!(alone.vectors[0], in_order.vectors[i], "input {i}");
        let norm: f32 = alone.vectors[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
    assert_eq!(server.embedded_inputs(), 3 * 3 + 3);
    // What was sent.
    let sent = server.requests();
    assert_eq!(sent.len(), 6);
    assert!(sent.iter().all(|r| r.path == "/v1/embeddings"));
    assert_eq!(
        sent[0].body,
        json!({"model": "nomic-embed-text", "input": inputs, "encoding_format": "float"})
    );
    assert_eq!(sent[1].body["dimensions"], 256);
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent[0].header("x-title"), Some("town"));
    assert_eq!(sent[0].header("content-type"), Some("application/json"));
    // Embeddings take nothing from the chat queue.
    assert_eq!(server.queued(), 0);
}

#[tokio::test]
async fn similar_texts_score_higher_than_unrelated_ones() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let inputs = texts(&[
        "Where does the blacksmith keep his hammer?",
        "The blacksmith hung his hammer by the forge.",
        "Mira bakes bread at dawn.",
    ]);
    let got = embed(
        &client,
        &endpoint(&server),
        &EmbeddingRequest::new("m", &inputs),
    )
    .await
    .unwrap();
    let related = cosine(&got.vectors[0], &got.vectors[1]);
    let unrelated = cosine(&got.vectors[0], &got.vectors[2]);
    assert!(
        related > unrelated + 0.2,
        "related {related}, unrelated {unrelated}"
    );
    assert!((cosine(&got.vectors[0], &got.vectors[0]) - 1.0).abs() < 1e-5);
}

#[tokio::test]
async fn every_failure_has_its_code_and_the_public_message_never_quotes_the_server() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let inputs = texts(&["hello there"]);
    let request = EmbeddingRequest::new("m", &inputs);
    let status =
        |status: u16, message: &str, retry_after: Option<&str>| EmbeddingsBehaviour::Status {
            status,
            body: json!({"error": {"message": message}}),
            retry_after: retry_after.map(str::to_string),
        };
    // Each body holds a marker: the log (Display) quotes it, the public message never does.
    let cases = [
        (
            status(429, "Rate limit reached (marker-429)", Some("2")),
            CallErrorCode::RateLimited,
            true,
            "marker-429",
        ),
        (
            status(500, "The embedder crashed (marker-500)", None),
            CallErrorCode::ServerError,
            true,
            "marker-500",
        ),
        (
            status(503, "Model loading, try later (marker-503)", None),
            CallErrorCode::ServerError,
            true,
            "marker-503",
        ),
        (
            status(401, "Incorrect API key (marker-401)", None),
            CallErrorCode::AuthFailed,
            false,
            "marker-401",
        ),
        (
            status(
                404,
                "model \"nomic-embed-text\" not found (marker-404)",
                None,
            ),
            CallErrorCode::ModelNotFound,
            false,
            "marker-404",
        ),
        (
            status(400, "input is too long (marker-400)", None),
            CallErrorCode::BadRequest,
            false,
            "marker-400",
        ),
        (
            EmbeddingsBehaviour::Garbage {
                body: "<html>502 Bad Gateway from upstream-proxy-7</html>".into(),
            },
            CallErrorCode::InvalidResponse,
            false,
            "upstream-proxy-7",
        ),
        (
            EmbeddingsBehaviour::Garbage {
                body: r#"{"error": {"message": "embedding backend exploded (marker-200)"}}"#.into(),
            },
            CallErrorCode::ProviderError,
            true,
            "marker-200",
        ),
        (
            EmbeddingsBehaviour::Garbage {
                body: r#"{"data": [{"index": 0, "embedding": [0.1, "secret-token-9"]}]}"#.into(),
            },
            CallErrorCode::InvalidResponse,
            false,
            "secret-token-9",
        ),
    ];
    for (behaviour, code, retryable, marker) in cases {
        server.set_embeddings(behaviour.clone());
        let err = embed(&client, &endpoint(&server), &request)
            .await
            .expect_err("an error");
        assert_eq!(err.code(), code, "{behaviour:?}: {err}");
        assert_eq!(err.retryable(), retryable, "{err}");
        assert!(err.to_string().contains(marker), "{err}");
        let public = err.public_message();
        assert!(!public.contains(marker), "{public:?}");
        assert!(!public.contains("127.0.0.1"), "{public:?}");
        for shown in [err.to_string(), format!("{err:?}"), public] {
            assert!(!shown.contains(KEY), "the key leaked: {shown}");
        }
        if code == CallErrorCode::RateLimited {
            assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
        }
    }
    // An error body from a server is quoted in the log, bounded.
    server.set_embeddings(EmbeddingsBehaviour::Garbage {
        body: "x".repeat(100_000),
    });
    let err = embed(&client, &endpoint(&server), &request)
        .await
        .unwrap_err();
    assert_eq!(err.code(), CallErrorCode::InvalidResponse);
    assert!(err.to_string().len() < 1_000, "{}", err.to_string().len());
}

#[tokio::test]
async fn a_wrong_dimension_names_both_numbers() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let inputs = texts(&["one", "two"]);
    server.set_embeddings(EmbeddingsBehaviour::WrongDimension { dimension: 512 });
    // Expected by the caller, or implied by the dimensions asked.
    for request in [
        EmbeddingRequest {
            expected_dimension: Some(768),
            ..EmbeddingRequest::new("m", &inputs)
        },
        EmbeddingRequest {
            dimensions: Some(768),
            ..EmbeddingRequest::new("m", &inputs)
        },
    ] {
        let err = embed(&client, &endpoint(&server), &request)
            .await
            .unwrap_err();
        assert_eq!(err.code(), CallErrorCode::InvalidResponse, "{err}");
        assert!(!err.retryable());
        assert_eq!(
            err.to_string(),
            "invalid response: the embeddings have 512 dimensions, 768 were expected"
        );
    }
    // Unchecked, the vectors are taken as they are.
    let got = embed(
        &client,
        &endpoint(&server),
        &EmbeddingRequest::new("m", &inputs),
    )
    .await
    .unwrap();
    assert_eq!(got.dimension(), 512);
}

#[tokio::test]
async fn a_hanging_server_times_out_and_a_closed_port_is_unreachable() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let inputs = texts(&["hello"]);
    let request = EmbeddingRequest::new("m", &inputs);
    server.set_embeddings(EmbeddingsBehaviour::Hang);
    let mut slow = endpoint(&server);
    slow.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let err = embed(&client, &slow, &request).await.unwrap_err();
    assert_eq!(err.code(), CallErrorCode::Timeout, "{err}");
    assert!(err.retryable());
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(err.public_message(), "no answer within 0.3 s");
    // Latency within the timeout is fine; over it is a timeout too.
    server.set_embeddings(EmbeddingsBehaviour::default());
    server.set_latency(Duration::from_millis(100));
    assert!(embed(&client, &slow, &request).await.is_ok());
    server.set_latency(Duration::from_secs(2));
    let err = embed(&client, &slow, &request).await.unwrap_err();
    assert_eq!(err.code(), CallErrorCode::Timeout, "{err}");
    // Nothing listens on this port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut gone = endpoint(&server);
    gone.base_url = format!("http://{closed}/v1");
    let err = embed(&client, &gone, &request).await.unwrap_err();
    assert_eq!(err.code(), CallErrorCode::Unreachable, "{err}");
    assert!(err.to_string().contains(&closed.to_string()), "{err}");
    assert!(!err.public_message().contains(&closed.to_string()));
}

#[tokio::test]
async fn requests_out_of_bounds_are_refused_before_sending() {
    let server = FakeServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::new().unwrap();
    let too_many = vec!["word".to_string(); MAX_INPUTS + 1];
    let at_most = vec!["word".to_string(); MAX_INPUTS];
    for inputs in [&[][..], &too_many[..]] {
        let err = embed(
            &client,
            &endpoint(&server),
            &EmbeddingRequest::new("m", inputs),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), CallErrorCode::BadRequest, "{err}");
        assert!(err.to_string().contains("not sent"), "{err}");
    }
    let mut anthropic = endpoint(&server);
    anthropic.api = std::sync::Arc::new(agents_llm::anthropic::API);
    let one = texts(&["hello"]);
    let err = embed(&client, &anthropic, &EmbeddingRequest::new("m", &one))
        .await
        .unwrap_err();
    assert_eq!(err.code(), CallErrorCode::BadRequest, "{err}");
    assert!(server.requests().is_empty(), "nothing was sent");
    // The bound itself is fine.
    let got = embed(
        &client,
        &endpoint(&server),
        &EmbeddingRequest::new("m", &at_most),
    )
    .await
    .unwrap();
    assert_eq!(got.vectors.len(), MAX_INPUTS);
    assert_eq!(server.embedded_inputs(), MAX_INPUTS);
}
