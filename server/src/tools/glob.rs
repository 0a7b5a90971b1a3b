//! `glob`: the files whose path matches a pattern, newest first.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use ignore::DirEntry;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::search::{walk_parallel, PathGlob};
use super::{check_range, parse_args, schema_of, Context, Effects, Output, Tool};
use crate::error::{Error, ErrorKind, Result};
use crate::vfs::EntryKind;
use crate::workspace::{SandboxPath, WalkOptions};

/// Paths returned when no `limit` is given.
pub const DEFAULT_LIMIT: usize = 1000;

/// Arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob pattern. Without `/` it matches file names at any depth (`*.rs`, `Cargo.toml`); with
    /// `/` it matches the path relative to `path` (`src/**/*.ts`; a leading `/` anchors too).
    /// `*` and `?` stay within one directory, `**` spans directories, `{a,b}` alternates,
    /// `[abc]` is a class.
    pub pattern: String,
    /// Directory to search: absolute inside a workspace root, or relative to the first root.
    /// Defaults to the first root.
    #[serde(default)]
    pub path: Option<String>,
    /// Skip files that `.gitignore`, `.ignore` or git's exclude files ignore.
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub respect_gitignore: Option<bool>,
    /// Most paths to return; the output says how many more matched.
    #[serde(default)]
    #[schemars(range(min = 1), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<i64>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "glob",
    description: "Find files by name or path pattern, newest first (by modification time; ties \
by path). `*.rs` or `Cargo.toml` (no `/`) match file names at any depth; a pattern with `/` such as \
`src/**/*.ts` matches the path relative to `path`. `*` and `?` never cross `/`, `**` does, `{a,b}` \
alternates. Lists files only, one path per line relative to the workspace root; hidden files are \
included, `.git/` and gitignored files are skipped (set respect_gitignore=false to include ignored \
ones), symlinks are not followed. Returns at most `limit` paths (default 1000) and says how many \
more exist. Prints `(no matches)` when nothing matches. Use grep to search file contents.",
    schema: schema_of::<GlobArgs>,
    effects: Effects::READ,
    quick: false,
    run: |ctx, args: Value| glob(ctx, parse_args(args)?).map(Output::Text),
};

/// Lists the files matching `args.pattern`.
pub fn glob(ctx: &Context<'_>, args: GlobArgs) -> Result<String> {
    let pattern = PathGlob::new("pattern", &args.pattern)?;
    let limit = match args.limit {
        None => DEFAULT_LIMIT,
        Some(n) => {
            check_range("limit", n, 1, i64::MAX)?;
            usize::try_from(n).unwrap_or(usize::MAX)
        }
    };
    let dir = resolve_dir(ctx, args.path.as_deref())?;
    let opts = WalkOptions { gitignore: args.respect_gitignore.unwrap_or(true), ..WalkOptions::default() };
    let builder = ctx.vfs.workspace().walker(&dir, opts);
    let base = dir.real();
    let pattern = &pattern;
    let mut found: Vec<(SystemTime, PathBuf)> = walk_parallel(&builder, ctx.cancel, || {
        let mut times = crate::sys::ModifiedTimes::default();
        move |entry: DirEntry, out: &mut Vec<(SystemTime, PathBuf)>| {
            // Symlinks are yielded as links and never followed; only regular files are listed.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return;
            }
            if !pattern.is_match(crate::workspace::below(entry.path(), base).unwrap_or(entry.path())) {
                return;
            }
            let modified = times.of(&entry).unwrap_or(UNIX_EPOCH);
            out.push((modified, entry.into_path()));
        }
    });
    // A cancelled walk stopped early: its partial list must not pass for a complete one.
    ctx.cancel.check()?;
    if found.is_empty() {
        return Ok("(no matches)".to_owned());
    }
    let newest_first = |a: &(SystemTime, PathBuf), b: &(SystemTime, PathBuf)| {
        b.0.cmp(&a.0).then_with(|| crate::workspace::path_order(&a.1, &b.1))
    };
    let total = found.len();
    // Only the first `limit` are shown: they are selected in linear time, and only they sorted.
    if total > limit {
        found.select_nth_unstable_by(limit, newest_first);
        found.truncate(limit);
    }
    found.sort_unstable_by(newest_first);
    let mut out = String::with_capacity(total.min(limit) * 40);
    for (_, path) in found.iter().take(limit) {
        out.push_str(&ctx.vfs.display(path));
        out.push('\n');
    }
    out.pop();
    if total > limit {
        out.push_str(&format!(
            "\n\n(showing the {limit} newest of {total} matching files; {} more not shown: narrow \
             `pattern` or `path`, or raise `limit`)",
            total - limit
        ));
    }
    Ok(out)
}

/// Resolves the directory argument `path` (default: the first root); it must be a directory.
fn resolve_dir(ctx: &Context<'_>, path: Option<&str>) -> Result<SandboxPath> {
    let dir = ctx.vfs.resolve(path.unwrap_or("."))?;
    let meta = ctx.vfs.metadata(&dir)?;
    if meta.kind != EntryKind::Dir {
        return Err(Error::new(
            ErrorKind::NotADirectory,
            format!("{dir}: not a directory; `path` names the directory to search (match a file name with `pattern`)"),
        )
        .with_path(dir.given()));
    }
    Ok(dir)
}

#[cfg(all(test, unix))]
#[path = "glob_tests.rs"]
mod tests;
