//! The bridge between the real binaries: a `tether lsp` child driven by a scripted editor, and
//! `tether mcp` attached to it through an rmcp client. Reads see the unsaved buffer, edits land
//! in it, and when the lsp dies the next call runs on disk. Connections without the token, with a
//! wrong one, or from another user are refused and the lsp keeps serving.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::lsp_support::{editor_script, spawn_lsp, ChangeOrder, Init, Session, Strictness, PATIENCE};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tower_lsp::lsp_types::Url;

const BIN: &str = env!("CARGO_BIN_EXE_tether");

/// A `tether lsp` child with its own runtime directory, and the scripted editor driving it.
struct Lsp {
    child: tokio::process::Child,
    session: Session,
    runtime: PathBuf,
}

/// A private `XDG_RUNTIME_DIR` for one test (tempfile makes it 0700).
fn runtime_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("runtime dir")
}

async fn start_lsp(files: &[(&str, &str)], runtime: &Path) -> Lsp {
    let dir = tempfile::tempdir().expect("workspace");
    for (path, text) in files {
        std::fs::write(dir.path().join(path), text).expect("write");
    }
    let (child, stdin, stdout) = spawn_lsp(&["--log-level", "info"], &[("XDG_RUNTIME_DIR", runtime)], Stdio::null());
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let session = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    let lsp = Lsp { child, session, runtime: runtime.to_owned() };
    wait_until("the discovery file", || lsp.discovery_file().exists()).await;
    lsp
}

impl Lsp {
    fn pid(&self) -> u32 {
        self.child.id().expect("running")
    }

    fn dir(&self) -> &Path {
        self.session.dir.path()
    }

    fn discovery_file(&self) -> PathBuf {
        self.runtime.join("tether").join(format!("{}.json", self.pid()))
    }

    fn discovery(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.discovery_file()).expect("read")).expect("json")
    }

    fn socket(&self) -> PathBuf {
        PathBuf::from(self.discovery()["socket"].as_str().expect("socket"))
    }

    fn token(&self) -> String {
        self.discovery()["token"].as_str().expect("token").to_owned()
    }

    /// The editor's copy of `rel`.
    fn buffer(&self, rel: &str) -> Option<String> {
        self.session.editor.buffer(&self.session.uri(rel)).map(|(_, t)| t)
    }

    /// Whether the lsp still answers its editor.
    async fn still_serves(&self) {
        let r = self.session.call("read_file", json!({"path": "a.txt"})).await.expect("callTool answered");
        assert_eq!(r["isError"], false, "{r}");
    }
}

async fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

type Mcp = RunningService<RoleClient, ()>;

/// `tether mcp` for `root`, finding lsps in `runtime`.
fn mcp_command(root: &Path, runtime: &Path, extra: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("mcp").arg("--root").arg(root).args(extra).env("XDG_RUNTIME_DIR", runtime).env_remove("TETHER_LOG");
    cmd.env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home());
    cmd
}

async fn start_mcp(root: &Path, runtime: &Path, extra: &[&str]) -> Mcp {
    let cmd = mcp_command(root, runtime, extra);
    let transport = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn tether mcp").0;
    ().serve(transport).await.expect("initialize")
}

/// Like [`start_mcp`], with a client that accepts replies of up to 64 MiB (rmcp's own limit is
/// 16 MiB).
async fn start_mcp_for_large_replies(root: &Path, runtime: &Path) -> (Mcp, tokio::process::Child) {
    let mut child = mcp_command(root, runtime, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn tether mcp");
    let (stdout, stdin) = (child.stdout.take().expect("stdout"), child.stdin.take().expect("stdin"));
    let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(64 << 20);
    (().serve(transport).await.expect("initialize"), child)
}

async fn call(mcp: &Mcp, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    mcp.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.expect("call")
}

fn body(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_calls_run_on_the_buffers_and_fall_back_to_disk_when_the_lsp_dies() {
    let runtime = runtime_dir();
    let mut lsp = start_lsp(&[("a.txt", "on disk\n"), ("b.txt", "b on disk\n")], runtime.path()).await;
    lsp.session.open("a.txt", "in the buffer\n");
    lsp.session.sync().await;
    let mcp = start_mcp(lsp.dir(), runtime.path(), &[]).await;

    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("in the buffer"), "{}", body(&r));
    let r = call(&mcp, "grep", json!({"pattern": "in the buffer"})).await;
    assert!(body(&r).contains("a.txt"), "{}", body(&r));

    let r =
        call(&mcp, "edit_file", json!({"path": "a.txt", "old_string": "in the buffer", "new_string": "edited"})).await;
    assert_ne!(r.is_error, Some(true), "{}", body(&r));
    assert!(body(&r).contains("a.txt: applied to the open editor buffer, which has unsaved changes"), "{}", body(&r));
    assert_eq!(lsp.buffer("a.txt").as_deref(), Some("edited\n"));
    assert_eq!(lsp.session.disk("a.txt"), "on disk\n", "a dirty buffer is not saved");

    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-edited\n+patched\n*** Update File: b.txt\n@@\n-b on disk\n+b patched\n*** End Patch\n";
    let r = call(&mcp, "apply_patch", json!({"patch": patch})).await;
    assert_ne!(r.is_error, Some(true), "{}", body(&r));
    assert!(body(&r).contains("b.txt: written to disk (not open in the editor)"), "{}", body(&r));
    assert_eq!(lsp.buffer("a.txt").as_deref(), Some("patched\n"));
    assert_eq!(lsp.session.disk("a.txt"), "on disk\n");
    assert_eq!(lsp.session.disk("b.txt"), "b patched\n");

    // The editor goes away without a word: the next call runs on disk, in the same session.
    lsp.child.kill().await.expect("kill");
    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("on disk"), "{}", body(&r));
    let r =
        call(&mcp, "edit_file", json!({"path": "a.txt", "old_string": "on disk", "new_string": "standalone"})).await;
    assert_ne!(r.is_error, Some(true), "{}", body(&r));
    assert_eq!(lsp.session.disk("a.txt"), "standalone\n");
    mcp.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tether_mcp_attaches_when_an_lsp_appears_and_never_when_told_not_to() {
    let runtime = runtime_dir();
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("a.txt"), "on disk\n").expect("write");
    let mcp = start_mcp(dir.path(), runtime.path(), &[]).await;
    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("on disk"), "{}", body(&r));

    // An editor opens the same folder; within a second or so calls reach its buffers.
    let mut lsp = start_lsp(&[], runtime.path()).await;
    let folder = lsp.dir().to_owned();
    std::fs::write(folder.join("a.txt"), "on disk\n").expect("write");
    lsp.session.open("a.txt", "in the buffer\n");
    lsp.session.sync().await;
    let mcp_there = start_mcp(&folder, runtime.path(), &[]).await;
    let never = start_mcp(&folder, runtime.path(), &["--attach", "never"]).await;
    let pinned = start_mcp(&folder, runtime.path(), &["--attach", &lsp.pid().to_string()]).await;
    let r = call(&never, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("on disk"), "--attach never reads the disk: {}", body(&r));
    let r = call(&pinned, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("in the buffer"), "--attach PID: {}", body(&r));

    // The first server started standalone for its own folder: it has nothing to attach to.
    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("on disk"), "{}", body(&r));

    // One that started first for the lsp's folder reattaches when a new lsp appears.
    lsp.child.kill().await.expect("kill");
    let r = call(&mcp_there, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("on disk"), "{}", body(&r));
    let lsp2 = start_lsp_in(&folder, runtime.path(), "second editor\n").await;
    assert_eq!(lsp2.discovery()["roots"], json!([folder.canonicalize().expect("canonical")]));
    let start = Instant::now();
    loop {
        let r = call(&mcp_there, "read_file", json!({"path": "a.txt"})).await;
        if body(&r).contains("second editor") {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "never reattached: {}", body(&r));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for m in [mcp, mcp_there, never, pinned] {
        m.cancel().await.expect("close");
    }
}

/// An lsp started with no folder that the editor then adds `folder` to (as
/// `didChangeWorkspaceFolders` does), with `a.txt` open in it holding `text`.
async fn start_lsp_in(folder: &Path, runtime: &Path, text: &str) -> Lsp {
    let (child, stdin, stdout) = spawn_lsp(&[], &[("XDG_RUNTIME_DIR", runtime)], Stdio::null());
    let unused = tempfile::tempdir().expect("dir");
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let session = Session::connect(stdout, stdin, unused, Init::neovim(), script, false).await;
    let lsp = Lsp { child, session, runtime: runtime.to_owned() };
    // No folder, no endpoint: the bridge waits for workspace roots.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!lsp.discovery_file().exists(), "an lsp without folders publishes nothing");
    let uri = Url::from_file_path(folder).expect("uri");
    lsp.session.client.send(json!({"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders",
        "params": {"event": {"added": [{"uri": uri, "name": "w"}], "removed": []}}}));
    let file = Url::from_file_path(folder.join("a.txt")).expect("uri");
    lsp.session.client.send(lsp.session.editor.open(&file, text, 1));
    lsp.session.sync().await;
    wait_until("the discovery file", || lsp.discovery_file().exists()).await;
    lsp
}

/// Connects to `socket`, sends `first`, and returns what came back before the server closed
/// (the server must close: a refusal gets no reply).
async fn refused(socket: &Path, first: &[u8]) -> Vec<u8> {
    let mut s = tokio::net::UnixStream::connect(socket).await.expect("connect");
    let _ = s.write_all(first).await;
    let mut got = Vec::new();
    tokio::time::timeout(PATIENCE, s.read_to_end(&mut got)).await.expect("the server closes").expect("read");
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_without_the_right_token_are_closed_without_a_reply() {
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n")], runtime.path()).await;
    let socket = lsp.socket();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});

    // MCP straight away, with no token line.
    assert_eq!(refused(&socket, format!("{initialize}\n").as_bytes()).await, b"");
    lsp.still_serves().await;
    // A wrong token, then MCP.
    let wrong = "0".repeat(64);
    let hello = json!({"token": wrong, "profile": "standard"});
    assert_eq!(refused(&socket, format!("{hello}\n{initialize}\n").as_bytes()).await, b"");
    lsp.still_serves().await;
    // The right token cut short, an over-long first line, and a line that never ends.
    let token = lsp.token();
    let short = json!({"token": &token[..63], "profile": "standard"});
    assert_eq!(refused(&socket, format!("{short}\n").as_bytes()).await, b"");
    assert_eq!(refused(&socket, &vec![b'x'; 4096]).await, b"");
    lsp.still_serves().await;

    // The right token is answered.
    let hello = json!({"token": token, "profile": "standard"});
    let mut s = tokio::net::UnixStream::connect(&socket).await.expect("connect");
    s.write_all(format!("{hello}\n{initialize}\n").as_bytes()).await.expect("write");
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(PATIENCE, s.read(&mut buf)).await.expect("answer").expect("read");
    let answer: Value = serde_json::from_slice(buf[..n].split(|b| *b == b'\n').next().expect("line")).expect("json");
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["serverInfo"]["name"], "tether", "{answer}");
}

/// Runs a Python client as `nobody` that connects to `socket` and sends `hello`; returns what it
/// printed: `connect-error <errno>`, `closed` (no reply) or `reply`.
fn as_nobody(socket: &Path, hello: &str) -> String {
    let script = r#"
import socket, sys
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}\n'
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect-error", e.errno); sys.exit()
s.settimeout(20)
try:
    s.sendall(sys.argv[2].encode() + b"\n" + INIT)
    print("reply" if s.recv(4096) else "closed")
except (BrokenPipeError, ConnectionResetError):
    print("closed")
"#;
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", script])
        .arg(socket)
        .arg(hello)
        .output()
        .expect("setpriv");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_is_refused_even_with_the_token() {
    if rustix::process::geteuid().as_raw() != 0 {
        panic!("this test drops to `nobody` and must run as root (as the test machines do)");
    }
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n")], runtime.path()).await;
    let socket = lsp.socket();
    let hello = json!({"token": lsp.token(), "profile": "standard"}).to_string();

    // The private directory keeps another user from reaching the socket at all.
    let got = tokio::task::spawn_blocking({
        let (socket, hello) = (socket.clone(), hello.clone());
        move || as_nobody(&socket, &hello)
    })
    .await
    .expect("join");
    assert_eq!(got, "connect-error 13", "EACCES");
    lsp.still_serves().await;

    // Open the way (as a careless user might) and the uid check still refuses, token or not.
    let private = runtime.path().join("tether");
    std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let got = tokio::task::spawn_blocking(move || as_nobody(&socket, &hello)).await.expect("join");
    assert_eq!(got, "closed");
    lsp.still_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_files_are_private_listed_and_removed_on_exit() {
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n")], runtime.path()).await;
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    let private = runtime.path().join("tether");
    assert_eq!(mode(&private), 0o700);
    assert_eq!(mode(&lsp.discovery_file()), 0o600);
    assert_eq!(mode(&lsp.socket()), 0o600);
    let d = lsp.discovery();
    assert_eq!(d["pid"], lsp.pid());
    assert_eq!(d["profile"], "standard");
    let canonical = lsp.dir().canonicalize().expect("canonical");
    assert_eq!(d["roots"], json!([canonical]));
    assert_eq!(d["token"].as_str().map(str::len), Some(64));

    let out = std::process::Command::new(BIN)
        .args(["status", "--json"])
        .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
        .env("XDG_RUNTIME_DIR", runtime.path())
        .output()
        .expect("status");
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    let listed = &status["instances"][0];
    assert_eq!(listed["pid"], lsp.pid());
    assert_eq!(listed["roots"], json!([canonical]));
    assert!(listed.get("token").is_none(), "status never shows the token: {status}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(d["token"].as_str().expect("token")));

    // A polite exit removes both files.
    let (file, socket) = (lsp.discovery_file(), lsp.socket());
    let Lsp { mut child, session, .. } = lsp;
    session.shutdown().await;
    tokio::time::timeout(PATIENCE, child.wait()).await.expect("exits").expect("status");
    assert!(!file.exists() && !socket.exists());

    // So does SIGTERM.
    let lsp = start_lsp(&[], runtime.path()).await;
    let (file, socket) = (lsp.discovery_file(), lsp.socket());
    let pid = rustix::process::Pid::from_raw(i32::try_from(lsp.pid()).expect("pid")).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("kill");
    let Lsp { mut child, .. } = lsp;
    tokio::time::timeout(PATIENCE, child.wait()).await.expect("exits").expect("status");
    assert!(!file.exists() && !socket.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_discovery_file_is_ignored_and_removed() {
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n")], runtime.path()).await;
    lsp.session.open("a.txt", "in the buffer\n");
    lsp.session.sync().await;
    // A newer instance for the same root whose process is gone.
    let mut gone = std::process::Command::new("true").spawn().expect("spawn");
    let dead = gone.id();
    gone.wait().expect("wait");
    let private = runtime.path().join("tether");
    let mut stale = lsp.discovery();
    stale["pid"] = json!(dead);
    stale["socket"] = json!(private.join(format!("{dead}.sock")));
    stale["started"] = json!(u64::MAX);
    let stale_file = private.join(format!("{dead}.json"));
    std::fs::write(&stale_file, stale.to_string()).expect("write");
    std::fs::set_permissions(&stale_file, std::fs::Permissions::from_mode(0o600)).expect("chmod");

    let mcp = start_mcp(lsp.dir(), runtime.path(), &[]).await;
    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("in the buffer"), "{}", body(&r));
    assert!(!stale_file.exists(), "the stale file is cleaned");
    mcp.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stat_and_read_file_say_the_text_is_an_unsaved_buffer() {
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n"), ("b.txt", "closed\n")], runtime.path()).await;
    lsp.session.open("a.txt", "in the buffer\n");
    lsp.session.sync().await;
    let mcp = start_mcp(lsp.dir(), runtime.path(), &[]).await;
    let r = call(&mcp, "stat", json!({"path": "a.txt"})).await;
    let v: Value = serde_json::from_str(&body(&r)).expect("json");
    assert_eq!((v["open"].clone(), v["dirty"].clone()), (json!(true), json!(true)), "{v}");
    let r = body(&call(&mcp, "read_file", json!({"path": "a.txt"})).await);
    // The read ends with its version (the journal is on), right after the note.
    assert!(r.contains("(from the open editor buffer, which has unsaved changes)\n[version: "), "{r}");
    let r = body(&call(&mcp, "read_file", json!({"path": "b.txt"})).await);
    assert!(!r.contains("editor buffer"), "a closed file says nothing: {r}");
    mcp.cancel().await.expect("close");
}

/// Whether process `pid` is gone (or only a zombie waiting to be reaped).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_the_command_in_the_lsp() {
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n")], runtime.path()).await;
    lsp.session.open("a.txt", "in the buffer\n");
    lsp.session.sync().await;
    let mcp = start_mcp(lsp.dir(), runtime.path(), &[]).await;
    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("in the buffer"), "attached: {}", body(&r));

    // The command runs in the lsp; the assistant gives up on it, and the client drops the call,
    // which sends notifications/cancelled to tether mcp.
    let pid_file = lsp.dir().join("pid.txt");
    let peer = mcp.peer().clone();
    let running = tokio::spawn(async move {
        let args = json!({"command": "echo $$ > pid.txt.part && mv pid.txt.part pid.txt && exec sleep 60"});
        let Value::Object(args) = args else { unreachable!() };
        peer.call_tool(CallToolRequestParams::new("run").with_arguments(args)).await
    });
    wait_until("the command to start", || pid_file.exists()).await;
    let pid: u32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("a pid");
    assert!(!process_gone(pid), "the command runs");
    running.abort();
    wait_until("the lsp to kill the cancelled command", || process_gone(pid)).await;

    // Both keep serving.
    let r = call(&mcp, "read_file", json!({"path": "a.txt"})).await;
    assert!(body(&r).contains("in the buffer"), "{}", body(&r));
    lsp.still_serves().await;
    mcp.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_read_of_20_mib_comes_back_whole() {
    // The reply crosses the bridge as one 23 MB line, over rmcp's default limit of 16 MiB.
    let runtime = runtime_dir();
    let line = "a line of a large file, read through the editor's tether lsp\n";
    let big = line.repeat((20 << 20) / line.len());
    let lsp = start_lsp(&[("a.txt", "small\n"), ("big.txt", &big)], runtime.path()).await;
    let (mcp, _child) = start_mcp_for_large_replies(lsp.dir(), runtime.path()).await;
    let r = call(&mcp, "stat", json!({"path": "big.txt"})).await;
    assert!(body(&r).contains("\"lines\""), "{}", body(&r));
    let r = tokio::time::timeout(
        PATIENCE,
        call(&mcp, "read_file", json!({"path": "big.txt", "offset": 1, "limit": 1_000_000})),
    )
    .await
    .expect("an answer to the 20 MiB read");
    assert_eq!(r.is_error, Some(false));
    let text = body(&r);
    let (text, version) = text.rsplit_once("\n[version: ").expect("the read ends with its version");
    assert_eq!(version.len(), 13, "{version}");
    assert_eq!(text.lines().count(), big.lines().count());
    assert!(text.ends_with(line.trim_end()), "{}", &text[text.len() - 200..]);
    lsp.still_serves().await;
}

/// An assistant that starts `tether mcp` with a reduced environment (no `XDG_RUNTIME_DIR`, another
/// `TMPDIR`: Codex starts its servers so) still finds the editor's lsp, itself started without
/// `XDG_RUNTIME_DIR`: both use a runtime directory that does not depend on the environment, so the
/// assistant's reads see the unsaved buffer instead of the disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tether_mcp_in_a_reduced_environment_finds_the_editors_lsp() {
    let (lsp_tmp, mcp_tmp) = (tempfile::tempdir().expect("tmp"), tempfile::tempdir().expect("tmp"));
    let dir = tempfile::tempdir().expect("workspace");
    std::fs::write(dir.path().join("a.txt"), "on disk\n").expect("write");
    let mut child = tokio::process::Command::new(BIN)
        .arg("lsp")
        .env_remove("XDG_RUNTIME_DIR")
        .env("TMPDIR", lsp_tmp.path())
        .env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home())
        .env_remove("TETHER_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn tether lsp");
    let (stdin, stdout) = (child.stdin.take().expect("stdin"), child.stdout.take().expect("stdout"));
    let script = editor_script(Strictness::Strict, ChangeOrder::AfterAnswer);
    let session = Session::connect(stdout, stdin, dir, Init::neovim(), script, true).await;
    session.open_from_disk("a.txt");
    session.type_text("a.txt", 0, 0, "unsaved ");
    session.sync().await;
    let pid = child.id().expect("pid");
    let published = || {
        let uid = rustix::process::geteuid().as_raw();
        [format!("/run/user/{uid}/tether/{pid}.json"), format!("/tmp/tether-{uid}/{pid}.json")]
            .iter()
            .any(|f| Path::new(f).exists())
    };
    wait_until("the discovery file outside the environment's directories", published).await;
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("mcp").arg("--root").arg(session.dir.path());
    cmd.env_remove("XDG_RUNTIME_DIR").env("TMPDIR", mcp_tmp.path()).env_remove("TETHER_LOG");
    cmd.env(crate::lsp_support::STATE_VAR, crate::lsp_support::state_home());
    let transport = TokioChildProcess::builder(cmd).stderr(Stdio::null()).spawn().expect("spawn tether mcp").0;
    let mcp: Mcp = ().serve(transport).await.expect("initialize");
    let read = body(&call(&mcp, "read_file", json!({"path": "a.txt"})).await);
    assert!(read.contains("unsaved on disk"), "the read came from the disk, not the editor's buffer: {read}");
    mcp.cancel().await.expect("stop");
    drop(child);
}

/// When the editor's lsp serves the project but cannot be reached (here its socket is gone),
/// `tether mcp` still answers, on disk, and every result says so: never on disk silently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_run_on_disk_while_the_editors_lsp_is_unreachable_says_so() {
    let runtime = runtime_dir();
    let lsp = start_lsp(&[("a.txt", "on disk\n")], runtime.path()).await;
    std::fs::remove_file(lsp.socket()).expect("remove the socket");
    let mcp = start_mcp(lsp.dir(), runtime.path(), &[]).await;
    for _ in 0..2 {
        let read = body(&call(&mcp, "read_file", json!({"path": "a.txt"})).await);
        assert!(read.contains("on disk"), "{read}");
        assert!(read.contains("could not be reached"), "the disk read does not say the editor was missed: {read}");
        assert!(read.contains(&format!("pid {}", lsp.pid())), "{read}");
    }
    mcp.cancel().await.expect("stop");
}
