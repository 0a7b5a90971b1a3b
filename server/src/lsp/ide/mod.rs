//! The IDE protocols of the assistant CLIs, served by `tether lsp` in whatever editor runs it, so
//! that a CLI in a terminal beside the editor asks the editor what it knows and shows its edits
//! there for review: Claude Code's (MCP over a loopback WebSocket, `claude.rs`) and Gemini CLI's
//! companion spec (MCP over loopback HTTP, `gemini.rs`), each found through a discovery file
//! (`lock.rs`).
//!
//! Claude Code connects when it is started in one of the workspace folders with `--ide`, with
//! `CLAUDE_CODE_SSE_PORT` naming the port, or with `autoConnectIde` set, and on `/ide`. It then
//! asks the editor: the diagnostics before and after each edit, an `openDiff` for an edit that
//! waits for permission (shown through tether's review, and merged with the buffer's unsaved
//! text), the selection, the open files. Gemini CLI connects when its `ide.enabled` setting is
//! on, and shows each edit that waits for permission through `openDiff` the same way; it is told
//! the open files, the cursor and the selection (`ide/contextUpdate`).
//!
//! Each listener is bound once the editor has workspace folders; every request must carry the
//! token and no `Origin` (a browser page cannot set the header, and sends an `Origin`). Claude
//! Code's handshake is read here, not by an HTTP server: it is one `GET` with a few headers. A
//! discovery file is published only while no other live server names one of the folders, and
//! removed on the way out. What the user looks at is pushed to connected clients only, read
//! from the editor once a second while one is connected, and never names a denied path.

mod claude;
mod gemini;
mod lock;
mod ws;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::shared::{review_or_withdraw, Shared};
use crate::bridge::{new_token, tokens_match};
use crate::edit::{Base, EditPlan, FileOp};
use crate::journal::merge::carry;
use crate::vfs::Vfs;
use crate::workspace::SandboxPath;
use lock::Kind;

/// The header carrying Claude Code's token.
const AUTH_HEADER: &str = "x-claude-code-ide-authorization";

/// How often the discovery folder is looked at again: another server that served the project
/// may be gone, and this one takes over.
const RECHECK: Duration = Duration::from_secs(2);

/// How often what the user looks at is read from the editor while a client is connected.
const CONTEXT_EVERY: Duration = Duration::from_secs(1);

/// The longest message read from a client: an `openDiff` carries a whole file.
const MAX_MESSAGE: usize = crate::mcp::MAX_MESSAGE_BYTES;

/// A proposal waiting for the user.
struct Diff {
    /// Answers the waiting request when the CLI closes the diff.
    close: oneshot::Sender<()>,
    /// The text shown.
    text: String,
}

/// The state of one `tether lsp`'s IDE server for one CLI.
pub(crate) struct Ide {
    kind: Kind,
    shared: Arc<Shared>,
    token: String,
    /// The diffs waiting for the user, by tab name (Claude Code) or path (Gemini CLI): closing
    /// one answers it.
    diffs: Mutex<HashMap<String, Diff>>,
    /// The connected clients' notification channels.
    clients: Mutex<Vec<mpsc::UnboundedSender<String>>>,
    /// The last context notification sent (`None`: send the next one whatever it says).
    last_context: Mutex<Option<String>>,
    /// When each file last had the focus (Gemini CLI orders the open files by it).
    focus: Mutex<gemini::Focus>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Ide {
    fn diffs(&self) -> MutexGuard<'_, HashMap<String, Diff>> {
        locked(&self.diffs)
    }

    /// Starts sending notifications to a new client, the current context first.
    fn connect(&self) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        locked(&self.clients).push(tx);
        *locked(&self.last_context) = None;
        rx
    }

    /// Sends a notification to every connected client.
    fn notify(&self, method: &str, params: Value) {
        let text = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        locked(&self.clients).retain(|c| c.send(text.clone()).is_ok());
    }

    /// Registers a proposal under `key` (a tab name, a path), closing one shown under it before:
    /// the receiver resolves when the CLI closes it.
    fn open_diff(&self, key: &str, text: &str) -> oneshot::Receiver<()> {
        let (close, closed) = oneshot::channel();
        if let Some(earlier) = self.diffs().insert(key.to_owned(), Diff { close, text: text.to_owned() }) {
            let _ = earlier.close.send(());
        }
        closed
    }

    /// Closes the proposal under `key`, answering its request; the text it showed.
    fn close_diff(&self, key: &str) -> Option<String> {
        let diff = self.diffs().remove(key)?;
        let _ = diff.close.send(());
        Some(diff.text)
    }
}

/// How a proposal shown for review ended.
enum Decided {
    /// Accepted, with the text the user accepted (edited or not).
    Accepted(String),
    /// Rejected by the user, or not answered in time.
    Rejected,
    /// Closed by the CLI before the user answered.
    Closed,
    /// The proposal changes nothing.
    Unchanged,
    /// The editor shows no review.
    NoReview,
}

/// The text to propose for `p`: the CLI's `proposed` text, computed from the file on disk,
/// carried onto the buffer's unsaved changes when it has some (three ways: the disk text the
/// buffer is based on, the proposal, the buffer), so that the review shows the CLI's change on
/// top of the user's text and accepting keeps both.
fn on_the_buffer(ide: &Ide, vfs: &Vfs, p: &SandboxPath, proposed: &str) -> String {
    match ide.shared.store.get_with_disk(p.real()) {
        Some((doc, Some(known))) if doc.dirty && vfs.read_shared(p).is_ok() => {
            carry(&known.to_string(), proposed, &doc.rope.to_string()).unwrap_or_else(|_| proposed.to_owned())
        }
        _ => proposed.to_owned(),
    }
}

/// Shows `target` as the new text of `p` through tether's review in the editor, until the user
/// decides or `closed` resolves. Nothing is written: the CLI writes the accepted text itself
/// (and refuses to write a file that changed since it read it), and tether merges that write
/// into the buffer, which already holds both sides' changes.
async fn review(
    ide: &Ide,
    vfs: &Vfs,
    p: &SandboxPath,
    target: &str,
    summary: &str,
    closed: &mut oneshot::Receiver<()>,
) -> Decided {
    let shared = &ide.shared;
    let plan = match vfs.read_shared(p) {
        Ok(file) => EditPlan::edit_to(p.clone(), Base::from(file), target),
        Err(_) => {
            EditPlan::one(FileOp::Create { path: p.clone(), text: target.to_owned(), overwrite: false, mode: None })
        }
    };
    if plan.is_empty() {
        return Decided::Unchanged;
    }
    if !shared.caps().review {
        return Decided::NoReview;
    }
    let params = crate::lsp::review::proposal("openDiff", "assistant", Some(summary), &plan, vfs);
    let wait = shared.review().timeout.unwrap_or(crate::lsp::review::DEFAULT_TIMEOUT);
    let answer = tokio::select! {
        a = review_or_withdraw(&shared.client, params, wait) => a,
        _ = closed => return Decided::Closed,
    };
    let Some(Ok(answer)) = answer else { return Decided::Rejected };
    let accepted = matches!(answer.decision.as_str(), "accept" | "partial")
        && answer.files.first().is_none_or(|f| f.decision == "accept");
    if !accepted {
        return Decided::Rejected;
    }
    Decided::Accepted(answer.files.into_iter().next().and_then(|f| f.text).unwrap_or_else(|| target.to_owned()))
}

/// Which IDE servers serve the `tether lsp` of process `pid` and its `roots`, for `tether
/// status`: per CLI, its key, a line for people, and the same as JSON.
pub(crate) fn status(pid: u32, roots: &[PathBuf]) -> Vec<(&'static str, String, Value)> {
    [(Kind::Claude, "claude-code"), (Kind::Gemini, "gemini-cli")]
        .into_iter()
        .map(|(kind, key)| match lock::served(kind, pid, roots) {
            lock::Served::Itself(file) => (
                key,
                format!("serving {}'s IDE protocol ({})", kind.cli(), file.display()),
                json!({"state": "serving", "file": file}),
            ),
            lock::Served::Other(file, other) => (
                key,
                format!(
                    "standing aside: {} (pid {}) serves {} ({})",
                    other.name,
                    other.pid,
                    kind.cli(),
                    file.display()
                ),
                json!({"state": "standing aside", "file": file, "server": other.name, "pid": other.pid}),
            ),
            lock::Served::Nobody => (key, format!("not serving {}", kind.cli()), json!({"state": "not serving"})),
        })
        .collect()
}

/// Serves the IDE protocols for as long as the returned future runs. Never returns.
pub(crate) async fn serve(shared: Arc<Shared>) {
    tokio::join!(serve_kind(shared.clone(), Kind::Claude), serve_kind(shared, Kind::Gemini));
}

/// Serves `kind`'s protocol: listens once there are workspace folders, and publishes the
/// discovery file while no other server serves them.
async fn serve_kind(shared: Arc<Shared>, kind: Kind) {
    let cli = kind.cli();
    let Some(dir) = kind.dir() else {
        tracing::info!("no home folder: {cli}'s IDE protocol is not served");
        return std::future::pending().await;
    };
    let mut roots_changed = shared.roots_changed.subscribe();
    let mut server: Option<(u16, Arc<Ide>)> = None;
    let mut published: Option<(lock::Published, Vec<PathBuf>)> = None;
    let mut standing_aside: Option<String> = None;
    loop {
        let roots = roots_changed.borrow_and_update().clone();
        if server.is_none() && !roots.is_empty() {
            server = listen(&shared, kind).await;
        }
        match (&server, roots.is_empty()) {
            (Some((port, ide)), false) => match lock::serving(kind, &dir, &roots) {
                Some((path, other)) => {
                    published = None;
                    let who = format!("{} (pid {}, {})", other.name, other.pid, path.display());
                    if standing_aside.as_ref() != Some(&who) {
                        tracing::info!(serving = %who, "another IDE server serves this project to {cli}; tether stands aside");
                        standing_aside = Some(who);
                    }
                }
                None if published.as_ref().is_some_and(|(_, r)| *r == roots) => {}
                None => {
                    lock::sweep(kind, &dir);
                    standing_aside = None;
                    published = None;
                    let text = kind.encode(*port, &ide.token, &roots);
                    match lock::Published::write(kind, &dir, *port, &text) {
                        Ok(p) => {
                            tracing::info!(file = %p.path().display(), port, "serving {cli}'s IDE protocol");
                            published = Some((p, roots));
                        }
                        Err(e) => {
                            tracing::warn!(dir = %dir.display(), error = %e, "could not publish {cli}'s IDE discovery file")
                        }
                    }
                }
            },
            _ => published = None,
        }
        tokio::select! {
            changed = roots_changed.changed() => if changed.is_err() {
                return std::future::pending().await;
            },
            () = tokio::time::sleep(RECHECK) => {}
        }
    }
}

/// Sends what the user looks at to the connected clients when it changes.
async fn push_context(ide: Arc<Ide>) {
    loop {
        tokio::time::sleep(CONTEXT_EVERY).await;
        if locked(&ide.clients).iter().all(mpsc::UnboundedSender::is_closed) {
            continue;
        }
        let Some((method, params)) = (match ide.kind {
            Kind::Claude => claude::selection_changed(&ide).await,
            Kind::Gemini => gemini::context_update(&ide).await.map(|c| ("ide/contextUpdate", c)),
        }) else {
            continue;
        };
        let text = params.to_string();
        let fresh = locked(&ide.last_context).as_ref() != Some(&text);
        if fresh {
            ide.notify(method, params);
            *locked(&ide.last_context) = Some(text);
        }
    }
}

/// Binds a loopback port and accepts `kind`'s connections on it.
async fn listen(shared: &Arc<Shared>, kind: Kind) -> Option<(u16, Arc<Ide>)> {
    let cli = kind.cli();
    let token = match new_token() {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "no random token: {cli}'s IDE protocol is not served");
            return None;
        }
    };
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "could not listen on loopback: {cli}'s IDE protocol is not served");
            return None;
        }
    };
    let port = listener.local_addr().ok()?.port();
    let ide = Arc::new(Ide {
        kind,
        shared: shared.clone(),
        token,
        diffs: Mutex::default(),
        clients: Mutex::default(),
        last_context: Mutex::default(),
        focus: Mutex::default(),
    });
    tokio::spawn(push_context(ide.clone()));
    let accepting = ide.clone();
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => match kind {
                    Kind::Claude => drop(tokio::spawn(connection(accepting.clone(), stream))),
                    Kind::Gemini => drop(tokio::spawn(gemini::connection(accepting.clone(), stream))),
                },
                Err(e) => {
                    tracing::warn!(error = %e, "accepting an IDE connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    });
    Some((port, ide))
}

/// The longest handshake read before the connection is dropped.
const MAX_HEAD: usize = 16 << 10;

/// How long a client has to send its handshake.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// One connection: the WebSocket handshake (an HTTP/1.1 `GET` with `Upgrade: websocket`, read
/// here up to its blank line: the client sends nothing more before the answer), then the session.
async fn connection(ide: Arc<Ide>, stream: tokio::net::TcpStream) {
    let mut stream = BufReader::new(stream);
    let mut head = Vec::new();
    let read = tokio::time::timeout(HEAD_TIMEOUT, async {
        while !head.ends_with(b"\r\n\r\n") {
            if head.len() > MAX_HEAD || stream.read_until(b'\n', &mut head).await.ok()? == 0 {
                return None;
            }
        }
        Some(())
    });
    if !matches!(read.await, Ok(Some(()))) {
        return;
    }
    match handshake(&ide, &String::from_utf8_lossy(&head)) {
        Ok(answer) => {
            if stream.write_all(answer.as_bytes()).await.is_ok() {
                session(ide, stream).await;
            }
        }
        Err((status, why)) => {
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{why}\n",
                why.len() + 1
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    }
}

/// The answer to a handshake: `101` with the accept key, or the status and why not.
fn handshake(ide: &Ide, head: &str) -> Result<String, (&'static str, &'static str)> {
    let mut lines = head.split("\r\n");
    let request = lines.next().unwrap_or_default();
    if !request.starts_with("GET ") {
        return Err(("405 Method Not Allowed", "this endpoint speaks MCP over WebSocket only"));
    }
    let headers: Vec<(String, &str)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim()))
        .collect();
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    if !header(AUTH_HEADER).is_some_and(|t| tokens_match(t, &ide.token)) {
        return Err(("401 Unauthorized", "missing or wrong x-claude-code-ide-authorization token"));
    }
    if header("origin").is_some() {
        return Err(("403 Forbidden", "browser origins are not served"));
    }
    let upgrading = header("upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    let Some(key) = header("sec-websocket-key").filter(|_| upgrading) else {
        return Err(("400 Bad Request", "this endpoint speaks MCP over WebSocket only"));
    };
    let mcp = header("sec-websocket-protocol").is_some_and(|p| p.split(',').any(|p| p.trim() == "mcp"));
    Ok(format!(
        "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: {}\r\n{}\r\n",
        ws::accept_key(key),
        if mcp { "sec-websocket-protocol: mcp\r\n" } else { "" }
    ))
}

/// What the connection's writer sends.
enum Out {
    Text(String),
    Pong(Vec<u8>),
    Close(u16, String),
}

/// One client's session: requests are answered concurrently (an `openDiff` waits for the user
/// while other requests go on), in whatever order they finish.
async fn session<T>(ide: Arc<Ide>, io: T)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
{
    let (read, mut write) = tokio::io::split(io);
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let writer = tokio::spawn(async move {
        while let Some(out) = rx.recv().await {
            let sent = match &out {
                Out::Text(t) => ws::send_text(&mut write, t).await,
                Out::Pong(p) => ws::send_pong(&mut write, p).await,
                Out::Close(code, why) => ws::send_close(&mut write, *code, why).await,
            };
            if sent.is_err() || matches!(out, Out::Close(..)) {
                break;
            }
        }
    });
    let mut reader = ws::Reader::new(read, MAX_MESSAGE);
    tracing::info!("Claude Code connected to the IDE server");
    let mut notifications = ide.connect();
    let forward = tx.clone();
    let forwarding = tokio::spawn(async move {
        while let Some(n) = notifications.recv().await {
            if forward.send(Out::Text(n)).is_err() {
                break;
            }
        }
    });
    loop {
        match reader.next().await {
            Ok(ws::Received::Text(text)) => dispatch(&ide, &tx, &text),
            Ok(ws::Received::Ping(p)) => {
                let _ = tx.send(Out::Pong(p));
            }
            Ok(ws::Received::Closed) => {
                let _ = tx.send(Out::Close(1000, String::new()));
                break;
            }
            Err(broken) => {
                tracing::debug!(code = broken.code, reason = %broken.reason, "closing the IDE connection");
                let _ = tx.send(Out::Close(broken.code, broken.reason));
                break;
            }
        }
    }
    forwarding.abort();
    drop(tx);
    let _ = writer.await;
    tracing::info!("Claude Code left the IDE server");
}

/// One JSON-RPC message: a request is answered on its own task; notifications and answers
/// need nothing back.
fn dispatch(ide: &Arc<Ide>, tx: &mpsc::UnboundedSender<Out>, text: &str) {
    let message: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let error = json!({"jsonrpc": "2.0", "id": null,
                               "error": {"code": -32700, "message": format!("parse error: {e}")}});
            let _ = tx.send(Out::Text(error.to_string()));
            return;
        }
    };
    let Some(method) = message.get("method").and_then(Value::as_str).map(str::to_owned) else { return };
    let Some(id) = message.get("id").cloned() else {
        tracing::debug!(%method, "IDE notification");
        return;
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let (ide, tx) = (ide.clone(), tx.clone());
    tokio::spawn(async move {
        let answer = match claude::request(&ide, &method, params).await {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        };
        let _ = tx.send(Out::Text(answer.to_string()));
    });
}
