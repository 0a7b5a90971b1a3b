//! LSP incremental sync: the document store against a plain string.
//!
//! A document is opened, then changed by a series of `didChange` notifications, each with one to
//! three content changes (ranges in UTF-8, UTF-16 or UTF-32 positions, some past the end of a
//! line or the text, some inside a surrogate pair or a CRLF, some reversed; whole-text
//! replacements; text full of CRLF, lone CR, emoji and combining marks). The model is a `String`
//! edited by converting each position itself (`model::offset_of`, the LSP clamping rules). After
//! every change the [`Document`] equals the model, and after every notification the [`Store`]
//! does; a notification whose version does not move forward is refused and changes nothing.
//! Positions also convert back: `offset_to_position` agrees with the model, and
//! `position_to_offset` inverts it everywhere but between the `\r` and `\n` of a CRLF.

use std::path::PathBuf;

use tether::lsp::{Store, SyncError};
use tether::text::{offset_to_position, position_to_offset, Document, Offset, Position, PositionEncoding};
use tower_lsp::lsp_types::Url;

use crate::input::Input;
use crate::model::{self, Units};

/// Pieces of inserted text.
const PIECES: &[&str] = &[
    "a",
    "bc",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\r\r\n",
    "é",
    "e\u{301}",
    "\u{301}",
    "😀",
    "👍🏽",
    "漢字",
    "\u{FEFF}",
    "\u{10000}",
    "x\r",
    "\ny",
];

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let (enc, units) = match input.below(3) {
        0 => (PositionEncoding::Utf8, Units::Utf8),
        1 => (PositionEncoding::Utf16, Units::Utf16),
        _ => (PositionEncoding::Utf32, Units::Utf32),
    };
    let n = input.below(24);
    let mut model = input.text(PIECES, n, true);
    let store = Store::default();
    let uri = Url::parse("file:///fuzz/doc.txt").expect("a URL");
    let path = PathBuf::from("/fuzz/doc.txt");
    store.open(uri.clone(), path.clone(), Document::from_text(&model), 1, false, None);
    let mut doc = Document::from_text(&model);
    let mut version = 1;
    let rounds = input.below(40) + 1;
    for _ in 0..rounds {
        if input.is_empty() {
            break;
        }
        let mut changes: Vec<(Option<(Position, Position)>, String)> = Vec::new();
        let mut expected = model.clone();
        for _ in 0..=input.below(3) {
            let (range, text) = change(&mut input, &expected, units);
            expected = apply(&expected, range, &text, units);
            // Every intermediate text: the document alone, change by change.
            doc.apply_change(range, &text, enc);
            assert_eq!(doc.text(), expected, "the document after a change in {enc:?}");
            changes.push((range, text));
        }
        let stale = input.chance(1, 16);
        let next = if stale { version - input.below(2) as i32 } else { version + 1 + input.below(3) as i32 };
        let result = store.change(&uri, next, changes.iter().map(|(r, t)| (*r, t.as_str())), enc, 0);
        if stale {
            assert_eq!(result, Err(SyncError::Stale { current: version, got: next }));
            // A refused notification changes nothing; the document alone took it, so it follows
            // the store again from the store's text.
            doc = Document::from_text(&model);
        } else {
            assert_eq!(result, Ok(()));
            version = next;
            model = expected;
        }
        let state = store.get(&path).expect("the document is open");
        assert_eq!(String::from(&state.rope), model, "the store after a notification in {enc:?}");
        assert_eq!(state.version, version);
        check_positions(&mut input, &state.rope, &model, enc, units);
    }
    assert_eq!(store.close(&uri), Ok(path.clone()));
    assert!(store.get(&path).is_none(), "closed");
}

/// One content change against `text`: a range (or `None` for the whole text) and the new text.
fn change(input: &mut Input<'_>, text: &str, units: Units) -> (Option<(Position, Position)>, String) {
    let n = input.below(6);
    let mut new = input.text(PIECES, n, true);
    if input.chance(1, 16) {
        // Long texts span several rope leaves, with CRLF pairs at their edges.
        new = new.repeat(input.below(600) + 1);
    }
    if input.chance(1, 24) {
        return (None, new);
    }
    let start = position(input, text, units);
    let end = match input.below(4) {
        0 => start,
        // Reversed now and then: the end is clamped to the start.
        1 => position(input, text, units),
        _ => {
            let lines = input.below(2) as u32;
            let chars = input.below(5) as u32;
            Position::new(start.line + lines, if lines == 0 { start.character + chars } else { chars })
        }
    };
    (Some((start, end)), new)
}

/// A position in `text`: mostly inside it, now and then past a line's end or the last line, or
/// in the middle of a multi-unit char.
fn position(input: &mut Input<'_>, text: &str, units: Units) -> Position {
    let spans = model::line_spans(text);
    let line = input.below(spans.len() + 1);
    let width = spans.get(line).map_or(0, |&(s, e, _)| text[s..e].chars().map(|c| units.len(c)).sum::<usize>());
    let character = input.below(width + 3);
    Position::new(line as u32, character as u32)
}

/// `text` with one change applied by the model.
fn apply(text: &str, range: Option<(Position, Position)>, new: &str, units: Units) -> String {
    let Some((start, end)) = range else { return new.to_owned() };
    let s = model::offset_of(text, start.line as usize, start.character as usize, units);
    let e = model::offset_of(text, end.line as usize, end.character as usize, units).max(s);
    format!("{}{new}{}", &text[..s], &text[e..])
}

/// Offsets and positions convert as the model converts them.
fn check_positions(input: &mut Input<'_>, rope: &ropey::Rope, text: &str, enc: PositionEncoding, units: Units) {
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    for _ in 0..4 {
        let at = boundaries[input.below(boundaries.len())];
        let (line, character) = model::position_of(text, at, units);
        let pos = offset_to_position(rope, Offset::new(at), enc);
        assert_eq!((pos.line as usize, pos.character as usize), (line, character), "the position of byte {at}");
        let inside_crlf = at > 0 && text.as_bytes()[at - 1] == b'\r' && text.as_bytes().get(at) == Some(&b'\n');
        let back = position_to_offset(rope, pos, enc).get();
        if inside_crlf {
            assert_eq!(back, at - 1, "a position inside a CRLF clamps to the end of its line");
        } else {
            assert_eq!(back, at, "position_to_offset inverts offset_to_position");
        }
    }
}
