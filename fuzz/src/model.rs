//! Independent reference models the targets compare tether against: written for clarity, not
//! speed, and sharing no code with the server.

/// Splits `text` into LSP lines: each is its content and its break (`"\n"`, `"\r\n"`, `"\r"`, or
/// `""` for a last line without one). A text ending in a break yields no empty last line; an
/// empty text yields nothing.
pub fn split_lines(text: &str) -> Vec<(&str, &str)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        let brk = match b[i] {
            b'\n' => 1,
            b'\r' if b.get(i + 1) == Some(&b'\n') => 2,
            b'\r' => 1,
            _ => 0,
        };
        if brk > 0 {
            out.push((&text[start..i], &text[i..i + brk]));
            i += brk;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < b.len() {
        out.push((&text[start..], ""));
    }
    out
}

/// The number of line breaks in `text` (a `\r\n` counts once).
pub fn breaks(text: &str) -> usize {
    split_lines(text).iter().filter(|(_, b)| !b.is_empty()).count()
}

/// `text` with every line break written as `\n`.
pub fn lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// `text` (typed with any breaks) with every line break written as `brk`.
pub fn with_breaks(text: &str, brk: &str) -> String {
    let mut out = String::new();
    for (content, b) in split_lines(text) {
        out.push_str(content);
        if !b.is_empty() {
            out.push_str(brk);
        }
    }
    out
}

/// Every start of `needle` in `hay`, overlapping ones included, on char boundaries.
pub fn occurrences(hay: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    hay.char_indices().map(|(i, _)| i).filter(|&i| hay[i..].starts_with(needle)).collect()
}

/// The LSP lines of a text as `(start, content end, line end)` byte offsets: the text of line
/// `k` is `start..content_end`, its break `content_end..line_end`. A text ending in a break (and
/// the empty text) has an empty last line, as an LSP client counts lines.
pub fn line_spans(text: &str) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for (content, brk) in split_lines(text) {
        out.push((at, at + content.len(), at + content.len() + brk.len()));
        at += content.len() + brk.len();
    }
    if out.last().is_none_or(|&(_, c, e)| c != e) {
        out.push((text.len(), text.len(), text.len()));
    }
    out
}

/// Code units of a position's `character`, as negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Bytes.
    Utf8,
    /// UTF-16 code units.
    Utf16,
    /// Chars.
    Utf32,
}

impl Units {
    /// The length of `c` in these units.
    pub fn len(self, c: char) -> usize {
        match self {
            Units::Utf8 => c.len_utf8(),
            Units::Utf16 => c.len_utf16(),
            Units::Utf32 => 1,
        }
    }
}

/// The byte offset of LSP position (`line`, `character`) in `text`, clamped as the LSP
/// specification says: a line past the end is the end of the text, a character past its line's
/// content is the end of the content (before the break), and a character inside a char rounds
/// down to the char's start.
pub fn offset_of(text: &str, line: usize, character: usize, units: Units) -> usize {
    let spans = line_spans(text);
    let Some(&(start, content_end, _)) = spans.get(line) else { return text.len() };
    let mut col = 0;
    for (i, c) in text[start..content_end].char_indices() {
        let next = col + units.len(c);
        if next > character {
            return start + i;
        }
        col = next;
    }
    content_end
}

/// The LSP position of the byte offset `at` (a char boundary) in `text`.
pub fn position_of(text: &str, at: usize, units: Units) -> (usize, usize) {
    let spans = line_spans(text);
    let line = spans.iter().rposition(|&(s, _, _)| s <= at).unwrap_or(0);
    let start = spans[line].0;
    (line, text[start..at].chars().map(|c| units.len(c)).sum())
}
