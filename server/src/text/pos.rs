//! The one owner of offsets.
//!
//! tether's internal unit is the byte offset into a document's UTF-8 text ([`Offset`]), always on
//! a char boundary: it is what `regex`, `grep-searcher` and `similar` speak. Every conversion to
//! another unit lives here: 1-based tool lines ([`LineIndex`]) and LSP positions in UTF-8, UTF-16
//! or UTF-32 code units ([`offset_to_position`], [`position_to_offset`]).
//!
//! Lines are LSP lines everywhere: a line ends at `\n`, `\r\n` or a lone `\r`, nothing else. The
//! rope is built with ropey's `cr_lines` feature (and without `unicode_lines`), so that a rope
//! line is exactly an LSP line.

use ropey::Rope;

/// A byte offset into a text, on a char boundary: tether's internal position unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Offset(usize);

impl Offset {
    /// The offset `bytes` bytes from the start.
    pub const fn new(bytes: usize) -> Offset {
        Offset(bytes)
    }

    /// The offset in bytes.
    pub const fn get(self) -> usize {
        self.0
    }
}

/// The code unit an LSP `Position.character` counts, as negotiated with the client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PositionEncoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units: the LSP default.
    #[default]
    Utf16,
    /// Unicode scalar values (chars).
    Utf32,
}

/// A zero-based LSP position: a line and a column in the negotiated code unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Zero-based LSP line.
    pub line: u32,
    /// Zero-based column, in code units of the negotiated [`PositionEncoding`].
    pub character: u32,
}

impl Position {
    /// The position at `line`, `character`.
    pub const fn new(line: u32, character: u32) -> Position {
        Position { line, character }
    }
}

/// The length of the line break at the end of `line` (0, 1 or 2 chars, all ASCII).
fn break_len(line: ropey::RopeSlice<'_>) -> usize {
    let n = line.len_chars();
    match (n.checked_sub(2).map(|i| line.char(i)), n.checked_sub(1).map(|i| line.char(i))) {
        (Some('\r'), Some('\n')) => 2,
        (_, Some('\n' | '\r')) => 1,
        _ => 0,
    }
}

/// Converts an LSP position to a byte offset, clamping as the LSP specification says: a line past
/// the end means the end of the text, a character past the end of its line means the end of that
/// line (before its line break), and a character inside a multi-unit char rounds down to its start.
pub fn position_to_offset(rope: &Rope, pos: Position, enc: PositionEncoding) -> Offset {
    let line_idx = pos.line as usize;
    if line_idx >= rope.len_lines() {
        return Offset(rope.len_bytes());
    }
    let line = rope.line(line_idx);
    let content_chars = line.len_chars() - break_len(line);
    let content = line.slice(..content_chars);
    let col = pos.character as usize;
    let char_in_line = match enc {
        PositionEncoding::Utf8 => content.byte_to_char(col.min(content.len_bytes())),
        PositionEncoding::Utf16 => content.utf16_cu_to_char(col.min(content.len_utf16_cu())),
        PositionEncoding::Utf32 => col.min(content_chars),
    };
    Offset(rope.line_to_byte(line_idx) + content.char_to_byte(char_in_line))
}

/// Converts a byte offset to an LSP position. An offset past the end is clamped to the end; an
/// offset inside a char is rounded down to its start.
pub fn offset_to_position(rope: &Rope, offset: Offset, enc: PositionEncoding) -> Position {
    let byte = offset.0.min(rope.len_bytes());
    let ch = rope.byte_to_char(byte);
    let line = rope.char_to_line(ch);
    let line_start = rope.line_to_char(line);
    let character = match enc {
        PositionEncoding::Utf8 => rope.char_to_byte(ch) - rope.line_to_byte(line),
        PositionEncoding::Utf16 => rope.char_to_utf16_cu(ch) - rope.char_to_utf16_cu(line_start),
        PositionEncoding::Utf32 => ch - line_start,
    };
    Position { line: to_u32(line), character: to_u32(character) }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Splits `text` into LSP lines: each item is a line's content and its line break (`"\n"`,
/// `"\r\n"`, `"\r"` or `""` for a last line without one). A text ending in a line break does not
/// yield an empty last line; an empty text yields nothing.
pub fn lines(text: &str) -> Lines<'_> {
    Lines { rest: text }
}

/// Iterator returned by [`lines`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let bytes = self.rest.as_bytes();
        let (content_end, next) = match memchr::memchr2(b'\n', b'\r', bytes) {
            None => (bytes.len(), bytes.len()),
            Some(i) if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') => (i, i + 2),
            Some(i) => (i, i + 1),
        };
        let (line, rest) = self.rest.split_at(next);
        self.rest = rest;
        Some(line.split_at(content_end))
    }
}

/// Maps between byte offsets and 1-based tool lines of one text.
///
/// Tool lines are LSP lines numbered from 1, except that a final line break does not start an
/// extra, empty line: `"a\nb\n"` has two tool lines, `"a\nb"` too, `""` none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset where each tool line starts.
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Indexes the lines of `text`.
    pub fn new(text: &str) -> LineIndex {
        let mut starts = Vec::new();
        let mut at = 0;
        for (content, brk) in lines(text) {
            starts.push(at);
            at += content.len() + brk.len();
        }
        LineIndex { starts, len: text.len() }
    }

    /// The number of tool lines.
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The offset where 1-based `line` starts; `line_count() + 1` is the end of the text.
    /// Returns `None` for line 0 or a line past that.
    pub fn line_start(&self, line: usize) -> Option<Offset> {
        match line {
            0 => None,
            n if n <= self.starts.len() => Some(Offset(self.starts[n - 1])),
            n if n == self.starts.len() + 1 => Some(Offset(self.len)),
            _ => None,
        }
    }

    /// The 1-based tool line containing `offset` (an offset at the very end belongs to the last
    /// line, or to line 1 of an empty text).
    pub fn line_of(&self, offset: Offset) -> usize {
        match self.starts.binary_search(&offset.0) {
            Ok(i) => i + 1,
            Err(i) => i.max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENCODINGS: [PositionEncoding; 3] = [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32];

    /// Text with every awkward case: emoji (4 UTF-8 bytes, 2 UTF-16 units), CJK (3 bytes, 1 unit),
    /// a combining mark, CRLF, a lone CR, and no final newline.
    const MIXED: &str = "a\u{1F600}b\r\n\u{4E2D}\u{6587}\rx\u{301}y\nlast";

    #[test]
    fn rope_lines_are_lsp_lines() {
        let rope = Rope::from_str(MIXED);
        assert_eq!(rope.len_lines(), 4);
        // Unicode line separators other than \n, \r\n and \r are not line breaks for LSP.
        let rope = Rope::from_str("a\u{2028}b\u{85}c\u{c}d");
        assert_eq!(rope.len_lines(), 1);
    }

    #[test]
    fn position_round_trip() {
        let rope = Rope::from_str(MIXED);
        // (byte offset, utf-8 column, utf-16 column, utf-32 column, line)
        let table = [
            (0, 0, 0, 0, 0),
            (1, 1, 1, 1, 0),  // before the emoji
            (5, 5, 3, 2, 0),  // after the emoji
            (6, 6, 4, 3, 0),  // end of line 0, before \r\n
            (8, 0, 0, 0, 1),  // start of line 1
            (11, 3, 1, 1, 1), // between the two CJK chars
            (15, 0, 0, 0, 2), // after the lone \r
            (16, 1, 1, 1, 2), // before the combining mark
            (18, 3, 2, 2, 2), // after the combining mark
            (20, 0, 0, 0, 3), // "last"
            (24, 4, 4, 4, 3), // end of text
        ];
        for (byte, c8, c16, c32, line) in table {
            for (enc, col) in ENCODINGS.into_iter().zip([c8, c16, c32]) {
                let pos = Position::new(line, col);
                assert_eq!(offset_to_position(&rope, Offset(byte), enc), pos, "{enc:?} {byte}");
                assert_eq!(position_to_offset(&rope, pos, enc), Offset(byte), "{enc:?} {pos:?}");
            }
        }
    }

    #[test]
    fn positions_clamp() {
        let rope = Rope::from_str(MIXED);
        for enc in ENCODINGS {
            // A column past the end of a line stops before its line break.
            assert_eq!(position_to_offset(&rope, Position::new(0, 99), enc), Offset(6));
            assert_eq!(position_to_offset(&rope, Position::new(1, 99), enc), Offset(14));
            // A line past the end is the end of the text.
            assert_eq!(position_to_offset(&rope, Position::new(9, 0), enc), Offset(24));
            assert_eq!(offset_to_position(&rope, Offset(999), enc), offset_to_position(&rope, Offset(24), enc));
        }
        // Inside the emoji: UTF-16 column 2 is the low surrogate, UTF-8 column 3 a middle byte.
        assert_eq!(position_to_offset(&rope, Position::new(0, 2), PositionEncoding::Utf16), Offset(1));
        assert_eq!(position_to_offset(&rope, Position::new(0, 3), PositionEncoding::Utf8), Offset(1));
    }

    #[test]
    fn empty_and_trailing_newline() {
        let rope = Rope::from_str("");
        for enc in ENCODINGS {
            assert_eq!(position_to_offset(&rope, Position::new(0, 5), enc), Offset(0));
            assert_eq!(offset_to_position(&rope, Offset(0), enc), Position::new(0, 0));
        }
        let rope = Rope::from_str("x\n");
        let end = offset_to_position(&rope, Offset(2), PositionEncoding::Utf16);
        assert_eq!(end, Position::new(1, 0));
    }

    #[test]
    fn splits_tool_lines() {
        let table: &[(&str, &[(&str, &str)])] = &[
            ("", &[]),
            ("a", &[("a", "")]),
            ("a\n", &[("a", "\n")]),
            ("a\r\nb", &[("a", "\r\n"), ("b", "")]),
            ("a\rb\r", &[("a", "\r"), ("b", "\r")]),
            ("\n\n", &[("", "\n"), ("", "\n")]),
            ("\r\r\n", &[("", "\r"), ("", "\r\n")]),
        ];
        for (text, want) in table {
            assert_eq!(lines(text).collect::<Vec<_>>(), *want, "{text:?}");
        }
    }

    #[test]
    fn line_index() {
        let idx = LineIndex::new(MIXED);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(idx.line_start(0), None);
        assert_eq!(idx.line_start(1), Some(Offset(0)));
        assert_eq!(idx.line_start(2), Some(Offset(8)));
        assert_eq!(idx.line_start(3), Some(Offset(15)));
        assert_eq!(idx.line_start(5), Some(Offset(24)));
        assert_eq!(idx.line_start(6), None);
        assert_eq!(idx.line_of(Offset(0)), 1);
        assert_eq!(idx.line_of(Offset(7)), 1);
        assert_eq!(idx.line_of(Offset(8)), 2);
        assert_eq!(idx.line_of(Offset(24)), 4);
        assert_eq!(idx.line_of(Offset(14)), 2);
        assert_eq!(LineIndex::new("").line_count(), 0);
        assert_eq!(LineIndex::new("").line_of(Offset(0)), 1);
        assert_eq!(LineIndex::new("a\nb\n").line_count(), 2);
    }
}
