//! `agents-server serve` as a child process for the end-to-end tests: started on a free port,
//! its stderr collected, stopped with SIGTERM or killed when dropped.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The server's stderr so far.
#[derive(Default)]
pub struct Lines(pub Mutex<Vec<String>>);

impl Lines {
    /// Whether a line holds `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.0
            .lock()
            .map(|l| l.iter().any(|s| s.contains(needle)))
            .unwrap_or(false)
    }
    /// Every line so far.
    pub fn text(&self) -> String {
        self.0.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

/// A running `agents-server serve`.
/// A running `agents-server serve`, killed when dropped.
pub struct ServerProc {
    /// The process.
    pub child: Child,
    /// `HOST:PORT` it listens on.
    pub addr: String,
    /// Its stderr so far.
    pub stderr: Arc<Lines>,
}

impl ServerProc {
    /// Starts `serve` on a free loopback port with `--db db` and `extra` arguments (at
    /// `--log-level info` unless they name one); waits for its "listening on" line.
    pub fn start(db: impl AsRef<OsStr>, extra: &[&str], env: &[(&str, &str)]) -> ServerProc {
        let mut cmd = Command::new(super::server_bin());
        cmd.args(["serve", "--bind", "127.0.0.1:0", "--db"]).arg(db);
        if !extra.contains(&"--log-level") {
            cmd.args(["--log-level", "info"]);
        }
        cmd.args(extra)
            .env_remove("AGENTS_SERVER_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn agents-server serve");
        let stderr = child.stderr.take().expect("stderr is piped");
        let lines = Arc::new(Lines::default());
        let (tx, rx) = mpsc::channel();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line
                    .strip_prefix("listening on ws://")
                    .and_then(|rest| rest.strip_suffix("/ws"))
                {
                    let _ = tx.send(addr.to_owned());
                }
                if let Ok(mut v) = sink.0.lock() {
                    v.push(line);
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("the server did not start:\n{}", lines.text()));
        ServerProc {
            child,
            addr,
            stderr: lines,
        }
    }

    /// `ws://ADDR/ws`.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// `HOST:PORT`.
    pub fn addr(&self) -> String {
        self.addr.to_string()
    }

    /// SIGTERM, then wait for a clean exit.
    pub fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
        for _ in 0..200 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "exit {status}:\n{}", self.stderr.text());
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("the server did not stop:\n{}", self.stderr.text());
    }

    /// `GET path` over plain HTTP (`/healthz`, `/readyz`): the status code and the JSON body
    /// (`null` when it is not JSON).
    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut tcp = tokio::net::TcpStream::connect(&self.addr).await.unwrap();
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        tcp.read_to_string(&mut response).await.unwrap();
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
        (
            status,
            serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
        )
    }

    /// Waits (10 s at most) for a log line holding `needle`.
    pub async fn wait_log(&self, needle: &str) {
        for _ in 0..400 {
            if self.stderr.contains(needle) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no log line with {needle:?}:\n{}", self.stderr.text());
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
