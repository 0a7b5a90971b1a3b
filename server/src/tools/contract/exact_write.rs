//! Writing a file's content exactly as given (the coder profile's `write_file`).
//!
//! Unlike the core `write_file`, the content is not converted to the file's line endings, and
//! missing parent directories are not created: the parent must exist. An existing text file is
//! changed in place (so beside an editor only what differs changes), keeping its BOM; a file
//! tether does not write back as text (binary, UTF-16, invalid UTF-8) is replaced whole.

use std::path::Path;

use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::tools::editable::{read_editable, Wording};
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// What to write where.
#[derive(Debug, Clone)]
pub struct ExactWrite {
    /// The file, as the user gave it.
    pub path: String,
    /// Its whole new content, written byte for byte.
    pub content: String,
}

/// The plan of a write, and what it does.
#[derive(Debug)]
pub struct ExactWritten {
    /// The change.
    pub plan: EditPlan,
    /// The file.
    pub path: SandboxPath,
    /// Whether the file is new (rather than overwritten).
    pub created: bool,
    /// The content's size in bytes.
    pub bytes: usize,
}

/// Plans writing `args.content` to `args.path`. A missing parent directory is `not_found`.
pub fn write_exact(ctx: &Context<'_>, args: ExactWrite) -> Result<ExactWritten> {
    let path = ctx.vfs.resolve(&args.path)?;
    let parent_missing = match path.real().parent().and_then(Path::to_str) {
        Some(parent) => match ctx.vfs.resolve(parent).and_then(|p| ctx.vfs.metadata(&p)) {
            Ok(m) if m.kind == EntryKind::Dir => false,
            Ok(_) => {
                return Err(Error::new(
                    ErrorKind::NotAFile,
                    format!("{path}: its parent {} is not a directory", ctx.vfs.display(Path::new(parent))),
                )
                .with_path(path.given()));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => true,
            Err(e) => return Err(e),
        },
        None => false,
    };
    if parent_missing {
        return Err(Error::new(ErrorKind::NotFound, format!("{path}: the parent directory does not exist"))
            .with_path(path.given()));
    }
    let bytes = args.content.len();
    let (plan, created) = match ctx.vfs.metadata(&path) {
        Err(e) if e.kind() == ErrorKind::NotFound => (
            EditPlan::one(FileOp::Create { path: path.clone(), text: args.content, overwrite: false, mode: None }),
            true,
        ),
        Err(e) => return Err(e),
        Ok(m) if m.kind == EntryKind::Dir => {
            return Err(
                Error::new(ErrorKind::NotAFile, format!("{path}: is a directory, not a file")).with_path(path.given())
            );
        }
        Ok(_) => match read_editable(ctx, &path, Wording::Write) {
            Ok(file) => {
                // The content is written exactly; a BOM the file has stays (it is not part of the text).
                let text = args.content.strip_prefix('\u{feff}').filter(|_| file.bom).unwrap_or(&args.content);
                (EditPlan::edit_to(path.clone(), Base::from(file), text), false)
            }
            // A binary or UTF-16 file (or one that cannot be read as text) is replaced whole by
            // the new text.
            Err(_) => (
                EditPlan::one(FileOp::Create { path: path.clone(), text: args.content, overwrite: true, mode: None }),
                false,
            ),
        },
    };
    Ok(ExactWritten { plan, path, created, bytes })
}
