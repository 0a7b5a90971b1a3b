//! A `tether mcp` attached to an editor's `tether lsp`: each tool call is forwarded, as an MCP
//! client, to the lsp's bridge endpoint, so it runs on the live buffers there; when no lsp serves
//! the root (or the one attached goes away) the call runs here, on disk.
//!
//! The assistant keeps talking to this process's own MCP server throughout, so losing the editor
//! never fails its session: the next call simply runs standalone. Finding and opening the
//! connection is the bridge's business ([`Connector`]); this module only speaks MCP over it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestMetaObject};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{Peer, RoleClient, ServiceExt as _};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Mutex;

use super::{Answer, BoxFuture, DiskHost, Host, ToolCall};
use crate::profiles::CallError;

/// An authenticated byte stream to an lsp's bridge endpoint, ready for MCP.
pub struct Connection {
    /// What the lsp sends.
    pub reader: Box<dyn AsyncRead + Send + Unpin>,
    /// What the lsp receives.
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// Names the instance in logs (its pid and socket).
    pub label: String,
}

/// Finds a live lsp serving a root and opens an authenticated connection to it.
pub trait Connector: Send + Sync + 'static {
    /// A connection to the instance that should serve `root`, if one is live.
    fn connect<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Option<Connection>>;

    /// Why the last [`Connector::connect`] found an instance serving the root and still could
    /// not reach it (`pid 123: connection refused`); `None` when it found none, or reached it.
    fn unreachable(&self) -> Option<String> {
        None
    }
}

/// How long after a failed attempt to find an lsp the next call tries again.
pub const REATTACH_INTERVAL: Duration = Duration::from_secs(1);

/// How long finding, connecting to and initializing a session with an lsp may take.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(2);

/// The host of an attachable `tether mcp`: forwards calls to the attached lsp, else runs them on
/// disk.
pub struct AttachedHost {
    local: DiskHost,
    connector: Arc<dyn Connector>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    session: Option<RunningService<RoleClient, ()>>,
    label: String,
    last_try: Option<Instant>,
    /// Why the editor's lsp, which serves this root, could not be reached at the last attempt:
    /// every call run on disk meanwhile says so.
    unreachable: Option<String>,
}

impl AttachedHost {
    /// A host that runs on `local` unless `connector` finds an lsp for its root.
    pub fn new(local: DiskHost, connector: Arc<dyn Connector>) -> AttachedHost {
        AttachedHost { local, connector, state: Mutex::new(State::default()) }
    }

    /// Tries to attach now (at start-up), whatever the interval says.
    pub async fn try_attach(&self) {
        let mut state = self.state.lock().await;
        self.attach(&mut state).await;
    }

    /// Whether calls currently go to an lsp.
    pub async fn is_attached(&self) -> bool {
        let state = self.state.lock().await;
        state.session.as_ref().is_some_and(|s| !s.peer().is_transport_closed())
    }

    /// The attached lsp's peer: the live session, else a new one when the last attempt is old
    /// enough. `None` means "run here".
    async fn peer(&self) -> Option<(Peer<RoleClient>, String)> {
        let mut state = self.state.lock().await;
        if let Some(s) = &state.session {
            if !s.peer().is_transport_closed() {
                return Some((s.peer().clone(), state.label.clone()));
            }
            tracing::warn!(instance = %state.label, "the editor's tether lsp went away; running tools on disk");
            state.session = None;
        }
        if state.last_try.is_some_and(|t| t.elapsed() < REATTACH_INTERVAL) {
            return None;
        }
        self.attach(&mut state).await;
        state.session.as_ref().map(|s| (s.peer().clone(), state.label.clone()))
    }

    async fn attach(&self, state: &mut State) {
        state.last_try = Some(Instant::now());
        let Some(root) = self.local.roots().into_iter().next() else { return };
        // Calls wait on this lock meanwhile, so an lsp that accepts but never answers (stopped,
        // wedged) must not hold them for long.
        let attempt = async {
            let Some(conn) = self.connector.connect(&root).await else {
                return Err(self.connector.unreachable());
            };
            let label = conn.label;
            match ().serve(super::LineTransport::new(conn.reader, conn.writer)).await {
                Ok(session) => Ok((session, label)),
                Err(e) => {
                    tracing::warn!(instance = %label, error = %e, "could not attach to the editor's tether lsp");
                    Err(Some(format!("{label}: {e}")))
                }
            }
        };
        state.unreachable = match tokio::time::timeout(ATTACH_TIMEOUT, attempt).await {
            Ok(Ok((session, label))) => {
                tracing::info!(instance = %label, "attached to the editor's tether lsp");
                state.session = Some(session);
                state.label = label;
                None
            }
            Ok(Err(why)) => why,
            Err(_) => {
                tracing::warn!("the editor's tether lsp did not answer in time; serving on disk");
                Some(format!("no answer within {} s", ATTACH_TIMEOUT.as_secs()))
            }
        };
    }

    /// Forgets the session `label` after it failed.
    async fn detach(&self, label: &str) {
        let mut state = self.state.lock().await;
        if state.label == label {
            state.session = None;
        }
    }
}

impl Host for AttachedHost {
    fn set_roots(&self, roots: Vec<PathBuf>) -> crate::Result<()> {
        self.local.set_roots(roots)
    }

    fn call(&self, mut call: ToolCall) -> BoxFuture<'_, Result<Answer, CallError>> {
        Box::pin(async move {
            if let Some((peer, label)) = self.peer().await {
                let read_only = call.read_only;
                // A read's arguments are kept, to run it here should the lsp go away; a change's
                // are moved into the request (a `write_file` may carry megabytes), since a change
                // that may have reached the lsp is never run a second time here.
                let args = if read_only { call.args.clone() } else { std::mem::take(&mut call.args) };
                let mut params = CallToolRequestParams::new(call.name.clone());
                if let Value::Object(args) = args {
                    params = params.with_arguments(args);
                }
                if !call.client.is_empty() {
                    // So that the lsp records the assistant as the one asking, not this forwarder.
                    let mut meta = RequestMetaObject::default();
                    meta.insert(super::CLIENT_META.to_owned(), Value::String(call.client.clone()));
                    params.meta = Some(meta);
                }
                match peer.call_tool_once(params).await {
                    Ok(CallToolResponse::Complete(result)) => return Ok(Answer::Forwarded(result)),
                    Ok(_) => tracing::warn!(instance = %label, "the lsp asked for input tether never requests"),
                    Err(ServiceError::McpError(e)) => {
                        return Err(CallError::Rpc { code: e.code.0, message: e.message.into_owned(), data: e.data })
                    }
                    Err(e) => {
                        tracing::warn!(instance = %label, error = %e, "the editor's tether lsp went away; running on disk");
                        self.detach(&label).await;
                        if !read_only {
                            let e = crate::Error::new(crate::ErrorKind::IoError, went_away(&call.name, &e));
                            return Ok(Answer::Made(call.profile.error_result(&e)));
                        }
                    }
                }
            }
            let unreachable = self.state.lock().await.unreachable.clone();
            let answer = self.local.call(call).await;
            // Never on disk silently while the editor's lsp serves this project.
            match (answer, unreachable) {
                (Ok(Answer::Made(mut result)), Some(why)) => {
                    result.push_item(format!(
                        "tether: the editor's tether lsp serves this project but could not be reached ({why}), so \
                         this call ran on the files on disk: it did not see unsaved editor buffers, and any change went \
                         to the file on disk behind the editor (`tether status` shows the instances)"
                    ));
                    Ok(Answer::Made(result))
                }
                (answer, _) => answer,
            }
        })
    }
}

/// What a change call whose connection to the lsp failed answers: whether the change landed is
/// known only when the request never left.
fn went_away(tool: &str, e: &ServiceError) -> String {
    if matches!(e, ServiceError::TransportSend(_)) {
        format!(
            "the editor's tether lsp went away before this {tool} call reached it, so nothing was changed; \
             call it again (tether now works on disk)"
        )
    } else {
        format!(
            "the editor's tether lsp went away during this {tool} call, which may or may not have been applied; \
             read the files again before redoing it (tether now works on disk)"
        )
    }
}
