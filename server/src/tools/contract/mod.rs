//! Operations that a contract profile serves and the core tools do not, one file each.
//!
//! A contract profile (`profiles/NAME`) maps its tool names and arguments onto operations and
//! words their results in its contract's terms. When a contract asks for an operation no core
//! tool offers (a diff for exactly one named file, search/replace blocks anchored by a line, a
//! write checked against a declared line count), the operation lives here, as a plain function
//! `fn op(ctx: &Context<'_>, args: TypedArgs) -> Result<Outcome>`: it resolves paths, reads
//! through the read view, matches, and returns a plan together with the facts its profile needs
//! to word the result (how many hunks applied, which blocks missed and why). Like every tool it
//! never writes: the profile applies the plan through its sink. Its failures are core errors
//! whose messages say what went wrong with the operation; the profile names them (and rewords
//! them where its contract says more) in its own terms. Where a contract answers a refusal in
//! words or codes a core error cannot carry, the refusal comes back as a fact in the outcome (an
//! offset past the end, a line count that does not match) or as a typed error (a glob that does
//! not parse), and the profile words it.

pub mod anchored_edit;
pub mod append_as_given;
pub mod bounded_edit;
pub mod counted_write;
pub mod dir_tree;
pub mod ecma_grep;
pub mod exact_write;
pub mod file_find;
pub mod glob_paths;
pub mod guarded_patch;
pub mod kind_listing;
pub mod line_insert;
pub mod line_range_read;
pub mod overwrite;
pub mod paged_read;
pub mod ranged_replace;
pub mod sequence_edit;
pub mod text_or_bytes;
pub mod walk_filter;
