//! Edits as values: plans, matchers and patch parsers. Nothing here writes.

pub mod patch;
pub mod plan;

pub use plan::{apply_changes, minimal_changes, unified_diff, Base, EditPlan, FileOp, TextChange};
