//! The private runtime directory and the discovery files in it: one `<pid>.json` per live
//! `tether lsp`, naming its roots, socket and token.

use std::fmt;
use std::fs;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sys;

/// The environment variable naming the per-user runtime directory (XDG base directories).
#[cfg(unix)]
const XDG_RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";

/// One live `tether lsp`, as its discovery file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// The lsp's process id.
    pub pid: u32,
    /// Its workspace roots (canonical paths).
    pub roots: Vec<PathBuf>,
    /// The endpoint it listens on: a Unix socket inside the runtime directory, or on Windows a
    /// named pipe (`\\.\pipe\tether-<user SID>-<pid>`).
    pub socket: PathBuf,
    /// The profile its calls use when they name none.
    pub profile: String,
    /// The secret a client sends first: 256 random bits, hex.
    pub token: String,
    /// tether's version.
    pub version: String,
    /// When it started, in milliseconds since the Unix epoch (orders instances newest first).
    pub started: u64,
}

impl Instance {
    /// How deep the deepest of its roots that contains `root` is (in path components), or
    /// `None` when no root contains it.
    pub fn depth_serving(&self, root: &Path) -> Option<usize> {
        self.roots.iter().filter(|r| root.starts_with(r)).map(|r| r.components().count()).max()
    }
}

/// The private runtime directory a `tether lsp` publishes itself in: `$XDG_RUNTIME_DIR/tether`;
/// without that variable, `/run/user/<uid>/tether` when the system gives the user that directory,
/// else `/tmp/tether-<uid>`. Neither fallback reads the environment, so a `tether mcp` started
/// with a reduced one (an assistant that passes its servers no `XDG_RUNTIME_DIR`, or another
/// `TMPDIR`) still finds it ([`lookup_dirs`]). Created 0700; refused when it is not a directory we
/// own or others may enter it. On Windows: `%LOCALAPPDATA%\tether\run`, created with a DACL for
/// the user alone.
#[cfg(unix)]
pub fn runtime_dir() -> io::Result<PathBuf> {
    let base = std::env::var_os(XDG_RUNTIME_DIR).map(PathBuf::from).filter(|p| p.is_absolute() && p.is_dir());
    let dir = match base {
        Some(base) => base.join("tether"),
        None => fixed_dirs(sys::uid()).remove(0),
    };
    ensure_private_dir(&dir)?;
    Ok(dir)
}

/// The private runtime directory: `%LOCALAPPDATA%\tether\run`, each level created with a
/// DACL for the user alone and refused when it is not a directory we own or grants anyone else.
#[cfg(windows)]
pub fn runtime_dir() -> io::Result<PathBuf> {
    let base = sys::local_app_data().ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "LOCALAPPDATA is not set: no private runtime directory")
    })?;
    let tether = base.join("tether");
    ensure_private_dir(&tether)?;
    let dir = tether.join("run");
    ensure_private_dir(&dir)?;
    Ok(dir)
}

/// The runtime directories that do not depend on the environment, the one a `tether lsp` without
/// `XDG_RUNTIME_DIR` uses first: `/run/user/<uid>/tether` when `/run/user/<uid>` is our
/// directory, then `/tmp/tether-<uid>`.
#[cfg(unix)]
fn fixed_dirs(uid: u32) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    let runtime = PathBuf::from(format!("/run/user/{uid}"));
    let ours = fs::symlink_metadata(&runtime).is_ok_and(|m| m.is_dir() && m.uid() == uid);
    let mut dirs = Vec::new();
    if ours {
        dirs.push(runtime.join("tether"));
    }
    dirs.push(PathBuf::from(format!("/tmp/tether-{uid}")));
    dirs
}

/// Where a `tether mcp` looks for instances: the [`runtime_dir`] alone when `XDG_RUNTIME_DIR` is
/// set; without it, every directory a `tether lsp` may have used (the fixed ones, and
/// `tether-<uid>` in this process's temp directory, where earlier versions published), those that
/// exist and are private. On Windows, the one runtime directory.
#[cfg(unix)]
pub fn lookup_dirs() -> Vec<PathBuf> {
    let uid = sys::uid();
    if std::env::var_os(XDG_RUNTIME_DIR).is_some_and(|v| Path::new(&v).is_absolute()) {
        return runtime_dir().into_iter().collect();
    }
    let mut dirs = fixed_dirs(uid);
    dirs.push(std::env::temp_dir().join(format!("tether-{uid}")));
    dirs.dedup();
    dirs.into_iter().filter(|d| d.is_dir() && ensure_private_dir(d).is_ok()).collect()
}

/// Where a `tether mcp` looks for instances: the one [`runtime_dir`].
#[cfg(windows)]
pub fn lookup_dirs() -> Vec<PathBuf> {
    runtime_dir().into_iter().collect()
}

/// Creates `dir` private to the user if missing (mode 0700, or on Windows a DACL for the user
/// alone), then checks it: a real directory (not a link), ours, open to no one else.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    match sys::create_private_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = fs::symlink_metadata(dir)?;
    match sys::not_private(&meta, dir, true) {
        Some(why) => Err(refuse(dir, &why)),
        None => Ok(()),
    }
}

fn refuse(dir: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{}: {why}; tether will not use it as its private runtime directory", dir.display()),
    )
}

/// The discovery file of process `pid`.
pub fn file_of(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{pid}.json"))
}

/// The socket of process `pid`: `<pid>.sock` in the runtime directory; on Windows the named
/// pipe `\\.\pipe\tether-<user SID>-<pid>` (pipes live in their own namespace, and the user's
/// SID in the name keeps users apart).
pub fn socket_of(dir: &Path, pid: u32) -> PathBuf {
    if cfg!(windows) {
        PathBuf::from(format!(r"\\.\pipe\tether-{}-{pid}", sys::user()))
    } else {
        dir.join(format!("{pid}.sock"))
    }
}

/// Writes `instance`'s discovery file atomically (a 0600 temp file renamed over it).
pub fn write(dir: &Path, instance: &Instance) -> io::Result<()> {
    let path = file_of(dir, instance.pid);
    let tmp = dir.join(format!(".{}.json.tmp", instance.pid));
    let json = serde_json::to_vec(instance).map_err(io::Error::other)?;
    let _ = fs::remove_file(&tmp);
    let mut f = sys::open_private(&tmp, true)?;
    f.write_all(&json)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, &path)
}

/// Reads one discovery file, checking it is a regular file we own that no one else may read.
pub fn read(path: &Path) -> io::Result<Instance> {
    load(path).map_err(|skipped| {
        let kind = match skipped {
            Skipped::NotPrivate(_) => io::ErrorKind::PermissionDenied,
            Skipped::Invalid(_) => io::ErrorKind::InvalidData,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, format!("{}: {skipped}", path.display()))
    })
}

/// [`read`], failing with why the file cannot be used.
fn load(path: &Path) -> Result<Instance, Skipped> {
    // The directory is private, so nothing can swap the file between this check and the read.
    let meta = fs::symlink_metadata(path).map_err(|e| Skipped::Unreadable(e.to_string()))?;
    if let Some(why) = sys::not_private(&meta, path, false) {
        return Err(Skipped::NotPrivate(why));
    }
    let mut s = String::new();
    fs::File::open(path).and_then(|mut f| f.read_to_string(&mut s)).map_err(|e| Skipped::Unreadable(e.to_string()))?;
    serde_json::from_str(&s).map_err(|e| Skipped::Invalid(e.to_string()))
}

/// Whether process `pid` exists.
pub fn is_alive(pid: u32) -> bool {
    sys::is_alive(pid)
}

/// Why [`scan`] passed over a discovery file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Skipped {
    /// It could not be read (the I/O error's message).
    Unreadable(String),
    /// It is not a regular file we own that no one else may read (what is wrong with it).
    NotPrivate(String),
    /// Its contents are not a discovery file (the parser's message).
    Invalid(String),
    /// It names another pid than the one in its file name.
    OtherPid(u32),
    /// Its process is gone: a stale file, which was removed with its socket (`removed` says
    /// whether the file could be).
    Dead {
        /// Whether the file was removed.
        removed: bool,
    },
    /// Its socket is not the one this directory holds for its pid.
    SocketElsewhere(PathBuf),
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skipped::Unreadable(e) => write!(f, "cannot be read: {e}"),
            Skipped::NotPrivate(why) => write!(f, "not a private file: {why}"),
            Skipped::Invalid(e) => write!(f, "not a discovery file: {e}"),
            Skipped::OtherPid(pid) => write!(f, "names pid {pid}, not the pid in its name"),
            Skipped::Dead { removed: true } => write!(f, "the process is gone (a stale file); removed"),
            Skipped::Dead { removed: false } => {
                write!(f, "the process is gone (a stale file), and the file could not be removed")
            }
            Skipped::SocketElsewhere(socket) => {
                write!(f, "names the socket {}, not its own in the runtime directory", socket.display())
            }
        }
    }
}

/// A discovery file that [`scan`] passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The file.
    pub file: PathBuf,
    /// Why it was not used.
    pub why: Skipped,
}

/// What [`scan`] found in the runtime directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The live instances, newest first.
    pub live: Vec<Instance>,
    /// The discovery files passed over, by file name.
    pub ignored: Vec<Ignored>,
}

/// The live instances in `dir`, newest first. Files of dead processes are removed with their
/// sockets; unreadable or foreign files are skipped.
pub fn list(dir: &Path) -> Vec<Instance> {
    scan(dir).live
}

/// [`list`], also saying which discovery files it passed over and why (for `tether status`).
pub fn scan(dir: &Path) -> Scan {
    let mut found = Scan::default();
    let Ok(entries) = fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let why = match load(&path) {
            Ok(instance) if instance.pid != pid => {
                tracing::warn!(path = %path.display(), "discovery file names another pid; ignored");
                Skipped::OtherPid(instance.pid)
            }
            Ok(instance) if !is_alive(pid) => {
                tracing::debug!(pid, "removing the discovery file of a dead tether lsp");
                let removed = fs::remove_file(&path).is_ok();
                if instance.socket == socket_of(dir, pid) {
                    let _ = fs::remove_file(&instance.socket);
                }
                Skipped::Dead { removed }
            }
            // The socket must be the one this directory would hold for that pid: a file that
            // points elsewhere is not followed.
            Ok(instance) if instance.socket != socket_of(dir, pid) => {
                tracing::warn!(path = %path.display(), "discovery file names a socket outside the runtime directory; ignored");
                Skipped::SocketElsewhere(instance.socket)
            }
            Ok(instance) => {
                found.live.push(instance);
                continue;
            }
            Err(why) => {
                tracing::debug!(path = %path.display(), error = %why, "discovery file ignored");
                why
            }
        };
        found.ignored.push(Ignored { file: path, why });
    }
    found.live.sort_by(|a, b| b.started.cmp(&a.started).then(b.pid.cmp(&a.pid)));
    found.ignored.sort_by(|a, b| a.file.cmp(&b.file));
    found
}

/// The instance that should serve `root`: the one with the deepest root containing it, the
/// newest among equals. `only` restricts the choice to one pid.
pub fn pick<'a>(instances: &'a [Instance], root: &Path, only: Option<u32>) -> Option<&'a Instance> {
    instances
        .iter()
        .filter(|i| only.is_none_or(|pid| i.pid == pid))
        .filter_map(|i| i.depth_serving(root).map(|d| (d, i)))
        // `instances` is newest first and `max_by_key` keeps the last maximum: reverse so the
        // newest wins a tie.
        .rev()
        .max_by_key(|(d, _)| *d)
        .map(|(_, i)| i)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};

    use super::*;

    fn instance(pid: u32, roots: &[&str], started: u64, dir: &Path) -> Instance {
        Instance {
            pid,
            roots: roots.iter().map(PathBuf::from).collect(),
            socket: socket_of(dir, pid),
            profile: "standard".into(),
            token: "00".repeat(32),
            version: "0".into(),
            started,
        }
    }

    fn uid() -> u32 {
        rustix::process::geteuid().as_raw()
    }

    #[test]
    fn the_deepest_root_wins_then_the_newest() {
        let d = Path::new("/run");
        let all = vec![
            instance(4, &["/w"], 40, d),
            instance(3, &["/w/app"], 30, d),
            instance(2, &["/w/app", "/x"], 20, d),
            instance(1, &["/w/app/sub"], 10, d),
        ];
        let pid = |root: &str, only| pick(&all, Path::new(root), only).map(|i| i.pid);
        assert_eq!(pid("/w/app/src", None), Some(3));
        assert_eq!(pid("/w/app/sub/deeper", None), Some(1));
        assert_eq!(pid("/w/other", None), Some(4));
        assert_eq!(pid("/x/y", None), Some(2));
        assert_eq!(pid("/w/app_evil", None), Some(4), "roots match whole components");
        assert_eq!(pid("/nowhere", None), None);
        assert_eq!(pid("/w/app/src", Some(2)), Some(2));
        assert_eq!(pid("/nowhere", Some(2)), None);
    }

    #[test]
    fn the_directory_is_created_private_and_refused_when_open_to_others() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tether");
        ensure_private_dir(&dir).expect("created");
        assert_eq!(fs::metadata(&dir).expect("meta").mode() & 0o777, 0o700);
        // Existing and private: accepted again.
        ensure_private_dir(&dir).expect("reused");

        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        let e = ensure_private_dir(&dir).expect_err("group and others may enter");
        assert!(e.to_string().contains("mode 755"), "{e}");

        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod");
        let meta = fs::symlink_metadata(&dir).expect("meta");
        let why = sys::not_private_to(&meta, true, uid() + 1).expect("another owner");
        assert!(why.contains("owned by"), "{why}");

        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        let e = ensure_private_dir(&link).expect_err("a symlink");
        assert!(e.to_string().contains("not a directory"), "{e}");
    }

    #[test]
    fn discovery_files_are_private_and_round_trip() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let me = instance(std::process::id(), &["/w"], 1, tmp.path());
        write(tmp.path(), &me).expect("write");
        let path = file_of(tmp.path(), me.pid);
        assert_eq!(fs::metadata(&path).expect("meta").mode() & 0o777, 0o600);
        assert_eq!(read(&path).expect("read"), me);
        assert_eq!(list(tmp.path()), vec![me.clone()]);

        // A file others may read is not trusted.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        assert!(read(&path).is_err());
        assert!(list(tmp.path()).is_empty());
    }

    #[test]
    fn stale_files_are_ignored_and_removed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // A child that has exited and been reaped: its pid is dead.
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let dead = child.id();
        child.wait().expect("wait");
        let stale = instance(dead, &["/w"], 2, tmp.path());
        write(tmp.path(), &stale).expect("write");
        fs::write(&stale.socket, "").expect("socket stand-in");
        let live = instance(std::process::id(), &["/w"], 1, tmp.path());
        write(tmp.path(), &live).expect("write");

        assert_eq!(list(tmp.path()), vec![live]);
        assert!(!file_of(tmp.path(), dead).exists(), "the stale file is removed");
        assert!(!stale.socket.exists(), "with its socket");
    }

    #[test]
    fn scan_says_which_files_it_passed_over_and_why() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let mut child = std::process::Command::new("true").spawn().expect("spawn true");
        let dead = child.id();
        child.wait().expect("wait");
        let me = std::process::id();
        let parent = std::os::unix::process::parent_id();

        let live = instance(parent, &["/w"], 1, dir);
        write(dir, &live).expect("write");
        let stale = instance(dead, &["/w"], 2, dir);
        write(dir, &stale).expect("write");
        let mut elsewhere = instance(me, &["/w"], 3, dir);
        elsewhere.socket = dir.join("other.sock");
        write(dir, &elsewhere).expect("write");
        // A file named for one pid that names another.
        let other = instance(me, &["/w"], 4, dir);
        let json = serde_json::to_vec(&other).expect("json");
        let private = |path: &Path, text: &[u8], mode: u32| {
            fs::write(path, text).expect("write");
            fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
        };
        private(&file_of(dir, 11), &json, 0o600);
        private(&file_of(dir, 12), &json, 0o644);
        private(&file_of(dir, 13), b"{", 0o600);
        fs::create_dir(file_of(dir, 14)).expect("mkdir");
        // Not discovery files at all: never reported.
        private(&dir.join(".15.json.tmp"), b"{", 0o600);
        private(&dir.join("notes.json"), b"{", 0o600);

        let found = scan(dir);
        assert_eq!(found.live, vec![live]);
        let ignored: Vec<_> = found
            .ignored
            .iter()
            .map(|i| (i.file.strip_prefix(dir).expect("in dir").display().to_string(), i.why.to_string()))
            .collect();
        let mut want = vec![
            ("11.json".to_owned(), format!("names pid {me}, not the pid in its name")),
            ("12.json".to_owned(), "not a private file: mode 644; it must be 0600".to_owned()),
            ("13.json".to_owned(), "not a discovery file: EOF while parsing an object at line 1 column 1".to_owned()),
            ("14.json".to_owned(), "not a private file: not a regular file".to_owned()),
            (format!("{dead}.json"), "the process is gone (a stale file); removed".to_owned()),
            (
                format!("{me}.json"),
                format!("names the socket {}, not its own in the runtime directory", elsewhere.socket.display()),
            ),
        ];
        want.sort();
        assert_eq!(ignored, want);
        assert!(!file_of(dir, dead).exists(), "the stale file is removed as before");
    }

    #[test]
    fn a_file_pointing_outside_the_directory_is_ignored() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut me = instance(std::process::id(), &["/w"], 1, tmp.path());
        me.socket = PathBuf::from("/tmp/elsewhere.sock");
        write(tmp.path(), &me).expect("write");
        assert!(list(tmp.path()).is_empty());
    }
}
