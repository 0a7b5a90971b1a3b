//! Workspace roots and sandboxed path resolution.
//!
//! Every path a user (or a model) gives goes through [`Workspace::resolve`], which returns a
//! [`SandboxPath`] inside one of the roots or fails with `path_escape`. Resolution walks the path
//! one component at a time from a root's real path, resolving symlinks as the OS would, and
//! refuses the moment the walk leaves every root; a symlink (dangling or not) is followed to where
//! it points and judged there. Errors name the path as the user gave it, never the real target.

mod deny;
mod walk;

pub use deny::{Deny, SECRETS};

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

pub use walk::{WalkOptions, SKIPPED_DIRS, TEMP_PREFIX, TEMP_SUFFIX};

use crate::error::{Error, ErrorKind, Result};

/// The most symlinks followed while resolving one path, as Linux's `MAXSYMLINKS`.
const MAX_SYMLINK_HOPS: usize = 40;

/// The set of directories tether may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical (symlink-free, absolute) root directories; the first is the default for
    /// relative paths.
    roots: Vec<PathBuf>,
    /// The paths inside the roots no tool may touch.
    deny: std::sync::Arc<Deny>,
}

/// A path that resolution proved to be inside the workspace roots.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SandboxPath {
    /// The path as the user gave it, for messages.
    given: String,
    /// The path with every parent resolved but its last component kept as named: a symlink
    /// inside the roots is the link itself here (what `delete` and `move` act on).
    path: PathBuf,
    /// The fully resolved path: what reads and writes act on.
    real: PathBuf,
    /// Index of the root containing `real`.
    root: usize,
}

impl SandboxPath {
    /// The path as the user gave it.
    pub fn given(&self) -> &str {
        &self.given
    }

    /// The absolute path with its parents resolved; a final symlink is not followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The absolute, fully resolved path.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The index of the root containing this path.
    pub fn root_index(&self) -> usize {
        self.root
    }
}

impl fmt::Display for SandboxPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.given)
    }
}

impl Workspace {
    /// A workspace over `roots`; each must be an existing directory. Roots are canonicalized, and
    /// a root inside another is kept (it only matters for which root relative paths start from).
    pub fn new<P: AsRef<Path>>(roots: impl IntoIterator<Item = P>) -> Result<Workspace> {
        let mut out = Vec::new();
        for root in roots {
            let root = root.as_ref();
            let shown = root.display().to_string();
            let real = crate::sys::canonicalize(root).map_err(|e| Error::io(&e, &shown))?;
            if !real.is_dir() {
                return Err(Error::new(ErrorKind::NotADirectory, format!("root {shown} is not a directory")));
            }
            if !out.contains(&real) {
                out.push(real);
            }
        }
        if out.is_empty() {
            return Err(Error::invalid("at least one workspace root is required"));
        }
        Ok(Workspace { roots: out, deny: std::sync::Arc::default() })
    }

    /// This workspace with `deny` as its deny list (the default one hides nothing).
    #[must_use]
    pub fn with_deny(mut self, deny: Deny) -> Workspace {
        self.deny = std::sync::Arc::new(deny);
        self
    }

    /// A workspace over other `roots` with this one's deny list.
    pub fn with_roots<P: AsRef<Path>>(&self, roots: impl IntoIterator<Item = P>) -> Result<Workspace> {
        let mut ws = Workspace::new(roots)?;
        ws.deny = self.deny.clone();
        Ok(ws)
    }

    /// The deny list.
    pub fn deny(&self) -> &Deny {
        &self.deny
    }

    /// The deny pattern that hides the real path `p`, if any.
    pub fn denied(&self, p: &Path) -> Option<&str> {
        let root = self.root_of(p)?;
        self.deny.denies(below(p, &self.roots[root])?)
    }

    /// The canonical roots, the default one first.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether the real (canonical) path `p` is inside a root; returns that root's index.
    pub fn root_of(&self, p: &Path) -> Option<usize> {
        // The deepest root wins, so that nested roots report the closest one. Two roots that
        // both hold `p` hold one another, so the deeper is the longer path. Compared as bytes
        // (`below`): a glob or grep asks this of every path it prints.
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, r)| below(p, r).is_some())
            .max_by_key(|(_, r)| r.as_os_str().len())
            .map(|(i, _)| i)
    }

    /// The path of `p` (a real path inside the roots) relative to the root containing it, with
    /// `/` separators; `"."` for a root itself.
    pub fn relative(&self, p: &Path) -> String {
        let rel = self.root_of(p).and_then(|i| below(p, &self.roots[i])).unwrap_or(p);
        if rel.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            rel.to_string_lossy().into_owned()
        }
    }

    /// Resolves a user path (absolute, or relative to the first root) to a path inside the roots.
    pub fn resolve(&self, given: &str) -> Result<SandboxPath> {
        let escape = || {
            Error::new(ErrorKind::PathEscape, format!("{given}: path is outside the workspace roots")).with_path(given)
        };
        if given.contains('\0') {
            return Err(Error::invalid(format!("{}: path contains a NUL byte", given.escape_debug())).with_path(given));
        }
        let input = Path::new(given);
        if let Some(why) = windows_path_problem(given) {
            return Err(Error::invalid(format!("{given}: {why}")).with_path(given));
        }
        if input.components().next().is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('~')) {
            return Err(Error::invalid(format!(
                "{given}: `~` is not expanded; give a path inside the workspace, absolute or relative to {}",
                self.roots[0].display()
            ))
            .with_path(given));
        }
        let (start, rest) = if input.is_absolute() {
            self.split_root(input).ok_or_else(escape)?
        } else {
            (self.roots[0].clone(), input.to_path_buf())
        };
        let mut hops = 0;
        let (path, real) = self.walk(start, &rest, &mut hops).map_err(|e| match e {
            WalkError::Escape => escape(),
            WalkError::Io(e) => Error::io(&e, given),
        })?;
        // Windows opens a name in any case, and by its 8.3 short name: the real path is the
        // one the file system holds, so that an open buffer, the deny list and the journal all
        // see one name for one file.
        #[cfg(windows)]
        let real = on_disk_name(&real);
        let root = self.root_of(&real).ok_or_else(escape)?;
        if let Some(pattern) = self.denied(&path).or_else(|| self.denied(&real)) {
            return Err(Error::new(
                ErrorKind::PathEscape,
                format!("{given}: hidden from tools by tether's deny list (pattern `{pattern}`): it may hold secrets"),
            )
            .with_path(given));
        }
        Ok(SandboxPath { given: given.to_owned(), path, real, root })
    }

    /// Splits an absolute path into the root it names and the components after it. Both a root's
    /// real path and any path whose canonical form is that root count, so that `/tmp/x` works
    /// when the root is `/private/tmp`.
    fn split_root(&self, input: &Path) -> Option<(PathBuf, PathBuf)> {
        let best = self
            .roots
            .iter()
            .filter_map(|r| input.strip_prefix(r).ok().map(|rest| (r, rest)))
            .max_by_key(|(r, _)| r.components().count());
        if let Some((r, rest)) = best {
            return Some((r.clone(), rest.to_path_buf()));
        }
        // Try prefixes of the input that canonicalize to a root, shortest first, without looking
        // at anything below the point where the input and every root part ways.
        let mut prefix = PathBuf::new();
        let mut comps = input.components();
        for c in comps.by_ref() {
            prefix.push(c);
            if matches!(c, Component::ParentDir | Component::CurDir) {
                return None;
            }
            if let Ok(real) = crate::sys::canonicalize(&prefix) {
                if let Some(r) = self.roots.iter().find(|r| **r == real) {
                    return Some((r.clone(), comps.as_path().to_path_buf()));
                }
            }
        }
        None
    }

    /// Walks `rest` from the real directory `start`, one component at a time. Returns the path
    /// with parents resolved and the fully resolved path.
    fn walk(&self, start: PathBuf, rest: &Path, hops: &mut usize) -> Result<(PathBuf, PathBuf), WalkError> {
        let mut cur = start;
        // Once a component does not exist, nothing below it can be a symlink: the rest of the
        // path is joined lexically.
        let mut missing = false;
        let mut last_link: Option<PathBuf> = None;
        for comp in rest.components() {
            last_link = None;
            match comp {
                Component::CurDir => continue,
                Component::ParentDir => {
                    cur.pop();
                    // Climbing out of the missing part lands on a real directory again, whose
                    // children must be checked for symlinks once more.
                    missing = missing && !cur.exists();
                }
                Component::Normal(name) => {
                    let next = cur.join(name);
                    if missing {
                        cur = next;
                    } else {
                        match self.step(&next, hops)? {
                            Step::Dir(real) => cur = real,
                            Step::Link(real) => {
                                last_link = Some(next);
                                cur = real;
                            }
                            Step::Missing => {
                                missing = true;
                                cur = next;
                            }
                        }
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(WalkError::Escape),
            }
            if self.root_of(&cur).is_none() {
                return Err(WalkError::Escape);
            }
        }
        check_length(&cur)?;
        Ok((last_link.unwrap_or_else(|| cur.clone()), cur))
    }

    /// Looks at one path component: an ordinary entry, a symlink (followed and resolved), or
    /// nothing.
    fn step(&self, next: &Path, hops: &mut usize) -> Result<Step, WalkError> {
        let meta = match next.symlink_metadata() {
            Ok(m) => m,
            Err(e) if is_missing(&e) => return Ok(Step::Missing),
            Err(e) => return Err(WalkError::Io(e)),
        };
        if !meta.file_type().is_symlink() {
            return Ok(Step::Dir(next.to_path_buf()));
        }
        *hops += 1;
        if *hops > MAX_SYMLINK_HOPS {
            return Err(WalkError::Io(io::Error::other("too many levels of symbolic links")));
        }
        // A link whose target exists resolves exactly as the OS resolves it.
        match crate::sys::canonicalize(next) {
            Ok(real) if self.root_of(&real).is_some() => return Ok(Step::Link(real)),
            Ok(_) => return Err(WalkError::Escape),
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(WalkError::Io(e)),
            Err(_) => {}
        }
        // A dangling link is judged by where its target would be created: the target, joined to
        // the link's (real) parent, must name a root or a place below one, and is walked from
        // there like user input.
        let target = std::fs::read_link(next).map_err(WalkError::Io)?;
        let joined = next.parent().unwrap_or(Path::new("/")).join(&target);
        let (start, rest) = self.split_root(&lexical_normalize(&joined)).ok_or(WalkError::Escape)?;
        let (_, real) = self.walk(start, &rest, hops)?;
        Ok(Step::Link(real))
    }
}

enum Step {
    Dir(PathBuf),
    Link(PathBuf),
    Missing,
}

enum WalkError {
    Escape,
    Io(io::Error),
}

fn is_missing(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

/// What makes `given` a path Windows would not treat as a plain file name, on Windows: a device
/// or verbatim form (`\\.\`, `\\?\`), a component that names a device (`CON`, `nul.txt`,
/// `COM1`...), one ending in a dot or a space (which Windows strips, so `a.txt.` would alias
/// `a.txt`), or a `:` after the drive (an alternate data stream, `a.txt:secret`). `None`
/// elsewhere, where these are ordinary names.
fn windows_path_problem(given: &str) -> Option<String> {
    if cfg!(windows) {
        windows_name_rules(given)
    } else {
        None
    }
}

/// [`windows_path_problem`]'s rules, on any system (so that they are tested everywhere).
fn windows_name_rules(given: &str) -> Option<String> {
    const DEVICES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    let normalized = given.replace('/', "\\");
    if normalized.starts_with("\\\\.\\") || normalized.starts_with("\\\\?\\") || normalized.starts_with("\\??\\") {
        return Some("device and verbatim paths (\\\\.\\, \\\\?\\) are not accepted; give a plain path".into());
    }
    // A drive prefix (`C:`) is the one place a colon may be.
    let bytes = normalized.as_bytes();
    let body = if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        &normalized[2..]
    } else {
        &normalized
    };
    for name in body.split('\\').filter(|c| !c.is_empty() && *c != "." && *c != "..") {
        if name.contains(':') {
            return Some(format!(
                "`{name}` names an alternate data stream (a `:` in a file name); tools read and write whole files only"
            ));
        }
        if name.ends_with('.') || name.ends_with(' ') {
            return Some(format!(
                "`{name}` ends with a dot or a space, which Windows drops: it would name another file"
            ));
        }
        let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ').to_ascii_uppercase();
        let numbered = |prefix: &str| {
            stem.strip_prefix(prefix).is_some_and(|n| n.len() == 1 && matches!(n.as_bytes()[0], b'1'..=b'9'))
        };
        if DEVICES.contains(&stem.as_str()) || numbered("COM") || numbered("LPT") {
            return Some(format!("`{name}` is a reserved device name on Windows"));
        }
    }
    None
}

/// The name the file system holds for `real`: its deepest existing part canonicalized (case,
/// short names, links and junctions resolved), with the missing rest joined as given.
#[cfg(windows)]
fn on_disk_name(real: &Path) -> PathBuf {
    let mut existing = real;
    let mut rest = Vec::new();
    loop {
        if let Ok(found) = crate::sys::canonicalize(existing) {
            let mut out = found;
            out.extend(rest.iter().rev());
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return real.to_owned(),
        }
    }
}

/// Refuses paths the OS could not use, with a clean error instead of a later failure.
fn check_length(p: &Path) -> Result<(), WalkError> {
    const PATH_MAX: usize = 4096;
    const NAME_MAX: usize = 255;
    let too_long = p.as_os_str().len() >= PATH_MAX
        || p.components().any(|c| matches!(c, Component::Normal(n) if n.len() > NAME_MAX));
    if too_long {
        return Err(WalkError::Io(io::Error::new(io::ErrorKind::InvalidFilename, "path is too long")));
    }
    Ok(())
}

/// Removes `.` and resolves `..` lexically. Only used on a symlink's target joined to the link's
/// (already real) parent, where the OS would do the same for the leading part; the walk that
/// follows re-checks every component that exists.
fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` relative to `base`, for a path a walk built from `base` (or any path that starts with
/// its bytes): a byte comparison, where [`Path::strip_prefix`] compares component by component
/// (a fifth of a glob's time over a million files). Other paths go the slow way.
#[cfg(unix)]
pub fn below<'a>(path: &'a Path, base: &Path) -> Option<&'a Path> {
    use std::os::unix::ffi::OsStrExt as _;
    let (bytes, prefix) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    let fast = bytes.strip_prefix(prefix).and_then(|rest| match rest {
        [] => Some(rest),
        [b'/', rel @ ..] if !rel.starts_with(b"/") => Some(rel),
        _ if prefix.ends_with(b"/") && !rest.starts_with(b"/") => Some(rest),
        _ => None,
    });
    // `.` components and doubled or trailing slashes are for the slow way to drop.
    let plain = |rel: &[u8]| !rel.ends_with(b"/") && !rel.split(|&b| b == b'/').any(|c| c == b"." || c.is_empty());
    match fast {
        Some(rel) if rel.is_empty() || plain(rel) => Some(Path::new(OsStr::from_bytes(rel))),
        _ => path.strip_prefix(base).ok(),
    }
}

/// `path` relative to `base`. Windows paths have two separators and prefixes, so the
/// comparison is always by component there.
#[cfg(windows)]
pub fn below<'a>(path: &'a Path, base: &Path) -> Option<&'a Path> {
    path.strip_prefix(base).ok()
}

/// The order of [`Path`]'s own `Ord` (component by component) for the paths a walk builds (no
/// `.` components, doubled or trailing separators), at the cost of one byte comparison: a
/// separator sorts below every other byte, as the end of a component does. A glob sorts every
/// match it found this way.
#[cfg(unix)]
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    use std::os::unix::ffi::OsStrExt as _;
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let key = |c: u8| if c == b'/' { 0 } else { c };
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => key(a[i]).cmp(&key(b[i])),
        None => a.len().cmp(&b.len()),
    }
}

/// The order of [`Path`]'s own `Ord`. Windows paths have two separators and prefixes, so the
/// comparison is always by component there.
#[cfg(windows)]
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    a.cmp(b)
}

/// The file name of `p` for display, or the whole path when it has none.
pub fn file_name(p: &Path) -> &OsStr {
    p.file_name().unwrap_or(p.as_os_str())
}

#[cfg(all(test, unix))]
mod tests;
