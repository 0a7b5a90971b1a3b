//! The backend: the one dispatch from LSP methods to the handler files in `handlers/`, over the
//! state they share (`lsp/shared.rs`).

use std::sync::Arc;

use serde_json::Value;
use tower_lsp::jsonrpc::Result as RpcResult;
use tower_lsp::lsp_types::{
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWorkspaceFoldersParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
    ExecuteCommandParams, InitializeParams, InitializeResult, InitializedParams,
};
use tower_lsp::{Client, LanguageServer};

use super::admission::Calls;
use super::handlers;
use super::options::Options;
use super::protocol::{DebugDocument, DebugDocumentParams, PublishDiagnosticsParams};
use super::shared::Shared;

/// The language server: tower-lsp calls its methods; each one hands over to its handler file.
pub struct Backend {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").field("options", &self.shared.options).finish_non_exhaustive()
    }
}

impl Backend {
    /// A backend talking to the editor through `client`.
    pub fn new(client: Client, options: Options) -> Backend {
        let calls = Calls::new(&options.limits);
        Backend { shared: Arc::new(Shared::new(client, options, calls)) }
    }

    /// The way back to the editor.
    pub fn client(&self) -> &Client {
        &self.shared.client
    }

    /// Another handle on the same backend, which outlives the service that owns this one.
    pub fn clone_handle(&self) -> Backend {
        Backend { shared: self.shared.clone() }
    }

    /// The state the handlers share (the bridge endpoint runs calls through it).
    pub(crate) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Whether the editor sent `shutdown`.
    pub fn was_shut_down(&self) -> bool {
        self.shared.was_shut_down()
    }

    /// `tether/debugDocument`: a document as the server holds it (debugging and tests only).
    pub async fn debug_document(&self, params: DebugDocumentParams) -> RpcResult<Option<DebugDocument>> {
        Ok(handlers::debug_document::handle(&self.shared, params))
    }

    /// `tether/publishDiagnostics`: one document's diagnostics from the editor's other servers.
    pub async fn publish_diagnostics(&self, params: PublishDiagnosticsParams) {
        handlers::publish_diagnostics::handle(&self.shared, params);
    }
}

// Every sync handler below is synchronous up to its end: tower-lsp polls new handler futures in
// arrival order, so a handler that changes the store before any `.await` keeps the editor's order.
#[tower_lsp::async_trait]
impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> RpcResult<InitializeResult> {
        handlers::initialize::handle(&self.shared, params)
    }

    async fn initialized(&self, _: InitializedParams) {
        self.shared.start_watching();
        tracing::info!(roots = ?self.shared.roots(), caps = ?self.shared.caps(), "tether lsp initialized");
    }

    async fn shutdown(&self) -> RpcResult<()> {
        self.shared.shut_down();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        handlers::did_open::handle(&self.shared, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        handlers::did_change::handle(&self.shared, params);
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        handlers::did_save::handle(&self.shared, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        handlers::did_close::handle(&self.shared, params);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        handlers::did_change_configuration::handle(&self.shared, params);
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        handlers::did_change_workspace_folders::handle(&self.shared, params);
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        handlers::did_change_watched_files::handle(&self.shared, params);
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
        handlers::execute_command::handle(&self.shared, params).await
    }
}
