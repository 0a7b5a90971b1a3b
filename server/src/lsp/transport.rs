//! Serving over a byte stream, numbering the messages read, and stopping on `exit`.
//!
//! [`Service`] numbers every request and notification in the order tower-lsp reads them, before
//! any handler runs (tower-lsp runs handlers on a queue of their own, so a response from the
//! editor can reach the request waiting for it before an earlier notification's handler ran).
//! With that number a `didChange` is known to have been read after the editor's answer to a
//! `workspace/applyEdit`, which is what tells a skipped edit from one not reported yet
//! ([`super::track`]).
//!
//! tower-lsp 0.20 handles `exit` by closing its client channel, but its read loop only notices
//! when the next message arrives, so a server whose editor keeps the pipe open after `exit` would
//! never stop. The request stream of the client socket ends exactly when that channel closes;
//! [`ExitSignal`] turns that end into a signal the serving future is raced against.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tower_lsp::jsonrpc::{Request, Response};
use tower_lsp::{ClientSocket, ExitedError, Loopback, LspService, Server};

use super::arrivals::Arrivals;
use super::server::Backend;

/// tether's tower service: tower-lsp's own, numbering each message as it is read.
pub struct Service {
    inner: LspService<Backend>,
    arrivals: Arc<Arrivals>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("arrivals", &self.arrivals).finish_non_exhaustive()
    }
}

impl Service {
    pub(crate) fn new(inner: LspService<Backend>) -> Service {
        let arrivals = inner.inner().shared().arrivals.clone();
        Service { inner, arrivals }
    }

    /// The language server behind the service.
    pub fn inner(&self) -> &Backend {
        self.inner.inner()
    }
}

impl tower_service::Service<Request> for Service {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = Numbered<<LspService<Backend> as tower_service::Service<Request>>::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ExitedError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // Called by tower-lsp's read loop, in the order the messages were read.
        let number = self.arrivals.arrive();
        Numbered { number, arrivals: self.arrivals.clone(), inner: self.inner.call(without_null_params(req)) }
    }
}

/// `"params": null` read as no params. JSON-RPC allows only an object or an array there, but
/// clients send `null` for methods that take none (Emacs's jsonrpc.el for `shutdown` and `exit`),
/// and tower-lsp refuses it even there ("Unexpected params: null"), after it has already moved to
/// shutting down, so the client saw an error and `exit` ended the server with status 1.
fn without_null_params(req: Request) -> Request {
    if !req.params().is_some_and(serde_json::Value::is_null) {
        return req;
    }
    let (method, id, _) = req.into_parts();
    let call = Request::build(method);
    match id {
        Some(id) => call.id(id).finish(),
        None => call.finish(),
    }
}

/// A handler's future that says, while it is polled, which message it handles.
pub struct Numbered<F> {
    number: u64,
    arrivals: Arc<Arrivals>,
    inner: F,
}

impl<F: Future + Unpin> Future for Numbered<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.arrivals.set_running(self.number);
        Pin::new(&mut self.inner).poll(cx)
    }
}

/// The client socket, reporting when its request stream ends.
struct ExitSignal {
    socket: ClientSocket,
    exited: oneshot::Sender<()>,
}

impl Loopback for ExitSignal {
    type RequestStream = SignalOnEnd<<ClientSocket as Loopback>::RequestStream>;
    type ResponseSink = <ClientSocket as Loopback>::ResponseSink;

    fn split(self) -> (Self::RequestStream, Self::ResponseSink) {
        let (requests, responses) = Loopback::split(self.socket);
        (SignalOnEnd { inner: requests, exited: Some(self.exited) }, responses)
    }
}

/// A stream that sends a signal when it ends.
struct SignalOnEnd<S> {
    inner: S,
    exited: Option<oneshot::Sender<()>>,
}

impl<S: Stream<Item = Request> + Unpin> Stream for SignalOnEnd<S> {
    type Item = Request;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Request>> {
        let next = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(None) = next {
            if let Some(tx) = self.exited.take() {
                let _ = tx.send(());
            }
        }
        next
    }
}

/// Serves `service` over `input`/`output` with `concurrency` handler slots, until the client
/// sends `exit` or closes `input`.
pub(crate) async fn serve_until_exit<I, O>(
    input: I,
    output: O,
    service: Service,
    socket: ClientSocket,
    concurrency: usize,
) where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let (tx, exited) = oneshot::channel();
    let server = Server::new(input, output, ExitSignal { socket, exited: tx }).concurrency_level(concurrency);
    tokio::select! {
        () = server.serve(service) => {}
        _ = exited => tracing::debug!("exit received"),
    }
}
