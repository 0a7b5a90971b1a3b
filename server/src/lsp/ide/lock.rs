//! Claude Code's IDE discovery: one lock file per IDE server, `<port>.lock` in `ide/` of Claude
//! Code's configuration directory (`$CLAUDE_CONFIG_DIR`, else `~/.claude`), naming the server's
//! process, workspace folders, transport and token. Claude Code connects to the one whose folders
//! hold its working directory.
//!
//! One entry per project: a `tether lsp` publishes only when no live server already names one of
//! its folders. When that server is another IDE integration (an editor's own Claude Code
//! extension or plugin), tether stands aside and says so; when it is another `tether lsp`, the
//! first one serves and the others wait for it to go.

use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bridge::discovery::{ensure_private_dir, is_alive};

/// The name tether's entries carry, so that another `tether lsp` knows its own kind.
pub const IDE_NAME: &str = "tether";

/// A lock file's fields, as Claude Code reads them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lock {
    /// The serving process.
    pub pid: u32,
    /// The folders it serves.
    #[serde(default)]
    pub workspace_folders: Vec<String>,
    /// Who serves (shown by Claude Code's `/ide`).
    #[serde(default)]
    pub ide_name: String,
    /// `ws`.
    #[serde(default)]
    pub transport: String,
    /// The secret the client sends in `x-claude-code-ide-authorization`.
    #[serde(default)]
    pub auth_token: String,
}

/// Claude Code's lock folder: `$CLAUDE_CONFIG_DIR/ide`, else `~/.claude/ide`.
pub fn lock_dir() -> Option<PathBuf> {
    let config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude")))?;
    Some(config.join("ide"))
}

/// A live server already serving one of `roots` (not this process), if any: what stops this one
/// from publishing. Another integration comes before another tether.
pub fn serving(dir: &Path, roots: &[PathBuf]) -> Option<(PathBuf, Lock)> {
    let me = std::process::id();
    let mut found: Vec<(PathBuf, Lock)> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "lock"))
        .filter_map(|p| {
            let lock: Lock = serde_json::from_slice(&fs::read(&p).ok()?).ok()?;
            let overlaps = lock
                .workspace_folders
                .iter()
                .map(PathBuf::from)
                .any(|f| roots.iter().any(|r| r.starts_with(&f) || f.starts_with(r)));
            (lock.pid != me && overlaps && is_alive(lock.pid)).then_some((p, lock))
        })
        .collect();
    found.sort_by_key(|(_, l)| l.ide_name == IDE_NAME);
    found.into_iter().next()
}

/// Removes tether's own lock files whose process is gone (one killed without its clean-up, by
/// SIGKILL or a crash): Claude Code would skip them, but they would stay in the user's folder.
pub fn sweep(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let uid = rustix::process::geteuid().as_raw();
    for path in entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "lock")) {
        let Some(lock) = fs::read(&path).ok().and_then(|b| serde_json::from_slice::<Lock>(&b).ok()) else { continue };
        let ours = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.uid() == uid);
        if ours && lock.ide_name == IDE_NAME && !is_alive(lock.pid) {
            let _ = fs::remove_file(&path);
        }
    }
}

/// A published lock file, removed when dropped.
#[derive(Debug)]
pub struct Published {
    path: PathBuf,
}

impl Published {
    /// Writes `lock` as `<port>.lock` in `dir` (created 0700), 0600, atomically.
    pub fn write(dir: &Path, port: u16, lock: &Lock) -> io::Result<Published> {
        let uid = rustix::process::geteuid().as_raw();
        if let Some(parent) = dir.parent() {
            fs::create_dir_all(parent)?;
        }
        // A folder of ours made by another program with the usual 0755 is narrowed, not refused:
        // the tokens in it are for this user only.
        if fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 != 0) {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
        }
        ensure_private_dir(dir, uid)?;
        let path = dir.join(format!("{port}.lock"));
        let tmp = dir.join(format!(".{port}.lock.tmp"));
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(&serde_json::to_vec(lock).map_err(io::Error::other)?)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &path)?;
        Ok(Published { path })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        // Only our own file: a later server may have taken the port's name.
        let ours = fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Lock>(&b).ok())
            .is_some_and(|l| l.pid == std::process::id());
        let owned = fs::metadata(&self.path).is_ok_and(|m| m.uid() == rustix::process::geteuid().as_raw());
        if ours && owned {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(pid: u32, folder: &str, name: &str) -> Lock {
        Lock {
            pid,
            workspace_folders: vec![folder.into()],
            ide_name: name.into(),
            transport: "ws".into(),
            auth_token: "t".into(),
        }
    }

    #[test]
    fn published_private_and_removed_on_drop() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path().join("claude").join("ide");
        fs::create_dir_all(&dir).expect("test setup");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("test setup");
        let published = Published::write(&dir, 4242, &lock(std::process::id(), "/w", IDE_NAME)).expect("test setup");
        let meta = fs::metadata(published.path()).expect("test setup");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&dir).expect("test setup").permissions().mode() & 0o777, 0o700);
        let read: Lock =
            serde_json::from_slice(&fs::read(dir.join("4242.lock")).expect("test setup")).expect("test setup");
        assert_eq!(read.workspace_folders, ["/w"]);
        drop(published);
        assert!(!dir.join("4242.lock").exists());
    }

    #[test]
    fn another_live_server_of_the_folder_is_found_another_integration_first() {
        let tmp = tempfile::tempdir().expect("test setup");
        let dir = tmp.path();
        // pid 1 is alive on any Unix; a pid past the maximum is not.
        let parent = std::os::unix::process::parent_id();
        fs::write(dir.join("1.lock"), serde_json::to_vec(&lock(1, "/w", IDE_NAME)).expect("test setup"))
            .expect("test setup");
        fs::write(dir.join("2.lock"), serde_json::to_vec(&lock(parent, "/w/sub", "Neovim")).expect("test setup"))
            .expect("test setup");
        fs::write(
            dir.join("3.lock"),
            serde_json::to_vec(&lock(4_000_000, "/w", "Visual Studio Code")).expect("test setup"),
        )
        .expect("test setup");
        fs::write(dir.join("4.lock"), serde_json::to_vec(&lock(1, "/elsewhere", "Emacs")).expect("test setup"))
            .expect("test setup");
        let (_, found) = serving(dir, &[PathBuf::from("/w")]).expect("test setup");
        assert_eq!(found.ide_name, "Neovim", "another integration is named before another tether");
        fs::remove_file(dir.join("2.lock")).expect("test setup");
        assert_eq!(serving(dir, &[PathBuf::from("/w")]).expect("test setup").1.ide_name, IDE_NAME);
        assert!(serving(dir, &[PathBuf::from("/other")]).is_none(), "no overlap, no owner");
        sweep(dir);
        assert!(dir.join("1.lock").exists() && dir.join("4.lock").exists(), "live ones stay");
        fs::write(dir.join("5.lock"), serde_json::to_vec(&lock(4_000_000, "/w", IDE_NAME)).expect("test setup"))
            .expect("test setup");
        sweep(dir);
        assert!(!dir.join("5.lock").exists(), "tether's own lock of a dead process goes");
        assert!(dir.join("3.lock").exists(), "another integration's is not ours to remove");
    }
}
