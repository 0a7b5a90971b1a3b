//! Job objects, Windows' counterpart of a process group: the shell and everything it starts
//! are in one job, which is terminated as a whole, and which the system terminates if tether
//! dies (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`).
#![allow(unsafe_code)]

use std::io;
use std::os::windows::io::{AsRawHandle as _, FromRawHandle as _, OwnedHandle};
use std::os::windows::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus};
use std::ptr;

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;

/// The exit code a terminated job's processes get.
const KILLED: u32 = 1;

/// A command's job: the shell and everything it starts.
pub(super) struct Group {
    job: OwnedHandle,
    pid: u32,
}

impl Group {
    /// Starts `command` and puts it in a new job that dies with tether. The shell is assigned
    /// the moment it exists, before it has had the time to start anything (a child started in
    /// that instant would be the one process outside the job).
    pub(super) fn spawn(command: &mut Command) -> io::Result<(Child, Group)> {
        let job = new_job()?;
        let mut child = command.creation_flags(CREATE_NEW_PROCESS_GROUP).spawn()?;
        // SAFETY: both handles are open: the job is ours, the process is the child's.
        let ok = unsafe { AssignProcessToJobObject(job.as_raw_handle() as HANDLE, child.as_raw_handle() as HANDLE) };
        if ok == 0 {
            let e = io::Error::last_os_error();
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        let pid = child.id();
        Ok((child, Group { job, pid }))
    }

    /// The shell's process id, for names.
    pub(super) fn id(&self) -> u32 {
        self.pid
    }

    /// Windows has no signal a console-less process can be asked to stop with, so the job is
    /// terminated at once. Returns false: there is nothing to wait for before the kill.
    pub(super) fn ask_to_stop(&self) -> bool {
        self.kill();
        false
    }

    /// Terminates every process in the job.
    pub(super) fn kill(&self) {
        // SAFETY: the job handle is open.
        if unsafe { TerminateJobObject(self.job.as_raw_handle() as HANDLE, KILLED) } == 0 {
            tracing::warn!("terminating a command's job: {}", io::Error::last_os_error());
        }
    }

    /// Whether a process is still running in the job.
    pub(super) fn alive(&self) -> bool {
        // SAFETY: an all-zero accounting record is a valid value to be overwritten.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is the size the class asks for; the job handle is open.
        let ok = unsafe {
            QueryInformationJobObject(
                self.job.as_raw_handle() as HANDLE,
                JobObjectBasicAccountingInformation,
                ptr::addr_of_mut!(info).cast(),
                std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                ptr::null_mut(),
            )
        };
        // A job that cannot be asked is taken as alive: the caller then kills it.
        ok == 0 || info.ActiveProcesses > 0
    }

    /// Leaves the processes still in the job running after the call: the kill-on-close limit is
    /// lifted before the handle goes.
    pub(super) fn release(self) {
        if let Err(e) = set_kill_on_close(&self.job, false) {
            tracing::warn!("keeping a command's background processes: {e}");
        }
    }
}

/// A new job whose processes are terminated when its last handle closes.
fn new_job() -> io::Result<OwnedHandle> {
    // SAFETY: no attributes, no name; the handle returned is ours.
    let h = unsafe { CreateJobObjectW(ptr::null(), ptr::null()) };
    if h.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `h` is a valid handle that nothing else owns.
    let job = unsafe { OwnedHandle::from_raw_handle(h as _) };
    set_kill_on_close(&job, true)?;
    Ok(job)
}

fn set_kill_on_close(job: &OwnedHandle, on: bool) -> io::Result<()> {
    // SAFETY: an all-zero limit record (no limits) is valid.
    let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    if on {
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    }
    // SAFETY: `limits` is the size the class asks for; the job handle is open.
    let ok = unsafe {
        SetInformationJobObject(
            job.as_raw_handle() as HANDLE,
            JobObjectExtendedLimitInformation,
            ptr::addr_of!(limits).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Windows ends processes with exit codes, never signals.
pub(super) fn signal_of(_status: &ExitStatus) -> Option<i32> {
    None
}

/// The name of signal `sig`: Windows runs report none, so this only formats the number.
pub fn signal_name(sig: i32) -> String {
    format!("SIG{sig}")
}
