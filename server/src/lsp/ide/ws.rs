//! WebSocket (RFC 6455), the server's side, as much of it as the assistants' IDE clients use:
//! the handshake's accept key, text messages (whole or in fragments), ping, pong
//! and close. Written here rather than taken from a WebSocket crate: the release binary is at its
//! size bound, and a server that only ever receives masked frames and sends unmasked ones is small.

use base64::Engine as _;
use sha1::Digest as _;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// The GUID RFC 6455 appends to the client's key.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The `Sec-WebSocket-Accept` value for a client's `Sec-WebSocket-Key`.
pub fn accept_key(key: &str) -> String {
    let mut sha = sha1::Sha1::new();
    sha.update(key.trim().as_bytes());
    sha.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(sha.finalize())
}

/// Frame opcodes.
mod op {
    pub const CONTINUATION: u8 = 0x0;
    pub const TEXT: u8 = 0x1;
    pub const BINARY: u8 = 0x2;
    pub const CLOSE: u8 = 0x8;
    pub const PING: u8 = 0x9;
    pub const PONG: u8 = 0xA;
}

/// What the peer sent, as the connection's loop needs it.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// A whole text message.
    Text(String),
    /// A ping, to be answered with a pong carrying the same bytes.
    Ping(Vec<u8>),
    /// The peer closes the connection (or it ended).
    Closed,
}

/// Why reading failed: the connection is to be dropped, with a close code when there is one.
#[derive(Debug)]
pub struct Broken {
    /// The close code to send (RFC 6455, 7.4.1).
    pub code: u16,
    /// Why.
    pub reason: String,
}

impl Broken {
    fn new(code: u16, reason: impl Into<String>) -> Broken {
        Broken { code, reason: reason.into() }
    }
}

impl From<std::io::Error> for Broken {
    fn from(e: std::io::Error) -> Broken {
        Broken::new(1006, e.to_string())
    }
}

/// Reads messages from a client, whose frames are masked.
pub struct Reader<R> {
    io: R,
    max: usize,
    /// A fragmented message's parts so far (a control frame may come between them).
    partial: Option<Vec<u8>>,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// Reads from `io`, refusing messages longer than `max` bytes.
    pub fn new(io: R, max: usize) -> Reader<R> {
        Reader { io, max, partial: None }
    }

    /// The next message; pongs are skipped. A text message is assembled from its fragments;
    /// a binary one is refused (the protocols are JSON text).
    pub async fn next(&mut self) -> Result<Received, Broken> {
        loop {
            let Some((fin, opcode, payload)) = self.frame().await? else { return Ok(Received::Closed) };
            match opcode {
                op::PING => return Ok(Received::Ping(payload)),
                op::PONG => continue,
                op::CLOSE => return Ok(Received::Closed),
                op::BINARY => return Err(Broken::new(1003, "binary messages are not part of the protocol")),
                op::TEXT if self.partial.is_some() => {
                    return Err(Broken::new(1002, "a new message began before the last one ended"))
                }
                op::TEXT => self.partial = Some(payload),
                op::CONTINUATION => match self.partial.as_mut() {
                    Some(m) => m.extend_from_slice(&payload),
                    None => return Err(Broken::new(1002, "a continuation frame without a message")),
                },
                other => return Err(Broken::new(1002, format!("unknown opcode {other:#x}"))),
            }
            if self.partial.as_ref().is_some_and(|m| m.len() > self.max) {
                return Err(Broken::new(1009, format!("a message longer than {} bytes", self.max)));
            }
            if fin {
                let bytes = self.partial.take().unwrap_or_default();
                return String::from_utf8(bytes)
                    .map(Received::Text)
                    .map_err(|_| Broken::new(1007, "a text message that is not UTF-8"));
            }
        }
    }

    /// One frame: `(fin, opcode, unmasked payload)`, or `None` at the end of the stream.
    async fn frame(&mut self) -> Result<Option<(bool, u8, Vec<u8>)>, Broken> {
        let mut head = [0u8; 2];
        match self.io.read_exact(&mut head).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0F);
        if head[0] & 0x70 != 0 {
            return Err(Broken::new(1002, "reserved bits set without an extension"));
        }
        if head[1] & 0x80 == 0 {
            return Err(Broken::new(1002, "a client frame must be masked"));
        }
        let len = match head[1] & 0x7F {
            126 => u64::from(self.io.read_u16().await?),
            127 => self.io.read_u64().await?,
            n => u64::from(n),
        };
        let control = opcode & 0x8 != 0;
        if control && (len > 125 || !fin) {
            return Err(Broken::new(1002, "a control frame longer than 125 bytes or fragmented"));
        }
        let len = usize::try_from(len).ok().filter(|&n| n <= self.max);
        let Some(len) = len else {
            return Err(Broken::new(1009, format!("a frame longer than {} bytes", self.max)));
        };
        let mut mask = [0u8; 4];
        self.io.read_exact(&mut mask).await?;
        let mut payload = vec![0u8; len];
        self.io.read_exact(&mut payload).await?;
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
        Ok(Some((fin, opcode, payload)))
    }
}

/// Writes one unmasked frame (a server's frames are never masked).
async fn write_frame<W: AsyncWrite + Unpin>(io: &mut W, opcode: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(10);
    head.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => head.push(n as u8),
        n if n <= usize::from(u16::MAX) => {
            head.push(126);
            head.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            head.push(127);
            head.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    io.write_all(&head).await?;
    io.write_all(payload).await?;
    io.flush().await
}

/// A text message.
pub async fn send_text<W: AsyncWrite + Unpin>(io: &mut W, text: &str) -> std::io::Result<()> {
    write_frame(io, op::TEXT, text.as_bytes()).await
}

/// The answer to a ping.
pub async fn send_pong<W: AsyncWrite + Unpin>(io: &mut W, payload: &[u8]) -> std::io::Result<()> {
    write_frame(io, op::PONG, payload).await
}

/// A close frame with `code` and a reason (cut to fit a control frame).
pub async fn send_close<W: AsyncWrite + Unpin>(io: &mut W, code: u16, reason: &str) -> std::io::Result<()> {
    let mut payload = code.to_be_bytes().to_vec();
    let mut end = reason.len().min(120);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    payload.extend_from_slice(&reason.as_bytes()[..end]);
    write_frame(io, op::CLOSE, &payload).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_key_is_the_rfc_example() {
        // RFC 6455, 1.3.
        assert_eq!(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    /// A client frame: masked with a fixed key.
    fn masked(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [0x37, 0xfa, 0x21, 0x3d];
        let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
        match payload.len() {
            n if n < 126 => out.push(0x80 | n as u8),
            n if n <= 0xFFFF => {
                out.push(0x80 | 126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(0x80 | 127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    async fn read_all(bytes: Vec<u8>, max: usize) -> Vec<Result<Received, String>> {
        let mut reader = Reader::new(std::io::Cursor::new(bytes), max);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Ok(Received::Closed) => {
                    out.push(Ok(Received::Closed));
                    return out;
                }
                Ok(r) => out.push(Ok(r)),
                Err(e) => {
                    out.push(Err(format!("{} {}", e.code, e.reason)));
                    return out;
                }
            }
        }
    }

    #[tokio::test]
    async fn reads_whole_fragmented_and_control_frames() {
        let long = "x".repeat(70_000);
        let mut bytes = masked(true, op::TEXT, b"{\"a\":1}");
        bytes.extend(masked(false, op::TEXT, "h\u{e9}".as_bytes()));
        bytes.extend(masked(true, op::PING, b"p"));
        bytes.extend(masked(true, op::CONTINUATION, b"llo"));
        bytes.extend(masked(true, op::PONG, b""));
        bytes.extend(masked(true, op::TEXT, long.as_bytes()));
        bytes.extend(masked(true, op::CLOSE, &1000u16.to_be_bytes()));
        let got = read_all(bytes, 1 << 20).await;
        assert_eq!(
            got,
            vec![
                Ok(Received::Text("{\"a\":1}".into())),
                Ok(Received::Ping(b"p".to_vec())),
                Ok(Received::Text("h\u{e9}llo".into())),
                Ok(Received::Text(long)),
                Ok(Received::Closed),
            ]
        );
    }

    #[tokio::test]
    async fn refuses_what_the_protocol_does_not_allow() {
        let unmasked = vec![0x81, 0x01, b'a'];
        assert!(read_all(unmasked, 100).await[0].as_ref().expect_err("refused").starts_with("1002"));
        let too_long = masked(true, op::TEXT, &[b'a'; 200]);
        assert!(read_all(too_long, 100).await[0].as_ref().expect_err("refused").starts_with("1009"));
        let binary = masked(true, op::BINARY, b"a");
        assert!(read_all(binary, 100).await[0].as_ref().expect_err("refused").starts_with("1003"));
        let not_utf8 = masked(true, op::TEXT, &[0xff, 0xfe]);
        assert!(read_all(not_utf8, 100).await[0].as_ref().expect_err("refused").starts_with("1007"));
        // A stream that ends is a close.
        assert_eq!(read_all(Vec::new(), 100).await, vec![Ok(Received::Closed)]);
    }

    #[tokio::test]
    async fn writes_frames_a_client_can_read() {
        let mut out = Vec::new();
        send_text(&mut out, &"y".repeat(300)).await.expect("test setup");
        assert_eq!(&out[..4], &[0x81, 126, 0x01, 0x2c]);
        assert_eq!(out.len(), 4 + 300);
        let mut out = Vec::new();
        send_close(&mut out, 1008, "bad token").await.expect("test setup");
        assert_eq!(out, [&[0x88, 11, 0x03, 0xf0][..], b"bad token"].concat());
    }
}
