//! `tether/debugDocument`: a document as the server holds it. For debugging and tests only; no
//! editor integration should depend on it.

use crate::lsp::protocol::{DebugDocument, DebugDocumentParams};
use crate::lsp::shared::Shared;

/// The document's version, text and dirty flag, or `None` when it is not open.
pub(crate) fn handle(shared: &Shared, params: DebugDocumentParams) -> Option<DebugDocument> {
    let doc = shared.store.get_by_uri(&params.uri)?;
    Some(DebugDocument { version: doc.version, text: String::from(&doc.rope), dirty: doc.dirty })
}
