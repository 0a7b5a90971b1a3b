//! `AttachedHost` in-process: an rmcp client (the assistant) talks to a `tether mcp` whose host
//! forwards calls over `tokio::io::duplex` to a second `McpServer` (standing in for the lsp).
//! Calls go to the remote while it lives; when it goes away between calls they run locally;
//! a changing call cut off mid-flight is not repeated.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{json, Value};
use tether::config::Config;
use tether::mcp::remote::{AttachedHost, Connection, Connector};
use tether::mcp::{Answer, BoxFuture, DiskHost, Host, McpServer, ToolCall};
use tether::profiles::{self, CallError};
use tether::workspace::Workspace;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// A remote server that the connector hands out once; the test can cut it off.
#[derive(Default)]
struct OneRemote {
    server: Mutex<Option<McpServer>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl OneRemote {
    fn kill(&self) {
        if let Some(t) = self.task.lock().expect("lock").take() {
            t.abort();
        }
    }
}

impl Connector for OneRemote {
    fn connect<'a>(&'a self, _root: &'a Path) -> BoxFuture<'a, Option<Connection>> {
        Box::pin(async move {
            let server = self.server.lock().expect("lock").take()?;
            // A relay between two pipes stands for the socket: killing it cuts the connection
            // without a word from the server, as when the lsp process dies.
            let (ours, mut near) = tokio::io::duplex(1 << 20);
            let (mut far, theirs) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                let _ = server.serve(theirs).await;
            });
            *self.task.lock().expect("lock") = Some(tokio::spawn(async move {
                let _ = tokio::io::copy_bidirectional(&mut near, &mut far).await;
            }));
            let (reader, writer) = tokio::io::split(ours);
            Some(Connection { reader: Box::new(reader), writer: Box::new(writer), label: "test".into() })
        })
    }
}

/// A host whose calls never finish: they announce themselves and wait.
struct Hanging {
    disk: DiskHost,
    started: Arc<Notify>,
}

impl Host for Hanging {
    fn set_roots(&self, roots: Vec<std::path::PathBuf>) -> tether::Result<()> {
        self.disk.set_roots(roots)
    }

    fn call(&self, _call: ToolCall) -> BoxFuture<'_, Result<Answer, CallError>> {
        Box::pin(async move {
            self.started.notify_one();
            std::future::pending().await
        })
    }
}

fn workspace(text: &str) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), text).expect("write");
    let ws = Workspace::new([dir.path()]).expect("workspace");
    (dir, ws)
}

fn server(host: Arc<dyn Host>) -> McpServer {
    McpServer::new(profiles::by_name("standard").expect("profile"), Config::default(), host)
}

async fn assistant(remote: Arc<OneRemote>, local: Workspace) -> RunningService<RoleClient, ()> {
    let host = AttachedHost::new(DiskHost::new(local), remote);
    host.try_attach().await;
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let ours = server(Arc::new(host));
    tokio::spawn(async move { ours.serve(server_io).await });
    ().serve(client_io).await.expect("initialize")
}

async fn call(c: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!("object") };
    c.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.expect("call")
}

fn body(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_go_to_the_remote_then_run_locally_once_it_is_gone() {
    let (_remote_dir, remote_ws) = workspace("remote\n");
    let (local_dir, local_ws) = workspace("local\n");
    let remote = Arc::new(OneRemote::default());
    *remote.server.lock().expect("lock") = Some(server(Arc::new(DiskHost::new(remote_ws))));
    let c = assistant(remote.clone(), local_ws).await;

    assert!(body(&call(&c, "read_file", json!({"path": "a.txt"})).await).contains("remote"));
    remote.kill();
    // The session notices the closed pipe; the next calls run here, and nothing fails.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(body(&call(&c, "read_file", json!({"path": "a.txt"})).await).contains("local"));
    let r = call(&c, "edit_file", json!({"path": "a.txt", "old_string": "local", "new_string": "edited"})).await;
    assert_ne!(r.is_error, Some(true), "{}", body(&r));
    assert_eq!(std::fs::read_to_string(local_dir.path().join("a.txt")).expect("read"), "edited\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changing_call_cut_off_mid_flight_is_not_repeated_but_a_read_is() {
    let (remote_dir, remote_ws) = workspace("remote\n");
    let (local_dir, local_ws) = workspace("local\n");
    let started = Arc::new(Notify::new());
    let remote = Arc::new(OneRemote::default());
    let hanging = Hanging { disk: DiskHost::new(remote_ws), started: started.clone() };
    *remote.server.lock().expect("lock") = Some(server(Arc::new(hanging)));
    let c = assistant(remote.clone(), local_ws).await;

    let edit = {
        let peer = c.peer().clone();
        tokio::spawn(async move {
            let Value::Object(args) = json!({"path": "a.txt", "old_string": "local", "new_string": "twice"}) else {
                unreachable!()
            };
            peer.call_tool(CallToolRequestParams::new("edit_file").with_arguments(args)).await.expect("call")
        })
    };
    started.notified().await;
    remote.kill();
    let r = edit.await.expect("join");
    assert_eq!(r.is_error, Some(true), "{}", body(&r));
    assert!(body(&r).contains("may or may not have been applied"), "{}", body(&r));
    assert_eq!(std::fs::read_to_string(local_dir.path().join("a.txt")).expect("read"), "local\n");
    assert_eq!(std::fs::read_to_string(remote_dir.path().join("a.txt")).expect("read"), "remote\n");

    // No remote any more: reads run here.
    assert!(body(&call(&c, "read_file", json!({"path": "a.txt"})).await).contains("local"));
}
