//! In-process server tests: the server on the runtime's own tokio runtime (as the Godot node
//! embeds it), connection counting, graceful shutdown, config and bind errors.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use tokio_tungstenite::tungstenite::Message;

use super::*;
use crate::runtime::RuntimeOptions;

fn config() -> ServerConfig {
    ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..ServerConfig::default()
    }
}

#[test]
fn runs_on_the_runtimes_own_tokio_runtime_and_shuts_down_with_1001() {
    let dir = tempfile::tempdir().unwrap();
    let runtime =
        Arc::new(Runtime::start(RuntimeOptions::with_database(dir.path().join("a.db"))).unwrap());
    let tools = Arc::new(ToolRegistry::with_game_tools());
    let handle = runtime.handle().clone();
    let server = Server::start(runtime.clone(), tools, config(), &handle).unwrap();
    assert_ne!(server.local_addr().port(), 0);
    assert_eq!(server.connection_count(), 0);

    // A client on a separate tokio runtime (the test's own thread).
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let url = format!("ws://{}/", server.local_addr());
    let mut ws = client_rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let Some(Ok(Message::Text(welcome))) = ws.next().await else {
            panic!("no welcome");
        };
        assert!(welcome.as_str().contains("\"protocol_version\":1"));
        ws
    });
    for _ in 0..200 {
        if server.connection_count() == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(server.connection_count(), 1);

    server.shutdown(Duration::from_secs(5));
    assert!(server.is_shut_down());
    let close = client_rt.block_on(async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(frame))) => break frame,
                Some(Ok(_)) => continue,
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    });
    let close = close.expect("a close frame with a code");
    assert_eq!(u16::from(close.code), CLOSE_GOING_AWAY);
    assert_eq!(close.reason.as_str(), REASON_SHUTDOWN);
    assert_eq!(server.connection_count(), 0);
    // New connections are refused.
    let url = format!("ws://{}/ws", server.local_addr());
    assert!(
        client_rt
            .block_on(tokio_tungstenite::connect_async(url))
            .is_err()
    );
    runtime.shutdown(Duration::from_secs(5));
}

#[test]
fn bad_configs_and_busy_ports_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let runtime =
        Arc::new(Runtime::start(RuntimeOptions::with_database(dir.path().join("a.db"))).unwrap());
    let tools = Arc::new(ToolRegistry::new());
    let handle = runtime.handle().clone();
    for bad in [
        ServerConfig {
            max_frame_bytes: 10,
            ..config()
        },
        ServerConfig {
            rate_limit_per_sec: 0,
            ..config()
        },
        ServerConfig {
            outbound_queue: 0,
            ..config()
        },
        ServerConfig {
            token: Some(String::new()),
            ..config()
        },
    ] {
        let err = Server::start(runtime.clone(), tools.clone(), bad, &handle)
            .err()
            .expect("invalid");
        assert!(matches!(err, NetError::InvalidConfig(_)), "{err}");
    }
    let first = Server::start(runtime.clone(), tools.clone(), config(), &handle).unwrap();
    let busy = ServerConfig {
        bind: first.local_addr(),
        ..config()
    };
    let err = Server::start(runtime.clone(), tools, busy, &handle)
        .err()
        .expect("the port is taken");
    assert!(matches!(err, NetError::Bind { .. }), "{err}");
    first.shutdown(Duration::from_secs(2));
    runtime.shutdown(Duration::from_secs(2));
}

/// POSTs an MCP `initialize` to `addr`'s `/mcp` with `host` as the `Host`; the status code.
fn mcp_initialize_status(addr: std::net::SocketAddr, host: &str) -> String {
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    answer.split(' ').nth(1).unwrap_or("").to_string()
}

#[test]
fn mcp_accepts_the_address_it_is_bound_to_and_refuses_foreign_hosts() {
    // A loopback bind other than 127.0.0.1: `get_mcp_url` names that address, so `/mcp` must
    // accept it as the Host (and still refuse a foreign one).
    let dir = tempfile::tempdir().unwrap();
    let runtime =
        Arc::new(Runtime::start(RuntimeOptions::with_database(dir.path().join("a.db"))).unwrap());
    let tools = Arc::new(ToolRegistry::with_game_tools());
    let handle = runtime.handle().clone();
    let config = ServerConfig {
        bind: "127.0.0.2:0".parse().unwrap(),
        ..ServerConfig::default()
    };
    let server = Server::start(runtime.clone(), tools, config, &handle).unwrap();
    let addr = server.local_addr();
    assert_eq!(mcp_initialize_status(addr, &addr.to_string()), "200");
    assert_eq!(
        mcp_initialize_status(addr, &format!("localhost:{}", addr.port())),
        "200"
    );
    assert_eq!(
        mcp_initialize_status(addr, &format!("evil.example:{}", addr.port())),
        "403"
    );
    server.shutdown(Duration::from_secs(2));
    runtime.shutdown(Duration::from_secs(2));
}

#[test]
fn an_open_bind_needs_a_token_or_insecure_no_token() {
    let dir = tempfile::tempdir().unwrap();
    let runtime =
        Arc::new(Runtime::start(RuntimeOptions::with_database(dir.path().join("a.db"))).unwrap());
    let tools = Arc::new(ToolRegistry::new());
    let handle = runtime.handle().clone();
    let open = ServerConfig {
        bind: "0.0.0.0:0".parse().unwrap(),
        ..ServerConfig::default()
    };
    let err = Server::start(runtime.clone(), tools.clone(), open.clone(), &handle)
        .err()
        .expect("refused");
    match &err {
        NetError::InvalidConfig(text) => {
            assert!(text.contains("without a token"), "{text}");
            assert!(text.contains("--insecure-no-token"), "{text}");
        }
        other => panic!("expected InvalidConfig, got {other}"),
    }
    for config in [
        ServerConfig {
            token: Some("s3cret".into()),
            ..open.clone()
        },
        ServerConfig {
            insecure_no_token: true,
            ..open.clone()
        },
    ] {
        let server = Server::start(runtime.clone(), tools.clone(), config, &handle).unwrap();
        assert!(server.local_addr().ip().is_unspecified());
        server.shutdown(Duration::from_secs(2));
    }
    runtime.shutdown(Duration::from_secs(2));
}
