//! The lsp side: the socket, the discovery file, and the checks every connection passes.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
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
        // A socket left by an earlier process with our pid is dead: we are that pid now.
        let _ = fs::remove_file(&socket);
        let listener = UnixListener::bind(&socket)?;
        // The directory already keeps others out; the mode says the same of the socket itself.
        fs::set_permissions(&socket, fs::Permissions::from_mode(0o600))?;
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
        let _ = fs::remove_file(&instance.socket);
    }
}

async fn accept_loop(listener: UnixListener, token: Arc<str>, make: MakeServer) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let (token, make) = (token.clone(), make.clone());
                tokio::spawn(async move { serve_connection(stream, &token, &make).await });
            }
            Err(e) => {
                tracing::warn!(error = %e, "bridge accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Checks one connection and, if it passes, serves MCP on it until the client leaves. A refused
/// connection is closed without a word.
async fn serve_connection(stream: UnixStream, token: &str, make: &MakeServer) {
    let me = rustix::process::geteuid().as_raw();
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => {}
        Ok(cred) => {
            tracing::warn!(uid = cred.uid(), "bridge connection from another user refused");
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "bridge connection without peer credentials refused");
            return;
        }
    }
    let (read, write) = stream.into_split();
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
async fn read_hello(reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>) -> Option<Hello> {
    let mut line = Vec::new();
    let mut limited = (&mut *reader).take(MAX_HELLO);
    match tokio::time::timeout(HELLO_TIMEOUT, limited.read_until(b'\n', &mut line)).await {
        Ok(Ok(_)) if line.ends_with(b"\n") => serde_json::from_slice(&line).ok(),
        _ => None,
    }
}
