//! A NATS server for tests: Debian's `nats-server`, on a free loopback port, stopped when the
//! [`Server`] is dropped, or when the thread that started (or restarted) it ends. [`Server::restart`] stops it and starts it again on the
//! same port, for the tests of a lost and regained connection.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{die_with_parent, find_binary, free_port};

/// A running `nats-server`.
pub struct Server {
    /// `nats://127.0.0.1:<port>`.
    pub url: String,
    port: u16,
    binary: PathBuf,
    child: Option<Child>,
}

/// `nats-server`, or a message saying how to get it.
pub fn binary() -> Result<PathBuf, String> {
    find_binary(
        "nats-server",
        &[PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")],
    )
    .ok_or_else(|| {
        "nats-server is not installed: `apt-get install nats-server`, or run `cargo xtask \
             test`, which installs it"
            .to_string()
    })
}

impl Server {
    /// Starts a server on a free port.
    pub fn start() -> Server {
        let binary = binary().unwrap_or_else(|e| panic!("testkit: {e}"));
        let port = free_port();
        let mut server = Server {
            url: format!("nats://127.0.0.1:{port}"),
            port,
            binary,
            child: None,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let mut command = Command::new(&self.binary);
        command
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut command, libc::SIGKILL);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("testkit: nats-server: {e}"));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "testkit: nats-server did not listen on {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server (as a crash would).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
