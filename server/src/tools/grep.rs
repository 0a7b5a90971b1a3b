//! `grep`: search file contents with a regular expression, over open buffers and the disk.
//!
//! Output formats, stated once:
//! - `files_with_matches`: one path per line.
//! - `count`: `path:N`, N the number of matching lines.
//! - `content`: `path:line:text` for a matching line, `path-line-text` for a context line, and
//!   `--` between groups of lines that are not adjacent (only when context is asked for), as
//!   ripgrep prints them. Lines over 500 characters are cut with a marker.
//!
//! Paths are relative to the workspace root; files are sorted by path, lines by number. Entries
//! (lines in `content` mode, files otherwise) are paged with `offset` (entries to skip) and
//! `head_limit`; when more remain, a footer `(showing files A-B of N; call again with offset=B
//! for more)` follows a blank line, A and B counting entries from 1, both included.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::search::engine::{self, Collect, FileHits, Found, Query};
use super::search::{plural, PathGlob};
use super::{check_range, parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, Result};

/// Lines shown in `content` mode when no `head_limit` is given.
pub const DEFAULT_CONTENT_LIMIT: usize = 500;
/// Files shown in `files_with_matches` and `count` modes when no `head_limit` is given.
pub const DEFAULT_FILES_LIMIT: usize = 1000;
/// The most context lines one may ask for on either side of a match.
pub const MAX_CONTEXT: i64 = 10_000;

/// What `grep` shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The paths of the files that match, one per line.
    #[default]
    FilesWithMatches,
    /// Matching lines as `path:line:text`, with context lines as `path-line-text`.
    Content,
    /// `path:N` per matching file, N the number of matching lines.
    Count,
}

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression, Rust `regex` syntax (like ripgrep): escape `( ) [ ] { } . * + ? | \ ^ $`
    /// to match them literally, for example `fn main\(`.
    pub pattern: String,
    /// File or directory to search: absolute inside a workspace root, or relative to the first
    /// root. Defaults to the first root.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob: without `/` it matches file names at any depth
    /// (`*.rs`, `*.{ts,tsx}`); with `/` the path relative to `path` (`src/**/*.py`).
    #[serde(default)]
    pub glob: Option<String>,
    /// What to show.
    #[serde(default)]
    #[schemars(extend("default" = "files_with_matches"))]
    pub output_mode: Option<OutputMode>,
    /// Match letters in either case.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub ignore_case: Option<bool>,
    /// Let matches span lines: `\n` matches a line break. `.` still stops at line breaks; use
    /// `(?s)` to change that.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub multiline: Option<bool>,
    /// Lines of context before and after each match (`content` mode only).
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_CONTEXT), extend("default" = 0))]
    pub context: Option<i64>,
    /// Lines of context before each match (`content` mode only); overrides `context`.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_CONTEXT))]
    pub before_context: Option<i64>,
    /// Lines of context after each match (`content` mode only); overrides `context`.
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_CONTEXT))]
    pub after_context: Option<i64>,
    /// Most entries to show: lines in `content` mode (default 500), files otherwise (default
    /// 1000). 0 means the default.
    #[serde(default)]
    #[schemars(range(min = 0), extend("default" = 0))]
    pub head_limit: Option<i64>,
    /// Entries to skip before the first one shown, to page through long results.
    #[serde(default)]
    #[schemars(range(min = 0), extend("default" = 0))]
    pub offset: Option<i64>,
    /// Skip files that `.gitignore`, `.ignore` or git's exclude files ignore.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub respect_gitignore: Option<bool>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "grep",
    description: "Search file contents with a regular expression (Rust regex syntax, as ripgrep), \
in unsaved editor buffers when tether runs beside an editor. Searches a directory recursively \
(default: the workspace root) or one file; includes hidden files, skips `.git/`, gitignored files \
(unless respect_gitignore=false), binary files (a NUL byte) and files over the size limit (50 MiB \
by default). output_mode `files_with_matches` (default) lists matching files; `content` shows \
`path:line:text` lines (context lines as `path-line-text`, `--` between separate groups; lines cut \
at 500 characters); `count` shows `path:N`. Paths are relative to the workspace root, sorted, lines \
in order. Paged: at most `head_limit` entries (default 500 lines in content mode, 1000 files \
otherwise) after skipping `offset`; a footer gives the offset of the next page. Prints \
`(no matches)` when nothing matches. Narrow the files with the `glob` argument (`*.rs`), then \
read_file around a hit.",
    schema: schema_of::<GrepArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| grep(ctx, parse_args(args)?).map(Output::Text),
};

/// Runs a search and formats its page of results.
pub fn grep(ctx: &Context<'_>, args: GrepArgs) -> Result<String> {
    run(ctx, args, engine::KEEP_BYTES)
}

/// [`grep`] with a memory budget for kept line text (see [`Query::keep_bytes`]).
fn run(ctx: &Context<'_>, args: GrepArgs, keep_bytes: usize) -> Result<String> {
    let mode = args.output_mode.unwrap_or_default();
    let context = non_negative("context", args.context, MAX_CONTEXT)?;
    let before = non_negative("before_context", args.before_context, MAX_CONTEXT)?.or(context).unwrap_or(0);
    let after = non_negative("after_context", args.after_context, MAX_CONTEXT)?.or(context).unwrap_or(0);
    let head_limit = non_negative("head_limit", args.head_limit, i64::MAX)?.unwrap_or(0);
    let offset = non_negative("offset", args.offset, i64::MAX)?.unwrap_or(0);
    let multiline = args.multiline.unwrap_or(false);
    let matcher = Query::matcher(&args.pattern, args.ignore_case.unwrap_or(false), multiline)?;
    let glob = args.glob.as_deref().map(|g| PathGlob::new("glob", g)).transpose()?;
    let collect = match mode {
        OutputMode::FilesWithMatches => Collect::Files,
        OutputMode::Count => Collect::Count,
        OutputMode::Content => Collect::Lines,
    };
    let query = Query {
        matcher,
        collect,
        multiline,
        before,
        after,
        gitignore: args.respect_gitignore.unwrap_or(true),
        keep_bytes,
    };
    let target = ctx.vfs.resolve(args.path.as_deref().unwrap_or("."))?;
    let mut found = engine::search(ctx, &query, &target, glob.as_ref())?;
    let limit = match (head_limit, mode) {
        (0, OutputMode::Content) => DEFAULT_CONTENT_LIMIT,
        (0, _) => DEFAULT_FILES_LIMIT,
        (n, _) => n,
    };
    let mut out = match mode {
        OutputMode::Content => render_lines(ctx, &query, &mut found.files, offset, limit),
        _ => render_files(ctx, &found.files, offset, limit, mode == OutputMode::Count),
    };
    push_skipped(&mut out, &found, ctx.config.max_grep_file_bytes);
    Ok(out)
}

/// Validates an optional count argument as `0..=max`.
fn non_negative(field: &str, value: Option<i64>, max: i64) -> Result<Option<usize>> {
    value
        .map(|v| {
            if v < 0 {
                return Err(Error::invalid(format!("`{field}` must be 0 or more, got {v}")));
            }
            check_range(field, v, 0, max)?;
            Ok(usize::try_from(v).unwrap_or(usize::MAX))
        })
        .transpose()
}

/// Formats the files on the page: `path` or `path:N`.
fn render_files(ctx: &Context<'_>, files: &[FileHits], offset: usize, limit: usize, count: bool) -> String {
    let total = files.len();
    if let Some(empty) = empty_page(total, offset, "file") {
        return empty;
    }
    let end = offset.saturating_add(limit).min(total);
    let mut out = String::with_capacity((end - offset) * 48);
    for f in &files[offset..end] {
        out.push_str(&ctx.vfs.display(&f.path));
        if count {
            let _ = write!(out, ":{}", f.count);
        }
        out.push('\n');
    }
    out.pop();
    push_footer(&mut out, "files", offset, end, total);
    out
}

/// Formats the lines on the page: `path:line:text` for matches, `path-line-text` for context,
/// and `--` before a line that does not follow the previous one when context is shown.
fn render_lines(ctx: &Context<'_>, query: &Query, files: &mut [FileHits], offset: usize, limit: usize) -> String {
    let total: usize = files.iter().map(|f| f.shown).sum();
    if let Some(empty) = empty_page(total, offset, "line") {
        return empty;
    }
    let end = offset.saturating_add(limit).min(total);
    // The files the page shows lines of must have their lines at hand.
    let (mut first, mut stop, mut before_file) = (None, files.len(), 0);
    for (i, f) in files.iter().enumerate() {
        let after_file = before_file + f.shown;
        if first.is_none() && after_file > offset {
            first = Some(i);
        }
        if after_file >= end {
            stop = i + 1;
            break;
        }
        before_file = after_file;
    }
    let first = first.unwrap_or(stop);
    engine::fill(ctx, query, &mut files[first..stop]);
    let separate = query.before + query.after > 0;
    let mut out = String::new();
    let (mut skip, mut left) = (offset, end - offset);
    let mut previous: Option<(usize, u64)> = None;
    for (fi, f) in files.iter().enumerate() {
        if left == 0 {
            break;
        }
        if skip >= f.shown {
            skip -= f.shown;
            continue;
        }
        let shown = ctx.vfs.display(&f.path);
        // Entries are counted from the first search: a file that changed before `fill` searched
        // it again shows what it has now, within the same slots of the page.
        let take = (f.shown - skip).min(left);
        for (li, line) in f.lines.iter().enumerate().skip(skip).take(take) {
            if separate && previous.is_some_and(|(pf, pn)| pf != fi || pn + 1 != line.number) {
                out.push_str("--\n");
            }
            let sep = if line.is_match { ':' } else { '-' };
            let _ = write!(out, "{shown}{sep}{}{sep}", line.number);
            out.push_str(f.line_text(li));
            out.push('\n');
            previous = Some((fi, line.number));
        }
        left -= take;
        skip = 0;
    }
    out.pop();
    push_footer(&mut out, "lines", offset, end, total);
    out
}

/// The text for a page with nothing on it, if this one is.
fn empty_page(total: usize, offset: usize, unit: &str) -> Option<String> {
    if total == 0 {
        Some("(no matches)".to_owned())
    } else if offset >= total {
        Some(format!(
            "(offset {offset} is past the end: {} matched; use an offset from 0 to {})",
            plural(total, unit),
            total - 1
        ))
    } else {
        None
    }
}

/// Appends the paging footer when entries remain after `end`.
fn push_footer(out: &mut String, unit: &str, offset: usize, end: usize, total: usize) {
    if end < total {
        let _ =
            write!(out, "\n\n(showing {unit} {}-{end} of {total}; call again with offset={end} for more)", offset + 1);
    }
}

/// Appends a note about files the search skipped for a reason the reader may not expect.
fn push_skipped(out: &mut String, found: &Found, max_bytes: u64) {
    let mut notes = Vec::new();
    if found.too_large > 0 {
        notes.push(format!("skipped {} over the {max_bytes}-byte grep limit", plural(found.too_large, "file")));
    }
    if found.unreadable > 0 {
        notes.push(format!("{} could not be read", plural(found.unreadable, "file")));
    }
    if !notes.is_empty() {
        let _ = write!(out, "\n\n({})", notes.join("; "));
    }
}

#[cfg(all(test, unix))]
#[path = "grep_tests.rs"]
mod tests;
