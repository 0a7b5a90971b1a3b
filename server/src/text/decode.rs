//! Turning file bytes into text and back: BOM, UTF-8, UTF-16, binary detection.

use std::fmt;

/// How many leading bytes are inspected for a NUL byte when deciding a file is binary.
pub const BINARY_SNIFF_LEN: usize = 8 * 1024;

/// The encoding a text was decoded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (with or without a BOM).
    Utf8,
    /// Bytes that are not valid UTF-8, decoded with replacement characters. Readable, never
    /// editable: writing the decoded text back would lose the original bytes.
    Utf8Lossy,
    /// UTF-16, little endian, announced by a BOM. Read-only.
    Utf16Le,
    /// UTF-16, big endian, announced by a BOM. Read-only.
    Utf16Be,
}

impl Encoding {
    /// The name shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf8Lossy => "utf-8 (invalid sequences replaced)",
            Encoding::Utf16Le => "utf-16le",
            Encoding::Utf16Be => "utf-16be",
        }
    }

    /// Whether the editing tools may write text in this encoding.
    pub fn is_editable(self) -> bool {
        self == Encoding::Utf8
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of decoding a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// The bytes are text.
    Text {
        /// The decoded text, without the BOM.
        text: String,
        /// The encoding it was decoded from.
        encoding: Encoding,
        /// Whether the file started with a byte order mark.
        bom: bool,
    },
    /// The bytes look binary (a NUL byte in the first [`BINARY_SNIFF_LEN`] bytes, or a UTF-16
    /// body that is not valid UTF-16).
    Binary,
}

/// Whether `bytes` look binary: a NUL byte within the first [`BINARY_SNIFF_LEN`] bytes.
/// UTF-16 files (which are full of NULs) must be recognised by their BOM before this is asked.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_LEN)];
    memchr::memchr(0, head).is_some()
}

/// Decodes file bytes: a UTF-8 BOM is stripped, a UTF-16 BOM selects UTF-16, a NUL byte near the
/// start means binary, and invalid UTF-8 is decoded lossily (and marked read-only).
pub fn decode(bytes: Vec<u8>) -> Decoded {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return decode_utf8(rest.to_vec(), true);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return decode_utf16(rest, u16::from_le_bytes, Encoding::Utf16Le);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return decode_utf16(rest, u16::from_be_bytes, Encoding::Utf16Be);
    }
    decode_utf8(bytes, false)
}

fn decode_utf8(bytes: Vec<u8>, bom: bool) -> Decoded {
    if looks_binary(&bytes) {
        return Decoded::Binary;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Decoded::Text { text, encoding: Encoding::Utf8, bom },
        Err(e) => Decoded::Text {
            text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            encoding: Encoding::Utf8Lossy,
            bom,
        },
    }
}

fn decode_utf16(body: &[u8], unit: fn([u8; 2]) -> u16, encoding: Encoding) -> Decoded {
    if !body.len().is_multiple_of(2) {
        return Decoded::Binary;
    }
    let units = body.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    match char::decode_utf16(units).collect::<Result<String, _>>() {
        Ok(text) if !text.contains('\0') => Decoded::Text { text, encoding, bom: true },
        _ => Decoded::Binary,
    }
}

/// Encodes text for writing in `encoding`, adding the BOM when `bom` is set. Only UTF-8 is
/// writable; the caller checks [`Encoding::is_editable`] first.
pub fn encode_utf8(text: &str, bom: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 3);
    if bom {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    out.extend_from_slice(text.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> (String, Encoding, bool) {
        match decode(bytes.to_vec()) {
            Decoded::Text { text, encoding, bom } => (text, encoding, bom),
            Decoded::Binary => panic!("decoded as binary: {bytes:?}"),
        }
    }

    #[test]
    fn decodes_each_encoding() {
        let cases: &[(&[u8], &str, Encoding, bool)] = &[
            (b"", "", Encoding::Utf8, false),
            (b"plain\n", "plain\n", Encoding::Utf8, false),
            (b"\xEF\xBB\xBFbom\r\n", "bom\r\n", Encoding::Utf8, true),
            ("h\u{e9}\u{1F600}".as_bytes(), "h\u{e9}\u{1F600}", Encoding::Utf8, false),
            (b"\xFF\xFEh\x00i\x00\n\x00", "hi\n", Encoding::Utf16Le, true),
            (b"\xFE\xFF\x00h\x00i", "hi", Encoding::Utf16Be, true),
            // U+1F600 as a surrogate pair, little endian.
            (b"\xFF\xFE\x3D\xD8\x00\xDE", "\u{1F600}", Encoding::Utf16Le, true),
            (b"caf\xE9\n", "caf\u{FFFD}\n", Encoding::Utf8Lossy, false),
        ];
        for (bytes, want, encoding, bom) in cases {
            assert_eq!(text(bytes), ((*want).to_owned(), *encoding, *bom), "{bytes:?}");
        }
    }

    #[test]
    fn detects_binary() {
        assert_eq!(decode(b"ab\0cd".to_vec()), Decoded::Binary);
        assert_eq!(decode(b"\xEF\xBB\xBF\0".to_vec()), Decoded::Binary);
        // Odd-length UTF-16 and a lone surrogate are not text.
        assert_eq!(decode(b"\xFF\xFEa".to_vec()), Decoded::Binary);
        assert_eq!(decode(b"\xFF\xFE\x3D\xD8".to_vec()), Decoded::Binary);
        // A NUL past the sniffed prefix does not make a file binary.
        let mut late = vec![b'a'; BINARY_SNIFF_LEN];
        late.push(0);
        assert!(matches!(decode(late), Decoded::Text { .. }));
    }

    #[test]
    fn encodes_with_bom() {
        assert_eq!(encode_utf8("x", true), b"\xEF\xBB\xBFx");
        assert_eq!(encode_utf8("x", false), b"x");
        assert!(Encoding::Utf8.is_editable());
        assert!(!Encoding::Utf16Le.is_editable());
        assert!(!Encoding::Utf8Lossy.is_editable());
    }
}
