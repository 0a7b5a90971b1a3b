//! `workspace/didChangeWorkspaceFolders`: the roots follow the editor's folders.

use tower_lsp::lsp_types::DidChangeWorkspaceFoldersParams;

use crate::lsp::convert::path_of;
use crate::lsp::shared::Shared;

/// Removes the removed folders from the roots and adds the added ones.
pub(crate) fn handle(shared: &Shared, params: DidChangeWorkspaceFoldersParams) {
    let removed: Vec<_> = params.event.removed.iter().filter_map(|f| path_of(&f.uri)).collect();
    let mut roots: Vec<_> = shared.roots().into_iter().filter(|r| !removed.contains(r)).collect();
    for added in params.event.added.iter().filter_map(|f| path_of(&f.uri)) {
        if !roots.contains(&added) {
            roots.push(added);
        }
    }
    shared.set_roots(roots);
}
