//! What the filesystem profile's searches share: walks that see every file, glob filters
//! anchored to a directory, and exclusions that match a path, its name or any parent.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, ErrorKind, Result};
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::{SandboxPath, WalkOptions};

/// What the walks see: every file, hidden ones and ignored ones included (the contract searches
/// "every file under" a directory); `.git` is always skipped.
const EVERY_FILE: WalkOptions = WalkOptions { hidden: true, gitignore: false, max_depth: None, skip_build_dirs: false };

/// Why a search could not run.
#[derive(Debug)]
pub enum SearchError {
    /// A glob argument that does not parse; the message names the field and the glob.
    Glob(String),
    /// Anything else, as the core says it.
    Core(Error),
}

impl From<Error> for SearchError {
    fn from(e: Error) -> SearchError {
        SearchError::Core(e)
    }
}

/// Resolves a directory to search: inside the roots, existing, and a directory
/// (`not_a_directory` otherwise).
pub fn directory(ctx: &Context<'_>, given: &str) -> Result<SandboxPath> {
    let dir = ctx.vfs.resolve(given)?;
    let meta = ctx.vfs.metadata(&dir)?;
    if meta.kind != EntryKind::Dir {
        return Err(Error::new(ErrorKind::NotADirectory, format!("{given}: not a directory")).with_path(given));
    }
    Ok(dir)
}

/// The glob set of argument `field`; `anchor` (a real directory) is prefixed to relative
/// patterns when given.
pub fn globs(field: &str, patterns: &[String], anchor: Option<&Path>) -> Result<GlobSet, SearchError> {
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
            .map_err(|e| SearchError::Glob(format!("`{field}`: `{p}` is not a valid glob: {e}")))?;
        set.add(g);
    }
    set.build().map_err(|e| SearchError::Glob(format!("`{field}`: {e}")))
}

/// Exclusions: a path is excluded when its path relative to the search's base, its basename, or
/// its absolute path matches (so `node_modules`, `**/*.min.js` and `/abs/dir/**` all work).
#[derive(Debug)]
pub struct Excludes {
    set: GlobSet,
}

impl Excludes {
    /// The exclusions of argument `field`.
    pub fn new(field: &str, patterns: &[String]) -> Result<Excludes, SearchError> {
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            let g = GlobBuilder::new(p.trim_start_matches("./"))
                .literal_separator(false)
                .build()
                .map_err(|e| SearchError::Glob(format!("`{field}`: `{p}` is not a valid glob: {e}")))?;
            set.add(g);
        }
        Ok(Excludes { set: set.build().map_err(|e| SearchError::Glob(format!("`{field}`: {e}")))? })
    }

    /// Whether `path` or one of its parents below `base` is excluded.
    pub fn excludes(&self, base: &Path, path: &Path) -> bool {
        if self.set.is_empty() {
            return false;
        }
        // The path and its parents up to `base` (or, for a path elsewhere, up to the root).
        let mut cur = Some(path);
        while let Some(p) = cur {
            if p == base || p.parent().is_none() {
                break;
            }
            let rel = crate::workspace::below(p, base).unwrap_or(p);
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
pub enum Found {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symlink (walks never follow them) or another kind of entry.
    Other,
}

/// Every entry under `dir` (not `dir` itself), sorted by path.
pub fn walk(ctx: &Context<'_>, dir: &SandboxPath) -> Result<Vec<(PathBuf, Found)>> {
    let mut out = Vec::new();
    let walker = ctx.vfs.workspace().walker(dir, EVERY_FILE).sort_by_file_name(|a, b| a.cmp(b)).build();
    for entry in walker {
        ctx.cancel.check()?;
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
pub fn leads_outside(ctx: &Context<'_>, p: &Path) -> bool {
    p.is_symlink() && matches!(ctx.vfs.resolve(&p.to_string_lossy()), Err(e) if e.kind() == ErrorKind::PathEscape)
}
