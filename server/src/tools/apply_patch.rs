//! `apply_patch`: apply a unified diff or a `*** Begin Patch` envelope over one or more files.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::patch::{self, apply_hunks, apply_hunks_noting, FileChange, FilePatch};
use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch: a unified diff (`--- a/path`, `+++ b/path`, `@@ -a,b +c,d @@` hunks; git headers
    /// accepted) or a `*** Begin Patch` ... `*** End Patch` envelope. Paths are relative to the
    /// first workspace root, or absolute inside a root.
    pub patch: String,
    /// Check the patch and return the diff it would make, without changing anything.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub dry_run: bool,
    /// Refuse a patch that names one path in two sections, as a contract that says so requires
    /// (coder); otherwise two sections updating one file are applied as one. Not an argument.
    #[serde(skip)]
    #[schemars(skip)]
    pub one_section_per_path: bool,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "apply_patch",
    description: "Apply a patch that creates, edits, renames or deletes one or more files, all \
together or not at all. Accepts a unified diff (`diff -u` or `git diff` output: `--- a/path` / \
`+++ b/path` headers, `@@ -a,b +c,d @@` hunks, `--- /dev/null` to create, `+++ /dev/null` to \
delete, different old and new paths or git's `rename from`/`rename to` to rename, with no hunks for \
a pure rename) or the \
`*** Begin Patch` envelope (`*** Add File: path` with `+` lines, `*** Update File: path` with an \
optional `*** Move to: path` and `@@` hunks, where `@@ def f():` first finds that line, \
`*** Delete File: path`, `*** End of File` to match at the end, `*** End Patch`). A markdown \
code fence around the patch is ignored. Hunk line counts need not be exact. Context is matched \
exactly first, then ignoring trailing whitespace, then ignoring indentation; a hunk is looked for \
at its stated line first, then outward. Give 2-3 context lines around each change. Files keep \
their line endings. A hunk that does not apply fails the whole patch with a patch_failed error \
naming the file, the hunk, and the lines it expected; creating an existing file or moving onto \
one is refused. Prefer `edit_file` for one small change; prefer this for many changes or files. \
With `dry_run` it returns the diff it would apply and changes nothing.",
    schema: schema_of::<ApplyPatchArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: false },
    quick: false,
    run: |ctx, args: Value| apply_patch(ctx, parse_args(args)?),
};

/// What happened to one file, for the summary.
enum Status {
    Modified(String),
    Unchanged(String),
    Added(String),
    Deleted(String),
    Renamed(String, String),
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Modified(p) => write!(f, "M {p}"),
            Status::Unchanged(p) => write!(f, "M {p} (no change)"),
            Status::Added(p) => write!(f, "A {p}"),
            Status::Deleted(p) => write!(f, "D {p}"),
            Status::Renamed(a, b) => write!(f, "R {a} -> {b}"),
        }
    }
}

/// Parses `args.patch`, builds the plan of every file's change, and returns it (or, for a dry
/// run, its diff).
pub fn apply_patch(ctx: &Context<'_>, args: ApplyPatchArgs) -> Result<Output> {
    let mut accepted = Vec::new();
    let mut files = patch::parse_noting(&args.patch, &mut accepted)?;
    correct_paths(ctx, &mut files, &mut accepted);
    let files = if args.one_section_per_path { files } else { merge_sections(ctx, files, &mut accepted) };
    let resolved = resolve_all(ctx, &files)?;
    let mut plan = EditPlan::default();
    let mut statuses = Vec::with_capacity(files.len());
    for (file, paths) in files.iter().zip(&resolved) {
        statuses.push(plan_file(ctx, file, paths, &mut plan, &mut accepted)?);
    }
    plan.validate()?;
    let listed: Vec<String> = statuses.iter().map(ToString::to_string).collect();
    // Each slip the patch got away with, so that the model learns the format.
    let slips: String = accepted.iter().map(|a| format!("\naccepted: {a}")).collect();
    if args.dry_run {
        let diff = plan.render_diff();
        return Ok(Output::Text(format!("dry run, nothing written: {}{slips}\n\n{diff}", listed.join(", "))));
    }
    let n = statuses.iter().filter(|s| !matches!(s, Status::Unchanged(_))).count();
    let mut summary = format!("patched {n} file{}:", if n == 1 { "" } else { "s" });
    for line in &listed {
        let _ = write!(summary, "\n{line}");
    }
    summary.push_str(&slips);
    Ok(Output::Change { plan, summary })
}

/// The paths of files a patch updates or deletes, when they name no file but a certain one: with
/// an `a/` or `b/` prefix a unified diff's header would have (`a/src/x.py` for `src/x.py`), or
/// with letters in another case when exactly one file matches so (`Src/App.py`). Each correction
/// is said in `accepted`.
fn correct_paths(ctx: &Context<'_>, files: &mut [FilePatch], accepted: &mut Vec<String>) {
    for file in files {
        let (FileChange::Update { path, .. } | FileChange::Delete { path }) = &mut file.change else { continue };
        if ctx.vfs.resolve(path).is_ok_and(|p| ctx.vfs.exists(&p)) {
            continue;
        }
        // Every file the path can name without its prefix, in another letter case, or both: a
        // path that names exactly one is read as naming it.
        // (`other_case` finds a path's exact spelling too.)
        let unprefixed = path.strip_prefix("a/").or_else(|| path.strip_prefix("b/"));
        let mut names: Vec<String> =
            other_case(ctx, path).into_iter().chain(unprefixed.and_then(|p| other_case(ctx, p))).collect();
        names.sort();
        names.dedup();
        if names.len() == 1 {
            let found = names.remove(0);
            accepted.push(format!("`{path}` read as `{found}`, the one file it can name"));
            *path = found;
        }
    }
}

/// The one existing file whose path differs from relative path `given` only in letter case
/// (`None` when none does, or several: `x.TXT` beside `x.txt` and `X.txt`, or `a/x` beside `A/X`).
fn other_case(ctx: &Context<'_>, given: &str) -> Option<String> {
    if std::path::Path::new(given).is_absolute() {
        return None;
    }
    // Every folder (then file) each part can name, in any letter case.
    let mut reached = vec![String::new()];
    for part in given.split('/').filter(|p| !p.is_empty() && *p != ".") {
        let part = part.to_lowercase();
        let mut next = Vec::new();
        for dir in &reached {
            let Ok(here) = ctx.vfs.resolve(if dir.is_empty() { "." } else { dir }) else { continue };
            let Ok(entries) = ctx.vfs.read_dir(&here) else { continue };
            for (name, _, _) in entries.iter().filter(|(n, _, _)| n.to_lowercase() == part) {
                next.push(if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") });
            }
        }
        if next.len() > 8 {
            return None; // no one file among so many
        }
        reached = next;
    }
    let is_file =
        |p: &String| ctx.vfs.resolve(p).is_ok_and(|r| ctx.vfs.metadata(&r).is_ok_and(|m| m.kind == EntryKind::File));
    let mut files = reached.into_iter().filter(is_file);
    let one = files.next()?;
    files.next().is_none().then_some(one)
}

/// One section per file: a file updated by two sections of the patch (with no move) gets all
/// their hunks in one, in patch order, and the answer says so.
fn merge_sections(ctx: &Context<'_>, files: Vec<FilePatch>, accepted: &mut Vec<String>) -> Vec<FilePatch> {
    let real = |f: &FilePatch| match &f.change {
        FileChange::Update { path, move_to: None } => ctx.vfs.resolve(path).ok().map(|p| p.real().to_owned()),
        _ => None,
    };
    let mut out: Vec<FilePatch> = Vec::with_capacity(files.len());
    for file in files {
        let same = real(&file).and_then(|r| out.iter().position(|o| real(o).as_ref() == Some(&r)));
        match same {
            Some(i) => {
                accepted.push(format!(
                    "the sections for {} at patch lines {} and {} applied as one",
                    file.paths()[0],
                    out[i].line,
                    file.line
                ));
                out[i].hunks.extend(file.hunks);
            }
            None => out.push(file),
        }
    }
    out
}

/// Resolves every path of every file patch before anything else, so that a path outside the
/// workspace fails the whole patch; refuses a path named twice.
fn resolve_all(ctx: &Context<'_>, files: &[FilePatch]) -> Result<Vec<Vec<SandboxPath>>> {
    let mut seen: HashMap<PathBuf, usize> = HashMap::new();
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let mut paths = Vec::new();
        for given in file.paths() {
            let p = ctx.vfs.resolve(given)?;
            // A move onto the file itself (`--- a/x` / `+++ b/./x`) is no move.
            if paths.first().is_some_and(|first: &SandboxPath| first.real() == p.real()) {
                continue;
            }
            if let Some(first) = seen.insert(p.real().to_path_buf(), file.line) {
                return Err(Error::invalid(format!(
                    "{given}: the patch names this path twice (patch lines {first} and {}); give each file \
                     one section with all its hunks, and do not create, move or delete a path another \
                     section uses",
                    file.line
                ))
                .with_path(given));
            }
            paths.push(p);
        }
        out.push(paths);
    }
    Ok(out)
}

/// Adds one file's operations to `plan` and says what happens to it.
fn plan_file(
    ctx: &Context<'_>,
    file: &FilePatch,
    paths: &[SandboxPath],
    plan: &mut EditPlan,
    accepted: &mut Vec<String>,
) -> Result<Status> {
    let path = &paths[0];
    match &file.change {
        FileChange::Add { .. } => create(ctx, file, path, plan),
        FileChange::Delete { .. } => {
            let meta = ctx.vfs.metadata(path)?;
            if meta.kind == EntryKind::Dir {
                return Err(Error::new(
                    ErrorKind::NotAFile,
                    format!("{path}: is a directory; a patch deletes files only"),
                )
                .with_path(path.given()));
            }
            if !file.hunks.is_empty() {
                // The hunks of a deletion say what the file holds: check them, as `git apply` does.
                let text = ctx.vfs.read_text(path)?.text;
                let rest = apply_hunks(&text, &file.hunks).map_err(|f| failed(path, &f))?;
                if !rest.is_empty() {
                    let left = crate::text::lines(&rest).count();
                    return Err(Error::new(
                        ErrorKind::PatchFailed,
                        format!(
                            "{path}: the patch deletes this file, but its hunks leave {left} line{} of it; \
                             the file has changed or the hunks are incomplete (a deletion needs no hunks)",
                            if left == 1 { "" } else { "s" }
                        ),
                    )
                    .with_path(path.given()));
                }
            }
            plan.ops.push(FileOp::Delete { path: path.clone(), recursive: false });
            Ok(Status::Deleted(path.given().to_owned()))
        }
        FileChange::Update { .. } => {
            if !ctx.vfs.exists(path) {
                // Models often write a new file as `--- a/x` / `+++ b/x` with one `@@ -0,0 +1,n @@`
                // hunk: nothing but added lines against a missing file can only mean a creation.
                let only_added = file.hunks.iter().all(|h| h.old_lines().next().is_none());
                if paths.len() == 1 && !file.hunks.is_empty() && only_added {
                    return create(ctx, file, path, plan);
                }
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!(
                        "{path}: no such file to update; a patch creates a file with `--- /dev/null` \
                         (or `*** Add File:`)"
                    ),
                )
                .with_path(path.given()));
            }
            let file_text = ctx.vfs.read_text(path)?;
            let new = if file.hunks.is_empty() {
                None
            } else {
                Some(apply_hunks_noting(&file_text.text, &file.hunks, accepted).map_err(|f| failed(path, &f))?)
            };
            if let Some(new) = new {
                let edit = EditPlan::edit_to(path.clone(), Base::from(file_text), &new);
                plan.ops.extend(edit.ops);
            }
            let changed = plan.ops.last().is_some_and(|op| op.path() == path);
            match paths.get(1) {
                Some(to) => {
                    if ctx.vfs.exists(to) {
                        return Err(Error::new(
                            ErrorKind::PatchFailed,
                            format!(
                                "{to}: the patch moves {path} here, but {to} already exists; delete it first \
                                 or choose another name"
                            ),
                        )
                        .with_path(to.given()));
                    }
                    plan.ops.push(FileOp::Rename { from: path.clone(), to: to.clone(), overwrite: false });
                    Ok(Status::Renamed(path.given().to_owned(), to.given().to_owned()))
                }
                None if changed => Ok(Status::Modified(path.given().to_owned())),
                None => Ok(Status::Unchanged(path.given().to_owned())),
            }
        }
    }
}

/// Adds the creation of `path` with the file patch's hunks applied to an empty text.
fn create(ctx: &Context<'_>, file: &FilePatch, path: &SandboxPath, plan: &mut EditPlan) -> Result<Status> {
    if ctx.vfs.exists(path) {
        return Err(Error::new(
            ErrorKind::PatchFailed,
            format!(
                "{path}: the patch creates this file, but it already exists; update it with hunks against \
                 its current text instead"
            ),
        )
        .with_path(path.given()));
    }
    let text = apply_hunks("", &file.hunks).map_err(|f| failed(path, &f))?;
    plan.ops.push(FileOp::Create { path: path.clone(), text, overwrite: false, mode: None });
    Ok(Status::Added(path.given().to_owned()))
}

/// The `patch_failed` error for a hunk of `path` that did not apply.
fn failed(path: &SandboxPath, f: &patch::HunkFailure) -> Error {
    Error::new(ErrorKind::PatchFailed, f.message(path.given())).with_path(path.given())
}

#[cfg(test)]
#[path = "apply_patch_tests.rs"]
mod tests;
