//! `rename_symbol`: the language server's rename, delivered like every other change: one plan,
//! all or nothing, each open document changed in its buffer (one undo step) at the version read.

use ropey::Rope;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::symbols::ask;
use super::{editor, locate, FileEdits, Found, Located, Place, Question};
use crate::edit::{Base, EditPlan, FileOp, TextChange};
use crate::error::{Error, ErrorKind, Result};
use crate::text::position_to_offset;
use crate::tools::editable::{read_editable, Wording};
use crate::tools::{parse_args, schema_of, Context, Effects, Output, Tool};

/// Arguments of `rename_symbol`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// The file: absolute inside a workspace root, or relative to the first root.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in characters. Optional when `symbol` is given.
    #[serde(default)]
    pub column: Option<u64>,
    /// The symbol's current name as written on that line: tether finds its column (on a nearby
    /// line when it is not on `line`). With `column` too, the occurrence nearest that column.
    #[serde(default)]
    pub symbol: Option<String>,
    /// The new name.
    pub new_name: String,
}

/// The tool.
pub const TOOL: Tool = Tool {
    name: "rename_symbol",
    description: "Rename a symbol everywhere it is used, as the editor's language server renames \
it (only real uses: not strings, comments or other things of the same name), across files, open \
or not. Address it by `path`, 1-based `line` and `symbol` (its current name on that line) or \
`column`; `new_name` is the new name. All files change or none; open files change in the editor \
buffer, one undo step each. Prefer it over `replace` or `multi_edit` to rename an identifier. \
A rename that would change nothing is an error.",
    schema: schema_of::<RenameArgs>,
    effects: Effects { read_only: false, destructive: false, idempotent: false, open_world: false },
    quick: false,
    run: |ctx, args: Value| rename(ctx, parse_args(args)?),
};

/// Plans the language server's rename of the symbol at `args`'s place.
pub fn rename(ctx: &Context<'_>, args: RenameArgs) -> Result<Output> {
    let new_name = args.new_name.trim();
    if new_name.is_empty() {
        return Err(Error::invalid("`new_name` is empty"));
    }
    let editor = editor(ctx)?;
    let place = Place { path: args.path.clone(), line: args.line, column: args.column, symbol: args.symbol.clone() };
    let Located { at, name, line, column } = locate(ctx, editor, &place)?;
    let old =
        if name.is_empty() { format!("the symbol at {}:{line}:{column}", args.path) } else { format!("`{name}`") };
    if name == new_name {
        return Err(Error::invalid(format!("{old} is already called `{new_name}`: renaming it changes nothing")));
    }
    let answer = ask(editor, Question::Rename(at, new_name.to_owned()), &args.path)?;
    let Found::Edit(edit) = answer.found else {
        return Err(Error::new(ErrorKind::IoError, "the editor answered with something other than an edit"));
    };
    let Some(files) = edit else {
        return Err(Error::new(
            ErrorKind::NoMatch,
            format!("the language server has no rename for {old} at {}:{line}:{column}", args.path),
        ));
    };
    let mut plan = EditPlan::default();
    let mut edits = 0;
    for FileEdits { path, edits: changes } in files {
        // Named as the user would name it: relative to the first root, else absolute.
        let ws = ctx.vfs.workspace();
        let given = if ws.root_of(&path) == Some(0) { ws.relative(&path) } else { path.to_string_lossy().into_owned() };
        let sandboxed = ctx.vfs.resolve(&given).map_err(|_| {
            // A file the deny list hides is never named, not even to say it was refused.
            let file = if ws.denied(&path).is_some() {
                "a file hidden from tools by tether's deny list".to_owned()
            } else {
                format!("{}, outside the workspace", path.display())
            };
            Error::new(
                ErrorKind::PathEscape,
                format!("the language server's rename of {old} also changes {file}; nothing was changed"),
            )
        })?;
        let file = read_editable(ctx, &sandboxed, Wording::Write)?;
        let rope = Rope::from_str(&file.text);
        let mut list: Vec<TextChange> = changes
            .iter()
            .map(|(span, text)| {
                let start = position_to_offset(&rope, span.start, answer.encoding).get();
                let end = position_to_offset(&rope, span.end, answer.encoding).get();
                TextChange::new(start, end.max(start), text.clone())
            })
            .filter(|c| file.text[c.range.start.get()..c.range.end.get()] != c.text)
            .collect();
        list.sort_by_key(|c| (c.range.start, c.range.end));
        if list.is_empty() {
            continue;
        }
        if list.windows(2).any(|w| w[0].range.end > w[1].range.start) {
            return Err(Error::new(
                ErrorKind::IoError,
                format!("the language server's rename overlaps itself in {}; nothing was changed", sandboxed.given()),
            ));
        }
        edits += list.len();
        plan.ops.push(FileOp::Edit { path: sandboxed, base: Base::from(file), changes: list });
    }
    if plan.is_empty() {
        return Err(Error::new(
            ErrorKind::NoMatch,
            format!("the language server's rename of {old} to `{new_name}` changes nothing; nothing was changed"),
        ));
    }
    let files = plan.ops.len();
    let summary = format!(
        "renamed {old} to `{new_name}`: {edits} edit{} in {files} file{}",
        if edits == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" }
    );
    Ok(Output::Change { plan, summary })
}
