//! The text model: documents over a rope, line endings, BOM, encodings and positions.
//!
//! Plain values only: nothing here does I/O or speaks a protocol.

mod decode;
mod pos;
mod shared;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use ropey::Rope;

pub use decode::{decode, encode_utf8, looks_binary, Decoded, Encoding, BINARY_SNIFF_LEN};
pub use pos::{lines, offset_to_position, position_to_offset, LineIndex, Lines, Offset, Position, PositionEncoding};
pub use shared::SharedText;

/// The line-ending style of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineEnding {
    /// Every line break is `\n` (also the style of a text without line breaks).
    Lf,
    /// Every line break is `\r\n`.
    Crlf,
    /// Every line break is a lone `\r`.
    Cr,
    /// More than one kind of line break.
    Mixed,
}

impl LineEnding {
    /// Detects the style of `text`.
    pub fn detect(text: &str) -> LineEnding {
        // Most texts have no `\r` at all, and one vectorised scan says so; only the others need
        // the walk from break to break.
        if memchr::memchr(b'\r', text.as_bytes()).is_none() {
            return LineEnding::Lf;
        }
        LineFacts::of(text).ending
    }

    /// The name shown to users: `lf`, `crlf`, `cr` or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "lf",
            LineEnding::Crlf => "crlf",
            LineEnding::Cr => "cr",
            LineEnding::Mixed => "mixed",
        }
    }

    /// The line break new lines get in a file of this style: the style's own, or, for a mixed
    /// file, the break most of its lines use (the first of those used equally often).
    ///
    /// Most, not the first: a stray `\r` in one line of a CRLF file (`foo\r\r\n`) makes the file
    /// mixed, and new lines must still get `\r\n`, not that line's lone `\r`.
    pub fn break_for(self, text: &str) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
            LineEnding::Cr => "\r",
            LineEnding::Mixed => predominant_break(text),
        }
    }
}

impl fmt::Display for LineEnding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The line break most of `text`'s lines end with; among breaks used equally often, the one
/// that comes first; `\n` when there is none.
fn predominant_break(text: &str) -> &'static str {
    const BREAKS: [&str; 3] = ["\n", "\r\n", "\r"];
    let bytes = text.as_bytes();
    // How often each break occurs, and where it first does.
    let mut count = [0usize; 3];
    let mut first = [usize::MAX; 3];
    let mut skip_lf_at = usize::MAX;
    for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        if i == skip_lf_at {
            continue;
        }
        let kind = if bytes[i] == b'\n' {
            0
        } else if bytes.get(i + 1) == Some(&b'\n') {
            skip_lf_at = i + 1;
            1
        } else {
            2
        };
        count[kind] += 1;
        first[kind] = first[kind].min(i);
    }
    let best = (0..3).max_by_key(|&k| (count[k], std::cmp::Reverse(first[k]))).unwrap_or(0);
    if count[best] == 0 {
        "\n"
    } else {
        BREAKS[best]
    }
}

/// What one pass over a text learns about its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineFacts {
    /// The number of line breaks.
    pub breaks: usize,
    /// The number of 1-based tool lines (a final line break does not start another line).
    pub lines: usize,
    /// The line-ending style ([`LineEnding::Lf`] when there is no break at all).
    pub ending: LineEnding,
}

impl LineFacts {
    /// Scans `text` once, jumping from break to break.
    pub fn of(text: &str) -> LineFacts {
        let bytes = text.as_bytes();
        let (mut lf, mut crlf, mut cr, mut breaks) = (false, false, false, 0);
        let mut skip_lf_at = usize::MAX;
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            if i == skip_lf_at {
                continue;
            }
            breaks += 1;
            if bytes[i] == b'\n' {
                lf = true;
            } else if bytes.get(i + 1) == Some(&b'\n') {
                crlf = true;
                skip_lf_at = i + 1;
            } else {
                cr = true;
            }
        }
        let ending = match (lf, crlf, cr) {
            (_, false, false) => LineEnding::Lf,
            (false, true, false) => LineEnding::Crlf,
            (false, false, true) => LineEnding::Cr,
            _ => LineEnding::Mixed,
        };
        let lines = breaks + usize::from(!text.is_empty() && !ends_with_newline(text));
        LineFacts { breaks, lines, ending }
    }
}

/// Whether `text` ends with a line break.
pub fn ends_with_newline(text: &str) -> bool {
    text.ends_with('\n') || text.ends_with('\r')
}

/// The line break `text` ends with (`\r\n`, `\n` or a lone `\r`), or `""`.
pub fn final_break(text: &str) -> &'static str {
    break_of_tail(text.as_bytes())
}

/// The line break a text ends with, told from its last bytes (two are enough); the one place
/// that knows what a final line break is, for strings, ropes and shared texts alike.
pub fn break_of_tail(tail: &[u8]) -> &'static str {
    match tail {
        [.., b'\r', b'\n'] => "\r\n",
        [.., b'\n'] => "\n",
        [.., b'\r'] => "\r",
        _ => "",
    }
}

/// The line break `rope` ends with, if any (looking at its last two bytes only).
pub fn rope_final_break(rope: &Rope) -> &'static str {
    let n = rope.len_bytes();
    let from = n.saturating_sub(2);
    let tail: Vec<u8> = (from..n).map(|i| rope.byte(i)).collect();
    break_of_tail(&tail)
}

/// Rewrites every line break in `text` (`\n`, `\r\n` or a lone `\r`) as `brk`, borrowing `text`
/// when it already uses `brk` throughout.
///
/// This is how new text typed with `\n` takes a file's own line ending: tools pass
/// `LineEnding::detect(base).break_for(base)` as `brk`. A final line break is converted like any
/// other and never added or removed, so the caller decides the final-newline state.
pub fn convert_breaks<'a>(text: &'a str, brk: &str) -> Cow<'a, str> {
    let unchanged = match brk {
        // The common case (model text into an LF file) needs only a scan for `\r`.
        "\n" => !text.contains('\r'),
        _ => lines(text).all(|(_, b)| b.is_empty() || b == brk),
    };
    if unchanged {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for (content, b) in lines(text) {
        out.push_str(content);
        if !b.is_empty() {
            out.push_str(brk);
        }
    }
    Cow::Owned(out)
}

/// `text`, about to be written between `before` and `after`, with a line break at either end
/// that would join the break next to it written as `\r\n`: a lone `\r` just before a `\n`, or a
/// `\n` just after a lone `\r`, would make one `\r\n` of two breaks, and a line would vanish.
/// (`\r` then `\r\n`, and `\r\n` then `\n`, stay two breaks.) Only a text with both kinds of
/// break (a lone `\r` and a `\n`) can need it.
pub fn keep_breaks_apart<'a>(text: Cow<'a, str>, before: &str, after: &str) -> Cow<'a, str> {
    let mut text = text;
    if before.ends_with('\r') && text.starts_with('\n') {
        text.to_mut().insert(0, '\r');
    }
    if after.starts_with('\n') && text.ends_with('\r') {
        text.to_mut().push('\n');
    }
    text
}

/// A text document held in a rope: an open editor buffer, or a file read for editing.
///
/// It remembers how its bytes were encoded (encoding and BOM) so that it can be written back the
/// same way; line-ending style and the final newline are read off the text when asked.
#[derive(Debug, Clone)]
pub struct Document {
    rope: Rope,
    encoding: Encoding,
    bom: bool,
}

impl Document {
    /// A UTF-8 document without a BOM holding `text`.
    pub fn from_text(text: &str) -> Document {
        Document { rope: Rope::from_str(text), encoding: Encoding::Utf8, bom: false }
    }

    /// Decodes file bytes into a document; `None` when the bytes are binary.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Document> {
        match decode(bytes) {
            Decoded::Text { text, encoding, bom } => Some(Document { rope: Rope::from_str(&text), encoding, bom }),
            Decoded::Binary => None,
        }
    }

    /// The rope.
    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    /// The whole text as one string.
    pub fn text(&self) -> String {
        String::from(&self.rope)
    }

    /// The length of the text in bytes (without the BOM).
    pub fn len(&self) -> usize {
        self.rope.len_bytes()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.rope.len_bytes() == 0
    }

    /// The encoding the document was decoded from.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Whether the document started with a byte order mark.
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    /// The document's line-ending style.
    pub fn line_ending(&self) -> LineEnding {
        // Chunks may split a `\r\n` pair, so scan the rope's lines rather than its chunks.
        let (mut lf, mut crlf, mut cr) = (false, false, false);
        for line in self.rope.lines() {
            let n = line.len_chars();
            match (n.checked_sub(2).map(|i| line.char(i)), n.checked_sub(1).map(|i| line.char(i))) {
                (Some('\r'), Some('\n')) => crlf = true,
                (_, Some('\n')) => lf = true,
                (_, Some('\r')) => cr = true,
                _ => {}
            }
        }
        match (lf, crlf, cr) {
            (_, false, false) => LineEnding::Lf,
            (false, true, false) => LineEnding::Crlf,
            (false, false, true) => LineEnding::Cr,
            _ => LineEnding::Mixed,
        }
    }

    /// Whether the text ends with a line break.
    pub fn ends_with_newline(&self) -> bool {
        let n = self.rope.len_chars();
        n > 0 && matches!(self.rope.char(n - 1), '\n' | '\r')
    }

    /// The number of 1-based tool lines (a final line break does not start another line).
    pub fn line_count(&self) -> usize {
        let lsp_lines = self.rope.len_lines();
        match (self.is_empty(), self.ends_with_newline()) {
            (true, _) => 0,
            (false, true) => lsp_lines - 1,
            (false, false) => lsp_lines,
        }
    }

    /// The contents (without their line breaks) of the lines from the 0-based `first` on, read
    /// from the rope's leaves in place: a line within one leaf is borrowed, only one spanning
    /// leaves is copied. A text ending in a line break yields no empty last line (as [`lines`]).
    pub fn lines_from(&self, first: usize) -> ChunkLines<'_> {
        let start = self.rope.line_to_byte(first.min(self.rope.len_lines()));
        ChunkLines { chunks: self.rope.byte_slice(start..).chunks(), rest: "", carry: None, skip_lf: false }
    }

    /// A reader of the text's UTF-8 bytes (without the BOM), straight from the rope's leaves.
    pub fn reader(&self) -> RopeReader<'_> {
        RopeReader { chunks: self.rope.chunks(), current: &[] }
    }

    /// Replaces the bytes in `range` with `text`. The range must lie on char boundaries within
    /// the text; callers convert and clamp positions with [`position_to_offset`] first.
    pub fn replace(&mut self, range: Range<Offset>, text: &str) {
        replace_bytes(&mut self.rope, range.start.get()..range.end.get(), text);
    }

    /// Applies an LSP content change: `range` in the given encoding, or the whole text when `None`.
    /// Returns the byte range of the previous text that was replaced.
    pub fn apply_change(
        &mut self,
        range: Option<(Position, Position)>,
        text: &str,
        enc: PositionEncoding,
    ) -> Range<Offset> {
        match range {
            Some((start, end)) => {
                let from = position_to_offset(&self.rope, start, enc);
                // Typing sends an empty range: its one position is converted once.
                let to = if end == start { from } else { position_to_offset(&self.rope, end, enc).max(from) };
                self.replace(from..to, text);
                from..to
            }
            None => {
                let replaced = Offset::new(0)..Offset::new(self.rope.len_bytes());
                self.rope = Rope::from_str(text);
                replaced
            }
        }
    }
}
/// Replaces the bytes in `range` of `rope` (on char boundaries) with `text`: the one place a
/// byte range becomes the char range ropey edits by.
pub fn replace_bytes(rope: &mut Rope, range: Range<usize>, text: &str) {
    let start = rope.byte_to_char(range.start);
    let end = if range.end == range.start { start } else { rope.byte_to_char(range.end) };
    if start < end {
        rope.remove(start..end);
    }
    if !text.is_empty() {
        rope.insert(start, text);
    }
}

/// Whether two ropes hold the same text. The length is checked first, so most comparisons are
/// O(1); then the chunks are walked side by side, and where both point at the same memory (ropes
/// cloned from one another share every leaf neither has changed since) the bytes are equal without
/// being read. Comparing an edited document with the text expected after a small edit therefore
/// reads only the edited leaves.
pub fn ropes_eq(a: &Rope, b: &Rope) -> bool {
    if a.len_bytes() != b.len_bytes() {
        return false;
    }
    let (mut ca, mut cb) = (a.chunks(), b.chunks());
    let (mut x, mut y): (&[u8], &[u8]) = (&[], &[]);
    loop {
        if x.is_empty() {
            x = match ca.next() {
                Some(c) => c.as_bytes(),
                None => return y.is_empty() && cb.all(str::is_empty),
            };
            continue;
        }
        if y.is_empty() {
            y = match cb.next() {
                Some(c) => c.as_bytes(),
                None => return false,
            };
            continue;
        }
        let n = x.len().min(y.len());
        if !std::ptr::eq(x.as_ptr(), y.as_ptr()) && x[..n] != y[..n] {
            return false;
        }
        (x, y) = (&x[n..], &y[n..]);
    }
}

/// The lines of a rope, leaf by leaf: see [`Document::lines_from`].
#[derive(Debug, Clone)]
pub struct ChunkLines<'a> {
    chunks: ropey::iter::Chunks<'a>,
    /// What is left of the current leaf.
    rest: &'a str,
    /// The start of a line that began in an earlier leaf.
    carry: Option<String>,
    /// The last line ended with `\r`: a `\n` next belongs to its break.
    skip_lf: bool,
}

impl<'a> Iterator for ChunkLines<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        loop {
            if self.rest.is_empty() {
                // The end: a last line without a break, if any.
                self.rest = match self.chunks.next() {
                    Some(chunk) => chunk,
                    None => return self.carry.take().map(Cow::Owned),
                };
            }
            if std::mem::take(&mut self.skip_lf) {
                if let Some(rest) = self.rest.strip_prefix('\n') {
                    self.rest = rest;
                    continue;
                }
            }
            let Some(i) = memchr::memchr2(b'\n', b'\r', self.rest.as_bytes()) else {
                self.carry.get_or_insert_with(String::new).push_str(self.rest);
                self.rest = "";
                continue;
            };
            let line = &self.rest[..i];
            self.skip_lf = self.rest.as_bytes()[i] == b'\r';
            self.rest = &self.rest[i + 1..];
            return Some(match self.carry.take() {
                Some(mut carried) => {
                    carried.push_str(line);
                    Cow::Owned(carried)
                }
                None => Cow::Borrowed(line),
            });
        }
    }
}

/// Reads a rope's bytes leaf by leaf ([`Document::reader`]), so that a searcher can stream an
/// open buffer as it streams a file, without first copying it into one string.
#[derive(Debug, Clone)]
pub struct RopeReader<'a> {
    chunks: ropey::iter::Chunks<'a>,
    current: &'a [u8],
}

impl std::io::Read for RopeReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut written = 0;
        while written < buf.len() {
            if self.current.is_empty() {
                match self.chunks.next() {
                    Some(chunk) => self.current = chunk.as_bytes(),
                    None => break,
                }
                continue;
            }
            let n = self.current.len().min(buf.len() - written);
            buf[written..written + n].copy_from_slice(&self.current[..n]);
            self.current = &self.current[n..];
            written += n;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rope_equality_across_chunks() {
        let text: String = (0..5000).map(|i| format!("line {i} \u{1F600}\n")).collect();
        let rope = Rope::from_str(&text);
        assert!(rope.chunks().count() > 1);
        // Built another way, so that the chunk boundaries differ.
        let mut same = Rope::from_str(&text[..100]);
        same.insert(same.len_chars(), &text[100..]);
        assert!(ropes_eq(&rope, &same));
        let mut other = text.clone();
        let at = text.len() / 2 + text[text.len() / 2..].find('l').expect("an l");
        other.replace_range(at..at + 1, "L");
        assert!(!ropes_eq(&rope, &Rope::from_str(&other)));
        assert!(!ropes_eq(&rope, &Rope::from_str(&text[1..])));
        // Clones share their leaves; an edit in one (and the same edit in the other) leaves
        // the rest shared, and a difference inside a changed leaf is still found.
        let (mut x, mut y) = (rope.clone(), rope.clone());
        x.insert(10, "é");
        y.insert(10, "é");
        assert!(ropes_eq(&x, &y));
        y.remove(3000..3001);
        y.insert(3000, "Z");
        assert!(!ropes_eq(&x, &y));
        assert!(ropes_eq(&Rope::new(), &Rope::from_str("")));
    }

    #[test]
    fn line_endings() {
        let table = [
            ("", LineEnding::Lf, false, 0),
            ("no newline", LineEnding::Lf, false, 1),
            ("a\nb\n", LineEnding::Lf, true, 2),
            ("a\r\nb\r\n", LineEnding::Crlf, true, 2),
            ("a\rb", LineEnding::Cr, false, 2),
            ("a\r\nb\n", LineEnding::Mixed, true, 2),
            ("a\rb\r\n", LineEnding::Mixed, true, 2),
            ("\u{1F600}\r\n\u{4E2D}", LineEnding::Crlf, false, 2),
        ];
        for (text, style, nl, count) in table {
            let doc = Document::from_text(text);
            assert_eq!(LineEnding::detect(text), style, "{text:?}");
            assert_eq!(doc.line_ending(), style, "{text:?}");
            assert_eq!(doc.ends_with_newline(), nl, "{text:?}");
            assert_eq!(ends_with_newline(text), nl, "{text:?}");
            assert_eq!(doc.line_count(), count, "{text:?}");
            assert_eq!(LineIndex::new(text).line_count(), count, "{text:?}");
            assert_eq!(LineFacts::of(text).lines, count, "{text:?}");
        }
    }

    #[test]
    fn converts_breaks() {
        let table = [
            ("", "\r\n", ""),
            ("no break", "\r\n", "no break"),
            ("a\nb\n", "\r\n", "a\r\nb\r\n"),
            ("a\nb", "\r\n", "a\r\nb"),
            ("a\r\nb\r\n", "\n", "a\nb\n"),
            ("a\rb\r\nc\n", "\r", "a\rb\rc\r"),
            ("\n\n", "\r\n", "\r\n\r\n"),
            ("\u{1F600}\n\u{4E2D}", "\r\n", "\u{1F600}\r\n\u{4E2D}"),
        ];
        for (text, brk, want) in table {
            assert_eq!(convert_breaks(text, brk), want, "{text:?} with {brk:?}");
        }
        assert!(matches!(convert_breaks("a\r\nb\r\n", "\r\n"), Cow::Borrowed(_)));
        assert!(matches!(convert_breaks("a\nb", "\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn breaks_written_next_to_breaks_stay_apart() {
        let table = [
            ("x\r", "a", "\nb", "x\r\n"),
            ("\nx", "a\r", "b", "\r\nx"),
            ("\n", "a\r", "\nb", "\r\n"),
            ("\r", "a\r", "\nb", "\r\n"),
            ("x\r", "a", "b", "x\r"),
            ("\nx", "a\r\n", "b", "\nx"),
            ("\r\n", "a\r", "\nb", "\r\n"),
            ("", "a\r", "\nb", ""),
        ];
        for (text, before, after, want) in table {
            assert_eq!(keep_breaks_apart(Cow::Borrowed(text), before, after), want, "{text:?}");
        }
    }

    #[test]
    fn break_for_mixed_follows_first_line() {
        assert_eq!(LineEnding::Mixed.break_for("a\r\nb\n"), "\r\n");
        assert_eq!(LineEnding::Mixed.break_for("a\nb\r\n"), "\n");
        assert_eq!(LineEnding::Crlf.break_for(""), "\r\n");
    }

    #[test]
    fn break_for_mixed_takes_the_predominant_break() {
        let table = [
            // A stray CR in the first line of a CRLF file (codex's apply-patch suite, ported 022).
            ("foo\r\r\nbar\r\n", "\r\n"),
            ("a\nb\r\nc\r\n", "\r\n"),
            ("a\r\nb\nc\n", "\n"),
            ("a\rb\rc\r\n", "\r"),
            // Ties go to the break that comes first.
            ("a\rb\nc\r\nd\n\r", "\r"),
            ("a\r\nb\rc\r\nd\r", "\r\n"),
        ];
        for (text, want) in table {
            assert_eq!(LineEnding::detect(text), LineEnding::Mixed, "{text:?}");
            assert_eq!(LineEnding::Mixed.break_for(text), want, "{text:?}");
        }
    }

    #[test]
    fn document_from_bytes_keeps_encoding() {
        let doc = Document::from_bytes(b"\xEF\xBB\xBFx\r\n".to_vec()).expect("text");
        assert!(doc.has_bom());
        assert_eq!(doc.encoding(), Encoding::Utf8);
        assert_eq!(doc.text(), "x\r\n");
        assert_eq!(doc.line_ending(), LineEnding::Crlf);
        assert!(Document::from_bytes(b"\0\x01".to_vec()).is_none());
    }

    #[test]
    fn applies_lsp_changes() {
        let mut doc = Document::from_text("a\u{1F600}b\r\nline two");
        // Replace the emoji (UTF-16 columns 1..3) with "x".
        doc.apply_change(Some((Position::new(0, 1), Position::new(0, 3))), "x", PositionEncoding::Utf16);
        assert_eq!(doc.text(), "axb\r\nline two");
        // Insert past the end of line 1 clamps to its end.
        doc.apply_change(Some((Position::new(1, 50), Position::new(1, 50))), "!", PositionEncoding::Utf8);
        assert_eq!(doc.text(), "axb\r\nline two!");
        // Delete the CRLF: from end of line 0 to start of line 1.
        doc.apply_change(Some((Position::new(0, 3), Position::new(1, 0))), " ", PositionEncoding::Utf32);
        assert_eq!(doc.text(), "axb line two!");
        doc.apply_change(None, "new", PositionEncoding::Utf16);
        assert_eq!(doc.text(), "new");
    }
}
