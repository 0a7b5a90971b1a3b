//! The change journal: every change tether applies, kept so it can be listed, attributed and
//! taken back, without git and across restarts.
//!
//! Each applied plan becomes one [`Changeset`]: who asked (the MCP client's name and version,
//! `editor`, or `cli`), which tool, when, and per file what the operation was and enough to
//! reverse it exactly: the bytes after the change are kept once in a content-addressed blob
//! store (shared by every changeset that leaves or starts from the same bytes), the bytes before
//! as the reverse of the change against them, both named by their BLAKE3 hash.
//!
//! The journal lives in the user's state directory (`$XDG_STATE_HOME/tether/journal/`), one
//! directory per workspace root (`store.rs`), never in the workspace. Every process that applies
//! changes to a root (`tether lsp`, attached or standalone `tether mcp`, `tether call`) writes
//! the same directory; a changeset is published with one exclusive link, so concurrent writers
//! never lose a record or reuse an id. Its size is bounded: the oldest changesets go first.
//!
//! `record.rs` is the sink that records what it applies; `overlap.rs` names the changes a call
//! met when its change no longer applies; `merge.rs` reverses a change over later
//! ones (three-way); `undo.rs` turns changesets back into a plan for the normal sinks.

pub mod merge;
mod overlap;
mod record;
mod store;
mod undo;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::config::JournalSettings;
use crate::error::{Error, ErrorKind, Result};

pub use overlap::{who_changed, Rerun};
pub use record::Recording;
pub use store::{sync_pending, Durable};
pub use undo::plan_undo;

use self::store::RootStore;

/// The version token of a file's bytes, as reads show it and edits may pass back: the first
/// twelve hex digits of their BLAKE3 hash.
pub fn version_of(bytes: &[&[u8]]) -> String {
    let mut hash = hash_pieces(bytes.iter().copied());
    hash.truncate(VERSION_LEN);
    hash
}

/// How many changesets a root's journal records between two checks of its size, at most.
const PRUNE_EVERY: u64 = 16;

/// Hex digits of a version token.
const VERSION_LEN: usize = 12;

/// The full hash naming a blob.
fn hash_of(bytes: &[u8]) -> String {
    hash_pieces([bytes])
}

/// BLAKE3 of the concatenated `pieces` (64 hex digits) without concatenating them. Over
/// [`SPLIT_MIN`] bytes the hash's tree is cut into subtrees hashed on threads of their own (the
/// same hash: BLAKE3 is a tree of 1 KiB chunks, and its halves can be hashed apart and joined).
fn hash_pieces<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> String {
    hash_split(&pieces.into_iter().collect::<Vec<_>>(), SPLIT_MIN)
}

/// The texts over which hashing is split across threads.
const SPLIT_MIN: usize = 2 * 1024 * 1024;

/// How many times a large text's tree is halved for threads: up to four subtrees at once.
const SPLIT_DEPTH: u32 = 2;

/// [`hash_pieces`] with subtrees of more than `min` bytes halved (the parameter is for tests).
fn hash_split(pieces: &[&[u8]], min: usize) -> String {
    use blake3::hazmat::{left_subtree_len, merge_subtrees_root, Mode};
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    if total <= min.max(blake3::CHUNK_LEN) {
        let mut hasher = blake3::Hasher::new();
        feed(&mut hasher, pieces, 0, total);
        return hasher.finalize().to_hex().to_string();
    }
    let mid = left_subtree_len(total as u64) as usize;
    let (left, right) = halves(pieces, (0, mid, total), min, SPLIT_DEPTH - 1);
    merge_subtrees_root(&left, &right, Mode::Hash).to_hex().to_string()
}

/// The chaining values of the subtrees `start..mid` and `mid..end` of `pieces`, the left one on
/// another thread.
fn halves(
    pieces: &[&[u8]],
    (start, mid, end): (usize, usize, usize),
    min: usize,
    depth: u32,
) -> (blake3::hazmat::ChainingValue, blake3::hazmat::ChainingValue) {
    std::thread::scope(|s| {
        let left = s.spawn(|| subtree_cv(pieces, start, mid, min, depth));
        let right = subtree_cv(pieces, mid, end, min, depth);
        (left.join().unwrap_or_else(|_| subtree_cv(pieces, start, mid, min, 0)), right)
    })
}

/// The chaining value of the subtree of bytes `start..end` of `pieces`, halved `depth` more
/// times while over `min` bytes.
fn subtree_cv(pieces: &[&[u8]], start: usize, end: usize, min: usize, depth: u32) -> blake3::hazmat::ChainingValue {
    use blake3::hazmat::{left_subtree_len, merge_subtrees_non_root, HasherExt as _, Mode};
    if depth == 0 || end - start <= min.max(blake3::CHUNK_LEN) {
        let mut hasher = blake3::Hasher::new();
        hasher.set_input_offset(start as u64);
        feed(&mut hasher, pieces, start, end);
        return hasher.finalize_non_root();
    }
    let mid = start + left_subtree_len((end - start) as u64) as usize;
    let (left, right) = halves(pieces, (start, mid, end), min, depth - 1);
    merge_subtrees_non_root(&left, &right, Mode::Hash)
}

/// Feeds bytes `start..end` of `pieces` to `hasher`. Small pieces (a rope's leaves) are gathered
/// into 64 KiB blocks first, so that the hasher works on many of its 1 KiB chunks at once (its
/// SIMD path) rather than on one at a time.
fn feed(hasher: &mut blake3::Hasher, pieces: &[&[u8]], start: usize, end: usize) {
    const BLOCK: usize = 64 * 1024;
    let mut block = Vec::new();
    let mut at = 0;
    for piece in pieces {
        let (from, to) = (at, at + piece.len());
        at = to;
        if to <= start || from >= end {
            continue;
        }
        let piece = &piece[start.saturating_sub(from)..piece.len() - to.saturating_sub(end)];
        if block.len() + piece.len() > BLOCK {
            hasher.update(&block);
            block.clear();
        }
        if piece.len() >= BLOCK {
            hasher.update(piece);
        } else {
            block.extend_from_slice(piece);
        }
    }
    hasher.update(&block);
}

/// `bytes` with `hunks` (in order, each `len` bytes at `at` in `bytes` replaced by its text)
/// applied; `None` when they do not fit. The reverse hunks of an edit turn its new text back
/// into its old text; a delta's hunks turn its base into the blob.
fn apply_hunks(bytes: &[u8], hunks: &[Hunk]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for h in hunks {
        if h.at < at || h.at + h.len > bytes.len() {
            return None;
        }
        out.extend_from_slice(&bytes[at..h.at]);
        out.extend_from_slice(h.text.as_bytes());
        at = h.at + h.len;
    }
    out.extend_from_slice(&bytes[at..]);
    Some(out)
}

/// Who asked for a change.
pub mod client {
    /// A call the editor made itself (`tether.callTool`).
    pub const EDITOR: &str = "editor";
    /// `tether call` on the command line.
    pub const CLI: &str = "cli";
    /// An MCP client that did not say its name.
    pub const UNKNOWN: &str = "unknown client";
}

/// What one file operation of a changeset was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// An existing text file changed.
    Edit,
    /// A new file.
    Create,
    /// An existing file replaced whole.
    Overwrite,
    /// A file, or a directory with everything in it, deleted.
    Delete,
    /// A file or directory moved (`from` → `path`).
    Rename,
    /// A directory created.
    Mkdir,
}

impl Op {
    /// The operation's name, as `history` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Edit => "edit",
            Op::Create => "create",
            Op::Overwrite => "overwrite",
            Op::Delete => "delete",
            Op::Rename => "rename",
            Op::Mkdir => "mkdir",
        }
    }
}

/// One side (before or after) of a file operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    /// BLAKE3 of the bytes (64 hex digits); its first twelve are the file's version token.
    pub hash: String,
    /// Their length.
    pub size: u64,
    /// Permission bits on disk, when the file was on disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// The bytes are in the blob store under `hash` (not kept: over the size a changeset keeps).
    #[serde(default)]
    pub kept: bool,
}

impl Side {
    /// The version token of these bytes.
    pub fn version(&self) -> &str {
        &self.hash[..VERSION_LEN]
    }
}

/// One replacement in a text: in an edit's record, one that turns the bytes after the change
/// back into the bytes before it; in a delta, one that turns its base into the blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    /// Byte offset in the text replaced in (the bytes after, for an edit's record).
    pub at: usize,
    /// Bytes replaced there.
    pub len: usize,
    /// What takes their place (the bytes before, for an edit's record).
    pub text: String,
}

/// One file operation of a changeset, with what it takes to reverse it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// What happened.
    pub op: Op,
    /// The file's real path (after a rename, where it went).
    pub path: PathBuf,
    /// A rename's source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<PathBuf>,
    /// The entry is a directory (a deleted or renamed directory, or one created).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dir: bool,
    /// The bytes before (none for a new file; for a rename, the destination it replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Side>,
    /// The bytes after (none for a delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Side>,
    /// An edit's bytes before, as replacements of the bytes after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverse: Vec<Hunk>,
    /// A deleted directory's entries, parents first, each a file or directory record of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<FileRecord>,
    /// Why this operation cannot be reversed, when it cannot (a binary or oversized file's bytes
    /// were not kept, a symlink was deleted with its directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reversible: Option<String>,
    /// Lines added and removed, for summaries.
    #[serde(default)]
    pub added: usize,
    /// Lines removed.
    #[serde(default)]
    pub removed: usize,
}

/// One applied change, as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Changeset {
    /// Its id, unique per workspace root (`12`; `12@lib` when its root is not the workspace's
    /// first): set when read, not stored.
    #[serde(skip)]
    pub id: String,
    /// When it was applied, in milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// The tool's name in its profile.
    pub tool: String,
    /// The profile the tool was called in.
    pub profile: String,
    /// Who asked: the MCP client's `name version`, `editor` or `cli`.
    pub client: String,
    /// What the tool said it did.
    pub summary: String,
    /// The call's arguments, shortened.
    pub args: String,
    /// The changesets this one undid (an undo).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes: Vec<String>,
    /// The file operations, in the order they were applied.
    pub files: Vec<FileRecord>,
    /// The root whose journal holds it (set when read).
    #[serde(skip)]
    pub root: usize,
}

impl Changeset {
    /// When it was applied.
    pub fn time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.time_ms)
    }

    /// Whether it touched `real` (as the file, a rename's source, or inside a deleted directory).
    pub fn touches(&self, real: &Path) -> bool {
        fn hit(r: &FileRecord, real: &Path) -> bool {
            r.path == real || r.from.as_deref() == Some(real) || r.entries.iter().any(|e| hit(e, real))
        }
        self.files.iter().any(|r| hit(r, real))
    }
}

/// What a call that applies changes is: recorded with each changeset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallInfo {
    /// The tool's name in its profile.
    pub tool: String,
    /// The profile's name.
    pub profile: String,
    /// Who asked.
    pub client: String,
    /// The arguments, shortened for the record.
    pub args: String,
}

impl CallInfo {
    /// The record of a call of `tool` in `profile` by `client` with `args` (long strings cut).
    pub fn new(tool: &str, profile: &str, client: &str, args: &serde_json::Value) -> CallInfo {
        CallInfo { tool: tool.to_owned(), profile: profile.to_owned(), client: client.to_owned(), args: shorten(args) }
    }
}

/// `args` as compact JSON with every string over 80 characters cut, at most 1000 characters.
fn shorten(args: &serde_json::Value) -> String {
    fn cut(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::String(s) if s.chars().count() > 80 => {
                let head: String = s.chars().take(77).collect();
                serde_json::Value::String(format!("{head}..."))
            }
            serde_json::Value::Array(a) => a.iter().map(cut).collect(),
            serde_json::Value::Object(o) => o.iter().map(|(k, v)| (k.clone(), cut(v))).collect(),
            other => other.clone(),
        }
    }
    let s = cut(args).to_string();
    if s.chars().count() > 1000 {
        s.chars().take(997).collect::<String>() + "..."
    } else {
        s
    }
}

/// The journal of a workspace: one store per root.
#[derive(Debug, Clone)]
pub struct Journal {
    roots: Vec<RootStore>,
    settings: JournalSettings,
}

impl Journal {
    /// The journal of the workspace with these (canonical) roots, under `settings`. Nothing is
    /// created until something is recorded.
    pub fn open(settings: &JournalSettings, roots: &[PathBuf]) -> Journal {
        Journal { roots: roots.iter().map(|r| RootStore::new(&settings.dir, r)).collect(), settings: settings.clone() }
    }

    /// The index of the root holding `real`: the deepest containing one.
    fn root_of(&self, real: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, s)| real.starts_with(s.root()))
            .max_by_key(|(_, s)| s.root().components().count())
            .map(|(i, _)| i)
    }

    /// The id of changeset `n` of root `root`.
    fn id(&self, root: usize, n: u64) -> String {
        if root == 0 {
            n.to_string()
        } else {
            format!("{n}@{}", self.roots[root].label())
        }
    }

    /// Parses an id into its root and number; `not_found` when no root has that name.
    fn parse_id(&self, id: &str) -> Result<(usize, u64)> {
        let bad =
            || Error::invalid(format!("`{id}` is not a changeset id: ids are numbers such as 12 (history lists them)"));
        let id = id.trim().trim_start_matches('#');
        let (n, root) = match id.split_once('@') {
            None => (id, 0),
            Some((n, label)) => {
                let root = self.roots.iter().position(|s| s.label() == label).ok_or_else(|| {
                    Error::new(ErrorKind::NotFound, format!("changeset {id}: no workspace root is called {label}"))
                })?;
                (n, root)
            }
        };
        let n = n.parse::<u64>().map_err(|_| bad())?;
        if self.roots.is_empty() {
            return Err(Error::new(ErrorKind::NotFound, format!("changeset {id}: the workspace has no roots")));
        }
        Ok((root, n))
    }

    /// Records `changeset` in the journal of the root holding its first file, synced as
    /// `durable` says, and returns its id.
    pub fn record(&self, mut changeset: Changeset, durable: Durable) -> Result<String> {
        let first = changeset.files.first().map(|f| f.path.clone()).unwrap_or_default();
        let root = self.root_of(&first).unwrap_or(0);
        let store = self.roots.get(root).ok_or_else(|| Error::invalid("the workspace has no roots"))?;
        changeset.root = root;
        let n = store.publish(&changeset, durable)?;
        // Measuring the journal lists every file in it: done on every 16th changeset, and on
        // one that kept much (by the size of the texts it kept, whole or as deltas).
        let kept: u64 = changeset
            .files
            .iter()
            .flat_map(|f| [&f.before, &f.after])
            .flatten()
            .filter(|s| s.kept)
            .map(|s| s.size)
            .sum();
        if n % PRUNE_EVERY == 0 || kept >= self.settings.max_bytes / 32 {
            store.prune(self.settings.max_bytes);
        }
        Ok(self.id(root, n))
    }

    /// Keeps `bytes` in the blob store of the root holding `real` (the bytes of a file before or
    /// after a change), so an undo can rebuild them.
    fn keep_blob(&self, real: &Path, bytes: &[u8]) -> Result<String> {
        let root = self.root_of(real).unwrap_or(0);
        let store = self.roots.get(root).ok_or_else(|| Error::invalid("the workspace has no roots"))?;
        store.put_blob(bytes)
    }

    /// Whether the blob store of the root holding `real` keeps blob `hash`, and how many deltas
    /// deep (0: whole).
    fn has_blob(&self, real: &Path, hash: &str) -> Option<u32> {
        self.roots.get(self.root_of(real).unwrap_or(0))?.has_blob(hash)
    }

    /// Keeps blob `hash` as `delta` in the blob store of the root holding `real`.
    fn keep_delta(&self, real: &Path, hash: &str, delta: &store::Delta) -> Result<()> {
        let root = self.root_of(real).unwrap_or(0);
        let store = self.roots.get(root).ok_or_else(|| Error::invalid("the workspace has no roots"))?;
        store.put_delta(hash, delta)
    }

    /// The bytes of blob `hash`, kept by the journal of `root`.
    fn blob(&self, root: usize, hash: &str) -> Result<Vec<u8>> {
        self.roots[root].blob(hash)
    }

    /// Every changeset of the workspace, newest first, each with `undone_by` worked out.
    pub fn list(&self) -> Result<Vec<Changeset>> {
        let mut all = Vec::new();
        for (root, store) in self.roots.iter().enumerate() {
            for (n, mut c) in store.list()? {
                c.id = self.id(root, n);
                c.root = root;
                all.push((root, n, c));
            }
        }
        all.sort_by(|a, b| b.2.time_ms.cmp(&a.2.time_ms).then(b.1.cmp(&a.1)));
        Ok(all.into_iter().map(|(_, _, c)| c).collect())
    }

    /// The changeset `id`.
    pub fn get(&self, id: &str) -> Result<Changeset> {
        let (root, n) = self.parse_id(id)?;
        let mut c = self.roots[root].get(n)?.ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("changeset {id}: not in the journal (it never existed, or it was dropped as the oldest)"),
            )
        })?;
        c.id = self.id(root, n);
        c.root = root;
        Ok(c)
    }

    /// Keeps the text a read showed (`bytes`, whose version is `version`) for a while, so that a
    /// later edit naming that version can be shown what changed since. Files over 1 MiB are not
    /// kept; nothing fails a read.
    pub fn keep_read(&self, real: &Path, version: &str, bytes: &[&[u8]]) {
        let Some(store) = self.root_of(real).and_then(|r| self.roots.get(r)) else { return };
        if let Err(e) = store.keep_read(version, bytes) {
            tracing::debug!("could not keep a read for the journal: {e}");
        }
    }

    /// The bytes a read with version `version` showed, when still kept.
    pub fn read_kept(&self, real: &Path, version: &str) -> Option<Vec<u8>> {
        let store = self.root_of(real).and_then(|r| self.roots.get(r))?;
        store.read_kept(version)
    }

    /// The bytes of `r` (a file of changeset `c`) before and after the change, where the
    /// journal has them.
    pub fn contents(&self, c: &Changeset, r: &FileRecord) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let blob = |side: &Option<Side>| side.as_ref().filter(|s| s.kept).and_then(|s| self.blob(c.root, &s.hash).ok());
        let after = blob(&r.after);
        let before = match r.op {
            Op::Edit => after.as_deref().and_then(|a| apply_hunks(a, &r.reverse)),
            _ => blob(&r.before),
        };
        (before, after)
    }

    /// The root path of the journal holding changeset `c`.
    pub fn root(&self, c: &Changeset) -> &Path {
        self.roots[c.root].root()
    }
}

/// Which changesets stand undone, and by which undo: an undo that was itself undone no longer
/// counts. `list` is any order.
pub fn undone_by(list: &[Changeset]) -> HashMap<String, String> {
    let mut by_time: Vec<&Changeset> = list.iter().collect();
    by_time.sort_by_key(|c| c.time_ms);
    let mut undone: HashMap<String, String> = HashMap::new();
    let targets: HashMap<&str, &[String]> = list.iter().map(|c| (c.id.as_str(), c.undoes.as_slice())).collect();
    for c in by_time {
        for x in &c.undoes {
            undone.insert(x.clone(), c.id.clone());
            // Undoing an undo brings back what it had undone.
            for y in targets.get(x.as_str()).copied().unwrap_or_default() {
                if undone.get(y) == Some(x) {
                    undone.remove(y);
                }
            }
        }
    }
    undone
}

/// The journal's directory when none is given: `$XDG_STATE_HOME/tether/journal`, else
/// `~/.local/state/tether/journal`; on Windows `%LOCALAPPDATA%\tether\journal`.
pub fn default_dir() -> Option<PathBuf> {
    #[cfg(windows)]
    if let Some(local) = crate::sys::local_app_data() {
        return Some(local.join("tether").join("journal"));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("tether/journal"))
}

/// Milliseconds since the Unix epoch, now.
fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `text`'s line count, for summaries (none for a binary file's bytes).
fn lines(text: &[u8]) -> usize {
    if text.is_empty() || crate::text::looks_binary(text) {
        0
    } else {
        memchr::memchr_iter(b'\n', text).count() + usize::from(text.last() != Some(&b'\n'))
    }
}

#[cfg(test)]
mod tests {
    use super::{hash_of, hash_pieces, hash_split, version_of};

    #[test]
    fn hashing_pieces_is_hashing_their_concatenation() {
        let text: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let whole = blake3::hash(&text).to_hex().to_string();
        assert_eq!(hash_of(&text), whole);
        // Cuts below, across and above the 64 KiB block, and empty pieces.
        for cut in [1, 1000, 65_535, 65_536, 65_537, 200_000] {
            let pieces: Vec<&[u8]> = text.chunks(cut).flat_map(|c| [&c[..0], c]).collect();
            assert_eq!(hash_pieces(pieces.iter().copied()), whole, "pieces of {cut}");
            assert_eq!(version_of(&pieces), whole[..12], "version of pieces of {cut}");
        }
        let uneven = [&text[..10], &text[10..70_000], &text[70_000..70_001], &text[70_001..]];
        assert_eq!(hash_pieces(uneven), whole);
        assert_eq!(hash_pieces(std::iter::empty()), blake3::hash(b"").to_hex().to_string());
    }

    #[test]
    fn hashing_split_across_threads_is_hashing_the_whole() {
        let text: Vec<u8> = (0..1_200_000u32).map(|i| (i * 13 % 251) as u8).collect();
        // Lengths around the chunk (1 KiB) and the split sizes, cut into uneven pieces, each hashed
        // with subtrees halved down to a few chunks.
        for len in [0, 1, 1024, 1025, 2048, 2049, 4097, 65_536, 100_003, 1 << 20, 1_200_000] {
            let whole = blake3::hash(&text[..len]).to_hex().to_string();
            for cut in [7, 1000, 70_000] {
                let pieces: Vec<&[u8]> = text[..len].chunks(cut).collect();
                for min in [1024, 4096, 300_000] {
                    assert_eq!(hash_split(&pieces, min), whole, "length {len}, pieces of {cut}, split over {min}");
                }
            }
        }
    }
}
