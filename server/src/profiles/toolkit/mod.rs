//! The `toolkit` profile: a workspace toolkit whose session starts with `set_workspace`.
//!
//! Seven tools: `set_workspace`, then `read_files` (`N | line` numbering, `line_range`),
//! `write_files` (checked against `line_count`), `apply_diffs` (search/replace blocks anchored
//! by `start_line`, atomic or not, optional `trim`), `insert_contents` (negative positions count
//! from the end), `search_and_replace` (literal or regex, within a line range) and `list_files`
//! (`directory:` / `file:` lines). Until `set_workspace` has chosen a directory inside the
//! allowed roots, every other tool is refused; afterwards every path resolves inside that
//! directory, relative paths against it. Results are plain text; a failure is an error result
//! whose text starts with `Error: `. The chosen workspace is per session: each server makes its
//! own profile instance.

mod args;
mod edit;
mod read;
mod schema;
mod write;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::sink::Sink;
use crate::tools::{Context, Effects};
use crate::vfs::{EntryKind, Vfs};
use crate::workspace::Workspace;
use args::Args;

/// The `toolkit` profile, with the workspace its session chose.
#[derive(Debug, Default)]
pub struct Toolkit {
    /// The real path of the directory `set_workspace` chose, once it has.
    workspace: Mutex<Option<PathBuf>>,
}

/// A tool's answer: its text, and whether it reports a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reply {
    text: String,
    is_error: bool,
}

impl Reply {
    fn ok(text: impl Into<String>) -> Reply {
        Reply { text: text.into(), is_error: false }
    }

    fn error(message: impl std::fmt::Display) -> Reply {
        Reply { text: format!("Error: {message}"), is_error: true }
    }
}

/// What a tool returns: its reply, or the message of the error reply.
type Answer = Result<Reply, String>;

/// One tool of the profile. `run` says how it runs inside the session's workspace; `None` for
/// `set_workspace`, which the profile answers itself since it chooses that workspace.
type Spec = super::Entry<Option<Run>>;

type Run = fn(&Context<'_>, &dyn Sink, &Args) -> Answer;

const WRITE: Effects = Effects { read_only: false, destructive: true, idempotent: true, open_world: false };
const EDIT: Effects = Effects { read_only: false, destructive: true, idempotent: false, open_world: false };
const INSERT: Effects = Effects { read_only: false, destructive: false, idempotent: false, open_world: false };

/// The tools, in the order the contract lists them.
#[rustfmt::skip]
const TOOLS: &[Spec] = &[
    Spec { name: "set_workspace", description: schema::SET_WORKSPACE, schema: schema::set_workspace, effects: Effects::READ, quick: false, run: None },
    Spec { name: "read_files", description: schema::READ_FILES, schema: schema::read_files, effects: Effects::READ, quick: false, run: Some(|c, _, a| read::read_files(c, a)) },
    Spec { name: "write_files", description: schema::WRITE_FILES, schema: schema::write_files, effects: WRITE, quick: false, run: Some(write::write_files) },
    Spec { name: "apply_diffs", description: schema::APPLY_DIFFS, schema: schema::apply_diffs, effects: EDIT, quick: false, run: Some(edit::apply_diffs) },
    Spec { name: "insert_contents", description: schema::INSERT_CONTENTS, schema: schema::insert_contents, effects: INSERT, quick: false, run: Some(write::insert_contents) },
    Spec { name: "search_and_replace", description: schema::SEARCH_AND_REPLACE, schema: schema::search_and_replace, effects: EDIT, quick: false, run: Some(edit::search_and_replace) },
    Spec { name: "list_files", description: schema::LIST_FILES, schema: schema::list_files, effects: Effects::READ, quick: false, run: Some(|c, _, a| read::list_files(c, a)) },
];

impl Profile for Toolkit {
    fn name(&self) -> &'static str {
        "toolkit"
    }

    fn tools(&self, config: &Config) -> Vec<ToolInfo> {
        super::listed(TOOLS, config)
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        let spec = super::served(TOOLS, name, ctx.config)?;
        let answer = Args::new(args, &(spec.schema)()).and_then(|args| {
            let Some(run) = spec.run else {
                return self.set_workspace(ctx, &args);
            };
            let vfs = self.session(ctx)?;
            let inner = Context { vfs: &vfs, config: ctx.config, cancel: ctx.cancel, editor: ctx.editor };
            run(&inner, sink, &args)
        });
        let reply = answer.unwrap_or_else(Reply::error);
        Ok(CallResult { text: reply.text, structured: None, items: Vec::new(), is_error: reply.is_error })
    }

    fn error_result(&self, e: &Error) -> CallResult {
        CallResult {
            text: format!("Error: {}", describe(e, Target::File)),
            structured: None,
            items: Vec::new(),
            is_error: true,
        }
    }
}

impl Toolkit {
    /// `set_workspace`: chooses the session's workspace, a directory inside the allowed roots.
    fn set_workspace(&self, ctx: &Context<'_>, args: &Args) -> Answer {
        let given = args.string("path")?;
        if given.is_empty() {
            return Err("path is empty; give the workspace directory".to_owned());
        }
        let path = ctx.vfs.resolve(&given).map_err(|e| match e.kind() {
            ErrorKind::PathEscape => format!(
                "Access denied: {given} is outside the allowed directories ({})",
                allowed_roots(ctx.vfs.workspace())
            ),
            _ => describe(&e, Target::Dir),
        })?;
        let meta = ctx.vfs.metadata(&path).map_err(|e| describe(&e, Target::Dir))?;
        if meta.kind != EntryKind::Dir {
            return Err(format!("Not a directory: {given}"));
        }
        let real = path.real().to_path_buf();
        let shown = real.display().to_string();
        *self.workspace.lock().unwrap_or_else(|e| e.into_inner()) = Some(real);
        Ok(Reply::ok(format!("Successfully set workspace root to: {shown}")))
    }

    /// The read view of the session's workspace: only the chosen directory, with the caller's
    /// open buffers. Fails when no workspace is set, or when it no longer lies inside the
    /// allowed roots (the client may have changed them).
    fn session(&self, ctx: &Context<'_>) -> Result<Vfs, String> {
        let chosen = self.workspace.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(dir) = chosen else {
            return Err("Workspace not set. Call set_workspace with the workspace root directory before using any \
                        other tool"
                .to_owned());
        };
        let gone = || {
            format!(
                "The workspace {} is no longer a directory inside the allowed directories ({}); call set_workspace \
                 again",
                dir.display(),
                allowed_roots(ctx.vfs.workspace())
            )
        };
        let ws = ctx.vfs.workspace().with_roots([&dir]).map_err(|_| gone())?;
        if ctx.vfs.workspace().root_of(&ws.roots()[0]).is_none() {
            return Err(gone());
        }
        Ok(Vfs::new(Arc::new(ws), Arc::new(ctx.vfs.overlay().clone())))
    }
}

/// The allowed roots, for messages.
fn allowed_roots(ws: &Workspace) -> String {
    ws.roots().iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// What a path argument names, for the not-found wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    File,
    Dir,
}

/// A core error in the contract's words (without the `Error: ` prefix).
fn describe(e: &Error, target: Target) -> String {
    let given = e.path().unwrap_or_default();
    match (e.kind(), target) {
        (ErrorKind::NotFound, Target::File) if !given.is_empty() => format!("File not found: {given}"),
        (ErrorKind::NotFound, Target::Dir) if !given.is_empty() => format!("Directory not found: {given}"),
        (ErrorKind::NotADirectory, _) if !given.is_empty() => format!("Not a directory: {given}"),
        (ErrorKind::NotAFile, _) if e.message().contains("is a directory") => {
            format!("Path is a directory, not a file: {given}")
        }
        (ErrorKind::PathEscape, _) => format!("Access denied: {given} is outside the workspace"),
        (ErrorKind::ReadOnly, _) => "The server is read-only; no change was made".to_owned(),
        _ => capitalized(e.message(), given),
    }
}

/// `message` with its first letter capitalized, unless it starts with the path it names.
fn capitalized(message: &str, given: &str) -> String {
    if !given.is_empty() && message.starts_with(given) {
        return message.to_owned();
    }
    let mut chars = message.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `1 line`, `3 lines`.
fn lines_word(n: usize) -> String {
    if n == 1 {
        "1 line".to_owned()
    } else {
        format!("{n} lines")
    }
}

#[cfg(test)]
mod tests;
