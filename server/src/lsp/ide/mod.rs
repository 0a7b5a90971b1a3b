//! Claude Code's IDE protocol, served by `tether lsp` in whatever editor runs it: MCP over a
//! loopback WebSocket, found through a lock file in Claude Code's `ide/` folder (`lock.rs`).
//!
//! Claude Code connects when it is started in one of the workspace folders with `--ide`, with
//! `CLAUDE_CODE_SSE_PORT` naming the port, or with `autoConnectIde` set, and on `/ide`. It then
//! asks the editor: the diagnostics before and after each edit, an `openDiff` for an edit that
//! waits for permission (shown through tether's review, and merged with the buffer's unsaved
//! text), the selection, the open files (`claude.rs`).
//!
//! The listener is bound once the editor has workspace folders; every connection must carry the
//! token in `x-claude-code-ide-authorization` and no `Origin` (a browser page cannot set the
//! header, and sends an `Origin`). The handshake is read here, not by an HTTP server: it is one
//! `GET` with a few headers, and the binary is at its size bound. The lock file is published only while no other live server
//! names one of the folders, and removed on the way out.

mod claude;
mod lock;
mod ws;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::shared::Shared;
use crate::bridge::{new_token, tokens_match};

/// The header carrying the lock file's token.
const AUTH_HEADER: &str = "x-claude-code-ide-authorization";

/// How often the lock folder is looked at again: another server that served the project may be
/// gone, and this one takes over.
const RECHECK: Duration = Duration::from_secs(2);

/// The longest message read from a client: an `openDiff` carries a whole file.
const MAX_MESSAGE: usize = crate::mcp::MAX_MESSAGE_BYTES;

/// The state of one `tether lsp`'s IDE server.
pub(crate) struct Ide {
    shared: Arc<Shared>,
    token: String,
    /// The diffs waiting for the user, by tab name: closing the tab answers them.
    diffs: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

impl Ide {
    fn diffs(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<()>>> {
        self.diffs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Serves the IDE protocol for as long as the returned future runs. Never returns.
pub(crate) async fn serve(shared: Arc<Shared>) {
    let Some(dir) = lock::lock_dir() else {
        tracing::info!("no home folder: Claude Code's IDE protocol is not served");
        return std::future::pending().await;
    };
    let mut roots_changed = shared.roots_changed.subscribe();
    let mut server: Option<(u16, Arc<Ide>)> = None;
    let mut published: Option<(lock::Published, Vec<PathBuf>)> = None;
    let mut standing_aside: Option<String> = None;
    loop {
        let roots = roots_changed.borrow_and_update().clone();
        if server.is_none() && !roots.is_empty() {
            server = listen(&shared).await;
        }
        match (&server, roots.is_empty()) {
            (Some((port, ide)), false) => match lock::serving(&dir, &roots) {
                Some((path, other)) => {
                    published = None;
                    let who = format!("{} (pid {}, {})", other.ide_name, other.pid, path.display());
                    if standing_aside.as_ref() != Some(&who) {
                        tracing::info!(serving = %who, "another IDE server serves this project to Claude Code; tether stands aside");
                        standing_aside = Some(who);
                    }
                }
                None if published.as_ref().is_some_and(|(_, r)| *r == roots) => {}
                None => {
                    lock::sweep(&dir);
                    standing_aside = None;
                    published = None;
                    let entry = lock::Lock {
                        pid: std::process::id(),
                        workspace_folders: roots.iter().map(|r| r.to_string_lossy().into_owned()).collect(),
                        ide_name: lock::IDE_NAME.to_owned(),
                        transport: "ws".to_owned(),
                        auth_token: ide.token.clone(),
                    };
                    match lock::Published::write(&dir, *port, &entry) {
                        Ok(p) => {
                            tracing::info!(lock = %p.path().display(), port, "serving Claude Code's IDE protocol");
                            published = Some((p, roots));
                        }
                        Err(e) => {
                            tracing::warn!(dir = %dir.display(), error = %e, "could not publish the IDE lock file")
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

/// Binds a loopback port and accepts connections on it.
async fn listen(shared: &Arc<Shared>) -> Option<(u16, Arc<Ide>)> {
    let token = match new_token() {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "no random token: Claude Code's IDE protocol is not served");
            return None;
        }
    };
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", 0)).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "could not listen on loopback: Claude Code's IDE protocol is not served");
            return None;
        }
    };
    let port = listener.local_addr().ok()?.port();
    let ide = Arc::new(Ide { shared: shared.clone(), token, diffs: Mutex::default() });
    let accepting = ide.clone();
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(connection(accepting.clone(), stream));
                }
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
