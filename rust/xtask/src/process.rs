//! Running child processes: stream their output as it arrives, keep a copy, enforce a timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
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
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let (tx, rx) = mpsc::channel();
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(reader_thread(out, false, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(reader_thread(err, true, tx.clone()));
    }
    drop(tx);

    let start = Instant::now();
    let mut output = String::new();
    let mut timed_out = false;
    let mut status = None;
    let mut emit = |is_err: bool, line: String| {
        if echo == Echo::Stream {
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
        output.push_str(&line);
        if !line.ends_with('\n') {
            output.push('\n');
        }
    };

    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok((is_err, line)) => emit(is_err, line),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Both pipes closed: the child is exiting; wait for it below.
                if status.is_none() {
                    status = wait_with_deadline(&mut child, start, timeout, &mut timed_out);
                }
                break;
            }
        }
        if status.is_none() {
            match child.try_wait() {
                Ok(Some(s)) => status = Some(s),
                Ok(None) => {
                    if timeout.is_some_and(|t| start.elapsed() > t) {
                        timed_out = true;
                        let _ = child.kill();
                        status = child.wait().ok();
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    status = child.wait().ok();
                }
            }
        }
        if status.is_some() {
            // Drain what is left, but do not hang on pipes a grandchild may still hold.
            let grace = Instant::now();
            while grace.elapsed() < Duration::from_secs(2) {
                match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok((is_err, line)) => emit(is_err, line),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            break;
        }
    }
    Ok(RunOutput {
        status,
        timed_out,
        output,
    })
}

fn wait_with_deadline(
    child: &mut std::process::Child,
    start: Instant,
    timeout: Option<Duration>,
    timed_out: &mut bool,
) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) => {
                if timeout.is_some_and(|t| start.elapsed() > t) {
                    *timed_out = true;
                    let _ = child.kill();
                    return child.wait().ok();
                }
                thread::sleep(Duration::from_millis(20));
            }
            Err(_) => return None,
        }
    }
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
}
