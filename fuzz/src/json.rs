//! `mcp/json.rs`: a message's JSON line must be byte-identical to serde_json's, whatever the
//! message holds.
//!
//! A case is a tree of values built from the input, shaped to reach every method of the
//! splicing serializer: strings short and long (at and around [`LONG`], full of escapes,
//! multi-byte chars, and the placeholder's own text), numbers of every width, options, unit,
//! newtype, tuple and struct variants, sequences, maps with string and integer keys, bytes,
//! chars, and serde_json's verbatim `RawValue` (which must be left alone). [`to_line`] of the tree,
//! and of the same tree as a `serde_json::Value`, must equal `serde_json::to_vec` plus a newline;
//! every string escapes as serde_json escapes it ([`push_quoted`]).

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use tether::mcp::json::{push_quoted, to_line, LONG};

use crate::input::Input;

/// Pieces of strings: escapes, multi-byte chars, and the placeholder's text.
const PIECES: &[&str] = &[
    "a",
    "text ",
    "\"",
    "\\",
    "\n",
    "\r",
    "\t",
    "\u{8}",
    "\u{c}",
    "\u{1}",
    "\u{1f}",
    "\u{7f}",
    "é",
    "漢",
    "🦀",
    "/",
    "\u{1}tether long string 0\u{1}",
    "\u{1}tether long string 1\u{1}",
    "tether long string",
    "\u{2028}",
];

/// One node of a message: every shape serde's data model has.
#[derive(Debug, Serialize)]
enum Node {
    Unit,
    Str(String),
    Int(i64),
    Big(u128, i128),
    Float(f64),
    Bool(bool),
    Char(char),
    Opt(Option<Box<Node>>),
    Seq(Vec<Node>),
    Tuple(Box<Node>, String),
    Struct { text: String, next: Option<Box<Node>>, list: Vec<String> },
    Map(BTreeMap<String, Node>),
    IntKeys(BTreeMap<i32, String>),
    Bytes(Bytes),
    Raw(Box<RawValue>),
    Newtype(Wrapper),
    UnitStruct(Empty),
    Pair((String, u8)),
    Flat(Flat),
}

/// Bytes serialised with `serialize_bytes`.
#[derive(Debug)]
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

/// A newtype struct.
#[derive(Debug, Serialize)]
struct Wrapper(String);

/// A unit struct.
#[derive(Debug, Serialize)]
struct Empty;

/// A struct with a flattened field (serialised as a map) and a skipped one.
#[derive(Debug, Serialize)]
struct Flat {
    name: String,
    #[serde(flatten)]
    rest: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    maybe: Option<String>,
}

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let mut budget = 48;
    let node = node(&mut input, 0, &mut budget);
    let mut expected = serde_json::to_vec(&node).expect("serde_json serialises the tree");
    expected.push(b'\n');
    let line = to_line(&node).expect("to_line serialises what serde_json does");
    assert_eq!(line.concat(), expected, "to_line of the tree");
    let value = serde_json::to_value(&node).expect("a Value");
    let mut expected = serde_json::to_vec(&value).expect("serde_json serialises the Value");
    expected.push(b'\n');
    let line = to_line(&value).expect("to_line of a Value");
    assert_eq!(line.concat(), expected, "to_line of the tree as a Value");
    visit_strings(&value, &mut |s| {
        let mut quoted = Vec::new();
        push_quoted(&mut quoted, s);
        assert_eq!(quoted, serde_json::to_vec(s).expect("a string"), "push_quoted({s:?})");
    });
}

/// A string: short, or now and then long (at, just under or over [`LONG`]).
fn string(input: &mut Input<'_>) -> String {
    let n = input.below(6);
    let mut s = input.text(PIECES, n, true);
    if input.chance(1, 6) {
        let unit = if s.is_empty() { "x".to_owned() } else { s.clone() };
        s = unit.repeat(LONG / unit.len() + 1);
        // Cut at a char boundary just under, at or over the limit.
        let mut cut = LONG + input.below(17) - 8;
        while !s.is_char_boundary(cut.min(s.len())) {
            cut += 1;
        }
        s.truncate(cut.min(s.len()));
    }
    s
}

/// A tree of at most `budget` nodes.
fn node(input: &mut Input<'_>, depth: usize, budget: &mut usize) -> Node {
    if *budget == 0 || depth > 6 {
        return Node::Unit;
    }
    *budget -= 1;
    let mut child = |input: &mut Input<'_>| Box::new(node(input, depth + 1, budget));
    match input.below(20) {
        0 => Node::Unit,
        1..=3 => Node::Str(string(input)),
        4 => Node::Int(i64::from_le_bytes(array(input))),
        5 => Node::Big(u128::from(u64::from_le_bytes(array(input))), i128::from(i64::from_le_bytes(array(input)))),
        6 => Node::Float(f64::from_le_bytes(array(input))),
        7 => Node::Bool(input.chance(1, 2)),
        8 => Node::Char(char::from_u32(u64::from_le_bytes(array(input)) as u32 % 0x11_0000).unwrap_or('\u{1}')),
        9 => Node::Opt(input.chance(1, 2).then(|| child(input))),
        10 | 11 => Node::Seq((0..input.below(4)).map(|_| *child(input)).collect()),
        12 => Node::Tuple(child(input), string(input)),
        13 => Node::Struct {
            text: string(input),
            next: input.chance(1, 2).then(|| child(input)),
            list: (0..input.below(3)).map(|_| string(input)).collect(),
        },
        14 => Node::Map((0..input.below(4)).map(|_| (string(input), *child(input))).collect()),
        15 => Node::IntKeys((0..input.below(3)).map(|_| (i32::from(input.byte()) - 128, string(input))).collect()),
        16 => Node::Bytes(Bytes(input.bytes(8).to_vec())),
        17 => {
            let inner = string(input);
            let json = serde_json::to_string(&inner).expect("a string");
            Node::Raw(RawValue::from_string(json).expect("valid JSON"))
        }
        18 => Node::Newtype(Wrapper(string(input))),
        _ => match input.below(3) {
            0 => Node::UnitStruct(Empty),
            1 => Node::Pair((string(input), input.byte())),
            _ => Node::Flat(Flat {
                name: string(input),
                rest: (0..input.below(3)).map(|_| (string(input), string(input))).collect(),
                maybe: input.chance(1, 2).then(|| string(input)),
            }),
        },
    }
}

/// Eight bytes of the input.
fn array(input: &mut Input<'_>) -> [u8; 8] {
    std::array::from_fn(|_| input.byte())
}

/// Calls `f` on every string of `v`, keys included.
fn visit_strings(v: &serde_json::Value, f: &mut impl FnMut(&str)) {
    match v {
        serde_json::Value::String(s) => f(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| visit_strings(x, f)),
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                f(k);
                visit_strings(x, f);
            }
        }
        _ => {}
    }
}
