//! Every conversion between tether's values and LSP's: URIs and paths, positions, text edits.
//!
//! Offsets themselves are converted by [`crate::text`]; this module only moves between its
//! types and lsp-types', so that no other part of `lsp/` does position arithmetic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ropey::Rope;
use tower_lsp::lsp_types::{
    self as lsp, DeleteFile, DeleteFileOptions, DocumentChangeOperation, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, RenameFile, RenameFileOptions, ResourceOp, TextDocumentEdit, Url,
    WorkspaceEdit,
};

use super::capabilities::ClientCaps;
use super::ops::EditorOp;
use crate::edit::TextChange;
use crate::text::{offset_to_position, Position, PositionEncoding, SharedText};

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
    if let Ok(real) = crate::sys::canonicalize(path) {
        return real;
    }
    match (path.parent().and_then(|p| crate::sys::canonicalize(p).ok()), path.file_name()) {
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

/// Rewrites changes that reach the very end of a text ending in a line break so that they stop
/// before that break, when the change keeps it. The result is the same text, but no edit names
/// the position after the last line: editors that keep the final line break as a property of
/// the buffer rather than as text (Neovim's 'eol') add a stray empty line for such an edit.
pub fn anchor_before_final_break(base: &SharedText, changes: Vec<TextChange>) -> Vec<TextChange> {
    let brk = base.final_break();
    if brk.is_empty() {
        return changes;
    }
    let (len, inner) = (base.len(), base.len() - brk.len());
    let moved: Vec<TextChange> = changes
        .iter()
        .cloned()
        .map(|c| {
            let (start, end) = (c.range.start.get(), c.range.end.get());
            match c.text.strip_suffix(brk) {
                // Replacing up to the end and putting the break back: stop before the break.
                Some(kept) if end == len && start <= inner => TextChange::new(start, inner, kept),
                // Appending after the break: insert before it, moving the break in front.
                Some(kept) if start == len => TextChange::new(inner, inner, format!("{brk}{kept}")),
                _ => c,
            }
        })
        .collect();
    // A moved change could now overlap the change before it; then keep them as they were.
    if crate::edit::plan::validate_shared_changes(base, &moved).is_ok() {
        moved
    } else {
        changes
    }
}

/// The workspace edit for the editor's operations, in the form the client supports, and for each
/// entry of `documentChanges` the index of its operation; `None` when there is nothing to send.
///
/// Text edits alone are ordered most recently changed document first: Neovim checks the version
/// of the first text document edit only, and the document the user is typing in is the one whose
/// version matters most.
pub(crate) fn workspace_edit(caps: &ClientCaps, ops: &[&EditorOp]) -> Option<(WorkspaceEdit, Vec<usize>)> {
    let enc = caps.encoding;
    if !caps.document_changes {
        let mut changes: HashMap<Url, Vec<tower_lsp::lsp_types::TextEdit>> = HashMap::new();
        for op in ops {
            if let EditorOp::Edit(e) = op {
                if !e.changes.is_empty() {
                    changes.entry(e.uri.clone()).or_default().extend(text_edits(&e.base, &e.changes, enc));
                }
            }
        }
        let edit = WorkspaceEdit { changes: Some(changes), ..WorkspaceEdit::default() };
        return edit.changes.as_ref().is_some_and(|c| !c.is_empty()).then_some((edit, Vec::new()));
    }
    let mut out: Vec<(usize, u64, DocumentChangeOperation)> = Vec::new();
    let mut resource_ops = false;
    for (i, op) in ops.iter().enumerate() {
        match op {
            EditorOp::Edit(e) if e.changes.is_empty() => {}
            EditorOp::Edit(e) => out.push((
                i,
                e.last_change,
                DocumentChangeOperation::Edit(TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: e.uri.clone(),
                        version: Some(e.version),
                    },
                    edits: text_edits(&e.base, &e.changes, enc).into_iter().map(OneOf::Left).collect(),
                }),
            )),
            EditorOp::Rename { old_uri, new_uri, overwrite, .. } => {
                resource_ops = true;
                let rename = RenameFile {
                    old_uri: old_uri.clone(),
                    new_uri: new_uri.clone(),
                    options: Some(RenameFileOptions { overwrite: Some(*overwrite), ignore_if_exists: Some(false) }),
                    annotation_id: None,
                };
                out.push((i, 0, DocumentChangeOperation::Op(ResourceOp::Rename(rename))));
            }
            EditorOp::Delete { uri, recursive, .. } => {
                resource_ops = true;
                let delete = DeleteFile {
                    uri: uri.clone(),
                    options: Some(DeleteFileOptions {
                        recursive: Some(*recursive),
                        ignore_if_not_exists: Some(false),
                        annotation_id: None,
                    }),
                };
                out.push((i, 0, DocumentChangeOperation::Op(ResourceOp::Delete(delete))));
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    if !resource_ops {
        // Stable, so documents changed at the same moment keep the plan's order.
        out.sort_by_key(|(_, last_change, _)| std::cmp::Reverse(*last_change));
    }
    let order = out.iter().map(|(i, _, _)| *i).collect();
    let ops: Vec<DocumentChangeOperation> = out.into_iter().map(|(_, _, op)| op).collect();
    let document_changes = if resource_ops {
        DocumentChanges::Operations(ops)
    } else {
        DocumentChanges::Edits(
            ops.into_iter()
                .filter_map(|o| match o {
                    DocumentChangeOperation::Edit(e) => Some(e),
                    DocumentChangeOperation::Op(_) => None,
                })
                .collect(),
        )
    };
    Some((WorkspaceEdit { document_changes: Some(document_changes), ..WorkspaceEdit::default() }, order))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::apply_changes;
    use crate::text::{final_break, position_to_offset, Document};

    #[test]
    fn changes_at_the_end_stop_before_the_final_break() {
        // (base, changes, whether each change must end up inside the last line)
        let table: &[(&str, Vec<TextChange>)] = &[
            ("a\nb\n", vec![TextChange::new(4, 4, "five\n")]),
            ("a\nb\n", vec![TextChange::new(0, 4, "alpha\nbeta\n")]),
            ("a\nb\n", vec![TextChange::new(2, 4, "B\n")]),
            ("a\r\nb\r\n", vec![TextChange::new(6, 6, "c\r\n")]),
            ("a\r\nb\r\n", vec![TextChange::new(0, 1, "A"), TextChange::new(3, 6, "x\r\ny\r\n")]),
            ("a\n", vec![TextChange::new(2, 2, "no break")]),
            ("a\n", vec![TextChange::new(0, 2, "no break")]),
            ("a", vec![TextChange::new(1, 1, "b\n")]),
            ("\n", vec![TextChange::new(1, 1, "x\n")]),
            ("a\nb\n", vec![TextChange::new(2, 4, "X"), TextChange::new(4, 4, "y\n")]),
        ];
        for (base, changes) in table {
            let want = apply_changes(base, changes);
            let got = anchor_before_final_break(&SharedText::from(*base), changes.clone());
            crate::edit::plan::validate_changes(base, &got).expect("valid");
            assert_eq!(apply_changes(base, &got), want, "{base:?} {changes:?}");
            let keeps_break = changes.iter().all(|c| c.text.ends_with(final_break(base)));
            if keeps_break && !final_break(base).is_empty() && changes.len() == 1 {
                let inner = base.len() - final_break(base).len();
                assert!(got.iter().all(|c| c.range.end.get() <= inner), "{base:?} {got:?}");
            }
        }
    }

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
        let real = crate::sys::canonicalize(dir.path()).expect("canonical");
        let uri = uri_of(&real.join("new file.rs")).expect("uri");
        assert!(uri.as_str().ends_with("/new%20file.rs"), "{uri}");
        let path = path_of(&uri).expect("file uri");
        assert_eq!(canonical(&path), real.join("new file.rs"));
        assert_eq!(path_of(&Url::parse("untitled:Untitled-1").expect("url")), None);
    }

    /// Non-ASCII names live in a URI's path, which IDNA never touches: they round-trip with the
    /// ASCII-only host back end (`idna_adapter` 1.0, pinned in Cargo.toml), in an editor's percent-encoded
    /// spelling and in a raw one. Only a host name outside ASCII is refused, as unparseable.
    #[test]
    fn non_ascii_paths_round_trip_and_only_non_ascii_hosts_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = crate::sys::canonicalize(dir.path()).expect("canonical");
        let file = real.join("ünï cödé 文件.rs");
        let uri = uri_of(&file).expect("uri");
        assert!(uri.as_str().ends_with("/%C3%BCn%C3%AF%20c%C3%B6d%C3%A9%20%E6%96%87%E4%BB%B6.rs"), "{uri}");
        assert_eq!(path_of(&uri), Some(file.clone()));
        // `file:///home/u/x` on Unix, `file:///C:/Users/u/x` on Windows.
        let slashed = file.to_str().expect("utf-8 path").replace('\\', "/");
        let raw = format!("file://{}{slashed}", if slashed.starts_with('/') { "" } else { "/" });
        assert_eq!(path_of(&Url::parse(&raw).expect("raw non-ASCII path")), Some(file));
        assert!(Url::parse("file://localhost/tmp/a.rs").is_ok());
        assert!(Url::parse("file://b\u{fc}cher/share/a.rs").is_err());
    }
}
