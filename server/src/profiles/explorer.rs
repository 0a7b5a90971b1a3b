//! The `explorer` profile: a read-only repository explorer with JSON results.
//!
//! Four tools (`list_files`, `read_file`, `search_files`, `get_repo_overview`), all read-only, so
//! read-only mode lists the same four. A result is a JSON object (as text and as structured
//! content); a failure is a JSON-RPC error whose `code` comes from the contract's mapping table
//! and whose `data.error_code` names the error (`file_not_found`, `access_denied`, ...), with
//! `data.path` when a path is involved. The repository is the first workspace root. Choices made
//! where the contract is vague are listed in `docs/profiles/explorer.md`.

use regex::RegexBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{CallError, CallResult, Profile, ToolInfo};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::sink::Sink;
use crate::tools::explore::{self, ListQuery, ReadEncoding, SearchQuery};
use crate::tools::search::PathGlob;
use crate::tools::{check_range, parse_args, schema_of, Context, Effects};

/// The `explorer` profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Explorer;

/// A failure in the contract's terms.
struct Failure {
    code: i32,
    error_code: &'static str,
    message: String,
    path: Option<String>,
}

impl Failure {
    fn invalid_pattern(e: &Error) -> Failure {
        Failure {
            code: -32005,
            error_code: "invalid_pattern",
            message: format!("Invalid pattern: {}", e.message()),
            path: None,
        }
    }

    /// The contract's error for a core error raised by `tool`.
    fn from_core(tool: &str, e: &Error) -> Failure {
        let (code, error_code, label) = match e.kind() {
            ErrorKind::NotFound if tool == "list_files" => (-32001, "directory_not_found", "Directory not found"),
            ErrorKind::NotFound | ErrorKind::NotAFile => (-32001, "file_not_found", "File not found"),
            ErrorKind::NotADirectory => (-32001, "directory_not_found", "Directory not found"),
            ErrorKind::PathEscape => (-32002, "access_denied", "Access denied"),
            ErrorKind::TooLarge => (-32003, "file_too_large", "File too large"),
            ErrorKind::IsBinary => (-32004, "binary_file", "Binary file"),
            ErrorKind::Timeout => (-32006, "search_timeout", "Search timeout"),
            ErrorKind::InvalidInput => (-32602, "invalid_arguments", "Invalid arguments"),
            _ => (-32603, "internal_error", "Internal error"),
        };
        let message = match (e.kind(), e.path()) {
            (ErrorKind::NotFound, Some(p)) => format!("{label}: {p}"),
            _ => format!("{label}: {}", e.message()),
        };
        Failure { code, error_code, message, path: e.path().map(str::to_owned) }
    }

    fn into_call_error(self) -> CallError {
        let mut data = json!({"error_code": self.error_code});
        if let Some(p) = self.path {
            data["path"] = p.into();
        }
        CallError::Rpc { code: self.code, message: self.message, data: Some(data) }
    }
}

type Run = fn(&Context<'_>, Value) -> std::result::Result<Value, Failure>;

/// One tool of the profile (all of them change nothing).
type ExplorerTool = super::Entry<Run>;

#[rustfmt::skip]
const TOOLS: &[ExplorerTool] = &[
    ExplorerTool { name: "list_files", description: LIST_FILES, schema: schema_of::<ListFilesArgs>, effects: Effects::READ, quick: false, run: list_files },
    ExplorerTool { name: "read_file", description: READ_FILE, schema: schema_of::<ReadFileArgs>, effects: Effects::READ, quick: true, run: read_file },
    ExplorerTool { name: "search_files", description: SEARCH_FILES, schema: schema_of::<SearchFilesArgs>, effects: Effects::READ, quick: false, run: search_files },
    ExplorerTool { name: "get_repo_overview", description: OVERVIEW, schema: schema_of::<OverviewArgs>, effects: Effects::READ, quick: false, run: overview },
];

const LIST_FILES: &str = "List files and directories within the repository, depth-first in name order. \
Returns JSON {files: [{path, type, size, modified_at}], total_count, truncated}: paths relative to the \
repository root, type \"file\" or \"directory\", size in bytes and ISO 8601 modified_at for files. At most \
500 entries are returned (truncated is then true; total_count counts them all). `pattern` filters with a \
glob (`*.ts` matches names at any depth, `src/**/*.ts` paths); hidden entries only with include_hidden.";
const READ_FILE: &str = "Read the contents of a file from the repository. Returns JSON {path, content, size, \
modified_at, encoding, truncated}: at most max_bytes bytes (default 100000) of content, size being the whole \
file's. Text files read as UTF-8; binary files (images, archives, executables, fonts, media, databases, PDF, \
or any file with NUL bytes) must be read with encoding \"base64\". Files over 1 MiB are refused \
(file_too_large).";
const SEARCH_FILES: &str = "Search for text patterns across repository files. Returns JSON {matches: [{path, \
line_number, line_content, context: {before, after}}], total_matches, files_searched, truncated, \
duration_ms}. The pattern is plain text unless is_regex is true; matching ignores case unless \
case_sensitive is true. `glob` limits the files (`src/**/*.ts`). Returns at most max_results matches \
(and never more than 100), each with context_lines lines around it. Skips node_modules/, .git/, dist/, \
build/, gitignored files, *.min.js, *.min.css, *.map, package-lock.json, yarn.lock, binary files and files \
over 1 MiB. Gives up with search_timeout after 30 s.";
const OVERVIEW: &str = "Get a high-level overview of the repository structure and statistics including file \
counts and language breakdown. Returns JSON {root, structure, stats}: structure is a tree of {name, type, \
size, children} to max_depth levels (directories first); stats (unless include_stats is false) has \
total_files, total_directories, total_size and languages, the 15 file extensions taking the most bytes \
({extension, count, bytes}). Skips node_modules/, .git/, .next/, dist/, build/, __pycache__/, .cache/, \
coverage/, .nyc_output/ and gitignored files.";

/// Arguments of `list_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListFilesArgs {
    /// Directory path relative to the repository root.
    #[serde(default)]
    #[schemars(extend("default" = "."))]
    directory: Option<String>,
    /// Glob pattern to filter entries (e.g. `*.ts`).
    #[serde(default)]
    pattern: Option<String>,
    /// Maximum directory depth (1-10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 10), extend("default" = 3))]
    max_depth: Option<i64>,
    /// Include hidden files and directories.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    include_hidden: Option<bool>,
}

/// The output encoding of `read_file`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
enum Encoding {
    /// Text.
    #[serde(rename = "utf-8")]
    Utf8,
    /// Raw bytes, base64-encoded.
    #[serde(rename = "base64")]
    Base64,
}

/// Arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    /// File path relative to the repository root.
    path: String,
    /// Maximum bytes to read.
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = 100_000))]
    max_bytes: Option<i64>,
    /// Output encoding: "utf-8" or "base64".
    #[serde(default)]
    #[schemars(extend("default" = "utf-8"))]
    encoding: Option<Encoding>,
}

/// Arguments of `search_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchFilesArgs {
    /// Search pattern (plain text, or a regular expression with is_regex).
    pattern: String,
    /// Treat the pattern as a regular expression.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    is_regex: Option<bool>,
    /// Glob pattern to filter files (e.g. `src/**/*.ts`).
    #[serde(default)]
    glob: Option<String>,
    /// Maximum matches to return (1-1000; the server returns at most 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000), extend("default" = 50))]
    max_results: Option<i64>,
    /// Lines of context around matches (0-10).
    #[serde(default)]
    #[schemars(range(min = 0, max = 10), extend("default" = 2))]
    context_lines: Option<i64>,
    /// Case-sensitive search.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    case_sensitive: Option<bool>,
}

/// Arguments of `get_repo_overview`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OverviewArgs {
    /// Maximum directory depth (1-5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 5), extend("default" = 2))]
    max_depth: Option<i64>,
    /// Include file counts and language statistics.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    include_stats: Option<bool>,
}

impl Profile for Explorer {
    fn name(&self) -> &'static str {
        "explorer"
    }

    fn tools(&self, config: &Config) -> Vec<ToolInfo> {
        super::listed(TOOLS, config)
    }

    fn call(&self, ctx: &Context<'_>, _sink: &dyn Sink, name: &str, args: Value) -> Result<CallResult, CallError> {
        let tool = super::served(TOOLS, name, ctx.config)?;
        match (tool.run)(ctx, args) {
            Ok(v) => Ok(CallResult {
                text: serde_json::to_string_pretty(&v).unwrap_or_default(),
                structured: Some(v),
                items: Vec::new(),
                is_error: false,
            }),
            Err(f) => Err(f.into_call_error()),
        }
    }
}

/// Runs a core step of `tool`, mapping its error to the contract's.
fn core<T>(tool: &str, r: Result<T>) -> std::result::Result<T, Failure> {
    r.map_err(|e| Failure::from_core(tool, &e))
}

/// An optional integer argument in `min..=max`, or its default.
fn int(field: &str, v: Option<i64>, default: i64, min: i64, max: i64) -> Result<usize> {
    let v = v.unwrap_or(default);
    check_range(field, v, min, max)?;
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

fn list_files(ctx: &Context<'_>, args: Value) -> std::result::Result<Value, Failure> {
    const TOOL: &str = "list_files";
    let a: ListFilesArgs = core(TOOL, parse_args(args))?;
    let max_depth = core(TOOL, int("max_depth", a.max_depth, 3, 1, 10))?;
    let pattern = a
        .pattern
        .as_deref()
        .map(|p| PathGlob::new("pattern", p))
        .transpose()
        .map_err(|e| Failure::invalid_pattern(&e))?;
    let q = ListQuery {
        directory: a.directory.as_deref().unwrap_or("."),
        pattern: pattern.as_ref(),
        max_depth,
        include_hidden: a.include_hidden.unwrap_or(false),
    };
    core(TOOL, explore::list_files(ctx, &q))
}

fn read_file(ctx: &Context<'_>, args: Value) -> std::result::Result<Value, Failure> {
    const TOOL: &str = "read_file";
    let a: ReadFileArgs = core(TOOL, parse_args(args))?;
    let max_bytes = core(TOOL, int("max_bytes", a.max_bytes, 100_000, 1, i64::MAX))?;
    let encoding = match a.encoding.unwrap_or(Encoding::Utf8) {
        Encoding::Utf8 => ReadEncoding::Utf8,
        Encoding::Base64 => ReadEncoding::Base64,
    };
    core(TOOL, explore::read_file(ctx, &a.path, max_bytes, encoding))
}

fn search_files(ctx: &Context<'_>, args: Value) -> std::result::Result<Value, Failure> {
    const TOOL: &str = "search_files";
    let a: SearchFilesArgs = core(TOOL, parse_args(args))?;
    let max_results = core(TOOL, int("max_results", a.max_results, 50, 1, 1000))?;
    let context_lines = core(TOOL, int("context_lines", a.context_lines, 2, 0, 10))?;
    if a.pattern.is_empty() {
        return Err(Failure::from_core(TOOL, &Error::invalid("`pattern` must not be empty")));
    }
    let source = if a.is_regex.unwrap_or(false) { a.pattern } else { regex::escape(&a.pattern) };
    let regex = RegexBuilder::new(&source)
        .case_insensitive(!a.case_sensitive.unwrap_or(false))
        .build()
        .map_err(|e| Failure::invalid_pattern(&Error::invalid(format!("`pattern`: invalid regex: {e}"))))?;
    let glob =
        a.glob.as_deref().map(|g| PathGlob::new("glob", g)).transpose().map_err(|e| Failure::invalid_pattern(&e))?;
    let q = SearchQuery {
        regex: &regex,
        glob: glob.as_ref(),
        max_results,
        context_lines,
        timeout: explore::SEARCH_TIMEOUT,
    };
    core(TOOL, explore::search_files(ctx, &q))
}

fn overview(ctx: &Context<'_>, args: Value) -> std::result::Result<Value, Failure> {
    const TOOL: &str = "get_repo_overview";
    let a: OverviewArgs = core(TOOL, parse_args(args))?;
    let max_depth = core(TOOL, int("max_depth", a.max_depth, 2, 1, 5))?;
    core(TOOL, explore::repo_overview(ctx, max_depth, a.include_stats.unwrap_or(true)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sink::DiskSink;
    use crate::tools::testing::fixture;

    #[test]
    fn failures_carry_the_contract_codes() {
        let f = fixture("//- a.txt\nx\n//- logo.png\nnot really\n");
        let ctx = f.ctx();
        let table = [
            ("read_file", json!({"path": "missing.ts"}), -32001, "file_not_found"),
            ("list_files", json!({"directory": "nope"}), -32001, "directory_not_found"),
            ("read_file", json!({"path": "../x"}), -32002, "access_denied"),
            ("read_file", json!({"path": "logo.png"}), -32004, "binary_file"),
            ("search_files", json!({"pattern": "(", "is_regex": true}), -32005, "invalid_pattern"),
            ("search_files", json!({"pattern": "x", "max_results": 0}), -32602, "invalid_arguments"),
            ("read_file", json!({}), -32602, "invalid_arguments"),
        ];
        for (tool, args, code, name) in table {
            let e = Explorer.call(&ctx, &DiskSink, tool, args.clone()).expect_err("fails");
            assert_eq!(e.code(), code, "{tool} {args}: {e}");
            assert_eq!(e.data().and_then(|d| d["error_code"].as_str()), Some(name), "{tool} {args}");
        }
        let timeout = Failure::from_core("search_files", &Error::new(ErrorKind::Timeout, "slow")).into_call_error();
        assert_eq!((timeout.code(), timeout.data()), (-32006, Some(&json!({"error_code": "search_timeout"}))));
        let e = Explorer.call(&ctx, &DiskSink, "read_file", json!({"path": "src/missing.ts"})).expect_err("fails");
        assert_eq!(e.to_string(), "File not found: src/missing.ts");
        assert_eq!(e.data(), Some(&json!({"error_code": "file_not_found", "path": "src/missing.ts"})));
    }
}
