//! `textDocument/didClose`: stop tracking a document; reads go to the disk again.

use tower_lsp::lsp_types::DidCloseTextDocumentParams;

use crate::lsp::shared::Shared;

/// Forgets the document.
pub(crate) fn handle(shared: &Shared, params: DidCloseTextDocumentParams) {
    match shared.store.close(&params.text_document.uri) {
        Ok(path) => shared.unwatch(&path),
        Err(_) => tracing::debug!(uri = %params.text_document.uri, "didClose for a document that is not open"),
    }
}
