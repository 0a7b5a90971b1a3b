//! Patches as values: the two formats models write, parsed into one model, and a matcher that
//! applies one file's hunks to its text.
//!
//! [`parse`] reads either a unified diff (plain or git-style, see [`unified`]) or the
//! `*** Begin Patch` envelope of OpenAI Codex's `apply_patch` (see [`envelope`]), tolerating a
//! markdown code fence around the whole text. Both become a list of [`FilePatch`]es: what happens
//! to each file (add, delete, update, maybe with a move) and its [`Hunk`]s. [`apply_hunks`] then
//! finds each hunk in a text, tolerantly (see [`apply`]), and builds the new text. Nothing here
//! reads files or resolves paths: the `apply_patch` tool does that.

pub mod apply;
pub mod envelope;
mod seek;
pub mod unified;

use crate::error::{Error, Result};

pub use apply::{apply_hunks, apply_hunks_noting, HunkFailure};

/// What a patch does to one file. Paths are as the patch spells them (prefixes like `a/` already
/// stripped), not yet resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Create the file; its text is the hunks applied to an empty text.
    Add {
        /// The new file.
        path: String,
    },
    /// Delete the file; hunks, if any, must remove its whole text.
    Delete {
        /// The file.
        path: String,
    },
    /// Change the file's text by its hunks, and move it when `move_to` is set.
    Update {
        /// The file.
        path: String,
        /// Where the file moves, if it does.
        move_to: Option<String>,
    },
}

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// What happens to the file.
    pub change: FileChange,
    /// The hunks, in the order they apply.
    pub hunks: Vec<Hunk>,
    /// The 1-based line of the patch where this file's header starts, for messages.
    pub line: usize,
}

impl FilePatch {
    /// Every path the file patch names: the file, and the destination of a move.
    pub fn paths(&self) -> Vec<&str> {
        match &self.change {
            FileChange::Add { path } | FileChange::Delete { path } => vec![path],
            FileChange::Update { path, move_to: None } => vec![path],
            FileChange::Update { path, move_to: Some(to) } => vec![path, to],
        }
    }
}

/// The role of one hunk line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A line that stays (` ` prefix).
    Context,
    /// A line that goes (`-` prefix).
    Remove,
    /// A line that comes (`+` prefix).
    Add,
}

/// One line of a hunk, without its prefix and line break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// Context, removed or added.
    pub kind: LineKind,
    /// The line's text.
    pub text: String,
}

/// Where a hunk should be looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Near a stated position: a unified diff's `@@ -a,b` header. `start` is the 0-based index of
    /// the hunk's first old line (for a pure insertion, the index the new lines go in front of);
    /// `stated` is the 1-based line as written, for messages.
    Near {
        /// 0-based index of the first old line, or the insertion index.
        start: usize,
        /// The line number the header states.
        stated: usize,
    },
    /// Anywhere after the previous hunk, the first match winning: a hunk without line numbers
    /// (the envelope format, or a bare `@@`).
    Forward,
}

/// One hunk: a run of context, removed and added lines, and where to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The hunk's header as written (`@@ -10,4 +10,5 @@`, `@@ def f():`), for messages.
    pub header: String,
    /// The 1-based patch line of the header (or of the first hunk line when there is none).
    pub line: usize,
    /// Where to look for it.
    pub placement: Placement,
    /// Lines to find first, in order, each after the one before (the envelope's `@@ def f():`);
    /// the hunk itself is then looked for after the last.
    pub anchors: Vec<String>,
    /// The hunk's lines, in patch order.
    pub lines: Vec<HunkLine>,
    /// The old side ends without a final line break (`\ No newline at end of file`).
    pub old_no_newline: bool,
    /// The new side ends without a final line break.
    pub new_no_newline: bool,
    /// The hunk must match at the end of the file (the envelope's `*** End of File`).
    pub at_eof: bool,
}

impl Hunk {
    /// A hunk of `lines` found by `placement`, with no anchor or end-of-file condition.
    pub fn new(header: impl Into<String>, line: usize, placement: Placement, lines: Vec<HunkLine>) -> Hunk {
        Hunk {
            header: header.into(),
            line,
            placement,
            anchors: Vec::new(),
            lines,
            old_no_newline: false,
            new_no_newline: false,
            at_eof: false,
        }
    }

    /// The lines the hunk expects in the file (context and removed), in order.
    pub fn old_lines(&self) -> impl Iterator<Item = &HunkLine> {
        self.lines.iter().filter(|l| l.kind != LineKind::Add)
    }

    /// The number of added and removed lines.
    pub fn counts(&self) -> (usize, usize) {
        let added = self.lines.iter().filter(|l| l.kind == LineKind::Add).count();
        let removed = self.lines.iter().filter(|l| l.kind == LineKind::Remove).count();
        (added, removed)
    }
}

/// One line of the patch text: its 1-based number and its text without the line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchLine<'a> {
    /// 1-based line number in the patch as given (fence included), for messages.
    pub no: usize,
    /// The text, without `\n` or `\r\n`.
    pub text: &'a str,
}

/// Parses a patch in either format into its file patches, in patch order.
///
/// A markdown code fence around the whole patch and blank lines before or after it are ignored.
/// A unified `---`/`+++` pair with differing paths and no hunks is a pure rename.
/// Fails with `invalid_input` naming the patch line for anything malformed, and for a patch
/// that names no file.
pub fn parse(text: &str) -> Result<Vec<FilePatch>> {
    parse_noting(text, &mut Vec::new())
}

/// [`parse`], accepting the envelope's harmless slips where the intent is certain (see
/// [`envelope`]) and saying each one in `accepted` (`missing *** End Patch`), so that the answer
/// can teach the format.
pub fn parse_noting(text: &str, accepted: &mut Vec<String>) -> Result<Vec<FilePatch>> {
    let all: Vec<PatchLine<'_>> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| PatchLine { no: i + 1, text: l.strip_suffix('\r').unwrap_or(l) })
        .collect();
    let (body, fenced) = strip_fence(trim_blank(&all));
    if body.is_empty() {
        return Err(Error::invalid("`patch` is empty: give a unified diff or a `*** Begin Patch` envelope"));
    }
    // Both parsers refuse a patch without a file section, each in its own format's words.
    if envelope::is_envelope(body) {
        envelope::parse_noting(body, fenced, accepted)
    } else {
        unified::parse(body, unified::BareRename::Rename)
    }
}

/// An `invalid_input` error about patch line `no`.
pub(crate) fn malformed(no: usize, message: impl std::fmt::Display) -> Error {
    Error::invalid(format!("patch line {no}: {message}"))
}

/// A line shown in a message: cut when long, in backticks.
pub(crate) fn quote(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("`{}...`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

/// Drops whitespace-only lines at both ends.
fn trim_blank<'s, 'a>(lines: &'s [PatchLine<'a>]) -> &'s [PatchLine<'a>] {
    let start = lines.iter().position(|l| !l.text.trim().is_empty()).unwrap_or(lines.len());
    let end = lines.iter().rposition(|l| !l.text.trim().is_empty()).map_or(start, |i| i + 1);
    &lines[start..end]
}

/// Drops a markdown code fence (```` ``` ````, ```` ```diff ````, `~~~`) around the patch, and
/// says whether a closing fence ended it (so the patch was not cut short). A fence line is never
/// a valid patch line (every hunk line has a prefix), so this is unambiguous.
fn strip_fence<'s, 'a>(lines: &'s [PatchLine<'a>]) -> (&'s [PatchLine<'a>], bool) {
    let is_fence = |l: &PatchLine<'_>| {
        let t = l.text.trim_start();
        t.starts_with("```") || t.starts_with("~~~")
    };
    let mut body = lines;
    let mut closed = false;
    if body.first().is_some_and(is_fence) {
        body = &body[1..];
        if body.last().is_some_and(|l| is_fence(l) && l.text.trim().chars().all(|c| c == '`' || c == '~')) {
            body = &body[..body.len() - 1];
            closed = true;
        }
    }
    (trim_blank(body), closed)
}

#[cfg(test)]
mod tests;
