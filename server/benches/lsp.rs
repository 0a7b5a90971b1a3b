//! `tether lsp` figures: the cost of a `didChange` in a large document, a tool edit on a large open
//! document from request to applied-and-verified, and the size of the `workspace/applyEdit` a
//! small change sends. Run with `cargo bench --bench lsp`; BENCHMARKS.md quotes its output.
//!
//! The end-to-end figures drive the real `tether lsp` binary over its stdio pipes with a minimal
//! scripted editor that keeps its buffer in a rope, applies each `workspace/applyEdit`, reports it
//! with an incremental `didChange` before answering (as VS Code does), and never saves. Every
//! figure comes with a peer measured in the same run, since the machine is shared and noisy.

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ropey::Rope;
use serde_json::{json, Value};
use tether::text::{Document, Position, PositionEncoding};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

const MIB: usize = 1024 * 1024;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    println!("tether lsp benchmarks (medians; the peer is measured in the same run)\n");
    did_change_in_process();
    rt.block_on(end_to_end());
}

/// A document of about `size` bytes: numbered lines, some with non-ASCII text, each unique.
fn document(size: usize) -> String {
    let mut s = String::with_capacity(size + 128);
    let mut i = 0;
    while s.len() < size {
        if i % 100 == 0 {
            s.push_str(&format!("line {i:07}: caf\u{e9} \u{1F600} \u{4E2D}\u{6587} consectetur adipiscing elit\n"));
        } else {
            s.push_str(&format!("line {i:07}: lorem ipsum dolor sit amet, consectetur adipiscing elit\n"));
        }
        i += 1;
    }
    s
}

/// A small deterministic generator, so that every run inserts at the same places.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 10_000 {
        format!("{:.2} µs", ns as f64 / 1e3)
    } else if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

/// The document store's work for one single-character `didChange`: the position conversion and
/// the rope edit, against inserting into a plain `String` of the same size.
fn did_change_in_process() {
    let text = document(20 * MIB);
    let mut doc = Document::from_text(&text);
    let lines = doc.rope().len_lines() - 1;
    let mut rng = Lcg(7);
    let samples = 20_000;
    let mut rope_times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let line = rng.below(lines);
        let pos = Position { line: line as u32, character: rng.below(40) as u32 };
        let start = Instant::now();
        doc.apply_change(Some((pos, pos)), "x", PositionEncoding::Utf16);
        rope_times.push(start.elapsed());
    }
    let mut plain = text.clone();
    let mut string_times = Vec::with_capacity(500);
    for _ in 0..500 {
        let mut at = rng.below(plain.len());
        while !plain.is_char_boundary(at) {
            at -= 1;
        }
        let start = Instant::now();
        plain.insert(at, 'x');
        string_times.push(start.elapsed());
    }
    let (rope, string) = (median(rope_times), median(string_times));
    println!("didChange, one character into a 20 MiB document (utf-16 positions), in process:");
    println!("  tether's rope store      {:>10}  (median of {samples})", fmt(rope));
    println!("  peer: a plain String     {:>10}  (median of 500)", fmt(string));
    println!("  ratio                    {:>10.0}x faster\n", string.as_secs_f64() / rope.as_secs_f64());
}

/// A minimal editor talking to the real `tether lsp` binary.
struct Editor {
    out: mpsc::UnboundedSender<Value>,
    pending: Arc<Mutex<HashMap<i64, oneshot::Sender<Value>>>>,
    next_id: AtomicI64,
    /// The open buffers (URI → text and version).
    buffers: Arc<Mutex<HashMap<String, (Rope, i32)>>>,
    /// The byte size of every `workspace/applyEdit` message received.
    apply_sizes: Arc<Mutex<Vec<usize>>>,
    child: tokio::process::Child,
}

impl Editor {
    async fn start(root: &Path) -> Editor {
        // TETHER_BENCH_BIN measures another build (an older commit's, say) with this same bench.
        let bin = std::env::var_os("TETHER_BENCH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_tether").into());
        let mut child = tokio::process::Command::new(bin)
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn tether lsp");
        let mut stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (out, mut out_rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            while let Some(msg) = out_rx.recv().await {
                let body = serde_json::to_vec(&msg).expect("json");
                let frame = [format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes(), body].concat();
                if stdin.write_all(&frame).await.is_err() {
                    break;
                }
            }
        });
        let editor = Editor {
            out,
            pending: Arc::default(),
            next_id: AtomicI64::new(1),
            buffers: Arc::default(),
            apply_sizes: Arc::default(),
            child,
        };
        editor.spawn_reader(stdout);
        let uri = url(root);
        editor
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": "bench"}],
                    "capabilities": {
                        "general": {"positionEncodings": ["utf-16"]},
                        "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
                    },
                }),
            )
            .await;
        editor.notify("initialized", json!({}));
        editor
    }

    fn spawn_reader(&self, stdout: tokio::process::ChildStdout) {
        let (pending, buffers, sizes, out) =
            (self.pending.clone(), self.buffers.clone(), self.apply_sizes.clone(), self.out.clone());
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        len = n.parse().expect("length");
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).await.expect("body");
                let msg: Value = serde_json::from_slice(&body).expect("json");
                match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
                    (Some("workspace/applyEdit"), Some(id)) => {
                        sizes.lock().expect("lock").push(len);
                        for note in apply(&buffers, &msg["params"]["edit"]) {
                            let _ = out.send(note);
                        }
                        let _ = out.send(json!({"jsonrpc": "2.0", "id": id, "result": {"applied": true}}));
                    }
                    (Some(_), Some(id)) => {
                        let _ = out.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
                    }
                    (Some(_), None) => {}
                    (None, Some(id)) => {
                        let waiter = id.as_i64().and_then(|id| pending.lock().expect("lock").remove(&id));
                        if let Some(tx) = waiter {
                            let _ = tx.send(msg);
                        }
                    }
                    (None, None) => {}
                }
            }
        });
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("lock").insert(id, tx);
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        let _ = self.out.send(msg);
        let answer = tokio::time::timeout(Duration::from_secs(60), rx).await.expect("answer in time").expect("answer");
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    fn notify(&self, method: &str, params: Value) {
        let _ = self.out.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn open(&self, uri: &str, text: &str) {
        self.buffers.lock().expect("lock").insert(uri.to_owned(), (Rope::from_str(text), 1));
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "text", "version": 1, "text": text}}),
        );
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        let result = self
            .request(
                "workspace/executeCommand",
                json!({"command": "tether.callTool", "arguments": [{"tool": tool, "arguments": arguments}]}),
            )
            .await;
        assert_eq!(result["isError"], false, "{tool} failed: {result}");
        result
    }

    async fn stop(mut self) {
        self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Applies a workspace edit's text edits to the buffers; returns one `didChange` per buffer.
fn apply(buffers: &Mutex<HashMap<String, (Rope, i32)>>, edit: &Value) -> Vec<Value> {
    let mut buffers = buffers.lock().expect("lock");
    let mut notes = Vec::new();
    for doc_edit in edit["documentChanges"].as_array().into_iter().flatten() {
        let uri = doc_edit["textDocument"]["uri"].as_str().expect("uri");
        let Some((rope, version)) = buffers.get_mut(uri) else { continue };
        let mut edits: Vec<&Value> = doc_edit["edits"].as_array().expect("edits").iter().collect();
        edits.sort_by_key(|e| {
            std::cmp::Reverse((e["range"]["start"]["line"].as_u64(), e["range"]["start"]["character"].as_u64()))
        });
        let mut changes = Vec::new();
        for e in edits {
            let start = char_index(rope, &e["range"]["start"]);
            let end = char_index(rope, &e["range"]["end"]);
            rope.remove(start..end);
            rope.insert(start, e["newText"].as_str().expect("newText"));
            changes.push(json!({"range": e["range"], "text": e["newText"]}));
        }
        *version += 1;
        notes.push(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": *version}, "contentChanges": changes}}));
    }
    notes
}

/// The char index of a utf-16 LSP position.
fn char_index(rope: &Rope, pos: &Value) -> usize {
    let line = pos["line"].as_u64().expect("line") as usize;
    let character = pos["character"].as_u64().expect("character") as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let start_u16 = rope.char_to_utf16_cu(start);
    rope.utf16_cu_to_char(start_u16 + character)
}

async fn end_to_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("root");
    let big = document(20 * MIB);
    let marker_line = big.len() / 2;
    let at = big[marker_line..].find('\n').expect("a line") + marker_line + 1;
    // Indented past where the burst below inserts, so that the marker stays whole.
    let big = format!("{}                        MARKER_A\n{}", &big[..at], &big[at..]);
    std::fs::write(root.join("open.txt"), &big).expect("write");
    std::fs::write(root.join("closed.txt"), &big).expect("write");
    let editor = Editor::start(&root).await;
    // Opened with an unsaved line, so that the buffer stays dirty and no save is measured.
    let open_uri = url(&root.join("open.txt"));
    editor.open(&open_uri, &format!("{big}unsaved\n"));

    // didChange over the real transport: a burst, then one round trip to know all were applied.
    // First a round trip that makes sure the 20 MiB didOpen is behind us.
    editor.request("workspace/executeCommand", json!({"command": "tether.listTools", "arguments": []})).await;
    let n = 5_000;
    let mut rng = Lcg(11);
    let lines = big.lines().count();
    let start = Instant::now();
    for i in 0..n {
        let pos = json!({"line": rng.below(lines), "character": rng.below(20)});
        editor.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": open_uri, "version": i + 2},
                   "contentChanges": [{"range": {"start": pos, "end": pos}, "text": "x"}]}),
        );
    }
    editor.request("workspace/executeCommand", json!({"command": "tether.listTools", "arguments": []})).await;
    let burst = start.elapsed();
    let copy = editor.request("tether/debugDocument", json!({"uri": open_uri})).await;
    assert_eq!(copy["version"], n + 1, "every change applied");
    // The editor's copy must match what the server now holds for the edit benchmark below.
    let server_text = copy["text"].as_str().expect("text").to_owned();
    editor.buffers.lock().expect("lock").insert(open_uri.clone(), (Rope::from_str(&server_text), n + 1));
    println!("didChange over the real stdio transport (JSON-RPC decode, dispatch, store), 20 MiB document:");
    println!(
        "  {n} single-character changes then one round trip: {} in all, {} per change\n",
        fmt(burst),
        fmt(burst / n.unsigned_abs())
    );

    // A tool edit on the open 20 MiB document, request to applied-and-verified, against the same
    // tool on a closed file of the same size (the disk sink) in the same server.
    let samples = 21;
    let mut open_times = Vec::new();
    let mut closed_times = Vec::new();
    for i in 0..samples + 2 {
        let (old, new) = if i % 2 == 0 { ("MARKER_A", "MARKER_B") } else { ("MARKER_B", "MARKER_A") };
        let t = Instant::now();
        let r = editor.call("edit_file", json!({"path": "open.txt", "old_string": old, "new_string": new})).await;
        let open = t.elapsed();
        assert!(r["content"][0]["text"].as_str().unwrap_or_default().contains("unsaved"), "{r}");
        let t = Instant::now();
        editor.call("edit_file", json!({"path": "closed.txt", "old_string": old, "new_string": new})).await;
        let closed = t.elapsed();
        if i >= 2 {
            open_times.push(open);
            closed_times.push(closed);
        }
    }
    let (open, closed) = (median(open_times), median(closed_times));
    println!("edit_file on a 20 MiB document, request to answer (median of {samples}):");
    println!("  open buffer: applyEdit, didChange, verified  {:>10}", fmt(open));
    println!("  peer: closed file through the disk sink      {:>10}", fmt(closed));
    println!("  ratio                                        {:>10.2}x\n", closed.as_secs_f64() / open.as_secs_f64());

    // The payload of a whole-file write_file that changes one line of an open 1 MiB document.
    let small = document(MIB);
    let small_uri = url(&root.join("small.txt"));
    std::fs::write(root.join("small.txt"), &small).expect("write");
    editor.open(&small_uri, &small);
    let changed = small.replacen("line 0005000:", "line 0005000 (edited):", 1);
    assert_ne!(changed, small);
    editor.apply_sizes.lock().expect("lock").clear();
    editor.call("write_file", json!({"path": "small.txt", "content": changed})).await;
    let sizes = editor.apply_sizes.lock().expect("lock").clone();
    let buffer = editor.buffers.lock().expect("lock")[&small_uri].0.to_string();
    assert_eq!(buffer, changed, "the edit landed");
    println!("workspace/applyEdit for write_file changing one line of an open 1 MiB document:");
    println!("  message size             {:>10} bytes ({} message)", sizes.iter().sum::<usize>(), sizes.len());
    println!("  peer: the whole new text {:>10} bytes\n", changed.len());
    editor.stop().await;
}
