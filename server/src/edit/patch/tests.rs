//! Parser and matcher tests: patch text in, file changes or new text out.

use super::*;

/// The changes a patch parses to, one line per file: `A path`, `D path`, `M path`,
/// `M path -> to`, each with its hunk count.
fn changes(patch: &str) -> Result<Vec<String>, String> {
    let files = parse(patch).map_err(|e| e.message().to_owned())?;
    Ok(files
        .iter()
        .map(|f| {
            let what = match &f.change {
                FileChange::Add { path } => format!("A {path}"),
                FileChange::Delete { path } => format!("D {path}"),
                FileChange::Update { path, move_to: None } => format!("M {path}"),
                FileChange::Update { path, move_to: Some(to) } => format!("M {path} -> {to}"),
            };
            format!("{what} ({} hunks)", f.hunks.len())
        })
        .collect())
}

#[test]
fn parses_every_header_form() {
    let table: &[(&str, &str, &[&str])] = &[
        ("plain", "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\n", &["M x.rs (1 hunks)"]),
        ("no prefixes", "--- src/x.rs\n+++ src/x.rs\n@@ -1 +1 @@\n-a\n+b\n", &["M src/x.rs (1 hunks)"]),
        (
            "timestamps after a tab",
            "--- x.rs\t2024-01-01 10:00:00.000 +0000\n+++ x.rs\t2024-01-02 10:00:00.000 +0000\n@@ -1 +1 @@\n-a\n+b\n",
            &["M x.rs (1 hunks)"],
        ),
        (
            "git header, index line",
            "diff --git a/x.rs b/x.rs\nindex 83db48f..bf269f4 100644\n--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-a\n+b\n",
            &["M x.rs (1 hunks)"],
        ),
        (
            "git new file",
            "diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
            &["A n.txt (1 hunks)"],
        ),
        ("git empty new file, no hunks", "diff --git a/e.txt b/e.txt\nnew file mode 100644\nindex 0000000..e69de29\n", &["A e.txt (0 hunks)"]),
        ("dev null creates", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n", &["A n.txt (1 hunks)"]),
        ("dev null deletes", "--- a/o.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", &["D o.txt (1 hunks)"]),
        (
            "git deleted file",
            "diff --git a/o.txt b/o.txt\ndeleted file mode 100644\nindex e69de29..0000000\n",
            &["D o.txt (0 hunks)"],
        ),
        (
            "pure git rename",
            "diff --git a/old.rs b/new.rs\nsimilarity index 100%\nrename from old.rs\nrename to new.rs\n",
            &["M old.rs -> new.rs (0 hunks)"],
        ),
        (
            "git rename with hunks",
            "diff --git a/old.rs b/new.rs\nsimilarity index 90%\nrename from old.rs\nrename to new.rs\nindex 1..2 100644\n--- a/old.rs\n+++ b/new.rs\n@@ -1 +1 @@\n-a\n+b\n",
            &["M old.rs -> new.rs (1 hunks)"],
        ),
        ("differing paths rename", "--- a/old.rs\n+++ b/new.rs\n@@ -1 +1 @@\n-a\n+b\n", &["M old.rs -> new.rs (1 hunks)"]),
        // Without hunks, differing paths are a pure rename (the coder contract's words).
        ("differing paths, no hunks", "--- a/old.rs\n+++ b/new.rs\n", &["M old.rs -> new.rs (0 hunks)"]),
        (
            "rename without hunks, then another file",
            "--- a/old.rs\n+++ b/new.rs\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
            &["M old.rs -> new.rs (0 hunks)", "M x (1 hunks)"],
        ),
        (
            "quoted git paths",
            "diff --git \"a/sp ace.txt\" \"b/sp ace.txt\"\n--- \"a/sp ace.txt\"\n+++ \"b/sp ace.txt\"\n@@ -1 +1 @@\n-a\n+b\n",
            &["M sp ace.txt (1 hunks)"],
        ),
        ("quoted octal escapes", "--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-a\n+b\n", &["M caf\u{e9} (1 hunks)"]),
        (
            "two files, two hunks",
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-c\n+d\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n",
            &["M x (2 hunks)", "M y (1 hunks)"],
        ),
        ("svn index lines", "Index: x\n===================================================================\n--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", &["M x (1 hunks)"]),
        ("diff command line", "diff -u a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", &["M x (1 hunks)"]),
        ("fence with language", "```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n", &["M x (1 hunks)"]),
        ("bare fence and blank lines", "\n\n```\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n\n", &["M x (1 hunks)"]),
        ("crlf patch", "--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n", &["M x (1 hunks)"]),
        (
            "envelope",
            "*** Begin Patch\n*** Add File: h.txt\n+hi\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-x\n+y\n*** Delete File: o.txt\n*** End Patch\n",
            &["A h.txt (1 hunks)", "M a.py -> b.py (1 hunks)", "D o.txt (0 hunks)"],
        ),
        (
            "envelope in a fence, padded markers",
            "```\n  *** Begin Patch  \n*** Update File: a.py\n@@\n-x\n+y\n\n@@ def g():\n-z\n+w\n  *** End Patch\n```",
            &["M a.py (2 hunks)"],
        ),
        ("envelope heredoc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: o.txt\n*** End Patch\nEOF\n", &["D o.txt (0 hunks)"]),
        ("envelope pure move", "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n*** End Patch", &["M a.py -> b.py (0 hunks)"]),
        ("envelope empty add", "*** Begin Patch\n*** Add File: e.txt\n*** End Patch", &["A e.txt (0 hunks)"]),
    ];
    for (name, patch, want) in table {
        let want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(changes(patch).as_ref(), Ok(&want), "{name}");
    }
}

#[test]
fn refuses_malformed_patches_with_a_line_number() {
    let table: &[(&str, &str, &str)] = &[
        ("empty", "  \n\n", "`patch` is empty"),
        (
            "mode change only",
            "diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n",
            "file mode changes are not applied",
        ),
        ("garbage", "hello\nworld\n", "patch line 1: expected a file header"),
        ("hunk before header", "@@ -1 +1 @@\n-a\n+b\n", "patch line 1: hunk header before any file header"),
        ("no +++", "--- a/x\n@@ -1 +1 @@\n", "patch line 2: expected `+++ b/path`"),
        ("no hunk", "--- a/x\n+++ b/x\n", "expected a hunk header"),
        ("rename followed by a stray line", "--- a/x\n+++ b/y\nfoo\n", "patch line 3: expected a hunk header"),
        ("no hunk, created", "--- /dev/null\n+++ b/y\n", "patch line 2: expected a hunk header"),
        (
            "empty envelope",
            "*** Begin Patch\n*** End Patch\n",
            "patch line 1: the patch has no file sections between `*** Begin Patch` and `*** End Patch`",
        ),
        ("headers only", "Index: x\n=====\n", "patch line 1: the patch has no file sections"),
        ("garbage names both formats", "hello\n", "or a patch starting with `*** Begin Patch`, found `hello`"),
        (
            "bad hunk line",
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\nb\n+c\n",
            "patch line 5: unexpected line in the hunk",
        ),
        (
            "garbage after hunk",
            "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nnonsense\n",
            "patch line 6: expected a file header",
        ),
        (
            "binary",
            "diff --git a/x.png b/x.png\nindex 1..2 100644\nBinary files a/x.png and b/x.png differ\n",
            "patch line 3: binary patches",
        ),
        ("copy", "diff --git a/x b/y\ncopy from x\ncopy to y\n", "patch line 2: copies are not supported"),
        (
            "envelope without end",
            "*** Begin Patch\n*** Delete File: x\n",
            "patch line 2: the patch must end with `*** End Patch`",
        ),
        (
            "envelope bad header",
            "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch",
            "patch line 2: `*** Frobnicate File: x` is not a file header",
        ),
        (
            "envelope empty update",
            "*** Begin Patch\n*** Update File: x\n*** End Patch",
            "patch line 2: `*** Update File: x` has no hunks",
        ),
        (
            "envelope bad hunk line",
            "*** Begin Patch\n*** Update File: x\n@@\nfoo\n*** End Patch",
            "patch line 4: unexpected line in a hunk of x",
        ),
        (
            "envelope second hunk without @@",
            "*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\n*** End of File\nfoo\n*** End Patch",
            "patch line 7: expected `@@` to start the next hunk of x",
        ),
        (
            "envelope empty hunk",
            "*** Begin Patch\n*** Update File: x\n@@\n*** End Patch",
            "patch line 3: a hunk of x has no lines",
        ),
    ];
    for (name, patch, want) in table {
        let got = changes(patch).expect_err(name);
        assert!(got.contains(want), "{name}: {got}");
    }
}

/// Applies the hunks of the patch's only file to `base`.
fn apply(base: &str, patch: &str) -> Result<String, String> {
    let files = parse(patch).map_err(|e| e.message().to_owned())?;
    assert_eq!(files.len(), 1, "{patch}");
    apply_hunks(base, &files[0].hunks).map_err(|f| f.message("f"))
}

fn udiff(hunks: &str) -> String {
    format!("--- a/f\n+++ b/f\n{hunks}")
}

fn envelope(hunks: &str) -> String {
    format!("*** Begin Patch\n*** Update File: f\n{hunks}\n*** End Patch")
}

#[test]
fn applies_hunks() {
    let abc = "a\nb\nc\n";
    let repeated = "x\nsame\ny\nsame\nz\n";
    let table: Vec<(&str, &str, String, &str)> = vec![
        ("exact", abc, udiff("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), "a\nB\nc\n"),
        ("insert at start", abc, udiff("@@ -0,0 +1 @@\n+top\n"), "top\na\nb\nc\n"),
        ("insert after a line", abc, udiff("@@ -2,0 +3 @@\n+after b\n"), "a\nb\nafter b\nc\n"),
        ("append at end", abc, udiff("@@ -3,0 +4 @@\n+d\n"), "a\nb\nc\nd\n"),
        ("delete a line", abc, udiff("@@ -1,3 +1,2 @@\n a\n-b\n c\n"), "a\nc\n"),
        (
            "two hunks in order",
            "1\n2\n3\n4\n5\n6\n",
            udiff("@@ -1,2 +1,2 @@\n-1\n+one\n 2\n@@ -5,2 +5,2 @@\n 5\n-6\n+six\n"),
            "one\n2\n3\n4\n5\nsix\n",
        ),
        // Counts too small, too large, and missing entirely: the actual lines are used.
        ("counts too small", abc, udiff("@@ -1,1 +1,1 @@\n a\n-b\n+B\n c\n"), "a\nB\nc\n"),
        ("counts too large", abc, udiff("@@ -1,9 +1,9 @@\n a\n-b\n+B\n"), "a\nB\nc\n"),
        ("bare @@", abc, udiff("@@\n-b\n+B\n"), "a\nB\nc\n"),
        ("blank separator after a hunk", abc, udiff("@@ -2 +2 @@\n-b\n+B\n\n"), "a\nB\nc\n"),
        ("empty line is empty context", "a\n\nb\n", udiff("@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n"), "a\n\nB\n"),
        // Fuzz levels: context differs in trailing, then surrounding whitespace, then punctuation;
        // context lines keep the file's text.
        ("trailing whitespace", "a  \nb\nc\n", udiff("@@ -1,2 +1,2 @@\n a\n-b\n+B\n"), "a  \nB\nc\n"),
        ("surrounding whitespace", "    a\n\tb\nc\n", udiff("@@ -1,2 +1,2 @@\n a\n-b\n+B\n"), "    a\nB\nc\n"),
        (
            "typographic punctuation",
            "say \u{201C}hi\u{201D} \u{2014} ok\nb\n",
            udiff("@@ -1,2 +1,2 @@\n say \"hi\" - ok\n-b\n+B\n"),
            "say \u{201C}hi\u{201D} \u{2014} ok\nB\n",
        ),
        ("exact beats fuzzy nearer", "  k\nx\nk\nx\n", udiff("@@ -1,2 +1,2 @@\n k\n-x\n+X\n"), "  k\nx\nk\nX\n"),
        // Unicode normalization and a byte order mark, as `edit_file` tolerates them.
        ("decomposed context", "caf\u{e9}\nb\n", udiff("@@ -1,2 +1,2 @@\n cafe\u{301}\n-b\n+B\n"), "caf\u{e9}\nB\n"),
        ("byte order mark in context", "a\nb\n", udiff("@@ -1,2 +1,2 @@\n \u{feff}a\n-b\n+B\n"), "a\nB\n"),
        // Blank lines left out on both sides, after every other level: the file's blank lines
        // stay, a blank line the file lacks is not written, blank lines inside a removed run go.
        ("blank line left out", "a\n\nb\nc\n", udiff("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), "a\n\nB\nc\n"),
        ("blank line the file lacks", "a\nb\nc\n", udiff("@@ -1,4 +1,4 @@\n a\n \n-b\n+B\n c\n"), "a\nB\nc\n"),
        ("blank lines in a removed run", "x\na\n\nb\ny\n", udiff("@@ -1,4 +1,2 @@\n x\n-a\n-b\n y\n"), "x\ny\n"),
        (
            "blank lines, envelope",
            "fn f() {\n    one();\n\n    two();\n}\n",
            envelope("@@\n     one();\n-    two();\n+    three();\n }"),
            "fn f() {\n    one();\n\n    three();\n}\n",
        ),
        // Position: among repeats, the one at or nearest the stated line wins.
        ("repeat, first stated", repeated, udiff("@@ -2 +2 @@\n-same\n+SAME\n"), "x\nSAME\ny\nsame\nz\n"),
        ("repeat, second stated", repeated, udiff("@@ -4 +4 @@\n-same\n+SAME\n"), "x\nsame\ny\nSAME\nz\n"),
        ("repeat, stated line off by one", repeated, udiff("@@ -5 +5 @@\n-same\n+SAME\n"), "x\nsame\ny\nSAME\nz\n"),
        ("shifted file", "new\nnew\na\nb\nc\n", udiff("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"), "new\nnew\na\nB\nc\n"),
        (
            "drift carries to the next hunk",
            "n\nn\nq\nw\nq\nw\nq\n",
            udiff("@@ -1 +1 @@\n-q\n+Q\n@@ -5 +5 @@\n-q\n+Q\n"),
            "n\nn\nQ\nw\nq\nw\nQ\n",
        ),
        // Final newline: kept, or changed by `\ No newline at end of file`.
        ("no newline kept", "a\nb", udiff("@@ -2 +2 @@\n-b\n+B\n"), "a\nB"),
        ("no newline kept on append", "a\nb", udiff("@@ -2,0 +3 @@\n+c\n"), "a\nb\nc"),
        ("marker removes newline", "a\nb\n", udiff("@@ -2 +2 @@\n-b\n+B\n\\ No newline at end of file\n"), "a\nB"),
        ("marker adds newline", "a\nb", udiff("@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+B\n"), "a\nB\n"),
        ("marker on context", "a\nb", udiff("@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n"), "A\nb"),
        (
            "git appends after no-newline line",
            "a",
            udiff("@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n"),
            "a\nb\n",
        ),
        // Line endings: a patch typed with \n keeps a CRLF file CRLF.
        ("crlf file", "a\r\nb\r\nc\r\n", udiff("@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n"), "a\r\nB\r\nB2\r\nc\r\n"),
        ("crlf patch on lf file", abc, udiff("@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n"), "a\nB\nc\n"),
        ("lone cr file", "a\rb\r", udiff("@@ -2 +2,2 @@\n-b\n+B\n+C\n"), "a\rB\rC\r"),
        // Envelope hunks: first match after the previous hunk, anchors, end of file.
        ("envelope", abc, envelope("@@\n a\n-b\n+B"), "a\nB\nc\n"),
        ("envelope without @@", abc, envelope(" a\n-b\n+B"), "a\nB\nc\n"),
        (
            "envelope anchor",
            "def f():\n    pass\ndef g():\n    pass\n",
            envelope("@@ def g():\n-    pass\n+    return 1"),
            "def f():\n    pass\ndef g():\n    return 1\n",
        ),
        (
            "envelope anchor repeated as context",
            "def f():\n    pass\ndef g():\n    pass\n",
            envelope("@@ def g():\n def g():\n-    pass\n+    return 1"),
            "def f():\n    pass\ndef g():\n    return 1\n",
        ),
        (
            "envelope stacked anchors",
            "class A:\n  def m():\n    x\nclass B:\n  def m():\n    x\n",
            envelope("@@ class B:\n@@   def m():\n-    x\n+    y"),
            "class A:\n  def m():\n    x\nclass B:\n  def m():\n    y\n",
        ),
        (
            "envelope anchor pure addition",
            "def f():\n    pass\n",
            envelope("@@ def f():\n+    \"\"\"doc\"\"\""),
            "def f():\n    \"\"\"doc\"\"\"\n    pass\n",
        ),
        ("envelope pure addition appends", abc, envelope("@@\n+d"), "a\nb\nc\nd\n"),
        // A context-less pure addition goes at the end without moving the search for the next
        // hunk (codex's apply-patch suite, ported 014).
        (
            "envelope pure addition, then an earlier hunk",
            "line1\nline2\nline3\n",
            envelope("@@\n+after-context\n+second-line\n@@\n line1\n-line2\n-line3\n+line2-replacement"),
            "line1\nline2-replacement\nafter-context\nsecond-line\n",
        ),
        (
            "envelope pure additions at the end keep their order",
            abc,
            envelope("@@\n+x\n@@\n-a\n+A\n@@\n+y\n*** End of File"),
            "A\nb\nc\nx\ny\n",
        ),
        ("envelope end of file", "x\ny\nx\n", envelope("@@\n-x\n+X\n*** End of File"), "x\ny\nX\n"),
        ("envelope forward order", "x\ny\nx\n", envelope("@@\n-x\n+X\n@@\n-x\n+Z"), "X\ny\nZ\n"),
        ("envelope unified range as anchor", "x\ny\nx\n", envelope("@@ -3,1 +3,1 @@\n-x\n+X"), "x\ny\nX\n"),
        ("envelope trailing blank context dropped", abc, envelope("@@\n-c\n+C\n \n"), "a\nb\nC\n"),
        ("envelope crlf file", "a\r\nb\r\n", envelope("@@\n a\n-b\n+B"), "a\r\nB\r\n"),
        // A stray CR in one line of a CRLF file: new lines still get CRLF (ported 022 and 023).
        (
            "crlf file with a stray cr, replace",
            "foo\r\r\nbar\r\n",
            envelope("@@\n-bar\n+BAR\n+QUX"),
            "foo\r\r\nBAR\r\nQUX\r\n",
        ),
        (
            "crlf file with a stray cr, append",
            "foo\r\r\nbar\r\n",
            envelope("@@\n+BAZ\n*** End of File"),
            "foo\r\r\nbar\r\nBAZ\r\n",
        ),
        ("envelope no newline kept", "a\nb", envelope("@@\n a\n-b\n+B"), "a\nB"),
    ];
    for (name, base, patch, want) in table {
        assert_eq!(apply(base, &patch).as_deref(), Ok(want), "{name}\n{patch}");
    }
}

#[test]
fn hunk_failures_name_the_hunk_and_expected_lines() {
    let base = "fn a() {}\nfn b() {}\nfn c() {}\n";
    let table: Vec<(&str, String, &str)> = vec![
        (
            "second hunk fails",
            udiff("@@ -1 +1 @@\n-fn a() {}\n+fn A() {}\n@@ -10,2 +10,2 @@\n fn b() {}\n-fn zzz() {}\n+fn c2() {}\n"),
            "f: hunk 2 (@@ -10,2 +10,2 @@) did not apply: expected context at or near line 10:\n fn b() {}\n-fn zzz() {}\n\
             the closest match starts at line 2 (1 of 2 lines match); line 3 there reads `fn c() {}` where the hunk has `fn zzz() {}`",
        ),
        (
            "overlap is refused",
            udiff("@@ -1,2 +1,2 @@\n fn a() {}\n-fn b() {}\n+fn B() {}\n@@ -2 +2 @@\n-fn b() {}\n+fn b2() {}\n"),
            "hunk 2 (@@ -2 +2 @@) did not apply: expected context at or near line 2:\n-fn b() {}",
        ),
        (
            "out of order onto the previous hunk's lines is refused",
            udiff("@@ -2,2 +2,2 @@\n fn b() {}\n-fn c() {}\n+fn C() {}\n@@ -1,2 +1,2 @@\n-fn a() {}\n+fn A() {}\n-fn b() {}\n"),
            "hunk 2 (@@ -1,2 +1,2 @@) did not apply",
        ),
        ("anchor missing", envelope("@@ fn zzz()\n-x\n+y"), "hunk 1 (@@ fn zzz()) did not apply: could not find the line `fn zzz()` named by `@@` in the file"),
        ("end of file", envelope("@@\n-fn a() {}\n+x\n*** End of File"), "expected these lines at the end of the file:\n-fn a() {}"),
        ("envelope forward", envelope("@@\n-fn q() {}\n+x"), "hunk 1 (@@) did not apply: expected these lines in the file:\n-fn q() {}"),
    ];
    for (name, patch, want) in table {
        let got = apply(base, &patch).expect_err(name);
        assert!(got.contains(want), "{name}:\n{got}\n--- wanted ---\n{want}");
    }
}

/// A hunk whose context occurs more than once, with nothing to say which copy it means (no
/// line number, or one past the end of the file, and no `@@` line that names one place), is
/// refused with every candidate's line, and nothing changes; each case's twin, with the tie
/// broken, applies at the place it names.
#[test]
fn ambiguous_context_is_refused_never_applied_to_the_first_copy() {
    let twice = "def f():\n    return 1\n\ndef g():\n    return 1\n";
    let table: Vec<(&str, &str, String, Result<&str, &str>)> = vec![
        (
            "envelope, no anchor",
            twice,
            envelope("@@\n-    return 1\n+    return 2"),
            Err("occur 2 times in the file, at lines 2 and 5"),
        ),
        (
            "twin: a context line",
            twice,
            envelope("@@\n def g():\n-    return 1\n+    return 2"),
            Ok("def f():\n    return 1\n\ndef g():\n    return 2\n"),
        ),
        (
            "twin: an anchor",
            twice,
            envelope("@@ def g():\n-    return 1\n+    return 2"),
            Ok("def f():\n    return 1\n\ndef g():\n    return 2\n"),
        ),
        ("bare unified @@", twice, udiff("@@\n-    return 1\n+    return 2\n"), Err("at lines 2 and 5")),
        (
            "twin: a stated line",
            twice,
            udiff("@@ -5 +5 @@\n-    return 1\n+    return 2\n"),
            Ok("def f():\n    return 1\n\ndef g():\n    return 2\n"),
        ),
        (
            "a stated line past the end",
            twice,
            udiff("@@ -40 +40 @@\n-    return 1\n+    return 2\n"),
            Err("at lines 2 and 5"),
        ),
        (
            "ambiguous after indentation is ignored",
            "if a:\n    x = 1\nif b:\n\tx = 1\n",
            envelope("@@\n-  x = 1\n+  x = 2"),
            Err("at lines 2 and 4"),
        ),
        (
            "twin: exact beats indentation",
            "if a:\n    x = 1\nif b:\n\tx = 1\n",
            envelope("@@\n-\tx = 1\n+\tx = 2"),
            Ok("if a:\n    x = 1\nif b:\n\tx = 2\n"),
        ),
        (
            "an anchor that occurs twice",
            "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n",
            envelope("@@   def f():\n-    pass\n+    return"),
            Err("the `@@` line `  def f():` occurs 2 times"),
        ),
        (
            "twin: anchors that name one place",
            "class A:\n  def f():\n    pass\nclass B:\n  def f():\n    pass\n",
            envelope("@@ class B:\n@@   def f():\n-    pass\n+    return"),
            Ok("class A:\n  def f():\n    pass\nclass B:\n  def f():\n    return\n"),
        ),
        ("one hunk per copy, in order", "x\ny\nx\n", envelope("@@\n-x\n+X\n@@\n-x\n+Z"), Ok("X\ny\nZ\n")),
        ("twin: fewer hunks than copies", "x\ny\nx\nx\n", envelope("@@\n-x\n+X\n@@\n-x\n+Z"), Err("occur 3 times")),
    ];
    for (name, base, patch, want) in table {
        match (apply(base, &patch), want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{name}"),
            (Err(got), Err(want)) => {
                assert!(got.contains(want), "{name}:\n{got}\n--- wanted ---\n{want}");
                assert!(got.contains("nothing was changed"), "{name}: {got}");
            }
            (got, want) => panic!("{name}: got {got:?}, wanted {want:?}"),
        }
    }
}

/// A hunk found only after its indentation was ignored writes its added lines in the file's
/// indentation, as `edit_file` does: tabs in a tab-indented file, a Makefile recipe kept a recipe,
/// a block written outdented put back in its place; a hunk in the file's own indentation is
/// written as sent.
#[test]
fn added_lines_take_the_files_indentation() {
    let table: Vec<(&str, &str, String, &str)> = vec![
        (
            "spaces into a tab-indented file",
            "def f():\n\tif x:\n\t\treturn 1\n",
            envelope("@@\n def f():\n     if x:\n-        return 1\n+        return 2\n+        log()"),
            "def f():\n\tif x:\n\t\treturn 2\n\t\tlog()\n",
        ),
        (
            "a Makefile recipe",
            "all:\n\tcc -o a a.c\n",
            udiff("@@ -1,2 +1,3 @@\n all:\n-    cc -o a a.c\n+    cc -O2 -o a a.c\n+    strip a\n"),
            "all:\n\tcc -O2 -o a a.c\n\tstrip a\n",
        ),
        (
            "a method written outdented",
            "class A:\n    def f(self):\n        return 1\n",
            envelope("@@\n def f(self):\n-    return 1\n+    return 2"),
            "class A:\n    def f(self):\n        return 2\n",
        ),
        (
            "twin: the file's own indentation is kept as sent",
            "def f():\n    return 1\n",
            envelope("@@\n def f():\n-    return 1\n+    if x:\n+        return 2"),
            "def f():\n    if x:\n        return 2\n",
        ),
    ];
    for (name, base, patch, want) in table {
        assert_eq!(apply(base, &patch).unwrap_or_else(|e| panic!("{name}: {e}")), want, "{name}");
    }
}

#[test]
fn creates_from_an_empty_text() {
    let table: Vec<(&str, String, &str)> = vec![
        ("unified", "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+one\n+two\n".into(), "one\ntwo\n"),
        (
            "unified no newline",
            "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+one\n\\ No newline at end of file\n".into(),
            "one",
        ),
        ("envelope", "*** Begin Patch\n*** Add File: n\n+one\n+\n+two\n*** End Patch".into(), "one\n\ntwo\n"),
    ];
    for (name, patch, want) in table {
        assert_eq!(apply("", &patch).as_deref(), Ok(want), "{name}");
    }
}

#[test]
fn a_hunk_far_from_its_stated_line_is_found() {
    // Repeated lines everywhere and a hunk stated at line 1 that matches only at the end: the
    // outward search reaches it after comparing one line at most positions.
    let base: String = (0..50_000).map(|i| format!("line {}\n", i % 7)).collect::<String>() + "unique\n";
    let patch = udiff("@@ -1,2 +1,2 @@\n line 5\n-unique\n+UNIQUE\n");
    let got = apply(&base, &patch).expect("applies");
    assert!(got.ends_with("line 5\nUNIQUE\n"));
}

#[test]
fn no_truncation_or_dropped_line_panics() {
    // Every prefix of a few patches, and each patch with one line dropped, must parse or fail
    // cleanly, and whatever parses must apply or fail cleanly.
    let base = "a\nb\r\nc\n\nd\u{e9}\u{1F600}\n  e  \n";
    let patches = [
        "diff --git \"a/x y\" \"b/x y\"\nindex 1..2\n--- \"a/x y\"\t2024\n+++ \"b/x\\303\\251 y\"\n@@ -1,3 +1,3 @@ s\n a\n-b\n+B\n\\ No newline at end of file\n@@ -5 +5,0 @@\n-d\u{e9}\u{1F600}\n",
        "*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@ a\n@@ -2,1 +2,1 @@\n-b\n+B\n\n*** End of File\n*** Add File: h\n+x\n*** End Patch\n",
        "<<'EOF'\n*** Begin Patch\n*** Update File: f\n c\n-\n+z\n*** End Patch\nEOF\n",
    ];
    for patch in patches {
        let lines: Vec<&str> = patch.split('\n').collect();
        let dropped = (0..lines.len()).map(|i| {
            let mut l = lines.clone();
            l.remove(i);
            l.join("\n")
        });
        let prefixes = patch.char_indices().map(|(i, _)| patch[..i].to_owned());
        for text in prefixes.chain(dropped) {
            if let Ok(files) = parse(&text) {
                for f in files {
                    let _ = apply_hunks(base, &f.hunks);
                    let _ = apply_hunks("", &f.hunks);
                }
            }
        }
    }
}

#[test]
fn many_fuzzy_hunks_on_a_large_file() {
    // The slow case: 20,000 lines of near-identical code and 40 hunks whose context lost its
    // indentation, each stated 5 lines early. Every hunk fails the exact and trailing-whitespace
    // levels over the rest of the file before matching near its line at the third. The time is
    // printed for `cargo test --release ... -- --nocapture`.
    use std::fmt::Write as _;
    let n = 20_000;
    let line = |i: usize| format!("    let value_{} = compute({i});", i % 50);
    let base: String = (0..n).map(|i| line(i) + "\n").collect();
    let mut patch = String::from("--- a/f\n+++ b/f\n");
    for h in 0..40 {
        let i = h * 487 + 10;
        let _ = writeln!(patch, "@@ -{} +{} @@", i - 7, i - 7);
        for j in i - 3..i {
            let _ = writeln!(patch, " {}", line(j).trim());
        }
        let _ = writeln!(patch, "-{}\n+{}", line(i).trim(), line(i).replace("value", "changed"));
        for j in i + 1..i + 4 {
            let _ = writeln!(patch, " {}", line(j).trim());
        }
    }
    let started = std::time::Instant::now();
    let got = apply(&base, &patch).expect("applies");
    eprintln!("40 fuzzy hunks on {} bytes: {:?}", base.len(), started.elapsed());
    assert_eq!(got.matches("changed_").count(), 40);
    assert_eq!(got.lines().count(), n);
    assert!(got.contains(&format!("{}\n", line(497).replace("value", "changed"))));
}

/// Found by the `patch` fuzz target: a line ending in a lone `\r` brought next to an empty line
/// ending in `\n` (by removing the lines between them, or by adding a line in a file of lone `\r`
/// breaks) made one `\r\n` of the two breaks, and the empty line vanished.
#[test]
fn lines_brought_together_keep_their_breaks_apart() {
    let removed = apply("a\rx\n\nb\n", &udiff("@@ -1,2 +1 @@\n a\n-x\n"));
    assert_eq!(removed.as_deref(), Ok("a\r\n\nb\n"));
    let added = apply("a\rb\rc\rd\n\n", &udiff("@@ -4 +4,2 @@\n d\n+x\n"));
    assert_eq!(added.as_deref(), Ok("a\rb\rc\rd\nx\r\n\n"));
}

/// Found by the `patch` fuzz target: a removed line reading `-- a` and an added line reading
/// `++ b` that end a hunk were taken for the next file's `---`/`+++` headers when another hunk
/// followed, although the hunk's counts say they are its last lines.
#[test]
fn counted_lines_that_read_like_file_headers_stay_in_their_hunk() {
    let patch = udiff("@@ -1,2 +1,2 @@\n x\n--- a\n+++ b\n@@ -4 +4 @@\n-z\n+Z\n");
    assert_eq!(apply("x\n-- a\ny\nz\n", &patch).as_deref(), Ok("x\n++ b\ny\nZ\n"));
    // Counts that the two lines do not complete still let a new file start there.
    let files = parse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n");
    assert_eq!(files.map(|f| f.len()), Ok(2));
}

mod property;
mod slips;
