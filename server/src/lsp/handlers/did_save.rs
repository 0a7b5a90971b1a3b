//! `textDocument/didSave`: the buffer and the file agree again.

use tower_lsp::lsp_types::DidSaveTextDocumentParams;

use crate::lsp::shared::Shared;

/// Marks the document clean.
pub(crate) fn handle(shared: &Shared, params: DidSaveTextDocumentParams) {
    if shared.store.saved(&params.text_document.uri).is_err() {
        tracing::debug!(uri = %params.text_document.uri, "didSave for a document that is not open");
    }
}
