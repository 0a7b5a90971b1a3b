//! The search tools: `search_files` (name substring), `grep_files` (ECMAScript regex over
//! contents, grep-style output) and `glob_search` (file name globs).

use serde_json::{json, Value};

use super::args::{invalid, missing, Args};
use super::{core, object_schema, ok, rpc, Call, INVALID_PARAMS};
use crate::profiles::{CallError, CallResult};
use crate::tools::contract::ecma_grep::{ecma_grep, EcmaGrep};
use crate::tools::contract::file_find::{find_by_glob, find_by_name, GlobSearch, NameSearch};
use crate::tools::contract::walk_filter::SearchError;

/// Default and largest `maxResults` of `grep_files`.
const GREP_DEFAULT_MAX: i64 = 500;
const GREP_MAX: i64 = 10_000;
/// Largest `contextLines`.
const MAX_CONTEXT: i64 = 50;
/// Default `max` of `glob_search`.
const GLOB_DEFAULT_MAX: i64 = 1000;
/// The answer when nothing matched.
const NO_MATCHES: &str = "(no matches found)";

pub(super) const SEARCH_FILES: &str = "Find files and directories whose name contains `nameContains`: a plain, \
case-insensitive substring of the basename (not a glob, not a regex), searched recursively under `directory`. \
`excludeGlobs` prunes paths (relative to `directory`, or matching a basename). Every match is returned, one \
absolute path per line, or `(no matches found)`. Use glob_search for glob patterns and grep_files for contents.";
pub(super) const GREP_FILES: &str = "Search file contents with an ECMAScript (JavaScript) regex, grep-style. Give \
`regex` and at least one of `directory` (searched recursively; set it to restrict the search to one directory) and \
`globs` (file filters: relative globs are anchored to `directory`, or to the first allowed directory when it is \
omitted; absolute globs are used as is). `excludeGlobs` drops files, `caseInsensitive` is grep -i, `contextLines` \
is grep -C (max 50), `maxResults` caps the matches (default 500, max 10000). Output: `/abs/path:5:match` lines and \
`/abs/path-4-context` lines, groups separated by `--`, and a `[N matches]` footer; a notice comes first when results \
were truncated. Files with a NUL byte in their first 4 KB are skipped. For a literal search escape metacharacters \
(\\. \\*); to find files by name use glob_search or search_files.";
pub(super) const GLOB_SEARCH: &str = "Find files (not directories) whose path relative to `directory` matches one \
of `globs`: `**` any depth, `*` within a name, `?` one character, `{a,b}` alternatives, `[abc]` a class. \
`excludeGlobs` drops matches, `max` caps them (default 1000, 0 = unlimited). One absolute path per line, or `(no \
matches found)`. Use grep_files to search contents, search_files for a name substring.";

pub(super) fn search_files_schema() -> Value {
    object_schema(
        json!({
            "directory": {"type": "string", "description": "Root directory to search recursively"},
            "nameContains": {"type": "string", "description": "Literal, case-insensitive substring of the basename"},
            "excludeGlobs": {"type": "array", "items": {"type": "string"}, "description": "Glob exclusions"},
        }),
        &["directory", "nameContains"],
    )
}

pub(super) fn grep_files_schema() -> Value {
    object_schema(
        json!({
            "regex": {"type": "string", "description": "ECMAScript regex searched in file contents"},
            "directory": {"type": "string", "description": "Directory to search recursively"},
            "globs": {"type": "array", "items": {"type": "string"}, "description": "File filters: relative to directory, or absolute"},
            "excludeGlobs": {"type": "array", "items": {"type": "string"}, "description": "Glob exclusions"},
            "caseInsensitive": {"type": "boolean", "default": false, "description": "Case-insensitive (grep -i)"},
            "contextLines": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT, "default": 0, "description": "Lines before and after each match (grep -C)"},
            "maxResults": {"type": "integer", "minimum": 1, "maximum": GREP_MAX, "default": GREP_DEFAULT_MAX, "description": "Total match cap"},
        }),
        &["regex"],
    )
}

pub(super) fn glob_search_schema() -> Value {
    object_schema(
        json!({
            "directory": {"type": "string", "description": "Root directory"},
            "globs": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns relative to directory"},
            "excludeGlobs": {"type": "array", "items": {"type": "string"}, "description": "Exclusion globs"},
            "max": {"type": "integer", "minimum": 0, "default": GLOB_DEFAULT_MAX, "description": "Result cap; 0 = unlimited"},
        }),
        &["directory", "globs"],
    )
}

/// A required string under its canonical name or a legacy alias (the canonical name wins).
fn aliased_str(args: &Args, names: &[&str]) -> Result<String, CallError> {
    match args.first_of(names) {
        Some(key) => args.req_str(key),
        None => Err(missing(names[0])),
    }
}

/// A search's failure in the contract's codes: a glob that does not parse is an invalid
/// parameter (-32602), the rest as the core error says.
fn search_error(e: SearchError) -> CallError {
    match e {
        SearchError::Glob(message) => invalid(message),
        SearchError::Core(e) => core(e),
    }
}

pub(super) fn search_files(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let directory = aliased_str(args, &["directory", "path"])?;
    let needle = aliased_str(args, &["nameContains", "pattern"])?;
    let excludes = match args.first_of(&["excludeGlobs", "excludePatterns"]) {
        Some(key) => args.strs(key)?.unwrap_or_default(),
        None => Vec::new(),
    };
    let found = find_by_name(call.ctx, NameSearch { directory, needle, excludes }).map_err(search_error)?;
    Ok(ok(if found.is_empty() { NO_MATCHES.to_owned() } else { found.join("\n") }))
}

pub(super) fn glob_search(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let directory = args.req_str("directory")?;
    let globs = args.req_strs("globs")?;
    let excludes = args.strs("excludeGlobs")?.unwrap_or_default();
    let max = args.int("max", 0, i64::MAX)?.unwrap_or(GLOB_DEFAULT_MAX);
    let search = GlobSearch { directory, globs, excludes, max: usize::try_from(max).unwrap_or(usize::MAX) };
    let found = find_by_glob(call.ctx, search).map_err(search_error)?;
    if found.paths.is_empty() {
        return Ok(ok(NO_MATCHES));
    }
    let mut text = found.paths.join("\n");
    if found.truncated {
        text.push_str(&format!("\n[results truncated at {max}; raise max (0 = unlimited) or narrow the globs]"));
    }
    Ok(ok(text))
}

pub(super) fn grep_files(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let regex = match args.get("regex") {
        None => return Err(missing("regex")),
        Some(Value::Bool(_)) => {
            return Err(invalid(
                "`regex` is the pattern itself (a string); the boolean `regex` flag was removed: every grep_files \
                 query is a regex, so put the pattern in `regex`",
            ));
        }
        Some(_) => args.req_str("regex")?,
    };
    let directory = args.str("directory")?;
    let globs = args.strs("globs")?.filter(|g| !g.is_empty());
    if directory.is_none() && globs.is_none() {
        return Err(rpc(
            INVALID_PARAMS,
            "Invalid params: give `directory` (to search one directory) and/or `globs`; neither was given",
        ));
    }
    let excludes = args.strs("excludeGlobs")?.unwrap_or_default();
    let case_insensitive = args.bool("caseInsensitive", false)?;
    // Values above the documented maxima are held to them, as `run_command` holds `timeout`.
    let context = args.int("contextLines", 0, i64::MAX)?.unwrap_or(0).min(MAX_CONTEXT) as usize;
    let max = args.int("maxResults", 1, i64::MAX)?.unwrap_or(GREP_DEFAULT_MAX).min(GREP_MAX) as usize;
    let grep = EcmaGrep { regex, case_insensitive, directory, globs, excludes, context, max };
    let found = ecma_grep(call.ctx, grep).map_err(search_error)?;

    // grep's own format: `path:N:line` for a match, `path-N-line` for context, and (as grep
    // does, only when context lines are shown) `--` between groups.
    let mut text = String::new();
    if found.truncated {
        text.push_str(&format!("[results truncated at {max} matches; narrow the search or raise maxResults]\n"));
    }
    for (i, group) in found.groups.iter().enumerate() {
        if context > 0 && i > 0 {
            text.push_str("--\n");
        }
        for line in &group.lines {
            let sep = if line.hit { ':' } else { '-' };
            text.push_str(&format!("{}{sep}{}{sep}{}\n", group.path, line.number, line.text));
        }
    }
    text.push_str(&format!("[{} matches]", found.matches));
    if found.skipped > 0 {
        text.push_str(&format!("\n[{} path(s) skipped: outside the allowed directories]", found.skipped));
    }
    Ok(ok(text))
}
