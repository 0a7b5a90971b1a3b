//! MCP messages as JSON lines, with long strings escaped eight bytes at a time.
//!
//! serde_json escapes a string one byte at a time and hands every run and every escape to its
//! writer separately: about 1 ms per MiB of source text, which made the JSON of a 20 MiB read's
//! reply cost more than reading and numbering the file. [`to_line`] serialises a message with
//! serde_json, except that each string of [`LONG`] bytes or more is escaped here (eight bytes per
//! step, no writer in between) and left out of serde_json's output as a placeholder; the line is
//! then the pieces of serde_json's output with the escaped strings between them, written in turn,
//! never copied into one buffer.
//!
//! A placeholder is found by its serialised form, which must occur exactly once: if another string
//! of the message happens to hold a placeholder's text, the message is serialised by serde_json
//! alone. Correctness never rests on the placeholder being unguessable.

use std::cell::RefCell;

use serde::ser::{
    Serialize, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};

/// Strings at least this long are escaped by [`push_quoted`] rather than by serde_json.
pub const LONG: usize = 16 << 10;

/// One serialised message, ending in a newline: pieces to write in order.
#[derive(Debug)]
pub struct Line(pub Vec<Vec<u8>>);

impl Line {
    /// The whole line in one buffer (for tests and the fuzz targets; the transport writes the
    /// pieces one after another instead).
    pub fn concat(&self) -> Vec<u8> {
        self.0.concat()
    }
}

/// `message` as one JSON line.
pub fn to_line<T: Serialize + ?Sized>(message: &T) -> serde_json::Result<Line> {
    let long = RefCell::new(Vec::new());
    let mut short = Vec::with_capacity(256);
    message.serialize(Strings { inner: &mut serde_json::Serializer::new(&mut short), long: &long, raw: false })?;
    let long = long.into_inner();
    if long.is_empty() {
        short.push(b'\n');
        return Ok(Line(vec![short]));
    }
    match splice(&short, long) {
        Some(pieces) => Ok(Line(pieces)),
        None => {
            let mut whole = serde_json::to_vec(message)?;
            whole.push(b'\n');
            Ok(Line(vec![whole]))
        }
    }
}

/// serde_json's output `short` with each placeholder replaced by its escaped string, as pieces;
/// `None` when a placeholder does not occur exactly once.
fn splice(short: &[u8], long: Vec<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
    let mut pieces = Vec::with_capacity(2 * long.len() + 1);
    let mut done = 0;
    for (k, quoted) in long.into_iter().enumerate() {
        let mut marker = Vec::new();
        push_quoted(&mut marker, &placeholder(k));
        let mut found = memchr::memmem::find_iter(short, &marker);
        // Placeholders appear in the order their strings were serialised.
        let (Some(at), None) = (found.next(), found.next()) else { return None };
        if at < done {
            return None;
        }
        pieces.push(short[done..at].to_vec());
        pieces.push(quoted);
        done = at + marker.len();
    }
    let mut last = short[done..].to_vec();
    last.push(b'\n');
    pieces.push(last);
    Some(pieces)
}

/// The stand-in for the `k`th long string of a message.
fn placeholder(k: usize) -> String {
    format!("\u{1}tether long string {k}\u{1}")
}

/// Appends `s` to `out` as a JSON string, quotes included, escaped exactly as serde_json does
/// (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00XX` for other control characters, nothing else).
pub fn push_quoted(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    // Source text has an escape (a newline) every few dozen bytes, two bytes each.
    out.reserve(bytes.len() + bytes.len() / 16 + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    loop {
        i += clean_prefix(&bytes[i..]);
        let Some(&b) = bytes.get(i) else { break };
        out.extend_from_slice(&bytes[start..i]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
            }
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// How many leading bytes of `bytes` need no escape.
fn clean_prefix(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut n = 0;
    for word in words.by_ref() {
        let mask = escapes_in(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        if mask != 0 {
            // Little-endian: the lowest flagged byte is the first one in the text.
            return n + (mask.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + words.remainder().iter().take_while(|&&b| !needs_escape(b)).count()
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that needs an escape (below 0x20, `"` or `\`). Exact for
/// the first flagged byte, which is all [`clean_prefix`] reads: borrows only travel upwards.
fn escapes_in(word: u64) -> u64 {
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGHS
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// A serializer that passes everything to `inner` except long strings, which it escapes into
/// `long` and replaces with a placeholder.
struct Strings<'l, S> {
    inner: S,
    long: &'l RefCell<Vec<Vec<u8>>>,
    /// The fields of this struct are serde_json's own and go to it untouched.
    raw: bool,
}

/// `inner`, a compound of serde_json's, with its values' strings going through [`Strings`].
fn nested<C>(long: &RefCell<Vec<Vec<u8>>>, inner: C) -> Strings<'_, C> {
    Strings { inner, long, raw: false }
}

/// A value whose strings go through [`Strings`] too.
struct Wrap<'a, 'l, T: ?Sized> {
    value: &'a T,
    long: &'l RefCell<Vec<Vec<u8>>>,
}

impl<T: Serialize + ?Sized> Serialize for Wrap<'_, '_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Strings { inner: serializer, long: self.long, raw: false })
    }
}

impl<'l, S> Strings<'l, S> {
    fn wrap<'a, T: ?Sized>(&self, value: &'a T) -> Wrap<'a, 'l, T> {
        Wrap { value, long: self.long }
    }
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
            self.inner.$method($($arg),*)
        })*
    };
}

impl<'l, S: Serializer> Serializer for Strings<'l, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Strings<'l, S::SerializeSeq>;
    type SerializeTuple = Strings<'l, S::SerializeTuple>;
    type SerializeTupleStruct = Strings<'l, S::SerializeTupleStruct>;
    type SerializeTupleVariant = Strings<'l, S::SerializeTupleVariant>;
    type SerializeMap = Strings<'l, S::SerializeMap>;
    type SerializeStruct = Strings<'l, S::SerializeStruct>;
    type SerializeStructVariant = Strings<'l, S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        if v.len() < LONG {
            return self.inner.serialize_str(v);
        }
        let mut quoted = Vec::new();
        push_quoted(&mut quoted, v);
        let placeholder = {
            let mut long = self.long.borrow_mut();
            long.push(quoted);
            placeholder(long.len() - 1)
        };
        self.inner.serialize_str(&placeholder)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        let value = self.wrap(value);
        self.inner.serialize_some(&value)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Result<S::Ok, S::Error> {
        let value = self.wrap(value);
        self.inner.serialize_newtype_struct(name, &value)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        let value = self.wrap(value);
        self.inner.serialize_newtype_variant(name, index, variant, &value)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Ok(nested(self.long, self.inner.serialize_seq(len)?))
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        Ok(nested(self.long, self.inner.serialize_tuple(len)?))
    }

    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        Ok(nested(self.long, self.inner.serialize_tuple_struct(name, len)?))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Ok(nested(self.long, self.inner.serialize_tuple_variant(name, index, variant, len)?))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(nested(self.long, self.inner.serialize_map(len)?))
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        let long = self.long;
        // serde_json writes a `RawValue` (and, with `arbitrary_precision`, a `Number`) as a struct
        // of this name whose one field is written verbatim: a placeholder there would be unquoted.
        let raw = name.starts_with("$serde_json::private::");
        Ok(Strings { inner: self.inner.serialize_struct(name, len)?, long, raw })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Ok(nested(self.long, self.inner.serialize_struct_variant(name, index, variant, len)?))
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The compounds whose values come one after another: each value goes through [`Strings`] too.
macro_rules! sequence {
    ($($trait:ident::$method:ident;)*) => {
        $(impl<S: $trait> $trait for Strings<'_, S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
                let value = self.wrap(value);
                self.inner.$method(&value)
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.inner.end()
            }
        })*
    };
}

sequence! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

/// Keys go to serde_json as they are: it accepts only a few kinds of key, and keys are short.
impl<S: SerializeMap> SerializeMap for Strings<'_, S> {
    type Ok = S::Ok;
    type Error = S::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        self.inner.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        let value = self.wrap(value);
        self.inner.serialize_value(&value)
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), S::Error> {
        let value = self.wrap(value);
        self.inner.serialize_entry(key, &value)
    }

    fn end(self) -> Result<S::Ok, S::Error> {
        self.inner.end()
    }
}

/// The compounds with named fields. A field of serde_json's own verbatim struct (`raw`) goes to
/// it untouched.
macro_rules! fields {
    ($($trait:ident;)*) => {
        $(impl<S: $trait> $trait for Strings<'_, S> {
            type Ok = S::Ok;
            type Error = S::Error;

            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), S::Error> {
                if self.raw {
                    return self.inner.serialize_field(key, value);
                }
                let value = self.wrap(value);
                self.inner.serialize_field(key, &value)
            }

            fn skip_field(&mut self, key: &'static str) -> Result<(), S::Error> {
                self.inner.skip_field(key)
            }

            fn end(self) -> Result<S::Ok, S::Error> {
                self.inner.end()
            }
        })*
    };
}

fields! {
    SerializeStruct;
    SerializeStructVariant;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn quoted(s: &str) -> String {
        let mut out = Vec::new();
        push_quoted(&mut out, s);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // Every ASCII byte, at every offset inside and across the eight-byte steps, and text
        // with multi-byte characters around the escapes.
        let ascii: String = (0u8..128).map(char::from).collect();
        let mixed = "é漢🦀\"\\\u{7f}\u{1}\r\n\t\u{8}\u{c}x\u{1f} \u{20}".repeat(3);
        for text in [ascii.as_str(), mixed.as_str(), "", "plain", "12345678", "1234567\n", "\n1234567"] {
            for (start, _) in text.char_indices().chain([(text.len(), ' ')]) {
                let s = &text[start..];
                assert_eq!(quoted(s), serde_json::to_string(s).expect("serde_json"), "{s:?}");
            }
        }
    }

    #[test]
    fn a_message_with_long_strings_is_the_json_serde_json_writes() {
        let long = "a line of text with \"quotes\", a tab\t and a newline\n".repeat(1000);
        let other = "another\\long one\u{1}".repeat(2000);
        let message = json!({
            "jsonrpc": "2.0",
            "id": 7,
            "result": {"content": [{"type": "text", "text": long}, {"type": "text", "text": "short"}],
                       "structuredContent": {"stdout": other, "exit": 0, "list": [long, 1.5, null, true]}},
        });
        let line = to_line(&message).expect("serialises");
        assert!(line.0.len() > 1, "long strings were spliced in, not left to serde_json");
        let mut expected = serde_json::to_vec(&message).expect("serde_json");
        expected.push(b'\n');
        assert_eq!(line.concat(), expected);
    }

    #[test]
    fn a_string_that_holds_a_placeholder_falls_back_to_serde_json() {
        let long = "x".repeat(LONG);
        let message = json!({"a": long, "b": placeholder(0)});
        let line = to_line(&message).expect("serialises");
        assert_eq!(line.0.len(), 1, "the ambiguous message went to serde_json whole");
        let mut expected = serde_json::to_vec(&message).expect("serde_json");
        expected.push(b'\n');
        assert_eq!(line.concat(), expected);
    }

    #[test]
    fn a_raw_value_is_left_to_serde_json() {
        // serde_json writes a RawValue's text verbatim: a placeholder there would be unquoted,
        // and the quoted one in `other` would then receive the raw text.
        #[derive(serde::Serialize)]
        struct Message {
            raw: Box<serde_json::value::RawValue>,
            other: String,
        }
        let raw = serde_json::to_string(&"y".repeat(LONG)).expect("JSON");
        let message =
            Message { raw: serde_json::value::RawValue::from_string(raw).expect("raw"), other: placeholder(0) };
        let mut expected = serde_json::to_vec(&message).expect("serde_json");
        expected.push(b'\n');
        assert_eq!(to_line(&message).expect("serialises").concat(), expected);
    }

    #[test]
    fn a_short_message_is_one_piece() {
        let line = to_line(&json!({"jsonrpc": "2.0", "method": "ping"})).expect("serialises");
        assert_eq!(line.0, vec![b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n".to_vec()]);
    }
}
