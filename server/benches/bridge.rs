//! The bridge's cost: `read_file` of a 50 KiB file through a `tether mcp` attached to a real
//! `tether lsp`, against the same call through a standalone `tether mcp`, both driven by an rmcp
//! client over the child's stdio and measured alternately in the same run; then the same three
//! ways for a 20 MiB file, where copies of the text would show. Run with
//! `cargo bench --bench bridge` (`TETHER_BENCH_BIN` measures another build of tether with this
//! same bench). Target: the attached call adds under 1 ms (median).

#![allow(clippy::print_stdout)] // A benchmark reports on stdout.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const SAMPLES: usize = 401;
const LARGE_SAMPLES: usize = 21;

/// The tether binary measured: this build's, or `TETHER_BENCH_BIN`.
fn bin() -> std::ffi::OsString {
    std::env::var_os("TETHER_BENCH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_tether").into())
}

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

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Medians of `samples` reads after `warmup`, alternating: the file on disk through the
/// standalone server, the same through the attached one, and the open buffer through it.
async fn three_ways(
    standalone: &RunningService<RoleClient, ()>,
    attached: &RunningService<RoleClient, ()>,
    disk: Value,
    open: Value,
    warmup: usize,
    samples: usize,
) -> (Duration, Duration, Duration) {
    let (mut alone, mut via_disk, mut via_buffer) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..samples + warmup {
        let a = read_with(standalone, disk.clone()).await.0;
        let b = read_with(attached, disk.clone()).await.0;
        let c = read_with(attached, open.clone()).await.0;
        if i >= warmup {
            alone.push(a);
            via_disk.push(b);
            via_buffer.push(c);
        }
    }
    (median(alone), median(via_disk), median(via_buffer))
}

/// Prints the three medians of [`three_ways`] with what the attached server adds.
fn report(title: &str, (a, b, c): (Duration, Duration, Duration), unit: fn(Duration) -> String) {
    println!("{title}:");
    println!("  standalone tether mcp, file on disk:              {}", unit(a));
    println!("  tether mcp attached to tether lsp, file on disk:  {}  (+{})", unit(b), unit(b.saturating_sub(a)));
    println!("  tether mcp attached to tether lsp, open buffer:   {}  (+{})", unit(c), unit(c.saturating_sub(a)));
}

/// About `size` bytes of numbered lines.
fn document(size: usize) -> String {
    let mut text = String::with_capacity(size + 100);
    let mut i = 0;
    while text.len() < size {
        text.push_str(&format!("line {i:07}: lorem ipsum dolor sit amet, consectetur adipiscing elit\n"));
        i += 1;
    }
    text
}

/// A framed LSP message.
fn frame(msg: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(msg).expect("json");
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

/// A `tether mcp` on `root`, and its process (killed when dropped).
async fn mcp(root: &Path, runtime: &Path, attach: &str) -> (RunningService<RoleClient, ()>, tokio::process::Child) {
    let mut child = tokio::process::Command::new(bin())
        .arg("mcp")
        .arg("--root")
        .arg(root)
        .args(["--attach", attach])
        .env("XDG_RUNTIME_DIR", runtime)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn tether mcp");
    let (stdout, stdin) = (child.stdout.take().expect("stdout"), child.stdin.take().expect("stdin"));
    // The 20 MiB page is a message over rmcp's default line limit (16 MiB).
    let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(64 << 20);
    (().serve(transport).await.expect("initialize"), child)
}

async fn read(client: &RunningService<RoleClient, ()>, path: &str) -> (Duration, String) {
    read_with(client, json!({"path": path})).await
}

async fn read_with(client: &RunningService<RoleClient, ()>, args: Value) -> (Duration, String) {
    let Value::Object(args) = args else { unreachable!() };
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
    let text = document(50 * 1024);
    let large = document(20 << 20);
    std::fs::write(root.join("disk.txt"), &text).expect("write");
    std::fs::write(root.join("open.txt"), &text).expect("write");
    std::fs::write(root.join("large-disk.txt"), &large).expect("write");
    std::fs::write(root.join("large-open.txt"), &large).expect("write");

    // A `tether lsp` with the folder open and `open.txt` in a buffer (one unsaved line).
    let mut lsp = tokio::process::Command::new(bin())
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
    let open = |p: &str, text: &str| {
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri(p), "languageId": "text", "version": 1, "text": format!("{text}unsaved\n")}}})
    };
    stdin.write_all(&frame(&init)).await.expect("write");
    tokio::time::timeout(Duration::from_secs(30), initialized_rx).await.expect("initialized").expect("answer");
    for m in [initialized, open("open.txt", &text), open("large-open.txt", &large)] {
        stdin.write_all(&frame(&m)).await.expect("write");
    }
    let discovery = runtime.path().join("tether").join(format!("{}.json", lsp.id().expect("pid")));
    let start = Instant::now();
    while !discovery.exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "tether lsp never published its discovery file");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let (standalone, _standalone_process) = mcp(&root, runtime.path(), "never").await;
    let (attached, _attached_process) = mcp(&root, runtime.path(), "auto").await;
    assert!(read(&attached, "open.txt").await.1.contains("unsaved"), "attached");
    assert!(!read(&standalone, "open.txt").await.1.contains("unsaved"), "standalone");

    let small = |p: &str| json!({"path": p});
    let times = three_ways(&standalone, &attached, small("disk.txt"), small("open.txt"), 20, SAMPLES).await;
    report(
        &format!("read_file of a 50 KiB file, request to answer over stdio (median of {SAMPLES}, alternating)"),
        times,
        us,
    );
    println!("  target: under 1 ms added\n");

    // The whole 20 MiB file in one page: over the limit for a read without `offset`/`limit`.
    let page = |p: &str| json!({"path": p, "offset": 1, "limit": 1_000_000});
    let large_open = read_with(&attached, page("large-open.txt")).await.1;
    assert!(large_open.contains("unsaved") && large_open.len() > 20 << 20, "attached, large buffer");
    let times =
        three_ways(&standalone, &attached, page("large-disk.txt"), page("large-open.txt"), 2, LARGE_SAMPLES).await;
    report(&format!("read_file of a 20 MiB file in one page (median of {LARGE_SAMPLES}, alternating)"), times, ms);
    standalone.cancel().await.expect("close");
    attached.cancel().await.expect("close");
}
