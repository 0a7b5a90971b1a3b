//! File contents searched with an ECMAScript regex, grep-style (the filesystem profile's
//! `grep_files`).
//!
//! The search walks a directory (or the first root) plus the literal base of every absolute
//! glob outside it, every file included, hidden and ignored ones too; globs filter the files
//! and exclusions drop them. Files with a NUL byte in their first 4 KiB, and files over the grep
//! size limit, are skipped. Matching is line by line; the result is the matching lines with
//! their context, merged into groups of consecutive lines, in path and line order, up to a cap.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::walk_filter::{directory, globs, leads_outside, walk, Excludes, Found, SearchError};
use crate::edit::ecma;
use crate::error::{Error, ErrorKind};
use crate::tools::Context;
use crate::workspace::SandboxPath;

/// Bytes looked at for a NUL to call a file binary.
const BINARY_SNIFF: usize = 4096;

/// A grep.
#[derive(Debug, Clone)]
pub struct EcmaGrep {
    /// The ECMAScript regex searched in each line.
    pub regex: String,
    /// Whether matching ignores case.
    pub case_insensitive: bool,
    /// The directory searched, recursively (the first root when `None`, which then needs globs).
    pub directory: Option<String>,
    /// File filters: relative ones anchored to the directory (or the first root), absolute ones
    /// as they are.
    pub globs: Option<Vec<String>>,
    /// Exclusion globs.
    pub excludes: Vec<String>,
    /// Lines of context shown before and after each match.
    pub context: usize,
    /// The most matches returned.
    pub max: usize,
}

/// What a grep found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grepped {
    /// Groups of consecutive lines around matches, in path then line order.
    pub groups: Vec<Group>,
    /// How many matching lines the groups hold.
    pub matches: usize,
    /// Whether matches were left out at the cap.
    pub truncated: bool,
    /// How many candidate paths were skipped for leading outside the roots.
    pub skipped: usize,
}

/// Consecutive lines of one file around one or more matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The file's absolute path.
    pub path: String,
    /// The lines, in order.
    pub lines: Vec<GroupLine>,
}

/// One line of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupLine {
    /// Its 1-based number.
    pub number: usize,
    /// Its text, without the line break.
    pub text: String,
    /// Whether it matches (rather than being context).
    pub hit: bool,
}

/// Searches the files `args` names for lines matching `args.regex`.
pub fn ecma_grep(ctx: &Context<'_>, args: EcmaGrep) -> Result<Grepped, SearchError> {
    let re = ecma::build(&args.regex, args.case_insensitive).map_err(|e| Error::new(ErrorKind::InvalidInput, e))?;
    let excludes = Excludes::new("excludeGlobs", &args.excludes)?;

    // The directory to walk, and the anchor of relative globs.
    let dir = args.directory.as_deref().map(|d| directory(ctx, d)).transpose()?;
    let anchor = match &dir {
        Some(d) => d.clone(),
        None => ctx.vfs.resolve(".")?,
    };
    let base = anchor.real().to_path_buf();
    let mut skipped = 0;
    // The directories to walk: the directory (or the anchor), plus the literal base of each
    // absolute glob outside it; a base outside the roots is a skipped path.
    let mut starts: Vec<SandboxPath> = vec![dir.clone().unwrap_or_else(|| anchor.clone())];
    let set = match &args.globs {
        None => None,
        Some(patterns) => {
            for p in patterns.iter().filter(|p| p.starts_with('/')) {
                match ctx.vfs.resolve(&literal_base(p)) {
                    Ok(b) if !b.real().starts_with(anchor.real()) && ctx.vfs.exists(&b) => starts.push(b),
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::PathEscape => skipped += 1,
                    Err(_) => {}
                }
            }
            Some(globs("globs", patterns, Some(anchor.real()))?)
        }
    };
    let mut files: Vec<PathBuf> = Vec::new();
    let mut seen = HashSet::new();
    for start in &starts {
        for (p, kind) in walk(ctx, start)? {
            if set.as_ref().is_some_and(|set| !set.is_match(&p)) || excludes.excludes(&base, &p) {
                continue;
            }
            match kind {
                Found::File if seen.insert(p.clone()) => files.push(p),
                // A candidate that is a symlink leading outside the roots is skipped and counted.
                Found::Other if leads_outside(ctx, &p) => skipped += 1,
                _ => {}
            }
        }
    }
    files.sort();
    let mut out = Collector { groups: Vec::new(), matches: 0, max: args.max, truncated: false };
    // Files are read and matched in parallel, a batch at a time, and their matches added in path
    // order, so the output and the cap do not depend on which thread finished first.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    for batch in files.chunks(threads * 16) {
        ctx.cancel.check()?;
        if out.truncated {
            break;
        }
        let scanned = scan_batch(ctx, batch, &re, threads);
        for (f, found) in batch.iter().zip(scanned) {
            if out.truncated {
                break;
            }
            if let Some((text, hits)) = found? {
                out.add(&f.to_string_lossy(), &text, hits, args.context);
            }
        }
    }
    Ok(Grepped { groups: out.groups, matches: out.matches, truncated: out.truncated, skipped })
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
fn file_text(ctx: &Context<'_>, p: &Path) -> Option<String> {
    if let Some(open) = ctx.vfs.overlay().get(p) {
        return Some(open.doc.text());
    }
    let file = ctx.vfs.open_real(p).ok()?;
    if file.metadata().ok()?.len() > ctx.config.max_grep_file_bytes {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(ctx.config.max_grep_file_bytes).read_to_end(&mut bytes).ok()?;
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The groups being collected, up to the cap.
struct Collector {
    groups: Vec<Group>,
    matches: usize,
    max: usize,
    truncated: bool,
}

impl Collector {
    /// Adds the matching lines `hits` (0-based, sorted) of one file, up to the cap, with
    /// `context` lines around them, merged into groups of consecutive lines.
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
        let mut windows: Vec<(usize, usize)> = Vec::new();
        for &h in &hits {
            let (s, e) = (h.saturating_sub(context), (h + context).min(lines.len() - 1));
            match windows.last_mut() {
                Some(last) if s <= last.1 + 1 => last.1 = last.1.max(e),
                _ => windows.push((s, e)),
            }
        }
        for (s, e) in windows {
            let lines = (s..=e)
                .map(|i| GroupLine { number: i + 1, text: lines[i].to_owned(), hit: hits.binary_search(&i).is_ok() })
                .collect();
            self.groups.push(Group { path: path.to_owned(), lines });
        }
    }
}

/// The lines of `text`, without their line breaks (`\n` or `\r\n`).
fn lines_of(text: &str) -> Vec<&str> {
    text.strip_suffix('\n').unwrap_or(text).split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// What reading and matching one file gives: its text and matching lines, or `None` when it is
/// skipped (binary, unreadable) or has no match.
type Scanned = Result<Option<(String, Vec<usize>)>, Error>;

/// Scans `files` on up to `threads` threads; results in the order of `files`.
fn scan_batch(ctx: &Context<'_>, files: &[PathBuf], re: &fancy_regex::Regex, threads: usize) -> Vec<Scanned> {
    let mut out: Vec<Scanned> = Vec::with_capacity(files.len());
    let per = files.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(per)
            .map(|chunk| scope.spawn(move || chunk.iter().map(|f| scan(ctx, f, re)).collect::<Vec<_>>()))
            .collect();
        for w in workers {
            match w.join() {
                Ok(results) => out.extend(results),
                Err(_) => out.push(Err(Error::new(ErrorKind::IoError, "internal error: a search thread panicked"))),
            }
        }
    });
    out.resize_with(files.len(), || Ok(None));
    out
}

/// Reads the file at `p` and finds its matching lines.
fn scan(ctx: &Context<'_>, p: &Path, re: &fancy_regex::Regex) -> Scanned {
    if ctx.cancel.is_cancelled() {
        return Ok(None);
    }
    let Some(text) = file_text(ctx, p).filter(|t| !t.is_empty()) else { return Ok(None) };
    let failed = |e: fancy_regex::Error| {
        Error::new(ErrorKind::InvalidInput, format!("regex failed while matching {}: {e}", p.display()))
    };
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
