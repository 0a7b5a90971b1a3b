//! `bash`: a shell command with a JSON result, output beyond the shared budget saved to files.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{floor_char_boundary, Reply, MAX_OUTPUT_BYTES};
use crate::error::{Error, ErrorKind, Result};
use crate::exec::{self, signal_name, Background, Captured, Outcome};
use crate::sink::Sink;
use crate::tools::{parse_args, Context};
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// `bash`'s time limit when the call gives none.
pub const BASH_TIMEOUT_MS: i64 = 120_000;
/// The largest `bash` time limit; larger requests are clamped to it.
pub const BASH_TIMEOUT_MAX_MS: i64 = 600_000;
/// Bytes of each `bash` stream kept in memory; a command writing more is killed (`output_limit`).
pub const BASH_STREAM_CEILING: usize = 16 * 1024 * 1024;
/// Where `bash` saves output beyond the budget, relative to the root holding its `cwd`.
pub const SPILL_DIR: &str = ".tether/bash";

/// Arguments of `bash`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BashArgs {
    /// The shell command, run with `sh -c`.
    command: String,
    /// Working directory. Defaults to the workspace root.
    #[serde(default)]
    cwd: Option<String>,
    /// Maximum run time in milliseconds; values above 600000 are clamped to it.
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = BASH_TIMEOUT_MS))]
    timeout_ms: Option<i64>,
}

pub(super) fn bash(ctx: &Context<'_>, _: &dyn Sink, args: Value) -> Result<Reply> {
    let args: BashArgs = parse_args(args)?;
    if args.command.trim().is_empty() {
        return Err(Error::invalid("`command` is empty: give a shell command"));
    }
    if args.command.contains('\0') {
        return Err(Error::invalid("`command` contains a NUL byte"));
    }
    let timeout_ms = args.timeout_ms.unwrap_or(BASH_TIMEOUT_MS);
    if timeout_ms < 1 {
        return Err(Error::invalid(format!("`timeout_ms` must be at least 1, got {timeout_ms}")));
    }
    let timeout_ms = timeout_ms.min(BASH_TIMEOUT_MAX_MS);
    let cwd = ctx.vfs.resolve(args.cwd.as_deref().unwrap_or("."))?;
    if ctx.vfs.metadata(&cwd)?.kind != EntryKind::Dir {
        return Err(Error::new(ErrorKind::NotAFile, format!("{cwd}: not a directory; `cwd` must name a directory"))
            .with_path(cwd.given()));
    }
    // The contract's runner: background jobs outlive the call, a stream past the ceiling or the
    // time limit gets the group killed at once, and the streams are measured and saved as bytes.
    let spec = exec::Spec {
        timeout: Duration::from_millis(timeout_ms.unsigned_abs()),
        grace: Duration::ZERO,
        capture_bytes: BASH_STREAM_CEILING,
        background: Background::Keep,
        kill_over_capture: true,
        keep_bytes: true,
        ..exec::Spec::new(args.command, cwd.real())
    };
    let outcome = exec::run(&spec, ctx.cancel.flag()).map_err(|e| {
        Error::new(ErrorKind::IoError, format!("cannot start `sh` in {cwd}: {e}")).with_path(cwd.given())
    })?;
    let mut result = bash_result(ctx, &cwd, &outcome);
    let failure = if outcome.timed_out {
        Some(("timeout", format!("the command ran past its {timeout_ms} ms timeout; its process group was killed")))
    } else if outcome.output_limit {
        Some((
            "output_limit",
            format!(
                "the command wrote more than {BASH_STREAM_CEILING} bytes to one stream; its process group was killed"
            ),
        ))
    } else if outcome.cancelled {
        Some(("aborted", "the call was cancelled; the command's process group was killed".to_owned()))
    } else {
        None
    };
    Ok(match failure {
        None => Reply::Json(Value::Object(result)),
        Some((code, message)) => {
            let mut env = Map::new();
            env.insert("error".into(), code.into());
            env.insert("message".into(), message.into());
            env.append(&mut result);
            Reply::Envelope(Value::Object(env))
        }
    })
}

/// The `{exit_code, stdout, stderr, signal, timed_out}` object of a finished command, with the
/// streams fitted to the shared budget (and spill files named) when they overflow it.
fn bash_result(ctx: &Context<'_>, cwd: &SandboxPath, o: &Outcome) -> Map<String, Value> {
    let (stdout, stderr) = (raw(&o.stdout), raw(&o.stderr));
    let (out_len, err_len) = (stdout.len(), stderr.len());
    // stderr is kept whole up to half the budget; stdout takes the rest, then stderr what is left.
    let err_share = err_len.min(MAX_OUTPUT_BYTES / 2);
    let out_share = out_len.min(MAX_OUTPUT_BYTES - err_share);
    let err_share = err_len.min(MAX_OUTPUT_BYTES - out_share);
    let mut m = Map::new();
    m.insert("exit_code".into(), o.exit_code.into());
    let stamp = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    for (name, bytes, share) in [("stdout", stdout, out_share), ("stderr", stderr, err_share)] {
        let text = String::from_utf8_lossy(bytes);
        if bytes.len() <= share {
            m.insert(name.into(), text.into_owned().into());
            continue;
        }
        let cut = floor_char_boundary(&text, share);
        let spill = spill(ctx, cwd, &format!("{stamp}-{}-{name}.log", std::process::id()), bytes);
        let mut shown = text[..cut].to_owned();
        shown.push_str(&format!("\n[... output truncated: {} more bytes", bytes.len() - cut));
        match &spill {
            Some(p) => shown.push_str(&format!("; the complete {name} is in {p}]")),
            None => shown.push(']'),
        }
        m.insert(name.into(), shown.into());
        m.insert(format!("{name}_spill"), spill.into());
    }
    m.insert("signal".into(), o.signal.map(signal_name).into());
    m.insert("timed_out".into(), o.timed_out.into());
    m
}

/// A stream's head as the command wrote it (the spec asks for the bytes).
fn raw(c: &Captured) -> &[u8] {
    c.bytes.as_deref().unwrap_or_default()
}

/// Saves a stream's complete output under the spill folder of the root holding `cwd`, and
/// returns its path as read_file takes it; `None` (logged) when it cannot be written.
fn spill(ctx: &Context<'_>, cwd: &SandboxPath, name: &str, bytes: &[u8]) -> Option<String> {
    let root = &ctx.vfs.workspace().roots()[cwd.root_index()];
    let dir = ctx.vfs.resolve(root.join(SPILL_DIR).to_str()?).ok()?;
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir.real())?;
        let ignore = dir.real().join(".gitignore");
        if !ignore.exists() {
            std::fs::write(ignore, "*\n")?;
        }
        std::fs::write(dir.real().join(name), bytes)
    };
    if let Err(e) = write() {
        tracing::warn!("cannot write a bash spill file in {}: {e}", dir.real().display());
        return None;
    }
    let file = dir.real().join(name);
    Some(if cwd.root_index() == 0 { ctx.vfs.display(&file) } else { file.display().to_string() })
}
