//! The lines of a file most like a text that was not found, for a `no_match` message.
//!
//! A model whose `old_string` missed needs to see what the file really says there. Every window
//! of the file as tall as the needle is scored by how alike its lines are to the needle's (Dice
//! similarity of byte pairs, surrounding whitespace and blank lines ignored), and the best window
//! is shown with its line numbers. Work is bounded: on a large file only the needle's first lines
//! are compared, so that at most [`PAIR_BUDGET`] line pairs are scored, and each file line is read
//! once for all of them.

use std::fmt::Write as _;

/// The most line pairs scored for one search.
pub const PAIR_BUDGET: usize = 2_000_000;
/// The most lines of the best window shown.
pub const MAX_SHOWN: usize = 5;
/// The most characters of one shown line.
const MAX_LINE_CHARS: usize = 200;
/// Below this similarity nothing is shown: the window would only mislead.
pub const MIN_SCORE: f64 = 0.3;

/// The window of the file most like the needle.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    /// Its first line, 1-based.
    pub first: usize,
    /// Its height in lines (the needle's, or the file's when shorter).
    pub height: usize,
    /// Its first lines (at most [`MAX_SHOWN`]), as in the file.
    pub shown: Vec<String>,
    /// How alike it is, from 0 to 1.
    pub score: f64,
}

impl Closest {
    /// The window as numbered lines (`read_file` style), with a note when it is taller than shown.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, line) in self.shown.iter().enumerate() {
            let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
            let more = if cut.len() < line.len() { " [...]" } else { "" };
            let _ = writeln!(out, "{:>6}\t{cut}{more}", self.first + i);
        }
        if self.height > self.shown.len() {
            let _ = writeln!(out, "       (and {} more lines)", self.height - self.shown.len());
        }
        out.pop();
        out
    }

    /// The line range, as `line 4` or `lines 4-9`.
    pub fn lines(&self) -> String {
        line_span(self.first, self.first + self.height - 1)
    }
}

/// The byte bigrams of up to 64 needle lines, for scoring file lines against all of them in one
/// pass over each file line's bytes.
struct Bigrams<'a> {
    /// The needle lines, trimmed.
    lines: Vec<&'a str>,
    /// For every byte pair, the set of needle lines (bit `k` for line `k`) that contain it.
    masks: Vec<u64>,
    /// The number of byte pairs of each needle line.
    sizes: Vec<usize>,
}

impl<'a> Bigrams<'a> {
    fn new(want: &[&'a str]) -> Bigrams<'a> {
        let lines: Vec<&str> = want.iter().take(64).map(|l| l.trim()).collect();
        let mut masks = vec![0u64; 1 << 16];
        for (k, line) in lines.iter().enumerate() {
            for w in line.as_bytes().windows(2) {
                masks[pair(w)] |= 1 << k;
            }
        }
        let sizes = lines.iter().map(|l| l.len().saturating_sub(1)).collect();
        Bigrams { lines, masks, sizes }
    }

    /// How alike `line` is to each needle line, from 0 to 1, into `out`: 1 when equal after
    /// trimming, else the Dice similarity of their byte pairs (counting the file line's pairs
    /// that the needle line has, capped at the needle line's own count).
    fn similarities(&self, line: &str, hits: &mut [usize], out: &mut [f64]) {
        let line = line.trim();
        hits.iter_mut().for_each(|h| *h = 0);
        for w in line.as_bytes().windows(2) {
            let mut mask = self.masks[pair(w)];
            while mask != 0 {
                hits[mask.trailing_zeros() as usize] += 1;
                mask &= mask - 1;
            }
        }
        let size = line.len().saturating_sub(1);
        for (k, o) in out.iter_mut().enumerate() {
            *o = if line == self.lines[k] {
                1.0
            } else if size + self.sizes[k] == 0 {
                0.0
            } else {
                (2 * hits[k].min(self.sizes[k])) as f64 / (size + self.sizes[k]) as f64
            };
        }
    }
}

/// The table index of a byte pair.
fn pair(w: &[u8]) -> usize {
    (usize::from(w[0]) << 8) | usize::from(w[1])
}

/// The window of `text` (lines split by `\n`) most like `needle`, or `None` when nothing is at
/// least [`MIN_SCORE`] alike.
///
/// Blank and whitespace-only lines are left out on both sides, so that a needle that leaves out
/// or adds a blank line still lines up with the region it was copied from; the window shown is
/// the file's, blank lines included.
pub fn closest(text: &str, needle: &str) -> Option<Closest> {
    let file: Vec<&str> = split_lines(text);
    let rows: Vec<usize> = (0..file.len()).filter(|&i| !file[i].trim().is_empty()).collect();
    let want: Vec<&str> = split_lines(needle).into_iter().filter(|l| !l.trim().is_empty()).collect();
    if rows.is_empty() || want.is_empty() {
        return None;
    }
    let height = want.len().min(rows.len());
    let used = height.min((PAIR_BUDGET / rows.len()).max(1)).min(64);
    let table = Bigrams::new(&want[..used]);
    let windows = rows.len() - height + 1;
    let mut scores = vec![0.0f64; windows];
    let (mut hits, mut sims) = (vec![0usize; used], vec![0.0f64; used]);
    for (j, &row) in rows.iter().enumerate() {
        table.similarities(file[row], &mut hits, &mut sims);
        // File row j is line k of window j - k.
        for (k, sim) in sims.iter().enumerate() {
            if let Some(w) = j.checked_sub(k).filter(|&w| w < windows) {
                scores[w] += sim;
            }
        }
    }
    let (best, score) =
        scores.iter().enumerate().fold((0, f64::MIN), |acc, (i, &s)| if s > acc.1 { (i, s) } else { acc });
    let score = score / used as f64;
    if score < MIN_SCORE {
        return None;
    }
    let (first, last) = (rows[best], rows[best + height - 1]);
    let height = last - first + 1;
    let shown = file[first..first + height.min(MAX_SHOWN)].iter().map(|l| (*l).to_owned()).collect();
    Some(Closest { first: first + 1, height, shown, score })
}

/// The lines of `text` split by `\n`, without an empty last line after a final break.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = text.split('\n').collect();
    if out.last() == Some(&"") {
        out.pop();
    }
    out
}

/// `line 4` or `lines 4-9`.
pub fn line_span(first: usize, last: usize) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        let file = "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n\nfn compute(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
        // (needle, expected first line and height, or None).
        let table = [
            ("let totl = compute(1, 2);\nprintln!(\"{total}\");", Some((2, 2))),
            ("fn compute(a: u64, b: u64) -> u64 {\n    a * b\n}", Some((6, 3))),
            ("zzzz qqqq", None),
            ("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk", None),
        ];
        for (needle, want) in table {
            let got = closest(file, needle).map(|c| (c.first, c.height));
            assert_eq!(got, want, "{needle:?}");
        }
        let c = closest(file, "fn main() {\n  let total = compute(1, 3);").expect("close");
        assert_eq!(c.render(), "     1\tfn main() {\n     2\t    let total = compute(1, 2);");
        assert_eq!(c.lines(), "lines 1-2");
    }
}
