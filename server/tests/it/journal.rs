//! The change journal through the real binary: `tether call` records, `tether history` lists,
//! `tether undo` takes back, byte for byte, keeping later changes; concurrent writers lose no
//! record; the size bound drops the oldest; a stale edit is told what changed.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::lsp_support::WineSafe as _;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_tether");

/// Runs `tether ARGS --root ROOT` with the journal under `state`.
fn tether(state: &Path, root: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--root")
        .arg(root)
        .env(crate::lsp_support::STATE_VAR, state)
        .env_remove("TETHER_LOG")
        .wine_safe_output()
        .expect("run tether")
}

fn ok(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "tether failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

fn call(state: &Path, root: &Path, tool: &str, args: &Value) -> Output {
    tether(state, root, &["call", tool, &args.to_string()])
}

fn history(state: &Path, root: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["history", "--json", "--limit", "1000"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&tether(state, root, &args))).expect("history json")
}

/// Every entry under `root` (journal and temp names aside): kind, bytes, permission bits.
fn snapshot(root: &Path) -> BTreeMap<String, (bool, Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).expect("read dir") {
            let e = e.expect("entry");
            let meta = fs::symlink_metadata(e.path()).expect("meta");
            let rel = e.path().strip_prefix(root).expect("inside").to_string_lossy().into_owned();
            let mode = mode_of(&meta);
            if meta.is_dir() {
                out.insert(rel, (true, Vec::new(), mode));
                stack.push(e.path());
            } else {
                out.insert(rel, (false, fs::read(e.path()).expect("read"), mode));
            }
        }
    }
    out
}

/// The permission bits of `meta` (on Windows, the read-only attribute).
fn mode_of(meta: &fs::Metadata) -> u32 {
    #[cfg(unix)]
    return std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777;
    #[cfg(windows)]
    return u32::from(meta.permissions().readonly());
}

/// A workspace of `n` files in several shapes, and a patch that changes all of them: CRLF and
/// BOM files edited, an executable edited and another deleted, a file moved, one created.
pub fn fifty_file_patch(root: &Path, n: usize) -> String {
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..n {
        let dir = root.join(format!("pkg{}", i % 5));
        fs::create_dir_all(&dir).expect("mkdir");
        let rel = format!("pkg{}/f{i}.txt", i % 5);
        let path = root.join(&rel);
        let body: String = (0..40).map(|l| format!("line {l} of file {i}")).collect::<Vec<_>>().join(if i % 3 == 0 {
            "\r\n"
        } else {
            "\n"
        });
        let bytes = if i % 7 == 0 { format!("\u{feff}{body}\n") } else { format!("{body}\n") };
        fs::write(&path, bytes).expect("write");
        #[cfg(unix)]
        if i % 4 == 0 {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        match i {
            1 => patch.push_str(&format!("*** Delete File: {rel}\n")),
            2 => patch.push_str(&format!(
                "*** Update File: {rel}\n*** Move to: moved/f2.txt\n@@\n-line 5 of file 2\n+line five of file 2\n"
            )),
            _ => patch.push_str(&format!("*** Update File: {rel}\n@@\n-line 10 of file {i}\n+line ten of file {i}\n")),
        }
    }
    patch.push_str("*** Add File: brand/new.txt\n+a new file\n*** End Patch\n");
    patch
}

#[test]
fn a_fifty_file_patch_is_undone_byte_for_byte() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    let patch = fifty_file_patch(&root, 50);
    let before = snapshot(&root);
    ok(&call(state.path(), &root, "apply_patch", &json!({ "patch": patch })));
    assert_ne!(snapshot(&root), before);
    let listed = history(state.path(), &root, &[]);
    let c = &listed["changesets"][0];
    assert_eq!(c["tool"], "apply_patch");
    assert_eq!(c["client"], "cli");
    let files = c["files"].as_array().expect("files");
    // 50 files (one edited and moved: two records), the new one, and the two directories the
    // patch made for them.
    assert_eq!(files.iter().filter(|f| f["op"] != "mkdir").count(), 52, "{c}");
    assert_eq!(files.iter().filter(|f| f["op"] == "mkdir").count(), 2, "{c}");
    let id = c["id"].as_str().expect("id");
    let undid = ok(&tether(state.path(), &root, &["undo", id]));
    assert!(undid.starts_with(&format!("undid changeset {id} (apply_patch by cli)")), "{undid}");
    // Every file and directory is as it was: the directories the patch made are gone too.
    assert_eq!(snapshot(&root), before);
    // The undo is a changeset of its own that names what it undid, and can itself be undone.
    let listed = history(state.path(), &root, &[]);
    assert_eq!(listed["changesets"][0]["undoes"], json!([id]));
    assert_eq!(listed["changesets"][1]["undone_by"], listed["changesets"][0]["id"]);
    let redo = listed["changesets"][0]["id"].as_str().expect("id").to_owned();
    ok(&tether(state.path(), &root, &["undo", &redo]));
    assert_eq!(fs::read_to_string(root.join("brand/new.txt")).expect("recreated"), "a new file\n");
    assert!(!root.join("pkg1/f1.txt").exists());
    let listed = history(state.path(), &root, &[]);
    assert!(listed["changesets"][2].get("undone_by").is_none(), "redone: {}", listed["changesets"][2]);
}

#[test]
fn a_later_edit_elsewhere_is_kept_and_one_on_the_same_lines_is_refused_with_them() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    let file = root.join("notes.txt");
    fs::write(&file, "one\ntwo\nthree\nfour\nfive\n").expect("write");
    ok(&call(
        state.path(),
        &root,
        "edit_file",
        &json!({"path": "notes.txt", "old_string": "two", "new_string": "TWO"}),
    ));
    // The user then edits line 5 and adds a line on top, outside tether.
    fs::write(&file, "zero\none\nTWO\nthree\nfour\nFIVE\n").expect("user edit");
    ok(&tether(state.path(), &root, &["undo", "--last", "1"]));
    assert_eq!(fs::read_to_string(&file).expect("read"), "zero\none\ntwo\nthree\nfour\nFIVE\n");

    ok(&call(
        state.path(),
        &root,
        "edit_file",
        &json!({"path": "notes.txt", "old_string": "three", "new_string": "3"}),
    ));
    fs::write(&file, "zero\none\ntwo\n3!\nfour\nFIVE\n").expect("user edit on the same line");
    let out = tether(state.path(), &root, &["undo", "--last", "1"]);
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stdout).expect("error json");
    assert_eq!(err["error"], "conflict");
    let message = err["message"].as_str().expect("message");
    assert!(message.contains("notes.txt: line 4 changed after changeset"), "{message}");
    assert_eq!(fs::read_to_string(&file).expect("read"), "zero\none\ntwo\n3!\nfour\nFIVE\n", "nothing changed");
}

#[test]
fn two_processes_writing_at_once_lose_no_record() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    let per = 30;
    std::thread::scope(|s| {
        for w in 0..2 {
            let (state, root) = (state.path(), root.as_path());
            s.spawn(move || {
                for i in 0..per {
                    let args = json!({"path": format!("w{w}/f{i}.txt"), "content": format!("{w} {i}\n")});
                    ok(&call(state, root, "write_file", &args));
                }
            });
        }
    });
    let listed = history(state.path(), &root, &[]);
    let list = listed["changesets"].as_array().expect("list");
    assert_eq!(list.len(), 2 * per);
    let mut ids: Vec<u64> = list.iter().map(|c| c["id"].as_str().expect("id").parse().expect("number")).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=2 * per as u64).collect::<Vec<_>>(), "every id once");
    let mut paths: Vec<&str> = list.iter().map(|c| c["files"][0]["path"].as_str().expect("path")).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), 2 * per, "every write recorded once");
}

/// `tether call TOOL -` with `args` on standard input (too long for a command line) and a
/// journal bound of 1 MiB.
fn call_bounded(state: &Path, root: &Path, tool: &str, args: &Value) -> Output {
    let mut child = Command::new(BIN)
        .args(["call", tool, "-", "--journal-max-mib", "1", "--root"])
        .arg(root)
        .env(crate::lsp_support::STATE_VAR, state)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .wine_safe_spawn()
        .expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), args.to_string().as_bytes()).expect("args");
    child.wait_with_output().expect("wait")
}

#[test]
fn a_journal_at_its_bound_drops_the_oldest() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    // Each write keeps about 300 KB of new contents; a 1 MiB journal holds three or so.
    for i in 0..8 {
        let content = format!("{i}\n").repeat(150_000);
        ok(&call_bounded(
            state.path(),
            &root,
            "write_file",
            &json!({"path": format!("big{i}.txt"), "content": content}),
        ));
    }
    let listed = history(state.path(), &root, &[]);
    let ids: Vec<&str> =
        listed["changesets"].as_array().expect("list").iter().map(|c| c["id"].as_str().expect("id")).collect();
    assert!(ids.len() >= 2 && ids.len() < 8, "kept {ids:?}");
    assert_eq!(ids[0], "8", "the newest is kept");
    assert!(!ids.contains(&"1"), "the oldest is dropped: {ids:?}");
    let out = tether(state.path(), &root, &["history", "1"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("not_found"), "{out:?}");
    // What the journal holds on disk stays near the bound: the dropped changesets' blobs went too.
    let journal =
        fs::read_dir(state.path().join("tether/journal")).expect("journal").next().expect("root").expect("dir").path();
    let size: u64 = ["changes", "blobs"]
        .iter()
        .flat_map(|d| fs::read_dir(journal.join(d)).expect("dir"))
        .map(|e| e.expect("entry").metadata().expect("meta").len())
        .sum();
    assert!(size <= 1024 * 1024, "{size} bytes kept");
}

#[test]
fn a_stale_edit_is_told_what_changed_and_by_whom() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    fs::write(root.join("a.py"), "def f():\n    return 1\n").expect("write");
    let read = ok(&call(state.path(), &root, "read_file", &json!({"path": "a.py"})));
    let version = read.trim_end().rsplit("[version: ").next().expect("version").trim_end_matches(']').to_owned();
    assert_eq!(version.len(), 12, "{read}");
    // Unchanged: the edit goes through.
    ok(&call(
        state.path(),
        &root,
        "edit_file",
        &json!({"path": "a.py", "old_string": "1", "new_string": "2", "version": version}),
    ));
    // Changed by tether since that read: refused, naming the changeset, with the diff.
    let out = call(
        state.path(),
        &root,
        "edit_file",
        &json!({"path": "a.py", "old_string": "def", "new_string": "async def", "version": version}),
    );
    let err: Value = serde_json::from_slice(&out.stdout).expect("error");
    assert_eq!(err["error"], "conflict");
    let message = err["message"].as_str().expect("message");
    assert!(message.contains("changed since you read it"), "{message}");
    assert!(message.contains("changeset 1 (edit_file by cli"), "{message}");
    assert!(message.contains("-    return 1\n+    return 2"), "{message}");
    assert_eq!(fs::read_to_string(root.join("a.py")).expect("read"), "def f():\n    return 2\n");
    // Changed outside tether: said so, still with the diff; `changes_since` answers the same.
    let read = ok(&call(state.path(), &root, "read_file", &json!({"path": "a.py"})));
    let version = read.trim_end().rsplit("[version: ").next().expect("version").trim_end_matches(']').to_owned();
    fs::write(root.join("a.py"), "def f():\n    return 3\n").expect("user");
    let since: Value = serde_json::from_str(&ok(&call(
        state.path(),
        &root,
        "changes_since",
        &json!({"path": "a.py", "version": version}),
    )))
    .expect("json");
    assert_eq!(since["changed"], true);
    assert!(since["diff"].as_str().expect("diff").contains("+    return 3"), "{since}");
    assert_eq!(since["changesets"], json!([]));
    let out = call(
        state.path(),
        &root,
        "edit_file",
        &json!({"path": "a.py", "old_string": "def", "new_string": "async def", "version": version}),
    );
    let message =
        serde_json::from_slice::<Value>(&out.stdout).expect("error")["message"].as_str().expect("m").to_owned();
    assert!(message.contains("not by tether"), "{message}");
}

#[test]
fn history_filters_by_path_client_and_time() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    ok(&call(state.path(), &root, "write_file", &json!({"path": "a.txt", "content": "a\n"})));
    ok(&call(state.path(), &root, "write_file", &json!({"path": "b.txt", "content": "b\n"})));
    let only_a = history(state.path(), &root, &["--path", "a.txt"]);
    assert_eq!(only_a["changesets"].as_array().expect("list").len(), 1);
    assert_eq!(only_a["changesets"][0]["files"][0]["path"], "a.txt");
    assert_eq!(history(state.path(), &root, &["--client", "CL"])["changesets"].as_array().expect("list").len(), 2);
    assert_eq!(history(state.path(), &root, &["--client", "claude"])["changesets"], json!([]));
    assert_eq!(history(state.path(), &root, &["--since", "1h"])["changesets"].as_array().expect("list").len(), 2);
    assert_eq!(
        history(state.path(), &root, &["--since", "2000-01-01T00:00:00Z"])["changesets"].as_array().expect("l").len(),
        2
    );
    let out = tether(state.path(), &root, &["history", "--since", "yesterday-ish"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("invalid_input"), "{out:?}");
    // The tools are not served when the journal is off.
    let out = tether(state.path(), &root, &["call", "history", "{}", "--no-journal"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// The files of the one root's journal directory `part` (`blobs`, `changes`) under `state`.
fn journal_files(state: &Path, part: &str) -> Vec<std::path::PathBuf> {
    let journal =
        fs::read_dir(state.join("tether/journal")).expect("journal").next().expect("root").expect("dir").path();
    fs::read_dir(journal.join(part)).expect("part").map(|e| e.expect("entry").path()).collect()
}

#[test]
fn edits_of_a_kept_file_are_kept_as_deltas_and_undo_through_them_byte_for_byte() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    let file = root.join("big.txt");
    // A BOM and CRLF lines, so that the deltas' offsets count the BOM and keep the line ends.
    let original: String = format!("\u{feff}{}", (0..20_000).map(|i| format!("line {i}\r\n")).collect::<String>());
    fs::write(&file, &original).expect("write");
    let rounds = 40;
    for i in 0..rounds {
        let (old, new) = (format!("line {}\r\n", i * 100), format!("edited {i}\r\nand a line\r\n"));
        ok(&call(state.path(), &root, "edit_file", &json!({"path": "big.txt", "old_string": old, "new_string": new})));
    }
    let edited = fs::read(&file).expect("read");
    let blobs = journal_files(state.path(), "blobs");
    let whole = blobs.iter().filter(|p| p.extension().is_none()).count();
    let deltas: Vec<_> = blobs.iter().filter(|p| p.extension().is_some_and(|e| e == "d")).collect();
    // The first edit keeps the new text whole (the journal had no copy of the old one); each
    // later one only what it changed, until the chain is 32 deep and a copy is kept whole again.
    assert_eq!(whole, 2, "{blobs:?}");
    assert_eq!(deltas.len(), rounds - 2, "{blobs:?}");
    assert!(deltas.iter().all(|d| fs::metadata(d).expect("meta").len() < 1000), "a delta holds the change only");
    // History shows a change from its texts rebuilt through the deltas.
    let listed = history(state.path(), &root, &[]);
    let newest = listed["changesets"][0]["id"].as_str().expect("id").to_owned();
    let shown = ok(&tether(state.path(), &root, &["history", &newest]));
    assert!(shown.contains(&format!("+edited {}", rounds - 1)), "{shown}");
    // Undone one at a time, newest first, each through the texts the deltas rebuild.
    for _ in 0..rounds {
        ok(&tether(state.path(), &root, &["undo", "--last", "1"]));
    }
    assert_eq!(fs::read_to_string(&file).expect("read"), original, "every edit undone, byte for byte");
    assert_ne!(edited, original.as_bytes());
}

#[test]
fn a_damaged_delta_is_refused_not_rebuilt_wrong() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    let file = root.join("notes.txt");
    fs::write(&file, "one\ntwo\nthree\n").expect("write");
    for (old, new) in [("one", "ONE"), ("two", "TWO")] {
        ok(&call(
            state.path(),
            &root,
            "edit_file",
            &json!({"path": "notes.txt", "old_string": old, "new_string": new}),
        ));
    }
    let blobs = journal_files(state.path(), "blobs");
    let delta = blobs.iter().find(|p| p.extension().is_some_and(|e| e == "d")).expect("the second edit's delta");
    let damaged = fs::read_to_string(delta).expect("read").replace("TWO", "TW0");
    fs::write(delta, damaged).expect("damage");
    fs::write(&file, "ONE\nTWO\nthree\nfour\n").expect("a later change, so that undo needs the recorded text");
    let out = tether(state.path(), &root, &["undo", "--last", "1"]);
    assert!(!out.status.success(), "{out:?}");
    let err: Value = serde_json::from_slice(&out.stdout).expect("error json");
    assert!(err["message"].as_str().expect("message").contains("does not match its hash"), "{err}");
    assert_eq!(fs::read_to_string(&file).expect("read"), "ONE\nTWO\nthree\nfour\n", "nothing changed");
}

#[test]
fn a_pruned_changeset_keeps_the_blob_later_deltas_start_from() {
    let (state, dir) = (tempfile::tempdir().expect("state"), tempfile::tempdir().expect("root"));
    let root = dir.path().canonicalize().expect("canonical");
    let file = root.join("big.txt");
    fs::write(&file, (0..30_000).map(|i| format!("line {i}\n")).collect::<String>()).expect("write");
    let mut before_last = String::new();
    for i in 0..8 {
        before_last = fs::read_to_string(&file).expect("read");
        let args =
            json!({"path": "big.txt", "old_string": format!("line {}\n", i * 10), "new_string": format!("edit {i}\n")});
        ok(&call_bounded(state.path(), &root, "edit_file", &args));
        // Another file's whole new text in each round fills the 1 MiB journal, so the oldest
        // changesets (the first edit's among them, the one that kept big.txt whole) are dropped.
        let args = json!({"path": format!("other{i}.txt"), "content": format!("{i}\n").repeat(150_000)});
        ok(&call_bounded(state.path(), &root, "write_file", &args));
    }
    // A blob younger than a minute is never pruned (a writer may be about to name it): these
    // are made older, and one more change makes the journal prune.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    for blob in journal_files(state.path(), "blobs") {
        fs::File::options().append(true).open(&blob).and_then(|f| f.set_modified(old)).expect("age");
    }
    let args = json!({"path": "other8.txt", "content": "8\n".repeat(150_000)});
    ok(&call_bounded(state.path(), &root, "write_file", &args));
    let listed = history(state.path(), &root, &[]);
    let ids: Vec<&str> =
        listed["changesets"].as_array().expect("list").iter().map(|c| c["id"].as_str().expect("id")).collect();
    assert!(!ids.contains(&"1"), "the first edit's changeset was dropped: {ids:?}");
    // The newest edit's text is rebuilt from the first edit's blob through seven deltas.
    ok(&tether(state.path(), &root, &["undo", "--last", "3"]));
    assert_eq!(fs::read_to_string(&file).expect("read"), before_last);
    assert!(!root.join("other7.txt").exists());
}
