//! Finding a hunk's lines in a file: the fuzz levels lines are compared at, and the searches
//! (`seek`, `candidates`, `seek_blank`, `closest`) over a file's lines that `apply` places hunks with.

use std::borrow::Cow;

use unicode_normalization::{is_nfc, UnicodeNormalization};

use crate::edit::view::fold_punctuation;
use crate::text::lines;

/// How strictly a hunk line must equal a file line. The levels are the line-level forms of
/// `edit_file`'s cascade (`edit::matcher`), strictest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fuzz {
    /// Byte for byte.
    Exact,
    /// In Unicode normalization form C, without a byte order mark at the start.
    Normalized,
    /// Ignoring trailing whitespace.
    TrailingSpace,
    /// Ignoring leading and trailing whitespace.
    Whitespace,
    /// Ignoring surrounding whitespace, with typographic punctuation read as ASCII.
    Punctuation,
}

impl Fuzz {
    /// Every level, strictest first.
    pub const ALL: [Fuzz; 5] =
        [Fuzz::Exact, Fuzz::Normalized, Fuzz::TrailingSpace, Fuzz::Whitespace, Fuzz::Punctuation];

    /// What a line is compared by at this level.
    fn key(self, s: &str) -> Cow<'_, str> {
        match self {
            Fuzz::Exact => Cow::Borrowed(s),
            Fuzz::Normalized => {
                let s = s.strip_prefix('\u{FEFF}').unwrap_or(s);
                if s.is_ascii() || is_nfc(s) {
                    Cow::Borrowed(s)
                } else {
                    Cow::Owned(s.nfc().collect())
                }
            }
            Fuzz::TrailingSpace => Cow::Borrowed(s.trim_end()),
            Fuzz::Whitespace => Cow::Borrowed(s.trim()),
            Fuzz::Punctuation => {
                let mut out = String::with_capacity(s.len());
                for c in s.trim().chars() {
                    match fold_punctuation(c) {
                        Some(ascii) => out.push_str(ascii),
                        None => out.push(c),
                    }
                }
                Cow::Owned(out)
            }
        }
    }
}

/// A text split into lines, with the comparison keys of each fuzz level computed on first use.
pub(super) struct Text<'a> {
    pub(super) lines: Vec<(&'a str, &'a str)>,
    keys: [Option<Vec<Cow<'a, str>>>; 5],
    /// The last index a match may start at, when an `@@` line confines the search to its block.
    pub(super) max_start: Option<usize>,
}

impl<'a> Text<'a> {
    pub(super) fn new(base: &'a str) -> Text<'a> {
        Text { lines: lines(base).collect(), keys: Default::default(), max_start: None }
    }

    /// The last index a match of `m` lines may start at.
    fn last_start(&self, m: usize) -> usize {
        let hi = self.lines.len() - m;
        self.max_start.map_or(hi, |b| b.min(hi))
    }

    fn keys(&mut self, level: Fuzz) -> &[Cow<'a, str>] {
        let lines = &self.lines;
        self.keys[level as usize].get_or_insert_with(|| lines.iter().map(|(c, _)| level.key(c)).collect())
    }

    /// The first index in `lo..` where `pattern` matches, trying every level before a looser one
    /// and, within a level, positions from `hint` outward. With `eof`, only the position that ends
    /// at the end of the text counts.
    pub(super) fn seek(&mut self, pattern: &[&str], lo: usize, hint: usize, eof: bool) -> Option<usize> {
        let (n, m) = (self.lines.len(), pattern.len());
        if m == 0 || m > n || lo > self.last_start(m) {
            return None;
        }
        let hi = self.last_start(m);
        for level in Fuzz::ALL {
            let pat: Vec<Cow<'_, str>> = pattern.iter().map(|p| level.key(p)).collect();
            let keys = self.keys(level);
            let at = |i: usize| keys[i..i + m].iter().zip(&pat).all(|(a, b)| a == b);
            let found = if eof { at(hi).then_some(hi) } else { outward(lo, hi, hint, at) };
            if found.is_some() {
                return found;
            }
        }
        None
    }

    /// The indexes in `lo..` where `pattern` matches at the strictest level with any match, at
    /// most `limit` of them: the candidates a hunk without a tie-breaker must have exactly one of.
    pub(super) fn candidates(&mut self, pattern: &[&str], lo: usize, limit: usize) -> Vec<usize> {
        let (n, m) = (self.lines.len(), pattern.len());
        if m == 0 || m > n || lo > self.last_start(m) {
            return Vec::new();
        }
        let hi = self.last_start(m);
        for level in Fuzz::ALL {
            let pat: Vec<Cow<'_, str>> = pattern.iter().map(|p| level.key(p)).collect();
            let keys = self.keys(level);
            let found: Vec<usize> =
                (lo..=hi).filter(|&i| keys[i..i + m].iter().zip(&pat).all(|(a, b)| a == b)).take(limit).collect();
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// [`seek`](Text::seek) with blank lines left out on both sides: the first index in `lo..`
    /// of a non-blank line from which the pattern's non-blank lines follow one another with only
    /// blank lines between them, every level before a looser one.
    pub(super) fn seek_blank(&mut self, pattern: &[&str], lo: usize, hint: usize) -> Option<usize> {
        let want: Vec<&str> = pattern.iter().copied().filter(|p| !p.trim().is_empty()).collect();
        let n = self.lines.len();
        let hi = self.max_start.map_or(n.saturating_sub(1), |b| b.min(n.saturating_sub(1)));
        if want.is_empty() || lo >= n || lo > hi {
            return None;
        }
        let blank: Vec<bool> = self.lines.iter().map(|(c, _)| c.trim().is_empty()).collect();
        for level in Fuzz::ALL {
            let pat: Vec<Cow<'_, str>> = want.iter().map(|p| level.key(p)).collect();
            let keys = self.keys(level);
            let at = |i: usize| {
                let mut j = i;
                for (k, p) in pat.iter().enumerate() {
                    while k > 0 && j < n && blank[j] {
                        j += 1;
                    }
                    if j >= n || blank[j] || keys[j] != *p {
                        return false;
                    }
                    j += 1;
                }
                true
            };
            if let Some(i) = outward(lo, hi, hint, at) {
                return Some(i);
            }
        }
        None
    }

    /// The position where most of `pattern` matches (ignoring surrounding whitespace), nearest
    /// `hint` among equals, with its number of matching lines.
    pub(super) fn closest(&mut self, pattern: &[&str], hint: usize) -> Option<(usize, usize)> {
        // Only a hint for a failed hunk: not worth more than a few million comparisons.
        const BUDGET: usize = 4_000_000;
        let (n, m) = (self.lines.len(), pattern.len());
        if m < 2 || m > n || n.saturating_mul(m) > BUDGET {
            return None;
        }
        let pat: Vec<Cow<'_, str>> = pattern.iter().map(|p| Fuzz::Whitespace.key(p)).collect();
        let keys = self.keys(Fuzz::Whitespace);
        let mut best: Option<(usize, usize)> = None;
        for i in 0..=n - m {
            let score = keys[i..i + m].iter().zip(&pat).filter(|(a, b)| a == b).count();
            let better = match best {
                None => score > 0,
                Some((j, s)) => score > s || (score == s && i.abs_diff(hint) < j.abs_diff(hint)),
            };
            if better {
                best = Some((i, score));
            }
        }
        best.filter(|&(_, s)| s * 2 >= m)
    }
}

/// Calls `at` on `lo..=hi` from `hint` outward (`hint`, `hint + 1`, `hint - 1`, ...) and returns
/// the first index it accepts.
fn outward(lo: usize, hi: usize, hint: usize, mut at: impl FnMut(usize) -> bool) -> Option<usize> {
    let h = hint.clamp(lo, hi);
    for d in 0..=(hi - lo) {
        let up = h.checked_add(d).filter(|&i| i <= hi);
        let down = h.checked_sub(d).filter(|&i| i >= lo && d > 0);
        if up.is_none() && down.is_none() {
            break;
        }
        if let Some(i) = up.filter(|&i| at(i)) {
            return Some(i);
        }
        if let Some(i) = down.filter(|&i| at(i)) {
            return Some(i);
        }
    }
    None
}
