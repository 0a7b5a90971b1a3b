//! The `*** Begin Patch` envelope of OpenAI Codex's `apply_patch`, which several assistants emit.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: hello.txt
//! +Hello world
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -print("Hi")
//! +print("Hello, world!")
//! *** Delete File: obsolete.txt
//! *** End Patch
//! ```
//!
//! The rules follow Codex's parser (`codex-rs/apply-patch/src/parser.rs`), lenient where it is:
//! markers may carry surrounding whitespace; a heredoc wrapper (`<<'EOF'` ... `EOF`) is dropped;
//! an Add File's content is the run of `+` lines after it (each ending in a line break); an Update
//! File is followed by an optional `*** Move to:` and hunks, blank lines between hunks are
//! skipped, and a line starting with `*` ends the file's hunks. A hunk starts with `@@` or
//! `@@ anchor` (the first hunk may omit it); its lines start with ` `, `-` or `+`, an empty line
//! is an empty context line, and `*** End of File` ends the hunk and makes it match at the end of
//! the file. Any other line ends the hunk.
//!
//! Beyond Codex: several `@@ anchor` lines in a row are found one after the other (Codex's prompt
//! describes this; its parser refuses it); an anchor that reads like a unified hunk range
//! (`@@ -10,4 +10,5 @@`) is taken as a line number; a pure addition with an anchor goes right
//! after the anchor line (Codex appends it to the file); an Update File with only a `Move to` is
//! a plain rename; trailing blank lines of a hunk before the next `***` line are separators.

use super::{malformed, quote, FileChange, FilePatch, Hunk, HunkLine, LineKind, PatchLine, Placement};
use crate::error::Result;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF: &str = "*** End of File";

/// Whether the patch is an envelope: it starts with `*** Begin Patch`, or with a heredoc line
/// followed by it.
pub fn is_envelope(lines: &[PatchLine<'_>]) -> bool {
    let first = |i: usize| lines.get(i).is_some_and(|l| l.text.trim() == BEGIN);
    first(0) || (heredoc_word(lines[0].text).is_some() && first(1))
}

/// The word closing a heredoc opened by `line` (`<<EOF`, `<<'EOF'`, `apply_patch <<"EOF"`).
fn heredoc_word(line: &str) -> Option<&str> {
    let t = line.trim();
    let rest = t.strip_prefix("apply_patch").or_else(|| t.strip_prefix("applypatch")).unwrap_or(t).trim_start();
    let word = rest.strip_prefix("<<")?.trim_start_matches('-').trim();
    let word = word.trim_matches(|c| c == '\'' || c == '"');
    (!word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')).then_some(word)
}

/// Parses an envelope patch.
pub fn parse(lines: &[PatchLine<'_>]) -> Result<Vec<FilePatch>> {
    let mut lines = lines;
    if let Some(word) = heredoc_word(lines[0].text) {
        lines = &lines[1..];
        if lines.last().is_some_and(|l| l.text.trim() == word) {
            lines = &lines[..lines.len() - 1];
        }
    }
    let (first, last) = (lines[0], lines[lines.len() - 1]);
    if lines.len() < 2 || last.text.trim() != END {
        return Err(malformed(
            last.no,
            format!("the patch must end with `{END}` (it starts with `{BEGIN}` at line {})", first.no),
        ));
    }
    let body = &lines[1..lines.len() - 1];
    let mut files = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let l = body[i];
        let t = l.text.trim();
        if t.is_empty() {
            i += 1;
        } else if let Some(path) = marker_path(t, ADD) {
            let path = path_of(l, path)?;
            i += 1;
            let mut added = Vec::new();
            while let Some(text) = body.get(i).and_then(|l| l.text.strip_prefix('+')) {
                added.push(HunkLine { kind: LineKind::Add, text: text.to_owned() });
                i += 1;
            }
            let hunks = if added.is_empty() {
                Vec::new()
            } else {
                vec![Hunk::new(format!("{ADD} {path}"), l.no, Placement::Forward, added)]
            };
            files.push(FilePatch { change: FileChange::Add { path }, hunks, line: l.no });
        } else if let Some(path) = marker_path(t, DELETE) {
            files.push(FilePatch {
                change: FileChange::Delete { path: path_of(l, path)? },
                hunks: Vec::new(),
                line: l.no,
            });
            i += 1;
        } else if let Some(path) = marker_path(t, UPDATE) {
            let path = path_of(l, path)?;
            i += 1;
            let mut move_to = None;
            if let Some(m) = body.get(i) {
                if let Some(to) = marker_path(m.text.trim(), MOVE) {
                    move_to = Some(path_of(*m, to)?);
                    i += 1;
                }
            }
            let (hunks, next) = parse_hunks(body, i, &path)?;
            if hunks.is_empty() && move_to.is_none() {
                return Err(malformed(
                    l.no,
                    format!("`{UPDATE} {path}` has no hunks; add `@@` hunks, or `{MOVE} path` to rename it"),
                ));
            }
            i = next;
            files.push(FilePatch { change: FileChange::Update { path, move_to }, hunks, line: l.no });
        } else {
            return Err(malformed(
                l.no,
                format!("{} is not a file header; use `{ADD} path`, `{DELETE} path` or `{UPDATE} path`", quote(l.text)),
            ));
        }
    }
    if files.is_empty() {
        return Err(malformed(
            first.no,
            format!(
                "the patch has no file sections between `{BEGIN}` and `{END}`; add at least one \
                 `{ADD} path`, `{UPDATE} path` or `{DELETE} path`"
            ),
        ));
    }
    Ok(files)
}

/// The path after `marker` in a trimmed line, if the line is that marker.
fn marker_path<'a>(t: &'a str, marker: &str) -> Option<&'a str> {
    t.strip_prefix(marker).map(str::trim)
}

fn path_of(l: PatchLine<'_>, path: &str) -> Result<String> {
    if path.is_empty() {
        return Err(malformed(l.no, format!("{} names no path", quote(l.text.trim()))));
    }
    Ok(path.to_owned())
}

/// Parses the hunks of an Update File from `start`; returns them and the index after them.
fn parse_hunks(body: &[PatchLine<'_>], start: usize, path: &str) -> Result<(Vec<Hunk>, usize)> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut i = start;
    while i < body.len() {
        let t = body[i].text;
        if t.trim().is_empty() {
            i += 1;
            continue;
        }
        if t.starts_with('*') && t.trim() != EOF {
            break;
        }
        let (hunk, next) = parse_hunk(body, i, path, hunks.is_empty())?;
        hunks.push(hunk);
        i = next;
    }
    Ok((hunks, i))
}

/// Parses one hunk at `start`: its `@@` lines, then its body.
fn parse_hunk(body: &[PatchLine<'_>], start: usize, path: &str, first: bool) -> Result<(Hunk, usize)> {
    let mut i = start;
    let mut anchors = Vec::new();
    let mut placement = Placement::Forward;
    let mut header = String::new();
    while let Some(l) = body.get(i) {
        let t = l.text.trim_end();
        let anchor = if t == "@@" {
            None
        } else if let Some(a) = t.strip_prefix("@@ ") {
            Some(a)
        } else {
            break;
        };
        if header.is_empty() {
            header = t.to_owned();
        } else {
            header = format!("{header} / {t}");
        }
        match anchor.map(|a| (a, unified_range(a))) {
            Some((_, Some(line))) => placement = Placement::Near { start: line.saturating_sub(1), stated: line },
            Some((a, None)) if !a.trim().is_empty() => anchors.push(a.to_owned()),
            _ => {}
        }
        i += 1;
    }
    let line = body[start].no;
    if i == start && !first {
        return Err(malformed(
            line,
            format!(
                "expected `@@` to start the next hunk of {path}, found {}; hunk lines start with ' ', '-' or '+'",
                quote(body[start].text)
            ),
        ));
    }
    if header.is_empty() {
        header = "@@".to_owned();
    }
    let mut hunk = Hunk::new(header, line, placement, Vec::new());
    hunk.anchors = anchors;
    let mut bare = Vec::new();
    while let Some(l) = body.get(i) {
        let t = l.text;
        if t.trim() == EOF {
            hunk.at_eof = true;
            i += 1;
            break;
        }
        let (kind, text) = match t.as_bytes().first() {
            None => (LineKind::Context, ""),
            Some(b' ') => (LineKind::Context, &t[1..]),
            Some(b'-') => (LineKind::Remove, &t[1..]),
            Some(b'+') => (LineKind::Add, &t[1..]),
            Some(_) if !hunk.lines.is_empty() => break,
            Some(_) => {
                return Err(malformed(
                    l.no,
                    format!(
                        "unexpected line in a hunk of {path}: {}; every hunk line starts with ' ' (context), \
                         '-' (removed) or '+' (added)",
                        quote(t)
                    ),
                ))
            }
        };
        bare.push(t.is_empty());
        hunk.lines.push(HunkLine { kind, text: text.to_owned() });
        i += 1;
    }
    // Blank lines before the next `***` line separate sections; they are not context.
    if !hunk.at_eof {
        while bare.pop() == Some(true) {
            hunk.lines.pop();
        }
    }
    if hunk.lines.is_empty() {
        return Err(malformed(line, format!("a hunk of {path} has no lines")));
    }
    Ok((hunk, i))
}

/// The old start line of a unified hunk range (`-10,4 +10,5 @@`) written as an anchor.
fn unified_range(anchor: &str) -> Option<usize> {
    let rest = anchor.trim().strip_prefix('-')?;
    let (old, new) = rest.split_once(' ')?;
    let new = new.trim_start().strip_prefix('+')?;
    let num = |r: &str| r.split(',').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let new_range = new.split([' ', '@']).next()?;
    if !num(old) || !num(new_range) {
        return None;
    }
    old.split(',').next()?.parse().ok()
}
