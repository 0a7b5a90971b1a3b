//! The IDE servers' discovery files: one per server, in a folder each assistant CLI looks in,
//! naming the server's process, workspace folders and token. The CLI connects to the one whose
//! folders hold its working directory.
//!
//! - Claude Code: `<port>.lock` in `ide/` of its configuration directory (`$CLAUDE_CONFIG_DIR`,
//!   else `~/.claude`): `{pid, workspaceFolders, ideName, transport, authToken}`.
//! - Gemini CLI: `gemini-ide-server-<pid>-<port>.json` in `gemini/ide/` of the temporary folder
//!   (`$TMPDIR`, else `/tmp`): `{port, workspacePath (folders joined by `:`), authToken, ideInfo}`.
//!   Without `ideInfo` the CLI connects only from the terminals it knows (VS Code's, Zed's).
//!
//! One entry per project: a `tether lsp` publishes only when no live server already names one of
//! its folders. When that server is another IDE integration (an editor's own extension or
//! plugin), tether stands aside and says so; when it is another `tether lsp`, the first one serves
//! and the others wait for it to go.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::bridge::discovery::{ensure_private_dir, is_alive};
use crate::sys;

/// The name tether's entries carry, so that another `tether lsp` knows its own kind.
pub const IDE_NAME: &str = "tether";

/// The assistant CLI an IDE server serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Claude Code: MCP over a WebSocket.
    Claude,
    /// Gemini CLI: MCP over streamable HTTP.
    Gemini,
}

/// Claude Code's lock file, as it reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lock {
    pid: u32,
    #[serde(default)]
    workspace_folders: Vec<String>,
    /// Shown by Claude Code's `/ide`.
    #[serde(default)]
    ide_name: String,
    /// `ws`.
    #[serde(default)]
    transport: String,
    /// The secret the client sends in `x-claude-code-ide-authorization`.
    #[serde(default)]
    auth_token: String,
}

/// What a discovery file says, of either kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The serving process.
    pub pid: u32,
    /// The folders it serves.
    pub folders: Vec<PathBuf>,
    /// Who serves: `tether`, or another integration's name.
    pub name: String,
}

/// The prefix of Gemini CLI's discovery files.
const GEMINI_PREFIX: &str = "gemini-ide-server-";

impl Kind {
    /// The CLI's name, for logs and the user.
    pub fn cli(self) -> &'static str {
        match self {
            Kind::Claude => "Claude Code",
            Kind::Gemini => "Gemini CLI",
        }
    }

    /// The folder the CLI looks in.
    pub fn dir(self) -> Option<PathBuf> {
        let absolute = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute());
        match self {
            Kind::Claude => {
                let config = absolute("CLAUDE_CONFIG_DIR").or_else(|| sys::home_dir().map(|h| h.join(".claude")))?;
                Some(config.join("ide"))
            }
            // Node's `os.tmpdir()`, which the CLI uses (on Windows, what `TEMP` or `TMP` says).
            Kind::Gemini if cfg!(windows) => Some(std::env::temp_dir().join("gemini").join("ide")),
            Kind::Gemini => Some(absolute("TMPDIR").unwrap_or_else(|| "/tmp".into()).join("gemini").join("ide")),
        }
    }

    /// This process's file name for a server on `port`.
    fn file_name(self, port: u16) -> String {
        match self {
            Kind::Claude => format!("{port}.lock"),
            Kind::Gemini => format!("{GEMINI_PREFIX}{}-{port}.json", std::process::id()),
        }
    }

    /// The file's text for a server on `port` with `token`, serving `roots`.
    pub fn encode(self, port: u16, token: &str, roots: &[PathBuf]) -> Vec<u8> {
        let folders = roots.iter().map(|r| r.to_string_lossy().into_owned());
        let value = match self {
            Kind::Claude => json!(Lock {
                pid: std::process::id(),
                workspace_folders: folders.collect(),
                ide_name: IDE_NAME.to_owned(),
                transport: "ws".to_owned(),
                auth_token: token.to_owned(),
            }),
            Kind::Gemini => json!({
                "port": port,
                "workspacePath": folders.collect::<Vec<_>>().join(":"),
                "authToken": token,
                "ideInfo": {"name": IDE_NAME, "displayName": IDE_NAME},
            }),
        };
        value.to_string().into_bytes()
    }

    /// The entry `path` holds, when it is a discovery file of this kind.
    fn read(self, path: &Path) -> Option<Entry> {
        let name = path.file_name()?.to_str()?;
        match self {
            Kind::Claude => {
                name.strip_suffix(".lock")?.parse::<u16>().ok()?;
                let lock: Lock = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
                let folders = lock.workspace_folders.iter().map(PathBuf::from).collect();
                Some(Entry { pid: lock.pid, folders, name: lock.ide_name })
            }
            Kind::Gemini => {
                let (pid, _port) = name.strip_prefix(GEMINI_PREFIX)?.strip_suffix(".json")?.split_once('-')?;
                let pid = pid.parse().ok()?;
                let file: Value = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
                let folders = file["workspacePath"].as_str().unwrap_or_default();
                let folders = folders.split(':').filter(|f| !f.is_empty()).map(PathBuf::from).collect();
                let name = file["ideInfo"]["name"].as_str().unwrap_or("an IDE companion").to_owned();
                Some(Entry { pid, folders, name })
            }
        }
    }

    fn entries(self, dir: &Path) -> Vec<(PathBuf, Entry)> {
        let Ok(list) = fs::read_dir(dir) else { return Vec::new() };
        list.flatten().map(|e| e.path()).filter_map(|p| Some((p.clone(), self.read(&p)?))).collect()
    }
}

/// The live servers whose folders overlap `roots`, another integration before another tether.
fn live_servers(kind: Kind, dir: &Path, roots: &[PathBuf]) -> Vec<(PathBuf, Entry)> {
    let mut found: Vec<(PathBuf, Entry)> = kind
        .entries(dir)
        .into_iter()
        .filter(|(_, e)| {
            let overlaps = e.folders.iter().any(|f| roots.iter().any(|r| r.starts_with(f) || f.starts_with(r)));
            overlaps && is_alive(e.pid)
        })
        .collect();
    found.sort_by_key(|(_, e)| e.name == IDE_NAME);
    found
}

/// A live server already serving one of `roots` (not this process), if any: what stops this one
/// from publishing. Another integration comes before another tether.
pub fn serving(kind: Kind, dir: &Path, roots: &[PathBuf]) -> Option<(PathBuf, Entry)> {
    let me = std::process::id();
    live_servers(kind, dir, roots).into_iter().find(|(_, e)| e.pid != me)
}

/// Who serves `roots` to `kind`'s CLI, seen from outside the `tether lsp` of process `pid` (for
/// `tether status`): that process itself, another server, or nobody.
pub fn served(kind: Kind, pid: u32, roots: &[PathBuf]) -> Served {
    let Some(dir) = kind.dir() else { return Served::Nobody };
    let found = live_servers(kind, &dir, roots);
    if let Some((file, _)) = found.iter().find(|(_, e)| e.pid == pid) {
        return Served::Itself(file.clone());
    }
    match found.into_iter().next() {
        Some((file, entry)) => Served::Other(file, entry),
        None => Served::Nobody,
    }
}

/// What [`served`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// The process asked about, through this discovery file.
    Itself(PathBuf),
    /// Another server, through this file: the process asked about stands aside.
    Other(PathBuf, Entry),
    /// No server: the process asked about has no workspace folder yet, or was started with
    /// `--no-ide`, or could not publish (its log says why).
    Nobody,
}

/// Removes tether's own discovery files whose process is gone (one killed without its clean-up,
/// by SIGKILL or a crash): the CLI would skip them, but they would stay in the user's folder.
pub fn sweep(kind: Kind, dir: &Path) {
    for (path, entry) in kind.entries(dir) {
        let ours = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && sys::is_ours(&m, &path));
        if ours && entry.name == IDE_NAME && !is_alive(entry.pid) {
            let _ = fs::remove_file(&path);
        }
    }
}

/// A published discovery file, removed when dropped.
#[derive(Debug)]
pub struct Published {
    kind: Kind,
    path: PathBuf,
}

impl Published {
    /// Writes `text` as this process's file of `kind` for `port` in `dir` (created 0700), 0600,
    /// atomically.
    pub fn write(kind: Kind, dir: &Path, port: u16, text: &[u8]) -> io::Result<Published> {
        if let Some(parent) = dir.parent() {
            fs::create_dir_all(parent)?;
        }
        // A folder of ours made by another program with the usual 0755 is narrowed, not refused:
        // the tokens in it are for this user only.
        sys::narrow_private_dir(dir)?;
        ensure_private_dir(dir)?;
        let name = kind.file_name(port);
        let path = dir.join(&name);
        let tmp = dir.join(format!(".{name}.tmp"));
        let _ = fs::remove_file(&tmp);
        let mut f = sys::open_private(&tmp, true)?;
        f.write_all(text)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &path)?;
        Ok(Published { kind, path })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        // Only our own file: a later server may have taken the port's name.
        let ours = self.kind.read(&self.path).is_some_and(|e| e.pid == std::process::id());
        let owned = fs::symlink_metadata(&self.path).is_ok_and(|m| sys::is_ours(&m, &self.path));
        if ours && owned {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn lock(pid: u32, folder: &str, name: &str) -> Vec<u8> {
        let lock = Lock {
            pid,
            workspace_folders: vec![folder.into()],
            ide_name: name.into(),
            transport: "ws".into(),
            auth_token: "t".into(),
        };
        serde_json::to_vec(&lock).expect("test setup")
    }

    #[test]
    fn published_private_and_removed_on_drop() {
        let tmp = tempfile::tempdir().expect("test setup");
        for kind in [Kind::Claude, Kind::Gemini] {
            let dir = tmp.path().join(format!("{kind:?}")).join("ide");
            fs::create_dir_all(&dir).expect("test setup");
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("test setup");
            let text = kind.encode(4242, "secret", &[PathBuf::from("/w"), PathBuf::from("/v")]);
            let published = Published::write(kind, &dir, 4242, &text).expect("test setup");
            let meta = fs::metadata(published.path()).expect("test setup");
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
            assert_eq!(fs::metadata(&dir).expect("test setup").permissions().mode() & 0o777, 0o700);
            let read = kind.read(published.path()).expect("an entry of its kind");
            assert_eq!(read.pid, std::process::id());
            assert_eq!(read.folders, [PathBuf::from("/w"), PathBuf::from("/v")]);
            assert_eq!(read.name, IDE_NAME);
            let path = published.path().to_owned();
            drop(published);
            assert!(!path.exists(), "{kind:?}");
        }
    }

    #[test]
    fn geminis_file_is_named_and_shaped_as_the_cli_reads_it() {
        let roots = [PathBuf::from("/w"), PathBuf::from("/v")];
        let file: Value = serde_json::from_slice(&Kind::Gemini.encode(4242, "secret", &roots)).expect("json");
        assert_eq!(file["port"], 4242);
        assert_eq!(file["workspacePath"], "/w:/v");
        assert_eq!(file["authToken"], "secret");
        assert_eq!(file["ideInfo"]["name"], IDE_NAME, "without ideInfo the CLI connects only from known terminals");
        assert!(file["ideInfo"]["displayName"].is_string());
        assert_eq!(Kind::Gemini.file_name(4242), format!("gemini-ide-server-{}-4242.json", std::process::id()));
    }

    #[test]
    fn another_live_server_of_the_folder_is_found_another_integration_first() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path();
        // pid 1 is alive on any Unix; a pid past the maximum is not.
        let parent = std::os::unix::process::parent_id();
        fs::write(dir.join("1.lock"), lock(1, "/w", IDE_NAME)).expect("test setup");
        fs::write(dir.join("2.lock"), lock(parent, "/w/sub", "Neovim")).expect("test setup");
        fs::write(dir.join("3.lock"), lock(4_000_000, "/w", "Visual Studio Code")).expect("test setup");
        fs::write(dir.join("4.lock"), lock(1, "/elsewhere", "Emacs")).expect("test setup");
        let (_, found) = serving(Kind::Claude, dir, &[PathBuf::from("/w")]).expect("test setup");
        assert_eq!(found.name, "Neovim", "another integration is named before another tether");
        assert!(serving(Kind::Gemini, dir, &[PathBuf::from("/w")]).is_none(), "the other CLI's files are not read");
        fs::remove_file(dir.join("2.lock")).expect("test setup");
        assert_eq!(serving(Kind::Claude, dir, &[PathBuf::from("/w")]).expect("test setup").1.name, IDE_NAME);
        assert!(serving(Kind::Claude, dir, &[PathBuf::from("/other")]).is_none(), "no overlap, no owner");
        sweep(Kind::Claude, dir);
        assert!(dir.join("1.lock").exists() && dir.join("4.lock").exists(), "live ones stay");
        fs::write(dir.join("5.lock"), lock(4_000_000, "/w", IDE_NAME)).expect("test setup");
        sweep(Kind::Claude, dir);
        assert!(!dir.join("5.lock").exists(), "tether's own lock of a dead process goes");
        assert!(dir.join("3.lock").exists(), "another integration's is not ours to remove");
    }

    #[test]
    fn geminis_companions_are_found_by_their_workspace_path() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path();
        let parent = std::os::unix::process::parent_id();
        // The official VS Code companion writes no ideInfo.
        let vscode = json!({"port": 1, "workspacePath": "/a:/w", "authToken": "t"}).to_string();
        fs::write(dir.join(format!("gemini-ide-server-{parent}-1.json")), vscode).expect("test setup");
        let (_, found) = serving(Kind::Gemini, dir, &[PathBuf::from("/w/src")]).expect("found");
        assert_eq!((found.pid, found.name.as_str()), (parent, "an IDE companion"));
        assert!(serving(Kind::Gemini, dir, &[PathBuf::from("/b")]).is_none());
        let dead = Kind::Gemini.encode(2, "t", &[PathBuf::from("/w")]);
        fs::write(dir.join("gemini-ide-server-4000000-2.json"), dead).expect("test setup");
        sweep(Kind::Gemini, dir);
        assert!(!dir.join("gemini-ide-server-4000000-2.json").exists());
        assert!(dir.join(format!("gemini-ide-server-{parent}-1.json")).exists());
    }
}
