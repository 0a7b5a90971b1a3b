//! Reading a file that a tool means to change: the one check every editing tool shares.
//!
//! A file can be changed only when it is a regular file (or an open buffer) in an encoding
//! tether writes back exactly: UTF-8, with or without a BOM. Reading it through here fails
//! early, before any matching, with a message a model can act on. The two tool families word
//! the refusal in their own established ways ([`Wording`]), so each keeps the messages its
//! callers and their tests rely on.

use super::Context;
use crate::error::{Error, ErrorKind, Result};
use crate::text::Encoding;
use crate::vfs::FileText;
use crate::workspace::SandboxPath;

/// How a refusal to edit is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// For the tools that replace text they find (`edit_file`, `multi_edit`, `replace`, the
    /// filesystem profile's edits): a missing file points to `write_file`, and a file tether
    /// cannot write back "is not edited".
    Edit,
    /// For the tools that write, append, insert or patch: a missing file is the read view's
    /// error as it is (callers add their own advice), and a file tether cannot write back "is
    /// not written back".
    Write,
}

/// Reads the file at `path` for a change: its text, or the error that says why it cannot be
/// changed (`not_found`, `not_a_file`, `is_binary`).
pub fn read_editable(ctx: &Context<'_>, path: &SandboxPath, wording: Wording) -> Result<FileText> {
    check_editable(path, ctx.vfs.read_text(path), wording)
}

/// Checks a read of `path` (a [`crate::vfs::Vfs::read_text`] or
/// [`crate::vfs::Vfs::read_shared`]) for a change: the read's own error reworded as `wording`
/// says, or a refusal when the file's encoding is one tether does not write back.
pub fn check_editable<T>(path: &SandboxPath, read: Result<FileText<T>>, wording: Wording) -> Result<FileText<T>> {
    let file = read.map_err(|e| match (e.kind(), wording) {
        (ErrorKind::NotFound, Wording::Edit) => {
            Error::new(ErrorKind::NotFound, format!("{}; use write_file to create a file", e.message()))
                .with_path(path.given())
        }
        _ => e,
    })?;
    if file.encoding.is_editable() {
        return Ok(file);
    }
    let message = match wording {
        Wording::Edit => {
            let what = match file.encoding {
                Encoding::Utf8Lossy => "is not valid utf-8 (writing it back would lose its invalid bytes)".to_owned(),
                other => format!("is {other}"),
            };
            format!("{}: file {what}; tether reads it but does not edit it", path.given())
        }
        Wording::Write => format!("{path}: file is {}, which tether reads but does not write back", file.encoding),
    };
    Err(Error::new(ErrorKind::IsBinary, message).with_path(path.given()))
}
