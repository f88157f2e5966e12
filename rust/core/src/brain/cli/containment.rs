//! Nothing a `cli` brain's command starts outlives it.
//!
//! # The guarantee
//!
//! On Linux, every process the command starts — its children, theirs, and ones that left its
//! process group or session (`setsid`, a double fork) — is killed with `SIGKILL` when the command
//! exits, when it is killed at its timeout, and when the decision is cancelled (a message
//! interrupts it, the agent is terminated, the runtime shuts down). When the command exits on
//! its own or times out, the runtime's call returns only once every one of them is gone; on a
//! cancellation (which cannot wait) they are gone a few milliseconds later. If the runtime's
//! process itself dies, they are killed within a tenth of a second.
//!
//! # How
//!
//! The command is not the runtime's child but its grandchild, under a small supervisor forked
//! for it ([`contain`]): the supervisor is a *child subreaper* (`PR_SET_CHILD_SUBREAPER`), so
//! any descendant of the command whose parent dies is re-parented to the supervisor instead of
//! to `init` — no descendant can leave its ancestry. The command runs in a process group of its
//! own. When the command has exited (or the runtime asks with `SIGTERM`, or the runtime's
//! process is gone), the supervisor kills the command's process group, then repeatedly kills
//! every child of its own (found in `/proc`) and waits for one to end (its orphans become the
//! supervisor's children), until it has no child left. Then it exits as the command did (the
//! same status, or the same signal), which is what the runtime sees. The supervisor lets go of
//! the command's pipes and of every other descriptor, so the runtime reads the command's output
//! to its end as before. Between its fork and its exit the supervisor only makes system calls
//! (no allocation, no lock), as a child of a threaded process must.
//!
//! Limits: a descendant that changed its user (a set-user-ID program) cannot be signalled, and
//! the supervisor then waits for it to end (the runtime's wait is bounded: [`STOP_WAIT`]). A
//! descendant that entered another PID namespace is out of reach.
//!
//! # Elsewhere
//!
//! On other Unix systems the command runs in a process group of its own, and the group is
//! killed on timeout and cancellation (not when the command exits on its own): a descendant that
//! left the group (`setsid`) survives. On Windows the command itself is killed on timeout and
//! cancellation; its children are not.

use std::time::Duration;

/// How long the runtime waits, after a timeout, for the supervisor to have killed everything.
pub(super) const STOP_WAIT: Duration = Duration::from_secs(5);

/// Starts `command` contained (see the module docs). Call before spawning it.
pub(super) fn contain(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        command.process_group(0).kill_on_drop(false);
        // SAFETY: `linux::split` only makes async-signal-safe system calls (no allocation, no
        // lock) between the fork std made and the exec (or the supervisor's `_exit`).
        unsafe {
            command.pre_exec(linux::split);
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    command.process_group(0).kill_on_drop(true);
    #[cfg(not(unix))]
    command.kill_on_drop(true);
}

/// A contained command that may still be running: dropping it ends the command and everything
/// it started (see the module docs), unless [`Contained::finished`] said it is over.
#[cfg_attr(not(unix), allow(dead_code))]
pub(super) struct Contained(Option<u32>);

impl Contained {
    /// Watches the spawned command whose process id (the supervisor's, on Linux) is `pid`.
    pub(super) fn new(pid: Option<u32>) -> Self {
        Contained(pid)
    }

    /// The command exited and (on Linux) everything it started is gone: nothing to end.
    pub(super) fn finished(&mut self) {
        self.0 = None;
    }

    /// Ends the command and everything it started, now (without waiting).
    pub(super) fn stop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.take()
            && let Ok(pid) = i32::try_from(pid)
        {
            // SAFETY: kill(2) touches no memory. On Linux `pid` is the supervisor, which ends
            // everything on SIGTERM; elsewhere it leads the command's process group.
            unsafe {
                #[cfg(target_os = "linux")]
                libc::kill(pid, libc::SIGTERM);
                #[cfg(not(target_os = "linux"))]
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The supervisor. Everything here runs in a forked child of a threaded process: system calls
/// only, no allocation, no panic (slices are read with `get`).
#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::ptr;

    /// How often the supervisor looks whether the runtime's process is still there.
    const POLL_NANOS: libc::c_long = 100_000_000;

    /// Runs in the child std forked, before the exec: makes it the supervisor, and forks the
    /// command, which returns to std to be exec'd. The supervisor never returns.
    pub(super) fn split() -> io::Result<()> {
        // SAFETY: system calls on this process and on memory of this stack frame.
        unsafe {
            // SIGTERM (the runtime's stop) and SIGCHLD (the command's end) are blocked before
            // the fork, so neither is lost or kills the supervisor before it waits for them.
            let mut waited: libc::sigset_t = std::mem::zeroed();
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut waited);
            libc::sigaddset(&mut waited, libc::SIGTERM);
            libc::sigaddset(&mut waited, libc::SIGCHLD);
            if libc::sigprocmask(libc::SIG_BLOCK, &waited, &mut before) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let runtime = libc::getppid();
            match libc::fork() {
                -1 => Err(io::Error::last_os_error()),
                0 => {
                    // The command: a process group of its own, the signal mask std gave it.
                    libc::setpgid(0, 0);
                    libc::sigprocmask(libc::SIG_SETMASK, &before, ptr::null_mut());
                    Ok(())
                }
                command => supervise(command, runtime, &waited),
            }
        }
    }

    /// Waits for the command, or a stop, then ends everything and exits as the command did.
    unsafe fn supervise(command: libc::pid_t, runtime: libc::pid_t, waited: &libc::sigset_t) -> ! {
        // SAFETY: system calls only.
        unsafe {
            // The other half of the race-free process group (whichever runs first sets it).
            libc::setpgid(command, command);
            let_go_of_descriptors();
            let mut status = 0;
            let mut exited = false;
            loop {
                let mut st = 0;
                loop {
                    let pid = libc::waitpid(-1, &mut st, libc::WNOHANG);
                    if pid <= 0 {
                        break;
                    }
                    if pid == command {
                        status = st;
                        exited = true;
                    }
                }
                if exited || libc::getppid() != runtime {
                    break;
                }
                let poll = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: POLL_NANOS,
                };
                if libc::sigtimedwait(waited, ptr::null_mut(), &poll) == libc::SIGTERM {
                    break;
                }
            }
            libc::kill(-command, libc::SIGKILL);
            if !exited {
                libc::kill(command, libc::SIGKILL);
            }
            kill_descendants();
            exit_as(status, exited)
        }
    }

    /// Standard streams to `/dev/null`, every other descriptor closed: the command's pipes
    /// reach their end when the command and its descendants are done, and std's exec-error pipe
    /// closes (the runtime's spawn waits for that).
    unsafe fn let_go_of_descriptors() {
        // SAFETY: system calls on descriptors of this process.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
            }
            if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
                let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(3, 1 << 16) as libc::c_int;
                for fd in 3..max {
                    libc::close(fd);
                }
            }
        }
    }

    /// Kills every child of this process and waits for one to end (its children become this
    /// process's), until there is no child left.
    unsafe fn kill_descendants() {
        // SAFETY: system calls only.
        unsafe {
            loop {
                kill_children();
                let mut st = 0;
                if libc::waitpid(-1, &mut st, 0) == -1
                    && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
                {
                    return;
                }
            }
        }
    }

    /// Sends SIGKILL to every process whose parent is this one, found in `/proc`.
    unsafe fn kill_children() {
        // SAFETY: system calls on a descriptor opened here and on stack buffers.
        unsafe {
            let me = libc::getpid();
            let dir = libc::open(
                c"/proc".as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if dir < 0 {
                return;
            }
            // linux_dirent64 records (8-byte aligned).
            let mut buf = [0u64; 1024];
            loop {
                let n = libc::syscall(
                    libc::SYS_getdents64,
                    dir,
                    buf.as_mut_ptr(),
                    std::mem::size_of_val(&buf),
                );
                if n <= 0 {
                    break;
                }
                let bytes = std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize);
                let mut at = 0;
                // d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name (NUL-terminated).
                while let Some(len) = bytes.get(at + 16..at + 18) {
                    let len = usize::from(u16::from_ne_bytes([len[0], len[1]]));
                    if len == 0 {
                        break;
                    }
                    if let Some(name) = bytes.get(at + 19..at + len)
                        && let Some(pid) = parse_pid(name)
                        && parent_of(pid) == Some(me)
                    {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    at += len;
                }
            }
            libc::close(dir);
        }
    }

    /// The decimal number `name` starts with (up to its NUL), if it is one.
    fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
        let mut pid: libc::pid_t = 0;
        let mut digits = 0;
        for &b in name.iter().take_while(|b| **b != 0) {
            if !b.is_ascii_digit() {
                return None;
            }
            pid = pid
                .checked_mul(10)?
                .checked_add(libc::pid_t::from(b - b'0'))?;
            digits += 1;
        }
        (digits > 0).then_some(pid)
    }

    /// The parent of `pid`: the fourth field of `/proc/<pid>/stat` (after `pid (comm) state`).
    unsafe fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
        // "/proc/" + at most 10 digits + "/stat" + NUL.
        let mut path = [0u8; 24];
        let mut len = 0;
        for &b in b"/proc/" {
            *path.get_mut(len)? = b;
            len += 1;
        }
        let mut digits = [0u8; 10];
        let mut n = 0;
        let mut rest = pid;
        loop {
            *digits.get_mut(n)? = b'0' + (rest % 10) as u8;
            n += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for i in (0..n).rev() {
            *path.get_mut(len)? = *digits.get(i)?;
            len += 1;
        }
        for &b in b"/stat\0" {
            *path.get_mut(len)? = b;
            len += 1;
        }
        let mut stat = [0u8; 512];
        // SAFETY: a NUL-terminated path on this stack; a read into a buffer of this stack.
        let read = unsafe {
            let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return None;
            }
            let read = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
            libc::close(fd);
            read
        };
        let stat = stat.get(..usize::try_from(read).ok()?)?;
        // The command name may hold anything, ')' included: the fields follow the last ')'.
        let close = stat.iter().rposition(|b| *b == b')')?;
        let mut fields = stat
            .get(close + 1..)?
            .split(|b| *b == b' ')
            .filter(|f| !f.is_empty());
        let _state = fields.next()?;
        parse_pid(fields.next()?)
    }

    /// Exits as the command did: its status, or its signal (without a core dump). After a stop
    /// request the command has no status: SIGKILL.
    unsafe fn exit_as(status: libc::c_int, exited: bool) -> ! {
        // SAFETY: system calls on this process.
        unsafe {
            if exited && libc::WIFEXITED(status) {
                libc::_exit(libc::WEXITSTATUS(status));
            }
            let signal = if exited && libc::WIFSIGNALED(status) {
                libc::WTERMSIG(status)
            } else {
                libc::SIGKILL
            };
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(signal, libc::SIG_DFL);
            let mut only: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut only);
            libc::sigaddset(&mut only, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &only, ptr::null_mut());
            libc::kill(libc::getpid(), signal);
            libc::_exit(128 + signal)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn pids_and_parents_are_read_from_proc() {
            assert_eq!(parse_pid(b"4242\0junk"), Some(4242));
            assert_eq!(parse_pid(b"self\0"), None);
            assert_eq!(parse_pid(b"\0"), None);
            assert_eq!(parse_pid(b"99999999999\0"), None);
            let me = std::process::id() as libc::pid_t;
            // SAFETY: reads /proc.
            let parent = unsafe { parent_of(me) };
            // SAFETY: getppid has no preconditions.
            assert_eq!(parent, Some(unsafe { libc::getppid() }));
            // SAFETY: reads /proc.
            assert_eq!(unsafe { parent_of(i32::MAX) }, None);
        }
    }
}
