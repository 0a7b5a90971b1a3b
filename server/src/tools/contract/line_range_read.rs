//! A file's lines, all of them or a 1-based inclusive range (the toolkit profile's
//! `read_files`).
//!
//! What the contract refuses (a directory, something that is not a regular file, a whole read
//! over the read limit, a binary file, a range starting past the end) comes back as a fact for
//! the profile to word.

use crate::error::{ErrorKind, Result};
use crate::text::lines;
use crate::tools::Context;
use crate::vfs::EntryKind;

/// What to read.
#[derive(Debug, Clone)]
pub struct LineRangeRead<'a> {
    /// The file, as the user gave it.
    pub path: &'a str,
    /// The first and last line (1-based, inclusive; the last may lie past the end), or `None`
    /// for the whole file.
    pub range: Option<(usize, usize)>,
}

/// What the read found.
#[derive(Debug)]
pub enum LinesRead {
    /// The path is a directory.
    Directory,
    /// The path is neither a regular file nor a directory.
    NotRegular,
    /// A whole read of a file over the read limit.
    TooLarge {
        /// Its size in bytes.
        len: u64,
        /// The read limit in bytes.
        limit: u64,
    },
    /// The file is binary.
    Binary,
    /// The range starts past the file's last line.
    PastEnd {
        /// The range's first line.
        start: usize,
        /// The file's line count.
        total: usize,
    },
    /// The lines read.
    Lines {
        /// The file's whole text.
        text: String,
        /// The first line to show, 1-based.
        first: usize,
        /// The last line to show, 1-based (0 for an empty file).
        last: usize,
        /// The file's line count.
        total: usize,
    },
}

/// Reads the lines of `args.path` that `args.range` names.
pub fn read_line_range(ctx: &Context<'_>, args: LineRangeRead<'_>) -> Result<LinesRead> {
    let path = ctx.vfs.resolve(args.path)?;
    let meta = ctx.vfs.metadata(&path)?;
    match meta.kind {
        EntryKind::File => {}
        EntryKind::Dir => return Ok(LinesRead::Directory),
        _ => return Ok(LinesRead::NotRegular),
    }
    let limit = ctx.config.max_read_bytes;
    if args.range.is_none() && meta.len > limit {
        return Ok(LinesRead::TooLarge { len: meta.len, limit });
    }
    let file = match ctx.vfs.read_text(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::IsBinary => return Ok(LinesRead::Binary),
        Err(e) => return Err(e),
    };
    let total = lines(&file.text).count();
    let (first, last) = match args.range {
        None => (1, total),
        Some((start, _)) if start > total => return Ok(LinesRead::PastEnd { start, total }),
        Some((start, end)) => (start, end.min(total)),
    };
    Ok(LinesRead::Lines { text: file.text, first, last, total })
}
