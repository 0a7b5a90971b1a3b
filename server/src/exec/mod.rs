//! Running a shell command to completion: its own process group, a time limit, bounded output,
//! cancellation, and nothing left behind.
//!
//! This is the one place tether starts processes. A command runs as `/bin/sh -c COMMAND`
//! ([`run`]), or as a program with its arguments and no shell at all ([`run_program`], for
//! allow-listed runners), in a new process group (so that it and everything it starts can be
//! signalled at once), with stdin closed (a prompt fails instead of hanging) and the server's
//! environment (with `PWD` set to the working directory).
//!
//! One thread watches the command: it polls stdout and stderr together (so neither pipe can fill
//! up and stall the command), and between reads checks for the shell's exit, the deadline and the
//! cancel flag. Reading with `poll` rather than one thread per pipe means a pipe held open by a
//! process that escaped the group (`setsid`) cannot leave a reader thread behind: the pipes are
//! simply dropped.
//!
//! By default nothing outlives a run. When the shell exits, output still in flight gets a short
//! drain window; then any process left in the group (a background job) is terminated: `SIGTERM`
//! (and `SIGCONT`, so that stopped processes see it), and `SIGKILL` after a grace period. A
//! timeout or a cancellation does the same at once. A process that leaves the group on purpose
//! (`setsid`, `nohup setsid`) is the way to start something that must keep running.
//!
//! Contracts that promise the opposite (a job started with `&` keeps running after the call, as
//! the coder profile's `bash` does) set [`Spec::background`] to [`Background::Keep`]: the group is
//! left alone once the shell exits, and pipes a job still holds are read (and discarded) by a
//! thread until the job closes them, so that it never blocks or dies writing to them. A zero
//! [`Spec::grace`] kills with `SIGKILL` at once, and [`Spec::kill_over_capture`] kills the group
//! when a stream passes [`Spec::capture_bytes`] instead of keeping only the head.

mod capture;
#[cfg(unix)]
mod group;
#[cfg(windows)]
#[path = "job.rs"]
mod group;
mod pipes;

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

pub use capture::{Captured, SpillTo};
pub use group::signal_name;
use group::{signal_of, Group};
use pipes::Pipes;

/// How long a command may run when the caller does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a process group has to exit after `SIGTERM` before it gets `SIGKILL`.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);
/// How long output may keep arriving after the shell exits (from background processes that
/// still hold its pipes) before they are terminated.
pub const DEFAULT_DRAIN: Duration = Duration::from_millis(200);
/// Bytes of each stream kept in memory and returned.
pub const DEFAULT_CAPTURE_BYTES: usize = 512 * 1024;
/// The most bytes one spill file holds.
pub const DEFAULT_SPILL_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// How many spill files a spill folder keeps.
pub const DEFAULT_SPILL_KEEP_FILES: usize = 32;

/// How long to wait for the group to vanish after `SIGKILL`: it is immediate, but a process in
/// uninterruptible sleep (a hung network file system) must not hang the caller.
const KILL_WAIT: Duration = Duration::from_millis(500);
/// The longest stretch between checks of the shell, the deadline and the cancel flag.
const TICK: Duration = Duration::from_millis(10);

/// What to run and within which limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The shell command line.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// When the command is killed.
    pub timeout: Duration,
    /// Time between `SIGTERM` and `SIGKILL`.
    pub grace: Duration,
    /// Time output may keep arriving after the shell exits.
    pub drain: Duration,
    /// Bytes of each stream kept in memory.
    pub capture_bytes: usize,
    /// Where output beyond `capture_bytes` is saved, if anywhere.
    pub spill: Option<SpillTo>,
    /// What becomes of processes still in the group when the shell exits.
    pub background: Background,
    /// A stream passing `capture_bytes` kills the group ([`Outcome::output_limit`]).
    pub kill_over_capture: bool,
    /// The captures also hold their heads undecoded ([`Captured::bytes`]).
    pub keep_bytes: bool,
}

/// What becomes of a command's background jobs when its shell exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Background {
    /// They are terminated: nothing outlives the run.
    #[default]
    Terminate,
    /// They keep running; output they still write to the command's pipes is read and dropped.
    Keep,
}

impl Spec {
    /// `command` in `cwd` with the default limits and no spill folder.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Spec {
        Spec {
            command: command.into(),
            cwd: cwd.into(),
            timeout: DEFAULT_TIMEOUT,
            grace: DEFAULT_GRACE,
            drain: DEFAULT_DRAIN,
            capture_bytes: DEFAULT_CAPTURE_BYTES,
            spill: None,
            background: Background::Terminate,
            kill_over_capture: false,
            keep_bytes: false,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The shell's exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, if one did (see [`signal_name`]).
    pub signal: Option<i32>,
    /// The command ran past its time limit and was killed.
    pub timed_out: bool,
    /// The caller cancelled the command and it was killed.
    pub cancelled: bool,
    /// A stream passed [`Spec::capture_bytes`] with [`Spec::kill_over_capture`] set, and the
    /// group was killed.
    pub output_limit: bool,
    /// Processes were still running in the group after the shell exited, and were killed.
    pub background_killed: bool,
    /// From start to the end of the last process.
    pub duration: Duration,
    /// What the command wrote to stdout.
    pub stdout: Captured,
    /// What the command wrote to stderr.
    pub stderr: Captured,
}

/// Runs `spec` to completion. Setting `cancel` stops the command as a timeout does (it is
/// checked every few milliseconds); a caller with nothing to cancel passes a fresh `false`.
/// Fails only when the shell cannot be started (or the OS refuses to wait for it).
pub fn run(spec: &Spec, cancel: &AtomicBool) -> io::Result<Outcome> {
    supervise(shell(&spec.command), spec, cancel)
}

/// `/bin/sh -c COMMAND`.
#[cfg(unix)]
fn shell(command: &str) -> Command {
    let mut shell = Command::new("/bin/sh");
    shell.arg("-c").arg(command);
    shell
}

/// `cmd.exe /d /s /c "COMMAND"`: no AutoRun commands (`/d`), and the command line passed as it
/// is (`/s` strips the outer quotes), since cmd does not parse its arguments as programs do.
#[cfg(windows)]
fn shell(command: &str) -> Command {
    use std::os::windows::process::CommandExt as _;
    let mut shell = Command::new("cmd.exe");
    shell.args(["/d", "/s", "/c"]).raw_arg(format!("\"{command}\""));
    shell
}

/// Runs `program` with `args` directly, with no shell in between (so nothing in the arguments
/// is interpreted), under `spec`'s directory and limits; `spec.command` is not used. Fails when
/// the program cannot be started.
pub fn run_program(
    program: &std::path::Path,
    args: &[String],
    spec: &Spec,
    cancel: &AtomicBool,
) -> io::Result<Outcome> {
    let mut command = Command::new(program);
    command.args(args);
    supervise(command, spec, cancel)
}

/// Starts `command` in `spec.cwd` in a new process group and watches it to the end.
fn supervise(mut command: Command, spec: &Spec, cancel: &AtomicBool) -> io::Result<Outcome> {
    let started = Instant::now();
    command
        .current_dir(&spec.cwd)
        .env("PWD", &spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, group) = Group::spawn(&mut command)?;
    let mut run = Running {
        streams: Streams::new(&mut child, spec),
        name: format!("{}-{}", timestamp(SystemTime::now()), group.id()),
        group,
        child,
        status: None,
    };
    let result = run.supervise(spec, cancel, started + spec.timeout);
    if result.is_err() && run.status.is_none() {
        // Waiting failed: do not leave the command running unsupervised.
        run.group.kill();
        let _ = run.child.wait();
    }
    let Ended { stopped, background_killed, kept } = result?;
    let status = match run.status {
        Some(status) => status,
        None => run.child.wait()?,
    };
    if kept {
        // Background jobs were left running: the pipes they hold are read until they close.
        run.streams.pipes.read_on();
        run.group.release();
    } else {
        // The group is gone; its pipes close now unless a process that left it holds them.
        run.streams.drain(&run.name, Instant::now() + spec.drain);
    }
    let [stdout, stderr] = run.streams.captures.map(|c| c.finish(spec.keep_bytes));
    Ok(Outcome {
        exit_code: status.code(),
        signal: signal_of(&status),
        timed_out: stopped == Some(Stop::TimedOut),
        cancelled: stopped == Some(Stop::Cancelled),
        output_limit: stopped == Some(Stop::OutputLimit),
        background_killed,
        duration: started.elapsed(),
        stdout,
        stderr,
    })
}

/// Why a command was stopped before its shell exited (or, for the output limit, during the
/// drain after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    TimedOut,
    Cancelled,
    OutputLimit,
}

/// How the watch over a command ended.
struct Ended {
    stopped: Option<Stop>,
    /// Processes were left in the group after the shell exited, and were terminated.
    background_killed: bool,
    /// Processes were left in the group after the shell exited, and were kept running.
    kept: bool,
}

/// A started command and what has been seen of it.
struct Running {
    group: Group,
    child: Child,
    streams: Streams,
    /// The shell's status, once it has been reaped.
    status: Option<ExitStatus>,
    /// The name prefix of spill files: a timestamp and the process group.
    name: String,
}

impl Running {
    /// Watches the command until the shell exits or it must be stopped, then makes sure the
    /// whole group is gone (or, with [`Background::Keep`], left as the shell left it).
    fn supervise(&mut self, spec: &Spec, cancel: &AtomicBool, deadline: Instant) -> io::Result<Ended> {
        let over = |streams: &Streams| spec.kill_over_capture && streams.over(spec.capture_bytes);
        let mut stopped = loop {
            if let Some(status) = self.child.try_wait()? {
                self.status = Some(status);
                break None;
            }
            if cancel.load(Ordering::Relaxed) {
                break Some(Stop::Cancelled);
            }
            if over(&self.streams) {
                break Some(Stop::OutputLimit);
            }
            let now = Instant::now();
            if now >= deadline {
                break Some(Stop::TimedOut);
            }
            self.streams.pump(&self.name, (deadline - now).min(TICK))?;
        };
        let mut background = false;
        if stopped.is_none() {
            self.streams.drain(&self.name, Instant::now() + spec.drain);
            background = self.group.alive();
            // Output written during the drain still counts against the limit.
            if over(&self.streams) {
                stopped = Some(Stop::OutputLimit);
            }
        }
        let keep = spec.background == Background::Keep && stopped.is_none();
        if stopped.is_some() || (background && !keep) {
            self.terminate(spec.grace)?;
        }
        Ok(Ended { stopped, background_killed: background && !keep, kept: background && keep })
    }

    /// Terminates the group: `SIGTERM`, then `SIGKILL` if anything is left after `grace`; with
    /// no grace, `SIGKILL` at once.
    fn terminate(&mut self, grace: Duration) -> io::Result<()> {
        if grace.is_zero() {
            self.group.kill();
            self.wait_for_group(Instant::now() + KILL_WAIT)?;
            return Ok(());
        }
        if self.group.ask_to_stop() && self.wait_for_group(Instant::now() + grace)? {
            return Ok(());
        }
        self.group.kill();
        self.wait_for_group(Instant::now() + KILL_WAIT)?;
        Ok(())
    }

    /// Reaps the shell and waits for the rest of the group to exit, reading output meanwhile
    /// (a process blocked on a full pipe could not exit). Returns whether the group is gone.
    fn wait_for_group(&mut self, until: Instant) -> io::Result<bool> {
        loop {
            if self.status.is_none() {
                self.status = self.child.try_wait()?;
            }
            // Once the shell is reaped its pid could in theory be reused, but not as a process
            // group id while any member of this group is left, so the check stays about us.
            if self.status.is_some() && !self.group.alive() {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= until {
                return Ok(false);
            }
            self.streams.pump(&self.name, (until - now).min(TICK))?;
        }
    }
}

/// The command's stdout and stderr: pipes still open, and what they produced.
struct Streams {
    pipes: Pipes,
    captures: [capture::Capture; 2],
}

impl Streams {
    fn new(child: &mut Child, spec: &Spec) -> Streams {
        Streams {
            pipes: Pipes::new(child),
            captures: [
                capture::Capture::new("stdout", spec.capture_bytes, spec.spill.clone()),
                capture::Capture::new("stderr", spec.capture_bytes, spec.spill.clone()),
            ],
        }
    }

    /// Waits up to `wait` for output and keeps what is there.
    fn pump(&mut self, name: &str, wait: Duration) -> io::Result<()> {
        let captures = &mut self.captures;
        self.pipes.pump(wait, |i, bytes| captures[i].push(bytes, name))
    }

    /// Whether a stream has written more than `cap` bytes.
    fn over(&self, cap: usize) -> bool {
        self.captures.iter().any(|c| c.total() > cap as u64)
    }

    /// Reads until both pipes are closed or `until` passes, whichever is first.
    fn drain(&mut self, name: &str, until: Instant) {
        while self.pipes.any_open() {
            let now = Instant::now();
            if now >= until {
                return;
            }
            if self.pump(name, (until - now).min(TICK)).is_err() {
                return;
            }
        }
    }
}

/// A UTC timestamp for file names that sorts as time does: `20261122T075544Z`.
fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string().replace(['-', ':'], "")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn timestamps_sort_as_time() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_420_544);
        assert_eq!(timestamp(t), "20261123T075544Z");
        assert!(timestamp(t) < timestamp(t + Duration::from_secs(1)));
    }

    /// A run as the coder contract's `bash` makes it: background jobs kept, an immediate kill,
    /// the group killed past `cap` bytes of one stream, the bytes kept.
    fn keep(command: &str, timeout_ms: u64, cap: usize) -> Outcome {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = Spec {
            timeout: Duration::from_millis(timeout_ms),
            grace: Duration::ZERO,
            capture_bytes: cap,
            background: Background::Keep,
            kill_over_capture: true,
            keep_bytes: true,
            ..Spec::new(command, dir.path())
        };
        run(&spec, &AtomicBool::new(false)).expect("runs")
    }

    /// Whether `path` exists within 5 s (a background job's marker).
    fn appears(path: &std::path::Path) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while !path.exists() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        path.exists()
    }

    fn bytes(c: &Captured) -> &[u8] {
        c.bytes.as_deref().expect("the bytes were asked for")
    }

    #[test]
    fn kept_runs_capture_exit_and_streams() {
        let o = keep("echo out; echo err >&2; exit 3", 5000, 1 << 20);
        assert_eq!((o.exit_code, o.signal, o.timed_out, o.output_limit), (Some(3), None, false, false));
        assert_eq!((bytes(&o.stdout), bytes(&o.stderr)), (&b"out\n"[..], &b"err\n"[..]));
    }

    #[test]
    fn a_kept_run_past_its_timeout_is_killed_at_once_with_its_partial_output() {
        let o = keep("echo before; sleep 5 & sleep 5; echo after", 300, 1 << 20);
        assert!(o.timed_out, "{o:?}");
        assert_eq!(o.signal, Some(9));
        assert_eq!(bytes(&o.stdout), b"before\n");
        assert!(o.duration < Duration::from_secs(3), "{o:?}");
    }

    #[test]
    fn kept_background_jobs_with_redirected_output_survive() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("alive");
        let cmd = format!("(sleep 0.5; touch '{}') > /dev/null 2>&1 & echo started", marker.display());
        let o = keep(&cmd, 5000, 1 << 20);
        assert_eq!((o.exit_code, bytes(&o.stdout)), (Some(0), &b"started\n"[..]));
        assert!(o.duration < Duration::from_millis(400), "{o:?}");
        assert!(appears(&marker), "the background job was killed");
    }

    #[test]
    fn a_kept_job_holding_the_pipe_does_not_hold_the_call() {
        let o = keep("sleep 3 & echo quick", 10_000, 1 << 20);
        assert_eq!(bytes(&o.stdout), b"quick\n");
        assert!(o.duration < Duration::from_secs(1), "{o:?}");
    }

    #[test]
    fn a_kept_job_writing_after_the_call_is_read_not_killed() {
        // The job writes well past a pipe's buffer after the call returned: without a reader it
        // would block (or die of SIGPIPE) before it touches the marker.
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("done");
        let cmd = format!("(sleep 0.3; head -c 1000000 /dev/zero && touch '{}') & echo quick", marker.display());
        let o = keep(&cmd, 10_000, 1 << 20);
        assert_eq!(bytes(&o.stdout), b"quick\n");
        assert!(appears(&marker), "the background job did not get to write its output");
    }

    #[test]
    fn output_past_the_ceiling_kills_a_kept_command() {
        let o = keep("yes", 10_000, 1000);
        assert!(o.output_limit && !o.timed_out, "{o:?}");
        assert_eq!(bytes(&o.stdout).len(), 1000);
    }
}
