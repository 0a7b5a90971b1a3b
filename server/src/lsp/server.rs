//! The backend: the state every handler shares, and the one dispatch from LSP methods to the
//! handler files in `handlers/`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tower_lsp::jsonrpc::{self, Result as RpcResult};
use tower_lsp::lsp_types::{
    DidChangeTextDocumentParams, DidChangeWorkspaceFoldersParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, ExecuteCommandParams, InitializeParams, InitializeResult,
    InitializedParams,
};
use tower_lsp::{Client, LanguageServer};

use super::calls::Calls;
use super::capabilities::ClientCaps;
use super::handlers;
use super::protocol::{DebugDocument, DebugDocumentParams};
use super::store::Store;
use super::transport::Arrivals;
use super::{Options, SavePolicy};
use crate::profiles::Profile;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

/// What every handler and tool call shares.
pub(crate) struct Shared {
    /// The way back to the editor.
    pub client: Client,
    /// The open documents.
    pub store: Arc<Store>,
    /// The numbering of the messages read from the editor.
    pub arrivals: Arc<Arrivals>,
    /// Whether the editor was seen to hold back its `didChange` notifications while a request
    /// of its own waits (eglot): calls it starts are then answered from its `applyEdit` answer,
    /// and the edit is verified when the notification comes.
    pub holds_changes: AtomicBool,
    /// The server's setup.
    pub options: Options,
    /// Admission and concurrency of tool calls.
    pub calls: Calls,
    caps: OnceLock<ClientCaps>,
    /// The save policy the editor chose in `initializationOptions`, if any.
    save: OnceLock<SavePolicy>,
    /// Whether `shutdown` was received.
    shut_down: AtomicBool,
    /// The workspace folders' paths as the editor named them, and the workspace over them
    /// (`None` while the editor has opened no folder).
    roots: Mutex<(Vec<PathBuf>, Option<Arc<Workspace>>)>,
    /// The workspace's (canonical) roots, for the bridge's discovery file.
    pub roots_changed: tokio::sync::watch::Sender<Vec<PathBuf>>,
    profiles: Mutex<HashMap<String, Arc<dyn Profile>>>,
}

impl Shared {
    /// The client's capabilities (the defaults until `initialize`).
    pub fn caps(&self) -> ClientCaps {
        self.caps.get().copied().unwrap_or_default()
    }

    /// Records the client's capabilities; only `initialize` calls this, once.
    pub fn set_caps(&self, caps: ClientCaps) {
        let _ = self.caps.set(caps);
    }

    /// The save policy: the editor's choice, else the server's option.
    pub fn save_policy(&self) -> SavePolicy {
        self.save.get().copied().unwrap_or(self.options.save)
    }

    /// Records the editor's save policy; only `initialize` calls this, once.
    pub fn set_save_policy(&self, save: SavePolicy) {
        let _ = self.save.set(save);
    }

    /// The current workspace, if the editor opened any folder.
    pub fn workspace(&self) -> Option<Arc<Workspace>> {
        self.roots.lock().unwrap_or_else(|e| e.into_inner()).1.clone()
    }

    /// The workspace folder paths, as the editor named them.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.roots.lock().unwrap_or_else(|e| e.into_inner()).0.clone()
    }

    /// Replaces the workspace folders. Folders that are not existing directories are skipped
    /// with a warning; none left means no workspace.
    pub fn set_roots(&self, roots: Vec<PathBuf>) {
        let usable: Vec<PathBuf> = roots
            .iter()
            .filter(|r| {
                let ok = r.is_dir();
                if !ok {
                    tracing::warn!(root = %r.display(), "workspace folder is not a directory; tether ignores it");
                }
                ok
            })
            .cloned()
            .collect();
        let ws = if usable.is_empty() {
            None
        } else {
            match Workspace::new(&usable) {
                Ok(ws) => Some(Arc::new(ws)),
                Err(e) => {
                    tracing::warn!(error = %e, "workspace folders are not usable");
                    None
                }
            }
        };
        let canonical = ws.as_ref().map(|w| w.roots().to_vec()).unwrap_or_default();
        tracing::info!(roots = ?canonical, "workspace folders set");
        *self.roots.lock().unwrap_or_else(|e| e.into_inner()) = (roots, ws);
        self.roots_changed.send_replace(canonical);
    }

    /// A read view for one tool call: the open documents over the disk. `None` without a
    /// workspace.
    pub fn snapshot(&self) -> Option<Vfs> {
        let ws = self.workspace()?;
        Some(Vfs::new(ws, Arc::new(self.store.overlay())))
    }

    /// The profile called `name` (the server's default when `None`).
    pub fn profile(&self, name: Option<&str>) -> crate::Result<Arc<dyn Profile>> {
        let name = name.unwrap_or(&self.options.profile);
        let mut cache = self.profiles.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(name) {
            return Ok(p.clone());
        }
        let p: Arc<dyn Profile> = Arc::from((self.options.profiles)(name)?);
        cache.insert(name.to_owned(), p.clone());
        Ok(p)
    }
}

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
        Backend {
            shared: Arc::new(Shared {
                client,
                store: Arc::default(),
                arrivals: Arc::default(),
                holds_changes: AtomicBool::new(false),
                options,
                calls,
                caps: OnceLock::new(),
                save: OnceLock::new(),
                shut_down: AtomicBool::new(false),
                roots: Mutex::new((Vec::new(), None)),
                roots_changed: tokio::sync::watch::channel(Vec::new()).0,
                profiles: Mutex::new(HashMap::new()),
            }),
        }
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
        self.shared.shut_down.load(Ordering::SeqCst)
    }

    /// `tether/debugDocument`: a document as the server holds it (debugging and tests only).
    pub async fn debug_document(&self, params: DebugDocumentParams) -> RpcResult<Option<DebugDocument>> {
        Ok(handlers::debug_document::handle(&self.shared, params))
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
        tracing::info!(roots = ?self.shared.roots(), caps = ?self.shared.caps(), "tether lsp initialized");
    }

    async fn shutdown(&self) -> RpcResult<()> {
        self.shared.shut_down.store(true, Ordering::SeqCst);
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

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        handlers::did_change_workspace_folders::handle(&self.shared, params);
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> RpcResult<Option<Value>> {
        handlers::execute_command::handle(&self.shared, params).await
    }
}

/// A JSON-RPC error for a request the server cannot serve right now (LSP `RequestFailed`).
pub(crate) fn request_failed(message: impl Into<String>) -> jsonrpc::Error {
    jsonrpc::Error { code: jsonrpc::ErrorCode::ServerError(-32803), message: message.into().into(), data: None }
}
