//! Normalised views of a text that map back to the original bytes.
//!
//! The matchers search a view of the file in which every line break is `\n` (so that text a model
//! types with `\n` matches a CRLF file), one level searches its Unicode normalization form C (so
//! that decomposed accents match composed ones), and the loosest matcher searches a view with
//! typographic punctuation and Unicode spaces folded to ASCII. A [`Mapped`] text remembers where each changed
//! character came from, so a match in the view becomes a byte range of the original text.

use std::borrow::Cow;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfc, UnicodeNormalization};

/// One character that normalisation changed: `norm_len` bytes at `norm` in the view stand for
/// `orig_len` bytes at `orig` in the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    norm: usize,
    norm_len: usize,
    orig: usize,
    orig_len: usize,
}

/// A normalised text and the way back to the original's byte offsets.
///
/// Only changed characters are recorded (sorted by position), so a text that normalisation leaves
/// alone costs no copy and no map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped<'a> {
    text: Cow<'a, str>,
    spans: Vec<Span>,
}

impl<'a> Mapped<'a> {
    /// The view of `text` with every line break (`\r\n`, lone `\r`) written as `\n`.
    pub fn lf(text: &'a str) -> Mapped<'a> {
        let next = |s: &str| memchr::memchr(b'\r', s.as_bytes());
        Mapped::build(text, next, |s| match s.as_bytes()[0] {
            b'\r' if s.as_bytes().get(1) == Some(&b'\n') => Some((2, "\n")),
            b'\r' => Some((1, "\n")),
            _ => None,
        })
    }

    /// The view of `text` with typographic punctuation and Unicode spaces folded to ASCII
    /// (see [`fold_punctuation`]).
    pub fn punctuation(text: &'a str) -> Mapped<'a> {
        // Every folded character is outside ASCII.
        let next = |s: &str| s.bytes().position(|b| !b.is_ascii());
        Mapped::build(text, next, |s| {
            let c = s.chars().next()?;
            fold_punctuation(c).map(|to| (c.len_utf8(), to))
        })
    }

    /// The view of `text` in Unicode normalization form C: every sequence of a character and the
    /// combining marks after it is written composed. Only runs of non-ASCII text are looked at
    /// (ASCII is its own normal form and never combines with what follows), so an ASCII file
    /// costs one scan. Conjoining Hangul jamo, which compose without combining marks, are left
    /// as they are.
    pub fn nfc(text: &'a str) -> Mapped<'a> {
        let bytes = text.as_bytes();
        let mut out: Option<String> = None;
        let mut spans = Vec::new();
        let mut copied = 0;
        let mut at = 0;
        while let Some(skip) = bytes[at..].iter().position(|b| !b.is_ascii()) {
            let run = at + skip;
            let end = bytes[run..].iter().position(u8::is_ascii).map_or(text.len(), |n| run + n);
            // A combining mark at the start of the run belongs to the ASCII letter before it (the
            // byte before a run is ASCII, and not yet copied: runs end on ASCII).
            let starts_with_mark = text[run..].chars().next().is_some_and(|c| canonical_combining_class(c) != 0);
            let mut seg = if starts_with_mark && run > 0 { run - 1 } else { run };
            while seg < end {
                let len = text[seg..end]
                    .char_indices()
                    .skip(1)
                    .find(|&(_, c)| canonical_combining_class(c) == 0)
                    .map_or(end - seg, |(i, _)| i);
                let piece = &text[seg..seg + len];
                if !is_nfc(piece) {
                    let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    buf.push_str(&text[copied..seg]);
                    let composed: String = piece.nfc().collect();
                    spans.push(Span { norm: buf.len(), norm_len: composed.len(), orig: seg, orig_len: len });
                    buf.push_str(&composed);
                    copied = seg + len;
                }
                seg += len;
            }
            at = end;
        }
        let text = match out {
            Some(mut buf) => {
                buf.push_str(&text[copied..]);
                Cow::Owned(buf)
            }
            None => Cow::Borrowed(text),
        };
        Mapped { text, spans }
    }

    /// Builds a view: `next` finds the next place (a char boundary) where a change may start,
    /// and `change` looks at the text from there and says how many bytes to replace and with
    /// what, or `None` to keep the char.
    fn build(
        text: &'a str,
        next: impl Fn(&str) -> Option<usize>,
        change: impl Fn(&str) -> Option<(usize, &'static str)>,
    ) -> Mapped<'a> {
        let mut out: Option<String> = None;
        let mut spans = Vec::new();
        let mut at = 0;
        let mut copied = 0;
        while let Some(skip) = next(&text[at..]) {
            at += skip;
            if let Some((len, to)) = change(&text[at..]) {
                let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
                buf.push_str(&text[copied..at]);
                spans.push(Span { norm: buf.len(), norm_len: to.len(), orig: at, orig_len: len });
                buf.push_str(to);
                at += len;
                copied = at;
            } else {
                at += text[at..].chars().next().map_or(1, char::len_utf8);
            }
        }
        let text = match out {
            Some(mut buf) => {
                buf.push_str(&text[copied..]);
                Cow::Owned(buf)
            }
            None => Cow::Borrowed(text),
        };
        Mapped { text, spans }
    }

    /// The normalised text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether normalisation changed anything.
    pub fn changed(&self) -> bool {
        !self.spans.is_empty()
    }

    /// The original offset of view offset `p`, or `None` when `p` falls inside the expansion of
    /// one original character (the `..` of an ellipsis folded to `...`).
    pub fn to_orig(&self, p: usize) -> Option<usize> {
        let i = self.spans.partition_point(|s| s.norm <= p);
        let Some(s) = i.checked_sub(1).map(|i| self.spans[i]) else {
            return Some(p);
        };
        if p == s.norm {
            Some(s.orig)
        } else if p >= s.norm + s.norm_len {
            Some(s.orig + s.orig_len + (p - s.norm - s.norm_len))
        } else {
            None
        }
    }
}

/// The ASCII a typographic character is folded to when matching: curly quotes and primes become
/// straight quotes, hyphens and dashes (and the minus sign) `-`, the ellipsis `...`, and
/// non-breaking and other Unicode spaces a plain space. Other characters are kept.
pub fn fold_punctuation(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => "\"",
        '\u{2010}'..='\u{2015}' | '\u{2212}' => "-",
        '\u{2026}' => "...",
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => " ",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        // (text, view kind, expected view, original offset of every view offset, None inside).
        type Case = (&'static str, bool, &'static str, &'static [Option<usize>]);
        let table: &[Case] = &[
            ("ab", true, "ab", &[Some(0), Some(1), Some(2)]),
            ("a\r\nb", true, "a\nb", &[Some(0), Some(1), Some(3), Some(4)]),
            ("a\rb\r\n", true, "a\nb\n", &[Some(0), Some(1), Some(2), Some(3), Some(5)]),
            ("\u{201C}x\u{201D}", false, "\"x\"", &[Some(0), Some(3), Some(4), Some(7)]),
            ("a\u{2026}b", false, "a...b", &[Some(0), Some(1), None, None, Some(4), Some(5)]),
            ("\u{4E2D}\u{00A0}", false, "\u{4E2D} ", &[Some(0), None, None, Some(3), Some(5)]),
        ];
        for &(text, lf, want, map) in table {
            let m = if lf { Mapped::lf(text) } else { Mapped::punctuation(text) };
            assert_eq!(m.text(), want, "{text:?}");
            let got: Vec<Option<usize>> =
                (0..=m.text().len()).map(|p| if m.text().is_char_boundary(p) { m.to_orig(p) } else { None }).collect();
            assert_eq!(got, map, "{text:?}");
        }
    }

    #[test]
    fn nfc() {
        // (text, expected view, original offset of every view char boundary).
        let table: &[(&str, &str, &[usize])] = &[
            ("plain", "plain", &[0, 1, 2, 3, 4, 5]),
            ("cafe\u{301}!", "caf\u{e9}!", &[0, 1, 2, 3, 6, 7]),
            ("\u{e9}t\u{e9}", "\u{e9}t\u{e9}", &[0, 2, 3, 5]),
            ("\u{301}x", "\u{301}x", &[0, 2, 3]),
            ("\u{4E2D}o\u{308}\u{4E2D}", "\u{4E2D}\u{f6}\u{4E2D}", &[0, 3, 6, 9]),
        ];
        for &(text, want, map) in table {
            let m = Mapped::nfc(text);
            assert_eq!(m.text(), want, "{text:?}");
            let got: Vec<usize> =
                m.text().char_indices().map(|(i, _)| i).chain([m.text().len()]).filter_map(|p| m.to_orig(p)).collect();
            assert_eq!(got, map, "{text:?}");
        }
    }

    #[test]
    fn converts_breaks() {
        let table = [
            ("a\nb\n", "\r\n", "a\r\nb\r\n"),
            ("a\r\nb", "\n", "a\nb"),
            ("a\rb\nc", "\r\n", "a\r\nb\r\nc"),
            ("no break", "\r\n", "no break"),
            ("a\r\n", "\r\n", "a\r\n"),
        ];
        for (text, brk, want) in table {
            assert_eq!(crate::text::convert_breaks(text, brk), want, "{text:?}");
        }
    }
}
