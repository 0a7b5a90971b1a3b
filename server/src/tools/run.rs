//! `run`: a shell command in a workspace directory, with a time limit and bounded output.
//!
//! The one tool that acts outside the read view and the sink: it starts a process (through
//! [`crate::exec`]). Its working directory is resolved through the sandbox like any path, but
//! the command itself can reach whatever the user running tether can; that is why the tool is
//! refused in read-only mode (and hidden there by the profile).

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{check_range, parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{self, Captured, Spec, SpillTo};
use crate::vfs::EntryKind;

/// Milliseconds a command may run when no `timeout_ms` is given.
pub const DEFAULT_TIMEOUT_MS: i64 = 120_000;
/// The largest `timeout_ms` accepted.
pub const MAX_TIMEOUT_MS: i64 = 600_000;
/// Where spill files go, relative to the root that contains the working directory.
pub const SPILL_DIR: &str = ".tether/run";

/// Arguments of `run`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The command line, run by `/bin/sh -c`: pipes, redirections, `&&`, quoting and variables
    /// work as in a shell.
    pub command: String,
    /// Working directory: absolute inside a workspace root, or relative to the first root.
    /// Defaults to the first root.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Time limit in milliseconds, at most 600000. When it passes, the command and every process
    /// it started are killed and the output so far is returned with `timed_out: true`.
    #[serde(default)]
    #[schemars(range(min = 1, max = 600_000), extend("default" = DEFAULT_TIMEOUT_MS))]
    pub timeout_ms: Option<i64>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "run",
    description: "Run a shell command (`/bin/sh -c`) in a workspace directory and return its exit \
code and output. The result has `exit_code`, `stdout`, `stderr`, `signal` (the signal name, like \
\"SIGKILL\", when a signal ended the command), `timed_out` and `duration_ms`. Use it for builds, tests, git and other programs; to read, \
search or change files prefer the file tools, which see unsaved editor buffers while a command \
only sees the disk. A non-zero exit code is a normal result, not an error. The command runs in \
`cwd` (default: the first workspace root) with stdin closed, so a command that asks for input \
fails instead of waiting. After `timeout_ms` (default 120000, at most 600000) the command and \
every process it started are killed and the output so far is returned. Background processes \
still running when the command exits are killed too (`background_killed: true`): this tool \
cannot leave a server running. Each of stdout and stderr is returned up to 512 KiB; beyond that \
`stdout_truncated`/`stderr_truncated` is true and the whole stream (up to 64 MiB) is saved in \
the file named by `stdout_spill`/`stderr_spill` (under `.tether/run/`), which `read_file` can \
page (a negative offset reads the end). Not available in read-only mode.",
    schema: schema_of::<RunArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: true },
    quick: false,
    run: |ctx, args: Value| run_command(ctx, parse_args(args)?).map(Output::Json),
};

/// Runs the command and describes how it ended, as the tool's JSON result.
pub fn run_command(ctx: &Context<'_>, args: RunArgs) -> Result<Value> {
    if ctx.config.read_only {
        return Err(Error::new(
            ErrorKind::ReadOnly,
            "`run` is not available in read-only mode: a command can change anything",
        ));
    }
    if args.command.trim().is_empty() {
        return Err(Error::invalid("`command` is empty: give a shell command line"));
    }
    if args.command.contains('\0') {
        return Err(Error::invalid("`command` contains a NUL byte"));
    }
    let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    check_range("timeout_ms", timeout_ms, 1, MAX_TIMEOUT_MS)?;

    let cwd = ctx.vfs.resolve(args.cwd.as_deref().unwrap_or("."))?;
    if ctx.vfs.metadata(&cwd)?.kind != EntryKind::Dir {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{}: not a directory; `cwd` must name a directory", cwd.given()),
        )
        .with_path(cwd.given()));
    }
    let root = &ctx.vfs.workspace().roots()[cwd.root_index()];
    let spill = spill_dir(ctx, root)?.map(|dir| SpillTo {
        dir,
        max_bytes: exec::DEFAULT_SPILL_MAX_BYTES,
        keep_files: exec::DEFAULT_SPILL_KEEP_FILES,
    });

    let spec = Spec {
        timeout: Duration::from_millis(timeout_ms.unsigned_abs()),
        spill,
        ..Spec::new(args.command, cwd.real())
    };
    let outcome = exec::run(&spec, ctx.cancel.flag())
        .map_err(|e| Error::new(ErrorKind::IoError, format!("cannot start `/bin/sh` in {}: {e}", cwd.given())))?;

    let spill_shown = |c: &Captured| c.spill.as_deref().map(|p| shown_path(ctx, p));
    Ok(json!({
        "exit_code": outcome.exit_code,
        "signal": outcome.signal.map(exec::signal_name),
        "timed_out": outcome.timed_out,
        "duration_ms": u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        "background_killed": outcome.background_killed,
        "stdout": outcome.stdout.text,
        "stdout_truncated": outcome.stdout.truncated,
        "stdout_bytes": outcome.stdout.total_bytes,
        "stdout_spill": spill_shown(&outcome.stdout),
        "stderr": outcome.stderr.text,
        "stderr_truncated": outcome.stderr.truncated,
        "stderr_bytes": outcome.stderr.total_bytes,
        "stderr_spill": spill_shown(&outcome.stderr),
    }))
}

/// The real path of the spill folder of `root`, proved to be inside the workspace (a
/// `.tether` symlink leading elsewhere is refused before anything runs). `None` when the root's
/// path is not UTF-8 and so cannot be checked: output is then only capped.
fn spill_dir(ctx: &Context<'_>, root: &Path) -> Result<Option<std::path::PathBuf>> {
    let Some(given) = root.join(SPILL_DIR).to_str().map(str::to_owned) else { return Ok(None) };
    match ctx.vfs.resolve(&given) {
        Ok(p) => Ok(Some(p.real().to_path_buf())),
        Err(e) if e.kind() == ErrorKind::PathEscape => Err(Error::new(
            ErrorKind::PathEscape,
            format!("{given}: the folder for output spill files leads outside the workspace roots"),
        )
        .with_path(given)),
        Err(e) => Err(e),
    }
}

/// A spill file's path as `read_file` takes it: relative to the first root when it lies there,
/// absolute otherwise (a relative path would be read from the first root).
fn shown_path(ctx: &Context<'_>, p: &Path) -> String {
    let ws = ctx.vfs.workspace();
    match ws.root_of(p) {
        Some(0) => ws.relative(p),
        _ => p.to_string_lossy().into_owned(),
    }
}
