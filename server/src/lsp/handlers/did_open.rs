//! `textDocument/didOpen`: start tracking a document.

use tower_lsp::lsp_types::DidOpenTextDocumentParams;

use crate::lsp::convert::{canonical, path_of};
use crate::lsp::shared::Shared;
use crate::text::{decode, Decoded, Document};

/// Records the document, synchronously. It is dirty when its text differs from the file on disk
/// (or there is no file yet); it keeps the file's BOM so that writing it back keeps it too.
pub(crate) fn handle(shared: &Shared, params: DidOpenTextDocumentParams) {
    let item = params.text_document;
    let Some(path) = path_of(&item.uri) else {
        tracing::debug!(uri = %item.uri, "not a file; tether does not track it");
        return;
    };
    let real = canonical(&path);
    let disk = std::fs::read(&real).ok().map(decode);
    let (dirty, bom, disk) = match disk {
        Some(Decoded::Text { text, bom, .. }) => (text != item.text, bom, Some(text)),
        _ => (true, false, None),
    };
    let doc = if bom {
        let mut bytes = Vec::with_capacity(item.text.len() + 3);
        bytes.extend_from_slice(b"\xEF\xBB\xBF");
        bytes.extend_from_slice(item.text.as_bytes());
        Document::from_bytes(bytes).unwrap_or_else(|| Document::from_text(&item.text))
    } else {
        Document::from_text(&item.text)
    };
    // The file's text, shared with the buffer's when they are the same.
    let disk = disk.map(|text| if dirty { ropey::Rope::from_str(&text) } else { doc.rope().clone() });
    tracing::debug!(uri = %item.uri, version = item.version, dirty, "opened");
    shared.store.open(item.uri, real.clone(), doc, item.version, dirty, disk);
    shared.watch(&real);
}
