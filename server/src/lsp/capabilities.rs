//! What the client can do, and what the server announces in return.

use serde_json::json;
use tower_lsp::lsp_types::{
    ClientCapabilities, ClientInfo, ExecuteCommandOptions, PositionEncodingKind, ResourceOperationKind, SaveOptions,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};

use super::protocol;
use crate::text::PositionEncoding;

/// The client capabilities tether acts on, read once from `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientCaps {
    /// The negotiated position encoding.
    pub encoding: PositionEncoding,
    /// `workspace.workspaceEdit.documentChanges`: versioned text document edits.
    pub document_changes: bool,
    /// Rename resource operations.
    pub rename: bool,
    /// Delete resource operations.
    pub delete: bool,
    /// `experimental.tether.saveDocuments`: the client answers `tether/saveDocuments`.
    pub save_documents: bool,
    /// `window.workDoneProgress`: the server may create progress tokens.
    pub work_done_progress: bool,
    /// `experimental.tether.diagnostics`: the client sends `tether/publishDiagnostics`.
    pub diagnostics: bool,
    /// `experimental.tether.editorContext`: the client answers `tether/editorContext`.
    pub editor_context: bool,
    /// `experimental.tether.languageRequests`: the client answers `tether/languageRequest`.
    pub language_requests: bool,
    /// `experimental.tether.review`: the client answers `tether/review`.
    pub review: bool,
    /// `experimental.tether.diskChanges`: the client handles `tether/diskChange`.
    pub disk_changes: bool,
    /// `experimental.tether.diskReloads`: the client handles `tether/diskReload`.
    pub disk_reloads: bool,
    /// `experimental.tether.protocolVersion`: the protocol version the client speaks, when it
    /// says (clients older than the key do not).
    pub protocol: Option<u32>,
    /// The client writes a buffer it applied a server's edit to when the buffer's text was its
    /// file's (kakoune-lsp does, whatever the server's save policy): known from its name, since
    /// no capability says so.
    pub writes_clean_buffers: bool,
}

impl Default for ClientCaps {
    /// What a client that announces nothing supports: utf-16 positions and plain `changes`.
    fn default() -> ClientCaps {
        ClientCaps {
            encoding: PositionEncoding::Utf16,
            document_changes: false,
            rename: false,
            delete: false,
            save_documents: false,
            work_done_progress: false,
            diagnostics: false,
            editor_context: false,
            language_requests: false,
            review: false,
            disk_changes: false,
            disk_reloads: false,
            protocol: None,
            writes_clean_buffers: false,
        }
    }
}

impl ClientCaps {
    /// Reads the capabilities tether acts on.
    pub fn new(caps: &ClientCapabilities) -> ClientCaps {
        let edit = caps.workspace.as_ref().and_then(|w| w.workspace_edit.as_ref());
        let ops = edit.and_then(|e| e.resource_operations.as_deref()).unwrap_or_default();
        // Resource operations exist only inside `documentChanges`, so a client announcing them
        // takes `documentChanges` (Neovim 0.11 announces the one and not the other).
        let document_changes = edit.and_then(|e| e.document_changes).unwrap_or(false) || !ops.is_empty();
        let tether = caps.experimental.as_ref().and_then(|e| e.get(protocol::CAPABILITY_KEY));
        let ours = |name: &str| tether.and_then(|t| t.get(name)).and_then(serde_json::Value::as_bool).unwrap_or(false);
        ClientCaps {
            encoding: negotiate_encoding(caps.general.as_ref().and_then(|g| g.position_encodings.as_deref())),
            document_changes,
            rename: ops.contains(&ResourceOperationKind::Rename),
            delete: ops.contains(&ResourceOperationKind::Delete),
            save_documents: ours(protocol::SAVE_DOCUMENTS_CAPABILITY),
            work_done_progress: caps.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
            diagnostics: ours(protocol::DIAGNOSTICS_CAPABILITY),
            editor_context: ours(protocol::EDITOR_CONTEXT_CAPABILITY),
            language_requests: ours(protocol::LANGUAGE_REQUESTS_CAPABILITY),
            review: ours(protocol::REVIEW_CAPABILITY),
            disk_changes: ours(protocol::DISK_CHANGES_CAPABILITY),
            disk_reloads: ours(protocol::DISK_RELOADS_CAPABILITY),
            protocol: tether
                .and_then(|t| t.get(protocol::PROTOCOL_VERSION_CAPABILITY))
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u32::try_from(v).ok()),
            writes_clean_buffers: false,
        }
    }

    /// Adds what is known of the client by its name (`clientInfo.name`).
    pub fn of_client(mut self, client: Option<&ClientInfo>) -> ClientCaps {
        // kakoune-lsp (named kak-lsp before version 15) follows an applied edit with Kakoune's
        // `write` for every buffer whose text matched its file.
        self.writes_clean_buffers = client.is_some_and(|c| matches!(c.name.as_str(), "kakoune-lsp" | "kak-lsp"));
        self
    }
}

/// Picks the position encoding: utf-8 when the client offers it (no conversion on our side),
/// else utf-16 (the LSP default every client must support), else utf-32 when that is all the
/// client offers.
pub fn negotiate_encoding(offered: Option<&[PositionEncodingKind]>) -> PositionEncoding {
    let offered = offered.unwrap_or_default();
    let has = |kind: &PositionEncodingKind| offered.contains(kind);
    if has(&PositionEncodingKind::UTF8) {
        PositionEncoding::Utf8
    } else if offered.is_empty() || has(&PositionEncodingKind::UTF16) {
        PositionEncoding::Utf16
    } else if has(&PositionEncodingKind::UTF32) {
        PositionEncoding::Utf32
    } else {
        PositionEncoding::Utf16
    }
}

/// The LSP name of an encoding.
pub fn encoding_kind(enc: PositionEncoding) -> PositionEncodingKind {
    match enc {
        PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
        PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
        PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
    }
}

/// What the server announces: incremental sync with open/close/save, the two commands, workspace
/// folders, and the negotiated position encoding.
pub fn server_capabilities(caps: &ClientCaps) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding_kind(caps.encoding)),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
            ..TextDocumentSyncOptions::default()
        })),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: protocol::COMMANDS.iter().map(|c| (*c).to_owned()).collect(),
            ..ExecuteCommandOptions::default()
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(tower_lsp::lsp_types::OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        experimental: Some(json!({
            protocol::CAPABILITY_KEY: {
                protocol::PROTOCOL_VERSION_CAPABILITY: protocol::PROTOCOL_VERSION,
                protocol::MIN_PROTOCOL_VERSION_CAPABILITY: protocol::MIN_PROTOCOL_VERSION,
            },
        })),
        ..ServerCapabilities::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_encoding() {
        use PositionEncodingKind as K;
        let table: &[(Option<&[K]>, PositionEncoding)] = &[
            (None, PositionEncoding::Utf16),
            (Some(&[]), PositionEncoding::Utf16),
            (Some(&[K::UTF8, K::UTF16, K::UTF32]), PositionEncoding::Utf8),
            (Some(&[K::UTF16, K::UTF8]), PositionEncoding::Utf8),
            (Some(&[K::UTF16]), PositionEncoding::Utf16),
            (Some(&[K::UTF32, K::UTF16]), PositionEncoding::Utf16),
            (Some(&[K::UTF32]), PositionEncoding::Utf32),
        ];
        for (offered, want) in table {
            assert_eq!(negotiate_encoding(*offered), *want, "{offered:?}");
        }
    }

    #[test]
    fn reads_client_caps() {
        let caps: ClientCapabilities = serde_json::from_value(json!({
            "workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["rename", "create"]}},
            "window": {"workDoneProgress": true},
            "general": {"positionEncodings": ["utf-8"]},
            "experimental": {"tether": {"saveDocuments": true, "diagnostics": true, "languageRequests": true, "diskChanges": true, "diskReloads": true, "protocolVersion": 3}},
        }))
        .expect("caps");
        let c = ClientCaps::new(&caps);
        assert_eq!(
            c,
            ClientCaps {
                encoding: PositionEncoding::Utf8,
                document_changes: true,
                rename: true,
                delete: false,
                save_documents: true,
                work_done_progress: true,
                diagnostics: true,
                editor_context: false,
                language_requests: true,
                review: false,
                disk_changes: true,
                disk_reloads: true,
                protocol: Some(3),
                writes_clean_buffers: false,
            }
        );
        let kak = ClientInfo { name: "kakoune-lsp".to_owned(), version: Some("22.0.0".to_owned()) };
        assert!(c.of_client(Some(&kak)).writes_clean_buffers);
        let nvim = ClientInfo { name: "Neovim".to_owned(), version: None };
        assert!(!c.of_client(Some(&nvim)).writes_clean_buffers && !c.of_client(None).writes_clean_buffers);
        // Resource operations imply documentChanges, as in Neovim 0.11's capabilities.
        let caps: ClientCapabilities = serde_json::from_value(json!({
            "workspace": {"workspaceEdit": {"resourceOperations": ["rename", "create", "delete"]}},
        }))
        .expect("caps");
        let c = ClientCaps::new(&caps);
        assert!(c.document_changes && c.rename && c.delete, "{c:?}");
        assert!(!ClientCaps::new(&ClientCapabilities::default()).document_changes);
    }
}
