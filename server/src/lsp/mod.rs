//! `tether lsp`: the tools over the editor's live buffers, as a language server on tower-lsp.
//!
//! Only this module names tower-lsp and lsp-types. The editor opens documents and keeps them in
//! sync (`lsp/store.rs`); `workspace/executeCommand` runs tools against a snapshot of them
//! (`lsp/calls.rs`); a tool's changes reach open documents as one versioned `workspace/applyEdit`
//! and every other file through the disk sink (`lsp/sink.rs`). tether's own commands and methods are
//! listed in [`protocol`] and documented in `editors/protocol.md`.
//!
//! Two tower-lsp hazards shape this module:
//! - handlers run concurrently, so the sync handlers apply their change to the store before their
//!   first `.await` (they have none), which keeps changes in arrival order;
//! - the server runs at most [`CONCURRENCY_LEVEL`] handlers at once, and a tool call holds its
//!   slot while it waits for the editor's `didChange`, so tool calls are capped well below that
//!   ([`Limits::max_admitted`]) and every wait on the editor is bounded.

mod admission;
mod arrivals;
mod bridge;
mod calls;
mod capabilities;
mod convert;
mod delivery;
mod disk;
mod editor;
mod handlers;
mod ide;
pub(crate) use ide::status as ide_status;
mod knowledge;
mod logging;
mod ops;
mod options;
mod progress;
pub mod protocol;
mod review;
mod server;
mod shared;
mod sink;
mod store;
mod track;
mod transport;
mod watch;

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp::{ClientSocket, LspService};

use crate::mcp::memory;

pub use capabilities::{negotiate_encoding, ClientCaps};
pub use options::{Limits, Options, ProfileLookup, SavePolicy};
pub use server::Backend;
pub use store::{DocState, Store, SyncError};
pub use transport::{Numbered, Service};

/// How many handlers tower-lsp runs at once in `tether lsp`: well above the tool calls allowed
/// in flight, so document sync always finds a free slot.
pub const CONCURRENCY_LEVEL: usize = 64;

/// The tower-lsp service of a server, with tether's custom methods registered.
pub fn service(options: Options) -> (Service, ClientSocket) {
    let (service, socket) = LspService::build(|client| Backend::new(client, options))
        .custom_method(protocol::DEBUG_DOCUMENT, Backend::debug_document)
        .custom_method(protocol::PUBLISH_DIAGNOSTICS, Backend::publish_diagnostics)
        .finish();
    (Service::new(service), socket)
}

/// Serves the protocol over `input`/`output` until the client sends `exit` or closes `input`.
/// Returns whether `shutdown` came first (the LSP exit code is 0 then, 1 otherwise).
pub async fn serve<I, O>(input: I, output: O, options: Options) -> bool
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let (service, socket) = service(options);
    let backend = service.inner().clone_handle();
    transport::serve_until_exit(input, output, service, socket, CONCURRENCY_LEVEL).await;
    backend.was_shut_down()
}

/// Runs `tether lsp` on stdio: logs to stderr, and warnings and errors to the editor too.
/// Serves the bridge for `tether mcp` alongside (unless `options.bridge` is off) and removes its
/// socket and discovery file on the way out, also on SIGTERM and SIGINT.
/// Returns whether the editor sent `shutdown` before `exit`.
pub fn run_stdio(options: Options, log_level: Option<&str>) -> anyhow::Result<bool> {
    let forward = logging::init(log_level);
    memory::few_arenas();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let clean = rt.block_on(async move {
        let with_bridge = options.bridge;
        let with_ide = options.ide;
        let (service, socket) = service(options);
        forward.connect(service.inner().client().clone());
        let backend = service.inner().clone_handle();
        let shared = backend.shared();
        // A large call's buffers, and glibc's thresholds raised by them, would otherwise keep
        // the memory of the largest call for as long as the editor runs.
        tokio::spawn(memory::release_when_idle());
        let ide_shared = shared.clone();
        let bridge = async move {
            if with_bridge {
                bridge::serve(shared).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        // The assistant CLIs' IDE protocols; leaving the select below removes their discovery files.
        let ide = async move {
            if with_ide {
                ide::serve(ide_shared).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let (stdin, stdout) = (tokio::io::stdin(), memory::Watched(tokio::io::stdout()));
        // Leaving this select drops the bridge future, which removes the socket and the file.
        tokio::select! {
            () = transport::serve_until_exit(stdin, stdout, service, socket, CONCURRENCY_LEVEL) => {}
            () = bridge => {}
            () = ide => {}
            signal = terminated() => tracing::info!(signal, "stopping"),
        }
        backend.was_shut_down()
    });
    // A tool still running when the editor leaves must not keep the process alive.
    rt.shutdown_timeout(Duration::from_secs(1));
    // The records of changes to buffers, synced just after their answers, are synced before
    // the process ends.
    crate::journal::sync_pending();
    Ok(clean)
}

/// Resolves when the process is asked to stop (SIGTERM or SIGINT), naming the signal.
#[cfg(unix)]
async fn terminated() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        },
        _ => std::future::pending().await,
    }
}

/// Resolves when the process is asked to stop (its console closing, or Ctrl+C), naming the
/// event.
#[cfg(windows)]
async fn terminated() -> &'static str {
    use tokio::signal::windows::{ctrl_c, ctrl_close};
    match (ctrl_close(), ctrl_c()) {
        (Ok(mut close), Ok(mut int)) => tokio::select! {
            _ = close.recv() => "CTRL_CLOSE_EVENT",
            _ = int.recv() => "CTRL_C_EVENT",
        },
        _ => std::future::pending().await,
    }
}
