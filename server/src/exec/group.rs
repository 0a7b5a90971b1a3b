//! Process groups: signalling one, telling whether anything in it still runs, naming signals.

use std::fs;
use std::io;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Child, Command, ExitStatus};

use rustix::io::Errno;
use rustix::process::{kill_process_group, test_kill_process_group, Pid, Signal};

/// A command's process group: the shell and everything it starts.
pub(super) struct Group(Pid);

impl Group {
    /// Starts `command` as the leader of a new process group.
    pub(super) fn spawn(command: &mut Command) -> io::Result<(Child, Group)> {
        let child = command.process_group(0).spawn()?;
        let pgid = Pid::from_child(&child);
        Ok((child, Group(pgid)))
    }

    /// The group's id, for names.
    pub(super) fn id(&self) -> u32 {
        self.0.as_raw_nonzero().get().unsigned_abs()
    }

    /// Asks everything in the group to stop: `SIGTERM`, and `SIGCONT` so that stopped
    /// processes see it. Returns whether the ask can be waited on (always, here).
    pub(super) fn ask_to_stop(&self) -> bool {
        signal_group(self.0, Signal::TERM);
        signal_group(self.0, Signal::CONT);
        true
    }

    /// Kills everything in the group (`SIGKILL`).
    pub(super) fn kill(&self) {
        signal_group(self.0, Signal::KILL);
    }

    /// Whether a process that still runs is left in the group.
    pub(super) fn alive(&self) -> bool {
        group_alive(self.0)
    }

    /// Leaves the processes still in the group running after the call.
    pub(super) fn release(self) {}
}

/// The signal that ended a process, if one did.
pub(super) fn signal_of(status: &ExitStatus) -> Option<i32> {
    status.signal()
}

/// Sends `sig` to every process in group `pgid`. A group that is already gone is not an error,
/// and neither is a member we may not signal: the caller goes on to wait and escalate either way.
fn signal_group(pgid: Pid, sig: Signal) {
    if let Err(e) = kill_process_group(pgid, sig) {
        if e != Errno::SRCH {
            tracing::warn!(pgid = pgid.as_raw_nonzero().get(), "signalling a process group: {e}");
        }
    }
}

/// Whether a process that still runs is left in group `pgid`.
///
/// `kill(-pgid, 0)` alone is not enough: it also counts zombies, and an orphan's zombie stays
/// until its new parent reaps it, which some init processes (in containers, sandboxes) do
/// seconds later. Waiting on that would stretch every kill to the full grace period, so on
/// Linux the group's members are looked up in `/proc` and zombies are left out.
fn group_alive(pgid: Pid) -> bool {
    if test_kill_process_group(pgid) == Err(Errno::SRCH) {
        return false;
    }
    live_member_in_proc(pgid.as_raw_nonzero().get()).unwrap_or(true)
}

/// Whether `/proc` lists a non-zombie process of group `pgid`; `None` when `/proc` cannot be
/// read (not Linux, or not mounted).
fn live_member_in_proc(pgid: i32) -> Option<bool> {
    let entries = fs::read_dir("/proc").ok()?;
    let pgid = pgid.to_string();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        // The process may exit between the listing and this read: then it is not alive.
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses, so the fields
        // are counted from the last `)`.
        let Some(close) = stat.rfind(')') else { continue };
        let mut fields = stat[close + 1..].split_whitespace();
        let (state, pgrp) = (fields.next(), fields.nth(1));
        if pgrp == Some(pgid.as_str()) && !matches!(state, Some("Z" | "X" | "x")) {
            return Some(true);
        }
    }
    Some(false)
}

/// The conventional name of signal number `sig` (`SIGKILL`), or `SIG<n>` for one without a name
/// (real-time signals).
pub fn signal_name(sig: i32) -> String {
    const NAMES: &[(Signal, &str)] = &[
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ILL, "SIGILL"),
        (Signal::TRAP, "SIGTRAP"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::BUS, "SIGBUS"),
        (Signal::FPE, "SIGFPE"),
        (Signal::KILL, "SIGKILL"),
        (Signal::USR1, "SIGUSR1"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::USR2, "SIGUSR2"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
        (Signal::CHILD, "SIGCHLD"),
        (Signal::CONT, "SIGCONT"),
        (Signal::STOP, "SIGSTOP"),
        (Signal::TSTP, "SIGTSTP"),
        (Signal::TTIN, "SIGTTIN"),
        (Signal::TTOU, "SIGTTOU"),
        (Signal::URG, "SIGURG"),
        (Signal::XCPU, "SIGXCPU"),
        (Signal::XFSZ, "SIGXFSZ"),
        (Signal::VTALARM, "SIGVTALRM"),
        (Signal::PROF, "SIGPROF"),
        (Signal::WINCH, "SIGWINCH"),
        (Signal::SYS, "SIGSYS"),
    ];
    Signal::from_named_raw(sig)
        .and_then(|s| NAMES.iter().find(|(n, _)| *n == s))
        .map_or_else(|| format!("SIG{sig}"), |(_, name)| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_signals() {
        let table = [
            (Signal::KILL.as_raw(), "SIGKILL"),
            (Signal::TERM.as_raw(), "SIGTERM"),
            (Signal::SEGV.as_raw(), "SIGSEGV"),
            (Signal::ALARM.as_raw(), "SIGALRM"),
            (Signal::ABORT.as_raw(), "SIGABRT"),
            (60, "SIG60"),
        ];
        for (sig, want) in table {
            assert_eq!(signal_name(sig), want, "{sig}");
        }
    }
}
