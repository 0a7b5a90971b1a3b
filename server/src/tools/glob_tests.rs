//! Tests of `glob`: matching rule, order, walk rules, the cap and errors.

use std::fs::File;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::error::ErrorKind;
use crate::tools::testing::{fixture, Fixture};

/// Sets the modification time of `path` to `secs` seconds after an arbitrary fixed instant.
fn touch(f: &Fixture, path: &str, secs: u64) {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs);
    File::options().write(true).open(f.dir.path().join(path)).and_then(|h| h.set_modified(t)).expect("set mtime");
}

/// Files of every kind the walk must handle, with distinct modification times: the higher the
/// number, the newer.
fn walk_fixture() -> (Fixture, tempfile::TempDir) {
    let f = fixture(
        r#"
//- .gitignore
ignored/
*.log
//- ignored/x.txt
//- app.log
//- .hidden/h.txt
//- .env
//- .git/config
//- src/ok.txt
//- src/deep/er.txt
//- src/main.rs
//- top.txt
//- same_a.md
//- same_b.md
"#,
    );
    let times = [
        (".gitignore", 1),
        ("ignored/x.txt", 2),
        ("app.log", 3),
        (".hidden/h.txt", 4),
        (".env", 5),
        ("src/ok.txt", 6),
        ("src/deep/er.txt", 7),
        ("src/main.rs", 8),
        ("top.txt", 9),
        ("same_a.md", 10),
        ("same_b.md", 10),
    ];
    for (path, secs) in times {
        touch(&f, path, secs);
    }
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(outside.path().join("sub")).expect("mkdir");
    std::fs::write(outside.path().join("sub/secret.txt"), "secret\n").expect("write");
    let root = f.dir.path();
    std::os::unix::fs::symlink(outside.path(), root.join("link_dir")).expect("symlink");
    std::os::unix::fs::symlink(outside.path().join("sub/secret.txt"), root.join("link_file.txt")).expect("symlink");
    std::os::unix::fs::symlink(root.join("top.txt"), root.join("inner_link.txt")).expect("symlink");
    (f, outside)
}

#[test]
fn matches_and_orders() {
    let (f, _outside) = walk_fixture();
    let table = [
        // Newest first; a name pattern matches at any depth; ignored files, `.git/` and
        // symlinks (inside or out) are never listed; hidden files are.
        (json!({"pattern": "*.txt"}), "top.txt\nsrc/deep/er.txt\nsrc/ok.txt\n.hidden/h.txt"),
        (
            json!({"pattern": "*.txt", "respect_gitignore": false}),
            "top.txt\nsrc/deep/er.txt\nsrc/ok.txt\n.hidden/h.txt\nignored/x.txt",
        ),
        (json!({"pattern": "*", "respect_gitignore": false, "limit": 20}), "same_a.md\nsame_b.md\ntop.txt\nsrc/main.rs\nsrc/deep/er.txt\nsrc/ok.txt\n.env\n.hidden/h.txt\napp.log\nignored/x.txt\n.gitignore"),
        // Equal times fall back to path order.
        (json!({"pattern": "*.md"}), "same_a.md\nsame_b.md"),
        (json!({"pattern": ".env"}), ".env"),
        (json!({"pattern": "config"}), "(no matches)"),
        (json!({"pattern": "*secret*"}), "(no matches)"),
        (json!({"pattern": "**/*secret*", "respect_gitignore": false}), "(no matches)"),
        (json!({"pattern": "link*"}), "(no matches)"),
        (json!({"pattern": "inner_link.txt"}), "(no matches)"),
        // With a `/`, the path relative to `path` is matched.
        (json!({"pattern": "src/*.txt"}), "src/ok.txt"),
        (json!({"pattern": "src/**/*.txt"}), "src/deep/er.txt\nsrc/ok.txt"),
        (json!({"pattern": "/*.txt"}), "top.txt"),
        (json!({"pattern": "*.{rs,md}"}), "same_a.md\nsame_b.md\nsrc/main.rs"),
        // `path` narrows the search; output stays relative to the workspace root.
        (json!({"pattern": "*.txt", "path": "src"}), "src/deep/er.txt\nsrc/ok.txt"),
        (json!({"pattern": "deep/*", "path": "src"}), "src/deep/er.txt"),
        (json!({"pattern": "*.txt", "path": "ignored"}), "ignored/x.txt"),
        (json!({"pattern": "*.nothing"}), "(no matches)"),
    ];
    for (args, want) in table {
        assert_eq!(f.call("glob", args.clone()).expect("glob"), want, "{args}");
    }
}

#[test]
fn caps_with_an_honest_notice() {
    let f = fixture("");
    for i in 0..1005 {
        f.write(&format!("d{}/f{i:04}.txt", i % 10), "");
        touch(&f, &format!("d{}/f{i:04}.txt", i % 10), i);
    }
    let out = f.call("glob", json!({"pattern": "*.txt"})).expect("glob");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "d4/f1004.txt");
    assert_eq!(lines[999], "d5/f0005.txt");
    assert_eq!(lines[1000], "");
    assert_eq!(
        lines[1001],
        "(showing the 1000 newest of 1005 matching files; 5 more not shown: narrow `pattern` or `path`, \
         or raise `limit`)"
    );
    let out = f.call("glob", json!({"pattern": "d1/*", "limit": 2})).expect("glob");
    assert_eq!(
        out,
        "d1/f1001.txt\nd1/f0991.txt\n\n(showing the 2 newest of 101 matching files; 99 more not shown: \
         narrow `pattern` or `path`, or raise `limit`)"
    );
}

#[test]
fn errors() {
    let (f, _outside) = walk_fixture();
    let table = [
        (json!({"pattern": "a["}), ErrorKind::InvalidInput, "`pattern`: invalid glob `a[`"),
        (json!({"pattern": ""}), ErrorKind::InvalidInput, "`pattern`"),
        (json!({"pattern": "!*.rs"}), ErrorKind::InvalidInput, "`pattern`"),
        (json!({"pattern": "*", "path": "top.txt"}), ErrorKind::NotADirectory, "top.txt: not a directory"),
        (json!({"pattern": "*", "path": "missing"}), ErrorKind::NotFound, "missing"),
        (json!({"pattern": "*", "path": "../x"}), ErrorKind::PathEscape, "../x"),
        (json!({"pattern": "*", "path": "link_dir"}), ErrorKind::PathEscape, "link_dir"),
        (json!({"pattern": "*", "limit": 0}), ErrorKind::InvalidInput, "`limit`"),
        (json!({"pattern": "*", "limit": -5}), ErrorKind::InvalidInput, "`limit`"),
        (json!({"pattern": "*", "respect_gitignore": "no"}), ErrorKind::InvalidInput, "`respect_gitignore`"),
        (json!({"pattern": 3}), ErrorKind::InvalidInput, "`pattern`"),
        (json!({}), ErrorKind::InvalidInput, "pattern"),
        (json!({"pattern": "*", "bogus": true}), ErrorKind::InvalidInput, "bogus"),
    ];
    for (args, kind, text) in table {
        let (got, msg) = f.call("glob", args.clone()).expect_err("must fail");
        assert_eq!(got, kind, "{args}: {msg}");
        assert!(msg.contains(text), "{args}: {msg}");
    }
}
