//! Search/replace blocks anchored by a line hint.
//!
//! A block names whole lines to find (`search`), the lines to put in their place (`replace`) and
//! the 1-based line where the search is expected to start (`start_line`), counted in the text as
//! it was before any block is applied. Every block is located in that original text, so a
//! caller giving several blocks never has to shift later line numbers by what earlier blocks
//! added or removed.
//!
//! A block matches at its hint first; when the hint is off, the nearest match within
//! [`WINDOW`] lines of it wins (the earlier of two at the same distance), so a hint a few lines
//! off still finds its block but a block elsewhere in the file is never edited by accident.
//! Lines compare exactly, or with leading and trailing whitespace ignored when `trim` is set;
//! line breaks never take part (a CRLF file matches a search typed with `\n`). Replacement
//! lines are inserted exactly as given, with the file's line break, and the text keeps its
//! final-newline state. Blocks that overlap an earlier located block fail, so each line is
//! replaced at most once.

use crate::text::{lines, LineEnding};

/// How far (in lines, either way) from its hint a block is looked for.
pub const WINDOW: usize = 40;

/// One search/replace block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block<'a> {
    /// The lines to find (a final line break is not an extra empty line).
    pub search: &'a str,
    /// The lines to put in their place; empty removes the found lines.
    pub replace: &'a str,
    /// The 1-based line of the original text where `search` is expected to start.
    pub start_line: usize,
}

/// Where a block was found and what replacing it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The 1-based line of the original text where the found lines start.
    pub line: usize,
    /// How many lines were found (and are replaced).
    pub removed: usize,
    /// How many lines replace them.
    pub added: usize,
}

/// Why a block could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// The search has no lines.
    EmptySearch,
    /// `start_line` is 0.
    ZeroStart,
    /// `start_line` lies past the end of the text.
    PastEnd {
        /// The hint given.
        start_line: usize,
        /// The number of lines in the text.
        total: usize,
    },
    /// No match within the window around the hint.
    NotFound {
        /// The 1-based lines where the search matches elsewhere in the text (outside the window).
        elsewhere: Vec<usize>,
    },
    /// The block's lines overlap those of an earlier block.
    Overlaps {
        /// The 0-based index of the earlier block.
        other: usize,
        /// The 1-based line where this block matched.
        line: usize,
    },
}

/// The outcome of applying blocks to a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// One result per block, in the order given.
    pub results: Vec<Result<Found, Miss>>,
    /// The text with every found block replaced (the blocks that missed change nothing).
    pub text: String,
    /// The number of lines of `text`.
    pub line_count: usize,
}

impl Outcome {
    /// Whether every block was found.
    pub fn all_found(&self) -> bool {
        self.results.iter().all(Result::is_ok)
    }

    /// How many blocks were found.
    pub fn found_count(&self) -> usize {
        self.results.iter().filter(|r| r.is_ok()).count()
    }
}

/// Locates every block in `text` and returns the text with the found ones replaced.
///
/// Whether to use the result when some block missed (non-atomic) or not at all (atomic) is the
/// caller's decision: the outcome says which blocks were found either way.
pub fn apply(text: &str, blocks: &[Block<'_>], trim: bool) -> Outcome {
    let file: Vec<(&str, &str)> = lines(text).collect();
    let brk = LineEnding::detect(text).break_for(text);
    // Line ranges (0-based, half-open) already claimed, with the index of the block owning each.
    let mut claimed: Vec<(usize, usize, usize)> = Vec::new();
    let mut results = Vec::with_capacity(blocks.len());
    for (i, b) in blocks.iter().enumerate() {
        let r = locate(&file, b, trim).and_then(|k| {
            let n = lines(b.search).count();
            match claimed.iter().find(|(s, e, _)| k < *e && *s < k + n) {
                Some(&(_, _, other)) => Err(Miss::Overlaps { other, line: k + 1 }),
                None => {
                    claimed.push((k, k + n, i));
                    Ok(Found { line: k + 1, removed: n, added: lines(b.replace).count() })
                }
            }
        });
        results.push(r);
    }
    claimed.sort_unstable();
    let mut out: Vec<(&str, &str)> = Vec::with_capacity(file.len());
    let mut at = 0;
    for &(start, end, i) in &claimed {
        out.extend_from_slice(&file[at..start]);
        out.extend(lines(blocks[i].replace).map(|(content, _)| (content, brk)));
        at = end;
    }
    out.extend_from_slice(&file[at..]);
    // Keep the text's final-newline state, whatever the last line now is.
    let final_break = file.last().map_or("", |(_, b)| *b);
    if let Some(last) = out.last_mut() {
        last.1 = if final_break.is_empty() { "" } else { final_break };
    }
    let mut new = String::with_capacity(text.len());
    for (content, b) in &out {
        new.push_str(content);
        new.push_str(b);
    }
    Outcome { results, text: new, line_count: out.len() }
}

/// The 0-based line where block `b` starts in `file`.
fn locate(file: &[(&str, &str)], b: &Block<'_>, trim: bool) -> Result<usize, Miss> {
    let want: Vec<&str> = lines(b.search).map(|(c, _)| c).collect();
    if want.is_empty() {
        return Err(Miss::EmptySearch);
    }
    if b.start_line == 0 {
        return Err(Miss::ZeroStart);
    }
    let total = file.len();
    if b.start_line > total {
        return Err(Miss::PastEnd { start_line: b.start_line, total });
    }
    let eq = |a: &str, w: &str| if trim { a.trim() == w.trim() } else { a == w };
    let matches_at = |k: usize| k + want.len() <= total && want.iter().enumerate().all(|(j, w)| eq(file[k + j].0, w));
    let hint = b.start_line - 1;
    for d in 0..=WINDOW {
        let before = hint.checked_sub(d).filter(|_| d > 0);
        let after = Some(hint + d).filter(|&k| k < total);
        for k in [before, after].into_iter().flatten() {
            if matches_at(k) {
                return Ok(k);
            }
        }
    }
    let elsewhere = (0..total).filter(|&k| matches_at(k)).map(|k| k + 1).collect();
    Err(Miss::NotFound { elsewhere })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(search: &'static str, replace: &'static str, start_line: usize) -> Block<'static> {
        Block { search, replace, start_line }
    }

    #[test]
    fn applies_blocks() {
        // The text, the blocks, trim, the new text and what each block did ((line, removed, added)).
        type Case = (&'static str, Vec<Block<'static>>, bool, &'static str, Vec<(usize, usize, usize)>);
        let table: Vec<Case> = vec![
            ("a\nb\nc\n", vec![block("b", "B", 2)], false, "a\nB\nc\n", vec![(2, 1, 1)]),
            // The hint is off by one either way; the nearest match wins.
            ("a\nb\nc\n", vec![block("b", "B", 1)], false, "a\nB\nc\n", vec![(2, 1, 1)]),
            ("a\nb\nc\n", vec![block("b", "B", 3)], false, "a\nB\nc\n", vec![(2, 1, 1)]),
            // Two equal candidates: the one at the hint, then the nearest, then the earlier.
            ("x\ny\nx\ny\nx\n", vec![block("x", "X", 3)], false, "x\ny\nX\ny\nx\n", vec![(3, 1, 1)]),
            ("x\ny\nz\ny\nx\n", vec![block("x", "X", 3)], false, "X\ny\nz\ny\nx\n", vec![(1, 1, 1)]),
            // Multi-line, growing and shrinking.
            ("a\nb\nc\nd\n", vec![block("b\nc", "1\n2\n3", 2)], false, "a\n1\n2\n3\nd\n", vec![(2, 2, 3)]),
            ("a\nb\nc\nd\n", vec![block("b\nc\n", "", 2)], false, "a\nd\n", vec![(2, 2, 0)]),
            // Every block's hint counts in the original text, whatever earlier blocks did.
            (
                "1\n2\n3\n4\n5\n",
                vec![block("1", "one\nuno", 1), block("3", "", 3), block("5", "five", 5)],
                false,
                "one\nuno\n2\n4\nfive\n",
                vec![(1, 1, 2), (3, 1, 0), (5, 1, 1)],
            ),
            // Blocks given out of order.
            ("a\nb\nc\n", vec![block("c", "C", 3), block("a", "A", 1)], false, "A\nb\nC\n", vec![(3, 1, 1), (1, 1, 1)]),
            // Trim ignores the whitespace around each line when comparing; the replacement is exact.
            (
                "fn f() {\n    log('hi');\n}\n",
                vec![block("log('hi');  ", "    log('bye');", 2)],
                true,
                "fn f() {\n    log('bye');\n}\n",
                vec![(2, 1, 1)],
            ),
            // CRLF files match searches typed with `\n`, and new lines take CRLF.
            ("a\r\nb\r\nc\r\n", vec![block("b", "x\ny", 2)], false, "a\r\nx\r\ny\r\nc\r\n", vec![(2, 1, 2)]),
            // No final newline stays so, whether the last line is replaced or removed.
            ("a\nb", vec![block("b", "B\nC", 2)], false, "a\nB\nC", vec![(2, 1, 2)]),
            ("a\nb", vec![block("b", "", 2)], false, "a", vec![(2, 1, 0)]),
            ("a\nb\n", vec![block("b", "", 2)], false, "a\n", vec![(2, 1, 0)]),
            ("only\n", vec![block("only", "", 1)], false, "", vec![(1, 1, 0)]),
            // Emoji and CJK are plain text.
            (
                "\u{1F600}\n\u{4E2D}\n",
                vec![block("\u{4E2D}", "\u{6587}", 2)],
                false,
                "\u{1F600}\n\u{6587}\n",
                vec![(2, 1, 1)],
            ),
        ];
        for (text, blocks, trim, want, found) in table {
            let out = apply(text, &blocks, trim);
            assert_eq!(out.text, want, "{text:?} {blocks:?}");
            let got: Vec<_> =
                out.results.iter().map(|r| r.clone().map(|f| (f.line, f.removed, f.added)).expect("found")).collect();
            assert_eq!(got, found, "{text:?} {blocks:?}");
            assert_eq!(out.line_count, crate::text::LineFacts::of(&out.text).lines, "{want:?}");
        }
    }

    #[test]
    fn misses() {
        let far: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let table: Vec<(&str, Block<'_>, bool, Miss)> = vec![
            ("a\nb\n", block("", "x", 1), false, Miss::EmptySearch),
            ("a\nb\n", block("a", "x", 0), false, Miss::ZeroStart),
            ("a\nb\n", block("a", "x", 3), false, Miss::PastEnd { start_line: 3, total: 2 }),
            ("a\nb\n", block("c", "x", 1), false, Miss::NotFound { elsewhere: vec![] }),
            // Without trim, indentation counts.
            ("  a\nb\n", block("a", "x", 1), false, Miss::NotFound { elsewhere: vec![] }),
            // A block runs past the end of the text.
            ("a\nb\n", block("b\nc", "x", 2), false, Miss::NotFound { elsewhere: vec![] }),
            // Outside the window: reported, not edited.
            (&far, block("line 90", "x", 2), false, Miss::NotFound { elsewhere: vec![90] }),
        ];
        for (text, b, trim, want) in table {
            let out = apply(text, &[b], trim);
            assert_eq!(out.results, vec![Err(want)], "{text:?} {b:?}");
            assert_eq!(out.text, text, "a miss changes nothing");
        }
        // Within the window it is found.
        let out = apply(&far, &[block("line 41", "x", 1)], false);
        assert_eq!(out.results[0].as_ref().map(|f| f.line), Ok(41));
    }

    #[test]
    fn overlapping_blocks_fail_and_the_rest_apply() {
        let out = apply("a\nb\nc\nd\n", &[block("b\nc", "X", 2), block("c", "Y", 3), block("d", "D", 4)], false);
        assert_eq!(out.results[1], Err(Miss::Overlaps { other: 0, line: 3 }));
        assert!(!out.all_found());
        assert_eq!(out.found_count(), 2);
        assert_eq!(out.text, "a\nX\nD\n");
        assert_eq!(out.line_count, 3);
    }
}
