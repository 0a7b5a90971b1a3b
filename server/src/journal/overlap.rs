//! Who changed a call's files while it ran: the words of a `conflict` that names the change.
//!
//! A call whose change met a file that changed after its read runs again on the newer text
//! (`sink::on_fresh_text`, the lsp's retry loop). When that run fails, the change it was meant to
//! make overlaps another one, and the answer says which: the journal holds every change a tether
//! tool made, in any process, with who asked and the bytes it replaced.

use std::path::{Path, PathBuf};

use super::{now_ms, Changeset, FileRecord, Journal, Op};

/// The most changesets and line ranges an answer names before it says "and more".
const MOST: usize = 4;

/// A call that ran again because its files changed after its first read.
#[derive(Debug, Clone)]
pub struct Rerun {
    /// The real paths of the files that changed, and of every other file the call's plan wrote.
    pub files: Vec<PathBuf>,
    /// When the call started, in milliseconds since the Unix epoch.
    pub since_ms: u64,
}

impl Rerun {
    /// A call that started now.
    pub fn starting_now() -> Rerun {
        Rerun { files: Vec::new(), since_ms: now_ms() }
    }

    /// Notes more files of the call's plans that met newer text.
    pub fn add(&mut self, files: impl IntoIterator<Item = PathBuf>) {
        self.files.extend(files);
        self.files.sort();
        self.files.dedup();
    }
}

/// What changed `rerun`'s files since the call started, in words for the `conflict` an overlapping
/// change answers with: each changeset by id, client, tool and the lines it left changed, oldest
/// first; or, when the journal holds none, that something other than a tether tool did (an
/// editor, a shell). `roots` are the workspace's, to name files by.
pub fn who_changed(journal: Option<&Journal>, roots: &[PathBuf], rerun: &Rerun) -> String {
    let names = |files: &[&PathBuf]| {
        let mut names: Vec<String> = files.iter().map(|f| shown(roots, f)).collect();
        names.sort();
        names.dedup();
        names.join(", ")
    };
    let Some(journal) = journal else {
        let all: Vec<&PathBuf> = rerun.files.iter().collect();
        return format!(
            "{} changed after this call read it (with the change journal off, tether cannot say who changed it)",
            names(&all)
        );
    };
    journal.who_changed(roots, rerun, names)
}

impl Journal {
    fn who_changed(&self, roots: &[PathBuf], rerun: &Rerun, names: impl Fn(&[&PathBuf]) -> String) -> String {
        let mut found: Vec<Changeset> = self
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c.time_ms >= rerun.since_ms && rerun.files.iter().any(|f| c.touches(f)))
            .collect();
        let touched: Vec<&PathBuf> =
            rerun.files.iter().filter(|f| found.is_empty() || found.iter().any(|c| c.touches(f))).collect();
        let names = names(&touched);
        if found.is_empty() {
            return format!(
                "{names} changed after this call read it, and no tether tool changed it meanwhile (the journal \
                 has no such change): an editor or another program did"
            );
        }
        found.reverse();
        let more = found.len().saturating_sub(MOST);
        let mut words: Vec<String> = found.iter().take(MOST).map(|c| self.describe(c, roots, &rerun.files)).collect();
        if more > 0 {
            words.push(format!("and {more} more (history lists them)"));
        }
        format!("{names} changed after this call read it: {}", words.join("; "))
    }

    /// One changeset in words: `changeset 12 (edit_file by claude-code 2.1.0) at notes.txt lines 2–3`.
    fn describe(&self, c: &Changeset, roots: &[PathBuf], files: &[PathBuf]) -> String {
        let parts: Vec<String> = c
            .files
            .iter()
            .filter(|r| files.iter().any(|f| r.path == *f || r.from.as_deref() == Some(f.as_path())))
            .map(|r| format!("{} {}", shown(roots, &r.path), self.what(c, r)))
            .collect();
        format!("changeset {} ({} by {}) at {}", c.id, c.tool, c.client, parts.join(", "))
    }

    /// What a file operation did, for a conflict's message: an edit's lines in the text it left.
    fn what(&self, c: &Changeset, r: &FileRecord) -> String {
        match r.op {
            Op::Edit => {
                let (_, after) = self.contents(c, r);
                match after {
                    Some(after) if !r.reverse.is_empty() => lines_of(&after, r),
                    _ => format!("(+{} −{} lines)", r.added, r.removed),
                }
            }
            op => format!("({})", op.as_str()),
        }
    }
}

/// The lines an edit left changed, numbered in the text after it: `lines 2–3, 9`.
fn lines_of(after: &[u8], r: &FileRecord) -> String {
    let line = |at: usize| after[..at.min(after.len())].iter().filter(|&&b| b == b'\n').count() + 1;
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for h in &r.reverse {
        let start = line(h.at);
        let end = if h.len == 0 { start } else { line(h.at + h.len - 1) };
        match ranges.last_mut() {
            Some(last) if start <= last.1 + 1 => last.1 = last.1.max(end),
            _ => ranges.push((start, end)),
        }
    }
    let more = ranges.len().saturating_sub(MOST);
    let mut words: Vec<String> =
        ranges.iter().take(MOST).map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}–{b}") }).collect();
    if more > 0 {
        words.push(format!("and {more} more places"));
    }
    let noun = if ranges.len() == 1 && ranges[0].0 == ranges[0].1 { "line" } else { "lines" };
    format!("{noun} {}", words.join(", "))
}

/// `real` as the user names it: relative to the deepest root holding it.
fn shown(roots: &[PathBuf], real: &Path) -> String {
    let root = roots.iter().filter(|r| real.starts_with(r)).max_by_key(|r| r.components().count());
    root.and_then(|r| real.strip_prefix(r).ok()).unwrap_or(real).display().to_string()
}
