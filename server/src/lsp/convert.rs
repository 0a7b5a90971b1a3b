//! Every conversion between tether's values and LSP's: URIs and paths, positions, text edits.
//!
//! Offsets themselves are converted by [`crate::text`]; this module only moves between its
//! types and lsp-types', so that no other part of `lsp/` does position arithmetic.

use std::path::{Path, PathBuf};

use ropey::Rope;
use tower_lsp::lsp_types::{self as lsp, Url};

use crate::edit::TextChange;
use crate::text::{offset_to_position, Position, PositionEncoding};

/// The file path of a `file:` URI; `None` for any other scheme (`untitled:` buffers and such).
pub fn path_of(uri: &Url) -> Option<PathBuf> {
    if uri.scheme() != "file" {
        return None;
    }
    uri.to_file_path().ok()
}

/// The `file:` URI of an absolute path.
pub fn uri_of(path: &Path) -> Option<Url> {
    Url::from_file_path(path).ok()
}

/// The real (canonical) path of `path`, which need not exist: an existing path is canonicalized;
/// a missing one gets its parent canonicalized (a new buffer in an existing directory); anything
/// else is kept as given.
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    match (path.parent().and_then(|p| p.canonicalize().ok()), path.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => path.to_path_buf(),
    }
}

/// An LSP position as tether's.
pub fn from_lsp(p: lsp::Position) -> Position {
    Position::new(p.line, p.character)
}

/// tether's position as an LSP one.
pub fn to_lsp(p: Position) -> lsp::Position {
    lsp::Position::new(p.line, p.character)
}

/// A plan's text changes (byte ranges of `base`) as LSP text edits against the same text.
pub fn text_edits(base: &Rope, changes: &[TextChange], enc: PositionEncoding) -> Vec<lsp::TextEdit> {
    changes
        .iter()
        .map(|c| {
            let start = to_lsp(offset_to_position(base, c.range.start, enc));
            let end = to_lsp(offset_to_position(base, c.range.end, enc));
            lsp::TextEdit::new(lsp::Range::new(start, end), c.text.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{position_to_offset, Document};

    #[test]
    fn text_edits_round_trip_in_every_encoding() {
        let base = "a\u{1F600}b\r\n\u{4E2D}\u{6587}\rx\u{301}y\nlast";
        let changes = [
            TextChange::new(1, 5, "E"),       // the emoji
            TextChange::new(6, 8, "\n"),      // the CRLF
            TextChange::new(11, 11, "+"),     // between the CJK chars
            TextChange::new(20, 24, "final"), // the last line
        ];
        let want = crate::edit::apply_changes(base, &changes);
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            let rope = Rope::from_str(base);
            let edits = text_edits(&rope, &changes, enc);
            // Apply from the end, as a client does, so earlier positions stay valid.
            let mut doc = Document::from_text(base);
            for e in edits.iter().rev() {
                let range = Some((from_lsp(e.range.start), from_lsp(e.range.end)));
                doc.apply_change(range, &e.new_text, enc);
            }
            assert_eq!(doc.text(), want, "{enc:?}");
            let first = from_lsp(edits[0].range.start);
            assert_eq!(position_to_offset(&rope, first, enc).get(), 1, "{enc:?}");
        }
    }

    #[test]
    fn paths_and_uris() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().canonicalize().expect("canonical");
        let uri = uri_of(&real.join("new file.rs")).expect("uri");
        assert!(uri.as_str().ends_with("/new%20file.rs"), "{uri}");
        let path = path_of(&uri).expect("file uri");
        assert_eq!(canonical(&path), real.join("new file.rs"));
        assert_eq!(path_of(&Url::parse("untitled:Untitled-1").expect("url")), None);
    }
}
