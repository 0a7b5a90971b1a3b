//! The profile called as a frontend calls it, on a fixture workspace through the disk sink.

use serde_json::{json, Value};

use super::files::base64;
use super::Filesystem;
use crate::profiles::{CallError, Profile};
use crate::sink::DiskSink;
use crate::tools::testing::{fixture, Fixture};

const TREE: &str =
    "//- a.txt\none\nfoo\ntwo\nfoo\n//- src/m.py\ndef f():\n    return 1\n//- src/n.py\nx = 1\n//- d/e/f.txt\nf\n";

/// Calls `name`: `Ok((text, is_error))` or `Err((code, message))`.
fn call(f: &Fixture, name: &str, args: Value) -> Result<(String, bool), (i32, String)> {
    match Filesystem.call(&f.ctx(), &DiskSink, name, args) {
        Ok(r) => Ok((r.text, r.is_error)),
        Err(e) => Err((e.code(), e.to_string())),
    }
}

fn text(f: &Fixture, name: &str, args: Value) -> String {
    match call(f, name, args.clone()) {
        Ok((t, false)) => t,
        other => panic!("{name} {args}: {other:?}"),
    }
}

fn code(f: &Fixture, name: &str, args: Value) -> i32 {
    match call(f, name, args.clone()) {
        Err((c, _)) => c,
        other => panic!("{name} {args}: expected a JSON-RPC error, got {other:?}"),
    }
}

fn read(f: &Fixture, p: &str) -> String {
    String::from_utf8(f.read(p).expect("exists")).expect("utf-8")
}

#[test]
fn read_only_mode_lists_only_the_read_tools() {
    let mut f = fixture(TREE);
    f.config.read_only = true;
    let names: Vec<&str> = Filesystem.tools(&f.config).iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "read_file",
            "read_text_file",
            "read_multiple_files",
            "list_directory",
            "directory_tree",
            "get_file_info",
            "list_allowed_directories",
            "search_files",
            "grep_files",
            "glob_search"
        ]
    );
    let err = Filesystem.call(&f.ctx(), &DiskSink, "write_file", json!({"path": "z", "content": ""}));
    assert!(matches!(err, Err(CallError::UnknownTool(_))), "{err:?}");
}

#[test]
fn error_codes() {
    let f = fixture(TREE);
    let table = [
        ("read_file", json!({"path": "/etc/passwd"}), -32001),
        ("read_file", json!({"path": "missing.txt"}), -32002),
        ("read_file", json!({"path": "d"}), -32603),
        ("read_file", json!({}), -32602),
        ("read_file", json!({"path": 3}), -32602),
        ("write_file", json!({"path": "n.txt"}), -32602),
        ("list_directory", json!({"path": "nope"}), -32002),
        ("directory_tree", json!({"path": ".", "depth": -1}), -32602),
        ("move_file", json!({"source": "nope", "destination": "x"}), -32002),
        ("move_file", json!({"source": "a.txt", "destination": "src/n.py"}), -32603),
        ("delete", json!({"path": "nope"}), -32002),
        ("edit_file", json!({"path": "a.txt", "edits": [{"oldText": "foo", "newText": "x"}]}), -32603),
        ("edit_file", json!({"path": "a.txt", "edits": [{"newText": "x"}]}), -32602),
        ("edit_file", json!({"path": "nope.txt", "edits": [{"oldText": "a"}]}), -32002),
        ("edit_file", json!({"path": "a.txt", "edits": [{"oldText": "(", "isRegex": true}]}), -32603),
        ("edit_files", json!({"paths": ["**/*.rs"], "edits": [{"oldText": "a"}]}), -32002),
        ("edit_files", json!({"paths": ["/etc/*.conf"], "edits": [{"oldText": "a"}]}), -32001),
        ("search_files", json!({"directory": "."}), -32602),
        ("grep_files", json!({"regex": "x"}), -32602),
        ("grep_files", json!({"regex": true, "directory": "."}), -32602),
        ("grep_files", json!({"regex": "(", "directory": "."}), -32603),
        ("grep_files", json!({"regex": "x", "directory": "/etc"}), -32001),
        ("glob_search", json!({"directory": "."}), -32602),
        ("run_command", json!({}), -32602),
        ("run_command", json!({"command": "true", "workingDirectory": "/"}), -32001),
    ];
    for (name, args, want) in table {
        assert_eq!(code(&f, name, args.clone()), want, "{name} {args}");
    }
    assert_eq!(read(&f, "a.txt"), "one\nfoo\ntwo\nfoo\n", "no failed call changed a file");
}

#[test]
fn edits_apply_in_sequence_all_or_nothing() {
    let f = fixture(TREE);
    let edits = json!([{"oldText": "one", "newText": "ONE"}, {"oldText": "absent", "newText": "x"}]);
    let (c, msg) = call(&f, "edit_file", json!({"path": "a.txt", "edits": edits})).expect_err("second edit fails");
    assert_eq!(c, -32603);
    assert!(msg.contains("edits[1]: oldText not found"), "{msg}");
    assert_eq!(read(&f, "a.txt"), "one\nfoo\ntwo\nfoo\n");

    let edits = json!([{"oldText": "foo", "newText": "bar", "limit": 0}, {"oldText": "ONE", "newText": "uno", "caseInsensitive": true}]);
    assert_eq!(text(&f, "edit_file", json!({"path": "a.txt", "edits": edits})), "Successfully edited a.txt");
    assert_eq!(read(&f, "a.txt"), "uno\nbar\ntwo\nbar\n");
}

#[test]
fn dry_runs_show_a_diff_and_write_nothing() {
    let f = fixture(TREE);
    let args = json!({"path": "src/m.py", "dryRun": true, "edits": [{"oldText": "return (\\d)", "newText": "return $1 + 1", "isRegex": true}]});
    assert_eq!(
        text(&f, "edit_file", args),
        "--- src/m.py\n+++ src/m.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 1 + 1\n"
    );
    assert_eq!(read(&f, "src/m.py"), "def f():\n    return 1\n");
    let same = json!({"path": "a.txt", "dryRun": true, "edits": [{"oldText": "one", "newText": "one"}]});
    assert_eq!(text(&f, "edit_file", same), "(no changes)");
    let missing = json!({"path": "new.txt", "dryRun": true, "edits": [{"oldText": "a", "newText": "b"}]});
    assert!(text(&f, "edit_file", missing).starts_with("new.txt does not exist; intended edits:\n1. replace \"a\""));
}

#[test]
fn edit_files_expands_globs_and_reports_failures_inline() {
    let f = fixture(TREE);
    let args = json!({"paths": ["src/*.py", "a.txt"], "edits": [{"oldText": "1", "newText": "2"}]});
    let out = text(&f, "edit_files", args);
    let parts: Vec<&str> = out.split("\n---\n").collect();
    assert_eq!(parts.len(), 3, "{out}");
    assert!(parts[0].starts_with("Successfully edited ") && parts[0].ends_with("src/m.py"), "{out}");
    assert!(parts[1].ends_with("src/n.py"), "{out}");
    assert_eq!(parts[2], "a.txt: [error -32603] oldText not found (also tried a whitespace-normalized line match)");
    assert_eq!(read(&f, "src/m.py"), "def f():\n    return 2\n");
    assert_eq!(read(&f, "src/n.py"), "x = 2\n");
}

#[test]
fn directory_tree_depth() {
    let f = fixture(TREE);
    let tree = |depth: Value| -> Value {
        serde_json::from_str(&text(&f, "directory_tree", json!({"path": "d", "depth": depth}))).expect("json")
    };
    assert_eq!(tree(json!(0)), json!({"name": "d", "type": "directory"}));
    assert_eq!(
        tree(json!(1)),
        json!({"name": "d", "type": "directory", "children": [{"name": "e", "type": "directory"}]})
    );
    let full = json!({"name": "d", "type": "directory", "children": [
        {"name": "e", "type": "directory", "children": [{"name": "f.txt", "type": "file"}]}]});
    assert_eq!(tree(Value::Null), full);
    assert!(text(&f, "directory_tree", json!({"path": "d"})).starts_with("{\n  \"name\": \"d\",\n  \"type\""));
}

#[test]
fn grep_output() {
    let f = fixture(TREE);
    let root = f.dir.path().canonicalize().expect("root");
    let a = root.join("a.txt").display().to_string();
    let out = text(&f, "grep_files", json!({"regex": "fo+", "directory": ".", "globs": ["*.txt"], "contextLines": 1}));
    assert_eq!(out, format!("{a}-1-one\n{a}:2:foo\n{a}-3-two\n{a}:4:foo\n[2 matches]"));
    let capped =
        text(&f, "grep_files", json!({"regex": "FOO", "directory": ".", "caseInsensitive": true, "maxResults": 1}));
    assert_eq!(
        capped,
        format!("[results truncated at 1 matches; narrow the search or raise maxResults]\n{a}:2:foo\n[1 matches]")
    );
    f.write("bin.dat", b"foo\x00foo");
    assert_eq!(text(&f, "grep_files", json!({"regex": "foo", "globs": ["bin.dat"]})), "[0 matches]");
}

#[test]
fn search_files_takes_legacy_aliases() {
    let f = fixture(TREE);
    let root = f.dir.path().canonicalize().expect("root");
    let want = root.join("src/m.py").display().to_string();
    assert_eq!(text(&f, "search_files", json!({"directory": ".", "nameContains": "M.P"})), want);
    assert_eq!(text(&f, "search_files", json!({"path": ".", "pattern": "m.py"})), want);
    // The canonical name wins over its alias.
    assert_eq!(text(&f, "search_files", json!({"directory": ".", "nameContains": "m.py", "pattern": "zzz"})), want);
    let none = json!({"directory": ".", "nameContains": "py", "excludeGlobs": ["src"]});
    assert_eq!(text(&f, "search_files", none), "(no matches found)");
}

#[test]
fn run_command_output() {
    let f = fixture(TREE);
    let (out, is_error) = call(&f, "run_command", json!({"command": "echo out; echo err >&2; exit 3"})).expect("runs");
    assert_eq!(out, "out\n[exit code: 3]\n---\n[stderr]\nerr\n");
    assert!(is_error);
    assert_eq!(text(&f, "run_command", json!({"command": "true"})), "(no output)\n[exit code: 0]");
}

#[test]
fn binary_reads_are_base64() {
    let f = fixture(TREE);
    f.write("img.png", b"\x89PNG\x00\x01");
    let out = text(&f, "read_file", json!({"path": "img.png"}));
    assert_eq!(out, "[binary file img.png: 6 bytes, image/png, base64]\niVBORwAB");
    assert_eq!(base64(b"Ma"), "TWE=");
    assert_eq!(base64(b"M"), "TQ==");
    assert_eq!(base64(b""), "");
}

#[test]
fn paths_leading_outside() {
    let f = fixture(TREE);
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("s.txt"), "foo secret\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("s.txt"), f.dir.path().join("link.txt")).expect("symlink");
    // grep_files skips (and counts) a candidate leading outside; edit_files refuses the call.
    let out = text(&f, "grep_files", json!({"regex": "foo", "globs": ["*.txt"]}));
    assert!(out.ends_with("[2 matches]\n[1 path(s) skipped: outside the allowed directories]"), "{out}");
    assert!(!out.contains("secret"), "{out}");
    assert_eq!(
        code(&f, "edit_files", json!({"paths": ["*.txt"], "edits": [{"oldText": "foo", "newText": "x"}]})),
        -32001
    );
    assert_eq!(read(&f, "a.txt"), "one\nfoo\ntwo\nfoo\n");
    assert_eq!(std::fs::read_to_string(outside.path().join("s.txt")).expect("read"), "foo secret\n");
}

#[test]
fn maxima_are_held_not_refused() {
    let f = fixture(TREE);
    let out =
        text(&f, "grep_files", json!({"regex": "two", "directory": ".", "contextLines": 99, "maxResults": 99_999}));
    assert!(
        out.starts_with(&format!("{}-1-one\n", f.dir.path().canonicalize().expect("root").join("a.txt").display())),
        "{out}"
    );
    assert_eq!(code(&f, "grep_files", json!({"regex": "two", "directory": ".", "contextLines": -1})), -32602);
    assert_eq!(text(&f, "run_command", json!({"command": "echo $((1+1))", "timeout": 600})), "2\n[exit code: 0]");
}

#[test]
fn grep_is_in_path_order_and_line_based() {
    let f = fixture(TREE);
    for i in 0..200 {
        f.write(&format!("many/f{i:03}.txt"), format!("a\nhit {i}\n"));
    }
    f.write("crlf.txt", "end x\r\nno\r\n");
    let root = f.dir.path().canonicalize().expect("root");
    let out = text(&f, "grep_files", json!({"regex": "^hit", "directory": "many", "maxResults": 150}));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 152, "notice, 150 matches, footer");
    assert_eq!(lines[1], format!("{}:2:hit 0", root.join("many/f000.txt").display()));
    assert_eq!(lines[150], format!("{}:2:hit 149", root.join("many/f149.txt").display()));
    assert_eq!(lines[151], "[150 matches]");
    // `$` matches before a CRLF line break, as grep sees lines.
    let crlf = text(&f, "grep_files", json!({"regex": "x$", "globs": ["crlf.txt"]}));
    assert_eq!(crlf, format!("{}:1:end x\n[1 matches]", root.join("crlf.txt").display()));
}
