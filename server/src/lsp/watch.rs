//! Watching the files of open documents for changes other processes make.
//!
//! Only the folders that hold an open document are watched, each once however many of its files
//! are open, and not recursively: the cost follows the open documents, not the workspace, so a
//! workspace of a million files costs what its open buffers cost. On Linux the watch is inotify
//! (through rustix, which tether already links; where inotify cannot start, only the editor's
//! reports remain); elsewhere the open files' sizes and times are compared once a second. A file's events are passed on after [`QUIET`] without another, so that
//! a writer's several `write`s are read once, whole; an event that says the write is complete (the
//! writer closed the file, or a whole file was renamed over it) is passed on after [`COMPLETE`].
//!
//! The watch only says *which* file to look at; what changed, and what to do, is decided by
//! reading it (`lsp/disk.rs`). Editors that forward `workspace/didChangeWatchedFiles` feed the
//! same queue.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use std::sync::Mutex;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

/// How long a file's events must pause before it is read, while it may still be being written.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub const QUIET: std::time::Duration = std::time::Duration::from_millis(30);

/// How long after an event that says a write is complete (the writer closed the file, or a whole
/// file was renamed over it) the file is read: just enough to take a burst of such events once.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub const COMPLETE: std::time::Duration = std::time::Duration::from_millis(2);

/// The watch's channels, kept by the server's shared state until `initialized` starts the watch,
/// and what the editor was told of changes it could not take (`lsp/disk.rs`).
pub(crate) struct Watched {
    /// Commands to the watch.
    pub commands: UnboundedSender<Command>,
    /// Files to check: from the watch, and from the editor's `didChangeWatchedFiles`.
    pub changed: UnboundedSender<PathBuf>,
    /// The receiving ends, taken once when the watch starts.
    pub receivers: Mutex<Option<(UnboundedReceiver<Command>, UnboundedReceiver<PathBuf>)>>,
    /// The file text (its hash) of the last overlap the editor was told about, per file, so
    /// that the same one is not told twice.
    pub told: Mutex<HashMap<PathBuf, u64>>,
}

impl Default for Watched {
    fn default() -> Watched {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (changed, changed_rx) = mpsc::unbounded_channel();
        Watched { commands, changed, receivers: Mutex::new(Some((command_rx, changed_rx))), told: Mutex::default() }
    }
}

/// What the watch is asked to do.
#[derive(Debug)]
pub(crate) enum Command {
    /// Watch the file at this real path (counted: a file opened twice is watched until both close).
    Add(PathBuf),
    /// Stop watching it once.
    Remove(PathBuf),
}

/// The open files being watched, counted, with the debounce of their events.
#[derive(Default)]
struct Files {
    open: HashMap<PathBuf, usize>,
    /// Files with events, and when they are read if none come before.
    pending: HashMap<PathBuf, Instant>,
}

impl Files {
    /// Applies `command`; returns the folder that gained its first file (`Ok`) or lost its last
    /// one (`Err`), if any.
    fn apply(&mut self, command: Command) -> Option<Result<PathBuf, PathBuf>> {
        match command {
            Command::Add(path) => {
                let dir = path.parent()?.to_path_buf();
                let first_in_dir = !self.open.keys().any(|p| p.parent() == Some(&dir));
                *self.open.entry(path).or_default() += 1;
                first_in_dir.then_some(Ok(dir))
            }
            Command::Remove(path) => {
                let count = self.open.get_mut(&path)?;
                *count -= 1;
                if *count > 0 {
                    return None;
                }
                self.open.remove(&path);
                self.pending.remove(&path);
                let dir = path.parent()?.to_path_buf();
                (!self.open.keys().any(|p| p.parent() == Some(&dir))).then_some(Err(dir))
            }
        }
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    /// Notes an event for `path`, if it is open: `complete` when it says the write is done.
    fn touched(&mut self, path: &Path, complete: bool) {
        if self.open.contains_key(path) {
            let due = Instant::now() + if complete { COMPLETE } else { QUIET };
            self.pending.insert(path.to_path_buf(), due);
        }
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    /// Notes that events may have been lost: every open file is read.
    fn all_touched(&mut self) {
        let at = Instant::now() + QUIET;
        self.pending = self.open.keys().map(|p| (p.clone(), at)).collect();
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    /// When the next pending file is due.
    fn next_due(&self) -> Option<Instant> {
        self.pending.values().min().copied()
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    /// Sends the files that are due.
    fn send_due(&mut self, changed: &UnboundedSender<PathBuf>) {
        let now = Instant::now();
        self.pending.retain(|path, due| {
            if *due > now {
                return true;
            }
            let _ = changed.send(path.clone());
            false
        });
    }
}

/// Watches the files `commands` names until its sender is dropped, sending each one that
/// changed to `changed`.
pub(crate) async fn run(commands: UnboundedReceiver<Command>, changed: UnboundedSender<PathBuf>) {
    #[cfg(target_os = "linux")]
    match inotify::Inotify::new() {
        Ok(watch) => inotify::run(watch, commands, changed).await,
        Err(e) => tracing::warn!(
            error = %e,
            "tether cannot watch files (inotify); it merges changes on disk only where the editor reports them"
        ),
    }
    #[cfg(not(target_os = "linux"))]
    poll(commands, changed).await;
}

/// The watch without notifications from the system: the open files' size and modification time,
/// compared once a second.
#[cfg(not(target_os = "linux"))]
async fn poll(mut commands: UnboundedReceiver<Command>, changed: UnboundedSender<PathBuf>) {
    let stamp = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.len(), m.modified().ok()));
    let mut files = Files::default();
    let mut seen: HashMap<PathBuf, Option<(u64, Option<std::time::SystemTime>)>> = HashMap::new();
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            command = commands.recv() => {
                let Some(command) = command else { return };
                if let Command::Add(path) = &command {
                    seen.insert(path.clone(), stamp(path));
                    // A change since the editor's `didOpen`, before this stamp: read once.
                    let _ = changed.send(path.clone());
                }
                files.apply(command);
                seen.retain(|p, _| files.open.contains_key(p));
            }
            _ = tick.tick() => {
                for (path, old) in &mut seen {
                    let now = stamp(path);
                    if now != *old {
                        *old = now;
                        let _ = changed.send(path.clone());
                    }
                }
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod inotify {
    use std::collections::HashMap;
    use std::ffi::OsStr;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::PathBuf;

    use rustix::fd::OwnedFd;
    use rustix::fs::inotify::{self as sys, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;
    use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

    use super::{Command, Files};

    /// An inotify instance and the folders it watches.
    pub(super) struct Inotify {
        fd: AsyncFd<OwnedFd>,
        dirs: HashMap<PathBuf, i32>,
        by_wd: HashMap<i32, PathBuf>,
    }

    impl Inotify {
        pub(super) fn new() -> std::io::Result<Inotify> {
            let fd = sys::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
            // SAFETY: the `AsyncFd` owns the `OwnedFd`, which stays open and the same descriptor
            // until both are dropped together; nothing else closes or replaces it.
            #[allow(unsafe_code)]
            let fd =
                unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(|e| e.into_parts().1)?;
            Ok(Inotify { fd, dirs: HashMap::new(), by_wd: HashMap::new() })
        }

        /// Watches `dir` for files written, replaced or created in it.
        fn add(&mut self, dir: PathBuf) {
            let mask = WatchFlags::CLOSE_WRITE
                | WatchFlags::MODIFY
                | WatchFlags::MOVED_TO
                | WatchFlags::CREATE
                | WatchFlags::ONLYDIR;
            match sys::add_watch(self.fd.get_ref(), &dir, mask) {
                Ok(wd) => {
                    self.by_wd.insert(wd, dir.clone());
                    self.dirs.insert(dir, wd);
                }
                Err(e) => tracing::warn!(
                    dir = %dir.display(),
                    error = %e,
                    "tether cannot watch this folder; changes other programs make to its open files are not merged"
                ),
            }
        }

        fn remove(&mut self, dir: &PathBuf) {
            if let Some(wd) = self.dirs.remove(dir) {
                self.by_wd.remove(&wd);
                let _ = sys::remove_watch(self.fd.get_ref(), wd);
            }
        }
    }

    /// Reads every event there is on `fd`, noting the files they touch.
    fn read(fd: &OwnedFd, by_wd: &HashMap<i32, PathBuf>, files: &mut Files) -> std::io::Result<()> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 8192];
        let mut reader = sys::Reader::new(fd, &mut buf);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(Errno::AGAIN) => return Ok(()),
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            if event.events().contains(ReadFlags::QUEUE_OVERFLOW) {
                files.all_touched();
                continue;
            }
            let (Some(dir), Some(name)) = (by_wd.get(&event.wd()), event.file_name()) else { continue };
            let complete = event.events().intersects(ReadFlags::CLOSE_WRITE | ReadFlags::MOVED_TO);
            files.touched(&dir.join(OsStr::from_bytes(name.to_bytes())), complete);
        }
    }

    pub(super) async fn run(
        mut watch: Inotify,
        mut commands: UnboundedReceiver<Command>,
        changed: UnboundedSender<PathBuf>,
    ) {
        let mut files = Files::default();
        loop {
            let due = files.next_due();
            tokio::select! {
                command = commands.recv() => {
                    let Some(command) = command else { return };
                    let added = match &command { Command::Add(path) => Some(path.clone()), Command::Remove(_) => None };
                    match files.apply(command) {
                        Some(Ok(dir)) => watch.add(dir),
                        Some(Err(dir)) => watch.remove(&dir),
                        None => {}
                    }
                    // A change made between the editor's `didOpen` (when tether read the file)
                    // and now, with the folder watched, has no event: the file is read once.
                    if let Some(path) = added {
                        files.touched(&path, true);
                    }
                }
                ready = watch.fd.readable() => {
                    let Ok(mut ready) = ready else { return };
                    if let Err(e) = read(ready.get_inner(), &watch.by_wd, &mut files) {
                        tracing::warn!(error = %e, "tether stopped watching files");
                        return;
                    }
                    ready.clear_ready();
                }
                () = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)), if due.is_some() => {
                    files.send_due(&changed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_watched_while_one_of_its_files_is_open() {
        let mut files = Files::default();
        let add = |p: &str| Command::Add(PathBuf::from(p));
        let remove = |p: &str| Command::Remove(PathBuf::from(p));
        assert_eq!(files.apply(add("/w/a")), Some(Ok(PathBuf::from("/w"))));
        assert_eq!(files.apply(add("/w/b")), None);
        assert_eq!(files.apply(add("/w/a")), None, "the same file opened twice");
        assert_eq!(files.apply(remove("/w/a")), None);
        assert_eq!(files.apply(remove("/w/a")), None, "/w/b is still open");
        assert_eq!(files.apply(remove("/w/b")), Some(Err(PathBuf::from("/w"))));
        assert_eq!(files.apply(remove("/w/b")), None, "not open");
    }

    #[test]
    fn only_open_files_are_read_and_each_once_when_due() {
        let mut files = Files::default();
        files.apply(Command::Add(PathBuf::from("/w/a")));
        files.touched(Path::new("/w/other"), true);
        files.touched(Path::new("/w/a"), false);
        files.touched(Path::new("/w/a"), false);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        files.send_due(&tx);
        assert!(rx.try_recv().is_err(), "not due before the quiet time");
        let quiet = files.pending[Path::new("/w/a")];
        files.touched(Path::new("/w/a"), true);
        assert!(files.pending[Path::new("/w/a")] < quiet, "a complete write is read sooner");
        for due in files.pending.values_mut() {
            *due = Instant::now();
        }
        files.send_due(&tx);
        assert_eq!(rx.try_recv().ok(), Some(PathBuf::from("/w/a")));
        assert!(rx.try_recv().is_err());
    }
}
