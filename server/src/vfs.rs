//! The read view: open editor buffers over the disk, one consistent snapshot per tool call.
//!
//! Every tool reads through a [`Vfs`], never straight from `std::fs`, so that the same tool sees
//! the editor's unsaved text when `tether lsp` supplies an [`Overlay`] of open documents, and the
//! disk otherwise. An overlay is an immutable snapshot (ropes clone in O(1)), so a tool call sees
//! one consistent state of every document however long it runs.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::error::{Error, ErrorKind, Result};
use crate::text::{decode, Decoded, Document, Encoding, SharedText};
use crate::workspace::{SandboxPath, Workspace};

/// An open editor document as the overlay holds it.
#[derive(Debug, Clone)]
pub struct OpenDocument {
    /// The buffer's text and encoding.
    pub doc: Document,
    /// The editor's version number for this text.
    pub version: i32,
    /// Whether the buffer has changes not yet saved to disk.
    pub dirty: bool,
    /// The document store's change clock when this text was current: it ticks on every open and
    /// change, so two snapshots with the same stamp hold the same text (0 outside an editor).
    pub stamp: u64,
}

impl OpenDocument {
    /// `text` (this buffer's text, as a string or shared) with the buffer's encoding and origin.
    fn file_text<T>(&self, text: T) -> FileText<T> {
        FileText {
            text,
            encoding: self.doc.encoding(),
            bom: self.doc.has_bom(),
            origin: Origin::Buffer { version: self.version, dirty: self.dirty, stamp: self.stamp },
        }
    }

    /// The buffer's bytes as saving it would write them: the BOM when it has one, then its text
    /// in UTF-8.
    pub fn bytes(&self) -> Vec<u8> {
        let bom: &[u8] = if self.doc.has_bom() { b"\xEF\xBB\xBF" } else { b"" };
        let mut out = Vec::with_capacity(bom.len() + self.doc.rope().len_bytes());
        out.extend_from_slice(bom);
        for chunk in self.doc.rope().chunks() {
            out.extend_from_slice(chunk.as_bytes());
        }
        out
    }
}

/// A snapshot of the open documents, keyed by real (canonical) path.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    docs: BTreeMap<PathBuf, OpenDocument>,
}

impl Overlay {
    /// An overlay holding `docs`.
    pub fn from_docs(docs: BTreeMap<PathBuf, OpenDocument>) -> Overlay {
        Overlay { docs }
    }

    /// The open document at the real path `p`, if any.
    pub fn get(&self, p: &Path) -> Option<&OpenDocument> {
        self.docs.get(p)
    }

    /// Every open document, sorted by path.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &OpenDocument)> {
        self.docs.iter().map(|(p, d)| (p.as_path(), d))
    }

    /// The number of open documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no document is open.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}

/// Where a text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The file on disk.
    Disk,
    /// An open editor buffer.
    Buffer {
        /// The buffer's version.
        version: i32,
        /// Whether the buffer has unsaved changes.
        dirty: bool,
        /// The store's change clock for this text (see [`OpenDocument::stamp`]).
        stamp: u64,
    },
}

/// A file's decoded text, as one tool call sees it: as one string, or (from
/// [`Vfs::read_shared`]) shared with the open buffer it came from.
#[derive(Debug, Clone)]
pub struct FileText<T = String> {
    /// The text, without a BOM.
    pub text: T,
    /// The encoding it was decoded from.
    pub encoding: Encoding,
    /// Whether the file starts with a byte order mark.
    pub bom: bool,
    /// Buffer or disk.
    pub origin: Origin,
}

/// What kind of entry a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (or an open buffer).
    File,
    /// A directory.
    Dir,
    /// A symlink (only reported for paths whose last component is kept as named).
    Symlink,
    /// Anything else (socket, device, fifo).
    Other,
}

/// Metadata of a file or directory, with the buffer's size for an open document.
#[derive(Debug, Clone)]
pub struct Metadata {
    /// The kind of entry.
    pub kind: EntryKind,
    /// Size in bytes: the buffer's UTF-8 length (plus BOM) for an open document.
    pub len: u64,
    /// Last modification time on disk, if the file exists there.
    pub modified: Option<SystemTime>,
    /// Unix permission bits, if the file exists on disk.
    pub mode: Option<u32>,
    /// Buffer or disk.
    pub origin: Origin,
}

/// The read view of one tool call.
#[derive(Debug, Clone)]
pub struct Vfs {
    workspace: Arc<Workspace>,
    overlay: Arc<Overlay>,
}

impl Vfs {
    /// A view of `workspace` with `overlay` over the disk.
    pub fn new(workspace: Arc<Workspace>, overlay: Arc<Overlay>) -> Vfs {
        Vfs { workspace, overlay }
    }

    /// A view of the disk alone.
    pub fn disk(workspace: Arc<Workspace>) -> Vfs {
        Vfs::new(workspace, Arc::default())
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The open documents of this snapshot.
    pub fn overlay(&self) -> &Overlay {
        &self.overlay
    }

    /// Resolves a user path inside the workspace.
    pub fn resolve(&self, given: &str) -> Result<SandboxPath> {
        self.workspace.resolve(given)
    }

    /// The path of `p` relative to its root, for output.
    pub fn display(&self, p: &Path) -> String {
        self.workspace.relative(p)
    }

    /// Metadata of `p`, following a final symlink; an open document reports its buffer's size.
    pub fn metadata(&self, p: &SandboxPath) -> Result<Metadata> {
        let disk = fs::metadata(p.real());
        if let Some(open) = self.overlay.get(p.real()) {
            let disk = disk.ok();
            return Ok(Metadata {
                kind: EntryKind::File,
                len: (open.doc.len() + if open.doc.has_bom() { 3 } else { 0 }) as u64,
                modified: disk.as_ref().and_then(|m| m.modified().ok()),
                mode: disk.as_ref().map(mode_of),
                origin: Origin::Buffer { version: open.version, dirty: open.dirty, stamp: open.stamp },
            });
        }
        let m = disk.map_err(|e| Error::io(&e, p.given()))?;
        Ok(meta_from_fs(&m))
    }

    /// Metadata of `p` without following a final symlink.
    pub fn symlink_metadata(&self, p: &SandboxPath) -> Result<Metadata> {
        let m = fs::symlink_metadata(p.path()).map_err(|e| Error::io(&e, p.given()))?;
        if m.file_type().is_symlink() {
            return Ok(Metadata { kind: EntryKind::Symlink, ..meta_from_fs(&m) });
        }
        self.metadata(p)
    }

    /// How many names (hard links) the regular file `p` has on disk: the file a write changes
    /// (a final symlink followed) when `follow`, else the entry as named (what a move or a delete
    /// acts on). `None` when nothing is there or it is not a regular file. The overlay is not
    /// consulted: an open buffer is saved to the file on disk, whose other names see the save.
    pub fn file_links(&self, p: &SandboxPath, follow: bool) -> Result<Option<u64>> {
        let at = if follow { p.real() } else { p.path() };
        let m = if follow { fs::metadata(at) } else { fs::symlink_metadata(at) };
        match m {
            Ok(m) if m.is_file() => crate::sys::links(&m, at).map(Some).map_err(|e| Error::io(&e, p.given())),
            Ok(_) => Ok(None),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => Ok(None),
            Err(e) => Err(Error::io(&e, p.given())),
        }
    }

    /// Whether `p` names something: an open buffer or an entry on disk.
    pub fn exists(&self, p: &SandboxPath) -> bool {
        self.overlay.get(p.real()).is_some() || p.real().exists()
    }

    /// The text of `p`: the open buffer if there is one, else the file decoded from disk.
    /// Fails with `not_found`, `not_a_file`, or `is_binary`.
    pub fn read_text(&self, p: &SandboxPath) -> Result<FileText> {
        if let Some(open) = self.overlay.get(p.real()) {
            return Ok(open.file_text(open.doc.text()));
        }
        let bytes = self.read_bytes(p)?;
        match decode(bytes) {
            Decoded::Text { text, encoding, bom } => Ok(FileText { text, encoding, bom, origin: Origin::Disk }),
            Decoded::Binary => Err(Error::new(ErrorKind::IsBinary, format!("{}: file is binary, not text", p.given()))
                .with_path(p.given())),
        }
    }

    /// Like [`Vfs::read_text`], but an open buffer's text is its rope, shared rather than copied:
    /// for a change computed on a large buffer without copying it first.
    pub fn read_shared(&self, p: &SandboxPath) -> Result<FileText<SharedText>> {
        if let Some(open) = self.overlay.get(p.real()) {
            return Ok(open.file_text(SharedText::Rope(open.doc.rope().clone())));
        }
        let FileText { text, encoding, bom, origin } = self.read_text(p)?;
        Ok(FileText { text: SharedText::from(text), encoding, bom, origin })
    }

    /// The raw bytes of the file `p` on disk (the overlay is not consulted).
    pub fn read_bytes(&self, p: &SandboxPath) -> Result<Vec<u8>> {
        let m = fs::metadata(p.real()).map_err(|e| Error::io(&e, p.given()))?;
        if m.is_dir() {
            return Err(Error::new(ErrorKind::NotAFile, format!("{}: is a directory, not a file", p.given()))
                .with_path(p.given()));
        }
        if !m.is_file() {
            return Err(
                Error::new(ErrorKind::NotAFile, format!("{}: is not a regular file", p.given())).with_path(p.given())
            );
        }
        crate::sys::read(p.real()).map_err(|e| Error::io(&e, p.given()))
    }

    /// Opens the file at `real` for streaming reads (the overlay is not consulted). `real` must be
    /// a real path inside the roots: a [`SandboxPath::real`], or a file that a
    /// [`Workspace::walker`] walk yielded (such walks never pass through a symlink). Anything
    /// outside every root is refused with `PermissionDenied`.
    pub fn open_real(&self, real: &Path) -> std::io::Result<fs::File> {
        if self.workspace.root_of(real).is_none() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "path is outside the workspace roots",
            ));
        }
        crate::sys::open_read(real)
    }

    /// The entries of directory `p` as (name, real path, kind), sorted by name. Entries are not
    /// followed: a symlink is reported as one. Open documents do not add entries: a buffer that
    /// was never saved has no file yet.
    pub fn read_dir(&self, p: &SandboxPath) -> Result<Vec<(String, PathBuf, EntryKind)>> {
        let m = fs::metadata(p.real()).map_err(|e| Error::io(&e, p.given()))?;
        if !m.is_dir() {
            return Err(
                Error::new(ErrorKind::NotADirectory, format!("{}: not a directory", p.given())).with_path(p.given())
            );
        }
        let rd = fs::read_dir(p.real()).map_err(|e| Error::io(&e, p.given()))?;
        let mut out = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|e| Error::io(&e, p.given()))?;
            let kind = match entry.file_type() {
                Ok(t) if t.is_symlink() => EntryKind::Symlink,
                Ok(t) if t.is_dir() => EntryKind::Dir,
                Ok(t) if t.is_file() => EntryKind::File,
                _ => EntryKind::Other,
            };
            out.push((entry.file_name().to_string_lossy().into_owned(), entry.path(), kind));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

fn meta_from_fs(m: &fs::Metadata) -> Metadata {
    let kind = if m.is_dir() {
        EntryKind::Dir
    } else if m.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    };
    Metadata { kind, len: m.len(), modified: m.modified().ok(), mode: Some(mode_of(m)), origin: Origin::Disk }
}

fn mode_of(m: &fs::Metadata) -> u32 {
    crate::sys::mode(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Document;

    #[test]
    fn overlay_shadows_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("a.txt"), "disk\n").expect("write");
        let ws = Arc::new(Workspace::new([dir.path()]).expect("ws"));
        let p = ws.resolve("a.txt").expect("inside");
        assert_eq!(Vfs::disk(ws.clone()).read_text(&p).expect("read").text, "disk\n");

        let mut docs = BTreeMap::new();
        let open = OpenDocument { doc: Document::from_text("buffer\n"), version: 3, dirty: true, stamp: 0 };
        docs.insert(p.real().to_path_buf(), open);
        let vfs = Vfs::new(ws, Arc::new(Overlay::from_docs(docs)));
        let t = vfs.read_text(&p).expect("read");
        assert_eq!(t.text, "buffer\n");
        assert_eq!(t.origin, Origin::Buffer { version: 3, dirty: true, stamp: 0 });
        assert_eq!(vfs.metadata(&p).expect("meta").len, 7);
    }

    #[test]
    fn read_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("bin"), b"\x00\x01").expect("write");
        let ws = Arc::new(Workspace::new([dir.path()]).expect("ws"));
        let vfs = Vfs::disk(ws);
        let kind = |p: &str| vfs.read_text(&vfs.resolve(p).expect("inside")).map(|_| ()).map_err(|e| e.kind());
        assert_eq!(kind("bin"), Err(ErrorKind::IsBinary));
        assert_eq!(kind("missing"), Err(ErrorKind::NotFound));
        assert_eq!(kind("."), Err(ErrorKind::NotAFile));
    }
}
