//! The bridge's cost: `read_file` of a 50 KiB file through a `tether mcp` attached to a real
//! `tether lsp`, against the same call through a standalone `tether mcp`, both driven by an rmcp
//! client over the child's stdio and measured alternately in the same run. Run with
//! `cargo bench --bench bridge`. Target: the attached call adds under 1 ms (median).

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const BIN: &str = env!("CARGO_BIN_EXE_tether");
const SAMPLES: usize = 401;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    rt.block_on(run());
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_nanos() as f64 / 1e3)
}

/// A framed LSP message.
fn frame(msg: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(msg).expect("json");
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

async fn mcp(root: &Path, runtime: &Path, attach: &str) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("mcp").arg("--root").arg(root).args(["--attach", attach]).env("XDG_RUNTIME_DIR", runtime);
    let transport = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn").0;
    ().serve(transport).await.expect("initialize")
}

async fn read(client: &RunningService<RoleClient, ()>, path: &str) -> (Duration, String) {
    let Value::Object(args) = json!({"path": path}) else { unreachable!() };
    let t = Instant::now();
    let r = client.call_tool(CallToolRequestParams::new("read_file").with_arguments(args)).await.expect("call");
    let elapsed = t.elapsed();
    let text = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    (elapsed, text)
}

async fn run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = tempfile::tempdir().expect("runtime");
    let root = dir.path().canonicalize().expect("root");
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 50 * 1024 {
        text.push_str(&format!("line {i:05}: lorem ipsum dolor sit amet, consectetur adipiscing elit\n"));
        i += 1;
    }
    std::fs::write(root.join("disk.txt"), &text).expect("write");
    std::fs::write(root.join("open.txt"), &text).expect("write");

    // A `tether lsp` with the folder open and `open.txt` in a buffer (one unsaved line).
    let mut lsp = tokio::process::Command::new(BIN)
        .arg("lsp")
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn tether lsp");
    let mut stdin = lsp.stdin.take().expect("stdin");
    let mut stdout = lsp.stdout.take().expect("stdout");
    // Only the answer to `initialize` matters (the server drops notifications sent before it),
    // but the pipe must not fill up.
    let (initialized_tx, initialized_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut tx = Some(initialized_tx);
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = stdout.read(&mut buf).await {
            if String::from_utf8_lossy(&buf[..n]).contains("\"capabilities\"") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(());
                }
            }
        }
    });
    let uri = |p: &str| format!("file://{}", root.join(p).display());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": null, "rootUri": null, "capabilities": {},
        "workspaceFolders": [{"uri": format!("file://{}", root.display()), "name": "w"}]}});
    let initialized = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri("open.txt"), "languageId": "text", "version": 1, "text": format!("{text}unsaved\n")}}});
    stdin.write_all(&frame(&init)).await.expect("write");
    tokio::time::timeout(Duration::from_secs(30), initialized_rx).await.expect("initialized").expect("answer");
    for m in [initialized, open] {
        stdin.write_all(&frame(&m)).await.expect("write");
    }
    let discovery = runtime.path().join("tether").join(format!("{}.json", lsp.id().expect("pid")));
    let start = Instant::now();
    while !discovery.exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "tether lsp never published its discovery file");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let standalone = mcp(&root, runtime.path(), "never").await;
    let attached = mcp(&root, runtime.path(), "auto").await;
    assert!(read(&attached, "open.txt").await.1.contains("unsaved"), "attached");
    assert!(!read(&standalone, "open.txt").await.1.contains("unsaved"), "standalone");

    let (mut alone, mut via_disk, mut via_buffer) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..SAMPLES + 20 {
        let a = read(&standalone, "disk.txt").await.0;
        let b = read(&attached, "disk.txt").await.0;
        let c = read(&attached, "open.txt").await.0;
        if i >= 20 {
            alone.push(a);
            via_disk.push(b);
            via_buffer.push(c);
        }
    }
    let (a, b, c) = (median(alone), median(via_disk), median(via_buffer));
    println!("read_file of a 50 KiB file, request to answer over stdio (median of {SAMPLES}, alternating):");
    println!("  standalone tether mcp, file on disk:              {}", us(a));
    println!("  tether mcp attached to tether lsp, file on disk:  {}  (+{})", us(b), us(b.saturating_sub(a)));
    println!("  tether mcp attached to tether lsp, open buffer:   {}  (+{})", us(c), us(c.saturating_sub(a)));
    println!("  target: under 1 ms added");
    standalone.cancel().await.expect("close");
    attached.cancel().await.expect("close");
}
