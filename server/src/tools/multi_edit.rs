//! `multi_edit`: several `edit_file` replacements in one file, all or nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::edit_file::check_strings;
use super::editable::{read_editable, Wording};
use super::knowledge::rename_hint;
use super::{parse_args, schema_of, Context, Effects, Output, Tool};
use crate::edit::matcher;
use crate::edit::{apply_changes, Base, EditPlan};
use crate::error::{Error, Result};

/// One replacement of a `multi_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// The text to replace, as the earlier edits left the file: enough lines to match exactly
    /// one place. Write line breaks as `\n`.
    pub old_string: String,
    /// The text to put in its place (empty deletes). Must differ from `old_string`.
    pub new_string: String,
    /// Replace every exact occurrence instead of requiring exactly one.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub replace_all: bool,
}

/// Arguments of `multi_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditArgs {
    /// Path of the file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// The replacements, applied in order, each to the text the previous ones left.
    #[schemars(length(min = 1))]
    pub edits: Vec<Edit>,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "multi_edit",
    description: "Make several replacements in one text file in one call, all or nothing. Each entry of \
`edits` works as edit_file (`old_string`, `new_string`, optional `replace_all`; exact match first, \
then the same tolerant matching, with re-indentation) and applies to the text the previous entries \
left, so a later `old_string` must match the text after the earlier edits. If any entry fails, none \
is applied, and the error names the failing entry (`edits[2]: ...`). Prefer it to repeated \
edit_file calls on the same file. Write line breaks as `\\n`: the file keeps its own line endings, \
BOM and final newline.",
    schema: schema_of::<MultiEditArgs>,
    effects: Effects { read_only: false, destructive: true, idempotent: false, open_world: false },
    quick: true,
    run: |ctx, args: Value| multi_edit(ctx, parse_args(args)?),
};

/// Computes the plan for one `multi_edit` call: every edit applied in memory, in order, then one
/// plan from the file's text to the final text.
pub fn multi_edit(ctx: &Context<'_>, args: MultiEditArgs) -> Result<Output> {
    if args.edits.is_empty() {
        return Err(Error::invalid("`edits` is empty: give at least one {old_string, new_string}"));
    }
    for (i, e) in args.edits.iter().enumerate() {
        check_strings(&e.old_string, &e.new_string, &format!("edits[{i}]."))?;
    }
    let path = ctx.vfs.resolve(&args.path)?;
    let file = read_editable(ctx, &path, Wording::Edit)?;
    let mut text = file.text.clone();
    let mut replacements = 0;
    let mut tolerant = Vec::new();
    for (i, e) in args.edits.iter().enumerate() {
        let replaced = matcher::replace(&text, &e.old_string, &e.new_string, e.replace_all).map_err(|m| {
            let inner = m.to_error(path.given(), "old_string");
            let mut msg = format!("edits[{i}]: {}", inner.message());
            if i > 0 {
                msg.push_str(&format!(
                    "\n(line numbers count lines of the text as edits[0..{i}] left it; no edit was applied)"
                ));
            } else {
                msg.push_str("\n(no edit was applied)");
            }
            Error::new(inner.kind(), msg).with_path(path.given())
        })?;
        replacements += replaced.count();
        if let Some(how) = replaced.strategy.matched_with {
            tolerant.push(format!("edits[{i}] matched with {how}"));
        }
        text = apply_changes(&text, &replaced.changes);
    }
    let n = args.edits.len();
    let mut summary = format!(
        "edited {}: {n} edit{}, {replacements} replacement{}",
        path.given(),
        if n == 1 { "" } else { "s" },
        if replacements == 1 { "" } else { "s" }
    );
    if !tolerant.is_empty() {
        summary.push_str(&format!(" ({})", tolerant.join("; ")));
    }
    let plan = EditPlan::edit_to(path, Base::from(file), &text);
    if plan.is_empty() {
        summary.push_str(", which left the text unchanged");
    }
    let pairs = args.edits.iter().map(|e| (e.old_string.as_str(), e.new_string.as_str()));
    summary.push_str(rename_hint(ctx.config, pairs, replacements));
    Ok(Output::Change { plan, summary })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::TOOL;
    use crate::error::ErrorKind;
    use crate::tools::edit_file::testing::{check_case, Expect};
    use crate::tools::testing::fixture;

    /// Runs every case on a fresh `a.py` (and a CRLF `crlf.txt`): `(path, edits, expected outcome)`.
    fn check(table: &[(&str, serde_json::Value, Expect)]) {
        for (path, edits, want) in table {
            let f = fixture("//- a.py\ndef f():\n    x = 1\n    y = 2\n    return x + y\n");
            f.write("crlf.txt", "a\r\nb\r\nc\r\n");
            check_case(&f, &TOOL, path, json!({"path": path, "edits": edits}), want);
        }
    }

    #[test]
    fn edits() {
        check(&[
            (
                "a.py",
                json!([
                    {"old_string": "x = 1", "new_string": "x = 10"},
                    {"old_string": "y = 2", "new_string": "y = 20"},
                ]),
                Ok(("def f():\n    x = 10\n    y = 20\n    return x + y\n", "edited a.py: 2 edits, 2 replacements")),
            ),
            // Each edit sees the text the previous one left.
            (
                "a.py",
                json!([
                    {"old_string": "x = 1", "new_string": "z = 1"},
                    {"old_string": "z = 1\n", "new_string": "z = 1\n    w = 0\n"},
                    {"old_string": "x", "new_string": "z", "replace_all": true},
                ]),
                Ok((
                    "def f():\n    z = 1\n    w = 0\n    y = 2\n    return z + y\n",
                    "edited a.py: 3 edits, 3 replacements",
                )),
            ),
            (
                "a.py",
                json!([
                    {"old_string": "x = 1\n  y = 2", "new_string": "x = 1\n  y = 3"},
                ]),
                Ok((
                    "def f():\n    x = 1\n    y = 3\n    return x + y\n",
                    "edited a.py: 1 edit, 1 replacement (edits[0] matched with flexible indentation)",
                )),
            ),
            (
                "crlf.txt",
                json!([{"old_string": "a\nb", "new_string": "A\nB"}, {"old_string": "c\n", "new_string": "C\nD\n"}]),
                Ok(("A\r\nB\r\nC\r\nD\r\n", "edited crlf.txt: 2 edits, 2 replacements")),
            ),
            // Edits that undo each other leave the text as it was.
            (
                "a.py",
                json!([{"old_string": "x = 1", "new_string": "x = 2"}, {"old_string": "x = 2", "new_string": "x = 1"}]),
                Ok((
                    "def f():\n    x = 1\n    y = 2\n    return x + y\n",
                    "edited a.py: 2 edits, 2 replacements, which left the text unchanged",
                )),
            ),
        ]);
    }

    #[test]
    fn errors() {
        use ErrorKind::*;
        check(&[
            // Atomic: the first edit would apply, the third fails, nothing is planned.
            (
                "a.py",
                json!([
                    {"old_string": "x = 1", "new_string": "x = 5"},
                    {"old_string": "y = 2", "new_string": "y = 6"},
                    {"old_string": "x = 1", "new_string": "x = 7"},
                ]),
                Err((NoMatch, "edits[2]: a.py: `old_string` was not found")),
            ),
            (
                "a.py",
                json!([{"old_string": "x", "new_string": "q"}]),
                Err((AmbiguousMatch, "edits[0]: a.py: `old_string` matches 2 places: line 2, line 4")),
            ),
            (
                "a.py",
                json!([{"old_string": "y = 2", "new_string": "x = 2"}, {"old_string": "x = ", "new_string": "v = "}]),
                Err((
                    AmbiguousMatch,
                    "(line numbers count lines of the text as edits[0..1] left it; no edit was applied)",
                )),
            ),
            (
                "a.py",
                json!([{"old_string": "x", "new_string": "x"}]),
                Err((InvalidInput, "`edits[0].old_string` and `edits[0].new_string` are the same")),
            ),
            (
                "a.py",
                json!([{"old_string": "x = 1", "new_string": "x = 2"}, {"old_string": "", "new_string": "y"}]),
                Err((InvalidInput, "`edits[1].old_string` is empty")),
            ),
            ("a.py", json!([]), Err((InvalidInput, "`edits` is empty"))),
            ("a.py", json!([{"old_string": "x"}]), Err((InvalidInput, "`edits[0]`: missing field `new_string`"))),
            (
                "a.py",
                json!([{"old_string": "x", "new_string": "y", "extra": 1}]),
                Err((InvalidInput, "`edits[0].extra`")),
            ),
            ("a.py", json!("x"), Err((InvalidInput, "`edits`"))),
            ("nope.py", json!([{"old_string": "x", "new_string": "y"}]), Err((NotFound, "nope.py"))),
        ]);
    }
}
