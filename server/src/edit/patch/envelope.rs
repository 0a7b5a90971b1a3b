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
//!
//! Slips whose intent is certain are accepted by [`parse_noting`], which names each one for the
//! answer: `*** Begin Patch ***` and `*** End Patch ***`; a missing `*** Begin Patch` when the
//! patch starts with a file header; a missing `*** End Patch` when a closing code fence or heredoc
//! word shows nothing was cut off; `---`/`+++` lines for the same file under `*** Update File:`;
//! context lines without their leading space in a hunk that changes something; a blank line
//! without its `+` between an Add File's lines; the file's lines after `*** Delete File:`.
//! [`parse`] (a contract that takes none) refuses them.

use super::{malformed, quote, FileChange, FilePatch, Hunk, HunkLine, LineKind, PatchLine, Placement};
use crate::error::Result;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF: &str = "*** End of File";

/// Whether the trimmed line is `marker`, perhaps with stars after it (`*** Begin Patch ***`);
/// `Some(true)` when it is exactly the marker.
fn marker(line: &str, marker: &str) -> Option<bool> {
    let t = line.trim();
    if t == marker {
        return Some(true);
    }
    (t.trim_end_matches('*').trim_end() == marker).then_some(false)
}

/// Whether the line starts a file section.
fn is_file_header(line: &str) -> bool {
    let t = line.trim();
    [ADD, DELETE, UPDATE].iter().any(|m| t.starts_with(m))
}

/// Whether the patch is an envelope: it starts with `*** Begin Patch` (perhaps `*** Begin Patch
/// ***`), or with a heredoc line followed by it, or (the `*** Begin Patch` forgotten) with a file
/// header such as `*** Update File: path`.
pub fn is_envelope(lines: &[PatchLine<'_>]) -> bool {
    let first = |i: usize| lines.get(i).is_some_and(|l| marker(l.text, BEGIN).is_some() || is_file_header(l.text));
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

/// Parses an envelope patch, refusing every slip.
pub fn parse(lines: &[PatchLine<'_>]) -> Result<Vec<FilePatch>> {
    let mut accepted = Vec::new();
    let files = parse_noting(lines, false, &mut accepted)?;
    match accepted.first() {
        None => Ok(files),
        Some(slip) => Err(malformed(lines[0].no, format!("the patch is not a strict envelope: {slip}"))),
    }
}

/// Parses an envelope patch, accepting the harmless slips (module docs) and naming each in
/// `accepted`. `closed` says a closing code fence ended the patch, so a missing `*** End Patch`
/// does not mean it was cut short.
pub fn parse_noting(lines: &[PatchLine<'_>], closed: bool, accepted: &mut Vec<String>) -> Result<Vec<FilePatch>> {
    let mut lines = lines;
    let mut closed = closed;
    if let Some(word) = heredoc_word(lines[0].text) {
        lines = &lines[1..];
        if lines.last().is_some_and(|l| l.text.trim() == word) {
            lines = &lines[..lines.len() - 1];
            closed = true;
        }
    }
    let (first, last) = (lines[0], lines[lines.len() - 1]);
    let begins = match marker(first.text, BEGIN) {
        Some(exact) => {
            if !exact {
                accepted.push(format!("{} read as `{BEGIN}`", quote(first.text.trim())));
            }
            1
        }
        None => {
            accepted.push(format!("missing `{BEGIN}` (added before line {})", first.no));
            0
        }
    };
    let ends = match marker(last.text, END).filter(|_| lines.len() > begins) {
        Some(exact) => {
            if !exact {
                accepted.push(format!("{} read as `{END}`", quote(last.text.trim())));
            }
            lines.len() - 1
        }
        // Only a closing fence or heredoc word shows that the patch was not cut off mid-hunk.
        None if closed && lines.len() > begins => {
            accepted.push(format!("missing `{END}` (added after line {})", last.no));
            lines.len()
        }
        None => {
            return Err(malformed(
                last.no,
                format!("the patch must end with `{END}` (it starts with `{BEGIN}` at line {})", first.no),
            ))
        }
    };
    let body = &lines[begins..ends];
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
            let mut blank = 0;
            loop {
                match body.get(i).map(|l| l.text) {
                    Some(text) if text.starts_with('+') => {
                        added.push(HunkLine { kind: LineKind::Add, text: text[1..].to_owned() });
                        i += 1;
                    }
                    // A blank line between the file's lines, its `+` forgotten: the next
                    // non-blank line says whether the file goes on.
                    Some(text) if text.trim().is_empty() && !added.is_empty() => {
                        let next = body[i..].iter().position(|l| !l.text.trim().is_empty());
                        if !next.is_some_and(|n| body[i + n].text.starts_with('+')) {
                            break;
                        }
                        for _ in 0..next.unwrap_or(0) {
                            added.push(HunkLine { kind: LineKind::Add, text: String::new() });
                            i += 1;
                            blank += 1;
                        }
                    }
                    _ => break,
                }
            }
            if blank > 0 {
                accepted.push(format!(
                    "{blank} blank line(s) without `+` in `{ADD} {path}` read as empty lines of the file"
                ));
            }
            let hunks = if added.is_empty() {
                Vec::new()
            } else {
                vec![Hunk::new(format!("{ADD} {path}"), l.no, Placement::Forward, added)]
            };
            files.push(FilePatch { change: FileChange::Add { path }, hunks, line: l.no });
        } else if let Some(path) = marker_path(t, DELETE) {
            let path = path_of(l, path)?;
            i += 1;
            // The file's lines after a Delete File: the file goes, whatever they say.
            let content = body[i..].iter().take_while(|l| !l.text.trim_start().starts_with("***")).count();
            if body[i..i + content].iter().any(|l| !l.text.trim().is_empty()) {
                accepted.push(format!(
                    "the {content} line(s) after `{DELETE} {path}` ignored (Delete File takes no lines)"
                ));
            }
            i += content;
            files.push(FilePatch { change: FileChange::Delete { path }, hunks: Vec::new(), line: l.no });
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
            if let (Some(old), Some(new)) = (body.get(i), body.get(i + 1)) {
                if names_file(old.text, "--- ", &path)
                    && names_file(new.text, "+++ ", move_to.as_deref().unwrap_or(&path))
                {
                    accepted.push(format!(
                        "the `---`/`+++` lines at {} and {} ignored (`{UPDATE}` names the file)",
                        old.no, new.no
                    ));
                    i += 2;
                }
            }
            let (hunks, next) = parse_hunks(body, i, &path, accepted)?;
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

/// Whether `line` is a unified header (`--- a/path`, `+++ b/path`, a tab and timestamp perhaps
/// after it) naming `path`.
fn names_file(line: &str, prefix: &str, path: &str) -> bool {
    let Some(rest) = line.strip_prefix(prefix) else { return false };
    let named = rest.split('\t').next().unwrap_or(rest).trim();
    let bare = named.strip_prefix("a/").or_else(|| named.strip_prefix("b/")).unwrap_or(named);
    named == path || bare == path
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
fn parse_hunks(
    body: &[PatchLine<'_>],
    start: usize,
    path: &str,
    accepted: &mut Vec<String>,
) -> Result<(Vec<Hunk>, usize)> {
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
        let (hunk, next) = parse_hunk(body, i, path, hunks.is_empty(), accepted)?;
        hunks.push(hunk);
        i = next;
    }
    Ok((hunks, i))
}

/// Parses one hunk at `start`: its `@@` lines, then its body.
fn parse_hunk(
    body: &[PatchLine<'_>],
    start: usize,
    path: &str,
    first: bool,
    accepted: &mut Vec<String>,
) -> Result<(Hunk, usize)> {
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
    // Context lines written without their leading space: the first, for the error when the hunk
    // turns out to change nothing, and how many.
    let mut unprefixed: (Option<PatchLine<'_>>, usize) = (None, 0);
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
            // The next hunk, or the next section.
            Some(_) if t.starts_with("@@") || t.trim_start().starts_with("***") => break,
            Some(_) => {
                unprefixed = (unprefixed.0.or(Some(*l)), unprefixed.1 + 1);
                (LineKind::Context, t)
            }
        };
        bare.push(t.is_empty());
        hunk.lines.push(HunkLine { kind, text: text.to_owned() });
        i += 1;
    }
    if let (Some(l), n) = unprefixed {
        if hunk.lines.iter().all(|l| l.kind == LineKind::Context) {
            return Err(malformed(
                l.no,
                format!(
                    "unexpected line in a hunk of {path}: {}; every hunk line starts with ' ' (context), \
                     '-' (removed) or '+' (added)",
                    quote(l.text)
                ),
            ));
        }
        accepted
            .push(format!("{n} context line(s) without their leading space in a hunk of {path} (from line {})", l.no));
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
