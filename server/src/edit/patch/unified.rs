//! Unified diffs: `diff -u`, `git diff` and what models make of them.
//!
//! A file section starts with `diff --git a/x b/x` (then git's extended headers: `index`,
//! `new file mode`, `deleted file mode`, `rename from`/`rename to`, `similarity index`, ...)
//! and/or a `--- a/x` / `+++ b/x` pair. `a/` and `b/` prefixes are stripped, a tab and what
//! follows it (a timestamp) is dropped, and git's quoted paths are unquoted. `/dev/null` on the
//! old side creates the file, on the new side deletes it; differing paths rename it. A `---` /
//! `+++` pair with differing paths and no hunks is a pure rename that keeps the file's bytes, or
//! malformed, as the caller says ([`BareRename`]).
//!
//! Hunk counts are not trusted: models miscount, so a hunk's body is every line that looks like
//! one (` `, `-`, `+`, `\`, or empty) up to the next header, and the counts only decide whether a
//! trailing blank line belongs to the hunk and whether a `--- x` line followed by `+++ y` starts
//! a new file or removes a line that reads `-- x` (and adds one that reads `++ y`): it starts a
//! new file when the counts are met, or when a hunk follows and the two lines do not both complete
//! the counts and lead to a hunk further down the same file.

use super::{malformed, quote, FileChange, FilePatch, Hunk, HunkLine, LineKind, PatchLine, Placement};
use crate::error::Result;

const DEV_NULL: &str = "/dev/null";

/// How a `---` / `+++` pair with differing paths and no hunks is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareRename {
    /// As a pure rename that keeps the file's bytes (the coder contract's reading).
    Rename,
    /// As a malformed section: a hunk header is missing (for a diff onto one named file).
    Refuse,
}

/// Parses a unified diff over one or more files.
pub fn parse(lines: &[PatchLine<'_>], bare: BareRename) -> Result<Vec<FilePatch>> {
    let mut files = Vec::new();
    let mut mode_only = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.text;
        if t.trim().is_empty() || is_ignorable_header(t) {
            i += 1;
        } else if t.starts_with("diff --git ") || t.starts_with("--- ") {
            let (file, next) = parse_section(lines, i, bare)?;
            mode_only |= file.is_none();
            files.extend(file);
            i = next;
        } else if t.starts_with("@@") {
            return Err(malformed(
                l.no,
                "hunk header before any file header; start each file with `--- a/path` and `+++ b/path` lines",
            ));
        } else {
            return Err(malformed(
                l.no,
                format!(
                    "expected a file header (`diff --git a/path b/path`, or `--- a/path` then `+++ b/path`) \
                     or a patch starting with `*** Begin Patch`, found {}",
                    quote(t)
                ),
            ));
        }
    }
    if files.is_empty() {
        let no = lines.first().map_or(1, |l| l.no);
        return Err(if mode_only {
            malformed(no, "the patch only changes file modes, and file mode changes are not applied")
        } else {
            malformed(no, "the patch has no file sections; start each file with `--- a/path` and `+++ b/path` lines")
        });
    }
    Ok(files)
}

/// Lines between sections that carry nothing: `Index:` and `=====` from svn or cvs, and the
/// command line of a plain `diff -u a b`.
fn is_ignorable_header(t: &str) -> bool {
    t.starts_with("Index: ")
        || (t.len() >= 4 && t.chars().all(|c| c == '='))
        || (t.starts_with("diff ") && !t.starts_with("diff --git "))
}

/// Whether `t` is a blank line or the first line of a file section.
fn starts_section(t: &str) -> bool {
    t.trim().is_empty() || is_ignorable_header(t) || t.starts_with("diff --git ") || t.starts_with("--- ")
}

/// What one file section's headers say.
#[derive(Default)]
struct Headers {
    git: Option<(String, String)>,
    old: Option<String>,
    new: Option<String>,
    new_file: bool,
    deleted: bool,
    rename_from: Option<String>,
    rename_to: Option<String>,
    mode_change: bool,
}

/// Parses one file section starting at `start`; returns its file patch (none for a mode-only
/// change) and the index of the first line after it.
fn parse_section(lines: &[PatchLine<'_>], start: usize, bare: BareRename) -> Result<(Option<FilePatch>, usize)> {
    let mut h = Headers::default();
    let mut i = start;
    let no = lines[start].no;
    if let Some(rest) = lines[i].text.strip_prefix("diff --git ") {
        h.git = split_git_paths(rest);
        i += 1;
        while i < lines.len() {
            let t = lines[i].text;
            if let Some(p) = t.strip_prefix("rename from ").or_else(|| t.strip_prefix("rename old ")) {
                h.rename_from = Some(unquote(p));
            } else if let Some(p) = t.strip_prefix("rename to ").or_else(|| t.strip_prefix("rename new ")) {
                h.rename_to = Some(unquote(p));
            } else if t.starts_with("new file mode") {
                h.new_file = true;
            } else if t.starts_with("deleted file mode") {
                h.deleted = true;
            } else if t.starts_with("old mode ") || t.starts_with("new mode ") {
                h.mode_change = true;
            } else if t.starts_with("copy from ") || t.starts_with("copy to ") {
                return Err(malformed(
                    lines[i].no,
                    "copies are not supported; write the copy as a new file (`--- /dev/null`)",
                ));
            } else if t.starts_with("Binary files ") || t.starts_with("GIT binary patch") {
                return Err(malformed(lines[i].no, "binary patches are not supported"));
            } else if !(t.starts_with("index ")
                || t.starts_with("similarity index ")
                || t.starts_with("dissimilarity index "))
            {
                break;
            }
            i += 1;
        }
    }
    if i < lines.len() && lines[i].text.starts_with("--- ") {
        h.old = Some(header_path(&lines[i].text[4..]));
        i += 1;
        match lines.get(i) {
            Some(l) if l.text.starts_with("+++ ") => h.new = Some(header_path(&l.text[4..])),
            Some(l) => {
                return Err(malformed(
                    l.no,
                    format!("expected `+++ b/path` after the `---` line, found {}", quote(l.text)),
                ))
            }
            None => return Err(malformed(lines[i - 1].no, "the patch ends after a `---` line; expected `+++ b/path`")),
        }
        i += 1;
    }
    let mut hunks = Vec::new();
    while i < lines.len() && lines[i].text.starts_with("@@") {
        let (hunk, next) = parse_hunk(lines, i)?;
        hunks.push(hunk);
        i = next;
    }
    if h.old.is_some() && hunks.is_empty() && h.rename_to.is_none() && !h.new_file && !h.deleted {
        // `--- a/x` / `+++ b/y` and nothing else (the patch ends, or the next file starts) renames
        // x to y and keeps its bytes; with the same path on both sides it would do nothing.
        let section_ends = lines.get(i).is_none_or(|l| starts_section(l.text));
        let renames = matches!(change_of(&h, no), Ok(Some(FileChange::Update { move_to: Some(_), .. })));
        if !(bare == BareRename::Rename && section_ends && renames) {
            let at = lines.get(i).map_or(lines[i - 1].no, |l| l.no);
            return Err(malformed(at, "expected a hunk header (`@@ -a,b +c,d @@`) after the `+++` line"));
        }
    }
    let change = change_of(&h, no)?;
    let Some(change) = change else { return Ok((None, i)) };
    Ok((Some(FilePatch { change, hunks, line: no }), i))
}

/// Decides what a section does from its headers. `None` for a git section that only changes the
/// file mode: there is nothing to apply.
fn change_of(h: &Headers, no: usize) -> Result<Option<FileChange>> {
    let git = h.git.is_some();
    let (old, new) = strip_prefixes(h.old.as_deref(), h.new.as_deref(), git);
    let added = h.new_file || old.as_deref() == Some(DEV_NULL);
    let deleted = h.deleted || new.as_deref() == Some(DEV_NULL);
    let real = |p: Option<String>| p.filter(|p| p != DEV_NULL);
    let (git_old, git_new) = match &h.git {
        Some((a, b)) => (Some(strip(a, "a/")), Some(strip(b, "b/"))),
        None => (None, None),
    };
    let old = h.rename_from.clone().or(real(old)).or(git_old);
    let new = h.rename_to.clone().or(real(new)).or(git_new);
    let need =
        |p: Option<String>| p.filter(|p| !p.is_empty()).ok_or_else(|| malformed(no, "cannot tell the file's path"));
    Ok(Some(match (added, deleted) {
        (true, true) => return Err(malformed(no, "the section both creates and deletes its file")),
        (true, false) => FileChange::Add { path: need(new.or(old))? },
        (false, true) => FileChange::Delete { path: need(old.or(new))? },
        (false, false) => {
            let path = need(old.clone().or(new.clone()))?;
            let to = new.filter(|n| *n != path);
            if to.is_none() && h.old.is_none() && h.mode_change {
                return Ok(None);
            }
            FileChange::Update { path, move_to: to }
        }
    }))
}

/// Strips git's `a/` and `b/` prefixes: always in a `diff --git` section, and in a plain diff when
/// both sides carry them (or the other side is `/dev/null`).
fn strip_prefixes(old: Option<&str>, new: Option<&str>, git: bool) -> (Option<String>, Option<String>) {
    let null_or = |p: Option<&str>, prefix: &str| p.is_none_or(|p| p == DEV_NULL || p.starts_with(prefix));
    let strip_a = git || (old.is_some_and(|p| p.starts_with("a/")) && null_or(new, "b/"));
    let strip_b = git || (new.is_some_and(|p| p.starts_with("b/")) && null_or(old, "a/"));
    let old = old.map(|p| if strip_a { strip(p, "a/") } else { p.to_owned() });
    let new = new.map(|p| if strip_b { strip(p, "b/") } else { p.to_owned() });
    (old, new)
}

fn strip(p: &str, prefix: &str) -> String {
    p.strip_prefix(prefix).unwrap_or(p).to_owned()
}

/// The path of a `---` or `+++` line: unquoted, without a tab and timestamp after it.
fn header_path(rest: &str) -> String {
    let rest = rest.trim_start();
    if rest.starts_with('"') {
        return unquote(rest);
    }
    rest.split('\t').next().unwrap_or("").trim_end().to_owned()
}

/// Splits `a/x b/y` of a `diff --git` line. With unquoted paths containing spaces the split is
/// ambiguous; git writes the same path twice then, which picks the split.
fn split_git_paths(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim();
    if rest.starts_with('"') {
        let end = closing_quote(rest)?;
        let (a, b) = rest.split_at(end + 1);
        return Some((unquote(a), unquote(b.trim_start())));
    }
    let splits: Vec<usize> = rest.match_indices(" b/").map(|(i, _)| i).collect();
    let at = splits
        .iter()
        .copied()
        .find(|&i| rest[..i].strip_prefix("a/") == Some(&rest[i + 3..]))
        .or_else(|| splits.first().copied())
        .or_else(|| rest.find(' '))?;
    let (a, b) = rest.split_at(at);
    Some((a.to_owned(), unquote(b.trim_start())))
}

/// The byte index of the quote closing the C-style string that `s` starts with.
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i),
            _ => {}
        }
    }
    None
}

/// Undoes git's C-style quoting of a path (`"a/sp\303\251cial \"name\""`); other text is
/// returned as is.
fn unquote(s: &str) -> String {
    let s = s.trim_end();
    let Some(end) = s.starts_with('"').then(|| closing_quote(s)).flatten() else {
        return s.to_owned();
    };
    let inner = &s.as_bytes()[1..end];
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        i += 1;
        if b != b'\\' || i >= inner.len() {
            out.push(b);
            continue;
        }
        let e = inner[i];
        i += 1;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'v' => out.push(0x0b),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                let mut n = 1;
                while n < 3 && i < inner.len() && (b'0'..=b'7').contains(&inner[i]) {
                    v = v * 8 + u32::from(inner[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(u8::try_from(v & 0xff).unwrap_or(b'?'));
            }
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The numbers of a `@@ -a,b +c,d @@` header; `None` when it has none (a bare `@@`).
fn hunk_numbers(header: &str) -> Option<(usize, Option<usize>, Option<usize>)> {
    let rest = header.strip_prefix("@@")?.trim_start();
    let rest = rest.strip_prefix('-')?;
    let (old, rest) = rest.split_once(' ')?;
    let new = rest.trim_start().strip_prefix('+')?.split([' ', '@']).next()?;
    let range = |r: &str| -> Option<(usize, Option<usize>)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, Some(b.parse().ok()?))),
            None => Some((r.parse().ok()?, None)),
        }
    };
    let (a, b) = range(old)?;
    let (_, d) = range(new)?;
    Some((a, b, d))
}

/// Parses the hunk whose header is at `start`; returns it and the index after its last line.
fn parse_hunk(lines: &[PatchLine<'_>], start: usize) -> Result<(Hunk, usize)> {
    let header = lines[start].text.trim_end();
    let numbers = hunk_numbers(header);
    let (old_len, new_len) = match numbers {
        // A missing count means 1, as in `@@ -3 +3 @@`.
        Some((_, b, d)) => (Some(b.unwrap_or(1)), Some(d.unwrap_or(1))),
        None => (None, None),
    };
    let placement = match numbers {
        // `-a,0` inserts after line a; otherwise line a is the hunk's first old line.
        Some((a, Some(0), _)) => Placement::Near { start: a, stated: a },
        Some((a, _, _)) => Placement::Near { start: a.saturating_sub(1), stated: a },
        None => Placement::Forward,
    };
    let mut hunk = Hunk::new(header, lines[start].no, placement, Vec::new());
    // Whether each line was an empty line standing for an empty context line.
    let mut bare = Vec::new();
    let (mut old_seen, mut new_seen) = (0usize, 0usize);
    let mut i = start + 1;
    while i < lines.len() {
        let t = lines[i].text;
        let counts_met = old_len.is_none_or(|n| old_seen >= n) && new_len.is_none_or(|n| new_seen >= n);
        if t.starts_with("@@") || t.starts_with("diff ") || t.starts_with("Index: ") {
            break;
        }
        if t.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.text.starts_with("+++ ")) {
            let next_hunk = lines.get(i + 2).filter(|n| n.text.starts_with("@@"));
            // The two lines are this hunk's last removed and added lines when they complete its
            // counts exactly and the hunk after them starts further down the same file.
            let completes = old_len == Some(old_seen + 1) && new_len == Some(new_seen + 1);
            let continues = match (numbers, next_hunk.map(|n| hunk_numbers(n.text))) {
                (Some((a, _, _)), Some(Some((b, _, _)))) => old_len.is_some_and(|n| b + 1 >= a + n),
                _ => false,
            };
            if counts_met || (next_hunk.is_some() && !(completes && continues)) {
                break;
            }
        }
        let (kind, text) = match t.as_bytes().first() {
            None => (LineKind::Context, ""),
            Some(b' ') => (LineKind::Context, &t[1..]),
            Some(b'-') => (LineKind::Remove, &t[1..]),
            Some(b'+') => (LineKind::Add, &t[1..]),
            Some(b'\\') => {
                match hunk.lines.last().map(|l| l.kind) {
                    Some(LineKind::Remove) => hunk.old_no_newline = true,
                    Some(LineKind::Add) => hunk.new_no_newline = true,
                    Some(LineKind::Context) => {
                        hunk.old_no_newline = true;
                        hunk.new_no_newline = true;
                    }
                    None => {}
                }
                i += 1;
                continue;
            }
            Some(_) if counts_met && !hunk.lines.is_empty() => break,
            Some(_) => {
                return Err(malformed(
                    lines[i].no,
                    format!(
                        "unexpected line in the hunk at patch line {}: {}; hunk lines start with ' ' (context), \
                         '-' (removed) or '+' (added)",
                        hunk.line,
                        quote(t)
                    ),
                ))
            }
        };
        if kind != LineKind::Add {
            old_seen += 1;
        }
        if kind != LineKind::Remove {
            new_seen += 1;
        }
        bare.push(t.is_empty());
        hunk.lines.push(HunkLine { kind, text: text.to_owned() });
        i += 1;
    }
    // Trailing empty lines past the stated counts (or after a hunk without counts) separate
    // sections rather than stand for empty context lines.
    while bare.last() == Some(&true) {
        let over = old_len.is_none_or(|n| old_seen > n) || new_len.is_none_or(|n| new_seen > n);
        if !over {
            break;
        }
        bare.pop();
        hunk.lines.pop();
        old_seen -= 1;
        new_seen -= 1;
    }
    if hunk.lines.is_empty() {
        return Err(malformed(hunk.line, format!("the hunk {} has no lines", quote(header))));
    }
    Ok((hunk, i))
}
