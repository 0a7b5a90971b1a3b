//! Search/replace blocks anchored by their start line, applied to one file (the toolkit
//! profile's `apply_diffs`).
//!
//! Every block is located in the file as it was before any block applies
//! ([`crate::edit::anchored`]). An atomic edit applies only when every block was found; a
//! non-atomic one applies the blocks that were found. A block that missed comes back with what
//! the file suggests instead (a match elsewhere, a match once whitespace at line ends is ignored,
//! or the most similar lines), for the profile to word.

use crate::edit::anchored::{self, Block, Found, Miss};
use crate::edit::closest::{closest, Closest};
use crate::edit::view::Mapped;
use crate::edit::{Base, EditPlan};
use crate::error::Result;
use crate::tools::editable::{read_editable, Wording};
use crate::tools::Context;
use crate::workspace::SandboxPath;

/// The blocks to apply to one file.
#[derive(Debug, Clone)]
pub struct AnchoredEdit<'a> {
    /// The file, as the user gave it.
    pub path: &'a str,
    /// The blocks, in the order given.
    pub blocks: &'a [Block<'a>],
    /// Whether lines compare with leading and trailing whitespace ignored.
    pub trim: bool,
    /// Whether the edit applies only when every block is found.
    pub atomic: bool,
}

/// A block that was not applied, and what the file suggests instead.
#[derive(Debug, Clone)]
pub struct Missed {
    /// Why the block could not be applied.
    pub miss: Miss,
    /// For a block found nowhere: what would have matched, if anything.
    pub hint: Option<Hint>,
}

/// What would have matched a block that was found nowhere.
#[derive(Debug, Clone)]
pub enum Hint {
    /// The block matches when whitespace at line ends is ignored (`trim` was off).
    Trim,
    /// The lines of the file most like the block's search.
    Closest(Closest),
}

/// The outcome of an anchored edit.
#[derive(Debug)]
pub struct AnchoredEdited {
    /// The file.
    pub path: SandboxPath,
    /// One result per block, in the order given.
    pub results: Vec<Result<Found, Missed>>,
    /// Whether the found blocks apply: some were found, and all were when the edit is atomic.
    pub applied: bool,
    /// The change of the found blocks when they apply; empty otherwise.
    pub plan: EditPlan,
    /// The file's line count with every found block applied.
    pub line_count: usize,
}

/// Locates every block of `args` in its file and plans the change.
pub fn anchored_edit(ctx: &Context<'_>, args: AnchoredEdit<'_>) -> Result<AnchoredEdited> {
    let path = ctx.vfs.resolve(args.path)?;
    let file = read_editable(ctx, &path, Wording::Write)?;
    let outcome = anchored::apply(&file.text, args.blocks, args.trim);
    let found = outcome.found_count();
    let applied = found > 0 && (!args.atomic || found == args.blocks.len());
    let results = outcome
        .results
        .iter()
        .zip(args.blocks)
        .map(|(r, b)| r.clone().map_err(|miss| missed(miss, b, &file.text, args.trim)))
        .collect();
    let plan =
        if applied { EditPlan::edit_to(path.clone(), Base::from(file), &outcome.text) } else { EditPlan::default() };
    Ok(AnchoredEdited { path, results, applied, plan, line_count: outcome.line_count })
}

/// `miss` of block `b` in `text`, with a hint when the block was found nowhere.
fn missed(miss: Miss, b: &Block<'_>, text: &str, trim: bool) -> Missed {
    let hint = match &miss {
        Miss::NotFound { elsewhere } if elsewhere.is_empty() => {
            if !trim && anchored::apply(text, &[*b], true).all_found() {
                Some(Hint::Trim)
            } else {
                closest(Mapped::lf(text).text(), b.search).map(Hint::Closest)
            }
        }
        _ => None,
    };
    Missed { miss, hint }
}
