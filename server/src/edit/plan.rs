//! `EditPlan`: every change a tool wants, as a value.
//!
//! A tool computes a plan against the texts it read through the [`Vfs`](crate::vfs::Vfs) and
//! returns it; a sink (disk or editor) applies it, all or nothing. A text edit carries the exact
//! base text it was computed against, so a sink can refuse to apply it at a stale offset.

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use similar::{Algorithm, DiffOp, TextDiff};

use crate::error::{Error, ErrorKind, Result};
use crate::text::{Encoding, Offset, SharedText};
use crate::vfs::{FileText, Origin};
use crate::workspace::SandboxPath;

/// One replacement in a text: the bytes in `range` (of the base text) become `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    /// The replaced range, in byte offsets of the base text.
    pub range: Range<Offset>,
    /// The new text.
    pub text: String,
}

impl TextChange {
    /// Replaces `start..end` (byte offsets) with `text`.
    pub fn new(start: usize, end: usize, text: impl Into<String>) -> TextChange {
        TextChange { range: Offset::new(start)..Offset::new(end), text: text.into() }
    }
}

/// The text a file edit was computed against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The whole base text, shared, never copied per change: a file's string is taken over, an
    /// open buffer's rope shared with the store.
    pub text: SharedText,
    /// The encoding of the file, kept when writing back.
    pub encoding: Encoding,
    /// Whether the file has a BOM, kept when writing back.
    pub bom: bool,
    /// Buffer (with its version) or disk.
    pub origin: Origin,
}

impl From<FileText> for Base {
    fn from(f: FileText) -> Base {
        Base { text: SharedText::from(f.text), encoding: f.encoding, bom: f.bom, origin: f.origin }
    }
}

impl From<FileText<SharedText>> for Base {
    fn from(f: FileText<SharedText>) -> Base {
        Base { text: f.text, encoding: f.encoding, bom: f.bom, origin: f.origin }
    }
}

/// One operation of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Change an existing text file.
    Edit {
        /// The file.
        path: SandboxPath,
        /// The text the changes were computed against.
        base: Base,
        /// Sorted, non-overlapping changes to `base`.
        changes: Vec<TextChange>,
    },
    /// Create a file (and its missing parent directories), or replace one when `overwrite`.
    Create {
        /// The new file.
        path: SandboxPath,
        /// Its text (written as UTF-8 without BOM).
        text: String,
        /// Replace an existing file instead of failing.
        overwrite: bool,
        /// The permission bits of a new file (`None`: the default, 0666 less the umask); a
        /// replaced file keeps its own. Undoing a delete restores the old bits with it.
        mode: Option<u32>,
    },
    /// Rename (move) a file or directory.
    Rename {
        /// What moves.
        from: SandboxPath,
        /// Where it goes.
        to: SandboxPath,
        /// Replace an existing destination instead of failing.
        overwrite: bool,
    },
    /// Delete a file, or a directory (with everything in it when `recursive`).
    Delete {
        /// What goes.
        path: SandboxPath,
        /// Delete a non-empty directory with its contents.
        recursive: bool,
    },
    /// Create a directory and its missing parents.
    Mkdir {
        /// The directory.
        path: SandboxPath,
    },
}

impl FileOp {
    /// The path the operation is about (the source, for a rename).
    pub fn path(&self) -> &SandboxPath {
        match self {
            FileOp::Edit { path, .. }
            | FileOp::Create { path, .. }
            | FileOp::Delete { path, .. }
            | FileOp::Mkdir { path } => path,
            FileOp::Rename { from, .. } => from,
        }
    }
}

/// A set of changes to apply together, all or nothing, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditPlan {
    /// The operations, applied in order.
    pub ops: Vec<FileOp>,
}

impl EditPlan {
    /// A plan of one operation.
    pub fn one(op: FileOp) -> EditPlan {
        EditPlan { ops: vec![op] }
    }

    /// A plan that edits `base` of `path` into `new_text`. Returns an empty plan when nothing
    /// changes.
    ///
    /// An editor buffer gets the minimal set of changes, so that its undo history, cursors and
    /// marks see only what changed; a file on disk, which is rewritten whole anyway, gets the
    /// one change between the common prefix and suffix, which costs a single scan.
    pub fn edit_to(path: SandboxPath, base: Base, new_text: &str) -> EditPlan {
        let changes = match base.origin {
            Origin::Buffer { .. } => minimal_changes(&base.text.to_str(), new_text),
            Origin::Disk => middle_change(&base.text.to_str(), new_text).into_iter().collect(),
        };
        if changes.is_empty() {
            return EditPlan::default();
        }
        EditPlan::one(FileOp::Edit { path, base, changes })
    }

    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Checks that every text edit is well formed: changes sorted, not overlapping, inside the
    /// base text and on char boundaries; the file editable; and no path edited twice.
    pub fn validate(&self) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        for op in &self.ops {
            if let FileOp::Edit { path, base, changes } = op {
                if !seen.insert(path.real().to_path_buf()) {
                    return Err(Error::invalid(format!("{path}: the plan edits this file twice")));
                }
                if !base.encoding.is_editable() {
                    return Err(Error::new(
                        ErrorKind::IsBinary,
                        format!("{path}: file is {}, which tether reads but does not edit", base.encoding),
                    )
                    .with_path(path.given()));
                }
                validate_shared_changes(&base.text, changes).map_err(|m| Error::invalid(format!("{path}: {m}")))?;
            }
        }
        Ok(())
    }

    /// A unified diff of every text change and a line per other operation, for dry runs and
    /// summaries. Paths are shown as the user gave them.
    pub fn render_diff(&self) -> String {
        let mut out = String::new();
        for op in &self.ops {
            match op {
                FileOp::Edit { path, base, changes } => {
                    let old = base.text.to_str();
                    let new = apply_changes(&old, changes);
                    out.push_str(&unified_diff(path.given(), &old, &new));
                }
                FileOp::Create { path, text, .. } => out.push_str(&unified_diff(path.given(), "", text)),
                FileOp::Rename { from, to, .. } => {
                    let _ = writeln!(out, "rename {} -> {}", from.given(), to.given());
                }
                FileOp::Delete { path, .. } => {
                    let _ = writeln!(out, "delete {}", path.given());
                }
                FileOp::Mkdir { path } => {
                    let _ = writeln!(out, "mkdir {}", path.given());
                }
            }
        }
        out
    }
}

/// Checks changes against their base: sorted, non-overlapping, in range, on char boundaries.
pub fn validate_changes(base: &str, changes: &[TextChange]) -> Result<(), String> {
    check_changes(base.len(), |i| base.is_char_boundary(i), changes)
}

/// [`validate_changes`] for a shared text (an open buffer's rope, say), read in place.
pub fn validate_shared_changes(base: &SharedText, changes: &[TextChange]) -> Result<(), String> {
    check_changes(base.len(), |i| base.is_char_boundary(i), changes)
}

/// [`validate_changes`] for a text of `len` bytes whose char boundaries `is_boundary` tells.
fn check_changes(len: usize, is_boundary: impl Fn(usize) -> bool, changes: &[TextChange]) -> Result<(), String> {
    let mut prev_end = 0;
    for (i, c) in changes.iter().enumerate() {
        let (start, end) = (c.range.start.get(), c.range.end.get());
        if start > end {
            return Err(format!("change {i} has its start ({start}) after its end ({end})"));
        }
        if end > len {
            return Err(format!("change {i} ends at byte {end}, past the end of the text ({len} bytes)"));
        }
        if !is_boundary(start) || !is_boundary(end) {
            return Err(format!("change {i} does not start and end on character boundaries"));
        }
        if i > 0 && start < prev_end {
            return Err(format!("change {i} overlaps or precedes the change before it"));
        }
        prev_end = end;
    }
    Ok(())
}

/// Applies sorted, validated changes to `base`.
pub fn apply_changes(base: &str, changes: &[TextChange]) -> String {
    let added: usize = changes.iter().map(|c| c.text.len()).sum();
    let mut out = String::with_capacity(base.len() + added);
    let mut at = 0;
    for c in changes {
        out.push_str(&base[at..c.range.start.get()]);
        out.push_str(&c.text);
        at = c.range.end.get();
    }
    out.push_str(&base[at..]);
    out
}

/// How long [`minimal_changes`] searches for the smallest diff. Myers' algorithm costs time in
/// proportion to the size times the number of differences, so two large texts that differ on
/// every line (a whole file rewritten) would take seconds; past this, the rest of the middle
/// becomes one replacement, which is still correct, only less minimal.
pub const MINIMAL_CHANGES_TIMEOUT: Duration = Duration::from_millis(50);

/// The minimal set of changes turning `old` into `new`: the common prefix and suffix are cut
/// first (so a one-line change in a large file costs one scan), then the middle is diffed by
/// lines, and each changed line run becomes one change.
pub fn minimal_changes(old: &str, new: &str) -> Vec<TextChange> {
    let Some(middle) = middle_change(old, new) else {
        return Vec::new();
    };
    if middle.range.end.get() - middle.range.start.get() + middle.text.len() < 2 * 1024 {
        // A small middle (the usual single edit) is already minimal enough to send as is.
        return vec![middle];
    }
    let prefix = middle.range.start.get();
    let suffix = old.len() - middle.range.end.get();
    // Widen to whole lines so the diff below works on complete lines.
    let start = old[..prefix].rfind('\n').map_or(0, |i| i + 1);
    let old_mid = &old[start..old.len() - suffix];
    let new_mid = &new[start..new.len() - suffix];
    let diff =
        TextDiff::configure().algorithm(Algorithm::Myers).timeout(MINIMAL_CHANGES_TIMEOUT).diff_lines(old_mid, new_mid);
    let new_lines: Vec<&str> = diff.new_slices().to_vec();
    // Byte offset of each old line (and of the end), so each op's range is one lookup.
    let old_starts: Vec<usize> = std::iter::once(0)
        .chain(diff.old_slices().iter().scan(0, |at, l| {
            *at += l.len();
            Some(*at)
        }))
        .collect();
    let mut changes: Vec<TextChange> = Vec::new();
    for op in diff.ops() {
        if let DiffOp::Equal { .. } = op {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        let s = start + old_starts[o.start];
        let e = start + old_starts[o.end];
        let text: String = new_lines[n].concat();
        match changes.last_mut() {
            Some(last) if last.range.end.get() == s => {
                last.range.end = Offset::new(e);
                last.text.push_str(&text);
            }
            _ => changes.push(TextChange::new(s, e, text)),
        }
    }
    changes
}

/// The one change that replaces what lies between the common prefix and the common suffix of
/// `old` and `new`; `None` when they are equal.
pub fn middle_change(old: &str, new: &str) -> Option<TextChange> {
    if old == new {
        return None;
    }
    let prefix = common_prefix_len(old, new);
    let suffix = common_suffix_len(&old[prefix..], &new[prefix..]);
    Some(TextChange::new(prefix, old.len() - suffix, &new[prefix..new.len() - suffix]))
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Back off to a char boundary of both (they agree up to n, so one check suffices).
    (0..=n).rev().find(|&i| a.is_char_boundary(i)).unwrap_or(0)
}

fn common_suffix_len(a: &str, b: &str) -> usize {
    let n = a.bytes().rev().zip(b.bytes().rev()).take_while(|(x, y)| x == y).count();
    (0..=n).rev().find(|&i| a.is_char_boundary(a.len() - i)).unwrap_or(0)
}

/// A unified diff of `old` and `new` for `name`, three lines of context; empty when equal.
pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let diff = TextDiff::from_lines(old, new);
    let mut udiff = diff.unified_diff();
    udiff.context_radius(3).header(&format!("a/{name}"), &format!("b/{name}"));
    udiff.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_changes_round_trip() {
        let table = [
            ("", "new\n"),
            ("old\n", ""),
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb\nc\n", "a\nb\nc\nd\n"),
            ("a\nb\nc", "x\nb\ny"),
            ("a\r\nb\r\n", "a\r\nc\r\n"),
            ("\u{1F600}x\u{4E2D}\n", "\u{1F600}y\u{4E2D}\n"),
            ("same\n", "same\n"),
            ("one line no newline", "one line no newline\n"),
        ];
        for (old, new) in table {
            let changes = minimal_changes(old, new);
            validate_changes(old, &changes).expect("valid");
            assert_eq!(apply_changes(old, &changes), new, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn one_line_change_in_a_large_text_is_one_small_change() {
        let old: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        let new = old.replacen("line 50000\n", "line fifty thousand\n", 1);
        let changes = minimal_changes(&old, &new);
        assert_eq!(changes.len(), 1);
        assert!(changes[0].text.len() < 64, "{:?}", changes[0]);
        assert_eq!(apply_changes(&old, &changes), new);
    }

    #[test]
    fn a_text_differing_on_every_line_is_diffed_quickly() {
        let old: String = (0..20_000).map(|i| format!("old line {i}\n")).collect();
        let new: String = (0..20_000).map(|i| format!("new line {i}\n")).collect();
        let start = std::time::Instant::now();
        let changes = minimal_changes(&old, &new);
        // Generous against a loaded machine; without the timeout this takes seconds even in release.
        assert!(start.elapsed() < MINIMAL_CHANGES_TIMEOUT * 20, "{:?}", start.elapsed());
        validate_changes(&old, &changes).expect("valid");
        assert_eq!(apply_changes(&old, &changes), new);
    }

    #[test]
    fn validator_refuses_bad_changes() {
        let base = "h\u{e9}llo";
        let bad = [
            vec![TextChange::new(3, 2, "")],
            vec![TextChange::new(0, 99, "")],
            vec![TextChange::new(2, 2, "")], // inside the two-byte é
            vec![TextChange::new(0, 3, ""), TextChange::new(1, 4, "")],
            vec![TextChange::new(4, 5, ""), TextChange::new(0, 1, "")],
        ];
        for changes in bad {
            assert!(validate_changes(base, &changes).is_err(), "{changes:?}");
        }
        assert!(validate_changes(base, &[TextChange::new(0, 1, "H"), TextChange::new(1, 1, "")]).is_ok());
    }

    #[test]
    fn renders_unified_diff() {
        let d = unified_diff("f.txt", "a\nb\n", "a\nc\n");
        assert_eq!(d, "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    }
}
