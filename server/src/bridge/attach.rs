//! The `tether mcp` side: find the instance serving a root and open an authenticated
//! connection to it.

use std::path::Path;

use tokio::io::AsyncWriteExt as _;
use tokio::net::UnixStream;

use super::discovery;
use super::{Attach, Hello};
use crate::mcp::remote::{Connection, Connector};
use crate::mcp::BoxFuture;

/// Connects to a `tether lsp` found through the discovery files.
#[derive(Debug, Clone)]
pub struct SocketConnector {
    attach: Attach,
    profile: String,
}

impl SocketConnector {
    /// A connector choosing as `attach` says, for a client serving `profile`. `None` for
    /// [`Attach::Never`].
    pub fn new(attach: Attach, profile: &str) -> Option<SocketConnector> {
        (attach != Attach::Never).then(|| SocketConnector { attach, profile: profile.to_owned() })
    }

    async fn open(&self, root: &Path) -> Option<Connection> {
        // Every directory an lsp may have published in, so that a reduced environment (no
        // XDG_RUNTIME_DIR, another TMPDIR) does not hide the editor's instance.
        let live: Vec<discovery::Instance> = discovery::lookup_dirs().iter().flat_map(|d| discovery::list(d)).collect();
        let only = match self.attach {
            Attach::Pid(pid) => Some(pid),
            _ => None,
        };
        let Some(instance) = discovery::pick(&live, root, only) else {
            if let Some(pid) = only {
                tracing::warn!(pid, root = %root.display(), "no live tether lsp with that pid serves this root");
            }
            return None;
        };
        let label = format!("pid {} ({})", instance.pid, instance.socket.display());
        let mut stream = match UnixStream::connect(&instance.socket).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(instance = %label, error = %e, "could not connect to the editor's tether lsp");
                return None;
            }
        };
        // The socket sits in our private directory, but check the other end all the same.
        let me = rustix::process::geteuid().as_raw();
        if !stream.peer_cred().is_ok_and(|c| c.uid() == me) {
            tracing::warn!(instance = %label, "the socket's owner is not us; not attaching");
            return None;
        }
        let hello = Hello { token: instance.token.clone(), profile: self.profile.clone() };
        let mut line = serde_json::to_vec(&hello).ok()?;
        line.push(b'\n');
        if let Err(e) = stream.write_all(&line).await {
            tracing::warn!(instance = %label, error = %e, "could not greet the editor's tether lsp");
            return None;
        }
        let (reader, writer) = stream.into_split();
        Some(Connection { reader: Box::new(reader), writer: Box::new(writer), label })
    }
}

impl Connector for SocketConnector {
    fn connect<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Option<Connection>> {
        Box::pin(self.open(root))
    }
}
