//! A sequence of find-and-replace edits applied to one text in memory, each seeing the result of
//! the one before: literal edits with a uniqueness guard and a whitespace-normalised fallback,
//! case-insensitive edits, ECMAScript regex edits with group references, and replacement limits.
//!
//! This is the edit model of the `filesystem` profile's `edit_file`/`edit_files`. It works on a
//! text whose line breaks are all `\n` (callers use [`Mapped::lf`](super::view::Mapped::lf) and
//! convert the result back to the file's breaks), and returns the new text or the first failing
//! edit; nothing is partially applied.

use regex::RegexBuilder;

use super::ecma::{self, Template};

/// One edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// What to find: literal text, or an ECMAScript regex when `is_regex`.
    pub old_text: String,
    /// What to put in its place; with `is_regex` a [`Template`].
    pub new_text: String,
    /// The most replacements; 0 replaces every match.
    pub limit: usize,
    /// Treat `old_text` as an ECMAScript regex.
    pub is_regex: bool,
    /// Match regardless of case.
    pub case_insensitive: bool,
}

/// Why an edit failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The index of the failing edit.
    pub index: usize,
    /// What went wrong, for the model.
    pub message: String,
}

/// Applies `edits` in order to `text` (line breaks `\n`), returning the new text.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, Failure> {
    let mut cur = text.to_owned();
    for (index, edit) in edits.iter().enumerate() {
        cur = apply_one(&cur, edit).map_err(|message| Failure { index, message })?;
    }
    Ok(cur)
}

/// Applies one edit.
pub fn apply_one(text: &str, edit: &Edit) -> Result<String, String> {
    if edit.old_text.is_empty() {
        return Err("oldText is empty: give the text to find".to_owned());
    }
    if edit.is_regex {
        return regex_edit(text, edit);
    }
    let found: Vec<(usize, usize)> = if edit.case_insensitive {
        let re = RegexBuilder::new(&regex::escape(&edit.old_text))
            .case_insensitive(true)
            .build()
            .map_err(|e| format!("oldText cannot be searched: {e}"))?;
        re.find_iter(text).map(|m| (m.start(), m.end())).collect()
    } else {
        text.match_indices(edit.old_text.as_str()).map(|(s, m)| (s, s + m.len())).collect()
    };
    if edit.limit == 1 && found.len() > 1 {
        return Err(format!(
            "oldText is not unique: found {} occurrences; add surrounding context so it matches one place, or set \
             limit: 0 (all) / limit: N",
            found.len()
        ));
    }
    if found.is_empty() {
        if edit.limit == 1 && !edit.case_insensitive {
            return normalized_edit(text, edit);
        }
        return Err("oldText not found".to_owned());
    }
    let take = if edit.limit == 0 { found.len() } else { edit.limit.min(found.len()) };
    Ok(splice(text, found.into_iter().take(take).map(|(s, e)| (s, e, edit.new_text.clone()))))
}

/// The regex mode: up to `limit` matches (all when 0), each replaced by the expanded template.
fn regex_edit(text: &str, edit: &Edit) -> Result<String, String> {
    let re = ecma::build(&edit.old_text, edit.case_insensitive)?;
    let template = Template::parse(&edit.new_text);
    template.check(&re)?;
    let mut pieces = Vec::new();
    for caps in re.captures_iter(text) {
        let caps = caps.map_err(|e| format!("regex failed while matching: {e}"))?;
        let Some(m) = caps.get(0) else { continue };
        // An empty match after the final line break is not on any line (JavaScript would
        // append there; `^(.*)$` with limit 0 must not add an empty line to the file).
        if m.start() == text.len() && m.start() == m.end() && text.ends_with('\n') {
            continue;
        }
        let mut out = String::new();
        template.expand(&caps, &mut out);
        pieces.push((m.start(), m.end(), out));
        if edit.limit != 0 && pieces.len() == edit.limit {
            break;
        }
    }
    if pieces.is_empty() {
        return Err(format!("pattern not found: /{}/ matched nothing", edit.old_text));
    }
    Ok(splice(text, pieces.into_iter()))
}

/// The whitespace-normalised fallback: `old_text` and each block of as many lines of the text,
/// both with their common leading indent removed, compared line by line. One match is replaced
/// by `new_text` moved to the block's indentation; several are ambiguous.
fn normalized_edit(text: &str, edit: &Edit) -> Result<String, String> {
    let with_break = edit.old_text.ends_with('\n');
    let old: Vec<&str> = body(&edit.old_text).split('\n').collect();
    if old.iter().all(|l| l.trim().is_empty()) {
        return Err("oldText not found".to_owned());
    }
    let old_indent = common_indent(&old);
    let want: Vec<&str> = dedent(&old, old_indent);
    let lines: Vec<(usize, &str)> = line_spans(text);
    let n = old.len();
    let mut hits = Vec::new();
    for i in 0..(lines.len() + 1).saturating_sub(n) {
        let window: Vec<&str> = lines[i..i + n].iter().map(|(_, l)| *l).collect();
        if dedent(&window, common_indent(&window)) != want {
            continue;
        }
        let start = lines[i].0;
        let (last_start, last) = lines[i + n - 1];
        let end = last_start + last.len();
        if with_break && text.as_bytes().get(end) != Some(&b'\n') {
            continue;
        }
        hits.push((start, end, common_indent(&window)));
    }
    match hits.len() {
        0 => Err("oldText not found (also tried a whitespace-normalized line match)".to_owned()),
        1 => {
            let (start, mut end, indent) = hits[0];
            let new_body = if with_break { body(&edit.new_text) } else { &edit.new_text };
            let replacement = reindent(new_body, old_indent, indent);
            if with_break && new_body.is_empty() {
                // Deleting whole lines takes their line break with them.
                end += 1;
                return Ok(splice(text, std::iter::once((start, end, String::new()))));
            }
            Ok(splice(text, std::iter::once((start, end, replacement))))
        }
        n => Err(format!(
            "oldText is not unique: found {n} whitespace-normalized matches; add surrounding context so it matches \
             one place"
        )),
    }
}

/// `s` without one final `\n`.
fn body(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

/// Every line of `text` with its byte offset, without an empty last line after a final break.
fn line_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in body(text).split('\n') {
        out.push((at, line));
        at += line.len() + 1;
    }
    if text.is_empty() {
        out.clear();
    }
    out
}

/// The longest leading whitespace shared by every non-blank line.
fn common_indent<'a>(lines: &[&'a str]) -> &'a str {
    let mut common: Option<&str> = None;
    for l in lines.iter().filter(|l| !l.trim().is_empty()) {
        let indent = &l[..l.len() - l.trim_start().len()];
        common = Some(match common {
            None => indent,
            Some(c) => {
                let n = c.bytes().zip(indent.bytes()).take_while(|(a, b)| a == b).count();
                &c[..n]
            }
        });
    }
    common.unwrap_or("")
}

/// `lines` with `indent` removed from each; blank lines become empty.
fn dedent<'a>(lines: &[&'a str], indent: &str) -> Vec<&'a str> {
    lines.iter().map(|l| if l.trim().is_empty() { "" } else { l.strip_prefix(indent).unwrap_or(l) }).collect()
}

/// `text` moved from indentation `from` to `to`: each line loses `from` (or, when it has less,
/// its own leading whitespace) and gains `to`; blank lines stay as they are.
fn reindent(text: &str, from: &str, to: &str) -> String {
    if from == to {
        return text.to_owned();
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            if l.trim().is_empty() {
                l.to_owned()
            } else {
                format!("{to}{}", l.strip_prefix(from).unwrap_or_else(|| l.trim_start()))
            }
        })
        .collect();
    lines.join("\n")
}

/// `text` with each `(start, end, replacement)` (sorted, not overlapping) applied.
fn splice(text: &str, pieces: impl Iterator<Item = (usize, usize, String)>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (s, e, r) in pieces {
        out.push_str(&text[at..s]);
        out.push_str(&r);
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit { old_text: old.into(), new_text: new.into(), limit: 1, is_regex: false, case_insensitive: false }
    }

    /// `(text, edits, expected text or the start of the error)`.
    #[test]
    fn check() {
        let regex = |old: &str, new: &str, limit| Edit { is_regex: true, limit, ..edit(old, new) };
        let table: Vec<(&str, Vec<Edit>, Result<&str, &str>)> = vec![
            ("a b a\n", vec![edit("b", "c")], Ok("a c a\n")),
            ("a b a\n", vec![edit("a", "x")], Err("oldText is not unique: found 2 occurrences")),
            ("a b a\n", vec![Edit { limit: 0, ..edit("a", "x") }], Ok("x b x\n")),
            ("a a a\n", vec![Edit { limit: 2, ..edit("a", "x") }], Ok("x x a\n")),
            ("Foo foo\n", vec![Edit { case_insensitive: true, limit: 0, ..edit("FOO", "bar") }], Ok("bar bar\n")),
            ("Foo\n", vec![Edit { case_insensitive: true, ..edit("fOO", "x") }], Ok("x\n")),
            ("x\n", vec![edit("y", "z")], Err("oldText not found")),
            ("a\n", vec![edit("a", "b"), edit("b", "c")], Ok("c\n")),
            ("a\n", vec![edit("a", "b"), edit("zz", "c")], Err("oldText not found")),
            // Whitespace-normalised: indentation differs, relative indent kept, new text moved.
            (
                "fn f() {\n        if x {\n            y();\n        }\n}\n",
                vec![edit("if x {\n    y();\n}", "if x {\n    z();\n}")],
                Ok("fn f() {\n        if x {\n            z();\n        }\n}\n"),
            ),
            (
                "  a\n  b\n\n    a\n    b\n",
                vec![edit("a\nb", "c")],
                Err("oldText is not unique: found 2 whitespace-normalized matches"),
            ),
            ("  a\n  b\nc\n", vec![edit("a\nb\n", "")], Ok("c\n")),
            ("  a\n    b\n", vec![edit("a\nb", "x")], Err("oldText not found")),
            // Regex: multiline anchors, references, limits, the final-break rule.
            ("one\ntwo\n", vec![regex("^(.*)$", r#""\1""#, 1)], Ok("\"one\"\ntwo\n")),
            ("one\ntwo\n", vec![regex("^(.*)$", "\"$1\"", 0)], Ok("\"one\"\n\"two\"\n")),
            ("k=1 k=2\n", vec![regex(r"(\w)=(\d)", "$2=$1", 0)], Ok("1=k 2=k\n")),
            ("price 5\n", vec![regex(r"\d", "$$$&", 1)], Ok("price $5\n")),
            ("abc\n", vec![regex(".*", r"\1", 1)], Err("newText refers to group 1")),
            ("abc\n", vec![regex("x+", "y", 1)], Err("pattern not found")),
            ("abc\n", vec![regex("(", "y", 1)], Err("invalid regex")),
            ("ABC abc\n", vec![Edit { case_insensitive: true, ..regex("a(?=b)", "_", 0) }], Ok("_BC _bc\n")),
            ("", vec![edit("", "x")], Err("oldText is empty")),
        ];
        for (text, edits, want) in table {
            let got = apply(text, &edits);
            match (got, want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{edits:?}"),
                (Err(got), Err(want)) => assert!(got.message.starts_with(want), "{edits:?}: {}", got.message),
                (got, want) => panic!("{edits:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn failure_names_the_edit() {
        let f = apply("a\n", &[edit("a", "b"), edit("q", "r")]).expect_err("second fails");
        assert_eq!(f.index, 1);
    }
}
