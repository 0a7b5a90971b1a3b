//! Saying in words how `old_string` differs from the region of the file most like it.
//!
//! A `no_match` message shows the most similar lines of the file, but some differences cannot be
//! seen in them: tabs against spaces, trailing spaces, a blank line left out, a non-breaking
//! space, a look-alike quote, accents composed differently, escape sequences written out. The
//! model needs those named, or its next try repeats the mistake.

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::UnicodeNormalization;

use super::escape::sequences_in;
use super::reindent::indent_of;

/// The most differences named in one message.
const MAX_NAMED: usize = 5;

/// A needle and the file's region most like it, kept until the argument's name is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contrast {
    needle: String,
    window: Vec<String>,
    first: usize,
    /// The needle's escape sequences that the file has written out too.
    escapes_in_file: Vec<&'static str>,
}

impl Contrast {
    /// `needle` against `window`, the file's lines from line `first` (1-based); `hay` is the
    /// whole file, for the escape sequences it has.
    pub fn new(needle: &str, window: &[&str], first: usize, hay: &str) -> Contrast {
        let escapes_in_file = sequences_in(needle).into_iter().filter(|s| hay.contains(s)).collect();
        let window = window.iter().map(|l| (*l).to_owned()).collect();
        Contrast { needle: needle.to_owned(), window, first, escapes_in_file }
    }

    /// What differs, in words that name the argument `field`.
    pub fn differences(&self, field: &str) -> Vec<String> {
        let window: Vec<&str> = self.window.iter().map(String::as_str).collect();
        differences(&self.needle, &window, self.first, field, &self.escapes_in_file)
    }
}

/// What differs between `needle` and `window`, the file's lines from line `first` (1-based), in
/// words that name `field`; `escapes_in_file` are the needle's escape sequences the file has.
fn differences(needle: &str, window: &[&str], first: usize, field: &str, escapes_in_file: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let want: Vec<&str> = super::closest::split_lines(needle);
    // Non-blank lines side by side, with the blank lines before each.
    let solid = |lines: &[&str]| -> Vec<(usize, usize)> {
        let mut blanks = 0;
        let mut rows = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if l.trim().is_empty() {
                blanks += 1;
            } else {
                rows.push((i, blanks));
                blanks = 0;
            }
        }
        rows
    };
    let (mine, theirs) = (solid(&want), solid(window));
    for (k, (&(i, mine_blank), &(j, their_blank))) in mine.iter().zip(&theirs).enumerate() {
        let line = first + j;
        if k > 0 && mine_blank != their_blank {
            out.push(blank_lines(mine_blank, their_blank, line, field));
        }
        if let Some(d) = describe(want[i], window[j], line, field) {
            out.push(d);
        }
    }
    let escapes = sequences_in(needle);
    if !escapes.is_empty() {
        let listed = escapes.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
        out.push(if !escapes_in_file.is_empty() {
            format!(
                "`{field}` has escape sequences written out ({listed}); they were not read as the characters they \
                 stand for because the file has them written out too"
            )
        } else {
            format!(
                "`{field}` has escape sequences written out ({listed}); read as the characters they stand for it \
                 was not found either"
            )
        });
    }
    out.truncate(MAX_NAMED);
    out
}

/// A difference in the number of blank lines before file line `line`.
fn blank_lines(mine: usize, theirs: usize, line: usize, field: &str) -> String {
    let n = |k: usize| if k == 1 { "a blank line".to_owned() } else { format!("{k} blank lines") };
    if theirs > mine {
        format!("the file has {} before line {line} where `{field}` has {}", n(theirs), count_or_none(mine))
    } else {
        format!(
            "`{field}` has {} before the text of line {line}, where the file has {}",
            n(mine),
            count_or_none(theirs)
        )
    }
}

fn count_or_none(k: usize) -> String {
    match k {
        0 => "none".to_owned(),
        1 => "one".to_owned(),
        k => k.to_string(),
    }
}

/// How `mine` (a line of `old_string`) differs from `theirs` (file line `line`), where the
/// difference is one a reader cannot see: indentation, trailing whitespace, accents composed
/// differently, or a look-alike or invisible character.
fn describe(mine: &str, theirs: &str, line: usize, field: &str) -> Option<String> {
    let mut parts = Vec::new();
    let (a, b) = (indent_of(mine), indent_of(theirs));
    if a != b && !mine.trim().is_empty() {
        parts.push(format!(
            "line {line} is indented with {} in the file and {} in `{field}`",
            indentation(b),
            indentation(a)
        ));
    }
    let (a, b) = (&mine[mine.trim_end().len()..], &theirs[theirs.trim_end().len()..]);
    if a != b {
        parts.push(match (a.is_empty(), b.is_empty()) {
            (false, true) => format!("line {line} has no trailing whitespace in the file, but `{field}` has"),
            (true, false) => format!("line {line} ends with trailing whitespace in the file that `{field}` lacks"),
            _ => format!("line {line} ends with different trailing whitespace in the file and in `{field}`"),
        });
    }
    let (a, b) = (mine.trim(), theirs.trim());
    if a != b {
        let (na, nb): (String, String) = (a.nfc().collect(), b.nfc().collect());
        if (na != a) != (nb != b) {
            let (file, model) = if nb != b { ("decomposed", "composed") } else { ("composed", "decomposed") };
            parts.push(format!(
                "line {line} has accents {file} in the file and {model} in `{field}` (Unicode normalization)"
            ));
        }
        let subtle = |(x, y): &(char, char)| !x.is_ascii_graphic() || !y.is_ascii_graphic();
        if let Some((x, y)) = first_difference(&na, &nb).filter(subtle) {
            parts.push(format!("line {line} has {} where `{field}` has {}", name(y), name(x)));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The first characters at which `a` and `b` differ (`None` when one is the other's prefix).
fn first_difference(a: &str, b: &str) -> Option<(char, char)> {
    a.chars().zip(b.chars()).find(|(x, y)| x != y)
}

/// A character, named so that an invisible one can be told apart.
fn name(c: char) -> String {
    match c {
        ' ' => "a space".to_owned(),
        '\t' => "a tab".to_owned(),
        '\u{A0}' => "a non-breaking space (U+00A0)".to_owned(),
        '\u{FEFF}' => "a byte order mark (U+FEFF)".to_owned(),
        '\u{200B}' => "a zero-width space (U+200B)".to_owned(),
        c if c.is_ascii_graphic() => format!("`{c}`"),
        c if c.is_whitespace() || c.is_control() || canonical_combining_class(c) != 0 => {
            format!("U+{:04X}", u32::from(c))
        }
        c => format!("`{c}` (U+{:04X})", u32::from(c)),
    }
}

/// An indentation in words: `4 spaces`, `a tab`, `2 tabs and 2 spaces`, `no indentation`.
fn indentation(indent: &str) -> String {
    let tabs = indent.chars().filter(|&c| c == '\t').count();
    let spaces = indent.chars().filter(|&c| c == ' ').count();
    let other = indent.chars().count() - tabs - spaces;
    let n = |k: usize, one: &str, many: &str| if k == 1 { format!("a {one}") } else { format!("{k} {many}") };
    let mut parts = Vec::new();
    if tabs > 0 {
        parts.push(n(tabs, "tab", "tabs"));
    }
    if spaces > 0 {
        parts.push(n(spaces, "space", "spaces"));
    }
    if other > 0 {
        parts.push(n(other, "other space character", "other space characters"));
    }
    if parts.is_empty() {
        "no indentation".to_owned()
    } else {
        parts.join(" and ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        // (needle, window, expected differences; the window starts at line 10).
        let table: &[(&str, &[&str], &[&str])] = &[
            ("\tx();\n", &["    x();"], &["line 10 is indented with 4 spaces in the file and a tab in `old_string`"]),
            ("x();  \ny();", &["x();", "z();"], &["line 10 has no trailing whitespace in the file, but `old_string` has"]),
            (
                "a();\nb();",
                &["a();", "", "b();"],
                &["the file has a blank line before line 12 where `old_string` has none"],
            ),
            ("a();\n\n\nb();", &["a();", "", "c();"], &["`old_string` has 2 blank lines before the text of line 12, where the file has one"]),
            ("let s = \"\u{201C}\";", &["let s = \"\u{201D}\";"], &["line 10 has `\u{201D}` (U+201D) where `old_string` has `\u{201C}` (U+201C)"]),
            ("a = 1 + b", &["a =\u{A0}1 + c"], &["line 10 has a non-breaking space (U+00A0) where `old_string` has a space"]),
            ("x = 1", &["y = 1"], &[]),
            ("cafe\u{301} = 2", &["caf\u{e9} = 1"], &["line 10 has accents composed in the file and decomposed in `old_string` (Unicode normalization)"]),
            ("print(\"a\\nb\")", &["print(\"a", "c\")"], &["`old_string` has escape sequences written out (`\\n`); read as the characters they stand for it was not found either"]),
        ];
        for &(needle, window, want) in table {
            let got = Contrast::new(needle, window, 10, &window.join("\n")).differences("old_string");
            assert_eq!(got, want, "{needle:?}");
        }
    }
}
