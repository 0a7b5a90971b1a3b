//! [`SharedText`]: a text that a plan keeps as its base without copying it.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use ropey::Rope;

/// An immutable text, cheap to clone: a file's text read from disk, or an open buffer's rope
/// (cloned in O(1), sharing its leaves with the editor's copy). A change to a large open buffer
/// is computed and delivered against the rope itself; only the operations that need the whole
/// text as one string ([`SharedText::to_str`]) copy it.
#[derive(Clone)]
pub enum SharedText {
    /// One string.
    Str(Arc<String>),
    /// A rope.
    Rope(Rope),
}

impl SharedText {
    /// The length in bytes.
    pub fn len(&self) -> usize {
        match self {
            SharedText::Str(s) => s.len(),
            SharedText::Rope(r) => r.len_bytes(),
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole text as one string: borrowed from a string, copied from a rope.
    pub fn to_str(&self) -> Cow<'_, str> {
        match self {
            SharedText::Str(s) => Cow::Borrowed(s.as_str()),
            SharedText::Rope(r) => Cow::Owned(String::from(r)),
        }
    }

    /// The bytes in `range`, which must lie on char boundaries within the text: borrowed when
    /// they are in one piece, else copied.
    pub fn slice(&self, range: Range<usize>) -> Cow<'_, str> {
        match self {
            SharedText::Str(s) => Cow::Borrowed(&s[range]),
            SharedText::Rope(r) => {
                let slice = r.byte_slice(range);
                slice.as_str().map_or_else(|| Cow::Owned(String::from(slice)), Cow::Borrowed)
            }
        }
    }

    /// The pieces the bytes in `range` are stored in, in order (one for a string).
    pub fn chunks(&self, range: Range<usize>) -> Box<dyn Iterator<Item = &str> + '_> {
        match self {
            SharedText::Str(s) => Box::new(std::iter::once(&s[range])),
            SharedText::Rope(r) => Box::new(r.byte_slice(range).chunks()),
        }
    }

    /// Whether byte `i` is on a char boundary (the end included); false past the end.
    pub fn is_char_boundary(&self, i: usize) -> bool {
        match self {
            SharedText::Str(s) => s.is_char_boundary(i),
            SharedText::Rope(r) => {
                if i >= r.len_bytes() {
                    return i == r.len_bytes();
                }
                let (chunk, start, _, _) = r.chunk_at_byte(i);
                chunk.is_char_boundary(i - start)
            }
        }
    }

    /// The line break the text ends with, or `""` (see [`super::final_break`]).
    pub fn final_break(&self) -> &'static str {
        match self {
            SharedText::Str(s) => super::final_break(s),
            SharedText::Rope(r) => super::rope_final_break(r),
        }
    }

    /// Every occurrence of `needle` (not empty), overlapping ones included, in text order. A
    /// rope is searched in place: within each leaf with one vectorised search, and across leaf
    /// boundaries by extending the candidates a leaf's tail leaves open.
    pub fn find_all(&self, needle: &str) -> Vec<Range<usize>> {
        self.find_all_without(needle, None).unwrap_or_default()
    }

    /// [`SharedText::find_all`] in a text without a `\r`, or `None` when it has one: one pass over
    /// a rope's leaves instead of two.
    pub fn find_all_lf(&self, needle: &str) -> Option<Vec<Range<usize>>> {
        self.find_all_without(needle, Some(b'\r'))
    }

    /// [`SharedText::find_all`], or `None` as soon as a leaf holds the byte `stop`.
    fn find_all_without(&self, needle: &str, stop: Option<u8>) -> Option<Vec<Range<usize>>> {
        let n = needle.as_bytes();
        let mut out = Vec::new();
        let Some(&first) = n.first() else { return Some(out) };
        let finder = memchr::memmem::Finder::new(n);
        let mut at = 0;
        for chunk in self.chunks(0..self.len()) {
            let bytes = chunk.as_bytes();
            if stop.is_some_and(|b| memchr::memchr(b, bytes).is_some()) {
                return None;
            }
            // A match of valid UTF-8 starts at a char boundary, so stepping one byte past each
            // start finds the overlapping ones too.
            let mut from = 0;
            while let Some(i) = finder.find(&bytes[from..]) {
                out.push(at + from + i..at + from + i + n.len());
                from += i + 1;
            }
            // Matches that start in this leaf's last `n.len() - 1` bytes and go on past it.
            let tail_start = bytes.len().saturating_sub(n.len() - 1);
            for i in memchr::memchr_iter(first, &bytes[tail_start..]).map(|i| tail_start + i) {
                let here = &bytes[i..];
                let end = at + i + n.len();
                if n.starts_with(here) && end <= self.len() && self.slice_eq(at + bytes.len()..end, &n[here.len()..]) {
                    out.push(at + i..end);
                }
            }
            at += bytes.len();
        }
        Some(out)
    }

    /// Whether the bytes in `range` (within the text) are `want`.
    fn slice_eq(&self, range: Range<usize>, want: &[u8]) -> bool {
        let mut rest = want;
        for piece in self.byte_chunks(range) {
            let Some(tail) = rest.strip_prefix(piece) else { return false };
            rest = tail;
        }
        rest.is_empty()
    }

    /// Like [`SharedText::chunks`] for a range that need not lie on char boundaries.
    fn byte_chunks(&self, range: Range<usize>) -> Vec<&[u8]> {
        match self {
            SharedText::Str(s) => vec![&s.as_bytes()[range]],
            SharedText::Rope(r) => {
                let mut out = Vec::new();
                let mut at = range.start;
                while at < range.end {
                    let (chunk, start, _, _) = r.chunk_at_byte(at);
                    let bytes = &chunk.as_bytes()[at - start..];
                    let take = bytes.len().min(range.end - at);
                    out.push(&bytes[..take]);
                    at += take;
                }
                out
            }
        }
    }
}

impl From<String> for SharedText {
    fn from(s: String) -> SharedText {
        SharedText::Str(Arc::new(s))
    }
}

impl From<&str> for SharedText {
    fn from(s: &str) -> SharedText {
        SharedText::from(s.to_owned())
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &SharedText) -> bool {
        match (self, other) {
            (SharedText::Str(a), SharedText::Str(b)) => a == b,
            (SharedText::Rope(a), SharedText::Rope(b)) => a == b,
            (SharedText::Str(s), SharedText::Rope(r)) | (SharedText::Rope(r), SharedText::Str(s)) => r == s.as_str(),
        }
    }
}

impl Eq for SharedText {}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        match self {
            SharedText::Str(s) => s.as_str() == other,
            SharedText::Rope(r) => r == other,
        }
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            SharedText::Str(_) => "Str",
            SharedText::Rope(_) => "Rope",
        };
        let shown = self.slice(0..floor_char_boundary(self, self.len().min(80)));
        write!(f, "SharedText::{kind}({} bytes, {shown:?}...)", self.len())
    }
}

/// The largest char boundary of `text` at or before `i`.
fn floor_char_boundary(text: &SharedText, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every occurrence, overlapping ones included, as a plain scan of the string finds them.
    fn naive(hay: &str, needle: &str) -> Vec<Range<usize>> {
        (0..hay.len())
            .filter(|&i| hay.as_bytes()[i..].starts_with(needle.as_bytes()))
            .map(|i| i..i + needle.len())
            .collect()
    }

    /// A rope of many leaves whose text is `text`, built from inserts so its leaves split at
    /// varied places.
    fn rope(text: &str) -> Rope {
        let mut r = Rope::new();
        let mut at = 0;
        for piece in text.split_inclusive(['\n', 'a']) {
            r.insert(r.len_chars(), piece);
            at += piece.len();
        }
        assert_eq!(at, text.len());
        r
    }

    #[test]
    fn a_rope_is_searched_in_place_as_its_string_would_be() {
        let unit = "ab🦀é\naaab\r\n";
        let text: String = (0..3000).map(|i| format!("{unit}{i}{}", "a".repeat(i % 7))).collect();
        let shared =
            [SharedText::from(text.clone()), SharedText::Rope(rope(&text)), SharedText::Rope(Rope::from_str(&text))];
        let long = text[101..2599].to_owned();
        let needles = ["a", "aa", "aaa", "ab🦀", "🦀", "\r\n1", "b\r\n2", "é\naaab\r\n17aaa", "not there", &long];
        for s in &shared {
            assert!(s == text.as_str() && s.len() == text.len());
            for needle in needles {
                assert_eq!(s.find_all(needle), naive(&text, needle), "{s:?}: {needle:?}");
            }
            assert_eq!(s.find_all_lf("a"), None, "{s:?} has a \\r");
        }
        if let SharedText::Rope(r) = &shared[1] {
            assert!(r.chunks().count() > 20, "the rope must have many leaves");
        }
        // Without a `\r` anywhere, the one-pass search finds what the plain one does.
        let lf = text.replace('\r', "");
        for s in [SharedText::from(lf.clone()), SharedText::Rope(rope(&lf))] {
            for needle in ["a", "aab", "é\naaab\n17aaa", "not there"] {
                assert_eq!(s.find_all_lf(needle), Some(naive(&lf, needle)), "{s:?}: {needle:?}");
            }
        }
        // A `\r` in the last leaf only still counts.
        let late = SharedText::Rope(rope(&format!("{lf}\r")));
        assert_eq!(late.find_all_lf("a"), None);
    }

    #[test]
    fn slices_and_boundaries_agree_with_the_string() {
        let text = "é🦀x\r\ny".repeat(500);
        let (flat, roped) = (SharedText::from(text.clone()), SharedText::Rope(rope(&text)));
        for i in 0..=text.len() + 2 {
            assert_eq!(roped.is_char_boundary(i), text.is_char_boundary(i), "{i}");
            assert_eq!(flat.is_char_boundary(i), text.is_char_boundary(i), "{i}");
        }
        for (a, b) in [(0, 0), (0, text.len()), (7, 3000), (1000, 1009)] {
            let (a, b) = (floor_char_boundary(&flat, a), floor_char_boundary(&flat, b));
            assert_eq!(roped.slice(a..b), &text[a..b]);
            assert_eq!(roped.chunks(a..b).collect::<String>(), &text[a..b]);
        }
        assert_eq!(roped.to_str(), text);
        assert!(flat == roped);
    }
}
