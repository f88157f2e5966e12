//! `fakellm --listen 127.0.0.1:0 [--latency-ms N] [--replies FILE.json] [--default JSON]
//! [--files DIR]`: the
//! fake LLM provider as a process (for headless Godot tests, benchmarks and demos). `--replies`
//! queues answers (a JSON array of behaviours); `--default` is the answer once the queue is
//! empty (one behaviour object, e.g. `{"kind": "reply", "text": "…", "chunk_chars": 4}`).
//! Prints `listening http://ADDR` as its first line, then serves until it is interrupted
//! (Ctrl-C) or terminated. It serves OpenAI chat completions and embeddings under
//! `http://ADDR/v1`, Anthropic messages and Ollama's chat API under `http://ADDR`;
//! `POST /_fake/embeddings` (one embeddings behaviour, e.g. `{"kind": "vectors", "dimension":
//! 384}`) changes how `/v1/embeddings` answers; `--files DIR` serves DIR's files at
//! `/_fake/files/{name}` (see the library's docs for every route).

use std::time::Duration;

use agents_fakellm::{Behaviour, FakeServer};

fn usage() -> ! {
    eprintln!(
        "usage: fakellm [--listen ADDR] [--latency-ms N] [--replies FILE.json] [--default JSON] \
         [--files DIR]"
    );
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut listen = "127.0.0.1:0".to_string();
    let mut latency = None;
    let mut replies = None;
    let mut default = None;
    let mut files = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => listen = args.next().unwrap_or_else(|| usage()),
            "--latency-ms" => {
                latency = Some(
                    args.next()
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or_else(|| usage()),
                )
            }
            "--replies" => replies = Some(args.next().unwrap_or_else(|| usage())),
            "--default" => default = Some(args.next().unwrap_or_else(|| usage())),
            "--files" => files = Some(args.next().unwrap_or_else(|| usage())),
            _ => usage(),
        }
    }
    let server = match FakeServer::start(&listen).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("fakellm: cannot listen on {listen}: {e}");
            std::process::exit(1);
        }
    };
    if let Some(dir) = files {
        server.serve_files(dir);
    }
    if let Some(ms) = latency {
        server.set_latency(Duration::from_millis(ms));
    }
    if let Some(json) = default {
        match serde_json::from_str::<Behaviour>(&json) {
            Ok(behaviour) => server.set_default(behaviour),
            Err(e) => {
                eprintln!("fakellm: --default: {e}");
                std::process::exit(1);
            }
        }
    }
    if let Some(path) = replies {
        let list = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str::<Vec<Behaviour>>(&text).map_err(|e| e.to_string())
            });
        match list {
            Ok(list) => server.push_many(list),
            Err(e) => {
                eprintln!("fakellm: {path}: {e}");
                std::process::exit(1);
            }
        }
    }
    println!("listening {}", server.url());
    // Serve until interrupted (SIGTERM ends the process by default).
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown();
}
