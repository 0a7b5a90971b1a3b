//! `workspace/didChangeWatchedFiles`: the editor saw files change on disk.

use tower_lsp::lsp_types::{DidChangeWatchedFilesParams, FileChangeType};

use crate::lsp::convert::{canonical, path_of};
use crate::lsp::shared::Shared;

/// Has each changed or created file that is open checked for a change to merge into its buffer
/// (`lsp/disk.rs`); tether's own watch may have seen it already, and a second look finds nothing.
pub(crate) fn handle(shared: &Shared, params: DidChangeWatchedFilesParams) {
    for change in params.changes {
        if change.typ == FileChangeType::DELETED {
            continue;
        }
        if let Some(path) = path_of(&change.uri) {
            shared.check_disk(canonical(&path));
        }
    }
}
