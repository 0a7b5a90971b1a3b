//! Finding `old_string` in a file: exact first, then a tolerant cascade, strictest first.
//!
//! Every strategy is one row of [`STRATEGIES`]: a function returning the regions it matches and
//! a function adapting the replacement to what it matched. The cascade stops at the first
//! strategy that matches anything:
//!
//! - one region: it is replaced, and the result says which strategy matched;
//! - several regions: `ambiguous_match`, naming the strategy and the line of every region. The
//!   cascade does not go on to looser strategies, which could only guess among more places;
//! - nothing at any level: `no_match`, showing the most similar lines of the file.
//!
//! Matching works on the file's `\n` view ([`Mapped::lf`]), so `old_string` typed with `\n`
//! matches a CRLF file; replacement text gets the file's own line break.

use std::ops::Range;

use unicode_normalization::{is_nfc, is_nfd, UnicodeNormalization};

use super::carry::{carry, Carry, Pairing};
use super::closest::{closest, line_span, split_lines, Closest};
use super::escape::{sequences_in, unescape};
use super::explain::Contrast;
use super::view::Mapped;
use super::TextChange;
use crate::error::{Error, ErrorKind};
use crate::text::{convert_breaks, keep_breaks_apart};
use crate::text::{LineEnding, LineIndex, Offset, SharedText};

/// One way of finding `old_string` in a text.
#[derive(Debug)]
pub struct Strategy {
    /// Short name, for logs and tests.
    pub name: &'static str,
    /// How the result describes a match at this level (`matched with ...`); `None` for exact.
    pub matched_with: Option<&'static str>,
    /// Every region (byte ranges of the `\n` view, possibly overlapping) that the needle matches.
    find: fn(hay: &str, needle: &str) -> Vec<Range<usize>>,
    /// The replacement for one region: `(old, new, found)` to the text written, all in `\n` form.
    adapt: fn(old: &str, new: &str, found: &str) -> String,
}

/// The strategies, strictest first. `replace_all` uses the first (exact) only.
pub static STRATEGIES: &[Strategy] = &[
    Strategy { name: "exact", matched_with: None, find: find_exact, adapt: keep_new },
    Strategy {
        name: "normalization",
        matched_with: Some("Unicode normalization"),
        find: find_normalized,
        adapt: adapt_normalized,
    },
    Strategy {
        name: "indentation",
        matched_with: Some("flexible indentation"),
        find: |hay, needle| find_lines(hay, needle, |a, b| a.trim_start() == b.trim_start(), str::trim_start),
        adapt: |old, new, found| carry(old, new, found, LINES),
    },
    Strategy {
        name: "trimmed_lines",
        matched_with: Some("trimmed lines"),
        find: |hay, needle| find_lines(hay, needle, |a, b| a.trim() == b.trim(), str::trim),
        adapt: |old, new, found| carry(old, new, found, LINES),
    },
    Strategy {
        name: "blank_lines",
        matched_with: Some("blank lines ignored"),
        find: find_blank_lines,
        adapt: |old, new, found| carry(old, new, found, Carry { pairing: Pairing::NonBlank, reindent: true }),
    },
    Strategy {
        name: "collapsed_whitespace",
        matched_with: Some("collapsed whitespace"),
        find: |hay, needle| find_lines(hay, needle, same_words, longest_word),
        adapt: |old, new, found| carry(old, new, found, LINES),
    },
    Strategy {
        name: "trimmed_text",
        matched_with: Some("surrounding whitespace trimmed"),
        find: find_trimmed,
        adapt: adapt_trimmed,
    },
    Strategy {
        name: "unescaped",
        matched_with: Some("escape sequences undone"),
        find: find_unescaped,
        adapt: adapt_unescaped,
    },
    Strategy {
        name: "punctuation",
        matched_with: Some("normalised punctuation and spaces"),
        find: find_punctuation,
        adapt: |old, new, found| carry(old, new, found, Carry { pairing: Pairing::Lines, reindent: false }),
    },
];

/// How the line levels carry `new_string` into the file's form.
const LINES: Carry = Carry { pairing: Pairing::Lines, reindent: true };

impl Strategy {
    /// Every region of `hay` (a text with `\n` breaks) that this level alone matches `needle` at,
    /// possibly overlapping; for measuring one level (`benches/matcher.rs`).
    pub fn find(&self, hay: &str, needle: &str) -> Vec<Range<usize>> {
        (self.find)(hay, needle)
    }
}

/// What a successful match changes.
#[derive(Debug, Clone)]
pub struct Replaced {
    /// The changes, sorted, against the original text.
    pub changes: Vec<TextChange>,
    /// The strategy that matched.
    pub strategy: &'static Strategy,
}

impl Replaced {
    /// The number of replacements.
    pub fn count(&self) -> usize {
        self.changes.len()
    }

    /// The summary's tail: `1 replacement (matched with flexible indentation)`.
    pub fn describe(&self) -> String {
        let n = self.count();
        let mut out = format!("{n} replacement{}", if n == 1 { "" } else { "s" });
        if let Some(how) = self.strategy.matched_with {
            out.push_str(&format!(" (matched with {how})"));
        }
        out
    }
}

/// Why `old_string` could not be replaced.
#[derive(Debug, Clone)]
pub enum Miss {
    /// Nothing matched at any level.
    NoMatch {
        /// The most similar lines of the file, if any are alike enough.
        closest: Option<Closest>,
        /// Whether only exact matching was tried (`replace_all`).
        exact_only: bool,
        /// Whether every line of the needle starts with a `read_file` line number and tab.
        numbered: bool,
        /// The needle against the closest region, to say what differs.
        contrast: Option<Box<Contrast>>,
    },
    /// A level matched several regions.
    Ambiguous {
        /// The level.
        strategy: &'static Strategy,
        /// The first and last line (1-based) of every region, in file order.
        lines: Vec<(usize, usize)>,
    },
}

/// The most regions listed in an `ambiguous_match` message.
const MAX_LISTED: usize = 100;

impl Miss {
    /// The error for the model, about the file shown as `shown`; `field` names the argument
    /// (`old_string`, or `edits[2].old_string` in a multi-edit).
    pub fn to_error(&self, shown: &str, field: &str) -> Error {
        match self {
            Miss::NoMatch { closest, exact_only, numbered, contrast } => {
                let how = if *exact_only {
                    "exactly (`replace_all` matches exact text only)".to_owned()
                } else {
                    let levels: Vec<&str> = STRATEGIES.iter().filter_map(|s| s.matched_with).collect();
                    format!("exactly or with tolerant matching ({})", levels.join(", "))
                };
                let mut msg = format!("{shown}: `{field}` was not found, {how}");
                if *numbered {
                    msg.push_str(&format!(
                        "; `{field}` seems to include the line numbers read_file shows: leave out the number \
                         and tab before each line"
                    ));
                }
                let differs = contrast.as_ref().map(|c| c.differences(field)).unwrap_or_default();
                let differs =
                    if differs.is_empty() { String::new() } else { format!("\nwhat differs: {}", differs.join("; ")) };
                let differs_alone = if closest.is_none() { differs.replacen('\n', "; ", 1) } else { String::new() };
                match closest {
                    Some(c) => msg.push_str(&format!(
                        "; the most similar text is at {} ({:.0}% alike):\n{}{differs}\ncopy `{field}` from the file \
                         exactly (the number and tab before each line are not part of the text)",
                        c.lines(),
                        c.score * 100.0,
                        c.render()
                    )),
                    None => msg.push_str(&format!(
                        "; nothing in the file resembles it{differs_alone}: read the file and copy the text exactly"
                    )),
                }
                Error::new(ErrorKind::NoMatch, msg).with_path(shown)
            }
            Miss::Ambiguous { strategy, lines } => {
                let mut listed: Vec<String> = lines.iter().take(MAX_LISTED).map(|&(a, b)| line_span(a, b)).collect();
                if lines.len() > MAX_LISTED {
                    listed.push(format!("and {} more", lines.len() - MAX_LISTED));
                }
                let (level, fix) = match strategy.matched_with {
                    None => (
                        "",
                        "; include more surrounding lines to make it unique, or set `replace_all` to change every one"
                            .to_owned(),
                    ),
                    Some(_) => (
                        " after no exact match",
                        format!("; copy `{field}` exactly from the file, with enough surrounding lines to be unique"),
                    ),
                };
                let with = strategy.matched_with.map(|w| format!(" with {w}")).unwrap_or_default();
                Error::new(
                    ErrorKind::AmbiguousMatch,
                    format!(
                        "{shown}: `{field}` matches {} places{level}{with}: {}{fix}",
                        lines.len(),
                        listed.join(", ")
                    ),
                )
                .with_path(shown)
            }
        }
    }
}

/// `changes` to `base` with each one cut down to the lines it really changes, so that an editor
/// receiving them keeps cursors and marks on the lines a block replacement left alone. Changes
/// that change nothing are dropped.
pub fn refine(base: &SharedText, changes: Vec<TextChange>) -> Vec<TextChange> {
    let mut out = Vec::with_capacity(changes.len());
    for c in changes {
        let (start, end) = (c.range.start.get(), c.range.end.get());
        for m in super::minimal_changes(&base.slice(start..end), &c.text) {
            out.push(TextChange::new(start + m.range.start.get(), start + m.range.end.get(), m.text));
        }
    }
    out
}

/// [`replace`] on a shared text. An open buffer's rope whose line breaks are all `\n` is
/// searched in place, and when the exact level decides (one region, or every region with
/// `replace_all`) the result is the one [`replace`] gives without copying the buffer; any other
/// case (a `\r` in the text, no exact match, several) copies it and runs the whole cascade.
pub fn replace_shared(text: &SharedText, old: &str, new: &str, replace_all: bool) -> Result<Replaced, Miss> {
    if let SharedText::Rope(_) = text {
        let (old, new) = (Mapped::lf(old), Mapped::lf(new));
        let found = text.find_all_lf(old.text()).unwrap_or_default();
        let found = match found.len() {
            0 => None,
            1 => Some(found),
            _ => replace_all.then(|| non_overlapping(found)),
        };
        if let Some(found) = found {
            let changes = found.into_iter().map(|r| TextChange::new(r.start, r.end, new.text())).collect();
            return Ok(Replaced { changes, strategy: &STRATEGIES[0] });
        }
    }
    replace(&text.to_str(), old, new, replace_all)
}

/// Replaces `old` with `new` in `text`: every exact occurrence when `replace_all`, else the one
/// region the first matching strategy finds. `old` must not be empty.
pub fn replace(text: &str, old: &str, new: &str, replace_all: bool) -> Result<Replaced, Miss> {
    let view = Mapped::lf(text);
    let hay = view.text();
    // The view changed nothing only when the text has no `\r`: its breaks are all `\n`.
    let brk = if view.changed() { LineEnding::detect(text).break_for(text) } else { "\n" };
    let old = Mapped::lf(old);
    let new = Mapped::lf(new);
    let (old, new) = (old.text(), new.text());
    let levels = if replace_all { &STRATEGIES[..1] } else { STRATEGIES };
    for strategy in levels {
        let mut found = (strategy.find)(hay, old);
        if found.is_empty() {
            continue;
        }
        if replace_all {
            found = non_overlapping(found);
        } else if found.len() > 1 {
            let index = LineIndex::new(hay);
            let lines = found.iter().map(|r| line_range(&index, r)).collect();
            return Err(Miss::Ambiguous { strategy, lines });
        }
        let changes = found
            .into_iter()
            .map(|r| {
                let written = (strategy.adapt)(old, new, &hay[r.clone()]);
                let start = view.to_orig(r.start).unwrap_or(0);
                let end = view.to_orig(r.end).unwrap_or(start);
                let written = keep_breaks_apart(convert_breaks(&written, brk), &text[..start], &text[end..]);
                TextChange::new(start, end, written)
            })
            .collect();
        return Ok(Replaced { changes, strategy });
    }
    let numbered = split_lines(old).iter().filter(|l| !l.is_empty()).all(|l| {
        let digits = l.trim_start_matches(' ');
        let n = digits.bytes().take_while(u8::is_ascii_digit).count();
        n > 0 && digits[n..].starts_with('\t')
    });
    let closest = closest(hay, old);
    let window: Vec<&str> = match &closest {
        Some(c) => split_lines(hay).into_iter().skip(c.first - 1).take(c.height).collect(),
        None => Vec::new(),
    };
    let contrast = Some(Box::new(Contrast::new(old, &window, closest.as_ref().map_or(1, |c| c.first), hay)));
    Err(Miss::NoMatch { closest, exact_only: replace_all, numbered, contrast })
}

/// The first and last 1-based line of `r` in the text `index` indexes.
fn line_range(index: &LineIndex, r: &Range<usize>) -> (usize, usize) {
    let first = index.line_of(Offset::new(r.start));
    let last = index.line_of(Offset::new(r.end.saturating_sub(1).max(r.start)));
    (first, last)
}

/// The regions a left-to-right scan replaces: each one that starts after the last kept one ends.
fn non_overlapping(found: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::with_capacity(found.len());
    for r in found {
        if out.last().is_none_or(|last| r.start >= last.end) {
            out.push(r);
        }
    }
    out
}

/// Every occurrence of `needle` in `hay`, overlapping ones included (so `aa` in `aaa` is
/// ambiguous rather than silently the first).
fn occurrences(hay: &str, needle: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut from = 0;
    while let Some(i) = finder.find(&hay.as_bytes()[from..]) {
        let start = from + i;
        out.push(start..start + needle.len());
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

fn find_exact(hay: &str, needle: &str) -> Vec<Range<usize>> {
    occurrences(hay, needle)
}

fn keep_new(_old: &str, new: &str, _found: &str) -> String {
    new.to_owned()
}

/// Regions of whole lines each equal to the needle's line by `eq` (file line, needle line). A
/// needle ending in a line break matches only lines that have one, and the region then includes
/// it. `key` gives a part of a needle line that a matching file line has as it is: when the file
/// lacks one, no line is compared.
fn find_lines(hay: &str, needle: &str, eq: fn(&str, &str) -> bool, key: fn(&str) -> &str) -> Vec<Range<usize>> {
    let want = split_lines(needle);
    if want.iter().all(|l| l.trim().is_empty()) || missing(hay, want.iter().map(|l| key(l))) {
        return Vec::new();
    }
    let with_break = needle.ends_with('\n');
    // (start, end of content, has a break) of every line of the haystack.
    let mut spans = Vec::new();
    let mut at = 0;
    for line in split_lines(hay) {
        let end = at + line.len();
        spans.push((at, end, end < hay.len()));
        at = end + 1;
    }
    let line = |i: usize| &hay[spans[i].0..spans[i].1];
    let n = want.len();
    let mut out = Vec::new();
    for i in 0..(spans.len() + 1).saturating_sub(n) {
        if !eq(line(i), want[0]) || !(1..n).all(|k| eq(line(i + k), want[k])) {
            continue;
        }
        let (_, end, has_break) = spans[i + n - 1];
        if with_break && !has_break {
            continue;
        }
        out.push(spans[i].0..end + usize::from(with_break));
    }
    out
}

/// Whether `hay` lacks one of the three longest `keys`: text that any match must contain as it is.
/// A cheap test that spares a level comparing every line of a large file for a needle it cannot
/// match.
fn missing<'a>(hay: &str, keys: impl Iterator<Item = &'a str>) -> bool {
    let mut keys: Vec<&str> = keys.filter(|k| !k.is_empty()).collect();
    keys.sort_unstable_by_key(|k| std::cmp::Reverse(k.len()));
    keys.dedup();
    keys.iter().take(3).any(|k| memchr::memmem::find(hay.as_bytes(), k.as_bytes()).is_none())
}

/// The longest whitespace-free word of `line`.
fn longest_word(line: &str) -> &str {
    line.split_whitespace().max_by_key(|w| w.len()).unwrap_or_default()
}

/// Whether two lines have the same words: trimmed, every run of whitespace inside read as one.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// The needle with its surrounding whitespace (line breaks included) trimmed, found exactly.
fn find_trimmed(hay: &str, needle: &str) -> Vec<Range<usize>> {
    let trimmed = needle.trim();
    if trimmed.len() == needle.len() {
        return Vec::new(); // The exact level already looked for this.
    }
    occurrences(hay, trimmed)
}

/// The replacement without the surrounding whitespace that was trimmed off `old`, where `new`
/// has the same: `foo\n` for `bar\n` at the end of a file without a final newline stays so.
fn adapt_trimmed(old: &str, new: &str, _found: &str) -> String {
    let lead = &old[..old.len() - old.trim_start().len()];
    let trail = &old[old.trim_end().len()..];
    let new = new.strip_prefix(lead).unwrap_or(new);
    new.strip_suffix(trail).unwrap_or(new).to_owned()
}

/// A byte order mark copied into the start of `old_string` or `new_string`.
const BOM: char = '\u{FEFF}';

/// The needle found in the file's Unicode normalization form C, both sides composed, without a
/// byte order mark the model copied into its start.
fn find_normalized(hay: &str, needle: &str) -> Vec<Range<usize>> {
    let unmarked = needle.strip_prefix(BOM);
    let needle = unmarked.unwrap_or(needle);
    if unmarked.is_none() && needle.is_ascii() {
        return Vec::new(); // Composing changes no ASCII text: the exact level already looked.
    }
    let composed: String = needle.nfc().collect();
    let view = Mapped::nfc(hay);
    if unmarked.is_none() && !view.changed() && composed == needle {
        return Vec::new();
    }
    occurrences(view.text(), &composed)
        .into_iter()
        .filter_map(|r| Some(view.to_orig(r.start)?..view.to_orig(r.end)?))
        .collect()
}

/// `new` without the byte order mark `old` had, kept lines as the file has them, and changed
/// lines in the file's normalization form.
fn adapt_normalized(old: &str, new: &str, found: &str) -> String {
    let (old, new) = match old.strip_prefix(BOM) {
        Some(old) => (old, new.strip_prefix(BOM).unwrap_or(new)),
        None => (old, new),
    };
    let text = carry(old, new, found, Carry { pairing: Pairing::Lines, reindent: false });
    if found.is_ascii() {
        text
    } else if is_nfc(found) {
        text.nfc().collect()
    } else if is_nfd(found) {
        text.nfd().collect()
    } else {
        text
    }
}

/// Regions of whole lines that equal the needle's lines, each trimmed, when blank and
/// whitespace-only lines are left out on both sides. A region runs from the first to the last
/// matched line, so the file's blank lines around it stay outside it; like [`find_lines`], a
/// needle whose last line ends in a line break matches only lines that have one, and the region
/// then includes it.
fn find_blank_lines(hay: &str, needle: &str) -> Vec<Range<usize>> {
    let want: Vec<&str> = split_lines(needle).into_iter().map(str::trim).filter(|l| !l.is_empty()).collect();
    let Some(last) = want.last() else {
        return Vec::new();
    };
    if missing(hay, want.iter().copied()) {
        return Vec::new();
    }
    let with_break = needle[needle.rfind(last).unwrap_or(0)..].contains('\n');
    // (start, end of content, has a break) of every non-blank line of the haystack.
    let mut rows = Vec::new();
    let mut at = 0;
    for line in split_lines(hay) {
        let end = at + line.len();
        if !line.trim().is_empty() {
            rows.push((at, end, end < hay.len()));
        }
        at = end + 1;
    }
    let n = want.len();
    let mut out = Vec::new();
    for i in 0..(rows.len() + 1).saturating_sub(n) {
        if !(0..n).all(|k| hay[rows[i + k].0..rows[i + k].1].trim() == want[k]) {
            continue;
        }
        let (_, end, has_break) = rows[i + n - 1];
        if with_break && !has_break {
            continue;
        }
        out.push(rows[i].0..end + usize::from(with_break));
    }
    out
}

/// The needle with one level of escaping undone (`\n` read as a line break...), found exactly;
/// never when the file itself has any of the needle's escape sequences, since the model may then
/// mean them as written.
fn find_unescaped(hay: &str, needle: &str) -> Vec<Range<usize>> {
    let Some(plain) = unescape(needle) else {
        return Vec::new();
    };
    if sequences_in(needle).iter().any(|seq| hay.contains(seq)) {
        return Vec::new();
    }
    occurrences(hay, Mapped::lf(&plain).text())
}

/// `new` with the same level of escaping undone.
fn adapt_unescaped(_old: &str, new: &str, _found: &str) -> String {
    match unescape(new) {
        Some(plain) => Mapped::lf(&plain).text().to_owned(),
        None => new.to_owned(),
    }
}

/// The needle found after folding typographic punctuation and Unicode spaces on both sides.
fn find_punctuation(hay: &str, needle: &str) -> Vec<Range<usize>> {
    // Folding writes only spaces, quotes, `-` and `.`, so the needle's runs of other ASCII text
    // are in the file as they are.
    let folded_to = |c: char| !c.is_ascii() || c.is_ascii_whitespace() || matches!(c, '\'' | '"' | '-' | '.');
    if missing(hay, needle.split(folded_to)) {
        return Vec::new();
    }
    let (h, n) = (Mapped::punctuation(hay), Mapped::punctuation(needle));
    if !h.changed() && !n.changed() {
        return Vec::new(); // Nothing folded: the exact level already looked for this.
    }
    occurrences(h.text(), n.text()).into_iter().filter_map(|r| Some(h.to_orig(r.start)?..h.to_orig(r.end)?)).collect()
}

#[cfg(test)]
#[path = "matcher_tests.rs"]
mod tests;
