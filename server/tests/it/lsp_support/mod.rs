//! A scripted LSP client for in-process tests: it frames JSON-RPC with `Content-Length` over
//! `tokio::io::duplex` pipes to a real `tether lsp` backend, answers the server's requests as
//! each test's script says, keeps a pretend editor's buffers, and records notifications.

#![allow(dead_code)] // Not every helper is used by the tests of every area.

pub mod editor;
pub mod profile;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tether::lsp::{Limits, Options};
use tether::text::PositionEncoding;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, Notify};
use tower_lsp::lsp_types::{ApplyWorkspaceEditParams, Url};

pub use editor::{Editor, Strictness};
pub use profile::{FsSink, Hooks, TestProfile};

/// How long a test waits for anything before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// What the client answers to one server request.
pub struct Reply {
    /// The result, or the error object.
    pub result: Result<Value, Value>,
    /// Notifications sent right after the answer.
    pub then: Vec<Value>,
}

impl Reply {
    /// A plain result.
    pub fn ok(result: Value) -> Reply {
        Reply { result: Ok(result), then: Vec::new() }
    }
}

/// A test's answers to server requests: `(editor, client, method, params)`. It may send
/// notifications (through the client) before answering.
pub type Script = Arc<dyn Fn(&Editor, &Client, &str, Value) -> Reply + Send + Sync>;

/// When the pretend editor sends the `didChange` for an applied edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeOrder {
    /// Before answering `applyEdit` (as VS Code does).
    BeforeAnswer,
    /// After answering (as Neovim does, its change notifications being debounced).
    AfterAnswer,
}

/// The usual editor: applies edits (strictly or leniently), saves on `tether/saveDocuments`,
/// accepts progress tokens.
pub fn editor_script(strictness: Strictness, order: ChangeOrder) -> Script {
    Arc::new(move |editor, client, method, params| match method {
        "workspace/applyEdit" => {
            let params: ApplyWorkspaceEditParams = serde_json::from_value(params).expect("applyEdit params");
            let (response, notes) = editor.apply(&params.edit, strictness);
            let result = serde_json::to_value(response).expect("json");
            match order {
                ChangeOrder::BeforeAnswer => {
                    notes.into_iter().for_each(|n| client.send(n));
                    Reply::ok(result)
                }
                ChangeOrder::AfterAnswer => Reply { result: Ok(result), then: notes },
            }
        }
        "tether/saveDocuments" => {
            let uris: Vec<Url> = serde_json::from_value(params["uris"].clone()).expect("uris");
            let mut saved = Vec::new();
            for uri in uris {
                if let Some(note) = editor.save(&uri) {
                    client.send(note);
                    saved.push(uri);
                }
            }
            Reply::ok(json!({ "saved": saved }))
        }
        "window/workDoneProgress/create" => Reply::ok(Value::Null),
        // An editor with no visible window and no other language server.
        "tether/editorContext" => Reply::ok(json!({"editors": []})),
        "tether/languageRequest" => Reply::ok(json!({"servers": [], "result": null})),
        // A user who accepts every change.
        "tether/review" => Reply::ok(json!({"decision": "accept"})),
        other => Reply { result: Err(json!({"code": -32601, "message": format!("no {other}")})), then: Vec::new() },
    })
}

/// How a session starts.
pub struct Setup {
    /// Files on disk: `//- path` lines, then the file's lines.
    pub files: &'static str,
    /// The client capabilities sent in `initialize`.
    pub capabilities: Value,
    /// The server's options (profile, sinks, limits).
    pub options: Options,
    /// tower-lsp's handler slots.
    pub concurrency: usize,
    /// The answers to server requests.
    pub script: Script,
    /// Whether `initialize` names the temp dir as a workspace folder.
    pub workspace_folder: bool,
    /// `initializationOptions` (left out when null).
    pub initialization_options: Value,
    /// `clientInfo.name` (left out when `None`).
    pub client_name: Option<&'static str>,
}

/// What the client sends in `initialize` besides its workspace folder.
pub struct Init {
    /// The client capabilities.
    pub capabilities: Value,
    /// `initializationOptions` (left out when null).
    pub options: Value,
    /// `clientInfo.name` (left out when `None`).
    pub client_name: Option<&'static str>,
}

impl Init {
    /// Neovim's capabilities and no options.
    pub fn neovim() -> Init {
        Init { capabilities: neovim_capabilities(), options: Value::Null, client_name: None }
    }
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            files: "",
            capabilities: neovim_capabilities(),
            options: test_options(Arc::default(), Arc::default()),
            concurrency: tether::lsp::CONCURRENCY_LEVEL,
            script: editor_script(Strictness::Strict, ChangeOrder::BeforeAnswer),
            workspace_folder: true,
            initialization_options: Value::Null,
            client_name: None,
        }
    }
}

/// Capabilities as Neovim 0.11 sends them (the parts tether reads; it announces resource
/// operations but not `documentChanges`), plus tether's own.
pub fn neovim_capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
        "workspace": {"workspaceEdit": {"resourceOperations": ["rename", "create", "delete"]},
                      "workspaceFolders": true},
        "window": {"workDoneProgress": true},
        "experimental": {"tether": {"saveDocuments": true}},
    })
}

/// The real `tether lsp` binary started with `args` (after `lsp`) and `env`, its stdin and stdout
/// piped and taken, killed when dropped; `TETHER_LOG` is removed so `--log-level` decides.
/// `Command::output` and `Command::spawn`, started again (up to five times) when Wine fails to
/// start the process: Wine 8's `CreateProcess` now and then answers `ERROR_INTERNAL_ERROR`
/// (1359) while many processes start at once, which Windows and Unix do not.
pub trait WineSafe {
    /// `output`, as above.
    fn wine_safe_output(&mut self) -> std::io::Result<std::process::Output>;
    /// `spawn`, as above.
    fn wine_safe_spawn(&mut self) -> std::io::Result<std::process::Child>;
}

impl WineSafe for std::process::Command {
    fn wine_safe_output(&mut self) -> std::io::Result<std::process::Output> {
        again_under_wine(|| self.output())
    }

    fn wine_safe_spawn(&mut self) -> std::io::Result<std::process::Child> {
        again_under_wine(|| self.spawn())
    }
}

fn again_under_wine<T>(mut start: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    const ERROR_INTERNAL_ERROR: i32 = 1359;
    let mut tries = 0;
    loop {
        match start() {
            Err(e) if cfg!(windows) && e.raw_os_error() == Some(ERROR_INTERNAL_ERROR) && tries < 5 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// The variable that names where tether keeps its state (the journal, locks): `XDG_STATE_HOME`,
/// or `LOCALAPPDATA` on Windows. Both hold a `tether/journal` folder.
pub const STATE_VAR: &str = if cfg!(windows) { "LOCALAPPDATA" } else { "XDG_STATE_HOME" };

/// The state directory every spawned tether gets ([`STATE_VAR`]), so that their change
/// journals stay out of the user's: one temp directory per test run.
pub fn state_home() -> &'static Path {
    static HOME: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    HOME.get_or_init(|| tempfile::tempdir().expect("state home")).path()
}

pub fn spawn_lsp(
    args: &[&str],
    env: &[(&str, &Path)],
    stderr: std::process::Stdio,
) -> (tokio::process::Child, tokio::process::ChildStdin, tokio::process::ChildStdout) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether"))
        .arg("lsp")
        .args(args)
        .env(STATE_VAR, state_home())
        .envs(env.iter().copied())
        .env_remove("TETHER_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn tether lsp");
    let (stdin, stdout) = (child.stdin.take().expect("stdin"), child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

/// Server options with the test profile and the given disk sink; a shorter verification wait
/// (1 s: far longer than a scripted editor needs, short enough for the tests where it expires).
pub fn test_options(hooks: Arc<Hooks>, disk: Arc<FsSink>) -> Options {
    Options {
        profile: "test".into(),
        profiles: Arc::new(move |name: &str| -> tether::Result<Box<dyn tether::profiles::Profile>> {
            match name {
                "test" => Ok(Box::new(TestProfile { hooks: hooks.clone() })),
                other => tether::profiles::by_name(other),
            }
        }),
        disk,
        limits: Limits { verify_timeout: Duration::from_secs(1), ..Limits::default() },
        ..Options::default()
    }
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Value>>>>;

/// The client side of a session.
#[derive(Clone)]
pub struct Client {
    out: mpsc::UnboundedSender<Value>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
    notes: Arc<Mutex<Vec<Value>>>,
    requests: Arc<Mutex<Vec<Value>>>,
    arrived: Arc<Notify>,
}

impl Client {
    /// Sends a message (a notification, usually) to the server.
    pub fn send(&self, msg: Value) {
        let _ = self.out.send(msg);
    }

    /// Sends a request and returns where its response (the whole message) will arrive.
    pub fn send_request(&self, method: &str, params: Value) -> oneshot::Receiver<Value> {
        // JSON-RPC params are a structured value or absent: `null` means absent here.
        self.send_request_as(method, (!params.is_null()).then_some(params))
    }

    /// Sends a request with `params` as given: `None` leaves the member out, `Some(Value::Null)`
    /// sends `"params": null` (as Emacs's jsonrpc.el does for `shutdown`).
    pub fn send_request_as(&self, method: &str, params: Option<Value>) -> oneshot::Receiver<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("lock").insert(id, tx);
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            msg["params"] = params;
        }
        self.send(msg);
        rx
    }

    /// Sends a request and waits for its result (`Err` with the error object).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        let rx = self.send_request(method, params);
        let msg = tokio::time::timeout(PATIENCE, rx).await.expect("response in time").expect("response");
        match msg.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(msg["result"].clone()),
        }
    }

    /// The notifications received so far with this method.
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.notes.lock().expect("lock").iter().filter(|n| n["method"] == method).map(|n| n["params"].clone()).collect()
    }

    /// The server requests received so far with this method (their params).
    pub fn server_requests(&self, method: &str) -> Vec<Value> {
        self.requests
            .lock()
            .expect("lock")
            .iter()
            .filter(|n| n["method"] == method)
            .map(|n| n["params"].clone())
            .collect()
    }

    /// Waits until `pred` holds over the notifications received.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Value]) -> bool) {
        let wait = async {
            loop {
                let notified = self.arrived.notified();
                if pred(&self.notes.lock().expect("lock")) {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(PATIENCE, wait).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"));
    }
}

/// A running server and its client.
pub struct Session {
    /// The client side.
    pub client: Client,
    /// The pretend editor.
    pub editor: Arc<Editor>,
    /// The `initialize` result.
    pub init: Value,
    /// The workspace folder.
    pub dir: tempfile::TempDir,
}

impl Session {
    /// Starts a server in-process, writes the files, and initializes it.
    pub async fn start(setup: Setup) -> Session {
        let dir = tempfile::tempdir().expect("tempdir");
        write_fixture(dir.path(), setup.files);
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        let (service, socket) = tether::lsp::service(setup.options);
        let level = setup.concurrency;
        tokio::spawn(async move {
            tower_lsp::Server::new(server_read, server_write, socket).concurrency_level(level).serve(service).await;
        });
        let (read, write) = tokio::io::split(client_io);
        let init = Init {
            capabilities: setup.capabilities,
            options: setup.initialization_options,
            client_name: setup.client_name,
        };
        Session::connect(read, write, dir, init, setup.script, setup.workspace_folder).await
    }

    /// Initializes a server reachable through `read`/`write` (in-process or a child process),
    /// with `dir` as its workspace folder when `workspace_folder`.
    pub async fn connect<R, W>(
        read: R,
        mut write: W,
        dir: tempfile::TempDir,
        init: Init,
        script: Script,
        workspace_folder: bool,
    ) -> Session
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
        tokio::spawn(async move {
            while let Some(msg) = out_rx.recv().await {
                let body = serde_json::to_vec(&msg).expect("json");
                let header = format!("Content-Length: {}\r\n\r\n", body.len());
                if write.write_all(header.as_bytes()).await.is_err() || write.write_all(&body).await.is_err() {
                    break;
                }
                let _ = write.flush().await;
            }
        });
        let client = Client {
            out: out_tx,
            pending: Arc::default(),
            next_id: Arc::new(AtomicI64::new(1)),
            notes: Arc::default(),
            requests: Arc::default(),
            arrived: Arc::default(),
        };
        let editor = Arc::new(Editor::default());
        spawn_reader(read, client.clone(), editor.clone(), script);
        let mut params = json!({"processId": null, "rootUri": null, "capabilities": init.capabilities});
        if !init.options.is_null() {
            params["initializationOptions"] = init.options;
        }
        if let Some(name) = init.client_name {
            params["clientInfo"] = json!({"name": name, "version": "0"});
        }
        if workspace_folder {
            let uri = Url::from_file_path(dir.path()).expect("uri");
            params["workspaceFolders"] = json!([{"uri": uri, "name": "w"}]);
        }
        let init = client.request("initialize", params).await.expect("initialize");
        let enc = match init["capabilities"]["positionEncoding"].as_str() {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        };
        editor.set_encoding(enc);
        client.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        Session { client, editor, init, dir }
    }

    /// The absolute path of `rel` in the workspace.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The `file:` URI of `rel`.
    pub fn uri(&self, rel: &str) -> Url {
        Url::from_file_path(self.path(rel)).expect("uri")
    }

    /// Opens `rel` in the editor with `text` (version 1).
    pub fn open(&self, rel: &str, text: &str) {
        self.client.send(self.editor.open(&self.uri(rel), text, 1));
    }

    /// Opens `rel` with the text it has on disk.
    pub fn open_from_disk(&self, rel: &str) {
        let text = std::fs::read_to_string(self.path(rel)).expect("read");
        self.open(rel, &text);
    }

    /// The user replaces bytes `start..end` of `rel` with `text`.
    pub fn type_text(&self, rel: &str, start: usize, end: usize, text: &str) {
        self.client.send(self.editor.type_text(&self.uri(rel), start, end, text));
    }

    /// `tether.callTool`: the result, or the JSON-RPC error object.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value, Value> {
        self.execute("tether.callTool", vec![json!({"tool": tool, "arguments": arguments})]).await
    }

    /// `workspace/executeCommand`.
    pub async fn execute(&self, command: &str, arguments: Vec<Value>) -> Result<Value, Value> {
        self.client.request("workspace/executeCommand", json!({"command": command, "arguments": arguments})).await
    }

    /// `tether/debugDocument` for `rel`: (version, text, dirty), or `None` when not open.
    pub async fn server_copy(&self, rel: &str) -> Option<(i64, String, bool)> {
        let v = self.client.request("tether/debugDocument", json!({"uri": self.uri(rel)})).await.expect("debug");
        if v.is_null() {
            return None;
        }
        Some((v["version"].as_i64()?, v["text"].as_str()?.to_owned(), v["dirty"].as_bool()?))
    }

    /// Waits until the server has processed everything sent so far (a request is answered only
    /// after the notifications before it were applied).
    pub async fn sync(&self) {
        let _ = self.server_copy("").await;
    }

    /// The text of `rel` on disk.
    pub fn disk(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Shuts the server down politely.
    pub async fn shutdown(self) {
        self.client.request("shutdown", Value::Null).await.expect("shutdown");
        self.client.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    }
}

/// The text of a successful tool result.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// The error kind of an error tool result (`None` for a success).
pub fn error_kind(result: &Value) -> Option<String> {
    if result["isError"] != true {
        return None;
    }
    let v: Value = serde_json::from_str(&text(result)).expect("error object");
    Some(v["error"].as_str().unwrap_or_default().to_owned())
}

/// Writes a `//- path` fixture under `root`.
pub fn write_fixture(root: &Path, fixture: &str) {
    let mut current: Option<(String, String)> = None;
    let flush = |cur: Option<(String, String)>| {
        if let Some((path, body)) = cur {
            let full = root.join(&path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(full, body).expect("write");
        }
    };
    for line in fixture.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            flush(current.take());
            current = Some((path.trim().to_owned(), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(current);
}

fn spawn_reader<R>(read: R, client: Client, editor: Arc<Editor>, script: Script)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut reader = BufReader::new(read);
        loop {
            let mut len = None;
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    len = n.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; len.expect("Content-Length")];
            if reader.read_exact(&mut body).await.is_err() {
                return;
            }
            let msg: Value = serde_json::from_slice(&body).expect("json");
            match (msg.get("id"), msg.get("method")) {
                (Some(id), Some(method)) => {
                    client.requests.lock().expect("lock").push(msg.clone());
                    let reply = script(&editor, &client, method.as_str().unwrap_or_default(), msg["params"].clone());
                    let answer = match reply.result {
                        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                    };
                    client.send(answer);
                    reply.then.into_iter().for_each(|n| client.send(n));
                }
                (None, Some(_)) => {
                    client.notes.lock().expect("lock").push(msg);
                    client.arrived.notify_waiters();
                }
                (Some(id), None) => {
                    let id = id.as_i64().expect("numeric id");
                    if let Some(tx) = client.pending.lock().expect("lock").remove(&id) {
                        let _ = tx.send(msg);
                    }
                }
                (None, None) => panic!("not a JSON-RPC message: {msg}"),
            }
        }
    });
}
