//! A file's own DACL, carried over when tether rewrites the file, as the Unix build carries its
//! mode and owner: the rewritten file is a new file, which would otherwise take only what its
//! folder gives new files.

use std::ffi::c_void;
use std::io;
use std::path::Path;
use std::ptr;

use windows_sys::Win32::Security::Authorization::{SetNamedSecurityInfoW, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    AddAce, GetAce, GetSecurityDescriptorControl, InitializeAcl, ACE_HEADER, ACL, DACL_SECURITY_INFORMATION,
    INHERITED_ACE, PROTECTED_DACL_SECURITY_INFORMATION, SE_DACL_PROTECTED, UNPROTECTED_DACL_SECURITY_INFORMATION,
};

use super::{named_security, wide};

/// The part of a file's DACL that its folder does not give it: the entries set on the file
/// itself, or, when the file takes nothing from its folder (a protected DACL), the whole list.
#[derive(Debug, PartialEq, Eq)]
pub struct OwnDacl {
    /// The ACL, in memory aligned as an ACL must be (to four bytes).
    acl: Box<[u32]>,
    /// Whether the file takes nothing from its folder.
    protected: bool,
}

/// `path`'s own DACL, or `None` when everything in it comes from the folder (or it has none,
/// which grants everyone everything: the folder's is never wider than that).
pub fn own_dacl(path: &Path) -> io::Result<Option<OwnDacl>> {
    let security = named_security(path, DACL_SECURITY_INFORMATION)?;
    let dacl = security.dacl;
    if dacl.is_null() {
        return Ok(None);
    }
    let (mut control, mut revision) = (0u16, 0u32);
    // SAFETY: `sd` is the descriptor the call returned, alive as long as `security`.
    if unsafe { GetSecurityDescriptorControl(security.sd, &mut control, &mut revision) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let protected = control & SE_DACL_PROTECTED != 0;
    // SAFETY: `dacl` is valid while `security` lives.
    let acl = unsafe { &*dacl };
    let kept: Vec<&ACE_HEADER> =
        aces(acl)?.into_iter().filter(|a| protected || u32::from(a.AceFlags) & INHERITED_ACE == 0).collect();
    if !protected && kept.is_empty() {
        return Ok(None);
    }
    Ok(Some(OwnDacl { acl: acl_of(&kept, u32::from(acl.AclRevision))?, protected }))
}

/// Gives `path` this DACL; an unprotected one also gains, after its own entries, what the
/// folder gives.
pub fn set_own_dacl(path: &Path, dacl: &OwnDacl) -> io::Result<()> {
    let name = wide(path.as_os_str());
    let inherit =
        if dacl.protected { PROTECTED_DACL_SECURITY_INFORMATION } else { UNPROTECTED_DACL_SECURITY_INFORMATION };
    // SAFETY: `name` is NUL-terminated; `acl` holds a valid ACL, built by `acl_of`.
    let status = unsafe {
        SetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | inherit,
            ptr::null_mut(),
            ptr::null_mut(),
            dacl.acl.as_ptr().cast(),
            ptr::null(),
        )
    };
    match status {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(e as i32)),
    }
}

/// The entries of `acl`, in order.
pub(super) fn aces(acl: &ACL) -> io::Result<Vec<&ACE_HEADER>> {
    let mut out = Vec::with_capacity(usize::from(acl.AceCount));
    for i in 0..u32::from(acl.AceCount) {
        let mut ace: *mut c_void = ptr::null_mut();
        // SAFETY: `i` is below the ACL's count; `ace` points into the ACL, which outlives it.
        if unsafe { GetAce(acl, i, &mut ace) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: every ACE starts with its header, and spans `AceSize` bytes from it.
        out.push(unsafe { &*ace.cast::<ACE_HEADER>() });
    }
    Ok(out)
}

/// A new ACL of revision `revision` holding `aces`, in order.
fn acl_of(aces: &[&ACE_HEADER], revision: u32) -> io::Result<Box<[u32]>> {
    let size = std::mem::size_of::<ACL>() + aces.iter().map(|a| usize::from(a.AceSize)).sum::<usize>();
    let mut acl = vec![0u32; size.div_ceil(4)].into_boxed_slice();
    let len = u32::try_from(acl.len() * 4).map_err(|_| io::Error::other("a DACL too large to copy"))?;
    let at = acl.as_mut_ptr().cast::<ACL>();
    // SAFETY: `acl` is `len` bytes, four-byte aligned, and written only through these calls.
    if unsafe { InitializeAcl(at, len, revision) } == 0 {
        return Err(io::Error::last_os_error());
    }
    for ace in aces {
        let header: *const ACE_HEADER = *ace;
        // SAFETY: `header` spans `AceSize` bytes (see `aces`); appended at the end (u32::MAX).
        if unsafe { AddAce(at, revision, u32::MAX, header.cast(), u32::from(ace.AceSize)) } == 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(acl)
}
