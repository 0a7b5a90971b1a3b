//! The Windows half of [`crate::sys`]: the user's SID, security descriptors that grant the user
//! alone, file identities and `LockFileEx`, through windows-sys.
//!
//! Every function here is a thin wrapper over one or two system calls, so the unsafe code of the
//! Windows build lives in this file and its `dacl` part alone; each `unsafe` block relies only on the pointers it
//! passes being valid for the call (buffers sized as the API asked, handles owned here).
#![allow(unsafe_code)]

use std::ffi::{c_void, OsStr};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStrExt as _;
use std::os::windows::fs::OpenOptionsExt as _;
use std::os::windows::io::{AsRawHandle as _, FromRawHandle as _, OwnedHandle};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{
    LocalFree, ERROR_ACCESS_DENIED, ERROR_LOCK_VIOLATION, GENERIC_READ, GENERIC_WRITE, HANDLE, HLOCAL,
    INVALID_HANDLE_VALUE, STILL_ACTIVE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, GetNamedSecurityInfoW,
    SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, TokenUser, ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, DACL_SECURITY_INFORMATION,
    OWNER_SECURITY_INFORMATION, PSID, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateDirectoryW, CreateFileW, GetFileInformationByHandle, LockFileEx, MoveFileExW, SetFileAttributesW,
    BY_HANDLE_FILE_INFORMATION, CREATE_NEW, FILE_ATTRIBUTE_ARCHIVE, FILE_ATTRIBUTE_HIDDEN, FILE_ATTRIBUTE_NORMAL,
    FILE_ATTRIBUTE_NOT_CONTENT_INDEXED, FILE_ATTRIBUTE_READONLY, FILE_ATTRIBUTE_SYSTEM, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, MOVEFILE_WRITE_THROUGH, OPEN_ALWAYS,
};
use windows_sys::Win32::System::Pipes::{GetNamedPipeClientProcessId, GetNamedPipeServerProcessId};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

#[path = "windows_dacl.rs"]
mod dacl;
pub use dacl::{own_dacl, set_own_dacl, OwnDacl};

/// The well-known SID of the local system account, which every private object also grants.
const SYSTEM_SID: &str = "S-1-5-18";
/// The well-known SID of the local Administrators group: Windows gives it full control of
/// everything under a user's profile, so its entry does not make a directory public.
const ADMINISTRATORS_SID: &str = "S-1-5-32-544";

/// The user this process runs as: the SID of its token's user (`S-1-5-21-...`).
pub fn user() -> String {
    static USER: OnceLock<String> = OnceLock::new();
    // SAFETY: the pseudo-handle of the current process needs no closing and is always valid.
    USER.get_or_init(|| process_token_user(unsafe { GetCurrentProcess() }).unwrap_or_else(|_| "S-1-0-0".into())).clone()
}

/// The SID of the user running process `pid` (for the bridge's peer check).
pub fn user_of_process(pid: u32) -> io::Result<String> {
    let process = open_process(pid)?;
    process_token_user(process.as_raw_handle() as HANDLE)
}

/// The process at the other end of the named pipe `pipe` (its client when `client`, else its
/// server) and the SID of the user running it.
pub fn pipe_peer(pipe: &impl std::os::windows::io::AsRawHandle, client: bool) -> io::Result<(u32, String)> {
    let mut pid = 0u32;
    let handle = pipe.as_raw_handle() as HANDLE;
    // SAFETY: the handle is an open pipe for as long as `pipe` lives; `pid` is written.
    let ok = unsafe {
        if client {
            GetNamedPipeClientProcessId(handle, &mut pid)
        } else {
            GetNamedPipeServerProcessId(handle, &mut pid)
        }
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((pid, user_of_process(pid)?))
}

/// Opens process `pid` for queries.
fn open_process(pid: u32) -> io::Result<OwnedHandle> {
    // SAFETY: OpenProcess takes plain values and returns a handle we own, or null.
    let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if h.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `h` is a valid handle that nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(h as _) })
}

/// The string SID of the user of `process`'s token.
fn process_token_user(process: HANDLE) -> io::Result<String> {
    let mut token: HANDLE = ptr::null_mut();
    // SAFETY: `token` receives a handle we then own.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `token` is a valid handle that nothing else owns.
    let token = unsafe { OwnedHandle::from_raw_handle(token as _) };
    let mut len = 0u32;
    // SAFETY: a size query: no buffer, `len` receives the size needed.
    unsafe { GetTokenInformation(token.as_raw_handle() as HANDLE, TokenUser, ptr::null_mut(), 0, &mut len) };
    // u64 elements keep the TOKEN_USER at the start of the buffer aligned.
    let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
    // SAFETY: `buf` holds `len` bytes, as the size query asked.
    let ok = unsafe {
        GetTokenInformation(token.as_raw_handle() as HANDLE, TokenUser, buf.as_mut_ptr().cast(), len, &mut len)
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: on success the buffer starts with a TOKEN_USER whose SID points into the buffer.
    let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    sid_string(sid)
}

/// The string form of the SID `sid`.
fn sid_string(sid: PSID) -> io::Result<String> {
    let mut s: *mut u16 = ptr::null_mut();
    // SAFETY: `sid` is a valid SID; `s` receives a LocalAlloc'd string we free below.
    if unsafe { ConvertSidToStringSidW(sid, &mut s) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `s` is a NUL-terminated UTF-16 string.
    let text = unsafe {
        let len = (0..).take_while(|&i| *s.add(i) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(s, len))
    };
    // SAFETY: `s` came from LocalAlloc and is not used after this.
    unsafe { LocalFree(s as HLOCAL) };
    Ok(text)
}

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

/// The permission bits of `m`: Windows keeps only the read-only attribute, seen as 0444 (else
/// 0666), so that records and answers carry the same kind of value on every system.
pub fn mode(m: &fs::Metadata) -> u32 {
    if m.permissions().readonly() {
        0o444
    } else {
        0o666
    }
}

/// Whether `mode` (as [`mode`] gives it) says read-only.
pub fn is_read_only(mode: u32) -> bool {
    mode & 0o222 == 0
}

/// The volume, index and link count of the file `file` has open.
fn file_info(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value to be overwritten.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for as long as `file` is; `info` is written by the call.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle() as HANDLE, &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// Opens the entry at `path` itself (a link not followed, a directory too) to read its
/// attributes.
fn open_entry(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .access_mode(FILE_READ_ATTRIBUTES)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
}

/// How many names (hard links) the file at `path` has.
pub fn links(_m: &fs::Metadata, path: &Path) -> io::Result<u64> {
    Ok(u64::from(file_info(&open_entry(path)?)?.nNumberOfLinks))
}

/// Whether the entry at `name` (not followed) is the very file `file` has open.
pub fn is_same_file(file: &File, name: &Path) -> io::Result<bool> {
    let open = file_info(file)?;
    let now = match open_entry(name) {
        Ok(f) => file_info(&f)?,
        // Gone, or removed and still delete-pending (refused to open): either way not `file`'s
        // name any more.
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied) => return Ok(false),
        Err(e) => return Err(e),
    };
    Ok(now.dwVolumeSerialNumber == open.dwVolumeSerialNumber
        && now.nFileIndexHigh == open.nFileIndexHigh
        && now.nFileIndexLow == open.nFileIndexLow)
}

/// A security descriptor that grants the user and the system alone, inherited by what is
/// created inside: the counterpart of mode 0700.
struct PrivateDescriptor(*mut c_void);

impl PrivateDescriptor {
    fn new() -> io::Result<PrivateDescriptor> {
        // Protected (P): nothing is inherited from the parent. Full access (FA) for the user and
        // SYSTEM, inherited by files (OI) and directories (CI) created inside.
        let sddl = format!("D:P(A;OICI;FA;;;{})(A;OICI;FA;;;SY)", user());
        let sddl = wide(OsStr::new(&sddl));
        let mut sd: *mut c_void = ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated; `sd` receives a LocalAlloc'd descriptor freed on drop.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                ptr::null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PrivateDescriptor(sd))
    }

    fn attributes(&self) -> SECURITY_ATTRIBUTES {
        SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.0,
            bInheritHandle: 0,
        }
    }
}

impl Drop for PrivateDescriptor {
    fn drop(&mut self) {
        // SAFETY: the descriptor came from LocalAlloc and is not used after this.
        unsafe { LocalFree(self.0 as HLOCAL) };
    }
}

/// The security attributes of a named pipe only the user (and the system) may open.
pub fn with_private_attributes<T>(f: impl FnOnce(*mut c_void) -> io::Result<T>) -> io::Result<T> {
    let sd = PrivateDescriptor::new()?;
    let mut attrs = sd.attributes();
    f(std::ptr::addr_of_mut!(attrs).cast())
}

/// Creates the directory `dir` (its parent must exist) open to the user alone: a protected
/// DACL granting the user and the system. Fails with `AlreadyExists` when something is there.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let sd = PrivateDescriptor::new()?;
    let attrs = sd.attributes();
    let name = wide(dir.as_os_str());
    // SAFETY: `name` is NUL-terminated and `attrs` points to a live descriptor.
    if unsafe { CreateDirectoryW(name.as_ptr(), &attrs) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Creates `dir` and any missing parents, each new one open to the user alone.
pub fn create_private_dir_all(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_private_dir_all(parent)?;
    }
    match create_private_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        other => other,
    }
}

/// What keeps the entry at `path` (`meta` read without following) from being a private
/// directory or file of ours: a link or another kind of entry, another owner, or an entry of its
/// DACL granting someone else. `None` when it is one.
pub fn not_private(meta: &fs::Metadata, path: &Path, dir: bool) -> Option<String> {
    if meta.file_type().is_symlink() {
        return Some("a link".into());
    }
    if dir && !meta.is_dir() {
        return Some("not a directory".into());
    }
    if !dir && !meta.is_file() {
        return Some("not a regular file".into());
    }
    match security_of(path) {
        Ok((owner, granted)) => {
            let me = user();
            if owner != me {
                return Some(format!("owned by {owner}, not by us ({me})"));
            }
            let others: Vec<String> =
                granted.into_iter().filter(|s| *s != me && s != SYSTEM_SID && s != ADMINISTRATORS_SID).collect();
            (!others.is_empty()).then(|| format!("access granted to {}; it must grant only us", others.join(", ")))
        }
        Err(e) => Some(format!("a security descriptor that cannot be read ({e})")),
    }
}

/// Opens `path` for reading. While another process replaces the file, Windows refuses opens of
/// the name for a moment (access denied, or a sharing violation): that is waited out for up to
/// [`BUSY_WAIT`] before the error stands.
pub fn open_read(path: &Path) -> io::Result<File> {
    waiting_out_refusals(BUSY_WAIT, || File::open(path))
}

/// Runs `step` again, a few milliseconds apart for up to `wait`, while Windows refuses it for a
/// moment: a sharing or lock violation, or access denied (a name being renamed over, or a file
/// removed while others still hold it, is refused that way until they let go). The last answer
/// stands once `wait` is over.
pub fn waiting_out_refusals<T>(wait: std::time::Duration, mut step: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let until = std::time::Instant::now() + wait;
    loop {
        match step() {
            Err(e)
                if (is_busy(&e) || e.kind() == io::ErrorKind::PermissionDenied)
                    && std::time::Instant::now() < until =>
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            other => return other,
        }
    }
}

/// The whole contents of `path`, opened as [`open_read`] does.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut file = open_read(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The canonical, absolute form of `p`, every link, junction and short name resolved, without
/// the verbatim `\\?\` prefix where the plain form means the same (`C:\w`, not `\\?\C:\w`),
/// so that paths compare, print and round-trip through URIs as users write them.
pub fn canonicalize(p: &Path) -> io::Result<PathBuf> {
    dunce::canonicalize(p)
}

/// Whether the named pipe `path` (`\\.\pipe\NAME`) exists: looked up in the pipe namespace's
/// listing, since opening it would take the server's waiting instance. A path outside that
/// namespace is no endpoint.
pub fn endpoint_exists(path: &Path) -> bool {
    const PIPES: &str = r"\\.\pipe\";
    let in_pipes = |p: &&str| p.get(..PIPES.len()).is_some_and(|s| s.eq_ignore_ascii_case(PIPES));
    let Some(name) = path.to_str().filter(in_pipes).map(|p| &p[PIPES.len()..]) else { return false };
    match fs::read_dir(PIPES) {
        Ok(entries) => entries.flatten().any(|e| e.file_name().eq_ignore_ascii_case(name)),
        // A listing Windows refuses says nothing either way: the discovery file stands.
        Err(_) => true,
    }
}

/// Whether the entry at `path` is owned by the user this process runs as.
pub fn is_ours(_meta: &fs::Metadata, path: &Path) -> bool {
    security_of(path).is_ok_and(|(owner, _)| owner == user())
}

/// A security descriptor `GetNamedSecurityInfoW` returned, freed when dropped; `owner` and
/// `dacl` (null when not asked for, or when there is no DACL) point into it.
struct Security {
    sd: *mut c_void,
    owner: PSID,
    dacl: *mut ACL,
}

impl Drop for Security {
    fn drop(&mut self) {
        // SAFETY: `sd` came from LocalAlloc, and nothing borrowed from it outlives `self`.
        unsafe { LocalFree(self.sd as HLOCAL) };
    }
}

/// The parts `what` names (owner, DACL) of the security descriptor of the file `path`.
fn named_security(path: &Path, what: u32) -> io::Result<Security> {
    let name = wide(path.as_os_str());
    let mut got = Security { sd: ptr::null_mut(), owner: ptr::null_mut(), dacl: ptr::null_mut() };
    // SAFETY: `name` is NUL-terminated; the out pointers are `got`'s, which frees `sd`.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            what,
            &mut got.owner,
            ptr::null_mut(),
            &mut got.dacl,
            ptr::null_mut(),
            &mut got.sd,
        )
    };
    match status {
        0 => Ok(got),
        e => Err(io::Error::from_raw_os_error(e as i32)),
    }
}

/// The owner of `path` and the SIDs its DACL grants anything to.
fn security_of(path: &Path) -> io::Result<(String, Vec<String>)> {
    let security = named_security(path, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION)?;
    let owner = sid_string(security.owner)?;
    if security.dacl.is_null() {
        // No DACL at all grants everyone everything.
        return Ok((owner, vec!["everyone (no DACL)".to_owned()]));
    }
    let mut granted = Vec::new();
    // SAFETY: `dacl` is valid while `security` lives.
    for header in dacl::aces(unsafe { &*security.dacl })? {
        // Only grants matter: ACCESS_ALLOWED_ACE_TYPE is 0.
        if header.AceType == 0 {
            let ace: *const ACE_HEADER = header;
            // SAFETY: an allowed ACE holds its SID from `SidStart` on.
            let sid = unsafe { std::ptr::addr_of!((*ace.cast::<ACCESS_ALLOWED_ACE>()).SidStart) };
            granted.push(sid_string(sid.cast_mut().cast())?);
        }
    }
    Ok((owner, granted))
}

/// Directories of ours are made private when created; an existing one is left as it is.
pub fn narrow_private_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Opens `path` for reading and writing, creating it with a DACL for the user alone: only when
/// nothing is there if `new`, else opening what is there. The DACL is given explicitly rather
/// than inherited, so the file is private whoever made its directory.
pub fn open_private(path: &Path, new: bool) -> io::Result<File> {
    let sd = PrivateDescriptor::new()?;
    let attrs = sd.attributes();
    let name = wide(path.as_os_str());
    let disposition = if new { CREATE_NEW } else { OPEN_ALWAYS };
    // SAFETY: `name` is NUL-terminated and `attrs` points to a live descriptor; the handle
    // returned is ours.
    let h = unsafe {
        CreateFileW(
            name.as_ptr(),
            GENERIC_READ | GENERIC_WRITE,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            &attrs,
            disposition,
            FILE_ATTRIBUTE_NORMAL,
            ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `h` is a valid file handle that nothing else owns.
    Ok(unsafe { File::from_raw_handle(h as _) })
}

/// A file in a private directory is private by inheritance: nothing to change.
pub fn make_private(_file: &File) -> io::Result<()> {
    Ok(())
}

/// Takes the exclusive lock of `file` between processes (`LockFileEx` over the whole range):
/// waiting for it when `wait`, else `Ok(false)` when another holds it. The system lets go when
/// the process dies.
pub fn lock_file(file: &File, wait: bool) -> io::Result<bool> {
    let flags = if wait { LOCKFILE_EXCLUSIVE_LOCK } else { LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY };
    // SAFETY: an all-zero OVERLAPPED (offset 0, no event) is what a synchronous handle takes.
    let mut overlapped = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for as long as `file` is.
    let ok = unsafe { LockFileEx(file.as_raw_handle() as HANDLE, flags, 0, u32::MAX, u32::MAX, &mut overlapped) };
    if ok != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if !wait && e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        return Ok(false);
    }
    Err(e)
}

/// Whether process `pid` exists and has not exited (ours or another user's).
pub fn is_alive(pid: u32) -> bool {
    match open_process(pid) {
        Ok(process) => {
            let mut code = 0u32;
            // SAFETY: the handle is open; `code` is written by the call.
            let ok = unsafe { GetExitCodeProcess(process.as_raw_handle() as HANDLE, &mut code) };
            ok == 0 || code == STILL_ACTIVE as u32
        }
        // It exists but we may not look at it: not ours, but not dead either.
        Err(e) => e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32),
    }
}

/// Windows cannot flush a directory: NTFS journals the rename itself, and a new name is made with
/// `MOVEFILE_WRITE_THROUGH`.
pub fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Puts the finished temp file `tmp` at `target` with one rename, which replaces an existing file
/// only when `clobber` (else a write-through `MoveFileExW` that fails when the name is taken) and
/// is atomic for the name. The caller gave the temp file the target's own DACL (`own_dacl`), and
/// the folder gave it the rest; alternate streams are not carried over.
///
/// A read-only target is replaced as on Unix, where the directory's permission is what counts:
/// its attribute is lifted for the replace and the result is read-only again. Another program
/// holding the target open without `FILE_SHARE_DELETE` (an indexer, a virus scanner, an editor)
/// makes the replace fail with a sharing violation: it is tried again for up to
/// [`BUSY_WAIT`], then reported as `ResourceBusy`, which the caller turns into a `conflict`.
pub fn persist(tmp: tempfile::NamedTempFile, target: &Path, clobber: bool) -> io::Result<()> {
    // The caller gave the temp file the attributes to keep; `keep` clears them, so they are
    // given again (the read-only one once the file is in place).
    let meta = tmp.as_file().metadata()?;
    let read_only = meta.permissions().readonly();
    let attributes = std::os::windows::fs::MetadataExt::file_attributes(&meta) & KEPT_ATTRIBUTES;
    // Closed first: the replace needs the temp file's name free of our own handle.
    let kept: PathBuf = tmp.into_temp_path().keep().map_err(|e| e.error)?;
    if attributes != 0 {
        if let Err(e) = add_attributes(&kept, attributes) {
            let _ = fs::remove_file(&kept);
            return Err(e);
        }
    }
    // A reader opening the old file at that moment refuses the rename with access denied
    // (without POSIX semantics): as passing as a sharing violation, so waited out too.
    let result = match waiting_out_refusals(BUSY_WAIT, || place(&kept, target, clobber)) {
        Err(e) if is_busy(&e) || (e.kind() == io::ErrorKind::PermissionDenied && held_elsewhere(target)) => {
            Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                "is open in another program that does not let it be replaced (a sharing violation); \
                 nothing was changed: close it there, or wait, and try again",
            ))
        }
        other => other,
    };
    match &result {
        Ok(()) if read_only => set_read_only(target, true)?,
        Ok(()) => {}
        Err(_) => {
            let _ = fs::remove_file(&kept);
        }
    }
    result
}

/// The attributes a rewritten file keeps besides read-only (hidden, system, not indexed).
pub const KEPT_ATTRIBUTES: u32 = FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM | FILE_ATTRIBUTE_NOT_CONTENT_INDEXED;

/// Gives the file `path` the attributes `attributes` (of [`KEPT_ATTRIBUTES`]) besides the
/// archive one, which marks it changed, and its read-only one as it is.
pub fn add_attributes(path: &Path, attributes: u32) -> io::Result<()> {
    let read_only = fs::metadata(path)?.permissions().readonly();
    let all = attributes | FILE_ATTRIBUTE_ARCHIVE | if read_only { FILE_ATTRIBUTE_READONLY } else { 0 };
    let name = wide(path.as_os_str());
    // SAFETY: `name` is NUL-terminated.
    match unsafe { SetFileAttributesW(name.as_ptr(), all) } {
        0 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// Whether another program holds `path` open in a way that forbids removing or renaming it (no
/// `FILE_SHARE_DELETE`): opening it for deletion, sharing everything, fails with a sharing
/// violation then. A plain access denial (the DACL) is not that.
fn held_elsewhere(path: &Path) -> bool {
    /// The DELETE access right.
    const DELETE: u32 = 0x0001_0000;
    OpenOptions::new().access_mode(DELETE).share_mode(7).open(path).is_err_and(|e| is_busy(&e))
}

/// How long a replace refused by a sharing violation is tried again.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether `e` says another program holds the file (a sharing or lock violation).
fn is_busy(e: &io::Error) -> bool {
    /// ERROR_SHARING_VIOLATION.
    const SHARING_VIOLATION: i32 = 32;
    matches!(e.raw_os_error(), Some(SHARING_VIOLATION)) || e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32)
}

fn set_read_only(path: &Path, on: bool) -> io::Result<()> {
    let mut p = fs::metadata(path)?.permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    p.set_readonly(on);
    fs::set_permissions(path, p)
}

fn place(from: &Path, target: &Path, clobber: bool) -> io::Result<()> {
    let (from_w, target_w) = (wide(from.as_os_str()), wide(target.as_os_str()));
    let existing = fs::symlink_metadata(target).ok().filter(fs::Metadata::is_file);
    let read_only = clobber && existing.as_ref().is_some_and(|m| m.permissions().readonly());
    if read_only {
        set_read_only(target, false)?;
    }
    // One rename that replaces the name: a reader sees the old file or the new one, never no
    // file (ReplaceFileW, which would keep an explicit DACL and alternate streams, replaces in
    // several steps, and a reader between them finds nothing). std's rename replaces with POSIX
    // semantics where the file system has them (a reader holding the old file open keeps
    // reading it, and does not block the rename), else with MoveFileExW.
    let placed = if clobber {
        fs::rename(from, target)
    } else {
        // SAFETY: both names are NUL-terminated.
        match unsafe { MoveFileExW(from_w.as_ptr(), target_w.as_ptr(), MOVEFILE_WRITE_THROUGH) } {
            0 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    };
    if let Err(e) = placed {
        if read_only {
            let _ = set_read_only(target, true);
        }
        return Err(e);
    }
    Ok(())
}

/// The per-user local application data folder (`%LOCALAPPDATA%`), where tether keeps its
/// runtime directory, locks and journal.
pub fn local_app_data() -> Option<PathBuf> {
    std::env::var_os("LOCALAPPDATA").map(PathBuf::from).filter(|p| p.is_absolute())
}

/// The modification times of the files a walk lists. On Windows the directory listing already
/// carries them, and the walk keeps what it read.
#[derive(Default)]
pub struct ModifiedTimes;

impl ModifiedTimes {
    /// The modification time of the file `entry` names (of a symlink itself, never its target),
    /// `None` when it cannot be read.
    pub fn of(&mut self, entry: &ignore::DirEntry) -> Option<std::time::SystemTime> {
        entry.metadata().ok()?.modified().ok()
    }
}
