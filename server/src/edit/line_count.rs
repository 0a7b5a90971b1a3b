//! Checking a whole-file write against the line count its author declared.
//!
//! A model that writes a whole file also says how many lines it holds; a mismatch means the
//! content was cut short (or padded) on the way, so the write is refused before anything is
//! written. Lines are tool lines (`\n`, `\r\n` or a lone `\r` ends one; a final line break does
//! not start another), but a content ending in a line break is also accepted with one more, the
//! count a naive split on `\n` gives, since both are common ways of counting the same text.

use crate::text::{ends_with_newline, LineFacts};

/// A declared line count that the content does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// The count declared.
    pub expected: u64,
    /// The content's line count.
    pub actual: usize,
}

/// The number of lines of `content`.
pub fn count(content: &str) -> usize {
    LineFacts::of(content).lines
}

/// Checks that `content` has `expected` lines; returns its line count.
pub fn check(content: &str, expected: u64) -> Result<usize, Mismatch> {
    let actual = count(content);
    let ok = expected == actual as u64 || (ends_with_newline(content) && expected == actual as u64 + 1);
    if ok {
        Ok(actual)
    } else {
        Err(Mismatch { expected, actual })
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn check() {
        // The content, the declared count, and the outcome.
        let table: &[(&str, u64, Result<usize, usize>)] = &[
            ("", 0, Ok(0)),
            ("", 1, Err(0)),
            ("one", 1, Ok(1)),
            ("a\nb\nc\nd", 4, Ok(4)),
            ("a\nb\nc\nd", 3, Err(4)),
            ("a\nb\nc\nd", 5, Err(4)),
            // A final break: the line count, or the split count one more.
            ("a\nb\n", 2, Ok(2)),
            ("a\nb\n", 3, Ok(2)),
            ("a\nb\n", 4, Err(2)),
            ("a\r\nb\r\n", 2, Ok(2)),
            ("a\rb", 2, Ok(2)),
            ("\n", 1, Ok(1)),
            ("\n\n", 2, Ok(2)),
            ("\u{1F600}\n\u{4E2D}", 2, Ok(2)),
        ];
        for &(content, expected, want) in table {
            let got = super::check(content, expected).map_err(|m| m.actual);
            assert_eq!(got, want, "{content:?} declared {expected}");
        }
    }
}
