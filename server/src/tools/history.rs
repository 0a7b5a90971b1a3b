//! `history`: the changes tether applied to this workspace, newest first, from the journal.

use std::time::{Duration, SystemTime};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::journal::{self, Changeset, FileRecord, Journal, Op};

/// Changesets listed when no `limit` is given.
pub const DEFAULT_LIMIT: usize = 20;

/// Arguments of `history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// Only changesets that touched this file (or moved it, or deleted it).
    #[serde(default)]
    pub path: Option<String>,
    /// Only changesets asked for by this client: a case-insensitive part of its name, such as
    /// `claude`, `editor` or `cli`.
    #[serde(default)]
    pub client: Option<String>,
    /// Only changesets since this time: an RFC 3339 time (`2026-11-25T10:00:00Z`) or a span
    /// ago (`10m`, `2h`, `1day`).
    #[serde(default)]
    pub since: Option<String>,
    /// The most changesets to list (default 20).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
    /// One changeset, in full, with its diff.
    #[serde(default)]
    pub id: Option<String>,
    /// With `id`: each file's whole text before and after the change.
    #[serde(default)]
    pub texts: bool,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "history",
    description: "List the changes tether applied to this workspace (by you, other assistants, the \
editor or the command line), newest first: id, time, tool, who asked, and per file the operation \
and lines added and removed. Filter by `path`, `client` or `since` (`10m`, `2h`, or a time). Pass \
`id` to see one changeset as a unified diff. Use `undo` with an id to take a change back.",
    schema: schema_of::<HistoryArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| history(ctx, parse_args(args)?).map(Output::Json),
};

/// The journal of the call's workspace, or `unsupported` when it is off.
pub fn journal(ctx: &Context<'_>) -> Result<Journal> {
    let settings = ctx.config.journal.as_ref().ok_or_else(|| {
        Error::new(ErrorKind::Unsupported, "the change journal is off (tether was started with --no-journal)")
    })?;
    Ok(Journal::open(settings, ctx.vfs.workspace().roots()))
}

/// Lists changesets, or shows one.
pub fn history(ctx: &Context<'_>, args: HistoryArgs) -> Result<Value> {
    let journal = journal(ctx)?;
    let all = journal.list()?;
    let undone = journal::undone_by(&all);
    if let Some(id) = &args.id {
        let c = journal.get(id)?;
        let mut entry = entry(ctx, &c, &undone);
        let mut diff = String::new();
        for (r, e) in c.files.iter().zip(entry["files"].as_array_mut().into_iter().flatten()) {
            let (before, after) = journal.contents(&c, r);
            diff.push_str(&file_diff(ctx, r, before.as_deref(), after.as_deref()));
            if args.texts {
                // `Some(None)`: there are bytes, and they are not text (binary, or not UTF-8).
                let text = |b: &Option<Vec<u8>>| {
                    b.as_ref().map(|b| String::from_utf8(b.clone()).ok().filter(|_| !crate::text::looks_binary(b)))
                };
                match (text(&before), text(&after)) {
                    (Some(None), _) | (_, Some(None)) => {
                        e["before"] = Value::Null;
                        e["after"] = Value::Null;
                        e["binary"] = json!(true);
                    }
                    (b, a) => {
                        e["before"] = json!(b.flatten());
                        e["after"] = json!(a.flatten());
                    }
                }
            }
        }
        return Ok(json!({"changeset": entry, "diff": diff}));
    }
    if args.texts {
        return Err(Error::invalid("`texts` goes with `id`: the texts of one changeset"));
    }
    let path = args.path.as_deref().map(|p| ctx.vfs.resolve(p)).transpose()?;
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let client = args.client.as_deref().map(str::to_lowercase);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 {
        return Err(Error::invalid("`limit` must be at least 1"));
    }
    let mut matching = all.iter().filter(|c| {
        path.as_ref().is_none_or(|p| c.touches(p.real()) || c.touches(p.path()))
            && since.is_none_or(|t| c.time() >= t)
            && client.as_ref().is_none_or(|k| c.client.to_lowercase().contains(k))
    });
    let listed: Vec<Value> = matching.by_ref().take(limit).map(|c| entry(ctx, c, &undone)).collect();
    Ok(json!({"changesets": listed, "more": matching.next().is_some()}))
}

/// One changeset as `history` lists it.
pub fn entry(ctx: &Context<'_>, c: &Changeset, undone: &std::collections::HashMap<String, String>) -> Value {
    let files: Vec<Value> = c.files.iter().map(|r| file_entry(ctx, r)).collect();
    let mut v = json!({
        "id": c.id,
        "time": humantime::format_rfc3339_millis(c.time()).to_string(),
        "tool": c.tool,
        "summary": c.summary,
        "client": c.client,
        "files": files,
    });
    if c.profile != "standard" {
        v["profile"] = json!(c.profile);
    }
    if !c.undoes.is_empty() {
        v["undoes"] = json!(c.undoes);
    }
    if let Some(by) = undone.get(&c.id) {
        v["undone_by"] = json!(by);
    }
    v
}

fn file_entry(ctx: &Context<'_>, r: &FileRecord) -> Value {
    let mut v = json!({"path": show(ctx, &r.path), "op": r.op.as_str(), "added": r.added, "removed": r.removed});
    if let Some(from) = &r.from {
        v["from"] = json!(show(ctx, from));
    }
    if r.dir {
        v["directory"] = json!(true);
    }
    if let Some(why) = &r.not_reversible {
        v["not_reversible"] = json!(why);
    }
    v
}

/// A path for the model: relative to the first root, else absolute.
fn show(ctx: &Context<'_>, real: &std::path::Path) -> String {
    match ctx.vfs.workspace().root_of(real) {
        Some(0) => ctx.vfs.workspace().relative(real),
        _ => real.display().to_string(),
    }
}

/// The unified diff of one file of a changeset (a line for what has no text diff).
fn file_diff(ctx: &Context<'_>, r: &FileRecord, before: Option<&[u8]>, after: Option<&[u8]>) -> String {
    let name = show(ctx, &r.path);
    let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
    match r.op {
        Op::Rename => {
            let from = r.from.as_deref().map(|f| show(ctx, f)).unwrap_or_default();
            format!("rename {from} -> {name}\n")
        }
        Op::Mkdir => format!("mkdir {name}\n"),
        Op::Delete if r.dir => format!("delete {name}/ ({} entries)\n", r.entries.len()),
        _ if before.is_none() && after.is_none() && r.op != Op::Create => {
            format!("{} {name} (contents not kept)\n", r.op.as_str())
        }
        _ if [before, after].iter().flatten().any(|b| crate::text::looks_binary(b)) => {
            format!("{} {name} (binary)\n", r.op.as_str())
        }
        _ => crate::edit::unified_diff(&name, &text(before), &text(after)),
    }
}

/// A `since` argument: an RFC 3339 time, or a span ago.
fn parse_since(s: &str) -> Result<SystemTime> {
    if let Ok(t) = humantime::parse_rfc3339_weak(s) {
        return Ok(t);
    }
    let span: Duration = humantime::parse_duration(s).map_err(|_| {
        Error::invalid(format!(
            "`since`: {s:?} is neither a time (2026-11-25T10:00:00Z) nor a span ago (10m, 2h, 1day)"
        ))
    })?;
    Ok(SystemTime::now().checked_sub(span).unwrap_or(SystemTime::UNIX_EPOCH))
}
