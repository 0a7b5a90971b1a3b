//! Locks between processes on the files a change writes.
//!
//! Any number of tether processes may write one project: the editor's `tether lsp`, standalone
//! `tether mcp` servers, `tether call` and `tether undo` from a shell. A change's last "is the file
//! still what the tool read?" check and its rename must be one step against all of them, or two
//! processes both pass the check and the second rename silently drops the first change (answered
//! applied). [`FileLocks::acquire`] takes an exclusive `flock` on one lock file per path, all of a
//! change's paths in one global order (so changes over several files cannot deadlock), and holds
//! them until the change is committed or rolled back. The kernel releases a `flock` when its
//! process dies, so a lock left by a killed process never blocks anyone.
//!
//! The lock files live in a directory that does not depend on the environment, since processes of
//! one user may run with different ones (an assistant may start its servers without
//! `XDG_RUNTIME_DIR`): `/run/user/<uid>/tether/locks` when the system gives the user that runtime
//! directory, else `/tmp/tether-<uid>/locks`. Each directory must be ours, not a symlink, and
//! closed to group and others; otherwise no lock is taken, with a warning (the base check still
//! refuses a change to a file that changed, but two processes may then both pass it). A lock
//! file is named by the BLAKE3 hash of the real path and removed by the holder before it lets
//! go; a waiter that then wins the lock of the removed file notices (the name no longer leads to
//! the file it locked) and locks again.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use crate::sys;

/// The directory of lock files, or `None` (with the reason logged once) when none is safe to use.
static DIR: LazyLock<Option<PathBuf>> = LazyLock::new(|| match lock_dir() {
    Ok(dir) => Some(dir),
    Err(e) => {
        tracing::warn!("no lock directory ({e}): changes are not coordinated with other tether processes");
        None
    }
});

/// Exclusive locks on a change's paths, held until dropped.
#[derive(Debug, Default)]
pub struct FileLocks {
    held: Vec<(PathBuf, File)>,
}

impl FileLocks {
    /// Locks every one of `paths` (real paths), waiting while another process holds any of them.
    /// Without a usable lock directory, or when a lock file cannot be made, nothing is locked and
    /// the change goes ahead guarded by its base check alone (logged).
    pub fn acquire(paths: &[PathBuf]) -> FileLocks {
        let Some(dir) = DIR.as_deref() else { return FileLocks::default() };
        let mut names: Vec<PathBuf> = paths.iter().map(|p| lock_name(dir, p)).collect();
        // One order for every process: by the lock files' names.
        names.sort();
        names.dedup();
        let mut locks = FileLocks::default();
        for name in names {
            match lock_one(&name) {
                Ok(file) => locks.held.push((name, file)),
                Err(e) => tracing::warn!("could not lock {}: {e}", name.display()),
            }
        }
        locks
    }

    /// Locks every one of `paths` when no other process holds any of them, without waiting; else
    /// the path found held. Without a usable lock directory nothing is locked, as in
    /// [`FileLocks::acquire`].
    pub fn try_acquire(paths: &[PathBuf]) -> Result<FileLocks, PathBuf> {
        let Some(dir) = DIR.as_deref() else { return Ok(FileLocks::default()) };
        let mut named: Vec<(PathBuf, &PathBuf)> = paths.iter().map(|p| (lock_name(dir, p), p)).collect();
        named.sort();
        named.dedup_by(|a, b| a.0 == b.0);
        let mut locks = FileLocks::default();
        for (name, path) in named {
            match try_lock_one(&name) {
                Ok(Some(file)) => locks.held.push((name, file)),
                Ok(None) => return Err(path.clone()),
                Err(e) => tracing::warn!("could not lock {}: {e}", name.display()),
            }
        }
        Ok(locks)
    }
}

impl Drop for FileLocks {
    fn drop(&mut self) {
        // Removed while still held, so a waiter that wins this file's lock next sees it gone.
        for (name, file) in self.held.drain(..) {
            let _ = fs::remove_file(&name);
            drop(file);
        }
    }
}

/// The lock file for the real path `path`.
fn lock_name(dir: &Path, path: &Path) -> PathBuf {
    let hash = blake3::hash(path.as_os_str().as_encoded_bytes());
    dir.join(format!("{}.lock", &hash.to_hex()[..32]))
}

/// Takes the lock of `name`, creating the file, and retries when the file it locked was removed
/// by its previous holder meanwhile.
fn lock_one(name: &Path) -> io::Result<File> {
    loop {
        let file = open_lock_file(name)?;
        sys::lock_file(&file, true)?;
        if sys::is_same_file(&file, name)? {
            return Ok(file);
        }
    }
}

/// Takes the lock of `name` if no one holds it: `None` when someone does.
fn try_lock_one(name: &Path) -> io::Result<Option<File>> {
    loop {
        let file = open_lock_file(name)?;
        if !sys::lock_file(&file, false)? {
            return Ok(None);
        }
        if sys::is_same_file(&file, name)? {
            return Ok(Some(file));
        }
    }
}

/// Opens (creating) the empty lock file `name`.
fn open_lock_file(name: &Path) -> io::Result<File> {
    // On Windows a lock file its holder removed stays, delete-pending, until every waiter that
    // had it open has let go of it, and opening the name meanwhile is refused: that lasts as long
    // as the waiters take to wake and see it gone, so it is waited out.
    sys::waiting_out_refusals(std::time::Duration::from_secs(5), || sys::open_private(name, false))
}

/// `/run/user/<uid>/tether/locks` when the user's runtime directory exists and is theirs, else
/// `/tmp/tether-<uid>/locks`, each level made 0700 and checked. On Windows,
/// `%LOCALAPPDATA%\tether\locks`, made with a DACL for the user alone and checked.
#[cfg(unix)]
fn lock_dir() -> io::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    let uid = rustix::process::getuid().as_raw();
    let runtime = PathBuf::from(format!("/run/user/{uid}"));
    let base = match fs::symlink_metadata(&runtime) {
        Ok(m) if m.is_dir() && m.uid() == uid => private_dir(&runtime.join("tether"))?,
        _ => private_dir(Path::new(&format!("/tmp/tether-{uid}")))?,
    };
    private_dir(&base.join("locks"))
}

#[cfg(windows)]
fn lock_dir() -> io::Result<PathBuf> {
    let base = sys::local_app_data().ok_or_else(|| io::Error::other("LOCALAPPDATA is not set"))?;
    private_dir(&private_dir(&base.join("tether"))?.join("locks"))
}

/// `dir`, made private when missing; refused when it is a link, someone else's, or open to
/// others.
fn private_dir(dir: &Path) -> io::Result<PathBuf> {
    match sys::create_private_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", dir.display()))),
    }
    let m = fs::symlink_metadata(dir)?;
    match sys::not_private(&m, dir, true) {
        Some(why) => Err(io::Error::other(format!("{}: {why}", dir.display()))),
        None => Ok(dir.to_owned()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    use rustix::fs::{flock, FlockOperation};

    use super::*;

    #[test]
    fn a_lock_excludes_another_open_of_the_same_path_until_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.txt");
        let locks = FileLocks::acquire(std::slice::from_ref(&path));
        assert_eq!(locks.held.len(), 1, "a lock directory is usable here");
        let name = locks.held[0].0.clone();
        // Another open file description (as another process has) cannot take it meanwhile.
        let other = File::open(&name).expect("open");
        assert!(flock(&other, FlockOperation::NonBlockingLockExclusive).is_err());
        drop(locks);
        assert!(!name.exists(), "the holder removes its lock file");
        let again = FileLocks::acquire(&[path]);
        assert_eq!(again.held.len(), 1);
    }

    #[test]
    fn a_waiter_whose_lock_file_was_removed_locks_the_new_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("b.txt");
        let first = FileLocks::acquire(std::slice::from_ref(&path));
        let name = first.held[0].0.clone();
        let waiter = std::thread::spawn(move || FileLocks::acquire(&[path]));
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(first);
        let second = waiter.join().expect("thread");
        // The waiter holds a lock on the file that is at the name now, not on a removed one.
        let held = second.held[0].1.metadata().expect("fstat");
        let at_name = fs::metadata(&name).expect("the lock file exists while held");
        assert_eq!((held.dev(), held.ino()), (at_name.dev(), at_name.ino()));
    }

    #[test]
    fn a_directory_open_to_others_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let open = dir.path().join("open");
        fs::create_dir(&open).expect("mkdir");
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = private_dir(&open).expect_err("refused");
        assert!(e.to_string().contains("mode 777; it must be 0700"), "{e}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).expect("symlink");
        assert!(private_dir(&link).is_err(), "a symlink is refused");
    }
}
