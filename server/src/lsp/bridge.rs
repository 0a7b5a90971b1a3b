//! The lsp's end of the bridge: an MCP host whose calls take the lsp's own call path, and the
//! task that keeps the bridge endpoint in step with the workspace folders.
//!
//! A call arriving over the bridge socket is admitted like `tether.callTool` (it counts against
//! [`Limits::max_admitted`](super::options::Limits) and waits for one of the running turns) but holds no
//! tower-lsp handler slot, since it never entered through the editor's connection.

use std::path::PathBuf;
use std::sync::Arc;

use super::calls::Caller;
use super::shared::Shared;
use crate::bridge::{self, Endpoint, MakeServer};
use crate::error::{Error, ErrorKind};
use crate::mcp::{Answer, BoxFuture, Host, McpServer, ToolCall};
use crate::profiles::CallError;

/// Runs bridge calls inside the lsp, on the live buffers.
struct LspHost {
    shared: Arc<Shared>,
}

impl Host for LspHost {
    fn set_roots(&self, _roots: Vec<PathBuf>) -> crate::Result<()> {
        // The editor's workspace folders are the roots; an attached client does not move them.
        Ok(())
    }

    fn call(&self, call: ToolCall) -> BoxFuture<'_, Result<Answer, CallError>> {
        Box::pin(async move {
            let ToolCall { profile, name, args, cancel, client, .. } = call;
            let Some(_admitted) = self.shared.calls.admit() else {
                let e = Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "too many tether tool calls in flight ({}); try again when some have finished",
                        self.shared.options.limits.max_admitted
                    ),
                );
                return Ok(Answer::Made(profile.error_result(&e)));
            };
            self.shared.call_tool(profile, name, args, cancel, Caller::Bridge, client).await.map(Answer::Made)
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
            // No workspace folder, no server: a call would have nothing to work on.
            shared.workspace()?;
            let host = Arc::new(LspHost { shared: shared.clone() });
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
