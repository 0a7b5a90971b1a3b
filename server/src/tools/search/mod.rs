//! Support shared by `glob` and `grep`: the glob matching rule, a parallel walk that gathers
//! results per thread without locking per file, and line cutting for output.
//!
//! The glob rule, stated once for both tools: a pattern is matched against the path of each file
//! relative to the searched directory, with `/` as separator and `*`/`?` never crossing a `/`
//! (`**` does). A pattern without `/` matches the file name at any depth, as in ripgrep's `-g` and
//! `.gitignore`; a leading `/` or `./` anchors a pattern at the searched directory.

pub mod engine;

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use crate::config::Cancel;
use crate::error::{Error, Result};

/// Characters of one output line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 500;

/// A compiled glob with the matching rule above.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: GlobMatcher,
    /// Whether the pattern names a path (it had a `/`), not just a file name.
    anchored: bool,
}

impl PathGlob {
    /// Compiles `pattern`; errors are `invalid_input` naming the argument `field`.
    pub fn new(field: &str, pattern: &str) -> Result<PathGlob> {
        if pattern.is_empty() {
            return Err(Error::invalid(format!("`{field}` must not be empty; use `**` to match every file")));
        }
        if pattern.starts_with('!') {
            return Err(Error::invalid(format!(
                "`{field}`: negated globs (`{pattern}`) are not supported; give the files to include, \
                 for example `*.rs` or `src/**/*.ts`"
            )));
        }
        let anchored = pattern.contains('/');
        let body = pattern.strip_prefix("./").or_else(|| pattern.strip_prefix('/')).unwrap_or(pattern);
        let glob = GlobBuilder::new(body)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| Error::invalid(format!("`{field}`: invalid glob `{pattern}`: {}", glob_reason(&e))))?;
        Ok(PathGlob { matcher: glob.compile_matcher(), anchored })
    }

    /// Whether the file at `rel` (relative to the searched directory) matches.
    pub fn is_match(&self, rel: &Path) -> bool {
        if self.anchored {
            self.matcher.is_match(rel)
        } else {
            rel.file_name().is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

/// The reason part of a globset error, without the glob it repeats.
fn glob_reason(e: &globset::Error) -> String {
    e.kind().to_string()
}

/// Walks `builder` on several threads (one visitor per thread, as ripgrep does) and returns
/// everything the visitors produced, in no particular order.
///
/// `make` builds one visitor per thread; a visitor gets each entry the walk yields (directories,
/// files and links alike; walk errors are skipped) and pushes results onto its thread's own
/// vector, so that no lock is taken per file. Each thread's vector is appended to the result
/// once, when the thread finishes. Every thread stops at its next entry once `cancel` is set.
pub fn walk_parallel<T, V, M>(builder: &WalkBuilder, cancel: &Cancel, make: M) -> Vec<T>
where
    T: Send,
    V: FnMut(DirEntry, &mut Vec<T>) + Send,
    M: Fn() -> V + Sync,
{
    let results = Mutex::new(Vec::new());
    builder.build_parallel().visit(&mut Builder { make: &make, results: &results, cancel });
    results.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct Builder<'a, T, M> {
    make: &'a M,
    results: &'a Mutex<Vec<T>>,
    cancel: &'a Cancel,
}

impl<'s, T, V, M> ParallelVisitorBuilder<'s> for Builder<'s, T, M>
where
    T: Send + 's,
    V: FnMut(DirEntry, &mut Vec<T>) + Send + 's,
    M: Fn() -> V + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor { visit: (self.make)(), local: Vec::new(), results: self.results, cancel: self.cancel })
    }
}

struct Visitor<'a, T, V> {
    visit: V,
    local: Vec<T>,
    results: &'a Mutex<Vec<T>>,
    cancel: &'a Cancel,
}

impl<T: Send, V: FnMut(DirEntry, &mut Vec<T>) + Send> ParallelVisitor for Visitor<'_, T, V> {
    fn visit(&mut self, entry: std::result::Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        // A walk error is an unreadable directory or a bad line in an ignore file: neither stops
        // the search, as in ripgrep.
        if let Ok(entry) = entry {
            (self.visit)(entry, &mut self.local);
        }
        WalkState::Continue
    }
}

impl<T, V> Drop for Visitor<'_, T, V> {
    fn drop(&mut self) {
        if self.local.is_empty() {
            return;
        }
        let mut all = self.results.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if all.is_empty() {
            std::mem::swap(&mut *all, &mut self.local);
        } else {
            all.append(&mut self.local);
        }
    }
}

/// Appends `line`, cut at [`MAX_LINE_CHARS`] characters with a marker saying how much was left,
/// so that one minified file cannot flood the output.
pub fn push_cut(out: &mut String, line: &str) {
    // Fast path: a line of at most MAX_LINE_CHARS bytes has at most that many characters.
    if line.len() <= MAX_LINE_CHARS {
        out.push_str(line);
        return;
    }
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(line),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            out.push_str(&line[..cut]);
            let _ = write!(out, " [... line truncated, {rest} more character{}]", if rest == 1 { "" } else { "s" });
        }
    }
}

/// `n` followed by `word`, pluralized with an `s` unless `n` is 1.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_rule() {
        let table = [
            // (pattern, path relative to the searched directory, matches)
            ("*.rs", "main.rs", true),
            ("*.rs", "src/deep/lib.rs", true),
            ("*.rs", "src/lib.rsx", false),
            ("src/*.rs", "src/lib.rs", true),
            ("src/*.rs", "src/deep/lib.rs", false),
            ("src/**/*.rs", "src/deep/lib.rs", true),
            ("src/**/*.rs", "src/lib.rs", true),
            ("src/**/*.rs", "other/src/lib.rs", false),
            ("**/*.rs", "a/b/c.rs", true),
            ("/*.rs", "main.rs", true),
            ("/*.rs", "src/main.rs", false),
            ("./*.rs", "main.rs", true),
            ("*.{rs,toml}", "x/Cargo.toml", true),
            ("Cargo.toml", "x/Cargo.toml", true),
            ("x/Cargo.toml", "Cargo.toml", false),
            (".env*", "app/.env.local", true),
            ("[ab].txt", "dir/b.txt", true),
            ("\\*.txt", "*.txt", true),
            ("\\*.txt", "a.txt", false),
        ];
        for (pattern, path, want) in table {
            let g = PathGlob::new("pattern", pattern).expect("valid glob");
            assert_eq!(g.is_match(Path::new(path)), want, "{pattern} vs {path}");
        }
    }

    #[test]
    fn glob_errors_name_the_field() {
        for bad in ["", "a[", "!*.rs", "{a,b"] {
            let e = PathGlob::new("glob", bad).expect_err(bad);
            assert_eq!(e.kind(), crate::error::ErrorKind::InvalidInput, "{bad}");
            assert!(e.message().starts_with("`glob`"), "{bad}: {}", e.message());
        }
    }

    #[test]
    fn cuts_long_lines() {
        let table = [
            ("short".to_owned(), "short".to_owned()),
            ("a".repeat(500), "a".repeat(500)),
            ("a".repeat(503), format!("{} [... line truncated, 3 more characters]", "a".repeat(500))),
            ("é".repeat(400), "é".repeat(400)),
            ("é".repeat(501), format!("{} [... line truncated, 1 more character]", "é".repeat(500))),
        ];
        for (line, want) in table {
            let mut out = String::new();
            push_cut(&mut out, &line);
            assert_eq!(out, want);
        }
    }
}
