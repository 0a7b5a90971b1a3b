//! The `edit_file` cascade: `matcher::replace_shared` then `matcher::refine`, as `edit_file` runs
//! them, on a buffer's rope and on a string.
//!
//! A case is a text (mixed line breaks, indentation, typographic punctuation, multi-byte chars,
//! now and then long enough to span rope leaves), an `old_string` (a slice of the text, the same
//! slice re-indented, trimmed, re-broken or with its punctuation folded, or random pieces) and a
//! `new_string`. What must hold whatever tolerant levels the cascade has:
//! - the rope and the string give the same answer;
//! - when `old_string` occurs exactly once (in the `\n` view), the exact level replaces that one
//!   occurrence with `new_string` in the file's line breaks; when it occurs more than once, the
//!   edit is refused as ambiguous at the exact level; with `replace_all`, every occurrence a
//!   left-to-right scan finds is replaced, and none when there are none;
//! - any accepted edit without `replace_all` is one region: the text before and after it is
//!   untouched, and its edges fall on char boundaries, never between the `\r` and `\n` of a CRLF;
//! - no edit merges or splits line breaks at its edges: the result has the text's breaks minus
//!   the replaced ones plus the inserted ones;
//! - the refined changes `edit_file` sends produce the same text as the unrefined ones.

use ropey::Rope;
use tether::edit::matcher::{self, Miss};
use tether::edit::{apply_changes, TextChange};
use tether::text::{LineEnding, SharedText};

use crate::input::Input;
use crate::model;

/// Pieces of texts and strings.
const PIECES: &[&str] = &[
    "a",
    "b",
    "ab",
    "fn f() {",
    "}",
    "x = 1;",
    " ",
    "  ",
    "\t",
    "\n",
    "\n",
    "\r\n",
    "\r",
    "é",
    "e\u{301}",
    "😀",
    "“",
    "”",
    "‘",
    "—",
    "\u{A0}",
    "  if x {\n",
    "    y();\n",
    "  }\n",
    "$1",
    "\\",
];

/// Checks one input.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let n = input.below(40);
    let mut text = input.text(PIECES, n, true);
    if input.chance(1, 8) {
        text = text.repeat(input.below(200) + 1);
    }
    let old = old_string(&mut input, &text);
    let n = input.below(6);
    let new = input.text(PIECES, n, true);
    let replace_all = input.chance(1, 6);
    if old.is_empty() || model::lf(&old) == model::lf(&new) {
        // edit_file refuses these before it matches (check_strings).
        return;
    }
    if std::env::var_os("TETHER_FUZZ_DEBUG").is_some() {
        eprintln!("text {text:?}\nold {old:?}\nnew {new:?}\nreplace_all {replace_all}");
    }
    check_case(&text, &old, &new, replace_all);
}

/// An `old_string` for `text`: usually taken from it.
fn old_string(input: &mut Input<'_>, text: &str) -> String {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let a = bounds[input.below(bounds.len())];
    let b = bounds[input.below(bounds.len())];
    let slice = &text[a.min(b)..a.max(b)];
    match input.below(8) {
        0..=2 => slice.to_owned(),
        3 => model::lf(slice),
        4 => slice.lines().map(str::trim_start).collect::<Vec<_>>().join("\n"),
        5 => slice.lines().map(|l| format!("    {}", l.trim())).collect::<Vec<_>>().join("\n"),
        6 => slice.replace(['“', '”'], "\"").replace('—', "-").replace('\u{A0}', " "),
        _ => {
            let n = input.below(5);
            input.text(PIECES, n, true)
        }
    }
}

/// `new` written between `before` and `after`: a break at its start or end that would join the
/// break next to it (a lone `\r` and a `\n`) is written `\r\n`.
fn apart(new: &str, before: &str, after: &str) -> String {
    let mut out = new.to_owned();
    if before.ends_with('\r') && out.starts_with('\n') {
        out.insert(0, '\r');
    }
    if after.starts_with('\n') && out.ends_with('\r') {
        out.push('\n');
    }
    out
}

/// For every byte offset of `text` (and its end), the offset in the `\n` view (`model::lf`), where
/// a `\r\n` is one byte: an offset inside a `\r\n` maps to the view's `\n`.
fn view_offsets(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len() + 1);
    let mut view = 0;
    for i in 0..b.len() {
        out.push(view);
        if !(b[i] == b'\r' && b.get(i + 1) == Some(&b'\n')) {
            view += 1;
        }
    }
    out.push(view);
    out
}

/// Runs the cascade on `text` and checks every invariant.
fn check_case(text: &str, old: &str, new: &str, replace_all: bool) {
    let rope = SharedText::Rope(Rope::from_str(text));
    let string = SharedText::from(text.to_owned());
    let on_rope = matcher::replace_shared(&rope, old, new, replace_all);
    let on_string = matcher::replace_shared(&string, old, new, replace_all);
    let on_str = matcher::replace(text, old, new, replace_all);
    let key = |r: &Result<matcher::Replaced, Miss>| match r {
        Ok(r) => format!("{:?} by {}", r.changes, r.strategy.name),
        Err(Miss::NoMatch { exact_only, .. }) => format!("no match (exact only: {exact_only})"),
        Err(Miss::Ambiguous { strategy, lines }) => format!("ambiguous by {}: {lines:?}", strategy.name),
    };
    assert_eq!(key(&on_rope), key(&on_str), "a rope and a string give the same answer");
    assert_eq!(key(&on_string), key(&on_str), "a shared string and a string give the same answer");
    if let Err(miss) = &on_str {
        // The message for the model is built without a panic, whatever the text.
        let _ = miss.to_error("f.txt", "old_string");
    }

    let hay = model::lf(text);
    let needle = model::lf(old);
    let found = model::occurrences(&hay, &needle);
    let brk = if text.contains('\r') { LineEnding::detect(text).break_for(text) } else { "\n" };
    let new_text = model::with_breaks(&model::lf(new), brk);
    // The `\n`-view offset of each byte offset of `text` that starts a char.
    let view_offsets = view_offsets(text);
    let view_at = |at: usize| view_offsets[at];
    match (&on_str, replace_all) {
        (Ok(r), false) => {
            assert_eq!(r.changes.len(), 1, "one region");
            if found.len() == 1 {
                assert_eq!(r.strategy.name, "exact", "a unique exact occurrence is matched exactly");
                let c = &r.changes[0];
                assert_eq!(view_at(c.range.start.get()), found[0], "the occurrence is the region");
                assert_eq!(model::lf(&text[c.range.start.get()..c.range.end.get()]), needle);
                let (s, e) = (c.range.start.get(), c.range.end.get());
                assert_eq!(c.text, apart(&new_text, &text[..s], &text[e..]), "new_string in the file's line breaks");
            } else {
                assert!(found.is_empty(), "an ambiguous exact occurrence was replaced: {found:?}");
                assert_ne!(r.strategy.name, "exact");
            }
        }
        (Ok(r), true) => {
            assert_eq!(r.strategy.name, "exact", "replace_all matches exactly");
            let mut expected = Vec::new();
            for at in found {
                if expected.last().is_none_or(|&last| at >= last + needle.len()) {
                    expected.push(at);
                }
            }
            let got: Vec<usize> = r.changes.iter().map(|c| view_at(c.range.start.get())).collect();
            assert_eq!(got, expected, "every occurrence a left-to-right scan finds");
            for c in &r.changes {
                assert_eq!(model::lf(&text[c.range.start.get()..c.range.end.get()]), needle);
                let (s, e) = (c.range.start.get(), c.range.end.get());
                assert_eq!(c.text, apart(&new_text, &text[..s], &text[e..]));
            }
        }
        (Err(Miss::Ambiguous { strategy, lines }), false) => {
            assert!(lines.len() > 1, "ambiguous means several regions");
            if found.len() > 1 {
                assert_eq!(strategy.name, "exact", "several exact occurrences are ambiguous at the exact level");
            } else {
                assert!(found.is_empty(), "a unique exact occurrence was called ambiguous");
            }
        }
        (Err(Miss::NoMatch { exact_only, .. }), all) => {
            assert!(found.is_empty(), "no_match although `old_string` occurs {} times", found.len());
            assert_eq!(*exact_only, all);
        }
        (Err(Miss::Ambiguous { .. }), true) => panic!("replace_all is never ambiguous"),
    }

    let Ok(replaced) = on_str else { return };
    let mut end = 0;
    for c in &replaced.changes {
        let (s, e) = (c.range.start.get(), c.range.end.get());
        assert!(end <= s && s <= e && e <= text.len(), "sorted, disjoint, in range: {:?}", replaced.changes);
        assert!(text.is_char_boundary(s) && text.is_char_boundary(e), "char boundaries");
        for edge in [s, e] {
            let inside_crlf =
                edge > 0 && text.as_bytes()[edge - 1] == b'\r' && text.as_bytes().get(edge) == Some(&b'\n');
            assert!(!inside_crlf, "an edge between the \\r and \\n of a CRLF: {c:?}");
        }
        end = e;
    }
    let result = apply_changes(text, &replaced.changes);
    // The result is the untouched stretches and the written texts in turn. Where a stretch
    // ending in a lone `\r` comes to meet one starting with `\n` (what stood between them
    // deleted), the two join into one `\r\n`: that is the text asked for. A break tether writes
    // must never join a neighbour.
    let mut pieces: Vec<(&str, bool)> = Vec::new();
    let mut at = 0;
    for c in &replaced.changes {
        pieces.push((&text[at..c.range.start.get()], false));
        pieces.push((&c.text, true));
        at = c.range.end.get();
    }
    pieces.push((&text[at..], false));
    pieces.retain(|(p, _)| !p.is_empty());
    let mut joins = 0;
    for w in pieces.windows(2) {
        let ((left, left_written), (right, right_written)) = (w[0], w[1]);
        if left.ends_with('\r') && right.starts_with('\n') {
            assert!(
                !left_written && !right_written,
                "a written break joins its neighbour: {text:?} with {:?} is {result:?}",
                replaced.changes
            );
            joins += 1;
        }
    }
    let expected: usize = pieces.iter().map(|(p, _)| model::breaks(p)).sum::<usize>() - joins;
    assert_eq!(
        model::breaks(&result),
        expected,
        "line breaks merged or split at an edit's edges: {text:?} with {:?} is {result:?}",
        replaced.changes
    );
    let refined: Vec<TextChange> = matcher::refine(&rope, replaced.changes.clone());
    assert_eq!(apply_changes(text, &refined), result, "the refined changes make the same text");
}
