//! Many writers, one truth: separate `tether mcp` and `tether call` processes changing different
//! lines of the same files. Every change answered as applied is in the files exactly once, and no
//! change is refused as a conflict, since none overlaps another.

use std::collections::HashMap;
use std::process::Command;

use serde_json::{json, Value};

use crate::mcp_stdio::Server;

/// Processes, and `edit_file` calls each makes on the shared file.
const PROCESSES: usize = 8;
const EDITS: usize = 25;

fn line(p: usize, e: usize, state: &str) -> String {
    format!("process {p} edit {e}: {state}\n")
}

/// The text of a file holding every process's lines for `edits` edits, each `state`.
fn lines(edits: usize, state: impl Fn(usize, usize) -> &'static str) -> String {
    (0..edits).flat_map(|e| (0..PROCESSES).map(move |p| (p, e))).map(|(p, e)| line(p, e, state(p, e))).collect()
}

/// Whether a `tools/call` answer is an error, and its text.
fn outcome(reply: &Value) -> (bool, String) {
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (reply["result"]["isError"] != false, text)
}

#[test]
fn disjoint_edits_and_patches_from_many_processes_all_land_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::write(root.join("shared.txt"), lines(EDITS, |_, _| "old")).expect("write");
    for f in ["a.txt", "b.txt"] {
        std::fs::write(root.join(f), lines(1, |_, _| "old")).expect("write");
    }
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..PROCESSES)
            .map(|p| {
                let root = root.clone();
                s.spawn(move || {
                    let mut server = Server::start(&root);
                    let mut failed = Vec::new();
                    for e in 0..EDITS {
                        let args = json!({
                            "path": "shared.txt",
                            "old_string": line(p, e, "old"),
                            "new_string": line(p, e, "new"),
                        });
                        let (error, text) =
                            outcome(&server.ask("tools/call", json!({"name": "edit_file", "arguments": args})));
                        if error {
                            failed.push(format!("process {p} edit {e}: {text}"));
                        }
                    }
                    // One patch over two shared files, each hunk on this process's own line.
                    let hunk =
                        |f: &str| format!("*** Update File: {f}\n@@\n-{}+{}", line(p, 0, "old"), line(p, 0, "new"));
                    let patch = format!("*** Begin Patch\n{}{}*** End Patch\n", hunk("a.txt"), hunk("b.txt"));
                    let (error, text) = outcome(
                        &server.ask("tools/call", json!({"name": "apply_patch", "arguments": {"patch": patch}})),
                    );
                    if error {
                        failed.push(format!("process {p} patch: {text}"));
                    }
                    server.stop();
                    failed
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("worker")).collect()
    });
    assert_eq!(failures, Vec::<String>::new(), "no two changes overlap, so none may fail");
    assert_eq!(std::fs::read_to_string(root.join("shared.txt")).expect("read"), lines(EDITS, |_, _| "new"));
    for f in ["a.txt", "b.txt"] {
        assert_eq!(std::fs::read_to_string(root.join(f)).expect("read"), lines(1, |_, _| "new"), "{f}");
    }
}

/// `tether call` processes (a script, a CI job) racing on one file: each sets its own line.
#[test]
fn disjoint_edits_from_tether_call_processes_all_land_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let edits = 6;
    std::fs::write(root.join("shared.txt"), lines(edits, |_, _| "old")).expect("write");
    let state = tempfile::tempdir().expect("state");
    let results: HashMap<(usize, usize), (bool, String)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..PROCESSES)
            .map(|p| {
                let (root, state) = (root.clone(), state.path().to_owned());
                s.spawn(move || {
                    (0..edits)
                        .map(|e| {
                            let args = json!({"path": "shared.txt", "old_string": line(p, e, "old"), "new_string": line(p, e, "new")});
                            let out = Command::new(env!("CARGO_BIN_EXE_tether"))
                                .env("XDG_STATE_HOME", &state)
                                .args(["call", "edit_file", &args.to_string(), "--root"])
                                .arg(&root)
                                .output()
                                .expect("tether call");
                            let text = String::from_utf8_lossy(&out.stdout).into_owned();
                            ((p, e), (out.status.success(), text))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("worker")).collect()
    });
    let failed: Vec<_> = results.iter().filter(|(_, (ok, _))| !ok).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(std::fs::read_to_string(root.join("shared.txt")).expect("read"), lines(edits, |_, _| "new"));
    // The journal lists every change once: the processes shared it without losing a record.
    let listed = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env("XDG_STATE_HOME", state.path())
        .args(["history", "--json", "--limit", "1000", "--root"])
        .arg(&root)
        .output()
        .expect("tether history");
    let history: Value = serde_json::from_slice(&listed.stdout).expect("history JSON");
    let count = history["changesets"].as_array().map_or(0, Vec::len);
    assert_eq!(count, PROCESSES * edits, "{history}");
}
