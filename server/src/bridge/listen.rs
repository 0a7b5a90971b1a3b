//! The lsp side: the socket (on Windows, the named pipe), the discovery file, and the checks
//! every connection passes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, BufReader};
use tokio::task::JoinHandle;

use super::discovery::{self, Instance};
use super::{tokens_match, Hello, MAX_HELLO};
use crate::mcp::McpServer;

/// Makes the MCP server for one authenticated connection, for the profile the client named
/// (`None` when the lsp does not know it).
pub type MakeServer = Arc<dyn Fn(&str) -> Option<McpServer> + Send + Sync>;

/// How long a client has to send its first line.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// A listening endpoint. Dropping it stops accepting and removes the socket and the discovery
/// file.
pub struct Endpoint {
    dir: PathBuf,
    instance: Mutex<Instance>,
    accept: JoinHandle<()>,
}

impl Endpoint {
    /// Listens in the private runtime directory `dir` and publishes the discovery file.
    pub fn start(dir: &Path, profile: &str, roots: Vec<PathBuf>, make: MakeServer) -> io::Result<Endpoint> {
        let pid = std::process::id();
        let socket = discovery::socket_of(dir, pid);
        let listener = Listener::bind(&socket)?;
        let started = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        let instance = Instance {
            pid,
            roots,
            socket: socket.clone(),
            profile: profile.to_owned(),
            token: super::new_token()?,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            started,
        };
        if let Err(e) = discovery::write(dir, &instance) {
            let _ = fs::remove_file(&socket);
            return Err(e);
        }
        let token: Arc<str> = instance.token.clone().into();
        let accept = tokio::spawn(accept_loop(listener, token, make));
        tracing::info!(socket = %socket.display(), "bridge endpoint listening");
        Ok(Endpoint { dir: dir.to_owned(), instance: Mutex::new(instance), accept })
    }

    /// Publishes new roots (the editor's workspace folders changed).
    pub fn set_roots(&self, roots: Vec<PathBuf>) {
        let mut instance = self.instance.lock().unwrap_or_else(|e| e.into_inner());
        if instance.roots == roots {
            return;
        }
        instance.roots = roots;
        if let Err(e) = discovery::write(&self.dir, &instance) {
            tracing::warn!(error = %e, "could not update the bridge discovery file");
        }
    }

    /// What the discovery file says.
    pub fn instance(&self) -> Instance {
        self.instance.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.accept.abort();
        let instance = self.instance.lock().unwrap_or_else(|e| e.into_inner());
        let _ = fs::remove_file(discovery::file_of(&self.dir, instance.pid));
        // A named pipe goes with its last handle; a Unix socket stays as a file.
        if cfg!(unix) {
            let _ = fs::remove_file(&instance.socket);
        }
    }
}

/// Where the lsp waits for connections: a Unix socket, 0600 in the private directory.
#[cfg(unix)]
struct Listener(tokio::net::UnixListener);

#[cfg(unix)]
impl Listener {
    fn bind(socket: &Path) -> io::Result<Listener> {
        use std::os::unix::fs::PermissionsExt as _;
        // A socket left by an earlier process with our pid is dead: we are that pid now.
        let _ = fs::remove_file(socket);
        let listener = tokio::net::UnixListener::bind(socket)?;
        // The directory already keeps others out; the mode says the same of the socket itself.
        fs::set_permissions(socket, fs::Permissions::from_mode(0o600))?;
        Ok(Listener(listener))
    }

    /// The next connection whose peer runs as our user; others are closed unanswered.
    async fn accept(&mut self) -> io::Result<Option<tokio::net::UnixStream>> {
        let (stream, _) = self.0.accept().await?;
        let me = crate::sys::uid();
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == me => Ok(Some(stream)),
            Ok(cred) => {
                tracing::warn!(uid = cred.uid(), "bridge connection from another user refused");
                Ok(None)
            }
            Err(e) => {
                tracing::warn!(error = %e, "bridge connection without peer credentials refused");
                Ok(None)
            }
        }
    }
}

/// Where the lsp waits for connections: a named pipe whose first instance is ours
/// (`first_pipe_instance`, so no one can have squatted the name), closed to remote clients, with
/// a DACL for the user alone. Each connection takes the waiting instance; a new one is made for
/// the next client at once.
#[cfg(windows)]
struct Listener {
    name: PathBuf,
    next: tokio::net::windows::named_pipe::NamedPipeServer,
}

#[cfg(windows)]
impl Listener {
    fn bind(name: &Path) -> io::Result<Listener> {
        Ok(Listener { name: name.to_owned(), next: Self::instance(name, true)? })
    }

    fn instance(name: &Path, first: bool) -> io::Result<tokio::net::windows::named_pipe::NamedPipeServer> {
        let mut options = tokio::net::windows::named_pipe::ServerOptions::new();
        options.first_pipe_instance(first).reject_remote_clients(true);
        crate::sys::with_private_attributes(|attrs| {
            // SAFETY: `attrs` points to SECURITY_ATTRIBUTES that live until this closure returns,
            // which is all the call needs.
            #[allow(unsafe_code)]
            unsafe {
                options.create_with_security_attributes_raw(name, attrs)
            }
        })
    }

    /// The next connection whose client runs as our user; others are closed unanswered.
    async fn accept(&mut self) -> io::Result<Option<tokio::net::windows::named_pipe::NamedPipeServer>> {
        self.next.connect().await?;
        let connected = std::mem::replace(&mut self.next, Self::instance(&self.name, false)?);
        match crate::sys::pipe_peer(&connected, true) {
            Ok((_, user)) if user == crate::sys::user() => Ok(Some(connected)),
            Ok((pid, user)) => {
                tracing::warn!(pid, %user, "bridge connection from another user refused");
                Ok(None)
            }
            Err(e) => {
                tracing::warn!(error = %e, "bridge connection whose client cannot be identified refused");
                Ok(None)
            }
        }
    }
}

async fn accept_loop(mut listener: Listener, token: Arc<str>, make: MakeServer) {
    loop {
        match listener.accept().await {
            Ok(Some(stream)) => {
                let (token, make) = (token.clone(), make.clone());
                // A Unix socket splits into owned halves; a pipe, through tokio's shared split.
                #[cfg(unix)]
                let (read, write) = stream.into_split();
                #[cfg(windows)]
                let (read, write) = tokio::io::split(stream);
                tokio::spawn(async move { serve_connection(read, write, &token, &make).await });
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "bridge accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Checks one connection from our own user and, if it passes, serves MCP on it until the client
/// leaves. A refused connection is closed without a word.
async fn serve_connection<R, W>(read: R, write: W, token: &str, make: &MakeServer)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let mut reader = BufReader::new(read);
    let Some(hello) = read_hello(&mut reader).await else {
        tracing::warn!("bridge connection without a valid first line refused");
        return;
    };
    if !tokens_match(&hello.token, token) {
        tracing::warn!("bridge connection with a wrong token refused");
        return;
    }
    let Some(server) = make(&hello.profile) else {
        tracing::warn!(profile = %hello.profile, "bridge connection for an unknown profile refused");
        return;
    };
    tracing::info!("tether mcp attached over the bridge");
    // The reader keeps whatever followed the first line in its buffer, so nothing is lost.
    if let Err(e) = server.serve(crate::mcp::LineTransport::new(reader, write)).await {
        tracing::debug!(error = %e, "bridge session ended with an error");
    }
}

/// The first line, read with a size and time limit, parsed.
async fn read_hello(reader: &mut (impl AsyncBufRead + Unpin)) -> Option<Hello> {
    let mut line = Vec::new();
    let mut limited = (&mut *reader).take(MAX_HELLO);
    match tokio::time::timeout(HELLO_TIMEOUT, limited.read_until(b'\n', &mut line)).await {
        Ok(Ok(_)) if line.ends_with(b"\n") => serde_json::from_slice(&line).ok(),
        _ => None,
    }
}
