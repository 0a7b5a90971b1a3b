//! `text/decode.rs`: bytes to text and back.
//!
//! Two directions, each checked against the rules `decode` documents:
//! - any bytes: the decoded encoding, BOM and text are what the bytes dictate (a UTF-8 BOM
//!   stripped; a UTF-16 BOM selecting UTF-16, binary unless the body is whole, valid and free of
//!   NUL; otherwise binary exactly when a NUL is in the first [`BINARY_SNIFF_LEN`] bytes, and
//!   invalid UTF-8 decoded lossily), and text in an editable encoding encodes back to the very
//!   same bytes;
//! - any text: encoded as UTF-8 (with or without a BOM) or UTF-16 (LE or BE, with its BOM), it
//!   decodes to the same text, or to binary exactly when a NUL falls in the sniffed prefix.
//!
//! [`Document::from_bytes`] must agree with `decode` on every input.

use tether::text::{decode, encode_utf8, Decoded, Document, Encoding, BINARY_SNIFF_LEN};

use crate::input::Input;

/// Pieces of the texts the second direction encodes: BOM look-alikes, NULs, surrogate-pair
/// characters, combining marks and line breaks.
const PIECES: &[&str] = &[
    "a",
    "text ",
    "\n",
    "\r\n",
    "\r",
    "\0",
    "\u{FEFF}",
    "\u{FFFE}",
    "é",
    "e\u{301}",
    "😀",
    "漢",
    "\u{10FFFF}",
    "\u{7F}",
    "\u{1}",
];

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    match input.byte() % 4 {
        // The raw bytes, with a BOM in front now and then.
        0 | 1 => {
            let prefix: &[u8] = match input.byte() % 5 {
                0 => b"\xEF\xBB\xBF",
                1 => b"\xFF\xFE",
                2 => b"\xFE\xFF",
                _ => b"",
            };
            let mut bytes = prefix.to_vec();
            let rest = input.bytes(usize::MAX);
            bytes.extend_from_slice(rest);
            // A NUL just inside or just past the sniffed prefix, now and then.
            if bytes.len() > 2 && bytes[bytes.len() - 1] == b'#' {
                let fill = BINARY_SNIFF_LEN - 2 + usize::from(bytes[0] % 4);
                bytes.splice(0..0, std::iter::repeat_n(b'x', fill));
                bytes.insert(fill, 0);
            }
            check_bytes(&bytes);
        }
        _ => {
            let n = input.below(64);
            let mut text = input.text(PIECES, n, true);
            if input.chance(1, 4) {
                // Long enough for the NUL rule's boundary.
                let k = BINARY_SNIFF_LEN / text.len().max(1) + 1;
                text = text.repeat(k.min(BINARY_SNIFF_LEN));
            }
            check_text(&text);
        }
    }
}

/// Decodes `bytes` and checks the outcome against the documented rules.
fn check_bytes(bytes: &[u8]) {
    let decoded = decode(bytes.to_vec());
    let doc = Document::from_bytes(bytes.to_vec());
    match (&decoded, &doc) {
        (Decoded::Binary, None) => {}
        (Decoded::Text { text, encoding, bom }, Some(doc)) => {
            assert_eq!(doc.text(), *text, "Document::from_bytes reads the text decode reads");
            assert_eq!((doc.encoding(), doc.has_bom()), (*encoding, *bom));
        }
        _ => panic!("decode and Document::from_bytes disagree on {bytes:?}"),
    }
    let sniff = |body: &[u8]| body[..body.len().min(BINARY_SNIFF_LEN)].contains(&0);
    let expected = if let Some(body) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        utf8(body, true, sniff(body))
    } else if let Some(body) = bytes.strip_prefix(b"\xFF\xFE") {
        utf16(body, u16::from_le_bytes, Encoding::Utf16Le)
    } else if let Some(body) = bytes.strip_prefix(b"\xFE\xFF") {
        utf16(body, u16::from_be_bytes, Encoding::Utf16Be)
    } else {
        utf8(bytes, false, sniff(bytes))
    };
    assert_eq!(decoded, expected, "{bytes:?}");
    // Round trips: what decodes as editable text writes back byte for byte; UTF-16 re-encodes.
    if let Decoded::Text { text, encoding, bom } = &decoded {
        match encoding {
            Encoding::Utf8 => assert_eq!(encode_utf8(text, *bom), bytes, "UTF-8 round trip"),
            Encoding::Utf8Lossy => assert!(!encoding.is_editable(), "lossy text is never editable"),
            Encoding::Utf16Le | Encoding::Utf16Be => {
                assert_eq!(utf16_bytes(text, *encoding == Encoding::Utf16Le), bytes, "UTF-16 round trip");
                assert!(!encoding.is_editable(), "UTF-16 text is read-only");
            }
        }
    }
}

/// What `decode` must make of a UTF-8 body.
fn utf8(body: &[u8], bom: bool, nul: bool) -> Decoded {
    if nul {
        return Decoded::Binary;
    }
    match std::str::from_utf8(body) {
        Ok(text) => Decoded::Text { text: text.to_owned(), encoding: Encoding::Utf8, bom },
        Err(_) => {
            Decoded::Text { text: String::from_utf8_lossy(body).into_owned(), encoding: Encoding::Utf8Lossy, bom }
        }
    }
}

/// What `decode` must make of a UTF-16 body after its BOM.
fn utf16(body: &[u8], unit: fn([u8; 2]) -> u16, encoding: Encoding) -> Decoded {
    if body.len() % 2 == 1 {
        return Decoded::Binary;
    }
    let units: Vec<u16> = body.chunks(2).map(|c| unit([c[0], c[1]])).collect();
    match String::from_utf16(&units) {
        Ok(text) if !text.contains('\0') => Decoded::Text { text, encoding, bom: true },
        _ => Decoded::Binary,
    }
}

/// `text` as UTF-16 bytes with a BOM.
fn utf16_bytes(text: &str, le: bool) -> Vec<u8> {
    let mut out = if le { vec![0xFF, 0xFE] } else { vec![0xFE, 0xFF] };
    for u in text.encode_utf16() {
        out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
    }
    out
}

/// Encodes `text` every way and checks that it decodes back.
fn check_text(text: &str) {
    for bom in [false, true] {
        let bytes = encode_utf8(text, bom);
        let got = decode(bytes.clone());
        // Without a BOM of its own, a text starting with U+FEFF is read as having one: the bytes
        // are the same, so the bytes must round trip, not the text.
        let bom_read = bom || text.starts_with('\u{FEFF}');
        let body = if bom_read && !bom { &text['\u{FEFF}'.len_utf8()..] } else { text };
        let body_nul = body.as_bytes()[..body.len().min(BINARY_SNIFF_LEN)].contains(&0);
        if body_nul {
            assert_eq!(got, Decoded::Binary, "a NUL in the first {BINARY_SNIFF_LEN} bytes is binary");
        } else {
            assert_eq!(got, Decoded::Text { text: body.to_owned(), encoding: Encoding::Utf8, bom: bom_read });
            assert_eq!(encode_utf8(body, bom_read), bytes, "UTF-8 bytes round trip");
        }
    }
    for le in [true, false] {
        let got = decode(utf16_bytes(text, le));
        if text.contains('\0') {
            assert_eq!(got, Decoded::Binary, "UTF-16 with a NUL is binary");
        } else {
            let encoding = if le { Encoding::Utf16Le } else { Encoding::Utf16Be };
            assert_eq!(got, Decoded::Text { text: text.to_owned(), encoding, bom: true }, "UTF-16 round trip");
        }
    }
}
