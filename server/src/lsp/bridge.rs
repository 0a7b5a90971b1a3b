//! The lsp's end of the bridge: an MCP host whose calls take the lsp's own call path, and the
//! task that keeps the bridge endpoint in step with the workspace folders.
//!
//! A call arriving over the bridge socket is admitted like `tether.callTool` (it counts against
//! [`Limits::max_admitted`](super::Limits) and waits for one of the running turns) but holds no
//! tower-lsp handler slot, since it never entered through the editor's connection.

use std::path::PathBuf;
use std::sync::Arc;

use super::server::Shared;
use super::sink::EditorSink;
use crate::bridge::{self, Endpoint, MakeServer};
use crate::error::{Error, ErrorKind};
use crate::mcp::{BoxFuture, Host, McpServer, ToolCall};
use crate::profiles::{CallError, CallResult};
use crate::sink::Sink;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

/// Runs bridge calls inside the lsp, on the live buffers.
struct LspHost {
    shared: Arc<Shared>,
    /// The workspace when the connection was made: the read view of last resort when the editor
    /// has closed every folder since (a call then fails in `call_tool` before reading anything).
    fallback: Arc<Workspace>,
}

impl Host for LspHost {
    fn snapshot(&self) -> Vfs {
        self.shared.snapshot().unwrap_or_else(|| Vfs::disk(self.fallback.clone()))
    }

    fn sink(&self) -> Arc<dyn Sink> {
        Arc::new(EditorSink::new(self.shared.clone(), tokio::runtime::Handle::current(), "bridge", true, false))
    }

    fn set_roots(&self, _roots: Vec<PathBuf>) -> crate::Result<()> {
        // The editor's workspace folders are the roots; an attached client does not move them.
        Ok(())
    }

    fn call(&self, call: ToolCall) -> BoxFuture<'_, Result<CallResult, CallError>> {
        Box::pin(async move {
            let ToolCall { profile, name, args, cancel, .. } = call;
            let Some(_admitted) = self.shared.calls.admit() else {
                let e = Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "too many tether tool calls in flight ({}); try again when some have finished",
                        self.shared.options.limits.max_admitted
                    ),
                );
                return Ok(profile.error_result(&e));
            };
            let (mut result, applied) = self.shared.call_tool_applied(profile, name, args, cancel, false).await;
            // The standard result names only the buffers a change reached; a client attached from
            // outside the editor is also told which files went straight to disk. Results with
            // structured content are a contract's exact shape and stay as they are.
            if let (Ok(r), Some(applied)) = (&mut result, applied) {
                if !r.is_error && r.structured.is_none() {
                    r.text.push_str(&applied.report(true));
                }
            }
            result
        })
    }
}

/// Serves the bridge for as long as the returned future runs: listens once the editor has
/// workspace folders, republishes the roots when they change, and removes the socket and the
/// discovery file when dropped. Never returns.
pub(crate) async fn serve(shared: Arc<Shared>) {
    let mut roots = shared.roots_changed.subscribe();
    let mut endpoint: Option<Endpoint> = None;
    loop {
        let current = roots.borrow_and_update().clone();
        match &endpoint {
            Some(e) => e.set_roots(current),
            None if !current.is_empty() => endpoint = start(&shared, current),
            None => {}
        }
        if roots.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

fn start(shared: &Arc<Shared>, roots: Vec<PathBuf>) -> Option<Endpoint> {
    let dir = match bridge::runtime_dir() {
        Ok(dir) => dir,
        Err(e) => {
            tracing::warn!(error = %e, "the bridge for tether mcp is off");
            return None;
        }
    };
    let make: MakeServer = {
        let shared = shared.clone();
        Arc::new(move |profile: &str| {
            let profile = shared.profile(Some(profile)).ok()?;
            let fallback = shared.workspace()?;
            let host = Arc::new(LspHost { shared: shared.clone(), fallback });
            Some(McpServer::new(profile, shared.options.config.clone(), host))
        })
    };
    match Endpoint::start(&dir, &shared.options.profile, roots, make) {
        Ok(e) => Some(e),
        Err(e) => {
            tracing::warn!(error = %e, dir = %dir.display(), "the bridge for tether mcp could not listen");
            None
        }
    }
}
