//! Gemini CLI's IDE companion spec: MCP over streamable HTTP at `/mcp`, a bearer token on every
//! request, the tools `openDiff` and `closeDiff`, and the notifications `ide/contextUpdate`,
//! `ide/diffAccepted` and `ide/diffRejected`, sent on the stream the client opens with a `GET`.
//!
//! The CLI asks for a diff when an edit waits for the user's permission: `openDiff` carries the
//! whole new file, computed from the file on disk, and is answered at once; the user's decision
//! comes later as a notification. The proposal is shown through tether's review, carried onto the
//! buffer's unsaved text, and the text accepted (the user's edit of it, or the merge) goes back in
//! `ide/diffAccepted`: the CLI writes it to the file, and tether merges that write into the buffer.
//! An editor without tether's review gets no `openDiff` in the tool list, so the CLI asks in the
//! terminal instead.
//!
//! The server holds no sessions: every request is answered on its own, and notifications go to
//! every open stream. `tools/list`, which the CLI sends right after connecting, is answered as an
//! event stream whose first event is the current context, so that the first prompt has it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{HeaderValue, AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, ORIGIN};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::claude::{resolve, view};
use super::{locked, Decided, Ide, MAX_MESSAGE};
use crate::mcp::http::{bearer_matches, serve_connection, Body, Handler};

/// The path the companion is served at.
const ENDPOINT: &str = "/mcp";

/// The MCP revisions the CLI's client speaks; another asked for gets the first.
const REVISIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// How often an idle event stream carries a comment: the CLI's HTTP client drops a body silent
/// for five minutes, and takes that for the IDE going away.
const KEEPALIVE: Duration = Duration::from_secs(30);

/// The most open files told: the CLI keeps ten.
const MAX_OPEN_FILES: usize = 10;

/// Serves one connection (HTTP/1.1, kept alive).
pub(super) async fn connection(ide: Arc<Ide>, stream: tokio::net::TcpStream) {
    let handler: Handler = Arc::new(move |req| {
        let ide = ide.clone();
        Box::pin(async move { handle(&ide, req).await })
    });
    if let Err(e) = serve_connection(stream, handler).await {
        tracing::debug!(error = %e, "a Gemini CLI connection ended");
    }
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    r
}

fn json_response(value: &Value) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(value.to_string())).boxed());
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn event(text: &str) -> String {
    format!("event: message\ndata: {text}\n\n")
}

fn event_stream(body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

async fn handle(ide: &Arc<Ide>, req: Request<Incoming>) -> Response<Body> {
    if req.uri().path() != ENDPOINT {
        return plain(StatusCode::NOT_FOUND, &format!("Not Found: the MCP endpoint is {ENDPOINT}"));
    }
    if !bearer_matches(req.headers().get(AUTHORIZATION), &ide.token) {
        return plain(StatusCode::UNAUTHORIZED, "Unauthorized: send Authorization: Bearer <token>");
    }
    if req.headers().contains_key(ORIGIN) {
        return plain(StatusCode::FORBIDDEN, "Forbidden: browser origins are not served");
    }
    match *req.method() {
        Method::GET => {
            tracing::info!("Gemini CLI connected to the IDE server");
            let keepalive = tokio::time::interval_at(tokio::time::Instant::now() + KEEPALIVE, KEEPALIVE);
            event_stream(Events { rx: ide.connect(), keepalive }.boxed())
        }
        Method::POST => {
            let body = match http_body_util::Limited::new(req.into_body(), MAX_MESSAGE).collect().await {
                Ok(b) => b.to_bytes(),
                Err(e) => return plain(StatusCode::BAD_REQUEST, &format!("Bad Request: {e}")),
            };
            let message: Value = match serde_json::from_slice(&body) {
                Ok(v) => v,
                Err(e) => {
                    let error = json!({"jsonrpc": "2.0", "id": null,
                                       "error": {"code": -32700, "message": format!("parse error: {e}")}});
                    let mut r = json_response(&error);
                    *r.status_mut() = StatusCode::BAD_REQUEST;
                    return r;
                }
            };
            post(ide, &message).await
        }
        _ => plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed: POST messages, GET the event stream"),
    }
}

/// One message: a request is answered; a notification or an answer gets `202`.
async fn post(ide: &Arc<Ide>, message: &Value) -> Response<Body> {
    let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
        let mut r = Response::new(Full::new(Bytes::new()).boxed());
        *r.status_mut() = StatusCode::ACCEPTED;
        return r;
    };
    let params = &message["params"];
    let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match method {
        "initialize" => {
            let asked = params["protocolVersion"].as_str();
            let revision = REVISIONS.iter().find(|r| Some(**r) == asked).unwrap_or(&REVISIONS[0]);
            json_response(&answer(json!({
                "protocolVersion": revision,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tether", "version": env!("CARGO_PKG_VERSION")},
            })))
        }
        "ping" => json_response(&answer(json!({}))),
        "tools/list" => {
            let result = answer(json!({"tools": tools(ide)}));
            let Some(context) = context_update(ide).await else { return json_response(&result) };
            let context = json!({"jsonrpc": "2.0", "method": "ide/contextUpdate", "params": context});
            *locked(&ide.last_context) = Some(context["params"].to_string());
            let events = event(&context.to_string()) + &event(&result.to_string());
            event_stream(Full::new(Bytes::from(events)).boxed())
        }
        "tools/call" => {
            let args = &params["arguments"];
            let path = args["filePath"].as_str().unwrap_or_default();
            let result = match params["name"].as_str().unwrap_or_default() {
                "openDiff" => open_diff(ide, path, args["newContent"].as_str().unwrap_or_default()),
                "closeDiff" => {
                    let shown = ide.close_diff(path);
                    Ok(json!([{"type": "text", "text": json!({"content": shown}).to_string()}]))
                }
                other => Err(format!("unknown tool: {other}")),
            };
            json_response(&answer(match result {
                Ok(content) => json!({"content": content}),
                Err(message) => json!({"content": [{"type": "text", "text": message}], "isError": true}),
            }))
        }
        other => json_response(&json!({"jsonrpc": "2.0", "id": id,
                                       "error": {"code": -32601, "message": format!("method not found: {other}")}})),
    }
}

/// The diff tools, listed only where the editor shows tether's review (parsed when asked for: a
/// `json!` of the same costs the binary far more than this text).
const TOOLS: &str = r#"[
{"name": "openDiff", "description": "Show a proposed change to a file for review in the editor",
 "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"}, "newContent": {"type": "string"}},
  "required": ["filePath", "newContent"]}},
{"name": "closeDiff", "description": "Close a proposal shown for review; answers the text it showed",
 "inputSchema": {"type": "object", "properties": {"filePath": {"type": "string"},
  "suppressNotification": {"type": "boolean"}}, "required": ["filePath"]}}
]"#;

fn tools(ide: &Ide) -> Value {
    if !ide.shared.caps().review {
        return json!([]);
    }
    serde_json::from_str(TOOLS).unwrap_or_default()
}

/// Shows the proposal and answers at once; the decision follows as a notification.
fn open_diff(ide: &Arc<Ide>, given: &str, proposed: &str) -> Result<Value, String> {
    let (vfs, p) = resolve(ide, given)?;
    let target = super::on_the_buffer(ide, &vfs, &p, proposed);
    let mut closed = ide.open_diff(given, &target);
    let (ide, key) = (ide.clone(), given.to_owned());
    tokio::spawn(async move {
        let summary = "Gemini CLI proposes this change";
        let decided = super::review(&ide, &vfs, &p, &target, summary, &mut closed).await;
        if !matches!(decided, Decided::Closed) {
            ide.diffs().remove(&key);
        }
        match decided {
            Decided::Accepted(content) => ide.notify("ide/diffAccepted", json!({"filePath": key, "content": content})),
            Decided::Unchanged => ide.notify("ide/diffAccepted", json!({"filePath": key, "content": target})),
            Decided::Rejected => ide.notify("ide/diffRejected", json!({"filePath": key})),
            // Closed by the CLI, which decided itself; or left to the CLI's own prompt.
            Decided::Closed | Decided::NoReview => {}
        }
    });
    Ok(json!([]))
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `ide/contextUpdate`'s parameters: the open documents not denied, the focused one first with
/// its cursor and selection (1-based), each with the time it last had the focus.
pub(super) async fn context_update(ide: &Arc<Ide>) -> Option<Value> {
    let shown = view(ide).await.and_then(|v| v.editors.into_iter().find(|e| e.active));
    let visible = |p: &std::path::Path| resolve(ide, &p.to_string_lossy()).is_ok();
    let shown = shown.filter(|e| visible(&e.path));
    let mut focus = locked(&ide.focus);
    if let Some(active) = &shown {
        let newest = focus.values().max().copied();
        if focus.get(&active.path).is_none_or(|t| Some(*t) != newest) {
            focus.insert(active.path.clone(), now_ms());
        }
    }
    let mut files: Vec<(u64, Value)> = ide
        .shared
        .store
        .all()
        .into_iter()
        .filter(|(p, _)| visible(p))
        .map(|(path, _)| {
            let timestamp = focus.get(&path).copied().unwrap_or(0);
            let mut file = json!({"path": path, "timestamp": timestamp});
            if let Some(active) = shown.as_ref().filter(|a| a.path == path) {
                file["isActive"] = json!(true);
                if let Some((span, text)) = active.selections.first() {
                    file["cursor"] = json!({"line": span.end.line + 1, "character": span.end.character + 1});
                    if !text.is_empty() {
                        file["selectedText"] = json!(text);
                    }
                }
            }
            (timestamp, file)
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let open_files: Vec<Value> = files.into_iter().take(MAX_OPEN_FILES).map(|(_, f)| f).collect();
    Some(json!({"workspaceState": {"openFiles": open_files}}))
}

/// The body of an event stream: the notifications sent to this client, and a comment when idle.
struct Events {
    rx: mpsc::UnboundedReceiver<String>,
    keepalive: tokio::time::Interval,
}

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(text)) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(event(&text)))))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match self.keepalive.poll_tick(cx) {
                Poll::Ready(_) => Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b": keepalive\n\n"))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// The focus times of the files, by path.
pub(super) type Focus = HashMap<std::path::PathBuf, u64>;
