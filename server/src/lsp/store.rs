//! The open documents, as the editor last described them.
//!
//! Every method is synchronous and holds the lock only for its own work, never across an
//! `.await`: the sync handlers call it before their first `.await`, which is what keeps changes in
//! the order the editor sent them (see the `lsp` module documentation; `tests/lsp_sync.rs` proves it).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ropey::Rope;
use tokio::sync::watch;
use tower_lsp::lsp_types::Url;

use super::track::{Repair, Sent, Track, Verdict};
use crate::text::{Document, Position, PositionEncoding};
use crate::vfs::{OpenDocument, Overlay};

/// One open document.
#[derive(Debug, Clone)]
struct Entry {
    /// The URI the client named it by (used to address it in edits).
    uri: Url,
    doc: Document,
    version: i32,
    dirty: bool,
    /// The last version whose text was known to be the file's: opened clean, saved, or written
    /// by the server.
    clean: Option<i32>,
    /// When it last changed, on the store's own clock (opening counts as a change).
    last_change: u64,
    /// The file's text as tether last knew it (read at opening, written by a save or by the
    /// server, or read after another process changed it): the common ancestor of the buffer and
    /// the file when another process changes the file. `None` when there was no text file.
    disk: Option<Rope>,
}

/// An open document's state at one moment.
#[derive(Debug, Clone)]
pub struct DocState {
    /// The URI the client named it by.
    pub uri: Url,
    /// The text (an O(1) clone of the store's rope).
    pub rope: Rope,
    /// The editor's version of that text.
    pub version: i32,
    /// Whether the buffer has unsaved changes.
    pub dirty: bool,
    /// When it last changed, on the store's clock: the most recently changed document is the
    /// one the user is most likely typing in.
    pub last_change: u64,
}

/// Why a change was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncError {
    /// The document is not open.
    NotOpen,
    /// The change's version is not newer than the document's.
    Stale {
        /// The document's version.
        current: i32,
        /// The change's version.
        got: i32,
    },
}

#[derive(Debug, Default)]
struct Inner {
    docs: HashMap<PathBuf, Entry>,
    paths: HashMap<Url, PathBuf>,
    /// The edits being followed through the change stream, by id.
    tracks: HashMap<u64, Followed>,
    next_track: u64,
    /// The store's clock, ticking once per open or change.
    clock: u64,
}

/// A sent edit followed in one document, and where its verdict is published.
#[derive(Debug)]
struct Followed {
    path: PathBuf,
    track: Track,
    verdict: watch::Sender<Verdict>,
}

impl Followed {
    /// Tells the waiters the tracker's verdict when it changed.
    fn publish(&self) {
        let v = self.track.verdict();
        self.verdict.send_if_modified(|old| std::mem::replace(old, v) != *old);
    }
}

/// The store of open documents, keyed by real (canonical) path.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    /// Ticks (with the clock's value) after every change, open and close, for waiters.
    ticks: watch::Sender<u64>,
}

impl Default for Store {
    fn default() -> Store {
        Store { inner: Mutex::default(), ticks: watch::Sender::new(0) }
    }
}

/// A sent edit the store follows through the document's changes; dropping it stops that.
#[derive(Debug)]
pub struct Following {
    store: Arc<Store>,
    id: u64,
    verdict: watch::Receiver<Verdict>,
}

impl Following {
    /// The verdict so far.
    pub(crate) fn verdict(&self) -> Verdict {
        *self.verdict.borrow()
    }

    /// Waits until the verdict is no longer open, at most until `deadline`; returns it.
    pub(crate) async fn decided(&mut self, deadline: tokio::time::Instant) -> Verdict {
        let wait = self.verdict.wait_for(|v| *v != Verdict::Open);
        if let Ok(Ok(v)) = tokio::time::timeout_at(deadline, wait).await {
            return *v;
        }
        self.verdict()
    }

    /// Records that the editor answered `applied: true` when `arrived` messages had been read.
    pub fn answered(&self, arrived: u64) {
        self.store.with_track(self.id, |f| f.track.answered(arrived));
    }

    /// How to move a misplaced edit where it belongs, against the buffer as it is now.
    pub(crate) fn repair(&self) -> Option<Repair> {
        let mut repair = None;
        self.store.with_track(self.id, |f| repair = f.track.repair());
        repair
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.store.lock().tracks.remove(&self.id);
    }
}

impl Store {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a document the editor opened (replacing any earlier state of the same file).
    /// `disk` is the file's text when it is a text file.
    pub fn open(&self, uri: Url, path: PathBuf, doc: Document, version: i32, dirty: bool, disk: Option<Rope>) {
        let mut inner = self.lock();
        if let Some(old) = inner.docs.get(&path).map(|e| e.uri.clone()) {
            inner.paths.remove(&old);
        }
        inner.paths.insert(uri.clone(), path.clone());
        inner.clock += 1;
        let last_change = inner.clock;
        let clean = (!dirty).then_some(version);
        inner.docs.insert(path, Entry { uri, doc, version, dirty, clean, last_change, disk });
        self.ticks.send_replace(last_change);
    }

    /// Applies one `didChange`: its content changes in order, then its version. A version not
    /// newer than the document's is refused, since applying it would reorder edits. `arrival` is
    /// the notification's place among the messages read from the editor (see `Following::answered`,
    /// which reads it).
    pub fn change<'t>(
        &self,
        uri: &Url,
        version: i32,
        changes: impl IntoIterator<Item = (Option<(Position, Position)>, &'t str)>,
        enc: PositionEncoding,
        arrival: u64,
    ) -> Result<(), SyncError> {
        let mut inner = self.lock();
        let Inner { docs, paths, tracks, clock, .. } = &mut *inner;
        let path = paths.get(uri).ok_or(SyncError::NotOpen)?;
        let entry = docs.get_mut(path).ok_or(SyncError::NotOpen)?;
        if version <= entry.version {
            return Err(SyncError::Stale { current: entry.version, got: version });
        }
        let mut following: Vec<&mut Followed> = tracks.values_mut().filter(|f| &f.path == path).collect();
        for (range, text) in changes {
            let replaced = entry.doc.apply_change(range, text, enc);
            // An editor may send an applied edit and the user's next keystrokes in one
            // notification, so every intermediate text counts.
            for f in &mut following {
                f.track.observe(replaced.start.get()..replaced.end.get(), text, entry.doc.rope(), version, arrival);
            }
        }
        for f in &mut following {
            f.track.end_of_notification();
            f.publish();
        }
        entry.version = version;
        entry.dirty = true;
        *clock += 1;
        entry.last_change = *clock;
        self.ticks.send_replace(*clock);
        Ok(())
    }

    /// Forgets a document the editor closed; returns its real path.
    pub fn close(&self, uri: &Url) -> Result<PathBuf, SyncError> {
        let mut inner = self.lock();
        let path = inner.paths.remove(uri).ok_or(SyncError::NotOpen)?;
        inner.docs.remove(&path);
        Ok(path)
    }

    /// Records that the editor saved a document.
    pub fn saved(&self, uri: &Url) -> Result<(), SyncError> {
        let mut inner = self.lock();
        let Inner { docs, paths, .. } = &mut *inner;
        let entry = paths.get(uri).and_then(|p| docs.get_mut(p)).ok_or(SyncError::NotOpen)?;
        entry.dirty = false;
        entry.clean = Some(entry.version);
        entry.disk = Some(entry.doc.rope().clone());
        // A save is news to whoever waits on the documents (an edit waiting for the editor's
        // own write), though the text did not change.
        self.ticks.send_modify(|_| {});
        Ok(())
    }

    /// Waits until the document at `path` was saved at `version` or later, or its file holds
    /// what `on_disk` finds, at most until `deadline`; says whether either came.
    pub async fn wait_saved(
        &self,
        path: &Path,
        version: i32,
        on_disk: impl Fn() -> bool,
        deadline: tokio::time::Instant,
    ) -> bool {
        let mut ticks = self.ticks.subscribe();
        loop {
            let saved = self.lock().docs.get(path).is_some_and(|e| e.clean.is_some_and(|c| c >= version));
            if saved || on_disk() {
                return true;
            }
            match tokio::time::timeout_at(deadline, ticks.changed()).await {
                Ok(Ok(())) => {}
                _ => return false,
            }
        }
    }

    /// Marks the document at `path` clean if it is still at `version` (the server wrote that very
    /// text to disk itself).
    pub fn mark_clean(&self, path: &Path, version: i32) {
        if let Some(entry) = self.lock().docs.get_mut(path) {
            if entry.version == version {
                entry.dirty = false;
                entry.clean = Some(version);
                entry.disk = Some(entry.doc.rope().clone());
            }
        }
    }

    /// Whether the document at `path` was clean at `version`: its text then was the file's (it
    /// was saved at that version, or opened clean). An edit computed while the buffer was dirty
    /// may land on a version saved meanwhile, which makes it an edit of a clean buffer.
    pub fn clean_at(&self, path: &Path, version: i32) -> bool {
        self.lock().docs.get(path).is_some_and(|e| e.clean == Some(version))
    }

    /// The open document at the real path `path`, with its file's text as last known.
    pub fn get_with_disk(&self, path: &Path) -> Option<(DocState, Option<Rope>)> {
        self.lock().docs.get(path).map(|e| (state(e), e.disk.clone()))
    }

    /// Records `disk` as the file's text of the open document at `path`.
    pub fn set_disk(&self, path: &Path, disk: Rope) {
        if let Some(entry) = self.lock().docs.get_mut(path) {
            entry.disk = Some(disk);
        }
    }

    /// The open document at the real path `path`.
    pub fn get(&self, path: &Path) -> Option<DocState> {
        self.lock().docs.get(path).map(state)
    }

    /// The open document the client calls `uri`.
    pub fn get_by_uri(&self, uri: &Url) -> Option<DocState> {
        let inner = self.lock();
        inner.paths.get(uri).and_then(|p| inner.docs.get(p)).map(state)
    }

    /// Every open document, by real path.
    pub fn all(&self) -> Vec<(PathBuf, DocState)> {
        self.lock().docs.iter().map(|(p, e)| (p.clone(), state(e))).collect()
    }

    /// Whether a document at `path`, or anywhere below it, is open.
    pub fn any_open_under(&self, path: &Path) -> bool {
        self.lock().docs.keys().any(|p| p.starts_with(path))
    }

    /// A snapshot of every open document, for one tool call.
    pub fn overlay(&self) -> Overlay {
        let inner = self.lock();
        let docs: BTreeMap<PathBuf, OpenDocument> = inner
            .docs
            .iter()
            .map(|(p, e)| {
                (
                    p.clone(),
                    OpenDocument { doc: e.doc.clone(), version: e.version, dirty: e.dirty, stamp: e.last_change },
                )
            })
            .collect();
        Overlay::from_docs(docs)
    }

    /// Waits until one of `docs` (path and a version of it) has moved past that version or was
    /// closed, at most until `deadline`; says whether one did.
    pub async fn wait_any_newer(&self, docs: &[(&Path, i32)], deadline: tokio::time::Instant) -> bool {
        let mut ticks = self.ticks.subscribe();
        loop {
            if docs.iter().any(|(path, version)| self.get(path).is_none_or(|d| d.version > *version)) {
                return true;
            }
            match tokio::time::timeout_at(deadline, ticks.changed()).await {
                Ok(Ok(())) => {}
                _ => return false,
            }
        }
    }

    /// Starts following an edit sent for the document at `path`, if it is still at `version`
    /// with change stamp `stamp` (the text the edit was computed on); `None` when it moved on, so
    /// the edit must not be sent. Follow before sending, so that no change it causes is missed.
    pub(crate) fn follow(self: &Arc<Self>, path: &Path, version: i32, stamp: u64, sent: Sent) -> Option<Following> {
        let mut inner = self.lock();
        let doc = inner.docs.get(path)?;
        if doc.version != version || doc.last_change != stamp {
            return None;
        }
        let id = inner.next_track;
        inner.next_track += 1;
        let (tx, rx) = watch::channel(Verdict::Open);
        inner.tracks.insert(id, Followed { path: path.to_path_buf(), track: Track::new(sent, version), verdict: tx });
        drop(inner);
        Some(Following { store: self.clone(), id, verdict: rx })
    }

    fn with_track(&self, id: u64, f: impl FnOnce(&mut Followed)) {
        if let Some(followed) = self.lock().tracks.get_mut(&id) {
            f(followed);
            followed.publish();
        }
    }
}

fn state(e: &Entry) -> DocState {
    DocState {
        uri: e.uri.clone(),
        rope: e.doc.rope().clone(),
        version: e.version,
        dirty: e.dirty,
        last_change: e.last_change,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(name: &str) -> Url {
        Url::parse(&format!("file:///w/{name}")).expect("url")
    }

    #[test]
    fn changes_apply_in_order_and_stale_versions_are_refused() {
        let store = Store::default();
        store.open(uri("a"), PathBuf::from("/w/a"), Document::from_text("hello\n"), 1, false, None);
        let r = |l, c| Position::new(l, c);
        let ok = store.change(
            &uri("a"),
            2,
            [(Some((r(0, 0), r(0, 1))), "J"), (Some((r(0, 5), r(0, 5))), "!")],
            PositionEncoding::Utf16,
            1,
        );
        assert_eq!(ok, Ok(()));
        let got = store.get(Path::new("/w/a")).expect("open");
        assert_eq!((got.rope.to_string(), got.version, got.dirty), ("Jello!\n".to_owned(), 2, true));
        let stale = store.change(&uri("a"), 2, [(None, "lost")], PositionEncoding::Utf16, 2);
        assert_eq!(stale, Err(SyncError::Stale { current: 2, got: 2 }));
        assert_eq!(store.change(&uri("b"), 9, [(None, "x")], PositionEncoding::Utf16, 3), Err(SyncError::NotOpen));
        assert_eq!(store.saved(&uri("a")), Ok(()));
        assert!(!store.get(Path::new("/w/a")).expect("open").dirty);
        assert_eq!(store.close(&uri("a")), Ok(PathBuf::from("/w/a")));
        assert!(store.overlay().is_empty());
    }

    /// Follows replacing bytes `range` of the document at /w/a (version 1) with `text`.
    fn follow(store: &Arc<Store>, range: std::ops::Range<usize>, text: &str) -> Following {
        let doc = store.get(Path::new("/w/a")).expect("open");
        let pos = |o| crate::text::offset_to_position(&doc.rope, crate::text::Offset::new(o), PositionEncoding::Utf8);
        let sent = Sent {
            base: doc.rope.clone(),
            changes: vec![(range.clone(), text.to_owned())],
            positions: vec![(pos(range.start), pos(range.end))],
            enc: PositionEncoding::Utf8,
            checked: false,
        };
        store.follow(Path::new("/w/a"), doc.version, doc.last_change, sent).expect("still at its version")
    }

    #[test]
    fn a_followed_edit_is_seen_among_intermediate_texts() {
        let store = Arc::new(Store::default());
        store.open(uri("a"), PathBuf::from("/w/a"), Document::from_text("ab"), 1, false, None);
        let following = follow(&store, 1..1, "X");
        // The edit and a keystroke after it arrive in one notification.
        let r = |c| Position::new(0, c);
        store
            .change(&uri("a"), 5, [(Some((r(1), r(1))), "X"), (Some((r(3), r(3))), "!")], PositionEncoding::Utf8, 1)
            .expect("change");
        assert_eq!(following.verdict(), Verdict::Landed { version: 5, typed: true });
        drop(following);
        assert!(store.lock().tracks.is_empty());
    }

    #[test]
    fn an_edit_is_not_followed_from_a_text_that_moved_on() {
        let store = Arc::new(Store::default());
        store.open(uri("a"), PathBuf::from("/w/a"), Document::from_text("ab"), 1, false, None);
        let doc = store.get(Path::new("/w/a")).expect("open");
        store.change(&uri("a"), 2, [(None, "abc")], PositionEncoding::Utf8, 1).expect("change");
        let sent = Sent {
            base: doc.rope,
            changes: Vec::new(),
            positions: Vec::new(),
            enc: PositionEncoding::Utf8,
            checked: false,
        };
        assert!(store.follow(Path::new("/w/a"), 1, doc.last_change, sent).is_none());
    }

    #[test]
    fn an_added_final_break_still_counts() {
        let store = Arc::new(Store::default());
        store.open(uri("a"), PathBuf::from("/w/a"), Document::from_text("x\r\n"), 1, false, None);
        let following = follow(&store, 3..3, "no break");
        let end = Position::new(1, 0);
        store.change(&uri("a"), 2, [(Some((end, end)), "no break\r\n")], PositionEncoding::Utf8, 1).expect("change");
        assert_eq!(following.verdict(), Verdict::Landed { version: 2, typed: false });
    }
}
