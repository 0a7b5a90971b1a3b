//! The lines of a file most like a text that was not found, for a `no_match` message.
//!
//! A model whose `old_string` missed needs to see what the file really says there. Every window
//! of the file as tall as the needle is scored by how alike its lines are to the needle's (Dice
//! similarity of character bigrams, indentation ignored), and the best window is shown with its
//! line numbers. Work is bounded: on a large file only the needle's first lines are compared, so
//! that at most [`PAIR_BUDGET`] line pairs are scored.

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

/// Sorted character bigrams of `line` with its surrounding whitespace trimmed.
fn bigrams(line: &str) -> Vec<u64> {
    let chars: Vec<char> = line.trim().chars().collect();
    let mut out: Vec<u64> = chars.windows(2).map(|w| (u64::from(w[0]) << 32) | u64::from(w[1])).collect();
    out.sort_unstable();
    out
}

/// How alike two lines are, from 0 to 1 (1 when equal after trimming).
fn similarity(a: &str, a_grams: &[u64], b: &str, b_grams: &[u64]) -> f64 {
    if a.trim() == b.trim() {
        return 1.0;
    }
    if a_grams.is_empty() || b_grams.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a_grams.len() && j < b_grams.len() {
        match a_grams[i].cmp(&b_grams[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * common) as f64 / (a_grams.len() + b_grams.len()) as f64
}

/// The window of `text` (lines split by `\n`) most like `needle`, or `None` when nothing is at
/// least [`MIN_SCORE`] alike.
pub fn closest(text: &str, needle: &str) -> Option<Closest> {
    let file: Vec<&str> = split_lines(text);
    let want: Vec<&str> = split_lines(needle);
    if file.is_empty() || want.is_empty() {
        return None;
    }
    let height = want.len().min(file.len());
    let used = height.min((PAIR_BUDGET / file.len()).max(1));
    let want_grams: Vec<Vec<u64>> = want[..used].iter().map(|l| bigrams(l)).collect();
    let windows = file.len() - height + 1;
    let mut scores = vec![0.0f64; windows];
    for (j, line) in file.iter().enumerate() {
        let grams = bigrams(line);
        // File line j is line k of window j - k.
        for (k, wg) in want_grams.iter().enumerate() {
            if let Some(w) = j.checked_sub(k).filter(|&w| w < windows) {
                scores[w] += similarity(line, &grams, want[k], wg);
            }
        }
    }
    let (best, score) =
        scores.iter().enumerate().fold((0, f64::MIN), |acc, (i, &s)| if s > acc.1 { (i, s) } else { acc });
    let score = score / used as f64;
    if score < MIN_SCORE {
        return None;
    }
    let shown = file[best..best + height.min(MAX_SHOWN)].iter().map(|l| (*l).to_owned()).collect();
    Some(Closest { first: best + 1, height, shown, score })
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
