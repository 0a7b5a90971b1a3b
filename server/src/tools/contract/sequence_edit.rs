//! A sequence of find-and-replace edits applied to one file, or previewed as a diff (the
//! filesystem profile's `edit_file`, and `edit_files` per file).
//!
//! The edits run on the file's text with its line breaks read as `\n`
//! ([`crate::edit::sequence`]); the result takes the file's own line breaks back. All of them
//! apply or none does. A dry run computes the unified diff instead of a plan, and a dry run of a
//! file that does not exist reads nothing.

use similar::TextDiff;

use crate::edit::sequence::{self, Edit, Failure};
use crate::edit::view::Mapped;
use crate::edit::{Base, EditPlan};
use crate::error::Result;
use crate::text::{convert_breaks, LineEnding};
use crate::tools::editable::{read_editable, Wording};
use crate::tools::Context;
use crate::workspace::SandboxPath;

/// The edits to apply to one file.
#[derive(Debug, Clone)]
pub struct SequenceEdit<'a> {
    /// The file.
    pub path: SandboxPath,
    /// The edits, applied in order, each to the result of the one before.
    pub edits: &'a [Edit],
    /// Whether to preview the change as a diff rather than plan it.
    pub dry_run: bool,
}

/// The outcome of a sequence of edits.
#[derive(Debug)]
pub enum SequenceEdited {
    /// A dry run of a file that does not exist: there was nothing to edit.
    Missing,
    /// An edit failed; nothing is planned.
    Failed(Failure),
    /// A dry run: the unified diff of the change (named by the path as given), or `None` when the
    /// edits leave the text as it was.
    Preview(Option<String>),
    /// The change (empty when the edits leave the text as it was).
    Planned(EditPlan),
}

/// Applies `args.edits` to the file at `args.path`.
pub fn sequence_edit(ctx: &Context<'_>, args: SequenceEdit<'_>) -> Result<SequenceEdited> {
    if args.dry_run && !ctx.vfs.exists(&args.path) {
        return Ok(SequenceEdited::Missing);
    }
    let file = read_editable(ctx, &args.path, Wording::Edit)?;
    let view = Mapped::lf(&file.text);
    let new_lf = match sequence::apply(view.text(), args.edits) {
        Ok(text) => text,
        Err(f) => return Ok(SequenceEdited::Failed(f)),
    };
    let ending = LineEnding::detect(&file.text);
    let new = if new_lf == view.text() {
        file.text.clone()
    } else if ending == LineEnding::Lf {
        new_lf
    } else {
        convert_breaks(&new_lf, ending.break_for(&file.text)).into_owned()
    };
    if args.dry_run {
        if new == file.text {
            return Ok(SequenceEdited::Preview(None));
        }
        let given = args.path.given();
        let diff = TextDiff::from_lines(file.text.as_str(), new.as_str());
        let mut udiff = diff.unified_diff();
        udiff.context_radius(3).header(given, given);
        return Ok(SequenceEdited::Preview(Some(udiff.to_string())));
    }
    Ok(SequenceEdited::Planned(EditPlan::edit_to(args.path, Base::from(file), &new)))
}
