//! Whole files written together, each checked first against the line count its author declared
//! (the toolkit profile's `write_files`).
//!
//! A content whose line count differs from the declared one was probably cut short on the way
//! ([`crate::edit::line_count`]), so when any file's count is off, nothing is planned and the
//! mismatches come back. Otherwise every file is written as the core `write_file` writes it, all
//! in one plan, so a failure writes nothing.

use crate::edit::line_count::{self, Mismatch};
use crate::edit::EditPlan;
use crate::error::Result;
use crate::tools::write_file::{write_file, WriteFileArgs};
use crate::tools::{Context, Output};

/// One file to write.
#[derive(Debug, Clone)]
pub struct CountedFile {
    /// The file, as the user gave it.
    pub path: String,
    /// Its whole new content.
    pub content: String,
    /// The number of lines its author says `content` has.
    pub line_count: u64,
}

/// The outcome of a counted write.
#[derive(Debug)]
pub enum CountedWrite {
    /// Some files' contents do not have their declared line counts: the index of each such
    /// file, and its mismatch. Nothing is planned.
    Mismatched(Vec<(usize, Mismatch)>),
    /// Every file checked out.
    Planned {
        /// The writes of every file.
        plan: EditPlan,
        /// Each file's line count, in the order given.
        lines: Vec<usize>,
    },
}

/// Checks every file's line count, then plans writing them all.
pub fn write_counted(ctx: &Context<'_>, files: Vec<CountedFile>) -> Result<CountedWrite> {
    let mut lines = Vec::with_capacity(files.len());
    let mut mismatches = Vec::new();
    for (i, f) in files.iter().enumerate() {
        match line_count::check(&f.content, f.line_count) {
            Ok(actual) => lines.push(actual),
            Err(m) => mismatches.push((i, m)),
        }
    }
    if !mismatches.is_empty() {
        return Ok(CountedWrite::Mismatched(mismatches));
    }
    let mut plan = EditPlan::default();
    for f in files {
        if let Output::Change { plan: p, .. } = write_file(ctx, WriteFileArgs { path: f.path, content: f.content })? {
            plan.ops.extend(p.ops);
        }
    }
    Ok(CountedWrite::Planned { plan, lines })
}
