//! Another process changed the file of an open document: a shell's `sed -i`, a formatter, an
//! assistant's own file tools, `tether mcp` working on disk.
//!
//! The store keeps, for each open document, the file's text as tether last knew it: the common
//! ancestor of the buffer and the file. When the file changes (`lsp/watch.rs` says which, or the
//! editor's `workspace/didChangeWatchedFiles`), it is read and compared:
//! - the same as known, or the same as the buffer (the editor saved it), or the buffer has no
//!   unsaved changes (the editor reloads it; told at once with `tether/diskReload` when it takes
//!   that): the new text is only recorded;
//! - else the file's change is made in the buffer too, three ways (`journal::merge::carry`):
//!   one versioned edit, one undo step, the unsaved text kept, recorded in the journal as a change
//!   on disk. The editor is told (`tether/diskChange`), so that its own "changed on disk" prompt
//!   can stay away;
//! - where the file's change and the unsaved changes touch the same lines, nothing is merged and
//!   the known text stays: the editor is told, with the diff, and its usual choice is the user's.
//!
//! Checks run one at a time, in the order the files changed, on one task.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ropey::Rope;
use tower_lsp::lsp_types::{MessageType, Url};

use super::protocol::{DiskChange, DiskChangeParams, DiskReload, DiskReloadParams};
use super::shared::Shared;
use super::sink::EditorSink;
use super::watch::{self, Command};
use crate::edit::{unified_diff, Base, EditPlan};
use crate::journal::merge::{carry, Overlap};
use crate::journal::{CallInfo, Journal, Recording};
use crate::text::{decode, Decoded};
use crate::vfs::Origin;

/// The journal's name for a change merged from disk: the `tool` of its record.
pub const MERGED_FROM_DISK: &str = "merge_from_disk";

/// The `client` of that record: who made the change.
pub const ON_DISK: &str = "another program (on disk)";

/// How many times a merge is tried against a buffer that keeps changing under it.
const ATTEMPTS: usize = 3;

/// What a check of one file found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing to do: not open, not a text file in the workspace, or the text tether knew.
    Nothing,
    /// The new text was recorded; the buffer had nothing to take.
    Recorded,
    /// The file's change is in the buffer, at this version.
    Merged(i32),
    /// The file's change and the unsaved changes overlap; nothing was merged.
    Overlaps(Vec<Overlap>),
    /// The buffer kept changing, or the editor did not take the edit.
    Failed(String),
}

/// What the editor is to be told after a check.
enum Tell {
    /// `tether/diskChange`.
    Change(DiskChangeParams),
    /// `tether/diskReload`.
    Reload(DiskReloadParams),
    /// A `window/showMessage` warning.
    Warning(String),
}

/// The file as read for a check.
struct Read {
    text: String,
    size: u64,
    mtime: Option<(u64, u32)>,
}

impl Shared {
    /// Starts watching the file of a document the editor opened.
    pub fn watch(&self, path: &Path) {
        let _ = self.disk.commands.send(Command::Add(path.to_path_buf()));
    }

    /// Stops watching the file of a document the editor closed.
    pub fn unwatch(&self, path: &Path) {
        let _ = self.disk.commands.send(Command::Remove(path.to_path_buf()));
    }

    /// Has the file at `path` checked, as if the watch had seen it change.
    pub fn check_disk(&self, path: PathBuf) {
        let _ = self.disk.changed.send(path);
    }

    /// Starts the watch and the task that checks what it reports (once; at `initialized`).
    pub fn start_watching(self: &Arc<Self>) {
        let Some((commands, mut changed)) = self.disk.receivers.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return;
        };
        tokio::spawn(watch::run(commands, self.disk.changed.clone()));
        // Weak: the task ends with the server (its senders live in `Shared` and the watch).
        let shared = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(path) = changed.recv().await {
                let Some(shared) = shared.upgrade() else { return };
                shared.merge_from_disk(&path).await;
            }
        });
    }

    /// Checks the file of the open document at `path` against the text tether knew, and brings
    /// a change another process made to it into the buffer (see the module documentation).
    pub(crate) async fn merge_from_disk(self: &Arc<Self>, path: &Path) -> Outcome {
        for attempt in 1..=ATTEMPTS {
            let shared = self.clone();
            let real = path.to_path_buf();
            let handle = tokio::runtime::Handle::current();
            let last = attempt == ATTEMPTS;
            let task = tokio::task::spawn_blocking(move || shared.merge_once(&real, handle, last));
            let (outcome, retry, tell) = match task.await {
                Ok(done) => done,
                Err(e) => (Outcome::Failed(format!("internal error: {e}")), false, None),
            };
            match tell {
                Some(Tell::Change(params)) => self.client.send_notification::<DiskChange>(params).await,
                Some(Tell::Reload(params)) => self.client.send_notification::<DiskReload>(params).await,
                Some(Tell::Warning(message)) => self.client.show_message(MessageType::WARNING, message).await,
                None => {}
            }
            if !retry {
                return outcome;
            }
        }
        Outcome::Failed("the buffer kept changing while the file's change was merged".to_owned())
    }

    /// One attempt, on the blocking pool: what it found, whether to try again, and what to tell
    /// the editor.
    fn merge_once(
        self: &Arc<Self>,
        path: &Path,
        handle: tokio::runtime::Handle,
        last: bool,
    ) -> (Outcome, bool, Option<Tell>) {
        let nothing = (Outcome::Nothing, false, None);
        let Some(vfs) = self.snapshot() else { return nothing };
        // Only files inside the workspace and not denied are read.
        let Ok(p) = vfs.resolve(&path.to_string_lossy()) else { return nothing };
        let Some((doc, known)) = self.store.get_with_disk(path) else { return nothing };
        let Some(disk) = read(&vfs, &p) else { return nothing };
        let same = |rope: &Rope| rope.len_bytes() == disk.text.len() && rope == disk.text.as_str();
        if known.as_ref().is_some_and(same) {
            return nothing;
        }
        // The editor saved the file's text, or the buffer holds the file as tether knew it
        // (nothing unsaved): each rope compared once.
        let saved = same(&doc.rope);
        let clean = known.as_ref().is_some_and(|k| *k == doc.rope);
        let Some(known) = known.filter(|_| !saved && !clean) else {
            // The editor wrote it, or has nothing unsaved and reloads it: at once when it takes
            // `tether/diskReload` (Neovim and Emacs reload only when they next look at the file).
            self.store.set_disk(path, Rope::from_str(&disk.text));
            let tell = (clean && !saved && self.caps().disk_reloads)
                .then(|| Tell::Reload(DiskReloadParams { uri: doc.uri.clone(), size: disk.size, mtime: disk.mtime }));
            return (Outcome::Recorded, false, tell);
        };
        let buffer = doc.rope.to_string();
        let merged = match carry(&known.to_string(), &disk.text, &buffer) {
            Ok(merged) => merged,
            Err(overlaps) => {
                let tell = self.tell_overlaps(&doc.uri, path, &disk, &buffer, &overlaps);
                return (Outcome::Overlaps(overlaps), false, tell);
            }
        };
        // The buffer as the snapshot holds it: the plan must be made against that very text.
        let Ok(file) = vfs.read_shared(&p) else { return nothing };
        if !matches!(file.origin, Origin::Buffer { version, .. } if version == doc.version) {
            return (Outcome::Failed("the buffer changed meanwhile".to_owned()), true, None);
        }
        let plan = EditPlan::edit_to(p.clone(), Base::from(file), &merged);
        let sink = EditorSink::new(self.clone(), handle, "merged from disk", last, false).unreviewed();
        let config = &self.options.config;
        let applied = match &config.journal {
            Some(settings) => {
                let journal = Journal::open(settings, vfs.workspace().roots());
                let args = serde_json::json!({ "path": vfs.display(path) });
                let info = CallInfo::new(MERGED_FROM_DISK, "tether", ON_DISK, &args);
                crate::sink::apply(&Recording::new(&sink, journal, info), config, &vfs, &plan)
            }
            None => crate::sink::apply(&sink, config, &vfs, &plan),
        };
        let delivered = sink.delivered();
        match applied {
            Ok(_) => {
                self.store.set_disk(path, Rope::from_str(&disk.text));
                let version = self.store.get(path).map_or(doc.version, |d| d.version);
                let tell = self.caps().disk_changes.then_some(Tell::Change(DiskChangeParams {
                    uri: doc.uri,
                    merged: true,
                    version: Some(version),
                    size: disk.size,
                    mtime: disk.mtime,
                    overlaps: None,
                    diff: None,
                }));
                (Outcome::Merged(version), false, tell)
            }
            Err(e) if delivered.retry && !last => (Outcome::Failed(e.message().to_owned()), true, None),
            Err(e) => {
                tracing::warn!(
                    path = %path.display(),
                    error = %e.message(),
                    "another program changed this file; tether could not merge the change into its buffer"
                );
                (Outcome::Failed(e.message().to_owned()), false, None)
            }
        }
    }

    /// What to tell the editor of a change on disk that overlaps the unsaved changes: once per
    /// file text.
    fn tell_overlaps(&self, uri: &Url, path: &Path, disk: &Read, buffer: &str, overlaps: &[Overlap]) -> Option<Tell> {
        let hash = {
            use std::hash::{Hash as _, Hasher as _};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            disk.text.hash(&mut h);
            h.finish()
        };
        let mut told = self.disk.told.lock().unwrap_or_else(|e| e.into_inner());
        if told.insert(path.to_path_buf(), hash) == Some(hash) {
            return None;
        }
        drop(told);
        let lines: Vec<String> = overlaps.iter().map(Overlap::describe).collect();
        let lines = lines.join(", ");
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        if self.caps().disk_changes {
            return Some(Tell::Change(DiskChangeParams {
                uri: uri.clone(),
                merged: false,
                version: None,
                size: disk.size,
                mtime: disk.mtime,
                overlaps: Some(lines),
                diff: Some(unified_diff(&name, buffer, &disk.text)),
            }));
        }
        Some(Tell::Warning(format!(
            "tether: {name} changed on disk where its buffer has unsaved changes ({lines} of the buffer); nothing was \
             merged. Reload the file to take its text, or keep the buffer: saving it replaces the file."
        )))
    }
}

/// The file `p` as text, with its size and time; `None` when it is gone or not text.
fn read(vfs: &crate::vfs::Vfs, p: &crate::workspace::SandboxPath) -> Option<Read> {
    let meta = std::fs::metadata(p.real()).ok()?;
    let bytes = vfs.read_bytes(p).ok()?;
    let Decoded::Text { text, .. } = decode(bytes) else { return None };
    let since = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    Some(Read { text, size: meta.len(), mtime: since.map(|d| (d.as_secs(), d.subsec_nanos())) })
}
