//! `run_command`: a shell command in an allowed directory, with a time limit and capped output,
//! answered as text with an `[exit code: N]` footer and a `[stderr]` part.

use std::time::Duration;

use serde_json::{json, Value};

use super::args::Args;
use super::files::ITEM_SEPARATOR;
use super::{core, object_schema, rpc, Call, INTERNAL};
use crate::exec::{self, Captured, Spec};
use crate::profiles::{CallError, CallResult};
use crate::vfs::EntryKind;

/// Default and largest `timeout`, in seconds.
const DEFAULT_TIMEOUT_SECS: i64 = 30;
const MAX_TIMEOUT_SECS: i64 = 60;
/// Time between `SIGTERM` and `SIGKILL` at the deadline.
const GRACE: Duration = Duration::from_secs(3);
/// Bytes of each stream returned.
const CAPTURE_BYTES: usize = 512 * 1024;

pub(super) const RUN_COMMAND: &str = "Run a shell command (via /bin/sh -c) in `workingDirectory` (an allowed \
directory; default: the first one). `timeout` is in seconds (default 30, max 60): at the deadline the command gets \
SIGTERM, then SIGKILL 3 seconds later, and its partial output is returned. The answer is stdout (or `(no output)`) \
with an `[exit code: N]` footer, then, when stderr is not empty, a part starting `[stderr]`; each stream is capped \
at 512 KB with a notice. A non-zero exit or a timeout sets isError. Errors: -32001 working directory not allowed, \
-32602 missing command.";

pub(super) fn schema() -> Value {
    object_schema(
        json!({
            "command": {"type": "string", "description": "Shell command (runs via /bin/sh -c)"},
            "workingDirectory": {"type": "string", "description": "Working directory, inside the allowed directories"},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_SECS, "default": DEFAULT_TIMEOUT_SECS, "description": "Seconds (default 30, max 60)"},
        }),
        &["command"],
    )
}

pub(super) fn run_command(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let command = args.req_str("command")?;
    let cwd_given = args.str("workingDirectory")?.unwrap_or_else(|| ".".to_owned());
    // A timeout above the maximum is held to it rather than refused.
    let timeout = args.int("timeout", 1, i64::MAX)?.unwrap_or(DEFAULT_TIMEOUT_SECS).min(MAX_TIMEOUT_SECS);
    if command.contains('\0') {
        return Err(super::args::invalid("`command` contains a NUL byte"));
    }
    let cwd = call.ctx.vfs.resolve(&cwd_given).map_err(core)?;
    if call.ctx.vfs.metadata(&cwd).map_err(core)?.kind != EntryKind::Dir {
        return Err(rpc(INTERNAL, format!("{cwd_given}: not a directory")));
    }
    let spec = Spec {
        timeout: Duration::from_secs(timeout.unsigned_abs()),
        grace: GRACE,
        capture_bytes: CAPTURE_BYTES,
        spill: None,
        ..Spec::new(command, cwd.real())
    };
    let outcome = exec::run(&spec, call.ctx.cancel.flag())
        .map_err(|e| rpc(INTERNAL, format!("cannot start /bin/sh in {cwd_given}: {e}")))?;
    // A shell killed by a signal reports 128 + the signal, as shells do.
    let code = outcome.exit_code.or(outcome.signal.map(|s| 128 + s)).unwrap_or(-1);

    let mut stdout =
        if outcome.stdout.text.is_empty() { "(no output)".to_owned() } else { outcome.stdout.text.clone() };
    end_line(&mut stdout);
    note_truncated(&mut stdout, "stdout", &outcome.stdout);
    if outcome.timed_out {
        stdout
            .push_str(&format!("[timed out after {timeout}s: SIGTERM, then SIGKILL after 3s; partial output above]\n"));
    }
    stdout.push_str(&format!("[exit code: {code}]"));
    let mut parts = vec![stdout];
    if !outcome.stderr.text.is_empty() {
        let mut stderr = format!("[stderr]\n{}", outcome.stderr.text);
        if outcome.stderr.truncated {
            end_line(&mut stderr);
            note_truncated(&mut stderr, "stderr", &outcome.stderr);
            stderr.pop();
        }
        parts.push(stderr);
    }
    Ok(CallResult::texts(parts, ITEM_SEPARATOR, code != 0 || outcome.timed_out))
}

/// Ends `s` with a line break.
fn end_line(s: &mut String) {
    if !s.ends_with('\n') {
        s.push('\n');
    }
}

/// Appends the notice that a stream was cut.
fn note_truncated(s: &mut String, name: &str, c: &Captured) {
    if c.truncated {
        s.push_str(&format!(
            "[{name} truncated: showing the first {} KB of {} bytes]\n",
            CAPTURE_BYTES / 1024,
            c.total_bytes
        ));
    }
}
