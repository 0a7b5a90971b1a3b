//! Appending text exactly as given to an existing file (the guarded profile's `append_file`).
//!
//! Unlike the core `append`, which starts the text on a line of its own and keeps the file's
//! final-newline state, the text goes right after the last byte: no line break is added before
//! or after it. Only its line breaks change, to the file's own style. The file is never created.

use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::Result;
use crate::text::{convert_breaks, LineEnding};
use crate::tools::editable::{read_editable, Wording};
use crate::tools::Context;
use crate::workspace::SandboxPath;

/// What to append where.
#[derive(Debug, Clone)]
pub struct AppendAsGiven {
    /// The existing file, as the user gave it.
    pub path: String,
    /// The text to add at its end.
    pub content: String,
}

/// The plan of an append, and what it adds.
#[derive(Debug)]
pub struct Appended {
    /// The change (empty when the content is).
    pub plan: EditPlan,
    /// The file.
    pub path: SandboxPath,
    /// How many bytes the file grows by, once its line breaks are the file's.
    pub bytes: usize,
}

/// Plans appending `args.content` to the end of the existing file `args.path`. A missing file is
/// the read view's `not_found`, for the caller to word.
pub fn append_as_given(ctx: &Context<'_>, args: AppendAsGiven) -> Result<Appended> {
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Write)?;
    let brk = LineEnding::detect(&file.text).break_for(&file.text);
    let content = convert_breaks(&args.content, brk).into_owned();
    let bytes = content.len();
    if content.is_empty() {
        return Ok(Appended { plan: EditPlan::default(), path, bytes });
    }
    let at = file.text.len();
    let op =
        FileOp::Edit { path: path.clone(), base: Base::from(file), changes: vec![TextChange::new(at, at, content)] };
    Ok(Appended { plan: EditPlan::one(op), path, bytes })
}
