//! Files found by name under a directory: by a case-insensitive substring of the basename, or by
//! globs (the filesystem profile's `search_files` and `glob_search`).
//!
//! Both walk every file, hidden and ignored ones included, and return absolute paths in path
//! order.

use super::walk_filter::{directory, globs, walk, Excludes, Found, SearchError};
use crate::tools::Context;

/// A search by name.
#[derive(Debug, Clone)]
pub struct NameSearch {
    /// The directory searched, recursively.
    pub directory: String,
    /// The substring a basename must contain, compared without case.
    pub needle: String,
    /// Exclusion globs (`excludeGlobs`).
    pub excludes: Vec<String>,
}

/// Every file and directory under `args.directory` whose basename contains `args.needle`.
pub fn find_by_name(ctx: &Context<'_>, args: NameSearch) -> Result<Vec<String>, SearchError> {
    let needle = args.needle.to_lowercase();
    let dir = directory(ctx, &args.directory)?;
    let excludes = Excludes::new("excludeGlobs", &args.excludes)?;
    let base = dir.real();
    Ok(walk(ctx, &dir)?
        .into_iter()
        .filter(|(p, _)| !excludes.excludes(base, p))
        .filter(|(p, _)| p.file_name().is_some_and(|n| n.to_string_lossy().to_lowercase().contains(&needle)))
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .collect())
}

/// A search by globs.
#[derive(Debug, Clone)]
pub struct GlobSearch {
    /// The directory searched, recursively; relative globs are relative to it.
    pub directory: String,
    /// The globs a file's path must match one of (`globs`).
    pub globs: Vec<String>,
    /// Exclusion globs (`excludeGlobs`).
    pub excludes: Vec<String>,
    /// The most files returned; 0 for all.
    pub max: usize,
}

/// The files a glob search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobFound {
    /// Their absolute paths, in path order.
    pub paths: Vec<String>,
    /// Whether more matched than `max`.
    pub truncated: bool,
}

/// The files under `args.directory` that match one of `args.globs`.
pub fn find_by_glob(ctx: &Context<'_>, args: GlobSearch) -> Result<GlobFound, SearchError> {
    let dir = directory(ctx, &args.directory)?;
    let set = globs("globs", &args.globs, Some(dir.real()))?;
    let excludes = Excludes::new("excludeGlobs", &args.excludes)?;
    let base = dir.real();
    let mut paths = Vec::new();
    let mut truncated = false;
    for (p, kind) in walk(ctx, &dir)? {
        if kind != Found::File || !set.is_match(&p) || excludes.excludes(base, &p) {
            continue;
        }
        if args.max != 0 && paths.len() == args.max {
            truncated = true;
            break;
        }
        paths.push(p.to_string_lossy().into_owned());
    }
    Ok(GlobFound { paths, truncated })
}
