//! One root's journal on disk.
//!
//! ```text
//! <dir>/<root name>-<hash of the root path>/
//!   root            the root's path, for people reading the directory
//!   changes/N.json  changeset N (ids count up from 1 per root)
//!   blobs/HASH      file contents named by their BLAKE3 hash
//!   blobs/HASH.d    or the same contents as a delta: another blob and the hunks that make it
//!                   this one (an edit's new text, when its old text is a blob already)
//!   reads/VERSION   texts reads showed, so a stale edit can be shown what changed since
//! ```
//!
//! Writers share the directory without a lock. A changeset is written to a temp file and then
//! hard-linked to `N.json` for the next free N: `link` fails when the name exists, so two writers
//! can never take the same id or overwrite each other's record; the loser tries the next number.
//! Blobs are written to a temp file and renamed into place (the same name always holds the same
//! bytes). A delta names its base blob and how many deltas deep it is, at most
//! [`DELTA_DEPTH_MAX`]: an edit of a file the journal already holds costs a record of what it
//! changed, not another copy of the file. Both are fsynced, with their directory, before the call that made the change answers,
//! so a change answered as applied is in history and can be undone after a crash. The one
//! exception is a change that lives in editor buffers only ([`Durable::Soon`]): its changeset is
//! written before the answer and synced just after it, since a crash of the machine loses the
//! change itself. Pruning drops the oldest changesets and then blobs no changeset names, sparing blobs
//! younger than a minute, which a writer may be about to name.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::{apply_hunks, hash_of, Changeset, FileRecord, Hunk};
use crate::error::{Error, ErrorKind, Result};
use crate::sys;

/// When a changeset must be on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durable {
    /// Before the call that made the change answers: the change is on disk.
    Now,
    /// Just after the answer, on the journal's syncing thread ([`sync_pending`] waits for it):
    /// the change lives in editor buffers only, which a crash of the machine loses whatever the
    /// journal holds. A crash of tether alone loses nothing: the record is written. (A crash
    /// of the machine before the sync can leave the name on an empty record, which reads skip,
    /// as after a crash between a `Now` record's link and its sync.)
    Soon,
}

/// Renames the written blob `tmp` to `path`: its bytes synced before the rename, its directory
/// after, so that it is durable before the changeset naming it is published. Always so, unlike
/// a changeset: a blob's name is its content's hash, and a name left on bytes a crash lost would
/// be taken as that content by every later record.
fn put(tmp: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Waits until every changeset published [`Durable::Soon`] so far is synced.
pub fn sync_pending() {
    later::wait();
}

/// The journal's syncing thread: it syncs, in order, the changesets published [`Durable::Soon`].
mod later {
    use std::fs::File;
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::sync::OnceLock;

    enum Job {
        /// Sync this record's bytes, then its directory.
        Sync(File, PathBuf),
        /// Say when every job before this one is done.
        Barrier(mpsc::SyncSender<()>),
    }

    fn queue() -> Option<&'static mpsc::Sender<Job>> {
        static QUEUE: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
        QUEUE
            .get_or_init(|| {
                let (tx, rx) = mpsc::channel::<Job>();
                let spawned = std::thread::Builder::new().name("tether-journal-sync".into()).spawn(move || {
                    for job in rx {
                        match job {
                            Job::Sync(file, dir) => {
                                if let Err(e) = file.sync_data().and_then(|()| super::sync_dir(&dir)) {
                                    tracing::warn!("journal: syncing a record in {}: {e}", dir.display());
                                }
                            }
                            Job::Barrier(done) => {
                                let _ = done.send(());
                            }
                        }
                    }
                });
                spawned.ok().map(|_| tx)
            })
            .as_ref()
    }

    /// Syncs `file` and then `dir` on the syncing thread (here, when there is none).
    pub fn sync(file: File, dir: PathBuf) {
        let job = Job::Sync(file, dir);
        let job = match queue() {
            Some(q) => match q.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        if let Job::Sync(file, dir) = job {
            if let Err(e) = file.sync_data().and_then(|()| super::sync_dir(&dir)) {
                tracing::warn!("journal: syncing a record in {}: {e}", dir.display());
            }
        }
    }

    /// Waits for every sync asked for so far.
    pub fn wait() {
        let Some(q) = queue() else { return };
        let (tx, rx) = mpsc::sync_channel(1);
        if q.send(Job::Barrier(tx)).is_ok() {
            let _ = rx.recv();
        }
    }
}

/// Blobs younger than this are never pruned: a writer may have just written one for a changeset
/// it has not published yet.
const BLOB_GRACE: Duration = Duration::from_secs(60);

/// The longest chain of deltas a blob is rebuilt through: the next one is kept whole.
pub const DELTA_DEPTH_MAX: u32 = 32;

/// A blob kept as another blob and the hunks that turn it into this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    /// The hash of the blob it starts from.
    pub base: String,
    /// Deltas between it and a blob kept whole, itself included (1: its base is whole).
    pub depth: u32,
    /// Replacements in the base's bytes, in order: `at` and `len` are in the base.
    pub hunks: Vec<Hunk>,
}

/// How many bytes the kept reads of one root may take.
const READS_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// Reads larger than this are not kept.
const READ_KEPT_MAX: u64 = 1024 * 1024;

/// One root's journal directory.
#[derive(Debug, Clone)]
pub struct RootStore {
    root: PathBuf,
    dir: PathBuf,
    label: String,
}

impl RootStore {
    /// The journal of `root` under the journal directory `base`.
    pub fn new(base: &Path, root: &Path) -> RootStore {
        let label = root
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                    .collect()
            })
            .filter(|n: &String| !n.is_empty())
            .unwrap_or_else(|| "root".to_owned());
        let hash = hash_of(root.as_os_str().as_encoded_bytes());
        let dir = base.join(format!("{label}-{}", &hash[..16]));
        RootStore { root: root.to_owned(), dir, label }
    }

    /// The workspace root this journal belongs to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root's name, as ids of its changesets carry it when it is not the first root.
    pub fn label(&self) -> &str {
        &self.label
    }

    fn changes(&self) -> PathBuf {
        self.dir.join("changes")
    }

    fn blobs(&self) -> PathBuf {
        self.dir.join("blobs")
    }

    fn reads(&self) -> PathBuf {
        self.dir.join("reads")
    }

    /// Creates the directories (private to the user) on first use.
    fn ensure(&self) -> Result<()> {
        let io = |e: io::Error| journal_error(&self.dir, &e);
        if !self.changes().is_dir() || !self.blobs().is_dir() || !self.reads().is_dir() {
            for d in [self.changes(), self.blobs(), self.reads()] {
                sys::create_private_dir_all(&d).map_err(io)?;
            }
            let _ = fs::write(self.dir.join("root"), format!("{}\n", self.root.display()));
        }
        Ok(())
    }

    /// Publishes `changeset` under the next free id and returns it, synced as `durable` says.
    pub fn publish(&self, changeset: &Changeset, durable: Durable) -> Result<u64> {
        self.ensure()?;
        let io = |e: io::Error| journal_error(&self.dir, &e);
        let json = serde_json::to_vec(changeset).map_err(|e| Error::new(ErrorKind::IoError, e.to_string()))?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(self.changes()).map_err(io)?;
        tmp.as_file_mut().write_all(&json).map_err(io)?;
        let mut n = self.last_id()? + 1;
        loop {
            match fs::hard_link(tmp.path(), self.changes().join(format!("{n}.json"))) {
                Ok(()) => {
                    // On disk before the call answers: a crash right after must not lose it from
                    // history and undo. Its bytes are synced after the link, so that one commit
                    // of the filesystem's journal holds both (ext4 commits the link with the
                    // blocks the sync allocates; the directory's sync then finds it done). A
                    // crash in between can leave the name on an empty record, which no call
                    // answered for and which reads skip as unreadable.
                    match durable {
                        Durable::Now => {
                            tmp.as_file().sync_data().map_err(io)?;
                            sync_dir(&self.changes()).map_err(io)?;
                        }
                        Durable::Soon => later::sync(tmp.into_file(), self.changes()),
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(io(e)),
            }
        }
    }

    /// The ids present, unordered.
    fn ids(&self) -> Result<Vec<u64>> {
        let entries = match fs::read_dir(self.changes()) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(journal_error(&self.dir, &e)),
        };
        Ok(entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json")?.parse::<u64>().ok())
            .collect())
    }

    fn last_id(&self) -> Result<u64> {
        Ok(self.ids()?.into_iter().max().unwrap_or(0))
    }

    /// Changeset `n`, if kept.
    pub fn get(&self, n: u64) -> Result<Option<Changeset>> {
        let path = self.changes().join(format!("{n}.json"));
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Error::new(ErrorKind::IoError, format!("journal record {}: unreadable ({e})", path.display()))
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(journal_error(&self.dir, &e)),
        }
    }

    /// Every changeset kept, with its id (unreadable records are skipped with a warning).
    pub fn list(&self) -> Result<Vec<(u64, Changeset)>> {
        let mut out = Vec::new();
        for n in self.ids()? {
            match self.get(n) {
                Ok(Some(c)) => out.push((n, c)),
                Ok(None) => {}
                Err(e) => tracing::warn!("{e}"),
            }
        }
        Ok(out)
    }

    /// Keeps `bytes` under their hash and returns it.
    pub fn put_blob(&self, bytes: &[u8]) -> Result<String> {
        self.ensure()?;
        let hash = hash_of(bytes);
        let path = self.blobs().join(&hash);
        if path.exists() {
            // Touched, so pruning sees it as young while the changeset naming it is written.
            touch(&path);
            return Ok(hash);
        }
        let io = |e: io::Error| journal_error(&self.dir, &e);
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(self.blobs()).map_err(io)?;
        tmp.as_file_mut().write_all(bytes).map_err(io)?;
        sys::make_private(tmp.as_file()).map_err(io)?;
        put(tmp, &path).map_err(io)?;
        Ok(hash)
    }

    /// Whether blob `hash` is kept, and how many deltas deep (0: whole). A kept blob is touched,
    /// so that pruning spares it while the changeset about to name it (or a delta on it) is
    /// written.
    pub fn has_blob(&self, hash: &str) -> Option<u32> {
        let whole = self.blobs().join(hash);
        let delta = self.blobs().join(format!("{hash}.d"));
        let depth = if whole.is_file() {
            touch(&whole);
            0
        } else {
            let d: Delta = serde_json::from_slice(&fs::read(&delta).ok()?).ok()?;
            touch(&delta);
            d.depth
        };
        Some(depth)
    }

    /// Keeps the blob `hash` as `delta` (its base kept already).
    pub fn put_delta(&self, hash: &str, delta: &Delta) -> Result<()> {
        self.ensure()?;
        let path = self.blobs().join(format!("{hash}.d"));
        if path.exists() || self.blobs().join(hash).exists() {
            return Ok(());
        }
        let io = |e: io::Error| journal_error(&self.dir, &e);
        let json = serde_json::to_vec(delta).map_err(|e| Error::new(ErrorKind::IoError, e.to_string()))?;
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(self.blobs()).map_err(io)?;
        tmp.as_file_mut().write_all(&json).map_err(io)?;
        sys::make_private(tmp.as_file()).map_err(io)?;
        put(tmp, &path).map_err(io)?;
        Ok(())
    }

    /// The bytes of blob `hash`, rebuilt through its deltas when it is kept as one, and checked
    /// against the hash then.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>> {
        if !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::invalid(format!("journal blob {hash}: not a hash")));
        }
        let gone = |e: &dyn std::fmt::Display| {
            Error::new(
                ErrorKind::NotFound,
                format!("the journal no longer has the file contents this change needs ({e})"),
            )
        };
        match fs::read(self.blobs().join(hash)) {
            Ok(bytes) => return Ok(bytes),
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(gone(&e)),
            Err(_) => {}
        }
        let delta = match fs::read(self.blobs().join(format!("{hash}.d"))) {
            Ok(bytes) => serde_json::from_slice::<Delta>(&bytes).map_err(|e| gone(&e))?,
            Err(e) => return Err(gone(&e)),
        };
        // Each step is one delta shallower, so a damaged chain cannot loop.
        let mut chain = vec![delta];
        let mut bytes = loop {
            let last = chain.last().expect("a delta");
            match fs::read(self.blobs().join(&last.base)) {
                Ok(bytes) => break bytes,
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(gone(&e)),
                Err(e) => {
                    let next: Delta = match fs::read(self.blobs().join(format!("{}.d", last.base))) {
                        Ok(b) => serde_json::from_slice(&b).map_err(|e| gone(&e))?,
                        Err(_) => return Err(gone(&e)),
                    };
                    if next.depth >= last.depth {
                        return Err(gone(&"a delta chain that does not end"));
                    }
                    chain.push(next);
                }
            }
        };
        for d in chain.iter().rev() {
            bytes = apply_hunks(&bytes, &d.hunks).ok_or_else(|| gone(&"a delta that does not fit its base"))?;
        }
        if hash_of(&bytes) != hash {
            return Err(gone(&"its copy rebuilt from deltas does not match its hash"));
        }
        Ok(bytes)
    }

    /// Keeps a read's bytes under its version token.
    pub fn keep_read(&self, version: &str, bytes: &[&[u8]]) -> Result<()> {
        let size: u64 = bytes.iter().map(|b| b.len() as u64).sum();
        if size > READ_KEPT_MAX {
            return Ok(());
        }
        let path = self.reads().join(version);
        if path.exists() {
            return Ok(());
        }
        self.ensure()?;
        let io = |e: io::Error| journal_error(&self.dir, &e);
        let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(self.reads()).map_err(io)?;
        for b in bytes {
            tmp.as_file_mut().write_all(b).map_err(io)?;
        }
        tmp.persist(&path).map_err(|e| io(e.error))?;
        prune_oldest(&self.reads(), READS_MAX_BYTES);
        Ok(())
    }

    /// The bytes a read of version `version` showed.
    pub fn read_kept(&self, version: &str) -> Option<Vec<u8>> {
        if !version.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        fs::read(self.reads().join(version)).ok()
    }

    /// Drops the oldest changesets while the journal holds more than `max_bytes` (never the
    /// newest), then the blobs no remaining changeset names.
    ///
    /// What counts is the records and the blobs they name: a blob no changeset names yet is a
    /// writer's that is about to publish, and is neither counted nor removed while young.
    pub fn prune(&self, max_bytes: u64) {
        if dir_size(&self.changes()) + dir_size(&self.blobs()) <= max_bytes {
            return;
        }
        let Ok(mut ids) = self.ids() else { return };
        ids.sort_unstable();
        let kept: Vec<(u64, u64, u64, HashSet<String>)> = ids
            .iter()
            .filter_map(|&n| {
                let path = self.changes().join(format!("{n}.json"));
                let len = fs::metadata(&path).ok()?.len();
                let c = self.get(n).ok().flatten()?;
                let mut hashes = HashSet::new();
                for f in &c.files {
                    collect_hashes(f, &mut hashes);
                }
                Some((n, len, c.time_ms, hashes))
            })
            .collect();
        let mut refs: HashMap<&str, usize> = HashMap::new();
        for (.., hashes) in &kept {
            for h in hashes {
                *refs.entry(h).or_default() += 1;
            }
        }
        let blob_len = |h: &str| {
            fs::metadata(self.blobs().join(h))
                .or_else(|_| fs::metadata(self.blobs().join(format!("{h}.d"))))
                .map_or(0, |m| m.len())
        };
        let mut live: u64 = kept.iter().map(|k| k.1).sum::<u64>() + refs.keys().map(|h| blob_len(h)).sum::<u64>();
        // Down to 90% of the bound, so that pruning is not repeated on every change.
        let target = max_bytes / 10 * 9;
        // A blob only dropped changesets named, with the newest such changeset's time: one not
        // written or touched since is no one else's.
        let mut released: HashMap<String, u64> = HashMap::new();
        for (n, len, time_ms, hashes) in &kept[..kept.len().saturating_sub(1)] {
            if live <= target {
                break;
            }
            let _ = fs::remove_file(self.changes().join(format!("{n}.json")));
            live -= len;
            for h in hashes {
                if let Some(count) = refs.get_mut(h.as_str()) {
                    *count -= 1;
                    if *count == 0 {
                        live -= blob_len(h);
                        released.insert(h.clone(), *time_ms);
                    }
                }
            }
        }
        refs.retain(|_, count| *count > 0);
        let mut named: HashSet<String> = refs.keys().map(|h| (*h).to_owned()).collect();
        // A delta's base (and its base's) stays while the delta does.
        let mut bases: Vec<String> = named.iter().cloned().collect();
        while let Some(h) = bases.pop() {
            if let Some(d) = self.delta(&h) {
                if named.insert(d.base.clone()) {
                    bases.push(d.base);
                }
            }
        }
        self.remove_unnamed_blobs(&named, &released);
    }

    /// Blob `hash`'s delta, when it is kept as one.
    fn delta(&self, hash: &str) -> Option<Delta> {
        if self.blobs().join(hash).exists() {
            return None;
        }
        serde_json::from_slice(&fs::read(self.blobs().join(format!("{hash}.d"))).ok()?).ok()
    }

    /// Removes every blob whose hash is not in `named` and that is older than [`BLOB_GRACE`] or
    /// (`released`) was last written no later than the dropped changeset that named it.
    fn remove_unnamed_blobs(&self, named: &HashSet<String>, released: &HashMap<String, u64>) {
        let Ok(entries) = fs::read_dir(self.blobs()) else { return };
        for e in entries.filter_map(|e| e.ok()) {
            let file = e.file_name().to_string_lossy().into_owned();
            let name = file.strip_suffix(".d").unwrap_or(&file).to_owned();
            if name.starts_with('.') || named.contains(&name) {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            let modified = meta.modified().ok();
            let young = modified.and_then(|m| m.elapsed().ok()).is_none_or(|age| age < BLOB_GRACE);
            let modified_ms = modified
                .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(u64::MAX, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            let untouched = released.get(&name).is_some_and(|&t| modified_ms <= t);
            if !young || untouched {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

fn collect_hashes(f: &FileRecord, out: &mut HashSet<String>) {
    for side in [&f.before, &f.after].into_iter().flatten() {
        if side.kept {
            out.insert(side.hash.clone());
        }
    }
    for e in &f.entries {
        collect_hashes(e, out);
    }
}

/// The bytes of the regular files directly in `dir`.
fn dir_size(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()?.metadata().ok()).filter(|m| m.is_file()).map(|m| m.len()).sum())
        .unwrap_or(0)
}

/// Removes the oldest files of `dir` (by modification time) while it holds more than `max`.
fn prune_oldest(dir: &Path, max: u64) {
    if dir_size(dir) <= max {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    files.sort();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    for (_, len, path) in files {
        if total <= max / 10 * 9 {
            break;
        }
        if fs::remove_file(path).is_ok() {
            total -= len;
        }
    }
}

/// Sets the modification time of `path` to now (pruning spares what is young).
fn touch(path: &Path) {
    let _ = fs::File::options().append(true).open(path).and_then(|f| f.set_modified(SystemTime::now()));
}

/// Makes the entries of `dir` (a name just linked or renamed into it) durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    sys::sync_dir(dir)
}

fn journal_error(dir: &Path, e: &io::Error) -> Error {
    Error::new(ErrorKind::IoError, format!("the change journal in {}: {e}", dir.display()))
}
