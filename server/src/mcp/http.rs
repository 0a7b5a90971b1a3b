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
//! Each MCP session gets its own profile instance and host, so per-session profile state (a
//! chosen workspace) never leaks between clients. The roots are the command line's: an HTTP
//! client's MCP roots never replace them, since whoever holds the token must not be able to
//! widen the sandbox.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context as _};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::{ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq as _;

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
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let guard = guard.clone();
                async move { Ok::<_, Infallible>(guard.handle(req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
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

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The checks in front of the MCP service.
struct Guard {
    token: String,
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
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
        let mcp = StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), http_config);
        Guard { token, mcp, max_body }
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
        let response = self.mcp.handle(Request::from_parts(parts, Full::new(body.clone()))).await;
        if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
            return response;
        }
        match unreadable_body(&body) {
            Some(error) => json_rpc_error(StatusCode::BAD_REQUEST, error),
            None => response,
        }
    }
}

/// Whether a `Content-Type` is JSON's, the one the MCP service reads.
fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
    essence.trim().eq_ignore_ascii_case("application/json")
}

/// The JSON-RPC error for a POST body the MCP service could not read, when the body is at fault:
/// `-32700` for one that is not JSON, `-32600` for a batch (rmcp takes one message at a time).
fn unreadable_body(body: &[u8]) -> Option<ErrorData> {
    if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return Some(ErrorData::parse_error(format!("Parse error: the body is not JSON: {error}"), None));
    }
    let batch = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    batch.then(|| {
        ErrorData::invalid_request("Invalid request: a batch (JSON array) is not accepted; POST one message", None)
    })
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
        let req = Request::post(ENDPOINT)
            .header("host", "127.0.0.1")
            .header(AUTHORIZATION, "Bearer t")
            .header("accept", "application/json, text/event-stream")
            .header(CONTENT_TYPE, content_type)
            .body(Full::new(Bytes::from(body.to_owned())))
            .expect("request");
        let response = guard.handle(req).await;
        let status = response.status();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
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
