//! `textDocument/didChange`: apply incremental changes in order.

use tower_lsp::lsp_types::DidChangeTextDocumentParams;

use crate::lsp::convert::from_lsp;
use crate::lsp::shared::Shared;
use crate::lsp::store::SyncError;

/// Applies the changes synchronously, in the negotiated encoding. A change for a document that
/// is not open, or whose version does not move forward, is logged and dropped.
pub(crate) fn handle(shared: &Shared, params: DidChangeTextDocumentParams) {
    let doc = params.text_document;
    let enc = shared.caps().encoding;
    let changes =
        params.content_changes.iter().map(|c| (c.range.map(|r| (from_lsp(r.start), from_lsp(r.end))), c.text.as_str()));
    match shared.store.change(&doc.uri, doc.version, changes, enc, shared.arrivals.running()) {
        Ok(()) => {}
        Err(SyncError::NotOpen) => tracing::warn!(uri = %doc.uri, "didChange for a document that is not open; ignored"),
        Err(SyncError::Stale { current, got }) => tracing::warn!(
            uri = %doc.uri,
            current,
            got,
            "didChange version does not move forward; change rejected, tether's copy of this document may now differ \
             from the editor's until it is reopened"
        ),
    }
}
