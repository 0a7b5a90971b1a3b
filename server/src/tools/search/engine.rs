//! The search engine behind `grep`: a parallel walk with one matcher and one searcher per thread
//! (as ripgrep's `crates/core/main.rs` does), open editor buffers searched in place of their
//! files, and results gathered per thread and sorted once at the end.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::DirEntry;

use super::{push_cut, walk_parallel, PathGlob};
use crate::error::{Error, ErrorKind, Result};
use crate::tools::Context;
use crate::vfs::{EntryKind, OpenDocument};
use crate::workspace::{SandboxPath, WalkOptions};

/// What a search keeps of each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collect {
    /// Only whether the file matches: the search of a file stops at its first match.
    Files,
    /// The number of matching lines.
    Count,
    /// Matching lines and their context lines, numbered.
    Lines,
}

/// A validated search request.
#[derive(Debug, Clone)]
pub struct Query {
    /// The compiled pattern.
    pub matcher: RegexMatcher,
    /// What to keep of each file.
    pub collect: Collect,
    /// Whether a match may span lines.
    pub multiline: bool,
    /// Context lines shown before each match (only when collecting lines).
    pub before: usize,
    /// Context lines shown after each match (only when collecting lines).
    pub after: usize,
    /// Honour `.gitignore` and friends.
    pub gitignore: bool,
    /// Bytes of line text a search keeps in memory at most (give or take one file per thread);
    /// past it, files only count their lines, and [`fill`] searches again the few a page shows.
    /// This bounds memory when a broad pattern matches most of a large tree.
    pub keep_bytes: usize,
}

/// The default [`Query::keep_bytes`].
pub const KEEP_BYTES: usize = 32 << 20;

impl Query {
    /// Compiles `pattern` (Rust regex syntax) as ripgrep does: `^` and `$` match at line
    /// boundaries, and unless `multiline` is set no match crosses a line break.
    pub fn matcher(pattern: &str, ignore_case: bool, multiline: bool) -> Result<RegexMatcher> {
        let mut b = RegexMatcherBuilder::new();
        b.multi_line(true).case_insensitive(ignore_case).octal(false);
        if !multiline {
            // Telling the matcher lines end in `\n` lets it search whole buffers at once and
            // only then find the line of a match, which is what makes the common case fast.
            b.line_terminator(Some(b'\n'));
        }
        b.build(pattern).map_err(|e| {
            // grep-regex reports syntax errors against the pattern wrapped in a group of its own;
            // the regex crate, which has the same syntax, shows the pattern as it was given.
            let e = match regex::Regex::new(pattern) {
                Err(regex::Error::Syntax(s)) => s,
                _ => e.to_string(),
            };
            let hint = if !multiline && (pattern.contains("\\n") || pattern.contains('\n')) {
                "; set `multiline` to true to match across lines"
            } else {
                ""
            };
            Error::invalid(format!("`pattern`: invalid regex: {e}{hint}"))
        })
    }

    fn searcher(&self) -> Searcher {
        let lines = self.collect == Collect::Lines;
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\0'))
            .line_number(lines)
            .multi_line(self.multiline)
            .before_context(if lines { self.before } else { 0 })
            .after_context(if lines { self.after } else { 0 })
            .build()
    }
}

/// One shown line of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// A matching line (else a context line).
    pub is_match: bool,
    /// Where the line's text ends in [`FileHits::text`]; it starts where the previous one ends.
    end: usize,
}

/// What a search found in one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    /// The file's real path.
    pub path: PathBuf,
    /// The number of matching lines (1 when only files are collected).
    pub count: u64,
    /// The number of shown lines (matching and context) when lines are collected.
    pub shown: usize,
    /// Shown lines, in order: all [`FileHits::shown`] of them, or none when the search was over
    /// its memory budget and [`fill`] has not been called.
    pub lines: Vec<Line>,
    /// The shown lines' text, cut to [`super::MAX_LINE_CHARS`], back to back.
    text: String,
}

impl FileHits {
    /// The text of shown line `i`, without its line break.
    pub fn line_text(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.lines[i - 1].end };
        &self.text[start..self.lines[i].end]
    }
}

/// The outcome of a search.
#[derive(Debug, Default)]
pub struct Found {
    /// Files with at least one match, sorted by path.
    pub files: Vec<FileHits>,
    /// Files skipped for being larger than `max_grep_file_bytes`.
    pub too_large: usize,
    /// Files that could not be read.
    pub unreadable: usize,
}

/// Searches `target` (a file or a directory) for `query`. A directory is walked in parallel with
/// the gitignore stack, `.git/` skipped, hidden files included and symlinks never followed;
/// `glob` filters the files of a walk. An open document is searched in its buffer's text
/// instead of its file; an open document never saved to disk is searched too when it lies
/// under `target`. A file named directly is searched even if ignored, and fails with
/// `too_large` or `is_binary` rather than being skipped.
pub fn search(ctx: &Context<'_>, query: &Query, target: &SandboxPath, glob: Option<&PathGlob>) -> Result<Found> {
    let meta = ctx.vfs.metadata(target)?;
    let counters = Counters::default();
    let mut files = match meta.kind {
        EntryKind::File => search_one(ctx, query, target, &counters)?,
        EntryKind::Dir => search_dir(ctx, query, target, glob, &counters),
        EntryKind::Symlink | EntryKind::Other => {
            return Err(Error::new(ErrorKind::NotAFile, format!("{target}: not a regular file or directory"))
                .with_path(target.given()));
        }
    };
    // A cancelled walk stopped early: its partial results must not pass for complete ones.
    ctx.cancel.check()?;
    // Sorting once, at the end, keeps the output deterministic whatever the threads did.
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Ok(Found {
        files,
        too_large: counters.too_large.load(Ordering::Relaxed),
        unreadable: counters.unreadable.load(Ordering::Relaxed),
    })
}

/// Searches again the files in `files` whose lines were not kept (see [`Query::keep_bytes`]), so
/// that their lines can be shown. A file that changed since the first search shows its new lines.
pub fn fill(ctx: &Context<'_>, query: &Query, files: &mut [FileHits]) {
    let counters = Counters::default();
    let mut worker = Worker { keep_bytes: usize::MAX, ..Worker::new(ctx, query, &counters) };
    for f in files.iter_mut().filter(|f| f.lines.len() < f.shown) {
        let outcome = match worker.open_document(&f.path) {
            Some(open) => worker.search_buffer(open),
            None => worker.search_disk(&f.path),
        };
        if let Outcome::Hits = outcome {
            let again = worker.sink.take(std::mem::take(&mut f.path));
            *f = FileHits { shown: f.shown, ..again };
        }
    }
}

fn search_one(ctx: &Context<'_>, query: &Query, target: &SandboxPath, counters: &Counters) -> Result<Vec<FileHits>> {
    let mut worker = Worker::new(ctx, query, counters);
    let outcome = match ctx.vfs.overlay().get(target.real()) {
        Some(open) => worker.search_buffer(open),
        None => worker.search_disk(target.real()),
    };
    match outcome {
        Outcome::Hits => Ok(vec![worker.sink.take(target.real().to_path_buf())]),
        Outcome::Nothing => Ok(Vec::new()),
        Outcome::Binary => Err(Error::new(
            ErrorKind::IsBinary,
            format!("{target}: file is binary (it contains a NUL byte); grep searches text files only"),
        )
        .with_path(target.given())),
        Outcome::TooLarge(len) => Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "{target}: file is {len} bytes, over the {}-byte grep limit; read it in pages with read_file",
                ctx.config.max_grep_file_bytes
            ),
        )
        .with_path(target.given())),
        Outcome::Unreadable(e) => Err(Error::io(&e, target.given())),
    }
}

fn search_dir(
    ctx: &Context<'_>,
    query: &Query,
    dir: &SandboxPath,
    glob: Option<&PathGlob>,
    counters: &Counters,
) -> Vec<FileHits> {
    let opts = WalkOptions { gitignore: query.gitignore, ..WalkOptions::default() };
    let builder = ctx.vfs.workspace().walker(dir, opts);
    let base = dir.real();
    let mut files = walk_parallel(&builder, ctx.cancel, || {
        let mut worker = Worker::new(ctx, query, counters);
        move |entry: DirEntry, out: &mut Vec<FileHits>| {
            // Links are never followed (the walk yields them as links), so that nothing outside
            // the roots is read; directories and special files have nothing to search.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return;
            }
            let rel = crate::workspace::below(entry.path(), base).unwrap_or(entry.path());
            if glob.is_some_and(|g| !g.is_match(rel)) {
                return;
            }
            let outcome = match worker.open_document(entry.path()) {
                Some(open) => {
                    if outside_git(rel) {
                        counters.open_walked.fetch_add(1, Ordering::Relaxed);
                    }
                    worker.search_buffer(open)
                }
                None => worker.search_disk(entry.path()),
            };
            if worker.record(outcome) {
                out.push(worker.sink.take(entry.into_path()));
            }
        }
    });
    files.extend(search_unsaved(ctx, query, dir, glob, counters));
    files
}

/// Searches the open documents under `dir` that have no file on disk yet (new buffers never
/// saved), which no walk can find. Ignore files are not consulted for them: a buffer the user
/// is writing is part of the project as far as they are concerned.
fn search_unsaved(
    ctx: &Context<'_>,
    query: &Query,
    dir: &SandboxPath,
    glob: Option<&PathGlob>,
    counters: &Counters,
) -> Vec<FileHits> {
    let mut found = Vec::new();
    let candidates: Vec<(&Path, &OpenDocument)> = ctx
        .vfs
        .overlay()
        .iter()
        .filter(|(path, _)| {
            crate::workspace::below(path, dir.real()).is_some_and(|rel| {
                !rel.as_os_str().is_empty() && outside_git(rel) && glob.is_none_or(|g| g.is_match(rel))
            })
        })
        .collect();
    // The walk counted each candidate it met, once (the same test, on a file it searched), so
    // when the counts agree it met them all: all are on disk, and none needs a look of its own.
    // That is the common case, and it saves a path lookup per open document.
    if candidates.len() == counters.open_walked.load(Ordering::Relaxed) {
        return found;
    }
    let mut worker = Worker::new(ctx, query, counters);
    for (path, open) in candidates {
        let on_disk = match path.to_str().map(|p| ctx.vfs.resolve(p)) {
            Some(Ok(p)) => !ctx.vfs.symlink_metadata(&p).is_err_and(|e| e.kind() == ErrorKind::NotFound),
            _ => true,
        };
        if on_disk {
            continue;
        }
        let outcome = worker.search_buffer(open);
        if worker.record(outcome) {
            found.push(worker.sink.take(path.to_path_buf()));
        }
    }
    found
}

/// Whether no component of `rel` is `.git`: a path [`search_unsaved`] considers.
fn outside_git(rel: &Path) -> bool {
    !rel.components().any(|c| c.as_os_str() == ".git")
}

#[derive(Debug, Default)]
struct Counters {
    too_large: AtomicUsize,
    unreadable: AtomicUsize,
    kept_bytes: AtomicUsize,
    /// Open documents the walk searched (in their buffers), for [`search_unsaved`].
    open_walked: AtomicUsize,
}

/// How the search of one file ended.
#[derive(Debug)]
enum Outcome {
    Hits,
    Nothing,
    Binary,
    TooLarge(u64),
    Unreadable(io::Error),
}

/// One thread's search state, reused from file to file so that a file without matches costs no
/// allocation.
struct Worker<'a> {
    ctx: &'a Context<'a>,
    counters: &'a Counters,
    /// A clone per thread: a regex keeps its scratch space in a pool, and a thread that owns its
    /// regex never contends for it.
    matcher: RegexMatcher,
    searcher: Searcher,
    sink: Collector,
    keep_bytes: usize,
}

impl<'a> Worker<'a> {
    fn new(ctx: &'a Context<'a>, query: &Query, counters: &'a Counters) -> Worker<'a> {
        Worker {
            ctx,
            counters,
            matcher: query.matcher.clone(),
            searcher: query.searcher(),
            sink: Collector::new(query.collect),
            keep_bytes: query.keep_bytes,
        }
    }

    fn open_document(&self, path: &Path) -> Option<&'a OpenDocument> {
        let overlay = self.ctx.vfs.overlay();
        if overlay.is_empty() {
            None
        } else {
            overlay.get(path)
        }
    }

    fn search_disk(&mut self, path: &Path) -> Outcome {
        let file = match self.ctx.vfs.open_real(path) {
            Ok(f) => f,
            Err(e) => return Outcome::Unreadable(e),
        };
        // The size comes from the open file (fstat), so a file is looked up by path only once.
        match file.metadata() {
            Ok(m) if m.len() > self.ctx.config.max_grep_file_bytes => return Outcome::TooLarge(m.len()),
            Ok(_) => {}
            Err(e) => return Outcome::Unreadable(e),
        }
        self.sink.reset(self.keep());
        if let Err(e) = self.searcher.search_file(&self.matcher, &file, &mut self.sink) {
            return Outcome::Unreadable(e);
        }
        self.sink.outcome()
    }

    fn search_buffer(&mut self, open: &OpenDocument) -> Outcome {
        let len = open.doc.len() as u64;
        if len > self.ctx.config.max_grep_file_bytes {
            return Outcome::TooLarge(len);
        }
        self.sink.reset(self.keep());
        // Streamed from the rope's leaves as a file is from disk: no copy of the whole buffer.
        if let Err(e) = self.searcher.search_reader(&self.matcher, open.doc.reader(), &mut self.sink) {
            return Outcome::Unreadable(e);
        }
        self.sink.outcome()
    }

    /// Whether the next file may keep its lines' text, within the query's memory budget.
    fn keep(&self) -> bool {
        self.counters.kept_bytes.load(Ordering::Relaxed) < self.keep_bytes
    }

    /// Counts a skipped file, or the text a matching file keeps; returns whether it matched.
    fn record(&self, outcome: Outcome) -> bool {
        match outcome {
            Outcome::Hits => {
                self.counters.kept_bytes.fetch_add(self.sink.text.len(), Ordering::Relaxed);
                return true;
            }
            Outcome::Nothing | Outcome::Binary => {}
            Outcome::TooLarge(_) => {
                self.counters.too_large.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Unreadable(_) => {
                self.counters.unreadable.fetch_add(1, Ordering::Relaxed);
            }
        }
        false
    }
}

/// The sink of one file's search: keeps what [`Collect`] asks for.
struct Collector {
    collect: Collect,
    count: u64,
    shown: usize,
    /// Whether line text is kept for the current file (else only `shown` is counted).
    keep: bool,
    lines: Vec<Line>,
    text: String,
    binary: bool,
}

impl Collector {
    fn new(collect: Collect) -> Collector {
        Collector { collect, count: 0, shown: 0, keep: true, lines: Vec::new(), text: String::new(), binary: false }
    }

    fn reset(&mut self, keep: bool) {
        self.count = 0;
        self.shown = 0;
        self.keep = keep;
        self.lines.clear();
        self.text.clear();
        self.binary = false;
    }

    fn outcome(&self) -> Outcome {
        if self.count > 0 {
            Outcome::Hits
        } else if self.binary {
            Outcome::Binary
        } else {
            Outcome::Nothing
        }
    }

    /// Moves the current file's results out; the buffers start afresh for the next file.
    fn take(&mut self, path: PathBuf) -> FileHits {
        FileHits {
            path,
            count: self.count,
            shown: self.shown,
            lines: std::mem::take(&mut self.lines),
            text: std::mem::take(&mut self.text),
        }
    }

    fn push_line(&mut self, number: u64, is_match: bool, bytes: &[u8]) {
        self.shown += 1;
        if !self.keep {
            return;
        }
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(s) => push_cut(&mut self.text, s),
            Err(_) => push_cut(&mut self.text, &String::from_utf8_lossy(bytes)),
        }
        self.lines.push(Line { number, is_match, end: self.text.len() });
    }
}

impl Sink for Collector {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> io::Result<bool> {
        match self.collect {
            Collect::Files => {
                self.count = 1;
                // One match is enough to list the file: stop reading it.
                Ok(false)
            }
            Collect::Count => {
                self.count += m.lines().count() as u64;
                Ok(true)
            }
            Collect::Lines => {
                let first = m.line_number().unwrap_or(0);
                for (i, line) in m.lines().enumerate() {
                    self.count += 1;
                    self.push_line(first + i as u64, true, line);
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> io::Result<bool> {
        if self.collect == Collect::Lines {
            self.push_line(c.line_number().unwrap_or(0), false, c.bytes());
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> io::Result<bool> {
        // Binary detection quits at the first NUL byte; lines matched before it (deep in a large
        // file) are kept, as ripgrep keeps them.
        self.binary = true;
        Ok(false)
    }
}
