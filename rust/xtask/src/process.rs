//! Running child processes: stream their output as it arrives, keep a copy, enforce a timeout;
//! and servers in the background ([`Background`]) that a test or a benchmark talks to, then stops
//! — or kills at an exact moment from another thread ([`KillSwitch`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished (or killed) child produced.
#[derive(Debug)]
pub struct RunOutput {
    /// The exit status; `None` when the child could not be waited for.
    pub status: Option<ExitStatus>,
    /// True when the child was killed because it ran past its time limit.
    pub timed_out: bool,
    /// Everything it printed, stdout and stderr interleaved in arrival order.
    pub output: String,
}

impl RunOutput {
    /// True when the child exited on its own with code 0.
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }

    /// A short description of how the child ended (`exit code 1`, `timed out`, `killed by a signal`).
    pub fn ending(&self) -> String {
        if self.timed_out {
            return "timed out".into();
        }
        match self.status {
            Some(s) => match s.code() {
                Some(c) => format!("exit code {c}"),
                None => "killed by a signal (crash?)".into(),
            },
            None => "unknown exit status".into(),
        }
    }
}

/// How a child's output is echoed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// Print every line as it arrives (stdout lines to stdout, stderr lines to stderr).
    Stream,
    /// Print nothing (the caller shows what matters).
    Quiet,
}

fn reader_thread<R: Read + Send + 'static>(
    stream: R,
    is_err: bool,
    tx: mpsc::Sender<(bool, String)>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf).into_owned();
                    if tx.send((is_err, line)).is_err() {
                        break;
                    }
                }
            }
        }
    })
}

/// Runs `cmd` to completion (or until `timeout`), streaming and collecting its output.
pub fn run(cmd: &mut Command, timeout: Option<Duration>, echo: Echo) -> Result<RunOutput, String> {
    Ok(Background::spawn(cmd, echo)?.wait(timeout))
}

/// Runs a command that must succeed, streaming its output; the error names the command.
pub fn run_checked(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let out = run(cmd, None, Echo::Stream)?;
    if out.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({})", out.ending()))
    }
}

/// A child running in the background — a server a test or a benchmark talks to — with its
/// output collected (and echoed, if asked) as it arrives. Dropping it kills the child.
pub struct Background {
    child: Arc<Mutex<Child>>,
    shown: String,
    started: Instant,
    rx: mpsc::Receiver<(bool, String)>,
    echo: Echo,
    output: String,
    status: Option<ExitStatus>,
}

impl Background {
    /// Starts `cmd` with stdin closed and stdout/stderr captured.
    pub fn spawn(cmd: &mut Command, echo: Echo) -> Result<Background, String> {
        let shown = format!("{cmd:?}");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {shown}: {e}"))?;
        let (tx, rx) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            reader_thread(out, false, tx.clone());
        }
        if let Some(err) = child.stderr.take() {
            reader_thread(err, true, tx);
        }
        Ok(Background {
            child: Arc::new(Mutex::new(child)),
            shown,
            started: Instant::now(),
            rx,
            echo,
            output: String::new(),
            status: None,
        })
    }

    /// The child, locked (a poisoned lock still gives it: a child is never left half-updated).
    fn child(&self) -> MutexGuard<'_, Child> {
        lock_child(&self.child)
    }

    /// A handle that kills the child (SIGKILL on Unix) from any thread, e.g. the instant a
    /// client receives a chosen reply.
    pub fn kill_switch(&self) -> KillSwitch {
        KillSwitch {
            child: Arc::clone(&self.child),
        }
    }

    fn emit(&mut self, is_err: bool, line: String) {
        if self.echo == Echo::Stream {
            if is_err {
                let mut e = std::io::stderr().lock();
                let _ = e.write_all(line.as_bytes());
                let _ = e.flush();
            } else {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(line.as_bytes());
                let _ = o.flush();
            }
        }
        self.output.push_str(&line);
        if !line.ends_with('\n') {
            self.output.push('\n');
        }
    }

    /// Waits until the child prints a line containing `marker` and returns that line (trimmed).
    /// Fails when the child exits first or `timeout` passes; the error quotes the output's end.
    pub fn wait_for_line(&mut self, marker: &str, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.failure(&format!("no line with {marker:?} within {timeout:?}")));
            }
            match self.rx.recv_timeout(left.min(Duration::from_millis(50))) {
                Ok((is_err, line)) => {
                    let found = line.contains(marker).then(|| line.trim().to_string());
                    self.emit(is_err, line);
                    if let Some(found) = found {
                        return Ok(found);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let polled = self.child().try_wait();
                    if let Ok(Some(status)) = polled {
                        self.status = Some(status);
                        self.drain(Duration::from_millis(500));
                        return Err(self
                            .failure(&format!("it exited ({status}) before printing {marker:?}")));
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child().wait().ok();
                    self.status = status;
                    return Err(
                        self.failure(&format!("it closed its output before printing {marker:?}"))
                    );
                }
            }
        }
    }

    fn failure(&self, what: &str) -> String {
        let tail: Vec<&str> = self.output.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "{}: {what}; its output ended with:\n{}",
            self.shown,
            tail.join("\n")
        )
    }

    /// Drains output for up to `grace`, without hanging on pipes a grandchild may still hold.
    fn drain(&mut self, grace: Duration) {
        let start = Instant::now();
        while start.elapsed() < grace {
            match self.rx.recv_timeout(Duration::from_millis(50)) {
                Ok((is_err, line)) => self.emit(is_err, line),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// Waits for the child to exit on its own, killing it when `timeout` (counted from its start)
    /// passes; returns what it printed.
    pub fn wait(mut self, timeout: Option<Duration>) -> RunOutput {
        let mut timed_out = false;
        while self.status.is_none() {
            match self.rx.recv_timeout(Duration::from_millis(50)) {
                Ok((is_err, line)) => {
                    self.emit(is_err, line);
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // Both pipes closed: the child is exiting; wait for it below.
                    self.status = self.wait_until(self.started, timeout, &mut timed_out);
                    break;
                }
            }
            let polled = self.child().try_wait();
            match polled {
                Ok(Some(s)) => self.status = Some(s),
                Ok(None) => {
                    if timeout.is_some_and(|t| self.started.elapsed() > t) {
                        timed_out = true;
                        let _ = self.child().kill();
                        let status = self.child().wait().ok();
                        self.status = status;
                    }
                }
                Err(_) => {
                    let _ = self.child().kill();
                    let status = self.child().wait().ok();
                    self.status = status;
                }
            }
        }
        self.drain(Duration::from_secs(2));
        RunOutput {
            status: self.status,
            timed_out,
            output: std::mem::take(&mut self.output),
        }
    }

    fn wait_until(
        &mut self,
        start: Instant,
        timeout: Option<Duration>,
        timed_out: &mut bool,
    ) -> Option<ExitStatus> {
        loop {
            let polled = self.child().try_wait();
            match polled {
                Ok(Some(s)) => return Some(s),
                Ok(None) => {
                    if timeout.is_some_and(|t| start.elapsed() > t) {
                        *timed_out = true;
                        let _ = self.child().kill();
                        return self.child().wait().ok();
                    }
                    thread::sleep(Duration::from_millis(20));
                }
                Err(_) => return None,
            }
        }
    }

    /// Asks the child to stop (SIGTERM on Unix; a kill elsewhere) and waits up to `grace` for it
    /// to exit, then kills it; returns what it printed. `timed_out` is set when it had to be
    /// killed.
    pub fn terminate(self, grace: Duration) -> RunOutput {
        #[cfg(unix)]
        {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child().id().to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        #[cfg(not(unix))]
        {
            let mut this = self;
            let _ = this.child.kill();
            return self.wait(Some(grace));
        }
        #[cfg(unix)]
        {
            let waited = self.started.elapsed() + grace;
            self.wait(Some(waited))
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let mut child = self.child();
        if self.status.is_none() && matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn lock_child(child: &Mutex<Child>) -> MutexGuard<'_, Child> {
    child
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Kills a [`Background`] child from any thread (see [`Background::kill_switch`]).
#[derive(Clone)]
pub struct KillSwitch {
    child: Arc<Mutex<Child>>,
}

impl KillSwitch {
    /// Kills the child now (SIGKILL on Unix: no clean-up of any kind runs in it). Killing a child
    /// that has already exited is not an error.
    pub fn kill(&self) -> Result<(), String> {
        lock_child(&self.child)
            .kill()
            .map_err(|e| format!("cannot kill the child: {e}"))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn collects_both_streams_and_status() {
        let out = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Some(Duration::from_secs(10)),
            Echo::Quiet,
        )
        .unwrap();
        assert!(out.output.contains("out\n"));
        assert!(out.output.contains("err\n"));
        assert_eq!(out.status.and_then(|s| s.code()), Some(3));
        assert!(!out.success());
        assert_eq!(out.ending(), "exit code 3");
    }

    #[test]
    fn kills_on_timeout() {
        let start = Instant::now();
        let out = run(
            Command::new("sh").args(["-c", "echo started; exec sleep 30"]),
            Some(Duration::from_millis(300)),
            Echo::Quiet,
        )
        .unwrap();
        assert!(out.timed_out);
        assert!(!out.success());
        assert!(out.output.contains("started"));
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn background_waits_for_a_line_then_terminates() {
        let mut server = Background::spawn(
            Command::new("sh").args([
                "-c",
                "echo booting; echo 'listening on 1234' >&2; exec sleep 30",
            ]),
            Echo::Quiet,
        )
        .unwrap();
        let line = server
            .wait_for_line("listening on", Duration::from_secs(10))
            .unwrap();
        assert_eq!(line, "listening on 1234");
        let start = Instant::now();
        let out = server.terminate(Duration::from_secs(5));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "SIGTERM stops sleep at once"
        );
        assert!(!out.timed_out);
        assert!(out.output.contains("booting"));
        assert_eq!(
            out.status.and_then(|s| s.code()),
            None,
            "ended by the signal"
        );
    }

    #[test]
    fn kill_switch_kills_from_another_thread() {
        let mut server = Background::spawn(
            Command::new("sh").args(["-c", "echo up; exec sleep 30"]),
            Echo::Quiet,
        )
        .unwrap();
        server.wait_for_line("up", Duration::from_secs(10)).unwrap();
        let switch = server.kill_switch();
        let start = Instant::now();
        thread::spawn(move || switch.kill().unwrap())
            .join()
            .unwrap();
        let out = server.wait(Some(Duration::from_secs(20)));
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(!out.timed_out);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.and_then(|s| s.signal()), Some(9), "SIGKILL");
    }

    #[test]
    fn background_reports_an_early_exit_with_its_output() {
        let mut server = Background::spawn(
            Command::new("sh").args(["-c", "echo 'cannot bind' >&2; exit 2"]),
            Echo::Quiet,
        )
        .unwrap();
        let err = server
            .wait_for_line("listening on", Duration::from_secs(10))
            .unwrap_err();
        assert!(err.contains("cannot bind"), "{err}");
        assert!(err.contains("listening on"), "{err}");
    }
}
