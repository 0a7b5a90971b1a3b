//! A file created, or overwritten completely, with text as given (the filesystem profile's
//! `write_file`).
//!
//! Unlike the core `write_file`, the text is not converted to the file's line endings, and a file
//! tether does not write back as text (binary) is replaced whole rather than refused. An existing
//! text file is changed in place, so that beside an editor the change lands in its buffer.
//! Missing parent directories are created.

use crate::edit::{Base, EditPlan, FileOp};
use crate::error::{Error, ErrorKind, Result};
use crate::tools::editable::{read_editable, Wording};
use crate::tools::Context;
use crate::vfs::EntryKind;
use crate::workspace::SandboxPath;

/// What to write where.
#[derive(Debug, Clone)]
pub struct Overwrite {
    /// The file.
    pub path: SandboxPath,
    /// Its whole new content.
    pub content: String,
}

/// Plans writing `args.content` to `args.path`; a directory there is `not_a_file`.
pub fn overwrite(ctx: &Context<'_>, args: Overwrite) -> Result<EditPlan> {
    let Overwrite { path, content } = args;
    match ctx.vfs.metadata(&path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            Ok(EditPlan::one(FileOp::Create { path, text: content, overwrite: false, mode: None }))
        }
        Err(e) => Err(e),
        Ok(m) if m.kind == EntryKind::Dir => {
            Err(Error::new(ErrorKind::NotAFile, format!("{path}: is a directory")).with_path(path.given()))
        }
        Ok(_) => match read_editable(ctx, &path, Wording::Write) {
            Ok(file) => Ok(EditPlan::edit_to(path, Base::from(file), &content)),
            Err(e) if e.kind() == ErrorKind::IsBinary => {
                Ok(EditPlan::one(FileOp::Create { path, text: content, overwrite: true, mode: None }))
            }
            Err(e) => Err(e),
        },
    }
}
