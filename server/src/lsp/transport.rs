//! Serving over a byte stream, and stopping on `exit`.
//!
//! tower-lsp 0.20 handles `exit` by closing its client channel, but its read loop only notices
//! when the next message arrives, so a server whose editor keeps the pipe open after `exit` would
//! never stop. The request stream of the client socket ends exactly when that channel closes;
//! [`ExitSignal`] turns that end into a signal the serving future is raced against.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tower_lsp::jsonrpc::Request;
use tower_lsp::{ClientSocket, Loopback, LspService, Server};

use super::Backend;

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
    service: LspService<Backend>,
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
