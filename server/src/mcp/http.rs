//! `tether mcp --http ADDR`: MCP over streamable HTTP, for clients that cannot start a process.
//!
//! rmcp's streamable HTTP service speaks the protocol; this module puts three guards in front of
//! it and serves it with hyper, one task per connection:
//!
//! - every request carries `Authorization: Bearer TOKEN`, compared in constant time, or gets
//!   `401` before anything else looks at it;
//! - a request whose `Origin` is not a loopback origin (or one allowed with `--allow-origin`) gets
//!   `403`, so that a web page the user visits cannot drive the server through the browser (DNS
//!   rebinding); requests without `Origin` (every non-browser client) pass;
//! - the listener binds a loopback address unless the user says otherwise with
//!   `--http-allow-remote`.
//!
//! rmcp reads one message per POST, so a JSON-RPC batch is taken apart here, in a session on MCP
//! 2025-03-26 (the one revision with batches; see `mcp/batch.rs`): each element is POSTed to
//! the MCP service on its own, concurrently, and the answers to the requests are sent back as one
//! JSON array (`202` when there are none). The session's revision is the one its `initialize`
//! asked for: tether speaks every revision rmcp knows, and MCP has a server that supports the
//! requested version answer with that version.
//!
//! Each MCP session gets its own profile instance and host, so per-session profile state (a
//! chosen workspace) never leaks between clients. The roots are the command line's: an HTTP
//! client's MCP roots never replace them, since whoever holds the token must not be able to
//! widen the sandbox.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context as _};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use subtle::ConstantTimeEq as _;

use super::batch::{self, Element};
pub use super::serve::{serve_connection, Body, Handler};
use super::{Answer, BoxFuture, DiskHost, Host, McpServer, ToolCall};
use crate::config::Config;
use crate::profiles;
use crate::profiles::CallError;
use crate::workspace::Workspace;

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// Origins a browser page served from this machine has: any port on a loopback host.
const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// How the HTTP transport listens and whom it lets in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The file holding the bearer token (surrounding whitespace is ignored).
    pub token_file: PathBuf,
    /// Allow listening on an address other than loopback.
    pub allow_remote: bool,
    /// Browser origins allowed besides the loopback ones (`https://app.example:8443`, `:*` for
    /// any port).
    pub allowed_origins: Vec<String>,
}

/// Refuses a non-loopback address unless the user allowed one.
pub fn check_bind(addr: SocketAddr, allow_remote: bool) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && !allow_remote {
        bail!(
            "refusing to listen on {addr}: it is not a loopback address, so other machines could reach the \
             tools; listen on 127.0.0.1 or [::1], or pass --http-allow-remote to serve the network on purpose"
        );
    }
    Ok(())
}

/// Reads the bearer token from `path`: the file's text without surrounding whitespace.
pub fn read_token(path: &Path) -> anyhow::Result<String> {
    let raw = std::fs::read_to_string(path).with_context(|| format!("reading the token file {}", path.display()))?;
    let token = raw.trim();
    if token.is_empty() {
        bail!("the token file {} is empty; put a long random secret in it", path.display());
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("the token in {} contains whitespace; a bearer token is one word", path.display());
    }
    warn_if_readable_by_others(path);
    Ok(token.to_owned())
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            tracing::warn!(path = %path.display(), "the token file is readable by other users; chmod 600 it");
        }
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

/// Whether an `Authorization` header value carries `token` as a bearer token. The scheme is
/// case-insensitive (RFC 9110); the token is compared in constant time.
pub fn bearer_matches(header: Option<&HeaderValue>, token: &str) -> bool {
    let Some(value) = header.and_then(|h| h.to_str().ok()) else { return false };
    let Some((scheme, given)) = value.trim().split_once(' ') else { return false };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return false;
    }
    bool::from(given.trim().as_bytes().ct_eq(token.as_bytes()))
}

/// A host whose roots are fixed: the command line's, whatever the client says.
struct FixedRoots(DiskHost);

impl Host for FixedRoots {
    fn set_roots(&self, _roots: Vec<PathBuf>) -> crate::Result<()> {
        Err(crate::Error::invalid("over HTTP the workspace roots are the server's; the client's roots are not used"))
    }

    fn call(&self, call: ToolCall) -> BoxFuture<'_, Result<Answer, CallError>> {
        self.0.call(call)
    }
}

/// Serves profile `profile` over streamable HTTP until interrupted (Ctrl-C or `SIGTERM`).
pub fn run_http(profile: &str, config: Config, workspace: Workspace, options: HttpOptions) -> anyhow::Result<()> {
    check_bind(options.addr, options.allow_remote)?;
    let token = read_token(&options.token_file)?;
    // Fail now, not at the first session, on an unknown profile.
    profiles::by_name(profile).map_err(|e| anyhow::anyhow!(e.message().to_owned()))?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let result = rt.block_on(serve(profile.to_owned(), config, workspace, options, token));
    // Open connections end with the runtime; a tool call still running gets a second.
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    result
}

async fn serve(
    profile: String,
    config: Config,
    workspace: Workspace,
    options: HttpOptions,
    token: String,
) -> anyhow::Result<()> {
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|s| (*s).to_owned()).collect();
    origins.extend(options.allowed_origins.iter().cloned());
    let mut http_config =
        StreamableHttpServerConfig::default().with_allowed_origins(origins).enforce_origin_validation();
    if options.allow_remote {
        // Clients on other machines name this one by addresses and host names no list can
        // foresee; the bearer token, which a rebound page cannot know, guards them instead.
        http_config = http_config.disable_allowed_hosts();
    }
    let guard = Arc::new(Guard::new(profile, config, workspace, http_config, token));

    let listener =
        tokio::net::TcpListener::bind(options.addr).await.with_context(|| format!("listening on {}", options.addr))?;
    let local = listener.local_addr()?;
    // The one line a user (or a test) needs: where to connect. Stdout stays unused.
    eprintln!("tether: serving MCP over HTTP at http://{local}{ENDPOINT}");
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Running out of file descriptors must not end the server.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = interrupted() => break,
        };
        let guard = guard.clone();
        let handler: Handler = Arc::new(move |req| {
            let guard = guard.clone();
            Box::pin(async move { guard.handle(req).await })
        });
        tokio::spawn(async move {
            if let Err(e) = serve_connection(stream, handler).await {
                tracing::debug!(%peer, error = %e, "http connection ended");
            }
        });
    }
    Ok(())
}

/// Resolves on Ctrl-C or `SIGTERM`.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The checks in front of the MCP service, and the batches it cannot read.
struct Guard {
    token: String,
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    /// The MCP service's sessions.
    sessions: Arc<LocalSessionManager>,
    /// The sessions on MCP 2025-03-26, which take batches.
    batch_sessions: Mutex<HashSet<String>>,
    /// The largest request body read ([`StreamableHttpServerConfig::max_request_body_bytes`]).
    max_body: usize,
}

impl Guard {
    /// The MCP service for `profile`, one session per client, behind the bearer `token`.
    fn new(
        profile: String,
        config: Config,
        workspace: Workspace,
        http_config: StreamableHttpServerConfig,
        token: String,
    ) -> Guard {
        let max_body = http_config.max_request_body_bytes;
        let factory = move || {
            let p = profiles::by_name(&profile).map_err(|e| std::io::Error::other(e.message().to_owned()))?;
            let host = Arc::new(FixedRoots(DiskHost::new(workspace.clone())));
            Ok(McpServer::new(p, config.clone(), host))
        };
        let sessions = Arc::new(LocalSessionManager::default());
        let mcp = StreamableHttpService::new(factory, sessions.clone(), http_config);
        Guard { token, mcp, sessions, batch_sessions: Mutex::default(), max_body }
    }

    async fn handle<B>(&self, req: Request<B>) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + std::fmt::Display,
    {
        if req.uri().path() != ENDPOINT {
            return plain(StatusCode::NOT_FOUND, &format!("Not Found: the MCP endpoint is {ENDPOINT}"));
        }
        if !bearer_matches(req.headers().get(AUTHORIZATION), &self.token) {
            tracing::warn!("refused an HTTP request without the right bearer token");
            let mut r = plain(StatusCode::UNAUTHORIZED, "Unauthorized: send Authorization: Bearer <token>");
            r.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
        // Host and Origin checks (DNS rebinding) and the protocol itself are the MCP service's.
        let session = req.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if req.method() == hyper::Method::DELETE {
            let response = self.mcp.handle(req).await;
            if let (true, Some(session)) = (response.status().is_success(), session) {
                lock(&self.batch_sessions).remove(&session);
            }
            return response;
        }
        if req.method() != hyper::Method::POST || !is_json(req.headers().get(CONTENT_TYPE)) {
            return self.mcp.handle(req).await;
        }
        // The body is read here, as the service would read it, so that it can be looked at again
        // when the service refuses it: the service answers a JSON body it cannot read as a message
        // `415 Unsupported Media Type`, though the media type was right and the body was wrong.
        let (parts, body) = req.into_parts();
        let body = match http_body_util::Limited::new(body, self.max_body).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                let text = format!("Payload Too Large: request body exceeds {} bytes", self.max_body);
                return plain(StatusCode::PAYLOAD_TOO_LARGE, &text);
            }
            Err(e) => return plain(StatusCode::BAD_REQUEST, &format!("Bad Request: reading the body failed: {e}")),
        };
        if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            if let Ok(elements) = serde_json::from_slice::<Vec<Value>>(&body) {
                return self.batch(&parts, session, elements).await;
            }
        }
        // Only an initialize starts a session, and only a request without one can be it (a large
        // write is not parsed twice).
        let asks_for_batches = session.is_none()
            && memchr::memmem::find(&body, b"\"initialize\"").is_some()
            && serde_json::from_slice::<Value>(&body).is_ok_and(|m| {
                m["method"] == "initialize"
                    && serde_json::from_value(m["params"]["protocolVersion"].clone())
                        .is_ok_and(|v| batch::accepted_in(&v))
            });
        let response = self.mcp.handle(Request::from_parts(parts, Full::new(body.clone()))).await;
        if asks_for_batches && response.status() == StatusCode::OK {
            if let Some(session) = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()) {
                self.takes_batches(session).await;
            }
        }
        if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return response;
        }
        match unreadable_body(&body) {
            Some(error) => json_rpc_error(StatusCode::BAD_REQUEST, error),
            None => response,
        }
    }
}

impl Guard {
    /// Notes that `session` agreed to MCP 2025-03-26, forgetting sessions that have ended since
    /// (the MCP service ends a session idle for five minutes without telling anyone).
    async fn takes_batches(&self, session: &str) {
        let live: HashSet<String> = self.sessions.sessions.read().await.keys().map(|k| k.to_string()).collect();
        let mut batch_sessions = lock(&self.batch_sessions);
        batch_sessions.retain(|s| live.contains(s));
        batch_sessions.insert(session.to_owned());
    }

    /// Answers a batch POSTed in `session`: each element POSTed to the MCP service on its own,
    /// concurrently, and the answers to its requests sent back as one JSON array.
    async fn batch(
        &self,
        parts: &hyper::http::request::Parts,
        session: Option<String>,
        elements: Vec<Value>,
    ) -> Response<Body> {
        if elements.is_empty() {
            return json_rpc_error(StatusCode::BAD_REQUEST, batch::empty());
        }
        if !session.is_some_and(|s| lock(&self.batch_sessions).contains(&s)) {
            return json_rpc_error(StatusCode::BAD_REQUEST, batch::refused("POST one message"));
        }
        let mut answers = Vec::new();
        let mut requests = tokio::task::JoinSet::new();
        let mut ids = HashSet::new();
        for element in elements {
            let message = match batch::element(element) {
                Element::Message(message) => message,
                Element::Refused(id, error) => {
                    answers.push(error_value(error, id));
                    continue;
                }
            };
            let id = batch::request_id(&message);
            // The MCP service would answer only one of two requests with the same id.
            if let Some(id) = id.as_ref().filter(|id| !ids.insert((*id).clone())) {
                answers.push(error_value(batch::id_in_use(id), Some(id.clone())));
                continue;
            }
            let (mcp, request) = (self.mcp.clone(), one_message(parts, &message));
            requests.spawn(async move { answer_of(mcp.handle(request).await, id.as_ref()).await });
        }
        while let Some(done) = requests.join_next().await {
            match done {
                Ok(Ok(answer)) => answers.extend(answer),
                // The session is gone (`404`): so is the whole batch's.
                Ok(Err(response)) => return response,
                Err(e) => {
                    let error = ErrorData::internal_error(format!("a request of the batch failed: {e}"), None);
                    return json_rpc_error(StatusCode::INTERNAL_SERVER_ERROR, error);
                }
            }
        }
        if answers.is_empty() {
            let mut r = Response::new(Full::new(Bytes::new()).boxed());
            *r.status_mut() = StatusCode::ACCEPTED;
            return r;
        }
        let mut r = Response::new(Full::new(Bytes::from(serde_json::to_vec(&answers).unwrap_or_default())).boxed());
        r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        r
    }
}

/// `message` as a POST of its own, with the batch's headers.
fn one_message(parts: &hyper::http::request::Parts, message: &Value) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(Bytes::from(serde_json::to_vec(message).unwrap_or_default())));
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    request.headers_mut().remove(CONTENT_LENGTH);
    request
}

/// The answer the MCP service gave one message of a batch (`None` for a notification or a
/// response, which get none), or the response that answers the whole batch (the session is gone).
async fn answer_of(response: Response<Body>, id: Option<&RequestId>) -> Result<Option<Value>, Response<Body>> {
    let status = response.status();
    if status == StatusCode::NOT_FOUND {
        return Err(response);
    }
    let event_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let Ok(body) = response.into_body().collect().await.map(|b| b.to_bytes());
    let Some(id) = id else { return Ok(None) };
    // A request's stream ends without an answer when the client cancelled the request.
    let cancelled = event_stream && status == StatusCode::OK;
    let messages: Vec<Value> = if event_stream {
        sse_data(&body).filter_map(|data| serde_json::from_str(data).ok()).collect()
    } else {
        serde_json::from_slice(&body).ok().into_iter().collect()
    };
    // On the request's stream, before its answer, may come notifications (progress) and requests
    // to the client; the answer is the one with the request's id.
    let answer = messages.into_iter().find(|m| m.get("method").is_none() && m.get("id").is_some());
    Ok(match answer {
        Some(mut answer) => {
            // The service's own refusals (`400`) carry no id; in an array the id is all there is.
            if answer["id"].is_null() {
                answer["id"] = serde_json::to_value(id).unwrap_or_default();
            }
            Some(answer)
        }
        None if cancelled => None,
        None => {
            let text = String::from_utf8_lossy(&body);
            let error = ErrorData::invalid_request(format!("the request got HTTP {status}: {}", text.trim()), None);
            Some(error_value(error, Some(id.clone())))
        }
    })
}

/// The data of each event of a server-sent event stream (events without data are skipped).
fn sse_data(stream: &[u8]) -> impl Iterator<Item = &str> {
    let text = std::str::from_utf8(stream).unwrap_or_default();
    // Every message the MCP service sends is one `data:` line.
    text.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim_start).filter(|data| !data.is_empty())
}

/// A JSON-RPC error with `id` as a JSON value.
fn error_value(error: ErrorData, id: Option<RequestId>) -> Value {
    serde_json::to_value(ServerJsonRpcMessage::error(error, id)).unwrap_or_default()
}

/// Locks `mutex`, whose data stays whole whatever a holder did.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a `Content-Type` is JSON's, the one the MCP service reads.
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
    essence.trim().eq_ignore_ascii_case("application/json")
}

/// The JSON-RPC error for a POST body the MCP service could not read, when the body is at fault:
/// `-32700` for one that is not JSON.
fn unreadable_body(body: &[u8]) -> Option<ErrorData> {
    let error = serde_json::from_slice::<serde::de::IgnoredAny>(body).err()?;
    Some(ErrorData::parse_error(format!("Parse error: the body is not JSON: {error}"), None))
}

/// A JSON-RPC error with a null id, as an HTTP response with `status`.
fn json_rpc_error(status: StatusCode, error: ErrorData) -> Response<Body> {
    let message: ServerJsonRpcMessage = JsonRpcMessage::error(error, None);
    let body = serde_json::to_vec(&message).unwrap_or_default();
    let mut r = Response::new(Full::new(Bytes::from(body)).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A guard over the standard profile in a fresh directory, with the token `t`.
    fn guard() -> (Guard, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new([dir.path()]).expect("workspace");
        let http = StreamableHttpServerConfig::default();
        (Guard::new("standard".to_owned(), Config::default(), ws, http, "t".to_owned()), dir)
    }

    /// POSTs `body` with `content_type` to the guard, as an MCP client would.
    async fn post(guard: &Guard, content_type: &str, body: &str) -> (StatusCode, String) {
        let (status, _, body) = post_in(guard, None, content_type, body).await;
        (status, body)
    }

    /// POSTs `body` in `session`: the status, the session the answer names, and the body.
    async fn post_in(
        guard: &Guard,
        session: Option<&str>,
        content_type: &str,
        body: &str,
    ) -> (StatusCode, Option<String>, String) {
        let mut req = Request::post(ENDPOINT)
            .header("host", "127.0.0.1")
            .header(AUTHORIZATION, "Bearer t")
            .header("accept", "application/json, text/event-stream")
            .header(CONTENT_TYPE, content_type);
        if let Some(session) = session {
            req = req.header(HEADER_SESSION_ID, session);
        }
        let response = guard.handle(req.body(Full::new(Bytes::from(body.to_owned()))).expect("request")).await;
        let status = response.status();
        let named = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = response.into_body().collect().await.expect("body").to_bytes();
        (status, named, String::from_utf8_lossy(&body).into_owned())
    }

    /// A session initialized asking for protocol `version` (which it gets), and its id.
    async fn start_session(guard: &Guard, version: &str) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        let (status, session, body) = post_in(guard, None, "application/json", &init.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let answer: Value = serde_json::from_str(sse_data(body.as_bytes()).next().expect("an answer")).expect("JSON");
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        let session = session.expect("a session");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        let (status, _, body) = post_in(guard, Some(&session), "application/json", &initialized).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        session
    }

    /// The answers of a batch, sorted by id as JSON text.
    fn sorted(body: &str) -> Vec<Value> {
        let mut answers: Vec<Value> = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
        answers.sort_by_key(|a| a["id"].to_string());
        answers
    }

    #[tokio::test]
    async fn a_2025_03_26_session_takes_batches_and_later_ones_refuse_them() {
        let (guard, dir) = guard();
        std::fs::write(dir.path().join("a.txt"), "alpha\n").expect("write");
        let session = start_session(&guard, "2025-03-26").await;
        let batch = json!([
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "a.txt"}}},
            {"jsonrpc": "2.0", "id": "two", "method": "ping"},
            {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
            7,
            {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        ]);
        let (status, _, body) = post_in(&guard, Some(&session), "application/json", &batch.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let answers = sorted(&body);
        let mut got: Vec<(String, String)> =
            answers.iter().map(|a| (a["id"].to_string(), a["error"]["code"].to_string())).collect();
        got.sort();
        // By id as JSON text: the quoted one first, null (the element that is no message) last.
        // The second request with id 3 is refused; the first is answered as it would be alone.
        let want =
            [("\"two\"", "null"), ("1", "null"), ("3", "-32600"), ("3", "-32601"), ("4", "-32600"), ("null", "-32600")];
        assert_eq!(got, want.map(|(id, code)| (id.to_owned(), code.to_owned())), "{body}");
        let read = answers.iter().find(|a| a["id"] == 1).expect("the read's answer");
        assert!(read["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("alpha"), "{read}");

        // Notifications alone: 202 and no body. An empty batch: one error.
        let quiet = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]).to_string();
        let (status, _, body) = post_in(&guard, Some(&session), "application/json", &quiet).await;
        assert_eq!((status, body.as_str()), (StatusCode::ACCEPTED, ""));
        let (status, _, body) = post_in(&guard, Some(&session), "application/json", "[]").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let empty: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!((empty["id"].clone(), empty["error"]["code"].clone()), (Value::Null, json!(-32600)), "{empty}");

        // A session on a later revision, and a batch outside any session, are refused.
        let later = start_session(&guard, "2025-06-18").await;
        let pings = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string();
        for session in [Some(later.as_str()), None] {
            let (status, _, body) = post_in(&guard, session, "application/json", &pings).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{session:?}: {body}");
            assert!(body.contains("-32600") && body.contains("only in a session on MCP 2025-03-26"), "{body}");
        }
    }

    #[tokio::test]
    async fn a_batch_is_answered_without_a_request_the_client_cancels() {
        let (guard, _dir) = guard();
        let session = start_session(&guard, "2025-03-26").await;
        let slow = if cfg!(windows) { "ping -n 30 127.0.0.1 > nul" } else { "sleep 30" };
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run", "arguments": {"command": slow}}});
        let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, call]);
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
        let (batch, cancel) = (batch.to_string(), cancel.to_string());
        let started = std::time::Instant::now();
        let (answered, cancelled) = tokio::join!(post_in(&guard, Some(&session), "application/json", &batch), async {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            post_in(&guard, Some(&session), "application/json", &cancel).await
        });
        assert_eq!(cancelled.0, StatusCode::ACCEPTED, "{}", cancelled.2);
        let (status, _, body) = answered;
        assert_eq!(status, StatusCode::OK, "{body}");
        let answers = sorted(&body);
        assert_eq!(answers.len(), 1, "{body}");
        assert_eq!((answers[0]["id"].clone(), answers[0]["result"].clone()), (json!(1), json!({})));
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[tokio::test]
    async fn a_body_that_is_not_json_is_a_bad_request() {
        let (guard, _dir) = guard();
        let (status, body) = post(&guard, "application/json", "{\"jsonrpc\": \"2.0\", ").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let answer: serde_json::Value = serde_json::from_str(&body).expect("a JSON-RPC error");
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert_eq!(answer["id"], serde_json::Value::Null, "{answer}");
        let reason = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(reason.starts_with("Parse error: the body is not JSON: "), "{reason}");
        // A wrong media type is still the media type's fault, and a good request still passes.
        let (status, body) = post(&guard, "text/plain", INITIALIZE).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
        let (status, body) = post(&guard, "application/json", &format!("[{INITIALIZE}]")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(body.contains("-32600") && body.contains("batch"), "{body}");
        let (status, body) = post(&guard, "application/json; charset=utf-8", INITIALIZE).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("\"serverInfo\""), "{body}");
    }

    #[test]
    fn bearer_tokens() {
        let h = |s: &'static str| HeaderValue::from_static(s);
        let table = [
            (Some(h("Bearer s3cret")), true),
            (Some(h("bearer s3cret")), true),
            (Some(h("BEARER  s3cret ")), true),
            (Some(h("Bearer s3cre")), false),
            (Some(h("Bearer s3cret2")), false),
            (Some(h("Basic s3cret")), false),
            (Some(h("s3cret")), false),
            (Some(h("Bearer")), false),
            (Some(h("")), false),
            (None, false),
        ];
        for (header, want) in table {
            assert_eq!(bearer_matches(header.as_ref(), "s3cret"), want, "{header:?}");
        }
    }

    #[test]
    fn binds() {
        let table = [
            ("127.0.0.1:0", false, true),
            ("[::1]:0", false, true),
            ("127.8.9.1:80", false, true),
            ("0.0.0.0:0", false, false),
            ("[::]:0", false, false),
            ("192.168.1.2:8080", false, false),
            ("0.0.0.0:0", true, true),
        ];
        for (addr, allow, ok) in table {
            let addr: SocketAddr = addr.parse().expect("address");
            assert_eq!(check_bind(addr, allow).is_ok(), ok, "{addr} allow={allow}");
        }
        let msg = check_bind("0.0.0.0:1".parse().expect("address"), false).expect_err("refused").to_string();
        assert!(msg.contains("--http-allow-remote"), "{msg}");
    }

    #[test]
    fn tokens_from_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cases = [("tok\n", Some("tok")), ("  tok  \n\n", Some("tok")), ("", None), ("\n", None), ("a b", None)];
        for (text, want) in cases {
            let p = dir.path().join("t");
            std::fs::write(&p, text).expect("write");
            assert_eq!(read_token(&p).ok().as_deref(), want, "{text:?}");
        }
        assert!(read_token(&dir.path().join("missing")).is_err());
    }
}
