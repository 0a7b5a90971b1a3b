//! The `tether mcp` side: find the instance serving a root and open an authenticated
//! connection to it.

use std::path::Path;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};

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
        let (reader, mut writer) = match connect(&instance.socket, instance.pid).await {
            Ok(halves) => halves,
            Err(e) => {
                tracing::warn!(instance = %label, error = %e, "could not connect to the editor's tether lsp");
                return Err(format!("{label}: {e}"));
            }
        };
        let hello = Hello { token: instance.token.clone(), profile: self.profile.clone() };
        let mut line = serde_json::to_vec(&hello).map_err(|e| e.to_string())?;
        line.push(b'\n');
        if let Err(e) = writer.write_all(&line).await {
            tracing::warn!(instance = %label, error = %e, "could not greet the editor's tether lsp");
            return Err(format!("{label}: {e}"));
        }
        Ok(Some(Connection { reader, writer, label }))
    }
}

/// The two halves of a connection.
type Halves = (Box<dyn AsyncRead + Send + Unpin>, Box<dyn AsyncWrite + Send + Unpin>);

/// Connects to the Unix socket `socket` of process `pid`, checking that its owner is us.
#[cfg(unix)]
async fn connect(socket: &Path, _pid: u32) -> std::io::Result<Halves> {
    let stream = tokio::net::UnixStream::connect(socket).await?;
    // The socket sits in our private directory, but check the other end all the same.
    if !stream.peer_cred().is_ok_and(|c| c.uid() == crate::sys::uid()) {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the socket belongs to another user"));
    }
    let (reader, writer) = stream.into_split();
    Ok((Box::new(reader), Box::new(writer)))
}

/// Connects to the named pipe `pipe`, checking that the process serving it is `pid` and runs as
/// our user (so a pipe someone else made under the name is never talked to). Every instance
/// being busy with another client is waited out briefly.
#[cfg(windows)]
async fn connect(pipe: &Path, pid: u32) -> std::io::Result<Halves> {
    use std::time::{Duration, Instant};
    /// ERROR_PIPE_BUSY: every instance is taken; the server makes a new one at once.
    const PIPE_BUSY: i32 = 231;
    let until = Instant::now() + Duration::from_secs(2);
    let client = loop {
        match tokio::net::windows::named_pipe::ClientOptions::new().open(pipe) {
            Ok(client) => break client,
            Err(e) if e.raw_os_error() == Some(PIPE_BUSY) && Instant::now() < until => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => return Err(e),
        }
    };
    let (server, user) = crate::sys::pipe_peer(&client, false)?;
    if server != pid || user != crate::sys::user() {
        let why = format!("the pipe is served by process {server} of {user}, not by the instance's own process {pid}");
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, why));
    }
    let (reader, writer) = tokio::io::split(client);
    Ok((Box::new(reader), Box::new(writer)))
}

impl Connector for SocketConnector {
    fn connect<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Option<Connection>> {
        Box::pin(self.open(root))
    }

    fn unreachable(&self) -> Option<String> {
        self.unreachable.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
