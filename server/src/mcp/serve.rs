//! Serving HTTP/1.1 connections, for every HTTP server in the binary (`tether mcp --http`, Gemini
//! CLI's IDE companion in `tether lsp`). The handler is type-erased so that hyper's connection
//! machinery is built once, not once per server.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Bytes;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

use super::BoxFuture;

/// A response body.
pub type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// What answers each request of a connection.
pub type Handler = Arc<dyn Fn(Request<hyper::body::Incoming>) -> BoxFuture<'static, Response<Body>> + Send + Sync>;

/// Serves one HTTP/1.1 connection (kept alive) with `handler`.
pub async fn serve_connection(stream: tokio::net::TcpStream, handler: Handler) -> Result<(), hyper::Error> {
    let service = hyper::service::service_fn(move |req| {
        let answer = handler(req);
        async move { Ok::<_, Infallible>(answer.await) }
    });
    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await
}
