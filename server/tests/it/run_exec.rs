//! The process runner under the `run` tool: cancellation, escalation to `SIGKILL`, and pipes
//! held open by a process that left the group.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};
use tether::exec::{self, Spec};

/// Whether process `pid` has exited (a zombie waiting for its parent counts as exited).
fn exited(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rfind(')').is_some_and(|i| stat[i + 1..].trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Polls `done` until it holds or `within` passes; returns whether it held.
fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn read_pid(path: &Path) -> i32 {
    fs::read_to_string(path).expect("pid file").trim().parse().expect("pid")
}

#[test]
fn cancel_stops_the_whole_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cancel = AtomicBool::new(false);
    let spec = Spec::new("sleep 300 & echo $! > pid; echo ready; touch ready; sleep 300", dir.path());
    let outcome = std::thread::scope(|s| {
        s.spawn(|| {
            assert!(eventually(Duration::from_secs(10), || dir.path().join("ready").exists()), "never ready");
            cancel.store(true, Ordering::Relaxed);
        });
        exec::run(&spec, &cancel).expect("run")
    });
    assert!(outcome.cancelled && !outcome.timed_out, "{outcome:?}");
    assert_eq!((outcome.exit_code, outcome.signal), (None, Some(Signal::TERM.as_raw())), "{outcome:?}");
    assert_eq!(outcome.stdout.text, "ready\n");
    assert!(outcome.duration < Duration::from_secs(10), "{outcome:?}");
    let pid = read_pid(&dir.path().join("pid"));
    assert!(eventually(Duration::from_secs(2), || exited(pid)), "process {pid} outlived the cancel");
}

#[test]
fn sigterm_ignored_escalates_to_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    // An ignored signal stays ignored across exec: neither the shell nor its children see TERM.
    let spec = Spec {
        timeout: Duration::from_millis(200),
        grace: Duration::from_millis(100),
        ..Spec::new("trap '' TERM; sleep 300 & echo $! > pid; sleep 300", dir.path())
    };
    let outcome = exec::run(&spec, &AtomicBool::new(false)).expect("run");
    assert!(outcome.timed_out, "{outcome:?}");
    assert_eq!((outcome.exit_code, outcome.signal), (None, Some(Signal::KILL.as_raw())), "{outcome:?}");
    assert!(outcome.duration >= Duration::from_millis(300), "{outcome:?}");
    let pid = read_pid(&dir.path().join("pid"));
    assert!(eventually(Duration::from_secs(2), || exited(pid)), "process {pid} survived SIGKILL");
}

#[test]
fn pipe_held_by_an_escaped_process_does_not_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `setsid` leaves the group on purpose: it is not killed, and it keeps stdout open, but the
    // run returns after the drain window anyway.
    let spec = Spec {
        drain: Duration::from_millis(50),
        ..Spec::new("setsid sh -c 'echo $$ > pid; exec sleep 300' & echo hi", dir.path())
    };
    let started = Instant::now();
    let outcome = exec::run(&spec, &AtomicBool::new(false)).expect("run");
    assert!(started.elapsed() < Duration::from_secs(3), "{outcome:?}");
    assert_eq!((outcome.exit_code, outcome.stdout.text.as_str()), (Some(0), "hi\n"), "{outcome:?}");
    assert!(eventually(Duration::from_secs(5), || dir.path().join("pid").exists()), "no pid file");
    let pid = read_pid(&dir.path().join("pid"));
    assert!(!exited(pid), "the escaped process was killed");
    kill_process(Pid::from_raw(pid).expect("pid"), Signal::KILL).expect("kill the escaped process");
}

#[test]
fn caps_each_stream_separately() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = Spec {
        capture_bytes: 4,
        spill: Some(exec::SpillTo { dir: dir.path().join("spill"), max_bytes: 6, keep_files: 8 }),
        ..Spec::new("printf 0123456789; printf ab >&2", dir.path())
    };
    let outcome = exec::run(&spec, &AtomicBool::new(false)).expect("run");
    assert_eq!(
        (outcome.stdout.text.as_str(), outcome.stdout.total_bytes, outcome.stdout.truncated),
        ("0123", 10, true)
    );
    assert_eq!(fs::read(outcome.stdout.spill.expect("spill")).expect("read"), b"012345");
    assert_eq!(
        outcome.stderr,
        exec::Captured { text: "ab".into(), total_bytes: 2, truncated: false, spill: None, bytes: None }
    );
}

#[test]
fn a_missing_directory_fails_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = Spec::new("true", dir.path().join("missing"));
    assert!(exec::run(&spec, &AtomicBool::new(false)).is_err());
}
