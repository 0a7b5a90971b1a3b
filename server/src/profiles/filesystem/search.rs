//! The search tools: `search_files` (name substring), `grep_files` (ECMAScript regex over
//! contents, grep-style output) and `glob_search` (file name globs).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::{json, Value};

use super::args::{invalid, missing, Args};
use super::{core, object_schema, ok, rpc, Call, INTERNAL, INVALID_PARAMS};
use crate::edit::ecma;
use crate::error::ErrorKind;
use crate::profiles::{CallError, CallResult};
use crate::workspace::{SandboxPath, WalkOptions};

/// What the walks of these tools see: every file, hidden ones and ignored ones included (the
/// contract searches "every file under" a directory); `.git` is always skipped.
const EVERY_FILE: WalkOptions = WalkOptions { hidden: true, gitignore: false, max_depth: None, skip_build_dirs: false };
/// Bytes looked at for a NUL to call a file binary.
const BINARY_SNIFF: usize = 4096;
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

/// Resolves a directory parameter: inside the roots (-32001), existing (-32002), a directory.
fn directory(call: &Call<'_>, given: &str) -> Result<SandboxPath, CallError> {
    let dir = call.ctx.vfs.resolve(given).map_err(core)?;
    let meta = call.ctx.vfs.metadata(&dir).map_err(core)?;
    if meta.kind != crate::vfs::EntryKind::Dir {
        return Err(rpc(INTERNAL, format!("{given}: not a directory")));
    }
    Ok(dir)
}

/// A glob set; `anchor` (a real directory) is prefixed to relative patterns when given.
fn globs(field: &str, patterns: &[String], anchor: Option<&Path>) -> Result<GlobSet, CallError> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let full = match anchor {
            Some(a) if !p.starts_with('/') => {
                format!(
                    "{}/{}",
                    globset::escape(&a.to_string_lossy()).trim_end_matches('/'),
                    p.trim_start_matches("./")
                )
            }
            _ => p.clone(),
        };
        let g = GlobBuilder::new(&full)
            .literal_separator(true)
            .build()
            .map_err(|e| invalid(format!("`{field}`: `{p}` is not a valid glob: {e}")))?;
        set.add(g);
    }
    set.build().map_err(|e| invalid(format!("`{field}`: {e}")))
}

/// Exclusions: a path is excluded when its path relative to `base`, its basename, or its
/// absolute path matches (so `node_modules`, `**/*.min.js` and `/abs/dir/**` all work).
struct Excludes {
    set: GlobSet,
}

impl Excludes {
    fn new(field: &str, patterns: &[String]) -> Result<Excludes, CallError> {
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            let g = GlobBuilder::new(p.trim_start_matches("./"))
                .literal_separator(false)
                .build()
                .map_err(|e| invalid(format!("`{field}`: `{p}` is not a valid glob: {e}")))?;
            set.add(g);
        }
        Ok(Excludes { set: set.build().map_err(|e| invalid(format!("`{field}`: {e}")))? })
    }

    /// Whether `path` or one of its parents below `base` is excluded.
    fn excludes(&self, base: &Path, path: &Path) -> bool {
        if self.set.is_empty() {
            return false;
        }
        // The path and its parents up to `base` (or, for a path elsewhere, up to the root).
        let mut cur = Some(path);
        while let Some(p) = cur {
            if p == base || p.parent().is_none() {
                break;
            }
            let rel = p.strip_prefix(base).unwrap_or(p);
            let name = p.file_name().map(Path::new).unwrap_or(p);
            if self.set.is_match(rel) || self.set.is_match(name) || self.set.is_match(p) {
                return true;
            }
            cur = p.parent();
        }
        false
    }
}

/// What a walk found at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    File,
    Dir,
    /// A symlink (walks never follow them) or another kind of entry.
    Other,
}

/// Every entry under `dir` (not `dir` itself), sorted by path.
fn walk(call: &Call<'_>, dir: &SandboxPath) -> Result<Vec<(PathBuf, Found)>, CallError> {
    let mut out = Vec::new();
    let walker = call.ctx.vfs.workspace().walker(dir, EVERY_FILE).sort_by_file_name(|a, b| a.cmp(b)).build();
    for entry in walker {
        call.ctx.cancel.check().map_err(core)?;
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let found = match entry.file_type() {
            Some(t) if t.is_file() => Found::File,
            Some(t) if t.is_dir() => Found::Dir,
            _ => Found::Other,
        };
        out.push((entry.into_path(), found));
    }
    Ok(out)
}

/// Whether the symlink at `p` (inside the roots) leads outside them.
fn leads_outside(call: &Call<'_>, p: &Path) -> bool {
    p.is_symlink() && matches!(call.ctx.vfs.resolve(&p.to_string_lossy()), Err(e) if e.kind() == ErrorKind::PathEscape)
}

pub(super) fn search_files(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let dir_given = aliased_str(args, &["directory", "path"])?;
    let needle = aliased_str(args, &["nameContains", "pattern"])?.to_lowercase();
    let excludes = match args.first_of(&["excludeGlobs", "excludePatterns"]) {
        Some(key) => args.strs(key)?.unwrap_or_default(),
        None => Vec::new(),
    };
    let dir = directory(call, &dir_given)?;
    let excludes = Excludes::new("excludeGlobs", &excludes)?;
    let base = dir.real();
    let found: Vec<String> = walk(call, &dir)?
        .into_iter()
        .filter(|(p, _)| !excludes.excludes(base, p))
        .filter(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().to_lowercase().contains(&needle)))
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .collect();
    Ok(ok(if found.is_empty() { NO_MATCHES.to_owned() } else { found.join("\n") }))
}

pub(super) fn glob_search(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let dir_given = args.req_str("directory")?;
    let patterns = args.req_strs("globs")?;
    let excludes = args.strs("excludeGlobs")?.unwrap_or_default();
    let max = args.int("max", 0, i64::MAX)?.unwrap_or(GLOB_DEFAULT_MAX);
    let dir = directory(call, &dir_given)?;
    let set = globs("globs", &patterns, Some(dir.real()))?;
    let excludes = Excludes::new("excludeGlobs", &excludes)?;
    let base = dir.real();
    let mut found = Vec::new();
    let mut truncated = false;
    for (p, kind) in walk(call, &dir)? {
        if kind != Found::File || !set.is_match(&p) || excludes.excludes(base, &p) {
            continue;
        }
        if max != 0 && found.len() as i64 == max {
            truncated = true;
            break;
        }
        found.push(p.to_string_lossy().into_owned());
    }
    if found.is_empty() {
        return Ok(ok(NO_MATCHES));
    }
    let mut text = found.join("\n");
    if truncated {
        text.push_str(&format!("\n[results truncated at {max}; raise max (0 = unlimited) or narrow the globs]"));
    }
    Ok(ok(text))
}

pub(super) fn grep_files(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let pattern = match args.get("regex") {
        None => return Err(missing("regex")),
        Some(Value::Bool(_)) => {
            return Err(invalid(
                "`regex` is the pattern itself (a string); the boolean `regex` flag was removed: every grep_files \
                 query is a regex, so put the pattern in `regex`",
            ));
        }
        Some(_) => args.req_str("regex")?,
    };
    let dir_given = args.str("directory")?;
    let patterns = args.strs("globs")?.filter(|g| !g.is_empty());
    if dir_given.is_none() && patterns.is_none() {
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
    let re = ecma::build(&pattern, case_insensitive).map_err(|e| rpc(INTERNAL, e))?;
    let excludes = Excludes::new("excludeGlobs", &excludes)?;

    // The directory to walk, and the anchor of relative globs.
    let dir = dir_given.as_deref().map(|d| directory(call, d)).transpose()?;
    let anchor = match &dir {
        Some(d) => d.clone(),
        None => call.ctx.vfs.resolve(".").map_err(core)?,
    };
    let base = anchor.real().to_path_buf();
    let mut skipped = 0;
    // The directories to walk: the directory (or the anchor), plus the literal base of each
    // absolute glob outside it; a base outside the roots is a skipped path.
    let mut starts: Vec<SandboxPath> = vec![dir.clone().unwrap_or_else(|| anchor.clone())];
    let set = match &patterns {
        None => None,
        Some(patterns) => {
            for p in patterns.iter().filter(|p| p.starts_with('/')) {
                match call.ctx.vfs.resolve(&literal_base(p)) {
                    Ok(b) if !b.real().starts_with(anchor.real()) && call.ctx.vfs.exists(&b) => starts.push(b),
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::PathEscape => skipped += 1,
                    Err(_) => {}
                }
            }
            Some(globs("globs", patterns, Some(anchor.real()))?)
        }
    };
    let mut files: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for start in &starts {
        for (p, kind) in walk(call, start)? {
            if set.as_ref().is_some_and(|set| !set.is_match(&p)) || excludes.excludes(&base, &p) {
                continue;
            }
            match kind {
                Found::File if seen.insert(p.clone()) => files.push(p),
                // A candidate that is a symlink leading outside the roots is skipped and counted.
                Found::Other if leads_outside(call, &p) => skipped += 1,
                _ => {}
            }
        }
    }
    files.sort();
    let mut out = Grep { lines: Vec::new(), matches: 0, max, truncated: false };
    // Files are read and matched in parallel, a batch at a time, and their matches added in path
    // order, so the output and the cap do not depend on which thread finished first.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    for batch in files.chunks(threads * 16) {
        call.ctx.cancel.check().map_err(core)?;
        if out.truncated {
            break;
        }
        let scanned = scan_batch(call, batch, &re, threads);
        for (f, found) in batch.iter().zip(scanned) {
            if out.truncated {
                break;
            }
            if let Some((text, hits)) = found.map_err(|e| rpc(INTERNAL, e))? {
                out.add(&f.to_string_lossy(), &text, hits, context);
            }
        }
    }
    let mut text = String::new();
    if out.truncated {
        text.push_str(&format!("[results truncated at {max} matches; narrow the search or raise maxResults]\n"));
    }
    for l in &out.lines {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(&format!("[{} matches]", out.matches));
    if skipped > 0 {
        text.push_str(&format!("\n[{skipped} path(s) skipped: outside the allowed directories]"));
    }
    Ok(ok(text))
}

/// The directory an absolute glob's literal leading components name.
fn literal_base(pattern: &str) -> String {
    let mut base = Vec::new();
    let parts: Vec<&str> = pattern.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        if part.contains(['*', '?', '{', '}', '[']) {
            break;
        }
        base.push(*part);
    }
    let b = base.join("/");
    if b.is_empty() {
        "/".to_owned()
    } else {
        b
    }
}

/// The text of the file at the real path `p` (found by a walk inside the roots): the open
/// buffer, else the file, or `None` when it is binary or unreadable.
fn file_text(call: &Call<'_>, p: &Path) -> Option<String> {
    if let Some(open) = call.ctx.vfs.overlay().get(p) {
        return Some(open.doc.text());
    }
    let file = call.ctx.vfs.open_real(p).ok()?;
    if file.metadata().ok()?.len() > call.ctx.config.max_grep_file_bytes {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(call.ctx.config.max_grep_file_bytes).read_to_end(&mut bytes).ok()?;
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Grep-style output being built.
struct Grep {
    lines: Vec<String>,
    matches: usize,
    max: usize,
    truncated: bool,
}

impl Grep {
    /// Adds the matching lines `hits` (0-based, sorted) of one file, up to the cap, with
    /// `context` lines around them; with context, groups are separated by `--`, across files too.
    fn add(&mut self, path: &str, text: &str, mut hits: Vec<usize>, context: usize) {
        if hits.is_empty() {
            return;
        }
        if self.matches + hits.len() > self.max {
            hits.truncate(self.max - self.matches);
            self.truncated = true;
        }
        self.matches += hits.len();
        let lines = lines_of(text);
        // Merge each match's window into groups of consecutive lines.
        let mut groups: Vec<(usize, usize)> = Vec::new();
        for &h in &hits {
            let (s, e) = (h.saturating_sub(context), (h + context).min(lines.len() - 1));
            match groups.last_mut() {
                Some(last) if s <= last.1 + 1 => last.1 = last.1.max(e),
                _ => groups.push((s, e)),
            }
        }
        for (s, e) in groups {
            // As grep does, groups are separated only when context lines are shown.
            if context > 0 && !self.lines.is_empty() {
                self.lines.push("--".to_owned());
            }
            for (i, line) in lines.iter().enumerate().take(e + 1).skip(s) {
                let sep = if hits.binary_search(&i).is_ok() { ':' } else { '-' };
                self.lines.push(format!("{path}{sep}{}{sep}{line}", i + 1));
            }
        }
    }
}

/// The lines of `text`, without their line breaks (`\n` or `\r\n`).
fn lines_of(text: &str) -> Vec<&str> {
    text.strip_suffix('\n').unwrap_or(text).split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// What reading and matching one file gives: its text and matching lines, or `None` when it is
/// skipped (binary, unreadable) or has no match.
type Scanned = Result<Option<(String, Vec<usize>)>, String>;

/// Scans `files` on up to `threads` threads; results in the order of `files`.
fn scan_batch(call: &Call<'_>, files: &[PathBuf], re: &fancy_regex::Regex, threads: usize) -> Vec<Scanned> {
    let mut out: Vec<Scanned> = Vec::with_capacity(files.len());
    let per = files.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(per)
            .map(|chunk| scope.spawn(move || chunk.iter().map(|f| scan(call, f, re)).collect::<Vec<_>>()))
            .collect();
        for w in workers {
            match w.join() {
                Ok(results) => out.extend(results),
                Err(_) => out.push(Err("internal error: a search thread panicked".to_owned())),
            }
        }
    });
    out.resize_with(files.len(), || Ok(None));
    out
}

/// Reads the file at `p` and finds its matching lines.
fn scan(call: &Call<'_>, p: &Path, re: &fancy_regex::Regex) -> Scanned {
    if call.ctx.cancel.is_cancelled() {
        return Ok(None);
    }
    let Some(text) = file_text(call, p).filter(|t| !t.is_empty()) else { return Ok(None) };
    let failed = |e: fancy_regex::Error| format!("regex failed while matching {}: {e}", p.display());
    // Most files do not match: one pass over the whole text rules them out. (With `\r\n` line
    // ends `$` would not match before the `\r`, so such files are always matched line by line.)
    if !text.contains('\r') && !re.is_match(&text).map_err(failed)? {
        return Ok(None);
    }
    let mut hits = Vec::new();
    for (i, line) in lines_of(&text).iter().enumerate() {
        if re.is_match(line).map_err(failed)? {
            hits.push(i);
        }
    }
    Ok((!hits.is_empty()).then_some((text, hits)))
}
