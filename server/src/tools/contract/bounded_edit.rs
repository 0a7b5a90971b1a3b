//! `edit_file` and `multi_edit` held to the read limit (the coder profile's edits).
//!
//! The editing tools hold a whole file in memory, and this contract promises `too_large` for a
//! file over the read limit rather than an edit of it; the core tools do the edits.

use crate::error::{Error, ErrorKind, Result};
use crate::tools::edit_file::{edit_file, EditFileArgs};
use crate::tools::multi_edit::{multi_edit, MultiEditArgs};
use crate::tools::{Context, Output};
use crate::vfs::EntryKind;

/// The core `edit_file`, after the size check.
pub fn bounded_edit_file(ctx: &Context<'_>, args: EditFileArgs) -> Result<Output> {
    check_size(ctx, &args.path)?;
    edit_file(ctx, args)
}

/// The core `multi_edit`, after the size check.
pub fn bounded_multi_edit(ctx: &Context<'_>, args: MultiEditArgs) -> Result<Output> {
    check_size(ctx, &args.path)?;
    multi_edit(ctx, args)
}

/// Fails with `too_large` when the file at `given` is over the read limit. Anything else wrong
/// with the path is left to the edit, which says it in its own words.
fn check_size(ctx: &Context<'_>, given: &str) -> Result<()> {
    let path = ctx.vfs.resolve(given)?;
    match ctx.vfs.metadata(&path) {
        Ok(m) if m.kind == EntryKind::File && m.len > ctx.config.max_read_bytes => Err(Error::new(
            ErrorKind::TooLarge,
            format!("{path}: file is {} bytes, over the {}-byte limit for editing", m.len, ctx.config.max_read_bytes),
        )
        .with_path(path.given())),
        _ => Ok(()),
    }
}
