//! One output stream of a command: its head kept in memory, the rest spilled to a file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// Where output beyond the in-memory cap goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillTo {
    /// The folder for spill files; created (with a `.gitignore` that ignores it) on first use.
    pub dir: PathBuf,
    /// The most bytes one spill file holds, so that a runaway command cannot fill the disk.
    pub max_bytes: u64,
    /// How many spill files the folder keeps: older ones are deleted when a new one is made.
    pub keep_files: usize,
}

/// What a stream produced, once the command is over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes of the stream (up to the cap, never ending in a cut UTF-8 character),
    /// decoded as UTF-8 with invalid sequences replaced.
    pub text: String,
    /// How many bytes the command wrote to the stream in all.
    pub total_bytes: u64,
    /// Whether `text` is only the head of the stream.
    pub truncated: bool,
    /// The file holding the whole stream (up to [`SpillTo::max_bytes`]) when it was truncated
    /// and a spill file could be written.
    pub spill: Option<PathBuf>,
    /// The head as the command wrote it, undecoded, when the run asked for it
    /// ([`super::Spec::keep_bytes`]): for callers that save or measure the bytes themselves.
    pub bytes: Option<Vec<u8>>,
}

/// The state of one stream while the command runs.
#[derive(Debug)]
pub(super) struct Capture {
    /// `stdout` or `stderr`: names the spill file.
    stream: &'static str,
    head: Vec<u8>,
    cap: usize,
    total: u64,
    spill: Spill,
}

#[derive(Debug)]
enum Spill {
    /// Nothing spilled yet; the folder to spill into, if any.
    Unopened(Option<SpillTo>),
    /// Spilling into `file`.
    Open { file: File, path: PathBuf, written: u64, max: u64 },
    /// No spill: none was configured, or writing one failed (and it was removed).
    None,
}

impl Capture {
    /// An empty capture of `stream` keeping `cap` bytes in memory.
    pub(super) fn new(stream: &'static str, cap: usize, spill: Option<SpillTo>) -> Capture {
        Capture { stream, head: Vec::new(), cap, total: 0, spill: Spill::Unopened(spill) }
    }

    /// How many bytes the stream has written so far.
    pub(super) fn total(&self) -> u64 {
        self.total
    }

    /// Takes in the next bytes of the stream. `name` gives the spill file's name prefix, should
    /// one be needed now.
    pub(super) fn push(&mut self, bytes: &[u8], name: &str) {
        self.total += bytes.len() as u64;
        let room = self.cap - self.head.len();
        if bytes.len() <= room && matches!(self.spill, Spill::Unopened(_)) {
            self.head.extend_from_slice(bytes);
            return;
        }
        if let Spill::Unopened(to) = &mut self.spill {
            self.spill = match to.take() {
                Some(to) => match open_spill(&to, &format!("{name}-{}.log", self.stream), &self.head) {
                    Ok((file, path)) => {
                        let written = (self.head.len() as u64).min(to.max_bytes);
                        Spill::Open { file, path, written, max: to.max_bytes }
                    }
                    Err(e) => {
                        tracing::warn!("cannot write a spill file for {} in {}: {e}", self.stream, to.dir.display());
                        Spill::None
                    }
                },
                None => Spill::None,
            };
        }
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        if let Spill::Open { file, path, written, max } = &mut self.spill {
            let allowed = usize::try_from(max.saturating_sub(*written)).unwrap_or(usize::MAX).min(bytes.len());
            if let Err(e) = file.write_all(&bytes[..allowed]) {
                tracing::warn!("writing spill file {}: {e}", path.display());
                let _ = fs::remove_file(&*path);
                self.spill = Spill::None;
            } else {
                *written += allowed as u64;
            }
        }
    }

    /// The stream as the command left it; with `keep_bytes`, its head undecoded as well.
    pub(super) fn finish(self, keep_bytes: bool) -> Captured {
        let truncated = self.total > self.head.len() as u64;
        let keep = if truncated { complete_utf8_len(&self.head) } else { self.head.len() };
        let spill = match self.spill {
            Spill::Open { path, .. } => Some(path),
            Spill::Unopened(_) | Spill::None => None,
        };
        Captured {
            text: String::from_utf8_lossy(&self.head[..keep]).into_owned(),
            total_bytes: self.total,
            truncated,
            spill,
            bytes: keep_bytes.then_some(self.head),
        }
    }
}

/// Creates the spill file `name` in `to.dir` (readable by the owner only: output may hold
/// secrets), writes `head` to it, and prunes old spill files.
fn open_spill(to: &SpillTo, name: &str, head: &[u8]) -> io::Result<(File, PathBuf)> {
    fs::create_dir_all(&to.dir)?;
    // Spill files are scratch: a `.gitignore` of `*` keeps the folder (itself included) out of
    // version control. Losing the race with another run writing it is fine.
    match OpenOptions::new().write(true).create_new(true).open(to.dir.join(".gitignore")) {
        Ok(mut f) => f.write_all(b"*\n")?,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let path = to.dir.join(name);
    // `create_new` never follows a symlink planted at the name, nor overwrites anything.
    let mut file = crate::sys::open_private(&path, true)?;
    let head_len = usize::try_from(to.max_bytes).unwrap_or(usize::MAX).min(head.len());
    file.write_all(&head[..head_len])?;
    prune(&to.dir, to.keep_files);
    Ok((file, path))
}

/// The suffixes of spill file names: only these files are ever pruned.
const SPILL_SUFFIXES: [&str; 2] = ["-stdout.log", "-stderr.log"];

/// Deletes all but the `keep` newest spill files of `dir`. Names start with a fixed-width UTC
/// timestamp, so name order is age order. Best effort: a file that cannot be deleted stays.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut names: Vec<_> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| SPILL_SUFFIXES.iter().any(|s| n.ends_with(s)))
        .collect();
    if names.len() <= keep {
        return;
    }
    names.sort_unstable();
    for name in &names[..names.len() - keep] {
        let _ = fs::remove_file(dir.join(name));
    }
}

/// The length of the longest prefix of `bytes` that does not end inside a UTF-8 character: a
/// cut made by the cap drops the partial character instead of showing a replacement character.
fn complete_utf8_len(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=n.min(4) {
        let b = bytes[n - back];
        if b & 0xC0 == 0x80 {
            continue; // A continuation byte: the character starts further back.
        }
        let need = match b {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if need > back { n - back } else { n };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_only_whole_characters() {
        let table: [(&[u8], usize); 9] = [
            (b"", 0),
            (b"abc", 3),
            ("a\u{e9}".as_bytes(), 3),
            (&"a\u{e9}".as_bytes()[..2], 1),
            (&"\u{4e2d}".as_bytes()[..2], 0),
            ("\u{4e2d}".as_bytes(), 3),
            (&"x\u{1f600}".as_bytes()[..4], 1),
            ("x\u{1f600}".as_bytes(), 5),
            // Invalid bytes are not characters being cut: they stay, to be replaced on decoding.
            (b"a\x80\x80", 3),
        ];
        for (bytes, want) in table {
            assert_eq!(complete_utf8_len(bytes), want, "{bytes:?}");
        }
    }

    #[test]
    fn keeps_head_and_spills_everything() {
        let dir = tempfile::tempdir().expect("tempdir");
        let to = SpillTo { dir: dir.path().join("spill"), max_bytes: 1000, keep_files: 4 };
        let table: [(&[&[u8]], &str, u64, bool); 4] = [
            (&[b"abc"], "abc", 3, false),
            (&[b"ab", b"cd"], "abcd", 4, false),
            (&[b"ab", b"cde", b"fg"], "abcd", 7, true),
            (&["abc\u{e9}".as_bytes(), b"xyz"], "abc", 8, true),
        ];
        for (i, (chunks, text, total, truncated)) in table.into_iter().enumerate() {
            let mut c = Capture::new("stdout", 4, Some(to.clone()));
            for chunk in chunks {
                c.push(chunk, &format!("t{i}"));
            }
            let got = c.finish(false);
            assert_eq!((got.text.as_str(), got.total_bytes, got.truncated), (text, total, truncated), "{chunks:?}");
            assert_eq!(got.spill.is_some(), truncated, "{chunks:?}");
            if let Some(spill) = got.spill {
                assert_eq!(fs::read(spill).expect("spill"), chunks.concat(), "{chunks:?}");
            }
        }
        assert_eq!(fs::read_to_string(to.dir.join(".gitignore")).expect("gitignore"), "*\n");
    }

    #[test]
    fn caps_and_prunes_spill_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let to = SpillTo { dir: dir.path().to_path_buf(), max_bytes: 10, keep_files: 2 };
        fs::write(dir.path().join("notes.txt"), "kept").expect("write");
        for i in 0..4 {
            let mut c = Capture::new("stderr", 2, Some(to.clone()));
            c.push(&[b'x'; 30], &format!("2026010{i}T000000Z-1"));
            let got = c.finish(false);
            assert_eq!(got.total_bytes, 30);
            assert_eq!(fs::read(got.spill.expect("spill")).expect("read").len(), 10);
        }
        let mut names: Vec<_> = fs::read_dir(dir.path()).expect("dir").map(|e| e.expect("entry").file_name()).collect();
        names.sort();
        let want = [".gitignore", "20260102T000000Z-1-stderr.log", "20260103T000000Z-1-stderr.log", "notes.txt"];
        assert_eq!(names, want.map(std::ffi::OsString::from));
    }

    #[test]
    fn no_spill_folder_still_caps() {
        let mut c = Capture::new("stdout", 3, None);
        c.push(b"abcdef", "x");
        assert_eq!(
            c.finish(false),
            Captured { text: "abc".into(), total_bytes: 6, truncated: true, spill: None, bytes: None }
        );
    }
}
