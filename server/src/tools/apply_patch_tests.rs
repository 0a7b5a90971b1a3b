//! `apply_patch` end to end over a fixture: the plan the tool returns is applied to the fixture's
//! directory by a small stand-in for the disk sink, and the files are checked on disk.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::json;

use super::TOOL;
use crate::edit::{apply_changes, EditPlan, FileOp};
use crate::error::ErrorKind;
use crate::text::{decode, Decoded};
use crate::tools::testing::{fixture, Fixture};
use crate::tools::Output;

/// Calls the tool with `args`.
fn call(f: &Fixture, args: serde_json::Value) -> Result<Output, (ErrorKind, String)> {
    let ctx = f.ctx();
    (TOOL.run)(&ctx, args).map_err(|e| (e.kind(), e.message().to_owned()))
}

/// Applies `plan` to disk as the disk sink will (it lands separately): each text edit is checked
/// against the file's current text first, and creates and renames refuse existing destinations.
fn apply_to_disk(plan: &EditPlan) {
    plan.validate().expect("valid plan");
    for op in &plan.ops {
        match op {
            FileOp::Edit { path, base, changes } => {
                let Decoded::Text { text, bom, .. } = decode(fs::read(path.real()).expect("read")) else {
                    panic!("{path}: binary")
                };
                assert!(base.text == *text.as_str(), "{path}: stale base");
                let mut bytes = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
                bytes.extend_from_slice(apply_changes(&base.text.to_str(), changes).as_bytes());
                fs::write(path.real(), bytes).expect("write");
            }
            FileOp::Create { path, text, overwrite, .. } => {
                assert!(*overwrite || !path.real().exists(), "{path}: exists");
                fs::create_dir_all(path.real().parent().expect("parent")).expect("mkdir");
                fs::write(path.real(), text).expect("write");
            }
            FileOp::Rename { from, to, overwrite } => {
                assert!(*overwrite || !to.real().exists(), "{to}: exists");
                fs::create_dir_all(to.real().parent().expect("parent")).expect("mkdir");
                fs::rename(from.real(), to.real()).expect("rename");
            }
            FileOp::Delete { path, .. } => fs::remove_file(path.real()).expect("delete"),
            FileOp::Mkdir { path } => fs::create_dir_all(path.real()).expect("mkdir"),
        }
    }
}

/// Every file under `dir`, by relative path, with its text.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                // Spelled with `/` on every platform, as the tables here write paths.
                let rel = p.strip_prefix(root).expect("inside").to_string_lossy().replace('\\', "/");
                out.insert(rel, String::from_utf8_lossy(&fs::read(&p).expect("read")).into_owned());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Applies `patch` to the fixture: the summary, or the error kind and message.
fn patch(f: &Fixture, patch: &str) -> Result<String, (ErrorKind, String)> {
    match call(f, json!({ "patch": patch }))? {
        Output::Change { plan, summary } => {
            apply_to_disk(&plan);
            Ok(summary)
        }
        other => panic!("expected a change, got {other:?}"),
    }
}

const FILES: &str = r#"
//- a.txt
one
two
three
//- src/lib.rs
fn a() {
    1
}

fn b() {
    1
}
//- old.txt
bye
"#;

/// Files a patch changes: each path with its new text, `None` when it is gone.
type Changed<'a> = &'a [(&'a str, Option<&'a str>)];

#[test]
fn applies_patches() {
    // (name, patch, summary, files changed)
    let table: &[(&str, &str, &str, Changed<'_>)] = &[
        (
            "unified, git prefixes",
            "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
            "patched 1 file:\nM a.txt",
            &[("a.txt", Some("one\nTWO\nthree\n"))],
        ),
        (
            "git diff over several files",
            "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -3 +3 @@\n-three\n+3\n\
             diff --git a/src/lib.rs b/src/lib.rs\nindex 3..4 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n\
             @@ -5,3 +5,3 @@ fn a() {\n fn b() {\n-    1\n+    2\n }\n",
            "patched 2 files:\nM a.txt\nM src/lib.rs",
            &[("a.txt", Some("one\ntwo\n3\n")), ("src/lib.rs", Some("fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n"))],
        ),
        (
            "repeated code resolved by the stated line",
            "--- src/lib.rs\n+++ src/lib.rs\n@@ -6,1 +6,1 @@\n-    1\n+    2\n",
            "patched 1 file:\nM src/lib.rs",
            &[("src/lib.rs", Some("fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n"))],
        ),
        (
            "create, delete and rename with hunks",
            "--- /dev/null\n+++ b/new/dir/n.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n\
             --- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
             --- a/a.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-one\n+ONE\n",
            "patched 3 files:\nA new/dir/n.txt\nD old.txt\nR a.txt -> b.txt",
            &[
                ("new/dir/n.txt", Some("hello\nworld\n")),
                ("old.txt", None),
                ("a.txt", None),
                ("b.txt", Some("ONE\ntwo\nthree\n")),
            ],
        ),
        (
            "pure git rename and deletion without hunks",
            "diff --git a/a.txt b/moved/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to moved/a.txt\n\
             diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n",
            "patched 2 files:\nR a.txt -> moved/a.txt\nD old.txt",
            &[("a.txt", None), ("moved/a.txt", Some("one\ntwo\nthree\n")), ("old.txt", None)],
        ),
        (
            "unified rename without hunks keeps the bytes",
            "--- a/a.txt\n+++ b/moved/a.txt\n--- a/old.txt\n+++ b/old.txt\n@@ -1 +1 @@\n-bye\n+hi\n",
            "patched 2 files:\nR a.txt -> moved/a.txt\nM old.txt",
            &[("a.txt", None), ("moved/a.txt", Some("one\ntwo\nthree\n")), ("old.txt", Some("hi\n"))],
        ),
        (
            "fenced, with wrong counts",
            "```diff\n--- a/a.txt\n+++ b/a.txt\n@@ -1,7 +1,1 @@\n one\n-two\n+2\n+2.5\n```\n",
            "patched 1 file:\nM a.txt",
            &[("a.txt", Some("one\n2\n2.5\nthree\n"))],
        ),
        (
            "no newline at end, both directions",
            "--- a/a.txt\n+++ b/a.txt\n@@ -3 +3 @@\n-three\n+THREE\n\\ No newline at end of file\n\
             --- /dev/null\n+++ b/bare.txt\n@@ -0,0 +1 @@\n+bare\n\\ No newline at end of file\n",
            "patched 2 files:\nM a.txt\nA bare.txt",
            &[("a.txt", Some("one\ntwo\nTHREE")), ("bare.txt", Some("bare"))],
        ),
        (
            "envelope with a move, an anchor and end of file",
            "*** Begin Patch\n*** Add File: hello.txt\n+Hello\n+world\n*** Update File: src/lib.rs\n*** Move to: src/main.rs\n\
             @@ fn b() {\n-    1\n+    3\n*** Update File: a.txt\n@@\n-three\n+last\n*** End of File\n\
             *** Delete File: old.txt\n*** End Patch\n",
            "patched 4 files:\nA hello.txt\nR src/lib.rs -> src/main.rs\nM a.txt\nD old.txt",
            &[
                ("hello.txt", Some("Hello\nworld\n")),
                ("src/lib.rs", None),
                ("src/main.rs", Some("fn a() {\n    1\n}\n\nfn b() {\n    3\n}\n")),
                ("a.txt", Some("one\ntwo\nlast\n")),
                ("old.txt", None),
            ],
        ),
        (
            "added lines against a missing file create it",
            "--- a/fresh.txt\n+++ b/fresh.txt\n@@ -0,0 +1,2 @@\n+fresh\n+text\n",
            "patched 1 file:\nA fresh.txt",
            &[("fresh.txt", Some("fresh\ntext\n"))],
        ),
        (
            "a move onto the file itself is an edit",
            "--- a/a.txt\n+++ b/./a.txt\n@@ -1 +1 @@\n-one\n+1\n",
            "patched 1 file:\nM a.txt",
            &[("a.txt", Some("1\ntwo\nthree\n"))],
        ),
        (
            "whitespace fuzz keeps the file's context lines",
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn a() {  \n-  1\n+    10\n }\n",
            "patched 1 file:\nM src/lib.rs",
            &[("src/lib.rs", Some("fn a() {\n    10\n}\n\nfn b() {\n    1\n}\n"))],
        ),
    ];
    for (name, text, want_summary, want_files) in table {
        let f = fixture(FILES);
        let mut want = tree(f.dir.path());
        for (path, text) in *want_files {
            match text {
                Some(t) => want.insert((*path).to_owned(), (*t).to_owned()),
                None => want.remove(*path),
            };
        }
        assert_eq!(patch(&f, text).as_deref(), Ok(*want_summary), "{name}");
        assert_eq!(tree(f.dir.path()), want, "{name}");
    }
}

#[test]
fn refuses_and_changes_nothing() {
    let outside = "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-root\n+toor\n";
    // (name, patch, kind, message fragment)
    let table: &[(&str, &str, ErrorKind, &str)] = &[
        (
            "hunk does not apply",
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n@@ -2,2 +2,2 @@\n two\n-four\n+4\n",
            ErrorKind::PatchFailed,
            "a.txt: hunk 2 (@@ -2,2 +2,2 @@) did not apply: expected context at or near line 2:\n two\n-four",
        ),
        (
            "create an existing file",
            "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n",
            ErrorKind::PatchFailed,
            "a.txt: the patch creates this file, but it already exists",
        ),
        (
            "envelope add onto an existing file",
            "*** Begin Patch\n*** Add File: old.txt\n+x\n*** End Patch",
            ErrorKind::PatchFailed,
            "old.txt: the patch creates this file, but it already exists",
        ),
        (
            "rename onto an existing file",
            "*** Begin Patch\n*** Update File: a.txt\n*** Move to: old.txt\n*** End Patch",
            ErrorKind::PatchFailed,
            "old.txt: the patch moves a.txt here, but old.txt already exists",
        ),
        (
            "same path updated, then deleted",
            "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+1\n--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n",
            ErrorKind::InvalidInput,
            "a.txt: the patch names this path twice (patch lines 1 and 6)",
        ),
        (
            "rename onto a path another section deletes",
            "*** Begin Patch\n*** Delete File: old.txt\n*** Update File: a.txt\n*** Move to: old.txt\n*** End Patch",
            ErrorKind::InvalidInput,
            "old.txt: the patch names this path twice",
        ),
        (
            "update a missing file",
            "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n",
            ErrorKind::NotFound,
            "nope.txt",
        ),
        (
            "delete a missing file",
            "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
            ErrorKind::NotFound,
            "nope.txt",
        ),
        (
            "delete a directory",
            "*** Begin Patch\n*** Delete File: src\n*** End Patch",
            ErrorKind::NotAFile,
            "src: is a directory",
        ),
        (
            "deletion whose hunks do not cover the file",
            "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n",
            ErrorKind::PatchFailed,
            "a.txt: the patch deletes this file, but its hunks leave 2 lines of it",
        ),
        ("relative escape", "--- a/../x.txt\n+++ b/../x.txt\n@@ -1 +1 @@\n-a\n+b\n", ErrorKind::PathEscape, "../x.txt"),
        ("absolute escape", outside, ErrorKind::PathEscape, "/etc/passwd"),
        (
            "escape in a later section stops the earlier ones",
            "*** Begin Patch\n*** Add File: fine.txt\n+x\n*** Add File: ../evil.txt\n+x\n*** End Patch",
            ErrorKind::PathEscape,
            "../evil.txt: path is outside the workspace roots",
        ),
        ("garbage", "this is not a patch", ErrorKind::InvalidInput, "patch line 1: expected a file header"),
    ];
    for (name, text, kind, fragment) in table {
        let f = fixture(FILES);
        let before = tree(f.dir.path());
        let (got_kind, msg) = patch(&f, text).expect_err(name);
        assert_eq!(got_kind, *kind, "{name}: {msg}");
        assert!(msg.contains(fragment), "{name}:\n{msg}\n--- wanted ---\n{fragment}");
        assert_eq!(tree(f.dir.path()), before, "{name}");
    }
}

#[test]
fn a_failing_third_file_yields_no_plan() {
    let f = fixture(FILES);
    let text = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** Add File: n.txt\n+n\n\
                *** Update File: src/lib.rs\n@@ fn c() {\n-    1\n+    2\n*** End Patch";
    let (kind, msg) = call(&f, json!({ "patch": text })).expect_err("third file fails");
    assert_eq!(kind, ErrorKind::PatchFailed);
    assert_eq!(
        msg,
        "src/lib.rs: hunk 1 (@@ fn c() {) did not apply: could not find the line `fn c() {` named by `@@` in the file"
    );
}

#[test]
fn absolute_paths_inside_a_root_work() {
    let f = fixture(FILES);
    let abs = f.dir.path().join("a.txt");
    let abs = abs.to_string_lossy();
    let text = format!("--- {abs}\n+++ {abs}\n@@ -1 +1 @@\n-one\n+1\n");
    assert_eq!(patch(&f, &text), Ok(format!("patched 1 file:\nM {abs}")));
    assert_eq!(fs::read_to_string(f.dir.path().join("a.txt")).expect("read"), "1\ntwo\nthree\n");
}

#[test]
fn line_endings_and_bom_are_kept() {
    let f = fixture("");
    f.write("crlf.txt", "one\r\ntwo\r\nthree\r\n");
    f.write("bom.txt", "\u{feff}x\ny\n");
    let text = "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n\
                --- a/bom.txt\n+++ b/bom.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n";
    assert_eq!(patch(&f, text).as_deref(), Ok("patched 2 files:\nM crlf.txt\nM bom.txt"));
    assert_eq!(fs::read(f.dir.path().join("crlf.txt")).expect("read"), b"one\r\nTWO\r\n2.5\r\nthree\r\n");
    assert_eq!(fs::read(f.dir.path().join("bom.txt")).expect("read"), "\u{feff}x\nY\n".as_bytes());
}

#[test]
fn dry_run_returns_the_diff_and_writes_nothing() {
    let f = fixture(FILES);
    let before = tree(f.dir.path());
    let text = "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** Add File: n.txt\n+n\n\
                *** Update File: old.txt\n*** Move to: gone.txt\n*** End Patch";
    let out = call(&f, json!({ "patch": text, "dry_run": true })).expect("dry run");
    let Output::Text(out) = out else { panic!("a dry run returns text, got {out:?}") };
    assert_eq!(
        out,
        "dry run, nothing written: M a.txt, A n.txt, R old.txt -> gone.txt\n\n\
         --- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n\
         --- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n\
         rename old.txt -> gone.txt\n"
    );
    assert_eq!(tree(f.dir.path()), before);
}

#[test]
fn validates_arguments() {
    let f = fixture(FILES);
    let table = [
        (json!({}), "missing field `patch`"),
        (json!({"patch": 7}), "`patch`"),
        (json!({"patch": "x", "dry_run": "yes"}), "`dry_run`"),
        (json!({"patch": "x", "bogus": 1}), "bogus"),
        (json!({"patch": ""}), "`patch` is empty"),
    ];
    for (args, fragment) in table {
        let (kind, msg) = call(&f, args.clone()).expect_err("invalid");
        assert_eq!(kind, ErrorKind::InvalidInput, "{args}");
        assert!(msg.contains(fragment), "{args}: {msg}");
    }
}

/// Slips in paths and sections that name one file for certain apply, and the answer says how it
/// read them; the twins, where the intent is not certain, are refused and change nothing.
#[test]
fn certain_slips_in_paths_and_sections_apply_and_are_named() {
    let update = |path: &str| format!("*** Begin Patch\n*** Update File: {path}\n@@\n one\n-two\n+TWO\n*** End Patch");
    // (slip, patch, what the answer says, the file changed and its text)
    let table: &[(&str, String, &str, (&str, &str))] = &[
        ("an a/ prefix", update("a/a.txt"), "accepted: `a/a.txt` read as `a.txt`", ("a.txt", "one\nTWO\nthree\n")),
        ("another case", update("A.TXT"), "accepted: `A.TXT` read as `a.txt`", ("a.txt", "one\nTWO\nthree\n")),
        ("another case in a folder", "*** Begin Patch\n*** Update File: SRC/Lib.rs\n@@ fn b() {\n-    1\n+    2\n*** End Patch".to_owned(), "accepted: `SRC/Lib.rs` read as `src/lib.rs`", ("src/lib.rs", "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n")),
        (
            "two sections for one file",
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: old.txt\n@@\n-bye\n+BYE\n*** Update File: a.txt\n@@\n-three\n+THREE\n*** End Patch".to_owned(),
            "accepted: the sections for a.txt at patch lines 2 and 10 applied as one",
            ("a.txt", "ONE\ntwo\nTHREE\n"),
        ),
        (
            "hunks out of file order",
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@\n fn b() {\n-    1\n+    2\n@@\n fn a() {\n-    1\n+    0\n".to_owned(),
            "accepted: hunk 2 (@@) applied at line 1, before the hunk ahead of it in the patch (hunks out of file order)",
            ("src/lib.rs", "fn a() {\n    0\n}\n\nfn b() {\n    2\n}\n"),
        ),
        (
            "a hunk written against the previous hunk's result",
            "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n+one and a half\n two\n@@\n one and a half\n-two\n+TWO\n*** End Patch".to_owned(),
            "accepted: hunk 2 (@@) matched the text after hunk 1, not the file as it was",
            ("a.txt", "one\none and a half\nTWO\nthree\n"),
        ),
    ];
    for (slip, text, said, (file, want)) in table {
        // On a disk that ignores case (Windows), another case names the file itself: no slip.
        if cfg!(windows) && slip.contains("case") {
            continue;
        }
        let f = fixture(FILES);
        let summary = patch(&f, text).unwrap_or_else(|e| panic!("{slip}: {e:?}"));
        assert!(summary.contains(said), "{slip}: {summary}");
        assert_eq!(tree(f.dir.path()).get(*file).map(String::as_str), Some(*want), "{slip}");
    }

    // The twins: a path two files could be, hunks out of order that name two places, a hunk
    // that overlaps another.
    let twins: &[(&str, &str, &str)] = &[
        (
            "a case two files share",
            "*** Begin Patch\n*** Update File: x.TXT\n@@\n-x\n+y\n*** End Patch",
            "x.TXT: no such file to update",
        ),
        (
            "out of order, two places",
            "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@\n fn b() {\n-    1\n+    2\n@@\n-    1\n+    0\n",
            "hunk 2 (@@) did not apply",
        ),
        (
            "out of order onto the other hunk's lines",
            "--- a/a.txt\n+++ b/a.txt\n@@\n two\n-three\n+3\n@@\n one\n-two\n+2\n",
            "hunk 2 (@@) did not apply",
        ),
    ];
    for (twin, text, refused) in twins {
        if cfg!(windows) && twin.contains("case") {
            continue; // x.txt and X.txt cannot both exist on a disk that ignores case
        }
        let f = fixture(&format!("{FILES}//- x.txt\nx\n//- X.txt\nx\n"));
        let before = tree(f.dir.path());
        let (_, message) = patch(&f, text).expect_err(twin);
        assert!(message.contains(refused), "{twin}: {message}");
        assert_eq!(tree(f.dir.path()), before, "{twin}");
    }
}

mod path_property {
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::{fixture, patch, tree};

    proptest! {
        // A fixed seed: a CI run must not depend on which inputs a random seed happens to draw.
        #![proptest_config(ProptestConfig {
            cases: 200,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x9a7e),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// A path with an `a/` or `b/` prefix, letters in another case, or both, is read as the
        /// one file it can name, and said; when a second file (the same path in a third case)
        /// could be meant, or none, the patch is refused and nothing changes.
        #[test]
        fn a_path_slip_names_the_one_file_it_can(
            parts in prop::collection::vec("[a-z]{1,6}", 1..4),
            ext in prop_oneof![Just(""), Just(".rs"), Just(".txt")],
            flips in prop::collection::vec(any::<bool>(), 24),
            prefix in prop_oneof![Just(""), Just("a/"), Just("b/")],
        ) {
            let real = format!("{}{ext}", parts.join("/"));
            // On a disk that ignores case (Windows), another case is the file itself: only the
            // prefixes are slips there.
            let flips = if cfg!(windows) { vec![false; flips.len()] } else { flips };
            let cased: String =
                real.chars().zip(flips.iter().cycle()).map(|(c, f)| if *f { c.to_ascii_uppercase() } else { c }).collect();
            let given = format!("{prefix}{cased}");
            if given == real {
                return Ok(()); // no slip
            }
            let text = format!("*** Begin Patch\n*** Update File: {given}\n@@\n one\n-two\n+TWO\n*** End Patch");
            let f = fixture(&format!("//- {real}\none\ntwo\n"));
            let summary = patch(&f, &text).map_err(|e| TestCaseError::fail(format!("{given}: {e:?}")))?;
            prop_assert!(summary.contains(&format!("accepted: `{given}` read as `{real}`")), "{}", summary);
            let after = tree(f.dir.path());
            prop_assert_eq!(after.get(&real).map(String::as_str), Some("one\nTWO\n"));

            // The twin: the same path in a third case beside it, or (a prefix alone) no file.
            let third = [real.to_uppercase(), capitalized(&real)].into_iter().find(|t| *t != cased && *t != real);
            let twin = match (cased == real, third) {
                (true, _) => fixture(&format!("//- {real}.orig\none\ntwo\n")),
                (false, Some(third)) => fixture(&format!("//- {real}\none\ntwo\n//- {third}\none\ntwo\n")),
                (false, None) => return Ok(()),
            };
            let before = tree(twin.dir.path());
            let refused = patch(&twin, &text);
            prop_assert!(refused.is_err(), "{} applied: {:?}", given, refused);
            prop_assert_eq!(tree(twin.dir.path()), before);
        }
    }

    /// `path` with the first letter of each part in upper case.
    fn capitalized(path: &str) -> String {
        path.split('/')
            .map(|p| {
                let mut c = p.chars();
                c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("/")
    }
}
