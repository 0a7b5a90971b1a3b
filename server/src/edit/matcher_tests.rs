//! Tests of the matcher: each replacement strategy, ambiguity and errors.

use super::*;
use crate::edit::apply_changes;

/// Runs one replacement and returns the new text and the strategy name, or the error kind.
fn run(text: &str, old: &str, new: &str, all: bool) -> Result<(String, &'static str), ErrorKind> {
    replace(text, old, new, all)
        .map(|r| (apply_changes(text, &r.changes), r.strategy.name))
        .map_err(|m| m.to_error("f", "old_string").kind())
}

#[test]
fn check() {
    use ErrorKind::{AmbiguousMatch as Ambiguous, NoMatch};
    type Case = (&'static str, &'static str, &'static str, bool, Result<(&'static str, &'static str), ErrorKind>);
    let table: &[Case] = &[
        ("a b c\n", "b", "B", false, Ok(("a B c\n", "exact"))),
        ("x x\n", "x", "y", true, Ok(("y y\n", "exact"))),
        ("x x\n", "x", "y", false, Err(Ambiguous)),
        ("aaa", "aa", "b", false, Err(Ambiguous)),
        ("aaa", "aa", "b", true, Ok(("ba", "exact"))),
        // Each tolerant level with a case only it matches.
        (
            "if a:\n    go()\n",
            "if a:\n  go()\n",
            "if a:\n  stop()\n",
            false,
            Ok(("if a:\n    stop()\n", "indentation")),
        ),
        ("x = 1   \ny = 2\n", "  x = 1\ny = 2", "  x = 3\ny = 2", false, Ok(("x = 3\ny = 2\n", "trimmed_lines"))),
        ("f(a,   b)\n", "f(a, b)\n", "g(a, b)\n", false, Ok(("g(a, b)\n", "collapsed_whitespace"))),
        ("call(x); done", "\n  call(x);  ", "\n  run(x);  ", false, Ok(("run(x); done", "trimmed_text"))),
        ("end\nlast", "last\n", "final\n", false, Ok(("end\nfinal", "trimmed_text"))),
        (
            "say(\u{201C}hi\u{201D}) \u{2013} ok\u{2026}",
            "say(\"hi\") - ok...",
            "say(\"yo\")",
            false,
            Ok(("say(\"yo\")", "punctuation")),
        ),
        ("x = a\u{00A0}+ b;\n", "a + b", "a - b", false, Ok(("x = a - b;\n", "punctuation"))),
        // Rust counts a non-breaking space as whitespace, so a whole line is caught earlier.
        ("a\u{00A0}=\u{00A0}1\n", "a = 1", "a = 2", false, Ok(("a = 2\n", "collapsed_whitespace"))),
        // Ambiguity at a tolerant level stops the cascade.
        ("  a\n  b\n    a\n    b\n", "a\n b", "c", false, Err(Ambiguous)),
        ("a\n", "zzz", "y", false, Err(NoMatch)),
        ("a  b\n", "a b", "c", true, Err(NoMatch)),
        // A needle ending in a break does not match a last line without one at line levels.
        ("  x", "x\n", "y\n", false, Ok(("  y", "trimmed_text"))),
        // Line breaks: `\n` typed matches CRLF and lone CR; the file's break is written.
        ("a\r\nb\r\nc\r\n", "a\nb\n", "x\ny\n", false, Ok(("x\r\ny\r\nc\r\n", "exact"))),
        ("a\rb\r", "a\nb", "c\nd", false, Ok(("c\rd\r", "exact"))),
        ("  a\r\n  b\r\n", "a\nb\n", "a\nc\n", false, Ok(("  a\r\n  c\r\n", "indentation"))),
    ];
    for &(text, old, new, all, ref want) in table {
        let got = run(text, old, new, all);
        let want = (*want).map(|(t, s)| (t.to_owned(), s));
        assert_eq!(got, want, "{text:?}: {old:?} -> {new:?}");
    }
}

#[test]
fn messages() {
    let amb = replace("f()\nx\nf()\n", "f()", "g()", false).expect_err("ambiguous");
    assert_eq!(
        amb.to_error("a.py", "old_string").message(),
        "a.py: `old_string` matches 2 places: line 1, line 3; include more surrounding lines to make it \
         unique, or set `replace_all` to change every one"
    );
    let amb = replace("  f()\n  g()\n\n    f()\n g()\n", "f()\ng()", "h()", false).expect_err("ambiguous");
    assert_eq!(
        amb.to_error("a.py", "old_string").message(),
        "a.py: `old_string` matches 2 places after no exact match with flexible indentation: lines 1-2, \
         lines 4-5; copy `old_string` exactly from the file, with enough surrounding lines to be unique"
    );
    let miss = replace("fn a() {\n    one();\n    two();\n}\n", "one();\ntwo(x);", "z", false).expect_err("miss");
    let msg = miss.to_error("a.rs", "old_string").message().to_owned();
    assert!(msg.starts_with("a.rs: `old_string` was not found, exactly or with tolerant matching (Unicode normalization, flexible indentation, trimmed lines, blank lines ignored, collapsed whitespace, surrounding whitespace trimmed, escape sequences undone, normalised punctuation and spaces); the most similar"), "{msg}");
    assert!(msg.contains("the most similar text is at lines 2-3"), "{msg}");
    assert!(msg.contains("     2\t    one();\n     3\t    two();\n"), "{msg}");
    // An invisible difference is said in words, after the lines shown.
    let miss =
        replace("fn a() {\n\tone(x);\n\n\ttwo();\n}\n", "    one(y);\n    two();", "z", false).expect_err("miss");
    let msg = miss.to_error("a.rs", "old_string").message().to_owned();
    assert!(
        msg.contains(
            "     4\t\ttwo();\nwhat differs: line 2 is indented with a tab in the file and 4 spaces in `old_string`; the file has a blank line before line 4 where `old_string` has none; \
             line 4 is indented with a tab in the file and 4 spaces in `old_string`\ncopy"
        ),
        "{msg}"
    );
    let miss = replace("a\nb\n", "     1\ta\n     2\tb", "z", false).expect_err("numbered");
    let msg = miss.to_error("a.rs", "old_string").message().to_owned();
    assert!(msg.contains("seems to include the line numbers read_file shows"), "{msg}");
}

#[test]
fn refine_keeps_unchanged_lines() {
    let base = "a\nb\nc\nd\n";
    let changes =
        refine(&SharedText::from(base), vec![TextChange::new(0, 8, "a\nB\nc\nd\n"), TextChange::new(8, 8, "")]);
    assert_eq!(changes, vec![TextChange::new(2, 3, "B")]);
}

/// Every level on a 100,000-line (4.5 MB) file (20,000 lines in debug builds): the right
/// level wins, and the time each takes is printed
/// (`cargo test --release --lib large_file -- --nocapture`).
#[test]
fn large_file() {
    let lines = if cfg!(debug_assertions) { 20_000 } else { 100_000 };
    let text: String = (0..lines).map(|i| format!("    let value_{i} = compute({i}, \"arg\");\n")).collect();
    let table = [
        ("let value_19999 = compute(19999, \"arg\");", false, Some(("exact", 1))),
        ("compute", true, Some(("exact", lines))),
        ("let value_5 = compute(5, \"arg\");\nlet value_6 = compute(6, \"arg\");", false, Some(("indentation", 1))),
        ("let value_19999 = compute(19999,  \"arg\");", false, Some(("collapsed_whitespace", 1))),
        ("let value_19999 = compute(19999, \u{201C}arg\u{201D});", false, Some(("punctuation", 1))),
        ("nothing like it at all\nreally", false, None),
        ("let value_10000 = compute(1000, \"arg\");\nlet value_10001 = compute(10001, \"arg\");", false, None),
    ];
    for (old, all, want) in table {
        let t = std::time::Instant::now();
        let got = replace(&text, old, "x", all).map(|r| (r.strategy.name, r.count())).ok();
        eprintln!("{:>10.1?}  {want:?}  {old:?}", t.elapsed());
        assert_eq!(got, want, "{old:?}");
    }
}

/// On an open buffer's rope the matcher gives exactly what it gives on the string: the fast
/// path (exact, in place) where it applies, the whole cascade where it does not.
#[test]
fn a_rope_matches_as_its_string_does() {
    let body: String = (0..4000).map(|i| format!("    let x{i} = \"é🦀\";\n")).collect();
    let lf = format!("fn main() {{\n{body}    dup();\n    dup();\n}}\n");
    let crlf = lf.replace('\n', "\r\n");
    let cases = [
        ("    let x17 = \"é🦀\";\n    let x18", "    let y = 1;", false),
        ("x3999 = \"é🦀\";\n    dup();\n", "z", false),
        ("dup();", "once();", false),
        ("dup();", "every();\n", true),
        ("x1", "y1", true),
        ("let x17 = \"é🦀\";\r\n", "changed\r\n", false),
        ("let x17 = \"é🦀\";\n  let x18", "re-indented\n", false),
        ("  let x20 = \"é🦀\";\n      let x21 = \"é🦀\";", "indentation", false),
        ("not in the file", "x", false),
        ("x17 = \u{201C}é🦀\u{201D}", "punctuation", false),
    ];
    for text in [&lf, &crlf] {
        let rope = SharedText::Rope(ropey::Rope::from_str(text));
        for (old, new, all) in cases {
            let want = replace(text, old, new, all).map(|r| (r.changes, r.strategy.name));
            let got = replace_shared(&rope, old, new, all).map(|r| (r.changes, r.strategy.name));
            match (want, got) {
                (Ok(want), Ok(got)) => assert_eq!(got, want, "{old:?}"),
                (Err(want), Err(got)) => {
                    let (want, got) = (want.to_error("f", "old_string"), got.to_error("f", "old_string"));
                    assert_eq!(got.message(), want.message(), "{old:?}");
                }
                (want, got) => panic!("{old:?}: {got:?} != {want:?}"),
            }
        }
    }
}
