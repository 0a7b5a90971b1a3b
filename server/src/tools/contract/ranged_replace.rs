//! Every match of a literal or regex search replaced within a line range of one file (the
//! toolkit profile's `search_and_replace`).
//!
//! The core `replace` does the matching and plans the change; this operation adds what the
//! contract reports: the file's line count (its messages name the range with it), a start line
//! past the end, and a search that matched nothing, as facts rather than errors.

use crate::edit::EditPlan;
use crate::error::{Error, ErrorKind, Result};
use crate::text::LineIndex;
use crate::tools::editable::{read_editable, Wording};
use crate::tools::replace::{replace, ReplaceArgs};
use crate::tools::{Context, Output};

/// What to replace where.
#[derive(Debug, Clone)]
pub struct RangedReplace {
    /// The file, as the user gave it.
    pub path: String,
    /// The text (or, with `regex`, the pattern) to find.
    pub search: String,
    /// What replaces each match (with `regex`, a template that may name groups).
    pub replacement: String,
    /// Whether `search` is a regular expression.
    pub regex: bool,
    /// Whether matching ignores case.
    pub ignore_case: bool,
    /// The first line searched, 1-based (the first line of the file when `None`).
    pub start_line: Option<i64>,
    /// The last line searched, 1-based (the last line of the file when `None`).
    pub end_line: Option<i64>,
}

/// The outcome of a ranged replace.
#[derive(Debug)]
pub enum RangeReplaced {
    /// The start line lies past the end of the file; nothing was searched.
    StartPastEnd {
        /// The start line asked for.
        start_line: usize,
        /// The file's line count.
        lines: usize,
    },
    /// Nothing matched within the range.
    NoMatch {
        /// The file's line count.
        lines: usize,
    },
    /// Every match in the range replaced.
    Replaced {
        /// The change (empty when every replacement equals its match).
        plan: EditPlan,
        /// How many matches were replaced.
        count: usize,
        /// The file's line count before the change.
        lines: usize,
    },
}

/// Plans replacing every match of `args.search` within the line range of `args.path`.
pub fn ranged_replace(ctx: &Context<'_>, args: RangedReplace) -> Result<RangeReplaced> {
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Write)?;
    let lines = LineIndex::new(&file.text).line_count();
    if let Some(start_line) = args.start_line.and_then(|s| usize::try_from(s).ok()).filter(|&s| s > lines) {
        return Ok(RangeReplaced::StartPastEnd { start_line, lines });
    }
    let core = ReplaceArgs {
        path: args.path,
        pattern: args.search,
        replacement: args.replacement,
        regex: args.regex,
        ignore_case: args.ignore_case,
        start_line: args.start_line,
        end_line: args.end_line,
        limit: 0,
        dry_run: false,
    };
    match replace(ctx, core) {
        Ok(Output::Change { plan, summary }) => {
            Ok(RangeReplaced::Replaced { plan, count: replaced_count(&summary), lines })
        }
        Ok(_) => Err(Error::new(ErrorKind::IoError, "the replacement produced no change plan")),
        Err(e) if e.kind() == ErrorKind::NoMatch => Ok(RangeReplaced::NoMatch { lines }),
        Err(e) => Err(e),
    }
}

/// The number of replacements in the core `replace` summary (`replaced 3 occurrences in ...`).
fn replaced_count(summary: &str) -> usize {
    summary
        .strip_prefix("replaced ")
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect::<String>())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::testing::fixture;

    #[test]
    fn counts_from_the_core_summary() {
        for (pattern, want) in [("foo", 2), ("bar", 1), ("o", 4)] {
            let f = fixture("//- a.txt\nfoo\nbar\nfoo\n");
            let out = f.call("replace", json!({"path": "a.txt", "pattern": pattern, "replacement": "x"}));
            assert_eq!(super::replaced_count(&out.expect("replaced")), want, "{pattern}");
        }
    }
}
