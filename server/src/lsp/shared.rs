//! The state every handler and tool call shares: the open documents, the client, the workspace,
//! the profiles and the admission of calls. Its own module, below the server and the handlers,
//! so that they import it and not each other.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tower_lsp::jsonrpc;
use tower_lsp::lsp_types::notification::Cancel;
use tower_lsp::lsp_types::request::Request as _;
use tower_lsp::lsp_types::{CancelParams, NumberOrString};
use tower_lsp::Client;

use super::admission::Calls;
use super::arrivals::Arrivals;
use super::capabilities::ClientCaps;
use super::knowledge::{AfterChange, Diagnostics};
use super::options::{Options, SavePolicy};
use super::protocol::{Review, ReviewAnswer};
use super::store::Store;
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
    /// The diagnostics the editor forwards.
    pub diagnostics: Diagnostics,
    /// How the editor set up the diagnostics a change reports, if it did.
    after_change: OnceLock<AfterChange>,
    /// The deny list, with what the editor added in `initializationOptions`.
    deny: OnceLock<crate::workspace::Deny>,
    /// Review before apply, as the editor set it (at `initialize`, and since).
    review: Mutex<super::review::Settings>,
    /// Whether `shutdown` was received.
    shut_down: AtomicBool,
    /// The workspace folders' paths as the editor named them, and the workspace over them
    /// (`None` while the editor has opened no folder).
    roots: Mutex<(Vec<PathBuf>, Option<Arc<Workspace>>)>,
    /// The workspace's (canonical) roots, for the bridge's discovery file.
    pub roots_changed: tokio::sync::watch::Sender<Vec<PathBuf>>,
    profiles: Mutex<HashMap<String, Served>>,
    /// The watch on the open documents' files (`lsp/disk.rs`).
    pub(super) disk: super::watch::Watched,
}

impl Shared {
    /// The state of a server talking to the editor through `client`, before `initialize`.
    pub fn new(client: Client, mut options: Options, calls: Calls) -> Shared {
        // An editor runs this server: the tools that ask it are served (and say `unsupported`
        // when it does not forward what they need).
        options.config.editor = true;
        Shared {
            client,
            store: Arc::default(),
            arrivals: Arc::default(),
            holds_changes: AtomicBool::new(false),
            options,
            calls,
            caps: OnceLock::new(),
            save: OnceLock::new(),
            diagnostics: Diagnostics::default(),
            after_change: OnceLock::new(),
            deny: OnceLock::new(),
            review: Mutex::default(),
            shut_down: AtomicBool::new(false),
            roots: Mutex::new((Vec::new(), None)),
            roots_changed: tokio::sync::watch::channel(Vec::new()).0,
            profiles: Mutex::new(HashMap::new()),
            disk: super::watch::Watched::default(),
        }
    }

    /// Records that the editor sent `shutdown`.
    pub fn shut_down(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
    }

    /// Whether the editor sent `shutdown`.
    pub fn was_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::SeqCst)
    }

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

    /// The diagnostics a change reports: the editor's setup, else the defaults.
    pub fn after_change(&self) -> AfterChange {
        self.after_change.get().copied().unwrap_or_default()
    }

    /// Records the editor's setup of the diagnostics a change reports; only `initialize` calls
    /// this, once.
    pub fn set_after_change(&self, after: AfterChange) {
        let _ = self.after_change.set(after);
    }

    /// The deny list: the server's, with the editor's patterns once `initialize` added them.
    pub fn deny(&self) -> crate::workspace::Deny {
        self.deny.get().unwrap_or(&self.options.deny).clone()
    }

    /// Records the deny list the editor's options make; only `initialize` calls this, once.
    pub fn set_deny(&self, deny: crate::workspace::Deny) {
        let _ = self.deny.set(deny);
    }

    /// The review setup now.
    pub fn review(&self) -> super::review::Settings {
        self.review.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the review setup (`initialize`, `workspace/didChangeConfiguration`).
    pub fn set_review(&self, settings: super::review::Settings) {
        *self.review.lock().unwrap_or_else(|e| e.into_inner()) = settings;
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
                Ok(ws) => Some(Arc::new(ws.with_deny(self.deny()))),
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
        self.served(name).map(|s| s.profile)
    }

    /// The profile called `name` (the server's default when `None`) with the tools it serves.
    pub fn served(&self, name: Option<&str>) -> crate::Result<Served> {
        let name = name.unwrap_or(&self.options.profile);
        let mut cache = self.profiles.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = cache.get(name) {
            return Ok(s.clone());
        }
        let profile: Arc<dyn Profile> = Arc::from((self.options.profiles)(name)?);
        let tools = profile.tools(&self.options.config).iter().map(|t| t.name).collect();
        let served = Served { profile, tools };
        cache.insert(name.to_owned(), served.clone());
        Ok(served)
    }
}

/// A profile and the names of the tools it serves under the server's configuration, which is
/// fixed for the session: a call checks its tool's name here instead of building every tool's
/// schema (a few hundred microseconds per call).
#[derive(Clone)]
pub(crate) struct Served {
    /// The profile.
    pub profile: Arc<dyn Profile>,
    tools: Arc<[&'static str]>,
}

impl Served {
    /// Whether the profile serves a tool called `name`.
    pub fn serves(&self, name: &str) -> bool {
        self.tools.contains(&name)
    }
}

/// Sends request `R` to the client and waits at most `timeout` for its answer (`None`: none came
/// in time). The request runs on a task of its own that keeps waiting after the timeout:
/// tower-lsp 0.20 panics on an answer whose waiter was dropped (`Pending::insert`, "receiver
/// already dropped"), which took the whole server down when an editor answered late.
pub(crate) async fn request_within<R>(
    client: &Client,
    params: R::Params,
    timeout: std::time::Duration,
) -> Option<jsonrpc::Result<R::Result>>
where
    R: tower_lsp::lsp_types::request::Request,
    R::Params: Send + 'static,
    R::Result: Send + 'static,
{
    let client = client.clone();
    let mut answer = tokio::spawn(async move { client.send_request::<R>(params).await });
    match tokio::time::timeout(timeout, &mut answer).await {
        Ok(Ok(result)) => Some(result),
        // The task panicked or was cancelled: as good as no answer.
        Ok(Err(_)) => None,
        Err(_) => None,
    }
}

/// Sends `tether/review` and waits at most `timeout` for its answer, as [`request_within`]. The
/// params get `id`, the request's own id, for editors whose handlers do not see it (Neovim's):
/// when the answer does not come in time, or the caller stops waiting (its future dropped, as
/// when the assistant's call is cancelled or the CLI closed its diff), the editor gets
/// `$/cancelRequest` for that id and takes the review down.
pub(crate) async fn review_or_withdraw(
    client: &Client,
    mut params: serde_json::Value,
    timeout: std::time::Duration,
) -> Option<jsonrpc::Result<ReviewAnswer>> {
    let id = client.next_request_id();
    params["id"] = serde_json::to_value(&id).unwrap_or_default();
    let request = jsonrpc::Request::build(Review::METHOD).id(id.clone()).params(params).finish();
    let mut withdraw = Withdraw { client: client.clone(), id: Some(id) };
    let mut service = client.clone();
    // On a task of its own, as in `request_within`: the waiter outlives a late answer.
    let mut answer = tokio::spawn(async move { tower_service::Service::call(&mut service, request).await });
    let response = match tokio::time::timeout(timeout, &mut answer).await {
        Ok(Ok(Ok(Some(response)))) => response,
        Ok(_) | Err(_) => return None,
    };
    withdraw.id = None;
    let (_, result) = response.into_parts();
    Some(result.and_then(|v| {
        serde_json::from_value(v).map_err(|e| jsonrpc::Error {
            code: jsonrpc::ErrorCode::ParseError,
            message: e.to_string().into(),
            data: None,
        })
    }))
}

/// Sends `$/cancelRequest` for request `id` when dropped, unless `id` was taken.
struct Withdraw {
    client: Client,
    id: Option<jsonrpc::Id>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let id = match self.id.take() {
            Some(jsonrpc::Id::Number(n)) => NumberOrString::Number(i32::try_from(n).unwrap_or(i32::MAX)),
            Some(jsonrpc::Id::String(s)) => NumberOrString::String(s),
            Some(jsonrpc::Id::Null) | None => return,
        };
        let client = self.client.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { client.send_notification::<Cancel>(CancelParams { id }).await });
        }
    }
}

/// A JSON-RPC error for a request the server cannot serve right now (LSP `RequestFailed`).
pub(crate) fn request_failed(message: impl Into<String>) -> jsonrpc::Error {
    jsonrpc::Error { code: jsonrpc::ErrorCode::ServerError(-32803), message: message.into().into(), data: None }
}
