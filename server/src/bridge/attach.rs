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
    /// Why the last attempt could not reach the instance it chose.
    unreachable: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl SocketConnector {
    /// A connector choosing as `attach` says, for a client serving `profile`. `None` for
    /// [`Attach::Never`].
    pub fn new(attach: Attach, profile: &str) -> Option<SocketConnector> {
        (attach != Attach::Never).then(|| SocketConnector {
            attach,
            profile: profile.to_owned(),
            unreachable: std::sync::Arc::default(),
        })
    }

    async fn open(&self, root: &Path) -> Option<Connection> {
        let (connection, unreachable) = match self.reach(root).await {
            Ok(c) => (c, None),
            Err(why) => (None, Some(why)),
        };
        *self.unreachable.lock().unwrap_or_else(|e| e.into_inner()) = unreachable;
        connection
    }

    /// A connection to the instance serving `root` (`None` when there is none), or why the one
    /// chosen could not be reached.
    async fn reach(&self, root: &Path) -> Result<Option<Connection>, String> {
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
            return Ok(None);
        };
        let label = format!("pid {} ({})", instance.pid, instance.socket.display());
        let mut stream = match UnixStream::connect(&instance.socket).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(instance = %label, error = %e, "could not connect to the editor's tether lsp");
                return Err(format!("{label}: {e}"));
            }
        };
        // The socket sits in our private directory, but check the other end all the same.
        let me = rustix::process::geteuid().as_raw();
        if !stream.peer_cred().is_ok_and(|c| c.uid() == me) {
            tracing::warn!(instance = %label, "the socket's owner is not us; not attaching");
            return Err(format!("{label}: the socket belongs to another user"));
        }
        let hello = Hello { token: instance.token.clone(), profile: self.profile.clone() };
        let mut line = serde_json::to_vec(&hello).map_err(|e| e.to_string())?;
        line.push(b'\n');
        if let Err(e) = stream.write_all(&line).await {
            tracing::warn!(instance = %label, error = %e, "could not greet the editor's tether lsp");
            return Err(format!("{label}: {e}"));
        }
        let (reader, writer) = stream.into_split();
        Ok(Some(Connection { reader: Box::new(reader), writer: Box::new(writer), label }))
    }
}

impl Connector for SocketConnector {
    fn connect<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Option<Connection>> {
        Box::pin(self.open(root))
    }

    fn unreachable(&self) -> Option<String> {
        self.unreachable.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
