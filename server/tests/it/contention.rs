//! Many writers, one truth: separate `tether mcp` and `tether call` processes changing different
//! lines of the same files. Every change answered as applied is in the files exactly once, and no
//! change is refused as a conflict, since none overlaps another.

use std::collections::HashMap;
use std::process::Command;

use serde_json::{json, Value};

use crate::lsp_support::WineSafe as _;
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
                                .env(crate::lsp_support::STATE_VAR, &state)
                                .args(["call", "edit_file", &args.to_string(), "--root"])
                                .arg(&root)
                                .wine_safe_output()
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
        .env(crate::lsp_support::STATE_VAR, state.path())
        .args(["history", "--json", "--limit", "1000", "--root"])
        .arg(&root)
        .wine_safe_output()
        .expect("tether history");
    let history: Value = serde_json::from_slice(&listed.stdout).expect("history JSON");
    let count = history["changesets"].as_array().map_or(0, Vec::len);
    assert_eq!(count, PROCESSES * edits, "{history}");
}

/// A `tether mcp` process with its pipes, for a test that kills it.
struct Writer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Writer {
    fn start(root: &std::path::Path, state: &std::path::Path) -> Writer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tether"))
            .env(crate::lsp_support::STATE_VAR, state)
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .wine_safe_spawn()
            .expect("spawn tether mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut w = Writer { child, stdin, stdout };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "crash", "version": "1"}});
        assert!(w.ask(0, "initialize", init).is_some(), "initialized");
        w
    }

    /// The answer to one request, or `None` once the process is gone.
    fn ask(&mut self, id: u64, method: &str, params: Value) -> Option<Value> {
        use std::io::{BufRead as _, Write as _};
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).ok()?;
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(n) if n > 0 => serde_json::from_str(&line).ok(),
            _ => None,
        }
    }
}

/// Four processes making up to 1,000 journaled edits between them are killed (SIGKILL) part-way:
/// every change answered before the kill is in its file and listed in history, no change is in a
/// file without its record (at most the one in flight per process, recorded or not, is in doubt),
/// and the newest can be undone.
#[test]
fn every_change_answered_before_a_kill_is_in_the_journal() {
    const WRITERS: usize = 4;
    const EACH: usize = 250;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let state = tempfile::tempdir().expect("state");
    let old = |p: usize, i: usize| format!("writer {p} line {i}: old\n");
    let new = |p: usize, i: usize| format!("writer {p} line {i}: new\n");
    for p in 0..WRITERS {
        std::fs::write(root.join(format!("f{p}.txt")), (0..EACH).map(|i| old(p, i)).collect::<String>())
            .expect("write");
    }
    let writers: Vec<Writer> = (0..WRITERS).map(|_| Writer::start(&root, state.path())).collect();
    let pids: Vec<u32> = writers.iter().map(|w| w.child.id()).collect();
    let answered = std::sync::atomic::AtomicUsize::new(0);
    let counts: Vec<usize> = std::thread::scope(|s| {
        let threads: Vec<_> = writers
            .into_iter()
            .enumerate()
            .map(|(p, mut w)| {
                let answered = &answered;
                s.spawn(move || {
                    let mut done = 0;
                    for i in 0..EACH {
                        let args =
                            json!({"path": format!("f{p}.txt"), "old_string": old(p, i), "new_string": new(p, i)});
                        match w.ask(i as u64 + 1, "tools/call", json!({"name": "edit_file", "arguments": args})) {
                            Some(r) => {
                                assert_eq!(r["result"]["isError"], false, "{r}");
                                done += 1;
                                answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            }
                            None => break,
                        }
                    }
                    let _ = w.child.wait();
                    done
                })
            })
            .collect();
        // Kill every writer once about a third of the edits were answered.
        let started = std::time::Instant::now();
        while answered.load(std::sync::atomic::Ordering::SeqCst) < WRITERS * EACH / 3
            && started.elapsed() < std::time::Duration::from_secs(120)
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        for pid in &pids {
            // SIGKILL, or on Windows TerminateProcess: no chance to finish anything.
            let _ = if cfg!(windows) {
                Command::new("taskkill").args(["/F", "/PID", &pid.to_string()]).wine_safe_output()
            } else {
                Command::new("kill").args(["-9", &pid.to_string()]).wine_safe_output()
            };
        }
        threads.into_iter().map(|t| t.join().expect("writer")).collect()
    });
    assert!(counts.iter().all(|&n| n < EACH), "the kill came part-way: {counts:?}");
    let listed = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env(crate::lsp_support::STATE_VAR, state.path())
        .args(["history", "--json", "--limit", "5000", "--root"])
        .arg(&root)
        .wine_safe_output()
        .expect("tether history");
    let history: Value = serde_json::from_slice(&listed.stdout).expect("history JSON");
    let changesets = history["changesets"].as_array().expect("changesets");
    for (p, &done) in counts.iter().enumerate() {
        let file = format!("f{p}.txt");
        let text = std::fs::read_to_string(root.join(&file)).expect("read");
        let in_file = (0..EACH).filter(|&i| text.contains(&new(p, i))).count();
        let recorded = changesets.iter().filter(|c| c["files"][0]["path"] == file.as_str()).count();
        // Every answered edit is in the file and recorded; the one in flight at the kill may be
        // in the file and recorded, in the file only (killed between write and record), or neither.
        assert!(in_file == done || in_file == done + 1, "{file}: {in_file} edits in the file, {done} answered");
        assert!(
            recorded == done || recorded == in_file,
            "{file}: {recorded} recorded, {done} answered, {in_file} in the file"
        );
    }
    let undo = Command::new(env!("CARGO_BIN_EXE_tether"))
        .env(crate::lsp_support::STATE_VAR, state.path())
        .args(["undo", "--last", "1", "--root"])
        .arg(&root)
        .wine_safe_output()
        .expect("tether undo");
    assert!(undo.status.success(), "{}", String::from_utf8_lossy(&undo.stdout));
}
