//! Edits as values: plans, matchers and patch parsers. Nothing here writes.

pub mod anchored;
pub mod carry;
pub mod closest;
pub mod ecma;
pub mod escape;
pub mod explain;
pub mod line_count;
pub mod matcher;
pub mod patch;
pub mod plan;
pub mod reindent;
pub mod replace;
pub mod sequence;
pub mod view;

pub use plan::{apply_changes, minimal_changes, unified_diff, Base, EditPlan, FileOp, TextChange};
