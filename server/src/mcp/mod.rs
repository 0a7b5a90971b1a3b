//! `tether mcp`: the tools of a profile as an MCP server, on rmcp.
//!
//! Only this module names rmcp. The handler is transport-agnostic: stdio for `tether mcp`, and
//! any `AsyncRead + AsyncWrite` pair (duplex pipes in tests, the bridge socket). What the tools
//! read and where their changes go is the [`Host`]'s business: the disk for a standalone server,
//! the editor's buffers inside `tether lsp` (served over the bridge socket), or, for a `tether mcp`
//! attached to an editor's `tether lsp`, that lsp ([`remote::AttachedHost`]).

mod batch;
pub mod http;
pub mod json;
pub mod memory;
pub mod remote;
mod roots;
mod serve;
mod transport;

pub use transport::{LineTransport, MAX_MESSAGE_BYTES};

use std::future::Future;
#[cfg(target_os = "linux")]
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
    Tool as McpTool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::config::{Cancel, Config};
use crate::journal::CallInfo;
use crate::profiles::{CallError, CallResult, Item, Profile, ToolInfo};
use crate::sink::{DiskSink, Sink};
use crate::tools::Context;
use crate::vfs::Vfs;
use crate::workspace::Workspace;

/// A boxed future, as the object-safe [`Host`] returns them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One tool call, as the MCP server hands it to its [`Host`].
pub struct ToolCall {
    /// The profile that names and formats the tool.
    pub profile: Arc<dyn Profile>,
    /// The server's configuration.
    pub config: Config,
    /// The tool's name in the profile (already checked to be listed).
    pub name: String,
    /// The tool's arguments.
    pub args: Value,
    /// Set when the client cancels the request.
    pub cancel: Cancel,
    /// The tool's work is bounded by one file or directory ([`crate::tools::Tool::quick`]):
    /// a local host runs it on the protocol thread rather than on the blocking pool.
    pub quick: bool,
    /// The tool changes nothing, so running it twice is harmless ([`crate::tools::Effects`]).
    pub read_only: bool,
    /// Who asked: the MCP client's `name version` (from `initialize`, or the
    /// [`CLIENT_META`] an attached `tether mcp` passes on), recorded with the changes it makes.
    pub client: String,
}

/// The `_meta` key of a `tools/call` that names the client the call comes from: an attached
/// `tether mcp` forwards its own client's name with each call, so the lsp records the assistant,
/// not the forwarder.
pub const CLIENT_META: &str = "tether/client";

/// What a host answers a tool call with.
#[derive(Debug)]
pub enum Answer {
    /// A result made in this process, in the profile's terms.
    Made(CallResult),
    /// A result another tether server made (the editor's lsp), passed on unchanged: a large read
    /// is not copied again on its way through.
    Forwarded(CallToolResult),
}

impl From<CallResult> for Answer {
    fn from(r: CallResult) -> Answer {
        Answer::Made(r)
    }
}

/// What the MCP server runs its tool calls through.
pub trait Host: Send + Sync + 'static {
    /// Replaces the workspace roots with the client's (MCP roots). Hosts whose roots belong to
    /// someone else (the editor, inside `tether lsp`) ignore this.
    fn set_roots(&self, roots: Vec<PathBuf>) -> crate::Result<()>;
    /// Runs one call: on disk ([`DiskHost`], through [`run_local`]), through the lsp's own call
    /// path (admission, retries, delivery to the editor) inside `tether lsp`, or forwarded to
    /// that lsp from an attached `tether mcp`.
    fn call(&self, call: ToolCall) -> BoxFuture<'_, Result<Answer, CallError>>;
}

/// Runs `call` against `vfs` and `sink`; a panic becomes an error result.
///
/// A quick tool (a read, a stat, a one-file edit) runs right here on the protocol thread: it is
/// done in less time than handing it to another thread and back would take, which is most of a
/// small call's cost. Every other tool runs on the blocking pool, so a long grep or command never
/// stalls the protocol loop, and cancellation and progress keep flowing while it runs.
pub async fn run_local(vfs: Vfs, sink: Arc<dyn Sink>, call: ToolCall) -> Result<CallResult, CallError> {
    let ToolCall { profile, config, name, args, cancel, quick, read_only, client } = call;
    let fallback = profile.clone();
    let run = move || {
        let ctx = Context { vfs: &vfs, config: &config, cancel: &cancel, editor: None };
        let info = CallInfo::new(&name, profile.name(), &client, &args);
        let journal = config.journal.as_ref().filter(|_| !read_only);
        crate::profiles::call_on_fresh_text(profile.as_ref(), &ctx, sink.as_ref(), journal, &info, &name, &args)
    };
    let outcome = if quick {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).map_err(|_| "the tool panicked")
    } else {
        tokio::task::spawn_blocking(run).await.map_err(|e| {
            if e.is_panic() {
                "the tool panicked"
            } else {
                "the tool was cancelled"
            }
        })
    };
    outcome.unwrap_or_else(|what| {
        tracing::error!(what, "tool call failed");
        Ok(fallback.error_result(&crate::Error::new(crate::ErrorKind::IoError, format!("internal error: {what}"))))
    })
}

/// Who a `tools/call` comes from: the [`CLIENT_META`] an attached `tether mcp` passes on, else
/// the client's own `name version` from `initialize`.
fn client_of(context: &RequestContext<RoleServer>) -> String {
    if let Some(Value::String(c)) = context.meta.get(CLIENT_META) {
        return c.clone();
    }
    context.peer.peer_info().map_or_else(String::new, |info| {
        let Implementation { name, version, .. } = &info.client_info;
        if version.is_empty() {
            name.clone()
        } else {
            format!("{name} {version}")
        }
    })
}

/// The standalone host: the disk, under roots the command line or the client chose.
#[derive(Debug)]
pub struct DiskHost {
    workspace: RwLock<Arc<Workspace>>,
}

impl DiskHost {
    /// A host over `workspace`.
    pub fn new(workspace: Workspace) -> DiskHost {
        DiskHost { workspace: RwLock::new(Arc::new(workspace)) }
    }

    fn workspace(&self) -> Arc<Workspace> {
        self.workspace.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The current roots (canonical).
    pub fn roots(&self) -> Vec<PathBuf> {
        self.workspace().roots().to_vec()
    }
}

impl Host for DiskHost {
    fn set_roots(&self, roots: Vec<PathBuf>) -> crate::Result<()> {
        let ws = self.workspace().with_roots(roots)?;
        *self.workspace.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(ws);
        Ok(())
    }

    fn call(&self, call: ToolCall) -> BoxFuture<'_, Result<Answer, CallError>> {
        let run = run_local(Vfs::disk(self.workspace()), Arc::new(DiskSink), call);
        Box::pin(async move { run.await.map(Answer::Made) })
    }
}

/// The MCP server handler: one profile, one configuration, one host.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    profile: Arc<dyn Profile>,
    config: Config,
    host: Arc<dyn Host>,
    tools: Vec<ToolInfo>,
    /// The tool list as MCP sends it, built once: it depends only on profile and mode.
    mcp_tools: Vec<McpTool>,
}

/// How often a long tool call reports progress when the client asked for it.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(500);

impl McpServer {
    /// A server offering `profile`'s tools under `config`, run against `host`.
    pub fn new(profile: impl Into<Arc<dyn Profile>>, config: Config, host: Arc<dyn Host>) -> McpServer {
        let profile = profile.into();
        let tools = profile.tools(&config);
        let mcp_tools = tools.iter().map(to_mcp_tool).collect();
        McpServer { inner: Arc::new(Inner { profile, config, host, tools, mcp_tools }) }
    }

    /// Serves MCP over `transport` until the client goes away.
    pub async fn serve<T, E, A>(self, transport: T) -> anyhow::Result<()>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = ServiceExt::serve(self, transport).await?;
        let reason = running.waiting().await?;
        tracing::debug!(?reason, "mcp session ended");
        Ok(())
    }

    fn tool_list(&self) -> Vec<McpTool> {
        self.inner.mcp_tools.clone()
    }

    /// Runs one call through the host.
    async fn run_call(
        &self,
        tool: &ToolInfo,
        args: Value,
        cancel: Cancel,
        client: String,
    ) -> Result<Answer, CallError> {
        let inner = &self.inner;
        let call = ToolCall {
            profile: inner.profile.clone(),
            config: inner.config.clone(),
            name: tool.name.to_owned(),
            args,
            cancel,
            quick: tool.quick,
            read_only: tool.effects.read_only,
            client,
        };
        inner.host.call(call).await
    }

    /// Replaces the roots with the client's. Roots are deprecated in the newest MCP revision but
    /// are how clients speaking the earlier revisions scope a server, so tether still asks.
    #[allow(deprecated)]
    async fn refresh_roots(&self, peer: &rmcp::Peer<RoleServer>) {
        let supports_roots = peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if !supports_roots || !self.inner.profile.follows_client_roots() {
            return;
        }
        match peer.list_roots().await {
            Ok(list) => {
                let paths = roots::paths_from_roots(&list.roots);
                if paths.is_empty() {
                    tracing::warn!("the client sent no usable file roots; keeping the current roots");
                    return;
                }
                if let Err(e) = self.inner.host.set_roots(paths.clone()) {
                    tracing::warn!(error = %e, "the client's roots could not be used; keeping the current roots");
                } else {
                    tracing::info!(?paths, "workspace roots set by the client");
                }
            }
            Err(e) => tracing::warn!(error = %e, "roots/list failed"),
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("profile", &self.inner.profile.name()).finish_non_exhaustive()
    }
}

fn to_mcp_tool(t: &ToolInfo) -> McpTool {
    let schema = match &t.input_schema {
        Value::Object(o) => o.clone(),
        _ => serde_json::Map::new(),
    };
    let annotations = ToolAnnotations::from_raw(
        None,
        Some(t.effects.read_only),
        Some(t.effects.destructive),
        Some(t.effects.idempotent),
        Some(t.effects.open_world),
    );
    McpTool::new(t.name, t.description, Arc::new(schema)).with_annotations(annotations)
}

fn to_mcp_result(r: CallResult) -> CallToolResult {
    let content = if r.items.is_empty() {
        vec![ContentBlock::text(r.text)]
    } else {
        r.items
            .into_iter()
            .map(|item| match item {
                Item::Text(text) => ContentBlock::text(text),
                Item::Blob { uri, data, mime_type } => {
                    ContentBlock::resource(rmcp::model::ResourceContents::blob(data, uri).with_mime_type(mime_type))
                }
            })
            .collect()
    };
    let mut out = if r.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    out.structured_content = r.structured;
    out
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")).with_title("tether"))
            .with_instructions(format!(
                "tether file tools ({} profile). Paths are absolute inside the workspace roots or relative to \
                 the first root. When an editor runs tether, reads see its unsaved buffers and changes land \
                 in them.{}",
                self.inner.profile.name(),
                if self.inner.config.editor {
                    " This server is attached to the editor: a change may wait for the user to review it, and \
                     its result then says what they accepted or rejected, and why."
                } else {
                    " No editor is attached: changes are written to disk directly, with no review before apply."
                }
            ))
    }

    /// The whole list in one page: tether hands out no cursor, so a request that brings one
    /// brings a cursor it cannot have had from tether, and gets `-32602` as MCP asks.
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("invalid cursor {cursor:?}: tether lists all tools in one page and hands out no cursors"),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(self.tool_list()))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.inner.mcp_tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some(tool) = self.inner.tools.iter().find(|t| t.name == name) else {
            return Err(McpError::invalid_params(format!("unknown tool: {name}"), None));
        };
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let progress = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            let name = name.clone();
            tokio::spawn(async move {
                let mut ticks = 0u32;
                loop {
                    tokio::time::sleep(PROGRESS_INTERVAL).await;
                    ticks += 1;
                    let secs = f64::from(ticks) * PROGRESS_INTERVAL.as_secs_f64();
                    let mut p = ProgressNotificationParam::new(token.clone(), f64::from(ticks));
                    p.message = Some(format!("{name} running for {secs:.1} s"));
                    if peer.notify_progress(p).await.is_err() {
                        break;
                    }
                }
            })
        });
        let cancel = Cancel::default();
        let client = client_of(&context);
        let result = tokio::select! {
            r = self.run_call(tool, args, cancel.clone(), client) => r,
            () = context.ct.cancelled() => {
                // Tell the tool to stop (a running command is killed); the client expects no
                // answer to a cancelled request.
                cancel.cancel();
                if let Some(p) = progress { p.abort(); }
                return Err(McpError::internal_error("the request was cancelled", None));
            }
        };
        if let Some(p) = progress {
            p.abort();
        }
        memory::note_activity();
        match result {
            Ok(Answer::Made(r)) => Ok(to_mcp_result(r).into()),
            Ok(Answer::Forwarded(r)) => Ok(r.into()),
            Err(e) => Err(McpError::new(rmcp::model::ErrorCode(e.code()), e.to_string(), e.data().cloned())),
        }
    }

    /// rmcp reads a request whose params do not fit its method's type (a `tools/call` whose
    /// `arguments` are an array) as a custom request, which it would answer `-32601` with the
    /// method's name. A method of MCP's gets `-32602` and, for the tool methods, what is wrong;
    /// any other method gets "method not found: NAME".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let CustomRequest { method, params, .. } = request;
        let params = params.unwrap_or(Value::Null);
        // The path says which field is wrong: "arguments: invalid type: sequence, expected a map".
        let reason = match method.as_str() {
            "tools/call" => serde_path_to_error::deserialize::<_, CallToolRequestParams>(params).err(),
            "tools/list" => serde_path_to_error::deserialize::<_, Option<PaginatedRequestParams>>(params).err(),
            m if MCP_REQUESTS.contains(&m) => None,
            _ => {
                return Err(McpError::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: {method}"),
                    None,
                ))
            }
        };
        let reason = reason.map_or_else(|| "params of the wrong shape".to_owned(), |e| e.to_string());
        Err(McpError::invalid_params(format!("invalid params for {method}: {reason}"), None))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer).await;
    }
}

/// The requests an MCP client may send (besides the two tool methods): one that reaches
/// [`McpServer::on_custom_request`] had params rmcp could not read.
const MCP_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Serves `tether mcp` on stdio until the client closes it: standalone on disk, or attached to an
/// editor's `tether lsp` through `connector` whenever one serves the root.
pub fn run_stdio(
    profile: Box<dyn Profile>,
    config: Config,
    workspace: Workspace,
    connector: Option<Arc<dyn remote::Connector>>,
) -> anyhow::Result<()> {
    let mut config = config;
    memory::keep_large_buffers();
    // One thread serves the protocol and runs the quick tools; the rest go to the blocking pool.
    // A message then never crosses threads on its way in or out, which halves a small call.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let disk = DiskHost::new(workspace);
        let host: Arc<dyn Host> = match connector {
            Some(connector) => {
                let host = remote::AttachedHost::new(disk, connector);
                host.try_attach().await;
                // Attached to an editor's lsp: its knowledge tools are served (they run there).
                config.editor = host.is_attached().await;
                Arc::new(host)
            }
            None => Arc::new(disk),
        };
        let server = McpServer::new(profile, config, host);
        tokio::spawn(memory::release_when_idle());
        widen_stdio_pipes();
        let (read, write) = rmcp::transport::stdio_pipes();
        server.serve(LineTransport::new(read, write)).await
    })
}

/// The size `tether mcp` asks of its stdio pipes.
#[cfg(target_os = "linux")]
const STDIO_PIPE_SIZE: usize = 1 << 20;

/// Grows stdin and stdout to [`STDIO_PIPE_SIZE`] when they are pipes (Linux's default is 64 KiB,
/// and 1 MiB the most an unprivileged process may ask). A 23 MB reply then crosses in about 23
/// writes instead of 360, each of which wakes the client; a large request likewise. Where the
/// size cannot be changed (not a pipe, another system, a lower limit), nothing changes.
fn widen_stdio_pipes() {
    #[cfg(target_os = "linux")]
    for fd in [std::io::stdin().as_fd(), std::io::stdout().as_fd()] {
        if let Err(e) = rustix::pipe::fcntl_setpipe_size(fd, STDIO_PIPE_SIZE) {
            tracing::debug!(error = %e, "stdio pipe keeps its size");
        }
    }
}
