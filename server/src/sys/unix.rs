//! The Unix half of [`crate::sys`]: modes, owners and `flock`, through std's Unix extensions and
//! rustix.

use std::ffi::OsStr;
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

/// The modification times of the files a walk lists, each looked up by name in its directory,
/// which stays open while consecutive files share it: the kernel resolves one name per file
/// instead of the whole path again (in a glob over a million files, that path walk was half of
/// each `stat`). One per walker thread.
#[derive(Default)]
pub struct ModifiedTimes {
    dir: Option<(std::path::PathBuf, rustix::fd::OwnedFd)>,
}

impl ModifiedTimes {
    /// The modification time of the file `entry` names (of a symlink itself, never its target),
    /// `None` when it cannot be read (the file went away since the walk listed it).
    pub fn of(&mut self, entry: &ignore::DirEntry) -> Option<std::time::SystemTime> {
        use std::os::unix::ffi::OsStrExt as _;
        let bytes = entry.path().as_os_str().as_bytes();
        // Split at the last separator by bytes: the walk's paths have no trailing one.
        let split = memchr::memrchr(b'/', bytes).filter(|&i| i > 0 && i + 1 < bytes.len());
        let Some(at) = split else {
            return entry.metadata().ok()?.modified().ok();
        };
        let (parent, name) = (Path::new(OsStr::from_bytes(&bytes[..at])), OsStr::from_bytes(&bytes[at + 1..]));
        let cached = self.dir.as_ref().is_some_and(|(dir, _)| dir.as_os_str().as_bytes() == &bytes[..at]);
        if !cached {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let Ok(fd) = rustix::fs::open(parent, flags, Mode::empty()) else {
                self.dir = None;
                return entry.metadata().ok()?.modified().ok();
            };
            self.dir = Some((parent.to_path_buf(), fd));
        }
        let (_, fd) = self.dir.as_ref()?;
        let stat = rustix::fs::statat(fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        // Seconds may be before 1970; the nanoseconds always count forward from them.
        let secs = std::time::Duration::from_secs(stat.st_mtime.unsigned_abs());
        let whole = if stat.st_mtime >= 0 {
            std::time::UNIX_EPOCH.checked_add(secs)
        } else {
            std::time::UNIX_EPOCH.checked_sub(secs)
        };
        #[allow(clippy::useless_conversion)] // u64 on Linux, a signed long on other systems
        let nanos = u64::try_from(stat.st_mtime_nsec).ok()?;
        whole?.checked_add(std::time::Duration::from_nanos(nanos))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::ModifiedTimes;

    /// The times read by name in a held directory are the ones a whole-path `lstat` reads, to the
    /// nanosecond and before 1970 too, as the walk moves between directories and back; a link's
    /// own time, never its target's; and none for a file gone since it was listed.
    #[test]
    fn modified_times_by_name_agree_with_lstat() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for sub in ["a", "b", "a/c"] {
            std::fs::create_dir(root.join(sub)).expect("mkdir");
        }
        let times = [
            ("a/one", UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789)),
            ("a/two", UNIX_EPOCH + Duration::new(1_700_000_001, 1)),
            ("b/three", UNIX_EPOCH - Duration::new(86_400, 500_000_000)),
            ("a/c/four", UNIX_EPOCH + Duration::new(42, 0)),
            ("top", UNIX_EPOCH + Duration::new(1_800_000_000, 999_999_999)),
        ];
        for (name, t) in times {
            let file = std::fs::File::create(root.join(name)).expect("create");
            file.set_modified(t).expect("set mtime");
        }
        std::os::unix::fs::symlink(root.join("a/one"), root.join("b/link")).expect("symlink");
        let mut entries: Vec<ignore::DirEntry> = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .build()
            .map(|e| e.expect("entry"))
            .filter(|e| !e.file_type().is_some_and(|t| t.is_dir()))
            .collect();
        // Back to a directory after another one: the held directory changes twice.
        entries.sort_by_key(|e| e.file_name().to_owned());
        assert_eq!(entries.len(), 6, "{entries:?}");
        let mut by_name = ModifiedTimes::default();
        for entry in &entries {
            let lstat = std::fs::symlink_metadata(entry.path()).and_then(|m| m.modified()).expect("lstat");
            assert_eq!(by_name.of(entry), Some(lstat), "{}", entry.path().display());
        }
        let link = entries.iter().find(|e| e.file_name() == "link").expect("link");
        assert_ne!(by_name.of(link), Some(times[0].1), "a link's own time, not its target's");
        let (named, _) = times.iter().find(|(n, _)| *n == "b/three").expect("b/three");
        let gone = entries.iter().find(|e| e.path().ends_with(named)).expect("b/three listed");
        assert_eq!(by_name.of(gone), Some(times[2].1));
        std::fs::remove_file(gone.path()).expect("rm");
        assert_eq!(by_name.of(gone), None);
    }
}
