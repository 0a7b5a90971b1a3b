//! Slips whose intent is certain, applied and named, each with the twin that stays refused; and
//! the block an `@@` line confines its hunk to.

use super::*;

/// The envelope's harmless slips apply as the strict patch does and are named in `accepted`;
/// each has a twin whose intent is not certain, which is refused.
#[test]
fn the_envelopes_harmless_slips_apply_and_are_named() {
    let base = "def f():\n    a = 1\n    return a\n";
    let want = "def f():\n    a = 2\n    return a\n";
    let strict = "*** Begin Patch\n*** Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch";
    let update = |patch: &str| -> Result<(String, Vec<String>), String> {
        let mut accepted = Vec::new();
        let files = parse_noting(patch, &mut accepted).map_err(|e| e.message().to_owned())?;
        assert_eq!(files.len(), 1, "{patch}");
        let text = apply_hunks(base, &files[0].hunks).map_err(|f| f.message("f.py"))?;
        Ok((text, accepted))
    };
    assert_eq!(update(strict), Ok((want.to_owned(), Vec::new())));
    // (slip, patch, what the result says; its twin, and why the twin is refused)
    let table: &[(&str, &str, &str, &str, &str)] = &[
        (
            "starred markers",
            "*** Begin Patch ***\n*** Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch ***",
            "`*** Begin Patch ***` read as `*** Begin Patch`",
            "*** Begin Patches\n*** Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch",
            "found `*** Begin Patches`",
        ),
        (
            "no End Patch before a closing fence",
            "```\n*** Begin Patch\n*** Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2\n```",
            "missing `*** End Patch` (added after line 7)",
            "*** Begin Patch\n*** Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2",
            "the patch must end with `*** End Patch`",
        ),
        (
            "no Begin Patch",
            "*** Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch",
            "missing `*** Begin Patch` (added before line 1)",
            "Update File: f.py\n@@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch",
            "expected a file header",
        ),
        (
            "unified headers under Update File",
            "*** Begin Patch\n*** Update File: f.py\n--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch",
            "the `---`/`+++` lines at 3 and 4 ignored",
            "*** Begin Patch\n*** Update File: f.py\n--- a/g.py\n+++ b/g.py\n@@ -1,2 +1,2 @@\n def f():\n-    a = 1\n+    a = 2\n*** End Patch",
            "did not apply",
        ),
        (
            "context without its leading space",
            "*** Begin Patch\n*** Update File: f.py\n@@\ndef f():\n-    a = 1\n+    a = 2\n*** End Patch",
            "1 context line(s) without their leading space in a hunk of f.py (from line 4)",
            "*** Begin Patch\n*** Update File: f.py\n@@\ndef f():\n    a = 1\n*** End Patch",
            "patch line 4: unexpected line in a hunk of f.py",
        ),
    ];
    for (slip, patch, said, twin, refused) in table {
        let (text, accepted) = update(patch).unwrap_or_else(|e| panic!("{slip}: {e}"));
        assert_eq!(text, want, "{slip}");
        assert!(accepted.iter().any(|a| a.contains(said)), "{slip}: {accepted:?}");
        let got = update(twin).expect_err(slip);
        assert!(got.contains(refused), "{slip}'s twin: {got}");
    }

    // An Add File's blank line without its `+`, between its lines: part of the file.
    let mut accepted = Vec::new();
    let files = parse_noting("*** Begin Patch\n*** Add File: n.txt\n+one\n\n+two\n*** End Patch", &mut accepted)
        .expect("blank inside Add File");
    assert_eq!(apply_hunks("", &files[0].hunks).expect("applies"), "one\n\ntwo\n");
    assert!(accepted[0].contains("1 blank line(s) without `+` in `*** Add File: n.txt`"), "{accepted:?}");
    // Its twin: a blank line after the last `+` line ends the file, as before.
    let mut accepted = Vec::new();
    let files =
        parse_noting("*** Begin Patch\n*** Add File: n.txt\n+one\n\n*** End Patch", &mut accepted).expect("parses");
    assert_eq!(apply_hunks("", &files[0].hunks).expect("applies"), "one\n");
    assert!(accepted.is_empty(), "{accepted:?}");

    // Delete File followed by the file's lines: the file goes, the lines are ignored.
    let mut accepted = Vec::new();
    let files = parse_noting(
        "*** Begin Patch\n*** Delete File: old.txt\n-one\n-two\n*** Update File: f.py\n@@\n-    a = 1\n+    a = 2\n*** End Patch",
        &mut accepted,
    )
    .expect("Delete File with content");
    assert_eq!(files.len(), 2);
    assert!(matches!(&files[0].change, FileChange::Delete { path } if path == "old.txt"));
    assert!(accepted[0].contains("the 2 line(s) after `*** Delete File: old.txt` ignored"), "{accepted:?}");
    // The strict parser (a contract that takes no slips) refuses every one of them.
    let lines: Vec<PatchLine<'_>> = "*** Begin Patch ***\n*** Delete File: x\n*** End Patch"
        .split('\n')
        .enumerate()
        .map(|(i, t)| PatchLine { no: i + 1, text: t })
        .collect();
    assert!(envelope::parse(&lines).is_err());
}

/// An `@@` line that opens a block confines the hunk to that block: lines found only in another
/// function are not changed there. The hunk starts inside the block; its context, and what it
/// changes after that context, may run past the block's end.
#[test]
fn an_anchor_confines_the_change_to_its_block() {
    let py = "def f():\n    x = 1\n\ndef g():\n    y = 2\n";
    let rs = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
    let refused: &[(&str, &str, String)] = &[
        ("python, lines only in another function", py, envelope("@@ def f():\n-    y = 2\n+    y = 3")),
        ("braces, lines only in another function", rs, envelope("@@ fn a() {\n-    2\n+    3")),
    ];
    for (name, base, patch) in refused {
        let got = apply(base, patch).expect_err(name);
        assert!(got.contains("expected these lines in the block the `@@` line opens (line 1 to line"), "{name}: {got}");
    }
    let applied: &[(&str, &str, String, &str)] = &[
        (
            "python, the block named",
            py,
            envelope("@@ def g():\n-    y = 2\n+    y = 3"),
            "def f():\n    x = 1\n\ndef g():\n    y = 3\n",
        ),
        (
            "braces, context past the closing brace",
            rs,
            envelope("@@ fn a() {\n-    1\n+    10\n }\n \n fn b() {"),
            "fn a() {\n    10\n}\n\nfn b() {\n    2\n}\n",
        ),
        (
            "a line that opens no block confines nothing",
            "# setup\nx = 1\n# teardown\ny = 2\n",
            envelope("@@ # setup\n-y = 2\n+y = 3"),
            "# setup\nx = 1\n# teardown\ny = 3\n",
        ),
    ];
    for (name, base, patch, want) in applied {
        assert_eq!(apply(base, patch).as_deref(), Ok(*want), "{name}");
    }
}

/// A byte order mark in the text (an editor that keeps it in its buffer) is the file's: a hunk
/// replacing the first line, matched with the mark left out, keeps it; a hunk that spells the
/// mark out in its removed line and not in its added one removes it.
#[test]
fn a_byte_order_mark_in_the_text_stays_unless_the_hunk_removes_it() {
    let base = "\u{FEFF}first\nsecond\n";
    assert_eq!(apply(base, &envelope("@@\n-first\n+one\n second")), Ok("\u{FEFF}one\nsecond\n".to_owned()));
    assert_eq!(apply(base, &envelope("@@\n first\n-second\n+two")), Ok("\u{FEFF}first\ntwo\n".to_owned()));
    assert_eq!(apply(base, &envelope("@@\n-\u{FEFF}first\n+one")), Ok("one\nsecond\n".to_owned()));
}
