//! The files a list of paths and glob patterns names (the filesystem profile's `edit_files`).
//!
//! An entry containing `*`, `?`, `{`, `}` or `[` is a glob, absolute or relative to the first
//! root, expanded by walking the directory its literal leading components name (ignored files
//! left out); any other entry is a path as given. Each file comes once, in the order found.

use std::collections::HashSet;

use globset::GlobBuilder;

use crate::error::{Error, ErrorKind};
use crate::tools::Context;
use crate::workspace::{SandboxPath, WalkOptions};

/// Why the entries could not be expanded.
#[derive(Debug)]
pub enum ExpandError {
    /// A path the sandbox refused, or a walk that was cancelled.
    Core(Error),
    /// A glob whose literal base lies outside the roots.
    GlobOutside {
        /// The glob.
        pattern: String,
    },
    /// A glob match that is a link leading outside the roots.
    GlobLeadsOutside {
        /// The glob.
        pattern: String,
        /// The match, absolute.
        shown: String,
    },
    /// A glob that matched no files.
    GlobEmpty {
        /// The glob.
        pattern: String,
    },
    /// A glob that does not parse.
    GlobInvalid {
        /// The glob.
        pattern: String,
        /// Why.
        reason: String,
    },
}

/// The files `entries` name: literal paths as given, globs expanded (sorted), each file once.
pub fn expand_paths(ctx: &Context<'_>, entries: &[String]) -> Result<Vec<SandboxPath>, ExpandError> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for entry in entries {
        let found = if is_glob(entry) {
            expand_glob(ctx, entry)?
        } else {
            vec![ctx.vfs.resolve(entry).map_err(ExpandError::Core)?]
        };
        for p in found {
            if seen.insert(p.real().to_path_buf()) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// Whether a `paths` entry is a glob pattern.
fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '{', '}', '['])
}

/// The files matching the glob `pattern` (absolute, or relative to the first root), found by
/// walking the directory its literal prefix names.
fn expand_glob(ctx: &Context<'_>, pattern: &str) -> Result<Vec<SandboxPath>, ExpandError> {
    let (base, rest) = split_glob(pattern);
    let base_given = if base.is_empty() { ".".to_owned() } else { base.clone() };
    let base_path = ctx.vfs.resolve(&base_given).map_err(|e| match e.kind() {
        ErrorKind::PathEscape => ExpandError::GlobOutside { pattern: pattern.to_owned() },
        _ => ExpandError::Core(e),
    })?;
    let empty = || ExpandError::GlobEmpty { pattern: pattern.to_owned() };
    if !ctx.vfs.exists(&base_path) {
        return Err(empty());
    }
    let full = format!("{}/{rest}", globset::escape(&base_path.real().to_string_lossy()).trim_end_matches('/'));
    let glob = GlobBuilder::new(&full)
        .literal_separator(true)
        .build()
        .map_err(|e| ExpandError::GlobInvalid { pattern: pattern.to_owned(), reason: e.to_string() })?
        .compile_matcher();
    let opts = WalkOptions { hidden: true, gitignore: true, max_depth: None, skip_build_dirs: false };
    let mut found = Vec::new();
    for entry in ctx.vfs.workspace().walker(&base_path, opts).sort_by_file_name(|a, b| a.cmp(b)).build() {
        ctx.cancel.check().map_err(ExpandError::Core)?;
        let Ok(entry) = entry else { continue };
        let kind = entry.file_type();
        if kind.is_some_and(|t| t.is_dir()) || !glob.is_match(entry.path()) {
            continue;
        }
        // The path is shown absolute, as the glob was written. A walk does not follow links: a
        // matching link is resolved here, and one leading outside the roots fails the call.
        let shown = entry.path().to_string_lossy().into_owned();
        let path = ctx.vfs.resolve(&shown).map_err(|e| match e.kind() {
            ErrorKind::PathEscape => {
                ExpandError::GlobLeadsOutside { pattern: pattern.to_owned(), shown: shown.clone() }
            }
            _ => ExpandError::Core(e),
        })?;
        if kind.is_some_and(|t| t.is_file()) || path.real().is_file() {
            found.push(path);
        }
    }
    if found.is_empty() {
        return Err(empty());
    }
    Ok(found)
}

/// Splits a glob into the directory its literal leading components name and the rest.
fn split_glob(pattern: &str) -> (String, String) {
    let mut base: Vec<&str> = Vec::new();
    let parts: Vec<&str> = pattern.split('/').collect();
    let mut i = 0;
    while i < parts.len() - 1 && !is_glob(parts[i]) {
        base.push(parts[i]);
        i += 1;
    }
    let mut base = base.join("/");
    if base.is_empty() && pattern.starts_with('/') {
        base = "/".to_owned();
    }
    (base, parts[i..].join("/"))
}

#[cfg(test)]
mod tests {
    use super::split_glob;

    #[test]
    fn splits_globs_at_the_first_pattern_component() {
        let table = [
            ("/w/src/**/*.rs", "/w/src", "**/*.rs"),
            ("src/*.rs", "src", "*.rs"),
            ("*.rs", "", "*.rs"),
            ("/w/{a,b}/x.txt", "/w", "{a,b}/x.txt"),
            ("a/b/c?.md", "a/b", "c?.md"),
        ];
        for (pattern, base, rest) in table {
            assert_eq!(split_glob(pattern), (base.to_owned(), rest.to_owned()), "{pattern}");
        }
    }
}
