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

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{Peer, RoleClient, ServiceExt as _};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Mutex;

use super::{BoxFuture, DiskHost, Host, ToolCall};
use crate::profiles::{CallError, CallResult, Item};

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
            let conn = self.connector.connect(&root).await?;
            let label = conn.label;
            match ().serve(super::LineTransport::new(conn.reader, conn.writer)).await {
                Ok(session) => Some((session, label)),
                Err(e) => {
                    tracing::warn!(instance = %label, error = %e, "could not attach to the editor's tether lsp");
                    None
                }
            }
        };
        match tokio::time::timeout(ATTACH_TIMEOUT, attempt).await {
            Ok(Some((session, label))) => {
                tracing::info!(instance = %label, "attached to the editor's tether lsp");
                state.session = Some(session);
                state.label = label;
            }
            Ok(None) => {}
            Err(_) => tracing::warn!("the editor's tether lsp did not answer in time; serving on disk"),
        }
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

    fn call(&self, call: ToolCall) -> BoxFuture<'_, Result<CallResult, CallError>> {
        Box::pin(async move {
            if let Some((peer, label)) = self.peer().await {
                let mut params = CallToolRequestParams::new(call.name.clone());
                if let Value::Object(args) = &call.args {
                    params = params.with_arguments(args.clone());
                }
                match peer.call_tool_once(params).await {
                    Ok(CallToolResponse::Complete(result)) => return Ok(from_mcp_result(result)),
                    Ok(_) => tracing::warn!(instance = %label, "the lsp asked for input tether never requests"),
                    Err(ServiceError::McpError(e)) => {
                        return Err(CallError::Rpc { code: e.code.0, message: e.message.into_owned(), data: e.data })
                    }
                    Err(e) => {
                        tracing::warn!(instance = %label, error = %e, "the editor's tether lsp went away; running on disk");
                        self.detach(&label).await;
                        // A call that may have reached the lsp is run again here only when
                        // running it twice is harmless; a change might already have landed.
                        let sent = !matches!(e, ServiceError::TransportSend(_));
                        if sent && !is_read_only(&call) {
                            let e = crate::Error::new(
                                crate::ErrorKind::IoError,
                                format!(
                                    "the editor's tether lsp went away during this {} call, which may or may not \
                                     have been applied; read the files again before redoing it (tether now works \
                                     on disk)",
                                    call.name
                                ),
                            );
                            return Ok(call.profile.error_result(&e));
                        }
                    }
                }
            }
            self.local.call(call).await
        })
    }
}

/// Whether the called tool changes nothing (so running it twice is harmless).
fn is_read_only(call: &ToolCall) -> bool {
    call.profile.tools(&call.config).iter().any(|t| t.name == call.name && t.effects.read_only)
}

/// A forwarded result back in the profile's terms: its content blocks as items when there are
/// several (or a blob), else one text.
fn from_mcp_result(r: CallToolResult) -> CallResult {
    let is_error = r.is_error.unwrap_or(false);
    let mut items = Vec::new();
    for c in &r.content {
        if let Some(t) = c.as_text() {
            items.push(Item::Text(t.text.clone()));
        } else if let Some(res) = c.as_resource() {
            if let rmcp::model::ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } = &res.resource {
                let mime_type = mime_type.clone().unwrap_or_else(|| "application/octet-stream".to_owned());
                items.push(Item::Blob { uri: uri.clone(), data: blob.clone(), mime_type });
            }
        }
    }
    let text = items
        .iter()
        .map(|i| match i {
            Item::Text(t) => t.as_str(),
            Item::Blob { data, .. } => data.as_str(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let single_text = matches!(items.as_slice(), [Item::Text(_)] | []);
    CallResult { text, structured: r.structured_content, is_error, items: if single_text { Vec::new() } else { items } }
}
