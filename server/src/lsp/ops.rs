//! What the editor is asked to carry out, as values: edits to open documents, renames and
//! deletes. `lsp/convert.rs` turns them into a `workspace/applyEdit`; `lsp/delivery.rs` sends and
//! follows them.

use ropey::Rope;
use tower_lsp::lsp_types::Url;

use crate::edit::TextChange;
use crate::text::SharedText;
use crate::workspace::SandboxPath;

/// A change to one open document.
#[derive(Debug, Clone)]
pub(crate) struct DocEdit {
    pub path: SandboxPath,
    pub uri: Url,
    pub version: i32,
    /// The text the changes apply to (the store's rope at `version`).
    pub base: Rope,
    /// The same text as the plan's base holds it (shared with the plan: no copy).
    pub base_text: SharedText,
    pub changes: Vec<TextChange>,
    /// The text the document holds once the changes land: `base` with them applied, as a rope
    /// that shares every unchanged part with it.
    pub expected: Rope,
    pub was_dirty: bool,
    /// When the document last changed (the store's clock).
    pub last_change: u64,
}

/// An operation the editor carries out.
#[derive(Debug)]
pub(crate) enum EditorOp {
    Edit(DocEdit),
    Rename { from: SandboxPath, old_uri: Url, new_uri: Url, to: SandboxPath, overwrite: bool, dirty: bool },
    Delete { path: SandboxPath, uri: Url, recursive: bool },
}

impl EditorOp {
    pub fn path(&self) -> &SandboxPath {
        match self {
            EditorOp::Edit(e) => &e.path,
            EditorOp::Rename { from, .. } => from,
            EditorOp::Delete { path, .. } => path,
        }
    }
}
