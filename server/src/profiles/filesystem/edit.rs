//! `edit_file` and `edit_files`: sequences of literal, regex, limited and case-insensitive
//! edits with dry-run diffs, on one file or on every file a list of paths and globs names.

use serde_json::{json, Value};

use super::args::{invalid, missing, Args};
use super::files::{not_found, ITEM_SEPARATOR};
use super::{core, object_schema, ok, rpc, Call, INTERNAL, PATH_NOT_ALLOWED};
use crate::edit::sequence::Edit;
use crate::edit::view::Mapped;
use crate::edit::EditPlan;
use crate::error::ErrorKind;
use crate::profiles::{CallError, CallResult};
use crate::tools::contract::glob_paths::{expand_paths, ExpandError};
use crate::tools::contract::sequence_edit::{sequence_edit, SequenceEdit, SequenceEdited};
use crate::workspace::SandboxPath;

pub(super) const EDIT_FILE: &str = "Edit a text file with a list of find-and-replace edits applied in sequence; all \
of them apply or none does. Each edit: `oldText` (required), `newText` (default empty), `limit` (most replacements, \
default 1, 0 = all), `isRegex` (oldText is an ECMAScript regex with multiline ^/$, `.` stops at line ends; newText \
may use \\1-\\9 or $1-$9, \\0/$0/$& for the whole match, $$ for a literal $; a reference to a missing group is an \
error), `caseInsensitive`. Prefer literal edits when the text is known: with limit 1 a literal oldText must occur \
exactly once (else -32603 `oldText is not unique`), and when it is not found exactly, a whitespace-normalized line \
match (ignoring the common indentation) is tried and newText is moved to the file's indentation. `dryRun: true` \
returns a unified diff (or `(no changes)`) and writes nothing: use it first for regex and limit-0 edits. Answers \
`Successfully edited <path>`. Errors: -32001, -32002 file not found, -32602 missing param, -32603 not matched, not \
unique, invalid regex, write failed.";
pub(super) const EDIT_FILES: &str = "Apply the same edits (the edit_file schema) to many files. `paths` holds paths \
and/or glob patterns (an entry containing * ? { } or [ is a glob, expanded at run time; relative globs start at the \
first allowed directory; .gitignore'd files are left out). One part per file, separated by `---` lines: \
`Successfully edited <path>`, a diff with `dryRun`, or `<path>: [error CODE] message` for a file whose edits did not \
apply (the call itself does not fail for that; the files that succeed are written together). Preview with `dryRun: \
true` first: this rewrites many files at once. Errors: -32001 a path or match outside the allowed directories, \
-32002 a glob matched no files, -32602 missing param.";

fn edits_schema() -> Value {
    json!({
        "type": "array",
        "description": "Edits applied in sequence",
        "items": {
            "type": "object",
            "properties": {
                "oldText": {"type": "string", "description": "Text (or ECMAScript regex with isRegex) to find"},
                "newText": {"type": "string", "default": "", "description": "Replacement; with isRegex \\1-\\9, $1-$9, \\0, $0, $&, $$"},
                "limit": {"type": "integer", "minimum": 0, "default": 1, "description": "Max replacements; 0 = unlimited"},
                "isRegex": {"type": "boolean", "default": false, "description": "Treat oldText as an ECMAScript regex (multiline)"},
                "caseInsensitive": {"type": "boolean", "default": false, "description": "Match regardless of case"},
            },
            "required": ["oldText"],
        },
    })
}

pub(super) fn edit_file_schema() -> Value {
    object_schema(
        json!({
            "path": {"type": "string", "description": "The file to edit"},
            "edits": edits_schema(),
            "dryRun": {"type": "boolean", "default": false, "description": "Return a unified diff and write nothing"},
        }),
        &["path", "edits"],
    )
}

pub(super) fn edit_files_schema() -> Value {
    object_schema(
        json!({
            "paths": {"type": "array", "items": {"type": "string"}, "description": "Paths and/or glob patterns"},
            "edits": edits_schema(),
            "dryRun": {"type": "boolean", "default": false, "description": "Return every file's diff and write nothing"},
        }),
        &["paths", "edits"],
    )
}

/// The `edits` parameter.
fn parse_edits(args: &Args) -> Result<Vec<Edit>, CallError> {
    let items = match args.get("edits") {
        None => return Err(missing("edits")),
        Some(Value::Array(items)) if items.is_empty() => return Err(invalid("`edits` must not be empty")),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(invalid("`edits` must be an array of edit objects")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let one = Args::new(item.clone()).map_err(|_| invalid(format!("`edits[{i}]` must be an object")))?;
            let field = |f: &str| format!("edits[{i}].{f}");
            let old_text =
                one.str("oldText").map_err(|_| invalid(format!("`{}` must be a string", field("oldText"))))?;
            let old_text = old_text.ok_or_else(|| missing(&field("oldText")))?;
            if old_text.is_empty() {
                return Err(invalid(format!("`{}` must not be empty", field("oldText"))));
            }
            let new_text =
                one.str("newText").map_err(|_| invalid(format!("`{}` must be a string", field("newText"))))?;
            let limit = one
                .int("limit", 0, i64::MAX)
                .map_err(|_| invalid(format!("`{}` must be an integer, 0 (unlimited) or more", field("limit"))))?;
            let flag = |f: &str| one.bool(f, false).map_err(|_| invalid(format!("`{}` must be a boolean", field(f))));
            Ok(Edit {
                old_text: Mapped::lf(&old_text).text().to_owned(),
                new_text: Mapped::lf(&new_text.unwrap_or_default()).text().to_owned(),
                limit: limit.map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX)),
                is_regex: flag("isRegex")?,
                case_insensitive: flag("caseInsensitive")?,
            })
        })
        .collect()
}

/// What editing one file gives.
enum Edited {
    /// The change to apply.
    Plan(EditPlan),
    /// A dry run's diff, `(no changes)`, or the listing of the intended edits.
    Preview(String),
}

/// Computes the edits to the file at `target`, in the contract's codes.
fn edit_one(call: &Call<'_>, target: SandboxPath, edits: &[Edit], dry_run: bool) -> Result<Edited, CallError> {
    let given = target.given().to_owned();
    let done = sequence_edit(call.ctx, SequenceEdit { path: target, edits, dry_run }).map_err(|e| match e.kind() {
        ErrorKind::NotFound => not_found(format!("file not found: {given}")),
        ErrorKind::PathEscape => core(e),
        _ => rpc(INTERNAL, e.message().to_owned()),
    })?;
    match done {
        SequenceEdited::Missing => Ok(Edited::Preview(intended(&given, edits))),
        SequenceEdited::Failed(f) => {
            let which = if edits.len() > 1 { format!("edits[{}]: ", f.index) } else { String::new() };
            Err(rpc(INTERNAL, format!("{given}: {which}{}", f.message)))
        }
        SequenceEdited::Preview(diff) => Ok(Edited::Preview(diff.unwrap_or_else(|| "(no changes)".to_owned()))),
        SequenceEdited::Planned(plan) => Ok(Edited::Plan(plan)),
    }
}

/// The dry run of edits to a file that does not exist: what would be done.
fn intended(given: &str, edits: &[Edit]) -> String {
    let mut out = format!("{given} does not exist; intended edits:");
    for (i, e) in edits.iter().enumerate() {
        let mut how = Vec::new();
        if e.is_regex {
            how.push("regex".to_owned());
        }
        if e.case_insensitive {
            how.push("case-insensitive".to_owned());
        }
        how.push(if e.limit == 0 { "limit: unlimited".to_owned() } else { format!("limit: {}", e.limit) });
        out.push_str(&format!("\n{}. replace {:?} with {:?} ({})", i + 1, e.old_text, e.new_text, how.join(", ")));
    }
    out
}

pub(super) fn edit_file(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let given = args.req_str("path")?;
    let edits = parse_edits(args)?;
    let dry_run = args.bool("dryRun", false)?;
    let path = call.ctx.vfs.resolve(&given).map_err(core)?;
    match edit_one(call, path, &edits, dry_run)? {
        Edited::Preview(text) => Ok(ok(text)),
        Edited::Plan(plan) => {
            call.apply(&plan).map_err(|e| match e {
                CallError::Rpc { code: INTERNAL, message, data } => {
                    CallError::Rpc { code: INTERNAL, message: format!("write failed: {message}"), data }
                }
                other => other,
            })?;
            Ok(ok(format!("Successfully edited {given}")))
        }
    }
}

pub(super) fn edit_files(call: &Call<'_>, args: &Args) -> Result<CallResult, CallError> {
    let entries = args.req_strs("paths")?;
    let edits = parse_edits(args)?;
    let dry_run = args.bool("dryRun", false)?;
    let files = expand_paths(call.ctx, &entries).map_err(expand_error)?;

    // Each file's part, in order; the plans of the files whose edits applied go out together.
    let mut parts: Vec<(String, Result<Option<String>, String>)> = Vec::new();
    let mut plan = EditPlan::default();
    for path in files {
        let given = path.given().to_owned();
        match edit_one(call, path, &edits, dry_run) {
            Ok(Edited::Preview(text)) => parts.push((given, Ok(Some(text)))),
            Ok(Edited::Plan(p)) => {
                plan.ops.extend(p.ops);
                parts.push((given, Ok(None)));
            }
            Err(e) => {
                let message = e.to_string();
                let message = message.strip_prefix(&format!("{given}: ")).unwrap_or(&message).to_owned();
                parts.push((given.clone(), Err(format!("{given}: [error {}] {message}", e.code()))));
            }
        }
    }
    let applied = call.apply(&plan);
    let items: Vec<String> = parts
        .into_iter()
        .map(|(given, part)| match (part, &applied) {
            (Ok(Some(preview)), _) => {
                if preview == "(no changes)" {
                    format!("{given}: (no changes)")
                } else {
                    preview
                }
            }
            (Ok(None), Ok(())) => format!("Successfully edited {given}"),
            (Ok(None), Err(e)) => format!("{given}: [error {}] write failed: {e}", e.code()),
            (Err(line), _) => line,
        })
        .collect();
    Ok(CallResult::texts(items, ITEM_SEPARATOR, false))
}

/// A failure to expand `paths`, in the contract's codes.
fn expand_error(e: ExpandError) -> CallError {
    match e {
        ExpandError::Core(e) => core(e),
        ExpandError::GlobOutside { pattern } => {
            rpc(PATH_NOT_ALLOWED, format!("Access denied - glob {pattern} reaches outside the allowed directories"))
        }
        ExpandError::GlobLeadsOutside { pattern, shown } => rpc(
            PATH_NOT_ALLOWED,
            format!("Access denied - glob {pattern} matches {shown}, which leads outside the allowed directories"),
        ),
        ExpandError::GlobEmpty { pattern } => not_found(format!("glob matched no files: {pattern}")),
        ExpandError::GlobInvalid { pattern, reason } => invalid(format!("`{pattern}` is not a valid glob: {reason}")),
    }
}
