//! Normalised views of a text that map back to the original bytes.
//!
//! The matchers search a view of the file in which every line break is `\n` (so that text a model
//! types with `\n` matches a CRLF file), and the loosest matcher searches a view with typographic
//! punctuation and Unicode spaces folded to ASCII. A [`Mapped`] text remembers where each changed
//! character came from, so a match in the view becomes a byte range of the original text.

use std::borrow::Cow;

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
