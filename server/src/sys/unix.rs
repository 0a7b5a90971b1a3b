//! The Unix half of [`crate::sys`]: modes, owners and `flock`, through std's Unix extensions and
//! rustix.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use rustix::fs::{flock, FlockOperation};

/// The user this process runs as, as the system names it in file owners: the effective uid.
pub fn user() -> String {
    uid().to_string()
}

/// The effective uid.
pub fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The permission bits of `m` (the mode's lower twelve bits).
pub fn mode(m: &fs::Metadata) -> u32 {
    m.mode() & 0o7777
}

/// How many names (hard links) the file `m` describes has; `path` is where `m` was read.
pub fn links(m: &fs::Metadata, _path: &Path) -> io::Result<u64> {
    Ok(m.nlink())
}

/// Opens `path` for reading.
pub fn open_read(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// The whole contents of `path`.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    fs::read(path)
}

/// Runs `step` once: Unix refuses nothing for a moment that a wait would get past.
pub fn waiting_out_refusals<T>(_wait: std::time::Duration, mut step: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    step()
}

/// The canonical, absolute form of `p`, every link resolved.
pub fn canonicalize(p: &Path) -> io::Result<std::path::PathBuf> {
    fs::canonicalize(p)
}

/// Whether the bridge endpoint (a Unix socket) `path` is there.
pub fn endpoint_exists(path: &Path) -> bool {
    path.exists()
}

/// Whether the entry at `name` (not followed) is the very file `file` has open.
pub fn is_same_file(file: &File, name: &Path) -> io::Result<bool> {
    let open = file.metadata()?;
    match fs::symlink_metadata(name) {
        Ok(now) => Ok(now.dev() == open.dev() && now.ino() == open.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Creates the directory `dir` (its parent must exist) open to the user alone: mode 0700.
/// Fails with `AlreadyExists` when something is there.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().mode(0o700).create(dir)
}

/// Creates `dir` and any missing parents, each one made open to the user alone.
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// What keeps the entry `meta` (read without following, at `path`) from being a private
/// directory or file of ours, in words that follow its name ("mode 644; it must be 0600"): a
/// symlink or another kind of entry, another owner, or rights for group or others. `None` when
/// it is one.
pub fn not_private(meta: &fs::Metadata, _path: &Path, dir: bool) -> Option<String> {
    not_private_to(meta, dir, uid())
}

/// [`not_private`] for the user `me`.
pub fn not_private_to(meta: &fs::Metadata, dir: bool, me: u32) -> Option<String> {
    if dir && !meta.file_type().is_dir() {
        return Some("not a directory".into());
    }
    if !dir && !meta.file_type().is_file() {
        return Some("not a regular file".into());
    }
    if meta.uid() != me {
        return Some(format!("owned by uid {}, not by us ({me})", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        let want = if dir { "0700" } else { "0600" };
        return Some(format!("mode {:o}; it must be {want}", meta.mode() & 0o777));
    }
    None
}

/// Whether the entry `meta` describes (read at `path`) belongs to the user this process runs as.
pub fn is_ours(meta: &fs::Metadata, _path: &Path) -> bool {
    meta.uid() == uid()
}

/// Narrows the directory `dir` of ours to the user alone (mode 0700) when others may enter it.
pub fn narrow_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    match fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() && m.uid() == uid() && m.mode() & 0o077 != 0 => {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        }
        _ => Ok(()),
    }
}

/// Opens `path` for reading and writing, creating it readable and writable by the user alone
/// (mode 0600): only when nothing is there if `new` (a symlink planted at the name is not
/// followed), else opening what is there.
pub fn open_private(path: &Path, new: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).mode(0o600);
    if new {
        o.create_new(true);
    } else {
        o.create(true).truncate(false);
    }
    o.open(path)
}

/// Makes the open file `file` readable and writable by the user alone.
pub fn make_private(file: &File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    file.set_permissions(fs::Permissions::from_mode(0o600))
}

/// Takes the exclusive lock of `file` between processes (`flock`): waiting for it when `wait`,
/// else `Ok(false)` when another holds it. The system lets go when the process dies.
pub fn lock_file(file: &File, wait: bool) -> io::Result<bool> {
    let op = if wait { FlockOperation::LockExclusive } else { FlockOperation::NonBlockingLockExclusive };
    match flock(file, op) {
        Ok(()) => Ok(true),
        Err(e) if !wait && e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Whether process `pid` exists (ours or another user's).
pub fn is_alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else { return false };
    let Some(pid) = rustix::process::Pid::from_raw(raw) else { return false };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // It exists but belongs to someone else: not ours, but not dead either.
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// Flushes a directory's entries to disk, so that a rename or a new name in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Puts the finished temp file `tmp` at `target` by `rename` (or, unless `clobber`, only where
/// nothing is yet), keeping the temp file's mode and owner, which the caller set.
pub fn persist(tmp: tempfile::NamedTempFile, target: &Path, clobber: bool) -> io::Result<()> {
    let placed = if clobber { tmp.persist(target) } else { tmp.persist_noclobber(target) };
    placed.map(drop).map_err(|e| e.error)
}
