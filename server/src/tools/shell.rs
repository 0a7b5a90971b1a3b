//! Running `sh -c` to completion for contracts whose commands may start background jobs.
//!
//! [`crate::exec`] (behind `run`) ends every process of a command's group once the shell exits,
//! so that nothing outlives a call. Some contracts promise the opposite: a job started with `&`
//! and its output redirected (`server > log 2>&1 &`) keeps running after the call returns. This
//! runner keeps that promise while bounding everything else:
//!
//! - the command runs in its own process group with stdin closed;
//! - when the shell exits, output still arriving gets a short drain window and the call returns,
//!   leaving background jobs running (a job that still holds the output pipes is read only
//!   during that window);
//! - on timeout or cancellation the whole group is killed (`SIGKILL`) and what was captured so
//!   far is returned;
//! - each stream is kept in memory up to a hard ceiling; a stream that passes it gets the group
//!   killed and the outcome marked `output_limit`.

use std::io;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};

/// How long output may keep arriving after the shell exits.
pub const DRAIN: Duration = Duration::from_millis(200);
/// The longest stretch between checks of the shell, the deadline, the ceiling and the cancel flag.
const TICK: Duration = Duration::from_millis(10);

/// What to run and within which limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSpec {
    /// The shell command line.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// When the group is killed.
    pub timeout: Duration,
    /// Bytes of each stream kept in memory; passing it kills the group.
    pub max_stream_bytes: usize,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutcome {
    /// The shell's exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, if one did.
    pub signal: Option<i32>,
    /// The command ran past its time limit and its group was killed.
    pub timed_out: bool,
    /// The caller cancelled the command and its group was killed.
    pub cancelled: bool,
    /// A stream passed [`ShellSpec::max_stream_bytes`] and the group was killed.
    pub output_limit: bool,
    /// What the command wrote to stdout (at most the ceiling).
    pub stdout: Vec<u8>,
    /// What the command wrote to stderr (at most the ceiling).
    pub stderr: Vec<u8>,
    /// From start to the shell's end.
    pub duration: Duration,
}

/// One stream being read by its own thread.
struct Stream {
    buf: Arc<Mutex<Vec<u8>>>,
}

impl Stream {
    /// Starts a thread that reads `pipe` into the buffer until its end, or until the buffer
    /// would pass `cap` (then `over` is set). It reports on `done` when it stops.
    fn start(
        mut pipe: impl io::Read + Send + 'static,
        cap: usize,
        over: Arc<AtomicBool>,
        done: mpsc::Sender<()>,
    ) -> Stream {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let shared = buf.clone();
        thread::spawn(move || {
            let mut chunk = vec![0; 64 * 1024];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut b = shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        let room = cap.saturating_sub(b.len());
                        b.extend_from_slice(&chunk[..n.min(room)]);
                        if n > room {
                            over.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        });
        Stream { buf }
    }

    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.buf.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// Runs `spec` until the shell exits (or the group is killed). Setting `cancel` kills the group.
/// Fails only when the shell cannot be started or waited for.
pub fn run_shell(spec: &ShellSpec, cancel: &AtomicBool) -> io::Result<ShellOutcome> {
    let started = Instant::now();
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(&spec.command)
        .current_dir(&spec.cwd)
        .env("PWD", &spec.cwd)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pgid = Pid::from_child(&child);
    let over = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel();
    let mut streams = Vec::with_capacity(2);
    if let Some(out) = child.stdout.take() {
        streams.push(Stream::start(out, spec.max_stream_bytes, over.clone(), done_tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        streams.push(Stream::start(err, spec.max_stream_bytes, over.clone(), done_tx.clone()));
    }
    drop(done_tx);
    let deadline = started + spec.timeout;
    let (mut timed_out, mut cancelled, mut output_limit) = (false, false, false);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if cancel.load(Ordering::Relaxed) {
            cancelled = true;
        } else if over.load(Ordering::Relaxed) {
            output_limit = true;
        } else if Instant::now() >= deadline {
            timed_out = true;
        } else {
            thread::sleep(TICK);
            continue;
        }
        kill_group(pgid);
        break child.wait()?;
    };
    let duration = started.elapsed();
    // The shell is gone; output from the group's last writes (or from jobs that still hold the
    // pipes) gets a short window. A stream passing the ceiling meanwhile still counts.
    let until = Instant::now() + DRAIN;
    let mut finished = 0;
    while finished < streams.len() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || done_rx.recv_timeout(left).is_err() {
            break;
        }
        finished += 1;
    }
    if over.load(Ordering::Relaxed) && !output_limit && !timed_out && !cancelled {
        output_limit = true;
        kill_group(pgid);
    }
    let stderr = streams.get(1).map(Stream::take).unwrap_or_default();
    let stdout = streams.first().map(Stream::take).unwrap_or_default();
    Ok(ShellOutcome {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        cancelled,
        output_limit,
        stdout,
        stderr,
        duration,
    })
}

/// Kills every process of the group (those still in it).
fn kill_group(pgid: Pid) {
    let _ = kill_process_group(pgid, Signal::KILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(command: &str, timeout_ms: u64, cap: usize) -> ShellOutcome {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = ShellSpec {
            command: command.to_owned(),
            cwd: dir.path().to_path_buf(),
            timeout: Duration::from_millis(timeout_ms),
            max_stream_bytes: cap,
        };
        run_shell(&spec, &AtomicBool::new(false)).expect("runs")
    }

    #[test]
    fn captures_exit_and_streams() {
        let o = run("echo out; echo err >&2; exit 3", 5000, 1 << 20);
        assert_eq!((o.exit_code, o.signal, o.timed_out, o.output_limit), (Some(3), None, false, false));
        assert_eq!((o.stdout.as_slice(), o.stderr.as_slice()), (&b"out\n"[..], &b"err\n"[..]));
    }

    #[test]
    fn timeout_kills_the_group_and_keeps_partial_output() {
        let o = run("echo before; sleep 5 & sleep 5; echo after", 300, 1 << 20);
        assert!(o.timed_out, "{o:?}");
        assert_eq!(o.signal, Some(9));
        assert_eq!(o.stdout, b"before\n");
        assert!(o.duration < Duration::from_secs(3), "{o:?}");
    }

    #[test]
    fn background_jobs_with_redirected_output_survive() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("alive");
        let cmd = format!("(sleep 0.5; touch '{}') > /dev/null 2>&1 & echo started", marker.display());
        let o = run(&cmd, 5000, 1 << 20);
        assert_eq!((o.exit_code, o.stdout.as_slice()), (Some(0), &b"started\n"[..]));
        assert!(o.duration < Duration::from_millis(400), "{o:?}");
        let until = Instant::now() + Duration::from_secs(5);
        while !marker.exists() && Instant::now() < until {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(marker.exists(), "the background job was killed");
    }

    #[test]
    fn a_job_holding_the_pipe_does_not_hold_the_call() {
        let o = run("sleep 3 & echo quick", 10_000, 1 << 20);
        assert_eq!(o.stdout, b"quick\n");
        assert!(o.duration < Duration::from_secs(1), "{o:?}");
    }

    #[test]
    fn output_past_the_ceiling_kills_the_command() {
        let o = run("yes", 10_000, 1000);
        assert!(o.output_limit && !o.timed_out, "{o:?}");
        assert_eq!(o.stdout.len(), 1000);
    }
}
