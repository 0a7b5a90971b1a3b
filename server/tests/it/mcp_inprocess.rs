//! The MCP server in-process: an rmcp client talks to `McpServer` over `tokio::io::duplex`.

use std::fs;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, ErrorCode, PaginatedRequestParams,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::{json, Map, Value};
use tether::config::Config;
use tether::mcp::{DiskHost, McpServer};
use tether::profiles;
use tether::workspace::Workspace;

/// A client that records progress notifications.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().expect("lock").push(params);
    }
}

struct Session {
    client: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
    dir: tempfile::TempDir,
}

async fn start(config: Config) -> Session {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").expect("write");
    fs::create_dir(dir.path().join("sub")).expect("mkdir");
    fs::write(dir.path().join("sub/b.rs"), "fn beta() {}\n").expect("write");
    let ws = Workspace::new([dir.path()]).expect("workspace");
    let profile = profiles::by_name("standard").expect("profile");
    let server = McpServer::new(profile, config, Arc::new(DiskHost::new(ws)));
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move { server.serve(server_io).await });
    let recorder = Recorder::default();
    let client = recorder.clone().serve(client_io).await.expect("initialize");
    Session { client, recorder, dir }
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("arguments must be an object"),
    }
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
}

async fn call(s: &Session, name: &str, a: Value) -> CallToolResult {
    s.client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args(a))).await.expect("call")
}

#[tokio::test]
async fn initialize_advertises_tools() {
    let s = start(Config::default()).await;
    let info = s.client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("tether"));
    assert!(info.capabilities.tools.is_some());
    assert!(info.instructions.as_deref().is_some_and(|i| i.contains("standard")));
    // Without an editor there is no review, and the server says so rather than let it be assumed.
    assert!(info.instructions.as_deref().is_some_and(|i| i.contains("no review before apply")), "{info:?}");
}

#[tokio::test]
async fn tool_list_per_mode() {
    let s = start(Config::default()).await;
    let all: Vec<String> = s.client.list_all_tools().await.expect("list").into_iter().map(|t| t.name.into()).collect();
    assert!(all.contains(&"write_file".to_owned()) && all.contains(&"read_file".to_owned()), "{all:?}");
    let ro = start(Config { read_only: true, ..Config::default() }).await;
    let tools = ro.client.list_all_tools().await.expect("list");
    assert!(!tools.is_empty());
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        assert_eq!(a.read_only_hint, Some(true), "{} listed in read-only mode", t.name);
    }
    assert!(tools.len() < all.len());
}

/// tether lists its tools in one page and hands out no cursor, so every cursor is invalid.
#[tokio::test]
async fn a_cursor_tether_did_not_hand_out_is_invalid_params() {
    let s = start(Config::default()).await;
    let page = s.client.list_tools(None).await.expect("list");
    assert!(page.next_cursor.is_none() && !page.tools.is_empty());
    let params = PaginatedRequestParams::default().with_cursor(Some("not-a-cursor".to_owned()));
    match s.client.list_tools(Some(params)).await.expect_err("an invalid cursor") {
        ServiceError::McpError(e) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
            assert!(e.message.contains("invalid cursor"), "{}", e.message);
        }
        other => panic!("not a JSON-RPC error: {other}"),
    }
    let page = s.client.list_tools(Some(PaginatedRequestParams::default())).await.expect("no cursor is fine");
    assert!(!page.tools.is_empty());
}

#[tokio::test]
async fn results_and_errors() {
    let s = start(Config::default()).await;
    let r = call(&s, "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(r.is_error, Some(false));
    assert_eq!(text(&r), "     1\talpha\n     2\tbeta");

    // A tool failure is an isError result carrying the standard error object.
    let r = call(&s, "read_file", json!({"path": "../etc/passwd"})).await;
    assert_eq!(r.is_error, Some(true));
    let err: Value = serde_json::from_str(&text(&r)).expect("error object");
    assert_eq!(err["error"], "path_escape");
    let r = call(&s, "read_file", json!({"path": "a.txt", "offset": "x"})).await;
    assert_eq!(serde_json::from_str::<Value>(&text(&r)).expect("json")["error"], "invalid_input");

    // An unknown tool is a JSON-RPC error, and the server keeps serving.
    let e = s.client.call_tool(CallToolRequestParams::new("no_such_tool")).await.expect_err("unknown tool");
    assert!(e.to_string().contains("unknown tool"), "{e}");
    let r = call(&s, "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(r.is_error, Some(false));
}

#[tokio::test]
async fn read_only_refuses_write_tools() {
    let s = start(Config { read_only: true, ..Config::default() }).await;
    let e = s
        .client
        .call_tool(CallToolRequestParams::new("write_file").with_arguments(args(json!({"path": "x", "content": "y"}))))
        .await
        .expect_err("write tool is not served read-only");
    assert!(e.to_string().contains("unknown tool"), "{e}");
    assert!(!s.dir.path().join("x").exists());
}

/// A command that waits about `ms` milliseconds (whole seconds of `ping` in cmd.exe, which has no
/// `sleep`) and then runs `then`, in the platform's shell.
fn after(ms: u32, then: &str) -> String {
    if cfg!(windows) {
        format!("ping -n {} 127.0.0.1 > nul & {then}", ms.div_ceil(1000) + 1)
    } else {
        format!("sleep {}.{:03}; {then}", ms / 1000, ms % 1000)
    }
}

#[tokio::test]
async fn progress_is_reported_for_long_calls() {
    let s = start(Config::default()).await;
    let r = call(&s, "run", json!({"command": after(1200, "echo done")})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    let progress = s.recorder.progress.lock().expect("lock").clone();
    assert!(progress.len() >= 2, "expected progress notifications, got {progress:?}");
    assert!(progress.windows(2).all(|w| w[0].progress < w[1].progress), "progress must increase");
}

#[tokio::test]
async fn cancellation_stops_the_tool() {
    let s = start(Config::default()).await;
    let marker = s.dir.path().join("finished");
    let touch = if cfg!(windows) {
        format!("type nul > \"{}\"", marker.display())
    } else {
        format!("touch {}", marker.display())
    };
    let command = after(1000, &touch);
    let params = CallToolRequestParams::new("run").with_arguments(args(json!({"command": command})));
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle =
        s.client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("send request");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    handle.cancel(Some("test".into())).await.expect("cancel");
    // The command's process group is killed, so the marker never appears.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!marker.exists(), "the cancelled command ran to completion");
    assert!(started.elapsed() < Duration::from_secs(10));
    // And the server still answers.
    let r = call(&s, "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(r.is_error, Some(false));
}

#[tokio::test]
async fn a_long_call_does_not_hold_up_quick_ones() {
    // The server runs on one thread (as `tether mcp` does) and runs quick tools on it; a long
    // tool must still go elsewhere, or this read would wait for the command.
    let s = start(Config::default()).await;
    let params = CallToolRequestParams::new("run").with_arguments(args(json!({"command": after(3000, "echo done")})));
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let started = Instant::now();
    let long = s.client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("send");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = call(&s, "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(r.is_error, Some(false));
    assert!(started.elapsed() < Duration::from_secs(2), "the read waited {:?} for the command", started.elapsed());
    long.cancel(None).await.expect("cancel");
}

/// A profile whose two tools panic: `quick_boom` runs on the protocol thread, `slow_boom` on the
/// blocking pool. A panic on either path must become an error result, not a dead server.
struct Panicky;

impl profiles::Profile for Panicky {
    fn name(&self) -> &'static str {
        "panicky"
    }

    fn tools(&self, _config: &Config) -> Vec<profiles::ToolInfo> {
        [("quick_boom", true), ("slow_boom", false)]
            .into_iter()
            .map(|(name, quick)| profiles::ToolInfo {
                name,
                description: "panics",
                input_schema: json!({"type": "object"}),
                effects: tether::tools::Effects::READ,
                quick,
            })
            .collect()
    }

    fn call(
        &self,
        _ctx: &tether::tools::Context<'_>,
        _sink: &dyn tether::sink::Sink,
        name: &str,
        _args: Value,
    ) -> Result<profiles::CallResult, profiles::CallError> {
        panic!("{name} went wrong")
    }
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = Workspace::new([dir.path()]).expect("workspace");
    let server =
        McpServer::new(Box::new(Panicky) as Box<dyn profiles::Profile>, Config::default(), Arc::new(DiskHost::new(ws)));
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move { server.serve(server_io).await });
    let client = ().serve(client_io).await.expect("initialize");
    for _ in 0..2 {
        for name in ["quick_boom", "slow_boom"] {
            let r = client.call_tool(CallToolRequestParams::new(name)).await.expect("an answer, not a dead server");
            assert_eq!(r.is_error, Some(true), "{name}");
            let t: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
            assert!(t.contains("the tool panicked"), "{name}: {t}");
        }
    }
}
