//! A unified diff applied to exactly one named file (the guarded profile's `apply_patch`).
//!
//! The target is the path the caller names, not the diff's own `---`/`+++` names, so a diff of
//! bare `@@` hunks is fine, and a markdown code fence around the diff is ignored. A
//! `--- /dev/null` diff creates the file and is refused when it exists; any other diff changes
//! an existing file; a diff that deletes its file is refused. A malformed diff, a diff over
//! several files and a hunk that does not match are all `patch_failed`.

use crate::edit::patch::{self, apply_hunks, envelope, unified, FileChange, FilePatch, PatchLine};
use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::tools::editable::{read_editable, Wording};
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// A diff and the one file it is for.
#[derive(Debug, Clone)]
pub struct OneFilePatch {
    /// The target file, as the user gave it.
    pub path: String,
    /// The unified diff (or `*** Begin Patch` envelope) for it.
    pub patch: String,
}

/// The plan of a patch, and what it does.
#[derive(Debug)]
pub struct PatchedFile {
    /// The change.
    pub plan: EditPlan,
    /// The target file.
    pub path: SandboxPath,
    /// Whether the patch creates the file (a `/dev/null` source) rather than changing it.
    pub created: bool,
    /// How many hunks the diff has (all of them applied).
    pub hunks: usize,
}

/// Plans `args.patch` onto `args.path`.
pub fn patch_one_file(ctx: &Context<'_>, args: OneFilePatch) -> Result<PatchedFile> {
    let path = ctx.vfs.resolve(&args.path)?;
    let file = parse_one(&args.patch)?;
    let hunks = file.hunks.len();
    match file.change {
        FileChange::Add { .. } => {
            if ctx.vfs.exists(&path) {
                return Err(Error::new(
                    ErrorKind::PatchFailed,
                    format!("{path}: the patch creates this file from /dev/null, but it already exists; write a diff against its current text instead"),
                )
                .with_path(path.given()));
            }
            let text = apply_hunks("", &file.hunks).map_err(|f| failed(path.given(), &f))?;
            let plan = EditPlan::one(FileOp::Create { path: path.clone(), text, overwrite: false, mode: None });
            Ok(PatchedFile { plan, path, created: true, hunks })
        }
        FileChange::Delete { .. } => Err(Error::new(
            ErrorKind::PatchFailed,
            "the patch deletes its file (`+++ /dev/null`); apply_patch changes or creates one file and never deletes",
        )),
        FileChange::Update { .. } => {
            let meta = ctx.vfs.metadata(&path).map_err(|e| match e.kind() {
                ErrorKind::NotFound => Error::new(
                    ErrorKind::NotFound,
                    format!("{path}: no such file; a patch creates a file only from a `--- /dev/null` source"),
                )
                .with_path(path.given()),
                _ => e,
            })?;
            if meta.kind == EntryKind::Dir {
                return Err(Error::new(ErrorKind::NotAFile, format!("{path}: is a directory, not a file"))
                    .with_path(path.given()));
            }
            let text = read_editable(ctx, &path, Wording::Write)?;
            let new = apply_hunks(&text.text, &file.hunks).map_err(|f| failed(path.given(), &f))?;
            let plan = EditPlan::edit_to(path.clone(), Base::from(text), &new);
            Ok(PatchedFile { plan, path, created: false, hunks })
        }
    }
}

/// Parses a patch for one file. A diff of bare hunks gets file headers (the target is the
/// `path` argument, so the names in a diff do not matter); a malformed diff or one over several
/// files is `patch_failed`, the contract's error for a malformed diff.
fn parse_one(text: &str) -> Result<FilePatch> {
    let lines: Vec<PatchLine<'_>> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| PatchLine { no: i + 1, text: l.strip_suffix('\r').unwrap_or(l) })
        .collect();
    let body = unfenced(&lines);
    if body.is_empty() {
        return Err(malformed("the patch is empty; give a unified diff"));
    }
    let mut files = if envelope::is_envelope(&body) {
        envelope::parse(&body)
    } else {
        let mut body = body;
        if body[0].text.starts_with("@@") {
            let no = body[0].no;
            body.splice(0..0, [PatchLine { no, text: "--- a/file" }, PatchLine { no, text: "+++ b/file" }]);
        }
        // This contract patches the one file `path` names and never renames: a `---`/`+++` pair
        // without hunks stays a malformed diff.
        unified::parse(&body, unified::BareRename::Refuse)
    }
    .map_err(|e| malformed(e.message()))?;
    match files.len() {
        1 => Ok(files.remove(0)),
        0 => Err(malformed("the patch changes nothing")),
        n => Err(malformed(&format!(
            "the patch changes {n} files; apply_patch takes a diff for the one file `path` names"
        ))),
    }
}

/// The patch's lines without blank lines around it and without a markdown code fence.
fn unfenced<'a>(lines: &[PatchLine<'a>]) -> Vec<PatchLine<'a>> {
    let blank = |l: &PatchLine<'_>| l.text.trim().is_empty();
    let fence = |l: &PatchLine<'_>| {
        let t = l.text.trim_start();
        t.starts_with("```") || t.starts_with("~~~")
    };
    let mut body: Vec<PatchLine<'a>> = lines.to_vec();
    let trim = |b: &mut Vec<PatchLine<'a>>| {
        while b.first().is_some_and(blank) {
            b.remove(0);
        }
        while b.last().is_some_and(blank) {
            b.pop();
        }
    };
    trim(&mut body);
    if body.first().is_some_and(fence) {
        body.remove(0);
        if body.last().is_some_and(|l| fence(l) && l.text.trim().chars().all(|c| c == '`' || c == '~')) {
            body.pop();
        }
        trim(&mut body);
    }
    body
}

fn malformed(message: &str) -> Error {
    Error::new(ErrorKind::PatchFailed, format!("malformed diff: {message}"))
}

fn failed(path: &str, f: &patch::HunkFailure) -> Error {
    Error::new(ErrorKind::PatchFailed, f.message(path)).with_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patches_for_one_file() {
        // The patch, and what it does (or the start of its error message).
        let table: &[(&str, Result<&str, &str>)] = &[
            ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", Ok("update")),
            ("```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n", Ok("update")),
            ("\n\n~~~\n@@ -1 +1 @@\n-a\n+b\n~~~\n", Ok("update")),
            ("@@ -1 +1 @@\n-a\n+b\n", Ok("update")),
            ("--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+b\n", Ok("add")),
            ("--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", Ok("delete")),
            ("*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\n*** End Patch\n", Ok("update")),
            ("", Err("malformed diff: the patch is empty")),
            ("```\n```\n", Err("malformed diff: the patch is empty")),
            ("hello\n", Err("malformed diff: patch line 1")),
            // The core reads a `---`/`+++` pair without hunks as a rename; this contract never
            // renames, so it stays malformed.
            ("--- a/x\n+++ b/y\n", Err("malformed diff: patch line 2: expected a hunk header")),
            ("--- a/x\n+++ b/x\n", Err("malformed diff: patch line 2: expected a hunk header")),
            (
                "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
                Err("malformed diff: the patch changes 2 files"),
            ),
        ];
        for (patch, want) in table {
            let got = parse_one(patch).map(|f| match f.change {
                FileChange::Add { .. } => "add",
                FileChange::Delete { .. } => "delete",
                FileChange::Update { .. } => "update",
            });
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, *w, "{patch:?}"),
                (Err(e), Err(w)) => {
                    assert_eq!(e.kind(), ErrorKind::PatchFailed, "{patch:?}");
                    assert!(e.message().starts_with(w), "{patch:?}: {}", e.message());
                }
                (got, _) => panic!("{patch:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn bare_hunks_keep_their_line_numbers_in_messages() {
        let e = parse_one("\n@@ -1 +1 @@\n-a\n?b\n").expect_err("malformed");
        assert!(e.message().contains("patch line 4"), "{}", e.message());
    }
}
