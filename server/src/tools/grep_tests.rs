//! Tests of `grep`: output formats, paging, walk rules, open buffers and errors.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use crate::error::ErrorKind;
use crate::text::Document;
use crate::tools::testing::{fixture, Fixture};
use crate::vfs::{OpenDocument, Overlay, Vfs};

const FORMATS: &str = r#"
//- a.txt
alpha
beta
gamma
delta
alpha beta
//- b/c.txt
one
Alpha two
three
//- b/d.rs
fn alpha() {}
"#;

#[test]
fn output_formats() {
    let f = fixture(FORMATS);
    f.write("crlf.txt", "omega\r\nomega two\r\n");
    f.write("u16.txt", b"\xFF\xFEo\x00m\x00e\x00g\x00a\x00\n\x00");
    let table = [
        (json!({"pattern": "alpha"}), "a.txt\nb/d.rs"),
        (json!({"pattern": "alpha", "output_mode": "files_with_matches"}), "a.txt\nb/d.rs"),
        (json!({"pattern": "alpha", "ignore_case": true}), "a.txt\nb/c.txt\nb/d.rs"),
        (json!({"pattern": "alpha", "output_mode": "count"}), "a.txt:2\nb/d.rs:1"),
        (
            json!({"pattern": "alpha", "output_mode": "content"}),
            "a.txt:1:alpha\na.txt:5:alpha beta\nb/d.rs:1:fn alpha() {}",
        ),
        (
            json!({"pattern": "alpha", "output_mode": "content", "context": 1}),
            "a.txt:1:alpha\na.txt-2-beta\n--\na.txt-4-delta\na.txt:5:alpha beta\n--\nb/d.rs:1:fn alpha() {}",
        ),
        (
            json!({"pattern": "alpha", "output_mode": "content", "before_context": 1}),
            "a.txt:1:alpha\n--\na.txt-4-delta\na.txt:5:alpha beta\n--\nb/d.rs:1:fn alpha() {}",
        ),
        (
            json!({"pattern": "alpha", "output_mode": "content", "after_context": 1}),
            "a.txt:1:alpha\na.txt-2-beta\n--\na.txt:5:alpha beta\n--\nb/d.rs:1:fn alpha() {}",
        ),
        // Overlapping context merges into one group; `before_context` overrides `context`.
        (
            json!({"pattern": "alpha", "path": "a.txt", "output_mode": "content", "context": 2, "before_context": 0}),
            "a.txt:1:alpha\na.txt-2-beta\na.txt-3-gamma\n--\na.txt:5:alpha beta",
        ),
        (
            json!({"pattern": "alpha", "path": "a.txt", "output_mode": "content", "context": 2}),
            "a.txt:1:alpha\na.txt-2-beta\na.txt-3-gamma\na.txt-4-delta\na.txt:5:alpha beta",
        ),
        // Context is for content mode only.
        (json!({"pattern": "alpha", "context": 3}), "a.txt\nb/d.rs"),
        (json!({"pattern": "^alpha$", "output_mode": "content"}), "a.txt:1:alpha"),
        (
            json!({"pattern": "beta\\ngamma", "multiline": true, "output_mode": "content"}),
            "a.txt:2:beta\na.txt:3:gamma",
        ),
        (json!({"pattern": "beta\\ngamma", "multiline": true, "output_mode": "count"}), "a.txt:2"),
        (json!({"pattern": "alpha", "glob": "*.rs"}), "b/d.rs"),
        (json!({"pattern": "alpha", "glob": "b/*.txt", "ignore_case": true}), "b/c.txt"),
        (json!({"pattern": "alpha", "glob": "/*.txt"}), "a.txt"),
        (json!({"pattern": "alpha", "path": "b"}), "b/d.rs"),
        (json!({"pattern": "alpha", "path": "a.txt", "output_mode": "content"}), "a.txt:1:alpha\na.txt:5:alpha beta"),
        (json!({"pattern": "alpha", "path": "b/c.txt"}), "(no matches)"),
        (json!({"pattern": "zeta"}), "(no matches)"),
        (json!({"pattern": "zeta", "output_mode": "content"}), "(no matches)"),
        (
            json!({"pattern": "omega", "output_mode": "content"}),
            "crlf.txt:1:omega\ncrlf.txt:2:omega two\nu16.txt:1:omega",
        ),
    ];
    for (args, want) in table {
        assert_eq!(f.call("grep", args.clone()).expect("grep"), want, "{args}");
    }
}

#[test]
fn pages() {
    let f = fixture("");
    for i in 1..=5 {
        f.write(&format!("f{i}.txt"), "x 1\nx 2\nx 3\n");
    }
    f.write("big/long.txt", "y\n".repeat(501));
    let footer = |unit: &str, a: usize, b: usize, n: usize| {
        format!("\n\n(showing {unit} {a}-{b} of {n}; call again with offset={b} for more)")
    };
    let table = [
        (json!({"pattern": "x", "head_limit": 2}), format!("f1.txt\nf2.txt{}", footer("files", 1, 2, 5))),
        (json!({"pattern": "x", "head_limit": 2, "offset": 2}), format!("f3.txt\nf4.txt{}", footer("files", 3, 4, 5))),
        (json!({"pattern": "x", "head_limit": 2, "offset": 4}), "f5.txt".to_owned()),
        (json!({"pattern": "x", "head_limit": 0}), "f1.txt\nf2.txt\nf3.txt\nf4.txt\nf5.txt".to_owned()),
        (
            json!({"pattern": "x", "offset": 5}),
            "(offset 5 is past the end: 5 files matched; use an offset from 0 to 4)".to_owned(),
        ),
        (
            json!({"pattern": "x", "output_mode": "count", "head_limit": 1}),
            format!("f1.txt:3{}", footer("files", 1, 1, 5)),
        ),
        (
            json!({"pattern": "x", "output_mode": "content", "head_limit": 4, "offset": 2}),
            format!("f1.txt:3:x 3\nf2.txt:1:x 1\nf2.txt:2:x 2\nf2.txt:3:x 3{}", footer("lines", 3, 6, 15)),
        ),
        // A page never starts with a separator; later groups are still separated.
        (
            json!({"pattern": "x 2", "output_mode": "content", "context": 1, "head_limit": 4, "offset": 1}),
            format!("f1.txt:2:x 2\nf1.txt-3-x 3\n--\nf2.txt-1-x 1\nf2.txt:2:x 2{}", footer("lines", 2, 5, 15)),
        ),
        (
            json!({"pattern": "x", "output_mode": "content", "offset": 15}),
            "(offset 15 is past the end: 15 lines matched; use an offset from 0 to 14)".to_owned(),
        ),
    ];
    for (args, want) in table {
        assert_eq!(f.call("grep", args.clone()).expect("grep"), want, "{args}");
    }
    // The default page of content mode is 500 lines.
    let out = f.call("grep", json!({"pattern": "y", "output_mode": "content"})).expect("grep");
    assert_eq!(out.lines().filter(|l| l.starts_with("big/long.txt:")).count(), 500);
    assert!(out.ends_with(&footer("lines", 1, 500, 501)), "{}", &out[out.len() - 90..]);
}

/// A fixture with ignored, hidden, `.git`, binary, oversized and symlinked files, all of them
/// containing `needle`; the symlinks lead outside the workspace to a file holding `secret`.
fn walk_fixture() -> (Fixture, tempfile::TempDir) {
    let mut f = fixture(
        r#"
//- .gitignore
ignored/
*.log
//- ignored/x.txt
needle
//- app.log
needle
//- .hidden/h.txt
needle
//- .env
needle
//- .git/config
needle
//- src/ok.txt
needle
"#,
    );
    f.write("bin.dat", b"needle\0needle\n");
    f.write("big.txt", "needle\n".repeat(50));
    f.config.max_grep_file_bytes = 100;
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "needle secret\n").expect("write");
    let root = f.dir.path();
    std::os::unix::fs::symlink(outside.path(), root.join("link_dir")).expect("symlink");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("link_file.txt")).expect("symlink");
    std::os::unix::fs::symlink(root.join("src/ok.txt"), root.join("inner_link.txt")).expect("symlink");
    (f, outside)
}

#[test]
fn walk_rules() {
    let (f, _outside) = walk_fixture();
    let skipped = "\n\n(skipped 1 file over the 100-byte grep limit)";
    let table = [
        (json!({"pattern": "needle"}), format!(".env\n.hidden/h.txt\nsrc/ok.txt{skipped}")),
        (
            json!({"pattern": "needle", "respect_gitignore": false}),
            format!(".env\n.hidden/h.txt\napp.log\nignored/x.txt\nsrc/ok.txt{skipped}"),
        ),
        (
            json!({"pattern": "needle", "respect_gitignore": true, "glob": "*.txt"}),
            format!(".hidden/h.txt\nsrc/ok.txt{skipped}"),
        ),
        (json!({"pattern": "secret"}), format!("(no matches){skipped}")),
        (
            json!({"pattern": "secret", "respect_gitignore": false, "output_mode": "content"}),
            format!("(no matches){skipped}"),
        ),
        // A directory named directly is searched even when ignored.
        (json!({"pattern": "needle", "path": "ignored"}), "ignored/x.txt".to_owned()),
    ];
    for (args, want) in table {
        assert_eq!(f.call("grep", args.clone()).expect("grep"), want, "{args}");
    }
    let all = f.call("grep", json!({"pattern": "", "output_mode": "content", "respect_gitignore": false}));
    let all = all.expect("grep");
    for absent in ["secret", "link_", "inner_link", ".git/", "bin.dat", "big.txt:"] {
        assert!(!all.contains(absent), "{absent} in:\n{all}");
    }
}

#[test]
fn open_buffers_shadow_files() {
    let mut f = fixture("//- open.txt\ndisk needle_disk\n//- closed.txt\nneedle_disk too\n//- sub/\n");
    let root = f.dir.path().canonicalize().expect("canonical");
    let doc = |text: &str| OpenDocument { doc: Document::from_text(text), version: 2, dirty: true, stamp: 0 };
    let mut docs = BTreeMap::new();
    docs.insert(root.join("open.txt"), doc("buffer needle_buf\nline two\n"));
    // Never saved: only the overlay has it.
    docs.insert(root.join("sub/new.rs"), doc("fn needle_buf() {}\n"));
    docs.insert(root.join(".git/COMMIT_EDITMSG"), doc("needle_buf\n"));
    f.vfs = Vfs::new(Arc::new(f.vfs.workspace().clone()), Arc::new(Overlay::from_docs(docs)));
    let table = [
        (json!({"pattern": "needle_buf"}), "open.txt\nsub/new.rs"),
        (json!({"pattern": "needle_disk"}), "closed.txt"),
        (
            json!({"pattern": "needle_buf", "output_mode": "content", "after_context": 1}),
            "open.txt:1:buffer needle_buf\nopen.txt-2-line two\n--\nsub/new.rs:1:fn needle_buf() {}",
        ),
        (json!({"pattern": "needle_buf", "path": "open.txt", "output_mode": "count"}), "open.txt:1"),
        (json!({"pattern": "needle_disk", "path": "open.txt"}), "(no matches)"),
        (json!({"pattern": "needle_buf", "path": "sub"}), "sub/new.rs"),
        (json!({"pattern": "needle_buf", "glob": "*.txt"}), "open.txt"),
    ];
    for (args, want) in table {
        assert_eq!(f.call("grep", args.clone()).expect("grep"), want, "{args}");
    }
}

#[test]
fn long_lines_are_cut() {
    let f = fixture("");
    f.write("min.js", format!("{}needle{}\nshort needle\n", "a".repeat(600), "b".repeat(100)));
    let out = f.call("grep", json!({"pattern": "needle", "output_mode": "content"})).expect("grep");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], format!("min.js:1:{} [... line truncated, 206 more characters]", "a".repeat(500)));
    assert_eq!(lines[1], "min.js:2:short needle");
}

#[test]
fn output_is_sorted_and_deterministic() {
    let f = fixture("");
    for i in 0..150 {
        f.write(&format!("d{}/e{}/f{i}.txt", i % 7, i % 3), format!("hit {i}\nmiss\nhit again\n"));
    }
    let args = json!({"pattern": "hit", "output_mode": "content"});
    let first = f.call("grep", args.clone()).expect("grep");
    for _ in 0..3 {
        assert_eq!(f.call("grep", args.clone()).expect("grep"), first);
    }
    let files: Vec<&str> = first.lines().map(|l| l.split(':').next().expect("path")).collect();
    let mut sorted = files.clone();
    sorted.sort_by(|a, b| std::path::Path::new(a).cmp(std::path::Path::new(b)));
    assert_eq!(files, sorted);
    assert_eq!(files.len(), 300);
}

#[test]
fn errors() {
    let (f, _outside) = walk_fixture();
    let table = [
        (json!({"pattern": "("}), ErrorKind::InvalidInput, "`pattern`: invalid regex"),
        (json!({"pattern": "a\\nb"}), ErrorKind::InvalidInput, "set `multiline` to true"),
        (json!({"pattern": "a", "output_mode": "lines"}), ErrorKind::InvalidInput, "`output_mode`"),
        (json!({"pattern": "a", "context": -1}), ErrorKind::InvalidInput, "`context` must be 0 or more"),
        (json!({"pattern": "a", "before_context": -2}), ErrorKind::InvalidInput, "`before_context`"),
        (json!({"pattern": "a", "after_context": -3}), ErrorKind::InvalidInput, "`after_context`"),
        (json!({"pattern": "a", "context": 10_001}), ErrorKind::InvalidInput, "`context` must be between"),
        (json!({"pattern": "a", "head_limit": -1}), ErrorKind::InvalidInput, "`head_limit`"),
        (json!({"pattern": "a", "offset": -1}), ErrorKind::InvalidInput, "`offset`"),
        (json!({"pattern": "a", "offset": 1.5}), ErrorKind::InvalidInput, "`offset`"),
        (json!({"pattern": "a", "ignore_case": "yes"}), ErrorKind::InvalidInput, "`ignore_case`"),
        (json!({"pattern": "a", "glob": "a["}), ErrorKind::InvalidInput, "`glob`: invalid glob"),
        (json!({"pattern": 7}), ErrorKind::InvalidInput, "`pattern`"),
        (json!({}), ErrorKind::InvalidInput, "pattern"),
        (json!({"pattern": "a", "bogus": 1}), ErrorKind::InvalidInput, "bogus"),
        (json!({"pattern": "a", "path": "missing"}), ErrorKind::NotFound, "missing"),
        (json!({"pattern": "a", "path": "../x"}), ErrorKind::PathEscape, "../x"),
        (json!({"pattern": "a", "path": "link_dir"}), ErrorKind::PathEscape, "link_dir"),
        (json!({"pattern": "a", "path": "bin.dat"}), ErrorKind::IsBinary, "bin.dat: file is binary"),
        (json!({"pattern": "a", "path": "big.txt"}), ErrorKind::TooLarge, "over the 100-byte grep limit"),
    ];
    for (args, kind, text) in table {
        let (got, msg) = f.call("grep", args.clone()).expect_err("must fail");
        assert_eq!(got, kind, "{args}: {msg}");
        assert!(msg.contains(text), "{args}: {msg}");
    }
}

#[test]
fn memory_budget_does_not_change_output() {
    let f = fixture(FORMATS);
    for i in 1..=5 {
        f.write(&format!("p/f{i}.txt"), "x alpha\ny\nx alpha\n");
    }
    let ctx = f.ctx();
    let run = |args: &serde_json::Value, budget: usize| {
        super::run(&ctx, crate::tools::parse_args(args.clone()).expect("args"), budget).expect("grep")
    };
    let table = [
        json!({"pattern": "alpha", "output_mode": "content"}),
        json!({"pattern": "alpha", "output_mode": "content", "context": 1}),
        json!({"pattern": "alpha", "output_mode": "content", "head_limit": 3, "offset": 4}),
        json!({"pattern": "alpha", "output_mode": "content", "after_context": 1, "head_limit": 5, "offset": 2}),
        json!({"pattern": "alpha", "output_mode": "content", "head_limit": 2, "offset": 11}),
    ];
    for args in table {
        let want = run(&args, super::engine::KEEP_BYTES);
        // A budget of 0 keeps no text at all; 10 bytes keeps the text of the first file or so.
        for budget in [0, 10] {
            assert_eq!(run(&args, budget), want, "{args} with a {budget}-byte budget");
        }
    }
}

#[test]
fn a_cancelled_search_stops_with_cancelled() {
    let f = fixture(FORMATS);
    f.cancel.cancel();
    for tool in ["grep", "glob"] {
        assert_eq!(f.call_err(tool, json!({"pattern": "alpha"})), ErrorKind::Cancelled, "{tool}");
    }
}

/// An open buffer is streamed from its rope's leaves: a large one, with matches and multi-line
/// matches across leaf boundaries, gives the results its text gives as a file on disk.
#[test]
fn a_large_buffer_is_searched_as_its_file_would_be() {
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!("line {i} é🦀 {}\r\n", if i % 97 == 0 { "needle" } else { "hay" }));
    }
    let mut f = fixture("//- sub/\n");
    f.write("sub/disk.txt", &text);
    let root = f.dir.path().canonicalize().expect("canonical");
    let mut docs = BTreeMap::new();
    let open = OpenDocument { doc: Document::from_text(&text), version: 2, dirty: true, stamp: 0 };
    docs.insert(root.join("sub/open.txt"), open);
    f.vfs = Vfs::new(Arc::new(f.vfs.workspace().clone()), Arc::new(Overlay::from_docs(docs)));
    let grep = |path: &str, extra: serde_json::Value| {
        let mut args = json!({"pattern": "needle\\r?\\nline \\d+", "path": path, "output_mode": "content"});
        for (k, v) in extra.as_object().expect("object") {
            args[k] = v.clone();
        }
        f.call("grep", args).expect("grep")
    };
    for extra in [json!({"multiline": true}), json!({"pattern": "needle"}), json!({"pattern": "é🦀 n"})] {
        let (disk, open) = (grep("sub/disk.txt", extra.clone()), grep("sub/open.txt", extra.clone()));
        assert!(disk.lines().count() > 100, "{extra}: {disk}");
        assert_eq!(open.replace("sub/open.txt", "sub/disk.txt"), disk, "{extra}");
    }
}
