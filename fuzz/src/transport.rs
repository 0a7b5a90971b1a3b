//! The MCP line transport: messages in over random splits, answers and messages out.
//!
//! A case is a stream of lines (requests and notifications of many sizes, responses, lines that
//! are not JSON, invalid requests, blank lines; some with a BOM or a CRLF; some over the
//! transport's size limit; perhaps a last line without its newline), cut into reads of random
//! sizes, some of which are not ready at first, while `receive` is now and then dropped and
//! called again in the middle of a line (as rmcp's `select!` does). What must hold:
//! - `receive` yields exactly the messages of the complete lines within the limit, in order;
//! - a line that is not JSON is answered with `-32700` and a null id, an invalid request with
//!   `-32600` under its own id, and nothing else is answered;
//! - messages sent (long strings included) arrive as serde_json writes them, byte for byte, one
//!   per line, through a writer that takes a few bytes at a time.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::{CallToolResult, ContentBlock, ErrorCode, ErrorData, JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use tether::mcp::json::LONG;
use tether::mcp::{LineTransport, MAX_MESSAGE_BYTES};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::input::Input;

/// Pieces of the strings inside messages.
const PIECES: &[&str] = &["a", "text ", "\"", "\\", "\n", "\r", "\t", "\u{1}", "é", "🦀", "\u{2028}", "{", "}"];

/// What one input line is, and what the transport must make of it.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// A request with this id: received.
    Request(i64),
    /// A notification: received.
    Notification,
    /// A response with this id: received.
    Response(i64),
    /// Not JSON: answered with a parse error.
    ParseError,
    /// An invalid request with this id: answered with an invalid-request error.
    Invalid(i64),
    /// A blank line: skipped.
    Nothing,
}

thread_local! {
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

/// Checks one input.
pub fn check(data: &[u8]) {
    RUNTIME.with(|rt| {
        let mut rt = rt.borrow_mut();
        let rt = rt.get_or_insert_with(|| {
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime")
        });
        rt.block_on(run(data));
    });
}

async fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let max = match input.below(4) {
        0 => 300,
        1 => 4096,
        2 => 100_000,
        _ => MAX_MESSAGE_BYTES,
    };
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    let mut answers = Vec::new();
    let lines = input.below(12);
    for k in 0..lines {
        let (mut line, expect) = line(&mut input, k as i64);
        if input.chance(1, 8) {
            line.splice(0..0, *b"\xEF\xBB\xBF");
        }
        if input.chance(1, 6) {
            line.push(b'\r');
        }
        let complete = k + 1 < lines || !input.chance(1, 4);
        if complete {
            line.push(b'\n');
        }
        if complete && line.len() <= max {
            match expect {
                Expect::ParseError | Expect::Invalid(_) => answers.push(expect.clone()),
                Expect::Nothing => {}
                _ => expected.push(expect.clone()),
            }
        }
        stream.extend_from_slice(&line);
    }
    let reader = Reads::new(&mut input, stream);
    let written = Arc::new(Mutex::new(Vec::new()));
    let step = if input.chance(1, 2) { usize::MAX } else { input.range(1, 64) };
    let writer = Writes { out: written.clone(), step };
    let mut t: LineTransport<RoleServer, _, _> = LineTransport::with_limit(reader, writer, max);

    let mut received = Vec::new();
    loop {
        let message = if input.chance(1, 3) {
            // Polled once and dropped if not ready, as a `select!` that another branch won does.
            let mut fut = std::pin::pin!(t.receive());
            match std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await {
                Poll::Ready(m) => m,
                Poll::Pending => continue,
            }
        } else {
            t.receive().await
        };
        match message {
            Some(m) => received.push(kind(m)),
            None => break,
        }
    }
    assert_eq!(received, expected, "the messages received");

    // The answers are written by tasks of their own: let them run.
    for _ in 0..1000 {
        if written.lock().expect("lock").iter().filter(|&&b| b == b'\n').count() >= answers.len() {
            break;
        }
        tokio::task::yield_now().await;
    }
    let out = std::mem::take(&mut *written.lock().expect("lock"));
    let got: Vec<Expect> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Value = serde_json::from_slice(l).expect("an answer is JSON");
            let code = v["error"]["code"].as_i64().expect("an error answer");
            match (code, &v["id"]) {
                (-32700, Value::Null) => Expect::ParseError,
                (-32600, Value::Number(id)) => Expect::Invalid(id.as_i64().expect("an integer id")),
                _ => panic!("an unexpected answer: {v}"),
            }
        })
        .collect();
    assert_eq!(got, answers, "the answers written");

    // Messages sent arrive as serde_json writes them.
    for k in 0..input.below(4) {
        let text = long_or_short(&mut input, false);
        let message: TxJsonRpcMessage<RoleServer> = if input.chance(1, 2) {
            let data = serde_json::json!({"detail": long_or_short(&mut input, false), "list": [text.clone(), k]});
            JsonRpcMessage::error(ErrorData::internal_error(text, Some(data)), Some(RequestId::Number(k as i64)))
        } else {
            let result = CallToolResult::success(vec![ContentBlock::text(text)]);
            JsonRpcMessage::response(ServerResult::CallToolResult(result), RequestId::Number(k as i64))
        };
        let mut want = serde_json::to_vec(&message).expect("serde_json");
        want.push(b'\n');
        t.send(message).await.expect("sent");
        let out = std::mem::take(&mut *written.lock().expect("lock"));
        assert!(out == want, "a sent message is not serde_json's bytes ({} against {} bytes)", out.len(), want.len());
    }
    t.close().await.expect("closed");
}

/// One input line (without its newline) and what it is.
fn line(input: &mut Input<'_>, id: i64) -> (Vec<u8>, Expect) {
    let json = |v: Value| serde_json::to_vec(&v).expect("JSON");
    match input.below(8) {
        0 | 1 => {
            let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            (json(v), Expect::Request(id))
        }
        2 => {
            // Long lines are rarer here than in what is sent: one in a few cases is enough to
            // cross the read buffer and the size limits.
            let s = if input.chance(1, 4) { long_or_short(input, true) } else { input.text(PIECES, 3, true) };
            let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                       "params": {"name": "read_file", "arguments": {"path": s}}});
            (json(v), Expect::Request(id))
        }
        3 => (json(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})), Expect::Notification),
        4 => (json(serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})), Expect::Response(id)),
        5 => {
            let mut l = b"{not json ".to_vec();
            let n = input.below(12);
            l.extend(input.bytes(n).iter().filter(|&&b| b != b'\n'));
            (l, Expect::ParseError)
        }
        6 => {
            let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": 7});
            (json(v), Expect::Invalid(id))
        }
        _ => (input.pick(&[&b""[..], b" ", b"\t \t", b"  "]).to_vec(), Expect::Nothing),
    }
}

/// A string: short, or now and then just over [`LONG`] bytes, or (with `far`) beyond the
/// largest of the smaller size limits the transport is given.
fn long_or_short(input: &mut Input<'_>, far: bool) -> String {
    let n = input.below(5);
    let s = input.text(PIECES, n, true);
    match input.below(16) {
        0 | 1 => s.repeat(LONG / s.len().max(1) + 1),
        2 if far => s.repeat(120_000 / s.len().max(1) + 1),
        _ => s,
    }
}

/// What a received message is.
fn kind(m: RxJsonRpcMessage<RoleServer>) -> Expect {
    let number = |id: RequestId| match id {
        RequestId::Number(n) => n,
        other => panic!("an id that is not a number: {other:?}"),
    };
    match m {
        JsonRpcMessage::Request(r) => Expect::Request(number(r.id)),
        JsonRpcMessage::Notification(_) => Expect::Notification,
        JsonRpcMessage::Response(r) => Expect::Response(number(r.id)),
        JsonRpcMessage::Error(e) => panic!("an error was received: {:?}", e.error.code == ErrorCode::PARSE_ERROR),
    }
}

/// A reader handing out a stream in pieces of random sizes, some not ready at first.
struct Reads {
    pieces: VecDeque<(Vec<u8>, bool)>,
}

impl Reads {
    fn new(input: &mut Input<'_>, stream: Vec<u8>) -> Reads {
        let mut pieces = VecDeque::new();
        let mut rest = &stream[..];
        while !rest.is_empty() {
            // At most a few dozen pieces: enough splits to cut lines anywhere, few enough to
            // keep a case fast.
            let n = match input.below(4) {
                _ if pieces.len() >= 48 => rest.len(),
                0 => input.range(1, 8),
                1 => input.range(1, 4096),
                _ => rest.len(),
            };
            let (head, tail) = rest.split_at(n.min(rest.len()));
            pieces.push_back((head.to_vec(), input.chance(1, 3)));
            rest = tail;
        }
        Reads { pieces }
    }
}

impl AsyncRead for Reads {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let Some((piece, not_ready)) = self.pieces.front_mut() else { return Poll::Ready(Ok(())) };
        if *not_ready {
            *not_ready = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = piece.len().min(buf.remaining());
        buf.put_slice(&piece[..n]);
        piece.drain(..n);
        if piece.is_empty() {
            self.pieces.pop_front();
        }
        Poll::Ready(Ok(()))
    }
}

/// A writer that takes at most `step` bytes per write.
struct Writes {
    out: Arc<Mutex<Vec<u8>>>,
    step: usize,
}

impl AsyncWrite for Writes {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let n = buf.len().min(self.step);
        self.out.lock().expect("lock").extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
