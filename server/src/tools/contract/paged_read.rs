//! A file read for one page of numbered lines (the coder profile's `read_file`).
//!
//! Unlike the core `read_file`, which answers an offset past the end with a note, this read
//! refuses what its contract refuses: a directory, a whole read of a file over the read limit,
//! and a positive offset past the last line. Each refusal comes back as a fact, so the profile
//! can word it in its own terms (naming its other tools).

use crate::error::Result;
use crate::text::lines;
use crate::tools::read_file::Page;
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// What to read.
#[derive(Debug, Clone)]
pub struct PagedRead {
    /// The file, as the user gave it.
    pub path: String,
    /// The page asked for.
    pub page: Page,
    /// Whether the caller asked for a page (an offset or a limit) rather than the whole file:
    /// only a whole read is held to the read limit.
    pub paged: bool,
}

/// What the read found.
#[derive(Debug)]
pub enum PageSource {
    /// The file's text, for the page to be cut from.
    Text {
        /// The file.
        path: SandboxPath,
        /// Its whole text.
        text: String,
    },
    /// The path is a directory.
    Directory(SandboxPath),
    /// A whole read of a file over the read limit.
    TooLarge {
        /// The file.
        path: SandboxPath,
        /// Its size in bytes.
        len: u64,
        /// The read limit in bytes.
        limit: u64,
    },
    /// The page starts past the file's last line.
    PastEnd {
        /// The file.
        path: SandboxPath,
        /// The offset asked for.
        offset: i64,
        /// The file's line count.
        lines: usize,
    },
}

/// Reads `args.path` for a page, or says why the page cannot be read.
pub fn paged_read(ctx: &Context<'_>, args: PagedRead) -> Result<PageSource> {
    let path = ctx.vfs.resolve(&args.path)?;
    let meta = ctx.vfs.metadata(&path)?;
    if meta.kind == EntryKind::Dir {
        return Ok(PageSource::Directory(path));
    }
    let limit = ctx.config.max_read_bytes;
    if !args.paged && meta.len > limit {
        return Ok(PageSource::TooLarge { path, len: meta.len, limit });
    }
    let file = ctx.vfs.read_text(&path)?;
    if let Some(offset) = args.page.offset.filter(|&o| o > 0) {
        let total = lines(&file.text).count();
        if total > 0 && usize::try_from(offset).unwrap_or(usize::MAX) > total {
            return Ok(PageSource::PastEnd { path, offset, lines: total });
        }
    }
    Ok(PageSource::Text { path, text: file.text })
}
