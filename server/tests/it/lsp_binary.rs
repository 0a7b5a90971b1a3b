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
async fn the_binary_exits_with_1_when_the_editor_leaves_without_shutdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, stdin, stdout) = spawn_lsp(&[], &[], Stdio::null());
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let s = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    s.client.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = tokio::time::timeout(PATIENCE, child.wait()).await.expect("exits in time").expect("status");
    assert_eq!(status.code(), Some(1));
}
