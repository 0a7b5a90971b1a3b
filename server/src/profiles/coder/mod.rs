//! The `coder` profile: a nine-tool coding-agent set.
//!
//! Four read tools (`read_file`, `list_dir`, `glob`, `grep`) and five that change things
//! (`write_file`, `edit_file`, `multi_edit`, `apply_patch`, `bash`); read-only mode lists only the
//! four. Success is plain text, except `bash`, whose result is a JSON object. Every failure is an
//! error result whose text is the envelope `{"error": CODE, "message": "..."}`, with the
//! contract's codes; a `bash` timeout (or output ceiling) envelope also carries the partial
//! output. Choices made where the contract is vague are listed in `docs/profiles/coder.md`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::sink::{self, Sink};
use crate::tools::contract::bounded_edit::{bounded_edit_file, bounded_multi_edit};
use crate::tools::contract::exact_write::{write_exact, ExactWrite};
use crate::tools::contract::paged_read::{paged_read, PageSource, PagedRead};
use crate::tools::edit_file::EditFileArgs;
use crate::tools::grep::OutputMode;
use crate::tools::multi_edit::MultiEditArgs;
use crate::tools::read_file::{format_page, Page, DEFAULT_LIMIT};
use crate::tools::{self, parse_args, schema_of, Context, Effects, Output};

/// The shared output budget: the most bytes of text one result carries (for `bash`, of stdout
/// and stderr together).
pub const MAX_OUTPUT_BYTES: usize = 128 * 1024;

mod bash;

use bash::{bash, BashArgs};

/// The `coder` profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Coder;

/// What a tool gives back on success (or, for `bash`, a failure envelope with extra fields).
enum Reply {
    Text(String),
    Json(Value),
    Envelope(Value),
}

type Run = fn(&Context<'_>, &dyn Sink, Value) -> Result<Reply>;

/// One tool of the profile.
type CoderTool = super::Entry<Run>;

const WRITE: Effects = Effects { read_only: false, destructive: true, idempotent: false, open_world: false };

#[rustfmt::skip]
const TOOLS: &[CoderTool] = &[
    CoderTool { name: "read_file", description: READ_FILE, schema: schema_of::<ReadFileArgs>, effects: Effects::READ, quick: true, run: read_file },
    CoderTool { name: "list_dir", description: LIST_DIR, schema: schema_of::<ListDirArgs>, effects: Effects::READ, quick: false, run: list_dir },
    CoderTool { name: "glob", description: GLOB, schema: schema_of::<GlobArgs>, effects: Effects::READ, quick: false, run: glob },
    CoderTool { name: "grep", description: GREP, schema: schema_of::<GrepArgs>, effects: Effects::READ, quick: false, run: grep },
    CoderTool { name: "write_file", description: WRITE_FILE, schema: schema_of::<WriteFileArgs>, effects: Effects { idempotent: true, ..WRITE }, quick: true, run: write_file },
    CoderTool { name: "edit_file", description: EDIT_FILE, schema: schema_of::<EditFileArgs>, effects: WRITE, quick: true, run: edit_file },
    CoderTool { name: "multi_edit", description: MULTI_EDIT, schema: schema_of::<MultiEditArgs>, effects: WRITE, quick: true, run: multi_edit },
    CoderTool { name: "apply_patch", description: APPLY_PATCH, schema: schema_of::<ApplyPatchArgs>, effects: WRITE, quick: false, run: apply_patch },
    CoderTool { name: "bash", description: BASH, schema: schema_of::<BashArgs>, effects: Effects { open_world: true, ..WRITE }, quick: false, run: bash },
];

const READ_FILE: &str = "Read a text file (UTF-8, or UTF-16 with a byte-order mark) with numbered lines: \
each line is its right-aligned number, a tab, then the text. Returns at most `limit` lines (default 2000) \
from `offset` (1-based; -N reads the last N lines; 0 is invalid, and so is a positive offset past the end). \
When more lines remain, a last line gives the offset to continue from. Lines over 2000 characters are \
cut with a marker; an empty file gives `(empty file)`. Binary files are refused (is_binary); a file \
over 10 MiB must be paged with offset/limit (too_large otherwise).";
const LIST_DIR: &str = "List the entries of one directory (not recursive), one per line, sorted by name. \
Directories end in `/`; a symlink shows as `name@ -> target`. Hidden and gitignored entries are \
included. An empty directory gives `(empty directory)`. `path` defaults to the workspace root.";
const GLOB: &str = "Find files (not directories) whose path matches a glob pattern, most recently \
modified first, one path per line relative to the workspace root. `*.ts` matches names at any depth, \
`src/**/*.ts` paths below `path`. Hidden files are included; files ignored by git's ignore files and \
the `.git/` directory are skipped unless respect_gitignore is false. No match gives `(no matches)`.";
const GREP: &str = "Search file contents with a regular expression (Rust/ripgrep syntax), recursively \
from `path` (a file or directory, default the workspace root). Hidden files are searched; `.git/`, \
gitignored, binary and oversized files are skipped. output_mode `files_with_matches` (default) prints \
one path per line, `content` prints `path:line:text` (context lines as `path-line-text`, `--` between \
groups), `count` prints `path:N`. Sorted by path, then line. Page with head_limit (at least 1; omit \
for all) and offset (results to skip, 0-based); a footer `(showing A..B of N; call again with \
offset=B for more)` says when more remain, and a warning says when the output cap (128 KiB) cut the \
results short. No match gives `(no matches)`.";
const WRITE_FILE: &str = "Create a file, or overwrite one, with exactly `content` (no line-ending \
conversion, no newline added), atomically (temp file and rename). The parent directory must exist \
(not_found otherwise). An existing file's byte-order mark is kept. Says how many bytes were written \
and whether the file was created or overwritten.";
const EDIT_FILE: &str = "Replace one occurrence of `old_string` with `new_string` in a text file. \
`old_string` is matched literally and exactly first (no regex, no read_file line-number prefixes) and \
must be unique unless replace_all is set. When there is no exact match (and replace_all is not set), a \
whitespace-tolerant cascade runs, strictest first: flexible indentation, trimmed lines, collapsed \
whitespace, trimmed text; it is used only if it finds exactly one region (ambiguous_match otherwise), \
and the result says which tolerant level matched. Line endings and BOM are preserved. Errors: no_match, \
ambiguous_match, invalid_input (identical strings), not_found, is_binary, too_large, path_escape.";
const MULTI_EDIT: &str = "Apply several edit_file-style edits ({old_string, new_string, replace_all?}) \
to one file in order, each on the result of the previous, with edit_file's exact-then-tolerant matching. \
All or nothing: if any edit fails nothing is written, and the error message starts with the failing \
edit's index (`edits[2]: ...`).";
const APPLY_PATCH: &str = "Apply a patch spanning one or more files, all together or not at all. \
Takes a unified diff (`--- a/path` / `+++ b/path` headers, `@@ -a,b +c,d @@` hunks; git headers \
accepted): `--- /dev/null` creates a file, `+++ /dev/null` deletes one, different old and new paths \
rename (with hunks: rename and edit; without: a pure rename keeping the exact bytes). Also takes the \
`*** Begin Patch` ... `*** End Patch` envelope: `*** Add File: path` with `+` lines, \
`*** Update File: path` with an optional `*** Move to: path` and `@@` hunks (`@@ def f():` first \
finds that line), `*** Delete File: path`. Creating an existing path, \
renaming onto an existing one, or naming a path twice is refused. Modified files keep their line \
endings and BOM; created files use LF. A hunk that does not apply fails with patch_failed naming the \
file.";
const BASH: &str = "Run a shell command with `sh -c` in `cwd` (default the workspace root) and return \
the JSON object {exit_code, stdout, stderr, signal, timed_out}. It blocks until the command exits, with \
stdin closed: background a long-lived process with its output redirected (`npm start > /tmp/out.log \
2>&1 &`); it keeps running. A non-zero exit is a normal result. timeout_ms defaults to 120000; larger \
values are clamped to 600000. On timeout the process group is killed and a `timeout` error carries the \
partial output with timed_out true. stdout and stderr share a 128 KiB budget; the complete output of an \
overflowing stream is saved under `.tether/bash/` and named in `stdout_spill`/`stderr_spill`. A stream \
passing 16 MiB gets the command killed (`output_limit`).";

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    /// File to read: absolute inside a workspace root, or relative to the first root.
    path: String,
    /// 1-based first line. A negative value counts from the end (-N reads the last N lines); 0 is
    /// invalid.
    #[serde(default)]
    #[schemars(extend("default" = 1))]
    offset: Option<i64>,
    /// Maximum number of lines to return.
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = DEFAULT_LIMIT))]
    limit: Option<i64>,
}

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDirArgs {
    /// Directory to list. Defaults to the workspace root.
    #[serde(default)]
    path: Option<String>,
}

/// Arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GlobArgs {
    /// Glob pattern, e.g. `**/*.ts`.
    pattern: String,
    /// Base directory to search from. Defaults to the workspace root.
    #[serde(default)]
    path: Option<String>,
    /// Skip files ignored by the git ignore stack, and the `.git/` directory.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    respect_gitignore: Option<bool>,
}

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    /// Regular expression (Rust/ripgrep syntax).
    pattern: String,
    /// File or directory to search. Defaults to the workspace root.
    #[serde(default)]
    path: Option<String>,
    /// Only search files matching this glob (`*.rs`, `src/**/*.py`).
    #[serde(default)]
    glob: Option<String>,
    /// `files_with_matches`, `content` or `count`.
    #[serde(default)]
    #[schemars(extend("default" = "files_with_matches"))]
    output_mode: Option<OutputMode>,
    /// Case-insensitive matching.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    ignore_case: Option<bool>,
    /// Match across line boundaries: `.` also matches `\n`, `^`/`$` match at line bounds.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    multiline: Option<bool>,
    /// Context lines on both sides of each match (content mode only).
    #[serde(default)]
    #[schemars(range(min = 0), extend("default" = 0))]
    context: Option<i64>,
    /// Lines before each match (content mode); overrides `context` for that side.
    #[serde(default)]
    #[schemars(range(min = 0))]
    before_context: Option<i64>,
    /// Lines after each match (content mode); overrides `context` for that side.
    #[serde(default)]
    #[schemars(range(min = 0))]
    after_context: Option<i64>,
    /// Most results to return (files, or lines in content mode), at least 1; omit for all.
    #[serde(default)]
    #[schemars(range(min = 1))]
    head_limit: Option<i64>,
    /// 0-based number of results to skip (a result offset, not read_file's line offset).
    #[serde(default)]
    #[schemars(range(min = 0), extend("default" = 0))]
    offset: Option<i64>,
}

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    /// Destination file. Its parent directory must already exist.
    path: String,
    /// The full content to write, exactly.
    content: String,
}

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ApplyPatchArgs {
    /// A unified diff spanning one or more files (`--- a/path`, `+++ b/path`, `@@` hunks), or a
    /// `*** Begin Patch` ... `*** End Patch` envelope.
    patch: String,
}

impl Profile for Coder {
    fn name(&self) -> &'static str {
        "coder"
    }

    fn reports_destinations(&self) -> bool {
        true
    }

    fn tools(&self, config: &Config) -> Vec<ToolInfo> {
        super::listed(TOOLS, config)
    }

    fn call(&self, ctx: &Context<'_>, sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        let tool = super::served(TOOLS, name, ctx.config)?;
        Ok(match (tool.run)(ctx, sink, args) {
            Ok(Reply::Text(text)) => CallResult { text, structured: None, items: Vec::new(), is_error: false },
            Ok(Reply::Json(v)) => {
                CallResult { text: v.to_string(), structured: Some(v), items: Vec::new(), is_error: false }
            }
            Ok(Reply::Envelope(v)) => {
                CallResult { text: v.to_string(), structured: None, items: Vec::new(), is_error: true }
            }
            Err(e) => self.error_result(&e),
        })
    }

    fn error_result(&self, e: &Error) -> CallResult {
        CallResult { text: envelope(e).to_string(), structured: None, items: Vec::new(), is_error: true }
    }
}

/// The contract's error code for a core error kind.
pub fn code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => "not_found",
        ErrorKind::NotAFile | ErrorKind::NotADirectory => "not_a_file",
        ErrorKind::IsBinary => "is_binary",
        ErrorKind::TooLarge => "too_large",
        ErrorKind::PathEscape => "path_escape",
        ErrorKind::InvalidInput | ErrorKind::ReadOnly | ErrorKind::CommandNotAllowed | ErrorKind::Unsupported => {
            "invalid_input"
        }
        ErrorKind::NoMatch => "no_match",
        ErrorKind::AmbiguousMatch => "ambiguous_match",
        ErrorKind::PatchFailed => "patch_failed",
        ErrorKind::Timeout => "timeout",
        ErrorKind::OutputLimit => "output_limit",
        ErrorKind::Cancelled | ErrorKind::Rejected => "aborted",
        ErrorKind::Conflict | ErrorKind::IoError => "io_error",
    }
}

/// The error envelope of `e`.
fn envelope(e: &Error) -> Value {
    json!({"error": code(e.kind()), "message": e.message()})
}

fn read_file(ctx: &Context<'_>, _: &dyn Sink, args: Value) -> Result<Reply> {
    let args: ReadFileArgs = parse_args(args)?;
    let page = Page::new(args.offset, args.limit)?;
    let paged = args.offset.is_some() || args.limit.is_some();
    let (path, text) = match paged_read(ctx, PagedRead { path: args.path, page, paged })? {
        PageSource::Text { path, text } => (path, text),
        PageSource::Directory(path) => {
            return Err(Error::new(
                ErrorKind::NotAFile,
                format!("{path}: is a directory; use list_dir to see its entries"),
            )
            .with_path(path.given()));
        }
        PageSource::TooLarge { path, len, limit } => {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!(
                    "{path}: file is {len} bytes, over the {limit}-byte limit for a whole read; read it in pages with \
                     `offset` and `limit`, or find the part you need with grep first"
                ),
            )
            .with_path(path.given()));
        }
        PageSource::PastEnd { path, offset, lines: total } => {
            return Err(Error::invalid(format!(
                "`offset` {offset} is past the end of {path}, which has {total} line{}; use an offset from 1 to \
                 {total}, or a negative offset to read the end",
                if total == 1 { "" } else { "s" }
            ))
            .with_path(path.given()));
        }
    };
    Ok(Reply::Text(cap_text(format_page(path.given(), &text, page))))
}

fn list_dir(ctx: &Context<'_>, _: &dyn Sink, args: Value) -> Result<Reply> {
    let args: ListDirArgs = parse_args(args)?;
    let core = tools::list_dir::ListDirArgs { path: args.path, depth: None, include_hidden: None };
    Ok(Reply::Text(cap_text(tools::list_dir::list_dir(ctx, core)?)))
}

fn glob(ctx: &Context<'_>, _: &dyn Sink, args: Value) -> Result<Reply> {
    let args: GlobArgs = parse_args(args)?;
    let core = tools::glob::GlobArgs {
        pattern: args.pattern,
        path: args.path,
        respect_gitignore: args.respect_gitignore,
        limit: None,
    };
    Ok(Reply::Text(cap_text(tools::glob::glob(ctx, core)?)))
}

fn grep(ctx: &Context<'_>, _: &dyn Sink, args: Value) -> Result<Reply> {
    let args: GrepArgs = parse_args(args)?;
    if let Some(n) = args.head_limit.filter(|&n| n < 1) {
        return Err(Error::invalid(format!("`head_limit` must be at least 1 (omit it for all results), got {n}")));
    }
    let multiline = args.multiline.unwrap_or(false);
    // The contract's multiline lets `.` span line breaks; the core leaves that to `(?s)`.
    let pattern = if multiline { format!("(?s){}", args.pattern) } else { args.pattern };
    let core = tools::grep::GrepArgs {
        pattern,
        path: args.path,
        glob: args.glob,
        output_mode: args.output_mode,
        ignore_case: args.ignore_case,
        multiline: Some(multiline),
        context: args.context,
        before_context: args.before_context,
        after_context: args.after_context,
        // Omitted means every result: the output cap below bounds the text.
        head_limit: Some(args.head_limit.unwrap_or(i64::MAX)),
        offset: args.offset,
        respect_gitignore: Some(true),
    };
    let mut out = tools::grep::grep(ctx, core)?;
    reword_footer(&mut out);
    if out.len() > MAX_OUTPUT_BYTES {
        let cut = out[..floor_char_boundary(&out, MAX_OUTPUT_BYTES)].rfind('\n').unwrap_or(0);
        out.truncate(cut);
        out.push_str(&format!(
            "\n\n(incomplete: the output was cut at the {MAX_OUTPUT_BYTES}-byte output cap; narrow the search, \
             or page with head_limit and offset)"
        ));
    }
    Ok(Reply::Text(out))
}

/// Rewrites the core's paging footer `(showing lines A-B of N; ...)` in the contract's words,
/// `(showing A..B of N; call again with offset=B for more)`.
fn reword_footer(out: &mut String) {
    const LEAD: &str = "\n\n(showing ";
    let Some(start) = out.find(LEAD) else { return };
    let body = start + LEAD.len();
    let Some(unit_end) = out[body..].find(' ') else { return };
    let range = body + unit_end + 1;
    let Some(dash) = out[range..].find('-') else { return };
    let dash = range + dash;
    out.replace_range(dash..=dash, "..");
    out.replace_range(body..range, "");
}

fn write_file(ctx: &Context<'_>, sink: &dyn Sink, args: Value) -> Result<Reply> {
    let args: WriteFileArgs = parse_args(args)?;
    let given = args.path.clone();
    let done = write_exact(ctx, ExactWrite { path: args.path, content: args.content })
        .map_err(|e| create_parent_first(e, &given))?;
    sink::apply(sink, ctx.config, ctx.vfs, &done.plan)?;
    let verb = if done.created { "created" } else { "overwrote" };
    Ok(Reply::Text(format!("{verb} {} ({})", done.path.given(), tools::write_file::byte_count(done.bytes))))
}

/// A missing parent directory in this contract's words, which say how to create it.
fn create_parent_first(e: Error, given: &str) -> Error {
    if e.kind() != ErrorKind::NotFound {
        return e;
    }
    let message = format!("{}; create it first (for example with bash `mkdir -p`)", e.message());
    Error::new(ErrorKind::NotFound, message).with_path(given)
}

fn edit_file(ctx: &Context<'_>, sink: &dyn Sink, args: Value) -> Result<Reply> {
    apply(ctx, sink, bounded_edit_file(ctx, parse_args(args)?)?)
}

fn multi_edit(ctx: &Context<'_>, sink: &dyn Sink, args: Value) -> Result<Reply> {
    apply(ctx, sink, bounded_multi_edit(ctx, parse_args(args)?)?)
}

fn apply_patch(ctx: &Context<'_>, sink: &dyn Sink, args: Value) -> Result<Reply> {
    let args: ApplyPatchArgs = parse_args(args)?;
    // The contract: "naming the same path twice is rejected".
    let core = tools::apply_patch::ApplyPatchArgs { patch: args.patch, dry_run: false, one_section_per_path: true };
    apply(ctx, sink, tools::apply_patch::apply_patch(ctx, core)?)
}

/// Applies a tool's change and returns its summary.
fn apply(ctx: &Context<'_>, sink: &dyn Sink, out: Output) -> Result<Reply> {
    match out {
        Output::Change { plan, summary } => {
            sink::apply(sink, ctx.config, ctx.vfs, &plan)?;
            Ok(Reply::Text(summary))
        }
        other => Ok(Reply::Text(other.text())),
    }
}

/// Cuts a text result at the output budget, on a character boundary, with a marker.
fn cap_text(mut text: String) -> String {
    if text.len() > MAX_OUTPUT_BYTES {
        let cut = floor_char_boundary(&text, MAX_OUTPUT_BYTES);
        let rest = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!(
            "\n[... output truncated at {MAX_OUTPUT_BYTES} bytes, {rest} more bytes not shown; page with offset and limit ...]"
        ));
    }
    text
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sink::DiskSink;
    use crate::tools::testing::fixture;

    fn call(f: &crate::tools::testing::Fixture, name: &str, args: Value) -> CallResult {
        let ctx = f.ctx();
        Coder.call(&ctx, &DiskSink, name, args).expect("known tool")
    }

    #[test]
    fn footer_is_reworded() {
        let mut s = "a\nb\n\n(showing lines 3-4 of 9; call again with offset=4 for more)".to_owned();
        reword_footer(&mut s);
        assert_eq!(s, "a\nb\n\n(showing 3..4 of 9; call again with offset=4 for more)");
        let mut s = "x.rs\n\n(showing files 1-1 of 2; call again with offset=1 for more)".to_owned();
        reword_footer(&mut s);
        assert_eq!(s, "x.rs\n\n(showing 1..1 of 2; call again with offset=1 for more)");
        let mut plain = "a:1:b-c".to_owned();
        reword_footer(&mut plain);
        assert_eq!(plain, "a:1:b-c");
    }

    #[test]
    fn envelopes_use_the_contract_codes() {
        let f = fixture("//- a.txt\none\ntwo\n//- d/\n");
        let table = [
            ("read_file", json!({"path": "a.txt", "offset": 3}), "invalid_input"),
            ("read_file", json!({"path": "a.txt", "offset": 0}), "invalid_input"),
            ("read_file", json!({"path": "d"}), "not_a_file"),
            ("list_dir", json!({"path": "a.txt"}), "not_a_file"),
            ("grep", json!({"pattern": "x", "head_limit": 0}), "invalid_input"),
            ("write_file", json!({"path": "missing/a.txt", "content": "x"}), "not_found"),
            ("edit_file", json!({"path": "a.txt", "old_string": "zzz", "new_string": "y"}), "no_match"),
            ("bash", json!({"command": "true", "cwd": "a.txt"}), "not_a_file"),
        ];
        for (tool, args, want) in table {
            let r = call(&f, tool, args.clone());
            assert!(r.is_error, "{tool} {args}: {}", r.text);
            let v: Value = serde_json::from_str(&r.text).expect("json envelope");
            assert_eq!(v["error"], want, "{tool} {args}: {}", r.text);
        }
    }

    #[test]
    fn apply_patch_takes_both_formats_and_says_so() {
        // The description and the schema name both formats the tool accepts.
        let tool = TOOLS.iter().find(|t| t.name == "apply_patch").expect("listed");
        let schema = serde_json::to_string(&(tool.schema)()).expect("schema");
        for text in [tool.description, schema.as_str()] {
            for format in ["--- a/", "*** Begin Patch"] {
                assert!(text.contains(format), "{format} missing from {text}");
            }
        }
        let f = fixture(
            "//- a.txt
one
two
//- b.txt
bee
",
        );
        let table = [
            ("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n", "patched 1 file:\nM a.txt"),
            ("--- a/b.txt\n+++ b/c.txt\n", "patched 1 file:\nR b.txt -> c.txt"),
            ("*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch", "patched 1 file:\nM a.txt"),
        ];
        for (patch, want) in table {
            let r = call(&f, "apply_patch", json!({ "patch": patch }));
            assert_eq!((r.is_error, r.text.as_str()), (false, want), "{patch}");
        }
        assert_eq!(std::fs::read_to_string(f.dir.path().join("a.txt")).expect("read"), "1\n2\n");
        assert_eq!(std::fs::read_to_string(f.dir.path().join("c.txt")).expect("read"), "bee\n");
    }

    #[test]
    fn write_file_writes_exactly() {
        let f = fixture("//- crlf.txt\na\r\nb\r\n");
        let r = call(&f, "write_file", json!({"path": "crlf.txt", "content": "x\ny"}));
        assert_eq!(r.text, "overwrote crlf.txt (3 bytes)");
        assert_eq!(std::fs::read(f.dir.path().join("crlf.txt")).expect("read"), b"x\ny");
    }

    #[test]
    fn bash_budget_spills_the_rest() {
        let f = fixture("");
        // 200,000 bytes of output: 2,000 lines of 98 letters and CRLF from cmd.exe.
        let lines = format!("for /L %i in (1,1,2000) do @echo {}", "a".repeat(98));
        let command = if cfg!(windows) { lines.as_str() } else { "head -c 200000 /dev/zero | tr '\\0' a" };
        let r = call(&f, "bash", json!({"command": command}));
        assert!(!r.is_error, "{}", r.text);
        let v: Value = serde_json::from_str(&r.text).expect("json");
        let spill = v["stdout_spill"].as_str().expect("spilled");
        assert_eq!(std::fs::read(f.dir.path().join(spill)).expect("spill").len(), 200_000);
        assert!(v["stdout"].as_str().expect("stdout").len() < MAX_OUTPUT_BYTES + 200);
    }
}
