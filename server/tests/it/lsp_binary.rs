//! The real `tether lsp` binary over real pipes: initialize, unsaved reads, logs to stderr and
//! to the editor (`window/logMessage`), and a clean exit.

use std::process::Stdio;

use crate::lsp_support::{
    editor::did_change, editor_script, spawn_lsp, text, ChangeOrder, Init, Session, Strictness, PATIENCE,
};
use serde_json::json;
use tokio::io::AsyncReadExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_logs_and_exits() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "on disk\n").expect("write");
    let (mut child, stdin, stdout) = spawn_lsp(&["--log-level", "info"], &[], Stdio::piped());
    let mut stderr = child.stderr.take().expect("stderr");
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let s = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    assert_eq!(s.init["capabilities"]["positionEncoding"], "utf-8");

    s.open("a.txt", "in the buffer\n");
    let r = s.call("read_file", json!({"path": "a.txt"})).await.expect("result");
    assert!(text(&r).contains("in the buffer"), "{r}");

    // A change whose version goes backwards is refused, and the editor hears about it.
    s.client.send(did_change(&s.uri("a.txt"), 0, &[(None, "lost".into())]));
    s.client
        .wait_for("a logMessage warning", |n| {
            n.iter().any(|n| {
                n["method"] == "window/logMessage"
                    && n["params"]["type"] == 2
                    && n["params"]["message"].as_str().is_some_and(|m| m.contains("does not move forward"))
            })
        })
        .await;
    assert_eq!(s.server_copy("a.txt").await.map(|d| d.1).as_deref(), Some("in the buffer\n"));
    // Info goes to stderr only.
    assert!(s.client.notifications("window/logMessage").iter().all(|n| n["type"] != 3));

    let _ = s.client.request("shutdown", serde_json::Value::Null).await.expect("shutdown");
    s.client.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = tokio::time::timeout(PATIENCE, child.wait()).await.expect("exits in time").expect("status");
    assert!(status.success(), "{status}");
    let mut log = String::new();
    stderr.read_to_string(&mut log).await.expect("stderr");
    assert!(log.contains("does not move forward") && log.contains("initialized"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_and_exit_with_null_params_end_cleanly() {
    // Emacs's jsonrpc.el sends `"params": null` for methods without params; tower-lsp alone
    // answered `shutdown` with "Unexpected params: null" and `exit` then ended with status 1.
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, stdin, stdout) = spawn_lsp(&[], &[], Stdio::null());
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let s = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    let rx = s.client.send_request_as("shutdown", Some(serde_json::Value::Null));
    let answer = tokio::time::timeout(PATIENCE, rx).await.expect("answer in time").expect("answer");
    assert_eq!(answer.get("error"), None, "{answer}");
    assert_eq!(answer["result"], serde_json::Value::Null, "{answer}");
    s.client.send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    let status = tokio::time::timeout(PATIENCE, child.wait()).await.expect("exits in time").expect("status");
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exits_with_1_when_the_editor_leaves_without_shutdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, stdin, stdout) = spawn_lsp(&[], &[], Stdio::null());
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let s = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    s.client.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = tokio::time::timeout(PATIENCE, child.wait()).await.expect("exits in time").expect("status");
    assert_eq!(status.code(), Some(1));
}

/// `tether lsp` gives back the memory of large calls once it has been idle for a few seconds
/// (glibc only), as `tether mcp` does: an editor's sidecar lives as long as the editor, and three
/// 20 MiB reads left it about 110 MiB larger for good (each ran on a blocking-pool thread with an
/// allocator arena of its own, whose free top is never trimmed). What stays is tower-lsp's output
/// buffer, which keeps the capacity of the largest message written (about 27 MiB here).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_lsp_returns_the_memory_of_large_calls() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().expect("tempdir");
    let line = "a line of text that is neither short nor long, as most lines are\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat((20 << 20) / line.len())).expect("write");
    // A short idle period, and a long wait below: the release comes a period after the last
    // answer was written, however slowly a loaded machine writes it.
    let (child, stdin, stdout) =
        spawn_lsp(&[], &[("TETHER_IDLE_RELEASE_MS", std::path::Path::new("300"))], Stdio::null());
    let pid = child.id().expect("pid");
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let s = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    let before = rss_kib(pid);
    for _ in 0..3 {
        // A debug build on a loaded machine takes its time over 20 MiB: more than the client's
        // usual patience, which is not what this test is about.
        let args = json!([{"tool": "read_file", "arguments": {"path": "big.txt", "offset": 1, "limit": 1_000_000}}]);
        let answer =
            s.client.send_request("workspace/executeCommand", json!({"command": "tether.callTool", "arguments": args}));
        let r = tokio::time::timeout(Duration::from_secs(300), answer).await.expect("answered").expect("answer");
        assert!(r.get("error").is_none(), "{r}");
    }
    let busy = rss_kib(pid);
    let started = Instant::now();
    let idle = loop {
        let now = rss_kib(pid);
        if now < before + 40 * 1024 || started.elapsed() > Duration::from_secs(60) {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        idle < before + 40 * 1024,
        "idle for {:?}, still {idle} KiB resident (before the reads: {before} KiB, after: {busy} KiB)",
        started.elapsed()
    );
    drop(child);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a number")
}
