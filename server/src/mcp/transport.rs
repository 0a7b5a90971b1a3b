//! tether's line-delimited JSON-RPC transport: stdio for `tether mcp`, and both ends of the
//! bridge socket.
//!
//! It speaks what rmcp's `AsyncRwTransport` speaks (one JSON message per line, a UTF-8 byte order
//! mark and a trailing `\r` tolerated) and differs where large messages and malformed ones are
//! concerned:
//! - Lines are found with `memchr` in a 1 MiB read buffer, and a line may hold up to
//!   [`MAX_MESSAGE_BYTES`] (rmcp: byte by byte through 8 KiB, and 16 MiB, beyond which a request
//!   was dropped without an answer).
//! - Outgoing messages are serialised by [`super::json::to_line`] (long strings escaped eight
//!   bytes at a time) into a buffer of their own, which is freed once written; rmcp's writer kept
//!   a buffer as large as the largest reply it ever sent.
//! - A request that is JSON but not a valid request (say, `tools/call` whose params are a number)
//!   is answered with `-32600 Invalid request` and serde's reason, under the request's
//!   own id so that the client can match it (rmcp answered with a null id; so does this
//!   transport when the id is neither a string nor an integer). A notification or a
//!   response that cannot be read is logged and dropped, since neither may be answered.
//! - A line that is not JSON at all is answered with `-32700 Parse error` and a null id, as
//!   JSON-RPC 2.0 asks (rmcp dropped it without a word, and the client waited for an answer that
//!   never came); a line of nothing but whitespace is skipped.

use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::sync::Arc;

use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::json;

/// The largest message read from a line-delimited stream: a `write_file` of a 17 MiB text, or
/// the reply to a 20 MiB read forwarded by the bridge, must arrive whole.
pub(crate) const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The read buffer: as large as `tether mcp` grows its stdin pipe (`widen_stdio_pipes`), so
/// that a full pipe is emptied in one read.
const READ_BUFFER: usize = 1 << 20;

/// A UTF-8 byte order mark, which JSON readers may ignore (RFC 8259, section 8.1).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// MCP messages over a byte stream, one per line.
pub(crate) struct LineTransport<Role, R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// The rest of an over-long line is being skipped.
    skipping: bool,
    /// `None` once closed. Shared with the futures [`Transport::send`] returns.
    write: Arc<Mutex<Option<W>>>,
    /// The longest line read: [`MAX_MESSAGE_BYTES`] but in tests.
    max: usize,
    _role: PhantomData<fn() -> Role>,
}

impl<Role, R, W> LineTransport<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading messages from `read` and writing them to `write`.
    pub(crate) fn new(read: R, write: W) -> Self {
        LineTransport {
            read: BufReader::with_capacity(READ_BUFFER, read),
            line: Vec::new(),
            skipping: false,
            write: Arc::new(Mutex::new(Some(write))),
            max: MAX_MESSAGE_BYTES,
            _role: PhantomData,
        }
    }

    /// Reads the next line into `self.line`: `Ok(true)` when one is there, `Ok(false)` at the end
    /// of the stream (a last line without its newline is dropped, as no message is complete
    /// without one). An over-long line is skipped whole, with an error in the log.
    ///
    /// Cancel-safe: rmcp drops the `receive` future whenever another event wins its `select!`,
    /// so what has been read of a line stays in `self.line` until the line is complete (the
    /// caller empties it then), and skipping survives too.
    async fn read_line(&mut self) -> io::Result<bool> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let end = memchr::memchr(b'\n', available);
            let take = end.map_or(available.len(), |at| at + 1);
            if self.skipping {
                self.skipping = end.is_none();
            } else if self.line.len() + take > self.max {
                tracing::error!(max = self.max, "a message over the size limit was dropped");
                self.line = Vec::new();
                self.skipping = end.is_none();
            } else {
                self.line.extend_from_slice(&available[..take]);
                if end.is_some() {
                    self.read.consume(take);
                    return Ok(true);
                }
            }
            self.read.consume(take);
        }
    }
}

/// What one line turned out to be.
enum Read<M> {
    Message(M),
    /// A request that could not be read (its id, when it has a usable one), and the error that
    /// answers it.
    Invalid(Option<RequestId>, ErrorData),
    /// Nothing to act on.
    Skip,
}

/// Reads one line (without its newline) as a message of `M`.
fn parse<M: serde::de::DeserializeOwned>(line: &[u8]) -> Read<M> {
    let line = line.strip_prefix(BOM).unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Read::Skip;
    }
    let error = match serde_json::from_slice(line) {
        Ok(message) => return Read::Message(message),
        Err(e) => e,
    };
    if error.is_syntax() || error.is_eof() {
        // Nothing in the line can be trusted, not even an id: JSON-RPC answers with a null one.
        return Read::Invalid(
            None,
            ErrorData::parse_error(format!("Parse error: the line is not JSON: {error}"), None),
        );
    }
    let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
    if value.is_array() {
        // Only MCP 2025-03-26 has batches, and rmcp reads one message at a time: say so.
        let reason = "Invalid request: a batch (JSON array) is not accepted; send one message per line";
        return Read::Invalid(None, ErrorData::invalid_request(reason, None));
    }
    let method = value.get("method").and_then(Value::as_str);
    // A request whose id is not a string or an integer (`null`, `1.5`) is answered with a null id.
    let id = value.get("id").map(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    let invalid = |reason: String| ErrorData::invalid_request(reason, None);
    match (method, id) {
        (Some(method), Some(id)) => Read::Invalid(id, invalid(format!("Invalid request: {method}: {error}"))),
        // A notification gets no answer, and neither does a response.
        (Some(method), None) => {
            tracing::debug!(method, %error, "a notification that could not be read was dropped");
            Read::Skip
        }
        (None, _) if value.get("result").is_some() || value.get("error").is_some() => {
            tracing::warn!(%error, "a response that could not be read was dropped");
            Read::Skip
        }
        (None, id) => Read::Invalid(id.flatten(), invalid(format!("Invalid request: {error}"))),
    }
}

/// Writes the pieces of one line under the lock, so that lines never interleave.
async fn write_line<W: AsyncWrite + Unpin>(write: Arc<Mutex<Option<W>>>, line: json::Line) -> io::Result<()> {
    let mut guard = write.lock().await;
    let w = guard.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "the transport is closed"))?;
    for piece in &line.0 {
        w.write_all(piece).await?;
    }
    w.flush().await
}

impl<Role, R, W> Transport<Role> for LineTransport<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<Role>) -> impl Future<Output = io::Result<()>> + Send + 'static {
        // Serialised here, in the order rmcp sends, and written in the order the futures lock.
        let line = json::to_line(&item).map_err(io::Error::from);
        let write = self.write.clone();
        async move { write_line(write, line?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(error) => {
                    tracing::error!(%error, "reading a message failed");
                    return None;
                }
            }
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let read = parse::<RxJsonRpcMessage<Role>>(line);
            // The line is done with; a large request's buffer goes with it, like a large reply's.
            if self.line.capacity() > READ_BUFFER {
                self.line = Vec::new();
            } else {
                self.line.clear();
            }
            match read {
                Read::Message(message) => return Some(message),
                Read::Skip => {}
                Read::Invalid(id, error) => {
                    tracing::debug!(reason = %error.message, "answering a request that could not be read");
                    let answer: TxJsonRpcMessage<Role> = JsonRpcMessage::error(error, id);
                    // Written by a task of its own, as rmcp writes every message: this future
                    // may be dropped at any await, and half an answer would corrupt the stream.
                    let write = self.write.clone();
                    tokio::spawn(async move {
                        let written = match json::to_line(&answer) {
                            Ok(line) => write_line(write, line).await,
                            Err(e) => Err(e.into()),
                        };
                        if let Err(error) = written {
                            tracing::error!(%error, "answering a malformed request failed");
                        }
                    });
                }
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::RoleServer;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    use super::*;

    /// A server-side transport over an in-memory pipe, and the client's ends of it.
    fn pair() -> (
        LineTransport<RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>,
        tokio::io::DuplexStream,
        tokio::io::BufReader<tokio::io::DuplexStream>,
    ) {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        (LineTransport::new(server_in, server_out), client_out, tokio::io::BufReader::new(client_in))
    }

    async fn answer(from: &mut tokio::io::BufReader<tokio::io::DuplexStream>) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), from.read_line(&mut line));
        read.await.expect("an answer within 10 s").expect("read");
        serde_json::from_str(&line).expect("JSON")
    }

    #[tokio::test]
    async fn messages_are_read_across_reads_with_a_bom_and_crlf() {
        let (mut t, mut to_server, _) = pair();
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let writer = tokio::spawn(async move {
            to_server.write_all(b"\n\xEF\xBB\xBF").await.expect("write");
            // A message split over several writes, then one ending in CRLF.
            to_server.write_all(&ping[..10]).await.expect("write");
            to_server.write_all(&ping[10..]).await.expect("write");
            to_server.write_all(b"\n").await.expect("write");
            to_server.write_all(br#"{"jsonrpc":"2.0","id":"two","method":"ping"}"#).await.expect("write");
            to_server.write_all(b"\r\n").await.expect("write");
        });
        for id in [json_id(1), json_id("two")] {
            assert_eq!(request_id(t.receive().await), id);
        }
        writer.await.expect("writer");
        assert!(t.receive().await.is_none(), "the stream ended");
    }

    /// The id of `message`, which must be a request.
    fn request_id(message: Option<RxJsonRpcMessage<RoleServer>>) -> RequestId {
        match message {
            Some(JsonRpcMessage::Request(request)) => request.id,
            other => panic!("not a request: {other:?}"),
        }
    }

    fn json_id(v: impl Into<Value>) -> RequestId {
        serde_json::from_value(v.into()).expect("id")
    }

    #[tokio::test]
    async fn a_malformed_request_is_answered_under_its_own_id() {
        let (mut t, mut to_server, mut from_server) = pair();
        let lines = concat!(
            "this is not JSON\n",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"error":"not an error object"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":7}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#,
            "\n",
        );
        to_server.write_all(lines.as_bytes()).await.expect("write");
        // The second and third are dropped, the others answered, and the last is the next message.
        assert_eq!(request_id(t.receive().await), json_id(10));
        let parse_error = answer(&mut from_server).await;
        assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
        let answer_9 = answer(&mut from_server).await;
        assert_eq!(answer_9["id"], 9, "{answer_9}");
        assert_eq!(answer_9["error"]["code"], -32600, "{answer_9}");
        let reason = answer_9["error"]["message"].as_str().expect("a message");
        assert!(reason.starts_with("Invalid request: tools/call: "), "{reason}");
        // An id that is neither a string nor an integer is answered with a null one.
        let answer_null = answer(&mut from_server).await;
        assert_eq!(answer_null["error"]["code"], -32600, "{answer_null}");
        assert!(answer_null.get("id").is_none_or(Value::is_null), "{answer_null}");
    }

    #[tokio::test]
    async fn a_line_that_is_not_json_is_answered_with_a_parse_error() {
        let (mut t, mut to_server, mut from_server) = pair();
        let lines = concat!(
            "this is not JSON\n",
            "{\"jsonrpc\": \"2.0\", \"id\": 3,\n",
            " \t\r\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            "\n"
        );
        to_server.write_all(lines.as_bytes()).await.expect("write");
        assert_eq!(request_id(t.receive().await), json_id(4), "still serving");
        // Two answers, both with a null id since neither line can be trusted to carry one; the
        // blank line gets none.
        for _ in 0..2 {
            let answer = answer(&mut from_server).await;
            assert_eq!(answer["error"]["code"], -32700, "{answer}");
            assert_eq!(answer["id"], Value::Null, "{answer}");
            let reason = answer["error"]["message"].as_str().expect("a message");
            assert!(reason.starts_with("Parse error: the line is not JSON: "), "{reason}");
        }
    }

    #[tokio::test]
    async fn a_receive_dropped_mid_line_loses_nothing() {
        let (mut t, mut to_server, _) = pair();
        let ping = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
        to_server.write_all(&ping[..20]).await.expect("write");
        // rmcp drops `receive` whenever another event wins its select; half a line is read by now.
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), t.receive()).await;
        assert!(early.is_err(), "no message yet");
        to_server.write_all(&ping[20..]).await.expect("write");
        to_server.write_all(b"\n").await.expect("write");
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), t.receive())
            .await
            .expect("the whole line arrived, not just its second half");
        assert_eq!(request_id(message), json_id(5));
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_skipped_whole() {
        let (mut t, mut to_server, _) = pair();
        t.max = 1 << 20;
        let writer = tokio::spawn(async move {
            // Over the limit by far, so that it spans many reads.
            let big =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#, "y".repeat(3 << 20));
            to_server.write_all(big.as_bytes()).await.expect("write");
            to_server.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await.expect("write");
        });
        assert_eq!(request_id(t.receive().await), json_id(2));
        writer.await.expect("writer");
    }

    #[tokio::test]
    async fn sent_messages_arrive_whole_and_in_order() {
        let (mut t, _to_server, mut from_server) = pair();
        let long = "a line\n".repeat(json::LONG);
        // Written by one task each, as rmcp does; the reader drains the pipe meanwhile.
        let mut tasks = Vec::new();
        for i in 0..3 {
            let text = if i == 1 { long.clone() } else { format!("message {i}") };
            tasks.push(tokio::spawn(
                t.send(JsonRpcMessage::error(ErrorData::internal_error(text, None), Some(json_id(i)))),
            ));
        }
        for i in 0..3 {
            let answer = answer(&mut from_server).await;
            assert_eq!(answer["id"], i);
            let expected = if i == 1 { long.clone() } else { format!("message {i}") };
            assert_eq!(answer["error"]["message"], expected.as_str());
        }
        for task in tasks {
            task.await.expect("task").expect("sent");
        }
        t.close().await.expect("close");
        let refused = t.send(JsonRpcMessage::error(ErrorData::internal_error("late", None), None)).await;
        assert_eq!(refused.expect_err("closed").kind(), io::ErrorKind::NotConnected);
    }
}
