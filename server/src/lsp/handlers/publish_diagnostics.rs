//! `tether/publishDiagnostics`: one document's diagnostics from the editor's other language
//! servers, kept to answer `diagnostics` and to report what a change introduced and resolved.

use crate::lsp::editor::reported;
use crate::lsp::protocol::PublishDiagnosticsParams;
use crate::lsp::shared::Shared;

/// Replaces the document's diagnostics (synchronously, so reports keep the editor's order).
pub(crate) fn handle(shared: &Shared, params: PublishDiagnosticsParams) {
    let uri = params.uri.clone();
    // Whole only for a version: a report of unknown age says nothing of what comes next.
    let complete = params.complete && params.version.is_some();
    match reported(params, shared.caps().encoding) {
        Some(report) => shared.diagnostics.publish(report, complete),
        None => tracing::debug!(%uri, "diagnostics for a document that is not a file; ignored"),
    }
}
