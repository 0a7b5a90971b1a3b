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
//! - A batch (a JSON array) is taken apart here when the session agreed to MCP 2025-03-26, the
//!   one revision with batches (see [`super::batch`]); rmcp reads one message at a time. Its
//!   messages are handed to rmcp one by one, and the answers to its requests are held as rmcp
//!   sends them, then written as one array once the last is in (a cancelled request is answered by
//!   nobody, so the batch stops waiting for it). The revision is the one in the initialize result
//!   this end sent; before it, and in sessions on any other revision, a batch gets `-32600`.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::sync::Arc;

use rmcp::model::{ClientNotification, ErrorData, JsonRpcMessage, ProtocolVersion, RequestId, ServerResult};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::batch::{self, Element};
use super::json;

/// The largest message read from a line-delimited stream: a `write_file` of a 17 MiB text, or
/// the reply to a 20 MiB read forwarded by the bridge, must arrive whole.
pub const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The read buffer: as large as `tether mcp` grows its stdin pipe (`widen_stdio_pipes`), so
/// that a full pipe is emptied in one read.
const READ_BUFFER: usize = 1 << 20;

/// A UTF-8 byte order mark, which JSON readers may ignore (RFC 8259, section 8.1).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// MCP messages over a byte stream, one per line.
pub struct LineTransport<Role: ServiceRole, R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// The rest of an over-long line is being skipped.
    skipping: bool,
    /// `None` once closed. Shared with the futures [`Transport::send`] returns.
    write: Arc<Mutex<Option<W>>>,
    /// The longest line read: [`MAX_MESSAGE_BYTES`] but in tests.
    max: usize,
    /// The batches of a session on MCP 2025-03-26.
    batches: Batches<Role>,
}

/// What one side's messages tell the transport about batches.
pub trait BatchRole: ServiceRole {
    /// The protocol version a message this end sends agrees to: a server's initialize result.
    fn agreed_version(message: &TxJsonRpcMessage<Self>) -> Option<&ProtocolVersion>;
    /// The request a message this end reads cancels (`notifications/cancelled`).
    fn cancelled_request(message: &RxJsonRpcMessage<Self>) -> Option<&RequestId>;
}

impl BatchRole for RoleServer {
    fn agreed_version(message: &TxJsonRpcMessage<Self>) -> Option<&ProtocolVersion> {
        match message {
            JsonRpcMessage::Response(r) => match &r.result {
                ServerResult::InitializeResult(init) => Some(&init.protocol_version),
                _ => None,
            },
            _ => None,
        }
    }

    fn cancelled_request(message: &RxJsonRpcMessage<Self>) -> Option<&RequestId> {
        match message {
            JsonRpcMessage::Notification(n) => match &n.notification {
                ClientNotification::CancelledNotification(c) => c.params.request_id.as_ref(),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A client sends no initialize result, so it never agrees to batches (tether's clients, the
/// bridge's attached end, are never sent one).
impl BatchRole for RoleClient {
    fn agreed_version(_message: &TxJsonRpcMessage<Self>) -> Option<&ProtocolVersion> {
        None
    }

    fn cancelled_request(_message: &RxJsonRpcMessage<Self>) -> Option<&RequestId> {
        None
    }
}

/// The batches of a session on MCP 2025-03-26.
struct Batches<Role: ServiceRole> {
    /// The session agreed to a revision with batches.
    accepted: bool,
    /// Messages of a batch not yet handed to rmcp.
    queue: VecDeque<RxJsonRpcMessage<Role>>,
    /// Batches whose requests are not all answered yet.
    open: Vec<OpenBatch<Role>>,
}

/// A batch being answered.
struct OpenBatch<Role: ServiceRole> {
    /// Its requests not answered yet.
    waiting: Vec<RequestId>,
    /// The answers so far: refused elements first, then the requests' in the order rmcp sent them.
    answers: Vec<TxJsonRpcMessage<Role>>,
}

impl<Role: ServiceRole> Batches<Role> {
    fn waits_for(&self, id: &RequestId) -> bool {
        self.open.iter().any(|b| b.waiting.contains(id))
    }

    /// Takes `id` off the batch waiting for it: `Some(answers)` when that was the batch's last
    /// request, with `answer` among them when there is one (`None`: the request was cancelled).
    fn settle(&mut self, id: &RequestId, answer: Option<TxJsonRpcMessage<Role>>) -> Settled<Role> {
        let Some(at) = self.open.iter().position(|b| b.waiting.contains(id)) else {
            return Settled::NotInBatch(answer);
        };
        let open = &mut self.open[at];
        open.waiting.retain(|w| w != id);
        open.answers.extend(answer);
        if !open.waiting.is_empty() {
            return Settled::Held;
        }
        let answers = self.open.remove(at).answers;
        if answers.is_empty() {
            Settled::Held
        } else {
            Settled::Complete(answers)
        }
    }
}

/// What became of an answer.
enum Settled<Role: ServiceRole> {
    /// Not an answer to a batch's request: sent as it is.
    NotInBatch(Option<TxJsonRpcMessage<Role>>),
    /// Held until the rest of its batch is answered (or nothing to send).
    Held,
    /// Its batch's answers, all in.
    Complete(Vec<TxJsonRpcMessage<Role>>),
}

impl<Role, R, W> LineTransport<Role, R, W>
where
    Role: BatchRole,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading messages from `read` and writing them to `write`.
    pub fn new(read: R, write: W) -> Self {
        LineTransport::with_limit(read, write, MAX_MESSAGE_BYTES)
    }

    /// A transport that skips every line longer than `max` bytes (its newline included), where
    /// [`LineTransport::new`] allows [`MAX_MESSAGE_BYTES`]: for tests that send lines over the
    /// limit without sending hundreds of MiB.
    pub fn with_limit(read: R, write: W, max: usize) -> Self {
        LineTransport {
            read: BufReader::with_capacity(READ_BUFFER, read),
            line: Vec::new(),
            skipping: false,
            write: Arc::new(Mutex::new(Some(write))),
            max,
            batches: Batches { accepted: false, queue: VecDeque::new(), open: Vec::new() },
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
    /// A JSON array: a batch, or nothing this session takes.
    Batch(Vec<Value>),
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
    match serde_json::from_slice(line).unwrap_or(Value::Null) {
        Value::Array(elements) => Read::Batch(elements),
        value => unreadable(&value, &error),
    }
}

/// Reads one element of a batch as a message of `M`.
fn parse_value<M: serde::de::DeserializeOwned>(value: &Value) -> Read<M> {
    match M::deserialize(value) {
        Ok(message) => Read::Message(message),
        Err(error) => unreadable(value, &error),
    }
}

/// What JSON that is not a message of `M` (`error` says why) gets.
fn unreadable<M>(value: &Value, error: &serde_json::Error) -> Read<M> {
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
    let flushed = w.flush().await;
    // Written: the memory the line held may be returned once the server is idle.
    super::memory::note_activity();
    flushed
}

impl<Role, R, W> LineTransport<Role, R, W>
where
    Role: BatchRole,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Writes `answer` (a message, or a batch's answers) from a task of its own, as rmcp writes
    /// every message: `receive` may be dropped at any await, and half an answer would corrupt
    /// the stream.
    fn answer<T: serde::Serialize + ?Sized>(&self, answer: &T) {
        let line = json::to_line(answer);
        let write = self.write.clone();
        tokio::spawn(async move {
            let written = match line {
                Ok(line) => write_line(write, line).await,
                Err(e) => Err(e.into()),
            };
            if let Err(error) = written {
                tracing::error!(%error, "answering a message this end read failed");
            }
        });
    }

    /// Hands `message` to rmcp; a cancellation also ends the wait of a batch for its request.
    fn hand_out(&mut self, message: RxJsonRpcMessage<Role>) -> RxJsonRpcMessage<Role> {
        if let Some(id) = Role::cancelled_request(&message) {
            // rmcp sends nothing for a request cancelled while it runs.
            if let Settled::Complete(answers) = self.batches.settle(id, None) {
                self.answer(&answers);
            }
        }
        message
    }

    /// Takes a batch apart: its messages queued for rmcp, its requests awaited, and what cannot
    /// be handled answered in the batch's answer.
    fn take_batch(&mut self, elements: Vec<Value>) {
        if elements.is_empty() {
            return self.answer(&TxJsonRpcMessage::<Role>::error(batch::empty(), None));
        }
        if !self.batches.accepted {
            let refused = batch::refused("send one message per line");
            return self.answer(&TxJsonRpcMessage::<Role>::error(refused, None));
        }
        let mut open = OpenBatch { waiting: Vec::new(), answers: Vec::new() };
        for element in elements {
            let value = match batch::element(element) {
                Element::Message(value) => value,
                Element::Refused(id, error) => {
                    open.answers.push(JsonRpcMessage::error(error, id));
                    continue;
                }
            };
            match parse_value::<RxJsonRpcMessage<Role>>(&value) {
                Read::Message(message) => {
                    if let JsonRpcMessage::Request(request) = &message {
                        let id = &request.id;
                        if open.waiting.contains(id) || self.batches.waits_for(id) {
                            open.answers.push(JsonRpcMessage::error(batch::id_in_use(id), Some(id.clone())));
                            continue;
                        }
                        open.waiting.push(id.clone());
                    }
                    self.batches.queue.push_back(message);
                }
                Read::Invalid(id, error) => open.answers.push(JsonRpcMessage::error(error, id)),
                Read::Skip | Read::Batch(_) => {}
            }
        }
        if !open.waiting.is_empty() {
            self.batches.open.push(open);
        } else if !open.answers.is_empty() {
            self.answer(&open.answers);
        }
    }
}

impl<Role, R, W> Transport<Role> for LineTransport<Role, R, W>
where
    Role: BatchRole,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<Role>) -> impl Future<Output = io::Result<()>> + Send + 'static {
        if let Some(version) = Role::agreed_version(&item) {
            self.batches.accepted = batch::accepted_in(version);
        }
        let answered = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        // Serialised here, in the order rmcp sends, and written in the order the futures lock.
        let line = match answered {
            Some(id) => match self.batches.settle(&id, Some(item)) {
                Settled::NotInBatch(item) => item.map(|item| json::to_line(&item)),
                Settled::Held => None,
                Settled::Complete(answers) => Some(json::to_line(&answers)),
            },
            None => Some(json::to_line(&item)),
        };
        let write = self.write.clone();
        async move {
            match line {
                Some(line) => write_line(write, line.map_err(io::Error::from)?).await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            if let Some(message) = self.batches.queue.pop_front() {
                return Some(self.hand_out(message));
            }
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
                Read::Message(message) => return Some(self.hand_out(message)),
                Read::Skip => {}
                Read::Invalid(id, error) => {
                    tracing::debug!(reason = %error.message, "answering a request that could not be read");
                    self.answer(&TxJsonRpcMessage::<Role>::error(error, id));
                }
                Read::Batch(elements) => self.take_batch(elements),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
