//! Text inserted at a line of one file, where 0 and negative lines count from the end (the
//! toolkit profile's `insert_contents`).
//!
//! The core `insert` plans the change; this operation adds what the contract reports: the line
//! the inserted text starts at, how many lines it adds, and the file's line count, and a line out
//! of range as a fact rather than an error.

use crate::edit::{line_count, EditPlan};
use crate::error::Result;
use crate::text::LineIndex;
use crate::tools::editable::{read_editable, Wording};
use crate::tools::insert::{insert, target_line, InsertArgs};
use crate::tools::{Context, Output};

/// What to insert where.
#[derive(Debug, Clone)]
pub struct LineInsert {
    /// The file, as the user gave it.
    pub path: String,
    /// The 1-based line the text goes before: 0 (or one past the last line) adds at the end, and
    /// a negative line counts from the end (-1 goes before the last line).
    pub line: i64,
    /// The text to insert.
    pub content: String,
}

/// The outcome of an insertion.
#[derive(Debug)]
pub enum LineInserted {
    /// The line lies outside the file; nothing is planned.
    OutOfRange {
        /// The file's line count.
        lines: usize,
    },
    /// The insertion.
    Planned {
        /// The change.
        plan: EditPlan,
        /// The 1-based line the inserted text now starts at.
        at: usize,
        /// How many lines the text adds.
        added: usize,
        /// The file's line count before the insertion.
        lines: usize,
    },
}

/// Plans inserting `args.content` into `args.path` at `args.line`.
pub fn line_insert(ctx: &Context<'_>, args: LineInsert) -> Result<LineInserted> {
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Write)?;
    let lines = LineIndex::new(&file.text).line_count();
    let Some(at) = target_line(args.line, lines) else {
        return Ok(LineInserted::OutOfRange { lines });
    };
    let added = line_count::count(&args.content);
    let plan = match insert(ctx, InsertArgs { path: args.path, line: args.line, content: args.content })? {
        Output::Change { plan, .. } => plan,
        _ => EditPlan::default(),
    };
    Ok(LineInserted::Planned { plan, at, added, lines })
}
