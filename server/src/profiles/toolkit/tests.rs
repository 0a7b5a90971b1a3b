//! The toolkit profile in process: session, argument shapes and texts, through the disk sink.

use serde_json::{json, Value};

use super::Toolkit;
use crate::profiles::{CallError, Profile};
use crate::sink::DiskSink;
use crate::tools::testing::{fixture, Fixture};

/// Calls `name` on `p` over fixture `f`; returns the text and whether it is an error.
fn call(p: &Toolkit, f: &Fixture, name: &str, args: Value) -> (String, bool) {
    let r = p.call(&f.ctx(), &DiskSink, name, args).expect("known tool");
    (r.text, r.is_error)
}

fn ready(f: &Fixture, dir: &str) -> Toolkit {
    let p = Toolkit::default();
    let (text, err) = call(&p, f, "set_workspace", json!({"path": dir}));
    assert!(!err, "{text}");
    p
}

#[test]
fn everything_waits_for_set_workspace() {
    let f = fixture("//- a.txt\nx\n");
    let p = Toolkit::default();
    for name in ["read_files", "write_files", "list_files", "apply_diffs", "insert_contents", "search_and_replace"] {
        let (text, err) = call(&p, &f, name, json!({"path": "a.txt"}));
        assert!(err && text.starts_with("Error: Workspace not set."), "{name}: {text}");
    }
    let (text, err) = call(&p, &f, "set_workspace", json!({"path": "missing"}));
    assert_eq!((text.as_str(), err), ("Error: Directory not found: missing", true));
    let (text, err) = call(&p, &f, "set_workspace", json!({"path": "a.txt"}));
    assert_eq!((text.as_str(), err), ("Error: Not a directory: a.txt", true));
    let (text, err) = call(&p, &f, "set_workspace", json!({"path": "/"}));
    assert!(err && text.starts_with("Error: Access denied: / is outside the allowed directories"), "{text}");
    let (text, _) = call(&p, &f, "read_files", json!({"path": "a.txt"}));
    assert!(text.starts_with("Error: Workspace not set."), "{text}");
}

#[test]
fn the_workspace_confines_paths() {
    let f = fixture("//- top.txt\ntop\n//- sub/a.txt\none\ntwo\n");
    let p = ready(&f, "sub");
    assert_eq!(call(&p, &f, "read_files", json!({"path": "a.txt"})), ("1 | one\n2 | two".to_owned(), false));
    let (text, err) = call(&p, &f, "read_files", json!({"path": "../top.txt"}));
    assert_eq!((text.as_str(), err), ("Error: Access denied: ../top.txt is outside the workspace", true));
    let abs = f.dir.path().join("top.txt").display().to_string();
    assert!(call(&p, &f, "read_files", json!({"path": abs})).1);
}

#[test]
fn arguments_are_checked() {
    let f = fixture("//- a.txt\nx\n");
    let p = ready(&f, ".");
    let table = [
        ("read_files", json!({"path": "a.txt", "bogus": 1}), "Error: Unknown parameter: bogus (parameters: "),
        ("read_files", json!({}), "Error: Missing required parameter: path"),
        ("read_files", json!({"path": 3}), "Error: path must be a string or an array of strings, got a number"),
        ("read_files", json!({"path": "a.txt", "line_range": "1:2"}), "Error: Invalid line_range: '1:2'."),
        ("read_files", json!({"path": ["a.txt"], "line_range": "1-1"}), "Error: line_range is only supported"),
        (
            "write_files",
            json!({"path": ["a", "b"], "content": ["x"], "line_count": 1}),
            "Error: content has 1 entries but path has 2",
        ),
        (
            "write_files",
            json!({"path": "n.txt", "content": "x", "line_count": -1}),
            "Error: line_count must be 0 or more",
        ),
        (
            "apply_diffs",
            json!({"path": "a.txt", "search_content": ["x"], "replace_content": "y", "start_line": 1}),
            "Error: search_content, replace_content and start_line must all be single values",
        ),
        (
            "apply_diffs",
            json!({"path": "a.txt", "search_content": "x", "replace_content": "y", "start_line": 0}),
            "Error: start_line must be at least 1",
        ),
        (
            "insert_contents",
            json!({"path": ["a.txt", "a.txt"], "line": 1, "content": "y"}),
            "Error: a.txt is listed more than once",
        ),
        (
            "search_and_replace",
            json!({"path": "a.txt", "search": "(", "replace": "y", "use_regex": true}),
            "Error: Invalid regular expression",
        ),
    ];
    for (name, args, want) in table {
        let (text, err) = call(&p, &f, name, args.clone());
        assert!(err && text.starts_with(want), "{name} {args}: {text}");
    }
    assert_eq!(f.read("a.txt").as_deref(), Some(&b"x\n"[..]));
}

#[test]
fn read_only_serves_only_the_read_tools() {
    let f = fixture("//- a.txt\nx\n");
    let mut f = f;
    f.config.read_only = true;
    let p = ready(&f, ".");
    let names: Vec<_> = p.tools(&f.config).iter().map(|t| t.name).collect();
    assert_eq!(names, ["set_workspace", "read_files", "list_files"]);
    let r = p.call(&f.ctx(), &DiskSink, "write_files", json!({"path": "b", "content": "", "line_count": 0}));
    assert_eq!(r, Err(CallError::UnknownTool("write_files".to_owned())));
}

#[test]
fn a_missed_diff_says_where_to_look() {
    let body: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let f = fixture("");
    f.write("a.txt", &body);
    f.write("b.rs", "fn main() {\n    let total = compute(1, 2);\n}\n");
    let p = ready(&f, ".");
    let diff = |path: &str, search: &str, start: u64| {
        call(
            &p,
            &f,
            "apply_diffs",
            json!({"path": path, "search_content": search, "replace_content": "x", "start_line": start}),
        )
    };
    assert_eq!(
        diff("a.txt", "line 90", 2),
        (
            "Error: No match for search_content in a.txt at line 2 or within 40 lines of it; it matches at line(s) 90: \
             give that line as start_line"
                .to_owned(),
            true
        )
    );
    assert_eq!(
        diff("b.rs", "    let totl = compute(1, 2);", 1),
        (
            "Error: No match for search_content in b.rs at line 1 or within 40 lines of it. The most similar lines \
             are:\n2 |     let total = compute(1, 2);"
                .to_owned(),
            true
        )
    );
    assert_eq!(f.read("a.txt").as_deref(), Some(body.as_bytes()));
}

#[test]
fn the_session_reads_open_buffers() {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use crate::text::Document;
    use crate::vfs::{OpenDocument, Overlay, Vfs};

    let f = fixture("//- sub/a.txt\nsaved\n");
    let real = f.vfs.resolve("sub/a.txt").expect("inside").real().to_path_buf();
    let open = OpenDocument { doc: Document::from_text("unsaved\nedit\n"), version: 4, dirty: true, stamp: 0 };
    let overlay = Overlay::from_docs(BTreeMap::from([(real, open)]));
    let vfs = Vfs::new(Arc::new(f.vfs.workspace().clone()), Arc::new(overlay));
    let ctx = crate::tools::Context { vfs: &vfs, config: &f.config, cancel: &f.cancel, editor: None };
    let p = Toolkit::default();
    let run = |name: &str, args: Value| p.call(&ctx, &DiskSink, name, args).expect("known tool").text;
    assert!(run("set_workspace", json!({"path": "sub"})).starts_with("Successfully set workspace root to: "));
    assert_eq!(run("read_files", json!({"path": "a.txt"})), "1 | unsaved\n2 | edit");
}
